//! Agent arguments that fight sticky's own: each adapter's profile lists, as data, the flags of
//! its agent that would choose another session, model or output format than the one sticky
//! passes, by what they choose.
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

/// The arguments of one agent that fight sticky's own, by what they choose. Each is a long flag
/// (`--model`, also refused as `--model=X`), a short one (`-m`, also as `-mX`), or a bare word
/// such as Codex's `resume` subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserved {
    /// The arguments that choose the model.
    pub model: &'static [&'static str],
    /// The arguments that choose the session (resume, continue, a chosen ID, a fork).
    pub session: &'static [&'static str],
    /// The arguments that choose the output format.
    pub output: &'static [&'static str],
}

impl Reserved {
    /// No reserved arguments (a user-defined agent's are unknown).
    pub const NONE: Self = Self {
        model: &[],
        session: &[],
        output: &[],
    };

    /// The first of `args` that fights one of these arguments, with what it chooses.
    pub fn find<'a>(&self, args: &'a [std::ffi::OsString]) -> Option<(&'a OsStr, Instead)> {
        let kinds = [
            (self.model, Instead::Model),
            (self.session, Instead::Session),
            (self.output, Instead::Output),
        ];
        args.iter().find_map(|arg| {
            kinds
                .iter()
                .find(|(flags, _)| flags.iter().any(|flag| matches(flag, arg)))
                .map(|&(_, instead)| (arg.as_os_str(), instead))
        })
    }
}

/// Whether the agent would read `given` as the reserved argument `flag`.
fn matches(flag: &str, given: &OsStr) -> bool {
    let given = given.as_encoded_bytes();
    let flag = flag.as_bytes();
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

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use crate::agent::{Adapter, Claude, Codex, Copilot, Gemini, Opencode, Qwen};

    /// The first of `args` (split at spaces) that `adapter` reserves and what it chooses, as
    /// `arg: What`; empty when there is none.
    fn first(adapter: &dyn Adapter, args: &str) -> String {
        let args: Vec<OsString> = args.split(' ').map(OsString::from).collect();
        let found = adapter.reserved_args().find(&args);
        found.map_or_else(String::new, |(arg, instead)| {
            format!("{}: {instead:?}", arg.to_string_lossy())
        })
    }

    #[test]
    fn long_short_and_attached_forms_are_found() {
        let cases: &[(&dyn Adapter, &str, &str)] = &[
            (&Claude, "--model=opus", "--model=opus: Model"),
            (&Claude, "--permission-mode plan -r x", "-r: Session"),
            (&Claude, "-c", "-c: Session"),
            (&Claude, "--output-format text", "--output-format: Output"),
            (&Claude, "--permission-mode acceptEdits", ""),
            (&Claude, "--models", ""),
            (&Codex, "resume --last", "resume: Session"),
            (&Codex, "-mo3", "-mo3: Model"),
            (&Codex, "-c model_reasoning_effort=high", ""),
            (&Gemini, "--resume=latest", "--resume=latest: Session"),
            (&Opencode, "-s ses_x", "-s: Session"),
            (
                &Copilot,
                "--allow-all-tools --continue",
                "--continue: Session",
            ),
        ];
        for &(adapter, args, want) in cases {
            assert_eq!(first(adapter, args), want, "{args:?}");
        }
    }

    /// The permission flags a CI user gives after `--` so the agent runs tools unasked are the
    /// agent's business, never refused (each was run through sticky by the real-agent tier's
    /// tool scenarios, or is the agent's documented alias of one that was).
    #[test]
    fn permission_flags_pass() {
        let cases: &[(&dyn Adapter, &str)] = &[
            (&Claude, "--permission-mode bypassPermissions"),
            (&Claude, "--dangerously-skip-permissions"),
            (&Claude, "--allowedTools Bash"),
            (&Codex, "--sandbox workspace-write"),
            (&Codex, "-s danger-full-access"),
            (&Codex, "--dangerously-bypass-approvals-and-sandbox"),
            (&Gemini, "--approval-mode yolo"),
            (&Gemini, "--yolo"),
            (&Gemini, "-y"),
            (&Qwen, "--approval-mode yolo"),
            (&Opencode, "--auto"),
            (&Copilot, "--allow-all-tools"),
            (&Copilot, "--yolo"),
        ];
        for &(adapter, args) in cases {
            assert_eq!(first(adapter, args), "", "{args:?}");
        }
    }
}
