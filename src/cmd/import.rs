//! `sticky import FILE|-`: a conversation from `sticky export` added to this project, its
//! session's files verified, rewritten for this directory and placed where the agent in this
//! HOME looks for them, so the next turn resumes the same agent session with its history.

use std::io::{IsTerminal, Read};
use std::os::fd::AsFd as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result};
use serde::Serialize;

use super::Context;
use super::kept;
use super::output::Report;
use super::{Call, Run, json_keys};
use crate::agent::relocation::{self, Rewrite};
use crate::bundle::place::{Move, Staging};
use crate::bundle::{self, Limits, Manifest};
use crate::exit::StickyError;
use crate::store::{SessionRow, TurnRow};
use crate::vault::Vault;

/// What `sticky import` reads and how it names the thread.
#[derive(Debug, clap::Args, Clone, Default)]
pub struct Args {
    /// The bundle written by `sticky export`; `-` reads it from stdin.
    #[arg(value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub file: PathBuf,

    /// Add the conversation as thread NAME instead of the name it had.
    #[arg(long = "as", value_name = "NAME", conflicts_with = "replace")]
    pub as_name: Option<String>,

    /// Replace a thread of the same name in this project: its sessions, turns and vault copies
    /// are removed (asked first when stdin is a terminal). The agent's files of the bundle's
    /// session are placed over only where they hold nothing the bundle lacks, and a session
    /// another project of this HOME resumes is never taken.
    #[arg(long)]
    pub replace: bool,

    /// Answer yes to what import asks: replacing a thread (--replace), and placing a bundle
    /// whose manifest and files add up to more than 256 MiB, or more than 8 MiB and 200 times the bundle's
    /// size (what no real session comes near; refused without --yes when there is no terminal
    /// to ask on).
    #[arg(short, long)]
    pub yes: bool,
}

/// How long import waits for a turn running on a thread of the same name to end.
const WAIT: Duration = Duration::from_secs(600);

/// What the manifest decided: how the session moves, the thread's name, the destinations.
struct Plan<'a> {
    moving: Move<'a>,
    name: String,
    destinations: Vec<PathBuf>,
}

/// The thread `--replace` removes: its sessions and how many turns it had.
struct Replaced {
    sessions: Vec<SessionRow>,
    turns: Vec<TurnRow>,
}

/// The `--json` object of `sticky import`.
#[derive(Serialize, Default)]
struct Imported<'a> {
    /// The name the thread was added under.
    thread: &'a str,
    /// This project's directory.
    project: String,
    /// The project it was exported from.
    from: &'a str,
    agent: &'a str,
    agent_session_id: &'a str,
    sessions: usize,
    turns: usize,
    files: usize,
    /// What `--replace` removed.
    replaced: Option<serde_json::Value>,
}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(&call.unthreaded()?, self)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<Imported<'static>>()
    }

    fn refuses_thread(&self) -> Option<&'static str> {
        Some("--as NAME names the thread it adds")
    }
}

