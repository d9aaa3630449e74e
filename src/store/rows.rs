//! Rows to Rust values and back: the column lists, the text forms of modes and statuses, and
//! the queries that both [`Store`](super::Store) and [`Tx`](super::Tx) answer.
//!
//! The lookups here are what `sticky status` and the start of a turn run, so each one is an
//! index search whatever the number of turns (pinned by `status_queries_never_scan` and
//! `status_work_does_not_grow_with_the_number_of_turns` in the store's tests).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, ValueRef};
use rusqlite::{Connection, OptionalExtension, Params, Row, ToSql};

use super::{Mode, SessionRow, ThreadRow, TurnLedger, TurnRow, TurnStatus};
use crate::agent::ledger::Figures;

impl Mode {
    /// The text stored in the database (and shown to users).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Headless => "headless",
            Self::Interactive => "interactive",
        }
    }
}

impl TurnStatus {
    /// The text stored in the database (and shown to users).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Interrupted => "interrupted",
            Self::Abandoned => "abandoned",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Display for TurnStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ToSql for Mode {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl ToSql for TurnStatus {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for Mode {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        match value.as_str()? {
            "headless" => Ok(Self::Headless),
            "interactive" => Ok(Self::Interactive),
            other => Err(unknown("turn mode", other)),
        }
    }
}

impl FromSql for TurnStatus {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        match value.as_str()? {
            "running" => Ok(Self::Running),
            "ok" => Ok(Self::Ok),
            "failed" => Ok(Self::Failed),
            "interrupted" => Ok(Self::Interrupted),
            "abandoned" => Ok(Self::Abandoned),
            other => Err(unknown("turn status", other)),
        }
    }
}

/// A text this binary does not know (written by a newer sticky or by hand).
fn unknown(what: &str, text: &str) -> FromSqlError {
    FromSqlError::Other(format!("unknown {what} {text:?}").into())
}

/// A path as `SQLite` stores it: TEXT when it is UTF-8 (readable in the sqlite3 shell), else its
/// bytes as a BLOB, so no Unix path is ever altered on the way through.
pub(crate) fn path_to_sql(path: &Path) -> ToSqlOutput<'_> {
    let bytes = path.as_os_str().as_bytes();
    match std::str::from_utf8(bytes) {
        Ok(text) => text.into(),
        Err(_) => bytes.into(),
    }
}

/// The inverse of [`path_to_sql`].
fn path_from_sql(row: &Row<'_>, index: usize) -> rusqlite::Result<PathBuf> {
    match row.get_ref(index)? {
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => Ok(OsStr::from_bytes(bytes).into()),
        other => Err(rusqlite::Error::InvalidColumnType(
            index,
            "directory".into(),
            other.data_type(),
        )),
    }
}

// The column lists of the row types, in field order, as macros so `concat!` can build whole
// statements at compile time and the readers below index them by position.

/// The columns of [`ThreadRow`], in field order.
macro_rules! thread_columns {
    () => {
        "id, name, created_at, branch"
    };
}

/// The columns of [`SessionRow`], in field order.
macro_rules! session_columns {
    () => {
        "id, thread_id, agent, model, agent_session_id, directory, created_at, confirmed_at, \
         rotated_from, rotation_reason, ended_at, carried, carried_bytes, forked_from, \
         forked_from_thread, forked_from_id"
    };
}

/// The columns of [`TurnRow`], in field order.
macro_rules! turn_columns {
    () => {
        "id, session_id, prompt, mode, pid, host, started_at, ended_at, status, exit_code, \
         signal, duration_ms, cost_usd, input_tokens, output_tokens, error, answer_bytes, \
         cached_tokens, context_tokens, context_window, purpose"
    };
}

pub(crate) use {session_columns, thread_columns, turn_columns};

/// A [`ThreadRow`] from the [`thread_columns`] columns.
pub(crate) fn thread(row: &Row<'_>) -> rusqlite::Result<ThreadRow> {
    Ok(ThreadRow {
        id: row.get(0)?,
        name: row.get(1)?,
        created_at: row.get(2)?,
        branch: row.get(3)?,
    })
}

/// How many columns [`session_columns`] names: a query that selects more reads them from here.
const SESSION_COLUMNS: usize = 16;

