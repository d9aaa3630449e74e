use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::*;
use crate::agent::{Adapter, Diagnosis, Event, SessionFile, Target};

/// An agent keeping session `id` as `sessions/<id>.jsonl` (appended to), `sessions/<id>.meta`
/// (rewritten) and `registry.json` (shared), under `<home>/.agent`.
struct Agent;

impl Adapter for Agent {
    fn name(&self) -> &'static str {
        "agent"
    }
    fn parse_line(&self, _line: &str) -> Vec<Event> {
        Vec::new()
    }
    fn diagnose(&self, _target: &Target<'_>, _output: &str) -> Option<Diagnosis> {
        None
    }
    fn transcript(&self, home: &Path, _directory: &Path, id: &str) -> Option<PathBuf> {
        Some(home.join(".agent/sessions").join(format!("{id}.jsonl")))
    }
    fn agent_home(&self, home: &Path) -> Option<PathBuf> {
        Some(home.join(".agent"))
    }
    fn session_files(&self, home: &Path, directory: &Path, id: &str) -> Vec<SessionFile> {
        let root = home.join(".agent");
        let transcript = self.transcript(home, directory, id).unwrap();
        [
            (transcript, Keeping::Append),
            (root.join(format!("sessions/{id}.meta")), Keeping::Rewritten),
            (root.join("registry.json"), Keeping::Shared),
        ]
        .into_iter()
        .filter_map(|(path, keeping)| SessionFile::under(&root, path, keeping))
        .collect()
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    home: PathBuf,
    vault: Vault,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".agent/sessions")).unwrap();
    let vault = Vault::new(dir.path().join("sticky.db.vault"));
    Setup {
        _dir: dir,
        home,
        vault,
    }
}

impl Setup {
    fn path(&self, relative: &str) -> PathBuf {
        self.home.join(".agent").join(relative)
    }
    fn append(&self, relative: &str, bytes: &[u8]) {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path(relative))
            .unwrap();
        file.write_all(bytes).unwrap();
    }
    fn copy(&self) -> Copied {
        self.vault
            .copy(&Agent, &self.home, Path::new("/p"), "s1")
            .unwrap()
    }
    fn copy_of(&self, relative: &str) -> Vec<u8> {
        std::fs::read(
            self.vault
                .session_dir("agent", "s1")
                .join("files")
                .join(relative),
        )
        .unwrap()
    }
}

#[test]
fn an_appended_transcript_costs_only_its_new_bytes() {
    let s = setup();
    let big = vec![b'x'; 1 << 20];
    s.append("sessions/s1.jsonl", &big);
    assert_eq!(s.copy().written, 1 << 20);
    s.append("sessions/s1.jsonl", b"{\"turn\":2}\n");
    assert_eq!(s.copy().written, 11, "only the added line is written");
    assert_eq!(s.copy().written, 0, "nothing changed, nothing written");
    let mut want = big;
    want.extend_from_slice(b"{\"turn\":2}\n");
    assert_eq!(s.copy_of("sessions/s1.jsonl"), want);
}

#[test]
fn a_transcript_rewritten_or_cut_is_copied_whole() {
    let s = setup();
    s.append("sessions/s1.jsonl", b"line one\nline two\n");
    s.copy();
    // Rewritten in place, longer, with another beginning: the sample hash tells.
    std::fs::write(s.path("sessions/s1.jsonl"), b"LINE ONE\nline two\nthree\n").unwrap();
    assert_eq!(s.copy().written, 24);
    assert_eq!(
        s.copy_of("sessions/s1.jsonl"),
        b"LINE ONE\nline two\nthree\n"
    );
    // Cut shorter.
    std::fs::write(s.path("sessions/s1.jsonl"), b"short\n").unwrap();
    assert_eq!(s.copy().written, 6);
    assert_eq!(s.copy_of("sessions/s1.jsonl"), b"short\n");
}

