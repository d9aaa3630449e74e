//! Whether the state found in a project may be used: the checks that keep a repository or
//! another user from choosing where sticky reads and writes (issue 11, modelled on how git
//! refuses a repository owned by someone else).
//!
//! A `.sticky/` (and the database files inside it) must be the user's own: not a symbolic link
//! leading out of the project (a committed `.sticky -> ../other/.sticky` would show and rotate
//! another project's conversations), not owned by another user, and not writable by others (a
//! world-writable `/tmp/x/.sticky` planted by one user would capture another's runs). A link
//! that stays inside the project is fine. `STICKY_DB` is the supported way to keep the database
//! elsewhere: the user named it, so the files it names are not checked. A project directory
//! every user may write (mode 0777, no sticky bit) is refused as well: another user could swap
//! its `.sticky/` between these checks and `SQLite`'s open.
//!
//! A clone passes all of that, so the database must also carry the user's stamp (see `stamp`):
//! a `.sticky/` committed to a repository and cloned to the same path, or a state copied from
//! another HOME, is refused until the user adopts it (`sticky trust`). And a database that is
//! gone while its vault or its stamp is still beside it, or emptied to zero bytes (which
//! `SQLite` takes for a new database), is refused rather than started afresh: the conversations
//! are somewhere, and a new empty database would hide them.

use std::fs::Metadata;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::Result;

use super::stamp::{self, Verdict};
use super::{Database, Found, Project};
use crate::exit::StickyError;
use crate::state::{DB_FILE, STATE_DIR, State};

/// The files sticky keeps next to its database (`SQLite`'s WAL and shared memory, the stamp, the
/// turn locks, the vault of the agents' session files): a link among them would send writes
/// elsewhere just as well, and a linked vault would restore files sticky never copied. Each must
/// be the user's and closed to others, in `.sticky/` as under `STICKY_DB` (issue 23: a vault
/// another user made beside a database in a shared directory fed the agent their transcript,
/// and removing a lock there let two turns run one session). `SQLite` writes `-journal` only
/// while it switches a new database to WAL, through whatever link is there.
const COMPANIONS: &[&str] = &["-wal", "-shm", "-journal", ".stamp", ".locks", ".vault"];

/// The stamp's suffix (see `stamp::path`).
const STAMP: &str = ".stamp";

/// The companions opened through `confined`, which follows no link at all: a link there is
/// refused at once, named, whatever it leads to.
const CONFINED: &[&str] = &[".locks", ".vault"];

/// Refuses a project whose `.sticky/` or database is not safely the user's own, or whose
/// database the user did not make (see `stamp`).
pub(super) fn check(project: &Project) -> Result<Database> {
    check_owned(project)?;
    check_made_here(project)
}

/// Refuses a project whose `.sticky/` or database is not safely the user's own: another
/// user's, writable by others, or a link out of the project.
pub(super) fn check_owned(project: &Project) -> Result<()> {
    let state = project.dir.join(STATE_DIR);
    // The `.sticky/` that chose the project directory is checked even under `STICKY_DB`: it
    // decides where the agent runs.
    if project.found == Found::StickyDir || !project.db_overridden {
        check_state_dir(&project.dir, &state)?;
    }
    check_database_kind(project)?;
    if project.db_overridden {
        return check_chosen(&project.state.db);
    }
    check_project_dir(&project.dir)?;
    let db = state.join(DB_FILE);
    check_file(&project.dir, &db)?;
    for suffix in COMPANIONS {
        let path = companion(&db, suffix);
        if *suffix == STAMP {
            check_stamp(&path)?;
            continue;
        }
        if CONFINED.contains(suffix) {
            refuse_link(&path)?;
        }
        check_file(&project.dir, &path)?;
    }
    Ok(())
}

/// Checks the stamp's owner and mode. A stamp that is a link is left to `stamp`, which never
/// follows it and calls it no stamp of sticky's: `sticky trust` replaces it.
fn check_stamp(path: &Path) -> Result<()> {
    match path.symlink_metadata() {
        Ok(meta) if !meta.file_type().is_symlink() => check_owner(path, &meta),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(crate::store::io_error(path, "look at", &e)),
    }
}

/// `<db><suffix>`: a file sticky keeps beside the database `db`.
fn companion(db: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// The database `db` and each file sticky keeps beside it ([`COMPANIONS`]).
fn with_companions(db: &Path) -> impl Iterator<Item = std::path::PathBuf> + '_ {
    std::iter::once(db.to_owned()).chain(COMPANIONS.iter().map(|suffix| companion(db, suffix)))
}

/// Refuses the state `STICKY_DB` names when others could choose what it holds: the user named
/// the database (a link there is theirs, followed), but not what others may put beside it. Its
/// directory must not be open to every user without the sticky bit (they could swap the
/// database itself), nor another user's; the database and every companion must be the user's,
/// closed to others, and no companion a link (the user named the database, not a link beside
/// it). A few `lstat`s a turn.
fn check_chosen(db: &Path) -> Result<()> {
    check_chosen_dir(db)?;
    match std::fs::metadata(db) {
        Ok(meta) => check_owner(db, &meta)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(crate::store::io_error(db, "look at", &e)),
    }
    for suffix in COMPANIONS {
        let path = companion(db, suffix);
        if *suffix == STAMP {
            check_stamp(&path)?;
            continue;
        }
        match path.symlink_metadata() {
            Ok(meta) if meta.file_type().is_symlink() => return Err(linked_companion(&path)),
            Ok(meta) => check_owner(&path, &meta)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(crate::store::io_error(&path, "look at", &e)),
        }
    }
    Ok(())
}

