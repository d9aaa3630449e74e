//! A session's files an agent home still keeps under the directory the project moved from, the
//! session being this project's own: `sticky relocate` ran in another agent home (one shell with
//! `CLAUDE_CONFIG_DIR`, one without), or this one was restored from a backup made before the
//! move (review 25, M2). Not another project's session: that directory is gone (or made again
//! without a state, or this project under another name), so no turn there goes on with it, and
//! this project's vault holds the session's copy for this directory, which only a turn here or
//! a relocate into here writes. The turn moves the files here as `relocate` would, then its
//! check against the vault's copy catches them up with the turns run since.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::agent::relocation;
use crate::bundle::place::Move;
use crate::cmd::Context;
use crate::cmd::standing::{OldPath, kept_elsewhere, old_path};
use crate::cmd::view::escape;
use crate::store::SessionRow;

/// The project's former directory, for which this HOME's agent keeps `live`'s session (one
/// recorded for the project), when the module's conditions hold; `None` otherwise (no such
/// file, or another project's: the turn refuses it as before).
pub fn former(ctx: &Context, live: &SessionRow) -> Option<PathBuf> {
    if live.directory != ctx.project.dir || !ctx.settings.vault.value {
        return None;
    }
    let id = live.agent_session_id.as_deref()?;
    let other = kept_elsewhere(live, &ctx.project.dir)?;
    let there = SessionRow {
        directory: other.clone(),
        ..live.clone()
    };
    let no_original = match old_path(&there, &ctx.project) {
        OldPath::Gone => true,
        // A path to the agent's file (its directory could not be read) is no directory.
        OldPath::Bare | OldPath::Here => other.is_dir(),
        _ => false,
    };
    if !no_original {
        return None;
    }
    let vault = crate::vault::Vault::new(&ctx.project.state.vault);
    let copy = vault.manifest(&live.agent, id).ok().flatten()?;
    (copy.directory == ctx.project.dir && !copy.files.is_empty()).then_some(other)
}

/// Moves what this HOME's agent keeps of `live`'s session for `from`, the project's former
/// directory ([`former`]), to where it keeps it for the project, as `relocate` moves a session
/// (what names the directory rewritten; a destination holding other bytes refused), holding the
/// session for this HOME meanwhile.
pub fn carry(ctx: &Context, thread: &str, live: &SessionRow, from: &Path) -> Result<()> {
    let (Some(id), Some(relocate)) = (
        live.agent_session_id.as_deref(),
        relocation::for_agent(&live.agent),
    ) else {
        return Ok(());
    };
    let _claim = crate::cmd::kept::claim(&live.agent, id)?;
    let home = crate::settings::home()?;
    let files = relocate.files(&home, from, id)?;
    if files.is_empty() {
        return Ok(());
    }
    let moving = Move {
        relocate,
        agent_home: relocate.home(&home),
        from: from.to_owned(),
        to: ctx.project.dir.clone(),
        id: id.to_owned(),
    };
    let staging = tempfile::Builder::new()
        .prefix(".sticky-relocate-")
        .tempdir_in(moving.staging_root())?;
    let stagings = moving.stage_local(&files, staging.path())?;
    moving.place(&stagings, false)?;
    super::remove_moved(&moving, &files, &stagings);
    note!(
        "thread {}: {} kept session {} in this agent home for {}, the directory this project \
         moved from; moved it here, as `sticky relocate` did in another",
        escape(thread),
        live.agent,
        escape(id),
        escape(&from.display().to_string()),
    );
    Ok(())
}
