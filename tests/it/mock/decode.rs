//! Request bodies as the client sent them: undoing `content-encoding` (gzip, deflate, zstd) and
//! parsing JSON.
//!
//! Codex can compress its Responses requests with zstd; a mock that recorded the compressed
//! bytes would see no messages and report no history, which reads like amnesia.

use std::io::Read;

use serde_json::Value;

/// The body with its `content-encoding` undone; an error names an encoding the mock lacks.
pub fn decompress(encoding: Option<&str>, raw: Vec<u8>) -> Result<Vec<u8>, String> {
    let encoding = encoding.map(|e| e.trim().to_ascii_lowercase());
    let mut out = Vec::new();
    let result = match encoding.as_deref() {
        None | Some("" | "identity") => return Ok(raw),
        Some("gzip" | "x-gzip") => {
            flate2::read::GzDecoder::new(raw.as_slice()).read_to_end(&mut out)
        }
        Some("deflate") => flate2::read::ZlibDecoder::new(raw.as_slice()).read_to_end(&mut out),
        Some("zstd") => match ruzstd::decoding::StreamingDecoder::new(raw.as_slice()) {
            Ok(mut decoder) => decoder.read_to_end(&mut out),
            Err(error) => return Err(format!("zstd: {error}")),
        },
        Some(other) => return Err(format!("unsupported content-encoding {other:?}")),
    };
    result
        .map(|_| out)
        .map_err(|error| format!("{}: {error}", encoding.unwrap_or_default()))
}

/// The body as JSON; a body that is not JSON is kept as a string, and an empty one is `null`.
pub fn parse(body: &[u8]) -> Value {
    if body.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
}
