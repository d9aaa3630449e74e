//! sticky with the real Gemini CLI 0.61.0 against the mock: what Gemini CLI supplies to the
//! [`scenarios`](super::scenarios) (issue 4, part 3: the history survives between sticky
//! invocations, `new` and a different `--model` start afresh, and the session sticky stores is
//! the one Gemini really used; issue 5, part 4: Gemini's own UI, then a headless follow-up that
//! carries the interactive turn), and its own `/clear`.
//!
//! sticky chooses Gemini's session IDs (`--session-id`); the tests check them against Gemini's
//! chat files, since its requests carry no session ID. The world's settings name
//! [`GEMINI_MODEL`], and a resume without `-m` falls back to it, so a turn on another model
//! staying there proves sticky passes the model again.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::scenarios::{ApiFailure, Lost, Model, Profile, Tools, Ui};
use super::terminal::Terminal;
use super::tier::Tier;
use super::{Agent, GEMINI_MODEL, assert_continues, assert_fresh, mentions};
use crate::mock::Request;

/// What Gemini CLI supplies to the shared scenarios.
pub const PROFILE: Profile = Profile {
    remember: "remember the word kumquat",
    session_header: None,
    default_model: Some(GEMINI_MODEL),
    // A model name no Gemini default uses.
    other_model: Some(Model {
        given: "gemini-mock-other",
        sent: "gemini-mock-other",
    }),
    assert_kept,
    working_directories: Some(workspace_directories),
    lost: Some(Lost {
        forget,
        says: "Error resuming session",
    }),
    ui: Some(Ui {
        ready: READY,
        submit,
        quit,
        farewell: None,
        answer_kept: true,
    }),
    tools: Some(Tools {
        permissions: &["--approval-mode", "yolo"],
        activity: Some("run_shell_command"),
    }),
    api_failure: Some(ApiFailure {
        retries,
        // 0.61.0 exits with the failed request's HTTP status, cut to a byte: 500 & 0xFF
        // (observed with the mock; sticky passes it through as the agent's own code).
        exit_code: 244,
        says: "MOCK-FAIL-500 requested",
        retries_429: true,
    }),
};

/// Bounds Gemini CLI's attempts at a failed request (`general.maxAttempts` in its settings,
/// 10 by default: bundle docs/reference/configuration.md) to the first and `retries` more.
#[track_caller]
fn retries(tier: &Tier, retries: u32) {
    let path = tier.world.home.join(".gemini/settings.json");
    let text = std::fs::read_to_string(&path).expect("read Gemini's settings");
    let mut settings: Value = serde_json::from_str(&text).expect("Gemini's settings are JSON");
    settings["general"]["maxAttempts"] = (retries + 1).into();
    std::fs::write(&path, settings.to_string()).expect("write Gemini's settings");
}

/// Gemini CLI 0.61.0's input placeholder, shown once it is ready for input (no dialog in the
/// seeded HOME).
const READY: &str = "Type your message";

/// How long a test waits between typing and Enter (see [`submit`]).
const ENTER_PAUSE: Duration = Duration::from_millis(150);

/// Gemini CLI keeps only the stored session: every run opens a chat file named for the minute
/// and the ID's first 8 characters (a resume in a later minute leaves a second one holding only
/// the header), and the chat of the last turn holds every turn before it.
#[track_caller]
fn assert_kept(tier: &Tier, stored: &str, turns: &[&Request]) {
    let chats = chats(tier);
    assert!(!chats.is_empty(), "Gemini CLI kept no chat file");
    for (path, id, _) in &chats {
        assert_eq!(id, stored, "{} belongs to another session", path.display());
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        assert!(
            name.ends_with(&format!("-{}.jsonl", &stored[..8])),
            "the chat file is named by the stored ID: {name}"
        );
    }
    let Some((last, earlier)) = turns.split_last() else {
        return;
    };
    let transcript = chats
        .iter()
        .find(|(_, _, text)| text.contains(&last.summary.last_user))
        .unwrap_or_else(|| panic!("no chat file holds the last turn: {chats:?}"));
    let said = earlier
        .iter()
        .flat_map(|turn| [&turn.summary.last_user, &turn.reply])
        .chain([&last.summary.last_user]);
    for said in said {
        assert!(
            transcript.2.contains(said.as_str()),
            "the stored session's chat lacks {said:?}"
        );
    }
}

/// Deletes every chat file.
#[track_caller]
fn forget(tier: &Tier, _stored: &str) {
    for (path, _, _) in chats(tier) {
        std::fs::remove_file(&path).expect("remove a chat file");
    }
}

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
fn after_clear_inside_gemini_the_next_headless_turn_lands_in_the_new_session() {
    let Some(tier) = Tier::start(Agent::Gemini) else {
        return;
    };
    let (before, after) = ("before-clear-kumquat", "after-clear-quince");
    let mut terminal = Terminal::sticky(&tier.world, &tier.world.project, &[]);
    terminal.wait_for(READY);
    submit(&mut terminal, &tier, before);
    terminal.type_keys("/clear");
    terminal.wait_for("Clear the screen and start a new session");
    std::thread::sleep(ENTER_PAUSE);
    let mark = terminal.mark();
    terminal.type_keys("\r");
    // The input box is drawn once more before the command runs; the clear's own redraw (after
    // erasing the screen) is the one that takes input.
    let cleared = terminal.wait_for_since(mark, "\x1b[2J\x1b[3J");
    terminal.wait_for_since(cleared, READY);
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

/// Quits Gemini's UI with Ctrl-C twice: the first asks for the second, which counts only within
/// three seconds (`WARNING_PROMPT_DURATION_MS = 3e3` in Gemini CLI 0.61.0's bundle). On a loaded
/// machine the UI can take longer than that to handle the second, which then only asks again,
/// so the pair is typed until the UI exits.
#[track_caller]
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

/// Types a one-word prompt into Gemini CLI's UI, submits it, and waits for the mock's reply on
/// the screen; returns the model request it made.
#[track_caller]
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
    let reply = format!("MOCK-REPLY-{}", request.seq);
    terminal.wait_for(&reply);
    // Recorded in its chat before the UI is quit (see `wait_for_record`).
    tier.wait_for_record(".gemini/tmp", &reply);
    request
}
