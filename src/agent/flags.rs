//! Command lines as data, for the agents whose command lines differ only in flag names.
//!
//! Claude Code, Gemini CLI, Qwen Code, Copilot CLI and opencode all take the same pieces in the
//! same order: a headless run's fixed arguments (`-p --output-format stream-json`), the session
//! (`--session-id <id>` to create, `--resume <id>` to resume), the model (`--model <m>`), the
//! output format, the user's arguments, and the prompt. Each adapter describes its spelling in
//! one [`CommandLine`] in its profile (`Adapter::command_line`), which the trait's default
//! methods follow; the order lives here once. Codex (`exec ... resume <id>`) and the user-defined agents (templates)
//! build theirs themselves.

use std::ffi::{OsStr, OsString};

use super::{Target, Turn};

/// How one agent spells its command lines.
#[derive(Debug, Clone, Copy)]
pub struct CommandLine {
    /// What a headless run starts with, before the session (`run --format json`).
    pub headless: &'static [&'static str],
    /// The flag that creates a session under an ID chosen up front (`--session-id`); `None`
    /// when the agent mints its IDs itself.
    pub create: Option<&'static str>,
    /// The flag that resumes a session (`--resume`, `-s`).
    pub resume: &'static str,
    /// The flag that chooses the model (`--model`, `-m`).
    pub model: &'static str,
    /// What a headless run adds after the session and the model, before the user's arguments
    /// (`-o stream-json`).
    pub output: &'static [&'static str],
    /// Where a headless run's prompt goes, when it is an argument.
    pub prompt: Prompt,
    /// How the agent forks a session it resumes (`--resume ID --fork-session`); `None` for an
    /// agent without a fork of its own.
    pub fork: Option<Fork>,
}

/// An agent's own fork, as a flag added to the resume of the source session.
#[derive(Debug, Clone, Copy)]
pub struct Fork {
    /// The flag (`--fork-session`, `--fork`).
    pub flag: &'static str,
    /// Whether the fork takes the ID sticky chose up front ([`CommandLine::create`] beside
    /// the resume, as Claude Code's does); otherwise the agent mints the fork's ID and reports
    /// it (Qwen Code refuses `--session-id` with `--resume`).
    pub chosen_id: bool,
}

/// Where a headless prompt goes on the command line.
#[derive(Debug, Clone, Copy)]
pub enum Prompt {
    /// Last, after `--`, so a prompt that starts with `-` is never taken for an option.
    AfterDashes,
    /// As the value of this flag (`-p`).
    Flag(&'static str),
    /// Last, on its own.
    Positional,
}

impl CommandLine {
    /// The session's flag and the model's: `--resume <id> --model <m>`.
    pub(super) fn session(&self, turn: &Turn<'_>) -> Vec<OsString> {
        let mut args = Vec::new();
        if let (Some(from), Some(fork)) = (turn.fork_from, self.fork) {
            push_flag(&mut args, self.resume, OsStr::new(from));
            args.push(fork.flag.into());
            if let (Target::Create(id), Some(create), true) =
                (turn.target, self.create, fork.chosen_id)
            {
                push_flag(&mut args, create, OsStr::new(id));
            }
            if let Some(model) = turn.model {
                push_flag(&mut args, self.model, OsStr::new(model));
            }
            return args;
        }
        match (turn.target, self.create) {
            (Target::Create(id), Some(create)) => push_flag(&mut args, create, OsStr::new(id)),
            (Target::Resume(id), _) => push_flag(&mut args, self.resume, OsStr::new(id)),
            // An agent that mints its own IDs is never given one, and an agent that takes one is
            // never asked to mint it (`Adapter::mint_id`): either way there is nothing to say.
            (Target::Create(_) | Target::CreateUnnamed, _) => {}
        }
        if let Some(model) = turn.model {
            push_flag(&mut args, self.model, OsStr::new(model));
        }
        args
    }

    /// A headless run's arguments; `prompt` is `None` when it goes on stdin.
    pub(super) fn headless(&self, turn: &Turn<'_>, prompt: Option<&OsStr>) -> Vec<OsString> {
        let mut args: Vec<OsString> = self.headless.iter().map(OsString::from).collect();
        args.extend(self.session(turn));
        args.extend(self.output.iter().map(OsString::from));
        args.extend(turn.extra_args.iter().cloned());
        match (prompt, self.prompt) {
            (None, _) => {}
            (Some(prompt), Prompt::AfterDashes) => args.extend(["--".into(), prompt.to_owned()]),
            (Some(prompt), Prompt::Flag(flag)) => push_flag(&mut args, flag, prompt),
            (Some(prompt), Prompt::Positional) => args.push(prompt.to_owned()),
        }
        args
    }

