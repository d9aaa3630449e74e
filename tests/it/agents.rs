//! The same session contract over every agent: one scenario table runs against each adapter
//! with its fake (`tests/fakes/<agent>`, which reproduce each CLI's documented behaviour): the
//! first turn, a resume, `new`, a model change, an agent change, a failed turn, a lost session
//! and an ID mismatch; then the safety refusals sticky must not lift itself.
//!
//! Every agent gets the prompt exactly as typed, spaces and quotes included: `opencode run`
//! wraps a message argument that holds a space in quotes (its own quirk, reproduced by its
//! fake), so sticky gives opencode its prompt on stdin.

use std::path::PathBuf;

use crate::support::{AgentRun, Answer, Output, Run, TestEnv, is_uuid_v4};

/// How one agent differs, as far as the scenarios care.
pub(crate) struct Agent {
    /// The agent's name for `-a`.
    pub(crate) name: &'static str,
    /// The fake's tag: `FAKE-<TAG>` answers, `FAKE_<TAG>_*` hooks.
    pub(crate) tag: &'static str,
    /// Two models the fake accepts.
    pub(crate) models: [&'static str; 2],
    /// Whether sticky chooses the session ID up front (a UUID v4) rather than the agent.
    pub(crate) sticky_chooses_id: bool,
    /// Whether the agent's arguments of `run` resume session `id`.
    pub(crate) resumes: fn(&AgentRun, &str) -> bool,
    /// Where the agent keeps its sessions under HOME: removing it makes every session unknown.
    pub(crate) storage: &'static str,
    /// Environment the agent needs in a test project (Gemini's headless runs need trust).
    pub(crate) env: &'static [(&'static str, &'static str)],
}

fn flag_is(run: &AgentRun, flag: &str, id: &str) -> bool {
    run.flag(flag).as_deref() == Some(id)
}

pub(crate) const AGENTS: &[Agent] = &[
    Agent {
        name: "claude",
        tag: "CLAUDE",
        models: ["claude-haiku-4-5", "claude-opus-5-5"],
        sticky_chooses_id: true,
        resumes: |run, id| flag_is(run, "--resume", id),
        storage: ".claude/projects",
        env: &[],
    },
    Agent {
        name: "codex",
        tag: "CODEX",
        models: ["gpt-5.5", "gpt-6-sol"],
        sticky_chooses_id: false,
        resumes: |run, id| flag_is(run, "resume", id) && run.has("exec"),
        storage: ".codex/sessions",
        env: &[],
    },
    Agent {
        name: "gemini",
        tag: "GEMINI",
        models: ["gemini-2.5-flash", "gemini-2.5-pro"],
        sticky_chooses_id: true,
        resumes: |run, id| flag_is(run, "--resume", id),
        storage: ".gemini/tmp",
        env: &[("GEMINI_CLI_TRUST_WORKSPACE", "true")],
    },
    Agent {
        name: "qwen",
        tag: "QWEN",
        models: ["qwen3-coder-plus", "qwen3.7-max"],
        sticky_chooses_id: true,
        resumes: |run, id| flag_is(run, "--resume", id),
        storage: ".qwen/projects",
        env: &[],
    },
    Agent {
        name: "opencode",
        tag: "OPENCODE",
        models: ["mock/one", "mock/two"],
        sticky_chooses_id: false,
        resumes: |run, id| flag_is(run, "-s", id) && run.has("run"),
        storage: ".local/share/opencode",
        env: &[],
    },
    Agent {
        name: "copilot",
        tag: "COPILOT",
        models: ["gpt-5", "claude-sonnet-4.5"],
        sticky_chooses_id: true,
        resumes: |run, id| run.has(&format!("--resume={id}")),
        storage: ".copilot/session-state",
        env: &[],
    },
];

/// Variables of the developer's own agent setup that would change what a fake does.
const FOREIGN: &[&str] = &[
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "GEMINI_CLI_TRUST_WORKSPACE",
    "QWEN_HOME",
    "QWEN_RUNTIME_DIR",
    "COPILOT_HOME",
    "COPILOT_MODEL",
    "OPENCODE_CONFIG",
];

impl Agent {
    /// A sticky run in `env` with this agent's setup and its fake's run log.
    pub(crate) fn sticky<'a>(&self, env: &'a TestEnv, args: &[&str]) -> Run<'a> {
        let mut run = env.sticky(args);
        for var in FOREIGN {
            run = run.env_remove(var);
        }
        for (key, value) in self.env {
            run = run.env(key, value);
        }
        // The same file as the harness's FAKE_CLAUDE_LOG, so `agent_runs` reads every fake.
        run.env(self.hook("LOG"), env.root().join("agent-runs.jsonl"))
    }

    /// `FAKE_<TAG>_<what>`.
    pub(crate) fn hook(&self, what: &str) -> String {
        format!("FAKE_{}_{what}", self.tag)
    }

    /// Runs sticky with `args`, asserts it succeeded, and returns the fake's answer.
    #[track_caller]
    pub(crate) fn turn(&self, env: &TestEnv, args: &[&str]) -> Answer {
        let output = self.sticky(env, args).run();
        output.assert_success();
        self.answer(&output)
    }

    /// The fake's answer on stdout (the fakes share the fake claude's answer shape).
    #[track_caller]
    pub(crate) fn answer(&self, output: &Output) -> Answer {
        let text = output.stdout.strip_suffix('\n').unwrap_or(&output.stdout);
        let prefix = format!("FAKE-{} ", self.tag);
        let Some(rest) = text.strip_prefix(&prefix) else {
            panic!(
                "{}: stdout is not its answer\n{}",
                self.name,
                output.describe()
            );
        };
        Answer::parse(&format!("FAKE-CLAUDE {rest}")).unwrap_or_else(|| {
            panic!(
                "{}: stdout is not its answer\n{}",
                self.name,
                output.describe()
            )
        })
    }

    /// The agent to change to in the agent-change scenario.
    fn other(&self) -> &'static str {
        if self.name == "claude" {
            "codex"
        } else {
            "claude"
        }
    }
}

