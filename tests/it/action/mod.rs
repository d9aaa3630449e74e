//! The sticky GitHub Action (`action.yml`) played here as a runner plays it (issue 25): its
//! composite steps in order, each `run:` script by `bash --noprofile --norc -eo pipefail` (what
//! `shell: bash` means) with its `env:` evaluated, `GITHUB_OUTPUT`, `GITHUB_ENV`,
//! `GITHUB_EVENT_PATH`, `RUNNER_OS`, `RUNNER_TEMP` and the rest set as the runner sets them, `if:`
//! conditions with GitHub's implicit `success()`, and the `uses:` steps (actions/cache's
//! restore and save, actions/upload-artifact) played by [`store::Store`], a directory that keys
//! and scopes entries as GitHub's store does, and records the runs and pull requests that the
//! fake `gh` of `runs` serves as the REST API does. Each [`Run`] is a fresh runner: its own
//! HOME, checkout path and temporary directory.
//!
//! What cannot be played here (GitHub's own scheduling, `concurrency`, secrets, a fork's
//! restrictions as GitHub applies them) docs/ci.md lists as tested only on GitHub.
//!
//! `runs` holds the tests with the fake agents; `real::action` plays the same runs with the real
//! Claude Code and Codex against the mock.

pub mod expr;
pub mod lint;
pub mod runs;
pub mod store;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::support::skip;
use expr::Status;
use store::Store;

/// How long one step may take: an install, a turn of a real agent on a loaded machine.
const STEP_DEADLINE: Duration = Duration::from_secs(240);

/// The repository the runs belong to.
pub const REPOSITORY: &str = "octo/widgets";

/// Its ID (`GITHUB_REPOSITORY_ID`).
pub const REPOSITORY_ID: u64 = 4242;

/// The repository root: the action's own checkout (`GITHUB_ACTION_PATH`).
pub fn action_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A YAML file (or text) read as JSON by Python's `yaml` module, or `None` after a skip when
/// that module is missing (under CI a failure: `.ci/run` installs it).
pub fn yaml(text: &str) -> Option<Value> {
    let output = Command::new(crate::support::python())
        .args([
            "-c",
            "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("a stdin pipe")
                .write_all(text.as_bytes())?;
            child.wait_with_output()
        })
        .expect("run python3");
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("No module named 'yaml'") {
            skip::skip("python3 has no yaml module (apt-get install python3-yaml)");
            return None;
        }
        panic!("the YAML does not parse: {stderr}");
    }
    Some(serde_json::from_slice(&output.stdout).expect("JSON from python"))
}

/// The action's metadata, `action.yml`, as JSON.
pub fn action() -> Option<Value> {
    let text = std::fs::read_to_string(action_path().join("action.yml")).expect("read action.yml");
    yaml(&text)
}

/// One workflow run on a fresh runner: the event that started it, the inputs given to the
/// action (as a workflow's `with:` writes them, expressions included) and the environment of
/// its job and step.
pub struct Run {
    /// `github.event_name`.
    pub event_name: String,
    /// The event's payload (`GITHUB_EVENT_PATH`).
    pub event: Value,
    /// `GITHUB_REF`: `refs/pull/N/merge` for a pull request's events, else the branch's ref.
    pub git_ref: String,
    /// `GITHUB_HEAD_REF` and `GITHUB_BASE_REF` (pull request events only).
    pub head_ref: String,
    /// See `head_ref`.
    pub base_ref: String,
    /// `github.run_id`.
    pub id: u64,
    /// `github.action_ref`: the ref the workflow's `uses:` named.
    pub action_ref: String,
    /// The `with:` of the action's step, evaluated as GitHub evaluates it.
    pub with: Vec<(String, String)>,
    /// The job's and step's `env:`, evaluated, on top of [`Run::base_env`].
    pub env: Vec<(String, String)>,
    /// The runner's own environment (PATH, and what a test's agents need), without HOME.
    pub base_env: Vec<(OsString, OsString)>,
    /// The repository's secrets (`secrets.NAME`); none unless a test gives them.
    pub secrets: Value,
    /// The workflow's file (`.github/workflows/NAME.yml`).
    pub workflow: String,
    /// The repository of the run's head: a fork's for a fork's pull request, else this one.
    pub head_repository: String,
}

