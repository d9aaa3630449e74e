//! Where a project's state lives: which directory is the project, and which file is its database.
//!
//! The rule (DESIGN.md, "Where state lives"): from the current directory, walk up to the nearest
//! directory holding a `.sticky/` directory, but not past the root of the git worktree (the
//! directory holding `.git`, which is a file in linked worktrees and submodules); without one,
//! the worktree root is the project; outside git, the current directory is. The boundary keeps a
//! repository nested in another, or checked out under a home directory with a `.sticky/`, from
//! sharing a stranger's conversations. `STICKY_DB` moves the database, never the project
//! directory, because agents key their sessions by the directory they run in.

use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::store::{self, STATE_DIR, create_state_dir};

/// The database file inside [`STATE_DIR`].
const DB_FILE: &str = "sticky.db";

/// A located project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The project directory (canonical): where the agent runs for new sessions.
    pub dir: PathBuf,
    /// The database file: `<dir>/.sticky/sticky.db`, or the `STICKY_DB` path.
    pub db: PathBuf,
    /// How `dir` was chosen.
    pub found: Found,
    /// Whether `STICKY_DB` chose `db`.
    pub db_overridden: bool,
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
/// as unset; a relative one is taken relative to `cwd`, as everything else is under `-C`).
/// Creates nothing.
pub fn locate(cwd: &Path, sticky_db: Option<&Path>) -> Result<Project> {
    let cwd = canonical(cwd)?;
    let (dir, found) = project_dir(&cwd);
    Ok(project(dir, found, &cwd, sticky_db))
}

/// Makes `dir` a project of its own (`sticky init`): creates `dir/.sticky/` (mode 0700) with a
/// `.gitignore` containing `*`. An existing `.sticky/` is kept (and gets its `.gitignore` back
/// if it lost it); a `.sticky` that is not a directory is an error.
pub fn init(dir: &Path, sticky_db: Option<&Path>) -> Result<Project> {
    let dir = canonical(dir)?;
    let project = project(dir.clone(), Found::StickyDir, &dir, sticky_db);
    let state = dir.join(STATE_DIR);
    let created = create_state_dir(&state)
        .map_err(|e| store_io(&project, &format!("create {}", state.display()), &e))?;
    if !created {
        store::write_gitignore(&state).map_err(|e| {
            store_io(
                &project,
                &format!("write {}/.gitignore", state.display()),
                &e,
            )
        })?;
    }
    Ok(project)
}

/// The project directory of a canonical `cwd`, and how it was found.
fn project_dir(cwd: &Path) -> (PathBuf, Found) {
    for dir in cwd.ancestors() {
        if is_state_dir(&dir.join(STATE_DIR)) {
            return (dir.to_owned(), Found::StickyDir);
        }
        // A `.git` of any kind (directory, worktree file, even a dangling link) marks the root.
        if dir.join(".git").symlink_metadata().is_ok() {
            return (dir.to_owned(), Found::GitRoot);
        }
    }
    (cwd.to_owned(), Found::CurrentDir)
}

/// Whether `path` is a `.sticky` directory. A file of that name is ignored; a symbolic link to
/// a directory counts, as it does when the database is opened through it.
fn is_state_dir(path: &Path) -> bool {
    path.is_dir()
}

fn project(dir: PathBuf, found: Found, cwd: &Path, sticky_db: Option<&Path>) -> Project {
    match sticky_db.filter(|db| !db.as_os_str().is_empty()) {
        Some(db) => Project {
            db: cwd.join(db),
            dir,
            found,
            db_overridden: true,
        },
        None => Project {
            db: dir.join(STATE_DIR).join(DB_FILE),
            dir,
            found,
            db_overridden: false,
        },
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
    store::io_error(&project.db, doing, error)
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
            assert_eq!(project.db, base.join(expected).join(".sticky/sticky.db"));
            assert!(!project.db_overridden);
        }
    }

    #[test]
    fn a_symlinked_sticky_directory_counts_a_dangling_one_does_not() {
        let root = tree(&["elsewhere/.sticky/", "repo/.git/", "repo/src/", "repo/lib/"]);
        let link = |target: &str, at: &str| {
            std::os::unix::fs::symlink(root.path().join(target), root.path().join(at)).unwrap();
        };
        link("elsewhere/.sticky", "repo/src/.sticky");
        link("nowhere", "repo/lib/.sticky");
        assert_eq!(
            locate(&root.path().join("repo/src"), None).unwrap().found,
            Found::StickyDir
        );
        assert_eq!(
            locate(&root.path().join("repo/lib"), None).unwrap().found,
            Found::GitRoot
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
            (
                Some(Path::new("state.db")),
                base.join("repo/src/state.db"),
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
            assert_eq!(project.db, db, "{sticky_db:?}");
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
        assert_eq!(project.db, project.dir.join(".sticky/sticky.db"));
        assert_eq!(fs::read_to_string(state.join(".gitignore")).unwrap(), "*\n");
        let mode = fs::metadata(&state).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert!(
            !project.db.exists(),
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
