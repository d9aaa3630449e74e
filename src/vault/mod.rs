//! The vault: sticky's own copy of each pinned session's files, so a session outlives the
//! agent's files (Claude Code's `cleanupPeriodDays` sweep, a cleaned `~/.codex`).
//!
//! Layout, beside the database (`State::vault`, `<db>.vault/`), every directory 0700 and every
//! file 0600, every one of them reached through `crate::confined` (`state::companion`): a link
//! at any level below the state directory is refused, never followed (issue 23):
//!
//! ```text
//! <db>.vault/
//!   <agent>/<key>/               one agent session: <key> is its ID, or `~` and the ID in hex
//!                                when the ID holds anything but [A-Za-z0-9._-] or starts with `.`
//!     manifest.json              what was copied (see [`Manifest`]), replaced atomically
//!     files/<relative>           the copy of each file, at its path under the agent's home
//!                                (`SessionFile::relative`: `projects/-p/<id>.jsonl` for Claude)
//!     rows.json                  for an agent that keeps sessions as database rows (opencode,
//!                                `Adapter::session_rows`): the session's rows (`rows.rs`)
//! ```
//!
//! Copies are incremental (`copy.rs`): an append-only file copies only the bytes added since the
//! last copy, after checking that the copied prefix is unchanged (same inode, not shorter, the
//! same sample hash of its first and last 4 KiB); a rewritten file is copied whole only when its
//! size or modification time moved and its hash changed. A file the agent no longer lists keeps
//! its copy: that is what the vault is for. `restore.rs` puts the copies back into the agent's
//! home when the agent reports the session lost. Each manifest records the last turn whose end
//! its copy holds, by the time it started ([`Manifest::turn_started_at`], which every thread's
//! row of that turn keeps), so a turn can tell a copy that stopped short of the session (a copy
//! that failed since) from a whole one before it puts it back (`cmd/turn/vault.rs`, which reads
//! the session's turns from the database).
//!
//! Every copy's full SHA-256 is in the manifest, written from the bytes sticky wrote into the
//! copy (an appended copy's carried on from the midstate after its last whole block,
//! `digest.rs`, so a turn hashes only what it appends). A restore, and an export from the vault,
//! put back only a copy whose size and SHA-256 match: a copy swapped, cut or grown since is
//! refused with the session's way out. A manifest written before sticky recorded sums (no
//! `sha256`) is hashed again by the next copy, while the agent still has its files (the copy is
//! made whole once); until then its copies are not restored, since nothing can prove them.
//!
//! The read side ([`Vault::session_dir`], [`Vault::manifest`], [`Vault::files`]) is what
//! `sticky export` bundles.

mod catch_up;
mod copy;
mod digest;
mod restore;
mod rows;

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

use crate::agent::Keeping;
use crate::confined::{Access, Dir, Kind};
use crate::state;

pub use catch_up::CaughtUp;
pub use copy::{Copied, Held};
pub use restore::Restored;

/// The manifest's file name in a session's directory.
const MANIFEST: &str = "manifest.json";

/// The directory of the copies in a session's directory.
const FILES: &str = "files";

/// The copy of a session kept as database rows, in a session's directory.
const ROWS: &str = "rows.json";

/// The most a manifest may hold: a few hundred bytes a file, for sessions of thousands of files.
const MAX_MANIFEST: u64 = 16 << 20;

/// The manifest's format version. The SHA-256 sums are optional fields of version 1: an older
/// sticky reads the manifest and drops them when it writes it, which a newer one then sees as
/// a copy to hash again.
const VERSION: u32 = 1;

/// The vault of one project's state.
#[derive(Debug, Clone)]
pub struct Vault {
    dir: PathBuf,
}

/// What a vault sticky looks into without using it says of a session ([`Vault::peek`]).
#[derive(Debug)]
pub enum Peek {
    /// A copy, described by its manifest.
    Copy(Box<Manifest>),
    /// No copy of the session.
    None,
    /// The vault or the copy's manifest cannot be read (another account's, damaged).
    Unreadable,
}

