//! The project's state directory: where each file of sticky's state lives, and the one function
//! that creates a directory for it.
//!
//! Everything sticky keeps for a project sits beside its database: `.sticky/sticky.db`, or the
//! `STICKY_DB` path, which moves all of it (a read-only checkout or a CI cache keeps its state
//! where it can be written). Beside the database: `<db>.locks/` (a lock file per conversation,
//! and the per-turn files an agent reports its session into) and `<db>.vault/` (sticky's copy of
//! the live sessions' files). Every directory is private to the user (0700), and `.sticky/` gets
//! a `.gitignore` containing `*` so its contents are never committed.
//!
//! The state directory itself is trusted as it stands (`project/trust.rs` checked it, or the
//! user named it with `STICKY_DB`); everything below it is reached through `crate::confined`
//! ([`companion`]), so a link planted among the locks or in the vault is refused wherever it
//! sits (issue 23). Depends on nothing else in sticky but `confined`, so `project`, `store`,
//! `lock` and `vault` all build on it.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::confined::Dir;

/// The name of the per-project state directory, which gets a `.gitignore` of its own.
pub const STATE_DIR: &str = ".sticky";

/// The database file inside [`STATE_DIR`].
pub const DB_FILE: &str = "sticky.db";

/// Where the files of one project's state live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// The database file: `<project>/.sticky/sticky.db`, or the `STICKY_DB` path.
    pub db: PathBuf,
    /// The lock files of the conversations and the per-turn report files: `<db>.locks/`.
    pub locks: PathBuf,
    /// sticky's copy of the live sessions' files: `<db>.vault/`.
    pub vault: PathBuf,
}

impl State {
    /// The state of the project in `dir`: `dir/.sticky/sticky.db` and its neighbours.
    pub fn in_project(dir: &Path) -> Self {
        Self::beside(dir.join(STATE_DIR).join(DB_FILE))
    }

    /// The state kept beside the database `db` (the `STICKY_DB` path).
    pub fn beside(db: PathBuf) -> Self {
        Self {
            locks: sibling(&db, ".locks"),
            vault: sibling(&db, ".vault"),
            db,
        }
    }

    /// The file an interactive agent reports its sessions into during turn `turn_id` (see
    /// `Adapter::session_report_args`): beside the lock files, so private to the user.
    pub fn report(&self, turn_id: i64) -> PathBuf {
        self.locks.join(format!("sessions-turn-{turn_id}.jsonl"))
    }
}

