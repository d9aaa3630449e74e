//! sticky's integration tests: one test binary.
//!
//! `mock` is the mock model server the real-agent tier runs the agent CLIs against; `real` runs
//! the real, pinned agent CLIs offline (installed by `.ci/install-agents`).

mod mock;
mod real;
