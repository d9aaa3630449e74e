//! sticky with the real Qwen Code 0.24.4 (on node 22) against the mock: what Qwen Code supplies
//! to the [`scenarios`](super::scenarios) (issue 4, part 3: the history survives between sticky
//! invocations in the session Qwen really used, and `new` starts afresh; also another
//! `--model`, a turn from a subdirectory and a lost session; issue 15, part 12: a tool turn in
//! Chat Completions' form, and the progress line naming the tool).
//!
//! Qwen Code speaks Chat Completions through its `openai` auth type (set in the world's
//! settings) and sends a background "managed memory" request after each turn, which
//! [`Tier::turn`] tells apart from the turn by its reply. sticky chooses the session IDs
//! (`--session-id`); Qwen's requests carry none, so its chat file is the evidence. Its own UI
//! (a fork of Gemini CLI's) is driven on a terminal as Gemini's is (issue 15, part 12).

use std::time::Duration;

use serde_json::Value;

use super::lines_after;
use super::scenarios::{Lost, Model, Profile, Tools, Ui};
use super::terminal::Terminal;
use super::tier::Tier;
use crate::mock::Request;

/// What Qwen Code supplies to the shared scenarios.
pub const PROFILE: Profile = Profile {
    remember: "remember the word kumquat",
    session_header: None,
    // The world's `OPENAI_MODEL`.
    default_model: Some("qwen3-coder-plus"),
    // Qwen Code does not restore a session's model on resume (it falls back to the world's
    // `OPENAI_MODEL`), so staying on this one proves sticky passes it again.
    other_model: Some(Model {
        given: "qwen-mock-other",
        sent: "qwen-mock-other",
    }),
    assert_kept,
    working_directories: Some(working_directories),
    lost: Some(Lost {
        forget,
        says: "No saved session found",
    }),
    ui: Some(Ui {
        ready: READY,
        submit,
        quit,
        farewell: Some("qwen --resume "),
        answer_kept: true,
    }),
    // Qwen Code writes Claude Code's stream-json, whose `tool_use` names the tool.
    tools: Some(Tools {
        permissions: &["--approval-mode", "yolo"],
        activity: Some("run_shell_command"),
    }),
    api_failure: None,
};

/// Qwen Code keeps one chat, named by the stored ID, under the project; every record of it
/// names the session, and it holds every prompt of `turns`.
#[track_caller]
fn assert_kept(tier: &Tier, stored: &str, turns: &[&Request]) {
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
        assert_eq!(record["sessionId"], stored, "{line}");
    }
    for said in turns.iter().map(|turn| &turn.summary.last_user) {
        assert!(text.contains(said.as_str()), "the chat lacks {said:?}");
    }
}

/// Every working directory Qwen Code states in a request (in the environment part of its
/// first user message; Qwen finds a session only from the directory it began in).
fn working_directories(request: &Request) -> Vec<String> {
    lines_after(request, "I'm currently working in the directory: ")
}

/// Deletes every chat.
#[track_caller]
fn forget(tier: &Tier, _stored: &str) {
    for chat in tier.world.files_under(".qwen/projects", ".jsonl") {
        std::fs::remove_file(&chat).expect("remove the chat");
    }
}

/// Qwen Code 0.24.4's input placeholder, shown once it is ready for input (no dialog in the
/// seeded HOME).
const READY: &str = "Type your message";

/// How long a test waits between typing and Enter: as Gemini CLI, whose input handling Qwen
/// Code keeps, an Enter right after the previous key counts as part of a paste.
const ENTER_PAUSE: Duration = Duration::from_millis(150);

/// Types a one-word prompt into Qwen Code's UI, submits it, and waits for the mock's reply on
/// the screen; returns the model request it made.
#[track_caller]
fn submit(terminal: &mut Terminal, tier: &Tier, word: &str) -> Request {
    terminal.type_keys(word);
    terminal.wait_for(word);
    std::thread::sleep(ENTER_PAUSE);
    let mark = terminal.mark();
    terminal.type_keys("\r");
    terminal.wait_for_since(mark, "MOCK-REPLY-");
    let request = tier.request_for_eventually(word);
    let reply = format!("MOCK-REPLY-{}", request.seq);
    terminal.wait_for(&reply);
    // Recorded in its chat before the UI is quit (see `wait_for_record`).
    tier.wait_for_record(".qwen/projects", &reply);
    request
}

/// Quits Qwen Code's UI with Ctrl-C twice: the second counts only within one second
/// (`CTRL_EXIT_PROMPT_DURATION_MS = 1e3` in its 0.24.4 bundle), so on a loaded machine the pair
/// is typed until the UI exits.
#[track_caller]
fn quit(terminal: &mut Terminal) {
    for _ in 0..5 {
        let mark = terminal.mark();
        terminal.type_keys("\x03");
        terminal.wait_for_since(mark, "again to exit");
        terminal.type_keys("\x03");
        if terminal.exit_within(Duration::from_secs(5)).is_some() {
            return;
        }
    }
}
