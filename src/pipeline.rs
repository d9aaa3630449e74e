//! Whether the pipe on stdin is fed by the user's own pipeline (`cargo clippy 2>&1 | sticky
//! "fix these"`), whose input a turn waits for however late it comes, or by something else (a
//! CI runner or process manager that hands its child a pipe nobody writes or closes), which
//! only gets a grace period.
//!
//! A shell runs every process of a pipeline in the shell's own session: with job control (an
//! interactive shell) the pipeline is a job with a process group of its own, without it (a
//! script, `bash -c`) every process stays in the shell's group, and a program of the pipeline
//! may move itself and its children to a group of their own (GNU `timeout` does, on either
//! side of the pipe); none of them leaves the session, which only `setsid` does. So stdin is
//! the user's pipeline when a process of sticky's own session holds the pipe's write end and
//! is neither sticky nor one of its ancestors. A runner that keeps the write end of the pipe it
//! gave its step is an ancestor (in whatever group or session), and a writer in another
//! session (a daemon, a helper the runner started with `setsid`) is someone else's. What this
//! admits beyond a pipeline is a write end that leaked into another process of the session
//! (a runner's helper started without its own session, holding the pipe it never writes):
//! such a turn waits for that helper, and `--stdin skip` or `</dev/null` is the way out. (A
//! shell that writes into the pipe itself, from a builtin run in its own process, is an
//! ancestor too: while no program of the pipeline holds the pipe, such input gets the grace
//! period.)
//!
//! A writer sticky cannot look into (another user's process, as `sudo make 2>&1 | sticky "fix"`
//! runs `sudo` and `make`, or a setuid or setcap program) hides which pipe it holds. Such a
//! process in sticky's own process group (the shell's job: with or without job control, the
//! processes of `a | b` share one group) or in its parent's (an interactive bash runs the `sudo
//! make` of `sticky "fix" < <(sudo make)` in its own group), neither sticky nor an ancestor,
//! makes the pipe the user's pipeline, unless a process sticky can look into that is no part of
//! the pipeline (an ancestor, or a process of another session) holds its write end: a runner
//! that keeps the pipe it gave its step still gets the grace period, even beside a hidden
//! process of the step's group. What it admits beyond a pipeline is a hidden process of those
//! groups that does not write the pipe, while what holds the pipe is hidden too (a runner that
//! runs as another user, in the group of a step that left `sudo daemon &` running): such a turn
//! waits for that process, and `--stdin skip` or `</dev/null` is the way out.
//!
//! On Linux this is read from `/proc`: every process's parent, group and session in
//! `/proc/PID/stat` (anyone's to read), and for the members of sticky's session, which of
//! their descriptors is this pipe (`/proc/PID/fd/N`, the same device and inode) opened for
//! writing (`/proc/PID/fdinfo/N`), or that they cannot be read. Elsewhere (macOS has no
//! `/proc`, and its `libproc` calls would need `unsafe`, which this crate denies) the writer
//! cannot be told, and [`is_users_pipeline`] says `false`: the grace period applies there,
//! and `--stdin wait` waits however long. With `/proc` mounted `hidepid=`, another user's
//! processes are not listed at all, and their pipes get the grace period too.
//!
//! Apart from that: whether stdin is the very script a shell reads its commands from
//! ([`is_shells_script`]), which a turn never reads.

use std::os::fd::AsFd;

/// Whether this system shows who writes a pipe (Linux's `/proc`): elsewhere every pipe is
/// one from elsewhere to [`is_users_pipeline`].
pub const TELLS_WRITERS: bool = cfg!(target_os = "linux");

/// Whether `stdin` is a pipe whose writer is part of the user's pipeline, as the module
/// explains; `false` when it cannot be told (not Linux, `/proc` hidden).
pub fn is_users_pipeline(stdin: &impl AsFd) -> bool {
    #[cfg(target_os = "linux")]
    {
        linux::is_users_pipeline(stdin.as_fd())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = stdin.as_fd();
        false
    }
}

/// Whether `stdin` is the script a shell up the process tree reads its commands from (`bash <
/// job.sh`, `cat job.sh | bash`, `ssh host bash -s < job.sh`, GitLab CI's Docker executor, which
/// sends the job to the container's shell on stdin): the shell reads it a line at a time, every
/// command it runs inherits it, and a turn that read it would take the rest of the script as
/// its context, which then never runs (review 21, M1). Read from `/proc` on Linux: an ancestor
/// whose stdin is this very file and which is a shell without `-c` or a script operand (or with
/// `-s`), every process between them sharing that stdin, shells running a script or `-c`
/// among them (`./review.sh`, `npm run`: review 22, M1). `false` when it cannot be told.
pub fn is_shells_script(stdin: &impl AsFd) -> bool {
    #[cfg(target_os = "linux")]
    {
        script::is_shells_script(stdin.as_fd())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = stdin.as_fd();
        false
    }
}

