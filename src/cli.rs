//! The command line as clap types, and the checks only the raw command line allows: where a
//! turn option given before a command goes, where `-p TEXT` sits among the prompt words, and a
//! one-word prompt that is a misspelt command.
//!
//! Doc comments here are the `--help` text and the man pages, so they are written for users.
//! Nothing in this module opens the database or touches the terminal: turning these raw values
//! into a validated plan is the job of `cmd`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{
    ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum, ValueHint,
};

use crate::config::{CarryKind, StdinMode};

/// The exit-code contract, printed under `--help` and in the man page.
pub const EXIT_CODES: &str = "\
Exit codes:
  0        the turn succeeded
  1-125    the agent's own exit code, passed through (but see 76)
  128+N    the agent was killed by signal N (130 for Ctrl-C)
  2        usage error: bad option or argument (a bundle sticky cannot import, too)
  70       internal error in sticky
  71       store error: the project database cannot be opened, read or written, or is not yours
  72       agent not found or not executable
  73       session lost: the agent cannot resume the stored session, or it is another directory's
  74       amnesia detected: the agent answered from a different session than the one resumed
  75       busy: another turn holds this conversation and waiting gave up
  76       the agent exited with a code sticky reserves (2, 70-76); log and --json show it";

/// The EXAMPLES of the man pages: per page (`sticky`, or a command's name), each command line
/// with what it does. Every one is run against the fake agents by the integration tests
/// (`tests/it/documented.rs`), so they are written to run as they stand.
pub const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "sticky",
        &[
            (
                "sticky \"why does the build fail?\"",
                "one headless turn on the project's session; the answer goes to stdout",
            ),
            (
                "sticky \"apply the fix\" -- --permission-mode acceptEdits",
                "the prompt comes first; what follows -- goes to the agent unchanged",
            ),
            (
                "sticky -p \"-v prints nothing; why?\"",
                "a prompt that starts with -",
            ),
            (
                "git diff | sticky \"review this\"",
                "piped input is added to the prompt as context",
            ),
            (
                "sticky -t review \"look at the API\"",
                "a turn on another conversation of the project",
            ),
            (
                "sticky -t @branch \"plan the login form\"",
                "a turn on the current git branch's conversation",
            ),
            (
                "sticky --json \"summarise the diff\" | jq -r .answer",
                "one JSON object on stdout, for scripts",
            ),
            (
                "sticky -a codex --carry \"what did we decide?\"",
                "go on with another agent, whose new session starts with a recap of this one",
            ),
        ],
    ),
    (
        "fork",
        &[
            (
                "sticky fork idea \"try it with a trie instead\"",
                "thread idea goes on from this conversation's history; main never sees its turns",
            ),
            (
                "sticky -t idea2 --fork \"or with a hash map\"",
                "the same in one step, from thread main",
            ),
        ],
    ),
    (
        "new",
        &[
            ("sticky new", "start a fresh session; the next turn runs it"),
            (
                "sticky new \"start on the release notes\"",
                "start a fresh session with this first prompt",
            ),
            (
                "echo \"start on the changelog\" | sticky new",
                "piped input is the first prompt of the new session",
            ),
            (
                "sticky -a codex new \"port the parser\"",
                "a fresh session with another agent",
            ),
            (
                "sticky new --carry \"go on from here\"",
                "a fresh session that starts with a recap of the old one",
            ),
        ],
    ),
    (
        "status",
        &[(
            "sticky status",
            "the project, thread, session and last turn",
        )],
    ),
    (
        "log",
        &[
            ("sticky log | head", "the first turns of the conversation"),
            (
                "sticky log -n 5 --answers",
                "the last five turns, with their answers",
            ),
        ],
    ),
    (
        "sessions",
        &[("sticky sessions --json", "the sessions, as JSON")],
    ),
    (
        "threads",
        &[
            ("sticky threads", "the conversations of the project"),
            (
                "sticky threads --prune",
                "forget the threads of deleted and merged branches, after asking",
            ),
        ],
    ),
    (
        "init",
        &[(
            "sticky init",
            "make the current directory a project of its own",
        )],
    ),
    (
        "agents",
        &[("sticky agents", "the agents, their programs and versions")],
    ),
    (
        "config",
        &[("sticky config", "each setting and where it came from")],
    ),
    (
        "doctor",
        &[
            (
                "sticky doctor",
                "what the next turn would use, and what stands in its way",
            ),
            ("sticky doctor -a codex", "the same, for a turn with Codex"),
        ],
    ),
    (
        "prompt",
        &[("sticky prompt", "one line for a shell prompt")],
    ),
    (
        "export",
        &[
            (
                "sticky export -o conversation.sticky",
                "the conversation and its session's files in one file",
            ),
            (
                "sticky export | ssh host sticky import --as from-laptop -",
                "through a pipe, to another machine (or HOME: one agent session runs in one \
                 project of a HOME; the other way, ssh host sticky export | sticky import -)",
            ),
            (
                "sticky export --format markdown -o review.md",
                "the conversation as a document to read: prompts, answers, models, costs and \
                 rotations, secrets redacted",
            ),
        ],
    ),
    (
        "import",
        &[
            (
                "sticky import conversation.sticky",
                "add it here; the next turn resumes the same session with its history",
            ),
            (
                "sticky import --as review conversation.sticky",
                "add it under another thread name",
            ),
        ],
    ),
    (
        "relocate",
        &[(
            "sticky relocate",
            "go on with the conversations after the project directory moved",
        )],
    ),
    (
        "forget",
        &[(
            "sticky forget -t scratch --yes",
            "delete the conversation `scratch`, its turns and its vault copies, without asking",
        )],
    ),
    (
        "show",
        &[
            ("sticky show", "the last turn's answer, again"),
            (
                "sticky show --json",
                "the last turn and its answer, as JSON",
            ),
        ],
    ),
    (
        "usage",
        &[
            (
                "sticky usage",
                "tokens and cost of this project, day by day",
            ),
            (
                "sticky usage --by model --since 7d",
                "the last seven days, by model",
            ),
            (
                "sticky usage --all --by month --json",
                "every project you ran sticky in, month by month, as JSON",
            ),
        ],
    ),
    (
        "search",
        &[
            (
                "sticky search migration",
                "the turns of this project that mention a migration",
            ),
            (
                "sticky search --all --since 30d \"rate limit\"",
                "the last month's turns of every project that hold both words",
            ),
        ],
    ),
    (
        "trust",
        &[(
            "sticky trust",
            "continue here a state you copied or restored yourself (a CI cache, a backup)",
        )],
    ),
];

