//! Review 23: where the state lives (an adversarial try of `.sticky/` discovery, `STICKY_DB`,
//! copies, moves, shared databases, threads and agent homes). Each test fails on the code the
//! review found and passes once its finding is fixed.

use crate::support::TestEnv;

/// Review 23, M1: the agent's home differs between two shells (`CLAUDE_CONFIG_DIR` exported in
/// one profile, as docs/configuration.md suggests, and missing in a new terminal, an editor's
/// task or cron). A turn in the shell without it finds the session lost and the vault puts the
/// copy back into `~/.claude`; the next turn in the first shell then resumes the copy in
/// `~/.claude-work`, which lacks that turn, and exits 0: the agent forgot a turn sticky's log
/// shows, silently. That turn must see every earlier turn, or refuse (naming the missing turn)
/// rather than resume a transcript that is behind sticky's record of the session.
#[test]
fn review23_a_turn_in_another_agent_home_is_not_silently_forgotten() {
    let env = TestEnv::new();
    let work = env.home.join(".claude-work");
    let one = env.sticky(["one"]).env("CLAUDE_CONFIG_DIR", &work).run();
    one.assert_success();
    let session = one.answer().session;
    env.sticky(["two"])
        .env("CLAUDE_CONFIG_DIR", &work)
        .run()
        .assert_success();
    // A shell without the variable: the agent has no file of the session in ~/.claude. Today
    // the vault puts its copy back there and the turn goes on with the whole history; a fix
    // may instead refuse it (the session lives in another agent home), which forgets nothing.
    let three = env.sticky(["three"]).run();
    let expected: &[&str] = if three.code == Some(0) {
        let three = three.answer();
        assert_eq!(three.session, session);
        assert_eq!(three.saw, ["one", "two"]);
        &["one", "two", "three"]
    } else {
        &["one", "two"]
    };
    // Back in the first shell: every turn made on the session so far, or a refusal naming the
    // turn its transcript lacks.
    let four = env.sticky(["four"]).env("CLAUDE_CONFIG_DIR", &work).run();
    if four.code == Some(0) || expected.len() == 2 {
        four.assert_success();
        let four = four.answer();
        assert_eq!(
            four.saw, expected,
            "turn 4 resumed session {} without turn 3, which sticky's log records in it",
            four.session
        );
    } else {
        four.assert_stderr_contains("three");
    }
}