/// Verifies the bundle, places its files, then adds the thread.
fn run(ctx: &Context, args: &Args) -> Result<Report> {
    let bundle = open(&args.file)?;
    let home = crate::settings::home()?;
    let existing = ctx.existing_store()?;
    let Some((staged, plan)) = read(ctx, args, bundle, &home, existing.as_ref())? else {
        crate::msg::write(format_args!("nothing imported"));
        return Ok(Report::nothing());
    };
    let manifest = &staged.manifest;
    let stagings: Vec<Staging> = staged
        .files
        .iter()
        .zip(&manifest.files)
        .zip(&plan.destinations)
        .map(|((staged, file), relative)| Staging {
            staged: staged.clone(),
            relative: relative.clone(),
            rows: file.rows,
        })
        .collect();
    // Checked before the lock, which makes the state directory: a refused import makes no
    // `.sticky/` (`place` checks again under the lock).
    plan.moving.refuse_holding_more(&stagings)?;
    let replaced = replaced(args, existing.as_ref(), &plan.name)?;
    if let Some(replaced) = &replaced {
        refuse_shared_replace(ctx, replaced, &plan.name)?;
        refuse_vault_ahead(ctx, replaced, &plan, manifest)?;
        if !args.yes && !confirmed(&describe(&plan.name, replaced))? {
            crate::msg::write(format_args!("nothing imported"));
            return Ok(Report::nothing());
        }
    }
    // Held from the checks that no other project of this HOME keeps the session, made again
    // now, until the thread is added: another import (or relocate) of it meanwhile is seen.
    // Taken before the thread's lock, which makes the state directory: refused, nothing is made.
    let _claim = kept::claim(&manifest.agent.name, &plan.moving.id)?;
    plan.moving.refuse_shared(&plan.destinations)?;
    refuse_kept_at_source(ctx, manifest, plan.moving.relocate, &plan.moving.id)?;
    let _lock = crate::lock::lock(&ctx.project.state.locks, &plan.name, WAIT, &mut || {})?
        .ok_or_else(|| StickyError::Busy(format!("a turn still runs on thread {}", plan.name)))?;
    // Again under the thread's lock: a turn that ran meanwhile may have copied more.
    if let Some(replaced) = &replaced {
        refuse_vault_ahead(ctx, replaced, &plan, manifest)?;
    }
    // Never over what holds more than the bundle, `--replace` or not: that replaces a thread
    // of this project, not turns of the agent's own files.
    let placed = plan.moving.place(&stagings, false)?;
    if let Err(error) = add_thread(ctx, &plan, manifest, args.replace) {
        placed.undo();
        return Err(error);
    }
    let copies = match &replaced {
        Some(replaced) => remove_copies(ctx, replaced)?,
        None => 0,
    };
    report(ctx, &plan, manifest, replaced.as_ref().map(|r| (r, copies)))
}

/// Reads and verifies the bundle (`open`'s), and decides where its files go and the thread's name;
/// `None` when the user declined a bundle that expands past the limits.
fn read<'a>(
    ctx: &Context,
    args: &Args,
    (input, size): (Box<dyn Read>, Option<u64>),
    home: &Path,
    existing: Option<&crate::store::Store>,
) -> Result<Option<(bundle::Staged, Plan<'a>)>> {
    let mut plan = None;
    let mut declined = false;
    // A bundle whose size is not known before (a pipe) is held to the expansion limits as it
    // is read; one whose size is known, before anything is read of its files.
    let limits = Limits {
        expansion: (size.is_none() && !args.yes).then_some(bundle::EXPANSION),
        // Nor is a manifest parsed that expands past them on its own.
        manifest_expansion: (!args.yes).then_some(bundle::EXPANSION),
        bundle_size: size,
        ..Limits::default()
    };
    let staged = bundle::read(input, limits, &mut |manifest, manifest_bytes| {
        let (decided, inspected) = inspect(ctx, args, home, existing, manifest)?;
        // The manifest counts: its turns are written into the database.
        let total = manifest.files.iter().map(|file| file.size).sum::<u64>() + manifest_bytes;
        if let Some(why) = bundle::EXPANSION.exceeded(total, size) {
            if !args.yes && !confirmed_expansion(&args.file, &why)? {
                declined = true;
                anyhow::bail!("declined");
            }
        }
        plan = Some(decided);
        Ok(inspected)
    });
    if declined {
        return Ok(None);
    }
    let staged = staged.map_err(|error| usage(&args.file, error))?;
    let Some(plan) = plan else {
        anyhow::bail!("the bundle was read without its manifest being seen");
    };
    Ok(Some((staged, plan)))
}

/// The thread of this project `--replace` would remove, if there is one.
fn replaced(
    args: &Args,
    existing: Option<&crate::store::Store>,
    name: &str,
) -> Result<Option<Replaced>> {
    let (true, Some(store)) = (args.replace, existing) else {
        return Ok(None);
    };
    let Some(thread) = store.thread(name)? else {
        return Ok(None);
    };
    Ok(Some(Replaced {
        sessions: store.sessions(thread.id)?,
        turns: store.turns(thread.id)?,
    }))
}

/// Refuses `--replace` of a thread whose live session belongs to another directory sharing
/// this very database (one `STICKY_DB` set for both): it would delete that directory's
/// conversation.
fn refuse_shared_replace(ctx: &Context, replaced: &Replaced, name: &str) -> Result<()> {
    let live = replaced
        .sessions
        .iter()
        .find(|session| session.ended_at.is_none());
    if let Some(live) = live {
        super::standing::refuse_shared_thread(name, live, &ctx.project, "import --replace FILE")?;
    }
    Ok(())
}

