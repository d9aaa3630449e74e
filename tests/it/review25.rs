//! Review 25: where the state lives, copies, moves and agent homes, tried as an adversary.

use std::path::Path;

use crate::agents::AGENTS;
use crate::support::{TestEnv, fakes_dir};

/// `cp -r FROM TO`: a backup as most users make one, without `-p`: every file gets the time of
/// the copy.
fn copy_plain(from: &Path, to: &Path) {
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(from)
        .arg(to)
        .status()
        .expect("run cp");
    assert!(
        status.success(),
        "cp -r {} {}",
        from.display(),
        to.display()
    );
}

/// Review 25, M1: an agent whose session file is rewritten (Gemini CLI's chat file; Copilot,
/// also run here, is caught up) restored from an older backup made with `cp -r` (no `-p`: the
/// files get the copy's time, newer than the vault's copy) is taken as the agent's own later
/// writing. The turn resumes the older file and the agent forgets turns `sticky log` shows,
/// silently; with `cp -a` (times kept) the same backup is caught up. The file is behind
/// whatever its time says when its bytes are another version than the vault's and the vault's
/// copy holds every turn on record.
#[test]
fn review25_a_rewritten_session_file_restored_with_new_times_forgets_turns() {
    for agent in AGENTS
        .iter()
        .filter(|agent| agent.name == "gemini" || agent.name == "copilot")
    {
        let env = TestEnv::new();
        agent.turn(&env, &["-a", agent.name, "one"]);
        agent.turn(&env, &["two"]);
        let storage = env.home.join(agent.storage);
        let backup = env.scratch.join("backup");
        copy_plain(&storage, &backup);
        agent.turn(&env, &["three"]);
        std::fs::remove_dir_all(&storage).expect("remove the storage");
        copy_plain(&backup, &storage);

        let output = agent.sticky(&env, &["four"]).run();
        output.assert_success();
        assert_eq!(
            agent.answer(&output).saw,
            ["one", "two", "three"],
            "{}: the turn resumed a session file without turn three",
            agent.name
        );
    }
}

/// Review 25, M1 (second case): the same trust in a rewritten file's time lets a chat file that
/// went another way through. Two shells, one with `GEMINI_CLI_HOME` set: turn three runs there,
/// turn four in `~/.gemini`; then Gemini CLI is run by hand in the first home on the session. A
/// transcript in that state (sticky's turn four missing, a turn of its own instead) is refused
/// for Claude, Codex and Copilot (exit 73, "went on elsewhere too"); Gemini's chat file, newer
/// by its time, is resumed as it is, and turn five goes on with turn four forgotten.
#[test]
fn review25_a_gemini_chat_that_went_another_way_is_resumed_without_a_turn() {
    let gemini = AGENTS
        .iter()
        .find(|agent| agent.name == "gemini")
        .expect("gemini");
    let env = TestEnv::new();
    let work = env.home.join(".gemini-work");
    let session = gemini.turn(&env, &["-a", "gemini", "one"]).session;
    gemini.turn(&env, &["two"]);
    gemini
        .sticky(&env, &["three"])
        .env("GEMINI_CLI_HOME", &work)
        .run()
        .assert_success();
    gemini.turn(&env, &["four"]);
    let by_hand = env
        .program(
            fakes_dir().join("gemini"),
            ["--resume", session.as_str(), "-p", "by hand"],
        )
        .env("GEMINI_CLI_HOME", &work)
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .run();
    by_hand.assert_success();

    let five = gemini
        .sticky(&env, &["five"])
        .env("GEMINI_CLI_HOME", &work)
        .run();
    if five.code == Some(0) {
        let saw = gemini.answer(&five).saw;
        assert!(
            saw.iter().any(|turn| turn == "four"),
            "turn five resumed a chat file without sticky's turn four: {saw:?}"
        );
    } else {
        five.assert_code(73);
    }
}

/// Review 25, M2: two shells with two agent homes (`CLAUDE_CONFIG_DIR` exported in one, as
/// docs/configuration.md suggests) and a project moved: `sticky relocate` in the shell without
/// the variable moves that home's transcript, and the next turn there goes on. Back in the
/// other shell, the turn is refused (73) as if the state were "copied from elsewhere, or
/// crafted", with `sticky new` (a fresh session) as the only way on; `sticky relocate` there says
/// "nothing to relocate" and `sticky doctor` says the next turn can run. The database records
/// the move itself: the transcript the other home keeps under the old directory is this
/// project's own session, behind the vault's copy, and the turn goes on with every turn.
#[test]
fn review25_a_relocated_project_is_refused_in_the_other_agent_home() {
    let env = TestEnv::new();
    let work = env.home.join(".claude-work");
    let one = env.sticky(["one"]).env("CLAUDE_CONFIG_DIR", &work).run();
    one.assert_success();
    let session = one.answer().session;
    env.sticky(["two"])
        .env("CLAUDE_CONFIG_DIR", &work)
        .run()
        .assert_success();
    let moved = env.move_project();
    env.ok_in(&moved, ["relocate"]);
    let three = env.ok_in(&moved, ["three"]).answer();
    assert_eq!(three.session, session);

    let four = env
        .sticky(["four"])
        .current_dir(&moved)
        .env("CLAUDE_CONFIG_DIR", &work)
        .run();
    four.assert_success();
    let four = four.answer();
    assert_eq!(
        (four.session, four.saw),
        (
            session,
            vec!["one".to_owned(), "two".to_owned(), "three".to_owned()]
        )
    );
}

