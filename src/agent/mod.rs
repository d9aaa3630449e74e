//! Agent adapters: one per agent CLI, behind the [`Adapter`] trait.
//!
//! An adapter knows its agent's flags, output events, error texts and storage; it builds
//! command lines and parses output, and never spawns anything (that is `pty`'s job), so every
//! adapter is tested as pure functions.

mod answers;
mod claude;
mod codex;
mod copilot;
mod custom;
mod events;
mod flags;
pub mod fork_copy;
mod gemini;
pub mod ledger;
mod opencode;
mod output;
pub mod program;
mod qwen;
pub mod relocation;
pub mod reserved;
pub mod tested;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::exit::StickyError;

pub use claude::Claude;
pub use codex::Codex;
pub use copilot::Copilot;
pub use custom::Custom;
pub use events::{Event, LineSplitter, Usage, last_lines};
pub use flags::{CommandLine, Fork, Prompt};
pub use gemini::Gemini;
pub use opencode::Opencode;
pub use qwen::Qwen;

/// Which session the agent is asked to run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// A new session with an ID sticky chose up front.
    Create(&'a str),
    /// A new session whose ID the agent chooses and reports.
    CreateUnnamed,
    /// The existing session with this ID.
    Resume(&'a str),
}

impl Target<'_> {
    /// The session ID sticky expects the agent to report, when it knows it in advance.
    pub fn expected_id(&self) -> Option<&str> {
        match *self {
            Self::Create(id) | Self::Resume(id) => Some(id),
            Self::CreateUnnamed => None,
        }
    }
}

/// How the prompt reaches the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptVia {
    /// As a command-line argument.
    Argument,
    /// On stdin (a pipe): for prompts beyond the 128 KiB limit of one argument on Linux.
    Stdin,
}

/// One turn as the adapter needs to know it.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    /// The session to run on.
    pub target: Target<'a>,
    /// The session's model, passed on every run (not every agent restores it on resume).
    pub model: Option<&'a str>,
    /// The user's arguments after `--`, passed unchanged at the end.
    pub extra_args: &'a [OsString],
    /// The agent session this turn forks (the first turn of a `sticky fork` thread, on an
    /// agent whose [`Adapter::forking`] is its own): the new session is `target`.
    pub fork_from: Option<&'a str>,
}

/// How an agent makes a fork of a session (`sticky fork`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forking {
    /// The agent's own fork (Claude Code's `--fork-session`, Codex's `exec fork`, opencode's
    /// `--fork`, Qwen Code's `--fork-session`): the first turn passes [`Turn::fork_from`];
    /// `chosen_id` when the fork takes the ID sticky chose up front.
    Own {
        /// Whether the new session takes the ID sticky mints ([`Adapter::mint_id`]).
        chosen_id: bool,
    },
    /// No fork of its own, but the agent resumes a copy of the session's files under a new
    /// session ID with the whole history (Gemini CLI, Copilot CLI): `sticky fork` makes that
    /// copy at once ([`fork_copy`]), and the fork is a session the agent has.
    Copy,
    /// No fork sticky can ask for or make (an agent of the configuration, whose files sticky
    /// does not know; a source whose files are gone): the fork starts a new session with
    /// sticky's recap of the source (`--carry recap`), and sticky says so.
    Recap,
}

/// The largest prompt passed as one argument; Linux refuses a single argument over 128 KiB
/// (`MAX_ARG_STRLEN`), and the rest of the command line needs room too.
pub const MAX_ARGUMENT_PROMPT: usize = 100 * 1024;

/// Whether `prompt` can be one argument: at most [`MAX_ARGUMENT_PROMPT`] bytes and no NUL byte
/// (execve takes C strings, and std refuses to spawn such an argument: binary input piped as
/// context has them).
pub fn fits_an_argument(prompt: &[u8]) -> bool {
    prompt.len() <= MAX_ARGUMENT_PROMPT && !prompt.contains(&0)
}

/// Which prompts an agent takes as an argument; the others go on stdin (a pipe).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompts {
    /// Every prompt that fits one argument ([`fits_an_argument`]).
    FittingArguments,
    /// Those that fit one argument and do not start with `-`: Gemini CLI and Qwen Code read
    /// `-p -x` as an option, and take a prompt on stdin as it is.
    PlainArguments,
    /// None: every prompt goes on stdin (opencode quotes message arguments).
    OnStdin,
    /// All of them: a template says where the prompt goes, and there is no stdin form to fall
    /// back on.
    AsArgument,
}

