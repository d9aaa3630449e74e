//! A headless turn end to end: what the agent is asked, what reaches stdout, and how each kind of
//! failure ends (exit code, message, and the session left as it was).

use nix::sys::signal::Signal;
use serde_json::Value;

use crate::support::{AgentRun, TestEnv, fake_claude, is_uuid_v4, wait_for};

/// Asserts the agent ran as a headless Claude turn on session `id` (`--session-id` for a new
/// one, `--resume` for an existing one) with `prompt` as its prompt argument.
#[track_caller]
fn assert_headless_claude(run: &AgentRun, prompt: &str, session_flag: &str, id: &str) {
    let argv = run.argv();
    assert!(
        run.has("-p") && run.has("--verbose"),
        "print mode, verbose: {argv:?}"
    );
    assert_eq!(
        run.flag("--output-format").as_deref(),
        Some("stream-json"),
        "{argv:?}"
    );
    assert_eq!(run.flag(session_flag).as_deref(), Some(id), "{argv:?}");
    let other = if session_flag == "--resume" {
        "--session-id"
    } else {
        "--resume"
    };
    assert!(
        !run.has(other),
        "never both {session_flag} and {other}: {argv:?}"
    );
    assert_eq!(run.text("prompt_source"), Some("argv"), "{argv:?}");
    assert_eq!(run.prompt(), prompt);
    assert_eq!(
        run.0["rc"], 0,
        "the agent accepted its arguments: {}",
        run.0
    );
}

#[test]
fn the_first_turn_starts_a_session_and_the_second_resumes_it_with_its_history() {
    let env = TestEnv::new();

    let first = env.turn("first");
    assert_eq!(first.turn, 1);
    assert!(
        first.saw.is_empty(),
        "a fresh session has no history: {first:?}"
    );
    assert!(
        is_uuid_v4(&first.session),
        "sticky mints a uuid v4: {first:?}"
    );
    assert_headless_claude(
        &env.last_agent_run(),
        "first",
        "--session-id",
        &first.session,
    );

    let second = env.turn("second");
    assert_eq!(
        second.session, first.session,
        "the second turn resumes the same session"
    );
    assert_eq!(second.turn, 2);
    assert_eq!(second.saw, ["first"], "the agent saw the first turn");
    assert_headless_claude(&env.last_agent_run(), "second", "--resume", &first.session);

    let third = env.turn("third");
    assert_eq!(
        (third.turn, third.saw),
        (3, vec!["first".to_owned(), "second".to_owned()])
    );
    assert_eq!(env.agent_runs().len(), 3, "one agent run per turn");
}

#[test]
fn stdout_is_the_answer_and_a_newline_without_terminal_control_bytes() {
    let env = TestEnv::new();
    let output = env.ok(["hello"]);
    output.assert_clean_stdout();
    let answer = output.answer();
    assert_eq!(answer.prompt, "hello");
    assert_eq!(
        output.stdout.lines().count(),
        1,
        "only the answer: {:?}",
        output.stdout
    );

    let json = env.ok(["--json", "again"]);
    json.assert_clean_stdout();
}

#[test]
fn the_stored_session_is_the_one_the_agent_used() {
    let env = TestEnv::new();
    let answer = env.turn("remember me");
    let status = env.status_json();
    assert_eq!(
        status["session"]["agent_session_id"],
        answer.session.as_str()
    );
    assert_eq!(status["session"]["agent"], "claude");
    let transcript = env.transcript(&answer.session);
    assert!(
        std::fs::read_to_string(transcript)
            .expect("read the transcript")
            .contains("remember me"),
        "the agent's transcript of the stored session holds the turn"
    );
}

#[test]
fn agent_arguments_after_a_double_dash_reach_the_agent_unchanged() {
    let env = TestEnv::new();
    let agent_args = ["--permission-mode", "plan", "--add-dir", "/tmp/x y"];
    env.ok(["hi", "--"].into_iter().chain(agent_args));
    let run = env.last_agent_run();
    assert_eq!(
        run.prompt(),
        "hi",
        "agent arguments are not the prompt: {:?}",
        run.argv()
    );
    assert_eq!(
        run.0["ignored"],
        serde_json::json!(agent_args),
        "the agent took them as its own options, in order: {:?}",
        run.argv()
    );
}

