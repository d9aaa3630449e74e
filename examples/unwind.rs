//! Shows that a panic unwinds in a binary built as sticky's release binaries are.
//!
//! sticky turns a panic into exit 70 by catching it (`main.rs`), after its terminal guard has
//! been dropped on the way up; both need the unwinder, which a static musl binary gets from
//! the C toolchain that links it (zig's libunwind), not from the system. `.ci/release` builds
//! this example in the same cargo invocation as sticky itself (the same target, standard
//! library, linker, profile and panic strategy) and runs it on each Linux target, natively or
//! under qemu: a test of the toolchain with nothing added to sticky's binary (a panic trigger
//! in a release build would be one more way to end a user's turn).
//!
//! It prints `unwound` and exits 0 only when a panic raised a few frames down was caught and
//! the guard on its way ran its `Drop`; an abort, or a missed `Drop`, exits otherwise.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by [`Guard`]'s `Drop`, as sticky's terminal guard restores the terminal.
static DROPPED: AtomicBool = AtomicBool::new(false);

/// A value that must be dropped while the panic unwinds through its frame.
struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        DROPPED.store(true, Ordering::SeqCst);
    }
}

/// Panics `depth` frames below its caller, holding a [`Guard`] in the first.
#[inline(never)]
fn descend(depth: u32) -> u32 {
    let _guard = (depth == 3).then_some(Guard);
    assert!(depth > 0, "a panic for the unwinder");
    // `black_box` keeps the frames: folded into one, the unwinder would have less to walk.
    std::hint::black_box(descend(depth - 1)) + 1
}

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|_| {}));
    let caught = std::panic::catch_unwind(|| descend(std::hint::black_box(3))).is_err();
    if caught && DROPPED.load(Ordering::SeqCst) {
        println!("unwound");
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "unwind: caught {caught}, guard dropped {}",
            DROPPED.load(Ordering::SeqCst)
        );
        ExitCode::FAILURE
    }
}
