//! `sticky relocate`: after a project moved (or was renamed), carry its conversations forward:
//! each live session recorded for the old directory gets its agent's files moved to where the
//! agent looks for the new one (what encodes the directory rewritten), and is recorded here.
//!
//! One command in place of `export` then `import` of the project's own bundle: nothing to name
//! or keep, and the old files are moved, not copied, so no agent finds two copies of one
//! session. It refuses when the old directory still holds a state of the user's that goes on
//! with the session (its `.sticky/`, or the `STICKY_DB` the list of projects names for it): that
//! is a copy of the project, not a move, and both would then write one agent session: it names
//! `sticky new --carry` instead. One of the user's own that goes on with the session but that a
//! turn there refuses for now (others may write it, or this HOME's key did not stamp it) may be
//! the original: refused too, naming the fix to make there and, for a copy not needed there,
//! moving its state away first (review 9). One that still uses this very database (two
//! projects sharing one `STICKY_DB`) is refused as the turn and `new` refuse it, naming the
//! shared database (review 16, M3); beside threads of this project's own, such a thread is
//! passed over with a note, and only the sessions of the directory this project moved from are
//! carried: `--from DIR` names it when those to carry were recorded in several directories now
//! gone (review 20, M1 and M2). A directory made again at the old path without such
//! a state, a link to this project left there, or a state there that is not the user's (another
//! user's) is no original ([`old_path`](super::standing::old_path)). A session
//! only sticky's vault keeps (the agent swept it) is put back and moved; one never started (a
//! fork not made yet) has only its record moved. It refuses too when neither the agent nor the
//! vault keeps the session for the old directory any more, as in a second copy of a moved project
//! after the first ran `relocate`: [`standing`](super::standing)
//! finds where the session lives now, and [`advice`] is what `trust`, a turn and `doctor` say
//! there, so no advice loops back to `relocate` (issue 23 review, finding 16).
//!
//! The files moved are first compared with the vault's copies as a turn compares them: one
//! behind gets its copy back, one that went another way refuses, and the vault's copies are
//! made of the moved files only once they were found holding them (review 25, M3). A session
//! recorded here that this agent home still keeps under the directory the project moved from
//! (`relocate` ran in another agent home) is carried too (`cmd/former.rs`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::standing::{OldPath, Standing, old_path, standing, taken};
use super::{Call, Run, json_keys};
use crate::agent::relocation;
use crate::bundle::place::{self, Move};
use crate::cli::Origin;
use crate::exit::StickyError;
use crate::store::SessionRow;
use crate::vault::{CaughtUp, Vault};

use super::former::left_behind;

/// `sticky relocate`'s options.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {
    /// Carry only the sessions recorded for DIR, the directory this project moved from: needed
    /// when a database several directories use (one `STICKY_DB`) holds sessions of more than one
    /// directory that is gone
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
}

/// How long relocate waits for a turn running on a conversation to end.
const WAIT: Duration = Duration::from_secs(600);

/// The `--json` object of `sticky relocate`.
#[derive(Serialize, Default)]
struct Relocated<'a> {
    /// This project's directory.
    project: String,
    /// The sessions moved here.
    relocated: Vec<Moved<'a>>,
}

/// A session `relocate` moved.
#[derive(Serialize)]
struct Moved<'a> {
    thread: &'a str,
    agent: &'a str,
    agent_session_id: Option<&'a str>,
    /// The directory the session was moved from.
    from: String,
}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(&call.context()?, self.from.as_deref())
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<Relocated<'static>>()
    }
}

