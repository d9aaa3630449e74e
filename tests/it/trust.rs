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
