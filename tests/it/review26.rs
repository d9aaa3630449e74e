//! Review 26: the code that closed reviews 22 to 25, tried as an adversary.

use crate::support::TestEnv;

/// Review 26, M1: a job read from stdin (GitLab CI's Docker executor, `sh -s < job.sh`) that
/// gives a file or a here-document to a shell function or a `{ ...; }` group running sticky
/// (`review < diff.txt`, `review <<EOF`): bash redirects its own stdin while the function runs
/// (its script moved to another descriptor), so `pipeline::is_shells_script` takes the file
/// for the job's script and the turn drops it, exit 0. The file is the turn's input.
#[test]
fn review26_a_file_given_to_a_function_in_a_job_read_from_stdin_reaches_the_agent() {
    let env = TestEnv::new();
    let sticky = env!("CARGO_BIN_EXE_sticky");
    let notes = env.scratch.join("diff.txt");
    std::fs::write(&notes, "PIPED-DIFF\n").expect("write the diff");
    let marker = env.scratch.join("the-next-line-ran");
    let mut lost = Vec::new();
    for (what, line) in [
        (
            "function given a file",
            format!("review < '{}'", notes.display()),
        ),
        (
            "function given a here-document",
            "review <<EOF\nPIPED-DIFF\nEOF".to_owned(),
        ),
        (
            "group given a file",
            format!("{{ '{sticky}' 'review this'; }} < '{}'", notes.display()),
        ),
    ] {
        let _ = std::fs::remove_file(&marker);
        let script = format!(
            "review() {{ '{sticky}' 'review this'; }}\n{line}\ntouch '{}'\n",
            marker.display()
        );
        let output = env.program("bash", ["-s"]).stdin(script).run();
        output.assert_success();
        assert!(marker.exists(), "{what}: {}", output.describe());
        let prompt = env.last_agent_run().prompt().to_owned();
        if !prompt.contains("PIPED-DIFF") {
            lost.push(format!(
                "{what}: the agent's prompt was {prompt:?}; {}",
                output.stderr
            ));
        }
    }
    assert!(
        lost.is_empty(),
        "input given to a function in a job read from stdin was dropped:\n{}",
        lost.join("\n")
    );
}
/// Review 26, M2: a job read from stdin run in the background at an interactive shell
/// (`bash < job.sh &`, `cat job.sh | bash &`): the job's shell has the terminal, which runs the
/// interactive shell's group in the foreground, so `is_shells_script` takes it for an
/// interactive shell whose redirection is one command's, and the turn reads the rest of the
/// job as its piped context: the lines after it never run, and go to the model.
#[test]
fn review26_a_job_read_from_stdin_in_the_background_keeps_the_rest_of_its_script() {
    let env = TestEnv::new();
    let sticky = env!("CARGO_BIN_EXE_sticky");
    let marker = env.scratch.join("the-next-line-ran");
    let job = env.scratch.join("job.sh");
    std::fs::write(
        &job,
        format!(
            "'{sticky}' 'review the build'\ntouch '{}'\n",
            marker.display()
        ),
    )
    .expect("write the job");
    let mut shell = env
        .program("bash", ["--norc", "--noprofile", "-i"])
        .on_terminal();
    shell.send(&format!(
        "bash < '{}' >/dev/null 2>&1 & wait $!; echo job-done-$?\r",
        job.display()
    ));
    shell.expect("job-done-0");
    shell.send("exit\r");
    let prompt = env.last_agent_run().prompt().to_owned();
    assert!(
        marker.exists() && prompt == "review the build",
        "the rest of the job went to the agent and never ran: the agent's prompt was {prompt:?}"
    );
}

/// Review 26, M3: `bash -` and `zsh -` (a lone `-`: "read the commands from stdin", the
/// `curl ... | sh -` idiom) are taken for a shell running the script file `-`, so a turn in a
/// job piped into `sh -` reads the rest of the job as its piped context: the lines after it
/// never run, and go to the model, exit 0 (bash reads a pipe byte by byte; dash, `sh` here,
/// reads the whole job in blocks and is spared by chance).
#[test]
fn review26_a_job_piped_into_sh_dash_keeps_the_rest_of_its_script() {
    let env = TestEnv::new();
    let sticky = env!("CARGO_BIN_EXE_sticky");
    let marker = env.scratch.join("the-next-line-ran");
    let script = format!(
        "'{sticky}' 'review the build'\ntouch '{}'\n",
        marker.display()
    );
    let mut eaten = Vec::new();
    for shell in ["sh", "bash", "zsh"] {
        let _ = std::fs::remove_file(&marker);
        let output = env.program(shell, ["-"]).stdin(script.clone()).run();
        output.assert_success();
        let prompt = env.last_agent_run().prompt().to_owned();
        if !marker.exists() || prompt != "review the build" {
            eaten.push(format!(
                "`{shell} -`: the next line ran: {}; the agent's prompt was {prompt:?}",
                marker.exists()
            ));
        }
    }
    assert!(
        eaten.is_empty(),
        "a turn in a job read by a shell given `-` took the rest of the job:\n{}",
        eaten.join("\n")
    );
}

/// Review 26, M4: a job read from stdin by a container's first process (`docker run -i IMAGE
/// bash -s < job.sh`, with no `--init`): that shell is PID 1 in the container's PID namespace,
/// and `pipeline::is_shells_script` stops its search at a parent `<= 1` before looking at it.
/// The turn reads the rest of the job as its piped context: the lines after it never run and go
/// to the model, exit 0, the very case review 21, M1 fixed. Played with `unshare --pid`.
#[test]
fn review26_a_job_read_from_stdin_by_a_containers_first_process_keeps_the_rest_of_its_script() {
    let env = TestEnv::new();
    let namespace = ["-r", "--pid", "--fork", "--mount-proc"];
    let can = std::process::Command::new("unshare")
        .args(namespace)
        .arg("true")
        .status()
        .is_ok_and(|status| status.success());
    if !can {
        crate::support::skip_untested("unshare cannot make a PID namespace here");
        return;
    }
    let sticky = env!("CARGO_BIN_EXE_sticky");
    let marker = env.scratch.join("the-next-line-ran");
    let script = format!(
        "'{sticky}' 'review the build'\ntouch '{}'\n",
        marker.display()
    );
    let mut args: Vec<&str> = namespace.to_vec();
    args.extend(["bash", "-s"]);
    let output = env.program("unshare", args).stdin(script).run();
    let prompt = env.last_agent_run().prompt().to_owned();
    assert!(
        marker.exists() && prompt == "review the build",
        "the rest of the job went to the agent and never ran: the agent's prompt was \
         {prompt:?}\n{}",
        output.describe()
    );
}
