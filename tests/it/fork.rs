//! Issue 27 point 1, `sticky fork NAME [PROMPT]` and `-t NAME --fork`: a thread made from the
//! current thread's live session. Its first turn has the whole history; afterwards neither
//! thread sees the other's turns. Every agent's fake reproduces its CLI's own fork (Claude
//! Code's `--fork-session`, Codex's `exec fork`, Qwen Code's `--fork-session`, opencode's
//! `--fork`); Gemini CLI and Copilot CLI have none but resume a copy of a session's files under
//! a new ID (the fakes find a session as the CLIs do: Gemini's chat file by its header's
//! `sessionId`, Copilot's `session-state/<id>/`), which sticky makes; where the source's files
//! are gone, the fork starts with sticky's recap.

use serde_json::Value;

use crate::agents::{AGENTS, Agent};
use crate::support::TestEnv;

/// The agents whose CLI has a fork of its own.
const OWN_FORK: &[&str] = &["claude", "codex", "qwen", "opencode"];

/// Every file under the test's HOME, with its bytes.
fn home_files(env: &TestEnv) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.push((path, bytes));
            }
        }
    }
    let mut out = Vec::new();
    walk(&env.home, &mut out);
    out
}

/// The sessions of thread `thread` (`sessions --json`).
fn sessions(agent: &Agent, env: &TestEnv, thread: &str) -> Vec<Value> {
    let output = agent
        .sticky(env, &["-t", thread, "sessions", "--json"])
        .run();
    output.assert_success();
    output.json()["sessions"].as_array().unwrap().clone()
}

#[test]
fn a_fork_starts_with_the_history_and_then_goes_its_own_way_on_every_agent() {
    for agent in AGENTS {
        let name = agent.name;
        let env = TestEnv::new();
        agent.turn(&env, &["-a", name, "alpha"]);
        let source = agent.turn(&env, &["beta"]);
        let forked = agent.sticky(&env, &["fork", "idea", "gamma"]).run();
        forked.assert_success();
        let fork = agent.answer(&forked);
        assert_ne!(
            fork.session, source.session,
            "{name}: the fork is a session of its own"
        );
        let run = env.last_agent_run();
        if OWN_FORK.contains(&name) {
            assert_eq!(
                fork.saw,
                ["alpha", "beta"],
                "{name}: the agent's fork has the history"
            );
            assert_eq!(fork.prompt, "gamma", "{name}");
            assert_eq!(
                run.text("forked_from")
                    .or(run.flag("--resume").as_deref().map(|_| "")),
                Some(if name == "claude" {
                    ""
                } else {
                    source.session.as_str()
                }),
                "{name}: the agent's own fork of the source: {:?}",
                run.argv()
            );
        } else {
            assert_eq!(
                fork.saw,
                ["alpha", "beta"],
                "{name}: the copy has the history"
            );
            assert_eq!(fork.prompt, "gamma", "{name}");
            let argv = run.argv().join(" ");
            assert!(
                argv.contains(&format!("--resume {}", fork.session))
                    || argv.contains(&format!("--resume={}", fork.session)),
                "{name}: the copy is resumed: {argv}"
            );
        }
        // The source goes on without the fork's turn, and the fork without the source's.
        let main = agent.turn(&env, &["delta"]);
        assert_eq!(main.session, source.session, "{name}");
        assert_eq!(
            main.saw,
            ["alpha", "beta"],
            "{name}: no leak into the source"
        );
        let again = agent.turn(&env, &["-t", "idea", "epsilon"]);
        assert_eq!(again.session, fork.session, "{name}: the fork is resumed");
        assert!(
            !again.saw.iter().any(|prompt| prompt.contains("delta")),
            "{name}: no leak into the fork: {again:?}"
        );
        assert!(
            again
                .saw
                .last()
                .is_some_and(|prompt| prompt.ends_with("gamma")),
            "{name}: {again:?}"
        );

        // The lineage: the fork's session names the source's thread and session.
        let source_row = sessions(agent, &env, "main").pop().unwrap();
        let fork_row = sessions(agent, &env, "idea").pop().unwrap();
        assert_eq!(
            fork_row["forked_from"]["thread"], "main",
            "{name}: {fork_row}"
        );
        assert_eq!(
            fork_row["forked_from"]["session"], source_row["id"],
            "{name}"
        );
        assert_eq!(
            fork_row["forked_from"]["agent_session_id"], source.session,
            "{name}"
        );
        assert_eq!(fork_row["agent_session_id"], fork.session, "{name}");
        assert_eq!(source_row["forked_from"], Value::Null, "{name}");
        let listed = agent.sticky(&env, &["-t", "idea", "sessions"]).run();
        assert!(
            listed.stdout.contains("forked from main #"),
            "{}",
            listed.stdout
        );
        let log = agent.sticky(&env, &["-t", "idea", "log"]).run();
        assert!(
            log.stdout.contains(&format!(
                "forked from main #{} ({})",
                source_row["id"], source.session
            )),
            "{}",
            log.stdout
        );
    }
}

