//! The commands: one file each, orchestration only (build the context, plan, act).

mod across;
mod agents;
mod config;
mod doctor;
mod export;
mod forget;
mod import;
mod init;
mod input;
mod listing;
mod log;
mod output;
mod probe;
mod prompt;
mod relocate;
mod search;
mod sessions;
mod show;
mod standing;
mod status;
mod threads;
mod trust;
mod turn;
mod usage;
mod vault;
mod view;

use std::path::PathBuf;

use anyhow::Result;

use output::Report;

use crate::agent::Agents;
use crate::cli::{Cli, Command, GlobalArgs, Origins};
use crate::exit::{Exit, StickyError};
use crate::project::{self, Project};
use crate::settings::{self, Settings};
use crate::store::{SessionRow, Store};

/// Runs the command line: the command, then the one writer of its output ([`output::emit`]).
pub fn run(cli: Cli) -> Exit {
    let reports = cli.command.as_ref().is_some_and(Command::reports);
    let json = cli.global.json;
    crate::msg::configure(cli.global.quiet, json);
    let keys = cli.command.as_ref().map_or(TURN_KEYS, Command::json_keys);
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
        error_object: &|error| error_object(error, keys, &global),
    };
    output::emit(result, &shape)
}

/// The keys of a turn's `--json` object (`sticky PROMPT`, `sticky new`).
const TURN_KEYS: &[&str] = &[
    "thread",
    "project",
    "session",
    "turn",
    "answer",
    "error",
    "exit_code",
];

