//! The commands: one file each, orchestration only (build the context, plan, act).

mod agents;
mod config;
mod doctor;
mod init;
mod input;
mod listing;
mod log;
mod prompt;
mod sessions;
mod status;
mod threads;
mod turn;
mod view;

use std::path::PathBuf;

use anyhow::Result;

use crate::agent::Agents;
use crate::agent::program::{Chosen, ChosenBy};
use crate::cli::{Cli, Command, GlobalArgs};
use crate::config::Config;
use crate::exit::{Exit, StickyError};
use crate::project::{self, Project};
use crate::store::Store;

pub use view::{escape, fresh_line};

/// Runs the command line; the caller maps the result to the process exit code.
pub fn run(cli: Cli) -> Result<Exit> {
    let reports = cli.command.as_ref().is_some_and(Command::reports);
    let json = cli.global.json;
    let turn = matches!(cli.command, None | Some(Command::New(_)));
    let thread = cli.global.thread.clone();
    let result = dispatch(cli);
    if let Err(error) = &result {
        if reports && listing::is_broken_pipe(error) {
            // A reader that stopped reading (`sticky log | head -1`, a quit pager) is no
            // failure.
            return Ok(Exit::Success);
        }
    }
    if let (Err(error), true, false) = (&result, json, view::json_printed()) {
        // `--json` promises one object on stdout, also when sticky fails before the turn runs
        // (agent missing, busy, bad configuration).
        let message = format!("{error:#}");
        let code = crate::exit::exit_for(error).code();
        let object = if turn {
            serde_json::json!({
                "thread": thread, "project": null, "session": null, "turn": null,
                "answer": null, "error": message, "exit_code": code,
            })
        } else {
            serde_json::json!({ "error": message, "exit_code": code })
        };
        let _ = view::print_json(&object);
    }
    result
}

fn dispatch(cli: Cli) -> Result<Exit> {
    let Cli {
        command,
        turn,
        global,
        origins,
    } = cli;
    match command {
        Some(Command::Init) => init::run(&global),
        Some(Command::Agents) => agents::run(&Context::new(&global)?),
        Some(Command::New(args)) => turn::run(&Context::new(&global)?, &args, true),
        Some(Command::Status) => status::run(&Context::new(&global)?),
        Some(Command::Log) => log::run(&Context::new(&global)?),
        Some(Command::Sessions) => sessions::run(&Context::new(&global)?),
        Some(Command::Threads) => threads::run(&Context::new(&global)?),
        Some(Command::Config(select)) => {
            config::run(&Context::new(&global)?, &global, &select, origins)
        }
        Some(Command::Doctor(select)) => {
            doctor::run(&Context::new(&global)?, &global, &select, origins)
        }
        Some(Command::Prompt) => prompt::run(&global),
        None => turn::run(&Context::new(&global)?, &turn, false),
    }
}

impl Command {
    /// Whether the command only reports (so a closed stdout ends it quietly).
    fn reports(&self) -> bool {
        !matches!(self, Self::New(_) | Self::Init)
    }
}

/// What every command that works on a project needs.
#[derive(Debug)]
pub struct Context {
    /// Where the project's state lives.
    pub project: Project,
    /// The conversation.
    pub thread: String,
    /// `--json`.
    pub json: bool,
    /// `--quiet`.
    pub quiet: bool,
    /// The user's configuration.
    pub config: Config,
    /// The agents sticky can run.
    pub agents: Agents,
}

impl Context {
    /// Locates the project from `-C` (or the current directory) and `STICKY_DB`.
    fn new(global: &GlobalArgs) -> Result<Self> {
        let cwd = start_dir(global)?;
        if global.thread.trim().is_empty() {
            return Err(StickyError::Usage(
                "the thread name is empty or blank; name one with -t NAME, or leave -t out for \
                 `main`"
                    .into(),
            )
            .into());
        }
        let config = Config::load()?;
        let agents = Agents::new(&config)?;
        Ok(Self {
            config,
            agents,
            project: project::locate(&cwd, sticky_db().as_deref())?,
            thread: global.thread.clone(),
            json: global.json,
            quiet: global.quiet,
        })
    }

    /// The agent a conversation starts with: the configured one, else Claude Code.
    fn default_agent(&self) -> &str {
        self.config.default_agent.as_deref().unwrap_or("claude")
    }

    /// The program of `adapter`: `STICKY_<AGENT>_BIN`, else the configured `bin`, else its
    /// usual name on PATH.
    fn program(&self, adapter: &dyn crate::agent::Adapter) -> Result<PathBuf, StickyError> {
        crate::agent::program::resolve(
            adapter.name(),
            adapter.program(),
            self.program_choice(adapter.name()),
            std::env::var_os("PATH").as_deref(),
        )
    }

    /// What overrides the program of agent `name`, and where that comes from; `None` means
    /// the agent's usual name on PATH.
    fn program_choice(&self, name: &str) -> Option<Chosen> {
        let var = crate::agent::program::override_var(name);
        if let Some(program) = std::env::var_os(&var).filter(|value| !value.is_empty()) {
            return Some(Chosen {
                program,
                by: ChosenBy::Environment,
            });
        }
        let bin = self.config.agent(name).and_then(|s| s.bin.clone())?;
        Some(Chosen {
            program: bin.into(),
            // A `bin` can only come from a file that was read.
            by: ChosenBy::Config(self.config.source.clone().unwrap_or_default()),
        })
    }

    /// Opens (creating if needed) the project's database.
    fn open_store(&self) -> Result<Store> {
        Store::open(&self.project.db)
    }

    /// Opens the project's database if it exists; creates nothing.
    fn existing_store(&self) -> Result<Option<Store>> {
        Store::open_existing(&self.project.db)
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
    std::env::var_os("STICKY_DB")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
}
