//! sticky with the real Codex 0.171.0 against the mock: what Codex supplies to the
//! [`scenarios`](super::scenarios) (issue 4, part 3: the history survives between sticky
//! invocations, `new` and a different `--model` start afresh, and the thread sticky stores is
//! the one Codex really used; issue 5, part 4: Codex's own TUI on a new session whose ID sticky
//! learns from the exit line), and its own tests: its usage errors' exit 2 kept behind sticky's
//! 76, and a first turn whose model request fails leaves a thread Codex saved, which the next
//! turn continues under the ID printed (issue 11).
//!
//! Codex mints its thread IDs, so sticky learns each from `thread.started`; the tests check it
//! against what Codex sent (the `session-id` header of every request) and kept (its rollout
//! file). Codex does not restore a thread's model on `exec resume` (it falls back to the
//! configured `mock-model`), so a turn on another model staying there proves sticky passes the
//! model again. The project is a git repository, so Codex runs without
//! `--skip-git-repo-check`.

use std::path::Path;
use std::time::Duration;

use super::scenarios::{ApiFailure, Lost, Model, Profile, Tools, Ui};
use super::terminal::Terminal;
use super::tier::Tier;
use super::{Agent, CODEX_MODEL, assert_continues, mentions, request_for};
use crate::mock::{FAIL_500, Request};

/// What Codex supplies to the shared scenarios.
pub const PROFILE: Profile = Profile {
    remember: "remember the word kumquat",
    session_header: Some("session-id"),
    default_model: Some(CODEX_MODEL),
    // A model slug Codex does not know.
    other_model: Some(Model {
        given: "mock-other-model",
        sent: "mock-other-model",
    }),
    assert_kept,
    working_directories: Some(working_directories),
    lost: Some(Lost {
        forget,
        says: "no rollout found for thread id",
    }),
    ui: Some(Ui {
        // Codex 0.171.0 tells the terminal its state in an OSC 7501 sequence; `idle` once the
        // TUI has loaded and waits for input.
        ready: "state=idle:app=codex",
        submit,
        quit,
        farewell: Some("codex resume "),
        answer_kept: true,
    }),
    // `exec` asks for no approval; its default sandbox is read-only, so a CI user lets it
    // write in the project (0.171.0 has no `--full-auto` any more).
    tools: Some(Tools {
        permissions: &["--sandbox", "workspace-write"],
        // Codex reports the command it runs (`command_execution`), not a tool's name.
        activity: Some("/bin/bash -lc"),
    }),
    api_failure: Some(ApiFailure {
        retries,
        exit_code: 1,
        says: "experiencing high demand",
        // 0.171.0 gives up on a 429 at once: `exceeded retry limit, last status: 429 Too Many
        // Requests` after one request, whatever `request_max_retries` says.
        retries_429: false,
    }),
};

/// Bounds Codex's retries of a failed request through sticky's configuration of its
/// arguments: the provider's `request_max_retries`, and no `stream_max_retries` on top (0.171.0
/// retries a failed request in both loops, so one of each made four requests).
#[track_caller]
fn retries(tier: &Tier, retries: u32) {
    tier.configure_sticky(&format!(
        "[agents.codex]\nargs = [\"-c\", \"model_providers.mock.request_max_retries={retries}\", \
         \"-c\", \"model_providers.mock.stream_max_retries=0\"]\n"
    ));
}

/// Codex keeps one rollout for the thread, named by the stored ID, begun in the project.
#[track_caller]
fn assert_kept(tier: &Tier, stored: &str, _turns: &[&Request]) {
    let rollouts = tier.world.files_under(".codex/sessions", ".jsonl");
    assert_eq!(
        rollouts.len(),
        1,
        "Codex keeps one rollout for the thread: {rollouts:?}"
    );
    let name = rollouts[0]
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    assert!(
        name.starts_with("rollout-") && name.ends_with(&format!("-{stored}.jsonl")),
        "the rollout is named by the stored ID: {name}"
    );
    let meta = first_line(&rollouts[0]);
    assert_eq!(meta["type"], "session_meta");
    assert_eq!(meta["payload"]["id"], stored);
    assert_eq!(
        meta["payload"]["cwd"],
        tier.world.project.to_string_lossy().as_ref()
    );
}

/// Deletes every rollout.
#[track_caller]
fn forget(tier: &Tier, _stored: &str) {
    for rollout in tier.world.files_under(".codex/sessions", ".jsonl") {
        std::fs::remove_file(&rollout).expect("remove the rollout");
    }
}

/// Every working directory Codex stated in a request (`<cwd>...</cwd>` in each
/// `<environment_context>` turn; a resume from another directory appends one more).
fn working_directories(request: &Request) -> Vec<String> {
    let body = request.body.to_string();
    body.match_indices("<cwd>")
        .filter_map(|(at, mark)| {
            let rest = &body[at + mark.len()..];
            rest.find("</cwd>").map(|end| rest[..end].to_owned())
        })
        .collect()
}

