//! The project's `SQLite` store: the only module that knows SQL.
//!
//! One file per project (`.sticky/sticky.db`) holds the conversations (threads), the agent
//! sessions attached to them and the turns run on those sessions. Opening sets WAL and an
//! explicit busy timeout and runs the append-only migrations under `BEGIN IMMEDIATE`, because
//! many sticky processes starting in one directory at the same moment is normal (CI matrices,
//! parallel panes). Every read-then-write goes through [`Store::immediate`].
//!
//! Submodules: `open` (file, pragmas), `schema` (migrations), `rows` (row mapping and the
//! indexed lookups), `error` (how failures read, and the retries of a busy file). Every failure is an `anyhow` error
//! whose chain holds [`StickyError::Store`](crate::exit::StickyError::Store).

mod answer;
mod error;
mod intact;
mod open;
mod rows;
mod schema;
mod search;
#[cfg(test)]
mod tests;
mod totals;
mod transfer;
mod usage;
mod vault;

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Result, bail};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use crate::agent::ledger::Figures;

use rows::{session_columns, thread_columns, turn_columns};
pub use search::{Found, MATCH_END, MATCH_START, query as search_query};
pub use usage::{UsageSession, UsageTurn};
pub use vault::{Forgotten, RestoreRow};

pub(crate) use error::UNWRITABLE;
pub(crate) use error::io as io_error;

pub use answer::MAX_ANSWER;
pub use open::configure_process;

/// Milliseconds since the Unix epoch.
pub type Millis = i64;

/// How a turn ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A prompt, answered without the agent's UI.
    Headless,
    /// The agent's own UI on the user's terminal.
    Interactive,
}

/// Where a turn is, or how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnStatus {
    /// The turn is running (or its sticky process died; see `Abandoned`).
    Running,
    /// The agent finished the turn successfully.
    Ok,
    /// The agent (or sticky around it) failed.
    Failed,
    /// A signal (Ctrl-C, SIGTERM, SIGHUP) ended the turn.
    Interrupted,
    /// The sticky process that ran the turn disappeared without recording its end.
    Abandoned,
}

/// A conversation of the project.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRow {
    /// Row id.
    pub id: i64,
    /// The thread's name (`main` by default).
    pub name: String,
    /// When it was created.
    pub created_at: Millis,
    /// The git branch it is named after, recorded by its turns (`-t @branch`).
    pub branch: Option<String>,
}

/// An agent session attached to a thread. Serialized as a bundle carries it ([`crate::bundle`]:
/// its thread left out, a recap missing in an older bundle read as none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRow {
    /// Row id.
    pub id: i64,
    /// The thread it belongs to.
    #[serde(skip)]
    pub thread_id: i64,
    /// The agent's name (`claude`, `codex`, ...).
    pub agent: String,
    /// The model the session was started with, if one was given.
    pub model: Option<String>,
    /// The agent's own session ID; `None` until the agent reports it (Codex, opencode).
    pub agent_session_id: Option<String>,
    /// The directory the agent runs in for this session.
    pub directory: PathBuf,
    /// When the row was created.
    pub created_at: Millis,
    /// When the agent first confirmed the session ID (an event or its transcript); until then
    /// the agent may never have created it.
    pub confirmed_at: Option<Millis>,
    /// The session this one replaced.
    pub rotated_from: Option<i64>,
    /// Why it replaced it: `new`, `model-change`, `agent-change`, `agent` or `unsaved`.
    pub rotation_reason: Option<String>,
    /// When it was replaced; `None` for the live session of its thread.
    pub ended_at: Option<Millis>,
    /// The kind of recap carried into it from the session it replaced (`recap`, `summary`),
    /// if one was.
    #[serde(default)]
    pub carried: Option<String>,
    /// The size of that recap in bytes.
    #[serde(default)]
    pub carried_bytes: Option<i64>,
    /// The session this one was forked from (`sticky fork`), if it was. Not in a bundle: the
    /// source's row lives in this database only.
    #[serde(skip)]
    pub forked_from: Option<ForkedFrom>,
}

/// The session a fork was made from, as recorded when the fork was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForkedFrom {
    /// The source session's row id.
    pub session: i64,
    /// The source's thread.
    pub thread: String,
    /// The source's agent session ID, which the fork's first turn forks.
    pub agent_session_id: String,
}