impl Run {
    /// A run of `event_name` with `event`, its ref derived as GitHub derives it.
    pub fn new(event_name: &str, event: Value, id: u64) -> Run {
        let (git_ref, head_ref, base_ref) = match event.pointer("/pull_request") {
            Some(pull) if event_name.starts_with("pull_request") => (
                format!("refs/pull/{}/merge", pull["number"]),
                pull.pointer("/head/ref")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                pull.pointer("/base/ref")
                    .and_then(Value::as_str)
                    .unwrap_or("main")
                    .to_owned(),
            ),
            _ => (
                event
                    .get("ref")
                    .and_then(Value::as_str)
                    .unwrap_or("refs/heads/main")
                    .to_owned(),
                String::new(),
                String::new(),
            ),
        };
        let head_repository = match event.pointer("/pull_request/head/repo/full_name") {
            Some(Value::String(head)) if event_name.starts_with("pull_request") => head.clone(),
            _ => REPOSITORY.to_owned(),
        };
        Run {
            head_repository,
            workflow: ".github/workflows/sticky.yml".to_owned(),
            event_name: event_name.to_owned(),
            event,
            git_ref,
            head_ref,
            base_ref,
            id,
            action_ref: "v0.1.0".to_owned(),
            with: Vec::new(),
            env: Vec::new(),
            base_env: Vec::new(),
            secrets: json!({}),
        }
    }

    /// Adds an input of the action's step.
    pub fn with(mut self, name: &str, value: &str) -> Run {
        self.with.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Adds a variable of the job's or step's `env:`.
    pub fn env(mut self, name: &str, value: impl Into<String>) -> Run {
        self.env.push((name.to_owned(), value.into()));
        self
    }

    /// `github.workflow_ref`: the workflow's file at the run's ref.
    fn workflow_ref(&self) -> String {
        format!("{REPOSITORY}/{}@{}", self.workflow, self.git_ref)
    }

    /// The branch the run's head is on: the pull request's head branch, else the ref's.
    fn head_branch(&self) -> String {
        if self.head_ref.is_empty() {
            self.git_ref.trim_start_matches("refs/heads/").to_owned()
        } else {
            self.head_ref.clone()
        }
    }

    /// The `github` context of this run.
    fn github(&self, workspace: &Path) -> Value {
        let ref_name = self
            .git_ref
            .trim_start_matches("refs/heads/")
            .trim_start_matches("refs/pull/")
            .to_owned();
        json!({
            "event_name": self.event_name,
            "event": self.event,
            "ref": self.git_ref,
            "ref_name": ref_name,
            "head_ref": self.head_ref,
            "base_ref": self.base_ref,
            "repository": REPOSITORY,
            "repository_id": REPOSITORY_ID.to_string(),
            "workflow_ref": self.workflow_ref(),
            "run_id": self.id.to_string(),
            "run_attempt": "1",
            "action_path": action_path(),
            "action_ref": self.action_ref,
            "workspace": workspace,
            "token": "ghs_the-runs-token",
        })
    }
}

/// A fresh runner's directories, removed with it.
pub struct Runner {
    _dir: tempfile::TempDir,
    /// `HOME`.
    pub home: PathBuf,
    /// `GITHUB_WORKSPACE`: the checkout, a git repository.
    pub workspace: PathBuf,
    /// `RUNNER_TEMP`.
    pub temp: PathBuf,
}

impl Runner {
    /// A runner whose checkout path is `…/<checkout>/widgets`, so runs differ in it.
    pub fn new(checkout: &str) -> Runner {
        let dir = tempfile::Builder::new()
            .prefix("sticky-action-")
            .tempdir()
            .expect("create a runner directory");
        let base = dir.path().canonicalize().expect("canonicalize");
        let (home, workspace, temp) = (
            base.join("home"),
            base.join(checkout).join("widgets"),
            base.join("temp"),
        );
        for path in [&home, &workspace, &temp] {
            std::fs::create_dir_all(path).expect("create a runner directory");
        }
        let init = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&workspace)
            .env("HOME", &home)
            .status()
            .expect("run git init");
        assert!(init.success(), "git init in the checkout");
        Runner {
            _dir: dir,
            home,
            workspace,
            temp,
        }
    }
}

impl Runner {
    /// A runner on an existing HOME and checkout (a real-agent world's, seeded for its
    /// agents), with a temporary directory of its own.
    pub fn within(home: &Path, workspace: &Path) -> Runner {
        let dir = tempfile::Builder::new()
            .prefix("sticky-action-")
            .tempdir()
            .expect("create a runner directory");
        let temp = dir.path().canonicalize().expect("canonicalize");
        Runner {
            _dir: dir,
            home: home.to_owned(),
            workspace: workspace.to_owned(),
            temp,
        }
    }
}