    /// An interactive run's arguments: the session, the model and the user's arguments.
    pub(super) fn interactive(&self, turn: &Turn<'_>) -> Vec<OsString> {
        let mut args = self.session(turn);
        args.extend(turn.extra_args.iter().cloned());
        args
    }
}

/// `flag value`, or `flagvalue` as one argument when the flag ends in `=` (`--resume=<id>`).
fn push_flag(args: &mut Vec<OsString>, flag: &str, value: &OsStr) {
    if flag.ends_with('=') {
        let mut joined = OsString::from(flag);
        joined.push(value);
        args.push(joined);
    } else {
        args.extend([flag.into(), value.to_owned()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::output::strings;

    const LINE: CommandLine = CommandLine {
        headless: &["run"],
        create: Some("--id"),
        resume: "--resume=",
        model: "-m",
        output: &["--json"],
        prompt: Prompt::Flag("--prompt="),
        fork: Some(Fork {
            flag: "--fork",
            chosen_id: true,
        }),
    };

    fn turn<'a>(target: Target<'a>, model: Option<&'a str>, extra: &'a [OsString]) -> Turn<'a> {
        Turn {
            target,
            model,
            extra_args: extra,
            fork_from: None,
        }
    }

    #[test]
    fn the_pieces_come_in_one_order() {
        let extra = [OsString::from("--yes")];
        let args = LINE.headless(
            &turn(Target::Create("u1"), Some("big"), &extra),
            Some(OsStr::new("-x")),
        );
        assert_eq!(
            strings(&args),
            [
                "run",
                "--id",
                "u1",
                "-m",
                "big",
                "--json",
                "--yes",
                "--prompt=-x"
            ]
        );
        let args = LINE.interactive(&turn(Target::Resume("u1"), None, &extra));
        assert_eq!(strings(&args), ["--resume=u1", "--yes"]);
    }

    #[test]
    fn prompts_go_where_the_agent_reads_them() {
        let resume = turn(Target::Resume("u1"), None, &[]);
        for (prompt, want) in [
            (Prompt::AfterDashes, &["--resume=u1", "--", "-x"][..]),
            (Prompt::Flag("-p"), &["--resume=u1", "-p", "-x"]),
            (Prompt::Positional, &["--resume=u1", "-x"]),
        ] {
            let line = CommandLine {
                headless: &[],
                output: &[],
                prompt,
                ..LINE
            };
            assert_eq!(
                strings(&line.headless(&resume, Some(OsStr::new("-x")))),
                want
            );
            assert_eq!(strings(&line.headless(&resume, None)), ["--resume=u1"]);
        }
    }

    #[test]
    fn a_fork_resumes_its_source_with_the_fork_flag() {
        let fork = |target, line: &CommandLine| {
            let turn = Turn {
                fork_from: Some("src"),
                ..turn(target, Some("big"), &[])
            };
            let args = line.headless(&turn, Some(OsStr::new("go")));
            strings(&args)
                .iter()
                .map(|arg| (*arg).to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            fork(Target::Create("u1"), &LINE),
            [
                "run",
                "--resume=src",
                "--fork",
                "--id",
                "u1",
                "-m",
                "big",
                "--json",
                "--prompt=go"
            ]
        );
        let minting = CommandLine {
            fork: Some(Fork {
                flag: "--fork",
                chosen_id: false,
            }),
            ..LINE
        };
        assert_eq!(
            fork(Target::CreateUnnamed, &minting),
            [
                "run",
                "--resume=src",
                "--fork",
                "-m",
                "big",
                "--json",
                "--prompt=go"
            ]
        );
    }

    #[test]
    fn an_agent_that_mints_its_ids_is_given_none() {
        let line = CommandLine {
            create: None,
            ..LINE
        };
        for target in [Target::Create("u1"), Target::CreateUnnamed] {
            assert!(line.session(&turn(target, None, &[])).is_empty());
        }
        assert!(
            LINE.session(&turn(Target::CreateUnnamed, None, &[]))
                .is_empty()
        );
    }
}
