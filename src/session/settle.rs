//! The verdict written: the turn's end applied to the database, beside [`apply`](super::apply)
//! which writes the plan at its start.
//!
//! What the run could not record (the ID the agent named, rule 9) is retried, the session's
//! action applied (confirmed, named, renamed, followed, forgotten), a vault restore recorded for
//! `sticky log`, then the turn's end, which is recorded even when the rest failed. What was not
//! recorded is returned as one error that says the turn ran; the caller says it.

use anyhow::Result;

use super::{Observed, Reason, SessionAction, Verdict};
use crate::agent::{self, ledger::Figures};
use crate::exit::{Exit, exit_for};
use crate::pty::Status;
use crate::store::{NewSession, SessionRow, Store, TurnEnd, TurnLedger};

/// The turn being settled.
pub struct Turn<'a> {
    /// The agent that ran it.
    pub agent: &'a str,
    /// The session it ran on.
    pub session: &'a SessionRow,
    /// Its row's id.
    pub turn_id: i64,
}

/// What the verdict's writes did beyond the turn's row.
#[derive(Debug, Default)]
pub struct Settled {
    /// The agent's own move of the session, recorded.
    pub moved: Option<Moved>,
    /// What could not be recorded, saying that the turn ran.
    pub error: Option<anyhow::Error>,
    /// The vault's restore, when it could not be recorded (the turn stands).
    pub restore_error: Option<anyhow::Error>,
}

/// A session the agent moved to, now followed.
#[derive(Debug, PartialEq, Eq)]
pub enum Moved {
    /// The same conversation under a new ID, on the same row.
    Renamed {
        /// The ID sticky asked for.
        from: String,
        /// The agent's new one.
        to: String,
    },
    /// Another conversation the user switched to inside the agent: a rotation with reason
    /// `agent`.
    Followed {
        /// The agent's session ID.
        to: String,
    },
}

/// Writes `verdict` on `turn`: what the run left `unrecorded`, the session's action, the files
/// the vault `restored` (count, bytes), then the turn's end with what was `observed` and how
/// the agent's process ended (`status`).
pub fn settle(
    store: &mut Store,
    turn: &Turn<'_>,
    verdict: &Verdict,
    observed: &Observed,
    status: Option<Status>,
    unrecorded: Option<anyhow::Error>,
    restored: Option<(usize, u64)>,
) -> Settled {
    let session_id = turn.session.id;
    let named = match (unrecorded, observed.reported.as_deref()) {
        (Some(_), Some(id)) => store
            .set_agent_session_id(session_id, id)
            .map_err(|error| (format!("the session ID {id} that the agent named"), error)),
        (Some(error), None) => Err(("the session ID that the agent named".into(), error)),
        (None, _) => Ok(()),
    };
    let mut moved = None;
    let session = named.and_then(|()| {
        moved = apply(store, turn, &verdict.session)
            .map_err(|error| (unrecorded_action(&verdict.session, session_id), error))?;
        Ok(())
    });
    let restore_error =
        restored.and_then(|(files, bytes)| store.record_restore(turn.turn_id, files, bytes).err());
    let (end, answer) = finish_turn(
        store,
        turn.turn_id,
        turn_end(store, turn, verdict, observed, status),
    );
    let ran = format!("{} ran turn #{}", turn.agent, turn.turn_id);
    let session = match (session, answer) {
        (Ok(()), Err(error)) => Err((
            "its answer, for `sticky show` (it was printed all the same)".to_owned(),
            error,
        )),
        (Err((what, error)), Err(_)) => Err((format!("{what} nor its answer"), error)),
        (session, Ok(())) => session,
    };
    Settled {
        moved,
        error: not_recorded(&ran, session, end).err(),
        restore_error,
    }
}

/// The turn's end as its row records it.
fn turn_end(
    store: &Store,
    turn: &Turn<'_>,
    verdict: &Verdict,
    observed: &Observed,
    status: Option<Status>,
) -> TurnEnd {
    let (exit_code, signal) = match status {
        Some(Status::Code(code)) => (Some(code), None),
        Some(Status::Signal(signal)) => (None, Some(signal)),
        None => (None, None),
    };
    TurnEnd {
        status: Some(verdict.status),
        exit_code,
        signal,
        ledger: TurnLedger {
            figures: ledger(store, turn, observed),
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
    }
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
fn ledger(store: &Store, turn: &Turn<'_>, observed: &Observed) -> Figures {
    let read = agent::ledger::needs_baseline(&observed.ledger)
        .then(|| store.ledger_baseline(turn.session.id, turn.turn_id).ok())
        .flatten();
    let first = read.as_ref().is_some_and(|(count, _)| *count <= 1);
    let baseline = read
        .and_then(|(_, totals)| totals)
        .and_then(|json| serde_json::from_str::<Figures>(&json).ok());
    agent::ledger::per_turn(observed.usage, &observed.ledger, baseline, first)
}

/// Applies what the verdict made of the session; returns the agent's move it followed.
fn apply(store: &mut Store, turn: &Turn<'_>, action: &SessionAction) -> Result<Option<Moved>> {
    let session_id = turn.session.id;
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
            return Ok(Some(Moved::Renamed {
                from: from.clone(),
                to: to.clone(),
            }));
        }
        SessionAction::Follow { to, confirm } => {
            let followed = follow(store, turn, to)?;
            if *confirm {
                store.confirm_session(session_id)?;
            }
            return Ok(followed.then(|| Moved::Followed { to: to.clone() }));
        }
        SessionAction::Unsaved { forget, .. } => {
            if *forget {
                store.forget_agent_session_id(session_id)?;
            }
        }
    }
    Ok(None)
}

/// The user switched to session `current` inside the agent (Claude's `/clear`): follow it,
/// a rotation with reason `agent`, so the next turn continues what the user last saw;
/// unless `sticky new` rotated the thread meanwhile (checked again in the transaction that
/// rotates): that choice stands. Returns whether the thread follows it.
fn follow(store: &mut Store, turn: &Turn<'_>, current: &str) -> Result<bool> {
    let old = turn.session;
    let followed = store.immediate(|tx| {
        let live = tx.live_session(old.thread_id)?;
        if live.is_none_or(|live| live.id != old.id) {
            return Ok(None);
        }
        let session = tx.start_session(
            old.thread_id,
            &NewSession {
                agent: turn.agent,
                model: old.model.as_deref(),
                agent_session_id: Some(current),
                directory: &old.directory,
                rotated_from: Some((old.id, Reason::Agent.as_str())),
                carried: None,
            },
        )?;
        Ok(Some(session.id))
    })?;
    let Some(session_id) = followed else {
        return Ok(false);
    };
    store.confirm_session(session_id)?;
    Ok(true)
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
