//! opencode (`opencode`), as of 1.18.33 (facts: shared/research/agents.md §3.5 and
//! real-agents-offline.md "opencode 1.18.33"; flags, events, error texts and the exit line
//! re-observed with the real 1.18.33 against a mock model server).
//!
//! - no caller-chosen ID: opencode mints `ses_…` and puts it on every JSON event as `sessionID`;
//! - headless: `opencode run --format json [-s <id>] [-m provider/model] [ARGS]` with the prompt
//!   on stdin: with no message argument and a stdin that is not a terminal, stdin's text is the
//!   message, verbatim. A message argument is not: `run` wraps each argument that holds a space in
//!   double quotes and escapes the quotes inside, so `say "hi" now` reached the model as
//!   `"say \"hi\" now"` (observed with the real 1.18.33 through sticky); stdin also carries
//!   prompts over 128 KiB and prompts starting with `-`. On a terminal stdin is not read;
//! - the session keeps its last model, but `-m` goes on every run anyway, like every adapter;
//! - opencode takes its project directory from `$PWD`, not the process's working directory, so
//!   `PWD` is set to the session's directory; resuming from another directory hangs after the
//!   turn (#41841), which sticky avoids by always running in the session's directory;
//! - events: `step_start`, `text` (`part.text`), `tool_use` (`part.tool`), `step_finish`
//!   (`part.tokens`, `part.cost`, per step), `error` (`error.data.message`);
//! - an unknown session fails with rc 1 and `Error: Session not found` (the TUI adds `: ses_…`);
//! - interactive: `opencode [-s <id>] [-m M] [ARGS]`; on exit the TUI prints
//!   `Continue  opencode -s ses_…`;
//! - sessions live in an `SQLite` database (`~/.local/share/opencode/opencode.db`), not in a file per session,
//!   so there is no transcript path.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::flags::{CommandLine, Fork, Prompt};
use super::output::{lost_on_resume, str_at, sum_at};
use super::reserved::Reserved;
use super::{Adapter, Diagnosis, Event, Profile, Prompts, SessionFile, SessionRows, Target, Usage};

/// The opencode adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Opencode;

/// `run --format json` for a headless run, `-s <id>` on resume (opencode mints its IDs), `-m`,
/// then the user's arguments. sticky sends every prompt on stdin (`prompt_via`); an argument
/// after `--` would stay a message even when it starts with `-`.
const PROFILE: Profile<'static> = Profile {
    name: "opencode",
    command_line: Some(&CommandLine {
        headless: &["run", "--format", "json"],
        create: None,
        resume: "-s",
        model: "-m",
        output: &[],
        prompt: Prompt::AfterDashes,
        // `run -s ID --fork`: opencode mints the fork's ID and names it on every event.
        fork: Some(Fork {
            flag: "--fork",
            chosen_id: false,
        }),
    }),
    // Only stdin reaches the model as typed; `run` quotes message arguments with spaces.
    prompts: Prompts::OnStdin,
    exit_line: Some(("opencode -s ", is_session_id)),
    homes: &[DATA_HOME],
    reserved: Reserved {
        model: &["--model", "-m"],
        session: &["--session", "-s", "--continue", "-c", "--fork"],
        output: &["--format"],
    },
};

