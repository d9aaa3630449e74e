//! `sticky search TEXT`: the turns whose prompt or kept answer holds every word of TEXT, the
//! newest first, each with its thread, number, time and a snippet around the match; over
//! every thread of this project (`-t NAME`: one), or (`--all`) every project of the user's
//! list.

use std::io::{IsTerminal, Write};

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::across::{self, Skipped};
use super::output::Report;
use super::view::{escape, format_time};
use super::{Call, Run, json_keys};
use crate::cli::Origin;
use crate::exit::StickyError;
use crate::store::{MATCH_END, MATCH_START, Millis};

/// Options of `sticky search`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// The words to find.
    #[arg(value_name = "TEXT", required = true)]
    pub text: Vec<String>,

    /// Only the turns started since WHEN: a date (`2026-11-30`, `2026-11-30 14:00`, UTC) or a
    /// duration back from now (`90m`, `2h`, `7d`, `1w`).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Every project you ran sticky in, not only this one.
    #[arg(long)]
    pub all: bool,

    /// Show at most N turns, the newest.
    #[arg(short = 'n', long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(&call.context()?, self)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<Search>()
    }
}

/// Prints the turns found.
fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let Some(query) = crate::store::search_query(&args.text.join(" ")) else {
        return Err(StickyError::Usage(
            "nothing to search for: give the words to find (sticky search WORDS)".into(),
        )
        .into());
    };
    let since = args
        .since
        .as_deref()
        .map(|when| super::view::point("--since", when, crate::store::now()).map(|(at, _)| at))
        .transpose()?;
    let thread = (ctx.origins.thread == Origin::Flag).then_some(ctx.thread.as_str());
    let (sources, skipped) = across::sources(ctx, args.all, false)?;
    let mut hits = Vec::new();
    for source in &sources {
        let project = source.project.display().to_string();
        for found in source.store.search(&query, since, thread, args.limit)? {
            hits.push(Hit::new(&project, found));
        }
    }
    // The newest first across projects, then by project, then the newest turn.
    hits.sort_by(|a, b| b.started_at.cmp(&a.started_at).then(b.turn.cmp(&a.turn)));
    hits.truncate(args.limit);
    for source in sources {
        source.store.leave_open_until_exit();
    }
    let report = Search {
        query: args.text.join(" "),
        results: hits,
        skipped,
    };
    if ctx.json {
        return Report::json(&report);
    }
    let bold = std::io::stdout().is_terminal() && !crate::settings::env::no_color();
    Ok(Report::paged(report.text(args.all, bold)?))
}

/// The `--json` object.
#[derive(Serialize, Default)]
struct Search {
    query: String,
    results: Vec<Hit>,
    skipped: Vec<Skipped>,
}

/// A turn found.
#[derive(Serialize)]
struct Hit {
    project: String,
    thread: String,
    turn: i64,
    started_at: Millis,
    agent: String,
    /// `prompt` or `answer`.
    found_in: &'static str,
    /// The text around the match, raw.
    snippet: String,
    /// The matches in `snippet`: byte offsets, each `[start, end)`.
    matches: Vec<[usize; 2]>,
}

impl Hit {
    fn new(project: &str, found: crate::store::Found) -> Self {
        let mut snippet = String::with_capacity(found.snippet.len());
        let mut matches = Vec::new();
        let mut start = None;
        for c in found.snippet.chars() {
            match c {
                MATCH_START => start = Some(snippet.len()),
                MATCH_END => {
                    if let Some(start) = start.take() {
                        matches.push([start, snippet.len()]);
                    }
                }
                c => snippet.push(c),
            }
        }
        Self {
            project: project.to_owned(),
            thread: found.thread,
            turn: found.turn,
            started_at: found.started_at,
            agent: found.agent,
            found_in: found.column,
            snippet,
            matches,
        }
    }

    /// The snippet for a terminal: each part escaped as `log` escapes stored text, the
    /// matches bold (`bold`) or between `**`.
    fn shown(&self, bold: bool) -> String {
        let (open, close) = if bold {
            ("\x1b[1m", "\x1b[0m")
        } else {
            ("**", "**")
        };
        let mut out = String::new();
        let mut at = 0;
        for [start, end] in &self.matches {
            out.push_str(&escape(&self.snippet[at..*start]));
            out.push_str(open);
            out.push_str(&escape(&self.snippet[*start..*end]));
            out.push_str(close);
            at = *end;
        }
        out.push_str(&escape(&self.snippet[at..]));
        out
    }
}

impl Search {
    fn text(&self, all: bool, bold: bool) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        if self.results.is_empty() {
            writeln!(out, "no turn holds {}", escape(&self.query))?;
        }
        for hit in &self.results {
            let project = if all {
                format!("{} · ", escape(&hit.project))
            } else {
                String::new()
            };
            writeln!(
                out,
                "{project}thread {} #{} · {} · {} · {}",
                escape(&hit.thread),
                hit.turn,
                format_time(hit.started_at),
                escape(&hit.agent),
                hit.found_in
            )?;
            writeln!(out, "         │ {}", hit.shown(bold))?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_is_escaped_and_its_matches_marked() {
        let found = crate::store::Found {
            turn: 3,
            thread: "main".to_owned(),
            started_at: 0,
            agent: "claude".to_owned(),
            column: "answer",
            snippet: format!("…the \x1b]0;x\x07 {MATCH_START}build{MATCH_END} fails\n…"),
        };
        let hit = Hit::new("/p", found);
        assert_eq!(hit.snippet, "…the \x1b]0;x\x07 build fails\n…");
        let [start, end] = hit.matches[0];
        assert_eq!(&hit.snippet[start..end], "build");
        assert_eq!(hit.shown(false), "…the \\e]0;x\\x07 **build** fails\\n…");
        assert_eq!(
            hit.shown(true),
            "…the \\e]0;x\\x07 \x1b[1mbuild\x1b[0m fails\\n…"
        );
    }
}
