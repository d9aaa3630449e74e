//! The JSON shapes of sticky's output: one place, so `--json` stays a stable schema.
//!
//! Field names here are a contract with scripts; add fields, never rename or remove them.

use std::borrow::Cow;

use serde::Serialize;

use crate::agent::ledger::Figures;
use crate::exit::StickyError;
use crate::msg::needs_escape;
use crate::store::{ForkedFrom, Millis, Mode, SessionRow, TurnLedger, TurnRow, TurnStatus};

/// A session as `--json` shows it.
#[derive(Debug, Serialize)]
pub struct SessionView<'a> {
    /// Row id.
    pub id: i64,
    /// The agent's name.
    pub agent: &'a str,
    /// The model, if the session has one.
    pub model: Option<&'a str>,
    /// The agent's own session ID.
    pub agent_session_id: Option<&'a str>,
    /// The directory the agent runs in.
    pub directory: String,
    /// When it was created (Unix milliseconds).
    pub created_at: i64,
    /// The session it replaced.
    pub rotated_from: Option<i64>,
    /// Why it replaced it.
    pub rotation_reason: Option<&'a str>,
    /// When it was replaced; `null` for the live session.
    pub ended_at: Option<i64>,
    /// The kind of recap carried into it on rotation (`recap`, `summary`), else `null`.
    pub carried: Option<&'a str>,
    /// The size of that recap in bytes.
    pub carried_bytes: Option<i64>,
    /// The session it was forked from (`sticky fork`): `thread`, `session` (sticky's id) and
    /// `agent_session_id`; `null` for a session that is no fork.
    pub forked_from: Option<&'a ForkedFrom>,
}

impl<'a> From<&'a SessionRow> for SessionView<'a> {
    fn from(row: &'a SessionRow) -> Self {
        Self {
            id: row.id,
            agent: &row.agent,
            model: row.model.as_deref(),
            agent_session_id: row.agent_session_id.as_deref(),
            directory: row.directory.display().to_string(),
            created_at: row.created_at,
            rotated_from: row.rotated_from,
            rotation_reason: row.rotation_reason.as_deref(),
            ended_at: row.ended_at,
            carried: row.carried.as_deref(),
            carried_bytes: row.carried_bytes,
            forked_from: row.forked_from.as_ref(),
        }
    }
}

/// A session with the number of turns run on it (`status`, `sessions`, `threads`, `doctor`).
#[derive(Debug, Serialize)]
pub struct CountedSession<'a> {
    /// The session.
    #[serde(flatten)]
    pub session: SessionView<'a>,
    /// How many turns ran on it.
    pub turns: i64,
}

/// A turn as `--json` shows it.
#[derive(Debug, Serialize)]
pub struct TurnView<'a> {
    /// Row id.
    pub id: i64,
    /// The session it ran on.
    pub session_id: i64,
    /// `ok`, `failed`, `interrupted`, `abandoned` or `running`.
    pub status: &'static str,
    /// `headless` or `interactive`.
    pub mode: &'static str,
    /// The prompt; `null` for an interactive turn.
    pub prompt: Option<&'a str>,
    /// When it started (Unix milliseconds).
    pub started_at: i64,
    /// When it ended.
    pub ended_at: Option<i64>,
    /// Wall time in milliseconds.
    pub duration_ms: Option<i64>,
    /// The agent's exit code.
    pub exit_code: Option<i32>,
    /// The signal that killed the agent.
    pub signal: Option<i32>,
    /// Cost and tokens when the agent reported them, what the context held, and sticky's
    /// reason for a failure (`cost_usd` ... `context_window`, see [`TurnLedger`]).
    #[serde(flatten)]
    pub ledger: &'a TurnLedger,
    /// The size in bytes of the kept answer (`sticky show`), `null` when none was kept.
    pub answer_bytes: Option<i64>,
    /// Why sticky ran the turn itself: `handoff` for `--carry=summary`'s summary, else `null`.
    pub purpose: Option<&'a str>,
}

