//! `sticky trust`: adopt a project's state the user copied, restored or cloned on purpose.
//!
//! A state adopted here whose conversations were recorded in another directory came from a
//! project that moved (to another file system, which copies the database) or was copied: the
//! next turn would refuse it (exit 73), so trust names the next step, `sticky relocate` for a
//! move, `sticky new` for a copy.
//!
//! Adopting a state adopts its vault too: the copies of sessions the agents in this HOME do not
//! have were written elsewhere (a tarball, a CI cache), and a turn whose session is lost puts
//! one back for the agent to read as its own. Trust names them, and marks them adopted
//! (`Vault::adopt`), so the restore of one names the adoption and its date.

use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use super::kept;
use super::output::Report;
use super::standing::{self, Standing};
use super::view::escape;
use super::{Call, Run, json_keys};
use super::{start_dir, sticky_db};
use crate::agent::Agents;
use crate::cli::GlobalArgs;
use crate::lock::SessionLock;
use crate::project::{self, Adopted, Project};
use crate::store::{SessionRow, Store};
use crate::vault::{Manifest, Vault};

/// `sticky trust` takes no options of its own.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {}

/// The `--json` object of `sticky trust`.
#[derive(Serialize, Default)]
#[allow(clippy::struct_field_names)] // the keys of a published schema
struct Trusted<'a> {
    project: String,
    database: String,
    /// Whether there is a database, now the user's.
    trusted: bool,
    /// Whether this run stamped it.
    stamped: bool,
    /// The threads whose live session was recorded in another directory.
    elsewhere: Vec<Elsewhere<'a>>,
    /// The threads whose live session the agent in this HOME keeps for another directory.
    shared: Vec<Shared<'a>>,
    /// The vault's copies of sessions the agents in this HOME do not have.
    adopted_copies: Vec<AdoptedCopy<'a>>,
}

/// A thread whose live session was recorded in another directory.
#[derive(Serialize)]
struct Elsewhere<'a> {
    thread: &'a str,
    directory: String,
}

/// A thread whose live session the agent in this HOME keeps for another directory.
#[derive(Serialize)]
struct Shared<'a> {
    thread: &'a str,
    agent_session_id: Option<&'a str>,
    directory: String,
    /// Whether the session is the source of a fork not made yet, not the live session itself.
    fork_source: bool,
    /// Whether another project's vault keeps it (and `directory` is that project's), its next
    /// turn taking it up, rather than this HOME's agent.
    vault: bool,
}

/// A vault copy adopted with the state.
#[derive(Serialize)]
struct AdoptedCopy<'a> {
    agent: &'a str,
    session: &'a str,
}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(call.global)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<Trusted<'static>>()
    }

    fn reports(&self) -> bool {
        false
    }

    fn refuses_thread(&self) -> Option<&'static str> {
        Some("it adopts the whole project's state")
    }
}

/// Stamps the database of the project of the current directory (or `-C DIR`) as the user's.
fn run(global: &GlobalArgs) -> Result<Report> {
    let (config, _) = crate::settings::read_config()?;
    let agents = Agents::new(&config)?;
    let home = crate::settings::home()?;
    let (project, adopted, held) = adopt(global)?;
    let (_claims, own) = held.map_or((None, Own::None), |(claims, own)| (Some(claims), own));
    if adopted != Adopted::Nothing {
        // An adopted state's vault keeps sessions: an import elsewhere looks for them here.
        project::registry::note(&project);
    }
    let elsewhere = elsewhere(&project);
    // Marked first: whether another project's vault comes before this one's copy of a session
    // (`kept::in_another_vault`) depends on it.
    let copies = (adopted == Adopted::Now).then(|| adopt_copies(&project, &agents, &home, own));
    let copies = copies.unwrap_or_default();
    let shared = shared(&project);
    if global.json {
        return Report::json(&Trusted {
            project: project.dir.display().to_string(),
            database: project.state.db.display().to_string(),
            trusted: adopted != Adopted::Nothing,
            stamped: adopted == Adopted::Now,
            elsewhere: elsewhere
                .iter()
                .map(|(thread, live)| Elsewhere {
                    thread,
                    directory: live.directory.display().to_string(),
                })
                .collect(),
            shared: shared
                .iter()
                .map(|found| Shared {
                    thread: &found.thread,
                    agent_session_id: found.live.agent_session_id.as_deref(),
                    directory: found.holder.dir().display().to_string(),
                    fork_source: found.fork,
                    vault: matches!(found.holder, kept::Holder::Vault(_)),
                })
                .collect(),
            adopted_copies: copies
                .iter()
                .map(|copy| AdoptedCopy {
                    agent: &copy.agent,
                    session: &copy.session,
                })
                .collect(),
        });
    }
    say(
        &project,
        adopted,
        &elsewhere,
        &shared,
        &copies,
        config.vault == Some(false),
    );
    Ok(Report::nothing())
}

/// What [`adopt`] holds until `trust` is done (`trust`'s claims on the sessions the state names),
/// and which of its vault's copies are the user's own, its stamp made with a key since lost.
type Held = (Vec<SessionLock>, Own);

