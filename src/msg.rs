//! stderr, written from one place: sticky's notes, warnings and errors.
//!
//! Whether a message is said is decided once, from `--quiet` and `--json` ([`configure`], called
//! by `cmd::run` before any command runs), not at each call site; ripgrep's message macros are
//! the model. Every message starts `sticky: ` and, after an interactive agent left the cursor
//! mid-line, on a fresh line ([`relayed`]). Text that comes from a user, a database or an agent
//! is escaped by the caller ([`escape`]) before it is formatted in.
//!
//! | macro | said when | for |
//! |---|---|---|
//! | [`note!`] | not `--quiet` | what a turn or command did or could not do beside its output |
//! | [`aside!`] | neither `--quiet` nor `--json` | what the text output would have said anyway |
//! | [`hint!`] | not `--quiet`, and stderr is a terminal | a word for the person watching (a wait) |
//! | [`error`] | always | the one error line a failed command ends with |
//!
//! The prompt of a question (`import --replace`'s "Go on? [y/N]") is [`ask`]. A command a
//! message gives the user to paste names its paths as [`shell_word`]s.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);
static JSON: AtomicBool = AtomicBool::new(false);
static MID_LINE: AtomicBool = AtomicBool::new(false);

/// Sets, once for the run, what `--quiet` and `--json` silence.
pub fn configure(quiet: bool, json: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
    JSON.store(json, Ordering::Relaxed);
}

/// Whether notes are said (not `--quiet`).
pub fn notes() -> bool {
    !QUIET.load(Ordering::Relaxed)
}

/// Whether asides are said (neither `--quiet` nor `--json`).
pub fn asides() -> bool {
    notes() && !JSON.load(Ordering::Relaxed)
}

/// Whether hints are said: not `--quiet`, and a person reads stderr.
pub fn hints() -> bool {
    notes() && std::io::stderr().is_terminal()
}

/// Notes the last byte an interactive run relayed to the terminal. An agent interrupted or
/// killed in its UI can leave the cursor mid-line (`> ^C`); unless that byte ended a line,
/// sticky's next message on a terminal starts on a fresh one ([`fresh_line`]).
pub fn relayed(last: Option<u8>) {
    let mid_line = last.is_some_and(|byte| byte != b'\n') && std::io::stderr().is_terminal();
    MID_LINE.store(mid_line, Ordering::Relaxed);
}

/// What starts sticky's next message on stderr: `"\r\n"` once after an interactive agent left
/// the cursor mid-line, else nothing.
pub fn fresh_line() -> &'static str {
    if MID_LINE.swap(false, Ordering::Relaxed) {
        "\r\n"
    } else {
        ""
    }
}

