//! Placing a session's staged files where the agent on this machine looks for them: every
//! destination checked first, then each file renamed into place, and every placed file removed
//! again should a later step fail, so an import either happens whole or leaves things as they
//! were.
//!
//! Below the agent's home (trusted as it stands: a link the user made to it is theirs) every
//! path goes through `crate::confined`, so no link there leads a placed file elsewhere (issue
//! 23). What is placed is the staged file itself, renamed (`renameat`) from the private staging
//! directory into its place: the very bytes `read.rs` hashed and verified, never read again
//! through a path (a copy only when the staging directory is on another file system, read from
//! the staging directory's descriptor).

use std::ffi::{OsStr, OsString};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::rewrite::Rewriter;
use crate::agent::relocation::{MovingFile, Relocate, Rewrite, Stored};
use crate::confined::{Access, Dir, Kind};
use crate::exit::StickyError;

/// Where a session moves: its agent, that agent's home here, the directories, the session.
pub struct Move<'a> {
    /// How the agent carries its sessions.
    pub relocate: &'a dyn Relocate,
    /// The agent's home on this machine.
    pub agent_home: PathBuf,
    /// The directory the session ran in.
    pub from: PathBuf,
    /// The directory it runs in from now on.
    pub to: PathBuf,
    /// The agent's session ID.
    pub id: String,
}

/// One file to place: where it is staged, where it goes, whether it holds rows.
#[derive(Debug, Clone)]
pub struct Staging {
    /// The staged (rewritten) copy.
    pub staged: PathBuf,
    /// Its destination, relative to the agent's home.
    pub relative: PathBuf,
    /// Whether it holds database rows rather than a file.
    pub rows: bool,
}

/// Files placed so far (each by its directory, opened, and its name); [`Placed::undo`] removes
/// them.
#[derive(Debug, Default)]
pub struct Placed {
    files: Vec<(Dir, OsString)>,
}

impl Placed {
    /// Removes every file placed (a later step failed).
    pub fn undo(self) {
        for (dir, name) in self.files {
            let _ = dir.remove_file(&name);
        }
    }
}

