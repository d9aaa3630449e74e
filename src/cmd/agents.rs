//! `sticky agents`: the agents sticky knows, whether each is installed, where, which version.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::listing::Listing;
use super::view::print_json;
use crate::agent::Adapter;
use crate::exit::Exit;

/// How long `<agent> --version` may take before sticky stops waiting for it.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Serialize)]
struct AgentStatus {
    name: &'static str,
    found: bool,
    path: Option<String>,
    version: Option<String>,
    error: Option<String>,
    default: bool,
}

/// Lists every agent with its program and version.
pub fn run(ctx: &Context) -> Result<Exit> {
    let statuses: Vec<AgentStatus> = ctx
        .agents
        .all()
        .map(|adapter| status(ctx, adapter))
        .collect();
    if ctx.json {
        print_json(&statuses)?;
        return Ok(Exit::Success);
    }
    let name_width = statuses.iter().map(|a| a.name.len()).max().unwrap_or(0);
    let version = |agent: &AgentStatus| match (&agent.path, &agent.version) {
        (None, _) => "missing".to_owned(),
        (Some(_), Some(version)) => version.clone(),
        (Some(_), None) => "?".to_owned(),
    };
    let version_width = statuses.iter().map(|a| version(a).len()).max().unwrap_or(0);
    let mut out = Listing::stdout();
    for agent in &statuses {
        let mark = if agent.default { "*" } else { " " };
        let detail = agent
            .path
            .as_deref()
            .or(agent.error.as_deref())
            .unwrap_or_default();
        writeln!(
            out,
            "{mark} {:<name_width$}  {:<version_width$}  {detail}",
            agent.name,
            version(agent)
        )?;
    }
    out.finish()?;
    Ok(Exit::Success)
}

fn status(ctx: &Context, adapter: &'static dyn Adapter) -> AgentStatus {
    let default = adapter.name() == ctx.default_agent();
    match ctx.program(adapter) {
        Ok(path) => AgentStatus {
            name: adapter.name(),
            found: true,
            version: version(&path),
            path: Some(path.display().to_string()),
            error: None,
            default,
        },
        Err(error) => AgentStatus {
            name: adapter.name(),
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

/// The first line of `<program> --version`.
pub(super) fn version(program: &Path) -> Option<String> {
    let mut child = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < VERSION_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let output = child.wait_with_output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().find(|line| !line.trim().is_empty())?.trim();
    Some(line.to_owned())
}
