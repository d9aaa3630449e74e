//! The check before a turn resumes a session: the agent's own files of it against the vault's
//! copies, which hold every turn sticky ran on it. An agent's file that is behind its copy (a
//! shell whose `CLAUDE_CONFIG_DIR` or `CODEX_HOME` points at another agent home than the last
//! turn's, a home restored from an older backup) would resume the conversation with its latest
//! turns forgotten, and the agent would answer as if they never happened (review 23, M1).
//!
//! An appended file (a transcript) that is the first bytes of its copy is behind it: the copy,
//! proved by its size and SHA-256, is put back over it, which loses nothing of the agent's. One
//! that neither holds its copy nor is its beginning went another way (turns with the agent run
//! by hand in one home, sticky's in another): nothing is changed, and the turn is refused. A
//! rewritten file is judged by its records where the adapter reads them (Gemini's chat file:
//! its messages' IDs), the same way; elsewhere one older than the one copied, with other bytes,
//! is put back. Files the agent shares between sessions, and sessions kept as database rows,
//! are left alone.

use std::fs::File;
use std::io::{self, Read, Seek};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::restore::{Proved, kept_for, stage_over};
use super::{Entry, Fnv, Vault, open_copy, read_manifest};
use crate::agent::{Adapter, Keeping};
use crate::confined::{Access, Dir};

/// How the agent's files of a session stood against the vault's copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaughtUp {
    /// Each file holds its copy, goes on from it, or has no copy to compare with.
    Holds,
    /// Files that were behind their copies got the copies back: how many, and their bytes.
    Restored(usize, u64),
    /// The agent's file at this path is neither its copy nor the copy's beginning.
    Diverged(PathBuf),
}

/// What one agent file is to its copy.
enum Stands {
    Holds,
    Behind(File),
    Diverged,
}

impl Vault {
    /// Checks agent session `id`'s files (run in `directory`, the agent's home under the user's
    /// `home`) against the vault's copies before a turn resumes it, and puts back, proved, the
    /// copies of those that are behind (see the module). `whole` says whether the copy holds
    /// every turn on record, asked only when a file is not its copy: one that lacks turns
    /// proves nothing of them, and nothing is changed.
    pub fn catch_up(
        &self,
        adapter: &dyn Adapter,
        home: &Path,
        id: &str,
        directory: &Path,
        mut whole: impl FnMut() -> Result<bool>,
    ) -> Result<CaughtUp> {
        let Some(session) = self.open_session(adapter.name(), id)? else {
            return Ok(CaughtUp::Holds);
        };
        let Some(manifest) = read_manifest(&session)? else {
            return Ok(CaughtUp::Holds);
        };
        let Some(root) = adapter.agent_home(home) else {
            return Ok(CaughtUp::Holds);
        };
        let top = match Dir::open_top(&root) {
            Ok(top) => top,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(CaughtUp::Holds),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", root.display())),
        };
        let mut behind = Vec::new();
        for entry in &manifest.files {
            let compared = entry.sha256.is_some()
                && entry.keeping() != Keeping::Shared
                && adapter.restorable(&entry.relative, id)
                && kept_for(adapter, &root, &entry.relative, id, directory);
            if !compared {
                continue;
            }
            super::ensure_plain(&entry.relative)?;
            // A file the agent lacks is the agent's to report lost: the restore's case.
            let Some(theirs) = open_theirs(&top, &entry.relative)? else {
                continue;
            };
            match stands(adapter, &theirs, entry, &session)? {
                Stands::Holds => {}
                Stands::Behind(copy) => behind.push((entry, copy)),
                Stands::Diverged if whole()? => {
                    return Ok(CaughtUp::Diverged(root.join(&entry.relative)));
                }
                Stands::Diverged => return Ok(CaughtUp::Holds),
            }
        }
        if behind.is_empty() || !whole()? {
            return Ok(CaughtUp::Holds);
        }
        let proved: Vec<Proved> = stage_over(&root, behind)?;
        let bytes = proved.iter().map(|file| file.len).sum();
        for file in &proved {
            file.put_in_place()?;
        }
        Ok(CaughtUp::Restored(proved.len(), bytes))
    }
}

