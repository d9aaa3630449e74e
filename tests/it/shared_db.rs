//! One `STICKY_DB` several directories share (a shell profile's line), once one of them moved
//! (review 20): `relocate` carries this project's sessions only, and nothing in another
//! directory ends the session of a project that moved and has not relocated it yet.

use std::path::{Path, PathBuf};

use crate::support::{Output, TestEnv};

/// A database in the test HOME's state directory, set as `STICKY_DB` for every directory.
fn shared_database(env: &mut TestEnv) -> PathBuf {
    let state = env.home.join(".local/state/sticky");
    std::fs::create_dir_all(&state).expect("the state directory");
    let database = state.join("shared.db");
    env.set_var("STICKY_DB", &database);
    database
}

/// A git project `name` beside the first.
fn second_project(env: &TestEnv, name: &str) -> PathBuf {
    let dir = env.root().join(name);
    std::fs::create_dir_all(&dir).expect("a second project");
    env.git(&dir, &["init", "-q"]);
    dir
}

/// The directory each thread's live session is recorded for, as `sticky sessions --json` in
/// `dir` lists them.
fn recorded(env: &TestEnv, dir: &Path) -> Vec<(String, String)> {
    let listed = env.ok_in(dir, ["sessions", "--json"]).json();
    let mut recorded: Vec<(String, String)> = listed["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter(|session| session["ended_at"].is_null())
        .map(|session| {
            let thread = session["thread"].as_str().unwrap_or_default().to_owned();
            let directory = session["directory"].as_str().unwrap_or_default().to_owned();
            (thread, directory)
        })
        .collect();
    recorded.sort();
    recorded
}

/// Review 20, M1: p and q share one `STICKY_DB`; p has threads `main` and `later`, q made
/// thread `qq` between them. After p moved, `relocate` there passes over `qq` (q still exists
/// and goes on with it), with a note naming q and the way to go on there, and carries both of
/// p's threads; q goes on with `qq`.
#[test]
fn relocate_passes_over_a_thread_another_existing_directory_sharing_sticky_db_goes_on_with() {
    let mut env = TestEnv::new();
    shared_database(&mut env);
    let main = env.turn("one in p");
    let q = second_project(&env, "q");
    let theirs = env.ok_in(&q, ["-t", "qq", "one in q"]).answer();
    let later = env.ok(["-t", "later", "later in p"]).answer();
    let moved = env.move_project();
    let relocate = env.ok_in(&moved, ["relocate"]);
    relocate
        .assert_stderr_contains(&format!(
            "thread qq: passed over: its session belongs to {}, which still exists",
            q.display()
        ))
        .assert_stderr_contains("thread main (")
        .assert_stderr_contains("thread later (");
    let again = env
        .ok_in(&moved, ["-t", "later", "more later work"])
        .answer();
    assert_eq!(again.session, later.session);
    assert_eq!(
        env.ok_in(&moved, ["two in p"]).answer().session,
        main.session
    );
    let in_q = env.ok_in(&q, ["-t", "qq", "two in q"]).answer();
    assert_eq!(in_q.session, theirs.session);
    assert_eq!(in_q.saw, ["one in q"]);
}

/// Review 20, M1's sibling: a thread `relocate` cannot carry stops it (here `later`, whose
/// transcript the agent swept while the vault is off), and the threads it carried before are
/// said all the same, so the user knows `main` goes on here already.
#[test]
fn relocate_stopped_by_a_thread_it_cannot_carry_says_what_it_carried_before() {
    let mut env = TestEnv::new();
    shared_database(&mut env);
    let main = env.turn("one in p");
    let later = env.ok(["-t", "later", "later in p"]).answer();
    std::fs::remove_file(env.transcript(&later.session)).expect("the agent swept it");
    let config = env.home.join(".config/sticky");
    std::fs::create_dir_all(&config).expect("the configuration directory");
    std::fs::write(config.join("config.toml"), "vault = false\n").expect("the vault off");
    let moved = env.move_project();
    env.sticky(["relocate"])
        .current_dir(&moved)
        .run()
        .assert_code(73)
        .assert_stderr_contains("thread later: claude no longer has session")
        .assert_stderr_contains(&format!(
            "thread main (claude session {}) moved from {} to {}",
            main.session,
            env.project.display(),
            moved.display()
        ));
    assert_eq!(
        env.ok_in(&moved, ["two in p"]).answer().session,
        main.session
    );
}

/// Review 20, M2: p and q share one `STICKY_DB` and both moved (`mv ~/code ~/src`). p's
/// `relocate` finds sessions of two gone directories, refuses (2) naming each and `--from`,
/// and changes nothing; `relocate --from` p's old directory carries p's alone, and q's own
/// `relocate` then carries q's (p's, recorded in p's new place, passed over). Each resumes its
/// own session only.
#[test]
fn relocate_carries_the_sessions_of_the_directory_named_by_from_when_several_are_gone() {
    let mut env = TestEnv::new();
    shared_database(&mut env);
    let ours = env.turn("one in p");
    let q = second_project(&env, "q");
    let theirs = env.ok_in(&q, ["-t", "qq", "one in q"]).answer();
    let moved = env.move_project();
    let q_moved = env.root().join("q-moved");
    std::fs::rename(&q, &q_moved).expect("move q");
    let before = recorded(&env, &moved);
    let refused = env.sticky(["relocate"]).current_dir(&moved).run();
    refused
        .assert_code(2)
        .assert_stderr_contains("recorded in 2 directories")
        .assert_stderr_contains(&format!("{} (thread main)", env.project.display()))
        .assert_stderr_contains(&format!("{} (thread qq)", q.display()))
        .assert_stderr_contains("nothing was changed")
        .assert_stderr_contains("`sticky relocate --from ");
    assert_eq!(recorded(&env, &moved), before, "nothing was carried");
    let from = env.project.to_str().expect("UTF-8");
    env.ok_in(&moved, ["relocate", "--from", from])
        .assert_stderr_contains(&format!(
            "thread qq: passed over: its session was recorded in {}",
            q.display()
        ));
    env.ok_in(&q_moved, ["relocate"]);
    let in_q = env.ok_in(&q_moved, ["-t", "qq", "two in q"]).answer();
    assert_eq!(in_q.session, theirs.session);
    let in_p = env.ok_in(&moved, ["two in p"]).answer();
    assert_eq!(in_p.session, ours.session);
    assert_eq!(in_p.saw, ["one in p"]);
}

/// Review 20, M2, a nested project: p's `.envrc` sets `STICKY_DB`, which its subdirectory
/// `sub` (`sticky init`, a thread `s` of its own) shares. p moved, sub with it: p's `relocate`
/// refuses the two gone directories; `--from` p's old directory carries `main` only, and sub's
/// own `relocate` carries `s`. A `--from` naming no recorded directory changes nothing and
/// names those there are.
#[test]
fn relocate_in_a_moved_project_sharing_sticky_db_with_a_nested_one_leaves_it_its_thread() {
    let mut env = TestEnv::new();
    shared_database(&mut env);
    let ours = env.turn("one in p");
    let sub = env.project_dir("sub");
    env.ok_in(&sub, ["init"]);
    let nested = env.ok_in(&sub, ["-t", "s", "one in sub"]).answer();
    let moved = env.move_project();
    env.sticky(["relocate"])
        .current_dir(&moved)
        .run()
        .assert_code(2);
    let elsewhere = env.root().join("elsewhere");
    env.sticky(["relocate", "--from", elsewhere.to_str().expect("UTF-8")])
        .current_dir(&moved)
        .run()
        .assert_code(2)
        .assert_stderr_contains(&format!(
            "no conversation here has a session recorded in {}",
            elsewhere.display()
        ))
        .assert_stderr_contains(&format!("{} (thread s)", env.project.join("sub").display()));
    env.ok_in(
        &moved,
        ["relocate", "--from", env.project.to_str().expect("UTF-8")],
    );
    env.ok_in(&moved.join("sub"), ["relocate"]);
    let in_sub = env
        .ok_in(&moved.join("sub"), ["-t", "s", "two in sub"])
        .answer();
    assert_eq!(in_sub.session, nested.session);
    assert_eq!(
        env.ok_in(&moved, ["two in p"]).answer().session,
        ours.session
    );
}

/// What q says of thread main, p's, once p moved without relocating it: the way to relocate
/// (if q is p, moved) and a thread or a database of q's own, never a bare `sticky new`.
#[track_caller]
fn a_moved_sharers(output: &Output, env: &TestEnv, database: &Path, code: i32) {
    output.assert_code(code).assert_stderr_contains(&format!(
        "belongs to directory {}, which is gone, and which used this very database ({}) too",
        env.project.display(),
        database.display()
    ));
    output
        .assert_stderr_contains("run `sticky relocate`")
        .assert_stderr_contains("`sticky -t NAME \"...\"`")
        .assert_stderr_contains("`env -u STICKY_DB sticky \"...\"`");
    assert!(
        !output.stderr.contains("run `sticky new`"),
        "no way out that ends p's session: {}",
        output.describe()
    );
}

/// Review 20, M4: p and q share one `STICKY_DB`; p moved and has not relocated yet. In q, the
/// turn (73) and `sticky new` (73) refuse thread main, p's, naming `relocate` and a thread or a
/// database of q's own; `forget` and `import --replace` (73) delete nothing. p's `relocate`
/// then carries its session, and p goes on with it.
#[test]
fn nothing_in_a_project_sharing_sticky_db_ends_a_moved_projects_session() {
    let mut env = TestEnv::new();
    let database = shared_database(&mut env);
    let first = env.turn("one in p");
    let elsewhere = TestEnv::new();
    elsewhere.turn("on another machine");
    let bundle = elsewhere.scratch.join("b.sticky");
    elsewhere.ok(["export", "-o", bundle.to_str().expect("UTF-8")]);
    let moved = env.move_project();
    let q = second_project(&env, "q");
    for args in [&["first in q"][..], &["new"], &["new", "fresh in q"]] {
        a_moved_sharers(&env.sticky(args).current_dir(&q).run(), &env, &database, 73);
    }
    let bundle = bundle.to_str().expect("UTF-8");
    for args in [
        &["forget", "--yes"][..],
        &["import", "--replace", "--yes", bundle],
    ] {
        let refused = env.sticky(args).current_dir(&q).run();
        refused
            .assert_code(73)
            .assert_stderr_contains("here would delete it; nothing was changed");
    }
    let doctor = env.sticky(["doctor"]).current_dir(&q).run();
    assert!(
        doctor
            .stdout
            .contains("which is gone, and which used this very database")
            && !doctor.stdout.contains("run `sticky new`"),
        "doctor names the same ways out: {}",
        doctor.describe()
    );
    env.ok_in(&moved, ["relocate"]);
    let again = env.ok_in(&moved, ["two in p"]).answer();
    assert_eq!(again.session, first.session);
    assert_eq!(again.saw, ["one in p"]);
}

/// Outside git, with `STICKY_DB` set (a direnv `.envrc` for a project that is no repository),
/// the project is the directory sticky runs in: its subdirectory was refused as "another
/// directory sharing the database (one `STICKY_DB` set for both)", first advised to unset the
/// variable, which would make it a project of its own (review 23, L5). The refusal says it is
/// the conversation of the directory above and names the command that goes on there, which
/// works as pasted.
#[test]
fn a_subdirectory_of_a_sticky_db_project_outside_git_is_sent_to_the_project_above() {
    let mut env = TestEnv::new();
    shared_database(&mut env);
    let project = env.root().join("plain");
    let below = project.join("src");
    std::fs::create_dir_all(&below).expect("a plain directory");
    let first = env.ok_in(&project, ["in the project"]).answer();
    let refused = env.sticky(["below it"]).current_dir(&below).run();
    refused
        .assert_code(73)
        .assert_stderr_contains(&format!(
            "thread main is the conversation of {}, a directory above this one",
            project.display()
        ))
        .assert_stderr_contains(&format!("sticky -C {} \"...\"", project.display()));
    let there = env
        .sticky(["-C", project.to_str().expect("UTF-8"), "from below"])
        .current_dir(&below)
        .run();
    there.assert_success();
    assert_eq!(there.answer().session, first.session);
}
