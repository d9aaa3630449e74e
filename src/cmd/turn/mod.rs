//! `sticky [PROMPT]` and `sticky new [PROMPT]`: one turn on the conversation's sticky session.
//!
//! Parse, then plan, then act: the prompt and the agent are resolved first; one `BEGIN
//! IMMEDIATE` transaction then applies the session policy and writes the turn's row (with the
//! session ID when sticky chooses it up front) before the agent starts; the agent runs on a
//! pseudo-terminal (`run`, home of [`Running`] and its [`run::Outcome`]); the pure verdict
//! (`session::verdict`) decides the turn's end from what the agent reported, and `end` applies
//! it, recording the turn's end whatever happened. This file holds the start: the turn lock,
//! the policy applied (`session::apply`), the turn's row written.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use super::Context;
use super::output::Report;
use super::view::{SessionView, escape, format_time, one_line};
use crate::agent::{self, Adapter, PromptVia};
use crate::cli::TurnArgs;
use crate::config::StdinMode;
use crate::exit::StickyError;
use crate::lock::{self, TurnLock};
use crate::session::{self, Action, CarryKind, Plan, Request, Thread};
use crate::store::{Mode, SessionRow, Store, TurnStatus, Tx};

use super::input::{self, Prompt};

mod carry;
mod end;
mod fork;
mod implicit;
mod run;
mod vault;

pub use fork::run as fork;
use run::Running;

/// How long `--no-wait` waits for the database's write lock: sticky's own turns hold it for
/// milliseconds (recording a turn), so a hold longer than this is another program's.
const NO_WAIT_GRACE: Duration = Duration::from_millis(500);

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
    if let Some(note) = chosen.note.as_deref().filter(|_| !ctx.quiet && !ctx.json) {
        eprintln!("sticky: {}", escape(note));
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
            && !ctx.quiet
            && input::holds_skipped_input(&stdin)
        {
            eprintln!("{}", escape(&input::skipped_note(&mode.origin)));
        }
        let on_terminal = !ctx.quiet && std::io::stderr().is_terminal();
        let mut note = |note: input::Note| {
            // The wait is said once, and only to a person; giving up is said anywhere, since
            // a turn without the input the user meant to send must not pass unremarked.
            let tell = match note {
                input::Note::Waiting(_) => on_terminal,
                input::Note::GaveUp(_) => !ctx.quiet,
            };
            if tell {
                eprintln!("{note}");
            }
        };
        read_stdin =
            input::should_read(&stdin, mode.value, optional, input::STDIN_GRACE, &mut note);
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

/// Runs the turn under the conversation's lock: plans its session, carries what a rotation
/// carries, runs the agent (restoring a lost session from the vault) and records it.
fn run_turn(
    ctx: &Context,
    args: &TurnArgs,
    fresh: bool,
    mode: Mode,
    prompt: Option<Prompt>,
) -> Result<Report> {
    let mut store = ctx.open_store_when(|| ensure_startable(ctx, args, fresh, prompt.as_ref()))?;
    if args.no_wait {
        store.wait_for_lock_at_most(NO_WAIT_GRACE)?;
    }
    announce_project(ctx);
    // Held until the turn is recorded: one turn at a time per conversation.
    let _lock = lock_thread(ctx, &store, args)?;
    let request = request(ctx, args, fresh)?;
    let (prompt, carried) = carry::prepare(ctx, &mut store, args, request, prompt)?;
    let prompt = carry::fork_recap(ctx, &mut store, args, request, prompt)?;
    let start = Start {
        request,
        prompt: prompt.as_ref(),
        mode,
        carried: carried.map(|(kind, bytes)| (kind.as_str(), bytes)),
        purpose: None,
    };
    let begun = begin(ctx, &mut store, args, &start)?;
    let turn = Running::new(ctx, &begun, args);
    vault::restore_fork_source(&turn, &store);
    let run_agent = || match &prompt {
        Some(prompt) => turn.headless(&store, prompt),
        None => turn.interactive(),
    };
    let (outcome, restore) = vault::restore_if_lost(&turn, &store, run_agent(), run_agent);
    let report = end::finish(&turn, &mut store, outcome, restore.as_ref());
    vault::keep(&turn, &store);
    store.leave_open_until_exit();
    report
}

/// Refuses, before a new project's state is created, a first turn (or `sticky new`) that could
/// not start: the agent it would run (`-a`, else the default) unknown or its program missing,
/// an argument for it that sticky reserves, a prompt that cannot reach it. `begin` checks each
/// again on the session it plans; this only keeps a failed first try from leaving a `.sticky/`
/// behind.
fn ensure_startable(
    ctx: &Context,
    args: &TurnArgs,
    fresh: bool,
    prompt: Option<&Prompt>,
) -> Result<()> {
    let request = request(ctx, args, fresh)?;
    let adapter = ctx
        .agents
        .get(request.agent.unwrap_or(request.default_agent))?;
    ctx.program(adapter)?;
    ensure_own_arguments(ctx, adapter, args)?;
    if let Some(prompt) = prompt {
        prompt_via(adapter, prompt)?;
    }
    Ok(())
}

/// Names the project once when it was found above the current directory outside git (a
/// `.sticky/` the user may have forgotten), on a terminal only: scripts get no new noise. A new
/// project started below HOME (or a ceiling) whose own `.sticky/` was passed over says so
/// wherever stderr goes, once: the user may expect that conversation to go on.
fn announce_project(ctx: &Context) {
    if let Some(note) = ctx.project.passed_over_note().filter(|_| !ctx.quiet) {
        eprintln!("sticky: {}", escape(&note));
    }
    if !ctx.quiet && std::io::stderr().is_terminal() && ctx.project.first_use_from_below() {
        eprintln!(
            "sticky: using the project {} (the nearest .sticky/ above this directory); \
             `sticky init` here makes this directory a project of its own",
            ctx.project.dir.display()
        );
    }
}

/// What `begin` decided and wrote.
struct Begun<'a> {
    adapter: &'a dyn Adapter,
    program: PathBuf,
    session: SessionRow,
    /// The session the agent is asked for (`Create`/`Resume`), with sticky's stored ID.
    target_id: Option<String>,
    resume: bool,
    /// The agent session this turn forks with the agent's own fork (a fork's first turn).
    fork_from: Option<String>,
    /// How a headless turn's prompt reaches the agent.
    prompt_via: Option<PromptVia>,
    turn_id: i64,
}

