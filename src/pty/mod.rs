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

mod child;
mod shim;
mod signals;
#[cfg(target_os = "linux")]
mod spawn;
mod terminal;

use std::env;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::signal::Signal;
use nix::unistd;

pub use shim::{SHIM_ARG, shim_main};
/// For the benchmark's bare reader, which must read a terminal set as a headless run's is.
pub use terminal::output_as_written;

use child::{Child, Command};
use shim::{Launcher, StdinFile};
use signals::Forwarding;
use terminal::RawMode;

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

/// The most bytes read at once from the user (a paste arrives in pieces of up to this).
const CHUNK: usize = 64 * 1024;

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

/// Runs `spec` on a pseudo-terminal without raw mode and calls `on_output` on the calling thread
/// with each chunk of the program's output, in order, until the program has exited and its output
/// is drained.
///
/// The terminal is COLUMNS x LINES (80x24 by default) and changes no byte of the output (see
/// [`output_as_written`]), so the chunks are the program's bytes as written. The program's stdin is the terminal, on which
/// nothing is typed, or, when `spec.stdin` holds bytes, a file with those bytes (through the
/// stdin shim, see [`shim_main`]).
pub fn run_headless(spec: &Spec, on_output: &mut dyn FnMut(&[u8])) -> Result<Finished> {
    headless(spec, on_output, Launcher::current)
}

fn headless(
    spec: &Spec,
    on_output: &mut dyn FnMut(&[u8]),
    launcher: fn() -> Result<Launcher>,
) -> Result<Finished> {
    // Lives until the run is over: the shim unlinks it once open, and this removes it on every
    // path where the shim never got there.
    let stdin = spec.stdin.as_deref().map(StdinFile::create).transpose()?;
    let command = match &stdin {
        None => command(spec, &spec.program, &spec.args)?,
        Some(file) => {
            let (exe, args) = launcher()?.command_line(file.path(), &spec.program, &spec.args);
            command(spec, &exe, &args)?
        }
    };
    let (events_tx, events) = mpsc::sync_channel(QUEUE);
    let (wake_read, wake_write) =
        unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK).context("could not create a pipe")?;
    let waker = Waker(Arc::new(wake_write));
    let _forwarding = forward(&FORWARDED, &events_tx, Some(waker.clone()))?;
    let pty = child::open(terminal::env_size())?;
    let tty = pty
        .master
        .tty_name()
        .context("the pseudo-terminal has no device name")?;
    terminal::keep_output_bytes(&tty)?;
    let reader = pty
        .master
        .try_clone_reader()
        .context("could not read the pseudo-terminal")?;
    let master = pty
        .master
        .as_raw_fd()
        .context("the pseudo-terminal has no descriptor")?;
    // Taken and never written, only kept: dropping it before the program exits would type a
    // newline and EOF into the program.
    let _writer = pty
        .master
        .take_writer()
        .context("could not write to the pseudo-terminal")?;
    let mut child = child::spawn(
        pty.slave,
        &tty,
        &command,
        exit_reporter(&events_tx, Some(waker)),
    )?;
    let mut output = PolledOutput {
        reader,
        master,
        wake: wake_read,
        events,
        buf: vec![0; READ_SIZE],
        ended: false,
        end_reported: false,
    };
    supervise(
        &mut child,
        &mut |deadline| output.next(deadline, on_output),
        &|| {},
    )
}

/// The events of a headless run, and its output read on the calling thread.
///
/// One thread reads the terminal and parses what it read: handing each chunk from a reader
/// thread to the parser cost a copy, a queue and a wake-up per chunk, and a third runnable
/// thread next to the writing program on machines with two cores. The exit of the program and
/// the signals still come from their threads, over `events`, each with a byte into the pipe
/// `wake` so the wait in poll(2) ends.
struct PolledOutput {
    reader: Box<dyn Read + Send>,
    /// The master's descriptor, polled; `reader` reads the same terminal.
    master: std::os::fd::RawFd,
    wake: OwnedFd,
    events: Receiver<Event>,
    buf: Vec<u8>,
    ended: bool,
    end_reported: bool,
}

