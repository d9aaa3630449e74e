//! sticky's integration tests: one binary, each test in its own [`support::TestEnv`] (a
//! throwaway HOME and git project) with the fake Claude Code of `tests/fakes` on PATH.
//!
//! The modules follow the contract: `turns` (a headless turn end to end, its output and
//! failures), `policy` (when a session is resumed or rotated), `project` (where state lives and
//! where the agent runs), `input` (prompts and piped context reach the agent whole and
//! literally), `interactive` (the agent's own UI at a terminal), `report` (`status`, `log`,
//! `--help`), `concurrency` (many sticky processes on one project), `fake` (the fake agent
//! still behaves as the research says the real one does), `robust` (crashes, lost sessions,
//! damaged state: never lose a session), `hostile` (input and repositories sticky must not
//! trust) and `properties` (property tests of the policy and the event parsers).

mod concurrency;
mod fake;
mod hostile;
mod input;
mod interactive;
mod policy;
mod project;
mod properties;
mod report;
mod robust;
mod support;
mod turns;