impl Adapter for Opencode {
    fn profile(&self) -> Profile<'_> {
        PROFILE
    }

    fn env(&self, directory: &Path) -> Vec<(OsString, OsString)> {
        vec![("PWD".into(), directory.as_os_str().to_owned())]
    }

    fn parse_event(&self, event: &Value) -> Vec<Event> {
        let mut events = Vec::new();
        let Some(kind) = str_at(event, "/type") else {
            return events;
        };
        if let Some(id) = str_at(event, "/sessionID") {
            events.push(Event::Session(id.to_owned()));
        }
        match kind {
            "text" => {
                if let Some(text) = str_at(event, "/part/text") {
                    events.push(Event::Text(text.to_owned()));
                }
            }
            "tool_use" => {
                if let Some(tool) = str_at(event, "/part/tool") {
                    events.push(Event::Activity(tool.to_owned()));
                }
            }
            "step_finish" => {
                let tokens = event.pointer("/part/tokens");
                events.push(Event::Usage(Usage {
                    cost_usd: event.pointer("/part/cost").and_then(Value::as_f64),
                    // opencode counts reasoning apart.
                    input_tokens: tokens.and_then(prompt_tokens),
                    output_tokens: tokens.and_then(|t| sum_at(t, &["/output", "/reasoning"])),
                }));
            }
            "error" => events.push(Event::failed(Some(
                str_at(event, "/error/data/message")
                    .or_else(|| str_at(event, "/error/name"))
                    .unwrap_or("opencode reported an error")
                    .to_owned(),
            ))),
            _ => {}
        }
        events
    }

    fn diagnose(&self, target: &Target<'_>, output: &str) -> Option<Diagnosis> {
        lost_on_resume(target, output, &["Error: Session not found"])
    }

    fn transcript(&self, _home: &Path, _directory: &Path, _id: &str) -> Option<PathBuf> {
        None
    }

    // `renamed` stays `false`: an opencode session keeps its `ses_` ID; `--fork` would make a new
    // one, and sticky never asks for it.

    fn agent_home(&self, home: &Path) -> Option<PathBuf> {
        Some(data_dir(home))
    }

    /// opencode keeps every session as rows of one database (`opencode.db` in its data
    /// directory: tables `session`, `message`, `part`, ...; agents.md 3.5, checked against
    /// 1.18.33's schema), so the vault copies the session's rows, not a file.
    fn session_files(&self, _home: &Path, _directory: &Path, _id: &str) -> Vec<SessionFile> {
        Vec::new()
    }

    fn session_rows(&self, home: &Path, id: &str) -> Option<SessionRows> {
        is_session_id(id).then(|| SessionRows {
            database: data_dir(home).join("opencode.db"),
            relative: PathBuf::from("opencode.db"),
            table: "session",
            referred: &[("project", "id", "project_id")],
            migrations: &["migration", "data_migration"],
        })
    }
}

/// The prompt's tokens in the `tokens` of opencode's `step_finish`: new input, cache reads
/// and cache writes, which opencode counts apart.
pub(super) fn prompt_tokens(tokens: &Value) -> Option<i64> {
    sum_at(tokens, &["/input", "/cache/read", "/cache/write"])
}