impl<'a> From<&'a TurnRow> for TurnView<'a> {
    fn from(row: &'a TurnRow) -> Self {
        Self {
            id: row.id,
            session_id: row.session_id,
            status: status_name(shown_status(row)),
            mode: mode_name(row.mode),
            prompt: row.prompt.as_deref(),
            started_at: row.started_at,
            ended_at: row.ended_at,
            duration_ms: row.duration_ms,
            exit_code: row.exit_code,
            signal: row.signal,
            ledger: &row.ledger,
            answer_bytes: row.answer_bytes,
            purpose: row.purpose.as_deref(),
        }
    }
}

/// The status a turn is shown with: its stored one, except that a `running` turn whose sticky
/// process is gone (it ran on this host and no process has its pid) is `abandoned`, as the next
/// turn will record it. A turn of another host, or a pid that is alive, stays `running`.
pub fn shown_status(turn: &TurnRow) -> TurnStatus {
    if turn.status == TurnStatus::Running && process_gone(turn) {
        TurnStatus::Abandoned
    } else {
        turn.status
    }
}

/// Whether the process that ran `turn` is known to be gone.
fn process_gone(turn: &TurnRow) -> bool {
    crate::host::process_gone(&turn.host, turn.pid)
}

/// The stored and shown name of a turn status.
pub fn status_name(status: TurnStatus) -> &'static str {
    match status {
        TurnStatus::Running => "running",
        TurnStatus::Ok => "ok",
        TurnStatus::Failed => "failed",
        TurnStatus::Interrupted => "interrupted",
        TurnStatus::Abandoned => "abandoned",
    }
}

/// The shown name of a turn mode.
pub fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Headless => "headless",
        Mode::Interactive => "interactive",
    }
}

/// A session for people, escaped: `claude · model default · 3f2a…`, with `unstarted` in place
/// of the agent's ID before it has one.
pub fn session_summary(session: &SessionRow, unstarted: &str) -> String {
    format!(
        "{} · model {} · {}",
        escape(&session.agent),
        escape(session.model.as_deref().unwrap_or("default")),
        escape(session.agent_session_id.as_deref().unwrap_or(unstarted))
    )
}

/// A time for people: `2026-11-30 06:10:02 UTC`.
pub fn format_time(millis: i64) -> String {
    let secs = millis.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// A duration for people: `850ms`, `12.3s`, `4m05s`, `2h03m`.
pub fn format_duration(millis: i64) -> String {
    if millis < 1_000 {
        format!("{millis}ms")
    } else if millis < 60_000 {
        format!("{}.{}s", millis / 1000, millis % 1000 / 100)
    } else if millis < 3_600_000 {
        format!("{}m{:02}s", millis / 60_000, millis % 60_000 / 1000)
    } else {
        format!("{}h{:02}m", millis / 3_600_000, millis % 3_600_000 / 60_000)
    }
}

/// Tokens and cost for people: `1.2k in (800 cached) · 350 out · $0.0123`; empty when the
/// agent reported none.
pub fn format_ledger(figures: &Figures) -> String {
    let mut parts = Vec::new();
    if let Some(input) = figures.input_tokens {
        let cached = figures
            .cached_tokens
            .filter(|cached| *cached > 0)
            .map(|cached| format!(" ({} cached)", format_count(cached)));
        parts.push(format!(
            "{} in{}",
            format_count(input),
            cached.unwrap_or_default()
        ));
    }
    if let Some(output) = figures.output_tokens {
        parts.push(format!("{} out", format_count(output)));
    }
    if let Some(cost) = figures.cost_usd {
        parts.push(format!("${cost:.4}"));
    }
    parts.join(" · ")
}

/// A token count for people: `950`, `12.3k`, `1.2M`.
#[allow(
    clippy::cast_precision_loss,
    reason = "a shown count needs three digits"
)]
pub fn format_count(count: i64) -> String {
    if count.abs() < 1_000 {
        count.to_string()
    } else if count.abs() < 1_000_000 {
        format!("{:.1}k", count as f64 / 1_000.0)
    } else {
        format!("{:.1}M", count as f64 / 1_000_000.0)
    }
}

