//! A turn's options, and the turn's own parse: the common case parsed without every command's
//! definition, a turn option given before a command moved into it, `-p TEXT` placed among the
//! prompt words, and a one-word prompt that is a misspelt command refused.

use std::ffi::OsString;

use clap::error::ErrorKind;
use clap::{ArgMatches, Args};

use super::{COMMANDS, Cli, Command, GlobalArgs, Origin};
use crate::cmd;
use crate::config::{CarryKind, StdinMode};

impl Cli {
    /// A turn, the common case, parsed with [`turn_command`]: the top level's options without
    /// building every command's (a third of clap's work and allocations at every start).
    /// `None` when the command line names a command, asks for help or has an error to report:
    /// the whole definition parses those, so their text has one source. `--version` is the
    /// top level's own.
    pub(super) fn parse_turn(args: &[OsString]) -> Option<Result<Self, clap::Error>> {
        let mut command = turn_command();
        match command.try_get_matches_from_mut(args) {
            Ok(matches) if matches.subcommand().is_none() => {
                Self::from_matches(&matches, &mut command).ok().map(Ok)
            }
            Err(error) if error.kind() == ErrorKind::DisplayVersion => Some(Err(error)),
            _ => None,
        }
    }

    /// Moves the turn option `id`, given before the command, into the command's own
    /// arguments unless the command gave it too (the later one wins, as for any repeated
    /// option); `false` when the command has no such option.
    pub(super) fn take_turn_option(&mut self, id: &str, leaf: &ArgMatches) -> bool {
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
            (
                Some(
                    Command::Config(cmd::config::Args { select })
                    | Command::Doctor(cmd::doctor::Args { select }),
                ),
                "agent" | "model",
            ) => {
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
pub(super) const TURN_OPTIONS: &[(&str, &str)] = &[
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
pub(super) fn refuse_misspelt_command(
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
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
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
    /// this command line feeds (`cmd | sticky PROMPT`, `timeout` on either side and `sudo` on
    /// the left included: a writer in sticky's session, not its parent, which sticky can tell
    /// on Linux), and gives any other pipe 3 seconds to start before going on without it,
    /// with a note (a runner's pipe nobody writes or closes). `wait` reads stdin to
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
    pub(super) fn place_prompt_option(&mut self, matches: &ArgMatches) {
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