/// What a turn starts with: what the user asked, the prompt, how it runs, the recap carried
/// into a new session (kind, bytes), and why sticky runs it when sticky does (`handoff`).
struct Start<'a> {
    request: Request<'a>,
    prompt: Option<&'a Prompt>,
    mode: Mode,
    carried: Option<(&'a str, i64)>,
    purpose: Option<&'a str>,
}

/// Applies the session policy and records the turn's start, in one transaction.
fn begin<'a>(
    ctx: &'a Context,
    store: &mut Store,
    args: &TurnArgs,
    start: &Start<'_>,
) -> Result<Begun<'a>> {
    let (prompt, fresh) = (start.prompt, start.request.fresh);
    let host = crate::host::name();
    store.immediate(|tx| {
        let (thread, plan) = decide(ctx, tx, start.request)?;
        // The thread's lock is ours: a turn still marked running has lost its process.
        tx.abandon_running_turns(thread.id)?;
        if let Some(live) = thread.live.as_ref().filter(|_| !fresh) {
            session::ensure_in_project(live, &ctx.thread, &ctx.project.dir).map_err(|error| {
                // Where the session stands now (another copy took it, or the project moved
                // here) decides the way out; the policy's words are a copy's.
                super::standing::advice(&ctx.thread, live, &ctx.project.dir)
                    .map_or(error, StickyError::Elsewhere)
            })?;
            refuse_kept_elsewhere(ctx, &ctx.thread, live)?;
        }
        let resume = plan.action == Action::Resume;
        let carried = start.carried.filter(|_| plan.carry.is_some());
        let session = session::apply(tx, thread, &plan, &ctx.agents, &ctx.project.dir, carried)?;
        session::ensure_plain_arguments(&session, &ctx.agents, &ctx.project.state.db)?;
        let adapter = ctx.agents.get(&session.agent)?;
        ensure_own_arguments(ctx, adapter, args)?;
        let fork_from = session
            .forked_from
            .as_ref()
            .filter(|_| session.confirmed_at.is_none() && !resume)
            .filter(|_| matches!(adapter.forking(), agent::Forking::Own { .. }))
            .map(|from| from.agent_session_id.clone());
        let prompt_via = prompt
            .map(|prompt| prompt_via(adapter, prompt))
            .transpose()?;
        let program = ctx.program(adapter)?;
        let turn_id = tx.begin_turn(
            session.id,
            prompt.map(|prompt| prompt.summary.as_str()),
            start.mode,
            std::process::id(),
            &host,
        )?;
        if let Some(purpose) = start.purpose {
            tx.set_turn_purpose(turn_id, purpose)?;
        }
        Ok(Begun {
            adapter,
            program,
            target_id: session.agent_session_id.clone(),
            resume,
            fork_from,
            session,
            prompt_via,
            turn_id,
        })
    })
}

