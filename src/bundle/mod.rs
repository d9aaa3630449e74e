//! The bundle: one file that carries a conversation to another directory, HOME or machine
//! (`sticky export`, `sticky import`).
//!
//! Format version [`FORMAT`]: a zstd-compressed tar archive. Its first entry is
//! `manifest.json` ([`Manifest`]: the format version, sticky's version, the agent and its version,
//! the source project's path, the thread, its sessions with their lineage and carried recaps,
//! its turns with their ledger, kept answers and restores, and each carried file's path, size
//! and SHA-256); then one regular file `files/<path>` per file of the
//! live session, its path relative to the agent's home (`projects/-home-u-p/<id>.jsonl`), in the
//! manifest's order. Nothing else: no links, no directories, no absolute or `..` paths.
//!
//! Why tar and zstd: a bundle can be opened by hand with `tar --zstd -xf` when something goes
//! wrong; the `tar` crate (the one cargo itself uses for `.crate` files) writes and streams it
//! without temporary copies, and the `zstd` crate binds the reference libzstd, so level 3 runs
//! at the speed of `zstd -3`, and its frame checksum catches a damaged stream. Per-file SHA-256
//! (`sha2`, using the CPU's SHA instructions where there are some) proves every byte placed is
//! the byte exported.
//!
//! Reading verifies before anything is placed ([`read`]): the manifest comes first and is
//! checked whole (version, paths, sizes against [`Limits`]), then each entry is streamed into a
//! private staging directory while it is hashed; a bundle that is truncated, damaged, holds a
//! link, a path outside the session's files, or a file the manifest does not list is an error
//! and the staging directory is removed.
//!
//! Fields are added without changing the format: a field newer than the format is optional
//! (`#[serde(default)]`, so a bundle without it imports with it "not recorded", as a turn run
//! before part 11 reads), and an older sticky skips the fields it does not know (it imports the
//! conversation without what it cannot keep: answers, the ledger's newer figures, restores).
//! [`FORMAT`] changes only when an older sticky would misread a bundle (a field changing its
//! meaning, another kind of archive entry); an older sticky then refuses it and says to
//! upgrade, and a newer sticky must keep reading the earlier formats.

pub mod place;
mod read;
pub mod rewrite;
mod write;

use serde::{Deserialize, Serialize};

use crate::store::{SessionRow, WholeTurn};

pub use read::{Inspected, Staged, read};
pub use write::{Carried, Source, write};

/// The version of the bundle format this sticky writes and reads.
pub const FORMAT: u32 = 1;

/// The name of the manifest entry, first in the archive.
pub const MANIFEST: &str = "manifest.json";

/// The directory of the carried files inside the archive.
const FILES: &str = "files";

/// The longest file name a bundle's file may have, and one placed: `NAME_MAX` on Linux and
/// macOS.
pub const MAX_NAME: usize = 255;

/// The first name in `path` longer than [`MAX_NAME`] bytes, if one is: no file system takes it.
pub fn long_name(path: &std::path::Path) -> Option<&std::ffi::OsStr> {
    path.iter().find(|name| name.len() > MAX_NAME)
}

/// The sizes a bundle may not exceed: a bundle comes from elsewhere, and a small file must not
/// be able to fill the disk, nor (zstd makes a long run of one byte almost nothing) the memory.
/// What import holds in memory is capped by the manifest, a rows file and a line; files are
/// streamed to disk.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The manifest, read and parsed whole (export leaves the oldest answers out to fit half of
    /// it).
    pub manifest: u64,
    /// One carried file.
    pub file: u64,
    /// One file of database rows (opencode's), parsed a row at a time as it is placed: a
    /// session's rows are small, and a bigger file is refused before it is read.
    pub rows: u64,
    /// One line of a file whose text is rewritten, held whole while it is.
    pub line: usize,
    /// All carried files together.
    pub total: u64,
    /// How many files.
    pub files: usize,
    /// When given, how far the files may expand over the bundle's bytes read so far while
    /// they are staged: for a bundle whose size is not known before (a pipe).
    pub expansion: Option<Expansion>,
    /// When given, how far the manifest may expand over the bundle's bytes read to its end,
    /// checked before it is parsed: a few KB of zstd may hold the whole [`Limits::manifest`] of
    /// minimal turns, hundreds of MB and many seconds to parse (the fifth review, L1).
    pub manifest_expansion: Option<Expansion>,
    /// The bundle's size in bytes, when known before it is read (a file): the manifest's
    /// declared size is then held to `manifest_expansion` before any of it is read.
    pub bundle_size: Option<u64>,
}

