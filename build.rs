//! Link options that make every run of sticky start sooner, each used only where this
//! machine's toolchain is shown to take it: a probe builds and runs a small program with the
//! option, with the same rustc, flags and linker as sticky's own build, so `cargo install`
//! works the same wherever Rust does and gains the options where they work.
//!
//! - glibc linked statically (`-static-pie`), where its static library (`libc.a`) exists: no
//!   dynamic loader, no shared libraries to find, map, relocate and tear down at every start,
//!   0.3 to 0.45 ms of a turn (BENCHMARKS.md, "Seventh session"). The build's own `-lc`,
//!   `-lm`, ... then find glibc's archives first (links to them in `OUT_DIR`), and
//!   `-lgcc_s` finds GCC's static unwinder. `STICKY_LINK=dynamic` builds the usual
//!   dynamically linked binary instead; `STICKY_LINK=static` warns when it cannot be had, and
//!   any other value is named in a warning. A build for the host with
//!   `-C target-feature=+crt-static` is static already and is left as it is.
//! - `-z pack-relative-relocs` (`DT_RELR`): the ~18 000 relative relocations of a PIE packed
//!   in 5 KB instead of 440 KB of `.rela.dyn`, which the dynamic loader reads at every start
//!   (glibc 2.36 or later, and a linker that knows the option); a static PIE relocates itself
//!   the same way.
//! - Where glibc stays dynamic: GCC's unwinder linked in (`libgcc_eh.a`) instead of loading
//!   `libgcc_s.so.1`: one shared library fewer to find, map and relocate at every start. Panics
//!   unwind as before (every probe checks that `catch_unwind` still catches one).
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

/// The probe of a static link: as [`PROBE`], it also links what sticky's C code takes from
/// glibc (`SQLite`'s `dlopen` for extensions, its threads, libm; the spawn's chdir), and exits 0
/// only when no shared library is mapped into it.
const STATIC_PROBE: &str = r#"
unsafe extern "C" {
    fn dlopen(file: *const u8, mode: i32) -> *mut u8;
    fn dlsym(handle: *mut u8, name: *const u8) -> *mut u8;
    fn pthread_mutex_trylock(mutex: *mut u8) -> i32;
    fn log(x: f64) -> f64;
    fn pow(x: f64, y: f64) -> f64;
    fn posix_spawn_file_actions_addchdir_np(actions: *mut u8, path: *const u8) -> i32;
}
fn main() {
    let linked = [
        dlopen as usize, dlsym as usize, pthread_mutex_trylock as usize, log as usize,
        pow as usize, posix_spawn_file_actions_addchdir_np as usize,
    ];
    std::panic::set_hook(Box::new(|_| {}));
    let caught = std::panic::catch_unwind(|| panic!("probe")).is_err();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let shared = maps.lines().filter_map(|line| line.split_whitespace().nth(5)).any(|path| {
        let name = path.rsplit('/').next().unwrap_or(path);
        name.ends_with(".so") || name.contains(".so.")
    });
    let all_linked = std::hint::black_box(linked).iter().all(|&address| address != 0);
    std::process::exit(if caught && !shared && all_linked { 0 } else { 1 });
}
"#;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=STICKY_LINK");
    let asked = env::var("STICKY_LINK")
        .ok()
        .filter(|value| !value.is_empty());
    if let Some(value) = asked
        .as_deref()
        .filter(|v| !["dynamic", "static"].contains(v))
    {
        println!(
            "cargo:warning=STICKY_LINK={value} is neither `dynamic` nor `static`; it is \
             ignored"
        );
    }
    let static_build = env::var("CARGO_CFG_TARGET_FEATURE")
        .is_ok_and(|features| features.split(',').any(|f| f == "crt-static"));
    let statically = link_options(asked.as_deref() == Some("dynamic"), static_build);
    if asked.as_deref() == Some("static") && !statically && !static_build {
        println!(
            "cargo:warning=STICKY_LINK=static: glibc cannot be linked statically here (not \
             glibc on Linux, no libc.a, or the probe program linked with it did not run); \
             linked dynamically"
        );
    }
}

