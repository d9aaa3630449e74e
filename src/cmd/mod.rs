//! The commands: one module each, orchestration only (build the context, plan, act). Each
//! command's module holds its clap `Args`, its [`Run`] (its run, its text and its `--json`
//! object, a `Serialize` type whose keys its error object has too); `cli::Command` dispatches
//! to it, and [`run`] prints what it said through [`output::emit`].

mod across;
pub mod agents;
pub mod config;
pub mod doctor;
pub mod export;
pub mod forget;
pub mod fork;
mod former;
pub mod import;
pub mod init;
mod input;
mod kept;
mod listing;
pub mod log;
mod nested;
pub mod new;
mod output;
mod probe;
pub mod prompt;
pub mod relocate;
pub mod search;
pub mod sessions;
pub mod show;
mod standing;
pub mod status;
pub mod threads;
pub mod trust;
mod turn;
pub mod usage;
mod vault;
mod view;

use std::path::PathBuf;

use anyhow::Result;

use serde::Serialize;

use output::Report;

use crate::agent::Agents;
use crate::cli::{Cli, Command, GlobalArgs, Origins};
use crate::exit::{Exit, StickyError};
use crate::project::{self, Project};
use crate::settings::{self, Settings};
use crate::store::{SessionRow, Store};

/// What every command is: its options (`Args`, as clap parsed them), run against the call.
/// zoxide's `impl Run for Query` is the model: the command's module holds its options, its
/// run, its text and its `--json` object, and [`Command`] dispatches to it.
pub trait Run {
    /// Runs the command: what it has to say (text or its `--json` object) and its exit.
    fn run(&self, call: &Call<'_>) -> Result<Report>;

    /// The keys of the command's `--json` success object, which its error object has too
    /// (see [`error_object`]): [`json_keys`] of the type it prints.
    fn json_keys(&self) -> Vec<String>;

    /// Whether the command only reports (so a closed stdout ends it quietly).
    fn reports(&self) -> bool {
        true
    }

    /// Why `-t NAME` does not apply to the command, when it works on no conversation.
    fn refuses_thread(&self) -> Option<&'static str> {
        None
    }
}

/// The keys of `T`'s JSON object, read from its default value (none for a list): the error
/// object of a command that failed has the keys the command would have printed.
pub fn json_keys<T: Serialize + Default>() -> Vec<String> {
    match serde_json::to_value(T::default()) {
        Ok(serde_json::Value::Object(object)) => object.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// What a command is given: the options every command has and where the settings came from;
/// a command that works on a project builds its [`Context`] from it.
pub struct Call<'a> {
    /// The options every command understands.
    pub global: &'a GlobalArgs,
    /// Whether `--agent`, `--model` and `--thread` came from flags or the environment.
    pub origins: Origins,
}

impl Call<'_> {
    /// The context of a command that runs or reads the conversation.
    fn context(&self) -> Result<Context> {
        Context::new(self.global, self.origins, ThreadUse::Turn)
    }

    /// The context of a command that uses no thread (`agents`, `import`):
    /// `STICKY_THREAD=@branch` outside git stops neither.
    fn unthreaded(&self) -> Result<Context> {
        Context::new(self.global, self.origins, ThreadUse::None)
    }

    /// The context of `command`, which forgets or rotates the thread: no fallback for
    /// `@branch`.
    fn rewriting(&self, command: &'static str) -> Result<Context> {
        Context::new(self.global, self.origins, ThreadUse::Rewrite(command))
    }
}

/// Runs the command line: the command, then the one writer of its output ([`output::emit`]).
pub fn run(cli: Cli) -> Exit {
    let reports = cli
        .command
        .as_ref()
        .is_some_and(|command| command.runner().reports());
    let json = cli.global.json;
    crate::msg::configure(cli.global.quiet, json);
    let keys = cli
        .command
        .as_ref()
        .map_or_else(json_keys::<new::TurnObject>, |command| {
            command.runner().json_keys()
        });
    let global = cli.global.clone();
    // A panic is a bug: the panic hook has restored the terminal and said where it happened;
    // it ends as an internal error (70), with its `--json` object like any other failure.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(cli)))
        .unwrap_or_else(|_| {
            Err(anyhow::anyhow!(
                "internal error: sticky panicked (a bug in sticky; please report it)"
            ))
        });
    let shape = output::Shape {
        json,
        reports,
        error_object: &|error| error_object(error, &keys, &global),
    };
    output::emit(result, &shape)
}

