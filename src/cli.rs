//! The command line as clap types, and nothing else.
//!
//! Doc comments here are the `--help` text and the man pages, so they are written for users.
//! Nothing in this module opens the database or touches the terminal: turning these raw values
//! into a validated plan is the job of `cmd`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueHint};

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
  75       busy: another turn holds this session and waiting gave up";

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
    args_conflicts_with_subcommands = true,
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

    /// The agent CLI to run (claude); a different agent than the session's starts a new session.
    #[arg(short, long, env = "STICKY_AGENT", value_name = "NAME")]
    pub agent: Option<String>,

    /// The model for the session; a different model than the session's starts a new session.
    #[arg(short, long, env = "STICKY_MODEL", value_name = "MODEL")]
    pub model: Option<String>,

    /// Wait at most SECONDS for another turn on this conversation to end (exit 75 when it
    /// does not).
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub wait: u64,

    /// Fail at once (exit 75) when another turn is running on this conversation.
    #[arg(long, conflicts_with = "wait")]
    pub no_wait: bool,

    /// Arguments passed to the agent unchanged, after `--` (e.g. permission flags in CI).
    #[arg(last = true, value_name = "AGENT_ARGS")]
    pub agent_args: Vec<OsString>,
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
    Log,

    /// Make the current directory (or `-C DIR`) a sticky project of its own.
    Init,

    /// List the agents sticky knows: whether each is installed, its path and its version.
    Agents,
}
