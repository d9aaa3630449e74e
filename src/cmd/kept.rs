//! A session another project of this HOME keeps in sticky's vault and takes up on its next
//! turn: the agent swept its files, so nothing in the agent's home shows it, yet that project's
//! next turn puts the vault's copy back and resumes it. Put anywhere else as well (an import, or
//! a state adopted with `sticky trust` whose own vault holds a copy under that ID), two projects
//! would go on with one session, each seeing the other's turns (review 5, H1; review 6, M4).
//! Import refuses such a bundle; `trust` names such a thread, and the turn refuses it (a fork's
//! first turn, its source) before any copy is put back ([`refuse_kept_elsewhere`],
//! [`fork_source_refusal`], which `doctor` says too). A helper shared by those commands.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Context, standing};
use crate::agent;
use crate::agent::relocation::{self, Relocate};
use crate::exit::StickyError;
use crate::lock::SessionLock;
use crate::session;
use crate::state::State;
use crate::store::SessionRow;
use crate::vault::{Manifest, Peek, Vault};

/// A project of this HOME whose vault keeps a session: its directory, its `STICKY_DB` when it
/// keeps its state there, and the thread that takes the session up.
pub struct Keeper {
    pub dir: PathBuf,
    pub db: Option<PathBuf>,
    pub thread: String,
    /// Whether that thread's live session is a fork not made yet of the session (its first
    /// turn forks it), not the session itself: nothing of it to export there.
    pub fork: bool,
    /// Why a turn there refuses that project's state for now, when it does ([`held_there`]):
    /// the thread is then empty when its database cannot be read.
    pub hold: Option<crate::project::Hold>,
}

/// Who else keeps a session a project's turn would go on with.
pub enum Holder {
    /// This HOME's agent, for the directory named.
    Agent(PathBuf),
    /// Another project's vault, whose next turn takes it up.
    Vault(Keeper),
}

impl Holder {
    /// The other directory.
    pub fn dir(&self) -> &Path {
        match self {
            Self::Agent(dir) => dir,
            Self::Vault(keeper) => &keeper.dir,
        }
    }
}

/// Who else keeps `live`'s session, recorded for `project` (whose state is `state`): this
/// HOME's agent, for another directory (`standing::kept_elsewhere`), or another project's
/// vault ([`in_another_vault`]).
pub fn holder(live: &SessionRow, project: &Path, state: &State) -> Option<Holder> {
    standing::kept_elsewhere(live, project)
        .map(Holder::Agent)
        .or_else(|| in_another_vault(live, project, state).map(Holder::Vault))
}

/// The projects this user ran sticky in (the list `usage --all` reads), each with its
/// `STICKY_DB` database when it has one.
pub fn listed() -> Vec<(Option<PathBuf>, PathBuf)> {
    crate::project::registry::read()
        .unwrap_or_default()
        .into_iter()
        .map(|listed| (listed.db, listed.dir))
        .collect()
}

/// Where `STICKY_DB` keeps `project`'s database, as its database records it (`Store::kept_at`):
/// canonical, so no link is on the path [`recorded_database`] then takes; `None` for a
/// `.sticky/` database, or a path that is not UTF-8.
pub fn kept_path(project: &crate::project::Project) -> Option<String> {
    if !project.db_overridden {
        return None;
    }
    let db = std::fs::canonicalize(&project.state.db).ok()?;
    db.to_str().map(str::to_owned)
}

