//! `sticky [PROMPT]` and `sticky new [PROMPT]`: one turn on the conversation's sticky session,
//! read top to bottom in [`run_turn`] and [`turn`]:
//!
//! lock (`begin::lock_thread`), plan once (`begin::begin`: one `BEGIN IMMEDIATE` transaction
//! that plans, applies the plan and writes the turn's row; `--carry` reads a preview of the
//! plan before it), run (`run::Running::run`), judge once (`judge::judge`); if the verdict is
//! "lost" and the vault restores the session (`vault::restore`), run and judge once more;
//! settle (`session::settle` writes the verdict); vault the session's files (`vault::keep`);
//! print (`print::print`); the report carries the exit.
//!
//! A `--carry=summary` handoff is such a turn too, on the old session, before the turn it
//! carries into. Below this file, each step is a module that imports none of the others'
//! callers: `asked` (the prompt, the mode), `begin`, `carry`, `run`, `judge`, `vault`,
//! `print`, `fork`, `implicit`.

use anyhow::Result;

use super::Context;
use super::input::Prompt;
use super::output::Report;
use super::view::escape;
use crate::cli::{ForkArgs, TurnArgs};
use crate::exit::StickyError;
use crate::session::{self, CarryKind, Request, Settling, Thread};
use crate::store::{Mode, Store};

mod asked;
mod begin;
mod carry;
mod fork;
mod implicit;
mod judge;
mod print;
mod run;
mod vault;

use begin::Start;
use print::Done;
use run::Running;

/// Runs one turn; `fresh` is `sticky new`.
pub fn run(ctx: &Context, args: &TurnArgs, fresh: bool) -> Result<Report> {
    if args.fork {
        asked::fork_first(ctx, args, fresh)?;
    }
    asked::ensure_thread_name(ctx)?;
    let stdin_is_terminal = std::io::IsTerminal::is_terminal(&std::io::stdin());
    let prompt = asked::read_prompt(ctx, args, fresh, stdin_is_terminal)?;
    let Some(mode) = asked::mode(args, prompt.is_some(), fresh, stdin_is_terminal)? else {
        return rotate_only(ctx, args);
    };
    run_turn(ctx, args, fresh, mode, prompt)
}

/// `sticky fork NAME [PROMPT]`: makes the fork, then runs its first turn when a prompt is
/// given; `open` builds the context of the new thread.
pub fn fork(
    ctx: &Context,
    args: &ForkArgs,
    open: impl FnOnce(&str) -> Result<Context>,
) -> Result<Report> {
    fork::ensure_no_second_fork(args)?;
    let session = fork::make(ctx, &ctx.thread, &args.name, &args.turn)?;
    let forked = open(&args.name)?;
    if !args.turn.prompt.is_empty() {
        return run(&forked, &args.turn, false);
    }
    fork::say_made(ctx, args, &session)?;
    if ctx.json {
        return print::no_turn_yet(ctx, &args.name, &session);
    }
    Ok(Report::nothing())
}

/// The turn, under the conversation's lock: the recap it carries, then the turn itself,
/// printed.
fn run_turn(
    ctx: &Context,
    args: &TurnArgs,
    fresh: bool,
    mode: Mode,
    prompt: Option<Prompt>,
) -> Result<Report> {
    let mut store = begin::open(ctx, args, fresh, prompt.as_ref())?;
    // Held until the turn is recorded: one turn at a time per conversation.
    let _lock = begin::lock_thread(ctx, &store, args)?;
    let request = begin::request(ctx, args, fresh)?;
    let (prompt, carried) = carry_into(ctx, &mut store, args, request, prompt)?;
    let start = Start {
        request,
        prompt: prompt.as_ref(),
        mode,
        carried: carried.map(|(kind, bytes)| (kind.as_str(), bytes)),
        purpose: None,
    };
    let done = turn(ctx, &mut store, args, &start)?;
    let report = print::print(ctx, &store, done);
    store.leave_open_until_exit();
    report
}

/// One turn: begun (planned once), run, judged once; run and judged once more when the agent
/// lost its session and the vault put it back; settled; its session's files vaulted.
fn turn<'a>(
    ctx: &'a Context,
    store: &mut Store,
    args: &TurnArgs,
    start: &Start<'_>,
) -> Result<Done<'a>> {
    let begun = begin::begin(ctx, store, args, start)?;
    let (outcome, verdict, settled) = {
        let turn = Running::new(ctx, &begun, args);
        vault::restore_fork_source(&turn, store);
        let mut outcome = turn.run(store, start.prompt);
        let mut verdict = judge::judge(&turn, store, &outcome);
        let restore = judge::lost(&verdict).map(|id| vault::restore(&turn, store, id));
        if let Some(restore) = &restore {
            if restore.restored().is_some() {
                outcome = turn.run(store, start.prompt);
                verdict = judge::judge(&turn, store, &outcome);
            }
            judge::say_vault(&mut verdict, restore, begun.adapter.name());
        }
        let settling = Settling {
            agent: begun.adapter.name(),
            session: &begun.session,
            turn_id: begun.turn_id,
        };
        let status = outcome.ended.as_ref().ok().map(|finished| finished.status);
        let unrecorded = outcome.unrecorded.take();
        let restored = restore.as_ref().and_then(vault::Restore::restored);
        let observed = &outcome.observed;
        let settled = session::settle(
            store, &settling, &verdict, observed, status, unrecorded, restored,
        );
        vault::keep(&turn, store);
        (outcome, verdict, settled)
    };
    Ok(Done {
        begun,
        outcome,
        verdict,
        settled,
    })
}

