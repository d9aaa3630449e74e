//! Where a project's state lives: which directory is the project, and which file is its database.
//!
//! The rule (DESIGN.md, "Where state lives"): from the current directory, walk up to the nearest
//! directory holding a `.sticky/` directory, but not past the root of the git worktree (the
//! directory holding `.git`, which is a file in linked worktrees and submodules); without one,
//! the worktree root is the project; outside git, the current directory is. The boundary keeps a
//! repository nested in another, or checked out under a home directory with a `.sticky/`, from
//! sharing a stranger's conversations. `STICKY_DB` moves the database, never the project
//! directory, because agents key their sessions by the directory they run in.
//!
//! The walk never steps into the user's home directory, the root directory or a directory of
//! `STICKY_CEILING_DIRECTORIES` (as git's `GIT_CEILING_DIRECTORIES`) from below: HOME's own
//! `.sticky/` serves a turn run in HOME itself, and a turn once run there must not take over
//! every directory below it that is not in git (`~/Downloads/x` ran the agent in `~`, on the
//! home conversation, without a word). Nor does it look at HOME's `.git` from below, which would
//! make HOME the project of every directory under a dotfiles repository. A turn that starts a
//! new project where such a `.sticky/` was passed over says so once (see
//! [`Project::passed_over_note`]). The walk never steps into a directory owned by another user
//! either (a `.sticky/` planted in a shared `/tmp/x` must not capture other users' runs in
//! `/tmp/x/anything`), and it passes over another user's `.sticky/` above a directory outside
//! git as it passes over HOME's, with the same note (`sticky` would refuse it, and with it
//! every directory below). What it finds is then checked by `trust`, and its database by `stamp`
//! (made by this user, or adopted with `sticky trust`).

pub mod registry;
mod stamp;
mod trust;

pub use trust::Hold;
pub(crate) use trust::{Shared, shared_dir, shared_dir_or_group, shared_file};

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::exit::StickyError;
use crate::settings;
use crate::state::{self, STATE_DIR, State};
use crate::store;

/// The directory of this HOME's session locks (`lock::lock_session`): `<data dir>/sticky/locks`,
/// beside sticky's key and the list of projects.
pub fn session_locks() -> Option<PathBuf> {
    stamp::data_dir().map(|dir| dir.join("sticky").join("locks"))
}

/// Whether the database of `state` was made (or adopted) by this user with this HOME's key,
/// here or in the project it was copied from: a state whose turns run with this HOME's agents.
/// One of the user's own whose stamp a lost key no longer matches ([`stamped_by_lost_key`])
/// still counts: its claim on its sessions outlives the key (review 10). Reads the stamp and
/// the key; creates nothing.
pub fn stamped_here(state: &State) -> bool {
    match stamp::verdict(state) {
        Ok(stamp::Verdict::Mine | stamp::Verdict::Copied) => true,
        Ok(stamp::Verdict::Foreign | stamp::Verdict::NoKey) => stamped_by_lost_key(state),
        _ => false,
    }
}

/// Whether the database of `state` is a regular file of the user's own that sticky stamped for
/// them with a key since lost or replaced ([`stamped_before_key`]), and this HOME's list of
/// projects (kept beside the key) names it: such a state is unstamped only because the key
/// changed, not a copy, nor another HOME's. Creates nothing.
pub fn stamped_by_lost_key(state: &State) -> bool {
    let listed = || {
        registry::read()
            .unwrap_or_default()
            .iter()
            .any(|listed| same_file(&listed.database(), &state.db))
    };
    stamped_before_key(state) && listed()
}

/// Whether the database of `state` is a regular file of the user's own whose stamp names this
/// very file and was written before this HOME's key was made, or with no key now
/// (`stamp::stamped_before_key`): the user's own state whose key was lost, or another HOME's
/// project (same user, same machine), which this HOME's list of projects ([`stamped_by_lost_key`])
/// or the HOME its vault's copies were made in (`vault::Manifest::made_in`) tells apart. The list
/// sits beside the key and is lost with it (`rm -rf ~/.local/share/sticky`, a HOME restored
/// without it); the vault's copies are not (review 11, M3). Creates nothing.
pub fn stamped_before_key(state: &State) -> bool {
    let me = nix::unistd::geteuid().as_raw();
    let Ok(meta) = std::fs::symlink_metadata(&state.db) else {
        return false;
    };
    meta.is_file() && meta.uid() == me && stamp::stamped_before_key(state)
}

/// Whether `a` and `b` name one file (or directory), by device and inode, links followed.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// The variable listing directories the upward search never enters (colon-separated).
pub const CEILING_VAR: &str = crate::settings::env::CEILINGS;

/// A located project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The project directory (canonical): where the agent runs for new sessions.
    pub dir: PathBuf,
    /// Where its state lives: `<dir>/.sticky/sticky.db` and its neighbours, or beside the
    /// `STICKY_DB` path.
    pub state: State,
    /// How `dir` was chosen.
    pub found: Found,
    /// Whether `STICKY_DB` chose `db`.
    pub db_overridden: bool,
    /// Whether `dir` holds the `.sticky/` found above the current directory and is not a git
    /// root: a user may not expect it, so a turn names it (see
    /// [`Project::first_use_from_below`]).
    pub found_above: bool,
    /// What the database was when the project was located (see `stamp`).
    pub database: Database,
    /// The `.sticky/` above the current directory that the search did not take, if any.
    pub passed_over: Option<PassedOver>,
}

/// A directory above the current one whose `.sticky/` the upward search did not take: it serves
/// turns run in that directory itself, never those below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedOver {
    /// The directory holding that `.sticky/`.
    pub dir: PathBuf,
    /// Why the search stopped below it.
    pub why: Limit,
}

