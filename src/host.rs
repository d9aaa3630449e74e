//! This machine as a turn's row names it: its host name, recorded with the pid of the sticky
//! that runs the turn, and whether such a process is known to be gone.
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

#[cfg(test)]
mod tests {
    use super::*;

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
