//! Run-time skips, counted. A test that cannot run here (a shell or an agent not installed)
//! returns early, and libtest counts it as passed; so every such test calls [`skip`] or
//! [`skip_untested`] first, which says so loudly and appends one line to the file named by
//! [`SKIP_LOG`]. `.ci/run` sets that variable and moves the tests it lists from "passed" to
//! "skipped" in its closing line.
//!
//! Under CI (`CI` set and not empty) nothing the README promises may skip: [`skip`] fails the
//! test instead. [`skip_untested`] is for what the README names as untested here (a shell that
//! cannot be installed on CI's machine); it is counted, never failed.

use std::fs::OpenOptions;
use std::io::Write;

/// The variable naming the file where each run-time skip appends `<test>\t<reason>`.
pub const SKIP_LOG: &str = "STICKY_TEST_SKIP_LOG";

/// Whether this run is CI's (`CI` set and not empty, as `.ci/run` and CI services set it).
pub fn under_ci() -> bool {
    std::env::var_os("CI").is_some_and(|ci| !ci.is_empty())
}

/// Skips the calling test (the caller returns right after) because something the README
/// promises cannot be checked here, for `reason`. Under CI the test fails instead: CI installs
/// everything the promised tests need, so a skip there is a broken set-up.
#[track_caller]
pub fn skip(reason: &str) {
    assert!(
        !under_ci(),
        "{reason}; CI is set, and under CI nothing the README promises may skip"
    );
    record(reason);
}

/// Skips the calling test (the caller returns right after) for `reason`: something the README
/// names as untested here, so CI counts the skip and goes on.
pub fn skip_untested(reason: &str) {
    record(reason);
}

/// Says the skip on the process's stderr (libtest captures `eprintln!` and shows it only for a
/// failing test, and a skip must be seen) and appends it to the [`SKIP_LOG`] file.
fn record(reason: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("an unnamed test")
        .to_owned();
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {reason}");
    let Some(log) = std::env::var_os(SKIP_LOG) else {
        return;
    };
    // One short write of a file opened for appending: lines of parallel tests do not mix.
    let line = format!("{test}\t{}\n", reason.replace(['\n', '\t'], " "));
    let appended = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(e) = appended {
        panic!("record the skip in {}: {e}", log.to_string_lossy());
    }
}
