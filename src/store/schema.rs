//! The schema and its migrations: append-only numbered SQL over `PRAGMA user_version`.
//!
//! Migration N (counting from 1) is `MIGRATIONS[N - 1]`; a database at `user_version` N has run
//! the first N. Never edit or reorder a released migration: append a new one. A database with a
//! version above [`LATEST`] was written by a newer sticky and is refused before anything is
//! written to it, since an older binary cannot know what the newer schema means.

use std::path::Path;

use anyhow::Result;
use rusqlite::{Connection, Transaction, TransactionBehavior};

use super::error::{self, retry_busy};

/// `PRAGMA application_id` of a sticky database ("stky" in ASCII), so a foreign `SQLite` file
/// pointed at by mistake is recognised and left alone instead of getting sticky's tables.
pub(crate) const APPLICATION_ID: i64 = 0x7374_6b79;

/// The migrations, oldest first.
const MIGRATIONS: &[&str] = &[
    // 1: threads, sessions, turns. Times are Unix milliseconds; mode and status are text so the
    // file reads well in the sqlite3 shell. No CHECK constraints on those texts: adding a status
    // later would need a table rebuild, and the store validates them when it reads a row.
    "
    PRAGMA application_id = 1937009529;

    CREATE TABLE threads (
        id         INTEGER PRIMARY KEY,
        name       TEXT    NOT NULL UNIQUE,
        created_at INTEGER NOT NULL
    );

    CREATE TABLE sessions (
        id               INTEGER PRIMARY KEY,
        thread_id        INTEGER NOT NULL REFERENCES threads (id),
        agent            TEXT    NOT NULL,
        model            TEXT,
        agent_session_id TEXT,
        directory        TEXT    NOT NULL, -- a path: TEXT when UTF-8, else its bytes as a BLOB
        created_at       INTEGER NOT NULL,
        confirmed_at     INTEGER,
        rotated_from     INTEGER REFERENCES sessions (id),
        rotation_reason  TEXT,
        ended_at         INTEGER,
        -- Kept by begin_turn, so `status` never counts turns (it must stay fast at any size).
        turn_count       INTEGER NOT NULL DEFAULT 0
    );
    -- A thread has at most one live session, guaranteed by the file and not only by the policy.
    CREATE UNIQUE INDEX sessions_live ON sessions (thread_id) WHERE ended_at IS NULL;
    CREATE INDEX sessions_by_thread ON sessions (thread_id);

    CREATE TABLE turns (
        id            INTEGER PRIMARY KEY,
        session_id    INTEGER NOT NULL REFERENCES sessions (id),
        prompt        TEXT,
        mode          TEXT    NOT NULL,
        pid           INTEGER NOT NULL,
        host          TEXT    NOT NULL,
        started_at    INTEGER NOT NULL,
        ended_at      INTEGER,
        status        TEXT    NOT NULL,
        exit_code     INTEGER,
        signal        INTEGER,
        duration_ms   INTEGER,
        cost_usd      REAL,
        input_tokens  INTEGER,
        output_tokens INTEGER,
        error         TEXT
    );
    -- (session_id, rowid): a session's turns in order and its last turn without a scan.
    CREATE INDEX turns_by_session ON turns (session_id);
    -- Only the few running turns: finding them must not read every finished turn.
    CREATE INDEX turns_running ON turns (session_id) WHERE status = 'running';
    ",
    // 2 (part 10): the restores from sticky's vault, one row per turn that put a lost
    // session's files back (`sticky log` shows them). A table of its own, so turns keep their
    // columns and an older row reads as "no restore".
    "
    CREATE TABLE restores (
        turn_id    INTEGER PRIMARY KEY REFERENCES turns (id),
        files      INTEGER NOT NULL,
        bytes      INTEGER NOT NULL,
        created_at INTEGER NOT NULL
    );
    ",
    // 3 (part 11): answers kept, the ledger, context pressure and carried recaps. Every column
    // is nullable, so rows written before it read as "not recorded".
    "
    -- The answer as printed: UTF-8 text, deflated when answer_encoding is 'deflate' (see
    -- store/answer.rs); answer_bytes is its whole size, also when the stored part was cut.
    ALTER TABLE turns ADD COLUMN answer BLOB;
    ALTER TABLE turns ADD COLUMN answer_encoding TEXT;
    ALTER TABLE turns ADD COLUMN answer_bytes INTEGER;
    -- The ledger beyond migration 1's cost and tokens: cached input tokens, the context the
    -- last model call held and the model's window, and the agent's running totals as it
    -- reported them (JSON), the baseline the next turn's figures are taken from.
    ALTER TABLE turns ADD COLUMN cached_tokens INTEGER;
    ALTER TABLE turns ADD COLUMN context_tokens INTEGER;
    ALTER TABLE turns ADD COLUMN context_window INTEGER;
    ALTER TABLE turns ADD COLUMN reported_totals TEXT;
    -- Why sticky ran the turn itself: 'handoff' for the summary `--carry=summary` asks for.
    ALTER TABLE turns ADD COLUMN purpose TEXT;
    -- The recap carried into a session on rotation: its kind and size in bytes.
    ALTER TABLE sessions ADD COLUMN carried TEXT;
    ALTER TABLE sessions ADD COLUMN carried_bytes INTEGER;
    ",
    // 4 (part 11): the ledger's totals kept on rows (see store/totals.rs), so `status` reads
    // them from two rows at any number of turns or rotations instead of summing the turns:
    // each session's totals, and each thread's past (its ended sessions). The store keeps
    // them where figures are written; SQL triggers would too, but every process parses the
    // whole schema when it opens the file, and theirs cost each `sticky` run 0.37 M
    // instructions. A total is NULL until a turn reports that figure, as `sum` would be.
    "
    ALTER TABLE sessions ADD COLUMN total_cost_usd REAL;
    ALTER TABLE sessions ADD COLUMN total_input_tokens INTEGER;
    ALTER TABLE sessions ADD COLUMN total_output_tokens INTEGER;
    ALTER TABLE sessions ADD COLUMN total_cached_tokens INTEGER;
    ALTER TABLE threads ADD COLUMN past_turn_count INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE threads ADD COLUMN past_cost_usd REAL;
    ALTER TABLE threads ADD COLUMN past_input_tokens INTEGER;
    ALTER TABLE threads ADD COLUMN past_output_tokens INTEGER;
    ALTER TABLE threads ADD COLUMN past_cached_tokens INTEGER;

    UPDATE sessions SET (total_cost_usd, total_input_tokens, total_output_tokens,
        total_cached_tokens) = (SELECT sum(cost_usd), sum(input_tokens), sum(output_tokens),
        sum(cached_tokens) FROM turns WHERE session_id = sessions.id);
    UPDATE threads SET (past_turn_count, past_cost_usd, past_input_tokens, past_output_tokens,
        past_cached_tokens) = (SELECT coalesce(sum(turn_count), 0), sum(total_cost_usd),
        sum(total_input_tokens), sum(total_output_tokens), sum(total_cached_tokens)
        FROM sessions WHERE thread_id = threads.id AND ended_at IS NOT NULL);
    ",
    // 5 (part 13): one live thread per agent session. Two threads resuming one agent session
    // run their turns on it at once, each seeing the other's (a bundle imported twice by an
    // older sticky); the file now refuses it, as it refuses two live sessions in one thread.
    // Where an older sticky left such threads, the one that took the session first keeps it,
    // and every later one's session is ended (its totals moved to the thread's past, as a
    // rotation does), so its next turn starts a session of its own; `migrate` says which.
    "
    UPDATE sessions SET ended_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000
    WHERE id IN (SELECT s.id FROM sessions AS s WHERE s.ended_at IS NULL
        AND s.agent_session_id IS NOT NULL
        AND s.id > (SELECT min(k.id) FROM sessions AS k WHERE k.ended_at IS NULL
            AND k.agent = s.agent AND k.agent_session_id = s.agent_session_id));
    UPDATE threads SET (past_turn_count, past_cost_usd, past_input_tokens, past_output_tokens,
        past_cached_tokens) = (SELECT coalesce(sum(turn_count), 0), sum(total_cost_usd),
        sum(total_input_tokens), sum(total_output_tokens), sum(total_cached_tokens)
        FROM sessions WHERE thread_id = threads.id AND ended_at IS NOT NULL);
    CREATE UNIQUE INDEX sessions_live_agent ON sessions (agent, agent_session_id)
        WHERE ended_at IS NULL AND agent_session_id IS NOT NULL;
    ",
    // 6 (part 17): `sticky usage` and `sticky search`. Usage reads every turn's time, session,
    // pid and figures: from an index holding just those, a tenth of the pages of the turns
    // themselves (their prompts and answers), which `sticky usage --all` at 100,000 turns
    // could not afford to read. Search: an FTS5 index of every turn's prompt and kept answer,
    // its rowid the turn's id, kept in step by the statements that write turns (see
    // store/search.rs). Its own copy of the text, so snippets need no answer inflated. No
    // per-column sizes (`columnsize = 0`): nothing ranks by them, and it is one table less
    // for every process to parse. The answers stored as text are indexed here; the deflated
    // ones by `search::index_deflated`, in the same transaction.
    "
    CREATE INDEX turns_usage ON turns (started_at, session_id, pid, cost_usd, input_tokens,
        output_tokens, cached_tokens);
    CREATE VIRTUAL TABLE turns_text USING fts5 (prompt, answer, columnsize = 0,
        tokenize = 'unicode61 remove_diacritics 2');
    INSERT INTO turns_text (rowid, prompt, answer)
        SELECT id, prompt, CASE WHEN answer_encoding IS NULL THEN CAST(answer AS TEXT) END
        FROM turns WHERE status != 'running';
    ",
    // 7 (part 17): forks. A session made by `sticky fork` names the session it was forked
    // from: its row id, its thread's name and its agent session ID, copied when the fork is
    // made, so `sessions` and `log` show the lineage without a join, the first turn knows what
    // to fork, and `forget` of the source thread leaves the fork's record readable (no foreign
    // key: the source may be forgotten).
    "
    ALTER TABLE sessions ADD COLUMN forked_from INTEGER;
    ALTER TABLE sessions ADD COLUMN forked_from_thread TEXT;
    ALTER TABLE sessions ADD COLUMN forked_from_id TEXT;
    ",
    // 8 (part 17): the git branch a thread is named after (`-t @branch`, `-t @pr`, the
    // configuration's `thread = "branch"`), recorded by its turns, so `sticky threads` shows
    // it and `sticky threads --prune` finds the threads of deleted and merged branches. NULL:
    // named otherwise (every thread before it).
    "
    ALTER TABLE threads ADD COLUMN branch TEXT;
    ",
    // 9 (review 16): where the database was when `STICKY_DB` chose it, as a turn last used it
    // (its canonical path; one row, none for a `.sticky/` database). A copy of the file carries
    // it, so `relocate` and `trust` in a copy of a project whose state was kept there can find
    // the original's state when the list of projects that named it is lost (`standing`).
    "
    CREATE TABLE kept_at (path TEXT NOT NULL);
    ",
];

