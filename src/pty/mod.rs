//! The relay: runs a program on a pseudo-terminal, headless or interactive.
//!
//! Knows nothing of agents or SQL. Headless runs hand the program's output to a caller that
//! parses it; interactive runs relay the user's terminal in raw mode. Both forward SIGINT,
//! SIGTERM, SIGHUP and SIGQUIT to the program's process group, kill the group after a grace
//! period, and report the real exit code or signal.
//!
//! A run is a few threads around one supervisor on the calling thread: the waiter that reaps
//! the program, the signal dispatcher and, interactively, the output relay and the keystroke
//! relay. They report to the supervisor over one channel. A headless run reads the output on
//! the supervisor's thread itself, so the caller's `on_output` sees it in order on its own
//! thread. The end of a run is decided in one place: the program has exited and its output has
//! ended, or the drain deadline has passed because the program's own children keep the terminal
//! open.
//!
//! `headless.rs` and `interactive.rs` set up and feed the two kinds of run; `supervise.rs` holds
//! what they share, the command line and the supervisor; `child.rs` starts and signals the
//! program, `signals.rs` catches sticky's signals, `terminal.rs` owns raw mode and sizes.

mod child;
mod headless;
mod interactive;
mod shim;
mod signals;
#[cfg(target_os = "linux")]
mod spawn;
mod supervise;
mod terminal;

use std::ffi::OsString;
use std::os::fd::{OwnedFd, RawFd};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use nix::sys::signal::Signal;

pub use headless::{run_headless, run_headless_meanwhile};
pub use interactive::{TAIL, run_interactive};
pub use shim::{SHIM_ARG, shim_main};
/// For the benchmark's bare reader, which must read a terminal set as a headless run's is.
pub use terminal::output_as_written;

/// How long the program may take to exit after sticky forwarded it a signal, before its process
/// group gets SIGKILL.
const GRACE: Duration = Duration::from_secs(3);

/// How long to wait for the end of the output once the program has exited. The kernel already
/// holds what the program wrote, so reading it takes far less; the wait only runs out when the
/// program's children keep the terminal open (a background job, a helper that outlives it).
const DRAIN: Duration = Duration::from_millis(500);

/// The signals that would end sticky, forwarded to the program instead.
const FORWARDED: [Signal; 4] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

/// The most bytes read off the terminal at once. Linux hands a reader about this much at a time
/// (the line discipline's buffer), and a headless run reading into a 64 KiB buffer instead
/// measured slower, 84 against 100 MiB/s (256 MiB, interleaved runs): its reads then race the
/// kernel's flush worker for the terminal.
const READ_SIZE: usize = 4 * 1024;

/// How many events (an exit, signals, the end of the output) may wait for the supervisor. No
/// output goes through the queue: a headless run reads it on the supervisor's thread, so a
/// program writing faster than sticky parses waits on the full terminal instead of filling
/// memory; an interactive run writes it out from the reader's thread.
const QUEUE: usize = 16;

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// The program, already resolved to a path.
    pub program: PathBuf,
    /// Its arguments, passed literally (never through a shell).
    pub args: Vec<OsString>,
    /// Extra environment variables (on top of sticky's own environment).
    pub env: Vec<(OsString, OsString)>,
    /// The working directory (also exported as `PWD`); empty means sticky's own. A path that
    /// is not a directory fails the run.
    pub cwd: PathBuf,
    /// Headless only: bytes the program reads on its stdin (a private file instead of the
    /// terminal), for prompts too large for one argument. `None` leaves stdin on the
    /// pseudo-terminal. With bytes, a program that cannot be executed is reported the shell's way,
    /// as exit code 127 or 126 with one line of output, not as an error of the run.
    pub stdin: Option<Vec<u8>>,
}

/// How the program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// It exited with this code.
    Code(i32),
    /// It was killed by this signal.
    Signal(i32),
}

/// The end of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// How the program ended.
    pub status: Status,
    /// The first signal sticky received and forwarded during the run, if any.
    pub interrupted_by: Option<i32>,
}

/// What the threads around a run tell the supervisor.
enum Event {
    /// The output has ended: every copy of the terminal's slave side is closed.
    OutputEnd,
    /// The program has exited and been reaped.
    Exited(Result<Status>),
    /// sticky received this signal.
    Signal(Signal),
}

/// Waits in poll(2) until one of `fds` can be read (or has hung up) or `wait` has passed
/// (`None`: no limit); a negative descriptor is skipped. Returns which are ready, none when a
/// signal interrupted the wait, and `None` when poll fails. filedescriptor's poll, because
/// macOS's poll(2) does not work on terminals (it falls back to select(2) there).
fn ready<const N: usize>(fds: [RawFd; N], wait: Option<Duration>) -> Option<[bool; N]> {
    use filedescriptor::{POLLIN, pollfd};

    let mut polled = fds.map(|fd| pollfd {
        fd,
        events: POLLIN,
        revents: 0,
    });
    match filedescriptor::poll(&mut polled, wait) {
        Ok(_) => Some(polled.map(|fd| fd.revents != 0)),
        Err(filedescriptor::Error::Poll(error))
            if error.kind() == std::io::ErrorKind::Interrupted =>
        {
            Some([false; N])
        }
        Err(_) => None,
    }
}

