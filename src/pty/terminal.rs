//! The terminals around a run: raw mode on the user's terminal, sizes, and the headless
//! pseudo-terminal's output settings.
//!
//! Raw mode is a guard ([`RawMode`]) plus a panic hook: the guard restores the saved settings
//! when the run ends on any path that unwinds (success, error, every signal sticky catches, since
//! those end the run normally), and the hook restores them before the panic message is printed,
//! so the message does not staircase across a raw terminal and an abort-on-panic build still
//! gets its terminal back.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once, PoisonError, TryLockError};

use anyhow::{Context, Result};
use nix::libc;
use nix::sys::termios::{self, OutputFlags, SetArg, Termios};
use portable_pty::PtySize;

/// The size used when there is no terminal to ask and no COLUMNS/LINES.
const DEFAULT_SIZE: (u16, u16) = (80, 24);

/// The settings to put back, one entry per live [`RawMode`], shared with the panic hook.
static SAVED: Mutex<Vec<Saved>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);
static PANIC_HOOK: Once = Once::new();

/// Tests that put a terminal in raw mode take this: the panic hook test restores every saved
/// terminal, which would break a concurrent test's "is it raw now" check.
#[cfg(test)]
pub(super) static TEST_RAW_MODE: Mutex<()> = Mutex::new(());

struct Saved {
    id: u64,
    /// A duplicate of the terminal's descriptor: it outlives whatever the caller closes.
    fd: OwnedFd,
    termios: Termios,
}

impl Saved {
    fn restore(&self) {
        // TCSANOW, not TCSADRAIN: a terminal stopped by flow control must not hang sticky's exit.
        let _ = termios::tcsetattr(&self.fd, SetArg::TCSANOW, &self.termios);
    }
}

/// A terminal in raw mode until this is dropped (or sticky panics).
#[derive(Debug)]
pub(super) struct RawMode {
    id: u64,
}

impl RawMode {
    /// Puts the terminal `fd` in raw mode: every byte reaches the agent as typed (Ctrl-C
    /// included, which is the agent's to handle), and output passes without processing.
    pub(super) fn enter(fd: BorrowedFd<'_>) -> Result<Self> {
        let original = termios::tcgetattr(fd).context("could not read the terminal settings")?;
        let mut raw = original.clone();
        termios::cfmakeraw(&mut raw);
        PANIC_HOOK.call_once(install_panic_hook);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        saved().push(Saved {
            id,
            fd: fd
                .try_clone_to_owned()
                .context("could not duplicate the terminal descriptor")?,
            termios: original,
        });
        // From here on, dropping the guard puts the original settings back.
        let guard = Self { id };
        termios::tcsetattr(fd, SetArg::TCSANOW, &raw)
            .context("could not put the terminal in raw mode")?;
        Ok(guard)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let mut saved = saved();
        if let Some(at) = saved.iter().position(|entry| entry.id == self.id) {
            saved.remove(at).restore();
        }
    }
}

fn saved() -> MutexGuard<'static, Vec<Saved>> {
    SAVED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Restores every raw terminal before the previous hook prints the panic message.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // try_lock: a panic while the list is locked must not deadlock the hook.
        let saved = match SAVED.try_lock() {
            Ok(saved) => Some(saved),
            Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        };
        if let Some(mut saved) = saved {
            for entry in saved.drain(..) {
                entry.restore();
            }
        }
        // The previous hook (std's) writes the panic message to stderr raw, not through msg:
        // a bug's report is said whatever --quiet asks, and relies on nothing of sticky's.
        previous(info);
    }));
}

/// The size of the terminal `fd`, or `None` when it is not a terminal or reports no size.
pub(super) fn size_of(fd: BorrowedFd<'_>) -> Option<PtySize> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    #[allow(unsafe_code)]
    // SAFETY: TIOCGWINSZ writes one `winsize` into the pointer, which points at a live, writable
    // `winsize`; on a descriptor that is not a terminal it fails with ENOTTY and writes nothing.
    let result = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &raw mut size) };
    (result == 0 && size.ws_row > 0 && size.ws_col > 0).then_some(PtySize {
        rows: size.ws_row,
        cols: size.ws_col,
        pixel_width: size.ws_xpixel,
        pixel_height: size.ws_ypixel,
    })
}

/// The size announced by COLUMNS and LINES, each falling back to 80x24.
pub(super) fn env_size() -> PtySize {
    let (columns, lines) = crate::settings::env::size();
    size_from_env(columns, lines)
}

fn size_from_env(columns: Option<OsString>, lines: Option<OsString>) -> PtySize {
    let parse = |value: Option<OsString>, default: u16| {
        value
            .and_then(|value| value.to_str()?.trim().parse::<u16>().ok())
            .filter(|&n| n > 0)
            .unwrap_or(default)
    };
    PtySize {
        cols: parse(columns, DEFAULT_SIZE.0),
        rows: parse(lines, DEFAULT_SIZE.1),
        pixel_width: 0,
        pixel_height: 0,
    }
}