/// The environment variables sticky reads, for the man pages (name, meaning).
pub const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "STICKY_AGENT",
        "the agent to use, as --agent does (a flag wins over it); a session it rotates is named \
         on stderr",
    ),
    (
        "STICKY_MODEL",
        "the model to use, as --model does (a flag wins over it); a session it rotates is named \
         on stderr",
    ),
    (
        "STICKY_THREAD",
        "the conversation to use, as --thread does (a flag wins over it); @branch follows the \
         git branch, @pr the pull request in GitHub Actions",
    ),
    (
        "STICKY_DB",
        "the database file, instead of .sticky/sticky.db in the project directory \
         (read-only checkouts, CI caches); a relative path is taken from the project directory",
    ),
    (
        "STICKY_CEILING_DIRECTORIES",
        "directories (colon-separated, as git's GIT_CEILING_DIRECTORIES) the search for a \
         project's .sticky/ never enters from below (their own serves turns run there); nor \
         does it enter the home directory, /, or a directory owned by another user",
    ),
    (
        "STICKY_CONFIG",
        "the configuration file, instead of sticky/config.toml in the user's configuration \
         directory; an absolute path to a file that must exist (exit 2 otherwise)",
    ),
    (
        "STICKY_STDIN",
        "what a turn does with stdin that is not a terminal, as --stdin does: auto, wait or \
         skip (a flag wins over it)",
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
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        Self::parse_turn(&args).unwrap_or_else(|| Self::parse_whole(&args))
    }

    /// The command line parsed with the whole definition, every command's options included.
    fn parse_whole(args: &[OsString]) -> Result<Self, clap::Error> {
        let mut command = Self::command();
        let matches = command.try_get_matches_from_mut(args).map_err(retip)?;
        Self::from_matches(&matches, &mut command)
    }

    /// A turn, the common case, parsed with [`turn_command`]: the top level's options without
    /// building every command's (a third of clap's work and allocations at every start).
    /// `None` when the command line names a command, asks for help or has an error to report:
    /// the whole definition parses those, so their text has one source. `--version` is the
    /// top level's own.
    fn parse_turn(args: &[OsString]) -> Option<Result<Self, clap::Error>> {
        let mut command = turn_command();
        match command.try_get_matches_from_mut(args) {
            Ok(matches) if matches.subcommand().is_none() => {
                Self::from_matches(&matches, &mut command).ok().map(Ok)
            }
            Err(error) if error.kind() == ErrorKind::DisplayVersion => Some(Err(error)),
            _ => None,
        }
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
        let model = match &mut cli.command {
            Some(Command::New(args)) => &mut args.model,
            Some(Command::Config(select) | Command::Doctor(select)) => &mut select.model,
            None => &mut cli.turn.model,
            // The other commands use no model.
            Some(_) => return Ok(cli),
        };
        check_model(model, cli.origins.model, command)?;
        Ok(cli)
    }

    /// Moves the turn option `id`, given before the command, into the command's own
    /// arguments unless the command gave it too (the later one wins, as for any repeated
    /// option); `false` when the command has no such option.
    fn take_turn_option(&mut self, id: &str, leaf: &ArgMatches) -> bool {
        let top = &mut self.turn;
        let given_after = Origin::of(leaf, id) == Origin::Flag;
        match (&mut self.command, id) {
            (Some(Command::New(args)), _) => {
                match id {
                    "agent" if !given_after => args.agent = top.agent.take(),
                    "model" if !given_after => args.model = top.model.take(),
                    "wait" if !given_after && !args.no_wait => args.wait = top.wait,
                    "no_wait" if !given_after && Origin::of(leaf, "wait") != Origin::Flag => {
                        args.no_wait = top.no_wait;
                    }
                    "carry" if !given_after && !args.no_carry => args.carry = top.carry,
                    "carry_max" if !given_after => args.carry_max = top.carry_max,
                    "stdin" if !given_after => args.stdin = top.stdin,
                    "no_carry" if !given_after && args.carry.is_none() => {
                        args.no_carry = top.no_carry;
                    }
                    "prompt_text" => {
                        // `sticky -p TEXT new WORDS`: the words follow the text.
                        let mut words = std::mem::take(&mut top.prompt);
                        words.append(&mut args.prompt);
                        args.prompt = words;
                    }
                    _ => {}
                }
                true
            }
            (Some(Command::Config(select) | Command::Doctor(select)), "agent" | "model") => {
                if !given_after {
                    if id == "agent" {
                        select.agent = top.agent.take();
                    } else {
                        select.model = top.model.take();
                    }
                }
                true
            }
            _ => false,
        }
    }
}

