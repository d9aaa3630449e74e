//! The command line as clap types, and the checks only the raw command line allows: where a
//! turn option given before a command goes and a model clap cannot judge. The turn's own parse
//! (its options, `-p TEXT` among the prompt words, a one-word prompt that is a misspelt command)
//! is [`turn`]'s; the tables of the help and the man pages (exit codes, examples, environment)
//! are [`help`]'s; each command's own options are its module's `Args` (`cmd::log::Args`).
//!
//! Doc comments here are the `--help` text and the man pages, so they are written for users.
//! Nothing in this module opens the database or touches the terminal: turning these raw values
//! into a validated plan is the job of `cmd`.

mod help;
mod turn;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueHint};

pub use help::{ENVIRONMENT, EXAMPLES, EXIT_CODES};
pub use turn::{DEFAULT_CARRY_MAX, ForkArgs, TurnArgs};

use crate::cmd;
use turn::{TURN_OPTIONS, refuse_misspelt_command};

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
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        Self::parse_turn(&args).unwrap_or_else(|| Self::parse_whole(&args))
    }

    /// The command line parsed with the whole definition, every command's options included.
    fn parse_whole(args: &[OsString]) -> Result<Self, clap::Error> {
        let mut command = Self::command();
        let matches = command.try_get_matches_from_mut(args).map_err(retip)?;
        Self::from_matches(&matches, &mut command)
    }

    /// The parsed command line out of `command`'s `matches`, with the checks clap cannot make.
    fn from_matches(
        matches: &ArgMatches,
        command: &mut clap::Command,
    ) -> Result<Self, clap::Error> {
        let mut cli = Self::from_arg_matches(matches).map_err(|e| e.format(command))?;
        cli.turn.place_prompt_option(matches);
        let leaf = matches.subcommand().map_or(matches, |(_, sub)| sub);
        if let Some(Command::New(args)) = &mut cli.command {
            args.place_prompt_option(leaf);
        }
        if let Some(name) = matches.subcommand_name() {
            // Options of a turn given before a command go to the command when it takes them
            // (`sticky -a codex new`, `sticky -m M doctor`), and are refused when it cannot
            // use them: never dropped silently.
            let given = TURN_OPTIONS
                .iter()
                .filter(|(id, _)| Origin::of(matches, id) == Origin::Flag);
            for (id, flag) in given {
                if !cli.take_turn_option(id, leaf) {
                    return Err(command.error(
                        ErrorKind::ArgumentConflict,
                        format!("{flag} does not apply to `sticky {name}`"),
                    ));
                }
            }
        } else {
            refuse_misspelt_command(&cli.turn, command)?;
        }
        // Global options are propagated to the subcommand's matches, so the innermost matches
        // know every option the command line gave; a turn option given before the command
        // (taken above) is a flag too.
        let origin = |id: &str| match Origin::of(matches, id) {
            Origin::Flag => Origin::Flag,
            _ => Origin::of(leaf, id),
        };
        cli.origins = Origins {
            agent: origin("agent"),
            model: origin("model"),
            thread: Origin::of(leaf, "thread"),
        };
        cli.unset_empty_variables();
        let model = match &mut cli.command {
            Some(Command::New(args)) => &mut args.model,
            Some(
                Command::Config(cmd::config::Args { select })
                | Command::Doctor(cmd::doctor::Args { select }),
            ) => &mut select.model,
            None => &mut cli.turn.model,
            // The other commands use no model.
            Some(_) => return Ok(cli),
        };
        check_model(model, cli.origins.model, command)?;
        Ok(cli)
    }
}

impl Cli {
    /// Takes an empty `STICKY_THREAD` or `STICKY_AGENT` as unset, as an empty `STICKY_MODEL` is
    /// (`check_model`): shells and CI files leave variables empty (`export
    /// STICKY_THREAD=$THREAD` with none given), which must not break the turn.
    fn unset_empty_variables(&mut self) {
        if self.origins.thread == Origin::Environment && self.global.thread.is_empty() {
            "main".clone_into(&mut self.global.thread);
            self.origins.thread = Origin::Default;
        }
        if self.origins.agent != Origin::Environment {
            return;
        }
        let agent = match &mut self.command {
            Some(
                Command::Config(cmd::config::Args { select })
                | Command::Doctor(cmd::doctor::Args { select }),
            ) => &mut select.agent,
            Some(Command::New(args)) => &mut args.agent,
            _ => &mut self.turn.agent,
        };
        if agent.as_deref() == Some("") {
            *agent = None;
            self.origins.agent = Origin::Default;
        }
    }
}