impl Move<'_> {
    /// Removes the old place of each of `files` this move placed anew (`stagings`, in the same
    /// order; best effort: the session runs from its new place whatever is left there).
    pub fn remove_moved(&self, files: &[MovingFile], stagings: &[Staging]) {
        for (file, staged) in files.iter().zip(stagings) {
            if let Stored::File(path) = &file.stored {
                if *path != self.agent_home.join(&staged.relative) {
                    let _ = remove_moved(&self.agent_home, &file.relative);
                }
            }
        }
    }

    /// The destination of `relative` (a path of the session's files where it ran), relative to
    /// the agent's home; refuses a path that is not one of the session's own files.
    pub fn destination(&self, relative: &Path) -> Result<PathBuf> {
        self.relocate
            .place(&self.agent_home, relative, &self.id, &self.from, &self.to)
            .map_err(|error| {
                StickyError::Usage(format!(
                    "{error:#}: sticky places only the session's own files (nothing was changed)"
                ))
                .into()
            })
    }

    /// What inside `relative` must be rewritten for the new directory.
    pub fn rewrites(&self, relative: &Path) -> Vec<Rewrite> {
        self.relocate.rewrites(relative, &self.from, &self.to)
    }

    /// The directory to stage files in: inside the first existing ancestor of the agent's
    /// home, so a staged file is renamed into place on the same file system.
    pub fn staging_root(&self) -> PathBuf {
        self.agent_home
            .ancestors()
            .find(|dir| dir.is_dir())
            .unwrap_or(Path::new("/tmp"))
            .to_owned()
    }

    /// Refuses a bundle whose files (`total` bytes, as its manifest declares them) the file
    /// systems of the staging directory and of the agent's home have no room for, with
    /// [`ROOM_MARGIN`] to spare: zstd makes gigabytes of one byte a few kilobytes, and a small
    /// bundle must not fill the disk (issue 23) before its checksum is even known to be wrong.
    pub fn check_room(&self, total: u64) -> Result<()> {
        let staging = self.staging_root();
        let home = self
            .agent_home
            .ancestors()
            .find(|dir| dir.is_dir())
            .unwrap_or(&staging)
            .to_owned();
        for dir in [staging, home] {
            room(&dir, total)?;
        }
        Ok(())
    }

    /// Places `files`: refuses (before moving anything), unless `replace` (`sticky relocate`,
    /// moving the session it has), a destination holding bytes the staged file does not begin
    /// with, then renames each staged file into place and inserts the rows, then lets the agent
    /// register the new directory.
    pub fn place(&self, files: &[Staging], replace: bool) -> Result<Placed> {
        if !replace {
            self.refuse_held(files)?;
        }
        let mut placed = Placed::default();
        let done = self.put(files, replace, &mut placed);
        match done {
            Ok(()) => Ok(placed),
            Err(error) => {
                placed.undo();
                Err(error)
            }
        }
    }

    /// Refuses, as [`Move::place`] does first, files whose destinations hold something their
    /// staged copies do not begin with: for a caller that checks before it makes anything of
    /// its own (import, before its lock makes the state directory).
    pub fn refuse_holding_more(&self, files: &[Staging]) -> Result<()> {
        self.refuse_held(files)
    }

    /// Refuses an import that would leave this HOME's agent with the session under another
    /// directory as well as at `destinations`: it resumes a session by its ID alone, so the
    /// project there and this one would both resume it, each seeing the other's turns.
    pub fn refuse_shared(&self, destinations: &[PathBuf]) -> Result<()> {
        let found =
            self.relocate
                .elsewhere(&self.agent_home, &self.id, (destinations, &self.to))?;
        let Some(first) = found.first() else {
            return Ok(());
        };
        let (agent, id) = (self.relocate.name(), &self.id);
        Err(StickyError::Usage(format!(
            "this HOME has {agent} session {id} already, for another directory ({}), and {agent} \
            resumes a session by its ID alone: imported here, two projects would resume one \
            session, each seeing the other's turns (import --replace does not change that); go \
            on with it in the project that has it (a copy of that project gets a session of its \
            own with `sticky new --carry`), or import the bundle in another HOME or on another \
            machine (nothing was changed)",
            self.agent_home.join(first).display()
        ))
        .into())
    }

    /// Refuses files whose destinations hold something their staged copies do not begin with.
    /// A file the agent rewrites (Copilot's `workspace.yaml`: its timestamps) is judged by the
    /// session's appended files instead: when they are all here and the bundle's extend them,
    /// it is a newer export of the session placed before, and the rewritten files are its own.
    fn refuse_held(&self, files: &[Staging]) -> Result<()> {
        let mut held = Vec::new();
        for file in files.iter().filter(|file| !file.rows) {
            held.push((file, self.holding(file)?));
        }
        let appended: Vec<_> = held
            .iter()
            .filter(|(file, _)| self.relocate.appended(&file.relative))
            .collect();
        let newer = !appended.is_empty()
            && appended
                .iter()
                .all(|(_, holding)| *holding == Holding::Extended);
        for (file, holding) in &held {
            let destination = self.agent_home.join(&file.relative);
            let why = match holding {
                Holding::Absent | Holding::Extended => continue,
                _ if newer && !self.relocate.appended(&file.relative) => continue,
                Holding::Same => self.same_elsewhere(&destination),
                Holding::More => self.taken(&destination),
            };
            return Err(StickyError::Usage(why).into());
        }
        Ok(())
    }

    /// Why `destination`, the session's same turns as they run in the bundle's own directory,
    /// stops the import: an agent that keeps a session by its ID alone has one place for it in
    /// a HOME.
    fn same_elsewhere(&self, destination: &Path) -> String {
        let (agent, id) = (self.relocate.name(), &self.id);
        format!(
            "{} holds {agent} session {id} as it runs in {}, the same turns as the bundle's: \
            {agent} keeps a session by its ID alone, so this HOME has it for that directory \
            already, and one session cannot run in two directories (each would see the other's \
            turns): go on with it there, or import the bundle in another HOME or on another \
            machine (nothing was changed)",
            destination.display(),
            self.from.display()
        )
    }

    /// Why `destination`, holding bytes the bundle's copy lacks, stops the import, and the way
    /// out. An agent that keeps a session under its directory's name has it there for this
    /// directory, with turns taken since the export; one that keys a session by its ID alone
    /// (Codex, Copilot) has it in one place per HOME, so it may be another project's live
    /// session. Either way overwriting it would lose those turns, `--replace` or not.
    fn taken(&self, destination: &Path) -> String {
        let (agent, id) = (self.relocate.name(), &self.id);
        if self.relocate.encoded_projects().is_some() {
            return format!(
                "{} holds {agent} session {id} with turns the bundle lacks (taken here after the \
                bundle was exported): sticky does not overwrite them, --replace or not; go on \
                with the session here as it is, or import a bundle exported since (nothing was \
                changed)",
                destination.display()
            );
        }
        format!(
            "{} holds what the bundle lacks: this HOME has {agent} session {id} already, and \
            {agent} keeps a session by its ID alone, so that is the session of another project \
            (perhaps the one this bundle came from) or holds turns taken after the export; one \
            session cannot run in two directories, and sticky does not overwrite turns \
            (--replace or not): go on with it there, or import the bundle in another HOME or on \
            another machine (nothing was changed)",
            destination.display()
        )
    }

    /// What the destination of `file` holds against its staged bytes: nothing, a file they
    /// begin with (identical, or one the bundle's copy only adds to: placed over), the same
    /// bytes but for the bundle's own directory, or more (other content, a link, anything not a
    /// regular file); a link on the way is an error.
    fn holding(&self, file: &Staging) -> Result<Holding> {
        let top = match Dir::open_top(&self.agent_home) {
            Ok(top) => top,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Holding::Absent),
            Err(e) => return Err(e.into()),
        };
        let (dir, name) = match top.parent_of(&file.relative, false) {
            Ok(found) => found,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Holding::Absent),
            Err(e) => return Err(refuse_link(e)),
        };
        match dir.kind(name)? {
            None => return Ok(Holding::Absent),
            Some(Kind::File) => {}
            Some(_) => return Ok(Holding::More),
        }
        if begins_with(
            &mut open_staged(&file.staged)?,
            &mut dir.open_here(name, Access::Read)?,
        ) {
            return Ok(Holding::Extended);
        }
        // Rewritten for this directory as the bundle's copy was, does the file read as its
        // beginning? Then it is the same session where the bundle came from.
        let mut sink = PrefixOf {
            whole: BufReader::new(open_staged(&file.staged)?),
            same: true,
        };
        let mut rewriter = Rewriter::new(&mut sink, self.rewrites(&file.relative));
        let copied = io::copy(
            &mut BufReader::new(dir.open_here(name, Access::Read)?),
            &mut rewriter,
        )
        .and_then(|_| rewriter.finish().map(|_| ()));
        Ok(if copied.is_ok() && sink.same {
            Holding::Same
        } else {
            Holding::More
        })
    }

    fn put(&self, files: &[Staging], replace: bool, placed: &mut Placed) -> Result<()> {
        let top = Dir::create_top(&self.agent_home)
            .with_context(|| format!("cannot create {}", self.agent_home.display()))?;
        for file in files {
            if file.rows {
                self.relocate.insert_rows(
                    &self.agent_home,
                    &mut open_staged(&file.staged)?,
                    &self.id,
                    (&self.from, &self.to),
                    replace,
                )?;
                continue;
            }
            let (dir, name) = top
                .parent_of(&file.relative, true)
                .map_err(refuse_link)
                .with_context(|| format!("cannot place {}", file.relative.display()))?;
            let existed = dir.kind(name)?.is_some();
            move_file(&file.staged, &dir, name)?;
            if !existed {
                placed.files.push((dir, name.to_owned()));
            }
        }
        self.relocate.settle(&self.agent_home, &self.to)
    }

    /// Copies the session's `files` (as the agent keeps them) into `dir`, rewritten for the new
    /// directory, for [`Move::place`] (`sticky relocate`).
    pub fn stage_local(&self, files: &[MovingFile], dir: &Path) -> Result<Vec<Staging>> {
        let top = Dir::open_top(&self.agent_home)
            .with_context(|| format!("cannot read {}", self.agent_home.display()))?;
        files
            .iter()
            .enumerate()
            .map(|(index, file)| {
                let staged = dir.join(index.to_string());
                let rows = matches!(file.stored, Stored::Rows(_));
                let mut out = Rewriter::new(
                    BufWriter::new(create_private(&staged)?),
                    self.rewrites(&file.relative),
                );
                match &file.stored {
                    // The session's files, read below the agent's home without following a link.
                    Stored::File(path) => {
                        let source = top
                            .open_file(&file.relative, Access::Read)
                            .map_err(refuse_link)
                            .with_context(|| format!("cannot read {}", path.display()))?;
                        std::io::copy(&mut BufReader::new(source), &mut out)?;
                    }
                    Stored::Rows(bytes) => out.write_all(bytes)?,
                }
                out.finish()?.flush()?;
                Ok(Staging {
                    staged,
                    relative: self.destination(&file.relative)?,
                    rows,
                })
            })
            .collect()
    }
}

