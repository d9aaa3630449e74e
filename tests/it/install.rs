//! `install.sh`, as a user without Rust runs it (`sh`, a HOME, nothing else), against a
//! release served on 127.0.0.1: the asset of this machine, its SHA-256 checked, `sticky` put
//! into `~/.local/bin` (or `STICKY_INSTALL_DIR`) and then running a turn; a tampered asset and
//! an unknown platform refused with nothing installed.
//!
//! The release served is the layout `.ci/release` makes: `STICKY_RELEASE_DIR` names one it
//! built (`.ci/run` passes the static musl binaries it built and checked), else the release
//! script packages this build's own sticky into a scratch directory, under the name of the
//! asset install.sh picks here. Either way the files and their names are the release
//! script's. The last test holds the names the release, install.sh, the README and
//! `cargo binstall`'s metadata use to one another.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::support::TestEnv;

/// The repository's root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The release target install.sh picks on this machine (its `uname` mapping, for the systems
/// the tests run on).
fn this_target() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-musl",
        ("linux", "aarch64") => "aarch64-unknown-linux-musl",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        (os, arch) => panic!("no release target for {os} {arch}"),
    }
}

/// A release directory: the one `STICKY_RELEASE_DIR` names, or one the release script packs
/// from this build's sticky (kept alive by the returned guard).
fn release() -> (PathBuf, Option<tempfile::TempDir>) {
    if let Some(dir) = std::env::var_os("STICKY_RELEASE_DIR").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        let asset = dir.join(format!("sticky-{}.tar.gz", this_target()));
        assert!(
            asset.is_file(),
            "STICKY_RELEASE_DIR={} holds no {}: run .ci/release build first",
            dir.display(),
            asset.display()
        );
        return (dir, None);
    }
    let scratch = tempfile::tempdir().expect("a directory for the release");
    let dist = scratch.path().join("dist");
    let status = std::process::Command::new("bash")
        .arg(root().join(".ci/release"))
        .arg("package")
        .arg(&dist)
        .arg(format!(
            "{}={}",
            this_target(),
            env!("CARGO_BIN_EXE_sticky")
        ))
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run .ci/release package");
    assert!(status.success(), ".ci/release package failed");
    (dist, Some(scratch))
}

