//! The vault in a turn: the live session's files copied after the turn, and put back when the
//! agent reports the pinned session lost, so the turn resumes it once more (see
//! `crate::vault`).

use std::path::PathBuf;

use super::super::view::{escape, fresh_line};
use super::end::lost;
use super::run::{Outcome, Running};
use crate::store::Store;
use crate::vault::{Restored, Vault};

/// What the vault did for a turn whose session the agent reported lost.
#[derive(Debug)]
pub(super) enum Restore {
    /// The vault is off (`vault = false`).
    Off,
    /// The vault holds no copy of the session.
    NoCopy,
    /// The copy was put back and the agent resumed again.
    Done(Restored),
    /// Every file of the copy is in place already: the agent refused it as it is.
    InPlace,
    /// Putting the copy back failed.
    Failed(String),
}

impl Restore {
    /// What the vault could do, for the "session lost" message of a turn that stays lost.
    pub(super) fn note(&self) -> String {
        match self {
            Self::Off => "sticky's vault is off (vault = false), so no copy was restored".into(),
            Self::NoCopy => "sticky's vault holds no copy of it".into(),
            Self::Done(_) => "the copy restored from sticky's vault was refused too".into(),
            Self::InPlace => "the copy in sticky's vault is in place and was refused too".into(),
            Self::Failed(error) => format!("restoring it from sticky's vault failed: {error}"),
        }
    }
}

/// The user's home, where the agents keep their files.
fn home() -> PathBuf {
    dirs::home_dir().unwrap_or_default()
}

/// The vault of the turn's project.
fn vault(turn: &Running<'_>) -> Vault {
    Vault::new(&turn.ctx.project.state.vault)
}

/// When the agent reported the session lost: the vault's copy put back and the agent run once
/// more (`again`), whose outcome replaces the first. `None` when the session was not lost.
pub(super) fn restore_if_lost(
    turn: &Running<'_>,
    store: &Store,
    outcome: Outcome,
    again: impl FnOnce() -> Outcome,
) -> (Outcome, Option<Restore>) {
    let adapter = turn.begun.adapter;
    let Some(id) = lost(turn, store, &outcome) else {
        return (outcome, None);
    };
    if !turn.ctx.settings.vault.value {
        return (outcome, Some(Restore::Off));
    }
    let restored = match vault(turn).restore(adapter, &home(), &id) {
        Ok(None) => return (outcome, Some(Restore::NoCopy)),
        Ok(Some(restored)) if restored.files == 0 => return (outcome, Some(Restore::InPlace)),
        Ok(Some(restored)) => restored,
        Err(error) => return (outcome, Some(Restore::Failed(format!("{error:#}")))),
    };
    if !turn.ctx.quiet {
        eprintln!(
            "{}sticky: {} lost session {}; restored {} file{} from sticky's vault, resuming it again",
            fresh_line(),
            adapter.name(),
            escape(&id),
            restored.files,
            if restored.files == 1 { "" } else { "s" }
        );
    }
    (again(), Some(Restore::Done(restored)))
}

/// After the turn: what changed of the thread's live session's files goes into the vault
/// (when it is on). A copy that fails is said on stderr; the turn stands.
pub(super) fn keep(turn: &Running<'_>, store: &Store) {
    if !turn.ctx.settings.vault.value {
        return;
    }
    let thread_id = turn.begun.session.thread_id;
    let Ok(Some(live)) = store.live_session(thread_id) else {
        return;
    };
    let (Some(id), Ok(adapter)) = (&live.agent_session_id, turn.ctx.agents.get(&live.agent)) else {
        return;
    };
    if let Err(error) = vault(turn).copy(adapter, &home(), &live.directory, id) {
        if !turn.ctx.quiet {
            eprintln!(
                "{}sticky: could not keep a copy of session {} in the vault: {}",
                fresh_line(),
                escape(id),
                escape(&format!("{error:#}"))
            );
        }
    }
}
