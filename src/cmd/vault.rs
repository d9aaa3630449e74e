//! The vault as `status` and `doctor` show it: on or off, its size, its newest copy; the turns a
//! copy lacks, which keep a turn's restore and `relocate` from putting it back; and the
//! warning `doctor` gives when the agent's own retention may have deleted the session; which
//! copies `forget`, `threads --prune` and `import --replace` may delete ([`copies`]); and the
//! agent's files caught up with the vault's copies before a turn, a fork or an export reads them
//! ([`catch_up`]).

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::view::{escape, format_time, thread_flag};
use crate::exit::StickyError;
use crate::store::{SessionRow, Store, TurnRow};
use crate::vault::{CaughtUp, Vault};

/// The most missing turns a message names (the rest are counted).
const NAMED: usize = 3;

/// The vault in a report (`--json`: `vault`).
#[derive(Debug, Default, Serialize)]
pub struct VaultView {
    /// Whether turns copy their session's files (`vault = false` turns it off).
    pub enabled: bool,
    /// Its directory (`<db>.vault`).
    pub directory: String,
    /// The bytes its files take.
    pub size: u64,
    /// The most recent copy.
    pub newest: Option<NewestView>,
}

/// The most recent copy in the vault.
#[derive(Debug, Serialize)]
pub struct NewestView {
    /// The agent.
    pub agent: String,
    /// The agent's session ID.
    pub session: String,
    /// When it was copied (Unix milliseconds).
    pub copied_at: i64,
}

impl VaultView {
    /// The project's vault, read (a vault that cannot be read shows as empty).
    pub fn read(ctx: &Context) -> Self {
        let vault = Vault::new(&ctx.project.state.vault);
        Self {
            enabled: ctx.settings.vault.value,
            directory: vault.dir().display().to_string(),
            size: vault.size().unwrap_or(0),
            newest: vault.newest().map(|newest| NewestView {
                agent: newest.agent,
                session: newest.session,
                copied_at: newest.copied_at,
            }),
        }
    }

    /// One line of text: its size and newest copy, and whether it is off.
    pub fn text(&self) -> String {
        let state = if self.enabled {
            ""
        } else {
            " (off: vault = false)"
        };
        match &self.newest {
            None => format!("empty{state}"),
            Some(newest) => format!(
                "{}, newest copy {} ({} {}){state}",
                human_size(self.size),
                format_time(newest.copied_at),
                escape(&newest.agent),
                escape(&newest.session)
            ),
        }
    }
}

/// When the vault last copied session `live`, if it holds a copy.
pub fn copied_at(ctx: &Context, live: &SessionRow) -> Option<i64> {
    let id = live.agent_session_id.as_deref()?;
    let vault = Vault::new(&ctx.project.state.vault);
    let manifest = vault.manifest(&live.agent, id).ok()??;
    (!vault.files(&live.agent, id).ok()?.is_empty()).then_some(manifest.copied_at)
}

/// The turns of session `live` (among `turns`, its own) that the vault's copy of it lacks, as
/// `#3, #4`: a turn does not put such a copy back (see `Manifest::lacks`). `None` when the copy
/// holds them all, or there is none.
pub fn lacking(ctx: &Context, live: &SessionRow, turns: &[TurnRow]) -> Option<String> {
    let id = live.agent_session_id.as_deref()?;
    let manifest = Vault::new(&ctx.project.state.vault)
        .manifest(&live.agent, id)
        .ok()??;
    let lacks: Vec<String> = manifest
        .lacks(turns.iter())
        .iter()
        .map(|turn| format!("#{}", turn.id))
        .collect();
    (!lacks.is_empty()).then(|| lacks.join(", "))
}

