//! Prompts and piped context reach the agent whole and literally: no shell in between, no
//! truncation, and inputs beyond Linux's 128 KiB limit for one argument go through stdin.

use std::fmt::Write as _;
use std::io::{Read, Write as _};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::{TestEnv, wait_for};

/// Text of `len` bytes whose every line is numbered, so a lost, doubled or reordered chunk shows.
fn numbered_text(len: usize, tag: &str) -> String {
    let mut text = String::with_capacity(len + 64);
    let mut line = 0;
    while text.len() < len {
        let _ = writeln!(text, "{tag} line {line:07} äöü €");
        line += 1;
    }
    let mut end = len;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}

#[test]
fn piped_stdin_is_added_to_the_prompt_as_context() {
    let env = TestEnv::new();
    let output = env
        .sticky(["review this"])
        .stdin("diff --git a/x b/x\n+added\n")
        .run();
    output.assert_success();
    let run = env.last_agent_run();
    assert_eq!(run.prompt(), "review this\n\ndiff --git a/x b/x\n+added\n");
    output.answer_to(run.prompt());
}

#[test]
fn piped_stdin_without_a_prompt_is_the_prompt() {
    let env = TestEnv::new();
    let output = env
        .sticky(Vec::<&str>::new())
        .stdin("explain the error")
        .run();
    output.assert_success();
    assert_eq!(env.last_agent_run().prompt(), "explain the error");
    assert_eq!(env.last_agent_run().text("mode"), Some("headless"));
}

/// A prompt made by stdin alone reaches the agent whole, but the turn's row records its first
/// 16 KiB and how long it was: `make report | sticky` on every turn must not store megabytes a
/// turn, nor leave a conversation too big to export (review 19, M3).
#[test]
fn a_long_prompt_piped_alone_arrives_whole_and_is_recorded_by_its_head() {
    let env = TestEnv::new();
    let report = numbered_text(200 * 1024, "report");
    env.sticky(Vec::<&str>::new())
        .stdin(report.clone())
        .run()
        .assert_success();
    assert!(
        env.last_agent_run().prompt() == report,
        "the agent got it all"
    );
    let log = env.log_json();
    let recorded = log["sessions"][0]["turns"][0]["prompt"]
        .as_str()
        .expect("a recorded prompt");
    let marker = format!(
        "\n\n[… {} bytes in all; the rest is not kept]",
        report.len()
    );
    let head = recorded.strip_suffix(&marker).expect("the length said");
    assert!(
        head.len() <= 16 * 1024 && head.len() > 8 * 1024,
        "{}",
        head.len()
    );
    assert!(report.starts_with(head), "the head, as it came");
    assert!(
        head.ends_with("€"),
        "cut at a line's end: {:?}",
        &head[head.len() - 20..]
    );
}

#[test]
fn prompt_words_are_joined_with_spaces() {
    let env = TestEnv::new();
    env.ok(["fix", "the", "bug"]);
    assert_eq!(env.last_agent_run().prompt(), "fix the bug");
}

#[test]
fn prompts_arrive_literally_with_no_shell_in_between() {
    let env = TestEnv::new();
    let marker = env.scratch.join("pwned");
    let prompt = format!(
        "a $(touch {m}) b `touch {m}` c \"double\" 'single' $HOME ${{PATH}} \\n \\\\ ; | & > <\n\
         second line\ttab\n\n* ? [a-z] ~ !! # 🦀",
        m = marker.display()
    );
    let output = env.ok([prompt.as_str()]);
    assert_eq!(env.last_agent_run().prompt(), prompt);
    output.answer_to(&prompt);
    assert!(!marker.exists(), "nothing in the prompt was run by a shell");

    // An answer spanning lines reaches stdout with "\n" line ends, not the pty's "\r\n".
    output.assert_clean_stdout();
}

#[test]
fn a_prompt_that_looks_like_an_option_stays_a_prompt() {
    let env = TestEnv::new();
    let output = env
        .sticky(Vec::<&str>::new())
        .stdin("--resume is broken, -v too")
        .run();
    output.assert_success();
    let run = env.last_agent_run();
    assert_eq!(
        run.prompt(),
        "--resume is broken, -v too",
        "argv: {:?}",
        run.argv()
    );
    assert!(
        run.flag("--session-id").is_some(),
        "a fresh session, not a resume: {:?}",
        run.argv()
    );
}

#[test]
fn a_300_kib_prompt_arrives_whole() {
    let env = TestEnv::new();
    // One argument may not exceed 128 KiB on Linux, so the prompt is three words of 100 KiB.
    let words: Vec<String> = ["one", "two", "three"]
        .iter()
        .map(|tag| numbered_text(100 * 1024, tag))
        .collect();
    let prompt = words.join(" ");
    let output = env.sticky(&words).run();
    output.assert_success();

    let run = env.last_agent_run();
    assert_eq!(
        run.0["prompt_bytes"],
        prompt.len(),
        "the agent got every byte"
    );
    assert!(run.prompt() == prompt, "the agent got the prompt unchanged");
    assert_eq!(
        run.text("prompt_source"),
        Some("stdin"),
        "large prompts go through stdin"
    );
    assert!(
        run.argv().iter().all(|a| a.len() < 1024),
        "no huge argument was passed to the agent"
    );
    output.answer_to(&prompt);
    output.assert_clean_stdout();
}

#[test]
fn a_1_mib_piped_context_arrives_whole() {
    let env = TestEnv::new();
    let context = numbered_text(1024 * 1024, "ctx");
    let output = env.sticky(["summarize"]).stdin(context.clone()).run();
    output.assert_success();

    let expected = format!("summarize\n\n{context}");
    let run = env.last_agent_run();
    assert_eq!(run.0["prompt_bytes"], expected.len());
    assert!(run.prompt() == expected, "the context arrived unchanged");
    output.answer_to(&expected);

    let next = env.turn("and then?");
    assert_eq!(
        next.saw.len(),
        1,
        "the large turn is part of the session's history"
    );
}

/// A stderr on a pseudo-terminal, as a person's: what sticky wrote there so far.
struct TerminalStderr {
    text: Arc<Mutex<Vec<u8>>>,
}

