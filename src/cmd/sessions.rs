//! `sticky sessions`: the agent sessions of the conversation, oldest first, each with the
//! session it replaced and why (its lineage) and the number of turns run on it.
//!
//! Reads only: without a database it lists nothing and creates nothing.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::view::{CountedSession, SessionView, escape, format_time, short_id};
use super::{Call, Run, json_keys};
use crate::store::SessionRow;

/// `sticky sessions` takes no options of its own.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {}

/// The `--json` object.
#[derive(Serialize, Default)]
struct Sessions<'a> {
    thread: &'a str,
    sessions: Vec<CountedSession<'a>>,
}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(&call.context()?)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<Sessions<'static>>()
    }
}

/// Prints the conversation's sessions.
fn run(ctx: &Context) -> Result<Report> {
    let mut sessions = Vec::new();
    if let Some(store) = ctx.existing_store()? {
        if let Some(thread) = store.thread(&ctx.thread)? {
            for session in store.sessions(thread.id)? {
                let turns = store.turn_count(session.id)?;
                sessions.push((session, turns));
            }
        }
    }
    if ctx.json {
        return Report::json(&Sessions {
            thread: &ctx.thread,
            sessions: sessions
                .iter()
                .map(|(session, turns)| CountedSession {
                    session: SessionView::from(session),
                    turns: *turns,
                })
                .collect(),
        });
    }
    let mut out = Vec::new();
    if sessions.is_empty() {
        writeln!(out, "no sessions yet in thread {}", escape(&ctx.thread))?;
    } else {
        writeln!(
            out,
            "{:>5}  {:<10} {:<16} {:<9} {:<23}  {:>5}  LINEAGE",
            "ID", "AGENT", "MODEL", "SESSION", "CREATED", "TURNS"
        )?;
    }
    for (session, turns) in &sessions {
        print_session(&mut out, session, *turns)?;
    }
    Ok(Report::paged(out))
}

fn print_session(out: &mut impl Write, session: &SessionRow, turns: i64) -> std::io::Result<()> {
    let mut lineage = match (session.rotated_from, &session.rotation_reason) {
        (Some(from), Some(reason)) => format!("replaced #{from} ({})", escape(reason)),
        (Some(from), None) => format!("replaced #{from}"),
        _ => match &session.forked_from {
            Some(from) => format!(
                "forked from {} #{} ({})",
                escape(&from.thread),
                from.session,
                escape(short_id(&from.agent_session_id))
            ),
            None => "first".to_owned(),
        },
    };
    if let (Some(kind), Some(bytes)) = (&session.carried, session.carried_bytes) {
        lineage.push_str(&format!(", carried a {} of {bytes} bytes", escape(kind)));
    }
    match session.ended_at {
        Some(ended) => lineage.push_str(&format!(", ended {}", format_time(ended))),
        None => lineage.push_str(", live"),
    }
    writeln!(
        out,
        "{:>5}  {:<10} {:<16} {:<9} {:<23}  {:>5}  {lineage}",
        format!("#{}", session.id),
        escape(&session.agent),
        escape(session.model.as_deref().unwrap_or("default")),
        escape(session.agent_session_id.as_deref().map_or("-", short_id)),
        format_time(session.created_at),
        turns,
    )
}
