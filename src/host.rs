//! This machine as a turn's row names it: its host name, recorded with the pid of the sticky
//! that runs the turn, whether such a process is known to be gone, and whether it is an
//! ancestor of this one (a sticky the agent of that turn runs).
//!
//! A turn row still `running` whose process is gone was abandoned; only a process of this
//! machine can be asked (a database shared over a network file system, or a cached `.sticky/`
//! restored on another CI runner, holds rows of other hosts).

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

/// This machine's name, as turn rows record it (empty when the system will not say).
pub fn name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|name| name.into_string().ok())
        .unwrap_or_default()
}

/// Whether the process `pid` of machine `host` is known to be gone: only when it is this
/// machine and the kernel has no such process. Never asks about pid 0 or a negative one (kill(2)
/// would ask about a whole process group).
pub fn process_gone(host: &str, pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().filter(|pid| *pid > 0) else {
        return false;
    };
    host == name() && kill(Pid::from_raw(pid), None) == Err(Errno::ESRCH)
}

/// Whether process `pid` of this machine is an ancestor of this process (its parent, or the
/// parent's parent, ...); `false` when it cannot be told.
pub fn is_ancestor(pid: u32) -> bool {
    let mut current = std::os::unix::process::parent_id();
    // Deeper than any agent's tool runs its commands; a loop cannot come from a process tree.
    for _ in 0..64 {
        if current == pid {
            return true;
        }
        match parent_of(current) {
            Some(parent) if current > 1 => current = parent,
            _ => return false,
        }
    }
    false
}

/// The parent of process `pid`, from `/proc/PID/stat` (the field after the state, past the name
/// in parentheses, which may hold anything).
#[cfg(target_os = "linux")]
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The parent of process `pid`, as `ps` tells it (no `/proc` here).
#[cfg(not(target_os = "linux"))]
pub fn parent_of(pid: u32) -> Option<u32> {
    let mut ps = std::process::Command::new("/bin/ps");
    let output = crate::search_lists::apply(&mut ps)
        .args(["-o", "ppid=", "-p", &pid.to_string()])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&output.stdout).trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_processs_parent_is_an_ancestor_and_it_is_none_of_its_own() {
        assert!(is_ancestor(std::os::unix::process::parent_id()));
        assert!(!is_ancestor(std::process::id()));
        let child = std::process::Command::new("true")
            .spawn()
            .expect("spawn true");
        assert!(!is_ancestor(child.id()));
        let _ = { child }.wait();
    }

    #[test]
    fn only_a_process_of_this_host_that_does_not_exist_is_gone() {
        let me = name();
        assert!(!process_gone(&me, std::process::id()), "this process runs");
        assert!(!process_gone(&me, 0));
        assert!(!process_gone("another-machine", u32::MAX >> 1));
        // A child that was waited for is gone (the kernel hands pids out in order, so its pid
        // is not reused a moment later).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(process_gone(&me, pid));
    }
}
