//! Running sticky as a user whom file modes stop. Tests run as root here (CI too), and root
//! ignores modes, so such a run goes through `setpriv` as `nobody` (65534); as an ordinary user
//! the command runs as it is.

use std::process::Command;

/// Whether the tests run as root (whom file modes do not stop).
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    tempfile::tempfile()
        .and_then(|file| file.metadata())
        .is_ok_and(|meta| meta.uid() == 0)
}

/// Whether `setpriv` is there to run a command as another user.
pub fn has_setpriv() -> bool {
    Command::new("setpriv").arg("--version").output().is_ok()
}

/// `command` (its program, arguments, directory and environment, and nothing else of the
/// test's environment) as a user whom file modes stop: as root, `nobody` through setpriv.
pub fn as_user(command: &Command) -> Command {
    let mut wrapped = if is_root() {
        let mut setpriv = Command::new("setpriv");
        setpriv
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(command.get_program());
        setpriv
    } else {
        Command::new(command.get_program())
    };
    wrapped.args(command.get_args()).env_clear();
    if let Some(dir) = command.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped.envs(command.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))));
    wrapped
}
