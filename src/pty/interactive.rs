//! Interactive runs: sticky's own terminal relayed to the program in raw mode, both ways.

use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use nix::errno::Errno;
use nix::sys::signal::Signal;
use nix::unistd;

use super::supervise::{Setup, command, supervise};
use super::terminal::{self, RawMode};
use super::{Event, FORWARDED, Finished, READ_SIZE, Spec, panic_if_asked};

/// The most bytes read at once from the user (a paste arrives in pieces of up to this).
const CHUNK: usize = 64 * 1024;

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
fn interactive(spec: &Spec, input: OwnedFd, output: File) -> Result<(Finished, Vec<u8>)> {
    ensure!(
        spec.stdin.is_none(),
        "stdin bytes are for headless runs: an interactive program reads the terminal"
    );
    let command = command(spec, &spec.program, &spec.args)?;
    let outer = outer_terminal(&input, &output)?;
    let outer_size = || outer.as_ref().and_then(|fd| terminal::size_of(fd.as_fd()));
    let mut signals = FORWARDED.to_vec();
    signals.push(Signal::SIGWINCH);
    let mut setup = Setup::open(
        &signals,
        outer_size().unwrap_or_else(terminal::env_size),
        None,
    )?;
    // Raw before the program starts, so its first output and queries meet a raw terminal.
    let _raw = if input.is_terminal() {
        Some(RawMode::enter(input.as_fd())?)
    } else {
        None
    };
    let mut child = setup.start(&command)?;
    let (output_stop, tail) = relay_output(setup.reader, setup.events_tx, output)?;
    let _keys = KeyRelay::start(input, Arc::clone(&setup.writer))?;
    panic_if_asked("relay");
    let resize = || {
        if let Some(size) = outer_size() {
            let _ = setup.master.resize(size);
        }
    };
    let finished = supervise(
        &mut child,
        &mut |deadline| match deadline {
            Some(at) => setup
                .events
                .recv_timeout(at.saturating_duration_since(Instant::now())),
            None => setup
                .events
                .recv()
                .map_err(|_| RecvTimeoutError::Disconnected),
        },
        &resize,
    );
    // Whatever the program's children still write no longer reaches the terminal.
    output_stop.store(true, Ordering::Release);
    Ok((finished?, last_output(&tail)))
}

/// The terminal whose size the program's follows: `input`, else `output` when only input is
/// redirected, else none.
fn outer_terminal(input: &OwnedFd, output: &File) -> Result<Option<OwnedFd>> {
    [input.as_fd(), output.as_fd()]
        .into_iter()
        .find(IsTerminal::is_terminal)
        .map(|fd| fd.try_clone_to_owned())
        .transpose()
        .context("could not use the terminal")
}

/// Relays the program's output to `output` (see [`pump`]) and keeps its tail; returns the flag
/// that stops the relay and the tail.
///
/// Straight to the terminal from the reader's thread: no line buffering, no hop through
/// another thread. A failing stdout (a closed terminal) must not stall the program, so the
/// output is still read, and dropped.
fn relay_output(
    reader: Box<dyn Read + Send>,
    events: SyncSender<Event>,
    mut output: File,
) -> Result<(Arc<AtomicBool>, Tail)> {
    let tail = Arc::new(Mutex::new(Vec::with_capacity(2 * TAIL)));
    let kept = Arc::clone(&tail);
    let stop = pump(reader, events, move |chunk| {
        let _ = output.write_all(chunk);
        // After the write, so keeping the tail never delays what the user sees.
        if let Ok(mut tail) = kept.lock() {
            keep_tail(&mut tail, chunk);
        }
    })?;
    Ok((stop, tail))
}

/// The program's latest output, kept by the output relay for after the run (see [`keep_tail`]).
type Tail = Arc<Mutex<Vec<u8>>>;

