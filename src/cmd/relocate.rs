//! `sticky relocate`: after a project moved (or was renamed), carry its conversations forward:
//! each live session recorded for the old directory gets its agent's files moved to where the
//! agent looks for the new one (what encodes the directory rewritten), and is recorded here.
//!
//! One command in place of `export` then `import` of the project's own bundle: nothing to name
//! or keep, and the old files are moved, not copied, so no agent finds two copies of one
//! session. It refuses when the old directory still exists: that is a copy of the project, not
//! a move, and both would then write one agent session: it names `sticky new --carry` instead.
//! It refuses too when the old directory is gone but the agent keeps the session for it no
//! more, as in a second copy of a moved project after the first ran `relocate`: [`standing`]
//! finds where the session lives now, and [`advice`] is what `trust`, a turn and `doctor` say
//! there, so no advice loops back to `relocate` (issue 23 review, finding 16).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use super::Context;
use super::output::Report;
use super::view::escape;
use crate::agent::relocation::{self, Relocate, Stored};
use crate::bundle::place::{self, Move};
use crate::cli::Origin;
use crate::confined::{Access, Dir, Kind};
use crate::exit::StickyError;
use crate::store::SessionRow;

/// How long relocate waits for a turn running on a conversation to end.
const WAIT: Duration = Duration::from_secs(600);

/// Moves every conversation whose live session belongs to another directory (only `-t NAME`'s
/// when given).
pub fn run(ctx: &Context) -> Result<Report> {
    let Some(mut store) = ctx.existing_store()? else {
        return Err(StickyError::Usage(
            "this directory has no sticky conversations to relocate".into(),
        )
        .into());
    };
    let threads = store.threads()?;
    let mut moved = Vec::new();
    for thread in threads {
        if ctx.origins.thread == Origin::Flag && thread.name != ctx.thread {
            continue;
        }
        let Some(live) = store.live_session(thread.id)? else {
            continue;
        };
        if live.directory == ctx.project.dir {
            continue;
        }
        let _lock = crate::lock::lock(&ctx.project.state.locks, &thread.name, WAIT, &mut || {})?
            .ok_or_else(|| {
                StickyError::Busy(format!("a turn still runs on thread {}", thread.name))
            })?;
        relocate(ctx, &mut store, &thread.name, &live)?;
        moved.push((thread.name, live));
    }
    if ctx.json {
        let threads: Vec<_> = moved
            .iter()
            .map(|(name, live)| {
                serde_json::json!({
                    "thread": name,
                    "agent": live.agent,
                    "agent_session_id": live.agent_session_id,
                    "from": live.directory.display().to_string(),
                })
            })
            .collect();
        return Report::json(&serde_json::json!({
            "project": ctx.project.dir.display().to_string(),
            "relocated": threads,
        }));
    }
    if !ctx.quiet {
        if moved.is_empty() {
            eprintln!("sticky: nothing to relocate: every conversation belongs to this directory");
        }
        for (name, live) in &moved {
            eprintln!(
                "sticky: thread {} ({} session {}) moved from {} to {}",
                super::view::escape(name),
                live.agent,
                live.agent_session_id.as_deref().unwrap_or("not named yet"),
                super::view::escape(&live.directory.display().to_string()),
                super::view::escape(&ctx.project.dir.display().to_string()),
            );
        }
    }
    Ok(Report::nothing())
}

/// Moves one live session's files from its directory to the project's and records it.
fn relocate(
    ctx: &Context,
    store: &mut crate::store::Store,
    thread: &str,
    live: &SessionRow,
) -> Result<()> {
    let from = &live.directory;
    if from.is_dir() {
        return Err(StickyError::Usage(copied(thread, from)).into());
    }
    let Some(id) = live.agent_session_id.as_deref() else {
        // Never named by the agent: nothing of it to move.
        return store.immediate(|tx| tx.move_session(live.id, &ctx.project.dir));
    };
    let Some(relocate) = relocation::for_agent(&live.agent) else {
        return Err(StickyError::Usage(format!(
            "thread {thread}: sticky does not know where agent `{}` keeps its sessions; run \
             `sticky new` to start a session here",
            live.agent
        ))
        .into());
    };
    let home = dirs::home_dir().unwrap_or_default();
    let moving = Move {
        relocate,
        agent_home: relocate.home(&home),
        from: from.clone(),
        to: ctx.project.dir.clone(),
        id: id.to_owned(),
    };
    match standing(live) {
        // The agent's files name this directory already (a relocation whose record failed):
        // only the record is missing.
        Standing::Taken(Some(now)) if now == ctx.project.dir => {
            return store.immediate(|tx| tx.move_session(live.id, &ctx.project.dir));
        }
        Standing::Taken(now) => {
            let reason = taken(thread, live, now.as_deref(), &ctx.project.dir);
            return Err(StickyError::Elsewhere(reason).into());
        }
        Standing::Copy | Standing::Moved => {}
    }
    let files = relocate.files(&home, from, id)?;
    place::require_files(&files, &live.agent, id, from)?;
    let staging = tempfile::Builder::new()
        .prefix(".sticky-relocate-")
        .tempdir_in(moving.staging_root())?;
    let stagings = moving.stage_local(&files, staging.path())?;
    let placed = moving.place(&stagings, true)?;
    if let Err(error) = store.immediate(|tx| tx.move_session(live.id, &ctx.project.dir)) {
        placed.undo();
        return Err(error);
    }
    for (file, staged) in files.iter().zip(&stagings) {
        if let Stored::File(path) = &file.stored {
            if *path != moving.agent_home.join(&staged.relative) {
                // Best effort: the session runs from its new place whatever is left here.
                let _ = place::remove_moved(&moving.agent_home, &file.relative);
            }
        }
    }
    Ok(())
}

