//! Headless runs: the program's output read and handed to the caller on the calling thread.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::unistd;

use super::child::Reaper;
use super::shim::{Launcher, StdinFile};
use super::signals;
use super::supervise::{Setup, Waker, command, supervise};
use super::{Event, FORWARDED, Finished, READ_SIZE, Spec, terminal};
#[cfg(doc)]
use super::{output_as_written, shim_main};

/// Runs `spec` on a pseudo-terminal without raw mode and calls `on_output` on the calling thread
/// with each chunk of the program's output, in order, until the program has exited and its output
/// is drained.
///
/// The terminal is COLUMNS x LINES (80x24 by default) and changes no byte of the output (see
/// [`output_as_written`]), so the chunks are the program's bytes as written. The program's stdin is the terminal, on which
/// nothing is typed, or, when `spec.stdin` holds bytes, a file with those bytes (through the
/// stdin shim, see [`shim_main`]).
pub fn run_headless(spec: &Spec, on_output: &mut dyn FnMut(&[u8])) -> Result<Finished> {
    headless(spec, &mut || {}, on_output, Launcher::current)
}

/// [`run_headless`], calling `meanwhile` once on the calling thread as soon as the program has
/// started, before the first wait for its output: work the caller would otherwise do after the
/// program's end is done while the program starts up (on another core, where there is one).
/// Output arriving meanwhile waits on the terminal.
pub fn run_headless_meanwhile(
    spec: &Spec,
    meanwhile: &mut dyn FnMut(),
    on_output: &mut dyn FnMut(&[u8]),
) -> Result<Finished> {
    headless(spec, meanwhile, on_output, Launcher::current)
}

