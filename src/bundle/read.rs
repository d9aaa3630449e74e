//! Reading a bundle: the manifest checked whole, then each file streamed into a private
//! staging directory while it is hashed (and its old directory rewritten), nothing placed until
//! every byte is proved.

use std::cell::Cell;
use std::collections::HashSet;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use sha2::{Digest, Sha256};

use super::rewrite::{LineTooLong, Rewriter};
use super::{FILES, FORMAT, Limits, MANIFEST, Manifest};
use crate::agent::relocation::{Rewrite, hex};
use crate::store::{MAX_ANSWER, WholeTurn};

/// A verified bundle: its manifest and its files staged in a private directory (removed when
/// this value drops).
#[derive(Debug)]
pub struct Staged {
    /// The manifest.
    pub manifest: Manifest,
    /// The staged copy of each file of the manifest, in its order (rewritten).
    pub files: Vec<PathBuf>,
    _dir: tempfile::TempDir,
}

/// What the caller decides once it has seen the manifest: the rewrites of each file, in the
/// manifest's order, and the directory to stage them in.
pub type Inspected = (Vec<Vec<Rewrite>>, PathBuf);

/// Reads and verifies the bundle on `input`. `inspect` sees the checked manifest and its size
/// in bytes (which an import adds to the files' when it judges the expansion: a manifest of
/// many turns is written into the database) before any file is staged; it may refuse it, and
/// says how to stage the files (in a new private directory inside the one it returns).
pub fn read(
    input: impl Read,
    limits: Limits,
    inspect: &mut dyn FnMut(&Manifest, u64) -> Result<Inspected>,
) -> Result<Staged> {
    let read_so_far = Cell::new(0);
    let counted = Counted {
        inner: refuse_a_document(input)?,
        count: &read_so_far,
    };
    let mut expansion = limits.expansion.map(|limit| Expanding {
        limit,
        read: &read_so_far,
        staged: 0,
    });
    let decoder =
        zstd::stream::read::Decoder::new(counted).context("cannot start reading the bundle")?;
    let mut archive = tar::Archive::new(decoder);
    let (manifest, files, dir) = {
        // Raw: the tar crate would read a long name or extended header whole, whatever size it
        // declares; `next_entry` caps them first.
        let mut entries = archive.entries().map_err(damaged)?.raw(true);
        let Some((first, name)) = next_entry(&mut entries)? else {
            bail!("the bundle is empty (or not a sticky bundle)");
        };
        let bytes = first.size();
        let manifest = read_manifest(first, &name, limits, &read_so_far)?;
        count_manifest(expansion.as_mut(), bytes)?;
        check(&manifest, limits)?;
        let (rewrites, staging) = inspect(&manifest, bytes)?;
        let dir = tempfile::Builder::new()
            .prefix(".sticky-import-")
            .tempdir_in(&staging)
            .with_context(|| format!("cannot stage the bundle's files in {}", staging.display()))?;
        let files = stage_all(
            &mut entries,
            &manifest,
            (rewrites, dir.path()),
            limits,
            expansion.as_mut(),
        )?;
        if let Some((_, name)) = next_entry(&mut entries)? {
            bail!(
                "the bundle holds {}, which its manifest does not list (nothing was changed)",
                shown(&name)
            );
        }
        (manifest, files, dir)
    };
    end_of_archive(archive.into_inner())?;
    Ok(Staged {
        manifest,
        files,
        _dir: dir,
    })
}

/// The most that may follow the first of the archive's end blocks: tar's second end block and
/// the zeros that pad an archive to a whole record (20 blocks, 10 KiB, as GNU tar and bsdtar
/// write it; sticky's own bundles end after the second block).
const END_PADDING: u64 = 20 * 512;