/// The migration that makes an agent session live in at most one thread (see its comment).
const ONE_THREAD_PER_SESSION: i64 = 5;

/// The threads whose live session another, earlier thread also resumes: the thread, the agent,
/// the session ID and the thread that keeps it. Read before migration
/// [`ONE_THREAD_PER_SESSION`] ends their sessions, to say so.
const SHARED_SESSIONS: &str = "
    SELECT t.name, s.agent, s.agent_session_id,
        (SELECT kt.name FROM sessions AS k JOIN threads AS kt ON kt.id = k.thread_id
         WHERE k.ended_at IS NULL AND k.agent = s.agent AND k.agent_session_id = s.agent_session_id
         ORDER BY k.id LIMIT 1)
    FROM sessions AS s JOIN threads AS t ON t.id = s.thread_id
    WHERE s.ended_at IS NULL AND s.agent_session_id IS NOT NULL
        AND EXISTS (SELECT 1 FROM sessions AS k WHERE k.ended_at IS NULL AND k.id < s.id
            AND k.agent = s.agent AND k.agent_session_id = s.agent_session_id)
    ORDER BY s.id";

/// What the migration that indexes the turns' text for `sticky search` creates (see its
/// comment); its deflated answers are indexed after it.
const SEARCH_INDEX: &str = "CREATE VIRTUAL TABLE turns_text USING fts5";

