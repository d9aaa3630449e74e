//! `sticky doctor`: what the next turn would use and why, and what stands in its way.
//!
//! It runs the same resolution a turn runs (project, database, thread, session policy, agent,
//! program) without writing anything, then checks what a turn can only find out by failing:
//! whether it can write its state, whether the agent's program is there and whether the agent
//! still has the session's transcript. It exits with the code the next turn would fail with, so
//! scripts can ask `sticky doctor >/dev/null || ...` before spending a turn.

use std::io::Write;

use anyhow::Result;
use nix::unistd::{AccessFlags, access};
use serde::Serialize;

use super::output::Report;
use super::vault::{self, VaultView};
use super::view::{CountedSession, SessionView, TurnView, escape, format_time};
use super::{Call, Run};
use super::{Context, probe};
use crate::agent::{Adapter, tested};
use crate::cli::SelectArgs;
use crate::exit::Exit;
use crate::session::{self, Action, Plan, Reason, Request};
use crate::settings::{ConfigFile, ProjectDir, Setting, Source};
use crate::state;
use crate::store::{SessionRow, TurnRow};

/// The options of `sticky doctor`: the agent and model it reports on.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {
    /// The agent and model, chosen as a turn chooses them.
    #[command(flatten)]
    pub select: SelectArgs,
}

/// The `--json` object.
#[derive(Serialize)]
struct Shown<'a> {
    project: ProjectDir,
    database: Located,
    config_file: ConfigFile,
    thread: Located,
    /// The live session, with its number of turns.
    session: Option<CountedSession<'a>>,
    last_turn: Option<TurnView<'a>>,
    /// Whether a turn holds the conversation now (the next one waits for it).
    turn_running: bool,
    next_turn: NextTurn,
    agent: Setting<String>,
    program: Program,
    transcript: Option<Transcript>,
    problems: Vec<Problem>,
    /// The code `doctor` exits with: 0, or the one the next turn would fail with.
    exit_code: u8,
    vault: DoctorVault,
}

/// The keys of [`Shown`], which its fields have no default value to give (settings with
/// their sources): the error object has them too. The integration tests hold them to the
/// object `--json` prints and to docs/json.md.
const KEYS: &[&str] = &[
    "project",
    "database",
    "config_file",
    "thread",
    "session",
    "last_turn",
    "turn_running",
    "next_turn",
    "agent",
    "program",
    "transcript",
    "problems",
    "exit_code",
    "vault",
];

/// The vault, with what it holds of the live session and the agent's retention warning.
#[derive(Serialize)]
struct DoctorVault {
    #[serde(flatten)]
    view: VaultView,
    /// When the vault last copied the live session (`null`: it holds no copy).
    session_copied_at: Option<i64>,
    /// The agent may have deleted the session by its own retention (`cleanupPeriodDays`).
    warning: Option<String>,
    /// Whether the next turn would put the copy back: the vault is on and holds a copy of
    /// every turn of the session.
    #[serde(skip)]
    restorable: bool,
}

/// A setting for something that may not exist yet.
#[derive(Serialize)]
struct Located {
    #[serde(flatten)]
    setting: Setting<String>,
    exists: bool,
}

/// What the next turn would do with the conversation's session.
#[derive(Serialize)]
struct NextTurn {
    /// `resume`, `start` (no session yet), `restart` (the agent never created the stored
    /// session, so it is started again in place) or `rotate` (a new session replaces it).
    action: &'static str,
    agent: String,
    model: Option<String>,
    /// Why a rotation happens (`model-change`, `agent-change`, `unsaved`).
    reason: Option<&'static str>,
}

#[derive(Serialize)]
struct Program {
    #[serde(flatten)]
    setting: Setting<Option<String>>,
    /// The first line of `<program> --version`.
    version: Option<String>,
    /// The version sticky was tested with (`crate::agent::tested`), for a known agent.
    tested_version: Option<&'static str>,
    /// Whether `version` is newer than `tested_version`.
    newer_than_tested: bool,
    error: Option<String>,
}

/// The agent's own record of the session.
#[derive(Serialize)]
struct Transcript {
    path: String,
    exists: bool,
}

#[derive(Serialize)]
struct Problem {
    message: String,
    exit_code: u8,
}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(&call.context()?, &self.select)
    }

    fn json_keys(&self) -> Vec<String> {
        KEYS.iter().map(ToString::to_string).collect()
    }
}

