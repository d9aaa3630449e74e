//! `sticky log`: the turns of the conversation across all its sessions, with each rotation
//! and its reason shown as lineage.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::vault::human_size;
use super::view::{
    SessionView, TurnView, escape, format_duration, format_time, one_line, session_summary,
    shown_status, status_name,
};
use crate::store::{RestoreRow, SessionRow, TurnRow};

/// Prints the conversation's sessions and turns, oldest first.
pub fn run(ctx: &Context) -> Result<Report> {
    let (sessions, turns, restores) = match ctx.existing_store()? {
        None => (Vec::new(), Vec::new(), Vec::new()),
        Some(store) => match store.thread(&ctx.thread)? {
            None => (Vec::new(), Vec::new(), Vec::new()),
            Some(thread) => (
                store.sessions(thread.id)?,
                store.turns(thread.id)?,
                store.restores(thread.id)?,
            ),
        },
    };
    let restore_of = |turn: &TurnRow| restores.iter().find(|r| r.turn_id == turn.id);
    if ctx.json {
        return Report::json(&Log {
            thread: &ctx.thread,
            sessions: sessions
                .iter()
                .map(|session| SessionLog {
                    session: SessionView::from(session),
                    turns: turns_of(&turns, session)
                        .map(|turn| LoggedTurn {
                            turn: TurnView::from(turn),
                            restored: restore_of(turn).map(|r| Restored {
                                files: r.files,
                                bytes: r.bytes,
                            }),
                        })
                        .collect(),
                })
                .collect(),
        });
    }
    let mut out = Vec::new();
    if sessions.is_empty() {
        writeln!(out, "no turns yet in thread {}", escape(&ctx.thread))?;
    }
    for session in &sessions {
        print_session(&mut out, session)?;
        for turn in turns_of(&turns, session) {
            print_turn(&mut out, turn)?;
            if let Some(restore) = restore_of(turn) {
                print_restore(&mut out, restore)?;
            }
        }
    }
    Ok(Report::paged(out))
}

/// A turn that restored its lost session from the vault says so under it.
fn print_restore(out: &mut impl Write, restore: &RestoreRow) -> std::io::Result<()> {
    writeln!(
        out,
        "         restored {} file{} ({}) of the lost session from sticky's vault",
        restore.files,
        if restore.files == 1 { "" } else { "s" },
        human_size(u64::try_from(restore.bytes).unwrap_or(0))
    )
}

fn turns_of<'a>(turns: &'a [TurnRow], session: &SessionRow) -> impl Iterator<Item = &'a TurnRow> {
    let id = session.id;
    turns.iter().filter(move |turn| turn.session_id == id)
}

#[derive(Serialize)]
struct Log<'a> {
    thread: &'a str,
    sessions: Vec<SessionLog<'a>>,
}

#[derive(Serialize)]
struct SessionLog<'a> {
    #[serde(flatten)]
    session: SessionView<'a>,
    turns: Vec<LoggedTurn<'a>>,
}

/// A turn in the log: the turn, and what it restored from the vault (`null`: nothing).
#[derive(Serialize)]
struct LoggedTurn<'a> {
    #[serde(flatten)]
    turn: TurnView<'a>,
    restored: Option<Restored>,
}

/// What a turn restored from the vault.
#[derive(Serialize)]
struct Restored {
    files: i64,
    bytes: i64,
}

fn print_session(out: &mut impl Write, session: &SessionRow) -> std::io::Result<()> {
    let mut line = format!(
        "session #{} · {}",
        session.id,
        session_summary(session, "(not started)")
    );
    match (session.rotated_from, &session.rotation_reason) {
        (Some(from), Some(reason)) => {
            line.push_str(&format!(" · from #{from} ({})", escape(reason)));
        }
        _ => line.push_str(" · first"),
    }
    if session.ended_at.is_none() {
        line.push_str(" · live");
    }
    writeln!(out, "{line}")
}

fn print_turn(out: &mut impl Write, turn: &TurnRow) -> std::io::Result<()> {
    let outcome = match (turn.exit_code, turn.signal) {
        (Some(code), _) if code != 0 => format!("exit {code}"),
        (_, Some(signal)) => format!("signal {signal}"),
        _ => String::new(),
    };
    writeln!(
        out,
        "  {:>5}  {}  {:<11} {:>7} {:<8} {}",
        turn.id,
        format_time(turn.started_at),
        status_name(shown_status(turn)),
        turn.duration_ms.map(format_duration).unwrap_or_default(),
        outcome,
        turn.prompt.as_deref().map_or_else(
            || "(interactive)".to_owned(),
            |p| escape(&one_line(p, 60)).into_owned()
        )
    )
}
