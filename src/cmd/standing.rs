//! Where a live session recorded for another directory than the project's stands in this HOME
//! (a copy of the project, a move, or a session another copy took), and the advice that
//! follows from it: what `relocate`, `trust`, a turn and `doctor` all say there, so no advice
//! loops back to `relocate` (issue 23 review, finding 16). A helper shared by those commands.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::view::escape;
use crate::agent::relocation::{self, Relocate, Stored};
use crate::confined::{Access, Dir, Kind};
use crate::project::{Project, same_file};
use crate::state::State;
use crate::store::SessionRow;

/// The most bytes of an agent's session file read to find the directory it names: its first
/// lines name it (Claude's and Qwen's `cwd`, Codex's `session_meta`, Copilot's workspace).
const NAMING_BYTES: u64 = 1 << 20;

/// Where a live session recorded for another directory stands, for the advice that follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Its directory still exists, and a turn there uses a sticky state of the user's that goes
    /// on with the session ([`OldPath::Original`]): this project is a copy of it.
    Copy,
    /// Its directory still exists, and a turn there uses this very database
    /// ([`OldPath::SameDatabase`]: one `STICKY_DB` set for both): the session is that
    /// directory's, and neither a turn nor `sticky new` here may take it or end it (review 16,
    /// M3); [`shared_database`] names the ways out.
    SharedDatabase,
    /// Its directory still exists, and holds a sticky state of the user's that goes on with the
    /// session, which a turn there refuses for now for a reason the user fixes there
    /// ([`OldPath::Held`]): it may be the original of this copy, or a copy made back there.
    /// `relocate` takes nothing; [`held`] names both ways out.
    Held,
    /// Its directory is gone (or holds no original: made again without a sticky state, a link
    /// to this project, a state there that is not the user's; see [`OldPath`]), and the session is
    /// there to carry: the agent keeps it for that directory, sticky's vault here does (the
    /// agent swept it), or it never started (a fork not made yet, a pending `sticky new`: only
    /// its record moves). The project moved here, or `sticky relocate` may carry it.
    Moved,
    /// Its directory is gone, and the agent keeps no file of the session for it any more:
    /// another copy of the project relocated it (to the directory named, when one is found),
    /// or the agent deleted it. `relocate` cannot carry it here: the session is not this
    /// copy's to take.
    Taken(Option<PathBuf>),
}

/// Where `live` (recorded for another directory than `project`'s) stands in this HOME. A move
/// is told from a copy by what the old directory holds ([`old_path`]: a copy's original goes on
/// with the session there), the session's start, and sticky's vault here, beside the agent's
/// files.
pub fn standing(live: &SessionRow, project: &Project) -> Standing {
    let from = &live.directory;
    match old_path(live, project) {
        OldPath::Original => return Standing::Copy,
        OldPath::Held => return Standing::Held,
        OldPath::SameDatabase => return Standing::SharedDatabase,
        _ => {}
    }
    let (Some(id), Some(relocate)) = (
        live.agent_session_id.as_deref(),
        relocation::for_agent(&live.agent),
    ) else {
        return Standing::Moved;
    };
    let Ok(home) = crate::settings::home() else {
        return Standing::Moved;
    };
    let Ok(files) = relocate.files(&home, from, id) else {
        return Standing::Moved;
    };
    let agent_home = relocate.home(&home);
    if files.is_empty() {
        // Another copy may have taken it (a second copy of a moved project, whose vault copy
        // came with the state): the agent keeping it for another directory says so first.
        let now = elsewhere_in_home(relocate, &agent_home, id, from, project);
        return match now {
            Some(now) => Standing::Taken(Some(now)),
            // Never started: the agent never had a file of it.
            None if live.confirmed_at.is_none() => Standing::Moved,
            None if vault_keeps(live, id, project) => Standing::Moved,
            None => Standing::Taken(None),
        };
    }
    // An agent that finds a session by its ID alone (Codex, Copilot) still lists it: the
    // directory its files name tells whether another copy relocated it.
    let named = files.iter().find_map(|file| match &file.stored {
        Stored::File(_) => named_directory(relocate, &agent_home, &file.relative, from),
        Stored::Rows(json) => rows_directory(json),
    });
    match named {
        Some(dir) if dir != *from => Standing::Taken(Some(dir)),
        _ => Standing::Moved,
    }
}

