//! Where the reports go: stdout, or the user's pager for long listings on a terminal; and the
//! rule that a reader who stops reading (`sticky log | head -1`, quitting the pager) ends a
//! listing quietly.
//!
//! Rust ignores SIGPIPE, so writing to a closed pipe fails with EPIPE instead of killing the
//! process. Reports therefore write through [`Listing`] (never `println!`, which panics on
//! EPIPE) and return the error, and `output::emit` turns a broken pipe ([`is_broken_pipe`]) into
//! exit 0 with nothing on stderr, as ripgrep and fd do.

use std::ffi::OsString;
use std::io::{self, BufWriter, IsTerminal, Stdout, Write};
use std::process::{Child, ChildStdin, Command, Stdio};

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

/// The pager when `PAGER` is unset: quit at once when the text fits the screen (`-F`), pass
/// colours through (`-R`), and leave the text on the screen after quitting (`-X`).
const DEFAULT_PAGER: (&str, &[&str]) = ("less", &["-FRX"]);

/// A report's output: stdout (buffered) or a pager's stdin.
pub struct Listing {
    out: Out,
}

enum Out {
    Stdout(BufWriter<Stdout>),
    Pager {
        /// `None` once closed, so the pager sees the end of the text.
        stdin: Option<BufWriter<ChildStdin>>,
        child: Child,
        /// Ctrl-C belongs to the pager while it runs (see [`IgnoreInterrupts`]).
        _interrupts: IgnoreInterrupts,
    },
}

impl Listing {
    /// Plain stdout, for short reports and JSON.
    pub fn stdout() -> Self {
        Self {
            out: Out::Stdout(BufWriter::new(io::stdout())),
        }
    }

    /// For long listings: the pager when stdout is a terminal, else stdout. A pager that cannot
    /// start falls back to stdout.
    pub fn paged() -> Self {
        if !io::stdout().is_terminal() {
            return Self::stdout();
        }
        let pager = crate::settings::env::pager();
        let Some(mut command) = pager_command(pager.as_deref()) else {
            return Self::stdout();
        };
        command
            .stdin(Stdio::piped())
            .env("LESS", crate::settings::env::less())
            .env("LV", crate::settings::env::lv());
        // `less` (or a PAGER given by name) is found through absolute PATH entries only, never
        // in the directory sticky was started in (review 22, L2).
        let spawned = crate::search_lists::apply(&mut command).spawn();
        let Ok(mut child) = spawned else {
            return Self::stdout();
        };
        let Some(stdin) = child.stdin.take() else {
            return Self::stdout();
        };
        Self {
            out: Out::Pager {
                stdin: Some(BufWriter::new(stdin)),
                child,
                _interrupts: IgnoreInterrupts::install(),
            },
        }
    }

    /// Flushes the text and, with a pager, waits until the user quits it.
    pub fn finish(mut self) -> io::Result<()> {
        self.flush()?;
        self.close();
        Ok(())
    }

    /// Ends the pager's input and waits for it, so the shell gets the terminal back only when
    /// the pager is done with it.
    fn close(&mut self) {
        if let Out::Pager { stdin, child, .. } = &mut self.out {
            if let Some(mut stdin) = stdin.take() {
                let _ = stdin.flush();
            }
            let _ = child.wait();
        }
    }
}

impl Write for Listing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.out {
            Out::Stdout(out) => out.write(buf),
            Out::Pager {
                stdin: Some(pipe), ..
            } => pipe.write(buf),
            Out::Pager { stdin: None, .. } => Err(io::ErrorKind::BrokenPipe.into()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.out {
            Out::Stdout(out) => out.flush(),
            Out::Pager {
                stdin: Some(pipe), ..
            } => pipe.flush(),
            Out::Pager { stdin: None, .. } => Ok(()),
        }
    }
}

impl Drop for Listing {
    fn drop(&mut self) {
        if let Out::Stdout(out) = &mut self.out {
            // An error path dropped the listing: what was written still goes out; a broken
            // pipe here has already been reported by the write that met it.
            let _ = out.flush();
        }
        self.close();
    }
}

