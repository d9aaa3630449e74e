//! Paths confined to a trusted directory: the one place through which sticky reads and writes
//! below `.sticky/` (the database's neighbours: the locks, the vault) and below an agent's home
//! (restores, imports, relocations).
//!
//! A [`Dir`] is an open directory. Its top is trusted as it stands (the state directory, which
//! `project/trust.rs` checked or `STICKY_DB` named; the agent's home, which may be a link the
//! user made); below it every step is `openat` with `O_NOFOLLOW`, so no component, middle or
//! last, may be a symbolic link, and a relative path holding anything but plain names (`..`,
//! a root, `.`) is refused before anything is opened. A repository can commit a link anywhere
//! below `.sticky/` (`git add -f`), and one followed would carry sticky's writes out of the
//! project, or a restore's reads into `/etc/shadow` (issue 23): through this module the link is
//! an error naming it, whichever level it sits at.
//!
//! Built on `nix`'s `openat`, `mkdirat`, `renameat`, `unlinkat` and `fstatat`, which are
//! POSIX and behave alike on Linux and macOS (`O_NOFOLLOW` on a link is `ELOOP` on both).
//! `cap-std` would do the same with a larger surface than the dozen calls sticky needs.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat, renameat};
use nix::sys::stat::{FileStat, Mode, SFlag, fstatat, mkdirat};
use nix::unistd::{UnlinkatFlags, linkat, unlinkat};

/// What is at a path, as `lstat` tells it (a link is never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Link,
    /// Anything else (a FIFO, a socket, a device).
    Other,
}

/// An open directory whose path below its trusted top holds no link.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// How [`Dir::open_file`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reading only.
    Read,
    /// Writing an existing file (not truncated).
    Write,
    /// Reading and writing an existing file (not truncated).
    ReadWrite,
    /// Reading and writing, the file created (0600) when missing.
    ReadWriteCreate,
}

