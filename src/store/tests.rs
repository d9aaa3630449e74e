//! The store's behaviour: files and modes, the row lifecycle, refusals that leave a file
//! untouched, and many openers at once (threads and real processes).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::bail;

use super::*;
use crate::agent::ledger::Figures;
use crate::exit::{Exit, exit_for};

/// A fresh temp dir and the default database path inside it (nothing created yet).
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("proj/.sticky/sticky.db");
    (dir, db)
}

/// A [`project`] whose `.sticky/` directory was made by hand, with no database in it.
fn project_with_state_dir() -> (tempfile::TempDir, PathBuf) {
    let (dir, db) = project();
    fs::create_dir_all(db.parent().unwrap()).unwrap();
    (dir, db)
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn session<'a>(directory: &'a Path, rotated_from: Option<(i64, &'a str)>) -> NewSession<'a> {
    NewSession {
        agent: "claude",
        model: Some("opus"),
        agent_session_id: Some("4f1c"),
        directory,
        rotated_from,
        carried: None,
    }
}

/// The read-then-write a turn start does: thread, live session (started if missing), turn.
fn start_turn(store: &mut Store, pid: u32) -> Result<(i64, i64)> {
    store.immediate(|tx| {
        let thread = tx.ensure_thread("main")?;
        let session = match tx.live_session(thread.id)? {
            Some(session) => session,
            None => tx.start_session(thread.id, &session(Path::new("/p"), None))?,
        };
        let turn = tx.begin_turn(session.id, Some("hi"), Mode::Headless, pid, "host")?;
        Ok((session.id, turn))
    })
}

/// Counts rows with a plain connection, to check what the store wrote.
fn count(db: &Path, table: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
        row.get(0)
    })
    .unwrap()
}

#[test]
fn open_creates_a_private_directory_with_a_gitignore_and_a_private_file() {
    let (_dir, db) = project();
    let store = Store::open(&db).unwrap();
    let state = db.parent().unwrap();
    assert_eq!(store.path(), db);
    assert_eq!(mode(state), 0o700);
    assert_eq!(fs::read_to_string(state.join(".gitignore")).unwrap(), "*\n");
    assert_eq!(mode(&db), 0o600);
    assert_eq!(
        mode(&state.join("sticky.db-wal")),
        0o600,
        "the WAL inherits the mode"
    );

    let conn = &store.conn;
    let pragma = |name: &str| -> String {
        conn.query_row(&format!("SELECT * FROM pragma_{name}"), [], |row| {
            row.get::<_, rusqlite::types::Value>(0)
                .map(|value| format!("{value:?}"))
        })
        .unwrap()
    };
    assert_eq!(pragma("journal_mode"), r#"Text("wal")"#);
    assert_eq!(pragma("foreign_keys"), "Integer(1)");
    assert_eq!(pragma("synchronous"), "Integer(1)", "NORMAL");
    assert_eq!(pragma("busy_timeout"), "Integer(10000)");
    assert_eq!(
        pragma("user_version"),
        format!("Integer({})", schema::LATEST)
    );
    drop(store);

    // Opening again changes nothing and keeps the data.
    let mut store = Store::open(&db).unwrap();
    start_turn(&mut store, 1).unwrap();
    drop(store);
    let store = Store::open(&db).unwrap();
    assert_eq!(store.threads().unwrap().len(), 1);
}

#[test]
fn only_a_sticky_directory_gets_a_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cache/state.db");
    Store::open(&db).unwrap();
    assert_eq!(mode(db.parent().unwrap()), 0o700);
    assert!(!dir.path().join("cache/.gitignore").exists());
}

#[test]
fn an_existing_sticky_directory_gets_its_gitignore_back_with_the_database() {
    let (_dir, db) = project_with_state_dir();
    Store::open(&db).unwrap();
    assert_eq!(
        fs::read_to_string(db.with_file_name(".gitignore")).unwrap(),
        "*\n"
    );
}

#[test]
fn an_empty_file_is_a_new_database() {
    let (_dir, db) = project_with_state_dir();
    fs::write(&db, b"").unwrap();
    let mut store = Store::open_existing(&db).unwrap().unwrap();
    start_turn(&mut store, 1).unwrap();
}

#[test]
fn open_existing_creates_nothing() {
    let (dir, db) = project();
    assert!(Store::open_existing(&db).unwrap().is_none());
    assert!(!dir.path().join("proj").exists());
    Store::open(&db).unwrap();
    assert!(Store::open_existing(&db).unwrap().is_some());
}

/// Checks what `start_turn` wrote after `before`: the thread `main`, its live session and
/// the running turn; returns the thread.
#[track_caller]
fn assert_started(
    store: &mut Store,
    (session_id, turn_id): (i64, i64),
    before: Millis,
) -> ThreadRow {
    let thread = store.thread("main").unwrap().unwrap();
    assert!(thread.created_at >= before);
    let live = store.live_session(thread.id).unwrap().unwrap();
    assert_eq!(live.id, session_id);
    assert_eq!(
        (
            live.agent.as_str(),
            live.model.as_deref(),
            live.agent_session_id.as_deref()
        ),
        ("claude", Some("opus"), Some("4f1c"))
    );
    assert_eq!(
        (live.directory.as_path(), live.confirmed_at),
        (Path::new("/p"), None)
    );

    let running = store
        .immediate(|tx| tx.running_turn(session_id))
        .unwrap()
        .unwrap();
    assert_eq!(running.id, turn_id);
    assert_eq!(
        (running.status, running.pid, running.mode),
        (TurnStatus::Running, 4242, Mode::Headless)
    );
    assert_eq!((running.ended_at, running.duration_ms), (None, None));
    thread
}

