//! The signals sticky receives while a run lasts, handed to the run as plain calls.
//!
//! While a run lasts, SIGINT, SIGTERM, SIGHUP and SIGQUIT (and SIGWINCH for interactive runs)
//! no longer end sticky: the handler only writes the signal number into a pipe (write(2) is
//! async-signal-safe), and a thread reads the pipe and calls the run's callback, where the
//! supervisor forwards the signal to the agent's process group. When the run ends the previous
//! dispositions come back, so a Ctrl-C after the run ends sticky as usual. That restoring is why
//! this is plain `sigaction` and neither tokio nor signal-hook: both keep their handler installed
//! for the rest of the process (signal-hook-registry cannot give a signal its default
//! disposition back), which would leave sticky deaf to Ctrl-C while it records the turn.
//!
//! Dispositions are process-wide, so runs in one process take turns: [`Forwarding::install`]
//! waits until an earlier run (in another thread) has ended. sticky itself runs one agent at a
//! time; the wait only matters to tests running in parallel.
//!
//! The reading thread lives as long as the run: the end of the run writes it a stop byte. A
//! thread still blocked in read(2) when sticky exits must first be woken to be killed, which
//! delayed the end of every turn by about 0.13 ms (BENCHMARKS.md).
//!
//! A run that waits in poll(2) anyway (a headless one) needs no thread: [`Forwarding::polled`]
//! has the handler write into a pipe of its own, which the run polls and reads with [`take`].
//! Starting and ending a thread cost every headless turn about 0.1 ms of CPU and a wake-up.

use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread;

use anyhow::{Context, Result};
use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::libc;
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
use nix::unistd;

/// Held for the whole of a run: one set of dispositions at a time.
static RUN: Mutex<()> = Mutex::new(());

/// The write end of the current run's signal pipe, into which the handler writes, or -1 before
/// the first run. Both pipes are created once and never closed, so a handler that loaded it can
/// never write into a descriptor reused for something else.
static PIPE: AtomicI32 = AtomicI32::new(-1);

/// The pipe of the runs whose thread reads it: its read end, and its write end.
static THREADED: OnceLock<(OwnedFd, RawFd)> = OnceLock::new();

/// The pipe of the runs that poll it themselves (its read end is non-blocking).
static POLLED: OnceLock<(OwnedFd, RawFd)> = OnceLock::new();

/// The byte that stops a reading thread: no signal has the number 0.
const STOP: u8 = 0;

/// The current run's callback for the signals it catches.
type Listener = Box<dyn Fn(Signal) + Send>;

/// Who hears about signals now: the current run, or nobody between runs.
static LISTENER: Mutex<Option<Listener>> = Mutex::new(None);

/// Catches the given signals until dropped, then puts the previous dispositions back.
pub(super) struct Forwarding {
    /// The dispositions found when installing, restored in reverse order on drop.
    previous: Vec<(Signal, SigAction)>,
    /// Whether a thread reads the signals (and must be stopped), rather than the run itself.
    threaded: bool,
    /// Keeps other runs out until this one's dispositions are restored (dropped last).
    _turn: MutexGuard<'static, ()>,
}

impl Forwarding {
    /// Catches `signals` and calls `listener` (on a dedicated thread) with each one received.
    pub(super) fn install(
        signals: &[Signal],
        listener: impl Fn(Signal) + Send + 'static,
    ) -> Result<Self> {
        let turn = RUN.lock().unwrap_or_else(PoisonError::into_inner);
        let (read, write) = pipe(&THREADED, false)?;
        PIPE.store(*write, Ordering::Release);
        start_dispatcher(read)?;
        *listener_slot() = Some(Box::new(listener));
        Self::catch(signals, turn, true)
    }

    /// Catches `signals` into the pipe whose read end [`polled_fd`] gives, for the run to poll
    /// and read with [`take`] on its own thread.
    pub(super) fn polled(signals: &[Signal]) -> Result<Self> {
        let turn = RUN.lock().unwrap_or_else(PoisonError::into_inner);
        let (read, write) = pipe(&POLLED, true)?;
        // Signals that arrived after the end of an earlier run are not this run's.
        drain(read);
        PIPE.store(*write, Ordering::Release);
        Self::catch(signals, turn, false)
    }

