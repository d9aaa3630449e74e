//! The proof that a database was made by this user: a stamp beside it, keyed by a secret of the
//! user's, so a `.sticky/` that came from elsewhere (committed to a repository and cloned to the
//! same path, restored from a cache, copied from another HOME) cannot pick the conversation
//! sticky continues or the agent it runs.
//!
//! The key is 32 random bytes in `<data dir>/sticky/key` (`~/.local/share/sticky/key`, mode
//! 0600, in a directory of the user's that others may not write), made the first time it is
//! needed and on disk (file and name) before a stamp is made with it. The stamp, `<db>.stamp`,
//! is one line: `sticky-stamp 1 <inode> <HMAC-SHA256(key, inode) in hex>`. It names the
//! database's inode, so it holds only for the file it was written for: a clone, a copy or a
//! restored backup is a new file, and a stamp copied along with it (or taken from a stranger's
//! repository) no longer matches. A project moved within its file system keeps its inode and its
//! stamp (one moved to another file system is copied). `sticky trust` stamps a state the user
//! adopts on purpose.
//!
//! A database without a stamp whose schema only a sticky that stamps writes (migration 5 and
//! later) is a copy of the file alone or a backup restored without its stamp, refused as a copy
//! is. Any other database without a stamp was made by a sticky older than stamps (or planted by
//! someone who left the stamp out). It is adopted (stamped) when nothing says it came from
//! elsewhere: on that rare path only, git is asked whether it tracks the database, its WAL or its vault (a
//! committed `.sticky/` came with the repository; a state git may track but cannot be asked
//! about is refused too), and the agent must have the files of every live session in this HOME
//! (`Project::adopt_unstamped`): a conversation only sticky's vault could continue is what a
//! state restored from a cache or an archive onto a fresh machine looks like. A live session
//! that never started shows nothing either way, so it is refused as well, unless no key can be
//! made for the user ([`key_state`]): then none of their databases is stamped, and `sticky trust`
//! could not stamp one.
//!
//! Per turn this costs a `stat` of the database and two small reads (key and stamp).

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Result;
use sha2::{Digest, Sha256};

use crate::exit::StickyError;
use crate::state::{self, State};

/// The first words of a stamp, and its format version.
const MAGIC: &str = "sticky-stamp 1";

/// The length of the user's key, in bytes.
const KEY_LEN: usize = 32;

/// What a database's stamp says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Made (or adopted) by this user: the stamp matches.
    Mine,
    /// No database: nothing to check.
    NoDatabase,
    /// No stamp: made by a sticky older than stamps (or by someone who left the stamp out).
    Unstamped,
    /// No stamp, though the database's schema is one only a sticky that stamps writes: a copy
    /// of the file alone (its stamp left behind) or a backup restored without it, refused as a
    /// copy is (review 20, M6). A user without a key has no stamped database at all, so theirs
    /// stays [`Verdict::Unstamped`].
    Stripped,
    /// A stamp this user's key made, for another file: a copy or a restored backup.
    Copied,
    /// A stamp another key made, or none this user's key could have made.
    Foreign,
    /// One file under several names (hard links: `cp -al`, `ln`): another path shares the very
    /// database, inode and stamp alike, so the stamp cannot tell this project from the other.
    Linked(u64),
    /// A stamp, but the user has no key that could have made it: a stranger's, unless the key
    /// was deleted (or the data directory changed).
    NoKey,
}

/// The stamp file of `state`: `<db>.stamp`.
pub fn path(state: &State) -> PathBuf {
    let mut name = state.db.as_os_str().to_owned();
    name.push(".stamp");
    PathBuf::from(name)
}

/// Reads the database's stamp and says whose it is. Reads the key only when there is a stamp,
/// and creates nothing.
pub fn verdict(state: &State) -> Result<Verdict> {
    verdict_once(state, true)
}

