//! Opening the file: its directory and modes, the connection's pragmas, and the migrations.
//!
//! Many sticky processes may open, create and migrate the same fresh database at the same moment
//! (a CI matrix, parallel panes). `SQLite`'s busy handler covers most lock waits, but a call
//! that must upgrade a read lock to a write lock gets `SQLITE_BUSY` at once, without the
//! handler, when another connection holds the write lock (waiting could deadlock). Switching a
//! fresh file to WAL is such a call, and so is any deferred read-then-write: atuin #2082 is
//! this failure shipped. So the order is: identity check (read only), WAL (retried on
//! `SQLITE_BUSY` until [`BUSY_TIMEOUT`]), then migrations under `BEGIN IMMEDIATE`, which takes
//! the write lock first and so waits properly. A file that is not ours, or newer than this
//! binary, is refused before the first write, and a WAL found next to it is not checkpointed
//! into it on close, so its bytes stay as they were. Closing a sticky database does not
//! checkpoint either (see the end of [`connect`]): the WAL stays beside it between runs.

use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::Result;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};

use super::error::{self, BUSY_TIMEOUT, retry_busy};
use super::schema::{self, Identity};
use crate::state;

/// Creates the database directory and an empty database file (mode 0600) when missing.
///
/// `SQLite` would create the file 0644; creating it first fixes the mode, and `SQLite` gives the
/// `-wal` and `-shm` files the database file's mode. An empty file is a valid empty database.
pub(crate) fn create_file(file: &Path) -> Result<()> {
    if let Some(dir) = file.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        let created = state::create(dir)
            .map_err(|e| error::io(file, &format!("create the directory {}", dir.display()), &e))?;
        // A `.sticky` that lost its `.gitignore` (or whose creator died before writing it) gets
        // it back when the database itself is created.
        if !created && !file.exists() && state::is_state_dir(dir) {
            state::write_gitignore(dir)
                .map_err(|e| error::io(file, &format!("write {}/.gitignore", dir.display()), &e))?;
        }
    }
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(error::io(file, "create the database", &e)),
    }
}

/// How many pages the WAL may hold before a commit checkpoints it into the database (`SQLite`'s
/// default is 1000). Every sticky process is the first connection to its database, so opening it
/// rebuilds the WAL's index by reading the whole WAL: at 1000 pages (about 100 turns) that cost
/// `sticky status` 0.6 ms of its 2. At 128, a checkpoint (two fsyncs) comes every 15 to 20
/// turns and the reading stays under 0.1 ms.
const WAL_AUTOCHECKPOINT: u32 = 128;