/// Refuses the directory of a `STICKY_DB` (or, while it does not exist, the nearest one above
/// it, where sticky will create it) that every user may write without the sticky bit, or that
/// another user (not root) owns: either could rename the database and the files beside it, and
/// put their own in their place.
fn check_chosen_dir(db: &Path) -> Result<()> {
    let mut meta = None;
    let mut dir = db.parent().unwrap_or(Path::new("/"));
    for ancestor in dir.ancestors() {
        match std::fs::metadata(ancestor) {
            Ok(found) => {
                (dir, meta) = (ancestor, Some(found));
                break;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(crate::store::io_error(ancestor, "look at", &e)),
        }
    }
    let Some(meta) = meta else {
        return Ok(());
    };
    let Some(why) = shared_dir(&meta) else {
        return Ok(());
    };
    Err(refuse(
        dir,
        format!(
            "STICKY_DB ({}) keeps sticky's state in it, but {why}, so another could swap the \
             database and the files beside it for their own; set STICKY_DB to a file in a \
             directory of your own ({}), or unset it to keep the state in the project's .sticky/",
            db.display(),
            own_place()
        ),
    ))
}

/// Why others could rename or replace what a directory holds: another user owns it (root
/// aside, who owns `/` and `/etc`), or every user may write it and it has no sticky bit. `None`
/// for a directory whose entries only the user (and root) can change. The one rule for the
/// directory of a `STICKY_DB` and of the configuration file (`crate::config`).
pub(crate) fn shared_dir(meta: &Metadata) -> Option<String> {
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me && meta.uid() != 0 {
        Some(format!(
            "it is owned by another user (uid {}, you are uid {me})",
            meta.uid()
        ))
    } else {
        open_to_all(meta).map(|mode| {
            format!("every user may write it (mode {mode:04o}) and it has no sticky bit")
        })
    }
}

/// [`shared_dir`], and also a directory its group may write without the sticky bit: the rule for
/// the directories that hold the configuration and a relative `bin` of it (`crate::config`),
/// which are closed to the group as the configuration file is, since whoever renames what they
/// hold chooses the programs sticky runs (review 19, L3).
pub(crate) fn shared_dir_or_group(meta: &Metadata) -> Option<String> {
    shared_dir(meta).or_else(|| {
        let mode = meta.mode() & 0o7777;
        (mode & 0o020 != 0 && mode & 0o1000 == 0).then(|| {
            format!("others in its group may write it (mode {mode:04o}) and it has no sticky bit")
        })
    })
}

/// Why others could change the file `meta` describes: another user owns it (root too, unless
/// `root_ok`), or its group or every user may write it. `None` when it is the user's alone. The
/// one rule for the files of sticky's state (root owns none of them: [`check_owner`]) and for
/// the configuration file (`crate::config`, where a file root installed is fine).
pub(crate) fn shared_file(meta: &Metadata, root_ok: bool) -> Option<Shared> {
    let me = nix::unistd::geteuid().as_raw();
    let mode = meta.mode() & 0o777;
    if meta.uid() != me && !(root_ok && meta.uid() == 0) {
        Some(Shared::Owner {
            uid: meta.uid(),
            me,
        })
    } else if mode & 0o022 != 0 {
        Some(Shared::Writable { mode })
    } else {
        None
    }
}

/// What [`shared_file`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shared {
    /// Another user owns it.
    Owner {
        /// Its owner.
        uid: u32,
        /// The user.
        me: u32,
    },
    /// Others may write it.
    Writable {
        /// Its permission bits.
        mode: u32,
    },
}

/// Where sticky suggests keeping a database of the user's own: under `$XDG_STATE_HOME` (or
/// `~/.local/state`), never a shared directory such as `/tmp`, where others may plant the
/// files that go beside it.
pub(super) fn own_place() -> String {
    match crate::settings::env::state_home() {
        Some(dir) => format!(
            "STICKY_DB={}",
            crate::msg::shell_path(&dir.join("sticky").join(DB_FILE))
        ),
        None => "STICKY_DB=~/.local/state/sticky/sticky.db".to_owned(),
    }
}

/// Refuses a companion sticky opens through `confined` (see [`CONFINED`]) that is a link.
fn refuse_link(path: &Path) -> Result<()> {
    match path.symlink_metadata() {
        Ok(meta) if meta.file_type().is_symlink() => Err(linked_companion(path)),
        _ => Ok(()),
    }
}

/// The refusal of a companion of the database that is a symbolic link: sticky follows no link
/// beside its database, so the way out is removing the link, not another path.
fn linked_companion(path: &Path) -> anyhow::Error {
    let target = std::fs::read_link(path).unwrap_or_default();
    refuse(
        path,
        format!(
            "is a symbolic link to {}, and sticky follows no link among the files beside its \
             database (it would read or write what the link leads to); remove the link (rm {}) \
             and sticky makes its own there, or move what it leads to in its place",
            target.display(),
            crate::msg::shell_path(path)
        ),
    )
}

/// Refuses a database the user did not make, and a missing one whose conversations are still
/// beside it.
fn check_made_here(project: &Project) -> Result<Database> {
    let state = &project.state;
    let verdict = stamp::verdict(state)?;
    let way_out = || way_out(project);
    if verdict != Verdict::NoDatabase {
        check_not_emptied(state, verdict == Verdict::Mine)?;
    }
    // A state sticky would send to `sticky trust` that git tracks came with the repository,
    // which `trust` refuses: the refusal names untracking first (review 23, L3).
    let to_trust = matches!(
        verdict,
        Verdict::Copied | Verdict::Stripped | Verdict::Foreign | Verdict::NoKey
    );
    if to_trust {
        check_not_tracked(project)?;
    }
    match verdict {
        Verdict::Mine => Ok(Database::Stamped),
        Verdict::NoDatabase => check_not_orphaned(state).map(|()| Database::Missing),
        Verdict::Unstamped => check_untracked(project).map(|()| Database::Unstamped),
        Verdict::Copied => Err(copied(project, "")),
        Verdict::Stripped => Err(copied(
            project,
            " without its stamp: its schema is one only a sticky that stamps its databases \
             writes, so it is no database older than stamps, and its original resumes the same \
             agent sessions",
        )),
        Verdict::Foreign => Err(refuse(
            &state.db,
            format!(
                "it was not made by you: it has no valid stamp from your sticky key ({}), so \
                 it comes from another user, another HOME or a repository (or was stamped \
                 with a key of yours since deleted, or with the key of another data directory: \
                 a shell whose XDG_DATA_HOME differs from this one's: trusted here, it is \
                 refused there in turn, so give both shells one XDG_DATA_HOME), and would choose \
                 the conversation sticky continues and the agent it runs; if you trust it (a \
                 copy of your own, a CI cache you restored), run `sticky trust`; {}",
                stamp::key_path()?.display(),
                way_out()
            ),
        )),
        Verdict::Linked(names) => Err(linked(project, names)),
        Verdict::NoKey => Err(refuse(
            &state.db,
            format!(
                "it was not made by you: it has a stamp, but you have no sticky key ({}) to \
                 have made it, so it comes from another user, another HOME or a repository, \
                 unless you deleted your key (or HOME or XDG_DATA_HOME changed); if this state \
                 is yours, run `sticky trust` (it makes a new key, and each of your projects \
                 then needs `sticky trust` once); {}",
                stamp::key_path()?.display(),
                way_out()
            ),
        )),
    }
}