#[test]
fn a_turn_is_recorded_from_start_to_end() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    assert_eq!(store.thread("main").unwrap(), None);
    let before = now();
    let (session_id, turn_id) = start_turn(&mut store, 4242).unwrap();
    let thread = assert_started(&mut store, (session_id, turn_id), before);

    // Pretend the turn started 1.5 s ago, so the duration is visible.
    store
        .conn
        .execute(
            "UPDATE turns SET started_at = started_at - 1500 WHERE id = ?1",
            [turn_id],
        )
        .unwrap();
    let end = TurnEnd {
        status: Some(TurnStatus::Ok),
        exit_code: Some(0),
        ledger: TurnLedger {
            figures: Figures {
                cost_usd: Some(0.25),
                input_tokens: Some(10),
                output_tokens: Some(20),
                cached_tokens: None,
            },
            ..TurnLedger::default()
        },
        ..TurnEnd::default()
    };
    store.finish_turn(turn_id, &end).unwrap();
    let last = store.last_turn(thread.id).unwrap().unwrap();
    assert_eq!(last.status, TurnStatus::Ok);
    assert_eq!(
        last.duration_ms,
        Some(last.ended_at.unwrap() - last.started_at)
    );
    assert!(last.duration_ms.unwrap() >= 1500);
    assert_eq!(
        (last.exit_code, last.signal, last.ledger.figures.cost_usd),
        (Some(0), None, Some(0.25))
    );
    assert_eq!(
        (
            last.ledger.figures.input_tokens,
            last.ledger.figures.output_tokens
        ),
        (Some(10), Some(20))
    );
    assert_eq!(last.prompt.as_deref(), Some("hi"));
    assert_eq!(
        store.immediate(|tx| tx.running_turn(session_id)).unwrap(),
        None
    );

    // A status must be final.
    let error = store.finish_turn(turn_id, &TurnEnd::default()).unwrap_err();
    assert!(error.to_string().contains("final status"), "{error}");
    assert!(store.finish_turn(999, &end).is_err(), "no such turn");
}

/// The statements compiled on `conn` right now (cached or in use): each one's text and how many
/// times it has run.
#[allow(unsafe_code)]
fn compiled(conn: &rusqlite::Connection) -> Vec<(String, i32)> {
    use rusqlite::ffi;
    let mut statements = Vec::new();
    // SAFETY: the handle is the live connection's, used by nothing else meanwhile;
    // sqlite3_next_stmt walks its statements, sqlite3_sql and sqlite3_stmt_status only read
    // one, and the text is copied before the next call.
    unsafe {
        let db = conn.handle();
        let mut statement = ffi::sqlite3_next_stmt(db, std::ptr::null_mut());
        while !statement.is_null() {
            let sql = std::ffi::CStr::from_ptr(ffi::sqlite3_sql(statement));
            let runs = ffi::sqlite3_stmt_status(statement, ffi::SQLITE_STMTSTATUS_RUN, 0);
            statements.push((sql.to_string_lossy().into_owned(), runs));
            statement = ffi::sqlite3_next_stmt(db, statement);
        }
    }
    statements
}

#[test]
fn a_turn_end_runs_the_statements_compiled_while_the_agent_ran() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    let (session_id, turn_id) = start_turn(&mut store, 1).unwrap();
    let before = compiled(&store.conn);
    store.compile_turn_end();
    let ready: Vec<String> = compiled(&store.conn)
        .into_iter()
        .filter(|statement| !before.contains(statement))
        .map(|(sql, _)| sql)
        .collect();
    assert_eq!(ready.len(), 4, "{ready:?}");
    store.confirm_session(session_id).unwrap();
    let end = TurnEnd {
        status: Some(TurnStatus::Ok),
        ledger: TurnLedger {
            figures: Figures {
                cost_usd: Some(0.5),
                ..Figures::default()
            },
            ..TurnLedger::default()
        },
        answer: Some("done".to_owned()),
        ..TurnEnd::default()
    };
    store.finish_turn(turn_id, &end).unwrap();
    // Each ran: the end compiled none of them again.
    let unused: Vec<_> = compiled(&store.conn)
        .into_iter()
        .filter(|(sql, runs)| ready.contains(sql) && *runs == 0)
        .collect();
    assert!(unused.is_empty(), "compiled but not run: {unused:?}");
    let session = store.session(session_id).unwrap().unwrap();
    assert!(session.confirmed_at.is_some());
    let turn = store.turn(turn_id).unwrap().unwrap();
    assert_eq!(
        (turn.status, turn.ledger.figures.cost_usd),
        (TurnStatus::Ok, Some(0.5))
    );
}

/// A turn's end with these figures.
fn ended(cost_usd: Option<f64>, input: Option<i64>, output: Option<i64>) -> TurnEnd {
    TurnEnd {
        status: Some(TurnStatus::Ok),
        ledger: TurnLedger {
            figures: Figures {
                cost_usd,
                input_tokens: input,
                output_tokens: output,
                cached_tokens: input.map(|input| input / 2),
            },
            ..TurnLedger::default()
        },
        ..TurnEnd::default()
    }
}

/// The ledger of a session (`Some`) or thread as `sum` over its turns gives it.
fn summed(store: &Store, session: Option<i64>, thread: i64) -> Totals {
    let turns = store.turns(thread).unwrap();
    let turns: Vec<_> = turns
        .iter()
        .filter(|turn| session.is_none_or(|id| turn.session_id == id))
        .collect();
    let sum = |figure: &dyn Fn(&Figures) -> Option<i64>| {
        turns
            .iter()
            .filter_map(|turn| figure(&turn.ledger.figures))
            .reduce(|a, b| a + b)
    };
    Totals {
        turns: i64::try_from(turns.len()).unwrap(),
        figures: Figures {
            cost_usd: turns
                .iter()
                .filter_map(|turn| turn.ledger.figures.cost_usd)
                .reduce(|a, b| a + b),
            input_tokens: sum(&|figures| figures.input_tokens),
            output_tokens: sum(&|figures| figures.output_tokens),
            cached_tokens: sum(&|figures| figures.cached_tokens),
        },
    }
}

