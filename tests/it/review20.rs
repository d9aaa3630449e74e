//! Review 20: where a project's state is, and which session a turn resumes.

use std::path::PathBuf;

use crate::support::TestEnv;

/// A database in the test HOME's state directory, for `STICKY_DB`.
fn state_database(env: &TestEnv, name: &str) -> PathBuf {
    let state = env.home.join(".local/state/sticky");
    std::fs::create_dir_all(&state).expect("the state directory");
    state.join(name)
}

/// A second git project `name` beside the first.
fn second_project(env: &TestEnv, name: &str) -> PathBuf {
    let dir = env.root().join(name);
    std::fs::create_dir_all(&dir).expect("a second project");
    env.git(&dir, &["init", "-q"]);
    dir
}

/// M3: a project keeps its state in a `STICKY_DB` inside it (`.state/sticky.db`, relative, ignored
/// by git). It moved once (`mv`, then `sticky relocate`), and was later copied (`cp -a`); then
/// sticky's data directory is lost (key and list). In the copy, `sticky trust` and the turn say
/// the moved original "holds no sticky state (a directory made again at that path)" and advise
/// `sticky relocate`, which carries the original's session into the copy: the original's next
/// turn is refused, its conversation gone to the copy. The database records where it was kept
/// (`kept_at`) only before the move, and a turn in the original with this very `STICKY_DB`
/// would use its `.state/sticky.db`: relocate should see the original and refuse, as it does
/// for a `.sticky/`.
#[test]
fn review20_a_copy_of_a_moved_project_with_sticky_db_inside_takes_the_originals_session() {
    let mut env = TestEnv::new();
    std::fs::write(env.project.join(".gitignore"), ".state/\n").expect("ignore .state/");
    std::fs::create_dir_all(env.project.join(".state")).expect("the state directory");
    env.set_var("STICKY_DB", ".state/sticky.db");
    let first = env.turn("one in p");
    let moved = env.move_project();
    env.ok_in(&moved, ["relocate"]);
    env.ok_in(&moved, ["two in the moved project"]);
    let copy = env.root().join("copy");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(&moved)
        .arg(&copy)
        .status();
    assert!(copied.is_ok_and(|status| status.success()), "cp -a");
    std::fs::remove_dir_all(env.home.join(".local/share/sticky")).expect("lose the data directory");
    env.ok_in(&copy, ["trust"]);
    let relocate = env.sticky(["relocate"]).current_dir(&copy).run();
    env.ok_in(&moved, ["trust"]);
    let again = env
        .sticky(["three in the moved project"])
        .current_dir(&moved)
        .run();
    again.assert_success();
    assert_eq!(
        again.answer().session,
        first.session,
        "the copy's relocate took the original's session: {}",
        relocate.describe()
    );
}

/// M6: the user moves a project's state from `.sticky/` to a `STICKY_DB` by copying the file
/// (`cp .sticky/sticky.db ~/.local/state/sticky/p.db`; "a copy of the file alone keeps every
/// session"). The copy has no `<db>.stamp` beside it, so it is taken for a database "made by a
/// sticky older than stamps" and adopted on first use, without a word: no exit 71, no `sticky
/// trust`, though docs/security.md says a copy of the user's own state "is a new file, so it is
/// refused too". From then on both databases resume the one agent session (a shell with
/// `STICKY_DB` and one without), each recording only its own turns. A database whose schema
/// postdates stamps (it records `kept_at`, migration 9) cannot be older than stamps: without its
/// stamp it is a copy, and should be refused as one.
#[test]
fn review20_a_copy_of_a_database_without_its_stamp_is_adopted_as_one_older_than_stamps() {
    let env = TestEnv::new();
    env.turn("one in p");
    let database = state_database(&env, "p.db");
    std::fs::copy(env.project.join(".sticky/sticky.db"), &database).expect("copy the database");
    let copy = env
        .sticky(["with the copy"])
        .env("STICKY_DB", &database)
        .run();
    assert_eq!(
        copy.code,
        Some(71),
        "a copy of the database was adopted: {}",
        copy.describe()
    );
}
