//! A turn's run: [`Running`], the turn between its start and its end; the agent's command line
//! for this turn, on a pseudo-terminal, headless (its events folded into [`Observed`] as they
//! come) or interactive (relayed to the user's terminal), ending in an [`Outcome`]; and the
//! run judged ([`judge`]): the verdict (`session::verdict`, pure) on how the agent's process
//! ended and what it reported, with the agent's records and the database as evidence.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use super::super::Context;
use super::super::input::Prompt;
use super::begin::Begun;
use crate::agent::Diagnosis;
use crate::agent::{self, LineSplitter, PromptVia};
use crate::cli::TurnArgs;
use crate::exit::exit_for;
use crate::progress::Progress;
use crate::pty::{self, Finished};
use crate::session::{
    self, Asked, Effect, Ended, Evidence, Observed, SessionAction, Unrun, Verdict,
};
use crate::store::Store;
use std::path::Path;

/// A turn between its start and its end.
pub(super) struct Running<'a> {
    pub(super) ctx: &'a Context,
    pub(super) begun: &'a Begun<'a>,
    /// The configured arguments, then the ones after `--`.
    extra_args: Vec<OsString>,
}

/// What happened in a turn's run.
pub(super) struct Outcome {
    /// How the agent's process ended, or why it could not run.
    pub(super) ended: Result<Finished, anyhow::Error>,
    /// What the agent reported.
    pub(super) observed: Observed,
    /// Why the ID the agent named could not be recorded when it appeared (retried at the end).
    pub(super) unrecorded: Option<anyhow::Error>,
}

impl<'a> Running<'a> {
    pub(super) fn new(ctx: &'a Context, begun: &'a Begun<'a>, args: &'a TurnArgs) -> Self {
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

    /// Runs the agent: headless with the prompt, else interactive.
    pub(super) fn run(&self, store: &Store, prompt: Option<&Prompt>) -> Outcome {
        match prompt {
            Some(prompt) => self.headless(store, prompt),
            None => self.interactive(),
        }
    }

    fn agent_turn(&self) -> agent::Turn<'_> {
        agent::Turn {
            target: self.begun.aim.target(),
            model: self.begun.session.model.as_deref(),
            extra_args: &self.extra_args,
            fork_from: self.begun.fork_from.as_deref(),
        }
    }

    fn spec(&self, args: Vec<OsString>, stdin: Option<Vec<u8>>) -> pty::Spec {
        let mut env = self.begun.adapter.env(&self.begun.session.directory);
        if let Some(settings) = self.ctx.settings.config.agent(self.begun.adapter.name()) {
            env.extend(settings.env.iter().map(|(k, v)| (k.into(), v.into())));
        }
        // Lets a nested sticky (an agent's tool calling sticky) tell it runs inside one.
        env.push(("STICKY_ACTIVE".into(), "1".into()));
        // The spawn keeps PATH and the other search lists (the configuration's, else sticky's
        // own) to their absolute entries: `crate::search_lists`.
        pty::Spec {
            program: self.begun.program.clone(),
            args,
            env,
            cwd: self.begun.session.directory.clone(),
            stdin,
        }
    }

    /// A program the kernel would not run is the agent missing (see `agent::program::refused`).
    fn refused(&self, error: anyhow::Error) -> anyhow::Error {
        agent::program::refused(self.begun.adapter.name(), &self.begun.program, error)
    }

    fn headless(&self, store: &Store, prompt: &Prompt) -> Outcome {
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
        let expected = turn.target.expected_id();
        let mut observed = Observed {
            headless: true,
            ..Observed::default()
        };
        let mut unrecorded = None;
        let mut splitter = LineSplitter::default();
        let mut on_line = |line: &str| {
            if let Some(ledger) = agent::ledger::read(adapter.name(), line) {
                observed.ledger.fold(ledger);
            }
            let events = adapter.parse_line(line);
            if events.is_empty() {
                observed.unparsed(line);
            }
            for event in events {
                match observed.fold(event, expected) {
                    // Rule 9: an ID the agent minted is stored the moment it appears.
                    Some(Effect::Name(id)) => {
                        unrecorded = store.set_agent_session_id(self.begun.session.id, &id).err();
                    }
                    // The agent's words (a command it runs) on sticky's progress line.
                    Some(Effect::Activity(what)) => {
                        progress.activity(&super::super::view::escape(&what));
                    }
                    None => {}
                }
            }
        };
        let spec = self.spec(args, stdin);
        // The SQL of the turn's end is compiled while the agent starts, not after it exits.
        let mut compile_end = || store.compile_turn_end();
        let mut on_output = |chunk: &[u8]| splitter.push(chunk, &mut on_line);
        let ended = pty::run_headless_meanwhile(&spec, &mut compile_end, &mut on_output)
            .map_err(|error| self.refused(error));
        splitter.finish(&mut on_line);
        progress.finish();
        Outcome {
            ended,
            observed,
            unrecorded,
        }
    }