#[test]
fn the_ledger_totals_follow_every_turn_end_rotation_and_import() {
    let (dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    let (first, one) = start_turn(&mut store, 1).unwrap();
    store
        .finish_turn(one, &ended(Some(0.25), Some(10), Some(20)))
        .unwrap();
    // Recorded twice (a retry after a store error): counted once.
    store
        .finish_turn(one, &ended(Some(0.25), Some(10), Some(20)))
        .unwrap();
    let (_, two) = start_turn(&mut store, 2).unwrap();
    store.finish_turn(two, &ended(None, None, None)).unwrap();
    // Marked abandoned by another turn, then finished by its own process after all.
    let (_, three) = start_turn(&mut store, 3).unwrap();
    let thread = store.thread("main").unwrap().unwrap().id;
    store
        .immediate(|tx| tx.abandon_running_turns(thread))
        .unwrap();
    store
        .finish_turn(three, &ended(Some(0.5), None, Some(4)))
        .unwrap();
    let (second, four) = store
        .immediate(|tx| {
            let rotation = session(Path::new("/p"), Some((first, "new")));
            let second = tx.start_session(thread, &rotation)?.id;
            Ok((second, tx.begin_turn(second, None, Mode::Headless, 4, "h")?))
        })
        .unwrap();
    store
        .finish_turn(four, &ended(None, Some(6), None))
        .unwrap();
    // A turn that outlives a rotation: its figures reach the thread's past too.
    let (_, five) = start_turn(&mut store, 5).unwrap();
    let third = store
        .immediate(|tx| {
            let rotation = session(Path::new("/p"), Some((second, "model")));
            Ok(tx.start_session(thread, &rotation)?.id)
        })
        .unwrap();
    store
        .finish_turn(five, &ended(Some(1.0), Some(2), Some(2)))
        .unwrap();
    let _running = start_turn(&mut store, 6).unwrap();

    assert_eq!(
        store.totals(Some(first), thread).unwrap(),
        Totals {
            turns: 3,
            figures: Figures {
                cost_usd: Some(0.75),
                input_tokens: Some(10),
                output_tokens: Some(24),
                cached_tokens: Some(5),
            },
        }
    );
    for session in [Some(first), Some(second), Some(third), None] {
        assert_eq!(
            store.totals(session, thread).unwrap(),
            summed(&store, session, thread),
            "{session:?}"
        );
    }

    // Imported into another file: the same totals there.
    let sessions = store.sessions(thread).unwrap();
    let turns = store.whole_turns(thread).unwrap();
    let mut other = Store::open(&dir.path().join("other.db")).unwrap();
    let added = other
        .immediate(|tx| tx.add_thread("carried", 0, &sessions, &turns))
        .unwrap();
    let copied = other.sessions(added.id).unwrap();
    for (session, copy) in [(Some(first), Some(copied[0].id)), (None, None)] {
        assert_eq!(
            other.totals(copy, added.id).unwrap(),
            store.totals(session, thread).unwrap()
        );
    }
}

#[test]
fn rotation_ends_the_old_session_and_keeps_the_history() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    let (first, _) = start_turn(&mut store, 1).unwrap();
    let thread = store.thread("main").unwrap().unwrap();

    let second = store
        .immediate(|tx| {
            tx.start_session(thread.id, &session(Path::new("/p"), Some((first, "new"))))
        })
        .unwrap();
    assert_eq!(second.rotated_from, Some(first));
    assert_eq!(second.rotation_reason.as_deref(), Some("new"));
    assert!(store.session(first).unwrap().unwrap().ended_at.is_some());
    assert_eq!(
        store.live_session(thread.id).unwrap().unwrap().id,
        second.id
    );
    let (on, _) = start_turn(&mut store, 1).unwrap();
    assert_eq!(on, second.id, "turns go to the new live session");

    let sessions: Vec<i64> = store
        .sessions(thread.id)
        .unwrap()
        .iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(sessions, [first, second.id]);
    let turns = store.turns(thread.id).unwrap();
    assert_eq!(
        turns.iter().map(|t| t.session_id).collect::<Vec<_>>(),
        [first, second.id]
    );
    assert_eq!(store.last_turn(thread.id).unwrap().unwrap().id, turns[1].id);

    // Rotating away from a session that is not live, or starting a second live one, is a bug.
    let stale = store.immediate(|tx| {
        tx.start_session(thread.id, &session(Path::new("/p"), Some((first, "new"))))
    });
    assert!(
        stale
            .unwrap_err()
            .to_string()
            .contains("not the live session")
    );
    let twice = store.immediate(|tx| tx.start_session(thread.id, &session(Path::new("/p"), None)));
    assert!(
        twice
            .unwrap_err()
            .to_string()
            .contains("already has a live session")
    );
}

#[test]
fn the_file_itself_allows_one_live_session_per_thread() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    start_turn(&mut store, 1).unwrap();
    let insert = "INSERT INTO sessions (thread_id, agent, directory, created_at) \
                  VALUES (1, 'claude', '/p', 0)";
    let error = store.conn.execute(insert, []).unwrap_err();
    assert!(error.to_string().contains("UNIQUE"), "{error}");
    let ended = "INSERT INTO sessions (thread_id, agent, directory, created_at, ended_at) \
                 VALUES (1, 'claude', '/p', 0, 0)";
    store.conn.execute(ended, []).unwrap();
}

#[test]
fn an_unconfirmed_session_restarts_in_place_and_a_confirmed_one_does_not() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    let (id, _) = start_turn(&mut store, 1).unwrap();
    let restarted = store
        .immediate(|tx| tx.restart_session(id, "codex", None, None))
        .unwrap();
    assert_eq!(restarted.id, id);
    assert_eq!(
        (
            restarted.agent.as_str(),
            restarted.model,
            restarted.agent_session_id
        ),
        ("codex", None, None)
    );

    store.set_agent_session_id(id, "019a-thread").unwrap();
    store.confirm_session(id).unwrap();
    let confirmed = store.session(id).unwrap().unwrap();
    assert_eq!(confirmed.agent_session_id.as_deref(), Some("019a-thread"));
    let at = confirmed.confirmed_at.unwrap();
    std::thread::sleep(Duration::from_millis(5));
    store.confirm_session(id).unwrap();
    assert_eq!(
        store.session(id).unwrap().unwrap().confirmed_at,
        Some(at),
        "the first counts"
    );

    let refused = store.immediate(|tx| tx.restart_session(id, "claude", None, Some("x")));
    assert!(
        refused
            .unwrap_err()
            .to_string()
            .contains("cannot be restarted")
    );
    assert_eq!(
        store
            .session(id)
            .unwrap()
            .unwrap()
            .agent_session_id
            .as_deref(),
        Some("019a-thread")
    );

    let missing = store.set_agent_session_id(999, "x").unwrap_err();
    assert_eq!(exit_for(&missing), Exit::Store);
    assert!(
        missing.to_string().contains("has no session 999"),
        "{missing}"
    );
}

#[test]
fn running_turns_of_the_thread_are_abandoned_others_are_not() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    let (session_id, first) = start_turn(&mut store, 10).unwrap();
    let (second, other_thread_turn) = store
        .immediate(|tx| {
            let second = tx.begin_turn(session_id, None, Mode::Interactive, 11, "host")?;
            let other = tx.ensure_thread("other")?;
            let session = tx.start_session(
                other.id,
                &NewSession {
                    agent: "claude",
                    model: None,
                    agent_session_id: Some("o1"),
                    directory: Path::new("/p"),
                    rotated_from: None,
                    carried: None,
                },
            )?;
            let turn = tx.begin_turn(session.id, Some("x"), Mode::Headless, 12, "host")?;
            Ok((second, turn))
        })
        .unwrap();
    let thread = store.thread("main").unwrap().unwrap();
    let abandoned = store
        .immediate(|tx| tx.abandon_running_turns(thread.id))
        .unwrap();
    assert_eq!(abandoned, 2);
    for id in [first, second] {
        let turn = store.turn(id).unwrap().unwrap();
        assert_eq!(turn.status, TurnStatus::Abandoned);
        assert!(turn.ended_at.is_some());
    }
    let other = store.turn(other_thread_turn).unwrap().unwrap();
    assert_eq!(other.status, TurnStatus::Running);
    assert_eq!(
        store
            .immediate(|tx| tx.abandon_running_turns(thread.id))
            .unwrap(),
        0
    );
}