/// What a step left.
#[derive(Debug, Clone, Default)]
pub struct StepResult {
    /// `success`, `failure` or `skipped`.
    pub outcome: String,
    /// Its outputs.
    pub outputs: BTreeMap<String, String>,
}

/// What the action left after a run.
#[derive(Debug)]
pub struct Played {
    /// The action's outputs.
    pub outputs: BTreeMap<String, String>,
    /// Each step by id.
    pub steps: BTreeMap<String, StepResult>,
    /// Whether the action failed (a step failed).
    pub failed: bool,
    /// What every step printed, stdout and stderr, in order.
    pub log: String,
}

impl Played {
    /// The output `name`, empty when unset.
    pub fn output(&self, name: &str) -> &str {
        self.outputs.get(name).map_or("", String::as_str)
    }

    /// The outcome of step `id`.
    pub fn outcome(&self, id: &str) -> &str {
        self.steps.get(id).map_or("", |s| s.outcome.as_str())
    }
}

/// Plays `action` (action.yml as JSON) for `run` on `runner`, with `store` as GitHub's cache and
/// artifact store.
#[track_caller]
pub fn play(action: &Value, run: &Run, runner: &Runner, store: &Store) -> Played {
    store.begin_run(
        run.id,
        &run.workflow,
        &run.head_repository,
        &run.head_branch(),
    );
    let event_path = runner.temp.join("event.json");
    std::fs::write(&event_path, run.event.to_string()).expect("write the event");
    let github = run.github(&runner.workspace);
    let workflow = json!({"github": github, "secrets": run.secrets});
    let mut contexts = json!({
        "github": github,
        "secrets": run.secrets,
        "runner": {"os": runner_os(), "temp": runner.temp},
        "steps": {},
        "inputs": inputs(action, run, &workflow),
    });
    let env = runner_env(run, runner, &contexts, &event_path);
    let mut played = Played {
        outputs: BTreeMap::new(),
        steps: BTreeMap::new(),
        failed: false,
        log: String::new(),
    };
    let steps = action["runs"]["steps"].as_array().expect("steps");
    for (index, step) in steps.iter().enumerate() {
        let id = step["id"]
            .as_str()
            .expect("every step has an id")
            .to_owned();
        let result = play_step(
            step,
            index,
            &contexts,
            &env,
            run,
            runner,
            store,
            &mut played,
        );
        if result.outcome == "failure" {
            played.failed = true;
        }
        contexts["steps"][&id] = json!({
            "outcome": result.outcome,
            "conclusion": result.outcome,
            "outputs": result.outputs,
        });
        played.steps.insert(id, result);
    }
    let status = Status {
        failed: played.failed,
    };
    for (name, spec) in action["outputs"].as_object().expect("outputs") {
        let value = expr::interpolate(&expr::to_string(&spec["value"]), &contexts, status);
        played.outputs.insert(name.clone(), value);
    }
    played
}

/// The action's inputs: the workflow's `with:` evaluated, else the action's defaults. An input
/// the action does not declare fails, as actionlint would.
fn inputs(action: &Value, run: &Run, contexts: &Value) -> Value {
    let mut inputs = Map::new();
    for (name, spec) in action["inputs"].as_object().expect("inputs") {
        let given = run
            .with
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| expr::interpolate(v, contexts, Status { failed: false }));
        let value = given.unwrap_or_else(|| {
            expr::interpolate(
                &expr::to_string(&spec["default"]),
                contexts,
                Status { failed: false },
            )
        });
        inputs.insert(name.clone(), Value::String(value));
    }
    for (name, _) in &run.with {
        assert!(
            inputs.contains_key(name),
            "the workflow gives the action an input it does not have: {name}"
        );
    }
    Value::Object(inputs)
}

