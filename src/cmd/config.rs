//! `sticky config`: the effective settings and where each came from.
//!
//! The settings and their sources are resolved in `settings` (shared with `sticky doctor`);
//! this command adds the conversation's live session and prints them.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::view::escape;
use super::{Call, Run};
use crate::cli::SelectArgs;
use crate::config::{CarryKind, StdinMode};
use crate::settings::{self, AgentSettings, ConfigFile, ProjectDir, Setting};

/// The options of `sticky config`: the agent and model it reports on.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {
    /// The agent and model, chosen as a turn chooses them.
    #[command(flatten)]
    pub select: SelectArgs,
}

/// The `--json` object.
#[derive(Serialize)]
struct Shown<'a> {
    config_file: &'a ConfigFile,
    agent: Setting<String>,
    model: Setting<Option<String>>,
    thread: &'a Setting<String>,
    project: &'a ProjectDir,
    database: &'a Setting<String>,
    agents: Vec<AgentSettings>,
    vault: &'a Setting<bool>,
    carry_on_change: &'a Setting<CarryKind>,
    context_threshold: &'a Setting<u8>,
    stdin: Setting<StdinMode>,
}

/// The keys of [`Shown`], which its fields have no default value to give (settings with
/// their sources): the error object has them too. The integration tests hold them to the
/// object `--json` prints and to docs/json.md.
const KEYS: &[&str] = &[
    "config_file",
    "agent",
    "model",
    "thread",
    "project",
    "database",
    "agents",
    "vault",
    "carry_on_change",
    "context_threshold",
    "stdin",
];

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(&call.context()?, &self.select)
    }

    fn json_keys(&self) -> Vec<String> {
        KEYS.iter().map(ToString::to_string).collect()
    }
}

/// Prints the effective settings.
fn run(ctx: &Context, select: &SelectArgs) -> Result<Report> {
    let live = ctx.live_session()?;
    let settings = &ctx.settings;
    let agent = settings.agent(select, ctx.origins, live.as_ref());
    // The same refusal a turn would give, so `config` never blesses a setting a turn rejects.
    ctx.agents.get(&agent.value)?;
    let report = Shown {
        config_file: &settings.config_file,
        model: settings::model(select, ctx.origins, live.as_ref(), &agent.value),
        agent,
        thread: &settings.thread,
        project: &settings.project,
        database: &settings.database,
        agents: ctx
            .agents
            .all()
            .map(|adapter| settings.agent_settings(adapter))
            .collect(),
        vault: &settings.vault,
        carry_on_change: &settings.carry_on_change,
        context_threshold: &settings.context_threshold,
        // `--stdin` is a turn's flag: here its environment, configuration or default.
        stdin: settings.stdin(None)?,
    };
    if ctx.json {
        return Report::json(&report);
    }
    let mut out = Vec::new();
    print_text(&mut out, &report)?;
    Ok(Report::text(out))
}

fn print_text(out: &mut impl Write, report: &Shown<'_>) -> std::io::Result<()> {
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
    let vault = if report.vault.value { "on" } else { "off" };
    line(out, "vault", vault, &report.vault.origin)?;
    let carry = &report.carry_on_change;
    line(out, "carry", carry.value.as_str(), &carry.origin)?;
    let threshold = &report.context_threshold;
    let percent = format!("{}%", threshold.value);
    line(out, "context", &percent, &threshold.origin)?;
    let stdin = &report.stdin;
    line(out, "stdin", stdin.value.as_str(), &stdin.origin)?;
    for agent in &report.agents {
        print_agent(out, agent)?;
    }
    Ok(())
}

/// One agent's program, arguments and environment.
fn print_agent(out: &mut impl Write, agent: &AgentSettings) -> std::io::Result<()> {
    let kind = if agent.built_in {
        ""
    } else {
        " (defined in the config file)"
    };
    writeln!(out, "\nagent {}{kind}", escape(&agent.name))?;
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
    Ok(())
}

/// One setting; its value and origin quote paths and configured text, so both are escaped.
fn line(out: &mut impl Write, name: &str, value: &str, origin: &str) -> std::io::Result<()> {
    writeln!(out, "{name:<12} {}  ({})", escape(value), escape(origin))
}