impl Prompts {
    /// How `prompt` reaches the agent under this rule.
    pub fn via(self, prompt: &[u8]) -> PromptVia {
        let argument = match self {
            Self::FittingArguments => fits_an_argument(prompt),
            Self::PlainArguments => fits_an_argument(prompt) && !prompt.starts_with(b"-"),
            Self::OnStdin => false,
            Self::AsArgument => true,
        };
        if argument {
            PromptVia::Argument
        } else {
            PromptVia::Stdin
        }
    }
}

/// Who an agent is, as one value: what the trait's identity methods ([`Adapter::name`],
/// [`Adapter::command_line`], [`Adapter::prompt_via`], [`Adapter::reserved_args`]) read, so an
/// adapter states its facts in one place instead of one method each.
#[derive(Debug, Clone, Copy)]
pub struct Profile<'a> {
    /// The agent's name on sticky's command line (`claude`).
    pub name: &'a str,
    /// The agent's arguments that would choose another session, model or output format than
    /// the ones sticky passes.
    pub reserved: reserved::Reserved,
    /// How the agent spells its command lines, when they differ from the other agents' only in
    /// flag names; `None` for an agent whose command lines have a shape of their own.
    pub command_line: Option<&'static CommandLine>,
    /// Which prompts go as an argument and which on stdin.
    pub prompts: Prompts,
    /// How the line the agent's interactive UI prints when it exits names the session
    /// (`claude --resume <id>`): the text before the ID, and which IDs are the agent's; read
    /// by [`Adapter::session_from_exit_output`]. `None` for an agent that prints none.
    pub exit_line: Option<ExitLine>,
    /// The variables besides `HOME` that move where the agent keeps its sessions
    /// (`CLAUDE_CONFIG_DIR`). sticky finds the sessions by its own environment, so the
    /// configuration's `env` for the agent may not set them ([`Agents::new`]).
    pub homes: &'static [&'static str],
}