/// Why the upward search stops below a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// It is the user's home directory.
    Home,
    /// `STICKY_CEILING_DIRECTORIES` lists it.
    Ceiling,
    /// It is the root directory, above every directory outside HOME.
    Root,
    /// Another user owns it.
    Stranger,
    /// Its `.sticky/` is another user's (this uid): sticky would refuse it, and it must not
    /// stop every directory below it that is not in git (another user's `/tmp/.sticky`).
    Foreign(u32),
}

/// What [`locate`] found of the project's database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Database {
    /// None yet: [`Project::stamp_created`] stamps the one the store creates.
    Missing,
    /// The user's, by its stamp.
    Stamped,
    /// Made by a sticky older than stamps, and git does not track it:
    /// [`Project::adopt_unstamped`] decides.
    Unstamped,
}

/// The marker in `.sticky/` saying a turn has named the project to a user below it.
const ANNOUNCED: &str = "announced";

impl Project {
    /// Stamps the database as this user's once the store has created it (see `stamp`); does
    /// nothing when it existed at [`locate`], where it was checked.
    pub fn stamp_created(&self) -> Result<()> {
        if self.database != Database::Missing {
            return Ok(());
        }
        stamp::write(&self.state)
    }

    /// Says whether the store may create the database [`locate`] found missing: inside a git
    /// worktree, git must ignore it and the files beside it (see `trust::check_ignored`). A
    /// `.sticky/` sticky is about to create ignores itself (its `.gitignore` of `*`); one that
    /// is already there (a repository may track files in it, a `.gitignore` ignoring nothing
    /// among them) gets its `.gitignore` back if it lost it, then git is asked. Does nothing
    /// when the database exists.
    pub fn check_creatable(&self) -> Result<()> {
        if self.database != Database::Missing {
            return Ok(());
        }
        if !self.db_overridden {
            let dir = self.dir.join(STATE_DIR);
            if !dir.is_dir() {
                return Ok(());
            }
            state::write_gitignore(&dir)
                .map_err(|e| store_io(self, &format!("write {}/.gitignore", dir.display()), &e))?;
        }
        trust::check_ignored(self)
    }

    /// Adopts (stamps) a database made by a sticky older than stamps only when the agent has the
    /// files of every live session of it in this HOME: else only sticky's vault could continue
    /// that conversation, which is what a state planted from a cache or an archive needs. A live
    /// session that never started shows nothing either way, so it is refused too, unless this
    /// user can have no key (see [`unproven`]). `has` says whether the agent has a session
    /// (`None`: it cannot tell, which proves nothing). Does nothing for a stamped or missing
    /// database; a stamp that cannot be written is tried again next time.
    pub fn adopt_unstamped(&self, has: impl Fn(&store::SessionRow) -> Option<bool>) -> Result<()> {
        if self.database != Database::Unstamped {
            return Ok(());
        }
        if let Some(store) = store::Store::open_existing(&self.state.db)? {
            for thread in store.threads()? {
                let Some(live) = store.live_session(thread.id)? else {
                    continue;
                };
                let Some(why) = unproven(&live, &thread.name, &has)? else {
                    continue;
                };
                // Seen unstamped at `locate`, but a sticky that created the file may have
                // stamped it since: it stamps before it writes any session, so a session read
                // here comes after its stamp (64 first runs at once hit this).
                if stamp::verdict(&self.state).is_ok_and(|v| v == stamp::Verdict::Mine) {
                    return Ok(());
                }
                let advice = trust_advice()?;
                return Err(trust::refuse(
                    &self.state.db,
                    format!(
                        "it has no stamp saying you made it, and {why}; {advice}; {}",
                        trust::way_out(self)
                    ),
                ));
            }
        }
        let _ = stamp::write(&self.state);
        Ok(())
    }

    /// What a turn that starts this project says when the search passed over a `.sticky/` above
    /// it (see [`PassedOver`]): that a new project starts here, why, and how to reach the other
    /// one. `None` once the project's database exists, so it is said once.
    pub fn passed_over_note(&self) -> Option<String> {
        let passed = self
            .passed_over
            .as_ref()
            .filter(|_| self.database == Database::Missing)?;
        let above_dir = &passed.dir;
        let above = above_dir.display();
        let whose = match passed.why {
            Limit::Home => format!("HOME's own .sticky/ (in {above}) serves turns run in HOME"),
            Limit::Ceiling => format!(
                "{above} is in STICKY_CEILING_DIRECTORIES, so its .sticky/ serves turns run there"
            ),
            Limit::Root => "the .sticky/ in / serves turns run in /".to_owned(),
            Limit::Foreign(uid) => {
                return Some(format!(
                    "a new project starts in {}: the .sticky/ in {above} belongs to another user \
                     (uid {uid}), and sticky uses no other user's state (if it is yours, take \
                     it over: chown -R {} {})",
                    self.dir.display(),
                    nix::unistd::geteuid().as_raw(),
                    crate::msg::shell_path(&above_dir.join(STATE_DIR)),
                ));
            }
            Limit::Stranger => return None,
        };
        Some(format!(
            "a new project starts in {}: {whose} itself, not in the directories below it; to \
             continue that conversation, run sticky there (sticky -C {} ...)",
            self.dir.display(),
            crate::msg::shell_path(above_dir),
        ))
    }

    /// Whether this is the first turn run from below a project found above (see
    /// [`Project::found_above`]); remembers it with a marker file in `.sticky/`, so the note is
    /// given once per project. A marker that cannot be written counts as a first time.
    pub fn first_use_from_below(&self) -> bool {
        if !self.found_above {
            return false;
        }
        let marker = self.dir.join(STATE_DIR).join(ANNOUNCED);
        !matches!(
            std::fs::OpenOptions::new().write(true).create_new(true).open(marker),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists
        )
    }
}

