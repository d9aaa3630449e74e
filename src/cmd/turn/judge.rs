//! A run judged: the verdict (`session::verdict`, pure) on how the agent's process ended and
//! what it reported, with the agent's records and the database as evidence; a session that
//! stays lost names what the vault could do.

use std::path::Path;

use super::run::{Outcome, Running};
use super::vault::Restore;
use crate::agent::Diagnosis;
use crate::exit::exit_for;
use crate::session::{self, Asked, Ended, Evidence, SessionAction, Unrun, Verdict};
use crate::store::Store;

/// The verdict on one run of the turn.
pub(super) fn judge(turn: &Running<'_>, store: &Store, outcome: &Outcome) -> Verdict {
    let ended: Ended = match &outcome.ended {
        Ok(finished) => Ok(*finished),
        Err(error) => Err(Unrun {
            error: format!("{error:#}"),
            // 72 for a program the kernel would not run, in the `--json` object as in the
            // process's exit.
            exit: exit_for(error),
        }),
    };
    let asked = Asked {
        agent: turn.begun.adapter.name(),
        target: turn.begun.aim.target(),
    };
    let evidence = Records {
        turn,
        store,
        home: &turn.begun.home,
        said: outcome.observed.said(),
    };
    session::verdict(asked, &outcome.observed, &ended, &evidence)
}

/// A session that stays lost says what the vault could do for it (`restore`), in the
/// verdict's reason and error line.
pub(super) fn say_vault(verdict: &mut Verdict, restore: &Restore, agent: &str) {
    if let SessionAction::Lost { reason, .. } = &mut verdict.session {
        reason.push_str("; ");
        reason.push_str(&restore.note());
        verdict.error = verdict.failure(agent).map(|failure| failure.to_string());
    }
}

/// The agent session ID when the verdict is that the agent lost it (rule 8), so the vault may
/// put it back and the turn run once more.
pub(super) fn lost(verdict: &Verdict) -> Option<&str> {
    match &verdict.session {
        SessionAction::Lost { session, .. } => Some(session),
        _ => None,
    }
}

/// The agent's records of its sessions and the thread's row, as the verdict asks for them.
struct Records<'a> {
    turn: &'a Running<'a>,
    store: &'a Store,
    home: &'a Path,
    /// What the agent said, where the adapter looks for its error texts.
    said: String,
}

impl Evidence for Records<'_> {
    fn saved(&self, id: &str) -> Option<bool> {
        let begun = self.turn.begun;
        begun.adapter.saved(self.home, &begun.session.directory, id)
    }

    fn renamed(&self, expected: &str, actual: &str) -> bool {
        let begun = self.turn.begun;
        let directory = &begun.session.directory;
        begun
            .adapter
            .renamed(self.home, directory, expected, actual)
    }

    fn transcript(&self, id: &str) -> Option<bool> {
        let begun = self.turn.begun;
        let path = begun
            .adapter
            .transcript(self.home, &begun.session.directory, id)?;
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
            .diagnose(&self.turn.begun.aim.target(), &self.said)
    }
}
