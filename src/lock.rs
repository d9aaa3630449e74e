//! Turn locks: one turn at a time per conversation.
//!
//! Each conversation (thread) has a lock file in the state's locks directory (beside the
//! database, see [`State`](crate::state::State)), held with `flock` for the
//! whole turn. The kernel releases it when its holder dies, however it dies (SIGKILL, a power
//! cut of the process), so a lock can never outlive a crashed sticky, and a turn row still
//! `running` while its thread's lock is free is known to be abandoned, without guessing from
//! pids (which a restored CI cache or a container can reuse).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use crate::confined::Access;
use crate::exit::StickyError;

/// How often a waiting sticky tries the lock again.
const POLL: Duration = Duration::from_millis(50);

/// A held turn lock; dropping it releases the lock.
#[derive(Debug)]
pub struct TurnLock {
    _file: Flock<File>,
}

/// The lock file of `thread`: its name made safe for a file name, plus a hash so that two names
/// that sanitize alike never share a lock.
fn path(locks: &Path, thread: &str) -> PathBuf {
    named(locks, "thread", thread)
}

/// The lock file of `key` in `locks`: `<kind>-<key made safe>-<hash of key>.lock`.
fn named(locks: &Path, kind: &str, key: &str) -> PathBuf {
    let safe: String = key
        .chars()
        .take(40)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    // FNV-1a: stable across versions and platforms, unlike std's hasher.
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    locks.join(format!("{kind}-{safe}-{hash:016x}.lock"))
}

/// Tries to take the lock of `thread` in the directory `locks` once; `Ok(None)` when another
/// process holds it.
pub fn try_lock(locks: &Path, thread: &str) -> Result<Option<TurnLock>, StickyError> {
    let path = path(locks, thread);
    let file = open(&path)?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(file) => Ok(Some(TurnLock { _file: file })),
        Err((_, Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, errno)) => Err(StickyError::store(&path, format!("cannot lock: {errno}"))),
    }
}

/// Takes the lock of `thread`, waiting up to `wait` for its holder; `on_wait` is called once,
/// when the lock is found held, to say for whom sticky waits. `Ok(None)` when waiting gave up.
pub fn lock(
    locks: &Path,
    thread: &str,
    wait: Duration,
    on_wait: &mut dyn FnMut(),
) -> Result<Option<TurnLock>, StickyError> {
    poll(wait, on_wait, || try_lock(locks, thread))
}

/// A held session lock ([`lock_session`]); dropping it releases the lock.
#[derive(Debug)]
pub struct SessionLock {
    _file: Flock<File>,
}

/// Takes the session lock `key` (an agent and a session ID) in `locks`, the one directory of
/// session locks of this HOME (`<data dir>/sticky/locks`), waiting up to `wait` as [`lock`]
/// does. A command that puts an agent session in a project (import, relocate) or adopts a
/// state naming one (trust) holds it from its check that no other project of this HOME keeps
/// the session until its project's record of it is written, so two of them in two projects
/// take turns, and the second sees what the first did. The lock file is made through
/// `state::companion` (the directory 0700 and the user's, the file 0600, no link followed or
/// written through); the kernel releases the lock when its holder ends, however it ends.
/// `Ok(None)` when waiting gave up; an error names the lock file.
pub fn lock_session(
    locks: &Path,
    key: &str,
    wait: Duration,
    on_wait: &mut dyn FnMut(),
) -> Result<Option<SessionLock>, (PathBuf, std::io::Error)> {
    let path = named(locks, "session", key);
    poll(wait, on_wait, || {
        let file = create(&path).map_err(|error| (path.clone(), error))?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(file) => Ok(Some(SessionLock { _file: file })),
            Err((_, Errno::EWOULDBLOCK)) => Ok(None),
            Err((_, errno)) => Err((path.clone(), errno.into())),
        }
    })
}