/// Refuses `--replace` with a bundle of the replaced thread's own session when sticky's vault
/// holds more of that session than the bundle (turns taken after the export, the agent's files
/// swept since): `--replace` removes the vault's copies, and the vault's would be the only copy
/// of those turns. An agent's file holding turns the bundle lacks is refused the same way
/// (`Move::place`), `--replace` or not.
fn refuse_vault_ahead(
    ctx: &Context,
    replaced: &Replaced,
    plan: &Plan<'_>,
    manifest: &Manifest,
) -> Result<()> {
    let id = &plan.moving.id;
    let agent = &manifest.agent.name;
    let Some(session) = replaced
        .sessions
        .iter()
        .find(|s| s.agent == *agent && s.agent_session_id.as_deref() == Some(id.as_str()))
    else {
        return Ok(());
    };
    let Some(copy) = Vault::new(&ctx.project.state.vault).manifest(agent, id)? else {
        return Ok(());
    };
    let bundled = |relative: &Path| {
        plan.destinations
            .iter()
            .zip(&manifest.files)
            .find(|(destination, _)| *destination == relative)
            .map(|(_, file)| file.size)
    };
    // Where the agent still has the file, placing judges it against the bundle's (`Move::place`
    // refuses one holding more); here, the files only the vault still has.
    let gone = |relative: &Path| {
        std::fs::symlink_metadata(plan.moving.agent_home.join(relative))
            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    };
    let ahead = copy
        .files
        .iter()
        .filter(|entry| !matches!(entry.keeping(), crate::agent::Keeping::Shared))
        .filter(|entry| entry.len > 0 && gone(&entry.relative))
        .find(|entry| bundled(&entry.relative).is_none_or(|size| entry.len > size));
    let Some(entry) = ahead else {
        return Ok(());
    };
    let turns = lacking_turns(replaced, session, manifest, &plan.name);
    let option = super::view::thread_flag(&plan.name);
    Err(StickyError::Usage(format!(
        "sticky's vault holds {agent} session {id} with {turns} ({}: {} bytes, the bundle's {}), \
         and {agent}'s own files of it are gone: --replace would remove the vault's copy, the \
         only one of those turns; sticky does not, --replace or not: go on with the thread as \
         it is (sticky{option} \"...\" puts the session back from the vault), or export it now \
         (sticky{option} export) and import that (nothing was changed)",
        entry.relative.display(),
        entry.len,
        bundled(&entry.relative).map_or_else(|| "none".to_owned(), |size| size.to_string()),
    ))
    .into())
}

/// The turns the bundle lacks, as the refusal names them: the session's finished turns here
/// that began after its last one on the session (an export of this thread carries them with
/// their times).
fn lacking_turns(
    replaced: &Replaced,
    session: &SessionRow,
    manifest: &Manifest,
    name: &str,
) -> String {
    let last = manifest.live().and_then(|live| {
        manifest
            .turns
            .iter()
            .filter(|turn| turn.row.session_id == live.id)
            .map(|turn| turn.row.started_at)
            .max()
    });
    let lacking: Vec<String> = replaced
        .turns
        .iter()
        .filter(|turn| turn.session_id == session.id)
        .filter(|turn| turn.status == crate::store::TurnStatus::Ok)
        .filter(|turn| last.is_none_or(|last| turn.started_at > last))
        .map(|turn| format!("#{}", turn.id))
        .collect();
    if lacking.is_empty() {
        "turns taken after the bundle was exported".to_owned()
    } else {
        format!(
            "turn{} {} of thread {}, taken after the bundle was exported",
            if lacking.len() == 1 { "" } else { "s" },
            lacking.join(", "),
            super::view::escape(name)
        )
    }
}

/// What `--replace` removes, as the question and the report name it.
fn describe(name: &str, replaced: &Replaced) -> String {
    let sessions: Vec<String> = replaced
        .sessions
        .iter()
        .map(|s| {
            format!(
                "{} session {}",
                s.agent,
                s.agent_session_id.as_deref().unwrap_or("(none yet)")
            )
        })
        .collect();
    format!(
        "thread {} ({}; {} turn{})",
        super::view::escape(name),
        if sessions.is_empty() {
            "no session".to_owned()
        } else {
            sessions.join(", ")
        },
        replaced.turns.len(),
        if replaced.turns.len() == 1 { "" } else { "s" }
    )
}