    /// Installs the handler for `signals`, the pipe and its reader ready.
    fn catch(signals: &[Signal], turn: MutexGuard<'static, ()>, threaded: bool) -> Result<Self> {
        // From here on, an early return drops `forwarding`, which restores what was installed.
        let mut forwarding = Self {
            previous: Vec::with_capacity(signals.len()),
            threaded,
            _turn: turn,
        };
        // SA_RESTART: the relay's threads sit in read(2) and poll(2); a signal must not turn those
        // into errors.
        let action = SigAction::new(
            SigHandler::Handler(on_signal),
            SaFlags::SA_RESTART,
            SigSet::empty(),
        );
        for &signal in signals {
            let previous = install_action(signal, &action)
                .with_context(|| format!("could not catch {signal}"))?;
            forwarding.previous.push((signal, previous));
        }
        Ok(forwarding)
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        for (signal, previous) in self.previous.drain(..).rev() {
            // Nothing sensible to do if the kernel refuses an action it handed out itself.
            let _ = install_action(signal, &previous);
        }
        *listener_slot() = None;
        // Not joined: the thread ends while sticky records the turn. A full pipe (thousands of
        // signals not yet read) loses the byte and leaves the thread waiting, which is harmless.
        if self.threaded {
            write_byte(STOP);
        }
    }
}

/// The descriptor a polled run waits on: readable when [`take`] has signals to hand over.
pub(super) fn polled_fd() -> Option<RawFd> {
    POLLED.get().map(|(read, _)| read.as_raw_fd())
}

/// The signals caught for a polled run since the last call, oldest first.
pub(super) fn take() -> Vec<Signal> {
    let Some((read, _)) = POLLED.get() else {
        return Vec::new();
    };
    let mut caught = Vec::new();
    let mut buf = [0_u8; 64];
    loop {
        match unistd::read(read, &mut buf) {
            Ok(0) | Err(Errno::EAGAIN) => return caught,
            Ok(count) => caught.extend(
                buf[..count]
                    .iter()
                    .filter_map(|&number| Signal::try_from(i32::from(number)).ok()),
            ),
            Err(Errno::EINTR) => {}
            Err(_) => return caught,
        }
    }
}

/// Reads and forgets whatever waits in the non-blocking `read`.
fn drain(read: &OwnedFd) {
    let mut buf = [0_u8; 64];
    while matches!(unistd::read(read, &mut buf), Ok(n) if n > 0) {}
}

fn listener_slot() -> MutexGuard<'static, Option<Listener>> {
    LISTENER.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The pipe in `slot`, created by the first run that needs it; with `nonblocking_read`, its read
/// end does not block.
fn pipe(
    slot: &'static OnceLock<(OwnedFd, RawFd)>,
    nonblocking_read: bool,
) -> Result<(&'static OwnedFd, &'static RawFd)> {
    if let Some((read, write)) = slot.get() {
        return Ok((read, write));
    }
    let (read, write) = super::pipe(false)?;
    // A handler must never block: with a full pipe (thousands of pending signals) it drops one.
    fcntl(&write, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))
        .context("could not make the signal pipe non-blocking")?;
    if nonblocking_read {
        fcntl(&read, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))
            .context("could not make the signal pipe non-blocking")?;
    }
    // Runs take turns (RUN), so the slot is still empty here.
    let (read, write) = slot.get_or_init(|| (read, write.into_raw_fd()));
    Ok((read, write))
}

/// Starts the thread that turns the pipe's bytes into listener calls until it reads [`STOP`].
fn start_dispatcher(read: &'static OwnedFd) -> Result<()> {
    thread::Builder::new()
        .name("sticky-signals".into())
        .spawn(move || dispatch(read))
        .context("could not start the signal thread")?;
    Ok(())
}

/// Reads signal numbers from the pipe until [`STOP`].
fn dispatch(read: &OwnedFd) {
    let mut buf = [0_u8; 64];
    loop {
        let count = match unistd::read(read, &mut buf) {
            Ok(0) => return,
            Ok(count) => count,
            Err(Errno::EINTR) => continue,
            Err(_) => return,
        };
        for (at, &number) in buf[..count].iter().enumerate() {
            if number == STOP {
                // Bytes after it were sent to the run that follows: put them back for its
                // thread. (Only signals can follow, and a run's own ones follow its install.)
                for &later in &buf[at + 1..count] {
                    write_byte(later);
                }
                return;
            }
            let Ok(signal) = Signal::try_from(i32::from(number)) else {
                continue;
            };
            if let Some(listener) = listener_slot().as_ref() {
                listener(signal);
            }
        }
    }
}

