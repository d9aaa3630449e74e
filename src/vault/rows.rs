//! A session kept as database rows (opencode, see `Adapter::session_rows`): its rows dumped
//! as one JSON document in the vault (`rows.json`), and put back into the agent's database, or
//! into a new one made with the same schema when the agent's database is gone.
//!
//! The document: `schema` (the `CREATE` statements of the database), `migrations` (every row
//! of the tables recording its migrations) and `rows` (table by table: the rows the session row
//! refers to, the session row, and every row of every table with a `session_id` column naming
//! it; put back with foreign keys unchecked, so in any order). A
//! row is an object of its columns; a BLOB is `{"hex": ...}`.

use std::path::Path;

use anyhow::{Context as _, Result};
use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value, json};

use crate::agent::SessionRows;
use crate::sql_json::{to_json, to_sql};

/// The key of a BLOB's hexadecimal in the document.
const BLOB: &str = "hex";

/// The rows of session `id` as the document described above; `None` when the database or the
/// session's row is missing (nothing to keep: the vault keeps its older copy).
pub(super) fn dump(rows: &SessionRows, id: &str) -> Result<Option<Vec<u8>>> {
    if !rows.database.is_file() {
        return Ok(None);
    }
    let conn = Connection::open_with_flags(
        &rows.database,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    let session = select(&conn, rows.table, "id", &Sql::Text(id.to_owned()))?;
    let Some(row) = session.first().cloned() else {
        return Ok(None);
    };
    let mut tables = Map::new();
    for (table, key, column) in rows.referred {
        if let Some(value) = row.get(*column).and_then(|value| to_sql(value, BLOB)) {
            tables.insert(
                (*table).to_owned(),
                select(&conn, table, key, &value)?.into(),
            );
        }
    }
    tables.insert(rows.table.to_owned(), session.into());
    for table in tables_with_column(&conn, "session_id")? {
        let found = select(&conn, &table, "session_id", &Sql::Text(id.to_owned()))?;
        tables.insert(table, found.into());
    }
    let mut migrations = Map::new();
    for table in rows.migrations {
        if exists(&conn, table)? {
            migrations.insert((*table).to_owned(), select_all(&conn, table)?.into());
        }
    }
    let document = json!({
        "schema": schema(&conn)?,
        "migrations": migrations,
        "rows": tables,
    });
    Ok(Some(serde_json::to_vec(&document)?))
}

/// Puts the rows of `document` back into the database at `database` (created with the
/// document's schema and migrations when it is missing), leaving rows it has alone; whether
/// the session's row was missing and is back.
///
/// The vault sits in the project, which a repository could plant, so only what a dump of this
/// session holds goes back: `CREATE` statements one at a time, migration records into a new
/// database only, and rows of the session's own (its row by `id`, rows whose `session_id` is
/// its ID, the rows its row refers to).
pub(super) fn restore(rows: &SessionRows, id: &str, document: &[u8]) -> Result<bool> {
    let document: Value = serde_json::from_slice(document).context("the vault's rows")?;
    let fresh = !rows.database.exists();
    if fresh {
        if let Some(parent) = rows.database.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .create(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        create_private(&rows.database)?;
    }
    let mut conn = Connection::open(&rows.database)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // The rows go back table by table in any order (a bundled SQLite checks foreign keys).
    conn.pragma_update(None, "foreign_keys", false)?;
    let tx = conn.transaction()?;
    if fresh {
        for sql in document["schema"].as_array().into_iter().flatten() {
            let sql = sql.as_str().unwrap_or_default();
            anyhow::ensure!(
                sql.trim_start()
                    .get(..7)
                    .is_some_and(|word| word.eq_ignore_ascii_case("create ")),
                "the vault's rows hold a statement that is not a CREATE: {sql}"
            );
            // One statement each: `execute` refuses more.
            tx.execute(sql, [])?;
        }
        insert_tables(&tx, &document["migrations"], &|table, _| {
            rows.migrations.contains(&table)
        })?;
    }
    let session_row = document["rows"][rows.table]
        .as_array()
        .and_then(|found| found.first())
        .filter(|row| row["id"] == id)
        .cloned()
        .unwrap_or_default();
    let own = |table: &str, row: &Map<String, Value>| {
        if table == rows.table {
            return row.get("id").and_then(Value::as_str) == Some(id);
        }
        if let Some((_, key, column)) = rows.referred.iter().find(|(name, ..)| *name == table) {
            return row
                .get(*key)
                .is_some_and(|key| *key == session_row[*column]);
        }
        row.get("session_id").and_then(Value::as_str) == Some(id)
    };
    let before = count(&tx, rows.table)?;
    insert_tables(&tx, &document["rows"], &own)?;
    let back = count(&tx, rows.table)? > before;
    tx.commit()?;
    Ok(back)
}

/// Creates an empty file at `path`, readable by the user only.
fn create_private(path: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    Ok(())
}

/// Inserts every row of `tables` (an object of table names to lists of rows) that `allowed`
/// accepts and its table does not hold yet, in the document's order.
fn insert_tables(
    conn: &Connection,
    tables: &Value,
    allowed: &dyn Fn(&str, &Map<String, Value>) -> bool,
) -> Result<()> {
    let Some(tables) = tables.as_object() else {
        return Ok(());
    };
    for (table, rows) in tables {
        if !exists(conn, table)? {
            continue;
        }
        for row in rows.as_array().into_iter().flatten() {
            let Some(row) = row.as_object().filter(|row| allowed(table, row)) else {
                continue;
            };
            let columns: Vec<&String> = row.keys().collect();
            let names: Vec<String> = columns.iter().map(|c| quoted(c)).collect();
            let marks: Vec<String> = (1..=columns.len()).map(|n| format!("?{n}")).collect();
            let sql = format!(
                "INSERT OR IGNORE INTO {} ({}) VALUES ({})",
                quoted(table),
                names.join(", "),
                marks.join(", ")
            );
            let values: Vec<Sql> = columns
                .iter()
                .map(|column| to_sql(&row[*column], BLOB).unwrap_or(Sql::Null))
                .collect();
            conn.execute(&sql, rusqlite::params_from_iter(values))?;
        }
    }
    Ok(())
}

/// The rows of `table` whose `column` is `value`, in rowid order.
fn select(conn: &Connection, table: &str, column: &str, value: &Sql) -> Result<Vec<Value>> {
    if !exists(conn, table)? {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT * FROM {} WHERE {} = ?1",
        quoted(table),
        quoted(column)
    );
    rows_of(conn, &sql, [value])
}

/// Every row of `table`.
fn select_all(conn: &Connection, table: &str) -> Result<Vec<Value>> {
    rows_of(conn, &format!("SELECT * FROM {}", quoted(table)), [])
}

fn rows_of<P: rusqlite::Params>(conn: &Connection, sql: &str, params: P) -> Result<Vec<Value>> {
    let mut statement = conn.prepare(sql)?;
    let names: Vec<String> = statement.column_names().map(str::to_owned).collect();
    let mut found = Vec::new();
    let mut rows = statement.query(params)?;
    while let Some(row) = rows.next()? {
        let mut object = Map::new();
        for (index, name) in names.iter().enumerate() {
            object.insert(name.clone(), to_json(row.get_ref(index)?, BLOB));
        }
        found.push(Value::Object(object));
    }
    Ok(found)
}

/// The tables that have a column named `column`.
fn tables_with_column(conn: &Connection, column: &str) -> Result<Vec<String>> {
    let mut statement = conn.prepare(
        "SELECT m.name FROM sqlite_schema AS m JOIN pragma_table_info(m.name) AS c \
         WHERE m.type = 'table' AND c.name = ?1 ORDER BY m.rowid",
    )?;
    let names = statement
        .query_map([column], |row| row.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(names)
}

/// The database's `CREATE` statements (tables first, then indexes), without those of `SQLite` itself.
fn schema(conn: &Connection) -> Result<Vec<String>> {
    let mut statement = conn.prepare(
        "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' \
         ORDER BY type = 'table' DESC, rowid",
    )?;
    let sql = statement
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(sql)
}

fn exists(conn: &Connection, table: &str) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1)",
        [table],
        |row| row.get(0),
    )?)
}

fn count(conn: &Connection, table: &str) -> Result<i64> {
    if !exists(conn, table)? {
        return Ok(0);
    }
    Ok(conn.query_row(
        &format!("SELECT count(*) FROM {}", quoted(table)),
        [],
        |row| row.get(0),
    )?)
}

/// An identifier quoted for SQL.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