    fn interactive(&self) -> Outcome {
        let adapter = self.begun.adapter;
        let report = self.ctx.project.state.report(self.begun.turn_id);
        // A failure here leaves what is there, which `read_report` does not follow either.
        let _ = crate::state::clear_report(&report);
        let mut args = adapter.interactive_args(&self.agent_turn());
        args.extend(adapter.session_report_args(&report));
        let mut observed = Observed::default();
        let mut tail = Vec::new();
        let ended = pty::run_interactive(&self.spec(args, None))
            .map(|(finished, output)| {
                crate::msg::relayed(output.last().copied());
                tail = output;
                finished
            })
            .map_err(|error| self.refused(error));
        // An agent that exits before it draws its UI says why in its last lines (Claude Code's
        // "No conversation found with session ID: ..." for a session it lost), read as a
        // headless agent's output is.
        observed.last_lines = agent::last_lines(&tail, LAST_LINES);
        // The agent's hook is the reliable report; its exit line is the next best (Codex and
        // opencode name a session they created only there).
        observed.ended_in = reported_sessions(&report)
            .pop()
            .or_else(|| adapter.session_from_exit_output(&String::from_utf8_lossy(&tail)));
        observed.transcript_answer = observed
            .ended_in
            .as_deref()
            .or(self.begun.session.agent_session_id.as_deref())
            .and_then(|id| {
                adapter.last_answer(&self.begun.home, &self.begun.session.directory, id)
            });
        let _ = crate::state::clear_report(&report);
        Outcome {
            ended,
            observed,
            unrecorded: None,
        }
    }
}

/// How many of an interactive agent's last lines are read for its error texts: an agent that
/// refuses to start prints one or two, and a screenful of its UI above them says nothing.
const LAST_LINES: usize = 8;

/// The session IDs an agent reported through its session hook (see
/// `Adapter::session_report_args`), in order.
fn reported_sessions(report: &std::path::Path) -> Vec<String> {
    let Some(text) = crate::state::read_report(report) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|event| Some(event.get("session_id")?.as_str()?.to_owned()))
        .collect()
}

/// The verdict on one run of the turn.
pub(super) fn judge(turn: &Running<'_>, store: &Store, outcome: &Outcome) -> Verdict {
    let ended: Ended = match &outcome.ended {
        Ok(finished) => Ok(*finished),
        Err(error) => Err(Unrun {
            error: format!("{error:#}"),
            // 72 for a program the kernel would not run, in the `--json` object as in the
            // process's exit.
            exit: exit_for(error),
        }),
    };
    let asked = Asked {
        agent: turn.begun.adapter.name(),
        target: turn.begun.aim.target(),
    };
    let evidence = Records {
        turn,
        store,
        home: &turn.begun.home,
        said: outcome.observed.said(),
    };
    session::verdict(asked, &outcome.observed, &ended, &evidence)
}

/// The agent session ID when the verdict is that the agent lost it (rule 8), so the vault may
/// put it back and the turn run once more.
pub(super) fn lost(verdict: &Verdict) -> Option<&str> {
    match &verdict.session {
        SessionAction::Lost { session, .. } => Some(session),
        _ => None,
    }
}

/// The agent's records of its sessions and the thread's row, as the verdict asks for them.
struct Records<'a> {
    turn: &'a Running<'a>,
    store: &'a Store,
    home: &'a Path,
    /// What the agent said, where the adapter looks for its error texts.
    said: String,
}

impl Evidence for Records<'_> {
    fn saved(&self, id: &str) -> Option<bool> {
        let begun = self.turn.begun;
        begun.adapter.saved(self.home, &begun.session.directory, id)
    }

    fn renamed(&self, expected: &str, actual: &str) -> bool {
        let begun = self.turn.begun;
        let directory = &begun.session.directory;
        begun
            .adapter
            .renamed(self.home, directory, expected, actual)
    }

    fn transcript(&self, id: &str) -> Option<bool> {
        let begun = self.turn.begun;
        let path = begun
            .adapter
            .transcript(self.home, &begun.session.directory, id)?;
        Some(path.is_file())
    }

    fn still_live(&self) -> bool {
        // A read that fails says yes: the rotation's own transaction reads again, and says
        // what it could not record.
        let session = &self.turn.begun.session;
        self.store
            .live_session(session.thread_id)
            .map_or(true, |live| live.is_some_and(|live| live.id == session.id))
    }

    fn diagnose(&self) -> Option<Diagnosis> {
        self.turn
            .begun
            .adapter
            .diagnose(&self.turn.begun.aim.target(), &self.said)
    }
}
