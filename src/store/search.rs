//! `sticky search`: the FTS5 index of the turns' text (migration 6's `turns_text`, its rowid
//! the turn's id, its columns the prompt and the kept answer), and the query.
//!
//! The index is kept in step by the transactions that write turns: a turn is indexed, its
//! prompt and its answer together, when it ends (`Store::finish_turn`) or is recorded
//! abandoned (`Tx::abandon_running_turns`), an imported turn with both (`Tx::add_thread`), and a thread's turns
//! leave the index with them (`forget`, `import --replace`). Answers are indexed as kept (cut
//! at [`MAX_ANSWER`](super::MAX_ANSWER)), as text: the deflated ones inflated first.
//!
//! What the user types is words, not FTS5's query language: each word is quoted, so `a-b`,
//! `"`, `:` or `NOT` are searched for as they are, and every word must appear (in any order, in
//! the prompt or the answer). Words match whole (case and accents ignored), a word ending in
//! `*` every word it begins.

use anyhow::Result;
use rusqlite::{Connection, params};

use super::{Millis, Store, answer};

/// Inserts turn `id`'s row into the index (a turn beginning, or imported). A plain insert: `OR
/// REPLACE` first looked for a row to delete, a tenth of what indexing adds to a turn; a row
/// already there (a stale index) fails it, and [`index`] then makes the index again.
pub(super) const INDEX_TURN: &str =
    "INSERT INTO turns_text (rowid, prompt, answer) VALUES (?1, ?2, ?3)";

/// Indexes turn `?1`, ending, with its prompt and its kept answer `?2` (`NULL` for none): one
/// insert, where an insert at the start and an update at the end cost FTS5 three writes.
pub(super) const INDEX_ENDED: &str =
    "INSERT INTO turns_text (rowid, prompt, answer) SELECT id, prompt, ?2 FROM turns WHERE id = ?1";

/// Indexes the prompts of thread `?1`'s running turns, about to be recorded abandoned (they
/// never reach [`INDEX_ENDED`]).
pub(super) const INDEX_ABANDONED: &str = "INSERT INTO turns_text (rowid, prompt, answer) \
     SELECT id, prompt, NULL FROM turns WHERE status = 'running' \
     AND session_id IN (SELECT id FROM sessions WHERE thread_id = ?1)";

/// Indexes turn `?1`'s answer `?2` (the migration, for answers stored deflated).
pub(super) const INDEX_ANSWER: &str = "UPDATE turns_text SET answer = ?2 WHERE rowid = ?1";

/// Merges the index's segments into one, leaving out the rows deleted: a deletion only adds a
/// marker, the words staying in the older segments (FTS5's own `secure-delete` misses those an
/// earlier update marked), so a forgotten turn's text would stay in the file.
pub(super) const OPTIMIZE: &str = "INSERT INTO turns_text (turns_text) VALUES ('optimize')";

/// Removes thread `?1`'s turns from the index, before the turns themselves go.
pub(super) const UNINDEX_THREAD: &str = "DELETE FROM turns_text WHERE rowid IN \
     (SELECT id FROM turns WHERE session_id IN (SELECT id FROM sessions WHERE thread_id = ?1))";

/// Where the snippet's matches begin and end (characters of Unicode's private use area, which
/// `escape` shows as they are: the caller splits at them before escaping the rest).
pub const MATCH_START: char = '\u{e000}';
/// See [`MATCH_START`].
pub const MATCH_END: char = '\u{e001}';

/// The turns holding `?1` (an FTS5 query), started since `?2`, of thread `?3` (any when
/// NULL), the newest `?4`; with a snippet of 16 words around the match in the prompt and in the
/// answer, the matches between [`MATCH_START`] and [`MATCH_END`]. The index is the outer loop,
/// newest first, each turn then found by its id.
pub(super) const SEARCH: &str = "SELECT t.id, th.name, t.started_at, s.agent, \
     snippet(turns_text, 0, '\u{e000}', '\u{e001}', '…', 16), \
     snippet(turns_text, 1, '\u{e000}', '\u{e001}', '…', 16) \
     FROM turns_text JOIN turns AS t ON t.id = turns_text.rowid \
     JOIN sessions AS s ON s.id = t.session_id JOIN threads AS th ON th.id = s.thread_id \
     WHERE turns_text MATCH ?1 AND t.started_at >= ?2 AND (?3 IS NULL OR th.name = ?3) \
     ORDER BY turns_text.rowid DESC LIMIT ?4";

/// A turn that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The turn's id.
    pub turn: i64,
    /// Its thread's name.
    pub thread: String,
    /// When it started.
    pub started_at: Millis,
    /// The agent it ran on.
    pub agent: String,
    /// Where the words were found: `prompt` or `answer`.
    pub column: &'static str,
    /// The text around the match, each match between [`MATCH_START`] and [`MATCH_END`].
    pub snippet: String,
}

