//! The one writer of stdout and of the exit: every command returns a [`Report`] (what it has to
//! say and its exit code) or an error, and [`emit`] prints either one JSON object or the text,
//! maps an error to its exit code and says it in one line on stderr.
//!
//! `--json` promises one object on stdout, also when sticky fails before the command could say
//! anything (agent missing, busy, bad configuration): then the object has the keys of the
//! command's own object, `null` where nothing is known, plus `error` and `exit_code`. A
//! command that fails after saying its piece (a failed turn's object) returns a report that
//! carries the error, so the object is never printed twice. A reader that stopped reading
//! (`sticky log | head -1`, a quit pager) is no failure (see [`listing`](super::listing)).

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::listing::{self, Listing};
use super::view::escape;
use crate::exit::{Exit, exit_for};

/// What a command has to say, and how the process exits.
#[derive(Debug)]
pub struct Report {
    said: Said,
    exit: Exit,
    /// The error the command ended with after saying its piece.
    error: Option<anyhow::Error>,
}

#[derive(Debug)]
enum Said {
    Nothing,
    /// One JSON object, serialized (its keys in the order of its struct).
    Json(String),
    /// Text for stdout; `paged` through the user's pager on a terminal.
    Text {
        text: Vec<u8>,
        paged: bool,
    },
}

impl Report {
    /// Nothing on stdout; exit 0.
    pub fn nothing() -> Self {
        Self {
            said: Said::Nothing,
            exit: Exit::Success,
            error: None,
        }
    }

    /// One JSON object; exit 0.
    pub fn json(value: &impl Serialize) -> Result<Self> {
        Ok(Self {
            said: Said::Json(serde_json::to_string(value)?),
            ..Self::nothing()
        })
    }

    /// Text for stdout; exit 0.
    pub fn text(text: Vec<u8>) -> Self {
        Self {
            said: Said::Text { text, paged: false },
            ..Self::nothing()
        }
    }

    /// A long listing: paged on a terminal; exit 0.
    pub fn paged(text: Vec<u8>) -> Self {
        Self {
            said: Said::Text { text, paged: true },
            ..Self::nothing()
        }
    }

    /// The same report, exiting with `exit`.
    #[must_use]
    pub fn exiting(self, exit: Exit) -> Self {
        Self { exit, ..self }
    }

    /// The same report, ending with `error` (which then decides the exit code).
    #[must_use]
    pub fn failing(self, error: anyhow::Error) -> Self {
        Self {
            error: Some(error),
            ..self
        }
    }
}

/// How the run's output is shaped.
pub struct Shape<'a> {
    /// `--json`.
    pub json: bool,
    /// Whether the command only reports (so a closed stdout ends it quietly, exit 0).
    pub reports: bool,
    /// The `--json` object of a command that failed before saying anything.
    pub error_object: &'a dyn Fn(&anyhow::Error) -> serde_json::Value,
}

/// Prints what the command had to say, or its error, and returns the exit.
pub fn emit(result: Result<Report>, shape: &Shape<'_>) -> Exit {
    let report = match result {
        Ok(report) => report,
        Err(error) if shape.reports && listing::is_broken_pipe(&error) => return Exit::Success,
        Err(error) => {
            if shape.json {
                let object = (shape.error_object)(&error).to_string();
                let _ = write(&Said::Json(object));
            }
            return fail(&error);
        }
    };
    match write(&report.said) {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            // The turn is recorded whoever stopped reading its answer; a listing is done.
            if shape.reports {
                return Exit::Success;
            }
        }
        Err(error) => return fail(&anyhow::Error::new(error)),
        Ok(()) => {}
    }
    match report.error {
        Some(error) => fail(&error),
        None => report.exit,
    }
}

/// Writes `said` to stdout (or the pager).
fn write(said: &Said) -> std::io::Result<()> {
    match said {
        Said::Nothing => Ok(()),
        Said::Json(object) => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{object}")?;
            out.flush()
        }
        Said::Text { text, paged } => {
            let mut out = if *paged {
                Listing::paged()
            } else {
                Listing::stdout()
            };
            out.write_all(text)?;
            out.finish()
        }
    }
}

/// Says `error` in one line on stderr and returns its exit code.
///
/// Errors quote prompts, paths and the agent's words: escaped like every text view, line by
/// line (a configuration error shows the line it points at below it), where a line holds a
/// character a terminal acts on; a line with none is said as it is, backslashes and all, so the
/// commands an error gives to paste (`msg::shell_word`'s `$'...'` among them) read back as
/// given. On a fresh line, whatever an interrupted agent left on the terminal.
fn fail(error: &anyhow::Error) -> Exit {
    let acts = |c: char| c != '\\' && crate::msg::needs_escape(c);
    let message = format!("{error:#}")
        .split('\n')
        .map(|line| {
            if line.contains(acts) {
                escape(line)
            } else {
                line.into()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    crate::msg::error(format_args!("{message}"));
    exit_for(error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::StickyError;

    fn shape(reports: bool) -> Shape<'static> {
        Shape {
            json: false,
            reports,
            error_object: &|_| serde_json::Value::Null,
        }
    }

    fn broken_pipe() -> anyhow::Error {
        anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            .context("could not write the listing")
    }

    #[test]
    fn a_report_exits_with_its_code_or_with_the_error_it_ends_with() {
        assert_eq!(emit(Ok(Report::nothing()), &shape(true)), Exit::Success);
        let doctor = Report::nothing().exiting(Exit::AgentMissing);
        assert_eq!(emit(Ok(doctor), &shape(true)), Exit::AgentMissing);
        // A failed turn said its piece, then its error decides the code.
        let failed = Report::nothing()
            .exiting(Exit::Agent(3))
            .failing(StickyError::Usage("bad".into()).into());
        assert_eq!(emit(Ok(failed), &shape(false)), Exit::Usage);
    }

    #[test]
    fn an_error_maps_to_its_code_and_a_closed_reader_ends_a_listing_quietly() {
        let usage = anyhow::Error::new(StickyError::Usage("bad".into()));
        assert_eq!(emit(Err(usage), &shape(true)), Exit::Usage);
        assert_eq!(emit(Err(broken_pipe()), &shape(true)), Exit::Success);
        // A turn is no listing: a broken pipe there is an error like any other.
        assert_eq!(
            emit(Err(broken_pipe()), &shape(false)),
            exit_for(&broken_pipe())
        );
    }
}