/// The database a bundle's manifest or a state records as where a project kept its state when
/// `STICKY_DB` chose it (`bundle::Manifest::database`, `Store::kept_at`), when it may be looked
/// at as a listed `STICKY_DB` database is (review 16, M2 and M5). What records it came from
/// elsewhere (a bundle, a copied or crafted database), so the path is taken only when it
/// cannot make sticky hang, follow a link or read what is no database of the user's: an
/// absolute path of plain components without a control character, no link anywhere on it,
/// in a directory only the user (or root) can change entries of (as `STICKY_DB`'s must be), to
/// a regular file of the user's own with one name, which opens read-only as a sticky database
/// (`Store::is_sticky`: nothing written, nor made one, as an empty file, a valid empty database
/// to `SQLite`, would be). Then, and only then, it is looked at as a listed one is (an older
/// schema of the user's own brought up to date, as its next turn would). What it may do then is make sticky refuse, never choose: each caller looks at it only for a
/// state that keeps a session, beside the places it looks at anyway.
pub fn recorded_database(path: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    use std::path::Component;
    let plain = path.is_absolute()
        && path
            .to_str()
            .is_some_and(|text| !text.chars().any(char::is_control))
        && path
            .components()
            .all(|part| matches!(part, Component::RootDir | Component::Normal(_)));
    if !plain {
        return None;
    }
    // No link on the way: each component looked at as it is (a FIFO or a device is no file).
    let mut walked = PathBuf::new();
    for part in path.components() {
        walked.push(part);
        if std::fs::symlink_metadata(&walked)
            .ok()?
            .file_type()
            .is_symlink()
        {
            return None;
        }
    }
    let dir = std::fs::symlink_metadata(path.parent()?).ok()?;
    let meta = std::fs::symlink_metadata(path).ok()?;
    let me = nix::unistd::geteuid().as_raw();
    let own = meta.is_file() && meta.uid() == me && meta.nlink() == 1;
    if !own || crate::project::shared_dir(&dir).is_some() {
        return None;
    }
    crate::store::Store::is_sticky(path).then(|| path.to_owned())
}

/// The directory the live session of the thread of database `db` that keeps session `id` of
/// `agent` was recorded for (where that project goes on with it now, moved or not), looked at
/// as another project's database is (`Store::open_elsewhere`).
pub fn directory_keeping(db: &Path, agent: &str, id: &str) -> Option<PathBuf> {
    let store = crate::store::Store::open_elsewhere(db).ok()??;
    let thread = store.thread_keeping(agent, id).ok()??;
    let live = store.live_session(thread.id).ok()??;
    Some(live.directory)
}

/// Whether this HOME's list of projects names `project` with its database (its `.sticky/`, or
/// the `STICKY_DB` listed for it), by path: a state that cannot be read cannot be told by inode.
fn listed_here(project: &crate::project::Project) -> bool {
    listed().into_iter().any(|(db, dir)| {
        dir == project.dir
            && match db {
                Some(db) => project.db_overridden && db == project.state.db,
                None => !project.db_overridden,
            }
    })
}

/// Whether directory `dir` is the user's own.
fn users_own_dir(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let me = nix::unistd::geteuid().as_raw();
    std::fs::symlink_metadata(dir).is_ok_and(|meta| meta.is_dir() && meta.uid() == me)
}

/// The state of project `dir` (beside `db` when `STICKY_DB` chose it).
pub fn state_of(db: Option<&Path>, dir: &Path) -> State {
    match db {
        Some(db) => State::beside(db.to_owned()),
        None => State::in_project(dir),
    }
}

/// The vault's copy of session `id` in project `source` (its directory and state) and the
/// thread there that takes it up next (and whether as a fork's source), when only that vault keeps the session
/// ([`kept_in_vault`]) and a thread there resumes it ([`taken_up_there`]).
pub fn taken_up(
    relocate: &dyn Relocate,
    home: &Path,
    (source, state): (&Path, &State),
    id: &str,
) -> Option<(Manifest, String, bool)> {
    let copy = kept_in_vault(relocate, home, (source, state), id)?;
    let (thread, fork) = taken_up_there(relocate.name(), (source, state), id)?;
    Some((copy, thread, fork))
}