/// [`verdict`]; `again` lets a stamp missing at first be looked for once more (see
/// [`unstamped`]).
fn verdict_once(state: &State, again: bool) -> Result<Verdict> {
    let inode = match fs::metadata(&state.db) {
        Ok(meta) if meta.nlink() > 1 => return Ok(Verdict::Linked(meta.nlink())),
        Ok(meta) => meta.ino(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Verdict::NoDatabase),
        Err(e) => return Err(crate::store::io_error(&state.db, "look at", &e)),
    };
    let stamp_path = path(state);
    let text = match read_stamp(&stamp_path) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(Verdict::Foreign),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return unstamped(state, again),
        Err(e) => return Err(crate::store::io_error(&stamp_path, "read", &e)),
    };
    let Some(key) = read_key()? else {
        return Ok(Verdict::NoKey);
    };
    Ok(judge(&text, inode, &key))
}

/// What a database without a stamp is: older than stamps, unless its schema postdates them
/// (see [`Verdict::Stripped`]), the user has a key (one who has none cannot have a stamped
/// database) and it holds a session. One with none is what a concurrent first turn makes
/// before it stamps it (of 64 first runs at once, one saw that moment), and a copy with none
/// resumes nothing. Reads the key, then the database, only for such a schema; `again` looks
/// for the stamp once more once a session is seen.
fn unstamped(state: &State, again: bool) -> Result<Verdict> {
    use crate::store::Store;
    if Store::postdates_stamps(&state.db)
        && read_key()?.is_some()
        && Store::holds_sessions(&state.db)
    {
        // A session seen now was written after its creator's stamp, which it writes first:
        // one that appeared since the stamp was looked for decides.
        if again && path(state).symlink_metadata().is_ok() {
            return verdict_once(state, false);
        }
        Ok(Verdict::Stripped)
    } else {
        Ok(Verdict::Unstamped)
    }
}

/// Whether the database of `state` carries a stamp in sticky's form that names its very file
/// (one name, the inode the stamp names), written before this HOME's key was made (or with no
/// key at all): a state sticky stamped for the user with a key since lost or replaced, which
/// this key cannot vouch for (review 10). A copy's stamp names another file; another HOME's
/// project's was written after this HOME's key. Reads no key; creates nothing.
pub fn stamped_before_key(state: &State) -> bool {
    let Ok(meta) = fs::metadata(&state.db) else {
        return false;
    };
    let stamp_path = path(state);
    let Ok(Some(text)) = read_stamp(&stamp_path) else {
        return false;
    };
    let mut words = text.trim_end().rsplitn(3, ' ');
    let (Some(_), Some(stamped), Some(MAGIC)) = (words.next(), words.next(), words.next()) else {
        return false;
    };
    if !meta.is_file() || meta.nlink() != 1 || stamped.parse::<u64>().ok() != Some(meta.ino()) {
        return false;
    }
    let Ok(written) = fs::symlink_metadata(&stamp_path).and_then(|meta| meta.modified()) else {
        return false;
    };
    match key_path().map(|key| fs::metadata(key).and_then(|meta| meta.modified())) {
        Ok(Ok(made)) => written < made,
        Ok(Err(e)) => is_absent(&e),
        Err(_) => false,
    }
}

/// The longest stamp sticky writes, with room to spare.
const STAMP_MAX: u64 = 128;