/// The turn's prompt with any recap before it, and the kind and size in bytes of a `--carry`
/// recap.
type Carried = (Option<Prompt>, Option<(CarryKind, i64)>);

/// The prompt with the recap the turn carries before it (`--carry`, `carry_on_change`, a
/// fork's first turn on an agent without a fork of its own), and the kind and size of a
/// `--carry` recap, by a preview of the turn's plan. A summary is asked of the old session by
/// a handoff turn; when it fails, sticky's own recap is carried, and sticky says why.
fn carry_into(
    ctx: &Context,
    store: &mut Store,
    args: &TurnArgs,
    request: Request<'_>,
    prompt: Option<Prompt>,
) -> Result<Carried> {
    let thread = Thread::peek(store, &ctx.thread)?;
    let preview = thread
        .as_ref()
        .map(|thread| thread.plan(&ctx.agents, request));
    let wanted = carry::wanted(args, request, preview.as_ref(), prompt.is_some())?;
    let prompt = carry::fork_recap(ctx, store, args, preview.as_ref(), prompt)?;
    let (Some((kind, old)), Some(prompt), Some(plan)) = (wanted, prompt.clone(), &preview) else {
        return Ok((prompt, None));
    };
    let summary = match kind {
        CarryKind::Summary => Some(match carry::handoff(&old, plan, args.carry_max) {
            Some(ask) => handoff(ctx, store, &old, &ask, args.carry_max),
            None => Err("the old session was never saved by its agent".to_owned()),
        }),
        _ => None,
    };
    let (recap, kind) = match summary {
        Some(Ok(summary)) => (summary, CarryKind::Summary),
        Some(Err(why)) => {
            note!(
                "no handoff summary ({}); carrying sticky's own recap of the old session instead",
                escape(&why)
            );
            (carry::recap(store, &old, args.carry_max)?, CarryKind::Recap)
        }
        None => (carry::recap(store, &old, args.carry_max)?, CarryKind::Recap),
    };
    let bytes = i64::try_from(recap.len()).unwrap_or(i64::MAX);
    Ok((Some(carry::before(prompt, &recap)), Some((kind, bytes))))
}

/// The handoff turn: a turn like any other on the old session `old` (recorded with the purpose
/// `handoff`, its files vaulted), whose answer is not printed but becomes the recap.
fn handoff(
    ctx: &Context,
    store: &mut Store,
    old: &crate::store::SessionRow,
    ask: &Prompt,
    max: usize,
) -> Result<String, String> {
    let args = TurnArgs::default();
    let start = Start {
        request: Request {
            fresh: false,
            agent: None,
            model: None,
            default_agent: ctx.default_agent(),
            carry: None,
            carry_on_change: CarryKind::Off,
        },
        prompt: Some(ask),
        mode: Mode::Headless,
        carried: None,
        purpose: Some(carry::HANDOFF),
    };
    let done = turn(ctx, store, &args, &start).map_err(|error| format!("{error:#}"))?;
    carry::summary(old, &done, max)
}

/// `sticky new` without a prompt: rotate now, start the agent on the next turn.
fn rotate_only(ctx: &Context, args: &TurnArgs) -> Result<Report> {
    if !args.agent_args.is_empty() {
        // No agent runs now, so they would be dropped without a word.
        return Err(StickyError::Usage(
            "agent arguments after `--` need a turn: give `sticky new` a prompt before `--` \
             (sticky new \"PROMPT\" -- AGENT_ARGS)"
                .into(),
        )
        .into());
    }
    if matches!(args.carry, Some(CarryKind::Recap | CarryKind::Summary)) {
        return Err(StickyError::Usage(
            "--carry puts the recap before the new session's first prompt: give one \
             (sticky new --carry \"PROMPT\")"
                .into(),
        )
        .into());
    }
    let mut store = begin::open(ctx, args, true, None)?;
    let request = begin::request(ctx, args, true)?;
    let (session, _) = store.immediate(|tx| {
        let thread = begin::thread(ctx, tx)?;
        let plan = begin::decide(ctx, &thread, request);
        session::apply(tx, thread.id, &plan, &ctx.agents, &ctx.project.dir, None)
    })?;
    if ctx.json {
        return print::no_turn_yet(ctx, &ctx.thread, &session);
    }
    aside!(
        "new {} session for thread {}; the next turn starts it",
        session.agent,
        escape(&ctx.thread)
    );
    Ok(Report::nothing())
}
