//! A turn's end: the verdict (`session::verdict`, pure) on what the agent did, applied: the
//! session confirmed, renamed, followed or questioned, the turn's row finished whatever
//! happened to the rest, and the answer (or the `--json` object) printed.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use serde::Serialize;

use super::super::output::Report;
use super::super::view::{SessionView, TurnView, escape};
use super::run::{Outcome, Running};
use super::vault::Restore;
use crate::agent::Diagnosis;
use crate::agent::{self, ledger::Figures};
use crate::exit::{Exit, exit_for};
use crate::msg::fresh_line;
use crate::pty::Status;
use crate::session::{self, Asked, Ended, Evidence, Observed, Reason, SessionAction, Verdict};
use crate::store::{NewSession, Store, TurnEnd, TurnLedger, TurnStatus};

/// The agent session ID when the verdict on `outcome` is that the agent lost it (rule 8), so
/// the vault may put it back before the turn ends.
pub(super) fn lost(turn: &Running<'_>, store: &Store, outcome: &Outcome) -> Option<String> {
    match judge(turn, store, &outcome.ended, &outcome.observed).session {
        SessionAction::Lost { session, .. } => Some(session),
        _ => None,
    }
}

/// The verdict (`session::verdict`) on the turn: how the agent's process `ended` and what it
/// `observed`, with the agent's records and the database as evidence.
fn judge(
    turn: &Running<'_>,
    store: &Store,
    ended: &Result<crate::pty::Finished>,
    observed: &Observed,
) -> Verdict {
    let ended: Ended = match ended {
        Ok(finished) => Ok(*finished),
        Err(error) => Err(format!("{error:#}")),
    };
    let asked = Asked {
        agent: turn.begun.adapter.name(),
        target: turn.target(),
    };
    let evidence = Records {
        turn,
        store,
        said: observed.said(),
    };
    session::verdict(asked, observed, &ended, &evidence)
}

/// Decides the turn's end, records it (with what the vault restored), prints the result.
pub(super) fn finish(
    turn: &Running<'_>,
    store: &mut Store,
    outcome: Outcome,
    restore: Option<&Restore>,
) -> Result<Report> {
    let Outcome {
        ended,
        observed,
        unrecorded,
    } = outcome;
    let agent = turn.begun.adapter.name();
    let mut verdict = judge(turn, store, &ended, &observed);
    if let Some(restore) = restore {
        say_what_the_vault_did(turn, store, &mut verdict, restore);
    }
    // A program that could not run ends with its error's code (72 for one the kernel would
    // not run), in the `--json` object as in the process's exit.
    if let (Err(error), None) = (&ended, verdict.failure(agent)) {
        verdict.exit = exit_for(error);
    }
    let status = ended.as_ref().ok().map(|finished| finished.status);
    let not_recorded = record(turn, store, &observed, &verdict, status, unrecorded).err();
    // The process's exit code, for the `--json` object.
    let code = match &not_recorded {
        Some(error) if verdict.failure(agent).is_none() && ended.is_ok() => exit_for(error).code(),
        _ => verdict.exit.code(),
    };
    let error = verdict
        .error
        .clone()
        .or_else(|| not_recorded.as_ref().map(|error| format!("{error:#}")));
    let said = match report(
        turn,
        store,
        &observed,
        verdict.status,
        error.as_deref(),
        code,
    ) {
        Ok(said) => said,
        // What was not recorded says more than a report that could not be read back.
        Err(error) => return Err(not_recorded.unwrap_or(error)),
    };
    Ok(conclude(turn, &verdict, ended, not_recorded, said))
}

/// A turn whose session stays lost says what the vault could do; a restore is recorded for
/// `sticky log` (a failure to record it is said, the turn stands).
fn say_what_the_vault_did(
    turn: &Running<'_>,
    store: &Store,
    verdict: &mut Verdict,
    restore: &Restore,
) {
    if let SessionAction::Lost { reason, .. } = &mut verdict.session {
        reason.push_str("; ");
        reason.push_str(&restore.note());
        verdict.error = verdict
            .failure(turn.begun.adapter.name())
            .map(|failure| failure.to_string());
    }
    if let Restore::Done(restored) = restore {
        let recorded = store.record_restore(turn.begun.turn_id, restored.files, restored.bytes);
        if let Err(error) = recorded {
            eprintln!(
                "{}sticky: could not record the restore: {}",
                fresh_line(),
                escape(&format!("{error:#}"))
            );
        }
    }
}