/// Refuses to resume (or fork) thread `thread`'s session `live` when this HOME's agent keeps it
/// for another directory (a state from elsewhere naming another project's session): both
/// projects would go on with it, or the fork would read the other's turns. Looked for only when
/// the agent shows no transcript of the session for this directory, as it does on every turn of
/// a session that began here.
fn refuse_kept_elsewhere(
    ctx: &Context,
    thread: &str,
    live: &SessionRow,
) -> Result<(), StickyError> {
    let (Some(id), Some(adapter)) = (
        live.agent_session_id.as_deref(),
        ctx.agents.find(&live.agent),
    ) else {
        return Ok(());
    };
    let home = dirs::home_dir().unwrap_or_default();
    // The transcript for this directory, not `saved` (Codex's finds a rollout in any).
    if adapter
        .transcript(&home, &ctx.project.dir, id)
        .is_some_and(|path| path.is_file())
    {
        return Ok(());
    }
    match super::standing::kept_elsewhere(live, &ctx.project.dir) {
        Some(other) => Err(StickyError::Elsewhere(super::standing::shared(
            thread,
            live,
            &other,
            &ctx.project.dir,
        ))),
        None => Ok(()),
    }
}

/// What the user asks of the conversation's session; `fresh` is `sticky new`.
fn request<'a>(ctx: &'a Context, args: &'a TurnArgs, fresh: bool) -> Result<Request<'a>> {
    let requested = args
        .agent
        .as_deref()
        .map(|name| ctx.agents.get(name))
        .transpose()?;
    Ok(Request {
        fresh,
        agent: requested.map(Adapter::name),
        model: args.model.as_deref(),
        default_agent: ctx.default_agent(),
        carry: if args.no_carry {
            Some(CarryKind::Off)
        } else {
            args.carry
        },
        carry_on_change: ctx.settings.carry_on_change.value,
    })
}

