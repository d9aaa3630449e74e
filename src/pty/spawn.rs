//! Starting a program as the session leader of a pseudo-terminal with `posix_spawn(3)` (Linux).
//!
//! portable-pty forks and runs a `pre_exec` closure. The fork copies sticky's page tables and
//! turns every page sticky writes afterwards into a copy-on-write fault, and the closure walks
//! `/dev/fd` to close descriptors in the child before it may exec: about 0.2 ms of every turn
//! on the benchmark's VM (BENCHMARKS.md). glibc's `posix_spawn` runs the child on the parent's
//! memory until it execs (`CLONE_VM | CLONE_VFORK`) and reports a failed exec as an error
//! instead of a child that dies.
//!
//! The child gets what portable-pty gave it:
//! - a session of its own (`POSIX_SPAWN_SETSID`) whose controlling terminal is the slave:
//!   glibc runs setsid(2) before the file actions, and Linux makes a terminal the controlling
//!   terminal of the session leader that opens it first without `O_NOCTTY`;
//! - the slave as stdin, stdout and stderr;
//! - every signal at its default action, none blocked;
//! - its working directory (`posix_spawn_file_actions_addchdir_np`, glibc 2.29);
//! - sticky's environment with the run's variables on top, its search lists (PATH,
//!   `LD_LIBRARY_PATH`, ...) kept to their absolute entries (`crate::search_lists`);
//! - no descriptor above 2: sticky opens its own close-on-exec, and marks those it inherited
//!   close-on-exec before the spawn.

use std::ffi::{CString, OsStr, OsString};
use std::fs;
use std::mem::MaybeUninit;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::{Context, Result};
use nix::errno::Errno;
use nix::libc;
use nix::sys::signal::{SigSet, Signal};
use nix::unistd::Pid;

/// Starts `program` with `args` (without the program's name) and `env` on top of sticky's own
/// environment, in `cwd`, as the session leader of the terminal `tty`.
pub(super) fn spawn(
    program: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
    cwd: &Path,
    tty: &Path,
) -> Result<Pid> {
    let path = c_string(program.as_os_str())?;
    let arguments = std::iter::once(Ok(path.clone()))
        .chain(args.iter().map(|arg| c_string(arg)))
        .collect::<Result<Vec<_>>>()?;
    let envp = environment(env)?;
    let cwd = c_string(cwd.as_os_str())?;
    let tty = c_string(tty.as_os_str())?;

    let mut actions = FileActions::new(
        libc::posix_spawn_file_actions_init,
        libc::posix_spawn_file_actions_destroy,
        "prepare the program's descriptors",
    )?;
    actions.open(0, &tty, libc::O_RDWR)?;
    actions.dup2(0, 1)?;
    actions.dup2(0, 2)?;
    actions.chdir(&cwd)?;
    let mut attributes = Attributes::new(
        libc::posix_spawnattr_init,
        libc::posix_spawnattr_destroy,
        "prepare the program's attributes",
    )?;
    attributes.new_session_with_default_signals()?;

    inherited_descriptors_close_on_exec();
    posix_spawn(&path, &actions, &attributes, &arguments, &envp)
        .with_context(|| format!("could not start {}", program.display()))
}

/// `name=value` for sticky's environment with `overrides` applied (a later one wins), its
/// search lists kept to their absolute entries ([`crate::search_lists`]).
fn environment(overrides: &[(OsString, OsString)]) -> Result<Vec<CString>> {
    crate::search_lists::environment(overrides)
        .into_iter()
        .map(|(name, value)| {
            let mut entry = name;
            entry.push("=");
            entry.push(value);
            c_string(&entry)
        })
        .collect()
}

fn c_string(text: &OsStr) -> Result<CString> {
    CString::new(text.as_bytes())
        .with_context(|| format!("{} contains a NUL byte", text.to_string_lossy()))
}

/// Marks every descriptor above 2 close-on-exec. sticky's own already are; the others were
/// inherited from whoever started sticky and are not the program's business (a pipe's write
/// end left open would keep a reader of that pipe waiting for as long as the agent lives).
///
/// One `close_range(2)` with `CLOSE_RANGE_CLOEXEC` (Linux 5.11) does it; older kernels get the
/// walk of `/proc/self/fd`, an open, two reads and two fcntl(2)s per descriptor.
fn inherited_descriptors_close_on_exec() {
    if all_close_on_exec_from(3) {
        return;
    }
    let Ok(entries) = fs::read_dir("/proc/self/fd") else {
        return;
    };
    let descriptors: Vec<libc::c_int> = entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in descriptors {
        set_close_on_exec(fd);
    }
}

/// `close_range(first, ~0, CLOSE_RANGE_CLOEXEC)`: whether the kernel marked every descriptor
/// from `first` on close-on-exec (false on kernels before 5.11, which do not know the call or
/// the flag).
#[allow(unsafe_code)]
fn all_close_on_exec_from(first: libc::c_uint) -> bool {
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC closes nothing; it only sets the flag on the
    // descriptors in the range, as set_close_on_exec does one by one.
    let result = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    result == 0
}

/// Sets `FD_CLOEXEC` on `fd`; a descriptor closed in the meantime (the directory's own, one
/// another thread closed) fails with EBADF, which is fine.
#[allow(unsafe_code)]
fn set_close_on_exec(fd: libc::c_int) {
    // SAFETY: F_GETFD and F_SETFD only read and change the descriptor flags of `fd`; on a closed
    // or reused descriptor they fail or set a flag sticky sets on all of its own anyway.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
            libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
        }
    }
}

