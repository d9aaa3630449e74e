//! Agents the user defines in the configuration file, from argument templates.
//!
//! A user-defined agent says how to start a session, resume one and give a headless prompt,
//! with `{session_id}`, `{prompt}` and `{model}` placeholders, and where its session ID comes
//! from: chosen up front as a UUID, a field of its JSON output events, or a regular expression
//! over its output. Output lines that carry no ID are the answer.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use regex_lite::Regex;
use serde_json::Value;

use super::reserved::Reserved;
use super::{Adapter, Diagnosis, Event, Profile, Prompts, Target, Turn};
use crate::config::{AgentConfig, IdSource};

/// A user-defined agent.
#[derive(Debug)]
pub struct Custom {
    name: String,
    program: String,
    new: Vec<String>,
    resume: Vec<String>,
    headless: Vec<String>,
    interactive: Vec<String>,
    model: Vec<String>,
    id: Id,
    lost: Option<String>,
}

#[derive(Debug)]
enum Id {
    Uuid,
    Json(String),
    Regex(Regex),
}

impl Custom {
    /// Builds the agent `name` from its configuration, or says what is missing.
    pub fn new(name: &str, config: &AgentConfig) -> Result<Self, String> {
        let field = |value: &Option<Vec<String>>, key: &str| {
            value
                .clone()
                .ok_or_else(|| format!("agent `{name}` needs `{key}` (a list of arguments)"))
        };
        let resume = field(&config.resume, "resume")?;
        let headless = field(&config.headless, "headless")?;
        let id = match &config.session_id {
            None => {
                return Err(format!(
                    "agent `{name}` needs `session_id` (\"uuid\", {{ json = \"/field\" }} or {{ regex = \"...\" }})"
                ));
            }
            Some(IdSource::Uuid) => Id::Uuid,
            Some(IdSource::Json(field)) => Id::Json(field.clone()),
            Some(IdSource::Regex(pattern)) => {
                Id::Regex(Regex::new(pattern).map_err(|error| {
                    format!("agent `{name}`: invalid session_id regex: {error}")
                })?)
            }
        };
        let new = config.new.clone().unwrap_or_default();
        let mentions = |args: &[String], key: &str| args.iter().any(|arg| arg.contains(key));
        if !mentions(&resume, "{session_id}") {
            return Err(format!(
                "agent `{name}`: `resume` must contain {{session_id}}"
            ));
        }
        if !mentions(&headless, "{prompt}") {
            return Err(format!(
                "agent `{name}`: `headless` must contain {{prompt}}"
            ));
        }
        if matches!(id, Id::Uuid) && !mentions(&new, "{session_id}") {
            return Err(format!(
                "agent `{name}`: with session_id = \"uuid\", `new` must contain {{session_id}}"
            ));
        }
        let program = config
            .bin
            .as_deref()
            .map_or_else(|| name.to_owned(), |bin| bin.to_string_lossy().into_owned());
        Ok(Self {
            name: name.to_owned(),
            program,
            new,
            resume,
            headless,
            interactive: config.interactive.clone().unwrap_or_default(),
            model: config.model.clone().unwrap_or_default(),
            id,
            lost: config.lost.clone(),
        })
    }

    /// The session and model arguments of a run.
    fn session_args(&self, turn: &Turn<'_>, args: &mut Vec<OsString>) {
        let (template, id) = match turn.target {
            Target::Create(id) => (&self.new, Some(id)),
            Target::CreateUnnamed => (&self.new, None),
            Target::Resume(id) => (&self.resume, Some(id)),
        };
        let vars = Vars {
            session_id: id,
            model: turn.model,
            prompt: None,
        };
        args.extend(template.iter().map(|arg| vars.fill(arg)));
        if turn.model.is_some() {
            args.extend(self.model.iter().map(|arg| vars.fill(arg)));
        }
    }
}

/// The values of the placeholders.
struct Vars<'a> {
    session_id: Option<&'a str>,
    model: Option<&'a str>,
    prompt: Option<&'a OsStr>,
}

