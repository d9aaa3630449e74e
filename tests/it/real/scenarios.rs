//! The scenarios every real agent goes through with sticky, written once and run for each agent
//! that supports them: two turns carry the history, the stored ID is the one the agent used,
//! `new` and a different `--model` start afresh, a turn from a subdirectory runs in the
//! project, an interactive turn is carried into the next headless one, and a session the agent
//! lost reaches nothing.
//!
//! Each agent supplies a [`Profile`]: where its requests name their session, which model it
//! starts on, how its own files prove the stored session, where it states its working
//! directory, how its session is lost and how its UI is driven. The table at the end makes one
//! named test per agent and scenario (`real::scenarios::claude::two_turns_carry_the_history`),
//! so a failure names the agent. What the agent really did is read from the mock's requests and
//! the agent's own files, never from sticky's own account alone; the agents' own behaviour
//! (`/clear`, Codex's exit 76 and failed first turn) is tested in `sticky_<agent>`.

use super::terminal::Terminal;
use super::tier::Tier;
use super::{Agent, assert_continues, assert_fresh, mentions};
use crate::mock::Request;

/// What one agent supplies to the scenarios: how its requests, IDs and files are checked.
pub struct Profile {
    /// The first prompt of the two-turn scenarios.
    pub remember: &'static str,
    /// The request header naming the agent's session, if its requests carry one; otherwise the
    /// ID sticky stores right after a turn stands for that turn's session.
    pub session_header: Option<&'static str>,
    /// The model of a turn given no `--model` as the requests name it, when the world's
    /// configuration names it; else such a turn is only checked not to be on
    /// [`Profile::other_model`].
    pub default_model: Option<&'static str>,
    /// A model no default of the agent uses, for the model-change scenario.
    pub other_model: Option<Model>,
    /// Asserts that the agent keeps exactly the stored session (its ID), holding `turns`, as
    /// its own files (or IDs) show.
    pub assert_kept: fn(tier: &Tier, stored: &str, turns: &[&Request]),
    /// Every working directory the agent states in a request (the subdirectory scenario).
    pub working_directories: Option<fn(&Request) -> Vec<String>>,
    /// How the agent loses a session under sticky (the lost-session scenario).
    pub lost: Option<Lost>,
    /// How the agent's own UI is driven (the interactive scenario).
    pub ui: Option<Ui>,
}

/// A model as a user gives it to `--model` and as the agent's requests name it.
pub struct Model {
    /// The `--model` value.
    pub given: &'static str,
    /// The model the requests name.
    pub sent: &'static str,
}

/// How an agent's session is lost under sticky, and what the agent then says.
pub struct Lost {
    /// Deletes what the agent keeps of the stored session `stored`.
    pub forget: fn(tier: &Tier, stored: &str),
    /// What the agent's refusal to resume says, passed on by sticky.
    pub says: &'static str,
}

/// How a person drives an agent's own UI through sticky on a terminal.
pub struct Ui {
    /// What the UI shows once it is ready for input.
    pub ready: &'static str,
    /// Types a one-word prompt, submits it, waits for the mock's reply on the screen, and
    /// returns the model request it made.
    pub submit: fn(&mut Terminal, &Tier, &str) -> Request,
    /// Leaves the UI as a person would; sticky then exits with the agent's code.
    pub quit: fn(&mut Terminal),
    /// What the terminal shows once the agent exited, if anything (Codex's resume line).
    pub farewell: Option<&'static str>,
}

/// The tier for `agent` and its profile, or `None` after a loud skip (not installed).
#[track_caller]
fn start(agent: Agent) -> Option<(Tier, &'static Profile)> {
    Tier::start(agent).map(|tier| (tier, agent.profile()))
}

/// Asserts that `request`, made with no `--model`, is on the agent's default model.
#[track_caller]
fn assert_default_model(profile: &Profile, request: &Request) {
    let model = &request.summary.model;
    match (profile.default_model, &profile.other_model) {
        (Some(default), _) => assert_eq!(model, default, "the configured model"),
        (None, Some(other)) => assert_ne!(model, other.sent, "not the other model"),
        (None, None) => panic!("a profile names its default model or another one"),
    }
}

/// Two turns: the second carries the first, in the same session, and nothing updated itself
/// or outlived sticky.
pub fn two_turns_carry_the_history(agent: Agent) {
    let Some((tier, profile)) = start(agent) else {
        return;
    };
    let first = tier.turn(&[], profile.remember);
    assert_fresh(&first);
    assert_default_model(profile, &first);
    let session = tier.session_of(&first);
    let second = tier.turn(&[], "which word did I ask you to remember?");
    assert_continues(&second, &first);
    assert_eq!(tier.session_of(&second), session, "the same session");
    tier.world.assert_no_self_update();
    tier.assert_no_processes_left();
}