/// The live session of the project as `sticky status --json` shows it.
#[track_caller]
fn session(env: &TestEnv) -> serde_json::Value {
    env.status_json()["session"].clone()
}

#[test]
fn the_first_turn_starts_a_session_and_the_next_resumes_it_with_its_history() {
    for agent in AGENTS {
        let env = TestEnv::new();
        let first = agent.turn(&env, &["-a", agent.name, "first"]);
        assert_eq!(
            (first.turn, first.saw.len()),
            (1, 0),
            "{}: {first:?}",
            agent.name
        );
        let stored = session(&env);
        assert_eq!(stored["agent"], agent.name);
        assert_eq!(
            stored["agent_session_id"], first.session,
            "{}: sticky stores the ID the agent used",
            agent.name
        );
        assert_eq!(
            is_uuid_v4(&first.session),
            agent.sticky_chooses_id,
            "{}: {}",
            agent.name,
            first.session
        );

        // No `-a`: the session's agent goes on.
        let second = agent.turn(&env, &["second"]);
        assert_eq!(second.session, first.session, "{}", agent.name);
        assert_eq!(
            (second.turn, second.saw.clone()),
            (2, vec!["first".to_owned()])
        );
        let run = env.last_agent_run();
        assert!(
            (agent.resumes)(&run, &first.session),
            "{}: not a resume of {}: {:?}",
            agent.name,
            first.session,
            run.argv()
        );
        assert_eq!(run.cwd(), env.project, "{}", agent.name);
    }
}

#[test]
fn a_prompt_with_spaces_and_quotes_reaches_every_agent_as_typed() {
    let prompt = "say \"hi\"  to 'them' now";
    for agent in AGENTS {
        let env = TestEnv::new();
        let answer = agent.turn(&env, &["-a", agent.name, prompt]);
        assert_eq!(answer.prompt, prompt, "{}", agent.name);
    }
}