/// The time `flag WHEN` means (see `log`'s `--since`), and whether WHEN is a day without a time of
/// day (so `--until 2026-11-30` can take the whole day).
pub fn point(flag: &str, when: &str, now: Millis) -> Result<(Millis, bool), StickyError> {
    let text = when.trim();
    let bad = || {
        StickyError::Usage(format!(
            "{flag} \"{}\" is neither a date (2026-11-30, 2026-11-30 14:00, UTC) nor a \
             duration (90m, 2h, 3d, 1w)",
            escape(when)
        ))
    };
    if let Some(unit) = text.chars().last().filter(char::is_ascii_alphabetic) {
        let count: i64 = text[..text.len() - 1].parse().map_err(|_| bad())?;
        let seconds = match unit {
            's' => 1,
            'm' => 60,
            'h' => 3_600,
            'd' => 86_400,
            'w' => 604_800,
            _ => return Err(bad()),
        };
        return count
            .checked_mul(seconds * 1000)
            .filter(|back| *back >= 0)
            .map(|back| (now.saturating_sub(back), false))
            .ok_or_else(bad);
    }
    let day_only = !text.contains([' ', 'T']);
    date(text).map(|at| (at, day_only)).ok_or_else(bad)
}

/// `YYYY-MM-DD[( |T)HH:MM[:SS]]` in UTC, as Unix milliseconds.
fn date(text: &str) -> Option<Millis> {
    let (day, time) = match text.split_once([' ', 'T']) {
        Some((day, time)) => (day, Some(time)),
        None => (text, None),
    };
    let mut parts = day.split('-').map(|part| part.parse::<i64>().ok());
    let (year, month, mday) = (parts.next()??, parts.next()??, parts.next()??);
    if parts.next().is_some() || !(1..=12).contains(&month) || !(1..=31).contains(&mday) {
        return None;
    }
    let mut seconds = 0;
    if let Some(time) = time {
        let fields: Vec<i64> = time
            .split(':')
            .map(|part| part.parse().ok())
            .collect::<Option<_>>()?;
        let limits = [24, 60, 60];
        if !(2..=3).contains(&fields.len())
            || fields
                .iter()
                .zip(limits)
                .any(|(value, limit)| !(0..limit).contains(value))
        {
            return None;
        }
        seconds = fields.iter().zip([3600, 60, 1]).map(|(v, s)| v * s).sum();
    }
    Some((days_from_civil(year, month, mday) * 86_400 + seconds) * 1000)
}

/// Days since 1970-01-01 of a date of the proleptic Gregorian calendar (Howard Hinnant's
/// `days_from_civil`, the inverse of the one `view::format_time` uses).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 to a (year, month, day) of the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// 8 characters of an agent's session ID that tell sessions apart in one-line listings: the
/// first 8 (a random UUID's first group), but the last 8 of an ID that starts with its creation
/// time, whose first ones sessions started minutes apart share: a version-7 UUID (Codex's
/// thread IDs) and opencode's `ses_` IDs (12 hex digits of time, then random characters).
pub fn short_id(id: &str) -> &str {
    let time_first = id.starts_with("ses_")
        || (id.len() == 36 && id.get(14..15) == Some("7") && id.get(8..9) == Some("-"));
    if time_first {
        let start = id.char_indices().rev().nth(7).map_or(0, |(at, _)| at);
        return &id[start..];
    }
    id.char_indices().nth(8).map_or(id, |(end, _)| &id[..end])
}

