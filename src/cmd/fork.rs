//! `sticky fork NAME [PROMPT]`: thread NAME made a fork of this conversation's live session,
//! and its first turn when a prompt is given. The fork is [`turn`](super::turn)'s; this module
//! is the command's entry.

use anyhow::Result;

use super::new::TurnObject;
use super::output::Report;
use super::{Call, Context, Run, ThreadUse, json_keys, turn};
use crate::cli::{ForkArgs, Origin, Origins};

impl Run for ForkArgs {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        turn::fork(&call.context()?, self, |name| {
            // The fork's thread is NAME as given, as `-t NAME` gives it.
            let mut global = call.global.clone();
            name.clone_into(&mut global.thread);
            let origins = Origins {
                thread: Origin::Flag,
                ..call.origins
            };
            Context::new(&global, origins, ThreadUse::Turn)
        })
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<TurnObject>()
    }

    fn reports(&self) -> bool {
        false
    }
}
