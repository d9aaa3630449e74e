//! `sticky usage`: tokens and cost summed by day, week, month, thread, agent session, model or
//! agent, over this project or (`--all`) every project of the user's list, in a time range.
//!
//! A turn is counted once however many copies of it the projects hold: `export` and `import`
//! copy a thread's turns with the agent session they ran on, when they started and the pid of
//! the sticky that ran them, and those together name the turn (a session runs one turn at a
//! time, so no two of its turns started in the same millisecond by the same process). The
//! first copy read counts: this project's, then the list's order. A session the agent never
//! named has no copies to match, and each of its turns counts.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Write;
use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::across::{self, Skipped};
use super::output::Report;
use super::view::{escape, format_count, format_time, short_id};
use super::{Call, Run, json_keys};
use crate::agent::ledger::Figures;

use crate::store::{Millis, Totals, UsageSession};

/// Options of `sticky usage`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// What each row sums: a day, week or month, a thread, an agent session, a model or an
    /// agent.
    #[arg(long, value_enum, default_value_t = Grouping::Day, value_name = "WHAT")]
    pub by: Grouping,

    /// Count only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, UTC)
    /// or a duration back from now (`90m`, `2h`, `7d`, `1w`).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Count only the turns started before WHEN (a date alone counts that day whole).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,

    /// Every project you ran sticky in, not only this one.
    #[arg(long)]
    pub all: bool,

    /// With --all: drop the projects that are gone from the list.
    #[arg(long, requires = "all")]
    pub prune: bool,
}

/// What a row of `sticky usage` sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Grouping {
    /// A day (UTC).
    Day,
    /// A week, Monday to Sunday.
    Week,
    /// A month.
    Month,
    /// A thread (of its project).
    Thread,
    /// An agent session.
    Session,
    /// A model.
    Model,
    /// An agent.
    Agent,
}

impl Grouping {
    /// The value's name, as `--by` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
            Self::Thread => "thread",
            Self::Session => "session",
            Self::Model => "model",
            Self::Agent => "agent",
        }
    }
}

/// One day in milliseconds.
const DAY: Millis = 86_400_000;

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(&call.context()?, self)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<Usage>()
    }

    fn refuses_thread(&self) -> Option<&'static str> {
        Some("it sums every thread of the project (`--by thread` shows each)")
    }
}

/// Prints the report.
fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let now = crate::store::now();
    let since = args
        .since
        .as_deref()
        .map(|when| super::view::point("--since", when, now).map(|(at, _)| at))
        .transpose()?;
    // A day alone ends with the day: `--until 2026-11-30` takes the 30th whole.
    let until = args
        .until
        .as_deref()
        .map(|when| {
            super::view::point("--until", when, now)
                .map(|(at, day)| if day { at.saturating_add(DAY) } else { at })
        })
        .transpose()?;
    let (sources, skipped) = across::sources(ctx, args.all, args.prune)?;
    let mut tally = Tally::new(args.by);
    let mut sessions = Vec::with_capacity(sources.len());
    for source in &sources {
        let found = source.store.usage_sessions()?;
        tally.know(&found);
        sessions.push(found);
    }
    for (source, sessions) in sources.iter().zip(&sessions) {
        let turns = source.store.usage_turns(since, until)?;
        tally.add(&source.project, sessions, &turns);
    }
    let rows = tally.rows();
    let total = rows.iter().fold(Totals::default(), |mut sum, row| {
        sum.turns += row.totals.turns;
        add(&mut sum.figures, &row.totals.figures);
        sum
    });
    let report = Usage {
        by: args.by.name(),
        since,
        until,
        rows,
        total,
        duplicates: tally.duplicates,
        projects: sources
            .iter()
            .map(|source| source.project.display().to_string())
            .collect(),
        skipped,
    };
    for source in sources {
        source.store.leave_open_until_exit();
    }
    if ctx.json {
        return Report::json(&report);
    }
    Ok(Report::paged(report.text()?))
}

/// The `--json` object.
#[derive(Serialize, Default)]
struct Usage {
    by: &'static str,
    since: Option<Millis>,
    until: Option<Millis>,
    rows: Vec<Row>,
    total: Totals,
    /// Copies of turns counted once already (a thread imported into several projects).
    duplicates: u64,
    projects: Vec<String>,
    skipped: Vec<Skipped>,
}

/// A row of the report: what it sums (`key`; with the project for threads and sessions) and
/// the sums.
#[derive(Serialize)]
struct Row {
    key: String,
    project: Option<String>,
    #[serde(flatten)]
    totals: Totals,
}

