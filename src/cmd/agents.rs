//! `sticky agents`: the agents sticky knows, whether each is installed, where, which version.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::listing::Listing;
use super::view::{escape, print_json};
use crate::agent::Adapter;
use crate::exit::Exit;

/// How long `<agent> --version` may take before sticky stops waiting for it.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

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
pub fn run(ctx: &Context) -> Result<Exit> {
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
        print_json(&statuses)?;
        return Ok(Exit::Success);
    }
    let name_width = statuses.iter().map(|a| a.name.len()).max().unwrap_or(0);
    let version = |agent: &AgentStatus| match (&agent.path, &agent.version) {
        (None, _) => "missing".to_owned(),
        (Some(_), Some(version)) => escape(version).into_owned(),
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
            "{mark} {:<name_width$}  {:<version_width$}  {}",
            escape(&agent.name),
            version(agent),
            escape(detail)
        )?;
    }
    out.finish()?;
    Ok(Exit::Success)
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

/// The first line of `<program> --version`.
pub(super) fn version(program: &Path) -> Option<String> {
    versions(vec![program.to_owned()]).pop().flatten()
}

/// The first line of `--version` of every program, asked of all at once: agents take from
/// milliseconds (Claude) to over a second (Gemini's node start) to answer, and a program that
/// hangs is killed at [`VERSION_TIMEOUT`]. tokio's processes and timers do exactly this without
/// a thread or a polling loop per program.
pub(super) fn versions(programs: Vec<PathBuf>) -> Vec<Option<String>> {
    let count = programs.len();
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return vec![None; count];
    };
    runtime.block_on(async {
        let mut probes = tokio::task::JoinSet::new();
        for (index, program) in programs.into_iter().enumerate() {
            probes.spawn(async move { (index, probe(&program).await) });
        }
        let mut found = vec![None; count];
        while let Some(Ok((index, version))) = probes.join_next().await {
            found[index] = version;
        }
        found
    })
}

async fn probe(program: &Path) -> Option<String> {
    let run = tokio::process::Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(VERSION_TIMEOUT, run)
        .await
        .ok()?
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().find(|line| !line.trim().is_empty())?.trim();
    Some(line.to_owned())
}
