//! The projects a report reads: this one, and with `--all` every project of the user's list
//! (`project::registry`), each located and checked as a turn there would be. What cannot be
//! read is skipped with the reason, never trusted; `--prune` drops the projects that are gone
//! from the list.

use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::view::escape;
use crate::project::registry::{self, Found};
use crate::store::Store;

/// A project's database, open for reading.
pub struct Source {
    /// The project directory.
    pub project: PathBuf,
    /// Its store.
    pub store: Store,
}

/// A listed project that was not read, and why.
#[derive(Debug, Serialize)]
pub struct Skipped {
    /// The project directory.
    pub project: String,
    /// Its database.
    pub database: String,
    /// Why it was skipped.
    pub reason: String,
    /// Whether it is gone (`--prune` drops it).
    pub gone: bool,
    /// Whether this run dropped it from the list.
    pub pruned: bool,
}

/// This project's store (when it has one), then with `all` every other listed project's that
/// may be read, with the ones skipped; `prune` drops the gone ones from the list.
pub fn sources(ctx: &Context, all: bool, prune: bool) -> Result<(Vec<Source>, Vec<Skipped>)> {
    let mut sources = Vec::new();
    if let Some(store) = ctx.existing_store()? {
        sources.push(Source {
            project: ctx.project.dir.clone(),
            store,
        });
    }
    let mut skipped = Vec::new();
    if !all {
        return Ok((sources, skipped));
    }
    let listed = registry::read()?;
    let mut keep = Vec::with_capacity(listed.len());
    for entry in listed {
        let database = entry.database();
        if database == ctx.project.state.db {
            keep.push(entry);
            continue;
        }
        let skip = |reason: String, gone: bool| Skipped {
            project: entry.dir.display().to_string(),
            database: database.display().to_string(),
            reason,
            gone,
            pruned: gone && prune,
        };
        let outcome = match registry::locate_listed(&entry) {
            Found::Usable(project) => match Store::open_elsewhere(&project.state.db) {
                Ok(Some(store)) => {
                    sources.push(Source {
                        project: project.dir,
                        store,
                    });
                    None
                }
                Ok(None) => Some(skip("it is gone".to_owned(), true)),
                Err(error) => Some(skip(format!("{error:#}"), false)),
            },
            Found::Gone => Some(skip("it is gone".to_owned(), true)),
            Found::Refused(reason) => Some(skip(reason, false)),
        };
        match outcome {
            Some(skip) => {
                if !skip.pruned {
                    keep.push(entry);
                }
                skipped.push(skip);
            }
            None => keep.push(entry),
        }
    }
    if prune && skipped.iter().any(|s| s.pruned) {
        registry::replace(&keep)?;
    }
    for skip in &skipped {
        aside!("{}", escape(&skip.note()));
    }
    Ok((sources, skipped))
}

impl Skipped {
    /// The note on stderr.
    fn note(&self) -> String {
        if self.pruned {
            format!(
                "dropped {} from the list of projects: it is gone",
                self.project
            )
        } else if self.gone {
            format!(
                "skipped {}: it is gone (`--all --prune` drops it from the list of projects)",
                self.project
            )
        } else {
            format!("skipped {}: {}", self.project, self.reason)
        }
    }
}
