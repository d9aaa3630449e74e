//! The transaction: [`Store::immediate`] runs a closure in `BEGIN IMMEDIATE` and hands it a
//! [`Tx`], whose methods are the read-then-write steps of a turn's start (the thread, its live
//! session, a new or restarted session, the turn's row). What one reads stays true until it
//! commits, because it holds the write lock from its first statement.

use std::path::Path;

use anyhow::{Result, bail};
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};

use super::rows::session_columns;
use super::{
    ForkedFrom, Mode, NewSession, SessionRow, Store, ThreadRow, TurnRow, error, intact, now, rows,
    search, totals,
};

/// A `BEGIN IMMEDIATE` transaction, given to the closure of [`Store::immediate`]: it holds the
/// write lock from its first statement, so what it reads stays true until it commits.
#[allow(clippy::struct_field_names)] // `tx.tx` is the transaction inside the wrapper
pub struct Tx<'a> {
    pub(super) tx: Transaction<'a>,
    pub(super) path: &'a Path,
    /// Whether the transaction wrote a session row (see [`Store::keep_sessions_in_file`]).
    pub(super) sessions_changed: std::cell::Cell<bool>,
    /// The thread this transaction created, if any: a session started in any other thread is
    /// one the file already had, so the file is proved intact first (see `intact`).
    pub(super) created_thread: std::cell::Cell<Option<i64>>,
}

impl Store {
    /// Runs `f` in a `BEGIN IMMEDIATE` transaction, committing when it returns `Ok` and rolling
    /// back when it fails. Waits (up to the busy timeout) while another process writes.
    pub fn immediate<T>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T> {
        let (conn, path) = (&self.conn, self.path.as_path());
        let tx = error::retry_busy_for(path, "lock the database", self.wait, || {
            Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        })?;
        let tx = Tx {
            tx,
            path,
            sessions_changed: std::cell::Cell::new(false),
            created_thread: std::cell::Cell::new(None),
        };
        let value = f(&tx)?;
        let sessions_changed = tx.sessions_changed.get();
        tx.tx
            .commit()
            .map_err(|e| error::sql(path, "commit a transaction", &e))?;
        if sessions_changed {
            self.keep_sessions_in_file();
        }
        Ok(value)
    }
}

