//! Claude Code (`claude`), as of 2.1.332 (facts: shared/research/agents.md §3.1).
//!
//! - new session: `--session-id <fresh uuid v4>` (must be a UUID; reusing one in the same
//!   project directory fails with `Error: Session ID <id> is already in use.`);
//! - resume: `--resume <id>` (an unknown ID fails with rc 1 and
//!   `No conversation found with session ID: <id>` on stderr, stdout empty);
//! - headless: `-p --output-format stream-json --verbose` (stream-json without `--verbose` is
//!   refused); every event line carries `session_id`; the last is `{"type":"result",...}`;
//! - with `-p` and no prompt argument the prompt is read from stdin, which is how prompts over
//!   the 128 KiB argument limit get in;
//! - transcripts: `~/.claude/projects/<cwd with [^A-Za-z0-9] -> ->/<id>.jsonl`, where
//!   `CLAUDE_CONFIG_DIR` replaces `~/.claude`; every line carries `uuid` and `parentUuid`;
//! - interactive: `/exit` prints `Resume this session with:` / `claude --resume <id>`;
//! - releases 0.2.x to 2.0.x answered a resume under a new `session_id`, writing the conversation
//!   on in a new transcript (#1169, #4926, #10806); 2.1.332 keeps the ID.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::flags::{CommandLine, Fork, Prompt};
use super::output::{int_at, is_uuid, json_object, lost_on_resume, str_at, sum_at};
use super::reserved::Reserved;
use super::{Adapter, Diagnosis, Event, Keeping, Profile, Prompts, SessionFile, Target, Usage};

/// Claude Code's flags that choose a session (resume, continue, a chosen ID, a fork); Qwen Code
/// takes the same ones.
pub(super) const SESSION_FLAGS: &[&str] = &[
    "--resume",
    "-r",
    "--continue",
    "-c",
    "--session-id",
    "--fork-session",
];

/// The Claude Code adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Claude;

/// The variable that moves Claude Code's own home (`~/.claude`).
const CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";

/// `-p --output-format stream-json --verbose`, `--session-id`/`--resume`, `--model`, the user's
/// arguments, and the prompt after `--`, where one that starts with `-` is never taken for an
/// option. Claude always accepts an ID chosen up front; sticky never asks it to mint one.
const PROFILE: Profile<'static> = Profile {
    name: "claude",
    command_line: Some(&CommandLine {
        // `--resume ID --fork-session --session-id NEW` (forked custom IDs since 2.0.73).
        fork: Some(Fork {
            flag: "--fork-session",
            chosen_id: true,
        }),
        headless: &["-p", "--output-format", "stream-json", "--verbose"],
        create: Some("--session-id"),
        resume: "--resume",
        model: "--model",
        output: &[],
        prompt: Prompt::AfterDashes,
    }),
    prompts: Prompts::FittingArguments,
    exit_line: Some(("claude --resume ", is_uuid)),
    homes: &[CONFIG_DIR],
    reserved: Reserved {
        model: &["--model"],
        session: SESSION_FLAGS,
        output: &["--output-format"],
    },
};