#[test]
fn a_fork_without_a_prompt_is_made_by_its_first_turn_even_after_a_failed_one() {
    let agent = AGENTS.iter().find(|agent| agent.name == "codex").unwrap();
    let env = TestEnv::new();
    let source = agent.turn(&env, &["-a", "codex", "alpha"]);
    let made = agent.sticky(&env, &["fork", "later"]).run();
    made.assert_success().assert_clean_stdout();
    made.assert_stderr_contains("its first turn makes the fork");
    assert_eq!(env.agent_runs().len(), 1, "no agent ran");
    // The first try fails before Codex saved the fork: the next turn forks again rather than
    // start a session without the history (as a first session the agent never saved would).
    let failed = agent
        .sticky(&env, &["-t", "later", "beta"])
        .env(agent.hook("EXIT"), "1")
        .env(agent.hook("SAVE"), "after-turn")
        .run();
    assert_ne!(failed.code, Some(0), "{}", failed.describe());
    let fork = agent.turn(&env, &["-t", "later", "gamma"]);
    assert_eq!(fork.saw, ["alpha"], "{fork:?}");
    assert_ne!(fork.session, source.session);
    let run = env.last_agent_run();
    assert_eq!(
        run.text("forked_from"),
        Some(source.session.as_str()),
        "{:?}",
        run.argv()
    );
    assert_eq!(
        agent.turn(&env, &["delta"]).saw,
        ["alpha"],
        "the source never saw the fork"
    );
}

#[test]
fn dash_t_with_fork_forks_the_default_thread_in_one_step() {
    let agent = AGENTS.iter().find(|agent| agent.name == "codex").unwrap();
    let env = TestEnv::new();
    agent.turn(&env, &["-a", "codex", "alpha"]);
    let fork = agent.turn(&env, &["-t", "idea", "--fork", "beta"]);
    assert_eq!(fork.saw, ["alpha"], "{fork:?}");
    let row = sessions(agent, &env, "idea").pop().unwrap();
    assert_eq!(row["forked_from"]["thread"], "main");
}

