//! `sticky trust`: adopt a project's state the user copied, restored or cloned on purpose.
//!
//! A state adopted here whose conversations were recorded in another directory came from a
//! project that moved (to another file system, which copies the database) or was copied: the
//! next turn would refuse it (exit 73), so trust names the next step, `sticky relocate` for a
//! move, `sticky new` for a copy.

use std::path::Path;

use anyhow::Result;

use super::output::Report;
use super::standing::{self, Standing};
use super::view::escape;
use super::{start_dir, sticky_db};
use crate::cli::GlobalArgs;
use crate::project::{self, Adopted, Project};
use crate::store::{SessionRow, Store};

/// Stamps the database of the project of the current directory (or `-C DIR`) as the user's.
pub fn run(global: &GlobalArgs) -> Result<Report> {
    let (project, adopted) = project::adopt(&start_dir(global)?, sticky_db().as_deref())?;
    let elsewhere = elsewhere(&project);
    if global.json {
        let elsewhere: Vec<_> = elsewhere
            .iter()
            .map(|(thread, live)| {
                serde_json::json!({"thread": thread, "directory": live.directory.display().to_string()})
            })
            .collect();
        return Report::json(&serde_json::json!({
            "project": project.dir.display().to_string(),
            "database": project.state.db.display().to_string(),
            "trusted": adopted != Adopted::Nothing,
            "stamped": adopted == Adopted::Now,
            "elsewhere": elsewhere,
        }));
    }
    if !global.quiet {
        let db = escape(&project.state.db.display().to_string()).into_owned();
        match adopted {
            Adopted::Now if elsewhere.is_empty() => eprintln!(
                "sticky: {db} is yours now: its conversations continue here (`sticky status` \
                 shows them)"
            ),
            Adopted::Now => eprintln!("sticky: {db} is yours now"),
            Adopted::Already => eprintln!("sticky: {db} is already yours"),
            Adopted::Nothing => eprintln!("sticky: no database at {db}: nothing to trust"),
        }
        for (thread, live) in &elsewhere {
            eprintln!("sticky: {}", next_step(thread, live, &project.dir));
        }
    }
    Ok(Report::nothing())
}

/// The conversations whose live session was recorded for another directory than the project's:
/// (thread, its live session). A database that cannot be read names none (the next turn says
/// why).
fn elsewhere(project: &Project) -> Vec<(String, SessionRow)> {
    let read = || -> Result<Vec<(String, SessionRow)>> {
        let Some(store) = Store::open_existing(&project.state.db)? else {
            return Ok(Vec::new());
        };
        let mut found = Vec::new();
        for thread in store.threads()? {
            if let Some(live) = store.live_session(thread.id)? {
                if live.directory != project.dir {
                    found.push((thread.name, live));
                }
            }
        }
        Ok(found)
    };
    read().unwrap_or_default()
}

/// What to run for thread `thread`, whose live session `live` belongs to another directory than
/// `project`: `sticky relocate` when that directory is gone (the project moved here), `sticky
/// new` when it exists (this is a copy of it), and `sticky new --carry` when it is gone but
/// another copy of the project took the session since (`relocate` would refuse it).
fn next_step(thread: &str, live: &SessionRow, project: &Path) -> String {
    if let Standing::Taken(now) = standing::standing(live) {
        return standing::taken(thread, live, now.as_deref(), project);
    }
    let dir = &live.directory;
    let shown = dir.display().to_string();
    let (thread, shown) = (escape(thread), escape(&shown));
    if dir.exists() {
        format!(
            "thread {thread} was recorded in {shown}, which still exists, so this is a copy of \
             that project: run `sticky new` here for a session of its own (or sticky in {shown} \
             to go on there)"
        )
    } else {
        format!(
            "thread {thread} was recorded in {shown}, which is gone: if the project moved here, \
             run `sticky relocate` to go on with it here (else `sticky new` for a session of its \
             own)"
        )
    }
}
