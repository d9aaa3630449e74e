//! The stdin shim: a headless program reads given bytes on its stdin while its output stays on
//! the pseudo-terminal.
//!
//! One argument is limited to 128 KiB on Linux, so a larger prompt has to arrive on stdin, and
//! portable-pty puts all three standard streams on the terminal. sticky therefore writes the bytes
//! to a private temporary file (0600, created exclusively) and runs itself on the terminal as
//! `sticky SHIM_ARG <file> -- <program> <args>...`; that process opens the file, unlinks it, makes
//! it fd 0 and execs the program, which then finds a regular file on stdin and the terminal on
//! stdout and stderr. The run removes the file itself when the shim never got to it.

use std::env;
use std::ffi::{OsStr, OsString};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::msg;

/// The hidden first argument that makes sticky act as the stdin shim (see [`shim_main`]).
pub const SHIM_ARG: &str = "__sticky_stdin_shim";

/// The hidden entry point of the stdin shim, called by `main` before any argument parsing when
/// `argv[1]` is [`SHIM_ARG`]. `args` is the whole command line, `argv[0]` included:
/// `sticky SHIM_ARG <file> -- <program> <args>...`.
///
/// It returns only when it cannot run the program, with the exit code: 127 when the program does
/// not exist, 126 for any other failure, after one line on stderr (the pseudo-terminal) saying
/// why.
// By value: main hands its command line over and has no use for it afterwards.
#[allow(clippy::needless_pass_by_value)]
pub fn shim_main(args: Vec<OsString>) -> u8 {
    let Some(invocation) = Invocation::parse(&args) else {
        msg::error(format_args!(
            "internal error: malformed stdin shim arguments {args:?}"
        ));
        return 126;
    };
    let mut command = match invocation.command() {
        Ok(command) => command,
        Err(error) => {
            msg::error(format_args!(
                "could not read the program's input from {}: {error}",
                invocation.file.display()
            ));
            return 126;
        }
    };
    let error = command.exec();
    msg::error(format_args!(
        "could not run {}: {error}",
        Path::new(invocation.program).display()
    ));
    exec_failure_code(&error)
}

/// The exit code a shell reports for a failed exec: 127 when the program does not exist, 126
/// when it exists but cannot run.
fn exec_failure_code(error: &io::Error) -> u8 {
    if error.kind() == io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}

/// The shim's command line, parsed.
#[derive(Debug, PartialEq)]
struct Invocation<'a> {
    file: &'a Path,
    program: &'a OsStr,
    args: &'a [OsString],
}

impl<'a> Invocation<'a> {
    fn parse(args: &'a [OsString]) -> Option<Self> {
        match args {
            [_, marker, file, separator, program, args @ ..]
                if marker == SHIM_ARG && separator == "--" =>
            {
                Some(Self {
                    file: Path::new(file),
                    program,
                    args,
                })
            }
            _ => None,
        }
    }

    /// The program's command, its stdin the file, which is already unlinked: the bytes live on
    /// through the open descriptor, and nothing is left behind however the program ends.
    fn command(&self) -> io::Result<Command> {
        let file = fs::File::open(self.file)?;
        fs::remove_file(self.file)?;
        let mut command = Command::new(self.program);
        command.args(self.args).stdin(file);
        // The shim got the agent's environment from the spawn, so this changes nothing; it
        // keeps every program sticky starts going through the one rule.
        crate::search_lists::apply(&mut command);
        Ok(command)
    }
}

/// How to start the shim: sticky's own executable with [`SHIM_ARG`]. Tests start their own
/// binary instead (see the tests below).
#[derive(Debug, Clone)]
pub(super) struct Launcher {
    exe: PathBuf,
    /// What comes before `SHIM_ARG <file> -- <program> <args>...`.
    prefix: Vec<OsString>,
}

impl Launcher {
    /// The shim in sticky's own executable.
    pub(super) fn current() -> Result<Self> {
        let exe = env::current_exe().context("could not find sticky's own executable")?;
        Ok(Self {
            exe,
            prefix: Vec::new(),
        })
    }

    /// The program and arguments that run `program args` with `file` as stdin.
    pub(super) fn command_line(
        &self,
        file: &Path,
        program: &Path,
        args: &[OsString],
    ) -> (PathBuf, Vec<OsString>) {
        let mut line = self.prefix.clone();
        line.extend([SHIM_ARG.into(), file.into(), "--".into(), program.into()]);
        line.extend(args.iter().cloned());
        (self.exe.clone(), line)
    }
}

/// The private file holding a program's stdin, removed on drop if the shim has not already
/// unlinked it.
#[derive(Debug)]
pub(super) struct StdinFile {
    path: PathBuf,
}

