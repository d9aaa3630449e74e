//! Where state is read from is the user's choice: a session recorded for another directory,
//! a `.sticky/` that leads out of the project or belongs to someone else, and the upward
//! search outside git; and a damaged store that must never become a fresh start.

use std::fs;
use std::path::Path;

use crate::support::TestEnv;

/// Asserts the refusal of a session recorded for `theirs` while sticky runs in `ours`.
#[track_caller]
fn assert_refused_elsewhere(output: &crate::support::Output, theirs: &Path, ours: &Path) {
    output.assert_code(73);
    output.assert_stderr_contains(&format!("belongs to directory {}", theirs.display()));
    output.assert_stderr_contains(&format!("not to this project {}", ours.display()));
    output.assert_stderr_contains("run `sticky new` to start a session here");
    output.assert_stderr_contains("STICKY_DB");
}

#[test]
fn an_unused_session_committed_for_another_directory_is_refused_by_turns_and_doctor() {
    let env = TestEnv::new();
    let origin = env.scratch.join("origin");
    fs::create_dir_all(&origin).expect("create the origin");
    env.git(&origin, &["init", "-q"]);
    // A fresh session that never had a turn, recorded for the origin's directory.
    env.sticky(["new"])
        .current_dir(&origin)
        .run()
        .assert_success();
    env.git(&origin, &["add", "--force", "--all"]);
    env.git(
        &origin,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e",
            "commit",
            "-qm",
            "x",
        ],
    );
    fs::remove_dir_all(&env.project).expect("remove the project");
    let parent = env.project.parent().expect("a parent");
    env.git(
        parent,
        &["clone", "-q", origin.to_str().expect("utf-8"), "project"],
    );
    assert!(env.project.join(".sticky/sticky.db").is_file());

    for args in [
        &["hello"][..],
        &["--json", "hello"],
        &["-m", "other", "hello"],
    ] {
        let refused = env.sticky(args).run();
        assert_refused_elsewhere(&refused, &origin, &env.project);
    }
    assert!(env.agent_runs().is_empty(), "the agent never ran");

    let doctor = env.sticky(["doctor"]).run();
    doctor.assert_code(73);
    assert!(
        !doctor.stdout.contains("ok: the next turn can run"),
        "{}",
        doctor.describe()
    );
    assert!(
        doctor
            .stdout
            .contains(&format!("belongs to directory {}", origin.display())),
        "{}",
        doctor.describe()
    );

    // The way out: a session of this project's own, the old one kept on record.
    let mine = env.ok(["new", "my work"]).answer();
    assert_eq!(env.last_agent_run().cwd(), env.project);
    assert!(mine.saw.is_empty());
    env.ok(["doctor"]);
    let sessions = env.ok(["sessions", "--json"]).json();
    assert_eq!(
        sessions["sessions"].as_array().map(Vec::len),
        Some(2),
        "{sessions}"
    );
}

#[test]
fn two_projects_sharing_one_sticky_db_do_not_run_in_each_other() {
    let env = TestEnv::new();
    let db = env.scratch.join("shared.db");
    let other = env.scratch.join("other");
    fs::create_dir_all(&other).expect("create the other project");
    env.git(&other, &["init", "-q"]);
    env.sticky(["new"])
        .current_dir(&other)
        .env("STICKY_DB", &db)
        .run()
        .assert_success();

    let refused = env.sticky(["hello"]).env("STICKY_DB", &db).run();
    assert_refused_elsewhere(&refused, &other, &env.project);
    assert!(env.agent_runs().is_empty(), "the agent never ran");
    env.sticky(["doctor"])
        .env("STICKY_DB", &db)
        .run()
        .assert_code(73);

    // In its own directory the session starts as it should.
    env.sticky(["there"])
        .current_dir(&other)
        .env("STICKY_DB", &db)
        .run()
        .assert_success();
    assert_eq!(env.last_agent_run().cwd(), other);
}

#[test]
fn a_committed_sticky_link_into_another_project_is_refused_and_that_project_untouched() {
    let env = TestEnv::new();
    let other = env.scratch.join("other");
    fs::create_dir_all(&other).expect("create the other project");
    env.git(&other, &["init", "-q"]);
    env.sticky(["their secret prompt"])
        .current_dir(&other)
        .run()
        .assert_success();
    let theirs = other.join(".sticky");
    let before = snapshot(&theirs);
    std::os::unix::fs::symlink(&theirs, env.project.join(".sticky")).expect("link .sticky");

    for args in [
        &["hello"][..],
        &["status"],
        &["log"],
        &["new"],
        &["threads"],
        &["doctor"],
    ] {
        let output = env.sticky(args).run();
        output.assert_code(71);
        output.assert_stderr_contains(&format!(
            "{}: refusing to use it: is a symbolic link to {}, outside the project {}",
            env.project.join(".sticky").display(),
            theirs.display(),
            env.project.display()
        ));
        output.assert_stderr_contains(&format!(
            "remove the link, and set STICKY_DB={}",
            theirs.join("sticky.db").display()
        ));
        assert!(
            !output.stdout.contains("their secret"),
            "{}",
            output.describe()
        );
    }
    assert_eq!(
        snapshot(&theirs),
        before,
        "the other project's state is untouched"
    );
    assert!(env.agent_runs().len() == 1, "only their own turn ever ran");

    // A link that stays inside the project is fine.
    fs::remove_file(env.project.join(".sticky")).expect("remove the link");
    fs::create_dir(env.project.join("state")).expect("create a state directory");
    std::os::unix::fs::symlink("state", env.project.join(".sticky")).expect("link .sticky");
    env.turn("mine");
    assert!(env.project.join("state/sticky.db").is_file());
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read a directory").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = fs::read(&path).expect("read a file");
                files.push((path, bytes));
            }
        }
    }
    files.sort();
    files
}