/// The other listed project of this HOME that keeps `live`'s session (recorded for `project`,
/// whose state is `state`) in its vault and takes it up next, when this project's own vault
/// holds a copy of it a lost turn would put back, and that project's claim comes first: a copy
/// this HOME's turns made (never adopted) comes before one adopted with a state (`sticky
/// trust`), and of two adopted copies the earlier. `None` when no other project keeps it so, or
/// this project has no copy to put back (the session is lost, harming no one).
pub fn in_another_vault(live: &SessionRow, project: &Path, state: &State) -> Option<Keeper> {
    let (Some(id), Some(relocate)) = (
        live.agent_session_id.as_deref(),
        relocation::for_agent(&live.agent),
    ) else {
        return None;
    };
    let own = Vault::new(&state.vault)
        .manifest(relocate.name(), id)
        .ok()
        .flatten()?;
    let home = crate::settings::home().ok()?;
    listed().into_iter().find_map(|(db, dir)| {
        let there = state_of(db.as_deref(), &dir);
        if dir == project || there.db == state.db || !dir.is_absolute() {
            return None;
        }
        if let Some((copy, thread, fork)) = taken_up(relocate, &home, (&dir, &there), id) {
            return (copy.adopted_at < own.adopted_at).then_some(Keeper {
                dir,
                db,
                thread,
                fork,
                hold: None,
            });
        }
        // A state a turn there refuses for now may keep it all the same (review 13, M2). A copy
        // that cannot be read is taken for the strongest claim it could be, one this HOME's
        // turns made: first against a copy adopted here, not against one made here too.
        let held = held_there(relocate, (&home, false), (&dir, db.as_deref()), live)?;
        let adopted = held.copy.as_ref().and_then(|copy| copy.adopted_at);
        let first = adopted < own.adopted_at;
        let (thread, fork) = held.thread.unwrap_or_default();
        first.then_some(Keeper {
            dir,
            db,
            thread,
            fork,
            hold: Some(held.hold),
        })
    })
}

/// The copy of session `id` in the vault of `source` (its directory and state), when only that
/// vault keeps it: the agent has no file of it for `source`, and a state of this HOME's there
/// has a copy.
fn kept_in_vault(
    relocate: &dyn Relocate,
    home: &Path,
    (source, state): (&Path, &State),
    id: &str,
) -> Option<Manifest> {
    // An unreadable vault (damaged) proves nothing either way; no copy, nothing to look at.
    let copy = Vault::new(&state.vault)
        .manifest(relocate.name(), id)
        .ok()
        .flatten()?;
    // While the agent has the session's files for the source, the agent's home shows it
    // (`Move::refuse_shared`, `Move::place`): this is for a session only the vault keeps.
    if relocate
        .files(home, source, id)
        .is_ok_and(|files| !files.is_empty())
    {
        return None;
    }
    // Only a state this user made with this HOME's key (`stamp`) is one whose turns run
    // with this HOME's agent: the same path on this machine may be another HOME's project.
    // One stamped for the user with a key since lost whose copy was made in this HOME counts
    // whether or not the list of projects, lost with that key's directory, names it (review
    // 11, M3): the bundle's own project is looked at unlisted.
    let own = crate::project::stamped_here(state)
        || (copy.made_in(home) && crate::project::stamped_before_key(state));
    own.then_some(copy)
}

/// A project of this HOME whose state a turn there refuses for now, for a reason the user fixes
/// there, while that state may keep a session ([`held_there`]).
pub struct Held {
    /// Why a turn there refuses it, and so the fix.
    pub hold: crate::project::Hold,
    /// The thread there that takes the session up next (and whether as a fork's source); `None`
    /// when its database cannot be read.
    pub thread: Option<(String, bool)>,
    /// Its vault's copy of the session; `None` when the vault cannot be read.
    pub copy: Option<Manifest>,
}