/// What the directory a live session was recorded for (another than the project's) holds now,
/// as far as the session is concerned. Ordered by how much it says: of two states a turn there
/// may use (its `.sticky/`, and a database the list of projects names for it, `STICKY_DB`), the
/// larger stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OldPath {
    /// It no longer exists.
    Gone,
    /// It exists, and holds no sticky state (a fresh clone, a `mkdir`).
    Bare,
    /// It holds a sticky state that cannot be the user's: not a regular file, one of another
    /// ordinary account the user cannot read, or a link out of that directory (see
    /// [`crate::project::held`]). No turn there goes on with it, and no fix there makes it the
    /// user's.
    Refused,
    /// It holds a sticky state of its own, which goes on with other sessions than this one
    /// (sticky ran in a directory made again at that path).
    Other,
    /// Its sticky state is this project's own database under another name (one file by device
    /// and inode: a `.sticky` linking to this project's), which a turn there does not use.
    Shared,
    /// It is this project's directory under another name (by device and inode): a link left at
    /// the old path by the move, or another path to it.
    Here,
    /// It holds a sticky state that goes on with the session, which a turn there refuses for now
    /// for a reason the user fixes there ([`crate::project::Hold`]: others may write it, another
    /// account owns it (a backup restored by root, review 10, even one the user cannot read,
    /// review 11), or this HOME's key did not stamp it: a lost key, a restored backup, a copy
    /// made back there). From here it cannot be told from the original (review 9).
    Held,
    /// A turn there uses a state that goes on with the session: the original, of which this
    /// project is a copy (a state that cannot be read, or a session not named yet, counts so).
    Original,
    /// A turn there uses this project's very database: its `.sticky/` is this project's
    /// `STICKY_DB`, or the list of projects names it with this project's database (one
    /// `STICKY_DB` set for every project, review 16, M3). The two directories share one
    /// database, whose thread's live session is that directory's: ending it here (`sticky new`)
    /// would end it there too. The largest: whatever else that directory holds, a turn there
    /// goes on with this database.
    SameDatabase,
}

/// What the directory `live` was recorded for holds now, for `project`. A copy is told from a
/// move by the state a turn in that directory would use, with the checks such a turn makes
/// (`project::locate`): only one of the user's own that goes on with `live`'s session is the
/// original's (review 8, M1), or may be, when such a turn refuses it for now for a reason the
/// user fixes there (review 9). Its `.sticky/`, and each database the list of projects names for
/// it (`STICKY_DB`, review 8, M2), are looked at.
pub fn old_path(live: &SessionRow, project: &Project) -> OldPath {
    assess(live, here(project)).0
}

/// The directory and database of `project`, as [`assess`] takes them.
fn here(project: &Project) -> (&Path, &Path) {
    (&project.dir, &project.state.db)
}

/// Whether a turn in directory `dir` (its database `db`) refuses `live`'s session as one
/// recorded for another directory that holds a state going on with it, or that may
/// ([`OldPath::Original`], [`OldPath::Held`]): `dir` is then a copy of that project, whose
/// original has the session, and does not take it up (review 12, M3).
pub fn a_copy_there(live: &SessionRow, dir: &Path, db: &Path) -> bool {
    !same_file(&live.directory, dir)
        && matches!(
            assess(live, (dir, db)).0,
            OldPath::Original | OldPath::Held | OldPath::SameDatabase
        )
}

/// Whether `live`, the live session of a thread of `project`'s database recorded for another
/// directory, is that directory's own in a database the two share ([`OldPath::SameDatabase`]):
/// `sticky new` here would end that directory's session (review 16, M3).
///
/// So is one whose directory is gone but used this very database ([`shared_by_gone`]): it may
/// be the session of a project that moved elsewhere and has not relocated it yet (review 20, M4).
pub fn shares_database(live: &SessionRow, project: &Project) -> bool {
    live.directory != project.dir
        && (old_path(live, project) == OldPath::SameDatabase || shared_by_gone(live, project))
}

/// Whether `live`'s directory is gone and used `project`'s very database, a `STICKY_DB` (one
/// set for several directories): the list of projects names that directory with it, or the
/// database records a live session of a third directory. Such a session may be the
/// conversation of a project that moved elsewhere, whose own `sticky relocate` carries it
/// there: this project takes it only by `relocate`, as the one that moved, and neither `sticky
/// new` nor `forget` nor `import --replace` here ends it (review 20, M4). A project's own
/// `.sticky/` moves with it and is nobody else's.
pub fn shared_by_gone(live: &SessionRow, project: &Project) -> bool {
    if !project.db_overridden || live.directory == project.dir || live.directory.is_dir() {
        return false;
    }
    let listed = crate::project::registry::read().unwrap_or_default();
    listed.iter().any(|listed| {
        listed.dir == live.directory
            && (listed.db.as_deref()).is_some_and(|db| same_file(db, &project.state.db))
    }) || third_directory(live, project)
}

/// Whether `project`'s database records a live session of a directory that is neither
/// `live`'s nor the project's: the database is used by several directories.
fn third_directory(live: &SessionRow, project: &Project) -> bool {
    let Ok(store) = crate::store::Store::open_read_only(&project.state.db) else {
        return false;
    };
    let threads = store.threads().unwrap_or_default();
    threads.iter().any(|thread| {
        store
            .live_session(thread.id)
            .ok()
            .flatten()
            .is_some_and(|other| {
                other.directory != live.directory && other.directory != project.dir
            })
    })
}

/// The way to go on with `live`'s session in the directory it was recorded for, which holds the
/// original of this copy of the project: `sticky -C DIR`, with the original's `STICKY_DB` when
/// its state is a database the list of projects names (a plain `sticky` there would not find it).
pub fn in_original(live: &SessionRow, project: &Project) -> String {
    super::kept::sticky_in(&live.directory, assess(live, here(project)).1.as_deref())
}