/// Asks on the terminal whether to replace `what`, as `forget` asks; without a terminal to
/// ask on, `--replace` given on the command line is the user's choice, and goes on.
fn confirmed(what: &str) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(true);
    }
    Ok(crate::msg::ask(format_args!(
        "import --replace removes {what} and its vault copies for good. Go on?"
    ))?)
}

/// Asks on the terminal whether to place a bundle that expands past [`bundle::EXPANSION`]
/// (`why`); refuses it with `why` when there is no terminal to ask on (stdin piped, or the
/// bundle itself).
fn confirmed_expansion(file: &Path, why: &str) -> Result<bool> {
    if file == Path::new("-") || !std::io::stdin().is_terminal() {
        return Err(StickyError::Usage(why.to_owned()).into());
    }
    let question = why
        .split_once(": import --yes")
        .map_or(why, |(what, _)| what);
    Ok(crate::msg::ask(format_args!("{question}. Place it?"))?)
}

/// Removes the vault copies of the replaced thread's sessions, once it is replaced, as
/// `forget` does: a copy another thread's next turn still takes (the imported one's included)
/// stays (review 19, M2). Returns how many were removed.
fn remove_copies(ctx: &Context, replaced: &Replaced) -> Result<usize> {
    let vault = Vault::new(&ctx.project.state.vault);
    let store = ctx.open_store()?;
    super::vault::copies(&store, &vault, &replaced.sessions, &[])?.delete(&vault)
}

/// The bundle's bytes: a file, or stdin for `-`; and its size when known (a file, stdin
/// redirected from one).
fn open(file: &Path) -> Result<(Box<dyn Read>, Option<u64>)> {
    if file == Path::new("-") {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            return Err(StickyError::Usage(
                "import - reads a bundle from stdin, which is the terminal; pipe one in \
                 (sticky export | sticky import -) or give its file"
                    .into(),
            )
            .into());
        }
        let size = std::fs::File::from(stdin.as_fd().try_clone_to_owned()?)
            .metadata()
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|meta| meta.len());
        return Ok((Box::new(stdin.lock()), size));
    }
    let opened = std::fs::File::open(file).map_err(|error| {
        StickyError::Usage(format!(
            "cannot read the bundle {}: {error}",
            file.display()
        ))
    })?;
    // A pipe given by its path (`import <(ssh host sticky export)`) has no size to judge the
    // bundle by before it is read: it is held to the limits as it is read, as stdin is.
    let size = opened
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|meta| meta.len());
    Ok((
        Box::new(std::io::BufReader::with_capacity(1 << 20, opened)),
        size,
    ))
}

/// A bundle that cannot be imported: a usage error (exit 2) naming it.
fn usage(file: &Path, error: anyhow::Error) -> anyhow::Error {
    if crate::exit::exit_for(&error) != crate::exit::Exit::Internal {
        return error;
    }
    let name = if file == Path::new("-") {
        "stdin".to_owned()
    } else {
        file.display().to_string()
    };
    let mut message = format!("cannot import {name}: {error:#}");
    if !message.contains("nothing was changed") {
        message.push_str(" (nothing was changed)");
    }
    StickyError::Usage(message).into()
}

