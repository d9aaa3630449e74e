//! opencode's session as database rows: read out of its `opencode.db` as JSON, and added to
//! another one with the directory rewritten.
//!
//! opencode keeps a session in `SQLite` (shared/research/agents.md §3.5): a `session` row (with
//! its `directory` and `project_id`), rows keyed by `session_id` (messages, their parts) and the
//! `project` row (`worktree`). Which tables exist and their columns are read from the file, so
//! a column a newer opencode adds travels too; on import only the columns both files have are
//! written.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;

use anyhow::{Context as _, Result, bail};
use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OpenFlags, params_from_iter};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

use crate::exit::StickyError;
use crate::sql_json::{to_json, to_sql};

/// The key of a BLOB's hexadecimal in the exported rows.
const BLOB: &str = "blob";

/// How long a write waits for opencode's own lock on its database.
const BUSY: std::time::Duration = std::time::Duration::from_secs(10);

/// The rows of session `id` as JSON, or `None` when the database has no such session.
pub fn export(db: &Path, id: &str) -> Result<Option<Vec<u8>>> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .with_context(|| format!("cannot open opencode's database {}", db.display()))?;
    conn.busy_timeout(BUSY)?;
    let read = || -> rusqlite::Result<Option<Map<String, Value>>> {
        let tables = tables(&conn)?;
        if !tables.iter().any(|t| t == "session") {
            return Ok(None);
        }
        let session = select(&conn, "session", "id", id)?;
        let Some(project) = session
            .first()
            .and_then(|row| row.get("project_id"))
            .cloned()
        else {
            return Ok(None);
        };
        let mut out = Map::new();
        out.insert("session".into(), Value::Array(session));
        for table in &tables {
            if table == "project" {
                if let Some(project) = project.as_str() {
                    out.insert(
                        table.clone(),
                        Value::Array(select(&conn, table, "id", project)?),
                    );
                }
            } else if table != "session" && columns(&conn, table)?.iter().any(|c| c == "session_id")
            {
                out.insert(
                    table.clone(),
                    Value::Array(select(&conn, table, "session_id", id)?),
                );
            }
        }
        Ok(Some(out))
    };
    let tables =
        read().with_context(|| format!("cannot read opencode's database {}", db.display()))?;
    Ok(tables.map(|tables| {
        json!({ "session": id, "tables": tables })
            .to_string()
            .into_bytes()
    }))
}

/// The rows of session `id` as [`export`] writes them, from the vault's document of them
/// (`crate::vault`'s `rows.json`: its `rows`, table by table, a BLOB as `{"hex": ...}`);
/// a table without rows is left out.
pub fn from_vault(id: &str, document: &[u8]) -> Result<Vec<u8>> {
    let document: Value =
        serde_json::from_slice(document).context("the vault's copy of the rows is not JSON")?;
    let mut tables = document
        .get("rows")
        .and_then(Value::as_object)
        .cloned()
        .context("the vault's copy of the rows holds no tables")?;
    // The vault names a referred table even when the database has none (opencode's `project`
    // in an older schema); with no rows it carries nothing, and import would refuse its name.
    tables.retain(|_, rows| rows.as_array().is_none_or(|rows| !rows.is_empty()));
    for value in tables
        .values_mut()
        .filter_map(Value::as_array_mut)
        .flatten()
        .filter_map(Value::as_object_mut)
        .flat_map(|row| row.values_mut())
    {
        if let Some(hex) = value.get("hex").cloned() {
            *value = json!({ "blob": hex });
        }
    }
    Ok(json!({ "session": id, "tables": tables })
        .to_string()
        .into_bytes())
}

