//! The benchmarks' fake agent (see `bench/run`): the least an agent can cost, so what the
//! benchmarks measure is sticky and not the agent.
//!
//! - `bench_agent --write N`: writes N bytes of 128-byte text lines to stdout, then exits.
//! - `bench_agent --echo`: puts its terminal in raw mode, prints `BENCH-READY`, then writes back
//!   every byte it reads until it reads `q` (the keystroke round trip of `bench_tool latency`).
//! - Claude Code's command line (what sticky runs as `claude`): with `-p`, answers at once in
//!   Claude's stream-json shape (`system`/`init`, `assistant`, `result`, each carrying the
//!   session ID given by `--session-id` or `--resume`), after `BENCH_AGENT_BYTES` bytes of text
//!   lines when that is set; without `-p` (sticky's interactive path), writes `BENCH_AGENT_BYTES`
//!   bytes when set, else echoes like `--echo`.
//!
//! `BENCH_AGENT_STARTED=FILE` appends the wall-clock time of the start (Unix nanoseconds), so the
//! benchmark can tell how long sticky took to start the agent; `BENCH_AGENT_RSS=FILE` appends the
//! agent's own peak RSS (`VmHWM`, KiB) at exit, so the benchmark can show that the peak RSS it
//! reads for sticky is not the agent's.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use nix::sys::termios::{self, SetArg};

/// The size of one write: a pipe's and a pseudo-terminal's buffers take at most this at once.
const CHUNK: usize = 64 * 1024;

fn main() -> ExitCode {
    if let Some(path) = std::env::var_os("BENCH_AGENT_STARTED") {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos());
        append(&path, &format!("{now}\n"));
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = run(&args);
    if let Some(path) = std::env::var_os("BENCH_AGENT_RSS") {
        append(&path, &format!("{}\n", peak_rss_kib().unwrap_or(0)));
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bench_agent: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> io::Result<()> {
    let value = |flag: &str| {
        args.iter()
            .position(|arg| arg == flag)
            .and_then(|at| args.get(at + 1))
    };
    let env_bytes = || {
        std::env::var("BENCH_AGENT_BYTES")
            .ok()
            .and_then(|n| n.parse::<u64>().ok())
    };
    if let Some(count) = value("--write") {
        let count = count
            .parse()
            .map_err(|_| io::Error::other("--write wants a byte count"))?;
        return write_lines(&mut stdout()?, count);
    }
    if args.iter().any(|arg| arg == "--echo") {
        return echo();
    }
    if !args.iter().any(|arg| arg == "-p") {
        return match env_bytes() {
            Some(count) => write_lines(&mut stdout()?, count),
            None => echo(),
        };
    }
    let session = value("--session-id")
        .or_else(|| value("--resume"))
        .map_or("00000000-0000-4000-8000-000000000000", String::as_str);
    let mut out = stdout()?;
    writeln!(
        out,
        r#"{{"type":"system","subtype":"init","session_id":"{session}","model":"bench"}}"#
    )?;
    if let Some(count) = env_bytes() {
        write_lines(&mut out, count)?;
    }
    writeln!(
        out,
        r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"ok"}}]}},"session_id":"{session}"}}"#
    )?;
    writeln!(
        out,
        r#"{{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"{session}","total_cost_usd":0,"usage":{{"input_tokens":1,"output_tokens":1}}}}"#
    )
}

/// stdout as a plain file: every write is one write(2), with no line buffering in between.
fn stdout() -> io::Result<File> {
    Ok(File::from(io::stdout().as_fd().try_clone_to_owned()?))
}

/// Writes `count` bytes of printable 128-byte lines, `CHUNK` bytes at a time.
fn write_lines(out: &mut File, count: u64) -> io::Result<()> {
    let line: Vec<u8> = (0..127u8)
        .map(|i| b"0123456789abcdefghijklmnopqrstuvwxyz"[usize::from(i) % 36])
        .chain([b'\n'])
        .collect();
    let chunk: Vec<u8> = line.iter().copied().cycle().take(CHUNK).collect();
    let mut left = count;
    while left > 0 {
        let take = usize::try_from(left).map_or(CHUNK, |left| left.min(CHUNK));
        out.write_all(&chunk[..take])?;
        left -= take as u64;
    }
    Ok(())
}

/// Raw mode on the terminal (when stdin is one), then every byte read is written back until
/// `q`.
fn echo() -> io::Result<()> {
    let stdin = io::stdin();
    if let Ok(mut settings) = termios::tcgetattr(stdin.as_fd()) {
        termios::cfmakeraw(&mut settings);
        termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &settings)?;
    }
    let mut input = File::from(stdin.as_fd().try_clone_to_owned()?);
    let mut out = stdout()?;
    out.write_all(b"BENCH-READY")?;
    let mut buf = [0; 4096];
    loop {
        let count = input.read(&mut buf)?;
        if count == 0 {
            return Ok(());
        }
        let bytes = &buf[..count];
        match bytes.iter().position(|&byte| byte == b'q') {
            Some(at) => return out.write_all(&bytes[..at]),
            None => out.write_all(bytes)?,
        }
    }
}

/// The peak resident set of this process (`VmHWM`), in KiB.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

fn append(path: &std::ffi::OsStr, text: &str) {
    if let Ok(mut file) = OpenOptions::new().create(true).append(true).open(path) {
        let _ = file.write_all(text.as_bytes());
    }
}