/// Removes whatever is at the per-turn report file `report` ([`State::report`]) before the
/// agent is told to write it: a file left by a turn that died, or a link planted among the
/// locks (which the agent's hook would write through), removed, never followed.
pub fn clear_report(report: &Path) -> io::Result<()> {
    let (dir, name) = split(report)?;
    let Some(dir) = open_companion(dir)? else {
        return Ok(());
    };
    match dir.remove_file(name) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The text of the per-turn report file `report`, read without following a link (a planted
/// one could name sessions the agent never reported); `None` when there is no such file.
pub fn read_report(report: &Path) -> Option<String> {
    let (dir, name) = split(report).ok()?;
    let mut file = open_companion(dir)
        .ok()??
        .open_here(name, crate::confined::Access::Read)
        .ok()?;
    let mut text = String::new();
    io::Read::read_to_string(&mut file, &mut text).ok()?;
    Some(text)
}

/// `<file><suffix>`, in the same directory.
fn sibling(file: &Path, suffix: &str) -> PathBuf {
    let mut name: OsString = file.file_name().unwrap_or_default().to_owned();
    name.push(suffix);
    file.with_file_name(name)
}

/// Creates `dir` (and missing parents) with mode 0700 when it does not exist; a directory named
/// `.sticky` also gets a `.gitignore` containing `*` so its contents are never committed. `dir`
/// is a trusted top (the state directory, sticky's key's directory): a link there is the user's
/// or was refused before (`project/trust.rs`); what lies below it goes through [`companion`].
///
/// Safe to race: concurrent creators all succeed, and `create_new` lets exactly one of them write
/// the `.gitignore`. Returns whether the directory was missing.
pub fn create(dir: &Path) -> io::Result<bool> {
    let missing = !dir.is_dir();
    let opened = Dir::create_top(dir)?;
    if missing && is_state_dir(dir) {
        gitignore_in(&opened)?;
    }
    Ok(missing)
}

/// Opens the directory `dir` beside the database (the locks, the vault), created 0700 when
/// missing: its parent, the state directory, is trusted and created as [`create`] does; `dir`
/// and everything opened below it must be no link.
pub fn companion(dir: &Path) -> io::Result<Dir> {
    let (parent, name) = split(dir)?;
    create(parent)?;
    owned(Dir::open_top(parent)?.create_dir_all(Path::new(name))?)
}

/// Opens the directory `dir` beside the database as [`companion`] does, without creating it:
/// `None` when it (or the state directory) does not exist.
pub fn open_companion(dir: &Path) -> io::Result<Option<Dir>> {
    open_companion_as_is(dir)?.map(owned).transpose()
}

/// Opens the directory `dir` beside the database as [`open_companion`] does, whoever owns it and
/// whatever its mode: for looking into a state sticky refuses for now (another account's, open
/// to others) to learn what it keeps, never to use it. Still no link anywhere below the state
/// directory.
pub fn open_companion_as_is(dir: &Path) -> io::Result<Option<Dir>> {
    let (parent, name) = split(dir)?;
    match Dir::open_top(parent).and_then(|top| top.open_dir(Path::new(name))) {
        Ok(dir) => Ok(Some(dir)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// `dir`, a companion just opened, when it is the user's and closed to others. `project/trust.rs`
/// refused any other before the turn began; this holds for one another user made in a shared
/// directory (`STICKY_DB` under `/tmp`) after that check and before sticky's `mkdir`, which
/// then found it there: they could plant files in the vault or remove a turn's lock. One
/// `fstat` of the open descriptor.
fn owned(dir: Dir) -> io::Result<Dir> {
    let (uid, mode) = dir.owner_and_mode()?;
    let me = nix::unistd::geteuid().as_raw();
    let why = if uid != me {
        format!("is owned by another user (uid {uid}, you are uid {me})")
    } else if mode & 0o022 != 0 {
        format!("can be written by other users (mode {mode:04o})")
    } else {
        return Ok(dir);
    };
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} {why}, who could plant or remove sticky's files in it; remove it (rm -r {}) \
             and keep STICKY_DB in a directory of your own",
            dir.path().display(),
            crate::msg::shell_path(dir.path())
        ),
    ))
}

/// The parent and the name of a companion directory.
fn split(dir: &Path) -> io::Result<(&Path, &OsStr)> {
    match (dir.parent(), dir.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no directory beside a database", dir.display()),
        )),
    }
}

/// Whether `dir` is named like a project's state directory (`.sticky`).
pub fn is_state_dir(dir: &Path) -> bool {
    dir.file_name().is_some_and(|name| name == STATE_DIR)
}

/// Writes `dir/.gitignore` with `*` unless it exists.
pub fn write_gitignore(dir: &Path) -> io::Result<()> {
    gitignore_in(&Dir::open_top(dir)?)
}