/// The refusal of a copy of a database sticky made for the user; `how` says more of it (a copy
/// of the file alone, its stamp left behind).
fn copied(project: &Project, how: &str) -> anyhow::Error {
    refuse(
        &project.state.db,
        format!(
            "it is a copy of a database sticky made for you, not the file it made (copied, \
             restored or cloned; a project moved to another file system is copied too){how}; if \
             you mean to continue its conversations here, run `sticky trust`, then, if the \
             project moved here, `sticky relocate`; {}",
            way_out(project)
        ),
    )
}

/// The refusal of a database that is one file under `names` names (hard links), which `sticky
/// trust` cannot lift: a copy of its own can be trusted.
pub(super) fn linked(project: &Project, names: u64) -> anyhow::Error {
    let copy = if project.db_overridden {
        let db = crate::msg::shell_path(&project.state.db);
        format!("cp -a {db} {db}.own && mv {db}.own {db}")
    } else {
        format!(
            "cd {} && cp -a .sticky .sticky.own && rm -r .sticky && mv .sticky.own .sticky",
            crate::msg::shell_path(&project.dir)
        )
    };
    refuse(
        &project.state.db,
        format!(
            "it is one file with {names} names (hard links, as `cp -al` or `ln` make), so \
             another project shares it, and a turn here would change that project's \
             conversations too; give this project a copy of its own ({copy}), then run `sticky \
             trust`; or remove the other names"
        ),
    )
}

/// What to do with a state the user does not want.
pub(super) fn way_out(project: &Project) -> String {
    let state = if project.db_overridden {
        project.state.db.clone()
    } else {
        project.dir.join(STATE_DIR)
    };
    format!(
        "else remove it (rm -r {}), or set STICKY_DB to keep your state elsewhere",
        crate::msg::shell_path(&state)
    )
}

/// Refuses to adopt (`sticky trust`) a state git tracks: it came with the repository, and its
/// vault would put back transcripts whoever committed it wrote, for the agent to read as the
/// user's own conversation. A user who committed their own state by mistake untracks it first,
/// which says the files are theirs. Whether git can be asked or not is the user's choice here:
/// they asked to adopt it.
pub(super) fn check_not_committed(project: &Project) -> Result<()> {
    match stamp::tracked_by_git(&project.state) {
        Ok(false) => return Ok(()),
        Ok(true) => {}
        // git would not say (a checkout of another account git refuses): adopted, a state
        // that came with the repository would feed its committer's transcripts to the agent
        // (review 28, H3).
        Err(cannot) => return Err(cannot_tell(project, &cannot)),
    }
    Err(refuse(
        &project.state.db,
        format!(
            "`sticky trust` does not adopt it: git tracks it, so it came with the repository, \
             and whoever committed it chose the conversation sticky would continue, the agent it \
             runs and the transcripts its vault puts back for the agent to read; if you \
             committed it yourself, untrack it (git rm -r --cached {}), then run `sticky trust`; \
             {}",
            untrack_path(project),
            way_out(project)
        ),
    ))
}

/// Refuses a state a turn would send to `sticky trust` when git tracks it (it came with the
/// repository: untracking comes first) or cannot tell whether it does.
fn check_not_tracked(project: &Project) -> Result<()> {
    match stamp::tracked_by_git(&project.state) {
        Ok(false) => Ok(()),
        Ok(true) => Err(refuse(
            &project.state.db,
            format!("{}; {}", committed(project), way_out(project)),
        )),
        Err(cannot) => Err(cannot_tell(project, &cannot)),
    }
}

/// The refusal to adopt, or use, a state of which git cannot tell whether it tracks it.
fn cannot_tell(project: &Project, cannot: &str) -> anyhow::Error {
    refuse(
        &project.state.db,
        format!(
            "whether git tracks it cannot be told ({}), and a state that came with the \
             repository would choose the conversation sticky continues and the transcripts its \
             vault puts back for the agent to read; make git answer (for a checkout of another \
             account, `git config --global --add safe.directory DIR` once you trust it), then \
             run `sticky trust`; {}",
            crate::msg::escape(cannot),
            way_out(project)
        ),
    )
}

/// What `git rm -r --cached` untracks: the project's `.sticky/`, or the `STICKY_DB` database
/// and the files beside it (a glob quoted for git to match, since the shell would also name
/// the untracked ones, which git refuses).
fn untrack_path(project: &Project) -> String {
    if project.db_overridden {
        crate::msg::shell_word(&format!("{}*", project.state.db.display())).into_owned()
    } else {
        crate::msg::shell_path(&project.dir.join(STATE_DIR))
    }
}

