//! The session policy: which agent session a turn runs on.
//!
//! [`plan`] is a pure function of the conversation's live session and the user's request, so
//! every rule of DESIGN.md's "Rules of the session policy" is pinned by a table test below. The
//! plan says what it decided (resume, start, restart or rotate) with the agent and model the
//! turn runs; `session::apply` writes it inside the turn's `BEGIN IMMEDIATE` transaction. The
//! actions that act on the live session hold it (`S`: the stored row for the turn, `()` where
//! only the decision matters), so the plan cannot name an action without its session.

use std::fmt;

pub use crate::config::CarryKind;

/// The live session of a conversation, as far as the policy cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Live<'a> {
    /// The agent the session belongs to.
    pub agent: &'a str,
    /// The model it was started with, if one was given.
    pub model: Option<&'a str>,
    /// Whether the agent has confirmed the session (reported its ID or wrote its transcript).
    /// An unconfirmed session was never created on the agent's side, so it is started again
    /// rather than resumed (resuming it could only fail with "not found").
    pub confirmed: bool,
    /// Whether a turn ran on the unconfirmed session and the agent never saved it (its first
    /// turn failed before that, see `cmd::turn`'s end): it is replaced by a new session with
    /// the reason [`Reason::Unsaved`], so the log keeps the failed turn where it ran. Only ever
    /// set for an unconfirmed session: a confirmed one is always resumed, so one with history
    /// is never started afresh and fails as lost when the agent no longer has it.
    pub unsaved: bool,
    /// Whether the session is a fork (`sticky fork`) the agent has not made yet: its first
    /// turn forks the source, so it is started again in place however that turn failed, and
    /// with the model a turn names (the fork is made with it); only another agent or `sticky
    /// new` replaces it.
    pub forking: bool,
}

/// What the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'a> {
    /// `sticky new`: rotate even when nothing else changed.
    pub fresh: bool,
    /// The agent named by `--agent` or `STICKY_AGENT`, if any.
    pub agent: Option<&'a str>,
    /// The model named by `--model` or `STICKY_MODEL`, if any.
    pub model: Option<&'a str>,
    /// The agent a conversation without a session starts with (from config, else `claude`).
    pub default_agent: &'a str,
    /// The recap `--carry[=KIND]` asks to carry into a new session (`--no-carry`: `Off`).
    pub carry: Option<CarryKind>,
    /// The recap a change of model or agent carries when the turn names none (config
    /// `carry_on_change`).
    pub carry_on_change: CarryKind,
}

/// Why a session was replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// `sticky new`.
    New,
    /// `--model` named another model than the session's.
    ModelChange,
    /// `--agent` named another agent than the session's.
    AgentChange,
    /// The user switched conversations inside the agent (e.g. Claude's `/clear`).
    Agent,
    /// The agent never saved the session: its first turn failed before anything was kept, so
    /// nothing can be lost by starting afresh.
    Unsaved,
}

impl Reason {
    /// The name stored in the database and shown to users.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::New => "new",
            Self::ModelChange => "model-change",
            Self::AgentChange => "agent-change",
            Self::Agent => "agent",
            Self::Unsaved => "unsaved",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the turn will run on: what the policy decided, with the agent and model it runs; `S` is
/// the live session its action acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan<S = ()> {
    /// What happens to the conversation's session.
    pub action: Action<S>,
    /// The agent the turn runs (the live session's when it is resumed).
    pub agent: String,
    /// The model it runs with (the live session's when it is resumed).
    pub model: Option<String>,
    /// The recap carried from the replaced session into the new one (never `Off`); `None`
    /// unless the plan replaces a session with one the user chose (`new`, another model or
    /// agent).
    pub carry: Option<CarryKind>,
}

/// What the policy does with the conversation's session; `S` is the live session, held by the
/// actions that act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action<S = ()> {
    /// Resume the live session by its stored ID, in its directory.
    Resume(S),
    /// No live session yet: start the first one.
    Start,
    /// The agent never confirmed the live session (it was never created on the agent's side):
    /// start it again in place, on the same row.
    Restart(S),
    /// Replace the live session by a new one, for this reason; the old one stays on record.
    Rotate(S, Reason),
}

