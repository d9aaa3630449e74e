//! The search lists of every program sticky starts: `PATH`, the dynamic loader's library paths
//! and the interpreters' module paths, kept to their absolute entries.
//!
//! sticky starts the agent, its own `git` and the agents' `--version` in the project's root,
//! and the pager in the user's directory. To each of these lists a relative entry (`.`, `bin`)
//! or an empty one (a stray `:`, `LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64` with
//! the variable unset before) means the working directory, so a cloned repository's own `git`,
//! `node`, `python3` or `libm.so.6` would run as the user, even for a turn started in a
//! subdirectory where the user's own commands would not find them (review 21, H1; review 22,
//! H1, H2, H3, L2). One rule, here, for all of them: an entry that is not absolute is dropped;
//! a variable with nothing left is removed. A program looked up by name (`git`, `less`) is then
//! found through absolute entries only: Rust's `Command` looks a bare name up through the PATH
//! the child gets when one is set.
//!
//! Every place sticky starts a program goes through here: [`apply`] for a `std::process::Command`
//! (git, the pager, the stdin shim's exec), [`apply_tokio`] for tokio's (the version probe),
//! and [`environment`] for the whole environment the pseudo-terminal's spawn gives the agent,
//! after the configuration's `[agents.X] env` (so a configured PATH is kept to its absolute
//! entries too).

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// The variables holding a list of directories that a program, its dynamic loader or its
/// interpreter searches, where a relative or empty entry is the working directory.
pub const VARIABLES: [&str; 11] = [
    "PATH",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
    "NODE_PATH",
    "PERL5LIB",
    "PERLLIB",
    "RUBYLIB",
    // macOS's dynamic loader (dyld).
    "DYLD_LIBRARY_PATH",
    "DYLD_FALLBACK_LIBRARY_PATH",
    "DYLD_FRAMEWORK_PATH",
    "DYLD_FALLBACK_FRAMEWORK_PATH",
];

/// Whether `name` is one of the search lists ([`VARIABLES`]).
fn is_search_list(name: &OsStr) -> bool {
    VARIABLES.iter().any(|list| name == *list)
}

/// The absolute entries of the search list `list`, in order.
pub fn absolute_dirs(list: &OsStr) -> impl Iterator<Item = PathBuf> + '_ {
    std::env::split_paths(list).filter(|dir| dir.is_absolute())
}

/// `list` without its entries that are not absolute (`.`, `bin`, the empty entry of a stray
/// `:`), or `None` when none is left: the variable is then removed rather than set empty,
/// since an empty PATH is one empty entry, the working directory, to `execvp(3)`.
pub fn absolute_entries(list: &OsStr) -> Option<OsString> {
    let kept: Vec<PathBuf> = absolute_dirs(list).collect();
    if kept.is_empty() {
        return None;
    }
    // Entries split from one list hold no `:`, so they join again.
    std::env::join_paths(kept).ok()
}

/// What a program that gets `given` as its search lists (the value each of [`VARIABLES`] has
/// for it, `None` when it has none) must be given instead: for each list that changes, its
/// absolute entries, or `None` to remove it.
pub fn changes(given: impl Fn(&str) -> Option<OsString>) -> Vec<(&'static str, Option<OsString>)> {
    VARIABLES
        .iter()
        .filter_map(|&name| {
            let list = given(name)?;
            let kept = absolute_entries(&list);
            (kept.as_deref() != Some(list.as_os_str())).then_some((name, kept))
        })
        .collect()
}

/// Keeps the search lists of the program `command` starts to their absolute entries: the ones
/// it sets itself, else sticky's own. Call it after the command's own `env` and `env_remove`
/// (std cannot tell whether `env_clear` was called; nothing in sticky calls it).
pub fn apply(command: &mut std::process::Command) -> &mut std::process::Command {
    let set: Vec<(OsString, Option<OsString>)> = command
        .get_envs()
        .map(|(name, value)| (name.to_owned(), value.map(OsStr::to_owned)))
        .collect();
    let given = |name: &str| match set.iter().find(|(set, _)| set == name) {
        Some((_, value)) => value.clone(),
        None => std::env::var_os(name),
    };
    for (name, kept) in changes(given) {
        match kept {
            Some(kept) => command.env(name, kept),
            None => command.env_remove(name),
        };
    }
    command
}

/// [`apply`] for a tokio command.
pub fn apply_tokio(command: &mut tokio::process::Command) -> &mut tokio::process::Command {
    apply(command.as_std_mut());
    command
}