/// How `sticky trust` adopts an unstamped database: at once, or once the user's key can be made
/// (it stamps with the key).
fn trust_advice() -> Result<String> {
    Ok(match stamp::key_state()? {
        stamp::KeyState::Ready => {
            "if you made it before sticky stamped its databases, run `sticky trust`".to_owned()
        }
        stamp::KeyState::Impossible(why) => format!(
            "if you made it, `sticky trust` adopts it, but needs your key, which cannot be made: \
             {why}; then run `sticky trust`"
        ),
    })
}

/// Why the live session `live` of thread `thread` in an unstamped database does not show that
/// the user made it, or `None` when it does. A session that ran shows it by the agent's files of
/// it in this HOME (`has`). One that never started (`sticky new` without a prompt, a first turn
/// whose agent failed) shows nothing, and would choose the agent and model of the next turn:
/// refused, unless no key can be made for this user (a data directory sticky cannot write), whose
/// own databases are then all unstamped and `sticky trust` cannot stamp them. Such a user keeps
/// going with their own sessions that never started (they carry no conversation, and can only
/// choose among the user's own agents), while a started one without the agent's files is still
/// refused, saying how to give sticky a key.
fn unproven(
    live: &store::SessionRow,
    thread: &str,
    has: &impl Fn(&store::SessionRow) -> Option<bool>,
) -> Result<Option<String>> {
    let started = live.confirmed_at.is_some();
    let (Some(id), true) = (live.agent_session_id.as_deref(), started) else {
        if stamp::key_state()? == stamp::KeyState::Ready {
            return Ok(Some(format!(
                "its {} session #{} (thread {thread}) never started, so nothing in this HOME \
                 shows that you made it, and it would choose the agent and model the next turn \
                 runs",
                live.agent, live.id
            )));
        }
        return Ok(None);
    };
    // An agent that cannot tell (opencode keeps rows, not files) proves nothing.
    let missing = match has(live) {
        Some(true) => return Ok(None),
        Some(false) => format!("{} has none of the files of", live.agent),
        None => format!("sticky cannot find {}'s own record of", live.agent),
    };
    Ok(Some(format!(
        "{missing} its session {id} (thread {thread}) in this HOME, so only sticky's vault could \
         continue it, as a state planted from a cache or an archive would be"
    )))
}

/// How the project directory was chosen (shown by `sticky status` and `sticky doctor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The nearest directory with a `.sticky/` directory, within the git worktree.
    StickyDir,
    /// The root of the git worktree (no `.sticky/` between it and the current directory).
    GitRoot,
    /// The current directory itself (outside git, no `.sticky/` above it).
    CurrentDir,
}

impl Found {
    /// Why this directory, in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            Self::StickyDir => "nearest directory with .sticky/",
            Self::GitRoot => "root of the git worktree",
            Self::CurrentDir => "current directory (not in git)",
        }
    }
}

/// Finds the project of `cwd`. `sticky_db` is the value of `STICKY_DB` (an empty value counts
/// as unset; a relative one is taken from the project directory, so every subdirectory of the
/// project, and every step of a CI job, finds the same database). Creates nothing.
pub fn locate(cwd: &Path, sticky_db: Option<&Path>) -> Result<Project> {
    locate_within(cwd, sticky_db, &Bounds::from_env()?)
}

/// [`locate`] with the search's bounds given.
pub fn locate_within(cwd: &Path, sticky_db: Option<&Path>, bounds: &Bounds) -> Result<Project> {
    let cwd = canonical(cwd)?;
    let (dir, found, passed_over) = project_dir(&cwd, bounds);
    let mut project = project(dir, found, &cwd, sticky_db);
    project.passed_over = passed_over;
    project.database = trust::check(&project)?;
    Ok(project)
}

/// The project of `cwd` as [`locate`] finds it, with what keeps a turn there from its state
/// when that state may be the user's and [`locate`] refuses it for now, for a reason the user
/// fixes there ([`Hold`]: others may write it, another account owns it, or this HOME's key did
/// not stamp it). `None` when [`locate`] takes the state, or it cannot be the user's (no regular
/// file, one the user cannot read, a link out of the project). Creates nothing.
pub fn held(cwd: &Path, sticky_db: Option<&Path>) -> Option<(Project, Hold)> {
    let cwd = canonical(cwd).ok()?;
    let (dir, found, _) = project_dir(&cwd, &Bounds::from_env().ok()?);
    let project = project(dir, found, &cwd, sticky_db);
    let hold = trust::held(&project)?;
    Some((project, hold))
}

/// What `sticky trust` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adopted {
    /// The database was stamped as the user's now.
    Now,
    /// It already was the user's.
    Already,
    /// There is no database to adopt.
    Nothing,
}

/// Locates the project of `cwd` as [`locate`] does, and stamps its database as the user's
/// (`sticky trust`): a state the user copied, restored or cloned on purpose. What the stamp
/// cannot vouch for is still refused: a `.sticky/` of another user, writable by others, or a
/// link out of the project; and a state git tracks, which came with the repository (whoever
/// committed it chose its conversation and its vault's transcripts), until the user untracks it.
/// `before_stamp` is called with a database found and checked, before it is stamped: what it
/// gives (`trust`'s hold on the sessions the state names) is given back with the project.
pub fn adopt<T>(
    cwd: &Path,
    sticky_db: Option<&Path>,
    before_stamp: impl FnOnce(&Project) -> Result<T>,
) -> Result<(Project, Adopted, Option<T>)> {
    let cwd = canonical(cwd)?;
    let (dir, found, _) = project_dir(&cwd, &Bounds::from_env()?);
    let mut project = project(dir, found, &cwd, sticky_db);
    trust::check_owned(&project)?;
    let verdict = stamp::verdict(&project.state)?;
    if verdict != stamp::Verdict::NoDatabase {
        // Trusting an emptied database would let the next turn start afresh on it.
        trust::check_not_emptied(&project.state, verdict == stamp::Verdict::Mine)?;
    }
    let (adopted, held) = match verdict {
        stamp::Verdict::NoDatabase => (Adopted::Nothing, None),
        stamp::Verdict::Mine => (Adopted::Already, Some(before_stamp(&project)?)),
        stamp::Verdict::Linked(names) => return Err(trust::linked(&project, names)),
        _ => {
            trust::check_not_committed(&project)?;
            stamp::ready_key()?;
            let held = before_stamp(&project)?;
            stamp::write(&project.state)?;
            (Adopted::Now, Some(held))
        }
    };
    if adopted != Adopted::Nothing {
        project.database = Database::Stamped;
    }
    Ok((project, adopted, held))
}

