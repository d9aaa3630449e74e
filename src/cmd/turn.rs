//! `sticky [PROMPT]` and `sticky new [PROMPT]`: one turn on the conversation's sticky session.
//!
//! Parse, then plan, then act: the prompt and the agent are resolved first; one `BEGIN
//! IMMEDIATE` transaction then applies the session policy and writes the turn's row (with the
//! session ID when sticky chooses it up front) before the agent starts; the agent runs on a
//! pseudo-terminal; its events are checked against the session sticky asked for; the turn's end
//! is recorded whatever happened.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result};
use serde::Serialize;

use super::Context;
use super::view::{SessionView, TurnView, format_time, one_line, print_json};
use crate::agent::{self, Adapter, Diagnosis, Event, LineSplitter, PromptVia, Target, Usage};
use crate::cli::TurnArgs;
use crate::exit::{Exit, StickyError};
use crate::lock::{self, TurnLock};
use crate::progress::Progress;
use crate::pty::{self, Finished, Status};
use crate::session::{self, Live, Plan, Reason, Request};
use crate::store::{Mode, NewSession, SessionRow, Store, TurnEnd, TurnStatus};

use super::input::{self, Prompt};

/// The most of the agent's non-event output kept for error messages.
const MAX_AGENT_OUTPUT: usize = 64 * 1024;

/// Runs one turn; `fresh` is `sticky new`.
pub fn run(ctx: &Context, args: &TurnArgs, fresh: bool) -> Result<Exit> {
    let stdin_is_terminal = std::io::stdin().is_terminal();
    // `sticky new` without words only rotates: it never waits on a stdin left open by a script.
    let mut read_stdin = !stdin_is_terminal && (!fresh || !args.prompt.is_empty());
    let mut stdin = std::io::stdin();
    if read_stdin && !args.prompt.is_empty() && !input::has_input(&stdin, input::STDIN_GRACE) {
        // Piped context is optional when there is a prompt: never hang on a pipe nobody closes.
        read_stdin = false;
        if !ctx.quiet {
            eprintln!(
                "sticky: nothing arrived on stdin within {}s; going on without it \
                 (run with </dev/null to skip this wait)",
                input::STDIN_GRACE.as_secs()
            );
        }
    }
    let prompt = input::gather(&args.prompt, read_stdin.then_some(&mut stdin as _))?;
    let mode = match (&prompt, fresh) {
        (Some(_), _) => Mode::Headless,
        (None, true) => return rotate_only(ctx, args),
        (None, false) if stdin_is_terminal && std::io::stdout().is_terminal() => Mode::Interactive,
        (None, false) => {
            return Err(StickyError::Usage(
                "no prompt: give one as arguments or on stdin, or run sticky on a terminal for \
                 the agent's own UI"
                    .into(),
            )
            .into());
        }
    };

    let mut store = ctx.open_store()?;
    // Held until the turn is recorded: one turn at a time per conversation.
    let _lock = lock_thread(ctx, &store, args)?;
    let begun = begin(ctx, &mut store, args, fresh, prompt.as_ref(), mode)?;
    let turn = Running::new(ctx, &begun, args);
    let outcome = match &prompt {
        Some(prompt) => turn.headless(&store, prompt),
        None => turn.interactive(),
    };
    turn.finish(&mut store, outcome)
}

/// What `begin` decided and wrote.
struct Begun {
    adapter: &'static dyn Adapter,
    program: PathBuf,
    session: SessionRow,
    /// The session the agent is asked for (`Create`/`Resume`), with sticky's stored ID.
    target_id: Option<String>,
    resume: bool,
    /// How a headless turn's prompt reaches the agent.
    prompt_via: Option<PromptVia>,
    turn_id: i64,
}