impl Adapter for Claude {
    fn profile(&self) -> Profile<'_> {
        PROFILE
    }

    fn session_report_args(&self, report: &Path) -> Vec<OsString> {
        // A SessionStart hook gets {"session_id", "source": startup|resume|clear|compact, ...}
        // on stdin; appending it (plus a newline) to `report` tells sticky every session the
        // user was in, including the one `/clear` starts. `--settings` adds to the user's own
        // settings rather than replacing them.
        let quoted = shell_quote(&report.to_string_lossy());
        let command = format!("cat >> {quoted}; echo >> {quoted}");
        let settings = serde_json::json!({
            "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": command}]}]}
        });
        vec!["--settings".into(), settings.to_string().into()]
    }

    fn parse_event(&self, event: &Value) -> Vec<Event> {
        let mut events = Vec::new();
        if let Some(id) = event.get("session_id").and_then(Value::as_str) {
            events.push(Event::Session(id.to_owned()));
        }
        match event.get("type").and_then(Value::as_str) {
            Some("system") => {
                if let Some(model) = event.get("model").and_then(Value::as_str) {
                    events.push(Event::Model(model.to_owned()));
                }
            }
            Some("assistant") => {
                let blocks = event
                    .pointer("/message/content")
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice);
                for block in blocks {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(text) = block.get("text").and_then(Value::as_str) {
                                events.push(Event::Text(text.to_owned()));
                            }
                        }
                        Some("tool_use") => {
                            if let Some(name) = block.get("name").and_then(Value::as_str) {
                                events.push(Event::Activity(name.to_owned()));
                            }
                        }
                        Some("thinking") => events.push(Event::Activity("thinking".into())),
                        _ => {}
                    }
                }
            }
            Some("result") => events.push(Event::Result {
                text: event
                    .get("result")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                is_error: event
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                usage: usage(event),
            }),
            _ => {}
        }
        events
    }

    fn diagnose(&self, target: &Target<'_>, output: &str) -> Option<Diagnosis> {
        lost_on_resume(
            target,
            output,
            &[
                "No conversation found with session ID",
                "--resume requires a valid session ID",
            ],
        )
    }

    /// Claude Code takes and names its sessions by UUID only (`--session-id` must be one).
    fn transcript(&self, home: &Path, directory: &Path, id: &str) -> Option<PathBuf> {
        let config = super::output::env_dir(CONFIG_DIR).unwrap_or_else(|| home.join(".claude"));
        transcript_in(&config, directory, id)
    }

    /// The evidence: both transcripts are in the session's project directory, and the new one
    /// holds the old one's last message (by its `uuid`, copied or as the `parentUuid` the first
    /// new message hangs from), so the conversation went on under the new ID. This is what the
    /// releases that renamed on resume left behind (#4926: the new file was the old one's
    /// history plus the turn); a fresh session never references the old one's messages.
    fn renamed(&self, home: &Path, directory: &Path, expected: &str, actual: &str) -> bool {
        if !is_uuid(expected) || !is_uuid(actual) || expected == actual {
            return false;
        }
        let (Some(old), Some(new)) = (
            self.transcript(home, directory, expected),
            self.transcript(home, directory, actual),
        ) else {
            return false;
        };
        continues(&old, &new)
    }

    fn agent_home(&self, home: &Path) -> Option<PathBuf> {
        Some(config_dir(home))
    }

    /// The transcript and its sidecar directory (`<id>/`, the subagents' transcripts and the
    /// tool results kept aside), beside it in the project's directory.
    fn session_files(&self, home: &Path, directory: &Path, id: &str) -> Vec<SessionFile> {
        let root = config_dir(home);
        let Some(transcript) = transcript_in(&root, directory, id) else {
            return Vec::new();
        };
        let sidecar = transcript.with_extension("");
        let mut files: Vec<SessionFile> = SessionFile::under(&root, transcript, Keeping::Append)
            .into_iter()
            .collect();
        files.extend(SessionFile::all_under(&root, &sidecar, &appended_if_jsonl));
        files
    }

    /// `cleanupPeriodDays` in the agent home's `settings.json`, else its default of 30 days
    /// (Claude Code's settings schema: "sessions inactive for longer than this period are
    /// deleted at startup", minimum 1).
    fn retention_days(&self, home: &Path) -> Option<u64> {
        Some(cleanup_period_days(&config_dir(home).join("settings.json")))
    }
}

/// Whether transcript `new` holds the last message of transcript `old` (see
/// [`Claude::renamed`]).
fn continues(old: &Path, new: &Path) -> bool {
    let lines = |path: &Path| -> Vec<Value> {
        std::fs::File::open(path)
            .map(|file| {
                BufReader::new(file)
                    .lines()
                    .map_while(Result::ok)
                    .filter_map(|line| json_object(&line))
                    .collect()
            })
            .unwrap_or_default()
    };
    let Some(last) = lines(old)
        .iter()
        .rev()
        .filter(|line| matches!(str_at(line, "/type"), Some("user" | "assistant")))
        .find_map(|line| str_at(line, "/uuid").map(str::to_owned))
    else {
        return false;
    };
    lines(new).iter().any(|line| {
        str_at(line, "/uuid") == Some(last.as_str())
            || str_at(line, "/parentUuid") == Some(last.as_str())
    })
}

/// `text` as one single-quoted word for `sh`.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The prompt's tokens in a Claude usage object: new input, cache writes and cache reads,
/// which Claude counts apart.
pub(super) fn prompt_tokens(usage: &Value) -> Option<i64> {
    let parts = [
        "/input_tokens",
        "/cache_creation_input_tokens",
        "/cache_read_input_tokens",
    ];
    sum_at(usage, &parts)
}

fn usage(result: &Value) -> Usage {
    Usage {
        cost_usd: result.get("total_cost_usd").and_then(Value::as_f64),
        input_tokens: result.get("usage").and_then(prompt_tokens),
        output_tokens: int_at(result, "/usage/output_tokens"),
    }
}