impl Vars<'_> {
    /// `template` with `{session_id}`, `{model}` and `{prompt}` replaced, bytes kept as they are.
    fn fill(&self, template: &str) -> OsString {
        let mut out = Vec::new();
        let mut rest = template;
        while let Some(start) = rest.find('{') {
            out.extend_from_slice(&rest.as_bytes()[..start]);
            let tail = &rest[start..];
            let value: Option<&[u8]> = if tail.starts_with("{session_id}") {
                Some(self.session_id.unwrap_or_default().as_bytes())
            } else if tail.starts_with("{model}") {
                Some(self.model.unwrap_or_default().as_bytes())
            } else if tail.starts_with("{prompt}") {
                Some(self.prompt.map_or(&[][..], OsStrExt::as_bytes))
            } else {
                None
            };
            if let Some(value) = value {
                out.extend_from_slice(value);
                rest = &tail[tail.find('}').map_or(tail.len(), |end| end + 1)..];
            } else {
                out.push(b'{');
                rest = &tail[1..];
            }
        }
        out.extend_from_slice(rest.as_bytes());
        OsString::from_vec(out)
    }
}

impl Adapter for Custom {
    fn profile(&self) -> Profile<'_> {
        Profile {
            name: &self.name,
            reserved: Reserved::NONE,
            command_line: None,
            // A template says where the prompt goes; there is no stdin form to fall back on.
            prompts: Prompts::AsArgument,
            exit_line: None,
            // sticky finds no files of a user-defined agent's.
            homes: &[],
        }
    }

    fn program(&self) -> &str {
        &self.program
    }

    fn mint_id(&self) -> Option<String> {
        matches!(self.id, Id::Uuid).then(super::fresh_uuid)
    }

    fn headless_args(&self, turn: &Turn<'_>, prompt: Option<&OsStr>) -> Vec<OsString> {
        let mut args = Vec::new();
        self.session_args(turn, &mut args);
        let vars = Vars {
            session_id: turn.target.expected_id(),
            model: turn.model,
            prompt,
        };
        args.extend(self.headless.iter().map(|arg| vars.fill(arg)));
        args.extend(turn.extra_args.iter().cloned());
        args
    }

    fn interactive_args(&self, turn: &Turn<'_>) -> Vec<OsString> {
        let mut args = Vec::new();
        self.session_args(turn, &mut args);
        let vars = Vars {
            session_id: turn.target.expected_id(),
            model: turn.model,
            prompt: None,
        };
        args.extend(self.interactive.iter().map(|arg| vars.fill(arg)));
        args.extend(turn.extra_args.iter().cloned());
        args
    }

    fn parse_line(&self, line: &str) -> Vec<Event> {
        match &self.id {
            Id::Json(field) => {
                let trimmed = line.trim();
                if trimmed.starts_with('{') {
                    if let Ok(event) = serde_json::from_str::<Value>(trimmed) {
                        let pointer = if field.starts_with('/') {
                            field.clone()
                        } else {
                            format!("/{field}")
                        };
                        return event
                            .pointer(&pointer)
                            .and_then(Value::as_str)
                            .map(|id| vec![Event::Session(id.to_owned())])
                            .unwrap_or_default();
                    }
                }
            }
            Id::Regex(regex) => {
                if let Some(found) = regex.captures(line) {
                    let id = found.get(1).or_else(|| found.get(0));
                    if let Some(id) = id {
                        return vec![Event::Session(id.as_str().to_owned())];
                    }
                }
            }
            Id::Uuid => {}
        }
        vec![Event::Text(line.to_owned())]
    }

    fn diagnose(&self, target: &Target<'_>, output: &str) -> Option<Diagnosis> {
        let (Target::Resume(_), Some(lost)) = (target, &self.lost) else {
            return None;
        };
        output
            .lines()
            .find(|line| line.contains(lost.as_str()))
            .map(|line| Diagnosis::SessionLost(line.trim().to_owned()))
    }

    fn transcript(&self, _home: &Path, _directory: &Path, _id: &str) -> Option<PathBuf> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::output::strings;
    use crate::config::Config;

    fn agent(toml: &str) -> Result<Custom, String> {
        let config = Config::parse(toml).unwrap();
        Custom::new("mine", config.agent("mine").unwrap())
    }

    const UUID_AGENT: &str = r#"
        [agents.mine]
        bin = "/opt/mine"
        new = ["--session-id", "{session_id}"]
        resume = ["--resume={session_id}"]
        headless = ["--print", "{prompt}"]
        interactive = ["--tui"]
        model = ["-m", "{model}"]
        session_id = "uuid"
        lost = "no such session"
    "#;

    #[test]
    fn templates_become_command_lines() {
        let mine = agent(UUID_AGENT).unwrap();
        assert_eq!(mine.program(), "/opt/mine");
        let extra = [OsString::from("--yes")];
        let turn = Turn {
            target: Target::Create("u1"),
            model: Some("big"),
            extra_args: &extra,
            fork_from: None,
        };
        assert_eq!(
            strings(&mine.headless_args(&turn, Some(OsStr::new("hi {there}")))),
            [
                "--session-id",
                "u1",
                "-m",
                "big",
                "--print",
                "hi {there}",
                "--yes"
            ]
        );
        let turn = Turn {
            target: Target::Resume("u1"),
            model: None,
            extra_args: &[],
            fork_from: None,
        };
        assert_eq!(
            strings(&mine.interactive_args(&turn)),
            ["--resume=u1", "--tui"]
        );
        assert!(mine.mint_id().is_some());
    }

    #[test]
    fn prompts_keep_their_bytes() {
        let vars = Vars {
            session_id: None,
            model: None,
            prompt: Some(OsStr::from_bytes(b"a\xffb")),
        };
        assert_eq!(vars.fill("<{prompt}>").as_bytes(), b"<a\xffb>");
        assert_eq!(vars.fill("{unknown}{").as_bytes(), b"{unknown}{");
    }

    #[test]
    fn ids_come_from_json_fields_or_regular_expressions() {
        let json = agent(
            "[agents.mine]\nresume = [\"-r\", \"{session_id}\"]\nheadless = [\"{prompt}\"]\nsession_id = { json = \"meta/id\" }",
        )
        .unwrap();
        assert_eq!(json.mint_id(), None);
        assert_eq!(
            json.parse_line(r#"{"meta":{"id":"s1"}}"#),
            [Event::Session("s1".into())]
        );
        assert_eq!(json.parse_line(r#"{"other":1}"#), []);
        assert_eq!(
            json.parse_line("plain answer"),
            [Event::Text("plain answer".into())]
        );
        let regex = agent(
            "[agents.mine]\nresume = [\"-r\", \"{session_id}\"]\nheadless = [\"{prompt}\"]\nsession_id = { regex = \"session: (\\\\w+)\" }",
        )
        .unwrap();
        assert_eq!(
            regex.parse_line("session: abc1"),
            [Event::Session("abc1".into())]
        );
        assert_eq!(regex.parse_line("answer"), [Event::Text("answer".into())]);
    }

    #[test]
    fn lost_sessions_are_diagnosed_from_the_configured_text() {
        let mine = agent(UUID_AGENT).unwrap();
        assert_eq!(
            mine.diagnose(&Target::Resume("u1"), "error: no such session u1\n"),
            Some(Diagnosis::SessionLost("error: no such session u1".into()))
        );
        assert_eq!(
            mine.diagnose(&Target::Create("u1"), "no such session"),
            None
        );
    }

    #[test]
    fn incomplete_definitions_say_what_is_missing() {
        let cases = [
            (
                "[agents.mine]\nheadless = [\"{prompt}\"]\nsession_id = \"uuid\"",
                "needs `resume`",
            ),
            (
                "[agents.mine]\nresume = [\"{session_id}\"]\nheadless = [\"x\"]\nsession_id = \"uuid\"",
                "must contain {prompt}",
            ),
            (
                "[agents.mine]\nresume = [\"{session_id}\"]\nheadless = [\"{prompt}\"]\nsession_id = \"uuid\"",
                "`new` must contain",
            ),
            (
                "[agents.mine]\nresume = [\"{session_id}\"]\nheadless = [\"{prompt}\"]",
                "needs `session_id`",
            ),
            (
                "[agents.mine]\nresume = [\"{session_id}\"]\nheadless = [\"{prompt}\"]\nsession_id = { regex = \"(\" }",
                "invalid session_id regex",
            ),
            (
                // regex-lite has no Unicode classes: refused with the same error.
                "[agents.mine]\nresume = [\"{session_id}\"]\nheadless = [\"{prompt}\"]\nsession_id = { regex = \"id: (\\\\p{L}+)\" }",
                "invalid session_id regex",
            ),
        ];
        for (toml, want) in cases {
            let error = agent(toml).unwrap_err();
            assert!(error.contains(want), "{toml}: {error}");
        }
    }
}
