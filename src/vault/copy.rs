//! The copy after a turn: what changed of a session's files goes into the vault, appended
//! files by their new bytes only, rewritten ones whole when they changed.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::{
    Entry, FILES, Fnv, Manifest, ROWS, RowsEntry, VERSION, Vault, create_dir, keeping_name,
    open_private, rows, write_atomically,
};
use crate::agent::{Adapter, Keeping, SessionFile};

/// The bytes at each end of an appended file that its sample hash covers.
const SAMPLE: u64 = 4096;

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
    /// the user's `home`) into the vault. A file the agent no longer lists keeps its copy; when
    /// it lists none, the vault is left as it is.
    pub fn copy(
        &self,
        adapter: &dyn Adapter,
        home: &Path,
        directory: &Path,
        id: &str,
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
        // A damaged manifest is started over: everything is copied whole again.
        let mut manifest = self
            .manifest(adapter.name(), id)
            .ok()
            .flatten()
            .unwrap_or_else(|| Manifest {
                version: VERSION,
                agent: adapter.name().to_owned(),
                session: id.to_owned(),
                directory: directory.to_owned(),
                copied_at: 0,
                files: Vec::new(),
                rows: None,
            });
        directory.clone_into(&mut manifest.directory);
        let files = self.session_dir(adapter.name(), id).join(FILES);
        let mut copied = Copied {
            files: listed.len(),
            written: 0,
        };
        for file in &listed {
            let index = manifest
                .files
                .iter()
                .position(|entry| entry.relative == file.relative);
            let old = index.map(|index| &manifest.files[index]);
            let copy = files.join(&file.relative);
            let (entry, written) = copy_file(file, old, &copy)
                .with_context(|| format!("cannot copy {} into the vault", file.path.display()))?;
            copied.written += written;
            match index {
                Some(index) => manifest.files[index] = entry,
                None => manifest.files.push(entry),
            }
        }
        if let Some((relative, dump)) = rows {
            copied.files += 1;
            copied.written += self.keep_rows(&mut manifest, relative, &dump)?;
        }
        manifest.copied_at = crate::store::now();
        self.write_manifest(&manifest)?;
        Ok(copied)
    }
}

impl Vault {
    /// Keeps a session's rows (`rows.json`) when they changed; returns the bytes written.
    fn keep_rows(&self, manifest: &mut Manifest, relative: PathBuf, dump: &[u8]) -> Result<u64> {
        let mut hash = Fnv::new();
        hash.write(dump);
        let path = self
            .session_dir(&manifest.agent, &manifest.session)
            .join(ROWS);
        let len = dump.len() as u64;
        let same = manifest
            .rows
            .as_ref()
            .is_some_and(|old| old.hash == hash.0 && old.len == len && path.is_file());
        if !same {
            write_atomically(&path, dump)?;
        }
        manifest.rows = Some(RowsEntry {
            relative,
            len,
            hash: hash.0,
        });
        Ok(if same { 0 } else { len })
    }
}

/// Copies one file as the agent writes it; returns its new entry and the bytes written.
fn copy_file(file: &SessionFile, old: Option<&Entry>, copy: &Path) -> Result<(Entry, u64)> {
    let mut source = File::open(&file.path)?;
    let meta = source.metadata()?;
    let copy_len = std::fs::metadata(copy).map(|meta| meta.len()).ok();
    let entry = |len, hash| Entry {
        relative: file.relative.clone(),
        keeping: keeping_name(file.keeping).to_owned(),
        len,
        mtime_ns: mtime_ns(&meta),
        inode: meta.ino(),
        hash,
    };
    if file.keeping != Keeping::Append {
        return copy_if_changed(&mut source, &meta, old, copy_len, copy)
            .map(|(len, hash, written)| (entry(len, hash), written));
    }
    let from = match old {
        Some(old)
            if old.inode == meta.ino()
                && meta.len() >= old.len
                && copy_len.is_some_and(|len| len >= old.len)
                && sample_hash(&source, old.len)? == old.hash =>
        {
            old.len
        }
        _ => 0,
    };
    if from == meta.len() && copy_len == Some(from) {
        return Ok((entry(from, old.map_or(0, |old| old.hash)), 0));
    }
    let written = if from == 0 {
        copy_whole(&mut source, meta.len(), copy)?
    } else {
        append(&mut source, from, meta.len(), copy, copy_len)?
    };
    let len = from + written;
    Ok((entry(len, sample_hash(&source, len)?), written))
}

/// A rewritten file, copied whole when its size, time or inode moved and its hash changed:
/// returns its length, hash and the bytes written.
fn copy_if_changed(
    source: &mut File,
    meta: &Metadata,
    old: Option<&Entry>,
    copy_len: Option<u64>,
    copy: &Path,
) -> Result<(u64, u64, u64)> {
    let copied = |old: &Entry| copy_len == Some(old.len);
    if let Some(old) = old.filter(|old| copied(old)) {
        let same =
            old.len == meta.len() && old.mtime_ns == mtime_ns(meta) && old.inode == meta.ino();
        if same {
            return Ok((old.len, old.hash, 0));
        }
    }
    let mut bytes = Vec::new();
    io::Read::read_to_end(source, &mut bytes)?;
    let mut hash = Fnv::new();
    hash.write(&bytes);
    let len = bytes.len() as u64;
    if old.is_some_and(|old| copied(old) && old.hash == hash.0 && old.len == len) {
        return Ok((len, hash.0, 0));
    }
    write_atomically(copy, &bytes)?;
    Ok((len, hash.0, len))
}

/// Copies `source` (at most `len` bytes) to a temporary file renamed over `copy`.
fn copy_whole(source: &mut File, len: u64, copy: &Path) -> Result<u64> {
    let parent = copy.parent().context("a copy has a parent directory")?;
    create_dir(parent)?;
    let mut name = copy.file_name().unwrap_or_default().to_owned();
    name.push(format!(".tmp{}", std::process::id()));
    let temporary = parent.join(name);
    let copied = (|| {
        let mut out = open_private(&temporary, false)?;
        source.seek(SeekFrom::Start(0))?;
        let written = io::copy(&mut io::Read::take(&mut *source, len), &mut out)?;
        std::fs::rename(&temporary, copy)?;
        Ok::<_, io::Error>(written)
    })();
    if copied.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    Ok(copied?)
}

/// Appends `source`'s bytes from `from` to `to` to the copy (now `copy_len` long), cut back to
/// `from` first when a copy whose manifest was never written left it longer.
fn append(
    source: &mut File,
    from: u64,
    to: u64,
    copy: &Path,
    copy_len: Option<u64>,
) -> Result<u64> {
    let mut out = OpenOptions::new().write(true).open(copy)?;
    if copy_len != Some(from) {
        out.set_len(from)?;
    }
    out.seek(SeekFrom::Start(from))?;
    source.seek(SeekFrom::Start(from))?;
    Ok(io::copy(
        &mut io::Read::take(&mut *source, to - from),
        &mut out,
    )?)
}

/// The hash of the first and last [`SAMPLE`] bytes of `file`'s first `len` bytes, and of
/// `len`: what tells that a copied prefix is still the file's own without reading it all.
fn sample_hash(file: &File, len: u64) -> Result<u64> {
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
fn mtime_ns(meta: &Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}