/// Why a conversation of a copy of the project is not relocated, and the way to a session of
/// the copy's own. Agents resume a session by its ID, wherever it runs (issue 23, finding 6):
/// the original's session carried into the copy (`export` there, `import` here) would be
/// resumed from both directories, each seeing the other's turns; so the way out is a new
/// session, with sticky's recap of the conversation so far (`--carry`, whose summary kind
/// never runs on the original's session from here), and the message says why not the other.
fn copied(thread: &str, from: &Path) -> String {
    let shown = super::view::escape(thread);
    let flag = if thread == "main" {
        String::new()
    } else {
        format!(" -t {shown}")
    };
    let from = super::view::escape(&from.display().to_string()).into_owned();
    format!(
        "thread {shown}: its session belongs to {from}, which still exists, so this is a copy \
         of the project rather than a move; run `sticky{flag} new --carry \"...\"` here for a \
         session of its own that starts with a recap of the conversation so far (sticky in \
         {from} goes on with the original's). Carrying the original's session over (export \
         there, import here) would not make it the copy's: both directories would resume one \
         agent session, each seeing the other's turns"
    )
}

/// The most bytes of an agent's session file read to find the directory it names: its first
/// lines name it (Claude's and Qwen's `cwd`, Codex's `session_meta`, Copilot's workspace).
const NAMING_BYTES: u64 = 1 << 20;

/// Where a live session recorded for another directory stands, for the advice that follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Its directory still exists: this project is a copy of it.
    Copy,
    /// Its directory is gone and the agent keeps the session there: the project moved here,
    /// or `sticky relocate` may carry it.
    Moved,
    /// Its directory is gone, and the agent keeps no file of the session for it any more:
    /// another copy of the project relocated it (to the directory named, when one is found),
    /// or the agent deleted it. `relocate` cannot carry it here: the session is not this
    /// copy's to take.
    Taken(Option<PathBuf>),
}

/// Where `live` (recorded for another directory than the project's) stands in this HOME.
pub fn standing(live: &SessionRow) -> Standing {
    let from = &live.directory;
    if from.exists() {
        return Standing::Copy;
    }
    let (Some(id), Some(relocate)) = (
        live.agent_session_id.as_deref(),
        relocation::for_agent(&live.agent),
    ) else {
        return Standing::Moved;
    };
    let home = dirs::home_dir().unwrap_or_default();
    let Ok(files) = relocate.files(&home, from, id) else {
        return Standing::Moved;
    };
    let agent_home = relocate.home(&home);
    if files.is_empty() {
        return Standing::Taken(encoded_elsewhere(relocate, &agent_home, id, from));
    }
    // An agent that finds a session by its ID alone (Codex, Copilot) still lists it: the
    // directory its files name tells whether another copy relocated it.
    let named = files.iter().find_map(|file| match &file.stored {
        Stored::File(_) => named_directory(relocate, &agent_home, &file.relative, from),
        Stored::Rows(json) => rows_directory(json),
    });
    match named {
        Some(dir) if dir != *from => Standing::Taken(Some(dir)),
        _ => Standing::Moved,
    }
}

/// For an agent that keeps sessions under an encoded directory name (Claude, Qwen): the
/// directory whose name now holds session `id` (recorded for `from`), read from its transcript.
fn encoded_elsewhere(
    relocate: &dyn Relocate,
    agent_home: &Path,
    id: &str,
    from: &Path,
) -> Option<PathBuf> {
    let (_, chats) = relocate.encoded_projects()?;
    let projects = Dir::open_top(&agent_home.join("projects")).ok()?;
    let transcript = format!("{id}.jsonl");
    projects
        .entries()
        .ok()?
        .into_iter()
        .filter(|(_, kind)| *kind == Kind::Dir)
        .find_map(|(name, _)| {
            let mut relative = PathBuf::from("projects").join(name);
            if let Some(chats) = chats {
                relative.push(chats);
            }
            relative.push(&transcript);
            named_directory(relocate, agent_home, &relative, from)
        })
}