/// Calls `attempt` until it gives a lock, every [`POLL`] up to `wait`; `on_wait` is called
/// once, after the first attempt that found the lock held. `Ok(None)` when waiting gave up.
fn poll<T, E>(
    wait: Duration,
    on_wait: &mut dyn FnMut(),
    mut attempt: impl FnMut() -> Result<Option<T>, E>,
) -> Result<Option<T>, E> {
    let deadline = Instant::now() + wait;
    let mut told = false;
    loop {
        if let Some(lock) = attempt()? {
            return Ok(Some(lock));
        }
        if !told {
            on_wait();
            told = true;
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        std::thread::sleep(POLL.min(deadline - now));
    }
}

/// Whether the lock of `thread` is held by some process right now (for `status`).
pub fn is_held(locks: &Path, thread: &str) -> bool {
    let path = path(locks, thread);
    let Ok(file) = open_existing(&path) else {
        return false;
    };
    matches!(
        Flock::lock(file, FlockArg::LockSharedNonblock),
        Err((_, Errno::EWOULDBLOCK))
    )
}

/// A lock held to read a conversation ([`lock_to_read`]); dropping it releases the lock.
#[derive(Debug)]
pub struct ReadLock {
    /// `None` where no lock file can be made, so no turn can run either.
    file: Option<Flock<File>>,
}

impl ReadLock {
    /// Whether a lock is held (none is where no lock file can be made).
    pub fn held(&self) -> bool {
        self.file.is_some()
    }
}

/// Takes the lock of `thread` to read the conversation whole (`sticky export`), waiting up to
/// `wait` for a running turn as [`lock`] does; `Ok(None)` when waiting gave up. The lock is
/// shared: a turn waits for every reader, readers never wait for each other, and a lock file
/// that exists is locked through a read-only descriptor, so a state on a read-only mount is
/// read as well. A lock file that is missing and cannot be made (a read-only mount, a
/// directory of another user's) needs no lock: a turn could not make it either, and none runs
/// without it.
pub fn lock_to_read(
    locks: &Path,
    thread: &str,
    wait: Duration,
    on_wait: &mut dyn FnMut(),
) -> Result<Option<ReadLock>, StickyError> {
    let path = path(locks, thread);
    let file = match open_existing(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => match create(&path) {
            Ok(file) => file,
            Err(error) if unwritable(&error) => return Ok(Some(ReadLock { file: None })),
            Err(error) => return Err(cannot_open(&path, &error)),
        },
        Err(error) => return Err(cannot_open(&path, &error)),
    };
    // Flock takes the file and gives it back when the lock is held.
    let mut file = Some(file);
    poll(wait, on_wait, || {
        let Some(unlocked) = file.take() else {
            return Err(StickyError::store(&path, "cannot lock: the file is gone"));
        };
        match Flock::lock(unlocked, FlockArg::LockSharedNonblock) {
            Ok(locked) => Ok(Some(ReadLock { file: Some(locked) })),
            Err((back, Errno::EWOULDBLOCK)) => {
                file = Some(back);
                Ok(None)
            }
            Err((_, errno)) => Err(StickyError::store(&path, format!("cannot lock: {errno}"))),
        }
    })
}

/// Whether `error` says the place cannot be written (rather than that something is wrong).
fn unwritable(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::ReadOnlyFilesystem | std::io::ErrorKind::PermissionDenied
    )
}

fn open(path: &Path) -> Result<File, StickyError> {
    create(path).map_err(|error| cannot_open(path, &error))
}

/// Opens the lock file at `path` to write, creating it and its directory when missing, through
/// `state::companion`: a link planted for the locks directory or a lock file is refused, never
/// written through.
fn create(path: &Path) -> std::io::Result<File> {
    let (dir, name) = parts(path)?;
    crate::state::companion(dir)?.open_here(name, Access::ReadWriteCreate)
}

/// Opens the existing lock file at `path` to read (no link followed); `NotFound` when it, or
/// its directory, is missing.
fn open_existing(path: &Path) -> std::io::Result<File> {
    let (dir, name) = parts(path)?;
    match crate::state::open_companion(dir)? {
        Some(dir) => dir.open_here(name, Access::Read),
        None => Err(std::io::ErrorKind::NotFound.into()),
    }
}

/// The directory and the name of a lock file.
fn parts(path: &Path) -> std::io::Result<(&Path, &std::ffi::OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => Ok((dir, name)),
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is no lock file", path.display()),
        )),
    }
}

