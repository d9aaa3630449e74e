//! `sticky export --format markdown|json` (issue 27 point 5): the conversation as a document a
//! reviewer reads, from the database alone: each turn's prompt, answer, agent, model, time and
//! cost, the rotations and carries between sessions, secrets redacted unless `--no-redact`.

use std::fs;

use crate::support::TestEnv;

/// A key shaped like Anthropic's, and a value only the environment says is a secret.
const KEY: &str = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123";
const ENV_SECRET: &str = "pl41n-l00king-v4lue";

/// A thread with two sessions (a `new` with a model between them), a secret in a prompt and
/// in an answer, and an environment variable named like a secret.
fn conversation(env: &TestEnv) {
    env.turn(&format!("remember the key {KEY}"));
    env.sticky([format!("and the value {ENV_SECRET}").as_str()])
        .env("DEPLOY_TOKEN", ENV_SECRET)
        .run()
        .assert_success();
    env.sticky(["new", "--carry", "-m", "opus", "start over"])
        .run()
        .assert_success();
}

#[test]
fn markdown_shows_each_turn_and_the_rotation_with_secrets_redacted() {
    let env = TestEnv::new();
    conversation(&env);
    let out = env
        .sticky(["export", "--format", "markdown"])
        .env("DEPLOY_TOKEN", ENV_SECRET)
        .run();
    out.assert_success().assert_clean_stdout();
    let text = &out.stdout;
    assert!(
        text.starts_with("<!-- sticky export: markdown -->"),
        "{text}"
    );
    assert!(text.contains("# Thread `main`"), "{text}");
    assert!(text.contains("3 turns over 2 sessions"), "{text}");
    assert!(
        text.contains("## Session 1 · claude · the default model"),
        "{text}"
    );
    assert!(
        text.contains("## Session 2 · claude · model `opus`"),
        "{text}"
    );
    assert!(
        text.contains("It replaced session 1 (on `sticky new`)"),
        "the rotation is told: {text}"
    );
    assert!(
        text.contains("carried a recap of the conversation before it"),
        "the carry is told: {text}"
    );
    assert!(text.contains("> remember the key [redacted]"), "{text}");
    assert!(text.contains("> and the value [redacted]"), "{text}");
    assert!(
        text.contains("**Answer**\n\n> FAKE-CLAUDE turn=2"),
        "answers are quoted: {text}"
    );
    assert!(text.contains("$0.0"), "costs are shown: {text}");
    assert!(!text.contains(KEY) && !text.contains(ENV_SECRET), "{text}");
    // Three turns, in order, each once.
    let headings: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("### Turn "))
        .collect();
    assert_eq!(headings.len(), 3, "{text}");

    let kept = env
        .sticky(["export", "--format", "markdown", "--no-redact"])
        .env("DEPLOY_TOKEN", ENV_SECRET)
        .run();
    kept.assert_success();
    assert!(
        kept.stdout.contains(KEY) && kept.stdout.contains(ENV_SECRET),
        "--no-redact keeps them: {}",
        kept.stdout
    );
}

