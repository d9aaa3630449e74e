//! Finding an agent's program: `STICKY_<AGENT>_BIN`, else the `bin` of the user's config file,
//! else its usual name on PATH; an error names which of these chose the program it could not
//! use.
//!
//! Only the user's environment and the user's config choose the program: nothing
//! inside a project directory can, so a cloned repository never decides what sticky runs. That
//! is also why a relative PATH entry (`.`, or the empty entry of a stray `:`) is skipped: it
//! would find a `claude` in whatever directory sticky was started from (Go's `exec.LookPath`
//! refuses such results for the same reason). The agent gets that PATH without its relative
//! entries too (`crate::search_lists`, for every program sticky starts): a `#!/usr/bin/env
//! node` agent runs in the project root, where `env` would otherwise find a cloned
//! repository's own `node` (review 21, H1).
//!
//! The program is checked as the kernel will see it, before the turn is recorded, so the error
//! can name the agent and the way out; a failed exec is reported only as an errno on Linux
//! (`posix_spawn`), and not at all by portable-pty's fork elsewhere (it closes std's pipe that
//! carries the exec error, so the agent would seem killed by SIGABRT). Hence `access(X_OK)`
//! (which knows the owner, ACLs and `noexec` mounts) rather than the mode bits, and the
//! interpreter of a `#!` script is checked too.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::unistd::{AccessFlags, access};

use crate::exit::StickyError;

/// The environment variable that overrides `agent`'s program (`STICKY_CLAUDE_BIN`).
pub fn override_var(agent: &str) -> String {
    let name: String = agent
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("STICKY_{name}_BIN")
}

/// A program chosen for an agent instead of its usual name, and what chose it.
#[derive(Debug, Clone)]
pub struct Chosen {
    /// A path, or a name looked up on PATH.
    pub program: OsString,
    /// What chose it, as errors name it: `STICKY_CLAUDE_BIN`, or `bin` in the config file.
    pub by: ChosenBy,
}

/// What chose an agent's program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChosenBy {
    /// The environment variable `STICKY_<AGENT>_BIN`.
    Environment,
    /// The `bin` of the agent in the configuration file at this path.
    Config(PathBuf),
}

/// Resolves the program of `agent`: the chosen one when there is one (a path, or a name looked
/// up on PATH), else `default` on PATH. An error names what chose the program it could not
/// use (the variable, the configuration file, or PATH) and how to change it.
pub fn resolve(
    agent: &str,
    default: &str,
    chosen: Option<Chosen>,
    path: Option<&OsStr>,
) -> Result<PathBuf, StickyError> {
    let from_env = chosen
        .as_ref()
        .is_some_and(|chosen| chosen.by == ChosenBy::Environment);
    let (wanted, source, other_way) = wanted(agent, default, chosen);
    if from_env && wanted.is_relative() && wanted.components().count() > 1 {
        // `./x` or `bin/x` would run whatever the current directory holds under that name (a
        // cloned repository's file): only an absolute path, or a bare name on PATH, is taken.
        let var = override_var(agent);
        return Err(StickyError::Usage(format!(
            "{var}={} is a relative path, which would run whatever the current directory \
             holds under that name; give an absolute path ({var}=\"$PWD/{}\"), or a bare \
             name to look up on PATH",
            wanted.display(),
            wanted
                .components()
                .filter(|part| *part != std::path::Component::CurDir)
                .collect::<PathBuf>()
                .display()
        )));
    }
    let missing = |what: String| StickyError::AgentMissing {
        agent: agent.to_owned(),
        reason: format!("`{}`{source} {what}, or {other_way}", wanted.display()),
    };
    let found = if wanted.components().count() > 1 || wanted.is_absolute() {
        wanted.is_file().then(|| wanted.clone())
    } else {
        path.into_iter()
            .flat_map(crate::search_lists::absolute_dirs)
            .map(|dir| dir.join(&wanted))
            .find(|candidate| is_executable(candidate))
    };
    let Some(found) = found else {
        return Err(missing(format!(
            "was not found; install it{}",
            skipped_where(&wanted, path)
        )));
    };
    if !is_executable(&found) {
        return Err(missing(format!(
            "is not executable ({}); fix its mode (chmod +x)",
            found.display()
        )));
    }
    if let Some(interpreter) = interpreter(&found).filter(|i| !is_executable(i)) {
        return Err(missing(format!(
            "cannot run: its interpreter `{}` (the #! line of {}) is missing or not executable; \
             reinstall it",
            interpreter.display(),
            found.display()
        )));
    }
    Ok(found)
}

