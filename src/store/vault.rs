//! The rows the vault adds: the restores a turn made (migration 2, part 10), and forgetting a
//! whole thread for `sticky forget`.

use anyhow::Result;
use rusqlite::params;

use super::{Store, now};

/// A turn that put a lost session's files back from sticky's vault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestoreRow {
    /// The turn.
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
    /// one transaction.
    pub fn forget_thread(&mut self, thread_id: i64) -> Result<Forgotten> {
        let path = self.path.clone();
        self.immediate(|tx| {
            let sql = |statement: &str| {
                tx.tx
                    .execute(statement, [thread_id])
                    .map_err(|e| super::error::sql(&path, "forget the thread", &e))
            };
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
