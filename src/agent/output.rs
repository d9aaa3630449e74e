//! Reading what agents print, shared by the adapters: JSON event lines, IDs, and the line an
//! interactive UI prints when it exits (`codex resume <id>`).

use std::io::{BufRead, BufReader, Read as _};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::events::strip_controls;
use super::{Diagnosis, Target};

/// The JSON object in a line, if the line is one.
pub(super) fn json_object(line: &str) -> Option<Value> {
    let line = line.trim();
    if !line.starts_with('{') {
        return None;
    }
    serde_json::from_str::<Value>(line)
        .ok()
        .filter(Value::is_object)
}

/// The string at `pointer` (`/item/text`) in `value`, if there is one.
pub(super) fn str_at<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// The integer at `pointer` in `value`, if there is one.
pub(super) fn int_at(value: &Value, pointer: &str) -> Option<i64> {
    value.pointer(pointer).and_then(Value::as_i64)
}

/// The sum of the integers at `pointers` in `value`, or `None` when there is none of them.
pub(super) fn sum_at(value: &Value, pointers: &[&str]) -> Option<i64> {
    pointers
        .iter()
        .filter_map(|pointer| int_at(value, pointer))
        .reduce(|a, b| a + b)
}

/// Whether `text` is a UUID in the hyphenated form the agents print (`8-4-4-4-12` hex digits).
pub(super) fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The last session ID in `text` that follows `marker` (`codex resume `) and passes `valid`.
///
/// `text` is the terminal output of an interactive run: control sequences are removed line by
/// line first, and an ID the agent quoted for the shell (`'abc'`) is unquoted. The last match
/// wins because the exit line comes last; an earlier mention (a resume hint shown at start) must
/// not. When nothing but a box's border follows the marker, the ID is the first word of the
/// next line: Gemini CLI 0.61.0 draws its exit message in a box, and at 80 columns
/// `To resume this session: gemini --resume <id>` wraps before the ID.
pub(super) fn id_after(text: &str, marker: &str, valid: fn(&str) -> bool) -> Option<String> {
    let lines: Vec<String> = text.lines().map(strip_controls).collect();
    let mut found = None;
    for (index, line) in lines.iter().enumerate() {
        let mut rest = line.as_str();
        while let Some(at) = rest.find(marker) {
            rest = &rest[at + marker.len()..];
            let token = first_word(rest)
                .or_else(|| lines.get(index + 1).and_then(|next| first_word(next)))
                .unwrap_or_default();
            let token = token.trim_matches(|c| c == '\'' || c == '"');
            if valid(token) {
                found = Some(token.to_owned());
            }
        }
    }
    found
}

/// The first word of `text`, where a box's vertical border (`│`) separates words like a space.
fn first_word(text: &str) -> Option<&str> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '│' | '┃' | '║'))
        .find(|word| !word.is_empty())
}

/// The first line of `output` that holds `needle`, trimmed.
pub(super) fn line_with(output: &str, needle: &str) -> Option<String> {
    output
        .lines()
        .find(|line| line.contains(needle))
        .map(|line| line.trim().to_owned())
}

/// A lost session when sticky resumed one and a line of `output` holds one of `markers` (the
/// agent's words for a session it does not know); that line is the reason.
pub(super) fn lost_on_resume(
    target: &Target<'_>,
    output: &str,
    markers: &[&str],
) -> Option<Diagnosis> {
    let Target::Resume(_) = target else {
        return None;
    };
    output
        .lines()
        .find(|line| markers.iter().any(|marker| line.contains(marker)))
        .map(|line| Diagnosis::SessionLost(line.trim().to_owned()))
}

/// The first line of the file at `path` as a JSON object, if it is one.
pub(super) fn first_json_line(path: &Path) -> Option<Value> {
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    // A header line is short; a file that is not one of the agent's transcripts may not be, so
    // the read is bounded.
    BufReader::new(file)
        .take(1024 * 1024)
        .read_line(&mut line)
        .ok()?;
    json_object(&line)
}

/// An environment variable that names a directory, when set and not empty.
pub(super) fn env_dir(name: &str) -> Option<PathBuf> {
    crate::settings::env::dir(name)
}

/// Checks that `adapter` reads `output` as a lost session when it resumes one, with the line
/// that starts with `reason` as the reason, and as nothing wrong when it starts a session.
#[cfg(test)]
#[track_caller]
pub(super) fn assert_lost_on_resume(adapter: &dyn super::Adapter, output: &str, reason: &str) {
    let resumed = adapter.diagnose(&Target::Resume("u1"), output);
    assert!(
        matches!(&resumed, Some(Diagnosis::SessionLost(line)) if line.starts_with(reason)),
        "{resumed:?}"
    );
    for new in [Target::Create("u1"), Target::CreateUnnamed] {
        assert_eq!(adapter.diagnose(&new, output), None, "{new:?}");
    }
}

/// Checks that `adapter` reads `output` as a refusal whatever the session, with the line that
/// starts with `reason` as the reason and a hint that holds `way_out`.
#[cfg(test)]
#[track_caller]
pub(super) fn assert_refused(
    adapter: &dyn super::Adapter,
    output: &str,
    reason: &str,
    way_out: &str,
) {
    for target in [
        Target::Create("u1"),
        Target::CreateUnnamed,
        Target::Resume("u1"),
    ] {
        let Some(Diagnosis::Refused { reason: line, hint }) = adapter.diagnose(&target, output)
        else {
            panic!("not a refusal on {target:?}")
        };
        assert!(line.starts_with(reason), "{line}");
        assert!(hint.contains(way_out), "{hint}");
    }
}

