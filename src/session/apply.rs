//! The plan against the database: the stored live session read into the policy's view, checked
//! against the project it runs in (and its ID and model against the agent's arguments), and the
//! plan written inside the turn's transaction.
//!
//! The turn (`sticky [PROMPT]`, `sticky new PROMPT`) and `sticky new` without a prompt write a
//! plan through [`apply`], which returns what the agent is asked for ([`Aim`]); `doctor` reads
//! the same view ([`live_of`]) and shows the plan; `--carry` reads it without a write
//! transaction ([`Thread::peek`]) to know what the turn will replace.

use std::path::Path;

use anyhow::Result;

use super::{Action, Live, Plan, Reason, Request};
use crate::agent::{Adapter, Agents, Target};
use crate::exit::StickyError;
use crate::store::{NewSession, SessionRow, Store, Tx};

/// A conversation as a turn's transaction finds it: the policy's input from the database.
#[derive(Debug)]
pub struct Thread {
    /// The thread's row id.
    pub id: i64,
    /// Its live session, if any.
    pub live: Option<SessionRow>,
    /// Whether a turn ran on the live session.
    pub tried: bool,
}

impl Thread {
    /// Reads the live session of thread `id` and whether a turn ran on it.
    pub fn read(tx: &Tx<'_>, id: i64) -> Result<Self> {
        let (live, turns) = tx.live_session_and_turns(id)?.unzip();
        let tried = turns.is_some_and(|turns| turns > 0);
        Ok(Self { id, live, tried })
    }

    /// Reads thread `name` as [`read`](Self::read) does, outside a transaction and without
    /// creating it (`None` when it does not exist yet).
    pub fn peek(store: &Store, name: &str) -> Result<Option<Self>> {
        let Some(row) = store.thread(name)? else {
            return Ok(None);
        };
        let live = store.live_session(row.id)?;
        let tried = match &live {
            Some(live) => store.turn_count(live.id)? > 0,
            None => false,
        };
        Ok(Some(Self {
            id: row.id,
            live,
            tried,
        }))
    }

    /// The policy's view of the live session (see [`live_of`]).
    pub fn live(&self, agents: &Agents) -> Option<Live<'_>> {
        self.live
            .as_ref()
            .map(|row| live_of(row, self.tried, agents))
    }

    /// The plan for `request` (`session::plan`), its action holding the live session.
    pub fn plan(&self, agents: &Agents, request: Request<'_>) -> Plan<&SessionRow> {
        let live = self
            .live
            .as_ref()
            .map(|row| (live_of(row, self.tried, agents), row));
        super::plan(live, request)
    }
}

/// The policy's view of a stored live session; `tried` says whether a turn ran on it. An
/// unconfirmed session that ran a turn is unsaved unless the agent has it after all (a Claude
/// Code that saved the session sticky chose but reported another is amnesia, not unsaved).
pub fn live_of<'a>(row: &'a SessionRow, tried: bool, agents: &Agents) -> Live<'a> {
    let confirmed = row.confirmed_at.is_some() && row.agent_session_id.is_some();
    let unsaved = tried && !confirmed && {
        // Without a home (an error the turn gives before it plans) nothing is known saved.
        let home = crate::settings::home();
        let saved = match (agents.find(&row.agent), &row.agent_session_id, home) {
            (Some(adapter), Some(id), Ok(home)) => adapter.saved(&home, &row.directory, id),
            _ => None,
        };
        saved != Some(true)
    };
    Live {
        agent: &row.agent,
        model: row.model.as_deref(),
        confirmed,
        unsaved: unsaved && row.forked_from.is_none(),
        forking: !confirmed && row.forked_from.is_some(),
    }
}

/// The session a turn asks its agent for, as `apply` wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Aim {
    /// The existing session with this ID.
    Resume(String),
    /// A new session with the ID sticky chose up front.
    Create(String),
    /// A new session whose ID the agent chooses and reports.
    CreateUnnamed,
}

impl Aim {
    /// A new session: the ID sticky chose, if it chose one.
    fn create(session: &SessionRow) -> Self {
        session
            .agent_session_id
            .clone()
            .map_or(Self::CreateUnnamed, Self::Create)
    }

    /// The agent's view of it.
    pub fn target(&self) -> Target<'_> {
        match self {
            Self::Resume(id) => Target::Resume(id),
            Self::Create(id) => Target::Create(id),
            Self::CreateUnnamed => Target::CreateUnnamed,
        }
    }
}

/// Writes `plan` for thread `thread_id` and returns the session the turn runs on, with what the
/// agent is asked for: the live session resumed or started again in place, or a new one
/// recorded for `directory` (replacing the live one on a rotation) with the ID its agent lets
/// sticky choose up front. `carried` is the kind and size of the recap the new session starts
/// with (see `Plan::carry`), recorded with it.
pub fn apply(
    tx: &Tx<'_>,
    thread_id: i64,
    plan: &Plan<&SessionRow>,
    agents: &Agents,
    directory: &Path,
    carried: Option<(&str, i64)>,
) -> Result<(SessionRow, Aim)> {
    let (agent, model) = (plan.agent.as_str(), plan.model.as_deref());
    let new = |id, rotated_from: Option<(i64, Reason)>| NewSession {
        agent,
        model,
        agent_session_id: id,
        directory,
        rotated_from: rotated_from.map(|(id, reason)| (id, reason.as_str())),
        carried: rotated_from.and(carried),
    };
    let session = match plan.action {
        // Resumed by the ID the agent confirmed (`live_of`'s `confirmed`).
        Action::Resume(live) => match &live.agent_session_id {
            Some(id) => return Ok((live.clone(), Aim::Resume(id.clone()))),
            None => restart(tx, live, plan, agents)?,
        },
        Action::Restart(live) => restart(tx, live, plan, agents)?,
        Action::Start => {
            let id = agents.get(agent)?.mint_id();
            tx.start_session(thread_id, &new(id.as_deref(), None))?
        }
        Action::Rotate(live, reason) => {
            let id = chosen_id(live, reason, agents.get(agent)?);
            tx.start_session(thread_id, &new(id.as_deref(), Some((live.id, reason))))?
        }
    };
    let aim = Aim::create(&session);
    Ok((session, aim))
}