/// Reports what the next turn would use, and exits with the code it would fail with.
fn run(ctx: &Context, select: &SelectArgs) -> Result<Report> {
    let (state, mut problems) = state_and_problems(ctx);
    let live = state.live.as_ref();
    let plan = next_plan(ctx, select, &state);
    let next_turn = next_turn(&plan);
    let agent = ctx.settings.agent(select, ctx.origins, live);
    let program = agent_program(ctx, &agent.value, &mut problems);
    let transcript = live.and_then(|live| transcript(ctx, live));
    let vault = doctor_vault(ctx, &state);
    if let Some(live) = live {
        problems.extend(session_problems(
            ctx,
            &plan,
            live,
            transcript.as_ref(),
            vault.restorable,
        ));
    }
    let exit = problems.first().map_or(Exit::Success, |(exit, _)| *exit);
    let report = Shown {
        project: ctx.settings.project.clone(),
        database: Located {
            setting: ctx.settings.database.clone(),
            exists: state.database_exists,
        },
        config_file: ctx.settings.config_file.clone(),
        thread: Located {
            setting: ctx.settings.thread.clone(),
            exists: state.thread_exists,
        },
        session: live.map(|live| CountedSession {
            session: SessionView::from(live),
            turns: state.turns,
        }),
        last_turn: state.last_turn.as_ref().map(TurnView::from),
        turn_running: state.turn_running,
        next_turn,
        agent,
        program,
        transcript,
        problems: shown_problems(problems),
        exit_code: exit.code(),
        vault,
    };
    Ok(said(ctx, &report)?.exiting(exit))
}

/// The conversation's state as a turn would read it, and the problems found reading it or
/// writing next to it.
fn state_and_problems(ctx: &Context) -> (State, Vec<(Exit, String)>) {
    let mut problems: Vec<(Exit, String)> = Vec::new();
    let state = match read_state(ctx) {
        Ok(state) => state,
        Err(error) => {
            problems.push((crate::exit::exit_for(&error), format!("{error:#}")));
            State::default()
        }
    };
    if problems.is_empty() {
        // (A database that could not even be read has said why already.)
        problems.extend(write_problem(&ctx.project.state));
    }
    (state, problems)
}

/// The vault, what it holds of the live session and the agent's retention warning.
fn doctor_vault(ctx: &Context, state: &State) -> DoctorVault {
    let live = state.live.as_ref();
    let view = VaultView::read(ctx);
    let session_copied_at = live.and_then(|live| vault::copied_at(ctx, live));
    let restorable = view.enabled
        && session_copied_at.is_some()
        && live.is_some_and(|live| vault::lacking(ctx, live, &state.session_turns).is_none());
    DoctorVault {
        view,
        session_copied_at,
        restorable,
        warning: live.and_then(|live| {
            vault::retention_warning(
                ctx,
                live,
                (state.last_turn.as_ref(), &state.session_turns),
                crate::store::now(),
            )
        }),
    }
}

/// The problems as the report shows them, each with the code it exits with.
fn shown_problems(problems: Vec<(Exit, String)>) -> Vec<Problem> {
    problems
        .into_iter()
        .map(|(exit, message)| Problem {
            message,
            exit_code: exit.code(),
        })
        .collect()
}

/// The report as one JSON object or as text.
fn said(ctx: &Context, report: &Shown<'_>) -> Result<Report> {
    if ctx.json {
        return Report::json(report);
    }
    let mut out = Vec::new();
    print_text(&mut out, report)?;
    Ok(Report::text(out))
}

/// The plan the next turn would apply, as the turn makes it (read-only: nothing is written).
fn next_plan(ctx: &Context, select: &SelectArgs, state: &State) -> Plan {
    // The live session is the thread's newest: it ran a turn when the last turn is its own.
    let tried = |row: &SessionRow| {
        state
            .last_turn
            .as_ref()
            .is_some_and(|turn| turn.session_id == row.id)
    };
    session::plan(
        state
            .live
            .as_ref()
            .map(|row| (session::live_of(row, tried(row), &ctx.agents), ())),
        Request {
            fresh: false,
            agent: select.agent.as_deref(),
            model: select.model.as_deref(),
            default_agent: ctx.default_agent(),
            carry: None,
            carry_on_change: ctx.settings.carry_on_change.value,
        },
    )
}