/// The FTS5 query for `text`: each word quoted (a `"` inside doubled), a trailing `*` kept
/// outside the quotes as a prefix search; `None` when `text` holds no word.
pub fn query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split_whitespace()
        .filter_map(|word| {
            let (word, prefix) = match word.strip_suffix('*') {
                Some(stem) if !stem.is_empty() => (stem, "*"),
                _ => (word, ""),
            };
            (!word.trim_matches('*').is_empty())
                .then(|| format!("\"{}\"{prefix}", word.replace('"', "\"\"")))
        })
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

impl Store {
    /// The turns whose prompt or kept answer holds every word of `query` (see [`query`]), the
    /// newest first, at most `limit`; only those started since `since` and, with `thread`, of
    /// that thread.
    pub fn search(
        &self,
        query: &str,
        since: Option<Millis>,
        thread: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Found>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let since = since.unwrap_or(Millis::MIN);
        self.run("search the turns", || {
            self.conn
                .prepare_cached(SEARCH)?
                .query_map(params![query, since, thread, limit], |row| {
                    let prompt: Option<String> = row.get(4)?;
                    let answer: Option<String> = row.get(5)?;
                    let in_prompt = prompt.as_ref().filter(|p| p.contains(MATCH_START));
                    let (column, snippet) = match (in_prompt, answer) {
                        (Some(prompt), _) => ("prompt", prompt.clone()),
                        (None, Some(answer)) if answer.contains(MATCH_START) => ("answer", answer),
                        (None, answer) => ("answer", answer.or(prompt).unwrap_or_default()),
                    };
                    Ok(Found {
                        turn: row.get(0)?,
                        thread: row.get(1)?,
                        started_at: row.get(2)?,
                        agent: row.get(3)?,
                        column,
                        snippet,
                    })
                })?
                .collect()
        })
    }
}

/// Runs `write`, which indexes what a turn row written before it in the transaction holds
/// ([`INDEX_TURN`], [`INDEX_ANSWER`]); when the index is damaged (a copy of the file taken
/// while a checkpoint wrote it, torn between two states, can hold sticky's tables whole and
/// FTS5's pages from another time) or holds a row at the turn's id already (stale), rebuilds it
/// from the turns, which indexes this turn too: the index is sticky's own copy of what the
/// turns hold, and a damaged copy must not fail the turn it is written for. Other errors are
/// the caller's.
pub(super) fn index(
    conn: &Connection,
    write: impl FnOnce() -> rusqlite::Result<usize>,
) -> rusqlite::Result<()> {
    match write() {
        Ok(_) => Ok(()),
        Err(error)
            if is_damage(&error)
                || error.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) =>
        {
            repair(conn)
        }
        Err(error) => Err(error),
    }
}

/// Runs `write`, which takes turns out of the index ([`UNINDEX_THREAD`]) before they go; when
/// the index is damaged (see [`index`]), rebuilds it from the turns and runs `write` again.
pub(super) fn write(
    conn: &Connection,
    write: impl Fn() -> rusqlite::Result<usize>,
) -> rusqlite::Result<()> {
    match write() {
        Ok(_) => Ok(()),
        Err(error) if is_damage(&error) => {
            repair(conn)?;
            write().map(drop)
        }
        Err(error) => Err(error),
    }
}

/// Whether `error` says the search index is damaged.
fn is_damage(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt)
    ) || error.to_string().contains("fts5")
}

/// The index made again from the turns: dropped, created as migration 6 creates it, filled.
/// FTS5 must read its table's format version to drop it, so a version torn away is written
/// back first (the configuration is an ordinary table; FTS5 writes version 4).
fn repair(conn: &Connection) -> rusqlite::Result<()> {
    let _ = conn.execute(
        "INSERT OR REPLACE INTO turns_text_config (k, v) VALUES ('version', 4)",
        [],
    );
    conn.execute_batch(
        "DROP TABLE IF EXISTS turns_text;
         CREATE VIRTUAL TABLE turns_text USING fts5 (prompt, answer, columnsize = 0,
             tokenize = 'unicode61 remove_diacritics 2');
         INSERT INTO turns_text (rowid, prompt, answer)
             SELECT id, prompt, CASE WHEN answer_encoding IS NULL THEN CAST(answer AS TEXT) END
             FROM turns WHERE status != 'running';",
    )?;
    index_deflated(conn)
}

/// Indexes the deflated answers of the turns migration 6 found (its SQL indexed the rest),
/// in the migration's transaction. An answer that does not inflate is left unindexed: `show`
/// reports it, and the migration must not fail on it.
pub(super) fn index_deflated(conn: &Connection) -> rusqlite::Result<()> {
    let mut read = conn.prepare(
        "SELECT id, answer, answer_encoding FROM turns \
         WHERE answer IS NOT NULL AND answer_encoding IS NOT NULL",
    )?;
    let mut index = conn.prepare(INDEX_ANSWER)?;
    let mut rows = read.query([])?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let stored: Vec<u8> = row.get(1)?;
        let encoding: Option<String> = row.get(2)?;
        if let Ok(text) = answer::decode(&stored, encoding.as_deref()) {
            index.execute(params![id, text])?;
        }
    }
    Ok(())
}
