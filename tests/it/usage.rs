//! Issue 27, point 3: `sticky usage` sums the turns' tokens and cost by day, thread, model...,
//! over this project or every project of the user's list (`--all`), counting a turn imported
//! into several threads once, and skipping a listed project that is gone or not the user's.

use std::path::Path;

use serde_json::Value;

use crate::support::TestEnv;

/// The fake Claude Code's cost of one turn (see `ledger` in tests/fakes/claude).
const TURN_COST: f64 = 0.0042;

fn cost(value: &Value) -> f64 {
    value["cost_usd"].as_f64().unwrap_or_default()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn usage_sums_by_thread_and_day_and_counts_an_imported_copy_once() {
    let env = TestEnv::new();
    env.turn("one");
    env.turn("two");
    env.ok(["-t", "review", "three"]);

    let by_thread = env.ok(["usage", "--by", "thread", "--json"]).json();
    let rows = by_thread["rows"].as_array().unwrap();
    let summed: Vec<(&str, i64)> = rows
        .iter()
        .map(|row| (row["key"].as_str().unwrap(), row["turns"].as_i64().unwrap()))
        .collect();
    assert_eq!(summed, [("main", 2), ("review", 1)], "{by_thread}");
    assert!(close(cost(&rows[0]), 2.0 * TURN_COST), "{by_thread}");
    assert_eq!(by_thread["total"]["turns"], 3);
    assert!(by_thread["total"]["input_tokens"].as_i64().unwrap() > 0);

    // main's thread exported, its session ended by `new`, then imported again under another
    // name: the same two turns, which count once.
    let bundle = env.scratch.join("main.sticky");
    env.ok(["export", "-o", bundle.to_str().unwrap()]);
    env.ok(["new"]);
    env.ok(["import", "--as", "copy", bundle.to_str().unwrap()]);
    let by_day = env.ok(["usage", "--json"]).json();
    assert_eq!(by_day["by"], "day");
    assert_eq!(by_day["total"]["turns"], 3, "{by_day}");
    assert_eq!(by_day["duplicates"], 2, "{by_day}");
    assert!(close(cost(&by_day["total"]), 3.0 * TURN_COST), "{by_day}");
    let today = by_day["rows"][0]["key"].as_str().unwrap().to_owned();
    assert_eq!(today.len(), 10, "a day: {today}");

    let text = env.ok(["usage", "--by", "model"]).stdout;
    assert!(text.starts_with("model "), "{text}");
    assert!(text.contains("(default)"), "{text}");
    assert!(text.contains("$0.0126"), "{text}");
    assert!(
        text.contains("2 copies of turns imported elsewhere counted once"),
        "{text}"
    );

    // A range that ends before today counts nothing; one that starts today counts all.
    let before = env.ok(["usage", "--until", "2000-01-01", "--json"]).json();
    assert_eq!(before["total"]["turns"], 0);
    assert_eq!(
        env.ok(["usage", "--until", "2000-01-01"]).stdout,
        "no turns to count\n"
    );
    let since = env
        .ok(["usage", "--since", &today, "--until", &today, "--json"])
        .json();
    assert_eq!(
        since["total"]["turns"], 3,
        "--until a day takes the day whole"
    );
    env.sticky(["usage", "--since", "yesterday"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("--since \"yesterday\" is neither a date");
    env.sticky(["usage", "--prune"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("--all");
    env.sticky(["-t", "main", "usage"])
        .run()
        .assert_code(2)
        .assert_stderr_contains("-t does not apply to `sticky usage`");
}

/// The list of projects in `env`'s data directory.
fn listed(env: &TestEnv) -> String {
    std::fs::read_to_string(env.home.join(".local/share/sticky/projects")).unwrap_or_default()
}

fn make_project(env: &TestEnv, name: &str) -> std::path::PathBuf {
    let dir = env.root().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    env.ok(["-C", dir.to_str().unwrap(), "init"]);
    dir
}

/// A project that has run no turn in its directory yet is listed once `sticky relocate` moved
/// its conversations there, or `sticky trust` adopted its state: import looks in the listed
/// projects' vaults for a session one of them keeps (the fifth review, H1).
#[test]
fn a_relocated_or_trusted_project_is_listed() {
    let env = TestEnv::new();
    env.turn("here");
    let copy = env.root().join("copy");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(&env.project)
        .arg(&copy)
        .status()
        .expect("cp");
    assert!(status.success());
    let moved = env.root().join("moved");
    std::fs::rename(&env.project, &moved).unwrap();
    let on_line = |dir: &Path| listed(&env).lines().any(|line| Path::new(line) == dir);
    assert!(!on_line(&moved) && !on_line(&copy), "{}", listed(&env));
    env.sticky(["relocate"])
        .current_dir(&moved)
        .run()
        .assert_success();
    assert!(on_line(&moved), "relocate lists it: {}", listed(&env));
    env.sticky(["trust"])
        .current_dir(&copy)
        .run()
        .assert_success();
    assert!(on_line(&copy), "trust lists it: {}", listed(&env));
}

#[test]
fn usage_all_reads_every_listed_project_and_skips_what_is_gone_or_not_yours() {
    let env = TestEnv::new();
    env.turn("here");
    let other = make_project(&env, "other");
    let gone = make_project(&env, "gone");
    for dir in [&other, &gone] {
        env.ok(["-C", dir.to_str().unwrap(), "a turn there"]);
    }
    let list = listed(&env);
    for dir in [&env.project, &other, &gone] {
        assert!(
            list.lines().any(|line| Path::new(line) == dir),
            "a turn lists its project once: {list}"
        );
    }
    env.turn("again");
    assert_eq!(listed(&env), list, "a listed project is not listed again");

    // A database copied into another directory carries a stamp for another file: not yours
    // until `sticky trust`, so never read.
    let copy = env.root().join("copy");
    std::fs::create_dir_all(copy.join(".sticky")).unwrap();
    for file in ["sticky.db", "sticky.db.stamp"] {
        std::fs::copy(
            other.join(".sticky").join(file),
            copy.join(".sticky").join(file),
        )
        .unwrap();
    }
    let mut with_copy = list.clone();
    with_copy.push_str(&format!("{}\n", copy.display()));
    std::fs::write(env.home.join(".local/share/sticky/projects"), &with_copy).unwrap();
    std::fs::remove_dir_all(&gone).unwrap();

    let here = env.ok(["usage", "--json"]).json();
    assert_eq!(
        here["total"]["turns"], 2,
        "without --all, this project: {here}"
    );
    let all = env
        .ok(["usage", "--all", "--by", "thread", "--json"])
        .json();
    assert_eq!(all["total"]["turns"], 3, "{all}");
    let projects: Vec<&str> = all["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(
        projects,
        [env.project.to_str().unwrap(), other.to_str().unwrap()]
    );
    assert_schema(&all);
    let skipped = all["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 2, "{all}");
    let gone_note = skipped.iter().find(|s| s["gone"] == true).unwrap();
    assert_eq!(gone_note["project"], gone.to_str().unwrap());
    let copy_note = skipped.iter().find(|s| s["gone"] == false).unwrap();
    assert_eq!(copy_note["project"], copy.to_str().unwrap());
    assert!(
        copy_note["reason"]
            .as_str()
            .unwrap()
            .contains("sticky trust"),
        "{copy_note}"
    );

    let text = env.sticky(["usage", "--all"]).run();
    text.assert_success();
    text.assert_stderr_contains(&format!("skipped {}: it is gone", gone.display()));
    text.assert_stderr_contains(&format!("skipped {}:", copy.display()));

    let pruned = env.sticky(["usage", "--all", "--prune"]).run();
    pruned.assert_success();
    pruned.assert_stderr_contains(&format!("dropped {} from the list", gone.display()));
    let after = listed(&env);
    assert!(!after.contains(gone.to_str().unwrap()), "{after}");
    assert!(
        after.contains(copy.to_str().unwrap()),
        "only what is gone: {after}"
    );
    assert!(after.contains(other.to_str().unwrap()), "{after}");
}

/// The keys of `usage --json` (docs/json.md), with a row and a skipped project.
fn assert_schema(all: &Value) {
    let keys = |value: &Value| -> Vec<String> {
        let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    assert_eq!(
        keys(all),
        [
            "by",
            "duplicates",
            "projects",
            "rows",
            "since",
            "skipped",
            "total",
            "until"
        ],
        "the schema of docs/json.md"
    );
    let row_keys = [
        "cached_tokens",
        "cost_usd",
        "input_tokens",
        "key",
        "output_tokens",
        "project",
        "turns",
    ];
    assert_eq!(keys(&all["rows"][0]), row_keys);
    assert_eq!(
        keys(&all["skipped"][0]),
        ["database", "gone", "project", "pruned", "reason"]
    );
}

/// The list of projects is read up to 4 MiB, "tens of thousands of projects": each line is
/// checked once for a duplicate. Compared with every line kept before it (`Vec::contains`),
/// 50,000 lines (one per temporary directory a script ran sticky in) took `usage --all` 4 min
/// 46 s of CPU; 4 MiB would take over an hour, `--prune` included.
#[test]
fn usage_all_reads_a_long_list_of_projects_in_linear_time() {
    let env = TestEnv::new();
    env.turn("here");
    let mut list = listed(&env);
    for n in 0..20_000 {
        list.push_str(&format!("{}/gone/p{n}\n", env.root().display()));
    }
    std::fs::write(env.home.join(".local/share/sticky/projects"), &list).unwrap();
    let started = std::time::Instant::now();
    let all = env.ok(["usage", "--all", "--json"]).json();
    let took = started.elapsed();
    assert_eq!(all["skipped"].as_array().unwrap().len(), 20_000);
    assert!(
        took < std::time::Duration::from_secs(15),
        "usage --all took {took:?} over 20,000 listed projects"
    );
}

/// Only the list's first 4 MiB is read, so a project listed past them is never found there:
/// each turn appended its line again, growing the file forever. A full list is left as it is.
#[test]
fn a_full_list_of_projects_is_not_appended_to_every_turn() {
    let env = TestEnv::new();
    let path = env.home.join(".local/share/sticky/projects");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut list = String::new();
    let mut n = 0;
    while list.len() <= 4 * 1024 * 1024 {
        list.push_str(&format!("{}/gone/p{n}\n", env.root().display()));
        n += 1;
    }
    std::fs::write(&path, &list).unwrap();
    env.turn("one");
    env.turn("two");
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        list.len() as u64,
        "turns appended to a list past what is read"
    );
}
