//! A turn's start: what the user asks ([`request`]), the turn lock, and one `BEGIN IMMEDIATE`
//! transaction ([`begin`]) that plans the session once ([`decide`]: `session::plan`, a rotation
//! the environment asks for said), checks it
//! (its project, its ID and model, the agent's arguments and the prompt's way in), writes it
//! (`session::apply`) and the turn's row, before the agent starts.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use super::super::Context;
use super::super::input::Prompt;
use super::super::view::{escape, format_time, one_line};
use super::super::{kept, standing};
use crate::agent::{self, Adapter, PromptVia};
use crate::cli::Origin;
use crate::cli::TurnArgs;
use crate::exit::StickyError;
use crate::lock::{self, TurnLock};
use crate::session::{self, Action, Aim, CarryKind, Plan, Reason, Request, Thread};
use crate::store::{Mode, SessionRow, Store, Tx};

/// How long `--no-wait` waits for the database's write lock: sticky's own turns hold it for
/// milliseconds (recording a turn), so a hold longer than this is another program's.
const NO_WAIT_GRACE: Duration = Duration::from_millis(500);

/// What `begin` decided and wrote.
pub(super) struct Begun<'a> {
    pub(super) adapter: &'a dyn Adapter,
    pub(super) program: PathBuf,
    pub(super) session: SessionRow,
    /// The session the agent is asked for, as the plan wrote it.
    pub(super) aim: Aim,
    /// The agent session this turn forks with the agent's own fork (a fork's first turn).
    pub(super) fork_from: Option<String>,
    /// How a headless turn's prompt reaches the agent.
    pub(super) prompt_via: Option<PromptVia>,
    pub(super) turn_id: i64,
    /// The user's home, where the agents keep their files.
    pub(super) home: PathBuf,
}

/// What a turn starts with: what the user asked, the prompt, how it runs, the recap carried
/// into a new session (kind, bytes), and why sticky runs it when sticky does (`handoff`).
pub(super) struct Start<'a> {
    pub(super) request: Request<'a>,
    pub(super) prompt: Option<&'a Prompt>,
    pub(super) mode: Mode,
    pub(super) carried: Option<(&'a str, i64)>,
    pub(super) purpose: Option<&'a str>,
}

/// Opens the project's store for a turn (refusing, before a new project's state is created, a
/// turn that could not start) and names the project when the user may not expect it.
pub(super) fn open(
    ctx: &Context,
    args: &TurnArgs,
    fresh: bool,
    prompt: Option<&Prompt>,
) -> Result<Store> {
    // A state the list of projects names, whose database is gone: removed since its last
    // turn (`git clean -x` takes an ignored `.sticky/`), so this turn starts afresh; said, so
    // that no one takes the new conversation for the old (review 23, L1).
    let gone = ctx.project.database == crate::project::Database::Missing
        && crate::project::registry::names(&ctx.project);
    let mut store = ctx.open_store_when(|| {
        ensure_startable(ctx, args, fresh, prompt)?;
        if fresh {
            return Ok(());
        }
        ensure_no_state_elsewhere(ctx)
    })?;
    if gone {
        crate::aside!(
            "the state your list of projects names for {} ({}) is gone from here (removed since \
             its last turn, as `git clean -x` removes an ignored .sticky/, or moved with the \
             project: `sticky relocate` in its new directory goes on with it), so nothing of its \
             conversation is left to resume here",
            escape(&crate::msg::shell_path(&ctx.project.dir)),
            escape(&crate::msg::shell_path(&ctx.project.state.db))
        );
    }
    if args.no_wait {
        store.wait_for_lock_at_most(NO_WAIT_GRACE)?;
    }
    if !fresh && keeps_nothing_of_here(ctx, &store)? {
        ensure_no_state_elsewhere(ctx)?;
    }
    announce_project(ctx);
    Ok(store)
}

/// Says that this turn starts the first conversation its database keeps (a new project state,
/// or every thread forgotten), and where it is kept: a user who expected one to go on (a
/// `STICKY_DB` of theirs not set in this shell, with sticky's data directory lost, so nothing
/// could tell) sees it at once. Of many first turns at once, said by the one that made the
/// thread; not with `--quiet` or `--json`.
fn announce_first_conversation(ctx: &Context) {
    let project = &ctx.project;
    let dir = escape(&crate::msg::shell_path(&project.dir)).into_owned();
    let (kept, by) = if project.db_overridden {
        (project.state.db.clone(), " (STICKY_DB)")
    } else {
        (project.dir.join(crate::state::STATE_DIR), "")
    };
    crate::aside!(
        "no conversation of {dir} yet: started one, kept in {}{by}",
        escape(&crate::msg::shell_path(&kept))
    );
}

