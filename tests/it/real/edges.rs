//! The edges of a turn with the real agents (issue 15, part 12 item 3): a prompt over the
//! 128 KiB limit of one argument, piped as a user gives one; a prompt that starts with `-`
//! (`sticky -p`); Ctrl-C (SIGINT to sticky) in the middle of a turn; and two threads (`-t`),
//! each with its own session and history.
//!
//! Written once like the [`scenarios`](super::scenarios) and run for each agent by the table at
//! the end (`real::edges::qwen::a_prompt_over_128_kib_...`). What happened is read from the
//! mock's requests: the prompt the model got, the history the next turn carried, the session
//! each request named.

use std::fs::File;
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

use super::tier::Tier;
use super::{Agent, DEADLINE, Finished, assert_continues, assert_fresh, mentions, run};
use crate::mock::DELAY;

/// A prompt of `size` bytes or a little more: numbered lines, so a part lost or reordered on
/// the way shows in the request; no trailing newline (some agents trim one).
fn large_prompt(size: usize) -> String {
    let mut prompt = String::from("remember the word kumquat; the lines below are filler.");
    let mut line = 0;
    while prompt.len() < size {
        line += 1;
        prompt.push_str(&format!(
            "\nline {line:05}: the quick brown fox jumps over the lazy dog"
        ));
    }
    prompt.push_str("\nthe end of the long prompt");
    prompt
}

/// A prompt over 128 KiB (Linux's `MAX_ARG_STRLEN`: no single argument may be longer), piped
/// to sticky as its whole prompt, reaches the model byte for byte (sticky gives it to the agent
/// on stdin), and the next turn carries it as history.
pub fn a_prompt_over_128_kib_reaches_the_model_whole_and_the_next_turn_carries_it(agent: Agent) {
    let Some(tier) = Tier::start(agent) else {
        return;
    };
    let prompt = large_prompt(140 * 1024);
    assert!(prompt.len() > 128 * 1024);
    let file = tier.world.home.join("large-prompt.txt");
    std::fs::write(&file, &prompt).expect("write the prompt");
    let mut command = tier
        .world
        .command(super::sticky_binary(), &tier.world.project);
    command.stdin(File::open(&file).expect("open the prompt"));
    let finished = run(command);
    finished.assert_success();
    let large = tier.answered(&finished);
    assert!(
        large.summary.last_user == prompt,
        "the model got {} bytes, not the {} piped: {:?}...",
        large.summary.last_user.len(),
        prompt.len(),
        large
            .summary
            .last_user
            .chars()
            .take(200)
            .collect::<String>()
    );
    assert_fresh(&large);
    let next = tier.turn(&[], "which word did the long prompt ask me to remember?");
    assert_continues(&next, &large);
}

/// A prompt that starts with `-`, given with `-p`, reaches the model as typed (not taken for
/// an option by sticky or the agent), and the next turn carries it.
pub fn a_prompt_that_starts_with_a_dash_reaches_the_model_as_typed(agent: Agent) {
    let Some(tier) = Tier::start(agent) else {
        return;
    };
    let dashed = tier.turn(&["-p"], "-v prints nothing; why?");
    assert_fresh(&dashed);
    let next = tier.turn(&["-p"], "--help is fine though");
    assert_continues(&next, &dashed);
}

/// Two threads of one project, each with its own session and history: neither sees the other's
/// turns, and the project's main thread is a third conversation.
pub fn two_threads_keep_their_own_sessions_and_histories(agent: Agent) {
    let Some(tier) = Tier::start(agent) else {
        return;
    };
    let session = |request| {
        tier.request_session(request)
            .expect("the agent's requests name their session")
    };
    let alpha = tier.turn(&["-t", "alpha"], "remember the word kumquat in alpha");
    let beta = tier.turn(&["-t", "beta"], "remember the word quince in beta");
    assert_fresh(&beta);
    assert_ne!(
        session(&alpha),
        session(&beta),
        "a thread has its own session"
    );

    let alpha_again = tier.turn(&["-t", "alpha"], "which word did alpha remember?");
    assert_continues(&alpha_again, &alpha);
    assert!(!mentions(&alpha_again, &beta.summary.last_user));
    assert_eq!(session(&alpha_again), session(&alpha));
    let beta_again = tier.turn(&["-t", "beta"], "which word did beta remember?");
    assert_continues(&beta_again, &beta);
    assert!(!mentions(&beta_again, &alpha.summary.last_user));
    assert_eq!(session(&beta_again), session(&beta));

    let main = tier.turn(&[], "a turn on the main thread");
    assert_fresh(&main);
    let threads = tier.world.sticky_ok(["threads", "--json"]).stdout;
    for name in ["alpha", "beta", "main"] {
        assert!(threads.contains(&format!("\"{name}\"")), "{threads}");
    }
}

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