/// What stands in the way of the live session: recorded for another directory, or (when the
/// plan resumes it) no longer resumable.
fn session_problems(
    ctx: &Context,
    plan: &Plan,
    live: &SessionRow,
    transcript: Option<&Transcript>,
    restorable: bool,
) -> Vec<(Exit, String)> {
    let mut problems = Vec::new();
    if let Err(error) = session::ensure_in_project(live, &ctx.thread, &ctx.project.dir) {
        // The same advice a turn gives (another copy took the session, or the project moved).
        let advice = super::standing::advice(&ctx.thread, live, &ctx.project);
        problems.push((error.exit(), advice.unwrap_or_else(|| error.to_string())));
    }
    // The turn refuses a stored ID or model it would pass as an option, or an ID of another
    // shape than the agent's, before it runs.
    if plan.action == Action::Resume(()) {
        let db = &ctx.project.state.db;
        if let Err(error) = session::ensure_plain_arguments(live, &ctx.agents, db) {
            problems.push((error.exit(), error.to_string()));
        }
    }
    // A fork not made yet passes its source's ID to the agent: checked as its first turn will.
    if let Some(error) = super::kept::fork_source_refusal(ctx, live) {
        problems.push((error.exit(), error.to_string()));
    }
    problems.extend(kept_problem(ctx, plan, live));
    // A transcript the vault holds a copy of is put back by the next turn.
    if plan.action == Action::Resume(()) && !restorable {
        problems.extend(resume_problems(live, transcript));
    }
    problems
}

/// The turn's refusal of a session of this project's that this HOME's agent keeps for another
/// directory, or another project's vault takes up next (`kept::refuse_kept_elsewhere`); none
/// for one kept for the directory the project moved from, which a turn that resumes it moves
/// here and catches up (`former::former`) (review 25, L1).
fn kept_problem(ctx: &Context, plan: &Plan, live: &SessionRow) -> Option<(Exit, String)> {
    if live.directory != ctx.project.dir {
        return None;
    }
    if plan.action == Action::Resume(()) && super::former::former(ctx, live).is_some() {
        return None;
    }
    let home = crate::settings::home().ok()?;
    let error = super::kept::refuse_kept_elsewhere(ctx, &ctx.thread, live, &home).err()?;
    Some((error.exit(), error.to_string()))
}

/// The program of agent `name`, or why there is none; an unknown agent or a missing program
/// is a problem.
fn agent_program(ctx: &Context, name: &str, problems: &mut Vec<(Exit, String)>) -> Program {
    let adapter = match ctx.agents.get(name) {
        Ok(adapter) => adapter,
        Err(error) => {
            problems.push((error.exit(), error.to_string()));
            return Program {
                setting: Setting {
                    value: None,
                    source: Source::Default,
                    origin: "unknown agent".into(),
                },
                version: None,
                tested_version: None,
                newer_than_tested: false,
                error: Some(format!("unknown agent `{name}`")),
            };
        }
    };
    let program = program(ctx, adapter);
    if let Some(error) = &program.error {
        problems.push((Exit::AgentMissing, error.clone()));
    }
    program
}

/// The program of `adapter`, where it was chosen, and its version.
fn program(ctx: &Context, adapter: &dyn Adapter) -> Program {
    let (setting, resolved) = ctx.settings.program(adapter);
    let error = resolved.err().map(|error| error.to_string());
    let version = setting
        .value
        .as_deref()
        .and_then(|path| probe::version(path.as_ref()));
    let newer_than_tested = version
        .as_deref()
        .is_some_and(|version| tested::newer_than_tested(adapter.name(), version).is_some());
    Program {
        setting,
        version,
        tested_version: tested::tested_version(adapter.name()),
        newer_than_tested,
        error,
    }
}

/// What the database says about the conversation.
#[derive(Default)]
struct State {
    database_exists: bool,
    thread_exists: bool,
    live: Option<SessionRow>,
    turns: i64,
    last_turn: Option<TurnRow>,
    /// The live session's turns.
    session_turns: Vec<TurnRow>,
    turn_running: bool,
}

fn read_state(ctx: &Context) -> Result<State> {
    let mut state = State {
        database_exists: ctx.project.state.db.exists(),
        ..State::default()
    };
    let Some(store) = ctx.existing_store()? else {
        return Ok(state);
    };
    let Some(thread) = store.thread(&ctx.thread)? else {
        store.prove_intact_if_used()?;
        return Ok(state);
    };
    state.thread_exists = true;
    state.live = store.live_session(thread.id)?;
    if state.live.is_none() {
        // "starts a new session" must not be said of a file whose damage hides the session.
        store.prove_intact_if_used()?;
    }
    if let Some(live) = &state.live {
        state.turns = store.turn_count(live.id)?;
        state.session_turns = store.turns(thread.id)?;
        state
            .session_turns
            .retain(|turn| turn.session_id == live.id);
    }
    state.last_turn = store.last_turn(thread.id)?;
    state.turn_running = crate::lock::is_held(&ctx.project.state.locks, &ctx.thread);
    Ok(state)
}