impl<S> Action<S> {
    /// The name `doctor` shows (`resume`, `start`, `restart`, `rotate`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Resume(_) => "resume",
            Self::Start => "start",
            Self::Restart(_) => "restart",
            Self::Rotate(..) => "rotate",
        }
    }

    /// Why the live session is replaced, for a rotation.
    pub fn reason(&self) -> Option<Reason> {
        match self {
            Self::Rotate(_, reason) => Some(*reason),
            _ => None,
        }
    }

    /// The live session the action acts on (`None` for a start).
    pub fn live(&self) -> Option<&S> {
        match self {
            Self::Resume(live) | Self::Restart(live) | Self::Rotate(live, _) => Some(live),
            Self::Start => None,
        }
    }
}

/// Decides what a turn runs on. Never looks at "the most recent" anything: only the stored
/// live session (the policy's view of it, and the session `S` the action then holds) and the
/// request (rules 2 and 6).
pub fn plan<S>(live: Option<(Live<'_>, S)>, request: Request<'_>) -> Plan<S> {
    let Some((live, session)) = live else {
        // Rule 1: no session yet in this conversation.
        return Plan {
            action: Action::Start,
            agent: request.agent.unwrap_or(request.default_agent).to_owned(),
            model: request.model.map(str::to_owned),
            carry: None,
        };
    };
    let agent = request.agent.unwrap_or(live.agent);
    let agent_changed = agent != live.agent;
    // A model only carries over within the same agent: another agent's model name means
    // nothing to the new one.
    let model = match request.model {
        Some(model) => Some(model),
        None if agent_changed => None,
        None => live.model,
    };
    let action = if request.fresh {
        Action::Rotate(session, Reason::New) // rule 3
    } else if agent_changed {
        Action::Rotate(session, Reason::AgentChange) // rule 4
    } else if live.forking {
        Action::Restart(session) // a fork not made yet is made by this turn, with its model
    } else if model != live.model {
        Action::Rotate(session, Reason::ModelChange) // rule 4
    } else if live.confirmed {
        // Rules 2, 4 and 5: same agent and model, or none given; failures never rotate.
        Action::Resume(session)
    } else if live.unsaved {
        Action::Rotate(session, Reason::Unsaved)
    } else {
        Action::Restart(session)
    };
    Plan {
        carry: carry(action.reason(), request),
        action,
        agent: agent.to_owned(),
        model: model.map(str::to_owned),
    }
}

/// The recap a plan carries: the one asked for on a rotation the user chose, else the
/// configured one on a change of model or agent; nothing on any other action (a resumed
/// session knows its past, a first one has none, an unsaved one never got any).
fn carry(reason: Option<Reason>, request: Request<'_>) -> Option<CarryKind> {
    use Reason::{AgentChange, ModelChange, New};
    let kind = match (reason, request.carry) {
        (Some(New | ModelChange | AgentChange), Some(asked)) => asked,
        (Some(ModelChange | AgentChange), None) => request.carry_on_change,
        _ => return None,
    };
    (kind != CarryKind::Off).then_some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::unnecessary_wraps)] // reads like the `live` column of the table
    fn live<'a>(agent: &'a str, model: Option<&'a str>) -> Option<Live<'a>> {
        Some(Live {
            agent,
            model,
            confirmed: true,
            unsaved: false,
            forking: false,
        })
    }

    /// The policy's view of a live session, with nothing for the action to hold.
    fn held(live: Option<Live<'_>>) -> Option<(Live<'_>, ())> {
        live.map(|live| (live, ()))
    }

    fn request<'a>(fresh: bool, agent: Option<&'a str>, model: Option<&'a str>) -> Request<'a> {
        Request {
            fresh,
            agent,
            model,
            default_agent: "claude",
            carry: None,
            carry_on_change: CarryKind::Off,
        }
    }

    fn planned(action: Action, agent: &str, model: Option<&str>) -> Plan {
        Plan {
            action,
            agent: agent.to_owned(),
            model: model.map(str::to_owned),
            carry: None,
        }
    }

    fn start(agent: &str, model: Option<&str>) -> Plan {
        planned(Action::Start, agent, model)
    }

    fn resume(agent: &str, model: Option<&str>) -> Plan {
        planned(Action::Resume(()), agent, model)
    }

    fn rotate(agent: &str, model: Option<&str>, reason: Reason) -> Plan {
        planned(Action::Rotate((), reason), agent, model)
    }

    #[test]
    #[allow(clippy::too_many_lines)] // one row per rule reads better than split tables
    fn every_rule_of_the_policy() {
        use Reason::{AgentChange, ModelChange, New, Unsaved};
        let unsaved = Some(Live {
            agent: "codex",
            model: None,
            confirmed: false,
            unsaved: true,
            forking: false,
        });
        let unconfirmed = Some(Live {
            agent: "claude",
            model: None,
            confirmed: false,
            unsaved: false,
            forking: false,
        });
        let forking = Some(Live {
            agent: "claude",
            model: Some("m1"),
            confirmed: false,
            unsaved: false,
            forking: true,
        });
        let cases: &[(&str, Option<Live<'_>>, Request<'_>, Plan)] = &[
            // rule 1: nothing yet -> start with the default agent, or the one asked for
            (
                "none starts",
                None,
                request(false, None, None),
                start("claude", None),
            ),
            (
                "none starts with model",
                None,
                request(false, None, Some("m1")),
                start("claude", Some("m1")),
            ),
            (
                "none starts asked agent",
                None,
                request(false, Some("codex"), None),
                start("codex", None),
            ),
            (
                "new with none starts",
                None,
                request(true, None, None),
                start("claude", None),
            ),
            // rule 2: a session exists -> resume it with its model
            (
                "exists resumes",
                live("claude", None),
                request(false, None, None),
                resume("claude", None),
            ),
            (
                "no model keeps session's",
                live("claude", Some("m1")),
                request(false, None, None),
                resume("claude", Some("m1")),
            ),
            (
                "same model resumes",
                live("claude", Some("m1")),
                request(false, None, Some("m1")),
                resume("claude", Some("m1")),
            ),
            (
                "same agent resumes",
                live("claude", Some("m1")),
                request(false, Some("claude"), None),
                resume("claude", Some("m1")),
            ),
            // rule 3: new rotates, keeping the session's agent and model unless asked otherwise
            (
                "new rotates",
                live("claude", Some("m1")),
                request(true, None, None),
                rotate("claude", Some("m1"), New),
            ),
            (
                "new with model",
                live("claude", Some("m1")),
                request(true, None, Some("m2")),
                rotate("claude", Some("m2"), New),
            ),
            (
                "new with agent",
                live("claude", Some("m1")),
                request(true, Some("codex"), None),
                rotate("codex", None, New),
            ),
            // rule 4: another model or agent rotates
            (
                "model change",
                live("claude", Some("m1")),
                request(false, None, Some("m2")),
                rotate("claude", Some("m2"), ModelChange),
            ),
            (
                "model on modelless",
                live("claude", None),
                request(false, None, Some("m2")),
                rotate("claude", Some("m2"), ModelChange),
            ),
            (
                "agent change",
                live("claude", Some("m1")),
                request(false, Some("codex"), None),
                rotate("codex", None, AgentChange),
            ),
            (
                "agent and model change",
                live("claude", None),
                request(false, Some("codex"), Some("gpt")),
                rotate("codex", Some("gpt"), AgentChange),
            ),
            // the default agent never rotates an existing session
            (
                "default agent ignored",
                live("codex", None),
                Request {
                    default_agent: "gemini",
                    ..request(false, None, None)
                },
                resume("codex", None),
            ),
            // a session the agent never created (no turn ran on it): start it again in place
            (
                "unconfirmed restarts",
                unconfirmed,
                request(false, None, None),
                planned(Action::Restart(()), "claude", None),
            ),
            // a session the agent never saved (its first turn failed): start afresh, recorded
            (
                "unsaved starts afresh",
                unsaved,
                request(false, None, None),
                rotate("codex", None, Unsaved),
            ),
            (
                "new on unsaved is new",
                unsaved,
                request(true, None, None),
                rotate("codex", None, New),
            ),
            (
                "agent change on unsaved",
                unsaved,
                request(false, Some("claude"), None),
                rotate("claude", None, AgentChange),
            ),
            // a fork not made yet (`sticky fork`): its turn makes it, with the model it names,
            // even after a failed try; only another agent or `sticky new` replaces it
            (
                "fork is made",
                forking,
                request(false, None, None),
                planned(Action::Restart(()), "claude", Some("m1")),
            ),
            (
                "fork with another model",
                forking,
                request(false, None, Some("m2")),
                planned(Action::Restart(()), "claude", Some("m2")),
            ),
            (
                "new on a fork",
                forking,
                request(true, None, None),
                rotate("claude", Some("m1"), New),
            ),
            (
                "agent change on a fork",
                forking,
                request(false, Some("codex"), None),
                rotate("codex", None, AgentChange),
            ),
        ];
        for (name, live, request, want) in cases {
            assert_eq!(plan(held(*live), *request), *want, "{name}");
        }
    }

    #[test]
    fn an_unconfirmed_session_starts_again_in_place() {
        let unconfirmed = Some(Live {
            agent: "claude",
            model: Some("m1"),
            confirmed: false,
            unsaved: false,
            forking: false,
        });
        assert_eq!(
            plan(held(unconfirmed), request(false, None, None)),
            planned(Action::Restart(()), "claude", Some("m1"))
        );
        // an explicit rotation is still recorded as one
        assert_eq!(
            plan(held(unconfirmed), request(true, None, None)),
            rotate("claude", Some("m1"), Reason::New)
        );
    }

    #[test]
    #[allow(clippy::too_many_lines)] // one row per rule reads better than split tables
    fn which_rotations_carry_a_recap() {
        use CarryKind::{Off, Recap, Summary};
        let asked = |carry, fresh, agent, model| Request {
            carry,
            ..request(fresh, agent, model)
        };
        let configured = |carry_on_change, fresh, agent, model| Request {
            carry_on_change,
            ..request(fresh, agent, model)
        };
        let unsaved = Some(Live {
            agent: "claude",
            model: None,
            confirmed: false,
            unsaved: true,
            forking: false,
        });
        // (name, live, request, the recap carried)
        let cases: &[(&str, Option<Live<'_>>, Request<'_>, Option<CarryKind>)] = &[
            (
                "carry on new",
                live("claude", None),
                asked(Some(Recap), true, None, None),
                Some(Recap),
            ),
            (
                "summary on agent change",
                live("claude", None),
                asked(Some(Summary), false, Some("codex"), None),
                Some(Summary),
            ),
            (
                "carry on model change",
                live("claude", Some("m1")),
                asked(Some(Recap), false, None, Some("m2")),
                Some(Recap),
            ),
            (
                "carry on a resume carries nothing",
                live("claude", None),
                asked(Some(Recap), false, None, None),
                None,
            ),
            (
                "carry on the first session carries nothing",
                None,
                asked(Some(Recap), false, None, None),
                None,
            ),
            (
                "carry on an unsaved session carries nothing",
                unsaved,
                asked(Some(Recap), false, None, None),
                None,
            ),
            (
                "config carries on an agent change",
                live("claude", None),
                configured(Recap, false, Some("codex"), None),
                Some(Recap),
            ),
            (
                "config carries on a model change",
                live("claude", Some("m1")),
                configured(Summary, false, None, Some("m2")),
                Some(Summary),
            ),
            (
                "config does not carry on new",
                live("claude", None),
                configured(Recap, true, None, None),
                None,
            ),
            (
                "no-carry wins over config",
                live("claude", None),
                Request {
                    carry: Some(Off),
                    ..configured(Recap, false, Some("codex"), None)
                },
                None,
            ),
            (
                "carry=off on new",
                live("claude", None),
                asked(Some(Off), true, None, None),
                None,
            ),
        ];
        for (name, live, request, want) in cases {
            assert_eq!(plan(held(*live), *request).carry, *want, "{name}");
        }
    }

    #[test]
    fn reasons_have_their_stored_names() {
        let names: Vec<_> = [
            Reason::New,
            Reason::ModelChange,
            Reason::AgentChange,
            Reason::Agent,
            Reason::Unsaved,
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            names,
            ["new", "model-change", "agent-change", "agent", "unsaved"]
        );
    }
}