/// Refuses to create a database inside a git worktree where git would not ignore it or the
/// files beside it: the conversation (the database, the vault's copies of the agent's
/// transcripts) would be left for `git add`, and one commit would publish it. `.sticky/` ignores
/// itself, unless it came with the repository with a `.gitignore` of the repository's that
/// ignores nothing (see [`tracked_state_dir`]); a directory the user named (`STICKY_DB`) is
/// theirs, holding their own files, so sticky writes no `.gitignore` into it (one would itself
/// be a new file for git, and could hide theirs): nothing is created yet, and the refusal names
/// the one line that ignores sticky's files. Asks git once, when the database is about to be
/// created, never on a turn that finds it.
pub(super) fn check_ignored(project: &Project) -> Result<()> {
    let db = &project.state.db;
    let (Some(parent), Some(name)) = (db.parent(), db.file_name()) else {
        return Ok(());
    };
    let Some(existing) = parent.ancestors().find(|dir| dir.is_dir()) else {
        return Ok(());
    };
    let pattern = crate::msg::shell_word(&format!("{}*", name.to_string_lossy())).into_owned();
    // git is asked of the paths the links on the way lead to (git will not look past a link
    // inside its worktree), from there: a link the repository holds decides nothing.
    let Ok(real) = existing.canonicalize() else {
        return Ok(());
    };
    let real_db = real.join(db.strip_prefix(existing).unwrap_or(Path::new(name)));
    check_not_led_out(project, &real, &real_db)?;
    let existing = real.as_path();
    let db = &real_db;
    let paths = [
        db.clone(),
        companion(db, "-wal"),
        companion(db, ".stamp"),
        companion(db, ".locks").join("l"),
        companion(db, ".vault").join("v"),
    ];
    let ignored = match ignored_count(existing, &paths) {
        Ignored::Count(count) => count,
        // No git, or no worktree here: nothing would be committed by it.
        Ignored::NoWorktree => return Ok(()),
        // Inside a worktree, git would not say (a path through a link the repository holds,
        // a checkout of another account): the state is not made where git may commit it
        // (review 28, H1 and H2).
        Ignored::Unknown(why) => return Err(unknown_to_git(db, &why)),
    };
    if ignored == paths.len() {
        return Ok(());
    }
    if !project.db_overridden {
        return Err(tracked_state_dir(parent));
    }
    Err(StickyError::Usage(format!(
        "STICKY_DB names {}, inside a git worktree, and git does not ignore it and the files \
         sticky keeps beside it (its vault holds the agent's transcripts), so the conversation \
         would be left for `git add`; ignore them (mkdir -p {dir} && echo {pattern} >> \
         {ignore}), or keep the state outside the worktree ({}), or unset STICKY_DB to \
         keep it in the project's .sticky/, which git ignores",
        db.display(),
        own_place(),
        dir = crate::msg::shell_path(parent),
        ignore = crate::msg::shell_path(&parent.join(".gitignore")),
    ))
    .into())
}

/// Refuses a `STICKY_DB` inside the project that a link on the way (`real` is where the
/// database's directory really is, `real_db` the database there) leads out of it: the
/// repository, which may hold that link, would choose where the state is written (review 28,
/// H1).
fn check_not_led_out(project: &Project, real: &Path, real_db: &Path) -> Result<()> {
    let db = &project.state.db;
    if !project.db_overridden || !db.starts_with(&project.dir) {
        return Ok(());
    }
    let root = project
        .dir
        .canonicalize()
        .unwrap_or_else(|_| project.dir.clone());
    if real.starts_with(&root) {
        return Ok(());
    }
    Err(StickyError::Usage(format!(
        "STICKY_DB names {}, inside the project, but a link on the way leads to {}, outside it; \
         nothing was created: name the place itself (STICKY_DB={}), or keep the state elsewhere \
         ({})",
        db.display(),
        real.display(),
        crate::msg::shell_path(real_db),
        own_place()
    ))
    .into())
}

/// The refusal to make a state at `db` inside a git worktree when git would not say whether it
/// ignores it (`why`, its words): a path through a link the repository holds, a checkout of
/// another account (review 28, H1 and H2).
fn unknown_to_git(db: &Path, why: &str) -> anyhow::Error {
    StickyError::Usage(format!(
        "{} is inside a git worktree, and git cannot tell whether it ignores it ({why}), so the \
         conversation might be left for `git add`; nothing was created: keep the state outside \
         the worktree ({}), or make the directories on the way to it real ones of your own",
        db.display(),
        own_place()
    ))
    .into()
}

/// git run in `dir` on the repository there, whatever the environment names, without a file
/// system monitor (a repository's hook), and found through absolute PATH entries only (it is
/// looked up in `dir`, where a relative entry would find the repository's own: review 22, H1).
fn git_in(dir: &Path) -> std::process::Command {
    let mut command = std::process::Command::new("git");
    command
        .args(["-c", "core.fsmonitor=false"])
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    crate::search_lists::apply(&mut command);
    command
}

/// What git says of paths a state would be made at ([`ignored_count`]).
enum Ignored {
    /// How many of them it ignores.
    Count(usize),
    /// No git, or no worktree there: nothing would be committed.
    NoWorktree,
    /// In a worktree, git would not say: its words.
    Unknown(String),
}

/// How many of `paths` git ignores, asked in `dir`.
fn ignored_count(dir: &Path, paths: &[std::path::PathBuf]) -> Ignored {
    use std::io::Write as _;
    let Ok(mut child) = git_in(dir)
        .args(["check-ignore", "-z", "--stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    else {
        return Ignored::NoWorktree;
    };
    if let Some(mut stdin) = child.stdin.take() {
        let mut list = Vec::new();
        for path in paths {
            list.extend_from_slice(path.as_os_str().as_encoded_bytes());
            list.push(0);
        }
        let _ = stdin.write_all(&list);
    }
    let Ok(output) = child.wait_with_output() else {
        return Ignored::NoWorktree;
    };
    // 0: some are ignored, 1: none; anything else: outside any worktree nothing to commit,
    // inside one git refused to say.
    if !matches!(output.status.code(), Some(0 | 1)) {
        let error = String::from_utf8_lossy(&output.stderr);
        if error.contains("not a git repository") || !super::stamp::in_worktree(dir) {
            return Ignored::NoWorktree;
        }
        let said = error.lines().next().unwrap_or("no reason given").trim();
        return Ignored::Unknown(crate::msg::escape(said).into_owned());
    }
    Ignored::Count(
        output
            .stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .count(),
    )
}

/// The refusal of a project's `.sticky/` git does not ignore: it came with the repository (git
/// tracks files in it, such as a `.gitignore` that ignores nothing), and sticky writes no
/// `.gitignore` over the repository's. The way out ignores it in this clone only (git's
/// `info/exclude`, which a tracked file below cannot undo: git never looks inside an excluded
/// directory), untracking first any of sticky's own files the repository holds (no exclusion
/// applies to a tracked file), or keeps the state outside the worktree.
fn tracked_state_dir(state_dir: &Path) -> anyhow::Error {
    let git = |args: &[&str]| {
        git_in(state_dir)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|output| output.status.success())
            .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
    };
    let listed = git(&["ls-files", "-z", "--full-name", "--", "."]).unwrap_or_default();
    let tracked: Vec<&str> = listed.split('\0').filter(|name| !name.is_empty()).collect();
    let came = came_with_repository(&tracked);
    let untrack = untrack_first(state_dir, &tracked);
    // `--show-prefix` is the state directory's path from the worktree's top, `/`-terminated.
    let exclude = git(&[
        "rev-parse",
        "--show-prefix",
        "--path-format=absolute",
        "--git-path",
        "info/exclude",
    ])
    .and_then(|out| {
        let mut lines = out.lines();
        let prefix = lines.next()?;
        let file = Path::new(lines.next()?);
        let dir = file.parent()?.display().to_string();
        Some(format!(
            "{untrack}mkdir -p {} && echo {} >> {}",
            crate::msg::shell_word(&dir),
            crate::msg::shell_word(&format!("/{prefix}")),
            crate::msg::shell_path(file)
        ))
    });
    let ignore = exclude.map_or_else(String::new, |line| {
        format!("ignore it in this clone only ({line}), or ")
    });
    StickyError::Usage(format!(
        "{} is inside a git worktree and git does not ignore the files sticky would keep in \
         it{came}, so the conversation (the database, and the vault's copies of the agent's \
         transcripts) would be left for `git add`; {ignore}keep the state outside the worktree \
         ({})",
        state_dir.display(),
        own_place(),
    ))
    .into()
}

