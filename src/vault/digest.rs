//! The SHA-256 of a vault copy, resumable: an appended copy's sum is carried on from the state
//! after its last whole 64-byte block (the midstate, kept in the manifest), so a turn hashes
//! only the bytes it appends, not the whole transcript again, and yet the manifest holds the
//! full SHA-256 of every copy, which a restore checks every byte against (issue 23).

use sha2::compress256;
use sha2::digest::generic_array::GenericArray;

/// SHA-256's block.
const BLOCK: usize = 64;

/// SHA-256's initial state (FIPS 180-4, 5.3.3).
const INITIAL: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// A SHA-256 being computed, whose state can be written down and taken up again.
#[derive(Debug, Clone)]
pub(super) struct Running {
    state: [u32; 8],
    /// The bytes compressed into `state` (a multiple of [`BLOCK`]).
    compressed: u64,
    /// The bytes after them, fewer than a block.
    tail: Vec<u8>,
}

impl Running {
    /// A new sum.
    pub(super) fn new() -> Self {
        Self {
            state: INITIAL,
            compressed: 0,
            tail: Vec::with_capacity(BLOCK),
        }
    }

    /// The sum taken up at `len` bytes, from the `midstate` written for them (see
    /// [`Running::midstate`]) and their last `len % 64` bytes; `None` when `midstate` is not one.
    pub(super) fn resume(midstate: &str, len: u64, tail: &[u8]) -> Option<Self> {
        let compressed = len - len % BLOCK as u64;
        if midstate.len() != 64 || tail.len() as u64 != len - compressed {
            return None;
        }
        let mut state = [0; 8];
        for (index, word) in state.iter_mut().enumerate() {
            *word = u32::from_str_radix(midstate.get(index * 8..index * 8 + 8)?, 16).ok()?;
        }
        Some(Self {
            state,
            compressed,
            tail: tail.to_vec(),
        })
    }

    /// The bytes summed so far.
    pub(super) fn len(&self) -> u64 {
        self.compressed + self.tail.len() as u64
    }

    /// Adds `bytes`.
    pub(super) fn update(&mut self, mut bytes: &[u8]) {
        if !self.tail.is_empty() {
            let take = (BLOCK - self.tail.len()).min(bytes.len());
            self.tail.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.tail.len() < BLOCK {
                return;
            }
            let block = std::mem::take(&mut self.tail);
            self.compress(&block);
        }
        let whole = bytes.len() - bytes.len() % BLOCK;
        self.compress(&bytes[..whole]);
        self.tail.extend_from_slice(&bytes[whole..]);
    }

    /// The state after the whole blocks, as 64 hexadecimal digits (the tail is the file's own).
    pub(super) fn midstate(&self) -> String {
        words_hex(&self.state)
    }

    /// The SHA-256 of everything added, in hexadecimal.
    pub(super) fn finish(&self) -> String {
        let mut last = self.clone();
        let bits = last.len().wrapping_mul(8);
        let mut padding = vec![0x80];
        let used = (last.tail.len() + 1) % BLOCK;
        let zeros = if used <= 56 {
            56 - used
        } else {
            56 + BLOCK - used
        };
        padding.resize(1 + zeros, 0);
        padding.extend_from_slice(&bits.to_be_bytes());
        let tail = std::mem::take(&mut last.tail);
        last.compress(&[tail.as_slice(), &padding].concat());
        words_hex(&last.state)
    }

    /// Compresses `whole` (a multiple of [`BLOCK`] bytes) into the state.
    fn compress(&mut self, whole: &[u8]) {
        let blocks: Vec<GenericArray<u8, _>> = whole
            .chunks_exact(BLOCK)
            .map(GenericArray::clone_from_slice)
            .collect();
        compress256(&mut self.state, &blocks);
        self.compressed += whole.len() as u64;
    }
}

/// The state's words, big-endian, in hexadecimal (a digest when the state is final).
fn words_hex(state: &[u32; 8]) -> String {
    let bytes: Vec<u8> = state.iter().flat_map(|word| word.to_be_bytes()).collect();
    crate::sql_json::hex(&bytes)
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    fn reference(bytes: &[u8]) -> String {
        crate::sql_json::hex(&Sha256::digest(bytes))
    }

    #[test]
    fn the_sum_is_sha256_at_every_length_and_however_it_is_fed() {
        let bytes: Vec<u8> = (0..300_u32).map(|n| (n * 7 + 3).to_le_bytes()[0]).collect();
        for len in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 299] {
            let mut whole = Running::new();
            whole.update(&bytes[..len]);
            assert_eq!(whole.finish(), reference(&bytes[..len]), "{len}");
            let mut pieces = Running::new();
            for piece in bytes[..len].chunks(13) {
                pieces.update(piece);
            }
            assert_eq!(pieces.finish(), reference(&bytes[..len]), "{len} in pieces");
        }
        assert_eq!(
            Running::new().finish(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn a_sum_taken_up_from_its_midstate_goes_on_as_if_never_stopped() {
        let bytes: Vec<u8> = (0..500_u32)
            .map(|n| (n * 31 + 1).to_le_bytes()[0])
            .collect();
        for cut in [0, 10, 64, 100, 128, 200] {
            let mut first = Running::new();
            first.update(&bytes[..cut]);
            let midstate = first.midstate();
            let tail = &bytes[cut - cut % 64..cut];
            let mut resumed = Running::resume(&midstate, cut as u64, tail).expect("resumes");
            assert_eq!(resumed.finish(), reference(&bytes[..cut]), "{cut}");
            resumed.update(&bytes[cut..]);
            assert_eq!(resumed.finish(), reference(&bytes), "{cut}");
        }
        assert!(Running::resume("not hex", 0, &[]).is_none());
        assert!(Running::resume(&Running::new().midstate(), 10, &[1, 2]).is_none());
    }
}
