//! The harness of the integration tests: a [`TestEnv`] that owns a throwaway HOME and git
//! project, runs the built `sticky` in a scrubbed environment with the fake agents of
//! `tests/fakes` first on PATH, and reads back what the fake agent saw.
//!
//! Every run has a deadline, so a sticky that hangs fails its test instead of the whole suite.

#![allow(dead_code)] // each test module uses its own part of the harness

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

pub mod other_user;
pub mod skip;
pub mod terminal;

pub use skip::{skip, skip_untested};

/// How long one sticky run may take before the test fails (the fake answers in milliseconds;
/// the large-input tests move a few MiB through a pseudo-terminal).
pub const DEADLINE: Duration = Duration::from_secs(60);

/// Environment variables whose prefix makes them unwelcome in a test: they would change what
/// sticky, the fake agent or git do, or leak the developer's own setup into the test.
const SCRUBBED_PREFIXES: &[&str] = &[
    "STICKY_",
    "CLAUDE_",
    "ANTHROPIC_",
    "FAKE_CLAUDE_",
    "GIT_",
    "XDG_",
    // A CI run's own (`GITHUB_REF`, `GITHUB_HEAD_REF`) would choose `-t @pr`'s thread.
    "GITHUB_",
];

/// Single variables scrubbed for the same reason (a terminal type or size would make local runs
/// differ from CI, which has none; `CI`, which `.ci/run` sets for the tests themselves, would
/// change what an agent does, as Gemini CLI's headless check reads it).
const SCRUBBED: &[&str] = &[
    "TERM",
    "COLUMNS",
    "LINES",
    "PWD",
    "OLDPWD",
    "CI",
    "GITHUB_ACTIONS",
];

/// The directory of the fake agents (`tests/fakes`).
pub fn fakes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fakes")
}

/// The python interpreter itself (not a wrapper such as a pyenv shim, which is a bash script:
/// bash resets an inherited `PWD` that is not its working directory, and would hide a sticky
/// that leaves the user's `PWD` to an agent running elsewhere).
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let output = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 runs (the fake agents are Python scripts)");
        let path = String::from_utf8(output.stdout).expect("a UTF-8 path");
        PathBuf::from(path.trim())
    })
}

/// The fake `claude` script.
pub fn fake_claude() -> PathBuf {
    fakes_dir().join("claude")
}

/// A throwaway world for sticky: HOME, a git project, a scratch directory and the fake
/// agent's run log, all removed when the value drops.
pub struct TestEnv {
    root: TempDir,
    /// The HOME of sticky and the agent (the fake keeps its transcripts under `.claude/`).
    pub home: PathBuf,
    /// The project directory (a git worktree root unless built with [`TestEnv::without_git`]).
    pub project: PathBuf,
    /// A directory outside the project and HOME, for files a test needs.
    pub scratch: PathBuf,
    bin: PathBuf,
    agent_log: PathBuf,
    fakes_on_path: bool,
    vars: Vec<(OsString, Option<OsString>)>,
}

impl TestEnv {
    /// A HOME and a fresh git project (`git init -q`).
    #[track_caller]
    pub fn new() -> Self {
        let env = Self::without_git();
        env.git(&env.project, &["init", "-q"]);
        env
    }

    /// A HOME and a project directory that is not in any git repository.
    #[track_caller]
    pub fn without_git() -> Self {
        let root = tempfile::Builder::new()
            .prefix("sticky-it-")
            .tempdir()
            .expect("create a temporary directory");
        // Canonical, so paths compare equal to what sticky and the agent report (macOS /var).
        let base = root
            .path()
            .canonicalize()
            .expect("canonicalize the temp dir");
        let bin = base.join("bin");
        std::fs::create_dir_all(&bin).expect("create the env's bin directory");
        std::os::unix::fs::symlink(python(), bin.join("python3")).expect("link python3");
        let (home, project, scratch) = (
            base.join("home"),
            base.join("project"),
            base.join("scratch"),
        );
        for dir in [&home, &project, &scratch] {
            std::fs::create_dir_all(dir).expect("create a test directory");
        }
        Self {
            bin,
            agent_log: base.join("agent-runs.jsonl"),
            root,
            home,
            project,
            scratch,
            fakes_on_path: true,
            vars: Vec::new(),
        }
    }

