//! The project's SQLite store: the only module that knows SQL.
//!
//! One file per project (`.sticky/sticky.db`) holds the conversations (threads), the agent
//! sessions attached to them and the turns run on those sessions. Opening sets WAL and an
//! explicit busy timeout and runs the append-only migrations under `BEGIN IMMEDIATE`, because
//! many sticky processes starting in one directory at the same moment is normal (CI matrices,
//! parallel panes). Every read-then-write goes through [`Store::immediate`].
//!
//! INTERFACE CONTRACT (filled in by the store work; signatures are fixed, bodies are not).

use std::path::{Path, PathBuf};

use anyhow::Result;

/// Milliseconds since the Unix epoch.
pub type Millis = i64;

/// How a turn ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A prompt, answered without the agent's UI.
    Headless,
    /// The agent's own UI on the user's terminal.
    Interactive,
}

/// Where a turn is, or how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

/// An agent session attached to a thread.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    /// Row id.
    pub id: i64,
    /// The thread it belongs to.
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
    /// Why it replaced it: `new`, `model-change`, `agent-change` or `agent`.
    pub rotation_reason: Option<String>,
    /// When it was replaced; `None` for the live session of its thread.
    pub ended_at: Option<Millis>,
}

/// One run of sticky on a session.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRow {
    /// Row id.
    pub id: i64,
    /// The session it ran on.
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
    /// Cost the agent reported, in US dollars.
    pub cost_usd: Option<f64>,
    /// Input tokens the agent reported.
    pub input_tokens: Option<i64>,
    /// Output tokens the agent reported.
    pub output_tokens: Option<i64>,
    /// sticky's own reason for a failure (session lost, amnesia, ...).
    pub error: Option<String>,
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
    /// `agent`); the replaced one gets `ended_at` in the same transaction.
    pub rotated_from: Option<(i64, &'a str)>,
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
    /// Cost in US dollars, when the agent reported it.
    pub cost_usd: Option<f64>,
    /// Input tokens, when reported.
    pub input_tokens: Option<i64>,
    /// Output tokens, when reported.
    pub output_tokens: Option<i64>,
    /// sticky's reason for a failure.
    pub error: Option<String>,
}

/*
Fixed API (implement exactly these; add private helpers freely):

impl Store {
    /// Opens the database at `path`, creating `.sticky/`-style parent dir (0700, with a
    /// `.gitignore` containing `*` when the parent dir is named `.sticky` and is created now)
    /// and the file (0600) if missing; WAL, busy timeout, migrations under BEGIN IMMEDIATE.
    pub fn open(path: &Path) -> Result<Store>;
    /// Opens an existing database read-write without creating anything; Ok(None) if absent.
    pub fn open_existing(path: &Path) -> Result<Option<Store>>;
    pub fn path(&self) -> &Path;
    /// Runs `f` in a BEGIN IMMEDIATE transaction, committing on Ok.
    pub fn immediate<T>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T>) -> Result<T>;
    pub fn set_agent_session_id(&self, session_id: i64, agent_session_id: &str) -> Result<()>;
    pub fn confirm_session(&self, session_id: i64) -> Result<()>; // sets confirmed_at if null
    pub fn finish_turn(&self, turn_id: i64, end: &TurnEnd) -> Result<()>; // ended_at, duration
    pub fn thread(&self, name: &str) -> Result<Option<ThreadRow>>;
    pub fn threads(&self) -> Result<Vec<ThreadRow>>;
    pub fn live_session(&self, thread_id: i64) -> Result<Option<SessionRow>>;
    pub fn session(&self, session_id: i64) -> Result<Option<SessionRow>>;
    pub fn sessions(&self, thread_id: i64) -> Result<Vec<SessionRow>>;  // oldest first
    pub fn last_turn(&self, thread_id: i64) -> Result<Option<TurnRow>>;
    pub fn turns(&self, thread_id: i64) -> Result<Vec<TurnRow>>;        // oldest first
}

impl Tx<'_> {
    pub fn ensure_thread(&self, name: &str) -> Result<ThreadRow>;
    pub fn live_session(&self, thread_id: i64) -> Result<Option<SessionRow>>;
    pub fn start_session(&self, thread_id: i64, new: &NewSession<'_>) -> Result<SessionRow>;
    /// An unconfirmed session started again in place: new agent/model/id, confirmed_at NULL.
    pub fn restart_session(&self, session_id: i64, agent: &str, model: Option<&str>,
                           agent_session_id: Option<&str>) -> Result<SessionRow>;
    /// Marks `running` turns abandoned when their host is `host` and `alive(pid)` is false,
    /// or when their host differs (a cache restored on another machine); returns how many.
    pub fn abandon_dead_turns(&self, host: &str, alive: &dyn Fn(u32) -> bool) -> Result<usize>;
    pub fn begin_turn(&self, session_id: i64, prompt: Option<&str>, mode: Mode, pid: u32,
                      host: &str) -> Result<i64>;
    pub fn running_turn(&self, session_id: i64) -> Result<Option<TurnRow>>;
}
*/
