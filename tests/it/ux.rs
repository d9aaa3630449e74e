//! sticky as a shell tool: completions that load in real shells, `--help` pinned by snapshots,
//! stable `--json` schemas for every report, `config` precedence and its errors, `threads`,
//! `sessions`, `doctor`, `prompt`, quiet broken pipes and a pager only on a terminal.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use sticky::store::{Mode, Store};

use crate::support::{TestEnv, skip, skip_untested};

/// The repository root (where `completions/`, `man/` and the snapshots are committed).
fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The keys of a JSON object, sorted.
#[track_caller]
fn keys(value: &Value) -> BTreeSet<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// Asserts the keys of `value` are exactly `expected`: the schema is a contract with scripts.
#[track_caller]
fn assert_keys(value: &Value, expected: &[&str]) {
    let expected: BTreeSet<&str> = expected.iter().copied().collect();
    assert_eq!(keys(value), expected, "schema changed in {value}");
}

const SESSION_KEYS: &[&str] = &[
    "id",
    "agent",
    "model",
    "agent_session_id",
    "directory",
    "created_at",
    "rotated_from",
    "rotation_reason",
    "ended_at",
    "carried",
    "carried_bytes",
    "forked_from",
];

const TURN_KEYS: &[&str] = &[
    "id",
    "session_id",
    "status",
    "mode",
    "prompt",
    "started_at",
    "ended_at",
    "duration_ms",
    "exit_code",
    "signal",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "error",
    "cached_tokens",
    "context_tokens",
    "context_window",
    "answer_bytes",
    "purpose",
];

const SETTING_KEYS: &[&str] = &["value", "source", "origin"];

/// The keys of the vault in `status` and `doctor` (docs/json.md, "vault").
const VAULT_KEYS: &[&str] = &["enabled", "directory", "size", "newest"];

fn with(base: &[&'static str], more: &[&'static str]) -> Vec<&'static str> {
    base.iter().chain(more).copied().collect()
}

/// A project with two sessions on `main` (the second from `sticky new`) and one on `review`.
fn history() -> TestEnv {
    let env = TestEnv::new();
    env.turn("first prompt");
    env.ok(["new", "second prompt"]);
    env.ok(["-t", "review", "look at this"]);
    env
}

/// Writes the user's configuration file (where `dirs` finds it under the test's HOME).
fn write_config(env: &TestEnv, text: &str) -> PathBuf {
    let dir = env.home.join(".config/sticky");
    std::fs::create_dir_all(&dir).expect("create the config directory");
    let path = dir.join("config.toml");
    std::fs::write(&path, text).expect("write the config");
    path
}

// --- completions and help -------------------------------------------------------------------