/// Reads what follows the archive's end: at most [`END_PADDING`] zeros, to the end of the
/// stream, so a cut-off or damaged zstd frame fails its checksum here. More, or anything but
/// zeros, is no tar padding but a crafted (or damaged) bundle, refused after reading one byte
/// past the padding: zstd makes gigabytes of zeros a few KB, and none of them is decompressed.
fn end_of_archive(rest: impl Read) -> Result<()> {
    let mut after = Vec::new();
    rest.take(END_PADDING + 1)
        .read_to_end(&mut after)
        .map_err(damaged)?;
    if after.len() as u64 > END_PADDING || after.iter().any(|byte| *byte != 0) {
        bail!(
            "the bundle is damaged or crafted: its archive ends with more after it than tar's \
             padding (at most {END_PADDING} zero bytes); nothing was changed: export it again"
        );
    }
    Ok(())
}

/// Counts the manifest's `bytes` as the first staged, refused past the expansion's limit.
fn count_manifest(expansion: Option<&mut Expanding<'_>>, bytes: u64) -> Result<()> {
    if let Some(expanding) = expansion {
        expanding.staged = bytes;
        if let Some(why) = expanding.limit.exceeded_so_far(bytes, expanding.read.get()) {
            bail!(why);
        }
    }
    Ok(())
}

/// Stages each file the manifest lists from the next entries, with its `rewrites`, into the
/// staging directory (`dir`, one file named by its index); returns their paths.
fn stage_all<R: Read>(
    entries: &mut tar::Entries<'_, R>,
    manifest: &Manifest,
    (rewrites, dir): (Vec<Vec<Rewrite>>, &Path),
    limits: Limits,
    mut expansion: Option<&mut Expanding<'_>>,
) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for (index, (file, rewrites)) in manifest.files.iter().zip(rewrites).enumerate() {
        let Some((entry, name)) = next_entry(entries)? else {
            bail!(
                "the bundle is truncated: it ends before {} (nothing was changed)",
                file.path
            );
        };
        let staged = dir.join(index.to_string());
        stage(
            entry,
            &name,
            (file, &staged),
            rewrites,
            limits,
            expansion.as_deref_mut(),
        )?;
        files.push(staged);
    }
    Ok(files)
}

/// The most a GNU long name or a PAX extended header may hold: a path is at most a few KiB
/// (`PATH_MAX` is 4 KiB on Linux), and a header declaring gigabytes (which the tar crate would
/// read whole) comes from a crafted bundle.
pub(super) const MAX_EXTENSION: u64 = 64 << 10;

/// The longest name or path a message shows whole; a longer one is cut, with its size.
const SHOWN: usize = 160;

/// The next entry of the raw archive with its name: a GNU long name (`L`) or a PAX extended
/// header (`x`, with `path`) before it names it, each read only when it declares at most
/// [`MAX_EXTENSION`] bytes; a global PAX header (`g`) is read the same way and skipped. A long
/// link name (`K`) is refused (a bundle carries no links), as is a PAX `size` other than the
/// entry's.
fn next_entry<'a, R: Read>(
    entries: &mut tar::Entries<'a, R>,
) -> Result<Option<(tar::Entry<'a, R>, Vec<u8>)>> {
    let mut long_name: Option<Vec<u8>> = None;
    let mut pax_size: Option<u64> = None;
    loop {
        let Some(entry) = entries.next() else {
            if long_name.is_some() || pax_size.is_some() {
                bail!(
                    "the bundle is truncated: it ends after a header naming an entry (nothing \
                     was changed)"
                );
            }
            return Ok(None);
        };
        let mut entry = entry.map_err(damaged)?;
        let kind = entry.header().entry_type();
        let what = match kind.as_byte() {
            b'L' => "GNU long name",
            b'K' => "GNU long link name",
            b'x' => "PAX extended",
            b'g' => "PAX global",
            _ => {
                if let Some(size) = pax_size.filter(|size| *size != entry.size()) {
                    bail!(
                        "the bundle is damaged or crafted: an extended header gives {} a size \
                         of {size} bytes, its own header {} (nothing was changed)",
                        shown(&entry.path_bytes()),
                        entry.size()
                    );
                }
                let name = long_name.unwrap_or_else(|| entry.path_bytes().into_owned());
                return Ok(Some((entry, name)));
            }
        };
        let size = entry.size();
        if size > MAX_EXTENSION {
            bail!(
                "the bundle is damaged or crafted: it has a {what} header of {size} bytes, where \
                 a name takes at most {MAX_EXTENSION} (nothing was changed)"
            );
        }
        if kind.is_gnu_longlink() {
            bail!(
                "the bundle holds a link name; sticky carries only regular files (nothing was \
                 changed)"
            );
        }
        read_extension(&mut entry, (what, size), &mut long_name, &mut pax_size)?;
    }
}

