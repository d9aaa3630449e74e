//! `sticky status`: the project, the conversation, its live session and its last turn, the
//! ledger of the session and of the conversation, and how full the context was at the last
//! turn (with the suggestion to carry a recap into a fresh session past the threshold).
//!
//! Reads only: without a database it says so and creates nothing.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::vault::VaultView;
use super::view::{
    CountedSession, SessionView, TurnView, escape, format_count, format_duration, format_ledger,
    format_time, one_line, session_summary,
};
use super::{Call, Run, json_keys};
use crate::settings::Setting;
use crate::store::{SessionRow, Totals, TurnRow};

/// `sticky status` takes no options of its own.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(&call.context()?)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<Status<'static>>()
    }
}

/// Prints the status of the conversation.
fn run(ctx: &Context) -> Result<Report> {
    let (session, turns, last_turn, ledger) = match ctx.existing_store()? {
        None => (None, 0, None, None),
        Some(store) => match store.thread(&ctx.thread)? {
            None => {
                store.prove_intact_if_used()?;
                (None, 0, None, None)
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
                let ledger = Ledger {
                    session: match &session {
                        Some(session) => store.totals(Some(session.id), thread.id)?,
                        None => Totals::default(),
                    },
                    conversation: store.totals(None, thread.id)?,
                };
                (session, turns, store.last_turn(thread.id)?, Some(ledger))
            }
        },
    };
    let context = context(ctx, session.as_ref(), last_turn.as_ref());
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
            ledger,
            context,
        })
    } else {
        let mut out = Vec::new();
        print_text(&mut out, ctx, session.as_ref(), turns, last_turn.as_ref())?;
        if session.is_some() {
            print_ledger(&mut out, ledger.as_ref(), context.as_ref())?;
        }
        Ok(Report::text(out))
    }
}

/// The ledger of the live session and of the whole conversation.
#[derive(Serialize)]
struct Ledger {
    session: Totals,
    conversation: Totals,
}

/// How full the live session's context was at its last turn.
#[derive(Serialize)]
struct Pressure {
    /// The tokens the context held at the last turn's last model call.
    tokens: i64,
    /// The model's window, where the agent reports it.
    window: Option<i64>,
    /// `tokens` in percent of `window`.
    percent: Option<u8>,
    /// The threshold (config `context_threshold`, default 80) and where it came from.
    threshold: Setting<u8>,
    /// Whether the context is past the threshold, so a fresh session with a recap would help.
    suggest_carry: bool,
}

/// The context pressure of the live session's last turn, when the agent reported what the
/// context held.
fn context(ctx: &Context, live: Option<&SessionRow>, last: Option<&TurnRow>) -> Option<Pressure> {
    let last = last.filter(|turn| live.is_some_and(|live| live.id == turn.session_id))?;
    let tokens = last.ledger.context_tokens?;
    let window = last.ledger.context_window.filter(|window| *window > 0);
    let percent = window.map(|window| {
        u8::try_from((tokens.saturating_mul(100) / window).clamp(0, 255)).unwrap_or(u8::MAX)
    });
    let threshold = ctx.settings.context_threshold.clone();
    let suggest_carry = percent.is_some_and(|percent| percent >= threshold.value);
    Some(Pressure {
        tokens,
        window,
        percent,
        threshold,
        suggest_carry,
    })
}

fn print_ledger(
    out: &mut impl Write,
    ledger: Option<&Ledger>,
    context: Option<&Pressure>,
) -> std::io::Result<()> {
    if let Some(ledger) = ledger {
        for (label, name, totals) in [
            ("ledger   ", "session", &ledger.session),
            ("         ", "conversation", &ledger.conversation),
        ] {
            let figures = format_ledger(&totals.figures);
            let figures = if figures.is_empty() {
                "no tokens or cost reported".to_owned()
            } else {
                figures
            };
            let plural = if totals.turns == 1 { "" } else { "s" };
            writeln!(
                out,
                "{label} {name}: {} turn{plural} · {figures}",
                totals.turns
            )?;
        }
    }
    let Some(context) = context else {
        return Ok(());
    };
    match (context.percent, context.window) {
        (Some(percent), Some(window)) => writeln!(
            out,
            "context   {percent}% full at the last turn ({} of {} tokens)",
            format_count(context.tokens),
            format_count(window)
        )?,
        _ => writeln!(
            out,
            "context   {} tokens at the last turn (the agent reports no window)",
            format_count(context.tokens)
        )?,
    }
    if context.suggest_carry {
        writeln!(
            out,
            "          past {}%: `sticky new --carry \"...\"` goes on in a fresh session that \
             starts with a recap of this one",
            context.threshold.value
        )?;
    }
    Ok(())
}

#[derive(Serialize, Default)]
struct Status<'a> {
    project: String,
    database: String,
    found: &'static str,
    thread: &'a str,
    session: Option<CountedSession<'a>>,
    last_turn: Option<TurnView<'a>>,
    vault: VaultView,
    ledger: Option<Ledger>,
    context: Option<Pressure>,
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
        // Below HOME, whose conversation the user may be looking for.
        if let Some(note) = ctx.project.passed_over_note() {
            writeln!(out, "          {}", escape(&note))?;
        }
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
        if let (Some(kind), Some(bytes)) = (&session.carried, session.carried_bytes) {
            since.push_str(&format!(" carrying a {} of {bytes} bytes", escape(kind)));
        }
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
    if let Some(error) = &turn.ledger.error {
        writeln!(out, "          {}", escape(error))?;
    }
    Ok(())
}
