//! opencode's session as database rows: read out of its `opencode.db` as JSON, and added to
//! another one with the directory rewritten.
//!
//! opencode keeps a session in `SQLite` (shared/research/agents.md §3.5): a `session` row (with
//! its `directory` and `project_id`), rows keyed by `session_id` (messages, their parts) and the
//! `project` row (`worktree`). Which tables exist and their columns are read from the file, so
//! a column a newer opencode adds travels too; on import only the columns both files have are
//! written.

use std::path::Path;

use anyhow::{Context as _, Result, bail};
use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OpenFlags, params_from_iter};
use serde_json::{Map, Value, json};

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

/// Adds the rows of `json` to the database at `db`, rewriting the session's `directory` and
/// the project's `worktree` from `from` to `to`, in one transaction.
pub fn import(db: &Path, json: &[u8], (from, to): (&Path, &Path), replace: bool) -> Result<()> {
    if !db.is_file() {
        bail!(
            "opencode has no database here yet ({}): run `opencode session list` once so it \
             creates it, then import again",
            db.display()
        );
    }
    let bundle: Value = serde_json::from_slice(json).context("the opencode rows are not JSON")?;
    let id = bundle["session"]
        .as_str()
        .context("the opencode rows name no session")?;
    let tables = bundle["tables"]
        .as_object()
        .context("the opencode rows hold no tables")?;
    let mut conn = Connection::open(db)
        .with_context(|| format!("cannot open opencode's database {}", db.display()))?;
    conn.busy_timeout(BUSY)?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let here = tables_of(&tx)?;
    if !select(&tx, "session", "id", id)?.is_empty() {
        if !replace {
            bail!(
                "opencode already has session {id} in this HOME, and opencode keeps a session by \
                 its ID alone, so that is the session of another project (perhaps the one this \
                 bundle came from), and one session cannot run in two directories; go on with it \
                 there, or import the bundle in another HOME (import --replace would take the \
                 session from there)"
            );
        }
        for table in here
            .iter()
            .filter(|t| t.as_str() != "session" && t.as_str() != "project")
        {
            if columns(&tx, table)?.iter().any(|c| c == "session_id") {
                tx.execute(
                    &format!("DELETE FROM \"{table}\" WHERE session_id = ?1"),
                    [id],
                )?;
            }
        }
        tx.execute("DELETE FROM session WHERE id = ?1", [id])?;
    }
    insert_tables(&tx, tables, &here, (from, to))?;
    tx.commit()?;
    Ok(())
}

/// Inserts the rows of each of `tables` into the table of its name, which the database must
/// have among `here`: `project` and `session` first, since the others name them.
fn insert_tables(
    conn: &Connection,
    tables: &Map<String, Value>,
    here: &[String],
    (from, to): (&Path, &Path),
) -> Result<()> {
    let order = ["project", "session"].into_iter().chain(
        tables
            .keys()
            .map(String::as_str)
            .filter(|t| *t != "project" && *t != "session"),
    );
    for table in order {
        let Some(rows) = tables.get(table).and_then(Value::as_array) else {
            continue;
        };
        if !here.iter().any(|t| t == table) {
            bail!("opencode's database here has no table {table:?} (is opencode older here?)");
        }
        let known = columns(conn, table)?;
        for row in rows {
            insert(conn, table, &known, row, (from, to))?;
        }
    }
    Ok(())
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

/// The `SQLite` value of an exported row's `value`.
fn from_json(value: &Value) -> Result<Sql> {
    to_sql(value, BLOB).with_context(|| format!("a value that is no SQL: {value}"))
}

/// Inserts one exported row, keeping only the columns `table` has here; a project row that
/// exists already is kept.
fn insert(
    conn: &Connection,
    table: &str,
    known: &[String],
    row: &Value,
    (from, to): (&Path, &Path),
) -> Result<()> {
    let object = row.as_object().context("a row that is not an object")?;
    let mut names = Vec::new();
    let mut values = Vec::new();
    for (name, value) in object.iter().filter(|(name, _)| known.contains(name)) {
        let mut value = from_json(value)?;
        if matches!(
            (table, name.as_str()),
            ("session", "directory") | ("project", "worktree")
        ) {
            if let Sql::Text(text) = &value {
                value = Sql::Text(moved(text, from, to));
            }
        }
        names.push(format!("\"{}\"", name.replace('"', "\"\"")));
        values.push(value);
    }
    let verb = if table == "project" {
        "INSERT OR IGNORE"
    } else {
        "INSERT"
    };
    let marks = (1..=values.len())
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    conn.execute(
        &format!(
            "{verb} INTO \"{}\" ({}) VALUES ({marks})",
            table.replace('"', "\"\""),
            names.join(", ")
        ),
        params_from_iter(values),
    )
    .with_context(|| format!("cannot add a row to opencode's {table} table"))?;
    Ok(())
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
        import(&b, &json, paths, false).unwrap();
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
        let again = import(&b, &json, paths, false).unwrap_err();
        assert!(again.to_string().contains("--replace"), "{again}");
        import(&b, &json, paths, true).unwrap();
        assert!(import(&dir.path().join("none.db"), &json, paths, false).is_err());
        assert_eq!(moved("/a/p/src", paths.0, paths.1), "/b/q/src");
        assert_eq!(moved("/a/pp", paths.0, paths.1), "/a/pp");
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
