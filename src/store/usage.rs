//! What `sticky usage` reads: every session (with its thread) and every turn's figures in a
//! time range, in two scans (the sessions of every project first, so the report knows which
//! agent sessions have copies before it counts a turn). The turns carry what identifies them across copies (their
//! session's agent and ID, when they started and which process ran them), so the report counts
//! a turn imported into several threads or projects once.

use anyhow::Result;
use rusqlite::params;

use super::{Millis, Store, rows};
use crate::agent::ledger::Figures;

/// A session as `usage` groups it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageSession {
    /// sticky's row id.
    pub id: i64,
    /// Its thread's name.
    pub thread: String,
    /// The agent's name.
    pub agent: String,
    /// The model it was started with, if one was given.
    pub model: Option<String>,
    /// The agent's own session ID, once known.
    pub agent_session_id: Option<String>,
}

/// A turn as `usage` counts it.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageTurn {
    /// The session it ran on ([`UsageSession::id`]).
    pub session_id: i64,
    /// When it started: with the session's agent ID and `pid`, what identifies it in a copy.
    pub started_at: Millis,
    /// The pid of the sticky process that ran it.
    pub pid: i64,
    /// Its cost and tokens, as reported.
    pub figures: Figures,
}

/// The turns started in `[?1, ?2)`: their session, start, pid and figures.
pub(super) const USAGE_TURNS: &str = "SELECT session_id, started_at, pid, cost_usd, input_tokens, \
     output_tokens, cached_tokens FROM turns WHERE started_at >= ?1 AND started_at < ?2";

impl Store {
    /// Every session, with its thread, in the order of their row ids.
    pub fn usage_sessions(&self) -> Result<Vec<UsageSession>> {
        self.run("read the sessions", || {
            rows::all(
                &self.conn,
                "SELECT s.id, t.name, s.agent, s.model, s.agent_session_id FROM sessions AS s \
                 JOIN threads AS t ON t.id = s.thread_id ORDER BY s.id",
                [],
                |row| {
                    Ok(UsageSession {
                        id: row.get(0)?,
                        thread: row.get(1)?,
                        agent: row.get(2)?,
                        model: row.get(3)?,
                        agent_session_id: row.get(4)?,
                    })
                },
            )
        })
    }

    /// The turns started in `[since, until)` (either end open when `None`), read from
    /// migration 6's index `turns_usage` alone.
    pub fn usage_turns(
        &self,
        since: Option<Millis>,
        until: Option<Millis>,
    ) -> Result<Vec<UsageTurn>> {
        self.run("read the turns", || {
            rows::all(
                &self.conn,
                USAGE_TURNS,
                params![since.unwrap_or(Millis::MIN), until.unwrap_or(Millis::MAX)],
                |row| {
                    Ok(UsageTurn {
                        session_id: row.get(0)?,
                        started_at: row.get(1)?,
                        pid: row.get(2)?,
                        figures: rows::figures(row, 3)?,
                    })
                },
            )
        })
    }
}