/// Whether a turn in `source` (its `STICKY_DB` database `db`) refuses its state for now, for a
/// reason the user fixes there, while that state may go on with `live`'s session (of
/// `relocate`'s agent), which the agent in `home` keeps no file of for `source`: only sticky's
/// vault there keeps it, and from here that state may be the original's, or the project the
/// session moved to (reviews 12 and 13; what relocate calls `OldPath::Held`). Its vault must
/// hold a copy of the session made in this HOME, and a thread there take the session up next,
/// as far as either can be read (a vault that cannot be read counts only in a project this
/// HOME's list names, whose directory is the user's, or that the caller knows was this HOME's,
/// `ours`: a bundle exported in this HOME): another HOME's project, another user's read by
/// root, or root's read by another user, is none of this HOME's.
pub fn held_there(
    relocate: &dyn Relocate,
    (home, ours): (&Path, bool),
    (source, db): (&Path, Option<&Path>),
    live: &SessionRow,
) -> Option<Held> {
    let id = live.agent_session_id.as_deref()?;
    if relocate
        .files(home, source, id)
        .is_ok_and(|files| !files.is_empty())
    {
        return None;
    }
    let mut there = live.clone();
    source.clone_into(&mut there.directory);
    let (project, hold) = standing::hold_there(&there, db)?;
    let copy = match Vault::new(&project.state.vault).peek(relocate.name(), id) {
        Peek::Copy(copy) if copy.made_in(home) => Some(*copy),
        // What cannot be read may be this HOME's only where this HOME may have run sticky: a
        // project its list names, or whose directory is the user's, the list lost with the key
        // (review 15, M1), or one the caller knows was this HOME's, though root restored it
        // whole (review 16, M1); another account's own project (root's, to any other user) is
        // none of these (review 14, M1).
        Peek::Unreadable if ours || listed_here(&project) || users_own_dir(&project.dir) => None,
        Peek::Unreadable | Peek::Copy(_) | Peek::None => return None,
    };
    let readable =
        crate::store::Store::open_elsewhere(&project.state.db).is_ok_and(|s| s.is_some());
    let thread = taken_up_there(relocate.name(), (source, &project.state), id);
    if readable && thread.is_none() {
        return None;
    }
    Some(Held { hold, thread, copy })
}

/// The thread of `source` whose next turn takes session `id` of `agent` up (its live session,
/// or the source of its fork not made yet), if one does: an ended session, which no turn
/// resumes, does not count; nor does one a turn there refuses as kept for another directory, or
/// as recorded in another that holds the original of this copy, or may (review 12, M3). A
/// database that cannot be read proves nothing.
/// `true` with it when the thread's live session is a fork not made yet of the session.
fn taken_up_there(
    agent: &str,
    (source, state): (&Path, &State),
    id: &str,
) -> Option<(String, bool)> {
    let store = crate::store::Store::open_elsewhere(&state.db)
        .ok()
        .flatten()?;
    let thread = store.thread_keeping(agent, id).ok().flatten()?;
    let mut live = store.live_session(thread.id).ok()??;
    let fork = live.agent_session_id.as_deref() != Some(id);
    live.agent_session_id = Some(id.to_owned());
    if standing::kept_elsewhere(&live, source).is_some()
        || standing::a_copy_there(&live, source, &state.db)
    {
        return None;
    }
    Some((thread.name, fork))
}

/// [`shared`] when the other project's state is one a turn there refuses for now (`hold`):
/// once fixed there, its next turn takes the session up, so it is not resumed here either; the
/// ways out name that fix, and a state there that is a copy the user does not need.
fn held_shared(
    thread: &str,
    what: &str,
    keeper: &Keeper,
    hold: &crate::project::Hold,
    project: &Path,
) -> String {
    let escape = super::view::escape;
    let flag = super::view::thread_flag(thread);
    let there = there(keeper);
    let (why, fix) = standing::hold_words(Some(hold.clone()), &there);
    let state = keeper
        .db
        .clone()
        .unwrap_or_else(|| keeper.dir.join(crate::state::STATE_DIR));
    let state = crate::msg::shell_path(&state);
    let dir = escape(&keeper.dir.display().to_string()).into_owned();
    format!(
        "thread {}: {what} is one another project of this HOME, {dir}, keeps in sticky's vault \
         (the agent deleted its files), and sticky there refuses that project's state for now: \
         {why}; once that is fixed, its next turn there puts the session back and resumes it: \
         put back in {} as well, two projects would go on with one session, each seeing the \
         other's turns; sticky does not go on with it here. If {dir} is where the session goes \
         on, {fix} and go on there (`{there} \"...\"`), and here run `sticky{flag} new` for a \
         session of its own; if {dir} holds a copy you do not need, move its state away (mv \
         {state} {state}.copy), then run sticky here again",
        escape(thread),
        escape(&project.display().to_string()),
    )
}