/// Moves every conversation whose live session belongs to another directory (only `-t NAME`'s
/// when given, only `--from DIR`'s when given), as [`choose`] picks them. A refusal on one
/// thread stops it; what was carried before is said all the same.
fn run(ctx: &Context, from: Option<&Path>) -> Result<Report> {
    let Some(mut store) = ctx.existing_store()? else {
        return Err(StickyError::Usage(
            "this directory has no sticky conversations to relocate".into(),
        )
        .into());
    };
    let (candidates, behind) = candidates(ctx, &store, from)?;
    // Only files left behind: nothing recorded elsewhere for `choose` to pick among.
    let chosen = if candidates.is_empty() && !behind.is_empty() {
        Vec::new()
    } else {
        choose(ctx, candidates, from)?
    };
    // The list of projects names the new directory from now on: an import elsewhere looks
    // there for the sessions this project keeps (the old directory is gone).
    crate::project::registry::note(&ctx.project);
    let mut moved = Vec::new();
    for (name, live) in chosen {
        if let Err(error) = carry(ctx, &mut store, &name, &live) {
            say_moved(ctx, &moved);
            return Err(error);
        }
        moved.push((name, live));
    }
    for (name, live, from) in behind {
        if let Err(error) = carry_behind(ctx, &name, &live, &from) {
            say_moved(ctx, &moved);
            return Err(error);
        }
        moved.push((
            name,
            SessionRow {
                directory: from,
                ..live
            },
        ));
    }
    if ctx.json {
        let relocated = moved
            .iter()
            .map(|(name, live)| Moved {
                thread: name,
                agent: &live.agent,
                agent_session_id: live.agent_session_id.as_deref(),
                from: live.directory.display().to_string(),
            })
            .collect();
        return Report::json(&Relocated {
            project: ctx.project.dir.display().to_string(),
            relocated,
        });
    }
    if moved.is_empty() {
        note!("nothing to relocate: every conversation belongs to this directory");
    }
    say_moved(ctx, &moved);
    Ok(Report::nothing())
}

/// The threads (only `-t NAME`'s when given) whose live session belongs to another directory,
/// and those whose session is recorded here but which this agent home still keeps under the
/// directory the project moved from ([`left_behind`]; only `--from DIR`'s when given): `relocate`
/// ran in another agent home, or this one was restored from a backup made before the move
/// (review 25, M2).
fn candidates(
    ctx: &Context,
    store: &crate::store::Store,
    from: Option<&Path>,
) -> Result<(Vec<(String, SessionRow)>, Behind)> {
    let (mut candidates, mut behind) = (Vec::new(), Vec::new());
    let from = from.map(absolute);
    for thread in store.threads()? {
        if ctx.origins.thread == Origin::Flag && thread.name != ctx.thread {
            continue;
        }
        let Some(live) = store.live_session(thread.id)? else {
            continue;
        };
        if live.directory != ctx.project.dir {
            candidates.push((thread.name, live));
        } else if let Some(old) = left_behind(ctx, &live) {
            if from.as_ref().is_none_or(|from| *from == old) {
                behind.push((thread.name, live, old));
            }
        }
    }
    Ok((candidates, behind))
}

/// Carries thread `thread`'s session `live`, recorded here, from `from`, where this agent home
/// still keeps it, holding the thread's lock so no turn runs on it meanwhile; the next turn
/// checks the moved files against the vault's copy, as it does every file it resumes.
fn carry_behind(ctx: &Context, thread: &str, live: &SessionRow, from: &Path) -> Result<()> {
    let _lock = crate::lock::lock(&ctx.project.state.locks, thread, WAIT, &mut || {})?
        .ok_or_else(|| StickyError::Busy(format!("a turn still runs on thread {thread}")))?;
    super::former::carry(ctx, live, from)
}

/// Threads whose session this agent home keeps under the directory the project moved from:
/// the thread's name, its live session, and that directory.
type Behind = Vec<(String, SessionRow, PathBuf)>;

/// Says which threads' sessions `moved` were carried here, and from where.
fn say_moved(ctx: &Context, moved: &[(String, SessionRow)]) {
    for (name, live) in moved {
        note!(
            "thread {} ({} session {}) moved from {} to {}",
            super::view::escape(name),
            live.agent,
            live.agent_session_id.as_deref().unwrap_or("not named yet"),
            super::view::escape(&live.directory.display().to_string()),
            super::view::escape(&ctx.project.dir.display().to_string()),
        );
    }
}