/// The pid of the sticky process running a turn in this world, once it has started.
#[track_caller]
fn sticky_process(tier: &Tier) -> Pid {
    let sticky = super::sticky_binary().to_string_lossy().into_owned();
    let started = Instant::now();
    loop {
        let found = tier
            .world
            .processes()
            .into_iter()
            .find(|(_, cmdline)| cmdline.starts_with(sticky.as_str()));
        if let Some((pid, _)) = found {
            return Pid::from_raw(pid);
        }
        assert!(started.elapsed() < DEADLINE, "no sticky process appeared");
        thread::sleep(Duration::from_millis(20));
    }
}

/// Ctrl-C in the middle of a turn: SIGINT reaches sticky while the agent waits on a reply the
/// mock holds. sticky exits 130, records the turn interrupted with the session kept, and the
/// next turn continues the session with the history.
pub fn ctrl_c_mid_turn_exits_130_and_the_next_turn_continues_the_session(agent: Agent) {
    let Some(tier) = Tier::start(agent) else {
        return;
    };
    let first = tier.turn(&[], "remember the word kumquat");
    let session = tier.session_of(&first);

    // Held by the mock far longer than the test waits: the turn is in the middle until the
    // signal.
    let held = format!("{DELAY}600000 this turn is interrupted");
    let mut command = tier
        .world
        .command(super::sticky_binary(), &tier.world.project);
    command.arg(&held);
    let background = thread::spawn(move || run(command));
    let request = tier.request_for_eventually(&held);
    if let Some(named) = tier.request_session(&request) {
        assert_eq!(named, session, "the held turn resumed the session");
    }
    kill(sticky_process(&tier), Signal::SIGINT).expect("send SIGINT to sticky");
    let interrupted: Finished = background.join().expect("the sticky thread");
    assert_eq!(
        interrupted.status.code(),
        Some(130),
        "Ctrl-C ends the turn with 130: {interrupted}"
    );
    assert!(interrupted.stdout.is_empty(), "no answer: {interrupted}");
    let turns = logged_turns(&tier);
    let last = turns.last().expect("the interrupted turn is logged");
    assert_eq!(last["status"], "interrupted", "{last}");
    assert_eq!(last["prompt"], held.as_str(), "{last}");
    assert_eq!(tier.stored_session_id(), session, "the session stays");
    tier.assert_no_processes_left();

    let next = tier.turn(&[], "which word did I ask you to remember?");
    assert_eq!(tier.session_of(&next), session, "the session continues");
    for carried in [&first.summary.last_user, &first.reply] {
        assert!(
            mentions(&next, carried),
            "{carried:?} is missing from the turn after Ctrl-C"
        );
    }
}

/// One module per agent with one test per edge it is run on, as in
/// [`scenarios`](super::scenarios).
macro_rules! table {
    ($($module:ident: $agent:expr => [$($edge:ident),+ $(,)?];)+) => {$(
        /// The edges this agent is run on, one test each.
        pub mod $module {
            $(
                #[test]
                fn $edge() {
                    super::$edge($agent);
                }
            )+
        }
    )+};
}

table! {
    claude: super::Agent::Claude => [
        a_prompt_over_128_kib_reaches_the_model_whole_and_the_next_turn_carries_it,
        a_prompt_that_starts_with_a_dash_reaches_the_model_as_typed,
        two_threads_keep_their_own_sessions_and_histories,
        ctrl_c_mid_turn_exits_130_and_the_next_turn_continues_the_session,
    ];
    codex: super::Agent::Codex => [
        a_prompt_over_128_kib_reaches_the_model_whole_and_the_next_turn_carries_it,
        a_prompt_that_starts_with_a_dash_reaches_the_model_as_typed,
        two_threads_keep_their_own_sessions_and_histories,
        ctrl_c_mid_turn_exits_130_and_the_next_turn_continues_the_session,
    ];
    gemini: super::Agent::Gemini => [
        a_prompt_over_128_kib_reaches_the_model_whole_and_the_next_turn_carries_it,
        a_prompt_that_starts_with_a_dash_reaches_the_model_as_typed,
    ];
    qwen: super::Agent::Qwen => [
        a_prompt_over_128_kib_reaches_the_model_whole_and_the_next_turn_carries_it,
        a_prompt_that_starts_with_a_dash_reaches_the_model_as_typed,
    ];
    opencode: super::Agent::Opencode => [
        a_prompt_over_128_kib_reaches_the_model_whole_and_the_next_turn_carries_it,
        a_prompt_that_starts_with_a_dash_reaches_the_model_as_typed,
        two_threads_keep_their_own_sessions_and_histories,
    ];
}
