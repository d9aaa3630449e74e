//! git, asked about the project's branches: the branch a thread named `@branch` follows, and
//! which branches still exist or are merged (`sticky threads`, `sticky threads --prune`).
//!
//! git runs in the project directory with `GIT_DIR`, `GIT_WORK_TREE` and `GIT_INDEX_FILE`
//! removed (the project's own repository, as `project.rs` found it) and `core.fsmonitor` off;
//! only plumbing that reads refs runs (`symbolic-ref`, `rev-parse`, `for-each-ref`), none of
//! which reads the index or runs a hook, and `git` itself is found through absolute PATH
//! entries only (`crate::search_lists`), so nothing in the repository chooses what runs. A
//! directory with no `.git` at or above it is [`GitError::NotGit`] without running git.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// Where HEAD is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// On a branch (its short name: `feature/login`), born or not.
    Branch(String),
    /// Detached at a commit (its short name), during a rebase of `rebasing` when one runs.
    Detached {
        /// The commit's abbreviated name.
        commit: String,
        /// The branch a rebase in progress will update.
        rebasing: Option<String>,
    },
}

/// Why git could not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitError {
    /// The directory is in no git worktree.
    NotGit,
    /// git failed, or cannot be run: what it said.
    Failed(String),
}

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotGit => f.write_str("not in a git repository"),
            Self::Failed(why) => f.write_str(why),
        }
    }
}

/// Where HEAD of the repository holding `dir` is.
pub fn head(dir: &Path) -> Result<Head, GitError> {
    let symbolic = git(dir, &["symbolic-ref", "--quiet", "HEAD"])?;
    match symbolic.code {
        Some(0) => Ok(Head::Branch(short_branch(&text(symbolic.stdout)?))),
        // 1: HEAD is no symbolic ref, so it is detached.
        Some(1) => {
            let paths = git(
                dir,
                &[
                    "rev-parse",
                    "--short",
                    "HEAD",
                    "--git-path",
                    "rebase-merge/head-name",
                    "--git-path",
                    "rebase-apply/head-name",
                ],
            )?
            .success("rev-parse")?;
            // The paths come first (git prints them as it reads them), the commit last.
            let mut lines: Vec<&str> = paths.lines().collect();
            let commit = lines.pop().unwrap_or_default().to_owned();
            let rebasing = lines
                .into_iter()
                .filter_map(|path| std::fs::read_to_string(dir.join(path)).ok())
                // A rebase of a detached HEAD writes `detached HEAD` there.
                .find_map(|name| name.trim().strip_prefix("refs/heads/").map(str::to_owned));
            Ok(Head::Detached { commit, rebasing })
        }
        _ => Err(symbolic.failure("symbolic-ref")),
    }
}

/// What the local branches of the repository holding `dir` are, and which of them are merged
/// into its default branch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Branches {
    /// Every local branch by short name, with whether a worktree has it checked out.
    pub local: BTreeMap<String, bool>,
    /// The default branch's short name (`main`): `origin/HEAD`'s, else `init.defaultBranch`,
    /// `main` or `master` where such a branch exists; `None` when none is found.
    pub default: Option<String>,
    /// The local branches merged into the default branch: their tip is in its history and is
    /// not its tip (a branch just made from it has done nothing yet).
    pub merged: Vec<String>,
}

impl Branches {
    /// Reads the branches of the repository holding `dir`.
    pub fn read(dir: &Path) -> Result<Self, GitError> {
        let listing = git(
            dir,
            &[
                "for-each-ref",
                "--format=%(objectname) %(refname) %(symref) %(worktreepath)",
                "refs/heads/",
                "refs/remotes/origin/HEAD",
            ],
        )?
        .success("for-each-ref")?;
        let mut local = BTreeMap::new();
        let mut tips = BTreeMap::new();
        let mut remote_default = None;
        for line in listing.lines() {
            let mut fields = line.splitn(4, ' ');
            let (Some(tip), Some(name)) = (fields.next(), fields.next()) else {
                continue;
            };
            let symref = fields.next().unwrap_or_default();
            let checked_out = !fields.next().unwrap_or_default().is_empty();
            if let Some(branch) = name.strip_prefix("refs/heads/") {
                local.insert(branch.to_owned(), checked_out);
                tips.insert(branch.to_owned(), tip.to_owned());
            } else if let Some(target) = symref.strip_prefix("refs/remotes/origin/") {
                remote_default = Some((target.to_owned(), symref.to_owned(), tip.to_owned()));
            }
        }
        // The branch HEAD names before its first commit (`git init`) has no ref yet: it is
        // there all the same, checked out here.
        if let Ok(Head::Branch(unborn)) = head(dir) {
            local.entry(unborn).or_insert(true);
        }
        // The default branch and the commit a merged branch is in the history of: origin's
        // (a pull request merged there), else the local one.
        let (default, target) = if let Some((name, target, tip)) = remote_default {
            (Some(name), Some((target, tip)))
        } else {
            let configured = git(dir, &["config", "--get", "init.defaultBranch"])?;
            let configured = text(configured.stdout).unwrap_or_default();
            let name = [configured.trim(), "main", "master"]
                .into_iter()
                .find(|name| tips.contains_key(*name))
                .map(str::to_owned);
            let target = name
                .as_ref()
                .map(|name| (format!("refs/heads/{name}"), tips[name].clone()));
            (name, target)
        };
        let merged = match target {
            Some(target) => merged_into(dir, &target, default.as_deref(), &tips)?,
            None => Vec::new(),
        };
        Ok(Self {
            local,
            default,
            merged,
        })
    }