/// The environment every step starts from: the runner's, the workflow's `env:`, and the
/// variables the runner sets.
fn runner_env(
    run: &Run,
    runner: &Runner,
    contexts: &Value,
    event_path: &Path,
) -> Vec<(OsString, OsString)> {
    let ok = Status { failed: false };
    let mut env: Vec<(OsString, OsString)> = run.base_env.clone();
    env.extend(
        run.env
            .iter()
            .map(|(k, v)| (k.into(), expr::interpolate(v, contexts, ok).into())),
    );
    let vars: Vec<(&str, OsString)> = vec![
        ("HOME", runner.home.clone().into()),
        ("CI", "true".into()),
        ("GITHUB_ACTIONS", "true".into()),
        ("GITHUB_EVENT_NAME", run.event_name.clone().into()),
        ("GITHUB_EVENT_PATH", event_path.into()),
        ("GITHUB_REPOSITORY", REPOSITORY.into()),
        ("GITHUB_REPOSITORY_ID", REPOSITORY_ID.to_string().into()),
        ("GITHUB_WORKFLOW_REF", run.workflow_ref().into()),
        ("GITHUB_REF", run.git_ref.clone().into()),
        (
            "GITHUB_REF_NAME",
            expr::to_string(&contexts["github"]["ref_name"]).into(),
        ),
        ("GITHUB_HEAD_REF", run.head_ref.clone().into()),
        ("GITHUB_BASE_REF", run.base_ref.clone().into()),
        ("GITHUB_RUN_ID", run.id.to_string().into()),
        ("GITHUB_RUN_ATTEMPT", "1".into()),
        ("GITHUB_WORKSPACE", runner.workspace.clone().into()),
        ("GITHUB_ACTION_PATH", action_path().into()),
        ("GITHUB_ACTION_REF", run.action_ref.clone().into()),
        ("RUNNER_OS", runner_os().into()),
        ("RUNNER_TEMP", runner.temp.clone().into()),
    ];
    env.extend(vars.into_iter().map(|(k, v)| (k.into(), v)));
    env
}

/// One step: skipped by its `if:`, a `run:` script, or a `uses:` action the store plays.
#[allow(clippy::too_many_arguments)] // the runner's whole state, passed rather than bundled
fn play_step(
    step: &Value,
    index: usize,
    contexts: &Value,
    env: &[(OsString, OsString)],
    run: &Run,
    runner: &Runner,
    store: &Store,
    played: &mut Played,
) -> StepResult {
    let id = step["id"].as_str().expect("every step has an id");
    let status = Status {
        failed: played.failed,
    };
    let runs = match step.get("if").map(expr::to_string) {
        Some(condition) => expr::condition(&condition, contexts, status),
        None => !played.failed,
    };
    let evaluated = |key: &str| -> Vec<(String, String)> {
        step.get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| {
                let value = expr::interpolate(&expr::to_string(v), contexts, status);
                (k.clone(), value)
            })
            .collect()
    };
    if !runs {
        StepResult {
            outcome: "skipped".into(),
            outputs: BTreeMap::new(),
        }
    } else if let Some(script) = step.get("run").and_then(Value::as_str) {
        assert!(
            !script.contains("${{"),
            "step {id}: an expression in a run: script is code injection; use env:"
        );
        let step_env: Vec<(OsString, OsString)> = evaluated("env")
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        run_script(id, index, script, env, &step_env, runner, &mut played.log)
    } else {
        let uses = step["uses"].as_str().expect("a step runs or uses");
        let with: BTreeMap<String, String> = evaluated("with").into_iter().collect();
        play_uses(uses, &with, run, runner, store, &mut played.log)
    }
}

/// `RUNNER_OS` of this machine.
fn runner_os() -> &'static str {
    if cfg!(target_os = "macos") {
        "macOS"
    } else {
        "Linux"
    }
}