/// The command that untracks sticky's own files among those git tracks in `state_dir`
/// (`tracked`), followed by `&& `: no exclusion applies to a file git tracks. Empty when none is.
fn untrack_first(state_dir: &Path, tracked: &[&str]) -> String {
    let own = tracked.iter().any(|name| {
        Path::new(name)
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with(DB_FILE))
    });
    if !own {
        return String::new();
    }
    let files = state_dir.join(format!("{DB_FILE}*"));
    format!(
        "git rm -r -q --cached -- {} && ",
        crate::msg::shell_path(&files)
    )
}

/// What the refusal says of the files git tracks in the state directory (`tracked`).
fn came_with_repository(tracked: &[&str]) -> String {
    match tracked {
        [] => String::new(),
        names => {
            let shown = names.iter().take(3).copied().collect::<Vec<_>>().join(", ");
            let more = match names.len() {
                0..=3 => String::new(),
                n => format!(" and {} more", n - 3),
            };
            format!(
                " (git tracks {shown}{more}: it came with the repository, and its .gitignore, \
                 if any, is the repository's, which sticky does not overwrite)"
            )
        }
    }
}

/// Refuses a database without a stamp that git tracks (it came with the repository) or may
/// track but cannot be asked about. Asks git only here, on this rare path.
fn check_untracked(project: &Project) -> Result<()> {
    let state = &project.state;
    let tracked = stamp::tracked_by_git(state);
    let why = match &tracked {
        Ok(false) => return Ok(()),
        Ok(true) => committed(project),
        Err(cannot) => format!(
            "it has no stamp saying you made it, and whether git tracks it cannot be told \
             ({cannot}); if you made it, run `sticky trust`"
        ),
    };
    Err(refuse(&state.db, format!("{why}; {}", way_out(project))))
}

/// Why a state git tracks is refused, and the way to adopt it.
fn committed(project: &Project) -> String {
    format!(
        "git tracks it (it was committed, so it came with the repository, and whoever committed \
         it would choose the conversation sticky continues and the agent it runs); if you made \
         it and trust it, untrack it (git rm -r --cached {}), then run `sticky trust`",
        untrack_path(project)
    )
}

/// Refuses to start afresh where the database is missing but its vault still holds copies of
/// its sessions' files, or its stamp says sticky made it here: it was deleted or moved, and a
/// new database would silently start new conversations in its place. (A WAL left without its
/// database is no such sign: `SQLite` deletes it when it creates the file, so it cannot plant a
/// conversation either.)
fn check_not_orphaned(state: &State) -> Result<()> {
    let stamp = stamp::path(state);
    let sign = if has_copies(state) {
        format!(
            "its vault {} still holds its sessions' files",
            state.vault.display()
        )
    } else if stamp.symlink_metadata().is_ok() {
        format!(
            "its stamp {} says sticky made one here (the vault is off or empty)",
            stamp.display()
        )
    } else {
        return Ok(());
    };
    Err(StickyError::store(
        &state.db,
        format!(
            "refusing to start a fresh conversation: the database is missing, but {sign}, so it \
             was deleted or moved; put it back (from where you moved it, or a backup), or, to \
             start over, {}",
            start_over(state, false)
        ),
    )
    .into())
}

/// Refuses to start afresh on a database of zero bytes (or one) that sticky wrote before: `SQLite`
/// takes an empty file for an empty database, so a truncated one would silently begin new
/// conversations. Sticky wrote it when its stamp records it (`mine`: sticky stamps a database only
/// once its schema is written) or its vault holds copies of its sessions' files. A zero-byte file
/// with neither is one sticky created and stopped before stamping, or one another sticky is
/// creating right now: nothing is lost by starting there. A WAL beside it changes nothing: it never
/// holds a zero-byte database's pages (switching a fresh file to WAL writes its first page through
/// a rollback journal, before any WAL exists, and the file never shrinks below it again), and
/// `SQLite` deletes a WAL it finds beside an empty file. So the WAL sticky keeps between turns,
/// beside a truncated database, is only what it wrote since its last checkpoint. Costs a `stat` a
/// turn; more only for an empty file.
pub(super) fn check_not_emptied(state: &State, mine: bool) -> Result<()> {
    // One byte is empty too: `SQLite`'s unix VFS reports a one-byte file as zero bytes (the byte
    // it may write into a new file itself, `unixFileSize`), and `echo > sticky.db` leaves one.
    let Some(size) = std::fs::metadata(&state.db)
        .ok()
        .map(|meta| meta.len())
        .filter(|size| *size <= 1)
    else {
        return Ok(());
    };
    let sign = if has_copies(state) {
        format!(
            "its vault {} still holds its sessions' files",
            state.vault.display()
        )
    } else if mine {
        format!(
            "its stamp {} says sticky made it and wrote it",
            stamp::path(state).display()
        )
    } else {
        return Ok(());
    };
    Err(StickyError::store(
        &state.db,
        format!(
            "refusing to start a fresh conversation: the database is empty ({}), but \
             {sign}, so it was truncated or emptied; put it back from a backup, or, to start \
             over, {}",
            if size == 0 {
                "0 bytes"
            } else {
                "1 byte, which SQLite reads as an empty database"
            },
            start_over(state, true)
        ),
    )
    .into())
}