/// What an import leaves free on a file system beyond the bundle's files: 64 MiB, and a tenth
/// of what the files take.
pub const ROOM_MARGIN: u64 = 64 << 20;

/// Refuses `total` bytes more on the file system of `dir` unless it has them free with
/// [`ROOM_MARGIN`] and a tenth more to spare, naming both numbers.
pub fn room(dir: &Path, total: u64) -> Result<()> {
    let stats = nix::sys::statvfs::statvfs(dir)
        .with_context(|| format!("cannot read the free space of {}", dir.display()))?;
    #[allow(
        clippy::useless_conversion,
        reason = "the field types differ between systems"
    )]
    let free = u64::from(stats.blocks_available()).saturating_mul(u64::from(stats.fragment_size()));
    let needed = total.saturating_add(total / 10).saturating_add(ROOM_MARGIN);
    if free < needed {
        bail!(StickyError::Usage(format!(
            "the bundle's files add up to {total} bytes ({} MiB), and the file system of {} has \
             {free} bytes ({} MiB) free, short of that and the {} MiB sticky leaves free: free \
             some space there, or import the bundle on another machine (nothing was changed)",
            total >> 20,
            dir.display(),
            free >> 20,
            ROOM_MARGIN >> 20
        )));
    }
    Ok(())
}

