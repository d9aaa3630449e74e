//! Gemini CLI (`gemini`), as of 0.61.0 (facts: shared/research/agents.md §3.3 and
//! real-agents-offline.md "Gemini CLI 0.61.0"; flags, events, error texts and the storage layout
//! re-observed with the real 0.61.0 against a mock model server).
//!
//! - new session: `--session-id <id>` (any `[A-Za-z0-9_-]+`; sticky mints a UUID v4); an ID
//!   already used in this project fails with rc 42 `Session ID "<id>" already exists`;
//! - resume: `--resume <id>`, only from the same project directory; an unknown ID fails with rc 42
//!   `Error resuming session: Invalid session identifier "<id>".`, another directory with rc 42
//!   `Error resuming session: No previous sessions found for this project.`;
//! - resume does not restore the model (`auto` again), so `-m` goes on every run;
//! - headless: `-p PROMPT -o stream-json`; with no `-p` and a piped stdin, stdin is the prompt,
//!   which is how prompts over 128 KiB get in, and also a prompt starting with `-`: yargs would
//!   read `-p -x` as two options, a positional after `--` is not taken as the prompt, and
//!   `--prompt=-x` works but slips past the trust check below (0.61.0's `isHeadlessMode` looks
//!   for a bare `-p`/`--prompt` argument, or a stdin or stdout that is not a terminal, or `CI`);
//! - headless runs need a trusted folder: otherwise rc 55 `Gemini CLI is not running in a trusted
//!   directory. To proceed, either use --skip-trust, ...`; sticky never passes `--skip-trust`;
//! - stream-json events (`packages/core/src/output/types.ts`): `init` (`session_id`, `model`),
//!   `message` (role user|assistant, content, `delta: true` for streamed pieces), `tool_use`,
//!   `tool_result`, `error` (severity warning|error), `result` (status, error, stats);
//! - interactive: on exit the UI prints `To resume this session: gemini --resume <id>` in a box,
//!   which wraps the ID to the next line at 80 columns; `/clear` starts a new session (a new ID
//!   and chat file), which that line then names;
//! - chats: `$GEMINI_CLI_HOME` (default the home directory)`/.gemini/tmp/<slug>/chats/
//!   session-<YYYY-MM-DDTHH-MM>-<first 8 chars of id>.jsonl`, first line
//!   `{"sessionId":…,"projectHash":…,"startTime":…}`; the slug is the project's entry in
//!   `.gemini/projects.json`, owned per `.gemini/tmp/<slug>/.project_root`. Every run first opens
//!   a file named for the current minute, so a resume in a later minute leaves a second file with
//!   the same ID holding only a header: the transcript is the one holding messages.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::flags::{CommandLine, Prompt};
use super::output::{
    env_dir, first_json_line, int_at, json_object, line_with, lost_on_resume, str_at,
};
use super::reserved::Reserved;
use super::{
    Adapter, Diagnosis, Event, Forking, Keeping, Profile, Prompts, SessionFile, Target, Usage,
};

/// The Gemini CLI adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gemini;

/// `--session-id`/`--resume`, then `-m`: the session's model on every run, since a resume does
/// not restore it. Gemini always accepts an ID chosen up front; sticky never asks it to mint one.
pub(super) const COMMAND_LINE: CommandLine = CommandLine {
    headless: &[],
    create: Some("--session-id"),
    resume: "--resume",
    model: "-m",
    output: &["-o", "stream-json"],
    prompt: Prompt::Flag("-p"),
    // No fork of its own (0.61.0): a fork is a copy of the session's files
    // (`Forking::Copy`).
    fork: None,
};

const PROFILE: Profile<'static> = Profile {
    name: "gemini",
    command_line: Some(&COMMAND_LINE),
    prompts: Prompts::PlainArguments,
    exit_line: Some(("gemini --resume ", is_session_id)),
    homes: &[HOME_VAR],
    reserved: Reserved {
        model: &["--model", "-m"],
        session: &["--resume", "-r", "--session-id", "--session-file"],
        output: &["--output-format", "-o"],
    },
};