/// What the turn ends with: sticky's failed check, the agent's own failure (its exit code
/// passes through, with one line saying so), the program that could not run, or what
/// could not be recorded.
fn conclude(
    turn: &Running<'_>,
    verdict: &Verdict,
    ended: Result<crate::pty::Finished, anyhow::Error>,
    not_recorded: Option<anyhow::Error>,
    said: Report,
) -> Report {
    let warn = |error: &Option<anyhow::Error>| {
        if let Some(error) = error {
            eprintln!("{}sticky: {}", fresh_line(), escape(&format!("{error:#}")));
        }
    };
    if let Some(failure) = verdict.failure(turn.begun.adapter.name()) {
        warn(&not_recorded);
        return said.failing(failure.into());
    }
    if let Err(error) = ended {
        warn(&not_recorded);
        if exit_for(&error) != Exit::Internal {
            // It names the program and the way out already.
            return said.failing(error);
        }
        let program = turn.begun.program.display();
        return said.failing(error.context(format!("could not run {program}")));
    }
    if let (Some(error), false) = (&verdict.error, turn.ctx.json) {
        eprintln!("{}sticky: {}", fresh_line(), escape(error));
    }
    match not_recorded {
        Some(error) => said.failing(error),
        None => said.exiting(verdict.exit),
    }
}

/// Applies the verdict to the database: what the run could not record (the ID the agent
/// named, rule 9) retried, the session's action, then the turn's end, which is recorded
/// even when the rest failed. The error says that the turn ran and what was not recorded.
fn record(
    turn: &Running<'_>,
    store: &mut Store,
    observed: &Observed,
    verdict: &Verdict,
    status: Option<Status>,
    unrecorded: Option<anyhow::Error>,
) -> Result<()> {
    let session_id = turn.begun.session.id;
    let named = match (unrecorded, observed.reported.as_deref()) {
        (Some(_), Some(id)) => store
            .set_agent_session_id(session_id, id)
            .map_err(|error| (format!("the session ID {id} that the agent named"), error)),
        (Some(error), None) => Err(("the session ID that the agent named".into(), error)),
        (None, _) => Ok(()),
    };
    let session = named.and_then(|()| {
        apply(turn, store, &verdict.session)
            .map_err(|error| (unrecorded_action(&verdict.session, session_id), error))
    });
    let (exit_code, signal) = match status {
        Some(Status::Code(code)) => (Some(code), None),
        Some(Status::Signal(signal)) => (None, Some(signal)),
        None => (None, None),
    };
    let figures = ledger(turn, store, observed);
    let (end, answer) = finish_turn(
        store,
        turn.begun.turn_id,
        TurnEnd {
            status: Some(verdict.status),
            exit_code,
            signal,
            ledger: TurnLedger {
                figures,
                error: verdict.error.clone(),
                context_tokens: observed.ledger.context_tokens,
                context_window: observed.ledger.context_window,
            },
            answer: observed
                .answer()
                .or_else(|| observed.transcript_answer.clone()),
            reported_totals: observed
                .ledger
                .totals
                .and_then(|totals| serde_json::to_string(&totals).ok()),
        },
    );
    let ran = format!(
        "{} ran turn #{}",
        turn.begun.adapter.name(),
        turn.begun.turn_id
    );
    let session = match (session, answer) {
        (Ok(()), Err(error)) => Err((
            "its answer, for `sticky show` (it was printed all the same)".to_owned(),
            error,
        )),
        (Err((what, error)), Err(_)) => Err((format!("{what} nor its answer"), error)),
        (session, Ok(())) => session,
    };
    not_recorded(&ran, session, end)
}

/// Records the turn's end, and when that fails with an answer in it, the end without the
/// answer: on a full disk the answer is most of what the end writes, and the rest (status, exit
/// code, tokens) may still fit, where a turn with no end recorded would be marked abandoned by
/// the next. Returns whether the end was recorded, then whether its answer was kept.
fn finish_turn(store: &Store, turn_id: i64, end: TurnEnd) -> (Result<()>, Result<()>) {
    let Err(error) = store.finish_turn(turn_id, &end) else {
        return (Ok(()), Ok(()));
    };
    // A database another process holds would only make the second try wait as long again.
    if end.answer.is_none() || exit_for(&error) == Exit::Busy {
        return (Err(error), Ok(()));
    }
    let without = TurnEnd {
        answer: None,
        ..end
    };
    match store.finish_turn(turn_id, &without) {
        Ok(()) => (Ok(()), Err(error)),
        Err(_) => (Err(error), Ok(())),
    }
}

/// The turn's own tokens and cost (see `agent::ledger`): the agent's running totals less
/// those its previous turn on the session reported. A baseline that cannot be read only costs
/// the difference: the usage the agent stated for the turn is used instead.
fn ledger(turn: &Running<'_>, store: &Store, observed: &Observed) -> Figures {
    let begun = turn.begun;
    let read = agent::ledger::needs_baseline(&observed.ledger)
        .then(|| store.ledger_baseline(begun.session.id, begun.turn_id).ok())
        .flatten();
    let first = read.as_ref().is_some_and(|(count, _)| *count <= 1);
    let baseline = read
        .and_then(|(_, totals)| totals)
        .and_then(|json| serde_json::from_str::<Figures>(&json).ok());
    agent::ledger::per_turn(observed.usage, &observed.ledger, baseline, first)
}