/// The first schema only a sticky that stamps its databases wrote: stamps came with schema 4
/// (commit 52839ba), and migration 5 (part 13) after them. A database at this version or later
/// was made, or opened, by a sticky that stamps its databases; without its stamp it is a copy
/// or a restored backup, not a database older than stamps (`project::stamp::verdict`).
pub(crate) const STAMPED_SINCE: i64 = 5;

/// The schema version this binary writes.
#[allow(
    clippy::cast_possible_wrap,
    reason = "there will never be 2^63 migrations"
)]
pub(crate) const LATEST: i64 = MIGRATIONS.len() as i64;

/// What the header and catalogue of a database say about whose it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Identity {
    /// `PRAGMA application_id`.
    pub application_id: i64,
    /// `PRAGMA user_version`.
    pub version: i64,
    /// How many objects the schema holds (0 for a new, empty file).
    pub objects: i64,
}

impl Identity {
    /// Reads the identity in one statement, hence from one snapshot: read piecemeal, a
    /// concurrent migration could show a blank header next to sticky's tables. Only reads, so
    /// it is safe on a file that turns out not to be ours.
    pub(crate) fn read(conn: &Connection) -> rusqlite::Result<Self> {
        conn.query_row(
            "SELECT (SELECT application_id FROM pragma_application_id), \
                    (SELECT user_version FROM pragma_user_version), \
                    (SELECT count(*) FROM sqlite_schema)",
            [],
            |row| {
                Ok(Self {
                    application_id: row.get(0)?,
                    version: row.get(1)?,
                    objects: row.get(2)?,
                })
            },
        )
    }

