//! sticky's integration tests: one binary, each test in its own [`support::TestEnv`] (a
//! throwaway HOME and git project) with the fake Claude Code of `tests/fakes` on PATH.
//!
//! The modules follow the contract: `turns` (a headless turn end to end, its output and
//! failures), `policy` (when a session is resumed or rotated), `project` (where state lives and
//! where the agent runs), `input` (prompts and piped context reach the agent whole and
//! literally), `interactive` (the agent's own UI at a terminal), `report` (`status`, `log`,
//! `--help`), `concurrency` (many sticky processes on one project), `fake` (the fake agent
//! still behaves as the research says the real one does), `agents` (the same scenarios over
//! every adapter and its fake), `ux` (sticky as a shell tool: completions, snapshots,
//! `--json` schemas, `config`, `threads`, `sessions`, `doctor`, `prompt`, pipes and pagers),
//! `robust` (crashes, lost sessions, damaged state: never lose a session), `hostile` (input
//! and repositories sticky must not trust), `links` (no link below `.sticky/` or an agent's
//! home is followed), `branches` (threads that follow git), `display` (stored text shown safely),
//! `documented` (every command the README, docs/ and the man pages show runs as written), `docs`
//! (every relative link between the documents leads somewhere) and
//! `properties` (property tests of the policy and the event parsers).
//! `mock` is the mock model server and `real` the offline real-agent tier: the pinned, real
//! agent CLIs (installed by `.ci/install-agents`) run against the mock, directly and through
//! sticky. `action` plays the GitHub Action (`action.yml`) as a runner does, and lints it with
//! the workflows of the README and docs/ci.md.

mod action;
mod agents;
mod branches;
mod bundle;
mod carry;
mod concurrency;
mod display;
mod docs;
mod document;
mod documented;
mod emptied;
mod fake;
mod fork;
mod git_state;
mod hostile;
mod input;
mod install;
mod interactive;
mod ledger;
mod links;
mod mock;
mod policy;
mod project;
mod properties;
mod readme;
mod real;
mod report;
mod robust;
mod schema;
mod search;
mod shared_db;
mod shared_state;
mod support;
mod trust;
mod turns;
mod usage;
mod ux;
mod vault;
