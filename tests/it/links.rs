//! Links below a trusted top (issue 23): no link below `.sticky/` (among the locks, the turn's
//! session report) or below an agent's home (import, relocate) is followed, whatever its level;
//! each is refused with its name, and what it leads to is neither read nor written. The vault's
//! own cases are in `vault`; the rule lives in `src/confined/`.

use std::fs;

use crate::support::TestEnv;

/// Issue 23: what import (and relocate) place into the agent's home goes below it through no
/// link. `~/.claude/projects` linked elsewhere (by anyone who could write there, or a restored
/// backup) must not carry an imported transcript out; `~/.claude` itself may be a link the user
/// made, and is followed.
#[test]
fn import_places_nothing_through_a_link_below_the_agents_home() {
    let (from, to) = (TestEnv::new(), TestEnv::new());
    let first = from.turn("remember kumquat");
    let bundle = from.scratch.join("b.sticky");
    from.ok(["export", "-o", bundle.to_str().expect("UTF-8")]);

    let leak = to.scratch.join("leak");
    fs::create_dir_all(&leak).expect("create the link's target");
    fs::create_dir_all(to.home.join(".claude")).expect("create ~/.claude");
    let link = to.claude_projects();
    std::os::unix::fs::symlink(&leak, &link).expect("link ~/.claude/projects");
    let refused = to.sticky(["import", bundle.to_str().expect("UTF-8")]).run();
    refused.assert_code(2);
    refused.assert_stderr_contains(&format!("{} is a symbolic link", link.display()));
    refused.assert_stderr_contains("nothing was changed");
    assert_eq!(
        fs::read_dir(&leak).expect("read the target").count(),
        0,
        "nothing placed through the link"
    );

    // The agent's home itself a link the user made: followed, and the import goes on there.
    fs::remove_file(&link).expect("remove the link");
    let real = to.scratch.join("real-claude");
    fs::rename(to.home.join(".claude"), &real).expect("move ~/.claude");
    std::os::unix::fs::symlink(&real, to.home.join(".claude")).expect("link ~/.claude");
    to.ok(["import", bundle.to_str().expect("UTF-8")]);
    let next = to.turn("which word?");
    assert_eq!(
        (next.session, next.saw),
        (first.session, vec!["remember kumquat".to_owned()])
    );
    assert!(real.join("projects").is_dir(), "placed in the linked home");
}

/// Issue 23: the per-turn file an interactive agent reports its session into sits among the
/// locks, where a repository can commit a link (turn numbers are predictable). The agent's
/// hook must not write through it, nor sticky read what it leads to.
#[test]
fn a_link_planted_as_the_turns_session_report_is_neither_written_nor_read_through() {
    let env = TestEnv::new();
    let first = env.turn("first");
    let planted = env.scratch.join("planted.jsonl");
    let theirs = r#"{"session_id":"00000000-0000-4000-8000-000000000000"}"#;
    fs::write(&planted, format!("{theirs}\n")).expect("write the planted report");
    let report = env
        .project
        .join(".sticky/sticky.db.locks/sessions-turn-2.jsonl");
    std::os::unix::fs::symlink(&planted, &report).expect("plant the link");

    let mut terminal = env.sticky(Vec::<&str>::new()).on_terminal();
    let banner = terminal.expect("> ");
    assert!(
        banner.contains(&format!("session={}", first.session)),
        "{banner}"
    );
    terminal.send("/exit\r");
    assert_eq!(terminal.wait(), 0);
    assert_eq!(
        fs::read_to_string(&planted).expect("read the planted file"),
        format!("{theirs}\n"),
        "the agent's hook wrote nothing through the link"
    );
    assert_eq!(env.turn("after").session, first.session);
}

/// Issue 23: relocate reads the session's files below the agent's home, and removes their old
/// copies, through no link: a directory of them linked elsewhere is refused with its name, and
/// what the link leads to is neither read into the new place nor deleted.
#[test]
fn relocate_reads_and_removes_nothing_through_a_link_below_the_agents_home() {
    let env = TestEnv::new();
    let first = env.turn("before the move");
    let transcript = env.transcript(&first.session);
    let encoded = transcript
        .parent()
        .expect("the project's directory")
        .to_owned();
    let elsewhere = env.scratch.join("elsewhere");
    fs::rename(&encoded, &elsewhere).expect("move the project's transcripts out");
    std::os::unix::fs::symlink(&elsewhere, &encoded).expect("link them back");
    let moved = env.root().join("moved-project");
    fs::rename(&env.project, &moved).expect("move the project");

    let refused = env.sticky(["relocate"]).current_dir(&moved).run();
    refused.assert_code(2);
    refused.assert_stderr_contains(&format!("{} is a symbolic link", encoded.display()));
    let kept = elsewhere.join(transcript.file_name().expect("a name"));
    assert!(kept.is_file(), "the linked transcript is not deleted");
    assert_eq!(
        fs::read_dir(env.claude_projects())
            .expect("read projects")
            .count(),
        1,
        "nothing placed for the new directory"
    );
}

/// Review 16, L1: the `rm` a refusal gives for a linked companion, pasted into a shell as
/// printed, removes that link, whatever the project's path holds (a space, a quote): unquoted,
/// `rm /…/my proj/.sticky/sticky.db.locks` removed `/…/my` and a relative path instead.
#[test]
fn the_rm_given_for_a_linked_companion_removes_that_link_in_a_shell() {
    let env = TestEnv::new();
    let project = env.copy_project("my 'proj");
    env.ok_in(&project, ["one"]);
    let locks = project.join(".sticky/sticky.db.locks");
    fs::remove_dir_all(&locks).expect("remove the locks");
    let inside = project.join("inproj");
    fs::create_dir(&inside).expect("create the link's target");
    std::os::unix::fs::symlink(&inside, &locks).expect("link the locks");
    let refused = env.sticky(["two"]).current_dir(&project).run();
    refused.assert_code(71);
    let command = refused
        .stderr
        .split("remove the link (")
        .nth(1)
        .and_then(|rest| rest.split_once(')'))
        .map_or_else(
            || panic!("no rm given: {}", refused.stderr),
            |(command, _)| command.to_owned(),
        );
    assert!(command.starts_with("rm '"), "{command}");
    env.program("sh", ["-c", &command])
        .current_dir(&env.scratch)
        .run()
        .assert_success();
    assert!(fs::symlink_metadata(&locks).is_err(), "the link is gone");
    assert!(inside.is_dir(), "what it led to is left");
    env.ok_in(&project, ["three"]);
}
