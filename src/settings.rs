//! The settings of a run, each with its value and its source, resolved once below the commands.
//!
//! Precedence is flags > environment > configuration file > built-in defaults: clap resolves
//! the first two (`env =` on the flags) and records which one won ([`Origins`]); this module
//! adds the configuration file and the defaults, and keeps with every value what chose it
//! ([`Setting`]). The command context is built from [`Settings`]; turns read the values,
//! `sticky config` and `sticky doctor` print them with their sources. Each rule is written
//! once, here: a description of it elsewhere would drift from the behaviour.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::agent::program::{self, Chosen, ChosenBy, override_var};
use crate::agent::{Adapter, BUILT_IN};
use crate::cli::{GlobalArgs, Origin, Origins, SelectArgs};
use crate::config::{CarryKind, Config, StdinMode};
use crate::exit::StickyError;
use crate::project::Project;
use crate::store::SessionRow;

/// The variable that moves the configuration file.
const CONFIG_VAR: &str = "STICKY_CONFIG";

/// The variable that sets what a turn does with stdin, as `--stdin` does.
const STDIN_VAR: &str = "STICKY_STDIN";

/// What chose a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// A flag on the command line.
    Flag,
    /// An environment variable.
    Environment,
    /// The configuration file.
    Config,
    /// The conversation's live session (the agent and model a turn keeps).
    Session,
    /// A program found on PATH.
    Path,
    /// Nothing: the built-in default.
    Default,
}

/// A setting: its value, what chose it, and the flag, variable or file that did.
#[derive(Debug, Clone, Serialize)]
pub struct Setting<T> {
    /// The value.
    pub value: T,
    /// What chose it.
    pub source: Source,
    /// The flag, variable or file, or why the default applies.
    pub origin: String,
}

impl<T> Setting<T> {
    /// A value chosen by `source`, named by `origin`.
    pub fn new(value: T, source: Source, origin: impl Into<String>) -> Self {
        Self {
            value,
            source,
            origin: origin.into(),
        }
    }
}

/// The configuration file: where it is and whether it exists.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigFile {
    /// The path (`null` without a configuration directory).
    #[serde(flatten)]
    pub path: Setting<Option<String>>,
    /// Whether the file exists (a missing file is an empty configuration).
    pub exists: bool,
}

/// The project directory and why it is the project.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectDir {
    /// The directory, found from `-C DIR` or the current directory.
    #[serde(flatten)]
    pub dir: Setting<String>,
    /// Why this directory is the project (`.sticky/`, git root, current directory).
    pub found: &'static str,
}

/// The settings of this run that do not depend on the conversation's state.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The configuration file.
    pub config_file: ConfigFile,
    /// The conversation: `--thread`, `STICKY_THREAD`, else `main`.
    pub thread: Setting<String>,
    /// The project directory.
    pub project: ProjectDir,
    /// The database: `STICKY_DB`, else `.sticky/sticky.db` in the project directory.
    pub database: Setting<String>,
    /// The agent a conversation starts with: the configuration's `default_agent`, else Claude
    /// Code.
    pub default_agent: Setting<String>,
    /// Whether the vault keeps a copy of each session's files: the configuration's `vault`,
    /// else on.
    pub vault: Setting<bool>,
    /// The recap a change of model or agent carries when the turn names none: the
    /// configuration's `carry_on_change`, else `off`.
    pub carry_on_change: Setting<CarryKind>,
    /// How full the context may get (percent of the window) before `status` suggests
    /// `sticky new --carry`: the configuration's `context_threshold`, else 80.
    pub context_threshold: Setting<u8>,
    /// The configuration file's contents (empty without a file).
    pub config: Config,
}

impl Settings {
    /// Resolves every setting of the run in `project`, with the configuration [`read_config`]
    /// read.
    pub fn new(
        global: &GlobalArgs,
        origins: Origins,
        project: &Project,
        (config, config_file): (Config, ConfigFile),
    ) -> Self {
        Self {
            config_file,
            thread: thread(global, origins),
            project: project_dir(global, project),
            database: database(project),
            default_agent: default_agent(&config),
            vault: vault(&config),
            carry_on_change: from_config(&config, config.carry_on_change, CarryKind::Off),
            context_threshold: from_config(
                &config,
                config.context_threshold,
                DEFAULT_CONTEXT_THRESHOLD,
            ),
            config,
        }
    }