/// Applies what the verdict made of the session.
fn apply(turn: &Running<'_>, store: &mut Store, action: &SessionAction) -> Result<()> {
    let begun = turn.begun;
    let session_id = begun.session.id;
    match action {
        SessionAction::Keep | SessionAction::Amnesia { .. } | SessionAction::Lost { .. } => {}
        SessionAction::Confirm => store.confirm_session(session_id)?,
        SessionAction::Name(id) => {
            store.set_agent_session_id(session_id, id)?;
            store.confirm_session(session_id)?;
        }
        SessionAction::Rename { from, to } => {
            // The same conversation under a new name: follow the name, same session row.
            store.set_agent_session_id(session_id, to)?;
            store.confirm_session(session_id)?;
            if !turn.ctx.quiet {
                eprintln!(
                    "{}sticky: {} renamed session {} to {}; following it",
                    fresh_line(),
                    begun.adapter.name(),
                    escape(from),
                    escape(to)
                );
            }
        }
        SessionAction::Follow { to, confirm } => {
            follow(turn, store, to)?;
            if *confirm {
                store.confirm_session(session_id)?;
            }
        }
        SessionAction::Unsaved { forget, .. } => {
            if *forget {
                store.forget_agent_session_id(session_id)?;
            }
        }
    }
    Ok(())
}

/// The user switched to session `current` inside the agent (Claude's `/clear`): follow it,
/// a rotation with reason `agent`, so the next turn continues what the user last saw;
/// unless `sticky new` rotated the thread meanwhile (checked again in the transaction that
/// rotates): that choice stands.
fn follow(turn: &Running<'_>, store: &mut Store, current: &str) -> Result<()> {
    let begun = turn.begun;
    let adapter = begun.adapter;
    let followed = store.immediate(|tx| {
        let live = tx.live_session(begun.session.thread_id)?;
        if live.is_none_or(|live| live.id != begun.session.id) {
            return Ok(None);
        }
        let session = tx.start_session(
            begun.session.thread_id,
            &NewSession {
                agent: adapter.name(),
                model: begun.session.model.as_deref(),
                agent_session_id: Some(current),
                directory: &begun.session.directory,
                rotated_from: Some((begun.session.id, Reason::Agent.as_str())),
                carried: None,
            },
        )?;
        Ok(Some(session.id))
    })?;
    let Some(session_id) = followed else {
        return Ok(());
    };
    store.confirm_session(session_id)?;
    if !turn.ctx.quiet {
        eprintln!(
            "{}sticky: {} moved to session {}; thread {} follows it",
            fresh_line(),
            adapter.name(),
            escape(current),
            escape(&turn.ctx.thread)
        );
    }
    Ok(())
}

/// The answer for stdout (or the `--json` object); prints a failed turn's output on
/// stderr.
fn report(
    turn: &Running<'_>,
    store: &Store,
    observed: &Observed,
    status: TurnStatus,
    error: Option<&str>,
    exit_code: u8,
) -> Result<Report> {
    let answer = observed.answer();
    if turn.ctx.json {
        let row = store
            .turn(turn.begun.turn_id)?
            .context("the turn's row disappeared")?;
        let session = store
            .session(turn.begun.session.id)?
            .context("the session's row disappeared")?;
        return Report::json(&TurnReport {
            thread: &turn.ctx.thread,
            project: turn.ctx.project.dir.display().to_string(),
            session: SessionView::from(&session),
            turn: TurnView::from(&row),
            answer: answer.as_deref(),
            error,
            exit_code,
        });
    }
    if status != TurnStatus::Ok {
        // The agent's own words (its error message), before sticky's one line.
        eprint!("{}", observed.agent_output);
    }
    if let Some(mut answer) = answer {
        if !answer.ends_with('\n') {
            answer.push('\n');
        }
        if status == TurnStatus::Ok {
            // A reader that stops early (`| head -1`) is no failure of the recorded turn
            // (see `output::emit`).
            return Ok(Report::text(answer.into_bytes()));
        }
        // The answer of a failed turn is the agent's error message: stderr, not stdout.
        eprint!("{answer}");
    }
    Ok(Report::nothing())
}