impl TerminalStderr {
    /// Gives `command` a stderr on a new pseudo-terminal, read on a thread.
    fn attach(command: &mut Command) -> Self {
        let pty = nix::pty::openpty(None, None).expect("open a pseudo-terminal");
        command.stderr(Stdio::from(pty.slave));
        let text = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::clone(&text);
        let mut master = std::fs::File::from(pty.master);
        std::thread::spawn(move || {
            let mut chunk = [0_u8; 4096];
            // EIO once every holder of the terminal's other side is gone.
            while let Ok(read @ 1..) = master.read(&mut chunk) {
                shared
                    .lock()
                    .expect("lock")
                    .extend_from_slice(&chunk[..read]);
            }
        });
        Self { text }
    }

    fn so_far(&self) -> String {
        String::from_utf8_lossy(&self.text.lock().expect("lock")).into_owned()
    }
}

/// Waits for `child` to exit (within the harness's deadline) and returns its status.
#[track_caller]
fn wait_exit(child: &mut std::process::Child, what: &str) -> std::process::ExitStatus {
    let mut status = None;
    wait_for(what, || {
        status = child.try_wait().expect("wait");
        status.is_some()
    });
    status.expect("exited")
}

/// A command line run by bash in the project, with the environment sticky's runs get and
/// `$STICKY` the built sticky.
fn bash(env: &TestEnv, script: &str) -> Command {
    let sticky = env.sticky(Vec::<&str>::new()).command();
    let mut command = Command::new("bash");
    command.arg("-c").arg(script);
    for (key, value) in sticky.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    command
        .env("STICKY", sticky.get_program())
        .current_dir(sticky.get_current_dir().expect("a directory"));
    command
}

/// How late a producer starts in these tests: longer than the 3 seconds sticky used to give
/// any pipe, so the old behaviour fails them; the new one reads it whatever the delay.
const LATER_THAN_THE_OLD_GRACE: Duration = Duration::from_millis(3500);

/// Runs `command` (stdin and stdout its own), whose producer writes into sticky's stdin only
/// once `go` exists, which is made after sticky is seen waiting for it however long and the
/// producer is later than the old grace; checks that sticky read it (exit 0, no note that it
/// gave up, the wait said once) and returns what it wrote on stdout and on its terminal stderr.
#[cfg(target_os = "linux")]
fn late_producer_read(mut command: Command, go: &std::path::Path) -> (String, String) {
    let _release = Release(go.to_owned());
    command.stdout(Stdio::piped());
    let stderr = TerminalStderr::attach(&mut command);
    let started = Instant::now();
    let mut child = command.spawn().expect("start the command line");
    drop(command);
    wait_for("sticky to say it waits for stdin", || {
        stderr.so_far().contains("for stdin")
    });
    assert!(
        stderr.so_far().contains("waiting for stdin"),
        "waiting however long, not for a grace period: {}",
        stderr.so_far()
    );
    wait_for("the producer to be later than the old grace", || {
        started.elapsed() > LATER_THAN_THE_OLD_GRACE
    });
    assert!(
        child.try_wait().expect("poll").is_none(),
        "{}",
        stderr.so_far()
    );
    std::fs::write(go, "").expect("let the producer write");
    let status = wait_exit(&mut child, "the command line to end");
    let mut stdout = String::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout);
    let text = stderr.so_far();
    assert!(status.success(), "{text}");
    assert!(!text.contains("nothing arrived"), "{text}");
    assert_eq!(
        text.matches("waiting for stdin").count(),
        1,
        "said once: {text}"
    );
    assert!(text.contains("--stdin skip"), "{text}");
    (stdout, text)
}

/// Makes its file when dropped: a producer waiting for it ends when a test fails. (The
/// producers of the tests that run as another user give up by themselves after two minutes
/// too: one may look between the file and its directory's removal.)
#[cfg(target_os = "linux")]
struct Release(std::path::PathBuf);

#[cfg(target_os = "linux")]
impl Drop for Release {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.0, "");
    }
}

