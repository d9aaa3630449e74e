//! The copy after a turn: what changed of a session's files goes into the vault, appended
//! files by their new bytes only, rewritten ones whole when they changed; every copy's full
//! SHA-256 recorded from the bytes written into it (`digest.rs`).

use std::ffi::OsStr;
use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::digest::Running;
use super::{
    Entry, FILES, Fnv, Manifest, ROWS, RowsEntry, VERSION, Vault, create_temporary, keeping_name,
    read_manifest, rows, temporary, write_atomically, write_manifest,
};
use crate::agent::{Adapter, Keeping, SessionFile};
use crate::confined::{Access, Dir};

/// The bytes at each end of an appended file that its sample hash covers.
const SAMPLE: u64 = 4096;

/// The turn after which a copy is made, as its manifest records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// Its row id in the project's database.
    pub id: i64,
    /// When it started (its `started_at`), what every thread's row of it keeps; `None` when
    /// the database could not say, so the manifest is judged as an older sticky's.
    pub started_at: Option<i64>,
}

/// What one copy did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Copied {
    /// The session's files the agent listed.
    pub files: usize,
    /// The bytes written into the vault's copies (the manifest aside).
    pub written: u64,
}

impl Vault {
    /// Copies what changed of agent session `id` (run in `directory`; the agent's files under
    /// the user's `home`) into the vault, after turn `turn`, which the manifest then records as
    /// the last the copy holds. A file the agent no longer lists keeps its copy; when it lists
    /// none, the vault is left as it is.
    pub fn copy(
        &self,
        adapter: &dyn Adapter,
        home: &Path,
        directory: &Path,
        id: &str,
        turn: Held,
    ) -> Result<Copied> {
        self.copy_changed(adapter, home, directory, id, |manifest| {
            manifest.copied_at = crate::store::now();
            manifest.turn = Some(turn.id);
            manifest.turn_started_at = turn.started_at;
        })
    }

    /// After `sticky relocate` placed session `id`'s files for `directory` (what names the
    /// directory inside them rewritten): the vault's copy, if it holds one, made the placed
    /// files' (each moved file has a new inode, so it is copied whole), so a restore puts back
    /// what was placed, never a file that still names the old directory (review 6, M3). The
    /// turns the copy holds are the ones it held: the files were moved, not added to.
    pub fn refresh(
        &self,
        adapter: &dyn Adapter,
        home: &Path,
        directory: &Path,
        id: &str,
    ) -> Result<()> {
        if self.manifest(adapter.name(), id)?.is_none() {
            return Ok(());
        }
        self.copy_changed(adapter, home, directory, id, |_| {})
            .map(|_| ())
    }

    /// Copies what changed of session `id`'s files into the vault, then lets `mark` record the
    /// copy in the manifest before it is written.
    fn copy_changed(
        &self,
        adapter: &dyn Adapter,
        home: &Path,
        directory: &Path,
        id: &str,
        mark: impl FnOnce(&mut Manifest),
    ) -> Result<Copied> {
        let listed = adapter.session_files(home, directory, id);
        let rows = match adapter.session_rows(home, id) {
            Some(rows) => rows::dump(&rows, id)
                .with_context(|| format!("cannot read {}", rows.database.display()))?
                .map(|dump| (rows.relative, dump)),
            None => None,
        };
        if listed.is_empty() && rows.is_none() {
            return Ok(Copied::default());
        }
        let session = self.create_session(adapter.name(), id)?;
        let mut manifest = manifest_to_update(&session, adapter, directory, id);
        let mut copied = Copied {
            files: listed.len(),
            written: copy_listed(adapter, home, &listed, &mut manifest, &session)?,
        };
        if let Some((relative, dump)) = rows {
            copied.files += 1;
            copied.written += keep_rows(&session, &mut manifest, relative, &dump)?;
        }
        mark(&mut manifest);
        // Copied from the agent's own files in this HOME now, not adopted with the state.
        manifest.adopted_at = None;
        manifest.home = Some(home.to_owned());
        write_manifest(&session, &manifest)?;
        Ok(copied)
    }
}

