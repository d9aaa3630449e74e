//! sticky with the real Qwen Code 0.24.4 (on node 22) against the mock: the history survives
//! between sticky invocations in the session Qwen really used, and `new` starts afresh (issue 4,
//! part 3).
//!
//! Qwen Code speaks Chat Completions through its `openai` auth type (set in the world's
//! settings) and sends a background "managed memory" request after each turn, which
//! [`Tier::turn`] tells apart from the turn by its reply. sticky chooses the session IDs
//! (`--session-id`); Qwen's requests carry none, so its chat file is the evidence.

use serde_json::Value;

use super::tier::Tier;
use super::{Agent, assert_continues, assert_fresh, mentions};

#[test]
fn two_sticky_turns_carry_the_history_in_the_session_qwen_really_used() {
    let Some(tier) = Tier::start(Agent::Qwen) else {
        return;
    };
    let first = tier.turn(&[], "remember the word kumquat");
    assert_fresh(&first);
    let second = tier.turn(&[], "which word did I ask you to remember?");
    assert_continues(&second, &first);

    let stored = tier.stored_session_id();
    let chats = tier.world.files_under(".qwen/projects", ".jsonl");
    let key: String = tier
        .world
        .project
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let expected = tier
        .world
        .home
        .join(".qwen/projects")
        .join(key)
        .join("chats")
        .join(format!("{stored}.jsonl"));
    assert_eq!(
        chats,
        std::slice::from_ref(&expected),
        "Qwen Code keeps one chat, named by the stored ID, under the project"
    );
    let text = std::fs::read_to_string(&expected).expect("read the chat");
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).expect("a chat record is JSON");
        assert_eq!(record["sessionId"], stored.as_str(), "{line}");
    }
    for said in [&first.summary.last_user, &second.summary.last_user] {
        assert!(text.contains(said.as_str()), "the chat lacks {said:?}");
    }
    tier.world.assert_no_self_update();
    tier.assert_no_processes_left();
}

#[test]
fn sticky_new_starts_without_history_and_the_next_turn_continues_it() {
    let Some(tier) = Tier::start(Agent::Qwen) else {
        return;
    };
    let old = tier.turn(&[], "a turn before the rotation");
    let old_id = tier.stored_session_id();
    let fresh = tier.turn(&["new"], "the first turn after new");
    assert_fresh(&fresh);
    assert!(
        !mentions(&fresh, &old.summary.last_user),
        "the new session must not see the old one"
    );
    let fresh_id = tier.stored_session_id();
    assert_ne!(fresh_id, old_id, "new rotates the session");

    let next = tier.turn(&[], "the second turn after new");
    assert_continues(&next, &fresh);
    assert!(!mentions(&next, &old.summary.last_user));
    assert_eq!(tier.stored_session_id(), fresh_id);
}

#[test]
fn a_deleted_chat_is_a_lost_session_and_nothing_reaches_the_model() {
    let Some(tier) = Tier::start(Agent::Qwen) else {
        return;
    };
    tier.turn(&[], "remember the word kumquat");
    for chat in tier.world.files_under(".qwen/projects", ".jsonl") {
        std::fs::remove_file(&chat).expect("remove the chat");
    }
    let stderr = tier.assert_lost("are you still there?");
    assert!(stderr.contains("No saved session found"), "{stderr}");
}