#[test]
fn new_rotates_to_a_fresh_session_that_the_next_turn_continues() {
    for agent in AGENTS {
        let env = TestEnv::new();
        let first = agent.turn(&env, &["-a", agent.name, "first"]);
        let fresh = agent.turn(&env, &["new", "second"]);
        assert_ne!(fresh.session, first.session, "{}", agent.name);
        assert_eq!(
            (fresh.turn, fresh.saw.len()),
            (1, 0),
            "{}: {fresh:?}",
            agent.name
        );
        let stored = session(&env);
        assert_eq!(stored["rotation_reason"], "new", "{}", agent.name);
        assert_eq!(stored["agent_session_id"], fresh.session, "{}", agent.name);

        let third = agent.turn(&env, &["third"]);
        assert_eq!(third.session, fresh.session, "{}", agent.name);
        assert_eq!(third.saw, ["second"], "{}", agent.name);
    }
}

#[test]
fn a_different_model_rotates_and_the_session_keeps_its_model() {
    for agent in AGENTS {
        let env = TestEnv::new();
        let [one, two] = agent.models;
        let first = agent.turn(&env, &["-a", agent.name, "-m", one, "first"]);
        assert_eq!(first.model, one, "{}", agent.name);
        let same = agent.turn(&env, &["-m", one, "second"]);
        assert_eq!(
            same.session, first.session,
            "{}: the same model",
            agent.name
        );

        let switched = agent.turn(&env, &["-m", two, "third"]);
        assert_ne!(switched.session, first.session, "{}", agent.name);
        assert_eq!(
            (switched.model.as_str(), switched.turn),
            (two, 1),
            "{}",
            agent.name
        );
        assert_eq!(
            session(&env)["rotation_reason"],
            "model-change",
            "{}",
            agent.name
        );

        // Without `-m` the session's model goes on: several agents do not restore it on resume,
        // so this shows sticky passes it every time.
        let after = agent.turn(&env, &["fourth"]);
        assert_eq!(after.session, switched.session, "{}", agent.name);
        assert_eq!(after.model, two, "{}", agent.name);
        assert_eq!(after.saw, ["third"], "{}", agent.name);
    }
}

#[test]
fn a_different_agent_rotates_to_a_session_of_that_agent() {
    for agent in AGENTS {
        let env = TestEnv::new();
        let first = agent.turn(&env, &["-a", agent.name, "first"]);
        let other = AGENTS
            .iter()
            .find(|candidate| candidate.name == agent.other())
            .expect("the other agent is in the table");
        let switched = other.turn(&env, &["-a", other.name, "second"]);
        assert_ne!(switched.session, first.session, "{}", agent.name);
        assert_eq!(switched.turn, 1, "{}: a fresh session", agent.name);
        let stored = session(&env);
        assert_eq!(stored["agent"], other.name, "{}", agent.name);
        assert_eq!(stored["rotation_reason"], "agent-change", "{}", agent.name);
    }
}

#[test]
fn a_failed_turn_keeps_the_session_and_passes_the_exit_code_through() {
    for agent in AGENTS {
        let env = TestEnv::new();
        let first = agent.turn(&env, &["-a", agent.name, "first"]);
        let failed = agent
            .sticky(&env, &["second"])
            .env(agent.hook("EXIT"), "3")
            .run();
        failed.assert_code(3);
        failed.assert_clean_stdout();
        assert_eq!(
            session(&env)["agent_session_id"],
            first.session,
            "{}: a failed turn never rotates",
            agent.name
        );
        let next = agent.turn(&env, &["third"]);
        assert_eq!(next.session, first.session, "{}", agent.name);
        assert_eq!(next.saw, ["first", "second"], "{}", agent.name);
    }
}

#[test]
fn a_failed_first_turn_prints_the_session_the_next_turn_continues() {
    for agent in AGENTS {
        let env = TestEnv::new();
        let failed = agent
            .sticky(&env, &["--json", "-a", agent.name, "first"])
            .env(agent.hook("EXIT"), "3")
            .run();
        failed.assert_code(3);
        let printed = failed.json()["session"]["agent_session_id"].clone();
        assert!(printed.is_string(), "{}: {}", agent.name, failed.describe());
        // Every agent keeps a prompt it accepted, so the failed turn is history.
        let next = agent.turn(&env, &["second"]);
        assert_eq!(
            next.session, printed,
            "{}: the session printed after the failed turn is the one the next turn uses",
            agent.name
        );
        assert_eq!(next.saw, ["first"], "{}", agent.name);
        assert!(
            (agent.resumes)(&env.last_agent_run(), &next.session),
            "{}: {:?}",
            agent.name,
            env.last_agent_run().argv()
        );
    }
}