/// The `posix_spawn` functions return an error number rather than setting errno.
fn check(result: libc::c_int, what: &str) -> Result<()> {
    if result == 0 {
        Ok(())
    } else {
        Err(Errno::from_raw(result)).with_context(|| format!("could not {what}"))
    }
}

/// A `posix_spawn` object (the file actions or the attributes): on the heap, where it must stay
/// once initialized, and destroyed when dropped.
struct SpawnObject<T> {
    object: Box<T>,
    destroy: Lifecycle<T>,
}

/// A `posix_spawn` function that initializes or destroys an object of type `T`.
type Lifecycle<T> = unsafe extern "C" fn(*mut T) -> libc::c_int;

#[allow(unsafe_code)]
impl<T> SpawnObject<T> {
    /// An object that `init` initializes and `destroy` destroys; `what` says what failed.
    fn new(init: Lifecycle<T>, destroy: Lifecycle<T>, what: &str) -> Result<Self> {
        let mut object = Box::new(MaybeUninit::<T>::uninit());
        // SAFETY: init writes the whole object; it is used only once init succeeded.
        check(unsafe { init(object.as_mut_ptr()) }, what)?;
        // SAFETY: initialized just above.
        let object = unsafe { object.assume_init() };
        Ok(Self { object, destroy })
    }

    fn as_mut_ptr(&mut self) -> *mut T {
        &raw mut *self.object
    }

    fn as_ptr(&self) -> *const T {
        &raw const *self.object
    }
}

#[allow(unsafe_code)]
impl<T> Drop for SpawnObject<T> {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, destroyed once.
        unsafe { (self.destroy)(self.as_mut_ptr()) };
    }
}

/// What the child does between the clone and the exec, in order.
type FileActions = SpawnObject<libc::posix_spawn_file_actions_t>;

#[allow(unsafe_code)]
impl FileActions {
    fn open(&mut self, fd: libc::c_int, path: &CString, flags: libc::c_int) -> Result<()> {
        // SAFETY: the object is initialized; glibc copies `path`.
        check(
            unsafe {
                libc::posix_spawn_file_actions_addopen(
                    self.as_mut_ptr(),
                    fd,
                    path.as_ptr(),
                    flags,
                    0,
                )
            },
            "prepare the program's terminal",
        )
    }

    fn dup2(&mut self, fd: libc::c_int, to: libc::c_int) -> Result<()> {
        // SAFETY: the object is initialized.
        check(
            unsafe { libc::posix_spawn_file_actions_adddup2(self.as_mut_ptr(), fd, to) },
            "prepare the program's descriptors",
        )
    }

    fn chdir(&mut self, path: &CString) -> Result<()> {
        // SAFETY: the object is initialized; glibc copies `path`.
        check(
            unsafe { libc::posix_spawn_file_actions_addchdir_np(self.as_mut_ptr(), path.as_ptr()) },
            "prepare the program's directory",
        )
    }
}

/// The child's session and signals.
type Attributes = SpawnObject<libc::posix_spawnattr_t>;

#[allow(unsafe_code)]
impl Attributes {
    /// A new session; every signal at its default action (sticky catches some and Rust ignores
    /// SIGPIPE) and none blocked.
    fn new_session_with_default_signals(&mut self) -> Result<()> {
        let mut default = SigSet::all();
        default.remove(Signal::SIGKILL);
        default.remove(Signal::SIGSTOP);
        let blocked = SigSet::empty();
        // The libc crate types the flags as `c_int` and `c_short` by turns; all fit a short.
        let flags = libc::c_short::try_from(
            libc::c_int::from(libc::POSIX_SPAWN_SETSID)
                | libc::POSIX_SPAWN_SETSIGDEF
                | libc::POSIX_SPAWN_SETSIGMASK,
        )
        .context("the posix_spawn flags do not fit a short")?;
        // SAFETY: the object is initialized; glibc copies the sets.
        unsafe {
            check(
                libc::posix_spawnattr_setsigdefault(self.as_mut_ptr(), default.as_ref()),
                "prepare the program's signals",
            )?;
            check(
                libc::posix_spawnattr_setsigmask(self.as_mut_ptr(), blocked.as_ref()),
                "prepare the program's signals",
            )?;
            check(
                libc::posix_spawnattr_setflags(self.as_mut_ptr(), flags),
                "prepare the program's session",
            )
        }
    }
}

#[allow(unsafe_code)]
fn posix_spawn(
    path: &CString,
    actions: &FileActions,
    attributes: &Attributes,
    argv: &[CString],
    envp: &[CString],
) -> Result<Pid> {
    let argv: Vec<*mut libc::c_char> = argv
        .iter()
        .map(|arg| arg.as_ptr().cast_mut())
        .chain(std::iter::once(std::ptr::null_mut()))
        .collect();
    let envp: Vec<*mut libc::c_char> = envp
        .iter()
        .map(|var| var.as_ptr().cast_mut())
        .chain(std::iter::once(std::ptr::null_mut()))
        .collect();
    let mut pid: libc::pid_t = 0;
    // SAFETY: every pointer is valid for the call: the strings outlive it, both arrays end with
    // a null pointer, and posix_spawn does not keep or write through them.
    let result = unsafe {
        libc::posix_spawn(
            &raw mut pid,
            path.as_ptr(),
            actions.as_ptr(),
            attributes.as_ptr(),
            argv.as_ptr(),
            envp.as_ptr(),
        )
    };
    if result == 0 {
        Ok(Pid::from_raw(pid))
    } else {
        Err(Errno::from_raw(result).into())
    }
}