/// Whether this process runs as root (who can give files to another user).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    tempfile::tempfile()
        .and_then(|file| file.metadata())
        .is_ok_and(|meta| meta.uid() == 0)
}

#[test]
fn a_sticky_dir_planted_by_another_user_or_open_to_all_is_never_used() {
    let env = TestEnv::without_git();
    // Someone else's shared directory with a state directory anyone may write.
    let shared = env.scratch.join("shared");
    let mine = shared.join("anything");
    fs::create_dir_all(&mine).expect("create my directory");
    env.sticky(["planted"])
        .current_dir(&shared)
        .run()
        .assert_success();
    let planted = shared.join(".sticky");
    let chmod = |path: &Path, mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
    };
    chmod(&planted, 0o777);

    let open = env.sticky(["hello"]).current_dir(&shared).run();
    open.assert_code(71);
    open.assert_stderr_contains(&format!(
        "{}: refusing to use it: can be written by other users (mode 0777)",
        planted.display()
    ));
    open.assert_stderr_contains(&format!("chmod go-w {}", planted.display()));
    chmod(&planted, 0o700);

    if is_root() {
        for path in [&shared, &planted] {
            std::os::unix::fs::chown(path, Some(65_534), Some(65_534)).expect("chown");
        }
        let theirs = env.sticky(["hello"]).current_dir(&shared).run();
        theirs.assert_code(71);
        theirs.assert_stderr_contains(&format!(
            "{}: refusing to use it: is owned by another user (uid 65534, you are uid 0)",
            planted.display()
        ));
        theirs.assert_stderr_contains("chown -R 0");
        theirs.assert_stderr_contains("STICKY_DB");
        // From below, the search never enters their directory: my directory is my project.
        let below = env.sticky(["hello"]).current_dir(&mine).run();
        below.assert_success();
        assert!(below.answer().saw.is_empty(), "nothing of theirs");
        assert_eq!(env.last_agent_run().cwd(), mine);
        assert!(mine.join(".sticky/sticky.db").is_file());
    }
}

#[test]
fn outside_git_the_search_stops_at_home_and_at_sticky_ceiling_directories() {
    let env = TestEnv::without_git();
    // A project found above, as DESIGN.md allows outside git...
    let deep = env.project_dir("a/b");
    let first = env.turn("at the top").session;
    let output = env.sticky(["from below"]).current_dir(&deep).run();
    output.assert_success();
    assert_eq!(output.answer().session, first);
    assert_eq!(env.last_agent_run().cwd(), env.project);
    // ...but not past a ceiling, nor past home.
    for (var, value) in [
        (
            "STICKY_CEILING_DIRECTORIES",
            format!("/nonexistent:{}", env.project.display()),
        ),
        ("HOME", env.project.join("a").display().to_string()),
    ] {
        let output = env
            .sticky(["bounded"])
            .current_dir(&deep)
            .env(var, &value)
            .run();
        output.assert_success();
        assert_ne!(output.answer().session, first, "{var}={value}");
        assert_eq!(env.last_agent_run().cwd(), deep, "{var}={value}");
        fs::remove_dir_all(deep.join(".sticky")).expect("remove the state below");
    }
}

#[test]
fn a_project_found_above_outside_git_is_named_once_on_a_terminal() {
    let env = TestEnv::without_git();
    env.turn("at the top");
    let deep = env.project_dir("a/b");
    let note = format!("sticky: using the project {}", env.project.display());
    // Not to a script: stderr is no terminal.
    let piped = env.sticky(["piped"]).current_dir(&deep).run();
    piped.assert_success();
    assert!(!piped.stderr.contains(&note), "{}", piped.describe());

    let mut terminal = env
        .sticky(["first from below"])
        .current_dir(&deep)
        .on_terminal();
    terminal.expect(&note);
    terminal.expect("you said: first from below");
    assert_eq!(terminal.wait(), 0);
    let mut terminal = env.sticky(["again"]).current_dir(&deep).on_terminal();
    let shown = terminal.expect("you said: again");
    assert!(
        !shown.contains("using the project"),
        "once per project: {shown}"
    );
    assert_eq!(terminal.wait(), 0);
    // Not from the project directory itself.
    let mut terminal = env.sticky(["at home"]).on_terminal();
    let shown = terminal.expect("you said: at home");
    assert!(!shown.contains("using the project"), "{shown}");
    assert_eq!(terminal.wait(), 0);
}