/// The options of a turn that may come before a command, with the flag that names them.
const TURN_OPTIONS: &[(&str, &str)] = &[
    ("agent", "--agent"),
    ("model", "--model"),
    ("wait", "--wait"),
    ("no_wait", "--no-wait"),
    ("prompt_text", "--prompt"),
    ("carry", "--carry"),
    ("carry_max", "--carry-max"),
    ("no_carry", "--no-carry"),
    ("stdin", "--stdin"),
];

/// Every command's name (a test holds the list to the definition): the turn's parse knows
/// them, so a command line that names one is parsed with the whole definition, and a one-word
/// prompt a letter or two away from one is refused (see [`refuse_misspelt_command`]).
const COMMANDS: &[&str] = &[
    "new", "fork", "status", "log", "sessions", "threads", "init", "agents", "config", "doctor",
    "prompt", "export", "import", "relocate", "forget", "show", "trust", "usage", "search",
];

/// The top level of the command line as [`Cli::command`] defines it, with each command only
/// a name: what parsing a turn needs (see [`Cli::parse_turn`]); never used for help or errors.
fn turn_command() -> clap::Command {
    let top = clap::Command::new("sticky").version(env!("CARGO_PKG_VERSION"));
    // Global options are copied into each command when clap builds the command line; the
    // names need none of them.
    let top =
        GlobalArgs::augment_args(TurnArgs::augment_args(top)).mut_args(|arg| arg.global(false));
    COMMANDS
        .iter()
        .fold(top, |top, name| top.subcommand(clap::Command::new(*name)))
}