/// What the agent's file `theirs` is to the copy `entry` records (in `session`).
fn stands(adapter: &dyn Adapter, theirs: &File, entry: &Entry, session: &Dir) -> Result<Stands> {
    let meta = theirs.metadata()?;
    let len = meta.len();
    if entry.keeping() != Keeping::Append {
        return rewritten_stands(adapter, theirs, &meta, entry, session);
    }
    if len >= entry.len && super::copy::sample_hash(theirs, entry.len)? == entry.hash {
        return Ok(Stands::Holds);
    }
    let Some(copy) = open_copy(session, &entry.relative)? else {
        return Ok(Stands::Holds);
    };
    // Shorter, and the copy's beginning: behind. Anything else went another way.
    if len < entry.len && begins(&copy, theirs, len) {
        return Ok(Stands::Behind(copy));
    }
    Ok(Stands::Diverged)
}

/// [`stands`] for a file the agent rewrites. Where the adapter reads its records
/// ([`Adapter::record_ids`]: Gemini's chat file), they decide: the copy's beginning is behind,
/// the copy's continuation holds, anything else went another way; a file's time says nothing of
/// who wrote it last (a backup copied without its times is newer than the vault's copy: review
/// 25, M1). Elsewhere a file with other bytes than the copy is behind when it is older than the
/// one copied, and the agent's own later writing when newer.
fn rewritten_stands(
    adapter: &dyn Adapter,
    theirs: &File,
    meta: &std::fs::Metadata,
    entry: &Entry,
    session: &Dir,
) -> Result<Stands> {
    let mtime = super::copy::mtime_ns(meta);
    let unchanged = meta.len() == entry.len
        && mtime == entry.mtime_ns
        && std::os::unix::fs::MetadataExt::ino(meta) == entry.inode;
    if unchanged {
        return Ok(Stands::Holds);
    }
    let mut bytes = Vec::new();
    (&*theirs).read_to_end(&mut bytes)?;
    let mut hash = Fnv::new();
    hash.write(&bytes);
    if hash.0 == entry.hash && bytes.len() as u64 == entry.len {
        return Ok(Stands::Holds);
    }
    let Some(mut copy) = open_copy(session, &entry.relative)? else {
        return Ok(Stands::Holds);
    };
    let Some(ours) = adapter.record_ids(&entry.relative, &bytes) else {
        return Ok(if mtime >= entry.mtime_ns {
            Stands::Holds
        } else {
            Stands::Behind(copy)
        });
    };
    let mut kept = Vec::new();
    Read::by_ref(&mut copy)
        .take(entry.len)
        .read_to_end(&mut kept)?;
    let kept = adapter
        .record_ids(&entry.relative, &kept)
        .unwrap_or_default();
    Ok(if ours.len() < kept.len() && kept.starts_with(&ours) {
        copy.seek(io::SeekFrom::Start(0))?;
        Stands::Behind(copy)
    } else if ours.starts_with(&kept) {
        Stands::Holds
    } else {
        Stands::Diverged
    })
}

/// The agent's file at `relative` under its home `top`, never through a link; `None` when it
/// has none.
fn open_theirs(top: &Dir, relative: &Path) -> Result<Option<File>> {
    match top.open_file(relative, Access::Read) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => {
            Err(e).with_context(|| format!("cannot read {}", top.path().join(relative).display()))
        }
    }
}

/// Whether `copy`'s first `len` bytes are `theirs`'s.
fn begins(copy: &File, theirs: &File, len: u64) -> bool {
    const CHUNK: usize = 1 << 16;
    let (mut a, mut b) = (vec![0; CHUNK], vec![0; CHUNK]);
    let mut at = 0;
    while at < len {
        let n = usize::try_from(len - at).map_or(CHUNK, |left| left.min(CHUNK));
        let read = |file: &File, buffer: &mut [u8]| file.read_exact_at(buffer, at);
        if read(copy, &mut a[..n]).is_err() || read(theirs, &mut b[..n]).is_err() {
            return false;
        }
        if a[..n] != b[..n] {
            return false;
        }
        at += n as u64;
    }
    true
}