/// The manifest of `session` to update, its directory `directory`; a damaged one is started
/// over, so everything is copied whole again.
fn manifest_to_update(
    session: &Dir,
    adapter: &dyn Adapter,
    directory: &Path,
    id: &str,
) -> Manifest {
    let mut manifest = read_manifest(session)
        .ok()
        .flatten()
        .unwrap_or_else(|| Manifest {
            version: VERSION,
            agent: adapter.name().to_owned(),
            session: id.to_owned(),
            directory: directory.to_owned(),
            copied_at: 0,
            turn: None,
            turn_started_at: None,
            files: Vec::new(),
            rows: None,
            adopted_at: None,
            home: None,
        });
    directory.clone_into(&mut manifest.directory);
    manifest
}

/// Copies what changed of the `listed` files into `session`, recording each in `manifest`;
/// returns the bytes written.
fn copy_listed(
    adapter: &dyn Adapter,
    home: &Path,
    listed: &[SessionFile],
    manifest: &mut Manifest,
    session: &Dir,
) -> Result<u64> {
    // The agent's home is the user's (a link the user made is trusted); below it, the
    // session's files are read without following a link.
    let agent_home = match adapter.agent_home(home) {
        Some(root) if !listed.is_empty() => {
            Some(Dir::open_top(&root).with_context(|| format!("cannot read {}", root.display()))?)
        }
        _ => None,
    };
    let mut written = 0;
    for file in listed {
        let Some(agent_home) = &agent_home else {
            anyhow::bail!(
                "sticky does not know where {} keeps its sessions",
                adapter.name()
            );
        };
        let index = manifest
            .files
            .iter()
            .position(|entry| entry.relative == file.relative);
        let old = index.map(|index| &manifest.files[index]);
        let (entry, bytes) = copy_file(agent_home, file, old, session)
            .with_context(|| format!("cannot copy {} into the vault", file.path.display()))?;
        written += bytes;
        match index {
            Some(index) => manifest.files[index] = entry,
            None => manifest.files.push(entry),
        }
    }
    Ok(written)
}

/// Keeps a session's rows (`rows.json`) when they changed; returns the bytes written.
fn keep_rows(
    session: &Dir,
    manifest: &mut Manifest,
    relative: PathBuf,
    dump: &[u8],
) -> Result<u64> {
    let mut hash = Fnv::new();
    hash.write(dump);
    let mut sum = Running::new();
    sum.update(dump);
    let sha256 = sum.finish();
    let len = dump.len() as u64;
    let same = manifest.rows.as_ref().is_some_and(|old| {
        old.hash == hash.0
            && old.len == len
            && old.sha256.as_deref() == Some(sha256.as_str())
            && session.file_len(OsStr::new(ROWS)).ok() == Some(len)
    });
    if !same {
        write_atomically(session, Path::new(ROWS), dump)?;
    }
    manifest.rows = Some(RowsEntry {
        relative,
        len,
        hash: hash.0,
        sha256: Some(sha256),
    });
    Ok(if same { 0 } else { len })
}

/// The vault's copy of one file, opened where it is (never through a link).
struct Copy {
    /// The directory holding it, created.
    dir: Dir,
    /// Its name there.
    name: std::ffi::OsString,
    /// The copy, when one exists, for reading and appending.
    file: Option<File>,
}

impl Copy {
    fn open(session: &Dir, relative: &Path) -> Result<Self> {
        let path = Path::new(FILES).join(relative);
        let (dir, name) = session.parent_of(&path, true)?;
        let file = match dir.open_here(name, Access::ReadWrite) {
            Ok(file) => Some(file),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e.into()),
        };
        Ok(Self {
            name: name.to_owned(),
            dir,
            file,
        })
    }

    /// The copy's length; `None` when there is none, or when it has other names too (hard
    /// links: appending would write into them), so that it is made anew.
    fn len(&self) -> Result<Option<u64>> {
        let Some(file) = &self.file else {
            return Ok(None);
        };
        let meta = file.metadata()?;
        Ok((meta.nlink() == 1).then_some(meta.len()))
    }
}