/// One run of sticky on a session. Serialized as a bundle carries it ([`crate::bundle`]: its
/// own id and answer size left out, its session's id as `session`, a figure missing in an
/// older bundle read as none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnRow {
    /// Row id.
    #[serde(skip)]
    pub id: i64,
    /// The session it ran on.
    #[serde(rename = "session")]
    pub session_id: i64,
    /// The prompt; `None` for an interactive turn.
    pub prompt: Option<String>,
    /// Headless or interactive.
    pub mode: Mode,
    /// The pid of the sticky process that ran it.
    pub pid: u32,
    /// The host name of the machine that ran it.
    pub host: String,
    /// When it started.
    pub started_at: Millis,
    /// When it ended.
    pub ended_at: Option<Millis>,
    /// Its status.
    pub status: TurnStatus,
    /// The agent's exit code.
    pub exit_code: Option<i32>,
    /// The signal that killed the agent.
    pub signal: Option<i32>,
    /// Wall time of the turn.
    pub duration_ms: Option<i64>,
    /// What the agent reported and sticky's reason for a failure.
    #[serde(flatten)]
    pub ledger: TurnLedger,
    /// The size in bytes of the answer as printed, when it was kept (see [`Store::answer`]).
    #[serde(skip)]
    pub answer_bytes: Option<i64>,
    /// Why sticky ran the turn itself (`handoff`: the summary `--carry=summary` asks for).
    #[serde(default)]
    pub purpose: Option<String>,
}

/// What a turn's end records beside its status and exit: the turn's own figures (tokens and
/// cost, see [`crate::agent::ledger`]), what its context held, and sticky's reason for a
/// failure. The turn's row, its end ([`TurnEnd`]) and its `--json` view carry this one value.
///
/// It serializes flat into the turn, its keys in the order a turn has always had them (a
/// bundle's manifest and `--json` stay byte for byte what they were): `cost_usd`,
/// `input_tokens`, `output_tokens`, `error`, `cached_tokens`, `context_tokens`,
/// `context_window`. A figure missing (an older bundle) reads as none.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct TurnLedger {
    /// Cost and tokens, when the agent reported them (cached tokens counted in the input ones
    /// too).
    #[serde(flatten)]
    pub figures: Figures,
    /// sticky's own reason for a failure (session lost, amnesia, ...).
    pub error: Option<String>,
    /// The tokens the context held at the turn's last model call, when known.
    #[serde(default)]
    pub context_tokens: Option<i64>,
    /// The model's context window, when the agent reports it.
    #[serde(default)]
    pub context_window: Option<i64>,
}

impl Serialize for TurnLedger {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let figures = &self.figures;
        let mut fields = serializer.serialize_struct("TurnLedger", 7)?;
        fields.serialize_field("cost_usd", &figures.cost_usd)?;
        fields.serialize_field("input_tokens", &figures.input_tokens)?;
        fields.serialize_field("output_tokens", &figures.output_tokens)?;
        fields.serialize_field("error", &self.error)?;
        fields.serialize_field("cached_tokens", &figures.cached_tokens)?;
        fields.serialize_field("context_tokens", &self.context_tokens)?;
        fields.serialize_field("context_window", &self.context_window)?;
        fields.end()
    }
}

/// A kept answer, read back by [`Store::answer`]. A bundle carries it as a turn's `answer` and
/// `answer_bytes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredAnswer {
    /// The answer as printed (its first [`MAX_ANSWER`] bytes when it was longer).
    #[serde(rename = "answer")]
    pub text: String,
    /// Its whole size in bytes.
    #[serde(rename = "answer_bytes")]
    pub bytes: i64,
}

impl StoredAnswer {
    /// Whether only the first [`MAX_ANSWER`] bytes were kept.
    pub fn cut(&self) -> bool {
        usize::try_from(self.bytes).is_ok_and(|bytes| bytes > self.text.len())
    }
}

/// A turn whole, as `sticky export` carries it to another project and `sticky import` adds it
/// there: its row and what the row leaves out (read by `Store::whole_turns`, written by
/// `Tx::add_thread`). Serialized as a bundle's turn: the row's fields, then `answer` and
/// `answer_bytes`, `reported_totals` and `restored`, each left out when there is none (as a
/// bundle written before they were carried has none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WholeTurn {
    /// The turn's row.
    #[serde(flatten)]
    pub row: TurnRow,
    /// Its kept answer, if it has one.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<StoredAnswer>,
    /// The agent's running totals it reported (JSON), the next turn's baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_totals: Option<String>,
    /// What it restored from sticky's vault (`turn_id` is the row's id).
    #[serde(rename = "restored", default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<RestoreRow>,
}