/// Whether the vault holds anything.
fn has_copies(state: &State) -> bool {
    std::fs::read_dir(&state.vault).is_ok_and(|mut dir| dir.next().is_some())
}

/// The command that starts a refused state over: removes what is there of the database (`db`:
/// the file itself too), its stamp and its vault, so that nothing left says a conversation was
/// lost.
fn start_over(state: &State, db: bool) -> String {
    let stamp = stamp::path(state);
    let mut files: Vec<String> = Vec::new();
    if db {
        files.push(crate::msg::shell_path(&state.db));
    }
    if stamp.symlink_metadata().is_ok() {
        files.push(crate::msg::shell_path(&stamp));
    }
    let mut steps = Vec::new();
    if state.vault.symlink_metadata().is_ok() {
        steps.push(format!(
            "remove the vault (rm -r {})",
            crate::msg::shell_path(&state.vault)
        ));
    }
    if !files.is_empty() {
        let what = if db { "the database" } else { "the stamp" };
        let what = if db && files.len() > 1 {
            "the database and its stamp"
        } else {
            what
        };
        steps.push(format!("remove {what} (rm -f {})", files.join(" ")));
    }
    steps.join(" and ")
}

/// Refuses a project directory every user may write without the sticky bit (mode 0777): any of
/// them could swap its `.sticky/` for one of their own between these checks and `SQLite`'s
/// opening the database, so no check of the files could hold. With the sticky bit (as `/tmp`
/// has) others cannot rename what is the user's.
fn check_project_dir(dir: &Path) -> Result<()> {
    let meta = std::fs::metadata(dir).map_err(|e| crate::store::io_error(dir, "look at", &e))?;
    let Some(mode) = open_to_all(&meta) else {
        return Ok(());
    };
    Err(refuse(
        dir,
        format!(
            "it is the project directory, and every user may write it (mode {mode:04o}), so \
             another could swap its .sticky/ for their own while sticky opens it; make it \
             closed to others (chmod o-w {}), or set STICKY_DB to keep the state elsewhere",
            crate::msg::shell_path(dir)
        ),
    ))
}

/// The mode of a directory every user may write and that has no sticky bit (with it, as `/tmp`
/// has, others cannot rename what is the user's); `None` for any other.
fn open_to_all(meta: &Metadata) -> Option<u32> {
    let mode = meta.mode() & 0o7777;
    (mode & 0o002 != 0 && mode & 0o1000 == 0).then_some(mode)
}

/// Checks `dir/.sticky`: absent is fine (it will be created), a directory or a link to one
/// inside `dir` must be the user's; anything else is refused.
fn check_state_dir(dir: &Path, state: &Path) -> Result<()> {
    let Some(meta) = entry(dir, state)? else {
        return Ok(());
    };
    if !meta.is_dir() {
        return Err(refuse(
            state,
            "is a file, not sticky's state directory; rename or remove it, run `sticky init` \
             elsewhere, or set STICKY_DB=/path/to/sticky.db to keep the state elsewhere",
        ));
    }
    check_owner(state, &meta)
}

/// Checks a file sticky opens inside `.sticky/`: a link must stay inside the project, and what
/// is there must be the user's and closed to others.
fn check_file(dir: &Path, path: &Path) -> Result<()> {
    match entry(dir, path)? {
        Some(meta) => check_owner(path, &meta),
        None => Ok(()),
    }
}

/// The metadata of what is at `path`, where a link must resolve to something inside `dir` and
/// is followed; `None` when nothing is there.
fn entry(dir: &Path, path: &Path) -> Result<Option<Metadata>> {
    let meta = match path.symlink_metadata() {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(crate::store::io_error(path, "look at", &e)),
    };
    if meta.file_type().is_symlink() {
        resolve_inside(dir, path).map(Some)
    } else {
        Ok(Some(meta))
    }
}

/// Follows the link at `path`, which must resolve to something inside `dir`.
fn resolve_inside(dir: &Path, path: &Path) -> Result<Metadata> {
    let target = std::fs::read_link(path)
        .map(|target| path.parent().unwrap_or(dir).join(target))
        .unwrap_or_default();
    let Ok(resolved) = path.canonicalize() else {
        return Err(refuse(
            path,
            format!(
                "is a symbolic link to {}, which does not exist (sticky would create its state \
                 there); replace the link with a directory, or set STICKY_DB to keep the state \
                 elsewhere on purpose",
                target.display()
            ),
        ));
    };
    if !resolved.starts_with(dir) {
        return Err(refuse(
            path,
            format!(
                "is a symbolic link to {}, outside the project {} (it would read and write \
                 another directory's state); remove the link, and set STICKY_DB={} if you mean \
                 to use that state",
                resolved.display(),
                dir.display(),
                crate::msg::shell_path(&if path.ends_with(STATE_DIR) {
                    resolved.join(DB_FILE)
                } else {
                    resolved.clone()
                })
            ),
        ));
    }
    std::fs::metadata(&resolved).map_err(|e| crate::store::io_error(path, "look at", &e))
}

/// Refuses what another user owns or may write.
fn check_owner(path: &Path, meta: &Metadata) -> Result<()> {
    match shared_file(meta, false) {
        None => Ok(()),
        Some(Shared::Owner { uid, me }) => Err(refuse(
            path,
            format!(
                "is owned by another user (uid {uid}, you are uid {me}), who could choose where \
                 sticky runs the agent and what it resumes; if it is yours, take it over \
                 (chown -R {me} {}), else remove it or set STICKY_DB to keep your state \
                 elsewhere",
                crate::msg::shell_path(path)
            ),
        )),
        Some(Shared::Writable { mode }) => Err(refuse(
            path,
            format!(
                "can be written by other users (mode {mode:04o}), who could choose where \
                 sticky runs the agent and what it resumes; make it yours alone \
                 (chmod go-w {}) or set STICKY_DB to keep your state elsewhere",
                crate::msg::shell_path(path)
            ),
        )),
    }
}