/// What the vault knows of one agent session: written after every copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The format version (1).
    pub version: u32,
    /// The agent's name.
    pub agent: String,
    /// The agent's session ID.
    pub session: String,
    /// The directory the session runs in.
    pub directory: PathBuf,
    /// When the last copy was made, in milliseconds since 1970.
    pub copied_at: i64,
    /// The last turn (its row id in the project's database) whose end the copy holds: a
    /// restore compares the turns the database records on the session with it, so a copy that
    /// stopped short (a copy that failed since) is never put back as if whole (issue 23,
    /// finding 9). Absent in a manifest of an older sticky, whose `copied_at` is compared with
    /// the turns' ends instead. A row id names a turn of one thread only: see
    /// [`Manifest::turn_started_at`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<i64>,
    /// When that turn started (its `started_at`, milliseconds since 1970), which is what
    /// [`Manifest::lacks`] compares: a session can be on record in two threads (a conversation
    /// imported back under another name), each with rows of its own, and every row of the
    /// session keeps the times of the turn it records (review 19, M4). Absent in a manifest
    /// of an older sticky, which still records `turn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_started_at: Option<i64>,
    /// The files, in the order the agent listed them first.
    pub files: Vec<Entry>,
    /// The session's database rows (`rows.json`), for an agent that keeps rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<RowsEntry>,
    /// When `sticky trust` adopted the state this copy came with, while the agent in the
    /// user's HOME had none of the session's files (milliseconds since 1970): a copy made
    /// elsewhere, which a restore names as such. The next copy, made from the agent's own files
    /// here, clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopted_at: Option<i64>,
    /// The HOME whose agent's files the last copy was made from (absent in a manifest of an
    /// older sticky, which drops it when it writes one). Readable without the user's key: with
    /// the key lost, a state stamped before it whose vault copies were made in this HOME is the
    /// user's own there, not another HOME's project (review 11, M3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<PathBuf>,
}

/// Whether `a` and `b` name one HOME: the same path, or the same directory by device and inode
/// (one HOME written two ways, through a link: review 14, L1).
pub fn same_directory(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    a == b
        || match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
            _ => false,
        }
}

impl Manifest {
    /// Whether the last copy was made from the agent's files in `home` (see [`Manifest::home`]):
    /// the same path, or the same directory by device and inode (one HOME written two ways,
    /// through a link: review 14, L1).
    pub fn made_in(&self, home: &Path) -> bool {
        self.home
            .as_deref()
            .is_some_and(|made| same_directory(made, home))
    }

    /// The turns among `turns` (the session's, from the database, of whichever thread has it
    /// on record) this copy does not hold: every finished turn that started after the last one
    /// it records. For a manifest of an older sticky, which records that turn by row id only,
    /// a turn after it that also ended after the copy was made (a row of another thread, an
    /// imported one, has a row id of its own but the times of the turn it records); for one
    /// that records no turn, every one that ended after the copy was made. Only turns that
    /// ended well count: a failed one may never have reached the agent's files. A restore and
    /// an export from the vault refuse a copy that lacks any.
    pub fn lacks<'a>(
        &self,
        turns: impl Iterator<Item = &'a crate::store::TurnRow>,
    ) -> Vec<&'a crate::store::TurnRow> {
        let after_copy =
            |row: &crate::store::TurnRow| row.ended_at.unwrap_or(row.started_at) > self.copied_at;
        turns
            .filter(|row| row.status == crate::store::TurnStatus::Ok)
            .filter(|row| match (self.turn_started_at, self.turn) {
                (Some(started), _) => row.started_at > started,
                (None, Some(last)) => row.id > last && after_copy(row),
                (None, None) => after_copy(row),
            })
            .collect()
    }
}

/// The copy of a session's database rows in a [`Manifest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowsEntry {
    /// The database's path under the agent's home.
    pub relative: PathBuf,
    /// The length of `rows.json`.
    pub len: u64,
    /// Its hash.
    pub hash: u64,
    /// Its SHA-256 (absent in a manifest of an older sticky).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// One copied file in a [`Manifest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its path under the agent's home, and under the session's `files/`.
    pub relative: PathBuf,
    /// How the agent writes it: `append`, `rewritten` or `shared`.
    pub keeping: String,
    /// The length of the copy (the bytes of the agent's file copied so far).
    pub len: u64,
    /// The agent's file's modification time at the copy, in nanoseconds since 1970.
    pub mtime_ns: i128,
    /// The agent's file's inode at the copy.
    pub inode: u64,
    /// A hash of the copy, to tell whether the agent's file changed: of the whole file when
    /// rewritten, of its first and last 4 KiB (and its length) when appended to.
    pub hash: u64,
    /// The SHA-256 of the copy's `len` bytes, which a restore checks (absent in a manifest of
    /// an older sticky).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// For an appended copy: the SHA-256 state after its last whole 64-byte block, which the
    /// next copy carries on from (`digest.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256_midstate: Option<String>,
}