/// Where the upward search for a project stops.
#[derive(Debug, Clone, Default)]
pub struct Bounds {
    /// The user's home directory, as given: never looked at from below.
    home: Option<PathBuf>,
    /// The absolute entries of `STICKY_CEILING_DIRECTORIES`, as given: directories never
    /// looked at.
    ceilings: Vec<PathBuf>,
    /// Both canonicalized, at the first step up: most searches end in the directory they start
    /// in, and canonicalizing costs a `readlink` per component of each path.
    canonical: std::cell::OnceCell<(Option<PathBuf>, Vec<PathBuf>)>,
    /// The user, whose own directories the search may enter.
    pub uid: u32,
}

impl Bounds {
    /// The bounds of this process: `HOME`, `STICKY_CEILING_DIRECTORIES` and the effective user.
    /// A missing or relative HOME is an error (exit 2): every project keeps its key and its
    /// agents' sessions there.
    pub fn from_env() -> Result<Self, StickyError> {
        Ok(Self::new(
            Some(&settings::home()?),
            settings::env::ceilings().as_deref(),
            nix::unistd::geteuid().as_raw(),
        ))
    }

    /// Bounds from a home directory, a `STICKY_CEILING_DIRECTORIES` value and a user id. Empty
    /// and relative entries are ignored, as git ignores them; entries are canonicalized (when
    /// first needed), so a link to a directory bounds the directory.
    pub fn new(home: Option<&Path>, ceilings: Option<&std::ffi::OsStr>, uid: u32) -> Self {
        let ceilings = ceilings.map(std::env::split_paths).into_iter().flatten();
        Self {
            home: home.map(Path::to_owned),
            ceilings: ceilings.filter(|dir| dir.is_absolute()).collect(),
            canonical: std::cell::OnceCell::new(),
            uid,
        }
    }

    /// The home directory and the ceilings, canonical; those that do not exist are left out.
    fn canonical(&self) -> &(Option<PathBuf>, Vec<PathBuf>) {
        self.canonical.get_or_init(|| {
            (
                self.home
                    .as_deref()
                    .and_then(|home| home.canonicalize().ok()),
                self.ceilings
                    .iter()
                    .filter_map(|dir| dir.canonicalize().ok())
                    .collect(),
            )
        })
    }

    /// Whether `dir` is the user's home directory.
    fn is_home(&self, dir: &Path) -> bool {
        self.canonical().0.as_deref() == Some(dir)
    }

    /// Why the search, coming up from below, may not look at `to`; `None` when it may.
    fn limit(&self, to: &Path) -> Option<Limit> {
        let (home, ceilings) = self.canonical();
        if home.as_deref() == Some(to) {
            Some(Limit::Home)
        } else if ceilings.iter().any(|ceiling| ceiling == to) {
            Some(Limit::Ceiling)
        } else if to.parent().is_none() {
            Some(Limit::Root)
        } else if !to.metadata().is_ok_and(|meta| meta.uid() == self.uid) {
            Some(Limit::Stranger)
        } else {
            None
        }
    }
}

/// Makes `dir` a project of its own (`sticky init`): creates `dir/.sticky/` (mode 0700) with a
/// `.gitignore` containing `*`. An existing `.sticky/` is kept (and gets its `.gitignore` back
/// if it lost it); a `.sticky` that is not a directory is an error.
pub fn init(dir: &Path, sticky_db: Option<&Path>) -> Result<Project> {
    let dir = canonical(dir)?;
    let mut project = project(dir.clone(), Found::StickyDir, &dir, sticky_db);
    project.database = trust::check(&project)?;
    let state = dir.join(STATE_DIR);
    let created = state::create(&state)
        .map_err(|e| store_io(&project, &format!("create {}", state.display()), &e))?;
    if !created {
        state::write_gitignore(&state).map_err(|e| {
            store_io(
                &project,
                &format!("write {}/.gitignore", state.display()),
                &e,
            )
        })?;
    }
    Ok(project)
}

/// The project directory of a canonical `cwd`, how it was found, and the `.sticky/` above it
/// the search passed over (in HOME, a ceiling or `/`), if any. The directory the search starts
/// in is always looked at, whatever it is.
fn project_dir(cwd: &Path, bounds: &Bounds) -> (PathBuf, Found, Option<PassedOver>) {
    let mut passed_over = None;
    let mut from: Option<&Path> = None;
    for dir in cwd.ancestors() {
        // A search that started in HOME ends there; one from below never looks at HOME (nor
        // at a ceiling, `/` or another user's directory). Neither is asked at the start: most
        // searches end where they start, and the bounds cost a `readlink` per component of
        // each path (see `Bounds::canonical`).
        if from.is_some_and(|from| bounds.is_home(from)) {
            break;
        }
        if let Some(why) = from.and_then(|_| bounds.limit(dir)) {
            passed_over =
                (why != Limit::Stranger && is_state_dir(&dir.join(STATE_DIR))).then(|| {
                    PassedOver {
                        dir: dir.to_owned(),
                        why,
                    }
                });
            break;
        }
        let state = dir.join(STATE_DIR);
        if is_state_dir(&state) {
            // Above the start, another user's `.sticky/` outside git is passed over, as HOME's
            // is: taken, it would be refused, and so would every directory below it.
            let owner = state.metadata().map(|meta| meta.uid()).ok();
            if let Some(uid) = owner.filter(|uid| from.is_some() && *uid != bounds.uid)
                && dir.join(".git").symlink_metadata().is_err()
            {
                passed_over = Some(PassedOver {
                    dir: dir.to_owned(),
                    why: Limit::Foreign(uid),
                });
                break;
            }
            return (dir.to_owned(), Found::StickyDir, None);
        }
        from = Some(dir);
        // A `.git` of any kind (directory, worktree file, even a dangling link) marks the root.
        if dir.join(".git").symlink_metadata().is_ok() {
            return (dir.to_owned(), Found::GitRoot, None);
        }
    }
    (cwd.to_owned(), Found::CurrentDir, passed_over)
}

