//! The command line as clap types, and nothing else.
//!
//! Doc comments here are the `--help` text and the man pages, so they are written for users.
//! Nothing in this module opens the database or touches the terminal: turning these raw values
//! into a validated plan is the job of `cmd`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueHint};

/// The exit-code contract, printed under `--help` and in the man page.
pub const EXIT_CODES: &str = "\
Exit codes:
  0        the turn succeeded
  1-125    the agent's own exit code, passed through
  128+N    the agent was killed by signal N (130 for Ctrl-C)
  2        usage error: bad option or argument
  70       internal error in sticky
  71       store error: the project database cannot be opened, read or written
  72       agent not found or not executable
  73       session lost: the agent can no longer resume the stored session
  74       amnesia detected: the agent answered from a different session than the one resumed
  75       busy: another turn holds this conversation and waiting gave up";

/// The environment variables sticky reads, for the man pages (name, meaning).
pub const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "STICKY_AGENT",
        "the agent to use, as --agent does (a flag wins over it)",
    ),
    (
        "STICKY_MODEL",
        "the model to use, as --model does (a flag wins over it)",
    ),
    (
        "STICKY_THREAD",
        "the conversation to use, as --thread does (a flag wins over it)",
    ),
    (
        "STICKY_DB",
        "the database file, instead of .sticky/sticky.db in the project directory \
         (read-only checkouts, CI caches); a relative path is taken from the current directory",
    ),
    (
        "STICKY_CEILING_DIRECTORIES",
        "directories (colon-separated, as git's GIT_CEILING_DIRECTORIES) the search for a \
         project's .sticky/ never enters; the search also stops at the home directory and never \
         enters a directory owned by another user",
    ),
    (
        "STICKY_CONFIG",
        "the configuration file, instead of sticky/config.toml in the user's configuration \
         directory",
    ),
    (
        "STICKY_<AGENT>_BIN",
        "the program of an agent (STICKY_CLAUDE_BIN; non-alphanumeric characters of the name \
         become _), before the configuration's bin and before PATH",
    ),
    (
        "STICKY_ACTIVE",
        "set to 1 for the agent, so a sticky run by the agent can tell it runs inside one",
    ),
    (
        "PAGER",
        "the pager of long listings (log, sessions, threads) when stdout is a terminal; \
         default less -FRX; PAGER=cat turns paging off",
    ),
    ("NO_COLOR", "when set, sticky prints no colour"),
];

/// Sticky per-project sessions for coding-agent CLIs.
///
/// sticky runs an agent CLI (Claude Code by default) on a pseudo-terminal, keeps the agent's
/// session ID in `.sticky/sticky.db` in the project, and resumes exactly that session on every
/// call. Only `sticky new`, a different `--model` or a different `--agent` starts a fresh one.
///
/// With a PROMPT, sticky runs one headless turn and prints the agent's answer on stdout. Without
/// one, on a terminal, it opens the agent's own interactive UI on the same session. Input piped
/// on stdin is added to the prompt as context (`git diff | sticky "review this"`).
#[derive(Debug, Parser)]
#[command(
    name = "sticky",
    version,
    after_long_help = EXIT_CODES,
    override_usage = "sticky [OPTIONS] [PROMPT]... [-- <AGENT_ARGS>...]\n       sticky [OPTIONS] <COMMAND>",
    max_term_width = 100
)]
pub struct Cli {
    /// What to do; without a command, run one turn in this project's sticky session.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Options of the turn (used when no command is given).
    #[command(flatten)]
    pub turn: TurnArgs,

    /// Options that apply to every command.
    #[command(flatten)]
    pub global: GlobalArgs,

    /// Where the agent, model and thread came from (filled by [`Cli::try_parse_args`]).
    #[arg(skip)]
    pub origins: Origins,
}

