//! sticky with the real Claude Code 2.1.332 against the mock: what Claude Code supplies to the
//! [`scenarios`](super::scenarios) (issue 3, part 2: the history survives between sticky
//! invocations, and only `new` and a different `--model` start afresh; issue 15, part 12: a tool
//! turn and a failing model API), and its own `/clear`.
//!
//! What the agent really did is read from the mock's requests (the messages it sent, the model,
//! the `x-claude-code-session-id` header, the working directory in its system prompt) and from
//! its transcript files, never from sticky's own account alone. The interactive tests drive
//! sticky on a pseudo-terminal as a person would: type a prompt, read the reply, `/exit`.

use super::scenarios::{ApiFailure, Lost, Model, Profile, Tools, Ui};
use super::terminal::Terminal;
use super::tier::Tier;
use super::{Agent, assert_continues, assert_fresh, lines_after, mentions};
use crate::mock::Request;

/// What Claude Code supplies to the shared scenarios.
pub const PROFILE: Profile = Profile {
    remember: "remember the word kumquat",
    session_header: Some("x-claude-code-session-id"),
    default_model: None,
    // A model name no Claude Code default uses.
    other_model: Some(Model {
        given: "claude-mock-other",
        sent: "claude-mock-other",
    }),
    assert_kept,
    working_directories: Some(working_directories),
    lost: Some(Lost {
        forget,
        says: "No conversation found with session ID",
    }),
    ui: Some(Ui {
        // Claude Code 2.1.332's footer once its prompt is ready for input (the seeded
        // .claude.json leaves no onboarding, key or trust dialog in the way).
        ready: "for agents",
        submit,
        quit,
        farewell: None,
        answer_kept: true,
    }),
    tools: Some(Tools {
        permissions: &["--permission-mode", "bypassPermissions"],
        activity: Some("Bash"),
    }),
    api_failure: Some(ApiFailure {
        retries,
        exit_code: 1,
        says: "API Error: 500",
        retries_429: true,
    }),
};

/// Bounds Claude Code's retries of a failed request (`CLAUDE_CODE_MAX_RETRIES`, read by the
/// 2.1.332 binary) through sticky's configuration of the agent's environment.
#[track_caller]
fn retries(tier: &Tier, retries: u32) {
    tier.configure_sticky(&format!(
        "[agents.claude]\nenv = {{ CLAUDE_CODE_MAX_RETRIES = \"{retries}\" }}\n"
    ));
}

/// Claude Code keeps exactly one transcript, named by the stored ID, under the project.
#[track_caller]
fn assert_kept(tier: &Tier, stored: &str, _turns: &[&Request]) {
    let transcript = tier.world.claude_transcript(&tier.world.project, stored);
    assert_eq!(
        tier.world.claude_transcripts(),
        vec![transcript],
        "Claude Code keeps exactly one transcript, named by the stored ID, under the project"
    );
}

/// Deletes the stored session's transcript.
#[track_caller]
fn forget(tier: &Tier, stored: &str) {
    let transcript = tier.world.claude_transcript(&tier.world.project, stored);
    std::fs::remove_file(&transcript)
        .unwrap_or_else(|e| panic!("remove {}: {e}", transcript.display()));
}

/// Every "Primary working directory" Claude Code states in a request (2.1.332 puts its
/// environment in a `role: system` message inside `messages`, once per session start).
fn working_directories(request: &Request) -> Vec<String> {
    lines_after(request, "Primary working directory: ")
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

/// Leaves Claude Code's UI with `/exit`.
#[track_caller]
fn quit(terminal: &mut Terminal) {
    terminal.type_keys("/exit");
    terminal.wait_for("/exit");
    terminal.type_keys("\r");
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
    quit(&mut terminal);
    terminal.assert_exit(0);

    assert_fresh(&current);
    assert_ne!(
        tier.session_of(&current),
        tier.session_of(&cleared),
        "/clear starts a new Claude Code session"
    );
    assert_eq!(
        tier.stored_session_id(),
        tier.session_of(&current),
        "sticky follows the session the user is in"
    );
    let headless = tier.turn(&[], "a headless turn after /clear");
    assert_continues(&headless, &current);
    assert!(
        !mentions(&headless, before),
        "the cleared conversation must not come back"
    );
}