#[test]
fn a_failed_transaction_writes_nothing() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    let result: Result<()> = store.immediate(|tx| {
        tx.ensure_thread("main")?;
        bail!("changed my mind")
    });
    assert_eq!(result.unwrap_err().to_string(), "changed my mind");
    assert_eq!(store.threads().unwrap(), []);
}

#[test]
fn threads_are_created_once_and_listed_oldest_first() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    let (a, b, a_again) = store
        .immediate(|tx| {
            Ok((
                tx.ensure_thread("main")?,
                tx.ensure_thread("review")?,
                tx.ensure_thread("main")?,
            ))
        })
        .unwrap();
    assert_eq!(a, a_again);
    assert_eq!(store.threads().unwrap(), [a, b]);
}

// --- Files that are not ours are refused and left byte-for-byte untouched. ---

/// A real database with a few pages of turns, closed and fully checkpointed.
fn real_database(db: &Path) {
    let mut store = Store::open(db).unwrap();
    for pid in 0..40 {
        store
            .immediate(|tx| {
                let thread = tx.ensure_thread("main")?;
                let session = match tx.live_session(thread.id)? {
                    Some(s) => s,
                    None => tx.start_session(thread.id, &session(Path::new("/p"), None))?,
                };
                tx.begin_turn(session.id, Some(&"x".repeat(500)), Mode::Headless, pid, "h")
            })
            .unwrap();
    }
    drop(store);
    // sticky keeps its WAL on close; these tests want every page in the file itself.
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
}

/// Checks that a file beside `db` holding nothing but the header field `pragma` set to
/// `value` is refused, with `expected` in the error, and left untouched.
#[track_caller]
fn assert_bare_file_refused(db: &Path, (pragma, value): (&str, i64), expected: &str) {
    let bare = db.with_file_name("bare.db");
    set_header(&bare, pragma, value);
    assert_refused_untouched(&bare, &[expected]);
}

/// Sets the header field `pragma` (`user_version`, `application_id`) of the database file at
/// `db` to `value`, as another program would.
fn set_header(db: &Path, pragma: &str, value: i64) {
    rusqlite::Connection::open(db)
        .unwrap()
        .pragma_update(None, pragma, value)
        .unwrap();
}

#[track_caller]
fn assert_refused_untouched(db: &Path, expected: &[&str]) {
    let before = fs::read(db).unwrap();
    for attempt in [
        Store::open(db).map(drop),
        Store::open_existing(db).map(drop),
    ] {
        let error = attempt.unwrap_err();
        let text = error.to_string();
        assert_eq!(exit_for(&error), Exit::Store, "{text}");
        let what = text
            .strip_prefix(&format!("{}: ", db.display()))
            .expect("names the file");
        for part in expected {
            assert!(what.contains(part), "{text:?} lacks {part:?}");
        }
        assert_eq!(
            what,
            what.to_lowercase().replace("sticky_db", "STICKY_DB"),
            "lowercase"
        );
    }
    assert_eq!(
        fs::read(db).unwrap(),
        before,
        "the file must stay byte-for-byte the same"
    );
}

#[test]
fn random_bytes_are_not_a_sticky_database() {
    let (_dir, db) = project_with_state_dir();
    let noise: Vec<u8> = (0..8192u32)
        .map(|i| i.wrapping_mul(2_654_435_761).to_be_bytes()[1])
        .collect();
    fs::write(&db, noise).unwrap();
    assert_refused_untouched(
        &db,
        &[
            "is not a sticky database (file is not a database)",
            "move it away or point STICKY_DB elsewhere; sticky never deletes it",
        ],
    );
}

#[test]
fn a_truncated_database_is_refused() {
    let (_dir, db) = project();
    real_database(&db);
    let bytes = fs::read(&db).unwrap();
    assert!(
        bytes.len() >= 4 * 4096,
        "the test needs a database of several pages"
    );
    fs::write(&db, &bytes[..bytes.len() / 2]).unwrap();
    assert_refused_untouched(
        &db,
        &[
            "is damaged (database disk image is malformed)",
            "sticky never deletes it",
        ],
    );
}

#[test]
fn a_newer_schema_is_refused() {
    let (_dir, db) = project();
    real_database(&db);
    set_header(&db, "user_version", 999);
    assert_refused_untouched(
        &db,
        &[
            "newer sticky",
            "schema version 999",
            &format!("knows up to {}", schema::LATEST),
            "upgrade sticky",
        ],
    );
    // Also a bare file that only claims the version.
    assert_bare_file_refused(&db, ("user_version", 999), "schema version 999");
}

#[test]
fn a_newer_schema_still_in_the_wal_is_refused_and_its_wal_kept() {
    // A newer sticky that died before checkpointing: its schema version is only in the WAL.
    let (_dir, db) = project();
    real_database(&db);
    let newer = rusqlite::Connection::open(&db).unwrap();
    newer
        .set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )
        .unwrap();
    newer.pragma_update(None, "user_version", 999).unwrap();
    drop(newer);
    let wal = db.with_file_name("sticky.db-wal");
    let wal_before = fs::read(&wal).unwrap();
    assert!(!wal_before.is_empty());
    assert_refused_untouched(&db, &["schema version 999"]);
    assert_eq!(
        fs::read(&wal).unwrap(),
        wal_before,
        "the WAL is not checkpointed or deleted"
    );
}

#[test]
fn another_applications_database_is_refused() {
    let (_dir, db) = project_with_state_dir();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE notes (body TEXT)")
        .unwrap();
    assert_refused_untouched(
        &db,
        &["is not a sticky database (its schema was not created by sticky)"],
    );
    assert_bare_file_refused(&db, ("application_id", 7), "application id 0x7");
}

#[test]
fn a_database_that_is_a_directory_is_a_store_error() {
    let (_dir, db) = project();
    fs::create_dir_all(&db).unwrap();
    let error = Store::open(&db).unwrap_err();
    assert_eq!(exit_for(&error), Exit::Store, "{error}");
}