/// Checks that `adapter` reads session `id` from `tail`, the end of an interactive run's
/// terminal output, and no ID from `decoy`, a mention of the command that is not an exit line.
#[cfg(test)]
#[track_caller]
pub(super) fn assert_exit_line(adapter: &dyn super::Adapter, tail: &str, id: &str, decoy: &str) {
    assert_eq!(adapter.session_from_exit_output(tail).as_deref(), Some(id));
    assert_eq!(adapter.session_from_exit_output(decoy), None, "{decoy:?}");
}

/// The arguments of a headless turn of `adapter` on `target` with `model`, the user's `extra`
/// arguments and `prompt` (`None`: on stdin), as one [`line`].
#[cfg(test)]
pub(super) fn headless(
    adapter: &dyn super::Adapter,
    target: super::Target<'_>,
    (model, extra): (Option<&str>, &[std::ffi::OsString]),
    prompt: Option<&str>,
) -> String {
    let turn = super::Turn {
        target,
        model,
        extra_args: extra,
        fork_from: None,
    };
    line(&adapter.headless_args(&turn, prompt.map(std::ffi::OsStr::new)))
}

/// The arguments of an interactive run of `adapter` on `target` with `model`, as one [`line`].
#[cfg(test)]
pub(super) fn interactive(
    adapter: &dyn super::Adapter,
    target: super::Target<'_>,
    model: Option<&str>,
) -> String {
    let turn = super::Turn {
        target,
        model,
        extra_args: &[],
        fork_from: None,
    };
    line(&adapter.interactive_args(&turn))
}

/// Arguments as one line of text, the way a shell takes them: one with a space is quoted.
#[cfg(test)]
pub(super) fn line(args: &[std::ffi::OsString]) -> String {
    let quoted = |arg: &&str| {
        if arg.contains(' ') {
            format!("'{arg}'")
        } else {
            (*arg).to_owned()
        }
    };
    strings(args)
        .iter()
        .map(quoted)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The events `adapter` parses from `lines`, in order.
#[cfg(test)]
pub(super) fn events(adapter: &dyn super::Adapter, lines: &[&str]) -> Vec<super::Event> {
    lines
        .iter()
        .flat_map(|line| adapter.parse_line(line))
        .collect()
}

/// Arguments as text, for comparing command lines in tests.
#[cfg(test)]
pub(super) fn strings(args: &[std::ffi::OsString]) -> Vec<&str> {
    args.iter()
        .map(|arg| arg.to_str().expect("a test's arguments are UTF-8"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_recognised_by_shape() {
        assert!(is_uuid("01a22acd-8f40-7f43-9d2e-012c67511e40"));
        assert!(is_uuid("3F2504E0-4F89-41D3-9A0C-0305E82C3301"));
        for not in [
            "",
            "ses_dd52be6f3ffevLdNHDvUF3i1Hh",
            "01a22acd-8f40-7f43-9d2e-012c67511e4",
            "01a22acd-8f40-7f43-9d2e-012c67511e40-",
            "01a22acd-8f40-7f43-9d2e-012c67511e4g",
            "01a22acd8f407f439d2e012c67511e40",
        ] {
            assert!(!is_uuid(not), "{not:?}");
        }
    }

    #[test]
    fn the_last_valid_id_after_the_marker_wins() {
        let text = "\x1b[2Jhint: codex resume 11111111-2222-3333-4444-555555555555\r\n\
                    Or run codex resume and select it.\r\n\
                    To continue this session, run:\r\n  \x1b[1mcodex resume\x1b[0m \
                    01a22b18-fbd4-7793-b5e8-a63efda108c1\r\n\x1b[?25h";
        assert_eq!(
            id_after(text, "codex resume ", is_uuid).as_deref(),
            Some("01a22b18-fbd4-7793-b5e8-a63efda108c1")
        );
        assert_eq!(
            id_after("gemini --resume 'my_id-1'", "gemini --resume ", |id| !id
                .is_empty())
            .as_deref(),
            Some("my_id-1")
        );
        assert_eq!(
            id_after("codex resume nothing", "codex resume ", is_uuid),
            None
        );
        assert_eq!(id_after("", "codex resume ", is_uuid), None);
    }

    #[test]
    fn an_id_wrapped_inside_a_box_is_found_on_the_next_line() {
        let boxed = "│  To resume this session: gemini --resume                 │\r\n\
                     │  795b7fe6-70a3-407a-b476-2003adccee6c                    │\r\n\
                     ╰──────────────────────────────────────────────────────────╯\r\n";
        assert_eq!(
            id_after(boxed, "gemini --resume ", is_uuid).as_deref(),
            Some("795b7fe6-70a3-407a-b476-2003adccee6c")
        );
        // Only when the marker's line holds nothing else: a word there is the ID or nothing.
        let other = "gemini --resume later\n795b7fe6-70a3-407a-b476-2003adccee6c\n";
        assert_eq!(id_after(other, "gemini --resume ", is_uuid), None);
        assert_eq!(
            id_after("gemini --resume \n│  │\n", "gemini --resume ", is_uuid),
            None
        );
    }

    #[test]
    fn json_objects_only() {
        assert!(json_object(" {\"a\":1} ").is_some());
        for line in ["", "[1]", "{", "\"x\"", "null", "{\"a\":1} trailing"] {
            assert!(json_object(line).is_none(), "{line:?}");
        }
    }
}