/// Applies the session policy and records the turn's start, in one transaction.
fn begin(
    ctx: &Context,
    store: &mut Store,
    args: &TurnArgs,
    fresh: bool,
    prompt: Option<&Prompt>,
    mode: Mode,
) -> Result<Begun> {
    let requested = args
        .agent
        .as_deref()
        .map(|name| ctx.agents.get(name))
        .transpose()?;
    let host = host_name();
    store.immediate(|tx| {
        let thread = tx.ensure_thread(&ctx.thread)?;
        // The thread's lock is ours: a turn still marked running has lost its process.
        tx.abandon_running_turns(thread.id)?;
        let live = tx.live_session(thread.id)?;
        let plan = session::plan(
            live.as_ref().map(live_of),
            Request {
                fresh,
                agent: requested.map(Adapter::name),
                model: args.model.as_deref(),
                default_agent: ctx.default_agent(),
            },
        );
        let (session, resume) = match (plan, live) {
            (Plan::Resume, Some(live)) => {
                ensure_in_project(ctx, &live)?;
                (live, true)
            }
            (Plan::Resume, None) => unreachable!("the policy resumes only a live session"),
            (
                Plan::Start {
                    agent,
                    model,
                    rotation,
                },
                live,
            ) => {
                let adapter = ctx.agents.get(&agent)?;
                let id = adapter.mint_id();
                let session = match (live, rotation) {
                    (Some(live), None) => {
                        tx.restart_session(live.id, &agent, model.as_deref(), id.as_deref())?
                    }
                    (live, rotation) => tx.start_session(
                        thread.id,
                        &NewSession {
                            agent: &agent,
                            model: model.as_deref(),
                            agent_session_id: id.as_deref(),
                            directory: &ctx.project.dir,
                            rotated_from: live
                                .zip(rotation)
                                .map(|(live, reason)| (live.id, reason.as_str())),
                        },
                    )?,
                };
                (session, false)
            }
        };
        ensure_plain_arguments(ctx, &session)?;
        let adapter = ctx.agents.get(&session.agent)?;
        let prompt_via = prompt
            .map(|prompt| prompt_via(adapter, prompt))
            .transpose()?;
        let program = ctx.program(adapter)?;
        let turn_id = tx.begin_turn(
            session.id,
            prompt.map(|prompt| prompt.summary.as_str()),
            mode,
            std::process::id(),
            &host,
        )?;
        Ok(Begun {
            adapter,
            program,
            target_id: session.agent_session_id.clone(),
            resume,
            session,
            prompt_via,
            turn_id,
        })
    })
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
                ctx.thread,
                holder(),
                wait.as_secs()
            );
        }
    };
    lock::lock(&ctx.project.db, &ctx.thread, wait, &mut on_wait)?.ok_or_else(|| {
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
fn rotate_only(ctx: &Context, args: &TurnArgs) -> Result<Exit> {
    let mut store = ctx.open_store()?;
    let requested = args
        .agent
        .as_deref()
        .map(|name| ctx.agents.get(name))
        .transpose()?;
    let session = store.immediate(|tx| {
        let thread = tx.ensure_thread(&ctx.thread)?;
        let live = tx.live_session(thread.id)?;
        let Plan::Start {
            agent,
            model,
            rotation,
        } = session::plan(
            live.as_ref().map(live_of),
            Request {
                fresh: true,
                agent: requested.map(Adapter::name),
                model: args.model.as_deref(),
                default_agent: ctx.default_agent(),
            },
        )
        else {
            unreachable!("`new` always starts a session")
        };
        let adapter = ctx.agents.get(&agent)?;
        tx.start_session(
            thread.id,
            &NewSession {
                agent: &agent,
                model: model.as_deref(),
                agent_session_id: adapter.mint_id().as_deref(),
                directory: &ctx.project.dir,
                rotated_from: live
                    .zip(rotation)
                    .map(|(live, reason)| (live.id, reason.as_str())),
            },
        )
    })?;
    if ctx.json {
        print_json(&serde_json::json!({
            "thread": ctx.thread,
            "project": ctx.project.dir.display().to_string(),
            "session": SessionView::from(&session),
        }))?;
    } else if !ctx.quiet {
        eprintln!(
            "sticky: new {} session for thread {}; the next turn starts it",
            session.agent, ctx.thread
        );
    }
    Ok(Exit::Success)
}

/// The agent runs where the session was created (agents key sessions by directory). A session
/// recorded for another directory (a moved project, or a database crafted in a cloned
/// repository) is refused rather than run somewhere the user did not choose.
fn ensure_in_project(ctx: &Context, session: &SessionRow) -> Result<(), StickyError> {
    if session.directory == ctx.project.dir {
        return Ok(());
    }
    Err(StickyError::SessionLost {
        agent: session.agent.clone(),
        session: session.agent_session_id.clone().unwrap_or_default(),
        reason: format!(
            "it belongs to directory {}, not to this project {}",
            session.directory.display(),
            ctx.project.dir.display()
        ),
    })
}

/// The stored session ID and model become the agent's arguments (`--resume ID`), so a value
/// that an agent would read as an option of its own is refused: sticky never stores one (it
/// mints UUIDs, and models come from `--model`), so it comes from a database crafted or damaged
/// elsewhere, and Claude's `--resume [value]` would take `--resume --some-flag` as a bare
/// `--resume` followed by that flag.
fn ensure_plain_arguments(ctx: &Context, session: &SessionRow) -> Result<(), StickyError> {
    let checks = [
        ("session ID", &session.agent_session_id, "`sticky new`"),
        ("model", &session.model, "`sticky new --model MODEL`"),
    ];
    for (what, value, way_out) in checks {
        let Some(value) = value.as_deref() else {
            continue;
        };
        if value.is_empty() || value.starts_with('-') || value.chars().any(char::is_control) {
            return Err(StickyError::store(
                &ctx.project.db,
                format!(
                    "session #{} has the {what} {value:?}, which the agent could take for an \
                     option; sticky does not pass it on (was the database crafted or copied \
                     from elsewhere?); start over with {way_out}, or move the database away",
                    session.id
                ),
            ));
        }
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

/// The policy's view of a stored live session.
fn live_of(row: &SessionRow) -> Live<'_> {
    Live {
        agent: &row.agent,
        model: row.model.as_deref(),
        confirmed: row.confirmed_at.is_some() && row.agent_session_id.is_some(),
    }
}

/// A turn between its start and its end.
struct Running<'a> {
    ctx: &'a Context,
    begun: &'a Begun,
    /// The configured arguments, then the ones after `--`.
    extra_args: Vec<OsString>,
}

/// What the agent did in a turn.
#[derive(Debug, Default)]
struct Outcome {
    finished: Option<Finished>,
    answer: Option<String>,
    text: String,
    is_error: bool,
    usage: Usage,
    reported: Option<String>,
    agent_output: String,
    spawn_error: Option<anyhow::Error>,
    store_error: Option<anyhow::Error>,
    /// Interactive runs: the last session the agent reported being in.
    followed: Option<String>,
}

impl<'a> Running<'a> {
    fn new(ctx: &'a Context, begun: &'a Begun, args: &'a TurnArgs) -> Self {
        let configured = ctx.config.agent(begun.adapter.name());
        let mut extra_args: Vec<OsString> = configured
            .map(|settings| settings.args.iter().map(OsString::from).collect())
            .unwrap_or_default();
        extra_args.extend(args.agent_args.iter().cloned());
        Self {
            ctx,
            begun,
            extra_args,
        }
    }

    fn target(&self) -> Target<'_> {
        match (&self.begun.target_id, self.begun.resume) {
            (Some(id), true) => Target::Resume(id),
            (Some(id), false) => Target::Create(id),
            (None, _) => Target::CreateUnnamed,
        }
    }

    fn agent_turn(&self) -> agent::Turn<'_> {
        agent::Turn {
            target: self.target(),
            model: self.begun.session.model.as_deref(),
            extra_args: &self.extra_args,
        }
    }

    fn spec(&self, args: Vec<OsString>, stdin: Option<Vec<u8>>) -> pty::Spec {
        let mut env = self.begun.adapter.env(&self.begun.session.directory);
        if let Some(settings) = self.ctx.config.agent(self.begun.adapter.name()) {
            env.extend(settings.env.iter().map(|(k, v)| (k.into(), v.into())));
        }
        // Lets a nested sticky (an agent's tool calling sticky) tell it runs inside one.
        env.push(("STICKY_ACTIVE".into(), "1".into()));
        pty::Spec {
            program: self.begun.program.clone(),
            args,
            env,
            cwd: self.begun.session.directory.clone(),
            stdin,
        }
    }

    fn headless(&self, store: &Store, prompt: &Prompt) -> Outcome {
        let adapter = self.begun.adapter;
        let turn = self.agent_turn();
        let (args, stdin) = match self.begun.prompt_via.unwrap_or(PromptVia::Argument) {
            PromptVia::Argument => {
                let text = OsString::from_vec(prompt.text.clone());
                (adapter.headless_args(&turn, Some(&text)), None)
            }
            PromptVia::Stdin => (
                adapter.headless_args(&turn, None),
                Some(prompt.text.clone()),
            ),
        };
        let progress = Progress::start(adapter.name(), self.ctx.quiet || self.ctx.json);
        let mut outcome = Outcome::default();
        let mut splitter = LineSplitter::default();
        let mut on_line = |line: String| {
            let events = adapter.parse_line(&line);
            if events.is_empty() {
                if !line.trim().is_empty() && outcome.agent_output.len() < MAX_AGENT_OUTPUT {
                    outcome.agent_output.push_str(&line);
                    outcome.agent_output.push('\n');
                }
                return;
            }
            for event in events {
                match event {
                    Event::Session(id) => {
                        let differs = turn.target.expected_id().is_some_and(|want| want != id);
                        if outcome.reported.is_none() && turn.target.expected_id().is_none() {
                            // Rule 9: an ID the agent minted is stored the moment it appears.
                            outcome.store_error =
                                store.set_agent_session_id(self.begun.session.id, &id).err();
                        }
                        if outcome.reported.is_none() || differs {
                            outcome.reported = Some(id);
                        }
                    }
                    Event::Model(_) => {}
                    Event::Activity(what) => progress.activity(&what),
                    Event::Text(text) => {
                        if !outcome.text.is_empty() {
                            outcome.text.push('\n');
                        }
                        outcome.text.push_str(&text);
                    }
                    Event::TextDelta(piece) => outcome.text.push_str(&piece),
                    Event::Usage(usage) => outcome.usage.add(usage),
                    Event::Result {
                        text,
                        is_error,
                        usage,
                    } => {
                        outcome.answer = text;
                        outcome.is_error = is_error;
                        outcome.usage.add(usage);
                    }
                }
            }
        };
        let spec = self.spec(args, stdin);
        let result = pty::run_headless(&spec, &mut |chunk| splitter.push(chunk, &mut on_line));
        splitter.finish(&mut on_line);
        progress.finish();
        match result {
            Ok(finished) => outcome.finished = Some(finished),
            Err(error) => outcome.spawn_error = Some(error),
        }
        outcome
    }

    fn interactive(&self) -> Outcome {
        let adapter = self.begun.adapter;
        // Beside the lock files: private to the user (0700), inside the project's state.
        let report = lock::dir(&self.ctx.project.db)
            .join(format!("sessions-turn-{}.jsonl", self.begun.turn_id));
        let mut args = adapter.interactive_args(&self.agent_turn());
        args.extend(adapter.session_report_args(&report));
        let mut outcome = Outcome::default();
        let mut tail = Vec::new();
        match pty::run_interactive(&self.spec(args, None)) {
            Ok((finished, output)) => {
                outcome.finished = Some(finished);
                tail = output;
            }
            Err(error) => outcome.spawn_error = Some(error),
        }
        // The agent's hook is the reliable report; its exit line is the next best (Codex and
        // opencode name a session they created only there).
        outcome.followed = reported_sessions(&report)
            .pop()
            .or_else(|| adapter.session_from_exit_output(&String::from_utf8_lossy(&tail)));
        let _ = std::fs::remove_file(&report);
        outcome
    }

    /// Records the turn's end, confirms or questions the session, prints the result.
    fn finish(&self, store: &mut Store, outcome: Outcome) -> Result<Exit> {
        if let Some(error) = outcome.store_error {
            return Err(error);
        }
        let mut failure = self.check_session(store, &outcome)?;
        let (status, exit) = classify(&outcome, failure.is_some());
        if let (TurnStatus::Ok, Target::Create(_), None) =
            (status, self.target(), &outcome.reported)
        {
            // An agent that never names its session (a user-defined one with a UUID chosen up
            // front) accepted the one sticky chose by answering: it exists now.
            store.confirm_session(self.begun.session.id)?;
        }
        let mut refusal = None;
        if failure.is_none() && status == TurnStatus::Failed {
            (failure, refusal) = self.diagnose(&outcome);
        }
        let error = failure
            .as_ref()
            .map(ToString::to_string)
            .or_else(|| outcome.spawn_error.as_ref().map(|e| format!("{e:#}")))
            .or(refusal)
            .or_else(|| self.agent_failure(&outcome, status));
        let (exit_code, signal) = match outcome.finished.map(|f| f.status) {
            Some(Status::Code(code)) => (Some(code), None),
            Some(Status::Signal(signal)) => (None, Some(signal)),
            None => (None, None),
        };
        store.finish_turn(
            self.begun.turn_id,
            &TurnEnd {
                status: Some(status),
                exit_code,
                signal,
                cost_usd: outcome.usage.cost_usd,
                input_tokens: outcome.usage.input_tokens,
                output_tokens: outcome.usage.output_tokens,
                error: error.clone(),
            },
        )?;
        self.report(store, &outcome, status, error.as_deref())?;
        if let Some(failure) = failure {
            return Err(failure.into());
        }
        if let (Some(error), None, false) = (&error, &outcome.spawn_error, self.ctx.json) {
            // The agent's own failure: its exit code passes through, with one line saying so.
            eprintln!("sticky: {error}");
        }
        if let Some(error) = outcome.spawn_error {
            let program = self.begun.program.display();
            return Err(error.context(format!("could not run {program}")));
        }
        Ok(exit)
    }

    /// Rule 7: compares the session the agent reports with the one sticky asked for, and
    /// confirms the session when they agree.
    fn check_session(&self, store: &mut Store, outcome: &Outcome) -> Result<Option<StickyError>> {
        let begun = self.begun;
        let session_id = begun.session.id;
        if let Some(current) = &outcome.followed {
            if self.follow(store, current)? {
                return Ok(None);
            }
        }
        match (self.target().expected_id(), outcome.reported.as_deref()) {
            (Some(expected), Some(actual)) if expected != actual => {
                let home = dirs::home_dir().unwrap_or_default();
                let directory = &begun.session.directory;
                if begun.adapter.renamed(&home, directory, expected, actual) {
                    // The same conversation under a new name: follow the name, same session row.
                    store.set_agent_session_id(session_id, actual)?;
                    store.confirm_session(session_id)?;
                    if !self.ctx.quiet {
                        eprintln!(
                            "sticky: {} renamed session {expected} to {actual}; following it",
                            begun.adapter.name()
                        );
                    }
                    return Ok(None);
                }
                return Ok(Some(StickyError::Amnesia {
                    agent: begun.adapter.name().to_owned(),
                    expected: expected.to_owned(),
                    actual: actual.to_owned(),
                }));
            }
            (_, Some(_)) => store.confirm_session(session_id)?,
            (Some(id), None) if outcome.finished.is_some() => {
                // Interactive runs report nothing on stdout; the agent's transcript of exactly
                // this ID confirms that it created the session.
                let home = dirs::home_dir().unwrap_or_default();
                let transcript = begun
                    .adapter
                    .transcript(&home, &begun.session.directory, id);
                if transcript.is_some_and(|path| path.is_file()) {
                    store.confirm_session(session_id)?;
                }
            }
            _ => {}
        }
        Ok(None)
    }

    /// An interactive run ended in session `current` by the agent's own report. When the user
    /// switched to it inside the agent (Claude's `/clear`), follow it: a rotation with reason
    /// `agent`, so the next turn continues what the user last saw. Returns whether it did; a
    /// session without a transcript (cleared, then nothing said) is not followed, since
    /// resuming it could only fail.
    fn follow(&self, store: &mut Store, current: &str) -> Result<bool> {
        let begun = self.begun;
        let adapter = begun.adapter;
        let directory = &begun.session.directory;
        if self.target().expected_id() == Some(current) {
            return Ok(false);
        }
        let home = dirs::home_dir().unwrap_or_default();
        let transcript = adapter.transcript(&home, directory, current);
        if transcript.is_some_and(|path| !path.is_file()) {
            return Ok(false);
        }
        if self.target() == Target::CreateUnnamed {
            store.set_agent_session_id(begun.session.id, current)?;
            store.confirm_session(begun.session.id)?;
            return Ok(true);
        }
        let followed = store.immediate(|tx| {
            let live = tx.live_session(begun.session.thread_id)?;
            if live.is_none_or(|live| live.id != begun.session.id) {
                // `sticky new` rotated the thread meanwhile: that choice stands.
                return Ok(None);
            }
            let session = tx.start_session(
                begun.session.thread_id,
                &NewSession {
                    agent: adapter.name(),
                    model: begun.session.model.as_deref(),
                    agent_session_id: Some(current),
                    directory,
                    rotated_from: Some((begun.session.id, Reason::Agent.as_str())),
                },
            )?;
            Ok(Some(session.id))
        })?;
        let Some(session_id) = followed else {
            return Ok(false);
        };
        store.confirm_session(session_id)?;
        if !self.ctx.quiet {
            eprintln!(
                "sticky: {} moved to session {current}; thread {} follows it",
                adapter.name(),
                self.ctx.thread
            );
        }
        Ok(true)
    }

    /// What went wrong when the agent itself failed the turn, in one line.
    fn agent_failure(&self, outcome: &Outcome, status: TurnStatus) -> Option<String> {
        let agent = self.begun.adapter.name();
        let session = self.target().expected_id().map_or_else(
            || "its new session".to_owned(),
            |id| format!("session {id}"),
        );
        let how = match (status, outcome.finished?.status) {
            (TurnStatus::Ok, _) => return None,
            (TurnStatus::Interrupted, _) => "was interrupted".to_owned(),
            (_, Status::Code(0)) => "reported an error".to_owned(),
            (_, Status::Code(code)) => format!("exited with code {code}"),
            (_, Status::Signal(signal)) => format!("was killed by signal {signal}"),
        };
        Some(format!(
            "{agent} {how}; the turn failed, {session} stays (run sticky again to continue it)"
        ))
    }

    /// Rule 8 (a resume the agent refused because it no longer knows the session: sticky's own
    /// failure), or the agent's refusal to run at all (its exit code stands, with the way out).
    fn diagnose(&self, outcome: &Outcome) -> (Option<StickyError>, Option<String>) {
        let adapter = self.begun.adapter;
        let target = self.target();
        // Agents whose plain output is their answer (user-defined ones) say it there.
        let said = format!("{}\n{}", outcome.agent_output, outcome.text);
        match adapter.diagnose(&target, &said) {
            Some(Diagnosis::SessionLost(reason)) => (
                Some(StickyError::SessionLost {
                    agent: adapter.name().to_owned(),
                    session: target.expected_id().unwrap_or_default().to_owned(),
                    reason,
                }),
                None,
            ),
            Some(Diagnosis::Refused { hint, .. }) => (
                None,
                Some(format!("{} refused to run: {hint}", adapter.name())),
            ),
            None => (None, None),
        }
    }

    /// Prints the answer on stdout (or the `--json` object), and a failed turn's output on
    /// stderr.
    fn report(
        &self,
        store: &Store,
        outcome: &Outcome,
        status: TurnStatus,
        error: Option<&str>,
    ) -> Result<()> {
        let answer = outcome
            .answer
            .clone()
            .or_else(|| (!outcome.text.is_empty()).then(|| outcome.text.clone()));
        if self.ctx.json {
            let turn = store
                .turn(self.begun.turn_id)?
                .context("the turn's row disappeared")?;
            let session = store
                .session(self.begun.session.id)?
                .context("the session's row disappeared")?;
            return print_json(&TurnReport {
                thread: &self.ctx.thread,
                project: self.ctx.project.dir.display().to_string(),
                session: SessionView::from(&session),
                turn: TurnView::from(&turn),
                answer: answer.as_deref(),
                error,
            });
        }
        if status != TurnStatus::Ok {
            // The agent's own words (its error message), before sticky's one line.
            eprint!("{}", outcome.agent_output);
        }
        if let Some(mut answer) = answer {
            if !answer.ends_with('\n') {
                answer.push('\n');
            }
            if status == TurnStatus::Ok {
                let mut out = std::io::stdout().lock();
                match out.write_all(answer.as_bytes()).and_then(|()| out.flush()) {
                    // A reader that stopped early (`| head -1`) wanted no more; the turn is
                    // recorded, and that is no failure of it.
                    Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {}
                    result => result?,
                }
            } else {
                // The answer of a failed turn is the agent's error message: stderr, not stdout.
                eprint!("{answer}");
            }
        }
        Ok(())
    }
}

