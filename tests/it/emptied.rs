//! A database emptied or deleted where sticky had written it (issue 23): `SQLite` takes a
//! zero-byte file for an empty database, so without a check a truncated `sticky.db` silently
//! started a new conversation. Beside its vault or its stamp, it is damage (exit 71), the file
//! left as it is, and the way out sticky names works.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::TestEnv;

/// `.sticky/<name>` of `env`'s project.
fn state(env: &TestEnv, name: &str) -> PathBuf {
    env.project.join(".sticky").join(name)
}

/// Runs the `rm` commands sticky named as the way out in `stderr` (in parentheses, `rm -r ...`
/// or `rm -f ...`), as a user would paste them.
fn run_way_out(stderr: &str) {
    let mut ran = 0;
    for part in stderr.split('(').skip(1) {
        let Some(command) = part.split(')').next() else {
            continue;
        };
        if !command.starts_with("rm ") {
            continue;
        }
        let status = std::process::Command::new("sh")
            .args(["-c", command])
            .status()
            .expect("run the way out");
        assert!(status.success(), "{command}");
        ran += 1;
    }
    assert!(ran > 0, "a way out to run in {stderr}");
}

/// A turn is refused (71) with `says`, the agent does not run and the database stays as it was.
#[track_caller]
fn assert_refused(env: &TestEnv, args: &[&str], config: Option<&Path>, says: &str) -> String {
    let runs = env.agent_runs().len();
    let db = state(env, "sticky.db");
    let before = fs::read(&db).ok();
    let mut run = env.sticky(args);
    if let Some(config) = config {
        run = run.env("STICKY_CONFIG", config);
    }
    let refused = run.run();
    refused.assert_code(71);
    refused.assert_stderr_contains(&format!("{}: {says}", db.display()));
    assert_eq!(env.agent_runs().len(), runs, "the agent never ran");
    assert_eq!(fs::read(&db).ok(), before, "the database untouched");
    refused.stderr.clone()
}

/// What a turn says of `env`'s truncated database beside its vault.
fn emptied_beside_vault(env: &TestEnv) -> String {
    format!(
        "refusing to start a fresh conversation: the database is empty (0 bytes), but its vault \
         {} still holds its sessions' files, so it was truncated or emptied",
        state(env, "sticky.db.vault").display()
    )
}

/// Checks that `env`'s truncated database is refused by a turn and `status` beside its vault,
/// then by a turn beside its stamp alone, with `kept` (files beside it) untouched throughout,
/// and that the way out named starts a new conversation, not `first`'s.
#[track_caller]
fn assert_refused_then_started_over(env: &TestEnv, first: &str, kept: &[&str]) {
    let before: Vec<_> = kept
        .iter()
        .map(|name| fs::read(state(env, name)).ok())
        .collect();
    let mut stderr = String::new();
    for args in [&["after truncate"][..], &["status"]] {
        stderr = assert_refused(env, args, None, &emptied_beside_vault(env));
    }
    assert!(stderr.contains("rm -r "), "{stderr}");
    // Without the vault, the stamp still records the file sticky wrote.
    fs::remove_dir_all(state(env, "sticky.db.vault")).expect("remove the vault");
    let stderr = assert_refused(
        env,
        &["after truncate"],
        None,
        &format!(
            "refusing to start a fresh conversation: the database is empty (0 bytes), but its \
             stamp {} says sticky made it and wrote it",
            state(env, "sticky.db.stamp").display()
        ),
    );
    let after: Vec<_> = kept
        .iter()
        .map(|name| fs::read(state(env, name)).ok())
        .collect();
    assert_eq!(after, before, "{kept:?} untouched");
    run_way_out(&stderr);
    let fresh = env.turn("afresh");
    assert_ne!(fresh.session, first, "started over, as asked");
    assert_eq!(env.turn("and on").session, fresh.session);
}

#[test]
fn a_truncated_database_beside_its_vault_is_71_untouched_and_the_way_out_starts_over() {
    let env = TestEnv::new();
    let first = env.turn("first");
    for name in ["sticky.db-wal", "sticky.db-shm"] {
        let _ = fs::remove_file(state(&env, name));
    }
    fs::write(state(&env, "sticky.db"), b"").expect("truncate the database");
    assert_refused_then_started_over(&env, &first.session, &[]);
}