/// The text of the stamp at `path`; `None` for what is no stamp of sticky's, which writes a short
/// line to a regular file: a link (a committed `stamp -> /dev/zero` would be read until memory
/// runs out), anything but a regular file (a FIFO would block the turn forever), a longer file,
/// or one that is not text.
fn read_stamp(path: &Path) -> io::Result<Option<String>> {
    use nix::libc::{ELOOP, O_NOFOLLOW, O_NONBLOCK};
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(O_NOFOLLOW | O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(ELOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Ok(None);
    }
    // Room for the longest stamp and one byte more, so one read takes it and the next says
    // end of file (a String grown from empty reads 32 bytes at a time).
    let mut text = String::with_capacity(usize::try_from(STAMP_MAX).unwrap_or(128) + 1);
    match file.take(STAMP_MAX + 1).read_to_string(&mut text) {
        Ok(length) if u64::try_from(length).is_ok_and(|length| length <= STAMP_MAX) => {
            Ok(Some(text))
        }
        Ok(_) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::InvalidData => Ok(None),
        Err(e) => Err(e),
    }
}

/// What `text`, a stamp, says about the database with inode `inode`.
fn judge(text: &str, inode: u64, key: &[u8]) -> Verdict {
    let mut words = text.trim_end().rsplitn(3, ' ');
    let (Some(mac), Some(stamped), Some(MAGIC)) = (words.next(), words.next(), words.next()) else {
        return Verdict::Foreign;
    };
    let Ok(stamped) = stamped.parse::<u64>() else {
        return Verdict::Foreign;
    };
    if !same(mac, &seal(key, stamped)) {
        Verdict::Foreign
    } else if stamped == inode {
        Verdict::Mine
    } else {
        Verdict::Copied
    }
}

/// Compares two strings in time independent of where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The stamp line of the database with inode `inode`.
fn line(key: &[u8], inode: u64) -> String {
    format!("{MAGIC} {inode} {}\n", seal(key, inode))
}

/// HMAC-SHA256 of the inode under `key`, in hex.
fn seal(key: &[u8], inode: u64) -> String {
    let mut message = b"sticky database ".to_vec();
    message.extend_from_slice(inode.to_string().as_bytes());
    hex(&hmac_sha256(key, &message))
}

/// Lower-case hexadecimal, without a `format!` per byte: this runs on every turn.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|byte| {
            [
                DIGITS[usize::from(byte >> 4)],
                DIGITS[usize::from(byte & 15)],
            ]
        })
        .map(char::from)
        .collect()
}

/// HMAC (RFC 2104) over SHA-256, for a key of at most one block.
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut padded = [0u8; BLOCK];
    padded[..key.len().min(BLOCK)].copy_from_slice(&key[..key.len().min(BLOCK)]);
    let pad = |byte: u8| padded.map(|k| k ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// Stamps the database of `state` as this user's (making the key if needed). The stamp is
/// written beside it under a temporary name and renamed over the old one, so a reader sees a
/// whole stamp or none, and a link in its place is replaced, not followed.
pub fn write(state: &State) -> Result<()> {
    let inode = fs::metadata(&state.db)
        .map_err(|e| crate::store::io_error(&state.db, "look at", &e))?
        .ino();
    let key = key()?;
    let stamp_path = path(state);
    let mut temporary = stamp_path.as_os_str().to_owned();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = PathBuf::from(temporary);
    let written = create_private(&temporary, line(&key, inode).as_bytes())
        .and_then(|()| fs::rename(&temporary, &stamp_path))
        .and_then(|()| sync_dir(&stamp_path));
    if let Err(e) = written {
        let _ = fs::remove_file(&temporary);
        return Err(crate::store::io_error(&stamp_path, "write", &e));
    }
    Ok(())
}

/// Makes the user's key when there is none (see [`write`]), so that a data directory that
/// cannot keep it is said as such before anything else is made there.
pub fn ready_key() -> Result<()> {
    key().map(drop)
}

/// Creates `path` (mode 0600) holding `bytes`, on disk when it returns; fails when it exists,
/// and leaves nothing behind when the bytes cannot be written.
fn create_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if written.is_err() {
        let _ = fs::remove_file(path);
    }
    written
}

/// Puts the directory entry of `path` on disk (a name just linked or renamed into place). A file
/// system that cannot sync a directory (EINVAL) keeps the name as safely as it keeps any.
fn sync_dir(path: &Path) -> io::Result<()> {
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    match fs::File::open(dir)?.sync_all() {
        Err(e) if e.raw_os_error() == Some(nix::libc::EINVAL) => Ok(()),
        other => other,
    }
}

/// Where the user's key lives: `<data dir>/sticky/key`.
pub fn key_path() -> Result<PathBuf> {
    data_dir()
        .map(|dir| dir.join("sticky").join("key"))
        .ok_or_else(|| {
            StickyError::store(
                Path::new("sticky/key"),
                "cannot find your data directory for sticky's key; set HOME (or XDG_DATA_HOME)",
            )
            .into()
        })
}

/// The user's data directory (`~/.local/share`, `XDG_DATA_HOME`).
#[cfg(not(test))]
pub(crate) fn data_dir() -> Option<PathBuf> {
    crate::settings::env::data_dir()
}

