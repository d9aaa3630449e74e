//! `sticky fork NAME [PROMPT]` and `sticky -t NAME --fork PROMPT`: thread NAME made from the
//! live session of the current thread.
//!
//! The fork is recorded at once (one transaction: the new thread, its session marked
//! `forked_from` the source). An agent with a fork of its own (`agent::Forking::Own`) makes it
//! at the fork's first turn, which passes it the source's ID: their forks are made by a turn
//! that sends a prompt (Claude Code's too), so the fork waits for one. A fork the agent has not
//! made yet is made again by the next turn however the last one failed (`session::plan`'s
//! `forking`); a source whose files the agent no longer has is put back from the vault first
//! (`turn::vault::restore_fork_source`). An agent that resumes a copy of a session's files under a new ID
//! (`agent::Forking::Copy`: Gemini CLI, Copilot CLI) gets that copy now, and the fork is a
//! confirmed session its first turn resumes. Where neither is possible (an agent of the
//! configuration; a source whose files are gone), the first turn puts sticky's recap of the
//! source before the prompt (`turn::carry::fork_recap`) and says so.

use anyhow::Result;

use super::super::Context;
use crate::agent::{Forking, fork_copy};
use crate::cli::{ForkArgs, TurnArgs};
use crate::cmd::view::{escape, thread_option};
use crate::exit::StickyError;
use crate::store::{ForkedFrom, NewSession, SessionRow, Store};

/// Refuses `sticky fork NAME --fork`: the command forks already.
pub(super) fn ensure_no_second_fork(args: &ForkArgs) -> Result<()> {
    if args.turn.fork {
        return Err(StickyError::Usage(
            "--fork belongs to a turn (sticky -t NAME --fork PROMPT); `sticky fork NAME` forks \
             already"
                .into(),
        )
        .into());
    }
    Ok(())
}

/// Says what `sticky fork NAME` without a prompt made: the fork, and how its first turn goes.
pub(super) fn say_made(ctx: &Context, args: &ForkArgs, session: &SessionRow) -> Result<()> {
    if !args.turn.agent_args.is_empty() {
        return Err(StickyError::Usage(
            "agent arguments after `--` need a turn: the fork is made; give its first prompt \
             (sticky -t NAME \"PROMPT\" -- AGENT_ARGS)"
                .into(),
        )
        .into());
    }
    let how = if session.confirmed_at.is_some() {
        format!(
            "made now, a copy of its files as session {}",
            session.agent_session_id.as_deref().unwrap_or("?")
        )
    } else if ctx.agents.get(&session.agent)?.forking() == Forking::Copy {
        // Nothing to copy: the source's files are gone (see `make`).
        "the agent keeps no file of it to copy, so the fork's first turn starts with sticky's \
         recap of it"
            .to_owned()
    } else {
        "its first turn makes the fork".to_owned()
    };
    aside!(
        "thread {} forks thread {}'s {} session; {how} (sticky {} \"PROMPT\")",
        escape(&args.name),
        escape(&ctx.thread),
        session.agent,
        thread_option(&args.name),
    );
    Ok(())
}

/// Why thread `name` cannot fork `source`, which has no session its agent saved.
fn no_session(source: &str, name: &str) -> StickyError {
    StickyError::Usage(format!(
        "thread {} has no session its agent saved, so there is nothing to fork; run a turn on it \
         first (sticky {} \"PROMPT\"), or start thread {} afresh (sticky {} \"PROMPT\")",
        escape(source),
        thread_option(source),
        escape(name),
        thread_option(name),
    ))
}