/// The turn's status and sticky's exit from how the agent ended.
fn classify(outcome: &Outcome, failed_check: bool) -> (TurnStatus, Exit) {
    let Some(finished) = outcome.finished.filter(|_| outcome.spawn_error.is_none()) else {
        return (TurnStatus::Failed, Exit::Internal);
    };
    let exit = match finished.status {
        // Claude reports API errors in its result event; such a turn failed whatever rc says.
        Status::Code(0) if outcome.is_error => Exit::Agent(1),
        Status::Code(0) => Exit::Success,
        Status::Code(code) => Exit::Agent(code),
        Status::Signal(signal) => Exit::Signal(signal),
    };
    let status = if finished.interrupted_by.is_some() {
        TurnStatus::Interrupted
    } else if exit == Exit::Success && !failed_check {
        TurnStatus::Ok
    } else {
        TurnStatus::Failed
    };
    (status, exit)
}

/// The session IDs an agent reported through its session hook (see
/// `Adapter::session_report_args`), in order.
fn reported_sessions(report: &std::path::Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(report) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|event| Some(event.get("session_id")?.as_str()?.to_owned()))
        .collect()
}

/// The `--json` object of a turn.
#[derive(Serialize)]
struct TurnReport<'a> {
    thread: &'a str,
    project: String,
    session: SessionView<'a>,
    turn: TurnView<'a>,
    answer: Option<&'a str>,
    error: Option<&'a str>,
}

/// This machine's name, to tell a dead turn from one running on another machine.
fn host_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|name| name.into_string().ok())
        .unwrap_or_default()
}