impl Cli {
    /// Parses `args` (the program name first) like [`Parser::try_parse_from`], and also records
    /// whether the agent, model and thread came from a flag, the environment or the default.
    pub fn try_parse_args<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let mut command = Self::command();
        let matches = command.try_get_matches_from_mut(args)?;
        if let Some(name) = matches.subcommand_name() {
            // Options of the turn given before a command would be dropped silently (`sticky -m
            // M new` would not change the model); options that apply to every command are fine
            // there (`sticky -t review status`).
            let misplaced = ["agent", "model", "wait", "no_wait", "prompt", "agent_args"]
                .into_iter()
                .find(|id| Origin::of(&matches, id) == Origin::Flag);
            if let Some(id) = misplaced {
                let what = match id {
                    "agent" => "--agent",
                    "model" => "--model",
                    "wait" => "--wait",
                    "no_wait" => "--no-wait",
                    "prompt" => "a prompt",
                    _ => "agent arguments after --",
                };
                return Err(command.error(
                    ErrorKind::ArgumentConflict,
                    format!("{what} cannot come before the command `{name}`; give it after"),
                ));
            }
        }
        let mut cli = Self::from_arg_matches(&matches).map_err(|e| e.format(&mut command))?;
        // Global options are propagated to the subcommand's matches, so the innermost matches
        // know every option the command line gave.
        let leaf = matches.subcommand().map_or(&matches, |(_, sub)| sub);
        cli.origins = Origins {
            agent: Origin::of(leaf, "agent"),
            model: Origin::of(leaf, "model"),
            thread: Origin::of(leaf, "thread"),
        };
        Ok(cli)
    }
}

/// Where a setting given on the command line or in the environment came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    /// A flag on the command line.
    Flag,
    /// The environment variable of the flag.
    Environment,
    /// Neither: the built-in default (or the configuration file, where it has the setting).
    #[default]
    Default,
}

impl Origin {
    /// The origin of argument `id` in `matches` (an argument the command does not have is
    /// [`Origin::Default`]).
    fn of(matches: &ArgMatches, id: &str) -> Self {
        // `value_source` panics (in debug builds) on an id the command does not define.
        if !matches.ids().any(|known| known.as_str() == id) {
            return Self::Default;
        }
        match matches.value_source(id) {
            Some(ValueSource::CommandLine) => Self::Flag,
            Some(ValueSource::EnvVariable) => Self::Environment,
            _ => Self::Default,
        }
    }
}

/// The origins of the settings that have both a flag and an environment variable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Origins {
    /// `--agent` / `STICKY_AGENT`.
    pub agent: Origin,
    /// `--model` / `STICKY_MODEL`.
    pub model: Origin,
    /// `--thread` / `STICKY_THREAD`.
    pub thread: Origin,
}

/// Options every command understands.
#[derive(Debug, Args, Clone, Default)]
pub struct GlobalArgs {
    /// Run as if sticky was started in DIR.
    #[arg(short = 'C', value_name = "DIR", global = true, value_hint = ValueHint::DirPath)]
    pub directory: Option<PathBuf>,

    /// The conversation (thread) of the project to use; created on first use.
    #[arg(
        short = 't',
        long,
        env = "STICKY_THREAD",
        global = true,
        value_name = "NAME",
        default_value = "main"
    )]
    pub thread: String,

    /// Print one JSON object on stdout instead of text.
    #[arg(long, global = true)]
    pub json: bool,

    /// Print nothing on stderr but errors (no progress).
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

/// Options of a turn: the prompt, the agent, the model and the agent's own arguments.
#[derive(Debug, Args, Clone, Default)]
pub struct TurnArgs {
    /// The prompt; words are joined with spaces. Without one, on a terminal, the agent's own
    /// interactive UI opens on the sticky session.
    #[arg(value_name = "PROMPT")]
    pub prompt: Vec<OsString>,

    /// The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in
    /// the configuration; a different agent than the session's starts a new session.
    #[arg(short, long, env = "STICKY_AGENT", value_name = "NAME")]
    pub agent: Option<String>,

    /// The model for the session; a different model than the session's starts a new session.
    #[arg(short, long, env = "STICKY_MODEL", value_name = "MODEL")]
    pub model: Option<String>,

    /// Wait at most SECONDS for another turn on this conversation to end (exit 75 when it
    /// does not).
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub wait: u64,

    /// Fail at once (exit 75) when another turn is running on this conversation, or another
    /// program holds the database's lock.
    #[arg(long, conflicts_with = "wait")]
    pub no_wait: bool,

    /// Arguments passed to the agent unchanged, after `--` (e.g. permission flags in CI).
    #[arg(last = true, value_name = "AGENT_ARGS")]
    pub agent_args: Vec<OsString>,
}

/// The agent and model a report is about, chosen as a turn chooses them.
#[derive(Debug, Args, Clone, Default)]
pub struct SelectArgs {
    /// Report as if the turn was run with `--agent NAME`.
    #[arg(short, long, env = "STICKY_AGENT", value_name = "NAME")]
    pub agent: Option<String>,