impl Adapter for Gemini {
    fn profile(&self) -> Profile<'_> {
        PROFILE
    }

    fn parse_event(&self, event: &Value) -> Vec<Event> {
        let mut events = Vec::new();
        match str_at(event, "/type") {
            Some("init") => {
                if let Some(id) = str_at(event, "/session_id") {
                    events.push(Event::Session(id.to_owned()));
                }
                if let Some(model) = str_at(event, "/model") {
                    events.push(Event::Model(model.to_owned()));
                }
            }
            // The user's own prompt is echoed as a message too; only the assistant's count.
            Some("message") if str_at(event, "/role") == Some("assistant") => {
                if let Some(text) = str_at(event, "/content") {
                    let delta = event.get("delta").and_then(Value::as_bool) == Some(true);
                    events.push(if delta {
                        Event::TextDelta(text.to_owned())
                    } else {
                        Event::Text(text.to_owned())
                    });
                }
            }
            Some("tool_use") => {
                if let Some(tool) = str_at(event, "/tool_name") {
                    events.push(Event::Activity(tool.to_owned()));
                }
            }
            Some("result") => {
                let is_error = str_at(event, "/status") != Some("success");
                events.push(Event::Result {
                    text: str_at(event, "/error/message")
                        .filter(|_| is_error)
                        .map(str::to_owned),
                    is_error,
                    usage: Usage {
                        cost_usd: None,
                        // `input_tokens` already includes the cached part (`cached` + `input`).
                        input_tokens: int_at(event, "/stats/input_tokens"),
                        output_tokens: int_at(event, "/stats/output_tokens"),
                    },
                });
            }
            // `error` events are warnings or precede a failed `result`, which says it all.
            _ => {}
        }
        events
    }

    fn diagnose(&self, target: &Target<'_>, output: &str) -> Option<Diagnosis> {
        if let Some(reason) = line_with(output, "is not running in a trusted directory") {
            return Some(Diagnosis::Refused {
                reason,
                hint: "trust this folder in Gemini CLI (run `sticky -a gemini` here without a \
                       prompt), set GEMINI_CLI_TRUST_WORKSPACE=true, or lift the check for this \
                       turn with `-- --skip-trust`"
                    .into(),
            });
        }
        lost_on_resume(target, output, &["Error resuming session"])
    }

    fn transcript(&self, home: &Path, directory: &Path, id: &str) -> Option<PathBuf> {
        let home = env_dir(HOME_VAR).unwrap_or_else(|| home.to_owned());
        chat_file(&home.join(".gemini"), directory, id)
    }

    // `renamed` stays `false`: Gemini CLI keeps the ID it was given or resumed (`init` reports
    // it, and resumed turns are appended under the same `sessionId`), so no rename is known.

    /// No fork of its own, but Gemini CLI resumes a chat file by its header's `sessionId`: a copy under a new ID goes on
    /// with the whole history (tests/it/real/scenarios.rs).
    fn forking(&self) -> Forking {
        Forking::Copy
    }

    fn agent_home(&self, home: &Path) -> Option<PathBuf> {
        Some(gemini_dir(home))
    }

    /// The chat file (Gemini CLI rewrites its header as the session goes on), the project's
    /// ownership marker `.project_root`, and the registry `projects.json` that maps the
    /// directory to the project's slug (shared by every project).
    fn session_files(&self, home: &Path, directory: &Path, id: &str) -> Vec<SessionFile> {
        let root = gemini_dir(home);
        let Some(chat) = chat_file(&root, directory, id) else {
            return Vec::new();
        };
        let marker = chat
            .parent()
            .and_then(Path::parent)
            .map(|project| project.join(".project_root"));
        let registry = root.join("projects.json");
        [
            Some((chat, Keeping::Rewritten)),
            marker.map(|marker| (marker, Keeping::Rewritten)),
            Some((registry, Keeping::Shared)),
        ]
        .into_iter()
        .flatten()
        .filter_map(|(path, keeping)| SessionFile::under(&root, path, keeping))
        .collect()
    }

    /// A chat file's message records (`{"id", "type": "user" | "gemini", ...}`), by their IDs:
    /// Gemini CLI rewrites the file's header as the session goes on, but a message, once
    /// written, keeps its place and ID.
    fn record_ids(&self, relative: &Path, bytes: &[u8]) -> Option<Vec<String>> {
        let chat = relative.extension().is_some_and(|ext| ext == "jsonl")
            && relative.parent().and_then(Path::file_name) == Some(OsStr::new("chats"));
        if !chat {
            return None;
        }
        let ids = bytes
            .split(|b| *b == b'\n')
            .filter_map(|line| serde_json::from_slice::<serde_json::Value>(line).ok())
            .filter(|record| {
                matches!(
                    record.get("type").and_then(serde_json::Value::as_str),
                    Some("user" | "gemini")
                )
            })
            .filter_map(|record| Some(record.get("id")?.as_str()?.to_owned()))
            .collect();
        Some(ids)
    }

    /// The chat file (named for the ID's first 8 characters), its project's `.project_root`
    /// and the registry `projects.json`.
    fn restorable(&self, relative: &Path, id: &str) -> bool {
        let parts: Vec<&OsStr> = relative.iter().collect();
        let named = |name: &OsStr| {
            let name = name.to_string_lossy();
            is_session_id(id)
                && id.len() >= 8
                && name.starts_with("session-")
                && name.ends_with(&format!("-{}.jsonl", &id[..8]))
        };
        match parts.as_slice() {
            [registry] => *registry == "projects.json",
            [tmp, _, marker] => *tmp == "tmp" && *marker == ".project_root",
            [tmp, _, chats, chat] => *tmp == "tmp" && *chats == "chats" && named(chat),
            _ => false,
        }
    }
}

