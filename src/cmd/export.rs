//! `sticky export`: the conversation and its live session's files in one bundle (see
//! [`crate::bundle`]), to a file or a pipe, for `sticky import` in another directory, HOME or
//! machine.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result};
use serde::Serialize;

use super::Context;
use super::output::Report;
use super::{Call, Run, json_keys};
use crate::agent::relocation::{self, MovingFile, Stored};
use crate::bundle::{self, Carried, Manifest, Source, place};

use crate::exit::StickyError;
use crate::store::{SessionRow, WholeTurn};

mod document;
mod redact;

/// Where `sticky export` writes the bundle.
#[derive(Debug, clap::Args, Clone, Default)]
pub struct Args {
    /// Write the bundle to FILE (`-` for stdout, the default when stdout is not a terminal).
    /// FILE may be a new file, an empty one or an earlier bundle; never a directory nor a
    /// path in sticky's own state (`.sticky/`, the database and its companions).
    #[arg(short, long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub output: Option<PathBuf>,

    /// Overwrite FILE even when it is not a sticky bundle (or is a link, which is replaced).
    #[arg(long)]
    pub force: bool,

    /// What to write: `bundle` (for `sticky import`), `markdown` (a document a reviewer reads:
    /// each turn's prompt, answer, agent, model, time and cost, and the rotations and carries
    /// between sessions) or `json` (the same, as one JSON document). Markdown and JSON need no
    /// agent files, go to a terminal too, and have secrets replaced by `[redacted]`.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = ExportFormat::Bundle)]
    pub format: ExportFormat,

    /// Keep what looks like a secret (API keys, tokens, passwords, the values of environment
    /// variables named like secrets) in a markdown or JSON export.
    #[arg(long)]
    pub no_redact: bool,
}

/// What `sticky export` writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// The conversation and its agent session's files, for `sticky import`.
    #[default]
    Bundle,
    /// A document to read.
    Markdown,
    /// The document as JSON.
    Json,
}

impl ExportFormat {
    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bundle => "bundle",
            Self::Markdown => "markdown",
            Self::Json => "json",
        }
    }
}

/// How long export waits for a turn running on the conversation to end.
const WAIT: Duration = Duration::from_secs(600);

/// The `--json` object of `sticky export -o FILE`.
#[derive(Serialize, Default)]
struct Exported<'a> {
    thread: &'a str,
    /// The directory the session ran in.
    project: &'a str,
    agent: &'a str,
    agent_session_id: Option<&'a str>,
    file: Option<String>,
    /// `bundle`, `markdown` or `json`.
    format: &'a str,
    /// How many of the session's files the bundle holds (0 for a document).
    files: usize,
    /// Their total size, or the document's own.
    bytes: u64,
    /// How many turns.
    turns: usize,
}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(&call.context()?, self)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<Exported<'static>>()
    }

    fn reports(&self) -> bool {
        false
    }
}

/// Writes the bundle of the conversation to `-o FILE`, or to stdout when it is not a terminal.
fn run(ctx: &Context, args: &Args) -> Result<Report> {
    if args.format != ExportFormat::Bundle {
        return export_document(ctx, args);
    }
    if args.no_redact {
        return Err(StickyError::Usage(
            "--no-redact is for --format markdown or json: a bundle carries the conversation \
             as it is, for sticky import"
                .into(),
        )
        .into());
    }
    let to_stdout = to_stdout(ctx, args)?;
    if let Some(path) = args.output.as_deref().filter(|_| !to_stdout) {
        check_output(ctx, path, args.force, &BUNDLE)?;
    }
    // The lock stays held until the bundle is written: no turn appends meanwhile.
    let (manifest, sources, program, _lock) = gather(ctx)?;
    let written = write_bundle(args, to_stdout, manifest, &sources, program)?;
    report(ctx, args, to_stdout, &written)
}

