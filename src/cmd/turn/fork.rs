//! `sticky fork NAME [PROMPT]` and `sticky -t NAME --fork PROMPT`: thread NAME made from the
//! live session of the current thread.
//!
//! The fork is recorded at once (one transaction: the new thread, its session marked
//! `forked_from` the source); the agent makes it at the fork's first turn, which passes the
//! source's ID to the agent's own fork (`agent::Forking::Own`) or, for an agent without one,
//! puts sticky's recap of the source before the prompt (`turn::carry::fork_recap`). A fork the
//! agent has not made yet is made again by the next turn however the last one failed
//! (`session::plan`'s `forking`). Forking at once would need a turn anyway for every agent but
//! Claude Code, whose fork is made by the turn that sends it a prompt, so the rule is one.

use anyhow::Result;

use super::Context;
use crate::cli::{ForkArgs, TurnArgs};
use crate::cmd::output::Report;
use crate::cmd::view::{SessionView, escape};
use crate::exit::StickyError;
use crate::store::{ForkedFrom, NewSession, SessionRow};

/// Makes the fork, then runs its first turn when a prompt is given; `open` builds the context
/// of the new thread.
pub fn run(
    ctx: &Context,
    args: &ForkArgs,
    open: impl FnOnce(&str) -> Result<Context>,
) -> Result<Report> {
    if args.turn.fork {
        return Err(StickyError::Usage(
            "--fork belongs to a turn (sticky -t NAME --fork PROMPT); `sticky fork NAME` forks \
             already"
                .into(),
        )
        .into());
    }
    let session = make(ctx, &ctx.thread, &args.name, &args.turn)?;
    let fork = open(&args.name)?;
    if !args.turn.prompt.is_empty() {
        return super::run(&fork, &args.turn, false);
    }
    if !args.turn.agent_args.is_empty() {
        return Err(StickyError::Usage(
            "agent arguments after `--` need a turn: the fork is made; give its first prompt \
             (sticky -t NAME \"PROMPT\" -- AGENT_ARGS)"
                .into(),
        )
        .into());
    }
    if ctx.json {
        return Report::json(&serde_json::json!({
            "thread": args.name,
            "project": ctx.project.dir.display().to_string(),
            "session": SessionView::from(&session),
            "turn": null,
            "answer": null,
            "error": null,
            "exit_code": 0,
        }));
    }
    if !ctx.quiet {
        eprintln!(
            "sticky: thread {} forks thread {}'s {} session; its first turn makes the fork \
             (sticky -t {} \"PROMPT\")",
            escape(&args.name),
            escape(&ctx.thread),
            session.agent,
            escape(&args.name),
        );
    }
    Ok(Report::nothing())
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
    let no_session = || {
        StickyError::Usage(format!(
            "thread {source} has no session its agent saved, so there is nothing to fork; run a \
             turn on it first (sticky -t {source} \"PROMPT\"), or start thread {name} afresh \
             (sticky -t {name} \"PROMPT\")"
        ))
    };
    let Some(mut store) = ctx.existing_store()? else {
        return Err(no_session().into());
    };
    store.immediate(|tx| {
        if tx.thread(name)?.is_some() {
            return Err(StickyError::Usage(format!(
                "thread {name} exists already; a fork makes a new thread: name another, or \
                 `sticky forget -t {name}` first"
            ))
            .into());
        }
        let source_thread = tx.thread(source)?.ok_or_else(no_session)?;
        let live = tx
            .live_session(source_thread.id)?
            .filter(|live| live.confirmed_at.is_some())
            .ok_or_else(no_session)?;
        let Some(from_id) = live.agent_session_id.clone() else {
            return Err(no_session().into());
        };
        crate::session::ensure_in_project(&live, source, &ctx.project.dir)?;
        crate::session::ensure_plain_arguments(&live, &ctx.agents, &ctx.project.state.db)?;
        let adapter = ctx.agents.get(&live.agent)?;
        if let Some(agent) = args.agent.as_deref() {
            if ctx.agents.get(agent)?.name() != adapter.name() {
                return Err(StickyError::Usage(format!(
                    "a fork goes on with the agent of the session it forks ({}); fork first, \
                     then change agents on the fork (sticky -t {name} -a {agent} --carry \
                     \"PROMPT\")",
                    live.agent
                ))
                .into());
            }
        }
        let thread = tx.ensure_thread(name)?;
        let id = adapter.fork_id();
        let session = tx.start_session(
            thread.id,
            &NewSession {
                agent: &live.agent,
                model: live.model.as_deref(),
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
                agent_session_id: from_id,
            },
        )
    })
}