/// Review 10: the same truncation as sticky's state is between turns, with the WAL it keeps
/// beside the database (`store/open.rs`: not checkpointed away at the end of a run). The WAL
/// holds only the pages written since the last checkpoint, not the conversation; yet its bytes
/// passed for "a WAL holding its pages", and the turn silently started a new conversation (exit
/// 0, a new session) where the vault and the stamp say the database was truncated.
#[test]
fn review_a_truncated_database_with_its_wal_beside_it_starts_a_new_conversation() {
    let env = TestEnv::new();
    let first = env.turn("first");
    env.turn("second");
    assert!(
        fs::metadata(state(&env, "sticky.db-wal")).is_ok_and(|meta| meta.len() > 0),
        "the WAL stays beside the database between turns"
    );
    fs::write(state(&env, "sticky.db"), b"").expect("truncate the database");
    assert_refused_then_started_over(&env, &first.session, &["sticky.db-wal"]);
}

#[test]
fn a_deleted_database_beside_its_stamp_with_the_vault_off_is_71_and_the_way_out_works() {
    let env = TestEnv::new();
    let config = env.scratch.join("config.toml");
    fs::write(&config, "vault = false\n").expect("write the config");
    let first = env.sticky(["first"]).env("STICKY_CONFIG", &config).run();
    first.assert_success();
    for name in ["sticky.db", "sticky.db-wal", "sticky.db-shm"] {
        let _ = fs::remove_file(state(&env, name));
    }
    let stderr = assert_refused(
        &env,
        &["after delete"],
        Some(&config),
        &format!(
            "refusing to start a fresh conversation: the database is missing, but its stamp {} \
             says sticky made one here",
            state(&env, "sticky.db.stamp").display()
        ),
    );
    assert!(!state(&env, "sticky.db").exists(), "no database made");
    run_way_out(&stderr);
    let fresh = env.sticky(["afresh"]).env("STICKY_CONFIG", &config).run();
    fresh.assert_success();
    assert_ne!(fresh.answer().session, first.answer().session);
}

#[test]
fn a_zero_byte_database_sticky_never_stamped_starts_as_a_new_one() {
    // What a first run leaves when it dies between creating the file and writing its schema:
    // no stamp, no vault, nothing lost.
    let env = TestEnv::new();
    fs::create_dir_all(state(&env, "")).expect("create .sticky");
    fs::write(state(&env, "sticky.db"), b"").expect("an empty database file");
    let first = env.turn("first");
    assert_eq!(env.turn("second").session, first.session);
}

/// `sticky trust` on a truncated database (with the WAL sticky keeps or without it) said "is
/// already yours" and wrote an empty schema into it, after which the next turn started a new
/// conversation without a word: trust refuses it as a turn does, the file untouched.
#[test]
fn trust_refuses_a_truncated_database_as_a_turn_does_and_writes_nothing() {
    for keep_wal in [true, false] {
        let env = TestEnv::new();
        env.turn("first");
        env.turn("second");
        if !keep_wal {
            for name in ["sticky.db-wal", "sticky.db-shm"] {
                let _ = fs::remove_file(state(&env, name));
            }
        }
        fs::write(state(&env, "sticky.db"), b"").expect("truncate the database");
        for args in [&["trust"][..], &["after trust"]] {
            assert_refused(&env, args, None, &emptied_beside_vault(&env));
        }
    }
}

/// Review 11: `echo > .sticky/sticky.db` leaves one byte ("\n"), and `SQLite`'s unix VFS reports
/// a one-byte file as zero bytes (`os_unix.c`, `unixFileSize`: the byte it writes itself into a
/// new file), so to `SQLite` it is an empty database. `check_not_emptied` asks for zero bytes
/// only, so the turn silently starts a new conversation (exit 0, a new session), with the WAL
/// or without it, and `trust` says "is already yours", though the vault and the stamp say
/// sticky wrote this database.
#[test]
fn review_a_database_emptied_to_one_byte_by_echo_starts_a_new_conversation() {
    for keep_wal in [true, false] {
        let env = TestEnv::new();
        let first = env.turn("first");
        env.turn("second");
        if !keep_wal {
            for name in ["sticky.db-wal", "sticky.db-shm"] {
                let _ = fs::remove_file(state(&env, name));
            }
        }
        fs::write(state(&env, "sticky.db"), b"\n").expect("echo > sticky.db");
        let runs = env.agent_runs().len();
        let third = env.sticky(["after echo"]).run();
        assert_eq!(
            env.agent_runs().len(),
            runs,
            "keep_wal={keep_wal}: the agent ran on an emptied database (first session {}): {}",
            first.session,
            third.stderr
        );
        third
            .assert_code(71)
            .assert_stderr_contains("1 byte, which SQLite reads as an empty database");
        env.sticky(["trust"]).run().assert_code(71);
        assert_eq!(
            fs::read(state(&env, "sticky.db")).expect("read the database"),
            b"\n",
            "the emptied database was written"
        );
    }
}