/// Whether the bundle goes to stdout (no `-o`, or `-o -`); refuses a terminal there, and
/// `--json`, whose report would share stdout with the bundle.
fn to_stdout(ctx: &Context, args: &Args) -> Result<bool> {
    let to_stdout = args
        .output
        .as_deref()
        .is_none_or(|path| path == Path::new("-"));
    if to_stdout && std::io::stdout().is_terminal() {
        return Err(StickyError::Usage(
            "refusing to write a bundle (binary) to the terminal; give -o FILE, or redirect it \
             (sticky export > FILE, sticky export | ssh host sticky import -)"
                .into(),
        )
        .into());
    }
    if to_stdout && ctx.json {
        return Err(StickyError::Usage(
            "--json prints a report on stdout, where the bundle would go; give -o FILE".into(),
        )
        .into());
    }
    Ok(to_stdout)
}

/// The first bytes of a zstd frame, which every bundle starts with.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// What `-o` writes, as `check_output` names it: its noun, an example file name, and how an
/// earlier one of the same kind is told (which `-o` replaces).
#[derive(Clone, Copy)]
struct Kind {
    noun: &'static str,
    example: &'static str,
    earlier: fn(&Path) -> bool,
}

const BUNDLE: Kind = Kind {
    noun: "bundle",
    example: "NAME.sticky",
    earlier: is_bundle,
};
const MARKDOWN: Kind = Kind {
    noun: "markdown export",
    example: "NAME.md",
    earlier: is_markdown_export,
};
const JSON: Kind = Kind {
    noun: "JSON export",
    example: "NAME.json",
    earlier: is_json_export,
};

/// Refuses an output `-o` must not write: a directory; a path among sticky's own state (the
/// project's `.sticky/`, the database and its companions, whatever links lead there), which
/// the export would replace; anything but a regular file; and, unless `force`, a file that is
/// not an earlier export of the same `kind` (an empty file is taken:
/// `mktemp` makes one).
fn check_output(ctx: &Context, path: &Path, force: bool, kind: &Kind) -> Result<()> {
    let Kind {
        noun,
        example,
        earlier,
    } = *kind;
    let shown = super::view::escape(&path.display().to_string()).into_owned();
    let refuse = |why: String| Err(StickyError::Usage(why).into());
    if path.is_dir() {
        return refuse(format!(
            "{shown} is a directory; give the {noun} a file name in it (sticky export -o \
             {}/{example})",
            shown.trim_end_matches('/')
        ));
    }
    if let Some(what) = in_state(ctx, path) {
        return refuse(format!(
            "{shown} is inside {what}, sticky's own state, which a {noun} written there would \
             overwrite (--force or not); write the {noun} elsewhere (sticky export -o \
             ../{example})"
        ));
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {shown}")),
    };
    if meta.file_type().is_symlink() {
        if force {
            return Ok(());
        }
        return refuse(format!(
            "{shown} is a symbolic link; export would replace the link itself with the {noun}: \
             give --force to do so, or another file name"
        ));
    }
    if !meta.is_file() {
        return refuse(format!(
            "{shown} is not a regular file (a device, a pipe or a socket); give a file name, or \
             write the {noun} to stdout (sticky export > FILE)"
        ));
    }
    if force || meta.len() == 0 || earlier(path) {
        return Ok(());
    }
    refuse(format!(
        "{shown} exists and is not a sticky {noun}; export replaces only an earlier one: give --force \
         to overwrite it, or another file name (nothing was written)"
    ))
}

/// Which of sticky's state `path` would be written into, if any: the project's `.sticky/`,
/// the database's lock and vault directories, or a file beside the database named after it
/// (the database, its journal and write-ahead files). Compared as the paths resolve, so a link
/// to any of them counts as the place it leads to.
fn in_state(ctx: &Context, path: &Path) -> Option<String> {
    let target = match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if parent.as_os_str().is_empty() => {
            resolved(Path::new(".")).join(name)
        }
        (Some(parent), Some(name)) => resolved(parent).join(name),
        _ => resolved(path),
    };
    let state = &ctx.project.state;
    let dirs = [
        ctx.project.dir.join(crate::state::STATE_DIR),
        state.locks.clone(),
        state.vault.clone(),
    ];
    if let Some(dir) = dirs.iter().find(|dir| target.starts_with(resolved(dir))) {
        return Some(dir.display().to_string());
    }
    let db = resolved(&state.db);
    let named_after = match (target.file_name(), db.file_name()) {
        (Some(name), Some(db_name)) => name
            .as_encoded_bytes()
            .starts_with(db_name.as_encoded_bytes()),
        _ => false,
    };
    (named_after && target.parent() == db.parent())
        .then(|| format!("the database {} and its companions", state.db.display()))
}