/// The pager to run for `pager` (the value of `PAGER`): unset is `less -FRX`; empty or `cat`
/// is no pager; a program and plain words (`less -R`) run directly, so a program that is not
/// there fails to start and the listing falls back to stdout (through `sh` it would be lost,
/// sh's 127 ending the listing as a reader who stopped reading); anything else is a shell
/// command line, as git and man run it.
fn pager_command(pager: Option<&std::ffi::OsStr>) -> Option<Command> {
    let Some(pager) = pager else {
        let (program, args) = DEFAULT_PAGER;
        let mut command = Command::new(program);
        command.args(args);
        return Some(command);
    };
    let text = pager.to_string_lossy();
    if text.trim().is_empty() || text.trim() == "cat" {
        return None;
    }
    let shell_syntax = |c: char| "|&;<>()$`\\\"'*?[]#~=%{}".contains(c);
    if let (Some(text), false) = (pager.to_str(), text.contains(shell_syntax)) {
        let mut words = text.split_whitespace();
        let mut command = Command::new(words.next()?);
        command.args(words);
        return Some(command);
    }
    let mut command = Command::new("sh");
    command.arg("-c").arg(OsString::from(pager));
    Some(command)
}

/// Whether `error` is a write to a closed pipe (the reader stopped reading).
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Ignores SIGINT and SIGQUIT until dropped, restoring the previous dispositions.
///
/// The pager shares sticky's process group, so Ctrl-C reaches both; `less` ignores it, and if
/// sticky died of it the shell would take the terminal back while `less` still draws on it.
/// git does the same while its pager runs.
struct IgnoreInterrupts {
    previous: Vec<(Signal, SigAction)>,
}

impl IgnoreInterrupts {
    fn install() -> Self {
        let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
        let mut previous = Vec::new();
        for signal in [Signal::SIGINT, Signal::SIGQUIT] {
            if let Ok(old) = set_action(signal, &ignore) {
                previous.push((signal, old));
            }
        }
        Self { previous }
    }
}

impl Drop for IgnoreInterrupts {
    fn drop(&mut self) {
        for (signal, action) in self.previous.drain(..).rev() {
            let _ = set_action(signal, &action);
        }
    }
}

/// Installs `action` for `signal`, returning the one it replaces.
#[allow(unsafe_code)]
fn set_action(signal: Signal, action: &SigAction) -> nix::Result<SigAction> {
    // SAFETY: the actions installed are SIG_IGN, or dispositions the kernel handed back to us
    // as the previous ones; neither runs any code of ours in a signal handler.
    unsafe { sigaction(signal, action) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pager_is_less_by_default_and_off_for_cat_or_empty() {
        let default = pager_command(None).unwrap();
        assert_eq!(default.get_program(), "less");
        assert_eq!(default.get_args().collect::<Vec<_>>(), ["-FRX"]);
        for off in ["", "  ", "cat"] {
            assert!(pager_command(Some(off.as_ref())).is_none(), "{off:?}");
        }
        let custom = pager_command(Some("most -s".as_ref())).unwrap();
        assert_eq!(custom.get_program(), "most");
        assert_eq!(custom.get_args().collect::<Vec<_>>(), ["-s"]);
        let line = pager_command(Some("LESS=R less | tee seen".as_ref())).unwrap();
        assert_eq!(line.get_program(), "sh");
        assert_eq!(
            line.get_args().collect::<Vec<_>>(),
            ["-c", "LESS=R less | tee seen"]
        );
    }

    #[test]
    fn broken_pipes_are_found_anywhere_in_the_chain() {
        let pipe = anyhow::Error::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(is_broken_pipe(&pipe.context("could not print the log")));
        let other = anyhow::Error::from(io::Error::from(io::ErrorKind::PermissionDenied));
        assert!(!is_broken_pipe(&other));
        assert!(!is_broken_pipe(&anyhow::anyhow!("broken pipe")));
    }
}