/// The sessions of `candidates` (threads whose live session belongs to another directory) that
/// `relocate` carries here. In a database several directories use (one `STICKY_DB`), a thread
/// another existing directory goes on with is that directory's, not this project's to move:
/// passed over with a note, unless `-t` names it (review 20, M1); and the sessions of one old
/// directory only are carried, the one this project moved from: `--from DIR` names it, and
/// without it sessions of several gone directories (two projects moved, or a nested one) are
/// refused, naming each, before anything changes (review 20, M2). A project's own `.sticky/`
/// holds its own sessions only: every one is carried, as before.
fn choose(
    ctx: &Context,
    candidates: Vec<(String, SessionRow)>,
    from: Option<&Path>,
) -> Result<Vec<(String, SessionRow)>> {
    let shared = ctx.project.db_overridden;
    if !shared && from.is_none() {
        return Ok(candidates);
    }
    let named = ctx.origins.thread == Origin::Flag;
    let (theirs, ours): (Vec<_>, Vec<_>) = candidates.into_iter().partition(|(_, live)| {
        shared && !named && old_path(live, &ctx.project) == OldPath::SameDatabase
    });
    // Nothing of this project's to carry: the refusal names the ways out (review 16, M3).
    if let (true, Some((name, live))) = (ours.is_empty(), theirs.first()) {
        let said = super::standing::shared_database(name, live, &ctx.project);
        return Err(StickyError::Usage(said).into());
    }
    for (name, live) in &theirs {
        note!("{}", passed_over(name, live, &ctx.project));
    }
    let Some(from) = from.map(absolute) else {
        let directories = directories(&ours);
        if shared && directories.len() > 1 {
            return Err(StickyError::Usage(several(&directories)).into());
        }
        return Ok(ours);
    };
    let (chosen, others): (Vec<_>, Vec<_>) = ours
        .into_iter()
        .partition(|(_, live)| live.directory == from);
    if chosen.is_empty() {
        return Err(StickyError::Usage(not_from(&from, &directories(&others))).into());
    }
    for (name, live) in &others {
        note!(
            "thread {}: passed over: its session was recorded in {}, not in --from's directory",
            super::view::escape(name),
            super::view::escape(&live.directory.display().to_string()),
        );
    }
    Ok(chosen)
}

/// The note for thread `thread`, whose live session `live` another existing directory using
/// this very database goes on with: `relocate` leaves it there.
fn passed_over(thread: &str, live: &SessionRow, project: &crate::project::Project) -> String {
    let flag = super::view::thread_flag(thread);
    let there = super::standing::in_original(live, project);
    format!(
        "thread {}: passed over: its session belongs to {}, which still exists and uses this \
         very database too (one STICKY_DB set for both), so it is that directory's \
         conversation, not this project's to move (`{there}{flag} \"...\"` goes on with it \
         there)",
        super::view::escape(thread),
        super::view::escape(&live.directory.display().to_string()),
    )
}

/// The directories `sessions` were recorded for, each once, with the threads of each.
fn directories(sessions: &[(String, SessionRow)]) -> Vec<(PathBuf, Vec<&str>)> {
    let mut directories: Vec<(PathBuf, Vec<&str>)> = Vec::new();
    for (name, live) in sessions {
        match directories
            .iter_mut()
            .find(|(dir, _)| *dir == live.directory)
        {
            Some((_, threads)) => threads.push(name),
            None => directories.push((live.directory.clone(), vec![name])),
        }
    }
    directories
}

/// The directories and their threads, as a message lists them: `DIR (threads a, b)`.
fn listed(directories: &[(PathBuf, Vec<&str>)]) -> String {
    let shown: Vec<String> = directories
        .iter()
        .map(|(dir, threads)| {
            let threads: Vec<_> = threads.iter().map(|t| super::view::escape(t)).collect();
            format!(
                "{} (thread{} {})",
                super::view::escape(&dir.display().to_string()),
                if threads.len() == 1 { "" } else { "s" },
                threads.join(", ")
            )
        })
        .collect();
    shown.join("; ")
}

/// Why `relocate` carries nothing when the sessions to carry were recorded for several
/// directories: this database (one `STICKY_DB`) holds other projects' sessions too, and which
/// directory this project moved from only the user knows.
fn several(directories: &[(PathBuf, Vec<&str>)]) -> String {
    let first = crate::msg::shell_path(&directories[0].0);
    format!(
        "the sessions to relocate were recorded in {} directories: {}; this database (one \
         STICKY_DB) may hold other projects' sessions too, and relocate carries only those of \
         the directory this project moved from, so nothing was changed: name it, as in \
         `sticky relocate --from {}` (run it once for each directory this project moved from); \
         another project that moved carries its own with `sticky relocate` in its new place",
        directories.len(),
        listed(directories),
        super::view::escape(&first),
    )
}

