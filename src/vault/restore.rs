//! The restore: when the agent reports the pinned session lost, the vault's copies go back
//! into the agent's home, where they are missing (never over a file the agent has).

use std::fs::DirBuilder;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

use anyhow::{Context as _, Result};

use super::Vault;
use crate::agent::Adapter;

/// What a restore put back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Restored {
    /// The files put back.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
}

impl Vault {
    /// Puts the vault's copies of agent session `id` back into the agent's home (under the
    /// user's `home`) where they are missing: `None` when the vault holds no copy of it.
    /// Restored files are the user's only (0600, new directories 0700), written through a
    /// temporary file renamed into place.
    pub fn restore(
        &self,
        adapter: &dyn Adapter,
        home: &Path,
        id: &str,
    ) -> Result<Option<Restored>> {
        let files = self.files(adapter.name(), id)?;
        let rows = self.rows(adapter.name(), id)?;
        if files.is_empty() && rows.is_none() {
            return Ok(None);
        }
        let root = adapter.agent_home(home).with_context(|| {
            format!(
                "sticky does not know where {} keeps its sessions",
                adapter.name()
            )
        })?;
        let mut restored = Restored::default();
        for file in &files {
            anyhow::ensure!(
                adapter.restorable(&file.relative, id),
                "the vault names {} as a file of session {id}, which {} does not keep there; \
                 nothing was restored (was the vault copied from elsewhere?)",
                file.relative.display(),
                adapter.name()
            );
        }
        for file in files {
            let target = root.join(&file.relative);
            if std::fs::symlink_metadata(&target).is_ok() {
                continue;
            }
            put_back(&file.copy, &target)
                .with_context(|| format!("cannot restore {}", target.display()))?;
            restored.files += 1;
            restored.bytes += file.len;
        }
        if let (Some(copy), Some(rows)) = (rows, adapter.session_rows(home, id)) {
            let document =
                std::fs::read(&copy).with_context(|| format!("cannot read {}", copy.display()))?;
            let back = super::rows::restore(&rows, id, &document)
                .with_context(|| format!("cannot restore rows into {}", rows.database.display()))?;
            if back {
                restored.files += 1;
                restored.bytes += document.len() as u64;
            }
        }
        Ok(Some(restored))
    }
}

/// Copies `copy` to `target` through a temporary file beside it.
fn put_back(copy: &Path, target: &Path) -> Result<()> {
    let parent = target.parent().context("a file has a parent directory")?;
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(parent)?;
    let mut name = target.file_name().unwrap_or_default().to_owned();
    name.push(format!(".sticky-restore{}", std::process::id()));
    let temporary = parent.join(name);
    let copied = (|| {
        let mut from = std::fs::File::open(copy)?;
        let mut out = super::open_private(&temporary, false)?;
        std::io::copy(&mut from, &mut out)?;
        std::fs::rename(&temporary, target)
    })();
    if copied.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    Ok(copied?)
}
