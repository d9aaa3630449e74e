//! Review 24: the vault, bundles, pipes, configuration, and what the agent inherits. Each test
//! fails on the code the review was given and passes once its finding is fixed.

use crate::support::TestEnv;

/// M1: at an interactive shell, a pipe into a subshell or a shell function that runs sticky
/// (`git diff | (cd backend && sticky "review" > review.md)`, `git diff | ask "review"` with
/// `ask() { sticky "$@"; }`): bash runs that part of the pipeline in a forked subshell whose
/// command line is the interactive shell's own (`bash`, no `-c`, no script operand) and whose
/// stdin is the pipe, so `pipeline::is_shells_script` takes the pipe for the script a shell
/// reads its commands from, and the turn silently drops the piped input (exit 0).
#[test]
fn review24_a_pipe_into_a_subshell_or_function_at_an_interactive_shell_reaches_the_agent() {
    let env = TestEnv::new();
    let sticky = env!("CARGO_BIN_EXE_sticky");
    std::fs::create_dir_all(env.project_dir("sub")).expect("mkdir sub");
    let forms = [
        ("function", "ask 'review this'".to_owned()),
        (
            "subshell",
            format!("(cd sub && '{sticky}' 'review this' > review.md)"),
        ),
        ("group", format!("{{ cd sub; '{sticky}' 'review this'; }}")),
    ];
    let mut lost = Vec::new();
    for (i, (what, command)) in forms.iter().enumerate() {
        let mut shell = env
            .program("bash", ["--norc", "--noprofile", "-i"])
            .on_terminal();
        shell.send(&format!(
            "ask() {{ '{sticky}' \"$@\"; }}; printf 'PIPED-{i}\\n' | {command} >/dev/null 2>&1; echo form-done-$?\r"
        ));
        shell.expect("form-done-0");
        shell.send("exit\r");
        let prompt = env.last_agent_run().prompt().to_owned();
        if !prompt.contains(&format!("PIPED-{i}")) {
            lost.push(format!(
                "{what} (`printf ... | {command}`): the agent's prompt was {prompt:?}"
            ));
        }
    }
    assert!(
        lost.is_empty(),
        "at an interactive bash, piped input into sticky was silently dropped for:\n{}",
        lost.join("\n")
    );
}