/// Whether an existing database would start this turn's conversation afresh while keeping no
/// live session of this directory in any thread: a `STICKY_DB` set since (a shell profile's
/// line) that another project made, while this project's `.sticky/` keeps its conversation
/// (review 17, M1), even when that database's thread of this name goes on in another directory,
/// since removed (review 18, M2). A thread whose live session is this directory's (or, in its
/// `.sticky/`, a directory since gone: the project moved) reads no more.
fn keeps_nothing_of_here(ctx: &Context, store: &Store) -> Result<bool> {
    if ctx.project.database == crate::project::Database::Missing {
        return Ok(false);
    }
    // A `.sticky/` moves with its project: a live session recorded for a directory since gone
    // is this project's, which the turn's own refusal sends to `sticky relocate` (review 20,
    // M5); a `STICKY_DB` another project made may keep a gone directory's (review 18, M2).
    let moved = |dir: &Path| !ctx.project.db_overridden && !dir.is_dir();
    let here = |thread: i64| -> Result<bool> {
        Ok(store
            .live_session(thread)?
            .is_some_and(|live| live.directory == ctx.project.dir || moved(&live.directory)))
    };
    if let Some(thread) = store.thread(&ctx.thread)?
        && here(thread.id)?
    {
        return Ok(false);
    }
    for thread in store.threads()? {
        if here(thread.id)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Applies the session policy and records the turn's start, in one transaction.
pub(super) fn begin<'a>(
    ctx: &'a Context,
    store: &mut Store,
    args: &TurnArgs,
    start: &Start<'_>,
) -> Result<Begun<'a>> {
    let host = crate::host::name();
    let home = crate::settings::home()?;
    let mut first = false;
    let begun = store.immediate(|tx| {
        let thread = thread(ctx, tx)?;
        // The first row of an empty table (a new database, or every thread forgotten): one
        // turn, of many first turns at once.
        first = tx.created_now(thread.id) && thread.id == 1;
        let plan = decide(ctx, &thread, start.request);
        // The thread's lock is ours: a turn still marked running has lost its process.
        tx.abandon_running_turns(thread.id)?;
        ensure_plan_may_go_on(ctx, &plan, start.request.fresh, &home)?;
        let carried = start.carried.filter(|_| plan.carry.is_some());
        let (session, aim) =
            session::apply(tx, thread.id, &plan, &ctx.agents, &ctx.project.dir, carried)?;
        session::ensure_plain_arguments(&session, &ctx.agents, &ctx.project.state.db)?;
        let adapter = ctx.agents.get(&session.agent)?;
        ensure_own_arguments(ctx, adapter, args)?;
        let prompt_via = start
            .prompt
            .map(|prompt| prompt_via(adapter, prompt))
            .transpose()?;
        let program = ctx.program(adapter)?;
        let turn_id = tx.begin_turn(
            session.id,
            start.prompt.map(|prompt| prompt.summary.as_str()),
            start.mode,
            std::process::id(),
            &host,
        )?;
        if let Some(purpose) = start.purpose {
            tx.set_turn_purpose(turn_id, purpose)?;
        }
        let fork_from = fork_from(adapter, &session, &aim);
        if let Some(from) = fork_from.as_deref() {
            kept::refuse_fork_kept_elsewhere(ctx, &session, from, &home)?;
        }
        Ok(Begun {
            adapter,
            program,
            fork_from,
            aim,
            session,
            prompt_via,
            turn_id,
            home: home.clone(),
        })
    })?;
    if first {
        announce_first_conversation(ctx);
    }
    Ok(begun)
}

/// Refuses a plan whose live session is not this project's to go on with (a turn), or to end
/// (`sticky new`, `fresh`).
fn ensure_plan_may_go_on(
    ctx: &Context,
    plan: &Plan<&SessionRow>,
    fresh: bool,
    home: &Path,
) -> Result<()> {
    match plan.action.live() {
        Some(live) if !fresh => ensure_here(ctx, &ctx.thread, live, home),
        Some(live) => Ok(ensure_not_shared(ctx, live)?),
        None => Ok(()),
    }
}

/// The agent session a fork's first turn forks with the agent's own fork: the source's, while
/// the fork is not made yet (a session started anew, not resumed).
fn fork_from(adapter: &dyn Adapter, session: &SessionRow, aim: &Aim) -> Option<String> {
    session
        .forked_from
        .as_ref()
        .filter(|_| session.confirmed_at.is_none() && !matches!(aim, Aim::Resume(_)))
        .filter(|_| matches!(adapter.forking(), agent::Forking::Own { .. }))
        .map(|from| from.agent_session_id.clone())
}

