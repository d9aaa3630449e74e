//! Review 22: an adversarial try of the vault, bundles, pipes and configuration, and of what the
//! agent process inherits from sticky. Each test fails on the code the review found and passes
//! once its finding is fixed.

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{TestEnv, fakes_dir, python};

/// The first directory of the test's own PATH that holds `program`.
fn on_system_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

/// The PATH a `TestEnv` gives sticky (the env's `bin`, the fakes, the system's PATH less any
/// real `claude`), with `front` before it: a relative entry a shell profile left there.
fn path_with_front(env: &TestEnv, front: &str) -> OsString {
    let bin = env.home.parent().expect("the env's base").join("bin");
    let system = std::env::var_os("PATH").unwrap_or_default();
    let system = std::env::join_paths(
        std::env::split_paths(&system).filter(|dir| !dir.join("claude").exists()),
    )
    .expect("a PATH");
    let mut path = OsString::from(front);
    path.push(bin.as_os_str());
    path.push(":");
    path.push(fakes_dir().as_os_str());
    path.push(":");
    path.push(&system);
    path
}

/// Writes an executable `body` at `path`.
fn executable(path: &Path, body: &str) {
    fs::write(path, body).expect("write a program");
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Review 22, H1: review 21 kept a relative PATH entry (the empty entry of a stray `:`) from
/// choosing the agent's program and its interpreter, but sticky's own `git` is still looked up
/// through it, and sticky runs git in the project's root (`-t @branch`, `thread = "branch"`,
/// `threads --prune`, the checks of whether git tracks `.sticky/`): a cloned repository that
/// ships an executable `git` at its root runs it as the user, even for a turn started in a
/// subdirectory, where the user's own `git` would not find it. sticky must look git up as it
/// looks up the agent: absolute PATH entries only.
#[test]
fn review22_a_relative_path_entry_never_runs_the_repositorys_git() {
    let mut env = TestEnv::new();
    let real_git = on_system_path("git").expect("git is installed");
    let marker = env.scratch.join("pwned");
    executable(
        &env.project.join("git"),
        &format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\nexec '{}' \"$@\"\n",
            marker.display(),
            real_git.display()
        ),
    );
    env.git(&env.project, &["add", "git"]);
    env.commit(&env.project, "a repository shipping a git");
    let sub = env.project.join("src");
    fs::create_dir_all(&sub).expect("a subdirectory");
    env.set_var("PATH", path_with_front(&env, ":"));

    let output = env
        .sticky(["-t", "@branch", "hello"])
        .current_dir(&sub)
        .run();
    assert!(
        !marker.exists(),
        "sticky ran the repository's ./git ({}): {}",
        fs::read_to_string(&marker).unwrap_or_default().trim(),
        output.describe()
    );
    output.assert_success();
}

/// The GLIBC version nodes `library` defines (`objdump -p`), for a stand-in that the dynamic
/// loader accepts in its place.
fn version_nodes(library: &Path) -> Vec<String> {
    let output = Command::new("objdump")
        .arg("-p")
        .arg(library)
        .output()
        .expect("objdump runs (binutils)");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().nth(3))
        .filter(|name| name.starts_with("GLIBC_"))
        .fold(Vec::new(), |mut nodes, name| {
            if !nodes.iter().any(|known: &String| known == name) {
                nodes.push(name.to_owned());
            }
            nodes
        })
}

/// Where the dynamic loader finds `name` for `program` (`ldd`).
fn linked_library(program: &Path, name: &str) -> Option<PathBuf> {
    let output = Command::new("ldd").arg(program).output().ok()?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| {
            let (left, right) = line.trim().split_once(" => ")?;
            let path = PathBuf::from(right.split(" (").next()?.trim());
            (left == name).then_some(path)
        })
}