/// `sticky statsu`: a one-word prompt a letter or two away from a command's name is most
/// likely a misspelt command, and a turn costs money; it is refused with the way to send it
/// anyway (`-p`). Longer prompts (`sticky fix the status`) are prompts. Every command counts,
/// `forget` too: `sticky forgt` is refused, not sent (nor run: the error only names the
/// command), and so is a word such as `forgot` or `format`, which says too little to be worth a
/// paid turn by mistake, with `-p` to send it all the same.
fn refuse_misspelt_command(
    turn: &TurnArgs,
    command: &mut clap::Command,
) -> Result<(), clap::Error> {
    let [word] = turn.prompt.as_slice() else {
        return Ok(());
    };
    if turn.prompt_text.is_some() {
        return Ok(());
    }
    let Some(word) = word.to_str() else {
        return Ok(());
    };
    // Commands are lowercase: `sticky PROMPT` or `sticky Status?` are prompts.
    if word.len() < 3 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return Ok(());
    }
    let allowed = if word.len() <= 4 { 1 } else { 2 };
    // The nearest command (`forgt` is `forget`, not `fork`).
    let near = COMMANDS
        .iter()
        .map(|name| (edit_distance(word, name), name))
        .filter(|(distance, _)| *distance <= allowed)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name);
    match near {
        Some(name) => Err(command.error(
            ErrorKind::InvalidSubcommand,
            format!(
                "did you mean `sticky {name}`? to send {word:?} as a prompt use `sticky -p {word}`"
            ),
        )),
        None => Ok(()),
    }
}

/// The optimal-string-alignment distance of `a` and `b`: insertions, deletions,
/// substitutions and swaps of two neighbours each count one (`statsu` is one from `status`).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut rows = vec![vec![0_usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
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

/// The default bound of a carried recap (`--carry-max`): 16 KiB.
pub const DEFAULT_CARRY_MAX: usize = 16 * 1024;

/// Options of a turn: the prompt, the agent, the model and the agent's own arguments.
#[derive(Debug, Args, Clone, Default)]
pub struct TurnArgs {
    /// The prompt; words are joined with spaces. Without one, on a terminal, the agent's own
    /// interactive UI opens on the sticky session. It comes before `--`: what follows `--`
    /// goes to the agent.
    #[arg(value_name = "PROMPT")]
    pub prompt: Vec<OsString>,

