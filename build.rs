//! Link options that make every run of sticky start sooner, each used only where this
//! machine's toolchain is shown to take it: a probe builds and runs a small program with the
//! option, with the same rustc, flags and linker as sticky's own build, so `cargo install`
//! works the same wherever Rust does and gains the options where they work. Neither changes
//! what the binary is: a dynamically linked program, as Cargo builds by default. (The static
//! binaries users download are musl's, built by `.ci/release`.)
//!
//! - `-z pack-relative-relocs` (`DT_RELR`): the ~18 000 relative relocations of a PIE packed
//!   in 5 KB instead of 440 KB of `.rela.dyn`, which the dynamic loader reads at every start
//!   (glibc 2.36 or later, and a linker that knows the option).
//! - With glibc: GCC's unwinder linked in (`libgcc_eh.a`) instead of loading `libgcc_s.so.1`:
//!   one shared library fewer to find, map and relocate at every start. Panics unwind as
//!   before (every probe checks that `catch_unwind` still catches one).
//!
//! None applies when sticky is built for another target than this machine's (the probe could
//! not run there).

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The probe: a panic caught by `catch_unwind` (the unwinder works), then exit 0.
const PROBE: &str = r#"
fn main() {
    std::panic::set_hook(Box::new(|_| {}));
    let caught = std::panic::catch_unwind(|| panic!("probe")).is_err();
    std::process::exit(if caught { 0 } else { 1 });
}
"#;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let (Ok(target), Ok(host)) = (env::var("TARGET"), env::var("HOST")) else {
        return;
    };
    if target != host || env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let Some(out) = env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    let relr = ["-C", "link-arg=-Wl,-z,pack-relative-relocs"];
    if probe(&out, &target, "relr", &relr) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    let static_build = env::var("CARGO_CFG_TARGET_FEATURE")
        .is_ok_and(|features| features.split(',').any(|f| f == "crt-static"));
    let gnu = env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if gnu && !static_build && probe(&out, &target, "gcc_eh", &["-l", "static=gcc_eh"]) {
        // Named before std's `-lgcc_s`, so the unwinder's symbols are defined by the time the
        // linker meets the shared library, which `--as-needed` then leaves out.
        println!("cargo:rustc-link-lib=static:-bundle=gcc_eh");
    }
    if gnu && static_build {
        // A static glibc build (`-C target-feature=+crt-static`): std declares
        // `posix_spawn_file_actions_addchdir_np` weak (it checks for it at run time); with one
        // LTO unit that declaration absorbs `pty::spawn`'s own call, and a weak reference does
        // not pull glibc's `libc.a` member in, so the call went to address 0 (every turn
        // crashed). Asking the linker for the symbol pulls it in.
        println!("cargo:rustc-link-arg-bins=-Wl,--undefined=posix_spawn_file_actions_addchdir_np");
    }
}

/// Whether [`PROBE`] builds with `extra` options added to this build's own and then runs.
fn probe(out: &Path, target: &str, name: &str, extra: &[&str]) -> bool {
    let source = out.join(format!("probe-{name}.rs"));
    let binary = out.join(format!("probe-{name}"));
    if std::fs::write(&source, PROBE).is_err() {
        return false;
    }
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let mut build = Command::new(rustc);
    build.args(["--edition=2021", "--crate-type=bin", "--target", target]);
    if let Ok(flags) = env::var("CARGO_ENCODED_RUSTFLAGS") {
        build.args(flags.split('\x1f').filter(|flag| !flag.is_empty()));
    }
    if let Some(linker) = env::var_os("RUSTC_LINKER") {
        let mut linker_flag = OsString::from("linker=");
        linker_flag.push(linker);
        build.arg("-C").arg(linker_flag);
    }
    build.args(extra).arg("-o").arg(&binary).arg(&source);
    let linked = build.output().is_ok_and(|output| output.status.success());
    linked
        && Command::new(&binary)
            .status()
            .is_ok_and(|status| status.success())
}