/// `path` made absolute with its longest existing ancestor resolved (links and `..`), the
/// rest as written.
fn resolved(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut rest = Vec::new();
    let mut current = absolute.as_path();
    loop {
        if let Ok(canonical) = current.canonicalize() {
            return rest
                .iter()
                .rev()
                .fold(canonical, |path, name| path.join(name));
        }
        match (current.parent(), current.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                current = parent;
            }
            _ => return absolute,
        }
    }
}

/// `--format markdown|json`: the conversation as a document, from the database alone, to
/// stdout (a terminal too: it is text) or to `-o FILE`, written whole or not at all.
fn export_document(ctx: &Context, args: &Args) -> Result<Report> {
    let to_stdout = document_target(ctx, args)?;
    let Some(store) = ctx.existing_store()? else {
        return Err(no_thread(ctx));
    };
    let Some(thread) = store.thread(&ctx.thread)? else {
        return Err(no_thread(ctx));
    };
    let sessions = store.sessions(thread.id)?;
    let Some(last) = sessions.last() else {
        return Err(no_thread(ctx));
    };
    let turns = store.whole_turns(thread.id)?;
    let conversation = document::Conversation {
        thread: &thread.name,
        project: ctx.project.dir.display().to_string(),
        sessions: &sessions,
        turns: &turns,
        exported_at: crate::store::now(),
    };
    let redactor = (!args.no_redact).then(redact::Redactor::from_environment);
    let text = match args.format {
        ExportFormat::Json => conversation.json(redactor.as_ref()),
        _ => conversation.markdown(redactor.as_ref()),
    };
    if !write_document(args.output.as_deref().filter(|_| !to_stdout), &text)? {
        return Ok(Report::nothing());
    }
    let file = args.output.as_ref().filter(|_| !to_stdout);
    if ctx.json {
        return Report::json(&Exported {
            thread: &thread.name,
            project: &conversation.project,
            agent: &last.agent,
            agent_session_id: last.agent_session_id.as_deref(),
            file: file.map(|path| path.display().to_string()),
            format: args.format.name(),
            files: 0,
            bytes: text.len() as u64,
            turns: turns.len(),
        });
    }
    if let Some(path) = file {
        note!(
            "exported thread {} ({} turn{}, {} bytes of {}) to {}",
            super::view::escape(&thread.name),
            turns.len(),
            if turns.len() == 1 { "" } else { "s" },
            text.len(),
            args.format.name(),
            super::view::escape(&path.display().to_string()),
        );
    }
    Ok(Report::nothing())
}

/// Whether the document goes to stdout (no `-o FILE`, or `-o -`); refuses `--json` there, and
/// an `-o FILE` that is no earlier export of the same kind (unless `--force`).
fn document_target(ctx: &Context, args: &Args) -> Result<bool> {
    let to_stdout = args
        .output
        .as_deref()
        .is_none_or(|path| path == Path::new("-"));
    if to_stdout && ctx.json {
        return Err(StickyError::Usage(format!(
            "--json prints a report on stdout, where the {} would go; give -o FILE",
            args.format.name()
        ))
        .into());
    }
    let kind = match args.format {
        ExportFormat::Json => &JSON,
        _ => &MARKDOWN,
    };
    if let Some(path) = args.output.as_deref().filter(|_| !to_stdout) {
        check_output(ctx, path, args.force, kind)?;
    }
    Ok(to_stdout)
}

