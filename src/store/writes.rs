//! The writes outside a transaction, one statement each (plus the totals a turn's figures add
//! to): the agent's session ID and its confirmation, and the end of a turn, whose statements a
//! turn compiles while its agent runs ([`Store::compile_turn_end`]).

use anyhow::{Result, bail};
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};

use super::{Millis, Store, TurnEnd, TurnStatus, answer, now, search, totals};

/// Whether a session is confirmed yet ([`Store::confirm_session`]).
const CONFIRMED_AT: &str = "SELECT confirmed_at FROM sessions WHERE id = ?1";

/// The end of a turn ([`Store::finish_turn`]).
const FINISH_TURN: &str = "UPDATE turns SET ended_at = ?2, duration_ms = max(0, ?2 - started_at), \
     status = ?3, exit_code = ?4, signal = ?5, cost_usd = ?6, input_tokens = ?7, \
     output_tokens = ?8, error = ?9, answer = ?10, answer_encoding = ?11, answer_bytes = ?12, \
     cached_tokens = ?13, context_tokens = ?14, context_window = ?15, reported_totals = ?16 \
     WHERE id = ?1";

impl Store {
    /// Records the agent's own session ID once it is known (Codex, opencode report it late).
    pub fn set_agent_session_id(&self, session_id: i64, agent_session_id: &str) -> Result<()> {
        let changed = self.run("record the agent session id", || {
            self.conn.execute(
                "UPDATE sessions SET agent_session_id = ?2 WHERE id = ?1",
                params![session_id, agent_session_id],
            )
        })?;
        self.expect_row(changed, "session", session_id)?;
        self.keep_sessions_in_file();
        Ok(())
    }

    /// Forgets the agent's ID of a session the agent never saved (its first turn failed before
    /// it kept anything) and that sticky cannot choose again, so no view offers an ID that
    /// nothing can resume; a confirmed session keeps its ID.
    pub fn forget_agent_session_id(&self, session_id: i64) -> Result<()> {
        self.run("forget the agent session id", || {
            self.conn.execute(
                "UPDATE sessions SET agent_session_id = NULL \
                 WHERE id = ?1 AND confirmed_at IS NULL",
                params![session_id],
            )
        })?;
        self.keep_sessions_in_file();
        Ok(())
    }

    /// Compiles the statements of a turn's end ([`Store::confirm_session`],
    /// [`Store::finish_turn`]) into the connection's statement cache, for a turn to call while
    /// its agent runs: 0.1 ms of SQL compiling that otherwise came after the agent's exit, on
    /// the way to the caller's prompt (BENCHMARKS.md). Best effort: a statement that does not
    /// compile now fails again, and is reported, where it runs.
    pub fn compile_turn_end(&self) {
        for sql in [
            CONFIRMED_AT,
            totals::ADD_TO_LIVE_SESSION,
            FINISH_TURN,
            search::INDEX_ENDED,
        ] {
            let _ = self.conn.prepare_cached(sql);
        }
    }

    /// Records that the agent confirmed the session (an event or its transcript); the first
    /// confirmation counts, later ones change nothing.
    ///
    /// Every resumed turn ends here, nearly always on a session confirmed long ago, so it looks
    /// before it writes: reading `confirmed_at` (17 k instructions, no write lock) costs a third
    /// of an UPDATE ... RETURNING (49 k). A missing row is an error; only a session confirmed by
    /// this call is checkpointed into the file. Should another process confirm it in between,
    /// the UPDATE changes nothing and that process keeps it in the file.
    pub fn confirm_session(&self, session_id: i64) -> Result<()> {
        let confirmed: Option<Option<Millis>> = self.run("confirm the session", || {
            self.conn
                .prepare_cached(CONFIRMED_AT)?
                .query_row([session_id], |row| row.get(0))
                .optional()
        })?;
        match confirmed {
            None => self.expect_row(0, "session", session_id),
            Some(Some(_)) => Ok(()),
            Some(None) => {
                let changed = self.run("confirm the session", || {
                    self.conn.execute(
                        "UPDATE sessions SET confirmed_at = ?2 \
                         WHERE id = ?1 AND confirmed_at IS NULL",
                        params![session_id, now()],
                    )
                })?;
                if changed == 1 {
                    self.keep_sessions_in_file();
                }
                Ok(())
            }
        }
    }

    /// Records the end of a turn: `ended_at` = now, `duration_ms` = now - `started_at`, and the
    /// fields of `end`, whose status must be a final one. Overwrites an `abandoned` mark, since
    /// the process that ran the turn knows best how it ended.
    pub fn finish_turn(&self, turn_id: i64, end: &TurnEnd) -> Result<()> {
        let status = match end.status {
            Some(TurnStatus::Running) | None => {
                bail!("turn {turn_id} cannot finish without a final status")
            }
            Some(status) => status,
        };
        let answer = end.answer.as_deref().map(answer::encode);
        let (ledger, figures) = (&end.ledger, &end.ledger.figures);
        // One transaction: the turn's figures and the totals they add to change together.
        let changed = self.run("record the end of the turn", || {
            let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
            totals::add_turn(&tx, turn_id, figures)?;
            let now = now();
            let changed = tx.prepare_cached(FINISH_TURN)?.execute(params![
                turn_id,
                now,
                status,
                end.exit_code,
                end.signal,
                figures.cost_usd,
                figures.input_tokens,
                figures.output_tokens,
                ledger.error,
                answer.as_ref().map(|a| &a.stored),
                answer.as_ref().and_then(|a| a.encoding),
                answer.as_ref().map(|a| a.bytes),
                figures.cached_tokens,
                ledger.context_tokens,
                ledger.context_window,
                end.reported_totals,
            ])?;
            let kept = end.answer.as_deref().map(answer::kept);
            search::index(&tx, || {
                tx.prepare_cached(search::INDEX_ENDED)?
                    .execute(params![turn_id, kept])
            })?;
            tx.commit()?;
            Ok(changed)
        })?;
        self.expect_row(changed, "turn", turn_id)
    }
}