/// Adds the rows read from `json` (as [`export`] writes them, of session `id`) to the database
/// at `db`, rewriting the session's `directory` and the project's `worktree` from `from` to
/// `to`, in one transaction.
///
/// The rows come from a bundle: they are parsed as they stream in, one row at a time into the
/// columns the table has here (a cell a scalar or a BLOB, anything else refused), so what is
/// held is one row's values, whatever the file's shape (issue 23: parsed whole as JSON, a
/// small bundle of 240 MB of `[],` took 2 GB).
///
/// The session may be in the database already: for another directory it is another project's
/// (opencode resumes a session by its ID alone), and refused; for `to`, its rows are replaced
/// only when the bundle holds every one of them (the same session, exported again), never
/// losing a turn taken since. With `replace` (`sticky relocate`, moving the session it has) the
/// rows there are replaced whatever they hold.
pub fn import(
    db: &Path,
    json: &mut dyn Read,
    id: &str,
    (from, to): (&Path, &Path),
    replace: bool,
) -> Result<()> {
    if !db.is_file() {
        bail!(
            "opencode has no database here yet ({}): run `opencode session list` once so it \
             creates it, then import again",
            db.display()
        );
    }
    let mut conn = Connection::open(db)
        .with_context(|| format!("cannot open opencode's database {}", db.display()))?;
    conn.busy_timeout(BUSY)?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // The rows arrive in the bundle's order: a row naming the session may come before it.
    tx.execute_batch("PRAGMA defer_foreign_keys = ON")?;
    let here = tables_of(&tx)?;
    let mut known = HashMap::new();
    for table in &here {
        known.insert(table.clone(), columns(&tx, table)?);
    }
    let kept = existing(&tx, &here, &known, id, to, replace)?;
    let mut sink = Sink {
        tx: &tx,
        columns: known,
        moving: (from, to),
        id,
        kept,
        failed: None,
    };
    let mut reader = serde_json::Deserializer::from_reader(std::io::BufReader::new(json));
    let parsed = serde::de::DeserializeSeed::deserialize(Document(&mut sink), &mut reader)
        .and_then(|()| reader.end());
    if let Some(failed) = sink.failed.take() {
        return Err(failed);
    }
    parsed.map_err(|error| {
        StickyError::Usage(format!(
            "the bundle's opencode rows are not rows sticky exported: {error} (nothing was \
             changed)"
        ))
    })?;
    if !sink.kept.is_empty() {
        return Err(StickyError::Usage(format!(
            "opencode's session {id} here holds {} row{} the bundle lacks (turns taken after \
             it was exported): sticky does not overwrite them, --replace or not; go on with the \
             session here as it is, or import a bundle exported since (nothing was changed)",
            sink.kept.len(),
            if sink.kept.len() == 1 { "" } else { "s" }
        ))
        .into());
    }
    tx.commit()?;
    Ok(())
}

/// The rows session `id` has in the database already, removed (the bundle's take their
/// place), each as [`canonical`] names it, for the import to prove the bundle holds them all;
/// none to prove with `replace`. A session there for another directory than `to` is refused.
fn existing(
    tx: &Connection,
    here: &[String],
    columns: &HashMap<String, Vec<String>>,
    id: &str,
    to: &Path,
    replace: bool,
) -> Result<HashSet<String>> {
    let mut kept = HashSet::new();
    let session = select(tx, "session", "id", id)?;
    let Some(row) = session.first() else {
        return Ok(kept);
    };
    let directory = row.get("directory").and_then(Value::as_str).unwrap_or("");
    if !replace && Path::new(directory) != to {
        return Err(StickyError::Usage(format!(
            "this HOME has opencode session {id} already, for another directory ({directory}), \
             and opencode keeps a session by its ID alone, so that is the session of another \
             project (perhaps the one this bundle came from): imported here, two projects would \
             resume one session, each seeing the other's turns, and one session cannot run in \
             two directories (import --replace does not change that); go on with it there, or \
             import the bundle in another HOME or on another machine (nothing was changed)"
        ))
        .into());
    }
    for table in here
        .iter()
        .filter(|t| t.as_str() != "session" && t.as_str() != "project")
    {
        let names = &columns[table];
        if !names.iter().any(|c| c == "session_id") {
            continue;
        }
        if !replace {
            let mut statement = tx.prepare(&format!(
                "SELECT * FROM \"{}\" WHERE session_id = ?1",
                table.replace('"', "\"\"")
            ))?;
            let rows = statement.query_map([id], |row| {
                (0..names.len())
                    .map(|index| row.get::<_, Sql>(index).map(Some))
                    .collect::<rusqlite::Result<Vec<_>>>()
            })?;
            for row in rows {
                kept.insert(canonical(table, &row?));
            }
        }
        tx.execute(
            &format!(
                "DELETE FROM \"{}\" WHERE session_id = ?1",
                table.replace('"', "\"\"")
            ),
            [id],
        )?;
    }
    tx.execute("DELETE FROM session WHERE id = ?1", [id])?;
    Ok(kept)
}

/// One row of `table` as a string two equal rows share: its table and each column's value.
fn canonical(table: &str, cells: &[Option<Sql>]) -> String {
    format!("{table}\0{cells:?}")
}

/// Where the streamed rows go: the open transaction, the columns of each table here, the move,
/// and the rows already here the bundle must hold.
struct Sink<'a> {
    tx: &'a Connection,
    columns: HashMap<String, Vec<String>>,
    moving: (&'a Path, &'a Path),
    id: &'a str,
    kept: HashSet<String>,
    /// An error of the database (not of the rows' shape), told as itself.
    failed: Option<anyhow::Error>,
}

