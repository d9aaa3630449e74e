//! The GitHub Action's three runs (issue 25) with the real Claude Code and Codex against the
//! mock: the docs/ci.md's `@sticky` comment workflow played on pull request 7 by
//! [`crate::action::play`], each run on a fresh world (its own HOME, seeded for the agents, and
//! its own checkout path), sticky installed by `install.sh` from a release served on
//! 127.0.0.1. Run 2's model request fails (the mock's `MOCK-FAIL-500x2`, the agent's retries
//! bounded in sticky's configuration as a user would); run 3 must then reach the model with
//! run 1's turn and run 2's prompt in its request, on the agent session of run 1, as the
//! agent's own session header shows. A run on pull request 8 starts afresh.

use super::{
    API_KEY, Agent, AgentHome, assert_fresh, mentions, request_for, require, sticky_binary,
};
use crate::action::runs::{Release, Tools, comment_event};
use crate::action::store::Store;
use crate::action::{Played, Runner, Workflow, action, play, readme_workflows};
use crate::mock::{FAIL, MockServer, Request};

/// What differs between the agents: the action's `agent` input, the agent's own arguments in
/// place of the comment workflow's Claude Code ones, the header naming its session, and sticky's
/// configuration that bounds its retries of a failed request to one.
struct Setup {
    agent: Agent,
    args: &'static str,
    session_header: &'static str,
    one_retry: &'static str,
}

const CLAUDE: Setup = Setup {
    agent: Agent::Claude,
    args: "--permission-mode acceptEdits",
    session_header: "x-claude-code-session-id",
    one_retry: "[agents.claude]\nenv = { CLAUDE_CODE_MAX_RETRIES = \"1\" }\n",
};

const CODEX: Setup = Setup {
    agent: Agent::Codex,
    args: "--sandbox workspace-write",
    session_header: "session-id",
    one_retry: "[agents.codex]\nargs = [\"-c\", \"model_providers.mock.request_max_retries=1\", \
                \"-c\", \"model_providers.mock.stream_max_retries=0\"]\n",
};

/// The session a model request names in the agent's header.
#[track_caller]
fn session_of(request: &Request, setup: &Setup) -> String {
    request
        .header(setup.session_header)
        .unwrap_or_else(|| panic!("the request names no session: {:?}", request.summary))
        .to_owned()
}

/// One run of the docs/ci.md's comment workflow on a fresh world.
#[allow(clippy::too_many_arguments)] // a run's whole description, as the tests vary it
fn comment_run(
    setup: &Setup,
    mock: &MockServer,
    store: &Store,
    tools: &Tools,
    release: &Release,
    pull: u64,
    body: &str,
    id: u64,
) -> Played {
    let (Some(action), Some(workflows)) = (action(), readme_workflows()) else {
        panic!("the action's metadata cannot be read");
    };
    let workflow = Workflow::named(workflows, "sticky");
    let world = AgentHome::for_agent(mock, setup.agent);
    let config = world.home.join(".config/sticky/config.toml");
    std::fs::create_dir_all(config.parent().expect("a directory")).expect("create a directory");
    std::fs::write(&config, setup.one_retry).expect("write sticky's configuration");
    let runner = Runner::within(&world.home, &world.project);
    let mut run = workflow
        .run("issue_comment", comment_event(pull, body), id)
        .env("STICKY_RELEASE_URL", release.url.clone());
    for (name, value) in &mut run.with {
        if name == "agent-args" {
            setup.args.clone_into(value);
        }
    }
    run.with.push(("agent".into(), setup.agent.name().into()));
    // The workflow's step gives Claude Code its key from the repository's secrets.
    run.secrets = serde_json::json!({"ANTHROPIC_API_KEY": API_KEY});
    // The world's environment, with the fake gh (GitHub's runners have gh) first on PATH.
    run.base_env = world
        .env()
        .into_iter()
        .filter(|(k, _)| k != "HOME")
        .map(|(k, v)| {
            if k == "PATH" {
                let dirs = std::iter::once(tools.bin()).chain(std::env::split_paths(&v));
                (k, std::env::join_paths(dirs).expect("a PATH"))
            } else {
                (k, v)
            }
        })
        .collect();
    run.base_env
        .push(("FAKE_GH_STORE".into(), store.root().into()));
    store.open_pull(pull, crate::action::REPOSITORY);
    let played = play(&action, &run, &runner, store);
    drop(world);
    played
}

/// Runs 1 to 3 on pull request 7 (run 2 failing at the model) and one on pull request 8.
fn three_runs(setup: &Setup) {
    if require(setup.agent).is_none() || action().is_none() {
        return;
    }
    let mock = MockServer::start().expect("start the mock");
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let release = Release::of(&sticky_binary(), false);
    let tools = Tools::new();

    let remember = "@sticky remember the word kumquat";
    let first = comment_run(setup, &mock, &store, &tools, &release, 7, remember, 1);
    assert!(!first.failed, "run 1: {}", first.log);
    let first_request = request_for(&mock, remember);
    assert_fresh(&first_request);
    assert!(
        first.output("answer").contains("MOCK-REPLY"),
        "{}",
        first.log
    );
    let session = session_of(&first_request, setup);
    assert_eq!(first.output("session-id"), session, "{}", first.log);

    // Its request and the one retry fail; Claude Code sends the failed prompt again with the
    // next one, which then gets through.
    let failing = format!("@sticky {FAIL}500x2 this request fails");
    let second = comment_run(setup, &mock, &store, &tools, &release, 7, &failing, 2);
    assert!(
        second.failed,
        "run 2's failed model request fails the action: {}",
        second.log
    );
    assert!(
        !["0", ""].contains(&second.output("exit-code")),
        "{}",
        second.log
    );
    assert_eq!(
        second.outcome("save"),
        "success",
        "run 2 still saves: {}",
        second.log
    );
    assert_eq!(session_of(&request_for(&mock, &failing), setup), session);

    let ask = "@sticky which word did I ask you to remember?";
    let third = comment_run(setup, &mock, &store, &tools, &release, 7, ask, 3);
    assert!(!third.failed, "run 3: {}", third.log);
    let third_request = mock
        .turns()
        .into_iter()
        .rev()
        .find(|t| t.summary.last_user.ends_with(ask) || mentions(t, ask))
        .expect("run 3 reached the model");
    assert!(
        third.output("answer").contains("MOCK-REPLY"),
        "{}",
        third.log
    );
    assert_eq!(
        session_of(&third_request, setup),
        session,
        "run 1's agent session"
    );
    assert_eq!(third.output("session-id"), session);
    for earlier in [remember, failing.as_str(), first_request.reply.as_str()] {
        assert!(
            mentions(&third_request, earlier),
            "run 3's request carries {earlier:?}: {:?}",
            third_request.summary
        );
    }

    let other = "@sticky hello from another pull request";
    let eighth = comment_run(setup, &mock, &store, &tools, &release, 8, other, 4);
    assert!(!eighth.failed, "{}", eighth.log);
    let other_request = request_for(&mock, other);
    assert_fresh(&other_request);
    assert_ne!(session_of(&other_request, setup), session);
}

/// Claude Code: three runs of the docs/ci.md's comment workflow continue one session.
#[test]
fn claude_three_action_runs_continue_one_session() {
    three_runs(&CLAUDE);
}

/// Codex: three runs of the docs/ci.md's comment workflow continue one thread.
#[test]
fn codex_three_action_runs_continue_one_session() {
    three_runs(&CODEX);
}