/// The sessions of the project's conversation, oldest first, as `sticky log --json` shows them.
fn logged_sessions(env: &TestEnv) -> Vec<serde_json::Value> {
    env.log_json()["sessions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_codex_thread_never_saved_by_a_failed_first_turn_starts_afresh_as_unsaved() {
    let codex = &AGENTS[1];
    let env = TestEnv::new();
    // Codex as openai/codex#18690 reports it: no rollout until the first turn is answered.
    let failed = codex
        .sticky(&env, &["-a", "codex", "remember kumquat"])
        .env("FAKE_CODEX_SAVE", "after-turn")
        .env(codex.hook("EXIT"), "1")
        .run();
    failed.assert_code(1);
    let thread = env.last_agent_run().text("session_id").map(str::to_owned);
    let thread = thread.expect("the fake named its thread");
    failed.assert_stderr_contains(&format!("before it saved session {thread}"));
    failed.assert_stderr_contains("the next turn starts afresh");
    assert_eq!(
        session(&env)["agent_session_id"],
        serde_json::Value::Null,
        "no ID that nothing can resume is kept: {}",
        env.status_json()
    );

    let next = codex.turn(&env, &["second"]);
    assert_ne!(next.session, thread);
    assert_eq!((next.turn, next.saw.len()), (1, 0), "{next:?}");
    assert!(!env.last_agent_run().has("resume"));
    let sessions = logged_sessions(&env);
    assert_eq!(sessions.len(), 2, "{sessions:#?}");
    assert_eq!(sessions[0]["turns"][0]["status"], "failed");
    assert_eq!(sessions[0]["turns"][0]["prompt"], "remember kumquat");
    assert_eq!(sessions[1]["rotation_reason"], "unsaved", "{sessions:#?}");
    assert_eq!(sessions[1]["rotated_from"], sessions[0]["id"]);
    assert_eq!(sessions[1]["agent_session_id"], next.session.as_str());
    let listed = env.ok(["sessions"]).stdout;
    assert!(listed.contains("unsaved"), "{listed}");

    // Once a turn succeeded the thread has history: losing it now is exit 73, never afresh.
    let rollouts = env.home.join(codex.storage);
    std::fs::remove_dir_all(&rollouts).expect("remove the rollouts");
    std::fs::remove_dir_all(env.project.join(".sticky/sticky.db.vault")).expect("no copy");
    codex.sticky(&env, &["third"]).run().assert_code(73);
}

#[test]
fn a_codex_that_died_before_naming_its_thread_is_started_afresh_as_unsaved() {
    let codex = &AGENTS[1];
    let env = TestEnv::new();
    let dead = env.script(
        "dead-codex",
        "#!/bin/sh\necho 'codex: cannot start' >&2\nexit 1\n",
    );
    let failed = codex
        .sticky(&env, &["-a", "codex", "first"])
        .env("STICKY_CODEX_BIN", &dead)
        .run();
    failed.assert_code(1);
    failed.assert_stderr_contains("codex exited with code 1 before it named its new session");
    let next = codex.turn(&env, &["second"]);
    assert_eq!((next.turn, next.saw.len()), (1, 0), "{next:?}");
    let sessions = logged_sessions(&env);
    assert_eq!(sessions.len(), 2, "{sessions:#?}");
    assert_eq!(sessions[1]["rotation_reason"], "unsaved", "{sessions:#?}");
}

#[test]
fn a_claude_session_never_saved_by_a_failed_first_turn_keeps_its_printed_id() {
    let env = TestEnv::new();
    // A Claude Code that dies before it reports or writes anything.
    let dead = env.script(
        "dead-claude",
        "#!/bin/sh\necho 'claude: cannot start' >&2\nexit 1\n",
    );
    let failed = env
        .sticky(["--json", "first"])
        .env("STICKY_CLAUDE_BIN", &dead)
        .run();
    failed.assert_code(1);
    let report = failed.json();
    let printed = report["session"]["agent_session_id"]
        .as_str()
        .expect("sticky chose the ID up front")
        .to_owned();
    let error = report["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&format!("before it saved session {printed}")),
        "{report}"
    );

    let next = env.turn("second");
    assert_eq!(
        next.session, printed,
        "the session printed after the failed turn is the one the next turn uses"
    );
    assert_eq!((next.turn, next.saw.len()), (1, 0), "{next:?}");
    assert_eq!(env.last_agent_run().flag("--session-id"), Some(printed));
    let sessions = logged_sessions(&env);
    assert_eq!(sessions.len(), 2, "{sessions:#?}");
    assert_eq!(sessions[1]["rotation_reason"], "unsaved", "{sessions:#?}");
}

#[test]
fn a_session_the_agent_forgot_fails_loudly_and_is_kept() {
    for agent in AGENTS {
        let env = TestEnv::new();
        let first = agent.turn(&env, &["-a", agent.name, "first"]);
        let storage: PathBuf = env.home.join(agent.storage);
        std::fs::remove_dir_all(&storage)
            .unwrap_or_else(|e| panic!("{}: remove {}: {e}", agent.name, storage.display()));
        // And sticky's own copy (tests/it/vault.rs restores from it).
        let _ = std::fs::remove_dir_all(env.project.join(".sticky/sticky.db.vault"));

        let lost = agent.sticky(&env, &["second"]).run();
        lost.assert_code(73);
        lost.assert_stderr_contains("session lost");
        lost.assert_stderr_contains(&first.session);
        lost.assert_stderr_contains("sticky new");
        assert_eq!(
            session(&env)["agent_session_id"],
            first.session,
            "{}: sticky never starts over on its own",
            agent.name
        );
    }
}

#[test]
fn an_agent_that_answers_from_another_session_is_amnesia() {
    for agent in AGENTS {
        let env = TestEnv::new();
        let first = agent.turn(&env, &["-a", agent.name, "first"]);
        let stranger = "0badc0de-0000-4000-8000-000000000000";
        let mismatch = agent
            .sticky(&env, &["second"])
            .env(agent.hook("REPORT_SESSION"), stranger)
            .run();
        mismatch.assert_code(74);
        mismatch.assert_stderr_contains("amnesia");
        mismatch.assert_stderr_contains(stranger);
        assert_eq!(
            session(&env)["agent_session_id"],
            first.session,
            "{}: sticky keeps the session it asked for",
            agent.name
        );
    }
}

#[test]
fn codex_outside_git_is_refused_with_the_way_out_and_works_when_lifted() {
    let codex = AGENTS.iter().find(|a| a.name == "codex").expect("codex");
    let env = TestEnv::without_git();
    let refused = codex.sticky(&env, &["-a", "codex", "first"]).run();
    refused.assert_code(1);
    refused.assert_stderr_contains("Not inside a trusted directory");
    refused.assert_stderr_contains("-- --skip-git-repo-check");
    assert!(
        !env.last_agent_run().has("--skip-git-repo-check"),
        "sticky never lifts the check itself"
    );

    let lifted = codex.turn(&env, &["first", "--", "--skip-git-repo-check"]);
    assert_eq!(lifted.turn, 1);
    let again = codex.turn(&env, &["second", "--", "--skip-git-repo-check"]);
    assert_eq!(
        (again.session, again.saw),
        (lifted.session, vec!["first".to_owned()])
    );
}

#[test]
fn gemini_in_an_untrusted_folder_is_refused_with_the_way_out() {
    let gemini = AGENTS.iter().find(|a| a.name == "gemini").expect("gemini");
    let env = TestEnv::new();
    let refused = gemini
        .sticky(&env, &["-a", "gemini", "first"])
        .env_remove("GEMINI_CLI_TRUST_WORKSPACE")
        .run();
    refused.assert_code(55);
    refused.assert_stderr_contains("not running in a trusted directory");
    refused.assert_stderr_contains("-- --skip-trust");
    assert!(!env.last_agent_run().has("--skip-trust"));
}