/// [`old_path`] for the project in directory `here.0` whose database is `here.1`, with the
/// `STICKY_DB` database of the state that decided it, when one did.
fn assess(live: &SessionRow, here: (&Path, &Path)) -> (OldPath, Option<PathBuf>) {
    let from = &live.directory;
    // A file in its place is no directory of a project either.
    if !from.is_dir() {
        return (OldPath::Gone, None);
    }
    if same_file(from, here.0) {
        return (OldPath::Here, None);
    }
    let mut databases = Vec::new();
    if !matches!(from.join(crate::state::STATE_DIR).symlink_metadata(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound)
    {
        databases.push(None);
    }
    let listed = crate::project::registry::read().unwrap_or_default();
    databases.extend(
        listed
            .into_iter()
            .filter(|listed| listed.dir == *from)
            .filter_map(|listed| listed.db.map(Some)),
    );
    let mut found: Vec<(OldPath, Option<PathBuf>)> = databases
        .into_iter()
        .map(|db| (state_at(live, here.1, db.as_deref()), db))
        .collect();
    found.extend(recorded_original(live, here.1));
    found
        .into_iter()
        .max_by_key(|(found, _)| *found)
        .unwrap_or((OldPath::Bare, None))
}

/// The original's state as the database `own` records it (`Store::kept_at`: where `STICKY_DB`
/// chose the database this one was copied from, and where each `relocate` found it since),
/// when the list of projects that named it may be lost with the key (review 16, M5), and as
/// this environment's `STICKY_DB` would choose it in `live`'s directory (a relative one is taken
/// from there; review 20, M3): each looked at as a listed `STICKY_DB` database of that directory
/// is, when `kept::recorded_database` takes it, and counted only when a turn there goes on with
/// `live`'s session, or may ([`OldPath::Original`], [`OldPath::Held`]), or uses this very
/// database ([`OldPath::SameDatabase`]): what a copied or crafted database records may make
/// sticky refuse, never choose. The largest stands.
fn recorded_original(live: &SessionRow, own: &Path) -> Option<(OldPath, Option<PathBuf>)> {
    let mut kept = crate::store::Store::open_read_only(own)
        .ok()
        .and_then(|store| store.kept_at().ok())
        .unwrap_or_default();
    kept.extend(crate::settings::env::db().map(|db| live.directory.join(db)));
    kept.iter()
        .filter_map(|path| super::kept::recorded_database(path))
        .map(|db| (state_at(live, own, Some(&db)), Some(db)))
        // A database two projects share names itself: the other directory's turns use it
        // still, so a `sticky new` here would end that directory's session (review 17, M2).
        .filter(|(found, _)| {
            matches!(
                found,
                OldPath::Original | OldPath::Held | OldPath::SameDatabase
            )
        })
        .max_by_key(|(found, _)| *found)
}

/// What the state a turn in `live`'s directory uses (with `STICKY_DB` `db`, when given) is to
/// `live`'s session and to the project whose database is `own`.
fn state_at(live: &SessionRow, own: &Path, db: Option<&Path>) -> OldPath {
    let from = &live.directory;
    let path = db.map_or_else(|| State::in_project(from).db, Path::to_owned);
    // This project's own database under another name, which a turn there does not use (a
    // `.sticky` linking out of that directory, one file under two names) is no original's.
    let refused = if same_file(&path, own) {
        OldPath::Shared
    } else {
        OldPath::Refused
    };
    // Located and checked as a turn there would be: a FIFO, a link out, an unreadable state are
    // refused; a regular one refused for now (another account's, open to others, unstamped)
    // may be the original all the same. One this project
    // shares (`STICKY_DB` in both) is used there, and goes on with the session there too: an
    // original's.
    let Ok(there) = crate::project::locate(from, db) else {
        return match refused {
            OldPath::Shared => refused,
            _ => held_at(live, db),
        };
    };
    if !same_file(&there.dir, from) {
        // The turn would take another project (its `.sticky/` passed over).
        return refused;
    }
    if there.database == crate::project::Database::Missing {
        return OldPath::Bare;
    }
    // A turn there uses this very database: its `.sticky/` is this project's `STICKY_DB`, or
    // the list names that directory with it (`assess` looks only at the list's databases).
    if same_file(&there.state.db, own) {
        return OldPath::SameDatabase;
    }
    if goes_on(live, &there.state.db) {
        OldPath::Original
    } else {
        OldPath::Other
    }
}

/// What the state a turn in `live`'s directory refuses (with `STICKY_DB` `db`, when given) is
/// to `live`'s session: a regular, readable one that goes on with it, whoever owns it, or one
/// root owns that the user cannot read (reviews 9 to 11), is held there for now, and may be the
/// original ([`OldPath::Held`]); any other is no original's.
fn held_at(live: &SessionRow, db: Option<&Path>) -> OldPath {
    match crate::project::held(&live.directory, db) {
        Some((there, _)) if same_file(&there.dir, &live.directory) => {
            if goes_on(live, &there.state.db) {
                OldPath::Held
            } else {
                OldPath::Other
            }
        }
        _ => OldPath::Refused,
    }
}

/// The state a turn in `live`'s directory refuses for now (with `STICKY_DB` `db`, when given)
/// for a reason the user fixes there, and why, when that state goes on with `live`'s session
/// ([`OldPath::Held`]).
pub fn hold_there(live: &SessionRow, db: Option<&Path>) -> Option<(Project, crate::project::Hold)> {
    let (there, hold) = crate::project::held(&live.directory, db)?;
    (same_file(&there.dir, &live.directory) && goes_on(live, &there.state.db))
        .then_some((there, hold))
}

/// Whether the database `db` goes on with `live`'s session: it keeps it as a thread's, or
/// cannot tell (a session not named yet, a database that cannot be read).
fn goes_on(live: &SessionRow, db: &Path) -> bool {
    let Some(id) = live.agent_session_id.as_deref() else {
        return true;
    };
    // Another project's state is looked at read-only (an older schema brought up to date
    // first, as a turn there would).
    let kept = crate::store::Store::open_elsewhere(db)
        .and_then(|store| store.map_or(Ok(None), |store| store.thread_keeping(&live.agent, id)));
    !matches!(kept, Ok(None))
}

/// Where else than `from` this HOME keeps session `id` (of `relocate`'s agent, whose home is
/// `agent_home`), recorded for `from` in `project`'s state: the directory the agent keeps it
/// for now (under that directory's name, or found by its ID alone), or the directory of another
/// project of the list whose state goes on with it. Another copy of the project took it, or it
/// was written in this HOME all the same.
fn elsewhere_in_home(
    relocate: &dyn Relocate,
    agent_home: &Path,
    id: &str,
    from: &Path,
    project: &Project,
) -> Option<PathBuf> {
    encoded_elsewhere(relocate, agent_home, id, from)
        .or_else(|| kept_for_another(relocate, agent_home, id, from))
        .or_else(|| listed_elsewhere(relocate.name(), id, from, project))
}

/// The directory other than `from` for which this HOME keeps session `id` of `agent`, which a
/// vault copy of `project`'s names for `from` while the agent has no file of it there: another
/// copy of the project took it (relocated it), so it was written in this HOME, not elsewhere
/// (review 8, L3). `None` when this HOME keeps it nowhere, or for an agent sticky cannot
/// relocate.
pub fn kept_in_home(agent: &str, id: &str, from: &Path, project: &Project) -> Option<PathBuf> {
    let relocate = relocation::for_agent(agent)?;
    let agent_home = relocate.home(&crate::settings::home().ok()?);
    elsewhere_in_home(relocate, &agent_home, id, from, project)
}

/// The directory of another project of this HOME's list whose state records session `id` of
/// `agent` (recorded for `from` here) as its live session, for that project's own directory: a
/// copy of this project that relocated it (`relocate` lists the directory it runs in). What
/// sticky's states say, for an agent whose files do not tell where the session went (Gemini
/// keeps one under a hash of its directory). Each project is looked at with the database the
/// list names for it (`STICKY_DB`); this project's own state, under whichever name, is not
/// another's; only a state this HOME's key stamped counts, as import's check has it.
fn listed_elsewhere(agent: &str, id: &str, from: &Path, project: &Project) -> Option<PathBuf> {
    let listed = crate::project::registry::read().ok()?;
    listed.into_iter().find_map(|listed| {
        let state = State::beside(listed.database());
        if listed.dir == project.dir
            || listed.dir == from
            || state.db == project.state.db
            || same_file(&state.db, &project.state.db)
            || !crate::project::stamped_here(&state)
        {
            return None;
        }
        let store = crate::store::Store::open_elsewhere(&state.db).ok()??;
        let thread = store.thread_keeping(agent, id).ok()??;
        let there = store.live_session(thread.id).ok()??;
        (there.agent_session_id.as_deref() == Some(id) && there.directory == listed.dir)
            .then_some(listed.dir)
    })
}

/// Whether sticky's vault of `project` keeps a copy of `live`'s session `id` made for its
/// directory: the agent swept the session, and `relocate` carries it from that copy.
pub fn vault_keeps(live: &SessionRow, id: &str, project: &Project) -> bool {
    crate::vault::Vault::new(&project.state.vault)
        .manifest(&live.agent, id)
        .ok()
        .flatten()
        .is_some_and(|copy| {
            copy.directory == live.directory && (!copy.files.is_empty() || copy.rows.is_some())
        })
}

/// The other directory for which this HOME's agent keeps `live`'s session (one recorded for
/// `project`), if it does: an agent that resumes a session by its ID alone (Claude, Codex) would
/// resume it here too, so this project and that one would go on with one session, each seeing
/// the other's turns. Import refuses such a session (`Move::refuse_shared`, the same
/// `Relocate::elsewhere`); so do `trust` and the turn, for a state from elsewhere whose
/// session ID names another project's session (an ID is no secret). A file whose directory
/// cannot be read counts as another directory's (its path is returned). `None` when the agent
/// keeps the session only for `project`, or cannot tell.
pub fn kept_elsewhere(live: &SessionRow, project: &Path) -> Option<PathBuf> {
    let (Some(id), Some(relocate)) = (
        live.agent_session_id.as_deref(),
        relocation::for_agent(&live.agent),
    ) else {
        return None;
    };
    let agent_home = relocate.home(&crate::settings::home().ok()?);
    kept_for_another(relocate, &agent_home, id, project)
}

/// [`kept_elsewhere`] for session `id` of `relocate`'s agent, whose home is `agent_home`.
fn kept_for_another(
    relocate: &dyn Relocate,
    agent_home: &Path,
    id: &str,
    project: &Path,
) -> Option<PathBuf> {
    let found = relocate.elsewhere(agent_home, id, (&[], project)).ok()?;
    found.into_iter().find_map(|relative| {
        match named_directory(relocate, agent_home, &relative, project) {
            Some(dir) if dir == project => None,
            Some(dir) => Some(dir),
            None => Some(agent_home.join(relative)),
        }
    })
}

/// Why a session this HOME's agent keeps for directory `other` is not resumed in `project`
/// (thread `thread`, its live session `live`), and the way out: what `trust` says and the turn
/// refuses with.
pub fn shared(thread: &str, live: &SessionRow, other: &Path, project: &Path) -> String {
    let flag = super::view::thread_flag(thread);
    let other = escape(&other.display().to_string()).into_owned();
    let agent = &live.agent;
    format!(
        "thread {}: {agent} session {} is one {agent} in this HOME keeps for another directory \
         ({other}), and {agent} resumes a session by its ID alone: resumed in {}, two projects \
         would go on with one session, each seeing the other's turns (was this state copied \
         from elsewhere, or crafted?); sticky does not resume it here: run `sticky{flag} new` \
         for a session of its own",
        escape(thread),
        escape(live.agent_session_id.as_deref().unwrap_or_default()),
        escape(&project.display().to_string()),
    )
}

/// Why the fork not made yet of thread `thread`, whose source (`source`'s ID) this HOME's agent
/// keeps for directory `other`, is not made in `project`, and the way out: what `trust` says and
/// the fork's first turn refuses with.
pub fn fork_shared(thread: &str, source: &SessionRow, other: &Path, project: &Path) -> String {
    let flag = super::view::thread_flag(thread);
    let other = escape(&other.display().to_string()).into_owned();
    let agent = &source.agent;
    format!(
        "thread {}: its fork is not made yet, and the {agent} session it forks, {}, is one \
         {agent} in this HOME keeps for another directory ({other}): forked in {}, this \
         project would read that one's turns (was this state copied from elsewhere, or \
         crafted?); sticky does not fork it here: run `sticky{flag} new` for a session of its \
         own",
        escape(thread),
        escape(source.agent_session_id.as_deref().unwrap_or_default()),
        escape(&project.display().to_string()),
    )
}

/// For an agent that keeps sessions under an encoded directory name (Claude, Qwen): the
/// directory whose name now holds session `id` (recorded for `from`), read from its transcript.
fn encoded_elsewhere(
    relocate: &dyn Relocate,
    agent_home: &Path,
    id: &str,
    from: &Path,
) -> Option<PathBuf> {
    let (_, chats) = relocate.encoded_projects()?;
    let projects = Dir::open_top(&agent_home.join("projects")).ok()?;
    let transcript = format!("{id}.jsonl");
    projects
        .entries()
        .ok()?
        .into_iter()
        .filter(|(_, kind)| *kind == Kind::Dir)
        .find_map(|(name, _)| {
            let mut relative = PathBuf::from("projects").join(name);
            if let Some(chats) = chats {
                relative.push(chats);
            }
            relative.push(&transcript);
            named_directory(relocate, agent_home, &relative, from)
        })
}

/// The directory the agent's file `relative` (under `agent_home`, read without following a
/// link) names as the session's, by the first field [`Relocate::rewrites`] would rewrite for a
/// session of `from` that holds the directory itself (not a hash of it, as Gemini's
/// `projectHash`).
fn named_directory(
    relocate: &dyn Relocate,
    agent_home: &Path,
    relative: &Path,
    from: &Path,
) -> Option<PathBuf> {
    let top = Dir::open_top(agent_home).ok()?;
    let mut head = Vec::new();
    top.open_file(relative, Access::Read)
        .ok()?
        .take(NAMING_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    let fields = relocate.rewrites(relative, from, from);
    let value = |field: &relocation::Rewrite, bytes: &[u8]| -> Option<PathBuf> {
        let text = std::str::from_utf8(bytes).ok()?;
        // JSON escapes (`\/`, `\"`) as the agent wrote them, read back.
        let text = if field.end == b'"' {
            serde_json::from_str::<String>(&format!("\"{text}\"")).ok()?
        } else {
            text.to_owned()
        };
        Some(PathBuf::from(text))
    };
    let directories = fields
        .iter()
        .filter(|field| value(field, &field.old).as_deref() == Some(from));
    directories.into_iter().find_map(|field| {
        let at = find(&head, &field.before)? + field.before.len();
        let len = head[at..].iter().position(|&b| b == field.end)?;
        value(field, &head[at..at + len])
    })
}

/// The directory the session row of a rows document names (opencode's `session.directory`,
/// as `relocation::rows::export` writes them: `{"session": ID, "tables": {"session": [...]}}`).
fn rows_directory(json: &[u8]) -> Option<PathBuf> {
    let rows: serde_json::Value = serde_json::from_slice(json).ok()?;
    rows["tables"]["session"]
        .as_array()?
        .iter()
        .find_map(|row| row["directory"].as_str())
        .map(PathBuf::from)
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len().max(1))
        .position(|window| window == needle)
}

/// The advice for thread `thread`, whose live session `live` belongs to another directory than
/// `project`'s, when it is not the plain copy's (`None` then: the caller's own words stand; a
/// copy of a project whose state is a database `STICKY_DB` names gets the way to run sticky
/// there with it): a
/// session another copy took (it names where it lives now, and `sticky new --carry`), or a
/// project that moved here (`sticky relocate`, without the gone directory as a place to go on).
pub fn advice(thread: &str, live: &SessionRow, project: &Project) -> Option<String> {
    let shown = escape(thread);
    let from = escape(&live.directory.display().to_string()).into_owned();
    let id = live.agent_session_id.as_deref().unwrap_or("not named yet");
    match standing(live, project) {
        // The caller's words name the original's directory; sticky there needs its database
        // when that is one `STICKY_DB` names.
        Standing::Copy => {
            let there =
                super::kept::sticky_in(&live.directory, Some(&assess(live, here(project)).1?));
            Some(format!(
                "thread {shown}: the {} session #{} (session {}) belongs to directory {from}, not \
                 to this project {}; if the project moved here, run `sticky relocate` to go on \
                 with it here; else run `sticky new` to start a session here (the old one stays \
                 on record), run `{there}` to go on with it there, or set STICKY_DB to keep \
                 this project's state apart",
                live.agent,
                live.id,
                escape(id),
                escape(&project.dir.display().to_string()),
            ))
        }
        Standing::Held => Some(held(thread, live, project)),
        Standing::SharedDatabase => Some(shared_database(thread, live, project)),
        Standing::Moved if shared_by_gone(live, project) => {
            Some(moved_sharer(thread, live, project, None))
        }
        Standing::Moved => Some(format!(
            "thread {shown}: the {} session #{} (session {}) belongs to directory {from}, {}; if \
             the project moved here, run `sticky relocate` to go on with it here; else run \
             `sticky new` to start a session here (the old one stays on record), or set \
             STICKY_DB to keep this project's state apart",
            live.agent,
            live.id,
            escape(id),
            gone(live, project),
        )),
        Standing::Taken(now) => Some(taken(thread, live, now.as_deref(), project)),
    }
}

/// Why `relocate` does not carry thread `thread`'s session `live` into `project`: the directory
/// it was recorded for holds a state of the user's own that goes on with it, which a turn there
/// refuses for now ([`OldPath::Held`]), so it may be the original; and the two ways out, each
/// losing nothing: fix it there and go on there, or, when it is a copy the user does not need,
/// move its state away and relocate. What `relocate`, `trust`, a turn and `doctor` say (review 9).
pub fn held(thread: &str, live: &SessionRow, project: &Project) -> String {
    let shown = escape(thread);
    let flag = super::view::thread_flag(thread);
    let from = &live.directory;
    let db = assess(live, here(project)).1;
    let hold = crate::project::held(from, db.as_deref()).map(|(_, hold)| hold);
    let there = super::kept::sticky_in(from, db.as_deref());
    let state = db.unwrap_or_else(|| from.join(crate::state::STATE_DIR));
    let state = crate::msg::shell_path(&state);
    let (why, fix) = hold_words(hold, &there);
    let from = escape(&from.display().to_string()).into_owned();
    format!(
        "thread {shown}: its {} session {} was recorded in {from}, which still exists and \
         holds a sticky state of yours ({state}) that goes on with this session, so this may be \
         a copy of the project rather than a move, and {from} its original; sticky there \
         refuses that state for now: {why}. Either way nothing is lost: if {from} is the \
         original, {fix} and go on there (`{there}{flag} \"...\"`), and here run \
         `sticky{flag} new --carry \"...\"` for a session of this copy's own; if {from} is a \
         copy you do not need, move its state away (mv {state} {state}.copy) or remove it, then \
         run `sticky relocate` here again",
        live.agent,
        escape(live.agent_session_id.as_deref().unwrap_or("not named yet")),
    )
}

/// Why neither a turn nor `sticky new` (nor `relocate`) in `project` takes or ends thread
/// `thread`'s live session `live`, recorded for another directory that uses this very database
/// ([`Standing::SharedDatabase`]: one `STICKY_DB` set for both, as by a shell profile's line),
/// and the ways out, each losing nothing: a database of this project's own (`STICKY_DB` unset
/// for its `.sticky/`, or set to a file apart), or a thread of its own (`-t NAME`); the other
/// directory goes on with its session there (review 16, M3). What the turn, `new`,
/// `relocate`, `trust` and `doctor` all say. One whose directory is gone ([`shared_by_gone`]) gets [`moved_sharer`]'s words.
pub fn shared_database(thread: &str, live: &SessionRow, project: &Project) -> String {
    if !live.directory.is_dir() {
        return moved_sharer(thread, live, project, None);
    }
    let shown = escape(thread);
    let flag = super::view::thread_flag(thread);
    let from = escape(&live.directory.display().to_string()).into_owned();
    let db = escape(&crate::msg::shell_path(&project.state.db)).into_owned();
    let there = super::kept::sticky_in(&live.directory, assess(live, here(project)).1.as_deref());
    if project.dir.starts_with(&live.directory) {
        // Outside git, with STICKY_DB set and no `.sticky/` to find above, the project is the
        // directory sticky runs in: a subdirectory of the project that uses this database is
        // no project of its own (review 23, L5).
        return format!(
            "thread {shown} is the conversation of {from}, a directory above this one that uses \
             this very database ({db}): with STICKY_DB set and no .sticky/ above, the project \
             is the directory sticky runs in, so this one is taken for a project of its own; go \
             on with it from there (`{there}{flag} \"...\"`), or give this directory a thread \
             of its own (`sticky -t NAME \"...\"`)"
        );
    }
    let apart = apart(project);
    format!(
        "thread {shown}: the {} session #{} (session {}) belongs to directory {from}, which \
         still exists and uses this very database ({db}) too: the two directories share one \
         database (one STICKY_DB set for both, as by a line in a shell profile), and thread \
         {shown} is {from}'s conversation, so sticky neither resumes it here nor ends it \
         (`sticky new` here would end {from}'s session for good). Nothing is lost: give this \
         project a database of its own ({apart}), or a thread of its own in this one (`sticky \
         -t NAME \"...\"`); `{there}{flag} \"...\"` goes on with the session there",
        live.agent,
        live.id,
        escape(live.agent_session_id.as_deref().unwrap_or("not named yet")),
    )
}

/// The ways to give `project` a database of its own: `STICKY_DB` unset for its `.sticky/`, or
/// set to a file apart.
fn apart(project: &Project) -> String {
    if project.db_overridden {
        let own = project.dir.join(crate::state::STATE_DIR);
        format!(
            "unset STICKY_DB for this directory to keep its state in {} (`env -u STICKY_DB \
             sticky \"...\"`), or set it to a file of its own (`STICKY_DB=FILE sticky \
             \"...\"`)",
            escape(&crate::msg::shell_path(&own)),
        )
    } else {
        "set STICKY_DB to a file of its own for this directory (`STICKY_DB=FILE sticky \"...\"`)"
            .to_owned()
    }
}

/// Why neither a turn nor `sticky new` (nor `verb`, `forget` or `import --replace`, when
/// given) in `project` takes or ends thread `thread`'s live session `live`, recorded for a
/// directory now gone that used this very database ([`shared_by_gone`]): it may be the
/// conversation of a project that moved elsewhere. The ways out: `sticky relocate`, when this
/// project is the one that moved from there; else a thread or a database of its own, which
/// leave the session to the project that moved, whose own `relocate` carries it (review 20, M4).
pub fn moved_sharer(
    thread: &str,
    live: &SessionRow,
    project: &Project,
    verb: Option<&str>,
) -> String {
    let shown = escape(thread);
    let from = escape(&live.directory.display().to_string()).into_owned();
    let db = escape(&crate::msg::shell_path(&project.state.db)).into_owned();
    let ending = verb.map_or_else(
        || {
            "sticky neither resumes it here nor ends it (`sticky new` here would end it for good)"
                .to_owned()
        },
        |verb| format!("`{verb}` here would delete it; nothing was changed"),
    );
    format!(
        "thread {shown}: the {} session #{} (session {}) belongs to directory {from}, which is \
         gone, and which used this very database ({db}) too (one STICKY_DB set for several \
         directories): thread {shown} may be the conversation of a project that moved from \
         there, so {ending}. If this project moved here from {from}, run `sticky relocate` to \
         go on with it here; else nothing is lost: give this project a database of its own \
         ({}), or a thread of its own in this one (`sticky -t NAME \"...\"`); the project that \
         moved from {from} goes on with it after `sticky relocate` in its new place",
        live.agent,
        live.id,
        escape(live.agent_session_id.as_deref().unwrap_or("not named yet")),
        apart(project),
    )
}

/// Refuses `verb` (`forget`, `import --replace`) here on thread `thread` whose live session
/// `live` belongs to another directory that uses this very database (one `STICKY_DB` set for
/// both): done here, it would delete that directory's conversation, which nothing here says
/// is its. Names the way to do it there, where it is that directory's own.
pub fn refuse_shared_thread(
    thread: &str,
    live: &SessionRow,
    project: &Project,
    verb: &str,
) -> Result<(), crate::exit::StickyError> {
    if !shares_database(live, project) {
        return Ok(());
    }
    if !live.directory.is_dir() {
        let said = moved_sharer(thread, live, project, Some(verb));
        return Err(crate::exit::StickyError::Elsewhere(said));
    }
    let flag = super::view::thread_flag(thread);
    let from = escape(&live.directory.display().to_string()).into_owned();
    let db = escape(&crate::msg::shell_path(&project.state.db)).into_owned();
    let there = super::kept::sticky_in(&live.directory, assess(live, here(project)).1.as_deref());
    Err(crate::exit::StickyError::Elsewhere(format!(
        "thread {} is the conversation of directory {from}, which still exists and uses this \
         very database ({db}) too (one STICKY_DB set for both): `{verb}` here would delete \
         {from}'s conversation; nothing was changed. If that is what you mean, run it there \
         (`{there}{flag} {verb}`)",
        escape(thread)
    )))
}

/// What a turn in the directory of [`held`] objects to (`hold`), and the fix to make there,
/// where `there` runs sticky.
pub fn hold_words(hold: Option<crate::project::Hold>, there: &str) -> (String, String) {
    use crate::project::Hold;
    let list = |paths: &[PathBuf]| {
        let shown: Vec<String> = paths
            .iter()
            .map(|path| crate::msg::shell_path(path))
            .collect();
        shown.join(" ")
    };
    match hold {
        Some(Hold::Writable { dir, paths }) => {
            let (mut why, mut fix) = (Vec::new(), Vec::new());
            if let Some(dir) = dir.map(|dir| list(&[dir])) {
                why.push(format!("every user may write {dir}"));
                fix.push(format!("chmod o-w {dir}"));
            }
            if !paths.is_empty() {
                why.push(format!("other users may write {}", list(&paths)));
                fix.push(format!("chmod go-w {}", list(&paths)));
            }
            (
                why.join(", and "),
                format!("make it yours alone there ({})", fix.join(" && ")),
            )
        }
        Some(Hold::Owned { me, paths, adopt }) => {
            let shown = list(&paths);
            let trust = if adopt {
                format!(", then adopt it (`{there} trust`)")
            } else {
                String::new()
            };
            (
                format!(
                    "another account owns {shown} (a backup restored with sudo, or by another \
                     user), and sticky uses no state that is not yours"
                ),
                format!("take it over there (chown -R {me} {shown}){trust}"),
            )
        }
        Some(Hold::Unstamped) => (
            "your sticky key did not stamp it (a copy or a restored backup, or your key was \
             lost or replaced since)"
                .to_owned(),
            format!("adopt it there (`{there} trust`)"),
        ),
        Some(Hold::Other(said)) => (escape(&said).into_owned(), "do what that says".to_owned()),
        None => (
            "see what a turn there says".to_owned(),
            "do what it says".to_owned(),
        ),
    }
}

/// What became of the directory `live` was recorded for, when it holds no copy of `project`
/// going on with the session ([`old_path`]): gone, made again, none of the user's, or this project
/// under another name; said after the directory, as "recorded in DIR, {gone}".
pub fn gone(live: &SessionRow, project: &Project) -> &'static str {
    match old_path(live, project) {
        OldPath::Gone => "which is gone",
        OldPath::Bare => "which holds no sticky state (a directory made again at that path)",
        OldPath::Refused => {
            "where sticky uses no state of yours (its sticky state is no regular file, one of \
             another user you cannot read, or a link out of that directory), so nothing there \
             goes on with it"
        }
        OldPath::Other => {
            "which holds a sticky state of its own that does not go on with this session (a \
             directory made again at that path)"
        }
        OldPath::Shared => {
            "whose sticky state leads to this project's own database, which sticky does not use \
             there (a link out of that directory, or one file under two names)"
        }
        OldPath::Here => {
            "which now leads to this very directory (a link left by the move, or another path to \
             it)"
        }
        // Not said of a copy's original, whose own words stand.
        OldPath::Original | OldPath::Held | OldPath::SameDatabase => "which still exists",
    }
}