#[test]
fn a_database_that_is_no_regular_file_is_refused_before_sqlite_writes_beside_it() {
    let (dir, db) = project_with_state_dir();
    let fifo = db.with_file_name("fifo.db");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    // A character device stands in for `/dev/null`, whose directory only root may write: a
    // link to it is what `STICKY_DB=/dev/null` looks like to the store.
    let device = db.with_file_name("device.db");
    std::os::unix::fs::symlink("/dev/null", &device).unwrap();
    for file in [&fifo, &device] {
        let error = Store::open(file).unwrap_err();
        assert_eq!(exit_for(&error), Exit::Store, "{error:#}");
        assert!(
            error.to_string().contains("not a regular file"),
            "{error:#}"
        );
        assert!(Store::open_existing(file).is_err(), "{}", file.display());
    }
    let mut left: Vec<_> = fs::read_dir(db.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["device.db", "fifo.db"], "no journal beside either");
    drop(dir);
}

// --- Many openers at once. ---

#[test]
fn many_threads_open_a_fresh_database_at_once() {
    const OPENERS: usize = 32;
    for _round in 0..3 {
        let (_dir, db) = project();
        let barrier = Arc::new(Barrier::new(OPENERS));
        let workers: Vec<_> = (0..OPENERS)
            .map(|i| {
                let (db, barrier) = (db.clone(), Arc::clone(&barrier));
                std::thread::spawn(move || -> Result<()> {
                    barrier.wait();
                    let mut store = Store::open(&db)?;
                    start_turn(&mut store, u32::try_from(i)?)?;
                    Ok(())
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap().unwrap();
        }
        assert_eq!(count(&db, "threads"), 1);
        assert_eq!(count(&db, "sessions"), 1);
        assert_eq!(count(&db, "turns"), i64::try_from(OPENERS).unwrap());
    }
}

#[test]
fn a_database_sticky_creates_is_never_empty_beside_a_wal_and_a_wal_beside_an_empty_file_is_dropped()
{
    // project/trust.rs refuses a zero-byte database its stamp or vault says sticky wrote, WAL
    // or not. That never refuses one being created: the switch to WAL writes the first page to
    // the file itself, before any WAL exists, and the file never shrinks below it again.
    let (_dir, db) = project();
    let wal = db.with_file_name("sticky.db-wal");
    open::create_file(&db).unwrap();
    let creating = rusqlite::Connection::open(&db).unwrap();
    let mode: String = creating
        .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert!(
        fs::metadata(&db).unwrap().len() > 0,
        "the first page is in the file"
    );
    assert!(!wal.exists(), "before any WAL");
    drop(creating);
    let mut store = Store::open(&db).unwrap();
    store
        .immediate(|tx| tx.ensure_thread("main").map(drop))
        .unwrap();
    drop(store);
    assert!(fs::metadata(&db).unwrap().len() > 0);
    assert!(
        fs::metadata(&wal).unwrap().len() > 0,
        "the WAL stays between runs"
    );
    // Truncated beside that WAL, the file is an empty database to SQLite, which deletes the WAL:
    // the WAL holds no pages of a zero-byte database, so it is no sign the file was not emptied.
    fs::write(&db, b"").unwrap();
    let tables: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))
        .unwrap();
    assert_eq!(tables, 0, "nothing of the WAL is read");
    assert!(!wal.exists(), "SQLite deleted the WAL");
}

#[test]
fn the_switch_to_wal_waits_out_a_writer_on_a_fresh_file() {
    // SQLite answers this switch with SQLITE_BUSY at once, without calling the busy handler,
    // when another connection holds the write lock (it upgrades a read transaction, which may
    // not wait). Without `retry_busy` this open fails with "database is locked" (atuin #2082).
    let (_dir, db) = project();
    open::create_file(&db).unwrap();
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    let opener = std::thread::spawn({
        let db = db.clone();
        move || Store::open(&db).map(|store| store.path().to_owned())
    });
    // The lock is released only once the opener was refused and waited: without the retry
    // there is no wait to see, and the open fails.
    let deadline = Instant::now() + Duration::from_secs(30);
    while error::busy_waits::of(&db) == 0 {
        assert!(
            !opener.is_finished() && Instant::now() < deadline,
            "the open never waited on the busy file"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    writer.execute_batch("COMMIT").unwrap();
    assert_eq!(opener.join().unwrap().unwrap(), db);
    assert_eq!(
        journal_mode(&db),
        "wal",
        "the waiting open switched the file to WAL"
    );
}

/// The journal mode the file itself records, read by a connection of its own.
fn journal_mode(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap()
}

/// Set to a database path when the test binary runs as a child of
/// `many_processes_open_a_fresh_database_at_once`.
const CHILD_DB: &str = "STICKY_STORE_TEST_CHILD_DB";

/// The file whose appearance starts all children at once.
const CHILD_GO: &str = "STICKY_STORE_TEST_CHILD_GO";

#[test]
#[ignore = "run by many_processes_open_a_fresh_database_at_once in child processes"]
fn child_opens_and_starts_a_turn() {
    let (Some(db), Some(go)) = (std::env::var_os(CHILD_DB), std::env::var_os(CHILD_GO)) else {
        return;
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !Path::new(&go).exists() {
        assert!(Instant::now() < deadline, "no go from the parent");
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut store = Store::open(Path::new(&db)).unwrap();
    start_turn(&mut store, std::process::id()).unwrap();
}

#[test]
fn many_processes_open_a_fresh_database_at_once() {
    const PROCESSES: usize = 16;
    let (dir, db) = project();
    let go = dir.path().join("go");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "store::tests::child_opens_and_starts_a_turn",
                    "--ignored",
                ])
                .args(["--test-threads=1"])
                .env(CHILD_DB, &db)
                .env(CHILD_GO, &go)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Let the children start and poll, then release them together onto a directory that does
    // not exist yet: they race to create `proj/.sticky/`, the file, WAL and the schema.
    std::thread::sleep(Duration::from_millis(200));
    fs::write(&go, "").unwrap();
    for child in children {
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "child failed:\n{stdout}\n{stderr}");
        assert!(
            stdout.contains("1 passed"),
            "the child ran no test:\n{stdout}"
        );
    }
    assert_eq!(count(&db, "threads"), 1);
    assert_eq!(count(&db, "sessions"), 1);
    assert_eq!(count(&db, "turns"), i64::try_from(PROCESSES).unwrap());
}

// --- Speed: `sticky status` must not depend on the number of turns. ---

/// The query plan of `sql` with `param` bound to ?1, one line per step.
fn plan(conn: &rusqlite::Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let count = stmt.parameter_count();
    let params: Vec<i64> = vec![1; count];
    stmt.query_map(rusqlite::params_from_iter(params), |row| {
        row.get::<_, String>(3)
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

#[test]
fn status_queries_never_scan() {
    let (_dir, db) = project();
    let store = Store::open(&db).unwrap();
    for sql in [
        rows::sql::THREAD_BY_NAME,
        rows::sql::LIVE_SESSION,
        rows::sql::SESSION_BY_ID,
        rows::sql::LAST_TURN,
        rows::sql::RUNNING_TURN,
        rows::sql::SESSION_TOTALS,
        rows::sql::THREAD_TOTALS,
    ] {
        let steps = plan(&store.conn, sql);
        for step in &steps {
            let full_scan =
                step.starts_with("SCAN ") && !step.contains("USING INDEX turns_running");
            assert!(!full_scan, "{sql}\nscans: {steps:#?}");
        }
    }
}

#[test]
fn usage_reads_an_index_and_search_finds_each_turn_by_its_id() {
    let (_dir, db) = project();
    let store = Store::open(&db).unwrap();
    let usage = plan(&store.conn, usage::USAGE_TURNS);
    assert!(
        usage
            .iter()
            .all(|step| step.contains("COVERING INDEX turns_usage")),
        "never the turns' pages: {usage:#?}"
    );
    let search = plan(&store.conn, search::SEARCH);
    assert!(
        search[0].starts_with("SCAN turns_text VIRTUAL TABLE"),
        "{search:#?}"
    );
    for step in &search[1..] {
        assert!(step.starts_with("SEARCH "), "no scan: {search:#?}");
    }
}

/// How many virtual-machine steps `SQLite` takes to run `sql` with ?1 = `param`: a measure of
/// work that, unlike time, does not depend on the machine's load.
fn steps(conn: &rusqlite::Connection, sql: &str, param: &dyn rusqlite::ToSql) -> i32 {
    let mut stmt = conn.prepare(sql).unwrap();
    let params: Vec<&dyn rusqlite::ToSql> = vec![param; stmt.parameter_count()];
    let mut rows = stmt.query(params.as_slice()).unwrap();
    while rows.next().unwrap().is_some() {}
    drop(rows);
    stmt.get_status(rusqlite::StatementStatus::VmStep)
}

#[test]
fn status_work_does_not_grow_with_the_number_of_turns() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    let (first, _) = start_turn(&mut store, 1).unwrap();
    let (thread_id, second, elsewhere) = store
        .immediate(|tx| {
            let thread = tx.ensure_thread("main")?;
            let rotation = session(Path::new("/p"), Some((first, "new")));
            let second = tx.start_session(thread.id, &rotation)?.id;
            tx.begin_turn(second, Some("hi"), Mode::Headless, 1, "host")?;
            let other = tx.ensure_thread("other")?;
            // Another agent session: one is live in one thread only.
            let elsewhere = NewSession {
                agent_session_id: Some("7a2e"),
                ..session(Path::new("/q"), None)
            };
            let elsewhere = tx.start_session(other.id, &elsewhere)?.id;
            tx.begin_turn(elsewhere, Some("hi"), Mode::Headless, 1, "host")?;
            Ok((thread.id, second, elsewhere))
        })
        .unwrap();
    let lookups: [(&str, &dyn rusqlite::ToSql); 8] = [
        (rows::sql::THREAD_BY_NAME, &"main"),
        (rows::sql::SESSION_TOTALS, &second),
        (rows::sql::THREAD_TOTALS, &thread_id),
        (rows::sql::LIVE_SESSION, &thread_id),
        (rows::sql::SESSION_BY_ID, &second),
        (rows::sql::LAST_TURN, &thread_id),
        (rows::sql::RUNNING_TURN, &second),
        ("SELECT turn_count FROM sessions WHERE id = ?1", &second),
    ];
    // The control, to show that a lookup visiting every turn would be noticed: the last turn
    // by start time, a column no index orders.
    let naive = "SELECT id FROM turns WHERE session_id IN \
                 (SELECT id FROM sessions WHERE thread_id = ?1) ORDER BY started_at DESC LIMIT 1";
    let work = |store: &Store| -> (Vec<i32>, i32) {
        let ours = lookups
            .iter()
            .map(|(sql, param)| steps(&store.conn, sql, *param));
        (ours.collect(), steps(&store.conn, naive, &thread_id))
    };
    let (few, naive_few) = work(&store);

    // 1000 finished turns on each session of this thread, then 1000 more on another thread.
    store
        .immediate(|tx| {
            for session_id in [first, second, elsewhere] {
                for pid in 0..1000 {
                    let turn = tx.begin_turn(session_id, Some("p"), Mode::Headless, pid, "h")?;
                    tx.tx.execute(
                        "UPDATE turns SET status = 'ok', input_tokens = 7, cost_usd = 0.5 \
                         WHERE id = ?1",
                        [turn],
                    )?;
                }
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(store.turns(thread_id).unwrap().len(), 2002);
    let (many, naive_many) = work(&store);
    assert!(
        naive_many > naive_few * 10,
        "the control scans: {naive_few} -> {naive_many} steps"
    );
    assert_eq!(many, few, "steps per lookup with 3 turns vs 3003 turns");
}

#[test]
fn the_last_turn_is_found_without_visiting_every_session() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    let (first, _) = start_turn(&mut store, 1).unwrap();
    let thread_id = store.thread("main").unwrap().unwrap().id;
    let rotate = |store: &mut Store, from: i64, turns: usize| {
        store
            .immediate(|tx| {
                let next = tx
                    .start_session(thread_id, &session(Path::new("/p"), Some((from, "new"))))?
                    .id;
                let mut last = None;
                for pid in 0..turns {
                    let pid = u32::try_from(pid).unwrap();
                    last = Some(tx.begin_turn(next, Some("p"), Mode::Headless, pid, "h")?);
                }
                Ok((next, last))
            })
            .unwrap()
    };
    let (second, _) = rotate(&mut store, first, 1);
    let few = steps(&store.conn, rows::sql::LAST_TURN, &thread_id);

    let mut live = second;
    let mut newest = None;
    for _ in 0..300 {
        (live, newest) = rotate(&mut store, live, 2);
    }
    let many = steps(&store.conn, rows::sql::LAST_TURN, &thread_id);
    assert_eq!(many, few, "steps with 2 sessions vs 302 sessions");
    assert_eq!(
        store.last_turn(thread_id).unwrap().unwrap().id,
        newest.unwrap()
    );

    // Rotated again, with no turn yet on the live session: the newest turn is the previous
    // session's.
    rotate(&mut store, live, 0);
    assert_eq!(
        store.last_turn(thread_id).unwrap().unwrap().id,
        newest.unwrap()
    );
}

/// Not a test: times the status lookups with 0 and 100 000 turns (run with `--ignored
/// --nocapture`; a release build gives the real numbers).
#[test]
#[ignore = "a measurement, not a test"]
fn measure_status_with_many_turns() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    let (session_id, _) = start_turn(&mut store, 1).unwrap();
    let status = |store: &Store| {
        let start = Instant::now();
        for _ in 0..1000 {
            let thread = store.thread("main").unwrap().unwrap();
            store.live_session(thread.id).unwrap().unwrap();
            store.last_turn(thread.id).unwrap().unwrap();
        }
        start.elapsed() / 1000
    };
    let few = status(&store);
    store
        .immediate(|tx| {
            for i in 0..100_000 {
                tx.begin_turn(
                    session_id,
                    Some("a prompt of some length"),
                    Mode::Headless,
                    i,
                    "h",
                )?;
            }
            Ok(())
        })
        .unwrap();
    let many = status(&store);
    let open = Instant::now();
    let store = Store::open(&db).unwrap();
    let opened = open.elapsed();
    let again = status(&store);
    println!("status lookups: 1 turn {few:?}, 100 000 turns {many:?} / {again:?}; open {opened:?}");
}

// --- Locations that cannot be written. ---

/// Whether this process runs as root (the owner of a file it creates).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    tempfile::tempfile().unwrap().metadata().unwrap().uid() == 0
}

/// Skips the calling test (it returns right after) for `reason`, as the integration tests'
/// `support::skip` does: counted by `.ci/run` through `STICKY_TEST_SKIP_LOG`, and a failure
/// under CI, which must run every test the README's promises rest on.
fn skip(reason: &str) {
    use std::io::Write;
    assert!(
        std::env::var_os("CI").is_none_or(|ci| ci.is_empty()),
        "{reason}; CI is set, and under CI nothing the README promises may skip"
    );
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    eprintln!("SKIPPED {test}: {reason}");
    if let Some(log) = std::env::var_os("STICKY_TEST_SKIP_LOG") {
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        file.write_all(format!("{test}\t{reason}\n").as_bytes())
            .unwrap();
    }
}

/// Runs the ignored test `name` as an unprivileged user when this process is root (root writes
/// anywhere, so permission checks need another user); returns whether it ran a child.
fn run_unprivileged(name: &str) -> bool {
    if !is_root() {
        return false;
    }
    let exe = std::env::current_exe().unwrap();
    let output = match Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&exe)
        .args(["--exact", name, "--ignored", "--test-threads=1"])
        .env("STICKY_STORE_TEST_UNPRIVILEGED", "1")
        .output()
    {
        Ok(output) => output,
        Err(e) => {
            skip(&format!(
                "{name}: running as root and setpriv is unavailable ({e})"
            ));
            return true;
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{name} as nobody:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    true
}

#[test]
fn unwritable_locations_suggest_sticky_db() {
    if !run_unprivileged("store::tests::unwritable_locations_as_a_user") {
        unwritable_locations_as_a_user();
    }
}

#[test]
#[ignore = "run by unwritable_locations_suggest_sticky_db as an unprivileged user"]
fn unwritable_locations_as_a_user() {
    if is_root() {
        return; // only meaningful without root's override of permissions
    }
    let dir = tempfile::tempdir().unwrap();
    let read_only = |path: &Path, mode: u32| {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    };

    // A read-only project directory: `.sticky/` cannot be created.
    let project = dir.path().join("ro-project");
    fs::create_dir(&project).unwrap();
    read_only(&project, 0o555);
    let db = project.join(".sticky/sticky.db");
    let error = Store::open(&db).unwrap_err();
    assert_unwritable(&error, &db);
    assert!(!project.join(".sticky").exists());

    // A database in a directory that became read-only: WAL needs its -wal and -shm files.
    let state = dir.path().join("ro-state/.sticky");
    let db = state.join("sticky.db");
    real_database(&db);
    read_only(&state, 0o555);
    let before = fs::read(&db).unwrap();
    assert_unwritable(&Store::open(&db).unwrap_err(), &db);
    assert_eq!(fs::read(&db).unwrap(), before);
    read_only(&state, 0o700);

    // A read-only database file.
    read_only(&db, 0o400);
    assert_unwritable(&Store::open(&db).unwrap_err(), &db);
    read_only(&db, 0o600);
}

#[track_caller]
fn assert_unwritable(error: &anyhow::Error, db: &Path) {
    let text = error.to_string();
    assert_eq!(exit_for(error), Exit::Store, "{text}");
    assert!(text.starts_with(&format!("{}: ", db.display())), "{text}");
    assert!(text.contains("STICKY_DB=/writable/path"), "{text}");
    // The advice does not lose the conversation: a new database starts new ones.
    assert!(
        text.contains("starts new conversations") && text.contains("sticky export -t THREAD"),
        "{text}"
    );
}

/// A turn's end with a status and nothing else.
fn ended_ok() -> TurnEnd {
    TurnEnd {
        status: Some(TurnStatus::Ok),
        ..TurnEnd::default()
    }
}

#[test]
fn the_search_index_follows_every_write_of_a_turn() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    let turns = |store: &Store, words: &str| -> Vec<(i64, &'static str)> {
        let query = search::query(words).unwrap();
        store
            .search(&query, None, None, 10)
            .unwrap()
            .into_iter()
            .map(|found| (found.turn, found.column))
            .collect()
    };
    let (_, first) = start_turn(&mut store, 1).unwrap();
    assert!(
        turns(&store, "hi").is_empty(),
        "a running turn is not yet indexed"
    );
    let long = format!("{} the deflated zeppelin\n", "filler words ".repeat(500));
    let end = TurnEnd {
        status: Some(TurnStatus::Ok),
        answer: Some(long),
        ..TurnEnd::default()
    };
    store.finish_turn(first, &end).unwrap();
    assert_eq!(
        turns(&store, "zeppelin"),
        [(first, "answer")],
        "indexed as it ends"
    );
    assert_eq!(
        turns(&store, "hi"),
        [(first, "prompt")],
        "its prompt with it"
    );
    let (_, second) = start_turn(&mut store, 2).unwrap();
    store.finish_turn(second, &ended_ok()).unwrap();
    assert_eq!(turns(&store, "hi"), [(second, "prompt"), (first, "prompt")]);
    // A turn recorded abandoned (its sticky died) never ends: its prompt is indexed then.
    let (_, third) = start_turn(&mut store, 3).unwrap();
    let main = store.thread("main").unwrap().unwrap();
    store
        .immediate(|tx| tx.abandon_running_turns(main.id))
        .unwrap();
    assert_eq!(
        turns(&store, "hi"),
        [(third, "prompt"), (second, "prompt"), (first, "prompt")],
        "abandoned"
    );
    assert_eq!(turns(&store, "zepp*"), [(first, "answer")], "a prefix");
    assert!(turns(&store, "hi zeppelin walrus").is_empty(), "every word");
    let since = store
        .search("\"hi\"", Some(now() + 60_000), None, 10)
        .unwrap();
    assert!(since.is_empty(), "--since");
    let other = store.search("\"hi\"", None, Some("other"), 10).unwrap();
    assert!(other.is_empty(), "-t");

    // An import indexes the turns it adds; forgetting a thread takes its turns out.
    let thread = store.thread("main").unwrap().unwrap();
    let sessions = store.sessions(thread.id).unwrap();
    let whole = store.whole_turns(thread.id).unwrap();
    let mut copy = Store::open(&db.with_file_name("copy.db")).unwrap();
    copy.immediate(|tx| tx.add_thread("copied", 0, &sessions, &whole))
        .unwrap();
    assert_eq!(turns(&copy, "zeppelin").len(), 1);
    let copied = copy.thread("copied").unwrap().unwrap();
    copy.immediate(|tx| tx.remove_thread(copied.id)).unwrap();
    let indexed = |store: &Store| -> i64 {
        store
            .conn
            .query_row("SELECT count(*) FROM turns_text", [], |row| row.get(0))
            .unwrap()
    };
    assert_eq!(indexed(&copy), 0, "import --replace");
    store.forget_thread(thread.id).unwrap();
    assert_eq!(indexed(&store), 0, "forget");
    // A new turn takes the forgotten turns' ids again: their rows are gone from the index.
    let (_, again) = start_turn(&mut store, 3).unwrap();
    assert_eq!(again, first);
    store.finish_turn(again, &ended_ok()).unwrap();
    assert_eq!(turns(&store, "hi"), [(again, "prompt")]);
    intact::prove(&store.conn, &db).unwrap();
}

#[test]
fn a_damaged_search_index_is_made_again_by_the_next_write() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    let (_, first) = start_turn(&mut store, 1).unwrap();
    store.finish_turn(first, &ended_ok()).unwrap();
    drop(store);
    // What a torn copy of the file held: FTS5's pages from another time than sticky's tables.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("DELETE FROM turns_text_config WHERE k = 'version'")
        .unwrap();
    let mut store = Store::open(&db).unwrap();
    let (_, second) = start_turn(&mut store, 2).unwrap();
    store.finish_turn(second, &ended_ok()).unwrap();
    let found: Vec<i64> = store
        .search("\"hi\"", None, None, 10)
        .unwrap()
        .into_iter()
        .map(|found| found.turn)
        .collect();
    assert_eq!(found, [second, first], "both turns, the index made again");
}

#[test]
fn a_stale_row_at_a_new_turns_id_is_replaced_by_the_index_made_again() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    let (_, first) = start_turn(&mut store, 1).unwrap();
    store.finish_turn(first, &ended_ok()).unwrap();
    // A row the index holds for a turn that is gone (an index from another time than the
    // turns): the next turn's id is taken, and its plain insert fails.
    store
        .conn
        .execute(
            "INSERT INTO turns_text (rowid, prompt) VALUES (?1, 'a stale walrus')",
            [first + 1],
        )
        .unwrap();
    let (_, second) = start_turn(&mut store, 2).unwrap();
    assert_eq!(second, first + 1);
    store.finish_turn(second, &ended_ok()).unwrap();
    let found = |words: &str| -> Vec<i64> {
        store
            .search(&search::query(words).unwrap(), None, None, 10)
            .unwrap()
            .into_iter()
            .map(|found| found.turn)
            .collect()
    };
    assert_eq!(found("hi"), [second, first], "the turn ends, indexed");
    assert!(found("walrus").is_empty(), "the stale row is gone");
}

/// The `SQLite` sticky links is the one `.cargo/config.toml` asks for: without memory
/// statistics, a page cache that grows page by page, FTS5 but none of the parts every
/// connection would register and sticky never uses.
#[test]
fn sqlite_is_built_as_the_checkouts_cargo_config_asks() {
    let conn = rusqlite::Connection::open_in_memory().expect("an in-memory database");
    let mut statement = conn
        .prepare("PRAGMA compile_options")
        .expect("compile options");
    let options: Vec<String> = statement
        .query_map([], |row| row.get(0))
        .expect("query")
        .collect::<rusqlite::Result<_>>()
        .expect("rows");
    for wanted in [
        "DEFAULT_MEMSTATUS=0",
        "DEFAULT_PCACHE_INITSZ=0",
        "ENABLE_FTS5",
        "OMIT_LOAD_EXTENSION",
    ] {
        assert!(
            options.iter().any(|o| o == wanted),
            "{wanted} missing: {options:?}"
        );
    }
    for unwanted in [
        "ENABLE_FTS3",
        "ENABLE_RTREE",
        "ENABLE_DBSTAT_VTAB",
        "ENABLE_STAT4",
    ] {
        assert!(
            !options.iter().any(|o| o == unwanted),
            "{unwanted} built in"
        );
    }
}

/// `kept_at` keeps the first path a turn records (never replaced, review 17 M3) and adds each
/// new place `relocate` finds (review 20, M3), once each, oldest first.
#[test]
fn kept_at_keeps_the_first_path_and_adds_each_new_place_once() {
    let (_dir, db) = project();
    let mut store = Store::open(&db).unwrap();
    store.immediate(|tx| tx.record_kept_at("/first")).unwrap();
    store.immediate(|tx| tx.record_kept_at("/second")).unwrap();
    assert_eq!(store.kept_at().unwrap(), [PathBuf::from("/first")]);
    for path in ["/moved", "/first", "/moved"] {
        store.immediate(|tx| tx.add_kept_at(path)).unwrap();
    }
    assert_eq!(
        store.kept_at().unwrap(),
        [PathBuf::from("/first"), PathBuf::from("/moved")]
    );
}

/// A database's header says whether its schema postdates stamps (review 20, M6): one this
/// sticky made does, one at schema 4 does not, and what is no `SQLite` file says nothing.
#[test]
fn the_header_says_whether_a_schema_postdates_stamps() {
    let (_dir, db) = project();
    let store = Store::open(&db).unwrap();
    store
        .conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    assert!(Store::postdates_stamps(&db));
    let older = db.with_file_name("older.db");
    set_header(&older, "user_version", 4);
    assert!(!Store::postdates_stamps(&older));
    let text = db.with_file_name("text.db");
    fs::write(
        &text,
        "not a database, though long enough to hold a header's 64 bytes ......",
    )
    .unwrap();
    assert!(!Store::postdates_stamps(&text));
    assert!(!Store::postdates_stamps(&db.with_file_name("missing.db")));
}