/// What comes before the session ID in an agent's exit line, and which IDs are its own.
pub type ExitLine = (&'static str, fn(&str) -> bool);

/// A fresh random session ID (a UUID v4), for agents that let sticky choose it up front.
pub(crate) fn fresh_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Why the agent could not run the turn on the session, read from its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Diagnosis {
    /// The agent no longer knows the session (transcript gone, another machine).
    SessionLost(String),
    /// The agent refused to run here for a reason of its own that the user can lift (Codex
    /// outside a git repository, Gemini in an untrusted folder). sticky never lifts such a
    /// safety check itself; it passes the agent's words on with the way out.
    Refused {
        /// The agent's own words.
        reason: String,
        /// What the user can do about it, as one sentence.
        hint: String,
    },
}

/// What sticky needs from an agent CLI.
pub trait Adapter: Sync + Send {
    /// Who the agent is: name, command lines, prompt rule, reserved arguments. The identity
    /// methods below read it; an adapter does not override them.
    fn profile(&self) -> Profile<'_>;

    /// The agent's name on sticky's command line (`claude`).
    fn name(&self) -> &str {
        self.profile().name
    }

    /// The program's usual name on PATH: by default the agent's name.
    fn program(&self) -> &str {
        self.name()
    }

    /// How the agent spells its command lines, when they differ from the other agents' only in
    /// flag names; the default [`Adapter::mint_id`], [`Adapter::headless_args`] and
    /// [`Adapter::interactive_args`] follow it. `None` for an agent whose command lines have a
    /// shape of their own (Codex's `exec ... resume <id>`, a user-defined template): such an
    /// adapter supplies those three itself.
    fn command_line(&self) -> Option<&CommandLine> {
        self.profile().command_line
    }

    /// A fresh session ID when the agent lets the caller choose one (Claude's
    /// `--session-id <uuid>`), so it is stored before the agent starts; `None` when the agent
    /// mints its own and reports it in its events. By default a UUID v4 when the agent's
    /// [`CommandLine`] has a flag to create a session under a given ID.
    fn mint_id(&self) -> Option<String> {
        self.command_line()
            .and_then(|line| line.create)
            .map(|_| fresh_uuid())
    }

    /// How the agent forks a session: by default its [`CommandLine::fork`], else a recap.
    fn forking(&self) -> Forking {
        match self
            .command_line()
            .and_then(|line| line.fork.map(|fork| (line, fork)))
        {
            Some((line, fork)) => Forking::Own {
                chosen_id: fork.chosen_id && line.create.is_some(),
            },
            None => Forking::Recap,
        }
    }

    /// The ID sticky chooses for a fork's new session: [`Adapter::mint_id`]'s, unless the
    /// agent's own fork mints it.
    fn fork_id(&self) -> Option<String> {
        match self.forking() {
            Forking::Own { chosen_id: false } => None,
            _ => self.mint_id(),
        }
    }

    /// How `prompt` is given to the agent: as an argument when it fits one
    /// ([`fits_an_argument`]) and the agent's [`Prompts`] rule takes it there, else on stdin.
    fn prompt_via(&self, prompt: &[u8]) -> PromptVia {
        self.profile().prompts.via(prompt)
    }

    /// The arguments of a headless turn in the agent's structured output mode; `prompt` is
    /// `None` when it goes on stdin (see [`Adapter::prompt_via`]).
    fn headless_args(&self, turn: &Turn<'_>, prompt: Option<&std::ffi::OsStr>) -> Vec<OsString> {
        self.command_line()
            .map(|line| line.headless(turn, prompt))
            .unwrap_or_default()
    }

    /// The arguments of an interactive run of the agent's own UI.
    fn interactive_args(&self, turn: &Turn<'_>) -> Vec<OsString> {
        self.command_line()
            .map(|line| line.interactive(turn))
            .unwrap_or_default()
    }

    /// Arguments that make the agent report each session it starts or switches to during an
    /// interactive run (Claude's `/clear` starts a new one) as JSON lines with a `session_id`
    /// appended to `report`; empty when the agent has no such hook.
    fn session_report_args(&self, report: &Path) -> Vec<OsString> {
        let _ = report;
        Vec::new()
    }

    /// Environment variables the agent needs set for a run in `directory` (the session's).
    fn env(&self, directory: &Path) -> Vec<(OsString, OsString)> {
        let _ = directory;
        Vec::new()
    }

    /// The events in one line of the agent's headless output (without its line ending).
    /// Unknown or malformed lines give no events and never panic. By default the line is one
    /// JSON object ([`Adapter::parse_event`]) and anything else gives no events.
    fn parse_line(&self, line: &str) -> Vec<Event> {
        output::json_object(line).map_or_else(Vec::new, |event| self.parse_event(&event))
    }

    /// The events in one JSON object line of the agent's output (the default
    /// [`Adapter::parse_line`]); none by default.
    fn parse_event(&self, event: &serde_json::Value) -> Vec<Event> {
        let _ = event;
        Vec::new()
    }

    /// Why a failed turn failed, from the agent's non-event output, when sticky must act on it.
    fn diagnose(&self, target: &Target<'_>, output: &str) -> Option<Diagnosis>;

    /// Where the agent keeps the transcript of session `id` run in `directory`, if it keeps one
    /// file per session; used to confirm interactive sessions and by `doctor`.
    fn transcript(&self, home: &Path, directory: &Path, id: &str) -> Option<PathBuf>;

    /// Whether the agent saved session `id` (started in `directory`) where it keeps its
    /// sessions: `Some(false)` only when it certainly did not, `None` when the adapter cannot
    /// tell. A failed first turn of a session the agent never saved leaves nothing to resume.
    fn saved(&self, home: &Path, directory: &Path, id: &str) -> Option<bool> {
        self.transcript(home, directory, id)
            .map(|path| path.is_file())
    }

    /// Whether `id` has the shape of the agent's own session IDs: the shape its exit line is
    /// read with (a UUID for Claude Code, Codex, Qwen Code and Copilot CLI, `ses_` and letters
    /// and digits for opencode, letters, digits, `-` and `_` for Gemini CLI), `true` for an
    /// agent without one (a user-defined agent). A stored ID of another shape came from a
    /// crafted or damaged database, and is never passed to the agent.
    fn valid_id(&self, id: &str) -> bool {
        self.profile().exit_line.is_none_or(|(_, valid)| valid(id))
    }

    /// The session ID in the line the agent's interactive UI prints when it exits
    /// (`claude --resume <id>`, `codex resume <id>`, ...), read from the end of `text`, the
    /// terminal output of the run (control sequences are ignored). This is how sticky learns the
    /// ID of an interactive session the agent named itself, and which session the user ended on.
    fn session_from_exit_output(&self, text: &str) -> Option<String> {
        let (marker, valid) = self.profile().exit_line?;
        output::id_after(text, marker, valid)
    }

    /// The agent's arguments that would choose another session, model or output format than
    /// the ones sticky passes; refused after `--` and in the configuration's `args`.
    fn reserved_args(&self) -> reserved::Reserved {
        self.profile().reserved
    }

    /// Whether session `actual`, reported where sticky resumed `expected`, is the same
    /// conversation under a new name (so sticky follows it) rather than a fresh one (amnesia).
    /// Each adapter documents the evidence it accepts; without evidence the answer is `false`.
    fn renamed(&self, home: &Path, directory: &Path, expected: &str, actual: &str) -> bool {
        let _ = (home, directory, expected, actual);
        false
    }

    /// The agent's own home on this machine, under the user's `home`: the one directory under
    /// which it keeps its sessions (`~/.claude`, or `$CLAUDE_CONFIG_DIR` when set), and the
    /// stable root of [`SessionFile::relative`]. `None` when sticky does not know where the
    /// agent keeps its sessions (a user-defined agent).
    fn agent_home(&self, home: &Path) -> Option<PathBuf> {
        let _ = home;
        None
    }

    /// The files that hold session `id` (run in `directory`) in the agent's home, for sticky's
    /// vault (`crate::vault`) and for export: each with its place here, its path under
    /// [`Adapter::agent_home`], and how the agent writes it. Only files that exist are listed;
    /// empty when the agent keeps nothing sticky can find (the session is unknown, or kept in
    /// a way sticky cannot copy). By default the transcript ([`Adapter::transcript`]), which
    /// the agent appends to.
    fn session_files(&self, home: &Path, directory: &Path, id: &str) -> Vec<SessionFile> {
        let (Some(root), Some(path)) =
            (self.agent_home(home), self.transcript(home, directory, id))
        else {
            return Vec::new();
        };
        SessionFile::under(&root, path, Keeping::Append)
            .into_iter()
            .collect()
    }

    /// How many days the agent keeps a session's files before it deletes them on its own
    /// (Claude Code's `cleanupPeriodDays`), under the user's `home`; `None` when it keeps them
    /// until the user deletes them.
    fn retention_days(&self, home: &Path) -> Option<u64> {
        let _ = home;
        None
    }

    /// For an agent that keeps its sessions as rows of an `SQLite` database of its own rather
    /// than as files (opencode): the database under the user's `home` and how session `id`'s
    /// rows are found in it, for sticky's vault. `None` for an agent that keeps files.
    fn session_rows(&self, home: &Path, id: &str) -> Option<SessionRows> {
        let _ = (home, id);
        None
    }

    /// Whether `relative` (under [`Adapter::agent_home`]) may be one of session `id`'s files, so
    /// sticky's vault (which sits in the project, where a repository or a copied vault could
    /// plant one) puts back only such files, never the agent's settings nor another file that
    /// merely names the session (`~/.claude/agents/<id>.md`, a subagent of every project). By
    /// default: what import would place ([`relocation::Relocate::own_file`]); nothing for an
    /// agent sticky does not know.
    fn restorable(&self, relative: &Path, id: &str) -> bool {
        relocation::for_agent(self.name()).is_some_and(|relocate| relocate.own_file(relative, id))
    }

    /// The IDs of the conversation's records in `bytes`, a file the agent rewrites at
    /// `relative` under its home, in their order: what tells an older version of the file from
    /// a later one, which its bytes and times cannot (`vault::catch_up`). `None` for a file
    /// without such records (the default).
    fn record_ids(&self, relative: &Path, bytes: &[u8]) -> Option<Vec<String>> {
        let _ = (relative, bytes);
        None
    }

    /// The last assistant message of session `id` as the agent's transcript holds it: what an
    /// interactive turn keeps as its answer. `None` where the adapter cannot read it.
    fn last_answer(&self, home: &Path, directory: &Path, id: &str) -> Option<String> {
        let path = self.transcript(home, directory, id)?;
        answers::last_in(self.name(), &path)
    }
}

/// Where an agent keeps a session as database rows (see [`Adapter::session_rows`]): the
/// session's row in `table` by its `id` column, every row of every table with a `session_id`
/// column, the rows the session row refers to, and the tables that record the database's
/// migrations (kept whole, so a database sticky must create again reads as migrated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRows {
    /// The database on this machine.
    pub database: PathBuf,
    /// Its path under the agent's home ([`Adapter::agent_home`]).
    pub relative: PathBuf,
    /// The table of the sessions, keyed by `id`.
    pub table: &'static str,
    /// Rows the session row refers to: (table, its key column, the session row's column).
    pub referred: &'static [(&'static str, &'static str, &'static str)],
    /// The tables that record the database's migrations.
    pub migrations: &'static [&'static str],
}

