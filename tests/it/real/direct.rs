//! The real Claude Code, Codex and Gemini CLIs run directly, without sticky, against the mock:
//! one headless turn, then a resume by ID whose request must carry the first turn.
//!
//! These pin the ground the sticky tests stand on: that the mock speaks each API well enough
//! for the real client, that the seeded HOME keeps each agent offline and dialog-free, and that
//! the mock's counts see a resumed conversation. When one of these fails, read it before any
//! sticky failure. Every fake of `tests/fakes` answers `--version` as its real CLI does.

use uuid::Uuid;

use super::{
    Agent, AgentHome, Finished, GEMINI_MODEL, assert_continues, assert_fresh, request_for, require,
    run,
};
use crate::mock::MockServer;

/// The first prompt of every scenario; its words must come back in the resumed request.
const FIRST: &str = "remember the word kumquat";
/// The follow-up prompt.
const SECOND: &str = "which word did I ask you to remember?";

#[track_caller]
fn json_of(finished: &Finished) -> serde_json::Value {
    finished.assert_success();
    finished.json()
}

#[test]
fn real_claude_resumes_its_session_by_id_with_the_history() {
    let Some(claude) = require(Agent::Claude) else {
        return;
    };
    let mock = MockServer::start().expect("start the mock");
    let world = AgentHome::new(&mock);
    let id = Uuid::new_v4().to_string();

    let mut first = world.command(&claude, &world.project);
    first.args(["-p", FIRST, "--output-format", "json", "--session-id", &id]);
    let answer = json_of(&run(first));
    assert_eq!(answer["session_id"], id.as_str());
    let first = request_for(&mock, FIRST);
    assert_eq!(
        answer["result"],
        first.reply.as_str(),
        "the agent shows the mock's reply"
    );
    assert_fresh(&first);
    assert_eq!(first.header("x-claude-code-session-id"), Some(id.as_str()));

    let mut second = world.command(&claude, &world.project);
    second.args(["-p", SECOND, "--output-format", "json", "--resume", &id]);
    let answer = json_of(&run(second));
    assert_eq!(answer["session_id"], id.as_str(), "resume keeps the ID");
    let resumed = request_for(&mock, SECOND);
    assert_continues(&resumed, &first);
    assert_eq!(
        resumed.header("x-claude-code-session-id"),
        Some(id.as_str())
    );
    assert!(
        world.claude_transcript(&world.project, &id).is_file(),
        "no transcript at {}; found {:?}",
        world.claude_transcript(&world.project, &id).display(),
        world.claude_transcripts()
    );
    world.assert_no_self_update();
}

#[test]
fn real_codex_resumes_its_thread_by_id_with_the_history() {
    let Some(codex) = require(Agent::Codex) else {
        return;
    };
    let mock = MockServer::start().expect("start the mock");
    let world = AgentHome::new(&mock);

    let mut first = world.command(&codex, &world.project);
    first.args(["exec", "--json", "--skip-git-repo-check", FIRST]);
    let first_run = run(first);
    first_run.assert_success();
    let events = first_run.json_lines();
    assert_eq!(
        events.first().map(|e| e["type"].clone()),
        Some("thread.started".into()),
        "{first_run}"
    );
    let thread = events[0]["thread_id"]
        .as_str()
        .expect("a thread_id")
        .to_owned();
    let first = request_for(&mock, FIRST);
    assert!(
        events
            .iter()
            .any(|e| e["item"]["type"] == "agent_message"
                && e["item"]["text"] == first.reply.as_str()),
        "the agent shows the mock's reply: {first_run}"
    );
    assert_fresh(&first);
    assert_eq!(first.header("session-id"), Some(thread.as_str()));

    let mut second = world.command(&codex, &world.project);
    second.args([
        "exec",
        "resume",
        &thread,
        "--json",
        "--skip-git-repo-check",
        SECOND,
    ]);
    let second_run = run(second);
    second_run.assert_success();
    assert_eq!(
        second_run.json_lines()[0]["thread_id"],
        thread.as_str(),
        "resume keeps the thread: {second_run}"
    );
    let resumed = request_for(&mock, SECOND);
    assert_continues(&resumed, &first);
    assert_eq!(resumed.header("session-id"), Some(thread.as_str()));
    world.assert_no_self_update();
}

#[test]
fn real_gemini_resumes_its_session_by_id_with_the_history() {
    let Some(gemini) = require(Agent::Gemini) else {
        return;
    };
    let mock = MockServer::start().expect("start the mock");
    let world = AgentHome::new(&mock);
    let id = Uuid::new_v4().to_string();

    let mut first = world.command(&gemini, &world.project);
    first.args([
        "-p",
        FIRST,
        "-m",
        GEMINI_MODEL,
        "-o",
        "json",
        "--session-id",
        &id,
    ]);
    let answer = json_of(&run(first));
    assert_eq!(answer["session_id"], id.as_str());
    let first = request_for(&mock, FIRST);
    assert_eq!(answer["response"], first.reply.as_str());
    assert_eq!(
        first.summary.model, GEMINI_MODEL,
        "the model is in the path"
    );

    let mut second = world.command(&gemini, &world.project);
    second.args([
        "-p",
        SECOND,
        "-m",
        GEMINI_MODEL,
        "-o",
        "json",
        "--resume",
        &id,
    ]);
    let answer = json_of(&run(second));
    assert_eq!(answer["session_id"], id.as_str(), "resume keeps the ID");
    assert_continues(&request_for(&mock, SECOND), &first);
    world.assert_no_self_update();
}

/// `sticky agents` and `doctor` show the first line of `<agent> --version`, so each fake says it
/// as its real CLI does, byte for byte (the fake Claude once answered with a turn).
#[test]
fn every_fake_answers_version_as_its_real_cli_does() {
    let mut programs = Vec::new();
    for agent in Agent::ALL {
        let Some(program) = require(agent) else {
            return;
        };
        programs.push((agent, program));
    }
    let mock = MockServer::start().expect("start the mock");
    let world = AgentHome::new(&mock);
    let fakes = crate::support::fakes_dir();
    for (agent, program) in programs {
        let mut real = world.command(&program, &world.project);
        real.arg("--version");
        let real = run(real);
        real.assert_success();
        let mut fake = world.command(crate::support::python(), &world.project);
        fake.arg(fakes.join(agent.name())).arg("--version");
        let fake = run(fake);
        fake.assert_success();
        assert_eq!(
            fake.stdout,
            real.stdout,
            "the fake {} answers --version as the real one",
            agent.name()
        );
    }
}