/// A [`SessionRow`] from the [`session_columns`] columns.
pub(crate) fn session(row: &Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        id: row.get(0)?,
        thread_id: row.get(1)?,
        agent: row.get(2)?,
        model: row.get(3)?,
        agent_session_id: row.get(4)?,
        directory: path_from_sql(row, 5)?,
        created_at: row.get(6)?,
        confirmed_at: row.get(7)?,
        rotated_from: row.get(8)?,
        rotation_reason: row.get(9)?,
        ended_at: row.get(10)?,
        carried: row.get(11)?,
        carried_bytes: row.get(12)?,
        forked_from: match row.get::<_, Option<i64>>(13)? {
            Some(session) => Some(super::ForkedFrom {
                session,
                thread: row.get(14)?,
                agent_session_id: row.get(15)?,
            }),
            None => None,
        },
    })
}

/// The figures of a ledger in four columns from `first`: cost, input, output and cached
/// tokens (the order of the totals' and usage's queries).
pub(crate) fn figures(row: &Row<'_>, first: usize) -> rusqlite::Result<Figures> {
    Ok(Figures {
        cost_usd: row.get(first)?,
        input_tokens: row.get(first + 1)?,
        output_tokens: row.get(first + 2)?,
        cached_tokens: row.get(first + 3)?,
    })
}

/// A [`TurnRow`] from the [`turn_columns`] columns.
pub(crate) fn turn(row: &Row<'_>) -> rusqlite::Result<TurnRow> {
    Ok(TurnRow {
        id: row.get(0)?,
        session_id: row.get(1)?,
        prompt: row.get(2)?,
        mode: row.get(3)?,
        pid: row.get(4)?,
        host: row.get(5)?,
        started_at: row.get(6)?,
        ended_at: row.get(7)?,
        status: row.get(8)?,
        exit_code: row.get(9)?,
        signal: row.get(10)?,
        duration_ms: row.get(11)?,
        ledger: TurnLedger {
            figures: Figures {
                cost_usd: row.get(12)?,
                input_tokens: row.get(13)?,
                output_tokens: row.get(14)?,
                cached_tokens: row.get(17)?,
            },
            error: row.get(15)?,
            context_tokens: row.get(18)?,
            context_window: row.get(19)?,
        },
        answer_bytes: row.get(16)?,
        purpose: row.get(20)?,
    })
}

/// The SQL of the lookups that `sticky status` and the start of a turn run, as constants so
/// the tests can check their query plans.
pub(crate) mod sql {
    /// A thread by name (the unique index on `threads.name`).
    pub(crate) const THREAD_BY_NAME: &str = concat!(
        "SELECT ",
        thread_columns!(),
        " FROM threads WHERE name = ?1"
    );
    /// The live session of a thread (the partial unique index `sessions_live`), then its turn
    /// count: the start of a turn reads both, and one statement costs less than two.
    pub(crate) const LIVE_SESSION: &str = concat!(
        "SELECT ",
        session_columns!(),
        ", turn_count FROM sessions WHERE thread_id = ?1 AND ended_at IS NULL"
    );
    /// A session by id.
    pub(crate) const SESSION_BY_ID: &str = concat!(
        "SELECT ",
        session_columns!(),
        " FROM sessions WHERE id = ?1"
    );
    /// The newest turn of a thread: the newest turn of its newest session that has any (two
    /// index seeks, whatever the number of turns and sessions). A thread runs one turn at a time,
    /// always on its live session, and turn ids grow with time, so no older session can hold a
    /// newer turn. Visiting every session instead (the newest turn of each, then the newest of
    /// those) made `sticky status` grow with the rotations: 2.1 M to 5.6 M instructions at 1 000.
    pub(crate) const LAST_TURN: &str = concat!(
        "SELECT ",
        turn_columns!(),
        " FROM turns WHERE session_id = (SELECT id FROM sessions \
         WHERE thread_id = ?1 AND turn_count > 0 ORDER BY id DESC LIMIT 1) \
         ORDER BY id DESC LIMIT 1"
    );
    /// The ledger of one session (the totals `store::totals` keeps on its row).
    pub(crate) const SESSION_TOTALS: &str = "SELECT turn_count, total_cost_usd, \
         total_input_tokens, total_output_tokens, total_cached_tokens FROM sessions WHERE id = ?1";
    /// The ledger of a thread: its past (its ended sessions) plus its live session.
    pub(crate) const THREAD_TOTALS: &str = "SELECT t.past_turn_count + coalesce(s.turn_count, 0), \
         coalesce(t.past_cost_usd + s.total_cost_usd, t.past_cost_usd, s.total_cost_usd), \
         coalesce(t.past_input_tokens + s.total_input_tokens, t.past_input_tokens, \
             s.total_input_tokens), \
         coalesce(t.past_output_tokens + s.total_output_tokens, t.past_output_tokens, \
             s.total_output_tokens), \
         coalesce(t.past_cached_tokens + s.total_cached_tokens, t.past_cached_tokens, \
             s.total_cached_tokens) \
         FROM threads AS t LEFT JOIN sessions AS s ON s.thread_id = t.id AND s.ended_at IS NULL \
         WHERE t.id = ?1";
    /// The oldest running turn of a session (the partial index `turns_running`).
    pub(crate) const RUNNING_TURN: &str = concat!(
        "SELECT ",
        turn_columns!(),
        " FROM turns WHERE session_id = ?1 AND status = 'running' ORDER BY id LIMIT 1"
    );
}