/// What a group is, before it gets its label.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Group {
    /// A day, week (its Monday) or month (its first day), as days since 1970-01-01.
    Day(i64),
    /// A thread, session, model or agent: its label and the project it belongs to.
    Named(String, Option<String>),
}

/// The sums so far, with what identifies the turns already counted.
struct Tally {
    by: Grouping,
    /// The groups in the order first met, with their sums.
    groups: Vec<(Group, Totals)>,
    /// Where each group is in `groups`.
    slots: HashMap<Group, usize>,
    /// Agent sessions (agent, ID): a small number each, and how many sessions of the projects
    /// read name it. Only the turns of one named more than once (a copy) can be counted twice.
    sessions: HashMap<(String, String), (u32, u32)>,
    /// The turns of copied agent sessions counted: (agent session, started at, pid).
    seen: HashSet<(u32, Millis, i64), BuildHasherDefault<Fx>>,
    duplicates: u64,
}

impl Tally {
    fn new(by: Grouping) -> Self {
        Self {
            by,
            groups: Vec::new(),
            slots: HashMap::new(),
            sessions: HashMap::new(),
            seen: HashSet::default(),
            duplicates: 0,
        }
    }

    /// Learns one project's sessions: every project's come before any turn is added.
    fn know(&mut self, sessions: &[UsageSession]) {
        for session in sessions {
            if let Some(id) = &session.agent_session_id {
                let next = u32::try_from(self.sessions.len()).unwrap_or(u32::MAX);
                self.sessions
                    .entry((session.agent.clone(), id.clone()))
                    .or_insert((next, 0))
                    .1 += 1;
            }
        }
    }

    /// The place of `group` in `groups`.
    fn slot(&mut self, group: Group) -> usize {
        if let Some(slot) = self.slots.get(&group) {
            return *slot;
        }
        self.groups.push((group.clone(), Totals::default()));
        self.slots.insert(group, self.groups.len() - 1);
        self.groups.len() - 1
    }

    /// Adds one project's turns (its sessions [`Tally::know`]n already).
    fn add(
        &mut self,
        project: &Path,
        sessions: &[UsageSession],
        turns: &[crate::store::UsageTurn],
    ) {
        let project = project.display().to_string();
        // Per session: the number of its agent session when another session names it too (to
        // know copies), and its group's slot when the group is not a time.
        let mut of_session: HashMap<i64, (Option<u32>, Option<usize>), BuildHasherDefault<Fx>> =
            HashMap::default();
        for session in sessions {
            let copied = session.agent_session_id.as_ref().and_then(|id| {
                let key = (session.agent.clone(), id.clone());
                match self.sessions.get(&key) {
                    Some((number, count)) if *count > 1 => Some(*number),
                    _ => None,
                }
            });
            let slot = self.named(session, &project).map(|group| self.slot(group));
            of_session.insert(session.id, (copied, slot));
        }
        // The turns come oldest first, so one day (and one session) follows another.
        let mut day_slot: Option<(i64, usize)> = None;
        for turn in turns {
            let Some((copied, named)) = of_session.get(&turn.session_id).copied() else {
                continue;
            };
            if let Some(number) = copied {
                if !self.seen.insert((number, turn.started_at, turn.pid)) {
                    self.duplicates += 1;
                    continue;
                }
            }
            let slot = if let Some(slot) = named {
                slot
            } else {
                let day = turn.started_at.div_euclid(DAY);
                match day_slot {
                    Some((known, slot)) if known == day => slot,
                    _ => {
                        let slot = self.slot(Group::Day(self.period(day)));
                        day_slot = Some((day, slot));
                        slot
                    }
                }
            };
            let totals = &mut self.groups[slot].1;
            totals.turns += 1;
            add(&mut totals.figures, &turn.figures);
        }
    }

    /// The group of `session`'s turns when the report is not by time.
    fn named(&self, session: &UsageSession, project: &str) -> Option<Group> {
        let with_project = |label: String| Some(Group::Named(label, Some(project.to_owned())));
        match self.by {
            Grouping::Day | Grouping::Week | Grouping::Month => None,
            Grouping::Thread => with_project(session.thread.clone()),
            Grouping::Session => with_project(match &session.agent_session_id {
                Some(id) => format!("{} {id}", session.agent),
                None => format!("{} #{} (never started)", session.agent, session.id),
            }),
            Grouping::Model => Some(Group::Named(
                session
                    .model
                    .clone()
                    .unwrap_or_else(|| "(default)".to_owned()),
                None,
            )),
            Grouping::Agent => Some(Group::Named(session.agent.clone(), None)),
        }
    }