/// Why a copy cannot go on with a session another copy of the project took, and the way to a
/// session of its own.
pub fn taken(thread: &str, live: &SessionRow, now: Option<&Path>, project: &Project) -> String {
    let shown = escape(thread);
    let flag = super::view::thread_flag(thread);
    let from = escape(&live.directory.display().to_string()).into_owned();
    let id = escape(live.agent_session_id.as_deref().unwrap_or_default()).into_owned();
    let agent = &live.agent;
    let gone = gone(live, project);
    let way_out = format!(
        "run `sticky{flag} new --carry \"...\"` here for a session of its own that starts with a \
         recap of the conversation so far"
    );
    match now {
        // Only a relocation whose record failed leaves it so; `relocate` records it.
        Some(now) if now == project.dir => format!(
            "thread {shown}: {agent} session {id} was recorded in {from}, {gone}, and \
             {agent} keeps it for this directory already; run `sticky relocate` to record it here"
        ),
        Some(now) => {
            let now = escape(&now.display().to_string()).into_owned();
            format!(
                "thread {shown}: {agent} session {id} was recorded in {from}, {gone}, and \
                 another copy of this project took it since: it now belongs to {now} (sticky \
                 there goes on with it). This project is another copy, and one agent session \
                 goes on in one project only: {way_out}"
            )
        }
        None => format!(
            "thread {shown}: {agent} session {id} was recorded in {from}, {gone}, and \
             {agent} keeps no file of it for that directory any more, nor does sticky's vault \
             here (another copy of this project relocated it, or {agent} deleted it), so `sticky \
             relocate` cannot carry it here: {way_out}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Review 6, L1: the message's lines are joined with `\`, so no run of spaces is left where
    /// the source wrapped it.
    #[test]
    fn fork_shared_reads_as_one_line_of_single_spaces() {
        let source: SessionRow = serde_json::from_value(serde_json::json!({
            "id": 1, "agent": "claude", "model": null, "agent_session_id": "S",
            "directory": "/p", "created_at": 0, "confirmed_at": null, "rotated_from": null,
            "rotation_reason": null, "ended_at": null,
        }))
        .expect("a session row");
        let said = fork_shared("idea", &source, Path::new("/other"), Path::new("/p"));
        assert!(!said.contains("  "), "{said}");
        assert!(said.ends_with("for a session of its own"), "{said}");
    }
}
