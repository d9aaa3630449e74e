//! `sticky threads --prune`: forgets the threads whose git branch was deleted, or merged into
//! the default branch, each as `sticky forget` forgets one (its rows and its vault copies,
//! under its turn lock), after one confirmation that lists them.
//!
//! Only threads a turn recorded a branch for (`-t @branch`, `-t @pr`, `thread = "branch"`)
//! when it created them are candidates, never the default thread `main`; what counts as gone is `git::Branches::gone` (a merged branch checked out
//! in a worktree, the default branch and a branch whose tip is the default branch's are kept).

use std::io::IsTerminal;

use anyhow::Result;
use serde::Serialize;

use super::{describe, plural};
use crate::cmd::Context;
use crate::cmd::output::Report;
use crate::cmd::threads::Args as ThreadsArgs;
use crate::cmd::vault::copies;
use crate::cmd::view::escape;
use crate::exit::StickyError;
use crate::git::{BranchState, Branches, GitError};
use crate::lock::{self, TurnLock};
use crate::store::{SessionRow, Store, ThreadRow};
use crate::vault::Vault;

/// The `--json` object of `sticky threads --prune`.
#[derive(Serialize, Default)]
pub(in crate::cmd) struct Pruned {
    /// The threads forgotten.
    pruned: Vec<PrunedThread>,
    /// The threads left because a turn was running on them.
    busy: Vec<String>,
}

#[derive(Serialize)]
struct PrunedThread {
    thread: String,
    branch: String,
    /// `deleted` or `merged`.
    why: &'static str,
    sessions: usize,
    turns: usize,
    vault_copies: usize,
}

/// A thread to forget, its turn lock held.
struct Candidate {
    thread: ThreadRow,
    why: &'static str,
    sessions: Vec<SessionRow>,
    turns: usize,
    /// The sessions whose vault copy forgetting it deletes (see [`count_copies`]).
    copies: usize,
    _lock: TurnLock,
}

impl Candidate {
    /// What forgetting it deletes and why, as the question and the report say it.
    fn describe(&self) -> String {
        format!(
            "{} (its branch {} was {})",
            describe(
                &self.thread.name,
                self.sessions.len(),
                self.turns,
                self.copies
            ),
            escape(self.thread.branch.as_deref().unwrap_or_default()),
            self.why
        )
    }
}

/// Forgets the threads of deleted and merged branches.
pub fn run(ctx: &Context, args: &ThreadsArgs) -> Result<Report> {
    let nothing = |busy: Vec<String>| {
        aside!("no thread's branch was deleted or merged: nothing to prune");
        if ctx.json {
            return Report::json(&Pruned {
                pruned: Vec::new(),
                busy,
            });
        }
        Ok(Report::nothing())
    };
    let Some(mut store) = ctx.existing_store()? else {
        return nothing(Vec::new());
    };
    let threads: Vec<ThreadRow> = store
        .threads()?
        .into_iter()
        // The default thread is never pruned, whatever branch a turn recorded on it.
        .filter(|thread| thread.branch.is_some() && thread.name != "main")
        .collect();
    if threads.is_empty() {
        return nothing(Vec::new());
    }
    let vault = Vault::new(&ctx.project.state.vault);
    let (mut candidates, busy) = candidates(ctx, &store, threads)?;
    count_copies(&store, &vault, &mut candidates)?;
    for name in &busy {
        note!(
            "thread {} is running a turn; it is left (prune again once the turn is \
             over)",
            escape(name)
        );
    }
    if candidates.is_empty() {
        return nothing(busy);
    }
    if !args.yes && !confirmed(&candidates)? {
        crate::msg::write(format_args!("nothing forgotten"));
        return Ok(Report::nothing());
    }
    let (pruned, mut lines) = forget(&mut store, &vault, &candidates)?;
    if ctx.json {
        return Report::json(&Pruned { pruned, busy });
    }
    lines.push_str("the agent's own files of these sessions are where it keeps them\n");
    Ok(Report::text(lines.into_bytes()))
}