/// A new file only its owner can read (a transcript is as private as the agent keeps it).
pub fn create_private(path: &Path) -> Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The staged file at `staged`, in sticky's private staging directory, not through a link.
fn open_staged(staged: &Path) -> Result<std::fs::File> {
    let (Some(dir), Some(name)) = (staged.parent(), staged.file_name()) else {
        anyhow::bail!("{} names no staged file", staged.display());
    };
    Dir::open_top(dir)
        .and_then(|dir| dir.open_here(name, Access::Read))
        .with_context(|| format!("cannot read the staged {}", staged.display()))
}

/// Renames the staged file `from` to `name` in `dir` (the staged inode itself, whose bytes were
/// verified), copying from the staged file when they are on different file systems.
fn move_file(from: &Path, dir: &Dir, name: &OsStr) -> Result<()> {
    let (Some(staging), Some(staged)) = (from.parent(), from.file_name()) else {
        anyhow::bail!("{} names no staged file", from.display());
    };
    let staging = Dir::open_top(staging)?;
    let to = dir.path().join(name);
    match staging.rename(staged, dir, name) {
        Ok(()) => return Ok(()),
        Err(e) if e.raw_os_error() == Some(nix::libc::EXDEV) => {}
        Err(e) => return Err(e).with_context(|| format!("cannot write {}", to.display())),
    }
    let mut temporary = name.to_owned();
    temporary.push(".sticky-import");
    let copied = (|| {
        let _ = dir.remove_file(&temporary);
        let mut out = dir.create_new(&temporary)?;
        io::copy(&mut staging.open_here(staged, Access::Read)?, &mut out)?;
        dir.rename(&temporary, dir, name)
    })();
    if copied.is_err() {
        let _ = dir.remove_file(&temporary);
    }
    copied.with_context(|| format!("cannot write {}", to.display()))
}

