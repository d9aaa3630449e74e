//! A state kept where others may write (issue 23): a `STICKY_DB` in a shared directory, and
//! the files sticky keeps beside its database (the vault, the locks, the stamp, the WAL) when
//! another user made them, others may write them, or they are links. None may choose what the
//! agent resumes, or let two turns run one session.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::other_user::{chmod, give_to_nobody, is_root};
use crate::support::{TestEnv, skip};

/// A directory every user may write, as `/tmp` (`sticky`: with the sticky bit, 1777), or
/// without the sticky bit (0777), in the test's scratch directory.
fn shared_dir(env: &TestEnv, name: &str, sticky: bool) -> PathBuf {
    let dir = env.scratch.join(name);
    fs::create_dir_all(&dir).expect("create the shared directory");
    chmod(&dir, if sticky { 0o1777 } else { 0o777 });
    dir
}

#[test]
fn sticky_db_in_a_directory_every_user_may_write_without_the_sticky_bit_is_refused() {
    let env = TestEnv::new();
    let open = shared_dir(&env, "open", false);
    let db = open.join("sticky.db");
    let refused = env.sticky(["hello"]).env("STICKY_DB", &db).run();
    refused.assert_code(71);
    refused.assert_stderr_contains(&format!(
        "{}: refusing to use it: STICKY_DB ({}) keeps sticky's state in it, but every user may \
         write it (mode 0777) and it has no sticky bit",
        open.display(),
        db.display()
    ));
    // The way out names a directory of the user's own, never a shared one.
    refused.assert_stderr_contains(&format!(
        "set STICKY_DB to a file in a directory of your own (STICKY_DB={})",
        env.home.join(".local/state/sticky/sticky.db").display()
    ));
    assert_eq!(env.agent_runs().len(), 0, "the agent never ran");
    assert_eq!(fs::read_dir(&open).unwrap().count(), 0, "nothing created");
    // Nor below it, in a directory sticky would create there.
    let below = open.join("mine/sticky.db");
    env.sticky(["hello"])
        .env("STICKY_DB", &below)
        .run()
        .assert_code(71);
    assert!(!open.join("mine").exists());
    // With the sticky bit (as /tmp has), others cannot rename what is the user's.
    chmod(&open, 0o1777);
    let first = env.sticky(["hello"]).env("STICKY_DB", &db).run();
    first.assert_success();
    let again = env.sticky(["again"]).env("STICKY_DB", &db).run();
    assert_eq!(again.answer().session, first.answer().session);
}

#[test]
fn sticky_db_naming_a_shared_directory_is_not_told_to_keep_the_state_there() {
    let env = TestEnv::new();
    let tmp = shared_dir(&env, "tmp", true);
    let refused = env.sticky(["hello"]).env("STICKY_DB", &tmp).run();
    refused.assert_code(2);
    refused.assert_stderr_contains(&format!(
        "name a file in a directory of your own (STICKY_DB={}",
        env.home.join(".local/state/sticky/sticky.db").display()
    ));
    assert!(
        !refused
            .stderr
            .contains(&tmp.join("sticky.db").display().to_string()),
        "{}",
        refused.stderr
    );
}

/// Every file sticky keeps beside a `STICKY_DB` database, made by a turn: what the attacks
/// below plant or take over.
const COMPANIONS: &[&str] = &[
    "sticky.db",
    "sticky.db-wal",
    "sticky.db-shm",
    "sticky.db.stamp",
    "sticky.db.locks",
    "sticky.db.vault",
];

/// A turn on `db` (`STICKY_DB`, else the project's `.sticky/`) is refused (71) naming `path`
/// and `why`, and the agent does not run.
#[track_caller]
fn assert_refused(env: &TestEnv, db: Option<&Path>, path: &Path, why: &str) {
    let runs = env.agent_runs().len();
    let mut turn = env.sticky(["go on"]);
    if let Some(db) = db {
        turn = turn.env("STICKY_DB", db);
    }
    let refused = turn.run();
    refused.assert_code(71);
    refused.assert_stderr_contains(&format!("{}: refusing to use it: {why}", path.display()));
    assert_eq!(env.agent_runs().len(), runs, "the agent never ran");
}

#[test]
fn companions_others_may_write_are_refused_in_a_shared_directory_and_in_sticky() {
    let env = TestEnv::new();
    let shared = shared_dir(&env, "pub", true);
    let moved = shared.join("sticky.db");
    let first = env.sticky(["first"]).env("STICKY_DB", &moved).run();
    first.assert_success();
    // A state of its own in .sticky/ too, started on purpose (review 16, M4: a plain first
    // turn there is refused, naming the STICKY_DB database the list has for the project).
    env.ok(["new", "in .sticky"]);
    let state = env.project.join(".sticky");
    for (dir, db) in [(&shared, Some(moved.as_path())), (&state, None)] {
        for name in COMPANIONS {
            let path = dir.join(name);
            assert!(path.exists(), "{} after a turn", path.display());
            let mode = if path.is_dir() { 0o700 } else { 0o600 };
            chmod(&path, mode | 0o002);
            assert_refused(
                &env,
                db,
                &path,
                &format!("can be written by other users (mode {:04o})", mode | 0o002),
            );
            chmod(&path, mode | 0o020);
            assert_refused(&env, db, &path, "can be written by other users");
            chmod(&path, mode);
        }
    }
    let again = env.sticky(["again"]).env("STICKY_DB", &moved).run();
    assert_eq!(
        again.answer().session,
        first.answer().session,
        "all put right"
    );
}