/// The `--json` object of a command that failed before printing its own: the keys of its
/// success object (`null` where nothing is known, the thread and the project directory where
/// they are), plus `error` and `exit_code`, so a script reads the same fields either way.
fn error_object(error: &anyhow::Error, keys: &[String], global: &GlobalArgs) -> serde_json::Value {
    let has = |key: &str| keys.iter().any(|known| known == key);
    let mut object = serde_json::Map::new();
    for key in keys {
        let value = match key.as_str() {
            // In `config` and `doctor`, `thread` is a setting with its source, left `null`.
            "thread" | "current" if !has("config_file") => serde_json::json!(global.thread),
            // Where `project` is the directory (not a setting with its source), fill it in.
            "project" if has("turn") || has("found") => {
                known_project(global).map_or(serde_json::Value::Null, |dir| serde_json::json!(dir))
            }
            _ => serde_json::Value::Null,
        };
        object.insert(key.clone(), value);
    }
    object.insert("error".into(), serde_json::json!(format!("{error:#}")));
    let code = crate::exit::exit_for(error).code();
    object.insert("exit_code".into(), serde_json::json!(code));
    serde_json::Value::Object(object)
}

/// The project directory of this run, when it can be found (the error may be that it cannot).
fn known_project(global: &GlobalArgs) -> Option<String> {
    let cwd = start_dir(global).ok()?;
    let project = project::locate(&cwd, sticky_db().as_deref()).ok()?;
    Some(project.dir.display().to_string())
}

fn dispatch(cli: Cli) -> Result<Report> {
    crate::pty::panic_if_asked("command");
    let Cli {
        command,
        turn,
        global,
        origins,
    } = cli;
    let call = Call {
        global: &global,
        origins,
    };
    match &command {
        Some(command) => {
            refuse_thread_flag(command, origins)?;
            command.runner().run(&call)
        }
        None => turn::run(&call.context()?, &turn, false),
    }
}

/// `-t NAME` is global, so clap takes it for every command: a command that works on no
/// conversation refuses it rather than drop it (`STICKY_THREAD` in the environment is a
/// default, and stays unused there).
fn refuse_thread_flag(command: &Command, origins: Origins) -> Result<()> {
    match command.runner().refuses_thread() {
        Some(why) if origins.thread == crate::cli::Origin::Flag => Err(StickyError::Usage(
            format!("-t does not apply to `sticky {}`: {why}", command.name()),
        )
        .into()),
        _ => Ok(()),
    }
}

/// What every command that works on a project needs.
#[derive(Debug)]
pub struct Context {
    /// Where the project's state lives.
    pub project: Project,
    /// The conversation.
    pub thread: String,
    /// The git branch the conversation is named after (`-t @branch`, `-t @pr`, the
    /// configuration's `thread = "branch"`), which a turn records on the thread.
    pub branch: Option<String>,
    /// `--json`.
    pub json: bool,
    /// `--quiet`.
    pub quiet: bool,
    /// Whether `--agent`, `--model` and `--thread` came from flags or the environment.
    pub origins: Origins,
    /// The settings of the run, with their sources (and the user's configuration).
    pub settings: Settings,
    /// The agents sticky can run.
    pub agents: Agents,
}

/// What is wrong with `name` for a new thread, if anything: the one rule for `-t NAME` (a turn
/// starting a thread) and for the threads `sticky import` adds. A thread an older sticky made
/// with such a name stays usable; the listings escape it.
pub(crate) fn thread_name_problem(name: &str) -> Option<&'static str> {
    name_problem(name, false)
}

/// [`thread_name_problem`] for a name git gave (`-t @branch`, `-t @pr`): a branch git names
/// `@x` is no misspelt `@branch`, so its thread is `@x` as it is. git refuses a branch with a
/// control character, a space or a leading `-`, so no other rule is waived.
pub(crate) fn followed_name_problem(name: &str) -> Option<&'static str> {
    name_problem(name, true)
}

fn name_problem(name: &str, from_git: bool) -> Option<&'static str> {
    if name.trim().is_empty() {
        Some("is empty or blank; choose a name")
    } else if name.chars().any(char::is_control) {
        Some("holds a control character (a newline, tab, escape, ...); choose a name without one")
    } else if name.trim() != name {
        Some("starts or ends with a space, which no listing shows; choose a name without one")
    } else if name.starts_with('@') && !from_git {
        // `-t @branch` and `-t @pr` name a thread after git; `-t @brnach` is a typo.
        Some(
            "starts with `@`, which names a thread after git (-t @branch, -t @pr); choose a name that starts otherwise",
        )
    } else if name.starts_with('-') {
        // `-t -rf` is read as options: such a thread could be named only as `-t=-rf`, and
        // every hint that shows `-t NAME` would fail.
        Some(
            "starts with `-`, which a command line reads as an option (`-t -rf`); choose a name that starts otherwise",
        )
    } else {
        None
    }
}

/// What a command does with the thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ThreadUse {
    /// Nothing: `@branch` is not followed.
    None,
    /// Runs or reads it: `@branch` on a detached HEAD falls back to `main`.
    Turn,
    /// Forgets or rotates it (the command's name): no fallback.
    Rewrite(&'static str),
}