/// What Gemini CLI accepts as a session ID (`/^[a-zA-Z0-9-_]+$/`).
fn is_session_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The chat file of session `id` in project `directory` under `gemini_dir` (`~/.gemini`): the
/// project's slug from the registry, confirmed by its ownership marker, then the one file named
/// for the ID's first 8 characters whose header carries the ID and which holds messages. `None`
/// when any step is missing or more than one file qualifies: the path must be exact.
fn chat_file(gemini_dir: &Path, directory: &Path, id: &str) -> Option<PathBuf> {
    if !is_session_id(id) || id.len() < 8 {
        return None;
    }
    let registry: Value =
        serde_json::from_slice(&std::fs::read(gemini_dir.join("projects.json")).ok()?).ok()?;
    let slug = registry
        .get("projects")?
        .get(directory.to_str()?)?
        .as_str()?;
    if slug.is_empty() || slug.contains('/') || slug.starts_with('.') {
        return None;
    }
    let project = gemini_dir.join("tmp").join(slug);
    let owner = std::fs::read_to_string(project.join(".project_root")).ok()?;
    if Path::new(owner.trim()) != directory {
        return None;
    }
    let suffix = format!("-{}.jsonl", &id[..8]);
    let mut found = std::fs::read_dir(project.join("chats"))
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(OsStr::to_str)
                .is_some_and(|name| name.starts_with("session-") && name.ends_with(&suffix))
        })
        .filter(|path| {
            first_json_line(path).is_some_and(|header| str_at(&header, "/sessionId") == Some(id))
                && holds_messages(path)
        });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// Whether a chat file records a message of its own (a `user` or `gemini` record), not only
/// the header and `$set` snapshots every run starts with.
fn holds_messages(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .any(|line| {
            json_object(&line).is_some_and(|record| {
                record.get("id").is_some()
                    && matches!(str_at(&record, "/type"), Some("user" | "gemini"))
            })
        })
}

/// The variable that moves Gemini CLI's own home (`.gemini` under it, else under `HOME`).
const HOME_VAR: &str = "GEMINI_CLI_HOME";

