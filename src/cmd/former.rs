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

/// Before a turn resumes `live`, the session of thread `thread` recorded for this project:
/// what this agent home keeps of it under the project's former directory ([`former`]) moved
/// here, said on stderr; the turn's check against the vault's copy then catches it up.
pub fn before_turn(ctx: &Context, thread: &str, live: &SessionRow) -> Result<()> {
    let Some(from) = former(ctx, live) else {
        return Ok(());
    };
    carry(ctx, live, &from)?;
    note!(
        "thread {}: {} kept session {} in this agent home for {}, the directory this project \
         moved from; moved it here",
        escape(thread),
        live.agent,
        escape(live.agent_session_id.as_deref().unwrap_or_default()),
        escape(&from.display().to_string()),
    );
    Ok(())
}

/// The project's former directory, for which this HOME's agent keeps `live`'s session (one
/// recorded for the project), when the module's conditions hold, so the turn carries it by
/// itself; `None` otherwise (no such file, another project's, or no vault copy to catch it up
/// with: the turn refuses it, naming `sticky relocate` for a gone directory).
pub fn former(ctx: &Context, live: &SessionRow) -> Option<PathBuf> {
    if !ctx.settings.vault.value {
        return None;
    }
    let id = live.agent_session_id.as_deref()?;
    let other = left_behind(ctx, live)?;
    let vault = crate::vault::Vault::new(&ctx.project.state.vault);
    let copy = vault.manifest(&live.agent, id).ok().flatten()?;
    (copy.directory == ctx.project.dir && !copy.files.is_empty()).then_some(other)
}

/// The directory, gone (or made again without a state, or this project under another name),
/// for which this HOME's agent keeps `live`'s session, one recorded for the project: the
/// directory the project moved from, whose files `sticky relocate` carries here. `None` when
/// the agent keeps it for no other directory, for one that exists with a state, or for this
/// one too (what it keeps here is what it resumes; nothing is moved over it).
pub fn left_behind(ctx: &Context, live: &SessionRow) -> Option<PathBuf> {
    if live.directory != ctx.project.dir {
        return None;
    }
    let (id, adapter) = (
        live.agent_session_id.as_deref()?,
        ctx.agents.find(&live.agent)?,
    );
    let home = crate::settings::home().ok()?;
    if adapter
        .transcript(&home, &ctx.project.dir, id)
        .is_some_and(|path| path.is_file())
    {
        return None;
    }
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
    no_original.then_some(other)
}

/// Moves what this HOME's agent keeps of `live`'s session for `from`, the project's former
/// directory ([`left_behind`]), to where it keeps it for the project, as `relocate` moves a session
/// (what names the directory rewritten; a destination holding other bytes refused), holding the
/// session for this HOME meanwhile.
pub fn carry(ctx: &Context, live: &SessionRow, from: &Path) -> Result<()> {
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
    moving.remove_moved(&files, &stagings);
    Ok(())
}

/// Why a turn does not resume thread `thread`'s session `live` while this agent home keeps it
/// for `other`, the directory the project moved from ([`left_behind`]), when the turn does not
/// carry it by itself ([`former`]: no vault copy to catch it up with), and the way on.
pub fn refusal(thread: &str, live: &SessionRow, other: &Path) -> String {
    let agent = &live.agent;
    format!(
        "thread {}: {agent} session {} is one {agent} in this agent home keeps for {}, which is \
         gone: the directory this project moved from (`sticky relocate` ran in another agent \
         home, or this one was restored from a backup made before the move); sticky has no \
         copy of the session in its vault to bring it up to date here, so nothing was run: run \
         `sticky relocate` here to carry it to this directory, or run the turn with the agent \
         home `sticky relocate` ran in",
        escape(thread),
        escape(live.agent_session_id.as_deref().unwrap_or_default()),
        escape(&other.display().to_string()),
    )
}