/// Sets the pseudo-terminal at `tty` (its slave side) so the program's bytes reach the master as
/// written: no `\n` -> `\r\n` in headless output, which a caller parses rather than displays.
pub(super) fn keep_output_bytes(tty: &Path) -> Result<()> {
    // O_NOCTTY: opening a terminal must never make it sticky's own controlling terminal.
    let slave = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(tty)
        .with_context(|| format!("could not open {}", tty.display()))?;
    let mut settings = termios::tcgetattr(&slave)
        .with_context(|| format!("could not read the settings of {}", tty.display()))?;
    output_as_written(&mut settings);
    termios::tcsetattr(&slave, SetArg::TCSANOW, &settings)
        .with_context(|| format!("could not change the settings of {}", tty.display()))
}

/// The output settings under which a terminal passes every byte through unchanged.
///
/// On Linux output processing stays on, with every flag that would change a byte cleared: the
/// kernel's path for processed output moved a program's output to the master 40% faster than
/// its path for raw output (68 against 49 MiB/s for a headless turn, interleaved runs of
/// 256 MiB), and with these flags it changes nothing. Elsewhere output processing is turned off.
pub fn output_as_written(settings: &mut Termios) {
    #[cfg(target_os = "linux")]
    settings.output_flags.remove(
        OutputFlags::ONLCR
            | OutputFlags::OCRNL
            | OutputFlags::ONOCR
            | OutputFlags::ONLRET
            | OutputFlags::OLCUC
            | OutputFlags::OFILL
            | OutputFlags::TABDLY,
    );
    #[cfg(not(target_os = "linux"))]
    settings.output_flags.remove(OutputFlags::OPOST);
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::{Read, Write};
    use std::os::fd::AsFd;

    use nix::pty::{Winsize, openpty};
    use nix::sys::termios::LocalFlags;

    use super::*;

    fn pty(cols: u16, rows: u16) -> nix::pty::OpenptyResult {
        let size = Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        openpty(Some(&size), None).expect("openpty")
    }

    #[test]
    fn raw_mode_lasts_while_the_guard_lives() {
        let _serial = TEST_RAW_MODE.lock().unwrap_or_else(PoisonError::into_inner);
        let pty = pty(80, 24);
        let before = termios::tcgetattr(&pty.slave).expect("tcgetattr");
        assert!(before.local_flags.contains(LocalFlags::ICANON));
        let guard = RawMode::enter(pty.slave.as_fd()).expect("raw mode");
        let raw = termios::tcgetattr(&pty.slave).expect("tcgetattr");
        assert!(
            !raw.local_flags
                .intersects(LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ISIG)
        );
        assert!(!raw.output_flags.contains(OutputFlags::OPOST));
        drop(guard);
        assert_eq!(termios::tcgetattr(&pty.slave).expect("tcgetattr"), before);
    }

    #[test]
    fn a_panic_restores_the_terminal_even_when_the_guard_never_drops() {
        let _serial = TEST_RAW_MODE.lock().unwrap_or_else(PoisonError::into_inner);
        let pty = pty(80, 24);
        let before = termios::tcgetattr(&pty.slave).expect("tcgetattr");
        let slave = pty.slave.as_fd();
        let outcome = std::panic::catch_unwind(|| {
            // Forgotten, so only the panic hook can put the settings back.
            std::mem::forget(RawMode::enter(slave).expect("raw mode"));
            panic!("injected panic while the terminal is raw");
        });
        assert!(outcome.is_err());
        assert_eq!(termios::tcgetattr(&pty.slave).expect("tcgetattr"), before);
    }

    #[test]
    fn the_size_comes_from_the_terminal() {
        let pty = pty(132, 43);
        let size = size_of(pty.slave.as_fd()).expect("a size");
        assert_eq!((size.cols, size.rows), (132, 43));
    }

    #[test]
    fn no_size_without_a_terminal() {
        let file = tempfile::tempfile().expect("tempfile");
        assert_eq!(size_of(file.as_fd()), None);
    }

    #[test]
    fn env_size_falls_back_to_80x24_per_dimension() {
        let size = |c: Option<&str>, l: Option<&str>| {
            let size = size_from_env(c.map(Into::into), l.map(Into::into));
            (size.cols, size.rows)
        };
        assert_eq!(size(None, None), (80, 24));
        assert_eq!(size(Some("200"), Some("50")), (200, 50));
        assert_eq!(size(Some("120"), None), (120, 24));
        assert_eq!(size(Some("0"), Some("wide")), (80, 24));
        assert_eq!(size(Some(" 100 "), Some("99999999")), (100, 24));
    }

    #[test]
    fn the_output_settings_change_no_byte() {
        let pty = pty(80, 24);
        let path = nix::unistd::ttyname(&pty.slave).expect("ttyname");
        // What an agent might have left behind, on top of the kernel's default ONLCR.
        let mut settings = termios::tcgetattr(&pty.slave).expect("tcgetattr");
        settings
            .output_flags
            .insert(OutputFlags::OCRNL | OutputFlags::TAB3);
        termios::tcsetattr(&pty.slave, SetArg::TCSANOW, &settings).expect("tcsetattr");
        keep_output_bytes(&path).expect("keep the bytes");
        let bytes: Vec<u8> = (0..=255).chain(*b"a\tb\r\nc\n").collect();
        let mut slave = File::from(pty.slave);
        slave.write_all(&bytes).expect("write");
        let mut master = File::from(pty.master);
        let mut got = vec![0; bytes.len()];
        master.read_exact(&mut got).expect("read");
        assert_eq!(got, bytes);
    }
}