/// The directory the agent's file `relative` (under `agent_home`, read without following a
/// link) names as the session's, by the first field [`Relocate::rewrites`] would rewrite for a
/// session of `from` that holds the directory itself (not a hash of it, as Gemini's
/// `projectHash`).
fn named_directory(
    relocate: &dyn Relocate,
    agent_home: &Path,
    relative: &Path,
    from: &Path,
) -> Option<PathBuf> {
    let top = Dir::open_top(agent_home).ok()?;
    let mut head = Vec::new();
    top.open_file(relative, Access::Read)
        .ok()?
        .take(NAMING_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    let fields = relocate.rewrites(relative, from, from);
    let value = |field: &relocation::Rewrite, bytes: &[u8]| -> Option<PathBuf> {
        let text = std::str::from_utf8(bytes).ok()?;
        // JSON escapes (`\/`, `\"`) as the agent wrote them, read back.
        let text = if field.end == b'"' {
            serde_json::from_str::<String>(&format!("\"{text}\"")).ok()?
        } else {
            text.to_owned()
        };
        Some(PathBuf::from(text))
    };
    let directories = fields
        .iter()
        .filter(|field| value(field, &field.old).as_deref() == Some(from));
    directories.into_iter().find_map(|field| {
        let at = find(&head, &field.before)? + field.before.len();
        let len = head[at..].iter().position(|&b| b == field.end)?;
        value(field, &head[at..at + len])
    })
}

/// The directory the session row of a rows document names (opencode's `session.directory`,
/// as `relocation::rows::export` writes them: `{"session": ID, "tables": {"session": [...]}}`).
fn rows_directory(json: &[u8]) -> Option<PathBuf> {
    let rows: serde_json::Value = serde_json::from_slice(json).ok()?;
    rows["tables"]["session"]
        .as_array()?
        .iter()
        .find_map(|row| row["directory"].as_str())
        .map(PathBuf::from)
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len().max(1))
        .position(|window| window == needle)
}

/// The advice for thread `thread`, whose live session `live` belongs to another directory than
/// `project`, when it is not the plain copy's (`None` then: the caller's own words stand): a
/// session another copy took (it names where it lives now, and `sticky new --carry`), or a
/// project that moved here (`sticky relocate`, without the gone directory as a place to go on).
pub fn advice(thread: &str, live: &SessionRow, project: &Path) -> Option<String> {
    let shown = escape(thread);
    let from = escape(&live.directory.display().to_string()).into_owned();
    let id = live.agent_session_id.as_deref().unwrap_or("not named yet");
    match standing(live) {
        Standing::Copy => None,
        Standing::Moved => Some(format!(
            "thread {shown}: the {} session #{} (session {}) belongs to directory {from}, which \
             is gone; if the project moved here, run `sticky relocate` to go on with it here; \
             else run `sticky new` to start a session here (the old one stays on record), or set \
             STICKY_DB to keep this project's state apart",
            live.agent,
            live.id,
            escape(id),
        )),
        Standing::Taken(now) => Some(taken(thread, live, now.as_deref(), project)),
    }
}

/// Why a copy cannot go on with a session another copy of the project took, and the way to a
/// session of its own.
pub fn taken(thread: &str, live: &SessionRow, now: Option<&Path>, project: &Path) -> String {
    let shown = escape(thread);
    let flag = if thread == "main" {
        String::new()
    } else {
        format!(" -t {shown}")
    };
    let from = escape(&live.directory.display().to_string()).into_owned();
    let id = escape(live.agent_session_id.as_deref().unwrap_or_default()).into_owned();
    let agent = &live.agent;
    let way_out = format!(
        "run `sticky{flag} new --carry \"...\"` here for a session of its own that starts with a \
         recap of the conversation so far"
    );
    match now {
        // Only a relocation whose record failed leaves it so; `relocate` records it.
        Some(now) if now == project => format!(
            "thread {shown}: {agent} session {id} was recorded in {from}, which is gone, and \
             {agent} keeps it for this directory already; run `sticky relocate` to record it here"
        ),
        Some(now) => {
            let now = escape(&now.display().to_string()).into_owned();
            format!(
                "thread {shown}: {agent} session {id} was recorded in {from}, which is gone, and \
                 another copy of this project took it since: it now belongs to {now} (sticky \
                 there goes on with it). This project is another copy, and one agent session \
                 goes on in one project only: {way_out}"
            )
        }
        None => format!(
            "thread {shown}: {agent} session {id} was recorded in {from}, which is gone, and \
             {agent} keeps no file of it for that directory any more (another copy of this \
             project relocated it, or {agent} deleted it), so `sticky relocate` cannot carry it \
             here: {way_out}"
        ),
    }
}