/// The `threads` whose branch is gone, each with what forgetting it deletes and its turn lock
/// held; and the names of those a turn is running on, which are left.
fn candidates(
    ctx: &Context,
    store: &Store,
    threads: Vec<ThreadRow>,
) -> Result<(Vec<Candidate>, Vec<String>)> {
    let branches = read_branches(ctx)?;
    let mut candidates = Vec::new();
    let mut busy = Vec::new();
    for thread in threads {
        let branch = thread.branch.as_deref().unwrap_or_default();
        if !branches.gone(branch) {
            continue;
        }
        // A thread whose session runs in another directory (a `STICKY_DB` two projects share)
        // follows that directory's git, not this one's: left for a prune there (review 17, M4).
        let sessions = store.sessions(thread.id)?;
        if sessions
            .last()
            .is_some_and(|session| session.directory != ctx.project.dir)
        {
            continue;
        }
        let why = match branches.state(branch) {
            BranchState::Deleted => "deleted",
            _ => "merged",
        };
        // No turn may run on the thread from the count to the end, as `forget` holds it.
        let Some(lock) = lock::try_lock(&ctx.project.state.locks, &thread.name)? else {
            busy.push(thread.name);
            continue;
        };
        let turns = store.turns(thread.id)?.len();
        candidates.push(Candidate {
            thread,
            why,
            sessions,
            turns,
            copies: 0,
            _lock: lock,
        });
    }
    Ok((candidates, busy))
}

/// Counts, for each candidate, the vault copies forgetting it deletes: those no thread left
/// after the prune still takes (review 19, M2), each counted once, by the first candidate
/// that has it on record.
fn count_copies(store: &Store, vault: &Vault, candidates: &mut [Candidate]) -> Result<()> {
    let leaving: Vec<i64> = candidates.iter().map(|c| c.thread.id).collect();
    let mut counted: Vec<(String, String)> = Vec::new();
    for candidate in candidates.iter_mut() {
        let copies = copies(store, vault, &candidate.sessions, &leaving)?;
        for session in copies.deleted {
            let id = session.agent_session_id.clone().unwrap_or_default();
            let key = (session.agent.clone(), id);
            if !counted.contains(&key) {
                counted.push(key);
                candidate.copies += 1;
            }
        }
    }
    Ok(())
}

/// Forgets the `candidates` with their vault copies: what was forgotten, and the lines that
/// say it.
fn forget(
    store: &mut Store,
    vault: &Vault,
    candidates: &[Candidate],
) -> Result<(Vec<PrunedThread>, String)> {
    let mut pruned = Vec::new();
    let mut lines = String::new();
    let leaving: Vec<i64> = candidates.iter().map(|c| c.thread.id).collect();
    for candidate in candidates {
        copies(store, vault, &candidate.sessions, &leaving)?.delete(vault)?;
        let forgotten = store.forget_thread(candidate.thread.id)?;
        lines.push_str(&format!("forgot {}\n", candidate.describe()));
        pruned.push(PrunedThread {
            thread: candidate.thread.name.clone(),
            branch: candidate.thread.branch.clone().unwrap_or_default(),
            why: candidate.why,
            sessions: forgotten.sessions,
            turns: forgotten.turns,
            vault_copies: candidate.copies,
        });
    }
    Ok((pruned, lines))
}

/// Asks on the terminal whether to forget the `candidates`; without a terminal to ask on, a
/// usage error lists them and names `--yes`.
fn confirmed(candidates: &[Candidate]) -> Result<bool> {
    let list = candidates
        .iter()
        .fold(String::new(), |mut list, candidate| {
            list.push_str("\n  ");
            list.push_str(&candidate.describe());
            list
        });
    let count = format!("{} thread{}", candidates.len(), plural(candidates.len()));
    if !std::io::stdin().is_terminal() {
        return Err(StickyError::Usage(format!(
            "--prune forgets {count} for good and asks first, but stdin is not a terminal; \
             confirm with --yes:{list}"
        ))
        .into());
    }
    Ok(crate::msg::ask(format_args!(
        "forget {count} whose branch is gone?{list}\nThis cannot be undone."
    ))?)
}

/// The branches of the project's repository, or why `--prune` cannot tell what became of them.
fn read_branches(ctx: &Context) -> Result<Branches, StickyError> {
    Branches::read(&ctx.project.dir).map_err(|error| match error {
        GitError::NotGit => StickyError::Usage(format!(
            "--prune forgets the threads of deleted and merged git branches, but {} is not in \
             a git repository; forget a thread with `sticky forget -t NAME`",
            ctx.project.dir.display()
        )),
        GitError::Failed(why) => StickyError::Usage(format!(
            "--prune cannot tell which branches were deleted or merged ({why}); forget a \
             thread with `sticky forget -t NAME`"
        )),
    })
}
