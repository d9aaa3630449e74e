//! `sticky [PROMPT]` and `sticky new [PROMPT]`: one turn on the conversation's sticky session,
//! read top to bottom in [`run_turn`] and [`turn`]:
//!
//! lock (`begin::lock_thread`), the agent's files of a resumed session checked against the
//! vault's copies (`vault::catch_up`), plan once (`begin::begin`: one `BEGIN IMMEDIATE` transaction
//! that plans, applies the plan and writes the turn's row; `--carry` reads a preview of the
//! plan before it), run (`run::Running::run`), judge once (`run::judge`); if the verdict is
//! "lost" and the vault restores the session (`vault::restore`), run and judge once more;
//! settle (`session::settle` writes the verdict); vault the session's files (`vault::keep`);
//! print (`print::print`); the report carries the exit.
//!
//! A `--carry=summary` handoff is such a turn too, on the old session, before the turn it
//! carries into. Below this file, each step is a module that imports none of its callers:
//! `begin`, `carry`, `run` (the run and its verdict), `vault`, `print`, `fork`. What the user
//! asks (the prompt, the mode, `--fork` made first) is read at the end of this file, before
//! anything is opened.

use anyhow::Result;

use std::io::IsTerminal;

use super::Context;
use super::input::{self, Prompt};
use super::output::Report;
use super::view::escape;
use crate::cli::{ForkArgs, TurnArgs};
use crate::config::StdinMode;
use crate::exit::StickyError;
use crate::session::{self, CarryKind, Request, Settling, Thread};
use crate::store::{Mode, Store};

mod begin;
mod carry;
mod fork;
mod print;
mod run;
mod vault;

use begin::Start;
use print::Done;
use run::Running;

/// Runs one turn; `fresh` is `sticky new`.
pub fn run(ctx: &Context, args: &TurnArgs, fresh: bool) -> Result<Report> {
    if args.fork {
        fork_first(ctx, args, fresh)?;
    }
    ensure_thread_name(ctx)?;
    let stdin_is_terminal = std::io::stdin().is_terminal();
    let prompt = read_prompt(ctx, args, fresh, stdin_is_terminal)?;
    let Some(mode) = mode(args, prompt.is_some(), fresh, stdin_is_terminal)? else {
        return rotate_only(ctx, args);
    };
    run_turn(ctx, args, fresh, mode, prompt)
}