#[cfg(target_os = "linux")]
mod script {
    use std::fs;
    use std::os::fd::BorrowedFd;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};

    /// The shells that read commands from stdin when given no script (`sh`, `bash`, ...).
    const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash"];

    /// How far up the process tree a shell is looked for (`timeout`, `nice`, `env` between).
    const DEPTH: usize = 8;

    pub fn is_shells_script(stdin: BorrowedFd<'_>) -> bool {
        // A script comes in a pipe or a file (a here-document is either); `/dev/null` or a
        // socket is none, and costs no look at `/proc`.
        let Some(file) = stdin
            .try_clone_to_owned()
            .ok()
            .and_then(|fd| fs::File::from(fd).metadata().ok())
            .filter(|mine| mine.file_type().is_fifo() || mine.is_file())
            .map(|mine| (mine.dev(), mine.ino()))
        else {
            return false;
        };
        let mut child = std::process::id();
        let mut pid = std::os::unix::process::parent_id();
        for _ in 0..DEPTH {
            // PID 1 is looked at too: a container's first process may be the shell reading
            // the job (`docker run -i IMAGE bash -s < job.sh`: review 26, M4).
            if pid == 0 {
                return false;
            }
            let Some(stat) = Stat::of(pid) else {
                return false;
            };
            // Its stdin is this very file (a pipe or the script itself), links followed.
            let same = fs::metadata(format!("/proc/{pid}/fd/0"))
                .is_ok_and(|theirs| (theirs.dev(), theirs.ino()) == file);
            if !same {
                return false;
            }
            let Ok(cmdline) = fs::read(format!("/proc/{pid}/cmdline")) else {
                return false;
            };
            // A shell running `-c` or a script file (`./review.sh`, `sh -c` of `npm run` or
            // `make`) does not read this stdin for commands, but the shell that ran it may: the
            // job's own, reading it line by line (review 22, M1). The search goes on up for as
            // long as the stdin is the same.
            //
            // A subshell (`( ... )`, a function in a pipeline) is a fork of its shell that never
            // ran a program of its own: it runs what its shell parsed, reads no commands, and
            // is judged by its shell, whose stdin must be this file too. A shell whose terminal
            // runs another process group in the foreground (an interactive shell, its job
            // running) reads its commands from that terminal: a stdin that is this file is a
            // redirection of one command (`ask "x" < notes.txt`, a function), never its script
            // (review 24, M1); so is one while the shell keeps its script on a descriptor of
            // its own, as shells do while a redirection holds (review 26, M1).
            if !stat.forked_only && reads_commands_from_stdin(&cmdline) == Some(true) {
                let below = Stat::of(child).map_or(stat.pgrp, |below| below.pgrp);
                return !stat.runs_a_foreground_job(below) && !keeps_its_script_aside(pid, file);
            }
            if pid == 1 {
                return false;
            }
            child = pid;
            pid = stat.parent;
        }
        false
    }

    /// Whether shell `pid` keeps, on a descriptor of its own (10 or above, close-on-exec: made
    /// by the shell, never inherited), a pipe or file other than `stdin`: its script, saved
    /// there while a redirection puts another file on its stdin (bash, dash and zsh save it so).
    fn keeps_its_script_aside(pid: u32, stdin: (u64, u64)) -> bool {
        const O_CLOEXEC: u64 = 0o2_000_000;
        let Ok(entries) = fs::read_dir(format!("/proc/{pid}/fd")) else {
            return false;
        };
        entries.flatten().any(|entry| {
            let Some(fd) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                return false;
            };
            let own = fd >= 10
                && fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).is_ok_and(|info| {
                    info.lines()
                        .find_map(|line| line.strip_prefix("flags:"))
                        .and_then(|flags| u64::from_str_radix(flags.trim(), 8).ok())
                        .is_some_and(|flags| flags & O_CLOEXEC != 0)
                });
            own && fs::metadata(entry.path()).is_ok_and(|theirs| {
                (theirs.file_type().is_fifo() || theirs.is_file())
                    && (theirs.dev(), theirs.ino()) != stdin
            })
        })
    }

    /// What `/proc/PID/stat` says of a process (proc(5)): its parent, its process group, its
    /// controlling terminal and that terminal's foreground process group, and whether it is a
    /// fork that has not run a program of its own (the kernel's `PF_FORKNOEXEC` in `flags`).
    /// The fields follow the name in parentheses, which may hold anything.
    struct Stat {
        parent: u32,
        pgrp: i64,
        tty: i64,
        foreground: i64,
        forked_only: bool,
    }

    impl Stat {
        /// The kernel's flag of a process forked that has not called exec since.
        const PF_FORKNOEXEC: i64 = 0x40;

        fn of(pid: u32) -> Option<Self> {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (_, rest) = stat.rsplit_once(')')?;
            // state, ppid, pgrp, session, tty_nr, tpgid, flags
            let fields: Vec<&str> = rest.split_whitespace().take(7).collect();
            let field = |at: usize| fields.get(at).and_then(|value| value.parse::<i64>().ok());
            Some(Self {
                parent: u32::try_from(field(1)?).ok()?,
                pgrp: field(2)?,
                tty: field(4)?,
                foreground: field(5)?,
                forked_only: field(6)? & Self::PF_FORKNOEXEC != 0,
            })
        }

        /// Whether the process, a shell, has a controlling terminal whose foreground process
        /// group is not its own but `below`'s, the group of its child on the way to sticky: a
        /// shell with job control waiting for the job it runs. A shell that reads its script
        /// from a pipe or file has no terminal (a CI runner's), is itself in the terminal's
        /// foreground group (`cat job.sh | bash` typed at a prompt), or runs in the background
        /// with its child in its own group (`bash < job.sh &`: review 26, M2).
        fn runs_a_foreground_job(&self, below: i64) -> bool {
            self.tty != 0
                && self.foreground > 0
                && self.foreground != self.pgrp
                && self.foreground == below
        }
    }

    /// Whether the command line `cmdline` (NUL-separated) is a shell reading its commands from
    /// stdin: `Some(true)` for one with no script operand and no `-c`, or with `-s`;
    /// `Some(false)` for a shell running `-c` or a script; `None` for no shell.
    pub(super) fn reads_commands_from_stdin(cmdline: &[u8]) -> Option<bool> {
        let mut args = cmdline
            .split(|b| *b == 0)
            .map(String::from_utf8_lossy)
            .take_while(|arg| !arg.is_empty());
        let program = args.next()?;
        let name = program.rsplit('/').next()?.trim_start_matches('-');
        if !SHELLS.contains(&name) {
            return None;
        }
        while let Some(arg) = args.next() {
            let arg = arg.as_ref();
            match arg {
                // A lone `-` ends the options as `--` does (`curl ... | bash -`: review 26,
                // M3); a word after either is the script.
                "--" | "-" => return Some(args.next().is_none()),
                "--rcfile" | "--init-file" => {
                    args.next();
                }
                _ if arg.starts_with("--") => {}
                _ if arg.starts_with(['-', '+']) && arg.len() > 1 => {
                    let flags = &arg[1..];
                    if arg.starts_with('-') && flags.contains('s') {
                        return Some(true);
                    }
                    if arg.starts_with('-') && flags.contains('c') {
                        return Some(false);
                    }
                    // `-o NAME`, `+O NAME`: the option's name follows.
                    if flags.ends_with(['o', 'O']) {
                        args.next();
                    }
                }
                // A script operand: the shell reads its commands from that file.
                _ => return Some(false),
            }
        }
        Some(true)
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashMap;
    use std::fs::{self, File};
    use std::io::ErrorKind;
    use std::os::fd::BorrowedFd;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};

    /// A pipe's identity: its device and inode, as `stat(2)` of any descriptor of it says.
    type PipeId = (u64, u64);

    /// A process as `/proc/PID/stat` names it.
    #[derive(Debug, Clone, Copy)]
    struct Process {
        parent: u32,
        group: i32,
        session: i32,
        /// Ended, and not yet waited for: it holds no descriptor.
        zombie: bool,
    }

    /// What `/proc` tells of a process and a pipe.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Holding {
        /// It holds the pipe open for writing.
        Writes,
        /// It does not (or it is gone).
        Not,
        /// Its descriptors are not this user's to read: another user's process, or one with
        /// raised privileges (`sudo`, a setuid or setcap program).
        Hidden,
    }

    pub fn is_users_pipeline(stdin: BorrowedFd<'_>) -> bool {
        let Some(pipe) = pipe_id(stdin) else {
            return false;
        };
        let me = std::process::id();
        // A pipe sticky itself may write never ends while sticky waits: not a pipeline's.
        if holding(me, pipe) == Holding::Writes {
            return false;
        }
        processes().is_some_and(|processes| decide(me, &processes, |pid| holding(pid, pipe)))
    }

    /// Whether the pipe is the pipeline's, as the module explains, for process `me` among
    /// `processes`, where `holding` says what a process has of the pipe.
    fn decide(
        me: u32,
        processes: &HashMap<u32, Process>,
        holding: impl Fn(u32) -> Holding,
    ) -> bool {
        let Some(mine) = processes.get(&me).copied() else {
            return false;
        };
        let ancestors = ancestors(me, processes);
        // The shell's job, and the shell's own group, where bash runs `<(...)`.
        let groups = [
            Some(mine.group),
            processes.get(&mine.parent).map(|parent| parent.group),
        ];
        let others = || {
            processes
                .iter()
                .filter(|(pid, process)| **pid != me && !process.zombie)
        };
        let mut hidden_in_group = false;
        let members = others()
            .filter(|(pid, process)| process.session == mine.session && !ancestors.contains(pid));
        for (pid, process) in members {
            match holding(*pid) {
                Holding::Writes => return true,
                Holding::Hidden => hidden_in_group |= groups.contains(&Some(process.group)),
                Holding::Not => {}
            }
        }
        // A writer sticky cannot look into, of the shell's job (`sudo make | sticky`) or the
        // shell's group, is the pipeline's unless a process it can look into, outside the
        // pipeline, holds the pipe: an ancestor (a runner that keeps its step's pipe) or a
        // process of another session.
        hidden_in_group
            && !others()
                .filter(|(pid, process)| process.session != mine.session || ancestors.contains(pid))
                .any(|(pid, _)| holding(*pid) == Holding::Writes)
    }

    /// The identity of `fd` when it is a pipe (or FIFO).
    fn pipe_id(fd: BorrowedFd<'_>) -> Option<PipeId> {
        let metadata = File::from(fd.try_clone_to_owned().ok()?).metadata().ok()?;
        metadata
            .file_type()
            .is_fifo()
            .then(|| (metadata.dev(), metadata.ino()))
    }

    /// Every process `/proc` shows, by pid; `None` when `/proc` cannot be listed.
    fn processes() -> Option<HashMap<u32, Process>> {
        let mut found = HashMap::new();
        for entry in fs::read_dir("/proc").ok()?.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            // A process that ended since the listing is simply not there.
            if let Some(process) = fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| parse_stat(&stat))
            {
                found.insert(pid, process);
            }
        }
        Some(found)
    }

    /// The state, parent, group and session of a `/proc/PID/stat` line: `pid (comm) state ppid
    /// pgrp session ...`, where `comm` may hold spaces and parentheses, so the fields are
    /// counted from the last `)`.
    fn parse_stat(stat: &str) -> Option<Process> {
        let mut fields = stat[stat.rfind(')')? + 1..].split_ascii_whitespace();
        let state = fields.next()?;
        Some(Process {
            zombie: matches!(state, "Z" | "X" | "x"),
            parent: fields.next()?.parse().ok()?,
            group: fields.next()?.parse().ok()?,
            session: fields.next()?.parse().ok()?,
        })
    }

    /// The pids of `pid`'s parent, its parent's parent, and so on.
    fn ancestors(pid: u32, processes: &HashMap<u32, Process>) -> Vec<u32> {
        let mut found = Vec::new();
        let mut at = pid;
        while let Some(process) = processes.get(&at) {
            at = process.parent;
            // pid 0 is the kernel; a loop would mean a reused pid read mid-change.
            if at == 0 || found.contains(&at) {
                break;
            }
            found.push(at);
        }
        found
    }

    /// Whether process `pid` holds `pipe` open for writing, as far as `/proc` shows it: the
    /// descriptors of another user's process (or of one with raised privileges) are hidden.
    fn holding(pid: u32, pipe: PipeId) -> Holding {
        let fds = match fs::read_dir(format!("/proc/{pid}/fd")) {
            Ok(fds) => fds,
            Err(error) if error.kind() == ErrorKind::PermissionDenied => return Holding::Hidden,
            // Ended since the listing.
            Err(_) => return Holding::Not,
        };
        let writes = fds.flatten().any(|fd| {
            let is_pipe = fs::metadata(fd.path()).is_ok_and(|m| (m.dev(), m.ino()) == pipe);
            is_pipe
                && fs::read_to_string(format!(
                    "/proc/{pid}/fdinfo/{}",
                    fd.file_name().to_string_lossy()
                ))
                .is_ok_and(|info| opened_for_writing(&info))
        });
        if writes {
            Holding::Writes
        } else {
            Holding::Not
        }
    }

    /// Whether the `flags:` line (octal) of a `/proc/PID/fdinfo/N` opens for writing:
    /// `O_WRONLY` or `O_RDWR` in its access mode.
    fn opened_for_writing(fdinfo: &str) -> bool {
        fdinfo
            .lines()
            .find_map(|line| line.strip_prefix("flags:"))
            .and_then(|flags| u32::from_str_radix(flags.trim(), 8).ok())
            .is_some_and(|flags| matches!(flags & 0o3, 1 | 2))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn stat_lines_are_read_from_the_last_parenthesis() {
            let process = parse_stat("42 (a (b) c) S 7 9 8 0 -1 4194560 1 0").unwrap();
            assert_eq!((process.parent, process.group, process.session), (7, 9, 8));
            assert!(!process.zombie);
            assert!(parse_stat("42 (x) Z 7 9 8 0").unwrap().zombie);
            assert!(parse_stat("42 (x").is_none());
        }

        /// A shell (10, session and group 10) ran `? | sticky` as a job (group 20): sticky is
        /// 21; 1 is init, in a session of its own.
        fn table(extra: &[(u32, u32, i32, i32, bool)]) -> HashMap<u32, Process> {
            let process = |parent, group, session, zombie| Process {
                parent,
                group,
                session,
                zombie,
            };
            let mut table = HashMap::from([
                (1, process(0, 1, 1, false)),
                (10, process(1, 10, 10, false)),
                (21, process(10, 20, 10, false)),
            ]);
            for &(pid, parent, group, session, zombie) in extra {
                table.insert(pid, process(parent, group, session, zombie));
            }
            table
        }

        /// What [`decide`] says for sticky (21) in `table(extra)`, where `writes` write the pipe
        /// and `hidden` cannot be looked into.
        fn decided(extra: &[(u32, u32, i32, i32, bool)], writes: &[u32], hidden: &[u32]) -> bool {
            decide(21, &table(extra), |pid| {
                if hidden.contains(&pid) {
                    Holding::Hidden
                } else if writes.contains(&pid) {
                    Holding::Writes
                } else {
                    Holding::Not
                }
            })
        }

        #[test]
        fn a_hidden_process_of_the_job_or_the_shells_group_is_the_pipelines_writer() {
            let job = [(20, 10, 20, 10, false)];
            assert!(decided(&job, &[20], &[]), "a writer of the job");
            assert!(decided(&job, &[], &[20]), "sudo of `sudo make | sticky`");
            assert!(!decided(&job, &[], &[]), "nobody writes it");
            let substituted = [(30, 10, 10, 10, false)];
            assert!(
                decided(&substituted, &[], &[30]),
                "sudo of `< <(sudo make)`"
            );
            let elsewhere = [(40, 10, 40, 10, false)];
            assert!(!decided(&elsewhere, &[], &[40]), "a job of its own");
            let other_session = [(50, 1, 50, 50, false)];
            assert!(!decided(&other_session, &[], &[50]), "a daemon");
            let ended = [(20, 10, 20, 10, true)];
            assert!(!decided(&ended, &[], &[20]), "a zombie holds nothing");
        }

        #[test]
        fn a_pipe_held_by_an_ancestor_or_another_session_keeps_its_grace_beside_hidden_ones() {
            let job = [(20, 10, 20, 10, false)];
            assert!(
                !decided(&job, &[10], &[20]),
                "the shell, an ancestor, holds it"
            );
            let daemon = [(20, 10, 20, 10, false), (50, 1, 50, 50, false)];
            assert!(
                !decided(&daemon, &[50], &[20]),
                "a process of another session does"
            );
            assert!(!decided(&[], &[], &[10]), "a hidden ancestor is no writer");
            assert!(!decided(&job, &[21], &[]), "sticky itself is no writer");
        }

        #[test]
        fn the_access_mode_of_fdinfo_says_who_writes() {
            assert!(opened_for_writing("pos:\t0\nflags:\t01\nmnt_id:\t15\n"));
            assert!(opened_for_writing("pos:\t0\nflags:\t02000002\n"));
            assert!(!opened_for_writing("pos:\t0\nflags:\t02000000\n"));
            assert!(!opened_for_writing("pos:\t0\n"));
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn a_shell_reads_its_commands_from_stdin_without_a_script_or_c() {
        use super::script::reads_commands_from_stdin as reads;
        let line = |args: &[&str]| -> Vec<u8> {
            args.iter()
                .flat_map(|arg| [arg.as_bytes(), b"\0"].concat())
                .collect()
        };
        for (args, said) in [
            (&["bash"][..], Some(true)),
            (&["/usr/local/bin/bash"], Some(true)),
            (&["-bash"], Some(true)),
            (&["sh", "-s"], Some(true)),
            (&["bash", "-s", "arg"], Some(true)),
            (&["bash", "-e", "-o", "pipefail"], Some(true)),
            (
                &["bash", "--noprofile", "--norc", "-eo", "pipefail"],
                Some(true),
            ),
            (&["sh", "-c", "sticky x"], Some(false)),
            (&["bash", "-ec", "sticky x"], Some(false)),
            (&["bash", "-e", "/tmp/job.sh"], Some(false)),
            (&["bash", "--", "job.sh"], Some(false)),
            (&["bash", "-"], Some(true)),
            (&["zsh", "-"], Some(true)),
            (&["bash", "-", "job.sh"], Some(false)),
            (&["bash", "--rcfile", "rc"], Some(true)),
            (&["python3", "-"], None),
            (&["sticky"], None),
        ] {
            assert_eq!(reads(&line(args)), said, "{args:?}");
        }
    }

    use std::process::{Command, Stdio};

    use super::*;

    /// Where the `cat` of [`pipe_written_by_cat`] runs, relative to this process.
    #[derive(Clone, Copy)]
    enum Place {
        /// This process's group.
        ThisGroup,
        /// A group of its own in this session, as GNU `timeout` puts its command.
        OwnGroup,
        /// A session of its own (util-linux's `setsid`, which execs it there).
        OwnSession,
    }

    /// Starts `cat` writing into a new pipe (until the test closes cat's own stdin), where
    /// `place` says; returns the pipe's read end and `cat`.
    fn pipe_written_by_cat(place: Place) -> (std::os::fd::OwnedFd, std::process::Child) {
        use std::os::unix::process::CommandExt;
        // Close-on-exec, so no other test's child inherits either end.
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        let mut cat = match place {
            Place::OwnSession => {
                let mut setsid = Command::new("setsid");
                setsid.arg("cat");
                setsid
            }
            Place::ThisGroup | Place::OwnGroup => Command::new("cat"),
        };
        cat.stdin(Stdio::piped()).stdout(Stdio::from(write));
        if matches!(place, Place::OwnGroup) {
            cat.process_group(0);
        }
        // The test's own copy of the write end went into `Stdio` and is closed by now.
        let cat = cat.spawn().expect("start cat");
        if matches!(place, Place::OwnSession) {
            // `setsid` runs before it calls setsid(2): wait until it has.
            let pid = nix::unistd::Pid::from_raw(i32::try_from(cat.id()).unwrap());
            let started = std::time::Instant::now();
            while nix::unistd::getsid(Some(pid)) == nix::unistd::getsid(None) {
                assert!(started.elapsed().as_secs() < 60, "setsid never ran");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        (read, cat)
    }

    #[test]
    fn a_writer_in_this_session_is_the_pipeline_one_in_another_session_is_not() {
        let (read, mut sibling) = pipe_written_by_cat(Place::ThisGroup);
        assert!(
            is_users_pipeline(&read),
            "cat in this process group writes it"
        );
        let (timed, mut timeout) = pipe_written_by_cat(Place::OwnGroup);
        assert!(
            is_users_pipeline(&timed),
            "cat in a group of its own in this session writes it"
        );
        let (other, mut stranger) = pipe_written_by_cat(Place::OwnSession);
        assert!(
            !is_users_pipeline(&other),
            "cat in a session of its own writes it"
        );
        for cat in [&mut sibling, &mut timeout, &mut stranger] {
            drop(cat.stdin.take());
            cat.wait().unwrap();
        }
    }

    #[test]
    fn a_pipe_this_process_writes_itself_or_no_pipe_is_not_a_pipeline() {
        let (read, _write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        assert!(!is_users_pipeline(&read), "written by this process only");
        let file = tempfile::tempfile().unwrap();
        assert!(!is_users_pipeline(&file), "a regular file");
    }
}
