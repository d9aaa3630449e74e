//! sticky's state and git (issue 23): a state git tracks came with the repository, so `sticky
//! trust` does not adopt it until the user untracks it; and a `STICKY_DB` inside the worktree
//! that git does not ignore would leave the conversation for `git add`.

use std::fs;

use crate::support::TestEnv;

/// Runs `command` with `sh` in `dir`, as a user pasting what sticky advised.
fn paste(dir: &std::path::Path, command: &str) {
    let status = std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .status()
        .expect("run sh");
    assert!(status.success(), "{command}");
}

/// The command in parentheses after `after` in `text`.
fn advised(text: &str, after: &str) -> String {
    let at = text
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} in {text}"));
    let rest = &text[at + after.len()..];
    rest[..rest.find(')').expect("a closing parenthesis")].to_owned()
}

#[test]
fn trust_refuses_a_sticky_db_git_tracks_and_its_way_out_works_as_pasted() {
    let env = TestEnv::new();
    let db = env.project.join("state/sticky.db");
    fs::create_dir_all(db.parent().unwrap()).unwrap();
    fs::write(env.project.join("state/.gitignore"), "sticky.db*\n").unwrap();
    let first = env.sticky(["mine"]).env("STICKY_DB", &db).run();
    first.assert_success();
    // Committed (by force, past the .gitignore) and then not the file sticky stamped: a copy.
    let copy = env.scratch.join("copy.db");
    fs::copy(&db, &copy).unwrap();
    fs::rename(&copy, &db).unwrap();
    env.git(&env.project, &["add", "--force", "state"]);
    let refused = env.sticky(["trust"]).env("STICKY_DB", &db).run();
    refused.assert_code(71);
    refused.assert_stderr_contains(&format!(
        "{}: refusing to use it: `sticky trust` does not adopt it: git tracks it",
        db.display()
    ));
    let stamp = fs::read(env.project.join("state/sticky.db.stamp")).unwrap();
    let untrack = advised(&refused.stderr, "untrack it (");
    assert!(untrack.starts_with("git rm -r --cached "), "{untrack}");
    paste(&env.project, &untrack);
    assert_eq!(
        fs::read(env.project.join("state/sticky.db.stamp")).unwrap(),
        stamp,
        "the refusal stamped nothing"
    );
    env.sticky(["trust"])
        .env("STICKY_DB", &db)
        .run()
        .assert_success()
        .assert_stderr_contains("is yours now");
    let resumed = env.sticky(["go on"]).env("STICKY_DB", &db).run();
    assert_eq!(resumed.answer().session, first.answer().session);
}