    /// Sets an environment variable for every later sticky run of this env.
    pub fn set_var(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        self.vars
            .push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Leaves `tests/fakes` off PATH, so no `claude` is found there.
    pub fn without_fakes_on_path(&mut self) -> &mut Self {
        self.fakes_on_path = false;
        self
    }

    /// Starts describing one sticky run in the project directory, with stdin from /dev/null.
    pub fn sticky<I, S>(&self, args: I) -> Run<'_>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.program(env!("CARGO_BIN_EXE_sticky"), args)
    }

    /// Starts describing a run of another `program` (an installer, a sticky it installed) in
    /// this env's world, as [`TestEnv::sticky`] does for the built sticky.
    pub fn program<I, S>(&self, program: impl Into<PathBuf>, args: I) -> Run<'_>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Run {
            env: self,
            program: program.into(),
            args: args.into_iter().map(|a| a.as_ref().to_owned()).collect(),
            cwd: self.project.clone(),
            stdin: None,
            vars: Vec::new(),
        }
    }

    /// Runs sticky with `args` in the project and asserts it succeeded.
    #[track_caller]
    pub fn ok<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let output = self.sticky(args).run();
        output.assert_success();
        output
    }

    /// Runs sticky with `args` in `dir` and asserts it succeeded.
    #[track_caller]
    pub fn ok_in<I, S>(&self, dir: &Path, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let output = self.sticky(args).current_dir(dir).run();
        output.assert_success();
        output
    }

    /// Renames the project to `renamed` beside it (a move, for `sticky relocate`): the new
    /// directory.
    #[track_caller]
    pub fn move_project(&self) -> PathBuf {
        let moved = self.root().join("renamed");
        std::fs::rename(&self.project, &moved).expect("move the project");
        moved
    }

    /// Copies the project with `cp -a` to `name` beside it (its `.sticky/` included): the copy.
    #[track_caller]
    pub fn copy_project(&self, name: &str) -> PathBuf {
        let to = self.root().join(name);
        let copied = Command::new("cp")
            .arg("-a")
            .arg(&self.project)
            .arg(&to)
            .status();
        assert!(copied.is_ok_and(|status| status.success()), "cp -a");
        to
    }

    /// Runs one headless turn with `prompt` in the project, asserts it succeeded, and returns
    /// the fake agent's answer.
    #[track_caller]
    pub fn turn(&self, prompt: &str) -> Answer {
        self.ok([prompt]).answer()
    }

    /// `sticky status --json` in the project, parsed.
    #[track_caller]
    pub fn status_json(&self) -> Value {
        self.ok(["status", "--json"]).json()
    }

    /// `sticky log --json` in the project, parsed.
    #[track_caller]
    pub fn log_json(&self) -> Value {
        self.ok(["log", "--json"]).json()
    }

    /// Every run of the fake agent so far, oldest first (its `FAKE_CLAUDE_LOG` lines).
    #[track_caller]
    pub fn agent_runs(&self) -> Vec<AgentRun> {
        let Ok(text) = std::fs::read_to_string(&self.agent_log) else {
            return Vec::new();
        };
        text.lines()
            .map(|line| {
                AgentRun(serde_json::from_str(line).expect("a fake agent log line is JSON"))
            })
            .collect()
    }

    /// The last run of the fake agent; fails the test if there was none.
    #[track_caller]
    pub fn last_agent_run(&self) -> AgentRun {
        self.agent_runs().pop().expect("the agent ran")
    }

    /// Where Claude Code keeps its projects' transcripts in this HOME.
    pub fn claude_projects(&self) -> PathBuf {
        self.home.join(".claude/projects")
    }

    /// Every transcript the fake agent has written, in any project directory.
    pub fn transcripts(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let Ok(dirs) = std::fs::read_dir(self.claude_projects()) else {
            return found;
        };
        for dir in dirs.flatten() {
            if let Ok(files) = std::fs::read_dir(dir.path()) {
                found.extend(files.flatten().map(|f| f.path()));
            }
        }
        found.sort();
        found
    }

    /// The transcript of the agent session `id`, wherever the fake wrote it.
    #[track_caller]
    pub fn transcript(&self, id: &str) -> PathBuf {
        let name = format!("{id}.jsonl");
        self.transcripts()
            .into_iter()
            .find(|path| path.file_name() == Some(OsStr::new(&name)))
            .unwrap_or_else(|| panic!("no transcript for session {id}"))
    }

    /// Creates `relative` inside the project (with its parents) and returns its path.
    #[track_caller]
    pub fn project_dir(&self, relative: &str) -> PathBuf {
        let dir = self.project.join(relative);
        std::fs::create_dir_all(&dir).expect("create a project subdirectory");
        dir
    }

    /// Writes an executable script at `relative` in the scratch directory.
    #[track_caller]
    pub fn script(&self, relative: &str, body: &str) -> PathBuf {
        let path = self.scratch.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create the script's directory");
        }
        std::fs::write(&path, body).expect("write a script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("make a script executable");
        path
    }

    /// Runs git in `dir` with this env's HOME.
    #[track_caller]
    pub fn git(&self, dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("HOME", &self.home)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .status()
            .expect("run git");
        assert!(status.success(), "git {args:?} failed in {}", dir.display());
    }

    /// Makes an empty commit in `dir`, as user `t`.
    #[track_caller]
    pub fn commit(&self, dir: &Path, message: &str) {
        self.git(
            dir,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.com",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                message,
            ],
        );
    }

    /// The PATH sticky runs with: the env's `bin` (python3), the fakes (unless left off), then
    /// the system's PATH without any directory that holds a real `claude`, so no test can reach
    /// a real agent.
    fn path(&self) -> OsString {
        let system = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs: Vec<PathBuf> = std::env::split_paths(&system)
            .filter(|dir| !dir.join("claude").exists())
            .collect();
        if self.fakes_on_path {
            dirs.insert(0, fakes_dir());
        }
        dirs.insert(0, self.bin.clone());
        std::env::join_paths(dirs).expect("PATH entries have no ':'")
    }

    /// The root of all of this env's files.
    pub fn root(&self) -> &Path {
        self.root.path()
    }
}