fn headless(
    spec: &Spec,
    meanwhile: &mut dyn FnMut(),
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
    let (wake_read, wake_write) = super::pipe(true)?;
    // Its writer is never written, only kept.
    let mut setup = Setup::open_polled(
        &FORWARDED,
        terminal::env_size(),
        Some(Waker(Arc::new(wake_write))),
    )?;
    terminal::keep_output_bytes(&setup.tty)?;
    let master = setup
        .master
        .as_raw_fd()
        .context("the pseudo-terminal has no descriptor")?;
    let (mut child, exit) = setup.start_polled(&command)?;
    let mut output = PolledOutput {
        reader: setup.reader,
        master,
        wake: wake_read,
        exit: exit.map(|fd| (fd, child.reaper())),
        events: setup.events,
        pending: VecDeque::new(),
        buf: vec![0; READ_SIZE],
        ended: false,
        end_reported: false,
    };
    meanwhile();
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
/// thread next to the writing program on machines with two cores. The same poll(2) waits for
/// the program's exit (its pidfd) and for the signals sticky caught (their pipe), so a headless
/// run starts no thread: the two threads that reported those cost every turn about 0.1 ms of
/// CPU and a wake-up (BENCHMARKS.md). Where the kernel has no pidfd, the exit still comes from
/// a thread, over `events`, with a byte into the pipe `wake` so the wait ends.
struct PolledOutput {
    reader: Box<dyn Read + Send>,
    /// The master's descriptor, polled; `reader` reads the same terminal.
    master: RawFd,
    wake: OwnedFd,
    /// The program's pidfd, readable once it has exited, and what reaps it; `None` once reaped,
    /// or where its exit comes over `events`.
    exit: Option<(OwnedFd, Reaper)>,
    events: Receiver<Event>,
    /// Events polled but not handed over yet (several signals may arrive at once).
    pending: VecDeque<Event>,
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
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Ok(event);
            }
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
            self.wait(wait, on_output)?;
        }
    }

    /// Waits in poll(2) until something is ready or `wait` has passed, and takes what is: the
    /// wake-up bytes, the caught signals and the program's exit into `pending`, a chunk of
    /// output to `on_output`.
    fn wait(
        &mut self,
        wait: Option<Duration>,
        on_output: &mut dyn FnMut(&[u8]),
    ) -> Result<(), RecvTimeoutError> {
        let signals = signals::polled_fd().unwrap_or(-1);
        let exit = self.exit.as_ref().map_or(-1, |(fd, _)| fd.as_raw_fd());
        let master = if self.ended { -1 } else { self.master };
        let fds = [self.wake.as_raw_fd(), signals, exit, master];
        let Some([wake, signalled, exited, output]) = super::ready(fds, wait) else {
            return Err(RecvTimeoutError::Disconnected);
        };
        if wake {
            let mut sink = [0_u8; 64];
            while matches!(unistd::read(&self.wake, &mut sink), Ok(n) if n > 0) {}
        }
        if signalled {
            self.pending
                .extend(signals::take().into_iter().map(Event::Signal));
        }
        if exited {
            if let Some((_, reaper)) = self.exit.take() {
                self.pending.push_back(Event::Exited(reaper.reap()));
            }
        }
        if output {
            self.read_chunk(on_output);
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use std::{env, thread};

    use super::*;
    use crate::pty::tests::{binary, exited, headless_run, sh};
    use crate::pty::{Status, shim};

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
    fn meanwhile_runs_once_while_the_program_runs_and_before_its_output_is_handed_over() {
        let dir = tempfile::tempdir().expect("tempdir");
        let started = dir.path().join("started");
        let script = format!("touch '{}'; printf out", started.display());
        let output = std::cell::RefCell::new(Vec::new());
        let mut calls = 0;
        let finished = run_headless_meanwhile(
            &sh(&script),
            &mut || {
                calls += 1;
                assert!(output.borrow().is_empty(), "output handed over first");
                // The program is running: it makes the file while this waits.
                let deadline = Instant::now() + Duration::from_secs(30);
                while !started.exists() {
                    assert!(Instant::now() < deadline, "the program never started");
                    thread::sleep(Duration::from_millis(5));
                }
            },
            &mut |chunk| output.borrow_mut().extend_from_slice(chunk),
        )
        .expect("run");
        assert_eq!((finished, calls), (exited(0), 1));
        assert_eq!(output.into_inner(), b"out");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_headless_run_sleeps_while_the_program_does() {
        // The run polls on this thread alone, so this thread's CPU time is the run's.
        let before = thread_cpu();
        let (finished, output) = headless_run(&sh("sleep 1; echo woke"));
        assert_eq!((finished, output.as_slice()), (exited(0), &b"woke\n"[..]));
        // A poll loop that spun (a descriptor that stays ready) would burn most of that second.
        let spent = thread_cpu().saturating_sub(before);
        assert!(spent < Duration::from_millis(100), "{spent:?} of CPU");
    }

    /// The CPU time the calling thread has used.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    fn thread_cpu() -> Duration {
        let mut now = nix::libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the timespec it is given and nothing else.
        let done =
            unsafe { nix::libc::clock_gettime(nix::libc::CLOCK_THREAD_CPUTIME_ID, &raw mut now) };
        assert_eq!(done, 0, "clock_gettime");
        Duration::new(
            u64::try_from(now.tv_sec).expect("seconds"),
            u32::try_from(now.tv_nsec).expect("nanoseconds"),
        )
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
    fn a_large_stdin_reaches_the_program_whole_through_the_shim() {
        let bytes = binary(1 << 20);
        assert!(std::str::from_utf8(&bytes).is_err());
        let spec = Spec {
            stdin: Some(bytes.clone()),
            ..sh("test ! -t 0 && test -t 1 && test -t 2 && cat")
        };
        let (finished, output) = shim_run(&spec);
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
        let (finished, output) = shim_run(&spec);
        // The test entry panics when shim_main returns, so libtest's 101 is what arrives here;
        // sticky's main returns shim_main's 127 instead.
        assert_eq!(finished.status, Status::Code(101));
        assert!(
            String::from_utf8_lossy(&output).contains("could not run /nonexistent/agent"),
            "{}",
            String::from_utf8_lossy(&output)
        );
    }

    /// Runs `spec`, whose stdin holds bytes, through this test binary as the stdin shim.
    #[track_caller]
    fn shim_run(spec: &Spec) -> (Finished, Vec<u8>) {
        let mut output = Vec::new();
        let finished = headless(
            spec,
            &mut || {},
            &mut |chunk| output.extend_from_slice(chunk),
            shim::tests::test_launcher,
        )
        .expect("run");
        (finished, output)
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
}
