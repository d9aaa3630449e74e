//! Where a project's state lives and where the agent runs: the project directory found from a
//! subdirectory, `.sticky/` and its `.gitignore`, `STICKY_DB`, `-C DIR` and `sticky init`.

use std::path::{Path, PathBuf};

use crate::support::{Answer, Output, TestEnv};

#[track_caller]
fn assert_ran_in(env: &TestEnv, dir: &Path) {
    let run = env.last_agent_run();
    assert_eq!(run.cwd(), dir, "the agent's working directory");
    assert_eq!(
        run.text("PWD").map(Path::new),
        Some(dir),
        "the agent's PWD (agents such as opencode trust $PWD over the real cwd)"
    );
}

#[test]
fn a_turn_from_a_subdirectory_uses_the_project_session_and_runs_in_the_project() {
    let env = TestEnv::new();
    let first = env.turn("from the root");
    assert_ran_in(&env, &env.project);

    let deep = env.project_dir("src/deep");
    let output = env.sticky(["from deep"]).current_dir(&deep).run();
    output.assert_success();
    let answer = output.answer();
    assert_eq!(
        answer.session, first.session,
        "the subdirectory shares the project's session"
    );
    assert_eq!(answer.saw, ["from the root"]);
    assert_ran_in(&env, &env.project);
    assert!(
        !deep.join(".sticky").exists(),
        "no state in the subdirectory"
    );
}

#[test]
fn the_first_turn_from_a_subdirectory_creates_the_state_at_the_git_root() {
    let env = TestEnv::new();
    let sub = env.project_dir("crates/core");
    let output = env.sticky(["hello"]).current_dir(&sub).run();
    output.assert_success();
    assert!(
        env.project.join(".sticky/sticky.db").is_file(),
        "the db is at the worktree root"
    );
    assert!(!sub.join(".sticky").exists());
    assert_ran_in(&env, &env.project);
    assert_eq!(env.turn("again").session, output.answer().session);
}

#[test]
fn the_state_directory_ignores_itself_in_git() {
    let env = TestEnv::new();
    env.turn("hello");
    let ignore = std::fs::read_to_string(env.project.join(".sticky/.gitignore"))
        .expect(".sticky/.gitignore exists");
    assert_eq!(ignore.trim(), "*");
}

#[test]
fn the_state_is_private_to_the_user() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    env.turn("hello");
    let mode = |path: &Path| {
        std::fs::metadata(path)
            .expect("the state exists")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(
        mode(&env.project.join(".sticky")),
        0o700,
        ".sticky/ is the user's alone"
    );
    assert_eq!(
        mode(&env.project.join(".sticky/sticky.db")),
        0o600,
        "so is the database"
    );
}

#[test]
fn sticky_db_puts_the_database_elsewhere() {
    let env = TestEnv::new();
    let db = env.scratch.join("cache/state.db");
    std::fs::create_dir_all(db.parent().expect("a parent")).expect("create the cache dir");

    let first = env.sticky(["first"]).env("STICKY_DB", &db).run();
    first.assert_success();
    assert!(db.is_file(), "the database is where STICKY_DB says");
    assert!(
        !env.project.join(".sticky").exists(),
        "nothing is written into the project"
    );

    let second = env.sticky(["second"]).env("STICKY_DB", &db).run();
    second.assert_success();
    assert_eq!(second.answer().session, first.answer().session);
    assert_eq!(second.answer().saw, ["first"]);
    assert_ran_in(&env, &env.project);

    let status = env.sticky(["status", "--json"]).env("STICKY_DB", &db).run();
    status.assert_success();
    let status = status.json();
    assert_eq!(status["database"], db.to_str().expect("utf-8 path"));
    assert_eq!(status["project"], env.project.to_str().expect("utf-8 path"));
}

#[test]
fn dash_c_acts_as_if_started_in_the_directory() {
    let env = TestEnv::new();
    let project = env.project.to_str().expect("utf-8 path");
    let elsewhere = env.scratch.clone();

    let first = env
        .sticky(["-C", project, "first"])
        .current_dir(&elsewhere)
        .run();
    first.assert_success();
    assert_ran_in(&env, &env.project);
    assert!(env.project.join(".sticky/sticky.db").is_file());
    assert!(!elsewhere.join(".sticky").exists());

    let sub = env.project_dir("docs");
    let second = env
        .sticky(["-C", sub.to_str().expect("utf-8 path"), "second"])
        .current_dir(&elsewhere)
        .run();
    second.assert_success();
    assert_eq!(second.answer().session, first.answer().session);

    let status = env
        .sticky(["-C", project, "status", "--json"])
        .current_dir(&elsewhere)
        .run();
    status.assert_success();
    assert_eq!(
        status.json()["session"]["agent_session_id"],
        first.answer().session.as_str()
    );
}

#[test]
fn init_in_a_subdirectory_makes_it_a_project_of_its_own() {
    let env = TestEnv::new();
    let outer = env.turn("outer");

    let inner = env.project_dir("packages/inner");
    env.sticky(["init"])
        .current_dir(&inner)
        .run()
        .assert_success();
    assert!(
        inner.join(".sticky").is_dir(),
        "init creates the state directory"
    );
    assert_eq!(
        std::fs::read_to_string(inner.join(".sticky/.gitignore"))
            .map(|s| s.trim().to_owned())
            .ok(),
        Some("*".to_owned())
    );

    let nested = env.project_dir("packages/inner/src");
    let output = env.sticky(["inner"]).current_dir(&nested).run();
    output.assert_success();
    let answer = output.answer();
    assert_ne!(
        answer.session, outer.session,
        "the inner project has its own session"
    );
    assert!(answer.saw.is_empty());
    assert_ran_in(&env, &inner);

    assert_eq!(
        env.turn("outer again").saw,
        ["outer"],
        "the outer project is untouched"
    );
}

#[test]
fn outside_git_the_current_directory_is_the_project() {
    let env = TestEnv::without_git();
    let output = env.ok(["hello"]);
    assert!(env.project.join(".sticky/sticky.db").is_file());
    assert_ran_in(&env, &env.project);
    assert_eq!(env.turn("again").session, output.answer().session);
}

#[test]
fn status_without_a_database_creates_nothing() {
    let env = TestEnv::new();
    let text = env.ok(["status"]);
    let said = text.stdout.to_lowercase();
    assert!(
        said.contains("no session") || said.contains("none yet"),
        "status says there is no session yet: {}",
        text.describe()
    );
    let json = env.status_json();
    assert!(
        json["session"].is_null() && json["last_turn"].is_null(),
        "{json}"
    );
    assert!(
        !env.project.join(".sticky").exists(),
        "status creates nothing"
    );
}

#[test]
fn a_relative_sticky_db_is_taken_from_the_project_directory_in_every_subdirectory() {
    let env = TestEnv::new();
    let deep = env.project_dir("src/deep");
    // Inside the worktree, git must ignore it (see git_state.rs).
    std::fs::write(env.project.join(".gitignore"), "/cache/\n").expect("ignore cache/");
    let first = env
        .sticky(["first"])
        .env("STICKY_DB", "cache/state.db")
        .run();
    first.assert_success();
    let db = env.project.join("cache/state.db");
    assert!(db.is_file(), "the database is under the project directory");

    let below = env
        .sticky(["from below"])
        .current_dir(&deep)
        .env("STICKY_DB", "cache/state.db")
        .run();
    below.assert_success();
    assert_eq!(
        below.answer().session,
        first.answer().session,
        "the same session"
    );
    assert!(!deep.join("cache").exists(), "no second database below");
    let config = env
        .sticky(["config", "--json"])
        .current_dir(&deep)
        .env("STICKY_DB", "cache/state.db")
        .run();
    config.assert_success();
    assert_eq!(
        config.json()["database"]["value"],
        db.display().to_string(),
        "config names the same file"
    );
}

#[test]
fn a_sticky_db_that_is_no_file_says_what_it_is_and_creates_nothing() {
    let env = TestEnv::new();
    let fifo = env.scratch.join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("make a FIFO");
    let journal = Path::new("/dev/null-journal");
    let journal_before = journal.exists();
    let cases = [
        (
            env.scratch.clone(),
            "a directory, not a database file; name a file in it",
        ),
        (fifo, "a FIFO (named pipe), not a database file"),
        ("/dev/null".into(), "a device, not a database file"),
    ];
    for (db, says) in cases {
        let output = env.sticky(["hello"]).env("STICKY_DB", &db).run();
        output
            .assert_code(2)
            .assert_stderr_contains(&format!("STICKY_DB names {}, {says}", db.display()));
        assert!(
            !output.stderr.contains("hard links"),
            "{}",
            output.describe()
        );
    }
    assert!(env.agent_runs().is_empty(), "no agent ran");
    let mut left: Vec<_> = std::fs::read_dir(&env.scratch)
        .expect("read the scratch directory")
        .map(|entry| entry.expect("an entry").file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["fifo"], "nothing was created beside them");
    assert!(!env.project.join(".sticky").exists());
    assert_eq!(journal.exists(), journal_before, "no /dev/null-journal");
}

#[test]
fn a_turn_below_home_starts_its_own_project_and_says_why_once() {
    let env = TestEnv::without_git();
    let at_home = env.sticky(["at home"]).current_dir(&env.home).run();
    at_home.assert_success();
    assert_ran_in(&env, &env.home);
    let below = env.home.join("Downloads/unrelated");
    std::fs::create_dir_all(&below).expect("create a directory below HOME");

    let status = env.sticky(["status"]).current_dir(&below).run();
    status.assert_success();
    assert!(
        status.stdout.contains(&format!(
            "a new project starts in {}: HOME's own .sticky/",
            below.display()
        )),
        "{}",
        status.describe()
    );
    // On a pipe too: the user may expect the home conversation to go on.
    let first = env.sticky(["where am i"]).current_dir(&below).run();
    first.assert_success().assert_stderr_contains(&format!(
        "sticky: a new project starts in {}: HOME's own .sticky/ (in {}) serves turns run in \
         HOME itself, not in the directories below it",
        below.display(),
        env.home.display()
    ));
    let answer = first.answer();
    assert_ne!(answer.session, at_home.answer().session);
    assert!(answer.saw.is_empty(), "a conversation of its own");
    assert_ran_in(&env, &below);
    assert!(below.join(".sticky/sticky.db").is_file());

    let again = env.sticky(["and now"]).current_dir(&below).run();
    again.assert_success();
    assert!(
        !again.stderr.contains("new project"),
        "once: {}",
        again.describe()
    );
    assert_eq!(again.answer().saw, ["where am i"]);

    // HOME's own conversation goes on in HOME.
    let home_again = env.sticky(["home again"]).current_dir(&env.home).run();
    home_again.assert_success();
    assert_eq!(home_again.answer().saw, ["at home"]);
    assert_ran_in(&env, &env.home);
}

/// A run's arguments, its environment and the exit code it must end with.
type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a Path)], i32);

