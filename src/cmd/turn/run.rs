//! A turn's run: the agent's command line for this turn, on a pseudo-terminal, headless (its
//! events parsed as they come) or interactive (relayed to the user's terminal).

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use super::{Begun, Context, MAX_AGENT_OUTPUT, Outcome, Prompt, Running};
use crate::agent::{self, Event, LineSplitter, PromptVia, Target};
use crate::cli::TurnArgs;
use crate::progress::Progress;
use crate::pty;
use crate::store::Store;

impl<'a> Running<'a> {
    pub(super) fn new(ctx: &'a Context, begun: &'a Begun, args: &'a TurnArgs) -> Self {
        let configured = ctx.settings.config.agent(begun.adapter.name());
        let mut extra_args: Vec<OsString> = configured
            .map(|settings| settings.args.iter().map(OsString::from).collect())
            .unwrap_or_default();
        extra_args.extend(args.agent_args.iter().cloned());
        Self {
            ctx,
            begun,
            extra_args,
        }
    }

    pub(super) fn target(&self) -> Target<'_> {
        match (&self.begun.target_id, self.begun.resume) {
            (Some(id), true) => Target::Resume(id),
            (Some(id), false) => Target::Create(id),
            (None, _) => Target::CreateUnnamed,
        }
    }

    pub(super) fn agent_turn(&self) -> agent::Turn<'_> {
        agent::Turn {
            target: self.target(),
            model: self.begun.session.model.as_deref(),
            extra_args: &self.extra_args,
        }
    }

    pub(super) fn spec(&self, args: Vec<OsString>, stdin: Option<Vec<u8>>) -> pty::Spec {
        let mut env = self.begun.adapter.env(&self.begun.session.directory);
        if let Some(settings) = self.ctx.settings.config.agent(self.begun.adapter.name()) {
            env.extend(settings.env.iter().map(|(k, v)| (k.into(), v.into())));
        }
        // Lets a nested sticky (an agent's tool calling sticky) tell it runs inside one.
        env.push(("STICKY_ACTIVE".into(), "1".into()));
        pty::Spec {
            program: self.begun.program.clone(),
            args,
            env,
            cwd: self.begun.session.directory.clone(),
            stdin,
        }
    }

    pub(super) fn headless(&self, store: &Store, prompt: &Prompt) -> Outcome {
        let adapter = self.begun.adapter;
        let turn = self.agent_turn();
        let (args, stdin) = match self.begun.prompt_via.unwrap_or(PromptVia::Argument) {
            PromptVia::Argument => {
                let text = OsString::from_vec(prompt.text.clone());
                (adapter.headless_args(&turn, Some(&text)), None)
            }
            PromptVia::Stdin => (
                adapter.headless_args(&turn, None),
                Some(prompt.text.clone()),
            ),
        };
        let progress = Progress::start(adapter.name(), self.ctx.quiet || self.ctx.json);
        let mut outcome = Outcome::default();
        let mut splitter = LineSplitter::default();
        let mut on_line = |line: &str| {
            let events = adapter.parse_line(line);
            if events.is_empty() {
                if outcome.agent_output.len() < MAX_AGENT_OUTPUT && !line.trim().is_empty() {
                    outcome.agent_output.push_str(line);
                    outcome.agent_output.push('\n');
                }
                return;
            }
            for event in events {
                match event {
                    Event::Session(id) => {
                        let differs = turn.target.expected_id().is_some_and(|want| want != id);
                        if outcome.reported.is_none() && turn.target.expected_id().is_none() {
                            // Rule 9: an ID the agent minted is stored the moment it appears.
                            outcome.store_error =
                                store.set_agent_session_id(self.begun.session.id, &id).err();
                        }
                        if outcome.reported.is_none() || differs {
                            outcome.reported = Some(id);
                        }
                    }
                    Event::Model(_) => {}
                    // The agent's words (a command it runs) on sticky's progress line.
                    Event::Activity(what) => progress.activity(&super::super::view::escape(&what)),
                    Event::Text(text) => {
                        if !outcome.text.is_empty() {
                            outcome.text.push('\n');
                        }
                        outcome.text.push_str(&text);
                    }
                    Event::TextDelta(piece) => outcome.text.push_str(&piece),
                    Event::Usage(usage) => outcome.usage.add(usage),
                    Event::Result {
                        text,
                        is_error,
                        usage,
                    } => {
                        outcome.answer = text;
                        outcome.is_error = is_error;
                        outcome.usage.add(usage);
                    }
                }
            }
        };
        let spec = self.spec(args, stdin);
        let result = pty::run_headless(&spec, &mut |chunk| splitter.push(chunk, &mut on_line));
        splitter.finish(&mut on_line);
        progress.finish();
        match result {
            Ok(finished) => outcome.finished = Some(finished),
            Err(error) => outcome.spawn_error = Some(error),
        }
        outcome
    }

    pub(super) fn interactive(&self) -> Outcome {
        let adapter = self.begun.adapter;
        let report = self.ctx.project.state.report(self.begun.turn_id);
        let mut args = adapter.interactive_args(&self.agent_turn());
        args.extend(adapter.session_report_args(&report));
        let mut outcome = Outcome::default();
        let mut tail = Vec::new();
        match pty::run_interactive(&self.spec(args, None)) {
            Ok((finished, output)) => {
                outcome.finished = Some(finished);
                super::super::view::relayed(output.last().copied());
                tail = output;
            }
            Err(error) => outcome.spawn_error = Some(error),
        }
        // The agent's hook is the reliable report; its exit line is the next best (Codex and
        // opencode name a session they created only there).
        outcome.followed = reported_sessions(&report)
            .pop()
            .or_else(|| adapter.session_from_exit_output(&String::from_utf8_lossy(&tail)));
        let _ = std::fs::remove_file(&report);
        outcome
    }
}

/// The session IDs an agent reported through its session hook (see
/// `Adapter::session_report_args`), in order.
fn reported_sessions(report: &std::path::Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(report) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|event| Some(event.get("session_id")?.as_str()?.to_owned()))
        .collect()
}