/// `<config>/projects/<encoded directory>/<id>.jsonl`; `None` for an ID that is not a UUID
/// (Claude Code's only shape), so a planted ID such as `../../history` names no file of its.
fn transcript_in(config: &Path, directory: &Path, id: &str) -> Option<PathBuf> {
    is_uuid(id).then(|| {
        config
            .join("projects")
            .join(encode_project_dir(&directory.to_string_lossy()))
            .join(format!("{id}.jsonl"))
    })
}

/// Claude Code's directory name for a project: every character outside `[A-Za-z0-9]` becomes
/// `-`; a name over 200 characters is cut to 200 and gets `-` and a base-36 hash of the path
/// (from the 2.1.332 binary: `Math.abs(hash(cwd)).toString(36)`, JavaScript's 32-bit string
/// hash over UTF-16 units).
pub(super) fn encode_project_dir(path: &str) -> String {
    const LIMIT: usize = 200;
    let encoded: String = path
        .encode_utf16()
        .map(|unit| match char::from_u32(u32::from(unit)) {
            Some(c) if c.is_ascii_alphanumeric() => c,
            _ => '-',
        })
        .collect();
    if encoded.len() <= LIMIT {
        return encoded;
    }
    let hash = js_string_hash(path).unsigned_abs();
    format!("{}-{}", &encoded[..LIMIT], to_base36(hash))
}

/// JavaScript's usual 32-bit string hash: `h = (h << 5) - h + unit`, over UTF-16 units.
fn js_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |hash, unit| {
        hash.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

fn to_base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// Claude Code's own home: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn config_dir(home: &Path) -> PathBuf {
    super::output::env_dir(CONFIG_DIR).unwrap_or_else(|| home.join(".claude"))
}

/// Claude Code's default `cleanupPeriodDays`.
const DEFAULT_CLEANUP_DAYS: u64 = 30;

/// The `cleanupPeriodDays` of the settings file at `path`: its default when the file or the
/// key is missing or not a number, and at least 1 (the schema's minimum).
fn cleanup_period_days(path: &Path) -> u64 {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .and_then(|settings| settings.get("cleanupPeriodDays")?.as_f64())
        .filter(|days| days.is_finite() && *days >= 0.0)
        .map_or(DEFAULT_CLEANUP_DAYS, |days| {
            // Whole days; the schema allows no fraction worth keeping.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let days = days as u64;
            days.max(1)
        })
}