/// Replaces clap's tip for an unknown option, "to pass '--x' as a value, use '-- --x'", which
/// is wrong for sticky: after `--`, arguments go to the agent. The tip names both ways instead.
fn retip(mut error: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue};
    let Some(ContextValue::String(arg)) = error.get(ContextKind::InvalidArg).cloned() else {
        return error;
    };
    let Some(ContextValue::StyledStrs(tips)) = error.get(ContextKind::Suggested).cloned() else {
        return error;
    };
    let tips = tips
        .into_iter()
        .map(|tip| {
            if tip.to_string().contains("as a value, use '-- ") {
                format!(
                    "a prompt that starts with '-' goes after -p (sticky -p '{arg} ...'); an \
                     argument for the agent goes after the prompt and -- (sticky PROMPT -- {arg})"
                )
                .into()
            } else {
                tip
            }
        })
        .collect();
    error.insert(ContextKind::Suggested, ContextValue::StyledStrs(tips));
    error
}

/// Checks the model a turn or report would use: a blank one, one starting with `-` (the
/// agent would read it as an option of its own) or one holding a control character is a usage
/// error naming where it came from; an
/// empty `STICKY_MODEL` is taken as unset, as shells and CI files leave variables empty.
fn check_model(
    model: &mut Option<String>,
    origin: Origin,
    command: &mut clap::Command,
) -> Result<(), clap::Error> {
    let Some(value) = model.as_deref() else {
        return Ok(());
    };
    let source = match origin {
        Origin::Environment if value.is_empty() => {
            *model = None;
            return Ok(());
        }
        Origin::Environment => "STICKY_MODEL",
        _ => "--model",
    };
    let Some(problem) = model_problem(value) else {
        return Ok(());
    };
    Err(command.error(ErrorKind::ValueValidation, format!("{source} {problem}")))
}

