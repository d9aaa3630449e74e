//! Prompts and piped context reach the agent whole and literally: no shell in between, no
//! truncation, and inputs beyond Linux's 128 KiB limit for one argument go through stdin.

use std::fmt::Write as _;

use crate::support::TestEnv;

/// Text of `len` bytes whose every line is numbered, so a lost, doubled or reordered chunk shows.
fn numbered_text(len: usize, tag: &str) -> String {
    let mut text = String::with_capacity(len + 64);
    let mut line = 0;
    while text.len() < len {
        let _ = writeln!(text, "{tag} line {line:07} äöü €");
        line += 1;
    }
    let mut end = len;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}

#[test]
fn piped_stdin_is_added_to_the_prompt_as_context() {
    let env = TestEnv::new();
    let output = env
        .sticky(["review this"])
        .stdin("diff --git a/x b/x\n+added\n")
        .run();
    output.assert_success();
    let run = env.last_agent_run();
    assert_eq!(run.prompt(), "review this\n\ndiff --git a/x b/x\n+added\n");
    output.answer_to(run.prompt());
}

#[test]
fn piped_stdin_without_a_prompt_is_the_prompt() {
    let env = TestEnv::new();
    let output = env
        .sticky(Vec::<&str>::new())
        .stdin("explain the error")
        .run();
    output.assert_success();
    assert_eq!(env.last_agent_run().prompt(), "explain the error");
    assert_eq!(env.last_agent_run().text("mode"), Some("headless"));
}

#[test]
fn prompt_words_are_joined_with_spaces() {
    let env = TestEnv::new();
    env.ok(["fix", "the", "bug"]);
    assert_eq!(env.last_agent_run().prompt(), "fix the bug");
}

#[test]
fn prompts_arrive_literally_with_no_shell_in_between() {
    let env = TestEnv::new();
    let marker = env.scratch.join("pwned");
    let prompt = format!(
        "a $(touch {m}) b `touch {m}` c \"double\" 'single' $HOME ${{PATH}} \\n \\\\ ; | & > <\n\
         second line\ttab\n\n* ? [a-z] ~ !! # 🦀",
        m = marker.display()
    );
    let output = env.ok([prompt.as_str()]);
    assert_eq!(env.last_agent_run().prompt(), prompt);
    output.answer_to(&prompt);
    assert!(!marker.exists(), "nothing in the prompt was run by a shell");

    // An answer spanning lines reaches stdout with "\n" line ends, not the pty's "\r\n".
    output.assert_clean_stdout();
}

#[test]
fn a_prompt_that_looks_like_an_option_stays_a_prompt() {
    let env = TestEnv::new();
    let output = env
        .sticky(Vec::<&str>::new())
        .stdin("--resume is broken, -v too")
        .run();
    output.assert_success();
    let run = env.last_agent_run();
    assert_eq!(
        run.prompt(),
        "--resume is broken, -v too",
        "argv: {:?}",
        run.argv()
    );
    assert!(
        run.flag("--session-id").is_some(),
        "a fresh session, not a resume: {:?}",
        run.argv()
    );
}

#[test]
fn a_300_kib_prompt_arrives_whole() {
    let env = TestEnv::new();
    // One argument may not exceed 128 KiB on Linux, so the prompt is three words of 100 KiB.
    let words: Vec<String> = ["one", "two", "three"]
        .iter()
        .map(|tag| numbered_text(100 * 1024, tag))
        .collect();
    let prompt = words.join(" ");
    let output = env.sticky(&words).run();
    output.assert_success();

    let run = env.last_agent_run();
    assert_eq!(
        run.0["prompt_bytes"],
        prompt.len(),
        "the agent got every byte"
    );
    assert!(run.prompt() == prompt, "the agent got the prompt unchanged");
    assert_eq!(
        run.text("prompt_source"),
        Some("stdin"),
        "large prompts go through stdin"
    );
    assert!(
        run.argv().iter().all(|a| a.len() < 1024),
        "no huge argument was passed to the agent"
    );
    output.answer_to(&prompt);
    output.assert_clean_stdout();
}