impl StdinFile {
    /// Writes `bytes` to a new file only sticky's user can read.
    pub(super) fn create(bytes: &[u8]) -> Result<Self> {
        let path = env::temp_dir().join(format!("sticky-stdin-{}", uuid::Uuid::new_v4()));
        // create_new (O_EXCL): never follow a planted symlink or reuse someone else's file.
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .with_context(|| format!("could not create {}", path.display()))?;
        let stdin = Self { path };
        file.write_all(bytes)
            .and_then(|()| file.flush())
            .with_context(|| format!("could not write {}", stdin.path.display()))?;
        Ok(stdin)
    }

    /// Where the bytes are.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for StdinFile {
    fn drop(&mut self) {
        // NotFound is the normal case: the shim unlinked it.
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::process::Stdio;

    use super::*;

    /// This test's full name, which the launcher below passes to libtest as an exact filter.
    const ENTRY: &str = "pty::shim::tests::shim_process_entry";

    /// Not a test but the shim's process entry for the PTY tests: they run this test binary as
    /// the shim (a unit test binary cannot reach `main`), with libtest's arguments selecting only
    /// this function. libtest prints a "running 1 test" line to the terminal first, and then
    /// `shim_main` execs the program. In an ordinary test run there is no `SHIM_ARG` and it
    /// returns at once.
    #[test]
    fn shim_process_entry() {
        let ours: Vec<OsString> = env::args_os().collect();
        let Some(at) = ours.iter().position(|arg| arg == SHIM_ARG) else {
            return;
        };
        let mut shim_line = vec![ours[0].clone()];
        shim_line.extend(ours[at..].iter().cloned());
        let code = shim_main(shim_line);
        panic!("the shim could not exec the program: {code:?}");
    }

    /// A launcher that runs [`shim_process_entry`] in this test binary.
    pub(in crate::pty) fn test_launcher() -> Result<Launcher> {
        Ok(Launcher {
            exe: env::current_exe()?,
            prefix: [ENTRY, "--exact", "--nocapture", "--test-threads=1", "--"]
                .map(OsString::from)
                .to_vec(),
        })
    }

    #[test]
    fn parses_its_own_command_line() {
        let launcher = Launcher::current().expect("launcher");
        let (exe, line) = launcher.command_line(
            Path::new("/tmp/x"),
            Path::new("/bin/cat"),
            &["-u".into(), "--".into()],
        );
        assert_eq!(exe, env::current_exe().expect("current_exe"));
        let mut argv = vec![OsString::from("sticky")];
        argv.extend(line);
        assert_eq!(
            Invocation::parse(&argv),
            Some(Invocation {
                file: Path::new("/tmp/x"),
                program: OsStr::new("/bin/cat"),
                args: &["-u".into(), "--".into()],
            })
        );
    }

    #[test]
    fn refuses_a_malformed_command_line() {
        let argv = |args: &[&str]| args.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            Invocation::parse(&argv(&["sticky", SHIM_ARG, "/tmp/x", "--"])),
            None
        );
        assert_eq!(
            Invocation::parse(&argv(&["sticky", SHIM_ARG, "/tmp/x", "cat"])),
            None
        );
        assert_eq!(
            Invocation::parse(&argv(&["sticky", "--help", "/tmp/x", "--", "cat"])),
            None
        );
    }

    #[test]
    fn the_file_is_private_and_becomes_stdin_then_disappears() {
        let bytes: Vec<u8> = (0..=255_u8).cycle().take(300_000).collect();
        let stdin = StdinFile::create(&bytes).expect("create");
        let mode = fs::metadata(stdin.path())
            .expect("metadata")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let args = vec![
            OsString::from("sticky"),
            SHIM_ARG.into(),
            stdin.path().into(),
            "--".into(),
            "cat".into(),
        ];
        let invocation = Invocation::parse(&args).expect("parse");
        let output = invocation
            .command()
            .expect("command")
            .stdout(Stdio::piped())
            .output()
            .expect("cat");
        assert!(!stdin.path().exists(), "unlinked before the program runs");
        assert_eq!(output.stdout, bytes);
    }

    #[test]
    fn a_missing_input_file_is_an_error_not_an_empty_stdin() {
        let args = vec![
            OsString::from("sticky"),
            SHIM_ARG.into(),
            "/nonexistent/sticky-stdin".into(),
            "--".into(),
            "cat".into(),
        ];
        let invocation = Invocation::parse(&args).expect("parse");
        assert!(invocation.command().is_err());
    }

    #[test]
    fn exec_failures_map_to_shell_codes() {
        assert_eq!(exec_failure_code(&io::ErrorKind::NotFound.into()), 127);
        assert_eq!(
            exec_failure_code(&io::ErrorKind::PermissionDenied.into()),
            126
        );
    }

    #[test]
    fn the_file_is_removed_when_the_shim_never_ran() {
        let stdin = StdinFile::create(b"prompt").expect("create");
        let path = stdin.path().to_owned();
        assert!(path.exists());
        drop(stdin);
        assert!(!path.exists());
    }
}