#[test]
fn a_failing_agent_keeps_the_session_and_its_exit_code_passes_through() {
    let env = TestEnv::new();
    let first = env.turn("first");

    let failed = env.sticky(["second"]).env("FAKE_CLAUDE_EXIT", "3").run();
    failed.assert_code(3);
    failed.assert_stderr_contains("the model API failed (injected)");
    failed.assert_stderr_contains("sticky: ");
    failed.assert_clean_stdout();

    let status = env.status_json();
    assert_eq!(
        status["session"]["agent_session_id"],
        first.session.as_str()
    );
    assert_eq!(status["last_turn"]["status"], "failed");
    assert_eq!(status["last_turn"]["exit_code"], 3);

    let third = env.turn("third");
    assert_eq!(
        third.session, first.session,
        "a failed turn never rotates the session"
    );
    assert!(third.saw.contains(&"first".to_owned()), "{third:?}");
}

#[test]
fn an_agent_killed_by_a_signal_exits_128_plus_the_signal_and_keeps_the_session() {
    let env = TestEnv::new();
    let first = env.turn("first");
    env.sticky(["second"])
        .env("FAKE_CLAUDE_SIGNAL", "9")
        .run()
        .assert_code(128 + 9);
    let status = env.status_json();
    assert_eq!(
        status["session"]["agent_session_id"],
        first.session.as_str()
    );
    assert_eq!(status["last_turn"]["signal"], 9);
    assert_eq!(env.turn("third").session, first.session);
}

#[test]
fn a_lost_session_fails_with_73_names_it_and_never_starts_a_fresh_one() {
    let env = TestEnv::new();
    let first = env.turn("first");
    std::fs::remove_file(env.transcript(&first.session)).expect("delete the transcript");
    // And sticky's copy of it (tests/it/vault.rs restores from it).
    std::fs::remove_dir_all(env.project.join(".sticky/sticky.db.vault")).expect("no copy");

    let lost = env.sticky(["second"]).run();
    lost.assert_code(73);
    lost.assert_stderr_contains(&first.session);
    lost.assert_stderr_contains("sticky new");
    assert!(
        lost.stdout.is_empty(),
        "no answer on stdout: {}",
        lost.describe()
    );

    let runs = env.agent_runs();
    assert_eq!(
        runs.len(),
        2,
        "the agent ran once for the lost turn, not again afresh"
    );
    assert_eq!(
        runs[1].flag("--resume").as_deref(),
        Some(first.session.as_str())
    );
    assert!(
        !runs[1].has("--session-id"),
        "the prompt was not sent to a new session"
    );
    assert!(
        env.transcripts().is_empty(),
        "no fresh transcript appeared: {:?}",
        env.transcripts()
    );

    let status = env.status_json();
    assert_eq!(
        status["session"]["agent_session_id"],
        first.session.as_str(),
        "the lost session stays on record until `sticky new`"
    );
}

#[test]
fn an_agent_answering_from_another_session_is_amnesia_and_fails_with_74() {
    let env = TestEnv::new();
    let first = env.turn("first");
    let foreign = "0b2c9f6e-6a43-4d59-9a0b-4e7f2f3c8d11";

    let amnesia = env
        .sticky(["second"])
        .env("FAKE_CLAUDE_REPORT_SESSION", foreign)
        .run();
    amnesia.assert_code(74);
    amnesia.assert_stderr_contains(&first.session);
    amnesia.assert_stderr_contains(foreign);

    let status = env.status_json();
    assert_eq!(
        status["session"]["agent_session_id"],
        first.session.as_str()
    );
    assert_eq!(status["last_turn"]["status"], "failed");
    assert_eq!(
        env.turn("third").session,
        first.session,
        "sticky keeps the pinned session"
    );
}

#[test]
fn a_missing_agent_fails_with_72() {
    let mut env = TestEnv::new();
    env.without_fakes_on_path();
    let missing = env.sticky(["hello"]).run();
    missing.assert_code(72);
    missing.assert_stderr_contains("claude");
    assert!(env.agent_runs().is_empty());

    let bad_override = env
        .sticky(["hello"])
        .env("STICKY_CLAUDE_BIN", env.scratch.join("no-such-claude"))
        .run();
    bad_override.assert_code(72);
    bad_override.assert_stderr_contains("no-such-claude");
}

