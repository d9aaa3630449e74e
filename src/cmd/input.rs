//! The prompt of a turn: the words on the command line, plus what is piped on stdin.
//!
//! Piped input is context, as in the agents' own print modes: `git diff | sticky "review
//! this"` sends the prompt followed by the diff. Without prompt words, piped input is the prompt.
//! Bytes pass through unchanged (non-UTF-8 included); nothing here goes through a shell.

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::AsFd;
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use std::os::unix::ffi::OsStrExt;

use crate::config::StdinMode;
use crate::exit::StickyError;
use crate::pipeline;

/// A prompt ready to send, and what to record of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// The bytes the agent gets.
    pub text: Vec<u8>,
    /// What the turn's row records: the prompt words, and the size of any piped context
    /// rather than the context itself (a 1 MiB log on every turn would bloat the store); a
    /// prompt made by stdin alone, its first [`crate::store::PROMPT_RECORD`] bytes.
    pub summary: String,
}

/// Builds the prompt from the command line's words and, when stdin is not a terminal, from
/// `stdin` (read to its end). `Ok(None)` when there is neither.
pub fn gather(
    words: &[OsString],
    stdin: Option<&mut dyn Read>,
) -> Result<Option<Prompt>, StickyError> {
    let mut text = join(words);
    if !words.is_empty() && text.iter().all(u8::is_ascii_whitespace) {
        return Err(StickyError::Usage(
            "the prompt is empty; give it some words, or leave it out for the agent's own UI"
                .into(),
        ));
    }
    let mut summary = String::from_utf8_lossy(&text).into_owned();
    let context = match stdin {
        Some(stdin) => read_capped(stdin, STDIN_CAP)?,
        None => Vec::new(),
    };
    if context.iter().all(u8::is_ascii_whitespace) {
        return Ok((!text.is_empty()).then_some(Prompt { text, summary }));
    }
    if text.is_empty() {
        let piped = String::from_utf8_lossy(&context);
        summary = crate::store::cut_prompt(&piped, crate::store::PROMPT_RECORD).into_owned();
        text = context;
    } else {
        summary.push_str(&format!("\n\n[{} bytes from stdin]", context.len()));
        text.extend_from_slice(b"\n\n");
        text.extend_from_slice(&context);
    }
    Ok(Some(Prompt { text, summary }))
}

/// The most piped input a turn takes: several times the largest context window of any agent
/// (about a million tokens, some 4 MiB of text), so no real input is cut, while `yes | sticky
/// x` stops here instead of taking the machine's memory.
pub const STDIN_CAP: u64 = 32 << 20;

/// Reads `stdin` to its end, refusing more than `cap` bytes: at most `cap + 1` are read, and
/// the refusal says how much was too much and how to send less.
fn read_capped(stdin: &mut dyn Read, cap: u64) -> Result<Vec<u8>, StickyError> {
    let mut context = Vec::new();
    stdin
        .take(cap + 1)
        .read_to_end(&mut context)
        .map_err(|error| StickyError::Usage(format!("could not read stdin: {error}")))?;
    if context.len() as u64 > cap {
        return Err(StickyError::Usage(format!(
            "more than {} MiB on stdin, more than any agent's context holds; send a part \
             (`head -c 1000000 build.log | sticky ...`, `tail -n 500`), or write it to a file \
             and name the file in the prompt for the agent to read (nothing was sent)",
            cap >> 20
        )));
    }
    Ok(context)
}

/// How long piped input from elsewhere may keep silent before a turn with prompt words goes on
/// without it (as Claude Code's own print mode waits).
pub const STDIN_GRACE: Duration = Duration::from_secs(3);

/// How long stdin may keep silent before a terminal is told that sticky waits for it: long
/// enough that `git diff | sticky "review"` says nothing, short enough to explain a pause.
pub const NOTICE_AFTER: Duration = Duration::from_secs(1);

/// How long a turn waits for optional piped input that has not arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Until it arrives or ends, however late: the user's own pipeline, or `--stdin wait`.
    Forever,
    /// This long, then on without it: a pipe from elsewhere that may never be written or closed.
    Grace(Duration),
}