impl Entry {
    /// How the agent writes the file.
    pub fn keeping(&self) -> Keeping {
        match self.keeping.as_str() {
            "append" => Keeping::Append,
            "shared" => Keeping::Shared,
            _ => Keeping::Rewritten,
        }
    }
}

/// The name of `keeping` in a manifest.
fn keeping_name(keeping: Keeping) -> &'static str {
    match keeping {
        Keeping::Append => "append",
        Keeping::Rewritten => "rewritten",
        Keeping::Shared => "shared",
    }
}

/// One file of a session in the vault, as [`Vault::files`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaultFile {
    /// Its path under the agent's home.
    pub relative: PathBuf,
    /// How the agent writes it.
    pub keeping: Keeping,
    /// The copy in the vault.
    pub copy: PathBuf,
    /// The copy's length.
    pub len: u64,
}

/// The newest copy in the vault, for `status` and `doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Newest {
    /// The agent's name.
    pub agent: String,
    /// The agent's session ID.
    pub session: String,
    /// When it was copied, in milliseconds since 1970.
    pub copied_at: i64,
}

impl Vault {
    /// The vault in directory `dir` (`State::vault`).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The vault's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The directory of agent `agent`'s session `id` (which may not exist).
    pub fn session_dir(&self, agent: &str, id: &str) -> PathBuf {
        self.dir.join(key(agent)).join(key(id))
    }

    /// The vault's directory, opened (see `state::open_companion`); `None` when missing.
    fn open(&self) -> Result<Option<Dir>> {
        state::open_companion(&self.dir)
            .with_context(|| format!("cannot open the vault {}", self.dir.display()))
    }

    /// The directory of a session, opened; `None` when the vault holds none.
    fn open_session(&self, agent: &str, id: &str) -> Result<Option<Dir>> {
        let Some(vault) = self.open()? else {
            return Ok(None);
        };
        match vault.open_dir(&Path::new(&key(agent)).join(key(id))) {
            Ok(dir) => Ok(Some(dir)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).context("cannot open the vault's copy of the session"),
        }
    }

    /// The directory of a session, created when missing.
    fn create_session(&self, agent: &str, id: &str) -> Result<Dir> {
        let vault = state::companion(&self.dir)
            .with_context(|| format!("cannot create the vault {}", self.dir.display()))?;
        vault
            .create_dir_all(&Path::new(&key(agent)).join(key(id)))
            .context("cannot create the vault's copy of the session")
    }

    /// The manifest of a session, `None` when the vault holds no copy of it.
    pub fn manifest(&self, agent: &str, id: &str) -> Result<Option<Manifest>> {
        match self.open_session(agent, id)? {
            Some(session) => read_manifest(&session),
            None => Ok(None),
        }
    }

    /// What this vault, of a state sticky refuses for now (another account's, open to others),
    /// says of session `id` of `agent`, read as it is ([`state::open_companion_as_is`]): to
    /// learn whether that state may keep the session, never to restore from it.
    pub fn peek(&self, agent: &str, id: &str) -> Peek {
        let opened = state::open_companion_as_is(&self.dir).and_then(|vault| {
            vault
                .map(|vault| vault.open_dir(&Path::new(&key(agent)).join(key(id))))
                .transpose()
        });
        let session = match opened {
            Ok(Some(session)) => session,
            Ok(None) => return Peek::None,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Peek::None,
            Err(_) => return Peek::Unreadable,
        };
        match read_manifest(&session) {
            Ok(Some(manifest)) => Peek::Copy(Box::new(manifest)),
            Ok(None) => Peek::None,
            Err(_) => Peek::Unreadable,
        }
    }