    /// Reads the identity as every run does, cheaply: [`read`](Self::read)'s table-valued
    /// pragmas cost 60 k instructions to compile, three plain statements 20 k. Read apart, the
    /// three are still true together when the application id is sticky's, read first: sticky
    /// never clears it and the version only grows, so the version read after it is one the file
    /// had with that id, and the count decides nothing for such a file. Any other file (blank,
    /// foreign) is read again by `read`, in one snapshot.
    pub(crate) fn read_quick(conn: &Connection) -> rusqlite::Result<Self> {
        let pragma = |name: &str| conn.pragma_query_value(None, name, |row| row.get::<_, i64>(0));
        if pragma("application_id")? != APPLICATION_ID {
            return Self::read(conn);
        }
        let version = pragma("user_version")?;
        let objects = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))?;
        Ok(Self {
            application_id: APPLICATION_ID,
            version,
            objects,
        })
    }

    /// Whether sticky may use (and migrate) this database; the error says why not.
    pub(crate) fn check(self, file: &Path) -> Result<()> {
        let ours = self.application_id == APPLICATION_ID;
        let blank = self.application_id == 0;
        if !ours && !blank {
            return Err(error::not_ours(
                file,
                format!(
                    "application id {:#x} belongs to another program",
                    self.application_id
                ),
            ));
        }
        // Checked before "blank but not empty" so a bare `PRAGMA user_version = 999` file reads
        // as what it claims to be.
        if self.version > LATEST {
            return Err(error::newer(file, self.version, LATEST));
        }
        // Migration 1 sets the application id in the transaction that creates the tables, so
        // a file of ours at version 0 had its version reset: migrating it again would fail on
        // the tables it holds (with a page of SQL), or worse.
        if ours && self.version == 0 {
            return Err(error::store(
                file,
                format!(
                    "holds sticky's tables but its schema version (PRAGMA user_version) was \
                     reset to 0, so sticky cannot tell how to use it and changed nothing; set it \
                     back to the version it had (this sticky writes {LATEST}), or move the file \
                     away to start over (sticky never deletes it)"
                ),
            ));
        }
        if blank && (self.version != 0 || self.objects != 0) {
            return Err(error::not_ours(
                file,
                "its schema was not created by sticky",
            ));
        }
        Ok(())
    }
}

