//! The vault in a turn: the live session's files copied after the turn, and put back when the
//! agent reports the pinned session lost, so the turn resumes it once more (see
//! `crate::vault`); but only a copy that holds every turn the database records on the
//! session: an older one would resume a conversation with its latest turns forgotten, which
//! the user would not see (issue 23, finding 9).

use super::super::Context;
use super::super::vault::behind;
use super::super::view::{escape, format_time};
use super::run::Running;
use crate::session::{Action, Request, SessionAction, Thread, Verdict};
use crate::store::Store;
use crate::vault::{Held, Restored, Vault};

/// What the vault did for a turn whose session the agent reported lost.
#[derive(Debug)]
pub(super) enum Restore {
    /// The vault is off (`vault = false`); `true` when it holds a copy of the session all the
    /// same, made before it was turned off, which turning it on again puts back (review 21, M2).
    Off(bool),
    /// The vault holds no copy of the session.
    NoCopy,
    /// The copy was put back and the agent resumed again.
    Done(Restored),
    /// Every file of the copy is in place already: the agent refused it as it is.
    InPlace,
    /// The copy ends before turns the database records on the session: not put back. The
    /// text names them and the way out.
    Behind(String),
    /// Putting the copy back failed.
    Failed(String),
}

impl Restore {
    /// The files put back, when the vault restored the session (count, bytes).
    pub(super) fn restored(&self) -> Option<(usize, u64)> {
        match self {
            Self::Done(restored) => Some((restored.files, restored.bytes)),
            _ => None,
        }
    }

    /// What the vault could do, for the "session lost" message of a turn that stays lost.
    pub(super) fn note(&self) -> String {
        match self {
            Self::Off(false) => {
                "sticky's vault is off (vault = false), so no copy was restored".into()
            }
            Self::Off(true) => "sticky's vault is off (vault = false), so the copy of it the \
                                vault still holds (made before it was turned off) was not \
                                restored: set `vault = true` in the configuration and run the \
                                turn again to go on with the session"
                .into(),
            Self::NoCopy => "sticky's vault holds no copy of it".into(),
            Self::Done(_) => "the copy restored from sticky's vault was refused too".into(),
            Self::InPlace => "the copy in sticky's vault is in place and was refused too".into(),
            Self::Behind(missing) => missing.clone(),
            Self::Failed(error) => format!("restoring it from sticky's vault failed: {error}"),
        }
    }
}

/// The vault of the turn's project.
fn vault(turn: &Running<'_>) -> Vault {
    Vault::new(&turn.ctx.project.state.vault)
}