/// What the vault's copy of session `id` lacks of the turns the database records on
/// `session` of thread `thread` (`None` when it holds them all, or holds no copy): the turns
/// named, and the way out. The database says which turns count; the copy's manifest says
/// which it reaches. A turn asks it before a restore, `relocate` before it carries a session
/// only the vault keeps.
pub fn behind(
    vault: &Vault,
    store: &Store,
    session: &crate::store::SessionRow,
    thread: &str,
    id: &str,
) -> Result<Option<String>> {
    let Some(manifest) = vault.manifest(&session.agent, id)? else {
        return Ok(None);
    };
    let turns = store.turns(session.thread_id)?;
    let missing = manifest.lacks(turns.iter().filter(|row| row.session_id == session.id));
    if missing.is_empty() {
        return Ok(None);
    }
    let mut named: Vec<String> = missing
        .iter()
        .take(NAMED)
        .map(|row| super::view::turn_name(row))
        .collect();
    if missing.len() > NAMED {
        named.push(format!("{} more", missing.len() - NAMED));
    }
    let flag = super::view::thread_flag(thread);
    let (one, turns) = (missing.len() == 1, named.join(", "));
    Ok(Some(format!(
        "sticky's vault holds a copy of it that ends before turn{} {turns} (copying {} into the \
         vault failed), so it was not put back: resumed, the agent would go on with {} \
         forgotten; run `sticky{flag} new --carry \"...\"` for a new session that starts with \
         sticky's recap of the conversation, {} included",
        if one { "" } else { "s" },
        if one { "it" } else { "them" },
        if one { "that turn" } else { "those turns" },
        if one { "that turn" } else { "those turns" },
    )))
}

/// The warning when the agent deletes sessions older than its retention (Claude Code's
/// `cleanupPeriodDays`) and the last turn is older than that: the agent may have deleted the
/// session's files by now. `turns`: the thread's last turn, and the live session's turns, which
/// say whether the vault's copy holds them all (a copy that lacks one is not restored).
pub fn retention_warning(
    ctx: &Context,
    live: &SessionRow,
    (last, turns): (Option<&TurnRow>, &[TurnRow]),
    now: i64,
) -> Option<String> {
    const DAY: i64 = 86_400_000;
    let adapter = ctx.agents.find(&live.agent)?;
    let days = adapter.retention_days(&crate::settings::home().ok()?)?;
    let last = last?;
    let since = now.saturating_sub(last.ended_at.unwrap_or(last.started_at));
    let limit = i64::try_from(days).unwrap_or(i64::MAX).saturating_mul(DAY);
    if since <= limit {
        return None;
    }
    let kept = match copied_at(ctx, live) {
        Some(at) if ctx.settings.vault.value => match lacking(ctx, live, turns) {
            None => format!(
                "sticky's vault has a copy from {}, which the next turn restores",
                format_time(at)
            ),
            Some(lacks) => format!(
                "sticky's vault has a copy from {}, but it lacks turn {lacks} (copying into the \
                 vault failed since), so the next turn would not put it back; `sticky new \
                 --carry \"...\"` starts a new session with sticky's recap of the conversation",
                format_time(at)
            ),
        },
        Some(_) => "sticky's vault has a copy, but it is off (vault = false)".to_owned(),
        None => "sticky's vault has no copy of it".to_owned(),
    };
    Some(format!(
        "{} deletes sessions older than {days} day{} (cleanupPeriodDays) and the last turn was \
         {} days ago, so it may have deleted session {}; {kept}",
        live.agent,
        if days == 1 { "" } else { "s" },
        since / DAY,
        live.agent_session_id.as_deref().unwrap_or("-"),
    ))
}

/// A size in B, KiB, MiB or GiB.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut size = bytes;
    let mut unit = 0;
    while size >= 1024 * 10 && unit + 1 < UNITS.len() {
        size /= 1024;
        unit += 1;
    }
    format!("{size} {}", UNITS[unit])
}

/// Whether the vault holds a copy of `session`.
fn copied(vault: &Vault, session: &SessionRow) -> bool {
    session
        .agent_session_id
        .as_deref()
        .is_some_and(|id| vault.session_dir(&session.agent, id).exists())
}

/// The vault copies of some sessions: those forgetting deletes, and those it keeps, with the
/// thread that keeps each.
pub struct Copies<'a> {
    pub deleted: Vec<&'a SessionRow>,
    kept: Vec<(&'a SessionRow, String)>,
}

/// Which vault copies of `sessions` forgetting the threads `leaving` deletes: those no other
/// thread's next turn takes (as its live session, or as the source of a fork not made yet).
/// The vault keeps one copy of an agent session for the whole database, and a session can be
/// on record in several threads (a conversation imported back under another name, a fork):
/// deleting a copy another thread lives on would lose that session once the agent sweeps its
/// files (review 19, M2).
pub fn copies<'a>(
    store: &Store,
    vault: &Vault,
    sessions: &'a [SessionRow],
    leaving: &[i64],
) -> Result<Copies<'a>> {
    let mut copies = Copies {
        deleted: Vec::new(),
        kept: Vec::new(),
    };
    for session in sessions.iter().filter(|session| copied(vault, session)) {
        let Some(id) = session.agent_session_id.as_deref() else {
            continue;
        };
        let keeper = store
            .threads_keeping(&session.agent, id)?
            .into_iter()
            .find(|thread| !leaving.contains(&thread.id));
        match keeper {
            Some(thread) => copies.kept.push((session, thread.name)),
            None => copies.deleted.push(session),
        }
    }
    Ok(copies)
}

