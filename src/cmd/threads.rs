//! `sticky threads`: the conversations of the project, each with its live session, its number
//! of turns and when it was last active.
//!
//! Reads only: without a database it lists nothing and creates nothing. Every figure is an
//! index lookup per thread (live session, turn counts per session, last turn), so the listing
//! stays fast whatever the number of turns. git runs only when a thread is named after a
//! branch, to say whether the branch still exists (`git.rs`). `--prune` is `forget/prune.rs`.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::view::{SessionView, escape, format_time, short_id};
use super::{Call, Run, forget, json_keys};
use crate::git::{BranchState, Branches};
use crate::store::{Millis, SessionRow, Store, ThreadRow};

/// The options of `sticky threads`.
#[derive(Debug, Clone, clap::Args, Default)]
pub struct Args {
    /// Forget the threads whose git branch was deleted, or merged into the default branch (and
    /// is checked out nowhere), with their sessions, turns and vault copies, as `sticky forget`
    /// does. Lists them and asks first when stdin is a terminal; `--yes` confirms without
    /// asking, and is needed when stdin is not a terminal. A thread running a turn is left.
    #[arg(long)]
    pub prune: bool,

    /// Prune without asking.
    #[arg(short, long, requires = "prune")]
    pub yes: bool,
}

/// One thread and its figures.
struct Summary {
    thread: ThreadRow,
    live: Option<SessionRow>,
    sessions: usize,
    turns: i64,
    last_activity: Millis,
}

/// The `--json` object.
#[derive(Serialize, Default)]
struct Threads<'a> {
    /// The thread in use (`-t`, `STICKY_THREAD`, else `main`).
    current: &'a str,
    threads: Vec<ThreadView<'a>>,
}

#[derive(Serialize)]
struct ThreadView<'a> {
    name: &'a str,
    created_at: Millis,
    /// The live session; `null` before the thread's first session.
    session: Option<SessionView<'a>>,
    sessions: usize,
    turns: i64,
    /// The start or end of its newest turn, else its creation (Unix milliseconds).
    last_activity: Millis,
    current: bool,
    /// The git branch the thread is named after; `null` for a thread named otherwise.
    branch: Option<BranchView<'a>>,
}

/// A thread's branch and what became of it (`null`: git cannot tell).
#[derive(Serialize)]
struct BranchView<'a> {
    name: &'a str,
    /// Whether a local branch of that name exists.
    exists: Option<bool>,
    /// Whether it is merged into the default branch.
    merged: Option<bool>,
}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        if self.prune {
            forget::prune::run(&call.context()?, self)
        } else {
            run(&call.context()?)
        }
    }

    fn json_keys(&self) -> Vec<String> {
        if self.prune {
            json_keys::<forget::prune::Pruned>()
        } else {
            json_keys::<Threads<'static>>()
        }
    }

    fn reports(&self) -> bool {
        !self.prune
    }
}

/// Prints the project's threads, oldest first.
fn run(ctx: &Context) -> Result<Report> {
    let summaries: Vec<Summary> = match ctx.existing_store()? {
        None => Vec::new(),
        Some(store) => store
            .threads()?
            .into_iter()
            .map(|thread| summarize(&store, thread))
            .collect::<Result<_>>()?,
    };
    let branches = read_branches(ctx, &summaries);
    let state = |summary: &Summary| -> Option<Option<BranchState>> {
        let name = summary.thread.branch.as_deref()?;
        Some(branches.as_ref().map(|b| b.state(name)))
    };
    if ctx.json {
        return Report::json(&Threads {
            current: &ctx.thread,
            threads: summaries
                .iter()
                .map(|summary| ThreadView {
                    name: &summary.thread.name,
                    created_at: summary.thread.created_at,
                    session: summary.live.as_ref().map(SessionView::from),
                    sessions: summary.sessions,
                    turns: summary.turns,
                    last_activity: summary.last_activity,
                    current: summary.thread.name == ctx.thread,
                    branch: state(summary).map(|state| BranchView {
                        name: summary.thread.branch.as_deref().unwrap_or_default(),
                        exists: state.map(|state| state != BranchState::Deleted),
                        merged: state.map(|state| state == BranchState::Merged),
                    }),
                })
                .collect(),
        });
    }
    let shown: Vec<Option<String>> = summaries
        .iter()
        .map(|summary| {
            let name = summary.thread.branch.as_deref()?;
            Some(shown_branch(name, state(summary)?))
        })
        .collect();
    let mut out = Vec::new();
    print_text(&mut out, ctx, &summaries, &shown)?;
    Ok(Report::paged(out))
}

