//! Relocating an agent's session to another directory or HOME (`sticky export`, `import`,
//! `relocate`): which files hold the session, where they go for a session run elsewhere, and
//! what inside them names the old directory.
//!
//! Each built-in agent keys its sessions by directory in its own way (shared/research/agents.md
//! §3): Claude Code and Qwen Code encode the working directory in the transcript's path and
//! write it as `cwd` on every line; Gemini CLI keeps a project slug in `~/.gemini/projects.json`,
//! a `.project_root` marker and the SHA-256 of the directory (`projectHash`) in each chat file's
//! header; Codex writes `cwd` into its rollout's `session_meta` and `turn_context` lines;
//! Copilot CLI keeps `cwd` in `events.jsonl` and `workspace.yaml` and resumes there; opencode
//! keeps `directory` in its database's `session` row. Paths are relative to the agent's home
//! ([`Relocate::home`]), so a bundle names no user's HOME, and every path a bundle holds must be
//! one of the session's own files ([`Relocate::place`] refuses anything else).

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use serde_json::Value;
use sha2::{Digest, Sha256};

pub use crate::sql_json::hex;

use super::output::env_dir;
use super::{Adapter, Claude, Codex, Copilot, Gemini, Keeping, Opencode, Qwen};

/// One file of a session, as it leaves the agent's home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovingFile {
    /// Its path relative to the agent's home (`projects/-home-u-p/<id>.jsonl`).
    pub relative: PathBuf,
    /// Where its bytes come from.
    pub stored: Stored,
}

/// Where a session file's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    /// A file on disk (absolute path).
    File(PathBuf),
    /// Database rows, already read out as JSON (opencode): imported by [`Relocate::insert_rows`].
    Rows(Vec<u8>),
}

/// A string field that names the old directory, rewritten to the new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The bytes that come before the value (`"cwd":"`).
    pub before: Vec<u8>,
    /// The old value, as the file spells it.
    pub old: Vec<u8>,
    /// The new value.
    pub new: Vec<u8>,
    /// The byte that ends the value (`"` in JSON, a newline in YAML).
    pub end: u8,
    /// Whether a path under the old value (`old/src`) is rewritten too.
    pub under: bool,
    /// Whether `before` must start a line (a YAML key).
    pub line_start: bool,
    /// Only in lines that hold these bytes (Codex's `session_meta` line), when given.
    pub in_lines_with: Option<Vec<u8>>,
}

