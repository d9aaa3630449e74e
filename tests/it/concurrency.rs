//! Many sticky processes on one project: turns on one conversation run one at a time (the next
//! waits, or fails with 75 under `--no-wait`), and simultaneous first runs neither fail with
//! "database is locked" nor split the conversation into several sessions.

use crate::support::TestEnv;

/// The JSON lines of the transcript of `session`.
fn transcript_lines(env: &TestEnv, session: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(env.transcript(session))
        .expect("read the transcript")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a transcript line is JSON"))
        .collect()
}

/// The position in the transcript of the message of `kind` whose text mentions `prompt`.
fn position(lines: &[serde_json::Value], kind: &str, prompt: &str) -> usize {
    lines
        .iter()
        .position(|line| line["type"] == kind && line["message"].to_string().contains(prompt))
        .unwrap_or_else(|| panic!("no {kind} message about {prompt:?}"))
}

#[test]
fn a_turn_waits_for_the_running_one_and_no_wait_refuses_with_75() {
    let env = TestEnv::new();
    let session = env.turn("first").session;
    let release = env.scratch.join("release");

    let mut held = env
        .sticky(["held turn"])
        .env("FAKE_CLAUDE_HOLD", &release)
        .start();
    held.wait_until("the agent got the held prompt", || {
        transcript_lines(&env, &session)
            .iter()
            .any(|line| line["message"]["content"] == "held turn")
    });

    let refused = env.sticky(["--no-wait", "impatient"]).run();
    refused.assert_code(75);
    assert_eq!(
        env.agent_runs().len(),
        1,
        "the refused turn never started the agent"
    );

    let mut waiting = env.sticky(["waiting turn"]).start();
    waiting.wait_for_stderr("busy");
    std::fs::write(&release, "").expect("release the held turn");
    held.wait().assert_success();
    let after = waiting.wait();
    after.assert_success();
    assert_eq!(after.answer().session, session);

    let lines = transcript_lines(&env, &session);
    assert!(
        position(&lines, "assistant", "you said: held turn")
            < position(&lines, "user", "waiting turn"),
        "the waiting turn reached the agent only after the held one had answered"
    );
}

#[test]
fn simultaneous_first_turns_share_one_session() {
    let env = TestEnv::new();
    let runs: Vec<_> = (0..4)
        .map(|i| env.sticky([format!("parallel {i}")]).start())
        .collect();
    let answers: Vec<_> = runs
        .into_iter()
        .map(|run| {
            let output = run.wait();
            output.assert_success();
            output.answer()
        })
        .collect();

    let session = &answers[0].session;
    assert!(
        answers.iter().all(|answer| &answer.session == session),
        "one conversation, one session: {answers:?}"
    );
    let mut turns: Vec<u64> = answers.iter().map(|answer| answer.turn).collect();
    turns.sort_unstable();
    assert_eq!(turns, [1, 2, 3, 4], "each turn saw the ones before it");
    let log = env.log_json();
    assert_eq!(log["sessions"].as_array().map(Vec::len), Some(1), "{log}");
}

/// An agent whose tool runs `sticky "..."` on the thread its own turn holds (a user asking for
/// a second opinion from inside the agent) waited up to ten minutes for a lock that its own
/// turn, its ancestor, holds until it ends (review 22, L3). It is refused at once (75) naming
/// `-t` for a thread of its own; on another thread it runs; the outer turn ends as ever.
#[test]
fn a_sticky_the_agent_runs_on_its_own_thread_is_refused_at_once() {
    let env = TestEnv::new();
    let sticky = env!("CARGO_BIN_EXE_sticky");
    let inner = env.scratch.join("inner.out");
    let agent = env.script(
        "bin/nester",
        &format!(
            "#!/bin/sh\n'{sticky}' -a claude \"$2\" > '{o}' 2>&1\necho \"inner exit $?\" >> '{o}'\n\
             echo \"outer answer\"\n",
            o = inner.display()
        ),
    );
    let config = env.script(
        "config.toml",
        &format!(
            "[agents.nester]\nbin = \"{}\"\nheadless = [\"{{prompt}}\"]\n\
             new = [\"--new\", \"{{session_id}}\"]\nresume = [\"--resume\", \"{{session_id}}\"]\n\
             session_id = \"uuid\"\n",
            agent.display()
        ),
    );
    for (thread, expected) in [("main", "inner exit 75"), ("other", "inner exit 0")] {
        let output = env
            .sticky(["-a", "nester", "-t", thread, "a second opinion"])
            .env("STICKY_CONFIG", &config)
            .run();
        output.assert_success();
        assert_eq!(output.stdout, "outer answer\n", "{}", output.describe());
        let said = std::fs::read_to_string(&inner).expect("the inner sticky's output");
        assert!(said.contains(expected), "{thread}: {said}");
        if thread == "main" {
            assert!(said.contains("the one this sticky runs inside"), "{said}");
            assert!(said.contains("sticky -t NAME"), "{said}");
        }
    }
}

/// The same for `export` and `fork` the agent runs on the thread its own turn holds: they
/// waited up to ten minutes for the turn to end (review 24, L1); refused at once (75).
#[test]
fn an_export_or_fork_the_agent_runs_on_its_own_thread_is_refused_at_once() {
    let env = TestEnv::new();
    env.turn("first");
    let sticky = env!("CARGO_BIN_EXE_sticky");
    let inner = env.scratch.join("inner.out");
    let bundle = env.scratch.join("inside.sticky");
    let agent = env.script(
        "bin/nester",
        &format!(
            "#!/bin/sh\n'{sticky}' export -o '{b}' > '{o}' 2>&1\necho \"export exit $?\" >> '{o}'\n\
             '{sticky}' fork side >> '{o}' 2>&1\necho \"fork exit $?\" >> '{o}'\n\
             echo \"outer answer\"\n",
            b = bundle.display(),
            o = inner.display()
        ),
    );
    let config = env.script(
        "config.toml",
        &format!(
            "[agents.nester]\nbin = \"{}\"\nheadless = [\"{{prompt}}\"]\n\
             new = [\"--new\", \"{{session_id}}\"]\nresume = [\"--resume\", \"{{session_id}}\"]\n\
             session_id = \"uuid\"\n",
            agent.display()
        ),
    );
    let output = env
        .sticky(["-a", "nester", "-t", "nest", "go"])
        .env("STICKY_CONFIG", &config)
        .env("STICKY_THREAD", "nest")
        .run();
    output.assert_success();
    let said = std::fs::read_to_string(&inner).expect("the inner stickys' output");
    assert!(said.contains("export exit 75"), "{said}");
    assert!(said.contains("fork exit 75"), "{said}");
    assert!(said.contains("export it from outside that turn"), "{said}");
    assert!(!bundle.exists(), "no bundle was written");
}
