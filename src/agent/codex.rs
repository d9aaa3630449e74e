//! The `OpenAI` Codex CLI (`codex`), as of 0.171.0 (facts: shared/research/agents.md §3.2 and
//! real-agents-offline.md "Codex 0.171.0"; the argument orders below were re-run against the
//! real 0.171.0 binary and a mock model server).
//!
//! - no caller-chosen ID: Codex mints a UUID (version 7) and reports it in its first event,
//!   `{"type":"thread.started","thread_id":…}`, so sticky stores it from there;
//! - headless: `codex exec --json [-m M] [ARGS] -- PROMPT`, resume
//!   `codex exec --json [-m M] [ARGS] resume <id> -- PROMPT`: exec's own options are accepted
//!   before `resume` (`--cd` only there), so the user's arguments go before it and mean the same
//!   on both paths; `--` keeps a prompt such as `review` or `-x` from being read as exec's
//!   subcommand or an option;
//! - the prompt `-` is read from stdin, which is how prompts over the 128 KiB argument limit get
//!   in (a prompt argument with a piped stdin would get stdin appended as a `<stdin>` block);
//! - `exec resume` does not restore the session's model (it falls back to the config default), so
//!   `-m` goes on every run;
//! - an unknown UUID fails with rc 1 and `no rollout found for thread id <id>`; a non-UUID name
//!   silently starts a new thread (sticky's ID check calls that amnesia);
//! - outside a git repository exec refuses with rc 1 and `Not inside a trusted directory and
//!   --skip-git-repo-check was not specified.` (a `trust_level = "trusted"` project entry does not
//!   lift it in 0.171.0); sticky never passes that flag itself, it says how;
//! - a thread held by another process (the TUI's background daemon) fails with `already has an
//!   active writer`;
//! - interactive: `codex --no-daemon [-m M] [ARGS] [resume <id>]`; without `--no-daemon` the TUI
//!   leaves an app-server daemon that keeps the thread and breaks the next `exec resume`. After a
//!   turn the TUI ends with `To continue this session, run:` / `codex resume <id>`; with no turn it
//!   prints only `Session ID: <id>` and writes no rollout, so that session cannot be resumed;
//! - rollouts: `$CODEX_HOME` (default `~/.codex`)`/sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl`,
//!   whose first line is `{"type":"session_meta","payload":{"id":…,"cwd":…}}`.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::output::{env_dir, first_json_line, int_at, is_uuid, line_with, str_at};
use super::reserved::Reserved;
use super::{Adapter, Diagnosis, Event, Forking, Profile, Prompts, Target, Turn, Usage};

/// The Codex CLI adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Codex;

/// Codex builds its own command lines (`exec ... resume <id>`, below) and mints its own IDs.
const PROFILE: Profile<'static> = Profile {
    name: "codex",
    command_line: None,
    prompts: Prompts::FittingArguments,
    exit_line: Some(("codex resume ", is_uuid)),
    homes: &[HOME_VAR],
    reserved: Reserved {
        model: &["--model", "-m"],
        // `-c` is a configuration override here, not "continue".
        session: &["resume", "--last"],
        output: &[],
    },
};