/// Records thread `name` as a fork of `source`'s live session and returns its session: refuses
/// a name in use or not allowed, a source without a session its agent saved, and another agent
/// than the source's.
pub(super) fn make(ctx: &Context, source: &str, name: &str, args: &TurnArgs) -> Result<SessionRow> {
    if let Some(problem) = crate::cmd::thread_name_problem(name) {
        return Err(StickyError::Usage(format!("the thread name \"{name}\" {problem}")).into());
    }
    if name == source {
        return Err(StickyError::Usage(format!(
            "a fork needs a new thread: \"{name}\" is the thread it would fork; name another"
        ))
        .into());
    }
    let no_session = || no_session(source, name);
    let Some(mut store) = ctx.existing_store()? else {
        return Err(no_session().into());
    };
    // A turn running on the source is waited for: a copy made now (Gemini, Copilot) would
    // take the agent's files half-written.
    let _source = lock_source(ctx, &store, source, args)?;
    store.immediate(|tx| {
        if tx.thread(name)?.is_some() {
            return Err(StickyError::Usage(format!(
                "thread {} exists already; a fork makes a new thread: name another, or \
                 `sticky forget {}` first",
                escape(name),
                thread_option(name),
            ))
            .into());
        }
        let source_thread = tx.thread(source)?.ok_or_else(no_session)?;
        let live = tx
            .live_session(source_thread.id)?
            .filter(|live| live.confirmed_at.is_some())
            .ok_or_else(no_session)?;
        if live.agent_session_id.is_none() {
            return Err(no_session().into());
        }
        // What a turn on the source refuses to resume, its fork does not read either.
        super::begin::ensure_here(ctx, source, &live, &crate::settings::home()?)?;
        crate::session::ensure_plain_arguments(&live, &ctx.agents, &ctx.project.state.db)?;
        let adapter = ctx.agents.get(&live.agent)?;
        if let Some(agent) = args.agent.as_deref() {
            if ctx.agents.get(agent)?.name() != adapter.name() {
                return Err(StickyError::Usage(format!(
                    "a fork goes on with the agent of the session it forks ({}); fork first, \
                     then change agents on the fork (sticky {} -a {} --carry \"PROMPT\")",
                    live.agent,
                    thread_option(name),
                    crate::msg::shell_word(agent),
                ))
                .into());
            }
        }
        let home = crate::settings::home()?;
        start_fork(ctx, tx, (source, &live), name, args, &home)
    })
}

/// Records thread `name`'s session, a fork of `live` (thread `source`'s live session): for an
/// agent that resumes a copy of a session's files, that copy made now is the fork.
fn start_fork(
    ctx: &Context,
    tx: &crate::store::Tx<'_>,
    (source, live): (&str, &SessionRow),
    name: &str,
    args: &TurnArgs,
    home: &std::path::Path,
) -> Result<SessionRow> {
    let adapter = ctx.agents.get(&live.agent)?;
    let from_id = live.agent_session_id.clone().unwrap_or_default();
    let thread = tx.ensure_thread(name)?;
    let id = adapter.fork_id();
    let copy = match (adapter.forking(), id.as_deref()) {
        (Forking::Copy, Some(new_id)) => {
            let copied =
                fork_copy::copy_session(adapter, home, &live.directory, (&from_id, new_id))?;
            (!copied.files.is_empty()).then_some(copied)
        }
        _ => None,
    };
    let recorded = (|| {
        let session = tx.start_session(
            thread.id,
            &NewSession {
                agent: &live.agent,
                model: args.model.as_deref().or(live.model.as_deref()),
                agent_session_id: id.as_deref(),
                directory: &ctx.project.dir,
                rotated_from: None,
                carried: None,
            },
        )?;
        tx.mark_fork(
            session.id,
            &ForkedFrom {
                session: live.id,
                thread: source.to_owned(),
                agent_session_id: from_id.clone(),
            },
            copy.is_some(),
        )
    })();
    if let (Err(_), Some(copy)) = (&recorded, copy) {
        copy.discard();
    }
    recorded
}

/// Takes thread `source`'s lock as a reader (`lock::lock_to_read`), waiting for a turn running
/// on it as a turn waits (`--wait`, `--no-wait`), unless that turn is the one this sticky runs
/// inside; then catches the source up with the vault: what a copy fork (Gemini, Copilot)
/// copies now, and an own fork's first turn forks, is the source as the agent keeps it (review
/// 25, M4).
fn lock_source(
    ctx: &Context,
    store: &Store,
    source: &str,
    args: &TurnArgs,
) -> Result<crate::lock::ReadLock> {
    super::super::nested::refuse_inside_own_turn(
        store,
        source,
        "fork it from outside that turn, once it has ended",
    )?;
    let wait = if args.no_wait {
        std::time::Duration::ZERO
    } else {
        std::time::Duration::from_secs(args.wait)
    };
    let lock = crate::lock::lock_to_read(&ctx.project.state.locks, source, wait, &mut || {
        if !args.no_wait {
            note!(
                "waiting up to {}s for the turn running on thread {}, to fork what it leaves",
                wait.as_secs(),
                escape(source)
            );
        }
    })?;
    let lock = lock.ok_or_else(|| {
        StickyError::Busy(format!(
            "a turn still runs on thread {}; fork it when the turn ends (--wait SECONDS waits \
             longer)",
            escape(source)
        ))
    })?;
    super::vault::catch_up(ctx, store, super::begin::request(ctx, args, false)?)?;
    Ok(lock)
}