impl Sink<'_> {
    /// Inserts one row of `table` (its cells by column, in the table's order here); a project
    /// row that exists already is kept.
    fn insert(&mut self, table: &str, mut cells: Vec<Option<Sql>>) -> Result<()> {
        let known = &self.columns[table];
        // Only the session's own rows: a bundle adds nothing to another session of this HOME.
        let key = match table {
            "project" => None,
            "session" => Some("id"),
            _ => Some("session_id"),
        };
        if let Some(key) = key {
            let own = known
                .iter()
                .zip(&cells)
                .any(|(name, cell)| name == key && *cell == Some(Sql::Text(self.id.to_owned())));
            if !own {
                bail!(StickyError::Usage(format!(
                    "the bundle's opencode rows hold a row of {table} that is not session {}'s; \
                     sticky adds only the session's own rows (nothing was changed)",
                    self.id
                )));
            }
        }
        let (from, to) = self.moving;
        for (name, cell) in known.iter().zip(cells.iter_mut()) {
            if matches!(
                (table, name.as_str()),
                ("session", "directory") | ("project", "worktree")
            ) {
                if let Some(Sql::Text(text)) = cell {
                    *text = moved(text, from, to);
                }
            }
        }
        self.kept.remove(&canonical(table, &cells));
        let (sql, values) = insert_statement(table, known, cells);
        self.tx
            .execute(&sql, params_from_iter(values))
            .with_context(|| format!("cannot add a row to opencode's {table} table"))?;
        Ok(())
    }
}

/// The statement that inserts `cells` (by the column names `known`) into `table`, and its
/// values: a project row that exists already is kept (`INSERT OR IGNORE`).
fn insert_statement(table: &str, known: &[String], cells: Vec<Option<Sql>>) -> (String, Vec<Sql>) {
    let (names, values): (Vec<String>, Vec<Sql>) = known
        .iter()
        .zip(cells)
        .filter_map(|(name, cell)| {
            cell.map(|cell| (format!("\"{}\"", name.replace('"', "\"\"")), cell))
        })
        .unzip();
    let verb = if table == "project" {
        "INSERT OR IGNORE"
    } else {
        "INSERT"
    };
    let marks = (1..=values.len())
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "{verb} INTO \"{}\" ({}) VALUES ({marks})",
        table.replace('"', "\"\""),
        names.join(", ")
    );
    (sql, values)
}

/// The rows document: `{"session": ID, "tables": {TABLE: [ROW, ...], ...}}`.
struct Document<'s, 'a>(&'s mut Sink<'a>);

impl<'de> DeserializeSeed<'de> for Document<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Document<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object with the session and its tables")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut session = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "session" => {
                    let named: String = map.next_value()?;
                    if named != self.0.id {
                        return Err(de::Error::custom(format!(
                            "they name session {named}, not {}",
                            self.0.id
                        )));
                    }
                    session = true;
                }
                "tables" => map.next_value_seed(Tables(&mut *self.0))?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !session {
            return Err(de::Error::custom("they name no session"));
        }
        Ok(())
    }
}

/// The tables, each with its rows.
struct Tables<'s, 'a>(&'s mut Sink<'a>);

impl<'de> DeserializeSeed<'de> for Tables<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Tables<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the tables, by name")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(table) = map.next_key::<String>()? {
            if !self.0.columns.contains_key(&table) {
                return Err(de::Error::custom(format!(
                    "opencode's database here has no table {table:?} (is opencode older here?)"
                )));
            }
            map.next_value_seed(Rows {
                sink: &mut *self.0,
                table: &table,
            })?;
        }
        Ok(())
    }
}

/// The rows of one table, each inserted as it is read.
struct Rows<'s, 'a, 't> {
    sink: &'s mut Sink<'a>,
    table: &'t str,
}

impl<'de> DeserializeSeed<'de> for Rows<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Rows<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of rows")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let known = self.sink.columns[self.table].clone();
        while let Some(cells) = seq.next_element_seed(Row(&known))? {
            if let Err(error) = self.sink.insert(self.table, cells) {
                self.sink.failed = Some(error);
                return Err(de::Error::custom("a row could not be added"));
            }
        }
        Ok(())
    }
}

/// One row: its cells by the table's columns here (a column it does not have is skipped).
struct Row<'c>(&'c [String]);