/// How an agent names a project directory, and the subdirectory of `projects/<name>/` that
/// holds its sessions (see [`Relocate::encoded_projects`]).
pub type Encoded = (fn(&Path) -> String, Option<&'static str>);

/// How one agent's session moves between directories and homes: implemented by the built-in
/// agents' adapters, whose files it reads.
pub trait Relocate: Adapter + Sync {
    /// The agent's home under the user's `home` (its environment variable honoured), which the
    /// relative paths of [`MovingFile`] start from: [`Adapter::agent_home`].
    fn home(&self, home: &Path) -> PathBuf {
        self.agent_home(home).unwrap_or_else(|| home.to_owned())
    }

    /// The files of session `id` run in `directory`, as the adapter lists them
    /// ([`Adapter::session_files`]) less the ones the agent shares with its other sessions
    /// (Gemini's project registry and ownership marker, which import writes for the new
    /// directory instead: a registry names every project of the user); empty when the agent
    /// has none.
    fn files(&self, home: &Path, directory: &Path, id: &str) -> Result<Vec<MovingFile>> {
        Ok(self
            .session_files(home, directory, id)
            .into_iter()
            .filter(|file| file.keeping != Keeping::Shared)
            .filter(|file| {
                file.relative
                    .file_name()
                    .is_none_or(|name| name != ".project_root")
            })
            .map(|file| MovingFile {
                relative: file.relative,
                stored: Stored::File(file.path),
            })
            .collect())
    }

    /// Where `relative` (a file of session `id` run in `from`) goes for the session run in `to`,
    /// relative to the agent's home `agent_home`; an error when it is not one of the session's
    /// own files. By default it moves from `from`'s encoded name to `to`'s for an agent that keeps
    /// sessions under one ([`Relocate::encoded_projects`]), else it stays where it is (the
    /// path names no directory) when [`Relocate::owns`] says it is the session's.
    fn place(
        &self,
        agent_home: &Path,
        relative: &Path,
        id: &str,
        from: &Path,
        to: &Path,
    ) -> Result<PathBuf> {
        let _ = agent_home;
        if let Some((encode, chats)) = self.encoded_projects() {
            return place_encoded(relative, id, (&encode(from), &encode(to)), chats);
        }
        if self.owns(&plain_components(relative)?, id) {
            return Ok(relative.to_owned());
        }
        bail!("{} is not a file of session {id}", relative.display())
    }

    /// For an agent that keeps a session under its directory's encoded name
    /// (`projects/<encoded>/`): that encoding, and the subdirectory of it that holds the
    /// sessions, if any.
    fn encoded_projects(&self) -> Option<Encoded> {
        None
    }

    /// Whether `parts` (a relative path's components) name one of session `id`'s own files,
    /// for the default [`Relocate::place`].
    fn owns(&self, parts: &[&str], id: &str) -> bool {
        let _ = (parts, id);
        false
    }

    /// Whether `relative` (under the agent's home) is one of session `id`'s own files, kept
    /// for whichever directory: what a restore from the vault may put back
    /// ([`Adapter::restorable`]). The rule [`Relocate::place`] applies to an import, less the
    /// directory (a vault copy was made where the session ran); never a credentials or
    /// settings file.
    fn own_file(&self, relative: &Path, id: &str) -> bool {
        let Ok(parts) = plain_components(relative) else {
            return false;
        };
        !id.is_empty()
            && !never_moved(relative)
            && match self.encoded_projects() {
                Some((_, chats)) => owned_encoded(&parts, id, None, chats),
                None => self.owns(&parts, id),
            }
    }

    /// Files of session `id` this HOME's agent would resume by its ID alone that are neither
    /// `destinations` (relative to `agent_home`) nor kept for directory `to`: another
    /// directory's copy of the session,
    /// which an import into `to` would make two projects resume at once (issue 23). None for
    /// an agent that finds a session only under the directory it runs in (Gemini, Qwen) or
    /// keeps it in one place per HOME (Copilot: there the destination itself is checked).
    fn elsewhere(
        &self,
        agent_home: &Path,
        id: &str,
        (destinations, to): (&[PathBuf], &Path),
    ) -> Result<Vec<PathBuf>> {
        let _ = (agent_home, id, destinations, to);
        Ok(Vec::new())
    }

    /// Whether the agent only appends to `relative` (a session file's path under its home), so
    /// a newer copy begins with an older one's bytes; a file it rewrites (Copilot's
    /// `workspace.yaml`) is judged by the appended ones when an import finds it in place.
    fn appended(&self, relative: &Path) -> bool {
        let _ = relative;
        true
    }

    /// What inside `relative` names directory `from`, to be rewritten to `to`.
    fn rewrites(&self, relative: &Path, from: &Path, to: &Path) -> Vec<Rewrite> {
        let _ = relative;
        json_cwd(from, to)
    }

    /// What the agent must know besides the files once they are placed for `to` (Gemini's
    /// project registry).
    fn settle(&self, agent_home: &Path, to: &Path) -> Result<()> {
        let _ = (agent_home, to);
        Ok(())
    }

    /// Adds exported rows of session `id` (a [`Stored::Rows`] file, read from `rows`) to the
    /// agent's database for a session run in `to`; with `replace`, a session of the same ID
    /// there is replaced, else it must be this directory's with no row the bundle lacks.
    fn insert_rows(
        &self,
        agent_home: &Path,
        rows: &mut dyn std::io::Read,
        id: &str,
        (from, to): (&Path, &Path),
        replace: bool,
    ) -> Result<()> {
        let _ = (agent_home, rows, id, from, to, replace);
        bail!("this agent keeps no session in a database")
    }

    /// Whether the agent keeps sessions as database rows ([`Relocate::insert_rows`]), so a
    /// bundle's file of rows can be placed; one for another agent is refused before anything is.
    fn keeps_rows(&self) -> bool {
        false
    }

    /// The file of session `id` made from the vault's copy of its database rows
    /// (`crate::vault`'s `rows.json`, `document`), for a session whose rows the agent's
    /// database no longer holds; `None` for an agent that keeps no rows.
    fn vault_rows(&self, id: &str, document: &[u8]) -> Result<Option<MovingFile>> {
        let _ = (id, document);
        Ok(None)
    }
}

/// How `agent` (a built-in agent's name) relocates its sessions; `None` for an agent defined in
/// the configuration, whose files sticky does not know.
pub fn for_agent(agent: &str) -> Option<&'static dyn Relocate> {
    match agent {
        "claude" => Some(&Claude),
        "codex" => Some(&Codex),
        "gemini" => Some(&Gemini),
        "qwen" => Some(&Qwen),
        "opencode" => Some(&Opencode),
        "copilot" => Some(&Copilot),
        _ => None,
    }
}

