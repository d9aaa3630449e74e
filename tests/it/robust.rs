//! Never lose a session (issue part 5): one turn at a time with a waiting message that says for
//! whom, 64 first runs at once, crashes of the agent and of sticky, copies of the database taken
//! mid-write, lost and moved sessions, amnesia, and state sticky must refuse without touching it.
//!
//! Every fault is real: real sticky processes, the fake agent killed, held or lying through its
//! `FAKE_CLAUDE_*` hooks, and files damaged on disk.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::Value;

use crate::support::other_user::{SharedPlace, as_user, chmod, has_setpriv, is_root};
use crate::support::{Output, TestEnv, python, skip};

/// Whether the fake agent's transcript of `session` holds the user prompt `prompt` (the fake
/// writes it before it answers, so this is the handshake for "the agent is working on it").
fn agent_received(env: &TestEnv, session: &str, prompt: &str) -> bool {
    let needle = format!("\"content\":{}", serde_json::json!(prompt));
    let file = env
        .transcripts()
        .into_iter()
        .find(|path| path.ends_with(format!("{session}.jsonl")));
    file.is_some_and(|file| fs::read_to_string(file).is_ok_and(|text| text.contains(&needle)))
}

/// The turns of the conversation, oldest first, from `sticky log --json`.
#[track_caller]
fn turns(env: &TestEnv) -> Vec<Value> {
    let log = env.log_json();
    log["sessions"]
        .as_array()
        .expect("sessions is an array")
        .iter()
        .flat_map(|session| session["turns"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// The status of every turn, oldest first.
#[track_caller]
fn statuses(env: &TestEnv) -> Vec<String> {
    turns(env)
        .iter()
        .map(|turn| turn["status"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The agent session ID stored for the conversation.
#[track_caller]
fn stored_session(env: &TestEnv) -> String {
    env.status_json()["session"]["agent_session_id"]
        .as_str()
        .expect("a stored session")
        .to_owned()
}

#[track_caller]
fn assert_no_panic(output: &Output) {
    assert!(
        !output.stderr.contains("panicked") && output.code != Some(101),
        "sticky panicked\n{}",
        output.describe()
    );
}

// --- 1. One turn at a time. ---

#[test]
fn a_waiting_turn_names_the_running_one_and_gives_up_with_75() {
    let env = TestEnv::new();
    let session = env.turn("first").session;
    let release = env.scratch.join("release");
    let prompt = "held: rename every parser function and explain each change in detail";
    let mut held = env
        .sticky([prompt])
        .env("FAKE_CLAUDE_HOLD", &release)
        .start();
    held.wait_until("the agent got the held prompt", || {
        agent_received(&env, &session, prompt)
    });
    let pid = held.pid();

    let asked = Instant::now();
    let gave_up = env.sticky(["--wait", "1", "patient"]).run();
    let waited = asked.elapsed();
    let refused = env.sticky(["--no-wait", "impatient"]).run();

    let started = regex_lite::Regex::new(r"started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC").unwrap();
    for output in [&gave_up, &refused] {
        output.assert_code(75);
        // For whom: the holder's pid, when its turn started, and the start of its prompt only.
        output.assert_stderr_contains(&format!("pid {pid} "));
        output.assert_stderr_contains("\"held: rename every parser");
        assert!(
            started.is_match(&output.stderr),
            "no start time\n{}",
            output.describe()
        );
        assert!(
            !output.stderr.contains("in detail"),
            "the whole prompt\n{}",
            output.describe()
        );
        assert!(output.stdout.is_empty(), "{}", output.describe());
    }
    gave_up.assert_stderr_contains("waiting up to 1s");
    gave_up.assert_stderr_contains("gave up after 1s");
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(10),
        "--wait 1 waited {waited:?}"
    );
    refused.assert_stderr_contains("--no-wait");
    assert!(
        !refused.stderr.contains("waiting up to"),
        "--no-wait does not wait\n{}",
        refused.describe()
    );

    fs::write(&release, "").expect("release the held turn");
    held.wait().assert_success();
    assert_eq!(
        env.agent_runs().len(),
        2,
        "neither refused turn reached the agent"
    );
    assert_eq!(
        statuses(&env),
        ["ok", "ok"],
        "the refused turns left no row"
    );
}

#[test]
fn the_lock_of_a_killed_sticky_is_free_at_once_and_its_turn_abandoned() {
    let env = TestEnv::new();
    let first = env.turn("first").session;
    let never = env.scratch.join("never-released");
    let mut doomed = env
        .sticky(["doomed"])
        .env("FAKE_CLAUDE_HOLD", &never)
        .start();
    doomed.wait_until("the agent got the prompt", || {
        agent_received(&env, &first, "doomed")
    });
    doomed.signal(Signal::SIGKILL);
    assert_eq!(doomed.wait().signal, Some(9));

    // --no-wait: the lock died with its holder, so the next turn must not even wait.
    let after = env.sticky(["--no-wait", "after the crash"]).run();
    after.assert_success();
    let answer = after.answer();
    assert_eq!(answer.session, first, "the session continues");
    assert_eq!(answer.saw, ["first", "doomed"]);
    assert_eq!(statuses(&env), ["ok", "abandoned", "ok"]);
    let abandoned = &turns(&env)[1];
    assert!(abandoned["ended_at"].is_i64(), "{abandoned}");
}

#[test]
fn status_shows_the_turn_of_a_dead_sticky_as_abandoned_before_the_next_turn() {
    let env = TestEnv::new();
    let first = env.turn("first").session;
    let never = env.scratch.join("never-released");
    let mut doomed = env
        .sticky(["doomed"])
        .env("FAKE_CLAUDE_HOLD", &never)
        .start();
    doomed.wait_until("the agent got the prompt", || {
        agent_received(&env, &first, "doomed")
    });
    assert_eq!(env.status_json()["last_turn"]["status"], "running");
    doomed.signal(Signal::SIGKILL);
    assert_eq!(doomed.wait().signal, Some(9));

    // Its sticky is gone: every view says so, in text and in JSON.
    assert_eq!(env.status_json()["last_turn"]["status"], "abandoned");
    let status = env.ok(["status"]).stdout;
    assert!(status.contains("last turn abandoned"), "{status}");
    assert_eq!(statuses(&env), ["ok", "abandoned"]);
    let log = env.ok(["log"]).stdout;
    assert!(log.contains(" abandoned "), "{log}");
    let prompt = env.ok(["prompt"]).stdout;
    assert!(prompt.ends_with(" abandoned\n"), "{prompt}");

    // Only shown so: the row is fixed by the next turn, which holds the lock.
    let db = env.project.join(".sticky/sticky.db");
    let conn = rusqlite::Connection::open(&db).expect("open the database");
    let stored: String = conn
        .query_row(
            "SELECT status FROM turns ORDER BY id DESC LIMIT 1",
            [],
            |row| row.get(0),
        )
        .expect("read the turn");
    assert_eq!(stored, "running");
    // A turn of another host cannot be checked from here: it stays running.
    conn.execute(
        "UPDATE turns SET host = 'elsewhere' WHERE status = 'running'",
        [],
    )
    .expect("move the turn");
    assert_eq!(env.status_json()["last_turn"]["status"], "running");

    env.turn("after the crash");
    assert_eq!(statuses(&env), ["ok", "abandoned", "ok"]);
}

// --- 2. Many starts at once. ---

#[test]
fn sixty_four_first_runs_at_once_share_one_database_and_session_and_take_turns() {
    const RUNS: u64 = 64;
    let env = TestEnv::new();
    assert!(!env.project.join(".sticky").exists());
    let started = Instant::now();
    let runs: Vec<_> = (0..RUNS)
        .map(|i| env.sticky([format!("parallel {i:02}")]).start())
        .collect();
    let outputs: Vec<Output> = runs
        .into_iter()
        .map(crate::support::Started::wait)
        .collect();
    let elapsed = started.elapsed();

    let started_state = format!(
        "sticky: no conversation of {} yet: started one, kept in {}",
        env.project.display(),
        env.project.join(".sticky").display()
    );
    let mut said_started = 0;
    for output in &outputs {
        output.assert_success();
        // stderr holds at most the waiting message, and the one turn that made the state says
        // so: no error, no "database is locked".
        for line in output.stderr.lines() {
            said_started += usize::from(line == started_state);
            assert!(
                line.starts_with("sticky: thread main is busy with ") || line == started_state,
                "unexpected stderr line {line:?}\n{}",
                output.describe()
            );
        }
    }
    assert_eq!(said_started, 1, "one turn made the state");
    let answers: Vec<_> = outputs.iter().map(Output::answer).collect();
    let session = &answers[0].session;
    assert!(
        answers.iter().all(|answer| &answer.session == session),
        "one session"
    );
    let mut numbers: Vec<u64> = answers.iter().map(|answer| answer.turn).collect();
    numbers.sort_unstable();
    assert_eq!(
        numbers,
        (1..=RUNS).collect::<Vec<u64>>(),
        "each turn saw all before it"
    );

    // Exactly one database file, with one conversation, one session and 64 turns.
    let mut databases = Vec::new();
    find_files(&env.project, &mut |path| {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.contains(".db") && !path.starts_with(env.project.join(".git")) {
            databases.push(path.to_owned());
        }
    });
    let db = env.project.join(".sticky/sticky.db");
    // The WAL and its index stay beside the file between runs (see store::open), and so does
    // the stamp saying the user made it (written once, whichever run created the file).
    let companions = ["sticky.db-shm", "sticky.db-wal", "sticky.db.stamp"]
        .map(|name| env.project.join(".sticky").join(name));
    databases.retain(|path| !companions.contains(path));
    assert_eq!(
        databases,
        std::slice::from_ref(&db),
        "one database file (with its WAL) and no other"
    );
    let conn = rusqlite::Connection::open(&db).expect("open the database");
    let count = |table: &str| -> u64 {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
            row.get::<_, i64>(0)
        })
        .ok()
        .and_then(|n| u64::try_from(n).ok())
        .expect("count rows")
    };
    assert_eq!(
        (count("threads"), count("sessions"), count("turns")),
        (1, 1, RUNS)
    );

    // One after another: each turn started after the one before it had ended.
    let mut spans: Vec<(i64, i64)> = turns(&env)
        .iter()
        .map(|turn| {
            assert_eq!(turn["status"], "ok", "{turn}");
            (
                turn["started_at"].as_i64().expect("started_at"),
                turn["ended_at"].as_i64().expect("ended_at"),
            )
        })
        .collect();
    spans.sort_unstable();
    for pair in spans.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "turns overlapped: {pair:?}");
    }
    println!("{RUNS} simultaneous first runs took {elapsed:?}");
}

/// Starts `runs` first turns at once in `env`'s fresh project (with `vars` set) and asserts
/// every one succeeded on one session of one conversation.
#[track_caller]
fn first_runs_at_once(env: &TestEnv, runs: usize, vars: &[(&str, &Path)]) {
    assert!(!env.project.join(".sticky").exists());
    let started: Vec<_> = (0..runs)
        .map(|i| {
            let run = env.sticky([format!("at once {i:02}")]);
            vars.iter()
                .fold(run, |run, (key, value)| run.env(key, value))
                .start()
        })
        .collect();
    for output in started.into_iter().map(crate::support::Started::wait) {
        output.assert_success();
    }
    let db = env.project.join(".sticky/sticky.db");
    let conn = rusqlite::Connection::open(&db).expect("open the database");
    let count = |table: &str| -> i64 {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
            row.get(0)
        })
        .expect("count rows")
    };
    let runs = i64::try_from(runs).expect("a count");
    assert_eq!(
        (count("threads"), count("sessions"), count("turns")),
        (1, 1, runs)
    );
}