/// Why `relocate --from DIR` carries nothing: no session to carry was recorded in `from`.
fn not_from(from: &Path, others: &[(PathBuf, Vec<&str>)]) -> String {
    let from = super::view::escape(&from.display().to_string()).into_owned();
    if others.is_empty() {
        return format!(
            "no conversation here has a session recorded in {from} to relocate; nothing was \
             changed"
        );
    }
    format!(
        "no conversation here has a session recorded in {from}; those to relocate were \
         recorded in {}: name one of them with --from; nothing was changed",
        listed(others)
    )
}

/// `--from`'s directory as sessions record theirs: absolute, through the links of the part of
/// it that still exists (the directory itself is gone, after a move).
fn absolute(dir: &Path) -> PathBuf {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    if let Ok(real) = dir.canonicalize() {
        return real;
    }
    match (dir.parent().map(Path::canonicalize), dir.file_name()) {
        (Some(Ok(parent)), Some(name)) => parent.join(name),
        _ => dir,
    }
}

/// Relocates thread `thread`'s live session `live` holding it for this HOME (`kept::claim`,
/// when the agent named it) from `standing`'s look at where it is until it is recorded here,
/// so a relocate (or import) of it in another project meanwhile is seen; and holding the
/// thread's lock, so no turn runs on it meanwhile.
fn carry(
    ctx: &Context,
    store: &mut crate::store::Store,
    thread: &str,
    live: &SessionRow,
) -> Result<()> {
    let id = live.agent_session_id.as_deref();
    let _claim = id
        .map(|id| super::kept::claim(&live.agent, id))
        .transpose()?;
    let _lock = crate::lock::lock(&ctx.project.state.locks, thread, WAIT, &mut || {})?
        .ok_or_else(|| StickyError::Busy(format!("a turn still runs on thread {thread}")))?;
    relocate(ctx, store, thread, live)
}

/// Why `relocate` does not carry thread `thread`'s session `live` into `project`, where it stands
/// as `standing` says: a copy's original goes on with it, or may (held there for now), or
/// another copy took it. `None` for a move.
fn refusal(
    thread: &str,
    live: &SessionRow,
    project: &crate::project::Project,
    standing: Standing,
) -> Option<anyhow::Error> {
    let error = match standing {
        Standing::Copy => {
            let there = super::standing::in_original(live, project);
            StickyError::Usage(copied(thread, &live.directory, &there))
        }
        Standing::Held => StickyError::Usage(super::standing::held(thread, live, project)),
        Standing::SharedDatabase => {
            StickyError::Usage(super::standing::shared_database(thread, live, project))
        }
        Standing::Taken(now) => {
            StickyError::Elsewhere(taken(thread, live, now.as_deref(), project))
        }
        Standing::Moved => return None,
    };
    Some(error.into())
}

/// Moves one live session's files from its directory to the project's and records it. A
/// session only sticky's vault keeps (the agent swept it) is put back where the agent kept it
/// first, then moved as the agent's own files are; one never started (a fork not made yet, a
/// pending `sticky new`) has only its record moved: its first turn starts it here.
fn relocate(
    ctx: &Context,
    store: &mut crate::store::Store,
    thread: &str,
    live: &SessionRow,
) -> Result<()> {
    let from = &live.directory;
    let standing = standing(live, &ctx.project);
    // The agent's files name this directory already (a relocation whose record failed): only
    // the record is missing.
    if matches!(&standing, Standing::Taken(Some(now)) if *now == ctx.project.dir) {
        refuse_older_than_the_vault(ctx, thread, live)?;
        return record(ctx, store, live);
    }
    if let Some(refused) = refusal(thread, live, &ctx.project, standing) {
        return Err(refused);
    }
    let Some(id) = live.agent_session_id.as_deref() else {
        // Never named by the agent: nothing of it to move.
        return record(ctx, store, live);
    };
    let Some(relocate) = relocation::for_agent(&live.agent) else {
        return Err(unknown(thread, &live.agent));
    };
    let home = crate::settings::home()?;
    let proved = caught_up(ctx, store, thread, live, &home)?;
    let Some(files) = files_to_move(ctx, store, thread, live, relocate, &home)? else {
        // Never started: the agent has nothing of it; its first turn starts it here.
        return record(ctx, store, live);
    };
    place::require_files(&files, &live.agent, id, from)?;
    let moving = Move {
        relocate,
        agent_home: relocate.home(&home),
        from: from.clone(),
        to: ctx.project.dir.clone(),
        id: id.to_owned(),
    };
    let staging = tempfile::Builder::new()
        .prefix(".sticky-relocate-")
        .tempdir_in(moving.staging_root())?;
    let stagings = moving.stage_local(&files, staging.path())?;
    let placed = moving.place(&stagings, true)?;
    if let Err(error) = record(ctx, store, live) {
        placed.undo();
        return Err(error);
    }
    moving.remove_moved(&files, &stagings);
    move_vault_copies(ctx, thread, live, &moving, proved);
    Ok(())
}