/// Sums of a ledger over turns (a session's, a conversation's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Totals {
    /// How many turns were summed.
    pub turns: i64,
    /// Each figure summed over the turns that reported it (`None` when none did).
    #[serde(flatten)]
    pub figures: Figures,
}

/// What a new session row holds.
#[derive(Debug, Clone)]
pub struct NewSession<'a> {
    /// The agent's name.
    pub agent: &'a str,
    /// The model, if one was given.
    pub model: Option<&'a str>,
    /// The agent session ID when sticky chose it up front (Claude, Gemini, ...).
    pub agent_session_id: Option<&'a str>,
    /// The directory the agent runs in.
    pub directory: &'a Path,
    /// The live session this one replaces and why (`new`, `model-change`, `agent-change`,
    /// `agent`, `unsaved`); the replaced one gets `ended_at` in the same transaction.
    pub rotated_from: Option<(i64, &'a str)>,
    /// The kind and size in bytes of a recap carried into it from the replaced session.
    pub carried: Option<(&'a str, i64)>,
}

/// How a turn ended.
#[derive(Debug, Clone, Default)]
pub struct TurnEnd {
    /// Its final status (never `Running`).
    pub status: Option<TurnStatus>,
    /// The agent's exit code.
    pub exit_code: Option<i32>,
    /// The signal that killed the agent.
    pub signal: Option<i32>,
    /// What the agent reported and sticky's reason for a failure.
    pub ledger: TurnLedger,
    /// The answer as printed, kept with the turn (compressed when large, cut at
    /// [`MAX_ANSWER`]).
    pub answer: Option<String>,
    /// The agent's running totals as reported (JSON), the next turn's baseline.
    pub reported_totals: Option<String>,
}

/// The current time in [`Millis`] (0 if the clock is before 1970).
pub fn now() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
}

/// An open project database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// How long [`Store::immediate`] waits for another process's write lock.
    wait: std::time::Duration,
}

/// A `BEGIN IMMEDIATE` transaction, given to the closure of [`Store::immediate`]: it holds the
/// write lock from its first statement, so what it reads stays true until it commits.
#[allow(clippy::struct_field_names)] // `tx.tx` is the transaction inside the wrapper
pub struct Tx<'a> {
    tx: Transaction<'a>,
    path: &'a Path,
    /// Whether the transaction wrote a session row (see [`Store::keep_sessions_in_file`]).
    sessions_changed: std::cell::Cell<bool>,
    /// The thread this transaction created, if any: a session started in any other thread is
    /// one the file already had, so the file is proved intact first (see `intact`).
    created_thread: std::cell::Cell<Option<i64>>,
}

/// Whether a session is confirmed yet ([`Store::confirm_session`]).
const CONFIRMED_AT: &str = "SELECT confirmed_at FROM sessions WHERE id = ?1";