#[test]
fn a_turn_that_cannot_start_creates_no_state() {
    let env = TestEnv::new();
    let db = env.scratch.join("cache/state.db");
    let missing = env.scratch.join("no-such-claude");
    let cases: [Case<'_>; 5] = [
        (&["hello"], &[("STICKY_CLAUDE_BIN", &missing)], 72),
        (&["new"], &[("STICKY_CLAUDE_BIN", &missing)], 72),
        (
            &["hello"],
            &[("STICKY_CLAUDE_BIN", &missing), ("STICKY_DB", &db)],
            72,
        ),
        (&["hello", "--", "--resume", "x"], &[], 2),
        (&["new", "--carry"], &[], 2),
    ];
    for (args, vars, code) in cases {
        let mut run = env.sticky(args);
        for (key, value) in vars {
            run = run.env(key, value);
        }
        let output = run.run();
        output.assert_code(code);
        assert!(
            !env.project.join(".sticky").exists(),
            "{args:?} created .sticky/: {}",
            output.describe()
        );
        assert!(
            !env.scratch.join("cache").exists(),
            "{args:?} made STICKY_DB's"
        );
    }
    assert!(env.agent_runs().is_empty(), "no agent ran");
    // Once the agent is there, the first turn makes the state.
    env.turn("hello");
    assert!(env.project.join(".sticky/sticky.db").is_file());
}

#[test]
fn commands_that_only_read_create_no_state_and_say_there_is_none() {
    let env = TestEnv::without_git();
    let bundle = env.scratch.join("x.sticky");
    let bundle = bundle.to_str().expect("a UTF-8 path");
    let commands: &[&[&str]] = &[
        &["status"],
        &["log"],
        &["sessions"],
        &["threads"],
        &["show"],
        &["doctor"],
        &["config"],
        &["export", "-o", bundle],
        &["forget"],
        &["relocate"],
        &["trust"],
    ];
    for args in commands {
        let output = env.sticky(*args).run();
        let said = format!("{}{}", output.stdout, output.stderr).to_lowercase();
        assert!(
            [
                "no turns",
                "no sessions",
                "no threads",
                "none yet",
                "not created yet",
                "no session",
                "does not exist",
                "no sticky conversations",
                "no database",
                "none"
            ]
            .iter()
            .any(|words| said.contains(words)),
            "{args:?} says there is no state: {}",
            output.describe()
        );
        assert!(
            !env.project.join(".sticky").exists(),
            "{args:?} created .sticky/: {}",
            output.describe()
        );
    }
    assert!(!Path::new(bundle).exists(), "export wrote nothing");
}

#[test]
fn the_note_of_a_new_project_below_home_escapes_its_directory() {
    let env = TestEnv::without_git();
    env.sticky(["at home"])
        .current_dir(&env.home)
        .run()
        .assert_success();
    // A directory name can hold a terminal's escape sequences (here: clear the screen).
    let below = env.home.join("x\u{1b}[2Jy");
    std::fs::create_dir_all(&below).expect("create a directory below HOME");
    let output = env.sticky(["hello"]).current_dir(&below).run();
    output
        .assert_success()
        .assert_stderr_contains("a new project starts in");
    assert!(
        !output.stderr.contains('\u{1b}'),
        "no escape sequence reaches the terminal: {}",
        output.describe()
    );
}

/// The entries of `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read a directory")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

#[test]
fn a_turn_without_an_absolute_home_exits_2_naming_home_and_writes_nothing() {
    let env = TestEnv::new();
    let before = entries(&env.project);
    for (home, said) in [
        (None, "HOME is not set"),
        (Some(""), "HOME is not set"),
        (Some("home"), "HOME is home, not an absolute path"),
        (Some("."), "HOME is ., not an absolute path"),
    ] {
        let run = env.sticky(["hello"]);
        let run = match home {
            Some(home) => run.env("HOME", home),
            None => run.env_remove("HOME"),
        };
        let output = run.run();
        output
            .assert_code(2)
            .assert_stderr_contains(said)
            .assert_stderr_contains("set HOME to your home directory");
        assert!(env.agent_runs().is_empty(), "{home:?}: the agent never ran");
        assert_eq!(
            entries(&env.project),
            before,
            "{home:?}: no .sticky/ and no agent directory made relative to the current directory"
        );
    }
}

/// Review 6: a project renamed, and a new directory made at its old path (a fresh clone, an
/// empty `mkdir`): no sticky state there, no copy of the project. `sticky relocate` in the
/// moved project refuses it as "a copy of the project rather than a move ... (sticky in <old>
/// goes on with the original's)", which is false, while the turn's own refusal says to run
/// relocate; the only way out offered, `sticky new --carry`, gives the agent session up.
#[test]
fn review_relocate_carries_a_session_whose_old_directory_was_made_again_without_sticky() {
    let env = TestEnv::new();
    let first = env.turn("before the move");
    let moved = env.move_project();
    std::fs::create_dir_all(&env.project).expect("a new directory at the old path");
    env.git(&env.project, &["init", "-q"]);
    env.ok_in(&moved, ["relocate"]);
    let after = env.ok_in(&moved, ["after the move"]);
    assert_eq!(after.answer().session, first.session);
    assert_eq!(after.answer().saw, ["before the move"]);
}

/// Review 6, M2's sibling: a pending `sticky new` (no prompt yet: the agent never started the
/// session) in a project that moved is no session the agent deleted: relocate records it here,
/// and the next turn starts it.
#[test]
fn relocate_records_a_pending_new_session_and_its_first_turn_starts_it() {
    let env = TestEnv::new();
    let first = env.turn("before the move");
    env.ok(["new"]);
    let moved = env.move_project();
    env.ok_in(&moved, ["relocate"]);
    let after = env.ok_in(&moved, ["after the move"]);
    assert_ne!(after.answer().session, first.session);
    assert_eq!(after.answer().saw, Vec::<String>::new());
}

/// Review 7: a sibling of review 6's M5. The directory made again at the old path (a fresh
/// clone) ran sticky and has a state of its own, which keeps another session: the moved
/// project is no copy of it, yet relocate calls it one ("sticky in ... goes on with the
/// original's", false) and its way out gives the session up.
#[test]
fn review_relocate_carries_a_session_whose_old_directory_was_made_again_with_its_own_sticky() {
    let env = TestEnv::new();
    let first = env.turn("before the move");
    let moved = env.move_project();
    std::fs::create_dir_all(&env.project).expect("a new directory at the old path");
    env.git(&env.project, &["init", "-q"]);
    let fresh = env.ok_in(&env.project, ["fresh work"]);
    assert_ne!(fresh.answer().session, first.session);
    env.ok_in(&moved, ["relocate"]);
    let after = env.ok_in(&moved, ["after the move"]);
    assert_eq!(after.answer().session, first.session);
    assert_eq!(after.answer().saw, ["before the move"]);
}

/// Review 8: a variation of review 7's. The original keeps its state elsewhere (`STICKY_DB`,
/// listed with that database); a copy of the project gets a copy of that database as its own
/// `.sticky/sticky.db`, is trusted, and runs `relocate`. The original's directory still exists
/// and its state goes on with the session, so this is a copy, which relocate refuses; instead
/// `copy_at` looks only at the old directory's `.sticky/`, calls it "a directory made again at
/// that path", moves the original's session into the copy, and the original's next turn is
/// refused ("sticky does not resume it here: run `sticky new`").
#[test]
fn review_relocate_in_a_copy_takes_the_session_of_an_original_whose_state_is_elsewhere() {
    let env = TestEnv::new();
    let database = env.scratch.join("state/sticky.db");
    let (first, copy) = a_copy_of_an_original_whose_state_is(&env, &database);
    // What is said: a copy, and the way to go on in the original, with its `STICKY_DB`.
    let there = format!(
        "STICKY_DB={} sticky -C {}",
        database.display(),
        env.project.display()
    );
    env.ok_in(&copy, ["trust"])
        .assert_stderr_contains("which still exists, so this is a copy of that project")
        .assert_stderr_contains(&there);
    // A turn in the copy names it too: a plain `sticky` there would not find that database.
    env.sticky(["in the copy"])
        .current_dir(&copy)
        .run()
        .assert_code(73)
        .assert_stderr_contains(&format!("run `{there}` to go on with it there"));
    let relocated = env.sticky(["relocate"]).current_dir(&copy).run();
    let back = env
        .sticky(["back in the original"])
        .env("STICKY_DB", &database)
        .run();
    back.assert_success();
    assert_eq!(back.answer().session, first.answer().session);
    relocated
        .assert_code(2)
        .assert_stderr_contains("a copy of the project")
        .assert_stderr_contains(&there);
}

/// Review 8: a variation of review 7's. The project moved and a link to it was left at the old
/// path (`mv p r && ln -s r p`, a common way to keep old paths working). The turn says "if
/// the project moved here, run `sticky relocate`"; relocate calls it "a copy of the project
/// rather than a move ... (sticky in <old> goes on with the original's)", but sticky at the
/// old path is this same project and is refused as well; the only way out offered, `sticky new
/// --carry`, gives the agent session up. The old path names this project's own state: a move.
#[test]
fn review_relocate_carries_a_session_whose_old_path_is_a_link_to_the_moved_project() {
    let env = TestEnv::new();
    let first = env.turn("before the move");
    let moved = env.move_project();
    std::os::unix::fs::symlink(&moved, &env.project).expect("a link at the old path");
    // What is said names the old path for what it is, and relocate, never a copy.
    relocate_is_the_way(&env, &moved, "which now leads to this very directory");
    let trusted = env.ok_in(&moved, ["trust"]);
    trusted
        .assert_stderr_contains("which now leads to this very directory")
        .assert_stderr_contains("run `sticky relocate`");
    assert!(!trusted.stderr.contains("copy"), "{}", trusted.describe());
    env.ok_in(&moved, ["relocate"]);
    let after = env.ok_in(&moved, ["after the move"]);
    assert_eq!(after.answer().session, first.session);
    assert_eq!(after.answer().saw, ["before the move"]);
}

/// Review 8: review 7's finding again, from another user. The project lived in a shared
/// directory and moved; another user made its old path again with a `.sticky/` of their own
/// (here a FIFO as its database). sticky refuses to use another user's state, yet relocate
/// takes it for the original's state: it calls the move a copy ("sticky in <old> goes on with
/// the original's", where sticky refuses that state), and its only way out gives the session up.
#[test]
fn review_relocate_carries_a_session_whose_old_path_holds_another_users_sticky() {
    let env = TestEnv::new();
    let first = env.turn("before the move");
    let moved = env.move_project();
    let state = env.project.join(".sticky");
    std::fs::create_dir_all(&state).expect("a state at the old path");
    let made = std::process::Command::new("mkfifo")
        .arg(state.join("sticky.db"))
        .status();
    assert!(made.is_ok_and(|status| status.success()), "mkfifo");
    if crate::support::other_user::is_root() {
        for path in [&env.project, &state, &state.join("sticky.db")] {
            crate::support::other_user::give_to_nobody(path);
        }
    }
    // What is said names that state for what it is: no copy's original, nor "no sticky state".
    relocate_is_the_way(&env, &moved, "where sticky uses no state of yours");
    env.ok_in(&moved, ["relocate"]);
    let after = env.ok_in(&moved, ["after the move"]);
    assert_eq!(after.answer().session, first.session);
    assert_eq!(after.answer().saw, ["before the move"]);
}

