//! sticky with the real opencode 1.18.33 against the mock: the history survives between sticky
//! invocations in the session opencode really used, and `new` starts afresh (issue 4, part 3).
//!
//! opencode mints its session IDs (`ses_…`) and sticky learns each from its events; every
//! request opencode sends names its session in the `x-session-id` header. Its first turn also
//! sends a title request, which [`Tier::turn`] tells apart from the turn by its reply.

use super::tier::Tier;
use super::{Agent, assert_continues, assert_fresh, mentions};
use crate::mock::Request;

/// The session ID opencode sent with a request.
#[track_caller]
fn session_of(request: &Request) -> String {
    request
        .header("x-session-id")
        .unwrap_or_else(|| panic!("no x-session-id header on {:?}", request.headers))
        .to_owned()
}

#[test]
fn two_sticky_turns_carry_the_history_in_the_session_opencode_really_used() {
    let Some(tier) = Tier::start(Agent::Opencode) else {
        return;
    };
    // Several words and quotes: `opencode run` quotes a message argument that holds spaces, so
    // only a prompt given another way reaches the model as typed.
    let first = tier.turn(&[], "remember the word \"kumquat\"");
    assert_fresh(&first);
    let second = tier.turn(&[], "which word did I ask you to remember?");
    assert_continues(&second, &first);

    let stored = tier.stored_session_id();
    assert!(stored.starts_with("ses_"), "{stored}");
    assert_eq!(
        session_of(&first),
        stored,
        "the request names the stored session"
    );
    assert_eq!(session_of(&second), stored);
    tier.world.assert_no_self_update();
    tier.assert_no_processes_left();
}

#[test]
fn sticky_new_starts_without_history_and_the_next_turn_continues_it() {
    let Some(tier) = Tier::start(Agent::Opencode) else {
        return;
    };
    let old = tier.turn(&[], "a turn before the rotation");
    let fresh = tier.turn(&["new"], "the first turn after new");
    assert_fresh(&fresh);
    assert!(
        !mentions(&fresh, &old.summary.last_user),
        "the new session must not see the old one"
    );
    assert_ne!(
        session_of(&fresh),
        session_of(&old),
        "new rotates the session"
    );

    let next = tier.turn(&[], "the second turn after new");
    assert_continues(&next, &fresh);
    assert!(!mentions(&next, &old.summary.last_user));
    assert_eq!(session_of(&next), session_of(&fresh));
    assert_eq!(tier.stored_session_id(), session_of(&next));
}

#[test]
fn a_deleted_session_store_is_a_lost_session_and_nothing_reaches_the_model() {
    let Some(tier) = Tier::start(Agent::Opencode) else {
        return;
    };
    tier.turn(&[], "remember the word kumquat");
    // opencode keeps every session in one SQLite database, not a file per session.
    let data = tier.world.home.join(".local/share/opencode");
    std::fs::remove_dir_all(&data).expect("remove opencode's data directory");
    let stderr = tier.assert_lost("are you still there?");
    assert!(stderr.contains("Session not found"), "{stderr}");
}
