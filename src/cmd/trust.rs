//! `sticky trust`: adopt a project's state the user copied, restored or cloned on purpose.

use anyhow::Result;

use super::output::Report;
use super::view::escape;
use super::{start_dir, sticky_db};
use crate::cli::GlobalArgs;
use crate::project::{self, Adopted};

/// Stamps the database of the project of the current directory (or `-C DIR`) as the user's.
pub fn run(global: &GlobalArgs) -> Result<Report> {
    let (project, adopted) = project::adopt(&start_dir(global)?, sticky_db().as_deref())?;
    if global.json {
        return Report::json(&serde_json::json!({
            "project": project.dir.display().to_string(),
            "database": project.state.db.display().to_string(),
            "trusted": adopted != Adopted::Nothing,
            "stamped": adopted == Adopted::Now,
        }));
    }
    if !global.quiet {
        let db = escape(&project.state.db.display().to_string()).into_owned();
        match adopted {
            Adopted::Now => eprintln!(
                "sticky: {db} is yours now: its conversations continue here (`sticky status` \
                 shows them)"
            ),
            Adopted::Already => eprintln!("sticky: {db} is already yours"),
            Adopted::Nothing => eprintln!("sticky: no database at {db}: nothing to trust"),
        }
    }
    Ok(Report::nothing())
}