/// Copies one file as the agent writes it; returns its new entry and the bytes written.
fn copy_file(
    agent_home: &Dir,
    file: &SessionFile,
    old: Option<&Entry>,
    session: &Dir,
) -> Result<(Entry, u64)> {
    let mut source = agent_home.open_file(&file.relative, Access::Read)?;
    let meta = source.metadata()?;
    let mut copy = Copy::open(session, &file.relative)?;
    let copy_len = copy.len()?;
    let entry = |len, hash, sha256, midstate| Entry {
        relative: file.relative.clone(),
        keeping: keeping_name(file.keeping).to_owned(),
        len,
        mtime_ns: mtime_ns(&meta),
        inode: meta.ino(),
        hash,
        sha256: Some(sha256),
        sha256_midstate: midstate,
    };
    if file.keeping != Keeping::Append {
        return copy_if_changed(&mut source, &meta, old, copy_len, &copy)
            .map(|(len, hash, sha256, written)| (entry(len, hash, sha256, None), written));
    }
    let resumed = match old {
        Some(old)
            if old.inode == meta.ino()
                && meta.len() >= old.len
                && copy_len.is_some_and(|len| len >= old.len)
                && sample_hash(&source, old.len)? == old.hash =>
        {
            resume(old, &copy)?
        }
        _ => None,
    };
    let (from, mut sum) = resumed.unwrap_or((0, Running::new()));
    if from == meta.len() && copy_len == Some(from) {
        let hash = old.map_or(0, |old| old.hash);
        return Ok((entry(from, hash, sum.finish(), Some(sum.midstate())), 0));
    }
    let written = if from == 0 {
        copy_whole(&mut source, meta.len(), &copy, &mut sum)?
    } else {
        append(&mut source, from, meta.len(), &mut copy, copy_len, &mut sum)?
    };
    let len = from + written;
    let hash = sample_hash(&source, len)?;
    Ok((
        entry(len, hash, sum.finish(), Some(sum.midstate())),
        written,
    ))
}

/// The SHA-256 of an appended copy taken up at its recorded length, from the manifest's
/// midstate and the copy's last partial block, when that gives the SHA-256 recorded (so the
/// copy's tail is the one hashed); `None` to copy it whole again (a manifest of an older sticky,
/// or a copy changed since).
fn resume(old: &Entry, copy: &Copy) -> Result<Option<(u64, Running)>> {
    let (Some(midstate), Some(sha256), Some(file)) =
        (&old.sha256_midstate, &old.sha256, &copy.file)
    else {
        return Ok(None);
    };
    let mut tail = vec![0; usize::try_from(old.len % 64)?];
    file.read_exact_at(&mut tail, old.len - old.len % 64)?;
    Ok(Running::resume(midstate, old.len, &tail)
        .filter(|sum| sum.finish() == *sha256)
        .map(|sum| (old.len, sum)))
}