    /// The prompt as one value, also one that starts with `-` (`-p "-v is broken"`); joined
    /// with any prompt words in command-line order.
    #[arg(
        short = 'p',
        long = "prompt",
        value_name = "TEXT",
        allow_hyphen_values = true
    )]
    pub prompt_text: Option<OsString>,

    /// The agent CLI to run: claude, codex, gemini, qwen, opencode, copilot, or one defined in
    /// the configuration; a different agent than the session's starts a new session.
    #[arg(short, long, env = "STICKY_AGENT", value_name = "NAME")]
    pub agent: Option<String>,

    /// The model for the session; a different model than the session's starts a new session.
    #[arg(short, long, env = "STICKY_MODEL", value_name = "MODEL")]
    pub model: Option<String>,

    /// Wait at most SECONDS for another turn on this conversation to end (exit 75 when it
    /// does not).
    #[arg(
        long,
        allow_negative_numbers = true,
        default_value_t = 600,
        value_name = "SECONDS",
        value_parser = seconds
    )]
    pub wait: u64,

    /// Fail at once (exit 75) when another turn is running on this conversation, or another
    /// program holds the database's lock.
    #[arg(long, conflicts_with = "wait")]
    pub no_wait: bool,

    /// When this turn starts a new session (`sticky new`, another --model or --agent), put a
    /// recap of the old session before the prompt, so the new one knows what was done. KIND
    /// `recap` (the default) is sticky's own record: the old session's prompts and answers,
    /// newest first, naming its agent, model and session ID. `summary` first asks the old
    /// session for a handoff summary (one extra turn on it, shown in `log`) and carries that,
    /// falling back to `recap` when that turn fails. The configuration's `carry_on_change`
    /// makes this the default for a change of model or agent.
    #[arg(
        long,
        value_name = "KIND",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "recap",
        value_enum
    )]
    pub carry: Option<CarryKind>,

    /// The most bytes the carried recap may take (at least 512); older turns are left out, then
    /// cut, to fit.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_CARRY_MAX)]
    pub carry_max: usize,

    /// Carry no recap, even where the configuration's `carry_on_change` would.
    #[arg(long, conflicts_with = "carry")]
    pub no_carry: bool,

    /// Make the thread named by -t a fork of the live session of the thread a turn without -t
    /// uses (`STICKY_THREAD`, else the configuration's `thread`, else `main`) before this turn,
    /// as `sticky fork NAME PROMPT` does: -t NAME --fork PROMPT.
    #[arg(long)]
    pub fork: bool,

    /// What a turn does with stdin when it is not a terminal (default: `STICKY_STDIN`, else the
    /// configuration's `stdin`, else auto).
    ///
    /// With prompt words, piped input is their context. `auto` waits however long for a pipe
    /// this command line feeds (`cmd | sticky PROMPT`, `timeout` on either side included: a
    /// writer in sticky's session, not its parent, which sticky can tell on Linux), and gives any other pipe 3 seconds to start before going on
    /// without it, with a note (a runner's pipe nobody writes or closes). `wait` reads stdin to
    /// its end however long that takes; `skip` never reads it. Without prompt words stdin is the
    /// prompt, read to its end unless `skip`. More than 32 MiB on stdin is refused (exit 2).
    #[arg(long, value_name = "WHEN", value_enum)]
    pub stdin: Option<StdinMode>,

    /// Arguments passed to the agent unchanged, after `--` (e.g. permission flags in CI).
    #[arg(last = true, value_name = "AGENT_ARGS")]
    pub agent_args: Vec<OsString>,
}

/// `sticky fork NAME [PROMPT]`: the new thread's name, then a turn's options.
#[derive(Debug, Args, Clone)]
pub struct ForkArgs {
    /// The new thread; a name in use is refused.
    #[arg(value_name = "NAME")]
    pub name: String,

    /// The fork's first turn, if a prompt is given.
    #[command(flatten)]
    pub turn: TurnArgs,
}

/// The value of `--wait`: a whole number of seconds. A negative one is taken as a value
/// (`allow_negative_numbers`), so `--wait -1` is refused for what it is rather than read as an
/// unknown option.
fn seconds(value: &str) -> Result<u64, String> {
    value.parse().map_err(|_| {
        "--wait takes a whole number of seconds, 0 or more (`--wait 30`); --no-wait fails at \
         once instead of waiting"
            .to_owned()
    })
}

impl TurnArgs {
    /// Puts the `--prompt` value among the prompt words where the command line gave it
    /// (`sticky fix -p "-v output"` is "fix -v output").
    fn place_prompt_option(&mut self, matches: &ArgMatches) {
        let Some(text) = self.prompt_text.clone() else {
            return;
        };
        let at = matches.index_of("prompt_text").unwrap_or(0);
        let before = matches
            .indices_of("prompt")
            .map_or(0, |indices| indices.filter(|index| *index < at).count());
        self.prompt.insert(before, text);
    }
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
    /// Start a fresh session for this conversation, and run its first turn if a prompt is given
    /// (as words, with -p, or piped on stdin).
    ///
    /// The old session stays on record, linked to the new one with the reason `new`.
    #[command(mut_arg("fork", |arg| arg.hide(true)))]
    New(TurnArgs),

    /// Make thread NAME a fork of this conversation's live session, and run its first turn if
    /// a prompt is given (as words or with -p).
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
    Fork(ForkArgs),

    /// Show the project, the conversation, its session and the last turn.
    Status,

    /// List the turns of this conversation across all its sessions.
    ///
    /// Each session is shown with the one it replaced and why (its lineage, with the size of a
    /// recap carried into it), then its turns, oldest first, with their tokens and cost. Paged
    /// on a terminal (see PAGER).
    Log(LogArgs),

