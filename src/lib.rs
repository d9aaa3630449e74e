//! sticky: sticky per-project sessions for coding-agent CLIs.
//!
//! [`run`] is the whole program behind `main`. Each module owns one concern: `cli` the command
//! line, `config` the user's configuration file, `settings` every setting with its source,
//! `cmd` the commands, `project` which directory is the project, `state` where its state
//! lives, `store` the database, `session` the policy, `lock` one turn at a time, `git` the project's branches, `pipeline`
//! who writes the pipe on stdin, `agent` the adapters, `pty` the relay, `progress` the spinner,
//! `generate` the completions and man pages, `sql_json` another program's `SQLite` values as
//! JSON, `msg` everything sticky says on stderr, `search_lists` the search lists (PATH and the
//! loader's and interpreters' lists) of every program sticky starts.

// First, so its macros (`note!`, `aside!`, `hint!`) are in scope in every module below.
#[macro_use]
pub mod msg;

pub mod agent;
pub mod bundle;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod confined;
pub mod exit;
pub mod generate;
pub mod git;
pub mod host;
pub mod lock;
pub mod pipeline;
mod progress;
pub mod project;
pub mod pty;
pub mod search_lists;
pub mod session;
pub mod settings;
mod sql_json;
pub mod state;
pub mod store;
pub mod vault;

pub use cmd::run;