/// Brings the database to [`LATEST`] under `BEGIN IMMEDIATE`.
///
/// `seen` is the identity read before taking the lock; when it is already current nothing is
/// locked or written, which keeps opening cheap for the common case. Otherwise the identity is
/// read again under the write lock, because another process may have migrated in between.
pub(crate) fn migrate(conn: &Connection, file: &Path, seen: Identity) -> Result<()> {
    if seen.version == LATEST && seen.application_id == APPLICATION_ID {
        return Ok(());
    }
    let tx = retry_busy(file, "lock the database to set it up", || {
        Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
    })?;
    let now = Identity::read(&tx).map_err(|e| error::sql(file, "read the schema version", &e))?;
    now.check(file)?;
    let from = usize::try_from(now.version).unwrap_or(0);
    let mut shared = Vec::new();
    for (version, migration) in (1_i64..).zip(MIGRATIONS).skip(from) {
        if version == ONE_THREAD_PER_SESSION {
            shared =
                shared_sessions(&tx).map_err(|e| error::sql(file, "read the live sessions", &e))?;
        }
        tx.execute_batch(migration)
            .and_then(|()| {
                // Found by what it adds, not by its number: migrations may land in another order.
                if migration.contains(SEARCH_INDEX) {
                    super::search::index_deflated(&tx)?;
                }
                tx.pragma_update(None, "user_version", version)
            })
            .map_err(|e| error::sql(file, &format!("migrate to schema version {version}"), &e))?;
    }
    tx.commit()
        .map_err(|e| error::sql(file, "commit the schema", &e))?;
    // Names quoted as Rust quotes them: a control character in one is shown, not obeyed.
    for (thread, agent, id, keeper) in shared {
        // Said whatever --quiet asks, as before msg: a thread's next turn changes session.
        crate::msg::write(format_args!(
            "thread {thread:?} resumed {agent:?} session {id:?}, which thread {keeper:?} \
             resumes too (a bundle imported twice by an older sticky), so each saw the other's \
             turns; {keeper:?} keeps it, and {thread:?}'s next turn starts a session of its own \
             (`sticky -t {} new --carry` starts it with a recap)",
            crate::msg::shell_word(&thread)
        ));
    }
    Ok(())
}

/// A thread sharing its live session with an earlier one: its name, the agent, the session ID
/// and the earlier thread's name.
type Shared = (String, String, String, String);