    /// The first day of the period holding `day` (days since 1970-01-01, a Thursday).
    fn period(&self, day: i64) -> i64 {
        match self.by {
            Grouping::Week => day - (day + 3).rem_euclid(7),
            Grouping::Month => {
                let date = format_time(day * DAY);
                let mday: i64 = date[8..10].parse().unwrap_or(1);
                day - (mday - 1)
            }
            _ => day,
        }
    }

    /// The rows: periods oldest first; anything else by cost, the highest first, then by turns.
    fn rows(&self) -> Vec<Row> {
        let mut groups: Vec<(&Group, &Totals)> = self
            .groups
            .iter()
            .filter(|(_, totals)| totals.turns > 0)
            .map(|(group, totals)| (group, totals))
            .collect();
        groups.sort_by(|(a, at), (b, bt)| match (a, b) {
            (Group::Day(a), Group::Day(b)) => a.cmp(b),
            _ => bt
                .figures
                .cost_usd
                .unwrap_or(0.0)
                .total_cmp(&at.figures.cost_usd.unwrap_or(0.0))
                .then(bt.turns.cmp(&at.turns))
                .then(a.cmp(b)),
        });
        groups
            .into_iter()
            .map(|(group, totals)| {
                let (key, project) = match group {
                    Group::Day(day) => {
                        let date = format_time(day * DAY);
                        let end = if self.by == Grouping::Month { 7 } else { 10 };
                        (date[..end].to_owned(), None)
                    }
                    Group::Named(label, project) => (label.clone(), project.clone()),
                };
                Row {
                    key,
                    project,
                    totals: *totals,
                }
            })
            .collect()
    }
}

/// Adds `figures` to `sum`, where a figure nobody reported stays `None`.
fn add(sum: &mut Figures, figures: &Figures) {
    fn plus<T: std::ops::Add<Output = T> + Copy>(sum: Option<T>, figure: Option<T>) -> Option<T> {
        match (sum, figure) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        }
    }
    sum.cost_usd = plus(sum.cost_usd, figures.cost_usd);
    sum.input_tokens = plus(sum.input_tokens, figures.input_tokens);
    sum.output_tokens = plus(sum.output_tokens, figures.output_tokens);
    sum.cached_tokens = plus(sum.cached_tokens, figures.cached_tokens);
}

impl Usage {
    /// The report as a table, with a total line.
    fn text(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        if self.rows.is_empty() {
            writeln!(out, "no turns to count")?;
            return Ok(out);
        }
        let heading = match self.by {
            "week" => "week of",
            other => other,
        };
        let keys: Vec<String> = self.rows.iter().map(Row::label).collect();
        let width = keys
            .iter()
            .map(|key| key.chars().count())
            .chain([heading.len(), 5])
            .max()
            .unwrap_or(5);
        writeln!(
            out,
            "{heading:<width$}  {:>6}  {:>8}  {:>8}  {:>8}  {:>10}",
            "turns", "input", "cached", "output", "cost"
        )?;
        for (key, row) in keys.iter().zip(&self.rows) {
            line(&mut out, key, width, &row.totals)?;
        }
        if self.rows.len() > 1 {
            line(&mut out, "total", width, &self.total)?;
        }
        if self.duplicates > 0 {
            writeln!(
                out,
                "({} cop{} of turns imported elsewhere counted once)",
                self.duplicates,
                if self.duplicates == 1 { "y" } else { "ies" }
            )?;
        }
        Ok(out)
    }
}

impl Row {
    /// The row's first column, escaped: a session shortened, a thread or session of another
    /// project than the first with its project.
    fn label(&self) -> String {
        let key = match self.key.split_once(' ') {
            Some((agent, id)) if !id.starts_with('#') && self.project.is_some() => {
                format!("{agent} {}", short_id(id))
            }
            _ => self.key.clone(),
        };
        match &self.project {
            Some(project) => format!("{} · {}", escape(&key), escape(project)),
            None => escape(&key).into_owned(),
        }
    }
}

fn line(out: &mut Vec<u8>, key: &str, width: usize, totals: &Totals) -> std::io::Result<()> {
    let count = |figure: Option<i64>| figure.map_or_else(|| "-".to_owned(), format_count);
    let figures = &totals.figures;
    let pad = width.saturating_sub(key.chars().count());
    writeln!(
        out,
        "{key}{:pad$}  {:>6}  {:>8}  {:>8}  {:>8}  {:>10}",
        "",
        totals.turns,
        count(figures.input_tokens),
        count(figures.cached_tokens),
        count(figures.output_tokens),
        figures
            .cost_usd
            .map_or_else(|| "-".to_owned(), |cost| format!("${cost:.4}"))
    )
}