/// Review 22, H2: the agent runs in the project's root with sticky's environment; review 21 took
/// the relative entries out of its PATH, but not out of `LD_LIBRARY_PATH`, where an empty entry
/// (`export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64` with the variable unset
/// before, as CUDA's install guide writes it) is the current directory to the dynamic loader. A
/// cloned repository with a `libm.so.6` at its root then runs its code inside the agent (node,
/// codex and the fakes' python all load libm), for a turn run in any subdirectory, where the
/// user's own commands would not find that library. The agent must get `LD_LIBRARY_PATH` (and
/// the loader's other lists) without relative or empty entries, as it gets PATH.
#[test]
fn review22_an_empty_library_path_entry_never_loads_the_repositorys_library_into_the_agent() {
    let env = TestEnv::new();
    let Some(libm) = linked_library(python(), "libm.so.6").or_else(|| {
        // The interpreter links libm through libpython.
        let output = Command::new("ldd").arg(python()).output().ok()?;
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .find_map(|line| {
                let right = line.split_once(" => ")?.1;
                let path = PathBuf::from(right.split(" (").next()?.trim());
                path.file_name()?
                    .to_str()?
                    .starts_with("libpython")
                    .then_some(path)
            })
            .and_then(|libpython| linked_library(&libpython, "libm.so.6"))
    }) else {
        crate::support::skip::skip("the fakes' python3 does not link libm.so.6");
        return;
    };
    let marker = env.scratch.join("pwned");
    let build = env.scratch.join("build");
    fs::create_dir_all(&build).expect("a build directory");
    fs::write(
        build.join("m.c"),
        format!(
            "#include <stdio.h>\n\
             __attribute__((constructor)) static void ran(void) {{\n\
               FILE *f = fopen(\"{}\", \"a\");\n\
               if (f) {{ fputs(\"the repository's libm.so.6 ran in the agent\\n\", f); fclose(f); }}\n\
             }}\n",
            marker.display()
        ),
    )
    .expect("write the library's source");
    let nodes = version_nodes(&libm);
    assert!(!nodes.is_empty(), "libm defines GLIBC versions");
    let script: String = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            if i == 0 {
                format!("{node} {{ local: *; }};\n")
            } else {
                format!("{node} {{ }};\n")
            }
        })
        .collect();
    fs::write(build.join("v.map"), script).expect("write the version script");
    let compiled = Command::new("cc")
        .current_dir(&build)
        .args([
            "-shared",
            "-fPIC",
            "-o",
            "libm.so.6",
            "-Wl,--version-script=v.map",
            "-Wl,-soname,libm.so.6",
            "m.c",
        ])
        .status()
        .expect("cc runs (Rust links with it)");
    assert!(compiled.success(), "the stand-in libm.so.6 builds");
    fs::copy(build.join("libm.so.6"), env.project.join("libm.so.6")).expect("plant the library");
    env.git(&env.project, &["add", "libm.so.6"]);
    env.commit(&env.project, "a repository shipping a libm.so.6");
    let sub = env.project.join("src");
    fs::create_dir_all(&sub).expect("a subdirectory");

    let output = env
        .sticky(["hello"])
        .current_dir(&sub)
        .env("LD_LIBRARY_PATH", ":/usr/local/cuda/lib64")
        .run();
    assert!(
        !marker.exists(),
        "the repository's libm.so.6 was loaded into the agent: {}",
        output.describe()
    );
    output.assert_success();
}

/// Review 22, H3: review 21 gave the agent a PATH without its relative entries, so a
/// repository's `python3` or `node` at its root never runs as the interpreter of a
/// `#!/usr/bin/env` agent on a turn; but `sticky agents`, `sticky doctor` and `sticky export`
/// run every agent's program with `--version` under sticky's own PATH, unfiltered, so a stray
/// `:` in it still runs the repository's interpreter there (once per installed agent). Every
/// run of an agent's program must get the agent's PATH.
#[test]
fn review22_a_relative_path_entry_never_runs_the_repositorys_interpreter_for_a_version() {
    let mut env = TestEnv::new();
    env.ok(["hello"]);
    let marker = env.scratch.join("pwned");
    executable(
        &env.project.join("python3"),
        &format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            marker.display(),
            python().display()
        ),
    );
    env.git(&env.project, &["add", "python3"]);
    env.commit(&env.project, "a repository shipping a python3");
    env.set_var("PATH", path_with_front(&env, ":"));

    let bundle = env.scratch.join("main.sticky");
    let bundle = bundle.to_str().expect("a UTF-8 path");
    for args in [vec!["agents"], vec!["doctor"], vec!["export", "-o", bundle]] {
        let output = env.sticky(&args).run();
        assert!(
            !marker.exists(),
            "sticky {args:?} ran the repository's ./python3 ({}): {}",
            fs::read_to_string(&marker).unwrap_or_default().trim(),
            output.describe()
        );
    }
}

/// Review 22, M1: review 21 kept a turn from reading the stdin its shell reads its script from
/// (`bash < job.sh`, `cat job.sh | bash`, GitLab CI's Docker executor), but only when that shell
/// is the first shell up the process tree: `pipeline::is_shells_script` stops at the first
/// shell it meets and trusts its answer, so a job line that calls a script (`./ci/review.sh`,
/// `sh review.sh`), or goes through `sh -c` (`npm run`, `make`, `just`, `os.system`, `find
/// -exec sh -c`), hides the shell that reads the job: the turn takes the rest of the job as its
/// context, the lines after it never run, the job ends with exit 0, and its remaining commands
/// go to the model. The script or `-c` shell shares the job's stdin, so the search must go on
/// above it.
#[test]
fn review22_a_turn_in_a_script_called_by_a_job_read_from_stdin_leaves_the_rest_of_the_job() {
    let env = TestEnv::new();
    let sticky = env!("CARGO_BIN_EXE_sticky");
    let marker = env.scratch.join("the-next-line-ran");
    let wrapper = env.scratch.join("review.sh");
    executable(
        &wrapper,
        &format!("#!/bin/sh\n'{sticky}' 'review the build'\n"),
    );
    for line in [
        format!("'{}'", wrapper.display()),
        format!("sh '{}'", wrapper.display()),
        format!("sh -c \"'{sticky}' 'review the build' 2>&1\""),
    ] {
        let _ = fs::remove_file(&marker);
        let script = format!("echo before\n{line}\ntouch '{}'\n", marker.display());
        let output = env.program("bash", Vec::<&str>::new()).stdin(script).run();
        output.assert_success();
        let prompt = env.last_agent_run().prompt().to_owned();
        assert!(
            marker.exists(),
            "the job line after `{line}` never ran; the turn's prompt: {prompt:?}\n{}",
            output.describe()
        );
        assert_eq!(prompt, "review the build", "{line}");
    }
}
