//! The user's configuration: `<config dir>/sticky/config.toml` (or `STICKY_CONFIG`; where it
//! is, `settings` decides).
//!
//! A relative `bin` path (`./my-agent`) is taken from the file's own directory, so what runs
//! never depends on the directory sticky is started in; a bare name is looked up on PATH.
//!
//! It sets the default agent, each agent's program, extra arguments and environment, and
//! defines agents sticky does not know. It is read from the user's config directory only,
//! **never from files inside a project**: a cloned repository must not be able to choose which
//! program sticky runs or with which arguments.
//!
//! ```toml
//! default_agent = "codex"
//! vault = false                   # keep no copy of the sessions' files (on by default)
//! carry_on_change = "recap"       # a new model or agent starts with a recap (or "summary")
//! context_threshold = 80          # `status` suggests `sticky new --carry` past 80% full
//! stdin = "wait"                  # read piped input however late ("auto" by default, "skip")
//!
//! [agents.claude]
//! bin = "/opt/claude/bin/claude"
//! args = ["--permission-mode", "acceptEdits"]
//! env = { ANTHROPIC_MODEL = "claude-sonnet-4-5" }
//!
//! [agents.my-agent]               # an agent sticky does not know
//! bin = "my-agent"
//! new = ["--session", "{session_id}"]
//! resume = ["--resume", "{session_id}"]
//! headless = ["--print", "{prompt}"]
//! model = ["--model", "{model}"]
//! session_id = "uuid"             # or { json = "/session_id" } or { regex = "session (\\S+)" }
//! ```
//!
//! A `session_id` regex is `regex-lite`'s syntax: it matches character by character, but its
//! classes `\d`, `\w`, `\s`, `\b` and `(?i)` know ASCII only, and it has no `\p{..}` (a
//! pattern it refuses is reported as an invalid `session_id` regex when the agent is built).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::exit::StickyError;

/// The whole configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The agent a conversation starts with (`claude` when unset).
    pub default_agent: Option<String>,
    /// Settings per agent, and agents the user defines, by name.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentConfig>,
    /// Whether sticky keeps a copy of each session's files in its vault (`true` when unset).
    pub vault: Option<bool>,
    /// The recap a change of model or agent carries into the new session when the turn names
    /// none (`--carry`): `"recap"`, `"summary"` or `"off"` (the default).
    pub carry_on_change: Option<CarryKind>,
    /// How full the context may get, in percent of the model's window, before `status`
    /// suggests `sticky new --carry` (default 80).
    pub context_threshold: Option<u8>,
    /// What a turn with a prompt does with stdin that is not a terminal (`--stdin`): `"auto"`
    /// (the default), `"wait"` or `"skip"`.
    pub stdin: Option<StdinMode>,
    /// Where the configuration was read from (`None` when there was no file).
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// Settings of one agent; the template fields define an agent sticky does not know.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The program: a path, or a name looked up on PATH. A relative path (`./x`, `bin/x`) is
    /// taken from the configuration file's directory once the file is read.
    pub bin: Option<PathBuf>,
    /// Arguments added to every run, before the ones given after `--`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables set for the agent.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// User-defined agents: arguments that start a new session (`{session_id}` when sticky
    /// chooses the ID up front).
    pub new: Option<Vec<String>>,
    /// User-defined agents: arguments that resume session `{session_id}`.
    pub resume: Option<Vec<String>>,
    /// User-defined agents: arguments of a headless turn (`{prompt}` is the prompt).
    pub headless: Option<Vec<String>>,
    /// User-defined agents: arguments of an interactive run.
    pub interactive: Option<Vec<String>>,
    /// User-defined agents: arguments that choose model `{model}`, when the session has one.
    pub model: Option<Vec<String>>,
    /// User-defined agents: where the session ID comes from.
    pub session_id: Option<IdSource>,
    /// User-defined agents: text in the agent's output that means "this session is gone".
    pub lost: Option<String>,
}

impl AgentConfig {
    /// Whether this entry defines an agent of its own (rather than configuring a built-in one).
    pub fn defines_agent(&self) -> bool {
        self.new.is_some() || self.resume.is_some() || self.headless.is_some()
    }
}

/// What `carry_on_change` (and `--carry=KIND`) may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum CarryKind {
    /// sticky's own record of the old session: its prompts and answers, newest first.
    Recap,
    /// A handoff summary the old session writes in one extra turn.
    Summary,
    /// Nothing is carried.
    Off,
}

impl CarryKind {
    /// The name stored with the session and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Recap => "recap",
            Self::Summary => "summary",
            Self::Off => "off",
        }
    }
}

/// What a turn does with stdin that is not a terminal (`--stdin`, `STICKY_STDIN`, the
/// configuration's `stdin`). Without prompt words stdin is the prompt, and is read unless
/// `skip` says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum StdinMode {
    /// Read input from this command line's own pipeline however late it comes; go on without
    /// a pipe from elsewhere that stays silent for 3 seconds.
    Auto,
    /// Read stdin to its end, however long that takes.
    Wait,
    /// Never read stdin.
    Skip,
}

impl StdinMode {
    /// The name shown and accepted (`--stdin`, `STICKY_STDIN`, the configuration's `stdin`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Wait => "wait",
            Self::Skip => "skip",
        }
    }
}

/// Where a user-defined agent's session ID comes from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdSource {
    /// sticky chooses a UUID up front and passes it as `{session_id}`.
    Uuid,
    /// A field of the agent's JSON output events: a JSON pointer (`/session_id`) or a key.
    Json(String),
    /// The first capture group (or the whole match) of a regular expression over its output.
    Regex(String),
}

