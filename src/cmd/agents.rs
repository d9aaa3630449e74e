//! `sticky agents`: the agents sticky knows, whether each is installed, where, which version.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Result;
use serde::Serialize;

use super::Context;
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
    for agent in &statuses {
        let mark = if agent.default { "*" } else { " " };
        match (&agent.path, &agent.error) {
            (Some(path), _) => println!(
                "{mark} {:<10} {:<14} {path}",
                agent.name,
                agent.version.as_deref().unwrap_or("?")
            ),
            (None, Some(error)) => println!("{mark} {:<10} {:<14} {error}", agent.name, "missing"),
            (None, None) => {}
        }
    }
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
            error: Some(error.to_string()),
            default,
        },
    }
}

/// The first line of `<program> --version`, without the program's name if it repeats it.
fn version(program: &Path) -> Option<String> {
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