/// Review 25, M3: two agent homes both hold the session (`CLAUDE_CONFIG_DIR` set in one shell),
/// the one in `~/.claude-work` behind by a turn, which the next turn there would catch up. The
/// project moves and the user runs `sticky relocate` in that shell: it moves the behind
/// transcript to the new directory, and the next turn resumes it with turn three forgotten,
/// silently (exit 0): the check before a turn passes over the vault's copy, which names the old
/// directory. The turn after a relocate goes on with every turn, as before the move.
#[test]
fn review25_relocate_in_the_other_agent_home_forgets_a_turn() {
    let env = TestEnv::new();
    let work = env.home.join(".claude-work");
    let session = env.turn("one").session;
    env.sticky(["two"])
        .env("CLAUDE_CONFIG_DIR", &work)
        .run()
        .assert_success();
    let three = env.turn("three");
    assert_eq!(three.saw, ["one", "two"]);
    let moved = env.move_project();
    env.sticky(["relocate"])
        .current_dir(&moved)
        .env("CLAUDE_CONFIG_DIR", &work)
        .run()
        .assert_success();

    let four = env
        .sticky(["four"])
        .current_dir(&moved)
        .env("CLAUDE_CONFIG_DIR", &work)
        .run();
    four.assert_success();
    let four = four.answer();
    assert_eq!(
        (four.session, four.saw),
        (
            session,
            vec!["one".to_owned(), "two".to_owned(), "three".to_owned()]
        ),
        "the turn after relocate resumed a transcript without turn three"
    );
}

/// Review 25, M4: the check before a turn catches up a transcript that is behind the vault's
/// copy only for a turn that resumes; a fork's first turn forks the agent's file as it is. In a
/// shell whose `CLAUDE_CONFIG_DIR` names the agent home that missed turn three, `sticky fork idea
/// "four"` exits 0 and the fork's history lacks turn three, silently, where `sticky "four"` in
/// the same shell would have caught up. The fork starts from every turn of its source.
#[test]
fn review25_a_fork_in_the_other_agent_home_forgets_a_turn() {
    let env = TestEnv::new();
    let work = env.home.join(".claude-work");
    env.turn("one");
    env.sticky(["two"])
        .env("CLAUDE_CONFIG_DIR", &work)
        .run()
        .assert_success();
    let three = env.turn("three");
    assert_eq!(three.saw, ["one", "two"]);

    let fork = env
        .sticky(["fork", "idea", "four"])
        .env("CLAUDE_CONFIG_DIR", &work)
        .run();
    fork.assert_success();
    assert_eq!(
        fork.answer().saw,
        ["one", "two", "three"],
        "the fork's first turn forked a transcript without turn three"
    );
}

/// Review 25, M5: `sticky export` in a shell whose `CLAUDE_CONFIG_DIR` names the agent home
/// that missed turn three bundles that home's transcript as it is (the next turn there would
/// have caught it up from the vault). The bundle records three turns; imported on another
/// machine (the README's two-jobs flow), the next turn exits 0 and the agent has forgotten turn
/// three. The bundle carries every turn sticky ran on the session.
#[test]
fn review25_an_export_in_the_other_agent_home_carries_a_transcript_missing_a_turn() {
    let env = TestEnv::new();
    let work = env.home.join(".claude-work");
    env.turn("one");
    env.sticky(["two"])
        .env("CLAUDE_CONFIG_DIR", &work)
        .run()
        .assert_success();
    env.turn("three");
    let bundle = env.scratch.join("conversation.sticky");
    env.sticky(["export", "-o", bundle.to_str().expect("UTF-8")])
        .env("CLAUDE_CONFIG_DIR", &work)
        .run()
        .assert_success();

    let other = TestEnv::new();
    other.ok(["import", bundle.to_str().expect("UTF-8")]);
    let four = other.turn("four");
    assert_eq!(
        four.saw,
        ["one", "two", "three"],
        "the imported session lacks turn three"
    );
}
