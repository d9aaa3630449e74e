//! Regenerates `completions/`, `man/` and `tests/snapshots/help/` from the clap definition:
//! `cargo run --example generate [DIR]` (DIR defaults to the repository root).
//!
//! A unit test (`generate::tests`) fails when the committed files differ from what this
//! writes, so run it after changing anything in `src/cli.rs` and commit the result.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    match sticky::generate::write_all(&root) {
        Ok(written) => {
            for path in written {
                println!("{}", root.join(path).display());
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("generate: cannot write into {}: {error}", root.display());
            ExitCode::FAILURE
        }
    }
}
