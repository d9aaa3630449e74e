//! The program on the pseudo-terminal: opening the terminal, spawning the program, signalling
//! its process group and learning how it ended.
//!
//! portable-pty's rules, kept here and in the runs (see STYLE.md):
//! - the slave is dropped right after spawn, or the master never reads end of output;
//! - the writer is taken once and kept until the program exits: dropping it types a newline and
//!   EOF into the program;
//! - output is read on a dedicated thread, and `Ok(0)` (portable-pty's reader turns EIO, "the
//!   slave side is closed", into it) or an error ends it;
//! - portable-pty's `ExitStatus` loses the signal number, so the status comes from the
//!   `std::process::Child` behind its `Child` trait object;
//! - `clone_killer()` only sends SIGHUP, so signals go to the process group with killpg(2).

use std::os::unix::process::ExitStatusExt;
use std::thread;

use anyhow::{Context, Result, anyhow, bail};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use portable_pty::{CommandBuilder, PtyPair, PtySize, SlavePty, native_pty_system};

use super::Status;

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
}

impl Drop for Child {
    fn drop(&mut self) {
        self.signal(Signal::SIGKILL);
    }
}

/// Starts `command` on the pseudo-terminal's `slave` and calls `on_exit`, on a dedicated thread,
/// with the program's real exit status once it has exited and been reaped.
pub(super) fn spawn(
    slave: Box<dyn SlavePty + Send>,
    command: CommandBuilder,
    on_exit: impl FnOnce(Result<Status>) + Send + 'static,
) -> Result<Child> {
    let spawned = slave.spawn_command(command);
    // The program holds its own copies of the slave now; ours would keep the terminal open after
    // the program and its children are gone, and the reader would never see the end.
    drop(slave);
    let spawned: Box<dyn portable_pty::Child> = spawned.context("could not start the program")?;
    let mut process = match spawned.downcast::<std::process::Child>() {
        Ok(process) => process,
        Err(mut other) => {
            let _ = other.kill();
            let _ = other.wait();
            bail!("portable-pty spawned something other than a std::process::Child");
        }
    };
    let pid = i32::try_from(process.id()).context("the program's pid does not fit a pid_t")?;
    let child = Child {
        group: Pid::from_raw(pid),
        exited: false,
    };
    // Waiting reaps the program; the supervisor stops signalling the group when `on_exit` tells
    // it so. Between the reaping and that moment the pid could in theory be reused, but kernels
    // hand out pids cyclically across the whole pid space, so that would take a wrap-around of
    // process creations within microseconds.
    thread::Builder::new()
        .name("sticky-pty-wait".into())
        .spawn(move || on_exit(process.wait().map_err(anyhow::Error::from).and_then(status)))
        .context("could not start the thread that waits for the program")?;
    Ok(child)
}

fn status(status: std::process::ExitStatus) -> Result<Status> {
    match (status.code(), status.signal()) {
        (Some(code), _) => Ok(Status::Code(code)),
        (None, Some(signal)) => Ok(Status::Signal(signal)),
        (None, None) => Err(anyhow!(
            "the program ended with an unknown status {status:?}"
        )),
    }
}
