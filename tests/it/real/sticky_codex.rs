//! sticky with the real Codex 0.171.0 against the mock: the history survives between sticky
//! invocations, `new` and a different `--model` start afresh, and the thread sticky stores is
//! the one Codex really used (issue 4, part 3); Codex's own TUI on a new session whose ID
//! sticky learns from the exit line (issue 5, part 4); a first turn whose model request fails
//! leaves a thread Codex saved, which the next turn continues under the ID printed (issue 11).
//!
//! Codex mints its thread IDs, so sticky learns each from `thread.started`; the tests check it
//! against what Codex sent (the `session-id` header of every request) and kept (its rollout
//! file). Codex does not restore a thread's model on `exec resume` (it falls back to the
//! configured `mock-model`), so a turn on another model staying there proves sticky passes the
//! model again. The project is a git repository, so Codex runs without
//! `--skip-git-repo-check`.

use std::path::Path;
use std::time::Duration;

use super::terminal::Terminal;
use super::tier::Tier;
use super::{Agent, CODEX_MODEL, assert_continues, assert_fresh, mentions, request_for};
use crate::mock::{FAIL_500, Request};

/// A model slug Codex does not know, for the model-change scenarios.
const OTHER_MODEL: &str = "mock-other-model";

/// The thread ID Codex sent with a request.
#[track_caller]
fn thread_of(request: &Request) -> String {
    request
        .header("session-id")
        .unwrap_or_else(|| panic!("no session-id header on {:?}", request.headers))
        .to_owned()
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

#[test]
fn two_sticky_turns_carry_the_history() {
    let Some(tier) = Tier::start(Agent::Codex) else {
        return;
    };
    let first = tier.turn(&[], "remember the word kumquat");
    assert_fresh(&first);
    let second = tier.turn(&[], "which word did I ask you to remember?");
    assert_continues(&second, &first);
    assert_eq!(thread_of(&second), thread_of(&first), "the same thread");
    tier.world.assert_no_self_update();
    tier.assert_no_processes_left();
}

#[test]
fn sticky_new_starts_without_history_and_the_next_turn_continues_it() {
    let Some(tier) = Tier::start(Agent::Codex) else {
        return;
    };
    let old = tier.turn(&[], "a turn before the rotation");
    let fresh = tier.turn(&["new"], "the first turn after new");
    assert_fresh(&fresh);
    assert!(
        !mentions(&fresh, &old.summary.last_user),
        "the new thread must not see the old one"
    );
    assert_ne!(thread_of(&fresh), thread_of(&old), "new rotates the thread");

    let next = tier.turn(&[], "the second turn after new");
    assert_continues(&next, &fresh);
    assert!(!mentions(&next, &old.summary.last_user));
    assert_eq!(thread_of(&next), thread_of(&fresh));
}

#[test]
fn another_model_starts_afresh_and_later_turns_stay_on_it() {
    let Some(tier) = Tier::start(Agent::Codex) else {
        return;
    };
    let default = tier.turn(&[], "a turn on the configured model");
    assert_eq!(default.summary.model, CODEX_MODEL);

    let switched = tier.turn(&["--model", OTHER_MODEL], "a turn on the other model");
    assert_eq!(switched.summary.model, OTHER_MODEL);
    assert_fresh(&switched);
    assert_ne!(thread_of(&switched), thread_of(&default));

    // `codex exec resume` alone would fall back to the configured model.
    let stayed = tier.turn(&[], "no --model: stay on the other model");
    assert_eq!(
        stayed.summary.model, OTHER_MODEL,
        "sticky passes the session's model on resume"
    );
    assert_continues(&stayed, &switched);
    assert_eq!(thread_of(&stayed), thread_of(&switched));
}

#[test]
fn the_stored_thread_id_is_the_one_codex_really_used() {
    let Some(tier) = Tier::start(Agent::Codex) else {
        return;
    };
    let first = tier.turn(&[], "remember the word kumquat");
    let second = tier.turn(&[], "which word did I ask you to remember?");
    let stored = tier.stored_session_id();
    assert_eq!(
        thread_of(&first),
        stored,
        "the request names the stored thread"
    );
    assert_eq!(thread_of(&second), stored);

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
    assert_eq!(meta["payload"]["id"], stored.as_str());
    assert_eq!(
        meta["payload"]["cwd"],
        tier.world.project.to_string_lossy().as_ref()
    );
}

#[test]
fn a_turn_from_a_subdirectory_continues_the_project_thread_in_the_project() {
    let Some(tier) = Tier::start(Agent::Codex) else {
        return;
    };
    let project = tier.world.project.to_string_lossy().into_owned();
    let first = tier.turn(&[], "a turn in the project root");
    let sub = tier.world.project.join("src/deep");
    std::fs::create_dir_all(&sub).expect("create a subdirectory");

    let from_sub = tier.turn_in(&sub, &[], "a turn from a subdirectory");
    assert_continues(&from_sub, &first);
    assert_eq!(thread_of(&from_sub), thread_of(&first));
    // Codex resumes from anywhere and would add an environment turn naming the subdirectory.
    assert_eq!(
        working_directories(&from_sub),
        [project],
        "the agent runs in the project directory, not the user's subdirectory"
    );
}

#[test]
fn a_new_interactive_codex_session_is_learned_from_its_exit_line_and_continued() {
    let Some(tier) = Tier::start(Agent::Codex) else {
        return;
    };
    let typed = "interactive-kumquat-turn";
    let mut terminal = Terminal::sticky(&tier.world, &tier.world.project, &[]);
    // Codex 0.171.0 tells the terminal its state in an OSC 7501 sequence; `idle` once the TUI
    // has loaded and waits for input.
    terminal.wait_for("state=idle:app=codex");
    terminal.type_until_echoed(typed, Duration::from_secs(10));
    terminal.type_keys("\r");
    let interactive = tier.request_for_typed_eventually(typed);
    terminal.wait_for(&format!("MOCK-REPLY-{}", interactive.seq));
    let mark = terminal.mark();
    terminal.type_keys("/quit");
    terminal.wait_for_since(mark, "/quit");
    terminal.type_keys("\r");
    // sticky exits with the agent's code.
    terminal.assert_exit(0);
    terminal.wait_for("codex resume ");
    assert_fresh(&interactive);
    tier.assert_no_processes_left();

    let thread = thread_of(&interactive);
    assert_eq!(
        tier.stored_session_id(),
        thread,
        "sticky learned the thread Codex named on exit"
    );
    let headless = tier.turn(&[], "a headless turn after the interactive one");
    assert_continues(&headless, &interactive);
    assert_eq!(thread_of(&headless), thread);
    tier.assert_no_processes_left();
}

/// The first line of a JSON-lines file, parsed.
#[track_caller]
fn first_line(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("read the rollout");
    let line = text.lines().next().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: {e}: {line}", path.display()))
}

#[test]
fn a_deleted_rollout_is_a_lost_thread_and_nothing_reaches_the_model() {
    let Some(tier) = Tier::start(Agent::Codex) else {
        return;
    };
    tier.turn(&[], "remember the word kumquat");
    for rollout in tier.world.files_under(".codex/sessions", ".jsonl") {
        std::fs::remove_file(&rollout).expect("remove the rollout");
    }
    let stderr = tier.assert_lost("are you still there?");
    assert!(
        stderr.contains("no rollout found for thread id"),
        "{stderr}"
    );
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
        thread_of(&refused),
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
        thread_of(&next),
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