    /// The copies of a session's files whose copy exists, in the manifest's order, each proved
    /// to be the copy sticky made (its size and SHA-256); empty when the vault holds none. A
    /// relative path that is not plain (absolute, `..`), a link, and a copy changed since it
    /// was made are refused.
    pub fn files(&self, agent: &str, id: &str) -> Result<Vec<VaultFile>> {
        let Some(session) = self.open_session(agent, id)? else {
            return Ok(Vec::new());
        };
        let Some(manifest) = read_manifest(&session)? else {
            return Ok(Vec::new());
        };
        let mut listed = Vec::new();
        for entry in &manifest.files {
            ensure_plain(&entry.relative)?;
            let Some(copy) = open_copy(&session, &entry.relative)? else {
                continue;
            };
            verify(
                copy,
                entry.len,
                entry.sha256.as_deref(),
                &entry.relative,
                &mut io::sink(),
            )?;
            listed.push(VaultFile {
                relative: entry.relative.clone(),
                keeping: entry.keeping(),
                copy: session.path().join(FILES).join(&entry.relative),
                len: entry.len,
            });
        }
        Ok(listed)
    }

    /// The copy of a session kept as database rows (`rows.json`), if the vault holds one,
    /// proved to be the copy sticky made (its size and SHA-256).
    pub fn rows(&self, agent: &str, id: &str) -> Result<Option<Vec<u8>>> {
        let Some(session) = self.open_session(agent, id)? else {
            return Ok(None);
        };
        let Some(held) = read_manifest(&session)?.and_then(|manifest| manifest.rows) else {
            return Ok(None);
        };
        let copy = match session.open_file(Path::new(ROWS), Access::Read) {
            Ok(copy) => copy,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).context("cannot read the vault's copy of the session's rows"),
        };
        let mut document = Vec::new();
        verify(
            copy,
            held.len,
            held.sha256.as_deref(),
            Path::new(ROWS),
            &mut document,
        )?;
        Ok(Some(document))
    }

    /// After `sticky relocate` moved session `id`'s files to where the agent keeps them for
    /// `directory`: each copy whose file moved (`moved` gives its new path under the agent's
    /// home) is renamed to that path, and the manifest names `directory`. The copy stays what
    /// it was (the next turn copies the moved file anew); the vault keeps no copy under the old
    /// directory's name, which a restore would put back beside the moved one (review 5, M2).
    pub fn relocated(
        &self,
        agent: &str,
        id: &str,
        directory: &Path,
        moved: impl Fn(&Path) -> Option<PathBuf>,
    ) -> Result<()> {
        let Some(session) = self.open_session(agent, id)? else {
            return Ok(());
        };
        let Some(mut manifest) = read_manifest(&session)? else {
            return Ok(());
        };
        let files = Path::new(FILES);
        let mut entries = Vec::with_capacity(manifest.files.len());
        for mut entry in std::mem::take(&mut manifest.files) {
            ensure_plain(&entry.relative)?;
            if let Some(to) = moved(&entry.relative).filter(|to| *to != entry.relative) {
                ensure_plain(&to)?;
                let (from_path, to_path) = (files.join(&entry.relative), files.join(&to));
                let renamed = session
                    .parent_of(&from_path, false)
                    .and_then(|(dir, name)| {
                        let (to_dir, to_name) = session.parent_of(&to_path, true)?;
                        dir.rename(name, &to_dir, to_name)
                    });
                match renamed {
                    Ok(()) => {}
                    // No copy to carry: the entry goes, as a copy whose file is gone would.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => {
                        return Err(e).with_context(|| {
                            format!(
                                "cannot move the vault's copy of {}",
                                entry.relative.display()
                            )
                        });
                    }
                }
                // A copy already there (a session relocated back) was just replaced.
                entries.retain(|kept: &Entry| kept.relative != to);
                entry.relative = to;
            } else if entries
                .iter()
                .any(|kept: &Entry| kept.relative == entry.relative)
            {
                continue;
            }
            entries.push(entry);
        }
        manifest.files = entries;
        directory.clone_into(&mut manifest.directory);
        write_manifest(&session, &manifest)
    }

    /// Deletes a session's copies; whether there were any.
    pub fn delete(&self, agent: &str, id: &str) -> Result<bool> {
        let dir = self.session_dir(agent, id);
        let deleted = (|| -> Result<bool> {
            let Some(vault) = self.open()? else {
                return Ok(false);
            };
            let agent_dir = match vault.open_dir(Path::new(&key(agent))) {
                Ok(agent_dir) => agent_dir,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
                Err(e) => return Err(e.into()),
            };
            Ok(agent_dir.remove_dir_all(OsStr::new(&key(id)))?)
        })();
        deleted.with_context(|| format!("cannot delete {}", dir.display()))
    }

    /// The bytes the vault takes on disk (its files' lengths); 0 when it does not exist.
    pub fn size(&self) -> Result<u64> {
        let size = |vault: Dir| dir_size(&vault).map_err(anyhow::Error::from);
        self.open()?
            .map_or(Ok(0), size)
            .with_context(|| format!("cannot read {}", self.dir.display()))
    }

    /// The manifests of every session in the vault (unreadable ones, and links, skipped).
    pub fn manifests(&self) -> Vec<Manifest> {
        let mut found = Vec::new();
        let Ok(Some(vault)) = self.open() else {
            return found;
        };
        for agent in subdirs(&vault) {
            for session in subdirs(&agent) {
                if let Ok(Some(manifest)) = read_manifest(&session) {
                    found.push(manifest);
                }
            }
        }
        found
    }

    /// Marks, as adopted at `at` (`sticky trust`), each session's copy that `foreign` calls
    /// foreign (the agent in this HOME has none of its files): a restore of it then says it
    /// came with an adopted state. The sessions marked; a manifest that cannot be read is
    /// skipped (a restore refuses it anyway).
    pub fn adopt(&self, at: i64, foreign: impl Fn(&Manifest) -> bool) -> Result<Vec<Manifest>> {
        let mut marked = Vec::new();
        let Some(vault) = self.open()? else {
            return Ok(marked);
        };
        for agent in subdirs(&vault) {
            for session in subdirs(&agent) {
                let Ok(Some(mut manifest)) = read_manifest(&session) else {
                    continue;
                };
                if !foreign(&manifest) {
                    continue;
                }
                manifest.adopted_at = Some(at);
                write_manifest(&session, &manifest)?;
                marked.push(manifest);
            }
        }
        Ok(marked)
    }

    /// The most recent copy, `None` when the vault is empty.
    pub fn newest(&self) -> Option<Newest> {
        self.manifests()
            .into_iter()
            .max_by_key(|manifest| manifest.copied_at)
            .map(|manifest| Newest {
                agent: manifest.agent,
                session: manifest.session,
                copied_at: manifest.copied_at,
            })
    }
}

