//! How a store failure reads: one lowercase line naming the file, what went wrong and the way out.
//!
//! Every failure leaves the store as an [`anyhow::Error`] whose chain holds
//! [`StickyError::Store`], so `main` maps it to the store exit code whatever the cause.

use std::io;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::ErrorCode;

use crate::exit::StickyError;

/// How long one statement or transaction waits for another process's lock before giving up.
///
/// Ten seconds covers a burst of sticky processes starting together (each holds the write lock
/// for a few milliseconds) while still failing visibly if something holds it for good.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The way out when the file is not ours: sticky moves nothing and deletes nothing by itself.
const NOT_OURS: &str = "move it away or point STICKY_DB elsewhere; sticky never deletes it";

/// The way out when the location cannot be written (a read-only mount, a directory of another
/// user's). A database elsewhere starts new conversations, so it says how to take these along
/// (`export` only reads, and works on a read-only mount) rather than lose them silently.
pub(crate) const UNWRITABLE: &str = "set STICKY_DB=/writable/path to keep sticky's state \
     elsewhere (a new database there starts new conversations: to go on with one of these, \
     first `sticky export -t THREAD -o FILE` here, then `sticky import FILE` with that STICKY_DB)";

/// A store error about `file`.
pub(crate) fn store(file: &Path, what: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(StickyError::store(file, what))
}

/// The file holds no `SQLite` database, a damaged one, or another application's.
pub(crate) fn not_ours(file: &Path, why: impl std::fmt::Display) -> anyhow::Error {
    store(
        file,
        format!("is not a sticky database ({why}); {NOT_OURS}"),
    )
}

/// The file is a damaged database: `SQLite` reports it malformed, or its check found a problem.
pub(crate) fn damaged(file: &Path, why: impl std::fmt::Display) -> anyhow::Error {
    store(
        file,
        format!(
            "is damaged ({why}); sticky changed nothing and starts no new session over it: \
             restore it from a backup, or move it away to start over (sticky never deletes it)"
        ),
    )
}

/// The file was written by a sticky that knows a newer schema.
pub(crate) fn newer(file: &Path, found: i64, known: i64) -> anyhow::Error {
    store(
        file,
        format!(
            "was written by a newer sticky (schema version {found}, this sticky knows up to \
             {known}); upgrade sticky to use it (the file is left untouched)"
        ),
    )
}

/// A failed `SQLite` call while `doing` something with `file`, classified by its code.
pub(crate) fn sql(file: &Path, doing: &str, error: &rusqlite::Error) -> anyhow::Error {
    // One line: a failed statement's error quotes the statement ("... in <SQL> at offset N").
    let text = error.to_string();
    let line = text.lines().next().unwrap_or_default().trim_end();
    let why = line.strip_suffix(" in").unwrap_or(line);
    match error.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => not_ours(file, why),
        Some(ErrorCode::DatabaseCorrupt) => damaged(file, why),
        Some(ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => store(
            file,
            format!("cannot {doing}: the file or its directory is read-only ({why}); {UNWRITABLE}"),
        ),
        Some(ErrorCode::CannotOpen) => store(
            file,
            format!(
                "cannot {doing} ({why}); it must be a file in a writable directory, or \
                 {UNWRITABLE}"
            ),
        ),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            busy(file, doing, BUSY_TIMEOUT)
        }
        // Migration 5's index: the commands that can reach it check first and say more.
        Some(ErrorCode::ConstraintViolation) if why.contains("sessions.agent_session_id") => store(
            file,
            format!(
                "cannot {doing}: another thread already resumes that agent session, and one \
                 agent session is live in one thread only (`sticky threads` lists them)"
            ),
        ),
        _ => store(file, format!("cannot {doing} ({why})")),
    }
}

/// Another process held the database's lock for longer than sticky waited (`waited`): exit
/// 75, as when another turn holds the conversation, since trying again later is the way out.
pub(crate) fn busy(file: &Path, doing: &str, waited: Duration) -> anyhow::Error {
    let waited = if waited.as_secs() > 0 {
        format!("{} s", waited.as_secs())
    } else {
        format!("{} ms", waited.as_millis())
    };
    anyhow::Error::new(StickyError::Busy(format!(
        "{}: cannot {doing}: another process has held the database's lock for more than \
         {waited}; try again later (sticky's own turns hold it for milliseconds: a long hold is \
         another program, such as a sqlite3 shell left in a transaction)",
        file.display()
    )))
}