/// Which vault copies of a state trust leaves as they were (not adopted now): those of the
/// user's own state, stamped with a key since lost (`project::stamped_before_key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Own {
    /// None: a state sticky did not stamp for this user, or one its key still vouches for.
    None,
    /// The copies made from this HOME's agents (`Manifest::made_in`): the list of projects,
    /// which would say the state is this HOME's, was lost with the key's directory, and the
    /// user says the state is theirs by trusting it (review 11, M3).
    MadeHere,
    /// All of them: this HOME's list of projects names the state
    /// (`project::stamped_by_lost_key`, review 10, M3).
    All,
}

/// Adopts the state of the project of the current directory (or `-C DIR`), holding the
/// sessions it names (`kept::claim_state`) from before it is stamped (its vault's copies count
/// from then on) until trust has said who keeps each: an import, relocate or trust of one of
/// them in another project meanwhile is seen. With them, whether the state was the user's own,
/// stamped with a key since lost (`project::stamped_before_key`: the user says so by trusting
/// it, so the list of projects, lost with the key's directory, need not), before it is stamped
/// again.
fn adopt(global: &GlobalArgs) -> Result<(Project, Adopted, Option<Held>)> {
    project::adopt(&start_dir(global)?, sticky_db().as_deref(), |project| {
        let own = if project::stamped_by_lost_key(&project.state) {
            Own::All
        } else if project::stamped_before_key(&project.state) {
            Own::MadeHere
        } else {
            Own::None
        };
        Ok((kept::claim_state(project)?, own))
    })
}

/// Says on stderr (not with `--quiet`) what `trust` did, and the next step for each thread
/// recorded elsewhere (`elsewhere`) or kept for another directory (`shared`).
fn say(
    project: &Project,
    adopted: Adopted,
    elsewhere: &[(String, SessionRow)],
    shared: &[Found],
    copies: &[Manifest],
    vault_off: bool,
) {
    let db = escape(&project.state.db.display().to_string()).into_owned();
    match adopted {
        Adopted::Now if elsewhere.is_empty() => note!(
            "{db} is yours now: its conversations continue here (`sticky status` \
             shows them)"
        ),
        Adopted::Now => note!("{db} is yours now"),
        Adopted::Already => note!("{db} is already yours"),
        Adopted::Nothing => note!("no database at {db}: nothing to trust"),
    }
    for (thread, live) in elsewhere {
        note!("{}", next_step(thread, live, project));
    }
    for found in shared {
        let (thread, live, dir) = (&found.thread, &found.live, &project.dir);
        let said = match &found.holder {
            kept::Holder::Agent(other) if found.fork => {
                standing::fork_shared(thread, live, other, dir)
            }
            kept::Holder::Agent(other) => standing::shared(thread, live, other, dir),
            kept::Holder::Vault(keeper) => kept::shared(thread, live, keeper, dir, found.fork),
        };
        note!("{said}");
    }
    if !copies.is_empty() {
        note!("{}", foreign_copies(copies, project, vault_off));
    }
}

/// Marks the vault's copies of the sessions whose files the agents in this HOME do not have
/// (or cannot tell: opencode keeps rows) as adopted now: they came with the state, and a
/// restore of one says so (`Vault::adopt`); a copy this HOME's turns made comes before them
/// (`kept::in_another_vault`). The ones written elsewhere: a session this HOME keeps for
/// another directory (the original of a copied project moved, and relocated it), marked all
/// the same, was written here, and is not said to be (review 8, L3; `trust` names where it went,
/// or that another project keeps it). The user's own state a lost key left unstamped keeps its
/// own copies as they were ([`Own`]), before those of a copy made from it and trusted first
/// (reviews 10 and 11). A copy that cannot be marked is said on stderr: the state is adopted all
/// the same.
fn adopt_copies(project: &Project, agents: &Agents, home: &Path, own: Own) -> Vec<Manifest> {
    if own == Own::All {
        return Vec::new();
    }
    let vault = Vault::new(&project.state.vault);
    let marked = vault.adopt(crate::store::now(), |copy| {
        let saved = agents
            .find(&copy.agent)
            .and_then(|agent| agent.saved(home, &copy.directory, &copy.session));
        saved != Some(true) && !(own == Own::MadeHere && copy.made_in(home))
    });
    let marked = match marked {
        Ok(marked) => marked,
        Err(error) => {
            note!(
                "could not mark the vault's copies as adopted (a restore of one will not say it \
                 came with this state): {}",
                escape(&format!("{error:#}"))
            );
            return Vec::new();
        }
    };
    marked
        .into_iter()
        .filter(|copy| {
            standing::kept_in_home(&copy.agent, &copy.session, &copy.directory, project).is_none()
        })
        .collect()
}