/// One sticky invocation being described; [`Run::run`] executes it.
pub struct Run<'a> {
    env: &'a TestEnv,
    program: PathBuf,
    args: Vec<OsString>,
    cwd: PathBuf,
    stdin: Option<Vec<u8>>,
    vars: Vec<(OsString, Option<OsString>)>,
}

impl Run<'_> {
    /// Runs in `dir` instead of the project directory (PWD follows, as a shell sets it).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = dir.into();
        self
    }

    /// Pipes `input` to sticky's stdin (instead of /dev/null).
    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(input.into());
        self
    }

    /// Sets an environment variable for this run only.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.vars
            .push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Removes an environment variable for this run only.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.vars.push((key.as_ref().to_owned(), None));
        self
    }

    /// The environment changes of this run, in order: the scrubbed variables removed, then the
    /// test world's HOME, PATH and PWD, then the env's and this run's own variables.
    fn environment(&self) -> Vec<(OsString, Option<OsString>)> {
        let mut changes: Vec<(OsString, Option<OsString>)> = std::env::vars_os()
            .map(|(key, _)| key)
            .filter(|key| {
                let name = key.to_string_lossy();
                SCRUBBED_PREFIXES.iter().any(|p| name.starts_with(p)) || SCRUBBED.contains(&&*name)
            })
            .map(|key| (key, None))
            .collect();
        let home = &self.env.home;
        for (key, value) in [
            ("HOME", home.clone()),
            ("XDG_CONFIG_HOME", home.join(".config")),
            ("XDG_DATA_HOME", home.join(".local/share")),
            ("XDG_STATE_HOME", home.join(".local/state")),
            ("XDG_CACHE_HOME", home.join(".cache")),
            ("PATH", PathBuf::from(self.env.path())),
            ("PWD", self.cwd.clone()),
            ("FAKE_CLAUDE_LOG", self.env.agent_log.clone()),
        ] {
            changes.push((key.into(), Some(value.into_os_string())));
        }
        changes.extend(self.env.vars.iter().chain(&self.vars).cloned());
        changes
    }

    /// Runs sticky on a pseudo-terminal of 80x24, as a user at a terminal would, and returns
    /// the terminal to drive it (stdin is the terminal, whatever [`Run::stdin`] said).
    #[track_caller]
    pub fn on_terminal(self) -> terminal::Terminal {
        let what = format!(
            "sticky {:?} on a terminal in {}",
            self.args,
            self.cwd.display()
        );
        let mut command = portable_pty::CommandBuilder::new(&self.program);
        command.args(&self.args);
        self.configure(&mut command);
        terminal::Terminal::spawn(what, command)
    }

    /// Gives `command` this run's directory and environment.
    fn configure(&self, command: &mut portable_pty::CommandBuilder) {
        command.cwd(&self.cwd);
        for (key, value) in self.environment() {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            }
        }
    }

    /// Like [`Run::on_terminal`], but sticky runs inside `sh`, which saves the terminal's
    /// settings (`stty -g`) to `before` first and to `after` once sticky has exited, then prints
    /// `sticky exited <code>` and `settings saved`: what a user's shell sees around sticky.
    #[track_caller]
    pub fn on_terminal_between_stty(self, before: &Path, after: &Path) -> terminal::Terminal {
        let what = format!("sticky {:?} on a terminal, inside sh", self.args);
        let mut command = portable_pty::CommandBuilder::new("sh");
        command.arg("-c");
        command.arg(
            r#"before=$1 after=$2; shift 2; stty -g > "$before"; "$@"; code=$?; stty -g > "$after"; echo "sticky exited $code"; echo "settings saved""#,
        );
        command.arg("sh");
        command.arg(before);
        command.arg(after);
        command.arg(env!("CARGO_BIN_EXE_sticky"));
        command.args(&self.args);
        self.configure(&mut command);
        terminal::Terminal::spawn(what, command)
    }

    /// The command this run would execute (arguments, directory, environment), for a test that
    /// wires sticky's stdio itself; stdin, stdout and stderr are left to the caller.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args).current_dir(&self.cwd);
        for (key, value) in self.environment() {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        command
    }

    /// Runs sticky and waits for it (at most [`DEADLINE`]).
    #[track_caller]
    pub fn run(self) -> Output {
        self.start().wait()
    }

    /// Starts sticky without waiting for it, so the test can act while it runs.
    #[track_caller]
    pub fn start(self) -> Started {
        let mut command = self.command();
        command
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());

        let what = format!("sticky {:?} in {}", self.args, self.cwd.display());
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
        if let (Some(input), Some(mut pipe)) = (self.stdin, child.stdin.take()) {
            // A thread, so a sticky that does not read its stdin cannot block the test; a
            // broken pipe is sticky's choice and shows up in its behaviour, not here.
            thread::spawn(move || {
                let _ = pipe.write_all(&input);
            });
        }
        Started {
            stdout: collect(child.stdout.take()),
            stderr: collect(child.stderr.take()),
            since: Instant::now(),
            what,
            child,
        }
    }
}

