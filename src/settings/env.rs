//! The environment sticky honours, read here and nowhere else: each variable has one function
//! that says what it means and what an empty value does. Test-only hooks (`STICKY_TEST_*`) stay
//! beside the code they test. The agent itself gets the whole environment (`pty::spawn`), which
//! is the agent's to read, not sticky's.
//!
//! | variable | read by | meaning |
//! |---|---|---|
//! | `HOME` | [`home`] | the user's home: agents' sessions, sticky's key and list of projects |
//! | `XDG_CONFIG_HOME`, `XDG_DATA_HOME` (through `dirs`) | [`config_dir`], [`data_dir`] | where the configuration and the key are |
//! | `XDG_STATE_HOME` | [`state_home`] | where `sticky doctor` suggests a database of one's own |
//! | `STICKY_CONFIG` | [`config_file`] | the configuration file |
//! | `STICKY_DB` | [`db`] | a database that overrides `.sticky/sticky.db` |
//! | `STICKY_CEILING_DIRECTORIES` | [`ceilings`] | directories the project search never enters |
//! | `STICKY_THREAD` | [`thread`] (and clap's `env =`) | the thread |
//! | `STICKY_STDIN` | [`stdin`] | what a turn does with stdin |
//! | `STICKY_<AGENT>_BIN` | [`agent_bin`] | an agent's program |
//! | `PATH` | [`path`] | where agents' programs are looked up |
//! | `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, ... | [`dir`] | an agent's own home, as the agent reads it |
//! | `GITHUB_*` | [`var`] (through `settings::resolve_thread`) | `-t @pr`'s pull request |
//! | `COLUMNS`, `LINES` | [`size`] | a headless agent's terminal size |
//! | `PAGER`, `LESS`, `LV` | [`pager`], [`less`], [`lv`] | the pager of long listings |
//! | `NO_COLOR` | [`no_color`] | no bold in `search`'s matches |
//!
//! The variables clap reads for flags (`STICKY_AGENT`, `STICKY_MODEL`, ...) are named on the
//! flags (`env =` in `cli.rs`), where the help shows them.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::exit::StickyError;

/// The variable that moves the configuration file.
pub const CONFIG: &str = "STICKY_CONFIG";

/// The variable that sets what a turn does with stdin, as `--stdin` does.
pub const STDIN: &str = "STICKY_STDIN";

/// The variable that names the database.
pub const DB: &str = "STICKY_DB";

/// The variable that lists directories the project search never enters.
pub const CEILINGS: &str = "STICKY_CEILING_DIRECTORIES";

/// The variable that names the thread.
pub const THREAD: &str = "STICKY_THREAD";

/// A variable, when set and not empty (an empty value counts as unset).
pub fn var_os(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|value| !value.is_empty())
}

/// A variable as text, when set, not empty and UTF-8.
pub fn var(name: &str) -> Option<String> {
    var_os(name).and_then(|value| value.into_string().ok())
}

/// A variable that names a directory, when set and not empty.
pub fn dir(name: &str) -> Option<PathBuf> {
    var_os(name).map(PathBuf::from)
}

/// The user's home directory, where the agents keep their sessions and sticky its key: `HOME`.
/// Never empty and never relative, so no agent path is taken relative to the current
/// directory: without one the error says how to set it. The account's entry in the password
/// database is not a fallback: the agents sticky runs would read the same unset `HOME`.
pub fn home() -> Result<PathBuf, StickyError> {
    home_from(std::env::var_os("HOME"))
}

fn home_from(value: Option<OsString>) -> Result<PathBuf, StickyError> {
    match value.filter(|home| !home.is_empty()).map(PathBuf::from) {
        Some(home) if home.is_absolute() => Ok(home),
        Some(home) => Err(StickyError::Usage(format!(
            "HOME is {}, not an absolute path: set HOME to your home directory (HOME=/home/you)",
            home.display()
        ))),
        None => Err(StickyError::Usage(
            "HOME is not set: set HOME to your home directory (HOME=/home/you)".into(),
        )),
    }
}

/// The user's configuration directory (`XDG_CONFIG_HOME`, else `~/.config`; the platform's
/// own on macOS), only under an absolute HOME.
pub fn config_dir() -> Option<PathBuf> {
    home().ok().and(dirs::config_dir())
}

/// The user's data directory (`XDG_DATA_HOME`, else `~/.local/share`; the platform's own on
/// macOS), only under an absolute HOME.
pub fn data_dir() -> Option<PathBuf> {
    home().ok().and(dirs::data_dir())
}

/// The user's state directory: `XDG_STATE_HOME` when absolute, else `~/.local/state`.
pub fn state_home() -> Option<PathBuf> {
    dir("XDG_STATE_HOME")
        .filter(|dir| dir.is_absolute())
        .or_else(|| home().ok().map(|home| home.join(".local/state")))
}

/// `STICKY_CONFIG`: the configuration file, as given.
pub fn config_file() -> Option<PathBuf> {
    dir(CONFIG)
}

/// `STICKY_STDIN`: what a turn does with stdin, as given.
pub fn stdin() -> Option<OsString> {
    var_os(STDIN)
}

/// `STICKY_DB`: a database path that overrides `.sticky/sticky.db`.
pub fn db() -> Option<PathBuf> {
    dir(DB)
}

/// `STICKY_CEILING_DIRECTORIES`, as given (a list of paths).
pub fn ceilings() -> Option<OsString> {
    var_os(CEILINGS)
}

/// `STICKY_THREAD`: the thread, as given.
pub fn thread() -> Option<String> {
    var(THREAD)
}

/// `STICKY_<AGENT>_BIN` (`var`, from `agent::program::override_var`): an agent's program.
pub fn agent_bin(var: &str) -> Option<OsString> {
    var_os(var)
}

/// `PATH`, as given.
pub fn path() -> Option<OsString> {
    std::env::var_os("PATH")
}

/// `COLUMNS` and `LINES`, as given.
pub fn size() -> (Option<OsString>, Option<OsString>) {
    (std::env::var_os("COLUMNS"), std::env::var_os("LINES"))
}

/// `PAGER`, as given (an empty one means no pager).
pub fn pager() -> Option<OsString> {
    std::env::var_os("PAGER")
}

/// `LESS` for the pager: the user's, else `FRX` (quit on one screen, colours, no init).
pub fn less() -> OsString {
    std::env::var_os("LESS").unwrap_or_else(|| "FRX".into())
}

/// `LV` for the pager: the user's, else `-c` (colours).
pub fn lv() -> OsString {
    std::env::var_os("LV").unwrap_or_else(|| "-c".into())
}

/// Whether `NO_COLOR` is set (to anything, as no-color.org says).
pub fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_is_refused_unset_empty_or_relative() {
        for value in [None, Some(""), Some("home/you"), Some("~")] {
            let error = home_from(value.map(OsString::from))
                .unwrap_err()
                .to_string();
            assert!(error.contains("HOME"), "{value:?}: {error}");
            assert!(error.contains("HOME=/home/you"), "{value:?}: {error}");
        }
        assert_eq!(
            home_from(Some("/home/you".into())).unwrap(),
            PathBuf::from("/home/you")
        );
    }
}
