//! The restore: when the agent reports the pinned session lost, the vault's copies go back
//! into the agent's home, where they are missing (never over a file the agent has).
//!
//! Every byte put back is proved first: each copy is streamed into a temporary file beside its
//! place while its size and SHA-256 are checked against the manifest, and only when every copy
//! matches are they renamed into place. A copy that is a link, or that was swapped, cut or grown
//! since sticky made it, is refused, and nothing is put back (issue 23). Below the agent's home
//! (which may itself be a link the user made) nothing is followed: `crate::confined`.

use std::ffi::OsString;
use std::path::Path;

use anyhow::{Context as _, Result};

use super::{Vault, open_copy, read_manifest, verify};
use crate::agent::{Adapter, relocation};
use crate::confined::{Dir, Kind};

/// What a restore put back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Restored {
    /// The files put back.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// When `sticky trust` adopted the state the copy came with, if it was made elsewhere
    /// ([`super::Manifest::adopted_at`]).
    pub adopted_at: Option<i64>,
}

/// A copy proved and written beside its place, waiting to be renamed into it.
pub(super) struct Proved {
    dir: Dir,
    temporary: OsString,
    name: OsString,
    /// Its bytes.
    pub(super) len: u64,
}

impl Proved {
    /// Renames the proved copy into its place (over what is there, when it was staged so).
    pub(super) fn put_in_place(&self) -> Result<()> {
        self.dir
            .rename(&self.temporary, &self.dir, &self.name)
            .with_context(|| {
                format!(
                    "cannot restore {}",
                    self.dir.path().join(&self.name).display()
                )
            })
    }
}

impl Vault {
    /// Puts the vault's copies of agent session `id`, run in `directory`, back into the agent's
    /// home (under the user's `home`) where they are missing: `None` when the vault holds no
    /// copy of it. Only the files the agent keeps for `directory` are put back: a copy made
    /// for another directory (before `sticky relocate` moved the session, or named by a vault
    /// that came with a state from elsewhere) would put a stale transcript beside the current
    /// one, or another project's into its directory (review 5, M2). Restored files are the
    /// user's only (0600, new directories 0700), each proved to be the copy sticky made before
    /// any is put in place.
    pub fn restore(
        &self,
        adapter: &dyn Adapter,
        home: &Path,
        id: &str,
        directory: &Path,
    ) -> Result<Option<Restored>> {
        let Some(session) = self.open_session(adapter.name(), id)? else {
            return Ok(None);
        };
        let Some(manifest) = read_manifest(&session)? else {
            return Ok(None);
        };
        let mut copies = Vec::new();
        for entry in &manifest.files {
            super::ensure_plain(&entry.relative)?;
            if let Some(copy) = open_copy(&session, &entry.relative)? {
                copies.push((entry, copy));
            }
        }
        let rows = self.rows(adapter.name(), id)?;
        if copies.is_empty() && rows.is_none() {
            return Ok(None);
        }
        let root = adapter.agent_home(home).with_context(|| {
            format!(
                "sticky does not know where {} keeps its sessions",
                adapter.name()
            )
        })?;
        check_restorable(adapter, copies.iter().map(|(entry, _)| *entry), id)?;
        copies.retain(|(entry, _)| kept_for(adapter, &root, &entry.relative, id, directory));
        if copies.is_empty() && rows.is_none() {
            return Ok(None);
        }
        let proved = stage(&root, copies, false)?;
        let mut restored = Restored {
            adopted_at: manifest.adopted_at,
            ..Restored::default()
        };
        for file in &proved {
            file.put_in_place()?;
            restored.files += 1;
            restored.bytes += file.len;
        }
        if let (Some(document), Some(rows)) = (rows, adapter.session_rows(home, id)) {
            if restore_rows(&root, &rows, id, &document)? {
                restored.files += 1;
                restored.bytes += document.len() as u64;
            }
        }
        Ok(Some(restored))
    }
}

