//! The switchboard: parse, run, map the result to an exit code (`run` has printed the error
//! line, if any).
//!
//! sticky starts at Rust's own `main`, through std's start-up, as every Rust program does: it
//! keeps the three standard streams open, ignores `SIGPIPE` (a write to a closed pipe fails
//! with `EPIPE`, which `cmd::listing` reports, instead of killing sticky), prints std's message
//! on a stack overflow and flushes stdout at the end. A C `main` in its place (`#![no_main]`)
//! once saved 0.18 ms of `--version` (commit 63fd019); it was given up for the plain build
//! every Rust user expects, with what that costs a turn measured (BENCHMARKS.md, "What moved
//! each figure").

use std::ffi::{OsStr, OsString};
use std::process::ExitCode;

use sticky::cli::Cli;
use sticky::exit::Exit;

fn main() -> ExitCode {
    ExitCode::from(run(std::env::args_os().collect()))
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
        sticky::msg::error(format_args!(
            "internal error: sticky panicked (a bug in sticky; please report it)"
        ));
        Exit::Internal
    });
    exit.code()
}