/// A static file server on 127.0.0.1 over one directory, recording each path asked for.
struct Served {
    server: Arc<tiny_http::Server>,
    url: String,
    asked: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl Served {
    fn new(dir: &Path) -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("listen on 127.0.0.1"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let (dir, serving, log) = (dir.to_owned(), Arc::clone(&server), Arc::clone(&asked));
        let thread = std::thread::spawn(move || {
            for request in serving.incoming_requests() {
                let name = request.url().trim_start_matches('/').to_owned();
                log.lock().expect("the request log").push(name.clone());
                // Only plain names of the directory's files: no path leads out of it.
                let file = (!name.contains('/') && !name.starts_with('.'))
                    .then(|| std::fs::read(dir.join(&name)).ok())
                    .flatten();
                let _ = match file {
                    Some(bytes) => request.respond(tiny_http::Response::from_data(bytes)),
                    None => request.respond(tiny_http::Response::empty(404)),
                };
            }
        });
        Self {
            server,
            url: format!("http://127.0.0.1:{port}"),
            asked,
            thread: Some(thread),
        }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().expect("the request log").clone()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The files of `dir`, by name.
fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn install_sh_installs_the_release_binary_into_local_bin_and_it_runs_a_turn() {
    let (dist, _guard) = release();
    let served = Served::new(&dist);
    let env = TestEnv::new();
    let install = env
        .program("sh", [root().join("install.sh")])
        .env("STICKY_RELEASE_URL", &served.url)
        .env_remove("STICKY_INSTALL_DIR")
        .run();
    install.assert_success();
    let installed = env.home.join(".local/bin/sticky");
    assert!(
        install.stdout.contains("installed sticky 0.1.0") && install.stdout.contains(this_target()),
        "{}",
        install.describe()
    );
    // ~/.local/bin is not on the test's PATH: the script says how to put it there.
    assert!(
        install.stdout.contains(&format!(
            "export PATH=\"{}:$PATH\"",
            installed.parent().unwrap().display()
        )),
        "{}",
        install.describe()
    );
    let asset = format!("sticky-{}.tar.gz", this_target());
    assert_eq!(served.asked(), [format!("{asset}.sha256"), asset]);

    let turn = env
        .program(&installed, ["a turn of the installed sticky"])
        .run();
    turn.assert_success();
    assert_eq!(
        turn.answer().prompt,
        "a turn of the installed sticky",
        "{}",
        turn.describe()
    );
    let status = env.program(&installed, ["status"]).run();
    status.assert_success();
    assert!(
        status.stdout.contains("a turn of the installed sticky"),
        "{}",
        status.describe()
    );
}

#[test]
fn install_sh_refuses_a_tampered_asset_and_installs_nothing() {
    let (dist, _guard) = release();
    let tampered = tempfile::tempdir().expect("a directory for the tampered release");
    for name in names(&dist) {
        std::fs::copy(dist.join(&name), tampered.path().join(&name)).expect("copy the release");
    }
    // The archive replaced by another, well-formed one whose `sticky` is someone else's
    // program; the SHA-256 file as the release made it.
    let other = tampered.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("sticky"), "#!/bin/sh\necho sticky 9.9.9\n").unwrap();
    std::fs::set_permissions(
        other.join("sticky"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let asset = tampered
        .path()
        .join(format!("sticky-{}.tar.gz", this_target()));
    let packed = std::process::Command::new("tar")
        .arg("-czf")
        .arg(&asset)
        .arg("-C")
        .arg(&other)
        .arg("sticky")
        .status()
        .expect("run tar");
    assert!(packed.success(), "tar failed");
    let served = Served::new(tampered.path());

    let env = TestEnv::new();
    let dir = env.scratch.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    // An earlier install stays as it was.
    std::fs::write(dir.join("sticky"), "#!/bin/sh\necho the earlier sticky\n").unwrap();
    let install = env
        .program("sh", [root().join("install.sh")])
        .env("STICKY_RELEASE_URL", &served.url)
        .env("STICKY_INSTALL_DIR", &dir)
        .run();
    assert_ne!(install.code, Some(0), "{}", install.describe());
    install
        .assert_stderr_contains("but the release says")
        .assert_stderr_contains("nothing was installed");
    assert_eq!(names(&dir), BTreeSet::from(["sticky".to_owned()]));
    assert_eq!(
        std::fs::read_to_string(dir.join("sticky")).unwrap(),
        "#!/bin/sh\necho the earlier sticky\n"
    );
}

#[test]
fn install_sh_refuses_an_unknown_platform_before_downloading() {
    let (dist, _guard) = release();
    let served = Served::new(&dist);
    let mut env = TestEnv::new();
    // A `uname` first on PATH that says FreeBSD on amd64, for which there is no release.
    let stub = env.scratch.join("stub");
    std::fs::create_dir_all(&stub).unwrap();
    std::fs::write(
        stub.join("uname"),
        "#!/bin/sh\ncase \"$1\" in -s) echo FreeBSD ;; -m) echo amd64 ;; *) echo FreeBSD ;; esac\n",
    )
    .unwrap();
    std::fs::set_permissions(
        stub.join("uname"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        stub.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    env.set_var("PATH", path);
    let dir = env.scratch.join("bin");
    let install = env
        .program("sh", [root().join("install.sh")])
        .env("STICKY_RELEASE_URL", &served.url)
        .env("STICKY_INSTALL_DIR", &dir)
        .run();
    assert_ne!(install.code, Some(0), "{}", install.describe());
    install
        .assert_stderr_contains("no release binary for FreeBSD amd64")
        .assert_stderr_contains("cargo install");
    assert!(served.asked().is_empty(), "downloaded {:?}", served.asked());
    assert!(!dir.exists(), "{} was created", dir.display());
}

#[test]
fn the_release_install_sh_the_readme_and_binstall_name_the_same_assets() {
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
    let package = &manifest["package"];
    let repository = package["repository"]
        .as_str()
        .expect("Cargo.toml names the repository");
    let install = std::fs::read_to_string(root().join("install.sh")).unwrap();
    assert!(
        install.contains(&format!("\nrepository={repository}\n")),
        "install.sh downloads from another repository than Cargo.toml's {repository}"
    );
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let url = format!("{repository}/releases/latest/download/install.sh");
    assert!(
        readme.contains(&url),
        "the README does not install from {url}"
    );

    // What `.ci/release package` makes for every target release.yml builds.
    let workflow = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let targets = [
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ];
    let scratch = tempfile::tempdir().unwrap();
    let dist = scratch.path().join("dist");
    let mut command = std::process::Command::new("bash");
    command
        .arg(root().join(".ci/release"))
        .arg("package")
        .arg(&dist);
    for target in targets {
        assert!(
            workflow.contains(target),
            "release.yml does not build {target}"
        );
        command.arg(format!("{target}={}", env!("CARGO_BIN_EXE_sticky")));
    }
    let status = command
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let mut expected: BTreeSet<String> = targets
        .iter()
        .flat_map(|t| {
            [
                format!("sticky-{t}.tar.gz"),
                format!("sticky-{t}.tar.gz.sha256"),
            ]
        })
        .collect();
    expected.insert("install.sh".to_owned());
    assert_eq!(names(&dist), expected);

    // cargo binstall's URL for each target (and a glibc Linux one, given the musl asset) is
    // one of those assets, on the tag release.yml runs for.
    let binstall = &package["metadata"]["binstall"];
    let version = package["version"].as_str().unwrap();
    let url_for = |target: &str| {
        let template = binstall["overrides"]
            .get(target)
            .and_then(|o| o.get("pkg-url"))
            .unwrap_or(&binstall["pkg-url"])
            .as_str()
            .unwrap();
        template
            .replace("{ repo }", repository)
            .replace("{ version }", version)
            .replace("{ name }", "sticky")
            .replace("{ target }", target)
    };
    let download = format!("{repository}/releases/download/v{version}/");
    for (target, asset) in targets.iter().map(|t| (*t, *t)).chain([
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-musl"),
        ("aarch64-unknown-linux-gnu", "aarch64-unknown-linux-musl"),
    ]) {
        assert_eq!(url_for(target), format!("{download}sticky-{asset}.tar.gz"));
    }
    assert_eq!(binstall["bin-dir"].as_str(), Some("{ bin }{ binary-ext }"));
    assert!(
        workflow.contains("tags:") && workflow.contains("'v*'"),
        "release.yml runs on v* tags"
    );
}
