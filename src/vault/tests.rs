use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::*;
use crate::agent::reserved::Reserved;
use crate::agent::{Adapter, Diagnosis, Event, Profile, Prompts, SessionFile, Target};

/// A test agent. [`FILES`] keeps session `id` as `sessions/<id>.jsonl` (appended to),
/// `sessions/<id>.meta` (rewritten) and `registry.json` (shared), under `<home>/.agent`;
/// [`ROWS`] keeps it as rows of `<home>/.db/agent.db` (as opencode does).
struct Agent {
    rows: bool,
}

const FILES: Agent = Agent { rows: false };
const ROWS: Agent = Agent { rows: true };

/// The turn a test's copy is made after.
const HELD: Held = Held {
    id: 1,
    started_at: Some(1_000),
};

impl Adapter for Agent {
    fn profile(&self) -> Profile<'_> {
        Profile {
            name: if self.rows { "rows" } else { "agent" },
            reserved: Reserved::NONE,
            command_line: None,
            prompts: Prompts::FittingArguments,
            exit_line: None,
            homes: &[],
        }
    }
    fn parse_line(&self, _line: &str) -> Vec<Event> {
        Vec::new()
    }
    fn diagnose(&self, _target: &Target<'_>, _output: &str) -> Option<Diagnosis> {
        None
    }
    fn transcript(&self, home: &Path, _directory: &Path, id: &str) -> Option<PathBuf> {
        (!self.rows).then(|| home.join(".agent/sessions").join(format!("{id}.jsonl")))
    }
    fn agent_home(&self, home: &Path) -> Option<PathBuf> {
        Some(home.join(if self.rows { ".db" } else { ".agent" }))
    }
    fn session_files(&self, home: &Path, directory: &Path, id: &str) -> Vec<SessionFile> {
        let (Some(root), Some(transcript)) =
            (self.agent_home(home), self.transcript(home, directory, id))
        else {
            return Vec::new();
        };
        [
            (transcript, Keeping::Append),
            (root.join(format!("sessions/{id}.meta")), Keeping::Rewritten),
            (root.join("registry.json"), Keeping::Shared),
        ]
        .into_iter()
        .filter_map(|(path, keeping)| SessionFile::under(&root, path, keeping))
        .collect()
    }
    fn restorable(&self, relative: &Path, id: &str) -> bool {
        relative == Path::new("registry.json") || relative.to_string_lossy().contains(id)
    }
    fn session_rows(&self, home: &Path, _id: &str) -> Option<crate::agent::SessionRows> {
        self.rows.then(|| crate::agent::SessionRows {
            database: home.join(".db/agent.db"),
            relative: PathBuf::from("agent.db"),
            table: "session",
            referred: &[("project", "id", "project_id")],
            migrations: &["migration"],
        })
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
            .copy(&FILES, &self.home, Path::new("/p"), "s1", HELD)
            .unwrap()
    }
    /// Writes `bytes` over `relative`, copies the session into the vault and returns how many
    /// bytes that wrote, once the vault's copy is checked to hold `bytes`.
    fn rewrite(&self, relative: &str, bytes: &[u8]) -> u64 {
        std::fs::write(self.path(relative), bytes).unwrap();
        let written = self.copy().written;
        assert_eq!(self.copy_of(relative), bytes, "{relative}");
        written
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
    // 20 MiB: the size the issue names; a turn must not cost it again.
    let big = vec![b'x'; 20 << 20];
    s.append("sessions/s1.jsonl", &big);
    assert_eq!(s.copy().written, 20 << 20);
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
    let longer = b"LINE ONE\nline two\nthree\n";
    assert_eq!(s.rewrite("sessions/s1.jsonl", longer), 24);
    // Cut shorter.
    assert_eq!(s.rewrite("sessions/s1.jsonl", b"short\n"), 6);
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
    assert_eq!(s.rewrite("sessions/s1.meta", b"{\"title\":\"one\"}"), 0);
    assert_eq!(s.rewrite("sessions/s1.meta", b"{\"title\":\"two\"}"), 15);
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
    assert_eq!(
        s.vault
            .restore(&FILES, &s.home, "s1", Path::new("/p"))
            .unwrap(),
        None
    );
    s.append("sessions/s1.jsonl", b"turn one\n");
    std::fs::write(s.path("sessions/s1.meta"), b"meta").unwrap();
    std::fs::write(s.path("registry.json"), b"{\"old\":1}").unwrap();
    s.copy();
    std::fs::remove_dir_all(s.path("sessions")).unwrap();
    std::fs::write(s.path("registry.json"), b"{\"newer\":1}").unwrap();
    // The session's own files are gone, their copies stay; the registry is copied anew.
    assert_eq!(s.copy().written, 11);
    assert_eq!(s.copy_of("sessions/s1.jsonl"), b"turn one\n");
    let restored = s
        .vault
        .restore(&FILES, &s.home, "s1", Path::new("/p"))
        .unwrap()
        .unwrap();
    assert_eq!(
        restored,
        Restored {
            files: 2,
            bytes: 9 + 4,
            adopted_at: None,
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
    let again = s
        .vault
        .restore(&FILES, &s.home, "s1", Path::new("/p"))
        .unwrap()
        .unwrap();
    assert_eq!(again.files, 0);
}

#[test]
fn a_copy_adopted_by_trust_is_named_by_its_restore_until_the_next_copy() {
    let s = setup();
    s.append("sessions/s1.jsonl", b"made elsewhere\n");
    s.copy();
    std::fs::remove_dir_all(s.path("sessions")).unwrap();
    // Only what `foreign` picks is marked.
    assert!(s.vault.adopt(1_000, |_| false).unwrap().is_empty());
    let marked = s.vault.adopt(2_000, |m| m.session == "s1").unwrap();
    assert_eq!(marked.len(), 1);
    assert_eq!(marked[0].agent, "agent");
    let restored = s
        .vault
        .restore(&FILES, &s.home, "s1", Path::new("/p"))
        .unwrap()
        .unwrap();
    assert_eq!((restored.files, restored.adopted_at), (1, Some(2_000)));
    // The agent here goes on with it, and the next copy is its own: no longer adopted.
    s.append("sessions/s1.jsonl", b"turn here\n");
    s.copy();
    let manifest = s.vault.manifest("agent", "s1").unwrap().unwrap();
    assert_eq!(manifest.adopted_at, None);
    std::fs::remove_dir_all(s.path("sessions")).unwrap();
    let restored = s
        .vault
        .restore(&FILES, &s.home, "s1", Path::new("/p"))
        .unwrap()
        .unwrap();
    assert_eq!(restored.adopted_at, None);
}

#[test]
fn every_copy_records_the_home_it_was_made_in_and_an_older_manifest_none() {
    let s = setup();
    s.append("sessions/s1.jsonl", b"turn one\n");
    s.copy();
    let manifest = s.vault.manifest("agent", "s1").unwrap().unwrap();
    assert!(manifest.made_in(&s.home));
    assert!(!manifest.made_in(Path::new("/another/home")));
    // The same HOME written another way, through a link, is the same HOME.
    let link = s.home.with_extension("link");
    std::os::unix::fs::symlink(&s.home, &link).unwrap();
    assert!(manifest.made_in(&link));
    // Adopted with a state, a copy still says where it was made.
    s.vault.adopt(1_000, |_| true).unwrap();
    assert!(
        s.vault
            .manifest("agent", "s1")
            .unwrap()
            .unwrap()
            .made_in(&s.home)
    );
    // An older sticky's manifest has no `home`, and says it was made nowhere.
    let mut older = serde_json::to_value(&manifest).unwrap();
    older.as_object_mut().unwrap().remove("home").unwrap();
    let older: Manifest = serde_json::from_value(older).unwrap();
    assert!(!older.made_in(&s.home));
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

#[test]
fn rows_are_kept_and_put_back_into_the_database_or_a_new_one() {
    let s = setup();
    let db = s.home.join(".db/agent.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE migration (id TEXT PRIMARY KEY);
         INSERT INTO migration VALUES ('m1'), ('m2');
         CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT);
         CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT REFERENCES project (id));
         CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT REFERENCES session (id),
                               data TEXT, raw BLOB);
         CREATE INDEX message_by_session ON message (session_id);
         INSERT INTO project VALUES ('p1', '/p');
         INSERT INTO session VALUES ('s1', 'p1'), ('s2', 'p1');
         INSERT INTO message VALUES ('m1', 's1', '{\"text\":\"one\"}', x'00ff'),
                                    ('m2', 's2', 'other session', NULL);",
    )
    .unwrap();
    drop(conn);
    let copy = |s: &Setup| {
        s.vault
            .copy(&ROWS, &s.home, Path::new("/p"), "s1", HELD)
            .unwrap()
    };
    assert!(copy(&s).written > 0);
    assert_eq!(copy(&s).written, 0, "unchanged rows are not written again");
    let rows = s
        .vault
        .rows("rows", "s1")
        .unwrap()
        .expect("the rows are kept");
    let text = String::from_utf8(rows).unwrap();
    assert!(
        text.contains("one") && !text.contains("other session"),
        "{text}"
    );

    // The session's rows deleted from the database: put back, the rest left alone.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "DELETE FROM message WHERE session_id = 's1'; DELETE FROM session WHERE id = 's1';",
    )
    .unwrap();
    drop(conn);
    let restored = s
        .vault
        .restore(&ROWS, &s.home, "s1", Path::new("/p"))
        .unwrap()
        .unwrap();
    assert_eq!(restored.files, 1);
    let messages = |db: &Path| -> Vec<(String, Option<Vec<u8>>)> {
        let conn = rusqlite::Connection::open(db).unwrap();
        let mut statement = conn
            .prepare("SELECT id, raw FROM message ORDER BY id")
            .unwrap();
        statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(
        messages(&db),
        [
            ("m1".to_owned(), Some(vec![0, 255])),
            ("m2".to_owned(), None)
        ]
    );
    let again = s
        .vault
        .restore(&ROWS, &s.home, "s1", Path::new("/p"))
        .unwrap()
        .unwrap();
    assert_eq!(again.files, 0, "nothing missing, nothing put back");

    // The whole database gone: a new one with its schema, migrations and the session's rows.
    std::fs::remove_dir_all(s.home.join(".db")).unwrap();
    let restored = s
        .vault
        .restore(&ROWS, &s.home, "s1", Path::new("/p"))
        .unwrap()
        .unwrap();
    assert_eq!(restored.files, 1);
    assert_eq!(messages(&db), [("m1".to_owned(), Some(vec![0, 255]))]);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let migrations: i64 = conn
        .query_row("SELECT count(*) FROM migration", [], |row| row.get(0))
        .unwrap();
    assert_eq!(migrations, 2);
    let index: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'message_by_session'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(index, 1, "the schema's indexes too");
    let mode = std::fs::metadata(&db).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn a_planted_file_in_the_vault_is_never_restored() {
    let s = setup();
    s.append("sessions/s1.jsonl", b"turn one\n");
    s.copy();
    // A vault crafted in a repository names the agent's settings as the session's file.
    let session = s.vault.session_dir("agent", "s1");
    std::fs::write(session.join("files/settings.json"), b"{\"hooks\":1}").unwrap();
    let path = session.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    manifest["files"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "relative": "settings.json", "keeping": "rewritten", "len": 11,
            "mtime_ns": 0, "inode": 0, "hash": 0
        }));
    std::fs::write(&path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    std::fs::remove_file(s.path("sessions/s1.jsonl")).unwrap();

    let error = s
        .vault
        .restore(&FILES, &s.home, "s1", Path::new("/p"))
        .unwrap_err();
    assert!(format!("{error:#}").contains("settings.json"), "{error:#}");
    assert!(!s.path("settings.json").exists());
    assert!(
        !s.path("sessions/s1.jsonl").exists(),
        "nothing was restored"
    );
}