/// Emits the link options this build takes; whether glibc is linked statically.
fn link_options(dynamic_asked: bool, static_build: bool) -> bool {
    let (Ok(target), Ok(host)) = (env::var("TARGET"), env::var("HOST")) else {
        return false;
    };
    if target != host || env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return false;
    }
    let Some(out) = env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let relr = ["-C", "link-arg=-Wl,-z,pack-relative-relocs"];
    if probe(&out, &target, "relr", PROBE, &relr) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    let gnu = env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    let statically = gnu && !static_build && !dynamic_asked && link_glibc_statically(&out, &target);
    if gnu
        && !static_build
        && !statically
        && probe(&out, &target, "gcc_eh", PROBE, &["-l", "static=gcc_eh"])
    {
        // Named before std's `-lgcc_s`, so the unwinder's symbols are defined by the time the
        // linker meets the shared library, which `--as-needed` then leaves out.
        println!("cargo:rustc-link-lib=static:-bundle=gcc_eh");
    }
    if static_build || statically {
        // std declares `posix_spawn_file_actions_addchdir_np` weak (it checks for it at run
        // time); with one LTO unit that declaration absorbs `pty::spawn`'s own call, and a weak
        // reference does not pull glibc's `libc.a` member in, so the call went to address 0
        // (every turn of the static install crashed). Asking the linker for the symbol pulls
        // it in.
        println!("cargo:rustc-link-arg-bins=-Wl,--undefined=posix_spawn_file_actions_addchdir_np");
    }
    statically
}

/// Links the binaries with glibc's static libraries when the static probe shows it works;
/// whether it did.
fn link_glibc_statically(out: &Path, target: &str) -> bool {
    let Some(dir) = static_libraries(out) else {
        return false;
    };
    let search = format!("link-arg=-L{}", dir.display());
    let args = ["-C", &search, "-C", "link-arg=-static-pie"];
    if !probe(out, target, "static", STATIC_PROBE, &args) {
        return false;
    }
    println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
    println!("cargo:rustc-link-arg-bins=-static-pie");
    true
}

/// A directory in `OUT_DIR` where the libraries rustc names for a dynamic glibc link (`-lc`,
/// `-lm`, `-lgcc_s`, ...) resolve to static archives: glibc's own, and GCC's static unwinder
/// for `libgcc_s`. `None` when the C compiler knows no `libc.a` (Fedora without
/// `glibc-static`, musl, macOS) or one of the archives is missing.
fn static_libraries(out: &Path) -> Option<PathBuf> {
    let libc = compiler_file("libc.a")?;
    let glibc = libc.parent()?.to_owned();
    let dir = out.join("static-libraries");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).ok()?;
    for name in ["c", "m", "util", "rt", "pthread", "dl"] {
        let archive = glibc.join(format!("lib{name}.a"));
        if !archive.exists() {
            return None;
        }
        std::os::unix::fs::symlink(&archive, dir.join(format!("lib{name}.a"))).ok()?;
    }
    let unwinder = compiler_file("libgcc_eh.a")?;
    std::os::unix::fs::symlink(unwinder, dir.join("libgcc_s.a")).ok()?;
    Some(dir)
}

/// Where the C compiler (rustc's linker driver) finds `name`, when it finds it.
fn compiler_file(name: &str) -> Option<PathBuf> {
    let linker = env::var_os("RUSTC_LINKER").unwrap_or_else(|| "cc".into());
    let output = Command::new(linker)
        .arg(format!("-print-file-name={name}"))
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    (output.status.success() && path.is_absolute() && path.exists()).then_some(path)
}

/// Whether `program` builds with `extra` options added to this build's own and then runs.
fn probe(out: &Path, target: &str, name: &str, program: &str, extra: &[&str]) -> bool {
    let source = out.join(format!("probe-{name}.rs"));
    let binary = out.join(format!("probe-{name}"));
    if std::fs::write(&source, program).is_err() {
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