/// For a bare name sticky did not find: the PATH entries it skipped that hold the program (a
/// literal `~/.local/bin`, which only a shell's own lookup expands; `.`), said so that "not
/// found" is not a riddle where the shell finds it (review 24, L2).
fn skipped_where(wanted: &Path, path: Option<&OsStr>) -> String {
    if wanted.components().count() > 1 {
        return String::new();
    }
    let home = crate::settings::home().ok();
    let skipped: Vec<String> = path
        .into_iter()
        .flat_map(std::env::split_paths)
        .filter(|dir| !dir.is_absolute())
        .filter(|dir| {
            let expanded = match (dir.strip_prefix("~"), &home) {
                (Ok(rest), Some(home)) => home.join(rest),
                _ => dir.clone(),
            };
            is_executable(&expanded.join(wanted))
        })
        .map(|dir| format!("`{}`", dir.display()))
        .collect();
    if skipped.is_empty() {
        return String::new();
    }
    format!(
        " (PATH's {} holds one, but sticky skips entries that are not absolute paths, since \
         the agent runs in the project directory: write it as an absolute path, e.g. \
         `$HOME/.local/bin` in place of `~/.local/bin`)",
        skipped.join(", ")
    )
}

/// The program `agent` wants (the chosen one, else `default`), what chose it as an error says it
/// (` (from STICKY_CLAUDE_BIN)`), and the other way to give one.
fn wanted(agent: &str, default: &str, chosen: Option<Chosen>) -> (PathBuf, String, String) {
    let var = override_var(agent);
    match chosen.filter(|c| !c.program.is_empty()) {
        Some(Chosen {
            program,
            by: ChosenBy::Environment,
        }) => (
            PathBuf::from(program),
            format!(" (from {var})"),
            format!("set {var} to another path"),
        ),
        Some(Chosen {
            program,
            by: ChosenBy::Config(file),
        }) => (
            PathBuf::from(program),
            format!(" (from `bin` of agent {agent} in {})", file.display()),
            format!(
                "change `bin` in {} (or set {var}, which overrides it)",
                file.display()
            ),
        ),
        None => (
            PathBuf::from(default),
            " (looked up on PATH)".to_owned(),
            format!("set {var} to its path"),
        ),
    }
}

/// The agent missing (exit 72) when the kernel refused to run `program` as a program (exec
/// format error: a file with the execute bit that is neither a binary for this machine nor a
/// `#!` script), which no check before the spawn can tell; otherwise `error` as it is.
pub fn refused(agent: &str, program: &Path, error: anyhow::Error) -> anyhow::Error {
    let enoexec = error.chain().any(|cause| {
        cause.downcast_ref::<nix::errno::Errno>() == Some(&nix::errno::Errno::ENOEXEC)
    });
    if !enoexec {
        return error;
    }
    StickyError::AgentMissing {
        agent: agent.to_owned(),
        reason: format!(
            "`{}` cannot run: it is not a program for this machine (exec format error: neither \
             a binary for this system nor a script with a #! line); reinstall it, or set {} to \
             another path",
            program.display(),
            override_var(agent)
        ),
    }
    .into()
}

/// Whether this process may execute `path`, a regular file.
fn is_executable(path: &Path) -> bool {
    path.metadata().is_ok_and(|meta| meta.is_file()) && access(path, AccessFlags::X_OK).is_ok()
}

