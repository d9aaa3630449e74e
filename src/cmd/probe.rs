//! Asking programs for their version (`sticky agents`, `sticky doctor`, `sticky export`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// How long `<agent> --version` may take before sticky stops waiting for it.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

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

/// `program --version`, with the search lists an agent gets (`crate::search_lists`): a
/// `#!/usr/bin/env node` agent would otherwise find a repository's own `node` through a
/// relative PATH entry (review 22, H3).
async fn probe(program: &Path) -> Option<String> {
    let mut command = tokio::process::Command::new(program);
    command
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let run = crate::search_lists::apply_tokio(&mut command).output();
    let output = tokio::time::timeout(VERSION_TIMEOUT, run)
        .await
        .ok()?
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().find(|line| !line.trim().is_empty())?.trim();
    Some(line.to_owned())
}
