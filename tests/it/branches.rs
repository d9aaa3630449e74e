//! Threads that follow git (issue 27): `-t @branch`, `STICKY_THREAD=@branch` and the
//! configuration's `thread = "branch"` name the thread after the current branch; `-t @pr` after
//! the pull request in GitHub Actions, as `action.yml` does; `sticky threads` shows each
//! thread's branch and what became of it; `sticky threads --prune` forgets the threads of
//! deleted and merged branches.

use serde_json::Value;

use crate::support::TestEnv;

/// Commits nothing (an empty commit) in the project, as user `t`.
fn commit(env: &TestEnv, message: &str) {
    env.commit(&env.project, message);
}

/// A git project on branch `main` with one commit.
fn project() -> TestEnv {
    let env = TestEnv::new();
    env.git(&env.project, &["checkout", "-q", "-b", "main"]);
    commit(&env, "first");
    env
}

/// The `threads --json` entry of thread `name`.
#[track_caller]
fn listed(env: &TestEnv, name: &str) -> Value {
    let threads = env.ok(["threads", "--json"]).json();
    threads["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|thread| thread["name"] == name)
        .unwrap_or_else(|| panic!("no thread {name} in {threads}"))
        .clone()
}

/// The names of the project's threads.
#[track_caller]
fn names(env: &TestEnv) -> Vec<String> {
    let threads = env.ok(["threads", "--json"]).json();
    threads["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|thread| thread["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn at_branch_names_the_thread_after_the_branch_and_threads_shows_it() {
    let mut env = project();
    env.git(&env.project, &["checkout", "-q", "-b", "feature/login"]);
    let first = env.ok(["-t", "@branch", "plan the login form"]).answer();
    let status = env.ok(["-t", "@branch", "status", "--json"]).json();
    assert_eq!(status["thread"], "feature/login", "{status}");
    // The variable, and the configuration, name the same thread: its session goes on.
    let second = env
        .sticky(["and the tests"])
        .env("STICKY_THREAD", "@branch")
        .run();
    second.assert_success();
    assert_eq!(second.answer().session, first.session);
    let config = env.scratch.join("config.toml");
    std::fs::write(&config, "thread = \"branch\"\n").unwrap();
    env.set_var("STICKY_CONFIG", &config);
    let third = env.turn("and the docs");
    assert_eq!(third.session, first.session);
    assert_eq!(third.saw, ["plan the login form", "and the tests"]);
    let shown = env.ok(["config", "--json"]).json();
    assert_eq!(shown["thread"]["value"], "feature/login", "{shown}");
    assert_eq!(shown["thread"]["source"], "config", "{shown}");
    // The shell prompt follows the branch when the variable asks it to.
    let prompt = env.sticky(["prompt"]).env("STICKY_THREAD", "@branch").run();
    prompt.assert_success();
    assert!(
        prompt.stdout.starts_with("feature/login:claude "),
        "{}",
        prompt.describe()
    );
    // A flag still wins over the configuration.
    env.ok(["-t", "review", "look elsewhere"]);
    assert_eq!(names(&env), ["feature/login", "review"]);

    let thread = listed(&env, "feature/login");
    assert_eq!(
        thread["branch"],
        serde_json::json!({"name": "feature/login", "exists": true, "merged": false}),
        "{thread}"
    );
    assert_eq!(listed(&env, "review")["branch"], Value::Null);
    let text = env.ok(["threads"]).stdout;
    let row = text
        .lines()
        .find(|line| line.contains("feature/login"))
        .unwrap();
    assert!(text.lines().next().unwrap().ends_with("BRANCH"), "{text}");
    assert!(row.ends_with("  feature/login"), "{text}");
}

#[test]
fn a_branch_named_with_an_at_sign_is_its_threads_name_as_it_is() {
    let env = project();
    env.git(&env.project, &["checkout", "-q", "-b", "@wip"]);
    let first = env.ok(["-t", "@branch", "half done"]).answer();
    assert_eq!(names(&env), ["@wip"]);
    assert_eq!(listed(&env, "@wip")["branch"]["name"], "@wip");
    // Typed, the existing thread is used as any other; a new `@` name is still a typo.
    let again = env.ok(["-t", "@wip", "and the rest"]).answer();
    assert_eq!(again.session, first.session);
    let run = env.sticky(["-t", "@wop", "hello"]).run();
    run.assert_code(2);
    run.assert_stderr_contains("starts with `@`");
}

#[test]
fn a_detached_head_says_which_thread_it_used() {
    let env = project();
    env.git(&env.project, &["checkout", "-q", "--detach"]);
    let run = env.sticky(["-t", "@branch", "what is this commit?"]).run();
    run.assert_success();
    run.assert_stderr_contains("HEAD is detached at ");
    run.assert_stderr_contains("on no branch: thread main is used");
    assert_eq!(names(&env), ["main"]);
    assert_eq!(listed(&env, "main")["branch"], Value::Null);
    // --quiet says nothing of it.
    let quiet = env.sticky(["-q", "-t", "@branch", "status"]).run();
    quiet.assert_success();
    assert_eq!(quiet.stderr, "");
}

#[test]
fn during_a_rebase_the_thread_is_the_rebased_branchs() {
    let env = project();
    env.git(&env.project, &["checkout", "-q", "-b", "topic"]);
    commit(&env, "one");
    let first = env.ok(["-t", "@branch", "on topic"]).answer();
    commit(&env, "two");
    env.git(
        &env.project,
        &[
            "-c",
            "sequence.editor=sed -i 1s/^pick/edit/",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "rebase",
            "-q",
            "-i",
            "HEAD~2",
        ],
    );
    let run = env.sticky(["-t", "@branch", "mid-rebase"]).run();
    run.assert_success();
    run.assert_stderr_contains("while branch topic is rebased: thread topic");
    assert_eq!(run.answer().session, first.session);
    env.git(&env.project, &["rebase", "--abort"]);
}

#[test]
fn at_branch_outside_git_is_a_usage_error_with_the_way_out() {
    let env = TestEnv::without_git();
    let run = env.sticky(["-t", "@branch", "hello"]).run();
    run.assert_code(2);
    run.assert_stderr_contains("is not in a git repository");
    run.assert_stderr_contains("-t NAME");
    assert!(env.agent_runs().is_empty(), "no turn ran");
    let run = env.sticky(["status"]).env("STICKY_THREAD", "@branch").run();
    run.assert_code(2);
    run.assert_stderr_contains("STICKY_THREAD=@branch names the thread");
    // A command that uses no thread leaves the variable unread.
    let run = env.sticky(["agents"]).env("STICKY_THREAD", "@branch").run();
    run.assert_success();
    // From the configuration, which holds everywhere: main.
    let config = env.scratch.join("config.toml");
    std::fs::write(&config, "thread = \"branch\"\n").unwrap();
    let run = env.sticky(["hello"]).env("STICKY_CONFIG", &config).run();
    run.assert_success();
    assert_eq!(names(&env), ["main"]);
    // Another @name is a typo, not a thread.
    let run = env.sticky(["-t", "@brnach", "hello"]).run();
    run.assert_code(2);
    run.assert_stderr_contains("starts with `@`");
}

#[test]
fn at_pr_is_pr_n_in_a_pull_requests_run_as_the_action_names_it() {
    let env = project();
    // actions/checkout leaves the merge commit detached.
    env.git(&env.project, &["checkout", "-q", "--detach"]);
    let event = env.scratch.join("event.json");
    std::fs::write(&event, r#"{"pull_request": {"number": 7}}"#).unwrap();
    let run = env
        .sticky(["-t", "@pr", "review this"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_REF", "refs/pull/7/merge")
        .env("GITHUB_HEAD_REF", "feature/login")
        .run();
    run.assert_success();
    let thread = listed(&env, "pr-7");
    assert_eq!(thread["branch"]["name"], "feature/login", "{thread}");
    // A comment on the pull request: its ref is the default branch's, the event names it.
    std::fs::write(
        &event,
        r#"{"issue": {"number": 7, "pull_request": {"url": "x"}}}"#,
    )
    .unwrap();
    let run = env
        .sticky(["-t", "@pr", "status", "--json"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_REF", "refs/heads/main")
        .env("GITHUB_REF_NAME", "main")
        .run();
    run.assert_success();
    assert_eq!(run.json()["thread"], "pr-7");
    // Outside GitHub Actions: the branch's thread, said on stderr.
    env.git(&env.project, &["checkout", "-q", "main"]);
    let run = env.sticky(["-t", "@pr", "status"]).run();
    run.assert_success();
    assert!(run.stdout.contains("thread    main"), "{}", run.describe());
    run.assert_stderr_contains(
        "@pr: not in a GitHub Actions run, so thread main follows the git branch",
    );
}

#[test]
fn prune_forgets_the_threads_of_deleted_and_merged_branches_after_confirmation() {
    let env = project();
    env.ok(["on main"]);
    env.git(&env.project, &["checkout", "-q", "-b", "merged"]);
    commit(&env, "merged work");
    env.ok(["-t", "@branch", "merged work"]);
    env.git(&env.project, &["checkout", "-q", "-b", "deleted", "main"]);
    env.ok(["-t", "@branch", "deleted work"]);
    env.git(&env.project, &["checkout", "-q", "-b", "fresh", "main"]);
    env.ok(["-t", "@branch", "nothing committed yet"]);
    env.git(&env.project, &["checkout", "-q", "-b", "open", "main"]);
    commit(&env, "open work");
    env.ok(["-t", "@branch", "open work"]);
    env.git(&env.project, &["checkout", "-q", "main"]);
    env.git(
        &env.project,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "merge",
            "-q",
            "--no-edit",
            "--no-ff",
            "merged",
        ],
    );
    env.git(&env.project, &["branch", "-q", "-D", "deleted"]);
    // `fresh` points at main's old tip, which main left behind: it is merged too. A branch
    // still at main's tip is a new branch, not a merged one: kept.
    env.git(&env.project, &["checkout", "-q", "-b", "just-made"]);
    env.ok(["-t", "@branch", "just made"]);
    env.git(&env.project, &["checkout", "-q", "main"]);
    env.ok(["-t", "by-hand", "named by hand"]);

    assert_eq!(listed(&env, "merged")["branch"]["merged"], true);
    assert_eq!(listed(&env, "deleted")["branch"]["exists"], false);
    assert_eq!(listed(&env, "open")["branch"]["merged"], false);
    assert_eq!(listed(&env, "just-made")["branch"]["merged"], false);
    let text = env.ok(["threads"]).stdout;
    assert!(text.contains("  deleted (deleted)"), "{text}");
    assert!(text.contains("  merged (merged)"), "{text}");

    // Without a terminal and without --yes: refused, listing what it would forget.
    let refused = env.sticky(["threads", "--prune"]).run();
    refused.assert_code(2);
    refused.assert_stderr_contains("confirm with --yes");
    refused.assert_stderr_contains(
        "thread deleted: 1 session, 1 turn and 1 vault copy (its branch deleted was deleted)",
    );
    refused.assert_stderr_contains("(its branch merged was merged)");
    assert_eq!(names(&env).len(), 7, "nothing forgotten");

    let pruned = env.sticky(["threads", "--prune", "--yes", "--json"]).run();
    pruned.assert_success();
    let report = pruned.json();
    let gone: Vec<(&str, &str)> = report["pruned"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["thread"].as_str().unwrap(), p["why"].as_str().unwrap()))
        .collect();
    assert_eq!(
        gone,
        [
            ("merged", "merged"),
            ("deleted", "deleted"),
            ("fresh", "merged")
        ],
        "{report}"
    );
    assert_eq!(report["pruned"][0]["vault_copies"], 1, "{report}");
    assert_eq!(
        names(&env),
        ["main", "open", "just-made", "by-hand"],
        "the others are kept"
    );
    let again = env.sticky(["threads", "--prune"]).run();
    again.assert_success();
    again.assert_stderr_contains("nothing to prune");
}

#[test]
fn prune_asks_on_a_terminal_and_leaves_a_thread_running_a_turn() {
    let env = project();
    for branch in ["one", "two"] {
        env.git(&env.project, &["checkout", "-q", "-b", branch, "main"]);
        env.ok(["-t", "@branch", &format!("{branch} work")]);
    }
    env.git(&env.project, &["checkout", "-q", "main"]);
    env.git(&env.project, &["branch", "-q", "-D", "one", "two"]);

    let release = env.scratch.join("release");
    let mut held = env
        .sticky(["-t", "two", "held turn"])
        .env("FAKE_CLAUDE_HOLD", &release)
        .start();
    held.wait_until("the held turn is running", || {
        let status = env.ok(["-t", "two", "status", "--json"]).json();
        status["last_turn"]["status"] == "running"
    });

    let mut declined = env.sticky(["threads", "--prune"]).on_terminal();
    declined.expect("This cannot be undone. [y/N]");
    declined.send("n\r");
    assert_eq!(declined.wait(), 0);
    assert_eq!(names(&env), ["one", "two"]);

    let mut agreed = env.sticky(["threads", "--prune"]).on_terminal();
    let asked = agreed.expect("[y/N]");
    assert!(
        asked.contains("thread two is running a turn; it is left"),
        "{asked}"
    );
    assert!(asked.contains("thread one: 1 session"), "{asked}");
    agreed.send("y\r");
    assert_eq!(agreed.wait(), 0);
    assert_eq!(names(&env), ["two"]);

    std::fs::write(&release, "").unwrap();
    held.wait().assert_success();
}

#[test]
fn outside_git_threads_cannot_tell_and_prune_names_the_way_out() {
    let env = TestEnv::without_git();
    env.ok(["hello"]);
    // Only threads named after a branch are candidates: none here, so git is not asked.
    env.ok(["threads", "--prune"])
        .assert_stderr_contains("nothing to prune");

    let env = project();
    env.git(&env.project, &["checkout", "-q", "-b", "topic"]);
    env.ok(["-t", "@branch", "on topic"]);
    std::fs::remove_dir_all(env.project.join(".git")).unwrap();
    let listed = env.ok(["threads"]);
    assert!(
        listed.stdout.contains("  topic (?)"),
        "{}",
        listed.describe()
    );
    listed.assert_stderr_contains("cannot tell which threads' branches still exist");
    let thread = env.ok(["threads", "--json"]).json();
    assert_eq!(
        thread["threads"][0]["branch"],
        serde_json::json!({"name": "topic", "exists": null, "merged": null})
    );
    let refused = env.sticky(["threads", "--prune", "--yes"]).run();
    refused.assert_code(2);
    refused.assert_stderr_contains(
        "is not in a git repository; forget a thread with `sticky forget -t NAME`",
    );
    assert_eq!(names(&env), ["topic"]);
}

/// Review 3: with `thread = "branch"` (or `STICKY_THREAD=@branch`) a turn without `-t` uses the
/// branch's thread, and `-t NAME --fork` is documented to fork "the thread the turn would use
/// without -t"; it forks `main` instead (the configuration is not read, and the variable's
/// `@branch` is taken as a thread's name), silently, with main's history.
#[test]
fn dash_t_fork_forks_the_branchs_thread_when_the_thread_follows_git() {
    let mut env = project();
    env.ok(["on main"]);
    env.git(&env.project, &["checkout", "-q", "-b", "feature"]);
    let config = env.scratch.join("config.toml");
    std::fs::write(&config, "thread = \"branch\"\n").unwrap();
    env.set_var("STICKY_CONFIG", &config);
    env.ok(["on feature"]);
    assert_eq!(env.ok(["status", "--json"]).json()["thread"], "feature");
    let fork = env
        .ok(["-t", "side", "--fork", "from the feature"])
        .answer();
    assert_eq!(
        fork.saw,
        ["on feature"],
        "forked the wrong thread: {fork:?}"
    );
    let by_variable = env
        .sticky(["-t", "side2", "--fork", "again"])
        .env("STICKY_THREAD", "@branch")
        .run();
    by_variable.assert_success();
    assert_eq!(by_variable.answer().saw, ["on feature"]);
}

/// One `-t @branch` turn on branch `main` records that branch on the default thread
/// `main`, made by plain turns long before. In a repository whose default branch is `develop`
/// (origin/HEAD, as git-flow sets it), `main` is merged into it, so `threads --prune --yes`
/// forgets the default conversation whole, its earlier turns with it, as "merged".
#[test]
fn prune_keeps_the_default_thread_whose_plain_turns_came_before_a_branch_turn() {
    let env = project();
    env.ok(["months of work on the default thread"]);
    env.git(&env.project, &["checkout", "-q", "-b", "develop"]);
    commit(&env, "develop's work");
    env.git(&env.project, &["checkout", "-q", "main"]);
    env.ok(["-t", "@branch", "one question on main"]);
    env.git(&env.project, &["checkout", "-q", "develop"]);
    env.git(
        &env.project,
        &["update-ref", "refs/remotes/origin/develop", "develop"],
    );
    env.git(
        &env.project,
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/develop",
        ],
    );
    env.ok(["threads", "--prune", "--yes"]);
    assert_eq!(
        names(&env),
        ["main"],
        "prune forgot the default thread and its plain turns"
    );
}

/// On a detached HEAD (`git checkout SHA`, a bisect, a CI checkout) `-t @branch` falls back to
/// thread `main`, which a turn may; but `forget -t @branch --yes`, meant for the branch's
/// conversation (a cleanup script after a merge), would forget the default conversation. A
/// command that forgets or rotates refuses the fallback and names the way out.
#[test]
fn forget_and_new_at_branch_on_a_detached_head_refuse_the_fallback_to_main() {
    let env = project();
    env.ok(["the default conversation"]);
    env.git(&env.project, &["checkout", "-q", "-b", "feature"]);
    env.ok(["-t", "@branch", "feature talk"]);
    env.git(&env.project, &["checkout", "-q", "--detach"]);
    let session = env.ok(["status", "--json"]).json()["session"].clone();
    let refused = env.sticky(["forget", "-t", "@branch", "--yes"]).run();
    refused.assert_code(2);
    refused.assert_stderr_contains("does not fall back to thread main; name it with -t main");
    assert_eq!(
        names(&env),
        ["main", "feature"],
        "forget -t @branch on a detached HEAD forgot a thread"
    );
    let rotated = env.sticky(["new", "-t", "@branch"]).run();
    rotated.assert_code(2);
    rotated.assert_stderr_contains("`sticky new` does not fall back");
    assert_eq!(env.ok(["status", "--json"]).json()["session"], session);
    // A turn still falls back.
    env.ok(["-t", "@branch", "on main again"]);
}

/// The sixth review (L5): in a repository without a commit yet, the branch HEAD names has no
/// ref; its thread is not "deleted", and prune keeps it.
#[test]
fn the_branch_of_a_repository_without_commits_exists_and_prune_keeps_it() {
    let env = TestEnv::new();
    env.git(&env.project, &["checkout", "-q", "-b", "trunk"]);
    env.ok(["-t", "@branch", "plan"]);
    assert_eq!(listed(&env, "trunk")["branch"]["exists"], true);
    let text = env.ok(["threads"]).stdout;
    assert!(!text.contains("(deleted)"), "{text}");
    let pruned = env.ok(["threads", "--prune", "--yes"]);
    assert!(
        pruned.stderr.contains("nothing to prune"),
        "{}",
        pruned.stderr
    );
    assert_eq!(names(&env), ["trunk"]);
}

/// Review 17: two projects sharing one `STICKY_DB` (set for every project, the case review 16's
/// M3 guards in the turn, `new` and relocate): `sticky threads --prune` in q judges p's branch
/// threads by q's git, where p's branches do not exist, calls them "deleted" and forgets them,
/// p's live session, turns and vault copies with them. p's next turn on its branch starts afresh.
#[test]
fn review_prune_in_a_project_sharing_sticky_db_forgets_the_other_projects_threads() {
    let mut env = project();
    let database = env.home.join(".local/state/sticky/sticky.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    env.set_var("STICKY_DB", &database);
    env.git(&env.project, &["checkout", "-q", "-b", "feature"]);
    let first = env.ok(["-t", "@branch", "feature work in p"]).answer();
    let q = env.root().join("q");
    std::fs::create_dir_all(&q).expect("a second project");
    env.git(&q, &["init", "-q", "-b", "main"]);
    env.commit(&q, "q");
    let pruned = env
        .sticky(["threads", "--prune", "--yes"])
        .current_dir(&q)
        .run();
    let again = env
        .sticky(["-t", "@branch", "more feature work in p"])
        .run();
    again.assert_success();
    assert_eq!(
        again.answer().session,
        first.session,
        "p's thread feature was forgotten by q's prune: {}",
        pruned.describe()
    );
}

/// Review 19, M2: `threads --prune` forgets a merged or deleted branch's thread as `forget`
/// does, keeping the vault copy of a session another thread still takes: here the source of a
/// fork not made yet, which the fork's first turn then makes from the vault once the agent
/// swept the source's transcript.
#[test]
fn prune_keeps_the_vault_copy_of_a_session_a_thread_left_forks() {
    let env = project();
    env.git(&env.project, &["checkout", "-q", "-b", "feature"]);
    let source = env.ok(["-t", "@branch", "alpha"]).answer();
    env.ok(["-t", "feature", "fork", "idea"]);
    env.git(&env.project, &["checkout", "-q", "main"]);
    env.git(&env.project, &["branch", "-q", "-D", "feature"]);

    let pruned = env.sticky(["threads", "--prune", "--yes", "--json"]).run();
    pruned.assert_success();
    let report = pruned.json();
    assert_eq!(report["pruned"][0]["thread"], "feature", "{report}");
    assert_eq!(report["pruned"][0]["vault_copies"], 0, "{report}");
    std::fs::remove_file(env.transcript(&source.session)).unwrap();
    let forked = env.sticky(["-t", "idea", "beta"]).run();
    forked.assert_success();
    forked.assert_stderr_contains("restored 1 file from sticky's vault");
    assert_ne!(forked.answer().session, source.session);
}
