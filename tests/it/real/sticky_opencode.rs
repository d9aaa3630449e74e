//! sticky with the real opencode 1.18.33 against the mock: what opencode supplies to the
//! [`scenarios`](super::scenarios) (issue 4, part 3: the history survives between sticky
//! invocations in the session opencode really used, and `new` starts afresh; also another
//! `--model`, a turn from a subdirectory and a lost session; issue 15, part 12: a tool turn in
//! Chat Completions' form).
//!
//! opencode mints its session IDs (`ses_…`) and sticky learns each from its events; every
//! request opencode sends names its session in the `x-session-id` header. Its first turn also
//! sends a title request, which [`Tier::turn`] tells apart from the turn by its reply. Its own
//! TUI is driven on a terminal too (issue 15, part 12): sticky learns the session it started
//! from its exit line, and the next headless turn continues it.
//!
//! opencode resumed from a directory other than its session's never exits after the turn
//! (research/agents.md §3.5, #41841). The subdirectory scenario is the guard: a turn started in
//! `src/deep` (with `PWD` there) would hang if sticky ran opencode there, and [`super::run`]
//! kills it and fails the test at [`super::DEADLINE`] instead of hanging CI.

use std::time::{Duration, Instant};

use super::scenarios::{Lost, Model, Profile, Tools, Ui};
use super::terminal::Terminal;
use super::tier::Tier;
use super::{DEADLINE, lines_after, mentions};
use crate::mock::Request;

/// What opencode supplies to the shared scenarios.
pub const PROFILE: Profile = Profile {
    // Several words and quotes: `opencode run` quotes a message argument that holds spaces, so
    // only a prompt given another way reaches the model as typed.
    remember: "remember the word \"kumquat\"",
    session_header: Some("x-session-id"),
    // The model of the world's opencode configuration.
    default_model: Some("mock-model"),
    // Declared in the world's opencode configuration, which refuses a model it does not know.
    other_model: Some(Model {
        given: "mock/mock-other",
        sent: "mock-other",
    }),
    assert_kept,
    working_directories: Some(working_directories),
    lost: Some(Lost {
        forget,
        says: "Session not found",
    }),
    ui: Some(Ui {
        ready: READY,
        submit,
        quit,
        farewell: Some("opencode -s ses_"),
        // sticky reads an interactive turn's answer from the agent's transcript file; opencode
        // keeps its sessions in a database (src/agent/answers.rs), so `show` has no answer for
        // such a turn.
        answer_kept: false,
    }),
    // `run --auto` approves what the configuration does not deny (`opencode run --help`).
    tools: Some(Tools {
        permissions: &["--auto"],
        // 1.18.33 writes its `tool_use` event only once the tool completed
        // (`"state":{"status":"completed",...}`, observed with a command held until a file
        // appeared), so sticky has nothing to show while it runs.
        activity: None,
    }),
    api_failure: None,
};

/// opencode keeps every session in one database, not a file per session: the stored ID is one
/// opencode minted (the requests naming it are checked by the scenarios).
#[track_caller]
fn assert_kept(_tier: &Tier, stored: &str, _turns: &[&Request]) {
    assert!(stored.starts_with("ses_"), "{stored}");
}

/// Every working directory opencode states in a request (in the `<env>` of its system prompt;
/// opencode takes it from `$PWD`).
fn working_directories(request: &Request) -> Vec<String> {
    lines_after(request, "  Working directory: ")
}

/// Deletes opencode's data directory, where its one database keeps every session.
#[track_caller]
fn forget(tier: &Tier, _stored: &str) {
    let data = tier.world.home.join(".local/share/opencode");
    std::fs::remove_dir_all(&data).expect("remove opencode's data directory");
}

/// A word of opencode 1.18.33's input placeholder ("Ask anything..."), drawn once its TUI is
/// ready for input.
const READY: &str = "anything";

/// Types a one-word prompt into opencode's TUI (again if it was dropped), submits it, and waits
/// for the mock's reply on the screen; returns the model request of the turn (not the title
/// request opencode sends for a new session, which also ends with the prompt and whose reply
/// the TUI shows as the session's title).
#[track_caller]
fn submit(terminal: &mut Terminal, tier: &Tier, word: &str) -> Request {
    terminal.type_until_echoed(word, Duration::from_secs(10));
    terminal.type_keys("\r");
    let started = Instant::now();
    let request = loop {
        let turn = tier.mock.turns().into_iter().find(|t| {
            let user = &t.summary.last_user;
            !user.is_empty() && user.split(word).all(str::is_empty) && !mentions(t, TITLE_REQUEST)
        });
        if let Some(turn) = turn {
            break turn;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "opencode sent no turn for {word:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    terminal.wait_for(&format!("MOCK-REPLY-{}", request.seq));
    request
}

/// What opencode 1.18.33's title request asks the model, before the user's first prompt.
const TITLE_REQUEST: &str = "Generate a title for this conversation";

/// Leaves opencode's TUI with Ctrl-C on an empty input.
#[track_caller]
fn quit(terminal: &mut Terminal) {
    terminal.type_keys("\x03");
}