/// The way to run sticky in `keeper`'s project (`sticky -C DIR`, with its `STICKY_DB`).
pub fn there(keeper: &Keeper) -> String {
    sticky_in(&keeper.dir, keeper.db.as_deref())
}

/// The way to run sticky in project `dir` whose state is `db` when `STICKY_DB` chose it:
/// `sticky -C DIR`, with that `STICKY_DB`.
pub fn sticky_in(dir: &Path, db: Option<&Path>) -> String {
    let shown = crate::msg::shell_path(dir);
    match db {
        Some(db) => format!("STICKY_DB={} sticky -C {shown}", crate::msg::shell_path(db)),
        None => format!("sticky -C {shown}"),
    }
}

/// Why thread `thread`'s session `live`, which `keeper` keeps in its vault and takes up next,
/// is not resumed (or, with `fork`, not forked) in `project`, and the way out: what `trust`
/// says and the turn refuses with.
pub fn shared(
    thread: &str,
    live: &SessionRow,
    keeper: &Keeper,
    project: &Path,
    fork: bool,
) -> String {
    let escape = super::view::escape;
    let flag = super::view::thread_flag(thread);
    let agent = &live.agent;
    let id = escape(live.agent_session_id.as_deref().unwrap_or_default()).into_owned();
    let what = if fork {
        format!("its fork is not made yet, and the {agent} session it forks, {id},")
    } else {
        format!("{agent} session {id}")
    };
    if let Some(hold) = &keeper.hold {
        return held_shared(thread, &what, keeper, hold, project);
    }
    format!(
        "thread {}: {what} is one another project of this HOME, {}, keeps in sticky's vault \
         ({agent} deleted its files), and the next turn of its thread {} there puts it back and \
         resumes it: put back in {} as well, two projects would go on with one session, each \
         seeing the other's turns (was this state copied from elsewhere, or crafted?); sticky \
         does not {} it here: run `sticky{flag} new` for a session of its own (`{} {} \"...\"` \
         goes on with it there)",
        escape(thread),
        escape(&keeper.dir.display().to_string()),
        escape(&keeper.thread),
        escape(&project.display().to_string()),
        if fork { "fork" } else { "resume" },
        there(keeper),
        super::view::thread_option(&keeper.thread),
    )
}

/// How long a command waits for another that takes the same session in another project.
const CLAIM_WAIT: Duration = Duration::from_secs(600);

/// Holds `agent`'s session `id` for this HOME (`lock::lock_session`), waiting for another
/// sticky that holds it: taken before the check that no other project keeps the session
/// (`Move::refuse_shared`, [`in_another_vault`], `standing`) and held until this project's
/// record of it is written, so that two imports, relocates or trusts of one session in two
/// projects at once take turns, and the second sees the first's and is refused as it would be
/// run after it (review 8, M3). A lock that cannot be taken is an error naming it.
pub fn claim(agent: &str, id: &str) -> anyhow::Result<SessionLock> {
    let escape = super::view::escape;
    let shown = format!("{} session {}", escape(agent), escape(id));
    let Some(locks) = crate::project::session_locks() else {
        return Err(StickyError::Store(format!(
            "cannot take sticky's lock on {shown}: there is no data directory to keep it in; \
             set HOME (or XDG_DATA_HOME)"
        ))
        .into());
    };
    let mut on_wait = || {
        hint!("waiting for another sticky (an import, relocate or trust) taking {shown}");
    };
    // NUL parts the agent from the ID: no other pair of them is the same key.
    let key = format!("{agent}\0{id}");
    match crate::lock::lock_session(&locks, &key, CLAIM_WAIT, &mut on_wait) {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => Err(StickyError::Busy(format!(
            "another sticky (an import, relocate or trust) has been taking {shown} for {} \
             minutes; run the command again once it is done",
            CLAIM_WAIT.as_secs() / 60
        ))
        .into()),
        Err((path, error)) => Err(StickyError::Store(format!(
            "cannot take sticky's lock on {shown} ({}: {error}), which keeps two projects of \
             this HOME from taking one session at once; let sticky make and write {} (its data \
             directory; XDG_DATA_HOME moves it), then run the command again",
            escape(&path.display().to_string()),
            escape(&locks.display().to_string()),
        ))
        .into()),
    }
}

