//! Bundles written and read back, and every way a bad one is refused before anything is staged.

use std::io::Write as _;
use std::path::Path;

use super::*;

fn manifest() -> Manifest {
    Manifest {
        format: FORMAT,
        sticky: "0.1.0".into(),
        agent: Agent {
            name: "claude".into(),
            version: None,
        },
        project: "/a/p".into(),
        thread: Thread {
            name: "main".into(),
            created_at: 1,
        },
        sessions: vec![Session {
            id: 1,
            agent: "claude".into(),
            model: None,
            agent_session_id: Some("id".into()),
            directory: "/a/p".into(),
            created_at: 1,
            confirmed_at: Some(1),
            rotated_from: None,
            rotation_reason: None,
            ended_at: None,
            carried: None,
            carried_bytes: None,
        }],
        turns: Vec::new(),
        files: Vec::new(),
    }
}

fn bundle(files: &[(&str, &[u8])]) -> Vec<u8> {
    let sources: Vec<_> = files
        .iter()
        .map(|(path, bytes)| ((*path).to_owned(), Source::Bytes(bytes.to_vec()), false))
        .collect();
    write(Vec::new(), manifest(), &sources, |_| {}).unwrap().0
}

fn read_all(bytes: &[u8], limits: Limits) -> Result<(Staged, tempfile::TempDir), String> {
    let dir = tempfile::tempdir().unwrap();
    let staged = read(bytes, limits, &mut |m| {
        Ok((vec![Vec::new(); m.files.len()], dir.path().to_owned()))
    });
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    match staged {
        Ok(staged) => Ok((staged, dir)),
        Err(error) => {
            assert!(left.is_empty(), "a refused bundle leaves no staged file");
            Err(format!("{error:#}"))
        }
    }
}

/// A bundle assembled by hand: `manifest` first, then `entries` (path, kind, bytes).
fn crafted(manifest: &Manifest, entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
    let mut archive = tar::Builder::new(Vec::new());
    let text = serde_json::to_vec(manifest).unwrap();
    let mut entries_all = vec![(MANIFEST, tar::EntryType::Regular, text.as_slice())];
    entries_all.extend_from_slice(entries);
    for (path, kind, bytes) in entries_all {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_size(if kind == tar::EntryType::Regular {
            bytes.len() as u64
        } else {
            0
        });
        header.set_mode(0o600);
        if kind.is_symlink() {
            header.set_link_name("/etc/passwd").unwrap();
        }
        // Raw name bytes: `set_path` refuses `..` and absolute paths, which a hostile bundle has.
        let name = &mut header.as_gnu_mut().unwrap().name;
        name.fill(0);
        name[..path.len()].copy_from_slice(path.as_bytes());
        header.set_cksum();
        archive.append(&header, bytes).unwrap();
    }
    zstd::encode_all(archive.into_inner().unwrap().as_slice(), 3).unwrap()
}

fn with_file(path: &str, bytes: &[u8]) -> Manifest {
    let mut manifest = manifest();
    manifest.files = vec![File {
        path: path.into(),
        size: bytes.len() as u64,
        sha256: crate::agent::relocation::hex(&<sha2::Sha256 as sha2::Digest>::digest(bytes)),
        rows: false,
    }];
    manifest
}

#[test]
fn a_bundle_reads_back_as_written() {
    let bytes = bundle(&[
        ("projects/-a-p/id.jsonl", b"{\"cwd\":\"/a/p\"}\n"),
        ("x/y", b""),
    ]);
    let (staged, _dir) = read_all(&bytes, Limits::default()).unwrap();
    assert_eq!(staged.manifest.files.len(), 2);
    assert_eq!(staged.manifest.files[0].size, 15);
    assert_eq!(
        std::fs::read(&staged.files[0]).unwrap(),
        b"{\"cwd\":\"/a/p\"}\n"
    );
    assert_eq!(std::fs::read(&staged.files[1]).unwrap(), b"");
}

#[test]
fn bad_bundles_are_refused_with_what_is_wrong() {
    let good = bundle(&[("projects/-a-p/id.jsonl", &b"{\"x\":1}\n".repeat(5000))]);
    let body = b"{}\n";
    let mut newer = with_file("a", body);
    newer.format = FORMAT + 1;
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated", good[..good.len() / 2].to_vec(), "truncated"),
        (
            "cut at the end",
            good[..good.len() - 3].to_vec(),
            "truncated or damaged",
        ),
        ("not zstd", b"hello".to_vec(), "truncated or damaged"),
        ("empty", Vec::new(), "truncated or damaged"),
        (
            "newer format",
            crafted(&newer, &[("files/a", tar::EntryType::Regular, body)]),
            "upgrade sticky",
        ),
        (
            "dot-dot",
            crafted(
                &with_file("../a", body),
                &[("files/../a", tar::EntryType::Regular, body)],
            ),
            "leaves its directory",
        ),
        (
            "absolute",
            crafted(
                &with_file("/etc/a", body),
                &[("files//etc/a", tar::EntryType::Regular, body)],
            ),
            "absolute",
        ),
        (
            "symlink",
            crafted(
                &with_file("a", body),
                &[("files/a", tar::EntryType::Symlink, b"")],
            ),
            "a link",
        ),
        (
            "checksum",
            crafted(
                &with_file("a", body),
                &[("files/a", tar::EntryType::Regular, b"{]\n")],
            ),
            "checksum",
        ),
        (
            "unlisted",
            crafted(
                &with_file("a", body),
                &[
                    ("files/a", tar::EntryType::Regular, body),
                    ("files/b", tar::EntryType::Regular, body),
                ],
            ),
            "does not list",
        ),
        (
            "settings",
            crafted(
                &with_file("settings.json", body),
                &[("files/settings.json", tar::EntryType::Regular, body)],
            ),
            "settings file",
        ),
        (
            "missing",
            crafted(&with_file("a", body), &[]),
            "ends before a",
        ),
    ];
    for (what, bytes, says) in cases {
        let error = read_all(&bytes, Limits::default()).unwrap_err();
        assert!(error.contains(says), "{what}: {error}");
    }
    let small = Limits {
        file: 10,
        ..Limits::default()
    };
    let error = read_all(&good, small).unwrap_err();
    assert!(error.contains("over the limit"), "{error}");
}

