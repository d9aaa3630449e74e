//! Rewriting the fields that name a session's old directory, as the bytes stream through: a
//! [`Rewriter`] wraps a writer and replaces each [`Rewrite`]'s old value by its new one, leaving
//! every other byte as it was (no JSON is parsed or re-serialised, so key order, spacing and
//! numbers stay exactly the agent's). Work is done line by line: a JSON string never holds a raw
//! newline, so no field is split between two chunks.
//!
//! A line is held whole until its newline comes, so a line is capped ([`MAX_LINE`]): a bundle
//! whose transcript is one line of 256 MiB compresses to almost nothing, and must not make
//! import hold it all (issue 23). A longer line fails the write with [`LineTooLong`].

use std::io::{self, Write};

use memchr::memmem;

use crate::agent::relocation::Rewrite;

/// The longest line a [`Rewriter`] holds to rewrite: far above any agent's line (a transcript
/// line with a few pasted images is a few MiB), far below what would strain a machine.
pub const MAX_LINE: usize = 64 << 20;

/// A line longer than a [`Rewriter`] holds; the error inside the `io::Error` its write returns.
#[derive(Debug)]
pub struct LineTooLong {
    /// The most a line may hold.
    pub limit: usize,
}

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "it has a line of more than {} MiB, longer than sticky holds in memory to rewrite \
             the directory it names",
            self.limit >> 20
        )
    }
}

impl std::error::Error for LineTooLong {}

/// A writer that rewrites the fields of `rewrites` in what passes through it.
pub struct Rewriter<W: Write> {
    inner: W,
    finders: Vec<(memmem::Finder<'static>, Rewrite)>,
    /// The bytes after the last newline written so far.
    pending: Vec<u8>,
    /// The most `pending` may hold.
    max_line: usize,
}

impl<W: Write> Rewriter<W> {
    /// Rewrites into `inner`; with no rewrites it only passes the bytes on.
    pub fn new(inner: W, rewrites: Vec<Rewrite>) -> Self {
        let finders = rewrites
            .into_iter()
            .filter(|rewrite| rewrite.old != rewrite.new && !rewrite.old.is_empty())
            .map(|rewrite| {
                let needle = [rewrite.before.as_slice(), rewrite.old.as_slice()].concat();
                (memmem::Finder::new(&needle).into_owned(), rewrite)
            })
            .collect();
        Self {
            inner,
            finders,
            pending: Vec::new(),
            max_line: MAX_LINE,
        }
    }

    /// Caps a line at `max_line` bytes instead of [`MAX_LINE`].
    #[must_use]
    pub fn max_line(mut self, max_line: usize) -> Self {
        self.max_line = max_line;
        self
    }

    /// Writes what is left and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        let rest = std::mem::take(&mut self.pending);
        self.emit(&rest)?;
        Ok(self.inner)
    }

    /// Writes whole lines `chunk`, rewritten.
    fn emit(&mut self, chunk: &[u8]) -> io::Result<()> {
        if self.finders.is_empty() {
            return self.inner.write_all(chunk);
        }
        let mut hits: Vec<(usize, usize)> = Vec::new();
        for (index, (finder, rewrite)) in self.finders.iter().enumerate() {
            for at in finder.find_iter(chunk) {
                let value = at + rewrite.before.len();
                let after = chunk.get(value + rewrite.old.len()).copied();
                let ends = after == Some(rewrite.end) || (rewrite.under && after == Some(b'/'));
                let starts = !rewrite.line_start || at == 0 || chunk[at - 1] == b'\n';
                if ends && starts && in_marked_line(chunk, at, rewrite.in_lines_with.as_deref()) {
                    hits.push((value, index));
                }
            }
        }
        hits.sort_unstable();
        let mut from = 0;
        for (value, index) in hits {
            let rewrite = &self.finders[index].1;
            if value < from {
                continue;
            }
            self.inner.write_all(&chunk[from..value])?;
            self.inner.write_all(&rewrite.new)?;
            from = value + rewrite.old.len();
        }
        self.inner.write_all(&chunk[from..])
    }
}

impl<W: Write> Write for Rewriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.finders.is_empty() {
            return self.inner.write(buf);
        }
        let rest = match memchr::memrchr(b'\n', buf) {
            None => buf,
            Some(last) => {
                let mut lines = std::mem::take(&mut self.pending);
                lines.extend_from_slice(&buf[..=last]);
                self.emit(&lines)?;
                // The buffer is kept for the next line: its capacity is already paid for.
                lines.clear();
                self.pending = lines;
                &buf[last + 1..]
            }
        };
        if self.pending.len() + rest.len() > self.max_line {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                LineTooLong {
                    limit: self.max_line,
                },
            ));
        }
        self.pending.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Whether the line of `chunk` around `at` holds `marker` (always, without a marker).
