//! `sticky agents`: the agents sticky knows, whether each is installed, where, which version.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::probe::versions;
use super::view::escape;
use super::{Call, Run, json_keys};
use crate::agent::{Adapter, tested};

/// `sticky agents` takes no options of its own.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {}

#[derive(Serialize)]
struct AgentStatus {
    name: String,
    found: bool,
    path: Option<String>,
    version: Option<String>,
    error: Option<String>,
    default: bool,
    /// The version sticky was tested with (`crate::agent::tested`), for a known agent.
    tested_version: Option<&'static str>,
    /// Whether the installed version is newer than the tested one.
    newer_than_tested: bool,
}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(&call.unthreaded()?)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<Vec<AgentStatus>>()
    }

    fn refuses_thread(&self) -> Option<&'static str> {
        Some("it lists the agents, not a conversation's")
    }
}

/// Lists every agent with its program and version.
fn run(ctx: &Context) -> Result<Report> {
    let mut statuses: Vec<AgentStatus> = ctx
        .agents
        .all()
        .map(|adapter| status(ctx, adapter))
        .collect();
    let programs = statuses
        .iter()
        .filter_map(|agent| agent.path.as_ref().map(PathBuf::from))
        .collect();
    let mut found = versions(programs).into_iter();
    for agent in statuses.iter_mut().filter(|agent| agent.path.is_some()) {
        agent.version = found.next().flatten();
        agent.newer_than_tested = agent
            .version
            .as_deref()
            .is_some_and(|version| tested::newer_than_tested(&agent.name, version).is_some());
    }
    if ctx.json {
        return Report::json(&statuses);
    }
    let name_width = statuses.iter().map(|a| a.name.len()).max().unwrap_or(0);
    let version = |agent: &AgentStatus| match (&agent.path, &agent.version) {
        (None, _) => "missing".to_owned(),
        (Some(_), Some(version)) if agent.newer_than_tested => format!(
            "{} (newer than tested {})",
            escape(version),
            agent.tested_version.unwrap_or_default()
        ),
        (Some(_), Some(version)) => escape(version).into_owned(),
        (Some(_), None) => "?".to_owned(),
    };
    let version_width = statuses.iter().map(|a| version(a).len()).max().unwrap_or(0);
    let mut out = Vec::new();
    for agent in &statuses {
        let mark = if agent.default { "*" } else { " " };
        let detail = agent
            .path
            .as_deref()
            .or(agent.error.as_deref())
            .unwrap_or_default();
        writeln!(
            out,
            "{mark} {:<name_width$}  {:<version_width$}  {}",
            escape(&agent.name),
            version(agent),
            escape(detail)
        )?;
    }
    Ok(Report::text(out))
}

fn status(ctx: &Context, adapter: &dyn Adapter) -> AgentStatus {
    let (path, error) = match ctx.program(adapter) {
        Ok(path) => (Some(path.display().to_string()), None),
        Err(crate::exit::StickyError::AgentMissing { reason, .. }) => (None, Some(reason)),
        Err(other) => (None, Some(other.to_string())),
    };
    AgentStatus {
        name: adapter.name().to_owned(),
        found: path.is_some(),
        path,
        version: None,
        error,
        default: adapter.name() == ctx.default_agent(),
        tested_version: tested::tested_version(adapter.name()),
        newer_than_tested: false,
    }
}