#[test]
fn a_bundle_can_be_opened_by_hand() {
    let bytes = bundle(&[("a/b.jsonl", b"line\n")]);
    let tar = zstd::decode_all(bytes.as_slice()).unwrap();
    let mut archive = tar::Archive::new(tar.as_slice());
    let names: Vec<String> = archive
        .entries()
        .unwrap()
        .map(|e| e.unwrap().path().unwrap().display().to_string())
        .collect();
    assert_eq!(names, ["manifest.json", "files/a/b.jsonl"]);
    let _ = std::io::sink().write_all(&tar);
    let _ = Path::new("");
}

/// A turn of session 1 with `answer`.
fn turn(answer: Option<&str>) -> Turn {
    Turn {
        session: 1,
        prompt: Some("p".into()),
        mode: "headless".into(),
        pid: 1,
        host: "h".into(),
        started_at: 1,
        ended_at: Some(2),
        status: "ok".into(),
        exit_code: Some(0),
        signal: None,
        duration_ms: Some(1),
        cost_usd: None,
        input_tokens: None,
        output_tokens: None,
        error: None,
        cached_tokens: None,
        context_tokens: None,
        context_window: None,
        purpose: None,
        answer: answer.map(str::to_owned),
        answer_bytes: answer.map(|a| i64::try_from(a.len()).unwrap()),
        reported_totals: None,
        restored: None,
    }
}

#[test]
fn a_turn_carries_only_what_the_store_would_keep() {
    let over = "x".repeat(crate::store::MAX_ANSWER + 1);
    let mut short = turn(Some("hello"));
    short.answer_bytes = Some(2);
    let mut restored = turn(None);
    restored.restored = Some(Restored {
        files: -1,
        bytes: 0,
        created_at: 0,
    });
    let mut totals = turn(None);
    totals.reported_totals = Some(" ".repeat(read::MAX_REPORTED_TOTALS + 1));
    let cases = [
        (turn(Some(&over)), "over the 1048576 bytes sticky keeps"),
        (short, "smaller than the text"),
        (restored, "negative"),
        (totals, "reported totals over"),
    ];
    for (bad, says) in cases {
        let mut manifest = manifest();
        manifest.turns = vec![turn(Some("fine")), bad];
        let error = read_all(&crafted(&manifest, &[]), Limits::default()).unwrap_err();
        assert!(
            error.contains(says) && error.contains("turn 2"),
            "{says}: {error}"
        );
    }
    let mut manifest = manifest();
    manifest.turns = vec![turn(Some("fine")), turn(None)];
    let (staged, _dir) = read_all(&crafted(&manifest, &[]), Limits::default()).unwrap();
    assert_eq!(staged.manifest.turns, manifest.turns);
}

#[test]
fn answers_past_the_budget_are_left_out_oldest_first() {
    let mut manifest = manifest();
    manifest.turns = vec![
        turn(Some("aaaa")),
        turn(None),
        turn(Some("bbbb")),
        turn(Some("cccc")),
    ];
    assert_eq!(manifest.fit_answers(12), 0);
    assert_eq!(manifest.fit_answers(5), 2);
    let kept: Vec<_> = manifest.turns.iter().map(|t| t.answer.as_deref()).collect();
    assert_eq!(kept, [None, None, None, Some("cccc")]);
    assert_eq!(manifest.turns[0].answer_bytes, None);
}

#[test]
fn a_manifest_without_the_newer_fields_reads_as_not_recorded_and_unknown_ones_are_skipped() {
    let mut value = serde_json::to_value({
        let mut manifest = manifest();
        manifest.turns = vec![turn(Some("hello"))];
        manifest
    })
    .unwrap();
    let fields = value["turns"][0].as_object_mut().unwrap();
    for newer in [
        "answer",
        "answer_bytes",
        "reported_totals",
        "restored",
        "cached_tokens",
    ] {
        assert!(fields.remove(newer).is_some(), "{newer}");
    }
    // A field of a newer sticky this one does not know.
    fields.insert("from_the_future".into(), serde_json::json!({"x": 1}));
    let read: Manifest = serde_json::from_value(value).unwrap();
    assert_eq!(read.turns[0], turn(None));
}