/// Whether `path` is a `.sticky` directory. A file of that name is ignored; a symbolic link to
/// a directory counts (`trust` then refuses one that leads out of the project).
fn is_state_dir(path: &Path) -> bool {
    path.is_dir()
}

fn project(dir: PathBuf, found: Found, cwd: &Path, sticky_db: Option<&Path>) -> Project {
    let found_above =
        found == Found::StickyDir && dir != cwd && dir.join(".git").symlink_metadata().is_err();
    let (state, db_overridden) = match sticky_db.filter(|db| !db.as_os_str().is_empty()) {
        Some(db) => (State::beside(dir.join(db)), true),
        None => (State::in_project(&dir), false),
    };
    Project {
        dir,
        state,
        found,
        db_overridden,
        found_above,
        database: Database::Missing,
        passed_over: None,
    }
}

fn canonical(dir: &Path) -> Result<PathBuf> {
    let canonical = dir
        .canonicalize()
        .with_context(|| format!("cannot use {} as the working directory", dir.display()))?;
    if !canonical.is_dir() {
        anyhow::bail!(
            "cannot use {} as the working directory: not a directory",
            dir.display()
        );
    }
    Ok(canonical)
}

fn store_io(project: &Project, doing: &str, error: &io::Error) -> anyhow::Error {
    store::io_error(&project.state.db, doing, error)
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::exit::{Exit, exit_for};

    /// Builds a tree under a temp dir from entries like `a/.git/`, `a/b/.sticky/`, `w/.git`
    /// (a trailing `/` makes a directory, otherwise a file).
    fn tree(entries: &[&str]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for entry in entries {
            let path = root.path().join(entry.trim_end_matches('/'));
            if entry.ends_with('/') {
                fs::create_dir_all(&path).unwrap();
                // Whatever the umask: a `.sticky/` others may write is refused (see `trust`).
                fs::set_permissions(&path, fs::Permissions::from_mode(0o700)).unwrap();
            } else {
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(&path, "gitdir: /elsewhere\n").unwrap();
            }
        }
        root
    }

    #[test]
    fn locate_follows_the_rules_of_design_md() {
        // (tree, cwd, expected project dir, how) — all relative to the temp root.
        let cases: &[(&[&str], &str, &str, Found)] = &[
            // Outside git: the current directory.
            (&["a/b/"], "a/b", "a/b", Found::CurrentDir),
            // Outside git, a `.sticky/` above is still the project.
            (&["a/.sticky/", "a/b/"], "a/b", "a", Found::StickyDir),
            // In git without `.sticky/`: the worktree root.
            (
                &["repo/.git/", "repo/src/deep/"],
                "repo/src/deep",
                "repo",
                Found::GitRoot,
            ),
            // The nearest `.sticky/` inside the worktree wins.
            (
                &[
                    "repo/.git/",
                    "repo/.sticky/",
                    "repo/src/.sticky/",
                    "repo/src/deep/",
                ],
                "repo/src/deep",
                "repo/src",
                Found::StickyDir,
            ),
            // A `.sticky/` at the git root itself.
            (
                &["repo/.git/", "repo/.sticky/", "repo/src/"],
                "repo/src",
                "repo",
                Found::StickyDir,
            ),
            // A `.sticky/` above the git root is never used.
            (
                &[".sticky/", "repo/.git/", "repo/src/"],
                "repo/src",
                "repo",
                Found::GitRoot,
            ),
            // Nested repositories: the inner one is the boundary.
            (
                &[
                    "outer/.git/",
                    "outer/.sticky/",
                    "outer/inner/.git/",
                    "outer/inner/x/",
                ],
                "outer/inner/x",
                "outer/inner",
                Found::GitRoot,
            ),
            // `.git` as a file (linked worktree, submodule) marks the root too.
            (&["wt/.git", "wt/src/"], "wt/src", "wt", Found::GitRoot),
            (
                &[".sticky/", "wt/.git", "wt/src/"],
                "wt/src",
                "wt",
                Found::GitRoot,
            ),
            // A `.sticky` that is a file is ignored.
            (
                &["repo/.git/", "repo/src/.sticky", "repo/src/"],
                "repo/src",
                "repo",
                Found::GitRoot,
            ),
            // The current directory is the git root.
            (&["repo/.git/"], "repo", "repo", Found::GitRoot),
        ];
        for (entries, cwd, expected, found) in cases {
            let root = tree(entries);
            let base = root.path().canonicalize().unwrap();
            let project = locate(&root.path().join(cwd), None).unwrap();
            assert_eq!(project.dir, base.join(expected), "{entries:?} from {cwd}");
            assert_eq!(project.found, *found, "{entries:?} from {cwd}");
            assert_eq!(
                project.state.db,
                base.join(expected).join(".sticky/sticky.db")
            );
            assert!(!project.db_overridden);
        }
    }

    #[test]
    fn a_sticky_link_inside_the_project_counts_one_leading_out_is_refused() {
        let root = tree(&[
            "elsewhere/.sticky/",
            "repo/.git/",
            "repo/src/",
            "repo/lib/",
            "repo/inside/state/",
        ]);
        let link = |target: &str, at: &str| {
            std::os::unix::fs::symlink(root.path().join(target), root.path().join(at)).unwrap();
        };
        link("elsewhere/.sticky", "repo/src/.sticky");
        link("nowhere", "repo/lib/.sticky");
        link("repo/inside/state", "repo/inside/.sticky");
        let error = locate(&root.path().join("repo/src"), None).unwrap_err();
        assert_eq!(exit_for(&error), Exit::Store, "{error:#}");
        let text = error.to_string();
        let base = root.path().canonicalize().unwrap();
        for needle in [
            format!(
                "{}: refusing to use it",
                base.join("repo/src/.sticky").display()
            ),
            format!(
                "symbolic link to {}",
                base.join("elsewhere/.sticky").display()
            ),
            "outside the project".into(),
            format!(
                "STICKY_DB={}",
                base.join("elsewhere/.sticky/sticky.db").display()
            ),
        ] {
            assert!(text.contains(&needle), "{needle:?} in {text}");
        }
        // A dangling link is no state directory: the search goes on to the git root.
        assert_eq!(
            locate(&root.path().join("repo/lib"), None).unwrap().found,
            Found::GitRoot
        );
        // A link that stays inside the project is the user's own arrangement.
        let inside = locate(&root.path().join("repo/inside"), None).unwrap();
        assert_eq!(inside.found, Found::StickyDir);
        // The database itself may not lead out either, nor a WAL beside it.
        for name in ["sticky.db", "sticky.db-wal", "sticky.db-journal"] {
            let at = format!("repo/inside/state/{name}");
            link("elsewhere/.sticky/x", &at);
            let error = locate(&root.path().join("repo/inside"), None).unwrap_err();
            assert!(error.to_string().contains(name), "{error}");
            fs::remove_file(root.path().join(&at)).unwrap();
        }
        // Under STICKY_DB the user named the database: a link is not followed for it.
        let db = Path::new("/cache/x.db");
        assert!(
            locate(&root.path().join("repo/src"), Some(db)).is_err(),
            "still marks the dir"
        );
    }

    #[test]
    fn state_that_others_own_or_may_write_is_refused() {
        let root = tree(&["p/.sticky/", "q/.sticky/"]);
        let state = root.path().join("p/.sticky");
        fs::set_permissions(&state, fs::Permissions::from_mode(0o777)).unwrap();
        let error = locate(&root.path().join("p"), None).unwrap_err();
        assert_eq!(exit_for(&error), Exit::Store, "{error:#}");
        assert!(error.to_string().contains("mode 0777"), "{error}");
        assert!(error.to_string().contains("chmod go-w"), "{error}");
        fs::set_permissions(&state, fs::Permissions::from_mode(0o700)).unwrap();
        fs::write(state.join("sticky.db"), b"").unwrap();
        fs::set_permissions(state.join("sticky.db"), fs::Permissions::from_mode(0o666)).unwrap();
        let error = locate(&root.path().join("p"), None).unwrap_err();
        assert!(error.to_string().contains("sticky.db: refusing"), "{error}");
        // STICKY_DB names another file: the one in `.sticky/` is not used, so not checked.
        locate(&root.path().join("p"), Some(Path::new("/cache/x.db"))).unwrap();
        fs::set_permissions(state.join("sticky.db"), fs::Permissions::from_mode(0o600)).unwrap();
        locate(&root.path().join("p"), None).unwrap();

        if nix::unistd::geteuid().is_root() {
            let theirs = root.path().join("q/.sticky");
            std::os::unix::fs::chown(&theirs, Some(65_534), Some(65_534)).unwrap();
            let error = locate(&root.path().join("q"), None).unwrap_err();
            assert!(
                error
                    .to_string()
                    .contains("owned by another user (uid 65534"),
                "{error}"
            );
            assert!(error.to_string().contains("chown -R 0"), "{error}");
            assert!(
                init(&root.path().join("q"), None).is_err(),
                "init refuses it too"
            );
        }
    }

    #[test]
    fn a_database_that_is_no_regular_file_is_refused_by_what_it_is() {
        let root = tree(&["repo/.git/", "dir/", "repo/.sticky/sticky.db/"]);
        let fifo = root.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::os::unix::fs::symlink(root.path().join("nowhere"), root.path().join("dangling"))
            .unwrap();
        let repo = root.path().join("repo");
        let cases = [
            (
                "dir",
                "a directory, not a database file; name a file in it (STICKY_DB=",
            ),
            (
                "fifo",
                "a FIFO (named pipe), not a database file (sticky would wait on it",
            ),
            (
                "/dev/null",
                "a device, not a database file (SQLite would write its journal",
            ),
            ("dangling", "a symbolic link to"),
        ];
        for (named, says) in cases {
            let db = root.path().join(named);
            let error = locate(&repo, Some(&db)).unwrap_err();
            let text = error.to_string();
            assert_eq!(exit_for(&error), Exit::Usage, "{named}: {text}");
            assert!(text.starts_with("STICKY_DB names "), "{named}: {text}");
            assert!(text.contains(says), "{named}: {text}");
            assert!(text.contains("or unset STICKY_DB"), "{named}: {text}");
            // `sticky trust` and `sticky init` refuse it the same way.
            let adopted = adopt(&repo, Some(&db), |_| Ok(())).unwrap_err();
            assert_eq!(exit_for(&adopted), Exit::Usage);
            assert_eq!(exit_for(&init(&repo, Some(&db)).unwrap_err()), Exit::Usage);
        }
        // Nothing was created beside any of them.
        let mut names: Vec<_> = fs::read_dir(root.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["dangling", "dir", "fifo", "repo"]);
        assert_eq!(fs::read_dir(root.path().join("dir")).unwrap().count(), 0);
        // In the project's own `.sticky/`, something planted it: a refused state.
        let error = locate(&repo, None).unwrap_err();
        assert_eq!(exit_for(&error), Exit::Store, "{error:#}");
        assert!(
            error
                .to_string()
                .contains("sticky.db: refusing to use it: it is a directory, not a regular file"),
            "{error}"
        );
    }

    #[test]
    fn a_sticky_file_in_the_project_says_so() {
        let root = tree(&["repo/.git/", "repo/.sticky"]);
        let error = locate(&root.path().join("repo"), None).unwrap_err();
        assert_eq!(exit_for(&error), Exit::Store, "{error:#}");
        assert!(
            error
                .to_string()
                .contains(".sticky: refusing to use it: is a file"),
            "{error}"
        );
        assert!(error.to_string().contains("STICKY_DB"), "{error}");
        // Under STICKY_DB no state goes there, so it is no obstacle.
        locate(&root.path().join("repo"), Some(Path::new("/cache/x.db"))).unwrap();
    }

    #[test]
    fn the_search_stops_at_home_at_a_ceiling_and_at_another_users_directory() {
        let root = tree(&["top/.sticky/", "top/home/a/b/", "top/c/d/", "top/o/x/"]);
        let base = root.path().canonicalize().unwrap();
        let uid = nix::unistd::geteuid().as_raw();
        let found = |cwd: &str, bounds: &Bounds| {
            let project = locate_within(&root.path().join(cwd), None, bounds).unwrap();
            (
                project.dir.strip_prefix(&base).unwrap().to_owned(),
                project.found,
            )
        };
        let free = Bounds::new(None, None, uid);
        assert_eq!(
            found("top/home/a/b", &free),
            ("top".into(), Found::StickyDir)
        );
        let home = Bounds::new(Some(&base.join("top/home")), None, uid);
        assert_eq!(
            found("top/home/a/b", &home),
            ("top/home/a/b".into(), Found::CurrentDir)
        );
        assert_eq!(
            found("top/home", &home),
            ("top/home".into(), Found::CurrentDir),
            "nor above home from home itself"
        );
        assert_eq!(
            found("top/c/d", &home),
            ("top".into(), Found::StickyDir),
            "outside home"
        );
        let ceiling: std::ffi::OsString =
            format!("relative::{}", base.join("top").display()).into();
        let ceiling = Bounds::new(None, Some(&ceiling), uid);
        assert_eq!(
            found("top/c/d", &ceiling),
            ("top/c/d".into(), Found::CurrentDir)
        );
        let ceiling: std::ffi::OsString = base.join("top/c").into();
        let ceiling = Bounds::new(None, Some(&ceiling), uid);
        assert_eq!(
            found("top/c/d", &ceiling),
            ("top/c/d".into(), Found::CurrentDir)
        );
        // Another user's directory is never entered (here: everything, as another uid sees it).
        let stranger = Bounds::new(None, None, uid.wrapping_add(1));
        assert_eq!(
            found("top/o/x", &stranger),
            ("top/o/x".into(), Found::CurrentDir)
        );
    }

    #[test]
    fn the_state_of_home_and_of_a_ceiling_serves_only_turns_run_there() {
        let root = tree(&[
            "home/.sticky/",
            "home/.git/",
            "home/a/b/",
            "home/p/.sticky/",
            "home/p/q/",
            "ceiling/.sticky/",
            "ceiling/x/",
        ]);
        let base = root.path().canonicalize().unwrap();
        let uid = nix::unistd::geteuid().as_raw();
        let ceiling: std::ffi::OsString = base.join("ceiling").into();
        let bounds = Bounds::new(Some(&base.join("home")), Some(&ceiling), uid);
        let found = |cwd: &str| locate_within(&base.join(cwd), None, &bounds).unwrap();
        let passed = |dir: &str, why| {
            Some(PassedOver {
                dir: base.join(dir),
                why,
            })
        };
        // From below, neither HOME's .sticky/ nor its .git (a dotfiles repository) is taken.
        let below = found("home/a/b");
        assert_eq!(
            (&below.dir, below.found),
            (&base.join("home/a/b"), Found::CurrentDir)
        );
        assert_eq!(below.passed_over, passed("home", Limit::Home));
        let note = below
            .passed_over_note()
            .expect("a note for the new project");
        for needle in [
            format!(
                "a new project starts in {}: ",
                base.join("home/a/b").display()
            ),
            format!(
                "HOME's own .sticky/ (in {}) serves turns run in HOME itself, not in the \
                 directories below it",
                base.join("home").display()
            ),
            format!("sticky -C {} ...", base.join("home").display()),
        ] {
            assert!(note.contains(&needle), "{needle:?} in {note}");
        }
        let below_ceiling = found("ceiling/x");
        assert_eq!(below_ceiling.found, Found::CurrentDir);
        assert_eq!(below_ceiling.passed_over, passed("ceiling", Limit::Ceiling));
        assert!(
            below_ceiling
                .passed_over_note()
                .unwrap()
                .contains("is in STICKY_CEILING_DIRECTORIES"),
            "{below_ceiling:?}"
        );
        // In HOME itself, and in the ceiling itself, their own state serves the turn.
        for dir in ["home", "ceiling"] {
            let itself = found(dir);
            assert_eq!(
                (&itself.dir, itself.found, &itself.passed_over),
                (&base.join(dir), Found::StickyDir, &None)
            );
        }
        // A project of its own below HOME is found as before, and passes nothing over.
        let inner = found("home/p/q");
        assert_eq!(
            (&inner.dir, inner.found, &inner.passed_over),
            (&base.join("home/p"), Found::StickyDir, &None)
        );
        // Said once: the project's own database, once it exists, ends the note.
        let mut started = below;
        started.database = Database::Stamped;
        assert_eq!(started.passed_over_note(), None);
    }

    #[test]
    fn another_users_sticky_dir_above_is_passed_over_with_a_note() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("skipped: needs root to give a directory to another user (CI runs as root)");
            return;
        }
        let root = tree(&[
            "tmp/.sticky/",
            "tmp/x/y/",
            "repo/.git/",
            "repo/.sticky/",
            "repo/z/",
        ]);
        let base = root.path().canonicalize().unwrap();
        for theirs in ["tmp/.sticky", "repo/.sticky"] {
            std::os::unix::fs::chown(base.join(theirs), Some(65_534), Some(65_534)).unwrap();
        }
        let bounds = Bounds::new(None, None, 0);
        // Below it, a project of its own starts, and the first turn says why.
        let below = locate_within(&base.join("tmp/x/y"), None, &bounds).unwrap();
        assert_eq!(
            (&below.dir, below.found),
            (&base.join("tmp/x/y"), Found::CurrentDir)
        );
        assert_eq!(
            below.passed_over,
            Some(PassedOver {
                dir: base.join("tmp"),
                why: Limit::Foreign(65_534)
            })
        );
        let note = below.passed_over_note().expect("a note");
        assert!(
            note.contains(&format!(
                "a new project starts in {}: the .sticky/ in {} belongs to another user (uid \
                 65534)",
                base.join("tmp/x/y").display(),
                base.join("tmp").display()
            )),
            "{note}"
        );
        // In that directory itself, it is refused, saying whose it is.
        let error = locate_within(&base.join("tmp"), None, &bounds).unwrap_err();
        assert!(
            error.to_string().contains("is owned by another user"),
            "{error}"
        );
        // At a git root, the project's own .sticky/ is still refused from below.
        let error = locate_within(&base.join("repo/z"), None, &bounds).unwrap_err();
        assert!(
            error.to_string().contains("is owned by another user"),
            "{error}"
        );
    }

    #[test]
    fn the_current_directory_is_canonicalized() {
        let root = tree(&["repo/.git/", "repo/src/"]);
        let dotted = root.path().join("repo/src/../src/.");
        let project = locate(&dotted, None).unwrap();
        assert_eq!(
            project.dir,
            root.path().canonicalize().unwrap().join("repo")
        );
        std::os::unix::fs::symlink(root.path().join("repo/src"), root.path().join("link")).unwrap();
        let project = locate(&root.path().join("link"), None).unwrap();
        assert_eq!(
            project.found,
            Found::GitRoot,
            "the link resolves into the repository"
        );
    }

    #[test]
    fn sticky_db_moves_the_database_but_not_the_project() {
        let root = tree(&["repo/.git/", "repo/src/"]);
        let base = root.path().canonicalize().unwrap();
        let cwd = root.path().join("repo/src");
        let cases = [
            (
                Some(Path::new("/cache/state.db")),
                PathBuf::from("/cache/state.db"),
                true,
            ),
            // Relative: from the project directory, whatever the subdirectory.
            (
                Some(Path::new("state.db")),
                base.join("repo/state.db"),
                true,
            ),
            (
                Some(Path::new("")),
                base.join("repo/.sticky/sticky.db"),
                false,
            ),
            (None, base.join("repo/.sticky/sticky.db"), false),
        ];
        for (sticky_db, db, overridden) in cases {
            let project = locate(&cwd, sticky_db).unwrap();
            assert_eq!(project.dir, base.join("repo"));
            assert_eq!(project.found, Found::GitRoot);
            assert_eq!(project.state.db, db, "{sticky_db:?}");
            assert_eq!(project.db_overridden, overridden, "{sticky_db:?}");
        }
    }

    #[test]
    fn a_missing_directory_is_a_clear_error() {
        let root = tempfile::tempdir().unwrap();
        let error = locate(&root.path().join("gone"), None).unwrap_err();
        assert!(error.to_string().contains("gone"), "{error}");
    }

    #[test]
    fn init_makes_a_subdirectory_a_project_of_its_own() {
        let root = tree(&["repo/.git/", "repo/sub/deeper/"]);
        let sub = root.path().join("repo/sub");
        assert_eq!(
            locate(&sub.join("deeper"), None).unwrap().found,
            Found::GitRoot
        );

        let project = init(&sub, None).unwrap();
        let state = sub.join(".sticky");
        assert_eq!(project.dir, sub.canonicalize().unwrap());
        assert_eq!(project.state.db, project.dir.join(".sticky/sticky.db"));
        assert_eq!(fs::read_to_string(state.join(".gitignore")).unwrap(), "*\n");
        let mode = fs::metadata(&state).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert!(
            !project.state.db.exists(),
            "init creates the directory; the store creates the file"
        );

        let again = locate(&sub.join("deeper"), None).unwrap();
        assert_eq!(
            (again.dir, again.found),
            (project.dir.clone(), Found::StickyDir)
        );

        // Idempotent, and a lost `.gitignore` comes back.
        fs::remove_file(state.join(".gitignore")).unwrap();
        assert_eq!(init(&sub, None).unwrap(), project);
        assert_eq!(fs::read_to_string(state.join(".gitignore")).unwrap(), "*\n");
    }

    #[test]
    fn init_refuses_a_sticky_file_with_a_store_error() {
        let root = tree(&["dir/.sticky"]);
        let error = init(&root.path().join("dir"), None).unwrap_err();
        assert_eq!(exit_for(&error), Exit::Store, "{error:#}");
        assert!(error.to_string().contains(".sticky"), "{error:#}");
    }
}