/// A sticky that is running; [`Started::wait`] collects its end.
pub struct Started {
    what: String,
    child: std::process::Child,
    stdout: Pipe,
    stderr: Pipe,
    since: Instant,
}

impl Started {
    /// sticky's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` to sticky (only to sticky, as `kill PID` from a shell would).
    #[track_caller]
    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        let pid = i32::try_from(self.child.id()).expect("a pid fits i32");
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal)
            .unwrap_or_else(|e| panic!("{}: cannot send {signal}: {e}", self.what));
    }

    /// Waits until sticky's stderr contains `needle` (a handshake on what it tells the user).
    #[track_caller]
    pub fn wait_for_stderr(&mut self, needle: &str) {
        let (child, stderr, sticky) = (&mut self.child, &self.stderr, &self.what);
        wait_for(&format!("{sticky} saying {needle:?}"), || {
            if let Some(status) = child.try_wait().expect("poll sticky") {
                panic!(
                    "{sticky}: exited ({status}) before saying {needle:?}: {}",
                    stderr.so_far()
                );
            }
            stderr.so_far().contains(needle)
        });
    }

    /// Waits until `condition` holds, failing the test at the deadline or when sticky exits
    /// first.
    #[track_caller]
    pub fn wait_until(&mut self, what: &str, mut condition: impl FnMut() -> bool) {
        let child = &mut self.child;
        let sticky = &self.what;
        wait_for(what, || {
            if let Some(status) = child.try_wait().expect("poll sticky") {
                panic!("{sticky}: exited ({status}) before {what}");
            }
            condition()
        });
    }

    /// Waits for sticky to exit (at most [`DEADLINE`] after it started) and for its output.
    #[track_caller]
    pub fn wait(mut self) -> Output {
        let what = self.what.clone();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for sticky") {
                break status;
            }
            if self.since.elapsed() > DEADLINE {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("{what}: still running after {DEADLINE:?}; killed");
            }
            thread::sleep(Duration::from_millis(5));
        };
        // The pipes close when sticky and everything it started are gone; an agent left running
        // would hold them open, which is a bug worth a clear failure.
        let remaining = DEADLINE
            .saturating_sub(self.since.elapsed())
            .max(Duration::from_secs(5));
        let stdout = self
            .stdout
            .finish(remaining)
            .unwrap_or_else(|| panic!("{what}: stdout still open after sticky exited"));
        let stderr = self
            .stderr
            .finish(Duration::from_secs(5))
            .unwrap_or_else(|| panic!("{what}: stderr still open after sticky exited"));
        Output::new(what, status, stdout, &stderr)
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        // A failed test must not leave sticky running.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Waits until `condition` holds (checked every few milliseconds: a handshake on state the
/// test can observe, never a fixed sleep), failing the test after [`DEADLINE`].
#[track_caller]
pub fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(
            started.elapsed() < DEADLINE,
            "{what} did not happen within {DEADLINE:?}"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// A pipe being read to its end on a thread: what arrived so far, and a signal at the end.
struct Pipe {
    bytes: Arc<Mutex<Vec<u8>>>,
    done: mpsc::Receiver<()>,
}

impl Pipe {
    /// What arrived so far, as text (lossy).
    fn so_far(&self) -> String {
        String::from_utf8_lossy(&self.bytes.lock().expect("pipe lock")).into_owned()
    }

    /// Everything, once the writer side has closed; `None` if it is still open at `timeout`.
    fn finish(&self, timeout: Duration) -> Option<Vec<u8>> {
        self.done.recv_timeout(timeout).ok()?;
        Some(std::mem::take(&mut *self.bytes.lock().expect("pipe lock")))
    }
}

/// Starts reading `pipe` to its end on a thread.
fn collect(pipe: Option<impl Read + Send + 'static>) -> Pipe {
    let bytes = Arc::new(Mutex::new(Vec::new()));
    let (sender, done) = mpsc::channel();
    let shared = Arc::clone(&bytes);
    thread::spawn(move || {
        if let Some(mut pipe) = pipe {
            let mut chunk = [0_u8; 16 * 1024];
            while let Ok(read @ 1..) = pipe.read(&mut chunk) {
                shared
                    .lock()
                    .expect("pipe lock")
                    .extend_from_slice(&chunk[..read]);
            }
        }
        let _ = sender.send(());
    });
    Pipe { bytes, done }
}

/// What one sticky run did.
pub struct Output {
    what: String,
    /// The exit code, if sticky exited (rather than being killed).
    pub code: Option<i32>,
    /// The signal that killed sticky, if any.
    pub signal: Option<i32>,
    /// stdout, raw.
    pub stdout_bytes: Vec<u8>,
    /// stdout as text (lossy).
    pub stdout: String,
    /// stderr as text (lossy).
    pub stderr: String,
}

impl Output {
    fn new(what: String, status: ExitStatus, stdout: Vec<u8>, stderr: &[u8]) -> Self {
        Self {
            what,
            code: status.code(),
            signal: status.signal(),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(stderr).into_owned(),
            stdout_bytes: stdout,
        }
    }

    /// The run, its exit and its output, for failure messages.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "{}\nexit code: {:?}, signal: {:?}\n",
            self.what, self.code, self.signal
        );
        let _ = write!(
            text,
            "--- stdout ---\n{}\n--- stderr ---\n{}\n---",
            clip(&self.stdout),
            clip(&self.stderr)
        );
        text
    }

    /// Asserts sticky exited 0.
    #[track_caller]
    pub fn assert_success(&self) -> &Self {
        assert_eq!(self.code, Some(0), "sticky failed\n{}", self.describe());
        self
    }

    /// Asserts sticky exited with `code`.
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code,
            Some(code),
            "unexpected exit code\n{}",
            self.describe()
        );
        self
    }

    /// Asserts stderr contains `needle`.
    #[track_caller]
    pub fn assert_stderr_contains(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "stderr does not contain {needle:?}\n{}",
            self.describe()
        );
        self
    }

    /// Asserts stdout holds only text: no escape sequence and no carriage return.
    #[track_caller]
    pub fn assert_clean_stdout(&self) -> &Self {
        assert!(
            !self.stdout_bytes.contains(&0x1b) && !self.stdout_bytes.contains(&b'\r'),
            "stdout carries terminal control bytes: {:?}\n{}",
            clip(&format!("{:?}", self.stdout)),
            self.describe()
        );
        self
    }

    /// stdout parsed as exactly one JSON value.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON value: {e}\n{}", self.describe()))
    }

    /// The fake agent's answer: stdout must be exactly one answer line.
    #[track_caller]
    pub fn answer(&self) -> Answer {
        let Some(text) = self.stdout.strip_suffix('\n') else {
            panic!("stdout does not end with a newline\n{}", self.describe());
        };
        Answer::parse(text)
            .unwrap_or_else(|| panic!("stdout is not the fake agent's answer\n{}", self.describe()))
    }

    /// Asserts stdout is the fake agent's answer to exactly `prompt`, printed as sticky prints
    /// answers: followed by a newline, unless the answer already ends with one.
    #[track_caller]
    pub fn answer_to(&self, prompt: &str) -> Answer {
        let mut answer = self.answer();
        if prompt.ends_with('\n') {
            answer.prompt.push('\n');
        }
        assert!(
            answer.prompt == prompt,
            "stdout is not the answer to the whole prompt ({} bytes echoed, {} sent)\n{}",
            answer.prompt.len(),
            prompt.len(),
            self.describe()
        );
        answer
    }
}