    /// What a turn does with stdin that is not a terminal: `--stdin` (`flag`), else
    /// `STICKY_STDIN`, else the configuration's `stdin`, else `auto`. Read here, when a command
    /// uses it, so a bad value only stops the commands it would change.
    pub fn stdin(&self, flag: Option<StdinMode>) -> Result<Setting<StdinMode>, StickyError> {
        if let Some(mode) = flag {
            return Ok(Setting::new(mode, Source::Flag, "--stdin"));
        }
        if let Some(value) = std::env::var_os(STDIN_VAR).filter(|value| !value.is_empty()) {
            let mode = value
                .to_str()
                .and_then(|value| clap::ValueEnum::from_str(value, false).ok())
                .ok_or_else(|| {
                    StickyError::Usage(format!(
                        "{STDIN_VAR} {:?} is not what a turn can do with stdin; give auto, \
                         wait or skip, or unset it",
                        value.to_string_lossy()
                    ))
                })?;
            return Ok(Setting::new(mode, Source::Environment, STDIN_VAR));
        }
        Ok(from_config(
            &self.config,
            self.config.stdin,
            StdinMode::Auto,
        ))
    }

    /// The agent the next turn uses, as the session policy picks it: `--agent` or
    /// `STICKY_AGENT`; else the live session's agent (a turn keeps it); else the default agent.
    pub fn agent(
        &self,
        select: &SelectArgs,
        origins: Origins,
        live: Option<&SessionRow>,
    ) -> Setting<String> {
        match (select.agent.as_deref(), live) {
            (Some(agent), _) if origins.agent == Origin::Environment => {
                Setting::new(agent.to_owned(), Source::Environment, "STICKY_AGENT")
            }
            (Some(agent), _) => Setting::new(agent.to_owned(), Source::Flag, "--agent"),
            (None, Some(live)) => Setting::new(
                live.agent.clone(),
                Source::Session,
                "the live session's agent",
            ),
            (None, None) => self.default_agent.clone(),
        }
    }

