//! One link option, for one kind of build: a static glibc build (`-C
//! target-feature=+crt-static`). std declares `posix_spawn_file_actions_addchdir_np` weak (it
//! checks for it at run time); with one LTO unit that declaration absorbs `pty::spawn`'s own
//! call, and a weak reference does not pull glibc's `libc.a` member in, so the call went to
//! address 0 (every turn crashed). Asking the linker for the symbol pulls it in.
//!
//! Every other build links as Cargo does by default. (Link options that needed a probe at build
//! time, packed relative relocations and glibc's unwinder linked in, saved 0.16 ms of a turn's
//! CPU, under the tenth of what sticky adds that part 16 asks of such a trick, and are gone.)

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let static_build = env::var("CARGO_CFG_TARGET_FEATURE")
        .is_ok_and(|features| features.split(',').any(|f| f == "crt-static"));
    let gnu = env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    let linux = env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    if linux && gnu && static_build {
        println!("cargo:rustc-link-arg-bins=-Wl,--undefined=posix_spawn_file_actions_addchdir_np");
    }
}