/// What the user is told while optional piped input keeps silent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// Nothing has arrived after [`NOTICE_AFTER`]; said once, on a terminal only.
    Waiting(Wait),
    /// Nothing arrived within the grace period: the turn goes on without stdin.
    GaveUp(Duration),
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Waiting(Wait::Forever) => write!(
                f,
                "waiting for stdin, where nothing has arrived yet (--stdin skip goes on \
                 without it)"
            ),
            Self::Waiting(Wait::Grace(grace)) => write!(
                f,
                "waiting up to {}s for stdin, where nothing has arrived yet (--stdin skip \
                 goes on without it; --stdin wait waits however long)",
                grace.as_secs()
            ),
            Self::GaveUp(grace) => write!(
                f,
                "nothing arrived on stdin within {}s, and sticky cannot tell it is this \
                 command line's own pipe; going on without it (--stdin wait waits for it however \
                 late; --stdin skip or </dev/null skips this wait)",
                grace.as_secs()
            ),
        }
    }
}

/// Whether a turn reads `stdin` (not a terminal), as `mode` says: `skip` never, `wait`
/// always. Under `auto` input is read when it arrives, or ends, within the wait: forever when
/// the pipe is the user's own pipeline ([`pipeline::is_users_pipeline`]), else `grace`. Some CI
/// runners and process managers hand a child a pipe that nobody ever writes or closes; reading
/// it to its end would hang the turn forever, so silence that long from elsewhere means "no
/// context", or, where stdin is the prompt (`optional` is false), no prompt, which the caller
/// refuses rather than hang (on Linux, where the user's own pipeline can be told; elsewhere
/// such a prompt is waited for). A producer that has started writing is read to its end, however
/// slow. `note` hears what the user should be told.
pub fn should_read(
    stdin: &impl AsFd,
    mode: StdinMode,
    optional: bool,
    grace: Duration,
    note: &mut dyn FnMut(Note),
) -> bool {
    let wait = match mode {
        StdinMode::Skip => return false,
        // Not given, but inherited: the rest of the script a shell reads from this stdin.
        StdinMode::Auto if pipeline::is_shells_script(stdin) => return false,
        // Where no pipe can be told the user's own, a prompt that comes slowly is waited for.
        StdinMode::Auto if !optional && !pipeline::TELLS_WRITERS => return true,
        StdinMode::Wait => Wait::Forever,
        StdinMode::Auto => {
            // The common case, `git diff | sticky "review"`, has its input (or its end) at
            // once and never looks at who writes the pipe.
            if has_input(stdin, Some(Duration::ZERO)) {
                return true;
            }
            if pipeline::is_users_pipeline(stdin) {
                return wait_for_pipeline(stdin, optional, grace, note);
            }
            Wait::Grace(grace)
        }
    };
    let first = match wait {
        Wait::Forever => NOTICE_AFTER,
        Wait::Grace(grace) => NOTICE_AFTER.min(grace),
    };
    if has_input(stdin, Some(first)) {
        return true;
    }
    if optional {
        note(Note::Waiting(wait));
    }
    match wait {
        // The read that follows waits for the input or its end.
        Wait::Forever => true,
        Wait::Grace(grace) => {
            let arrived = has_input(stdin, Some(grace.saturating_sub(first)));
            if !arrived {
                note(Note::GaveUp(grace));
            }
            arrived
        }
    }
}

/// Waits for the input of a pipe the user's own pipeline writes, however late it comes, for as
/// long as a writer of that pipeline holds it: looked at again every [`NOTICE_AFTER`], so a
/// writer that was only passing (a process forked by another, between its fork and its exec)
/// leaves the pipe to the grace of a pipe from elsewhere, which a turn never waits on forever.
fn wait_for_pipeline(
    stdin: &impl AsFd,
    optional: bool,
    grace: Duration,
    note: &mut dyn FnMut(Note),
) -> bool {
    let mut told = false;
    loop {
        if has_input(stdin, Some(NOTICE_AFTER)) {
            return true;
        }
        if !pipeline::is_users_pipeline(stdin) {
            let arrived = has_input(stdin, Some(grace));
            if !arrived {
                note(Note::GaveUp(grace));
            }
            return arrived;
        }
        if optional && !told {
            note(Note::Waiting(Wait::Forever));
            told = true;
        }
    }
}