#[test]
fn first_runs_at_once_with_an_agent_keeping_no_files_all_succeed_on_one_session() {
    // Each run that found the database before its creator stamped it finds the creator's
    // session (never started, or confirmed with no files to show for it) and must see the
    // stamp written since, not refuse the state as planted (commit 37ee746).
    let env = TestEnv::new();
    let agent = crate::support::fakes_dir().join("claude-keeping-no-files");
    first_runs_at_once(&env, 64, &[("STICKY_CLAUDE_BIN", &agent)]);
    assert!(env.project.join(".sticky/sticky.db.stamp").is_file());

    // A HOME where no key can be made (its data directory is a file): no database is stamped,
    // and a session that never started shows nothing, yet the runs are this user's own.
    let keyless = TestEnv::new();
    fs::create_dir_all(keyless.home.join(".local")).expect("create .local");
    fs::write(keyless.home.join(".local/share"), b"not a directory").expect("block it");
    first_runs_at_once(&keyless, 16, &[]);
    assert!(!keyless.project.join(".sticky/sticky.db.stamp").exists());
}

/// Calls `found` with every file under `dir`, recursively.
fn find_files(dir: &Path, found: &mut dyn FnMut(&Path)) {
    for entry in fs::read_dir(dir).expect("read a directory").flatten() {
        let path = entry.path();
        if path.is_dir() {
            find_files(&path, found);
        } else {
            found(&path);
        }
    }
}