/// Opens the regular file `file` with `flags`, the busy timeout and the planner's settings.
fn open_with(file: &Path, flags: OpenFlags) -> Result<Connection> {
    ensure_regular(file)?;
    let conn =
        Connection::open_with_flags(file, flags).map_err(|e| error::sql(file, "open", &e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| error::sql(file, "set the busy timeout", &e))?;
    stable_plans(&conn, file)?;
    Ok(conn)
}

/// Opens an existing file as a sticky database: checks it, switches it to WAL, migrates it.
pub(crate) fn connect(file: &Path) -> Result<Connection> {
    // No SQLITE_OPEN_CREATE: the file exists (see `create_file`), and a database that vanished
    // must not be silently recreated empty. No SQLITE_OPEN_URI: the path is a path.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut wal = file.as_os_str().to_owned();
    wal.push("-wal");
    let found_wal = Path::new(&wal).exists();
    let conn = open_with(file, flags)?;
    // Until the file is known to be ours, closing must not checkpoint a WAL someone else left
    // into it: a refused file keeps its bytes. (A WAL this connection creates is empty, and
    // closing deletes it again, so only a WAL found on arrival is kept as it was.)
    if found_wal {
        set_checkpoint_on_close(&conn, file, false)?;
    }

    let identity = retry_busy(file, "read", || Identity::read_quick(&conn))?;
    identity.check(file)?;
    if conn.is_readonly("main").unwrap_or(false) {
        return Err(error::store(
            file,
            format!(
                "cannot write the database (it is read-only); {}",
                error::UNWRITABLE
            ),
        ));
    }

    use_wal(&conn, file)?;
    // WAL_AUTOCHECKPOINT: see the end of this function.
    // Foreign keys through the C interface: no statement to compile. (The bundled SQLite turns
    // them on by default; this says so where it matters.)
    let foreign_keys = conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_FKEY, true);
    if !foreign_keys.map_err(|e| error::sql(file, "configure the connection", &e))? {
        return Err(error::store(file, "cannot turn on foreign keys"));
    }
    conn.execute_batch(&format!(
        "PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT};"
    ))
    .map_err(|e| error::sql(file, "configure the connection", &e))?;
    schema::migrate(&conn, file, identity)?;
    #[cfg(debug_assertions)]
    limit_growth_if_asked(&conn, file)?;
    // A sticky database keeps its WAL when closed: SQLite's automatic checkpoint (when a commit
    // takes the WAL past WAL_AUTOCHECKPOINT pages) moves it into the file. Checkpointing on
    // every close made each sticky run pay two fsyncs on exit and two more (the new WAL and its
    // directory) on its first write, 4 to 20 ms of a turn that otherwise takes a few; durability
    // is unchanged, since a commit is as durable in the WAL as in the file.
    set_checkpoint_on_close(&conn, file, false)?;
    Ok(conn)
}

/// Debug builds only (release builds never read the variable): when `STICKY_TEST_DB_ROOM` is a
/// number of pages, the database may grow by that many and no more, so tests see what a turn
/// does on a full disk. `SQLite`'s `max_page_count` makes a write that needs another page fail
/// with `SQLITE_FULL`, as a full file system does, while what fits in the pages there are
/// still goes in.
#[cfg(debug_assertions)]
fn limit_growth_if_asked(conn: &Connection, file: &Path) -> Result<()> {
    let Some(room) = std::env::var("STICKY_TEST_DB_ROOM")
        .ok()
        .and_then(|room| room.parse::<u32>().ok())
    else {
        return Ok(());
    };
    let pages: u32 = conn
        .query_row("PRAGMA page_count", [], |row| row.get(0))
        .map_err(|e| error::sql(file, "count the pages", &e))?;
    conn.query_row(
        &format!("PRAGMA max_page_count = {}", pages.saturating_add(room)),
        [],
        |_| Ok(()),
    )
    .map_err(|e| error::sql(file, "limit the pages", &e))
}

/// Opens an existing sticky database only to read it, for the commands that only look
/// (`status`, `log`, `threads`) when the file or its directory cannot be written: a read-only
/// checkout, a CI cache, another user's project shared read-only. Nothing is switched or
/// migrated; a file that would need migrating says so. `SQLite` reads a WAL database read-only
/// when its `-wal` and `-shm` files exist (sticky leaves them between runs) or can be created.
pub(crate) fn connect_read_only(file: &Path) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = open_with(file, flags)?;
    let identity = retry_busy(file, "read", || Identity::read_quick(&conn))?;
    identity.check(file)?;
    if identity.version != schema::LATEST {
        return Err(error::store(
            file,
            format!(
                "needs its schema brought to version {} (it is at {}), which a read-only file \
                 cannot be; make it writable and run sticky once, or set STICKY_DB to a \
                 writable copy",
                schema::LATEST,
                identity.version
            ),
        ));
    }
    Ok(conn)
}

/// Whether the regular file `file` is a sticky database this sticky can use, at its schema or
/// an older one (which a turn there brings up to date), read-only: nothing is switched,
/// migrated or made (an empty file, a valid empty database to `SQLite`, is none of sticky's).
pub(crate) fn is_sticky(file: &Path) -> bool {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let Ok(conn) = open_with(file, flags) else {
        return false;
    };
    Identity::read_quick(&conn).is_ok_and(|identity| {
        identity.application_id == schema::APPLICATION_ID
            && (1..=schema::LATEST).contains(&identity.version)
    })
}

