//! The program on the pseudo-terminal: opening the terminal, spawning the program, signalling
//! its process group and learning how it ended.
//!
//! On Linux the program is started with `posix_spawn` (`spawn.rs`); elsewhere portable-pty forks
//! it. portable-pty's rules, kept here and in the runs (see STYLE.md):
//! - the slave is dropped right after spawn, or the master never reads end of output;
//! - the writer is taken once and kept until the program exits: dropping it types a newline and
//!   EOF into the program;
//! - output is read on a dedicated thread, and `Ok(0)` (portable-pty's reader turns EIO, "the
//!   slave side is closed", into it) or an error ends it;
//! - `clone_killer()` only sends SIGHUP, so signals go to the process group with killpg(2).

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::thread;

use anyhow::{Context, Result, bail};
use nix::libc;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use portable_pty::{PtyPair, PtySize, SlavePty, native_pty_system};

use super::Status;

/// A program to start: resolved, with its arguments, its environment on top of sticky's own,
/// and its working directory (absolute).
#[derive(Debug, Clone)]
pub(super) struct Command {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
}

/// Opens a pseudo-terminal of `size`.
pub(super) fn open(size: PtySize) -> Result<PtyPair> {
    native_pty_system()
        .openpty(size)
        .context("could not open a pseudo-terminal")
}

/// The running program, seen from the supervisor.
///
/// Dropping it before the program has exited (an error or a panic in the middle of a run) kills
/// the program's process group, so no agent outlives the sticky that started it.
#[derive(Debug)]
pub(super) struct Child {
    /// The program's pid, which is also its process group: portable-pty makes it a session
    /// leader on the pseudo-terminal.
    group: Pid,
    exited: bool,
}

impl Child {
    /// Sends `signal` to the program's process group, unless the program has exited.
    pub(super) fn signal(&self, signal: Signal) {
        if self.exited {
            return;
        }
        // ESRCH (the group is gone) is the only expected failure, and it means nothing is left
        // to signal.
        let _ = killpg(self.group, signal);
    }

    /// Records that the program has exited: from now on its pid may belong to someone else.
    pub(super) fn mark_exited(&mut self) {
        self.exited = true;
    }

    /// What reaps the program once its pidfd (see [`spawn_polled`]) is readable: waiting then
    /// returns at once.
    pub(super) fn reaper(&self) -> Reaper {
        Reaper(self.group)
    }
}

/// Reaps a program that has exited (its pidfd is readable), apart from the [`Child`] the
/// supervisor holds.
pub(super) struct Reaper(Pid);

impl Reaper {
    /// Reaps the program and tells how it ended.
    pub(super) fn reap(&self) -> Result<Status> {
        wait(self.0)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.signal(Signal::SIGKILL);
    }
}

/// Starts `command` as the session leader of the pseudo-terminal `tty` (whose slave end is
/// `slave`) and calls `on_exit`, on a dedicated thread, with the program's real exit status once
/// it has exited and been reaped.
pub(super) fn spawn(
    slave: Box<dyn SlavePty + Send>,
    tty: &Path,
    command: &Command,
    on_exit: impl FnOnce(Result<Status>) + Send + 'static,
) -> Result<Child> {
    let child = start_on(slave, tty, command)?;
    wait_on_thread(child.group, on_exit)?;
    Ok(child)
}

/// Like [`spawn`], for a run that waits in poll(2): where the kernel gives the program a pidfd
/// (Linux 5.3), returns it, readable once the program has exited, and the run reaps the program
/// with [`Child::reaper`]; elsewhere `on_exit` is called from a thread as with [`spawn`].
pub(super) fn spawn_polled(
    slave: Box<dyn SlavePty + Send>,
    tty: &Path,
    command: &Command,
    on_exit: impl FnOnce(Result<Status>) + Send + 'static,
) -> Result<(Child, Option<OwnedFd>)> {
    let child = start_on(slave, tty, command)?;
    let exit = pidfd(child.group);
    if exit.is_none() {
        wait_on_thread(child.group, on_exit)?;
    }
    Ok((child, exit))
}