/// Runs one `run:` step as `shell: bash` does, in the checkout.
fn run_script(
    id: &str,
    index: usize,
    script: &str,
    env: &[(OsString, OsString)],
    step_env: &[(OsString, OsString)],
    runner: &Runner,
    log: &mut String,
) -> StepResult {
    let file = runner.temp.join(format!("step-{index}-{id}.sh"));
    std::fs::write(&file, script).expect("write the step's script");
    let output_file = runner.temp.join(format!("output-{index}"));
    std::fs::write(&output_file, "").expect("create GITHUB_OUTPUT");
    let mut command = Command::new("bash");
    command
        .args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&file)
        .current_dir(&runner.workspace)
        .env_clear()
        .envs(env.iter().cloned())
        .envs(step_env.iter().cloned())
        .env("GITHUB_OUTPUT", &output_file)
        .env("GITHUB_ENV", runner.temp.join("github-env"))
        .env("GITHUB_PATH", runner.temp.join("github-path"))
        .env("GITHUB_STEP_SUMMARY", runner.temp.join("step-summary"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (code, out, err) = run_with_deadline(command, &format!("step {id}"));
    log.push_str(&format!("== step {id} (exit {code})\n{out}{err}"));
    let text = std::fs::read_to_string(&output_file).expect("read GITHUB_OUTPUT");
    StepResult {
        outcome: if code == 0 { "success" } else { "failure" }.into(),
        outputs: parse_output_file(&text),
    }
}

/// Runs `command` to its end, killed past [`STEP_DEADLINE`]: (exit code, stdout, stderr).
fn run_with_deadline(mut command: Command, what: &str) -> (i32, String, String) {
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let (out, err) = (read(Box::new(stdout)), read(Box::new(stderr)));
    let since = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for a step") {
            break status;
        }
        if since.elapsed() > STEP_DEADLINE {
            let _ = child.kill();
            panic!("{what} still runs after {STEP_DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        status.code().unwrap_or(-1),
        out.join().expect("stdout"),
        err.join().expect("stderr"),
    )
}

/// `GITHUB_OUTPUT`'s two forms: `name=value`, and `name<<DELIMITER` lines `DELIMITER`.
pub fn parse_output_file(text: &str) -> BTreeMap<String, String> {
    let mut outputs = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delimiter)) = line.split_once("<<") {
            let mut value = Vec::new();
            loop {
                let line = lines
                    .next()
                    .unwrap_or_else(|| panic!("GITHUB_OUTPUT: {name} never ends"));
                if line == delimiter {
                    break;
                }
                value.push(line);
            }
            outputs.insert(name.to_owned(), value.join("\n"));
        } else if let Some((name, value)) = line.split_once('=') {
            outputs.insert(name.to_owned(), value.to_owned());
        } else if !line.is_empty() {
            panic!("GITHUB_OUTPUT: a line GitHub would refuse: {line:?}");
        }
    }
    outputs
}

/// The cache's scopes a run may restore from, in GitHub's order: its ref, its pull request's
/// base branch, the default branch.
fn scopes(run: &Run) -> Vec<String> {
    let mut scopes = vec![run.git_ref.clone()];
    if !run.base_ref.is_empty() {
        scopes.push(format!("refs/heads/{}", run.base_ref));
    }
    if !scopes.iter().any(|s| s == "refs/heads/main") {
        scopes.push("refs/heads/main".into());
    }
    scopes
}

/// A path of a `with:` as actions/cache and upload-artifact read it: `~` is HOME.
fn expand(path: &str, runner: &Runner) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => runner.home.join(rest),
        None => runner.workspace.join(path),
    }
}

/// Plays the actions the composite action uses.
fn play_uses(
    uses: &str,
    with: &BTreeMap<String, String>,
    run: &Run,
    runner: &Runner,
    store: &Store,
    log: &mut String,
) -> StepResult {
    let (name, pin) = uses.split_once('@').expect("uses: names a ref");
    assert!(
        pin.len() == 40 && pin.bytes().all(|b| b.is_ascii_hexdigit()),
        "{uses}: an action must be pinned to a commit"
    );
    let get = |key: &str| with.get(key).map_or("", String::as_str);
    let mut outputs = BTreeMap::new();
    let outcome = match name {
        "actions/cache/restore" => {
            let restore_keys: Vec<String> = get("restore-keys")
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect();
            let path = get("path");
            let restored = store.restore(
                &scopes(run),
                get("key"),
                &restore_keys,
                path,
                &expand(path, runner),
            );
            log.push_str(&format!("== cache restore: {:?}\n", restored.matched));
            outputs.insert("cache-hit".into(), restored.exact.to_string());
            outputs.insert("cache-primary-key".into(), get("key").to_owned());
            outputs.insert(
                "cache-matched-key".into(),
                restored.matched.unwrap_or_default(),
            );
            "success"
        }
        "actions/cache/save" => {
            let path = get("path");
            if !store.save(&run.git_ref, get("key"), path, &expand(path, runner)) {
                log.push_str("== cache save: the key exists; not saved (a warning)\n");
            }
            "success"
        }
        "actions/upload-artifact" => {
            let file = expand(get("path"), runner);
            if !file.is_file() {
                log.push_str(&format!("== upload-artifact: no file {}\n", file.display()));
                "failure"
            } else if store.upload(
                &run.id.to_string(),
                get("name"),
                &file,
                get("overwrite") == "true",
            ) {
                "success"
            } else {
                "failure"
            }
        }
        "actions/download-artifact" => {
            assert!(
                !get("github-token").is_empty(),
                "another run's artifact needs a token"
            );
            let target = expand(get("path"), runner);
            if store.download(get("run-id"), get("name"), &target) {
                "success"
            } else {
                log.push_str("== download-artifact: Artifact not found\n");
                "failure"
            }
        }
        other => panic!("the harness does not play {other}"),
    };
    StepResult {
        outcome: outcome.into(),
        outputs,
    }
}

