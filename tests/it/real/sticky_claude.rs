//! sticky with the real Claude Code 2.1.332 against the mock: the history survives between
//! sticky invocations, and only `new` and a different `--model` start afresh (issue 3, part 2).
//!
//! What the agent really did is read from the mock's requests (the messages it sent, the model,
//! the `x-claude-code-session-id` header, the working directory in its system prompt) and from
//! its transcript files, never from sticky's own account alone. The interactive test drives
//! sticky on a pseudo-terminal as a person would: type a prompt, read the reply, `/exit`.

use serde_json::Value;

use super::terminal::Terminal;
use super::tier::Tier;
use super::{Agent, assert_continues, assert_fresh, mentions};
use crate::mock::Request;

/// A model name no Claude Code default uses, for the model-change scenarios.
const OTHER_MODEL: &str = "claude-mock-other";

/// The session ID Claude Code sent with a request.
#[track_caller]
fn session_of(request: &Request) -> String {
    request
        .header("x-claude-code-session-id")
        .unwrap_or_else(|| panic!("no x-claude-code-session-id on {:?}", request.headers))
        .to_owned()
}

/// The last "Primary working directory" Claude Code states in a request (2.1.332 puts its
/// environment in a `role: system` message inside `messages`, once per session start).
#[track_caller]
fn working_directory(request: &Request) -> String {
    fn collect(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::String(text) => {
                const MARK: &str = "Primary working directory: ";
                for (at, _) in text.match_indices(MARK) {
                    let rest = &text[at + MARK.len()..];
                    found.push(rest.lines().next().unwrap_or_default().to_owned());
                }
            }
            Value::Array(items) => items.iter().for_each(|v| collect(v, found)),
            Value::Object(map) => map.values().for_each(|v| collect(v, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    collect(&request.body, &mut found);
    found.pop().unwrap_or_else(|| {
        panic!(
            "no working directory in the request for {:?}",
            request.summary.last_user
        )
    })
}

#[test]
fn two_sticky_turns_carry_the_history() {
    let Some(tier) = Tier::start(Agent::Claude) else {
        return;
    };
    let first = tier.turn(&[], "remember the word kumquat");
    assert_fresh(&first);
    let second = tier.turn(&[], "which word did I ask you to remember?");
    assert_continues(&second, &first);
    assert_eq!(session_of(&second), session_of(&first), "the same session");
    tier.world.assert_no_self_update();
    tier.assert_no_processes_left();
}

#[test]
fn sticky_new_starts_without_history_and_the_next_turn_continues_it() {
    let Some(tier) = Tier::start(Agent::Claude) else {
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
}

#[test]
fn another_model_starts_afresh_and_later_turns_stay_on_it() {
    let Some(tier) = Tier::start(Agent::Claude) else {
        return;
    };
    let default = tier.turn(&[], "a turn on the default model");
    assert_ne!(default.summary.model, OTHER_MODEL);

    let switched = tier.turn(&["--model", OTHER_MODEL], "a turn on the other model");
    assert_eq!(switched.summary.model, OTHER_MODEL);
    assert_fresh(&switched);
    assert_ne!(session_of(&switched), session_of(&default));

    let stayed = tier.turn(&[], "no --model: stay on the other model");
    assert_eq!(
        stayed.summary.model, OTHER_MODEL,
        "the session's model is kept"
    );
    assert_continues(&stayed, &switched);

    let same = tier.turn(&["--model", OTHER_MODEL], "the same --model again");
    assert_eq!(same.summary.model, OTHER_MODEL);
    assert_continues(&same, &stayed);
    assert_eq!(
        session_of(&same),
        session_of(&switched),
        "the same model does not rotate"
    );
}

#[test]
fn the_stored_session_id_is_the_one_claude_really_used() {
    let Some(tier) = Tier::start(Agent::Claude) else {
        return;
    };
    let first = tier.turn(&[], "remember the word kumquat");
    let second = tier.turn(&[], "which word did I ask you to remember?");
    let stored = tier.stored_session_id();
    assert_eq!(
        session_of(&first),
        stored,
        "the request header names the stored session"
    );
    assert_eq!(session_of(&second), stored);
    let transcript = tier.world.claude_transcript(&tier.world.project, &stored);
    assert_eq!(
        tier.world.claude_transcripts(),
        vec![transcript],
        "Claude Code keeps exactly one transcript, named by the stored ID, under the project"
    );
}

#[test]
fn a_turn_from_a_subdirectory_continues_the_project_session_in_the_project() {
    let Some(tier) = Tier::start(Agent::Claude) else {
        return;
    };
    let project = &tier.world.project;
    let first = tier.turn(&[], "a turn in the project root");
    let sub = project.join("src/deep");
    std::fs::create_dir_all(&sub).expect("create a subdirectory");

    let from_sub = tier.turn_in(&sub, &[], "a turn from a subdirectory");
    assert_continues(&from_sub, &first);
    assert_eq!(session_of(&from_sub), session_of(&first));
    assert_eq!(
        working_directory(&from_sub),
        project.to_string_lossy(),
        "the agent runs in the project directory, not the user's subdirectory"
    );
    assert_eq!(tier.world.claude_transcripts().len(), 1);
}

#[test]
fn an_interactive_turn_is_carried_into_the_next_headless_turn() {
    let Some(tier) = Tier::start(Agent::Claude) else {
        return;
    };
    // One word: Claude Code draws the words of a typed line with cursor moves between them,
    // so only a word without spaces can be waited for as it is echoed.
    let typed = "interactive-kumquat-turn";
    let mut terminal = Terminal::sticky(&tier.world, &tier.world.project, &[]);
    // Claude Code 2.1.332's footer once its prompt is ready for input (the seeded .claude.json
    // leaves no onboarding, key or trust dialog in the way).
    terminal.wait_for("for agents");
    terminal.type_keys(typed);
    terminal.wait_for(typed);
    terminal.type_keys("\r");
    let interactive = tier.request_for_eventually(typed);
    terminal.wait_for(&format!("MOCK-REPLY-{}", interactive.seq));
    terminal.type_keys("/exit");
    terminal.wait_for("/exit");
    terminal.type_keys("\r");
    // sticky exits with the agent's code.
    terminal.assert_exit(0);
    assert_fresh(&interactive);

    let headless = tier.turn(&[], "a headless turn after the interactive one");
    assert_continues(&headless, &interactive);
    assert_eq!(session_of(&headless), session_of(&interactive));
    assert_eq!(tier.stored_session_id(), session_of(&interactive));
}

#[test]
fn after_clear_inside_claude_the_next_headless_turn_lands_in_the_new_session() {
    let Some(tier) = Tier::start(Agent::Claude) else {
        return;
    };
    let (before, after) = ("before-clear-kumquat", "after-clear-quince");
    let mut terminal = Terminal::sticky(&tier.world, &tier.world.project, &[]);
    terminal.wait_for("for agents");
    let cleared = submit(&mut terminal, &tier, before);
    terminal.type_keys("/clear");
    terminal.wait_for("/clear");
    let mark = terminal.mark();
    terminal.type_keys("\r");
    terminal.wait_for_since(mark, "for agents");
    let current = submit(&mut terminal, &tier, after);
    terminal.type_keys("/exit");
    terminal.wait_for("/exit");
    terminal.type_keys("\r");
    terminal.assert_exit(0);

    assert_fresh(&current);
    assert_ne!(
        session_of(&current),
        session_of(&cleared),
        "/clear starts a new Claude Code session"
    );
    assert_eq!(
        tier.stored_session_id(),
        session_of(&current),
        "sticky follows the session the user is in"
    );
    let headless = tier.turn(&[], "a headless turn after /clear");
    assert_continues(&headless, &current);
    assert!(
        !mentions(&headless, before),
        "the cleared conversation must not come back"
    );
}

/// Types a one-word prompt into Claude Code's interactive UI, submits it, and waits for the
/// mock's reply on the screen; returns the model request it made.
#[track_caller]
fn submit(terminal: &mut Terminal, tier: &Tier, word: &str) -> Request {
    terminal.type_keys(word);
    terminal.wait_for(word);
    terminal.type_keys("\r");
    let request = tier.request_for_eventually(word);
    terminal.wait_for(&format!("MOCK-REPLY-{}", request.seq));
    request
}