/// Long output, cut for a readable failure message.
fn clip(text: &str) -> String {
    const MAX: usize = 4000;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... [{} bytes in all]", &text[..end], text.len())
}

/// The fake claude's answer, which says how much history it saw:
/// `FAKE-CLAUDE turn=<n> session=<id> model=<m> saw=<JSON list> you said: <prompt>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The number of this turn in the agent session (1 for a fresh session).
    pub turn: u64,
    /// The agent's session ID.
    pub session: String,
    /// The model the agent used.
    pub model: String,
    /// The prompts of the earlier turns the agent saw, oldest first.
    pub saw: Vec<String>,
    /// The prompt of this turn, as the agent received it.
    pub prompt: String,
}

impl Answer {
    /// Parses the fake's answer line; `None` if `text` is not one.
    pub fn parse(text: &str) -> Option<Self> {
        let rest = text.strip_prefix("FAKE-CLAUDE turn=")?;
        let (turn, rest) = rest.split_once(" session=")?;
        let (session, rest) = rest.split_once(" model=")?;
        let (model, rest) = rest.split_once(" saw=")?;
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Vec<String>>();
        let saw = values.next()?.ok()?;
        let prompt = rest[values.byte_offset()..].strip_prefix(" you said: ")?;
        Some(Self {
            turn: turn.parse().ok()?,
            session: session.to_owned(),
            model: model.to_owned(),
            saw,
            prompt: prompt.to_owned(),
        })
    }
}