/// A literal `~` in PATH (`PATH="~/.local/bin:$PATH"` in a profile) is expanded by bash's own
/// lookup, never by the kernel's; sticky skips it as the relative entry it is, and said only
/// "not found" where the shell finds the agent (review 24, L2). The error names the entry that
/// holds it and how to write it.
#[test]
fn an_agent_on_a_path_entry_sticky_skips_is_named_with_the_way_to_write_it() {
    let mut env = TestEnv::new();
    env.without_fakes_on_path();
    let bin = env.home.join(".local/bin");
    std::fs::create_dir_all(&bin).expect("create ~/.local/bin");
    std::fs::copy(fake_claude(), bin.join("claude")).expect("copy the fake");
    let system = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<std::path::PathBuf> = std::env::split_paths(&system)
        .filter(|dir| dir.is_absolute() && !dir.join("claude").exists())
        .collect();
    dirs.insert(0, "~/.local/bin".into());
    let path = std::env::join_paths(dirs).expect("PATH entries have no ':'");
    let missing = env.sticky(["hello"]).env("PATH", &path).run();
    missing
        .assert_code(72)
        .assert_stderr_contains("PATH's `~/.local/bin` holds one, but sticky skips entries")
        .assert_stderr_contains("`$HOME/.local/bin` in place of `~/.local/bin`");
    assert!(env.agent_runs().is_empty());
}

