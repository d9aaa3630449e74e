//! The project's `SQLite` store: the only module that knows SQL.
//!
//! One file per project (`.sticky/sticky.db`) holds the conversations (threads), the agent
//! sessions attached to them and the turns run on those sessions. Opening sets WAL and an
//! explicit busy timeout and runs the append-only migrations under `BEGIN IMMEDIATE`, because
//! many sticky processes starting in one directory at the same moment is normal (CI matrices,
//! parallel panes). Every read-then-write goes through [`Store::immediate`].
//!
//! This file holds [`Store`] and its reads. Submodules: `model` (the row types, re-exported
//! here), `tx` (the transaction, [`Tx`]), `writes` (the one-statement writes: a session's ID and
//! confirmation, a turn's end), `open` (file, pragmas), `schema` (migrations), `rows` (row
//! mapping and the indexed lookups), `error` (how failures read, and the retries of a busy
//! file). Every failure is an `anyhow` error whose chain holds
//! [`StickyError::Store`](crate::exit::StickyError::Store).

mod answer;
mod error;
mod intact;
mod model;
mod open;
mod rows;
mod schema;
mod search;
#[cfg(test)]
mod tests;
mod totals;
mod transfer;
mod tx;
mod usage;
mod vault;
mod writes;

use std::path::{Path, PathBuf};

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension};

use rows::{session_columns, thread_columns, turn_columns};
pub use search::{Found, MATCH_END, MATCH_START, query as search_query};
pub use usage::{UsageSession, UsageTurn};
pub use vault::{Forgotten, RestoreRow};

pub(crate) use error::UNWRITABLE;
pub(crate) use error::io as io_error;

pub use answer::MAX_ANSWER;
pub use model::*;
pub use tx::Tx;

/// An open project database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// How long [`Store::immediate`] waits for another process's write lock.
    wait: std::time::Duration,
}

impl Store {
    /// Opens the database at `path`, creating what is missing: the parent directory (mode 0700;
    /// when it is named `.sticky`, with a `.gitignore` containing `*`) and the file (mode 0600).
    /// Sets WAL, a busy timeout, foreign keys and `synchronous = NORMAL`, and migrates the schema
    /// under `BEGIN IMMEDIATE`. A file that is not a sticky database, or was written by a newer
    /// sticky, is refused and left byte-for-byte untouched.
    pub fn open(path: &Path) -> Result<Store> {
        open::create_file(path)?;
        Self::connect(path)
    }

    /// Opens an existing database like [`Store::open`], but creates nothing: `Ok(None)` when
    /// there is no file at `path` (for commands that only look, such as `sticky status`). A
    /// file that cannot be written (or whose directory cannot) is opened read-only.
    pub fn open_existing(path: &Path) -> Result<Option<Store>> {
        match path.try_exists() {
            Ok(true) if !open::writable(path) => Ok(Some(Store {
                conn: open::connect_read_only(path)?,
                path: path.to_owned(),
                wait: error::BUSY_TIMEOUT,
            })),
            Ok(true) => Self::connect(path).map(Some),
            Ok(false) => Ok(None),
            Err(e) => Err(error::io(path, "look for the database", &e)),
        }
    }

