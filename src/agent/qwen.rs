//! Qwen Code (`qwen`), as of 0.24.4, a fork of Gemini CLI (facts: shared/research/agents.md §3.4
//! and real-agents-offline.md "Qwen Code"; the headless docs bundled with the CLI,
//! `docs/users/features/headless.md`).
//!
//! - new session: `--session-id <uuid>` (must be a UUID; one already used, even archived, fails
//!   with rc 1 `Error: Session Id <id> already exists (active or archived).`);
//! - resume: `--resume <id>`, only from the same project directory; an unknown ID fails with rc 1
//!   and `No saved session found with ID <id>. ...` (`... with title "<id>".` on some paths);
//! - resume does not restore the model, so `-m` goes on every run;
//! - headless: the positional prompt is one-shot (`-p` is deprecated) with `-o stream-json`; with
//!   no prompt and a piped stdin, stdin is the prompt, which is how prompts over 128 KiB get in,
//!   and also a prompt starting with `-`: it would be read as an option and, as in Gemini CLI, a
//!   positional after `--` is not taken as the prompt;
//! - stream-json is Claude Code's format: `system` (`session_id`, `model`), `assistant` (content
//!   blocks), `result` (`result`, `is_error`, `usage`), so Claude's parser reads it;
//! - interactive: on exit the UI prints `To continue this session, run qwen --resume <id>`;
//! - transcripts: `<runtime dir>/projects/<cwd with [^A-Za-z0-9] -> ->/chats/<id>.jsonl`, where the
//!   runtime dir is `$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, else `~/.qwen`.

use std::path::{Path, PathBuf};

use super::flags::{CommandLine, Fork, Prompt};
use super::output::{env_dir, is_uuid, lost_on_resume};
use super::reserved::Reserved;
use super::{Adapter, Claude, Diagnosis, Event, Profile, Prompts, Target};

/// The Qwen Code adapter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Qwen;

/// The variables that move Qwen Code's runtime files (`~/.qwen`), the first one first.
const RUNTIME_DIR: &str = "QWEN_RUNTIME_DIR";
const HOME_VAR: &str = "QWEN_HOME";

/// Gemini CLI's command lines (`--session-id`/`--resume`, then `-m` on every run, since a resume
/// does not restore the model), with the prompt as a positional argument. Qwen always accepts an
/// ID chosen up front; sticky never asks it to mint one.
const PROFILE: Profile<'static> = Profile {
    name: "qwen",
    command_line: Some(&CommandLine {
        prompt: Prompt::Positional,
        // `--resume ID --fork-session`: Qwen Code mints the fork's ID (randomUUID) and refuses
        // `--session-id` beside `--resume`.
        fork: Some(Fork {
            flag: "--fork-session",
            chosen_id: false,
        }),
        ..super::gemini::COMMAND_LINE
    }),
    prompts: Prompts::PlainArguments,
    exit_line: Some(("qwen --resume ", is_uuid)),
    homes: &[RUNTIME_DIR, HOME_VAR],
    reserved: Reserved {
        model: &["--model", "-m"],
        session: super::claude::SESSION_FLAGS,
        output: &["--output-format", "-o"],
    },
};

impl Adapter for Qwen {
    fn profile(&self) -> Profile<'_> {
        PROFILE
    }

    fn parse_line(&self, line: &str) -> Vec<Event> {
        // Qwen Code writes Claude Code's stream-json on purpose (SDK compatibility).
        Claude.parse_line(line)
    }

    fn diagnose(&self, target: &Target<'_>, output: &str) -> Option<Diagnosis> {
        lost_on_resume(target, output, &["No saved session found"])
    }

    fn transcript(&self, home: &Path, directory: &Path, id: &str) -> Option<PathBuf> {
        let runtime = env_dir(RUNTIME_DIR)
            .or_else(|| env_dir(HOME_VAR))
            .unwrap_or_else(|| home.join(".qwen"));
        transcript_in(&runtime, directory, id)
    }

    // `renamed` stays `false`: Qwen Code reports the ID it was given or resumed on every event,
    // and no release is known to rename a resumed session.

    fn agent_home(&self, home: &Path) -> Option<PathBuf> {
        Some(
            env_dir(RUNTIME_DIR)
                .or_else(|| env_dir(HOME_VAR))
                .unwrap_or_else(|| home.join(".qwen")),
        )
    }

    // `session_files` is the default: the JSONL transcript, which Qwen Code appends to.
}