/// The names of files that hold credentials or settings: never moved, whatever the agent
/// lists and whatever a bundle says.
const NEVER_MOVED: &[&str] = &[
    ".credentials.json",
    ".claude.json",
    "settings.json",
    "settings.local.json",
    "auth.json",
    "config.toml",
    "config.json",
    "oauth_creds.json",
    "google_accounts.json",
    "projects.json",
    "trustedFolders.json",
    "opencode.json",
    "mcp-config.json",
    ".env",
];

/// Whether `relative` names a credentials or settings file.
pub fn never_moved(relative: &Path) -> bool {
    relative
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| NEVER_MOVED.contains(&name))
}

/// The `"cwd":"<from>"` fields of JSON lines (with or without a space after the colon), and
/// paths under it.
fn json_cwd(from: &Path, to: &Path) -> Vec<Rewrite> {
    json_field("cwd", &from.to_string_lossy(), &to.to_string_lossy(), true)
}

/// `"key":"old"` (and `"key": "old"`) becomes `"key":"new"`; with `under`, also `old/...`.
fn json_field(key: &str, old: &str, new: &str, under: bool) -> Vec<Rewrite> {
    let escape = |text: &str| {
        let quoted = serde_json::to_string(text).unwrap_or_default();
        quoted.as_bytes()[1..quoted.len() - 1].to_vec()
    };
    ["\":\"", "\": \""]
        .iter()
        .map(|colon| Rewrite {
            before: format!("\"{key}{colon}").into_bytes(),
            old: escape(old),
            new: escape(new),
            end: b'"',
            under,
            line_start: false,
            in_lines_with: None,
        })
        .collect()
}

/// `rest` as plain path components (no root, `.`, `..`), or an error naming `relative`.
fn plain_components(relative: &Path) -> Result<Vec<&str>> {
    relative
        .components()
        .map(|component| match component {
            Component::Normal(name) => name.to_str().context("a path that is not UTF-8"),
            _ => bail!("{} is not a plain relative path", relative.display()),
        })
        .collect()
}

/// `projects/<encoded>/<id>.jsonl` and `projects/<encoded>/<id>/...` (Claude's sidecar
/// directory): the files of a session kept under an encoded directory name, `encode(from)` swapped
/// for `encode(to)`.
fn place_encoded(
    relative: &Path,
    id: &str,
    (from, to): (&str, &str),
    chats: Option<&str>,
) -> Result<PathBuf> {
    let parts = plain_components(relative)?;
    if !owned_encoded(&parts, id, Some(from), chats) {
        bail!(
            "{} is not a file of session {id} in {from}",
            relative.display()
        );
    }
    let mut placed = PathBuf::from("projects").join(to);
    for part in &parts[2..] {
        placed.push(part);
    }
    Ok(placed)
}

/// Whether `parts` are `projects/<encoded>/[<chats>/]<id>.jsonl` or a file below
/// `projects/<encoded>/[<chats>/]<id>/`, with `<encoded>` equal to `project` when given.
fn owned_encoded(parts: &[&str], id: &str, project: Option<&str>, chats: Option<&str>) -> bool {
    let start = if chats.is_some() { 3 } else { 2 };
    let transcript = format!("{id}.jsonl");
    parts.len() > start
        && parts[0] == "projects"
        && project.is_none_or(|project| parts[1] == project)
        && chats.is_none_or(|chats| parts[2] == chats)
        && (parts[start..] == [transcript.as_str()]
            || (parts.len() > start + 1 && parts[start] == id))
}