/// Why the next turn could not write its state, if it could not: it writes the database, and
/// beside it the WAL, the journal and the lock files, or first creates the database (and
/// `.sticky/`) under the nearest directory that exists. Checked with `access(2)`, so nothing
/// is written, and root (whom modes do not stop) passes as its turn would.
fn write_problem(state: &state::State) -> Option<(Exit, String)> {
    let db = &state.db;
    let dir_flags = AccessFlags::W_OK | AccessFlags::X_OK;
    let mut checks = Vec::new();
    if db.exists() {
        checks.push((db.to_owned(), AccessFlags::W_OK));
        if state.locks.exists() {
            checks.push((state.locks.clone(), dir_flags));
        }
        checks.extend(db.parent().map(|dir| (dir.to_owned(), dir_flags)));
    } else {
        let existing = db.ancestors().skip(1).find(|dir| dir.exists());
        checks.extend(existing.map(|dir| (dir.to_owned(), dir_flags)));
    }
    let (path, errno) = checks
        .into_iter()
        .find_map(|(path, flags)| access(&path, flags).err().map(|errno| (path, errno)))?;
    Some((
        Exit::Store,
        format!(
            "{}: the next turn cannot write {} ({}); {}",
            db.display(),
            path.display(),
            errno.desc().to_lowercase(),
            crate::store::UNWRITABLE
        ),
    ))
}

/// The plan as the report shows it.
fn next_turn(plan: &Plan) -> NextTurn {
    NextTurn {
        action: plan.action.as_str(),
        agent: plan.agent.clone(),
        model: plan.model.clone(),
        reason: plan.action.reason().map(Reason::as_str),
    }
}

/// Where the agent keeps the live session's transcript, if sticky knows.
fn transcript(ctx: &Context, live: &SessionRow) -> Option<Transcript> {
    let id = live.agent_session_id.as_deref()?;
    let adapter = ctx.agents.find(&live.agent)?;
    let home = crate::settings::home().ok()?;
    let path = adapter.transcript(&home, &live.directory, id)?;
    Some(Transcript {
        exists: path.is_file(),
        path: path.display().to_string(),
    })
}

/// What would make resuming `live` fail: a transcript that is gone (another directory is
/// checked for every live session, resumed or not).
fn resume_problems(live: &SessionRow, transcript: Option<&Transcript>) -> Vec<(Exit, String)> {
    let mut problems = Vec::new();
    let id = live.agent_session_id.as_deref().unwrap_or_default();
    if let Some(transcript) = transcript.filter(|t| !t.exists) {
        problems.push((
            Exit::SessionLost,
            format!(
                "{} no longer has the transcript of session {id} ({}), so it cannot resume it; \
                 run `sticky new` to start over (the old session stays on record)",
                live.agent, transcript.path
            ),
        ));
    }
    problems
}

fn print_text(out: &mut impl Write, report: &Shown<'_>) -> std::io::Result<()> {
    let project = &report.project;
    let why = format!("{}; {}", project.found, project.dir.origin);
    line(out, "project", &project.dir.value, &why)?;
    located(out, "database", &report.database, "not created yet")?;
    let file = &report.config_file;
    let state = if file.exists { "read" } else { "not found" };
    let path = file.path.value.as_deref().unwrap_or("-");
    line(
        out,
        "config",
        path,
        &format!("{}; {state}", file.path.origin),
    )?;
    located(out, "thread", &report.thread, "the next turn creates it")?;
    print_next_turn(out, report)
}

/// The line of a setting that names something, with where it came from and whether it
/// exists (`missing` says what holds when it does not).
fn located(out: &mut impl Write, name: &str, it: &Located, missing: &str) -> std::io::Result<()> {
    let state = if it.exists { "exists" } else { missing };
    let why = format!("{}; {state}", it.setting.origin);
    line(out, name, &it.setting.value, &why)
}

/// The session, the next turn and what it would run, then the problems.
fn print_next_turn(out: &mut impl Write, report: &Shown<'_>) -> std::io::Result<()> {
    print_session(out, report)?;
    if report.turn_running {
        line(
            out,
            "running",
            "a turn holds this thread now",
            "the next turn waits for it, or fails at once with --no-wait",
        )?;
    }
    let (what, why) = describe(&report.next_turn);
    line(out, "next turn", &what, &why)?;
    line(out, "agent", &report.agent.value, &report.agent.origin)?;
    print_program(out, &report.program)?;
    print_vault(out, report)?;
    print_problems(out, &report.problems)
}

