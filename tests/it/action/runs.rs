//! The action's runs with the fake Claude Code: three runs on fresh runners continue one
//! conversation (the second failing), another pull request's thread sees none of it, the
//! install goes through `install.sh` against a release served on 127.0.0.1 or falls back to
//! `cargo install` from the action's checkout, a tampered release installs nothing, a fork's
//! pull request (or a comment on one) runs nothing, an artifact a fork's run or another workflow
//! uploaded under a thread's name is never continued, and no input reaches a shell as code.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::store::Store;
use super::{Played, Run, Runner, Workflow, action, expr, play, readme_workflows};
use crate::support::{fakes_dir, python};

/// The release target `install.sh` picks on this machine.
fn release_target() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-musl",
        ("linux", "aarch64") => "aarch64-unknown-linux-musl",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        other => panic!("no release target for {other:?}"),
    }
}

/// A release directory of part 14's layout (`sticky-TARGET.tar.gz` and its `.sha256`) holding
/// the sticky under test, served on 127.0.0.1 until dropped; `tamper` makes the served archive
/// differ from the SHA-256 published beside it.
pub struct Release {
    /// The URL of the directory (`STICKY_RELEASE_URL`).
    pub url: String,
    _dir: tempfile::TempDir,
    server: std::sync::Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Release {
    /// Packs and serves the sticky this test build made.
    pub fn serve(tamper: bool) -> Release {
        Release::of(Path::new(env!("CARGO_BIN_EXE_sticky")), tamper)
    }

    /// Packs and serves `sticky`.
    pub fn of(sticky: &Path, tamper: bool) -> Release {
        let dir = tempfile::tempdir().expect("a release directory");
        let staging = dir.path().join("staging");
        std::fs::create_dir_all(&staging).expect("create the staging directory");
        std::fs::copy(sticky, staging.join("sticky")).expect("copy sticky");
        let asset = format!("sticky-{}.tar.gz", release_target());
        let packed = Command::new("tar")
            .arg("-czf")
            .arg(dir.path().join(&asset))
            .arg("-C")
            .arg(&staging)
            .arg("sticky")
            .status()
            .expect("run tar");
        assert!(packed.success(), "tar the release");
        let bytes = std::fs::read(dir.path().join(&asset)).expect("read the asset");
        let digest = sha256_hex(&bytes);
        std::fs::write(
            dir.path().join(format!("{asset}.sha256")),
            format!("{digest}  {asset}\n"),
        )
        .expect("write the checksum");
        if tamper {
            // Another archive under the same name: what a compromised mirror would serve.
            let mut other = bytes.clone();
            let last = other.len() - 1;
            other[last] ^= 0xff;
            std::fs::write(dir.path().join(&asset), other).expect("tamper with the asset");
        }
        let server = std::sync::Arc::new(
            tiny_http::Server::http("127.0.0.1:0").expect("listen on 127.0.0.1"),
        );
        let url = format!(
            "http://127.0.0.1:{}/",
            server.server_addr().to_ip().expect("an IP address").port()
        );
        let root = dir.path().to_owned();
        let serving = std::sync::Arc::clone(&server);
        let thread = std::thread::spawn(move || {
            for request in serving.incoming_requests() {
                let name = request.url().trim_start_matches('/').to_owned();
                let response = match std::fs::read(root.join(&name)) {
                    Ok(body) if !name.contains('/') => tiny_http::Response::from_data(body),
                    _ => tiny_http::Response::from_data(Vec::new()).with_status_code(404),
                };
                let _ = request.respond(response);
            }
        });
        Release {
            url,
            _dir: dir,
            server,
            thread: Some(thread),
        }
    }
}

impl Drop for Release {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The SHA-256 of `bytes` in hex, by `sha256sum` or `shasum`, as install.sh checks it.
fn sha256_hex(bytes: &[u8]) -> String {
    let file = tempfile::NamedTempFile::new().expect("a temporary file");
    std::fs::write(file.path(), bytes).expect("write");
    for (program, args) in [("sha256sum", &[][..]), ("shasum", &["-a", "256"][..])] {
        if let Ok(output) = Command::new(program).args(args).arg(file.path()).output() {
            if output.status.success() {
                let text = String::from_utf8(output.stdout).expect("hex");
                return text.split_whitespace().next().expect("a digest").to_owned();
            }
        }
    }
    panic!("no sha256sum or shasum");
}

/// A fake `gh` for the calls the action makes, `gh api [--paginate] [-X GET] PATH [-f
/// KEY=VALUE]... [--jq EXPR]`, answered as the REST API answers from the store's directory
/// (`FAKE_GH_STORE`, [`Store`]):
/// - `repos/R/actions/artifacts` (fields `name`, `per_page`, `page`): the artifacts, newest
///   first, each with `name`, `expired`, `created_at` and `workflow_run` (`id`,
///   `repository_id`, `head_repository_id`, `head_branch`, `head_sha`) from its run's record;
///   `--paginate` prints every page, one JSON document after another, as gh does;
/// - `repos/R/actions/runs/ID`: the run's record (`workflow_id`, `path`, ...), else 404;
/// - `repos/R/pulls/N`: the pull request's record (`head.repo.full_name`), else 404.
///
/// `--jq` is applied by the real jq as gh applies it. A path containing `FAKE_GH_FORBIDDEN`
/// gets GitHub's answer to a token without the permission it needs.
const FAKE_GH: &str = r#"#!/usr/bin/env python3
import datetime, json, os, re, subprocess, sys
args = sys.argv[1:]
if not os.environ.get("GH_TOKEN"):
    sys.stderr.write("gh: set the GH_TOKEN environment variable in a GitHub Actions workflow\n")
    sys.exit(4)
assert args[0] == "api", args
fields, jq, path, method, paginate, i = {}, None, None, None, False, 1
while i < len(args):
    if args[i] == "-X":
        method = args[i + 1]
        i += 2
    elif args[i] == "-f":
        key, value = args[i + 1].split("=", 1)
        fields[key] = value
        i += 2
    elif args[i] == "--jq":
        jq = args[i + 1]
        i += 2
    elif args[i] == "--paginate":
        paginate = True
        i += 1
    else:
        assert path is None, args
        path = args[i]
        i += 1
# gh sends fields in a POST's body unless told -X GET.
assert method == "GET" or (method is None and not fields), args
forbidden = os.environ.get("FAKE_GH_FORBIDDEN")
if forbidden and forbidden in path:
    sys.stderr.write("gh: Resource not accessible by integration (HTTP 403)\n")
    sys.exit(1)
store = os.environ["FAKE_GH_STORE"]
repository = os.environ["GITHUB_REPOSITORY"]

def record(kind, key):
    file = os.path.join(store, kind, key + ".json")
    if not os.path.exists(file):
        sys.stderr.write("gh: Not Found (HTTP 404)\n")
        sys.exit(1)
    return json.load(open(file))

def answer(documents):
    for document in documents:
        text = json.dumps(document)
        if jq is None:
            sys.stdout.write(text)
        else:
            done = subprocess.run(["jq", "-r", jq], input=text.encode())
            if done.returncode:
                sys.exit(done.returncode)
    sys.stdout.flush()
    sys.exit(0)

prefix = "repos/" + repository + "/"
assert path.startswith(prefix), path
rest = path[len(prefix):]
if rest == "actions/artifacts":
    index = os.path.join(store, "artifacts.jsonl")
    rows = [json.loads(line) for line in open(index)] if os.path.exists(index) else []
    listed = []
    for row in rows:
        if row["name"] != fields.get("name", row["name"]):
            continue
        run = record("runs", row["run"])
        created = datetime.datetime.fromtimestamp(row["created"], datetime.timezone.utc)
        created = created.strftime("%Y-%m-%dT%H:%M:%SZ")
        listed.append({"name": row["name"], "expired": False, "created_at": created,
            "workflow_run": {"id": run["id"], "repository_id": run["repository"]["id"],
                "head_repository_id": run["head_repository"]["id"],
                "head_branch": run["head_branch"], "head_sha": run["head_sha"]}})
    listed.reverse()
    size = int(fields.get("per_page", "30"))
    first = int(fields.get("page", "1"))
    last = max(first, -(-len(listed) // size)) if paginate else first
    pages = []
    for page in range(first, last + 1):
        chunk = listed[(page - 1) * size : page * size]
        pages.append({"total_count": len(listed), "artifacts": chunk})
    answer(pages)
elif re.fullmatch(r"actions/runs/[0-9]+", rest):
    answer([record("runs", rest.split("/")[-1])])
elif re.fullmatch(r"pulls/[0-9]+", rest):
    answer([record("pulls", rest.split("/")[-1])])
else:
    raise SystemExit("the fake gh does not answer " + path)
"#;

/// The tools every fake runner has: the fake agents, python3 for them, and a fake `cargo`
/// that records its arguments in `cargo.log` and "builds" the sticky under test into
/// `--root`/bin (a real `cargo install` takes minutes; its arguments are what the fallback
/// decides).
pub struct Tools {
    dir: tempfile::TempDir,
}

impl Tools {
    /// A fresh tool directory.
    pub fn new() -> Tools {
        let dir = tempfile::tempdir().expect("a tool directory");
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).expect("create bin");
        std::os::unix::fs::symlink(python(), bin.join("python3")).expect("link python3");
        let cargo = bin.join("cargo");
        std::fs::write(
            &cargo,
            format!(
                "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{log}'\nroot=\nwhile [ $# -gt 0 ]; do\n  \
                 if [ \"$1\" = --root ]; then root=$2; fi\n  shift\ndone\n\
                 mkdir -p \"$root/bin\" && cp '{sticky}' \"$root/bin/sticky\"\n",
                log = dir.path().join("cargo.log").display(),
                sticky = env!("CARGO_BIN_EXE_sticky"),
            ),
        )
        .expect("write the fake cargo");
        std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("make the fake cargo executable");
        let gh = bin.join("gh");
        std::fs::write(&gh, FAKE_GH).expect("write the fake gh");
        std::fs::set_permissions(&gh, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("make the fake gh executable");
        Tools { dir }
    }

    /// Each `cargo` command line the fake recorded.
    pub fn cargo_calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("cargo.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The fake agents' log of every run.
    pub fn agent_log(&self) -> PathBuf {
        self.dir.path().join("agent-runs.jsonl")
    }

    /// Each turn of the fake agents (not `--version` probes): a run given a prompt.
    pub fn agent_runs(&self) -> Vec<Value> {
        std::fs::read_to_string(self.agent_log())
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("an agent log line"))
            .filter(|run| run["prompt"].is_string())
            .collect()
    }

    /// The directory of the fake `cargo` and `gh`.
    pub fn bin(&self) -> PathBuf {
        self.dir.path().join("bin")
    }

    /// The runner's environment: PATH with the fakes, the fake cargo and gh first, the fake
    /// gh answering from `store`.
    pub fn env(&self, store: &Store) -> Vec<(OsString, OsString)> {
        let system = std::env::var_os("PATH").unwrap_or_default();
        let dirs = [self.dir.path().join("bin"), fakes_dir()]
            .into_iter()
            .chain(std::env::split_paths(&system));
        vec![
            ("PATH".into(), std::env::join_paths(dirs).expect("a PATH")),
            ("LANG".into(), "C.UTF-8".into()),
            ("FAKE_CLAUDE_LOG".into(), self.agent_log().into()),
            ("FAKE_GH_STORE".into(), store.root().into()),
        ]
    }
}

/// An `issue_comment` event: a comment on pull request `number`.
pub fn comment_event(number: u64, body: &str) -> Value {
    json!({
        "action": "created",
        "issue": {"number": number, "pull_request": {"url": format!("https://api.github.com/repos/{}/pulls/{number}", super::REPOSITORY)}},
        "comment": {"body": body, "author_association": "MEMBER"},
        "repository": {"full_name": super::REPOSITORY, "default_branch": "main"},
    })
}

/// The fake's answer says which earlier prompts the agent saw: `saw=[...]`.
pub fn saw(answer: &str) -> Vec<String> {
    let start = answer
        .find("saw=")
        .expect("the fake's answer names what it saw")
        + 4;
    let end = answer[start..]
        .find(" you said:")
        .expect("the fake's answer")
        + start;
    serde_json::from_str(&answer[start..end]).expect("a JSON list")
}

/// The session the fake's answer names.
fn session_named(answer: &str) -> &str {
    let start = answer.find("session=").expect("a session") + 8;
    answer[start..].split(' ').next().expect("a session ID")
}

/// How a run installs sticky: from the release served on 127.0.0.1 (the action at a release
/// tag), or, at a branch ref where no release matches, with the fake `cargo`.
#[derive(Clone, Copy)]
pub enum Install<'a> {
    /// `install.sh` against this release.
    Release(&'a Release),
    /// The fallback: `cargo install` from the action's checkout.
    FromSource,
}

/// Plays one run of the docs/ci.md's `@sticky` comment workflow, for comment `body` on pull
/// request `pull`, on a fresh runner whose checkout path names the run.
#[allow(clippy::too_many_arguments)] // a run's whole description, as the tests vary it
pub fn comment_run(
    action: &Value,
    workflow: &Workflow,
    store: &Store,
    tools: &Tools,
    install: Install,
    pull: u64,
    body: &str,
    id: u64,
    extra_env: &[(&str, &str)],
) -> Played {
    let runner = Runner::new(&format!("checkout-{id}"));
    // A pull request of this repository's own branch, unless a test opened it from a fork.
    store.open_pull(pull, super::REPOSITORY);
    let mut run = workflow.run("issue_comment", comment_event(pull, body), id);
    assert!(
        workflow.starts(&run),
        "the workflow's if: lets a member's comment start it"
    );
    run.base_env = tools.env(store);
    match install {
        Install::Release(release) => run = run.env("STICKY_RELEASE_URL", release.url.clone()),
        Install::FromSource => run.action_ref = "main".into(),
    }
    for (name, value) in extra_env {
        run = run.env(name, *value);
    }
    play(action, &run, &runner, store)
}

/// The docs/ci.md's comment workflow, three runs on pull request 7 (each on a fresh runner: its
/// own HOME and checkout path): run 1 starts the conversation, installing the release; run 2,
/// its agent failing, continues it and still saves it; run 3 continues with both earlier
/// prompts, on the same agent session. A run on pull request 8 sees none of pr-7's turns.
#[test]
fn three_runs_on_fresh_runners_continue_one_conversation_per_pull_request() {
    let (Some(action), Some(workflows)) = (action(), readme_workflows()) else {
        return;
    };
    let workflow = Workflow::named(workflows, "sticky");
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let release = Release::serve(false);
    let run = |install, pull, body: &str, id, env: &[(&str, &str)]| {
        comment_run(
            &action, &workflow, &store, &tools, install, pull, body, id, env,
        )
    };

    let first = run(
        Install::Release(&release),
        7,
        "@sticky remember the word kumquat",
        101,
        &[],
    );
    let session = assert_first_run(&first, &tools);

    let second = run(
        Install::FromSource,
        7,
        "@sticky and now fail",
        102,
        &[("FAKE_CLAUDE_EXIT", "1")],
    );
    assert!(
        second.failed,
        "run 2's failed turn fails the action: {}",
        second.log
    );
    assert!(
        !["0", ""].contains(&second.output("exit-code")),
        "{}",
        second.log
    );
    assert_eq!(
        second.outcome("save"),
        "success",
        "the failed run saves: {}",
        second.log
    );
    assert_eq!(second.outcome("verdict"), "failure");
    let calls = tools.cargo_calls();
    let expected = format!(
        "install --locked --quiet --path {}",
        super::action_path().display()
    );
    assert!(
        calls.len() == 1 && calls[0].starts_with(&expected),
        "no release matches a branch ref: built from the action's checkout: {calls:?}"
    );

    let third = run(
        Install::FromSource,
        7,
        "@sticky what was the word?",
        103,
        &[],
    );
    assert!(!third.failed, "run 3 succeeds: {}", third.log);
    let answer = third.output("answer");
    assert_eq!(
        saw(answer),
        ["@sticky remember the word kumquat", "@sticky and now fail"],
        "run 3 continues with run 1's and the failed run 2's turns: {answer}"
    );
    assert_eq!(
        third.output("session-id"),
        session,
        "the same agent session"
    );
    let cwds: Vec<String> = tools
        .agent_runs()
        .iter()
        .map(|r| r["cwd"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        cwds.len() == 3 && cwds[0] != cwds[1] && cwds[1] != cwds[2],
        "three checkout paths: {cwds:?}"
    );

    let other = run(Install::FromSource, 8, "@sticky hello", 104, &[]);
    assert_apart(&other, &session);
    assert_eq!(
        store.cache_keys("refs/heads/main").len(),
        4,
        "each run saved its own entry"
    );
    let artifact = &third.steps["plan"].outputs["artifact"];
    let bundle = store
        .artifact("103", artifact, "conversation.sticky")
        .unwrap_or_else(|| panic!("run 3 uploaded its bundle as {artifact}"));
    assert_reviewer_sees_each_run(&bundle);
}

/// What docs/ci.md tells a reviewer: `sticky import` of a run's bundle, anywhere, then
/// `sticky log -t pr-7` lists the turn of each run, the failed one included.
#[track_caller]
fn assert_reviewer_sees_each_run(bundle: &std::path::Path) {
    let reviewer = Runner::new("reviewer");
    let sticky = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_sticky"))
            .args(args)
            .current_dir(&reviewer.workspace)
            .env("HOME", &reviewer.home)
            .env("PATH", std::env::join_paths([fakes_dir()]).expect("a PATH"))
            .output()
            .expect("run sticky");
        assert!(output.status.success(), "sticky {args:?}: {output:?}");
        output.stdout
    };
    sticky(&["import", "--replace", &bundle.to_string_lossy()]);
    let log: Value =
        serde_json::from_slice(&sticky(&["log", "-t", "pr-7", "--json"])).expect("log --json");
    let turns: Vec<(String, String)> = log["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .flat_map(|s| s["turns"].as_array().cloned().unwrap_or_default())
        .map(|t| (expr::to_string(&t["prompt"]), expr::to_string(&t["status"])))
        .collect();
    let expected = [
        ("@sticky remember the word kumquat", "ok"),
        ("@sticky and now fail", "failed"),
        ("@sticky what was the word?", "ok"),
    ]
    .map(|(p, s)| (p.to_owned(), s.to_owned()));
    assert_eq!(turns, expected, "{log}");
}

/// A run on pull request 8 is a conversation of its own: none of pr-7's turns, another session.
#[track_caller]
fn assert_apart(other: &Played, pr7_session: &str) {
    assert!(!other.failed, "{}", other.log);
    assert!(
        saw(other.output("answer")).is_empty(),
        "pr-8 never sees pr-7's turns"
    );
    assert_ne!(other.output("session-id"), pr7_session);
    let turn: Value = serde_json::from_str(other.output("turn")).expect("JSON");
    assert_eq!(turn["thread"], "pr-8");
}

/// Run 1's checks: it installed the release (no build), answered, and its outputs carry the
/// answer, the exit code, the session and the turn. Returns the agent's session ID.
#[track_caller]
fn assert_first_run(first: &Played, tools: &Tools) -> String {
    assert!(!first.failed, "run 1 succeeds: {}", first.log);
    assert_eq!(first.output("exit-code"), "0");
    let answer = first.output("answer");
    assert!(
        answer.contains("you said: @sticky remember the word kumquat"),
        "{answer}"
    );
    assert!(
        saw(answer).is_empty(),
        "run 1 starts the conversation: {answer}"
    );
    let session = session_named(answer).to_owned();
    assert_eq!(first.output("session-id"), session);
    let turn: Value = serde_json::from_str(first.output("turn")).expect("the turn output is JSON");
    assert_eq!(
        (&turn["thread"], &turn["answer"]),
        (&json!("pr-7"), &json!(answer))
    );
    assert!(
        first.log.contains("installed sticky"),
        "run 1 installs the release: {}",
        first.log
    );
    assert!(
        tools.cargo_calls().is_empty(),
        "a release matched: no build"
    );
    session
}

/// The docs/ci.md's comment workflow starts only for a comment on a pull request that mentions
/// @sticky, by someone with write access.
#[test]
fn the_comment_workflow_starts_only_for_members_mentioning_sticky() {
    let Some(workflows) = readme_workflows() else {
        return;
    };
    let workflow = Workflow::named(workflows, "sticky");
    let starts = |event: Value| workflow.starts(&workflow.run("issue_comment", event, 1));
    assert!(starts(comment_event(7, "@sticky look")));
    let mut stranger = comment_event(7, "@sticky look");
    stranger["comment"]["author_association"] = json!("NONE");
    assert!(!starts(stranger), "a stranger's comment starts nothing");
    assert!(
        !starts(comment_event(7, "looks good")),
        "no @sticky, no run"
    );
    let mut issue = comment_event(7, "@sticky look");
    issue["issue"]
        .as_object_mut()
        .expect("an issue")
        .remove("pull_request");
    assert!(!starts(issue), "an issue's comment is not a pull request's");
}

/// The README's nightly workflow: each night's run (a fresh runner) continues the nights
/// before on thread `nightly`, with Codex as the README names it.
#[test]
fn the_nightly_workflow_keeps_its_conversation() {
    let (Some(action), Some(workflows)) = (action(), readme_workflows()) else {
        return;
    };
    let workflow = Workflow::named(workflows, "nightly");
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let mut answers = Vec::new();
    for id in [501, 502] {
        let runner = Runner::new(&format!("night-{id}"));
        let mut run = workflow.run("schedule", json!({"schedule": "17 3 * * *"}), id);
        run.base_env = tools.env(&store);
        run.base_env
            .push(("FAKE_CODEX_LOG".into(), tools.agent_log().into()));
        run.action_ref = "main".into();
        let played = play(&action, &run, &runner, &store);
        assert!(!played.failed, "{}", played.log);
        answers.push(played.output("answer").to_owned());
    }
    let prompt = workflow
        .with
        .iter()
        .find(|(k, _)| k == "prompt")
        .expect("a prompt")
        .1
        .clone();
    assert!(saw(&answers[0]).is_empty(), "{}", answers[0]);
    assert_eq!(
        saw(&answers[1]),
        [prompt],
        "the second night continues the first"
    );
    let runs = tools.agent_runs();
    assert_eq!(runs.len(), 2);
    assert!(
        runs.iter()
            .all(|r| r["program"].as_str().is_some_and(|p| p.ends_with("codex"))),
        "{runs:?}"
    );
    assert!(store.cache_keys("refs/heads/main").len() == 2);
}

/// A release whose archive differs from its published SHA-256 installs nothing, and the action
/// fails before any agent runs, saying why.
#[test]
fn a_release_that_fails_its_checksum_installs_nothing_and_runs_nothing() {
    let (Some(action), Some(workflows)) = (action(), readme_workflows()) else {
        return;
    };
    let workflow = Workflow::named(workflows, "sticky");
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let release = Release::serve(true);
    let install = Install::Release(&release);
    let played = comment_run(
        &action,
        &workflow,
        &store,
        &tools,
        install,
        7,
        "@sticky hi",
        201,
        &[],
    );
    assert!(played.failed);
    assert_eq!(played.outcome("install"), "failure", "{}", played.log);
    assert!(played.log.contains("SHA-256"), "says why: {}", played.log);
    assert!(
        played.log.contains("nothing was installed"),
        "{}",
        played.log
    );
    assert_eq!(played.outcome("turn"), "skipped");
    assert!(tools.agent_runs().is_empty(), "no agent ran");
    assert!(
        tools.cargo_calls().is_empty(),
        "no fallback past a failed check"
    );
}

/// A pull request from a fork: one notice, nothing installed, run or saved, no failure.
#[test]
fn a_forks_pull_request_runs_nothing_and_says_so_in_one_line() {
    let Some(action) = action() else { return };
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let runner = Runner::new("checkout");
    let event = json!({
        "number": 9,
        "pull_request": {
            "number": 9,
            "head": {"ref": "patch-1", "repo": {"full_name": "stranger/widgets"}},
            "base": {"ref": "main", "repo": {"full_name": super::REPOSITORY}},
        },
    });
    let mut run = Run::new("pull_request", event, 301).with("prompt", "review this");
    run.base_env = tools.env(&store);
    let played = play(&action, &run, &runner, &store);
    assert!(!played.failed, "{}", played.log);
    let notices: Vec<&str> = played
        .log
        .lines()
        .filter(|l| l.starts_with("::notice::"))
        .collect();
    assert_eq!(notices.len(), 1, "{}", played.log);
    assert!(
        notices[0].contains("fork (stranger/widgets)"),
        "{}",
        notices[0]
    );
    for step in [
        "install", "restore", "import", "turn", "export", "save", "upload",
    ] {
        assert_eq!(played.outcome(step), "skipped", "{step}: {}", played.log);
    }
    assert!(tools.agent_runs().is_empty());
    assert!(store.cache_keys("refs/pull/9/merge").is_empty());
}

/// The prompt, the agent's arguments and the thread reach sticky and the agent as data: shell
/// syntax in them runs nothing, and quoted agent arguments stay whole.
#[test]
fn inputs_reach_the_agent_as_data_never_as_code() {
    let Some(action) = action() else { return };
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let runner = Runner::new("checkout");
    let marker = runner.temp.join("pwned");
    let hostile = format!(
        "$(touch {m}) `touch {m}` \"; touch {m}; \"",
        m = marker.display()
    );
    let event = json!({"ref": "refs/heads/feature/x"});
    let mut run = Run::new("push", event, 401)
        .with("prompt", &format!("fix it {hostile}"))
        .with(
            "agent-args",
            &format!("--permission-mode 'accept edits' --append-system-prompt '{hostile}'"),
        );
    run.base_env = tools.env(&store);
    run.action_ref = "main".into();
    let played = play(&action, &run, &runner, &store);
    assert!(!played.failed, "{}", played.log);
    assert!(!marker.exists(), "an input ran as code: {}", played.log);
    let agent = tools.agent_runs().pop().expect("the agent ran");
    assert_eq!(agent["prompt"], format!("fix it {hostile}"));
    let argv: Vec<String> = serde_json::from_value(agent["argv"].clone()).expect("argv");
    let at = argv
        .iter()
        .position(|a| a == "--permission-mode")
        .expect("the agent arguments reach the agent");
    assert_eq!(argv[at + 1], "accept edits", "{argv:?}");
    let turn: Value = serde_json::from_str(played.output("turn")).expect("JSON");
    assert_eq!(
        turn["thread"], "feature/x",
        "a push names the thread by its branch"
    );
}

/// When the cache evicted the thread's entries (unused for 7 days), the next run continues
/// from the artifact of the thread's last run, found through the REST API.
#[test]
fn a_conversation_the_cache_evicted_continues_from_its_last_artifact() {
    let (Some(action), Some(workflows)) = (action(), readme_workflows()) else {
        return;
    };
    let workflow = Workflow::named(workflows, "sticky");
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let run = |pull, body: &str, id, env: &[(&str, &str)]| {
        comment_run(
            &action,
            &workflow,
            &store,
            &tools,
            Install::FromSource,
            pull,
            body,
            id,
            env,
        )
    };
    assert!(!run(7, "@sticky remember kumquat", 601, &[]).failed);
    assert!(!run(8, "@sticky another pull request", 602, &[]).failed);
    assert!(!run(7, "@sticky and remember fig", 603, &[]).failed);
    store.evict_cache();

    let later = run(7, "@sticky a week later: which words?", 604, &[]);
    assert!(!later.failed, "{}", later.log);
    assert_eq!(later.outcome("download"), "success", "{}", later.log);
    assert!(
        later
            .log
            .contains("continuing from the artifact of run 603"),
        "{}",
        later.log
    );
    assert_eq!(
        saw(later.output("answer")),
        ["@sticky remember kumquat", "@sticky and remember fig"],
        "the newest artifact of pr-7's thread, not pr-8's"
    );
}

/// The action imports its own bundle: a conversation past what `sticky import` places without
/// asking (48 MiB of transcript that compresses far past 200 times, here) is imported all the
/// same (`--yes`), where it had blocked every later run of the thread.
#[test]
fn a_conversation_past_what_import_places_unasked_continues() {
    use sha2::Digest as _;
    let (Some(action), Some(workflows)) = (action(), readme_workflows()) else {
        return;
    };
    let workflow = Workflow::named(workflows, "sticky");
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let run = |body: &str, id| {
        comment_run(
            &action,
            &workflow,
            &store,
            &tools,
            Install::FromSource,
            7,
            body,
            id,
            &[],
        )
    };
    let first = run("@sticky remember kumquat", 611);
    assert!(!first.failed, "{}", first.log);
    store.evict_cache();
    let artifact = &first.steps["plan"].outputs["artifact"];
    let bundle = store
        .artifact("611", artifact, "conversation.sticky")
        .unwrap_or_else(|| panic!("run 611 uploaded its bundle as {artifact}"));
    let good = std::fs::read(&bundle).expect("read the bundle");
    let mut grown = Vec::new();
    let big = crate::bundle::rebuilt(
        &good,
        |_| {},
        |entries| {
            entries[1].2.resize(48 << 20, b'\n');
            grown.clone_from(&entries[1].2);
        },
    );
    let sha = sha2::Sha256::digest(&grown)
        .iter()
        .fold(String::new(), |hex, b| hex + &format!("{b:02x}"));
    let big = crate::bundle::rebuilt(
        &big,
        |m| {
            m["files"][0]["size"] = grown.len().into();
            m["files"][0]["sha256"] = sha.into();
        },
        |_| {},
    );
    assert!(big.len() < 200 << 10, "{} bytes", big.len());
    std::fs::write(&bundle, big).expect("grow the artifact");

    let later = run("@sticky which word?", 612);
    assert!(!later.failed, "{}", later.log);
    assert!(
        later
            .log
            .contains("continuing from the artifact of run 611"),
        "{}",
        later.log
    );
    assert_eq!(saw(later.output("answer")), ["@sticky remember kumquat"]);
}

/// A job whose token may not read the artifacts (no `actions: read`) and whose cache has no
/// entry gets a warning that says so and what it means, then a turn of a new conversation.
#[test]
fn without_actions_read_a_cache_miss_warns_before_starting_afresh() {
    let (Some(action), Some(workflows)) = (action(), readme_workflows()) else {
        return;
    };
    let workflow = Workflow::named(workflows, "sticky");
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let forbidden = [("FAKE_GH_FORBIDDEN", "/actions/")];
    let played = comment_run(
        &action,
        &workflow,
        &store,
        &tools,
        Install::FromSource,
        7,
        "@sticky hi",
        701,
        &forbidden,
    );
    assert!(!played.failed, "{}", played.log);
    let warnings: Vec<&str> = played
        .log
        .lines()
        .filter(|l| l.starts_with("::warning::"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", played.log);
    assert!(warnings[0].contains("actions: read"), "{}", warnings[0]);
    assert_eq!(played.outcome("download"), "skipped");
    assert!(saw(played.output("answer")).is_empty());
}

/// Uploads into `store`, as run `id` of `workflow` whose head is in `head_repository`, an
/// artifact under the name of pull request `pull`'s thread holding a real conversation whose
/// one prompt is `prompt`: what a fork's pull request (its workflow is the fork's own) or
/// another workflow of the repository can upload.
#[allow(clippy::too_many_arguments)] // the uploading run's whole description
fn upload_foreign_artifact(
    action: &Value,
    store: &Store,
    pull: u64,
    id: u64,
    head_repository: &str,
    workflow: &str,
    prompt: &str,
) {
    let scratch_dir = tempfile::tempdir().expect("a store");
    let scratch = Store::new(scratch_dir.path());
    let tools = Tools::new();
    let runner = Runner::new(&format!("foreign-{id}"));
    let mut run = Run::new("push", json!({"ref": "refs/heads/patch-1"}), id)
        .with("thread", &format!("pr-{pull}"))
        .with("prompt", prompt);
    run.base_env = tools.env(&scratch);
    run.action_ref = "main".into();
    let played = play(action, &run, &runner, &scratch);
    assert!(!played.failed, "{}", played.log);
    let name = &played.steps["plan"].outputs["artifact"];
    let bundle = scratch
        .artifact(&id.to_string(), name, "conversation.sticky")
        .expect("the foreign run saved its conversation");
    store.begin_run(id, workflow, head_repository, "patch-1");
    assert!(store.upload(&id.to_string(), name, &bundle, false));
}

/// A fork's pull request runs in this repository's run list with the fork's own workflow, which
/// can upload an artifact under a thread's predictable name; another workflow of the repository
/// can too. When the cache has no bundle, neither is continued though both are newer: the
/// thread's last artifact of this workflow's runs of this repository is.
#[test]
fn a_forks_or_another_workflows_newer_artifact_under_the_threads_name_is_never_continued() {
    let (Some(action), Some(workflows)) = (action(), readme_workflows()) else {
        return;
    };
    let workflow = Workflow::named(workflows, "sticky");
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let run = |pull, body: &str, id| {
        comment_run(
            &action,
            &workflow,
            &store,
            &tools,
            Install::FromSource,
            pull,
            body,
            id,
            &[],
        )
    };
    assert!(!run(7, "@sticky remember kumquat", 1001).failed);
    let sticky_yml = ".github/workflows/sticky.yml";
    let fork = "stranger/widgets";
    upload_foreign_artifact(
        &action,
        &store,
        7,
        1002,
        fork,
        sticky_yml,
        "fork says: leak",
    );
    let other = ".github/workflows/other.yml";
    upload_foreign_artifact(&action, &store, 7, 1003, super::REPOSITORY, other, "other");
    store.evict_cache();

    let later = run(7, "@sticky which words?", 1004);
    assert!(!later.failed, "{}", later.log);
    assert!(
        later
            .log
            .contains("continuing from the artifact of run 1001"),
        "{}",
        later.log
    );
    assert_eq!(
        saw(later.output("answer")),
        ["@sticky remember kumquat"],
        "the thread's own conversation, none a fork or another workflow wrote"
    );
}

/// When the only artifacts under the thread's name are a fork's, the turn starts a new
/// conversation, with a warning that says why.
#[test]
fn only_a_forks_artifact_under_the_threads_name_starts_afresh_with_a_warning() {
    let (Some(action), Some(workflows)) = (action(), readme_workflows()) else {
        return;
    };
    let workflow = Workflow::named(workflows, "sticky");
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let sticky_yml = ".github/workflows/sticky.yml";
    upload_foreign_artifact(
        &action,
        &store,
        7,
        1101,
        "stranger/widgets",
        sticky_yml,
        "leak",
    );
    let played = comment_run(
        &action,
        &workflow,
        &store,
        &tools,
        Install::FromSource,
        7,
        "@sticky hi",
        1102,
        &[],
    );
    assert!(!played.failed, "{}", played.log);
    let warnings: Vec<&str> = played
        .log
        .lines()
        .filter(|l| l.starts_with("::warning::"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", played.log);
    assert!(
        warnings[0].contains("a fork's pull request or another workflow uploaded"),
        "{}",
        warnings[0]
    );
    assert_eq!(played.outcome("download"), "skipped", "{}", played.log);
    assert!(saw(played.output("answer")).is_empty(), "{}", played.log);
}

/// A member's `@sticky` comment on a fork's pull request: the run would have the repository's
/// secrets and work on the fork's code, so the action says so in one line and runs nothing.
#[test]
fn a_comment_on_a_forks_pull_request_runs_nothing_and_says_so_in_one_line() {
    let (Some(action), Some(workflows)) = (action(), readme_workflows()) else {
        return;
    };
    let workflow = Workflow::named(workflows, "sticky");
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    store.open_pull(9, "stranger/widgets");
    let played = comment_run(
        &action,
        &workflow,
        &store,
        &tools,
        Install::FromSource,
        9,
        "@sticky review this",
        1201,
        &[],
    );
    assert!(!played.failed, "{}", played.log);
    let notices: Vec<&str> = played
        .log
        .lines()
        .filter(|l| l.starts_with("::notice::"))
        .collect();
    assert_eq!(notices.len(), 1, "{}", played.log);
    assert!(
        notices[0].contains("pull request #9 comes from a fork (stranger/widgets)"),
        "{}",
        notices[0]
    );
    for step in [
        "install",
        "restore",
        "find-artifact",
        "import",
        "turn",
        "export",
        "save",
        "upload",
    ] {
        assert_eq!(played.outcome(step), "skipped", "{step}: {}", played.log);
    }
    assert!(tools.agent_runs().is_empty());
    assert!(store.cache_keys("refs/heads/main").is_empty());
}

/// A comment whose pull request the token may not read (no `pull-requests: read`): whether it
/// comes from a fork is unknown, so the action fails before anything runs, saying what it needs.
#[test]
fn a_comment_whose_pull_request_cannot_be_read_fails_before_anything_runs() {
    let (Some(action), Some(workflows)) = (action(), readme_workflows()) else {
        return;
    };
    let workflow = Workflow::named(workflows, "sticky");
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let played = comment_run(
        &action,
        &workflow,
        &store,
        &tools,
        Install::FromSource,
        7,
        "@sticky hi",
        1301,
        &[("FAKE_GH_FORBIDDEN", "/pulls/")],
    );
    assert!(played.failed);
    assert_eq!(played.outcome("plan"), "failure", "{}", played.log);
    assert!(
        played.log.contains("permissions: pull-requests: read"),
        "{}",
        played.log
    );
    assert_eq!(played.outcome("install"), "skipped");
    assert!(tools.agent_runs().is_empty());
}

/// Plays a `push` run on a fresh runner with `with`, installing from the action's checkout.
fn push_run(
    action: &Value,
    store: &Store,
    tools: &Tools,
    id: u64,
    with: &[(&str, &str)],
) -> Played {
    let runner = Runner::new(&format!("push-{id}"));
    let mut run = Run::new("push", json!({"ref": "refs/heads/main"}), id);
    for (name, value) in with {
        run = run.with(name, value);
    }
    run.base_env = tools.env(store);
    run.action_ref = "main".into();
    play(action, &run, &runner, store)
}

/// `continue: false` starts a new conversation on the thread, and the next run continues that
/// one, the newest; a thread and a prompt that look like options stay values.
#[test]
fn continue_false_starts_afresh_and_the_next_run_continues_the_new_conversation() {
    let Some(action) = action() else { return };
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    // Not a leading `-`: sticky refuses such a new thread name (`-t -rf` reads as options).
    let thread = "$(touch pwned) --help";
    let first = push_run(
        &action,
        &store,
        &tools,
        801,
        &[("thread", thread), ("prompt", "-v is broken")],
    );
    assert!(!first.failed, "{}", first.log);
    let turn: Value = serde_json::from_str(first.output("turn")).expect("JSON");
    assert_eq!(
        turn["thread"], thread,
        "a thread that looks like an option is a thread"
    );
    assert_eq!(tools.agent_runs()[0]["prompt"], "-v is broken");

    let fresh = push_run(
        &action,
        &store,
        &tools,
        802,
        &[
            ("thread", thread),
            ("prompt", "start over"),
            ("continue", "false"),
        ],
    );
    assert!(!fresh.failed, "{}", fresh.log);
    assert!(
        saw(fresh.output("answer")).is_empty(),
        "{}",
        fresh.output("answer")
    );
    assert_eq!(fresh.outcome("restore"), "skipped");
    assert_ne!(fresh.output("session-id"), first.output("session-id"));

    let next = push_run(
        &action,
        &store,
        &tools,
        803,
        &[("thread", thread), ("prompt", "go on")],
    );
    assert!(!next.failed, "{}", next.log);
    assert_eq!(
        saw(next.output("answer")),
        ["start over"],
        "the newest conversation"
    );
    assert_eq!(next.output("session-id"), fresh.output("session-id"));
}

/// Agent arguments that do not split into words (an unmatched quote) fail the action before
/// anything is installed or run, naming the input.
#[test]
fn agent_args_with_an_unmatched_quote_fail_before_anything_runs() {
    let Some(action) = action() else { return };
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let played = push_run(
        &action,
        &store,
        &tools,
        901,
        &[
            ("prompt", "hi"),
            ("agent-args", "--append-system-prompt 'unclosed"),
        ],
    );
    assert!(played.failed);
    assert_eq!(played.outcome("plan"), "failure", "{}", played.log);
    assert!(
        played.log.contains("::error::input agent-args"),
        "{}",
        played.log
    );
    assert_eq!(played.outcome("install"), "skipped");
    assert!(tools.agent_runs().is_empty());
}

/// A `version` that is no release tag fails the install with an error naming the input; nothing
/// is downloaded, built or run.
#[test]
fn a_version_that_is_no_release_tag_fails_the_install_saying_so() {
    let Some(action) = action() else { return };
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let played = push_run(
        &action,
        &store,
        &tools,
        951,
        &[("prompt", "hi"), ("version", "../../latest")],
    );
    assert!(played.failed);
    assert_eq!(played.outcome("install"), "failure", "{}", played.log);
    assert!(
        played
            .log
            .contains("::error::input version must be a release tag"),
        "{}",
        played.log
    );
    assert!(tools.cargo_calls().is_empty());
    assert!(tools.agent_runs().is_empty());
}

/// One workflow file on both `pull_request` and `issue_comment` (comment runs reach the pull
/// request's runs through the artifact). Run 1, a comment, saves under `refs/heads/main`; run
/// 2, the pull request's own run, restores that (base-branch fallback) and saves under
/// `refs/pull/7/merge`; run 3, a comment, finds run 1's entry in its own scope, and continues
/// run 2's newer artifact instead, with both turns.
#[test]
fn a_comment_run_continues_a_pull_request_runs_newer_artifact_over_its_own_cache() {
    let (Some(action), Some(workflows)) = (action(), readme_workflows()) else {
        return;
    };
    let workflow = Workflow::named(workflows, "sticky");
    let store_dir = tempfile::tempdir().expect("a store");
    let store = Store::new(store_dir.path());
    let tools = Tools::new();
    let first = comment_run(
        &action,
        &workflow,
        &store,
        &tools,
        Install::FromSource,
        7,
        "@sticky remember kumquat",
        101,
        &[],
    );
    assert!(!first.failed, "{}", first.log);
    let event = json!({
        "number": 7,
        "pull_request": {
            "number": 7,
            "head": {"ref": "feature-7", "repo": {"full_name": super::REPOSITORY}},
            "base": {"ref": "main", "repo": {"full_name": super::REPOSITORY}},
        },
    });
    let mut run = Run::new("pull_request", event, 102).with("prompt", "pushed: remember fig");
    run.base_env = tools.env(&store);
    run.action_ref = "main".into();
    let second = play(&action, &run, &Runner::new("checkout-102"), &store);
    assert!(!second.failed, "{}", second.log);
    assert_eq!(saw(second.output("answer")), ["@sticky remember kumquat"]);
    let third = comment_run(
        &action,
        &workflow,
        &store,
        &tools,
        Install::FromSource,
        7,
        "@sticky which words?",
        103,
        &[],
    );
    assert!(!third.failed, "{}", third.log);
    assert_eq!(
        saw(third.output("answer")),
        ["@sticky remember kumquat", "pushed: remember fig"],
        "run 3 continues run 2's turn too: {}",
        third.log
    );
    assert!(
        third
            .log
            .contains("continuing from the artifact of run 102"),
        "{}",
        third.log
    );
}
