//! `sticky init`: make a directory a project of its own.

use anyhow::Result;

use super::output::Report;
use super::start_dir;
use crate::cli::GlobalArgs;
use crate::project;

/// Creates `.sticky/` in the current directory (or `-C DIR`).
pub fn run(global: &GlobalArgs) -> Result<Report> {
    let dir = start_dir(global)?;
    let project = project::init(&dir, super::sticky_db().as_deref())?;
    if global.json {
        return Report::json(&serde_json::json!({
            "project": project.dir.display().to_string(),
            "database": project.state.db.display().to_string(),
        }));
    }
    if !global.quiet {
        let dir = super::view::escape(&project.dir.display().to_string()).into_owned();
        eprintln!("sticky: {dir} is a project of its own");
    }
    Ok(Report::nothing())
}
