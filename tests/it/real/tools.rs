//! Tool-using turns with the real agents (issue 15, part 12): the mock answers a prompt holding
//! `MOCK-SHELL <command>` with a call of the agent's own shell tool, in its API's form, and the
//! request that brings the tool's result back with its text (see [`crate::mock::tool`]).
//!
//! With permissions given after `--` as a CI user gives them (each agent's
//! [`Tools`](super::scenarios::Tools)), a turn through sticky makes the real agent run the
//! command in the project: the command's file exists, sticky prints only the final answer, and
//! the next turn's request carries the call and its result. On a terminal, the progress line
//! names the tool while it runs: the command waits for a file the test creates only once it
//! has seen that name on the screen, so the check is a handshake, never a race with a sleep
//! (opencode reports a tool only once it finished, so it has only the first scenario).

use super::scenarios::Tools;
use super::terminal::Terminal;
use super::tier::Tier;
use super::{Agent, assert_continues, mentions};
use crate::mock::Request;
use crate::mock::tool::SHELL;

/// The tier for `agent` and how it is let run tools, or `None` after a loud skip.
#[track_caller]
fn start(agent: Agent) -> Option<(Tier, &'static Tools)> {
    let tier = Tier::start(agent)?;
    let tools = agent
        .profile()
        .tools
        .as_ref()
        .expect("the profile lets the agent run tools");
    Some((tier, tools))
}

/// `PROMPT -- PERMISSIONS...`: sticky's argument order, the agent's own arguments last.
fn with_permissions<'a>(prompt: &'a str, tools: &'a Tools) -> Vec<&'a str> {
    let mut args = vec![prompt, "--"];
    args.extend(tools.permissions);
    args
}

/// The request the mock answered with a call of the shell tool for `prompt`.
#[track_caller]
fn call_for(tier: &Tier, prompt: &str) -> Request {
    tier.mock
        .turns()
        .into_iter()
        .find(|t| t.tool_call.is_some() && t.summary.last_user == prompt)
        .unwrap_or_else(|| {
            panic!(
                "the mock answered no request for {prompt:?} with a tool call: {:#?}",
                tier.mock
                    .turns()
                    .iter()
                    .map(|t| &t.summary)
                    .collect::<Vec<_>>()
            )
        })
}

/// A turn whose model asks for a shell command: the agent runs it in the project, sticky prints
/// only the final answer (the reply to the request carrying the command's result), and the next
/// turn's request carries the call and its result in the same session.
pub fn a_tool_turn_runs_the_command_and_the_next_turn_carries_it(agent: Agent) {
    let Some((tier, tools)) = start(agent) else {
        return;
    };
    let command = "echo made-by-the-tool > tool-marker.txt";
    let prompt = format!("{SHELL}{command}");
    let finished = tier
        .world
        .sticky(&tier.world.project, with_permissions(&prompt, tools));
    finished.assert_success();
    // Only the final answer: stdout is exactly the reply to one request, the one that
    // carried the tool's result back.
    let answered = tier.answered(&finished);
    assert_eq!(answered.summary.last_user, prompt, "{finished}");
    assert!(
        answered.summary.results_since_user >= 1,
        "the answer came after the tool's result: {:?}",
        answered.summary
    );
    let called = call_for(&tier, &prompt);
    let session = tier.session_of(&answered);
    assert_eq!(tier.session_of(&called), session, "one session");
    let marker = tier.world.project.join("tool-marker.txt");
    assert_eq!(
        std::fs::read_to_string(&marker).ok().as_deref(),
        Some("made-by-the-tool\n"),
        "the agent ran the command in the project: {finished}"
    );

    let next = tier.turn(&[], "what did the command write?");
    assert!(
        next.summary.tool_calls >= 1 && next.summary.tool_results >= 1,
        "the next request carries the tool call and its result: {:?}",
        next.summary
    );
    assert!(mentions(&next, command), "the command is history");
    assert_continues(&next, &answered);
    assert_eq!(tier.session_of(&next), session, "the same session");
    tier.assert_no_processes_left();
}

/// On a terminal, the progress line names the tool while the agent runs it, and the turn ends
/// with the final answer once the command is let finish.
pub fn the_progress_line_names_the_tool_while_it_runs(agent: Agent) {
    let Some((tier, tools)) = start(agent) else {
        return;
    };
    // The command holds the tool running until the test has seen its name on the screen.
    let prompt =
        format!("{SHELL}until [ -e tool-go ]; do sleep 0.1; done; echo spun > spinner-marker.txt");
    let mut terminal = Terminal::sticky(
        &tier.world,
        &tier.world.project,
        &with_permissions(&prompt, tools),
    );
    let activity = tools
        .activity
        .expect("the agent reports its tool while it runs");
    let shown = format!("{} \u{b7} {activity}", agent.name());
    terminal.wait_for(&shown);
    std::fs::write(tier.world.project.join("tool-go"), "").expect("let the command finish");
    terminal.assert_exit(0);
    let answered = tier
        .mock
        .turns()
        .into_iter()
        .find(|t| t.summary.last_user == prompt && !t.reply.is_empty())
        .expect("a final answer after the tool's result");
    assert!(answered.summary.results_since_user >= 1);
    terminal.wait_for(&answered.reply);
    assert!(
        tier.world.project.join("spinner-marker.txt").is_file(),
        "the command ran to its end"
    );
    tier.assert_no_processes_left();
}