/// Types a one-word prompt into Codex's TUI (again if it was dropped), submits it, and waits
/// for the mock's reply on the screen; returns the model request it made.
#[track_caller]
fn submit(terminal: &mut Terminal, tier: &Tier, word: &str) -> Request {
    terminal.type_until_echoed(word, Duration::from_secs(10));
    terminal.type_keys("\r");
    let request = tier.request_for_typed_eventually(word);
    let reply = format!("MOCK-REPLY-{}", request.seq);
    terminal.wait_for(&reply);
    // In its rollout before the UI is quit: a `/quit` that lands while Codex still winds the
    // turn down aborts it, and Codex then adds a `<turn_aborted>` user message to the
    // session's history (seen once in CI under load: one user message too many on resume).
    tier.wait_for_record(".codex/sessions", &reply);
    request
}

/// Leaves Codex's TUI with `/quit`.
#[track_caller]
fn quit(terminal: &mut Terminal) {
    let mark = terminal.mark();
    terminal.type_keys("/quit");
    terminal.wait_for_since(mark, "/quit");
    terminal.type_keys("\r");
}

/// The first line of a JSON-lines file, parsed.
#[track_caller]
fn first_line(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("read the rollout");
    let line = text.lines().next().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: {e}: {line}", path.display()))
}

#[test]
fn codex_exiting_2_on_an_argument_it_refuses_makes_sticky_exit_76_with_its_code_kept() {
    // Codex's own usage errors exit 2, sticky's usage error code: sticky exits 76 instead, and
    // the agent's 2 is in `--json`, in `log` and in the error line; the thread stays.
    let Some(tier) = Tier::start(Agent::Codex) else {
        return;
    };
    let first = tier.turn(&[], "a turn before the refused argument");
    let thread = tier.stored_session_id();
    let failed = tier.world.sticky(
        &tier.world.project,
        ["--json", "this turn is refused", "--", "--no-such-flag"],
    );
    assert_eq!(failed.status.code(), Some(76), "{failed}");
    let json = failed.json();
    assert_eq!(json["exit_code"], 76, "{json}");
    assert_eq!(json["turn"]["exit_code"], 2, "Codex's own code: {json}");
    assert_eq!(json["turn"]["status"], "failed");
    assert!(
        json["error"]
            .as_str()
            .is_some_and(|e| e.contains("exited with code 2 (sticky exits 76")),
        "{json}"
    );
    let log = tier.world.sticky_ok(["log"]);
    assert!(log.stdout.contains("exit 2"), "{log}");
    assert_eq!(tier.stored_session_id(), thread, "the thread stays");
    let next = tier.turn(&[], "the turn after the refused one");
    assert_continues(&next, &first);
}

#[test]
fn a_failed_first_turn_keeps_the_thread_codex_saved_and_the_next_turn_continues_it() {
    let Some(tier) = Tier::start(Agent::Codex) else {
        return;
    };
    // Codex retries a failed model request with backoff (some 25 s of them); the mock fails
    // every retry alike, so the user's configuration turns them off.
    let config = tier.world.home.join(".config/sticky/config.toml");
    std::fs::create_dir_all(config.parent().expect("a directory")).expect("create it");
    std::fs::write(
        &config,
        "[agents.codex]\nargs = [\"-c\", \"model_providers.mock.request_max_retries=0\", \
         \"-c\", \"model_providers.mock.stream_max_retries=0\"]\n",
    )
    .expect("write sticky's configuration");

    let prompt = format!("{FAIL_500} remember the word kumquat");
    let failed = tier.world.sticky(&tier.world.project, ["--json", &prompt]);
    assert_eq!(failed.status.code(), Some(1), "Codex's exit code: {failed}");
    let printed = failed.json()["session"]["agent_session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no thread printed: {failed}"))
        .to_owned();
    let refused = request_for(&tier.mock, &prompt);
    assert_eq!(
        tier.session_of(&refused),
        printed,
        "the printed thread is Codex's"
    );
    // Codex 0.171.0 saves the thread when it accepts the prompt, before the model answers.
    let rollouts = tier.world.files_under(".codex/sessions", ".jsonl");
    assert!(
        rollouts.len() == 1
            && rollouts[0]
                .to_string_lossy()
                .ends_with(&format!("-{printed}.jsonl")),
        "{rollouts:?}"
    );

    let next = tier.turn(&[], "which word did I ask you to remember?");
    assert_eq!(
        tier.session_of(&next),
        printed,
        "the thread printed after the failed turn is the one the next turn uses"
    );
    assert!(mentions(&next, &prompt), "the failed prompt is history");
    assert_eq!(tier.stored_session_id(), printed);
    let log = tier.world.sticky_ok(["log", "--json"]).json();
    let sessions = log["sessions"].as_array().cloned().unwrap_or_default();
    assert_eq!(sessions.len(), 1, "no rotation: {log}");
    let statuses: Vec<&str> = sessions[0]["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|turn| turn["status"].as_str())
        .collect();
    assert_eq!(statuses, ["failed", "ok"], "{log}");
    tier.assert_no_processes_left();
}