    /// What overrides the program of agent `name`, and where that comes from: its
    /// `STICKY_<AGENT>_BIN`, else the configured `bin`; `None` means its usual name on PATH.
    pub fn program_choice(&self, name: &str) -> Option<Chosen> {
        let var = override_var(name);
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

    /// The program of `adapter` with what chose it (the value is `None` when it cannot run),
    /// and the program itself or why it cannot run.
    pub fn program(
        &self,
        adapter: &dyn Adapter,
    ) -> (Setting<Option<String>>, Result<PathBuf, StickyError>) {
        let chosen = self.program_choice(adapter.name());
        let (source, origin) = match chosen.as_ref().map(|chosen| &chosen.by) {
            Some(ChosenBy::Environment) => (Source::Environment, override_var(adapter.name())),
            Some(ChosenBy::Config(file)) => (Source::Config, file.display().to_string()),
            None => (Source::Path, format!("`{}` on PATH", adapter.program())),
        };
        let resolved = program::resolve(
            adapter.name(),
            adapter.program(),
            chosen,
            std::env::var_os("PATH").as_deref(),
        );
        let value = resolved
            .as_ref()
            .ok()
            .map(|path| path.display().to_string());
        (Setting::new(value, source, origin), resolved)
    }

    /// The configured arguments and environment of `adapter` (secret-looking values hidden),
    /// and whether it is built into sticky.
    pub fn agent_settings(&self, adapter: &dyn Adapter) -> AgentSettings {
        let (program, resolved) = self.program(adapter);
        let settings = self.config.agent(adapter.name());
        AgentSettings {
            name: adapter.name().to_owned(),
            built_in: BUILT_IN.iter().any(|known| known.name() == adapter.name()),
            program,
            error: resolved.err().map(|error| error.to_string()),
            args: settings.map(|s| s.args.clone()).unwrap_or_default(),
            env: settings
                .map(|s| {
                    s.env
                        .iter()
                        .map(|(key, value)| (key.clone(), shown(key, value)))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// The settings of one agent, as `sticky config` shows them.
#[derive(Debug, Serialize)]
pub struct AgentSettings {
    /// The agent's name.
    pub name: String,
    /// Built into sticky, or defined in the configuration file.
    pub built_in: bool,
    /// The program that would run (`value`: `null` when it cannot be found), what chose it
    /// (`environment`, `config` or `path`) and the variable, file or name that did.
    pub program: Setting<Option<String>>,
    /// Why the program cannot run.
    pub error: Option<String>,
    /// Arguments from the configuration file, given before the ones after `--`.
    pub args: Vec<String>,
    /// Environment from the configuration file (secret-looking values hidden).
    pub env: BTreeMap<String, String>,
}

/// The model the next turn uses with `agent`: `--model` or `STICKY_MODEL`; else the live
/// session's model when the turn keeps its agent; else none (the agent's default).
pub fn model(
    select: &SelectArgs,
    origins: Origins,
    live: Option<&SessionRow>,
    agent: &str,
) -> Setting<Option<String>> {
    match (select.model.as_deref(), origins.model) {
        (Some(model), Origin::Environment) => {
            Setting::new(Some(model.to_owned()), Source::Environment, "STICKY_MODEL")
        }
        (Some(model), _) => Setting::new(Some(model.to_owned()), Source::Flag, "--model"),
        (None, _) => match live.filter(|live| live.agent == agent) {
            Some(SessionRow {
                model: Some(model), ..
            }) => Setting::new(
                Some(model.clone()),
                Source::Session,
                "the live session's model",
            ),
            _ => Setting::new(None, Source::Default, "none given: the agent's default"),
        },
    }
}

/// Reads the user's configuration and says where it is: `STICKY_CONFIG` (read here, once;
/// an absolute path to a file that must exist), else the user's configuration directory (where
/// a missing file is an empty configuration).
pub fn read_config() -> Result<(Config, ConfigFile), StickyError> {
    let (path, source, origin) = match std::env::var_os(CONFIG_VAR).filter(|v| !v.is_empty()) {
        Some(path) => (
            Some(absolute_config(PathBuf::from(path))?),
            Source::Environment,
            CONFIG_VAR,
        ),
        None => (
            dirs::config_dir().map(|dir| dir.join("sticky").join("config.toml")),
            Source::Default,
            "the user's configuration directory",
        ),
    };
    let config = match &path {
        Some(path) => Config::read(path)?,
        None => Config::default(),
    };
    // A file the user named is meant to be read: running on without it would quietly drop the
    // agent, program and arguments they chose. Only the default place may hold no file.
    if let (Some(path), Source::Environment, None) = (&path, source, &config.source) {
        return Err(StickyError::Usage(format!(
            "{CONFIG_VAR} names {}, which does not exist; create it, or unset {CONFIG_VAR} to \
             read the configuration from the user's configuration directory",
            path.display()
        )));
    }
    let shown = path.map(|path| path.display().to_string());
    let file = ConfigFile {
        path: Setting::new(shown, source, origin),
        exists: config.source.is_some(),
    };
    Ok((config, file))
}

/// `STICKY_CONFIG` as given, when it is absolute. A relative one would be read from whatever
/// directory sticky runs in (a cloned repository's file), which would then choose the agent's
/// program and arguments: refused as a relative `STICKY_<AGENT>_BIN` is.
fn absolute_config(path: PathBuf) -> Result<PathBuf, StickyError> {
    if path.is_absolute() {
        return Ok(path);
    }
    let plain: PathBuf = path
        .components()
        .filter(|part| *part != std::path::Component::CurDir)
        .collect();
    Err(StickyError::Usage(format!(
        "{CONFIG_VAR}={} is a relative path, which would read whatever the current directory \
         holds under that name and let it choose what sticky runs; give an absolute path \
         ({CONFIG_VAR}=\"$PWD/{}\")",
        path.display(),
        plain.display()
    )))
}

/// The thread: `--thread`, `STICKY_THREAD`, else `main`.
fn thread(global: &GlobalArgs, origins: Origins) -> Setting<String> {
    let (source, origin) = match origins.thread {
        Origin::Flag => (Source::Flag, "--thread"),
        Origin::Environment => (Source::Environment, "STICKY_THREAD"),
        Origin::Default => (Source::Default, "built-in default"),
    };
    Setting::new(global.thread.clone(), source, origin)
}

/// The project directory: found from `-C DIR` or the current directory.
fn project_dir(global: &GlobalArgs, project: &Project) -> ProjectDir {
    let dir = project.dir.display().to_string();
    ProjectDir {
        dir: match &global.directory {
            Some(start) => Setting::new(dir, Source::Flag, format!("-C {}", start.display())),
            None => Setting::new(dir, Source::Default, "from the current directory"),
        },
        found: project.found.describe(),
    }
}

/// The database: `STICKY_DB`, else `.sticky/sticky.db` in the project directory.
fn database(project: &Project) -> Setting<String> {
    let db = project.state.db.display().to_string();
    if project.db_overridden {
        Setting::new(db, Source::Environment, "STICKY_DB")
    } else {
        Setting::new(db, Source::Default, "the project's .sticky/ directory")
    }
}

/// The context threshold when the configuration sets none, in percent of the window.
pub const DEFAULT_CONTEXT_THRESHOLD: u8 = 80;

/// A value the configuration file may set, else `default`.
fn from_config<T>(config: &Config, value: Option<T>, default: T) -> Setting<T> {
    match (value, &config.source) {
        (Some(value), Some(file)) => {
            Setting::new(value, Source::Config, file.display().to_string())
        }
        _ => Setting::new(default, Source::Default, "built-in default"),
    }
}

/// The agent a conversation starts with: the configuration's `default_agent`, else `claude`.
fn default_agent(config: &Config) -> Setting<String> {
    match (&config.default_agent, &config.source) {
        (Some(agent), Some(file)) => {
            Setting::new(agent.clone(), Source::Config, file.display().to_string())
        }
        (agent, _) => Setting::new(
            agent.clone().unwrap_or_else(|| "claude".to_owned()),
            Source::Default,
            "built-in default",
        ),
    }
}

/// Whether the vault is on: the configuration's `vault`, else on.
fn vault(config: &Config) -> Setting<bool> {
    match (config.vault, &config.source) {
        (Some(on), Some(file)) => Setting::new(on, Source::Config, file.display().to_string()),
        _ => Setting::new(true, Source::Default, "built-in default"),
    }
}

/// A configured environment value as `config` shows it: hidden when its name suggests a
/// secret, because this output ends up in terminals, screen shares and CI logs.
fn shown(key: &str, value: &str) -> String {
    const SECRET: &[&str] = &[
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
    ];
    let upper = key.to_ascii_uppercase();
    if SECRET.iter().any(|word| upper.contains(word)) {
        "<hidden>".to_owned()
    } else {
        value.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_values_are_hidden() {
        assert_eq!(shown("ANTHROPIC_API_KEY", "sk-123"), "<hidden>");
        assert_eq!(shown("github_token", "ghp"), "<hidden>");
        assert_eq!(shown("ANTHROPIC_AUTH_TOKEN", "x"), "<hidden>");
        assert_eq!(shown("ANTHROPIC_MODEL", "sonnet"), "sonnet");
        assert_eq!(shown("DEBUG", "1"), "1");
    }

    #[test]
    fn sources_serialize_as_lowercase_words() {
        let setting = Setting::new("x", Source::Environment, "STICKY_AGENT");
        assert_eq!(
            serde_json::to_value(&setting).unwrap(),
            serde_json::json!({"value": "x", "source": "environment", "origin": "STICKY_AGENT"})
        );
    }

    #[test]
    fn the_default_agent_is_the_configured_one_else_claude() {
        let mut config = Config::default();
        let setting = default_agent(&config);
        assert_eq!(
            (setting.value.as_str(), setting.source),
            ("claude", Source::Default)
        );
        config.default_agent = Some("codex".into());
        config.source = Some("/home/u/.config/sticky/config.toml".into());
        let setting = default_agent(&config);
        assert_eq!(
            (setting.value.as_str(), setting.source),
            ("codex", Source::Config)
        );
        assert_eq!(setting.origin, "/home/u/.config/sticky/config.toml");
    }

    #[test]
    fn the_vault_is_on_unless_the_configuration_turns_it_off() {
        let mut config = Config::default();
        let setting = vault(&config);
        assert_eq!((setting.value, setting.source), (true, Source::Default));
        config.vault = Some(false);
        config.source = Some("/home/u/.config/sticky/config.toml".into());
        let setting = vault(&config);
        assert_eq!((setting.value, setting.source), (false, Source::Config));
        assert_eq!(setting.origin, "/home/u/.config/sticky/config.toml");
    }
}