/// Whether `stdin`, which the turn skips (`--stdin skip` or its setting), holds input it drops,
/// or will: a file with bytes left to read, a pipe with bytes in it, or an open pipe the user's
/// own pipeline writes (`slow | sticky --stdin skip ...`). Looked at without reading a byte
/// (a `while read` loop's next lines stay the loop's) and without waiting: a pipe nobody writes
/// or closes, or one at its end, holds nothing. A terminal, `/dev/null`, a socket: nothing.
pub fn holds_skipped_input(stdin: &impl AsFd) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let Ok(metadata) = stdin
        .as_fd()
        .try_clone_to_owned()
        .and_then(|fd| std::fs::File::from(fd).metadata())
    else {
        return false;
    };
    if metadata.is_file() {
        let position = nix::unistd::lseek(stdin.as_fd(), 0, nix::unistd::Whence::SeekCur);
        return position.is_ok_and(|at| u64::try_from(at).is_ok_and(|at| at < metadata.len()));
    }
    if !metadata.file_type().is_fifo() {
        return false;
    }
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    let ready = loop {
        match poll(&mut fds, PollTimeout::ZERO) {
            Err(nix::errno::Errno::EINTR) => {}
            Ok(ready) => break ready,
            Err(_) => return false,
        }
    };
    let revents = fds[0].revents().unwrap_or(PollFlags::empty());
    if ready == 0 {
        // Open, and nothing in it yet: the user's pipeline will write it.
        return pipeline::is_users_pipeline(stdin);
    }
    // Linux says POLLIN on a pipe only with bytes in it; macOS says it at the pipe's end too,
    // where the size `fstat(2)` gives a pipe is the bytes in it.
    revents.contains(PollFlags::POLLIN)
        && (cfg!(target_os = "linux")
            || !revents.contains(PollFlags::POLLHUP)
            || metadata.len() > 0)
}

/// What a turn that skips stdin by a setting says when stdin holds input (see
/// [`holds_skipped_input`]): which setting skips it (`origin`: `STICKY_STDIN` or the
/// configuration file) and how to send it.
pub fn skipped_note(origin: &str) -> String {
    format!(
        "stdin holds input that this turn does not send: stdin is skipped (skip, from \
         {origin}); --stdin wait sends it after the prompt"
    )
}

/// Whether `stdin` has input or its end within `timeout` (`None`: however long it takes).
fn has_input(stdin: &impl AsFd, timeout: Option<Duration>) -> bool {
    let timeout = timeout.map_or(PollTimeout::NONE, |timeout| {
        PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX)
    });
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    loop {
        match poll(&mut fds, timeout) {
            Ok(0) => return false,
            Err(nix::errno::Errno::EINTR) => {}
            // Ready, or not pollable (a regular file on some systems): reading ends by itself.
            Ok(_) | Err(_) => return true,
        }
    }
}

