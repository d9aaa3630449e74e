//! sticky without a prompt at a terminal: the agent's own interactive UI on the sticky session,
//! and headless turns before and after it continue the same conversation.

use serde_json::Value;

use crate::support::TestEnv;

/// The agent session id in the fake's interactive banner.
#[track_caller]
fn banner_session(banner: &str) -> String {
    let at = banner
        .find("session=")
        .expect("the banner names the session")
        + "session=".len();
    banner[at..]
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn an_interactive_turn_starts_the_session_and_a_headless_follow_up_continues_it() {
    let env = TestEnv::new();
    let mut terminal = env.sticky(Vec::<&str>::new()).on_terminal();
    let banner = terminal.expect("> ");
    let session = banner_session(&banner);
    terminal.send("typed at the terminal\r");
    terminal.expect("you said: typed at the terminal");
    terminal.expect("> ");
    terminal.send("/exit\r");
    terminal.expect(&format!("claude --resume {session}"));
    assert_eq!(terminal.wait(), 0);

    let run = env.last_agent_run();
    assert_eq!(
        run.text("mode"),
        Some("interactive"),
        "the agent's own UI ran"
    );
    assert_eq!(
        run.flag("--session-id"),
        Some(session.clone()),
        "{:?}",
        run.argv()
    );
    assert_eq!(run.cwd(), env.project);

    let status = env.status_json();
    assert_eq!(status["session"]["agent_session_id"], session.as_str());
    assert_eq!(status["last_turn"]["mode"], "interactive");
    assert_eq!(status["last_turn"]["prompt"], Value::Null);

    let follow_up = env.turn("and headless now");
    assert_eq!(follow_up.session, session);
    assert_eq!(follow_up.saw, ["typed at the terminal"]);
}

#[test]
fn an_interactive_turn_resumes_the_session_of_earlier_headless_turns() {
    let env = TestEnv::new();
    let first = env.turn("headless first");

    let mut terminal = env.sticky(Vec::<&str>::new()).on_terminal();
    let banner = terminal.expect("> ");
    assert_eq!(banner_session(&banner), first.session);
    terminal.send("and interactive\r");
    let answer = terminal.expect("you said: and interactive");
    assert!(
        answer.contains(r#"saw=["headless first"]"#),
        "the agent's UI has the history: {answer}"
    );
    terminal.expect("> ");
    terminal.send("/exit\r");
    assert_eq!(terminal.wait(), 0);
    assert_eq!(
        env.last_agent_run().flag("--resume"),
        Some(first.session.clone())
    );

    assert_eq!(
        env.turn("headless again").saw,
        ["headless first", "and interactive"]
    );
}

#[test]
fn a_session_cleared_inside_the_agent_is_followed_by_the_next_turn() {
    let env = TestEnv::new();
    let first = env.turn("before the clear");

    let mut terminal = env.sticky(Vec::<&str>::new()).on_terminal();
    terminal.expect("> ");
    terminal.send("/clear\r");
    terminal.expect("(conversation cleared)");
    terminal.expect("> ");
    terminal.send("after the clear\r");
    let answer = terminal.expect("you said: after the clear");
    assert!(
        answer.contains("saw=[]"),
        "a cleared session is empty: {answer}"
    );
    terminal.expect("> ");
    terminal.send("/exit\r");
    terminal.expect("claude --resume ");
    assert_eq!(terminal.wait(), 0);
    let cleared = env.last_agent_run().text("session_id").unwrap().to_owned();
    assert_ne!(cleared, first.session);

    // The next turn continues what the user last saw, recorded as a rotation by the agent.
    let next = env.turn("and now headless");
    assert_eq!(next.session, cleared);
    assert_eq!(next.saw, ["after the clear"]);
    let sessions = env.log_json()["sessions"].as_array().unwrap().clone();
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[1]["rotation_reason"], "agent");
    assert_eq!(sessions[1]["rotated_from"], sessions[0]["id"]);
}

#[test]
fn a_cleared_session_with_nothing_said_is_not_followed() {
    let env = TestEnv::new();
    let first = env.turn("keep me");

    let mut terminal = env.sticky(Vec::<&str>::new()).on_terminal();
    terminal.expect("> ");
    terminal.send("/clear\r");
    terminal.expect("(conversation cleared)");
    terminal.expect("> ");
    terminal.send("/exit\r");
    assert_eq!(terminal.wait(), 0);

    // The cleared session has no transcript: resuming it could only fail, so sticky stays.
    let next = env.turn("still there?");
    assert_eq!(next.session, first.session);
    assert_eq!(next.saw, ["keep me"]);
}

#[test]
fn an_interactive_codex_session_is_learned_from_its_exit_line() {
    // Codex chooses its own thread ID and, in its UI, names it only when it exits
    // ("To continue this session, run: codex resume <id>").
    let env = TestEnv::new();
    let log = env.root().join("agent-runs.jsonl");
    let mut terminal = env
        .sticky(["-a", "codex"])
        .env("FAKE_CODEX_LOG", &log)
        .on_terminal();
    terminal.expect("> ");
    terminal.send("typed into codex\r");
    terminal.expect("you said: typed into codex");
    terminal.expect("> ");
    terminal.send("/quit\r");
    terminal.expect("codex resume ");
    assert_eq!(terminal.wait(), 0);
    let run = env.last_agent_run();
    assert!(
        run.has("--no-daemon"),
        "the TUI runs without its daemon: {:?}",
        run.argv()
    );
    let thread = run.text("session_id").unwrap().to_owned();
    assert_eq!(
        env.status_json()["session"]["agent_session_id"],
        thread.as_str()
    );

    let next = env
        .sticky(["-a", "codex", "and now headless"])
        .env("FAKE_CODEX_LOG", &log)
        .run();
    next.assert_success();
    assert!(
        next.stdout.contains(&format!("session={thread} "))
            && next.stdout.contains(r#"saw=["typed into codex"]"#),
        "the headless turn continues the interactive thread: {}",
        next.stdout
    );
}

/// How a test ends an interactive run, and the exit code sticky must end with.
#[derive(Clone, Copy)]
enum Ending {
    /// The user leaves the agent: `/exit`.
    Exit,
    /// The agent crashes (killed by SIGKILL) while answering.
    AgentCrash,
    /// sticky itself panics in the relay (a debug-build test hook).
    Panic,
    /// sticky receives this signal from outside.
    Signal(nix::sys::signal::Signal),
}

/// The pid of sticky, the one child of the shell on the terminal: from `/proc` on Linux, from
/// `pgrep` elsewhere (macOS has no `/proc`; Debian's minimal images have no `pgrep`).
fn child_of(shell: u32) -> i32 {
    #[cfg(target_os = "linux")]
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
        .expect("the shell's children");
    #[cfg(not(target_os = "linux"))]
    let children = {
        let pgrep = std::process::Command::new("pgrep")
            .args(["-P", &shell.to_string()])
            .output()
            .expect("pgrep");
        String::from_utf8(pgrep.stdout).expect("pgrep's pids")
    };
    children
        .split_whitespace()
        .next()
        .expect("sticky runs under the shell")
        .parse()
        .expect("a pid")
}

#[track_caller]
fn terminal_survives(ending: Ending, expected_code: i32) {
    use nix::sys::signal::kill;
    use nix::unistd::Pid;

    let env = TestEnv::new();
    let (before, after) = (
        env.root().join("stty.before"),
        env.root().join("stty.after"),
    );
    let mut run = env.sticky(Vec::<&str>::new());
    match ending {
        Ending::AgentCrash => run = run.env("FAKE_CLAUDE_SIGNAL", "9"),
        Ending::Panic => run = run.env("STICKY_TEST_PANIC", "relay"),
        Ending::Exit | Ending::Signal(_) => {}
    }
    let mut terminal = run.on_terminal_between_stty(&before, &after);
    if !matches!(ending, Ending::Panic) {
        terminal.expect("> ");
    }
    match ending {
        Ending::Exit => terminal.send("/exit\r"),
        Ending::AgentCrash => terminal.send("answer, then crash\r"),
        Ending::Panic => {}
        Ending::Signal(signal) => {
            let sticky = child_of(terminal.pid());
            kill(Pid::from_raw(sticky), signal).expect("signal sticky");
        }
    }
    terminal.expect(&format!("sticky exited {expected_code}"));
    terminal.expect("settings saved");
    let (before, after) = (
        std::fs::read_to_string(before).unwrap(),
        std::fs::read_to_string(after).unwrap(),
    );
    assert!(
        before.contains(':'),
        "stty -g printed the settings: {before:?}"
    );
    assert_eq!(
        before, after,
        "the terminal's settings after sticky are the ones before"
    );
}

#[test]
fn the_terminal_is_restored_when_the_agent_exits() {
    terminal_survives(Ending::Exit, 0);
}

#[test]
fn the_terminal_is_restored_when_the_agent_crashes() {
    terminal_survives(Ending::AgentCrash, 128 + 9);
}

#[test]
fn the_terminal_is_restored_when_sticky_panics() {
    // A panic is an internal error (70), not Rust's 101.
    terminal_survives(Ending::Panic, 70);
}

#[test]
fn the_terminal_is_restored_when_sticky_is_terminated() {
    terminal_survives(Ending::Signal(nix::sys::signal::Signal::SIGTERM), 128 + 15);
}

#[test]
fn the_terminal_is_restored_when_sticky_is_hung_up() {
    terminal_survives(Ending::Signal(nix::sys::signal::Signal::SIGHUP), 128 + 1);
}

#[test]
fn a_session_cleared_inside_gemini_is_followed_from_its_wrapped_exit_line() {
    // Gemini CLI has no session hook; its exit box names the session the user ended in, the ID
    // wrapped to its own line at 80 columns.
    let env = TestEnv::new();
    let log = env.root().join("agent-runs.jsonl");
    let gemini = |args: &[&str]| {
        env.sticky(args)
            .env("FAKE_GEMINI_LOG", &log)
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env_remove("GEMINI_CLI_HOME")
    };
    let first = gemini(&["-a", "gemini", "before the clear"]).run();
    first.assert_success();
    let before = env.status_json()["session"]["agent_session_id"].clone();

    let mut terminal = gemini(&[]).on_terminal();
    terminal.expect("> ");
    terminal.send("/clear\r");
    terminal.expect("(conversation cleared)");
    terminal.expect("> ");
    terminal.send("after the clear\r");
    let answer = terminal.expect("you said: after the clear");
    assert!(
        answer.contains("saw=[]"),
        "a cleared session is empty: {answer}"
    );
    terminal.expect("> ");
    terminal.send("/quit\r");
    terminal.expect("gemini --resume");
    assert_eq!(terminal.wait(), 0);
    let cleared = env.last_agent_run().text("session_id").unwrap().to_owned();
    assert_ne!(before, cleared.as_str());

    let sessions = env.log_json()["sessions"].as_array().unwrap().clone();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    assert_eq!(sessions[1]["rotation_reason"], "agent");
    assert_eq!(sessions[1]["agent_session_id"], cleared.as_str());
    let next = gemini(&["and now headless"]).run();
    next.assert_success();
    assert!(
        next.stdout.contains(&format!("session={cleared} "))
            && next.stdout.contains(r#"saw=["after the clear"]"#),
        "the headless turn continues the cleared session: {}",
        next.stdout
    );
}

#[test]
fn stickys_message_after_an_interrupted_agent_starts_on_a_fresh_line() {
    let env = TestEnv::new();
    let mut terminal = env.sticky(Vec::<&str>::new()).on_terminal();
    terminal.expect("> ");
    // Ctrl-C reaches the agent (sticky's terminal is raw): it dies at its prompt, mid-line.
    terminal.send("\x03");
    terminal.expect("sticky: claude was killed");
    terminal.expect("\n");
    let screen = terminal.contents();
    assert_eq!(terminal.wait(), 128 + 2, "the agent died of SIGINT");
    // The agent left the cursor after its prompt (`> ^C`): sticky's line starts a line of its
    // own, right below that one (no blank line).
    let at = screen.find("sticky: claude was killed");
    let before = &screen[..at.expect("sticky's message")];
    let mut lines = before.rsplit('\n');
    assert_eq!(lines.next(), Some(""), "a line starts: {screen:?}");
    let prompt_line = lines.next().unwrap_or_default().trim_matches('\r');
    assert!(prompt_line.starts_with("> "), "{screen:?}");
}