/// Starts `live` again in place, with a new ID when its agent lets sticky choose one (a fork's
/// from the agent's fork).
fn restart(
    tx: &Tx<'_>,
    live: &SessionRow,
    plan: &Plan<&SessionRow>,
    agents: &Agents,
) -> Result<SessionRow> {
    let adapter = agents.get(&plan.agent)?;
    let id = if live.forked_from.is_some() {
        adapter.fork_id()
    } else {
        adapter.mint_id()
    };
    tx.restart_session(live.id, &plan.agent, plan.model.as_deref(), id.as_deref())
}

/// The ID sticky chooses for the session replacing `live`: the one sticky chose for a session
/// the agent never saved is still free, and it is the one the failed turn printed, so the next
/// turn uses it; otherwise a fresh one, when the agent lets sticky choose.
fn chosen_id(live: &SessionRow, reason: Reason, adapter: &dyn Adapter) -> Option<String> {
    if reason == Reason::Unsaved && live.agent == adapter.name() && adapter.mint_id().is_some() {
        return live.agent_session_id.clone().or_else(|| adapter.mint_id());
    }
    adapter.mint_id()
}

/// The agent runs where the session was created (agents key sessions by directory). A live
/// session recorded for another directory (a moved project, two projects sharing one
/// `STICKY_DB`, a database crafted in a cloned repository) is refused before anything runs,
/// used or not: an unused one would otherwise be started in that other directory. Only
/// `sticky new` passes, since it records a new session for this directory, except where that
/// directory still uses this very database (two projects sharing one `STICKY_DB`): there the
/// turn's caller names the shared database instead (`cmd::standing::shared_database`), and
/// `new` is refused too, since it would end that directory's session (review 16, M3).
pub fn ensure_in_project(
    session: &SessionRow,
    thread: &str,
    project: &Path,
) -> Result<(), StickyError> {
    if session.directory == project {
        return Ok(());
    }
    let id = session
        .agent_session_id
        .as_deref()
        .map_or_else(|| "no ID yet".to_owned(), |id| format!("session {id}"));
    Err(StickyError::Elsewhere(format!(
        "thread {thread}: the {} session #{} ({id}) belongs to directory {}, not to this project \
         {}; if the project moved here, run `sticky relocate` to go on with it here; else run \
         `sticky new` to start a session here (the old one stays on record), run sticky in {} to \
         go on with it there, or set STICKY_DB to keep this project's state apart",
        session.agent,
        session.id,
        session.directory.display(),
        project.display(),
        session.directory.display(),
    )))
}

/// Whether `value` is empty, starts with `-` or holds a control character: what an agent
/// would read as an option of its own, or not as one argument.
fn option_like(value: &str) -> bool {
    value.is_empty() || value.starts_with('-') || value.chars().any(char::is_control)
}

/// What is wrong with `id` as a session ID of `agent` (`Adapter::valid_id`, and anything the
/// agent could take for an option), as "which ..."; `None` when nothing is. The one rule for a
/// stored ID (a turn, `doctor`) and a bundle's (`import`, for every session it carries).
pub fn id_problem(agents: &Agents, agent: &str, id: &str) -> Option<String> {
    if option_like(id) {
        return Some("which the agent could take for an option".to_owned());
    }
    agents
        .find(agent)
        .is_some_and(|a| !a.valid_id(id))
        .then(|| format!("which is not a session ID {agent} makes"))
}

/// The stored session ID and model become the agent's arguments (`--resume ID`), so a value
/// that an agent would read as an option of its own is refused, and so is an ID of another
/// shape than the agent's (`Adapter::valid_id`: a UUID for Claude Code, Codex, Qwen Code and
/// Copilot CLI, opencode's `ses_...`): sticky never stores one (it mints
/// UUIDs or takes the agent's own, and models come from `--model`), so it comes from a database
/// crafted or damaged elsewhere, and Claude's `--resume [value]` would take `--resume
/// --some-flag` as a bare `--resume` followed by that flag. The turn checks the session it is
/// about to run; `doctor` the one the next turn would resume. A fork not made yet passes its
/// source's ID too (`--resume SOURCE --fork-session`), so that one is checked as well.
pub fn ensure_plain_arguments(
    session: &SessionRow,
    agents: &Agents,
    db: &Path,
) -> Result<(), StickyError> {
    let source = session
        .forked_from
        .as_ref()
        .filter(|_| session.confirmed_at.is_none())
        .map(|from| from.agent_session_id.clone());
    let checks = [
        ("session ID", &session.agent_session_id, "`sticky new`"),
        ("fork source session ID", &source, "`sticky new`"),
        ("model", &session.model, "`sticky new --model MODEL`"),
    ];
    for (what, value, way_out) in checks {
        let Some(value) = value.as_deref() else {
            continue;
        };
        let problem = if what == "model" {
            option_like(value).then(|| "which the agent could take for an option".to_owned())
        } else {
            id_problem(agents, &session.agent, value)
        };
        let Some(problem) = problem else {
            continue;
        };
        return Err(StickyError::store(
            db,
            format!(
                "session #{} has the {what} \"{value}\", {problem}; sticky does not pass it on \
                 (was the database crafted or copied from elsewhere?); start over with \
                 {way_out}, or move the database away",
                session.id
            ),
        ));
    }
    Ok(())
}