impl PolledOutput {
    /// Hands output to `on_output` until an event arrives, or until `deadline`.
    fn next(
        &mut self,
        deadline: Option<Instant>,
        on_output: &mut dyn FnMut(&[u8]),
    ) -> Result<Event, RecvTimeoutError> {
        use filedescriptor::{POLLIN, pollfd};

        loop {
            match self.events.try_recv() {
                Ok(event) => return Ok(event),
                Err(mpsc::TryRecvError::Disconnected) => {
                    return Err(RecvTimeoutError::Disconnected);
                }
                Err(mpsc::TryRecvError::Empty) => {}
            }
            if self.ended && !self.end_reported {
                self.end_reported = true;
                return Ok(Event::OutputEnd);
            }
            // Checked before every wait, so output that never stops cannot hold off a deadline.
            let wait = match deadline {
                Some(at) => match at.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return Err(RecvTimeoutError::Timeout),
                },
                None => None,
            };
            let mut fds = [self.wake.as_raw_fd(), self.master].map(|fd| pollfd {
                fd,
                events: POLLIN,
                revents: 0,
            });
            let watched = if self.ended { 1 } else { 2 };
            match filedescriptor::poll(&mut fds[..watched], wait) {
                Ok(_) => {}
                Err(filedescriptor::Error::Poll(error))
                    if error.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Err(RecvTimeoutError::Disconnected),
            }
            if fds[0].revents != 0 {
                let mut sink = [0_u8; 64];
                while matches!(unistd::read(&self.wake, &mut sink), Ok(n) if n > 0) {}
            }
            if watched == 2 && fds[1].revents != 0 {
                self.read_chunk(on_output);
            }
        }
    }

    /// Reads once and hands over what came; notes the end.
    ///
    /// One read of at most [`READ_SIZE`] per wake-up. Also reading whatever was waiting after it
    /// (a poll(2) per read to find out) cost a headless turn 11% of its throughput: one more
    /// syscall in the ping-pong between sticky and the kernel's flush worker that sets the pace.
    fn read_chunk(&mut self, on_output: &mut dyn FnMut(&[u8])) {
        let count = loop {
            match self.reader.read(&mut self.buf) {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                // portable-pty's reader turns EIO (the slave side is closed) into Ok(0).
                Err(_) | Ok(0) => {
                    self.ended = true;
                    return;
                }
                Ok(count) => break count,
            }
        };
        on_output(&self.buf[..count]);
    }
}

/// Wakes a run waiting in poll(2): one byte into its pipe (a full pipe is awake already).
#[derive(Clone)]
struct Waker(Arc<OwnedFd>);

impl Waker {
    fn wake(&self) {
        let _ = unistd::write(&*self.0, &[1]);
    }
}

/// Runs `spec` on a pseudo-terminal relayed to sticky's own terminal: keystrokes, pastes and the
/// terminal's answers go to the program unchanged and in order, its output goes to stdout as it
/// comes. stdin is in raw mode while it is a terminal, restored on every path; the program's
/// terminal takes the size of sticky's and follows it when it changes.
///
/// Also returns the last [`TAIL`] bytes of the program's output: agents print their session's
/// ID on exit (`claude --resume <id>`), which is how sticky follows a session changed inside the
/// agent's UI.
pub fn run_interactive(spec: &Spec) -> Result<(Finished, Vec<u8>)> {
    // Whatever sticky printed must reach the terminal before the program's first byte.
    io::stdout().flush().context("could not write to stdout")?;
    let input = io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .context("could not use stdin")?;
    let output = io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .context("could not use stdout")?;
    interactive(spec, input, File::from(output))
}