/// Refuses to go on with thread `thread`'s live session `live` outside this project, or when
/// this HOME's agent keeps it for another: a turn on it, or a fork of it.
pub(super) fn ensure_here(
    ctx: &Context,
    thread: &str,
    live: &SessionRow,
    home: &Path,
) -> Result<()> {
    session::ensure_in_project(live, thread, &ctx.project.dir).map_err(|error| {
        // Where the session stands now (another copy took it, the project moved here, or
        // another directory shares this database) decides the way out; the policy's words are
        // a copy's (review 20, L4: a fork in a shared database got them).
        standing::advice(thread, live, &ctx.project).map_or(error, StickyError::Elsewhere)
    })?;
    kept::refuse_kept_elsewhere(ctx, thread, live, home)?;
    Ok(())
}

/// Refuses `sticky new` on a thread whose live session `live` is another directory's that
/// uses this very database (one `STICKY_DB` set for both): rotated here, that directory's
/// session would end for good (review 16, M3), or that did and is gone, whose project may have
/// moved elsewhere (review 20, M4). Any other session recorded elsewhere (a copy's, a moved
/// project's in its own database) `new` may end: it starts one of this project's own.
pub(super) fn ensure_not_shared(ctx: &Context, live: &SessionRow) -> Result<(), StickyError> {
    if standing::shares_database(live, &ctx.project) {
        return Err(StickyError::Elsewhere(standing::shared_database(
            &ctx.thread,
            live,
            &ctx.project,
        )));
    }
    Ok(())
}

/// What the user asks of the conversation's session; `fresh` is `sticky new`.
pub(super) fn request<'a>(
    ctx: &'a Context,
    args: &'a TurnArgs,
    fresh: bool,
) -> Result<Request<'a>> {
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

/// Reads the conversation inside the turn's transaction, creating its thread.
pub(super) fn thread(ctx: &Context, tx: &Tx<'_>) -> Result<Thread> {
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
    // Where `STICKY_DB` keeps this state, so a copy of the file names its original (review 16,
    // M5): canonical, so no link is on the path `kept::recorded_database` then takes.
    if let Some(path) = super::super::kept::kept_path(&ctx.project) {
        tx.record_kept_at(&path)?;
    }
    Thread::read(tx, row.id)
}

/// Plans the conversation's session: the one plan of the turn, whose rotation by the
/// environment is said here.
pub(super) fn decide<'t>(
    ctx: &Context,
    thread: &'t Thread,
    request: Request<'_>,
) -> Plan<&'t SessionRow> {
    let plan = thread.plan(&ctx.agents, request);
    note_implicit(ctx, &plan);
    plan
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

/// Refuses a turn (not `sticky new`, which starts a state on purpose) that would start this
/// directory's conversation afresh where another state of the user's keeps a live session of
/// it: `STICKY_DB` missing from this shell (a new terminal, an editor's task, cron), or set
/// since while `.sticky/` keeps the conversation. Started afresh, the turn would leave that
/// conversation behind without a word (reviews 16 to 18). Names that state (and what keeps a
/// turn there from it for now), the command that goes on with it and the way to start here on
/// purpose; see `registry::elsewhere`.
fn ensure_no_state_elsewhere(ctx: &Context) -> Result<()> {
    let Some(found) = crate::project::registry::elsewhere(&ctx.project) else {
        return Ok(());
    };
    let project = &ctx.project;
    let listed = &found.listed;
    let shell = |path: &Path| escape(&crate::msg::shell_path(path)).into_owned();
    let flag = super::super::view::thread_flag(&ctx.thread);
    let (theirs, there) = match &listed.db {
        Some(db) => (
            format!("the database {} (STICKY_DB)", shell(db)),
            kept::sticky_in(&listed.dir, Some(db)),
        ),
        None => (
            format!("its .sticky/ ({})", shell(&listed.database())),
            format!("env -u STICKY_DB {}", kept::sticky_in(&listed.dir, None)),
        ),
    };
    let source = if found.in_list {
        format!("your list of projects names {} with", shell(&project.dir))
    } else {
        format!("the project {} has", shell(&project.dir))
    };
    let (held, fix) = match found.hold {
        Some(hold) => {
            let (why, fix) = standing::hold_words(Some(hold), &there);
            (
                format!(" (a turn there refuses it for now: {why})"),
                format!("{fix}, then "),
            )
        }
        None => (String::new(), String::new()),
    };
    let here = here_words(project, &shell);
    let own = project.db_overridden.then_some(project.state.db.as_path());
    let new = format!("{}{flag} new", kept::sticky_in(&project.dir, own));
    Err(StickyError::Usage(format!(
        "this project's conversation is kept elsewhere: {source} {theirs}, which keeps a live \
         session of this directory{held}, but {here}, so this turn would start a fresh \
         conversation beside that one; nothing was created. To go on with it, {fix}run \
         `{there}{flag} \"...\"`; to start a separate state here on purpose, run `{new}`",
    ))
    .into())
}