/// Starts the program on the terminal and drops sticky's copy of its slave side.
fn start_on(slave: Box<dyn SlavePty + Send>, tty: &Path, command: &Command) -> Result<Child> {
    let spawned = start(&*slave, tty, command);
    // The program holds its own copies of the slave now; ours would keep the terminal open after
    // the program and its children are gone, and the reader would never see the end.
    drop(slave);
    Ok(Child {
        group: spawned?,
        exited: false,
    })
}

/// Reaps `pid` on a thread of its own and calls `on_exit` with how it ended.
fn wait_on_thread(pid: Pid, on_exit: impl FnOnce(Result<Status>) + Send + 'static) -> Result<()> {
    // Waiting reaps the program; the supervisor stops signalling the group when `on_exit` tells
    // it so. Between the reaping and that moment the pid could in theory be reused, but kernels
    // hand out pids cyclically across the whole pid space, so that would take a wrap-around of
    // process creations within microseconds.
    thread::Builder::new()
        .name("sticky-pty-wait".into())
        .spawn(move || on_exit(wait(pid)))
        .context("could not start the thread that waits for the program")?;
    Ok(())
}

/// A pidfd of `pid`, sticky's unreaped child, or `None` where the kernel has none.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn pidfd(pid: Pid) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1; the pid is a
    // child nobody has reaped yet, so it cannot name another process.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0) };
    let fd = libc::c_int::try_from(fd).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: the descriptor was just opened (close-on-exec, as pidfds always are) and is owned
    // by nothing else.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(not(target_os = "linux"))]
fn pidfd(_pid: Pid) -> Option<OwnedFd> {
    None
}

#[cfg(target_os = "linux")]
fn start(_slave: &dyn SlavePty, tty: &Path, command: &Command) -> Result<Pid> {
    super::spawn::spawn(
        &command.program,
        &command.args,
        &command.env,
        &command.cwd,
        tty,
    )
}

#[cfg(not(target_os = "linux"))]
fn start(slave: &dyn SlavePty, _tty: &Path, command: &Command) -> Result<Pid> {
    fork_on(slave, command)
}

/// Starts `command` with portable-pty's fork (macOS and the BSDs): a terminal becomes the
/// controlling terminal of a session leader there only through ioctl(2) `TIOCSCTTY`, which
/// `posix_spawn` cannot issue, so the child runs code of its own between fork and exec.
///
/// portable-pty's child calls setsid(2), makes the slave its controlling terminal with
/// `TIOCSCTTY`, closes every descriptor above 2 (a walk of `/dev/fd`) and puts SIGHUP, SIGINT,
/// SIGQUIT, SIGTERM, SIGCHLD and SIGALRM back to their defaults; std's part of the fork empties
/// the signal mask and puts SIGPIPE back (the exec resets every signal sticky catches). It also
/// sets `SHELL` when sticky's environment has none. The program path is absolute and checked by
/// portable-pty (a missing one is an error naming it); the directory was checked by
/// [`super::supervise::command`], as portable-pty would start the program in `$HOME` instead.
///
/// Compiled on Linux too, where its test shows that the program gets what `spawn.rs` gives it.
#[cfg(any(test, not(target_os = "linux")))]
fn fork_on(slave: &dyn SlavePty, command: &Command) -> Result<Pid> {
    let mut builder = portable_pty::CommandBuilder::new(&command.program);
    builder.args(&command.args);
    // The whole environment, as `spawn.rs` gives it: sticky's own with the command's on top and
    // the search lists kept to their absolute entries.
    builder.env_clear();
    for (key, value) in crate::search_lists::environment(&command.env) {
        builder.env(key, value);
    }
    builder.cwd(&command.cwd);
    let mut spawned = slave
        .spawn_command(builder)
        .context("could not start the program")?;
    let pid = spawned
        .process_id()
        .and_then(|pid| i32::try_from(pid).ok())
        .context("the program has no pid");
    if pid.is_err() {
        let _ = spawned.kill();
    }
    // The waiter reaps the pid itself; dropping the handle neither kills nor waits.
    pid.map(Pid::from_raw)
}

