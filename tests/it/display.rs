//! What sticky shows: stored text (prompts, thread names, session IDs, models, errors) holding
//! terminal control sequences is printed escaped by every text view and error line, and kept
//! raw by `--json`; thread names with control characters are refused when a thread would be
//! created.

use crate::support::{Output, TestEnv};

/// A prompt that would retitle the terminal (OSC 0 ... BEL), paint red (CSI 31 m) and go back
/// to the start of the line (CR) to write over it.
const PROMPT: &str = "fix \x1b]0;pwned\x07\x1b[31mred\rover";
const PROMPT_SHOWN: &str = "fix \\e]0;pwned\\x07\\e[31mred\\rover";

/// A thread name, session ID, model and error with the same kind of bytes (crafted in the
/// database: sticky itself refuses such thread names).
const THREAD: &str = "ev\x1b[2Jil\x07";
const THREAD_SHOWN: &str = "ev\\e[2Jil\\x07";
const SESSION_ID: &str = "id\x1b]0;x\x07";
const SESSION_ID_SHOWN: &str = "id\\e]0;x\\x07";
const MODEL: &str = "m\x1b[1Aodel";
const MODEL_SHOWN: &str = "m\\e[1Aodel";
const ERROR: &str = "the agent said \x1b[31mno\r\nreally";
const ERROR_SHOWN: &str = "the agent said \\e[31mno\\r\\nreally";

/// Asserts neither stdout nor stderr of `output` carries ESC, BEL or CR.
#[track_caller]
fn assert_no_control_bytes(output: &Output, what: &str) {
    for (stream, bytes) in [
        ("stdout", output.stdout.as_bytes()),
        ("stderr", output.stderr.as_bytes()),
    ] {
        assert!(
            !bytes.iter().any(|b| matches!(b, 0x1b | 0x07 | b'\r')),
            "`sticky {what}` printed control bytes on {stream}\n{}",
            output.describe()
        );
    }
}

/// Asserts stdout of `output` contains every one of `shown`.
#[track_caller]
fn assert_shows(output: &Output, what: &str, shown: &[&str]) {
    for text in shown {
        assert!(
            output.stdout.contains(text),
            "`sticky {what}` does not show {text:?}\n{}",
            output.describe()
        );
    }
}

/// A project whose thread [`THREAD`] has a turn with [`PROMPT`] and a crafted session ID,
/// model and error.
fn crafted() -> TestEnv {
    let env = TestEnv::new();
    let answer = env.ok(["-t", "crafted", PROMPT]).answer();
    assert_eq!(answer.prompt, PROMPT, "the agent got the prompt as typed");
    let db = env.project.join(".sticky/sticky.db");
    let conn = rusqlite::Connection::open(db).expect("open the database");
    conn.execute(
        "UPDATE threads SET name = ?1 WHERE name = 'crafted'",
        [THREAD],
    )
    .expect("rename the thread");
    conn.execute(
        "UPDATE sessions SET agent_session_id = ?1, model = ?2",
        [SESSION_ID, MODEL],
    )
    .expect("craft the session");
    conn.execute("UPDATE turns SET error = ?1", [ERROR])
        .expect("craft the error");
    env
}

#[test]
fn every_text_view_escapes_stored_control_characters() {
    let env = crafted();
    // `doctor` exits 71, as the next turn would: the crafted ID is no UUID (and holds control
    // characters), so the turn refuses to pass it to Claude, and doctor reports that.
    let views: [(&str, i32, &[&str]); 7] = [
        (
            "status",
            0,
            &[
                PROMPT_SHOWN,
                THREAD_SHOWN,
                SESSION_ID_SHOWN,
                MODEL_SHOWN,
                ERROR_SHOWN,
            ],
        ),
        ("log", 0, &[PROMPT_SHOWN, SESSION_ID_SHOWN, MODEL_SHOWN]),
        ("sessions", 0, &[MODEL_SHOWN, "id\\e]0;x"]),
        ("threads", 0, &[THREAD_SHOWN, MODEL_SHOWN, "id\\e]0;x"]),
        ("doctor", 71, &[THREAD_SHOWN, SESSION_ID_SHOWN, MODEL_SHOWN]),
        ("config", 0, &[THREAD_SHOWN]),
        ("prompt", 0, &[THREAD_SHOWN, "id\\e]0;x"]),
    ];
    for (view, code, shown) in views {
        let output = env.sticky(["-t", THREAD, view]).run();
        output.assert_code(code);
        assert_no_control_bytes(&output, view);
        assert_shows(&output, view, shown);
    }
}

#[test]
fn error_lines_escape_the_text_they_quote() {
    let env = crafted();
    let runs = env.agent_runs().len();
    // The crafted session ID is refused before the agent runs; the error quotes it.
    let output = env.sticky(["-t", THREAD, "hello"]).run();
    output.assert_code(71);
    assert_no_control_bytes(&output, "-t THREAD hello");
    output.assert_stderr_contains(&format!("\"{SESSION_ID_SHOWN}\""));
    assert_eq!(env.agent_runs().len(), runs, "the agent never ran");
}

