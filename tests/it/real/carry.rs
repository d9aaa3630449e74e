//! Issue 14 with the real agents: a handoff from Claude Code to Codex (and to Gemini CLI) with
//! `--carry`. What the agents really received is read from the mock's requests: the new agent's
//! first request holds both Claude turns (prompts and the mock's replies), and its next turn
//! continues its own session; with `--carry=summary`, the summary is a turn of Claude's session
//! and its reply is in Codex's first request.

use serde_json::Value;

use super::tier::Tier;
use super::{Agent, AgentHome, assert_continues, assert_fresh, mentions, require};
use crate::mock::{MockServer, Request};

/// A tier whose sticky starts with its default agent (Claude Code), so `-a codex` changes the
/// agent once and later turns stay with Codex; `None` after a loud skip when an agent is
/// missing.
fn claude_then_codex() -> Option<Tier> {
    claude_then(Agent::Codex)
}

/// [`claude_then_codex`] for another agent than Codex.
fn claude_then(next: Agent) -> Option<Tier> {
    require(Agent::Claude)?;
    require(next)?;
    let mock = MockServer::start().expect("start the mock");
    let world = AgentHome::new(&mock);
    Some(Tier {
        agent: Agent::Claude,
        mock,
        world,
    })
}

/// Runs `sticky ARGS`, asserts it succeeded, and returns the Codex request it answered with,
/// whose last user message must end with `prompt` after the recap.
#[track_caller]
fn carried_turn(tier: &Tier, args: &[&str], prompt: &str) -> Request {
    carried_turn_on(tier, "responses", args, prompt)
}

/// [`carried_turn`] for an agent whose requests are of the API family `api`.
#[track_caller]
fn carried_turn_on(tier: &Tier, api: &str, args: &[&str], prompt: &str) -> Request {
    let mut words = args.to_vec();
    words.push(prompt);
    let finished = tier.world.sticky_ok(&words);
    let request = tier.answered(&finished);
    assert_eq!(
        request.summary.api, api,
        "the new agent answered: {finished}"
    );
    assert!(
        request
            .summary
            .last_user
            .ends_with(&format!("\n\n{prompt}")),
        "the recap comes before the prompt: {:?}",
        request.summary.last_user
    );
    request
}

#[test]
fn a_recap_carries_both_claude_turns_into_codexs_first_request() {
    let Some(tier) = claude_then_codex() else {
        return;
    };
    let first = tier.turn(&[], "we pick sqlite for the store");
    let second = tier.turn(&[], "and the schema has three tables");
    let claude_id = tier.stored_session_id();
    let codex = carried_turn(&tier, &["-a", "codex", "--carry"], "what did we decide?");
    assert_fresh(&codex);
    for text in [
        &first.summary.last_user,
        &first.reply,
        &second.summary.last_user,
        &second.reply,
        &claude_id,
    ] {
        assert!(
            mentions(&codex, text),
            "{text:?} missing from Codex's first request"
        );
    }
    let sessions = tier.world.sticky_ok(["sessions", "--json"]).json();
    let new = &sessions["sessions"][1];
    assert_eq!(new["agent"], "codex");
    assert_eq!(new["carried"], "recap", "{new}");

    // The next turn continues the Codex thread with the prompt alone.
    let next = tier.turn(&[], "and what comes next?");
    assert_continues(&next, &codex);
    assert_eq!(
        next.header("session-id"),
        codex.header("session-id"),
        "the same Codex thread"
    );
}

#[test]
fn a_summary_is_a_turn_of_claudes_session_and_codexs_first_request_carries_it() {
    let Some(tier) = claude_then_codex() else {
        return;
    };
    tier.turn(&[], "we pick sqlite for the store");
    let second = tier.turn(&[], "and the schema has three tables");
    let codex = carried_turn(&tier, &["-a", "codex", "--carry=summary"], "go on");
    let handoff = tier
        .mock
        .turns()
        .into_iter()
        .find(|turn| {
            turn.summary
                .last_user
                .starts_with("sticky is about to continue")
        })
        .expect("Claude was asked for a handoff summary");
    assert_eq!(handoff.summary.api, "anthropic");
    assert_continues(&handoff, &second);
    assert!(
        mentions(&codex, &handoff.reply),
        "the summary is in Codex's first request"
    );
    let log = tier.world.sticky_ok(["log", "--json"]).json();
    let claude_turns: &Vec<Value> = log["sessions"][0]["turns"].as_array().expect("turns");
    assert_eq!(claude_turns.len(), 3, "{log}");
    assert_eq!(claude_turns[2]["purpose"], "handoff");
    assert_eq!(claude_turns[2]["status"], "ok");
    assert_eq!(log["sessions"][1]["carried"], "summary");
}

#[test]
fn a_recap_carries_both_claude_turns_into_geminis_first_request() {
    let Some(tier) = claude_then(Agent::Gemini) else {
        return;
    };
    let first = tier.turn(&[], "we pick sqlite for the store");
    let second = tier.turn(&[], "and the schema has three tables");
    let gemini = carried_turn_on(&tier, "gemini", &["-a", "gemini", "--carry"], "go on");
    assert_fresh(&gemini);
    for text in [
        &first.summary.last_user,
        &first.reply,
        &second.summary.last_user,
        &second.reply,
    ] {
        assert!(
            mentions(&gemini, text),
            "{text:?} missing from Gemini's first request"
        );
    }
    let next = tier.turn(&[], "and what comes next?");
    assert_continues(&next, &gemini);
}