/// [`claim`]s every session of `sessions` (agent, ID), each once, in one order whoever takes
/// them, so that two commands claiming some of the same never wait for each other in a circle.
pub fn claim_all(
    sessions: impl IntoIterator<Item = (String, String)>,
) -> anyhow::Result<Vec<SessionLock>> {
    let sorted: std::collections::BTreeSet<(String, String)> = sessions.into_iter().collect();
    sorted.iter().map(|(agent, id)| claim(agent, id)).collect()
}

/// [`claim_all`] for the sessions `project`'s state names: each thread's live session and the
/// source of its fork not made yet (`trust`, before it stamps the state). A database that
/// cannot be read names none: nothing of it is taken up either.
pub fn claim_state(project: &crate::project::Project) -> anyhow::Result<Vec<SessionLock>> {
    let read = || -> anyhow::Result<Vec<(String, String)>> {
        let Some(store) = crate::store::Store::open_elsewhere(&project.state.db)? else {
            return Ok(Vec::new());
        };
        let mut named = Vec::new();
        for thread in store.threads()? {
            let Some(live) = store.live_session(thread.id)? else {
                continue;
            };
            let source = live
                .forked_from
                .as_ref()
                .filter(|_| live.confirmed_at.is_none())
                .map(|from| from.agent_session_id.clone());
            for id in live.agent_session_id.iter().cloned().chain(source) {
                named.push((live.agent.clone(), id));
            }
        }
        Ok(named)
    };
    claim_all(read().unwrap_or_default())
}

/// What the first turn of `live`, a fork not made yet that its agent makes with a fork of its
/// own (passing the source's ID), refuses in that source before the agent runs (the turn's
/// `session::ensure_plain_arguments` and [`refuse_fork_kept_elsewhere`]): `doctor` says it
/// too. `None` for any other session, or a source the turn takes.
pub fn fork_source_refusal(ctx: &Context, live: &SessionRow) -> Option<StickyError> {
    let from = live
        .forked_from
        .as_ref()
        .filter(|_| live.confirmed_at.is_none())?;
    let adapter = ctx.agents.find(&live.agent)?;
    if !matches!(adapter.forking(), agent::Forking::Own { .. }) {
        return None;
    }
    if let Err(error) = session::ensure_plain_arguments(live, &ctx.agents, &ctx.project.state.db) {
        return Some(error);
    }
    let home = crate::settings::home().ok()?;
    refuse_fork_kept_elsewhere(ctx, live, &from.agent_session_id, &home).err()
}

/// Refuses to resume (or fork) thread `thread`'s session `live` when this HOME's agent keeps it
/// for another directory (a state from elsewhere naming another project's session): both
/// projects would go on with it, or the fork would read the other's turns; or when another
/// project of this HOME keeps it in its vault and takes it up next, while a lost turn here
/// would put this vault's copy back ([`in_another_vault`], as import refuses it). Looked
/// for only when the agent shows no transcript of the session for this directory, as it does
/// on every turn of a session that began here.
pub fn refuse_kept_elsewhere(
    ctx: &Context,
    thread: &str,
    live: &SessionRow,
    home: &Path,
) -> Result<(), StickyError> {
    refuse_shared(ctx, thread, live, home, false)
}

