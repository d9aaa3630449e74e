//! `sticky log`: the turns of the conversation across all its sessions, with each rotation
//! and its reason shown as lineage, each turn's tokens and cost, and with `--answers` the
//! answers kept; `-n N` and `--since WHEN` narrow it to the newest turns.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::vault::human_size;
use super::view::{
    SessionView, TurnView, escape, format_duration, format_ledger, format_time, one_line,
    session_summary, shown_status, status_name,
};
use super::{Call, Run, json_keys};
use crate::exit::StickyError;
use crate::store::{Millis, RestoreRow, SessionRow, Store, StoredAnswer, TurnRow};

/// Options of `sticky log`.
#[derive(Debug, clap::Args, Clone, Default)]
pub struct Args {
    /// Show only the last N turns.
    #[arg(short = 'n', long = "limit", value_name = "N")]
    pub limit: Option<usize>,

    /// Show only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, in
    /// UTC as `log` shows times) or a duration back from now (`90m`, `2h`, `3d`, `1w`).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Show each turn's kept answer under it.
    #[arg(long)]
    pub answers: bool,
}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(&call.context()?, self)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<Log<'static>>()
    }
}

/// Prints the conversation's sessions and turns, oldest first.
fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let since = args
        .since
        .as_deref()
        .map(|when| since(when, crate::store::now()))
        .transpose()?;
    let store = ctx.existing_store()?;
    let mut shown = read_rows(store.as_ref(), &ctx.thread)?;
    let narrowed = shown.narrow(since, args.limit);
    if args.answers {
        shown.read_answers(store.as_ref())?;
    }
    if ctx.json {
        return Report::json(&shown.json(&ctx.thread));
    }
    Ok(Report::paged(shown.text(
        &ctx.thread,
        narrowed,
        args.answers,
    )?))
}

/// The rows `log` shows: sessions, their turns, the turns' restores and (with `--answers`)
/// their kept answers.
struct Shown {
    sessions: Vec<SessionRow>,
    turns: Vec<TurnRow>,
    restores: Vec<RestoreRow>,
    answers: Vec<(i64, Option<StoredAnswer>)>,
}

/// The thread's rows, none when there is no store or no such thread yet.
fn read_rows(store: Option<&Store>, thread: &str) -> Result<Shown> {
    let mut shown = Shown {
        sessions: Vec::new(),
        turns: Vec::new(),
        restores: Vec::new(),
        answers: Vec::new(),
    };
    let Some(store) = store else {
        return Ok(shown);
    };
    if let Some(thread) = store.thread(thread)? {
        shown.sessions = store.sessions(thread.id)?;
        shown.turns = store.turns(thread.id)?;
        shown.restores = store.restores(thread.id)?;
    }
    Ok(shown)
}

impl Shown {
    /// Keeps the turns since `since` and then the newest `limit` of them, with only the
    /// sessions they ran on; true when anything narrowed the log.
    fn narrow(&mut self, since: Option<Millis>, limit: Option<usize>) -> bool {
        let narrowed = since.is_some() || limit.is_some();
        if let Some(since) = since {
            self.turns.retain(|turn| turn.started_at >= since);
        }
        if let Some(limit) = limit {
            self.turns.drain(..self.turns.len().saturating_sub(limit));
        }
        if narrowed {
            // Only the sessions the shown turns ran on (and none when no turn is left).
            let turns = &self.turns;
            self.sessions
                .retain(|session| turns.iter().any(|turn| turn.session_id == session.id));
        }
        narrowed
    }

    /// Reads the kept answer of each shown turn.
    fn read_answers(&mut self, store: Option<&Store>) -> Result<()> {
        if let Some(store) = store {
            self.answers = self
                .turns
                .iter()
                .map(|turn| Ok((turn.id, store.answer(turn.id)?)))
                .collect::<Result<Vec<_>>>()?;
        }
        Ok(())
    }

    fn answer_of(&self, id: i64) -> Option<&StoredAnswer> {
        self.answers
            .iter()
            .find(|(turn, _)| *turn == id)
            .and_then(|(_, answer)| answer.as_ref())
    }

    fn restore_of(&self, turn: &TurnRow) -> Option<&RestoreRow> {
        self.restores.iter().find(|r| r.turn_id == turn.id)
    }