/// What an import places without asking (`import --yes`, or a yes on a terminal): zstd makes
/// gigabytes of one byte a few KB, so a small bundle could fill a disk up to what it has free.
/// Real sessions stay far below: a long session's transcript is tens of MiB, and compresses
/// about ten times (JSON lines of text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expansion {
    /// The most the files may add up to.
    pub total: u64,
    /// How many times the bundle's own size they may add up to ...
    pub ratio: u64,
    /// ... once they add up to more than this.
    pub from: u64,
}

/// The limits of [`Expansion`]: 256 MiB in all, or 200 times the bundle past 8 MiB.
pub const EXPANSION: Expansion = Expansion {
    total: 256 << 20,
    ratio: 200,
    from: 8 << 20,
};

impl Expansion {
    /// Why files adding up to `total` bytes, from a bundle of `compressed` bytes (`None` when
    /// not known yet), are more than an import places without asking; `None` when they are not.
    pub fn exceeded(&self, total: u64, compressed: Option<u64>) -> Option<String> {
        let (mib, ratio) = (total >> 20, self.ratio);
        if total > self.total {
            return Some(self.refusal(&format!(
                "the bundle's manifest and files add up to {total} bytes ({mib} MiB)"
            )));
        }
        let compressed = compressed?;
        (total > self.from && total / ratio > compressed).then(|| {
            self.refusal(&format!(
                "the bundle's manifest and files add up to {total} bytes ({mib} MiB), over {ratio} \
                 times the \
                 {compressed} bytes of the bundle"
            ))
        })
    }

    /// Why a bundle being read (its size not known before) expands too far: `staged` bytes of
    /// files from the `read` bytes of it read so far.
    pub fn exceeded_so_far(&self, staged: u64, read: u64) -> Option<String> {
        let ratio = self.ratio;
        (staged > self.total || (staged > self.from && staged / ratio > read)).then(|| {
            self.refusal(&format!(
                "the bundle's manifest and files expand to {staged} bytes ({} MiB) from the {read} bytes of it \
                 read so far",
                staged >> 20
            ))
        })
    }

    fn refusal(&self, what: &str) -> String {
        format!(
            "{what}, more than sticky places without asking (files past {} MiB in all, or past \
             {} MiB and {} times the bundle's size; a long session's transcript is tens of MiB \
             and compresses about ten times): import --yes places it, if you trust where the \
             bundle came from (nothing was changed)",
            self.total >> 20,
            self.from >> 20,
            self.ratio
        )
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            manifest: 64 << 20,
            file: 8 << 30,
            rows: 64 << 20,
            line: rewrite::MAX_LINE,
            total: 32 << 30,
            files: 100_000,
            expansion: None,
            manifest_expansion: None,
            bundle_size: None,
        }
    }
}