/// How the agent writes one of a session's files, which decides how sticky copies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keeping {
    /// Only ever appended to (Claude's and Qwen's JSONL transcripts, Codex's rollout): after
    /// the first copy only the bytes added since are copied.
    Append,
    /// Rewritten in place or replaced (Gemini's chat file, Copilot's `workspace.yaml`): copied
    /// whole when it changed.
    Rewritten,
    /// Rewritten, and shared with the agent's other sessions (Gemini's project registry
    /// `projects.json`): copied whole when it changed, and put back only where it is missing,
    /// never over the agent's newer one.
    Shared,
}

/// One file of an agent's session (see [`Adapter::session_files`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// Where the file is on this machine.
    pub path: PathBuf,
    /// Its path under the agent's home ([`Adapter::agent_home`]): relative, never `..`, the
    /// same wherever that home is.
    pub relative: PathBuf,
    /// How the agent writes it.
    pub keeping: Keeping,
}

impl SessionFile {
    /// The file at `path` inside the agent's home `root`, when it is a regular file there (not
    /// a link, not outside `root`).
    pub fn under(root: &Path, path: PathBuf, keeping: Keeping) -> Option<Self> {
        let relative = path.strip_prefix(root).ok()?.to_owned();
        let plain = relative
            .components()
            .all(|part| matches!(part, std::path::Component::Normal(_)));
        let file = std::fs::symlink_metadata(&path).ok()?.is_file();
        (plain && file && !relative.as_os_str().is_empty()).then_some(Self {
            path,
            relative,
            keeping,
        })
    }