impl Dir {
    /// Opens the trusted directory `top`. A link in `top` itself is followed: the caller vouches
    /// for it (the checked state directory, the agent's home the user chose).
    pub fn open_top(top: &Path) -> io::Result<Self> {
        // The plain error: callers name the top in their own words.
        let fd = nix::fcntl::open(
            top,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(io::Error::from)?;
        Ok(Self {
            fd,
            path: top.to_owned(),
        })
    }

    /// Creates the trusted directory `top` and its missing parents (0700) when missing, then
    /// opens it as [`Dir::open_top`] does.
    pub fn create_top(top: &Path) -> io::Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        match Self::open_top(top) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(top)?;
                Self::open_top(top)
            }
            opened => opened,
        }
    }

    /// The directory's path (for messages, and for programs that take a path).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The owner (uid) and the permission bits of this directory, read from the open
    /// descriptor: what is checked is what is used, whatever happens to the path meanwhile.
    pub fn owner_and_mode(&self) -> io::Result<(u32, u32)> {
        let stat = nix::sys::stat::fstat(self.fd.as_fd()).map_err(io::Error::from)?;
        #[allow(clippy::useless_conversion)] // mode_t is u16 on macOS, u32 on Linux
        Ok((stat.st_uid, u32::from(stat.st_mode) & 0o7777))
    }

    /// Opens the directory `relative` below this one, no component of it a link.
    pub fn open_dir(&self, relative: &Path) -> io::Result<Self> {
        let mut dir = self.duplicate()?;
        for name in names(relative, &self.path)? {
            dir = dir.child(name)?;
        }
        Ok(dir)
    }

    /// Opens the directory `relative` below this one, creating what is missing of it (0700);
    /// no component of it may be a link.
    pub fn create_dir_all(&self, relative: &Path) -> io::Result<Self> {
        let mut dir = self.duplicate()?;
        for name in names(relative, &self.path)? {
            match mkdirat(dir.fd.as_fd(), name, Mode::S_IRWXU) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(errno) => return Err(error(errno, &dir.path.join(name), Some(&self.path))),
            }
            dir = dir.child(name)?;
        }
        Ok(dir)
    }

    /// The directory holding the file `relative` (created when `create`) and the file's name.
    pub fn parent_of<'a>(&self, relative: &'a Path, create: bool) -> io::Result<(Self, &'a OsStr)> {
        let all = names(relative, &self.path)?;
        let Some((last, parents)) = all.split_last() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: an empty path names no file", self.path.display()),
            ));
        };
        let parents: PathBuf = parents.iter().collect();
        let dir = if create {
            self.create_dir_all(&parents)?
        } else {
            self.open_dir(&parents)?
        };
        Ok((dir, last))
    }

    /// Opens the regular file `relative` below this one: no component a link, the file itself
    /// not a link (`O_NOFOLLOW`) and regular (a FIFO would block, a device is no copy).
    pub fn open_file(&self, relative: &Path, access: Access) -> io::Result<File> {
        let (dir, name) = self.parent_of(relative, false)?;
        dir.open_here(name, access)
    }

    /// Opens the regular file `name` in this directory (see [`Dir::open_file`]).
    pub fn open_here(&self, name: &OsStr, access: Access) -> io::Result<File> {
        let flags = match access {
            Access::Read => OFlag::O_RDONLY,
            Access::Write => OFlag::O_WRONLY,
            Access::ReadWrite => OFlag::O_RDWR,
            Access::ReadWriteCreate => OFlag::O_RDWR | OFlag::O_CREAT,
        };
        // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
        let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
        let path = self.path.join(name);
        let fd = openat(self.fd.as_fd(), name, flags, Mode::S_IRUSR | Mode::S_IWUSR)
            .map_err(|errno| self.explain(errno, name))?;
        let file = File::from(fd);
        if !file.metadata()?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: is not a regular file", path.display()),
            ));
        }
        clear_nonblocking(&file)?;
        Ok(file)
    }

    /// Creates the new file `name` in this directory (0600, `O_EXCL`: never an existing file
    /// or a link), for writing.
    pub fn create_new(&self, name: &OsStr) -> io::Result<File> {
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(self.fd.as_fd(), name, flags, Mode::S_IRUSR | Mode::S_IWUSR)
            .map_err(|errno| error(errno, &self.path.join(name), None))?;
        Ok(File::from(fd))
    }

    /// What is at `name` in this directory (never following a link); `None` when nothing is.
    pub fn kind(&self, name: &OsStr) -> io::Result<Option<Kind>> {
        match self.stat(name) {
            Ok(stat) => Ok(Some(kind_of(&stat))),
            Err(Errno::ENOENT) => Ok(None),
            Err(errno) => Err(error(errno, &self.path.join(name), None)),
        }
    }

    /// The length of the file `name` in this directory, as `lstat` tells it.
    pub fn file_len(&self, name: &OsStr) -> io::Result<u64> {
        let stat = self
            .stat(name)
            .map_err(|errno| error(errno, &self.path.join(name), None))?;
        Ok(u64::try_from(stat.st_size).unwrap_or(0))
    }

    /// Renames `from` in this directory to `to` in `target` (atomic on one file system; a link
    /// at `to` is replaced, never followed).
    pub fn rename(&self, from: &OsStr, target: &Self, to: &OsStr) -> io::Result<()> {
        renameat(self.fd.as_fd(), from, target.fd.as_fd(), to)
            .map_err(|errno| error(errno, &target.path.join(to), None))
    }

    /// Gives the file `from` in this directory a second name, `to` (`linkat`): never over
    /// anything at `to` (`AlreadyExists`), so a file written whole under a temporary name
    /// appears at `to` complete or not at all.
    pub fn link_new(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        linkat(self.fd.as_fd(), from, self.fd.as_fd(), to, AtFlags::empty())
            .map_err(|errno| error(errno, &self.path.join(to), None))
    }

    /// Removes the file (or link) `name` from this directory.
    pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        unlinkat(self.fd.as_fd(), name, UnlinkatFlags::NoRemoveDir)
            .map_err(|errno| error(errno, &self.path.join(name), None))
    }

    /// Removes the directory `name` in this one if it is empty (`unlinkat` with `AT_REMOVEDIR`:
    /// a link there is not a directory, and stays).
    pub fn remove_empty_dir(&self, name: &OsStr) -> io::Result<()> {
        unlinkat(self.fd.as_fd(), name, UnlinkatFlags::RemoveDir)
            .map_err(|errno| error(errno, &self.path.join(name), None))
    }

    /// Removes the directory `name` in this one and everything in it, never following a link
    /// (a link inside is removed, not what it leads to); whether it existed.
    pub fn remove_dir_all(&self, name: &OsStr) -> io::Result<bool> {
        match self.kind(name)? {
            None => return Ok(false),
            Some(Kind::Dir) => {}
            Some(_) => {
                self.remove_file(name)?;
                return Ok(true);
            }
        }
        let dir = self.child(name)?;
        for (entry, kind) in dir.entries()? {
            if kind == Kind::Dir {
                dir.remove_dir_all(&entry)?;
            } else {
                dir.remove_file(&entry)?;
            }
        }
        self.remove_empty_dir(name)?;
        Ok(true)
    }

    /// The entries of this directory with what each is (`.` and `..` left out), in name order.
    pub fn entries(&self) -> io::Result<Vec<(OsString, Kind)>> {
        let fd = self.fd.try_clone()?;
        let mut dir = nix::dir::Dir::from_fd(fd).map_err(|errno| error(errno, &self.path, None))?;
        let mut found = Vec::new();
        for entry in dir.iter() {
            let entry = entry.map_err(|errno| error(errno, &self.path, None))?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            if let Some(kind) = self.kind(name)? {
                found.push((name.to_owned(), kind));
            }
        }
        found.sort_by(|left, right| left.0.cmp(&right.0));
        Ok(found)
    }

    /// The directory `name` in this one, not a link.
    fn child(&self, name: &OsStr) -> io::Result<Self> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(self.fd.as_fd(), name, flags, Mode::empty())
            .map_err(|errno| self.explain(errno, name))?;
        Ok(Self {
            fd,
            path: self.path.join(name),
        })
    }

    fn duplicate(&self) -> io::Result<Self> {
        Ok(Self {
            fd: self.fd.try_clone()?,
            path: self.path.clone(),
        })
    }

    fn stat(&self, name: &OsStr) -> nix::Result<FileStat> {
        fstatat(self.fd.as_fd(), name, AtFlags::AT_SYMLINK_NOFOLLOW)
    }

    /// The error of opening `name` here: `ELOOP` (and `ENOTDIR`, which some systems give for a
    /// link opened as a directory) is told as the link it is.
    fn explain(&self, errno: Errno, name: &OsStr) -> io::Error {
        let path = self.path.join(name);
        let linked = matches!(errno, Errno::ELOOP | Errno::ENOTDIR | Errno::EMLINK)
            && self
                .stat(name)
                .is_ok_and(|stat| kind_of(&stat) == Kind::Link);
        if linked {
            return linked_error(&path);
        }
        error(errno, &path, None)
    }
}

