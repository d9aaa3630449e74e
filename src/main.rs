//! The switchboard: parse, run, map the result to an exit code (`run` has printed the error
//! line, if any).

use std::process::ExitCode;

use sticky::cli::Cli;
use sticky::exit::Exit;

fn main() -> ExitCode {
    if std::env::args_os().nth(1).as_deref() == Some(sticky::pty::SHIM_ARG.as_ref()) {
        // sticky re-executed itself to give an agent its prompt on stdin (see pty::Spec).
        return sticky::pty::shim_main(std::env::args_os().collect());
    }
    let cli = match Cli::try_parse_args(std::env::args_os()) {
        Ok(cli) => cli,
        Err(error) => {
            // --help and --version are "errors" that print to stdout and exit 0.
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() {
                Exit::Usage.code()
            } else {
                0
            });
        }
    };
    // A panic is a bug in sticky: the panic hook has restored the terminal and printed where
    // it happened; the process then exits 70 like any internal error, never Rust's 101.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sticky::run(cli)));
    let exit = result.unwrap_or_else(|_| {
        eprintln!("sticky: internal error: sticky panicked (a bug in sticky; please report it)");
        Exit::Internal
    });
    ExitCode::from(exit.code())
}