/// The unit tests' data directory: never the HOME of whoever runs them.
#[cfg(test)]
#[allow(clippy::unnecessary_wraps)] // the same signature as the real one
pub(crate) fn data_dir() -> Option<PathBuf> {
    let uid = nix::unistd::geteuid().as_raw();
    Some(std::env::temp_dir().join(format!("sticky-unit-tests-{uid}")))
}

/// The user's key, made on first use. Concurrent first uses agree: each writes a key of its own
/// under a temporary name and links it into place only if none is there, then all read the one
/// that is.
fn key() -> Result<Vec<u8>> {
    if let Some(key) = read_key()? {
        return Ok(key);
    }
    let path = key_path()?;
    if let Err(e) = make_key(&path) {
        return Err(StickyError::store(&path, unmakeable(&path, &e)).into());
    }
    read_key()?.ok_or_else(|| StickyError::store(&path, "vanished as it was created").into())
}

/// Why the key at `path` cannot be made, and the way out.
fn unmakeable(path: &Path, error: &io::Error) -> String {
    let dir = path.parent().unwrap_or(path);
    let why = error.to_string().to_lowercase();
    format!(
        "cannot create sticky's key ({why}); let sticky write {}, or set XDG_DATA_HOME to a \
         directory it can write",
        dir.display()
    )
}

/// Makes a key at `path` unless one is there; on disk (file and name) when it returns, and no
/// temporary file left behind on any path.
fn make_key(path: &Path) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        state::create(dir)?;
    }
    let mut key = [0u8; KEY_LEN];
    fs::File::open("/dev/urandom")?.read_exact(&mut key)?;
    let temporary = path.with_file_name(format!("key.{}.tmp", std::process::id()));
    create_private(&temporary, &key)?;
    let linked = fs::hard_link(&temporary, path);
    let removed = fs::remove_file(&temporary);
    match linked {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
        Ok(()) => removed.and_then(|()| sync_dir(path)),
    }
}

/// Whether this user can have a key (see [`key_state`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyState {
    /// There is one (made now if there was none).
    Ready,
    /// None can be made (no data directory, or one sticky cannot write): why, and the way out.
    /// Stamps cannot vouch for such a user's databases, which are then all unstamped, and
    /// `sticky trust` cannot stamp one either.
    Impossible(String),
}

/// Whether the user has a key, making one now if there is none.
pub fn key_state() -> Result<KeyState> {
    let path = match key_path() {
        Ok(path) => path,
        Err(error) => return Ok(KeyState::Impossible(format!("{error:#}"))),
    };
    if read_key()?.is_some() {
        return Ok(KeyState::Ready);
    }
    Ok(match make_key(&path) {
        Ok(()) => KeyState::Ready,
        Err(e) => KeyState::Impossible(format!("{}: {}", path.display(), unmakeable(&path, &e))),
    })
}