/// The files of `live`'s session (thread `thread`) the agent keeps for its old directory in
/// this `home`, put back from the vault when it keeps none; `None` for a session never
/// started, which has none anywhere.
fn files_to_move(
    ctx: &Context,
    store: &crate::store::Store,
    thread: &str,
    live: &SessionRow,
    relocate: &dyn relocation::Relocate,
    home: &Path,
) -> Result<Option<Vec<relocation::MovingFile>>> {
    let (from, id) = (
        &live.directory,
        live.agent_session_id.as_deref().unwrap_or_default(),
    );
    let files = relocate.files(home, from, id)?;
    if !files.is_empty() {
        return Ok(Some(files));
    }
    if live.confirmed_at.is_none() {
        return Ok(None);
    }
    put_back(ctx, store, thread, live, home)?;
    let files = relocate.files(home, from, id)?;
    if !files.is_empty() {
        return Ok(Some(files));
    }
    // Gemini finds a chat through its project's registration and marker, which the vault puts
    // back as the agent's own only with the chat (review 27, M2): the old directory registered
    // again, its chat is found, moved and registered anew.
    relocate.settle(&relocate.home(home), from)?;
    Ok(Some(relocate.files(home, from, id)?))
}

/// Before recording a session whose files this agent home keeps for this directory already:
/// refused when the vault's copy of it was made since for another directory, the one the
/// project moved to and back from (turns there, in another agent home, that these files lack:
/// review 27, M1). Moved away, the files leave the vault's copy to be carried here.
fn refuse_older_than_the_vault(ctx: &Context, thread: &str, live: &SessionRow) -> Result<()> {
    let Some(id) = live.agent_session_id.as_deref() else {
        return Ok(());
    };
    if !ctx.settings.vault.value {
        return Ok(());
    }
    let vault = Vault::new(&ctx.project.state.vault);
    let Some(copy) = vault.manifest(&live.agent, id)? else {
        return Ok(());
    };
    if copy.directory == ctx.project.dir {
        return Ok(());
    }
    let home = crate::settings::home()?;
    let files: Vec<String> = relocation::for_agent(&live.agent)
        .map(|relocate| relocate.files(&home, &ctx.project.dir, id))
        .transpose()?
        .unwrap_or_default()
        .iter()
        .filter_map(|file| match &file.stored {
            relocation::Stored::File(path) => Some(crate::msg::shell_path(path)),
            relocation::Stored::Rows(_) => None,
        })
        .collect();
    Err(StickyError::Elsewhere(format!(
        "thread {}: {} keeps session {} for this directory already ({}), as it was before the \
         project moved to {}, but sticky's vault holds a later copy of it made there (turns in \
         another agent home since): resumed from here, {} would go on without them. Move those \
         files away and run `sticky relocate` again, which carries the vault's copy here",
        super::view::escape(thread),
        live.agent,
        super::view::escape(id),
        super::view::escape(&files.join(", ")),
        super::view::escape(&copy.directory.display().to_string()),
        live.agent,
    ))
    .into())
}