    /// What became of `branch`.
    pub fn state(&self, branch: &str) -> BranchState {
        match self.local.get(branch) {
            None => BranchState::Deleted,
            Some(_) if self.merged.iter().any(|name| name == branch) => BranchState::Merged,
            Some(_) => BranchState::Exists,
        }
    }

    /// Whether `branch` is one `--prune` may forget the thread of: deleted, or merged and
    /// neither the default branch nor checked out in a worktree.
    pub fn gone(&self, branch: &str) -> bool {
        match self.state(branch) {
            BranchState::Deleted => true,
            BranchState::Merged => !self.local.get(branch).copied().unwrap_or(false),
            BranchState::Exists => false,
        }
    }
}

/// The local branches merged into `target` (its ref and tip), `default` and those at its tip
/// aside; `tips` holds each local branch's tip.
fn merged_into(
    dir: &Path,
    (target, target_tip): &(String, String),
    default: Option<&str>,
    tips: &BTreeMap<String, String>,
) -> Result<Vec<String>, GitError> {
    let listing = git(
        dir,
        &[
            "for-each-ref",
            "--format=%(refname)",
            &format!("--merged={target}"),
            "refs/heads/",
        ],
    )?
    .success("for-each-ref --merged")?;
    Ok(listing
        .lines()
        .filter_map(|name| name.strip_prefix("refs/heads/"))
        .filter(|name| Some(*name) != default)
        .filter(|name| tips.get(*name) != Some(target_tip))
        .map(str::to_owned)
        .collect())
}

/// What became of a thread's branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BranchState {
    /// It exists and is not merged into the default branch.
    Exists,
    /// It exists, merged into the default branch.
    Merged,
    /// No local branch has its name.
    Deleted,
}

/// A branch's short name from its ref (`refs/heads/x` is `x`).
fn short_branch(reference: &str) -> String {
    let reference = reference.trim_end_matches('\n');
    reference
        .strip_prefix("refs/heads/")
        .unwrap_or(reference)
        .to_owned()
}

/// What one git run printed and how it ended.
struct Ran {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Ran {
    /// Its output as text when it succeeded, else what went wrong.
    fn success(self, what: &str) -> Result<String, GitError> {
        if self.code == Some(0) {
            text(self.stdout)
        } else {
            Err(self.failure(what))
        }
    }

    fn failure(&self, what: &str) -> GitError {
        GitError::Failed(format!(
            "git {what} failed: {}",
            String::from_utf8_lossy(&self.stderr).trim()
        ))
    }
}

fn text(bytes: Vec<u8>) -> Result<String, GitError> {
    String::from_utf8(bytes)
        .map_err(|_| GitError::Failed("git named a branch that is not UTF-8 text".into()))
}

/// Runs git with `args` in `dir`.
fn git(dir: &Path, args: &[&str]) -> Result<Ran, GitError> {
    if !dir
        .ancestors()
        .any(|dir| dir.join(".git").symlink_metadata().is_ok())
    {
        return Err(GitError::NotGit);
    }
    let mut command = Command::new("git");
    command
        .args(["-c", "core.fsmonitor=false"])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null());
    // git is looked up after the move to `dir`: through absolute PATH entries only, or a
    // repository's own `git` would run (review 22, H1).
    let output = crate::search_lists::apply(&mut command)
        .output()
        .map_err(|error| GitError::Failed(format!("git cannot be run: {error}")))?;
    Ok(Ran {
        code: output.status.code(),
        stdout: output.stdout,
        stderr: output.stderr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_branch_is_named_without_refs_heads() {
        assert_eq!(short_branch("refs/heads/feature/login\n"), "feature/login");
        assert_eq!(short_branch("refs/heads/main"), "main");
    }

    #[test]
    fn a_branch_is_gone_when_deleted_or_merged_and_checked_out_nowhere() {
        let branches = Branches {
            local: [
                ("main".to_owned(), true),
                ("done".to_owned(), false),
                ("here".to_owned(), true),
                ("open".to_owned(), false),
            ]
            .into(),
            default: Some("main".into()),
            merged: vec!["done".into(), "here".into()],
        };
        assert_eq!(branches.state("gone"), BranchState::Deleted);
        assert_eq!(branches.state("done"), BranchState::Merged);
        assert_eq!(branches.state("open"), BranchState::Exists);
        let gone: Vec<_> = ["main", "done", "here", "open", "gone"]
            .into_iter()
            .filter(|name| branches.gone(name))
            .collect();
        assert_eq!(gone, ["done", "gone"]);
    }
}