/// The first line of a prompt, cut to `width` characters, for one-line listings (raw: the
/// caller [`escape`]s it where it is shown).
pub fn one_line(text: &str, width: usize) -> String {
    let first = text.lines().next().unwrap_or_default();
    let mut out: String = first.chars().take(width).collect();
    if first.chars().count() > width || text.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

pub use crate::msg::escape;

/// The most characters of a turn's prompt [`turn_name`] shows.
const PROMPT_WORDS: usize = 40;

/// A turn as a message names it: its number and the first words of its prompt.
pub fn turn_name(row: &crate::store::TurnRow) -> String {
    let headless = row.mode == crate::store::Mode::Headless;
    let Some(prompt) = row.prompt.as_deref().filter(|_| headless) else {
        return format!("#{} (interactive)", row.id);
    };
    let line = prompt.lines().next().unwrap_or_default();
    let mut words: String = line.chars().take(PROMPT_WORDS).collect();
    if words.len() < prompt.len() {
        words.push('…');
    }
    format!("#{} \"{}\"", row.id, escape(&words))
}

/// `-t NAME` as a hint shows it, the name shell-quoted ([`crate::msg::shell_word`]): a thread's
/// name may come from a bundle or a git branch, whose author would otherwise choose what a
/// pasted command runs (review 19, H1). `-t=NAME` for a thread an older sticky let start with
/// `-` (`-t -rf` reads `-rf` as options, `-t=-rf` names the thread).
pub fn thread_option(name: &str) -> String {
    let shown = crate::msg::shell_word(name);
    if name.starts_with('-') {
        format!("-t={shown}")
    } else {
        format!("-t {shown}")
    }
}

/// Whether a turn without `-t` uses thread `main`: no `STICKY_THREAD` naming another, and no
/// configuration's `thread = "branch"` or `"pr"`. Set once by the command's context.
static MAIN_IS_DEFAULT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Records whether a turn without `-t` uses thread `main` here ([`thread_flag`]).
pub fn set_main_is_default(main: bool) {
    MAIN_IS_DEFAULT.store(main, std::sync::atomic::Ordering::Relaxed);
}

/// The thread option a suggested command needs for thread `name`, with its leading space:
/// none for `main` while a turn without `-t` uses it; else [`thread_option`]. With
/// `STICKY_THREAD` or the configuration's `thread` choosing another, `sticky "..."` would go on
/// elsewhere (review 19, M5).
pub fn thread_flag(name: &str) -> String {
    if name == "main" && MAIN_IS_DEFAULT.load(std::sync::atomic::Ordering::Relaxed) {
        String::new()
    } else {
        format!(" {}", thread_option(name))
    }
}

/// An answer for a terminal (`sticky show`): every character [`escape`] shows as an escape is
/// shown so here, but newlines and tabs, which lay the answer out, and a backslash, which an
/// answer's code must show as written. Whatever recorded it (a turn here, or a bundle from
/// elsewhere), a stored `ESC ] 52` can then neither write to the clipboard nor clear the
/// screen.
pub fn escape_answer(text: &str) -> Cow<'_, str> {
    let shown = |c: char| !matches!(c, '\n' | '\t' | '\\') && needs_escape(c);
    if !text.chars().any(shown) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if shown(c) {
            out.push_str(&escape(c.encode_utf8(&mut [0; 4])));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether [`escape`] shows `c` as an escape.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_option_is_one_shell_word_whatever_the_name() {
        for (name, shown) in [
            ("main", "-t main"),
            ("feature/x-1", "-t feature/x-1"),
            ("review $(touch x)", "-t 'review $(touch x)'"),
            ("it's", r#"-t 'it'"'"'s'"#),
            ("wip-`id`", "-t 'wip-`id`'"),
            ("-rf", "-t=-rf"),
            ("-a b", "-t='-a b'"),
        ] {
            assert_eq!(thread_option(name), shown, "{name}");
        }
    }

    /// The modules of `cmd/` that are no command but serve them all.
    const HELPERS: &[&str] = &[
        "across", "former", "input", "kept", "listing", "mod", "nested", "output", "probe",
        "standing", "vault", "view",
    ];

    /// The uses of one command by another that are the command's own: `new` and `fork` are the
    /// entries of the turn (and fork's object is new's), and `threads --prune` is forget's
    /// prune (its options `threads::Args`), which shares forget's deletion.
    const ENTRIES: &[(&str, &str)] = &[
        ("new", "turn"),
        ("fork", "turn"),
        ("fork", "new"),
        ("threads", "forget"),
        ("forget", "threads"),
    ];

    /// Every `.rs` file under `dir`.
    fn sources(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                found.extend(sources(&path));
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                found.push(path);
            }
        }
        found
    }

    /// A command is used by the switchboard (`cmd/mod.rs`) only (but see [`ENTRIES`]): what two commands share lives
    /// in a helper of `cmd/` or below the commands, never in one of them.
    #[test]
    fn no_command_uses_another_commands_internals() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cmd");
        let module = |path: &std::path::Path| {
            let relative = path.strip_prefix(&root).unwrap();
            let first = relative.components().next().unwrap().as_os_str();
            std::path::Path::new(first)
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        };
        let files = sources(&root);
        let mut commands: Vec<String> = files.iter().map(|path| module(path)).collect();
        commands.retain(|name| !HELPERS.contains(&name.as_str()));
        commands.sort();
        commands.dedup();
        assert!(commands.contains(&"turn".to_owned()) && commands.contains(&"log".to_owned()));
        for file in files.iter().filter(|file| **file != root.join("mod.rs")) {
            let text = std::fs::read_to_string(file).unwrap();
            let owner = module(file);
            let own =
                |command: &str| command == owner || ENTRIES.contains(&(owner.as_str(), command));
            for command in commands.iter().filter(|command| !own(command)) {
                let used = regex_lite::Regex::new(&format!(
                    r"(super::|cmd::)(super::)*{command}::|use (super|crate::cmd)::\{{[^}}]*\b{command}\b"
                ))
                .unwrap();
                assert!(
                    !used.is_match(&text),
                    "{} uses command {command}'s internals: move what they share to a helper \
                     of cmd/ or below the commands (or list a new helper in HELPERS)",
                    file.display()
                );
            }
        }
    }

    #[test]
    fn times_and_durations_read_well() {
        assert_eq!(format_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_time(1_796_014_874_244), "2026-11-30 05:01:14 UTC");
        assert_eq!(format_time(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(format_duration(850), "850ms");
        assert_eq!(format_duration(12_345), "12.3s");
        assert_eq!(format_duration(245_000), "4m05s");
        assert_eq!(format_duration(7_380_000), "2h03m");
    }

    #[test]
    fn prompts_shrink_to_one_line() {
        assert_eq!(one_line("fix it", 20), "fix it");
        assert_eq!(one_line("fix it\nplease", 20), "fix it…");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }

    #[test]
    fn an_answer_keeps_its_lines_tabs_and_backslashes_on_a_terminal() {
        assert_eq!(
            escape_answer("fn main() {\n\tx\\d\n}"),
            "fn main() {\n\tx\\d\n}"
        );
        assert_eq!(
            escape_answer("a\x1b]52;c;cHduZWQ=\x07\x1b[2Jb\r\n\u{202e}"),
            "a\\e]52;c;cHduZWQ=\\x07\\e[2Jb\\r\n\\u{202e}"
        );
    }

    #[test]
    fn control_characters_are_shown_as_escapes() {
        assert_eq!(escape("fix the bug"), "fix the bug");
        assert!(matches!(
            escape("naïve 日本 ✓"),
            Cow::Borrowed("naïve 日本 ✓")
        ));
        assert_eq!(
            escape("\x1b]0;pwned\x07\x1b[31mred\r\n\tx"),
            "\\e]0;pwned\\x07\\e[31mred\\r\\n\\tx"
        );
        assert_eq!(
            escape("a\\eb"),
            "a\\\\eb",
            "a literal backslash is not an escape"
        );
        assert_eq!(escape("\x7f\u{9b}31m"), "\\x7f\\u{9b}31m");
        assert_eq!(escape("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(
            escape(&one_line("\x1b[2Jhi\rthere\nmore", 20)),
            "\\e[2Jhi\\rthere…"
        );
    }

    #[test]
    fn short_ids_keep_the_first_group_of_a_uuid() {
        assert_eq!(short_id("3f2a9c1b-0d4e-4a7b-9c1d-2e3f4a5b6c7d"), "3f2a9c1b");
        assert_eq!(short_id("abc"), "abc");
        assert_eq!(short_id("ééééééééé"), "éééééééé");
    }

    #[test]
    fn short_ids_of_time_ordered_ids_keep_their_random_end() {
        // Two Codex threads started a second apart share their first group.
        assert_eq!(short_id("01a23452-4678-769f-90d8-8f1a3831a167"), "3831a167");
        assert_eq!(short_id("01a23452-47f1-7c9a-b333-0afb2e1bfa09"), "2e1bfa09");
        assert_eq!(short_id("ses_dd52be6f3ffevLdNHDvUF3i1Hh"), "vUF3i1Hh");
        assert_ne!(
            short_id("ses_dd52be6f3ffevLdNHDvUF3i1Hh"),
            short_id("ses_dd52be6f3ffdKq81xZpT0aW9mE")
        );
        assert_eq!(short_id("ses_x"), "ses_x");
    }
}