/// The agent's files of `live`'s session (in this agent home, for its old directory) checked
/// against the vault's copies before they are moved, as a turn checks them before it resumes
/// the session (`Vault::catch_up`): a file behind its copy (another agent home than the last
/// turn's) gets the copy back, so the move carries every turn; one that went another way
/// refuses the relocation, naming it, before anything moves (review 25, M3). Whether the files
/// were not found lacking what their copies hold (compared, or with the vault off nothing to
/// compare), so the vault's copies may be made of them.
fn caught_up(
    ctx: &Context,
    store: &crate::store::Store,
    thread: &str,
    live: &SessionRow,
    home: &Path,
) -> Result<bool> {
    let (Some(id), Ok(adapter)) = (&live.agent_session_id, ctx.agents.get(&live.agent)) else {
        return Ok(true);
    };
    if !ctx.settings.vault.value {
        return Ok(true);
    }
    let vault = Vault::new(&ctx.project.state.vault);
    let whole = || Ok(super::vault::behind(&vault, store, live, thread, id)?.is_none());
    let shown = super::view::escape(id);
    match vault.catch_up(adapter, home, id, &live.directory, whole) {
        Ok(CaughtUp::Holds) => Ok(true),
        Ok(CaughtUp::Restored(files, _)) => {
            note!(
                "{}'s files of session {shown} ended before turns sticky's vault holds (another \
                 agent home than the last turn's?); restored {files} file{} from the vault \
                 before moving them",
                live.agent,
                if files == 1 { "" } else { "s" }
            );
            Ok(true)
        }
        Ok(CaughtUp::Diverged(path)) => Err(StickyError::Elsewhere(format!(
            "thread {}: {}'s file {} of session {shown} is not the one sticky's vault kept after \
             the last turn, nor its beginning: the session went on elsewhere too (turns in \
             another agent home, or {} run by hand); nothing was moved. Move that file away to \
             relocate the vault's copy (sticky puts it back), or run `sticky{} new --carry \
             \"...\"` for a new session that starts with sticky's recap of the conversation",
            super::view::escape(thread),
            live.agent,
            super::view::escape(&path.display().to_string()),
            live.agent,
            super::view::thread_flag(thread),
        ))
        .into()),
        Err(error) => {
            note!(
                "could not compare {}'s files of session {shown} with sticky's vault: {}",
                live.agent,
                super::view::escape(&format!("{error:#}"))
            );
            Ok(false)
        }
    }
}

/// Why a session of agent `agent` is not relocated: sticky does not know where it keeps them.
fn unknown(thread: &str, agent: &str) -> anyhow::Error {
    StickyError::Usage(format!(
        "thread {}: sticky does not know where agent `{agent}` keeps its sessions; run `sticky \
         new` to start a session here",
        super::view::escape(thread)
    ))
    .into()
}

/// Records `live` as the project's: its directory is the project's now. A `STICKY_DB` database
/// that moved with the project (inside it) records where it is now beside where it was first,
/// so a copy of the moved project sees its original there once the list is lost (review 20,
/// M3).
fn record(ctx: &Context, store: &mut crate::store::Store, live: &SessionRow) -> Result<()> {
    let kept = super::kept::kept_path(&ctx.project);
    store.immediate(|tx| {
        tx.move_session(live.id, &ctx.project.dir)?;
        kept.as_deref().map_or(Ok(()), |path| tx.add_kept_at(path))
    })
}

