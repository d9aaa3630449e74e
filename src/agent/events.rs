//! What adapters read from an agent's headless output: events, and the lines they come in.
//!
//! Headless agents run on a pseudo-terminal, so their JSON lines can arrive with terminal
//! control sequences around them (Claude Code writes `ESC[?25h` after its last line), and with
//! `\r\n` endings from an agent that sets its terminal up itself. [`LineSplitter`] turns the
//! byte stream into clean lines; nothing of the control output ever reaches sticky's stdout.

use std::borrow::Cow;

/// Something the agent reported during a turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The session ID the agent is running on.
    Session(String),
    /// The model the agent is using.
    Model(String),
    /// What the agent is doing now (a tool it runs), for the progress line.
    Activity(String),
    /// Text of a whole assistant message; the messages of a turn are joined by newlines.
    Text(String),
    /// A piece of an assistant message streamed in parts (Gemini's `"delta":true`); pieces are
    /// joined as they are, without a separator.
    TextDelta(String),
    /// Cost and tokens of one step of the turn, for agents that report them per step (opencode's
    /// `step_finish`); a turn's usage is the sum of these and of its result's.
    Usage(Usage),
    /// The turn's end as the agent reports it.
    Result {
        /// The final answer.
        text: Option<String>,
        /// Whether the agent considers the turn failed.
        is_error: bool,
        /// Cost and tokens, when reported.
        usage: Usage,
    },
}

/// Cost and token counts of a turn.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// Cost in US dollars.
    pub cost_usd: Option<f64>,
    /// Input tokens.
    pub input_tokens: Option<i64>,
    /// Output tokens.
    pub output_tokens: Option<i64>,
}

impl Event {
    /// The turn's end, reported as a success: its answer when the event carries it, its cost
    /// and tokens.
    pub fn answered(text: Option<String>, usage: Usage) -> Self {
        Self::Result {
            text,
            is_error: false,
            usage,
        }
    }

    /// The turn's end, reported as a failure: the agent's message when it gave one, and no
    /// cost or tokens (an agent that fails a turn this way reports none).
    pub fn failed(text: Option<String>) -> Self {
        Self::Result {
            text,
            is_error: true,
            usage: Usage::default(),
        }
    }
}

impl Usage {
    /// Adds `other` to these counts; a count known on either side is known in the sum.
    pub fn add(&mut self, other: Usage) {
        self.cost_usd = sum(self.cost_usd, other.cost_usd);
        self.input_tokens = sum(self.input_tokens, other.input_tokens);
        self.output_tokens = sum(self.output_tokens, other.output_tokens);
    }
}

/// The sum of two figures, each reported or not: known when either is.
pub fn sum<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

/// Lines longer than this are cut: a hostile or broken agent must not exhaust memory. Real
/// events (a whole tool result in one JSON line) stay far below it.
const MAX_LINE: usize = 32 * 1024 * 1024;

/// Splits a terminal byte stream into lines without line endings or control sequences.
#[derive(Debug, Default)]
pub struct LineSplitter {
    pending: Vec<u8>,
}

impl LineSplitter {
    /// Feeds a chunk of output; calls `line` with every complete line. The lines are borrowed:
    /// most are parsed and dropped, and a copy of each was an allocation per line.
    pub fn push(&mut self, chunk: &[u8], line: &mut dyn FnMut(&str)) {
        let mut rest = chunk;
        while let Some(end) = newline(rest) {
            if self.pending.is_empty() {
                // The whole line is in this chunk: no copy into `pending` first.
                line(&clean(&rest[..end.min(MAX_LINE)]));
            } else {
                self.append(&rest[..end]);
                self.emit(line);
            }
            rest = &rest[end + 1..];
        }
        self.append(rest);
    }

    /// Ends the stream; calls `line` with a last line that had no line ending.
    pub fn finish(&mut self, line: &mut dyn FnMut(&str)) {
        if !self.pending.is_empty() {
            self.emit(line);
        }
    }

    fn append(&mut self, bytes: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.pending.len());
        self.pending
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn emit(&mut self, line: &mut dyn FnMut(&str)) {
        let text = clean(&self.pending).into_owned();
        self.pending.clear();
        line(&text);
    }
}

/// Where the first line feed in `bytes` is.
///
/// On x86-64, `memchr::memchr` picks its AVX2 or SSE2 search by asking the CPU at its first
/// call, and on a virtual machine each of the `cpuid` instructions that takes traps to the
/// hypervisor: about 40 us of every turn on the benchmark's VM (BENCHMARKS.md). SSE2 is part of
/// x86-64 itself, so its search is known to work without asking; PTY output arrives in chunks
/// of a few KiB, where it is as fast. Elsewhere memchr asks nothing at run time.
fn newline(bytes: &[u8]) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if let Some(search) = memchr::arch::x86_64::sse2::memchr::One::new(b'\n') {
        return search.find(bytes);
    }
    memchr::memchr(b'\n', bytes)
}

