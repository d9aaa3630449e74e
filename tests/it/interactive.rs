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
