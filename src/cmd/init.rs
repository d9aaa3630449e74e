//! `sticky init`: make a directory a project of its own.

use anyhow::Result;
use serde::Serialize;

use super::output::Report;
use super::{Call, Run, json_keys, start_dir};
use crate::cli::GlobalArgs;
use crate::project;

/// `sticky init` takes no options of its own.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(call.global)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<Made>()
    }

    fn reports(&self) -> bool {
        false
    }

    fn refuses_thread(&self) -> Option<&'static str> {
        Some("it makes a project; a thread starts with its first turn (sticky -t NAME PROMPT)")
    }
}

/// The `--json` object of `sticky init`.
#[derive(Serialize, Default)]
struct Made {
    /// The project's directory.
    project: String,
    /// Its database.
    database: String,
}

/// Creates `.sticky/` in the current directory (or `-C DIR`).
fn run(global: &GlobalArgs) -> Result<Report> {
    let dir = start_dir(global)?;
    let project = project::init(&dir, super::sticky_db().as_deref())?;
    if global.json {
        return Report::json(&Made {
            project: project.dir.display().to_string(),
            database: project.state.db.display().to_string(),
        });
    }
    let dir = super::view::escape(&project.dir.display().to_string()).into_owned();
    note!("{dir} is a project of its own");
    Ok(Report::nothing())
}