/// Writes the document to `path` (whole or not at all), else to stdout; `false` when the
/// reader of stdout stopped reading (`| head`), which ends the export quietly, as it ends
/// `log`.
fn write_document(path: Option<&Path>, text: &str) -> Result<bool> {
    if let Some(path) = path {
        write_text(path, text)?;
        return Ok(true);
    }
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        written => {
            written.context("cannot write the export to stdout")?;
            Ok(true)
        }
    }
}

/// Whether the file at `path` starts as a markdown export does.
fn is_markdown_export(path: &Path) -> bool {
    starts_with(path, document::MARKDOWN_MARK.as_bytes())
}

/// Whether the file at `path` starts as a JSON export does (its `format` key first).
fn is_json_export(path: &Path) -> bool {
    let start = format!("{{\n  \"format\": \"{}\"", document::JSON_FORMAT);
    starts_with(path, start.as_bytes())
}

fn starts_with(path: &Path, start: &[u8]) -> bool {
    use std::io::Read as _;
    let mut head = vec![0; start.len()];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut head))
        .is_ok_and(|()| head == start)
}

/// Writes `text` to `path` through a private file beside it, renamed over it once whole.
fn write_text(path: &Path, text: &str) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    };
    let mut staged = tempfile::Builder::new()
        .prefix(".sticky-export-")
        .tempfile_in(&dir)
        .with_context(|| format!("cannot write the export in {}", dir.display()))?;
    staged.write_all(text.as_bytes())?;
    staged.as_file().sync_all()?;
    staged
        .persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Whether the file at `path` is a sticky bundle: a zstd frame whose archive starts with the
/// manifest's entry.
fn is_bundle(path: &Path) -> bool {
    use std::io::Read as _;
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let mut magic = [0; 4];
    if file.read_exact(&mut magic).is_err() || magic != ZSTD_MAGIC {
        return false;
    }
    let Ok(mut decoder) = zstd::stream::read::Decoder::new((&magic[..]).chain(file)) else {
        return false;
    };
    let mut header = [0; 512];
    if decoder.read_exact(&mut header).is_err() {
        return false;
    }
    let name = bundle::MANIFEST.as_bytes();
    header.starts_with(name) && header[name.len()] == 0
}

/// Writes the bundle to its file or stdout, probing the agent's version meanwhile; returns
/// the manifest as written.
fn write_bundle(
    args: &Args,
    to_stdout: bool,
    manifest: Manifest,
    sources: &[Carried],
    program: Option<PathBuf>,
) -> Result<Manifest> {
    std::thread::scope(|scope| -> Result<Manifest> {
        let probe = scope.spawn(|| program.and_then(|program| super::probe::version(&program)));
        let version =
            |manifest: &mut Manifest| manifest.agent.version = probe.join().ok().flatten();
        if let Some(path) = args.output.as_deref().filter(|_| !to_stdout) {
            write_file(path, manifest, sources, version)
        } else {
            let stdout = std::io::BufWriter::new(std::io::stdout().lock());
            let (mut out, manifest) = bundle::write(stdout, manifest, sources, version)?;
            out.flush().context("cannot write the bundle to stdout")?;
            Ok(manifest)
        }
    })
}

/// What was exported: a JSON report with `--json`, else a line on stderr unless `--quiet`.
fn report(ctx: &Context, args: &Args, to_stdout: bool, written: &Manifest) -> Result<Report> {
    let size: u64 = written.files.iter().map(|file| file.size).sum();
    let live = written
        .live()
        .and_then(|s| s.agent_session_id.clone())
        .unwrap_or_default();
    if ctx.json {
        return Report::json(&Exported {
            thread: &written.thread.name,
            project: &written.project,
            agent: &written.agent.name,
            agent_session_id: Some(&live),
            file: args.output.as_ref().map(|path| path.display().to_string()),
            format: args.format.name(),
            files: written.files.len(),
            bytes: size,
            turns: written.turns.len(),
        });
    }
    let target = args
        .output
        .as_ref()
        .filter(|_| !to_stdout)
        .map_or_else(|| "stdout".to_owned(), |path| path.display().to_string());
    note!(
        "exported thread {} ({} session {live}, {} turn{}, {} file{}, {size} bytes) \
         to {}",
        super::view::escape(&written.thread.name),
        written.agent.name,
        written.turns.len(),
        if written.turns.len() == 1 { "" } else { "s" },
        written.files.len(),
        if written.files.len() == 1 { "" } else { "s" },
        super::view::escape(&target),
    );
    Ok(Report::nothing())
}