/// A line's bytes as text without control sequences. Most lines (JSON events, plain output)
/// hold nothing to strip, and copying them char by char through [`strip_controls`] was most of
/// the time a headless turn spent per byte, so that runs only where a byte says it could matter.
#[allow(
    clippy::needless_bitwise_bool,
    reason = "no short-circuit, so the compiler vectorizes the scan"
)]
fn clean(bytes: &[u8]) -> Cow<'_, str> {
    // Every control character [`strip_controls`] removes is a C0 byte other than tab (ESC
    // among them), DEL, or a C1 character, whose UTF-8 form starts with 0xC2; a 0xC2 that
    // starts another character only costs the slow path. A fold of `|` rather than `any`:
    // without an early exit the compiler scans many bytes at a time.
    let maybe_controls = bytes.iter().fold(false, |found, &byte| {
        found | ((byte < 0x20) & (byte != b'\t')) | (byte == 0x7f) | (byte == 0xc2)
    });
    // `from_utf8` checks ASCII a word at a time; the lossy decoder goes char by char.
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    };
    if maybe_controls {
        Cow::Owned(strip_controls(&text))
    } else {
        text
    }
}

/// The last `count` lines of text in a terminal's output `bytes` (an interactive agent's last
/// screenful), each without control sequences, blank ones left out; one per line.
pub fn last_lines(bytes: &[u8], count: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<String> = text
        .split('\n')
        .rev()
        .map(|line| strip_controls(line).trim().to_owned())
        .filter(|line| !line.is_empty())
        .take(count)
        .collect();
    lines.reverse();
    lines.join("\n")
}

/// Removes terminal control sequences (CSI, OSC, DCS and other ESC sequences) and control
/// characters other than tab from one line. A JSON text never holds a raw control character
/// (they must be escaped), so this cannot change a valid event.
pub fn strip_controls(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates, then one final byte in @..~
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC, DCS, SOS, PM, APC: up to BEL or ST (ESC \)
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                // Two- or three-byte sequences such as ESC ( B or ESC =
                Some('(' | ')' | '*' | '+' | '#' | '%') => {
                    chars.next();
                }
                Some(_) | None => {}
            },
            '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]]) -> Vec<String> {
        let mut splitter = LineSplitter::default();
        let mut out = Vec::new();
        for chunk in chunks {
            splitter.push(chunk, &mut |line| out.push(line.to_owned()));
        }
        splitter.finish(&mut |line| out.push(line.to_owned()));
        out
    }

    #[test]
    fn usage_adds_up_what_is_known() {
        let mut total = Usage::default();
        total.add(Usage {
            cost_usd: None,
            input_tokens: Some(10),
            output_tokens: Some(2),
        });
        total.add(Usage {
            cost_usd: Some(0.5),
            input_tokens: Some(5),
            output_tokens: None,
        });
        assert_eq!(
            total,
            Usage {
                cost_usd: Some(0.5),
                input_tokens: Some(15),
                output_tokens: Some(2),
            }
        );
    }

    #[test]
    fn terminal_line_endings_and_controls_are_removed() {
        let got = lines(&[
            b"{\"a\":1}\r\n\x1b[?25h",
            b"{\"b\"",
            b":2}\r\n\x1b]0;title\x07tail",
        ]);
        assert_eq!(got, ["{\"a\":1}", "{\"b\":2}", "tail"]);
    }

    #[test]
    fn lines_without_controls_skip_stripping_and_lines_with_them_do_not() {
        let cases: [&[u8]; 7] = [
            b"{\"type\":\"result\",\"result\":\"ok\"}",
            "plain \u{a3}5 and caf\u{e9}, tab\there".as_bytes(),
            b"\x1b[31mred\x1b[0m",
            "C1 \u{9b} and DEL \u{7f} and NUL \u{0}".as_bytes(),
            b"invalid \xff\xfe UTF-8",
            b"bell\x07",
            b"",
        ];
        for case in cases {
            let mut chunk = case.to_vec();
            chunk.push(b'\n');
            let expected = strip_controls(&String::from_utf8_lossy(case));
            // Whole in one chunk (no copy), and split so the line is assembled in `pending`.
            assert_eq!(
                lines(&[&chunk]),
                std::slice::from_ref(&expected),
                "{case:?}"
            );
            let (head, tail) = chunk.split_at(case.len() / 2);
            assert_eq!(lines(&[head, tail]), [expected], "{case:?} split");
        }
    }

    #[test]
    fn a_line_split_inside_a_multibyte_character_survives() {
        let text = "h\u{e9}llo\n".as_bytes();
        assert_eq!(lines(&[&text[..2], &text[2..]]), ["h\u{e9}llo"]);
    }

    #[test]
    fn binary_garbage_gives_lines_not_panics() {
        let garbage: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        let got = lines(&[&garbage]);
        assert!(!got.is_empty());
        assert!(
            got.iter()
                .all(|line| !line.chars().any(|c| c.is_control() && c != '\t'))
        );
    }

    #[test]
    fn the_last_lines_of_a_terminal_are_its_text_without_controls_or_blanks() {
        let screen = b"\x1b[2J\x1b[Hbanner\r\n> typed\r\n\r\n\x1b[31mNo conversation found \
                       with session ID: 4f1c\x1b[0m\r\n   \r\n";
        assert_eq!(
            last_lines(screen, 2),
            "> typed\nNo conversation found with session ID: 4f1c"
        );
        assert_eq!(last_lines(screen, 8).lines().count(), 3);
        assert_eq!(last_lines(b"", 8), "");
        assert_eq!(last_lines(b"no line feed", 1), "no line feed");
    }

    #[test]
    fn strip_keeps_json_intact() {
        let json = r#"{"text":"tab\there \u001b[31m kept","n":1}"#;
        assert_eq!(strip_controls(json), json);
        assert_eq!(
            strip_controls("\x1b[1;31mred\x1b[0m \x1bP+q\x1b\\ok"),
            "red ok"
        );
    }
}