/// How a row of one of the row types is read.
pub(crate) type Read<T> = fn(&Row<'_>) -> rusqlite::Result<T>;

/// The first row `sql` finds with `params`, read by `read`, if there is one.
pub(crate) fn one<T>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
    read: Read<T>,
) -> rusqlite::Result<Option<T>> {
    conn.prepare_cached(sql)?.query_row(params, read).optional()
}

/// Every row `sql` finds with `params`, read by `read`, in the order the statement gives.
pub(crate) fn all<T>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
    read: Read<T>,
) -> rusqlite::Result<Vec<T>> {
    conn.prepare_cached(sql)?.query_map(params, read)?.collect()
}

/// The thread named `name`.
pub(crate) fn thread_by_name(conn: &Connection, name: &str) -> rusqlite::Result<Option<ThreadRow>> {
    one(conn, sql::THREAD_BY_NAME, [name], thread)
}

/// The live session of a thread.
pub(crate) fn live_session(
    conn: &Connection,
    thread_id: i64,
) -> rusqlite::Result<Option<SessionRow>> {
    one(conn, sql::LIVE_SESSION, [thread_id], session)
}

/// The live session of a thread with its turn count, if it has one.
pub(crate) fn live_session_and_turns(
    conn: &Connection,
    thread_id: i64,
) -> rusqlite::Result<Option<(SessionRow, i64)>> {
    conn.prepare_cached(sql::LIVE_SESSION)?
        .query_row([thread_id], |row| {
            Ok((session(row)?, row.get(SESSION_COLUMNS)?))
        })
        .optional()
}

/// A session by id.
pub(crate) fn session_by_id(
    conn: &Connection,
    session_id: i64,
) -> rusqlite::Result<Option<SessionRow>> {
    one(conn, sql::SESSION_BY_ID, [session_id], session)
}

/// The oldest running turn of a session.
pub(crate) fn running_turn(
    conn: &Connection,
    session_id: i64,
) -> rusqlite::Result<Option<TurnRow>> {
    one(conn, sql::RUNNING_TURN, [session_id], turn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_statuses_round_trip_through_their_text() {
        for mode in [Mode::Headless, Mode::Interactive] {
            let text = mode.as_str();
            assert_eq!(
                Mode::column_result(ValueRef::Text(text.as_bytes())).unwrap(),
                mode
            );
        }
        for status in [
            TurnStatus::Running,
            TurnStatus::Ok,
            TurnStatus::Failed,
            TurnStatus::Interrupted,
            TurnStatus::Abandoned,
        ] {
            let text = status.as_str();
            let back = TurnStatus::column_result(ValueRef::Text(text.as_bytes())).unwrap();
            assert_eq!(back, status);
        }
        assert!(TurnStatus::column_result(ValueRef::Text(b"paused")).is_err());
        assert!(Mode::column_result(ValueRef::Integer(1)).is_err());
    }

    #[test]
    fn non_utf8_paths_survive_the_database() {
        let conn = Connection::open_in_memory().unwrap();
        let weird = PathBuf::from(OsStr::from_bytes(b"/tmp/caf\xe9"));
        for path in [Path::new("/home/me/project"), weird.as_path()] {
            let back: PathBuf = conn
                .query_row("SELECT ?1", [path_to_sql(path)], |row| {
                    path_from_sql(row, 0)
                })
                .unwrap();
            assert_eq!(back, path);
        }
        let kind: String = conn
            .query_row("SELECT typeof(?1)", [path_to_sql(Path::new("/a"))], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(
            kind, "text",
            "UTF-8 paths stay readable in the sqlite3 shell"
        );
    }
}