/// A link below the agent's home, told as the refusal it is (exit 2: nothing was changed).
fn refuse_link(error: io::Error) -> anyhow::Error {
    if crate::confined::is_link(&error) {
        return StickyError::Usage(format!("{error} (nothing was changed)")).into();
    }
    error.into()
}

/// What a destination holds against the staged copy of its file ([`Move::holding`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holding {
    /// Nothing.
    Absent,
    /// A file the staged copy begins with.
    Extended,
    /// The staged copy's bytes (or their beginning) for the directory the bundle came from.
    Same,
    /// Something the staged copy lacks.
    More,
}

/// A writer that checks what it is given is the beginning of `whole`'s bytes.
struct PrefixOf<R> {
    whole: R,
    same: bool,
}

impl<R: Read> Write for PrefixOf<R> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.same {
            let mut theirs = vec![0; buf.len()];
            let read = read_full(&mut self.whole, &mut theirs)?;
            self.same = read == buf.len() && theirs == buf;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Whether the bytes of `whole` begin with all of `prefix`'s (the same bytes, or more after).
fn begins_with(whole: &mut std::fs::File, prefix: &mut std::fs::File) -> bool {
    let sizes = (whole.metadata(), prefix.metadata());
    let (Ok(whole_meta), Ok(prefix_meta)) = sizes else {
        return false;
    };
    if prefix_meta.len() > whole_meta.len() {
        return false;
    }
    let mut buffers = (vec![0; 1 << 16], vec![0; 1 << 16]);
    loop {
        let read = (
            read_full(prefix, &mut buffers.1),
            read_full(whole, &mut buffers.0),
        );
        let (Ok(want), Ok(got)) = read else {
            return false;
        };
        if want == 0 {
            return true;
        }
        if got < want || buffers.0[..want] != buffers.1[..want] {
            return false;
        }
        if want < buffers.1.len() {
            return true;
        }
    }
}

fn read_full(file: &mut impl Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..])? {
            0 => break,
            read => filled += read,
        }
    }
    Ok(filled)
}

/// Removes the session's file `relative` from the agent's home `agent_home` (its old place,
/// after a move placed it anew) and the directories that leaves empty, up to the home; nothing
/// is followed through a link (a link on the way is an error, and nothing is removed).
pub fn remove_moved(agent_home: &Path, relative: &Path) -> Result<()> {
    let top = Dir::open_top(agent_home)?;
    let (dir, name) = top.parent_of(relative, false)?;
    dir.remove_file(name)?;
    for parent in relative.ancestors().skip(1) {
        let (Some(above), Some(name)) = (parent.parent(), parent.file_name()) else {
            break;
        };
        if top
            .open_dir(above)
            .and_then(|above| above.remove_empty_dir(name))
            .is_err()
        {
            break;
        }
    }
    Ok(())
}

/// Refuses a session the agent keeps no file of.
pub fn require_files(files: &[MovingFile], agent: &str, id: &str, from: &Path) -> Result<()> {
    if files.is_empty() {
        bail!(StickyError::SessionLost {
            agent: agent.to_owned(),
            session: id.to_owned(),
            reason: format!(
                "it keeps no file of the session run in {} in this HOME",
                from.display()
            ),
        });
    }
    Ok(())
}