/// Reads the extended header `entry` (a GNU long name or a PAX header, `what`, `size` bytes):
/// the name it gives the next entry into `long_name`, the size a PAX header gives into
/// `pax_size`.
fn read_extension<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    (what, size): (&str, u64),
    long_name: &mut Option<Vec<u8>>,
    pax_size: &mut Option<u64>,
) -> Result<()> {
    let kind = entry.header().entry_type();
    let mut bytes = Vec::new();
    entry.read_to_end(&mut bytes).map_err(damaged)?;
    if bytes.len() as u64 != size {
        bail!("the bundle is truncated in a {what} header (nothing was changed)");
    }
    if kind.is_gnu_longname() {
        while bytes.last() == Some(&0) {
            bytes.pop();
        }
        *long_name = Some(bytes);
    } else if kind.is_pax_local_extensions() {
        for extension in tar::PaxExtensions::new(&bytes) {
            let extension = extension.map_err(damaged)?;
            match extension.key_bytes() {
                b"path" => *long_name = Some(extension.value_bytes().to_vec()),
                b"size" => {
                    let size = extension.value().ok().and_then(|v| v.parse().ok());
                    let Some(size) = size else {
                        bail!(
                            "the bundle is damaged or crafted: an extended header gives a \
                             size that is not a number (nothing was changed)"
                        );
                    };
                    *pax_size = Some(size);
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// A name or path from a bundle as a message shows it: lossy UTF-8, cut to [`SHOWN`]
/// characters with its size when longer (a crafted one may be 64 KiB), its control characters
/// escaped.
fn shown(name: &[u8]) -> String {
    let text = String::from_utf8_lossy(name);
    if text.chars().count() <= SHOWN {
        return crate::msg::escape(&text).into_owned();
    }
    let cut: String = text.chars().take(SHOWN).collect();
    format!("{}… ({} bytes)", crate::msg::escape(&cut), name.len())
}

/// `input`, given back whole, unless it starts as a conversation exported to read (`export
/// --format markdown` writes an HTML comment naming it, `<!-- sticky export: markdown -->`, and
/// an older sticky `# `; `--format json` writes `{`), which is no bundle: said as such, with
/// the way to a bundle, rather than as a damaged one. A bundle starts with zstd's magic number.
fn refuse_a_document(mut input: impl Read) -> Result<impl Read> {
    let mut head = Vec::with_capacity(4);
    input
        .by_ref()
        .take(4)
        .read_to_end(&mut head)
        .context("cannot read the bundle")?;
    let format = match head.as_slice() {
        [b'<', b'!', b'-', b'-'] | [b'#', b' ', ..] => Some("markdown"),
        [b'{', ..] => Some("json"),
        _ => None,
    };
    if let Some(format) = format {
        bail!(
            "this is a conversation exported to read (`sticky export --format {format}`), not \
             a bundle: import takes the file `sticky export -o FILE` writes (the default \
             format); nothing was changed"
        );
    }
    Ok(io::Cursor::new(head).chain(input))
}

/// A read error of the archive or the compressed stream: a bundle cut off or damaged.
#[allow(clippy::needless_pass_by_value, reason = "it is given to map_err")]
fn damaged(error: io::Error) -> anyhow::Error {
    // The archive library's words quote the bundle's own bytes (an entry's path, a header
    // field): a crafted bundle must not write control sequences to the terminal through them.
    anyhow::anyhow!(
        "the bundle is truncated or damaged ({}); nothing was changed: export it again",
        crate::msg::escape(&error.to_string())
    )
}

fn read_manifest<R: Read>(
    mut entry: tar::Entry<'_, R>,
    name: &[u8],
    limits: Limits,
    read_so_far: &Cell<u64>,
) -> Result<Manifest> {
    if name != MANIFEST.as_bytes() {
        bail!(
            "not a sticky bundle: its first entry is {}, not {MANIFEST}",
            shown(name)
        );
    }
    if entry.header().entry_type() != tar::EntryType::Regular {
        bail!("not a sticky bundle: its {MANIFEST} is not a regular file");
    }
    let size = entry.size();
    if size > limits.manifest {
        bail!(
            "the bundle's manifest is {size} bytes, over the limit of {} bytes",
            limits.manifest
        );
    }
    // The entry gives no more than its header's size, checked above.
    let mut text = Vec::new();
    if let Some(why) = limits
        .manifest_expansion
        .zip(limits.bundle_size)
        .and_then(|(limit, bundle)| limit.exceeded(size, Some(bundle)))
    {
        bail!(why);
    }
    entry.read_to_end(&mut text).map_err(damaged)?;
    // Through a pipe, the bytes it took to reach the manifest's end (which it is parsed after).
    if let Some(why) = limits
        .manifest_expansion
        .filter(|_| limits.bundle_size.is_none())
        .and_then(|limit| limit.exceeded_so_far(size, read_so_far.get()))
    {
        bail!(why);
    }
    // Only the format first (every other field skipped, nothing kept), then the fields as this
    // format has them: never the manifest twice in memory as a generic JSON tree.
    let version: Version =
        serde_json::from_slice(&text).context("the bundle's manifest is not JSON")?;
    match version.format.as_ref().and_then(serde_json::Value::as_u64) {
        Some(format) if format == u64::from(FORMAT) => {}
        Some(format) if format > u64::from(FORMAT) => bail!(
            "the bundle has format {format}, newer than this sticky reads ({FORMAT}); upgrade \
             sticky to import it"
        ),
        Some(format) => bail!(
            "the bundle has format {format}, which this sticky does not read ({FORMAT}); export \
             it again with this sticky's version"
        ),
        None => bail!("not a sticky bundle: its manifest has no format version"),
    }
    serde_json::from_slice(&text).context("the bundle's manifest is not one sticky wrote")
}

/// The one field of a manifest read before its format is known.
#[derive(serde::Deserialize)]
struct Version {
    format: Option<serde_json::Value>,
}

/// Checks what the manifest says before anything is written: paths, sizes, the live session,
/// and that turns and lineage refer to sessions it has.
fn check(manifest: &Manifest, limits: Limits) -> Result<()> {
    if manifest.files.len() > limits.files {
        bail!(
            "the bundle lists {} files, over the limit of {}",
            manifest.files.len(),
            limits.files
        );
    }
    check_files(&manifest.files, limits)?;
    let Some(live) = manifest.live() else {
        bail!("the bundle's thread has no live session to import");
    };
    if live.agent_session_id.is_none() || live.agent != manifest.agent.name {
        bail!("the bundle's live session names no agent session to resume");
    }
    let ids: HashSet<i64> = manifest.sessions.iter().map(|s| s.id).collect();
    let dangling = manifest
        .turns
        .iter()
        .map(|t| t.row.session_id)
        .chain(manifest.sessions.iter().filter_map(|s| s.rotated_from));
    for id in dangling {
        if !ids.contains(&id) {
            bail!("the bundle refers to a session #{id} it does not hold");
        }
    }
    manifest.turns.iter().enumerate().try_for_each(check_turn)
}

/// Checks each file the manifest lists (its path, size and checksum) and their total size.
fn check_files(files: &[super::File], limits: Limits) -> Result<()> {
    let mut seen = HashSet::new();
    let mut total = 0_u64;
    for file in files {
        check_path(&file.path)?;
        if !seen.insert(file.path.as_str()) {
            bail!("the bundle lists {} twice", file.path);
        }
        if file.size > limits.file {
            bail!(
                "the bundle's file {} is {} bytes, over the limit of {} bytes",
                file.path,
                file.size,
                limits.file
            );
        }
        if file.rows && file.size > limits.rows {
            bail!(
                "the bundle's rows {} are {} bytes, over the limit of {} bytes",
                file.path,
                file.size,
                limits.rows
            );
        }
        total = total.saturating_add(file.size);
        if file.sha256.len() != 64 || !file.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            bail!("the bundle's checksum of {} is not a SHA-256", file.path);
        }
    }
    if total > limits.total {
        bail!(
            "the bundle's files add up to {total} bytes, over the limit of {} bytes",
            limits.total
        );
    }
    Ok(())
}

/// The most of the agent's reported totals a turn may carry: they are a few figures as JSON.
pub(super) const MAX_REPORTED_TOTALS: usize = 64 * 1024;

/// A turn's kept answer must be one the store would keep (at most [`MAX_ANSWER`] bytes, of a
/// whole answer at least that long), its figures sizes, not negative.
fn check_turn((index, turn): (usize, &WholeTurn)) -> Result<()> {
    let number = index + 1;
    if let Some(answer) = &turn.answer {
        let len = answer.text.len();
        if len > MAX_ANSWER {
            bail!(
                "the bundle's turn {number} carries an answer of {len} bytes, over the \
                 {MAX_ANSWER} bytes sticky keeps of one"
            );
        }
        if usize::try_from(answer.bytes).map_or(true, |bytes| bytes < len) {
            bail!("the bundle's turn {number} says its answer is smaller than the text it carries");
        }
        // The store cuts an answer at MAX_ANSWER bytes, on a character boundary (at most 3
        // bytes before it): only such a text stands for a longer answer. Any other size is not
        // what sticky recorded, and `show` would repeat it as the answer's.
        if usize::try_from(answer.bytes).is_ok_and(|bytes| bytes > len) && len + 4 <= MAX_ANSWER {
            bail!(
                "the bundle's turn {number} says its answer was {} bytes, but carries all of it \
                 ({len} bytes; sticky keeps the first {MAX_ANSWER} bytes of a longer one)",
                answer.bytes
            );
        }
    }
    if turn
        .reported_totals
        .as_ref()
        .is_some_and(|totals| totals.len() > MAX_REPORTED_TOTALS)
    {
        bail!(
            "the bundle's turn {number} carries reported totals over {MAX_REPORTED_TOTALS} bytes"
        );
    }
    if turn
        .restore
        .is_some_and(|restored| restored.files < 0 || restored.bytes < 0)
    {
        bail!("the bundle's turn {number} restored a negative number of files or bytes");
    }
    Ok(())
}

/// The longest path a bundle may name: `PATH_MAX` on Linux.
const MAX_PATH: usize = 4096;

/// A carried path must be plain and relative: no root, no `..`, no `.`, UTF-8, at most
/// [`MAX_PATH`] bytes, each of its names at most [`super::MAX_NAME`] bytes.
fn check_path(path: &str) -> Result<()> {
    if path.len() > MAX_PATH {
        bail!(
            "the bundle names a path of {} bytes ({}), longer than a file system takes \
             (nothing was changed)",
            path.len(),
            shown(path.as_bytes())
        );
    }
    if let Some(name) = super::long_name(Path::new(path)) {
        bail!(
            "the bundle names the path {}, whose name {} is {} bytes, longer than a file system \
             takes ({} at most): sticky exports no such file, so the bundle was crafted or \
             damaged; export it again from the project it came from (nothing was changed)",
            shown(path.as_bytes()),
            shown(name.as_encoded_bytes()),
            name.len(),
            super::MAX_NAME
        );
    }
    let plain = !path.is_empty()
        && Path::new(path)
            .components()
            .all(|component| matches!(component, Component::Normal(_)))
        && !path.contains('\0');
    if !plain {
        bail!(
            "the bundle names the path {path:?}, which is absolute or leaves its directory \
             (nothing was changed)"
        );
    }
    if crate::agent::relocation::never_moved(Path::new(path)) {
        bail!("the bundle holds {path}, a credentials or settings file sticky never carries");
    }
    Ok(())
}

/// Checks that `entry`, named `name`, is the regular file the manifest lists as `file`, of its
/// size.
fn check_entry<R: Read>(entry: &tar::Entry<'_, R>, name: &[u8], file: &super::File) -> Result<()> {
    let expected = format!("{FILES}/{}", file.path);
    let matches = name == expected.as_bytes();
    let name = shown(name);
    let kind = entry.header().entry_type();
    if kind.is_symlink() || kind.is_hard_link() {
        bail!(
            "the bundle holds a link ({name}); sticky carries only regular files (nothing was changed)"
        );
    }
    if kind != tar::EntryType::Regular {
        bail!("the bundle holds {name}, which is not a regular file (nothing was changed)");
    }
    if !matches {
        bail!(
            "the bundle holds {name} where its manifest lists files/{} (nothing was changed)",
            file.path
        );
    }
    if entry.size() != file.size {
        bail!(
            "the bundle's {} is {} bytes where its manifest says {} (nothing was changed)",
            file.path,
            entry.size(),
            file.size
        );
    }
    Ok(())
}

/// Streams `entry` (the manifest's `file`) into `staged`, hashing what was in the bundle and
/// writing it rewritten.
fn stage<R: Read>(
    mut entry: tar::Entry<'_, R>,
    name: &[u8],
    (file, staged): (&super::File, &Path),
    rewrites: Vec<Rewrite>,
    limits: Limits,
    expansion: Option<&mut Expanding<'_>>,
) -> Result<()> {
    check_entry(&entry, name, file)?;
    let out = super::place::create_private(staged)?;
    let mut hasher = Sha256::new();
    let mut writer =
        Rewriter::new(BufWriter::with_capacity(1 << 20, out), rewrites).max_line(limits.line);
    let copied = match copy_hashing(&mut entry, &mut hasher, &mut writer, expansion) {
        Ok(copied) => copied,
        Err(Copying::Read(error)) => return Err(damaged(error)),
        Err(Copying::Expanding(why)) => bail!(why),
        Err(Copying::Write(error)) => {
            if let Some(long) = error
                .get_ref()
                .and_then(|e| e.downcast_ref::<LineTooLong>())
            {
                bail!(
                    "the bundle's {} cannot be imported: {long} (nothing was changed)",
                    file.path
                );
            }
            return Err(error).with_context(|| format!("cannot stage {}", staged.display()));
        }
    };
    writer
        .finish()
        .and_then(|mut out| out.flush())
        .with_context(|| format!("cannot stage {}", staged.display()))?;
    if copied != file.size {
        bail!(
            "the bundle is truncated: {} holds {copied} of its {} bytes (nothing was changed)",
            file.path,
            file.size
        );
    }
    if hex(&hasher.finalize()) != file.sha256 {
        bail!(
            "the bundle is damaged: {} does not match its checksum (nothing was changed); \
             export it again",
            file.path
        );
    }
    Ok(())
}

/// Which side of a copy failed: reading the bundle (it is damaged) or writing the staged file
/// (a full disk, a line too long to rewrite).
enum Copying {
    Read(io::Error),
    Write(io::Error),
    Expanding(String),
}

/// The files staged so far against the bundle's bytes read so far ([`Limits::expansion`]).
struct Expanding<'a> {
    limit: super::Expansion,
    read: &'a Cell<u64>,
    staged: u64,
}

/// A reader that counts what it gave into a cell another reader above it does not hide.
struct Counted<'a, R> {
    inner: R,
    count: &'a Cell<u64>,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.count.set(self.count.get() + read as u64);
        Ok(read)
    }
}

/// Copies `from` into `to`, hashing every byte, within `expansion` when given; returns how
/// many.
fn copy_hashing(
    from: &mut dyn Read,
    hasher: &mut Sha256,
    to: &mut dyn Write,
    mut expansion: Option<&mut Expanding<'_>>,
) -> Result<u64, Copying> {
    let mut buffer = vec![0; 1 << 20];
    let mut total = 0;
    loop {
        let read = match from.read(&mut buffer) {
            Ok(0) => return Ok(total),
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Copying::Read(e)),
        };
        if let Some(expanding) = expansion.as_deref_mut() {
            expanding.staged += read as u64;
            let so_far = (expanding.staged, expanding.read.get());
            if let Some(why) = expanding.limit.exceeded_so_far(so_far.0, so_far.1) {
                return Err(Copying::Expanding(why));
            }
        }
        hasher.update(&buffer[..read]);
        to.write_all(&buffer[..read]).map_err(Copying::Write)?;
        total += read as u64;
    }
}