/// Writes one byte into the signal pipe, errno left as it was found (the handler calls it).
fn write_byte(byte: u8) {
    let fd = PIPE.load(Ordering::Relaxed);
    if fd < 0 {
        return;
    }
    let errno = Errno::last_raw();
    #[allow(unsafe_code)]
    // SAFETY: write(2) is async-signal-safe; `fd` is the pipe's write end, which is never closed
    // (see PIPE), and the buffer is one initialised byte that outlives the call.
    unsafe {
        libc::write(fd, (&raw const byte).cast(), 1);
    }
    Errno::set_raw(errno);
}

/// The handler: one byte into the pipe, errno left as it was found.
extern "C" fn on_signal(number: libc::c_int) {
    if let Ok(byte) = u8::try_from(number) {
        write_byte(byte);
    }
}

/// Installs `action` for `signal` and returns the one it replaces.
#[allow(unsafe_code)]
fn install_action(signal: Signal, action: &SigAction) -> nix::Result<SigAction> {
    // SAFETY: the actions installed are either `on_signal`, which only does async-signal-safe
    // work, or ones the kernel handed back to us as the previous disposition.
    unsafe { sigaction(signal, action) }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use nix::sys::signal::raise;

    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_caught_signal_reaches_the_listener_and_the_default_comes_back() {
        let forwarding = forward_sigwinch_and_hear_it();
        assert!(
            caught(Signal::SIGWINCH),
            "SIGWINCH is caught during the run"
        );
        drop(forwarding);
        // Holding the turn, no other test's run has handlers installed either.
        let _turn = RUN.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(
            !caught(Signal::SIGWINCH),
            "the default comes back after the run"
        );
        // A thread left blocked in read(2) would delay the exit of sticky.
        no_signal_thread_soon("the signal thread outlives the run");
    }

    #[test]
    fn each_run_in_turn_hears_its_signals_despite_the_stop_bytes_before_it() {
        for _ in 0..3 {
            drop(forward_sigwinch_and_hear_it());
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_polled_run_hears_its_own_signals_without_a_thread() {
        let forwarding = Forwarding::polled(&[Signal::SIGWINCH]).expect("install");
        // raise(3) returns once the handler has run, its byte in the pipe.
        raise(Signal::SIGWINCH).expect("raise");
        raise(Signal::SIGWINCH).expect("raise");
        assert_eq!(take(), [Signal::SIGWINCH, Signal::SIGWINCH]);
        // One the run ends without reading...
        raise(Signal::SIGWINCH).expect("raise");
        drop(forwarding);
        // ...is no later run's, not even after a run with a thread in between.
        drop(forward_sigwinch_and_hear_it());
        let forwarding = Forwarding::polled(&[Signal::SIGWINCH]).expect("install");
        assert_eq!(take(), []);
        raise(Signal::SIGWINCH).expect("raise");
        assert_eq!(take(), [Signal::SIGWINCH]);
        // Runs take turns, so no other run's thread can start now; the earlier run's ends.
        no_signal_thread_soon("a thread reads the signals of a polled run");
        drop(forwarding);
        let _turn = RUN.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(
            !caught(Signal::SIGWINCH),
            "the default comes back after the run"
        );
    }

    /// Catches SIGWINCH, raises it, and asserts that the listener heard it.
    fn forward_sigwinch_and_hear_it() -> Forwarding {
        let (tx, rx) = mpsc::channel();
        let forwarding = Forwarding::install(&[Signal::SIGWINCH], move |signal| {
            let _ = tx.send(signal);
        })
        .expect("install");
        raise(Signal::SIGWINCH).expect("raise");
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(5)),
            Ok(Signal::SIGWINCH)
        );
        forwarding
    }

    /// Waits (up to five seconds, else fails saying `why`) until this process has no thread
    /// reading signals.
    #[cfg(target_os = "linux")]
    fn no_signal_thread_soon(why: &str) {
        let started = std::time::Instant::now();
        while threads_named("sticky-signals") > 0 {
            assert!(started.elapsed() < Duration::from_secs(5), "{why}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// How many threads of this process have `name`.
    #[cfg(target_os = "linux")]
    fn threads_named(name: &str) -> usize {
        std::fs::read_dir("/proc/self/task")
            .expect("/proc/self/task")
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
            .filter(|comm| comm.trim_end() == name)
            .count()
    }

    /// Whether this process has a handler for `signal`, from the kernel's own view.
    #[cfg(target_os = "linux")]
    fn caught(signal: Signal) -> bool {
        let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
        let mask = status
            .lines()
            .find_map(|line| line.strip_prefix("SigCgt:"))
            .map(|hex| u64::from_str_radix(hex.trim(), 16).expect("hex mask"))
            .expect("SigCgt line");
        mask & (1 << (signal as u64 - 1)) != 0
    }
}