/// Review 8, M1 (a), the same database file: the project moved, and the old path was made
/// again with a `.sticky` that is a link to the moved project's own state (which a turn there
/// refuses: it leads out of that directory). That is this project's state, not an original's:
/// the turn says so, and relocate carries the session.
#[test]
fn relocate_carries_a_session_whose_old_path_leads_to_this_projects_own_state() {
    let env = TestEnv::new();
    let first = env.turn("before the move");
    let moved = env.move_project();
    std::fs::create_dir_all(&env.project).expect("a new directory at the old path");
    std::os::unix::fs::symlink(moved.join(".sticky"), env.project.join(".sticky"))
        .expect("a link to the moved project's state");
    relocate_is_the_way(
        &env,
        &moved,
        "whose sticky state leads to this project's own database",
    );
    env.ok_in(&moved, ["relocate"]);
    let after = env.ok_in(&moved, ["after the move"]);
    assert_eq!(after.answer().session, first.session);
    assert_eq!(after.answer().saw, ["before the move"]);
}

/// Review 8, M1 (b)'s sibling, under review 9's rule: the project moved, and a copy of it was
/// made back at the old path (`cp -a`), not adopted there. That state is the user's and goes on
/// with the session; a turn there refuses it only until `sticky trust`, and from the moved
/// project it cannot be told from an original refused for now (a restored backup, a lost key).
/// So the turn, trust and relocate in the moved project say so and name both ways out; relocate
/// changes nothing. Its second way (the copy at the old path is not needed: move its state
/// away, relocate again) carries the session.
#[test]
fn relocate_carries_a_session_whose_old_path_holds_a_copy_once_its_state_is_moved_away() {
    let env = TestEnv::new();
    let first = env.turn("before the move");
    let moved = env.move_project();
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(&moved)
        .arg(&env.project)
        .status();
    assert!(copied.is_ok_and(|status| status.success()), "cp -a");
    let adopt = format!("`sticky -C {} trust`", env.project.display());
    held_is_said(&env, &moved, &adopt);
    let state = env.project.join(".sticky");
    std::fs::rename(&state, state.with_extension("copy")).expect("move its state away, as said");
    env.ok_in(&moved, ["relocate"]);
    let after = env.ok_in(&moved, ["after the move"]);
    assert_eq!(after.answer().session, first.session);
    assert_eq!(after.answer().saw, ["before the move"]);
}

/// In `here`, whose live session was recorded in the project's directory (`env.project`), which
/// holds a state of the user's a turn there refuses for now: `trust` (0), the turn (exit 73) and
/// `relocate` (2, nothing changed) say that state is the user's and goes on with the session,
/// name `fix` as the way to go on there, and moving its state away then `sticky relocate` as
/// the other way.
#[track_caller]
fn held_is_said(env: &TestEnv, here: &Path, fix: &str) {
    let said = [
        "holds a sticky state of yours",
        "that goes on with this session",
        "a copy of the project rather than a move",
        fix,
        "new --carry",
        &format!("mv {0} {0}.copy", env.project.join(".sticky").display()),
        "then run `sticky relocate` here again",
    ];
    let trust = env.ok_in(here, ["trust"]);
    let turn = env.sticky(["a turn here"]).current_dir(here).run();
    turn.assert_code(73);
    let relocate = env.sticky(["relocate"]).current_dir(here).run();
    relocate.assert_code(2);
    for output in [&turn, &trust, &relocate] {
        for needle in said {
            output.assert_stderr_contains(needle);
        }
        assert!(
            !output.stderr.contains("no state of yours"),
            "{}",
            output.describe()
        );
    }
}

/// Review 9: an original refused for now for a reason the user fixes there is still the
/// original. (a) The tree was shared with its group (`chmod -R g+w`): the copy's trust, turn and
/// relocate name every file to `chmod go-w` and the other way; relocate takes nothing, and the
/// original goes on once fixed. (b) The user's key was lost, and the copy was trusted first (a
/// new key): they name `sticky -C ORIGINAL trust`, after which the original goes on.
#[test]
fn relocate_in_a_copy_refuses_an_original_held_for_now_and_names_both_ways_out() {
    let env = TestEnv::new();
    let original = env.turn("in the original").session;
    let copy = env.copy_project("copy");
    let state = env.project.join(".sticky");
    let chmod = |mode: &str, path: &Path| {
        let done = std::process::Command::new("chmod")
            .args(["-R", mode])
            .arg(path)
            .status();
        assert!(done.is_ok_and(|status| status.success()), "chmod {mode}");
    };
    chmod("g+w", &env.project);
    let db = state.join("sticky.db");
    let writable = format!("chmod go-w {} {}", state.display(), db.display());
    held_is_said(&env, &copy, &writable);
    chmod("go-w", &state);
    assert_eq!(env.ok(["back in the original"]).answer().session, original);
    let key = env.home.join(".local/share/sticky/key");
    std::fs::remove_file(key).expect("lose the key");
    let adopt = format!("`sticky -C {} trust`", env.project.display());
    held_is_said(&env, &copy, &adopt);
    env.ok(["trust"]);
    assert_eq!(env.ok(["again"]).answer().session, original);
}

/// Review 10: review 9's finding from a restored backup that another account's `cp -r` made
/// (`sudo cp -r BACKUP/.sticky p/`: root's files). A turn in the original says "is owned by another
/// user ... if it is yours, take it over (chown -R ...)", and its database goes on with the
/// session; yet from the copy that state counts as "no state of yours", trust there offers
/// relocate, and relocate takes the original's session: after the chown the original's turn is
/// refused (73) as "kept for another directory". (As root here, the other account is nobody.)
#[test]
fn review_relocate_in_a_copy_takes_the_session_of_an_original_restored_as_another_account() {
    if !crate::support::other_user::is_root() {
        return;
    }
    let env = TestEnv::new();
    let original = env.turn("in the original").session;
    let copy = env.copy_project("copy");
    env.ok_in(&copy, ["trust"]);
    let state = env.project.join(".sticky");
    let chown = |uid: &str| {
        let done = std::process::Command::new("chown")
            .args(["-R", uid])
            .arg(&state)
            .status();
        assert!(done.is_ok_and(|status| status.success()), "chown {uid}");
    };
    chown("65534:65534");
    env.sticky(["in the original"])
        .run()
        .assert_code(71)
        .assert_stderr_contains("if it is yours, take it over");
    // Relocate in the copy refuses, as for review 9's original held for now; trust, the turn
    // and relocate there name the fix (`chown`) beside the other way out.
    held_is_said(&env, &copy, &format!("chown -R 0 {}", state.display()));
    chown("0:0");
    assert_eq!(env.ok(["back in the original"]).answer().session, original);
}

/// Review 10, M1 as the review did it: the original's state restored from a backup by another
/// account (`cp -r`, so new files its stamp does not name). From the copy, the original is held:
/// trust, the turn and relocate name `chown -R` and then `trust` there; once the user follows
/// them, the original goes on with its session. A FIFO of another account stays no original
/// (`review_relocate_carries_a_session_whose_old_path_holds_another_users_sticky`).
#[test]
fn an_original_restored_by_another_account_is_held_until_taken_over_and_trusted() {
    if !crate::support::other_user::is_root() {
        return;
    }
    let env = TestEnv::new();
    let original = env.turn("in the original").session;
    let copy = env.copy_project("copy");
    env.ok_in(&copy, ["trust"]);
    let state = env.project.join(".sticky");
    let backup = env.scratch.join("backup");
    std::fs::rename(&state, &backup).expect("lose the state");
    let run = |program: &str, args: &[&std::ffi::OsStr]| {
        let done = std::process::Command::new(program).args(args).status();
        assert!(done.is_ok_and(|status| status.success()), "{program}");
    };
    run(
        "cp",
        &["-r".as_ref(), backup.as_os_str(), state.as_os_str()],
    );
    run(
        "chown",
        &["-R".as_ref(), "65534:65534".as_ref(), state.as_os_str()],
    );
    let fix = format!(
        "take it over there (chown -R 0 {}), then adopt it (`sticky -C {} trust`)",
        state.display(),
        env.project.display()
    );
    held_is_said(&env, &copy, &fix);
    run("chown", &["-R".as_ref(), "0:0".as_ref(), state.as_os_str()]);
    env.ok(["trust"]);
    assert_eq!(env.ok(["back in the original"]).answer().session, original);
}

/// A turn in `moved`, a project that moved, is refused (exit 73) with `said` of its old path and
/// `sticky relocate` as the way, never as a copy of the project.
#[track_caller]
fn relocate_is_the_way(env: &TestEnv, moved: &Path, said: &str) {
    let refused = env.sticky(["after the move"]).current_dir(moved).run();
    refused
        .assert_code(73)
        .assert_stderr_contains(said)
        .assert_stderr_contains("run `sticky relocate`");
    assert!(
        !refused.stderr.contains("a copy of"),
        "{}",
        refused.describe()
    );
}

/// Review 9: review 8's M2 from another side. The original's state is the user's own and keeps
/// the session, but a turn there refuses it for a reason the user fixes there (group-writable
/// after a `chmod -R g+w` to share the tree; the same with a lost key before `sticky trust` ran
/// there). `standing::old_path` counts any state a turn there refuses as no original's: trust
/// in the copy says "sticky uses no state of yours ... if the project moved here, run `sticky
/// relocate`"; relocate moves the original's session into the copy, and once the original's
/// mode is fixed (as sticky told), its next turn is refused: its session is gone.
#[test]
fn review_relocate_in_a_copy_takes_the_session_of_an_original_whose_state_has_a_fixable_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = TestEnv::new();
    let first = env.turn("in the original");
    let copy = env.copy_project("copy");
    let state = env.project.join(".sticky");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o770)).expect("chmod");
    env.ok_in(&copy, ["trust"]);
    let relocated = env.sticky(["relocate"]).current_dir(&copy).run();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let back = env.ok(["back in the original"]);
    assert_eq!(back.answer().session, first.session);
    relocated
        .assert_code(2)
        .assert_stderr_contains("a copy of the project");
}

/// Review 10: review 9's lost key, with a session only the vaults keep (Claude Code swept its
/// transcript). The copy is trusted first (a new key), then the original, as each turn asks:
/// the original's re-adopted vault copy now counts as later than the copy's, so the original's
/// turn is refused (73) as a session "another project of this HOME keeps in sticky's vault"
/// (naming `sticky -C COPY`), while the copy's turn is refused as a copy of the original: each
/// points at the other, and no directory goes on with the session.
#[test]
fn review_a_lost_key_leaves_a_vault_kept_session_to_neither_the_original_nor_its_copy() {
    original_goes_on_after_its_trust_with_the_key_lost(|env| {
        std::fs::remove_file(env.home.join(".local/share/sticky/key")).expect("lose the key");
    });
}

/// A session only the vaults keep, of a project copied, whose key `lose` loses: trusted after
/// its copy, the original goes on with it, and the copy is refused, with the way to go on there
/// and a session of its own, losing nothing (reviews 10 and 11, M3).
fn original_goes_on_after_its_trust_with_the_key_lost(lose: impl Fn(&TestEnv)) {
    let env = TestEnv::new();
    let first = env.turn("in the original").session;
    let copy = env.copy_project("copy");
    std::fs::remove_file(env.transcript(&first)).expect("sweep the transcript");
    lose(&env);
    env.ok_in(&copy, ["trust"]);
    env.ok(["trust"]);
    assert_eq!(env.ok(["back in the original"]).answer().session, first);
    let turn = env.sticky(["in the copy"]).current_dir(&copy).run();
    turn.assert_code(73).assert_stderr_contains(&format!(
        "run sticky in {} to go on with it there",
        env.project.display()
    ));
    env.sticky(["relocate"])
        .current_dir(&copy)
        .run()
        .assert_code(2);
    assert_eq!(env.ok(["again in the original"]).answer().session, first);
}

