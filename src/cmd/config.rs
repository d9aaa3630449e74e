//! `sticky config`: the effective settings and where each came from.
//!
//! Precedence is flags > environment > configuration file > built-in defaults: clap resolves
//! the first two (`env =` on the flags) and records which one won ([`Origins`]); this module
//! adds the configuration file and the defaults. The [`Setting`] shape (value, source, origin)
//! is shared with `sticky doctor`.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::listing::Listing;
use super::view::{escape, print_json};
use crate::agent::program::{ChosenBy, override_var};
use crate::agent::{Adapter, BUILT_IN};
use crate::cli::{GlobalArgs, Origin, Origins, SelectArgs};
use crate::config::Config;
use crate::exit::Exit;
use crate::store::SessionRow;

/// What chose a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Source {
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
#[derive(Debug, Serialize)]
pub(super) struct Setting<T> {
    pub value: T,
    pub source: Source,
    /// The flag, variable or file, or why the default applies.
    pub origin: String,
}

impl<T> Setting<T> {
    fn new(value: T, source: Source, origin: impl Into<String>) -> Self {
        Self {
            value,
            source,
            origin: origin.into(),
        }
    }
}

/// The `--json` object.
#[derive(Serialize)]
struct Report {
    config_file: ConfigFile,
    agent: Setting<String>,
    model: Setting<Option<String>>,
    thread: Setting<String>,
    project: Project,
    database: Setting<String>,
    agents: Vec<AgentSettings>,
}

#[derive(Serialize)]
pub(super) struct ConfigFile {
    #[serde(flatten)]
    pub path: Setting<Option<String>>,
    /// Whether the file exists (a missing file is an empty configuration).
    pub exists: bool,
}

#[derive(Serialize)]
pub(super) struct Project {
    #[serde(flatten)]
    pub dir: Setting<String>,
    /// Why this directory is the project (`.sticky/`, git root, current directory).
    pub found: &'static str,
}

#[derive(Serialize)]
struct AgentSettings {
    name: &'static str,
    /// Built into sticky, or defined in the configuration file.
    built_in: bool,
    /// The program that would run (`value`: `null` when it cannot be found), what chose it
    /// (`environment`, `config` or `path`) and the variable, file or name that did.
    program: Setting<Option<String>>,
    /// Why the program cannot run.
    error: Option<String>,
    /// Arguments from the configuration file, given before the ones after `--`.
    args: Vec<String>,
    /// Environment from the configuration file (secret-looking values hidden).
    env: BTreeMap<String, String>,
}

/// Prints the effective settings.
pub fn run(
    ctx: &Context,
    global: &GlobalArgs,
    select: &SelectArgs,
    origins: Origins,
) -> Result<Exit> {
    let live = live_session(ctx)?;
    let agent = agent(ctx, select, origins, live.as_ref());
    // The same refusal a turn would give, so `config` never blesses a setting a turn rejects.
    ctx.agents.get(&agent.value)?;
    let report = Report {
        config_file: config_file(ctx),
        model: model(select, origins, live.as_ref(), &agent.value),
        agent,
        thread: thread(ctx, origins),
        project: project(ctx, global),
        database: database(ctx),
        agents: ctx
            .agents
            .all()
            .map(|adapter| agent_settings(ctx, adapter))
            .collect(),
    };
    if ctx.json {
        print_json(&report)?;
        return Ok(Exit::Success);
    }
    let mut out = Listing::stdout();
    print_text(&mut out, &report)?;
    out.finish()?;
    Ok(Exit::Success)
}

fn print_text(out: &mut impl Write, report: &Report) -> std::io::Result<()> {
    let file = &report.config_file;
    let path = file
        .path
        .value
        .as_deref()
        .unwrap_or("(no configuration directory)");
    let exists = if file.exists { "" } else { ", not found" };
    writeln!(
        out,
        "config file  {}  ({}{exists})",
        escape(path),
        escape(&file.path.origin)
    )?;
    line(out, "agent", &report.agent.value, &report.agent.origin)?;
    let model = report.model.value.as_deref().unwrap_or("-");
    line(out, "model", model, &report.model.origin)?;
    line(out, "thread", &report.thread.value, &report.thread.origin)?;
    let project = &report.project;
    let why = format!("{}; {}", project.dir.origin, project.found);
    line(out, "project", &project.dir.value, &why)?;
    line(
        out,
        "database",
        &report.database.value,
        &report.database.origin,
    )?;
    for agent in &report.agents {
        let kind = if agent.built_in {
            ""
        } else {
            " (defined in the config file)"
        };
        writeln!(out, "\nagent {}{kind}", escape(agent.name))?;
        match (&agent.program.value, &agent.error) {
            (Some(program), _) => line(out, "  program", program, &agent.program.origin)?,
            (None, error) => line(
                out,
                "  program",
                "not found",
                error.as_deref().unwrap_or_default(),
            )?,
        }
        if !agent.args.is_empty() {
            line(out, "  args", &agent.args.join(" "), "config file")?;
        }
        for (key, value) in &agent.env {
            line(out, "  env", &format!("{key}={value}"), "config file")?;
        }
    }
    Ok(())
}

/// One setting; its value and origin quote paths and configured text, so both are escaped.
fn line(out: &mut impl Write, name: &str, value: &str, origin: &str) -> std::io::Result<()> {
    writeln!(out, "{name:<12} {}  ({})", escape(value), escape(origin))
}

