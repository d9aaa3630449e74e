//! What sticky tells about a project: `status` and `log` (text and `--json`) show what happened,
//! and `--help` documents the exit codes.

use serde_json::Value;

use crate::support::TestEnv;

/// A project with two sessions: one turn on the first, `new` with one ok and one failed turn.
struct History {
    env: TestEnv,
    old: String,
    new: String,
}

fn history() -> History {
    let env = TestEnv::new();
    let old = env.turn("first prompt").session;
    let new = env.ok(["new", "second prompt"]).answer().session;
    env.sticky(["third prompt"])
        .env("FAKE_CLAUDE_EXIT", "4")
        .run()
        .assert_code(4);
    History { env, old, new }
}

#[test]
fn status_json_shows_the_project_session_and_last_turn() {
    let History { env, old: _, new } = history();
    let status = env.status_json();
    assert_eq!(status["project"], env.project.to_str().expect("utf-8 path"));
    assert_eq!(
        status["database"],
        env.project
            .join(".sticky/sticky.db")
            .to_str()
            .expect("utf-8 path")
    );
    assert_eq!(status["thread"], "main");

    let session = &status["session"];
    assert_eq!(session["agent"], "claude");
    assert_eq!(session["model"], Value::Null);
    assert_eq!(session["agent_session_id"], new.as_str());
    assert_eq!(session["rotation_reason"], "new");
    assert!(session["rotated_from"].is_i64(), "{status}");
    assert_eq!(
        session["directory"],
        env.project.to_str().expect("utf-8 path")
    );
    assert!(session["created_at"].is_i64(), "{status}");
    assert_eq!(session["turns"], 2, "{status}");

    let last = &status["last_turn"];
    assert_eq!(last["status"], "failed");
    assert_eq!(last["exit_code"], 4);
    assert_eq!(last["signal"], Value::Null);
    assert_eq!(last["mode"], "headless");
    assert_eq!(last["prompt"], "third prompt");
    assert!(
        last["duration_ms"].is_u64() && last["started_at"].is_i64(),
        "{status}"
    );
    assert!(last["id"].is_i64(), "{status}");
    assert!(last.get("cost_usd").is_some(), "{status}");
}

#[test]
fn status_text_names_the_session_and_the_last_turn() {
    let History { env, old, new } = history();
    let status = env.ok(["status"]);
    let text = &status.stdout;
    for needle in [new.as_str(), "claude", "main", "failed"] {
        assert!(
            text.contains(needle),
            "status lacks {needle:?}\n{}",
            status.describe()
        );
    }
    assert!(
        text.contains(env.project.to_str().expect("utf-8 path")),
        "{}",
        status.describe()
    );
    assert!(
        !text.contains(&old),
        "status is about the current session\n{}",
        status.describe()
    );
    status.assert_clean_stdout();
}

#[test]
fn log_json_lists_every_session_and_turn_oldest_first() {
    let History { env, old, new } = history();
    let log = env.log_json();
    assert_eq!(log["thread"], "main");
    let sessions = log["sessions"].as_array().expect("sessions is an array");
    assert_eq!(sessions.len(), 2, "{log}");

    assert_eq!(sessions[0]["agent_session_id"], old.as_str());
    assert_eq!(sessions[0]["rotated_from"], Value::Null);
    assert_eq!(sessions[1]["agent_session_id"], new.as_str());
    assert_eq!(sessions[1]["rotated_from"], sessions[0]["id"]);
    assert_eq!(sessions[1]["rotation_reason"], "new");

    let first_turns = sessions[0]["turns"].as_array().expect("turns is an array");
    assert_eq!(first_turns.len(), 1, "{log}");
    assert_eq!(first_turns[0]["status"], "ok");
    assert_eq!(first_turns[0]["exit_code"], 0);
    assert_eq!(first_turns[0]["cost_usd"], 0.0042);

    let second_turns = sessions[1]["turns"].as_array().expect("turns is an array");
    let statuses: Vec<&Value> = second_turns.iter().map(|t| &t["status"]).collect();
    assert_eq!(statuses, ["ok", "failed"], "{log}");
    assert_eq!(second_turns[1]["exit_code"], 4);
    assert!(
        second_turns[0]["id"].as_i64() < second_turns[1]["id"].as_i64(),
        "turns oldest first: {log}"
    );
}

#[test]
fn log_text_shows_both_sessions_and_their_prompts() {
    let History { env, old, new } = history();
    let log = env.ok(["log"]);
    let text = &log.stdout;
    for needle in [
        &old,
        &new,
        "first prompt",
        "second prompt",
        "third prompt",
        "failed",
    ] {
        assert!(
            text.contains(needle),
            "log lacks {needle:?}\n{}",
            log.describe()
        );
    }
    assert!(
        text.find(&old) < text.find(&new),
        "the older session comes first\n{}",
        log.describe()
    );
    log.assert_clean_stdout();
}

#[test]
fn log_of_a_project_without_history_is_empty_and_creates_nothing() {
    let env = TestEnv::new();
    let log = env.log_json();
    assert_eq!(log["sessions"], serde_json::json!([]));
    assert!(!env.project.join(".sticky").exists());
}

#[test]
fn help_documents_the_exit_codes() {
    let env = TestEnv::new();
    let help = env.ok(["--help"]);
    for needle in [
        "Exit codes",
        "72",
        "73",
        "74",
        "75",
        "session lost",
        "amnesia",
        "128+N",
    ] {
        assert!(
            help.stdout.contains(needle),
            "--help lacks {needle:?}\n{}",
            help.describe()
        );
    }
    assert!(
        !env.project.join(".sticky").exists(),
        "--help touches nothing"
    );
}