    /// List the sessions of this conversation, with their lineage.
    ///
    /// One line per agent session, oldest first: sticky's id, the agent, the model, the agent's
    /// own session ID, when it was created, the session it replaced and why, when it ended, and
    /// how many turns ran on it. Paged on a terminal (see PAGER).
    Sessions,

    /// List the conversations (threads) of this project.
    ///
    /// One line per thread: its name, its live session (agent, model, short ID), how many turns
    /// it has and when it was last active. `*` marks the thread in use (`-t NAME`). A thread
    /// named after a git branch (`-t @branch`, `-t @pr`, the configuration's `thread =
    /// "branch"`) shows the branch, and whether it was deleted or merged into the default
    /// branch. Paged on a terminal (see PAGER).
    Threads(ThreadsArgs),

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
    Export(ExportArgs),

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
    Import(ImportArgs),

    /// Carry the conversations forward after the project directory moved or was renamed.
    ///
    /// A turn in a moved project fails (exit 73) because its session belongs to the old
    /// directory, where agents keep it. This moves each such session's files to where the agent
    /// looks for this directory, rewriting what names the old one, and records the session
    /// here (only -t NAME's when given). Refused when the old directory still exists: a copy
    /// of a project gets a session of its own with `sticky new --carry` instead (the original's
    /// session carried over by `export` and `import` would be resumed from both directories).
    Relocate,

    /// Delete this conversation (or `-t THREAD`) for good: its sessions, its turns and the
    /// copies of its sessions' files in sticky's vault.
    ///
    /// For a conversation that must not be kept. Asks first when stdin is a terminal; `--yes`
    /// confirms without asking, and is needed when stdin is not a terminal. The agent's own files
    /// of those sessions stay where the agent keeps them.
    Forget(ForgetArgs),
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
    Show(ShowArgs),

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
    Trust,

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
    Usage(UsageArgs),

    /// Find the turns whose prompt or kept answer holds every word of TEXT.
    ///
    /// Over every conversation of this project (`-t NAME`: that one), or with --all every
    /// project you ran sticky in (see `sticky usage`). Words match whole, in any order, case and
    /// accents ignored; a word ending in `*` matches every word it begins (`migrat*`). Each turn
    /// found is shown with its thread, its number (for `sticky show`), when it started, its
    /// agent, and a few words around the match, escaped as `log` shows stored text, the match
    /// in bold on a terminal (between `**` otherwise). The newest first.
    Search(SearchArgs),
}

/// Where `sticky export` writes the bundle.
#[derive(Debug, Args, Clone, Default)]
pub struct ExportArgs {
    /// Write the bundle to FILE (`-` for stdout, the default when stdout is not a terminal).
    /// FILE may be a new file, an empty one or an earlier bundle; never a directory nor a
    /// path in sticky's own state (`.sticky/`, the database and its companions).
    #[arg(short, long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub output: Option<PathBuf>,

    /// Overwrite FILE even when it is not a sticky bundle (or is a link, which is replaced).
    #[arg(long)]
    pub force: bool,

    /// What to write: `bundle` (for `sticky import`), `markdown` (a document a reviewer reads:
    /// each turn's prompt, answer, agent, model, time and cost, and the rotations and carries
    /// between sessions) or `json` (the same, as one JSON document). Markdown and JSON need no
    /// agent files, go to a terminal too, and have secrets replaced by `[redacted]`.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = ExportFormat::Bundle)]
    pub format: ExportFormat,

    /// Keep what looks like a secret (API keys, tokens, passwords, the values of environment
    /// variables named like secrets) in a markdown or JSON export.
    #[arg(long)]
    pub no_redact: bool,
}

/// What `sticky export` writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// The conversation and its agent session's files, for `sticky import`.
    #[default]
    Bundle,
    /// A document to read.
    Markdown,
    /// The document as JSON.
    Json,
}

impl ExportFormat {
    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bundle => "bundle",
            Self::Markdown => "markdown",
            Self::Json => "json",
        }
    }
}

/// What `sticky import` reads and how it names the thread.
#[derive(Debug, Args, Clone, Default)]
pub struct ImportArgs {
    /// The bundle written by `sticky export`; `-` reads it from stdin.
    #[arg(value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub file: PathBuf,

