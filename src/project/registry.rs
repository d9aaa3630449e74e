//! The projects this user ran sticky in, for the reports across them (`sticky usage --all`,
//! `sticky search --all`): `<data dir>/sticky/projects` (`~/.local/share/sticky/projects`,
//! beside the key), one line per project: its directory, and when `STICKY_DB` moved its
//! database, a NUL and the database's path.
//!
//! A turn adds its project when the file does not list it yet ([`note`]): one small read a
//! turn, and a write only the first time, appended in one `write(2)` so concurrent turns never
//! interleave their lines (a line listed twice is read once). Nothing here may fail a turn: a
//! file that cannot be read or written only leaves the project out. A path holding a newline is
//! not listed (the file is one line per project), nor is a project once the list is full (past
//! [`MAX_LIST`], which is all that is read; `sticky usage --all --prune` drops the gone ones).
//!
//! A turn that is about to start its directory's conversation afresh (its database missing, or
//! keeping no session of it) first asks whether another state of the user's keeps a session of
//! this directory ([`elsewhere`]: the project's own `.sticky/` under a `STICKY_DB`, then the
//! list: `STICKY_DB` missing from this shell, or set since); a turn that goes on never asks.
//!
//! The list only says where to look. A listed project is located and checked as a turn there
//! would be ([`locate_listed`]: `trust` and the stamp), so a line pointing at a stranger's or a
//! crafted database is skipped with the reason, never read; one that is gone is skipped too,
//! and `sticky usage --all --prune` drops it ([`replace`]).

use std::ffi::OsStr;
use std::fs::OpenOptions;
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{Database, Project, stamp};
use crate::state::{DB_FILE, STATE_DIR};

/// The list's file name in sticky's data directory.
const FILE: &str = "projects";

/// The most of the list that is read: 4 MiB, tens of thousands of projects.
const MAX_LIST: u64 = 4 * 1024 * 1024;

/// A project as the list names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Listed {
    /// The project directory.
    pub dir: PathBuf,
    /// The database `STICKY_DB` chose, when not `<dir>/.sticky/sticky.db`.
    pub db: Option<PathBuf>,
}

impl Listed {
    /// The project's database file.
    pub fn database(&self) -> PathBuf {
        self.db
            .clone()
            .unwrap_or_else(|| self.dir.join(STATE_DIR).join(DB_FILE))
    }

    /// The line that lists it (without its newline); `None` for a path the list cannot hold.
    fn line(&self) -> Option<Vec<u8>> {
        let mut line = self.dir.as_os_str().as_bytes().to_vec();
        if let Some(db) = &self.db {
            line.push(0);
            line.extend_from_slice(db.as_os_str().as_bytes());
        }
        (!line.contains(&b'\n') && !line.is_empty()).then_some(line)
    }

    fn parse(line: &[u8]) -> Option<Self> {
        let mut fields = line.split(|b| *b == 0);
        let dir = PathBuf::from(OsStr::from_bytes(fields.next()?));
        let db = fields.next().map(|db| PathBuf::from(OsStr::from_bytes(db)));
        (dir.is_absolute() && db.as_ref().is_none_or(|db| db.is_absolute()))
            .then_some(Self { dir, db })
    }
}

/// The list's path: `<data dir>/sticky/projects`.
pub fn path() -> Option<PathBuf> {
    stamp::data_dir().map(|dir| dir.join("sticky").join(FILE))
}

/// Lists `project` unless the list names it already. Best effort: never fails the caller.
pub fn note(project: &Project) {
    let Some(path) = path() else {
        return;
    };
    let listed = Listed {
        dir: project.dir.clone(),
        db: project.db_overridden.then(|| project.state.db.clone()),
    };
    let Some(mut line) = listed.line() else {
        return;
    };
    match read_bytes(&path) {
        Ok(Some(text)) if text.split(|b| *b == b'\n').any(|known| known == line) => return,
        // A line past what is read would never be read, and be appended again every turn.
        Ok(Some(text)) if text.len() as u64 >= MAX_LIST => return,
        Ok(_) => {}
        Err(_) => return,
    }
    line.push(b'\n');
    let _ = append(&path, &line);
}

/// Whether the list names `project` with the database it uses now (a state that existed, if
/// that database is gone since). Best effort: `false` when the list cannot be read.
pub fn names(project: &Project) -> bool {
    let db = project.db_overridden.then(|| project.state.db.clone());
    read().is_ok_and(|listed| {
        listed
            .iter()
            .any(|known| known.dir == project.dir && known.db == db)
    })
}