/// One run of the fake agent, as it logged it (`FAKE_CLAUDE_LOG`).
#[derive(Debug, Clone)]
pub struct AgentRun(pub Value);

impl AgentRun {
    /// The arguments the agent got (without the program).
    pub fn argv(&self) -> Vec<String> {
        self.0["argv"]
            .as_array()
            .map(|args| {
                args.iter()
                    .filter_map(|a| a.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The value following `flag` in the arguments, if the flag is there.
    pub fn flag(&self, flag: &str) -> Option<String> {
        let argv = self.argv();
        let at = argv.iter().position(|a| a == flag)?;
        argv.get(at + 1).cloned()
    }

    /// Whether `flag` is among the arguments.
    pub fn has(&self, flag: &str) -> bool {
        self.argv().iter().any(|a| a == flag)
    }

    /// A string field of the log line (`cwd`, `PWD`, `prompt`, `program`, `mode`, ...).
    pub fn text(&self, field: &str) -> Option<&str> {
        self.0[field].as_str()
    }

    /// The working directory the agent ran in.
    pub fn cwd(&self) -> PathBuf {
        PathBuf::from(self.text("cwd").unwrap_or_default())
    }

    /// The prompt the agent received, whole.
    pub fn prompt(&self) -> &str {
        self.text("prompt").unwrap_or_default()
    }

    /// The prompt the agent received, byte for byte (also when it is not UTF-8).
    #[track_caller]
    pub fn prompt_bytes(&self) -> Vec<u8> {
        let hex = self
            .text("prompt_hex")
            .expect("the fake logged the prompt's bytes");
        (0..hex.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).expect("hex digits"))
            .collect()
    }
}

/// Whether `id` is a UUID of version 4, the kind sticky mints for Claude.
pub fn is_uuid_v4(id: &str) -> bool {
    uuid::Uuid::parse_str(id).is_ok_and(|u| u.get_version_num() == 4)
}

/// Leaves the database `db` as a sticky older than stamps did: at schema 4 (what later
/// migrations add dropped, the page that says so written into the file) and without its stamp.
/// Removing the stamp alone leaves a copy, not an older database: its schema postdates stamps.
pub fn as_before_stamps(db: &Path) {
    let conn = rusqlite::Connection::open(db).expect("open the database");
    conn.execute_batch(
        "DROP TABLE kept_at;
         DROP INDEX sessions_live_agent;
         DROP INDEX turns_usage;
         DROP TABLE turns_text;
         ALTER TABLE threads DROP COLUMN branch;
         ALTER TABLE sessions DROP COLUMN forked_from;
         ALTER TABLE sessions DROP COLUMN forked_from_thread;
         ALTER TABLE sessions DROP COLUMN forked_from_id;
         PRAGMA user_version = 4;
         PRAGMA wal_checkpoint(TRUNCATE);",
    )
    .expect("take the database back to schema 4");
    drop(conn);
    let mut stamp = db.as_os_str().to_owned();
    stamp.push(".stamp");
    std::fs::remove_file(stamp).expect("remove the stamp");
}