/// Qwen Code's directory name for a project (`sanitizeCwd`): every character outside
/// `[A-Za-z0-9]` becomes `-`.
pub(super) fn sanitize_cwd(directory: &str) -> String {
    directory
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// `<runtime>/projects/<sanitized directory>/chats/<id>.jsonl` ([`sanitize_cwd`]).
fn transcript_in(runtime: &Path, directory: &Path, id: &str) -> Option<PathBuf> {
    if !is_uuid(id) {
        return None;
    }
    Some(
        runtime
            .join("projects")
            .join(sanitize_cwd(directory.to_str()?))
            .join("chats")
            .join(format!("{id}.jsonl")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Usage;
    use crate::agent::output::{assert_exit_line, assert_lost_on_resume};

    const ID: &str = "cb43613f-2515-47c2-9835-a1d37bdefd8d";

    #[test]
    fn stream_json_events() {
        // Trimmed real lines from Qwen Code 0.24.4 (research/agents.md §3.4 item 7).
        let init = r#"{"type":"system","subtype":"init","uuid":"cb43613f","session_id":"cb43613f-2515-47c2-9835-a1d37bdefd8d","cwd":"/home/u/proj","tools":[],"model":"fake-model"}"#;
        assert_eq!(
            Qwen.parse_line(init),
            [Event::Session(ID.into()), Event::Model("fake-model".into())]
        );
        let result = r#"{"type":"result","subtype":"success","uuid":"u","session_id":"cb43613f-2515-47c2-9835-a1d37bdefd8d","is_error":false,"num_turns":1,"result":"Hello from fake server.","usage":{"input_tokens":7,"output_tokens":3}}"#;
        assert_eq!(
            Qwen.parse_line(result),
            [
                Event::Session(ID.into()),
                Event::answered(
                    Some("Hello from fake server.".into()),
                    Usage {
                        cost_usd: None,
                        input_tokens: Some(7),
                        output_tokens: Some(3),
                    }
                ),
            ]
        );
        for line in ["", "Ripgrep not available", "{", "[]", "{\"type\":1}"] {
            assert_eq!(Qwen.parse_line(line), [], "{line:?}");
        }
    }

    #[test]
    fn a_forgotten_session_is_diagnosed_only_on_resume() {
        // research/agents.md §3.4 item 10 and real-agents-offline.md (the title variant).
        for output in [
            "No saved session found with ID cb43613f. Run `qwen --resume` without an ID to \
             choose from existing sessions.",
            "No saved session found with title \"cb43613f\".",
        ] {
            assert_lost_on_resume(&Qwen, output, "No saved session");
        }
        assert_eq!(Qwen.diagnose(&Target::Resume(ID), "401 Unauthorized"), None);
    }

    #[test]
    fn the_exit_line_names_the_session() {
        // real-agents-offline.md "Qwen Code": Ctrl-C twice prints this line.
        let tail = "\r\nTo continue this session, run qwen --resume cb43613f-2515-47c2-9835-a1d37bdefd8d\r\n";
        assert_exit_line(&Qwen, tail, ID, "qwen --resume");
    }

    #[test]
    fn transcripts_live_under_the_sanitized_directory() {
        assert_eq!(
            transcript_in(Path::new("/h/.qwen"), Path::new("/home/u/my_proj.v2"), ID),
            Some(PathBuf::from(format!(
                "/h/.qwen/projects/-home-u-my-proj-v2/chats/{ID}.jsonl"
            )))
        );
        assert_eq!(
            transcript_in(Path::new("/h/.qwen"), Path::new("/p"), "../x"),
            None
        );
    }
}
