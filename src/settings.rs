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
use crate::config::{CarryKind, Config, StdinMode, ThreadDefault};
use crate::exit::StickyError;
use crate::git;
use crate::project::Project;
use crate::store::SessionRow;

pub mod env;

pub use env::home;

/// The variable that moves the configuration file.
const CONFIG_VAR: &str = env::CONFIG;

/// The variable that sets what a turn does with stdin, as `--stdin` does.
const STDIN_VAR: &str = env::STDIN;

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
        thread: Setting<String>,
        project: &Project,
        (config, config_file): (Config, ConfigFile),
    ) -> Self {
        Self {
            config_file,
            thread,
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
        if let Some(value) = env::stdin() {
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
        if let Some(program) = env::agent_bin(&var) {
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
            env::path().as_deref(),
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
    let (path, source, origin) = match env::config_file() {
        Some(path) => (
            Some(absolute_config(path)?),
            Source::Environment,
            CONFIG_VAR,
        ),
        None => (
            env::config_dir().map(|dir| dir.join("sticky").join("config.toml")),
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

/// The thread of the run, resolved: its name with what chose it, the git branch it follows
/// (a turn records it on the thread, `sticky threads` shows it), and what to say on stderr
/// about the choice (a detached HEAD; `@pr` outside a pull request's run).
#[derive(Debug, Clone)]
pub struct ThreadChoice {
    /// The thread's name.
    pub setting: Setting<String>,
    /// The git branch the thread is named after.
    pub branch: Option<String>,
    /// A note for stderr.
    pub note: Option<String>,
    /// The thread is `main` because git named no branch (a detached HEAD): a turn may go on
    /// there, but a command that forgets or rotates refuses it.
    pub fallback: bool,
}

impl ThreadChoice {
    /// The thread as `-t` or `STICKY_THREAD` gives it, `@branch` not followed: for a command
    /// that uses no thread.
    pub fn as_given(global: &GlobalArgs, origins: Origins) -> Self {
        let (source, origin) = match origins.thread {
            Origin::Flag => (Source::Flag, "--thread"),
            Origin::Environment => (Source::Environment, "STICKY_THREAD"),
            Origin::Default => (Source::Default, "built-in default"),
        };
        Self {
            setting: Setting::new(global.thread.clone(), source, origin),
            branch: None,
            note: None,
            fallback: false,
        }
    }
}

/// The name `-t` and `STICKY_THREAD` take for the current git branch's thread.
pub const FOLLOW_BRANCH: &str = "@branch";
/// The name `-t` and `STICKY_THREAD` take for the pull request's thread in GitHub Actions.
pub const FOLLOW_PR: &str = "@pr";

/// The thread: `--thread`, `STICKY_THREAD`, else the configuration's `thread`, else `main`.
/// `@branch` (or `thread = "branch"`) is the current git branch's name, as it is (`feature/login`
/// is thread `feature/login`): during a rebase, the branch being rebased; on any other detached
/// HEAD, GitHub Actions' `GITHUB_HEAD_REF` in a pull request's run, else `main`, said on stderr.
/// `@pr` is `pr-N` in a pull request's GitHub Actions run, else the branch's thread, as
/// `action.yml` names them. Asked for on the command line or in the environment, following the
/// branch outside git is an error (exit 2); from the configuration, which holds for every
/// directory, it is `main` there.
pub fn resolve_thread(
    global: &GlobalArgs,
    origins: Origins,
    config: &Config,
    dir: &std::path::Path,
) -> Result<ThreadChoice, StickyError> {
    resolve_thread_with(global, origins, config, dir, &env::var)
}

/// Whether a turn without `-t` uses thread `main`: `STICKY_THREAD` unset (or `main`) and the
/// configuration's `thread` unset (or `"main"`); a suggested command then leaves `-t main` out.
pub fn main_is_default(config: &Config) -> bool {
    env::thread().is_none_or(|thread| thread == "main")
        && matches!(config.thread, None | Some(ThreadDefault::Main))
}

/// How the thread follows git.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Follow {
    Branch,
    Pr,
}

/// [`resolve_thread`] with the environment read through `var`.
fn resolve_thread_with(
    global: &GlobalArgs,
    origins: Origins,
    config: &Config,
    dir: &std::path::Path,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<ThreadChoice, StickyError> {
    let (source, origin, follow) = thread_source(global, origins, config);
    let Some(follow) = follow else {
        return Ok(ThreadChoice {
            setting: Setting::new(global.thread.clone(), source, origin),
            branch: None,
            note: None,
            fallback: false,
        });
    };
    let followed = match follow {
        Follow::Pr => follow_pr(dir, var),
        Follow::Branch => follow_branch(dir, var),
    };
    let followed = match followed {
        Ok(followed) => followed,
        // The configuration holds for every directory: outside git, the default thread.
        Err(git::GitError::NotGit) if source == Source::Config => Followed {
            name: "main".into(),
            branch: None,
            how: "not in git: main".into(),
            note: None,
            fallback: false,
        },
        Err(error) if source == Source::Config => Followed {
            name: "main".into(),
            branch: None,
            how: "git failed: main".into(),
            note: Some(format!(
                "the configuration's thread follows the git branch, but {error}; thread main is \
                 used"
            )),
            fallback: true,
        },
        Err(error) => return Err(follow_error(&origin, dir, &error)),
    };
    Ok(ThreadChoice {
        setting: Setting::new(followed.name, source, format!("{origin}, {}", followed.how)),
        branch: followed.branch,
        note: followed.note,
        fallback: followed.fallback,
    })
}

/// What names the thread (`-t`, `STICKY_THREAD`, the configuration or the default), as a
/// setting's source and origin, and whether the name follows git.
fn thread_source(
    global: &GlobalArgs,
    origins: Origins,
    config: &Config,
) -> (Source, String, Option<Follow>) {
    match origins.thread {
        Origin::Flag | Origin::Environment => {
            let follow = match global.thread.as_str() {
                FOLLOW_BRANCH => Some(Follow::Branch),
                FOLLOW_PR => Some(Follow::Pr),
                _ => None,
            };
            // A name followed says which (`--thread @branch`); a plain one, the flag.
            let shown = |flag: &str, joiner: &str| match follow {
                Some(_) => format!("{flag}{joiner}{}", global.thread),
                None => flag.to_owned(),
            };
            if origins.thread == Origin::Flag {
                (Source::Flag, shown("--thread", " "), follow)
            } else {
                (Source::Environment, shown("STICKY_THREAD", "="), follow)
            }
        }
        Origin::Default => match (config.thread, &config.source) {
            (Some(chosen), Some(file)) => {
                let (word, follow) = match chosen {
                    ThreadDefault::Main => ("main", None),
                    ThreadDefault::Branch => ("branch", Some(Follow::Branch)),
                    ThreadDefault::Pr => ("pr", Some(Follow::Pr)),
                };
                let origin = format!("{}: thread = \"{word}\"", file.display());
                (Source::Config, origin, follow)
            }
            _ => (Source::Default, "built-in default".to_owned(), None),
        },
    }
}

/// The way out when `-t @branch` (or `STICKY_THREAD`) cannot follow the branch.
fn follow_error(origin: &str, dir: &std::path::Path, error: &git::GitError) -> StickyError {
    let way_out = "name the thread with -t NAME (or unset STICKY_THREAD), or set thread = \
                   \"branch\" in the configuration, which uses thread main outside git";
    match error {
        git::GitError::NotGit => StickyError::Usage(format!(
            "{origin} names the thread after the current git branch, but {} is not in a git \
             repository; {way_out}",
            dir.display()
        )),
        git::GitError::Failed(why) => StickyError::Usage(format!(
            "{origin} names the thread after the current git branch, which git cannot tell in \
             {} ({why}); {way_out}",
            dir.display()
        )),
    }
}

/// A thread named after git.
struct Followed {
    name: String,
    branch: Option<String>,
    /// How the name was found, for the setting's origin.
    how: String,
    note: Option<String>,
    /// `main`, as git named no branch.
    fallback: bool,
}

/// The current branch's thread.
fn follow_branch(
    dir: &std::path::Path,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Followed, git::GitError> {
    Ok(match git::head(dir)? {
        git::Head::Branch(name) => Followed {
            how: format!("git branch {name}"),
            branch: Some(name.clone()),
            name,
            note: None,
            fallback: false,
        },
        git::Head::Detached {
            commit,
            rebasing: Some(name),
        } => Followed {
            how: format!("branch {name}, being rebased"),
            note: Some(format!(
                "HEAD is detached at {commit} while branch {name} is rebased: thread {name}"
            )),
            branch: Some(name.clone()),
            name,
            fallback: false,
        },
        git::Head::Detached { commit, .. } => match head_ref(var) {
            // actions/checkout leaves a pull request's merge commit detached.
            Some(name) => Followed {
                how: format!("GITHUB_HEAD_REF {name}"),
                note: Some(format!(
                    "HEAD is detached at {commit}; thread {name} follows the pull request's \
                     branch (GITHUB_HEAD_REF)"
                )),
                branch: Some(name.clone()),
                name,
                fallback: false,
            },
            None => Followed {
                name: "main".into(),
                branch: None,
                how: format!("HEAD detached at {commit}: main"),
                note: Some(format!(
                    "HEAD is detached at {commit}, on no branch: thread main is used (-t NAME \
                     names another)"
                )),
                fallback: true,
            },
        },
    })
}

/// `GITHUB_HEAD_REF` in a GitHub Actions run: the pull request's branch.
fn head_ref(var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    var("GITHUB_HEAD_REF").filter(|_| in_actions(var))
}

fn in_actions(var: &dyn Fn(&str) -> Option<String>) -> bool {
    var("GITHUB_ACTIONS").as_deref() == Some("true")
}

/// The pull request's thread, `pr-N`, as `action.yml` names it: N is the event's
/// `pull_request.number` (or a commented pull request's `issue.number`), else the N of
/// `GITHUB_REF` `refs/pull/N/merge`. In a run of no pull request, the branch's thread
/// (`GITHUB_HEAD_REF`, else `GITHUB_REF_NAME`); outside GitHub Actions, `@branch`'s.
fn follow_pr(
    dir: &std::path::Path,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Followed, git::GitError> {
    if !in_actions(var) {
        let mut followed = follow_branch(dir, var)?;
        followed.note = Some(followed.note.map_or_else(
            || {
                format!(
                    "@pr: not in a GitHub Actions run, so thread {} follows the git branch",
                    followed.name
                )
            },
            |note| format!("@pr: not in a GitHub Actions run; {note}"),
        ));
        return Ok(followed);
    }
    let event = var("GITHUB_EVENT_PATH")
        .and_then(|path| std::fs::read(path).ok())
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok());
    let branch = head_ref(var).or_else(|| {
        var("GITHUB_REF")
            .filter(|reference| reference.starts_with("refs/heads/"))
            .and(var("GITHUB_REF_NAME"))
    });
    if let Some(number) = pr_number(event.as_ref(), var("GITHUB_REF").as_deref()) {
        return Ok(Followed {
            name: format!("pr-{number}"),
            how: format!("pull request #{number}"),
            branch,
            note: None,
            fallback: false,
        });
    }
    match head_ref(var).or_else(|| var("GITHUB_REF_NAME")) {
        Some(name) => Ok(Followed {
            how: format!("no pull request: {name}"),
            name,
            branch,
            note: None,
            fallback: false,
        }),
        None => Err(git::GitError::Failed(
            "this GitHub Actions run has no pull request and no branch (GITHUB_REF_NAME)".into(),
        )),
    }
}

/// The pull request's number, as `action.yml` finds it.
fn pr_number(event: Option<&serde_json::Value>, reference: Option<&str>) -> Option<u64> {
    let from_event = event.and_then(|event| {
        event
            .pointer("/pull_request/number")
            .and_then(serde_json::Value::as_u64)
            .or_else(|| {
                event
                    .pointer("/issue/pull_request")
                    .and_then(|_| event.pointer("/issue/number"))
                    .and_then(serde_json::Value::as_u64)
            })
    });
    from_event.or_else(|| {
        let rest = reference?.strip_prefix("refs/pull/")?;
        let (number, _) = rest.split_once('/')?;
        number.parse().ok()
    })
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
    fn the_pull_requests_number_comes_from_the_event_else_github_ref() {
        let event = serde_json::json!({"pull_request": {"number": 7}});
        assert_eq!(pr_number(Some(&event), Some("refs/heads/main")), Some(7));
        let comment = serde_json::json!({"issue": {"number": 9, "pull_request": {}}});
        assert_eq!(pr_number(Some(&comment), None), Some(9));
        let issue = serde_json::json!({"issue": {"number": 9}});
        assert_eq!(pr_number(Some(&issue), Some("refs/heads/main")), None);
        assert_eq!(pr_number(None, Some("refs/pull/12/merge")), Some(12));
        assert_eq!(pr_number(None, Some("refs/pull/x/merge")), None);
        assert_eq!(pr_number(None, None), None);
    }

    /// The thread `args` choose with `config` in `dir`, the environment being `vars`.
    fn chosen(
        args: &[&str],
        config: &Config,
        dir: &std::path::Path,
        vars: &[(&str, &str)],
    ) -> Result<ThreadChoice, StickyError> {
        let cli =
            crate::cli::Cli::try_parse_args(std::iter::once("sticky").chain(args.iter().copied()))
                .unwrap();
        let var = |name: &str| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        };
        resolve_thread_with(&cli.global, cli.origins, config, dir, &var)
    }

    #[test]
    fn following_git_outside_git_is_an_error_when_asked_and_main_when_configured() {
        let dir = tempfile::tempdir().unwrap();
        let error = chosen(
            &["-t", "@branch", "status"],
            &Config::default(),
            dir.path(),
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("is not in a git repository"), "{error}");
        assert!(error.contains("-t NAME"), "{error}");
        let mut config = Config::parse("thread = \"branch\"").unwrap();
        config.source = Some("/home/u/.config/sticky/config.toml".into());
        let choice = chosen(&["status"], &config, dir.path(), &[]).unwrap();
        assert_eq!(
            (
                choice.setting.value.as_str(),
                choice.setting.source,
                choice.branch
            ),
            ("main", Source::Config, None)
        );
        assert!(
            choice.setting.origin.contains("not in git"),
            "{:?}",
            choice.setting
        );
        let flag = chosen(&["-t", "review", "status"], &config, dir.path(), &[]).unwrap();
        assert_eq!(
            flag.setting.value, "review",
            "a flag wins over the configuration"
        );
    }

    #[test]
    fn at_pr_is_the_pull_requests_thread_in_github_actions() {
        let dir = tempfile::tempdir().unwrap();
        let vars = [
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_REF", "refs/pull/12/merge"),
            ("GITHUB_HEAD_REF", "feature/login"),
        ];
        let choice = chosen(
            &["-t", "@pr", "status"],
            &Config::default(),
            dir.path(),
            &vars,
        )
        .unwrap();
        assert_eq!(choice.setting.value, "pr-12");
        assert_eq!(choice.branch.as_deref(), Some("feature/login"));
        let push = [
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_REF", "refs/heads/main"),
            ("GITHUB_REF_NAME", "main"),
        ];
        let choice = chosen(
            &["-t", "@pr", "status"],
            &Config::default(),
            dir.path(),
            &push,
        )
        .unwrap();
        assert_eq!(
            (choice.setting.value.as_str(), choice.branch.as_deref()),
            ("main", Some("main")),
            "no pull request: the branch's thread, as action.yml names it"
        );
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