impl Copies<'_> {
    /// Deletes the copies to delete and says which stay, for which thread; returns how many
    /// were deleted.
    pub fn delete(&self, vault: &Vault) -> Result<usize> {
        let mut deleted = 0;
        for session in &self.deleted {
            if let Some(id) = &session.agent_session_id {
                deleted += usize::from(vault.delete(&session.agent, id)?);
            }
        }
        for (session, thread) in &self.kept {
            note!(
                "the vault's copy of {} session {} stays: thread {}'s next turn takes it",
                escape(&session.agent),
                escape(session.agent_session_id.as_deref().unwrap_or_default()),
                escape(thread)
            );
        }
        Ok(deleted)
    }
}

/// Before a turn goes on with `live`, a session of thread `thread` (or a fork reads it, or
/// `export` bundles it): the agent's files of it checked against the vault's copies, which hold
/// every turn sticky ran on it. Files behind their copies (another agent home than the last
/// turn's, `CLAUDE_CONFIG_DIR` set in one shell and not another; a home restored from a
/// backup) get the copies back, said on stderr; a file that went another way refuses (73)
/// before anything is recorded, rather than let the agent go on with sticky's latest turns
/// forgotten (review 23, M1). A copy that lacks turns itself proves nothing of them, and a
/// check that cannot be made is said and passed over.
pub fn catch_up(ctx: &Context, store: &Store, live: &SessionRow, thread: &str) -> Result<()> {
    if !ctx.settings.vault.value {
        return Ok(());
    }
    let (Some(id), Ok(adapter)) = (&live.agent_session_id, ctx.agents.get(&live.agent)) else {
        return Ok(());
    };
    // A session of another directory is the turn's to refuse, before anything of it is touched.
    if live.directory != ctx.project.dir {
        return Ok(());
    }
    // Kept in this agent home under the directory the project moved from: moved here first,
    // then caught up below (review 25, M2).
    crate::cmd::former::before_turn(ctx, &ctx.thread, live)?;
    let vault = Vault::new(&ctx.project.state.vault);
    let home = crate::settings::home()?;
    let whole = || Ok(behind(&vault, store, live, thread, id)?.is_none());
    let caught_up = vault.catch_up(adapter, &home, id, &live.directory, whole);
    let agent = adapter.name();
    match caught_up {
        Ok(CaughtUp::Holds) => Ok(()),
        Ok(CaughtUp::Restored(files, _)) => {
            note!(
                "{agent}'s files of session {} ended before turns sticky's vault holds (another \
                 agent home than the last turn's, or one restored from a backup?); restored {files} \
                 file{} from the vault, so the turn goes on with every turn",
                escape(id),
                if files == 1 { "" } else { "s" }
            );
            Ok(())
        }
        Ok(CaughtUp::Diverged(path)) => Err(StickyError::Elsewhere(format!(
            "{agent}'s file {} of session {} is not the one sticky's vault kept after the last \
             turn, nor its beginning: the session went on elsewhere too (turns in another agent \
             home, or {agent} run by hand), and resumed here {agent} would go on without \
             sticky's latest turns; nothing was run. Move that file away to go on from the \
             vault's copy (sticky puts it back), or run `sticky{} new --carry \"...\"` for a new \
             session that starts with sticky's recap of the conversation",
            escape(&path.display().to_string()),
            escape(id),
            thread_flag(thread)
        ))
        .into()),
        Err(error) => {
            note!(
                "could not compare {agent}'s files of session {} with sticky's vault: {}",
                escape(id),
                escape(&format!("{error:#}"))
            );
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_the_largest_unit_that_keeps_two_digits() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(10_239), "10239 B");
        assert_eq!(human_size(10_240), "10 KiB");
        assert_eq!(human_size(20 << 20), "20 MiB");
        assert_eq!(human_size(100 << 30), "100 GiB");
    }
}