impl Context {
    /// Locates the project from `-C` (or the current directory) and `STICKY_DB`, and resolves
    /// the settings; the thread (`@branch` asks git) only for a command that uses one.
    fn new(global: &GlobalArgs, origins: Origins, uses: ThreadUse) -> Result<Self> {
        let cwd = start_dir(global)?;
        if global.thread.trim().is_empty() {
            return Err(StickyError::Usage(
                "the thread name is empty or blank; name one with -t NAME, or leave -t out for \
                 `main`"
                    .into(),
            )
            .into());
        }
        let config = settings::read_config()?;
        let agents = Agents::new(&config.0)?;
        let project = project::locate(&cwd, sticky_db().as_deref())?;
        let home = settings::home()?;
        project.adopt_unstamped(|session| {
            let id = session.agent_session_id.as_deref()?;
            agents
                .find(&session.agent)?
                .saved(&home, &session.directory, id)
        })?;
        let chosen = if uses == ThreadUse::None {
            settings::ThreadChoice::as_given(global, origins)
        } else {
            settings::resolve_thread(global, origins, &config.0, &project.dir)?
        };
        if let (ThreadUse::Rewrite(command), true) = (uses, chosen.fallback) {
            return Err(StickyError::Usage(format!(
                "{}: git names no branch, and `sticky {command}` does not fall back to thread {}; \
                 name it with {} (or check out the branch)",
                chosen.setting.origin,
                chosen.setting.value,
                view::thread_option(&chosen.setting.value),
            ))
            .into());
        }
        if let Some(note) = chosen.note.as_deref() {
            aside!("{}", view::escape(note));
        }
        view::set_main_is_default(settings::main_is_default(&config.0));
        let thread = chosen.setting.value.clone();
        let settings = Settings::new(global, chosen.setting, &project, config);
        Ok(Self {
            settings,
            agents,
            project,
            thread,
            branch: chosen.branch,
            json: global.json,
            quiet: global.quiet,
            origins,
        })
    }

    /// The agent a conversation starts with: the configured one, else Claude Code.
    fn default_agent(&self) -> &str {
        &self.settings.default_agent.value
    }

    /// The program of `adapter`: `STICKY_<AGENT>_BIN`, else the configured `bin`, else its
    /// usual name on PATH.
    fn program(&self, adapter: &dyn crate::agent::Adapter) -> Result<PathBuf, StickyError> {
        self.settings.program(adapter).1
    }

    /// [`Context::open_store`] for a command that starts the project: where there is no
    /// database yet, `ready` says first whether the command can go through (a turn: its agent's
    /// program found, its arguments accepted), so one that cannot creates neither `.sticky/`
    /// nor the database.
    fn open_store_when(&self, ready: impl FnOnce() -> Result<()>) -> Result<Store> {
        if self.project.database == project::Database::Missing {
            ready()?;
        }
        self.open_store()
    }

    /// Opens (creating if needed) the project's database, stamping a created one as the
    /// user's.
    fn open_store(&self) -> Result<Store> {
        self.project.check_creatable()?;
        let store = Store::open(&self.project.state.db)?;
        project::registry::note(&self.project);
        // A data directory sticky cannot write (a read-only HOME) costs the stamp, not the
        // turn: the database is then checked as one from before stamps, every run.
        if let Err(error) = self.project.stamp_created() {
            aside!(
                "cannot stamp the new database as yours ({error:#}); it is checked as a \
                 database from before stamps until sticky can write its key"
            );
        }
        Ok(store)
    }

    /// Opens the project's database if it exists; creates nothing.
    fn existing_store(&self) -> Result<Option<Store>> {
        Store::open_existing(&self.project.state.db)
    }

    /// The live session of the conversation, if the database and the thread exist (reads only).
    fn live_session(&self) -> Result<Option<SessionRow>> {
        let Some(store) = self.existing_store()? else {
            return Ok(None);
        };
        match store.thread(&self.thread)? {
            Some(thread) => store.live_session(thread.id),
            None => Ok(None),
        }
    }
}

/// The directory sticky acts in: `-C DIR`, else the current directory.
fn start_dir(global: &GlobalArgs) -> Result<PathBuf> {
    let dir = match &global.directory {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|error| {
            StickyError::Usage(format!("the current directory is not usable: {error}"))
        })?,
    };
    let canonical = dir.canonicalize().map_err(|error| {
        StickyError::Usage(format!("cannot use directory {}: {error}", dir.display()))
    })?;
    if !canonical.is_dir() {
        return Err(StickyError::Usage(format!(
            "cannot use directory {}: not a directory",
            dir.display()
        ))
        .into());
    }
    Ok(canonical)
}

/// `STICKY_DB`: a database path that overrides `.sticky/sticky.db`.
fn sticky_db() -> Option<PathBuf> {
    crate::settings::env::db()
}