/// The last [`TAIL`] bytes of what [`keep_tail`] kept.
fn last_output(tail: &Mutex<Vec<u8>>) -> Vec<u8> {
    let mut tail = tail.lock().map(|tail| tail.clone()).unwrap_or_default();
    let start = tail.len().saturating_sub(TAIL);
    tail.drain(..start);
    tail
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
        let (stop_read, stop_write) = super::pipe(false)?;
        thread::Builder::new()
            .name("sticky-pty-input".into())
            .spawn(move || relay_keys(&input, &stop_read, &writer))
            .context("could not start the input thread")?;
        Ok(Self { _stop: stop_write })
    }
}

fn relay_keys(input: &OwnedFd, stop: &OwnedFd, writer: &Mutex<Box<dyn Write + Send>>) {
    let mut buf = vec![0; CHUNK];
    loop {
        let Some([keys, stopped]) = super::ready([input.as_raw_fd(), stop.as_raw_fd()], None)
        else {
            return;
        };
        if stopped {
            return;
        }
        if !keys {
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
    use std::sync::mpsc;

    use nix::libc;
    use nix::sys::signal::raise;
    use nix::sys::termios;
    use portable_pty::{MasterPty, PtySize};

    use super::*;
    use crate::pty::tests::{binary, exited, killed, sh};
    use crate::pty::{Status, child};

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

    /// Runs `spec` interactively on a terminal of its own of `size` (columns, rows) while `user`
    /// plays the user, and checks that the terminal's settings are restored afterwards.
    #[track_caller]
    fn run_on_terminal(size: (u16, u16), spec: &Spec, user: Box<User>) -> Finished {
        let _serial = raw_mode_serial();
        let mut outer = OuterTerminal::open(size.0, size.1);
        let before = outer.settings();
        let finished = outer.run(spec, user);
        assert_eq!(outer.settings(), before, "terminal restored");
        finished
    }

    fn raw_mode_serial() -> std::sync::MutexGuard<'static, ()> {
        terminal::TEST_RAW_MODE
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    #[test]
    fn interactive_relays_a_large_paste_exactly_and_restores_the_terminal() {
        let dir = tempfile::tempdir().expect("tempdir");
        let received = dir.path().join("received");
        let paste = binary(1 << 20);
        let mut spec =
            sh(r#"stty raw -echo -iexten; printf ready; head -c 1048576 > "$OUT"; printf done"#);
        spec.env.push(("OUT".into(), received.clone().into()));
        let typed = paste.clone();
        let finished = run_on_terminal(
            (100, 30),
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
    }

    #[test]
    fn interactive_output_is_the_programs_bytes_and_the_size_follows_the_terminal() {
        let spec = sh(
            r"stty size; trap 'stty size; exit 7' WINCH; printf 'ready\033[6n'; while :; do sleep 0.05; done",
        );
        let (output_tx, output_rx) = mpsc::channel();
        let finished = run_on_terminal(
            (100, 30),
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
    }

    /// Runs `script` on a terminal, which prints `ready` when it is, and does `then` at that
    /// point.
    #[track_caller]
    fn on_terminal_when_ready(script: &str, then: fn()) -> Finished {
        let user = move |reader: &mut dyn Read, _: &mut dyn Write, _: &dyn MasterPty| {
            read_until(reader, b"ready");
            then();
        };
        run_on_terminal((80, 24), &sh(script), Box::new(user))
    }

    #[test]
    fn interactive_sigterm_reaches_the_program_and_restores_the_terminal() {
        let finished = on_terminal_when_ready("printf ready; exec sleep 30", || {
            raise(Signal::SIGTERM).expect("raise");
        });
        assert_eq!(finished, killed(15, Some(15)));
    }

    #[test]
    fn interactive_crash_restores_the_terminal() {
        let finished = on_terminal_when_ready("printf ready; kill -9 $$", || {});
        assert_eq!(finished.status, Status::Signal(9));
    }

    #[test]
    fn interactive_without_a_terminal_relays_output_at_the_default_size() {
        let (read, write) = crate::pty::pipe(false).expect("pipe");
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
