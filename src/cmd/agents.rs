//! `sticky agents`: the agents sticky knows, whether each is installed, where, which version.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::probe::versions;
use super::view::escape;
use crate::agent::Adapter;

#[derive(Serialize)]
struct AgentStatus {
    name: String,
    found: bool,
    path: Option<String>,
    version: Option<String>,
    error: Option<String>,
    default: bool,
}

/// Lists every agent with its program and version.
pub fn run(ctx: &Context) -> Result<Report> {
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
    }
    if ctx.json {
        return Report::json(&statuses);
    }
    let name_width = statuses.iter().map(|a| a.name.len()).max().unwrap_or(0);
    let version = |agent: &AgentStatus| match (&agent.path, &agent.version) {
        (None, _) => "missing".to_owned(),
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
    let default = adapter.name() == ctx.default_agent();
    match ctx.program(adapter) {
        Ok(path) => AgentStatus {
            name: adapter.name().to_owned(),
            found: true,
            version: None,
            path: Some(path.display().to_string()),
            error: None,
            default,
        },
        Err(error) => AgentStatus {
            name: adapter.name().to_owned(),
            found: false,
            path: None,
            version: None,
            error: Some(match error {
                crate::exit::StickyError::AgentMissing { reason, .. } => reason,
                other => other.to_string(),
            }),
            default,
        },
    }
}