/// A JSONL file in a session's sidecar directory is a transcript (a subagent's), appended to;
/// anything else is a file the agent may rewrite.
pub(super) fn appended_if_jsonl(path: &Path) -> Keeping {
    if path.extension().is_some_and(|ext| ext == "jsonl") {
        Keeping::Append
    } else {
        Keeping::Rewritten
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::output::{assert_exit_line, assert_lost_on_resume};

    #[test]
    fn interactive_runs_report_their_sessions_through_a_hook() {
        let args = Claude.session_report_args(Path::new("/tmp/it's here/report"));
        assert_eq!(args[0], "--settings");
        let settings: Value = serde_json::from_str(args[1].to_str().unwrap()).unwrap();
        let command = settings
            .pointer("/hooks/SessionStart/0/hooks/0/command")
            .and_then(Value::as_str)
            .unwrap();
        assert_eq!(
            command,
            r"cat >> '/tmp/it'\''s here/report'; echo >> '/tmp/it'\''s here/report'"
        );
        let output = std::process::Command::new("sh")
            .args(["-c", &format!("printf %s {}", shell_quote("a'b $(x) `y`"))])
            .output()
            .unwrap();
        assert_eq!(output.stdout, b"a'b $(x) `y`");
    }

    #[test]
    fn stream_json_events() {
        // Trimmed real lines from Claude Code 2.1.332 (research/agents.md §3.1 item 7).
        let init = r#"{"type":"system","subtype":"init","cwd":"/home/u/proj","session_id":"1b07","tools":[],"model":"claude-sonnet-4-5","permissionMode":"default"}"#;
        assert_eq!(
            Claude.parse_line(init),
            [
                Event::Session("1b07".into()),
                Event::Model("claude-sonnet-4-5".into())
            ]
        );
        let assistant = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Hi"},{"type":"tool_use","name":"Bash","input":{}}]},"session_id":"1b07"}"#;
        assert_eq!(
            Claude.parse_line(assistant),
            [
                Event::Session("1b07".into()),
                Event::Text("Hi".into()),
                Event::Activity("Bash".into())
            ]
        );
        let result = r#"{"type":"result","subtype":"success","is_error":false,"session_id":"1b07","result":"Hello.","total_cost_usd":0.25,"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":3}}"#;
        assert_eq!(
            Claude.parse_line(result),
            [
                Event::Session("1b07".into()),
                Event::answered(
                    Some("Hello.".into()),
                    Usage {
                        cost_usd: Some(0.25),
                        input_tokens: Some(15),
                        output_tokens: Some(3)
                    }
                )
            ]
        );
    }

    #[test]
    fn malformed_lines_give_no_events() {
        for line in [
            "",
            "not json",
            "{",
            "[1,2]",
            "{\"type\":7}",
            "{\"session_id\":5}",
            "\u{0}\u{ffff}",
        ] {
            assert_eq!(Claude.parse_line(line), [], "{line:?}");
        }
    }

    #[test]
    fn a_forgotten_session_is_diagnosed_only_on_resume() {
        let output = "No conversation found with session ID: 1b07\n";
        assert_lost_on_resume(
            &Claude,
            output,
            "No conversation found with session ID: 1b07",
        );
        assert_eq!(
            Claude.diagnose(&Target::Resume("1b07"), "rate limited"),
            None
        );
    }

    #[test]
    fn transcripts_live_under_the_encoded_project_directory() {
        let id = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
        let path = transcript_in(Path::new("/h/.claude"), Path::new("/home/u/my_proj.v2"), id);
        assert_eq!(
            path,
            Some(PathBuf::from(format!(
                "/h/.claude/projects/-home-u-my-proj-v2/{id}.jsonl"
            )))
        );
        // An ID of another shape names no file: `../../history` would be `~/.claude/history.jsonl`.
        for planted in ["../../history", "id1", ""] {
            assert_eq!(
                transcript_in(Path::new("/h/.claude"), Path::new("/p"), planted),
                None,
                "{planted:?}"
            );
        }
        let long = format!("/{}", "a".repeat(250));
        let name = encode_project_dir(&long);
        let hash = to_base36(js_string_hash(&long).unsigned_abs());
        assert_eq!(name, format!("-{}-{hash}", "a".repeat(199)));
    }

    #[test]
    fn the_exit_line_names_the_session() {
        // real-agents-offline.md "Claude Code": `/exit` prints these two lines.
        let tail = "\x1b[?1049l\r\nResume this session with:\r\nclaude --resume \
                    1b079cd0-7281-4b1d-b9e8-5c209234b470\r\n";
        assert_exit_line(
            &Claude,
            tail,
            "1b079cd0-7281-4b1d-b9e8-5c209234b470",
            "claude --resume <id>",
        );
    }

    #[test]
    fn a_new_transcript_that_continues_the_old_one_is_a_rename() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new, fresh) = (
            dir.path().join("old.jsonl"),
            dir.path().join("new.jsonl"),
            dir.path().join("fresh.jsonl"),
        );
        std::fs::write(
            &old,
            "{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null}\n\
             {\"type\":\"assistant\",\"uuid\":\"a1\",\"parentUuid\":\"u1\"}\n\
             {\"type\":\"last-prompt\",\"uuid\":\"x\"}\n",
        )
        .unwrap();
        // Old releases: the new file hangs its first message from the old conversation's last.
        std::fs::write(
            &new,
            "{\"type\":\"user\",\"uuid\":\"u2\",\"parentUuid\":\"a1\"}\n",
        )
        .unwrap();
        std::fs::write(
            &fresh,
            "{\"type\":\"user\",\"uuid\":\"u9\",\"parentUuid\":null}\n",
        )
        .unwrap();
        assert!(continues(&old, &new));
        assert!(!continues(&old, &fresh));
        assert!(!continues(&fresh, &dir.path().join("missing.jsonl")));
        assert!(!Claude.renamed(dir.path(), dir.path(), "not-a-uuid", "x"));
    }

    #[test]
    fn the_javascript_hash_and_base36() {
        // Java/JavaScript: "hello".hashCode() == 99162322; overflow wraps to negative.
        assert_eq!(js_string_hash("hello"), 99_162_322);
        assert_eq!(js_string_hash("polygenelubricants"), i32::MIN);
        assert_eq!(to_base36(0), "0");
        assert_eq!(to_base36(35), "z");
        assert_eq!(to_base36(36 * 36 + 1), "101");
    }
}