/// [`run_interactive`] with its endpoints given, so tests can drive it with a terminal of their
/// own: `input` is what the user types, `output` where the program's output goes.
fn interactive(spec: &Spec, input: OwnedFd, mut output: File) -> Result<(Finished, Vec<u8>)> {
    ensure!(
        spec.stdin.is_none(),
        "stdin bytes are for headless runs: an interactive program reads the terminal"
    );
    let command = command(spec, &spec.program, &spec.args)?;
    // The terminal whose size the program's follows: stdin, else stdout when only input is
    // redirected.
    let outer = [input.as_fd(), output.as_fd()]
        .into_iter()
        .find(IsTerminal::is_terminal)
        .map(|fd| fd.try_clone_to_owned())
        .transpose()
        .context("could not use the terminal")?;
    let outer_size = || outer.as_ref().and_then(|fd| terminal::size_of(fd.as_fd()));
    let (events_tx, events) = mpsc::sync_channel(QUEUE);
    let mut signals = FORWARDED.to_vec();
    signals.push(Signal::SIGWINCH);
    let _forwarding = forward(&signals, &events_tx, None)?;
    let pty = child::open(outer_size().unwrap_or_else(terminal::env_size))?;
    let tty = pty
        .master
        .tty_name()
        .context("the pseudo-terminal has no device name")?;
    let reader = pty
        .master
        .try_clone_reader()
        .context("could not read the pseudo-terminal")?;
    // Shared with the keystroke relay, and kept here until the program has exited even when the
    // relay ends first (stdin at EOF): dropping it would type a newline and EOF into the program.
    let writer = Arc::new(Mutex::new(
        pty.master
            .take_writer()
            .context("could not write to the pseudo-terminal")?,
    ));
    // Raw before the program starts, so its first output and queries meet a raw terminal.
    let _raw = if input.is_terminal() {
        Some(RawMode::enter(input.as_fd())?)
    } else {
        None
    };
    let mut child = child::spawn(pty.slave, &tty, &command, exit_reporter(&events_tx, None))?;
    // Straight to the terminal from the reader's thread: no line buffering, no hop through
    // another thread. A failing stdout (a closed terminal) must not stall the program, so the
    // output is still read, and dropped.
    let tail = Arc::new(Mutex::new(Vec::with_capacity(2 * TAIL)));
    let kept = Arc::clone(&tail);
    let output_stop = pump(reader, events_tx, move |chunk| {
        let _ = output.write_all(chunk);
        // After the write, so keeping the tail never delays what the user sees.
        if let Ok(mut tail) = kept.lock() {
            keep_tail(&mut tail, chunk);
        }
    })?;
    let _keys = KeyRelay::start(input, Arc::clone(&writer))?;
    panic_if_asked("relay");
    let resize = || {
        if let Some(size) = outer_size() {
            let _ = pty.master.resize(size);
        }
    };
    let finished = supervise(
        &mut child,
        &mut |deadline| match deadline {
            Some(at) => events.recv_timeout(at.saturating_duration_since(Instant::now())),
            None => events.recv().map_err(|_| RecvTimeoutError::Disconnected),
        },
        &resize,
    );
    // Whatever the program's children still write no longer reaches the terminal.
    output_stop.store(true, Ordering::Release);
    let finished = finished?;
    let mut tail = tail.lock().map(|tail| tail.clone()).unwrap_or_default();
    let start = tail.len().saturating_sub(TAIL);
    tail.drain(..start);
    Ok((finished, tail))
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

/// How much of an interactive program's last output [`run_interactive`] keeps.
pub const TAIL: usize = 64 * 1024;

/// Appends `chunk` to `tail`, dropping the oldest bytes once it holds twice [`TAIL`] (amortized
/// constant work per byte).
fn keep_tail(tail: &mut Vec<u8>, chunk: &[u8]) {
    tail.extend_from_slice(chunk);
    if tail.len() > 2 * TAIL {
        let start = tail.len() - TAIL;
        tail.drain(..start);
    }
}

/// The program's command line: `program args` with the spec's environment and directory.
fn command(spec: &Spec, program: &Path, args: &[OsString]) -> Result<Command> {
    let cwd = if spec.cwd.as_os_str().is_empty() {
        env::current_dir().context("could not find the current directory")?
    } else {
        std::path::absolute(&spec.cwd)
            .with_context(|| format!("could not resolve {}", spec.cwd.display()))?
    };
    // Checked here, where the error can name it: the program would fail to start, or (with
    // portable-pty's fork) quietly start in $HOME and work on the wrong project.
    ensure!(cwd.is_dir(), "{} is not a directory", cwd.display());
    let mut env = spec.env.clone();
    // opencode trusts $PWD over getcwd(); the one inherited from sticky's shell names another
    // directory whenever `cwd` is not sticky's own.
    env.push(("PWD".into(), cwd.clone().into_os_string()));
    Ok(Command {
        // Absolute, because the program starts in `cwd`.
        program: std::path::absolute(program)
            .with_context(|| format!("could not resolve {}", program.display()))?,
        args: args.to_vec(),
        env,
        cwd,
    })
}

/// Catches `signals` for the run and turns each into an event.
fn forward(
    signals: &[Signal],
    events: &SyncSender<Event>,
    waker: Option<Waker>,
) -> Result<Forwarding> {
    let events = events.clone();
    Forwarding::install(signals, move |signal| {
        let _ = events.send(Event::Signal(signal));
        waker.iter().for_each(Waker::wake);
    })
}

fn exit_reporter(
    events: &SyncSender<Event>,
    waker: Option<Waker>,
) -> impl FnOnce(Result<Status>) + Send + 'static {
    let events = events.clone();
    move |status| {
        let _ = events.send(Event::Exited(status));
        waker.iter().for_each(Waker::wake);
    }
}

/// Reads the program's output on a dedicated thread and hands each chunk to `deliver`, then
/// reports the end. Setting the returned flag stops the delivery after the current chunk.
///
/// Interactive runs only: each read is written out as it comes (bigger writes into the user's
/// terminal measured slower, not faster).
fn pump(
    mut reader: Box<dyn Read + Send>,
    events: SyncSender<Event>,
    mut deliver: impl FnMut(&[u8]) + Send + 'static,
) -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    thread::Builder::new()
        .name("sticky-pty-output".into())
        .spawn(move || {
            let mut buf = vec![0; READ_SIZE];
            loop {
                let count = match reader.read(&mut buf) {
                    // portable-pty's reader turns EIO (the slave side is closed) into Ok(0).
                    Ok(0) => break,
                    Ok(count) => count,
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                if stopped.load(Ordering::Acquire) {
                    return;
                }
                deliver(&buf[..count]);
            }
            let _ = events.send(Event::OutputEnd);
        })
        .context("could not start the output thread")?;
    Ok(stop)
}