/// The documents that show the action's workflows: the README (the shortest) and docs/ci.md.
pub const WORKFLOW_DOCUMENTS: [&str; 2] = ["README.md", "docs/ci.md"];

/// The `yaml` blocks of [`WORKFLOW_DOCUMENTS`], in their order.
pub fn documented_yaml_blocks() -> Vec<String> {
    WORKFLOW_DOCUMENTS
        .iter()
        .flat_map(|name| {
            let text = std::fs::read_to_string(action_path().join(name))
                .unwrap_or_else(|e| panic!("read {name}: {e}"));
            yaml_blocks(&text)
        })
        .collect()
}

/// The documented workflows that use the action: each fenced `yaml` block of the README and
/// docs/ci.md naming `sticky-cli/sticky@`, parsed, in their order; `None` after a skip (no yaml
/// module).
pub fn readme_workflows() -> Option<Vec<Workflow>> {
    let mut workflows = Vec::new();
    for block in documented_yaml_blocks() {
        if block.contains("uses: sticky-cli/sticky@") {
            workflows.push(Workflow::new(&yaml(&block)?));
        }
    }
    Some(workflows)
}

/// The text of every fenced `yaml` block of a Markdown document.
pub fn yaml_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match &mut current {
            None if line.trim_end() == "```yaml" => current = Some(String::new()),
            Some(block) if line.trim_end() == "```" => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    blocks
}

/// A documented workflow's one job that uses the action, as far as a run of the action needs it.
pub struct Workflow {
    /// The workflow's `name:`.
    pub name: String,
    /// The events it runs on (`on:`).
    pub events: Vec<String>,
    /// The job's `if:`, if any.
    pub job_if: Option<String>,
    /// The action step's `with:`.
    pub with: Vec<(String, String)>,
    /// The job's `env:`, then the action step's.
    pub env: Vec<(String, String)>,
}

impl Workflow {
    fn new(workflow: &Value) -> Workflow {
        // PyYAML reads the key `on` as YAML 1.1's boolean true.
        let on = workflow
            .get("on")
            .or_else(|| workflow.get("true"))
            .expect("on:");
        let events = match on {
            Value::Object(map) => map.keys().cloned().collect(),
            Value::String(event) => vec![event.clone()],
            other => panic!("on: {other}"),
        };
        let jobs = workflow["jobs"].as_object().expect("jobs");
        let (job, step) = jobs
            .values()
            .find_map(|job| {
                let step = job["steps"].as_array()?.iter().find(|step| {
                    step["uses"]
                        .as_str()
                        .is_some_and(|u| u.starts_with("sticky-cli/sticky@"))
                })?;
                Some((job, step))
            })
            .expect("a job uses the action");
        let pairs = |value: &Value| -> Vec<(String, String)> {
            value
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), expr::to_string(v)))
                .collect()
        };
        let mut env = pairs(&job["env"]);
        env.extend(pairs(&step["env"]));
        Workflow {
            name: expr::to_string(&workflow["name"]),
            events,
            job_if: job.get("if").map(expr::to_string),
            with: pairs(&step["with"]),
            env,
        }
    }

    /// The documented workflow named `name`.
    pub fn named(workflows: Vec<Workflow>, name: &str) -> Workflow {
        workflows
            .into_iter()
            .find(|w| w.name == name)
            .unwrap_or_else(|| {
                panic!("neither the README nor docs/ci.md has a workflow named {name}")
            })
    }

    /// A run of this workflow's action step for `event_name` with `event`, its `with:` and
    /// `env:` as the documents write them.
    pub fn run(&self, event_name: &str, event: Value, id: u64) -> Run {
        assert!(
            self.events.iter().any(|e| e == event_name),
            "{} does not run on {event_name}",
            self.name
        );
        let mut run = Run::new(event_name, event, id);
        // The documents name each workflow's file after the workflow (`# .github/workflows/...`).
        run.workflow = format!(".github/workflows/{}.yml", self.name);
        run.with.clone_from(&self.with);
        run.env.clone_from(&self.env);
        run
    }

    /// Whether the job's `if:` lets `run` start the job.
    pub fn starts(&self, run: &Run) -> bool {
        let contexts = json!({"github": run.github(Path::new("/"))});
        self.job_if
            .as_ref()
            .is_none_or(|condition| expr::condition(condition, &contexts, Status { failed: false }))
    }
}
