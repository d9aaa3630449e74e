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

/// M1: two projects share one `STICKY_DB` (a shell profile's line). p has threads `main` and
/// `later`; q made thread `qq` between them. p is moved (`mv p renamed`): its turn on `later`
/// says "run `sticky relocate`", and relocate stops at q's thread `qq` (exit 2, "nothing is
/// lost"), before `later`, which it never carries. Each retry says the same, so `later`'s
/// session is reached only by `sticky -t later new`, which leaves it behind. Relocate should
/// pass over a thread another existing directory sharing the database goes on with (it is not
/// this project's to move) and carry this project's own.
#[test]
fn review20_relocate_in_a_moved_project_sharing_sticky_db_stops_at_another_projects_thread() {
    let mut env = TestEnv::new();
    let database = state_database(&env, "shared.db");
    env.set_var("STICKY_DB", &database);
    env.ok(["one in p"]);
    let q = second_project(&env, "q");
    env.ok_in(&q, ["-t", "qq", "one in q"]);
    let later = env.ok(["-t", "later", "later in p"]).answer();
    let moved = env.move_project();
    let relocate = env.sticky(["relocate"]).current_dir(&moved).run();
    let again = env
        .sticky(["-t", "later", "more later work"])
        .current_dir(&moved)
        .run();
    again.assert_success();
    assert_eq!(
        again.answer().session,
        later.session,
        "p's thread later was not carried by relocate: {}",
        relocate.describe()
    );
}

/// M2: two projects share one `STICKY_DB`, and both move (`mv ~/code ~/src`, which holds both).
/// `sticky relocate` in p, as p's turn advises, carries every live session whose directory is
/// gone, q's thread `qq` too: it is recorded for p from then on, p's turns resume q's agent
/// session (the model sees q's conversation in p), and q's own `relocate` and turns are refused
/// as p's conversation. A session recorded for another gone directory is no move of this
/// project's: relocate should leave it for that directory's own relocate.
#[test]
fn review20_relocate_in_a_moved_project_sharing_sticky_db_takes_another_moved_projects_session() {
    let mut env = TestEnv::new();
    let database = state_database(&env, "shared.db");
    env.set_var("STICKY_DB", &database);
    env.ok(["one in p"]);
    let q = second_project(&env, "q");
    let theirs = env.ok_in(&q, ["-t", "qq", "one in q"]).answer();
    let moved = env.move_project();
    let q_moved = env.root().join("q-moved");
    std::fs::rename(&q, &q_moved).expect("move q");
    let relocated = env.ok_in(&moved, ["relocate"]);
    let in_q = env.sticky(["relocate"]).current_dir(&q_moved).run();
    let again = env
        .sticky(["-t", "qq", "more work in q"])
        .current_dir(&q_moved)
        .run();
    again.assert_success();
    assert_eq!(
        again.answer().session,
        theirs.session,
        "q's thread qq was taken by p's relocate: {}\n{}",
        relocated.describe(),
        in_q.describe()
    );
    let in_p = env
        .sticky(["-t", "qq", "work in p"])
        .current_dir(&moved)
        .run();
    if in_p.code == Some(0) {
        assert_ne!(
            in_p.answer().session,
            theirs.session,
            "p resumed q's session"
        );
    }
}
