//! sticky: sticky per-project sessions for coding-agent CLIs.
//!
//! `run` is the whole program behind `main`; the modules below each own one concern:
//! `cli` the command line, `cmd` the commands, `store` the `SQLite` file, `session` the policy,
//! `agent` the adapters, `pty` the relay, `project` where a project's state lives.

pub mod cli;
pub mod exit;
pub mod project;
pub mod pty;
pub mod store;