/// An opencode session ID: `ses_` and letters or digits (26 of them in 1.18.33).
fn is_session_id(id: &str) -> bool {
    id.strip_prefix("ses_")
        .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// The variable that moves opencode's data directory (`~/.local/share`).
pub(super) const DATA_HOME: &str = "XDG_DATA_HOME";

/// opencode's data directory: `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`.
fn data_dir(home: &Path) -> PathBuf {
    super::output::env_dir(DATA_HOME)
        .unwrap_or_else(|| home.join(".local/share"))
        .join("opencode")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::PromptVia;
    use crate::agent::output::{assert_exit_line, assert_lost_on_resume, events};

    const ID: &str = "ses_dd4e53bd4ffemgeYxOMCxVDJCi";

    #[test]
    fn every_prompt_goes_on_stdin_where_opencode_keeps_it_verbatim() {
        let large = vec![b'a'; 200 * 1024];
        for prompt in [&b"hi"[..], b"say \"hi\" now", b"-x", &large] {
            assert_eq!(Opencode.prompt_via(prompt), PromptVia::Stdin);
        }
    }

    #[test]
    fn runs_in_the_sessions_directory() {
        assert_eq!(
            Opencode.env(Path::new("/home/u/proj")),
            [(OsString::from("PWD"), OsString::from("/home/u/proj"))]
        );
    }

    #[test]
    fn json_events() {
        // Real lines from opencode 1.18.33 against a mock (research/agents.md §3.5 item 7,
        // re-observed 2026-11-30), ids shortened.
        let lines = [
            r#"{"type":"step_start","timestamp":1796019508137,"sessionID":"ses_dd4e53bd4ffemgeYxOMCxVDJCi","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_dd4e53bd4ffemgeYxOMCxVDJCi","type":"step-start"}}"#,
            r#"{"type":"text","timestamp":1796019508138,"sessionID":"ses_dd4e53bd4ffemgeYxOMCxVDJCi","part":{"id":"prt_2","type":"text","text":"MOCK-14 user_msgs=1 assistant_msgs=0","time":{"start":1,"end":2}}}"#,
            r#"{"type":"step_finish","timestamp":1796019508138,"sessionID":"ses_dd4e53bd4ffemgeYxOMCxVDJCi","part":{"id":"prt_3","reason":"stop","type":"step-finish","tokens":{"total":15,"input":10,"output":5,"reasoning":0,"cache":{"write":0,"read":2}},"cost":0.001}}"#,
        ];
        let events = events(&Opencode, &lines);
        let session = || Event::Session(ID.into());
        assert_eq!(
            events,
            [
                session(),
                session(),
                Event::Text("MOCK-14 user_msgs=1 assistant_msgs=0".into()),
                session(),
                Event::Usage(Usage {
                    cost_usd: Some(0.001),
                    input_tokens: Some(12),
                    output_tokens: Some(5),
                }),
            ]
        );
        // `-m` with a model the config does not declare (observed, 1.18.33).
        let error = r#"{"type":"error","timestamp":1796019532921,"sessionID":"ses_dd4e4d2b3ffeBzsdelDZjIoOil","error":{"name":"UnknownError","data":{"message":"Unexpected server error. Check server logs for details.","ref":"err_a1320bb9"}}}"#;
        assert_eq!(
            Opencode.parse_line(error),
            [
                Event::Session("ses_dd4e4d2b3ffeBzsdelDZjIoOil".into()),
                Event::failed(Some(
                    "Unexpected server error. Check server logs for details.".into()
                ))
            ]
        );
        let tool = r#"{"type":"tool_use","sessionID":"ses_a","part":{"type":"tool","tool":"bash","state":{"status":"completed"}}}"#;
        assert_eq!(
            Opencode.parse_line(tool),
            [
                Event::Session("ses_a".into()),
                Event::Activity("bash".into())
            ]
        );
    }

    #[test]
    fn malformed_lines_give_no_events() {
        for line in [
            "",
            "\u{1b}[91m\u{1b}[1mError: \u{1b}[0mSession not found",
            "{",
            "[1]",
            r#"{"sessionID":"ses_a"}"#,
            r#"{"type":"text","sessionID":5,"part":{"text":7}}"#,
        ] {
            assert_eq!(Opencode.parse_line(line), [], "{line:?}");
        }
    }

    #[test]
    fn a_forgotten_session_is_diagnosed_only_on_resume() {
        // research/agents.md §3.5 item 10; the ANSI colours are gone by the time sticky reads it.
        for output in [
            "Error: Session not found",
            "Error: Session not found: ses_doesnotexist123",
        ] {
            assert_lost_on_resume(&Opencode, output, "Error: Session not found");
        }
        assert_eq!(Opencode.diagnose(&Target::Resume(ID), "Error: other"), None);
    }

    #[test]
    fn the_exit_line_names_the_session() {
        // The 1.18.33 TUI after one turn and Ctrl-C (observed 2026-11-30).
        let tail = "  Session   MOCK-17 user_msgs=2 assistant_msgs=0\r\n  Continue  \x1b[1mopencode -s \
                    ses_dd4e433f7ffeappl0PGdcS2FzQ\x1b[0m\r\n";
        assert_exit_line(
            &Opencode,
            tail,
            "ses_dd4e433f7ffeappl0PGdcS2FzQ",
            "opencode -s ses_",
        );
        assert_eq!(
            Opencode.transcript(Path::new("/h"), Path::new("/p"), ID),
            None
        );
    }
}