/// The error of a turn whose end, or what it made of the session (`what`), could not be
/// recorded: it says that the turn ran, and what the database does not know.
fn not_recorded(
    ran: &str,
    session: Result<(), (String, anyhow::Error)>,
    end: Result<()>,
) -> Result<()> {
    match (session, end) {
        (Ok(()), Ok(())) => Ok(()),
        (Err((what, error)), Ok(())) => Err(error.context(format!(
            "{ran} and its end is recorded, but sticky could not record {what}"
        ))),
        (session, Err(error)) => {
            let what = session.err().map(|(what, _)| format!(" nor {what}"));
            Err(error.context(format!(
                "{ran}, but sticky could not record its end{} (the turn stays marked running \
                 until the next turn marks it abandoned)",
                what.unwrap_or_default()
            )))
        }
    }
}

/// What the database was to learn from `action`, for the message saying it did not.
fn unrecorded_action(action: &SessionAction, session_id: i64) -> String {
    match action {
        SessionAction::Confirm | SessionAction::Follow { confirm: true, .. } => {
            format!("that the agent confirmed session #{session_id}")
        }
        SessionAction::Name(id) | SessionAction::Rename { to: id, .. } => {
            format!("the new ID {id} of session #{session_id}")
        }
        SessionAction::Follow { to, .. } => format!("the move to session {to}"),
        SessionAction::Unsaved { id, .. } => format!("that the agent never saved session {id}"),
        SessionAction::Keep | SessionAction::Amnesia { .. } | SessionAction::Lost { .. } => {
            format!("session #{session_id}")
        }
    }
}

/// The agent's records of its sessions and the thread's row, as the verdict asks for them.
struct Records<'a> {
    turn: &'a Running<'a>,
    store: &'a Store,
    /// What the agent said, where the adapter looks for its error texts.
    said: String,
}

impl Records<'_> {
    fn home() -> PathBuf {
        dirs::home_dir().unwrap_or_default()
    }
}

impl Evidence for Records<'_> {
    fn saved(&self, id: &str) -> Option<bool> {
        let begun = self.turn.begun;
        begun
            .adapter
            .saved(&Self::home(), &begun.session.directory, id)
    }

    fn renamed(&self, expected: &str, actual: &str) -> bool {
        let begun = self.turn.begun;
        let directory = &begun.session.directory;
        begun
            .adapter
            .renamed(&Self::home(), directory, expected, actual)
    }

    fn transcript(&self, id: &str) -> Option<bool> {
        let begun = self.turn.begun;
        let path = begun
            .adapter
            .transcript(&Self::home(), &begun.session.directory, id)?;
        Some(path.is_file())
    }

    fn still_live(&self) -> bool {
        // A read that fails says yes: the rotation's own transaction reads again, and says
        // what it could not record.
        let session = &self.turn.begun.session;
        self.store
            .live_session(session.thread_id)
            .map_or(true, |live| live.is_some_and(|live| live.id == session.id))
    }

    fn diagnose(&self) -> Option<Diagnosis> {
        self.turn
            .begun
            .adapter
            .diagnose(&self.turn.target(), &self.said)
    }
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

#[cfg(test)]
mod tests {
    use anyhow::anyhow;

    use super::*;

    #[test]
    fn what_was_not_recorded_is_said_with_the_turn_that_ran() {
        let ran = "claude ran turn #7";
        let session = || Err(("the move to session b".to_owned(), anyhow!("disk full")));
        let message = |result: Result<()>| result.map_err(|error| format!("{error:#}")).err();
        assert_eq!(message(not_recorded(ran, Ok(()), Ok(()))), None);
        assert_eq!(
            message(not_recorded(ran, session(), Ok(()))).as_deref(),
            Some(
                "claude ran turn #7 and its end is recorded, but sticky could not record the \
                 move to session b: disk full"
            )
        );
        let end = || Err(anyhow!("database is locked"));
        let stays = "(the turn stays marked running until the next turn marks it abandoned): \
                     database is locked";
        assert_eq!(
            message(not_recorded(ran, Ok(()), end())),
            Some(format!(
                "claude ran turn #7, but sticky could not record its end {stays}"
            ))
        );
        assert_eq!(
            message(not_recorded(ran, session(), end())),
            Some(format!(
                "claude ran turn #7, but sticky could not record its end nor the move to \
                 session b {stays}"
            ))
        );
    }

    #[test]
    fn each_session_action_names_what_it_records() {
        let cases = [
            (
                SessionAction::Confirm,
                "that the agent confirmed session #3",
            ),
            (
                SessionAction::Name("x".into()),
                "the new ID x of session #3",
            ),
            (
                SessionAction::Follow {
                    to: "b".into(),
                    confirm: false,
                },
                "the move to session b",
            ),
            (
                SessionAction::Unsaved {
                    id: "a".into(),
                    forget: true,
                },
                "that the agent never saved session a",
            ),
        ];
        for (action, want) in cases {
            assert_eq!(unrecorded_action(&action, 3), want, "{action:?}");
        }
    }
}