/// Gemini CLI's own home: `.gemini` under `$GEMINI_CLI_HOME`, else under the user's home.
fn gemini_dir(home: &Path) -> PathBuf {
    env_dir(HOME_VAR)
        .unwrap_or_else(|| home.to_owned())
        .join(".gemini")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::output::{assert_exit_line, assert_lost_on_resume, assert_refused, events};

    const ID: &str = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";

    #[test]
    fn a_chat_files_messages_are_its_records_in_order_and_other_files_have_none() {
        let chat = Path::new("tmp/proj/chats/session-2026-12-07T18-00-1b07abcd.jsonl");
        let bytes = concat!(
            r#"{"sessionId":"1b07abcd","startTime":"t","kind":"main"}"#,
            "\n",
            r#"{"id":"m1","timestamp":"t","type":"user","content":[{"text":"one"}]}"#,
            "\n",
            r#"{"$set":{"lastUpdated":"t2"}}"#,
            "\n",
            r#"{"id":"m2","timestamp":"t","type":"gemini","content":"answer"}"#,
            "\nnot json\n",
        );
        assert_eq!(
            Gemini.record_ids(chat, bytes.as_bytes()),
            Some(vec!["m1".to_owned(), "m2".to_owned()])
        );
        assert_eq!(
            Gemini.record_ids(Path::new("tmp/proj/.project_root"), b"x"),
            None
        );
        assert_eq!(Gemini.record_ids(Path::new("projects.json"), b"{}"), None);
    }

    #[test]
    fn minted_ids_are_session_ids_gemini_takes() {
        assert!(Gemini.mint_id().is_some_and(|id| is_session_id(&id)));
    }

    #[test]
    fn stream_json_events() {
        // Real lines from gemini 0.61.0 against a mock (research/agents.md §3.3 item 7,
        // re-observed 2026-11-30), timestamps trimmed.
        let lines = [
            r#"{"type":"init","timestamp":"t","session_id":"3f2504e0-4f89-41d3-9a0c-0305e82c3301","model":"gemini-2.5-flash"}"#,
            r#"{"type":"message","timestamp":"t","role":"user","content":"-x"}"#,
            r#"{"type":"message","timestamp":"t","role":"assistant","content":"MOCK-10 ","delta":true}"#,
            r#"{"type":"message","timestamp":"t","role":"assistant","content":"user_msgs=1","delta":true}"#,
            r#"{"type":"tool_use","timestamp":"t","tool_name":"read_file","tool_id":"c1","parameters":{}}"#,
            r#"{"type":"result","timestamp":"t","status":"success","stats":{"total_tokens":15,"input_tokens":10,"output_tokens":5,"cached":0,"input":10,"duration_ms":147,"tool_calls":0}}"#,
        ];
        assert_eq!(
            events(&Gemini, &lines),
            [
                Event::Session(ID.into()),
                Event::Model("gemini-2.5-flash".into()),
                Event::TextDelta("MOCK-10 ".into()),
                Event::TextDelta("user_msgs=1".into()),
                Event::Activity("read_file".into()),
                Event::answered(
                    None,
                    Usage {
                        cost_usd: None,
                        input_tokens: Some(10),
                        output_tokens: Some(5),
                    }
                ),
            ]
        );
        let failed = r#"{"type":"result","timestamp":"t","status":"error","error":{"type":"FatalTurnLimitedError","message":"Reached max session turns"}}"#;
        assert_eq!(
            Gemini.parse_line(failed),
            [Event::failed(Some("Reached max session turns".into()))]
        );
        let whole = r#"{"type":"message","timestamp":"t","role":"assistant","content":"all"}"#;
        assert_eq!(Gemini.parse_line(whole), [Event::Text("all".into())]);
    }

    #[test]
    fn malformed_lines_give_no_events() {
        for line in [
            "",
            "Warning: 256-color support not detected.",
            "Ripgrep is not available. Falling back to GrepTool.",
            "{",
            "[1]",
            r#"{"type":"init","session_id":5}"#,
            r#"{"type":"message","role":"assistant"}"#,
            r#"{"type":"message","role":"user","content":"mine"}"#,
            r#"{"type":"error","severity":"warning","message":"slow"}"#,
            r#"{"type":"tool_use"}"#,
        ] {
            assert_eq!(Gemini.parse_line(line), [], "{line:?}");
        }
    }

    #[test]
    fn diagnoses_from_real_error_texts() {
        // research/agents.md §3.3 items 1, 8 and 10; re-observed with 0.61.0.
        let unknown = "Error resuming session: Invalid session identifier \"9999\".\n  Searched \
                       for sessions in /h/.gemini/tmp/proj/chats.\n  Use --list-sessions to see \
                       available sessions, then use --resume {number}, --resume {uuid}, or \
                       --resume latest.\n";
        let elsewhere = "Error resuming session: No previous sessions found for this project.";
        for (output, start) in [
            (
                unknown,
                "Error resuming session: Invalid session identifier",
            ),
            (elsewhere, "Error resuming session: No previous sessions"),
        ] {
            assert_lost_on_resume(&Gemini, output, start);
        }
        let untrusted = "Gemini CLI is not running in a trusted directory. To proceed, either use \
                         `--skip-trust`, set the `GEMINI_CLI_TRUST_WORKSPACE=true` environment \
                         variable, or trust this directory in interactive mode.";
        let reason = "Gemini CLI is not running in a trusted directory";
        assert_refused(&Gemini, untrusted, reason, "-- --skip-trust");
        assert_eq!(Gemini.diagnose(&Target::Resume(ID), "quota exceeded"), None);
    }

    #[test]
    fn the_exit_line_names_the_session() {
        // The 0.61.0 footer (`To resume this session: gemini --resume ${id}`, from the bundle).
        let tail = "\x1b[2K\r\nTo resume this session: gemini --resume 3f2504e0-4f89-41d3-9a0c-0305e82c3301\r\n";
        assert_exit_line(&Gemini, tail, ID, "bye");

        // What the real 0.61.0 drew at 80 columns after Ctrl-C twice (observed through sticky
        // on a pseudo-terminal, 2026-11-30): the message is in a box, coloured in pieces, and
        // the ID wraps to the next line.
        let boxed = "\x1b[38;5;244m│\x1b[39m  \x1b[38;5;74mTo\x1b[38;5;110m resume this \
                     s\x1b[38;5;104mes\x1b[38;5;140msion: ge\x1b[38;5;139mmini --r\x1b[38;5;175m\
                     esum\x1b[38;5;174me\x1b[39m                                     \
                     \x1b[38;5;244m│\x1b[39m\r\n\x1b[38;5;244m│\x1b[39m  \x1b[38;5;74m51\
                     \x1b[38;5;110m9f4433-8cf5-\x1b[38;5;104m4b\x1b[38;5;140me0-a784-\
                     \x1b[38;5;139m1b67590\x1b[38;5;175m18a3\x1b[38;5;174m3\x1b[39m                \
                     \x1b[38;5;244m│\x1b[39m\r\n\x1b[38;5;244m╰──────╯\x1b[39m\r\n";
        assert_eq!(
            Gemini.session_from_exit_output(boxed).as_deref(),
            Some("519f4433-8cf5-4be0-a784-1b6759018a33")
        );
    }

    /// A `.gemini` directory as 0.61.0 leaves it after a turn and a resume in a later minute.
    fn gemini_dir(project: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("projects.json"),
            format!("{{\"projects\":{{\"{project}\":\"proj\"}}}}"),
        )
        .unwrap();
        let chats = root.join("tmp/proj/chats");
        std::fs::create_dir_all(&chats).unwrap();
        std::fs::write(root.join("tmp/proj/.project_root"), project).unwrap();
        let header =
            format!("{{\"sessionId\":\"{ID}\",\"projectHash\":\"456e\",\"kind\":\"main\"}}\n");
        let context = "{\"$set\":{\"messages\":[{\"id\":\"d049\",\"type\":\"user\"}]}}\n";
        std::fs::write(
            chats.join("session-2026-11-30T06-17-3f2504e0.jsonl"),
            format!(
                "{header}{context}{{\"id\":\"96a0\",\"type\":\"user\",\"content\":[{{\"text\":\"-x\"}}]}}\n"
            ),
        )
        .unwrap();
        std::fs::write(
            chats.join("session-2026-11-30T06-18-3f2504e0.jsonl"),
            format!("{header}{context}"),
        )
        .unwrap();
        dir
    }

    #[test]
    fn the_chat_file_is_the_one_holding_messages() {
        let dir = gemini_dir("/home/u/proj");
        let chats = dir.path().join("tmp/proj/chats");
        assert_eq!(
            chat_file(dir.path(), Path::new("/home/u/proj"), ID),
            Some(chats.join("session-2026-11-30T06-17-3f2504e0.jsonl"))
        );
        assert_eq!(chat_file(dir.path(), Path::new("/home/u/other"), ID), None);
        assert_eq!(
            chat_file(dir.path(), Path::new("/home/u/proj"), "3f2504e0-other"),
            None
        );
        assert_eq!(
            chat_file(dir.path(), Path::new("/home/u/proj"), "../../x"),
            None
        );

        // Two files with messages for one ID: not exact, so no answer.
        std::fs::copy(
            chats.join("session-2026-11-30T06-17-3f2504e0.jsonl"),
            chats.join("session-2026-11-30T06-19-3f2504e0.jsonl"),
        )
        .unwrap();
        assert_eq!(chat_file(dir.path(), Path::new("/home/u/proj"), ID), None);
    }

    #[test]
    fn a_slug_owned_by_another_project_is_not_trusted() {
        let dir = gemini_dir("/home/u/proj");
        std::fs::write(dir.path().join("tmp/proj/.project_root"), "/home/v/proj").unwrap();
        assert_eq!(chat_file(dir.path(), Path::new("/home/u/proj"), ID), None);
    }
}
