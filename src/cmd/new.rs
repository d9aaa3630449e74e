//! `sticky new`: a fresh session for the conversation, and its first turn when a prompt is
//! given. The turn itself is [`turn`](super::turn)'s; this module is the command's entry, and
//! the shape of a turn's `--json` object for the keys of its error object.

use anyhow::Result;
use serde::Serialize;

use super::output::Report;
use super::{Call, Run, json_keys, turn};
use crate::cli::TurnArgs;

impl Run for TurnArgs {
    /// `sticky new [PROMPT]`: the top level's turn (no command) is run by the dispatch itself.
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        turn::run(&call.rewriting("new")?, self, true)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<TurnObject>()
    }

    fn reports(&self) -> bool {
        false
    }
}

/// The keys of a turn's `--json` object (`sticky PROMPT`, `new`, `fork`), as the turn prints
/// them (`cmd::turn`'s report, and its object for a session made without a turn): the error
/// object of a turn that could not run has them too. The integration tests hold the two to
/// each other and to docs/json.md.
#[derive(Serialize, Default)]
pub struct TurnObject {
    thread: (),
    project: (),
    session: (),
    turn: (),
    answer: (),
    error: (),
    exit_code: (),
}
