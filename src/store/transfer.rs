//! Threads transferred between projects (`sticky export`, `sticky import`, `sticky relocate`):
//! a thread's turns read whole (with their answers, the agent's reported totals and restores),
//! a thread added whole with its sessions and turns, a thread removed whole (`import
//! --replace`), and a live session moved to the project's directory.

use std::collections::HashMap;

use anyhow::{Result, bail};
use rusqlite::params;

use super::rows::{thread_columns, turn_columns};
use super::{
    Millis, RestoreRow, SessionRow, Store, ThreadRow, Tx, WholeTurn, answer, intact, rows, search,
    totals,
};

impl Store {
    /// Every turn of a thread whole, oldest first: its row, its kept answer (decoded), the
    /// agent's reported totals and its restore.
    pub fn whole_turns(&self, thread_id: i64) -> Result<Vec<WholeTurn>> {
        let sql = concat!(
            "SELECT ",
            turn_columns!(),
            ", answer, answer_encoding, reported_totals, restores.files, restores.bytes, \
             restores.created_at FROM turns LEFT JOIN restores ON restores.turn_id = turns.id \
             WHERE session_id IN (SELECT id FROM sessions WHERE thread_id = ?1) ORDER BY id"
        );
        let read = self.run("read the turns", || {
            rows::all(&self.conn, sql, [thread_id], whole_turn)
        })?;
        read.into_iter()
            .map(|(mut turn, stored)| {
                if let Some((bytes, encoding)) = stored {
                    let size = turn.row.answer_bytes.unwrap_or(0);
                    let mut kept =
                        self.decoded(turn.row.id, (&bytes, encoding.as_deref()), size)?;
                    kept.bytes = kept.bytes.max(i64::try_from(kept.text.len()).unwrap_or(0));
                    turn.answer = Some(kept);
                }
                Ok(turn)
            })
            .collect()
    }
}

impl Store {
    /// The thread whose live session is `agent`'s session `id`, if one is: an agent session is
    /// live in one thread only (migration 5's index), so importing it again is refused.
    pub fn thread_resuming(&self, agent: &str, id: &str) -> Result<Option<ThreadRow>> {
        self.run("read the live sessions", || {
            thread_resuming(&self.conn, agent, id)
        })
    }

    /// The thread whose next turn takes `agent`'s session `id`: it is its live session, or
    /// its live session is a fork of it not made yet (the turn forks it). An ended session is
    /// kept by no thread: no turn resumes it.
    pub fn thread_keeping(&self, agent: &str, id: &str) -> Result<Option<ThreadRow>> {
        Ok(self.threads_keeping(agent, id)?.into_iter().next())
    }

    /// Every thread whose next turn takes `agent`'s session `id` ([`Store::thread_keeping`]),
    /// oldest first: one session can be live in one thread and the source of forks not made
    /// yet in others, whose vault copy `forget` and `import --replace` keep (review 19, M2).
    pub fn threads_keeping(&self, agent: &str, id: &str) -> Result<Vec<ThreadRow>> {
        let sql = concat!(
            "SELECT ",
            thread_columns!(),
            " FROM threads WHERE id IN (SELECT thread_id FROM sessions WHERE ended_at IS NULL \
             AND agent = ?1 AND (agent_session_id = ?2 OR (confirmed_at IS NULL \
             AND forked_from_id = ?2))) ORDER BY id"
        );
        self.run("read the live sessions", || {
            rows::all(&self.conn, sql, [agent, id], rows::thread)
        })
    }
}

/// The thread whose live session is `agent`'s session `id`.
fn thread_resuming(
    conn: &rusqlite::Connection,
    agent: &str,
    id: &str,
) -> rusqlite::Result<Option<ThreadRow>> {
    rows::one(
        conn,
        concat!(
            "SELECT ",
            thread_columns!(),
            " FROM threads WHERE id = (SELECT thread_id FROM sessions WHERE ended_at IS NULL \
             AND agent = ?1 AND agent_session_id = ?2)"
        ),
        [agent, id],
        rows::thread,
    )
}

/// An answer as stored: its bytes and their encoding.
type Stored = (Vec<u8>, Option<String>);

/// A turn of [`Store::whole_turns`]'s columns, with its answer as stored, decoded by the
/// caller.
fn whole_turn(row: &rusqlite::Row<'_>) -> rusqlite::Result<(WholeTurn, Option<Stored>)> {
    let turn = rows::turn(row)?;
    let answer: Option<Vec<u8>> = row.get(21)?;
    let encoding: Option<String> = row.get(22)?;
    let files: Option<i64> = row.get(24)?;
    let restore = match (files, row.get(25)?, row.get(26)?) {
        (Some(files), Some(bytes), Some(created_at)) => Some(RestoreRow {
            turn_id: turn.id,
            files,
            bytes,
            created_at,
        }),
        _ => None,
    };
    Ok((
        WholeTurn {
            row: turn,
            answer: None,
            reported_totals: row.get(23)?,
            restore,
        },
        answer.map(|stored| (stored, encoding)),
    ))
}