    /// Opens the existing database at `path` read-only, whoever may write it: another
    /// project's state, looked at and never migrated or written.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        Ok(Store {
            conn: open::connect_read_only(path)?,
            path: path.to_owned(),
            wait: error::BUSY_TIMEOUT,
        })
    }

    /// Whether the regular file at `path` is a sticky database, of this sticky's schema or an
    /// older one, looked at read-only: for a database named by what came from elsewhere (a
    /// bundle, a copied state) before it is looked at as a listed project's is.
    pub fn is_sticky(path: &Path) -> bool {
        open::is_sticky(path)
    }

    /// Whether the file at `path` says, in its header, that its schema is one only a sticky
    /// that stamps its databases writes ([`schema::STAMPED_SINCE`]). Reads the file's first
    /// bytes, which a copy of the file alone carries, and opens no connection (nothing is made
    /// beside it); a page not yet checkpointed from its WAL reads as the older version it was.
    pub fn postdates_stamps(path: &Path) -> bool {
        open::header_version(path).is_some_and(|version| version >= schema::STAMPED_SINCE)
    }

    /// Whether the database at `path` holds a session, looked at read-only; `true` when it
    /// cannot tell. A database made a moment ago by a concurrent first turn has none until
    /// that turn, which stamps it first, begins.
    pub fn holds_sessions(path: &Path) -> bool {
        Self::open_read_only(path)
            .and_then(|store| {
                store.run("look for a session", || {
                    store
                        .conn
                        .query_row("SELECT EXISTS (SELECT 1 FROM sessions)", [], |row| {
                            row.get(0)
                        })
                })
            })
            .unwrap_or(true)
    }

    /// Opens another listed project's existing database to look at it: read-only when its
    /// schema is this sticky's, so nothing there is written or waited for. An older schema
    /// cannot answer this sticky's queries read-only, so a writable one is brought up to date
    /// first, as that project's own next turn would; `Ok(None)` when there is no file.
    pub fn open_elsewhere(path: &Path) -> Result<Option<Store>> {
        match path.try_exists() {
            Ok(true) => match Self::open_read_only(path) {
                Ok(store) => Ok(Some(store)),
                Err(_) if open::writable(path) => Self::connect(path).map(Some),
                Err(error) => Err(error),
            },
            Ok(false) => Ok(None),
            Err(e) => Err(error::io(path, "look for the database", &e)),
        }
    }

    fn connect(path: &Path) -> Result<Store> {
        Ok(Store {
            conn: open::connect(path)?,
            path: path.to_owned(),
            wait: error::BUSY_TIMEOUT,
        })
    }

    /// Makes [`Store::immediate`] give up after `wait` when another process holds the write
    /// lock (`--no-wait`), instead of the usual busy timeout; a failure then exits 75.
    pub fn wait_for_lock_at_most(&mut self, wait: std::time::Duration) -> Result<()> {
        self.wait = wait;
        self.conn
            .busy_timeout(wait)
            .map_err(|e| error::sql(&self.path, "set the busy timeout", &e))
    }

    /// Lets go of the store at the end of a command without closing its connection, which the
    /// process's exit then closes. Closing frees every schema object and cached statement one by
    /// one and unmaps the WAL's index: 112 k instructions of a turn's 2.7 M (callgrind), work the
    /// exit does at once. Nothing is lost: every change is committed, closing would not
    /// checkpoint (see `open`), and the kernel lets go of the file's locks as after any exit.
    /// Only for a process about to exit: one that went on would keep the file open.
    pub fn leave_open_until_exit(self) {
        std::mem::forget(self.conn);
    }

    /// Where `STICKY_DB` kept this database: where a turn first found it (`Tx::record_kept_at`),
    /// then where each `relocate` found it after a move (`Tx::add_kept_at`), oldest first; none
    /// for one a turn only ever used as a project's `.sticky/sticky.db`. A copy of the file says
    /// where its original was; as untrusted as the file (`cmd::kept::recorded_database`).
    pub fn kept_at(&self) -> Result<Vec<PathBuf>> {
        self.run("read the database", || {
            let mut statement = self
                .conn
                .prepare("SELECT path FROM kept_at ORDER BY rowid")?;
            let paths = statement.query_map([], |row| row.get::<_, String>(0))?;
            paths.collect::<rusqlite::Result<Vec<String>>>()
        })
        .map(|paths| paths.into_iter().map(PathBuf::from).collect())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the WAL into the database file after a session row changed. The WAL stays beside
    /// the file between runs (a checkpoint on every close cost each turn four fsyncs), so a copy
    /// of the file alone (`STICKY_DB` pointing at a cached file, a backup) could miss the newest
    /// commits; sessions must never be among them, or the copy would start a fresh session and
    /// forget the conversation. Sessions change rarely (a first turn, a rotation), so this costs
    /// little; turns may still live in the WAL until the next automatic checkpoint. Best effort:
    /// a checkpoint that readers hold up completes at the next one.
    fn keep_sessions_in_file(&self) {
        let _ = self
            .conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
    }

    /// Proves the file intact when it holds any rows: for a reader about to say "no session
    /// yet", which damage that hid the session would otherwise make it say (see `intact`).
    pub fn prove_intact_if_used(&self) -> Result<()> {
        if self.run("read the database", || intact::is_used(&self.conn, 0))? {
            intact::prove(&self.conn, &self.path)?;
        }
        Ok(())
    }

    /// The thread named `name`, if it exists.
    pub fn thread(&self, name: &str) -> Result<Option<ThreadRow>> {
        self.run("read the thread", || rows::thread_by_name(&self.conn, name))
    }

    /// Every thread, oldest first.
    pub fn threads(&self) -> Result<Vec<ThreadRow>> {
        self.run("read the threads", || {
            let sql = concat!("SELECT ", thread_columns!(), " FROM threads ORDER BY id");
            rows::all(&self.conn, sql, [], rows::thread)
        })
    }

    /// The live session of a thread (the one not yet replaced), if any.
    pub fn live_session(&self, thread_id: i64) -> Result<Option<SessionRow>> {
        self.run("read the session", || {
            rows::live_session(&self.conn, thread_id)
        })
    }

    /// A session by row id.
    pub fn session(&self, session_id: i64) -> Result<Option<SessionRow>> {
        self.run("read the session", || {
            rows::session_by_id(&self.conn, session_id)
        })
    }

    /// Every session of a thread, oldest first (the last one is the live one, if any).
    pub fn sessions(&self, thread_id: i64) -> Result<Vec<SessionRow>> {
        self.run("read the sessions", || {
            let sql = concat!(
                "SELECT ",
                session_columns!(),
                " FROM sessions WHERE thread_id = ?1 ORDER BY id"
            );
            rows::all(&self.conn, sql, [thread_id], rows::session)
        })
    }

    /// The newest turn of a thread, across all its sessions.
    pub fn last_turn(&self, thread_id: i64) -> Result<Option<TurnRow>> {
        self.run("read the last turn", || {
            rows::one(&self.conn, rows::sql::LAST_TURN, [thread_id], rows::turn)
        })
    }

    /// A turn by row id.
    pub fn turn(&self, turn_id: i64) -> Result<Option<TurnRow>> {
        self.run("read the turn", || {
            let sql = concat!("SELECT ", turn_columns!(), " FROM turns WHERE id = ?1");
            rows::one(&self.conn, sql, [turn_id], rows::turn)
        })
    }

    /// How many turns ran on a session (a stored count: fast at any size).
    pub fn turn_count(&self, session_id: i64) -> Result<i64> {
        self.run("count the turns", || {
            self.conn
                .prepare_cached("SELECT turn_count FROM sessions WHERE id = ?1")?
                .query_row([session_id], |row| row.get(0))
        })
    }

    /// Every turn of a thread across all its sessions, oldest first.
    pub fn turns(&self, thread_id: i64) -> Result<Vec<TurnRow>> {
        self.run("read the turns", || {
            let sql = concat!(
                "SELECT ",
                turn_columns!(),
                " FROM turns WHERE session_id IN (SELECT id FROM sessions WHERE thread_id = ?1) \
                 ORDER BY id"
            );
            rows::all(&self.conn, sql, [thread_id], rows::turn)
        })
    }

    /// The answer kept with a turn, if it has one (see `answer` for how it is stored).
    pub fn answer(&self, turn_id: i64) -> Result<Option<StoredAnswer>> {
        let stored: Option<(Vec<u8>, Option<String>, i64)> = self.run("read the answer", || {
            self.conn
                .prepare_cached(
                    "SELECT answer, answer_encoding, answer_bytes FROM turns \
                     WHERE id = ?1 AND answer IS NOT NULL",
                )?
                .query_row([turn_id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
                .optional()
        })?;
        let Some((stored, encoding, bytes)) = stored else {
            return Ok(None);
        };
        self.decoded(turn_id, (&stored, encoding.as_deref()), bytes)
            .map(Some)
    }

    /// The answer of turn `turn_id` from its stored bytes and encoding, `bytes` long whole.
    fn decoded(
        &self,
        turn_id: i64,
        (stored, encoding): (&[u8], Option<&str>),
        bytes: i64,
    ) -> Result<StoredAnswer> {
        let text = answer::decode(stored, encoding).map_err(|problem| {
            error::store(
                &self.path,
                format!("holds an answer of turn {turn_id} that cannot be read: {problem}"),
            )
        })?;
        Ok(StoredAnswer { text, bytes })
    }

    /// What a turn's ledger starts from, in one statement: how many turns the session has run
    /// (this one included), and the running totals the agent reported at the newest earlier
    /// turn that has them, as stored JSON.
    pub fn ledger_baseline(&self, session_id: i64, turn_id: i64) -> Result<(i64, Option<String>)> {
        self.run("read the previous totals", || {
            self.conn
                .prepare_cached(
                    "SELECT turn_count, (SELECT reported_totals FROM turns WHERE session_id = ?1 \
                     AND id < ?2 AND reported_totals IS NOT NULL ORDER BY id DESC LIMIT 1) \
                     FROM sessions WHERE id = ?1",
                )?
                .query_row([session_id, turn_id], |row| Ok((row.get(0)?, row.get(1)?)))
        })
    }

    /// The ledger of one session (`Some(id)`) or of a whole thread, read from the totals kept
    /// on its row (see `totals`): never a scan of the turns.
    pub fn totals(&self, session_id: Option<i64>, thread_id: i64) -> Result<Totals> {
        self.run("read the ledger", || {
            totals::read(&self.conn, session_id, thread_id)
        })
    }

    /// Runs one statement outside a transaction, retrying where `SQLite` reports busy without
    /// waiting, and turns a failure into a store error.
    fn run<T>(&self, doing: &str, op: impl FnMut() -> rusqlite::Result<T>) -> Result<T> {
        error::retry_busy(&self.path, doing, op)
    }

    /// An update that matched no row means the row is gone (a replaced database file).
    fn expect_row(&self, changed: usize, what: &str, id: i64) -> Result<()> {
        if changed == 0 {
            return Err(error::store(
                &self.path,
                format!("has no {what} {id} (was the file replaced while sticky ran?)"),
            ));
        }
        Ok(())
    }
}
