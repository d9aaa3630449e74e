//! Finding an agent's program: `STICKY_<AGENT>_BIN`, else its usual name on PATH.
//!
//! Only the user's environment (and, later, the user's config) chooses the program: nothing
//! inside a project directory can, so a cloned repository never decides what sticky runs.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

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

/// Resolves the program of `agent`: the override when set (a path, or a name looked up on
/// PATH), else `default` on PATH.
pub fn resolve(
    agent: &str,
    default: &str,
    override_value: Option<OsString>,
    path: Option<&OsStr>,
) -> Result<PathBuf, StickyError> {
    let var = override_var(agent);
    let (wanted, source) = match override_value.filter(|value| !value.is_empty()) {
        Some(value) => (PathBuf::from(value), format!(" (from {var})")),
        None => (PathBuf::from(default), String::new()),
    };
    let missing = |reason: String| StickyError::AgentMissing {
        agent: agent.to_owned(),
        reason,
    };
    let found = if wanted.components().count() > 1 || wanted.is_absolute() {
        wanted.is_file().then(|| wanted.clone())
    } else {
        path.into_iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join(&wanted))
            .find(|candidate| is_executable(candidate))
    };
    let Some(found) = found else {
        return Err(missing(format!(
            "`{}`{source} was not found; install it, or set {var} to its path",
            wanted.display()
        )));
    };
    if !is_executable(&found) {
        return Err(missing(format!(
            "`{}`{source} is not executable; fix its mode (chmod +x) or set {var}",
            found.display()
        )));
    }
    Ok(found)
}

fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn override_variables_are_named_after_the_agent() {
        assert_eq!(override_var("claude"), "STICKY_CLAUDE_BIN");
        assert_eq!(override_var("my-agent"), "STICKY_MY_AGENT_BIN");
    }

    #[test]
    fn programs_are_found_on_path_or_by_override() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("claude");
        fs::write(&exe, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
        let plain = dir.path().join("plain");
        fs::write(&plain, "").unwrap();
        let path = Some(dir.path().as_os_str().to_owned());

        assert_eq!(
            resolve("claude", "claude", None, path.as_deref()).unwrap(),
            exe
        );
        assert_eq!(
            resolve("claude", "nope", Some(exe.clone().into()), None).unwrap(),
            exe
        );
        let error = resolve("claude", "nope", None, path.as_deref()).unwrap_err();
        assert!(
            error.to_string().contains("`nope` was not found"),
            "{error}"
        );
        let error = resolve("claude", "claude", Some(plain.into()), path.as_deref()).unwrap_err();
        assert!(error.to_string().contains("not executable"), "{error}");
        assert!(error.to_string().contains("STICKY_CLAUDE_BIN"), "{error}");
    }
}
