//! GitHub Copilot CLI (`copilot`), as of 1.0.102 (facts: shared/research/agents.md §3.6; flags,
//! events, error texts and the exit line re-observed with the real 1.0.102 offline, BYOK against
//! a mock model server).
//!
//! - new session: `--session-id <uuid>`, which creates the session when the UUID is unknown and
//!   resumes it when known;
//! - resume: `--resume=<id>`, which fails on an unknown ID with rc 1 and `Error: No session, task,
//!   or name matched '<id>'.`. sticky resumes with it rather than with `--session-id`, because
//!   `--session-id` would silently create a fresh, empty session under the same ID when the
//!   stored one is gone (amnesia that no ID check could see);
//! - headless: `--prompt=PROMPT --output-format json` (the `=` form keeps a prompt starting with
//!   `-` a prompt: `-p -x` is refused); with no prompt and a piped stdin, stdin is the prompt
//!   (prompts over 128 KiB); `--model M` on every run;
//! - `--allow-all-tools` is "required for non-interactive mode" per `--help`; a turn that needs no
//!   tool runs without it. sticky never adds it: users pass it after `--` when they mean it;
//! - JSONL events `{"type":…,"data":{…}}`: `assistant.message` (`data.content`),
//!   `assistant.message_delta`, `tool.execution_start` (`data.toolName`), `session.error`
//!   (`data.message`, once a model request failed for good), ..., and last
//!   `{"type":"result","sessionId":…,"exitCode":…,"usage":{"premiumRequests":…}}`, the only event
//!   that carries the session ID;
//! - interactive: on exit the UI prints `Resume     copilot --resume=<id>`;
//! - state: `$COPILOT_HOME` (default `~/.copilot`)`/session-state/<uuid>/events.jsonl`, first line
//!   `{"type":"session.start","data":{"sessionId":…,"context":{"cwd":…}}}`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::flags::{CommandLine, Prompt};
use super::output::{env_dir, int_at, is_uuid, lost_on_resume, str_at};
use super::reserved::Reserved;
use super::{
    Adapter, Diagnosis, Event, Forking, Keeping, Profile, Prompts, SessionFile, Target, Usage,
};

/// The Copilot CLI adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Copilot;

/// `--session-id` to create, `--resume=` to resume, then `--model`; the prompt as `--prompt=`,
/// where one that starts with `-` stays a prompt. Copilot always accepts an ID chosen up front;
/// sticky never asks it to mint one.
const PROFILE: Profile<'static> = Profile {
    name: "copilot",
    command_line: Some(&CommandLine {
        headless: &[],
        create: Some("--session-id"),
        resume: "--resume=",
        model: "--model",
        output: &["--output-format", "json"],
        prompt: Prompt::Flag("--prompt="),
        // No fork of its own: a fork is a copy of the session's files
        // (`Forking::Copy`).
        fork: None,
    }),
    prompts: Prompts::FittingArguments,
    exit_line: Some(("copilot --resume=", is_uuid)),
    homes: &[HOME_VAR],
    reserved: Reserved {
        model: &["--model"],
        session: &["--resume", "-r", "--continue", "--session-id"],
        output: &["--output-format"],
    },
};