/// Checks the manifest against this project and HOME before any file is staged: an agent
/// sticky can place, every path one of the session's own files, a thread name that is free
/// (or `--replace`); returns the plan and how to stage the files.
fn inspect<'a>(
    ctx: &Context,
    args: &Args,
    home: &Path,
    existing: Option<&crate::store::Store>,
    manifest: &Manifest,
) -> Result<(Plan<'a>, bundle::Inspected)> {
    let Some(relocate) = relocation::for_agent(&manifest.agent.name) else {
        return Err(StickyError::Usage(format!(
            "the bundle's agent `{}` is not one sticky knows how to place",
            manifest.agent.name
        ))
        .into());
    };
    let Some(live) = manifest.live() else {
        anyhow::bail!("the bundle has no live session");
    };
    let name = thread_name(args, existing, manifest)?;
    check_models(manifest)?;
    check_ids(ctx, manifest)?;
    let moving = Move {
        relocate,
        agent_home: relocate.home(home),
        from: PathBuf::from(&live.directory),
        to: ctx.project.dir.clone(),
        id: live.agent_session_id.clone().unwrap_or_default(),
    };
    let (destinations, rewrites) = placed(&moving, manifest)?;
    // Another directory's session in this HOME is said first: no thread here can take it
    // over (review 23, L4: a trusted copy was sent to `--replace`, refused next for this).
    moving.refuse_shared(&destinations)?;
    refuse_kept_at_source(ctx, manifest, relocate, &moving.id)?;
    if let Some(store) = existing {
        if let Some(holder) = store.thread_resuming(&live.agent, &moving.id)? {
            if !(args.replace && holder.name == name) {
                return Err(resumed_already(
                    &holder.name,
                    &manifest.thread.name,
                    &live.agent,
                    &moving.id,
                ));
            }
        }
    }
    moving.check_room(manifest.files.iter().map(|file| file.size).sum())?;
    let staging = moving.staging_root();
    Ok((
        Plan {
            moving,
            name,
            destinations,
        },
        (rewrites, staging),
    ))
}

/// Refuses a bundle whose source project, in this HOME, still keeps its live session in its
/// vault: exported from the vault (the agent's files swept), the session is found nowhere in
/// the agent's home, yet the source project's next turn puts the vault's copy back and resumes
/// it, so both projects would go on with one session, each seeing the other's turns. The
/// source is the bundle's project and its live session's directory, where sticky keeps state
/// by default (`.sticky/`), the database the bundle names for it (`STICKY_DB`, when
/// `kept::recorded_database` takes it), and every project of the user's list (with its `STICKY_DB`
/// database), when this HOME's key stamped it. Only a session a thread there takes on its next
/// turn counts (its live session, or the source of its fork not made yet): an ended one, which
/// no turn resumes, imports; so does one whose project no longer keeps a vault copy (vault off).
fn refuse_kept_at_source(
    ctx: &Context,
    manifest: &Manifest,
    relocate: &dyn relocation::Relocate,
    id: &str,
) -> Result<()> {
    let mut sources = bundle_sources(manifest, relocate.name(), id);
    let from_bundle = sources.len();
    // And every project this user ran sticky in: one that imported this bundle before keeps
    // the session too, in its vault once the agent swept it.
    sources.extend(kept::listed());
    let home = crate::settings::home()?;
    for (index, (db, source)) in sources.into_iter().enumerate() {
        let state = kept::state_of(db.as_deref(), &source);
        if source == ctx.project.dir || state.db == ctx.project.state.db || !source.is_absolute() {
            continue;
        }
        let which = if index < from_bundle {
            "the project the bundle came from"
        } else {
            "another project of this HOME"
        };
        let Some((_, thread, fork)) = kept::taken_up(relocate, &home, (&source, &state), id) else {
            // A bundle exported in this HOME names a project of this HOME's, whoever owns it now.
            let ours = index < from_bundle && manifest.exported_in(&home);
            let held = manifest.live().and_then(|live| {
                kept::held_there(relocate, (&home, ours), (&source, db.as_deref()), live)
            });
            if let Some(hold) = held {
                let why = held_at_source(
                    which,
                    (&source, db.as_deref()),
                    hold.hold,
                    relocate.name(),
                    id,
                );
                return Err(StickyError::Usage(why).into());
            }
            continue;
        };
        let keeper = kept::Keeper {
            dir: source,
            db,
            thread,
            fork,
            hold: None,
        };
        return Err(StickyError::Usage(kept_at_source(which, &keeper, relocate.name(), id)).into());
    }
    Ok(())
}