/// What this turn's own database is, in [`ensure_no_state_elsewhere`]'s words.
fn here_words(project: &crate::project::Project, shell: &dyn Fn(&Path) -> String) -> String {
    let exists = project.database != crate::project::Database::Missing;
    match (project.db_overridden, exists) {
        (true, true) => format!(
            "STICKY_DB names {}, which keeps no conversation of this directory",
            shell(&project.state.db)
        ),
        (true, false) => format!(
            "STICKY_DB names {}, which does not exist yet",
            shell(&project.state.db)
        ),
        (false, true) => format!(
            "{} keeps no conversation of this directory",
            shell(&project.state.db)
        ),
        (false, false) => format!(
            "STICKY_DB is not set here (a new shell, an editor's task, cron?) and {} holds no \
             database",
            shell(&project.dir.join(crate::state::STATE_DIR))
        ),
    }
}

/// Names the project once when it was found above the current directory outside git (a
/// `.sticky/` the user may have forgotten), on a terminal only: scripts get no new noise. A new
/// project started below HOME (or a ceiling) whose own `.sticky/` was passed over says so
/// wherever stderr goes, once: the user may expect that conversation to go on.
fn announce_project(ctx: &Context) {
    if let Some(note) = ctx.project.passed_over_note() {
        note!("{}", escape(&note));
    }
    if crate::msg::hints() && ctx.project.first_use_from_below() {
        hint!(
            "using the project {} (the nearest .sticky/ above this directory); `sticky init` \
             here makes this directory a project of its own",
            ctx.project.dir.display()
        );
    }
}

/// The note a turn gives when the environment, not a flag, rotates the session: `STICKY_MODEL`
/// or `STICKY_AGENT` left in a shell profile or a CI file starts a new session as `-m` or `-a`
/// would, which the design allows, but nothing on the command line asked for it.
///
/// Says on stderr (one line; not with `--quiet` or `--json`) that the environment rotates the
/// session and that the old one ends (no turn goes back to it), naming the variable and the
/// session's value.
fn note_implicit(ctx: &Context, plan: &Plan<&SessionRow>) {
    let Action::Rotate(live, reason) = plan.action else {
        return;
    };
    let (variable, what, old, new) = match reason {
        Reason::ModelChange if ctx.origins.model == Origin::Environment => (
            "STICKY_MODEL",
            "model",
            live.model.as_deref().unwrap_or("(the agent's default)"),
            plan.model.as_deref().unwrap_or_default(),
        ),
        Reason::AgentChange if ctx.origins.agent == Origin::Environment => (
            "STICKY_AGENT",
            "agent",
            live.agent.as_str(),
            plan.agent.as_str(),
        ),
        _ => return,
    };
    crate::aside!(
        "{variable}={} in the environment differs from the session's {what} {}: a new \
         session starts ({reason}) and the old one ends; unset {variable} where the {what} \
         should not change",
        escape(new),
        escape(old)
    );
}

/// Takes the conversation's turn lock, waiting (and saying for whom) as `--wait`/`--no-wait`
/// ask.
pub(super) fn lock_thread(ctx: &Context, store: &Store, args: &TurnArgs) -> Result<TurnLock> {
    let wait = if args.no_wait {
        Duration::ZERO
    } else {
        Duration::from_secs(args.wait)
    };
    let holder = || match super::super::nested::running_turn(store, &ctx.thread) {
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
    };
    let mut on_wait = || {
        if !args.no_wait {
            note!(
                "thread {} is busy with {}; waiting up to {}s",
                escape(&ctx.thread),
                escape(&holder()),
                wait.as_secs()
            );
        }
    };
    super::super::nested::refuse_inside_own_turn(
        store,
        &ctx.thread,
        "give this turn a thread of its own (sticky -t NAME \"...\")",
    )?;
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

/// Agent arguments (after `--`, or the configuration's `args`) that would choose another
/// session, model or output format than sticky passes are refused before anything runs (see
/// [`agent::reserved`]); the transaction this runs in rolls back.
pub(super) fn ensure_own_arguments(
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
