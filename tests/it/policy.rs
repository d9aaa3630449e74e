//! The session policy as the user sees it: which turns resume the pinned session and which
//! rotate to a fresh one (`new`, a different model), and what the record says about it.

use serde_json::Value;

use crate::support::TestEnv;

#[test]
fn new_with_a_prompt_rotates_to_a_fresh_session() {
    let env = TestEnv::new();
    let old = env.turn("before");

    let fresh = env.ok(["new", "after"]).answer();
    assert_ne!(
        fresh.session, old.session,
        "new starts another agent session"
    );
    assert_eq!(
        (fresh.turn, fresh.saw.len()),
        (1, 0),
        "with no history: {fresh:?}"
    );
    assert_eq!(
        env.last_agent_run().flag("--session-id"),
        Some(fresh.session.clone())
    );

    let status = env.status_json();
    assert_eq!(
        status["session"]["agent_session_id"],
        fresh.session.as_str()
    );
    assert_eq!(status["session"]["rotation_reason"], "new");
    let log = env.log_json();
    let sessions = log["sessions"].as_array().expect("sessions is an array");
    assert_eq!(sessions.len(), 2, "the old session stays on record: {log}");
    assert_eq!(
        sessions[0]["agent_session_id"],
        old.session.as_str(),
        "oldest first"
    );
    assert_eq!(status["session"]["rotated_from"], sessions[0]["id"]);

    let next = env.turn("continue");
    assert_eq!(
        next.session, fresh.session,
        "the next turn continues the new session"
    );
    assert_eq!(next.saw, ["after"]);
}

#[test]
fn new_without_a_prompt_only_rotates() {
    let env = TestEnv::new();
    let old = env.turn("before");

    env.ok(["new"]);
    assert_eq!(
        env.agent_runs().len(),
        1,
        "rotating alone does not run the agent"
    );

    let fresh = env.turn("after");
    assert_ne!(fresh.session, old.session);
    assert!(
        fresh.saw.is_empty(),
        "the turn after `new` starts afresh: {fresh:?}"
    );
    assert!(env.last_agent_run().has("--session-id"));
    let status = env.status_json();
    assert_eq!(
        status["session"]["agent_session_id"],
        fresh.session.as_str()
    );
    assert_eq!(status["session"]["rotation_reason"], "new");
}

#[test]
fn the_model_of_a_session_is_passed_on_every_resume() {
    let env = TestEnv::new();
    let first = env.ok(["-m", "model-a", "first"]).answer();
    assert_eq!(first.model, "model-a");
    assert_eq!(
        env.last_agent_run().flag("--model").as_deref(),
        Some("model-a")
    );

    let same = env.ok(["--model", "model-a", "same model"]).answer();
    assert_eq!(
        same.session, first.session,
        "the same model does not rotate"
    );
    assert_eq!(same.saw, ["first"]);

    let no_model = env.turn("no model");
    assert_eq!(
        no_model.session, first.session,
        "no model keeps the session"
    );
    assert_eq!(
        env.last_agent_run().flag("--model").as_deref(),
        Some("model-a"),
        "the session's model is passed on resume"
    );
    assert_eq!(no_model.model, "model-a");
    assert_eq!(env.status_json()["session"]["model"], "model-a");
}

#[test]
fn another_model_rotates_to_a_fresh_session_on_that_model() {
    let env = TestEnv::new();
    let first = env.ok(["-m", "model-a", "first"]).answer();

    let other = env.ok(["-m", "model-b", "switch"]).answer();
    assert_ne!(other.session, first.session, "a different model rotates");
    assert!(other.saw.is_empty(), "{other:?}");
    assert_eq!(other.model, "model-b");
    let run = env.last_agent_run();
    assert_eq!(run.flag("--session-id"), Some(other.session.clone()));
    assert_eq!(run.flag("--model").as_deref(), Some("model-b"));

    let status = env.status_json();
    assert_eq!(status["session"]["model"], "model-b");
    assert_eq!(status["session"]["rotation_reason"], "model-change");

    let after = env.turn("stay");
    assert_eq!(
        (after.session, after.model),
        (other.session, "model-b".to_owned())
    );
}

