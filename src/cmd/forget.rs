//! `sticky forget`: deletes a conversation for good, its rows and its vault copies, after a
//! confirmation on a terminal (`--yes` otherwise).

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::view::escape;
use super::{Call, Run, json_keys};
use crate::exit::StickyError;
use crate::lock;
use crate::vault::Vault;

/// The options of `sticky forget`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Delete without asking (needed when stdin is not a terminal).
    #[arg(short, long)]
    pub yes: bool,
}

/// `sticky threads --prune`: forget, for many threads at once.
pub(super) mod prune;

/// The `--json` object.
#[derive(Serialize, Default)]
struct Forgot<'a> {
    thread: &'a str,
    /// The sessions deleted.
    sessions: usize,
    /// The turns deleted.
    turns: usize,
    /// The sessions whose copies were deleted from the vault.
    vault_copies: usize,
}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(&call.rewriting("forget")?, self)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<Forgot<'static>>()
    }

    fn reports(&self) -> bool {
        false
    }
}

/// Deletes the conversation's rows and vault copies.
fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let unknown = || {
        StickyError::Usage(format!(
            "thread {} does not exist in this project; `sticky threads` lists them",
            ctx.thread
        ))
    };
    let mut store = ctx.existing_store()?.ok_or_else(unknown)?;
    let thread = store.thread(&ctx.thread)?.ok_or_else(unknown)?;
    if let Some(live) = store.live_session(thread.id)? {
        super::standing::refuse_shared_thread(&ctx.thread, &live, &ctx.project, "forget")?;
    }
    // No turn may run on the conversation from the count to the end: a turn that began after
    // the question would be deleted without having been named in it.
    let _lock = lock_idle(ctx)?;
    let sessions = store.sessions(thread.id)?;
    let turns = store.turns(thread.id)?.len();
    let vault = Vault::new(&ctx.project.state.vault);
    let copies = super::vault::copies(&store, &vault, &sessions, &[thread.id])?;
    let what = describe(&ctx.thread, sessions.len(), turns, copies.deleted.len());
    if !args.yes && !confirmed(&what)? {
        crate::msg::write(format_args!("nothing forgotten"));
        return Ok(Report::nothing());
    }
    copies.delete(&vault)?;
    let forgotten = store.forget_thread(thread.id)?;
    let report = Forgot {
        thread: &ctx.thread,
        sessions: forgotten.sessions,
        turns: forgotten.turns,
        vault_copies: copies.deleted.len(),
    };
    if ctx.json {
        return Report::json(&report);
    }
    Ok(Report::text(
        format!("forgot {what}; the agent's own files of these sessions are where it keeps them\n")
            .into_bytes(),
    ))
}

/// What forget deletes, as the question and the report name it.
fn describe(thread: &str, sessions: usize, turns: usize, copies: usize) -> String {
    format!(
        "thread {}: {sessions} session{}, {turns} turn{} and {copies} vault cop{}",
        escape(thread),
        plural(sessions),
        plural(turns),
        if copies == 1 { "y" } else { "ies" }
    )
}

/// The conversation's turn lock, refused at once while a turn runs.
fn lock_idle(ctx: &Context) -> Result<lock::TurnLock> {
    Ok(lock::lock(
        &ctx.project.state.locks,
        &ctx.thread,
        Duration::ZERO,
        &mut || {},
    )?
    .ok_or_else(|| {
        StickyError::Busy(format!(
            "thread {} is running a turn; forget it once the turn is over",
            ctx.thread
        ))
    })?)
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// Asks on the terminal whether to forget `what`; without a terminal to ask on, a usage error
/// names `--yes`.
fn confirmed(what: &str) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Err(StickyError::Usage(format!(
            "forget deletes {what} for good and asks first, but stdin is not a terminal; \
             confirm with --yes"
        ))
        .into());
    }
    Ok(crate::msg::ask(format_args!(
        "forget {what}? This cannot be undone."
    ))?)
}
