//! One `STICKY_DB` several directories share (a shell profile's line), once one of them moved
//! (review 20): nothing in another directory ends the session of a project that moved and has
//! not relocated it yet.

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
