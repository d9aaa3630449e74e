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

/// A place another user can reach: a private temp directory made world-traversable, with a
/// `home` (given to `nobody` when the tests run as root) and a `project` directory in it.
pub struct SharedPlace {
    /// The temp directory, removed on drop.
    _base: tempfile::TempDir,
    /// The other user's HOME.
    pub home: std::path::PathBuf,
    /// The project, the caller's to hand over or lock down.
    pub project: std::path::PathBuf,
}

impl SharedPlace {
    /// Makes the place; its directories' names start with `prefix`.
    pub fn new(prefix: &str) -> Self {
        let base = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .expect("a temp dir");
        chmod(base.path(), 0o755);
        let (home, project) = (base.path().join("home"), base.path().join("project"));
        std::fs::create_dir(&home).expect("create home");
        std::fs::create_dir(&project).expect("create the project");
        if is_root() {
            give_to_nobody(&home);
        }
        Self {
            _base: base,
            home,
            project,
        }
    }

    /// A PATH for the other user: the fakes, python's directory and the system's.
    pub fn path() -> std::ffi::OsString {
        let python = super::python();
        let python_dir = python.parent().expect("python's directory").to_owned();
        std::env::join_paths([
            super::fakes_dir(),
            python_dir,
            "/usr/bin".into(),
            "/bin".into(),
        ])
        .expect("a PATH")
    }
}

/// Sets `path`'s mode.
pub fn chmod(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Gives `path` to `nobody` (65534); the tests must run as root.
pub fn give_to_nobody(path: &std::path::Path) {
    std::os::unix::fs::chown(path, Some(65_534), Some(65_534)).expect("chown to nobody");
}
