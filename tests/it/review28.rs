//! Review 28: an adversarial try of issue 23's scope on the code as it stands.

use std::fs;

use crate::support::TestEnv;

/// Review 28, H1: a relative `STICKY_DB` (the CI-cache case security.md documents, "taken from
/// the project directory") whose directory the repository replaced with a committed link
/// carries the database and the vault's transcripts out of the ignored directory: here into a
/// tracked directory of the worktree, where `git status` offers the conversation for the next
/// commit. The `.gitignore` check asks git about the path as named (`.cache/sticky.db`), not
/// where the files land, and no directory on the way is checked for a link, as `.sticky/` is.
/// The turn must refuse (a link in `STICKY_DB`'s path inside the project, or at least one
/// leading where git would not ignore the files) and write nothing through it.
#[test]
fn review28_relative_sticky_db_through_a_committed_link_leaks_the_conversation_to_git() {
    let mut env = TestEnv::new();
    fs::write(env.project.join(".gitignore"), ".cache/\n").expect("write .gitignore");
    let public = env.project_dir("public");
    fs::write(public.join("README"), "docs\n").expect("write a tracked file");
    // What a pull request can commit: `.cache` as a link to a tracked directory.
    std::os::unix::fs::symlink("public", env.project.join(".cache")).expect("plant the link");
    env.git(&env.project, &["add", "-A"]);
    env.commit(&env.project, "a pull request");
    // The CI job's own setting, documented for caches: a path inside the ignored `.cache/`.
    env.set_var("STICKY_DB", ".cache/sticky.db");

    let _ = env.sticky(["secret plan"]).run();

    let leaked: Vec<_> = fs::read_dir(&public)
        .expect("list public/")
        .map(|entry| entry.expect("an entry").file_name())
        .filter(|name| name.to_string_lossy().starts_with("sticky.db"))
        .collect();
    assert!(
        leaked.is_empty(),
        "sticky wrote its database and vault through the committed link into the tracked \
         directory public/, where `git add -A` commits the conversation: {leaked:?}"
    );
}

/// Review 28, H2: a `.sticky` the repository committed as a link to a tracked directory of its
/// own that carries a `.gitignore` ignoring nothing. A `.sticky/` directory with such a tracked
/// `.gitignore` is refused (security.md: "it came with the repository"); through a link inside
/// the project (which trust.rs accepts: "a link that stays inside the project is fine") the
/// same check asks git about `.sticky/sticky.db`, git fails with "beyond a symbolic link"
/// (exit 128), and `check_ignored` takes that for "no worktree here": the first turn writes the
/// database and the vault (the transcript of the turn) into `public/`, where `git status` offers
/// them for the next commit. No configuration is needed: the GitHub Action checks out the pull
/// request and runs here. The turn must refuse as it does for the directory, writing nothing.
#[test]
fn review28_committed_state_dir_link_to_a_tracked_directory_leaks_the_conversation_to_git() {
    let env = TestEnv::new();
    let public = env.project_dir("public");
    fs::write(public.join("README"), "docs\n").expect("write a tracked file");
    fs::write(public.join(".gitignore"), "").expect("a .gitignore that ignores nothing");
    std::os::unix::fs::symlink("public", env.project.join(".sticky")).expect("plant the link");
    env.git(&env.project, &["add", "-A"]);
    env.commit(&env.project, "a pull request");

    let _ = env.sticky(["secret plan"]).run();

    let leaked: Vec<_> = fs::read_dir(&public)
        .expect("list public/")
        .map(|entry| entry.expect("an entry").file_name())
        .filter(|name| name.to_string_lossy().starts_with("sticky.db"))
        .collect();
    assert!(
        leaked.is_empty(),
        "sticky wrote its database and vault through the committed .sticky link into the \
         tracked directory public/, whose .gitignore ignores nothing: {leaked:?}"
    );
}