/// `sticky fork NAME [PROMPT]`: makes the fork, then runs its first turn when a prompt is
/// given (as words, or piped on stdin); `open` builds the context of the new thread.
pub fn fork(
    ctx: &Context,
    args: &ForkArgs,
    open: impl FnOnce(&str) -> Result<Context>,
) -> Result<Report> {
    fork::ensure_no_second_fork(args)?;
    // Without prompt words, piped stdin is the first prompt, as for `sticky new`: read (and a
    // problem with it refused) before the fork is made.
    let stdin_is_terminal = std::io::stdin().is_terminal();
    let piped = if args.turn.prompt.is_empty() {
        read_prompt(ctx, &args.turn, true, stdin_is_terminal)?
    } else {
        None
    };
    let session = fork::make(ctx, &ctx.thread, &args.name, &args.turn)?;
    let forked = open(&args.name)?;
    if !args.turn.prompt.is_empty() {
        return run(&forked, &args.turn, false);
    }
    if let Some(prompt) = piped {
        return run_turn(&forked, &args.turn, false, Mode::Headless, Some(prompt));
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
    vault::catch_up(ctx, store, start.request)?;
    let begun = begin::begin(ctx, store, args, start)?;
    let (outcome, verdict, settled) = {
        let turn = Running::new(ctx, &begun, args);
        vault::restore_fork_source(&turn, store);
        let mut outcome = turn.run(store, start.prompt);
        let mut verdict = run::judge(&turn, store, &outcome);
        let restore = run::lost(&verdict).map(|id| vault::restore(&turn, store, id));
        if let Some(restore) = &restore {
            if restore.restored().is_some() {
                outcome = turn.run(store, start.prompt);
                verdict = run::judge(&turn, store, &outcome);
            }
            vault::say(&mut verdict, restore, begun.adapter.name());
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
        if let Some(live) = plan.action.live() {
            begin::ensure_not_shared(ctx, live)?;
        }
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

/// `-t NAME --fork`: makes thread NAME a fork of the thread the turn would use without `-t`
/// ([`thread_without_flag`]) before the turn runs on it.
fn fork_first(ctx: &Context, turn: &TurnArgs, fresh: bool) -> Result<()> {
    if fresh {
        return Err(StickyError::Usage(
            "--fork makes a thread that goes on from another, and `sticky new` starts afresh; \
             use one of them"
                .into(),
        )
        .into());
    }
    if ctx.origins.thread != crate::cli::Origin::Flag {
        return Err(StickyError::Usage(
            "--fork names the new thread with -t: sticky -t NAME --fork \"PROMPT\" (or sticky \
             fork NAME \"PROMPT\")"
                .into(),
        )
        .into());
    }
    let source = thread_without_flag(ctx)?;
    // The agent and model the turn asks for: the fork is made with them (another agent is
    // refused), as `sticky fork NAME` makes it.
    let args = TurnArgs {
        agent: turn.agent.clone(),
        model: turn.model.clone(),
        wait: turn.wait,
        no_wait: turn.no_wait,
        ..TurnArgs::default()
    };
    fork::make(ctx, &source, &ctx.thread, &args).map(drop)
}

/// The thread a turn without `-t` uses, resolved as the context resolves it
/// (`settings::resolve_thread`): `STICKY_THREAD` (`@branch` and `@pr` followed), else the
/// configuration's `thread`, else `main`.
fn thread_without_flag(ctx: &Context) -> Result<String> {
    use crate::cli::{GlobalArgs, Origin, Origins};
    let variable = crate::settings::env::thread();
    let origins = Origins {
        thread: if variable.is_some() {
            Origin::Environment
        } else {
            Origin::Default
        },
        ..ctx.origins
    };
    let global = GlobalArgs {
        thread: variable.unwrap_or_else(|| "main".to_owned()),
        ..GlobalArgs::default()
    };
    let chosen =
        crate::settings::resolve_thread(&global, origins, &ctx.settings.config, &ctx.project.dir)?;
    if let Some(note) = chosen.note.as_deref() {
        aside!("{}", escape(note));
    }
    Ok(chosen.setting.value)
}

/// The prompt from the arguments and piped stdin. Piped input is optional when there is a
/// prompt, and for `sticky new` (which only rotates without one): `--stdin` and the pipe's
/// writer decide how long it is waited for (`input::should_read`); input that `skip` drops is
/// said (`input::holds_skipped_input`).
fn read_prompt(
    ctx: &Context,
    args: &TurnArgs,
    fresh: bool,
    stdin_is_terminal: bool,
) -> Result<Option<Prompt>> {
    let stdin = std::io::stdin();
    let optional = !args.prompt.is_empty() || fresh;
    let mut read_stdin = false;
    if !stdin_is_terminal {
        let mode = ctx.settings.stdin(args.stdin)?;
        if mode.value == StdinMode::Skip && !optional {
            return Err(StickyError::Usage(format!(
                "no prompt: stdin is skipped (--stdin skip, from {}); give the prompt as \
                 arguments",
                mode.origin
            ))
            .into());
        }
        // Skipped input that is there (or is coming) is dropped: said once, wherever stderr
        // goes, when a setting the user may have forgot (STICKY_STDIN, the configuration)
        // skips it. `--stdin skip` on this very command line is said already.
        if mode.value == StdinMode::Skip
            && mode.origin != "--stdin"
            && crate::msg::notes()
            && input::holds_skipped_input(&stdin)
        {
            note!("{}", escape(&input::skipped_note(&mode.origin)));
        }
        let mut gave_up = None;
        let mut note = |said: input::Note| match said {
            // The wait is said once, and only to a person; giving up is said anywhere, since
            // a turn without the input the user meant to send must not pass unremarked.
            input::Note::Waiting(_) => hint!("{said}"),
            input::Note::GaveUp(grace) if !optional => gave_up = Some(grace),
            input::Note::GaveUp(_) => note!("{said}"),
        };
        read_stdin =
            input::should_read(&stdin, mode.value, optional, input::STDIN_GRACE, &mut note);
        // Stdin was to be the prompt, and a pipe from elsewhere kept silent: a runner's pipe
        // nobody writes or closes would hang the step forever.
        if let Some(grace) = gave_up {
            return Err(StickyError::Usage(format!(
                "no prompt: nothing arrived on stdin within {}s, and sticky cannot tell it is \
                 this command line's own pipe; give the prompt as arguments, or --stdin wait to \
                 wait for it however late",
                grace.as_secs()
            ))
            .into());
        }
    }
    let mut stdin = stdin;
    Ok(input::gather(
        &args.prompt,
        read_stdin.then_some(&mut stdin as _),
    )?)
}

/// How the turn runs: headless with a prompt, interactive on a terminal without one; `None`
/// for `sticky new` without a prompt (it only rotates). Refuses no prompt off a terminal.
fn mode(
    args: &TurnArgs,
    has_prompt: bool,
    fresh: bool,
    stdin_is_terminal: bool,
) -> Result<Option<Mode>> {
    Ok(Some(match (has_prompt, fresh) {
        (true, _) => Mode::Headless,
        (false, true) => return Ok(None),
        (false, false) if stdin_is_terminal && std::io::stdout().is_terminal() => Mode::Interactive,
        (false, false) if !args.agent_args.is_empty() => {
            return Err(StickyError::Usage(
                "no prompt: everything after `--` goes to the agent; give the prompt before \
                 `--` (sticky \"PROMPT\" -- AGENT_ARGS) or with -p"
                    .into(),
            )
            .into());
        }
        (false, false) if stdin_is_terminal => {
            return Err(StickyError::Usage(
                "no prompt, and the agent's own UI needs stdout on the terminal too; give the \
                 prompt as arguments for a headless turn (sticky \"PROMPT\" | ...)"
                    .into(),
            )
            .into());
        }
        (false, false) => {
            return Err(StickyError::Usage(
                "no prompt: give one as arguments or on stdin, or run sticky on a terminal for \
                 the agent's own UI"
                    .into(),
            )
            .into());
        }
    }))
}

/// A thread's name is shown in every listing and prompt line, so a new thread whose name holds
/// a control character is refused before anything is written. (An existing one, made by an
/// older sticky, stays usable; the listings escape its name.) So is one with a space before or
/// after it: `-t "main "` would start a thread that every listing shows as `main`. An empty or
/// blank name is refused for every command by [`Context`].
fn ensure_thread_name(ctx: &Context) -> Result<()> {
    let problem = if ctx.branch.is_some() {
        super::followed_name_problem(&ctx.thread)
    } else {
        super::thread_name_problem(&ctx.thread)
    };
    let Some(problem) = problem else {
        return Ok(());
    };
    if let Some(store) = ctx.existing_store()? {
        if store.thread(&ctx.thread)?.is_some() {
            return Ok(());
        }
    }
    Err(StickyError::Usage(format!(
        "the thread name \"{}\" {problem} (-t NAME, STICKY_THREAD)",
        ctx.thread
    ))
    .into())
}