// --- 3. Crashes. ---

#[test]
fn an_agent_killed_mid_turn_fails_the_turn_with_the_signal_and_the_next_turn_resumes() {
    let env = TestEnv::new();
    let first = env.turn("first").session;
    let killed = env.sticky(["second"]).env("FAKE_CLAUDE_SIGNAL", "9").run();
    killed.assert_code(137);
    killed.assert_stderr_contains("killed by signal 9");
    killed.assert_stderr_contains(&format!("session {first} stays"));

    let turn = turns(&env).pop().expect("the killed turn");
    assert_eq!(turn["status"], "failed", "{turn}");
    assert_eq!(turn["signal"], 9, "{turn}");
    assert_eq!(turn["exit_code"], Value::Null, "{turn}");
    assert_eq!(stored_session(&env), first);

    let third = env.turn("third");
    assert_eq!(third.session, first);
    assert_eq!(third.saw, ["first", "second"], "resumed, history and all");
}

#[test]
fn ctrl_c_interrupts_a_headless_turn_and_the_session_stays() {
    let env = TestEnv::new();
    let first = env.turn("first").session;
    let mut slow = env
        .sticky(["slow turn"])
        .env("FAKE_CLAUDE_SLEEP", "30")
        .start();
    slow.wait_until("the agent got the prompt", || {
        agent_received(&env, &first, "slow turn")
    });
    slow.signal(Signal::SIGINT);
    let interrupted = slow.wait();
    interrupted.assert_code(130);
    assert_no_panic(&interrupted);
    assert_eq!(
        env.last_agent_run().0["rc"],
        -2,
        "the agent itself got SIGINT"
    );
    let turn = turns(&env).pop().expect("the interrupted turn");
    assert_eq!(turn["status"], "interrupted", "{turn}");
    assert_eq!(stored_session(&env), first);
    let after = env.turn("after");
    assert_eq!((after.session.as_str(), after.turn), (first.as_str(), 3));
}

/// `file` read page by page with pauses in between, so writes that land meanwhile tear it, as
/// a copy taken at a power cut or by a backup tool can be.
fn torn_read(file: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut source = fs::File::open(file).ok()?;
    let mut bytes = Vec::new();
    let mut page = [0_u8; 4096];
    loop {
        match source.read(&mut page) {
            Ok(0) => return Some(bytes),
            Ok(read) => bytes.extend_from_slice(&page[..read]),
            Err(_) => return None,
        }
        thread::sleep(Duration::from_micros(300));
    }
}

