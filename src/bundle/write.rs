//! Writing a bundle: hash every file, then stream the manifest and the files through tar and
//! zstd into the output.

use std::io::{self, Read, Write};
use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use sha2::{Digest, Sha256};

use super::{FILES, File, MANIFEST, Manifest};
use crate::agent::relocation::hex;

/// The zstd level: `zstd -3`, the command-line tool's default, fast and about as small as tar
/// users expect.
const LEVEL: i32 = 3;

/// libzstd's compression threads.
const WORKERS: u32 = 2;

/// One carried file: its path relative to the agent's home, its bytes, whether they are
/// database rows.
pub type Carried = (String, Source, bool);

/// The bytes of one carried file.
#[derive(Debug, Clone)]
pub enum Source {
    /// A file on disk.
    File(PathBuf),
    /// Bytes sticky produced (database rows as JSON).
    Bytes(Vec<u8>),
}

impl Source {
    fn open(&self) -> Result<Box<dyn Read + '_>> {
        match self {
            Self::File(path) => {
                let file = std::fs::File::open(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                Ok(Box::new(file))
            }
            Self::Bytes(bytes) => Ok(Box::new(bytes.as_slice())),
        }
    }
}

/// Writes the bundle of `manifest` (whose `files` are filled here) and the `files` (path
/// relative to the agent's home, bytes, whether they are rows) to `out`; `hashed` completes the
/// manifest once the files are hashed, just before it is written (so what it waits for, the
/// agent's `--version`, overlaps the hashing). Returns `out` and the manifest written.
pub fn write<W: Write>(
    out: W,
    mut manifest: Manifest,
    files: &[Carried],
    hashed: impl FnOnce(&mut Manifest),
) -> Result<(W, Manifest)> {
    manifest.files = files.iter().map(hashed_entry).collect::<Result<_>>()?;
    hashed(&mut manifest);
    let mut encoder = zstd::stream::write::Encoder::new(out, LEVEL)?;
    encoder.include_checksum(true)?;
    // libzstd's own worker threads compress while this one reads and hashes, as `tar | zstd`
    // overlaps reading and compressing in two processes; the output is the same format.
    encoder.multithread(WORKERS)?;
    let mut archive = tar::Builder::new(encoder);
    let text = serde_json::to_vec_pretty(&manifest)?;
    let limit = super::Limits::default().manifest;
    if text.len() as u64 > limit {
        return Err(crate::exit::StickyError::Usage(format!(
            "the conversation's record is {} bytes, over the {limit} bytes a bundle's manifest \
             may hold even with its oldest answers left out and its long prompts cut; nothing \
             was written. `sticky new --carry \"...\"` goes on in a new session that starts with \
             a recap of the whole conversation, which exports",
            text.len()
        ))
        .into());
    }
    append(
        &mut archive,
        MANIFEST,
        text.len() as u64,
        &mut text.as_slice(),
    )?;
    for (file, (_, source, _)) in manifest.files.iter().zip(files) {
        append_file(&mut archive, file, source)?;
    }
    let out = archive.into_inner()?.finish()?;
    Ok((out, manifest))
}

/// The manifest's entry of one carried file: its path, size and hash.
fn hashed_entry((path, source, rows): &Carried) -> Result<File> {
    let (size, sha256) = digest(source)?;
    // Import refuses rows over its cap before reading them: a bundle it would refuse is not
    // written.
    let limit = super::Limits::default().rows;
    if *rows && size > limit {
        bail!(
            "the session's database rows ({path}) are {size} bytes, over the {limit} bytes a \
             bundle carries of them; `sticky new --carry` goes on in a new session with a \
             recap, which exports"
        );
    }
    Ok(File {
        path: path.clone(),
        size,
        sha256,
        rows: *rows,
    })
}

/// Appends the bytes of `file` from `source` as `files/<path>`: as many as were hashed, and an
/// error if the file has changed size since (a bundle never holds other bytes than its
/// manifest lists).
fn append_file<W: Write>(
    archive: &mut tar::Builder<W>,
    file: &File,
    source: &Source,
) -> Result<()> {
    let mut counted = Counted {
        inner: source.open()?.take(file.size),
        count: 0,
    };
    append(
        archive,
        &format!("{FILES}/{}", file.path),
        file.size,
        &mut counted,
    )?;
    if counted.count != file.size {
        bail!(
            "{} changed while it was exported (is the agent running on this session outside \
             sticky?); export again",
            file.path
        );
    }
    Ok(())
}

/// The size and hex SHA-256 of a file's bytes.
fn digest(source: &Source) -> Result<(u64, String)> {
    let mut hasher = Sha256::new();
    let size = io::copy(&mut source.open()?, &mut HashWriter(&mut hasher))?;
    Ok((size, hex(&hasher.finalize())))
}

/// One regular file entry of `size` bytes, private to the user.
fn append<W: Write>(
    archive: &mut tar::Builder<W>,
    path: &str,
    size: u64,
    data: &mut dyn Read,
) -> Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_size(size);
    header.set_mode(0o600);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_mtime(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs()),
    );
    archive
        .append_data(&mut header, path, data)
        .with_context(|| format!("cannot write {path} into the bundle"))
}

/// A hasher as a writer.
pub(super) struct HashWriter<'a>(pub &'a mut Sha256);

impl Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A reader that counts what it gave.
struct Counted<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.count += read as u64;
        Ok(read)
    }
}