/// [`refuse_kept_elsewhere`] for a session `live` names, or, with `fork`, for the source of a
/// fork not made yet (`live` given with the source's ID).
fn refuse_shared(
    ctx: &Context,
    thread: &str,
    live: &SessionRow,
    home: &Path,
    fork: bool,
) -> Result<(), StickyError> {
    let project = &ctx.project.dir;
    match elsewhere_not_here(ctx, live, home) {
        Some(Holder::Agent(other)) if fork => Err(StickyError::Elsewhere(standing::fork_shared(
            thread, live, &other, project,
        ))),
        Some(Holder::Agent(other))
            if super::former::left_behind(ctx, live) == Some(other.clone()) =>
        {
            Err(StickyError::Elsewhere(super::former::refusal(
                thread, live, &other,
            )))
        }
        Some(Holder::Agent(other)) => Err(StickyError::Elsewhere(standing::shared(
            thread, live, &other, project,
        ))),
        Some(Holder::Vault(keeper)) => Err(StickyError::Elsewhere(shared(
            thread, live, &keeper, project, fork,
        ))),
        None => Ok(()),
    }
}

/// Who else keeps `live`'s session ([`holder`]): looked for only when the agent shows no
/// transcript of it for the project's directory.
fn elsewhere_not_here(ctx: &Context, live: &SessionRow, home: &Path) -> Option<Holder> {
    let (Some(id), Some(adapter)) = (
        live.agent_session_id.as_deref(),
        ctx.agents.find(&live.agent),
    ) else {
        return None;
    };
    // The transcript for this directory, not `saved` (Codex's finds a rollout in any).
    if adapter
        .transcript(home, &ctx.project.dir, id)
        .is_some_and(|path| path.is_file())
    {
        return None;
    }
    holder(live, &ctx.project.dir, &ctx.project.state)
}

/// Refuses the first turn of fork `fork` (not made yet) when its source, agent session `from`,
/// is one this HOME's agent keeps for another directory (a state from elsewhere, or crafted):
/// the agent's fork would read that project's turns; or one another project's vault keeps and
/// takes up next: put back here to be forked, it would be two projects'. `sticky fork` refuses
/// such a source; this is the same check on the ID the database records.
pub fn refuse_fork_kept_elsewhere(
    ctx: &Context,
    fork: &SessionRow,
    from: &str,
    home: &Path,
) -> Result<(), StickyError> {
    let source = SessionRow {
        agent_session_id: Some(from.to_owned()),
        ..fork.clone()
    };
    refuse_shared(ctx, &ctx.thread, &source, home, true)
}

#[cfg(test)]
mod tests {
    use super::recorded_database;
    use std::path::Path;

    /// A recorded database (a bundle's, a copied state's) is taken only when it is a regular
    /// sticky database of the user's own that no link leads to: nothing else is opened as one.
    #[test]
    fn only_a_sticky_database_of_the_users_own_reached_by_no_link_is_taken() {
        let dir = tempfile::tempdir().expect("a directory");
        let top = dir.path().canonicalize().expect("canonical");
        let db = top.join("p.db");
        crate::store::Store::open(&db).expect("a sticky database");
        assert_eq!(recorded_database(&db), Some(db.clone()));
        let fifo = top.join("fifo.db");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("a FIFO");
        let (empty, text) = (top.join("empty.db"), top.join("notes"));
        std::fs::write(&empty, b"").expect("an empty file");
        std::fs::write(&text, b"notes\n").expect("a text file");
        let link = top.join("link.db");
        std::os::unix::fs::symlink(&db, &link).expect("a link");
        let through = top.join("through");
        std::os::unix::fs::symlink(&top, &through).expect("a link to the directory");
        let twice = top.join("twice.db");
        std::fs::hard_link(&db, &twice).expect("a second name");
        let refused = [
            fifo,
            empty.clone(),
            text.clone(),
            link,
            through.join("p.db"),
            twice,
            top.join("missing.db"),
            top.join("sub/../p.db"),
            top.join("a\nb.db"),
            Path::new("p.db").to_owned(),
            Path::new("/dev/zero").to_owned(),
        ];
        for path in refused {
            assert_eq!(recorded_database(&path), None, "{}", path.display());
        }
        assert_eq!(
            std::fs::read(&empty).expect("the file"),
            b"",
            "never made a database"
        );
        assert_eq!(std::fs::read(&text).expect("the file"), b"notes\n");
    }
}