/// Where a run is.
enum Phase {
    /// The program runs; `kill_at` is when its group gets SIGKILL, once a signal was forwarded.
    Running { kill_at: Option<Instant> },
    /// The program has exited; its output is read until it ends or `until`.
    Draining {
        status: Result<Status>,
        until: Instant,
    },
}

/// Runs the run to its end: signals to the program's group (SIGWINCH to `on_resize`), SIGKILL
/// after the grace period, then the drain. `next` waits for the next event until the deadline it
/// is given (none: no deadline), handing the output it reads on its way to the run's consumer.
fn supervise(
    child: &mut Child,
    next: &mut dyn FnMut(Option<Instant>) -> Result<Event, RecvTimeoutError>,
    on_resize: &dyn Fn(),
) -> Result<Finished> {
    let mut interrupted_by = None;
    let mut output_ended = false;
    let mut phase = Phase::Running { kill_at: None };
    let status = loop {
        // The deadline is checked here as well as by `next`: a steady stream of events must not
        // hold it off.
        phase = match phase {
            Phase::Draining { status, until } if output_ended || Instant::now() >= until => {
                break status;
            }
            phase => phase,
        };
        let deadline = match &phase {
            Phase::Running { kill_at } => *kill_at,
            Phase::Draining { until, .. } => Some(*until),
        };
        match next(deadline) {
            Ok(Event::OutputEnd) => output_ended = true,
            Ok(Event::Exited(status)) => {
                child.mark_exited();
                phase = Phase::Draining {
                    status,
                    until: Instant::now() + DRAIN,
                };
            }
            Ok(Event::Signal(Signal::SIGWINCH)) => on_resize(),
            Ok(Event::Signal(signal)) => {
                child.signal(signal);
                interrupted_by.get_or_insert(signal as i32);
                if let Phase::Running { kill_at } = &mut phase {
                    kill_at.get_or_insert_with(|| Instant::now() + GRACE);
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Phase::Running { kill_at } = &mut phase {
                    child.signal(Signal::SIGKILL);
                    *kill_at = None;
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                bail!("the relay's threads stopped before the program ended");
            }
        }
    };
    Ok(Finished {
        status: status?,
        interrupted_by,
    })
}

/// Relays what the user types to the program, on a dedicated thread, until dropped or until
/// stdin ends.
///
/// The thread waits in poll(2) on stdin and on a pipe that dropping this closes, so it stops
/// without reading: once the run is over, the next keystroke belongs to whatever runs next, not
/// to a program that has exited.
struct KeyRelay {
    _stop: OwnedFd,
}

impl KeyRelay {
    fn start(input: OwnedFd, writer: Arc<Mutex<Box<dyn Write + Send>>>) -> Result<Self> {
        let (stop_read, stop_write) =
            unistd::pipe2(OFlag::O_CLOEXEC).context("could not create a pipe")?;
        thread::Builder::new()
            .name("sticky-pty-input".into())
            .spawn(move || relay_keys(&input, &stop_read, &writer))
            .context("could not start the input thread")?;
        Ok(Self { _stop: stop_write })
    }
}

fn relay_keys(input: &OwnedFd, stop: &OwnedFd, writer: &Mutex<Box<dyn Write + Send>>) {
    use filedescriptor::{POLLIN, pollfd};

    let mut buf = vec![0; CHUNK];
    loop {
        // filedescriptor's poll, because macOS's poll(2) does not work on terminals (it falls
        // back to select(2) there).
        let mut fds = [input.as_raw_fd(), stop.as_raw_fd()].map(|fd| pollfd {
            fd,
            events: POLLIN,
            revents: 0,
        });
        match filedescriptor::poll(&mut fds, None) {
            Ok(_) => {}
            Err(filedescriptor::Error::Poll(error))
                if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
        if fds[1].revents != 0 {
            return;
        }
        if fds[0].revents == 0 {
            continue;
        }
        let count = match unistd::read(input, &mut buf) {
            Ok(0) => return,
            Ok(count) => count,
            Err(Errno::EINTR | Errno::EAGAIN) => continue,
            Err(_) => return,
        };
        let mut writer = writer.lock().unwrap_or_else(PoisonError::into_inner);
        if writer
            .write_all(&buf[..count])
            .and_then(|()| writer.flush())
            .is_err()
        {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs::OpenOptions;
    use std::os::unix::fs::OpenOptionsExt;
    use std::sync::PoisonError;

    use nix::libc;
    use nix::sys::signal::raise;
    use nix::sys::termios;
    use portable_pty::{MasterPty, PtySize};

    use super::*;

    fn sh(script: &str) -> Spec {
        Spec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: env::temp_dir(),
            ..Spec::default()
        }
    }

    /// Runs `spec` headless and returns how it ended and everything it wrote.
    #[track_caller]
    fn headless_run(spec: &Spec) -> (Finished, Vec<u8>) {
        let mut output = Vec::new();
        let finished =
            run_headless(spec, &mut |chunk| output.extend_from_slice(chunk)).expect("headless run");
        (finished, output)
    }

    fn exited(code: i32) -> Finished {
        Finished {
            status: Status::Code(code),
            interrupted_by: None,
        }
    }

    /// Bytes of every value, in an order that is not a simple cycle.
    fn binary(len: usize) -> Vec<u8> {
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

    #[test]
    fn headless_output_arrives_exactly_in_order_on_the_calling_thread() {
        let caller = thread::current().id();
        let mut output = Vec::new();
        let finished = run_headless(
            &sh(r"printf 'one\ntwo\r\n\000\377\033[?25h'; exit 3"),
            &mut |chunk| {
                assert_eq!(thread::current().id(), caller);
                output.extend_from_slice(chunk);
            },
        )
        .expect("run");
        assert_eq!(finished, exited(3));
        assert_eq!(output, b"one\ntwo\r\n\0\xff\x1b[?25h");
    }

    #[test]
    fn headless_relays_megabytes_of_binary_unchanged() {
        let bytes = binary(4 << 20);
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("blob");
        std::fs::write(&file, &bytes).expect("write");
        let mut spec = sh(r#"cat "$BLOB""#);
        spec.env.push(("BLOB".into(), file.into()));
        let (finished, output) = headless_run(&spec);
        assert_eq!(finished, exited(0));
        assert!(
            output == bytes,
            "{} bytes out of {}",
            output.len(),
            bytes.len()
        );
    }

    #[test]
    fn a_run_ends_as_soon_as_the_program_and_its_output_do() {
        // Under the drain deadline: the end of output, not the deadline, ended the run. A run
        // that always waited for the deadline fails every attempt; a loaded machine (a slow
        // `sh` start) can only slow some of them.
        let mut took = Vec::new();
        for _ in 0..5 {
            let started = Instant::now();
            let (finished, output) = headless_run(&sh("echo bye"));
            assert_eq!((finished, output.as_slice()), (exited(0), &b"bye\n"[..]));
            took.push(started.elapsed());
            if took.last().is_some_and(|&t| t < DRAIN) {
                return;
            }
        }
        panic!("every run took the drain deadline or longer: {took:?}");
    }

    #[test]
    fn exit_codes_pass_through() {
        for code in [0, 1, 42, 255] {
            let (finished, _) = headless_run(&sh(&format!("exit {code}")));
            assert_eq!(finished, exited(code));
        }
    }

    #[test]
    fn a_program_killed_by_a_signal_reports_the_signal() {
        let (finished, _) = headless_run(&sh("kill -9 $$"));
        assert_eq!(
            finished,
            Finished {
                status: Status::Signal(9),
                interrupted_by: None,
            }
        );
    }

    #[test]
    fn headless_stdin_is_a_terminal_with_nothing_typed_and_the_size_is_the_default() {
        let expected = terminal::env_size();
        // Nothing typed means neither bytes nor EOF: `cat` waits until `timeout` stops it (124).
        let (finished, output) = headless_run(&sh(
            "test -t 0 && test -t 1 && stty size && timeout --foreground 1 cat; echo $?",
        ));
        assert_eq!(finished, exited(0));
        assert_eq!(
            String::from_utf8_lossy(&output),
            format!("{} {}\n124\n", expected.rows, expected.cols)
        );
    }

    #[test]
    fn cwd_pwd_and_env_are_the_specs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd = dir.path().canonicalize().expect("canonical");
        let mut spec = sh(r#"pwd -P; echo "$PWD"; echo "$STICKY_TEST_VALUE""#);
        spec.cwd.clone_from(&cwd);
        spec.env
            .push(("STICKY_TEST_VALUE".into(), "a b $(c)".into()));
        let (finished, output) = headless_run(&spec);
        assert_eq!(finished, exited(0));
        let cwd = cwd.display();
        assert_eq!(
            String::from_utf8_lossy(&output),
            format!("{cwd}\n{cwd}\na b $(c)\n")
        );
    }

    #[test]
    fn arguments_are_passed_literally() {
        let args = ["$(touch /tmp/sticky-pwned)", "a b", "`x`", "\n", "'"];
        let mut spec = Spec {
            program: "/usr/bin/printf".into(),
            args: vec!["%s|".into()],
            cwd: env::temp_dir(),
            ..Spec::default()
        };
        spec.args.extend(args.iter().map(OsString::from));
        let (finished, output) = headless_run(&spec);
        assert_eq!(finished, exited(0));
        assert_eq!(output, format!("{}|", args.join("|")).into_bytes());
    }

    #[test]
    fn a_missing_directory_is_an_error_not_home() {
        let mut spec = sh("pwd");
        spec.cwd = "/nonexistent/sticky-project".into();
        let error = run_headless(&spec, &mut |_| {}).expect_err("no such directory");
        assert!(
            error.to_string().contains("/nonexistent/sticky-project"),
            "{error:#}"
        );
    }

    #[test]
    fn a_missing_program_is_an_error_naming_it() {
        let spec = Spec {
            program: "/nonexistent/agent".into(),
            cwd: env::temp_dir(),
            ..Spec::default()
        };
        let error = run_headless(&spec, &mut |_| {}).expect_err("no such program");
        assert!(
            format!("{error:#}").contains("/nonexistent/agent"),
            "{error:#}"
        );
    }

    #[test]
    fn the_program_leads_its_session_on_the_terminal_with_default_signals_and_no_leaked_fds() {
        // A descriptor without close-on-exec, as a careless parent of sticky would leave one.
        let leaked = unistd::dup(io::stderr()).expect("dup");
        let fd = leaked.as_raw_fd();
        let (finished, output) = headless_run(&sh(&format!(
            r#"read pid comm state ppid pgrp sid tty tpgid rest < /proc/$$/stat
            [ "$pid" = "$sid" ] && [ "$pid" = "$pgrp" ] && [ "$pid" = "$tpgid" ] && [ "$tty" != 0 ] && echo leader
            set -- $(grep -E '^Sig(Blk|Ign):' /proc/$$/status)
            echo blocked $(( 0x$2 & 0x7fffffff )) ignored $(( 0x$4 & 0x7fffffff ))
            test -e /proc/$$/fd/{fd} && echo leaked {fd} || echo closed"#
        )));
        drop(leaked);
        assert_eq!(finished, exited(0));
        // Rust ignores SIGPIPE in sticky (and in this test); the program must not inherit that.
        // Only signals 1-31 count: glibc's posix_spawn leaves its two internal real-time signals
        // (32 and 33) ignored, and the program's own libc takes them back.
        assert_eq!(
            String::from_utf8_lossy(&output),
            "leader\nblocked 0 ignored 0\nclosed\n"
        );
    }

    #[test]
    fn output_is_drained_with_a_deadline_when_a_grandchild_keeps_the_terminal() {
        let started = Instant::now();
        let (finished, output) = headless_run(&sh("trap '' HUP; sleep 10 & echo done"));
        assert_eq!(finished, exited(0));
        assert_eq!(output, b"done\n");
        let took = started.elapsed();
        assert!(took >= DRAIN && took < DRAIN * 20, "took {took:?}");
    }

    #[test]
    fn sigterm_to_sticky_reaches_the_programs_group() {
        let mut sent = false;
        let finished = run_headless(&sh("echo ready; exec sleep 30"), &mut |chunk| {
            if chunk.ends_with(b"ready\n") && !sent {
                sent = true;
                raise(Signal::SIGTERM).expect("raise");
            }
        })
        .expect("run");
        assert_eq!(
            finished,
            Finished {
                status: Status::Signal(15),
                interrupted_by: Some(15),
            }
        );
    }

    #[test]
    fn a_program_that_ignores_the_signal_is_killed_after_the_grace_period() {
        let started = Instant::now();
        let mut sent = false;
        let finished = run_headless(&sh("trap '' INT; echo ready; sleep 30"), &mut |chunk| {
            if chunk.ends_with(b"ready\n") && !sent {
                sent = true;
                raise(Signal::SIGINT).expect("raise");
            }
        })
        .expect("run");
        assert_eq!(
            finished,
            Finished {
                status: Status::Signal(9),
                interrupted_by: Some(2),
            }
        );
        assert!(started.elapsed() >= GRACE);
    }

    #[test]
    fn a_large_stdin_reaches_the_program_whole_through_the_shim() {
        let bytes = binary(1 << 20);
        assert!(std::str::from_utf8(&bytes).is_err());
        let spec = Spec {
            stdin: Some(bytes.clone()),
            ..sh("test ! -t 0 && test -t 1 && test -t 2 && cat")
        };
        let mut output = Vec::new();
        let finished = headless(
            &spec,
            &mut |chunk| output.extend_from_slice(chunk),
            shim::tests::test_launcher,
        )
        .expect("run");
        assert_eq!(finished, exited(0));
        // libtest announces the test it runs before the shim execs the program.
        let preamble = output.len().saturating_sub(bytes.len());
        assert!(output.ends_with(&bytes), "{} bytes out", output.len());
        assert!(
            String::from_utf8_lossy(&output[..preamble]).contains("running 1 test"),
            "{:?}",
            String::from_utf8_lossy(&output[..preamble.min(200)])
        );
        assert_no_stdin_files_left();
    }

    #[test]
    fn the_shim_reports_a_program_that_cannot_run() {
        let spec = Spec {
            program: "/nonexistent/agent".into(),
            cwd: env::temp_dir(),
            stdin: Some(b"prompt".to_vec()),
            ..Spec::default()
        };
        let mut output = Vec::new();
        let finished = headless(
            &spec,
            &mut |chunk| output.extend_from_slice(chunk),
            shim::tests::test_launcher,
        )
        .expect("run");
        // The test entry panics when shim_main returns, so libtest's 101 is what arrives here;
        // sticky's main returns shim_main's 127 instead.
        assert_eq!(finished.status, Status::Code(101));
        assert!(
            String::from_utf8_lossy(&output).contains("could not run /nonexistent/agent"),
            "{}",
            String::from_utf8_lossy(&output)
        );
    }

    #[track_caller]
    fn assert_no_stdin_files_left() {
        // The shim unlinks its file; nothing else of ours may name it by now. Other tests may be
        // mid-run, so only files older than this test's start would be a leak; checking none is
        // left at all would race with them, so this only checks the directory is readable and
        // none of the files we can see is world-readable.
        for entry in std::fs::read_dir(env::temp_dir()).expect("temp dir") {
            let entry = entry.expect("entry");
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with("sticky-stdin-")
            {
                use std::os::unix::fs::PermissionsExt;
                if let Ok(meta) = entry.metadata() {
                    assert_eq!(meta.permissions().mode() & 0o077, 0);
                }
            }
        }
    }

    /// A terminal of the test's own standing in for the user's: its slave is sticky's stdin and
    /// stdout, the test types into and reads from its master.
    struct OuterTerminal {
        master: Option<Box<dyn MasterPty + Send>>,
        slave: File,
    }

    /// What the test does as the user: read the screen, type, resize the window.
    type User = dyn FnOnce(&mut dyn Read, &mut dyn Write, &dyn MasterPty) + Send;

    impl OuterTerminal {
        fn open(cols: u16, rows: u16) -> Self {
            let pair = child::open(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("outer pty");
            let path = pair.master.tty_name().expect("tty name");
            let slave = OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NOCTTY)
                .open(path)
                .expect("open slave");
            Self {
                master: Some(pair.master),
                slave,
            }
        }

        fn settings(&self) -> termios::Termios {
            termios::tcgetattr(&self.slave).expect("tcgetattr")
        }

        /// Runs `spec` interactively on this terminal while `user` plays the user.
        fn run(&mut self, spec: &Spec, user: Box<User>) -> Finished {
            let master = self.master.take().expect("one run at a time");
            let mut reader = master.try_clone_reader().expect("reader");
            let mut writer = master.take_writer().expect("writer");
            let user = thread::spawn(move || {
                user(&mut reader, &mut writer, master.as_ref());
                // Dropping the writer would type a newline and EOF into a terminal that the
                // relay may still be reading.
                std::mem::forget(writer);
                master
            });
            let input = self.slave.try_clone().expect("dup").into();
            let output = self.slave.try_clone().expect("dup");
            let (finished, _) = interactive(spec, input, output).expect("interactive run");
            self.master = Some(user.join().expect("user thread"));
            finished
        }
    }

    /// Reads until `needle` has appeared, returning everything read.
    #[track_caller]
    fn read_until(reader: &mut dyn Read, needle: &[u8]) -> Vec<u8> {
        let mut seen = Vec::new();
        let mut buf = [0; 4096];
        while !seen.windows(needle.len()).any(|window| window == needle) {
            let count = reader.read(&mut buf).expect("read");
            assert!(count > 0, "EOF before {needle:?} in {seen:?}");
            seen.extend_from_slice(&buf[..count]);
        }
        seen
    }

    fn raw_mode_serial() -> std::sync::MutexGuard<'static, ()> {
        terminal::TEST_RAW_MODE
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    #[test]
    fn interactive_relays_a_large_paste_exactly_and_restores_the_terminal() {
        let _serial = raw_mode_serial();
        let mut outer = OuterTerminal::open(100, 30);
        let before = outer.settings();
        let dir = tempfile::tempdir().expect("tempdir");
        let received = dir.path().join("received");
        let paste = binary(1 << 20);
        let mut spec =
            sh(r#"stty raw -echo -iexten; printf ready; head -c 1048576 > "$OUT"; printf done"#);
        spec.env.push(("OUT".into(), received.clone().into()));
        let typed = paste.clone();
        let finished = outer.run(
            &spec,
            Box::new(move |reader, writer, _| {
                read_until(reader, b"ready");
                writer.write_all(&typed).expect("type");
                read_until(reader, b"done");
            }),
        );
        assert_eq!(finished, exited(0));
        let got = std::fs::read(&received).expect("received");
        assert!(
            got == paste,
            "{} bytes arrived of {}",
            got.len(),
            paste.len()
        );
        assert_eq!(outer.settings(), before, "terminal restored");
    }

    #[test]
    fn interactive_output_is_the_programs_bytes_and_the_size_follows_the_terminal() {
        let _serial = raw_mode_serial();
        let mut outer = OuterTerminal::open(100, 30);
        let before = outer.settings();
        let spec = sh(
            r"stty size; trap 'stty size; exit 7' WINCH; printf 'ready\033[6n'; while :; do sleep 0.05; done",
        );
        let (output_tx, output_rx) = mpsc::channel();
        let finished = outer.run(
            &spec,
            Box::new(move |reader, _, master| {
                let mut seen = read_until(reader, b"ready\x1b[6n");
                // What a window manager and the kernel do when the user resizes the window.
                let size = PtySize {
                    rows: 40,
                    cols: 120,
                    pixel_width: 0,
                    pixel_height: 0,
                };
                master.resize(size).expect("resize");
                raise(Signal::SIGWINCH).expect("raise");
                seen.extend(read_until(reader, b"40 120"));
                output_tx.send(seen).expect("send");
            }),
        );
        assert_eq!(finished, exited(7));
        let seen = output_rx.recv().expect("output");
        assert!(
            seen.starts_with(b"30 100\r\nready\x1b[6n"),
            "{:?}",
            String::from_utf8_lossy(&seen)
        );
        assert_eq!(outer.settings(), before, "terminal restored");
    }

    #[test]
    fn interactive_sigterm_reaches_the_program_and_restores_the_terminal() {
        let _serial = raw_mode_serial();
        let mut outer = OuterTerminal::open(80, 24);
        let before = outer.settings();
        let finished = outer.run(
            &sh("printf ready; exec sleep 30"),
            Box::new(|reader, _, _| {
                read_until(reader, b"ready");
                raise(Signal::SIGTERM).expect("raise");
            }),
        );
        assert_eq!(
            finished,
            Finished {
                status: Status::Signal(15),
                interrupted_by: Some(15),
            }
        );
        assert_eq!(outer.settings(), before, "terminal restored");
    }

    #[test]
    fn interactive_crash_restores_the_terminal() {
        let _serial = raw_mode_serial();
        let mut outer = OuterTerminal::open(80, 24);
        let before = outer.settings();
        let finished = outer.run(
            &sh("printf ready; kill -9 $$"),
            Box::new(|reader, _, _| {
                read_until(reader, b"ready");
            }),
        );
        assert_eq!(finished.status, Status::Signal(9));
        assert_eq!(outer.settings(), before, "terminal restored");
    }

    #[test]
    fn interactive_without_a_terminal_relays_output_at_the_default_size() {
        let (read, write) = unistd::pipe2(OFlag::O_CLOEXEC).expect("pipe");
        let input = File::open("/dev/null").expect("/dev/null").into();
        let (finished, tail) = interactive(&sh("stty size; echo hi"), input, File::from(write))
            .expect("interactive run");
        assert_eq!(finished, exited(0));
        assert!(tail.ends_with(b"hi\r\n"), "the tail keeps the last output");
        let mut output = Vec::new();
        File::from(read).read_to_end(&mut output).expect("read");
        let size = terminal::env_size();
        assert_eq!(
            String::from_utf8_lossy(&output),
            format!("{} {}\r\nhi\r\n", size.rows, size.cols)
        );
    }

    #[test]
    fn the_tail_keeps_the_newest_bytes_within_bounds() {
        let mut tail = Vec::new();
        for round in 0..10u8 {
            keep_tail(&mut tail, &vec![round; TAIL / 2]);
            assert!(tail.len() <= 2 * TAIL);
        }
        assert!(tail.ends_with(&vec![9; TAIL / 2]));
    }

    #[test]
    fn interactive_refuses_stdin_bytes() {
        let spec = Spec {
            stdin: Some(b"x".to_vec()),
            ..sh("true")
        };
        let input = File::open("/dev/null").expect("/dev/null").into();
        let output = File::create("/dev/null").expect("/dev/null");
        assert!(interactive(&spec, input, output).is_err());
    }
}
