//! The session policy and its two ends: which agent session a turn runs on, and what the
//! turn's end makes of it.
//!
//! - [`plan`] (pure, table-tested): the conversation's live session and the user's request give
//!   a [`Plan`]: resume, start, restart or rotate, with the agent and model the turn runs.
//! - [`apply`]: the plan written inside the turn's `BEGIN IMMEDIATE` transaction, and the stored
//!   live session read into the policy's view ([`live_of`]), checked against the project
//!   ([`ensure_in_project`]), its stored ID and model against what may become the agent's
//!   arguments ([`ensure_plain_arguments`]). `doctor` shows the same plan without writing it.
//! - [`Observed`] (a pure reducer): what the agent reported during the turn, folded from its
//!   events.
//! - [`verdict`] (pure, table-tested): the turn's end: status, exit, error line and what
//!   becomes of the session ([`SessionAction`]).
//! - [`settle`]: the verdict written at the turn's end, as `apply` writes the plan at its start.

mod apply;
mod observed;
mod plan;
mod settle;
mod verdict;

pub use apply::{
    Aim, Thread, apply, ensure_in_project, ensure_plain_arguments, id_problem, live_of,
};
pub use observed::{Effect, MAX_AGENT_OUTPUT, Observed};
pub use plan::{Action, CarryKind, Live, Plan, Reason, Request, plan};
pub use settle::{Moved, Settled, Turn as Settling, settle};
pub use verdict::{Asked, Ended, Evidence, SessionAction, Unrun, Verdict, verdict};
