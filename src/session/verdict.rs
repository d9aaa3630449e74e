//! The turn's end as a pure function: how the run ended and what the agent reported give the
//! turn's status, sticky's exit, the error line and what becomes of the session (rules 7 to 9).
//!
//! [`verdict`] decides; [`settle`](super::settle) only applies what it decided. The facts it needs from
//! outside (the agent's own records, the thread's live session now) come through [`Evidence`],
//! asked only when a rule needs them, so the table test below answers them from its rows.

use crate::agent::{Diagnosis, Target};
use crate::exit::{self, Exit, StickyError};
use crate::pty::{Finished, Status};
use crate::store::TurnStatus;

use super::Observed;

/// What the turn asked of the agent.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    /// The agent's name.
    pub agent: &'a str,
    /// The session it was asked to run on.
    pub target: Target<'a>,
}

/// How the agent's process ended, or why it could not run.
pub type Ended = Result<Finished, Unrun>;

/// Why the agent could not run: the error in one line, and the exit it ends sticky with (72
/// for a program the kernel would not run; internal for the rest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrun {
    /// The error, in one line.
    pub error: String,
    /// sticky's exit for it.
    pub exit: Exit,
}

impl From<&str> for Unrun {
    /// An error of sticky's own (internal).
    fn from(error: &str) -> Self {
        Self {
            error: error.to_owned(),
            exit: Exit::Internal,
        }
    }
}

/// What the agent's records and the database say, read when a rule asks.
pub trait Evidence {
    /// Whether the agent saved session `id` (`Some(false)` only when it certainly did not).
    fn saved(&self, id: &str) -> Option<bool>;
    /// Whether `actual` is session `expected` under a new name, by the adapter's proof.
    fn renamed(&self, expected: &str, actual: &str) -> bool;
    /// Whether the agent's transcript of session `id` is there; `None` when sticky does not
    /// know where the agent keeps one.
    fn transcript(&self, id: &str) -> Option<bool>;
    /// Whether the turn's session is still the thread's live one (`sticky new` may have
    /// rotated the thread while the turn ran; that choice stands).
    fn still_live(&self) -> bool;
    /// Why the agent failed the turn, from what it said.
    fn diagnose(&self) -> Option<Diagnosis>;
}

/// What becomes of the turn's session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionAction {
    /// Nothing proves the session either way: it stays as it is.
    Keep,
    /// The agent proved the session (reported it, wrote its transcript, or answered on the ID
    /// sticky chose): confirm it.
    Confirm,
    /// The agent reported the session it created and named itself: record the name, confirm.
    Name(String),
    /// The agent went on with the session under a new name (proved by the adapter): follow the
    /// name on the same row, confirm it.
    Rename {
        /// The name sticky asked for.
        from: String,
        /// The agent's new name.
        to: String,
    },
    /// The user moved to another session inside the agent (Claude's `/clear`): the thread
    /// follows it, a rotation with the reason `agent`.
    Follow {
        /// The session the agent ended in.
        to: String,
        /// Whether the session the turn ran on is confirmed too (the agent answered on the ID
        /// sticky chose).
        confirm: bool,
    },
    /// The agent answered from another session than the one asked for: the turn fails with
    /// sticky's own code, the session stays.
    Amnesia {
        /// The session sticky asked for.
        expected: String,
        /// The session the agent reported.
        actual: String,
    },
    /// The agent no longer has the session it was asked to resume (rule 8): the turn fails
    /// with sticky's own code, the session stays.
    Lost {
        /// The session's ID.
        session: String,
        /// The agent's words.
        reason: String,
    },
    /// The agent never saved the session this turn started: nothing was kept, and the next
    /// turn starts afresh (the policy's `unsaved`).
    Unsaved {
        /// The session's ID.
        id: String,
        /// Whether its ID is forgotten (the agent chose it, so sticky cannot choose it again).
        forget: bool,
    },
}

/// The turn's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The turn's status.
    pub status: TurnStatus,
    /// sticky's exit, final: a failed check's code, the error's when the agent could not run,
    /// else the agent's as [`Exit`] maps it.
    pub exit: Exit,
    /// What went wrong, in one line, as the turn's row records it.
    pub error: Option<String>,
    /// What becomes of the session.
    pub session: SessionAction,
}