/// The live session with its number of turns and the last one's status, or none.
fn print_session(out: &mut impl Write, report: &Shown<'_>) -> std::io::Result<()> {
    let Some(counted) = &report.session else {
        return line(out, "session", "none", "the next turn starts one");
    };
    let session = &counted.session;
    let value = format!(
        "#{} {} · model {} · {}",
        session.id,
        session.agent,
        session.model.unwrap_or("default"),
        session.agent_session_id.unwrap_or("(no ID yet)")
    );
    let last = report
        .last_turn
        .as_ref()
        .map_or_else(String::new, |turn| format!(", last {}", turn.status));
    line(
        out,
        "session",
        &value,
        &format!(
            "{} turn{}{last}",
            counted.turns,
            if counted.turns == 1 { "" } else { "s" }
        ),
    )
}

/// The agent's program with where it came from and its version, or why it was not found.
fn print_program(out: &mut impl Write, program: &Program) -> std::io::Result<()> {
    match (&program.setting.value, &program.error) {
        (Some(path), _) => {
            let version = program.version.as_deref().unwrap_or("version unknown");
            let mut why = format!("{}; {version}", program.setting.origin);
            if let (true, Some(tested)) = (program.newer_than_tested, program.tested_version) {
                why.push_str(&format!(", newer than the {tested} sticky was tested with"));
            }
            line(out, "program", path, &why)
        }
        (None, error) => line(out, "program", "not found", error.as_deref().unwrap_or("-")),
    }
}

/// The session's transcript (and whether the vault can restore it), the vault and its
/// retention warning.
fn print_vault(out: &mut impl Write, report: &Shown<'_>) -> std::io::Result<()> {
    if let Some(transcript) = &report.transcript {
        let state = match (transcript.exists, report.vault.restorable) {
            (true, _) => "exists",
            (false, true) => "missing; the next turn restores it from sticky's vault",
            (false, false) => "missing",
        };
        line(out, "transcript", &transcript.path, state)?;
    }
    let vault = &report.vault;
    let held = match vault.session_copied_at {
        Some(at) => format!("this session copied {}", format_time(at)),
        None => "no copy of this session".to_owned(),
    };
    line(out, "vault", &vault.view.text(), &held)?;
    if let Some(warning) = &vault.warning {
        writeln!(out, "\nwarning: {}", escape(warning))?;
    }
    Ok(())
}

/// The verdict under the report: ok, or each problem with the code the next turn would exit.
fn print_problems(out: &mut impl Write, problems: &[Problem]) -> std::io::Result<()> {
    if problems.is_empty() {
        writeln!(out, "\nok: the next turn can run")?;
    } else {
        writeln!(out, "\nproblems:")?;
        for problem in problems {
            let message = escape(&problem.message);
            writeln!(out, "  - {message} (exit {})", problem.exit_code)?;
        }
    }
    Ok(())
}

/// What the next turn does, and why or with which model, in words.
fn describe(next: &NextTurn) -> (String, String) {
    let model = next.model.as_deref().unwrap_or("default");
    let what = match next.action {
        "resume" => "resumes the live session".to_owned(),
        "rotate" => format!("rotates to a new {} session", next.agent),
        "restart" => format!(
            "starts the unconfirmed {} session again (the agent never created it)",
            next.agent
        ),
        _ => format!("starts a new {} session", next.agent),
    };
    let why = next.reason.map_or_else(
        || format!("model {model}"),
        |reason| format!("{reason}; model {model}"),
    );
    (what, why)
}

/// One line of the report; the value and the reason quote stored and found text, so both are
/// escaped.
fn line(out: &mut impl Write, name: &str, value: &str, why: &str) -> std::io::Result<()> {
    writeln!(out, "{name:<11} {}  ({})", escape(value), escape(why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_turn_is_named_after_the_plan() {
        let plan = |action| Plan {
            action,
            agent: "claude".into(),
            model: Some("opus".into()),
            carry: None,
        };
        let resume = next_turn(&plan(Action::Resume(())));
        assert_eq!(
            (resume.action, resume.model.as_deref(), resume.reason),
            ("resume", Some("opus"), None)
        );
        let rotate = next_turn(&plan(Action::Rotate((), Reason::ModelChange)));
        assert_eq!(
            (rotate.action, rotate.reason),
            ("rotate", Some("model-change"))
        );
        assert_eq!(next_turn(&plan(Action::Start)).action, "start");
        assert_eq!(next_turn(&plan(Action::Restart(()))).action, "restart");
    }
}