#[test]
fn json_is_one_document_of_the_same_conversation() {
    let env = TestEnv::new();
    conversation(&env);
    let out = env
        .sticky(["export", "--format", "json"])
        .env("DEPLOY_TOKEN", ENV_SECRET)
        .run();
    out.assert_success();
    let doc = out.json();
    assert_eq!(doc["format"], "sticky-conversation/1");
    assert_eq!(doc["thread"], "main");
    assert_eq!(doc["redacted"], true);
    let sessions = doc["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[1]["rotated_from"], sessions[0]["id"]);
    assert_eq!(sessions[1]["rotation_reason"], "new");
    assert_eq!(sessions[1]["model"], "opus");
    assert_eq!(sessions[1]["carried"], "recap");
    let turns = doc["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 3);
    assert_eq!(turns[0]["prompt"], "remember the key [redacted]");
    assert_eq!(turns[2]["session_id"], sessions[1]["id"]);
    assert!(
        turns[1]["answer"].as_str().is_some_and(
            |answer| answer.contains("FAKE-CLAUDE turn=2") && !answer.contains(ENV_SECRET)
        ),
        "{doc}"
    );
    assert_eq!(turns[1]["answer_cut"], false);
    assert_eq!(doc["totals"]["turns"], 3);
    let cost: f64 = turns.iter().filter_map(|t| t["cost_usd"].as_f64()).sum();
    let total = doc["totals"]["cost_usd"].as_f64().expect("a total cost");
    assert!((cost - total).abs() < 1e-9, "{cost} vs {total}");
    assert!(!out.stdout.contains(KEY));
}

#[test]
fn a_file_is_replaced_only_when_it_is_an_earlier_export() {
    let env = TestEnv::new();
    env.turn("first");
    let file = env.project.join("review.md");
    let path = file.to_str().expect("UTF-8");
    let first = env
        .sticky(["export", "--format", "markdown", "-o", path])
        .run();
    first
        .assert_success()
        .assert_stderr_contains("exported thread main (1 turn,");
    assert!(first.stdout.is_empty(), "{}", first.describe());
    env.turn("second");
    env.sticky(["export", "--format", "markdown", "-o", path])
        .run()
        .assert_success();
    let text = fs::read_to_string(&file).expect("the export");
    assert!(
        text.contains("> second"),
        "the newer export replaced it: {text}"
    );

    // A JSON export is not a markdown one, and a file of the user's is neither.
    let notes = env.project.join("notes.md");
    fs::write(&notes, "my notes\n").expect("notes");
    let refused = env
        .sticky([
            "export",
            "--format",
            "markdown",
            "-o",
            notes.to_str().unwrap(),
        ])
        .run();
    refused
        .assert_code(2)
        .assert_stderr_contains("is not a sticky markdown export");
    assert_eq!(fs::read_to_string(&notes).unwrap(), "my notes\n");
    let json = env.sticky(["export", "--format", "json", "-o", path]).run();
    json.assert_code(2)
        .assert_stderr_contains("is not a sticky JSON export");
    env.sticky(["export", "--format", "json", "--force", "-o", path])
        .run()
        .assert_success();
    assert!(fs::read_to_string(&file).unwrap().starts_with('{'));

    // Never into sticky's own state.
    let inside = env.project.join(".sticky/review.md");
    env.sticky([
        "export",
        "--format",
        "markdown",
        "-o",
        inside.to_str().unwrap(),
    ])
    .run()
    .assert_code(2)
    .assert_stderr_contains("sticky's own state, which a markdown export written there");
}

/// An environment variable that is not UTF-8 is no secret's: the export passes over it
/// rather than panicking (the third review's L1).
#[test]
fn an_environment_that_is_not_utf8_exports() {
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    env.turn("first");
    let out = env
        .sticky(["export", "--format", "markdown"])
        .env("NOT_UTF8", std::ffi::OsStr::from_bytes(b"\xff\xfe"))
        .env("DEPLOY_TOKEN", ENV_SECRET)
        .run();
    out.assert_success();
    assert!(out.stdout.contains("> first"), "{}", out.describe());
}

#[test]
fn the_json_report_names_the_format_and_the_document_size() {
    let env = TestEnv::new();
    env.turn("first");
    let file = env.project.join("review.json");
    let out = env
        .sticky([
            "--json",
            "export",
            "--format",
            "json",
            "-o",
            file.to_str().unwrap(),
        ])
        .run();
    out.assert_success();
    let report = out.json();
    assert_eq!(report["format"], "json");
    assert_eq!(report["turns"], 1);
    assert_eq!(
        report["bytes"].as_u64(),
        Some(fs::metadata(&file).unwrap().len())
    );
    // Without -o the report and the document would share stdout.
    env.sticky(["--json", "export", "--format", "markdown"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("give -o FILE");
}

#[test]
fn bad_requests_are_refused_plainly() {
    let env = TestEnv::new();
    env.sticky(["export", "--format", "markdown"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("has no session in this project to export");
    env.turn("first");
    env.sticky(["export", "--no-redact", "-o", "b.sticky"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("--no-redact is for --format markdown or json");
    env.sticky(["export", "--format", "pdf"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("markdown");
}

#[test]
fn an_answer_cannot_drive_the_terminal_or_break_the_document() {
    let env = TestEnv::new();
    env.sticky(["hello"])
        .env(
            "FAKE_CLAUDE_ANSWER",
            "```rust\nunclosed \x1b]52;c;aGk=\x07 fence",
        )
        .run()
        .assert_success();
    env.turn("after");
    let out = env.sticky(["export", "--format", "markdown"]).run();
    out.assert_success().assert_clean_stdout();
    assert!(
        out.stdout
            .contains("> ```rust\n> unclosed \\e]52;c;aGk=\\x07 fence\n\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("### Turn 2"), "{}", out.stdout);
}

/// A fork's document says where its history came from (issue 27: the lineage a reviewer reads).
#[test]
fn a_forks_document_names_the_thread_it_was_forked_from() {
    let env = TestEnv::new();
    let first = env.turn("the plan");
    env.sticky(["fork", "idea", "try another way"])
        .run()
        .assert_success();
    let markdown = env
        .sticky(["-t", "idea", "export", "--format", "markdown"])
        .run();
    markdown.assert_success();
    assert!(
        markdown.stdout.contains(&format!(
            "It was forked from thread `main` (agent session `{}`)",
            first.session
        )),
        "{}",
        markdown.stdout
    );
    let json = env
        .sticky(["-t", "idea", "export", "--format", "json"])
        .run();
    json.assert_success();
    let doc = json.json();
    assert_eq!(doc["sessions"][0]["forked_from"]["thread"], "main", "{doc}");
}

/// A conversation exported to read is no bundle: `import` says which export it is and where a
/// bundle comes from, and changes nothing (not "truncated or damaged").
#[test]
fn importing_an_export_to_read_names_it_and_the_way_to_a_bundle() {
    let env = TestEnv::new();
    env.turn("first");
    let other = env.root().join("other");
    fs::create_dir_all(&other).expect("a second project");
    env.git(&other, &["init", "-q"]);
    for format in ["markdown", "json"] {
        let file = env.scratch.join(format!("review.{format}"));
        let path = file.to_str().expect("UTF-8");
        env.sticky(["export", "--format", format, "-o", path])
            .run()
            .assert_success();
        env.sticky(["import", path])
            .current_dir(&other)
            .run()
            .assert_code(2)
            .assert_stderr_contains(&format!(
                "this is a conversation exported to read (`sticky export --format {format}`), \
                 not a bundle: import takes the file `sticky export -o FILE` writes"
            ));
        assert!(
            !other.join(".sticky").exists(),
            "{format}: nothing was made"
        );
    }
}