impl Verdict {
    /// The failure of sticky's own checks (amnesia, a lost session), which ends the turn with
    /// sticky's code instead of the agent's.
    pub fn failure(&self, agent: &str) -> Option<StickyError> {
        match &self.session {
            SessionAction::Amnesia { expected, actual } => Some(StickyError::Amnesia {
                agent: agent.to_owned(),
                expected: expected.clone(),
                actual: actual.clone(),
            }),
            SessionAction::Lost { session, reason } => Some(StickyError::SessionLost {
                agent: agent.to_owned(),
                session: session.clone(),
                reason: reason.clone(),
            }),
            _ => None,
        }
    }
}

/// Decides the turn's end from what was asked, what the agent reported and how it ended.
pub fn verdict(
    asked: Asked<'_>,
    observed: &Observed,
    ended: &Ended,
    evidence: &dyn Evidence,
) -> Verdict {
    let unsaved = never_saved(asked, observed, ended, evidence);
    let mut session = match &unsaved {
        Some(id) => SessionAction::Unsaved {
            id: id.clone(),
            forget: asked.target == Target::CreateUnnamed,
        },
        None => checked(asked, observed, ended.is_ok(), evidence),
    };
    let amnesia = matches!(session, SessionAction::Amnesia { .. });
    let (status, exit) = classify(observed, ended, amnesia);
    let accepted = status == TurnStatus::Ok
        && matches!(asked.target, Target::Create(_))
        && observed.reported.is_none();
    match &mut session {
        // An agent that never names its session (a user-defined one with a UUID chosen up
        // front) accepted the one sticky chose by answering: it exists now.
        SessionAction::Keep if accepted => session = SessionAction::Confirm,
        SessionAction::Follow { confirm, .. } => *confirm = accepted,
        _ => {}
    }
    let refusal = if !amnesia && status == TurnStatus::Failed {
        diagnosed(asked, evidence, &mut session)
    } else {
        None
    };
    let verdict = Verdict {
        status,
        exit,
        error: None,
        session,
    };
    let failure = verdict.failure(asked.agent);
    let error = failure
        .as_ref()
        .map(ToString::to_string)
        .or_else(|| ended.as_ref().err().map(|unrun| unrun.error.clone()))
        .or(refusal)
        .or_else(|| agent_failure(asked, observed, ended, status, unsaved.as_deref()));
    let exit = match (&failure, ended) {
        (Some(failure), _) => failure.exit(),
        (None, Err(unrun)) => unrun.exit,
        (None, Ok(_)) => exit,
    };
    Verdict {
        exit,
        error,
        ..verdict
    }
}

/// Rule 8: a resumed session the agent failed on because it no longer has it is lost (sticky's
/// own failure); an agent that refused to run at all gives its reason, returned as the error
/// line with the way out (its exit code stands).
fn diagnosed(
    asked: Asked<'_>,
    evidence: &dyn Evidence,
    session: &mut SessionAction,
) -> Option<String> {
    match (evidence.diagnose()?, asked.target) {
        (Diagnosis::SessionLost(reason), Target::Resume(id)) => {
            *session = SessionAction::Lost {
                session: id.to_owned(),
                reason,
            };
            None
        }
        (Diagnosis::Refused { hint, .. }, _) => {
            Some(format!("{} refused to run: {hint}", asked.agent))
        }
        (Diagnosis::SessionLost(_), _) => None,
    }
}

/// The ID of the session this turn started, when the turn failed before the agent saved it
/// anywhere (Codex keeps no rollout of a thread whose first turn never got that far in some
/// versions, openai/codex#18690; a Claude Code that died before writing its transcript):
/// nothing was kept, so nothing can be lost, and the next turn starts afresh. Never for a
/// resumed session, whose history the agent had.
fn never_saved(
    asked: Asked<'_>,
    observed: &Observed,
    ended: &Ended,
    evidence: &dyn Evidence,
) -> Option<String> {
    if matches!(asked.target, Target::Resume(_))
        || classify(observed, ended, false).0 == TurnStatus::Ok
    {
        return None;
    }
    let id = observed
        .reported
        .as_deref()
        .or(asked.target.expected_id())?;
    (evidence.saved(id) == Some(false)).then(|| id.to_owned())
}