    /// The log as `--json` prints it.
    fn json<'a>(&'a self, thread: &'a str) -> Log<'a> {
        Log {
            thread,
            sessions: self
                .sessions
                .iter()
                .map(|session| SessionLog {
                    session: SessionView::from(session),
                    turns: turns_of(&self.turns, session)
                        .map(|turn| LoggedTurn {
                            answer: self.answer_of(turn.id).map(|answer| answer.text.as_str()),
                            turn: TurnView::from(turn),
                            restored: self.restore_of(turn).map(|r| Restored {
                                files: r.files,
                                bytes: r.bytes,
                            }),
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// The log as text: each session with its turns under it, and with `answers` their answers.
    fn text(&self, thread: &str, narrowed: bool, answers: bool) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        if self.sessions.is_empty() {
            let what = if narrowed {
                "no turns to show"
            } else {
                "no turns yet"
            };
            writeln!(out, "{what} in thread {}", escape(thread))?;
        }
        for session in &self.sessions {
            print_session(&mut out, session)?;
            for turn in turns_of(&self.turns, session) {
                print_turn(&mut out, turn)?;
                if let Some(restore) = self.restore_of(turn) {
                    print_restore(&mut out, restore)?;
                }
                if answers {
                    print_answer(&mut out, self.answer_of(turn.id))?;
                }
            }
        }
        Ok(out)
    }
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

#[derive(Serialize, Default)]
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

/// A turn in the log: the turn, what it restored from the vault (`null`: nothing), and with
/// `--answers` its kept answer.
#[derive(Serialize)]
struct LoggedTurn<'a> {
    #[serde(flatten)]
    turn: TurnView<'a>,
    restored: Option<Restored>,
    #[serde(skip_serializing_if = "Option::is_none")]
    answer: Option<&'a str>,
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
            if let (Some(kind), Some(bytes)) = (&session.carried, session.carried_bytes) {
                line.push_str(&format!(" · carried a {} of {bytes} bytes", escape(kind)));
            }
        }
        _ => match &session.forked_from {
            Some(from) => line.push_str(&format!(
                " · forked from {} #{} ({})",
                escape(&from.thread),
                from.session,
                escape(&from.agent_session_id)
            )),
            None => line.push_str(" · first"),
        },
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
    let prompt = match (turn.purpose.as_deref(), turn.prompt.as_deref()) {
        (Some("handoff"), _) => "(handoff summary for --carry=summary)".to_owned(),
        (_, Some(prompt)) => escape(&one_line(prompt, 60)).into_owned(),
        (_, None) => "(interactive)".to_owned(),
    };
    writeln!(
        out,
        "  {:>5}  {}  {:<11} {:>7} {:<8} {}",
        turn.id,
        format_time(turn.started_at),
        status_name(shown_status(turn)),
        turn.duration_ms.map(format_duration).unwrap_or_default(),
        outcome,
        prompt
    )?;
    let ledger = format_ledger(&turn.ledger.figures);
    if !ledger.is_empty() {
        writeln!(out, "         {ledger}")?;
    }
    Ok(())
}

/// A turn's kept answer, indented under it (escaped: it is the agent's text).
fn print_answer(out: &mut impl Write, answer: Option<&StoredAnswer>) -> std::io::Result<()> {
    let Some(answer) = answer else {
        return writeln!(out, "         (no answer kept)");
    };
    for line in answer.text.lines() {
        writeln!(out, "         │ {}", escape(line))?;
    }
    if answer.cut() {
        writeln!(out, "         │ (cut: {} bytes in all)", answer.bytes)?;
    }
    Ok(())
}

/// The time `--since WHEN` means: a date (`2026-11-30`, `2026-11-30 14:00[:05]`, also with a
/// `T`; UTC, as `log` shows times) or a duration back from `now` (`90s`, `90m`, `2h`, `3d`,
/// `1w`).
fn since(when: &str, now: Millis) -> Result<Millis, StickyError> {
    super::view::point("--since", when, now).map(|(at, _)| at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_dates_and_durations() {
        let now = 1_796_014_874_244; // 2026-11-30 05:01:14 UTC
        assert_eq!(since("2h", now).unwrap(), now - 7_200_000);
        assert_eq!(since("3d", now).unwrap(), now - 3 * 86_400_000);
        assert_eq!(since("90m", now).unwrap(), now - 5_400_000);
        let day = since("2026-11-30", now).unwrap();
        assert_eq!(format_time(day), "2026-11-30 00:00:00 UTC");
        let minute = since("2026-11-30 05:01", now).unwrap();
        assert_eq!(format_time(minute), "2026-11-30 05:01:00 UTC");
        assert_eq!(since("2000-02-29T12:30:15", now).unwrap(), 951_827_415_000);
        for bad in [
            "",
            "2x",
            "h",
            "yesterday",
            "2026-13-01",
            "2026-11-30 25:00",
            "-2h",
        ] {
            let error = since(bad, now).unwrap_err().to_string();
            assert!(error.contains("neither a date"), "{bad:?}: {error}");
        }
    }
}