/// Review 11: review 10's M1 as the review ran it, by a user who is not root. The backup root
/// restores (`sudo cp -r BACKUP/.sticky p/`) keeps sticky's modes (0700, 0600), so the user
/// cannot read the restored state: `trust::owned_by_another` then files it as "no state of
/// yours" (review 10's fix asks that the user can open it, which root always can, as the test
/// above runs). A turn there still says "if it is yours, take it over (chown -R ...)", yet
/// relocate in the copy takes the session, and after the chown and trust the original's turn
/// is refused (73) as a session kept for the copy.
#[test]
fn review_relocate_in_a_copy_takes_the_session_of_an_original_restored_by_root_unreadable() {
    // Root restores the original's lost state from a backup: root's files, sticky's modes.
    relocate_waits_for_an_original_root_restored("sticky-rv11-", |original, run| {
        let state = original.join(".sticky");
        let backup = original.with_file_name("backup");
        std::fs::rename(&state, &backup).expect("lose the state");
        run(
            "cp",
            &["-r".as_ref(), backup.as_os_str(), state.as_os_str()],
        );
        state
    });
}

/// Review 12: review 11's M1 when root restores the database alone (`sudo cp BACKUP/sticky.db
/// p/.sticky/`) into the user's own `.sticky/`: the file is root's, mode 0600, so the user cannot
/// read it. `trust::restored_by_root` asks that root owns the `.sticky/` directory, so the state
/// is filed as no original's; a turn there says "if it is yours, take it over (chown -R ...)",
/// yet relocate in the copy takes the session, and after the chown and trust the original's
/// turn is refused (73) as a session kept for the copy.
#[test]
fn review_relocate_in_a_copy_takes_the_session_of_an_original_whose_database_alone_root_restored() {
    // The database alone is lost; root restores it from a backup: root's file, sticky's mode.
    relocate_waits_for_an_original_root_restored("sticky-rv12-", |original, run| {
        let db = original.join(".sticky/sticky.db");
        let backup = original.with_file_name("backup.db");
        std::fs::rename(&db, &backup).expect("lose the database");
        for companion in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{companion}", db.display()));
        }
        run("cp", &[backup.as_os_str(), db.as_os_str()]);
        db
    });
}

/// Runs a program (as root, the test's user), which must succeed.
type RunAsRoot<'a> = &'a dyn Fn(&str, &[&std::ffi::OsStr]);

