//! `sticky threads`: the conversations of the project, each with its live session, its number
//! of turns and when it was last active.
//!
//! Reads only: without a database it lists nothing and creates nothing. Every figure is an
//! index lookup per thread (live session, turn counts per session, last turn), so the listing
//! stays fast whatever the number of turns.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::view::{SessionView, escape, format_time, short_id};
use crate::store::{Millis, SessionRow, Store, ThreadRow};

/// One thread and its figures.
struct Summary {
    thread: ThreadRow,
    live: Option<SessionRow>,
    sessions: usize,
    turns: i64,
    last_activity: Millis,
}

/// The `--json` object.
#[derive(Serialize)]
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
}

/// Prints the project's threads, oldest first.
pub fn run(ctx: &Context) -> Result<Report> {
    let summaries = match ctx.existing_store()? {
        None => Vec::new(),
        Some(store) => store
            .threads()?
            .into_iter()
            .map(|thread| summarize(&store, thread))
            .collect::<Result<_>>()?,
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
                })
                .collect(),
        });
    }
    let mut out = Vec::new();
    print_text(&mut out, ctx, &summaries)?;
    Ok(Report::paged(out))
}

/// One line per thread, the current one marked.
fn print_text(out: &mut impl Write, ctx: &Context, summaries: &[Summary]) -> std::io::Result<()> {
    if summaries.is_empty() {
        writeln!(
            out,
            "no threads yet: the first turn creates {}",
            escape(&ctx.thread)
        )?;
    } else {
        writeln!(
            out,
            "  {:<16} {:<10} {:<16} {:<9} {:>5}  LAST ACTIVITY",
            "THREAD", "AGENT", "MODEL", "SESSION", "TURNS"
        )?;
    }
    for summary in summaries {
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
        writeln!(
            out,
            "{mark} {:<16} {agent:<10} {model:<16} {id:<9} {:>5}  {}",
            escape(&summary.thread.name),
            summary.turns,
            format_time(summary.last_activity)
        )?;
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