#[test]
fn a_1_mib_piped_context_arrives_whole() {
    let env = TestEnv::new();
    let context = numbered_text(1024 * 1024, "ctx");
    let output = env.sticky(["summarize"]).stdin(context.clone()).run();
    output.assert_success();

    let expected = format!("summarize\n\n{context}");
    let run = env.last_agent_run();
    assert_eq!(run.0["prompt_bytes"], expected.len());
    assert!(run.prompt() == expected, "the context arrived unchanged");
    output.answer_to(&expected);

    let next = env.turn("and then?");
    assert_eq!(
        next.saw.len(),
        1,
        "the large turn is part of the session's history"
    );
}

#[test]
fn a_pipe_nobody_writes_or_closes_does_not_hang_a_turn_with_a_prompt() {
    // Some CI runners hand their steps such a stdin; the turn goes on without context.
    let env = TestEnv::new();
    let stderr_path = env.root().join("stderr");
    let mut child = env
        .sticky(["are you there?"])
        .command()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("start sticky");
    let _held_open = child.stdin.take();
    crate::support::wait_for("sticky to end without stdin's end", || {
        child.try_wait().expect("wait").is_some()
    });
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("nothing arrived on stdin"), "{stderr}");
    assert_eq!(env.last_agent_run().text("prompt"), Some("are you there?"));
}

#[test]
fn piped_stdin_starts_a_new_session_as_it_starts_a_turn() {
    let env = TestEnv::new();
    let first = env.turn("old work").session;
    let output = env.sticky(["new"]).stdin("start on X\n").run();
    output.assert_success();
    let run = env.last_agent_run();
    assert_eq!(run.prompt(), "start on X\n");
    let status = env.status_json();
    assert_ne!(status["session"]["agent_session_id"], first.as_str());
    assert_eq!(status["session"]["rotation_reason"], "new");
    assert_eq!(status["last_turn"]["prompt"], "start on X\n");
    // Without input (stdin at its end at once), `new` only rotates: no turn runs.
    let runs = env.agent_runs().len();
    env.ok(["new"]);
    assert_eq!(env.agent_runs().len(), runs);
    // With words, piped input is their context, as for a turn.
    env.sticky(["new", "review"])
        .stdin("the diff")
        .run()
        .assert_success();
    assert_eq!(env.last_agent_run().prompt(), "review\n\nthe diff");
}

#[test]
fn a_prompt_goes_before_the_agent_arguments_or_with_p() {
    let env = TestEnv::new();
    env.ok(["apply the fix", "--", "--permission-mode", "acceptEdits"]);
    let run = env.last_agent_run();
    assert_eq!(run.prompt(), "apply the fix");
    assert_eq!(
        run.flag("--permission-mode").as_deref(),
        Some("acceptEdits")
    );

    env.ok(["-p", "-v is broken", "--", "--permission-mode", "plan"]);
    let run = env.last_agent_run();
    assert_eq!(run.prompt(), "-v is broken");
    assert_eq!(run.flag("--permission-mode").as_deref(), Some("plan"));
    env.ok(["new", "-p", "--start over"]);
    assert_eq!(env.last_agent_run().prompt(), "--start over");

    // `sticky new` without a prompt runs no agent: arguments for it are refused, not dropped.
    env.sticky(["new", "--", "--permission-mode", "plan", "start over"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("give `sticky new` a prompt before `--`");
    // A prompt after `--` is the agent's argument, and the error says where the prompt goes.
    let runs = env.agent_runs().len();
    env.sticky(["--", "--permission-mode", "acceptEdits", "apply the fix"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("give the prompt before `--`");
    assert_eq!(env.agent_runs().len(), runs);
}