/// Writes `.gitignore` with `*` in `dir` unless something is there (a link there is left as
/// it is, never written through). The file appears whole: written under a name of this
/// process's own, then linked into place, so a sticky starting at the same moment, which asks
/// git whether the state is ignored, never reads it empty (64 first runs at once did).
fn gitignore_in(dir: &Dir) -> io::Result<()> {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let name = OsStr::new(".gitignore");
    if dir.kind(name)?.is_some() {
        return Ok(());
    }
    // A name of this process's and this call's own (threads of one process write it too); one
    // left by a sticky of the same pid that died here is ours to replace.
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temporary = OsString::from(format!(".gitignore.{}.{call}.new", std::process::id()));
    let _ = dir.remove_file(&temporary);
    let written = dir
        .create_new(&temporary)
        .and_then(|mut file| file.write_all(b"*\n"));
    let linked = written.and_then(|()| dir.link_new(&temporary, name));
    let _ = dir.remove_file(&temporary);
    match linked {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        linked => linked,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn every_file_of_the_state_sits_beside_the_database() {
        let state = State::in_project(Path::new("/p"));
        assert_eq!(state.db, Path::new("/p/.sticky/sticky.db"));
        assert_eq!(state.locks, Path::new("/p/.sticky/sticky.db.locks"));
        assert_eq!(state.vault, Path::new("/p/.sticky/sticky.db.vault"));
        assert_eq!(
            state.report(7),
            Path::new("/p/.sticky/sticky.db.locks/sessions-turn-7.jsonl")
        );
        // STICKY_DB moves all of it.
        let moved = State::beside(PathBuf::from("/cache/x.db"));
        assert_eq!(moved.locks, Path::new("/cache/x.db.locks"));
        assert_eq!(moved.vault, Path::new("/cache/x.db.vault"));
    }

    #[test]
    fn creating_a_state_directory_makes_it_private_and_ignored_by_git() {
        let root = tempfile::tempdir().unwrap();
        let state = root.path().join("p/.sticky");
        assert!(create(&state).unwrap(), "it was missing");
        let mode = std::fs::metadata(&state).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert_eq!(
            std::fs::read_to_string(state.join(".gitignore")).unwrap(),
            "*\n"
        );
        assert!(!create(&state).unwrap(), "it exists now");
        // Other directories (the locks, a STICKY_DB directory) get no .gitignore.
        let locks = root.path().join("cache/x.db.locks");
        assert!(create(&locks).unwrap());
        assert!(!locks.join(".gitignore").exists());
    }

    #[test]
    fn a_companion_others_may_write_or_another_user_owns_is_refused_when_opened() {
        let root = tempfile::tempdir().unwrap();
        let state = State::beside(root.path().join("shared/sticky.db"));
        create(&root.path().join("shared")).unwrap();
        // Made by another before sticky's mkdir, in a directory all may write (as /tmp).
        std::fs::create_dir(&state.vault).unwrap();
        std::fs::set_permissions(&state.vault, std::fs::Permissions::from_mode(0o777)).unwrap();
        for error in [
            companion(&state.vault).unwrap_err(),
            open_companion(&state.vault).unwrap_err(),
        ] {
            let text = error.to_string();
            assert!(
                text.contains("can be written by other users (mode 0777)"),
                "{text}"
            );
            assert!(
                text.contains(&format!("rm -r {}", state.vault.display())),
                "{text}"
            );
        }
        std::fs::set_permissions(&state.vault, std::fs::Permissions::from_mode(0o700)).unwrap();
        companion(&state.vault).unwrap();
        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::chown(&state.vault, Some(65_534), Some(65_534)).unwrap();
            let error = companion(&state.vault).unwrap_err();
            assert!(
                error
                    .to_string()
                    .contains("is owned by another user (uid 65534"),
                "{error}"
            );
        }
    }

    #[test]
    fn a_report_file_planted_as_a_link_is_neither_read_nor_written_through() {
        let root = tempfile::tempdir().unwrap();
        let state = State::in_project(&root.path().join("p"));
        companion(&state.locks).unwrap();
        let planted = root.path().join("planted.jsonl");
        std::fs::write(&planted, "{\"session_id\":\"theirs\"}\n").unwrap();
        let report = state.report(1);
        std::os::unix::fs::symlink(&planted, &report).unwrap();
        assert_eq!(read_report(&report), None, "not read through the link");
        clear_report(&report).unwrap();
        assert!(
            std::fs::symlink_metadata(&report).is_err(),
            "the link is gone"
        );
        assert!(planted.is_file(), "what it led to is untouched");
        std::fs::write(&report, "{\"session_id\":\"mine\"}\n").unwrap();
        assert_eq!(
            read_report(&report).as_deref(),
            Some("{\"session_id\":\"mine\"}\n")
        );
        clear_report(&report).unwrap();
        clear_report(&report).unwrap();
    }

    #[test]
    fn a_companion_of_the_database_is_created_private_and_never_followed_as_a_link() {
        let root = tempfile::tempdir().unwrap();
        let state = State::in_project(&root.path().join("p"));
        assert!(open_companion(&state.vault).unwrap().is_none(), "missing");
        let vault = companion(&state.vault).unwrap();
        assert_eq!(vault.path(), state.vault);
        let mode = std::fs::metadata(&state.vault)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(state.db.parent().unwrap().join(".gitignore").is_file());
        assert!(open_companion(&state.vault).unwrap().is_some());

        let outside = root.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, &state.locks).unwrap();
        for error in [
            companion(&state.locks).unwrap_err(),
            open_companion(&state.locks).unwrap_err(),
        ] {
            assert!(error.to_string().contains("is a symbolic link"), "{error}");
        }
        // A .gitignore that is a link is not written through.
        let planted = root.path().join("q/.sticky");
        std::fs::create_dir_all(&planted).unwrap();
        std::os::unix::fs::symlink(outside.join("ignored"), planted.join(".gitignore")).unwrap();
        write_gitignore(&planted).unwrap();
        assert!(!outside.join("ignored").exists());
    }

    #[test]
    fn the_gitignore_appears_whole_and_never_over_another() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join(".sticky");
        std::fs::create_dir(&dir).unwrap();
        // The file is written whole, and no temporary stays.
        write_gitignore(&dir).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join(".gitignore")).unwrap(),
            "*\n"
        );
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "only .gitignore is left"
        );
        // A repository's own .gitignore stays as it is.
        std::fs::write(dir.join(".gitignore"), "!keep\n").unwrap();
        write_gitignore(&dir).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join(".gitignore")).unwrap(),
            "!keep\n"
        );
    }
}