impl Adapter for Codex {
    fn profile(&self) -> Profile<'_> {
        PROFILE
    }

    fn headless_args(&self, turn: &Turn<'_>, prompt: Option<&OsStr>) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["exec".into(), "--json".into()];
        options(turn, &mut args);
        session(turn, &mut args);
        args.push("--".into());
        args.push(prompt.map_or_else(|| "-".into(), OsStr::to_owned));
        args
    }

    fn interactive_args(&self, turn: &Turn<'_>) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--no-daemon".into()];
        options(turn, &mut args);
        // Codex cannot be given an ID up front, so `Create` starts a new thread like
        // `CreateUnnamed` (sticky never asks for it: `mint_id` is `None`).
        session(turn, &mut args);
        args
    }

    fn forking(&self) -> Forking {
        // `codex exec fork <SESSION_ID> [PROMPT]` and `codex fork <SESSION_ID>` (0.171.0's
        // --help): a new thread with the source's history, whose ID Codex mints and reports in
        // `thread.started`.
        Forking::Own { chosen_id: false }
    }

    fn parse_event(&self, event: &Value) -> Vec<Event> {
        let item = |pointer: &str| str_at(event, &format!("/item{pointer}"));
        match str_at(event, "/type") {
            Some("thread.started") => str_at(event, "/thread_id")
                .map(|id| Event::Session(id.to_owned()))
                .into_iter()
                .collect(),
            Some("item.started" | "item.updated" | "item.completed") => {
                let completed = str_at(event, "/type") == Some("item.completed");
                match item("/type") {
                    // Messages arrive whole, once, when completed.
                    Some("agent_message") if completed => item("/text")
                        .map(|text| Event::Text(text.to_owned()))
                        .into_iter()
                        .collect(),
                    Some("command_execution") => activity(item("/command")),
                    Some("mcp_tool_call") => match (item("/server"), item("/tool")) {
                        (Some(server), Some(tool)) => {
                            vec![Event::Activity(format!("{server}.{tool}"))]
                        }
                        _ => Vec::new(),
                    },
                    Some("file_change") => activity(Some("editing files")),
                    Some("web_search") => activity(Some("searching the web")),
                    Some("reasoning") => activity(Some("thinking")),
                    Some("todo_list" | "plan") => activity(Some("planning")),
                    // `error` items are warnings (an unknown model's metadata, a model change on
                    // resume); the turn goes on, so they are not the answer.
                    _ => Vec::new(),
                }
            }
            Some("turn.completed") => vec![Event::answered(
                None,
                Usage {
                    cost_usd: None,
                    // OpenAI counts cached input inside input_tokens and reasoning inside
                    // output_tokens, so neither is added again.
                    input_tokens: int_at(event, "/usage/input_tokens"),
                    output_tokens: int_at(event, "/usage/output_tokens"),
                },
            )],
            Some("turn.failed") => vec![failure(str_at(event, "/error/message"))],
            Some("error") => vec![failure(str_at(event, "/message"))],
            _ => Vec::new(),
        }
    }

    fn diagnose(&self, target: &Target<'_>, output: &str) -> Option<Diagnosis> {
        if let Some(reason) = line_with(output, "--skip-git-repo-check was not specified") {
            return Some(Diagnosis::Refused {
                reason,
                hint: "Codex runs only inside a git repository: run sticky in one, or lift the \
                       check for this turn with `-- --skip-git-repo-check`"
                    .into(),
            });
        }
        if let Some(reason) = line_with(output, "already has an active writer") {
            return Some(Diagnosis::Refused {
                reason,
                hint: "another Codex process holds this thread (often the TUI's background \
                       daemon); stop it with `codex app-server daemon stop` and try again"
                    .into(),
            });
        }
        let Target::Resume(_) = target else {
            return None;
        };
        line_with(output, "no rollout found for thread id")
            .or_else(|| line_with(output, "No saved session found with ID"))
            .map(Diagnosis::SessionLost)
    }

    fn transcript(&self, home: &Path, directory: &Path, id: &str) -> Option<PathBuf> {
        rollout(&codex_home(home), directory, id)
    }

    /// A thread is saved once a rollout named by its ID exists, in whatever directory.
    fn saved(&self, home: &Path, _directory: &Path, id: &str) -> Option<bool> {
        is_uuid(id).then(|| rollout_file(&codex_home(home), id).is_some())
    }

    // `renamed` stays `false`: a Codex thread keeps its ID for life, and the only way `exec
    // resume` answers from another ID is by starting a new thread (an unknown name), which is
    // exactly the amnesia sticky must report.

    // `session_files` is the default: the rollout (`transcript`), which Codex only appends to.
    fn agent_home(&self, home: &Path) -> Option<PathBuf> {
        Some(codex_home(home))
    }
}

/// The variable that moves Codex's home (`~/.codex`).
const HOME_VAR: &str = "CODEX_HOME";

/// Codex's home: `$CODEX_HOME`, else `~/.codex`.
fn codex_home(home: &Path) -> PathBuf {
    env_dir(HOME_VAR).unwrap_or_else(|| home.join(".codex"))
}

/// The session's subcommand: `resume <id>`, `fork <source>` (a new thread with the source's
/// history), or nothing for a new thread.
fn session(turn: &Turn<'_>, args: &mut Vec<OsString>) {
    match (turn.fork_from, turn.target) {
        (Some(from), _) => args.extend(["fork".into(), from.into()]),
        (None, Target::Resume(id)) => args.extend(["resume".into(), id.into()]),
        (None, _) => {}
    }
}

