//! What both kinds of run share: the program's command line, the set-up of its terminal and of
//! the events that reach the supervisor, and the supervisor that decides the end of a run.

use std::env;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use nix::sys::signal::Signal;
use nix::unistd;
use portable_pty::{MasterPty, PtyPair, PtySize, SlavePty};

use super::child::{self, Child, Command};
use super::signals::Forwarding;
use super::{DRAIN, Event, Finished, GRACE, QUEUE, Spec, Status};

/// Wakes a run waiting in poll(2): one byte into its pipe (a full pipe is awake already).
#[derive(Clone)]
pub(super) struct Waker(pub(super) Arc<OwnedFd>);

impl Waker {
    pub(super) fn wake(&self) {
        let _ = unistd::write(&*self.0, &[1]);
    }
}

/// The program's command line: `program args` with the spec's environment and directory.
pub(super) fn command(spec: &Spec, program: &Path, args: &[OsString]) -> Result<Command> {
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

/// What both kinds of run set up before the program starts: the run's events, with sticky's
/// `signals` caught into them, and a pseudo-terminal with its reader and its writer taken.
///
/// The caller moves out the parts it hands on; the rest lives until the run is over and drops
/// in the order of the fields, the opposite of the order they were made in.
pub(super) struct Setup {
    /// Taken once, and kept until the program has exited even when an interactive run's
    /// keystroke relay, which shares it, ends first (stdin at EOF): dropping it types a newline
    /// and EOF into the program.
    pub(super) writer: Arc<Mutex<Box<dyn Write + Send>>>,
    /// The program's output.
    pub(super) reader: Box<dyn Read + Send>,
    /// The terminal's device, which the program opens as its own.
    pub(super) tty: PathBuf,
    /// The terminal's master side.
    pub(super) master: Box<dyn MasterPty + Send>,
    /// Its slave side, until [`Setup::start`] hands it to the program.
    slave: Option<Box<dyn SlavePty + Send>>,
    /// Hands the caught signals over until dropped, after the run.
    _forwarding: Forwarding,
    /// What ends the wait of a run waiting in poll(2) with each event; `None` for a run that
    /// waits on `events` itself.
    waker: Option<Waker>,
    /// What the supervisor waits on.
    pub(super) events: Receiver<Event>,
    /// For the threads that report to the supervisor.
    pub(super) events_tx: SyncSender<Event>,
}

impl Setup {
    /// Catches `signals` (each with a byte for `waker`) and opens a terminal of `size`.
    pub(super) fn open(signals: &[Signal], size: PtySize, waker: Option<Waker>) -> Result<Self> {
        let (events_tx, events) = mpsc::sync_channel(QUEUE);
        let forwarding = forward(signals, &events_tx, waker.clone())?;
        Self::with(forwarding, size, waker, events_tx, events)
    }

    /// Like [`Setup::open`] for a run that polls the caught signals itself
    /// ([`polled_fd`](super::signals::polled_fd)): no thread reads them.
    pub(super) fn open_polled(
        signals: &[Signal],
        size: PtySize,
        waker: Option<Waker>,
    ) -> Result<Self> {
        let (events_tx, events) = mpsc::sync_channel(QUEUE);
        let forwarding = Forwarding::polled(signals)?;
        Self::with(forwarding, size, waker, events_tx, events)
    }

    /// Opens the terminal, the signals caught already.
    fn with(
        forwarding: Forwarding,
        size: PtySize,
        waker: Option<Waker>,
        events_tx: SyncSender<Event>,
        events: Receiver<Event>,
    ) -> Result<Self> {
        let PtyPair { master, slave } = child::open(size)?;
        let tty = master
            .tty_name()
            .context("the pseudo-terminal has no device name")?;
        let reader = master
            .try_clone_reader()
            .context("could not read the pseudo-terminal")?;
        let writer = master
            .take_writer()
            .context("could not write to the pseudo-terminal")?;
        let writer = Arc::new(Mutex::new(writer));
        Ok(Self {
            writer,
            reader,
            tty,
            master,
            slave: Some(slave),
            _forwarding: forwarding,
            waker,
            events,
            events_tx,
        })
    }

    /// Starts `command` on the terminal, whose slave side goes to the program (ours is dropped
    /// here); the program's exit becomes an event, with a byte for the waker.
    pub(super) fn start(&mut self, command: &Command) -> Result<Child> {
        let slave = self.take_slave()?;
        let on_exit = exit_reporter(&self.events_tx, self.waker.take());
        child::spawn(slave, &self.tty, command, on_exit)
    }

    /// The terminal's slave side, for the one program started on it.
    fn take_slave(&mut self) -> Result<Box<dyn SlavePty + Send>> {
        self.slave
            .take()
            .context("the program on this terminal has been started already")
    }

    /// Like [`Setup::start`], for a run that polls the program's exit itself: with the pidfd
    /// that tells it (see [`child::spawn_polled`]), or none where the exit comes as an event.
    pub(super) fn start_polled(&mut self, command: &Command) -> Result<(Child, Option<OwnedFd>)> {
        let slave = self.take_slave()?;
        // Cloned, not taken: with a pidfd `on_exit` is dropped unused, and the waker's pipe,
        // which the run polls, must not hang up before the run ends.
        let on_exit = exit_reporter(&self.events_tx, self.waker.clone());
        child::spawn_polled(slave, &self.tty, command, on_exit)
    }
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
pub(super) fn supervise(
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

#[cfg(test)]
mod tests {
    use nix::sys::signal::raise;

    use super::*;
    use crate::pty::run_headless;
    use crate::pty::tests::{exited, headless_run, killed, sh};

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
        assert_eq!(finished, killed(9, None));
    }

    #[test]
    fn cwd_pwd_and_env_are_the_specs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd = dir.path().canonicalize().expect("canonical");
        let mut spec = sh(
            r#"pwd -P; echo "$PWD"; echo "$STICKY_TEST_VALUE"; echo "$LD_LIBRARY_PATH" "${PYTHONPATH-unset}""#,
        );
        spec.cwd.clone_from(&cwd);
        spec.env.extend([
            ("STICKY_TEST_VALUE".into(), "a b $(c)".into()),
            // Search lists, even the spec's own, keep only their absolute entries.
            ("LD_LIBRARY_PATH".into(), ":/opt/lib".into()),
            ("PYTHONPATH".into(), ".".into()),
        ]);
        let (finished, output) = headless_run(&spec);
        assert_eq!(finished, exited(0));
        let cwd = cwd.display();
        assert_eq!(
            String::from_utf8_lossy(&output),
            format!("{cwd}\n{cwd}\na b $(c)\n/opt/lib unset\n")
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

    /// Linux only: the program's state as `/proc` shows it (`child.rs` tests the same of the
    /// fork that starts programs elsewhere).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_program_leads_its_session_on_the_terminal_with_default_signals_and_no_leaked_fds() {
        use std::io;
        use std::os::fd::AsRawFd;

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

    /// Runs `script`, which prints `ready` when it is, and sends sticky `signal` then.
    #[track_caller]
    fn signalled_when_ready(script: &str, signal: Signal) -> Finished {
        let mut sent = false;
        run_headless(&sh(script), &mut |chunk| {
            if chunk.ends_with(b"ready\n") && !sent {
                sent = true;
                raise(signal).expect("raise");
            }
        })
        .expect("run")
    }

    #[test]
    fn sigterm_to_sticky_reaches_the_programs_group() {
        let finished = signalled_when_ready("echo ready; exec sleep 30", Signal::SIGTERM);
        assert_eq!(finished, killed(15, Some(15)));
    }

    #[test]
    fn a_program_that_ignores_the_signal_is_killed_after_the_grace_period() {
        let started = Instant::now();
        let finished = signalled_when_ready("trap '' INT; echo ready; sleep 30", Signal::SIGINT);
        assert_eq!(finished, killed(9, Some(2)));
        assert!(started.elapsed() >= GRACE);
    }
}
