//! The rows the vault adds: the restores a turn made (migration 2, part 10), and forgetting a
//! whole thread for `sticky forget`.

use anyhow::Result;
use rusqlite::params;

use super::{Store, now};

/// A turn that put a lost session's files back from sticky's vault. A bundle carries it as its
/// turn's `restored` (the turn left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RestoreRow {
    /// The turn.
    #[serde(skip)]
    pub turn_id: i64,
    /// How many files it put back.
    pub files: i64,
    /// Their bytes.
    pub bytes: i64,
    /// When (Unix milliseconds).
    pub created_at: i64,
}

/// What forgetting a thread deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Forgotten {
    /// Its sessions.
    pub sessions: usize,
    /// Its turns.
    pub turns: usize,
}

impl Store {
    /// Records that turn `turn_id` restored `files` files (`bytes` bytes) from the vault.
    pub fn record_restore(&self, turn_id: i64, files: usize, bytes: u64) -> Result<()> {
        self.run("record the restore", || {
            self.conn.execute(
                "INSERT OR REPLACE INTO restores (turn_id, files, bytes, created_at) \
                 VALUES (?1, ?2, ?3, ?4)",
                params![
                    turn_id,
                    i64::try_from(files).unwrap_or(i64::MAX),
                    i64::try_from(bytes).unwrap_or(i64::MAX),
                    now()
                ],
            )
        })?;
        Ok(())
    }

    /// The restores of a thread's turns, oldest first.
    pub fn restores(&self, thread_id: i64) -> Result<Vec<RestoreRow>> {
        self.run("read the restores", || {
            self.conn
                .prepare_cached(
                    "SELECT turn_id, files, bytes, created_at FROM restores WHERE turn_id IN \
                     (SELECT turns.id FROM turns JOIN sessions ON sessions.id = turns.session_id \
                      WHERE sessions.thread_id = ?1) ORDER BY turn_id",
                )?
                .query_map([thread_id], |row| {
                    Ok(RestoreRow {
                        turn_id: row.get(0)?,
                        files: row.get(1)?,
                        bytes: row.get(2)?,
                        created_at: row.get(3)?,
                    })
                })?
                .collect()
        })
    }

    /// Deletes thread `thread_id` and every row of it (its sessions, turns and restores), in
    /// one transaction, leaving none of its text in the file (see [`Store::erasing`]).
    pub fn forget_thread(&mut self, thread_id: i64) -> Result<Forgotten> {
        self.erasing(|store| store.forget_rows(thread_id))
    }

    /// Runs `delete`, which deletes rows, so that none of their text stays in the file: the
    /// freed pages are zeroed (`secure_delete`, for this call only: a turn pays nothing), the
    /// search index is merged without the deleted words ([`super::search::OPTIMIZE`], which
    /// [`super::search::UNINDEX_THREAD`]'s callers run, in time the size of the index), and the
    /// WAL, which still holds the pages as the turns wrote them, is checkpointed and emptied
    /// (best effort: a reader holding it up leaves it to a later checkpoint).
    pub fn erasing<T>(&mut self, delete: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.conn
            .execute_batch("PRAGMA secure_delete = ON")
            .map_err(|e| super::error::sql(&self.path, "turn on secure_delete", &e))?;
        let done = delete(self);
        let _ = self.conn.execute_batch("PRAGMA secure_delete = OFF");
        if done.is_ok() {
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
        done
    }

    fn forget_rows(&mut self, thread_id: i64) -> Result<Forgotten> {
        let path = self.path.clone();
        self.immediate(|tx| {
            let sql = |statement: &str| {
                tx.tx
                    .execute(statement, [thread_id])
                    .map_err(|e| super::error::sql(&path, "forget the thread", &e))
            };
            super::search::write(&tx.tx, || {
                tx.tx.execute(super::search::UNINDEX_THREAD, [thread_id])?;
                tx.tx.execute(super::search::OPTIMIZE, [])
            })
            .map_err(|e| super::error::sql(&path, "forget the thread", &e))?;
            let of_thread = "SELECT id FROM sessions WHERE thread_id = ?1";
            sql(&format!(
                "DELETE FROM restores WHERE turn_id IN \
                 (SELECT id FROM turns WHERE session_id IN ({of_thread}))"
            ))?;
            let turns = sql(&format!(
                "DELETE FROM turns WHERE session_id IN ({of_thread})"
            ))?;
            let sessions = sql("DELETE FROM sessions WHERE thread_id = ?1")?;
            sql("DELETE FROM threads WHERE id = ?1")?;
            tx.sessions_changed.set(true);
            Ok(Forgotten { sessions, turns })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::store::{Mode, NewSession};

    /// A thread with one session and `turns` turns; returns (thread id, turn ids).
    fn thread(store: &mut Store, name: &str, turns: usize) -> (i64, Vec<i64>) {
        store
            .immediate(|tx| {
                let thread = tx.ensure_thread(name)?;
                let session = tx.start_session(
                    thread.id,
                    &NewSession {
                        agent: "claude",
                        model: None,
                        agent_session_id: Some(name),
                        directory: Path::new("/p"),
                        rotated_from: None,
                        carried: None,
                    },
                )?;
                let ids = (0..turns)
                    .map(|_| tx.begin_turn(session.id, Some("hi"), Mode::Headless, 1, "h"))
                    .collect::<Result<Vec<_>>>()?;
                Ok((thread.id, ids))
            })
            .unwrap()
    }

    #[test]
    fn restores_are_recorded_per_turn_and_forgetting_a_thread_deletes_its_rows_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("sticky.db")).unwrap();
        let (main, main_turns) = thread(&mut store, "main", 2);
        let (scratch, scratch_turns) = thread(&mut store, "scratch", 3);
        store.record_restore(main_turns[1], 2, 300).unwrap();
        store.record_restore(scratch_turns[0], 1, 10).unwrap();
        let restores = store.restores(main).unwrap();
        assert_eq!(restores.len(), 1);
        assert_eq!(
            (restores[0].turn_id, restores[0].files, restores[0].bytes),
            (main_turns[1], 2, 300)
        );

        let forgotten = store.forget_thread(scratch).unwrap();
        assert_eq!(
            forgotten,
            Forgotten {
                sessions: 1,
                turns: 3
            }
        );
        assert!(store.thread("scratch").unwrap().is_none());
        assert!(store.restores(scratch).unwrap().is_empty());
        assert_eq!(store.turns(main).unwrap().len(), 2);
        assert_eq!(store.restores(main).unwrap().len(), 1);
        store.prove_intact_if_used().unwrap();
    }
}
