//! The agent versions sticky was tested with: the pins of `.ci/install-agents`, which the
//! real-agent tier runs through sticky (a test keeps the two in step, and docs/agents.md lists them).
//! `sticky agents` and `sticky doctor` say when an installed agent is newer than its tested
//! version: its flags, output or error texts may have changed since (`.ci/run-latest` runs the
//! real-agent tier against the newest releases to find out).

use std::cmp::Ordering;

/// Each agent and the version sticky was tested with.
pub const TESTED: &[(&str, &str)] = &[
    ("claude", "2.1.332"),
    ("codex", "0.171.0"),
    ("gemini", "0.61.0"),
    ("qwen", "0.24.4"),
    ("opencode", "1.18.33"),
    ("copilot", "1.0.102"),
];

/// The version of `agent` sticky was tested with, if it was.
pub fn tested_version(agent: &str) -> Option<&'static str> {
    TESTED
        .iter()
        .find(|(name, _)| *name == agent)
        .map(|(_, version)| *version)
}

/// The tested version of `agent` when the `--version` line `reported` names a newer one;
/// `None` when it is the same or older, or when either cannot be read.
pub fn newer_than_tested(agent: &str, reported: &str) -> Option<&'static str> {
    let tested = tested_version(agent)?;
    let newer = compare(&version_number(reported)?, &version_number(tested)?) == Ordering::Greater;
    newer.then_some(tested)
}

/// The numbers of the first word of `line` that is a dotted version (`2.1.332` in
/// `2.1.332 (Claude Code)`, `0.171.0` in `codex-cli 0.171.0`, `1.0.102` in Copilot's
/// `GitHub Copilot CLI 1.0.102.`, `1.2.3` in `v1.2.3-beta`): at least two numbers, whatever
/// follows the last one (a pre-release tag) left out.
pub fn version_number(line: &str) -> Option<Vec<u64>> {
    line.split_whitespace().find_map(|word| {
        let word = word.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
        let word = word.strip_prefix('v').unwrap_or(word);
        let core = word.split(['-', '+']).next().unwrap_or_default();
        let numbers: Option<Vec<u64>> = core.split('.').map(|n| n.parse().ok()).collect();
        numbers.filter(|numbers| numbers.len() >= 2)
    })
}

/// Compares two versions number by number, a missing number counting as 0.
fn compare(a: &[u64], b: &[u64]) -> Ordering {
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    (0..a.len().max(b.len()))
        .map(|i| at(a, i).cmp(&at(b, i)))
        .find(|order| order.is_ne())
        .unwrap_or(Ordering::Equal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_numbers_are_read_from_each_agents_version_line() {
        for (line, expected) in [
            ("2.1.332 (Claude Code)", vec![2, 1, 332]),
            ("codex-cli 0.171.0", vec![0, 171, 0]),
            ("0.61.0", vec![0, 61, 0]),
            ("v1.18.33", vec![1, 18, 33]),
            ("GitHub Copilot CLI 1.0.102.", vec![1, 0, 102]),
            ("0.62.0-nightly.20261201.abc", vec![0, 62, 0]),
        ] {
            assert_eq!(version_number(line), Some(expected), "{line}");
        }
        for line in ["", "claude", "version 7", "1..2"] {
            assert_eq!(version_number(line), None, "{line}");
        }
    }

    #[test]
    fn only_a_newer_version_than_the_tested_one_is_reported() {
        assert_eq!(
            newer_than_tested("claude", "2.1.333 (Claude Code)"),
            Some("2.1.332")
        );
        assert_eq!(
            newer_than_tested("codex", "codex-cli 0.172.0"),
            Some("0.171.0")
        );
        assert_eq!(newer_than_tested("gemini", "1.0"), Some("0.61.0"));
        for (agent, line) in [
            ("claude", "2.1.332 (Claude Code)"),
            ("claude", "2.1.197 (Claude Code)"),
            ("codex", "codex-cli 0.171.0"),
            ("qwen", "garbled"),
            ("custom-agent", "9.9.9"),
        ] {
            assert_eq!(newer_than_tested(agent, line), None, "{agent} {line}");
        }
    }

    #[test]
    fn the_agents_page_lists_every_tested_version() {
        let page = include_str!("../../docs/agents.md");
        for (name, version) in TESTED {
            let listed = format!("`{name}` {version}");
            assert!(page.contains(&listed), "docs/agents.md lacks {listed}");
        }
    }

    #[test]
    fn the_tested_versions_are_the_pins_of_install_agents() {
        let script = include_str!("../../.ci/install-agents");
        let pins: Vec<(&str, &str)> = script
            .lines()
            .filter_map(|line| line.trim().strip_prefix('"')?.strip_suffix('"'))
            .filter_map(|pin| {
                let mut fields = pin.split('|');
                let name = fields.next()?;
                let (_, version) = fields.next()?.rsplit_once('@')?;
                Some((name, version))
            })
            .collect();
        assert!(pins.len() >= 5, "the pins of .ci/install-agents: {pins:?}");
        for (name, version) in pins {
            assert_eq!(
                tested_version(name),
                Some(version),
                "{name}: .ci/install-agents pins {version}; TESTED must say the same"
            );
        }
    }
}