/// The manifest's SHA-256 of a copy, and the copy's own.
fn sums(s: &Setup, relative: &str) -> (Option<String>, String) {
    use sha2::{Digest, Sha256};
    let manifest = s.vault.manifest("agent", "s1").unwrap().unwrap();
    let entry = manifest
        .files
        .iter()
        .find(|entry| entry.relative == Path::new(relative))
        .unwrap();
    let own = crate::sql_json::hex(&Sha256::digest(s.copy_of(relative)));
    (entry.sha256.clone(), own)
}

#[test]
fn every_copy_records_the_sha256_of_its_bytes_carried_on_across_appends() {
    let s = setup();
    s.append("sessions/s1.jsonl", &[b'x'; 1000]);
    std::fs::write(s.path("sessions/s1.meta"), b"{\"title\":\"one\"}").unwrap();
    s.copy();
    for (relative, _) in [("sessions/s1.jsonl", 0), ("sessions/s1.meta", 0)] {
        let (recorded, own) = sums(&s, relative);
        assert_eq!(recorded, Some(own), "{relative}");
    }
    // Appends of every length across block boundaries: each copy writes only what was added,
    // and the sum carried on from the midstate is the whole copy's.
    for (turn, len) in [1, 63, 64, 65, 200].into_iter().enumerate() {
        s.append(
            "sessions/s1.jsonl",
            &vec![b'0' + u8::try_from(turn).unwrap(); len],
        );
        assert_eq!(s.copy().written, len as u64);
        let (recorded, own) = sums(&s, "sessions/s1.jsonl");
        assert_eq!(recorded, Some(own), "after appending {len} bytes");
    }
}