/// Opens `copy` with sticky (`trust`, as for any copy of a database without its stamp, then
/// `status`, then a turn when it opened) and asserts it either works or is refused with exit
/// 71, a clear message, and the file exactly as it was.
#[track_caller]
fn assert_opens_or_is_refused_untouched(env: &TestEnv, copy: &Path) -> bool {
    let before = fs::read(copy).expect("read the copy");
    let trust = env.sticky(["trust"]).env("STICKY_DB", copy).run();
    assert_no_panic(&trust);
    let status = if trust.code == Some(0) {
        env.sticky(["status", "--json"])
            .env("STICKY_DB", copy)
            .run()
    } else {
        trust
    };
    assert_no_panic(&status);
    match status.code {
        Some(0) => {
            assert!(
                status.json()["session"]["agent_session_id"].is_string(),
                "{}",
                status.describe()
            );
            let turn = env
                .sticky(["--no-wait", "after the cut"])
                .env("STICKY_DB", copy)
                .run();
            assert_no_panic(&turn);
            turn.assert_success();
            true
        }
        Some(71) => {
            status.assert_stderr_contains(&format!("sticky: {}: ", copy.display()));
            status.assert_stderr_contains("sticky never deletes it");
            assert!(
                fs::read(copy).ok() == Some(before),
                "a refused copy is left byte for byte"
            );
            false
        }
        _ => panic!("neither opened nor refused\n{}", status.describe()),
    }
}

#[test]
fn copies_of_the_database_taken_mid_write_open_or_are_refused_untouched() {
    let env = TestEnv::new();
    env.turn("first");
    let db = env.project.join(".sticky/sticky.db");
    let done = AtomicBool::new(false);
    let mut copies: BTreeSet<Vec<u8>> = BTreeSet::new();
    thread::scope(|scope| {
        scope.spawn(|| {
            for i in 0..6 {
                env.turn(&format!("turn {i}"));
            }
            done.store(true, Ordering::Release);
        });
        // The database file alone, never its -wal: what a cache or a copy at a power cut keeps.
        while !done.load(Ordering::Acquire) {
            copies.extend(fs::read(&db).ok());
            copies.extend(torn_read(&db));
        }
    });
    // Torn for certain: halves of two different states, and copies cut short.
    let states: Vec<Vec<u8>> = copies.iter().cloned().collect();
    for pair in states.windows(2) {
        let (old, new) = (&pair[0], &pair[1]);
        let half = old.len().min(new.len()) / 2 / 4096 * 4096;
        copies.insert([&old[..half], &new[half..]].concat());
        copies.insert([&new[..half], &old[half..]].concat());
    }
    for state in states.iter().take(4) {
        copies.insert(state[..state.len() / 2].to_vec());
        copies.insert(state[..state.len() - 4096].to_vec());
        copies.insert(state[..state.len() - 100].to_vec());
    }

    let (mut opened, mut refused) = (0, 0);
    for (i, bytes) in copies.iter().take(48).enumerate() {
        let copy = env.scratch.join(format!("copy-{i}/sticky.db"));
        fs::create_dir_all(copy.parent().expect("a parent")).expect("create the copy's directory");
        fs::write(&copy, bytes).expect("write the copy");
        if assert_opens_or_is_refused_untouched(&env, &copy) {
            opened += 1;
        } else {
            refused += 1;
        }
    }
    println!(
        "{} distinct copies: {opened} opened, {refused} refused",
        copies.len()
    );
    assert!(opened > 0, "plain copies of a checkpointed database open");
}