/// The words joined with single spaces, as a shell user expects from `sticky fix the tests`.
fn join(words: &[OsString]) -> Vec<u8> {
    let mut text = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            text.push(b' ');
        }
        text.extend_from_slice(word.as_bytes());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    fn gather_with(list: &[&str], piped: Option<&[u8]>) -> Option<Prompt> {
        let mut input = piped.unwrap_or_default();
        let stdin: Option<&mut dyn Read> = piped.map(|_| &mut input as &mut dyn Read);
        gather(&words(list), stdin).unwrap()
    }

    #[test]
    fn words_are_joined_literally() {
        let prompt = gather_with(&["fix", "$(rm -rf /)", "`x`"], None).unwrap();
        assert_eq!(prompt.text, b"fix $(rm -rf /) `x`");
        assert_eq!(prompt.summary, "fix $(rm -rf /) `x`");
    }

    #[test]
    fn piped_input_is_context_after_the_prompt() {
        let prompt = gather_with(&["review this"], Some(b"diff --git a b\n")).unwrap();
        assert_eq!(prompt.text, b"review this\n\ndiff --git a b\n");
        assert_eq!(prompt.summary, "review this\n\n[15 bytes from stdin]");
    }

    #[test]
    fn piped_input_alone_is_the_prompt() {
        let prompt = gather_with(&[], Some(b"explain\xff")).unwrap();
        assert_eq!(prompt.text, b"explain\xff");
    }

    #[test]
    fn nothing_at_all_is_no_prompt() {
        assert_eq!(gather_with(&[], None), None);
        assert_eq!(gather_with(&[], Some(b" \n")), None);
        assert_eq!(gather_with(&["hi"], Some(b"")).unwrap().text, b"hi");
    }

    #[test]
    fn silent_pipes_have_no_input_closed_or_written_ones_do() {
        use std::io::Write;
        let (read, write) = nix::unistd::pipe().unwrap();
        let soon = Some(Duration::from_millis(50));
        assert!(!has_input(&read, soon), "silent and open");
        let mut writer = std::fs::File::from(write);
        writer.write_all(b"x").unwrap();
        assert!(has_input(&read, soon), "written");
        assert!(has_input(&read, None), "written, however long it takes");
        let (read, write) = nix::unistd::pipe().unwrap();
        drop(write);
        assert!(has_input(&read, soon), "closed: its end is there");
    }

    /// What [`should_read`] decides for a pipe this process holds open (silent, or written
    /// with `piped`), and what it notes.
    fn decide(mode: StdinMode, optional: bool, piped: Option<&[u8]>) -> (bool, Vec<Note>) {
        use std::io::Write;
        let (read, write) = nix::unistd::pipe().unwrap();
        let mut writer = std::fs::File::from(write);
        if let Some(bytes) = piped {
            writer.write_all(bytes).unwrap();
        }
        let mut notes = Vec::new();
        let grace = Duration::from_millis(20);
        let read_it = should_read(&read, mode, optional, grace, &mut |note| notes.push(note));
        (read_it, notes)
    }

    #[test]
    fn skip_never_reads_wait_always_does() {
        assert_eq!(decide(StdinMode::Skip, true, Some(b"x")), (false, vec![]));
        assert_eq!(decide(StdinMode::Skip, false, Some(b"x")), (false, vec![]));
        assert_eq!(decide(StdinMode::Wait, true, Some(b"x")), (true, vec![]));
        // Silent: a terminal hears that sticky waits, and the read that follows waits.
        assert_eq!(
            decide(StdinMode::Wait, true, None),
            (true, vec![Note::Waiting(Wait::Forever)])
        );
    }

    #[test]
    fn auto_reads_what_arrives_and_gives_a_silent_pipe_from_elsewhere_its_grace() {
        assert_eq!(decide(StdinMode::Auto, true, Some(b"x")), (true, vec![]));
        // This process writes the pipe itself: no pipeline of the user's.
        let grace = Duration::from_millis(20);
        assert_eq!(
            decide(StdinMode::Auto, true, None),
            (
                false,
                vec![Note::Waiting(Wait::Grace(grace)), Note::GaveUp(grace)]
            )
        );
        // Without prompt words stdin is the prompt: read when it comes, and a silent pipe
        // from elsewhere gives up after the grace too (the caller refuses the missing prompt),
        // said to nobody while it waits.
        assert!(decide(StdinMode::Auto, false, Some(b"x")).0);
        let gives_up = (false, vec![Note::GaveUp(grace)]);
        let waits = (true, vec![]);
        assert_eq!(
            decide(StdinMode::Auto, false, None),
            if crate::pipeline::TELLS_WRITERS {
                gives_up
            } else {
                waits
            }
        );
    }

    #[test]
    fn notes_name_the_way_out() {
        let grace = Duration::from_secs(3);
        assert!(
            Note::Waiting(Wait::Forever)
                .to_string()
                .contains("--stdin skip")
        );
        let waiting = Note::Waiting(Wait::Grace(grace)).to_string();
        assert!(
            waiting.contains("up to 3s") && waiting.contains("--stdin wait"),
            "{waiting}"
        );
        let gave_up = Note::GaveUp(grace).to_string();
        assert!(
            gave_up.contains("nothing arrived on stdin within 3s")
                && gave_up.contains("--stdin wait"),
            "{gave_up}"
        );
    }

    /// A pipe no other test's child inherits: close-on-exec from the start on Linux
    /// (pipe2(2)), made so at once elsewhere.
    fn private_pipe() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
        #[cfg(target_os = "linux")]
        {
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap()
        }
        #[cfg(not(target_os = "linux"))]
        {
            use nix::fcntl::{FcntlArg, FdFlag, fcntl};
            let (read, write) = nix::unistd::pipe().unwrap();
            for end in [&read, &write] {
                fcntl(end, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).unwrap();
            }
            (read, write)
        }
    }

    #[test]
    fn skipped_input_is_seen_without_reading_it() {
        use std::io::{Seek, Write};
        let (read, write) = private_pipe();
        let mut writer = std::fs::File::from(write);
        assert!(
            !holds_skipped_input(&read),
            "open, silent, written by no pipeline"
        );
        writer.write_all(b"line two\n").unwrap();
        assert!(holds_skipped_input(&read), "bytes in it");
        assert!(
            holds_skipped_input(&read),
            "and still there: nothing was read"
        );
        drop(writer);
        assert!(holds_skipped_input(&read), "closed with bytes in it");
        let (read, write) = private_pipe();
        drop(write);
        assert!(!holds_skipped_input(&read), "closed and empty");

        let mut file = tempfile::tempfile().unwrap();
        assert!(!holds_skipped_input(&file), "an empty file");
        file.write_all(b"one\ntwo\n").unwrap();
        file.rewind().unwrap();
        assert!(holds_skipped_input(&file), "a file to read");
        file.seek(std::io::SeekFrom::End(0)).unwrap();
        assert!(!holds_skipped_input(&file), "a file read to its end");
        let null = std::fs::File::open("/dev/null").unwrap();
        assert!(!holds_skipped_input(&null), "/dev/null");
    }

    /// A pipe the user's pipeline writes holds input to come, before any of it arrives.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_pipe_of_the_users_pipeline_holds_input_to_come() {
        use std::process::{Command, Stdio};
        let (read, write) = private_pipe();
        let mut cat = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::from(write))
            .spawn()
            .expect("start cat");
        assert!(
            holds_skipped_input(&read),
            "cat, of this session, writes it"
        );
        drop(cat.stdin.take());
        cat.wait().unwrap();
        assert!(!holds_skipped_input(&read), "cat ended, writing nothing");
    }

    #[test]
    fn the_skip_note_names_the_setting_and_the_way_to_send_it() {
        let variable = skipped_note("STICKY_STDIN");
        assert!(
            variable.contains("(skip, from STICKY_STDIN)")
                && variable.contains("--stdin wait sends it"),
            "{variable}"
        );
    }

    #[test]
    fn stdin_is_read_up_to_its_cap_and_no_further() {
        let mut exact: &[u8] = b"12345678";
        assert_eq!(read_capped(&mut exact, 8).unwrap(), b"12345678");
        let mut endless = std::io::repeat(b'y');
        let Err(StickyError::Usage(message)) = read_capped(&mut endless, 1 << 20) else {
            panic!("endless input is refused");
        };
        assert!(
            message.contains("more than 1 MiB on stdin") && message.contains("head -c"),
            "{message}"
        );
    }

    #[test]
    fn an_empty_prompt_is_a_usage_error() {
        assert!(matches!(
            gather(&words(&[" "]), None),
            Err(StickyError::Usage(_))
        ));
    }
}