/// `-m` and the user's arguments, which exec and the TUI accept before `resume`.
fn options(turn: &Turn<'_>, args: &mut Vec<OsString>) {
    if let Some(model) = turn.model {
        args.extend(["-m".into(), model.into()]);
    }
    args.extend(turn.extra_args.iter().cloned());
}

fn activity(what: Option<&str>) -> Vec<Event> {
    what.map(|what| Event::Activity(what.to_owned()))
        .into_iter()
        .collect()
}

fn failure(message: Option<&str>) -> Event {
    Event::failed(Some(
        message.unwrap_or("codex reported an error").to_owned(),
    ))
}

/// The rollout of thread `id` run in `directory`: the one file named for the ID under
/// `sessions/YYYY/MM/DD/`, confirmed by its `session_meta` line (same ID, same cwd). Found by
/// its ID, never by its time.
fn rollout(codex_home: &Path, directory: &Path, id: &str) -> Option<PathBuf> {
    if !is_uuid(id) {
        return None;
    }
    let path = rollout_file(codex_home, id)?;
    meta_matches(&path, directory, id).then_some(path)
}

/// The rollout file named by thread `id` under `codex_home/sessions/YYYY/MM/DD`, if any.
fn rollout_file(codex_home: &Path, id: &str) -> Option<PathBuf> {
    let suffix = format!("-{id}.jsonl");
    let days = subdirectories(&codex_home.join("sessions"))
        .into_iter()
        .flat_map(|year| subdirectories(&year))
        .flat_map(|month| subdirectories(&month));
    for day in days {
        let Ok(entries) = std::fs::read_dir(&day) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("rollout-") && name.ends_with(&suffix) {
                return Some(entry.path());
            }
        }
    }
    None
}

fn subdirectories(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path())
        .collect()
}

