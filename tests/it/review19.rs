//! Review 19 (issue 23's scope: the vault, bundles, pipes and configuration): each test fails
//! on the code it was written against and passes once its finding is fixed.

use crate::support::TestEnv;

/// M2: an agent session can be on record in two threads of one project: live in one and ended
/// in the other (the conversation exported, `sticky new` on it, the bundle imported back under
/// another name, as docs/conversations.md's export and import allow). `forget` of the thread
/// where it ended deletes the vault's copy the other thread's live session depends on, so once
/// the agent sweeps its transcript (what the vault is for) that thread's session is lost.
#[test]
fn review19_forget_keeps_vault_copy_another_thread_lives_on() {
    let env = TestEnv::new();
    let first = env.ok(["remember the word tangerine"]).answer();
    let bundle = env.scratch.join("main.sticky");
    let bundle = bundle.to_str().expect("utf-8");
    env.ok(["export", "-o", bundle]);
    env.ok(["new", "start on something else"]);
    env.ok(["import", "--as", "old", bundle]);
    env.ok(["-t", "old", "and the colour orange"]);
    env.ok(["forget", "-t", "main", "--yes"]);

    // The agent's own cleanup sweeps its transcripts.
    std::fs::remove_dir_all(env.claude_projects()).expect("remove the transcripts");
    let next = env.ok(["-t", "old", "what was the word?"]).answer();
    assert_eq!(
        next.session, first.session,
        "thread old goes on with its session"
    );
    assert_eq!(
        next.saw,
        vec![
            "remember the word tangerine".to_owned(),
            "and the colour orange".to_owned()
        ]
    );
}