/// Every project the list names, each once, in the order first listed; an empty list when
/// there is none.
pub fn read() -> Result<Vec<Listed>> {
    let Some(path) = path() else {
        return Ok(Vec::new());
    };
    let text = read_bytes(&path)
        .map_err(|e| crate::store::io_error(&path, "read the list of projects", &e))?
        .unwrap_or_default();
    // A set beside the list: tens of thousands of lines, each compared once.
    let mut seen = std::collections::HashSet::new();
    let listed = text
        .split(|b| *b == b'\n')
        .filter_map(Listed::parse)
        .filter(|entry| seen.insert(entry.clone()))
        .collect();
    Ok(listed)
}

/// Rewrites the list as `keep` (`--prune`), replacing the file in one rename. A project a
/// turn lists meanwhile may be lost from it, and is listed again by its next turn.
pub fn replace(keep: &[Listed]) -> Result<()> {
    let Some(path) = path() else {
        return Ok(());
    };
    let mut text = Vec::new();
    for line in keep.iter().filter_map(Listed::line) {
        text.extend_from_slice(&line);
        text.push(b'\n');
    }
    let temporary = path.with_file_name(format!("{FILE}.{}.tmp", std::process::id()));
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temporary)
        .and_then(|mut file| file.write_all(&text))
        .and_then(|()| std::fs::rename(&temporary, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(crate::store::io_error(
            &path,
            "rewrite the list of projects",
            &e,
        ));
    }
    Ok(())
}

/// What became of a listed project.
#[derive(Debug)]
pub enum Found {
    /// Located and checked as a turn there would be: its database is the user's.
    Usable(Project),
    /// The directory or its database no longer exists (`--prune` drops it).
    Gone,
    /// It exists, but sticky may not read it: why.
    Refused(String),
}

/// Locates the listed project `listed` as a turn run in its directory would, with the same
/// checks (see `trust` and `stamp`): only a database the user made (or adopted) is usable.
pub fn locate_listed(listed: &Listed) -> Found {
    let database = listed.database();
    match (listed.dir.is_dir(), database.try_exists()) {
        (true, Ok(true)) => {}
        (_, Err(e)) => return Found::Refused(format!("cannot look at its database: {e}")),
        _ => return Found::Gone,
    }
    let project = match super::locate(&listed.dir, listed.db.as_deref()) {
        Ok(project) => project,
        Err(error) => return Found::Refused(format!("{error:#}")),
    };
    if project.dir != listed.dir || project.state.db != database {
        return Found::Refused(format!(
            "a turn there now uses the project {} (database {})",
            project.dir.display(),
            project.state.db.display()
        ));
    }
    match project.database {
        Database::Stamped => Found::Usable(project),
        Database::Missing => Found::Gone,
        Database::Unstamped => Found::Refused(
            "its database has no stamp saying you made it (a sticky older than stamps made it, \
             or it came from elsewhere); run `sticky status` there to adopt it"
                .to_owned(),
        ),
    }
}

/// Another state of `project`'s directory that keeps its conversation, found without opening
/// `project`'s own database for writing.
#[derive(Debug)]
pub struct Elsewhere {
    /// The directory and the database that keep it.
    pub listed: Listed,
    /// Where sticky found it: the project's own `.sticky/` (under a `STICKY_DB`), or the list.
    pub in_list: bool,
    /// Why a turn there refuses that state for now (a backup restored, a lost key), when it
    /// does: the user fixes it there, and it keeps the conversation all the same.
    pub hold: Option<super::Hold>,
}

/// Another state of `project`'s directory that keeps a live session recorded for that very
/// directory, when the caller is about to start the conversation afresh (`project`'s database
/// is missing, or keeps no session of it: a `STICKY_DB` missing from this shell, or one set
/// since while `.sticky/` keeps the conversation; reviews 16 and 17). Looked for first where no
/// list is needed, the project's own `.sticky/` when `STICKY_DB` chose another database (review
/// 18, M1: the list may be lost), then in the list. A state a turn there would use counts, and
/// so does one it refuses for now for a reason the user fixes there ([`super::held`]: a backup
/// restored, a lost key; review 18, M3), read-only. One of another user's, a link out of its
/// directory or no sticky database is passed over, as a turn there would pass it over.
pub fn elsewhere(project: &Project) -> Option<Elsewhere> {
    let own = project.db_overridden.then(|| Listed {
        dir: project.dir.clone(),
        db: None,
    });
    let listed = read().unwrap_or_default();
    let candidates = own
        .into_iter()
        .map(|own| (own, false))
        .chain(listed.into_iter().map(|listed| (listed, true)));
    candidates
        .filter(|(listed, _)| {
            listed.dir == project.dir
                && listed.database() != project.state.db
                && !super::same_file(&listed.database(), &project.state.db)
        })
        .find_map(|(listed, in_list)| {
            let hold = match keeping(&listed)? {
                Keeping::Now => None,
                Keeping::Held(hold) => Some(hold),
            };
            Some(Elsewhere {
                listed,
                in_list,
                hold,
            })
        })
}