#[test]
fn a_copy_changed_in_its_last_block_is_made_whole_again_not_appended_to() {
    let s = setup();
    s.append("sessions/s1.jsonl", &[b'a'; 100]);
    s.copy();
    let copy = s
        .vault
        .session_dir("agent", "s1")
        .join("files/sessions/s1.jsonl");
    // Changed within the part after the last whole block, which the midstate does not cover.
    let mut changed = std::fs::read(&copy).unwrap();
    changed[99] = b'!';
    std::fs::write(&copy, &changed).unwrap();
    s.append("sessions/s1.jsonl", b"more\n");
    assert_eq!(s.copy().written, 105, "copied whole from the agent's file");
    let (recorded, own) = sums(&s, "sessions/s1.jsonl");
    assert_eq!(recorded, Some(own));
    assert_eq!(s.copy_of("sessions/s1.jsonl")[99], b'a');
}

#[test]
fn a_restore_with_one_changed_copy_puts_back_none_and_leaves_no_temporary_file() {
    let s = setup();
    s.append("sessions/s1.jsonl", b"turn one\n");
    std::fs::write(s.path("sessions/s1.meta"), b"meta").unwrap();
    s.copy();
    std::fs::remove_dir_all(s.path("sessions")).unwrap();
    // The second file's copy swapped for other bytes of its size.
    let copy = s
        .vault
        .session_dir("agent", "s1")
        .join("files/sessions/s1.meta");
    std::fs::write(&copy, b"ATEM").unwrap();
    let error = s
        .vault
        .restore(&FILES, &s.home, "s1", Path::new("/p"))
        .unwrap_err();
    let message = format!("{error:#}");
    assert!(
        message
            .contains("the vault's copy of sessions/s1.meta does not match the copy sticky made")
            && message.contains("4 bytes as recorded, but another SHA-256"),
        "{message}"
    );
    let left: Vec<_> = std::fs::read_dir(s.path("sessions"))
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name())
        .collect();
    assert!(left.is_empty(), "nothing put back, nothing left: {left:?}");
    // Export reads the vault's copies through the same proof.
    assert!(s.vault.files("agent", "s1").is_err());
}