    /// Every regular file under directory `dir` inside the agent's home `root` (depth first,
    /// in name order; links are skipped), each kept as `keeping` says of its path.
    pub fn all_under(root: &Path, dir: &Path, keeping: &dyn Fn(&Path) -> Keeping) -> Vec<Self> {
        let mut files = Vec::new();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return files;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
        paths.sort();
        for path in paths {
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                files.extend(Self::all_under(root, &path, keeping));
            } else if meta.is_file() {
                let how = keeping(&path);
                files.extend(Self::under(root, path, how));
            }
        }
        files
    }
}

/// Every built-in adapter, in the order `sticky agents` lists them.
pub static BUILT_IN: &[&dyn Adapter] = &[&Claude, &Codex, &Gemini, &Qwen, &Opencode, &Copilot];

/// Refuses a configuration `env` for a built-in agent that moves where the agent keeps its
/// sessions (`HOME`, or one of its [`Profile::homes`]; review 19, M1). Such a variable reaches the
/// agent alone: sticky's vault, export, import, relocate, fork copies and doctor find the
/// sessions by sticky's own environment, so they would look where the agent never writes, the
/// vault would keep nothing and the session would be lost to the agent's own cleanup. Set in
/// sticky's own environment, the variable reaches both.
fn refuse_moved_home(
    config: &Config,
    adapter: &dyn Adapter,
    env: &std::collections::BTreeMap<String, String>,
) -> Result<(), StickyError> {
    let homes = adapter.profile().homes;
    let moves = |key: &str| key == "HOME" || homes.contains(&key);
    let Some((key, value)) = env.iter().find(|(key, _)| moves(key)) else {
        return Ok(());
    };
    let name = adapter.name();
    let file = config.source.as_deref().map_or_else(String::new, |path| {
        format!(" {}", crate::msg::shell_path(path))
    });
    let set = format!("{key}={}", crate::msg::shell_word(value));
    Err(StickyError::Usage(format!(
        "refusing the configuration{file}: the env of agent `{name}` sets {key}, which moves where \
         {name} keeps its sessions, but sticky looks for them by its own environment, so its \
         vault, export, import and doctor would miss them; remove {key} from that env and set it \
         in sticky's own environment instead, where both see it (`export {set}` in your shell's \
         profile, or `{set} sticky ...`)"
    )))
}

/// The agents sticky can run: the built-in ones and those defined in the user's configuration,
/// which it owns.
#[derive(Default)]
pub struct Agents {
    custom: Vec<Custom>,
}

impl Agents {
    /// The built-in agents plus the ones `config` defines.
    pub fn new(config: &Config) -> Result<Self, StickyError> {
        let mut custom = Vec::new();
        for (name, settings) in &config.agents {
            let built_in = BUILT_IN.iter().find(|adapter| adapter.name() == name);
            if let Some(adapter) = built_in {
                refuse_moved_home(config, *adapter, &settings.env)?;
            }
            if !settings.defines_agent() {
                continue;
            }
            if built_in.is_some() {
                return Err(StickyError::Usage(format!(
                    "configuration: agent `{name}` is built in; only bin, args and env can be set \
                     for it (name your own definition differently)"
                )));
            }
            let adapter = Custom::new(name, settings)
                .map_err(|message| StickyError::Usage(format!("configuration: {message}")))?;
            custom.push(adapter);
        }
        Ok(Self { custom })
    }