/// Reads the conversation inside the turn's transaction (creating its thread) and plans its
/// session.
fn decide(ctx: &Context, tx: &Tx<'_>, request: Request<'_>) -> Result<(Thread, Plan)> {
    let row = tx.ensure_thread(&ctx.thread)?;
    // The branch the thread follows, for `sticky threads` and `--prune`: written when it
    // changes, so a resumed turn writes nothing more. Only on a thread a branch named when it
    // was created: one made by plain turns or `-t NAME` (`main` before a `-t @branch` turn on
    // branch main) holds turns no branch owns, which `--prune` must never forget.
    let branch_named = row.branch.is_some() || tx.created_now(row.id);
    if let Some(branch) = ctx
        .branch
        .as_deref()
        .filter(|b| branch_named && row.branch.as_deref() != Some(*b))
    {
        tx.record_branch(row.id, branch)?;
    }
    let thread = Thread::read(tx, row.id)?;
    let plan = session::plan(thread.live(&ctx.agents), request);
    implicit::note(ctx, &thread, &plan);
    Ok((thread, plan))
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

/// Takes the conversation's turn lock, waiting (and saying for whom) as `--wait`/`--no-wait`
/// ask.
fn lock_thread(ctx: &Context, store: &Store, args: &TurnArgs) -> Result<TurnLock> {
    let wait = if args.no_wait {
        Duration::ZERO
    } else {
        Duration::from_secs(args.wait)
    };
    let holder = || {
        let turn = store
            .thread(&ctx.thread)
            .ok()
            .flatten()
            .and_then(|thread| store.last_turn(thread.id).ok().flatten())
            .filter(|turn| turn.status == TurnStatus::Running);
        match turn {
            Some(turn) => format!(
                "turn #{} (pid {} on {}, started {}: {})",
                turn.id,
                turn.pid,
                turn.host,
                format_time(turn.started_at),
                turn.prompt.as_deref().map_or_else(
                    || "interactive".to_owned(),
                    |p| format!("\"{}\"", one_line(p, 40))
                )
            ),
            None => "another sticky".to_owned(),
        }
    };
    let mut on_wait = || {
        if !args.no_wait && !ctx.quiet {
            eprintln!(
                "sticky: thread {} is busy with {}; waiting up to {}s",
                escape(&ctx.thread),
                escape(&holder()),
                wait.as_secs()
            );
        }
    };
    lock::lock(&ctx.project.state.locks, &ctx.thread, wait, &mut on_wait)?.ok_or_else(|| {
        let advice = if args.no_wait {
            "it is still running (--no-wait)".to_owned()
        } else {
            format!(
                "gave up after {}s (--wait SECONDS waits longer)",
                wait.as_secs()
            )
        };
        StickyError::Busy(format!(
            "thread {} is busy with {}; {advice}",
            ctx.thread,
            holder()
        ))
        .into()
    })
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
    let mut store = ctx.open_store_when(|| ensure_startable(ctx, args, true, None))?;
    if args.no_wait {
        store.wait_for_lock_at_most(NO_WAIT_GRACE)?;
    }
    announce_project(ctx);
    let request = request(ctx, args, true)?;
    let session = store.immediate(|tx| {
        let (thread, plan) = decide(ctx, tx, request)?;
        session::apply(tx, thread, &plan, &ctx.agents, &ctx.project.dir, None)
    })?;
    if ctx.json {
        return no_turn_yet(ctx, &ctx.thread, &session);
    }
    if !ctx.quiet {
        eprintln!(
            "sticky: new {} session for thread {}; the next turn starts it",
            session.agent,
            escape(&ctx.thread)
        );
    }
    Ok(Report::nothing())
}

/// Agent arguments (after `--`, or the configuration's `args`) that would choose another
/// session, model or output format than sticky passes are refused before anything runs (see
/// [`agent::reserved`]); the transaction this runs in rolls back.
fn ensure_own_arguments(
    ctx: &Context,
    adapter: &dyn Adapter,
    args: &TurnArgs,
) -> Result<(), StickyError> {
    let reserved = adapter.reserved_args();
    let name = adapter.name();
    if let Some((arg, instead)) = reserved.find(&args.agent_args) {
        return Err(StickyError::Usage(format!(
            "the agent argument `{}` would override what sticky passes {name}; {}",
            arg.to_string_lossy(),
            instead.advice()
        )));
    }
    let configured: Vec<OsString> = ctx
        .settings
        .config
        .agent(name)
        .map(|settings| settings.args.iter().map(OsString::from).collect())
        .unwrap_or_default();
    if let Some((arg, instead)) = reserved.find(&configured) {
        return Err(StickyError::Usage(format!(
            "the configuration's args for agent `{name}` hold `{}`, which would override what \
             sticky passes; remove it; {}",
            arg.to_string_lossy(),
            instead.advice()
        )));
    }
    Ok(())
}

/// How `prompt` reaches the agent, or why it cannot: one argument carries at most
/// [`agent::MAX_ARGUMENT_PROMPT`] bytes and no NUL byte (see [`agent::fits_an_argument`]), and
/// some agents take their prompt only as an argument.
fn prompt_via(adapter: &dyn Adapter, prompt: &Prompt) -> Result<PromptVia, StickyError> {
    let len = prompt.text.len();
    match adapter.prompt_via(&prompt.text) {
        PromptVia::Argument if prompt.text.contains(&0) => Err(StickyError::Usage(format!(
            "the prompt holds a NUL byte, which no argument can carry, and agent `{}` takes its \
             prompt only as an argument; remove it (binary input: pipe a text form of it)",
            adapter.name()
        ))),
        PromptVia::Argument if len > agent::MAX_ARGUMENT_PROMPT => {
            Err(StickyError::Usage(format!(
                "the prompt is {len} bytes, more than one argument can carry, and agent `{}` \
                 takes its prompt only as an argument; shorten it",
                adapter.name()
            )))
        }
        via => Ok(via),
    }
}

/// What `--json` prints for a session made without a turn (`sticky new`, `sticky fork`
/// without a prompt): a turn's keys, so it reads alike with and without a prompt.
fn no_turn_yet(ctx: &Context, thread: &str, session: &SessionRow) -> Result<Report> {
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