#[test]
fn a_fork_refuses_what_it_cannot_make() {
    let env = TestEnv::new();
    // Nothing to fork yet.
    let none = env.sticky(["fork", "idea", "x"]).run();
    none.assert_code(2)
        .assert_stderr_contains("thread main has no session its agent saved");
    env.ok(["alpha"]);
    for (args, says) in [
        (&["fork", "main"][..], "is the thread it would fork"),
        (
            &["fork", "-t", "main", "main"],
            "is the thread it would fork",
        ),
        (&["fork", "bad\tname"], "control character"),
        (
            &["fork", "idea", "-a", "codex", "x"],
            "goes on with the agent of the session",
        ),
        (&["fork", "idea", "--fork", "x"], "--fork belongs to a turn"),
        (&["new", "-t", "idea", "--fork", "x"], "starts afresh"),
        (&["--fork", "x"], "names the new thread with -t"),
    ] {
        env.sticky(args)
            .run()
            .assert_code(2)
            .assert_stderr_contains(says);
    }
    env.ok(["-t", "taken", "beta"]);
    env.sticky(["fork", "taken", "x"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("thread taken exists already");
    // None of the refusals made a thread.
    let threads = env.ok(["threads", "--json"]).json();
    let names: Vec<&str> = threads["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|thread| thread["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// Gemini CLI and Copilot CLI: `sticky fork NAME` copies the session at once (no agent runs),
/// the source's files left as they were; where the agent kept no file of the source, the fork's
/// first turn starts a new session with sticky's recap, and says why.
#[test]
fn a_copy_fork_is_made_at_once_and_a_recap_stands_in_for_a_source_without_files() {
    for name in ["gemini", "copilot"] {
        let agent = AGENTS.iter().find(|agent| agent.name == name).unwrap();
        let env = TestEnv::new();
        let source = agent.turn(&env, &["-a", name, "alpha"]);
        let files_before = home_files(&env);
        let made = agent.sticky(&env, &["fork", "idea"]).run();
        made.assert_success().assert_clean_stdout();
        made.assert_stderr_contains("made now, a copy of its files as session");
        assert_eq!(env.agent_runs().len(), 1, "{name}: no agent ran");
        let row = sessions(agent, &env, "idea").pop().unwrap();
        let copy = row["agent_session_id"].as_str().unwrap().to_owned();
        assert_ne!(copy, source.session, "{name}");
        for (path, bytes) in &files_before {
            assert_eq!(
                std::fs::read(path).ok().as_ref(),
                Some(bytes),
                "{name}: {} changed",
                path.display()
            );
        }
        let fork = agent.turn(&env, &["-t", "idea", "beta"]);
        assert_eq!(
            (fork.session.as_str(), &fork.saw[..]),
            (copy.as_str(), &["alpha".to_owned()][..]),
            "{name}"
        );
        assert_eq!(
            agent.turn(&env, &["gamma"]).saw,
            ["alpha"],
            "{name}: no leak"
        );

        // The source's files gone (the agent cleaned them up): a recap stands in.
        for (path, _) in home_files(&env) {
            if path.to_string_lossy().contains(&source.session[..8]) {
                std::fs::remove_file(path).unwrap();
            }
        }
        let recorded = agent.sticky(&env, &["fork", "late"]).run();
        recorded.assert_success();
        recorded.assert_stderr_contains("keeps no file of it to copy");
        let forked = agent.sticky(&env, &["-t", "late", "delta"]).run();
        forked.assert_success();
        forked.assert_stderr_contains("kept no file of the session it forks");
        let late = agent.answer(&forked);
        assert!(late.saw.is_empty(), "{name}: {late:?}");
        assert!(
            late.prompt.contains("alpha") && late.prompt.ends_with("\n\ndelta"),
            "{name}: {}",
            late.prompt
        );
    }
}

/// A turn running on the source is waited for (a copy made then would take the agent's files
/// half-written): `--no-wait` refuses with 75 and records nothing, and a fork that waits is
/// made once the turn ended, with its history.
#[test]
fn a_fork_waits_for_the_turn_running_on_its_source() {
    let env = TestEnv::new();
    let session = env.turn("alpha").session;
    let release = env.scratch.join("release");
    let mut held = env
        .sticky(["held turn"])
        .env("FAKE_CLAUDE_HOLD", &release)
        .start();
    held.wait_until("the agent got the held prompt", || {
        std::fs::read_to_string(env.transcript(&session))
            .is_ok_and(|text| text.contains("held turn"))
    });
    env.sticky(["fork", "idea", "--no-wait", "x"])
        .run()
        .assert_code(75)
        .assert_stderr_contains("a turn still runs on thread main");
    assert_eq!(
        env.ok(["-t", "idea", "sessions", "--json"]).json()["sessions"],
        serde_json::json!([]),
        "the refused fork recorded nothing"
    );
    let mut waiting = env.sticky(["fork", "idea", "beta"]).start();
    waiting.wait_for_stderr("waiting up to");
    std::fs::write(&release, "").expect("release the held turn");
    held.wait().assert_success();
    let fork = waiting.wait();
    fork.assert_success();
    assert_eq!(fork.answer().saw, ["alpha", "held turn"]);
}

/// A Claude Code fork whose source transcript is gone (Claude deletes transcripts after
/// `cleanupPeriodDays`) while sticky's vault keeps a copy: the fork's first turn puts the
/// source back from the vault, as the source thread's own turn would, before `--resume SOURCE
/// --fork-session` (which failed every time without it, each failure saying falsely "the next
/// turn starts afresh"). Review 3.
#[test]
fn a_claude_fork_of_a_source_whose_transcript_is_gone_is_made_from_the_vault() {
    let env = TestEnv::new();
    let source = env.turn("alpha");
    env.ok(["fork", "idea"]);
    std::fs::remove_file(env.transcript(&source.session)).unwrap();
    for turn in 0..2 {
        let forked = env.sticky(["-t", "idea", "beta"]).run();
        forked.assert_success();
        if turn == 0 {
            forked.assert_stderr_contains("restored 1 file from sticky's vault");
        }
        let fork = forked.answer();
        assert_ne!(fork.session, source.session);
        // The second turn resumes the fork's own session, the first turn's included.
        assert!(
            fork.saw.first().is_some_and(|seen| seen == "alpha") || fork.prompt.contains("alpha"),
            "the fork has the source's history: {fork:?}"
        );
        if turn == 0 {
            // Put back for the fork; gone again, the fork (its own session now) goes on.
            std::fs::remove_file(env.transcript(&source.session)).unwrap();
        }
    }
}

/// Review 19, M2: `forget` of a fork's source thread, before the fork's first turn, keeps the
/// vault copy of the source session the fork is made from (not counted as deleted), so with
/// the source transcript swept the fork's first turn still puts it back and forks it.
#[test]
fn forgetting_the_source_of_a_fork_not_made_yet_keeps_the_copy_the_fork_needs() {
    let env = TestEnv::new();
    let source = env.ok(["-t", "src", "alpha"]).answer();
    env.ok(["-t", "src", "fork", "idea"]);
    let forgot = env.sticky(["forget", "-t", "src", "--yes", "--json"]).run();
    forgot.assert_success();
    assert_eq!(forgot.json()["vault_copies"], 0, "{}", forgot.stdout);
    forgot.assert_stderr_contains("stays: thread idea's next turn takes it");
    std::fs::remove_file(env.transcript(&source.session)).unwrap();

    let forked = env.sticky(["-t", "idea", "beta"]).run();
    forked.assert_success();
    forked.assert_stderr_contains("restored 1 file from sticky's vault");
    let fork = forked.answer();
    assert_ne!(fork.session, source.session);
    assert!(
        fork.saw.first().is_some_and(|seen| seen == "alpha") || fork.prompt.contains("alpha"),
        "the fork has the source's history: {fork:?}"
    );
}

/// A bundle of a fork that has not had its first turn: not "session lost ... run `sticky
/// new`", but that the fork is made at its first turn, and the way out. Review 3.
#[test]
fn exporting_a_fork_before_its_first_turn_says_the_first_turn_makes_it() {
    let env = TestEnv::new();
    env.turn("alpha");
    env.ok(["fork", "idea"]);
    let export = env.sticky(["-t", "idea", "export"]).run();
    assert_ne!(export.code, Some(0), "exported an unmade fork");
    export.assert_stderr_contains("made at its first turn");
    export.assert_stderr_contains("sticky -t idea \"PROMPT\"");
    assert!(
        !export.stderr.contains("session lost"),
        "an unmade fork is not lost: {}",
        export.stderr
    );
}

/// Review 6, L4: `echo PROMPT | sticky fork NAME` takes piped stdin as the fork's first prompt,
/// as `sticky new` does, rather than making the fork and dropping it without a word: the first
/// turn runs on it, with the source's history, and the source thread goes on as it was.
#[test]
fn a_fork_takes_piped_stdin_as_its_first_prompt() {
    let env = TestEnv::new();
    let source = env.turn("alpha");
    let forked = env
        .sticky(["fork", "idea"])
        .stdin("the piped prompt\n")
        .run();
    forked.assert_success();
    let fork = forked.answer();
    assert!(fork.prompt.contains("the piped prompt"), "{fork:?}");
    assert_ne!(fork.session, source.session);
    assert!(
        fork.saw.first().is_some_and(|seen| seen == "alpha") || fork.prompt.contains("alpha"),
        "the fork has the source's history: {fork:?}"
    );
    let back = env.sticky(["beta"]).run();
    back.assert_success();
    assert_eq!(back.answer().session, source.session);
    let again = env.sticky(["-t", "idea", "gamma"]).run();
    again.assert_success();
    assert_eq!(again.answer().session, fork.session);
}

/// Review 6: a project with a fork not made yet (`sticky fork idea`, no prompt) is moved and
/// `sticky relocate` run: relocate exits 73 and leaves the fork behind, saying Claude "keeps no
/// file of it" (another copy relocated it, or Claude deleted it), which is false (the fork is
/// only not made yet); the fork's first turn is refused the same way, and the way out it names
/// (`-t idea new --carry`) starts a session whose recap is empty: the fork never gets the
/// source's history.
#[test]
fn review_relocate_carries_a_fork_not_made_yet_and_its_first_turn_has_the_history() {
    let env = TestEnv::new();
    env.turn("alpha");
    env.ok(["fork", "idea"]);
    let moved = env.move_project();
    env.ok_in(&moved, ["relocate"]);
    let forked = env.sticky(["-t", "idea", "beta"]).current_dir(&moved).run();
    forked.assert_success();
    let fork = forked.answer();
    assert!(
        fork.saw.first().is_some_and(|seen| seen == "alpha") || fork.prompt.contains("alpha"),
        "the fork has the source's history: {fork:?}"
    );
}
