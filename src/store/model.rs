//! The rows the store hands out and takes: a thread, a session, a turn and its ledger, the
//! answer kept with it, and what starting a session or ending a turn writes. SQL's side of them
//! (columns, text forms) is in `rows`.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::RestoreRow;
use crate::agent::ledger::Figures;

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

/// The most of a prompt made by stdin alone that a turn's row records (16 KiB, pages of text):
/// the agent gets all of it (up to `cmd::input::STDIN_CAP`), but `make report | sticky` on
/// every turn would otherwise store megabytes a turn, and a conversation's record must still
/// fit a bundle (review 19, M3).
pub const PROMPT_RECORD: usize = 16 << 10;

/// `text` cut to at most its first `keep` bytes (at a character boundary, a line's end when one
/// is near), with a last line saying how many bytes there were in all; `text` itself when it
/// fits.
pub fn cut_prompt(text: &str, keep: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= keep {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut end = keep;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    let head = match head.rfind('\n') {
        Some(line) if line >= end / 2 => &head[..line],
        _ => head,
    };
    std::borrow::Cow::Owned(format!(
        "{head}\n\n[… {} bytes in all; the rest is not kept]",
        text.len()
    ))
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