/// The manifest in a session's directory, `None` when there is none.
fn read_manifest(session: &Dir) -> Result<Option<Manifest>> {
    let path = session.path().join(MANIFEST);
    let mut bytes = Vec::new();
    match session.open_file(Path::new(MANIFEST), Access::Read) {
        // One byte past the limit is enough to tell a planted giant from a manifest.
        Ok(file) => file
            .take(MAX_MANIFEST + 1)
            .read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {}", path.display()))?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    anyhow::ensure!(
        bytes.len() as u64 <= MAX_MANIFEST,
        "{} is over {MAX_MANIFEST} bytes, more than sticky writes (not a vault manifest)",
        path.display()
    );
    let manifest: Manifest = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is damaged (not a vault manifest)", path.display()))?;
    if manifest.version != VERSION {
        anyhow::bail!(
            "{} has format version {}, this sticky reads {VERSION}",
            path.display(),
            manifest.version
        );
    }
    Ok(Some(manifest))
}

/// Writes a session's manifest atomically (a temporary file renamed over it).
fn write_manifest(session: &Dir, manifest: &Manifest) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(manifest)?;
    write_atomically(session, Path::new(MANIFEST), &bytes).with_context(|| {
        format!(
            "cannot write the vault's manifest in {}",
            session.path().display()
        )
    })
}

/// Opens the copy of `relative` in a session's directory for reading; `None` when missing.
fn open_copy(session: &Dir, relative: &Path) -> Result<Option<File>> {
    match session.open_file(&Path::new(FILES).join(relative), Access::Read) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e)
            .with_context(|| format!("cannot read the vault's copy of {}", relative.display())),
    }
}

