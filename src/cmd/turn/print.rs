//! A turn's last words: what the verdict's writes moved, the answer on stdout (a failed turn's
//! output on stderr) or the `--json` object, and the error the turn ends with.

use anyhow::{Context as _, Result};
use serde::Serialize;

use super::super::Context;
use super::super::output::Report;
use super::super::view::{SessionView, TurnView, escape};
use super::begin::Begun;
use super::run::Outcome;
use crate::exit::{Exit, exit_for};
use crate::session::{Moved, Settled, Verdict};
use crate::store::{SessionRow, Store, TurnStatus};

/// A turn that ran: what began it, how its last run went, the verdict on that run and what its
/// writes did.
pub(super) struct Done<'a> {
    pub(super) begun: Begun<'a>,
    pub(super) outcome: Outcome,
    pub(super) verdict: Verdict,
    pub(super) settled: Settled,
}

/// Says what the turn's end did and prints its result; the report carries the verdict's exit,
/// or the error of what could not be recorded.
pub(super) fn print(ctx: &Context, store: &Store, done: Done<'_>) -> Result<Report> {
    let Done {
        begun,
        outcome,
        verdict,
        settled,
    } = done;
    say_moved(ctx, &begun, settled.moved.as_ref());
    if let Some(error) = &settled.restore_error {
        crate::msg::error(format_args!(
            "could not record the restore: {}",
            escape(&format!("{error:#}"))
        ));
    }
    let failure = verdict.failure(begun.adapter.name());
    // The process's exit code, for the `--json` object: what could not be recorded fails a
    // turn that has no failure of its own.
    let code = match &settled.error {
        Some(error) if failure.is_none() && outcome.ended.is_ok() => exit_for(error).code(),
        _ => verdict.exit.code(),
    };
    let error = verdict
        .error
        .clone()
        .or_else(|| settled.error.as_ref().map(|error| format!("{error:#}")));
    let shown = Shown {
        status: verdict.status,
        error: error.as_deref(),
        exit_code: code,
    };
    let said = match answer(ctx, store, &begun, &outcome, &shown) {
        Ok(said) => said,
        // What was not recorded says more than a report that could not be read back.
        Err(error) => return Err(settled.error.unwrap_or(error)),
    };
    Ok(conclude(
        ctx,
        &begun,
        &verdict,
        outcome,
        settled.error,
        said,
    ))
}

/// The agent's own move of the session that the thread now follows.
fn say_moved(ctx: &Context, begun: &Begun<'_>, moved: Option<&Moved>) {
    match moved {
        Some(Moved::Renamed { from, to }) => note!(
            "{} renamed session {} to {}; following it",
            begun.adapter.name(),
            escape(from),
            escape(to)
        ),
        Some(Moved::Followed { to }) => note!(
            "{} moved to session {}; thread {} follows it",
            begun.adapter.name(),
            escape(to),
            escape(&ctx.thread)
        ),
        None => {}
    }
}

/// What the turn ends with: sticky's failed check, the agent's own failure (its exit code
/// passes through, with one line saying so), the program that could not run, or what
/// could not be recorded.
fn conclude(
    ctx: &Context,
    begun: &Begun<'_>,
    verdict: &Verdict,
    outcome: Outcome,
    not_recorded: Option<anyhow::Error>,
    said: Report,
) -> Report {
    let warn = |error: &Option<anyhow::Error>| {
        if let Some(error) = error {
            crate::msg::error(format_args!("{}", escape(&format!("{error:#}"))));
        }
    };
    if let Some(failure) = verdict.failure(begun.adapter.name()) {
        warn(&not_recorded);
        return said.failing(failure.into());
    }
    if let Err(error) = outcome.ended {
        warn(&not_recorded);
        if exit_for(&error) != Exit::Internal {
            // It names the program and the way out already.
            return said.failing(error);
        }
        let program = begun.program.display();
        return said.failing(error.context(format!("could not run {program}")));
    }
    if let (Some(error), false) = (&verdict.error, ctx.json) {
        crate::msg::error(format_args!("{}", escape(error)));
    }
    match not_recorded {
        Some(error) => said.failing(error),
        None => said.exiting(verdict.exit),
    }
}

/// What the turn's report shows of its end.
struct Shown<'a> {
    status: TurnStatus,
    error: Option<&'a str>,
    exit_code: u8,
}

/// The answer for stdout (or the `--json` object); prints a failed turn's output on
/// stderr.
fn answer(
    ctx: &Context,
    store: &Store,
    begun: &Begun<'_>,
    outcome: &Outcome,
    shown: &Shown<'_>,
) -> Result<Report> {
    let observed = &outcome.observed;
    let answer = observed.answer();
    if ctx.json {
        let row = store
            .turn(begun.turn_id)?
            .context("the turn's row disappeared")?;
        let session = store
            .session(begun.session.id)?
            .context("the session's row disappeared")?;
        return Report::json(&TurnReport {
            thread: &ctx.thread,
            project: ctx.project.dir.display().to_string(),
            session: SessionView::from(&session),
            turn: TurnView::from(&row),
            answer: answer.as_deref(),
            error: shown.error,
            exit_code: shown.exit_code,
        });
    }
    if shown.status != TurnStatus::Ok {
        // The agent's own words (its error message), before sticky's one line.
        eprint!("{}", observed.agent_output);
    }
    if let Some(mut answer) = answer {
        if !answer.ends_with('\n') {
            answer.push('\n');
        }
        if shown.status == TurnStatus::Ok {
            // A reader that stops early (`| head -1`) is no failure of the recorded turn
            // (see `output::emit`).
            return Ok(Report::text(answer.into_bytes()));
        }
        // The answer of a failed turn is the agent's error message: stderr, not stdout.
        eprint!("{answer}");
    }
    Ok(Report::nothing())
}

/// What `--json` prints for a session made without a turn (`sticky new`, `sticky fork`
/// without a prompt): a turn's keys, so it reads alike with and without a prompt.
pub(super) fn no_turn_yet(ctx: &Context, thread: &str, session: &SessionRow) -> Result<Report> {
    Report::json(&serde_json::json!({
        "thread": thread,
        "project": ctx.project.dir.display().to_string(),
        "session": SessionView::from(session),
        "turn": null,
        "answer": null,
        "error": null,
        "exit_code": 0,
    }))
}

/// The `--json` object of a turn.
#[derive(Serialize)]
struct TurnReport<'a> {
    thread: &'a str,
    project: String,
    session: SessionView<'a>,
    turn: TurnView<'a>,
    answer: Option<&'a str>,
    error: Option<&'a str>,
    /// sticky's exit code (the agent's own is `turn.exit_code`).
    exit_code: u8,
}
