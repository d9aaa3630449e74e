//! Proving the file intact before sticky acts on "nothing found".
//!
//! Damage can hide rows instead of failing loudly: an index page emptied by damage is still a
//! valid page, so a lookup through the index finds no thread or no live session, and a turn
//! would then start a second session while the first is still live (issue 11), the one thing
//! sticky must never do. So before sticky creates a session in a thread the file already had,
//! or a thread in a file that already holds rows, it runs `PRAGMA integrity_check`, which
//! compares every index with its table (`PRAGMA quick_check` does not, and passes an emptied
//! index). That path is rare (a first turn in a new thread, a rotation); a resume never pays.

use std::path::Path;

use anyhow::Result;
use rusqlite::Connection;

use super::error;

/// How many problems `integrity_check` lists at most; the first one is shown.
const MAX_PROBLEMS: u32 = 8;

/// Fails with a store error when the file is damaged; `Ok` when `SQLite` finds it whole.
pub(crate) fn prove(conn: &Connection, file: &Path) -> Result<()> {
    let problems = conn
        .prepare(&format!("PRAGMA integrity_check({MAX_PROBLEMS})"))
        .and_then(|mut statement| {
            statement
                .query_map([], |row| row.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(|e| error::sql(file, "check the database", &e))?;
    match problems.first() {
        Some(first) if problems.len() == 1 && first == "ok" => Ok(()),
        first => Err(error::damaged(
            file,
            first.map_or("integrity_check said nothing", String::as_str),
        )),
    }
}

/// Whether the file holds rows beyond thread `thread_id`: turns, sessions, or other threads.
/// Reads three tables, so that damage hiding one of them still leaves a trace in another.
pub(crate) fn is_used(conn: &Connection, thread_id: i64) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM turns) OR EXISTS (SELECT 1 FROM sessions) \
         OR EXISTS (SELECT 1 FROM threads WHERE id <> ?1)",
        [thread_id],
        |row| row.get(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intact_file_passes_and_usage_is_seen_in_any_table() {
        let conn = Connection::open_in_memory().unwrap();
        let blank = super::super::schema::Identity::read(&conn).unwrap();
        super::super::schema::migrate(&conn, Path::new(":memory:"), blank).unwrap();
        prove(&conn, Path::new(":memory:")).unwrap();
        conn.execute(
            "INSERT INTO threads (name, created_at) VALUES ('main', 0)",
            [],
        )
        .unwrap();
        assert!(!is_used(&conn, 1).unwrap(), "only the thread itself");
        assert!(is_used(&conn, 2).unwrap(), "another thread");
    }

    #[test]
    fn an_emptied_index_passes_quick_check_but_not_the_proof() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sticky.db");
        let conn = Connection::open(&file).unwrap();
        let blank = super::super::schema::Identity::read(&conn).unwrap();
        super::super::schema::migrate(&conn, &file, blank).unwrap();
        conn.execute_batch(
            "INSERT INTO threads (name, created_at) VALUES ('main', 0);
             INSERT INTO sessions (thread_id, agent, directory, created_at)
             VALUES (1, 'claude', '/p', 0);",
        )
        .unwrap();
        let (root, page_size): (i64, i64) = conn
            .query_row(
                "SELECT rootpage, (SELECT page_size FROM pragma_page_size) FROM sqlite_schema \
                 WHERE name = 'sessions_live'",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .unwrap();
        drop(conn);
        // The index's only page, rewritten as a valid empty index leaf.
        let mut bytes = std::fs::read(&file).unwrap();
        let (root, page_size) = (
            usize::try_from(root).unwrap(),
            usize::try_from(page_size).unwrap(),
        );
        let page = &mut bytes[(root - 1) * page_size..root * page_size];
        page.fill(0);
        page[0] = 0x0a;
        page[5..7].copy_from_slice(&u16::try_from(page_size).unwrap().to_be_bytes());
        std::fs::write(&file, &bytes).unwrap();

        let conn = Connection::open(&file).unwrap();
        let quick: String = conn
            .query_row("PRAGMA quick_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(
            quick, "ok",
            "quick_check does not compare indexes with tables"
        );
        let error = prove(&conn, &file).unwrap_err();
        assert!(error.to_string().contains("is damaged ("), "{error}");
        assert!(error.to_string().contains("sessions_live"), "{error}");
        assert_eq!(crate::exit::exit_for(&error), crate::exit::Exit::Store);
    }
}
