//! Review 27: an adversarial try of issue 23's scope (the vault, bundles, pipes, configuration
//! and where the state lives), on the code as it stood then. Each test fails on that code for
//! the reason its comment gives.

use crate::agents::AGENTS;
use crate::support::TestEnv;

/// Review 27, M1: a project that moves and comes back, used from two agent homes (a host and a
/// devcontainer that mounts the project elsewhere, or two `CLAUDE_CONFIG_DIR`s). The first home
/// holds the session for the original directory; the project moves, `sticky relocate` in the
/// second home carries the vault's copy there and turn "two" is taken; the project moves back.
/// In the first home, the turn says claude "keeps it for this directory already" and names
/// `sticky relocate`; relocate then only records the directory (its file in that home names it
/// already) without comparing it with the vault, and the next turn resumes the stale transcript,
/// exit 0: turn "two" is gone from the agent's view, while `sticky log` lists it in the same
/// session. The turn after the move back goes on with every turn (or is refused, naming the
/// file that went another way).
#[test]
fn review27_a_project_moved_back_in_an_agent_home_left_behind_forgets_no_turn() {
    let env = TestEnv::new();
    let other = env.home.join(".claude-other");
    let session = env.turn("one").session;

    let moved = env.move_project();
    env.sticky(["relocate"])
        .current_dir(&moved)
        .env("CLAUDE_CONFIG_DIR", &other)
        .run()
        .assert_success();
    let two = env
        .sticky(["two"])
        .current_dir(&moved)
        .env("CLAUDE_CONFIG_DIR", &other)
        .run();
    two.assert_success();
    assert_eq!(two.answer().saw, ["one"]);

    std::fs::rename(&moved, &env.project).expect("move the project back");
    // As the turn in this home advises (a fix may do the catch-up here or in the turn).
    let _ = env.sticky(["relocate"]).run();
    let three = env.sticky(["three"]).run();
    if three.code == Some(0) {
        let three = three.answer();
        assert_eq!(
            (three.session, three.saw),
            (session, vec!["one".to_owned(), "two".to_owned()]),
            "the turn after the move back resumed a transcript without turn two"
        );
    } else {
        // Refusing, naming what went another way, loses nothing either.
        three.assert_code(73);
    }
}

/// Review 27, M2: a Gemini session that only sticky's vault keeps for the old directory (a
/// second `GEMINI_CLI_HOME`, or `~/.gemini/tmp` removed: a directory named for what it holds),
/// then the project moves. `sticky relocate` says it "carried it from sticky's vault (1 file)",
/// then fails (exit 73) with "session lost: gemini cannot resume session ... (it keeps no file
/// of the session run in OLD in this HOME); run `sticky new` to start over", and every turn
/// after it is refused naming `sticky relocate` again: the put-back restores the chat file but
/// not the `.project_root` marker the vault also holds, which Gemini's file listing needs. A
/// turn without the move restores the same vault copy and goes on. The relocate carries the
/// session and the next turn goes on with every turn.
#[test]
fn review27_relocate_of_a_gemini_session_only_the_vault_keeps_goes_on() {
    let gemini = AGENTS
        .iter()
        .find(|agent| agent.name == "gemini")
        .expect("gemini");
    let env = TestEnv::new();
    let session = gemini.turn(&env, &["-a", "gemini", "one"]).session;
    std::fs::remove_dir_all(env.home.join(gemini.storage)).expect("remove ~/.gemini/tmp");
    let moved = env.move_project();

    gemini
        .sticky(&env, &["relocate"])
        .current_dir(&moved)
        .run()
        .assert_success();
    let two = gemini.sticky(&env, &["two"]).current_dir(&moved).run();
    two.assert_success();
    let two = gemini.answer(&two);
    assert_eq!((two.session, two.saw), (session, vec!["one".to_owned()]));
}
