//! The vault: sticky's own copy of each pinned session's files, so a session outlives the
//! agent's files (Claude Code's `cleanupPeriodDays` sweep, a cleaned `~/.codex`).
//!
//! Layout, beside the database (`State::vault`, `<db>.vault/`), every directory 0700 and every
//! file 0600 (created through `state::create`):
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
//! home when the agent reports the session lost.
//!
//! The read side ([`Vault::session_dir`], [`Vault::manifest`], [`Vault::files`]) is what
//! `sticky export` bundles.

mod copy;
mod restore;
mod rows;

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

use crate::agent::Keeping;
use crate::state;

pub use copy::Copied;
pub use restore::Restored;

/// The manifest's file name in a session's directory.
const MANIFEST: &str = "manifest.json";

/// The directory of the copies in a session's directory.
const FILES: &str = "files";

/// The copy of a session kept as database rows, in a session's directory.
const ROWS: &str = "rows.json";

/// The manifest's format version.
const VERSION: u32 = 1;

/// The vault of one project's state.
#[derive(Debug, Clone)]
pub struct Vault {
    dir: PathBuf,
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
    /// The files, in the order the agent listed them first.
    pub files: Vec<Entry>,
    /// The session's database rows (`rows.json`), for an agent that keeps rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<RowsEntry>,
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
    /// A hash of the copy: of the whole file when rewritten, of its first and last 4 KiB (and
    /// its length) when appended to.
    pub hash: u64,
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

    /// The manifest of a session, `None` when the vault holds no copy of it.
    pub fn manifest(&self, agent: &str, id: &str) -> Result<Option<Manifest>> {
        let path = self.session_dir(agent, id).join(MANIFEST);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
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

    /// The copies of a session's files whose copy exists, in the manifest's order; empty when
    /// the vault holds none. A relative path that is not plain (absolute, `..`) is refused.
    pub fn files(&self, agent: &str, id: &str) -> Result<Vec<VaultFile>> {
        let Some(manifest) = self.manifest(agent, id)? else {
            return Ok(Vec::new());
        };
        let files = self.session_dir(agent, id).join(FILES);
        let mut listed = Vec::new();
        for entry in &manifest.files {
            ensure_plain(&entry.relative)?;
            let copy = files.join(&entry.relative);
            if copy.is_file() {
                listed.push(VaultFile {
                    relative: entry.relative.clone(),
                    keeping: entry.keeping(),
                    copy,
                    len: entry.len,
                });
            }
        }
        Ok(listed)
    }

    /// The copy of a session kept as database rows (`rows.json`), if the vault holds one.
    pub fn rows(&self, agent: &str, id: &str) -> Result<Option<PathBuf>> {
        let held = self.manifest(agent, id)?.and_then(|manifest| manifest.rows);
        let path = self.session_dir(agent, id).join(ROWS);
        Ok(held.filter(|_| path.is_file()).map(|_| path))
    }

    /// Deletes a session's copies; whether there were any.
    pub fn delete(&self, agent: &str, id: &str) -> Result<bool> {
        let dir = self.session_dir(agent, id);
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e).with_context(|| format!("cannot delete {}", dir.display())),
        }
    }

    /// The bytes the vault takes on disk (its files' lengths); 0 when it does not exist.
    pub fn size(&self) -> Result<u64> {
        dir_size(&self.dir).with_context(|| format!("cannot read {}", self.dir.display()))
    }

    /// The manifests of every session in the vault (unreadable ones skipped).
    pub fn manifests(&self) -> Vec<Manifest> {
        let mut found = Vec::new();
        for agent in read_dirs(&self.dir) {
            for session in read_dirs(&agent) {
                let read = std::fs::read(session.join(MANIFEST)).ok();
                if let Some(manifest) = read.and_then(|b| serde_json::from_slice(&b).ok()) {
                    found.push(manifest);
                }
            }
        }
        found
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

    /// Writes a session's manifest atomically (a temporary file renamed over it).
    fn write_manifest(&self, manifest: &Manifest) -> Result<()> {
        let dir = self.session_dir(&manifest.agent, &manifest.session);
        let bytes = serde_json::to_vec_pretty(manifest)?;
        write_atomically(&dir.join(MANIFEST), &bytes)
            .with_context(|| format!("cannot write the vault's manifest in {}", dir.display()))
    }
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

/// The subdirectories of `dir`.
fn read_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path())
        .collect()
}

/// The total length of the files under `dir`.
fn dir_size(dir: &Path) -> io::Result<u64> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut total = 0;
    for entry in entries {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            total += dir_size(&entry.path())?;
        } else if kind.is_file() {
            total += entry.metadata()?.len();
        }
    }
    Ok(total)
}

/// Creates `dir` and its missing parents private to the user (0700).
fn create_dir(dir: &Path) -> Result<()> {
    state::create(dir)
        .map(|_| ())
        .with_context(|| format!("cannot create {}", dir.display()))
}

/// Opens `path` for writing (created 0600), appending or truncating.
fn open_private(path: &Path, append: bool) -> io::Result<std::fs::File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .append(append)
        .truncate(!append)
        .mode(0o600)
        .open(path)
}

/// Writes `bytes` to `path` through a temporary file beside it (0600), renamed over it.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let parent = path.parent().context("a file has a parent directory")?;
    create_dir(parent)?;
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".tmp{}", std::process::id()));
    let temporary = parent.join(name);
    let written = open_private(&temporary, false).and_then(|mut file| file.write_all(bytes));
    if let Err(e) = written.and_then(|()| std::fs::rename(&temporary, path)) {
        let _ = std::fs::remove_file(&temporary);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(())
}

/// FNV-1a (64 bits): a stable hash, to tell whether a file changed (not a defence against
/// anyone: the vault is the user's own).
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