/// A rewritten file, copied whole when its size, time or inode moved and its hash changed:
/// returns its length, hash, SHA-256 and the bytes written.
fn copy_if_changed(
    source: &mut File,
    meta: &Metadata,
    old: Option<&Entry>,
    copy_len: Option<u64>,
    copy: &Copy,
) -> Result<(u64, u64, String, u64)> {
    // A copy whose entry has no SHA-256 (an older sticky's) is taken as changed: hashed anew.
    let copied = |old: &Entry| copy_len == Some(old.len) && old.sha256.is_some();
    if let Some(old) = old.filter(|old| copied(old)) {
        let same =
            old.len == meta.len() && old.mtime_ns == mtime_ns(meta) && old.inode == meta.ino();
        if let (true, Some(sha256)) = (same, &old.sha256) {
            return Ok((old.len, old.hash, sha256.clone(), 0));
        }
    }
    let mut bytes = Vec::new();
    source.read_to_end(&mut bytes)?;
    let mut hash = Fnv::new();
    hash.write(&bytes);
    let mut sum = Running::new();
    sum.update(&bytes);
    let sha256 = sum.finish();
    let len = bytes.len() as u64;
    let unchanged = old.is_some_and(|old| {
        copied(old) && old.hash == hash.0 && old.len == len && old.sha256 == Some(sha256.clone())
    });
    if unchanged {
        return Ok((len, hash.0, sha256, 0));
    }
    write_copy(copy, &mut bytes.as_slice(), &mut Running::new())?;
    Ok((len, hash.0, sha256, len))
}

/// Copies `source` (at most `len` bytes, from its start) to a temporary file renamed over the
/// copy, summing what is written.
fn copy_whole(source: &mut File, len: u64, copy: &Copy, sum: &mut Running) -> Result<u64> {
    source.seek(SeekFrom::Start(0))?;
    write_copy(copy, &mut Read::take(&mut *source, len), sum)
}

/// Writes `from` to a temporary file beside the copy, renamed over it; returns the bytes.
fn write_copy(copy: &Copy, from: &mut dyn Read, sum: &mut Running) -> Result<u64> {
    let temporary = temporary(&copy.name, ".tmp");
    let written = (|| {
        let mut out = create_temporary(&copy.dir, &temporary)?;
        let written = copy_summing(from, &mut out, sum)?;
        copy.dir.rename(&temporary, &copy.dir, &copy.name)?;
        Ok::<_, io::Error>(written)
    })();
    if written.is_err() {
        let _ = copy.dir.remove_file(&temporary);
    }
    Ok(written?)
}

/// Appends `source`'s bytes from `from` to `to` to the copy (now `copy_len` long), cut back to
/// `from` first when a copy whose manifest was never written left it longer.
fn append(
    source: &mut File,
    from: u64,
    to: u64,
    copy: &mut Copy,
    copy_len: Option<u64>,
    sum: &mut Running,
) -> Result<u64> {
    let out = copy.file.as_mut().context("the copy to append to exists")?;
    if copy_len != Some(from) {
        out.set_len(from)?;
    }
    out.seek(SeekFrom::Start(from))?;
    source.seek(SeekFrom::Start(from))?;
    Ok(copy_summing(
        &mut Read::take(&mut *source, to - from),
        out,
        sum,
    )?)
}

/// Copies `from` into `to`, adding every byte to `sum`; returns how many.
fn copy_summing(from: &mut dyn Read, to: &mut dyn Write, sum: &mut Running) -> io::Result<u64> {
    let mut buffer = vec![0; 1 << 16];
    let mut total = 0;
    loop {
        let read = match from.read(&mut buffer) {
            Ok(0) => return Ok(total),
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buffer[..read])?;
        sum.update(&buffer[..read]);
        total += read as u64;
    }
}

/// The hash of the first and last [`SAMPLE`] bytes of `file`'s first `len` bytes, and of
/// `len`: what tells that a copied prefix is still the file's own without reading it all.
pub(super) fn sample_hash(file: &File, len: u64) -> Result<u64> {
    let mut hash = Fnv::new();
    let head = len.min(SAMPLE);
    let tail_start = len.saturating_sub(SAMPLE).max(head);
    for (start, end) in [(0, head), (tail_start, len)] {
        let mut buffer = vec![0; usize::try_from(end - start)?];
        file.read_exact_at(&mut buffer, start)?;
        hash.write(&buffer);
    }
    hash.write(&len.to_le_bytes());
    Ok(hash.0)
}

/// A file's modification time in nanoseconds since 1970.
pub(super) fn mtime_ns(meta: &Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}
