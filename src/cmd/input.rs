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

use crate::exit::StickyError;

/// A prompt ready to send, and what to record of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// The bytes the agent gets.
    pub text: Vec<u8>,
    /// What the turn's row records: the prompt words, and the size of any piped context
    /// rather than the context itself (a 1 MiB log on every turn would bloat the store).
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
    let mut context = Vec::new();
    if let Some(stdin) = stdin {
        stdin
            .read_to_end(&mut context)
            .map_err(|error| StickyError::Usage(format!("could not read stdin: {error}")))?;
    }
    if context.iter().all(u8::is_ascii_whitespace) {
        return Ok((!text.is_empty()).then_some(Prompt { text, summary }));
    }
    if text.is_empty() {
        summary = String::from_utf8_lossy(&context).into_owned();
        text = context;
    } else {
        summary.push_str(&format!("\n\n[{} bytes from stdin]", context.len()));
        text.extend_from_slice(b"\n\n");
        text.extend_from_slice(&context);
    }
    Ok(Some(Prompt { text, summary }))
}

/// How long piped input may keep silent before a turn with prompt words goes on without it.
pub const STDIN_GRACE: Duration = Duration::from_secs(3);

/// Whether `stdin` (not a terminal) has input or its end within `grace`. Some CI runners and
/// process managers hand a child a pipe that nobody ever writes or closes; reading it to its end
/// would hang the turn forever, so silence this long means "no context" (as Claude Code's own
/// print mode decides). A producer that has started writing is read to its end, however slow.
pub fn has_input(stdin: &impl AsFd, grace: Duration) -> bool {
    let timeout = PollTimeout::try_from(grace).unwrap_or(PollTimeout::MAX);
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
        assert!(
            !has_input(&read, Duration::from_millis(50)),
            "silent and open"
        );
        let mut writer = std::fs::File::from(write);
        writer.write_all(b"x").unwrap();
        assert!(has_input(&read, Duration::from_millis(50)), "written");
        let (read, write) = nix::unistd::pipe().unwrap();
        drop(write);
        assert!(
            has_input(&read, Duration::from_millis(50)),
            "closed: its end is there"
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