/// A pipe (its read end, then its write end) whose ends are close-on-exec and, with
/// `nonblocking`, non-blocking.
///
/// On Linux one pipe2(2) sets the flags as the pipe is made. Apple systems have no pipe2, so
/// there the flags are set right after (`pipe_then_flags`): a program spawned by another
/// thread in between could inherit an end. sticky spawns only on the run's own thread, and the
/// spawn on those systems closes every descriptor above 2 in the child anyway (see `child.rs`).
fn pipe(nonblocking: bool) -> Result<(OwnedFd, OwnedFd)> {
    #[cfg(target_os = "linux")]
    {
        use nix::fcntl::OFlag;
        let flags = if nonblocking {
            OFlag::O_CLOEXEC | OFlag::O_NONBLOCK
        } else {
            OFlag::O_CLOEXEC
        };
        nix::unistd::pipe2(flags).context("could not create a pipe")
    }
    #[cfg(not(target_os = "linux"))]
    pipe_then_flags(nonblocking)
}

/// [`pipe`] where pipe2(2) is missing: pipe(2), then fcntl(2) on each end. Compiled on Linux
/// too, for its test.
#[cfg(any(test, not(target_os = "linux")))]
fn pipe_then_flags(nonblocking: bool) -> Result<(OwnedFd, OwnedFd)> {
    use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};

    let (read, write) = nix::unistd::pipe().context("could not create a pipe")?;
    for end in [&read, &write] {
        fcntl(end, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))
            .context("could not make a pipe close-on-exec")?;
        if nonblocking {
            fcntl(end, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))
                .context("could not make a pipe non-blocking")?;
        }
    }
    Ok((read, write))
}

/// Debug builds only: panics at the named point when `STICKY_TEST_PANIC` names it, so tests can
/// show that the terminal and the agent survive a panic in the middle of a run (release builds
/// never read the variable).
pub(crate) fn panic_if_asked(point: &str) {
    let asked = std::env::var_os("STICKY_TEST_PANIC").is_some_and(|v| v == point);
    assert!(
        !(cfg!(debug_assertions) && asked),
        "STICKY_TEST_PANIC={point}"
    );
}

#[cfg(test)]
mod tests {
    //! Helpers shared by the relay's tests.

    use std::env;
    use std::os::fd::OwnedFd;

    use anyhow::Result;
    use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};

    use super::{Finished, Spec, Status, pipe, pipe_then_flags, run_headless};

    type MakePipe = fn(bool) -> Result<(OwnedFd, OwnedFd)>;

    #[test]
    fn both_ends_of_a_pipe_are_close_on_exec_and_non_blocking_as_asked() {
        // pipe_then_flags is the whole of `pipe` where pipe2 is missing (macOS).
        let makers: [(&str, MakePipe); 2] = [("pipe", pipe), ("pipe_then_flags", pipe_then_flags)];
        for (name, make) in makers {
            for nonblocking in [false, true] {
                let (read, write) = make(nonblocking).expect("pipe");
                for (end, fd) in [("read", &read), ("write", &write)] {
                    let fd_flags = fcntl(fd, FcntlArg::F_GETFD).expect("F_GETFD");
                    let status = fcntl(fd, FcntlArg::F_GETFL).expect("F_GETFL");
                    assert_eq!(
                        (
                            FdFlag::from_bits_truncate(fd_flags).contains(FdFlag::FD_CLOEXEC),
                            OFlag::from_bits_truncate(status).contains(OFlag::O_NONBLOCK),
                        ),
                        (true, nonblocking),
                        "{name}({nonblocking}): the {end} end's flags"
                    );
                }
                nix::unistd::write(&write, b"x").expect("write");
                let mut byte = [0];
                assert_eq!(nix::unistd::read(&read, &mut byte), Ok(1), "{name}");
                assert_eq!(byte, *b"x", "{name}: the write end feeds the read end");
            }
        }
    }

    pub(super) fn sh(script: &str) -> Spec {
        Spec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: env::temp_dir(),
            ..Spec::default()
        }
    }

    /// Runs `spec` headless and returns how it ended and everything it wrote.
    #[track_caller]
    pub(super) fn headless_run(spec: &Spec) -> (Finished, Vec<u8>) {
        let mut output = Vec::new();
        let finished =
            run_headless(spec, &mut |chunk| output.extend_from_slice(chunk)).expect("headless run");
        (finished, output)
    }

    pub(super) fn exited(code: i32) -> Finished {
        Finished {
            status: Status::Code(code),
            interrupted_by: None,
        }
    }

    /// The end of a program killed by `signal`, after sticky passed on `interrupted_by`.
    pub(super) fn killed(signal: i32, interrupted_by: Option<i32>) -> Finished {
        Finished {
            status: Status::Signal(signal),
            interrupted_by,
        }
    }

    /// Bytes of every value, in an order that is not a simple cycle.
    pub(super) fn binary(len: usize) -> Vec<u8> {
        let mut state = 0x2545_f491_u32;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                state.to_le_bytes()[0]
            })
            .collect()
    }
}