/// The user's key, `None` when there is none yet. A key others could read (or that is not the
/// user's own) is refused: with it they could stamp a state as the user's.
fn read_key() -> Result<Option<Vec<u8>>> {
    let path = key_path()?;
    if let Some(dir) = path.parent() {
        check_key_dir(dir)?;
    }
    let mut file = match fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if is_absent(&e) => return Ok(None),
        Err(e) => return Err(crate::store::io_error(&path, "read", &e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| crate::store::io_error(&path, "look at", &e))?;
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me || meta.mode() & 0o077 != 0 {
        return Err(StickyError::store(
            &path,
            format!(
                "refusing to use sticky's key: others may read it (mode {:04o}, uid {}), and \
                 could stamp a state as yours; remove it (sticky makes a new one, and asks you \
                 to `sticky trust` your projects' state again)",
                meta.mode() & 0o777,
                meta.uid()
            ),
        )
        .into());
    }
    // The size is known: read exactly the key (`read_to_end` would stat, seek and read twice).
    if meta.len() != KEY_LEN as u64 {
        return Err(StickyError::store(
            &path,
            format!(
                "is not sticky's key ({} bytes, not {KEY_LEN}); remove it (sticky makes a new \
                 one, and asks you to `sticky trust` your projects' state again)",
                meta.len()
            ),
        )
        .into());
    }
    let mut key = vec![0; KEY_LEN];
    file.read_exact(&mut key)
        .map_err(|e| crate::store::io_error(&path, "read", &e))?;
    Ok(Some(key))
}

/// Refuses the key's directory when another user owns it or others may write it: they could
/// replace the key with one they know, or remove it. A missing one is made 0700 with the key.
fn check_key_dir(dir: &Path) -> Result<()> {
    let meta = match fs::metadata(dir) {
        Ok(meta) => meta,
        Err(e) if is_absent(&e) => return Ok(()),
        Err(e) => return Err(crate::store::io_error(dir, "look at", &e)),
    };
    let me = nix::unistd::geteuid().as_raw();
    let why = if meta.uid() != me {
        format!(
            "the directory is owned by another user (uid {}, you are uid {me}), who could \
             replace the key or remove it; if it is yours, take it over (chown -R {me} {}), \
             else remove it (sticky makes a new key, and asks you to `sticky trust` your \
             projects' state again)",
            meta.uid(),
            crate::msg::shell_path(dir)
        )
    } else if meta.mode() & 0o022 != 0 {
        format!(
            "other users may write the directory (mode {:04o}), and could replace the key or \
             remove it; make it yours alone (chmod go-w {})",
            meta.mode() & 0o777,
            crate::msg::shell_path(dir)
        )
    } else {
        return Ok(());
    };
    Err(StickyError::store(dir, format!("refusing to use sticky's key in it: {why}")).into())
}

/// Whether `error` says there is nothing at a path: not there, or a file where a directory
/// on the way should be (a data directory that is a file holds no key).
fn is_absent(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::NotFound || error.kind() == io::ErrorKind::NotADirectory
}

/// Whether git says it tracks the database of `state`, its WAL, its stamp or its vault: a state
/// committed to a repository came with it. `Err` holds why git could not be asked, when the
/// state may be in a git worktree.
pub fn tracked_by_git(state: &State) -> Result<bool, String> {
    let Some((dir, name)) = state.db.parent().zip(state.db.file_name()) else {
        return Ok(false);
    };
    let name = name.to_string_lossy();
    let mut command = Command::new("git");
    command
        .args(["-c", "core.fsmonitor=false", "ls-files", "-z", "--"])
        .args([
            name.to_string(),
            format!("{name}-wal"),
            format!("{name}.stamp"),
            format!("{name}.vault"),
        ])
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null());
    // Looked up in `dir`: through absolute PATH entries only (review 22, H1).
    let output = crate::search_lists::apply(&mut command).output();
    match output {
        Ok(output) if output.status.success() => Ok(!output.stdout.is_empty()),
        Ok(output) => {
            let error = String::from_utf8_lossy(&output.stderr);
            if error.contains("not a git repository") {
                Ok(false)
            } else {
                Err(format!("git ls-files failed: {}", error.trim()))
            }
        }
        Err(e) if in_worktree(dir) => Err(format!("git cannot be run: {e}")),
        Err(_) => Ok(false),
    }
}

/// Whether `dir` or a directory above it holds a `.git`.
pub(super) fn in_worktree(dir: &Path) -> bool {
    dir.ancestors()
        .any(|dir| dir.join(".git").symlink_metadata().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_matches_rfc_4231() {
        // Test case 2 of RFC 4231.
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex(&mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_stamp_holds_for_its_own_file_and_key_only() {
        let key = [7u8; KEY_LEN];
        let stamp = line(&key, 42);
        assert_eq!(judge(&stamp, 42, &key), Verdict::Mine);
        assert_eq!(judge(&stamp, 43, &key), Verdict::Copied);
        assert_eq!(judge(&stamp, 42, &[8u8; KEY_LEN]), Verdict::Foreign);
        let forged = stamp.replace(" 42 ", " 43 ");
        assert_eq!(judge(&forged, 43, &key), Verdict::Foreign);
        for junk in ["", "sticky-stamp 1", "sticky-stamp 1 x y", "other 1 42 00"] {
            assert_eq!(judge(junk, 42, &key), Verdict::Foreign, "{junk:?}");
        }
    }
}
