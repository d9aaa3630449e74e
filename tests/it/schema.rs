//! docs/json.md is the `--json` contract: every command's object is walked against its row of
//! the table there (each key printed is documented, each documented key printed), and the
//! error object of every command has the keys of its success object.

use std::collections::BTreeSet;

use clap::CommandFactory;
use serde_json::Value;
use sticky::cli::Cli;

use crate::support::TestEnv;

/// The rows of docs/json.md's table of commands: each row's command lines (the backquoted
/// names of its first cell) with the top-level keys its second cell documents.
fn documented() -> Vec<(Vec<String>, BTreeSet<String>)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json.md");
    let text = std::fs::read_to_string(path).expect("read docs/json.md");
    let table = text
        .split("\n## Commands\n")
        .nth(1)
        .expect("docs/json.md has a section `Commands`");
    table
        .lines()
        .skip_while(|line| !line.starts_with("| command |"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let names = quoted(cells[0]);
            (names, top_level_keys(cells[1].trim_end_matches(" |")))
        })
        .collect()
}

/// The backquoted spans of `text`.
fn quoted(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The keys a row documents at the top level of the object: the backquoted names outside
/// parentheses, leaving out what a `:` at the top level describes (a key's own keys, up to the
/// next `;`) and what follows a sentence's end. `agents` prints a list: its row is its items'.
fn top_level_keys(cell: &str) -> BTreeSet<String> {
    let cell = cell.trim_start_matches("a list: ");
    let cell = cell.split(". ").next().unwrap_or(cell);
    let mut keys = BTreeSet::new();
    let mut depth = 0_usize;
    let mut inside = false;
    let mut nested = false;
    let mut name = String::new();
    for c in cell.chars() {
        match c {
            '`' if inside => {
                inside = false;
                let is_key = name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
                if depth == 0 && !nested && is_key && !name.is_empty() {
                    keys.insert(std::mem::take(&mut name));
                }
                name.clear();
            }
            '`' => inside = true,
            c if inside => name.push(c),
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ':' if depth == 0 => nested = true,
            ';' if depth == 0 => nested = false,
            _ => {}
        }
    }
    keys
}

/// The top-level keys of a printed object (of a list's first item).
fn printed_keys(value: &Value) -> BTreeSet<String> {
    let object = match value {
        Value::Array(items) => items.first().expect("a list with an item"),
        object => object,
    };
    object
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .cloned()
        .collect()
}

/// A project with a turn, where `line` (a command line of docs/json.md, as `--json` runs it,
/// with what it needs besides: a prompt, a file, a thread) prints its object; `import` and
/// `forget` run in `elsewhere`, another HOME (a session is imported into one project of a
/// HOME, and this one keeps it).
fn run_documented(env: &TestEnv, elsewhere: &TestEnv, line: &str) -> Value {
    let bundle = env.root().join("scratch/bundle.sticky");
    let bundle = bundle.to_str().expect("a UTF-8 path");
    let sub = env.project_dir("sub");
    let sub = sub.to_str().expect("a UTF-8 path");
    let args: Vec<&str> = match line {
        "init" => vec!["-C", sub, "init"],
        "sticky --json PROMPT" => vec!["hello"],
        "new" => vec!["new", "again"],
        "fork" => vec!["fork", "side", "aside"],
        "threads --prune" => vec!["threads", "--prune", "--yes"],
        "export -o FILE" => vec!["export", "-o", bundle],
        "import" => vec!["import", bundle, "--as", "imported"],
        "forget" => vec!["-t", "imported", "forget", "--yes"],
        "search" => vec!["search", "hello"],
        // A command that needs nothing more runs as its row names it.
        line => line.split(' ').collect(),
    };
    let env = if matches!(line, "import" | "forget") {
        elsewhere
    } else {
        env
    };
    env.ok(std::iter::once("--json").chain(args.iter().copied()))
        .json()
}

#[test]
fn every_commands_json_has_the_keys_docs_json_md_documents() {
    let (env, elsewhere) = (TestEnv::new(), TestEnv::new());
    env.turn("first");
    let rows = documented();
    let mut covered = BTreeSet::new();
    // In the table's order, which is the order a project lives them: a bundle is exported
    // before it is imported, and the imported thread is the one forgotten.
    let order: Vec<&str> = rows
        .iter()
        .flat_map(|(names, _)| names.iter().map(String::as_str))
        .collect();
    for line in order.iter().copied() {
        let (_, documented) = rows
            .iter()
            .find(|(names, _)| names.iter().any(|name| name == line))
            .unwrap_or_else(|| panic!("docs/json.md has no row for `{line}`"));
        let printed = printed_keys(&run_documented(&env, &elsewhere, line));
        assert_eq!(
            &printed, documented,
            "`{line} --json` prints these keys; docs/json.md documents those"
        );
        covered.insert(line.split(' ').next().unwrap_or(line).to_owned());
    }
    // Every command has its row (`new` and `fork` share the turn's).
    for command in Cli::command().get_subcommands() {
        assert!(
            covered.contains(command.get_name()),
            "docs/json.md has no row for `{}`",
            command.get_name()
        );
    }
}

#[test]
fn every_commands_json_error_object_has_the_keys_of_its_success_object() {
    let env = TestEnv::new();
    env.turn("first");
    let bad_config = env.script("bad.toml", "default_agent = [\n");
    let bundle = env.root().join("scratch/bundle.sticky");
    let bundle = bundle.to_str().expect("a UTF-8 path");
    env.ok(["export", "-o", bundle]);
    let lines: &[&[&str]] = &[
        &["hello"],
        &["new", "again"],
        &["fork", "side"],
        &["status"],
        &["log"],
        &["show"],
        &["sessions"],
        &["threads"],
        &["threads", "--prune", "--yes"],
        &["config"],
        &["doctor"],
        &["export", "-o", bundle],
        &["relocate"],
        &["usage"],
        &["search", "first"],
        &["agents"],
        &["trust"],
    ];
    for args in lines {
        let json = || std::iter::once("--json").chain(args.iter().copied());
        let failed = env.sticky(json()).env("STICKY_CONFIG", &bad_config).run();
        assert_eq!(failed.code, Some(2), "{args:?}: {}", failed.describe());
        let error = failed.json();
        let success = env.ok(json()).json();
        let mut want = match &success {
            // A list (`agents`) fails with an object of its own.
            Value::Array(_) => BTreeSet::new(),
            object => printed_keys(object),
        };
        want.extend(["error".to_owned(), "exit_code".to_owned()]);
        assert_eq!(printed_keys(&error), want, "{args:?}: {error}");
    }
    // `import` and `forget` in another HOME: this one keeps the bundle's session.
    let elsewhere = TestEnv::new();
    let bad_config = elsewhere.script("bad.toml", "default_agent = [\n");
    for args in [
        &["import", bundle, "--as", "imported"][..],
        &["-t", "imported", "forget", "--yes"],
    ] {
        let json = || std::iter::once("--json").chain(args.iter().copied());
        let failed = elsewhere
            .sticky(json())
            .env("STICKY_CONFIG", &bad_config)
            .run();
        let mut want = printed_keys(&elsewhere.ok(json()).json());
        want.extend(["error".to_owned(), "exit_code".to_owned()]);
        assert_eq!(printed_keys(&failed.json()), want, "{args:?}");
    }
}

#[test]
fn the_docs_rows_are_read_as_their_top_level_keys() {
    let keys = |cell: &str| top_level_keys(cell).into_iter().collect::<Vec<_>>();
    assert_eq!(
        keys("`a`, `b` (with `c`), `d`: each `e`, `f`; `g` (`h`: `i`). Then `j`"),
        ["a", "b", "d", "g"]
    );
    assert_eq!(keys("a list: `name`, `found`"), ["found", "name"]);
    assert_eq!(quoted("`new`, `fork`"), ["new", "fork"]);
}
