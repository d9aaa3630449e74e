//! The last assistant message of a session as the agent's transcript holds it: the answer an
//! interactive turn keeps, since sticky only relays the agent's UI and sees no events.
//!
//! Per agent, from the transcript file `Adapter::transcript` finds:
//! - Claude Code (`~/.claude/projects/<dir>/<id>.jsonl`, agents.md 3.1 item 8): lines of
//!   `"type":"assistant"` whose `message.content` holds `text` blocks; the last such line's
//!   text is the last answer.
//! - Codex (the rollout `sessions/YYYY/MM/DD/rollout-...-<id>.jsonl`, agents.md 3.2 item 8):
//!   `response_item` lines whose payload is a `message` of role `assistant` with `output_text`
//!   parts.
//! - Gemini CLI (`~/.gemini/tmp/<slug>/chats/session-...jsonl`, agents.md 3.3 item 8): message
//!   records of `"type":"gemini"` whose `content` is the text, or a list of parts with `text`
//!   (`MessageRecord` of `packages/core/src/services/chatRecordingService.ts`).
//! - Qwen Code (`~/.qwen/projects/<cwd>/chats/<id>.jsonl`, agents.md 3.4 item 8): records of
//!   `"type":"assistant"` whose `message` holds `parts` with `text` (Gemini's `Content`) or,
//!   as Claude's, `content` blocks of type `text`.
//!
//! - Copilot CLI (`~/.copilot/session-state/<id>/events.jsonl`, agents.md 3.6): events of
//!   `"type":"assistant.message"` whose `data.content` is the text (empty when the message only
//!   requests tools), as its `--output-format json` prints them.
//!
//! opencode keeps its sessions in `SQLite`: its interactive turns keep no answer, which `show`
//! says.

use std::path::Path;

use serde_json::Value;

use super::output::json_object;

/// The most of a transcript read: a long session's file is read from its end only.
const TAIL: u64 = 4 * 1024 * 1024;

/// The last assistant message in the transcript at `path` of agent `agent`, if it can tell.
pub(super) fn last_in(agent: &str, path: &Path) -> Option<String> {
    let text = tail(path)?;
    let texts = |value: &Value, pointer: &str, kind: &str| -> Option<String> {
        let parts: Vec<&str> = value
            .pointer(pointer)?
            .as_array()?
            .iter()
            .filter(|part| part.get("type").and_then(Value::as_str) == Some(kind))
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n"))
    };
    text.lines().rev().filter_map(json_object).find_map(|line| {
        let kind = line.get("type").and_then(Value::as_str);
        match (agent, kind) {
            ("claude", Some("assistant")) => texts(&line, "/message/content", "text"),
            ("codex", Some("response_item"))
                if line.pointer("/payload/role").and_then(Value::as_str) == Some("assistant") =>
            {
                texts(&line, "/payload/content", "output_text")
            }
            ("gemini", Some("gemini")) => match line.get("content") {
                Some(Value::String(text)) if !text.is_empty() => Some(text.clone()),
                _ => parts(&line, "/content"),
            },
            ("copilot", Some("assistant.message")) => line
                .pointer("/data/content")
                .and_then(Value::as_str)
                .filter(|text| !text.is_empty())
                .map(str::to_owned),
            ("qwen", Some("assistant")) => {
                parts(&line, "/message/parts").or_else(|| texts(&line, "/message/content", "text"))
            }
            _ => None,
        }
    })
}

/// The `text` of the parts at `pointer` (Gemini's `Part` objects), joined; thoughts left out.
fn parts(value: &Value, pointer: &str) -> Option<String> {
    let texts: Vec<&str> = value
        .pointer(pointer)?
        .as_array()?
        .iter()
        .filter(|part| part.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    let text = texts.concat();
    (!text.is_empty()).then_some(text)
}

/// The last [`TAIL`] bytes of the file, from a line's start.
fn tail(path: &Path) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(size.saturating_sub(TAIL))).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if size > TAIL {
        // The first line may be cut: start after it.
        return text.split_once('\n').map(|(_, rest)| rest.to_owned());
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_assistant_message_of_a_transcript() {
        // (agent, the transcript's lines, its last answer)
        let cases: &[(&str, &[&str], Option<&str>)] = &[
            (
                "claude",
                &[
                    r#"{"type":"user","message":{"role":"user","content":"hi"}}"#,
                    r#"{"type":"assistant","message":{"content":[{"type":"text","text":"first"}]}}"#,
                    r#"{"type":"assistant","message":{"content":[{"type":"text","text":"last"},{"type":"tool_use","name":"Bash"}]}}"#,
                    r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash"}]}}"#,
                ],
                Some("last"),
            ),
            (
                "codex",
                &[
                    r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}"#,
                    r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]}}"#,
                ],
                Some("done"),
            ),
            (
                "gemini",
                &[
                    r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}"#,
                ],
                None,
            ),
            (
                "gemini",
                &[
                    r#"{"type":"gemini","content":"as text"}"#,
                    r#"{"type":"gemini","content":[{"text":"as ","thought":false},{"text":"parts"}]}"#,
                    r#"{"type":"user","content":"next"}"#,
                ],
                Some("as parts"),
            ),
            (
                "copilot",
                &[
                    r#"{"type":"assistant.message","data":{"content":"the answer","toolRequests":[]}}"#,
                    r#"{"type":"assistant.message","data":{"content":"","toolRequests":[{"name":"bash"}]}}"#,
                    r#"{"type":"assistant.turn_end","data":{"turnId":"0"}}"#,
                ],
                Some("the answer"),
            ),
            (
                "qwen",
                &[
                    r#"{"type":"assistant","message":{"role":"model","parts":[{"text":"from parts"}]}}"#,
                ],
                Some("from parts"),
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        let transcript = dir.path().join("transcript.jsonl");
        for (agent, lines, answer) in cases {
            std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
            assert_eq!(last_in(agent, &transcript).as_deref(), *answer, "{agent}");
        }
        assert_eq!(last_in("claude", &dir.path().join("none")), None);
    }
}
