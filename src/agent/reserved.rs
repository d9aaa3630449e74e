//! Agent arguments that fight sticky's own: each adapter lists, as data, the flags of its agent
//! that would choose another session, model or output format than the one sticky passes.
//!
//! `sticky -- --resume X` would make the agent answer from a session sticky did not choose
//! (amnesia, or a session sticky never records); `-- --output-format text` would hide the events
//! sticky reads the session ID from. They are refused before anything runs, with the sticky
//! flag that does the job.

use std::ffi::OsStr;

/// What a reserved flag of an agent chooses, and so which of sticky's options replaces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instead {
    /// The model: sticky's `--model`.
    Model,
    /// The session (resume, continue, a chosen ID, a fork): sticky's threads and `sticky new`.
    Session,
    /// The output format sticky reads: sticky's `--json`.
    Output,
}

impl Instead {
    /// The way out, as a phrase for an error message.
    pub fn advice(self) -> &'static str {
        match self {
            Self::Model => "use sticky's own `--model MODEL` (`-m`), given before `--`",
            Self::Session => {
                "sticky chooses the session itself: use `-t NAME` for another conversation or \
                 `sticky new` for a fresh session"
            }
            Self::Output => {
                "sticky chooses the agent's output format to read its events; use sticky's own \
                 `--json` for JSON"
            }
        }
    }
}

/// One reserved argument: a long flag (`--model`, also refused as `--model=X`), a short one
/// (`-m`, also as `-mX`), or a bare word such as Codex's `resume` subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserved {
    /// The flag or word as the agent spells it.
    pub arg: &'static str,
    /// What it chooses.
    pub instead: Instead,
}

impl Reserved {
    /// A reserved argument.
    pub const fn new(arg: &'static str, instead: Instead) -> Self {
        Self { arg, instead }
    }

    /// Whether the agent would read `given` as this argument.
    pub fn matches(&self, given: &OsStr) -> bool {
        let given = given.as_encoded_bytes();
        let flag = self.arg.as_bytes();
        if given == flag {
            return true;
        }
        if flag.starts_with(b"--") {
            given.starts_with(flag) && given.get(flag.len()) == Some(&b'=')
        } else if flag.len() == 2 && flag[0] == b'-' {
            // `-mX` and `-m=X` are `-m X` to a clap- or yargs-style parser; text with spaces
            // is a value of another flag (`--append-system-prompt "-c is fine"`).
            given.len() > 2
                && given.starts_with(flag)
                && !given.starts_with(b"--")
                && !given.iter().any(u8::is_ascii_whitespace)
        } else {
            false
        }
    }
}

/// The first of `args` that fights one of `reserved`, with what it fights.
pub fn find<'a>(
    reserved: &[Reserved],
    args: &'a [std::ffi::OsString],
) -> Option<(&'a OsStr, Reserved)> {
    args.iter().find_map(|arg| {
        reserved
            .iter()
            .find(|r| r.matches(arg))
            .map(|r| (arg.as_os_str(), *r))
    })
}

/// The flags of Claude Code that choose a model, a session or the output format.
pub const CLAUDE: &[Reserved] = &[
    Reserved::new("--model", Instead::Model),
    Reserved::new("--resume", Instead::Session),
    Reserved::new("-r", Instead::Session),
    Reserved::new("--continue", Instead::Session),
    Reserved::new("-c", Instead::Session),
    Reserved::new("--session-id", Instead::Session),
    Reserved::new("--fork-session", Instead::Session),
    Reserved::new("--output-format", Instead::Output),
];

/// Codex's (`-c` there is a configuration override, not "continue").
pub const CODEX: &[Reserved] = &[
    Reserved::new("--model", Instead::Model),
    Reserved::new("-m", Instead::Model),
    Reserved::new("resume", Instead::Session),
    Reserved::new("--last", Instead::Session),
];

/// Gemini CLI's.
pub const GEMINI: &[Reserved] = &[
    Reserved::new("--model", Instead::Model),
    Reserved::new("-m", Instead::Model),
    Reserved::new("--resume", Instead::Session),
    Reserved::new("-r", Instead::Session),
    Reserved::new("--session-id", Instead::Session),
    Reserved::new("--session-file", Instead::Session),
    Reserved::new("--output-format", Instead::Output),
    Reserved::new("-o", Instead::Output),
];