/// Rule 7: the session the agent reports, checked against the one sticky asked for. An
/// interactive run that ended in another session follows it; a headless one that reported
/// another is a rename (proved by the adapter) or amnesia; one that reported nothing is
/// confirmed by the agent's transcript of exactly the session asked for.
fn checked(
    asked: Asked<'_>,
    observed: &Observed,
    finished: bool,
    evidence: &dyn Evidence,
) -> SessionAction {
    let expected = asked.target.expected_id();
    if let Some(current) = observed.ended_in.as_deref() {
        if let Some(action) = follow(asked, current, evidence) {
            return action;
        }
    }
    match (expected, observed.reported.as_deref()) {
        (Some(expected), Some(actual)) if expected != actual => {
            if evidence.renamed(expected, actual) {
                SessionAction::Rename {
                    from: expected.to_owned(),
                    to: actual.to_owned(),
                }
            } else {
                SessionAction::Amnesia {
                    expected: expected.to_owned(),
                    actual: actual.to_owned(),
                }
            }
        }
        (_, Some(_)) => SessionAction::Confirm,
        // Interactive runs report nothing on stdout; the agent's transcript of exactly this ID
        // confirms that it created the session.
        (Some(id), None) if finished && evidence.transcript(id) == Some(true) => {
            SessionAction::Confirm
        }
        _ => SessionAction::Keep,
    }
}

/// An interactive run ended in session `current` by the agent's own report. A session without
/// a transcript (cleared, then nothing said) is not followed, since resuming it could only
/// fail; nor is one when the thread moved on meanwhile (`sticky new`: that choice stands).
fn follow(asked: Asked<'_>, current: &str, evidence: &dyn Evidence) -> Option<SessionAction> {
    if asked.target.expected_id() == Some(current) || evidence.transcript(current) == Some(false) {
        return None;
    }
    if asked.target == Target::CreateUnnamed {
        return Some(SessionAction::Name(current.to_owned()));
    }
    evidence.still_live().then(|| SessionAction::Follow {
        to: current.to_owned(),
        confirm: false,
    })
}

/// The turn's status and sticky's exit from how the agent ended; `amnesia` fails a turn the
/// agent itself finished well.
fn classify(observed: &Observed, ended: &Ended, amnesia: bool) -> (TurnStatus, Exit) {
    let Ok(finished) = ended else {
        return (TurnStatus::Failed, Exit::Internal);
    };
    let exit = match (finished.status, finished.interrupted_by) {
        // A turn sticky passed a signal on to ends as that signal would have ended it (130 for
        // Ctrl-C), whatever the agent made of it: Claude Code 2.1.332 catches SIGINT in `-p`
        // and exits 1, which a script cannot tell from a failure.
        (_, Some(signal)) | (Status::Signal(signal), None) => Exit::Signal(signal),
        // Claude reports API errors in its result event; such a turn failed whatever rc says.
        // So did one whose output held none of the agent's events, or nothing at all: no
        // answer, no session.
        (Status::Code(0), None)
            if observed.is_error || observed.only_foreign_output() || observed.said_nothing() =>
        {
            Exit::Agent(1)
        }
        (Status::Code(0), None) => Exit::Success,
        (Status::Code(code), None) => Exit::Agent(code),
    };
    let status = if finished.interrupted_by.is_some() {
        TurnStatus::Interrupted
    } else if exit == Exit::Success && !amnesia {
        TurnStatus::Ok
    } else {
        TurnStatus::Failed
    };
    (status, exit)
}

