//! sticky with the real Copilot CLI 1.0.102 against the mock (issue 15, part 12): what Copilot
//! supplies to the [`scenarios`](super::scenarios): the history survives between sticky
//! invocations in the session Copilot really used, `new` and another `--model` start afresh, a
//! turn from a subdirectory runs in the project, a lost session reaches nothing, its own UI is
//! carried into the next headless turn, and a tool turn.
//!
//! Copilot runs offline with its own model provider (BYOK: `COPILOT_OFFLINE`,
//! `COPILOT_PROVIDER_BASE_URL` and the rest, set by the world), speaking Chat Completions to the
//! mock. sticky chooses the session IDs (`--session-id`); Copilot's requests carry none, so its
//! session state (`~/.copilot/session-state/<id>/events.jsonl`) is the evidence.

use serde_json::Value;

use super::scenarios::{Lost, Model, Profile, Tools, Ui};
use super::terminal::Terminal;
use super::tier::Tier;
use super::{COPILOT_MODEL, lines_after};
use crate::mock::Request;

/// What Copilot CLI supplies to the shared scenarios.
pub const PROFILE: Profile = Profile {
    remember: "remember the word kumquat",
    session_header: None,
    // The world's `COPILOT_MODEL`.
    default_model: Some(COPILOT_MODEL),
    // Any name: Copilot passes a model of its own provider on as given.
    other_model: Some(Model {
        given: "mock-other-model",
        sent: "mock-other-model",
    }),
    assert_kept,
    working_directories: Some(working_directories),
    lost: Some(Lost {
        forget,
        says: "No session, task, or name matched",
    }),
    ui: Some(Ui {
        ready: IDLE,
        submit,
        quit,
        // The summary it prints on exit, which names the session.
        farewell: Some("copilot --resume="),
        // sticky reads the last assistant.message of its events.jsonl (src/agent/answers.rs).
        answer_kept: true,
    }),
    tools: Some(Tools {
        // "Required for non-interactive mode" to run a tool (`copilot --help`).
        permissions: &["--allow-all-tools"],
        // The `toolName` of `tool.execution_start`.
        activity: Some("bash"),
    }),
    api_failure: None,
};

/// The session-state directories whose events hold a user's message, by ID: a resume also
/// leaves an empty one behind (github/copilot-cli#3908), which holds no conversation.
fn conversations(tier: &Tier) -> Vec<(String, String)> {
    let state = tier.world.home.join(".copilot/session-state");
    let mut found: Vec<(String, String)> = std::fs::read_dir(&state)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|dir| {
            let events = std::fs::read_to_string(dir.path().join("events.jsonl")).ok()?;
            events
                .contains("\"user.message\"")
                .then(|| (dir.file_name().to_string_lossy().into_owned(), events))
        })
        .collect();
    found.sort();
    found
}

/// Copilot keeps one conversation, named by the stored ID; its first event names the session,
/// and it holds every prompt of `turns`.
#[track_caller]
fn assert_kept(tier: &Tier, stored: &str, turns: &[&Request]) {
    let conversations = conversations(tier);
    let ids: Vec<&str> = conversations.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        [stored],
        "Copilot keeps one conversation, the stored one"
    );
    let events = &conversations[0].1;
    let start: Value = events
        .lines()
        .next()
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or_default();
    assert_eq!(start["type"], "session.start", "{start}");
    assert_eq!(start["data"]["sessionId"], stored, "{start}");
    for turn in turns {
        let prompt = serde_json::to_string(&turn.summary.last_user).expect("a JSON string");
        assert!(
            events.contains(prompt.trim_matches('"')),
            "the conversation holds {prompt}"
        );
    }
}

/// Every working directory Copilot states in a request (its system prompt's environment).
fn working_directories(request: &Request) -> Vec<String> {
    lines_after(request, "* Current working directory: ")
}

/// Deletes the stored session's state directory.
#[track_caller]
fn forget(tier: &Tier, stored: &str) {
    let state = tier.world.home.join(".copilot/session-state").join(stored);
    std::fs::remove_dir_all(&state).unwrap_or_else(|e| panic!("remove {}: {e}", state.display()));
}

/// The 1.0.102 UI's footer while it waits for input with nothing typed: drawn once it is ready
/// (the world trusts the project, so no folder-trust dialog comes first) and again when a turn
/// has ended, in place of its "Working" line (observed on an 80x24 terminal).
const IDLE: &str = "open sidebar \u{b7} Interactive";

/// Types a one-word prompt into Copilot's UI, submits it, and waits for the mock's reply on
/// the screen and for the UI to be idle again; returns the model request it made.
#[track_caller]
fn submit(terminal: &mut Terminal, tier: &Tier, word: &str) -> Request {
    terminal.type_keys(word);
    terminal.wait_for(word);
    terminal.type_keys("\r");
    let request = tier.request_for_eventually(word);
    let replied = terminal.wait_for_since(0, &format!("MOCK-REPLY-{}", request.seq));
    terminal.wait_for_since(replied, IDLE);
    request
}

/// Leaves Copilot's UI with `/exit`, submitted once the UI offers it as a command (its menu
/// describes it), so the keys are not taken as a message while a turn still winds down.
#[track_caller]
fn quit(terminal: &mut Terminal) {
    let mark = terminal.mark();
    terminal.type_keys("/exit");
    terminal.wait_for_since(mark, "Print the session after exiting");
    terminal.type_keys("\r");
}