fn meta_matches(rollout: &Path, directory: &Path, id: &str) -> bool {
    first_json_line(rollout).is_some_and(|meta: Value| {
        str_at(&meta, "/type") == Some("session_meta")
            && str_at(&meta, "/payload/id") == Some(id)
            && str_at(&meta, "/payload/cwd").is_some_and(|cwd| Path::new(cwd) == directory)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::output::{assert_exit_line, assert_lost_on_resume, assert_refused, events};

    const ID: &str = "01a22b18-829a-7d01-9c20-4112f3bc2ec9";

    #[test]
    fn exec_json_events() {
        // Real lines from codex 0.171.0 against a mock server (research/agents.md §3.2 item 7;
        // re-observed 2026-11-30), the first error item trimmed.
        let lines = [
            r#"{"type":"thread.started","thread_id":"01a22b18-829a-7d01-9c20-4112f3bc2ec9"}"#,
            r#"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `mock-model` not found."}}"#,
            r#"{"type":"turn.started"}"#,
            r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"MOCK-2 user_msgs=2 assistant_msgs=1"}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":20,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}"#,
        ];
        assert_eq!(
            events(&Codex, &lines),
            [
                Event::Session(ID.into()),
                Event::Text("MOCK-2 user_msgs=2 assistant_msgs=1".into()),
                Event::answered(
                    None,
                    Usage {
                        cost_usd: None,
                        input_tokens: Some(20),
                        output_tokens: Some(10),
                    }
                ),
            ]
        );
    }

    #[test]
    fn tools_show_as_activity_and_failures_end_the_turn() {
        // Shapes from codex-rs/exec/src/exec_events.rs.
        let failed = |text: &str| Event::failed(Some(text.into()));
        let cases = [
            (
                r#"{"type":"item.started","item":{"id":"i","type":"command_execution","command":"cargo test","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
                vec![Event::Activity("cargo test".into())],
            ),
            (
                r#"{"type":"item.started","item":{"id":"i","type":"mcp_tool_call","server":"fs","tool":"read","status":"in_progress"}}"#,
                vec![Event::Activity("fs.read".into())],
            ),
            (
                r#"{"type":"item.completed","item":{"id":"i","type":"file_change","changes":[],"status":"completed"}}"#,
                vec![Event::Activity("editing files".into())],
            ),
            (
                r#"{"type":"item.updated","item":{"id":"i","type":"agent_message","text":"partial"}}"#,
                vec![],
            ),
            (
                r#"{"type":"turn.failed","error":{"message":"stream disconnected"}}"#,
                vec![failed("stream disconnected")],
            ),
            (
                r#"{"type":"error","message":"unexpected status 500"}"#,
                vec![failed("unexpected status 500")],
            ),
        ];
        for (line, want) in cases {
            assert_eq!(Codex.parse_line(line), want, "{line}");
        }
    }

    #[test]
    fn malformed_lines_give_no_events() {
        for line in [
            "",
            "Reading additional input from stdin...",
            "{",
            "[1]",
            r#"{"type":"thread.started"}"#,
            r#"{"type":"thread.started","thread_id":7}"#,
            r#"{"type":"item.completed","item":"x"}"#,
            r#"{"type":"item.completed","item":{"type":"agent_message"}}"#,
            r#"{"type":"item.started","item":{"type":"command_execution"}}"#,
            r#"{"type":"turn.started"}"#,
            r#"{"type":7}"#,
        ] {
            assert_eq!(Codex.parse_line(line), [], "{line:?}");
        }
        // A turn.completed without usable usage still ends the turn, with nothing counted.
        assert_eq!(
            Codex.parse_line(r#"{"type":"turn.completed","usage":"lots"}"#),
            [Event::answered(None, Usage::default())]
        );
    }

    #[test]
    fn diagnoses_from_real_error_texts() {
        // research/agents.md §3.2 items 1 and 10; re-observed with 0.171.0.
        let lost = "WARNING: proceeding, even though we could not create PATH aliases\n\
                    Error: thread/resume: thread/resume failed: no rollout found for thread id \
                    11111111-2222-3333-4444-555555555555 (code -32600)\n\nStack backtrace:\n";
        assert_lost_on_resume(&Codex, lost, "Error: thread/resume");

        let untrusted = "Reading additional input from stdin...\n\
                         Not inside a trusted directory and --skip-git-repo-check was not specified.\n";
        let reason = "Not inside a trusted directory";
        assert_refused(&Codex, untrusted, reason, "-- --skip-git-repo-check");

        let busy = "Error: thread/resume: thread/resume failed: thread 0199 already has an \
                    active writer (code -32600)";
        assert_refused(&Codex, busy, "Error: thread/resume", "daemon stop");
        assert_eq!(Codex.diagnose(&Target::Resume(ID), "rate limited"), None);
    }

    #[test]
    fn the_exit_line_names_the_session() {
        // The 0.171.0 TUI after one turn and /quit (observed 2026-11-30, controls trimmed).
        let tail = "Token usage: total=15 input=10 output=5\r\nTo continue this session, \
                    run:\r\n  codex resume 01a22b18-fbd4-7793-b5e8-a63efda108c1\r\nOr run codex \
                    resume and select hello tui.\r\n";
        // The decoy: without a turn there is no rollout, and no resume line: nothing to pin.
        assert_exit_line(
            &Codex,
            tail,
            "01a22b18-fbd4-7793-b5e8-a63efda108c1",
            "Session ID: 01a22b18-d331-79d0-8c49-b2131cf4bd3e",
        );
    }

    #[test]
    fn rollouts_are_found_by_id_and_checked_against_the_directory() {
        let home = tempfile::tempdir().unwrap();
        let day = home.path().join("sessions/2026/11/30");
        std::fs::create_dir_all(&day).unwrap();
        let path = day.join(format!("rollout-2026-11-30T06-15-56-{ID}.jsonl"));
        std::fs::write(
            &path,
            format!(
                "{{\"type\":\"session_meta\",\"payload\":{{\"id\":\"{ID}\",\"cwd\":\"/home/u/proj\",\
                 \"originator\":\"codex_exec\"}}}}\n{{\"type\":\"turn_context\"}}\n"
            ),
        )
        .unwrap();
        let other = "01a22b18-0000-7000-8000-000000000000";
        std::fs::write(
            day.join(format!("rollout-2026-11-30T07-00-00-{other}.jsonl")),
            "junk",
        )
        .unwrap();

        assert_eq!(
            rollout(home.path(), Path::new("/home/u/proj"), ID),
            Some(path)
        );
        assert_eq!(
            rollout(home.path(), Path::new("/home/u/elsewhere"), ID),
            None
        );
        assert_eq!(rollout(home.path(), Path::new("/home/u/proj"), other), None);
        assert_eq!(
            rollout(home.path(), Path::new("/home/u/proj"), "../x"),
            None
        );
        assert_eq!(
            rollout(&home.path().join("missing"), Path::new("/home/u/proj"), ID),
            None
        );
    }
}