/// Puts sticky's vault copy of `live`'s session, which the agent swept, back where the agent
/// kept it for the session's old directory, so `relocate` carries it as the agent's own files
/// (what encodes the directory rewritten). Refused when the vault is off, and when the copy
/// ends before turns the database records on the session, as a turn's restore is: resumed,
/// the agent would go on with them forgotten.
fn put_back(
    ctx: &Context,
    store: &crate::store::Store,
    thread: &str,
    live: &SessionRow,
    home: &Path,
) -> Result<()> {
    let id = live.agent_session_id.as_deref().unwrap_or_default();
    let lost = format!(
        "thread {}: {} no longer has session {}",
        super::view::escape(thread),
        live.agent,
        super::view::escape(id)
    );
    if !ctx.settings.vault.value {
        return Err(StickyError::Elsewhere(format!(
            "{lost}, and sticky's vault, which keeps a copy of it, is off (vault = false): turn \
             it on (vault = true) and run `sticky relocate` again to carry it here"
        ))
        .into());
    }
    let vault = crate::vault::Vault::new(&ctx.project.state.vault);
    if let Some(missing) = super::vault::behind(&vault, store, live, thread, id)? {
        return Err(StickyError::Elsewhere(format!("{lost}; {missing}")).into());
    }
    // Another project of this HOME whose vault keeps the session and takes it up next comes
    // first, as at a turn's restore (`kept::in_another_vault`).
    if let Some(keeper) = super::kept::in_another_vault(live, &ctx.project.dir, &ctx.project.state)
    {
        let why = super::kept::shared(thread, live, &keeper, &ctx.project.dir, false);
        return Err(StickyError::Elsewhere(why).into());
    }
    let adapter = ctx.agents.get(&live.agent)?;
    let restored = vault
        .restore(adapter, home, id, &live.directory)
        .map_err(|error| error.context(format!("{lost}, and its copy in sticky's vault")))?;
    if let Some(restored) = restored.filter(|restored| restored.files > 0) {
        // As a turn's restore says it, a copy that came with an adopted state included.
        let adopted = restored.adopted_at.map_or_else(String::new, |at| {
            format!(
                " (a copy that came with the state `sticky trust` adopted on {})",
                super::view::format_time(at)
            )
        });
        note!(
            "{lost}; carried it from sticky's vault ({} file{}){adopted}",
            restored.files,
            if restored.files == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

/// Renames the vault's copies of the session `moving` moved after its files, so a restore
/// puts back the moved transcript, never the old directory's copy beside it, then makes them
/// the placed files' (what names the directory inside them was rewritten: Codex's rollout keeps
/// its path, so only its bytes changed), so a restore right after relocate puts back a session
/// the next turn accepts (review 6, M3). A failure is said: the next turn copies the session
/// anew. The copies are made the placed files' only when those were `proved` to hold them
/// ([`caught_up`]): a file lacking turns the copy holds never replaces it (review 25, M3).
fn move_vault_copies(
    ctx: &Context,
    thread: &str,
    live: &SessionRow,
    moving: &Move<'_>,
    proved: bool,
) {
    let vault = crate::vault::Vault::new(&ctx.project.state.vault);
    let id = &moving.id;
    let moved = vault
        .relocated(&live.agent, id, &ctx.project.dir, |relative| {
            moving.destination(relative).ok()
        })
        .and_then(|()| {
            if !proved {
                anyhow::bail!("the moved files were not compared with it");
            }
            let adapter = ctx.agents.get(&live.agent)?;
            vault.refresh(adapter, &crate::settings::home()?, &ctx.project.dir, id)
        });
    if let Err(error) = moved {
        note!(
            "thread {}: the vault's copy of {} session {id} still names {}: {error:#}; the \
             next turn copies the session anew",
            super::view::escape(thread),
            live.agent,
            super::view::escape(&live.directory.display().to_string())
        );
    }
}

/// Why a conversation of a copy of the project is not relocated, and the way to a session of
/// the copy's own. Agents resume a session by its ID, wherever it runs (issue 23, finding 6):
/// the original's session carried into the copy (`export` there, `import` here) would be
/// resumed from both directories, each seeing the other's turns; so the way out is a new
/// session, with sticky's recap of the conversation so far (`--carry`, whose summary kind
/// never runs on the original's session from here), and the message says why not the other.
/// `there` runs sticky in the original (`sticky -C DIR`, with its `STICKY_DB`).
fn copied(thread: &str, from: &Path, there: &str) -> String {
    let shown = super::view::escape(thread);
    let flag = super::view::thread_flag(thread);
    let from = super::view::escape(&from.display().to_string()).into_owned();
    format!(
        "thread {shown}: its session belongs to {from}, which still exists, so this is a copy \
         of the project rather than a move; run `sticky{flag} new --carry \"...\"` here for a \
         session of its own that starts with a recap of the conversation so far (`{there}{flag} \
         \"...\"` goes on with the original's there). Carrying the original's session over (export \
         there, import here) would not make it the copy's: both directories would resume one \
         agent session, each seeing the other's turns"
    )
}
