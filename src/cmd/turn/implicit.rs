//! The note a turn gives when the environment, not a flag, rotates the session: `STICKY_MODEL`
//! or `STICKY_AGENT` left in a shell profile or a CI file starts a new session as `-m` or `-a`
//! would, which the design allows, but nothing on the command line asked for it.

use super::super::Context;
use super::super::view::escape;
use crate::cli::Origin;
use crate::session::{Action, Plan, Reason};
use crate::store::SessionRow;

/// Says on stderr (one line; not with `--quiet` or `--json`) that the environment rotates the
/// session, naming the variable, the session's value and the way to stay.
pub(super) fn note(ctx: &Context, plan: &Plan<&SessionRow>) {
    let Action::Rotate(live, reason) = plan.action else {
        return;
    };
    let (variable, what, old, new) = match reason {
        Reason::ModelChange if ctx.origins.model == Origin::Environment => (
            "STICKY_MODEL",
            "model",
            live.model.as_deref().unwrap_or("(the agent's default)"),
            plan.model.as_deref().unwrap_or_default(),
        ),
        Reason::AgentChange if ctx.origins.agent == Origin::Environment => (
            "STICKY_AGENT",
            "agent",
            live.agent.as_str(),
            plan.agent.as_str(),
        ),
        _ => return,
    };
    crate::aside!(
        "{variable}={} in the environment differs from the session's {what} {}: a new \
         session starts ({reason}); unset {variable} to stay in the old one",
        escape(new),
        escape(old)
    );
}