/// Claude Code: `projects/<dir with [^A-Za-z0-9] -> ->/<id>.jsonl` and its sidecar directory
/// `<id>/` (subagents, tool results), under `CLAUDE_CONFIG_DIR` or `~/.claude`.
impl Relocate for Claude {
    fn encoded_projects(&self) -> Option<Encoded> {
        Some((
            |dir| super::claude::encode_project_dir(&dir.to_string_lossy()),
            None,
        ))
    }

    /// Claude Code resumes an ID from any `projects/<dir>/` (agents.md: resume is global):
    /// the session's transcript or sidecar directory under another directory's name.
    fn elsewhere(
        &self,
        agent_home: &Path,
        id: &str,
        (destinations, to): (&[PathBuf], &Path),
    ) -> Result<Vec<PathBuf>> {
        let mut found = Vec::new();
        let here = super::claude::encode_project_dir(&to.to_string_lossy());
        for project in entries(agent_home, Path::new("projects"))? {
            let dir = Path::new("projects").join(&project);
            if project == here || destinations.iter().any(|d| d.starts_with(&dir)) {
                continue;
            }
            for name in [format!("{id}.jsonl"), id.to_owned()] {
                let path = dir.join(name);
                if std::fs::symlink_metadata(agent_home.join(&path)).is_ok() {
                    found.push(path);
                }
            }
        }
        Ok(found)
    }
}