/// Runs `script` (bash, in the project) whose producer writes `warning: x` into sticky's stdin
/// only once `$GO` exists (see [`late_producer_read`]); the turn must get the input.
#[cfg(target_os = "linux")]
fn a_late_producer_is_read(script: &str) {
    let env = TestEnv::new();
    let go = env.scratch.join("go");
    let mut command = bash(&env, script);
    command.env("GO", &go).stdin(Stdio::null());
    late_producer_read(command, &go);
    assert_eq!(
        env.last_agent_run().prompt(),
        "fix them too\n\nwarning: x\n"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_late_producer_in_a_shell_pipeline_is_read_whatever_its_delay() {
    // docs/ci.md's two-job example: `cargo clippy 2>&1 | sticky "these remain, fix them too"`.
    a_late_producer_is_read(
        r#"(until [ -e "$GO" ]; do sleep 0.05; done; echo "warning: x") | "$STICKY" "fix them too""#,
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_late_producer_under_timeout_is_read_whatever_its_delay() {
    // GNU `timeout` runs its command in a process group of its own (the same session): a CI
    // step bounded with it is still the user's pipeline.
    a_late_producer_is_read(
        r#"timeout 600 bash -c 'until [ -e "$GO" ]; do sleep 0.05; done; echo "warning: x"' | "$STICKY" "fix them too""#,
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_late_producer_into_sticky_under_timeout_is_read_whatever_its_delay() {
    a_late_producer_is_read(
        r#"(until [ -e "$GO" ]; do sleep 0.05; done; echo "warning: x") | timeout 600 "$STICKY" "fix them too""#,
    );
}

/// Runs `command` (sticky, or what starts it, its stdin set) while `holder` (a `cat`
/// reading its piped stdin) runs, then ends `holder`; checks that sticky gave up on stdin after
/// its grace, as a terminal is told, and returns what its terminal stderr shows.
fn gives_up_after_the_grace(mut command: Command, mut holder: std::process::Child) -> String {
    command.stdout(Stdio::null());
    let stderr = TerminalStderr::attach(&mut command);
    let mut sticky = command.spawn().expect("start sticky");
    drop(command);
    let status = wait_exit(&mut sticky, "sticky to end without stdin's end");
    drop(holder.stdin.take());
    holder.wait().expect("the holder ends");
    let text = stderr.so_far();
    assert!(status.success(), "{text}");
    assert!(text.contains("waiting up to 3s for stdin"), "{text}");
    assert!(
        text.contains("nothing arrived on stdin within 3s"),
        "{text}"
    );
    text
}

#[test]
fn a_silent_pipe_from_another_session_ends_after_the_grace_with_the_note() {
    // The pipe's only writer is a process of another session (a runner's helper), not
    // sticky's parent: a pipe from elsewhere, which keeps the grace period.
    let env = TestEnv::new();
    // Close-on-exec, so no other test's child (of this session) inherits the write end
    // (pipe2(2) is Linux's: pipe(2) and fcntl(2) build on macOS too).
    let (read, write) = nix::unistd::pipe().expect("a pipe");
    for end in [&read, &write] {
        nix::fcntl::fcntl(
            end,
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
        )
        .expect("a close-on-exec pipe");
    }
    // util-linux's `setsid`, which execs `cat` in a session of its own; elsewhere sticky
    // cannot tell who writes a pipe, and any holder will do.
    let mut holder = if cfg!(target_os = "linux") {
        let mut setsid = Command::new("setsid");
        setsid.arg("cat");
        setsid
    } else {
        Command::new("cat")
    };
    holder.stdin(Stdio::piped()).stdout(Stdio::from(write));
    let holder = holder.spawn().expect("start the holder");
    #[cfg(target_os = "linux")]
    {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(holder.id()).expect("a pid"));
        wait_for("the holder to have a session of its own", || {
            nix::unistd::getsid(Some(pid)) != nix::unistd::getsid(None)
        });
    }
    let mut command = env.sticky(["are you there?"]).command();
    command.stdin(Stdio::from(read));
    let text = gives_up_after_the_grace(command, holder);
    assert!(text.contains("--stdin wait"), "{text}");
    assert_eq!(env.last_agent_run().prompt(), "are you there?");
}

#[test]
fn stdin_wait_reads_a_pipe_from_elsewhere_however_late() {
    let env = TestEnv::new();
    let started = env
        .sticky(["--stdin", "wait", "summarize"])
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut sticky = started.expect("start sticky");
    // This test, sticky's parent, holds the pipe: without `--stdin wait`, a pipe from elsewhere.
    let mut pipe = sticky.stdin.take().expect("stdin");
    let since = Instant::now();
    wait_for("the input to be later than the grace", || {
        since.elapsed() > LATER_THAN_THE_OLD_GRACE
    });
    assert!(
        sticky.try_wait().expect("poll").is_none(),
        "sticky still waits"
    );
    pipe.write_all(b"the late log\n").expect("write");
    drop(pipe);
    let status = wait_exit(&mut sticky, "sticky to end");
    let mut stderr = String::new();
    sticky
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    assert!(status.success(), "{stderr}");
    assert!(
        !stderr.contains("waiting"),
        "a note for a terminal only: {stderr}"
    );
    assert_eq!(env.last_agent_run().prompt(), "summarize\n\nthe late log\n");
}

/// A pipe no child inherits by accident (close-on-exec; pipe2(2) is Linux's only).
fn private_pipe() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    let (read, write) = nix::unistd::pipe().expect("a pipe");
    for end in [&read, &write] {
        nix::fcntl::fcntl(
            end,
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
        )
        .expect("a close-on-exec pipe");
    }
    (read, write)
}

/// Runs sticky with `args` and `vars` on a pipe that holds `piped` before sticky starts, which
/// this test (sticky's parent, so no pipeline of the user's) holds open until sticky ends, or
/// closes first (`closed`); returns whether it succeeded and its stderr.
fn on_a_held_pipe(
    env: &TestEnv,
    args: &[&str],
    vars: &[(&str, &str)],
    piped: &[u8],
    closed: bool,
) -> (bool, String) {
    let (read, write) = private_pipe();
    let mut writer = Some(std::fs::File::from(write));
    if let Some(writer) = writer.as_mut() {
        writer.write_all(piped).expect("write");
    }
    if closed {
        writer = None;
    }
    let mut command = env.sticky(args).command();
    for (key, value) in vars {
        command.env(key, value);
    }
    let mut sticky = command
        .stdin(Stdio::from(read))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sticky");
    drop(command);
    let status = wait_exit(&mut sticky, "sticky to end with stdin open");
    drop(writer);
    let mut stderr = String::new();
    let _ = sticky
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr);
    (status.success(), stderr)
}

/// What a turn says when it skips stdin that holds input.
const SKIPPED: &str = "sticky: stdin holds input that this turn does not send";

#[test]
fn stdin_skip_never_reads_stdin_and_says_once_what_it_drops() {
    let mut env = TestEnv::without_git();
    let config = env.script("config.toml", "stdin = \"skip\"\n");
    let config = config.to_str().expect("a UTF-8 path");
    let from_config = format!("(skip, from {config})");
    // Written and held open: skip by a setting neither reads it nor waits for it, and says
    // once that it drops it, by which setting, and how to send it.
    for (args, vars, setting) in [
        (
            &["only the words"][..],
            &[("STICKY_STDIN", "skip")][..],
            "(skip, from STICKY_STDIN)",
        ),
        (
            &["only the words"],
            &[("STICKY_CONFIG", config)],
            from_config.as_str(),
        ),
    ] {
        let (ok, stderr) = on_a_held_pipe(&env, args, vars, b"not this\n", false);
        assert!(ok, "{args:?}: {stderr}");
        assert_eq!(stderr.matches(SKIPPED).count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains(setting) && stderr.contains("--stdin wait sends it"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("waiting"), "{args:?}: no wait: {stderr}");
        assert_eq!(env.last_agent_run().prompt(), "only the words", "{args:?}");
    }
    // Written and closed: said all the same. Silent and held open by no pipeline of the user's
    // (this test), at its end, or with --quiet: nothing is dropped or nothing is said. Skipped
    // by `--stdin skip` on the command line itself: never read, and not said (the user just
    // typed it; a `while read` loop's turns would say it each round).
    let words = ["only the words"];
    let quiet = ["--quiet", "only the words"];
    let flag = ["--stdin", "skip", "only the words"];
    let flag_new = ["--stdin", "skip", "new", "only the words"];
    let setting = &[("STICKY_STDIN", "skip")][..];
    for (args, vars, piped, closed, said) in [
        (&words[..], setting, &b"not this"[..], true, true),
        (&words, setting, b"", false, false),
        (&words, setting, b"", true, false),
        (&quiet, setting, b"not this", false, false),
        (&flag, &[][..], b"not this", false, false),
        (&flag, &[][..], b"not this", true, false),
        (
            &flag_new,
            &[("STICKY_STDIN", "wait")][..],
            b"not this",
            false,
            false,
        ),
    ] {
        let (ok, stderr) = on_a_held_pipe(&env, args, vars, piped, closed);
        assert!(ok, "{args:?}: {stderr}");
        assert_eq!(
            stderr.contains(SKIPPED),
            said,
            "{args:?} {piped:?} closed {closed}: {stderr}"
        );
        assert_eq!(env.last_agent_run().prompt(), "only the words", "{args:?}");
    }
    // Without words stdin would be the prompt: skipped, there is none, and the error says why.
    env.set_var("STICKY_STDIN", "skip");
    env.sticky(Vec::<&str>::new())
        .stdin("the prompt")
        .run()
        .assert_code(2)
        .assert_stderr_contains("no prompt: stdin is skipped (--stdin skip, from STICKY_STDIN)");
}

/// docs/input.md's `while read` loop: each turn given `</dev/null` (or `--stdin skip`) leaves the
/// loop its list; without either, the first turn takes the rest of the list as its context and
/// the loop ends after one round.
#[test]
fn a_while_read_loop_keeps_its_list_when_its_turns_do_not_read_stdin() {
    let env = TestEnv::new();
    let each = ["review a.rs", "review b.rs"];
    for (redirect, prompts) in [
        (" </dev/null", &each[..]),
        (" --stdin skip", &each),
        ("", &["review a.rs\n\nb.rs\n"]),
    ] {
        let before = env.agent_runs().len();
        let script = format!(
            r#"printf 'a.rs\nb.rs\n' | while read -r f; do "$STICKY" "review $f"{redirect}; done"#
        );
        let output = bash(&env, &script)
            .stdin(Stdio::null())
            .output()
            .expect("run the loop");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{script}: {stderr}");
        let got: Vec<String> = env.agent_runs()[before..]
            .iter()
            .map(|run| run.prompt().to_owned())
            .collect();
        assert_eq!(got, prompts, "{script}: {stderr}");
    }
}

/// A producer of the user's pipeline that has not written yet is input to come: skipped, and
/// said at once, without waiting for it.
#[cfg(target_os = "linux")]
#[test]
fn stdin_skip_says_it_drops_what_the_users_pipeline_will_write() {
    let env = TestEnv::new();
    let go = env.scratch.join("go");
    let mut command = bash(
        &env,
        r#"(until [ -e "$GO" ]; do sleep 0.05; done; echo late) | "$STICKY" "only the words""#,
    );
    command
        .env("GO", &go)
        .env("STICKY_STDIN", "skip")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("start bash");
    drop(command);
    // The turn runs while the producer still waits: skip never waits for it.
    wait_for("the turn to run", || env.agent_runs().len() == 1);
    std::fs::write(&go, "").expect("let the producer end");
    let status = wait_exit(&mut child, "the pipeline to end");
    let mut stderr = String::new();
    let _ = child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr);
    assert_eq!(stderr.matches(SKIPPED).count(), 1, "{stderr}");
    assert!(stderr.contains("(skip, from STICKY_STDIN)"), "{stderr}");
    // bash reports the pipeline's last command: sticky's exit.
    assert!(status.success(), "{stderr}");
    assert_eq!(env.last_agent_run().prompt(), "only the words");
}

#[test]
fn the_stdin_setting_and_its_source_show_in_config() {
    let env = TestEnv::new();
    let stdin = |output: &crate::support::Output| output.json()["stdin"].clone();
    assert_eq!(
        stdin(&env.ok(["config", "--json"])),
        serde_json::json!({"value": "auto", "source": "default", "origin": "built-in default"})
    );
    let config = env.scratch.join("config.toml");
    std::fs::write(&config, "stdin = \"skip\"\n").expect("write the config");
    let from_file = env
        .sticky(["config", "--json"])
        .env("STICKY_CONFIG", &config)
        .run();
    from_file.assert_success();
    assert_eq!(
        stdin(&from_file),
        serde_json::json!({"value": "skip", "source": "config", "origin": config.to_str().unwrap()})
    );
    let from_env = env
        .sticky(["config", "--json"])
        .env("STICKY_CONFIG", &config)
        .env("STICKY_STDIN", "wait")
        .run();
    from_env.assert_success();
    assert_eq!(
        stdin(&from_env),
        serde_json::json!({"value": "wait", "source": "environment", "origin": "STICKY_STDIN"})
    );
    let text = env.sticky(["config"]).env("STICKY_STDIN", "wait").run();
    text.assert_success();
    assert!(
        text.stdout
            .lines()
            .any(|line| line.starts_with("stdin") && line.contains("wait  (STICKY_STDIN)")),
        "{}",
        text.describe()
    );
    // A value sticky cannot use stops the commands it changes, naming the way out.
    for args in [&["config"][..], &["hi"]] {
        env.sticky(args)
            .env("STICKY_STDIN", "later")
            .stdin("x")
            .run()
            .assert_code(2)
            .assert_stderr_contains("STICKY_STDIN \"later\" is not what a turn can do with stdin");
    }
    env.sticky(["status"])
        .env("STICKY_STDIN", "later")
        .run()
        .assert_success();
}

#[test]
fn a_pipe_nobody_writes_or_closes_does_not_hang_a_turn_with_a_prompt() {
    // Some CI runners hand their steps such a stdin; the turn goes on without context.
    let env = TestEnv::new();
    let stderr_path = env.root().join("stderr");
    let mut child = env
        .sticky(["are you there?"])
        .command()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("start sticky");
    let _held_open = child.stdin.take();
    crate::support::wait_for("sticky to end without stdin's end", || {
        child.try_wait().expect("wait").is_some()
    });
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("nothing arrived on stdin"), "{stderr}");
    assert!(
        !stderr.contains("waiting"),
        "the wait is told on a terminal only: {stderr}"
    );
    assert_eq!(env.last_agent_run().text("prompt"), Some("are you there?"));
}

/// Without prompt words stdin is the prompt; a pipe nobody writes or closes (a runner's) hung
/// a bare `sticky` forever, where `sticky new` went on after the grace (review 19, L4). It
/// gives up after the same grace, with a usage error naming the ways out, and runs nothing
/// (on Linux: elsewhere no pipe can be told the user's own, and such a prompt is waited for).
#[test]
#[cfg(target_os = "linux")]
fn a_pipe_nobody_writes_or_closes_does_not_hang_a_turn_whose_prompt_it_was_to_be() {
    let env = TestEnv::new();
    env.turn("first");
    let stderr_path = env.root().join("stderr");
    let mut child = env
        .sticky(std::iter::empty::<&str>())
        .command()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("start sticky");
    let _held_open = child.stdin.take();
    crate::support::wait_for("sticky to end without stdin's end", || {
        child.try_wait().expect("wait").is_some()
    });
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no prompt: nothing arrived on stdin within 3s"),
        "{stderr}"
    );
    assert!(stderr.contains("--stdin wait"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(env.agent_runs().len(), 1, "nothing ran: {stderr}");
}

/// A writer of sticky's own session that only passes (in CI, a process another test forked,
/// between its fork and its exec) makes the pipe look like the user's pipeline for a moment:
/// once it is gone, only sticky's parent holds the pipe, and the turn goes on after the grace
/// a pipe from elsewhere gets, rather than waiting forever (CI hung here once).
#[test]
fn a_pipeline_writer_that_leaves_leaves_the_pipe_to_the_grace() {
    let env = TestEnv::new();
    let stderr_path = env.root().join("stderr");
    let (reader, writer) = std::io::pipe().expect("a pipe");
    // The passing writer: in this session, no ancestor of sticky, gone after a few seconds.
    let mut passing = std::process::Command::new("sleep")
        .arg("4")
        .stdout(writer.try_clone().expect("clone the write end"))
        .spawn()
        .expect("start sleep");
    let mut child = env
        .sticky(["are you there?"])
        .command()
        .stdin(reader)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("start sticky");
    let _held_open = writer;
    crate::support::wait_for("sticky to end once the passing writer left", || {
        child.try_wait().expect("wait").is_some()
    });
    passing.wait().expect("sleep ends");
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("nothing arrived on stdin"), "{stderr}");
    assert_eq!(env.last_agent_run().text("prompt"), Some("are you there?"));
}

#[test]
fn piped_stdin_starts_a_new_session_as_it_starts_a_turn() {
    let env = TestEnv::new();
    let first = env.turn("old work").session;
    let output = env.sticky(["new"]).stdin("start on X\n").run();
    output.assert_success();
    let run = env.last_agent_run();
    assert_eq!(run.prompt(), "start on X\n");
    let status = env.status_json();
    assert_ne!(status["session"]["agent_session_id"], first.as_str());
    assert_eq!(status["session"]["rotation_reason"], "new");
    assert_eq!(status["last_turn"]["prompt"], "start on X\n");
    // Without input (stdin at its end at once), `new` only rotates: no turn runs.
    let runs = env.agent_runs().len();
    env.ok(["new"]);
    assert_eq!(env.agent_runs().len(), runs);
    // With words, piped input is their context, as for a turn.
    env.sticky(["new", "review"])
        .stdin("the diff")
        .run()
        .assert_success();
    assert_eq!(env.last_agent_run().prompt(), "review\n\nthe diff");
}

#[test]
fn a_prompt_goes_before_the_agent_arguments_or_with_p() {
    let env = TestEnv::new();
    env.ok(["apply the fix", "--", "--permission-mode", "acceptEdits"]);
    let run = env.last_agent_run();
    assert_eq!(run.prompt(), "apply the fix");
    assert_eq!(
        run.flag("--permission-mode").as_deref(),
        Some("acceptEdits")
    );

    env.ok(["-p", "-v is broken", "--", "--permission-mode", "plan"]);
    let run = env.last_agent_run();
    assert_eq!(run.prompt(), "-v is broken");
    assert_eq!(run.flag("--permission-mode").as_deref(), Some("plan"));
    env.ok(["new", "-p", "--start over"]);
    assert_eq!(env.last_agent_run().prompt(), "--start over");

    // `sticky new` without a prompt runs no agent: arguments for it are refused, not dropped.
    env.sticky(["new", "--", "--permission-mode", "plan", "start over"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("give `sticky new` a prompt before `--`");
    // A prompt after `--` is the agent's argument, and the error says where the prompt goes.
    let runs = env.agent_runs().len();
    env.sticky(["--", "--permission-mode", "acceptEdits", "apply the fix"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("give the prompt before `--`");
    assert_eq!(env.agent_runs().len(), runs);
}

#[test]
fn endless_piped_input_stops_at_the_cap_with_a_usage_error() {
    // `yes | sticky x`: sticky stops reading past its cap instead of growing without bound.
    let env = TestEnv::new();
    let mut sticky = env
        .sticky(["summarize"])
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sticky");
    let mut pipe = sticky.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let chunk = b"y\n".repeat(32 * 1024);
        let mut written: u64 = 0;
        // Until sticky closes its end; a bound, so a sticky that reads forever fails the test
        // rather than filling the memory.
        while written < 256 << 20 && pipe.write_all(&chunk).is_ok() {
            written += chunk.len() as u64;
        }
        written
    });
    let status = wait_exit(&mut sticky, "sticky to stop reading");
    let written = writer.join().expect("the writer");
    let mut stderr = String::new();
    sticky
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("more than 32 MiB on stdin") && stderr.contains("head -c"),
        "{stderr}"
    );
    assert!(written < 256 << 20, "sticky read {written} bytes");
    assert!(env.agent_runs().is_empty(), "no turn ran");
}

/// A project `nobody` owns, for sticky to run there as `nobody` while the test runs as root;
/// `None` (the test skipped) elsewhere.
#[cfg(target_os = "linux")]
fn nobodys_project(prefix: &str) -> Option<crate::support::other_user::SharedPlace> {
    use crate::support::other_user::{SharedPlace, give_to_nobody, has_setpriv, is_root};
    if !is_root() || !has_setpriv() {
        crate::support::skip::skip("needs root and setpriv to run sticky as another user");
        return None;
    }
    let place = SharedPlace::new(prefix);
    give_to_nobody(&place.project);
    Some(place)
}

/// sticky with `prompt`, in `place`'s project with its HOME: for `as_user` to run as `nobody`.
#[cfg(target_os = "linux")]
fn nobodys_sticky(place: &crate::support::other_user::SharedPlace, prompt: &str) -> Command {
    let mut sticky = Command::new(env!("CARGO_BIN_EXE_sticky"));
    sticky
        .arg(prompt)
        .env("HOME", &place.home)
        .env("PATH", crate::support::other_user::SharedPlace::path())
        .env("FAKE_CLAUDE_LOG", "/dev/null")
        .current_dir(&place.project);
    sticky
}

/// The environment `command` sets, as `KEY=VALUE` words for `env -i`.
#[cfg(target_os = "linux")]
fn env_words(command: &Command) -> Vec<std::ffi::OsString> {
    command
        .get_envs()
        .filter_map(|(key, value)| {
            let mut word = key.to_owned();
            word.push("=");
            word.push(value?);
            Some(word)
        })
        .collect()
}

/// `sh -c script` in `sticky`'s directory, its `"$@"` for `env -i "$@"` to run `sticky`:
/// `sticky`'s environment as `KEY=VALUE` words, its program and its arguments.
#[cfg(target_os = "linux")]
fn shell_running(script: &str, sticky: &Command) -> Command {
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(script)
        .arg("sh")
        .args(env_words(sticky))
        .arg(sticky.get_program())
        .args(sticky.get_args());
    if let Some(dir) = sticky.get_current_dir() {
        shell.current_dir(dir);
    }
    shell
}

/// A producer that waits for `go` (two minutes at most), then writes `late warning`.
#[cfg(target_os = "linux")]
const LATE_PRODUCER: &str =
    r#"until [ -e "$GO" ] || [ $((n += 1)) -gt 2400 ]; do sleep 0.05; done; echo "late warning""#;

/// Review 8: a writer of the user's own command line that runs as another user (`sudo make
/// 2>&1 | sticky "fix these"`, as a CI runner's passwordless sudo makes common; ping and other
/// programs with raised privileges too) cannot be told from `/proc` (its descriptors are not
/// the user's to read), so its pipe got the 3 s grace of a pipe from elsewhere: a producer
/// silent that long lost its input, and the turn ran without it (exit 0), where the README
/// says sticky "waits for a pipe written by your own command line however long it stays
/// silent" (issue 23, finding 3). Here the producer runs as root and sticky as `nobody`, both
/// in the shell's process group.
#[cfg(target_os = "linux")]
#[test]
fn review_a_late_writer_running_as_another_user_in_the_command_line_is_waited_for() {
    let Some(place) = nobodys_project("sticky-sudo-") else {
        return;
    };
    let go = place.project.with_file_name("go");
    let sticky = crate::support::other_user::as_user(&nobodys_sticky(&place, "fix these"));
    let mut command = shell_running(&format!(r#"({LATE_PRODUCER}) | env -i "$@""#), &sticky);
    command.env("GO", &go).stdin(Stdio::null());
    let (stdout, _) = late_producer_read(command, &go);
    assert!(stdout.contains("late warning"), "{stdout}");
}

/// The other side of the review's finding: a pipe its runner keeps (an ancestor of sticky that
/// sticky can look into, holding the write end it never writes or closes) is still one from
/// elsewhere when a process sticky cannot look into (root's, beside `nobody`'s sticky) is in
/// sticky's process group: the turn goes on after the grace rather than waiting for it.
#[cfg(target_os = "linux")]
#[test]
fn a_runners_pipe_keeps_its_grace_beside_another_users_process_in_the_group() {
    let Some(place) = nobodys_project("sticky-runner-") else {
        return;
    };
    // Root's, in this process group (and so sticky's), holding nothing of the pipe.
    let hidden = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("start root's cat");
    // The runner: `nobody`'s shell holding the FIFO open for writing (fd 3) while sticky,
    // its child, reads it.
    let runner = shell_running(
        r#"mkfifo step-stdin && exec 3<>step-stdin && env -i "$@" <step-stdin 3>&-"#,
        &nobodys_sticky(&place, "are you there?"),
    );
    let mut command = crate::support::other_user::as_user(&runner);
    command.stdin(Stdio::null());
    gives_up_after_the_grace(command, hidden);
}

/// A late writer as another user in the group of sticky's parent, not sticky's own: an
/// interactive bash runs `sudo make` of `sticky "fix" < <(sudo make)` in the shell's own
/// group, and sticky in a job of its own. Here the test is the shell: root's producer is in
/// its group, and `nobody`'s sticky in a group of its own.
#[cfg(target_os = "linux")]
#[test]
fn a_late_writer_as_another_user_in_the_shells_own_group_is_waited_for() {
    use std::os::unix::process::CommandExt;
    let Some(place) = nobodys_project("sticky-subst-") else {
        return;
    };
    let go = place.project.with_file_name("go");
    let (reader, writer) = std::io::pipe().expect("a pipe");
    // The command holds the write end until it is dropped: only the producer may.
    let mut producer = Command::new("sh")
        .args(["-c", LATE_PRODUCER])
        .env("GO", &go)
        .stdin(Stdio::null())
        .stdout(writer)
        .spawn()
        .expect("start the producer");
    let mut command = crate::support::other_user::as_user(&nobodys_sticky(&place, "fix these"));
    command.process_group(0).stdin(reader);
    let (stdout, _) = late_producer_read(command, &go);
    producer.wait().expect("the producer ends");
    assert!(stdout.contains("late warning"), "{stdout}");
}

/// Review 21, M1: a shell that reads its script from stdin (GitLab CI's Docker executor sends
/// the job to the container's shell on stdin; `bash -s < job.sh`, `cat job.sh | bash`) leaves
/// the rest of the script in that stdin, which every command it runs inherits. A turn there
/// took the rest of the job as its piped context: the lines after it never ran, the job ended
/// with exit 0, and the script went to the model. A turn never reads the stdin its shell reads
/// its commands from, whether a pipe or the script's own file, whether sticky is the shell's
/// child or runs under `timeout`; a pipe of its own there is read as ever.
#[test]
fn a_turn_in_a_script_its_shell_reads_from_stdin_leaves_the_rest_of_the_script() {
    let env = TestEnv::new();
    let sticky = env!("CARGO_BIN_EXE_sticky");
    let marker = env.scratch.join("the-next-line-ran");
    let lines = [
        format!("'{sticky}' 'review the build'"),
        format!("timeout 60 '{sticky}' 'under timeout'"),
        format!("echo 'a log of its own' | '{sticky}' 'with a pipe'"),
        format!("touch '{}'", marker.display()),
    ];
    let script = lines.join("\n") + "\n";
    let file = env.scratch.join("job.sh");
    std::fs::write(&file, &script).expect("write the job");
    for shell in [
        &["bash"][..],
        &["sh", "-s"],
        &["bash", "-e", "-o", "pipefail"],
    ] {
        for from_file in [false, true] {
            let _ = std::fs::remove_file(&marker);
            let run = env.program(shell[0], &shell[1..]);
            let (code, said) = if from_file {
                let mut command = run.command();
                command.stdin(std::fs::File::open(&file).expect("open the job"));
                let output = command.output().expect("run the shell");
                let said = String::from_utf8_lossy(&output.stderr).into_owned();
                (output.status.code(), said)
            } else {
                let output = run.stdin(script.clone()).run();
                (output.code, output.stderr)
            };
            assert_eq!(code, Some(0), "{shell:?}: {said}");
            assert!(
                marker.exists(),
                "{shell:?} from a file: {from_file}: {said}"
            );
            let prompts: Vec<String> = env
                .agent_runs()
                .iter()
                .rev()
                .take(3)
                .map(|run| run.prompt().to_owned())
                .collect();
            assert_eq!(
                prompts,
                [
                    "with a pipe\n\na log of its own\n",
                    "under timeout",
                    "review the build"
                ],
                "{shell:?} from a file: {from_file}"
            );
        }
    }
}

/// The same, with a script or `sh -c` between the job's shell and the turn: a job line that
/// calls `./ci/review.sh` or `sh review.sh`, or goes through `sh -c` (`npm run`, `make`,
/// `os.system`). That shell runs a script, so it reads no commands from the stdin it shares
/// with the job, and the search for one that does stopped there: the turn took the rest of the
/// job, which never ran (review 22, M1). It goes on up for as long as the stdin is the same;
/// `git diff | ./review.sh` still reads its pipe (the shell above it has another stdin).
#[test]
fn a_turn_in_a_script_called_by_a_job_read_from_stdin_leaves_the_rest_of_the_job() {
    let env = TestEnv::new();
    let sticky = env!("CARGO_BIN_EXE_sticky");
    let marker = env.scratch.join("the-next-line-ran");
    let wrapper = env.script(
        "review.sh",
        &format!("#!/bin/sh\n'{sticky}' 'review the build'\n"),
    );
    for line in [
        format!("'{}'", wrapper.display()),
        format!("sh '{}'", wrapper.display()),
        format!("sh -c \"'{sticky}' 'review the build' 2>&1\""),
    ] {
        let _ = std::fs::remove_file(&marker);
        let script = format!("echo before\n{line}\ntouch '{}'\n", marker.display());
        let output = env.program("bash", Vec::<&str>::new()).stdin(script).run();
        output.assert_success();
        let prompt = env.last_agent_run().prompt().to_owned();
        assert!(
            marker.exists(),
            "the job line after `{line}` never ran; the turn's prompt: {prompt:?}\n{}",
            output.describe()
        );
        assert_eq!(prompt, "review the build", "{line}");
    }
    // A pipe into the script is the script's input, read as ever.
    let piped = env
        .program(
            "bash",
            ["-c", &format!("echo 'a diff' | '{}'", wrapper.display())],
        )
        .run();
    piped.assert_success();
    assert_eq!(
        env.last_agent_run().prompt(),
        "review the build\n\na diff\n"
    );
}

/// At an interactive shell, a pipe into a subshell or a shell function that runs sticky
/// (`git diff | (cd backend && sticky "review" > review.md)`, `git diff | ask "review"` with
/// `ask() { sticky "$@"; }`): bash runs that part of the pipeline in a forked subshell whose
/// command line is the interactive shell's own (`bash`, no `-c`, no script operand) and whose
/// stdin is the pipe, so `pipeline::is_shells_script` takes the pipe for the script a shell
/// reads its commands from, and the turn silently dropped the piped input, exit 0 (review 24,
/// M1); so was a file given to a function (`ask "x" < notes.txt`), which bash puts on its own
/// stdin while the function runs. Each reaches the agent.
#[test]
fn a_pipe_into_a_subshell_or_function_at_an_interactive_shell_reaches_the_agent() {
    let env = TestEnv::new();
    let sticky = env!("CARGO_BIN_EXE_sticky");
    std::fs::create_dir_all(env.project_dir("sub")).expect("mkdir sub");
    let notes = env.scratch.join("notes.txt");
    let forms = [
        ("function", "ask 'review this'".to_owned()),
        (
            "function given a file",
            format!("true; ask 'review this' < '{}'; true", notes.display()),
        ),
        (
            "subshell",
            format!("(cd sub && '{sticky}' 'review this' > review.md)"),
        ),
        ("group", format!("{{ cd sub; '{sticky}' 'review this'; }}")),
    ];
    let mut lost = Vec::new();
    for (i, (what, command)) in forms.iter().enumerate() {
        std::fs::write(&notes, format!("PIPED-{i}\n")).expect("write the notes");
        let mut shell = env
            .program("bash", ["--norc", "--noprofile", "-i"])
            .on_terminal();
        shell.send(&format!(
            "ask() {{ '{sticky}' \"$@\"; }}; printf 'PIPED-{i}\\n' | {command} >/dev/null 2>&1; echo form-done-$?\r"
        ));
        shell.expect("form-done-0");
        shell.send("exit\r");
        let prompt = env.last_agent_run().prompt().to_owned();
        if !prompt.contains(&format!("PIPED-{i}")) {
            lost.push(format!(
                "{what} (`printf ... | {command}`): the agent's prompt was {prompt:?}"
            ));
        }
    }
    assert!(
        lost.is_empty(),
        "at an interactive bash, piped input into sticky was silently dropped for:\n{}",
        lost.join("\n")
    );
}

/// Review 26, M1: a job read from stdin (GitLab CI's Docker executor, `sh -s < job.sh`) that
/// gives a file or a here-document to a shell function or a `{ ...; }` group running sticky
/// (`review < diff.txt`, `review <<EOF`): bash redirects its own stdin while the function runs
/// (its script moved to another descriptor), so `pipeline::is_shells_script` takes the file
/// for the job's script and the turn drops it, exit 0. The file is the turn's input.
#[test]
fn a_file_given_to_a_function_in_a_job_read_from_stdin_reaches_the_agent() {
    let env = TestEnv::new();
    let sticky = env!("CARGO_BIN_EXE_sticky");
    let notes = env.scratch.join("diff.txt");
    std::fs::write(&notes, "PIPED-DIFF\n").expect("write the diff");
    let marker = env.scratch.join("the-next-line-ran");
    let mut lost = Vec::new();
    for (what, line) in [
        (
            "function given a file",
            format!("review < '{}'", notes.display()),
        ),
        (
            "function given a here-document",
            "review <<EOF\nPIPED-DIFF\nEOF".to_owned(),
        ),
        (
            "group given a file",
            format!("{{ '{sticky}' 'review this'; }} < '{}'", notes.display()),
        ),
    ] {
        let _ = std::fs::remove_file(&marker);
        let script = format!(
            "review() {{ '{sticky}' 'review this'; }}\n{line}\ntouch '{}'\n",
            marker.display()
        );
        let output = env.program("bash", ["-s"]).stdin(script).run();
        output.assert_success();
        assert!(marker.exists(), "{what}: {}", output.describe());
        let prompt = env.last_agent_run().prompt().to_owned();
        if !prompt.contains("PIPED-DIFF") {
            lost.push(format!(
                "{what}: the agent's prompt was {prompt:?}; {}",
                output.stderr
            ));
        }
    }
    assert!(
        lost.is_empty(),
        "input given to a function in a job read from stdin was dropped:\n{}",
        lost.join("\n")
    );
}
/// Review 26, M2: a job read from stdin run in the background at an interactive shell
/// (`bash < job.sh &`, `cat job.sh | bash &`): the job's shell has the terminal, which runs the
/// interactive shell's group in the foreground, so `is_shells_script` takes it for an
/// interactive shell whose redirection is one command's, and the turn reads the rest of the
/// job as its piped context: the lines after it never run, and go to the model.
#[test]
fn a_job_read_from_stdin_in_the_background_keeps_the_rest_of_its_script() {
    let env = TestEnv::new();
    let sticky = env!("CARGO_BIN_EXE_sticky");
    let marker = env.scratch.join("the-next-line-ran");
    let job = env.scratch.join("job.sh");
    std::fs::write(
        &job,
        format!(
            "'{sticky}' 'review the build'\ntouch '{}'\n",
            marker.display()
        ),
    )
    .expect("write the job");
    let mut shell = env
        .program("bash", ["--norc", "--noprofile", "-i"])
        .on_terminal();
    shell.send(&format!(
        "bash < '{}' >/dev/null 2>&1 & wait $!; echo job-done-$?\r",
        job.display()
    ));
    shell.expect("job-done-0");
    shell.send("exit\r");
    let prompt = env.last_agent_run().prompt().to_owned();
    assert!(
        marker.exists() && prompt == "review the build",
        "the rest of the job went to the agent and never ran: the agent's prompt was {prompt:?}"
    );
}

/// Review 26, M3: `bash -` and `zsh -` (a lone `-`: "read the commands from stdin", the
/// `curl ... | sh -` idiom) are taken for a shell running the script file `-`, so a turn in a
/// job piped into `sh -` reads the rest of the job as its piped context: the lines after it
/// never run, and go to the model, exit 0 (bash reads a pipe byte by byte; dash, `sh` here,
/// reads the whole job in blocks and is spared by chance).
#[test]
fn a_job_piped_into_sh_dash_keeps_the_rest_of_its_script() {
    let env = TestEnv::new();
    let sticky = env!("CARGO_BIN_EXE_sticky");
    let marker = env.scratch.join("the-next-line-ran");
    let script = format!(
        "'{sticky}' 'review the build'\ntouch '{}'\n",
        marker.display()
    );
    let mut eaten = Vec::new();
    for shell in ["sh", "bash", "zsh"] {
        let _ = std::fs::remove_file(&marker);
        let output = env.program(shell, ["-"]).stdin(script.clone()).run();
        output.assert_success();
        let prompt = env.last_agent_run().prompt().to_owned();
        if !marker.exists() || prompt != "review the build" {
            eaten.push(format!(
                "`{shell} -`: the next line ran: {}; the agent's prompt was {prompt:?}",
                marker.exists()
            ));
        }
    }
    assert!(
        eaten.is_empty(),
        "a turn in a job read by a shell given `-` took the rest of the job:\n{}",
        eaten.join("\n")
    );
}

/// Review 26, M4: a job read from stdin by a container's first process (`docker run -i IMAGE
/// bash -s < job.sh`, with no `--init`): that shell is PID 1 in the container's PID namespace,
/// and `pipeline::is_shells_script` stops its search at a parent `<= 1` before looking at it.
/// The turn reads the rest of the job as its piped context: the lines after it never run and go
/// to the model, exit 0, the very case review 21, M1 fixed. Played with `unshare --pid`.
#[test]
fn a_job_read_from_stdin_by_a_containers_first_process_keeps_the_rest_of_its_script() {
    let env = TestEnv::new();
    let namespace = ["-r", "--pid", "--fork", "--mount-proc"];
    let can = std::process::Command::new("unshare")
        .args(namespace)
        .arg("true")
        .status()
        .is_ok_and(|status| status.success());
    if !can {
        crate::support::skip_untested("unshare cannot make a PID namespace here");
        return;
    }
    let sticky = env!("CARGO_BIN_EXE_sticky");
    let marker = env.scratch.join("the-next-line-ran");
    let script = format!(
        "'{sticky}' 'review the build'\ntouch '{}'\n",
        marker.display()
    );
    let mut args: Vec<&str> = namespace.to_vec();
    args.extend(["bash", "-s"]);
    let output = env.program("unshare", args).stdin(script).run();
    let prompt = env.last_agent_run().prompt().to_owned();
    assert!(
        marker.exists() && prompt == "review the build",
        "the rest of the job went to the agent and never ran: the agent's prompt was \
         {prompt:?}\n{}",
        output.describe()
    );
}