/// The `--json` object of a command that failed before printing its own: the keys of its
/// success object (`null` where nothing is known, the thread and the project directory where
/// they are), plus `error` and `exit_code`, so a script reads the same fields either way.
fn error_object(error: &anyhow::Error, keys: &[&str], global: &GlobalArgs) -> serde_json::Value {
    let mut object = serde_json::Map::new();
    for key in keys {
        let value = match *key {
            // In `config` and `doctor`, `thread` is a setting with its source, left `null`.
            "thread" | "current" if !keys.contains(&"config_file") => {
                serde_json::json!(global.thread)
            }
            // Where `project` is the directory (not a setting with its source), fill it in.
            "project" if keys.contains(&"turn") || keys.contains(&"found") => {
                known_project(global).map_or(serde_json::Value::Null, |dir| serde_json::json!(dir))
            }
            _ => serde_json::Value::Null,
        };
        object.insert((*key).to_owned(), value);
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
    // The context is built here only: `init` makes the project it would locate, and `prompt`
    // reads no configuration.
    let ctx = || Context::new(&global, origins, ThreadUse::Turn);
    // `agents` and `import` use no thread: `STICKY_THREAD=@branch` outside git stops neither.
    let unthreaded = || Context::new(&global, origins, ThreadUse::None);
    // A command that forgets or rotates the thread takes no fallback for `@branch`.
    let rewriting = |command| Context::new(&global, origins, ThreadUse::Rewrite(command));
    if let Some(command) = &command {
        refuse_thread_flag(command, origins)?;
    }
    match command {
        Some(Command::Init) => init::run(&global),
        Some(Command::Prompt) => prompt::run(&global),
        Some(Command::Agents) => agents::run(&unthreaded()?),
        Some(Command::New(args)) => turn::run(&rewriting("new")?, &args, true),
        Some(Command::Fork(args)) => turn::fork(&ctx()?, &args, |name| {
            // The fork's thread is NAME as given, as `-t NAME` gives it.
            let mut global = global.clone();
            name.clone_into(&mut global.thread);
            let origins = Origins {
                thread: crate::cli::Origin::Flag,
                ..origins
            };
            Context::new(&global, origins, ThreadUse::Turn)
        }),
        Some(Command::Status) => status::run(&ctx()?),
        Some(Command::Log(args)) => log::run(&ctx()?, &args),
        Some(Command::Sessions) => sessions::run(&ctx()?),
        Some(Command::Threads(args)) if args.prune => forget::prune::run(&ctx()?, &args),
        Some(Command::Threads(_)) => threads::run(&ctx()?),
        Some(Command::Config(select)) => config::run(&ctx()?, &select),
        Some(Command::Doctor(select)) => doctor::run(&ctx()?, &select),
        Some(Command::Export(args)) => export::run(&ctx()?, &args),
        Some(Command::Import(args)) => import::run(&unthreaded()?, &args),
        Some(Command::Relocate) => relocate::run(&ctx()?),
        Some(Command::Forget(args)) => forget::run(&rewriting("forget")?, &args),
        Some(Command::Show(args)) => show::run(&ctx()?, &args),
        Some(Command::Trust) => trust::run(&global),
        Some(Command::Usage(args)) => usage::run(&ctx()?, &args),
        Some(Command::Search(args)) => search::run(&ctx()?, &args),
        None => turn::run(&ctx()?, &turn, false),
    }
}

/// `-t NAME` is global, so clap takes it for every command: a command that works on no
/// conversation refuses it rather than drop it (`STICKY_THREAD` in the environment is a
/// default, and stays unused there).
fn refuse_thread_flag(command: &Command, origins: Origins) -> Result<()> {
    if origins.thread != crate::cli::Origin::Flag {
        return Ok(());
    }
    let (name, why) = match command {
        Command::Init => (
            "init",
            "it makes a project; a thread starts with its first turn (sticky -t NAME PROMPT)",
        ),
        Command::Agents => ("agents", "it lists the agents, not a conversation's"),
        Command::Import(_) => ("import", "--as NAME names the thread it adds"),
        Command::Trust => ("trust", "it adopts the whole project's state"),
        Command::Usage(_) => (
            "usage",
            "it sums every thread of the project (`--by thread` shows each)",
        ),
        _ => return Ok(()),
    };
    Err(StickyError::Usage(format!("-t does not apply to `sticky {name}`: {why}")).into())
}

impl Command {
    /// The keys of the command's `--json` success object (none for `agents`, a list), which
    /// its error object has too (see `error_object`).
    fn json_keys(&self) -> &'static [&'static str] {
        match self {
            Self::New(_) | Self::Fork(_) => TURN_KEYS,
            Self::Status => &[
                "project",
                "database",
                "found",
                "thread",
                "session",
                "last_turn",
                "vault",
                "ledger",
                "context",
            ],
            Self::Log(_) | Self::Sessions => &["thread", "sessions"],
            Self::Threads(args) if args.prune => &["pruned", "busy"],
            Self::Threads(_) => &["current", "threads"],
            Self::Init => &["project", "database"],
            Self::Agents => &[],
            Self::Config(_) => &[
                "config_file",
                "agent",
                "model",
                "thread",
                "project",
                "database",
                "agents",
                "vault",
                "carry_on_change",
                "context_threshold",
                "stdin",
            ],
            Self::Doctor(_) => &[
                "project",
                "database",
                "thread",
                "config_file",
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
            ],
            Self::Prompt => &["thread", "agent", "model", "agent_session_id", "status"],
            Self::Export(_) => &[
                "thread",
                "project",
                "agent",
                "agent_session_id",
                "file",
                "format",
                "files",
                "bytes",
                "turns",
            ],
            Self::Import(_) => &[
                "thread",
                "project",
                "from",
                "agent",
                "agent_session_id",
                "sessions",
                "turns",
                "files",
            ],
            Self::Relocate => &["project", "relocated"],
            Self::Forget(_) => &["thread", "sessions", "turns", "vault_copies"],
            Self::Show(_) => &["thread", "session", "turn", "answer", "answer_cut"],
            Self::Trust => &[
                "project",
                "database",
                "trusted",
                "stamped",
                "elsewhere",
                "adopted_copies",
            ],
            Self::Usage(_) => &[
                "by",
                "since",
                "until",
                "rows",
                "total",
                "duplicates",
                "projects",
                "skipped",
            ],
            Self::Search(_) => &["query", "results", "skipped"],
        }
    }

    /// Whether the command only reports (so a closed stdout ends it quietly).
    fn reports(&self) -> bool {
        !matches!(
            self,
            Self::New(_)
                | Self::Fork(_)
                | Self::Init
                | Self::Export(_)
                | Self::Forget(_)
                | Self::Trust
        ) && !matches!(self, Self::Threads(args) if args.prune)
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
        project.adopt_unstamped(|session| {
            let id = session.agent_session_id.as_deref()?;
            let home = dirs::home_dir().unwrap_or_default();
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
                 name it with -t {} (or check out the branch)",
                chosen.setting.origin, chosen.setting.value, chosen.setting.value,
            ))
            .into());
        }
        if let Some(note) = chosen
            .note
            .as_deref()
            .filter(|_| !global.quiet && !global.json)
        {
            eprintln!("sticky: {}", view::escape(note));
        }
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
            if !self.quiet && !self.json {
                eprintln!(
                    "sticky: cannot stamp the new database as yours ({error:#}); it is checked \
                     as a database from before stamps until sticky can write its key"
                );
            }
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