/// The project the bundle came from, as [`refuse_kept_at_source`] looks at it (each with its
/// `STICKY_DB` database, when it has one): its directory and its live session's, with their
/// `.sticky/`; and the database `STICKY_DB` chose there, which only the list of projects (lost
/// with the key) names otherwise (review 16, M2), looked at as a listed one is when it may be
/// at all (`kept::recorded_database`), in the directory its thread goes on in now (the project
/// may have moved since: `relocate`).
fn bundle_sources(manifest: &Manifest, agent: &str, id: &str) -> Vec<(Option<PathBuf>, PathBuf)> {
    let mut sources = vec![(None, PathBuf::from(&manifest.project))];
    if let Some(live) = manifest.live() {
        sources.push((None, live.directory.clone()));
    }
    let recorded = manifest.database.as_deref().map(Path::new);
    if let Some(db) = recorded.and_then(kept::recorded_database) {
        let dir = kept::directory_keeping(&db, agent, id);
        let dir = dir.unwrap_or_else(|| manifest.project.clone().into());
        sources.push((Some(db), dir));
    }
    sources
}

/// Why an import is refused when a turn in `source` (with `STICKY_DB` `db`) refuses its state
/// for now (`hold`), while that state may keep session `id` of `agent` (`kept::held_there`), and
/// the ways out, none of which loses a turn.
fn held_at_source(
    which: &str,
    (source, db): (&Path, Option<&Path>),
    hold: crate::project::Hold,
    agent: &str,
    id: &str,
) -> String {
    let shown = super::view::escape(&source.display().to_string()).into_owned();
    let there = kept::sticky_in(source, db);
    let state = db.map_or_else(|| source.join(crate::state::STATE_DIR), Path::to_owned);
    let state = super::view::escape(&state.display().to_string()).into_owned();
    // A `.sticky/` another account owns can be moved aside without it, where the user may
    // write the project directory (review 16, L2).
    let aside = match (&hold, db) {
        (crate::project::Hold::Owned { .. }, None) => {
            let path = crate::msg::shell_path(&source.join(crate::state::STATE_DIR));
            format!(
                " (or, if that state is not yours, move it aside: `mv {path} {path}.aside`, \
                 where you may write {shown})"
            )
        }
        _ => String::new(),
    };
    let (why, fix) = super::standing::hold_words(Some(hold), &there);
    format!(
        "{which}, {shown}, holds a sticky state ({state}) that goes on with {agent} session \
         {id}, which only sticky's vault there may keep now, and sticky there refuses that \
         state for now: {why}. Imported here in the same HOME, two projects could go on with \
         one session: if {shown} is the original, {fix} and go on there (`{there} \"...\"`); to \
         import the bundle here all the same, first make that state usable there{aside}, then \
         run `sticky import FILE` here again, which then says whether {shown} still keeps the \
         session; or import the bundle in another HOME or on another machine"
    )
}

/// Why an import is refused when `source` takes up session `id` of `agent` on its next turn,
/// and the ways out, none of which loses a turn.
fn kept_at_source(which: &str, source: &kept::Keeper, agent: &str, id: &str) -> String {
    let shown = super::view::escape(&source.dir.display().to_string()).into_owned();
    let there = kept::there(source);
    let name = super::view::escape(&source.thread).into_owned();
    let option = super::view::thread_option(&source.thread);
    if source.fork {
        return format!(
            "{which}, {shown}, still has {agent} session {id} (sticky's vault there keeps it, \
             and the first turn of its thread {name}, a fork not made yet, forks it): imported \
             here in the same HOME, two projects would go on with one session, each seeing the \
             other's turns; go on with the fork there (`{there} {option} \"...\"` makes it, with \
             the session's turns), or, for the session here, drop the fork not made yet there \
             (`{there} {option} forget --yes`), then `sticky import FILE` here; or import the \
             bundle in another HOME or on another machine, where the agent keeps a session of \
             its own (nothing was changed)"
        );
    }
    format!(
        "{which}, {shown}, still has {agent} session {id} (sticky's vault there keeps it, \
         and the next turn of its thread {name} takes it up): imported here in the same \
         HOME, two projects would go on with one session, each seeing the other's turns; go \
         on with it there (`{there} {option} \"...\"`), or move the conversation here \
         with the turns it had there: `{there} {option} export -o FILE`, then `{there} \
         {option} forget --yes`, then `sticky import FILE` here; or import the bundle in \
         another HOME or on another machine, where the agent keeps a session of its own \
         (nothing was changed)"
    )
}

