//! The README's promises, exercised so they cannot rot: its exit-code table is the one `--help`
//! prints, and the "Adding an agent" configuration of docs/agents.md, copied as it stands, makes
//! an agent sticky.
//! (Its quickstart commands run in `.ci/run`; every command it shows runs in `documented`.)

use std::collections::BTreeSet;

use sticky::cli::EXIT_CODES;

use crate::support::TestEnv;

const README: &str = include_str!("../../README.md");
const AGENTS: &str = include_str!("../../docs/agents.md");

/// The fenced block of `lang` in the README or docs/agents.md that contains `marker`.
#[track_caller]
fn block(lang: &str, marker: &str) -> String {
    let fence = format!("```{lang}\n");
    [README, AGENTS]
        .iter()
        .flat_map(|document| document.split(&fence).skip(1))
        .filter_map(|rest| rest.split("```").next())
        .find(|body| body.contains(marker))
        .unwrap_or_else(|| {
            panic!("the README or docs/agents.md has a {lang} block with {marker:?}")
        })
        .to_owned()
}

#[test]
fn the_readme_exit_codes_are_the_ones_help_prints() {
    let section = README
        .split("## Exit codes")
        .nth(1)
        .expect("the README has an exit-code section");
    let table: BTreeSet<String> = section
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .filter_map(|line| line.split('|').nth(1).map(str::trim).map(str::to_owned))
        .filter(|code| code.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .collect();
    let help: BTreeSet<String> = EXIT_CODES
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect();
    assert_eq!(table, help);
}

/// An agent CLI that resumes sessions by ID, for the README's configuration example: it keeps
/// each session's prompts in `$HOME/my-agent/<id>` and says which it saw.
pub const MY_AGENT: &str = r#"import os, sys
args = sys.argv[1:]
opts = {}
while args:
    flag = args.pop(0)
    opts[flag] = args.pop(0) if args else ""
store = os.path.join(os.environ["HOME"], "my-agent")
os.makedirs(store, exist_ok=True)
if "--resume" in opts:
    session = opts["--resume"]
    if not os.path.exists(os.path.join(store, session)):
        print(f"error: no such session {session}")
        sys.exit(3)
else:
    session = opts["--session"]
path = os.path.join(store, session)
seen = open(path).read().splitlines() if os.path.exists(path) else []
prompt = opts["--print"]
open(path, "a").write(prompt + "\n")
print(f"MY-AGENT session={session} model={opts.get('--model', '-')} saw={seen} you said: {prompt}")
"#;

#[test]
fn the_readme_configuration_makes_an_agent_sticky() {
    let env = TestEnv::new();
    let config = env.script("config.toml", &block("toml", "[agents.my-agent]"));
    let program = env.script(
        "my-agent",
        &format!("#!{}\n{MY_AGENT}", crate::support::python().display()),
    );
    let sticky = |args: &[&str]| {
        env.sticky(args)
            .env("STICKY_CONFIG", &config)
            .env("STICKY_MY_AGENT_BIN", &program)
            .run()
    };

    let first = sticky(&["-a", "my-agent", "first"]);
    first.assert_success();
    assert!(
        first.stdout.contains("saw=[] you said: first"),
        "{}",
        first.describe()
    );
    let second = sticky(&["-a", "my-agent", "second"]);
    second.assert_success();
    assert!(
        second.stdout.contains("saw=['first'] you said: second"),
        "{}",
        second.describe()
    );
    let id = env.status_json()["session"]["agent_session_id"]
        .as_str()
        .expect("sticky chose the session ID up front")
        .to_owned();
    assert!(second.stdout.contains(&format!("session={id} ")));

    // A model goes through the `model` template, and rotates the session.
    let other = sticky(&["-a", "my-agent", "-m", "big", "third"]);
    other.assert_success();
    assert!(
        other.stdout.contains("model=big saw=[]"),
        "{}",
        other.describe()
    );

    // Its words for a forgotten session (`lost`) make a lost session, never a fresh one.
    std::fs::remove_dir_all(env.home.join("my-agent")).unwrap();
    sticky(&["-a", "my-agent", "fourth"])
        .assert_code(73)
        .assert_stderr_contains("sticky new");
}