/// What export writes: the manifest (files not yet hashed, no agent version yet), the files
/// of the conversation's live session, the agent's program (for its version), and the
/// conversation's turn lock, held until the bundle is written.
type Gathered = (
    Manifest,
    Vec<Carried>,
    Option<PathBuf>,
    crate::lock::ReadLock,
);

/// The manifest and the files of the conversation's live session, read while the
/// conversation's turn lock is held.
fn gather(ctx: &Context) -> Result<Gathered> {
    let Some(store) = ctx.existing_store()? else {
        return Err(no_thread(ctx));
    };
    let Some(thread) = store.thread(&ctx.thread)? else {
        return Err(no_thread(ctx));
    };
    super::nested::refuse_inside_own_turn(
        &store,
        &ctx.thread,
        "export it from outside that turn, once it has ended",
    )?;
    let lock = lock_thread(ctx)?;
    let sessions = store.sessions(thread.id)?;
    let turns = store.whole_turns(thread.id)?;
    let Some(live) = sessions.iter().rev().find(|s| s.ended_at.is_none()) else {
        return Err(no_thread(ctx));
    };
    // A transcript behind the vault's copy (another agent home than the last turn's) would
    // carry a session without turns the bundle records (review 25, M5): caught up as a turn's.
    if live.confirmed_at.is_some() {
        super::vault::catch_up(ctx, &store, live, &ctx.thread)?;
    }
    let files = session_files(ctx, live, &turns)?;
    let program = ctx
        .agents
        .get(&live.agent)
        .ok()
        .and_then(|adapter| ctx.program(adapter).ok());
    let mut manifest = manifest(&thread.name, thread.created_at, live, &sessions, &turns)?;
    manifest.database = recorded_database(ctx);
    fit_answers(&mut manifest);
    Ok((manifest, sources(files), program, lock))
}

/// The database the manifest names for the project ([`Manifest::database`]): the one
/// `STICKY_DB` chose, canonical (so no link is on its path), when its path is UTF-8.
fn recorded_database(ctx: &Context) -> Option<String> {
    if !ctx.project.db_overridden {
        return None;
    }
    let db = std::fs::canonicalize(&ctx.project.state.db).ok()?;
    db.to_str().map(str::to_owned)
}

/// Keeps the kept answers within half of what import reads of a manifest, and the prompts
/// within a quarter (the rest is room for the other fields and JSON's escapes), cutting the
/// oldest first, and says so.
fn fit_answers(manifest: &mut Manifest) {
    let limit = usize::try_from(bundle::Limits::default().manifest).unwrap_or(usize::MAX);
    let cut = manifest.fit_prompts(limit / 4);
    if cut > 0 {
        let turns = if cut == 1 { "turn" } else { "turns" };
        note!(
            "cut the prompts of the oldest {cut} {turns} to their first {} bytes in the bundle \
             (piped logs an older sticky recorded whole), so it stays within the {} bytes of \
             prompts a bundle carries",
            crate::store::PROMPT_RECORD,
            limit / 4
        );
    }
    let budget = limit / 2;
    let dropped = manifest.fit_answers(budget);
    if dropped > 0 {
        let turns = if dropped == 1 { "turn" } else { "turns" };
        note!(
            "left the answers of the oldest {dropped} {turns} out of the bundle, so it \
             stays within the {budget} bytes of answers a bundle carries"
        );
    }
}