/// What went wrong when the agent itself failed the turn, in one line; `unsaved` is the
/// session the agent never saved.
fn agent_failure(
    asked: Asked<'_>,
    observed: &Observed,
    ended: &Ended,
    status: TurnStatus,
    unsaved: Option<&str>,
) -> Option<String> {
    let agent = asked.agent;
    let code = ended.as_ref().ok()?.status;
    // An exit 0 with output that held none of the agent's events: a program that is not the
    // agent (a wrapper printing plain text), or a release whose output sticky cannot read.
    let foreign = code == Status::Code(0) && !observed.is_error && observed.only_foreign_output();
    let how = match (status, code) {
        (TurnStatus::Ok, _) => return None,
        (TurnStatus::Interrupted, _) => "was interrupted".to_owned(),
        (_, Status::Code(0)) if foreign => {
            "exited with code 0 without printing any of its events".to_owned()
        }
        (_, Status::Code(0)) if observed.said_nothing() => {
            "exited with code 0 without printing anything".to_owned()
        }
        (_, Status::Code(0)) => "reported an error".to_owned(),
        (_, Status::Code(code)) if exit::is_reserved(code) => format!(
            "exited with code {code} (sticky exits {} instead: {code} is one of its own codes)",
            exit::AGENT_RESERVED_CODE
        ),
        (_, Status::Code(code)) => format!("exited with code {code}"),
        (_, Status::Signal(signal)) => format!("was killed by signal {signal}"),
    };
    let mut error = if let Some(id) = unsaved {
        format!(
            "{agent} {how} before it saved session {id}; the turn failed and nothing of it was \
             kept, so the next turn starts afresh"
        )
    } else if asked.target == Target::CreateUnnamed && observed.reported.is_none() {
        format!(
            "{agent} {how} before it named its new session; the turn failed and the next turn \
             starts afresh"
        )
    } else {
        let session = asked.target.expected_id().map_or_else(
            || "its new session".to_owned(),
            |id| format!("session {id}"),
        );
        format!("{agent} {how}; the turn failed, {session} stays (run sticky again to continue it)")
    };
    if foreign {
        error.push_str(&format!(
            "; its output is not in {agent}'s event format: `sticky agents` shows the program \
             sticky runs for {agent} and its version ({} chooses another)",
            crate::agent::program::override_var(agent)
        ));
    }
    Some(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    use Target::{Create, CreateUnnamed, Resume};

    /// The agent's records and the thread, as one row of the table has them.
    #[derive(Default)]
    struct Facts {
        /// Sessions the agent certainly never saved.
        unsaved: &'static [&'static str],
        renamed: bool,
        /// Sessions with a transcript (`true`) or a known place without one (`false`).
        transcripts: &'static [(&'static str, bool)],
        moved_on: bool,
        diagnosis: Option<Diagnosis>,
    }

    impl Evidence for Facts {
        fn saved(&self, id: &str) -> Option<bool> {
            self.unsaved.contains(&id).then_some(false)
        }
        fn renamed(&self, _: &str, _: &str) -> bool {
            self.renamed
        }
        fn transcript(&self, id: &str) -> Option<bool> {
            let found = self.transcripts.iter().find(|(of, _)| *of == id);
            found.map(|(_, there)| *there)
        }
        fn still_live(&self) -> bool {
            !self.moved_on
        }
        fn diagnose(&self) -> Option<Diagnosis> {
            self.diagnosis.clone()
        }
    }

    fn transcripts(transcripts: &'static [(&'static str, bool)]) -> Facts {
        Facts {
            transcripts,
            ..Facts::default()
        }
    }

    fn unsaved(unsaved: &'static [&'static str]) -> Facts {
        Facts {
            unsaved,
            ..Facts::default()
        }
    }

    #[allow(clippy::unnecessary_wraps)] // reads like the agent's answer
    fn diagnosed(diagnosis: Option<Diagnosis>) -> Facts {
        Facts {
            diagnosis,
            ..Facts::default()
        }
    }

    impl Facts {
        fn rename_proved() -> Self {
            Self {
                renamed: true,
                ..Self::default()
            }
        }

        fn thread_moved_on() -> Self {
            Self {
                moved_on: true,
                ..Self::default()
            }
        }
    }

    struct Case {
        name: &'static str,
        target: Target<'static>,
        reported: Option<&'static str>,
        ended_in: Option<&'static str>,
        is_error: bool,
        /// The agent printed plain text and none of its events.
        foreign: bool,
        /// A headless run that printed nothing at all.
        silent: bool,
        ended: Ended,
        facts: Facts,
        status: TurnStatus,
        exit: Exit,
        session: SessionAction,
        /// A part of the error line, or `None` for none.
        error: Option<&'static str>,
    }

    /// A row that expects an ok turn with nothing done; the row says what differs.
    fn case(name: &'static str, target: Target<'static>) -> Case {
        Case {
            name,
            target,
            reported: None,
            ended_in: None,
            is_error: false,
            foreign: false,
            silent: false,
            ended: code(0),
            facts: Facts::default(),
            status: TurnStatus::Ok,
            exit: Exit::Success,
            session: SessionAction::Keep,
            error: None,
        }
    }

    #[allow(clippy::unnecessary_wraps)] // reads like the `ended` column of the table
    fn code(code: i32) -> Ended {
        Ok(Finished {
            status: Status::Code(code),
            interrupted_by: None,
        })
    }

    fn failed(exit: i32) -> (TurnStatus, Exit) {
        (TurnStatus::Failed, Exit::Agent(exit))
    }

    fn follow(to: &str, confirm: bool) -> SessionAction {
        SessionAction::Follow {
            to: to.into(),
            confirm,
        }
    }

    #[allow(clippy::too_many_lines)] // one row per rule reads better than split tables
    fn cases() -> Vec<Case> {
        use SessionAction::Confirm;
        let (fail, agent1) = failed(1);
        vec![
            // rule 7: the session the agent reports is checked against the one asked for
            Case {
                reported: Some("a"),
                session: Confirm,
                ..case("resumed session reported: confirm", Resume("a"))
            },
            Case {
                reported: Some("x"),
                session: Confirm,
                ..case(
                    "own name reported (recorded as it came): confirm",
                    CreateUnnamed,
                )
            },
            Case {
                reported: Some("b"),
                facts: Facts::rename_proved(),
                session: SessionAction::Rename {
                    from: "a".into(),
                    to: "b".into(),
                },
                ..case(
                    "another name, proved a rename: follow the name",
                    Resume("a"),
                )
            },
            Case {
                reported: Some("b"),
                status: fail,
                exit: Exit::Amnesia,
                session: SessionAction::Amnesia {
                    expected: "a".into(),
                    actual: "b".into(),
                },
                error: Some("amnesia detected: asked claude to resume session a"),
                ..case("another session without proof: amnesia", Resume("a"))
            },
            Case {
                reported: Some("b"),
                is_error: true,
                ended: code(0),
                status: fail,
                exit: Exit::Amnesia,
                session: SessionAction::Amnesia {
                    expected: "a".into(),
                    actual: "b".into(),
                },
                error: Some("amnesia detected"),
                ..case(
                    "amnesia on a new session, whatever the agent says",
                    Create("a"),
                )
            },
            Case {
                session: Confirm,
                ..case("answered on the ID chosen up front: confirm", Create("a"))
            },
            Case {
                ended: code(1),
                facts: transcripts(&[("a", true)]),
                status: fail,
                exit: agent1,
                session: Confirm,
                error: Some("claude exited with code 1; the turn failed, session a stays"),
                ..case(
                    "nothing reported, its transcript proves it: confirm",
                    Create("a"),
                )
            },
            Case {
                ended: code(1),
                status: fail,
                exit: agent1,
                error: Some("session a stays (run sticky again to continue it)"),
                ..case("nothing reported, nothing proved: keep", Create("a"))
            },
            // an interactive run that ended in another session (Claude's `/clear`)
            Case {
                ended_in: Some("b"),
                facts: transcripts(&[("b", true)]),
                session: follow("b", false),
                ..case("ended in another session: follow it", Resume("a"))
            },
            Case {
                ended_in: Some("b"),
                session: follow("b", true),
                ..case("follow from a new session confirms it too", Create("a"))
            },
            Case {
                ended_in: Some("b"),
                facts: transcripts(&[("b", false), ("a", true)]),
                session: Confirm,
                ..case("cleared with nothing said: stay", Resume("a"))
            },
            Case {
                ended_in: Some("b"),
                facts: Facts::thread_moved_on(),
                ..case("`sticky new` meanwhile: its choice stands", Resume("a"))
            },
            Case {
                ended_in: Some("a"),
                facts: transcripts(&[("a", true)]),
                session: Confirm,
                ..case("ended in the session asked for: confirm", Resume("a"))
            },
            Case {
                ended_in: Some("x"),
                session: SessionAction::Name("x".into()),
                ..case(
                    "an interactive agent names its session: record it",
                    CreateUnnamed,
                )
            },
            // rule 8: a resumed session the agent no longer has
            Case {
                ended: code(1),
                facts: diagnosed(Some(Diagnosis::SessionLost("No conversation found".into()))),
                status: fail,
                exit: Exit::SessionLost,
                session: SessionAction::Lost {
                    session: "a".into(),
                    reason: "No conversation found".into(),
                },
                error: Some("session lost: claude cannot resume session a"),
                ..case("the agent lost the session: sticky's failure", Resume("a"))
            },
            Case {
                ended: code(1),
                facts: diagnosed(Some(Diagnosis::Refused {
                    reason: "untrusted".into(),
                    hint: "trust it".into(),
                })),
                status: fail,
                exit: agent1,
                error: Some("claude refused to run: trust it"),
                ..case(
                    "the agent refused to run: its words and the way out",
                    Create("a"),
                )
            },
            // a first turn that failed before the agent saved anything: start afresh next
            Case {
                ended: code(1),
                facts: unsaved(&["a"]),
                status: fail,
                exit: agent1,
                session: SessionAction::Unsaved {
                    id: "a".into(),
                    forget: false,
                },
                error: Some("before it saved session a; the turn failed and nothing of it"),
                ..case("never saved: the next turn starts afresh", Create("a"))
            },
            Case {
                reported: Some("x"),
                ended: code(1),
                facts: unsaved(&["x"]),
                status: fail,
                exit: agent1,
                session: SessionAction::Unsaved {
                    id: "x".into(),
                    forget: true,
                },
                error: Some("before it saved session x"),
                ..case("never saved its own name: forget it", CreateUnnamed)
            },
            Case {
                ended: code(1),
                facts: unsaved(&["a"]),
                status: fail,
                exit: agent1,
                error: Some("session a stays"),
                ..case("a resumed session is never unsaved", Resume("a"))
            },
            Case {
                ended: code(1),
                status: fail,
                exit: agent1,
                error: Some("claude exited with code 1 before it named its new session"),
                ..case("failed before naming its session", CreateUnnamed)
            },
            // how the agent ended
            Case {
                ended: Err("could not run /bin/claude".into()),
                status: TurnStatus::Failed,
                exit: Exit::Internal,
                error: Some("could not run /bin/claude"),
                ..case("the agent could not run", Create("a"))
            },
            Case {
                reported: Some("a"),
                ended: Ok(Finished {
                    status: Status::Code(130),
                    interrupted_by: Some(2),
                }),
                status: TurnStatus::Interrupted,
                exit: Exit::Signal(2),
                session: Confirm,
                error: Some("claude was interrupted; the turn failed, session a stays"),
                ..case("interrupted", Create("a"))
            },
            Case {
                reported: Some("a"),
                // Claude Code 2.1.332 catches SIGINT in `-p` and exits 1.
                ended: Ok(Finished {
                    status: Status::Code(1),
                    interrupted_by: Some(2),
                }),
                status: TurnStatus::Interrupted,
                exit: Exit::Signal(2),
                session: Confirm,
                error: Some("claude was interrupted; the turn failed, session a stays"),
                ..case("interrupted, the agent exiting 1", Resume("a"))
            },
            Case {
                reported: Some("a"),
                ended: Ok(Finished {
                    status: Status::Signal(9),
                    interrupted_by: None,
                }),
                status: TurnStatus::Failed,
                exit: Exit::Signal(9),
                session: Confirm,
                error: Some("claude was killed by signal 9"),
                ..case("killed by a signal", Resume("a"))
            },
            Case {
                reported: Some("a"),
                is_error: true,
                status: fail,
                exit: agent1,
                session: Confirm,
                error: Some("claude reported an error; the turn failed"),
                ..case("an error result with exit 0 fails", Resume("a"))
            },
            Case {
                reported: Some("a"),
                ended: code(71),
                status: fail,
                exit: Exit::Agent(71),
                session: Confirm,
                error: Some("exited with code 71 (sticky exits 76 instead"),
                ..case("an exit code of sticky's own is named", Resume("a"))
            },
            // a headless run whose output held none of the agent's events (a wrapper script
            // printing plain text, a version that changed its format) fails though it exited 0,
            // with the way out; with another code, the agent's own error stands
            Case {
                foreign: true,
                facts: transcripts(&[("a", true)]),
                status: fail,
                exit: agent1,
                session: Confirm,
                error: Some(
                    "claude exited with code 0 without printing any of its events; the turn \
                     failed, session a stays",
                ),
                ..case("plain text and exit 0: failed", Resume("a"))
            },
            Case {
                foreign: true,
                status: fail,
                exit: agent1,
                error: Some(
                    "its output is not in claude's event format: `sticky agents` shows the \
                     program sticky runs for claude and its version (STICKY_CLAUDE_BIN chooses \
                     another)",
                ),
                ..case(
                    "plain text on a new session: nothing confirmed",
                    Create("a"),
                )
            },
            Case {
                foreign: true,
                facts: unsaved(&["a"]),
                status: fail,
                exit: agent1,
                session: SessionAction::Unsaved {
                    id: "a".into(),
                    forget: false,
                },
                error: Some("without printing any of its events before it saved session a"),
                ..case(
                    "plain text, never saved: the next turn starts afresh",
                    Create("a"),
                )
            },
            // a headless run that printed nothing at all and exited 0 answered nothing and
            // proved no session: failed, so the next turn does not resume a session the agent
            // may never have made (an interactive run prints nothing here and stays ok)
            Case {
                silent: true,
                status: fail,
                exit: agent1,
                error: Some(
                    "claude exited with code 0 without printing anything; the turn failed, \
                     session a stays",
                ),
                ..case(
                    "nothing printed on a new session: nothing confirmed",
                    Create("a"),
                )
            },
            Case {
                silent: true,
                facts: unsaved(&["a"]),
                status: fail,
                exit: agent1,
                session: SessionAction::Unsaved {
                    id: "a".into(),
                    forget: false,
                },
                error: Some("without printing anything before it saved session a"),
                ..case(
                    "nothing printed, never saved: the next turn starts afresh",
                    Create("a"),
                )
            },
            Case {
                silent: true,
                status: fail,
                exit: agent1,
                error: Some("claude exited with code 0 without printing anything; the turn failed"),
                ..case(
                    "nothing printed on a resumed session: failed, it stays",
                    Resume("a"),
                )
            },
            Case {
                foreign: true,
                ended: code(3),
                status: fail,
                exit: Exit::Agent(3),
                error: Some(
                    "claude exited with code 3; the turn failed, session a stays (run \
                             sticky again to continue it)",
                ),
                ..case(
                    "plain text and a failure: the agent's own error",
                    Resume("a"),
                )
            },
        ]
    }

    #[test]
    fn every_rule_of_the_turns_end() {
        for case in cases() {
            let observed = Observed {
                reported: case.reported.map(str::to_owned),
                ended_in: case.ended_in.map(str::to_owned),
                is_error: case.is_error,
                agent_output: if case.foreign {
                    "Usage: claude [options]\n".into()
                } else {
                    String::new()
                },
                headless: case.silent,
                ..Observed::default()
            };
            let asked = Asked {
                agent: "claude",
                target: case.target,
            };
            let got = verdict(asked, &observed, &case.ended, &case.facts);
            let name = case.name;
            assert_eq!(
                (got.status, got.exit, &got.session),
                (case.status, case.exit, &case.session),
                "{name}"
            );
            match (case.error, got.error.as_deref()) {
                (None, None) => {}
                (Some(part), Some(error)) => assert!(error.contains(part), "{name}: {error}"),
                (want, got) => panic!("{name}: error {got:?}, expected {want:?}"),
            }
            let failure = got.failure("claude").map(|failure| failure.exit());
            let own = matches!(case.exit, Exit::Amnesia | Exit::SessionLost);
            assert_eq!(failure, own.then_some(case.exit), "{name}");
        }
    }
}