impl Adapter for Copilot {
    fn profile(&self) -> Profile<'_> {
        PROFILE
    }

    fn parse_event(&self, event: &Value) -> Vec<Event> {
        match str_at(event, "/type") {
            Some("assistant.message") => str_at(event, "/data/content")
                // A message that only requests tools has empty content.
                .filter(|text| !text.is_empty())
                .map(|text| Event::Text(text.to_owned()))
                .into_iter()
                .collect(),
            Some("tool.execution_start") => str_at(event, "/data/toolName")
                .map(|tool| Event::Activity(tool.to_owned()))
                .into_iter()
                .collect(),
            // A model request that failed for good: `{"type":"session.error","data":{"message":
            // "Failed to get response from the AI model; retried 5 times ... Last error: 500
            // ...","statusCode":500}}`, then a result with exit code 1 (1.0.102 against the mock,
            // part 12). Its message is the turn's answer, which a failed turn shows on stderr.
            Some("session.error") => vec![Event::failed(
                str_at(event, "/data/message").map(str::to_owned),
            )],
            Some("result") => {
                let mut events = Vec::new();
                if let Some(id) = str_at(event, "/sessionId") {
                    events.push(Event::Session(id.to_owned()));
                }
                let exit_code = int_at(event, "/exitCode");
                // A failed turn's result says nothing more than its exit code, which fails the
                // turn: it must not replace the error `session.error` gave as the answer.
                if exit_code.is_none_or(|code| code == 0) {
                    // Copilot reports premium requests, not tokens or dollars.
                    events.push(Event::answered(None, Usage::default()));
                }
                events
            }
            _ => Vec::new(),
        }
    }

    fn diagnose(&self, target: &Target<'_>, output: &str) -> Option<Diagnosis> {
        lost_on_resume(target, output, &["No session, task, or name matched"])
    }

    fn transcript(&self, home: &Path, _directory: &Path, id: &str) -> Option<PathBuf> {
        events_file(&copilot_home(home), id)
    }

    // `renamed` stays `false`: the ID sticky chose is the session's for life (`--session-id`
    // fixes it, `--resume=<uuid>` matches it exactly).

    /// No fork of its own, but Copilot CLI resumes `session-state/<id>/` by its directory: a copy under a new ID goes on
    /// with the whole history (tests/it/real/scenarios.rs).
    fn forking(&self) -> Forking {
        Forking::Copy
    }

    fn agent_home(&self, home: &Path) -> Option<PathBuf> {
        Some(copilot_home(home))
    }

    /// The session's whole state directory: `events.jsonl` (appended to) and what the CLI
    /// rewrites beside it (`workspace.yaml`, `checkpoints/`, `files/`).
    fn session_files(&self, home: &Path, _directory: &Path, id: &str) -> Vec<SessionFile> {
        let root = copilot_home(home);
        let Some(events) = events_file(&root, id) else {
            return Vec::new();
        };
        let Some(dir) = events.parent() else {
            return Vec::new();
        };
        SessionFile::all_under(&root, dir, &|path| {
            if path == events {
                Keeping::Append
            } else {
                Keeping::Rewritten
            }
        })
    }
}

/// The variable that moves Copilot CLI's home (`~/.copilot`).
const HOME_VAR: &str = "COPILOT_HOME";

/// Copilot CLI's home: `$COPILOT_HOME`, else `~/.copilot`.
fn copilot_home(home: &Path) -> PathBuf {
    env_dir(HOME_VAR).unwrap_or_else(|| home.join(".copilot"))
}

