//! A pseudo-terminal that a test drives like a person at a keyboard: it starts a program on an
//! 80x24 terminal, types into it, and waits for text to appear on the screen or for the
//! program to exit, each under a deadline. Waits are handshakes on what the program shows, not
//! sleeps.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use super::{AgentHome, DEADLINE};

/// A program running on a pseudo-terminal, with everything it wrote so far.
pub struct Terminal {
    what: String,
    child: Box<dyn Child + Send + Sync>,
    // Kept open for the program's lifetime: dropping the master hangs the terminal up.
    _master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    output: Arc<Mutex<Vec<u8>>>,
}

impl Terminal {
    /// Starts the built sticky with `args` in `cwd` on a fresh terminal, in `world`'s
    /// environment.
    #[track_caller]
    pub fn sticky(world: &AgentHome, cwd: &Path, args: &[&str]) -> Terminal {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: 24,
                cols: 80,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pseudo-terminal");
        let mut command = CommandBuilder::new(super::sticky_binary());
        command.args(args);
        command.cwd(cwd);
        command.env_clear();
        for (key, value) in world.env() {
            command.env(key, value);
        }
        command.env("PWD", cwd);
        let what = format!("sticky {args:?} on a terminal in {}", cwd.display());
        let child = pty
            .slave
            .spawn_command(command)
            .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
        // The slave belongs to the child now; holding it would keep the terminal open after
        // the child exits.
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("a terminal reader");
        let writer = pty.master.take_writer().expect("the terminal writer");
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&output);
        thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            // Ok(0) or EIO (the child is gone) ends the output.
            while let Ok(n @ 1..) = reader.read(&mut chunk) {
                sink.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .extend_from_slice(&chunk[..n]);
            }
        });
        Terminal {
            what,
            child,
            _master: pty.master,
            writer,
            output,
        }
    }

    /// Everything the program wrote so far, as text.
    pub fn screen(&self) -> String {
        let bytes = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// How much the program has written so far, to wait for text written after this point.
    pub fn mark(&self) -> usize {
        self.output
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Where `text` ends in what the program wrote after `mark`, if it wrote it.
    fn found_since(&self, mark: usize, text: &str) -> Option<usize> {
        let needle = text.as_bytes();
        if needle.is_empty() {
            return Some(mark);
        }
        let bytes = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        bytes
            .get(mark..)
            .unwrap_or_default()
            .windows(needle.len())
            .position(|window| window == needle)
            .map(|at| mark + at + needle.len())
    }

    /// Waits until the program has written `text`, failing the test at the deadline.
    #[track_caller]
    pub fn wait_for(&self, text: &str) {
        self.wait_for_since(0, text);
    }

    /// Waits until the program has written `text` after `mark`, failing at the deadline;
    /// returns the mark just after it, to wait for what follows.
    #[track_caller]
    pub fn wait_for_since(&self, mark: usize, text: &str) -> usize {
        let started = Instant::now();
        loop {
            if let Some(end) = self.found_since(mark, text) {
                return end;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "{}: {text:?} did not appear within {DEADLINE:?}; the terminal shows:\n{}",
                self.what,
                self.tail()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `word` and waits for it to be echoed, typing it again when the program dropped
    /// it: Codex's TUI discards pending input (`tcflush`) while it opens a conversation's
    /// composer, so a word typed in that moment never appears. Each try waits `patience` first;
    /// a word whose echo took longer still arrives, so the input may hold it twice.
    #[track_caller]
    pub fn type_until_echoed(&mut self, word: &str, patience: Duration) {
        for _ in 0..3 {
            let mark = self.mark();
            self.type_keys(word);
            let started = Instant::now();
            while started.elapsed() < patience {
                if self.found_since(mark, word).is_some() {
                    return;
                }
                thread::sleep(Duration::from_millis(20));
            }
        }
        panic!(
            "{}: {word:?} was typed three times and never echoed; the terminal shows:\n{}",
            self.what,
            self.tail()
        );
    }

    /// Types `keys` as one write (a typed word, or a key such as `\r`).
    #[track_caller]
    pub fn type_keys(&mut self, keys: &str) {
        self.writer
            .write_all(keys.as_bytes())
            .and_then(|()| self.writer.flush())
            .unwrap_or_else(|e| panic!("{}: cannot type {keys:?}: {e}", self.what));
    }

    /// Waits for the program to exit and returns its exit code, failing at the deadline.
    #[track_caller]
    pub fn wait_exit(&mut self) -> u32 {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the child") {
                return status.exit_code();
            }
            assert!(
                started.elapsed() < DEADLINE,
                "{}: still running after {DEADLINE:?}; the terminal shows:\n{}",
                self.what,
                self.tail()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// The program's exit code if it exits within `patience`.
    pub fn exit_within(&mut self, patience: Duration) -> Option<u32> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the child") {
                return Some(status.exit_code());
            }
            if started.elapsed() >= patience {
                return None;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the program to exit and asserts its exit code, showing the screen otherwise.
    #[track_caller]
    pub fn assert_exit(&mut self, code: u32) {
        let got = self.wait_exit();
        assert_eq!(
            got,
            code,
            "{}: exit code {got}, not {code}; the terminal shows:\n{}",
            self.what,
            self.tail()
        );
    }

    /// The last part of the output with control characters escaped, for failure messages.
    fn tail(&self) -> String {
        let screen = self.screen();
        let start = screen.char_indices().rev().nth(2000).map_or(0, |(i, _)| i);
        screen[start..].escape_debug().to_string()
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        // A test that failed half-way must not leave the program running.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