/// A failed file-system call while `doing` something for `file`.
pub(crate) fn io(file: &Path, doing: &str, error: &io::Error) -> anyhow::Error {
    let why = lowercase_first(&error.to_string());
    match error.kind() {
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
            store(file, format!("cannot {doing} ({why}); {UNWRITABLE}"))
        }
        _ => store(file, format!("cannot {doing} ({why})")),
    }
}

/// The OS says "Permission denied"; sticky's messages are lowercase throughout.
fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(chars).collect()
    })
}

/// Whether `SQLite` gave up on a lock (and the call may simply be tried again).
pub(crate) fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Runs `op` until it succeeds, fails with something other than `SQLITE_BUSY`, or
/// [`BUSY_TIMEOUT`] passes; for the calls where `SQLite` reports busy without waiting itself.
///
/// `op` must have no effect when it fails busy (one statement, or a `BEGIN`).
pub(crate) fn retry_busy<T>(
    file: &Path,
    doing: &str,
    op: impl FnMut() -> rusqlite::Result<T>,
) -> anyhow::Result<T> {
    retry_busy_for(file, doing, BUSY_TIMEOUT, op)
}

/// [`retry_busy`], giving up after `wait` instead of [`BUSY_TIMEOUT`].
pub(crate) fn retry_busy_for<T>(
    file: &Path,
    doing: &str,
    wait: Duration,
    mut op: impl FnMut() -> rusqlite::Result<T>,
) -> anyhow::Result<T> {
    let deadline = Instant::now() + wait;
    let mut pause = Duration::from_millis(1);
    loop {
        match op() {
            Err(e) if is_busy(&e) && Instant::now() < deadline => {
                #[cfg(test)]
                busy_waits::count(file);
                std::thread::sleep(pause + jitter(pause));
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) if is_busy(&e) => return Err(busy(file, doing, wait)),
            result => return result.map_err(|e| sql(file, doing, &e)),
        }
    }
}

/// Up to `pause` of noise, so processes that collided once do not retry in lockstep.
fn jitter(pause: Duration) -> Duration {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |now| now.subsec_nanos());
    let max = u32::try_from(pause.as_nanos()).unwrap_or(u32::MAX).max(1);
    Duration::from_nanos(u64::from(nanos % max))
}

/// How many times [`retry_busy`] waited on each file: the evidence a test needs that the busy
/// path was taken, not just that the call took long.
#[cfg(test)]
pub(crate) mod busy_waits {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, PoisonError};

    static WAITS: Mutex<BTreeMap<PathBuf, u32>> = Mutex::new(BTreeMap::new());

    /// Counts one wait on `file`.
    pub(crate) fn count(file: &Path) {
        let mut waits = WAITS.lock().unwrap_or_else(PoisonError::into_inner);
        *waits.entry(file.to_owned()).or_default() += 1;
    }

    /// The waits on `file` so far.
    pub(crate) fn of(file: &Path) -> u32 {
        let waits = WAITS.lock().unwrap_or_else(PoisonError::into_inner);
        waits.get(file).copied().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::{Exit, exit_for};

    #[test]
    fn every_kind_of_failure_is_a_store_error_naming_the_file() {
        let file = Path::new("/p/.sticky/sticky.db");
        let notadb = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_NOTADB),
            Some("file is not a database".into()),
        );
        let readonly = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
            None,
        );
        let denied = io::Error::from(io::ErrorKind::PermissionDenied);
        let cases = [
            (
                sql(file, "read", &notadb),
                "is not a sticky database (file is not a database); move it away",
            ),
            (sql(file, "write", &readonly), "STICKY_DB=/writable/path"),
            (io(file, "create it", &denied), "STICKY_DB=/writable/path"),
            (
                newer(file, 999, 1),
                "schema version 999, this sticky knows up to 1",
            ),
        ];
        for (error, expected) in cases {
            let text = error.to_string();
            assert!(text.starts_with("/p/.sticky/sticky.db: "), "{text}");
            assert!(text.contains(expected), "{text}");
            assert_eq!(exit_for(&error), Exit::Store, "{text}");
        }
    }

    #[test]
    fn a_failed_statement_reads_as_one_line_without_its_sql() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (x);").unwrap();
        let failed = conn
            .execute_batch("\n    CREATE TABLE t (\n        x\n    );\n")
            .unwrap_err();
        let text = sql(Path::new("/p/sticky.db"), "migrate", &failed).to_string();
        assert_eq!(
            text, "/p/sticky.db: cannot migrate (table t already exists)",
            "{failed}"
        );
    }

    #[test]
    fn os_messages_are_lowercased() {
        assert_eq!(lowercase_first("Permission denied"), "permission denied");
        assert_eq!(lowercase_first(""), "");
    }
}