impl<'de> DeserializeSeed<'de> for Row<'_> {
    type Value = Vec<Option<Sql>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Row<'_> {
    type Value = Vec<Option<Sql>>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a row, its cells by column")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut cells = vec![None; self.0.len()];
        while let Some(name) = map.next_key::<String>()? {
            match self.0.iter().position(|known| *known == name) {
                Some(index) => cells[index] = Some(map.next_value::<Cell>()?.0),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(cells)
    }
}

/// One cell: a scalar, or a BLOB as `{"blob": "<hex>"}` ([`crate::sql_json::to_json`]).
struct Cell(Sql);

impl<'de> Deserialize<'de> for Cell {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CellVisitor)
    }
}

struct CellVisitor;

impl<'de> Visitor<'de> for CellVisitor {
    type Value = Cell;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a value: null, a number, a string or a BLOB")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Cell, E> {
        Ok(Cell(Sql::Null))
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Cell, E> {
        Ok(Cell(Sql::Integer(i64::from(value))))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Cell, E> {
        Ok(Cell(Sql::Integer(value)))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Cell, E> {
        Ok(Cell(i64::try_from(value).map_or_else(
            |_| {
                #[allow(clippy::cast_precision_loss, reason = "as serde_json reads it")]
                Sql::Real(value as f64)
            },
            Sql::Integer,
        )))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Cell, E> {
        Ok(Cell(Sql::Real(value)))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Cell, E> {
        Ok(Cell(Sql::Text(value.to_owned())))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Cell, E> {
        Ok(Cell(Sql::Text(value)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Cell, A::Error> {
        let mut blob = None;
        while let Some(key) = map.next_key::<String>()? {
            if key != BLOB || blob.is_some() {
                return Err(de::Error::custom(format!(
                    "a value that is no SQL ({key:?})"
                )));
            }
            let hex: String = map.next_value()?;
            let Some(Sql::Blob(bytes)) = to_sql(&json!({ BLOB: hex }), BLOB) else {
                return Err(de::Error::custom("a BLOB that is not hexadecimal"));
            };
            blob = Some(bytes);
        }
        blob.map(|bytes| Cell(Sql::Blob(bytes)))
            .ok_or_else(|| de::Error::custom("an object that is not a BLOB"))
    }
}

fn tables_of(conn: &Connection) -> Result<Vec<String>> {
    Ok(tables(conn)?)
}

fn tables(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    conn.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")?
        .query_map([], |row| row.get(0))?
        .collect()
}

fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    conn.prepare(&format!(
        "PRAGMA table_info(\"{}\")",
        table.replace('"', "\"\"")
    ))?
    .query_map([], |row| row.get(1))?
    .collect()
}

/// The rows of `table` whose `column` is `value`, each as a JSON object.
fn select(
    conn: &Connection,
    table: &str,
    column: &str,
    value: &str,
) -> rusqlite::Result<Vec<Value>> {
    let names = columns(conn, table)?;
    let mut statement = conn.prepare(&format!(
        "SELECT * FROM \"{}\" WHERE \"{column}\" = ?1",
        table.replace('"', "\"\"")
    ))?;
    let rows = statement.query_map([value], |row| {
        let mut object = Map::new();
        for (index, name) in names.iter().enumerate() {
            object.insert(name.clone(), to_json(row.get_ref(index)?, BLOB));
        }
        Ok(Value::Object(object))
    })?;
    rows.collect()
}

/// `path` with its leading `from` replaced by `to` (unchanged when it is not under `from`).
fn moved(path: &str, from: &Path, to: &Path) -> String {
    let from = from.to_string_lossy();
    match path.strip_prefix(&*from) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            format!("{}{rest}", to.to_string_lossy())
        }
        _ => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_travels_between_databases_with_its_directory_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let schema = "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, directory TEXT, \
                      title TEXT); CREATE TABLE message (id INTEGER PRIMARY KEY, session_id TEXT, \
                      text TEXT, data BLOB); CREATE TABLE project (id TEXT, worktree TEXT);";
        let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
        for db in [&a, &b] {
            Connection::open(db).unwrap().execute_batch(schema).unwrap();
        }
        Connection::open(&a)
            .unwrap()
            .execute_batch(
                "INSERT INTO session VALUES ('ses_1', 'p1', '/a/p', 't'), ('ses_2', 'p1', '/a/p', 'u');
                 INSERT INTO message VALUES (1, 'ses_1', 'hi', x'00ff'), (2, 'ses_2', 'no', NULL);
                 INSERT INTO project VALUES ('p1', '/a/p');",
            )
            .unwrap();
        let json = export(&a, "ses_1").unwrap().unwrap();
        assert!(export(&a, "ses_9").unwrap().is_none());
        let paths = (Path::new("/a/p"), Path::new("/b/q"));
        let put = |db: &Path, json: &[u8], paths, replace| {
            import(db, &mut &json[..], "ses_1", paths, replace)
        };
        put(&b, &json, paths, false).unwrap();
        let conn = Connection::open(&b).unwrap();
        let directory: String = conn
            .query_row(
                "SELECT directory FROM session WHERE id = 'ses_1'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(directory, "/b/q");
        let data: Vec<u8> = conn
            .query_row("SELECT data FROM message", [], |r| r.get(0))
            .unwrap();
        assert_eq!(data, [0, 255]);
        let count: i64 = conn
            .query_row("SELECT count(*) FROM message", [], |r| r.get(0))
            .unwrap();
        assert_eq!(count, 1, "only the session's own rows");
        // The same rows again in the same directory: nothing is lost, they are put back.
        put(&b, &json, paths, false).unwrap();
        put(&b, &json, paths, true).unwrap();
        assert!(put(&dir.path().join("none.db"), &json, paths, false).is_err());
        assert_eq!(moved("/a/p/src", paths.0, paths.1), "/b/q/src");
        assert_eq!(moved("/a/pp", paths.0, paths.1), "/a/pp");
    }

    /// The session in the database already is another project's when it ran elsewhere, and
    /// holds turns the bundle lacks when it has rows the bundle does not: both refused (exit
    /// 2), with nothing changed (issue 23, findings 4, 5 and 11).
    #[test]
    fn a_session_here_already_is_never_shared_nor_rolled_back() {
        let dir = tempfile::tempdir().unwrap();
        let schema = "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, directory TEXT); \
                      CREATE TABLE message (id INTEGER PRIMARY KEY, session_id TEXT, text TEXT);";
        let db = dir.path().join("a.db");
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(schema).unwrap();
        conn.execute_batch(
            "INSERT INTO session VALUES ('ses_1', 'p1', '/a/p');
             INSERT INTO message VALUES (1, 'ses_1', 'hi');",
        )
        .unwrap();
        let json = export(&db, "ses_1").unwrap().unwrap();
        let count = || -> i64 {
            conn.query_row("SELECT count(*) FROM message", [], |r| r.get(0))
                .unwrap()
        };
        let shared = import(
            &db,
            &mut &json[..],
            "ses_1",
            (Path::new("/a/p"), Path::new("/b/q")),
            false,
        )
        .unwrap_err();
        assert_eq!(
            crate::exit::exit_for(&shared),
            crate::exit::Exit::Usage,
            "{shared}"
        );
        assert!(
            shared.to_string().contains("for another directory (/a/p)"),
            "{shared}"
        );
        conn.execute("INSERT INTO message VALUES (2, 'ses_1', 'later')", [])
            .unwrap();
        let same = (Path::new("/a/p"), Path::new("/a/p"));
        let older = import(&db, &mut &json[..], "ses_1", same, false).unwrap_err();
        assert_eq!(
            crate::exit::exit_for(&older),
            crate::exit::Exit::Usage,
            "{older}"
        );
        assert!(
            older.to_string().contains("holds 1 row the bundle lacks"),
            "{older}"
        );
        assert_eq!(count(), 2, "nothing was changed");
        let bad = import(
            &db,
            &mut &b"{\"session\":\"ses_1\",\"tables\":{\"message\":[[]]}}"[..],
            "ses_1",
            same,
            true,
        )
        .unwrap_err();
        assert_eq!(
            crate::exit::exit_for(&bad),
            crate::exit::Exit::Usage,
            "{bad}"
        );
        assert_eq!(count(), 2, "nothing was changed");
    }

    #[test]
    fn the_vaults_rows_become_rows_as_export_writes_them() {
        let document = br#"{"schema":[],"migrations":{},"rows":{
            "project":[],
            "session":[{"id":"ses_1","directory":"/a/p"}],
            "part":[{"session_id":"ses_1","data":{"hex":"00ff"},"n":3}]}}"#;
        let rows: Value = serde_json::from_slice(&from_vault("ses_1", document).unwrap()).unwrap();
        assert_eq!(
            rows,
            json!({"session": "ses_1", "tables": {
                "session": [{"id": "ses_1", "directory": "/a/p"}],
                "part": [{"session_id": "ses_1", "data": {"blob": "00ff"}, "n": 3}],
            }})
        );
        assert!(from_vault("ses_1", b"{}").is_err());
    }
}