/// Qwen Code's.
pub const QWEN: &[Reserved] = &[
    Reserved::new("--model", Instead::Model),
    Reserved::new("-m", Instead::Model),
    Reserved::new("--resume", Instead::Session),
    Reserved::new("-r", Instead::Session),
    Reserved::new("--continue", Instead::Session),
    Reserved::new("-c", Instead::Session),
    Reserved::new("--session-id", Instead::Session),
    Reserved::new("--fork-session", Instead::Session),
    Reserved::new("--output-format", Instead::Output),
    Reserved::new("-o", Instead::Output),
];

/// opencode's.
pub const OPENCODE: &[Reserved] = &[
    Reserved::new("--model", Instead::Model),
    Reserved::new("-m", Instead::Model),
    Reserved::new("--session", Instead::Session),
    Reserved::new("-s", Instead::Session),
    Reserved::new("--continue", Instead::Session),
    Reserved::new("-c", Instead::Session),
    Reserved::new("--fork", Instead::Session),
    Reserved::new("--format", Instead::Output),
];

/// Copilot CLI's.
pub const COPILOT: &[Reserved] = &[
    Reserved::new("--model", Instead::Model),
    Reserved::new("--resume", Instead::Session),
    Reserved::new("-r", Instead::Session),
    Reserved::new("--continue", Instead::Session),
    Reserved::new("--session-id", Instead::Session),
    Reserved::new("--output-format", Instead::Output),
];

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    fn first(reserved: &[Reserved], args: &[&str]) -> Option<(String, Instead)> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        find(reserved, &args).map(|(arg, r)| (arg.to_string_lossy().into_owned(), r.instead))
    }

    #[test]
    fn long_short_and_attached_forms_are_found() {
        type Case = (
            &'static [Reserved],
            &'static [&'static str],
            Option<(&'static str, Instead)>,
        );
        let cases: &[Case] = &[
            (
                CLAUDE,
                &["--model=opus"],
                Some(("--model=opus", Instead::Model)),
            ),
            (
                CLAUDE,
                &["--permission-mode", "plan", "-r", "x"],
                Some(("-r", Instead::Session)),
            ),
            (CLAUDE, &["-c"], Some(("-c", Instead::Session))),
            (
                CLAUDE,
                &["--output-format", "text"],
                Some(("--output-format", Instead::Output)),
            ),
            (CLAUDE, &["--permission-mode", "acceptEdits"], None),
            (CLAUDE, &["--models"], None),
            (
                CODEX,
                &["resume", "--last"],
                Some(("resume", Instead::Session)),
            ),
            (CODEX, &["-mo3"], Some(("-mo3", Instead::Model))),
            (CODEX, &["-c", "model_reasoning_effort=high"], None),
            (
                GEMINI,
                &["--resume=latest"],
                Some(("--resume=latest", Instead::Session)),
            ),
            (OPENCODE, &["-s", "ses_x"], Some(("-s", Instead::Session))),
            (
                COPILOT,
                &["--allow-all-tools", "--continue"],
                Some(("--continue", Instead::Session)),
            ),
        ];
        for (reserved, args, want) in cases {
            let want = want.map(|(arg, instead)| (arg.to_owned(), instead));
            assert_eq!(first(reserved, args), want, "{args:?}");
        }
    }

    /// The permission flags a CI user gives after `--` so the agent runs tools unasked are the
    /// agent's business, never refused (each was run through sticky by the real-agent tier's
    /// tool scenarios, or is the agent's documented alias of one that was).
    #[test]
    fn permission_flags_pass() {
        let cases: &[(&[Reserved], &[&str])] = &[
            (CLAUDE, &["--permission-mode", "bypassPermissions"]),
            (CLAUDE, &["--dangerously-skip-permissions"]),
            (CLAUDE, &["--allowedTools", "Bash"]),
            (CODEX, &["--sandbox", "workspace-write"]),
            (CODEX, &["-s", "danger-full-access"]),
            (CODEX, &["--dangerously-bypass-approvals-and-sandbox"]),
            (GEMINI, &["--approval-mode", "yolo"]),
            (GEMINI, &["--yolo"]),
            (GEMINI, &["-y"]),
            (QWEN, &["--approval-mode", "yolo"]),
            (OPENCODE, &["--auto"]),
            (COPILOT, &["--allow-all-tools"]),
            (COPILOT, &["--yolo"]),
        ];
        for (reserved, args) in cases {
            assert_eq!(first(reserved, args), None, "{args:?}");
        }
    }
}
