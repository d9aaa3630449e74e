//! Issue 27, point 4: `sticky search` finds turns by the words of their prompt or kept answer,
//! in every thread (`-t`: one), since a time, across projects (`--all`), and shows stored text
//! escaped as `log` does.

use serde_json::Value;

use crate::support::TestEnv;

/// The thread, turn and `found_in` of each result of `search --json`.
fn found(json: &Value) -> Vec<(String, i64, String)> {
    json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| {
            (
                hit["thread"].as_str().unwrap().to_owned(),
                hit["turn"].as_i64().unwrap(),
                hit["found_in"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn search_finds_prompts_and_answers_in_every_thread_and_escapes_what_it_shows() {
    let env = TestEnv::new();
    env.turn("why does the build fail?");
    env.sticky(["-t", "review", "look at the parser"])
        .env("FAKE_CLAUDE_ANSWER", "The \x1b]0;pwned\x07 build is fine")
        .run()
        .assert_success();
    let long: String = (0..400)
        .map(|i| ["line ", &i.to_string(), " of a long diff\n"].concat())
        .collect();
    env.sticky(["a long one"])
        .env("FAKE_CLAUDE_ANSWER", format!("{long}the zeppelin lands\n"))
        .run()
        .assert_success();

    let json = env.ok(["search", "build", "--json"]).json();
    assert_eq!(
        found(&json),
        [
            ("review".to_owned(), 2, "answer".to_owned()),
            ("main".to_owned(), 1, "prompt".to_owned()),
        ],
        "the newest first: {json}"
    );
    let hit = &json["results"][1];
    let snippet = hit["snippet"].as_str().unwrap();
    let [start, end] =
        [0, 1].map(|i| usize::try_from(hit["matches"][0][i].as_u64().unwrap()).unwrap());
    assert_eq!(&snippet[start..end], "build");
    assert_eq!(hit["project"], env.project.to_str().unwrap());
    assert!(hit["started_at"].as_i64().unwrap() > 0);
    let mut keys: Vec<&str> = hit
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "agent",
            "found_in",
            "matches",
            "project",
            "snippet",
            "started_at",
            "thread",
            "turn"
        ]
    );

    // A deflated answer (over 4 KiB) is found too.
    let zeppelin = env.ok(["search", "zeppelin", "--json"]).json();
    assert_eq!(
        found(&zeppelin),
        [("main".to_owned(), 3, "answer".to_owned())]
    );

    let text = env.ok(["search", "build"]).stdout;
    assert!(text.contains("thread review #2 · "), "{text}");
    assert!(
        text.contains("│ The \\e]0;pwned\\x07 **build** is fine"),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "escaped as log escapes: {text:?}");

    let narrowed = env.ok(["-t", "main", "search", "build", "--json"]).json();
    assert_eq!(
        found(&narrowed),
        [("main".to_owned(), 1, "prompt".to_owned())]
    );
    let later = env
        .ok(["search", "build", "--since", "2999-01-01", "--json"])
        .json();
    assert!(found(&later).is_empty());
    assert_eq!(
        env.ok(["search", "walrus"]).stdout,
        "no turn holds walrus\n"
    );
    // Words, not FTS5's query language: quotes and operators are searched for as they are.
    env.ok(["search", "\"build", "NOT", "fail)"]);
    env.sticky(["search", "  "])
        .run()
        .assert_code(2)
        .assert_stderr_contains("nothing to search for");

    // Forgotten turns are not found any more.
    env.ok(["-t", "review", "forget", "--yes"]);
    let json = env.ok(["search", "build", "--json"]).json();
    assert_eq!(found(&json), [("main".to_owned(), 1, "prompt".to_owned())]);
}

#[test]
fn search_all_looks_in_every_listed_project() {
    let env = TestEnv::new();
    env.turn("the walrus in this project");
    let other = env.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let other_arg = other.to_str().unwrap();
    env.ok(["-C", other_arg, "init"]);
    env.ok(["-C", other_arg, "the walrus over there"]);

    let here = env.ok(["search", "walrus", "--json"]).json();
    assert_eq!(here["results"].as_array().unwrap().len(), 1);
    let all = env.ok(["search", "--all", "walrus", "--json"]).json();
    let projects: Vec<&str> = all["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["project"].as_str().unwrap())
        .collect();
    assert_eq!(
        projects,
        [other_arg, env.project.to_str().unwrap()],
        "{all}"
    );
    let text = env.ok(["search", "--all", "-n", "1", "walrus"]).stdout;
    assert!(
        text.starts_with(&format!("{other_arg} · thread main #1")),
        "{text}"
    );
    assert_eq!(text.lines().count(), 2, "-n 1: {text}");
}

/// `sticky forget` is for "a conversation that must not be kept", and `search` finds
/// nothing of it after; its prompt and answer must not stay readable in the database file
/// either (`SQLite` frees pages without overwriting them, the search index's segments keep the
/// words, the WAL the pages as written), where a copy of `.sticky/` (a backup, a cache, a state
/// handed on) would still hold it.
#[test]
fn forget_leaves_no_text_of_the_conversation_in_the_database_file() {
    let env = TestEnv::new();
    env.turn("keep this one");
    env.ok(["-t", "secret", "the launch code is zqxvjkwpl"]);
    env.ok(["forget", "-t", "secret", "--yes"]);
    // A later command opens and closes the database, checkpointing its WAL.
    env.ok(["status"]);
    for name in ["sticky.db", "sticky.db-wal"] {
        let bytes = std::fs::read(env.project.join(".sticky").join(name)).unwrap_or_default();
        assert!(
            !bytes.windows(9).any(|window| window == b"zqxvjkwpl"),
            "the forgotten prompt is still in .sticky/{name}"
        );
    }
}