/// What a bundle says about itself and the conversation it carries.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// The bundle format ([`FORMAT`]).
    pub format: u32,
    /// The version of the sticky that wrote it.
    pub sticky: String,
    /// The agent of the live session.
    pub agent: Agent,
    /// The project directory the conversation ran in.
    pub project: String,
    /// The HOME of the export (absent from a bundle of a sticky before it): a state at the
    /// project that cannot be read may be the exporter's own there ([`Manifest::exported_in`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    /// The database that project kept its state in when `STICKY_DB` chose it (its absolute,
    /// canonical path; absent for the project's own `.sticky/sticky.db`, and in bundles of a
    /// sticky before it): import looks there too for a session that project still keeps
    /// (review 16, M2). As untrusted as the rest of the bundle: it may only make import refuse
    /// (`cmd::kept::recorded_database` says when it is looked at).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// The conversation.
    pub thread: Thread,
    /// Its sessions, oldest first, with their ids in the exporting database (what
    /// `rotated_from` and the turns refer to); the last one without `ended_at` is the live one.
    /// The store's rows, as serde writes them (`thread_id` left out).
    pub sessions: Vec<SessionRow>,
    /// Its turns, oldest first: the store's rows with their session's id as `session` (their
    /// own id left out; fields newer than the format default to `None`), each with its kept
    /// answer, the agent's reported totals and its restore.
    pub turns: Vec<WholeTurn>,
    /// The live session's files, in archive order.
    pub files: Vec<File>,
}

/// The agent of the live session.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Agent {
    /// Its name (`claude`).
    pub name: String,
    /// The first line of its `--version`, when the program answered.
    pub version: Option<String>,
}

/// The conversation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Thread {
    /// Its name.
    pub name: String,
    /// When it was created (Unix milliseconds).
    pub created_at: i64,
}

/// One carried file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct File {
    /// Its path relative to the agent's home.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// The hex SHA-256 of its bytes.
    pub sha256: String,
    /// Whether it holds database rows (opencode) rather than a file's bytes.
    #[serde(default)]
    pub rows: bool,
}

impl Manifest {
    /// Whether the bundle was exported in `home`: the same path, or the same directory by
    /// device and inode ([`crate::vault::same_directory`]).
    pub fn exported_in(&self, home: &std::path::Path) -> bool {
        self.home
            .as_deref()
            .is_some_and(|made| crate::vault::same_directory(std::path::Path::new(made), home))
    }

    /// The live session (the one not ended).
    pub fn live(&self) -> Option<&SessionRow> {
        self.sessions.iter().rev().find(|s| s.ended_at.is_none())
    }

    /// Cuts the oldest turns' prompts longer than [`crate::store::PROMPT_RECORD`] to that
    /// ([`crate::store::cut_prompt`]) until the prompts carried add up to at most `budget`
    /// bytes: rows an older sticky recorded whole (a log piped as the prompt) still export;
    /// returns how many prompts were cut.
    pub fn fit_prompts(&mut self, budget: usize) -> usize {
        let length = |turn: &WholeTurn| turn.row.prompt.as_ref().map_or(0, String::len);
        let mut total: usize = self.turns.iter().map(length).sum();
        let mut cut = 0;
        for turn in &mut self.turns {
            if total <= budget {
                break;
            }
            let Some(prompt) = turn.row.prompt.as_mut() else {
                continue;
            };
            if prompt.len() > crate::store::PROMPT_RECORD {
                let shorter = crate::store::cut_prompt(prompt, crate::store::PROMPT_RECORD);
                total -= prompt.len() - shorter.len();
                *prompt = shorter.into_owned();
                cut += 1;
            }
        }
        cut
    }

    /// Leaves out the oldest turns' answers until the answers carried add up to at most
    /// `budget` bytes, so the manifest stays within what import reads ([`Limits::manifest`]);
    /// returns how many answers were left out.
    pub fn fit_answers(&mut self, budget: usize) -> usize {
        let mut total: usize = self
            .turns
            .iter()
            .filter_map(|turn| turn.answer.as_ref().map(|answer| answer.text.len()))
            .sum();
        let mut dropped = 0;
        for turn in &mut self.turns {
            if total <= budget {
                break;
            }
            if let Some(answer) = turn.answer.take() {
                total -= answer.text.len();
                turn.row.answer_bytes = None;
                dropped += 1;
            }
        }
        dropped
    }
}

#[cfg(test)]
mod tests;