/// What [`SHARED_SESSIONS`] finds.
fn shared_sessions(conn: &Connection) -> rusqlite::Result<Vec<Shared>> {
    let mut statement = conn.prepare(SHARED_SESSIONS)?;
    let rows = statement.query_map([], |row| {
        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
    })?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(application_id: i64, version: i64, objects: i64) -> Identity {
        Identity {
            application_id,
            version,
            objects,
        }
    }

    #[test]
    fn identity_decides_whether_a_file_is_usable() {
        let file = Path::new("/p/sticky.db");
        let cases = [
            (identity(0, 0, 0), None),
            (identity(APPLICATION_ID, LATEST, 4), None),
            (
                identity(APPLICATION_ID, LATEST + 1, 4),
                Some("newer sticky"),
            ),
            (identity(0, 999, 0), Some("schema version 999")),
            (identity(0, 0, 1), Some("schema was not created by sticky")),
            (
                identity(0, LATEST, 0),
                Some("schema was not created by sticky"),
            ),
            (identity(42, 0, 0), Some("application id 0x2a")),
            (
                identity(APPLICATION_ID, 0, 9),
                Some("schema version (PRAGMA user_version) was reset to 0"),
            ),
        ];
        for (identity, expected) in cases {
            match (identity.check(file), expected) {
                (Ok(()), None) => {}
                (Err(error), Some(text)) => {
                    assert!(error.to_string().contains(text), "{identity:?}: {error}");
                }
                (result, _) => panic!("{identity:?}: unexpected {result:?}"),
            }
        }
    }

    #[test]
    fn migrating_a_new_database_sets_the_version_and_the_application_id() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn, Path::new(":memory:"), identity(0, 0, 0)).unwrap();
        let after = Identity::read(&conn).unwrap();
        assert_eq!(
            (after.application_id, after.version),
            (APPLICATION_ID, LATEST)
        );
        assert!(after.objects > 0);
        after.check(Path::new(":memory:")).unwrap();
        assert_eq!(APPLICATION_ID, 1_937_009_529, "the literal in migration 1");
    }

    /// A database in memory migrated to `version` only, as an older sticky left it.
    fn at_version(version: usize) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        migrate_to(&conn, version);
        conn
    }

    /// Runs the migrations of `conn` up to `version` only, as an older sticky did.
    fn migrate_to(conn: &Connection, version: usize) {
        for migration in &MIGRATIONS[..version] {
            conn.execute_batch(migration).unwrap();
        }
        conn.pragma_update(None, "user_version", i64::try_from(version).unwrap())
            .unwrap();
    }

    /// A row of a ledger's totals: turns, cost, input, output and cached tokens.
    type Totals = (i64, Option<f64>, Option<i64>, Option<i64>, Option<i64>);

    #[test]
    fn migration_4_adds_up_the_turns_an_older_database_already_holds() {
        let conn = at_version(3);
        conn.execute_batch(
            "INSERT INTO threads (name, created_at) VALUES ('main', 0), ('other', 0);
             INSERT INTO sessions (thread_id, agent, directory, created_at, ended_at, turn_count)
                 VALUES (1, 'claude', '/p', 0, 1, 2), (1, 'codex', '/p', 1, NULL, 1),
                        (2, 'qwen', '/p', 1, NULL, 0);
             INSERT INTO turns (session_id, mode, pid, host, started_at, status, cost_usd,
                 input_tokens, output_tokens, cached_tokens)
             VALUES (1, 'headless', 1, 'h', 0, 'ok', 0.25, 10, 20, 5),
                    (1, 'headless', 1, 'h', 0, 'ok', 0.5, 1, NULL, NULL),
                    (2, 'headless', 1, 'h', 0, 'failed', NULL, 7, NULL, NULL);",
        )
        .unwrap();
        let seen = Identity::read(&conn).unwrap();
        migrate(&conn, Path::new(":memory:"), seen).unwrap();
        let totals = |sql: &str| -> Vec<Totals> {
            let mut stmt = conn.prepare(sql).unwrap();
            stmt.query_map([], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                ))
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
        };
        assert_eq!(
            totals(
                "SELECT turn_count, total_cost_usd, total_input_tokens, total_output_tokens, \
                 total_cached_tokens FROM sessions ORDER BY id"
            ),
            [
                (2, Some(0.75), Some(11), Some(20), Some(5)),
                (1, None, Some(7), None, None),
                (0, None, None, None, None),
            ]
        );
        assert_eq!(
            totals(
                "SELECT past_turn_count, past_cost_usd, past_input_tokens, past_output_tokens, \
                 past_cached_tokens FROM threads ORDER BY id"
            ),
            [
                (2, Some(0.75), Some(11), Some(20), Some(5)),
                (0, None, None, None, None),
            ],
            "the past of a thread: its ended sessions"
        );
    }

    #[test]
    fn the_branch_migration_leaves_every_older_thread_named_otherwise() {
        // Found by what it does, not by number: other migrations may land before it.
        let at = MIGRATIONS
            .iter()
            .position(|migration| migration.contains("ADD COLUMN branch"))
            .unwrap();
        let conn = at_version(at);
        conn.execute_batch("INSERT INTO threads (name, created_at) VALUES ('feature/x', 0);")
            .unwrap();
        let seen = Identity::read(&conn).unwrap();
        migrate(&conn, Path::new(":memory:"), seen).unwrap();
        let branch: Option<String> = conn
            .query_row("SELECT branch FROM threads", [], |row| row.get(0))
            .unwrap();
        assert_eq!(branch, None, "named by -t, not after a branch");
    }

    #[test]
    fn migration_5_leaves_an_agent_session_live_in_its_first_thread_only() {
        let conn = at_version(4);
        // `second` and `third` imported one bundle (an older sticky let them); `other` has its
        // own session, and an ended session of `second`'s ID elsewhere is no conflict.
        conn.execute_batch(
            "INSERT INTO threads (name, created_at) VALUES ('second', 0), ('third', 0),
                 ('other', 0), ('old', 0);
             INSERT INTO sessions (thread_id, agent, agent_session_id, directory, created_at,
                 ended_at, turn_count, total_cost_usd)
             VALUES (1, 'claude', 'S', '/p', 0, NULL, 1, 0.5),
                    (2, 'claude', 'S', '/p', 0, NULL, 2, 0.25),
                    (3, 'claude', 'T', '/p', 0, NULL, 0, NULL),
                    (4, 'claude', 'S', '/p', 0, 1, 0, NULL),
                    (3, 'codex', 'S', '/p', 0, 1, 0, NULL);",
        )
        .unwrap();
        let seen = Identity::read(&conn).unwrap();
        migrate(&conn, Path::new(":memory:"), seen).unwrap();
        let live: Vec<(i64, bool)> = conn
            .prepare("SELECT id, ended_at IS NULL FROM sessions ORDER BY id")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            live,
            [(1, true), (2, false), (3, true), (4, false), (5, false)],
            "the first thread keeps it"
        );
        let past: (i64, Option<f64>) = conn
            .query_row(
                "SELECT past_turn_count, past_cost_usd FROM threads WHERE name = 'third'",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .unwrap();
        assert_eq!(
            past,
            (2, Some(0.25)),
            "the ended session's totals are its past"
        );
        let again = conn.execute(
            "INSERT INTO sessions (thread_id, agent, agent_session_id, directory, created_at)
             VALUES (2, 'claude', 'S', '/p', 0)",
            [],
        );
        let error = again.unwrap_err();
        assert_eq!(
            error.sqlite_error_code(),
            Some(rusqlite::ErrorCode::ConstraintViolation),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .contains("sessions.agent, sessions.agent_session_id"),
            "the store's error names it by this: {error}"
        );
    }

    #[test]
    fn the_fork_migration_reads_every_older_session_as_no_fork() {
        let conn = Connection::open_in_memory().unwrap();
        // Found by what it adds, not by its number: migrations may land in another order.
        let before = MIGRATIONS
            .iter()
            .position(|migration| migration.contains("forked_from"))
            .unwrap();
        migrate_to(&conn, before);
        conn.execute_batch(
            "INSERT INTO threads (name, created_at) VALUES ('main', 0);
             INSERT INTO sessions (thread_id, agent, agent_session_id, directory, created_at)
             VALUES (1, 'claude', 'S', '/p', 0);",
        )
        .unwrap();
        let seen = Identity::read(&conn).unwrap();
        migrate(&conn, Path::new(":memory:"), seen).unwrap();
        let sql = concat!(
            "SELECT ",
            super::super::rows::session_columns!(),
            " FROM sessions"
        );
        let row = conn
            .query_row(sql, [], super::super::rows::session)
            .unwrap();
        assert_eq!(
            (row.agent_session_id.as_deref(), row.forked_from),
            (Some("S"), None)
        );
        conn.execute(
            "UPDATE sessions SET forked_from = 7, forked_from_thread = 'idea', \
             forked_from_id = 'T'",
            [],
        )
        .unwrap();
        let row = conn
            .query_row(sql, [], super::super::rows::session)
            .unwrap();
        let from = row.forked_from.unwrap();
        assert_eq!(
            (
                from.session,
                from.thread.as_str(),
                from.agent_session_id.as_str()
            ),
            (7, "idea", "T")
        );
    }

    #[test]
    fn the_search_migration_indexes_the_prompts_and_answers_an_older_database_holds() {
        let conn = Connection::open_in_memory().unwrap();
        // Found by what it adds, not by its number: migrations may land in another order.
        let before = MIGRATIONS
            .iter()
            .position(|migration| migration.contains(SEARCH_INDEX))
            .unwrap();
        migrate_to(&conn, before);
        conn.execute_batch(
            "INSERT INTO threads (name, created_at) VALUES ('main', 0);
             INSERT INTO sessions (thread_id, agent, directory, created_at)
                 VALUES (1, 'claude', '/p', 0);",
        )
        .unwrap();
        let long = format!("{} the deflated zeppelin\n", "filler words ".repeat(500));
        let deflated = super::super::answer::encode(&long);
        assert_eq!(deflated.encoding, Some("deflate"));
        let plain = super::super::answer::encode("a plain albatross");
        let insert = "INSERT INTO turns (session_id, prompt, mode, pid, host, started_at, status, \
                      answer, answer_encoding, answer_bytes) \
                      VALUES (1, ?1, 'headless', 1, 'h', 0, 'ok', ?2, ?3, ?4)";
        for (prompt, answer) in [
            (Some("the first walrus"), Some(&plain)),
            (Some("the second"), Some(&deflated)),
            (None, None),
        ] {
            conn.execute(
                insert,
                rusqlite::params![
                    prompt,
                    answer.map(|a| &a.stored),
                    answer.and_then(|a| a.encoding),
                    answer.map(|a| a.bytes)
                ],
            )
            .unwrap();
        }
        // A deflated answer that does not inflate is left out, not a failed migration.
        conn.execute(
            "INSERT INTO turns (session_id, mode, pid, host, started_at, status, answer, \
             answer_encoding) VALUES (1, 'interactive', 1, 'h', 0, 'ok', x'ffff', 'deflate')",
            [],
        )
        .unwrap();
        let seen = Identity::read(&conn).unwrap();
        migrate(&conn, Path::new(":memory:"), seen).unwrap();
        let found = |words: &str| -> Vec<i64> {
            conn.prepare("SELECT rowid FROM turns_text WHERE turns_text MATCH ?1 ORDER BY rowid")
                .unwrap()
                .query_map([words], |row| row.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        assert_eq!(found("walrus"), [1], "a prompt");
        assert_eq!(found("albatross"), [1], "an answer kept as text");
        assert_eq!(found("zeppelin"), [2], "a deflated answer, inflated");
        assert_eq!(found("the"), [1, 2]);
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM turns_text", [], |row| row.get(0))
            .unwrap();
        assert_eq!(rows, 4, "every turn has its row, for its end to update");
    }
}