/// The branches of the project's repository, when a thread is named after one; `None` when
/// none is, or git cannot tell (said on stderr).
fn read_branches(ctx: &Context, summaries: &[Summary]) -> Option<Branches> {
    summaries.iter().find(|s| s.thread.branch.is_some())?;
    match Branches::read(&ctx.project.dir) {
        Ok(branches) => Some(branches),
        Err(error) => {
            note!(
                "cannot tell which threads' branches still exist: {}",
                escape(&error.to_string())
            );
            None
        }
    }
}

/// A branch as the listing shows it: its name, and what became of it.
fn shown_branch(name: &str, state: Option<BranchState>) -> String {
    let name = escape(name);
    match state {
        Some(BranchState::Exists) => name.into_owned(),
        Some(BranchState::Merged) => format!("{name} (merged)"),
        Some(BranchState::Deleted) => format!("{name} (deleted)"),
        None => format!("{name} (?)"),
    }
}

/// One line per thread, the current one marked; the BRANCH column when a thread has one.
fn print_text(
    out: &mut impl Write,
    ctx: &Context,
    summaries: &[Summary],
    branches: &[Option<String>],
) -> std::io::Result<()> {
    let with_branches = branches.iter().any(Option::is_some);
    if summaries.is_empty() {
        writeln!(
            out,
            "no threads yet: the first turn creates {}",
            escape(&ctx.thread)
        )?;
    } else {
        write!(
            out,
            "  {:<16} {:<10} {:<16} {:<9} {:>5}  LAST ACTIVITY",
            "THREAD", "AGENT", "MODEL", "SESSION", "TURNS"
        )?;
        if with_branches {
            write!(out, "{:<10}  BRANCH", "")?;
        }
        writeln!(out)?;
    }
    for (summary, branch) in summaries.iter().zip(branches) {
        let mark = if summary.thread.name == ctx.thread {
            '*'
        } else {
            ' '
        };
        let (agent, model, id) = match &summary.live {
            Some(live) => (
                escape(&live.agent),
                escape(live.model.as_deref().unwrap_or("default")),
                escape(live.agent_session_id.as_deref().map_or("-", short_id)),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        write!(
            out,
            "{mark} {:<16} {agent:<10} {model:<16} {id:<9} {:>5}  {}",
            escape(&summary.thread.name),
            summary.turns,
            format_time(summary.last_activity)
        )?;
        if with_branches {
            write!(out, "  {}", branch.as_deref().unwrap_or("-"))?;
        }
        writeln!(out)?;
    }
    Ok(())
}

fn summarize(store: &Store, thread: ThreadRow) -> Result<Summary> {
    let sessions = store.sessions(thread.id)?;
    let mut turns = 0;
    for session in &sessions {
        turns += store.turn_count(session.id)?;
    }
    let last_turn = store.last_turn(thread.id)?;
    let newest_session = sessions.iter().map(|s| s.created_at).max();
    let last_activity = last_turn
        .map(|turn| turn.ended_at.unwrap_or(turn.started_at))
        .into_iter()
        .chain(newest_session)
        .chain([thread.created_at])
        .max()
        .unwrap_or(thread.created_at);
    Ok(Summary {
        live: sessions.iter().find(|s| s.ended_at.is_none()).cloned(),
        sessions: sessions.len(),
        thread,
        turns,
        last_activity,
    })
}