/// Whether `program` runs here (it answers `--version`).
fn installed(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Whether `shell` is installed, to check `unchecked` in it; when not, the test is skipped (see
/// [`skip`]): the README promises what these tests check in bash, zsh, fish and elvish, which
/// CI installs.
fn shell_installed(shell: &str, unchecked: &str) -> bool {
    let found = installed(shell);
    if !found {
        skip(&format!(
            "{shell} is not installed; {unchecked} was not checked"
        ));
    }
    found
}

/// Runs `shell args...` in the repository and returns its stdout; fails on any stderr.
#[track_caller]
fn shell(shell: &str, args: &[&str]) -> String {
    let output = Command::new(shell)
        .args(args)
        .current_dir(repository())
        .env("HOME", std::env::temp_dir())
        .output()
        .unwrap_or_else(|e| panic!("run {shell}: {e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stderr.trim().is_empty(),
        "{shell} {args:?} failed ({}):\n{stderr}",
        output.status
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_bash_completion_loads_and_completes_commands_and_options() {
    let script = "source completions/sticky.bash || exit 1
        complete -p sticky
        COMP_WORDS=(sticky th); COMP_CWORD=1; _sticky sticky th sticky; echo \"${COMPREPLY[*]}\"
        COMP_WORDS=(sticky doctor --j); COMP_CWORD=2; _sticky sticky --j doctor
        echo \"${COMPREPLY[*]}\"";
    let out = shell("bash", &["--norc", "--noprofile", "-c", script]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].contains("_sticky") && lines[0].ends_with("sticky"),
        "{out}"
    );
    assert_eq!(lines[1], "threads", "{out}");
    assert_eq!(lines[2], "--json", "{out}");
}

#[test]
fn the_zsh_completion_loads_and_registers_itself() {
    if !shell_installed("zsh", "its completion script") {
        return;
    }
    let dump = std::env::temp_dir().join(format!("sticky-zcompdump-{}", std::process::id()));
    let script = format!(
        "autoload -Uz compinit && compinit -u -d {} && source completions/_sticky && \
         print -r -- ${{_comps[sticky]}} && (( $+functions[_sticky] )) && print defined",
        dump.display()
    );
    let out = shell("zsh", &["-f", "-c", &script]);
    let _ = std::fs::remove_file(dump);
    assert_eq!(out, "_sticky\ndefined\n");
}

#[test]
fn the_fish_completion_loads_and_completes_commands_and_options() {
    if !shell_installed("fish", "its completion script") {
        return;
    }
    let out = shell(
        "fish",
        &[
            "--no-config",
            "-c",
            "source completions/sticky.fish; complete -C 'sticky th'; complete -C 'sticky log --js'",
        ],
    );
    assert!(out.contains("threads\t"), "{out}");
    assert!(out.contains("--json\t"), "{out}");
}

#[test]
fn the_elvish_completion_loads_and_completes_commands_and_options() {
    if !shell_installed("elvish", "its completion script") {
        return;
    }
    // `edit:` exists only in an interactive elvish; a namespace standing in for it takes the
    // completer the script registers, which is then asked what it completes.
    let script = "var edit = (ns [&completion:=(ns [&arg-completer=[&]]) \
                                  &complex-candidate~={|text &display=''| put $text}])
        var completer = '$edit:completion:arg-completer[sticky]'
        var asked = \"\\n\"$completer' sticky th | to-lines; echo ==; '$completer' sticky log --js | to-lines'
        eval &ns=(ns [&edit:=$edit]) (slurp < completions/sticky.elv)$asked";
    let out = shell("elvish", &["-norc", "-c", script]);
    let (commands, log) = out.split_once("==\n").expect("two completions");
    assert!(commands.lines().any(|c| c == "threads"), "{out}");
    assert!(log.lines().any(|c| c == "--json"), "{out}");
}

/// PowerShell is not in Debian, so CI cannot install it: the README names its completion as
/// untested there, and the test runs where `pwsh` is installed.
#[test]
fn the_powershell_completion_loads_where_installed() {
    if !installed("pwsh") {
        skip_untested("pwsh is not installed; the PowerShell completion was not loaded");
        return;
    }
    shell(
        "pwsh",
        &[
            "-NoProfile",
            "-NonInteractive",
            "-Command",
            ". ./completions/_sticky.ps1",
        ],
    );
}

/// Runs this test binary's test `name` alone, with `PATH` emptied (so no shell is found) and
/// `vars` set; returns whether it passed and its output.
fn run_alone_without_shells(name: &str, vars: &[(&str, &std::ffi::OsStr)]) -> (bool, String) {
    let exe = std::env::current_exe().expect("this test binary");
    let output = Command::new(exe)
        .args(["--exact", name, "--test-threads=1", "--nocapture"])
        .env("PATH", "/nonexistent")
        .env_remove("CI")
        .env_remove(crate::support::skip::SKIP_LOG)
        .envs(vars.iter().copied())
        .output()
        .expect("run the test binary");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

#[test]
fn a_missing_shell_is_a_counted_skip_and_fails_under_ci() {
    let test = "ux::the_elvish_completion_loads_and_completes_commands_and_options";
    let dir = tempfile::tempdir().expect("a temp dir");
    let log = dir.path().join("skipped");
    let (passed, output) =
        run_alone_without_shells(test, &[(crate::support::skip::SKIP_LOG, log.as_os_str())]);
    assert!(passed, "{output}");
    let logged = std::fs::read_to_string(&log).expect("the skip is logged");
    assert!(
        logged.starts_with(&format!("{test}\telvish is not installed")),
        "{logged}"
    );

    let (passed, output) = run_alone_without_shells(test, &[("CI", "1".as_ref())]);
    assert!(!passed, "under CI a promised test may not skip: {output}");
    assert!(
        output.contains("under CI nothing the README promises may skip"),
        "{output}"
    );
}

#[test]
fn help_output_matches_the_committed_snapshots() {
    let env = TestEnv::new();
    let dir = repository().join("tests/snapshots/help");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("the help snapshots are committed") {
        let path = entry.expect("read the snapshot directory").path();
        let name = path.file_stem().and_then(|s| s.to_str()).expect("a name");
        let mut args: Vec<&str> = name.split('-').skip(1).collect();
        args.push("--help");
        let help = env.ok(&args);
        let expected = std::fs::read_to_string(&path).expect("read a snapshot");
        assert!(
            help.stdout == expected,
            "`sticky {}` differs from {}; if the change is intended, run `cargo run --example \
             generate` and commit the result\n--- got ---\n{}",
            args.join(" "),
            path.display(),
            help.stdout
        );
        checked += 1;
    }
    assert!(checked >= 11, "only {checked} snapshots");
    assert!(
        !env.project.join(".sticky").exists(),
        "--help touches nothing"
    );
}

// --- JSON schemas ---------------------------------------------------------------------------

#[test]
fn status_and_log_json_keep_their_schema() {
    let env = history();
    let status = env.status_json();
    assert_keys(
        &status,
        &[
            "project",
            "database",
            "found",
            "thread",
            "session",
            "last_turn",
            "vault",
            "ledger",
            "context",
        ],
    );
    assert_keys(&status["session"], &with(SESSION_KEYS, &["turns"]));
    for totals in ["session", "conversation"] {
        assert_keys(
            &status["ledger"][totals],
            &[
                "turns",
                "cost_usd",
                "input_tokens",
                "output_tokens",
                "cached_tokens",
            ],
        );
    }
    assert_keys(
        &status["context"],
        &["tokens", "window", "percent", "threshold", "suggest_carry"],
    );
    assert_keys(&status["last_turn"], TURN_KEYS);
    assert_keys(&status["vault"], VAULT_KEYS);
    assert_keys(
        &status["vault"]["newest"],
        &["agent", "session", "copied_at"],
    );

    let log = env.log_json();
    assert_keys(&log, &["thread", "sessions"]);
    for session in log["sessions"].as_array().expect("sessions") {
        assert_keys(session, &with(SESSION_KEYS, &["turns"]));
        for turn in session["turns"].as_array().expect("turns") {
            assert_keys(turn, &with(TURN_KEYS, &["restored"]));
        }
    }
}

#[test]
fn sessions_lists_the_lineage_of_the_conversation() {
    let env = history();
    let json = env.ok(["sessions", "--json"]).json();
    assert_keys(&json, &["thread", "sessions"]);
    assert_eq!(json["thread"], "main");
    let sessions = json["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 2, "{json}");
    for session in sessions {
        assert_keys(session, &with(SESSION_KEYS, &["turns"]));
        assert_eq!(session["turns"], 1, "{json}");
    }
    assert_eq!(sessions[1]["rotated_from"], sessions[0]["id"]);
    assert_eq!(sessions[1]["rotation_reason"], "new");
    assert!(sessions[0]["ended_at"].is_i64() && sessions[1]["ended_at"].is_null());

    let text = env.ok(["sessions"]);
    let first = sessions[0]["agent_session_id"].as_str().expect("an id");
    assert!(text.stdout.contains(&first[..8]), "{}", text.describe());
    let id = sessions[0]["id"].as_i64().expect("an id");
    assert!(
        text.stdout.contains(&format!("replaced #{id} (new)")),
        "{}",
        text.describe()
    );
    text.assert_clean_stdout();

    let review = env.ok(["-t", "review", "sessions", "--json"]).json();
    assert_eq!(review["sessions"].as_array().map(Vec::len), Some(1));
}

#[test]
fn threads_lists_every_conversation_with_its_live_session() {
    let env = history();
    let json = env.ok(["threads", "--json"]).json();
    assert_keys(&json, &["current", "threads"]);
    assert_eq!(json["current"], "main");
    let threads = json["threads"].as_array().expect("threads");
    let names: Vec<&str> = threads.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["main", "review"]);
    for thread in threads {
        assert_keys(
            thread,
            &[
                "name",
                "created_at",
                "session",
                "sessions",
                "turns",
                "last_activity",
                "current",
                "branch",
            ],
        );
        assert_keys(&thread["session"], SESSION_KEYS);
        assert!(thread["last_activity"].as_i64() >= thread["created_at"].as_i64());
    }
    assert_eq!(
        (&threads[0]["sessions"], &threads[0]["turns"]),
        (&2.into(), &2.into())
    );
    assert_eq!(
        (&threads[1]["sessions"], &threads[1]["turns"]),
        (&1.into(), &1.into())
    );
    assert_eq!(
        (&threads[0]["current"], &threads[1]["current"]),
        (&true.into(), &false.into())
    );

    let text = env.sticky(["threads"]).env("STICKY_THREAD", "review").run();
    text.assert_success().assert_clean_stdout();
    let marked: Vec<&str> = text.stdout.lines().filter(|l| l.starts_with('*')).collect();
    assert_eq!(marked.len(), 1, "{}", text.describe());
    assert!(marked[0].contains("review"), "{}", text.describe());
}

#[test]
fn reports_of_a_project_without_state_are_empty_and_create_nothing() {
    let env = TestEnv::new();
    let threads = env.ok(["threads", "--json"]).json();
    assert_eq!(threads["threads"], serde_json::json!([]));
    let sessions = env.ok(["sessions", "--json"]).json();
    assert_eq!(sessions["sessions"], serde_json::json!([]));
    let prompt = env.ok(["prompt"]);
    assert_eq!(prompt.stdout, "");
    let doctor = env.ok(["doctor", "--json"]).json();
    assert_eq!(doctor["next_turn"]["action"], "start");
    assert_eq!(doctor["database"]["exists"], false);
    assert!(!env.project.join(".sticky").exists());
}

// --- config ---------------------------------------------------------------------------------

#[test]
fn config_shows_each_setting_and_where_it_came_from() {
    let env = TestEnv::new();
    let bin = env.script("bin/claude-from-config", "#!/bin/sh\necho configured\n");
    let file = write_config(
        &env,
        &format!(
            "default_agent = \"claude\"\n[agents.claude]\nbin = \"{}\"\nargs = [\"--x\", \
             \"1\"]\nenv = {{ ANTHROPIC_MODEL = \"sonnet\", ANTHROPIC_API_KEY = \"sk-secret\" \
             }}\n",
            bin.display()
        ),
    );
    let file = file.to_str().expect("utf-8 path");

    let json = env.ok(["config", "--json"]).json();
    assert_keys(
        &json,
        &[
            "config_file",
            "agent",
            "model",
            "thread",
            "project",
            "database",
            "agents",
            "vault",
            "carry_on_change",
            "context_threshold",
            "stdin",
        ],
    );
    assert_keys(&json["vault"], SETTING_KEYS);
    assert_keys(&json["config_file"], &with(SETTING_KEYS, &["exists"]));
    assert_keys(&json["project"], &with(SETTING_KEYS, &["found"]));
    assert_eq!(json["carry_on_change"]["value"], "off");
    assert_eq!(json["context_threshold"]["value"], 80);
    for key in [
        "agent",
        "model",
        "thread",
        "database",
        "carry_on_change",
        "context_threshold",
        "stdin",
    ] {
        assert_keys(&json[key], SETTING_KEYS);
    }
    assert_eq!(json["config_file"]["value"], file);
    assert_eq!(json["config_file"]["exists"], true);
    assert_eq!(
        json["agent"],
        serde_json::json!({"value": "claude", "source": "config", "origin": file})
    );
    assert_eq!(
        (&json["model"]["value"], &json["model"]["source"]),
        (&Value::Null, &"default".into())
    );
    assert_eq!(json["thread"]["source"], "default");
    assert_eq!(json["database"]["source"], "default");
    assert_eq!(
        json["project"]["value"],
        env.project.to_str().expect("utf-8 path")
    );
    let claude = &json["agents"][0];
    assert_keys(
        claude,
        &["name", "built_in", "program", "error", "args", "env"],
    );
    assert_keys(&claude["program"], SETTING_KEYS);
    assert_eq!(
        claude["program"]["value"],
        bin.to_str().expect("utf-8 path")
    );
    assert_eq!(claude["program"]["source"], "config");
    assert_eq!(claude["args"], serde_json::json!(["--x", "1"]));
    assert_eq!(
        claude["env"],
        serde_json::json!({"ANTHROPIC_MODEL": "sonnet", "ANTHROPIC_API_KEY": "<hidden>"})
    );
    let text = env.ok(["config"]);
    assert!(text.stdout.contains(file), "{}", text.describe());
    assert!(!text.stdout.contains("sk-secret"), "{}", text.describe());
}

#[test]
fn a_relative_bin_is_the_one_beside_the_configuration_never_the_current_directorys() {
    let env = TestEnv::new();
    let config = write_config(&env, "[agents.claude]\nbin = \"./agents/claude\"\n");
    let beside = config.parent().expect("a directory").join("agents/claude");
    let trap = env.project.join("agents/claude");
    for (path, marker) in [(&beside, "configured-ran"), (&trap, "project-ran")] {
        std::fs::create_dir_all(path.parent().expect("a directory")).expect("create a dir");
        let body = format!(
            "#!/bin/sh\ntouch '{}'\nexec '{}' \"$@\"\n",
            env.scratch.join(marker).display(),
            crate::support::fake_claude().display()
        );
        std::fs::write(path, body).expect("write a wrapper");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .expect("make it executable");
    }
    env.turn("which one runs?");
    assert!(
        env.scratch.join("configured-ran").exists(),
        "the configured one ran"
    );
    assert!(
        !env.scratch.join("project-ran").exists(),
        "the project's ./agents/claude never runs"
    );
    let json = env.ok(["config", "--json"]).json();
    assert_eq!(
        json["agents"][0]["program"]["value"],
        beside.to_str().expect("utf-8 path")
    );
}

#[test]
fn a_configuration_named_by_sticky_config_must_exist() {
    let env = TestEnv::new();
    let missing = env.scratch.join("no-such-config.toml");
    for args in [&["hi"][..], &["config"], &["status"]] {
        env.sticky(args)
            .env("STICKY_CONFIG", &missing)
            .run()
            .assert_code(2)
            .assert_stderr_contains(&format!(
                "STICKY_CONFIG names {}, which does not exist",
                missing.display()
            ));
    }
    assert!(env.agent_runs().is_empty(), "no agent ran");
    // The default place may hold no file: that is an empty configuration, and `config` says so.
    let shown = env.ok(["config"]);
    assert!(shown.stdout.contains("not found"), "{}", shown.describe());
    // An empty STICKY_CONFIG is unset, as shells and CI files leave variables empty.
    env.sticky(["config"])
        .env("STICKY_CONFIG", "")
        .run()
        .assert_success();
}

#[test]
fn a_configuration_others_may_write_stops_every_command_before_anything_runs() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let marker = env.scratch.join("ran");
    let planted = env.script(
        "planted",
        &format!("#!/bin/sh\ntouch {}\n", marker.display()),
    );
    let file = write_config(
        &env,
        &format!("[agents.claude]\nbin = \"{}\"\n", planted.display()),
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    for args in [&["hi"][..], &["config"], &["status"]] {
        env.sticky(args)
            .run()
            .assert_code(2)
            .assert_stderr_contains(&format!(
                "refusing the configuration {}: it can be written by other users (mode 0666)",
                file.display()
            ))
            .assert_stderr_contains(&format!("chmod go-w {}", file.display()));
    }
    // STICKY_CONFIG is held to the same rule.
    env.sticky(["hi"])
        .env("STICKY_CONFIG", &file)
        .run()
        .assert_code(2);
    assert!(!marker.exists(), "the planted program never ran");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    env.ok(["config"]);
}

/// Review 19, L3: a configuration directory others in its group may write is refused as a
/// configuration file they may write is: a member could rename its `bin/` and put a program of
/// their own where a relative `bin` is taken from. So is a group-writable directory below it
/// that holds the relative `bin`, each with the `chmod g-w` that closes it.
#[test]
fn a_configuration_or_bin_directory_its_group_may_write_stops_every_command() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    };
    let env = TestEnv::new();
    let marker = env.scratch.join("ran");
    let file = write_config(&env, "[agents.claude]\nbin = \"bin/claude\"\n");
    mode(&file, 0o600);
    let dir = file.parent().expect("the config's directory").to_owned();
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("create bin/");
    std::fs::write(
        bin.join("claude"),
        format!("#!/bin/sh\ntouch {}\n", marker.display()),
    )
    .expect("write the program");
    mode(&bin.join("claude"), 0o755);
    let refused = |args: &[&str], dir: &std::path::Path, what: &str| {
        env.sticky(args)
            .run()
            .assert_code(2)
            .assert_stderr_contains(&format!(
                "{what} {}, and others in its group",
                dir.display()
            ))
            .assert_stderr_contains("(mode 0775)")
            .assert_stderr_contains(&format!("chmod g-w {}", dir.display()));
    };
    mode(&dir, 0o775);
    for args in [&["hi"][..], &["agents"], &["status"]] {
        refused(args, &dir, "it is in");
    }
    mode(&dir, 0o755);
    mode(&bin, 0o775);
    for args in [&["hi"][..], &["agents"], &["status"]] {
        refused(args, &bin, "the `bin` of agent claude is in");
    }
    assert!(!marker.exists(), "the program never ran");
    mode(&bin, 0o755);
    env.ok(["status"]);
}

#[test]
fn a_missing_program_error_names_what_chose_it() {
    let env = TestEnv::new();
    let gone = env.scratch.join("no-such-claude");
    let file = write_config(
        &env,
        &format!("[agents.claude]\nbin = \"{}\"\n", gone.display()),
    );
    let from_config = format!(
        "`{}` (from `bin` of agent claude in {}) was not found; install it, or change `bin` in {}",
        gone.display(),
        file.display(),
        file.display()
    );
    for args in [&["hello"][..], &["doctor"], &["agents"]] {
        let output = env.sticky(args).run();
        assert!(
            output.stderr.contains(&from_config) || output.stdout.contains(&from_config),
            "{args:?}: {}",
            output.describe()
        );
        assert!(
            !format!("{}{}", output.stdout, output.stderr).contains("from STICKY_CLAUDE_BIN"),
            "{args:?}: {}",
            output.describe()
        );
    }
    env.sticky(["hello"]).run().assert_code(72);

    // The variable, when set, is named instead; without either, PATH is.
    let output = env.sticky(["hello"]).env("STICKY_CLAUDE_BIN", &gone).run();
    output.assert_code(72);
    output.assert_stderr_contains(&format!("`{}` (from STICKY_CLAUDE_BIN)", gone.display()));
    std::fs::remove_file(&file).expect("remove the config");
    let output = env.sticky(["hello"]).env("PATH", "/usr/bin:/bin").run();
    output.assert_code(72);
    output.assert_stderr_contains("`claude` (looked up on PATH) was not found");
}

#[test]
fn flags_beat_the_environment_which_beats_the_config_file() {
    let mut env = TestEnv::new();
    let bin = env.script("bin/claude-from-config", "#!/bin/sh\necho configured\n");
    write_config(
        &env,
        &format!(
            "default_agent = \"claude\"\n[agents.claude]\nbin = \"{}\"\n",
            bin.display()
        ),
    );
    let state_db = env.scratch.join("state.db");
    env.set_var("STICKY_AGENT", "claude")
        .set_var("STICKY_THREAD", "from-env")
        .set_var("STICKY_MODEL", "env-model")
        .set_var("STICKY_DB", &state_db)
        .set_var("STICKY_CLAUDE_BIN", crate::support::fake_claude());
    let json = env.ok(["config", "--json"]).json();
    assert_eq!(json["agent"]["source"], "environment");
    assert_eq!(json["agent"]["origin"], "STICKY_AGENT");
    assert_eq!(
        json["thread"],
        serde_json::json!({"value": "from-env", "source": "environment", "origin": "STICKY_THREAD"})
    );
    assert_eq!(json["model"]["value"], "env-model");
    assert_eq!(json["database"]["source"], "environment");
    assert_eq!(json["agents"][0]["program"]["source"], "environment");
    assert_eq!(json["agents"][0]["program"]["origin"], "STICKY_CLAUDE_BIN");

    let json = env
        .ok([
            "config",
            "--json",
            "-a",
            "claude",
            "-m",
            "flag-model",
            "-t",
            "flag",
        ])
        .json();
    for (key, value) in [
        ("agent", "claude"),
        ("model", "flag-model"),
        ("thread", "flag"),
    ] {
        assert_eq!(json[key]["value"], value, "{json}");
        assert_eq!(json[key]["source"], "flag", "{json}");
    }
    let text = env.ok(["config"]);
    assert!(text.stdout.contains("STICKY_THREAD"), "{}", text.describe());
}

#[test]
fn config_and_doctor_show_the_agent_and_model_the_next_turn_uses() {
    let env = TestEnv::new();
    let file = write_config(&env, "default_agent = \"claude\"\n");
    let file = file.to_str().expect("utf-8 path");
    let json = env.ok(["config", "--json"]).json();
    assert_eq!(
        json["agent"],
        serde_json::json!({"value": "claude", "source": "config", "origin": file})
    );

    // A conversation on codex keeps codex, whatever the configured default says.
    env.ok(["-a", "codex", "-m", "gpt-test", "hello"]);
    let session = serde_json::json!({"value": "codex", "source": "session", "origin": "the live session's agent"});
    let model = serde_json::json!({"value": "gpt-test", "source": "session", "origin": "the live session's model"});
    for command in ["config", "doctor"] {
        let json = env.ok([command, "--json"]).json();
        assert_eq!(json["agent"], session, "{command}: {json}");
        if command == "config" {
            assert_eq!(json["model"], model, "{json}");
        } else {
            assert_eq!(json["next_turn"]["agent"], "codex", "{json}");
            assert_eq!(json["next_turn"]["model"], "gpt-test", "{json}");
        }
    }
    let text = env.ok(["config"]).stdout;
    assert!(
        text.contains("agent        codex  (the live session's agent)"),
        "{text}"
    );
    assert!(
        text.contains("model        gpt-test  (the live session's model)"),
        "{text}"
    );
    env.ok(["hello again"]);
    let status = env.status_json();
    assert_eq!(
        (&status["session"]["agent"], &status["session"]["turns"]),
        (&"codex".into(), &2.into()),
        "the next turn did use codex: {status}"
    );

    // Asking for another agent is what the next turn uses, with that agent's default model.
    let json = env.ok(["config", "--json", "-a", "claude"]).json();
    assert_eq!(json["agent"]["value"], "claude");
    assert_eq!(json["agent"]["source"], "flag");
    assert_eq!(json["model"]["value"], Value::Null);
    // Another thread has no session yet: the configured default applies there.
    let json = env.ok(["-t", "other", "config", "--json"]).json();
    assert_eq!(json["agent"]["source"], "config");
}

#[test]
fn the_program_is_found_on_path_without_override() {
    let env = TestEnv::new();
    let json = env.ok(["config", "--json"]).json();
    let program = &json["agents"][0]["program"];
    assert_eq!(program["source"], "path");
    assert_eq!(
        program["value"],
        crate::support::fake_claude().to_str().expect("utf-8")
    );
    assert_eq!(json["config_file"]["exists"], false);
    assert_eq!(json["agent"]["source"], "default");
}

#[test]
fn an_invalid_config_file_is_an_error_with_its_line_and_key() {
    let env = TestEnv::new();
    let file = write_config(
        &env,
        "default_agent = \"claude\"\n\n[agents.claude]\nbinn = \"x\"\n",
    );
    for args in [&["config"][..], &["status"], &["a prompt"]] {
        let output = env.sticky(args).run();
        output
            .assert_code(2)
            .assert_stderr_contains("invalid configuration")
            .assert_stderr_contains(file.to_str().expect("utf-8 path"))
            .assert_stderr_contains("line 4")
            .assert_stderr_contains("binn");
        assert_eq!(output.stdout, "", "{}", output.describe());
    }
    assert!(
        env.agent_runs().is_empty(),
        "no agent runs on a broken configuration"
    );
}

#[test]
fn an_unknown_agent_is_refused_with_the_known_ones() {
    let env = TestEnv::new();
    for args in [&["-a", "nope", "hi"][..], &["config", "-a", "nope"]] {
        let output = env.sticky(args).run();
        output
            .assert_code(2)
            .assert_stderr_contains("unknown agent `nope`; known agents: claude, codex");
    }
    // doctor reports it with the rest, and exits as the turn would.
    let doctor = env.sticky(["doctor", "-a", "nope"]).run();
    doctor.assert_code(2);
    assert!(
        doctor
            .stdout
            .contains("problems:\n  - unknown agent `nope`; known agents: claude, codex"),
        "{}",
        doctor.describe()
    );
    assert!(env.agent_runs().is_empty());
}

#[test]
fn options_of_every_command_may_come_before_it_without_becoming_a_prompt() {
    let env = history();
    let status = env.ok(["-t", "review", "--json", "status"]).json();
    assert_eq!(status["thread"], "review");
    let runs = env.agent_runs().len();
    env.ok(["--json", "threads"]);
    assert_eq!(env.agent_runs().len(), runs, "no turn ran");
    // Options of a turn work before the command that takes them, as after it.
    env.ok(["-m", "other", "new", "x"]);
    assert_eq!(
        env.last_agent_run().flag("--model").as_deref(),
        Some("other")
    );
    assert_eq!(env.status_json()["session"]["model"], "other");
    env.ok(["new", "-m", "third", "y"]);
    assert_eq!(
        env.last_agent_run().flag("--model").as_deref(),
        Some("third")
    );
    let runs = env.agent_runs().len();
    env.sticky(["-m", "other", "status"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("--model does not apply to `sticky status`");
    assert_eq!(env.agent_runs().len(), runs, "no turn ran");
}

// --- doctor ---------------------------------------------------------------------------------

#[test]
fn doctor_explains_the_next_turn_and_finds_a_lost_transcript() {
    let env = TestEnv::new();
    let session = env.turn("hello").session;
    let json = env.ok(["doctor", "--json"]).json();
    assert_keys(
        &json,
        &[
            "project",
            "database",
            "config_file",
            "thread",
            "session",
            "last_turn",
            "turn_running",
            "next_turn",
            "agent",
            "program",
            "transcript",
            "problems",
            "exit_code",
            "vault",
        ],
    );
    assert_keys(
        &json["vault"],
        &with(VAULT_KEYS, &["session_copied_at", "warning"]),
    );
    assert_keys(&json["project"], &with(SETTING_KEYS, &["found"]));
    assert_keys(&json["database"], &with(SETTING_KEYS, &["exists"]));
    assert_keys(&json["thread"], &with(SETTING_KEYS, &["exists"]));
    assert_keys(&json["agent"], SETTING_KEYS);
    assert_keys(
        &json["program"],
        &with(
            SETTING_KEYS,
            &["version", "tested_version", "newer_than_tested", "error"],
        ),
    );
    assert_keys(&json["next_turn"], &["action", "agent", "model", "reason"]);
    assert_keys(&json["transcript"], &["path", "exists"]);
    assert_keys(&json["session"], &with(SESSION_KEYS, &["turns"]));
    assert_keys(&json["last_turn"], TURN_KEYS);
    assert_eq!(json["project"]["found"], "nearest directory with .sticky/");
    assert_eq!(json["session"]["agent_session_id"], session.as_str());
    assert_eq!(json["next_turn"]["action"], "resume");
    assert_eq!(json["turn_running"], false);
    assert_eq!(json["agent"]["source"], "session");
    assert_eq!(json["transcript"]["exists"], true);
    assert_eq!(
        json["transcript"]["path"],
        env.transcript(&session).to_str().expect("utf-8")
    );
    assert_eq!(
        (&json["problems"], &json["exit_code"]),
        (&serde_json::json!([]), &0.into())
    );

    let rotate = env.ok(["doctor", "--json", "-m", "other"]).json();
    assert_eq!(rotate["next_turn"]["action"], "rotate");
    assert_eq!(rotate["next_turn"]["reason"], "model-change");

    std::fs::remove_file(env.transcript(&session)).expect("remove the transcript");
    // Without sticky's copy either (tests/it/vault.rs: with it, the next turn restores it).
    std::fs::remove_dir_all(env.project.join(".sticky/sticky.db.vault")).expect("no copy");
    let lost = env.sticky(["doctor"]).run();
    lost.assert_code(73).assert_clean_stdout();
    assert!(
        lost.stdout.contains("no longer has the transcript"),
        "{}",
        lost.describe()
    );
    assert!(lost.stdout.contains(&session), "{}", lost.describe());
    let json = env.sticky(["doctor", "--json"]).run().json();
    assert_eq!(json["exit_code"], 73);
    assert_eq!(json["problems"][0]["exit_code"], 73);
    assert_keys(&json["problems"][0], &["message", "exit_code"]);
}

#[test]
fn doctor_reports_a_missing_agent_with_its_exit_code() {
    let mut env = TestEnv::new();
    env.without_fakes_on_path();
    let output = env.sticky(["doctor", "--json"]).run();
    output.assert_code(72);
    let json = output.json();
    assert_eq!(json["program"]["value"], Value::Null);
    assert!(
        json["program"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("not found")),
        "{json}"
    );
}

// --- prompt ---------------------------------------------------------------------------------

#[test]
fn prompt_prints_one_short_line_without_touching_agents_or_config() {
    let env = TestEnv::new();
    let session = env.turn("hello").session;
    let line = env.ok(["prompt"]);
    assert_eq!(line.stdout, format!("claude {} ok\n", &session[..8]));

    // It reads neither the configuration nor any agent: both broken, it still answers.
    write_config(&env, "this is not toml");
    let line = env
        .sticky(["prompt", "--json"])
        .env("STICKY_CLAUDE_BIN", "/nonexistent/claude")
        .run();
    line.assert_success();
    let json = line.json();
    assert_keys(
        &json,
        &["thread", "agent", "model", "agent_session_id", "status"],
    );
    assert_eq!(json["agent_session_id"], session.as_str());
    assert_eq!(
        env.agent_runs().len(),
        1,
        "the agent ran once, for the turn"
    );

    assert_eq!(env.ok(["-t", "other", "prompt"]).stdout, "");
}

/// The code block that follows `heading` in `docs/prompt.md`.
fn documented_snippet(heading: &str) -> String {
    let doc = std::fs::read_to_string(repository().join("docs/prompt.md")).expect("docs/prompt.md");
    let after = &doc[doc.find(heading).unwrap_or_else(|| panic!("no {heading}"))..];
    let start = after.find("```").expect("a code block") + 3;
    let body = &after[start..];
    let body = &body[body.find('\n').expect("a fence line") + 1..];
    body[..body.find("```").expect("a closing fence")].to_owned()
}

/// Runs `shell -c script` in the project with the env's environment and sticky on PATH.
#[track_caller]
fn in_shell(env: &TestEnv, shell_args: &[&str], script: &str) -> String {
    let template = env.sticky(Vec::<&str>::new()).command();
    let mut command = Command::new(shell_args[0]);
    command
        .args(&shell_args[1..])
        .arg(script)
        .current_dir(&env.project);
    for (key, value) in template.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_sticky"))
        .parent()
        .expect("a directory");
    let path = template
        .get_envs()
        .find(|(key, _)| *key == "PATH")
        .and_then(|(_, value)| value)
        .expect("the env sets PATH");
    let mut dirs = vec![bin_dir.to_owned()];
    dirs.extend(std::env::split_paths(path));
    command.env("PATH", std::env::join_paths(dirs).expect("a PATH"));
    let output = command.output().expect("run the shell");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stderr.is_empty(),
        "{shell_args:?}: {stderr}"
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_documented_prompt_snippets_work() {
    let env = TestEnv::new();
    let bash = documented_snippet("## bash");
    let outside = in_shell(
        &env,
        &["bash", "--norc", "-c"],
        &format!("{bash}\n__sticky_ps1"),
    );
    assert_eq!(outside, "", "nothing before the first turn");
    let session = env.turn("hello").session;
    let expected = format!(" (claude {} ok)", &session[..8]);
    let shown = in_shell(
        &env,
        &["bash", "--norc", "-c"],
        &format!("{bash}\n__sticky_ps1"),
    );
    assert_eq!(shown, expected);
    if shell_installed("zsh", "the documented zsh prompt") {
        let zsh = documented_snippet("## zsh");
        let shown = in_shell(
            &env,
            &["zsh", "-f", "-c"],
            &format!("{zsh}\nprint -rn -- ${{(e)PROMPT}}"),
        );
        assert!(shown.contains(&expected), "{shown}");
    }
}

// --- pipes and pagers -----------------------------------------------------------------------

/// Adds `count` turns to the live session of `main`, straight into the database.
fn add_turns(env: &TestEnv, count: usize) {
    let mut store = Store::open(&env.project.join(".sticky/sticky.db")).expect("open the store");
    store
        .immediate(|tx| {
            let thread = tx.ensure_thread("main")?;
            let live = tx.live_session(thread.id)?.expect("a live session");
            for n in 0..count {
                let prompt = format!("seeded prompt number {n} with some words to fill the line");
                tx.begin_turn(live.id, Some(&prompt), Mode::Headless, 1, "elsewhere")?;
            }
            Ok(())
        })
        .expect("seed turns");
}

#[test]
fn a_reader_that_stops_early_ends_a_listing_quietly() {
    let env = TestEnv::new();
    env.turn("hello");
    add_turns(&env, 3000);
    let mut command = env.sticky(["log"]).command();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sticky log");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("read one line");
    assert!(first.starts_with("session #1"), "{first}");
    drop(stdout); // `| head -1`
    let output = child.wait_with_output().expect("wait for sticky log");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stderr, "", "nothing on stderr");
}

#[test]
fn every_listing_exits_zero_on_a_closed_stdout() {
    let env = history();
    for args in [
        &["log"][..],
        &["sessions"],
        &["threads"],
        &["status"],
        &["agents"],
        &["config"],
        &["prompt"],
        &["status", "--json"],
        &["threads", "--json"],
    ] {
        // A pipe whose reader is gone before sticky writes a byte.
        let (reader, writer) = nix::unistd::pipe().expect("a pipe");
        drop(reader);
        let output = env
            .sticky(args)
            .command()
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("run sticky");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "sticky {args:?}: {stderr}");
        assert_eq!(stderr, "", "sticky {args:?}");
    }
}

#[test]
fn long_listings_are_paged_on_a_terminal_only() {
    let env = history();
    let received = env.scratch.join("paged.txt");
    let script = env.script(
        "pager",
        &format!(
            "#!/bin/sh\necho pager-ran\ncat > '{}'\n",
            received.display()
        ),
    );
    let pager = script.to_str().expect("utf-8 path");

    let piped = env.sticky(["log"]).env("PAGER", pager).run();
    piped.assert_success();
    assert!(
        piped.stdout.contains("first prompt"),
        "{}",
        piped.describe()
    );
    assert!(!received.exists(), "no pager when stdout is a pipe");

    for args in [&["log"][..], &["sessions"], &["threads"]] {
        let mut terminal = env.sticky(args).env("PAGER", pager).on_terminal();
        terminal.expect("pager-ran");
        assert_eq!(terminal.wait(), 0, "sticky {args:?}");
        let text = std::fs::read_to_string(&received).expect("the pager got the listing");
        assert!(text.contains("claude"), "sticky {args:?}: {text}");
        std::fs::remove_file(&received).expect("reset");
    }

    // PAGER=cat turns paging off; the text goes to the terminal itself.
    let mut terminal = env.sticky(["log"]).env("PAGER", "cat").on_terminal();
    terminal.expect("first prompt");
    assert_eq!(terminal.wait(), 0);
}

/// Whether `sticky args` on a terminal prints any escape sequence (with `NO_COLOR` or without).
fn terminal_contents_has_escape(env: &TestEnv, args: &[&str], no_color: bool) -> bool {
    // Colour needs a terminal that says it can show it.
    let mut run = env.sticky(args).env("TERM", "xterm-256color");
    if no_color {
        run = run.env("NO_COLOR", "1");
    }
    let mut terminal = run.on_terminal();
    terminal.expect("Exit codes");
    let text = terminal.contents();
    let _ = terminal.wait();
    text.contains('\u{1b}')
}

#[test]
fn help_on_a_terminal_is_styled_unless_no_color() {
    let env = TestEnv::new();
    assert!(
        terminal_contents_has_escape(&env, &["--help"], false),
        "styled by default"
    );
    assert!(
        !terminal_contents_has_escape(&env, &["--help"], true),
        "plain under NO_COLOR"
    );
}

#[test]
fn a_blank_model_or_a_misspelt_command_is_a_usage_error_and_no_turn() {
    let env = TestEnv::new();
    for args in [
        &["-m", "", "hi"][..],
        &["-m", "  ", "hi"],
        &["-m=--x", "hi"],
        &["statsu"],
    ] {
        env.sticky(args).run().assert_code(2);
    }
    env.sticky(["-m", "", "hi"])
        .run()
        .assert_stderr_contains("--model is empty");
    env.sticky(["hi"])
        .env("STICKY_MODEL", "-x")
        .run()
        .assert_code(2)
        .assert_stderr_contains("STICKY_MODEL \"-x\" starts with `-`");
    env.sticky(["statsu"]).run().assert_stderr_contains(
        "did you mean `sticky status`? to send \"statsu\" as a prompt use `sticky -p statsu`",
    );
    assert!(env.agent_runs().is_empty(), "no paid turn ran");
    // An empty STICKY_MODEL is unset; a command that uses no model ignores it.
    env.sticky(["status"])
        .env("STICKY_MODEL", "-x")
        .run()
        .assert_success();
    env.sticky(["-p", "statsu"])
        .env("STICKY_MODEL", "")
        .run()
        .assert_success();
    assert_eq!(env.last_agent_run().prompt(), "statsu");
    env.ok(["fix", "the", "status"]);
    assert_eq!(env.last_agent_run().prompt(), "fix the status");
}

#[test]
fn a_bad_model_or_wait_value_is_a_usage_error_before_anything_is_opened() {
    let env = TestEnv::new();
    env.sticky(["-m", "op\u{1}us", "hi"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("--model \"op\\u{1}us\" holds a control character");
    env.sticky(["hi"])
        .env("STICKY_MODEL", "opus\nrm -rf")
        .run()
        .assert_code(2)
        .assert_stderr_contains("STICKY_MODEL \"opus\\nrm -rf\" holds a control character");
    let wait = env.sticky(["--wait", "-1", "hi"]).run();
    wait.assert_code(2)
        .assert_stderr_contains("--wait takes a whole number of seconds, 0 or more");
    assert!(
        !wait.stderr.contains("-p '-1"),
        "not a hint about prompts: {}",
        wait.describe()
    );
    assert!(env.agent_runs().is_empty(), "no agent ran");
    assert!(
        !env.project.join(".sticky").exists(),
        "nothing was opened or created"
    );
}

#[test]
fn agent_arguments_that_fight_stickys_own_are_refused_before_anything_runs() {
    let env = TestEnv::new();
    let cases: &[(&[&str], &str)] = &[
        (&["hi", "--", "--resume", "x"], "`--resume`"),
        (&["hi", "--", "--model=opus"], "`--model=opus`"),
        (&["hi", "--", "-c"], "`-c`"),
        (
            &["hi", "--", "--output-format", "text"],
            "`--output-format`",
        ),
        (&["-a", "codex", "hi", "--", "resume", "--last"], "`resume`"),
        (&["-a", "gemini", "hi", "--", "-r", "latest"], "`-r`"),
    ];
    for (args, arg) in cases {
        let output = env.sticky(*args).run();
        output.assert_code(2).assert_stderr_contains(arg);
        let advice = if arg.contains("model") {
            "--model MODEL"
        } else if arg.contains("output") {
            "--json"
        } else {
            "sticky new"
        };
        output.assert_stderr_contains(advice);
    }
    assert!(env.agent_runs().is_empty(), "no agent ran");
    assert!(
        env.status_json()["session"].is_null(),
        "no session was started"
    );
    // The configuration's args are checked too.
    let config = write_config(&env, "[agents.claude]\nargs = [\"--session-id\", \"x\"]\n");
    env.sticky(["hi"])
        .env("STICKY_CONFIG", &config)
        .run()
        .assert_code(2)
        .assert_stderr_contains("the configuration's args for agent `claude` hold `--session-id`");
    std::fs::remove_file(&config).expect("remove the config");
    // Flags that only look alike pass.
    env.ok([
        "hi",
        "--",
        "--permission-mode",
        "acceptEdits",
        "--append-system-prompt",
        "-c is ok",
    ]);
}

// --- tested versions ------------------------------------------------------------------------

#[test]
fn agents_and_doctor_say_when_an_installed_agent_is_newer_than_the_tested_version() {
    // An agent answering `--version` as Claude Code does, one release past the tested one
    // (src/agent/tested.rs, the pin of .ci/install-agents).
    let mut env = TestEnv::new();
    let newer = env.script(
        "bin/claude-newer",
        "#!/bin/sh\n[ \"$1\" = --version ] && echo '2.1.333 (Claude Code)'\n",
    );
    env.set_var("STICKY_CLAUDE_BIN", &newer);
    let agents = env.ok(["agents", "--json"]).json();
    let claude = agents
        .as_array()
        .and_then(|list| list.iter().find(|agent| agent["name"] == "claude"))
        .cloned()
        .unwrap_or_else(|| panic!("no claude in {agents}"));
    assert_eq!(claude["version"], "2.1.333 (Claude Code)");
    assert_eq!(claude["tested_version"], "2.1.332");
    assert_eq!(claude["newer_than_tested"], true, "{claude}");
    let text = env.ok(["agents"]).stdout;
    assert!(
        text.contains("2.1.333 (Claude Code) (newer than tested 2.1.332)"),
        "{text}"
    );

    let doctor = env.ok(["doctor", "--json"]).json();
    assert_eq!(doctor["program"]["tested_version"], "2.1.332");
    assert_eq!(doctor["program"]["newer_than_tested"], true, "{doctor}");
    assert_eq!(doctor["exit_code"], 0, "a newer agent is no problem");
    let text = env.ok(["doctor"]).stdout;
    assert!(
        text.contains("2.1.333 (Claude Code), newer than the 2.1.332 sticky was tested with"),
        "{text}"
    );

    // The tested version itself (the fake's) is not flagged.
    env.set_var("STICKY_CLAUDE_BIN", crate::support::fake_claude());
    let doctor = env.ok(["doctor", "--json"]).json();
    assert_eq!(doctor["program"]["version"], "2.1.332 (Claude Code)");
    assert_eq!(doctor["program"]["newer_than_tested"], false, "{doctor}");
    assert!(!env.ok(["agents"]).stdout.contains("newer than tested"));
}

/// A count of one reads as one: doctor's session line, export's and import's summaries.
#[test]
fn counts_of_one_are_singular_in_doctor_export_and_import() {
    let env = TestEnv::new();
    env.turn("the only turn");
    let doctor = env.ok(["doctor"]);
    assert!(
        doctor.stdout.contains("(1 turn, last ok)"),
        "{}",
        doctor.stdout
    );
    let bundle = env.root().join("one.sticky");
    let bundle = bundle.to_str().expect("UTF-8");
    env.sticky(["export", "-o", bundle])
        .run()
        .assert_success()
        .assert_stderr_contains("(claude session ")
        .assert_stderr_contains(", 1 turn, 1 file, ");
    // Over the thread itself: its session is live in one thread only.
    env.sticky(["import", "--replace", bundle])
        .run()
        .assert_success()
        .assert_stderr_contains(", 1 turn) from ");
}

/// A `PAGER` that names a program not installed does not swallow the listing: it goes to the
/// terminal itself (through `sh`, whose 127 closed the pipe, it was lost with exit 0).
#[test]
fn a_pager_that_is_not_installed_leaves_the_listing_on_the_terminal() {
    let env = history();
    for pager in ["sticky-no-such-pager", "sticky-no-such-pager -R"] {
        let mut terminal = env.sticky(["log"]).env("PAGER", pager).on_terminal();
        terminal.expect("first prompt");
        assert_eq!(terminal.wait(), 0, "PAGER={pager}");
    }
}

/// `sticky | tee out` typed on a terminal: stdin is the terminal but stdout is not, so the
/// agent's UI cannot open. The message says that and how to give a prompt, rather than asking
/// a user who is on a terminal to run sticky on one.
#[test]
fn no_prompt_with_stdout_piped_names_stdout_as_the_problem() {
    if Command::new("script").arg("--version").output().is_err() {
        skip("util-linux `script` is not installed");
        return;
    }
    let env = TestEnv::new();
    let base = env.sticky(Vec::<&str>::new()).command();
    // stdout to a file: not a terminal, as a pipe is, and the shell keeps sticky's exit code.
    let line = format!("'{}' > answer.txt", env!("CARGO_BIN_EXE_sticky"));
    let mut command = Command::new("script");
    command.args(["-qec", &line, "/dev/null"]);
    command.current_dir(&env.project);
    for (key, value) in base.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let output = command.stdin(Stdio::null()).output().expect("run script");
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(text.contains("needs stdout on the terminal too"), "{text}");
    assert!(env.agent_runs().is_empty(), "the agent never ran");
}

#[test]
fn a_thread_given_to_a_command_that_uses_none_is_refused_not_dropped() {
    let env = TestEnv::new();
    for (args, says) in [
        (
            &["init", "-t", "x"][..],
            "-t does not apply to `sticky init`",
        ),
        (
            &["-t", "x", "agents"],
            "-t does not apply to `sticky agents`",
        ),
        (
            &["trust", "--thread", "x"],
            "-t does not apply to `sticky trust`",
        ),
        (
            &["import", "-t", "x", "conversation.sticky"],
            "-t does not apply to `sticky import`: --as NAME names the thread it adds",
        ),
    ] {
        env.sticky(args)
            .run()
            .assert_code(2)
            .assert_stderr_contains(says);
    }
    assert!(
        !env.project.join(".sticky").exists(),
        "init did nothing: {:?}",
        std::fs::read_dir(&env.project).map(Iterator::count)
    );
    // The variable is a default, not a request: it stays unused there.
    env.sticky(["init"])
        .env("STICKY_THREAD", "x")
        .run()
        .assert_success();
}

#[test]
fn an_unknown_option_tips_at_p_and_at_the_agents_arguments_not_at_a_value_after_dashes() {
    let env = TestEnv::new();
    for args in [&["--bogus"][..], &["new", "--bogus"]] {
        let output = env.sticky(args).run();
        output.assert_code(2);
        output.assert_stderr_contains(
            "tip: a prompt that starts with '-' goes after -p (sticky -p '--bogus ...'); an \
             argument for the agent goes after the prompt and -- (sticky PROMPT -- --bogus)",
        );
        assert!(
            !output.stderr.contains("as a value"),
            "{}",
            output.describe()
        );
    }
    assert!(env.agent_runs().is_empty(), "no turn ran");
}

#[test]
fn a_bin_under_the_home_directory_may_start_with_a_tilde() {
    // A TOML file is no shell, but `~/` is what a user writes for their home directory.
    let env = TestEnv::new();
    let bin = env.home.join("bin");
    std::fs::create_dir_all(&bin).expect("create ~/bin");
    std::os::unix::fs::symlink(crate::support::fake_claude(), bin.join("claude"))
        .expect("link the fake claude into ~/bin");
    write_config(&env, "[agents.claude]\nbin = \"~/bin/claude\"\n");
    env.ok(["hello"]);
    assert_eq!(env.agent_runs().len(), 1, "the agent in ~/bin ran");
    let shown = env.ok(["config", "--json"]).json();
    assert_eq!(
        shown["agents"][0]["program"]["value"],
        bin.join("claude").to_str().expect("utf-8 path")
    );

    // Another user's home is a shell's expansion sticky does not make.
    let file = write_config(&env, "[agents.claude]\nbin = \"~nobody/bin/claude\"\n");
    env.sticky(["hello"])
        .run()
        .assert_code(2)
        .assert_stderr_contains(&format!(
            "invalid configuration {}: `bin = \"~nobody/bin/claude\"` of agent claude names \
             another user's home",
            file.display()
        ));
    assert_eq!(env.agent_runs().len(), 1, "no other run");
}

#[cfg(unix)]
#[test]
fn a_configuration_that_is_no_regular_file_or_too_large_is_refused_at_once() {
    let env = TestEnv::new();
    let fifo = env.scratch.join("config.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    let large = env.scratch.join("large.toml");
    std::fs::write(&large, format!("# {}\n", "x".repeat(1 << 20))).expect("write");
    let cases = [
        (
            env.scratch.as_path(),
            "a directory, not a configuration file",
        ),
        (large.as_path(), "larger than 1 MiB"),
        (
            fifo.as_path(),
            "a FIFO (named pipe), not a configuration file",
        ),
        (Path::new("/dev/zero"), "a device, not a configuration file"),
    ];
    for (path, problem) in cases {
        // A FIFO nobody writes would hang the read: the run must end by itself.
        env.sticky(["config"])
            .env("STICKY_CONFIG", path)
            .run()
            .assert_code(2)
            .assert_stderr_contains(problem)
            .assert_stderr_contains(&path.display().to_string());
    }
    // The default place is checked the same way.
    let default = write_config(&env, "");
    std::fs::remove_file(&default).expect("remove it");
    nix::unistd::mkfifo(&default, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    env.sticky(["hello"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("a FIFO (named pipe), not a configuration file");
    assert!(env.agent_runs().is_empty(), "no agent ran");
}

/// A HOME that is no absolute path is a usage error naming HOME, for a command as for a turn:
/// the agents' files are found from it, and a relative one would look for them in the project.
#[test]
fn a_relative_home_is_refused_by_a_command_not_taken_as_the_project() {
    let env = TestEnv::new();
    env.turn("first");
    for args in [
        &["status"][..],
        &["export", "-o", "bundle.sticky"],
        &["trust"],
    ] {
        let run = env.sticky(args).env("HOME", "relative/home").run();
        run.assert_code(2)
            .assert_stderr_contains("HOME is relative/home, not an absolute path");
    }
}

/// An empty `STICKY_THREAD` or `STICKY_AGENT` (a CI file's `export STICKY_THREAD=$THREAD` with
/// none given) is taken as unset, as an empty `STICKY_MODEL` is: the turn goes on with thread
/// main and the default agent, and reports work (review 19, L1).
#[test]
fn empty_sticky_variables_are_taken_as_unset() {
    let env = TestEnv::new();
    let first = env.turn("one");
    let two = env
        .sticky(["two"])
        .env("STICKY_THREAD", "")
        .env("STICKY_AGENT", "")
        .env("STICKY_MODEL", "")
        .run();
    two.assert_success();
    assert_eq!(two.answer().session, first.session);
    for args in [&["status"][..], &["threads"], &["config"], &["doctor"]] {
        env.sticky(args)
            .env("STICKY_THREAD", "")
            .env("STICKY_AGENT", "")
            .run()
            .assert_success();
    }
    env.sticky(["new"])
        .env("STICKY_AGENT", "")
        .run()
        .assert_success();
}
