//! A turn's end: the session the agent reported checked against the one sticky asked for
//! (amnesia, renames, sessions changed inside the agent's UI), the turn's row finished, and the
//! answer (or the `--json` object) printed.

use anyhow::{Context as _, Result};
use serde::Serialize;

use super::super::output::Report;
use super::super::view::{SessionView, TurnView, escape, fresh_line};
use super::{Outcome, Running};
use crate::agent::{Diagnosis, Target};
use crate::exit::{Exit, StickyError};
use crate::pty::Status;
use crate::session::Reason;
use crate::store::{NewSession, Store, TurnEnd, TurnStatus};

impl Running<'_> {
    /// Records the turn's end, confirms or questions the session, prints the result.
    pub(super) fn finish(&self, store: &mut Store, outcome: Outcome) -> Result<Report> {
        if let Some(error) = outcome.store_error {
            return Err(error);
        }
        let unsaved = self.never_saved(&outcome);
        let mut failure = self.check_session(store, &outcome, unsaved.as_deref())?;
        let (status, exit) = classify(&outcome, failure.is_some());
        if let (TurnStatus::Ok, Target::Create(_), None) =
            (status, self.target(), &outcome.reported)
        {
            // An agent that never names its session (a user-defined one with a UUID chosen up
            // front) accepted the one sticky chose by answering: it exists now.
            store.confirm_session(self.begun.session.id)?;
        }
        let mut refusal = None;
        if failure.is_none() && status == TurnStatus::Failed {
            (failure, refusal) = self.diagnose(&outcome);
        }
        let error = failure
            .as_ref()
            .map(ToString::to_string)
            .or_else(|| outcome.spawn_error.as_ref().map(|e| format!("{e:#}")))
            .or(refusal)
            .or_else(|| self.agent_failure(&outcome, status, unsaved.as_deref()));
        let (exit_code, signal) = match outcome.finished.map(|f| f.status) {
            Some(Status::Code(code)) => (Some(code), None),
            Some(Status::Signal(signal)) => (None, Some(signal)),
            None => (None, None),
        };
        store.finish_turn(
            self.begun.turn_id,
            &TurnEnd {
                status: Some(status),
                exit_code,
                signal,
                cost_usd: outcome.usage.cost_usd,
                input_tokens: outcome.usage.input_tokens,
                output_tokens: outcome.usage.output_tokens,
                error: error.clone(),
            },
        )?;
        // The process's exit code, for the `--json` object: a failed check's, a spawn error's
        // (internal), else the agent's as `Exit` maps it.
        let code = match (&failure, &outcome.spawn_error) {
            (Some(failure), _) => failure.exit().code(),
            (None, Some(_)) => Exit::Internal.code(),
            (None, None) => exit.code(),
        };
        let said = self.report(store, &outcome, status, error.as_deref(), code)?;
        if let Some(failure) = failure {
            return Ok(said.failing(failure.into()));
        }
        if let (Some(error), None, false) = (&error, &outcome.spawn_error, self.ctx.json) {
            // The agent's own failure: its exit code passes through, with one line saying so.
            eprintln!("{}sticky: {}", fresh_line(), escape(error));
        }
        if let Some(error) = outcome.spawn_error {
            let program = self.begun.program.display();
            return Ok(said.failing(error.context(format!("could not run {program}"))));
        }
        Ok(said.exiting(exit))
    }

    /// The ID of the session this turn started, when the turn failed before the agent saved
    /// it anywhere (Codex keeps no rollout of a thread whose first turn never got that far in
    /// some versions, openai/codex#18690; a Claude Code that died before writing its
    /// transcript): nothing was kept, so nothing can be lost, and the next turn starts afresh
    /// (the policy's `unsaved`). Never for a resumed session, whose history the agent had.
    fn never_saved(&self, outcome: &Outcome) -> Option<String> {
        if self.begun.resume || classify(outcome, false).0 == TurnStatus::Ok {
            return None;
        }
        let id = outcome
            .reported
            .as_deref()
            .or(self.begun.target_id.as_deref())?;
        let home = dirs::home_dir().unwrap_or_default();
        let saved = self
            .begun
            .adapter
            .saved(&home, &self.begun.session.directory, id);
        (saved == Some(false)).then(|| id.to_owned())
    }

    /// Rule 7: compares the session the agent reports with the one sticky asked for, and
    /// confirms the session when they agree, unless the agent never saved it (`unsaved`): a
    /// session it named itself then forgets that name, which nothing can resume.
    fn check_session(
        &self,
        store: &mut Store,
        outcome: &Outcome,
        unsaved: Option<&str>,
    ) -> Result<Option<StickyError>> {
        let begun = self.begun;
        let session_id = begun.session.id;
        if unsaved.is_some() {
            if self.target() == Target::CreateUnnamed {
                store.forget_agent_session_id(session_id)?;
            }
            return Ok(None);
        }
        if let Some(current) = &outcome.followed {
            if self.follow(store, current)? {
                return Ok(None);
            }
        }
        match (self.target().expected_id(), outcome.reported.as_deref()) {
            (Some(expected), Some(actual)) if expected != actual => {
                let home = dirs::home_dir().unwrap_or_default();
                let directory = &begun.session.directory;
                if begun.adapter.renamed(&home, directory, expected, actual) {
                    // The same conversation under a new name: follow the name, same session row.
                    store.set_agent_session_id(session_id, actual)?;
                    store.confirm_session(session_id)?;
                    if !self.ctx.quiet {
                        eprintln!(
                            "{}sticky: {} renamed session {} to {}; following it",
                            fresh_line(),
                            begun.adapter.name(),
                            escape(expected),
                            escape(actual)
                        );
                    }
                    return Ok(None);
                }
                return Ok(Some(StickyError::Amnesia {
                    agent: begun.adapter.name().to_owned(),
                    expected: expected.to_owned(),
                    actual: actual.to_owned(),
                }));
            }
            (_, Some(_)) => store.confirm_session(session_id)?,
            (Some(id), None) if outcome.finished.is_some() => {
                // Interactive runs report nothing on stdout; the agent's transcript of exactly
                // this ID confirms that it created the session.
                let home = dirs::home_dir().unwrap_or_default();
                let transcript = begun
                    .adapter
                    .transcript(&home, &begun.session.directory, id);
                if transcript.is_some_and(|path| path.is_file()) {
                    store.confirm_session(session_id)?;
                }
            }
            _ => {}
        }
        Ok(None)
    }

    /// An interactive run ended in session `current` by the agent's own report. When the user
    /// switched to it inside the agent (Claude's `/clear`), follow it: a rotation with reason
    /// `agent`, so the next turn continues what the user last saw. Returns whether it did; a
    /// session without a transcript (cleared, then nothing said) is not followed, since
    /// resuming it could only fail.
    fn follow(&self, store: &mut Store, current: &str) -> Result<bool> {
        let begun = self.begun;
        let adapter = begun.adapter;
        let directory = &begun.session.directory;
        if self.target().expected_id() == Some(current) {
            return Ok(false);
        }
        let home = dirs::home_dir().unwrap_or_default();
        let transcript = adapter.transcript(&home, directory, current);
        if transcript.is_some_and(|path| !path.is_file()) {
            return Ok(false);
        }
        if self.target() == Target::CreateUnnamed {
            store.set_agent_session_id(begun.session.id, current)?;
            store.confirm_session(begun.session.id)?;
            return Ok(true);
        }
        let followed = store.immediate(|tx| {
            let live = tx.live_session(begun.session.thread_id)?;
            if live.is_none_or(|live| live.id != begun.session.id) {
                // `sticky new` rotated the thread meanwhile: that choice stands.
                return Ok(None);
            }
            let session = tx.start_session(
                begun.session.thread_id,
                &NewSession {
                    agent: adapter.name(),
                    model: begun.session.model.as_deref(),
                    agent_session_id: Some(current),
                    directory,
                    rotated_from: Some((begun.session.id, Reason::Agent.as_str())),
                },
            )?;
            Ok(Some(session.id))
        })?;
        let Some(session_id) = followed else {
            return Ok(false);
        };
        store.confirm_session(session_id)?;
        if !self.ctx.quiet {
            eprintln!(
                "{}sticky: {} moved to session {}; thread {} follows it",
                fresh_line(),
                adapter.name(),
                escape(current),
                escape(&self.ctx.thread)
            );
        }
        Ok(true)
    }

    /// What went wrong when the agent itself failed the turn, in one line; `unsaved` is the
    /// session the agent never saved.
    fn agent_failure(
        &self,
        outcome: &Outcome,
        status: TurnStatus,
        unsaved: Option<&str>,
    ) -> Option<String> {
        let agent = self.begun.adapter.name();
        let session = self.target().expected_id().map_or_else(
            || "its new session".to_owned(),
            |id| format!("session {id}"),
        );
        let how = match (status, outcome.finished?.status) {
            (TurnStatus::Ok, _) => return None,
            (TurnStatus::Interrupted, _) => "was interrupted".to_owned(),
            (_, Status::Code(0)) => "reported an error".to_owned(),
            (_, Status::Code(code)) if crate::exit::is_reserved(code) => format!(
                "exited with code {code} (sticky exits {} instead: {code} is one of its own \
                 codes)",
                crate::exit::AGENT_RESERVED_CODE
            ),
            (_, Status::Code(code)) => format!("exited with code {code}"),
            (_, Status::Signal(signal)) => format!("was killed by signal {signal}"),
        };
        if let Some(id) = unsaved {
            return Some(format!(
                "{agent} {how} before it saved session {id}; the turn failed and nothing of it \
                 was kept, so the next turn starts afresh"
            ));
        }
        if self.target() == Target::CreateUnnamed && outcome.reported.is_none() {
            return Some(format!(
                "{agent} {how} before it named its new session; the turn failed and the next \
                 turn starts afresh"
            ));
        }
        Some(format!(
            "{agent} {how}; the turn failed, {session} stays (run sticky again to continue it)"
        ))
    }

    /// Rule 8 (a resume the agent refused because it no longer knows the session: sticky's own
    /// failure), or the agent's refusal to run at all (its exit code stands, with the way out).
    fn diagnose(&self, outcome: &Outcome) -> (Option<StickyError>, Option<String>) {
        let adapter = self.begun.adapter;
        let target = self.target();
        // Agents whose plain output is their answer (user-defined ones) say it there.
        let said = format!("{}\n{}", outcome.agent_output, outcome.text);
        match adapter.diagnose(&target, &said) {
            Some(Diagnosis::SessionLost(reason)) => (
                Some(StickyError::SessionLost {
                    agent: adapter.name().to_owned(),
                    session: target.expected_id().unwrap_or_default().to_owned(),
                    reason,
                }),
                None,
            ),
            Some(Diagnosis::Refused { hint, .. }) => (
                None,
                Some(format!("{} refused to run: {hint}", adapter.name())),
            ),
            None => (None, None),
        }
    }

    /// The answer for stdout (or the `--json` object); prints a failed turn's output on
    /// stderr.
    fn report(
        &self,
        store: &Store,
        outcome: &Outcome,
        status: TurnStatus,
        error: Option<&str>,
        exit_code: u8,
    ) -> Result<Report> {
        let answer = outcome
            .answer
            .clone()
            .or_else(|| (!outcome.text.is_empty()).then(|| outcome.text.clone()));
        if self.ctx.json {
            let turn = store
                .turn(self.begun.turn_id)?
                .context("the turn's row disappeared")?;
            let session = store
                .session(self.begun.session.id)?
                .context("the session's row disappeared")?;
            return Report::json(&TurnReport {
                thread: &self.ctx.thread,
                project: self.ctx.project.dir.display().to_string(),
                session: SessionView::from(&session),
                turn: TurnView::from(&turn),
                answer: answer.as_deref(),
                error,
                exit_code,
            });
        }
        if status != TurnStatus::Ok {
            // The agent's own words (its error message), before sticky's one line.
            eprint!("{}", outcome.agent_output);
        }
        if let Some(mut answer) = answer {
            if !answer.ends_with('\n') {
                answer.push('\n');
            }
            if status == TurnStatus::Ok {
                return Ok(Report::text(answer.into_bytes()));
            }
            // The answer of a failed turn is the agent's error message: stderr, not stdout.
            eprint!("{answer}");
        }
        Ok(Report::nothing())
    }
}

/// The turn's status and sticky's exit from how the agent ended.
fn classify(outcome: &Outcome, failed_check: bool) -> (TurnStatus, Exit) {
    let Some(finished) = outcome.finished.filter(|_| outcome.spawn_error.is_none()) else {
        return (TurnStatus::Failed, Exit::Internal);
    };
    let exit = match finished.status {
        // Claude reports API errors in its result event; such a turn failed whatever rc says.
        Status::Code(0) if outcome.is_error => Exit::Agent(1),
        Status::Code(0) => Exit::Success,
        Status::Code(code) => Exit::Agent(code),
        Status::Signal(signal) => Exit::Signal(signal),
    };
    let status = if finished.interrupted_by.is_some() {
        TurnStatus::Interrupted
    } else if exit == Exit::Success && !failed_check {
        TurnStatus::Ok
    } else {
        TurnStatus::Failed
    };
    (status, exit)
}

/// The `--json` object of a turn.
#[derive(Serialize)]
struct TurnReport<'a> {
    thread: &'a str,
    project: String,
    session: SessionView<'a>,
    turn: TurnView<'a>,
    answer: Option<&'a str>,
    error: Option<&'a str>,
    /// sticky's exit code (the agent's own is `turn.exit_code`).
    exit_code: u8,
}
