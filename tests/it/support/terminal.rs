//! sticky on a pseudo-terminal driven by a test, as a user at a terminal would drive it.
//!
//! Tests wait for what the program prints (a handshake such as a prompt) before they type, never
//! for a fixed time; every wait has the harness deadline.

use std::io::{Read, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize};

use super::DEADLINE;

/// Everything the terminal has shown so far, and whether the program side has closed.
#[derive(Default)]
struct Screen {
    bytes: Vec<u8>,
    closed: bool,
}

/// A running sticky whose stdin, stdout and stderr are one pseudo-terminal.
pub struct Terminal {
    what: String,
    child: Box<dyn Child + Send + Sync>,
    // Kept so the terminal stays open until the test is done with it.
    _master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    screen: Arc<(Mutex<Screen>, Condvar)>,
    seen: usize,
}

impl Terminal {
    /// Starts `command` on a fresh 80x24 pseudo-terminal.
    #[track_caller]
    pub(super) fn spawn(what: String, command: CommandBuilder) -> Self {
        let pair = portable_pty::native_pty_system()
            .openpty(PtySize {
                rows: 24,
                cols: 80,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pseudo-terminal");
        let child = pair
            .slave
            .spawn_command(command)
            .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
        // Only the child may hold the slave, or reading the master never ends.
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("read the terminal");
        let writer = pair.master.take_writer().expect("write to the terminal");

        let screen = Arc::new((Mutex::new(Screen::default()), Condvar::new()));
        let shared = Arc::clone(&screen);
        thread::spawn(move || {
            let mut chunk = [0_u8; 8192];
            loop {
                // EIO is how Linux says the last holder of the slave is gone.
                let read = reader.read(&mut chunk).unwrap_or(0);
                let (lock, changed) = &*shared;
                let mut screen = lock.lock().expect("screen lock");
                if read == 0 {
                    screen.closed = true;
                    changed.notify_all();
                    return;
                }
                screen.bytes.extend_from_slice(&chunk[..read]);
                changed.notify_all();
            }
        });
        Self {
            what,
            child,
            _master: pair.master,
            writer,
            screen,
            seen: 0,
        }
    }

    /// Everything the terminal has shown so far, as text (lossy).
    pub fn contents(&self) -> String {
        let screen = self.screen.0.lock().expect("screen lock");
        String::from_utf8_lossy(&screen.bytes).into_owned()
    }

    /// Waits until `needle` appears after what earlier expectations consumed, and returns the
    /// text up to and including it.
    #[track_caller]
    pub fn expect(&mut self, needle: &str) -> String {
        let started = Instant::now();
        let (lock, changed) = &*self.screen;
        let mut screen = lock.lock().expect("screen lock");
        loop {
            let fresh = &screen.bytes[self.seen..];
            if let Some(at) = find(fresh, needle.as_bytes()) {
                let end = self.seen + at + needle.len();
                let text = String::from_utf8_lossy(&screen.bytes[self.seen..end]).into_owned();
                self.seen = end;
                return text;
            }
            let waited = started.elapsed();
            assert!(
                !screen.closed && waited < DEADLINE,
                "{}: {needle:?} never appeared (terminal {}); it showed:\n{}",
                self.what,
                if screen.closed {
                    "closed"
                } else {
                    "still open"
                },
                String::from_utf8_lossy(&screen.bytes)
            );
            screen = changed
                .wait_timeout(screen, DEADLINE.saturating_sub(waited))
                .expect("screen lock")
                .0;
        }
    }

    /// Types `text` (use "\r" for Enter, as a terminal sends it).
    #[track_caller]
    pub fn send(&mut self, text: &str) {
        self.writer
            .write_all(text.as_bytes())
            .and_then(|()| self.writer.flush())
            .unwrap_or_else(|e| panic!("{}: cannot type: {e}", self.what));
    }

    /// The process id of the program on the terminal.
    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("the program has a pid")
    }

    /// Waits for sticky to exit and returns its exit code.
    #[track_caller]
    pub fn wait(mut self) -> u32 {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for sticky") {
                return status.exit_code();
            }
            assert!(
                started.elapsed() < DEADLINE,
                "{}: still running after {DEADLINE:?}; it showed:\n{}",
                self.what,
                self.contents()
            );
            thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        // A failed test must not leave sticky (and its agent) running.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The position of `needle` in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
