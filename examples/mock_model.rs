//! The test suite's mock model server as a program, for running an agent CLI against it by hand.
//!
//! ```text
//! cargo run --example mock_model -- [--port N] [--log requests.jsonl]
//! ANTHROPIC_BASE_URL=http://127.0.0.1:PORT ANTHROPIC_API_KEY=test claude -p "hi"
//! ```
//!
//! It prints `listening on 127.0.0.1:PORT` on stdout once it accepts connections, appends every
//! request as one JSON line to the `--log` file, and serves until it is killed. Settings for each
//! agent are in `tests/it/real/mod.rs` and research/real-agents-offline.md.

// Compiled here for manual runs; the test-only helpers (request lists, turn filters) go unused.
#[allow(dead_code)]
#[path = "../tests/it/mock/mod.rs"]
mod mock;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use mock::{MockConfig, MockServer};

const USAGE: &str = "usage: mock_model [--port N] [--log FILE]";

fn main() -> ExitCode {
    if std::env::args().any(|a| a == "-h" || a == "--help") {
        println!("the mock model server of sticky's tests\n{USAGE}");
        return ExitCode::SUCCESS;
    }
    let config = match parse(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("mock_model: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let server = match MockServer::start_with(config) {
        Ok(server) => server,
        Err(error) => {
            eprintln!("mock_model: cannot start: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("listening on 127.0.0.1:{}", server.port());
    // A script waiting for the line reads it through a pipe: flush it now, not at exit.
    let _ = std::io::stdout().flush();
    loop {
        std::thread::park();
    }
}

/// `--port N` and `--log FILE`, in any order.
fn parse(mut args: impl Iterator<Item = String>) -> Result<MockConfig, String> {
    let mut config = MockConfig::default();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let value = args.next().ok_or("--port needs a number")?;
                config.port = value
                    .parse()
                    .map_err(|_| format!("--port: not a port number: {value}"))?;
            }
            "--log" => config.log = Some(PathBuf::from(args.next().ok_or("--log needs a file")?)),
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    Ok(config)
}
