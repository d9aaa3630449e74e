//! Issue 14, `--carry`: a rotation starts the new session with a recap of the old one, placed
//! before the user's prompt: sticky's own record (`recap`) or a handoff summary the old session
//! writes in one extra, recorded turn (`summary`), bounded by `--carry-max`; the rotation
//! records what was carried, and the configuration can make it the default.

use serde_json::Value;

use crate::agents::{AGENTS, Agent};
use crate::support::{AgentRun, TestEnv};

fn codex() -> &'static Agent {
    AGENTS.iter().find(|agent| agent.name == "codex").unwrap()
}

/// Two Claude turns; returns their answers as printed (without the final newline).
fn two_claude_turns(env: &TestEnv) -> [String; 2] {
    ["we pick sqlite for the store", "and the schema?"]
        .map(|prompt| env.ok([prompt]).stdout.trim_end().to_owned())
}

/// The sessions of `sessions --json`.
fn sessions(env: &TestEnv) -> Vec<Value> {
    env.ok(["sessions", "--json"]).json()["sessions"]
        .as_array()
        .unwrap()
        .clone()
}

/// The runs of the fake `program` (its `program` ends with that name).
fn runs_of(env: &TestEnv, program: &str) -> Vec<AgentRun> {
    env.agent_runs()
        .into_iter()
        .filter(|run| run.text("program").is_some_and(|p| p.ends_with(program)))
        .collect()
}

