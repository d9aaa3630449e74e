//! Threads transferred between projects (`sticky import`, `sticky relocate`): a thread added whole
//! with its sessions and turns, a thread removed whole (`import --replace`), and a live session
//! moved to the project's directory.

use std::collections::HashMap;

use anyhow::{Result, bail};
use rusqlite::params;

use super::{Millis, SessionRow, ThreadRow, TurnRow, Tx, intact, rows, totals};

impl Tx<'_> {
    /// The thread named `name`, if it exists.
    pub fn thread(&self, name: &str) -> Result<Option<ThreadRow>> {
        self.read(rows::thread_by_name(&self.tx, name))
    }

    /// Adds thread `name` with `sessions` (oldest first, their ids and `rotated_from` those of
    /// the file they came from) and their `turns` (whose `session_id` is such an id). Sessions
    /// get new ids here; the lineage and the turns follow them. Refuses a name in use.
    pub fn add_thread(
        &self,
        name: &str,
        created_at: Millis,
        sessions: &[SessionRow],
        turns: &[TurnRow],
    ) -> Result<ThreadRow> {
        if self.read(rows::thread_by_name(&self.tx, name))?.is_some() {
            bail!("thread {name:?} exists already");
        }
        let thread = self.insert_thread(name, created_at)?;
        let mut ids: HashMap<i64, i64> = HashMap::new();
        for session in sessions {
            let count = turns.iter().filter(|t| t.session_id == session.id).count();
            let rotated_from = session.rotated_from.and_then(|old| ids.get(&old).copied());
            let id = self.insert_session(thread.id, session, rotated_from, count)?;
            ids.insert(session.id, id);
        }
        for turn in turns {
            let Some(session) = ids.get(&turn.session_id) else {
                bail!("turn of unknown session #{}", turn.session_id);
            };
            self.insert_turn(*session, turn)?;
        }
        self.write(totals::recount(&self.tx, thread.id))?;
        Ok(thread)
    }

    /// Inserts the empty thread `name`, proving the file intact when threads need it.
    fn insert_thread(&self, name: &str, created_at: Millis) -> Result<ThreadRow> {
        let thread = self.write(self.tx.query_row(
            "INSERT INTO threads (name, created_at) VALUES (?1, ?2) RETURNING id, name, created_at",
            params![name, created_at],
            rows::thread,
        ))?;
        self.created_thread.set(Some(thread.id));
        if self.read(intact::is_used(&self.tx, thread.id))? {
            intact::prove(&self.tx, self.path)?;
        }
        self.sessions_changed.set(true);
        Ok(thread)
    }

    /// Inserts a copy of `session` into thread `thread_id`, rotated from the new id
    /// `rotated_from` and with `turn_count` turns; returns its new id.
    fn insert_session(
        &self,
        thread_id: i64,
        session: &SessionRow,
        rotated_from: Option<i64>,
        turn_count: usize,
    ) -> Result<i64> {
        self.write(self.tx.query_row(
            "INSERT INTO sessions (thread_id, agent, model, agent_session_id, directory, \
             created_at, confirmed_at, rotated_from, rotation_reason, ended_at, turn_count, \
             carried, carried_bytes) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) RETURNING id",
            params![
                thread_id,
                session.agent,
                session.model,
                session.agent_session_id,
                rows::path_to_sql(&session.directory),
                session.created_at,
                session.confirmed_at,
                rotated_from,
                session.rotation_reason,
                session.ended_at,
                i64::try_from(turn_count).unwrap_or(i64::MAX),
                session.carried,
                session.carried_bytes,
            ],
            |row| row.get(0),
        ))
    }

    /// Inserts a copy of `turn` into session `session_id` (a new id).
    fn insert_turn(&self, session_id: i64, turn: &TurnRow) -> Result<()> {
        self.write(self.tx.execute(
            "INSERT INTO turns (session_id, prompt, mode, pid, host, started_at, ended_at, \
             status, exit_code, signal, duration_ms, cost_usd, input_tokens, output_tokens, \
             error, cached_tokens, context_tokens, context_window, purpose) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
             ?17, ?18, ?19)",
            params![
                session_id,
                turn.prompt,
                turn.mode,
                turn.pid,
                turn.host,
                turn.started_at,
                turn.ended_at,
                turn.status,
                turn.exit_code,
                turn.signal,
                turn.duration_ms,
                turn.cost_usd,
                turn.input_tokens,
                turn.output_tokens,
                turn.error,
                turn.cached_tokens,
                turn.context_tokens,
                turn.context_window,
                turn.purpose,
            ],
        ))?;
        Ok(())
    }

    /// Removes a thread with all its sessions and turns.
    pub fn remove_thread(&self, thread_id: i64) -> Result<()> {
        self.sessions_changed.set(true);
        self.write(self.tx.execute(
            "DELETE FROM turns WHERE session_id IN (SELECT id FROM sessions WHERE thread_id = ?1)",
            [thread_id],
        ))?;
        // The lineage first, so no session is removed while another still names it.
        self.write(self.tx.execute(
            "UPDATE sessions SET rotated_from = NULL WHERE thread_id = ?1",
            [thread_id],
        ))?;
        self.write(
            self.tx
                .execute("DELETE FROM sessions WHERE thread_id = ?1", [thread_id]),
        )?;
        self.write(
            self.tx
                .execute("DELETE FROM threads WHERE id = ?1", [thread_id]),
        )?;
        Ok(())
    }

    /// Records that the live session `session_id` now runs in `directory` (its agent's files
    /// were moved there).
    pub fn move_session(&self, session_id: i64, directory: &std::path::Path) -> Result<()> {
        self.sessions_changed.set(true);
        let changed = self.write(self.tx.execute(
            "UPDATE sessions SET directory = ?2 WHERE id = ?1 AND ended_at IS NULL",
            params![session_id, rows::path_to_sql(directory)],
        ))?;
        if changed != 1 {
            bail!("session {session_id} is not a live session");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use crate::store::{Mode, NewSession, Store, TurnStatus};

    #[test]
    fn a_thread_is_added_whole_with_its_lineage_and_removed_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("a.db")).unwrap();
        let new = |id| NewSession {
            agent: "claude",
            model: None,
            agent_session_id: Some(id),
            directory: Path::new("/a"),
            rotated_from: None,
            carried: None,
        };
        store
            .immediate(|tx| {
                let t = tx.ensure_thread("main")?;
                let old = tx.start_session(t.id, &new("x"))?;
                tx.begin_turn(old.id, Some("one"), Mode::Headless, 1, "h")?;
                let live = tx.start_session(
                    t.id,
                    &NewSession {
                        rotated_from: Some((old.id, "new")),
                        ..new("y")
                    },
                )?;
                tx.begin_turn(live.id, Some("two"), Mode::Headless, 1, "h")
            })
            .unwrap();
        let thread = store.thread("main").unwrap().unwrap();
        let mut sessions = store.sessions(thread.id).unwrap();
        let turns = store.turns(thread.id).unwrap();
        sessions[1].directory = PathBuf::from("/b");
        let mut other = Store::open(&dir.path().join("b.db")).unwrap();
        let added = other
            .immediate(|tx| tx.add_thread("copied", 5, &sessions, &turns))
            .unwrap();
        let copied = other.sessions(added.id).unwrap();
        assert_eq!(copied.len(), 2);
        assert_eq!(copied[1].rotated_from, Some(copied[0].id));
        assert_eq!(copied[1].directory, Path::new("/b"));
        assert_eq!(
            other
                .live_session(added.id)
                .unwrap()
                .unwrap()
                .agent_session_id
                .as_deref(),
            Some("y")
        );
        let copied_turns = other.turns(added.id).unwrap();
        assert_eq!(copied_turns.len(), 2);
        assert_eq!(copied_turns[1].session_id, copied[1].id);
        assert_eq!(copied_turns[1].status, TurnStatus::Running);
        assert_eq!(other.turn_count(copied[1].id).unwrap(), 1);
        assert!(
            other
                .immediate(|tx| tx.add_thread("copied", 5, &sessions, &turns))
                .is_err()
        );
        other.immediate(|tx| tx.remove_thread(added.id)).unwrap();
        assert!(other.thread("copied").unwrap().is_none());
        assert!(other.turns(added.id).unwrap().is_empty());
    }
}