/// `text` as one word a shell reads back as it is, for a command a message gives the user to
/// paste (`chown -R 1000 PATH`), shown as it is (never through [`escape`], which would
/// double its backslashes), with nothing in it for a terminal to act on: as it is when every character is one a shell leaves alone;
/// else in single quotes (a `'` in it as `'"'"'`, with no backslash); else, with a character a terminal must not
/// be sent ([`needs_escape`]: a control character, a backslash, a bidi mark), in bash's and
/// zsh's `$'...'`, that character written as an escape (review 16, L1).
pub fn shell_word(text: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return Cow::Borrowed(text);
    }
    if !text.chars().any(needs_escape) {
        return Cow::Owned(format!("'{}'", text.replace('\'', r#"'"'"'"#)));
    }
    let mut out = String::from("$'");
    for c in text.chars() {
        match c {
            '\\' | '\'' => {
                out.push('\\');
                out.push(c);
            }
            // Its UTF-8 bytes, which bash and zsh read back whatever the locale.
            c if needs_escape(c) => {
                for byte in c.encode_utf8(&mut [0; 4]).bytes() {
                    let _ = write!(out, "\\x{byte:02x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    Cow::Owned(out)
}

/// Whether `c` is not sent to a terminal as it is ([`escape`] writes it as an escape):
/// a backslash (so an escape reads back), a control character, or a mark that reorders text.
pub fn needs_escape(c: char) -> bool {
    c == '\\'
        || c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Text that sticky did not write itself (prompts, thread names, session IDs, models, paths,
/// the agent's words, errors quoting any of these) made safe for a terminal: every control
/// character is shown as a visible escape, so a stored `ESC ] 0 ; title BEL` can neither
/// retitle the terminal nor move the cursor over other lines.
///
/// The escapes are those of `ls --escape` and C: `\n`, `\r`, `\t`, `\e`, `\\` for a
/// backslash (so the form is unambiguous), `\xHH` for the other ASCII controls, and `\u{9b}`
/// for C1 controls and the bidirectional formatting characters (which reorder what is shown
/// around them). Every other character, ordinary Unicode included, is shown as it is. Text
/// without any of these is returned as it is. `--json` never goes through here: it carries
/// the raw text, escaped by JSON's own rules.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x1b' => out.push_str("\\e"),
            c if c.is_ascii_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A path as one word of a command to paste ([`shell_word`]).
pub fn shell_path(path: &Path) -> String {
    shell_word(&path.display().to_string()).into_owned()
}

/// Writes one message: `sticky: ` and the text, on a fresh line. A closed stderr is ignored:
/// a message must never turn a turn that worked into a failure.
pub fn write(text: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr().lock(), "{}sticky: {text}", fresh_line());
}

/// The error line a failed command ends with, said whatever `--quiet` asks.
pub fn error(text: std::fmt::Arguments<'_>) {
    write(text);
}

/// Asks a yes/no question on stderr and reads the answer from stdin (a line); `true` only for
/// a plain yes. The caller decides whether a person is there to ask.
pub fn ask(question: std::fmt::Arguments<'_>) -> std::io::Result<bool> {
    let mut stderr = std::io::stderr().lock();
    write!(stderr, "{}sticky: {question} [y/N] ", fresh_line())?;
    stderr.flush()?;
    drop(stderr);
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}

/// A note: said unless `--quiet`. Takes `format!`'s arguments; the `sticky: ` prefix is added.
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => {
        if $crate::msg::notes() {
            $crate::msg::write(format_args!($($arg)*));
        }
    };
}

/// An aside: said unless `--quiet` or `--json`.
#[macro_export]
macro_rules! aside {
    ($($arg:tt)*) => {
        if $crate::msg::asides() {
            $crate::msg::write(format_args!($($arg)*));
        }
    };
}

/// A hint for a person: said unless `--quiet`, and only when stderr is a terminal.
#[macro_export]
macro_rules! hint {
    ($($arg:tt)*) => {
        if $crate::msg::hints() {
            $crate::msg::write(format_args!($($arg)*));
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_word_is_read_back_by_a_shell_as_it_was() {
        assert_eq!(shell_word("/home/me/p/.sticky"), "/home/me/p/.sticky");
        assert_eq!(shell_word("/tmp/db dir/s.db"), "'/tmp/db dir/s.db'");
        let texts = [
            "",
            "a b",
            "it's",
            "$(x) `y` ~ * ?",
            "a'b'c",
            "line\nbreak",
            "back\\slash",
            "it's\t\x1b[2J",
            "bidi\u{202e}txt",
            "\u{85}next",
        ];
        for text in texts {
            let quoted = shell_word(text);
            // Shown as it is: nothing in it for a terminal to act on.
            assert!(
                !quoted.chars().any(|c| c != '\\' && needs_escape(c)),
                "{quoted:?}"
            );
            let echoed = std::process::Command::new("bash")
                .args(["-c", &format!("printf %s {quoted}")])
                .output()
                .expect("run sh");
            assert_eq!(String::from_utf8_lossy(&echoed.stdout), text, "{quoted}");
        }
    }

    #[test]
    fn fresh_line_is_given_once_after_a_run_left_the_cursor_mid_line() {
        MID_LINE.store(true, Ordering::Relaxed);
        assert_eq!(fresh_line(), "\r\n");
        assert_eq!(fresh_line(), "");
    }
}
