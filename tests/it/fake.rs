//! The fake claude itself, against the texts and rules the research observed on the real
//! Claude Code 2.1.332 (shared/research/agents.md §3.1): if the fixture drifts from them, the
//! other tests stop proving anything about the real agent.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::{Answer, TestEnv, fake_claude};

const ID: &str = "6f9f4a4e-8b1e-4c47-9d6a-2a0c5e1f3b7d";

/// Runs the fake directly in `dir` with `args`, stdin from /dev/null.
fn claude(env: &TestEnv, dir: &Path, args: &[&str]) -> Output {
    Command::new(fake_claude())
        .args(args)
        .current_dir(dir)
        .env("HOME", &env.home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("FAKE_CLAUDE_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run the fake claude")
}

fn headless<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["-p", "--output-format", "stream-json", "--verbose"];
    all.extend_from_slice(args);
    all
}

#[track_caller]
fn assert_refused(output: &Output, stderr: &str) {
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(output.stdout.is_empty(), "stdout stays empty: {output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stderr).trim_end(), stderr);
}

/// The answer in the `result` event of a stream-json run.
#[track_caller]
fn result_answer(output: &Output) -> Answer {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|event| event["type"] == "result")
        .unwrap_or_else(|| panic!("no result event: {stdout}"));
    Answer::parse(result["result"].as_str().unwrap_or_default()).expect("the fake's answer")
}

#[test]
fn the_fake_keeps_claudes_session_rules() {
    let env = TestEnv::without_git();
    let project = &env.project;

    let first = claude(&env, project, &headless(&["--session-id", ID, "--", "one"]));
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(
        stdout.starts_with(r#"{"type":"system","subtype":"init""#),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("\n\x1b[?25h"),
        "the cursor is shown again at the end"
    );
    let encoded = project
        .to_string_lossy()
        .replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    assert!(
        env.claude_projects()
            .join(encoded)
            .join(format!("{ID}.jsonl"))
            .is_file()
    );

    let again = claude(&env, project, &headless(&["--session-id", ID, "x"]));
    assert_refused(
        &again,
        &format!("Error: Session ID {ID} is already in use."),
    );
    // The existence check is per project directory only.
    let elsewhere = claude(&env, &env.scratch, &headless(&["--session-id", ID, "x"]));
    assert_eq!(elsewhere.status.code(), Some(0), "{elsewhere:?}");

    let resumed = claude(
        &env,
        project,
        &headless(&["--resume", ID, "--model", "m2", "two"]),
    );
    let answer = result_answer(&resumed);
    assert_eq!(
        (answer.turn, answer.saw, answer.model),
        (2, vec!["one".to_owned()], "m2".to_owned())
    );
    let restored = claude(&env, project, &headless(&["--resume", ID, "three"]));
    assert_eq!(
        result_answer(&restored).model,
        "m2",
        "resume restores the session's model"
    );
}

#[test]
fn the_fake_fails_like_claude() {
    let env = TestEnv::without_git();
    let dir = &env.project;
    assert_refused(
        &claude(&env, dir, &headless(&["--session-id", "not-a-uuid", "x"])),
        "Error: Invalid session ID. Must be a valid UUID.",
    );
    assert_refused(
        &claude(&env, dir, &headless(&["--resume", ID, "x"])),
        &format!("No conversation found with session ID: {ID}"),
    );
    assert_refused(
        &claude(
            &env,
            dir,
            &headless(&["--resume", ID, "--session-id", ID, "x"]),
        ),
        "Error: --session-id with --continue or --resume also needs --fork-session.",
    );
    assert_refused(
        &claude(&env, dir, &["-p", "--output-format", "stream-json", "x"]),
        "Error: When using --print, --output-format=stream-json requires --verbose",
    );
}