/// The schema version (`PRAGMA user_version`) in the header of the regular file `file`, read
/// from its first 64 bytes without `SQLite`: `None` for what is no `SQLite` file, or none that
/// can be read (a link, a FIFO, a device are not opened for reading).
pub(crate) fn header_version(file: &Path) -> Option<i64> {
    use nix::libc::{O_NOFOLLOW, O_NONBLOCK};
    use std::io::Read;
    let mut opened = OpenOptions::new()
        .read(true)
        .custom_flags(O_NOFOLLOW | O_NONBLOCK)
        .open(file)
        .ok()?;
    if !opened.metadata().ok()?.is_file() {
        return None;
    }
    let mut header = [0u8; 64];
    opened.read_exact(&mut header).ok()?;
    if &header[..16] != b"SQLite format 3\0" {
        return None;
    }
    let version = i32::from_be_bytes([header[60], header[61], header[62], header[63]]);
    Some(i64::from(version))
}

/// Refuses a database that is not a regular file before `SQLite` opens it: it would block on a
/// FIFO, and write a `-journal` beside a device, in a directory sticky never chose (`/dev`).
/// `project` says what each kind is and what to name instead; this holds for every caller.
fn ensure_regular(file: &Path) -> Result<()> {
    match std::fs::metadata(file) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(_) => Err(error::store(
            file,
            "is not a regular file, so no database sticky made; set STICKY_DB to a file",
        )),
        Err(e) => Err(error::io(file, "look at the database", &e)),
    }
}

/// Whether sticky can write `file` and create files beside it (its WAL, its locks).
pub(crate) fn writable(file: &Path) -> bool {
    use nix::unistd::{AccessFlags, access};
    let dir = file
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    access(file, AccessFlags::W_OK).is_ok() && access(dir, AccessFlags::W_OK).is_ok()
}

/// Enables or disables the checkpoint `SQLite` runs when the last connection closes.
fn set_checkpoint_on_close(conn: &Connection, file: &Path, enabled: bool) -> Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, !enabled)
        .map(drop)
        .map_err(|e| error::sql(file, "configure the connection", &e))
}

/// Switches the file to WAL (a property of the file, so this writes only the first time).
///
/// WAL lets `sticky status` read while a turn writes, and keeps writers from blocking on
/// readers. Asking first keeps the common case free of any lock.
fn use_wal(conn: &Connection, file: &Path) -> Result<()> {
    let mode = |sql: &str| conn.query_row(sql, [], |row| row.get::<_, String>(0));
    let current = retry_busy(file, "read the journal mode", || {
        mode("PRAGMA journal_mode")
    })?;
    if current.eq_ignore_ascii_case("wal") {
        return Ok(());
    }
    let set = retry_busy(file, "switch to WAL", || mode("PRAGMA journal_mode = WAL"))?;
    if set.eq_ignore_ascii_case("wal") {
        Ok(())
    } else {
        Err(error::store(
            file,
            format!(
                "cannot switch to WAL (the journal mode stayed {set}; is the file on a network \
                 file system?); set STICKY_DB=/local/path"
            ),
        ))
    }
}

/// Turns on the query planner stability guarantee. The bundled `SQLite` is built with STAT4,
/// under which a statement whose plan might depend on a bound value is compiled twice: once
/// when prepared and again at its first step, with the value. Every statement sticky runs is
/// an index lookup whose plan no value changes, and each run prepares each statement once, so
/// the second compile was pure cost: 0.36 M of the 2.8 M instructions of `sticky status`
/// (callgrind).
fn stable_plans(conn: &Connection, file: &Path) -> Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )
    .map(drop)
    .map_err(|e| error::sql(file, "configure the query planner", &e))
}