#[test]
fn sticky_model_in_the_environment_acts_like_the_flag() {
    let env = TestEnv::new();
    let first = env.sticky(["first"]).env("STICKY_MODEL", "model-env").run();
    first.assert_success();
    assert_eq!(first.answer().model, "model-env");
    let switched = env
        .sticky(["second"])
        .env("STICKY_MODEL", "model-other")
        .run();
    switched.assert_success();
    assert_ne!(switched.answer().session, first.answer().session);
}

#[test]
fn a_session_without_a_model_never_passes_one() {
    let env = TestEnv::new();
    env.turn("first");
    env.turn("second");
    for run in env.agent_runs() {
        assert!(
            !run.has("--model"),
            "no --model was asked for: {:?}",
            run.argv()
        );
    }
    assert_eq!(env.status_json()["session"]["model"], Value::Null);
}

#[test]
fn threads_keep_separate_sessions_in_one_project() {
    let env = TestEnv::new();
    let main = env.turn("on main");
    let other = env.ok(["-t", "other", "on other"]).answer();
    assert_ne!(other.session, main.session);
    assert!(other.saw.is_empty());

    assert_eq!(env.turn("main again").saw, ["on main"]);
    let other_again = env.ok(["--thread", "other", "other again"]).answer();
    assert_eq!(
        (other_again.session, other_again.saw),
        (other.session, vec!["on other".to_owned()])
    );
    assert_eq!(
        env.ok(["status", "-t", "other", "--json"]).json()["thread"],
        "other"
    );
}

#[test]
fn a_rotation_the_environment_asks_for_is_noted_on_stderr_and_one_a_flag_asks_for_is_not() {
    let env = TestEnv::new();
    let first = env.turn("one");
    let noted = "in the environment differs from the session's";

    let rotated = env
        .sticky(["two"])
        .env("STICKY_MODEL", "claude-opus-9")
        .run();
    rotated.assert_success();
    rotated.assert_stderr_contains(
        "sticky: STICKY_MODEL=claude-opus-9 in the environment differs from the session's model \
         (the agent's default): a new session starts (model-change) and the old one ends; unset \
         STICKY_MODEL where the model should not change",
    );
    let second = rotated.answer();
    assert_ne!(second.session, first.session);
    assert_eq!(rotated.stderr.lines().count(), 1, "{}", rotated.describe());

    // The same value again resumes: nothing to say.
    let same = env
        .sticky(["three"])
        .env("STICKY_MODEL", "claude-opus-9")
        .run();
    assert_eq!(same.answer().session, second.session);
    assert!(!same.stderr.contains(noted), "{}", same.describe());

    // A flag is the user's own choice, and --quiet and --json keep stderr for errors.
    for (i, args) in [
        &["-m", "claude-opus-10", "four"][..],
        &["--quiet", "five"],
        &["--json", "six"],
    ]
    .into_iter()
    .enumerate()
    {
        let run = env.sticky(args).env("STICKY_MODEL", format!("m-{i}")).run();
        run.assert_success();
        assert!(!run.stderr.contains(noted), "{}", run.describe());
    }
    assert_eq!(
        env.ok(["sessions", "--json"]).json()["sessions"]
            .as_array()
            .map(Vec::len),
        Some(5),
        "each of those rotated all the same"
    );

    let agent = env.sticky(["seven"]).env("STICKY_AGENT", "codex").run();
    agent.assert_success();
    agent.assert_stderr_contains(
        "sticky: STICKY_AGENT=codex in the environment differs from the session's agent claude: \
         a new session starts (agent-change) and the old one ends; unset STICKY_AGENT where the \
         agent should not change",
    );
}