#[test]
fn companions_another_user_made_beside_sticky_db_are_refused() {
    if !is_root() {
        skip("needs root to give files to another user (CI runs as root)");
        return;
    }
    let env = TestEnv::new();
    let shared = shared_dir(&env, "pub", true);
    let db = shared.join("sticky.db");
    // The attack: another user makes the vault and the locks before the user's first turn
    // (0777, theirs), to plant a transcript in the vault or remove a turn's lock.
    for name in ["sticky.db.vault", "sticky.db.locks"] {
        let path = shared.join(name);
        fs::create_dir(&path).unwrap();
        chmod(&path, 0o700);
        give_to_nobody(&path);
        assert_refused(
            &env,
            Some(&db),
            &path,
            "is owned by another user (uid 65534, you are uid 0)",
        );
        assert!(!db.exists(), "no database created beside it");
        fs::remove_dir(&path).unwrap();
    }
    let first = env.sticky(["first"]).env("STICKY_DB", &db).run();
    first.assert_success();
    // Taken over after it: every file and directory beside the database, and itself.
    for name in COMPANIONS {
        let path = shared.join(name);
        give_to_nobody(&path);
        assert_refused(
            &env,
            Some(&db),
            &path,
            "is owned by another user (uid 65534, you are uid 0)",
        );
        std::os::unix::fs::chown(&path, Some(0), Some(0)).unwrap();
    }
    // The same in the project's own .sticky/.
    // A state of its own in .sticky/ too, started on purpose (review 16, M4: a plain first
    // turn there is refused, naming the STICKY_DB database the list has for the project).
    env.ok(["new", "in .sticky"]);
    let state = env.project.join(".sticky");
    for name in COMPANIONS {
        let path = state.join(name);
        give_to_nobody(&path);
        assert_refused(&env, None, &path, "is owned by another user");
        std::os::unix::fs::chown(&path, Some(0), Some(0)).unwrap();
    }
    let again = env.sticky(["again"]).env("STICKY_DB", &db).run();
    assert_eq!(again.answer().session, first.answer().session);
}

#[test]
fn sticky_db_in_a_directory_of_another_user_is_refused() {
    if !is_root() {
        skip("needs root to give a directory to another user (CI runs as root)");
        return;
    }
    let env = TestEnv::new();
    let theirs = env.scratch.join("theirs");
    fs::create_dir(&theirs).unwrap();
    chmod(&theirs, 0o755);
    give_to_nobody(&theirs);
    let db = theirs.join("sticky.db");
    let refused = env.sticky(["hello"]).env("STICKY_DB", &db).run();
    refused.assert_code(71);
    refused.assert_stderr_contains(&format!(
        "{}: refusing to use it: STICKY_DB ({}) keeps sticky's state in it, but it is owned by \
         another user (uid 65534, you are uid 0)",
        theirs.display(),
        db.display()
    ));
    assert_eq!(fs::read_dir(&theirs).unwrap().count(), 0, "nothing created");
}

#[test]
fn a_companion_that_is_a_link_is_named_with_the_way_out_not_a_writable_path() {
    let env = TestEnv::new();
    let elsewhere = env.scratch.join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    let mine = env.scratch.join("mine");
    fs::create_dir(&mine).unwrap();
    let moved = mine.join("sticky.db");
    env.sticky(["first"])
        .env("STICKY_DB", &moved)
        .run()
        .assert_success();
    // A state of its own in .sticky/ too, started on purpose (review 16, M4: a plain first
    // turn there is refused, naming the STICKY_DB database the list has for the project).
    env.ok(["new", "in .sticky"]);
    let state = env.project.join(".sticky");
    for (dir, db) in [(&mine, Some(moved.as_path())), (&state, None)] {
        for name in ["sticky.db.locks", "sticky.db.vault"] {
            let path = dir.join(name);
            let kept = dir.join(format!("{name}.kept"));
            fs::rename(&path, &kept).unwrap();
            std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
            let mut turn = env.sticky(["go on"]);
            if let Some(db) = db {
                turn = turn.env("STICKY_DB", db);
            }
            let refused = turn.run();
            refused.assert_code(71);
            refused.assert_stderr_contains(&format!(
                "{}: refusing to use it: is a symbolic link to {}, and sticky follows no link \
                 among the files beside its database",
                path.display(),
                elsewhere.display()
            ));
            refused.assert_stderr_contains(&format!("remove the link (rm {})", path.display()));
            assert!(
                !refused.stderr.contains("writable path"),
                "{}",
                refused.stderr
            );
            fs::remove_file(&path).unwrap();
            fs::rename(&kept, &path).unwrap();
        }
    }
}
