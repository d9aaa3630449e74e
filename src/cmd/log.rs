//! `sticky log`: the turns of the conversation across all its sessions, with each rotation
//! and its reason shown as lineage.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::view::{
    SessionView, TurnView, escape, format_duration, format_time, one_line, session_summary,
    shown_status, status_name,
};
use crate::store::{SessionRow, TurnRow};

/// Prints the conversation's sessions and turns, oldest first.
pub fn run(ctx: &Context) -> Result<Report> {
    let (sessions, turns) = match ctx.existing_store()? {
        None => (Vec::new(), Vec::new()),
        Some(store) => match store.thread(&ctx.thread)? {
            None => (Vec::new(), Vec::new()),
            Some(thread) => (store.sessions(thread.id)?, store.turns(thread.id)?),
        },
    };
    if ctx.json {
        return Report::json(&Log {
            thread: &ctx.thread,
            sessions: sessions
                .iter()
                .map(|session| SessionLog {
                    session: SessionView::from(session),
                    turns: turns_of(&turns, session).map(TurnView::from).collect(),
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
        }
    }
    Ok(Report::paged(out))
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
    turns: Vec<TurnView<'a>>,
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
