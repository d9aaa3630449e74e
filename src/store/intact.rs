//! Proving the file intact before sticky acts on "nothing found".
//!
//! Damage can hide rows instead of failing loudly: an index page emptied by damage is still a
//! valid page, so a lookup through the index finds no thread or no live session, and a turn
//! would then start a second session while the first is still live (issue 11), the one thing
//! sticky must never do. So before sticky creates a session in a thread the file already had,
//! or a thread in a file that already holds rows, it runs `PRAGMA integrity_check` on each of
//! its tables, which compares every index with its table (`PRAGMA quick_check` does not, and
//! passes an emptied index). That path is rare (a first turn in a new thread, a rotation); a
//! resume never pays.
//!
//! The search index (migration 6's `turns_text` and the tables FTS5 keeps it in) is left out:
//! it holds no session and decides nothing a turn does, and FTS5's own check, which a check of
//! the whole file runs, reads every prompt and answer again: 1.8 of the 2 seconds the proof
//! took at 100,000 turns, against 0.2 for sticky's own tables.

use std::path::Path;

use anyhow::Result;
use rusqlite::Connection;

use super::error;

/// How many problems are read at most; the first one is shown.
const MAX_PROBLEMS: usize = 8;

/// sticky's tables: every table but the search index's.
const TABLES: &str = "SELECT name FROM sqlite_schema WHERE type = 'table' \
     AND name NOT LIKE 'turns\\_text%' ESCAPE '\\' ORDER BY name";

/// Fails with a store error when the file is damaged; `Ok` when `SQLite` finds it whole.
pub(crate) fn prove(conn: &Connection, file: &Path) -> Result<()> {
    let problems = problems(conn).map_err(|e| error::sql(file, "check the database", &e))?;
    match problems.first() {
        None => Ok(()),
        Some(first) => Err(error::damaged(file, first)),
    }
}

/// What `integrity_check` finds wrong in each of sticky's tables and their indexes.
fn problems(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let tables = conn
        .prepare(TABLES)?
        .query_map([], |row| row.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    if tables.is_empty() {
        return Ok(vec!["it holds none of sticky's tables".to_owned()]);
    }
    let mut problems = Vec::new();
    for table in tables {
        let sql = format!("PRAGMA integrity_check(\"{}\")", table.replace('"', "\"\""));
        let mut statement = conn.prepare(&sql)?;
        let found = statement
            .query_map([], |row| row.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        problems.extend(found.into_iter().filter(|line| line != "ok"));
        if problems.len() >= MAX_PROBLEMS {
            break;
        }
    }
    Ok(problems)
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

    #[test]
    fn the_search_index_is_left_out_of_the_proof() {
        let conn = Connection::open_in_memory().unwrap();
        let blank = super::super::schema::Identity::read(&conn).unwrap();
        super::super::schema::migrate(&conn, Path::new(":memory:"), blank).unwrap();
        // The index's text changed behind FTS5's back: its own check fails, which a check of
        // the whole file runs.
        conn.execute_batch(
            "INSERT INTO turns_text (rowid, prompt, answer) VALUES (1, 'hello world', 'x');
             UPDATE turns_text_content SET c0 = 'other words' WHERE id = 1;",
        )
        .unwrap();
        let whole: String = conn
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert!(whole.contains("turns_text"), "{whole}");
        prove(&conn, Path::new(":memory:")).unwrap();
        let checked = conn
            .prepare(TABLES)
            .unwrap()
            .query_map([], |row| row.get::<_, String>(0))
            .unwrap()
            .collect::<rusqlite::Result<Vec<_>>>()
            .unwrap();
        assert_eq!(
            checked,
            ["kept_at", "restores", "sessions", "threads", "turns"]
        );
    }
}
