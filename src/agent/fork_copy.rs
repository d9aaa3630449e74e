//! A fork made by copying a session's files under a new session ID ([`super::Forking::Copy`]):
//! Gemini CLI and Copilot CLI have no fork of their own, but resume such a copy with its whole
//! history and go on with it as a session of its own (checked against the real CLIs: Gemini
//! CLI finds a chat file by the `sessionId` of its header, Copilot CLI a session by its
//! `session-state/<id>/` directory; tests/it/real/scenarios.rs forks both).
//!
//! The copy names the new ID wherever the source's files named the old one: in their paths
//! (Copilot's directory, the 8 characters of the ID that end Gemini's chat file name) and in
//! their bytes (the header's `sessionId`, each event's). Files the agent shares with other
//! sessions (Gemini's project registry and `.project_root` marker) are not the session's own
//! and are left alone.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::{Adapter, Keeping, SessionFile};

/// The files written for a copy, removed again by [`Copied::discard`] when the fork is not
/// recorded after all.
#[derive(Debug, Default)]
pub struct Copied {
    /// The files written, absolute.
    pub files: Vec<PathBuf>,
    /// The directories made for them (the deepest last).
    dirs: Vec<PathBuf>,
}

impl Copied {
    /// Removes what the copy wrote (best effort: the fork failed for another reason, which is
    /// the error the user sees).
    pub fn discard(self) {
        for file in &self.files {
            let _ = std::fs::remove_file(file);
        }
        for dir in self.dirs.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Copies session `from` (run in `directory`, under the user's `home`) to session `to`: each
/// of its own files whose path names the ID, at that path with the new ID, its bytes with every
/// `from` made `to`. Nothing is copied (an empty [`Copied`]) when the agent keeps no file of
/// `from` (deleted, or never saved). A file already at a destination is an error: the copy
/// never writes over anything.
pub fn copy_session(
    adapter: &dyn Adapter,
    home: &Path,
    directory: &Path,
    (from, to): (&str, &str),
) -> Result<Copied> {
    let mut copied = Copied::default();
    for file in adapter.session_files(home, directory, from) {
        if file.keeping == Keeping::Shared {
            continue;
        }
        let Some(destination) = destination(&file, from, to) else {
            continue;
        };
        if let Err(e) = copy_one(&file.path, &destination, (from, to), &mut copied) {
            copied.discard();
            return Err(e);
        }
    }
    Ok(copied)
}

/// Where `file` of session `from` goes for session `to`; `None` for a file whose path does not
/// name the session (shared with the project's other sessions).
fn destination(file: &SessionFile, from: &str, to: &str) -> Option<PathBuf> {
    let root = file
        .path
        .ancestors()
        .nth(file.relative.components().count())?;
    let short = |id: &str| id.get(..8).unwrap_or(id).to_owned();
    let mut named = false;
    let mut relative = PathBuf::new();
    for part in &file.relative {
        let part = part.to_string_lossy();
        let renamed = if part.contains(from) {
            part.replace(from, to)
        } else if part.contains(&format!("-{}.", short(from))) {
            // Gemini CLI: session-<time>-<first 8 of the ID>.jsonl
            part.replace(&format!("-{}.", short(from)), &format!("-{}.", short(to)))
        } else {
            relative.push(&*part);
            continue;
        };
        named = true;
        relative.push(renamed);
    }
    named.then(|| root.join(relative))
}

fn copy_one(
    source: &Path,
    destination: &Path,
    ids: (&str, &str),
    copied: &mut Copied,
) -> Result<()> {
    let bytes =
        std::fs::read(source).with_context(|| format!("cannot read {}", source.display()))?;
    let bytes = replace_all(&bytes, ids.0.as_bytes(), ids.1.as_bytes());
    if let Some(parent) = destination.parent() {
        let mut missing: Vec<PathBuf> = parent
            .ancestors()
            .take_while(|dir| !dir.exists())
            .map(Path::to_path_buf)
            .collect();
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
        missing.reverse();
        copied.dirs.extend(missing);
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(destination)
        .with_context(|| format!("cannot create {}", destination.display()))?;
    copied.files.push(destination.to_owned());
    std::io::Write::write_all(&mut file, &bytes)
        .with_context(|| format!("cannot write {}", destination.display()))?;
    if let Ok(meta) = std::fs::metadata(source) {
        let _ = std::fs::set_permissions(destination, meta.permissions());
    }
    Ok(())
}

/// `bytes` with every `from` made `to`.
fn replace_all(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    if from.is_empty() {
        return bytes.to_vec();
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some(at) = rest.windows(from.len()).position(|window| window == from) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(to);
        rest = &rest[at + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{Copilot, Gemini};

    const OLD: &str = "11111111-2222-4333-8444-555555555555";
    const NEW: &str = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn every_id_is_replaced_and_nothing_else() {
        assert_eq!(replace_all(b"a-xy-xyx", b"xy", b"Q"), b"a-Q-Qx");
        assert_eq!(replace_all(b"none", b"xy", b"Q"), b"none");
    }

    /// Copilot CLI: the whole `session-state/<id>/` directory, under the new ID, the ID inside
    /// replaced; the source is left as it was, and a second copy to the same ID is refused.
    #[test]
    fn a_copilot_session_is_copied_under_the_new_id() {
        let home = tempfile::tempdir().unwrap();
        let state = home.path().join(".copilot/session-state");
        let events = format!("{{\"sessionId\":\"{OLD}\"}}\n");
        write(&state.join(OLD).join("events.jsonl"), &events);
        write(
            &state.join(OLD).join("workspace.yaml"),
            &format!("id: {OLD}\ncwd: /p\n"),
        );
        write(&state.join(OLD).join("checkpoints/index.md"), "none\n");
        let copied = copy_session(&Copilot, home.path(), Path::new("/p"), (OLD, NEW)).unwrap();
        assert_eq!(copied.files.len(), 3);
        let read =
            |id: &str, name: &str| std::fs::read_to_string(state.join(id).join(name)).unwrap();
        assert_eq!(
            read(NEW, "events.jsonl"),
            format!("{{\"sessionId\":\"{NEW}\"}}\n")
        );
        assert_eq!(read(NEW, "workspace.yaml"), format!("id: {NEW}\ncwd: /p\n"));
        assert_eq!(read(NEW, "checkpoints/index.md"), "none\n");
        assert_eq!(read(OLD, "events.jsonl"), events);
        let again = copy_session(&Copilot, home.path(), Path::new("/p"), (OLD, NEW));
        assert!(again.is_err());
        assert_eq!(
            read(NEW, "events.jsonl"),
            format!("{{\"sessionId\":\"{NEW}\"}}\n")
        );
        copied.discard();
        assert!(!state.join(NEW).exists());
        assert!(state.join(OLD).join("events.jsonl").exists());
    }

    /// Gemini CLI: the chat file, named for the new ID's first 8 characters, its header naming
    /// the new ID; the project's marker and registry are the project's, not copied.
    #[test]
    fn a_gemini_chat_is_copied_under_the_new_id() {
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join("proj");
        std::fs::create_dir_all(&project).unwrap();
        let gemini = home.path().join(".gemini");
        write(
            &gemini.join("projects.json"),
            &format!("{{\"projects\":{{\"{}\":\"proj\"}}}}", project.display()),
        );
        write(
            &gemini.join("tmp/proj/.project_root"),
            &project.to_string_lossy(),
        );
        let chats = gemini.join("tmp/proj/chats");
        let header = |id: &str| {
            format!(
                "{{\"sessionId\":\"{id}\",\"kind\":\"main\"}}\n{{\"id\":\"m1\",\"type\":\"user\"}}\n"
            )
        };
        write(
            &chats.join("session-2026-12-06T20-59-11111111.jsonl"),
            &header(OLD),
        );
        assert_eq!(Gemini.session_files(home.path(), &project, OLD).len(), 3);
        let copied = copy_session(&Gemini, home.path(), &project, (OLD, NEW)).unwrap();
        let copy = chats.join("session-2026-12-06T20-59-aaaaaaaa.jsonl");
        assert_eq!(copied.files, std::slice::from_ref(&copy));
        assert_eq!(std::fs::read_to_string(copy).unwrap(), header(NEW));
        assert_eq!(Gemini.session_files(home.path(), &project, NEW).len(), 3);
    }

    #[test]
    fn nothing_is_copied_of_a_session_the_agent_keeps_no_file_of() {
        let home = tempfile::tempdir().unwrap();
        let copied = copy_session(&Copilot, home.path(), Path::new("/p"), (OLD, NEW)).unwrap();
        assert!(copied.files.is_empty());
    }
}
