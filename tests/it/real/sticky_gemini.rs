//! sticky with the real Gemini CLI 0.61.0 against the mock: the history survives between
//! sticky invocations, `new` and a different `--model` start afresh, and the session sticky
//! stores is the one Gemini really used (issue 4, part 3); Gemini's own UI, then a headless
//! follow-up that carries the interactive turn (issue 5, part 4).
//!
//! sticky chooses Gemini's session IDs (`--session-id`); the tests check them against Gemini's
//! chat files, since its requests carry no session ID. The world's settings name
//! [`GEMINI_MODEL`], and a resume without `-m` falls back to it, so a turn on another model
//! staying there proves sticky passes the model again.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::terminal::Terminal;
use super::tier::Tier;
use super::{Agent, GEMINI_MODEL, assert_continues, assert_fresh, mentions};
use crate::mock::Request;

/// A model name no Gemini default uses, for the model-change scenarios.
const OTHER_MODEL: &str = "gemini-mock-other";

/// How long a test waits between typing and Enter (see [`submit`]).
const ENTER_PAUSE: Duration = Duration::from_millis(150);

/// The workspace directories Gemini CLI states in a request (its `<session_context>` turn
/// lists them indented under the mark, before the next top-level item).
fn workspace_directories(request: &Request) -> Vec<String> {
    const MARK: &str = "**Workspace Directories:**\n";
    let body = serde_json::to_string(&request.body["contents"]).unwrap_or_default();
    let body: Value = serde_json::from_str(&body).unwrap_or_default();
    let mut found = Vec::new();
    let texts = body
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|content| content["parts"].as_array().into_iter().flatten())
        .filter_map(|part| part["text"].as_str());
    for text in texts {
        if let Some((_, rest)) = text.split_once(MARK) {
            found.extend(
                rest.lines()
                    .map_while(|line| line.strip_prefix("  - "))
                    .map(str::to_owned),
            );
        }
    }
    found
}

/// Gemini CLI's chat files in this world, each with its header's `sessionId` and its text.
fn chats(tier: &Tier) -> Vec<(PathBuf, String, String)> {
    tier.world
        .files_under(".gemini/tmp", ".jsonl")
        .into_iter()
        .filter(|path| path.parent().is_some_and(|dir| dir.ends_with("chats")))
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("read a chat file");
            let header: Value =
                serde_json::from_str(text.lines().next().unwrap_or_default()).unwrap_or_default();
            let id = header["sessionId"].as_str().unwrap_or_default().to_owned();
            (path, id, text)
        })
        .collect()
}

#[test]
fn two_sticky_turns_carry_the_history() {
    let Some(tier) = Tier::start(Agent::Gemini) else {
        return;
    };
    let first = tier.turn(&[], "remember the word kumquat");
    assert_fresh(&first);
    assert_eq!(first.summary.model, GEMINI_MODEL);
    let second = tier.turn(&[], "which word did I ask you to remember?");
    assert_continues(&second, &first);
    tier.world.assert_no_self_update();
    tier.assert_no_processes_left();
}