/// The configuration file: `STICKY_CONFIG`, else the user's configuration directory.
pub(super) fn config_file(ctx: &Context) -> ConfigFile {
    let from_env = std::env::var_os("STICKY_CONFIG").is_some_and(|value| !value.is_empty());
    let path = Config::path().map(|path| path.display().to_string());
    ConfigFile {
        path: if from_env {
            Setting::new(path, Source::Environment, "STICKY_CONFIG")
        } else {
            Setting::new(path, Source::Default, "the user's configuration directory")
        },
        exists: ctx.config.source.is_some(),
    }
}

/// The live session of the conversation, if the database and the thread exist (reads only).
pub(super) fn live_session(ctx: &Context) -> Result<Option<SessionRow>> {
    let Some(store) = ctx.existing_store()? else {
        return Ok(None);
    };
    match store.thread(&ctx.thread)? {
        Some(thread) => store.live_session(thread.id),
        None => Ok(None),
    }
}

/// The agent the next turn uses, as the session policy picks it: `--agent` or
/// `STICKY_AGENT`; else the live session's agent (a turn keeps it); else the configuration's
/// `default_agent`, else `claude`.
pub(super) fn agent(
    ctx: &Context,
    select: &SelectArgs,
    origins: Origins,
    live: Option<&SessionRow>,
) -> Setting<String> {
    if let Some(agent) = &select.agent {
        return match origins.agent {
            Origin::Environment => Setting::new(agent.clone(), Source::Environment, "STICKY_AGENT"),
            Origin::Flag | Origin::Default => Setting::new(agent.clone(), Source::Flag, "--agent"),
        };
    }
    if let Some(live) = live {
        return Setting::new(
            live.agent.clone(),
            Source::Session,
            "the live session's agent",
        );
    }
    match (&ctx.config.default_agent, &ctx.config.source) {
        (Some(agent), Some(file)) => {
            Setting::new(agent.clone(), Source::Config, file.display().to_string())
        }
        _ => Setting::new(
            ctx.default_agent().to_owned(),
            Source::Default,
            "built-in default",
        ),
    }
}

/// The model the next turn uses with `agent`: `--model` or `STICKY_MODEL`; else the live
/// session's model when the turn keeps its agent; else none (the agent's default).
pub(super) fn model(
    select: &SelectArgs,
    origins: Origins,
    live: Option<&SessionRow>,
    agent: &str,
) -> Setting<Option<String>> {
    match (&select.model, origins.model) {
        (Some(model), Origin::Environment) => {
            Setting::new(Some(model.clone()), Source::Environment, "STICKY_MODEL")
        }
        (Some(model), _) => Setting::new(Some(model.clone()), Source::Flag, "--model"),
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

/// The thread: `--thread`, `STICKY_THREAD`, else `main`.
pub(super) fn thread(ctx: &Context, origins: Origins) -> Setting<String> {
    let (source, origin) = match origins.thread {
        Origin::Flag => (Source::Flag, "--thread"),
        Origin::Environment => (Source::Environment, "STICKY_THREAD"),
        Origin::Default => (Source::Default, "built-in default"),
    };
    Setting::new(ctx.thread.clone(), source, origin)
}

/// The project directory: found from `-C DIR` or the current directory.
pub(super) fn project(ctx: &Context, global: &GlobalArgs) -> Project {
    let dir = ctx.project.dir.display().to_string();
    Project {
        dir: match &global.directory {
            Some(start) => Setting::new(dir, Source::Flag, format!("-C {}", start.display())),
            None => Setting::new(dir, Source::Default, "from the current directory"),
        },
        found: ctx.project.found.describe(),
    }
}

/// The database: `STICKY_DB`, else `.sticky/sticky.db` in the project directory.
pub(super) fn database(ctx: &Context) -> Setting<String> {
    let db = ctx.project.state.db.display().to_string();
    if ctx.project.db_overridden {
        Setting::new(db, Source::Environment, "STICKY_DB")
    } else {
        Setting::new(db, Source::Default, "the project's .sticky/ directory")
    }
}

/// Where the program of `adapter` comes from and what it resolves to.
pub(super) fn program(
    ctx: &Context,
    adapter: &dyn Adapter,
) -> (Setting<Option<String>>, Option<String>) {
    let chosen = ctx.program_choice(adapter.name());
    let (source, origin) = match chosen.map(|chosen| chosen.by) {
        Some(ChosenBy::Environment) => (Source::Environment, override_var(adapter.name())),
        Some(ChosenBy::Config(file)) => (Source::Config, file.display().to_string()),
        None => (Source::Path, format!("`{}` on PATH", adapter.program())),
    };
    match ctx.program(adapter) {
        Ok(path) => (
            Setting::new(Some(path.display().to_string()), source, origin),
            None,
        ),
        Err(error) => (Setting::new(None, source, origin), Some(error.to_string())),
    }
}

fn agent_settings(ctx: &Context, adapter: &'static dyn Adapter) -> AgentSettings {
    let (program, error) = program(ctx, adapter);
    let settings = ctx.config.agent(adapter.name());
    AgentSettings {
        name: adapter.name(),
        built_in: BUILT_IN.iter().any(|known| known.name() == adapter.name()),
        program,
        error,
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
}