#[test]
fn a_database_whose_wal_is_missing_or_cut_short_still_opens() {
    let env = TestEnv::new();
    let first = env.turn("first").session;
    let db = env.project.join(".sticky/sticky.db");
    let wal = env.project.join(".sticky/sticky.db-wal");
    let release = env.scratch.join("release");
    let mut held = env
        .sticky(["held"])
        .env("FAKE_CLAUDE_HOLD", &release)
        .start();
    held.wait_until("the agent got the prompt", || {
        agent_received(&env, &first, "held")
    });
    // While the agent works, sticky writes nothing: the held turn's start is only in the WAL.
    let (db_bytes, wal_bytes) = (
        fs::read(&db).expect("read the db"),
        fs::read(&wal).expect("read the wal"),
    );
    assert!(!wal_bytes.is_empty(), "the turn's start is in the WAL");
    fs::write(&release, "").expect("release the held turn");
    held.wait().assert_success();

    let mut garbled = wal_bytes.clone();
    let middle = garbled.len() / 2;
    for byte in &mut garbled[middle..middle + 64] {
        *byte = !*byte;
    }
    let cases: Vec<(&str, Option<Vec<u8>>)> = vec![
        ("no wal", None),
        ("whole wal", Some(wal_bytes.clone())),
        ("empty wal", Some(Vec::new())),
        ("wal header only", Some(wal_bytes[..32].to_vec())),
        ("half a wal", Some(wal_bytes[..middle].to_vec())),
        (
            "wal less one byte",
            Some(wal_bytes[..wal_bytes.len() - 1].to_vec()),
        ),
        ("garbled wal", Some(garbled)),
    ];
    for (i, (case, wal)) in cases.into_iter().enumerate() {
        let copy = env.scratch.join(format!("case-{i}/sticky.db"));
        fs::create_dir_all(copy.parent().expect("a parent")).expect("create the case's directory");
        fs::write(&copy, &db_bytes).expect("write the db");
        if let Some(wal) = &wal {
            fs::write(copy.with_file_name("sticky.db-wal"), wal).expect("write the wal");
        }
        // A copy of the file without its stamp is adopted on purpose (review 20, M6).
        let trust = env.sticky(["trust"]).env("STICKY_DB", &copy).run();
        assert_eq!(trust.code, Some(0), "{case}\n{}", trust.describe());
        let status = env
            .sticky(["status", "--json"])
            .env("STICKY_DB", &copy)
            .run();
        assert_no_panic(&status);
        assert_eq!(status.code, Some(0), "{case}\n{}", status.describe());
        let json = status.json();
        assert_eq!(
            json["session"]["agent_session_id"], first,
            "{case}: the session survives"
        );
        if case == "whole wal" {
            assert_eq!(
                json["last_turn"]["prompt"], "held",
                "{case}: the WAL was read"
            );
        }
        let turn = env
            .sticky(["--no-wait", "next"])
            .env("STICKY_DB", &copy)
            .run();
        assert_no_panic(&turn);
        assert_eq!(turn.code, Some(0), "{case}\n{}", turn.describe());
        assert_eq!(turn.answer().session, first, "{case}");
    }
}

// --- 4. Lost sessions. ---

#[test]
fn a_lost_session_names_session_agent_reason_and_way_out_and_is_recorded() {
    let env = TestEnv::new();
    let first = env.turn("first").session;
    fs::remove_file(env.transcript(&first)).expect("delete the transcript");
    // And sticky's copy of it (tests/it/vault.rs restores from it).
    fs::remove_dir_all(env.project.join(".sticky/sticky.db.vault")).expect("no copy");

    for attempt in ["second", "third"] {
        let lost = env.sticky([attempt]).run();
        lost.assert_code(73);
        lost.assert_stderr_contains(&format!(
            "session lost: claude cannot resume session {first}"
        ));
        lost.assert_stderr_contains("No conversation found with session ID");
        lost.assert_stderr_contains("sticky new");
        assert!(lost.stdout.is_empty(), "{}", lost.describe());
    }
    // The prompts reached only the agent's refusal to resume, never a fresh session.
    let runs = env.agent_runs();
    assert_eq!(runs.len(), 3);
    for run in &runs[1..] {
        assert_eq!(run.flag("--resume").as_deref(), Some(first.as_str()));
        assert!(!run.has("--session-id"), "{:?}", run.argv());
        assert_eq!(run.0["rc"], 1, "{}", run.0);
    }
    assert!(env.transcripts().is_empty(), "no session was started");
    assert_eq!(stored_session(&env), first);
    for turn in &turns(&env)[1..] {
        assert_eq!(turn["status"], "failed", "{turn}");
        let error = turn["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("session lost") && error.contains(&first),
            "{turn}"
        );
    }

    let fresh = env.ok(["new", "start over"]).answer();
    assert_ne!(fresh.session, first);
    assert!(fresh.saw.is_empty());
}

#[test]
fn a_session_recorded_for_another_directory_is_refused() {
    let env = TestEnv::new();
    let first = env.turn("first").session;
    let moved = env.project.with_file_name("moved");
    fs::rename(&env.project, &moved).expect("move the project");

    let refused = env.sticky(["after the move"]).current_dir(&moved).run();
    refused.assert_code(73);
    refused.assert_stderr_contains(&first);
    refused.assert_stderr_contains(&format!(
        "session {first}) belongs to directory {}",
        env.project.display()
    ));
    refused.assert_stderr_contains("sticky new");
    assert_eq!(env.agent_runs().len(), 1, "the agent never ran elsewhere");

    let fresh = env.sticky(["new", "start here"]).current_dir(&moved).run();
    fresh.assert_success();
    assert_ne!(fresh.answer().session, first);
    assert_eq!(env.last_agent_run().cwd(), moved);
}

// --- 5. Amnesia. ---

#[test]
fn amnesia_fails_with_74_is_recorded_and_keeps_the_stored_id() {
    let env = TestEnv::new();
    let foreign = "0b2c9f6e-6a43-4d59-9a0b-4e7f2f3c8d11";

    // Even the first turn: the agent must answer from the session sticky chose.
    let lying = env
        .sticky(["first"])
        .env("FAKE_CLAUDE_REPORT_SESSION", foreign)
        .run();
    lying.assert_code(74);
    let minted = env
        .last_agent_run()
        .flag("--session-id")
        .expect("a chosen id");
    lying.assert_stderr_contains(&format!("asked claude to resume session {minted}"));
    lying.assert_stderr_contains(foreign);
    assert_eq!(stored_session(&env), minted, "never the reported ID");

    let first = env.turn("again").session;
    let amnesia = env
        .sticky(["second"])
        .env("FAKE_CLAUDE_REPORT_SESSION", foreign)
        .run();
    amnesia.assert_code(74);
    assert_eq!(stored_session(&env), first);
    let turn = turns(&env).pop().expect("the failed turn");
    assert_eq!(turn["status"], "failed", "{turn}");
    let error = turn["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("amnesia") && error.contains(foreign),
        "{turn}"
    );
    assert_eq!(env.turn("third").session, first);
}