/// What `sticky trust` says of the vault's copies the agents in this HOME never had (`copies`):
/// a lost session is put back from them, so the agent reads a transcript written elsewhere as
/// its own.
fn foreign_copies(copies: &[Manifest], project: &Project, off: bool) -> String {
    const NAMED: usize = 3;
    let mut named: Vec<String> = copies
        .iter()
        .take(NAMED)
        .map(|copy| format!("{} {}", escape(&copy.agent), escape(&copy.session)))
        .collect();
    if copies.len() > NAMED {
        named.push(format!("{} more", copies.len() - NAMED));
    }
    let count = copies.len();
    let off = if off {
        " (while the vault is off, vault = false, nothing is put back)"
    } else {
        ""
    };
    format!(
        "its vault holds the transcripts of {count} session{} ({}) that the agents in this HOME \
         do not have: they were written elsewhere and came with this state, and when the agent \
         reports such a session lost, the next turn puts the vault's copy back into the agent's \
         home and resumes it, so the agent reads that transcript as its own (the turn names \
         it){off}; if you do not know those conversations, remove the copies (rm -r {}/<agent>/<session>) \
         or forget their threads (sticky forget -t THREAD)",
        if count == 1 { "" } else { "s" },
        named.join(", "),
        crate::msg::shell_path(&project.state.vault)
    )
}

/// The conversations whose live session was recorded for another directory than the project's:
/// (thread, its live session). A database that cannot be read names none (the next turn says
/// why).
fn elsewhere(project: &Project) -> Vec<(String, SessionRow)> {
    let read = || -> Result<Vec<(String, SessionRow)>> {
        let Some(store) = Store::open_existing(&project.state.db)? else {
            return Ok(Vec::new());
        };
        let mut found = Vec::new();
        for thread in store.threads()? {
            if let Some(live) = store.live_session(thread.id)? {
                if live.directory != project.dir {
                    found.push((thread.name, live));
                }
            }
        }
        Ok(found)
    };
    read().unwrap_or_default()
}

/// A thread whose live session (or the source of its fork not made yet) another holds.
struct Found {
    thread: String,
    /// Its live session, or the fork's source (the row given with the source's ID).
    live: SessionRow,
    /// Whether `live` is the source of a fork not made yet.
    fork: bool,
    holder: kept::Holder,
}

/// The conversations whose live session, recorded for this project, is one the agent in this
/// HOME keeps for another directory (`standing::kept_elsewhere`): a state from elsewhere naming
/// another project's session; or one another project of this HOME keeps in its vault and takes
/// up next, where this state's vault holds a copy a lost turn would put back
/// (`kept::in_another_vault`); and those whose live session is a fork not made yet of such a
/// session. Adopted, the state's turns refuse them (`sticky new` starts a session of the
/// thread's own); trust names them.
fn shared(project: &Project) -> Vec<Found> {
    let read = || -> Result<Vec<Found>> {
        let Some(store) = Store::open_existing(&project.state.db)? else {
            return Ok(Vec::new());
        };
        let mut found = Vec::new();
        for thread in store.threads()? {
            let Some(live) = store.live_session(thread.id)? else {
                continue;
            };
            if live.directory != project.dir {
                continue;
            }
            let source = live
                .forked_from
                .as_ref()
                .filter(|_| live.confirmed_at.is_none())
                .map(|from| SessionRow {
                    agent_session_id: Some(from.agent_session_id.clone()),
                    ..live.clone()
                });
            for (live, fork) in std::iter::once((live, false)).chain(source.map(|s| (s, true))) {
                if let Some(holder) = kept::holder(&live, &project.dir, &project.state) {
                    let thread = thread.name.clone();
                    found.push(Found {
                        thread,
                        live,
                        fork,
                        holder,
                    });
                }
            }
        }
        Ok(found)
    };
    read().unwrap_or_default()
}

/// What to run for thread `thread`, whose live session `live` belongs to another directory than
/// `project`: `sticky relocate` when that directory is gone or made again without a sticky
/// state (the project moved here), `sticky new` when it holds one (this is a copy of it), and
/// `sticky new --carry` when another copy of the project took the session since (`relocate`
/// would refuse it).
fn next_step(thread: &str, live: &SessionRow, project: &Project) -> String {
    let dir = &live.directory;
    let shown = dir.display().to_string();
    let (shown_thread, shown) = (escape(thread), escape(&shown));
    let flag = super::view::thread_flag(thread);
    match standing::standing(live, project) {
        Standing::Taken(now) => standing::taken(thread, live, now.as_deref(), project),
        Standing::Held => standing::held(thread, live, project),
        Standing::SharedDatabase => standing::shared_database(thread, live, project),
        Standing::Copy => format!(
            "thread {shown_thread} was recorded in {shown}, which still exists, so this is a \
             copy of that project: run `sticky{flag} new` here for a session of its own (or \
             `{}{flag} \"...\"` to go on there)",
            standing::in_original(live, project)
        ),
        Standing::Moved => format!(
            "thread {shown_thread} was recorded in {shown}, {}: if the project moved here, run \
             `sticky relocate` to go on with it here (else `sticky new` for a session of its \
             own)",
            standing::gone(live, project)
        ),
    }
}
