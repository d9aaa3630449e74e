//! `sticky export --format markdown|json`: the conversation as a document a reviewer reads,
//! read from the database alone (no agent files): each turn's prompt, answer, agent, model,
//! time and cost, and the rotations and carries between sessions. Secrets are redacted
//! ([`super::redact`]) unless `--no-redact`.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::redact::Redactor;
use crate::cmd::view::{
    SessionView, TurnView, escape, escape_answer, format_duration, format_ledger, format_time,
    shown_status, status_name,
};
use crate::store::{SessionRow, Totals, TurnRow, WholeTurn};

/// The first line of a markdown export: it says what wrote the file, so a later export may
/// replace it (`-o`), as a bundle replaces a bundle.
pub const MARKDOWN_MARK: &str = "<!-- sticky export: markdown -->";

/// The `format` of a JSON export, its first key: a later export may replace the file.
pub const JSON_FORMAT: &str = "sticky-conversation/1";

/// What a document is made of: the thread's rows as the store holds them.
#[derive(Debug)]
pub struct Conversation<'a> {
    /// The thread's name.
    pub thread: &'a str,
    /// The project's directory.
    pub project: String,
    /// Its sessions, oldest first.
    pub sessions: &'a [SessionRow],
    /// Its turns, oldest first, with their kept answers.
    pub turns: &'a [WholeTurn],
    /// When the export was made.
    pub exported_at: i64,
}

/// The JSON document: the shared `session` and `turn` shapes of `docs/json.md`, each turn with
/// its `answer` and `answer_cut`.
#[derive(Serialize)]
struct Document<'a> {
    format: &'static str,
    sticky: &'static str,
    thread: &'a str,
    project: &'a str,
    exported_at: i64,
    redacted: bool,
    totals: Totals,
    sessions: Vec<SessionView<'a>>,
    turns: Vec<DocumentTurn<'a>>,
}

#[derive(Serialize)]
struct DocumentTurn<'a> {
    #[serde(flatten)]
    turn: TurnView<'a>,
    answer: Option<String>,
    answer_cut: bool,
}

/// A turn's row and answer with its secrets replaced.
struct Clean {
    row: TurnRow,
    answer: Option<String>,
    answer_cut: bool,
}

