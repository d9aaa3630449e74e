//! Review 22: an adversarial try of the vault, bundles, pipes and configuration, and of what the
//! agent process inherits from sticky. Each test fails on the code the review found and passes
//! once its finding is fixed.

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::{TestEnv, fakes_dir};

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