/// `<copilot home>/session-state/<id>/events.jsonl`.
fn events_file(copilot_home: &Path, id: &str) -> Option<PathBuf> {
    is_uuid(id).then(|| {
        copilot_home
            .join("session-state")
            .join(id)
            .join("events.jsonl")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::output::{assert_exit_line, assert_lost_on_resume, events};

    const ID: &str = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";

    #[test]
    fn json_events() {
        // Real lines from Copilot CLI 1.0.102 (BYOK, mock server; observed 2026-11-30), trimmed.
        let lines = [
            r#"{"type":"session.tools_updated","data":{"model":"mock-model"},"ephemeral":true,"id":"5344","timestamp":"t","parentId":"377f"}"#,
            r#"{"type":"user.message","data":{"content":"-x hello","messageId":"928a"},"id":"b595","timestamp":"t"}"#,
            r#"{"type":"assistant.message_delta","data":{"messageId":"a4f1","deltaContent":"MOCK-6 user_msgs=1 assistant_msgs=0"},"ephemeral":true,"id":"3820","timestamp":"t"}"#,
            r#"{"type":"assistant.message","data":{"messageId":"a4f1","model":"mock-model","content":"MOCK-6 user_msgs=1 assistant_msgs=0","toolRequests":[],"turnId":"0"},"id":"86fa","timestamp":"t"}"#,
            r#"{"type":"assistant.turn_end","data":{"turnId":"0"},"id":"8b60","timestamp":"t"}"#,
            r#"{"type":"result","timestamp":"2026-11-30T06:17:03.242Z","sessionId":"3f2504e0-4f89-41d3-9a0c-0305e82c3301","exitCode":0,"usage":{"premiumRequests":0,"totalApiDurationMs":100,"sessionDurationMs":599}}"#,
        ];
        assert_eq!(
            events(&Copilot, &lines),
            [
                Event::Text("MOCK-6 user_msgs=1 assistant_msgs=0".into()),
                Event::Session(ID.into()),
                Event::answered(None, Usage::default()),
            ]
        );
        // A tool turn of the real 1.0.102 (part 12's real tier, 2026-12-01), trimmed: the
        // message that requests the tool has empty content, then the tool starts.
        let request = r#"{"type":"assistant.message","data":{"messageId":"ade4","model":"mock-model","content":"","toolRequests":[{"toolCallId":"call_mock_7","name":"bash","arguments":{"command":"echo made > m.txt","description":"mock"}}]}}"#;
        assert_eq!(Copilot.parse_line(request), []);
        let tool = r#"{"type":"tool.execution_start","data":{"toolCallId":"call_mock_7","toolName":"bash","arguments":{"command":"echo made > m.txt","description":"mock"},"turnId":"0","model":"mock-model","toolTitle":"Running command"}}"#;
        assert_eq!(Copilot.parse_line(tool), [Event::Activity("bash".into())]);
        // A failed model request of the real 1.0.102 (part 12), trimmed: the error, then a
        // result that only names the session and the exit code.
        let error = r#"{"type":"session.error","data":{"errorType":"query","message":"Failed to get response from the AI model; retried 5 times (total retry wait time: 15.74 seconds) Last error: 500 mock: MOCK-FAIL-500 requested","statusCode":500},"id":"9caa"}"#;
        let failed = r#"{"type":"result","sessionId":"s","exitCode":1,"usage":{}}"#;
        let events = events(&Copilot, &[error, failed]);
        assert!(
            matches!(&events[..], [
                Event::Result { text: Some(text), is_error: true, .. },
                Event::Session(id),
            ] if text.ends_with("Last error: 500 mock: MOCK-FAIL-500 requested") && id == "s"),
            "{events:?}"
        );
    }

    #[test]
    fn malformed_lines_give_no_events() {
        for line in [
            "",
            "error: Invalid command format.",
            "{",
            "[1]",
            r#"{"type":"assistant.message","data":{"content":""}}"#,
            r#"{"type":"assistant.message","data":"x"}"#,
            r#"{"type":"tool.execution_start"}"#,
            r#"{"sessionId":"s"}"#,
        ] {
            assert_eq!(Copilot.parse_line(line), [], "{line:?}");
        }
    }

    #[test]
    fn a_forgotten_session_is_diagnosed_only_on_resume() {
        // research/agents.md §3.6 item 10; re-observed with 1.0.102 and --resume=<unknown>.
        let output = "Error: No session, task, or name matched \
                      '99999999-aaaa-4bbb-8ccc-123456789abc'.\n\nTo resume by session or task \
                      ID:  copilot --resume=<id>\n";
        assert_lost_on_resume(&Copilot, output, "Error: No session");
        assert_eq!(Copilot.diagnose(&Target::Resume(ID), "Error: 401"), None);
    }

    #[test]
    fn the_exit_line_names_the_session_and_state_lives_per_id() {
        // The 1.0.102 TUI after /exit (observed 2026-11-30); the hint lines of an error mention
        // `--resume=<id>` literally, which is not an ID.
        let tail = " \u{2594}\u{2594}\u{2594}\u{2594}    Resume     copilot --resume=3f2504e0-4f89-41d3-9a0c-0305e82c3301\r\n";
        assert_exit_line(
            &Copilot,
            tail,
            ID,
            "To resume by ID:  copilot --resume=<id>",
        );
        assert_eq!(
            events_file(Path::new("/h/.copilot"), ID),
            Some(PathBuf::from(format!(
                "/h/.copilot/session-state/{ID}/events.jsonl"
            )))
        );
        assert_eq!(events_file(Path::new("/h/.copilot"), ".."), None);
    }
}
