//! `actionlint` and `zizmor --offline` over `action.yml` and every workflow of the README and
//! docs/ci.md, as issue 25 asks: actionlint reads the documented workflows with the action as a
//! local one (`uses: ./`), so it checks each `with:` input and `steps.sticky.outputs` against
//! `action.yml`; zizmor audits `action.yml` with its defaults, and the documented workflows as
//! written, with the two exceptions docs/ci.md names.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{action_path, documented_yaml_blocks};
use crate::support::skip;

/// zizmor's configuration for the documented workflows: `sticky-cli/sticky` at a release tag,
/// and no `adhoc-packages` audit (the agent CLI is installed with npm at a pinned version).
const README_ZIZMOR: &str = "\
rules:
  adhoc-packages:
    disable: true
  unpinned-uses:
    config:
      policies:
        \"sticky-cli/sticky\": ref-pin
        \"*\": hash-pin
";

/// Where `tool` is: the directory `.ci/run` installs the linters into (a venv under
/// `~/.cache/sticky-workflow-lint`), else PATH; `None` after a skip.
fn tool(name: &str) -> Option<PathBuf> {
    let venv = std::env::var_os("HOME").map(|home| {
        Path::new(&home)
            .join(".cache/sticky-workflow-lint/venv/bin")
            .join(name)
    });
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    });
    let found = venv.filter(|p| p.is_file()).or(on_path);
    if found.is_none() {
        skip::skip(&format!(
            "{name} is not installed (.ci/run installs it from PyPI)"
        ));
    }
    found
}

/// The workflows of the README and docs/ci.md (their `yaml` blocks with `jobs:`) written into
/// `dir/.github/workflows`, each through `edit`.
fn write_readme_workflows(dir: &Path, edit: impl Fn(&str) -> String) -> usize {
    let workflows = dir.join(".github/workflows");
    std::fs::create_dir_all(&workflows).expect("create .github/workflows");
    let blocks: Vec<String> = documented_yaml_blocks()
        .into_iter()
        .filter(|b| b.contains("\njobs:"))
        .collect();
    for (index, block) in blocks.iter().enumerate() {
        std::fs::write(workflows.join(format!("readme-{index}.yml")), edit(block))
            .expect("write a workflow");
    }
    blocks.len()
}

/// Runs `command`, asserting it succeeded, its output in the failure message.
#[track_caller]
fn assert_passes(mut command: Command, what: &str) {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        output.status.success(),
        "{what} found problems:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// actionlint passes on the documented workflows, the action's inputs and outputs checked.
#[test]
fn actionlint_passes_on_the_readmes_workflows_and_the_actions_interface() {
    let Some(actionlint) = tool("actionlint") else {
        return;
    };
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::copy(
        action_path().join("action.yml"),
        dir.path().join("action.yml"),
    )
    .expect("copy action.yml");
    let count = write_readme_workflows(dir.path(), |block| {
        block.replace("uses: sticky-cli/sticky@v0.1.0", "uses: ./")
    });
    assert_eq!(count, 3, "the comment, nightly and two-job workflows");
    // actionlint looks for the repository's root; a git repository marks it.
    let init = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.path())
        .status()
        .expect("run git init");
    assert!(init.success(), "git init");
    let mut command = Command::new(actionlint);
    command.arg("-no-color").current_dir(dir.path());
    assert_passes(command, "actionlint");
}

/// zizmor (offline) passes on `action.yml` with its defaults, and on the documented workflows.
#[test]
fn zizmor_passes_on_the_action_and_the_readmes_workflows() {
    let Some(zizmor) = tool("zizmor") else { return };
    let mut command = Command::new(&zizmor);
    command
        .args(["--offline", "--no-progress"])
        .arg(action_path().join("action.yml"));
    assert_passes(command, "zizmor on action.yml");

    let dir = tempfile::tempdir().expect("a directory");
    write_readme_workflows(dir.path(), str::to_owned);
    let config = dir.path().join("zizmor.yml");
    std::fs::write(&config, README_ZIZMOR).expect("write zizmor's configuration");
    let mut command = Command::new(&zizmor);
    command
        .args(["--offline", "--no-progress", "--config"])
        .arg(&config)
        .arg(dir.path().join(".github/workflows"));
    assert_passes(command, "zizmor on the documented workflows");
}