/// A small multiplicative hash (the Fx hash of rustc) for the integer keys of the tally: the
/// standard `SipHash` took a fifth of `usage --all` at 100,000 turns. The keys come from the
/// user's own databases, so no flooding to resist.
#[derive(Default)]
struct Fx(u64);

impl Fx {
    fn mix(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
    }

    fn write_u32(&mut self, value: u32) {
        self.mix(u64::from(value));
    }

    fn write_u64(&mut self, value: u64) {
        self.mix(value);
    }

    fn write_i64(&mut self, value: i64) {
        self.mix(u64::from_ne_bytes(value.to_ne_bytes()));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::UsageTurn;

    fn session(id: i64, thread: &str, agent_session_id: Option<&str>) -> UsageSession {
        UsageSession {
            id,
            thread: thread.to_owned(),
            agent: "claude".to_owned(),
            model: None,
            agent_session_id: agent_session_id.map(str::to_owned),
        }
    }

    fn turn(session_id: i64, started_at: Millis, cost: f64) -> UsageTurn {
        UsageTurn {
            session_id,
            started_at,
            pid: 7,
            figures: Figures {
                cost_usd: Some(cost),
                input_tokens: Some(10),
                ..Figures::default()
            },
        }
    }

    #[test]
    fn a_turn_copied_into_another_project_counts_once() {
        let mut tally = Tally::new(Grouping::Day);
        let day = 20_000 * DAY;
        let a = [
            session(1, "main", Some("S")),
            session(2, "x", None),
            session(3, "z", Some("T")),
        ];
        // Project b imported a's thread (the session's first turn), then ran one of its own;
        // a session never named has no copies, so b's own unnamed one counts.
        let b = [session(9, "copy", Some("S")), session(10, "y", None)];
        tally.know(&a);
        tally.know(&b);
        tally.add(
            Path::new("/a"),
            &a,
            &[
                turn(1, day, 1.0),
                turn(1, day + 5, 2.0),
                turn(2, day, 4.0),
                turn(3, day + 7, 0.5),
            ],
        );
        tally.add(
            Path::new("/b"),
            &b,
            &[
                turn(9, day, 1.0),
                turn(9, day + DAY, 8.0),
                turn(10, day, 16.0),
            ],
        );
        let rows = tally.rows();
        let keys: Vec<_> = rows
            .iter()
            .map(|r| (r.key.as_str(), r.totals.turns))
            .collect();
        assert_eq!(keys, [("2024-10-04", 5), ("2024-10-05", 1)]);
        assert_eq!(rows[0].totals.figures.cost_usd, Some(23.5));
        assert_eq!(rows[0].totals.figures.input_tokens, Some(50));
        assert_eq!(tally.duplicates, 1);
        assert_eq!(
            tally.seen.len(),
            3,
            "only the turns of the session with a copy (S) are remembered, not T's"
        );
    }

    #[test]
    fn periods_start_on_monday_and_the_first_of_the_month() {
        // 2026-12-06 is a Sunday.
        let sunday = 20_793;
        assert_eq!(format_time(sunday * DAY), "2026-12-06 00:00:00 UTC");
        let week = Tally::new(Grouping::Week).period(sunday);
        assert_eq!(format_time(week * DAY), "2026-11-30 00:00:00 UTC");
        let month = Tally::new(Grouping::Month).period(sunday);
        assert_eq!(format_time(month * DAY), "2026-12-01 00:00:00 UTC");
        assert_eq!(Tally::new(Grouping::Week).period(week), week, "a Monday");
    }

    #[test]
    fn other_groupings_sort_by_cost() {
        let mut tally = Tally::new(Grouping::Thread);
        let sessions = [
            session(1, "cheap", Some("S")),
            session(2, "dear", Some("T")),
            session(3, "idle", Some("U")),
        ];
        tally.know(&sessions);
        tally.add(
            Path::new("/a"),
            &sessions,
            &[turn(1, 0, 1.0), turn(2, 0, 3.0), turn(2, 1, 3.0)],
        );
        let rows = tally.rows();
        let keys: Vec<_> = rows
            .iter()
            .map(|r| (r.key.as_str(), r.project.as_deref(), r.totals.turns))
            .collect();
        assert_eq!(
            keys,
            [("dear", Some("/a"), 2), ("cheap", Some("/a"), 1)],
            "no row for a thread without turns"
        );
    }
}