impl Tx<'_> {
    /// The thread named `name`, if it exists.
    pub fn thread(&self, name: &str) -> Result<Option<ThreadRow>> {
        self.read(rows::thread_by_name(&self.tx, name))
    }

    /// The thread whose live session is `agent`'s session `id`, if one is
    /// ([`Store::thread_resuming`]).
    pub fn thread_resuming(&self, agent: &str, id: &str) -> Result<Option<ThreadRow>> {
        self.read(thread_resuming(&self.tx, agent, id))
    }

    /// Adds thread `name` with `sessions` (oldest first, their ids and `rotated_from` those of
    /// the file they came from) and their `turns` (whose `session_id` is such an id) with their
    /// answers and restores. Sessions and turns get new ids here; the lineage, the turns and
    /// the restores follow them, and migration 4's triggers add the turns up on their sessions.
    /// Refuses a name in use.
    pub fn add_thread(
        &self,
        name: &str,
        created_at: Millis,
        sessions: &[SessionRow],
        turns: &[WholeTurn],
    ) -> Result<ThreadRow> {
        if self.read(rows::thread_by_name(&self.tx, name))?.is_some() {
            bail!("thread {name:?} exists already");
        }
        let thread = self.insert_thread(name, created_at)?;
        let mut ids: HashMap<i64, i64> = HashMap::new();
        for session in sessions {
            let count = turns
                .iter()
                .filter(|t| t.row.session_id == session.id)
                .count();
            let rotated_from = session.rotated_from.and_then(|old| ids.get(&old).copied());
            let id = self.insert_session(thread.id, session, rotated_from, count)?;
            ids.insert(session.id, id);
        }
        for turn in turns {
            let Some(session) = ids.get(&turn.row.session_id) else {
                bail!("turn of unknown session #{}", turn.row.session_id);
            };
            self.insert_turn(*session, turn)?;
        }
        self.write(totals::recount(&self.tx, thread.id))?;
        Ok(thread)
    }

    /// Inserts the empty thread `name`, proving the file intact when threads need it.
    fn insert_thread(&self, name: &str, created_at: Millis) -> Result<ThreadRow> {
        let thread = self.write(self.tx.query_row(
            concat!(
                "INSERT INTO threads (name, created_at) VALUES (?1, ?2) RETURNING ",
                thread_columns!()
            ),
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

    /// Inserts a copy of `whole` into session `session_id` (a new id), its answer stored as a
    /// turn's end stores one (cut at the cap, deflated when large) and its restore with it.
    fn insert_turn(&self, session_id: i64, whole: &WholeTurn) -> Result<()> {
        let turn = &whole.row;
        let figures = &turn.ledger.figures;
        let answer = whole.answer.as_ref().map(|kept| {
            let mut encoded = answer::encode(&kept.text);
            encoded.bytes = encoded.bytes.max(kept.bytes);
            encoded
        });
        let id: i64 = self.write(self.tx.query_row(
            "INSERT INTO turns (session_id, prompt, mode, pid, host, started_at, ended_at, \
             status, exit_code, signal, duration_ms, cost_usd, input_tokens, output_tokens, \
             error, cached_tokens, context_tokens, context_window, purpose, answer, \
             answer_encoding, answer_bytes, reported_totals) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
             ?17, ?18, ?19, ?20, ?21, ?22, ?23) RETURNING id",
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
                figures.cost_usd,
                figures.input_tokens,
                figures.output_tokens,
                turn.ledger.error,
                figures.cached_tokens,
                turn.ledger.context_tokens,
                turn.ledger.context_window,
                turn.purpose,
                answer.as_ref().map(|a| &a.stored),
                answer.as_ref().and_then(|a| a.encoding),
                answer.as_ref().map(|a| a.bytes),
                whole.reported_totals,
            ],
            |row| row.get(0),
        ))?;
        let text = whole.answer.as_ref().map(|kept| answer::kept(&kept.text));
        self.write(search::index(&self.tx, || {
            self.tx
                .execute(search::INDEX_TURN, params![id, turn.prompt, text])
        }))?;
        if let Some(restore) = &whole.restore {
            self.write(self.tx.execute(
                "INSERT INTO restores (turn_id, files, bytes, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![id, restore.files, restore.bytes, restore.created_at],
            ))?;
        }
        Ok(())
    }

    /// Removes a thread with all its sessions and turns.
    pub fn remove_thread(&self, thread_id: i64) -> Result<()> {
        self.sessions_changed.set(true);
        self.write(search::write(&self.tx, || {
            self.tx.execute(search::UNINDEX_THREAD, [thread_id])?;
            self.tx.execute(search::OPTIMIZE, [])
        }))?;
        self.write(self.tx.execute(
            "DELETE FROM restores WHERE turn_id IN (SELECT turns.id FROM turns JOIN sessions \
             ON sessions.id = turns.session_id WHERE sessions.thread_id = ?1)",
            [thread_id],
        ))?;
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

    use crate::agent::ledger::Figures;
    use crate::store::{Mode, NewSession, Store, TurnEnd, TurnLedger, TurnStatus};

    /// A new Claude Code session `id` in `/a`.
    fn claude_session(id: &str) -> NewSession<'_> {
        NewSession {
            agent: "claude",
            model: None,
            agent_session_id: Some(id),
            directory: Path::new("/a"),
            rotated_from: None,
            carried: None,
        }
    }

    #[test]
    fn a_thread_is_added_whole_with_its_lineage_and_removed_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("a.db")).unwrap();
        let new = claude_session;
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
        let long = "a line of a long answer\n".repeat(1000);
        let end = TurnEnd {
            status: Some(TurnStatus::Ok),
            ledger: TurnLedger {
                figures: Figures {
                    cost_usd: Some(0.5),
                    input_tokens: Some(10),
                    ..Figures::default()
                },
                ..TurnLedger::default()
            },
            answer: Some(long.clone()),
            reported_totals: Some("{\"cost_usd\":0.5}".to_owned()),
            ..TurnEnd::default()
        };
        store.finish_turn(1, &end).unwrap();
        store.record_restore(2, 3, 300).unwrap();
        let thread = store.thread("main").unwrap().unwrap();
        let mut sessions = store.sessions(thread.id).unwrap();
        let turns = store.whole_turns(thread.id).unwrap();
        assert_eq!(turns[0].answer.as_ref().unwrap().text, long);
        assert_eq!(turns[1].restore.unwrap().files, 3);
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
        let copied_turns = other.whole_turns(added.id).unwrap();
        assert_eq!(copied_turns.len(), 2);
        assert_eq!(copied_turns[1].row.session_id, copied[1].id);
        assert_eq!(copied_turns[1].row.status, TurnStatus::Running);
        assert_eq!(other.turn_count(copied[1].id).unwrap(), 1);
        // The answer (deflated again), the reported totals, the restore and the ledger came too.
        assert_eq!(copied_turns[0].answer, turns[0].answer);
        assert_eq!(copied_turns[0].row.answer_bytes, turns[0].row.answer_bytes);
        assert_eq!(copied_turns[0].reported_totals, turns[0].reported_totals);
        let restore = copied_turns[1].restore.unwrap();
        assert_eq!(
            (restore.turn_id, restore.files, restore.bytes),
            (copied_turns[1].row.id, 3, 300)
        );
        assert_eq!(
            other.totals(None, added.id).unwrap(),
            store.totals(None, thread.id).unwrap()
        );
        assert!(
            other
                .immediate(|tx| tx.add_thread("copied", 5, &sessions, &turns))
                .is_err()
        );
        other.immediate(|tx| tx.remove_thread(added.id)).unwrap();
        assert!(other.thread("copied").unwrap().is_none());
        assert!(other.restores(added.id).unwrap().is_empty());
        assert!(other.turns(added.id).unwrap().is_empty());
    }

    #[test]
    fn an_agent_session_is_added_live_to_one_thread_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("a.db")).unwrap();
        let session = claude_session("x");
        store
            .immediate(|tx| {
                let t = tx.ensure_thread("main")?;
                tx.start_session(t.id, &session)
            })
            .unwrap();
        let thread = store.thread("main").unwrap().unwrap();
        let sessions = store.sessions(thread.id).unwrap();
        let error = store
            .immediate(|tx| tx.add_thread("second", 5, &sessions, &[]))
            .unwrap_err();
        assert!(
            format!("{error:#}").contains("another thread already resumes that agent session"),
            "{error:#}"
        );
        assert!(store.thread("second").unwrap().is_none(), "rolled back");
        assert_eq!(
            store
                .thread_resuming("claude", "x")
                .unwrap()
                .map(|t| t.name),
            Some("main".to_owned())
        );
        assert!(store.thread_resuming("codex", "x").unwrap().is_none());
        // Ended, the session no longer holds it: a later thread may resume it.
        let mut ended = sessions.clone();
        ended[0].ended_at = Some(9);
        store
            .immediate(|tx| tx.add_thread("third", 5, &ended, &[]))
            .unwrap();
    }
}