// --- 6. Bad state. ---

/// Every entry under `dir` with its bytes (directories as `None`).
fn snapshot(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut entries = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read a directory").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path.clone());
                entries.push((path, None));
            } else {
                let bytes = fs::read(&path).expect("read a file");
                entries.push((path, Some(bytes)));
            }
        }
    }
    entries.sort();
    entries
}

#[test]
fn a_corrupt_database_is_refused_with_71_and_left_byte_for_byte() {
    let env = TestEnv::new();
    // A real database of several pages: long prompts spill into overflow pages.
    for tag in ["a", "b"] {
        env.turn(&format!("{tag} {}", "x".repeat(30_000)));
    }
    let db = env.project.join(".sticky/sticky.db");
    // Everything into the file itself, so a copy of it is the whole database.
    rusqlite::Connection::open(&db)
        .and_then(|conn| conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())))
        .expect("checkpoint the WAL");
    let real = fs::read(&db).expect("read the db");
    assert!(real.len() >= 8 * 4096, "{} bytes", real.len());
    let noise: Vec<u8> = (0..16_384_u32)
        .map(|i| i.wrapping_mul(2_654_435_761).to_be_bytes()[1])
        .collect();
    let newer = env.scratch.join("newer.db");
    fs::write(&newer, &real).expect("copy the db");
    rusqlite::Connection::open(&newer)
        .and_then(|conn| conn.pragma_update(None, "user_version", 999))
        .expect("claim a newer schema");
    let fixtures = [
        (
            "random bytes",
            noise,
            "is not a sticky database (file is not a database)",
        ),
        (
            "truncated",
            real[..real.len() / 2].to_vec(),
            "is damaged (database disk image is malformed)",
        ),
        (
            "newer schema",
            fs::read(&newer).expect("read it back"),
            "was written by a newer sticky (schema version 999",
        ),
    ];
    let runs_before = env.agent_runs().len();
    for (name, bytes, reason) in fixtures {
        fs::write(&db, &bytes).expect("write the fixture");
        let before = snapshot(&env.project.join(".sticky"));
        let commands: [&[&str]; 5] = [
            &["hello"],
            &["new", "hello"],
            &["new"],
            &["status"],
            &["log"],
        ];
        for args in commands {
            let output = env.sticky(args).run();
            assert_no_panic(&output);
            output.assert_code(71);
            output.assert_stderr_contains(&format!("sticky: {}: {reason}", db.display()));
            assert_eq!(
                snapshot(&env.project.join(".sticky")),
                before,
                "{name}: `sticky {args:?}` left .sticky/ byte for byte"
            );
        }
        let json = env.sticky(["--json", "hello"]).run();
        json.assert_code(71);
        assert_eq!(json.json()["exit_code"], 71, "{name}");
        assert!(
            json.json()["error"]
                .as_str()
                .is_some_and(|error| error.contains(reason)),
            "{name}: {}",
            json.stdout
        );
    }
    assert_eq!(env.agent_runs().len(), runs_before, "the agent never ran");
}