#[test]
fn sticky_new_starts_without_history_and_the_next_turn_continues_it() {
    let Some(tier) = Tier::start(Agent::Gemini) else {
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
fn another_model_starts_afresh_and_later_turns_stay_on_it() {
    let Some(tier) = Tier::start(Agent::Gemini) else {
        return;
    };
    let default = tier.turn(&[], "a turn on the configured model");
    assert_eq!(default.summary.model, GEMINI_MODEL);

    let switched = tier.turn(&["--model", OTHER_MODEL], "a turn on the other model");
    assert_eq!(switched.summary.model, OTHER_MODEL);
    assert_fresh(&switched);

    // `gemini --resume` alone would fall back to the configured model.
    let stayed = tier.turn(&[], "no --model: stay on the other model");
    assert_eq!(
        stayed.summary.model, OTHER_MODEL,
        "sticky passes the session's model on resume"
    );
    assert_continues(&stayed, &switched);
}

#[test]
fn the_stored_session_id_is_the_one_gemini_really_used() {
    let Some(tier) = Tier::start(Agent::Gemini) else {
        return;
    };
    let first = tier.turn(&[], "remember the word kumquat");
    let second = tier.turn(&[], "which word did I ask you to remember?");
    let stored = tier.stored_session_id();

    // Every run opens a chat file named for the minute and the ID's first 8 characters; a
    // resume in a later minute leaves a second one holding only the header.
    let chats = chats(&tier);
    assert!(!chats.is_empty(), "Gemini CLI kept no chat file");
    for (path, id, _) in &chats {
        assert_eq!(id, &stored, "{} belongs to another session", path.display());
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        assert!(
            name.ends_with(&format!("-{}.jsonl", &stored[..8])),
            "the chat file is named by the stored ID: {name}"
        );
    }
    let transcript = chats
        .iter()
        .find(|(_, _, text)| text.contains(&second.summary.last_user))
        .unwrap_or_else(|| panic!("no chat file holds the second turn: {chats:?}"));
    for said in [
        &first.summary.last_user,
        &first.reply,
        &second.summary.last_user,
    ] {
        assert!(
            transcript.2.contains(said.as_str()),
            "the stored session's chat lacks {said:?}"
        );
    }
}

#[test]
fn a_turn_from_a_subdirectory_continues_the_project_session_in_the_project() {
    let Some(tier) = Tier::start(Agent::Gemini) else {
        return;
    };
    let project = tier.world.project.to_string_lossy().into_owned();
    let first = tier.turn(&[], "a turn in the project root");
    let sub = tier.world.project.join("src/deep");
    std::fs::create_dir_all(&sub).expect("create a subdirectory");

    // Gemini CLI finds sessions only from their own project directory (exit 42 elsewhere).
    let from_sub = tier.turn_in(&sub, &[], "a turn from a subdirectory");
    assert_continues(&from_sub, &first);
    assert_eq!(
        workspace_directories(&from_sub),
        [project],
        "the agent runs in the project directory, not the user's subdirectory"
    );
}

#[test]
fn an_interactive_turn_is_carried_into_the_next_headless_turn() {
    let Some(tier) = Tier::start(Agent::Gemini) else {
        return;
    };
    let mut terminal = Terminal::sticky(&tier.world, &tier.world.project, &[]);
    // Gemini CLI 0.61.0's input placeholder once it is ready (no dialog in the seeded HOME).
    terminal.wait_for("Type your message");
    let interactive = submit(&mut terminal, &tier, "interactive-kumquat-turn");
    // sticky exits with the agent's code.
    quit(&mut terminal);
    terminal.assert_exit(0);
    assert_fresh(&interactive);
    assert_eq!(interactive.summary.model, GEMINI_MODEL);
    tier.assert_no_processes_left();

    let stored = tier.stored_session_id();
    let headless = tier.turn(&[], "a headless turn after the interactive one");
    assert_continues(&headless, &interactive);
    assert_eq!(tier.stored_session_id(), stored);
    assert!(
        chats(&tier).iter().all(|(_, id, _)| *id == stored),
        "both turns are in the stored session's chat"
    );
}

#[test]
fn after_clear_inside_gemini_the_next_headless_turn_lands_in_the_new_session() {
    let Some(tier) = Tier::start(Agent::Gemini) else {
        return;
    };
    let (before, after) = ("before-clear-kumquat", "after-clear-quince");
    let mut terminal = Terminal::sticky(&tier.world, &tier.world.project, &[]);
    terminal.wait_for("Type your message");
    submit(&mut terminal, &tier, before);
    terminal.type_keys("/clear");
    terminal.wait_for("Clear the screen and start a new session");
    std::thread::sleep(ENTER_PAUSE);
    let mark = terminal.mark();
    terminal.type_keys("\r");
    // The input box is drawn once more before the command runs; the clear's own redraw (after
    // erasing the screen) is the one that takes input.
    let cleared = terminal.wait_for_since(mark, "\x1b[2J\x1b[3J");
    terminal.wait_for_since(cleared, "Type your message");
    let current = submit(&mut terminal, &tier, after);
    quit(&mut terminal);
    terminal.assert_exit(0);
    assert_fresh(&current);

    // Gemini's requests carry no session ID; its chat files say which session holds what.
    let holding = |word: &str| {
        let ids: Vec<String> = chats(&tier)
            .into_iter()
            .filter(|(_, _, text)| text.contains(word))
            .map(|(_, id, _)| id)
            .collect();
        assert_eq!(ids.len(), 1, "one chat holds {word:?}: {ids:?}");
        ids[0].clone()
    };
    let (cleared, new) = (holding(before), holding(after));
    assert_ne!(cleared, new, "/clear starts a new Gemini CLI session");
    assert_eq!(
        tier.stored_session_id(),
        new,
        "sticky follows the session the user is in"
    );
    let headless = tier.turn(&[], "a headless turn after /clear");
    assert_continues(&headless, &current);
    assert!(
        !mentions(&headless, before),
        "the cleared conversation must not come back"
    );
}

/// Types a one-word prompt into Gemini CLI's UI, submits it, and waits for the mock's reply on
/// the screen; returns the model request it made.
#[track_caller]
/// Quits Gemini's UI with Ctrl-C twice: the first asks for the second, which counts only within
/// three seconds (`WARNING_PROMPT_DURATION_MS = 3e3` in Gemini CLI 0.61.0's bundle). On a loaded
/// machine the UI can take longer than that to handle the second, which then only asks again,
/// so the pair is typed until the UI exits.
fn quit(terminal: &mut Terminal) {
    for _ in 0..3 {
        let mark = terminal.mark();
        terminal.type_keys("\x03");
        terminal.wait_for_since(mark, "again to exit");
        terminal.type_keys("\x03");
        if terminal.exit_within(Duration::from_secs(5)).is_some() {
            return;
        }
    }
}

fn submit(terminal: &mut Terminal, tier: &Tier, word: &str) -> Request {
    terminal.type_keys(word);
    terminal.wait_for(word);
    // Gemini CLI 0.61.0 takes an Enter within 30 ms of the previous key for part of a paste
    // and inserts a newline (`FAST_RETURN_TIMEOUT` in its bundle): a person's pause, not a race.
    std::thread::sleep(ENTER_PAUSE);
    let mark = terminal.mark();
    terminal.type_keys("\r");
    // On the screen first: a failure then shows what the UI did with the line.
    terminal.wait_for_since(mark, "MOCK-REPLY-");
    let request = tier.request_for_eventually(word);
    terminal.wait_for(&format!("MOCK-REPLY-{}", request.seq));
    request
}

#[test]
fn deleted_chats_are_a_lost_session_and_nothing_reaches_the_model() {
    let Some(tier) = Tier::start(Agent::Gemini) else {
        return;
    };
    tier.turn(&[], "remember the word kumquat");
    for (path, _, _) in chats(&tier) {
        std::fs::remove_file(&path).expect("remove a chat file");
    }
    let stderr = tier.assert_lost("are you still there?");
    assert!(stderr.contains("Error resuming session"), "{stderr}");
}