    /// Every agent, built-in ones first.
    pub fn all(&self) -> impl Iterator<Item = &dyn Adapter> {
        let custom = self.custom.iter().map(|adapter| adapter as &dyn Adapter);
        BUILT_IN.iter().copied().chain(custom)
    }

    /// The agent called `name`.
    pub fn find(&self, name: &str) -> Option<&dyn Adapter> {
        self.all().find(|adapter| adapter.name() == name)
    }

    /// The agent called `name`, or a usage error that lists the known ones.
    pub fn get(&self, name: &str) -> Result<&dyn Adapter, StickyError> {
        self.find(name).ok_or_else(|| {
            let known: Vec<_> = self.all().map(Adapter::name).collect();
            StickyError::Usage(format!(
                "unknown agent `{name}`; known agents: {} (define others in the configuration)",
                known.join(", ")
            ))
        })
    }
}

impl std::fmt::Debug for Agents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.all().map(Adapter::name))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::output::{headless, interactive};

    /// One row per built-in agent: an ID of its own shape, and one of another agent's shape. IDs
    /// that no agent makes (a path, spaces, a shell's `;`) are refused by every one; one that
    /// starts with `-` is refused for every agent before its shape is asked (`session::apply`).
    #[test]
    fn every_built_in_adapter_holds_stored_ids_to_its_own_shape() {
        let uuid = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
        let rows: [(&str, &str, &str); 6] = [
            ("claude", uuid, "ses_01jx8s6h0d9x2c5m"),
            (
                "codex",
                "01a22acd-8f40-7f43-9d2e-012c67511e40",
                "ses_01jx8s6h0d9x2c5m",
            ),
            ("gemini", uuid, "ses/../01jx"),
            ("qwen", uuid, "session-1"),
            ("copilot", uuid, "ses_01jx8s6h0d9x2c5m"),
            ("opencode", "ses_01jx8s6h0d9x2c5m", uuid),
        ];
        assert_eq!(rows.len(), BUILT_IN.len());
        for (name, own, other) in rows {
            let adapter = BUILT_IN
                .iter()
                .find(|adapter| adapter.name() == name)
                .expect(name);
            assert!(adapter.valid_id(own), "{name} refuses its own {own}");
            assert!(!adapter.valid_id(other), "{name} takes {other}");
            for crafted in ["", "../../etc/passwd", "a b", "x;rm -rf ~"] {
                assert!(!adapter.valid_id(crafted), "{name} takes {crafted:?}");
            }
        }
    }

    /// The trait's default command lines are empty for an adapter that describes none, so each
    /// built-in adapter must describe its own or build them itself: all name the session they
    /// resume, headless and interactive.
    #[test]
    fn every_built_in_adapter_names_the_session_it_resumes() {
        let id = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
        let turn = Turn {
            target: Target::Resume(id),
            model: None,
            extra_args: &[],
            fork_from: None,
        };
        let names_it =
            |args: Vec<OsString>| args.iter().any(|arg| arg.to_string_lossy().contains(id));
        for adapter in BUILT_IN {
            assert!(
                names_it(adapter.headless_args(&turn, None)),
                "{}",
                adapter.name()
            );
            assert!(
                names_it(adapter.interactive_args(&turn)),
                "{}",
                adapter.name()
            );
            assert_eq!(adapter.program(), adapter.name());
        }
    }

    /// A new session for `adapter`: under an ID sticky chose, unless the agent mints its own.
    fn new_session(adapter: &dyn Adapter) -> Target<'static> {
        if adapter.mint_id().is_some() {
            Target::Create("u1")
        } else {
            Target::CreateUnnamed
        }
    }

    /// sticky chooses a fresh UUID v4 as the ID of a new session for the agents that take one,
    /// and lets Codex and opencode mint theirs.
    #[test]
    fn ids_are_chosen_up_front_where_the_agent_takes_one() {
        for adapter in BUILT_IN {
            let name = adapter.name();
            let ids = [adapter.mint_id(), adapter.mint_id()];
            if ["codex", "opencode"].contains(&name) {
                assert_eq!(ids, [None, None], "{name}");
                continue;
            }
            let [Some(a), Some(b)] = ids else {
                panic!("{name} mints no ID")
            };
            assert_ne!(a, b, "{name}");
            let version = uuid::Uuid::parse_str(&a).map(|id| id.get_version_num());
            assert_eq!(version.ok(), Some(4), "{name}");
        }
    }

    /// One agent's command lines for the turns of [`command_lines`].
    struct Lines {
        agent: &'static dyn Adapter,
        /// Headless: a new session and a resumed one, both with the model `m`, the user's
        /// `--yes` and the prompt `hi there` as an argument; a resumed one with neither model
        /// nor arguments and its prompt on stdin.
        headless: [&'static str; 3],
        /// Interactive: a new session and a resumed one, both with the model `m`.
        interactive: [&'static str; 2],
    }

    /// Every built-in agent's command lines, side by side.
    const LINES: &[Lines] = &[
        Lines {
            agent: &Claude,
            headless: [
                "-p --output-format stream-json --verbose --session-id u1 --model m --yes -- \
                 'hi there'",
                "-p --output-format stream-json --verbose --resume u1 --model m --yes -- \
                 'hi there'",
                "-p --output-format stream-json --verbose --resume u1",
            ],
            interactive: ["--session-id u1 --model m", "--resume u1 --model m"],
        },
        Lines {
            agent: &Codex,
            headless: [
                "exec --json -m m --yes -- 'hi there'",
                "exec --json -m m --yes resume u1 -- 'hi there'",
                "exec --json resume u1 -- -",
            ],
            interactive: ["--no-daemon -m m", "--no-daemon -m m resume u1"],
        },
        Lines {
            agent: &Gemini,
            headless: [
                "--session-id u1 -m m -o stream-json --yes -p 'hi there'",
                "--resume u1 -m m -o stream-json --yes -p 'hi there'",
                "--resume u1 -o stream-json",
            ],
            interactive: ["--session-id u1 -m m", "--resume u1 -m m"],
        },
        Lines {
            agent: &Qwen,
            headless: [
                "--session-id u1 -m m -o stream-json --yes 'hi there'",
                "--resume u1 -m m -o stream-json --yes 'hi there'",
                "--resume u1 -o stream-json",
            ],
            interactive: ["--session-id u1 -m m", "--resume u1 -m m"],
        },
        Lines {
            agent: &Opencode,
            headless: [
                "run --format json -m m --yes -- 'hi there'",
                "run --format json -s u1 -m m --yes -- 'hi there'",
                "run --format json -s u1",
            ],
            interactive: ["-m m", "-s u1 -m m"],
        },
        Lines {
            agent: &Copilot,
            headless: [
                "--session-id u1 --model m --output-format json --yes '--prompt=hi there'",
                "--resume=u1 --model m --output-format json --yes '--prompt=hi there'",
                "--resume=u1 --output-format json",
            ],
            interactive: ["--session-id u1 --model m", "--resume=u1 --model m"],
        },
    ];

    #[test]
    fn command_lines() {
        let yes = [OsString::from("--yes")];
        let (given, prompt) = ((Some("m"), &yes[..]), Some("hi there"));
        let resume = Target::Resume("u1");
        for lines in LINES {
            let (adapter, name) = (lines.agent, lines.agent.name());
            let new = new_session(adapter);
            let [new_line, resumed_line, on_stdin] = lines.headless;
            assert_eq!(headless(adapter, new, given, prompt), new_line, "{name}");
            assert_eq!(
                headless(adapter, resume, given, prompt),
                resumed_line,
                "{name}"
            );
            let bare = headless(adapter, resume, (None, &[]), None);
            assert_eq!(bare, on_stdin, "{name}");
            let [new_line, resumed_line] = lines.interactive;
            assert_eq!(interactive(adapter, new, Some("m")), new_line, "{name}");
            assert_eq!(
                interactive(adapter, resume, Some("m")),
                resumed_line,
                "{name}"
            );
        }
    }

    /// The first turn of a fork, headless and interactive, on every built-in agent: the agent's
    /// own fork of session `src` (with the ID sticky chose where the fork takes one); Gemini CLI
    /// and Copilot CLI have none: `sticky fork` copies their session at once (the first turn
    /// resumes the copy), and where there was nothing to copy the first turn starts a new
    /// session, sticky's recap before the prompt (the rows below).
    #[test]
    fn a_forks_first_turn_asks_for_the_agents_own_fork() {
        let rows: &[(&dyn Adapter, Forking, &str, &str)] = &[
            (
                &Claude,
                Forking::Own { chosen_id: true },
                "-p --output-format stream-json --verbose --resume src --fork-session \
                 --session-id u1 --model m -- go",
                "--resume src --fork-session --session-id u1 --model m",
            ),
            (
                &Codex,
                Forking::Own { chosen_id: false },
                "exec --json -m m fork src -- go",
                "--no-daemon -m m fork src",
            ),
            (
                &Qwen,
                Forking::Own { chosen_id: false },
                "--resume src --fork-session -m m -o stream-json go",
                "--resume src --fork-session -m m",
            ),
            (
                &Opencode,
                Forking::Own { chosen_id: false },
                "run --format json -s src --fork -m m -- go",
                "-s src --fork -m m",
            ),
            (
                &Gemini,
                Forking::Copy,
                "--session-id u1 -m m -o stream-json -p go",
                "--session-id u1 -m m",
            ),
            (
                &Copilot,
                Forking::Copy,
                "--session-id u1 --model m --output-format json --prompt=go",
                "--session-id u1 --model m",
            ),
        ];
        assert_eq!(rows.len(), BUILT_IN.len());
        for (adapter, forking, headless, interactive) in rows {
            let name = adapter.name();
            assert_eq!(adapter.forking(), *forking, "{name}");
            let own = matches!(forking, Forking::Own { .. });
            let chosen = adapter.fork_id().is_some();
            assert_eq!(
                chosen,
                !own || *forking == Forking::Own { chosen_id: true },
                "{name}"
            );
            let turn = Turn {
                target: if chosen {
                    Target::Create("u1")
                } else {
                    Target::CreateUnnamed
                },
                model: Some("m"),
                extra_args: &[],
                fork_from: own.then_some("src"),
            };
            let args = adapter.headless_args(&turn, Some(std::ffi::OsStr::new("go")));
            assert_eq!(output::line(&args), *headless, "{name}");
            assert_eq!(
                output::line(&adapter.interactive_args(&turn)),
                *interactive,
                "{name}"
            );
        }
    }

    /// The vault puts back only what names the session (Gemini: its chat file, its project's
    /// marker, the registry), never an agent's settings.
    #[test]
    fn only_a_sessions_own_files_are_restorable() {
        let id = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
        let ok = |adapter: &dyn Adapter, path: &str| adapter.restorable(Path::new(path), id);
        assert!(ok(&Claude, &format!("projects/-p/{id}.jsonl")));
        assert!(ok(&Claude, &format!("projects/-p/{id}/subagents/a.jsonl")));
        assert!(!ok(&Claude, "settings.json"));
        assert!(!ok(&Claude, &format!("agents/{id}.md")));
        assert!(!ok(&Claude, &format!("projects/{id}.jsonl")));
        assert!(!ok(&Claude, &format!("projects/-p/{id}.md")));
        assert!(!ok(&Claude, &format!("projects/-p/../agents/{id}.jsonl")));
        assert!(ok(&Qwen, &format!("projects/-p/chats/{id}.jsonl")));
        assert!(!ok(&Qwen, &format!("projects/-p/{id}.jsonl")));
        assert!(ok(&Copilot, &format!("session-state/{id}/workspace.yaml")));
        assert!(!ok(&Copilot, &format!("session-state/{id}/config.json")));
        assert!(!ok(&Copilot, &format!("agents/{id}.md")));
        assert!(ok(
            &Codex,
            &format!("sessions/2026/12/01/rollout-2026-12-01T22-10-00-{id}.jsonl")
        ));
        assert!(!ok(&Codex, &format!("prompts/{id}.md")));
        assert!(!ok(&Codex, "config.toml"));
        assert!(ok(
            &Gemini,
            "tmp/proj/chats/session-2026-12-01T22-10-3f2504e0.jsonl"
        ));
        assert!(ok(&Gemini, "tmp/proj/.project_root"));
        assert!(ok(&Gemini, "projects.json"));
        assert!(!ok(&Gemini, "settings.json"));
        assert!(!ok(
            &Gemini,
            "tmp/proj/chats/session-2026-12-01T22-10-ffffffff.jsonl"
        ));
    }

    #[test]
    fn gemini_and_qwen_send_prompts_that_look_like_options_and_large_ones_on_stdin() {
        for adapter in [&Gemini as &dyn Adapter, &Qwen] {
            let via = |prompt: &[u8]| adapter.prompt_via(prompt);
            assert_eq!(via(b"fix -x"), PromptVia::Argument, "{}", adapter.name());
            assert_eq!(via(b"-x"), PromptVia::Stdin, "{}", adapter.name());
            let large = vec![b'a'; MAX_ARGUMENT_PROMPT + 1];
            assert_eq!(via(&large), PromptVia::Stdin, "{}", adapter.name());
        }
    }
}