/// Takes the conversation's lock to read it, waiting for a running turn to end. Export only
/// reads, so the lock is a reader's (see `lock::lock_to_read`): a state on a read-only mount
/// exports too.
fn lock_thread(ctx: &Context) -> Result<crate::lock::ReadLock> {
    Ok(
        crate::lock::lock_to_read(&ctx.project.state.locks, &ctx.thread, WAIT, &mut || {
            note!("waiting for the turn running on thread {}", ctx.thread);
        })?
        .ok_or_else(|| StickyError::Busy(format!("a turn still runs on thread {}", ctx.thread)))?,
    )
}

/// The live session's files: the agent's own, else the vault's copy; refuses a session
/// without an id, of an agent whose files sticky cannot move, or whose files are missing.
fn session_files(ctx: &Context, live: &SessionRow, turns: &[WholeTurn]) -> Result<Vec<MovingFile>> {
    if let Some(from) = live
        .forked_from
        .as_ref()
        .filter(|_| live.confirmed_at.is_none())
    {
        // Not lost: the agent makes the fork at its first turn (`cmd/turn/fork.rs`).
        return Err(StickyError::Usage(format!(
            "thread {}: the fork of thread {} is made at its first turn, which it has not had \
             yet, so there is nothing to export; run it (sticky {} \"PROMPT\"), or export \
             thread {}",
            super::view::escape(&ctx.thread),
            super::view::escape(&from.thread),
            super::view::thread_option(&ctx.thread),
            super::view::escape(&from.thread),
        ))
        .into());
    }
    let Some(id) = live.agent_session_id.as_deref() else {
        return Err(StickyError::Usage(format!(
            "thread {}: the agent has not named its session yet, so there is nothing to export",
            ctx.thread
        ))
        .into());
    };
    let Some(relocate) = relocation::for_agent(&live.agent) else {
        return Err(StickyError::Usage(format!(
            "thread {}: sticky does not know where agent `{}` keeps its sessions (only the \
             built-in agents can be exported)",
            ctx.thread, live.agent
        ))
        .into());
    };
    let home = crate::settings::home()?;
    let mut files = relocate.files(&home, &live.directory, id)?;
    if files.is_empty() {
        files = from_vault(ctx, &live.agent, id)?;
        // Only the copies of the files the agent keeps for the session's directory: one under
        // another directory's name (an older sticky's copy from before a move) is no file of it.
        let agent_home = relocate.home(&home);
        files.retain(|file| {
            relocate
                .place(
                    &agent_home,
                    &file.relative,
                    id,
                    &live.directory,
                    &live.directory,
                )
                .is_ok_and(|placed| placed == file.relative)
        });
        refuse_behind(ctx, live, id, turns)?;
    }
    place::require_files(&files, &live.agent, id, &live.directory)?;
    Ok(files)
}

/// The files as the bundle carries them: named by their relative path, rows marked.
fn sources(files: Vec<MovingFile>) -> Vec<Carried> {
    files
        .into_iter()
        .map(|file| {
            let rows = matches!(file.stored, Stored::Rows(_));
            let source = match file.stored {
                Stored::File(path) => Source::File(path),
                Stored::Rows(bytes) => Source::Bytes(bytes),
            };
            (file.relative.to_string_lossy().into_owned(), source, rows)
        })
        .collect()
}

/// The vault's copy of the session's files (`crate::vault`), for a session whose files the
/// agent no longer has (swept, deleted by hand): the agent's own files come first, since the
/// vault mirrors them after every turn and they are what the agent resumes from.
fn from_vault(ctx: &Context, agent: &str, id: &str) -> Result<Vec<MovingFile>> {
    let vault = crate::vault::Vault::new(ctx.project.state.vault.clone());
    let mut files: Vec<MovingFile> = vault
        .files(agent, id)?
        .into_iter()
        .filter(|file| file.keeping != crate::agent::Keeping::Shared)
        .filter(|file| !file.relative.ends_with(".project_root"))
        .map(|file| MovingFile {
            relative: file.relative,
            stored: Stored::File(file.copy),
        })
        .collect();
    // A session kept as database rows (opencode) is in the vault as one document of them.
    // Both are proved to be the copies sticky made (size and SHA-256) as the vault reads them.
    if let (Some(document), Some(relocate)) = (vault.rows(agent, id)?, relocation::for_agent(agent))
    {
        files.extend(relocate.vault_rows(id, &document)?);
    }
    Ok(files)
}