/// What is wrong with `model` as the agent's `--model` argument, if anything: blank, starting
/// with `-` (the agent would read it as an option of its own), or holding a control character.
/// The command line and `sticky import` (a bundle's sessions) check models with this one rule.
pub fn model_problem(model: &str) -> Option<String> {
    if model.trim().is_empty() {
        Some("is empty; give a model name (e.g. `-m opus`) or leave it out".to_owned())
    } else if model.starts_with('-') {
        Some(format!(
            "{model:?} starts with `-`, which the agent would take for an option"
        ))
    } else if model.chars().any(char::is_control) {
        Some(format!(
            "{model:?} holds a control character, which no model name has"
        ))
    } else {
        None
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

    /// The conversation (thread) of the project to use; created on first use. `@branch` is
    /// the current git branch's thread (`feature/login`; on a detached HEAD, `main`, said on
    /// stderr), `@pr` the pull request's in GitHub Actions (`pr-N`, as the sticky action names
    /// it; else the branch's).
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

/// Declares [`Command`]: each command's name, its help (the doc comment) and its module's
/// `Args`, which implements [`cmd::Run`]; and from the same list the names the turn's parse
/// knows ([`COMMANDS`]) and the dispatch to each command's `Run`. Adding a command is one entry
/// here, its module and its row in docs/json.md.
macro_rules! commands {
    ($( $(#[$attr:meta])* $name:literal => $variant:ident($args:ty), )*) => {
        /// sticky's commands.
        #[derive(Debug, Subcommand)]
        pub enum Command {
            $( $(#[$attr])* #[command(name = $name)] $variant($args), )*
        }

        /// Every command's name: the turn's parse knows them, so a command line that names one
        /// is parsed with the whole definition, and a one-word prompt a letter or two away from
        /// one is refused (see [`turn::refuse_misspelt_command`]).
        pub(crate) const COMMANDS: &[&str] = &[$($name),*];

        impl Command {
            /// The command's name on the command line.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Self::$variant(_) => $name, )*
                }
            }

            /// The command as the trait every command implements.
            pub fn runner(&self) -> &dyn cmd::Run {
                match self {
                    $( Self::$variant(args) => args, )*
                }
            }
        }
    };
}

commands! {
    /// Start a fresh session for this conversation, and run its first turn if a prompt is given
    /// (as words, with -p, or piped on stdin).
    ///
    /// The old session stays on record, linked to the new one with the reason `new`.
    #[command(mut_arg("fork", |arg| arg.hide(true)))]
    "new" => New(TurnArgs),

    /// Make thread NAME a fork of this conversation's live session, and run its first turn if
    /// a prompt is given (as words, with -p, or piped on stdin).
    ///
    /// The fork's first turn has the whole history of the session it forks; from then on
    /// neither thread sees the other's turns. sticky uses the agent's own fork (Claude Code's
    /// --fork-session, Codex's `exec fork`, Qwen Code's --fork-session, opencode's --fork);
    /// Gemini CLI and Copilot CLI have none, so sticky copies the session's files under a new
    /// session ID, which they resume with its history. Where no fork can be made (an agent of
    /// the configuration, a session whose files are gone), the fork starts a new session with
    /// sticky's recap of the source (as --carry does) and says so. Without a prompt the thread
    /// is made, and the fork happens at its first turn (at once for a copy). `sessions` and
    /// `log` show where a fork came from. `sticky -t NAME --fork PROMPT` does the same in one
    /// step.
    #[command(mut_arg("fork", |arg| arg.hide(true)))]
    "fork" => Fork(ForkArgs),

    /// Show the project, the conversation, its session and the last turn.
    "status" => Status(cmd::status::Args),

    /// List the turns of this conversation across all its sessions.
    ///
    /// Each session is shown with the one it replaced and why (its lineage, with the size of a
    /// recap carried into it), then its turns, oldest first, with their tokens and cost. Paged
    /// on a terminal (see PAGER).
    "log" => Log(cmd::log::Args),

    /// List the sessions of this conversation, with their lineage.
    ///
    /// One line per agent session, oldest first: sticky's id, the agent, the model, the agent's
    /// own session ID, when it was created, the session it replaced and why, when it ended, and
    /// how many turns ran on it. Paged on a terminal (see PAGER).
    "sessions" => Sessions(cmd::sessions::Args),

    /// List the conversations (threads) of this project.
    ///
    /// One line per thread: its name, its live session (agent, model, short ID), how many turns
    /// it has and when it was last active. `*` marks the thread in use (`-t NAME`). A thread
    /// named after a git branch (`-t @branch`, `-t @pr`, the configuration's `thread =
    /// "branch"`) shows the branch, and whether it was deleted or merged into the default
    /// branch. Paged on a terminal (see PAGER).
    "threads" => Threads(cmd::threads::Args),

    /// Make the current directory (or `-C DIR`) a sticky project of its own.
    "init" => Init(cmd::init::Args),

    /// List the agents sticky knows: whether each is installed, its path and its version.
    "agents" => Agents(cmd::agents::Args),

    /// Show the effective settings and where each came from.
    ///
    /// For the agent, model, thread, project directory and database: the value and whether a
    /// flag, the environment, the configuration file or the default chose it (flags win over
    /// the environment, the environment over the configuration file, the file over the
    /// defaults). For each agent: its program (STICKY_<AGENT>_BIN, else the configuration's
    /// `bin`, else PATH), its extra arguments and its environment. An invalid configuration file
    /// is an error naming the line and the key.
    "config" => Config(cmd::config::Args),

    /// Explain what the next turn would use and why, and what stands in its way.
    ///
    /// Shows the project directory and why it was chosen, the database, the thread, the session
    /// and what the next turn would do with it (resume, start, rotate), the agent's program and
    /// version, and whether the agent still has the session's transcript. Exits 0 when the next
    /// turn can run; otherwise with the code that turn would fail with (72: agent not found,
    /// 73: session lost).
    "doctor" => Doctor(cmd::doctor::Args),

    /// Print a one-line status for a shell prompt: agent, short session ID, last turn's status.
    ///
    /// Fast enough for every prompt: it reads the database and nothing else (no agent is looked
    /// up or run). Prints nothing when the project has no sticky state yet.
    "prompt" => Prompt(cmd::prompt::Args),

    /// Write the conversation and its agent session's files to one file, for `sticky import`
    /// in another directory, HOME or machine.
    ///
    /// The bundle (zstd-compressed tar) holds a manifest (format and versions, the project's
    /// path, the thread, its sessions with their lineage, its turns with their kept answers and
    /// ledger, each file's size and SHA-256) and the live session's files as the agent keeps
    /// them; never the agent's settings
    /// or credentials. Written to -o FILE (whole, or not at all), or to stdout when -o is `-` or
    /// stdout is a pipe; never to a terminal. -o replaces an earlier bundle, but not a file that
    /// is not one (unless --force), and never writes into sticky's own state. Waits for a turn
    /// running on the conversation.
    ///
    /// With --format markdown or json, writes the conversation as a document to read instead
    /// (to stdout, a terminal included, or -o FILE): each turn's prompt, answer, agent, model,
    /// time and cost, and the rotations and carries between sessions, with secrets replaced by
    /// `[redacted]` unless --no-redact.
    "export" => Export(cmd::export::Args),

    /// Add a conversation written by `sticky export` to this project: the next turn resumes the
    /// same agent session, with its whole history.
    ///
    /// FILE (or `-` for stdin) is verified whole before anything is written: its format
    /// version, every file's size and checksum, and that it holds only the session's own files
    /// (no links, no absolute or `..` paths). The files are then placed where the agent in this
    /// HOME looks for a session run in this directory, rewriting what names the old directory,
    /// and the thread is added under its own name; a name in use is refused unless --as or
    /// --replace says otherwise. An agent session runs in one project of a HOME: one this
    /// HOME's agent already has for another directory, or whose files here hold turns the
    /// bundle lacks, is refused (exit 2), --replace or not. A bundle declaring more than the
    /// free disk space is refused before anything is written, and one whose manifest and files add up to more
    /// than 256 MiB, or more than 8 MiB and 200 times the bundle's size, is placed only with
    /// --yes (or a yes on a terminal). A bad or truncated bundle changes nothing (exit 2). `show`,
    /// `log` and `status` read the same here as where it was exported; a bundle of an older
    /// sticky imports too, what it did not record (answers, the newer ledger figures) shown as
    /// not recorded.
    "import" => Import(cmd::import::Args),

    /// Carry the conversations forward after the project directory moved or was renamed.
    ///
    /// A turn in a moved project fails (exit 73) because its session belongs to the old
    /// directory, where agents keep it. This moves each such session's files to where the agent
    /// looks for this directory, rewriting what names the old one, and records the session
    /// here (only -t NAME's when given); a session only sticky's vault keeps (the agent swept
    /// it) is put back and moved, and a fork not made yet is recorded here. Refused when the
    /// old directory still holds a sticky state of yours that goes on with the session (its
    /// .sticky/, or the `STICKY_DB` database sticky's list of projects names for it): a copy of a
    /// project gets a session of its own with `sticky new --carry` instead (the original's
    /// session carried over by `export` and `import` would be resumed from both directories).
    /// A link to this project left at the old path, or a state there that cannot be yours (no
    /// regular file, one of another user you cannot read, a link out of that directory), is no
    /// original. A state that goes on with the session but that sticky there refuses for now
    /// (others may write it, another account owns it, root owns it and you cannot read it: a
    /// backup restored with sudo, or your key did not stamp it: a lost key, a restored backup, a
    /// copy made back there) may be the original: refused too, naming the fix to make there, or,
    /// if it is a copy you do not need, moving its state away first. In a `STICKY_DB` several
    /// directories share, a thread another existing directory goes on with is passed over (a
    /// note names it), and only the sessions of the directory this project moved from are
    /// carried: when those to carry were recorded in several directories now gone (two projects
    /// moved, or a nested one), nothing changes until --from names it.
    "relocate" => Relocate(cmd::relocate::Args),

    /// Delete this conversation (or `-t THREAD`) for good: its sessions, its turns and the
    /// copies of its sessions' files in sticky's vault.
    ///
    /// For a conversation that must not be kept. Asks first when stdin is a terminal; `--yes`
    /// confirms without asking, and is needed when stdin is not a terminal. The agent's own files
    /// of those sessions stay where the agent keeps them.
    "forget" => Forget(cmd::forget::Args),
    /// Print a turn's answer again, exactly as it was printed.
    ///
    /// TURN is a turn's number as `log` shows it (`12` or `#12`); without one, the last turn of
    /// the conversation (`-t NAME`). sticky keeps every turn's answer: a headless turn's as it
    /// printed it, an interactive turn's last assistant message where the agent's transcript
    /// shows it. Answers over 4 KiB are stored deflated; at most 1 MiB of each is kept, and
    /// `show` says on stderr when an answer was cut. With --json: the turn's fields and its
    /// `answer`.
    ///
    /// On a terminal, control characters other than newlines and tabs are shown as escapes
    /// (`\e`, `\x07`), as `log --answers` shows them, so an answer (one imported from a bundle
    /// above all) cannot clear the screen, retitle the terminal or write to its clipboard;
    /// piped or redirected, the answer's bytes are written as they are.
    "show" => Show(cmd::show::Args),

    /// Adopt this project's state as yours: a `.sticky/` (or a database kept elsewhere) you
    /// copied, restored or cloned on purpose.
    ///
    /// sticky stamps each database it makes with a key of yours (`sticky/key` in your data
    /// directory) and refuses one without your stamp (exit 71): a `.sticky/` committed to a
    /// repository and cloned, a CI cache restored on a fresh runner, or a copy from another HOME
    /// would otherwise choose the conversation sticky continues and the agent it runs. This
    /// stamps the database as yours, so run it only for state you know. A `.sticky/` another user
    /// owns, that others may write, or that links out of the project stays refused. Where a
    /// conversation was recorded in another directory (a project moved to another file system,
    /// which copies its database), it names the next step: `sticky relocate` after a move,
    /// `sticky new` in a copy.
    "trust" => Trust(cmd::trust::Args),

    /// Sum the tokens and cost of the turns by day, week, month, thread, session, model or
    /// agent.
    ///
    /// Over this project's conversations, or with --all over every project you ran sticky in
    /// (sticky lists each project in your data directory, `sticky/projects`, at its first
    /// turn). Each listed project is checked as a turn there would be: one that is not yours
    /// is skipped with the reason, and one that is gone is skipped and dropped from the list
    /// with --prune. A turn imported into several threads or projects (`sticky import`) counts
    /// once. Times are days in UTC, as `log` shows them; weeks start on Monday. Figures are what
    /// the agents reported; `-` where none did.
    "usage" => Usage(cmd::usage::Args),

    /// Find the turns whose prompt or kept answer holds every word of TEXT.
    ///
    /// Over every conversation of this project (`-t NAME`: that one), or with --all every
    /// project you ran sticky in (see `sticky usage`). Words match whole, in any order, case and
    /// accents ignored; a word ending in `*` matches every word it begins (`migrat*`). Each turn
    /// found is shown with its thread, its number (for `sticky show`), when it started, its
    /// agent, and a few words around the match, escaped as `log` shows stored text, the match
    /// in bold on a terminal (between `**` otherwise). The newest first.
    "search" => Search(cmd::search::Args),
}

#[cfg(test)]
mod tests {
    use super::turn::edit_distance;
    use super::*;
    use crate::config::{CarryKind, StdinMode};

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_args(std::iter::once("sticky").chain(args.iter().copied()))
    }

    fn args(line: &[&str]) -> Vec<OsString> {
        std::iter::once("sticky")
            .chain(line.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn the_turns_parse_knows_every_command() {
        let whole: Vec<_> = Cli::command()
            .get_subcommands()
            .map(|command| command.get_name().to_owned())
            .collect();
        assert_eq!(whole, COMMANDS);
    }

    #[test]
    fn a_turn_parses_the_same_without_the_commands_definitions() {
        let turns: &[&[&str]] = &[
            &[],
            &["fix", "the", "build"],
            &["fix", "--json", "-t", "review", "it"],
            &["-a", "codex", "-m", "o3", "hello", "--", "status", "-x"],
            &["-p", "-v is broken", "why", "--wait", "5", "-q"],
            &["--carry", "--carry-max", "600", "-C", "/tmp", "go", "on"],
            &["--carry=summary", "--no-wait", "x"],
            &["--stdin", "skip", "x"],
            &["-a", "status", "fix", "words"],
            &["hello", "status"],
            &["--", "--resume"],
        ];
        for line in turns {
            let lean = Cli::parse_turn(&args(line));
            let Some(Ok(lean)) = lean else {
                panic!("{line:?} is a turn: {lean:?}");
            };
            let whole = Cli::parse_whole(&args(line)).unwrap();
            assert_eq!(format!("{lean:?}"), format!("{whole:?}"), "{line:?}");
        }
    }

    #[test]
    fn commands_help_and_errors_are_parsed_with_the_whole_definition() {
        let lines: &[&[&str]] = &[
            &["status"],
            &["-t", "review", "new", "x"],
            &["fix", "--json", "status"],
            &["help"],
            &["--help"],
            &["-h"],
            &["--bogus"],
            &["statsu"],
            &["-m", "-x", "hi"],
            &["--wait", "soon", "hi"],
        ];
        for line in lines {
            assert!(Cli::parse_turn(&args(line)).is_none(), "{line:?}");
        }
    }

    #[test]
    fn the_turns_parse_prints_the_same_version() {
        let Some(Err(lean)) = Cli::parse_turn(&args(&["--version"])) else {
            panic!("--version is not a version request");
        };
        let whole = Cli::parse_whole(&args(&["-V"])).unwrap_err();
        assert_eq!(lean.kind(), ErrorKind::DisplayVersion);
        assert_eq!(lean.to_string(), whole.to_string());
    }

    #[test]
    fn options_of_every_command_may_come_before_it() {
        let cli = parse(&["-t", "review", "--json", "status"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Status(_))), "{cli:?}");
        assert_eq!(
            (cli.global.thread.as_str(), cli.global.json),
            ("review", true)
        );
        assert_eq!(cli.origins.thread, Origin::Flag);
        let cli = parse(&["sessions", "-t", "review"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Sessions(_))), "{cli:?}");
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

    fn new_args(cli: Cli) -> TurnArgs {
        match cli.command {
            Some(Command::New(args)) => args,
            other => panic!("not `new`: {other:?}"),
        }
    }

    #[test]
    fn options_of_a_turn_before_a_command_go_to_it() {
        for args in [
            &["-m", "opus", "new", "hi"][..],
            &["new", "-m", "opus", "hi"],
            &["-m", "sonnet", "new", "-m", "opus", "hi"],
        ] {
            let cli = parse(args).unwrap();
            assert_eq!(cli.origins.model, Origin::Flag, "{args:?}");
            let turn = new_args(cli);
            assert_eq!(turn.model.as_deref(), Some("opus"), "{args:?}");
            assert_eq!(turn.prompt, ["hi"], "{args:?}");
        }
        let cli = parse(&["-a", "codex", "--no-wait", "-p", "-x first", "new", "then"]).unwrap();
        let turn = new_args(cli);
        assert_eq!(
            (turn.agent.as_deref(), turn.no_wait, turn.prompt),
            (Some("codex"), true, vec!["-x first".into(), "then".into()])
        );
        let cli = parse(&["-a", "codex", "-m", "o3", "doctor"]).unwrap();
        assert_eq!(cli.origins.agent, Origin::Flag);
        let Some(Command::Doctor(cmd::doctor::Args { select })) = cli.command else {
            panic!("{cli:?}")
        };
        assert_eq!(
            (select.agent.as_deref(), select.model.as_deref()),
            (Some("codex"), Some("o3"))
        );
    }

    #[test]
    fn options_of_a_turn_a_command_cannot_use_are_refused_not_dropped() {
        for (args, flag) in [
            (&["-a", "claude", "status"][..], "--agent"),
            (&["-m", "opus", "log"], "--model"),
            (&["-a", "codex", "show"], "--agent"),
            (&["--wait", "5", "config"], "--wait"),
            (&["-p", "hi", "threads"], "--prompt"),
        ] {
            let error = parse(args).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::ArgumentConflict, "{args:?}");
            let text = error.to_string();
            assert!(
                text.contains(flag) && text.contains("does not apply"),
                "{text}"
            );
        }
    }

    #[test]
    fn the_prompt_comes_before_the_agent_arguments_or_with_p() {
        let cli = parse(&["apply the fix", "--", "--permission-mode", "acceptEdits"]).unwrap();
        assert_eq!(cli.turn.prompt, ["apply the fix"]);
        assert_eq!(cli.turn.agent_args, ["--permission-mode", "acceptEdits"]);
        let cli = parse(&["-p", "-v is broken"]).unwrap();
        assert_eq!(cli.turn.prompt, ["-v is broken"]);
        let cli = parse(&["fix", "-p", "-v", "now", "--", "-x"]).unwrap();
        assert_eq!(cli.turn.prompt, ["fix", "-v", "now"]);
        assert_eq!(cli.turn.agent_args, ["-x"]);
        let turn = new_args(parse(&["new", "--prompt", "--start"]).unwrap());
        assert_eq!(turn.prompt, ["--start"]);
    }

    #[test]
    fn a_blank_model_or_one_like_an_option_is_a_usage_error() {
        for args in [
            &["-m", ""][..],
            &["-m", "  "],
            &["-m=--x"],
            &["doctor", "-m", ""],
            &["-m", "op\nus", "hi"],
            &["-m", "opus\u{1b}[2J"],
        ] {
            let error = parse(args).unwrap_err();
            assert_eq!(
                error.kind(),
                ErrorKind::ValueValidation,
                "{args:?}: {error}"
            );
        }
        assert!(
            parse(&["-m=--x"])
                .unwrap_err()
                .to_string()
                .contains("--model \"--x\" starts with `-`")
        );
    }

    #[test]
    fn a_one_word_prompt_near_a_command_is_refused() {
        for word in [
            "statsu", "stauts", "sesions", "lgo", "doctr", "nwe", "forgt", "froget", "forgot",
            "format",
        ] {
            let error = parse(&[word]).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::InvalidSubcommand, "{word}");
            assert!(
                error.to_string().contains(&format!("sticky -p {word}")),
                "{error}"
            );
        }
        for (word, command) in [("statsu", "status"), ("forgt", "forget")] {
            assert!(
                parse(&[word])
                    .unwrap_err()
                    .to_string()
                    .contains(&format!("`sticky {command}`")),
                "{word}"
            );
        }
        for args in [
            &["yes"][..],
            &["go"],
            &["refactor"],
            &["fix", "the", "status"],
            &["-p", "statsu"],
            &["Status?"],
            &["PROMPT"],
        ] {
            assert!(parse(args).is_ok(), "{args:?}");
        }
        assert_eq!(edit_distance("statsu", "status"), 1);
        assert_eq!(edit_distance("", "log"), 3);
    }

    #[test]
    fn stdin_says_what_a_turn_does_with_its_stdin_before_or_after_new() {
        assert_eq!(parse(&["hi"]).unwrap().turn.stdin, None);
        assert_eq!(
            parse(&["--stdin", "wait", "hi"]).unwrap().turn.stdin,
            Some(StdinMode::Wait)
        );
        for args in [
            &["--stdin", "skip", "new", "x"][..],
            &["new", "--stdin=skip"],
        ] {
            assert_eq!(
                new_args(parse(args).unwrap()).stdin,
                Some(StdinMode::Skip),
                "{args:?}"
            );
        }
        assert!(parse(&["--stdin", "later", "hi"]).is_err());
        let error = parse(&["--stdin", "skip", "status"]).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::ArgumentConflict);
    }

    #[test]
    fn a_wait_that_is_not_a_number_of_seconds_is_refused_for_its_value() {
        for value in ["-1", "soon", "1.5", "-0"] {
            let error = parse(&["--wait", value, "hi"]).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::ValueValidation, "{value}: {error}");
            let text = error.to_string();
            assert!(
                text.contains("--wait takes a whole number of seconds") && !text.contains("-p"),
                "{text}"
            );
        }
        assert_eq!(parse(&["--wait", "0", "hi"]).unwrap().turn.wait, 0);
    }

    #[test]
    fn carry_takes_its_kind_only_after_an_equals_sign() {
        let cli = parse(&["-a", "codex", "--carry", "what did we decide?"]).unwrap();
        assert_eq!(cli.turn.carry, Some(CarryKind::Recap));
        assert_eq!(cli.turn.prompt, ["what did we decide?"]);
        assert_eq!(cli.turn.carry_max, DEFAULT_CARRY_MAX);
        let turn =
            new_args(parse(&["new", "--carry=summary", "--carry-max", "900", "go"]).unwrap());
        assert_eq!(
            (turn.carry, turn.carry_max),
            (Some(CarryKind::Summary), 900)
        );
        let turn = new_args(parse(&["--carry", "new", "go"]).unwrap());
        assert_eq!(turn.carry, Some(CarryKind::Recap));
        assert!(parse(&["--carry=everything", "go"]).is_err());
        assert!(parse(&["--carry", "--no-carry", "go"]).is_err());
        let error = parse(&["--carry", "status"]).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::ArgumentConflict);
    }

    #[test]
    fn origins_default_when_nothing_was_given() {
        let cli = parse(&["config"]).unwrap();
        assert_eq!(cli.origins, Origins::default());
    }
}