#[test]
fn a_read_only_project_directory_suggests_sticky_db() {
    if is_root() && !has_setpriv() {
        skip("running as root and setpriv is unavailable to run sticky as another user");
        return;
    }
    // A world-traversable place: the user must reach the binary, the fake and these files.
    let place = SharedPlace::new("sticky-ro-");
    let (home, project) = (&place.home, &place.project);
    chmod(project, 0o555);
    let path = SharedPlace::path();
    let sticky = |args: &[&str], db: Option<&Path>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sticky"));
        command
            .args(args)
            .current_dir(project)
            .env("HOME", home)
            .env("PATH", &path)
            .env("FAKE_CLAUDE_LOG", home.join("agent.jsonl"));
        if let Some(db) = db {
            command.env("STICKY_DB", db);
        }
        let output = as_user(&command).output().expect("run sticky");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };

    // doctor foresees it, with the same code and way out, and writes nothing either.
    let (code, stderr, stdout) = sticky(&["doctor"], None);
    assert_eq!(code, Some(71), "{stdout}{stderr}");
    let expected = format!(
        "the next turn cannot write {} (permission denied); set STICKY_DB=/writable/path",
        project.display()
    );
    assert!(stdout.contains(&expected), "{stdout}");
    let (code, stderr, _) = sticky(&["hello"], None);
    assert_eq!(code, Some(71), "{stderr}");
    assert!(
        stderr.contains(&format!("{}/.sticky", project.display())),
        "{stderr}"
    );
    assert!(stderr.contains("permission denied"), "{stderr}");
    assert!(stderr.contains("set STICKY_DB=/writable/path"), "{stderr}");
    assert!(!project.join(".sticky").exists());

    // The suggestion works: the state goes elsewhere, the agent still runs in the project.
    let db = home.join("state.db");
    let (code, stderr, stdout) = sticky(&["doctor"], Some(&db));
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let (code, stderr, stdout) = sticky(&["hello"], Some(&db));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("you said: hello"), "{stdout}");
    assert!(db.is_file());

    // A database its user cannot write: doctor exits as the next turn does.
    chmod(&db, 0o444);
    let (code, stderr, stdout) = sticky(&["doctor", "--json"], Some(&db));
    assert_eq!(code, Some(71), "{stdout}{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(report["exit_code"], 71, "{report}");
    let problem = report["problems"][0]["message"]
        .as_str()
        .unwrap_or_default();
    // (Until a read-only database can be read, the failed read is the problem reported.)
    assert!(
        problem.starts_with(&format!("{}: ", db.display()))
            && problem.contains("cannot write")
            && problem.contains("set STICKY_DB=/writable/path"),
        "{report}"
    );
    assert_eq!(
        report["problems"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    let (code, stderr, _) = sticky(&["hello again"], Some(&db));
    assert_eq!(code, Some(71), "{stderr}");
}

#[test]
fn an_agent_that_cannot_start_fails_with_72_and_the_session_stays() {
    let env = TestEnv::new();
    let first = env.turn("first").session;
    // A script whose interpreter is gone: the kernel refuses it after sticky has forked.
    let broken = env.script("bin/claude", "#!/nonexistent/node\nconsole.log('hi')\n");
    let output = env
        .sticky(["second"])
        .env("STICKY_CLAUDE_BIN", &broken)
        .run();
    output.assert_code(72);
    output.assert_stderr_contains("interpreter `/nonexistent/node`");
    output.assert_stderr_contains("STICKY_CLAUDE_BIN");
    assert!(
        !output.stderr.contains("signal"),
        "not reported as a crash\n{}",
        output.describe()
    );

    let after = env.turn("third");
    assert_eq!(after.session, first);
    assert_eq!(after.saw, ["first"]);
    assert_eq!(statuses(&env), ["ok", "ok"], "no turn was started");
}

#[test]
fn an_agent_the_kernel_will_not_run_fails_with_72_in_its_json_and_its_exit() {
    let env = TestEnv::new();
    let first = env.turn("first").session;
    // Executable, but neither a binary nor a #! script: only the spawn finds out (ENOEXEC).
    let broken = env.script("bin/claude", "console.log('hi')\n");
    for json in [false, true] {
        let mut args = vec!["second"];
        if json {
            args.insert(0, "--json");
        }
        let output = env.sticky(args).env("STICKY_CLAUDE_BIN", &broken).run();
        output.assert_code(72);
        if json {
            let object = output.json();
            assert_eq!(object["exit_code"], 72, "{object}");
            let error = object["error"].as_str().unwrap_or_default();
            assert!(
                error.contains("not a program for this machine")
                    && error.contains("STICKY_CLAUDE_BIN"),
                "{object}"
            );
        } else {
            output
                .assert_stderr_contains("exec format error")
                .assert_stderr_contains(&broken.display().to_string());
        }
    }
    let after = env.turn("third");
    assert_eq!(after.session, first);
    assert_eq!(after.saw, ["first"]);
}

/// A program that prints plain text (a wrapper script, an error of its own, a release that
/// changed its format) and exits 0 has answered nothing: the turn fails, what it printed goes
/// to stderr with a line saying it is not the agent's event format and where to look, and the
/// session stays for the next turn.
#[test]
fn an_agent_that_prints_only_plain_text_and_exits_0_fails_and_shows_what_it_printed() {
    let env = TestEnv::new();
    let first = env.turn("first").session;
    let wrapper = env.script(
        "bin/claude-wrapper",
        "#!/bin/sh\necho 'wrapper: claude is not set up here'\nexit 0\n",
    );
    let output = env
        .sticky(["second"])
        .env("STICKY_CLAUDE_BIN", &wrapper)
        .run();
    output
        .assert_code(1)
        .assert_stderr_contains("wrapper: claude is not set up here")
        .assert_stderr_contains("claude exited with code 0 without printing any of its events")
        .assert_stderr_contains("its output is not in claude's event format")
        .assert_stderr_contains("`sticky agents`")
        .assert_stderr_contains("STICKY_CLAUDE_BIN");
    assert_eq!(output.stdout, "", "no answer\n{}", output.describe());

    let json = env
        .sticky(["--json", "third"])
        .env("STICKY_CLAUDE_BIN", &wrapper)
        .run();
    json.assert_code(1);
    let object = json.json();
    assert_eq!(object["exit_code"], 1, "{object}");
    assert_eq!(object["turn"]["status"], "failed", "{object}");
    assert!(
        object["error"]
            .as_str()
            .is_some_and(|error| error.contains("not in claude's event format")),
        "{object}"
    );
    assert_eq!(statuses(&env), ["ok", "failed", "failed"]);

    let after = env.turn("fourth");
    assert_eq!(after.session, first);
    assert_eq!(after.saw, ["first"]);
}

/// A program that prints nothing at all and exits 0 (a wrapper that swallowed the agent's
/// output, an agent that died quietly) has answered nothing either. Taken as a good turn, it
/// confirmed a session the agent never made, and the next turn, with the real agent, failed as
/// "session lost" and sent the user to `sticky new` (review 21, L1). The turn fails; the next
/// one starts that session again and goes on in it.
#[test]
fn an_agent_that_prints_nothing_and_exits_0_fails_and_the_next_turn_starts_its_session() {
    let env = TestEnv::new();
    let quiet = env.script("bin/claude-quiet", "#!/bin/sh\nexit 0\n");
    let output = env.sticky(["first"]).env("STICKY_CLAUDE_BIN", &quiet).run();
    output
        .assert_code(1)
        .assert_stderr_contains("claude exited with code 0 without printing anything");
    assert_eq!(output.stdout, "", "no answer\n{}", output.describe());
    assert_eq!(statuses(&env), ["failed"]);

    let second = env.sticky(["second"]).run();
    second.assert_success();
    assert_eq!(second.answer().prompt, "second");
    assert_eq!(statuses(&env), ["failed", "ok"]);
    let third = env.turn("third");
    assert_eq!(third.saw, ["second"]);
}

#[test]
fn a_panic_exits_70_with_one_line_saying_it_is_a_bug() {
    let env = TestEnv::new();
    env.turn("first");
    let output = env
        .sticky(["status"])
        .env("STICKY_TEST_PANIC", "command")
        .run();
    output
        .assert_code(70)
        .assert_stderr_contains("STICKY_TEST_PANIC=command")
        .assert_stderr_contains("sticky: internal error: sticky panicked");
    // With --json, the object of the command says so too.
    let json = env
        .sticky(["--json", "status"])
        .env("STICKY_TEST_PANIC", "command")
        .run();
    json.assert_code(70);
    let object = json.json();
    assert_eq!(object["exit_code"], 70, "{object}");
    assert!(
        object.get("last_turn").is_some(),
        "the keys of status: {object}"
    );
    // The state is untouched: the next run works.
    env.ok(["status"]);
}

/// A store error at the turn's end (here the session's row deleted while the agent ran, as a
/// damaged or crafted file would have it) still records the turn's end; the answer is printed,
/// and the error says that the turn ran and what was not recorded.
#[test]
fn a_store_error_at_the_end_still_records_the_turns_end() {
    let env = TestEnv::new();
    let db = env.project.join(".sticky/sticky.db");
    let agent = env.script(
        "bin/forgetful",
        &format!(
            "#!{}\nimport sqlite3\nconn = sqlite3.connect({:?})\n\
             conn.execute('DELETE FROM sessions')\nconn.commit()\nprint('the answer')\n",
            python().display(),
            db.display().to_string()
        ),
    );
    let config = env.script(
        "config.toml",
        &format!(
            "[agents.forgetful]\nbin = \"{}\"\nheadless = [\"{{prompt}}\"]\nnew = [\"--new\", \"{{session_id}}\"]\n\
             resume = [\"--resume\", \"{{session_id}}\"]\nsession_id = \"uuid\"\n",
            agent.display()
        ),
    );
    let output = env
        .sticky(["-a", "forgetful", "hello"])
        .env("STICKY_CONFIG", &config)
        .run();
    output.assert_code(71).assert_stderr_contains(
        "forgetful ran turn #1 and its end is recorded, but sticky could not record that the \
         agent confirmed session #1: ",
    );
    output.assert_stderr_contains("has no session 1");
    assert_eq!(output.stdout, "the answer\n", "{}", output.describe());
    let conn = rusqlite::Connection::open(&db).expect("open the database");
    let (status, ended): (String, Option<i64>) = conn
        .query_row(
            "SELECT status, ended_at FROM turns WHERE id = 1",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("the turn's row");
    assert_eq!((status.as_str(), ended.is_some()), ("ok", true));
}

/// Text that deflate cannot shrink much: `len` letters from a linear congruential generator.
fn noise(len: usize) -> String {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            char::from(b'a' + u8::try_from((state >> 33) % 26).expect("a letter"))
        })
        .collect()
}

#[test]
fn on_a_full_disk_a_turn_records_its_end_prints_its_answer_and_says_it_was_not_kept() {
    let env = TestEnv::new();
    env.turn("first");
    let answer = noise(100_000);
    // The database may grow by two pages: the turn's row goes in, its answer (about 60 KB
    // deflated) does not (see `store::open`, debug builds only).
    let output = env
        .sticky(["second"])
        .env("FAKE_CLAUDE_ANSWER", &answer)
        .env("STICKY_TEST_DB_ROOM", "2")
        .run();
    output
        .assert_code(71)
        .assert_stderr_contains(
            "claude ran turn #2 and its end is recorded, but sticky could not record its \
             answer, for `sticky show` (it was printed all the same)",
        )
        .assert_stderr_contains("database or disk is full");
    assert_eq!(
        output.stdout,
        format!("{answer}\n"),
        "the answer is printed all the same"
    );
    // The turn is recorded as it ended, not left running to be marked abandoned.
    env.turn("third");
    assert_eq!(statuses(&env), ["ok", "ok", "ok"]);
    let turns = turns(&env);
    assert_eq!(turns[1]["exit_code"], 0, "{}", turns[1]);
    let show = env.sticky(["show", "2"]).run();
    assert!(!show.stdout.contains(&answer[..100]), "{}", show.describe());
}