impl Tx<'_> {
    /// The thread named `name`, created now if it does not exist. Creating one in a file that
    /// already holds rows first proves the file intact: damage that hid the thread must not
    /// become a fresh conversation.
    pub fn ensure_thread(&self, name: &str) -> Result<ThreadRow> {
        // Nearly every turn finds its thread: one statement then, the insert only for a new one.
        if let Some(thread) = self.read(rows::thread_by_name(&self.tx, name))? {
            return Ok(thread);
        }
        let created = self.write(self.tx.execute(
            "INSERT INTO threads (name, created_at) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING",
            params![name, now()],
        ))?;
        let Some(thread) = self.read(rows::thread_by_name(&self.tx, name))? else {
            bail!("thread {name:?} vanished inside its own transaction")
        };
        if created == 1 {
            self.created_thread.set(Some(thread.id));
            if self.read(intact::is_used(&self.tx, thread.id))? {
                intact::prove(&self.tx, self.path)?;
            }
        }
        Ok(thread)
    }

    /// Whether this transaction created thread `thread_id`.
    pub fn created_now(&self, thread_id: i64) -> bool {
        self.created_thread.get() == Some(thread_id)
    }

    /// Records that thread `thread_id` is named after git branch `branch`.
    pub fn record_branch(&self, thread_id: i64, branch: &str) -> Result<()> {
        let changed = self.write(self.tx.execute(
            "UPDATE threads SET branch = ?2 WHERE id = ?1",
            params![thread_id, branch],
        ))?;
        if changed == 1 {
            Ok(())
        } else {
            bail!("thread {thread_id} vanished inside its own transaction")
        }
    }

    /// Records that `STICKY_DB` chose this database at `path` (its canonical path), when no
    /// path is recorded yet ([`Store::kept_at`]): the first, never replaced, so a copy of the
    /// file kept under another `STICKY_DB` goes on naming its original whatever turns it runs
    /// (review 17, M3); a database moved since names a path where it no longer is, which
    /// `cmd::kept::recorded_database` passes over.
    pub fn record_kept_at(&self, path: &str) -> Result<()> {
        let added = self.write(
            self.tx
                .prepare_cached(
                    "INSERT INTO kept_at (path) SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM kept_at)",
                )
                .and_then(|mut statement| statement.execute([path])),
        )?;
        // Kept in the file itself, as sessions are: a copy of the file alone carries it.
        if added > 0 {
            self.sessions_changed.set(true);
        }
        Ok(())
    }

    /// Records that the database is now at `path` (its canonical path) beside the paths
    /// recorded before ([`Store::kept_at`]), when it is not among them: `relocate` after the
    /// project moved with its `STICKY_DB` inside it (review 20, M3), so a copy of the moved
    /// project names its original's new place, not only the first, which the move left. Adds
    /// only: the first path stays (review 17, M3), and a turn never adds one.
    pub fn add_kept_at(&self, path: &str) -> Result<()> {
        let added = self.write(
            self.tx
                .prepare_cached(
                    "INSERT INTO kept_at (path) SELECT ?1 \
                     WHERE NOT EXISTS (SELECT 1 FROM kept_at WHERE path = ?1)",
                )
                .and_then(|mut statement| statement.execute([path])),
        )?;
        if added > 0 {
            self.sessions_changed.set(true);
        }
        Ok(())
    }

    /// The live session of a thread, if any.
    pub fn live_session(&self, thread_id: i64) -> Result<Option<SessionRow>> {
        self.read(rows::live_session(&self.tx, thread_id))
    }

    /// The live session of a thread with the number of turns run on it, if it has one.
    pub fn live_session_and_turns(&self, thread_id: i64) -> Result<Option<(SessionRow, i64)>> {
        self.read(rows::live_session_and_turns(&self.tx, thread_id))
    }

    /// Starts a new live session on a thread. With `rotated_from`, the session it replaces must
    /// be the thread's live one and gets `ended_at` now; without it, the thread must have none.
    ///
    /// In a thread the file already had, the file is proved intact first: damage that hid the
    /// live session must not become a second one.
    pub fn start_session(&self, thread_id: i64, new: &NewSession<'_>) -> Result<SessionRow> {
        if self.created_thread.get() != Some(thread_id) {
            intact::prove(&self.tx, self.path)?;
        }
        self.sessions_changed.set(true);
        let now = now();
        match new.rotated_from {
            Some((old, _)) => {
                let ended = self.write(self.tx.execute(
                    "UPDATE sessions SET ended_at = ?3 \
                     WHERE id = ?1 AND thread_id = ?2 AND ended_at IS NULL",
                    params![old, thread_id, now],
                ))?;
                if ended != 1 {
                    bail!("session {old} is not the live session of thread {thread_id}");
                }
                self.write(totals::end_session(&self.tx, old))?;
            }
            None => {
                if let Some(live) = self.live_session(thread_id)? {
                    bail!(
                        "thread {thread_id} already has a live session ({}); rotate it instead",
                        live.id
                    );
                }
            }
        }
        let sql = concat!(
            "INSERT INTO sessions (thread_id, agent, model, agent_session_id, directory, \
             created_at, rotated_from, rotation_reason, carried, carried_bytes) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING ",
            session_columns!()
        );
        let (rotated_from, reason) = new.rotated_from.unzip();
        let (carried, carried_bytes) = new.carried.unzip();
        self.write(self.tx.query_row(
            sql,
            params![
                thread_id,
                new.agent,
                new.model,
                new.agent_session_id,
                rows::path_to_sql(new.directory),
                now,
                rotated_from,
                reason,
                carried,
                carried_bytes,
            ],
            rows::session,
        ))
    }

    /// Records that the new session `session_id` is a fork of `from` (`sticky fork`);
    /// `confirmed` when the agent has the fork already (a copy of the source's files).
    pub fn mark_fork(
        &self,
        session_id: i64,
        from: &ForkedFrom,
        confirmed: bool,
    ) -> Result<SessionRow> {
        let sql = concat!(
            "UPDATE sessions SET forked_from = ?2, forked_from_thread = ?3, forked_from_id = ?4, \
             confirmed_at = ?5 WHERE id = ?1 RETURNING ",
            session_columns!()
        );
        let confirmed_at = confirmed.then(now);
        self.write(self.tx.query_row(
            sql,
            params![
                session_id,
                from.session,
                from.thread,
                from.agent_session_id,
                confirmed_at
            ],
            rows::session,
        ))
    }

    /// Starts an unconfirmed live session again in place (the agent never created it): new
    /// agent, model and session ID, `confirmed_at` cleared. A confirmed or ended session is
    /// refused, because replacing its ID would lose a conversation the agent really has.
    pub fn restart_session(
        &self,
        session_id: i64,
        agent: &str,
        model: Option<&str>,
        agent_session_id: Option<&str>,
    ) -> Result<SessionRow> {
        self.sessions_changed.set(true);
        let sql = concat!(
            "UPDATE sessions SET agent = ?2, model = ?3, agent_session_id = ?4, \
             confirmed_at = NULL WHERE id = ?1 AND confirmed_at IS NULL AND ended_at IS NULL \
             RETURNING ",
            session_columns!()
        );
        let restarted = self.write(
            self.tx
                .query_row(
                    sql,
                    params![session_id, agent, model, agent_session_id],
                    rows::session,
                )
                .optional(),
        )?;
        match restarted {
            Some(session) => Ok(session),
            None => bail!(
                "session {session_id} cannot be restarted in place: it is missing, confirmed \
                 by the agent, or ended"
            ),
        }
    }

    /// Marks every `running` turn of the thread abandoned; returns how many. The caller holds
    /// the thread's turn lock (see `crate::lock`), so no live process can be running them: a
    /// running row left behind means its sticky died without recording the end.
    ///
    /// Looks before it writes: there is rarely anything to mark, and compiling the UPDATE costs
    /// about eight times the query (0.12 ms against 0.015 on the benchmark's VM), on every turn.
    /// The look is in two steps, each cheaper than the one before (callgrind): whether the file
    /// holds any running turn at all (19 k instructions: the partial index `turns_running`
    /// holds only those, nearly always none), then whether one is this thread's (a join, 51 k;
    /// `IN (SELECT ...)` built a temporary index of the thread's sessions, 64 k).
    pub fn abandon_running_turns(&self, thread_id: i64) -> Result<usize> {
        let any = self.write(
            self.tx
                .query_row("SELECT 1 FROM turns WHERE status = 'running'", [], |_| {
                    Ok(())
                })
                .optional(),
        )?;
        if any.is_none() {
            return Ok(0);
        }
        let ours: bool = self.write(self.tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM sessions AS s JOIN turns AS t ON t.session_id = s.id \
             WHERE s.thread_id = ?1 AND t.status = 'running')",
            [thread_id],
            |row| row.get(0),
        ))?;
        if !ours {
            return Ok(0);
        }
        // An abandoned turn never reached `finish_turn`: its prompt enters the index here.
        self.write(search::index(&self.tx, || {
            self.tx.execute(search::INDEX_ABANDONED, [thread_id])
        }))?;
        self.write(self.tx.execute(
            "UPDATE turns SET status = 'abandoned', ended_at = ?2 WHERE status = 'running' \
             AND session_id IN (SELECT id FROM sessions WHERE thread_id = ?1)",
            params![thread_id, now()],
        ))
    }

    /// Records the start of a turn (status `running`, `started_at` now); returns its id.
    pub fn begin_turn(
        &self,
        session_id: i64,
        prompt: Option<&str>,
        mode: Mode,
        pid: u32,
        host: &str,
    ) -> Result<i64> {
        self.write(self.tx.execute(
            "UPDATE sessions SET turn_count = turn_count + 1 WHERE id = ?1",
            [session_id],
        ))?;

        // The new id from the connection, not `RETURNING id`, which cost 29 k instructions to
        // compile and run.
        self.write(self.tx.execute(
            "INSERT INTO turns (session_id, prompt, mode, pid, host, started_at, status) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running')",
            params![session_id, prompt, mode, pid, host, now()],
        ))?;
        // The turn enters the search index when it ends (`finish_turn`) or is found
        // abandoned: one FTS5 write a turn, not an insert and an update.
        Ok(self.tx.last_insert_rowid())
    }

    /// Records why sticky ran a turn itself (`handoff`), in the transaction that began it.
    pub fn set_turn_purpose(&self, turn_id: i64, purpose: &str) -> Result<()> {
        self.write(self.tx.execute(
            "UPDATE turns SET purpose = ?2 WHERE id = ?1",
            params![turn_id, purpose],
        ))?;
        Ok(())
    }

    /// The running turn of a session (the oldest, should there be several), if any.
    pub fn running_turn(&self, session_id: i64) -> Result<Option<TurnRow>> {
        self.read(rows::running_turn(&self.tx, session_id))
    }

    pub(super) fn read<T>(&self, result: rusqlite::Result<T>) -> Result<T> {
        result.map_err(|e| error::sql(self.path, "read", &e))
    }

    pub(super) fn write<T>(&self, result: rusqlite::Result<T>) -> Result<T> {
        result.map_err(|e| error::sql(self.path, "write", &e))
    }
}