/// Whether the agent keeps `relative` (a file of session `id` under its home `agent_home`) for
/// the session run in `directory`: where `Relocate::place` would put it for that directory is
/// where it is. A path that names no directory (Codex's rollouts) is kept for any.
pub(super) fn kept_for(
    adapter: &dyn Adapter,
    agent_home: &Path,
    relative: &Path,
    id: &str,
    directory: &Path,
) -> bool {
    relocation::for_agent(adapter.name()).is_none_or(|relocate| {
        relocate
            .place(agent_home, relative, id, directory, directory)
            .is_ok_and(|placed| placed == relative)
    })
}

/// Writes each copy beside its place under `root`, proved against its manifest entry, for
/// every place where the agent's home has no file (or, `over`, for every place); on any
/// failure, removes every one written and puts nothing in place.
fn stage(
    root: &Path,
    copies: Vec<(&super::Entry, std::fs::File)>,
    over: bool,
) -> Result<Vec<Proved>> {
    let mut proved = Vec::new();
    let staged = (|| {
        let top =
            Dir::create_top(root).with_context(|| format!("cannot create {}", root.display()))?;
        for (entry, copy) in copies {
            let (dir, name) = top
                .parent_of(&entry.relative, true)
                .with_context(|| format!("cannot restore {}", entry.relative.display()))?;
            match dir.kind(name)? {
                None => {}
                // Only ever over a regular file: a link is not followed, nor replaced.
                Some(Kind::File) if over => {}
                Some(_) if over => anyhow::bail!(
                    "cannot restore {}: it is not a regular file",
                    entry.relative.display()
                ),
                Some(_) => continue,
            }
            let temporary = super::temporary(name, ".sticky-restore");
            let mut out = super::create_temporary(&dir, &temporary)
                .with_context(|| format!("cannot restore {}", entry.relative.display()))?;
            proved.push(Proved {
                temporary,
                name: name.to_owned(),
                len: entry.len,
                dir,
            });
            verify(
                copy,
                entry.len,
                entry.sha256.as_deref(),
                &entry.relative,
                &mut out,
            )?;
        }
        Ok::<_, anyhow::Error>(())
    })();
    if let Err(error) = staged {
        for file in &proved {
            let _ = file.dir.remove_file(&file.temporary);
        }
        return Err(error);
    }
    Ok(proved)
}

/// [`stage`] over the agent's files, which the caller found behind their copies.
pub(super) fn stage_over(
    root: &Path,
    copies: Vec<(&super::Entry, std::fs::File)>,
) -> Result<Vec<Proved>> {
    stage(root, copies, true)
}

/// Puts the session's rows (`document`, the vault's `rows.json`) back into the agent's
/// database under `root`; `true` when any went back.
fn restore_rows(
    root: &Path,
    rows: &crate::agent::SessionRows,
    id: &str,
    document: &[u8],
) -> Result<bool> {
    // SQLite opens the agent's database by its path: the way to it is made (0700) and checked
    // first, so no link below the agent's home leads it elsewhere.
    let (dir, name) = Dir::create_top(root)
        .and_then(|top| top.parent_of(&rows.relative, true))
        .with_context(|| format!("cannot restore rows into {}", rows.database.display()))?;
    anyhow::ensure!(
        matches!(dir.kind(name)?, None | Some(Kind::File)),
        "cannot restore rows into {}: it is not a regular file (a link is not followed)",
        rows.database.display()
    );
    super::rows::restore(rows, id, document)
        .with_context(|| format!("cannot restore rows into {}", rows.database.display()))
}

/// Refuses a manifest that names a file the agent does not keep for session `id` there
/// ([`Adapter::restorable`], as import decides): a restore puts back only the agent's own files
/// of that session, never one that merely holds its ID in its name (`agents/<id>.md`).
fn check_restorable<'a>(
    adapter: &dyn Adapter,
    entries: impl Iterator<Item = &'a super::Entry>,
    id: &str,
) -> Result<()> {
    for entry in entries {
        anyhow::ensure!(
            adapter.restorable(&entry.relative, id),
            "the vault names {} as a file of session {id}, which is none of the files {} keeps \
             for a session (a restore puts back only those); nothing was restored (was the \
             vault copied from elsewhere?)",
            entry.relative.display(),
            adapter.name()
        );
    }
    Ok(())
}