fn in_marked_line(chunk: &[u8], at: usize, marker: Option<&[u8]>) -> bool {
    let Some(marker) = marker else {
        return true;
    };
    let start = memchr::memrchr(b'\n', &chunk[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &chunk[at..]).map_or(chunk.len(), |i| at + i);
    memmem::find(&chunk[start..end], marker).is_some()
}

/// `bytes` rewritten (for tests and small files).
pub fn rewrite(bytes: &[u8], rewrites: Vec<Rewrite>) -> Vec<u8> {
    let mut writer = Rewriter::new(Vec::new(), rewrites);
    // Writing to a Vec cannot fail.
    let _ = writer.write_all(bytes);
    writer.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cwd(old: &str, new: &str) -> Vec<Rewrite> {
        ["\":\"", "\": \""]
            .iter()
            .map(|colon| Rewrite {
                before: format!("\"cwd{colon}").into_bytes(),
                old: old.as_bytes().to_vec(),
                new: new.as_bytes().to_vec(),
                end: b'"',
                under: true,
                line_start: false,
                in_lines_with: None,
            })
            .collect()
    }

    #[test]
    fn only_the_named_fields_with_the_old_directory_change() {
        let input = concat!(
            r#"{"cwd":"/a/p","x":1,"text":"/a/p stays"}"#,
            "\n",
            r#"{"cwd": "/a/p/src","y":"z"}"#,
            "\n",
            r#"{"cwd":"/a/pp"}"#,
            "\n",
            r#"{"cwd":"/a/p"}"#
        );
        let out = rewrite(input.as_bytes(), cwd("/a/p", "/long/er/q"));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                r#"{"cwd":"/long/er/q","x":1,"text":"/a/p stays"}"#,
                "\n",
                r#"{"cwd": "/long/er/q/src","y":"z"}"#,
                "\n",
                r#"{"cwd":"/a/pp"}"#,
                "\n",
                r#"{"cwd":"/long/er/q"}"#
            )
        );
    }

    #[test]
    fn fields_split_between_writes_are_rewritten() {
        let input = b"{\"cwd\":\"/a/p\"}\n{\"cwd\":\"/a/p\"}\n".repeat(3);
        for size in [1, 2, 5, 7, 64] {
            let mut writer = Rewriter::new(Vec::new(), cwd("/a/p", "/b"));
            for chunk in input.chunks(size) {
                writer.write_all(chunk).unwrap();
            }
            let out = writer.finish().unwrap();
            assert_eq!(out, b"{\"cwd\":\"/b\"}\n".repeat(6), "chunks of {size}");
        }
    }

    #[test]
    fn a_rewrite_can_be_kept_to_lines_with_a_marker() {
        let only_meta: Vec<Rewrite> = cwd("/a", "/b")
            .into_iter()
            .map(|r| Rewrite {
                in_lines_with: Some(b"session_meta".to_vec()),
                ..r
            })
            .collect();
        let out = rewrite(
            b"{\"type\":\"session_meta\",\"cwd\":\"/a\"}\n{\"type\":\"turn_context\",\"cwd\":\"/a\"}\n",
            only_meta,
        );
        assert_eq!(
            out,
            b"{\"type\":\"session_meta\",\"cwd\":\"/b\"}\n{\"type\":\"turn_context\",\"cwd\":\"/a\"}\n"
        );
    }

    #[test]
    fn a_line_longer_than_the_cap_fails_the_write_and_is_not_held() {
        let mut writer = Rewriter::new(Vec::new(), cwd("/a", "/b")).max_line(8);
        writer.write_all(b"{\"cwd\":\"/a\"}\n1234").unwrap();
        writer.write_all(b"5678\n").unwrap();
        let error = writer.write_all(b"123456789").unwrap_err();
        let inner = error
            .get_ref()
            .and_then(|e| e.downcast_ref::<LineTooLong>());
        assert_eq!(inner.map(|e| e.limit), Some(8), "{error}");
        assert!(
            writer.pending.capacity() <= 16,
            "the long line was not kept"
        );
        let mut writer = Rewriter::new(Vec::new(), cwd("/a", "/b")).max_line(8);
        writer.write_all(b"12345").unwrap();
        assert!(writer.write_all(b"6789").is_err(), "a line across writes");
        // Without a rewrite nothing is held, so nothing is capped.
        let mut writer = Rewriter::new(Vec::new(), Vec::new()).max_line(8);
        writer.write_all(&[b'x'; 100]).unwrap();
    }

    #[test]
    fn a_yaml_key_is_rewritten_only_at_the_start_of_a_line() {
        let rewrite_yaml = vec![Rewrite {
            before: b"cwd: ".to_vec(),
            old: b"/a/p".to_vec(),
            new: b"/b/q".to_vec(),
            end: b'\n',
            under: false,
            line_start: true,
            in_lines_with: None,
        }];
        let out = rewrite(b"cwd: /a/p\nid: x\nold_cwd: /a/p\n", rewrite_yaml);
        assert_eq!(out, b"cwd: /b/q\nid: x\nold_cwd: /a/p\n");
    }
}