#[test]
fn a_manifest_larger_than_sticky_writes_is_refused_unread() {
    let s = setup();
    s.append("sessions/s1.jsonl", b"a\n");
    s.copy();
    let manifest = s.vault.session_dir("agent", "s1").join("manifest.json");
    let giant = std::fs::File::create(&manifest).unwrap();
    giant.set_len(MAX_MANIFEST + 2).unwrap();
    let error = s.vault.manifest("agent", "s1").unwrap_err();
    assert!(
        format!("{error:#}").contains("more than sticky writes"),
        "{error:#}"
    );
    // A copy starts the manifest over.
    s.copy();
    assert!(s.vault.manifest("agent", "s1").unwrap().is_some());
}

/// A finished turn of row id `id` that ran from `started_at` to `ended_at`.
fn turn_row(id: i64, started_at: i64, ended_at: i64) -> crate::store::TurnRow {
    crate::store::TurnRow {
        id,
        session_id: 1,
        prompt: Some(format!("turn {id}")),
        mode: crate::store::Mode::Headless,
        pid: 1,
        host: "h".into(),
        started_at,
        ended_at: Some(ended_at),
        status: crate::store::TurnStatus::Ok,
        exit_code: Some(0),
        signal: None,
        duration_ms: None,
        ledger: crate::store::TurnLedger::default(),
        answer_bytes: None,
        purpose: None,
    }
}

/// Review 19, M4: a copy is judged by the start of the last turn it holds, which every
/// thread's row of that turn keeps: another thread's rows of the same turns (new row ids, as
/// `import --as` writes them) are held, a turn that started later is not.
#[test]
fn a_copy_is_judged_by_when_its_last_turn_started_not_by_row_ids() {
    let s = setup();
    s.append("sessions/s1.jsonl", b"a\n");
    s.copy();
    let manifest = s.vault.manifest("agent", "s1").unwrap().unwrap();
    assert_eq!(
        (manifest.turn, manifest.turn_started_at),
        (Some(1), Some(1_000))
    );
    let imported = [turn_row(7, 500, 600), turn_row(8, 1_000, 1_100)];
    assert!(manifest.lacks(imported.iter()).is_empty());
    let later = [turn_row(1, 1_000, 1_100), turn_row(2, 2_000, 2_100)];
    let lacking: Vec<i64> = manifest
        .lacks(later.iter())
        .iter()
        .map(|row| row.id)
        .collect();
    assert_eq!(lacking, [2]);
}

/// A manifest of an older sticky records its last turn by row id only: a turn after it that
/// also ended after the copy is lacking, another thread's row of a turn that ended before the
/// copy (a higher row id) is held.
#[test]
fn an_older_manifest_is_judged_by_row_id_and_the_copys_time() {
    let s = setup();
    s.append("sessions/s1.jsonl", b"a\n");
    s.copy();
    let mut manifest = s.vault.manifest("agent", "s1").unwrap().unwrap();
    manifest.turn_started_at = None;
    let copied = manifest.copied_at;
    let rows = [
        turn_row(7, copied - 200, copied - 100),
        turn_row(8, copied + 100, copied + 200),
        turn_row(1, copied + 100, copied + 200),
    ];
    let lacking: Vec<i64> = manifest
        .lacks(rows.iter())
        .iter()
        .map(|row| row.id)
        .collect();
    assert_eq!(lacking, [8]);
}