/// The ID sticky stores is the one the agent's requests name and its own files keep.
pub fn the_stored_id_is_the_one_the_agent_really_used(agent: Agent) {
    let Some((tier, profile)) = start(agent) else {
        return;
    };
    let first = tier.turn(&[], profile.remember);
    let second = tier.turn(&[], "which word did I ask you to remember?");
    let stored = tier.stored_session_id();
    for turn in [&first, &second] {
        if let Some(named) = tier.request_session(turn) {
            assert_eq!(named, stored, "the request names the stored session");
        }
    }
    (profile.assert_kept)(&tier, &stored, &[&first, &second]);
}

/// `sticky new` starts a session without the old history, and the next turn continues it.
pub fn new_starts_without_history_and_the_next_turn_continues_it(agent: Agent) {
    let Some((tier, _)) = start(agent) else {
        return;
    };
    let old = tier.turn(&[], "a turn before the rotation");
    let old_session = tier.session_of(&old);
    let fresh = tier.turn(&["new"], "the first turn after new");
    assert_fresh(&fresh);
    assert!(
        !mentions(&fresh, &old.summary.last_user),
        "the new session must not see the old one"
    );
    let fresh_session = tier.session_of(&fresh);
    assert_ne!(fresh_session, old_session, "new rotates the session");

    let next = tier.turn(&[], "the second turn after new");
    assert_continues(&next, &fresh);
    assert!(!mentions(&next, &old.summary.last_user));
    assert_eq!(tier.session_of(&next), fresh_session);
    assert_eq!(tier.stored_session_id(), fresh_session);
}

/// Another `--model` starts afresh; later turns without `--model`, or with the same one, stay
/// on it in its session (an agent that falls back to its configured model on resume proves
/// that sticky passes the session's model again).
pub fn another_model_starts_afresh_and_later_turns_stay_on_it(agent: Agent) {
    let Some((tier, profile)) = start(agent) else {
        return;
    };
    let other = profile
        .other_model
        .as_ref()
        .expect("the profile names another model");
    let default = tier.turn(&[], "a turn on the default model");
    assert_default_model(profile, &default);
    let default_session = tier.session_of(&default);

    let switched = tier.turn(&["--model", other.given], "a turn on the other model");
    assert_eq!(switched.summary.model, other.sent);
    assert_fresh(&switched);
    let session = tier.session_of(&switched);
    assert_ne!(
        session, default_session,
        "another model rotates the session"
    );

    let stayed = tier.turn(&[], "no --model: stay on the other model");
    assert_eq!(
        stayed.summary.model, other.sent,
        "the session's model is kept"
    );
    assert_continues(&stayed, &switched);
    assert_eq!(tier.session_of(&stayed), session);

    let same = tier.turn(&["--model", other.given], "the same --model again");
    assert_eq!(same.summary.model, other.sent);
    assert_continues(&same, &stayed);
    assert_eq!(
        tier.session_of(&same),
        session,
        "the same model does not rotate"
    );
}

/// A turn from a subdirectory continues the project's session, with the agent running in the
/// project directory, not the user's subdirectory.
pub fn a_turn_from_a_subdirectory_continues_the_session_in_the_project(agent: Agent) {
    let Some((tier, profile)) = start(agent) else {
        return;
    };
    let stated = profile
        .working_directories
        .expect("the profile reads the working directory");
    let project = tier.world.project.to_string_lossy().into_owned();
    let first = tier.turn(&[], "a turn in the project root");
    let session = tier.session_of(&first);
    let sub = tier.world.project.join("src/deep");
    std::fs::create_dir_all(&sub).expect("create a subdirectory");

    let from_sub = tier.turn_in(&sub, &[], "a turn from a subdirectory");
    assert_continues(&from_sub, &first);
    assert_eq!(tier.session_of(&from_sub), session);
    assert_eq!(
        stated(&from_sub),
        [project],
        "the agent runs in the project directory, not the user's subdirectory"
    );
    (profile.assert_kept)(&tier, &session, &[&first, &from_sub]);
}

