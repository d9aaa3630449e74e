//! How a turn's answer is kept: the text as printed, cut at [`MAX_ANSWER`] bytes, and deflated
//! when it is larger than [`COMPRESS_FROM`] bytes.
//!
//! Deflate comes from `flate2` on its default pure-Rust backend (`miniz_oxide`): no C library
//! to build, already in the lock file for the tests, and agents' answers (prose, code, diffs)
//! shrink to a third or less. Short answers, the common case, stay plain UTF-8 text, so they
//! read as they are in the sqlite3 shell (`answer_encoding` is NULL for them).

use std::io::{Read, Write};

use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;

/// The most of an answer that is kept: 1 MiB. A longer answer keeps its first 1 MiB (cut at a
/// character boundary), and its whole size, so `sticky show` says it was cut.
pub const MAX_ANSWER: usize = 1024 * 1024;

/// Answers longer than this are deflated: 4 KiB.
const COMPRESS_FROM: usize = 4 * 1024;

/// The encoding name stored for a deflated answer.
const DEFLATE: &str = "deflate";

/// An answer as stored.
pub(super) struct Encoded {
    /// The bytes of the `answer` column.
    pub stored: Vec<u8>,
    /// `Some("deflate")` when deflated.
    pub encoding: Option<&'static str>,
    /// The whole answer's size in bytes (also when cut).
    pub bytes: i64,
}

/// The stored form of `text`.
pub(super) fn encode(text: &str) -> Encoded {
    let bytes = i64::try_from(text.len()).unwrap_or(i64::MAX);
    let kept = kept(text).as_bytes();
    if kept.len() > COMPRESS_FROM {
        let mut encoder = DeflateEncoder::new(Vec::new(), Compression::default());
        // Writing into a Vec cannot fail.
        if encoder.write_all(kept).is_ok() {
            if let Ok(stored) = encoder.finish() {
                return Encoded {
                    stored,
                    encoding: Some(DEFLATE),
                    bytes,
                };
            }
        }
    }
    Encoded {
        stored: kept.to_vec(),
        encoding: None,
        bytes,
    }
}

/// The part of `text` that is kept: its first [`MAX_ANSWER`] bytes, cut at a character
/// boundary.
pub(super) fn kept(text: &str) -> &str {
    let mut end = text.len().min(MAX_ANSWER);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The text of a stored answer; the error says what is wrong with it.
pub(super) fn decode(stored: &[u8], encoding: Option<&str>) -> Result<String, String> {
    let bytes = match encoding {
        None => stored.to_vec(),
        Some(DEFLATE) => {
            let mut out = Vec::new();
            DeflateDecoder::new(stored)
                .take(MAX_ANSWER as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|error| format!("it does not inflate ({error})"))?;
            out
        }
        Some(other) => return Err(format!("its encoding {other:?} is unknown to this sticky")),
    };
    String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_answers_stay_text_and_long_ones_are_deflated() {
        let short = encode("Hello.");
        assert_eq!(
            (short.stored.as_slice(), short.encoding, short.bytes),
            (&b"Hello."[..], None, 6)
        );
        let long = "fn main() { println!(\"hi\"); }\n".repeat(1000);
        let encoded = encode(&long);
        assert_eq!(encoded.encoding, Some("deflate"));
        assert!(
            encoded.stored.len() < long.len() / 10,
            "{}",
            encoded.stored.len()
        );
        assert_eq!(decode(&encoded.stored, encoded.encoding).unwrap(), long);
    }

    #[test]
    fn answers_past_the_cap_are_cut_at_a_character_boundary() {
        let long = "é".repeat(MAX_ANSWER);
        let encoded = encode(&long);
        assert_eq!(encoded.bytes, i64::try_from(long.len()).unwrap());
        let text = decode(&encoded.stored, encoded.encoding).unwrap();
        assert_eq!(text.len(), MAX_ANSWER);
        assert!(long.starts_with(&text));
    }

    #[test]
    fn damaged_answers_are_errors() {
        assert!(decode(b"\xff\xfe", None).unwrap_err().contains("UTF-8"));
        assert!(decode(b"xx", Some("zstd")).unwrap_err().contains("unknown"));
        assert!(decode(b"\xff\xff\xff", Some("deflate")).is_err());
    }
}
