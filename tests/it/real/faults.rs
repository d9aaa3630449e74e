//! Faults with the real agents: Claude Code 2.1.332 killed mid-turn leaves the session to be
//! resumed with its history (issue 6, part 5), and a model API that fails (HTTP 500 until the
//! agent gives up, HTTP 429 once) fails or delays the turn without losing the session (issue
//! 15, part 12; a scenario of the agents whose profile says how they fail). (A transcript
//! deleted under sticky, a lost session, is one of the [`scenarios`](super::scenarios) of every
//! agent.)
//!
//! The mock's `MOCK-DELAY-<ms>` marker holds a request open, so the test kills Claude Code
//! while it waits on the model, as a machine running out of memory or a CI job's timeout would;
//! `MOCK-FAIL-<status>[x<N>]` fails requests.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::{Pid, getpgid};
use serde_json::Value;

use super::scenarios::ApiFailure;
use super::tier::Tier;
use super::{Agent, DEADLINE, Finished, mentions, run};
use crate::mock::{DELAY, FAIL};

/// The turns of the project's conversation, oldest first (`sticky log --json`).
#[track_caller]
fn logged_turns(tier: &Tier) -> Vec<Value> {
    let log = tier.world.sticky_ok(["log", "--json"]).json();
    log["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|session| session["turns"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// Starts `sticky PROMPT` in the project on a thread; the handle gives its result.
fn sticky_in_background(tier: &Tier, prompt: &str) -> thread::JoinHandle<Finished> {
    let mut command = tier
        .world
        .command(super::sticky_binary(), &tier.world.project);
    command.arg(prompt);
    thread::spawn(move || run(command))
}

/// The process running the agent program at `program`, once it has started.
#[track_caller]
fn agent_process(tier: &Tier, program: &Path) -> i32 {
    let program = program.to_string_lossy();
    let started = Instant::now();
    loop {
        let found = tier
            .world
            .processes()
            .into_iter()
            .find(|(_, cmdline)| cmdline.starts_with(program.as_ref()));
        if let Some((pid, _)) = found {
            return pid;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "no {program} process appeared"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn claude_killed_mid_turn_leaves_the_session_to_resume_with_its_history() {
    let Some(tier) = Tier::start(Agent::Claude) else {
        return;
    };
    let Some(claude) = super::require(Agent::Claude) else {
        return;
    };
    let first = tier.turn(&[], "remember the word kumquat");
    let session = tier.session_of(&first);

    // Held by the mock far longer than the test waits: only the kill ends this turn.
    let held = format!("{DELAY}600000 this turn never gets an answer");
    let sticky = sticky_in_background(&tier, &held);
    let request = tier.request_for_eventually(&held);
    assert_eq!(
        tier.session_of(&request),
        session,
        "the held turn resumed the session"
    );
    let pid = agent_process(&tier, &claude);
    let group = getpgid(Some(Pid::from_raw(pid))).expect("the agent's process group");
    killpg(group, Signal::SIGKILL).expect("kill the agent's process group");

    let killed = sticky.join().expect("the sticky thread");
    assert_eq!(
        killed.status.code(),
        Some(128 + 9),
        "a signal death is 128+N: {killed}"
    );
    let turns = logged_turns(&tier);
    let last = turns.last().expect("the killed turn is logged");
    assert_eq!(last["status"], "failed", "{last}");
    assert_eq!(last["signal"], 9, "{last}");
    assert_eq!(
        tier.stored_session_id(),
        session,
        "a killed turn never rotates the session"
    );

    let next = tier.turn(&[], "which word did I ask you to remember?");
    assert_eq!(
        tier.session_of(&next),
        session,
        "the next turn resumes the session"
    );
    for carried in [&first.summary.last_user, &first.reply] {
        assert!(
            mentions(&next, carried),
            "{carried:?} is missing from the turn after the kill"
        );
    }
    assert!(
        next.summary.assistant_msgs >= 1,
        "the earlier answer is history: {:?}",
        next.summary
    );
    tier.assert_no_processes_left();
}

/// A model request that keeps failing with HTTP 500 fails the turn with the agent's own exit
/// code and error, recorded, and keeps the session; a 429 the agent retries once delays the next
/// turn (an agent that does not retry fails it likewise), and the next turn that gets an answer
/// continues the session with its history. The agent's retries are bounded to one
/// as a user would configure them, so the test waits on the agent, never on a clock.
pub fn an_api_failure_fails_the_turn_and_the_session_goes_on(agent: Agent) {
    let Some(tier) = Tier::start(agent) else {
        return;
    };
    let profile = agent.profile();
    let failure: &ApiFailure = profile
        .api_failure
        .as_ref()
        .expect("the profile says how the agent fails");
    let first = tier.turn(&[], profile.remember);
    let session = tier.session_of(&first);
    (failure.retries)(&tier, 1);

    let failing = format!("{FAIL}500 this request fails");
    let failed = tier.world.sticky(&tier.world.project, [&failing]);
    assert_eq!(
        failed.status.code(),
        Some(failure.exit_code),
        "the agent's exit code passes through: {failed}"
    );
    assert!(failed.stdout.is_empty(), "no answer: {failed}");
    assert!(failed.stderr.contains(failure.says), "{failed}");
    let tries = tier
        .mock
        .turns()
        .iter()
        .filter(|t| t.summary.last_user == failing)
        .count();
    assert_eq!(tries, 2, "the request and its one retry: {failed}");
    let last = logged_turns(&tier).last().cloned().unwrap_or_default();
    assert_eq!(
        (&last["status"], &last["exit_code"], &last["prompt"]),
        (
            &"failed".into(),
            &failure.exit_code.into(),
            &failing.clone().into()
        ),
        "the failed turn is recorded: {last}"
    );
    assert_eq!(tier.stored_session_id(), session, "the session is kept");

    let limited = format!("{FAIL}429x1 which word did I ask you to remember?");
    let finished = tier.world.sticky(&tier.world.project, [&limited]);
    // Claude Code joins a failed prompt and the next one into one user message.
    let tries: Vec<bool> = tier
        .mock
        .turns()
        .iter()
        .filter(|t| t.summary.last_user.ends_with(&limited))
        .map(|t| t.reply.is_empty())
        .collect();
    let answered = if failure.retries_429 {
        finished.assert_success();
        assert_eq!(tries, [true, false], "refused once, then answered");
        tier.answered(&finished)
    } else {
        assert_eq!(
            finished.status.code(),
            Some(failure.exit_code),
            "{finished}"
        );
        assert_eq!(tries, [true], "refused, and not tried again");
        assert_eq!(tier.stored_session_id(), session, "the session is kept");
        tier.turn(&[], "which word did I ask you to remember?")
    };
    assert_eq!(tier.session_of(&answered), session, "the same session");
    for carried in [&first.summary.last_user, &first.reply] {
        assert!(
            mentions(&answered, carried),
            "{carried:?} is missing from the turn after the failure"
        );
    }
    tier.assert_no_processes_left();
}