/// The name the thread gets here (`--as`, else the bundle's); refuses a blank one, and one
/// in use unless `--replace`.
fn thread_name(
    args: &Args,
    existing: Option<&crate::store::Store>,
    manifest: &Manifest,
) -> Result<String> {
    let name = args
        .as_name
        .clone()
        .unwrap_or_else(|| manifest.thread.name.clone());
    if let Some(problem) = super::thread_name_problem(&name) {
        let (what, way_out) = if args.as_name.is_some() {
            ("--as", "give another")
        } else {
            (
                "the bundle's thread name",
                "import --as NAME to give it another",
            )
        };
        return Err(StickyError::Usage(format!(
            "{what} \"{name}\" {problem}; {way_out} (nothing was changed)"
        ))
        .into());
    }
    if let Some(store) = existing {
        if store.thread(&name)?.is_some() && !args.replace {
            return Err(StickyError::Usage(format!(
                "this project has a thread named {name} already; import --as NAME to add the \
                 bundle's under another name, or --replace to replace it (its sessions and turns are removed) (nothing was changed)"
            ))
            .into());
        }
    }
    Ok(name)
}

/// Refuses a session whose model the command line would refuse (`--model -x` would be read by
/// the agent as an option on every later turn): a bundle is checked as `-m` is.
fn check_models(manifest: &Manifest) -> Result<()> {
    for session in &manifest.sessions {
        if let Some(problem) = session.model.as_deref().and_then(crate::cli::model_problem) {
            return Err(StickyError::Usage(format!(
                "the bundle's {} session #{} cannot be imported: its model {problem}; sticky \
                 imports no session whose model it would not take from -m (nothing was changed)",
                session.agent, session.id
            ))
            .into());
        }
    }
    Ok(())
}

/// Refuses a session whose ID is not of its agent's shape (`Adapter::valid_id`), live or not:
/// the live one names the files placed (Claude's `memory`, its auto-memory directory, would
/// place `projects/<here>/memory/MEMORY.md`, which Claude loads into every session of the
/// project) and becomes the agent's `--resume` argument; an ended one may be resumed by
/// `--carry`'s handoff. sticky never exports such an ID, so the bundle was crafted or damaged.
fn check_ids(ctx: &Context, manifest: &Manifest) -> Result<()> {
    for session in &manifest.sessions {
        let Some(id) = session.agent_session_id.as_deref() else {
            continue;
        };
        if let Some(problem) = crate::session::id_problem(&ctx.agents, &session.agent, id) {
            return Err(StickyError::Usage(format!(
                "the bundle's {} session #{} cannot be imported: its session ID \"{}\", \
                 {problem}; sticky exports no such ID, so the bundle was crafted or damaged: \
                 export it again from the project it came from (nothing was changed)",
                super::view::escape(&session.agent),
                session.id,
                super::view::escape(id),
            ))
            .into());
        }
    }
    Ok(())
}

/// Why the bundle's live session is not imported: thread `holder` here resumes it already.
/// `import --replace` takes the bundle's own name only, so it is a way out when that is the
/// holder's name (`bundled`).
fn resumed_already(holder: &str, bundled: &str, agent: &str, id: &str) -> anyhow::Error {
    let shown = super::view::escape(holder);
    let option = super::view::thread_option(holder);
    let replace = if holder == bundled {
        ", import over it (import --replace)"
    } else {
        ""
    };
    StickyError::Usage(format!(
        "thread {shown} of this project resumes {agent} session {id} already (the bundle was \
         imported before, or this is the project it came from); an agent session is live in one \
         thread only, or turns on both threads would run on it at once, each seeing the \
         other's: go on with it there (sticky {option} \"...\"){replace}, or `sticky \
         {option} forget` it first (nothing was changed)"
    ))
    .into()
}