/// Waits for `pid` to exit and reaps it. The raw status, not nix's `WaitStatus`: that one fails
/// on a signal nix has no name for (a real-time signal), after the child was already reaped.
#[allow(unsafe_code)]
fn wait(pid: Pid) -> Result<Status> {
    let mut raw = 0;
    loop {
        // SAFETY: waitpid writes the status into `raw` and nothing else.
        if unsafe { libc::waitpid(pid.as_raw(), &raw mut raw, 0) } == pid.as_raw() {
            break;
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error).context("could not wait for the program");
        }
    }
    let status = ExitStatus::from_raw(raw);
    match (status.code(), status.signal()) {
        (Some(code), _) => Ok(Status::Code(code)),
        (None, Some(signal)) => Ok(Status::Signal(signal)),
        (None, None) => bail!("the program ended with an unknown status {status:?}"),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    /// Starts `command` through [`fork_on`] on a terminal of its own and returns how it ended
    /// and what it wrote (`\r\n` read as `\n`).
    fn forked(command: &Command) -> Result<(Status, String)> {
        let pair = open(PtySize::default())?;
        let mut reader = pair.master.try_clone_reader()?;
        // Kept until the end: dropping it would type EOF into the program.
        let _writer = pair.master.take_writer()?;
        let pid = fork_on(&*pair.slave, command);
        drop(pair.slave);
        let pid = pid?;
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut output = Vec::new();
            // Ends at EIO, once the program's copies of the slave are closed.
            let _ = reader.read_to_end(&mut output);
            let _ = tx.send(output);
        });
        let output = rx
            .recv_timeout(Duration::from_secs(60))
            .context("the program's output never ended")?;
        let status = wait(pid)?;
        Ok((
            status,
            String::from_utf8_lossy(&output).replace("\r\n", "\n"),
        ))
    }

    /// Linux only: the program's state as `/proc` shows it, as `supervise.rs` tests the
    /// `posix_spawn` path.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_fork_path_gives_the_program_a_session_its_terminal_and_nothing_else() {
        use std::io;
        use std::os::fd::AsRawFd;

        // A descriptor without close-on-exec, as a careless parent of sticky would leave one.
        let leaked = nix::unistd::dup(io::stderr()).expect("dup");
        let fd = leaked.as_raw_fd();
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd = dir.path().canonicalize().expect("canonical");
        let script = format!(
            r#"read pid comm state ppid pgrp sid tty tpgid rest < /proc/$$/stat
            [ "$pid" = "$sid" ] && [ "$pid" = "$pgrp" ] && [ "$pid" = "$tpgid" ] && [ "$tty" != 0 ] && echo leader
            set -- $(grep -E '^Sig(Blk|Ign):' /proc/$$/status)
            echo blocked $(( 0x$2 & 0x7fffffff )) ignored $(( 0x$4 & 0x7fffffff ))
            test -e /proc/$$/fd/{fd} && echo leaked {fd} || echo closed
            pwd -P; echo "$STICKY_TEST_VALUE"; echo "$LD_LIBRARY_PATH" "${{PYTHONPATH-unset}}"; exit 3"#
        );
        let command = Command {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            env: vec![
                ("STICKY_TEST_VALUE".into(), "a b $(c)".into()),
                ("LD_LIBRARY_PATH".into(), ":/opt/lib".into()),
                ("PYTHONPATH".into(), ".".into()),
            ],
            cwd: cwd.clone(),
        };
        let (status, output) = forked(&command).expect("run");
        drop(leaked);
        assert_eq!(
            (status, output),
            (
                Status::Code(3),
                format!(
                    "leader\nblocked 0 ignored 0\nclosed\n{}\na b $(c)\n/opt/lib unset\n",
                    cwd.display()
                )
            )
        );
    }

    #[test]
    fn the_fork_path_names_a_missing_program() {
        let command = Command {
            program: "/nonexistent/agent".into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: std::env::temp_dir(),
        };
        let error = forked(&command).expect_err("no such program");
        assert!(
            format!("{error:#}").contains("/nonexistent/agent"),
            "{error:#}"
        );
    }
}
