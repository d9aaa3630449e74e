//! `sticky show [TURN]`: a turn's kept answer, printed again exactly as the turn printed it;
//! on a terminal, with its control characters shown as escapes (see [`escape_answer`]).
//!
//! Reads only. The answer comes from the turn's row (see `store::answer` for how it is kept);
//! a turn without one (it ran before sticky kept answers, or the agent said nothing) is a
//! usage error that says so, so a script never takes an empty stdout for an empty answer.

use std::io::IsTerminal;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::view::{SessionView, TurnView, escape, escape_answer};
use super::{Call, Run, json_keys};
use crate::exit::StickyError;
use crate::store::{MAX_ANSWER, Store, TurnRow};

/// Options of `sticky show`.
#[derive(Debug, clap::Args, Clone, Default)]
pub struct Args {
    /// The turn (`12` or `#12`, as `log` numbers them); default: the conversation's last turn.
    #[arg(value_name = "TURN")]
    pub turn: Option<String>,
}

/// The `--json` object.
#[derive(Serialize, Default)]
struct Shown<'a> {
    thread: &'a str,
    session: Option<SessionView<'a>>,
    /// The turn (never `null` in a success object; `Option` so the error object, read from
    /// the default value, has the key).
    turn: Option<TurnView<'a>>,
    answer: Option<&'a str>,
    /// Whether only the first 1 MiB of the answer was kept.
    answer_cut: bool,
}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(&call.context()?, self)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<Shown<'static>>()
    }
}

/// Prints the answer of the turn asked for, or of the conversation's last turn.
fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let wanted = args.turn.as_deref().map(turn_number).transpose()?;
    let store = ctx.existing_store()?.ok_or_else(|| no_turns(ctx))?;
    let turn = find(ctx, &store, wanted)?;
    let answer = store.answer(turn.id)?;
    if ctx.json {
        let session = store.session(turn.session_id)?;
        return Report::json(&Shown {
            thread: &ctx.thread,
            session: session.as_ref().map(SessionView::from),
            turn: Some(TurnView::from(&turn)),
            answer: answer.as_ref().map(|answer| answer.text.as_str()),
            answer_cut: answer.as_ref().is_some_and(crate::store::StoredAnswer::cut),
        });
    }
    let Some(answer) = answer else {
        return Err(StickyError::Usage(format!(
            "turn #{} has no kept answer: it {}; `sticky log` shows what it did",
            turn.id,
            if turn.ended_at.is_none() {
                "has not ended"
            } else {
                "ran before sticky kept answers, or the agent printed none"
            }
        ))
        .into());
    };
    if answer.cut() {
        note!(
            "turn #{}'s answer was {} bytes; only its first {} MiB was kept",
            turn.id,
            answer.bytes,
            MAX_ANSWER / (1024 * 1024)
        );
    }
    // A stored answer may come from a bundle made elsewhere, and the same bytes a turn printed
    // raw can, replayed later, clear the screen or write the clipboard (OSC 52): a terminal
    // gets them escaped, as `log --answers` shows them; a pipe or file the bytes as they are.
    let mut text = if std::io::stdout().is_terminal() {
        escape_answer(&answer.text).into_owned().into_bytes()
    } else {
        answer.text.into_bytes()
    };
    // As the turn printed it: a missing final newline was added then too.
    if !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    Ok(Report::text(text))
}

/// `12` or `#12`.
fn turn_number(text: &str) -> Result<i64, StickyError> {
    text.trim()
        .trim_start_matches('#')
        .parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| {
            StickyError::Usage(format!(
                "\"{}\" is not a turn number; give one as `sticky log` shows it (12 or #12)",
                escape(text)
            ))
        })
}

/// The turn asked for, or the thread's last turn.
fn find(ctx: &Context, store: &Store, wanted: Option<i64>) -> Result<TurnRow> {
    if let Some(id) = wanted {
        return store.turn(id)?.ok_or_else(|| {
            StickyError::Usage(format!(
                "there is no turn #{id} in this project; `sticky log` lists the turns"
            ))
            .into()
        });
    }
    let thread = store.thread(&ctx.thread)?.ok_or_else(|| no_turns(ctx))?;
    store.last_turn(thread.id)?.ok_or_else(|| no_turns(ctx))
}

fn no_turns(ctx: &Context) -> anyhow::Error {
    StickyError::Usage(format!(
        "no turns yet in thread {}; nothing to show",
        escape(&ctx.thread)
    ))
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_are_numbered_as_log_shows_them() {
        assert_eq!(turn_number("12").unwrap(), 12);
        assert_eq!(turn_number("#7").unwrap(), 7);
        for bad in ["", "x", "-1", "0", "#"] {
            let error = turn_number(bad).unwrap_err().to_string();
            assert!(error.contains("not a turn number"), "{bad:?}: {error}");
        }
    }
}