/// The failure to open a lock file: the way to a writable place only when the place is not
/// writable (EACCES, EPERM, EROFS), since a state elsewhere cures nothing else.
fn cannot_open(path: &Path, error: &std::io::Error) -> StickyError {
    let advice = if unwritable(error) {
        format!("; {}", crate::store::UNWRITABLE)
    } else {
        String::new()
    };
    StickyError::store(path, format!("cannot open the lock file: {error}{advice}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_has_one_holder_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join(".sticky/sticky.db.locks");
        let first = try_lock(&db, "main").unwrap().expect("free at first");
        assert!(try_lock(&db, "main").unwrap().is_none());
        assert!(is_held(&db, "main"));
        // other threads are independent, even with names that sanitize alike
        let other = try_lock(&db, "ma/n").unwrap();
        assert!(other.is_some());
        assert!(try_lock(&db, "ma_n").unwrap().is_some());
        drop(first);
        assert!(!is_held(&db, "main"));
        assert!(try_lock(&db, "main").unwrap().is_some());
    }

    #[test]
    fn a_session_has_one_holder_at_a_time_in_a_private_directory() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let locks = dir.path().join("sticky/locks");
        let never = Duration::ZERO;
        let first = lock_session(&locks, "claude\0abc", never, &mut || {});
        let first = first.unwrap().expect("free at first");
        let mut told = 0;
        let second = lock_session(&locks, "claude\0abc", never, &mut || told += 1).unwrap();
        assert!(second.is_none(), "held");
        assert_eq!(told, 1);
        let other = lock_session(&locks, "claude\0abd", never, &mut || {}).unwrap();
        assert!(other.is_some(), "another session is free");
        assert!(
            try_lock(&locks, "claude\0abc").unwrap().is_some(),
            "a thread is not a session"
        );
        for made in [dir.path().join("sticky"), locks.clone()] {
            let mode = std::fs::metadata(&made).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", made.display());
        }
        drop(first);
        assert!(
            lock_session(&locks, "claude\0abc", never, &mut || {})
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn a_session_lock_is_never_taken_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let locks = dir.path().join("locks");
        std::fs::create_dir(&locks).unwrap();
        let target = dir.path().join("elsewhere");
        let planted = named(&locks, "session", "claude\0abc");
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        let (path, _) = lock_session(&locks, "claude\0abc", Duration::ZERO, &mut || {})
            .expect_err("a link is refused");
        assert_eq!(path, planted);
        assert!(!target.exists(), "nothing made through the link");
    }

    #[test]
    fn waiting_gives_up_at_the_deadline_and_says_so_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("sticky.db.locks");
        let _held = try_lock(&db, "main").unwrap().unwrap();
        let mut told = 0;
        let started = Instant::now();
        let got = lock(&db, "main", Duration::from_millis(200), &mut || told += 1).unwrap();
        assert!(got.is_none());
        assert_eq!(told, 1);
        assert!(started.elapsed() >= Duration::from_millis(200));
    }

    #[test]
    fn a_waiter_gets_the_lock_when_the_holder_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("sticky.db.locks");
        let held = try_lock(&db, "main").unwrap().unwrap();
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(held);
        });
        let got = lock(&db, "main", Duration::from_secs(30), &mut || {}).unwrap();
        assert!(got.is_some());
        releaser.join().unwrap();
    }

    #[test]
    fn readers_share_the_lock_and_a_turn_waits_for_them() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("sticky.db.locks");
        let never = Duration::ZERO;
        let reader = lock_to_read(&db, "main", never, &mut || {}).unwrap();
        assert!(reader.as_ref().is_some_and(ReadLock::held));
        assert!(
            lock_to_read(&db, "main", never, &mut || {})
                .unwrap()
                .is_some()
        );
        assert!(try_lock(&db, "main").unwrap().is_none(), "a turn waits");
        drop(reader);
        let turn = try_lock(&db, "main").unwrap().expect("free again");
        let mut told = 0;
        let waited = lock_to_read(&db, "main", Duration::from_millis(100), &mut || told += 1);
        assert!(waited.unwrap().is_none(), "a reader waits for a turn");
        assert_eq!(told, 1);
        drop(turn);
    }

    /// sysfs refuses a new directory to everyone, root included (EPERM), as a read-only mount
    /// would: a reader needs no lock there, since a turn could not take one either.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_reader_needs_no_lock_where_none_can_be_made() {
        let locks = Path::new("/sys/sticky-test.locks");
        assert!(try_lock(locks, "main").is_err(), "a turn cannot lock there");
        let reader = lock_to_read(locks, "main", Duration::ZERO, &mut || {}).unwrap();
        assert!(reader.is_some_and(|r| !r.held()));
        assert!(!locks.exists());
    }

    /// Only a place that cannot be written is told to move the state elsewhere.
    #[test]
    fn a_lock_that_cannot_be_opened_suggests_sticky_db_only_when_unwritable() {
        let dir = tempfile::tempdir().unwrap();
        // The locks directory is a file: nothing a writable STICKY_DB would cure.
        let locks = dir.path().join("sticky.db.locks");
        std::fs::write(&locks, "").unwrap();
        let error = try_lock(&locks, "main").unwrap_err().to_string();
        assert!(error.contains("cannot open the lock file"), "{error}");
        assert!(!error.contains("STICKY_DB"), "{error}");
        let denied = std::io::Error::from_raw_os_error(nix::libc::EROFS);
        let error = cannot_open(&locks, &denied).to_string();
        assert!(
            error.contains("set STICKY_DB=/writable/path") && error.contains("sticky export"),
            "{error}"
        );
        for errno in [nix::libc::EACCES, nix::libc::EPERM] {
            let error = cannot_open(&locks, &std::io::Error::from_raw_os_error(errno));
            assert!(error.to_string().contains("STICKY_DB"), "{error}");
        }
    }

    #[test]
    fn lock_files_sit_in_the_locks_directory_of_the_state() {
        let locks = crate::state::State::in_project(Path::new("/p")).locks;
        let lock = path(&locks, "main");
        assert!(lock.starts_with("/p/.sticky/sticky.db.locks/"));
        assert!(
            lock.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("thread-main-")
        );
    }
}