#[test]
fn an_agent_that_is_not_executable_fails_with_72() {
    let env = TestEnv::new();
    let not_executable = env.scratch.join("claude-not-executable");
    std::fs::copy(fake_claude(), &not_executable).expect("copy the fake");
    std::fs::set_permissions(
        &not_executable,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .expect("drop the exec bit");
    env.sticky(["hello"])
        .env("STICKY_CLAUDE_BIN", &not_executable)
        .run()
        .assert_code(72);
    assert!(env.agent_runs().is_empty());
}

#[test]
fn sticky_claude_bin_chooses_the_program() {
    let mut env = TestEnv::new();
    env.without_fakes_on_path();
    let custom = env.scratch.join("bin/my-claude");
    std::fs::create_dir_all(custom.parent().expect("a parent")).expect("create bin");
    std::fs::copy(fake_claude(), &custom).expect("copy the fake");

    let output = env
        .sticky(["hello"])
        .env("STICKY_CLAUDE_BIN", &custom)
        .run();
    output.assert_success();
    assert_eq!(output.answer().prompt, "hello");
    assert_eq!(env.last_agent_run().text("program"), custom.to_str());
}

/// The keys and value types of a turn's `--json` object, per the contract.
#[track_caller]
fn assert_turn_json_shape(json: &Value) {
    for key in [
        "thread",
        "project",
        "session",
        "turn",
        "answer",
        "error",
        "exit_code",
    ] {
        assert!(json.get(key).is_some(), "--json lacks {key:?}: {json}");
    }
    let session = &json["session"];
    assert!(session["id"].is_i64(), "{json}");
    assert_eq!(session["agent"], "claude");
    assert!(
        session["model"].is_null() || session["model"].is_string(),
        "{json}"
    );
    assert!(session["agent_session_id"].is_string(), "{json}");
    assert!(session.get("rotated_from").is_some() && session.get("rotation_reason").is_some());
    let turn = &json["turn"];
    assert!(turn["id"].is_i64(), "{json}");
    assert!(turn["duration_ms"].is_u64(), "{json}");
    for key in ["status", "exit_code", "signal", "cost_usd"] {
        assert!(turn.get(key).is_some(), "turn lacks {key:?}: {json}");
    }
}

#[test]
fn json_describes_a_successful_turn() {
    let env = TestEnv::new();
    let output = env.ok(["--json", "hello json"]);
    let json = output.json();
    assert_turn_json_shape(&json);
    assert_eq!(json["thread"], "main");
    assert_eq!(json["project"], env.project.to_str().expect("utf-8 path"));
    assert_eq!(json["session"]["id"], 1);
    assert_eq!(json["session"]["model"], Value::Null);
    assert_eq!(json["session"]["rotated_from"], Value::Null);
    assert_eq!(json["session"]["rotation_reason"], Value::Null);
    assert!(is_uuid_v4(
        json["session"]["agent_session_id"]
            .as_str()
            .unwrap_or_default()
    ));
    assert_eq!(json["turn"]["id"], 1);
    assert_eq!(json["turn"]["status"], "ok");
    assert_eq!(json["turn"]["exit_code"], 0);
    assert_eq!(json["turn"]["signal"], Value::Null);
    assert_eq!(
        json["turn"]["cost_usd"], 0.0042,
        "the cost the agent reported"
    );
    assert_eq!(json["error"], Value::Null);
    let answer = crate::support::Answer::parse(json["answer"].as_str().unwrap_or_default())
        .unwrap_or_else(|| panic!("answer is the agent's text: {json}"));
    assert_eq!(answer.prompt, "hello json");
    assert_eq!(
        answer.session,
        json["session"]["agent_session_id"]
            .as_str()
            .unwrap_or_default()
    );
}

#[test]
fn json_describes_a_failed_turn_too() {
    let env = TestEnv::new();
    env.turn("first");
    let failed = env
        .sticky(["--json", "second"])
        .env("FAKE_CLAUDE_EXIT", "5")
        .run();
    failed.assert_code(5);
    let json = failed.json();
    assert_turn_json_shape(&json);
    assert_eq!(json["turn"]["status"], "failed");
    assert_eq!(json["turn"]["exit_code"], 5);
    assert_eq!(json["exit_code"], 5);
    assert_eq!(json["turn"]["id"], 2);
    assert!(json["error"].is_string(), "a failed turn says why: {json}");
}

#[test]
fn json_describes_a_lost_session() {
    let env = TestEnv::new();
    let first = env.turn("first");
    std::fs::remove_file(env.transcript(&first.session)).expect("delete the transcript");
    std::fs::remove_dir_all(env.project.join(".sticky/sticky.db.vault")).expect("no copy");
    let lost = env.sticky(["--json", "second"]).run();
    lost.assert_code(73);
    let json = lost.json();
    let error = json["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&first.session),
        "the error names the session: {json}"
    );
    assert_eq!(json["session"]["agent_session_id"], first.session.as_str());
}

#[test]
fn json_describes_a_missing_agent() {
    let mut env = TestEnv::new();
    env.without_fakes_on_path();
    let missing = env.sticky(["--json", "hello"]).run();
    missing.assert_code(72);
    let json = missing.json();
    assert!(json["error"].is_string(), "{json}");
    assert_eq!(json["answer"], Value::Null);
}

/// Whether the agent's transcript of `session` holds the user prompt `prompt` (the fake writes
/// it before it answers, so this is the handshake for "the agent is working on it").
fn agent_received(env: &TestEnv, session: &str, prompt: &str) -> bool {
    let needle = format!("\"content\":{}", serde_json::json!(prompt));
    std::fs::read_to_string(env.transcript(session)).is_ok_and(|text| text.contains(&needle))
}

#[test]
fn sigterm_interrupts_the_turn_through_the_agent_and_keeps_the_session() {
    let env = TestEnv::new();
    let first = env.turn("first");

    let mut slow = env
        .sticky(["slow turn"])
        .env("FAKE_CLAUDE_SLEEP", "30")
        .start();
    slow.wait_until("the agent got the prompt", || {
        agent_received(&env, &first.session, "slow turn")
    });
    slow.signal(Signal::SIGTERM);
    let interrupted = slow.wait();
    interrupted.assert_code(128 + 15);
    assert_eq!(
        env.last_agent_run().0["rc"],
        -15,
        "the agent itself got SIGTERM"
    );

    let status = env.status_json();
    assert_eq!(status["last_turn"]["status"], "interrupted");
    assert_eq!(
        status["session"]["agent_session_id"],
        first.session.as_str()
    );
    assert_eq!(
        env.turn("after").session,
        first.session,
        "an interrupt never rotates"
    );
}

#[test]
fn a_turn_whose_sticky_died_is_marked_abandoned_by_the_next_run() {
    let env = TestEnv::new();
    let first = env.turn("first");

    let mut doomed = env
        .sticky(["doomed"])
        .env("FAKE_CLAUDE_SLEEP", "30")
        .start();
    doomed.wait_until("the agent got the prompt", || {
        agent_received(&env, &first.session, "doomed")
    });
    doomed.signal(Signal::SIGKILL);
    assert_eq!(doomed.wait().signal, Some(9));
    // With sticky gone, its pseudo-terminal closes and the agent gets SIGHUP.
    wait_for("the orphaned agent to end", || env.agent_runs().len() == 2);

    assert_eq!(env.turn("after the crash").session, first.session);
    let log = env.log_json();
    let statuses: Vec<&Value> = log["sessions"][0]["turns"]
        .as_array()
        .expect("turns is an array")
        .iter()
        .map(|turn| &turn["status"])
        .collect();
    assert_eq!(statuses, ["ok", "abandoned", "ok"], "{log}");
}

#[test]
fn an_agent_exit_code_that_sticky_reserves_becomes_76_and_is_kept() {
    let env = TestEnv::new();
    let first = env.turn("first");
    for (agent, turn) in [(2, 2), (71, 3), (75, 4)] {
        let failed = env
            .sticky(["--json", "again"])
            .env("FAKE_CLAUDE_EXIT", agent.to_string())
            .run();
        failed.assert_code(76);
        let json = failed.json();
        assert_eq!(json["exit_code"], 76, "{json}");
        assert_eq!(
            json["turn"]["exit_code"], agent,
            "the agent's own code: {json}"
        );
        assert_eq!(json["turn"]["id"], turn);
        assert!(
            json["error"]
                .as_str()
                .is_some_and(|e| e.contains(&format!("exited with code {agent} (sticky exits 76"))),
            "{json}"
        );
    }
    // Text mode says so on stderr, and `log` shows the agent's own code.
    let text = env.sticky(["third"]).env("FAKE_CLAUDE_EXIT", "2").run();
    text.assert_code(76)
        .assert_stderr_contains("exited with code 2 (sticky exits 76");
    let log = env.ok(["log"]);
    assert!(log.stdout.contains("exit 2"), "{}", log.describe());
    let turns = &env.log_json()["sessions"][0]["turns"];
    assert_eq!(turns[4]["exit_code"], 2, "{turns}");
    // Codes sticky does not reserve pass through; the session stays.
    env.sticky(["fourth"])
        .env("FAKE_CLAUDE_EXIT", "3")
        .run()
        .assert_code(3);
    assert_eq!(env.turn("fifth").session, first.session);
}

#[test]
fn json_error_objects_have_the_keys_of_the_success_objects() {
    let env = TestEnv::new();
    env.turn("first");
    let bad_config = env.script("bad.toml", "default_agent = [\n");
    for args in [
        &["--json", "hello"][..],
        &["--json", "new", "hello"],
        &["--json", "new"],
        &["--json", "status"],
        &["--json", "log"],
        &["--json", "sessions"],
        &["--json", "threads"],
        &["--json", "config"],
        &["--json", "doctor"],
    ] {
        let success = env.ok(args).json();
        let failed = env.sticky(args).env("STICKY_CONFIG", &bad_config).run();
        assert_eq!(failed.code, Some(2), "{}", failed.describe());
        let error = failed.json();
        let keys = |value: &Value| -> std::collections::BTreeSet<String> {
            value
                .as_object()
                .expect("an object")
                .keys()
                .cloned()
                .collect()
        };
        let mut want = keys(&success);
        want.extend(["error".to_owned(), "exit_code".to_owned()]);
        assert_eq!(keys(&error), want, "{args:?}: {error}");
        assert_eq!(error["exit_code"], 2);
        assert!(
            error["error"]
                .as_str()
                .is_some_and(|e| e.contains("bad.toml")),
            "{error}"
        );
        if success["project"].is_string() {
            assert_eq!(
                error["project"], success["project"],
                "{args:?}: the project is known"
            );
        }
    }
}