/// sticky's environment with `overrides` on top (a later one wins) and its search lists kept
/// to their absolute entries: the whole environment of a program started on the
/// pseudo-terminal.
pub fn environment(overrides: &[(OsString, OsString)]) -> Vec<(OsString, OsString)> {
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    for (name, value) in overrides {
        vars.retain(|(key, _)| key != name);
        vars.push((name.clone(), value.clone()));
    }
    kept(vars)
}

/// `vars` (a whole environment) with every search list kept to its absolute entries, and one
/// with none left removed.
fn kept(vars: Vec<(OsString, OsString)>) -> Vec<(OsString, OsString)> {
    vars.into_iter()
        .filter_map(|(name, value)| {
            if !is_search_list(&name) {
                return Some((name, value));
            }
            absolute_entries(&value).map(|kept| (name, kept))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept_of(list: &str) -> Option<OsString> {
        absolute_entries(OsStr::new(list))
    }

    #[test]
    fn an_empty_entry_is_dropped() {
        assert_eq!(kept_of(":/usr/bin:/bin"), Some("/usr/bin:/bin".into()));
        assert_eq!(kept_of("/usr/bin::/bin:"), Some("/usr/bin:/bin".into()));
    }

    #[test]
    fn a_relative_entry_is_dropped() {
        assert_eq!(
            kept_of(".:node_modules/.bin:../lib:/usr/local/bin"),
            Some("/usr/local/bin".into())
        );
    }

    #[test]
    fn absolute_entries_are_kept_as_they_are_in_order() {
        assert_eq!(
            kept_of("/a b/bin:/usr/bin:/opt/x/../y"),
            Some("/a b/bin:/usr/bin:/opt/x/../y".into())
        );
    }

    #[test]
    fn a_list_with_nothing_left_is_removed() {
        assert_eq!(kept_of("bin"), None);
        assert_eq!(kept_of(":"), None);
        assert_eq!(kept_of(""), None);
    }

    #[test]
    fn every_search_list_is_kept_and_other_variables_are_left_alone() {
        let vars: Vec<(OsString, OsString)> = [
            ("LD_LIBRARY_PATH", ":/usr/local/cuda/lib64"),
            ("PYTHONPATH", "."),
            ("DYLD_FALLBACK_LIBRARY_PATH", "lib:/usr/lib"),
            ("HOME", "relative/home"),
            ("MANPATH", ":/usr/share/man"),
        ]
        .into_iter()
        .map(|(name, value)| (name.into(), value.into()))
        .collect();
        let expected: Vec<(OsString, OsString)> = [
            ("LD_LIBRARY_PATH", "/usr/local/cuda/lib64"),
            ("DYLD_FALLBACK_LIBRARY_PATH", "/usr/lib"),
            ("HOME", "relative/home"),
            ("MANPATH", ":/usr/share/man"),
        ]
        .into_iter()
        .map(|(name, value)| (name.into(), value.into()))
        .collect();
        assert_eq!(kept(vars), expected);
    }

    #[test]
    fn only_the_lists_that_change_are_changed() {
        let given = |name: &str| match name {
            "PATH" => Some(OsString::from("/usr/bin:/bin")),
            "NODE_PATH" => Some(OsString::from(":/usr/lib/node")),
            "RUBYLIB" => Some(OsString::from("lib")),
            _ => None,
        };
        assert_eq!(
            changes(given),
            [
                ("NODE_PATH", Some(OsString::from("/usr/lib/node"))),
                ("RUBYLIB", None)
            ]
        );
    }

    #[test]
    fn a_command_gets_its_own_lists_kept_and_removed() {
        let mut command = std::process::Command::new("true");
        command
            .env("PATH", ":/usr/bin")
            .env("PERL5LIB", ".")
            .env("LD_LIBRARY_PATH", "/opt/lib");
        apply(&mut command);
        let envs: Vec<(&OsStr, Option<&OsStr>)> = command.get_envs().collect();
        assert!(envs.contains(&(OsStr::new("PATH"), Some(OsStr::new("/usr/bin")))));
        assert!(envs.contains(&(OsStr::new("PERL5LIB"), None)));
        assert!(envs.contains(&(OsStr::new("LD_LIBRARY_PATH"), Some(OsStr::new("/opt/lib")))));
    }

    #[test]
    fn overrides_are_kept_to_absolute_entries_too() {
        let env = environment(&[
            ("PATH".into(), ".:/usr/bin".into()),
            ("STICKY_ACTIVE".into(), "1".into()),
        ]);
        let value = |name: &str| {
            env.iter()
                .rev()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
        };
        assert_eq!(value("PATH"), Some("/usr/bin".into()));
        assert_eq!(value("STICKY_ACTIVE"), Some("1".into()));
        assert_eq!(env.iter().filter(|(key, _)| key == "PATH").count(), 1);
    }
}