/// The refusal of a link below a trusted top: it names the link and the way out. Callers tell
/// it from other errors with [`is_link`].
#[derive(Debug)]
pub struct Linked(PathBuf);

impl std::fmt::Display for Linked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is a symbolic link, and sticky follows no link there (it could carry sticky's \
             reads or writes out of their directory); remove the link",
            self.0.display()
        )
    }
}

impl std::error::Error for Linked {}

/// What a file that is not a regular file is, for a message (the
/// configuration file, a database path).
pub fn describe(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "something else"
    }
}

/// Whether `error` is the refusal of a link ([`Linked`]).
pub fn is_link(error: &io::Error) -> bool {
    error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<Linked>())
        .is_some()
}

fn linked_error(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, Linked(path.to_owned()))
}

/// The plain names of `relative`; anything else (`..`, `.`, a root, a prefix) is refused.
fn names<'a>(relative: &'a Path, top: &Path) -> io::Result<Vec<&'a OsStr>> {
    let mut names = Vec::new();
    for part in relative.components() {
        match part {
            Component::Normal(name) => names.push(name),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "\"{}\" is not a plain path below {} (it holds `..`, `.` or a root)",
                        relative.display(),
                        top.display()
                    ),
                ));
            }
        }
    }
    // `components` drops a `.` inside a path; one spelled out is not plain either.
    if relative
        .as_os_str()
        .as_bytes()
        .split(|&b| b == b'/')
        .any(|part| part == b".")
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "\"{}\" is not a plain path below {} (it holds `.`)",
                relative.display(),
                top.display()
            ),
        ));
    }
    Ok(names)
}

/// An errno as an `io::Error` naming `path` (and, for `ELOOP`, the link refused below `top`).
fn error(errno: Errno, path: &Path, top: Option<&Path>) -> io::Error {
    if errno == Errno::ELOOP && top.is_some() {
        return linked_error(path);
    }
    let e = io::Error::from(errno);
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

fn kind_of(stat: &FileStat) -> Kind {
    match SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT {
        SFlag::S_IFREG => Kind::File,
        SFlag::S_IFDIR => Kind::Dir,
        SFlag::S_IFLNK => Kind::Link,
        _ => Kind::Other,
    }
}

/// Clears `O_NONBLOCK` (set to open a FIFO without waiting) on a regular file.
fn clear_nonblocking(file: &File) -> io::Result<()> {
    use nix::fcntl::{FcntlArg, fcntl};
    let flags = fcntl(file, FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) - OFlag::O_NONBLOCK;
    fcntl(file, FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
    Ok(())
}

#[cfg(test)]
mod tests;