/// Before a turn that resumes its thread's session in this project: the agent's files of it
/// checked against the vault's copies, which hold every turn sticky ran on it. Files behind
/// their copies (another agent home than the last turn's, `CLAUDE_CONFIG_DIR` set in one shell
/// and not another; a home restored from a backup) get the copies back, said on stderr; a file
/// that went another way refuses the turn (73) before anything is recorded, rather than let the
/// agent go on with sticky's latest turns forgotten (review 23, M1). A copy that lacks turns
/// itself proves nothing of them, and a check that cannot be made is said and passed over.
pub(super) fn catch_up(ctx: &Context, store: &Store, request: Request<'_>) -> anyhow::Result<()> {
    if !ctx.settings.vault.value {
        return Ok(());
    }
    let Some(thread) = Thread::peek(store, &ctx.thread)? else {
        return Ok(());
    };
    let plan = thread.plan(&ctx.agents, request);
    match plan.action {
        Action::Resume(live) => super::super::vault::catch_up(ctx, store, live, &ctx.thread),
        // A fork not made yet is made by this turn from its source as the agent keeps it
        // (Claude's `--resume FROM --fork-session`): the source is caught up first (review 25,
        // M4).
        Action::Restart(live) if live.confirmed_at.is_none() => {
            let Some(forked) = &live.forked_from else {
                return Ok(());
            };
            let source = store.session(forked.session)?.filter(|source| {
                source.agent_session_id.as_deref() == Some(forked.agent_session_id.as_str())
            });
            match source {
                Some(source) => super::super::vault::catch_up(ctx, store, &source, &forked.thread),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// The agent reported session `id` lost: the vault's copy put back when it holds every turn
/// the database records on the session, said on stderr; the turn then runs once more.
pub(super) fn restore(turn: &Running<'_>, store: &Store, id: &str) -> Restore {
    let adapter = turn.begun.adapter;
    let vault = vault(turn);
    if !turn.ctx.settings.vault.value {
        let agent = turn.begun.adapter.name();
        return Restore::Off(vault.session_dir(agent, id).is_dir());
    }
    match behind(&vault, store, &turn.begun.session, &turn.ctx.thread, id) {
        Ok(None) => {}
        Ok(Some(missing)) => return Restore::Behind(missing),
        Err(error) => return Restore::Failed(format!("{error:#}")),
    }
    let directory = &turn.begun.session.directory;
    let restored = match vault.restore(adapter, &turn.begun.home, id, directory) {
        Ok(None) => return Restore::NoCopy,
        Ok(Some(restored)) if restored.files == 0 => return Restore::InPlace,
        Ok(Some(restored)) => restored,
        Err(error) => return Restore::Failed(format!("{error:#}")),
    };
    // A copy that came with a state `sticky trust` adopted was written elsewhere: the agent
    // here never had that transcript, and now reads it as its own.
    let adopted = restored.adopted_at.map_or_else(String::new, |at| {
        format!(
            " adopted by `sticky trust` on {} (the copy came with that state: this HOME's agent \
             never had it)",
            format_time(at)
        )
    });
    note!(
        "{} lost session {}; restored {} file{} from sticky's vault{adopted}, resuming it again",
        adapter.name(),
        escape(id),
        restored.files,
        if restored.files == 1 { "" } else { "s" }
    );
    Restore::Done(restored)
}

/// A session that stays lost says what the vault could do for it (`restore`), in the
/// verdict's reason and error line.
pub(super) fn say(verdict: &mut Verdict, restore: &Restore, agent: &str) {
    if let SessionAction::Lost { reason, .. } = &mut verdict.session {
        reason.push_str("; ");
        reason.push_str(&restore.note());
        verdict.error = verdict.failure(agent).map(|failure| failure.to_string());
    }
}

/// Before a fork's first turn, which forks session `from` with the agent's own fork (Claude
/// Code's `--resume FROM --fork-session`): the source's files put back from the vault when the
/// agent no longer has them (Claude deletes old transcripts), as a turn on the source thread
/// would put them back; without them the agent's fork fails. Said on stderr; a copy that lacks
/// turns of the source, or cannot be put back, is said too and left alone.
pub(super) fn restore_fork_source(turn: &Running<'_>, store: &Store) {
    let (Some(from), Some(forked)) = (
        turn.begun.fork_from.as_deref(),
        turn.begun.session.forked_from.as_ref(),
    ) else {
        return;
    };
    let adapter = turn.begun.adapter;
    let directory = &turn.begun.session.directory;
    let home = &turn.begun.home;
    if !turn.ctx.settings.vault.value || adapter.saved(home, directory, from) != Some(false) {
        return;
    }
    let vault = vault(turn);
    let note = |text: String| note!("{}", escape(&text));
    // With the source thread forgotten since (whose copy `forget` keeps for the fork: review
    // 19, M2), no turn on record can be missing from the copy.
    let source = match store.session(forked.session) {
        Ok(source) => source.filter(|source| source.agent_session_id.as_deref() == Some(from)),
        Err(_) => return,
    };
    match source.map_or(Ok(None), |source| {
        behind(&vault, store, &source, &forked.thread, from)
    }) {
        Ok(None) => {}
        Ok(Some(missing)) => {
            return note(format!(
                "{} no longer has session {from} of thread {}, which this fork forks: {missing}",
                adapter.name(),
                forked.thread
            ));
        }
        Err(_) => return,
    }
    match vault.restore(adapter, home, from, directory) {
        Ok(Some(restored)) if restored.files > 0 => note(format!(
            "{} no longer has session {from} of thread {}, which this fork forks; restored {} \
             file{} from sticky's vault",
            adapter.name(),
            forked.thread,
            restored.files,
            if restored.files == 1 { "" } else { "s" }
        )),
        Ok(_) => {}
        Err(error) => note(format!(
            "{} no longer has session {from} of thread {}, which this fork forks, and \
             restoring it from sticky's vault failed: {error:#}",
            adapter.name(),
            forked.thread
        )),
    }
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
    let home = &turn.begun.home;
    let turn_id = turn.begun.turn_id;
    let held = Held {
        id: turn_id,
        started_at: store.turn(turn_id).ok().flatten().map(|row| row.started_at),
    };
    let copied = vault(turn).copy(adapter, home, &live.directory, id, held);
    if let Err(error) = copied {
        note!(
            "could not keep a copy of session {} in the vault: {}",
            escape(id),
            escape(&format!("{error:#}"))
        );
    }
}