/// The entries of `dir` (relative to `agent_home`), by name; none when it does not exist.
fn entries(agent_home: &Path, dir: &Path) -> Result<Vec<String>> {
    let path = agent_home.join(dir);
    let read = match std::fs::read_dir(&path) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut names = Vec::new();
    for entry in read {
        let entry = entry.with_context(|| format!("cannot read {}", path.display()))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// Qwen Code: `projects/<dir with [^A-Za-z0-9] -> ->/chats/<id>.jsonl` under `QWEN_RUNTIME_DIR`,
/// `QWEN_HOME` or `~/.qwen`.
impl Relocate for Qwen {
    fn encoded_projects(&self) -> Option<Encoded> {
        Some((
            |dir| super::qwen::sanitize_cwd(&dir.to_string_lossy()),
            Some("chats"),
        ))
    }
}

/// Codex: `sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` under `CODEX_HOME` or `~/.codex`; the
/// path names no directory, the `cwd` of its lines does.
impl Relocate for Codex {
    fn owns(&self, parts: &[&str], id: &str) -> bool {
        matches!(parts, ["sessions", _, _, _, name]
            if name.starts_with("rollout-") && name.ends_with(&format!("-{id}.jsonl")))
    }

    /// Codex resumes a thread by its rollout file in any day's directory: one of the thread
    /// under another date than the bundle's.
    fn elsewhere(
        &self,
        agent_home: &Path,
        id: &str,
        (destinations, _): (&[PathBuf], &Path),
    ) -> Result<Vec<PathBuf>> {
        let mut found = Vec::new();
        let sessions = Path::new("sessions");
        for year in entries(agent_home, sessions)? {
            for month in entries(agent_home, &sessions.join(&year))? {
                for day in entries(agent_home, &sessions.join(&year).join(&month))? {
                    let dir = sessions.join(&year).join(&month).join(&day);
                    for name in entries(agent_home, &dir)? {
                        let path = dir.join(&name);
                        if self.owns(&["sessions", &year, &month, &day, &name], id)
                            && !destinations.contains(&path)
                        {
                            found.push(path);
                        }
                    }
                }
            }
        }
        Ok(found)
    }

    /// Only the `session_meta` line's `cwd`, which says where the thread belongs (sticky's
    /// `transcript` checks it). The `turn_context` lines keep the directory each turn ran in:
    /// Codex compares the last one with where it runs now and, when they differ, tells the
    /// model the new working directory (agents.md 3.2 item 3: a resumed thread "appends a new
    /// `<environment_context>` with the new cwd"), which the model would otherwise never hear.
    fn rewrites(&self, _: &Path, from: &Path, to: &Path) -> Vec<Rewrite> {
        json_cwd(from, to)
            .into_iter()
            .map(|rewrite| Rewrite {
                in_lines_with: Some(b"\"type\":\"session_meta\"".to_vec()),
                ..rewrite
            })
            .collect()
    }
}

/// Copilot CLI: `session-state/<id>/` (`events.jsonl`, `workspace.yaml`, checkpoints, files)
/// under `COPILOT_HOME` or `~/.copilot`; it resumes a session in the `cwd` these record.
impl Relocate for Copilot {
    fn owns(&self, parts: &[&str], id: &str) -> bool {
        matches!(parts, ["session-state", session, _, ..] if *session == id)
    }

    /// `events.jsonl` only: Copilot rewrites `workspace.yaml` (its timestamps) and the
    /// checkpoints, as `Adapter::session_files` says.
    fn appended(&self, relative: &Path) -> bool {
        relative
            .file_name()
            .is_some_and(|name| name == "events.jsonl")
    }

    fn rewrites(&self, relative: &Path, from: &Path, to: &Path) -> Vec<Rewrite> {
        if relative.extension().is_some_and(|ext| ext == "yaml") {
            return vec![Rewrite {
                before: b"cwd: ".to_vec(),
                old: from.to_string_lossy().as_bytes().to_vec(),
                new: to.to_string_lossy().as_bytes().to_vec(),
                end: b'\n',
                under: false,
                line_start: true,
                in_lines_with: None,
            }];
        }
        json_cwd(from, to)
    }
}

/// The hex SHA-256 of a directory's path: Gemini CLI's `projectHash`.
fn project_hash(directory: &Path) -> String {
    hex(&Sha256::digest(directory.to_string_lossy().as_bytes()))
}

impl Gemini {
    fn registry(agent_home: &Path) -> Result<Value> {
        let path = agent_home.join("projects.json");
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .with_context(|| format!("{} is not JSON", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(serde_json::json!({})),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// The slug `directory` has in the registry, or the one Gemini CLI would give it: its
    /// base name, lower-cased, `[^a-z0-9]` runs made `-`, with `-1`, `-2`... on a collision.
    fn slug(agent_home: &Path, directory: &Path) -> Result<String> {
        let registry = Self::registry(agent_home)?;
        let projects = registry.get("projects").and_then(Value::as_object);
        if let Some(slug) = projects
            .and_then(|projects| projects.get(&*directory.to_string_lossy()))
            .and_then(Value::as_str)
        {
            return Ok(slug.to_owned());
        }
        let name = directory
            .file_name()
            .map(|name| name.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let mut base = String::new();
        for c in name.chars() {
            let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            };
            if c != '-' || !base.ends_with('-') {
                base.push(c);
            }
        }
        let base = match base.trim_matches('-') {
            "" => "project".to_owned(),
            trimmed => trimmed.to_owned(),
        };
        let taken = |slug: &str| {
            projects.is_some_and(|projects| projects.values().any(|v| v.as_str() == Some(slug)))
        };
        let (mut slug, mut counter) = (base.clone(), 1);
        while taken(&slug) {
            slug = format!("{base}-{counter}");
            counter += 1;
        }
        Ok(slug)
    }
}

/// Gemini CLI: `tmp/<slug>/chats/session-<time>-<id[..8]>.jsonl` under `GEMINI_CLI_HOME` (or
/// HOME) `/.gemini`, the slug registered for the directory in `projects.json` with a
/// `.project_root` marker, and `projectHash` (SHA-256 of the directory) in each header.
impl Relocate for Gemini {
    fn place(
        &self,
        agent_home: &Path,
        relative: &Path,
        id: &str,
        _: &Path,
        to: &Path,
    ) -> Result<PathBuf> {
        let parts = plain_components(relative)?;
        let suffix = format!("-{}.jsonl", id.get(..8).unwrap_or(id));
        match parts.as_slice() {
            ["tmp", _, "chats", name]
                if name.starts_with("session-") && name.ends_with(&suffix) =>
            {
                Ok(Path::new("tmp")
                    .join(Self::slug(agent_home, to)?)
                    .join("chats")
                    .join(name))
            }
            _ => bail!("{} is not a chat file of session {id}", relative.display()),
        }
    }

    fn rewrites(&self, _: &Path, from: &Path, to: &Path) -> Vec<Rewrite> {
        json_field("projectHash", &project_hash(from), &project_hash(to), false)
    }

    /// Registers `to` under its slug in `projects.json` (written whole, then renamed) and
    /// writes the `.project_root` markers Gemini CLI checks.
    fn settle(&self, agent_home: &Path, to: &Path) -> Result<()> {
        let slug = Self::slug(agent_home, to)?;
        let mut registry = Self::registry(agent_home)?;
        if !registry.is_object() {
            registry = serde_json::json!({});
        }
        let projects = registry
            .as_object_mut()
            .map(|object| {
                object
                    .entry("projects")
                    .or_insert_with(|| serde_json::json!({}))
            })
            .and_then(Value::as_object_mut)
            .context("projects.json: `projects` is not an object")?;
        projects.insert(
            to.to_string_lossy().into_owned(),
            Value::String(slug.clone()),
        );
        let text = serde_json::to_vec_pretty(&registry)?;
        write_atomically(&agent_home.join("projects.json"), &text)?;
        for base in ["tmp", "history"] {
            let marker = agent_home.join(base).join(&slug).join(".project_root");
            if !marker.exists() {
                std::fs::create_dir_all(agent_home.join(base).join(&slug))?;
                write_atomically(&marker, to.to_string_lossy().as_bytes())?;
            }
        }
        Ok(())
    }
}

/// Writes `path` whole through a temporary file beside it, renamed over it.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut staged = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    staged.write_all(bytes)?;
    staged
        .persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

mod rows;

/// opencode: the rows of the session in `<XDG_DATA_HOME or ~/.local/share>/opencode/opencode.db`
/// (its `session` row, every table's rows with its `session_id`, its `project` row), moved as
/// one JSON file, `opencode.db/<id>.json`.
impl Relocate for Opencode {
    fn home(&self, home: &Path) -> PathBuf {
        env_dir(super::opencode::DATA_HOME)
            .unwrap_or_else(|| home.join(".local/share"))
            .join("opencode")
    }

    fn files(&self, home: &Path, _: &Path, id: &str) -> Result<Vec<MovingFile>> {
        let db = self.home(home).join("opencode.db");
        if !db.is_file() {
            return Ok(Vec::new());
        }
        Ok(rows::export(&db, id)?
            .map(|json| MovingFile {
                relative: Path::new("opencode.db").join(format!("{id}.json")),
                stored: Stored::Rows(json),
            })
            .into_iter()
            .collect())
    }

    fn owns(&self, parts: &[&str], id: &str) -> bool {
        parts == ["opencode.db", format!("{id}.json").as_str()]
    }

    fn rewrites(&self, _: &Path, _: &Path, _: &Path) -> Vec<Rewrite> {
        Vec::new()
    }

    fn keeps_rows(&self) -> bool {
        true
    }

    fn insert_rows(
        &self,
        agent_home: &Path,
        json: &mut dyn std::io::Read,
        id: &str,
        moving: (&Path, &Path),
        replace: bool,
    ) -> Result<()> {
        rows::import(&agent_home.join("opencode.db"), json, id, moving, replace)
    }

    fn vault_rows(&self, id: &str, document: &[u8]) -> Result<Option<MovingFile>> {
        Ok(Some(MovingFile {
            relative: Path::new("opencode.db").join(format!("{id}.json")),
            stored: Stored::Rows(rows::from_vault(id, document)?),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_must_be_one_of_the_sessions_own_files() {
        let (from, to) = (Path::new("/a/p"), Path::new("/b/q"));
        let id = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
        let home = Path::new("/nonexistent");
        let ok = |agent: &str, path: &str| {
            for_agent(agent)
                .unwrap()
                .place(home, Path::new(path), id, from, to)
        };
        assert_eq!(
            ok("claude", &format!("projects/-a-p/{id}.jsonl")).unwrap(),
            Path::new(&format!("projects/-b-q/{id}.jsonl"))
        );
        assert_eq!(
            ok("claude", &format!("projects/-a-p/{id}/subagents/x.jsonl")).unwrap(),
            Path::new(&format!("projects/-b-q/{id}/subagents/x.jsonl"))
        );
        assert_eq!(
            ok("qwen", &format!("projects/-a-p/chats/{id}.jsonl")).unwrap(),
            Path::new(&format!("projects/-b-q/chats/{id}.jsonl"))
        );
        for (agent, path) in [
            ("claude", "settings.json".to_owned()),
            ("claude", format!("projects/-a-p/{id}.json")),
            ("claude", "projects/-a-p/other.jsonl".to_owned()),
            ("claude", format!("projects/-x/{id}.jsonl")),
            ("claude", format!("projects/-a-p/../../{id}.jsonl")),
            ("codex", "config.toml".to_owned()),
            (
                "codex",
                "sessions/2026/11/30/rollout-x-other.jsonl".to_owned(),
            ),
            ("copilot", format!("session-state/{id}")),
            ("copilot", "session-state/other/events.jsonl".to_owned()),
            ("gemini", "tmp/p/chats/session-x-00000000.jsonl".to_owned()),
            ("opencode", "opencode.db/other.json".to_owned()),
        ] {
            assert!(ok(agent, &path).is_err(), "{agent}: {path}");
        }
        assert!(
            ok(
                "codex",
                &format!("sessions/2026/11/30/rollout-t-{id}.jsonl")
            )
            .is_ok()
        );
        assert!(ok("copilot", &format!("session-state/{id}/events.jsonl")).is_ok());
        assert!(never_moved(Path::new("x/.credentials.json")));
        assert!(!never_moved(Path::new("x/events.jsonl")));
    }

    /// Where the agent would resume a session from besides where an import places it: Claude
    /// from any project directory, Codex from any day's rollout (issue 23, finding 5).
    #[test]
    fn the_session_is_found_where_the_agent_would_resume_it_from() {
        let home = tempfile::tempdir().unwrap();
        let id = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
        let put = |relative: &str| {
            let path = home.path().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "{}\n").unwrap();
        };
        let (a, b) = (
            format!("projects/-a-p/{id}.jsonl"),
            format!("projects/-b-q/{id}.jsonl"),
        );
        put(&a);
        put(&b);
        put("projects/-c-r/other.jsonl");
        let found = |to: &str| {
            Claude
                .elsewhere(home.path(), id, (&[], Path::new(to)))
                .unwrap()
        };
        assert_eq!(found("/b/q"), [PathBuf::from(&a)]);
        assert_eq!(found("/a/p"), [PathBuf::from(&b)]);
        assert_eq!(found("/c/r").len(), 2);

        let (first, second) = (
            format!("sessions/2026/11/30/rollout-t-{id}.jsonl"),
            format!("sessions/2026/12/01/rollout-u-{id}.jsonl"),
        );
        put(&first);
        put(&second);
        put("sessions/2026/12/01/rollout-u-other.jsonl");
        let destinations = [PathBuf::from(&first)];
        let found = Codex
            .elsewhere(home.path(), id, (&destinations, Path::new("/b/q")))
            .unwrap();
        assert_eq!(found, [PathBuf::from(&second)]);
        assert!(
            Qwen.elsewhere(home.path(), id, (&[], Path::new("/b/q")))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_new_gemini_slug_avoids_the_taken_ones() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join("projects.json"),
            r#"{"projects":{"/x/my_proj":"my-proj"}}"#,
        )
        .unwrap();
        let slug = |dir: &str| Gemini::slug(home.path(), Path::new(dir)).unwrap();
        assert_eq!(slug("/x/my_proj"), "my-proj");
        assert_eq!(slug("/y/My Proj"), "my-proj-1");
        assert_eq!(slug("/y/..."), "project");
        Gemini.settle(home.path(), Path::new("/y/My Proj")).unwrap();
        assert_eq!(slug("/y/My Proj"), "my-proj-1");
        assert_eq!(
            std::fs::read_to_string(home.path().join("tmp/my-proj-1/.project_root")).unwrap(),
            "/y/My Proj"
        );
    }
}