#[test]
fn json_keeps_the_raw_text() {
    let env = crafted();
    let status = env.ok(["-t", THREAD, "status", "--json"]).json();
    assert_eq!(status["thread"], THREAD);
    assert_eq!(status["last_turn"]["prompt"], PROMPT);
    assert_eq!(status["last_turn"]["error"], ERROR);
    assert_eq!(status["session"]["agent_session_id"], SESSION_ID);
    assert_eq!(status["session"]["model"], MODEL);
    let log = env.ok(["-t", THREAD, "log", "--json"]).json();
    assert_eq!(log["sessions"][0]["turns"][0]["prompt"], PROMPT);
    let threads = env.ok(["threads", "--json"]).json();
    assert_eq!(threads["threads"][0]["name"], THREAD);
    // JSON escapes control characters itself: the line has no raw ESC, BEL or CR.
    let output = env.ok(["-t", THREAD, "status", "--json"]);
    assert_no_control_bytes(&output, "status --json");
}

#[test]
fn the_answer_on_stdout_is_the_agents_own() {
    let env = TestEnv::new();
    let output = env.ok([PROMPT]);
    // The answer is what the user asked for: relayed as the agent wrote it.
    output.answer_to(PROMPT);
}

#[test]
fn thread_names_with_control_characters_or_nothing_are_refused() {
    let env = TestEnv::new();
    for name in ["a\x1b]0;t\x07b", "tab\there", "line\nbreak", "cr\rx"] {
        for args in [vec!["-t", name, "hello"], vec!["-t", name, "new"]] {
            let output = env.sticky(&args).run();
            output.assert_code(2);
            output.assert_stderr_contains("holds a control character");
            output.assert_stderr_contains("choose a name without one");
            assert_no_control_bytes(&output, "-t NAME");
        }
    }
    for name in ["", "   "] {
        let output = env.sticky(["-t", name, "hello"]).run();
        output.assert_code(2);
        output.assert_stderr_contains("the thread name is empty or blank");
    }
    let json = env.sticky(["--json", "-t", "x\x1by", "hello"]).run();
    json.assert_code(2);
    assert!(
        json.json()["error"]
            .as_str()
            .is_some_and(|error| error.contains("\"x\x1by\"")),
        "--json carries the raw name: {}",
        json.stdout
    );
    assert!(env.agent_runs().is_empty(), "the agent never ran");
    assert!(
        !env.project.join(".sticky/sticky.db").exists(),
        "nothing was written"
    );
    // An ordinary Unicode name is fine, and shown as it is.
    env.ok(["-t", "revue-été-日本", "hello"]);
    let threads = env.ok(["threads"]);
    assert!(
        threads.stdout.contains("revue-été-日本"),
        "{}",
        threads.describe()
    );
}

/// `-t "main "` (a stray space from a script's variable) would start a second thread that every
/// listing shows as `main`: a new thread whose name starts or ends with a space is refused, and
/// nothing is written.
#[test]
fn thread_names_with_a_space_around_them_are_refused() {
    let env = TestEnv::new();
    env.turn("on main");
    for name in ["main ", " main", " review\u{a0}"] {
        for args in [vec!["-t", name, "hello"], vec!["-t", name, "new"]] {
            let output = env.sticky(&args).run();
            output.assert_code(2);
            output.assert_stderr_contains("starts or ends with a space");
        }
    }
    assert_eq!(env.agent_runs().len(), 1, "the agent ran only for main");
    let threads = env.ok(["threads", "--json"]).json();
    assert_eq!(threads["threads"].as_array().map(Vec::len), Some(1));
}

/// `-t -rf` is read as options, so a thread named `-rf` could be reached only as `-t=-rf`, and
/// every hint sticky prints (`sticky -t -rf "..."`) would fail: a new thread whose name starts
/// with `-` is refused (`-t=NAME`, `--thread=NAME`, `STICKY_THREAD`), while one an older sticky
/// made stays reachable with `-t=NAME`.
#[test]
fn thread_names_starting_with_a_dash_are_refused_old_ones_stay_reachable() {
    let env = TestEnv::new();
    for args in [
        vec!["-t=-rf", "hello"],
        vec!["--thread=-x", "hello"],
        vec!["-t=-rf", "new"],
    ] {
        env.sticky(&args)
            .run()
            .assert_code(2)
            .assert_stderr_contains("starts with `-`");
    }
    env.sticky(["hello"])
        .env("STICKY_THREAD", "--all")
        .run()
        .assert_code(2)
        .assert_stderr_contains("starts with `-`");
    assert!(env.agent_runs().is_empty(), "the agent never ran");

    // A thread named so by an older sticky (crafted in the database).
    env.ok(["-t", "old", "first"]);
    let db = env.project.join(".sticky/sticky.db");
    let conn = rusqlite::Connection::open(db).expect("open the database");
    conn.execute("UPDATE threads SET name = '-rf' WHERE name = 'old'", [])
        .expect("rename the thread");
    drop(conn);
    let next = env.ok(["-t=-rf", "second"]);
    assert_eq!(next.answer().saw, ["first"], "{}", next.describe());
}