    /// Report as if the turn was run with `--model MODEL`.
    #[arg(short, long, env = "STICKY_MODEL", value_name = "MODEL")]
    pub model: Option<String>,
}

/// sticky's commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start a fresh session for this conversation, and run its first turn if a prompt is given.
    ///
    /// The old session stays on record, linked to the new one with the reason `new`.
    New(TurnArgs),

    /// Show the project, the conversation, its session and the last turn.
    Status,

    /// List the turns of this conversation across all its sessions.
    ///
    /// Each session is shown with the one it replaced and why (its lineage), then its turns,
    /// oldest first. Paged on a terminal (see PAGER).
    Log,

    /// List the sessions of this conversation, with their lineage.
    ///
    /// One line per agent session, oldest first: sticky's id, the agent, the model, the agent's
    /// own session ID, when it was created, the session it replaced and why, when it ended, and
    /// how many turns ran on it. Paged on a terminal (see PAGER).
    Sessions,

    /// List the conversations (threads) of this project.
    ///
    /// One line per thread: its name, its live session (agent, model, short ID), how many turns
    /// it has and when it was last active. `*` marks the thread in use (`-t NAME`). Paged on a
    /// terminal (see PAGER).
    Threads,

    /// Make the current directory (or `-C DIR`) a sticky project of its own.
    Init,

    /// List the agents sticky knows: whether each is installed, its path and its version.
    Agents,

    /// Show the effective settings and where each came from.
    ///
    /// For the agent, model, thread, project directory and database: the value and whether a
    /// flag, the environment, the configuration file or the default chose it (flags win over
    /// the environment, the environment over the configuration file, the file over the
    /// defaults). For each agent: its program (STICKY_<AGENT>_BIN, else the configuration's
    /// `bin`, else PATH), its extra arguments and its environment. An invalid configuration file
    /// is an error naming the line and the key.
    Config(SelectArgs),

    /// Explain what the next turn would use and why, and what stands in its way.
    ///
    /// Shows the project directory and why it was chosen, the database, the thread, the session
    /// and what the next turn would do with it (resume, start, rotate), the agent's program and
    /// version, and whether the agent still has the session's transcript. Exits 0 when the next
    /// turn can run; otherwise with the code that turn would fail with (72: agent not found,
    /// 73: session lost).
    Doctor(SelectArgs),

    /// Print a one-line status for a shell prompt: agent, short session ID, last turn's status.
    ///
    /// Fast enough for every prompt: it reads the database and nothing else (no agent is looked
    /// up or run). Prints nothing when the project has no sticky state yet.
    Prompt,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_args(std::iter::once("sticky").chain(args.iter().copied()))
    }

    #[test]
    fn options_of_every_command_may_come_before_it() {
        let cli = parse(&["-t", "review", "--json", "status"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Status)), "{cli:?}");
        assert_eq!(
            (cli.global.thread.as_str(), cli.global.json),
            ("review", true)
        );
        assert_eq!(cli.origins.thread, Origin::Flag);
        let cli = parse(&["sessions", "-t", "review"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Sessions)), "{cli:?}");
        assert_eq!(cli.origins.thread, Origin::Flag);
    }

    #[test]
    fn a_prompt_that_contains_a_command_name_is_a_prompt() {
        let cli = parse(&["fix", "the", "status"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.turn.prompt, ["fix", "the", "status"]);
        let cli = parse(&["-a", "claude", "hello", "--", "status"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.turn.agent_args, ["status"]);
        assert_eq!(cli.origins.agent, Origin::Flag);
    }

    #[test]
    fn options_of_a_turn_before_a_command_are_refused_not_dropped() {
        for args in [
            &["-m", "opus", "new", "hi"][..],
            &["-a", "claude", "status"],
        ] {
            let error = parse(args).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::ArgumentConflict, "{args:?}");
            assert!(error.to_string().contains("give it after"), "{error}");
        }
        let cli = parse(&["new", "-m", "opus", "hi"]).unwrap();
        let Some(Command::New(args)) = cli.command else {
            panic!("{cli:?}")
        };
        assert_eq!(args.model.as_deref(), Some("opus"));
        assert_eq!(cli.origins.model, Origin::Flag);
    }

    #[test]
    fn origins_default_when_nothing_was_given() {
        let cli = parse(&["config"]).unwrap();
        assert_eq!(cli.origins, Origins::default());
    }
}