/// Streams the vault's copy `copy` of `relative` into `out`, then proves it is the copy sticky
/// made: `len` bytes whose SHA-256 is `sha256`. The caller keeps what `out` received only when
/// this succeeds.
fn verify(
    mut copy: File,
    len: u64,
    sha256: Option<&str>,
    relative: &Path,
    out: &mut dyn Write,
) -> Result<()> {
    let Some(sha256) = sha256 else {
        anyhow::bail!(
            "the vault's copy of {} was made by an older sticky and has no checksum, so \
             sticky cannot prove it is the copy it made; it is not put back (a turn while the \
             agent still has the session's files hashes it)",
            relative.display()
        );
    };
    let mut sum = digest::Running::new();
    let mut buffer = vec![0; 1 << 16];
    loop {
        let read = match copy.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("cannot read the vault's copy of {}", relative.display())
                });
            }
        };
        sum.update(&buffer[..read]);
        out.write_all(&buffer[..read])?;
        // No more than a byte past what the manifest says is needed to know it is longer.
        if sum.len() > len {
            break;
        }
    }
    let found = sum.len();
    let wrong = if found < len {
        format!("{found} bytes where its manifest records {len}")
    } else if found > len {
        format!("more than the {len} bytes its manifest records")
    } else if sum.finish() != sha256 {
        format!("{len} bytes as recorded, but another SHA-256")
    } else {
        return Ok(());
    };
    anyhow::bail!(
        "the vault's copy of {} does not match the copy sticky made ({wrong}), so it was \
         changed or damaged since; it is not put back",
        relative.display()
    )
}

/// A file name for `name`: itself when it is plain, else `~` and its bytes in hex.
fn key(name: &str) -> String {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if plain {
        return name.to_owned();
    }
    name.bytes().fold("~".to_owned(), |mut hex, b| {
        hex.push_str(&format!("{b:02x}"));
        hex
    })
}

/// Refuses a relative path that is empty or holds anything but plain names.
pub fn ensure_plain(relative: &Path) -> Result<()> {
    let plain = !relative.as_os_str().is_empty()
        && relative
            .components()
            .all(|part| matches!(part, Component::Normal(_)));
    anyhow::ensure!(
        plain,
        "the vault names the file \"{}\", which is not a plain path under the agent's home",
        relative.display()
    );
    Ok(())
}

/// The subdirectories of `dir` (links skipped), opened.
fn subdirs(dir: &Dir) -> Vec<Dir> {
    let Ok(entries) = dir.entries() else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter(|(_, kind)| *kind == Kind::Dir)
        .filter_map(|(name, _)| dir.open_dir(Path::new(&name)).ok())
        .collect()
}

/// The total length of the files under `dir` (links not followed).
fn dir_size(dir: &Dir) -> io::Result<u64> {
    let mut total = 0;
    for (name, kind) in dir.entries()? {
        match kind {
            Kind::Dir => total += dir_size(&dir.open_dir(Path::new(&name))?)?,
            Kind::File => total += dir.file_len(&name)?,
            Kind::Link | Kind::Other => {}
        }
    }
    Ok(total)
}

/// A temporary name beside `name`, this process's own.
fn temporary(name: &OsStr, suffix: &str) -> OsString {
    let mut temporary = name.to_owned();
    temporary.push(format!("{suffix}{}", std::process::id()));
    temporary
}

/// Creates the new file `name` in `dir` (0600) for a temporary copy, one left over by a
/// sticky of the same pid that died removed first.
fn create_temporary(dir: &Dir, name: &OsStr) -> io::Result<File> {
    match dir.remove_file(name) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    dir.create_new(name)
}

/// Writes `bytes` to `relative` under `session` through a temporary file beside it (0600),
/// renamed over it.
fn write_atomically(session: &Dir, relative: &Path, bytes: &[u8]) -> Result<()> {
    let (dir, name) = session.parent_of(relative, true)?;
    let temporary = temporary(name, ".tmp");
    let written = create_temporary(&dir, &temporary)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| dir.rename(&temporary, &dir, name));
    if let Err(e) = written {
        let _ = dir.remove_file(&temporary);
        return Err(e).with_context(|| format!("cannot write {}", dir.path().join(name).display()));
    }
    Ok(())
}

/// FNV-1a (64 bits): a stable hash, to tell whether a file changed (not a defence against
/// anyone: the SHA-256 sums are what a restore trusts).
#[derive(Debug, Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests;