/// A new session started in the agent's own UI is learned, and the next headless turn
/// continues it.
pub fn an_interactive_turn_is_carried_into_the_next_headless_turn(agent: Agent) {
    let Some((tier, profile)) = start(agent) else {
        return;
    };
    let ui = profile
        .ui
        .as_ref()
        .expect("the profile drives the agent's UI");
    // One word: Claude Code draws the words of a typed line with cursor moves between them,
    // so only a word without spaces can be waited for as it is echoed.
    let typed = "interactive-kumquat-turn";
    let mut terminal = Terminal::sticky(&tier.world, &tier.world.project, &[]);
    terminal.wait_for(ui.ready);
    let interactive = (ui.submit)(&mut terminal, &tier, typed);
    (ui.quit)(&mut terminal);
    // sticky exits with the agent's code.
    terminal.assert_exit(0);
    if let Some(farewell) = ui.farewell {
        terminal.wait_for(farewell);
    }
    assert_fresh(&interactive);
    assert_default_model(profile, &interactive);
    tier.assert_no_processes_left();

    let stored = tier.stored_session_id();
    if let Some(named) = tier.request_session(&interactive) {
        assert_eq!(stored, named, "sticky learned the session the agent used");
    }
    let headless = tier.turn(&[], "a headless turn after the interactive one");
    assert_continues(&headless, &interactive);
    assert_eq!(tier.session_of(&headless), stored);
    assert_eq!(tier.stored_session_id(), stored);
    (profile.assert_kept)(&tier, &stored, &[&interactive, &headless]);
    tier.assert_no_processes_left();
}

/// A session the agent can no longer resume is reported lost with nothing sent to the model
/// (see [`Tier::assert_lost`]); the way out the message names, `sticky new`, starts afresh.
pub fn a_lost_session_reaches_nothing_and_new_starts_afresh(agent: Agent) {
    let Some((tier, profile)) = start(agent) else {
        return;
    };
    let lost = profile.lost.as_ref().expect("the profile loses a session");
    tier.turn(&[], "remember the word kumquat");
    let session = tier.stored_session_id();
    (lost.forget)(&tier, &session);
    let stderr = tier.assert_lost("are you still there?");
    assert!(stderr.contains(lost.says), "{stderr}");

    let fresh = tier.turn(&["new"], "start over");
    assert_fresh(&fresh);
    assert_ne!(tier.session_of(&fresh), session);
}

/// One module per agent with one test per scenario it supports, each calling the scenario
/// with the agent.
macro_rules! table {
    ($($module:ident: $agent:expr => [$($scenario:ident),+ $(,)?];)+) => {$(
        /// The scenarios this agent supports, one test each.
        pub mod $module {
            $(
                #[test]
                fn $scenario() {
                    super::$scenario($agent);
                }
            )+
        }
    )+};
}

table! {
    claude: super::Agent::Claude => [
        two_turns_carry_the_history,
        the_stored_id_is_the_one_the_agent_really_used,
        new_starts_without_history_and_the_next_turn_continues_it,
        another_model_starts_afresh_and_later_turns_stay_on_it,
        a_turn_from_a_subdirectory_continues_the_session_in_the_project,
        an_interactive_turn_is_carried_into_the_next_headless_turn,
        a_lost_session_reaches_nothing_and_new_starts_afresh,
    ];
    codex: super::Agent::Codex => [
        two_turns_carry_the_history,
        the_stored_id_is_the_one_the_agent_really_used,
        new_starts_without_history_and_the_next_turn_continues_it,
        another_model_starts_afresh_and_later_turns_stay_on_it,
        a_turn_from_a_subdirectory_continues_the_session_in_the_project,
        an_interactive_turn_is_carried_into_the_next_headless_turn,
        a_lost_session_reaches_nothing_and_new_starts_afresh,
    ];
    gemini: super::Agent::Gemini => [
        two_turns_carry_the_history,
        the_stored_id_is_the_one_the_agent_really_used,
        new_starts_without_history_and_the_next_turn_continues_it,
        another_model_starts_afresh_and_later_turns_stay_on_it,
        a_turn_from_a_subdirectory_continues_the_session_in_the_project,
        an_interactive_turn_is_carried_into_the_next_headless_turn,
        a_lost_session_reaches_nothing_and_new_starts_afresh,
    ];
    qwen: super::Agent::Qwen => [
        two_turns_carry_the_history,
        the_stored_id_is_the_one_the_agent_really_used,
        new_starts_without_history_and_the_next_turn_continues_it,
        another_model_starts_afresh_and_later_turns_stay_on_it,
        a_turn_from_a_subdirectory_continues_the_session_in_the_project,
        a_lost_session_reaches_nothing_and_new_starts_afresh,
        an_interactive_turn_is_carried_into_the_next_headless_turn,
    ];
    opencode: super::Agent::Opencode => [
        two_turns_carry_the_history,
        the_stored_id_is_the_one_the_agent_really_used,
        new_starts_without_history_and_the_next_turn_continues_it,
        another_model_starts_afresh_and_later_turns_stay_on_it,
        a_turn_from_a_subdirectory_continues_the_session_in_the_project,
        a_lost_session_reaches_nothing_and_new_starts_afresh,
        an_interactive_turn_is_carried_into_the_next_headless_turn,
    ];
}