impl Conversation<'_> {
    /// Every turn with its texts redacted (when `redactor` is given).
    fn clean(&self, redactor: Option<&Redactor>) -> Vec<Clean> {
        let redact = |text: &str| match redactor {
            Some(redactor) => redactor.redact(text).into_owned(),
            None => text.to_owned(),
        };
        self.turns
            .iter()
            .map(|turn| {
                let mut row = turn.row.clone();
                row.prompt = row.prompt.as_deref().map(&redact);
                row.ledger.error = row.ledger.error.as_deref().map(&redact);
                row.answer_bytes = turn.answer.as_ref().map(|answer| answer.bytes);
                Clean {
                    row,
                    answer: turn.answer.as_ref().map(|answer| redact(&answer.text)),
                    answer_cut: turn
                        .answer
                        .as_ref()
                        .is_some_and(crate::store::StoredAnswer::cut),
                }
            })
            .collect()
    }

    /// The ledger summed over the turns that reported each figure, as `status` sums it.
    fn totals(&self) -> Totals {
        fn sum<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            }
        }
        let mut totals = Totals::default();
        for figures in self.turns.iter().map(|turn| &turn.row.ledger.figures) {
            let sums = &mut totals.figures;
            sums.cost_usd = sum(sums.cost_usd, figures.cost_usd);
            sums.input_tokens = sum(sums.input_tokens, figures.input_tokens);
            sums.output_tokens = sum(sums.output_tokens, figures.output_tokens);
            sums.cached_tokens = sum(sums.cached_tokens, figures.cached_tokens);
        }
        totals.turns = i64::try_from(self.turns.len()).unwrap_or(i64::MAX);
        totals
    }

    /// The conversation as one JSON document (pretty, its `format` first).
    pub fn json(&self, redactor: Option<&Redactor>) -> String {
        let clean = self.clean(redactor);
        let document = Document {
            format: JSON_FORMAT,
            sticky: env!("CARGO_PKG_VERSION"),
            thread: self.thread,
            project: &self.project,
            exported_at: self.exported_at,
            redacted: redactor.is_some(),
            totals: self.totals(),
            sessions: self.sessions.iter().map(SessionView::from).collect(),
            turns: clean
                .iter()
                .map(|turn| DocumentTurn {
                    turn: TurnView::from(&turn.row),
                    answer: turn.answer.clone(),
                    answer_cut: turn.answer_cut,
                })
                .collect(),
        };
        let mut text = serde_json::to_string_pretty(&document).expect("a document serializes");
        text.push('\n');
        text
    }

    /// The conversation as markdown: a header, then each session and its turns.
    pub fn markdown(&self, redactor: Option<&Redactor>) -> String {
        let clean = self.clean(redactor);
        let mut out = String::new();
        let _ = writeln!(out, "{MARKDOWN_MARK}\n");
        let _ = writeln!(out, "# Thread {}\n", code(self.thread));
        let _ = writeln!(out, "- Project: {}", code(&self.project));
        let _ = writeln!(
            out,
            "- Exported: {} by sticky {}",
            format_time(self.exported_at),
            env!("CARGO_PKG_VERSION")
        );
        let _ = writeln!(out, "- {}", self.summary());
        if redactor.is_some() {
            let _ = writeln!(
                out,
                "- Text that looks like a secret (API keys, tokens, passwords, the values of \
                 secret environment variables) is shown as `[redacted]`."
            );
        }
        let ordinal: HashMap<i64, usize> = self
            .sessions
            .iter()
            .enumerate()
            .map(|(index, session)| (session.id, index + 1))
            .collect();
        for (index, session) in self.sessions.iter().enumerate() {
            out.push('\n');
            self.session_markdown(&mut out, index + 1, session, &ordinal);
            for turn in clean
                .iter()
                .filter(|turn| turn.row.session_id == session.id)
            {
                out.push('\n');
                turn_markdown(&mut out, turn);
            }
        }
        out
    }

    /// `3 turns (2 ok, 1 failed) over 2 sessions · 1.2k in · 300 out · $0.0123`.
    fn summary(&self) -> String {
        let count = self.turns.len();
        let mut statuses: Vec<(&str, usize)> = Vec::new();
        for turn in self.turns {
            let name = status_name(shown_status(&turn.row));
            match statuses.iter_mut().find(|(status, _)| *status == name) {
                Some((_, n)) => *n += 1,
                None => statuses.push((name, 1)),
            }
        }
        let statuses = if statuses.len() > 1 {
            let counts: Vec<String> = statuses
                .iter()
                .map(|(name, n)| format!("{n} {name}"))
                .collect();
            format!(" ({})", counts.join(", "))
        } else {
            String::new()
        };
        let sessions = self.sessions.len();
        let mut line = format!(
            "{count} turn{}{statuses} over {sessions} session{}",
            plural(count),
            plural(sessions)
        );
        let ledger = format_ledger(&self.totals().figures);
        if !ledger.is_empty() {
            let _ = write!(line, " · {ledger}");
        }
        line
    }

    fn session_markdown(
        &self,
        out: &mut String,
        number: usize,
        session: &SessionRow,
        ordinal: &HashMap<i64, usize>,
    ) {
        out.push_str(&heading(number, session));
        let id = session
            .agent_session_id
            .as_deref()
            .map_or_else(|| "(not named by the agent)".to_owned(), code);
        let _ = write!(
            out,
            "Started {}, agent session {id}",
            format_time(session.created_at)
        );
        let directory = session.directory.display().to_string();
        if directory != self.project {
            let _ = write!(out, ", in {}", code(&directory));
        }
        out.push('.');
        if let (Some(from), Some(reason)) = (session.rotated_from, &session.rotation_reason) {
            let from = ordinal.get(&from).map_or_else(
                || "an earlier session".to_owned(),
                |n| format!("session {n}"),
            );
            let _ = write!(out, " It replaced {from} ({}).", rotation(reason));
        }
        if let Some(fork) = &session.forked_from {
            let _ = write!(
                out,
                " It was forked from thread {} (agent session {}): it starts with that \
                 conversation's history, and neither has seen the other's turns since.",
                code(&fork.thread),
                code(&fork.agent_session_id)
            );
        }
        if let (Some(kind), Some(bytes)) = (&session.carried, session.carried_bytes) {
            let _ = write!(
                out,
                " Its first prompt carried a {} of the conversation before it ({bytes} bytes).",
                escape(kind)
            );
        }
        match session.ended_at {
            Some(ended) => {
                let _ = write!(out, " Ended {}.", format_time(ended));
            }
            None => out.push_str(" It is the thread's live session."),
        }
        out.push('\n');
    }
}