#[test]
fn a_rewritten_file_is_copied_only_when_it_changed() {
    let s = setup();
    s.append("sessions/s1.jsonl", b"a\n");
    std::fs::write(s.path("sessions/s1.meta"), b"{\"title\":\"one\"}").unwrap();
    std::fs::write(s.path("registry.json"), b"{}").unwrap();
    assert_eq!(s.copy().written, 2 + 15 + 2);
    assert_eq!(s.copy().written, 0);
    // The same bytes written again (a new mtime): hashed, not copied.
    std::fs::write(s.path("sessions/s1.meta"), b"{\"title\":\"one\"}").unwrap();
    assert_eq!(s.copy().written, 0);
    std::fs::write(s.path("sessions/s1.meta"), b"{\"title\":\"two\"}").unwrap();
    assert_eq!(s.copy().written, 15);
    assert_eq!(s.copy_of("sessions/s1.meta"), b"{\"title\":\"two\"}");
}

#[test]
fn the_vault_is_private_to_the_user() {
    let s = setup();
    s.append("sessions/s1.jsonl", b"a\n");
    s.copy();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let session = s.vault.session_dir("agent", "s1");
    assert_eq!(mode(s.vault.dir()), 0o700);
    assert_eq!(mode(&session), 0o700);
    assert_eq!(mode(&session.join("files/sessions")), 0o700);
    assert_eq!(mode(&session.join("manifest.json")), 0o600);
    assert_eq!(mode(&session.join("files/sessions/s1.jsonl")), 0o600);
}

#[test]
fn restore_puts_back_what_is_missing_and_nothing_else() {
    let s = setup();
    assert_eq!(s.vault.restore(&Agent, &s.home, "s1").unwrap(), None);
    s.append("sessions/s1.jsonl", b"turn one\n");
    std::fs::write(s.path("sessions/s1.meta"), b"meta").unwrap();
    std::fs::write(s.path("registry.json"), b"{\"old\":1}").unwrap();
    s.copy();
    std::fs::remove_dir_all(s.path("sessions")).unwrap();
    std::fs::write(s.path("registry.json"), b"{\"newer\":1}").unwrap();
    // The session's own files are gone, their copies stay; the registry is copied anew.
    assert_eq!(s.copy().written, 11);
    assert_eq!(s.copy_of("sessions/s1.jsonl"), b"turn one\n");
    let restored = s.vault.restore(&Agent, &s.home, "s1").unwrap().unwrap();
    assert_eq!(
        restored,
        Restored {
            files: 2,
            bytes: 9 + 4
        }
    );
    assert_eq!(
        std::fs::read(s.path("sessions/s1.jsonl")).unwrap(),
        b"turn one\n"
    );
    let mode = std::fs::metadata(s.path("sessions/s1.jsonl"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // The shared registry the agent rewrote since is its own.
    assert_eq!(
        std::fs::read(s.path("registry.json")).unwrap(),
        b"{\"newer\":1}"
    );
    // Nothing missing now: nothing put back.
    let again = s.vault.restore(&Agent, &s.home, "s1").unwrap().unwrap();
    assert_eq!(again.files, 0);
}

#[test]
fn the_read_side_lists_copies_size_newest_and_deletes() {
    let s = setup();
    assert_eq!(s.vault.size().unwrap(), 0);
    assert_eq!(s.vault.newest(), None);
    s.append("sessions/s1.jsonl", b"12345\n");
    s.copy();
    let files = s.vault.files("agent", "s1").unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].relative, Path::new("sessions/s1.jsonl"));
    assert_eq!(files[0].keeping, Keeping::Append);
    assert_eq!(files[0].len, 6);
    let manifest = s.vault.manifest("agent", "s1").unwrap().unwrap();
    assert_eq!(manifest.directory, Path::new("/p"));
    assert!(s.vault.size().unwrap() >= 6);
    let newest = s.vault.newest().unwrap();
    assert_eq!(
        (newest.agent.as_str(), newest.session.as_str()),
        ("agent", "s1")
    );
    assert!(s.vault.delete("agent", "s1").unwrap());
    assert!(!s.vault.delete("agent", "s1").unwrap());
    assert_eq!(s.vault.files("agent", "s1").unwrap(), Vec::new());
}

#[test]
fn odd_session_ids_get_plain_file_names() {
    assert_eq!(key("ses_abc-1.2"), "ses_abc-1.2");
    assert_eq!(key("../x"), "~2e2e2f78");
    assert_eq!(key(".hidden"), "~2e68696464656e");
    assert_eq!(key(""), "~");
    assert!(ensure_plain(Path::new("a/b")).is_ok());
    assert!(ensure_plain(Path::new("../b")).is_err());
    assert!(ensure_plain(Path::new("/etc/passwd")).is_err());
}