impl Config {
    /// Reads one file; a missing file is an empty configuration.
    pub fn read(path: &Path) -> Result<Self, StickyError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self::default());
            }
            Err(error) => {
                return Err(StickyError::Usage(format!(
                    "cannot read the configuration {}: {error}",
                    path.display()
                )));
            }
        };
        let mut config = Self::parse(&text).map_err(|message| {
            StickyError::Usage(format!(
                "invalid configuration {}: {message}",
                path.display()
            ))
        })?;
        let path = std::path::absolute(path).map_err(|error| {
            StickyError::Usage(format!(
                "cannot use the configuration {}: {error}",
                path.display()
            ))
        })?;
        config.anchor_bins(path.parent().unwrap_or(Path::new("/")));
        config.source = Some(path);
        Ok(config)
    }

    /// Takes each relative `bin` path from `dir`, the configuration file's directory: the file
    /// is written once and read from wherever sticky runs, so `./my-agent` means the one beside
    /// it, never whatever a project (a cloned repository) puts in the current directory. A bare
    /// name (`my-agent`) stays a name looked up on PATH.
    fn anchor_bins(&mut self, dir: &Path) {
        for settings in self.agents.values_mut() {
            if let Some(bin) = settings
                .bin
                .as_mut()
                .filter(|bin| bin.is_relative() && bin.components().count() > 1)
            {
                // `./x` is shown as `<dir>/x`, not `<dir>/./x`.
                let relative: PathBuf = bin
                    .components()
                    .filter(|part| *part != std::path::Component::CurDir)
                    .collect();
                *bin = dir.join(relative);
            }
        }
    }

    /// Parses the text of a configuration file; the error names the line and the key.
    pub fn parse(text: &str) -> Result<Self, String> {
        let config: Self =
            toml::from_str(text).map_err(|error| error.to_string().trim_end().to_owned())?;
        if let Some(threshold) = config.context_threshold.filter(|t| !(1..=100).contains(t)) {
            return Err(format!(
                "context_threshold = {threshold} is not a percentage of the context window; \
                 give 1 to 100"
            ));
        }
        Ok(config)
    }

    /// The settings of `agent`, if the file has any.
    pub fn agent(&self, agent: &str) -> Option<&AgentConfig> {
        self.agents.get(agent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_configuration_parses() {
        let config = Config::parse(
            r#"
            default_agent = "my-agent"
            [agents.claude]
            bin = "/opt/claude"
            args = ["--permission-mode", "plan"]
            env = { A = "1" }
            [agents.my-agent]
            bin = "my-agent"
            new = ["--session", "{session_id}"]
            resume = ["--resume", "{session_id}"]
            headless = ["-p", "{prompt}"]
            session_id = { regex = "session (\\S+)" }
            "#,
        )
        .unwrap();
        assert_eq!(config.default_agent.as_deref(), Some("my-agent"));
        let claude = config.agent("claude").unwrap();
        assert_eq!(claude.bin.as_deref(), Some(Path::new("/opt/claude")));
        assert!(!claude.defines_agent());
        let custom = config.agent("my-agent").unwrap();
        assert!(custom.defines_agent());
        assert_eq!(
            custom.session_id,
            Some(IdSource::Regex("session (\\S+)".into()))
        );
        let uuid = Config::parse("[agents.x]\nsession_id = \"uuid\"").unwrap();
        assert_eq!(uuid.agent("x").unwrap().session_id, Some(IdSource::Uuid));
        let carry = Config::parse("carry_on_change = \"summary\"\ncontext_threshold = 70").unwrap();
        assert_eq!(
            (carry.carry_on_change, carry.context_threshold),
            (Some(CarryKind::Summary), Some(70))
        );
        assert!(Config::parse("carry_on_change = \"everything\"").is_err());
        let stdin = Config::parse("stdin = \"skip\"").unwrap();
        assert_eq!(stdin.stdin, Some(StdinMode::Skip));
        let error = Config::parse("stdin = \"later\"").unwrap_err();
        assert!(error.contains("stdin") && error.contains("wait"), "{error}");
        let error = Config::parse("context_threshold = 150").unwrap_err();
        assert!(error.contains("1 to 100"), "{error}");
    }

    #[test]
    fn errors_name_the_line_and_the_key() {
        let error =
            Config::parse("default_agent = \"x\"\n\n[agents.claude]\nbinn = \"y\"\n").unwrap_err();
        assert!(error.contains("line 4"), "{error}");
        assert!(error.contains("binn"), "{error}");
        let error = Config::parse("default_agent = 3\n").unwrap_err();
        assert!(
            error.contains("line 1") && error.contains("default_agent"),
            "{error}"
        );
    }

    #[test]
    fn a_relative_bin_is_taken_from_the_files_directory_a_bare_name_from_path() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(
            &file,
            "[agents.claude]\nbin = \"./wrap/claude\"\n[agents.codex]\nbin = \"bin/codex\"\n\
             [agents.gemini]\nbin = \"gemini-nightly\"\n[agents.qwen]\nbin = \"/opt/qwen\"\n",
        )
        .unwrap();
        let config = Config::read(&file).unwrap();
        let bin = |agent| config.agent(agent).unwrap().bin.clone().unwrap();
        assert_eq!(bin("claude"), dir.path().join("wrap/claude"));
        assert_eq!(bin("codex"), dir.path().join("bin/codex"));
        assert_eq!(bin("gemini"), Path::new("gemini-nightly"));
        assert_eq!(bin("qwen"), Path::new("/opt/qwen"));
        assert_eq!(config.source.as_deref(), Some(file.as_path()));
    }

    #[test]
    fn a_missing_file_is_an_empty_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::read(&dir.path().join("none.toml")).unwrap();
        assert!(config.agents.is_empty() && config.source.is_none());
    }
}