/// The heading of session `number`: its agent and model.
fn heading(number: usize, session: &SessionRow) -> String {
    let model = session.model.as_deref().map_or_else(
        || "the default model".to_owned(),
        |model| format!("model {}", code(model)),
    );
    format!(
        "## Session {number} · {} · {model}\n\n",
        escape(&session.agent)
    )
}

/// Why a session replaced the one before, for people.
fn rotation(reason: &str) -> String {
    match reason {
        "new" => "on `sticky new`".to_owned(),
        "model-change" => "on a different --model".to_owned(),
        "agent-change" => "on a different --agent".to_owned(),
        "agent" => "the agent started a new session".to_owned(),
        "unsaved" => "the agent never saved the one before (its first turn failed)".to_owned(),
        other => escape(other).into_owned(),
    }
}

fn turn_markdown(out: &mut String, turn: &Clean) {
    let row = &turn.row;
    let mut heading = format!(
        "### Turn {} · {} · {}",
        row.id,
        format_time(row.started_at),
        status_name(shown_status(row))
    );
    if let Some(duration) = row.duration_ms {
        let _ = write!(heading, " · {}", format_duration(duration));
    }
    let ledger = format_ledger(&row.ledger.figures);
    if !ledger.is_empty() {
        let _ = write!(heading, " · {ledger}");
    }
    let _ = writeln!(out, "{heading}\n");
    match (row.purpose.as_deref(), row.prompt.as_deref()) {
        (Some("handoff"), _) => {
            out.push_str("The summary sticky asked for, to carry into the next session.\n\n");
        }
        (_, None) => {
            out.push_str("An interactive turn: sticky keeps no prompt or answer of it.\n");
            return;
        }
        (_, Some(prompt)) => {
            out.push_str("**Prompt**\n\n");
            quote(out, prompt);
        }
    }
    match &turn.answer {
        Some(answer) => {
            out.push_str("**Answer**\n\n");
            quote(out, answer);
            if turn.answer_cut {
                let _ = writeln!(
                    out,
                    "_The answer was {} bytes; its first {} are kept._\n",
                    row.answer_bytes.unwrap_or_default(),
                    answer.len()
                );
            }
        }
        None => out.push_str("_No answer was kept._\n\n"),
    }
    if let Some(error) = &row.ledger.error {
        let _ = writeln!(out, "**Error:** {}\n", code(error));
    }
    if let Some(code) = row.exit_code.filter(|code| *code != 0) {
        let _ = writeln!(out, "The agent exited with code {code}.\n");
    }
    trim_blank_end(out);
}

/// `text` as a block quote, its control characters shown as escapes: a quote confines
/// whatever markdown the text holds (an unclosed code fence ends with the quote).
fn quote(out: &mut String, text: &str) {
    for line in escape_answer(text.trim_end_matches('\n')).split('\n') {
        if line.is_empty() {
            out.push_str(">\n");
        } else {
            let _ = writeln!(out, "> {line}");
        }
    }
    out.push('\n');
}

/// `text` as an inline code span, escaped, with a fence longer than any run of backticks in it.
fn code(text: &str) -> String {
    let text = escape(text);
    let longest = text
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or_default();
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

fn trim_blank_end(out: &mut String) {
    while out.ends_with("\n\n") {
        out.pop();
    }
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_span_holds_backticks() {
        assert_eq!(code("main"), "`main`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(code("a\u{1b}[2Jb"), "`a\\e[2Jb`");
    }

    #[test]
    fn a_quote_confines_an_unclosed_fence_and_escapes_control_characters() {
        let mut out = String::new();
        quote(&mut out, "```rust\nfn main() {}\n\n\u{1b}]52;c;aGk=\u{7}\n");
        assert_eq!(
            out,
            "> ```rust\n> fn main() {}\n>\n> \\e]52;c;aGk=\\x07\n\n"
        );
    }
}