/// The end of a turn ([`Store::finish_turn`]).
const FINISH_TURN: &str = "UPDATE turns SET ended_at = ?2, duration_ms = max(0, ?2 - started_at), \
     status = ?3, exit_code = ?4, signal = ?5, cost_usd = ?6, input_tokens = ?7, \
     output_tokens = ?8, error = ?9, answer = ?10, answer_encoding = ?11, answer_bytes = ?12, \
     cached_tokens = ?13, context_tokens = ?14, context_window = ?15, reported_totals = ?16 \
     WHERE id = ?1";

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

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

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

    /// Records the agent's own session ID once it is known (Codex, opencode report it late).
    pub fn set_agent_session_id(&self, session_id: i64, agent_session_id: &str) -> Result<()> {
        let changed = self.run("record the agent session id", || {
            self.conn.execute(
                "UPDATE sessions SET agent_session_id = ?2 WHERE id = ?1",
                params![session_id, agent_session_id],
            )
        })?;
        self.expect_row(changed, "session", session_id)?;
        self.keep_sessions_in_file();
        Ok(())
    }

    /// Forgets the agent's ID of a session the agent never saved (its first turn failed before
    /// it kept anything) and that sticky cannot choose again, so no view offers an ID that
    /// nothing can resume; a confirmed session keeps its ID.
    pub fn forget_agent_session_id(&self, session_id: i64) -> Result<()> {
        self.run("forget the agent session id", || {
            self.conn.execute(
                "UPDATE sessions SET agent_session_id = NULL \
                 WHERE id = ?1 AND confirmed_at IS NULL",
                params![session_id],
            )
        })?;
        self.keep_sessions_in_file();
        Ok(())
    }

    /// Compiles the statements of a turn's end ([`Store::confirm_session`],
    /// [`Store::finish_turn`]) into the connection's statement cache, for a turn to call while
    /// its agent runs: 0.1 ms of SQL compiling that otherwise came after the agent's exit, on
    /// the way to the caller's prompt (BENCHMARKS.md). Best effort: a statement that does not
    /// compile now fails again, and is reported, where it runs.
    pub fn compile_turn_end(&self) {
        for sql in [
            CONFIRMED_AT,
            totals::ADD_TO_LIVE_SESSION,
            FINISH_TURN,
            search::INDEX_ENDED,
        ] {
            let _ = self.conn.prepare_cached(sql);
        }
    }

    /// Records that the agent confirmed the session (an event or its transcript); the first
    /// confirmation counts, later ones change nothing.
    ///
    /// Every resumed turn ends here, nearly always on a session confirmed long ago, so it looks
    /// before it writes: reading `confirmed_at` (17 k instructions, no write lock) costs a third
    /// of an UPDATE ... RETURNING (49 k). A missing row is an error; only a session confirmed by
    /// this call is checkpointed into the file. Should another process confirm it in between,
    /// the UPDATE changes nothing and that process keeps it in the file.
    pub fn confirm_session(&self, session_id: i64) -> Result<()> {
        let confirmed: Option<Option<Millis>> = self.run("confirm the session", || {
            self.conn
                .prepare_cached(CONFIRMED_AT)?
                .query_row([session_id], |row| row.get(0))
                .optional()
        })?;
        match confirmed {
            None => self.expect_row(0, "session", session_id),
            Some(Some(_)) => Ok(()),
            Some(None) => {
                let changed = self.run("confirm the session", || {
                    self.conn.execute(
                        "UPDATE sessions SET confirmed_at = ?2 \
                         WHERE id = ?1 AND confirmed_at IS NULL",
                        params![session_id, now()],
                    )
                })?;
                if changed == 1 {
                    self.keep_sessions_in_file();
                }
                Ok(())
            }
        }
    }

    /// Records the end of a turn: `ended_at` = now, `duration_ms` = now - `started_at`, and the
    /// fields of `end`, whose status must be a final one. Overwrites an `abandoned` mark, since
    /// the process that ran the turn knows best how it ended.
    pub fn finish_turn(&self, turn_id: i64, end: &TurnEnd) -> Result<()> {
        let status = match end.status {
            Some(TurnStatus::Running) | None => {
                bail!("turn {turn_id} cannot finish without a final status")
            }
            Some(status) => status,
        };
        let answer = end.answer.as_deref().map(answer::encode);
        let (ledger, figures) = (&end.ledger, &end.ledger.figures);
        // One transaction: the turn's figures and the totals they add to change together.
        let changed = self.run("record the end of the turn", || {
            let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
            totals::add_turn(&tx, turn_id, figures)?;
            let now = now();
            let changed = tx.prepare_cached(FINISH_TURN)?.execute(params![
                turn_id,
                now,
                status,
                end.exit_code,
                end.signal,
                figures.cost_usd,
                figures.input_tokens,
                figures.output_tokens,
                ledger.error,
                answer.as_ref().map(|a| &a.stored),
                answer.as_ref().and_then(|a| a.encoding),
                answer.as_ref().map(|a| a.bytes),
                figures.cached_tokens,
                ledger.context_tokens,
                ledger.context_window,
                end.reported_totals,
            ])?;
            let kept = end.answer.as_deref().map(answer::kept);
            search::index(&tx, || {
                tx.prepare_cached(search::INDEX_ENDED)?
                    .execute(params![turn_id, kept])
            })?;
            tx.commit()?;
            Ok(changed)
        })?;
        self.expect_row(changed, "turn", turn_id)
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

    fn read<T>(&self, result: rusqlite::Result<T>) -> Result<T> {
        result.map_err(|e| error::sql(self.path, "read", &e))
    }

    fn write<T>(&self, result: rusqlite::Result<T>) -> Result<T> {
        result.map_err(|e| error::sql(self.path, "write", &e))
    }
}
