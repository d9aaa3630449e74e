//! A sticky the agent of a running turn runs: a tool call asking for a second opinion, an
//! export of the conversation, a fork of it. On the thread its own turn holds, it would wait
//! for a turn that cannot end before it does (review 22, L3; review 24, L1); the turn, `export`
//! and `fork` ask [`refuse_inside_own_turn`] before they wait.

use super::view::escape;
use crate::exit::StickyError;
use crate::store::{Store, TurnStatus};

/// A sticky the agent of a running turn runs (a tool call asking for a second opinion, an
/// export of the conversation) would wait for a turn that cannot end before it does (review
/// 22, L3; review 24, L1): run by an agent (`STICKY_ACTIVE`), a command that takes thread
/// `thread`'s lock (`doing`, as the message says it) is refused at once (75) when the turn
/// running on it is this process's ancestor.
pub fn refuse_inside_own_turn(store: &Store, thread: &str, doing: &str) -> Result<(), StickyError> {
    if std::env::var_os("STICKY_ACTIVE").is_none() {
        return Ok(());
    }
    let Some(turn) = running_turn(store, thread)
        .filter(|turn| turn.host == crate::host::name() && crate::host::is_ancestor(turn.pid))
    else {
        return Ok(());
    };
    Err(StickyError::Busy(format!(
        "thread {} is busy with turn #{}, the one this sticky runs inside (its agent started \
         it), which holds the thread until it ends: waiting would never end; {doing}",
        escape(thread),
        turn.id
    )))
}

/// The turn running on thread `thread` now, as the database records it.
pub fn running_turn(store: &Store, thread: &str) -> Option<crate::store::TurnRow> {
    store
        .thread(thread)
        .ok()
        .flatten()
        .and_then(|thread| store.last_turn(thread.id).ok().flatten())
        .filter(|turn| turn.status == TurnStatus::Running)
}