/// Refuses a database that is not a regular file, before anything opens it or creates a file
/// beside it: `SQLite` cannot open a directory (whose names the stamp check would take for hard
/// links), blocks on a FIFO, and writes its journal beside a device (`STICKY_DB=/dev/null` left a
/// `/dev/null-journal` any user may write). Under `STICKY_DB` the user named it, so it is a bad
/// setting (exit 2) with what to name instead; inside `.sticky/` sticky never makes one, so
/// something else put it there (exit 71, as any state sticky refuses).
fn check_database_kind(project: &Project) -> Result<()> {
    let db = &project.state.db;
    let kind = match std::fs::metadata(db) {
        Ok(meta) if meta.is_file() => return Ok(()),
        Ok(meta) => meta.file_type(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return check_not_dangling(project),
        Err(e) => return Err(crate::store::io_error(db, "look at", &e)),
    };
    if !project.db_overridden {
        return Err(refuse(
            db,
            format!(
                "it is {}, not a regular file as sticky's databases are, so there is nothing to \
                 trust; remove it ({} {}) and the next turn starts a new database, or set \
                 STICKY_DB to keep the state elsewhere",
                crate::confined::describe(kind),
                if kind.is_dir() { "rm -r" } else { "rm" },
                crate::msg::shell_path(db)
            ),
        ));
    }
    let why = wrong_kind_named(db, kind);
    Err(StickyError::Usage(format!(
        "STICKY_DB names {}, {why}, or unset STICKY_DB to keep the state in the project's \
         .sticky/",
        db.display()
    ))
    .into())
}

/// Why `STICKY_DB` cannot name `db`, of `kind` (not a regular file), and what to name instead.
fn wrong_kind_named(db: &Path, kind: std::fs::FileType) -> String {
    if kind.is_dir() {
        // A file in the directory only when it is the user's alone: in a shared one (`/tmp`)
        // others may plant the files that go beside the database.
        let own = std::fs::metadata(db).is_ok_and(|meta| {
            meta.uid() == nix::unistd::geteuid().as_raw() && meta.mode() & 0o022 == 0
        });
        if own {
            format!(
                "a directory, not a database file; name a file in it (STICKY_DB={}, which \
                 sticky creates)",
                crate::msg::shell_path(&db.join(DB_FILE))
            )
        } else {
            format!(
                "a directory, and one that is not yours alone; name a file in a directory of \
                 your own ({}, which sticky creates)",
                own_place()
            )
        }
    } else {
        use std::os::unix::fs::FileTypeExt;
        let problem = if kind.is_fifo() {
            " (sticky would wait on it forever)"
        } else if kind.is_block_device() || kind.is_char_device() {
            " (SQLite would write its journal beside it)"
        } else {
            ""
        };
        format!(
            "{}, not a database file{problem}; name a regular file \
             (STICKY_DB=/path/to/sticky.db, which sticky creates)",
            crate::confined::describe(kind)
        )
    }
}

/// Refuses a `STICKY_DB` that is a symbolic link to nothing: `SQLite` would fail to open it
/// with a message about the directory. (A link in `.sticky/` is checked with the others, see
/// `entry`.)
fn check_not_dangling(project: &Project) -> Result<()> {
    let db = &project.state.db;
    let dangling = project.db_overridden
        && db
            .symlink_metadata()
            .is_ok_and(|meta| meta.file_type().is_symlink());
    if !dangling {
        return Ok(());
    }
    let target = std::fs::read_link(db).unwrap_or_default();
    Err(StickyError::Usage(format!(
        "STICKY_DB names {}, a symbolic link to {}, which does not exist; point STICKY_DB at \
         the file itself (sticky creates it), or unset STICKY_DB to keep the state in the \
         project's .sticky/",
        db.display(),
        target.display()
    ))
    .into())
}

pub(super) fn refuse(path: &Path, why: impl std::fmt::Display) -> anyhow::Error {
    StickyError::store(path, format!("refusing to use it: {why}")).into()
}

/// What keeps a turn from a state of the user's own that [`check`] refuses for now, and that
/// the user fixes where it is (review 9): a copy's original after `chmod -R g+w`, or after the
/// user's key was lost, is still the original.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    /// Others may write it: every user the project directory (`dir`, without the sticky bit:
    /// `chmod o-w`), other users `paths` (the `.sticky/`, the database, the files beside it:
    /// `chmod go-w` makes them the user's alone).
    Writable {
        /// The project directory, when every user may write it.
        dir: Option<std::path::PathBuf>,
        /// What else other users may write.
        paths: Vec<std::path::PathBuf>,
    },
    /// Another account owns it (a backup restored with `sudo cp -r`, or by another user), yet
    /// it is a regular state the user can read: `chown -R me paths` takes it over, and
    /// `adopt` says whether `sticky trust` is needed after (its stamp is not this key's).
    Owned {
        /// The user's uid.
        me: u32,
        /// What another account owns: the `.sticky/` (or, under `STICKY_DB`, the database and
        /// the files beside it).
        paths: Vec<std::path::PathBuf>,
        /// Whether the stamp does not say the user made it, so `sticky trust` follows.
        adopt: bool,
    },
    /// The database is not stamped as the user's by this HOME's key (a copy, a restored backup,
    /// or made with a key since lost): `sticky trust` there adopts it.
    Unstamped,
    /// Something else, in the words of the turn's refusal, which names the way out.
    Other(String),
}