/// Where each of the bundle's files goes here, and the rewrites of its text (none for rows).
fn placed(moving: &Move<'_>, manifest: &Manifest) -> Result<(Vec<PathBuf>, Vec<Vec<Rewrite>>)> {
    let mut destinations = Vec::new();
    let mut rewrites = Vec::new();
    for file in &manifest.files {
        let relative = Path::new(&file.path);
        if file.rows && !moving.relocate.keeps_rows() {
            return Err(StickyError::Usage(format!(
                "the bundle marks {} as database rows, and {} keeps no session in a database: \
                 sticky exports no such file, so the bundle was crafted or damaged; export it \
                 again from the project it came from (nothing was changed)",
                super::view::escape(&file.path),
                moving.relocate.name()
            ))
            .into());
        }
        let destination = moving.destination(relative)?;
        if let Some(name) = bundle::long_name(&destination) {
            return Err(StickyError::Usage(format!(
                "{} cannot be placed in {}: its name {} is {} bytes, longer than a file system \
                 takes ({} at most; {} names it after this directory) (nothing was changed)",
                super::view::escape(&file.path),
                super::view::escape(&moving.agent_home.display().to_string()),
                super::view::escape(&name.to_string_lossy()),
                name.len(),
                bundle::MAX_NAME,
                moving.relocate.name(),
            ))
            .into());
        }
        destinations.push(destination);
        rewrites.push(if file.rows {
            Vec::new()
        } else {
            moving.rewrites(relative)
        });
    }
    Ok((destinations, rewrites))
}

/// Adds the thread, its sessions (the live one now in this project) and turns.
fn add_thread(ctx: &Context, plan: &Plan<'_>, manifest: &Manifest, replace: bool) -> Result<()> {
    let mut sessions = manifest.sessions.clone();
    for live in sessions.iter_mut().filter(|s| s.ended_at.is_none()) {
        live.directory.clone_from(&plan.moving.to);
    }
    let mut store = ctx.open_store()?;
    // A replaced thread leaves none of its text in the file, as `forget` does.
    store
        .erasing(|store| {
            store.immediate(|tx| replace_and_add(tx, plan, manifest, &sessions, replace))
        })
        .context("cannot add the imported thread")
}

/// Inside the import's transaction: removes the thread it replaces (or refuses, without
/// `--replace`), then adds the imported one.
fn replace_and_add(
    tx: &crate::store::Tx<'_>,
    plan: &Plan<'_>,
    manifest: &Manifest,
    sessions: &[SessionRow],
    replace: bool,
) -> Result<()> {
    if let Some(old) = tx.thread(&plan.name)? {
        if !replace {
            anyhow::bail!(StickyError::Usage(format!(
                "this project has a thread named {} already; import --as NAME or --replace",
                plan.name
            )));
        }
        tx.remove_thread(old.id)?;
    }
    // Checked again under the write lock: another import may have taken it meanwhile.
    if let Some(holder) = tx.thread_resuming(&manifest.agent.name, &plan.moving.id)? {
        return Err(resumed_already(
            &holder.name,
            &manifest.thread.name,
            &manifest.agent.name,
            &plan.moving.id,
        ));
    }
    tx.add_thread(
        &plan.name,
        manifest.thread.created_at,
        sessions,
        &manifest.turns,
    )
    .map(|_| ())
}

fn report(
    ctx: &Context,
    plan: &Plan<'_>,
    manifest: &Manifest,
    replaced: Option<(&Replaced, usize)>,
) -> Result<Report> {
    if ctx.json {
        let replaced = replaced.map(|(replaced, copies)| {
            serde_json::json!({
                "thread": plan.name,
                "agent_session_ids": replaced
                    .sessions
                    .iter()
                    .filter_map(|s| s.agent_session_id.clone())
                    .collect::<Vec<_>>(),
                "turns": replaced.turns.len(),
                "vault_copies": copies,
            })
        });
        return Report::json(&Imported {
            thread: &plan.name,
            project: plan.moving.to.display().to_string(),
            from: &manifest.project,
            agent: &manifest.agent.name,
            agent_session_id: &plan.moving.id,
            sessions: manifest.sessions.len(),
            turns: manifest.turns.len(),
            files: manifest.files.len(),
            replaced,
        });
    }
    if let Some((replaced, copies)) = replaced {
        note!(
            "replaced {} and {copies} vault cop{}",
            describe(&plan.name, replaced),
            if copies == 1 { "y" } else { "ies" }
        );
    }
    let thread = super::view::thread_flag(&plan.name);
    note!(
        "imported thread {} ({} session {}, {} turn{}) from {}; `sticky{thread} \"...\"` \
         goes on with it here",
        super::view::escape(&plan.name),
        manifest.agent.name,
        plan.moving.id,
        manifest.turns.len(),
        if manifest.turns.len() == 1 { "" } else { "s" },
        super::view::escape(&manifest.project),
    );
    Ok(Report::nothing())
}
