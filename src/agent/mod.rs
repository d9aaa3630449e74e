//! Agent adapters: one per agent CLI, behind the [`Adapter`] trait.
//!
//! An adapter knows its agent's flags, output events, error texts and storage; it builds
//! command lines and parses output, and never spawns anything (that is `pty`'s job), so every
//! adapter is tested as pure functions.

pub mod carry;
mod claude;
mod codex;
mod copilot;
mod custom;
mod events;
mod flags;
mod gemini;
mod opencode;
mod output;
pub mod program;
mod qwen;
pub mod reserved;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::exit::StickyError;

pub use claude::Claude;
pub use codex::Codex;
pub use copilot::Copilot;
pub use custom::Custom;
pub use events::{Event, LineSplitter, Usage};
pub use flags::{CommandLine, Prompt};
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

/// Stdin for a prompt that cannot be one argument, or that starts with `-`: Gemini CLI and Qwen
/// Code read `-p -x` as an option, and take a prompt on stdin as it is.
pub(crate) fn stdin_unless_plain_argument(prompt: &[u8]) -> PromptVia {
    if fits_an_argument(prompt) && !prompt.starts_with(b"-") {
        PromptVia::Argument
    } else {
        PromptVia::Stdin
    }
}

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
    /// The agent's name on sticky's command line (`claude`).
    fn name(&self) -> &str;

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
        None
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

    /// How `prompt` is given to the agent: by default as an argument, on stdin when it does not
    /// fit one ([`fits_an_argument`]); an adapter whose agent would misread some prompts as
    /// options sends those on stdin too.
    fn prompt_via(&self, prompt: &[u8]) -> PromptVia {
        if fits_an_argument(prompt) {
            PromptVia::Argument
        } else {
            PromptVia::Stdin
        }
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
    /// Unknown or malformed lines give no events and never panic.
    fn parse_line(&self, line: &str) -> Vec<Event>;

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

    /// The session ID in the line the agent's interactive UI prints when it exits
    /// (`claude --resume <id>`, `codex resume <id>`, ...), read from the end of `text`, the
    /// terminal output of the run (control sequences are ignored). This is how sticky learns the
    /// ID of an interactive session the agent named itself, and which session the user ended on.
    fn session_from_exit_output(&self, text: &str) -> Option<String> {
        let _ = text;
        None
    }

    /// The agent's arguments that would choose another session, model or output format than
    /// the ones sticky passes; refused after `--` and in the configuration's `args`.
    fn reserved_args(&self) -> &'static [reserved::Reserved] {
        &[]
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
            let built_in = BUILT_IN.iter().any(|adapter| adapter.name() == name);
            if !settings.defines_agent() {
                continue;
            }
            if built_in {
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