/// A project turned once by a user who is not root (nobody), copied and trusted there; then
/// `restore` puts back (as root) part of the original's state, root's and unreadable to the
/// user, and names what root restored. A turn there says "if it is yours, take it over";
/// relocate in the copy refuses, naming `chown -R` of what root restored and the other ways
/// out; after that chown and trust, the original goes on with its session (reviews 11 and 12).
fn relocate_waits_for_an_original_root_restored(
    prefix: &str,
    restore: impl Fn(&Path, RunAsRoot<'_>) -> std::path::PathBuf,
) {
    use crate::support::other_user::{SharedPlace, as_user, give_to_nobody, has_setpriv, is_root};
    if !is_root() || !has_setpriv() {
        return;
    }
    let place = SharedPlace::new(prefix);
    let (home, original) = (&place.home, &place.project);
    give_to_nobody(original);
    let copy = original.with_file_name("copy");
    let path = SharedPlace::path();
    let sticky = |dir: &Path, args: &[&str]| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_sticky"));
        command
            .args(args)
            .current_dir(dir)
            .env("HOME", home)
            .env("PATH", &path)
            .env("FAKE_CLAUDE_LOG", home.join("agent.jsonl"));
        let output = as_user(&command).output().expect("run sticky");
        let out = String::from_utf8_lossy(&output.stdout).into_owned();
        let err = String::from_utf8_lossy(&output.stderr).into_owned();
        (output.status.code(), out, err)
    };
    let session = |out: &str| {
        out.split("session=")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_owned)
    };
    let run = |program: &str, args: &[&std::ffi::OsStr]| {
        let done = std::process::Command::new(program).args(args).status();
        assert!(done.is_ok_and(|status| status.success()), "{program}");
    };
    let (code, out, err) = sticky(original, &["one"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let first = session(&out).expect("a session");
    run(
        "cp",
        &["-a".as_ref(), original.as_os_str(), copy.as_os_str()],
    );
    let (code, out, err) = sticky(&copy, &["trust"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let restored = restore(original, &run);
    let (code, _, err) = sticky(original, &["two"]);
    assert_eq!(code, Some(71), "{err}");
    assert!(err.contains("if it is yours, take it over"), "{err}");
    let (relocate, _, relocated) = sticky(&copy, &["relocate"]);
    // Refused, naming the fix there and the other way out.
    assert_eq!(relocate, Some(2), "{relocated}");
    for said in [
        format!("chown -R 65534 {}", restored.display()),
        format!("sticky -C {} trust", original.display()),
        "move its state away".to_owned(),
    ] {
        assert!(relocated.contains(&said), "{said}: {relocated}");
    }
    run(
        "chown",
        &["-R".as_ref(), "65534:65534".as_ref(), restored.as_os_str()],
    );
    let (code, out, err) = sticky(original, &["trust"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let (code, out, err) = sticky(original, &["three"]);
    assert_eq!(
        (code, session(&out)),
        (Some(0), Some(first)),
        "relocate in the copy gave {relocate:?}: {relocated}\nthe original's turn: {err}"
    );
}

/// Review 11: review 10's lost key (M3 b) as it is usually lost, with the directory that holds
/// it (`rm -rf ~/.local/share/sticky`, a HOME restored without it). That directory also holds
/// the list of projects, which `project::stamped_by_lost_key` asks for, so the original's state
/// no longer counts as the user's own: trusted after its copy, the original re-adopts its vault
/// copies and its turn is refused (73) as a session the copy keeps, while the copy's turn is
/// refused as a copy of the original. Neither goes on with the session.
#[test]
fn review_a_lost_data_directory_leaves_a_vault_kept_session_to_neither_the_original_nor_its_copy() {
    original_goes_on_after_its_trust_with_the_key_lost(|env| {
        let data = env.home.join(".local/share/sticky");
        std::fs::remove_dir_all(data).expect("lose the directory");
    });
}

/// Review 12: review 11's M3 (b) with the key kept and the original's state restored from a
/// backup instead (`cp -a BACKUP/.sticky p/`, new files): its stamp names another inode, so
/// neither `stamped_by_lost_key` nor `stamped_before_key` counts it as the user's own, and its
/// trust after the copy's re-adopts its vault copies as the later claim. The original's turn is
/// refused (73) as a session "another project of this HOME keeps in sticky's vault" (go on
/// with it in the copy), and the copy's as belonging to the original (go on with it there).
#[test]
fn review_a_restored_backup_leaves_a_vault_kept_session_to_neither_the_original_nor_its_copy() {
    original_goes_on_after_its_trust_with_the_key_lost(|env| {
        let state = env.project.join(".sticky");
        let backup = env.project.with_file_name("backup");
        let copied = std::process::Command::new("cp")
            .arg("-a")
            .arg(&state)
            .arg(&backup)
            .status();
        assert!(copied.is_ok_and(|status| status.success()), "cp -a");
        std::fs::remove_dir_all(&state).expect("lose the state");
        std::fs::rename(&backup, &state).expect("restore the backup");
    });
}

/// Review 13: review 12's M2 (a state a turn refuses for now may keep the session) on the
/// turn's side. Project p moved to q (`mv`, `sticky relocate`), and q ran a turn; claude swept
/// the session's files, so only the vaults keep it. An older backup of p's `.sticky/` is
/// restored in p and trusted while q's `.sticky/` is group-writable (`chmod -R g+w`): the
/// holder q, whose state a turn there refuses for now, is not counted, so p's turn puts back
/// its older vault copy (without q's turn) and resumes the session; once q's mode is fixed as
/// its turn says, q is refused (73) as a session kept for p. With q's mode intact, p's turn is
/// refused (73) and q goes on.
#[test]
fn review_an_old_backup_takes_the_session_of_its_moved_holder_whose_state_has_a_fixable_mode() {
    let a = TestEnv::new();
    let first = a.turn("one");
    let p = a.project.clone();
    let q = a.root().join("q");
    let chmod = |dir: &Path, mode: &str| {
        let done = std::process::Command::new("chmod")
            .args(["-R", mode])
            .arg(dir.join(".sticky"))
            .status();
        assert!(done.is_ok_and(|status| status.success()), "chmod -R {mode}");
    };
    let copy = |from: &Path, to: &Path| {
        let done = std::process::Command::new("cp")
            .arg("-a")
            .args([from, to])
            .status();
        assert!(done.is_ok_and(|status| status.success()), "cp -a");
    };
    let backup = a.scratch.join("backup");
    copy(&p.join(".sticky"), &backup);
    std::fs::rename(&p, &q).expect("move the project");
    a.sticky(["relocate"])
        .current_dir(&q)
        .run()
        .assert_success();
    let two = a.sticky(["two"]).current_dir(&q).run();
    two.assert_success();
    assert_eq!(two.answer().session, first.session);
    std::fs::remove_dir_all(a.home.join(".claude/projects")).expect("sweep the transcripts");
    std::fs::create_dir(&p).expect("p again");
    copy(&backup, &p.join(".sticky"));
    chmod(&q, "g+w");
    a.sticky(["trust"]).current_dir(&p).run();
    let in_p = a.sticky(["three"]).current_dir(&p).run();
    chmod(&q, "g-w");
    let in_q = a.sticky(["four"]).current_dir(&q).run();
    assert_eq!(
        (in_p.code, in_q.code),
        (Some(73), Some(0)),
        "p:\n{}\nq:\n{}",
        in_p.describe(),
        in_q.describe()
    );
    assert_eq!(in_q.answer().saw, ["one", "two"]);
}

/// Review 15, L1: the command a copy's refusal gives to go on in the original is one a shell
/// reads back as given, whatever the original's `STICKY_DB` path holds (here a space): pasted
/// into `sh`, it goes on with the original's session there.
#[test]
fn the_way_to_the_original_given_to_a_copy_runs_as_given_in_a_shell() {
    let env = TestEnv::new();
    let database = env.scratch.join("db dir/s.db");
    let (first, copy) = a_copy_of_an_original_whose_state_is(&env, &database);
    env.ok_in(&copy, ["trust"]);
    let refused = env.sticky(["in the copy"]).current_dir(&copy).run();
    refused.assert_code(73);
    let command = refused
        .stderr
        .split("run `")
        .find_map(|rest| {
            rest.split_once("` to go on with it there")
                .map(|(it, _)| it)
        })
        .unwrap_or_else(|| panic!("no way to the original: {}", refused.stderr));
    assert!(
        command.contains('\''),
        "the path with a space is quoted: {command}"
    );
    let bin = Path::new(env!("CARGO_BIN_EXE_sticky"))
        .parent()
        .expect("its directory");
    let path = format!(
        "{}:{}:{}",
        bin.display(),
        crate::support::fakes_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let pasted = env
        .program("sh", ["-c", &format!("{command} \"back in the original\"")])
        .current_dir(&copy)
        .env("PATH", path)
        .run();
    pasted.assert_success();
    assert_eq!(pasted.answer().session, first.answer().session);
}

/// A turn in the env's project with its state in `database` (`STICKY_DB`), then a copy of the
/// project given a copy of that database as its own `.sticky/sticky.db`: the original's first
/// turn, and the copy's directory.
fn a_copy_of_an_original_whose_state_is(env: &TestEnv, database: &Path) -> (Output, PathBuf) {
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    let first = env
        .sticky(["in the original"])
        .env("STICKY_DB", database)
        .run();
    first.assert_success();
    let copy = env.copy_project("copy");
    std::fs::create_dir_all(copy.join(".sticky")).expect("the copy's state directory");
    std::fs::copy(database, copy.join(".sticky/sticky.db")).expect("copy the database");
    (first, copy)
}

/// A copy of the project trusted by its user, whose state root then restores from a backup
/// (root's files, sticky's modes: unreadable to the user), may keep the original's session, as
/// far as anyone can tell from here; yet nothing it holds can come before the original's own
/// copy, which its turns made: the original goes on with its session (review 15's M1 fix
/// counts such a state, and a copy that cannot be read is taken for one made by turns).
#[test]
fn an_unreadable_copy_restored_by_root_never_comes_before_the_original() {
    use crate::support::other_user::{SharedPlace, as_user, give_to_nobody, has_setpriv, is_root};
    use std::process::Command;
    if !is_root() || !has_setpriv() {
        return;
    }
    let place = SharedPlace::new("sticky-unreadable-copy-");
    let (home, original) = (&place.home, &place.project);
    give_to_nobody(original);
    let nobody = |dir: &Path, args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sticky"));
        command
            .args(args)
            .current_dir(dir)
            .env("HOME", home)
            .env("PATH", SharedPlace::path())
            .env("FAKE_CLAUDE_LOG", home.join("agent.jsonl"));
        as_user(&command).output().expect("run sticky")
    };
    let session = |out: &[u8]| {
        String::from_utf8_lossy(out)
            .split("session=")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_owned)
    };
    let one = nobody(original, &["one"]);
    assert!(one.status.success(), "{one:?}");
    let copy = original.with_file_name("copy");
    let copied = Command::new("cp")
        .arg("-a")
        .args([original, &copy])
        .status();
    assert!(copied.is_ok_and(|status| status.success()), "cp -a");
    let trusted = nobody(&copy, &["trust"]);
    assert!(trusted.status.success(), "{trusted:?}");
    std::fs::remove_dir_all(home.join(".claude/projects")).expect("sweep the transcripts");
    // Root restores the copy's state from a backup: root's files, sticky's modes.
    let state = copy.join(".sticky");
    let backup = copy.with_file_name("backup");
    std::fs::rename(&state, &backup).expect("lose the copy's state");
    let restored = Command::new("cp")
        .arg("-r")
        .args([&backup, &state])
        .status();
    assert!(restored.is_ok_and(|status| status.success()), "cp -r");
    let two = nobody(original, &["two"]);
    assert_eq!(
        (two.status.code(), session(&two.stdout)),
        (Some(0), session(&one.stdout)),
        "{two:?}"
    );
}

/// Review 16: one `STICKY_DB` set for every project (an `export STICKY_DB=...` in a shell's
/// profile, a plausible mistake) makes two projects share a database and its thread `main`.
/// A turn in the second project q is refused (73) as a session of the first, p, and the first
/// way out it gives is `sticky new` ("the old one stays on record"); that ends p's live
/// session, so p's next turn is refused as q's and p cannot resume its own session again
/// (relocate there calls p the copy). p still exists, with this very database as the state a
/// turn there uses: its session should stay p's (`new` refused naming the shared database, or
/// a thread of q's own), and p's next turn resume it.
#[test]
fn review_new_in_a_project_sharing_sticky_db_ends_the_other_projects_session() {
    let mut env = TestEnv::new();
    let database = env.home.join(".local/state/sticky/sticky.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    env.set_var("STICKY_DB", &database);
    let first = env.turn("one in p");
    let q = env.root().join("q");
    std::fs::create_dir_all(&q).expect("a second project");
    env.git(&q, &["init", "-q"]);
    env.sticky(["one in q"])
        .current_dir(&q)
        .run()
        .assert_code(73);
    // The first way out the refusal gives.
    let _ = env.sticky(["new"]).current_dir(&q).run();
    let _ = env.sticky(["two in q"]).current_dir(&q).run();
    let back = env.sticky(["two in p"]).run();
    back.assert_success();
    assert_eq!(back.answer().session, first.session);
}

/// Review 16: a project that keeps its state in `STICKY_DB` (set by direnv or a shell's
/// profile), run once from a shell without it (a new terminal, an editor's task, cron), starts
/// a fresh session in a new `.sticky/` without a word: the list of projects names this very
/// directory with its `STICKY_DB` database, which goes on with the conversation, yet the turn
/// makes a second state beside it and a session the user did not ask for. It should resume the
/// conversation or refuse, naming the `STICKY_DB` database the list has for this directory.
#[test]
fn review_a_turn_without_the_projects_sticky_db_silently_starts_a_fresh_session() {
    let env = TestEnv::new();
    let database = env.home.join(".local/state/sticky/p.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    let first = env.sticky(["one"]).env("STICKY_DB", &database).run();
    first.assert_success();
    let two = env.sticky(["two"]).run();
    if two.code == Some(0) {
        assert_eq!(
            two.answer().session,
            first.answer().session,
            "a fresh session, silently: {}",
            two.describe()
        );
    } else {
        two.assert_stderr_contains(&database.display().to_string());
    }
}

/// Two projects sharing one `STICKY_DB`: in q, `sticky forget` and `sticky import --replace` of
/// thread main, which is p's conversation, refuse (73) before deleting anything, naming p and
/// the way to do it there; p goes on with its session, and both do what they say there.
#[test]
fn forget_and_import_replace_in_a_project_sharing_sticky_db_leave_the_others_thread() {
    let mut env = TestEnv::new();
    let database = env.home.join(".local/state/sticky/sticky.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    env.set_var("STICKY_DB", &database);
    let first = env.turn("one in p");
    // A conversation from another machine (another HOME), imported over thread main in q.
    let elsewhere = TestEnv::new();
    elsewhere.turn("on another machine");
    let bundle = elsewhere.scratch.join("b.sticky");
    elsewhere.ok(["export", "-o", bundle.to_str().expect("UTF-8")]);
    let q = env.root().join("q");
    std::fs::create_dir_all(&q).expect("a second project");
    env.git(&q, &["init", "-q"]);
    let there = format!(
        "STICKY_DB={} sticky -C {}",
        database.display(),
        env.project.display()
    );
    let forget = env.sticky(["forget", "--yes"]).current_dir(&q).run();
    forget
        .assert_code(73)
        .assert_stderr_contains(&format!(
            "thread main is the conversation of directory {}",
            env.project.display()
        ))
        .assert_stderr_contains(&format!("(`{there} forget`)"));
    let replace = env
        .sticky([
            "import",
            "--replace",
            "--yes",
            bundle.to_str().expect("UTF-8"),
        ])
        .current_dir(&q)
        .run();
    replace
        .assert_code(73)
        .assert_stderr_contains(&format!("(`{there} import --replace FILE`)"));
    let two = env.turn("two in p");
    assert_eq!(two.session, first.session);
    assert_eq!(two.saw, ["one in p"]);
    env.ok([
        "import",
        "--replace",
        "--yes",
        bundle.to_str().expect("UTF-8"),
    ]);
    assert_eq!(env.turn("after the import").saw, ["on another machine"]);
    env.ok(["forget", "--yes"]);
    assert_eq!(env.turn("after forget").saw, Vec::<String>::new());
}

/// Review 16, M3, what is said and every way out: two projects sharing one `STICKY_DB` (set
/// for both, as a shell profile's line does). In q, the turn (73), `sticky new` with or without
/// a prompt (73) and `relocate` (2) all refuse p's session alike, naming the shared database;
/// nothing in it changes. The ways out they name lose nothing: q's own `.sticky/` (`STICKY_DB`
/// unset, which the list's entry for q with the shared database does not block: that keeps no
/// session of q's), and a thread of q's own; p goes on with its session throughout.
#[test]
fn a_project_sharing_sticky_db_keeps_the_others_session_whatever_is_asked_here() {
    let mut env = TestEnv::new();
    let database = env.home.join(".local/state/sticky/sticky.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    env.set_var("STICKY_DB", &database);
    let first = env.turn("one in p");
    let q = env.root().join("q");
    std::fs::create_dir_all(&q).expect("a second project");
    env.git(&q, &["init", "-q"]);
    let runs = env.agent_runs().len();
    let shared = |output: &Output| {
        output.assert_stderr_contains(&format!(
            "belongs to directory {}, which still exists and uses this very database ({}) too: \
             the two directories share one database",
            env.project.display(),
            database.display()
        ));
        output.assert_stderr_contains("`sticky -t NAME \"...\"`");
        output.assert_stderr_contains(&format!(
            "unset STICKY_DB for this directory to keep its state in {} (`env -u STICKY_DB \
             sticky \"...\"`)",
            q.join(".sticky").display()
        ));
        output.assert_stderr_contains(&format!(
            "`STICKY_DB={} sticky -C {} \"...\"` goes on with the session there",
            database.display(),
            env.project.display()
        ));
        assert!(
            !output.stderr.contains("run `sticky new`") && !output.stderr.contains("relocate`"),
            "no way out that ends p's session: {}",
            output.describe()
        );
    };
    for (args, code) in [
        (&["one in q"][..], 73),
        (&["new"], 73),
        (&["new", "fresh in q"], 73),
        (&["relocate"], 2),
    ] {
        let refused = env.sticky(args).current_dir(&q).run();
        refused.assert_code(code);
        shared(&refused);
    }
    let status = env.ok_in(&q, ["sessions", "--json"]).json();
    assert_eq!(
        status["sessions"].as_array().map(Vec::len),
        Some(1),
        "no session was ended or added: {status}"
    );
    assert_eq!(env.agent_runs().len(), runs, "the agent never ran in q");
    // q's own `.sticky/`: STICKY_DB unset there.
    let own_state = env
        .sticky(["one in q"])
        .current_dir(&q)
        .env_remove("STICKY_DB")
        .run();
    own_state.assert_success();
    assert!(q.join(".sticky/sticky.db").is_file());
    assert_eq!(own_state.answer().saw, Vec::<String>::new());
    // A thread of its own, in a project r sharing the database as q did (q has taken the other
    // way out: a turn there with STICKY_DB set now names q's own `.sticky/`, review 17's M1).
    let r = env.root().join("r");
    std::fs::create_dir_all(&r).expect("a third project");
    env.git(&r, &["init", "-q"]);
    env.sticky(["one in r"])
        .current_dir(&r)
        .run()
        .assert_code(73);
    let own_thread = env.ok_in(&r, ["-t", "r-work", "two in r"]).answer();
    assert_ne!(own_thread.session, first.session);
    assert_eq!(env.last_agent_run().cwd(), r);
    let after = env
        .sticky(["-t", "q-work", "two in q"])
        .current_dir(&q)
        .run();
    after.assert_code(2);
    after.assert_stderr_contains("env -u STICKY_DB");
    // p goes on with its session.
    let back = env.turn("two in p");
    assert_eq!(back.session, first.session);
    assert_eq!(back.saw, ["one in p"]);
}

/// Review 16, M3's boundary: the directory a session of the shared database was recorded for
/// is gone (the project moved, with its `STICKY_DB`): the turn names `relocate`, which carries
/// the session, as before. The list still names the gone directory with this database, so its
/// session may be another project's that moved (review 20, M4): no bare `sticky new` is offered.
#[test]
fn a_sticky_db_project_that_moved_still_relocates() {
    let mut env = TestEnv::new();
    let database = env.home.join(".local/state/sticky/sticky.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    env.set_var("STICKY_DB", &database);
    let first = env.turn("before the move");
    let moved = env.move_project();
    env.sticky(["after the move"])
        .current_dir(&moved)
        .run()
        .assert_code(73)
        .assert_stderr_contains("which is gone, and which used this very database")
        .assert_stderr_contains("If this project moved here from ")
        .assert_stderr_contains("run `sticky relocate` to go on with it here");
    env.ok_in(&moved, ["relocate"]);
    let after = env.ok_in(&moved, ["after the move"]).answer();
    assert_eq!(after.session, first.session);
}

/// Review 16, M4, the way out: the refusal of a turn run without the project's `STICKY_DB`
/// (exit 2) creates nothing, and names the command that goes on with the database the list
/// has for the directory, which does; `sticky new` starts a separate state in `.sticky/` on
/// purpose, which later turns without `STICKY_DB` go on with.
#[test]
fn a_turn_without_the_projects_sticky_db_names_it_and_creates_nothing() {
    let env = TestEnv::new();
    let database = env.home.join(".local/state/sticky/p.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    let first = env.sticky(["one"]).env("STICKY_DB", &database).run();
    first.assert_success();
    let runs = env.agent_runs().len();
    let refused = env.sticky(["two"]).run();
    refused.assert_code(2);
    refused.assert_stderr_contains(&format!(
        "your list of projects names {} with the database {} (STICKY_DB), which keeps a live \
         session of this directory, but STICKY_DB is not set here",
        env.project.display(),
        database.display()
    ));
    let go_on = format!(
        "STICKY_DB={} sticky -C {} \"...\"",
        database.display(),
        env.project.display()
    );
    refused.assert_stderr_contains(&format!("run `{go_on}`"));
    refused.assert_stderr_contains(&format!("run `sticky -C {} new`", env.project.display()));
    assert!(!env.project.join(".sticky").exists(), "nothing created");
    assert_eq!(env.agent_runs().len(), runs, "the agent never ran");
    // What it names goes on with the conversation.
    let two = env.sticky(["two"]).env("STICKY_DB", &database).run();
    two.assert_success();
    assert_eq!(two.answer().session, first.answer().session);
    // `sticky new` starts a state here on purpose, and plain turns go on with it.
    env.ok(["new"]);
    let apart = env.turn("apart");
    assert_ne!(apart.session, first.answer().session);
    assert_eq!(env.turn("apart again").session, apart.session);
}

/// Review 16, M4's reverse direction: a project that used its `.sticky/`, then run with a
/// `STICKY_DB` naming a database that does not exist yet (a shell profile's line set since),
/// is refused (2) rather than started afresh there: the refusal names `.sticky/` and the way
/// back (`STICKY_DB` unset), creates nothing, and `sticky new` starts the new database on purpose.
#[test]
fn a_turn_with_a_new_sticky_db_names_the_projects_own_sticky_dir() {
    let env = TestEnv::new();
    let first = env.turn("one");
    let database = env.home.join(".local/state/sticky/new.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    let refused = env.sticky(["two"]).env("STICKY_DB", &database).run();
    refused.assert_code(2);
    refused.assert_stderr_contains(&format!(
        "the project {} has its .sticky/ ({}), which keeps a live session of this directory, \
         but STICKY_DB names {}, which does not exist yet",
        env.project.display(),
        env.project.join(".sticky/sticky.db").display(),
        database.display()
    ));
    refused.assert_stderr_contains(&format!(
        "run `env -u STICKY_DB sticky -C {} \"...\"`",
        env.project.display()
    ));
    let new = format!(
        "STICKY_DB={} sticky -C {} new",
        database.display(),
        env.project.display()
    );
    refused.assert_stderr_contains(&format!("run `{new}`"));
    let created: Vec<_> = std::fs::read_dir(database.parent().expect("a parent"))
        .expect("the state directory")
        .collect();
    assert!(created.is_empty(), "nothing created: {created:?}");
    assert_eq!(env.turn("two").session, first.session);
    env.sticky(["new"])
        .env("STICKY_DB", &database)
        .run()
        .assert_success();
    let fresh = env.sticky(["apart"]).env("STICKY_DB", &database).run();
    fresh.assert_success();
    assert_ne!(fresh.answer().session, first.session);
}

/// Review 16: review 8's case (`review_relocate_in_a_copy_takes_the_session_of_an_original_whose_
/// state_is_elsewhere`) once sticky's data directory is lost (the key, and the list of projects
/// that named the original's `STICKY_DB` database). The original keeps its state in
/// `STICKY_DB`; a copy of the project gets a copy of that database as its `.sticky/sticky.db`.
/// `trust` in the copy calls the original "a directory made again at that path" and says to
/// run `sticky relocate`, which moves the original's session (its transcript too, which the
/// agent still had) into the copy; the original, trusted again for the lost key, is refused
/// (73) as a session another directory keeps. A state that a lost key left unstamped keeps its
/// sessions against a copy (docs/security.md), whether it is a `.sticky/` or a `STICKY_DB`.
#[test]
fn review_relocate_in_a_copy_takes_the_session_of_a_sticky_db_original_once_the_list_is_lost() {
    let env = TestEnv::new();
    let database = env.home.join(".local/state/sticky/p.db");
    let (first, copy) = a_copy_of_an_original_whose_state_is(&env, &database);
    std::fs::remove_dir_all(env.home.join(".local/share/sticky")).expect("lose the directory");
    env.ok_in(&copy, ["trust"]);
    let relocated = env.sticky(["relocate"]).current_dir(&copy).run();
    env.sticky(["trust"]).env("STICKY_DB", &database).run();
    let back = env
        .sticky(["back in the original"])
        .env("STICKY_DB", &database)
        .run();
    back.assert_success();
    assert_eq!(back.answer().session, first.answer().session);
    relocated.assert_code(2);
}

/// Review 16, M5's fix, with only the list of projects lost (the key kept): the copy's database
/// records where `STICKY_DB` kept the original's (`kept_at`, carried by a copy of the file), so
/// `trust` in the copy still calls it a copy of a project that still exists and names the way to
/// go on there with that database, and `relocate` refuses (2), as while the list named it.
#[test]
fn a_copy_of_a_sticky_db_project_finds_the_original_by_what_its_database_records() {
    let env = TestEnv::new();
    let database = env.home.join(".local/state/sticky/p.db");
    let (first, copy) = a_copy_of_an_original_whose_state_is(&env, &database);
    std::fs::remove_file(env.home.join(".local/share/sticky/projects")).expect("lose the list");
    let there = format!(
        "STICKY_DB={} sticky -C {}",
        database.canonicalize().expect("the database").display(),
        env.project.display()
    );
    env.ok_in(&copy, ["trust"])
        .assert_stderr_contains("which still exists, so this is a copy of that project")
        .assert_stderr_contains(&there);
    let relocated = env.sticky(["relocate"]).current_dir(&copy).run();
    relocated
        .assert_code(2)
        .assert_stderr_contains("a copy of the project")
        .assert_stderr_contains(&there);
    let back = env
        .sticky(["back in the original"])
        .env("STICKY_DB", &database)
        .run();
    back.assert_success();
    assert_eq!(back.answer().session, first.answer().session);
}

/// Review 16, M5's way out: with the whole data directory lost, the original's database is
/// unstamped for the new key, so `relocate` in the copy says the original's state is refused
/// there for now, and names the `trust` to run there with its `STICKY_DB`.
#[test]
fn relocate_in_a_copy_names_the_trust_of_a_sticky_db_original_once_the_key_is_lost() {
    let env = TestEnv::new();
    let database = env.home.join(".local/state/sticky/p.db");
    let (_, copy) = a_copy_of_an_original_whose_state_is(&env, &database);
    std::fs::remove_dir_all(env.home.join(".local/share/sticky")).expect("lose the directory");
    env.ok_in(&copy, ["trust"]);
    let there = format!(
        "STICKY_DB={} sticky -C {} trust",
        database.canonicalize().expect("the database").display(),
        env.project.display()
    );
    env.sticky(["relocate"])
        .current_dir(&copy)
        .run()
        .assert_code(2)
        .assert_stderr_contains("your sticky key did not stamp it")
        .assert_stderr_contains(&there);
}

/// What a database records as where `STICKY_DB` kept it is as untrusted as the file (a copy, or
/// crafted): one naming a FIFO, a link or a relative path is passed over at once, and a project
/// that moved, whose old path was made again, relocates as it would without it.
#[test]
fn relocate_passes_over_a_recorded_database_that_is_no_sticky_database_of_the_users() {
    let env = TestEnv::new();
    let first = env.turn("before the move");
    let fifo = env.home.join("state.db");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("a FIFO");
    let link = env.home.join("link.db");
    std::os::unix::fs::symlink(&fifo, &link).expect("a link");
    let moved = env.move_project();
    std::fs::create_dir(&env.project).expect("the old path made again");
    let db = moved.join(".sticky/sticky.db");
    let conn = rusqlite::Connection::open(&db).expect("open the database");
    for named in [fifo.as_path(), link.as_path(), Path::new("state.db")] {
        conn.execute("DELETE FROM kept_at", []).expect("clear");
        conn.execute(
            "INSERT INTO kept_at (path) VALUES (?1)",
            [named.to_str().expect("UTF-8")],
        )
        .expect("record a crafted path");
        env.ok_in(&moved, ["trust"])
            .assert_stderr_contains("holds no sticky state (a directory made again");
    }
    drop(conn);
    env.ok_in(&moved, ["relocate"]);
    let after = env.sticky(["after the move"]).current_dir(&moved).run();
    after.assert_success();
    assert_eq!(after.answer().session, first.session);
}

/// Review 17: review 16 M5's fix (a copy of a `STICKY_DB` database names its original through
/// `kept_at`) lasts only until the copy's first turn: a copy kept in a `STICKY_DB` of its own
/// (the project and its database copied, `.envrc` pointing at the copy) records its own path
/// there, replacing the original's. With the data directory lost, a turn in the copy on a
/// thread of its own (`-t NAME`, a way out that loses nothing) erases the trace, and the
/// copy's `sticky relocate` then takes the original's session; the original is refused.
#[test]
fn review_a_copys_own_turn_erases_the_original_its_sticky_db_copy_names() {
    let env = TestEnv::new();
    let database = env.home.join(".local/state/sticky/p.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    let first = env
        .sticky(["in the original"])
        .env("STICKY_DB", &database)
        .run();
    first.assert_success();
    let copy = env.copy_project("copy");
    let copied = env.home.join(".local/state/sticky/copy.db");
    std::fs::copy(&database, &copied).expect("copy the database");
    std::fs::remove_dir_all(env.home.join(".local/share/sticky")).expect("lose the directory");
    let in_copy = |args: &[&str]| {
        env.sticky(args)
            .current_dir(&copy)
            .env("STICKY_DB", &copied)
            .run()
    };
    in_copy(&["trust"]).assert_success();
    // Refused (73): the original is found through what the copied file records.
    in_copy(&["in the copy"]).assert_code(73);
    in_copy(&["-t", "mine", "a thread of the copy's own"]).assert_success();
    let relocated = in_copy(&["relocate"]);
    env.sticky(["trust"]).env("STICKY_DB", &database).run();
    let back = env
        .sticky(["back in the original"])
        .env("STICKY_DB", &database)
        .run();
    back.assert_success();
    assert_eq!(back.answer().session, first.answer().session);
    relocated.assert_code(2);
}

/// Review 17: review 16 M4's reverse direction is guarded only while the `STICKY_DB` file does
/// not exist yet. A project that keeps its conversation in `.sticky/`, run with a `STICKY_DB`
/// set since for every project (a shell profile's line) once another project has already made
/// that database (with a thread of its own), silently starts a fresh session in the shared
/// database: `registry::elsewhere` is asked only for a missing database. It should refuse (2)
/// as when the file does not exist, naming the project's `.sticky/` and `env -u STICKY_DB`.
#[test]
fn review_a_sticky_db_set_since_that_another_project_made_silently_starts_afresh() {
    let env = TestEnv::new();
    let first = env.turn("one in p");
    let database = env.home.join(".local/state/sticky/sticky.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    // Another project, run first with the profile's STICKY_DB, makes the shared database.
    let q = env.root().join("q");
    std::fs::create_dir_all(&q).expect("a second project");
    env.git(&q, &["init", "-q"]);
    env.sticky(["-t", "other", "one in q"])
        .current_dir(&q)
        .env("STICKY_DB", &database)
        .run()
        .assert_success();
    let runs = env.agent_runs().len();
    // Back in p, the same shell profile: STICKY_DB now names the shared database.
    let two = env.sticky(["two in p"]).env("STICKY_DB", &database).run();
    assert_eq!(
        env.agent_runs().len(),
        runs,
        "the agent ran in p on a fresh session beside p's own .sticky/ (which keeps session {}): {}",
        first.session,
        two.describe()
    );
    two.assert_code(2);
    two.assert_stderr_contains(&format!(
        "run `env -u STICKY_DB sticky -C {} \"...\"`",
        env.project.display()
    ));
}

/// Review 17: review 16 M3's guard (two projects sharing one `STICKY_DB`) knows the other
/// directory uses this very database only through the list of projects. Once the data
/// directory (key and list) is lost and the shared database is adopted again from q (`sticky
/// trust` there, as the refusal says), trust and the turn in q call p "a directory made again
/// at that path, which holds no sticky state" and offer `sticky relocate` or `sticky new`;
/// `sticky new` ends p's live session for good, and p's next turn is refused (73).
#[test]
fn review_a_lost_list_lets_sticky_new_in_a_project_sharing_sticky_db_end_the_others_session() {
    let mut env = TestEnv::new();
    let database = env.home.join(".local/state/sticky/sticky.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    env.set_var("STICKY_DB", &database);
    let first = env.turn("one in p");
    let q = env.root().join("q");
    std::fs::create_dir_all(&q).expect("a second project");
    env.git(&q, &["init", "-q"]);
    env.sticky(["one in q"])
        .current_dir(&q)
        .run()
        .assert_code(73);
    // The data directory is lost (a new machine, a cleaned ~/.local/share): key and list.
    std::fs::remove_dir_all(env.home.join(".local/share/sticky")).expect("the data directory");
    // The user is in q; every state is refused until `sticky trust`, which they run there.
    env.ok_in(&q, ["trust"]);
    let _ = env.sticky(["one in q"]).current_dir(&q).run();
    // The way out the refusal gives.
    let _ = env.sticky(["new"]).current_dir(&q).run();
    let _ = env.sticky(["two in q"]).current_dir(&q).run();
    let two = env.sticky(["two in p"]).run();
    two.assert_success();
    assert_eq!(
        two.answer().session,
        first.session,
        "p lost its session to q's `sticky new`: {}",
        two.describe()
    );
}

/// A database shared by every project through a shell profile's `STICKY_DB`, made by a turn in
/// another project q (`args`, run there with it).
fn a_database_q_made(env: &TestEnv, args: &[&str]) -> (PathBuf, PathBuf) {
    let database = env.home.join(".local/state/sticky/sticky.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    let q = env.root().join("q");
    std::fs::create_dir_all(&q).expect("a second project");
    env.git(&q, &["init", "-q"]);
    env.sticky(args)
        .current_dir(&q)
        .env("STICKY_DB", &database)
        .run()
        .assert_success();
    (database, q)
}

/// `cp -a` of `path` to a backup, then copied back over the original, removed (after the copy,
/// so the file system cannot give the copy the original's inodes again): a restore.
fn restore_from_a_backup(env: &TestEnv, path: &Path) {
    let backup = env.root().join("backup");
    let cp = |from: &Path, to: &Path| {
        let copied = std::process::Command::new("cp")
            .arg("-a")
            .arg(from)
            .arg(to)
            .status();
        assert!(copied.is_ok_and(|status| status.success()), "cp -a");
    };
    cp(path, &backup);
    let lost = env.root().join("lost");
    std::fs::rename(path, &lost).expect("the original lost");
    cp(&backup, path);
    std::fs::remove_dir_all(&lost).expect("the original gone");
}

/// The refusal of a turn in p with a `STICKY_DB` that keeps nothing of p, while p's own
/// `.sticky/` keeps its conversation: code 2, the `.sticky/` named as found in the project, the
/// way back, and no way out that would leave it behind.
#[track_caller]
fn names_the_projects_own_sticky_dir(env: &TestEnv, refused: &Output) {
    refused.assert_code(2);
    refused.assert_stderr_contains(&format!(
        "the project {0} has its .sticky/ ({0}/.sticky/sticky.db), which keeps a live session of \
         this directory",
        env.project.display()
    ));
    refused.assert_stderr_contains(&format!(
        "run `env -u STICKY_DB sticky -C {} \"...\"`",
        env.project.display()
    ));
    assert!(
        !refused.stderr.contains("relocate"),
        "no relocate: {}",
        refused.describe()
    );
}

/// Review 18, M1: review 17 M1's refusal found p's `.sticky/` only through the list of
/// projects. With sticky's data directory lost (key and list), and `sticky trust` run in p
/// with the profile's `STICKY_DB` (the shared database is refused as unstamped until then),
/// p's next turn started afresh in the shared database. A turn under `STICKY_DB` now looks at
/// the project's own `.sticky/` itself, and counts it though the lost key left it unstamped.
#[test]
fn review_a_lost_data_directory_and_trust_under_a_shared_sticky_db_start_p_afresh() {
    let env = TestEnv::new();
    let first = env.turn("one in p");
    let (database, _) = a_database_q_made(&env, &["-t", "other", "one in q"]);
    std::fs::remove_dir_all(env.home.join(".local/share/sticky")).expect("lose the directory");
    let with_db = |args: &[&str]| env.sticky(args).env("STICKY_DB", &database).run();
    with_db(&["trust"]).assert_success();
    let runs = env.agent_runs().len();
    let refused = with_db(&["two in p"]);
    assert_eq!(env.agent_runs().len(), runs, "{}", refused.describe());
    names_the_projects_own_sticky_dir(&env, &refused);
    refused.assert_stderr_contains(
        "a turn there refuses it for now: your sticky key did not stamp it",
    );
    refused.assert_stderr_contains(&format!(
        "adopt it there (`env -u STICKY_DB sticky -C {} trust`), then run",
        env.project.display()
    ));
    // The way out, as said.
    env.sticky(["trust"])
        .env_remove("STICKY_DB")
        .run()
        .assert_success();
    let two = env.sticky(["two in p"]).env_remove("STICKY_DB").run();
    two.assert_success();
    assert_eq!(two.answer().session, first.session);
}

/// Review 18, M2: when the shared database's thread of this name has a live session of another
/// directory (q, since removed), review 17 M1's check counted that as keeping the conversation
/// and the turn refused with `relocate` (which would take q's session) or `new`, never naming
/// p's `.sticky/`. It names the `.sticky/` now.
#[test]
fn review_a_shared_sticky_db_whose_main_was_a_removed_projects_never_names_p_sticky_dir() {
    let env = TestEnv::new();
    let first = env.turn("one in p");
    let (database, q) = a_database_q_made(&env, &["one in q"]);
    std::fs::remove_dir_all(&q).expect("q removed");
    let runs = env.agent_runs().len();
    let refused = env.sticky(["two in p"]).env("STICKY_DB", &database).run();
    assert_eq!(env.agent_runs().len(), runs, "{}", refused.describe());
    names_the_projects_own_sticky_dir(&env, &refused);
    let two = env.sticky(["two in p"]).env_remove("STICKY_DB").run();
    two.assert_success();
    assert_eq!(two.answer().session, first.session);
}

/// Review 18, M3: p's `.sticky/` restored from a backup (`cp -a`), which a turn refuses for now
/// until `sticky trust`, was passed over by the list's check (it counted only a state a turn
/// could use now), so a turn with the profile's `STICKY_DB` started afresh. A state refused
/// for now for a reason the user fixes there counts, with that fix named.
#[test]
fn review_a_restored_sticky_dir_is_passed_over_under_a_shared_sticky_db() {
    let env = TestEnv::new();
    let first = env.turn("one in p");
    restore_from_a_backup(&env, &env.project.join(".sticky"));
    let (database, _) = a_database_q_made(&env, &["-t", "other", "one in q"]);
    let runs = env.agent_runs().len();
    let refused = env.sticky(["two in p"]).env("STICKY_DB", &database).run();
    assert_eq!(env.agent_runs().len(), runs, "{}", refused.describe());
    names_the_projects_own_sticky_dir(&env, &refused);
    refused.assert_stderr_contains("a turn there refuses it for now");
    refused.assert_stderr_contains(&format!(
        "`env -u STICKY_DB sticky -C {} trust`",
        env.project.display()
    ));
    env.sticky(["trust"])
        .env_remove("STICKY_DB")
        .run()
        .assert_success();
    let two = env.sticky(["two in p"]).env_remove("STICKY_DB").run();
    two.assert_success();
    assert_eq!(two.answer().session, first.session);
}

/// Review 18, M3's other direction (review 16, M4's): p keeps its state in a `STICKY_DB`
/// database restored from a backup; a turn without the variable (a new shell) found it through
/// the list but passed it over as refused for now, and started afresh in a new `.sticky/`. It
/// is refused (2) now, creating nothing, naming that database and the `trust` to run there.
#[test]
fn review_a_restored_sticky_db_is_passed_over_by_a_turn_without_it() {
    let env = TestEnv::new();
    let state = env.home.join(".local/state/sticky");
    std::fs::create_dir_all(&state).expect("the state directory");
    let database = state.join("p.db");
    let first = env.sticky(["one in p"]).env("STICKY_DB", &database).run();
    first.assert_success();
    restore_from_a_backup(&env, &state);
    let runs = env.agent_runs().len();
    let refused = env.sticky(["two in p"]).env_remove("STICKY_DB").run();
    assert_eq!(env.agent_runs().len(), runs, "{}", refused.describe());
    refused.assert_code(2);
    assert!(!env.project.join(".sticky").exists(), "nothing created");
    refused.assert_stderr_contains(&format!(
        "your list of projects names {} with the database {} (STICKY_DB), which keeps a live \
         session of this directory (a turn there refuses it for now",
        env.project.display(),
        database.display()
    ));
    let there = format!(
        "STICKY_DB={} sticky -C {}",
        database.display(),
        env.project.display()
    );
    refused.assert_stderr_contains(&format!("`{there} trust`"));
    env.sticky(["trust"])
        .env("STICKY_DB", &database)
        .run()
        .assert_success();
    let two = env.sticky(["two in p"]).env("STICKY_DB", &database).run();
    two.assert_success();
    assert_eq!(two.answer().session, first.answer().session);
}

/// The turn that makes a project's state says so on stderr (not with `--quiet`), naming where;
/// later turns say nothing of it. So a conversation started where the user expected one to go on
/// is never started silently: a project whose `STICKY_DB` is not set in this shell, once
/// sticky's data directory (and with it the list that would have named that database) is lost.
#[test]
fn the_turn_that_starts_a_projects_first_conversation_says_where() {
    let env = TestEnv::new();
    let state = env.home.join(".local/state/sticky");
    std::fs::create_dir_all(&state).expect("the state directory");
    let database = state.join("p.db");
    let first = env.sticky(["one in p"]).env("STICKY_DB", &database).run();
    first.assert_success().assert_stderr_contains(&format!(
        "sticky: no conversation of {} yet: started one, kept in {} (STICKY_DB)",
        env.project.display(),
        database.display()
    ));
    let two = env.sticky(["two in p"]).env("STICKY_DB", &database).run();
    assert_eq!(two.assert_success().stderr, "", "said once");
    std::fs::remove_dir_all(env.home.join(".local/share/sticky")).expect("lose the directory");
    let quiet = env
        .sticky(["-q", "quiet elsewhere"])
        .current_dir(env.root())
        .run();
    assert!(
        !quiet.assert_success().stderr.contains("no conversation"),
        "{}",
        quiet.describe()
    );
    let apart = env.sticky(["three in p"]).env_remove("STICKY_DB").run();
    apart.assert_success().assert_stderr_contains(&format!(
        "sticky: no conversation of {} yet: started one, kept in {}",
        env.project.display(),
        env.project.join(".sticky").display()
    ));
    assert_ne!(apart.answer().session, first.answer().session);
}

/// A `.sticky/` that git tracks came with the repository: `trust` never adopts it, and whoever
/// committed it may have recorded this very path (CI runners share one). A turn with a
/// `STICKY_DB` does not count it as this project's conversation kept elsewhere: it goes on in
/// its database, refusing nothing, rather than send the user to a `trust` that refuses.
#[test]
fn a_sticky_dir_git_tracks_is_no_conversation_kept_elsewhere() {
    let env = TestEnv::new();
    env.turn("one in the committer's checkout");
    let identity = ["-c", "user.name=a", "-c", "user.email=a@example.com"];
    env.git(&env.project, &["add", "-f", ".sticky"]);
    env.git(
        &env.project,
        &[&identity[..], &["commit", "-qm", "state"]].concat(),
    );
    let committed = env.root().join("committed");
    std::fs::rename(&env.project, &committed).expect("move the checkout away");
    let cloned = std::process::Command::new("git")
        .args(["clone", "-q"])
        .arg(&committed)
        .arg(&env.project)
        .status();
    assert!(cloned.is_ok_and(|status| status.success()), "git clone");
    let (database, _) = a_database_q_made(&env, &["-t", "other", "one in q"]);
    let here = env
        .sticky(["in the clone"])
        .env("STICKY_DB", &database)
        .run();
    here.assert_success();
    assert_eq!(here.answer().saw, Vec::<String>::new());
}

/// Review 20, M5: p keeps its state in `.sticky/` and is moved (`mv`, not relocated yet). A shell that sets
/// a new `STICKY_DB` runs one turn there (it says it started a conversation in that database);
/// in the next shell, without `STICKY_DB`, the turn is refused: ".sticky/sticky.db keeps no
/// conversation of this directory ... to start a separate state here on purpose, run
/// `sticky new`". But `.sticky/` keeps p's conversation, waiting for `sticky relocate`, which
/// the refusal never names; `sticky new` as told ends that session, and relocate then finds
/// nothing. The refusal should name `sticky relocate` for the moved conversation (which, run
/// instead, carries it).
#[test]
fn a_moved_projects_sticky_dir_is_named_for_relocate_though_a_sticky_db_was_set_since() {
    let env = TestEnv::new();
    let first = env.turn("one in p");
    let moved = env.move_project();
    let database = env.home.join(".local/state/sticky/p.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    env.sticky(["with STICKY_DB"])
        .current_dir(&moved)
        .env("STICKY_DB", &database)
        .run()
        .assert_success();
    let without = env.sticky(["without it"]).current_dir(&moved).run();
    assert!(
        without.stderr.contains("sticky relocate"),
        "the moved conversation in .sticky/ is not named: {}",
        without.describe()
    );
    env.ok_in(&moved, ["relocate"]);
    let again = env.ok_in(&moved, ["again"]).answer();
    assert_eq!(again.session, first.session, "relocate carries it");
}

/// Review 20, L4: in q, sharing p's `STICKY_DB`, a fork of thread main (p's conversation) is
/// refused (73) with the shared database's words (a thread or a database of q's own), never a
/// copy's `relocate` or `new`, both of which are refused there too.
#[test]
fn a_fork_of_another_directorys_thread_in_a_shared_sticky_db_names_the_shared_database() {
    let mut env = TestEnv::new();
    let database = env.home.join(".local/state/sticky/sticky.db");
    std::fs::create_dir_all(database.parent().expect("a parent")).expect("the state directory");
    env.set_var("STICKY_DB", &database);
    env.turn("one in p");
    let q = env.root().join("q");
    std::fs::create_dir_all(&q).expect("a second project");
    env.git(&q, &["init", "-q"]);
    let fork = env
        .sticky(["fork", "mine", "an idea"])
        .current_dir(&q)
        .run();
    fork.assert_code(73)
        .assert_stderr_contains("the two directories share one database")
        .assert_stderr_contains("`sticky -t NAME \"...\"`");
    assert!(!fork.stderr.contains("relocate"), "{}", fork.describe());
}

/// Copies `from` to `to` as `cp -a` does.
fn cp_a(from: &Path, to: &Path) {
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status();
    assert!(copied.is_ok_and(|status| status.success()), "cp -a");
}

/// A project keeping its state in a `STICKY_DB` inside it (`.state/sticky.db`, ignored by git):
/// it moves (`relocate`) and goes on, and is copied (`cp -a`); then sticky's data directory is
/// lost. Gives the first turn's answer, the moved original and its copy.
fn a_moved_project_with_sticky_db_inside_copied(env: &mut TestEnv) -> (Answer, PathBuf, PathBuf) {
    std::fs::write(env.project.join(".gitignore"), ".state/\n").expect("ignore .state/");
    std::fs::create_dir_all(env.project.join(".state")).expect("the state directory");
    env.set_var("STICKY_DB", ".state/sticky.db");
    let first = env.turn("one in p");
    let moved = env.move_project();
    env.ok_in(&moved, ["relocate"]);
    env.ok_in(&moved, ["two in the moved project"]);
    let copy = env.root().join("copy");
    cp_a(&moved, &copy);
    std::fs::remove_dir_all(env.home.join(".local/share/sticky")).expect("lose the data directory");
    (first, moved, copy)
}

/// Review 20, M3: a copy of a moved project whose relative `STICKY_DB` is inside it, with the
/// data directory lost. The copy's `trust` and `relocate` see the moved original's state by the
/// same `STICKY_DB` taken from the original's directory (and by the path `relocate` recorded
/// there), so relocate refuses (2) rather than take the original's session, and the original,
/// once trusted, goes on with it.
#[test]
fn a_copy_of_a_moved_project_with_sticky_db_inside_leaves_the_originals_session() {
    let mut env = TestEnv::new();
    let (first, moved, copy) = a_moved_project_with_sticky_db_inside_copied(&mut env);
    env.ok_in(&copy, ["trust"]);
    let relocate = env.sticky(["relocate"]).current_dir(&copy).run();
    relocate.assert_code(2);
    env.ok_in(&moved, ["trust"]);
    let again = env.ok_in(&moved, ["three in the moved project"]).answer();
    assert_eq!(again.session, first.session, "{}", relocate.describe());
}

/// Review 20, M3, what `relocate` records: the copy's database, put in its `.sticky/` and run
/// without `STICKY_DB`, names where the moved original keeps it now (`kept_at` records the
/// place `relocate` found it beside the first), so the copy's `relocate` refuses (2).
#[test]
fn a_copy_of_a_moved_sticky_db_project_finds_the_original_where_relocate_recorded_it() {
    let mut env = TestEnv::new();
    let (first, moved, copy) = a_moved_project_with_sticky_db_inside_copied(&mut env);
    std::fs::rename(copy.join(".state"), copy.join(".sticky")).expect("into .sticky/");
    let without = |args: &[&str], dir: &Path| {
        env.sticky(args)
            .current_dir(dir)
            .env_remove("STICKY_DB")
            .run()
    };
    without(&["trust"], &copy).assert_success();
    let relocate = without(&["relocate"], &copy);
    relocate.assert_code(2);
    env.ok_in(&moved, ["trust"]);
    let again = env.ok_in(&moved, ["three in the moved project"]).answer();
    assert_eq!(again.session, first.session, "{}", relocate.describe());
}

/// Review 20, M3's second way: a project's absolute `STICKY_DB` renamed with its files (`p.db*`
/// to `p2.db*`, so what the database records names a path gone), the project copied (sharing
/// `p2.db` through the same `STICKY_DB`), and the data directory lost. A turn in the original
/// with this environment uses this very database, so the copy's `relocate` refuses it as the
/// original's session in a shared database (2), and the original goes on with it.
#[test]
fn a_copy_sharing_a_renamed_sticky_db_leaves_the_originals_session() {
    let mut env = TestEnv::new();
    let state = env.home.join(".local/state/sticky");
    std::fs::create_dir_all(&state).expect("the state directory");
    env.set_var("STICKY_DB", state.join("p.db"));
    let first = env.turn("one in p");
    for companion in ["", "-wal", "-shm", ".stamp", ".locks", ".vault"] {
        let from = state.join(format!("p.db{companion}"));
        if from.exists() {
            std::fs::rename(&from, state.join(format!("p2.db{companion}"))).expect("rename");
        }
    }
    env.set_var("STICKY_DB", state.join("p2.db"));
    let copy = env.root().join("copy");
    cp_a(&env.project, &copy);
    std::fs::remove_dir_all(env.home.join(".local/share/sticky")).expect("lose the data directory");
    env.ok_in(&copy, ["trust"]);
    let relocate = env.sticky(["relocate"]).current_dir(&copy).run();
    relocate.assert_code(2);
    let again = env.ok(["two in p"]).answer();
    assert_eq!(again.session, first.session, "{}", relocate.describe());
}
