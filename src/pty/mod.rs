//! The relay: runs a program on a pseudo-terminal, headless or interactive.
//!
//! Knows nothing of agents or SQL. Headless runs capture the program's output for a caller that
//! parses it; interactive runs relay the user's terminal in raw mode. Both forward SIGINT,
//! SIGTERM, SIGHUP and SIGQUIT to the program's process group, kill it after a grace period, and
//! report the real exit code or signal.
//!
//! INTERFACE CONTRACT (filled in by the pty work; signatures are fixed, bodies are not).

use std::ffi::OsString;
use std::path::PathBuf;

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// The program, already resolved to a path.
    pub program: PathBuf,
    /// Its arguments, passed literally (never through a shell).
    pub args: Vec<OsString>,
    /// Extra environment variables (on top of sticky's own environment).
    pub env: Vec<(OsString, OsString)>,
    /// The working directory (also exported as `PWD`).
    pub cwd: PathBuf,
    /// Headless only: bytes the program reads on its stdin (a pipe instead of the terminal),
    /// for prompts too large for one argument. `None` leaves stdin on the pseudo-terminal.
    pub stdin: Option<Vec<u8>>,
}

/// How the program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// It exited with this code.
    Code(i32),
    /// It was killed by this signal.
    Signal(i32),
}

/// The end of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// How the program ended.
    pub status: Status,
    /// The first signal sticky received and forwarded during the run, if any.
    pub interrupted_by: Option<i32>,
}

/*
Fixed API:

/// Runs `spec` on a pseudo-terminal of `size` (cols, rows) without raw mode; calls `on_output`
/// on the calling thread with each chunk of the program's output, in order, until it exits and
/// its output is drained.
pub fn run_headless(spec: &Spec, on_output: &mut dyn FnMut(&[u8])) -> anyhow::Result<Finished>;

/// Runs `spec` on a pseudo-terminal relayed to sticky's own terminal (raw mode while stdin is a
/// terminal, restored on every path), resizing with it.
pub fn run_interactive(spec: &Spec) -> anyhow::Result<Finished>;

/// The hidden entry point of the stdin shim (see `Spec::stdin`), called by main before clap
/// when argv[1] is SHIM_ARG.
pub const SHIM_ARG: &str = "__sticky_stdin_shim";
pub fn shim_main(args: Vec<OsString>) -> std::process::ExitCode;
*/