/// Refuses a vault copy of session `id` that ends before turns the database records on it
/// (`turns`), as a restore does (`cmd/turn/vault.rs`): imported, the agent would resume the
/// session with those turns forgotten, and nobody would see it.
fn refuse_behind(ctx: &Context, live: &SessionRow, id: &str, turns: &[WholeTurn]) -> Result<()> {
    let vault = crate::vault::Vault::new(ctx.project.state.vault.clone());
    let Some(manifest) = vault.manifest(&live.agent, id)? else {
        return Ok(());
    };
    let rows = turns
        .iter()
        .map(|turn| &turn.row)
        .filter(|row| row.session_id == live.id);
    let missing = manifest.lacks(rows);
    if missing.is_empty() {
        return Ok(());
    }
    let named: Vec<String> = missing
        .iter()
        .take(3)
        .map(|row| super::view::turn_name(row))
        .chain((missing.len() > 3).then(|| format!("{} more", missing.len() - 3)))
        .collect();
    let one = missing.len() == 1;
    Err(StickyError::SessionLost {
        agent: live.agent.clone(),
        session: id.to_owned(),
        reason: format!(
            "its files are gone from this HOME, and sticky's vault copy of them ends before \
             turn{} {} (copying {} into the vault failed), so a bundle of it would resume \
             without {}; nothing was written. `sticky{} new --carry \"...\"` goes on in a new \
             session that starts with a recap of the whole conversation, which exports",
            if one { "" } else { "s" },
            named.join(", "),
            if one { "it" } else { "them" },
            if one { "that turn" } else { "those turns" },
            super::view::thread_flag(&ctx.thread),
        ),
    }
    .into())
}

fn no_thread(ctx: &Context) -> anyhow::Error {
    StickyError::Usage(format!(
        "thread {} has no session in this project to export (see `sticky threads`)",
        ctx.thread
    ))
    .into()
}

/// The manifest of the conversation: its rows as the store holds them; refuses a directory
/// that is not UTF-8, which the manifest's JSON cannot hold.
fn manifest(
    name: &str,
    created_at: i64,
    live: &SessionRow,
    sessions: &[SessionRow],
    turns: &[WholeTurn],
) -> Result<Manifest> {
    for session in sessions {
        if session.directory.to_str().is_none() {
            return Err(StickyError::Usage(format!(
                "{} is not UTF-8, which a bundle cannot carry",
                session.directory.display()
            ))
            .into());
        }
    }
    Ok(Manifest {
        format: bundle::FORMAT,
        sticky: env!("CARGO_PKG_VERSION").to_owned(),
        agent: bundle::Agent {
            name: live.agent.clone(),
            version: None,
        },
        project: live.directory.display().to_string(),
        home: crate::settings::home()?.to_str().map(str::to_owned),
        database: None,
        thread: bundle::Thread {
            name: name.to_owned(),
            created_at,
        },
        sessions: sessions.to_vec(),
        turns: turns.to_vec(),
        files: Vec::new(),
    })
}

/// Writes the bundle to `path` through a private file beside it, renamed over it once whole,
/// so a failed export never leaves a partial bundle under the name.
fn write_file(
    path: &Path,
    manifest: Manifest,
    sources: &[Carried],
    hashed: impl FnOnce(&mut Manifest),
) -> Result<Manifest> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    };
    let staged = tempfile::Builder::new()
        .prefix(".sticky-export-")
        .tempfile_in(&dir)
        .with_context(|| format!("cannot write a bundle in {}", dir.display()))?;
    let (out, manifest) =
        bundle::write(std::io::BufWriter::new(staged), manifest, sources, hashed)?;
    let staged = out
        .into_inner()
        .map_err(std::io::IntoInnerError::into_error)?;
    staged.as_file().sync_all()?;
    staged
        .persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(manifest)
}
