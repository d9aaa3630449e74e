//! The scenarios every real agent goes through with sticky, written once and run for each agent
//! that supports them: two turns carry the history, the stored ID is the one the agent used,
//! `new` and a different `--model` start afresh, a turn from a subdirectory runs in the
//! project, an interactive turn is carried into the next headless one, and a session the agent
//! lost is restored from sticky's vault and remembers, or, without a copy, reaches nothing.
//!
//! Each agent supplies a [`Profile`]: where its requests name their session, which model it
//! starts on, how its own files prove the stored session, where it states its working
//! directory, how its session is lost and how its UI is driven. The table at the end makes one
//! named test per agent and scenario (`real::scenarios::claude::two_turns_carry_the_history`),
//! so a failure names the agent. What the agent really did is read from the mock's requests and
//! the agent's own files, never from sticky's own account alone; the agents' own behaviour
//! (`/clear`, Codex's exit 76 and failed first turn) is tested in `sticky_<agent>`.

pub use super::faults::an_api_failure_fails_the_turn_and_the_session_goes_on;
use super::terminal::Terminal;
use super::tier::Tier;
pub use super::tools::{
    a_tool_turn_runs_the_command_and_the_next_turn_carries_it,
    the_progress_line_names_the_tool_while_it_runs,
};
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
    /// How a CI user lets the agent run a shell command (the tool scenarios).
    pub tools: Option<Tools>,
    /// How the agent fails on a model API error (the API-failure scenario).
    pub api_failure: Option<ApiFailure>,
}

/// How an agent is let run its shell tool in a headless turn, and how sticky shows it.
pub struct Tools {
    /// The agent's own arguments, given after `--`, that let it run a command unasked.
    pub permissions: &'static [&'static str],
    /// What the progress line shows after the agent's name while the command runs: the tool's
    /// name, or the command itself where the agent reports that (Codex); `None` for an agent
    /// that reports a tool only once it finished, so nothing can name it while it runs.
    pub activity: Option<&'static str>,
}