    /// Add the conversation as thread NAME instead of the name it had.
    #[arg(long = "as", value_name = "NAME", conflicts_with = "replace")]
    pub as_name: Option<String>,

    /// Replace a thread of the same name in this project: its sessions, turns and vault copies
    /// are removed (asked first when stdin is a terminal). The agent's files of the bundle's
    /// session are placed over only where they hold nothing the bundle lacks, and a session
    /// another project of this HOME resumes is never taken.
    #[arg(long)]
    pub replace: bool,

    /// Answer yes to what import asks: replacing a thread (--replace), and placing a bundle
    /// whose manifest and files add up to more than 256 MiB, or more than 8 MiB and 200 times the bundle's
    /// size (what no real session comes near; refused without --yes when there is no terminal
    /// to ask on).
    #[arg(short, long)]
    pub yes: bool,
}

/// Options of `sticky log`.
#[derive(Debug, Args, Clone, Default)]
pub struct LogArgs {
    /// Show only the last N turns.
    #[arg(short = 'n', long = "limit", value_name = "N")]
    pub limit: Option<usize>,

    /// Show only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, in
    /// UTC as `log` shows times) or a duration back from now (`90m`, `2h`, `3d`, `1w`).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Show each turn's kept answer under it.
    #[arg(long)]
    pub answers: bool,
}

/// Options of `sticky usage`.
#[derive(Debug, Args, Clone)]
pub struct UsageArgs {
    /// What each row sums: a day, week or month, a thread, an agent session, a model or an
    /// agent.
    #[arg(long, value_enum, default_value_t = Grouping::Day, value_name = "WHAT")]
    pub by: Grouping,

    /// Count only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, UTC)
    /// or a duration back from now (`90m`, `2h`, `7d`, `1w`).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Count only the turns started before WHEN (a date alone counts that day whole).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,

    /// Every project you ran sticky in, not only this one.
    #[arg(long)]
    pub all: bool,

    /// With --all: drop the projects that are gone from the list.
    #[arg(long, requires = "all")]
    pub prune: bool,
}

/// Options of `sticky search`.
#[derive(Debug, Args, Clone)]
pub struct SearchArgs {
    /// The words to find.
    #[arg(value_name = "TEXT", required = true)]
    pub text: Vec<String>,

    /// Only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, UTC) or a
    /// duration back from now (`90m`, `2h`, `7d`, `1w`).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Every project you ran sticky in, not only this one.
    #[arg(long)]
    pub all: bool,

    /// Show at most N turns, the newest.
    #[arg(short = 'n', long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
}

/// What a row of `sticky usage` sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Grouping {
    /// A day (UTC).
    Day,
    /// A week, Monday to Sunday.
    Week,
    /// A month.
    Month,
    /// A thread (of its project).
    Thread,
    /// An agent session.
    Session,
    /// A model.
    Model,
    /// An agent.
    Agent,
}

impl Grouping {
    /// The value's name, as `--by` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
            Self::Thread => "thread",
            Self::Session => "session",
            Self::Model => "model",
            Self::Agent => "agent",
        }
    }
}

/// Options of `sticky show`.
#[derive(Debug, Args, Clone, Default)]
pub struct ShowArgs {
    /// The turn (`12` or `#12`, as `log` numbers them); default: the conversation's last turn.
    #[arg(value_name = "TURN")]
    pub turn: Option<String>,
}

/// The options of `sticky threads`.
#[derive(Debug, Clone, Args, Default)]
pub struct ThreadsArgs {
    /// Forget the threads whose git branch was deleted, or merged into the default branch (and
    /// is checked out nowhere), with their sessions, turns and vault copies, as `sticky forget`
    /// does. Lists them and asks first when stdin is a terminal; `--yes` confirms without
    /// asking, and is needed when stdin is not a terminal. A thread running a turn is left.
    #[arg(long)]
    pub prune: bool,

    /// Prune without asking.
    #[arg(short, long, requires = "prune")]
    pub yes: bool,
}

/// The options of `sticky forget`.
#[derive(Debug, Clone, Args)]
pub struct ForgetArgs {
    /// Delete without asking (needed when stdin is not a terminal).
    #[arg(short, long)]
    pub yes: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let Some(Command::Doctor(select)) = cli.command else {
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