#[test]
fn carry_on_an_agent_change_puts_the_old_prompts_and_answers_before_the_prompt() {
    let env = TestEnv::new();
    let answers = two_claude_turns(&env);
    let claude_id = env.status_json()["session"]["agent_session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let carried = codex()
        .sticky(&env, &["-a", "codex", "--carry", "what did we decide?"])
        .run();
    carried.assert_success();
    let first = runs_of(&env, "codex").pop().unwrap();
    let sent = first.prompt();
    for text in [
        "we pick sqlite for the store",
        "and the schema?",
        &answers[0],
        &answers[1],
        &claude_id,
        "claude session",
    ] {
        assert!(sent.contains(text), "{text:?} missing from {sent}");
    }
    assert!(
        sent.find("and the schema?") < sent.find("we pick sqlite"),
        "newest first"
    );
    assert!(sent.ends_with("\n\nwhat did we decide?"), "{sent}");
    // The turn records the user's prompt; the rotation records the recap and its size.
    let last = env.status_json()["last_turn"].clone();
    assert_eq!(last["prompt"], "what did we decide?");
    let new = sessions(&env).pop().unwrap();
    assert_eq!(new["carried"], "recap");
    let recap = sent.len() - "\n\nwhat did we decide?".len();
    assert_eq!(new["carried_bytes"], recap, "{new}");
    let lineage = env.ok(["sessions"]).stdout;
    assert!(
        lineage.contains(&format!("carried a recap of {recap} bytes")),
        "{lineage}"
    );
    let log = env.ok(["log"]).stdout;
    assert!(log.contains("(agent-change) · carried a recap"), "{log}");
    let status = env.ok(["status"]).stdout;
    assert!(
        status.contains("(agent-change) carrying a recap of"),
        "{status}"
    );

    // The next Codex turn continues the Codex session, with the prompt alone.
    let codex_id = env.status_json()["session"]["agent_session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    codex().sticky(&env, &["and now?"]).run().assert_success();
    let next = runs_of(&env, "codex").pop().unwrap();
    assert_eq!(next.prompt(), "and now?");
    assert_eq!(
        next.flag("resume").as_deref(),
        Some(codex_id.as_str()),
        "{:?}",
        next.argv()
    );
}

#[test]
fn every_agent_gets_the_recap_in_its_first_request() {
    for agent in AGENTS.iter().filter(|agent| agent.name != "claude") {
        let env = TestEnv::new();
        two_claude_turns(&env);
        let name = agent.name;
        agent
            .sticky(&env, &["-a", name, "--carry", "go on"])
            .run()
            .assert_success();
        let sent = env.agent_runs().pop().unwrap();
        let sent = sent.prompt();
        assert!(
            sent.contains("we pick sqlite for the store"),
            "{name}: {sent}"
        );
        assert!(sent.contains("and the schema?"), "{name}: {sent}");
        assert!(sent.ends_with("\n\ngo on"), "{name}: {sent}");
        let last = env.status_json()["last_turn"].clone();
        assert_eq!(last["prompt"], "go on", "{name}");
        assert_eq!(sessions(&env).pop().unwrap()["carried"], "recap", "{name}");
    }
}

#[test]
fn carry_summary_asks_the_old_session_for_a_handoff_in_a_recorded_turn() {
    let env = TestEnv::new();
    two_claude_turns(&env);
    codex()
        .sticky(&env, &["-a", "codex", "--carry=summary", "go on"])
        .run()
        .assert_success();
    let turns: Vec<Value> = env.log_json()["sessions"][0]["turns"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(turns.len(), 3, "the summary turn ran on the old session");
    assert_eq!(turns[2]["purpose"], "handoff");
    let summary = env.ok(["show", &turns[2]["id"].to_string()]).stdout;
    let sent = runs_of(&env, "codex").pop().unwrap().prompt().to_owned();
    assert!(sent.contains(summary.trim_end()), "{summary} not in {sent}");
    assert!(sent.ends_with("\n\ngo on"), "{sent}");
    assert_eq!(sessions(&env).pop().unwrap()["carried"], "summary");
    let log = env.ok(["log"]).stdout;
    assert!(
        log.contains("(handoff summary for --carry=summary)"),
        "{log}"
    );
}

#[test]
fn a_failed_summary_turn_falls_back_to_the_recap_and_says_so() {
    let env = TestEnv::new();
    two_claude_turns(&env);
    let run = codex()
        .sticky(&env, &["-a", "codex", "--carry=summary", "go on"])
        .env("FAKE_CLAUDE_EXIT", "1")
        .run();
    run.assert_success()
        .assert_stderr_contains("carrying sticky's own recap");
    let sent = runs_of(&env, "codex").pop().unwrap().prompt().to_owned();
    assert!(sent.contains("we pick sqlite for the store"), "{sent}");
    assert_eq!(sessions(&env).pop().unwrap()["carried"], "recap");
    let turns = env.log_json()["sessions"][0]["turns"].clone();
    assert_eq!(turns[2]["purpose"], "handoff");
    assert_eq!(turns[2]["status"], "failed");
}

#[test]
fn carry_is_bounded_and_refused_where_nothing_is_replaced() {
    let env = TestEnv::new();
    two_claude_turns(&env);
    env.sticky(["--carry", "more"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("this turn resumes session #1");
    env.sticky(["new", "--carry"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("give one");
    env.sticky(["new", "--carry", "--carry-max", "100", "start again"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("at least 512 bytes");
    env.ok(["new", "--carry", "--carry-max", "600", "start again"]);
    let new = sessions(&env).pop().unwrap();
    let bytes = new["carried_bytes"].as_i64().unwrap();
    assert!(bytes <= 600 && bytes > 400, "{new}");
    let sent = env.last_agent_run().prompt().to_owned();
    assert!(
        sent.contains("--- turn #2"),
        "the newest turn is kept: {sent}"
    );
    assert!(sent.contains("you said: and the schema?"), "whole: {sent}");
    assert!(
        !sent.contains("Prompt: we pick sqlite for the store"),
        "the oldest is cut to fit: {sent}"
    );
    assert!(sent.contains("…\n[end of the recap"), "{sent}");
}

#[test]
fn the_configuration_makes_carry_the_default_for_model_and_agent_changes() {
    let mut env = TestEnv::new();
    let config = env.root().join("config.toml");
    std::fs::write(&config, "carry_on_change = \"recap\"\n").unwrap();
    env.set_var("STICKY_CONFIG", &config);
    env.turn("remember the number 42");
    env.ok(["-m", "claude-opus-5-5", "which number?"]);
    let sent = env.last_agent_run().prompt().to_owned();
    assert!(sent.contains("remember the number 42"), "{sent}");
    assert_eq!(sessions(&env).pop().unwrap()["carried"], "recap");
    // `new` carries only when asked; --no-carry turns the default off.
    env.ok(["new", "fresh start"]);
    assert_eq!(env.last_agent_run().prompt(), "fresh start");
    env.ok(["-m", "claude-haiku-4-5", "--no-carry", "bare"]);
    assert_eq!(env.last_agent_run().prompt(), "bare");
    assert_eq!(sessions(&env).pop().unwrap()["carried"], Value::Null);
}

/// Issue 26: `--carry` reads a preview of the turn's plan, and the plan is made once, so a
/// rotation that `STICKY_MODEL` asks for is noted once, not once per plan.
#[test]
fn a_rotation_the_environment_asks_for_with_carry_is_noted_once() {
    let env = TestEnv::new();
    two_claude_turns(&env);
    let run = env
        .sticky(["--carry", "go on"])
        .env("STICKY_MODEL", "claude-opus-9")
        .run();
    run.assert_success();
    let notes = run.stderr.matches("STICKY_MODEL=claude-opus-9").count();
    assert_eq!(notes, 1, "{}", run.describe());
    assert_eq!(sessions(&env).pop().unwrap()["carried"], "recap");
}

/// Issue 26: the handoff turn is a turn like any other: what it added to the old session's
/// files goes into the vault, as after any turn.
#[test]
fn the_handoff_turn_vaults_the_old_sessions_files() {
    let env = TestEnv::new();
    two_claude_turns(&env);
    let old = env.status_json()["session"]["agent_session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    codex()
        .sticky(&env, &["-a", "codex", "--carry=summary", "go on"])
        .run()
        .assert_success();
    let copy = env
        .project
        .join(".sticky/sticky.db.vault/claude")
        .join(&old)
        .join("files");
    let transcript = crate::vault::files_under(&copy)
        .into_iter()
        .find(|path| path.ends_with(format!("{old}.jsonl")))
        .unwrap_or_else(|| panic!("no copy of {old}'s transcript under {}", copy.display()));
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(
        text.contains("Write a handoff summary"),
        "the vault's copy holds the handoff turn: {text}"
    );
}