/// How an agent meets a model request that fails.
pub struct ApiFailure {
    /// Bounds the agent's retries of a failed request to `retries`, in the agent's or sticky's
    /// configuration as a user would (the agents retry for up to minutes by default).
    pub retries: fn(tier: &Tier, retries: u32),
    /// The agent's exit code once its retries are spent, which sticky passes through.
    pub exit_code: i32,
    /// What the agent's error message says, passed on by sticky on stderr.
    pub says: &'static str,
    /// Whether the agent retries a request refused with 429 (and so gets through the second
    /// time), rather than failing the turn at once.
    pub retries_429: bool,
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
    /// Whether sticky keeps the interactive turn's last answer (read from the agent's
    /// transcript) for `sticky show`.
    pub answer_kept: bool,
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
    // The interactive turn keeps the last answer of the agent's transcript (issue 14).
    if ui.answer_kept {
        let shown = tier.world.sticky_ok(["show"]);
        assert_eq!(shown.stdout.trim_end(), interactive.reply, "{shown}");
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
    // Without sticky's copy too (see the next scenario for the restore).
    std::fs::remove_dir_all(tier.world.project.join(".sticky/sticky.db.vault"))
        .expect("remove the vault");
    let stderr = tier.assert_lost("are you still there?");
    assert!(stderr.contains(lost.says), "{stderr}");
    assert!(
        stderr.contains("sticky's vault holds no copy of it"),
        "{stderr}"
    );

    let fresh = tier.turn(&["new"], "start over");
    assert_fresh(&fresh);
    assert_ne!(tier.session_of(&fresh), session);
}

/// A session whose files the agent lost is put back from sticky's vault: the next turn resumes
/// the same session, its request carries the earlier turn, and `sticky log` records the
/// restore.
pub fn a_lost_session_is_restored_from_the_vault_and_remembers(agent: Agent) {
    let Some((tier, profile)) = start(agent) else {
        return;
    };
    let lost = profile.lost.as_ref().expect("the profile loses a session");
    let first = tier.turn(&[], profile.remember);
    let session = tier.stored_session_id();
    (lost.forget)(&tier, &session);

    let restored = tier.turn(&[], "which word did I ask you to remember?");
    assert_continues(&restored, &first);
    assert_eq!(tier.session_of(&restored), session, "the same session");
    assert_eq!(tier.stored_session_id(), session);
    let log = tier.world.sticky_ok(["log", "--json"]).json();
    let turns = &log["sessions"][0]["turns"];
    assert!(
        turns[1]["restored"]["files"].as_i64().unwrap_or(0) >= 1,
        "the log records the restore: {log}"
    );
    // And it goes on from there.
    let next = tier.turn(&[], "and one more turn");
    assert_continues(&next, &restored);
    tier.assert_no_processes_left();
}

/// The ledger (issue 14): each turn stores the tokens the mock stated in the usage fields of
/// that turn's model requests, its own and not the session's running totals (Claude Code and
/// Codex report running totals, which sticky must turn into each turn's figures), and `status`
/// sums them for the session.
pub fn the_ledger_holds_what_the_mock_reported(agent: Agent) {
    let Some((tier, _)) = start(agent) else {
        return;
    };
    let mut stated = Vec::new();
    for prompt in ["count these tokens", "and count these ones too"] {
        let before = tier.mock.turns().len();
        tier.turn(&[], prompt);
        let turns = tier.mock.turns();
        let (input, output) = turns[before..]
            .iter()
            .map(Request::stated_usage)
            .fold((0, 0), |sum, (input, output)| {
                (sum.0 + input, sum.1 + output)
            });
        stated.push((input, output));
    }
    // The answer is kept: `show` prints the last turn's again, exactly as the turn did.
    let last_reply = tier.mock.turns().last().map(|turn| turn.reply.clone());
    let shown = tier.world.sticky_ok(["show"]);
    assert_eq!(
        Some(shown.stdout.trim_end().to_owned()),
        last_reply,
        "{shown}"
    );
    let log = tier.world.sticky_ok(["log", "--json"]).json();
    let turns = log["sessions"][0]["turns"].as_array().expect("the turns");
    assert_eq!(turns.len(), 2, "{log}");
    for (turn, (input, output)) in turns.iter().zip(&stated) {
        assert_eq!(turn["input_tokens"], *input, "input of {turn}");
        assert_eq!(turn["output_tokens"], *output, "output of {turn}");
        assert_eq!(turn["cached_tokens"].as_u64().unwrap_or(0), 0, "{turn}");
    }
    let status = tier.world.sticky_ok(["status", "--json"]).json();
    let session = &status["ledger"]["session"];
    let (input, output) = stated.iter().fold((0, 0), |sum, (input, output)| {
        (sum.0 + input, sum.1 + output)
    });
    assert_eq!(session["input_tokens"], input, "{session}");
    assert_eq!(session["output_tokens"], output, "{session}");
    assert_eq!(session["turns"], 2);
    // Claude Code states the model's window (`modelUsage`) and each call's prompt: the context
    // at the last call is the input the mock stated for it.
    if agent == Agent::Claude {
        let context = &status["context"];
        assert!(
            context["window"].as_u64().is_some_and(|w| w > 0),
            "{context}"
        );
        let last = tier.mock.turns().last().map(|turn| turn.stated_usage().0);
        assert_eq!(context["tokens"].as_u64(), last, "{context}");
    }
}

/// `sticky export` in one world (HOME and project), `sticky import` in another with its own
/// HOME and project path: the next turn there resumes the same agent session, and its request
/// carries the first world's turns (issue 13 item 6).
pub fn export_and_import_carry_the_session_to_another_home_and_directory(agent: Agent) {
    let Some((tier, profile)) = start(agent) else {
        return;
    };
    let first = tier.turn(&[], profile.remember);
    let session = tier.session_of(&first);
    let bundle = tier.world.home.join("conversation.sticky");
    let bundle_arg = bundle.to_str().expect("a UTF-8 path");
    tier.world.sticky_ok(["export", "-o", bundle_arg]);

    let other = super::AgentHome::for_agent(&tier.mock, agent);
    assert_ne!(other.project, tier.world.project);
    if agent == Agent::Opencode {
        // opencode creates its database on first use; import adds the session's rows to it.
        let program = super::installed(agent).expect("installed");
        let mut list = other.command(program, &other.project);
        list.args(["session", "list"]);
        super::run(list).assert_success();
    }
    other
        .sticky(&other.project, ["import", bundle_arg])
        .assert_success();
    let prompt = "which word did I ask you to remember?";
    let finished = other.sticky(&other.project, [prompt]);
    finished.assert_success();
    let next = tier.answered(&finished);
    assert_eq!(next.summary.last_user, prompt);
    assert_continues(&next, &first);
    if let Some(named) = tier.request_session(&next) {
        assert_eq!(named, session, "the same agent session");
    }
    let status = other.sticky_ok(["status", "--json"]).json();
    assert_eq!(
        status["session"]["agent_session_id"],
        session.as_str(),
        "the imported thread keeps the session's ID"
    );
    if let Some(stated) = profile.working_directories {
        let here = other.project.to_string_lossy().into_owned();
        assert!(
            stated(&next).iter().any(|dir| dir.starts_with(&here)),
            "the agent runs in the new project: {:?}",
            stated(&next)
        );
    }
}

/// A project moved to another path: a turn there is refused (exit 73) naming `sticky relocate`;
/// after it, the next request continues the same session in the new place (issue 13 item 4).
pub fn relocate_carries_a_moved_project_forward(agent: Agent) {
    let Some((tier, profile)) = start(agent) else {
        return;
    };
    let first = tier.turn(&[], profile.remember);
    let session = tier.session_of(&first);
    let moved = tier.world.project.with_file_name("moved-project");
    std::fs::rename(&tier.world.project, &moved).expect("move the project");
    let refused = tier.world.sticky(&moved, ["are you still there?"]);
    assert_eq!(refused.status.code(), Some(73), "{refused}");
    assert!(refused.stderr.contains("sticky relocate"), "{refused}");
    tier.world.sticky(&moved, ["relocate"]).assert_success();
    let prompt = "which word did I ask you to remember?";
    let finished = tier.world.sticky(&moved, [prompt]);
    finished.assert_success();
    let next = tier.answered(&finished);
    assert_eq!(next.summary.last_user, prompt);
    assert_continues(&next, &first);
    if let Some(named) = tier.request_session(&next) {
        assert_eq!(named, session, "the same agent session");
    }
}

/// `sticky fork idea PROMPT` (issue 27): the fork's first request carries the source's
/// history, through the agent's own fork or, for an agent without one (Gemini CLI, Copilot
/// CLI), its resume of a copy of the source's files under a new session ID (which shows that
/// both CLIs accept such a copy); afterwards neither thread's requests carry the other's turns,
/// and the two threads keep two agent sessions.
pub fn a_fork_starts_with_the_history_and_neither_thread_sees_the_other(agent: Agent) {
    let Some((tier, _)) = start(agent) else {
        return;
    };
    let first = tier.turn(&[], "remember the word kumquat");
    let source = tier.stored_session_id();
    let prompt = "the first turn of the fork";
    let finished = tier
        .world
        .sticky(&tier.world.project, ["fork", "idea", prompt]);
    finished.assert_success();
    let fork = tier.answered(&finished);
    // The agent's own fork, or (Gemini CLI, Copilot CLI) its resume of sticky's copy of the
    // source's files under a new ID: either way the source's turn is in the request.
    assert_eq!(fork.summary.last_user, prompt, "{finished}");
    assert_continues(&fork, &first);
    let sessions = |thread: &str| {
        let listed = tier
            .world
            .sticky_ok(["-t", thread, "sessions", "--json"])
            .json();
        listed["sessions"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone()
    };
    let forked = sessions("idea");
    let fork_id = forked["agent_session_id"].as_str().unwrap().to_owned();
    assert_ne!(fork_id, source, "the fork is a session of its own");
    assert_eq!(forked["forked_from"]["agent_session_id"], source.as_str());
    assert_eq!(forked["forked_from"]["thread"], "main");
    if let Some(named) = tier.request_session(&fork) {
        assert_eq!(
            named, fork_id,
            "the fork's request names the fork's session"
        );
    }

    // Each thread goes on in its own session without the other's turns.
    let main = tier.turn(&[], "a turn on main after the fork");
    assert_continues(&main, &first);
    assert!(!mentions(&main, prompt), "the fork's turn leaked into main");
    assert_eq!(tier.stored_session_id(), source);
    let again = tier.turn(&["-t", "idea"], "the second turn of the fork");
    assert_continues(&again, &fork);
    assert!(
        !mentions(&again, &main.summary.last_user),
        "main's turn leaked into the fork"
    );
    assert_eq!(sessions("idea")["agent_session_id"], fork_id.as_str());
    tier.assert_no_processes_left();
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
        a_fork_starts_with_the_history_and_neither_thread_sees_the_other,
        the_stored_id_is_the_one_the_agent_really_used,
        new_starts_without_history_and_the_next_turn_continues_it,
        another_model_starts_afresh_and_later_turns_stay_on_it,
        a_turn_from_a_subdirectory_continues_the_session_in_the_project,
        an_interactive_turn_is_carried_into_the_next_headless_turn,
        a_lost_session_reaches_nothing_and_new_starts_afresh,
        a_tool_turn_runs_the_command_and_the_next_turn_carries_it,
        the_progress_line_names_the_tool_while_it_runs,
        an_api_failure_fails_the_turn_and_the_session_goes_on,
        a_lost_session_is_restored_from_the_vault_and_remembers,
        the_ledger_holds_what_the_mock_reported,
        export_and_import_carry_the_session_to_another_home_and_directory,
        relocate_carries_a_moved_project_forward,
    ];
    codex: super::Agent::Codex => [
        two_turns_carry_the_history,
        a_fork_starts_with_the_history_and_neither_thread_sees_the_other,
        the_stored_id_is_the_one_the_agent_really_used,
        new_starts_without_history_and_the_next_turn_continues_it,
        another_model_starts_afresh_and_later_turns_stay_on_it,
        a_turn_from_a_subdirectory_continues_the_session_in_the_project,
        an_interactive_turn_is_carried_into_the_next_headless_turn,
        a_lost_session_reaches_nothing_and_new_starts_afresh,
        a_tool_turn_runs_the_command_and_the_next_turn_carries_it,
        the_progress_line_names_the_tool_while_it_runs,
        an_api_failure_fails_the_turn_and_the_session_goes_on,
        a_lost_session_is_restored_from_the_vault_and_remembers,
        the_ledger_holds_what_the_mock_reported,
        export_and_import_carry_the_session_to_another_home_and_directory,
        relocate_carries_a_moved_project_forward,
    ];
    gemini: super::Agent::Gemini => [
        two_turns_carry_the_history,
        a_fork_starts_with_the_history_and_neither_thread_sees_the_other,
        the_stored_id_is_the_one_the_agent_really_used,
        new_starts_without_history_and_the_next_turn_continues_it,
        another_model_starts_afresh_and_later_turns_stay_on_it,
        a_turn_from_a_subdirectory_continues_the_session_in_the_project,
        an_interactive_turn_is_carried_into_the_next_headless_turn,
        a_lost_session_reaches_nothing_and_new_starts_afresh,
        a_tool_turn_runs_the_command_and_the_next_turn_carries_it,
        the_progress_line_names_the_tool_while_it_runs,
        an_api_failure_fails_the_turn_and_the_session_goes_on,
        a_lost_session_is_restored_from_the_vault_and_remembers,
        the_ledger_holds_what_the_mock_reported,
        export_and_import_carry_the_session_to_another_home_and_directory,
        relocate_carries_a_moved_project_forward,
    ];
    qwen: super::Agent::Qwen => [
        two_turns_carry_the_history,
        a_fork_starts_with_the_history_and_neither_thread_sees_the_other,
        the_stored_id_is_the_one_the_agent_really_used,
        new_starts_without_history_and_the_next_turn_continues_it,
        another_model_starts_afresh_and_later_turns_stay_on_it,
        a_turn_from_a_subdirectory_continues_the_session_in_the_project,
        a_lost_session_reaches_nothing_and_new_starts_afresh,
        a_tool_turn_runs_the_command_and_the_next_turn_carries_it,
        the_progress_line_names_the_tool_while_it_runs,
        a_lost_session_is_restored_from_the_vault_and_remembers,
        export_and_import_carry_the_session_to_another_home_and_directory,
        relocate_carries_a_moved_project_forward,
        an_interactive_turn_is_carried_into_the_next_headless_turn,
    ];
    opencode: super::Agent::Opencode => [
        two_turns_carry_the_history,
        a_fork_starts_with_the_history_and_neither_thread_sees_the_other,
        the_stored_id_is_the_one_the_agent_really_used,
        new_starts_without_history_and_the_next_turn_continues_it,
        another_model_starts_afresh_and_later_turns_stay_on_it,
        a_turn_from_a_subdirectory_continues_the_session_in_the_project,
        a_lost_session_reaches_nothing_and_new_starts_afresh,
        a_tool_turn_runs_the_command_and_the_next_turn_carries_it,
        a_lost_session_is_restored_from_the_vault_and_remembers,
        export_and_import_carry_the_session_to_another_home_and_directory,
        relocate_carries_a_moved_project_forward,
        an_interactive_turn_is_carried_into_the_next_headless_turn,
    ];
    copilot: super::Agent::Copilot => [
        two_turns_carry_the_history,
        a_fork_starts_with_the_history_and_neither_thread_sees_the_other,
        the_stored_id_is_the_one_the_agent_really_used,
        new_starts_without_history_and_the_next_turn_continues_it,
        another_model_starts_afresh_and_later_turns_stay_on_it,
        a_turn_from_a_subdirectory_continues_the_session_in_the_project,
        an_interactive_turn_is_carried_into_the_next_headless_turn,
        a_lost_session_reaches_nothing_and_new_starts_afresh,
        a_tool_turn_runs_the_command_and_the_next_turn_carries_it,
        the_progress_line_names_the_tool_while_it_runs,
        a_lost_session_is_restored_from_the_vault_and_remembers,
    ];
}
