//! Review 19 (issue 23's scope: the vault, bundles, pipes and configuration): each test fails
//! on the code it was written against and passes once its finding is fixed.

use crate::support::TestEnv;

/// A configuration file in the user's configuration directory.
fn write_config(env: &TestEnv, text: &str) {
    let dir = env.home.join(".config/sticky");
    std::fs::create_dir_all(&dir).expect("create the config directory");
    std::fs::write(dir.join("config.toml"), text).expect("write the config");
}

/// M1: the configuration's `env` for an agent (docs/configuration.md) reaches the agent, so a
/// `CLAUDE_CONFIG_DIR` there is where Claude Code keeps its transcripts; sticky looks for them
/// only where its own environment says, so the vault keeps nothing, `export` calls the live
/// session lost (exit 73) and, once the agent's cleanup deletes the transcript, the turn cannot
/// be put back from the vault: the session is lost.
#[test]
fn review19_config_env_claude_config_dir_vault_and_export() {
    let env = TestEnv::new();
    let agent_home = env.scratch.join("claude-home");
    write_config(
        &env,
        &format!(
            "[agents.claude]\nenv = {{ CLAUDE_CONFIG_DIR = \"{}\" }}\n",
            agent_home.display()
        ),
    );
    let first = env.ok(["remember the word tangerine"]).answer();
    assert!(
        agent_home.join("projects").is_dir(),
        "the agent kept its transcript under CLAUDE_CONFIG_DIR"
    );

    // A documented command on a healthy session.
    let bundle = env.scratch.join("main.sticky");
    env.ok(["export", "-o", bundle.to_str().expect("utf-8")]);

    // The agent's own cleanup (cleanupPeriodDays) deletes the transcript: the vault is for this.
    std::fs::remove_dir_all(agent_home.join("projects")).expect("remove the transcripts");
    let next = env.ok(["what was the word?"]).answer();
    assert_eq!(next.session, first.session, "the same session goes on");
    assert_eq!(next.saw, vec!["remember the word tangerine".to_owned()]);
}