/// The interpreter named by the `#!` line of the script `program`, if it is one with an
/// absolute interpreter path (a relative one is left to the kernel).
fn interpreter(program: &Path) -> Option<PathBuf> {
    let mut head = [0_u8; 256];
    let mut file = std::fs::File::open(program).ok()?;
    let len = file.read(&mut head).ok()?;
    let line = head[..len].strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let name = line
        .split(u8::is_ascii_whitespace)
        .find(|word| !word.is_empty())?;
    let name = Path::new(OsStr::from_bytes(name));
    name.is_absolute().then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    /// `program` as `STICKY_CLAUDE_BIN` chose it.
    fn from_env(program: PathBuf) -> Chosen {
        Chosen {
            program: program.into(),
            by: ChosenBy::Environment,
        }
    }

    /// An executable script `name` in `dir` holding `body`.
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, body).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn override_variables_are_named_after_the_agent() {
        assert_eq!(override_var("claude"), "STICKY_CLAUDE_BIN");
        assert_eq!(override_var("my-agent"), "STICKY_MY_AGENT_BIN");
    }

    #[test]
    fn programs_are_found_on_path_or_by_override() {
        let dir = tempfile::tempdir().unwrap();
        let exe = script(dir.path(), "claude", "#!/bin/sh\n");
        let plain = dir.path().join("plain");
        fs::write(&plain, "").unwrap();
        let path = Some(dir.path().as_os_str().to_owned());

        assert_eq!(
            resolve("claude", "claude", None, path.as_deref()).unwrap(),
            exe
        );
        assert_eq!(
            resolve("claude", "nope", Some(from_env(exe.clone())), None).unwrap(),
            exe
        );
        let error = resolve("claude", "nope", None, path.as_deref()).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("`nope` (looked up on PATH) was not found"),
            "{error}"
        );
        let error =
            resolve("claude", "claude", Some(from_env(plain)), path.as_deref()).unwrap_err();
        assert!(error.to_string().contains("not executable"), "{error}");
        assert!(error.to_string().contains("STICKY_CLAUDE_BIN"), "{error}");
    }

    #[test]
    fn a_relative_path_in_the_override_variable_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let exe = script(dir.path(), "claude", "#!/bin/sh\n");
        for relative in ["./claude", "bin/claude", "../x/claude"] {
            let error = resolve(
                "claude",
                "claude",
                Some(from_env(PathBuf::from(relative))),
                None,
            )
            .unwrap_err();
            assert!(matches!(error, StickyError::Usage(_)), "{error}");
            let text = error.to_string();
            assert!(
                text.contains(&format!("STICKY_CLAUDE_BIN={relative} is a relative path"))
                    && text.contains("give an absolute path"),
                "{text}"
            );
        }
        let error = resolve("claude", "claude", Some(from_env("./claude".into())), None)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("STICKY_CLAUDE_BIN=\"$PWD/claude\""),
            "{error}"
        );
        // A bare name is looked up on PATH, as before.
        let path = Some(dir.path().as_os_str().to_owned());
        let found = resolve(
            "claude",
            "nope",
            Some(from_env("claude".into())),
            path.as_deref(),
        );
        assert_eq!(found.unwrap(), exe);
    }

    #[test]
    fn errors_name_what_chose_the_program() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let config = dir.path().join("config.toml");
        let from_config = Some(Chosen {
            program: gone.clone().into(),
            by: ChosenBy::Config(config.clone()),
        });
        let text = resolve("claude", "claude", from_config, None)
            .unwrap_err()
            .to_string();
        let expected = format!(
            "`{}` (from `bin` of agent claude in {}) was not found; install it, or change `bin` \
             in {} (or set STICKY_CLAUDE_BIN, which overrides it)",
            gone.display(),
            config.display(),
            config.display()
        );
        assert!(text.ends_with(&expected), "{text}");
        assert!(!text.contains("from STICKY_CLAUDE_BIN"), "{text}");

        let text = resolve("claude", "claude", Some(from_env(gone.clone())), None)
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("(from STICKY_CLAUDE_BIN) was not found"),
            "{text}"
        );

        let path = Some(dir.path().as_os_str().to_owned());
        let text = resolve("claude", "claude", None, path.as_deref())
            .unwrap_err()
            .to_string();
        assert!(
            text.contains(
                "`claude` (looked up on PATH) was not found; install it, or set \
                 STICKY_CLAUDE_BIN to its path"
            ),
            "{text}"
        );
    }

    #[test]
    fn relative_path_entries_are_never_searched() {
        // `PATH=/usr/bin:` (a stray colon) means "also the current directory" to a shell; a
        // cloned repository's `claude` there must not be what sticky runs.
        let dir = tempfile::tempdir().unwrap();
        script(dir.path(), "claude", "#!/bin/sh\n");
        let relative = relative_to_cwd(dir.path());
        for path in ["", ":", ".", &relative] {
            let error = resolve("claude", "claude", None, Some(OsStr::new(path))).unwrap_err();
            assert!(
                error.to_string().contains("was not found"),
                "{path:?}: {error}"
            );
        }
    }

    /// `dir` relative to the current directory (`../../tmp/x`), for a relative PATH entry that
    /// does lead to a program.
    fn relative_to_cwd(dir: &Path) -> String {
        let cwd = std::env::current_dir().unwrap();
        let ups = cwd.components().count() - 1;
        format!(
            "{}{}",
            "../".repeat(ups),
            dir.strip_prefix("/").unwrap().display()
        )
    }

    #[test]
    fn a_script_whose_interpreter_is_gone_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let gone = script(
            dir.path(),
            "gone",
            "#!/nonexistent/node --flag\nconsole.log(1)\n",
        );
        let error = resolve("claude", "claude", Some(from_env(gone)), None).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("interpreter `/nonexistent/node`"), "{text}");
        assert!(text.contains("STICKY_CLAUDE_BIN"), "{text}");
        assert!(matches!(error, StickyError::AgentMissing { .. }));

        let spaced = script(dir.path(), "spaced", "#! /bin/sh -e\n");
        assert_eq!(
            resolve("claude", "claude", Some(from_env(spaced.clone())), None).unwrap(),
            spaced
        );
        let binary = script(dir.path(), "binary", "\x7fELF");
        assert!(resolve("claude", "claude", Some(from_env(binary)), None).is_ok());
    }

    #[test]
    fn only_an_exec_format_error_makes_a_spawn_failure_the_agent_missing() {
        let spawn = |errno: nix::errno::Errno| {
            let error = anyhow::Error::new(errno).context("could not start /bin/claude");
            crate::exit::exit_for(&refused("claude", Path::new("/bin/claude"), error))
        };
        assert_eq!(
            spawn(nix::errno::Errno::ENOEXEC),
            crate::exit::Exit::AgentMissing
        );
        assert_eq!(
            spawn(nix::errno::Errno::ENOMEM),
            crate::exit::Exit::Internal
        );
    }
}