/// How a state that keeps a live session of its directory stands.
enum Keeping {
    /// A turn there would use it now.
    Now,
    /// A turn there refuses it for now, for this reason.
    Held(super::Hold),
}

/// Whether the state `listed` names keeps a live session of its directory, and how it stands.
fn keeping(listed: &Listed) -> Option<Keeping> {
    match locate_listed(listed) {
        Found::Usable(there) => keeps_session_of(&there, true).then_some(Keeping::Now),
        Found::Gone => None,
        // One git tracks came with the repository (whoever committed it may have recorded
        // this very path, as CI runners share one): `trust` never adopts it, so it is no
        // conversation of the user's to go back to.
        Found::Refused(_) => {
            let (there, hold) = super::held(&listed.dir, listed.db.as_deref())?;
            (there.dir == listed.dir
                && there.state.db == listed.database()
                && stamp::tracked_by_git(&there.state) == Ok(false)
                && keeps_session_of(&there, false))
            .then_some(Keeping::Held(hold))
        }
    }
}

/// Whether the database of `there` keeps a live session recorded for `there`'s own directory.
/// Only a state a turn there would use may be brought up to date to answer (`migrate`); one it
/// refuses for now is only read, and an older schema there proves nothing.
fn keeps_session_of(there: &Project, migrate: bool) -> bool {
    use crate::store::Store;
    let opened = if migrate {
        Store::open_elsewhere(&there.state.db)
    } else {
        Store::open_read_only(&there.state.db).map(Some)
    };
    let Ok(Some(store)) = opened else {
        return false;
    };
    store.threads().unwrap_or_default().iter().any(|thread| {
        matches!(store.live_session(thread.id), Ok(Some(live)) if live.directory == there.dir)
    })
}

/// The list's bytes; `None` when there is no list. A list that is no regular file (a FIFO
/// would block) or a link is treated as none; past [`MAX_LIST`] only that much is read.
fn read_bytes(path: &Path) -> io::Result<Option<Vec<u8>>> {
    use nix::libc::{ELOOP, O_NOFOLLOW, O_NONBLOCK};
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(O_NOFOLLOW | O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(ELOOP) => {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Ok(None);
    }
    let mut text = Vec::new();
    file.take(MAX_LIST).read_to_end(&mut text)?;
    Ok(Some(text))
}

/// Appends `line` to the list in one write, creating the list (and sticky's data directory,
/// 0700) when missing.
fn append(path: &Path, line: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        crate::state::create(dir)?;
    }
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other(
            "the list of projects is not a regular file",
        ));
    }
    file.write_all(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_bytes(bytes: &[u8]) -> PathBuf {
        PathBuf::from(OsStr::from_bytes(bytes))
    }

    #[test]
    fn a_line_holds_the_directory_and_a_moved_database() {
        let plain = Listed {
            dir: from_bytes(b"/p/a"),
            db: None,
        };
        let moved = Listed {
            dir: from_bytes(b"/p/b"),
            db: Some(from_bytes(b"/cache/b.db")),
        };
        for listed in [&plain, &moved] {
            let line = listed.line().unwrap();
            assert_eq!(Listed::parse(&line).as_ref(), Some(listed));
        }
        assert_eq!(plain.database(), Path::new("/p/a/.sticky/sticky.db"));
        assert_eq!(moved.database(), Path::new("/cache/b.db"));
        let newline = Listed {
            dir: from_bytes(b"/p/a\nb"),
            db: None,
        };
        assert_eq!(newline.line(), None, "one line per project");
        assert_eq!(Listed::parse(b"relative/dir"), None);
        assert_eq!(Listed::parse(b""), None);
    }
}
