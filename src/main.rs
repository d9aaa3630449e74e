//! The switchboard: parse, run, map the result to an exit code (`run` has printed the error
//! line, if any).
//!
//! sticky starts at the C `main`, not at Rust's: std's start-up (`lang_start`) reads
//! `/proc/self/maps` to find the main thread's stack guard and sets up an alternate signal
//! stack for its stack-overflow message, about 230 k instructions and 17 system calls of a run
//! that does little else before the agent starts (BENCHMARKS.md, "Seventh session"). What sticky
//! needs of that start-up is done here by hand: the command line, the three standard streams
//! held open, `SIGPIPE` ignored, and stdout flushed at the end. A stack overflow then ends in a
//! plain SIGSEGV instead of std's message, which only a bug in sticky can cause.
#![no_main]

use std::ffi::{CStr, OsStr, OsString, c_char, c_int};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;

use sticky::cli::Cli;
use sticky::exit::Exit;

/// The process's entry, called by the C runtime with the command line.
#[allow(unsafe_code)] // an entry point the C runtime calls by name
#[unsafe(no_mangle)]
extern "C" fn main(count: c_int, values: *const *const c_char) -> c_int {
    keep_standard_streams_open();
    ignore_sigpipe();
    sticky::store::configure_process();
    let code = run(command_line(count, values));
    // What std's runtime does after `main`: a line without a newline is still in the buffer.
    let _ = std::io::stdout().flush();
    c_int::from(code)
}

fn run(args: Vec<OsString>) -> u8 {
    if args.get(1).map(OsString::as_os_str) == Some(OsStr::new(sticky::pty::SHIM_ARG)) {
        // sticky re-executed itself to give an agent its prompt on stdin (see pty::Spec).
        return sticky::pty::shim_main(args);
    }
    let cli = match Cli::try_parse_args(args) {
        Ok(cli) => cli,
        Err(error) => {
            // --help and --version are "errors" that print to stdout and exit 0.
            let _ = error.print();
            return if error.use_stderr() {
                Exit::Usage.code()
            } else {
                0
            };
        }
    };
    // A panic is a bug in sticky: the panic hook has restored the terminal and printed where
    // it happened; the process then exits 70 like any internal error, never Rust's 101.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sticky::run(cli)));
    let exit = result.unwrap_or_else(|_| {
        eprintln!("sticky: internal error: sticky panicked (a bug in sticky; please report it)");
        Exit::Internal
    });
    exit.code()
}

/// The command line as the C runtime passed it (`argc`, `argv`), `argv[0]` included.
#[allow(unsafe_code)]
fn command_line(count: c_int, values: *const *const c_char) -> Vec<OsString> {
    (0..usize::try_from(count).unwrap_or(0))
        // SAFETY: the C runtime passes `count` pointers to NUL-terminated strings in `values`
        // (argc and argv), which live as long as the process.
        .map(|i| unsafe { CStr::from_ptr(*values.add(i)) })
        .map(|arg| OsStr::from_bytes(arg.to_bytes()).to_owned())
        .collect()
}

/// Opens `/dev/null` on any of stdin, stdout and stderr that the caller closed, as std's
/// start-up does: otherwise a file sticky opens could become fd 1, and a line printed to stdout
/// would be written into it. (`SQLite` already keeps its own files off fds 0 to 2, and today
/// sticky prints nothing while another file of its own is open, so no test can show this; it
/// keeps the guarantee std gave.)
#[allow(unsafe_code)]
fn keep_standard_streams_open() {
    use nix::libc;
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: poll only reads and writes the three structs it is given; an fd that is not
    // open comes back with POLLNVAL.
    let polled = unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) };
    if polled == -1 {
        std::process::abort();
    }
    for pollfd in fds.iter().filter(|p| p.revents & libc::POLLNVAL != 0) {
        // The lowest free descriptor is the one that was closed, as the fds are checked in
        // order; anything else means the process cannot be trusted to write where it means to.
        let null = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null");
        match null {
            Ok(file) if std::os::fd::AsRawFd::as_raw_fd(&file) == pollfd.fd => {
                std::mem::forget(file);
            }
            _ => std::process::abort(),
        }
    }
}

/// Ignores `SIGPIPE`, as Rust programs do: a write to a closed pipe then fails with `EPIPE`,
/// which sticky reports, instead of killing it (`cmd::listing`). Programs sticky starts get
/// the default back (`pty::spawn`, and std's `Command`).
#[allow(unsafe_code)]
fn ignore_sigpipe() {
    use nix::sys::signal::{SigHandler, Signal, signal};
    // SAFETY: SIG_IGN runs no code of ours in a signal handler.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigIgn) };
}