/// Why [`check`] refuses `project`'s state when it is the user's own (see [`is_mine`]), or a
/// regular, readable one another account owns ([`owned_by_another`]), as a [`Hold`]; `None`
/// when it takes the state, or the state cannot be the user's: no fix where it is makes it
/// theirs.
pub(super) fn held(project: &Project) -> Option<Hold> {
    if !is_mine(project) {
        return owned_by_another(project);
    }
    if let Err(error) = check_owned(project) {
        return Some(open_to_others(project).unwrap_or_else(|| Hold::Other(error.to_string())));
    }
    let error = check_made_here(project).err()?;
    let unstamped = matches!(
        stamp::verdict(&project.state),
        Ok(Verdict::Copied | Verdict::Stripped | Verdict::Foreign | Verdict::NoKey)
    );
    Some(
        if unstamped && check_not_emptied(&project.state, true).is_ok() {
            Hold::Unstamped
        } else {
            Hold::Other(error.to_string())
        },
    )
}

/// Whether `project`'s state is the user's own, whatever its mode and its stamp: the database a
/// regular file the user owns, and its `.sticky/` (when it holds it) a directory the user owns,
/// not a link out of the project.
fn is_mine(project: &Project) -> bool {
    let me = nix::unistd::geteuid().as_raw();
    is_state(project, |uid| uid == me)
}

/// Whether `project`'s state is one whose owners `owner` accepts, whatever its mode and its
/// stamp: the database a regular file, and its `.sticky/` (when it holds it) a directory, not a
/// link out of the project.
fn is_state(project: &Project, owner: impl Fn(u32) -> bool) -> bool {
    let db = &project.state.db;
    if project.db_overridden {
        return std::fs::metadata(db).is_ok_and(|meta| meta.is_file() && owner(meta.uid()));
    }
    let dir = &project.dir;
    matches!(entry(dir, &dir.join(STATE_DIR)), Ok(Some(meta)) if meta.is_dir() && owner(meta.uid()))
        && matches!(entry(dir, db), Ok(Some(meta)) if meta.is_file() && owner(meta.uid()))
}

/// The [`Hold`] of a state another account owns that is otherwise a regular one the user can
/// read (review 10: a backup restored by root), or one root owns that the user cannot read
/// ([`restored_by_root`], review 11): a turn there says "if it is yours, take it over", so it
/// may be the user's. `None` for any other state that is not the user's: no regular file, a
/// link out of the project, one of another ordinary account the user cannot read.
fn owned_by_another(project: &Project) -> Option<Hold> {
    let me = nix::unistd::geteuid().as_raw();
    if let Some(hold) = restored_by_root(project, me) {
        return Some(hold);
    }
    if !is_state(project, |_| true) || std::fs::File::open(&project.state.db).is_err() {
        return None;
    }
    let foreign = |path: &std::path::PathBuf| {
        std::fs::symlink_metadata(path).is_ok_and(|meta| meta.uid() != me)
    };
    let db = &project.state.db;
    let files = with_companions(db);
    let mut paths = Vec::new();
    if project.found == Found::StickyDir || !project.db_overridden {
        paths.push(project.dir.join(STATE_DIR));
    }
    if project.db_overridden {
        paths.extend(files);
        paths.retain(foreign);
    } else if !paths
        .iter()
        .cloned()
        .chain(files)
        .any(|path| foreign(&path))
    {
        // `chown -R` of the `.sticky/` takes over whatever in it another account owns.
        paths.clear();
    }
    let adopt = !matches!(stamp::verdict(&project.state), Ok(Verdict::Mine));
    (!paths.is_empty()).then_some(Hold::Owned { me, paths, adopt })
}

/// The [`Hold`] of a state root owns that the user (`me`, not root) cannot look into (review
/// 11): a backup an administrator restored with `sudo cp -r BACKUP/.sticky p/` keeps sticky's
/// modes (0700, 0600), so the `.sticky/` cannot be entered or the database cannot be read. A
/// turn there says "if it is yours, take it over", so it may be the user's: `chown -R` takes it
/// over, then `sticky trust` adopts it. So may a database alone root restored into the user's
/// own `.sticky/` (`sudo cp BACKUP/sticky.db p/.sticky/`, review 12). `None` for any other
/// state; an unreadable one of another ordinary account is none of the user's (review 8:
/// another user's FIFO).
fn restored_by_root(project: &Project, me: u32) -> Option<Hold> {
    use std::io::ErrorKind::PermissionDenied;
    let db = &project.state.db;
    let unreadable = |path: &std::path::Path| std::fs::File::open(path).is_err();
    let of_root =
        |path: &std::path::Path| std::fs::symlink_metadata(path).is_ok_and(|meta| meta.uid() == 0);
    if me == 0 {
        return None;
    }
    let state = project.dir.join(STATE_DIR);
    let dir_of_root = !project.db_overridden
        && std::fs::symlink_metadata(&state).is_ok_and(|meta| meta.is_dir() && meta.uid() == 0);
    let paths = if dir_of_root {
        match std::fs::symlink_metadata(db) {
            // The `.sticky/` cannot be entered.
            Err(e) if e.kind() == PermissionDenied => {}
            Ok(meta) if meta.is_file() && meta.uid() == 0 && unreadable(db) => {}
            _ => return None,
        }
        vec![state]
    } else {
        // The database (beside `STICKY_DB`, or in a `.sticky/` of the user's) is root's.
        let meta = std::fs::symlink_metadata(db).ok()?;
        if !meta.is_file() || meta.uid() != 0 || !unreadable(db) {
            return None;
        }
        with_companions(db).filter(|path| of_root(path)).collect()
    };
    Some(Hold::Owned {
        me,
        paths,
        adopt: true,
    })
}

/// The [`Hold`] of a state of the user's that others may write ([`check_owned`]'s modes), if it
/// is one.
fn open_to_others(project: &Project) -> Option<Hold> {
    let dir = &project.dir;
    let open = !project.db_overridden
        && std::fs::metadata(dir).is_ok_and(|meta| open_to_all(&meta).is_some());
    let db = &project.state.db;
    let mut paths = Vec::new();
    if project.found == Found::StickyDir || !project.db_overridden {
        paths.push(dir.join(STATE_DIR));
    }
    paths.extend(with_companions(db));
    paths.retain(|path| {
        std::fs::metadata(path)
            .is_ok_and(|meta| matches!(shared_file(&meta, false), Some(Shared::Writable { .. })))
    });
    let dir = open.then(|| dir.clone());
    (dir.is_some() || !paths.is_empty()).then_some(Hold::Writable { dir, paths })
}
