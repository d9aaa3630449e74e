//! `sticky status`: the project, the conversation, its live session and its last turn.
//!
//! Reads only: without a database it says so and creates nothing.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::vault::VaultView;
use super::view::{
    CountedSession, SessionView, TurnView, escape, format_duration, format_time, one_line,
    session_summary,
};
use crate::store::{SessionRow, TurnRow};

/// Prints the status of the conversation.
pub fn run(ctx: &Context) -> Result<Report> {
    let (session, turns, last_turn) = match ctx.existing_store()? {
        None => (None, 0, None),
        Some(store) => match store.thread(&ctx.thread)? {
            None => {
                store.prove_intact_if_used()?;
                (None, 0, None)
            }
            Some(thread) => {
                let session = store.live_session(thread.id)?;
                if session.is_none() {
                    store.prove_intact_if_used()?;
                }
                let turns = match &session {
                    Some(session) => store.turn_count(session.id)?,
                    None => 0,
                };
                (session, turns, store.last_turn(thread.id)?)
            }
        },
    };
    if ctx.json {
        Report::json(&Status {
            project: ctx.project.dir.display().to_string(),
            database: ctx.project.state.db.display().to_string(),
            found: ctx.project.found.describe(),
            thread: &ctx.thread,
            session: session.as_ref().map(|row| CountedSession {
                session: SessionView::from(row),
                turns,
            }),
            last_turn: last_turn.as_ref().map(TurnView::from),
            vault: VaultView::read(ctx),
        })
    } else {
        let mut out = Vec::new();
        print_text(&mut out, ctx, session.as_ref(), turns, last_turn.as_ref())?;
        Ok(Report::text(out))
    }
}

#[derive(Serialize)]
struct Status<'a> {
    project: String,
    database: String,
    found: &'static str,
    thread: &'a str,
    session: Option<CountedSession<'a>>,
    last_turn: Option<TurnView<'a>>,
    vault: VaultView,
}

fn print_text(
    out: &mut impl Write,
    ctx: &Context,
    session: Option<&SessionRow>,
    turns: i64,
    last: Option<&TurnRow>,
) -> std::io::Result<()> {
    writeln!(
        out,
        "project   {} ({})",
        escape(&ctx.project.dir.display().to_string()),
        ctx.project.found.describe()
    )?;
    writeln!(
        out,
        "database  {}",
        escape(&ctx.project.state.db.display().to_string())
    )?;
    writeln!(out, "thread    {}", escape(&ctx.thread))?;
    writeln!(out, "vault     {}", VaultView::read(ctx).text())?;
    let Some(session) = session else {
        writeln!(
            out,
            "session   none yet: the next `sticky \"...\"` starts one"
        )?;
        return Ok(());
    };
    let summary = session_summary(session, "(not started yet)");
    writeln!(out, "session   {summary}")?;
    let mut since = format!(
        "          since {}, {turns} turn{}",
        format_time(session.created_at),
        if turns == 1 { "" } else { "s" }
    );
    if let (Some(from), Some(reason)) = (session.rotated_from, &session.rotation_reason) {
        since.push_str(&format!(", replaced session #{from} ({})", escape(reason)));
    }
    writeln!(out, "{since}")?;
    match last {
        Some(turn) => print_last_turn(out, turn),
        None => Ok(()),
    }
}

/// The last turn: its status, when, how long, how it ended, its prompt and its error.
fn print_last_turn(out: &mut impl Write, turn: &TurnRow) -> std::io::Result<()> {
    let mut line = format!(
        "last turn {} · {}",
        super::view::status_name(super::view::shown_status(turn)),
        format_time(turn.started_at)
    );
    if let Some(duration) = turn.duration_ms {
        line.push_str(&format!(" · {}", format_duration(duration)));
    }
    match (turn.exit_code, turn.signal) {
        (Some(code), _) if code != 0 => line.push_str(&format!(" · exit {code}")),
        (_, Some(signal)) => line.push_str(&format!(" · signal {signal}")),
        _ => {}
    }
    line.push_str(&format!(
        " · {}",
        turn.prompt.as_deref().map_or_else(
            || "(interactive)".to_owned(),
            |p| escape(&one_line(p, 60)).into_owned()
        )
    ));
    writeln!(out, "{line}")?;
    if let Some(error) = &turn.error {
        writeln!(out, "          {}", escape(error))?;
    }
    Ok(())
}
