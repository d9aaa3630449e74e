//! The exit-code contract and the errors a caller branches on.
//!
//! The agent's own exit code passes through, a signal death is 128+N, and sticky's own failures
//! have the fixed codes below (also printed by `--help`, see `cli::EXIT_CODES`). Only `main`
//! turns an [`Exit`] into a process exit code.

/// How a sticky run ends, before it becomes a process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything worked.
    Success,
    /// The agent exited with this code (passed through unchanged).
    Agent(i32),
    /// The agent was killed by this signal (exit code 128+N).
    Signal(i32),
    /// A bad option or argument.
    Usage,
    /// A bug or an unexpected failure in sticky itself.
    Internal,
    /// The project database cannot be opened, read or written.
    Store,
    /// The agent program is missing or not executable.
    AgentMissing,
    /// The agent can no longer resume the stored session.
    SessionLost,
    /// The agent answered from another session than the one sticky resumed.
    Amnesia,
    /// Another turn holds the conversation and waiting gave up.
    Busy,
}

impl Exit {
    /// The process exit code of this outcome.
    pub fn code(self) -> u8 {
        match self {
            Self::Success => 0,
            // Agents exit 0..=255; anything else cannot come from a real exit status.
            Self::Agent(code) if is_reserved(code) => AGENT_RESERVED_CODE,
            Self::Agent(code) => u8::try_from(code).unwrap_or(1),
            Self::Signal(signal) => u8::try_from(128 + signal).unwrap_or(255),
            Self::Usage => 2,
            Self::Internal => 70,
            Self::Store => 71,
            Self::AgentMissing => 72,
            Self::SessionLost => 73,
            Self::Amnesia => 74,
            Self::Busy => 75,
        }
    }
}

/// The exit code of a turn whose agent exited with one of sticky's own codes (2, 70-76): a
/// script can then tell the agent's failure from sticky's; the agent's own code is in the
/// turn's row (`sticky log`, `--json`).
pub const AGENT_RESERVED_CODE: u8 = 76;

/// Whether an agent's exit code collides with one sticky gives its own failures.
pub fn is_reserved(code: i32) -> bool {
    code == 2 || (70..=i32::from(AGENT_RESERVED_CODE)).contains(&code)
}

/// Failures with their own exit code; everything else is [`Exit::Internal`].
#[derive(Debug, thiserror::Error)]
pub enum StickyError {
    /// Bad input from the user that clap could not catch.
    #[error("{0}")]
    Usage(String),
    /// The database could not be used.
    #[error("{0}")]
    Store(String),
    /// The agent program is not there or cannot run.
    #[error("{agent}: {reason}")]
    AgentMissing {
        /// The agent's name.
        agent: String,
        /// What is wrong, with the way out.
        reason: String,
    },
    /// The stored session cannot be resumed by the agent.
    #[error(
        "session lost: {agent} cannot resume session {session} ({reason}); \
         run `sticky new` to start over (the old session stays on record)"
    )]
    SessionLost {
        /// The agent's name.
        agent: String,
        /// The agent's session ID.
        session: String,
        /// Why, in the agent's words when it gave any.
        reason: String,
    },
    /// The agent answered from another session.
    #[error(
        "amnesia detected: asked {agent} to resume session {expected}, but it answered from \
         session {actual}; the turn is recorded as failed and sticky keeps session {expected}"
    )]
    Amnesia {
        /// The agent's name.
        agent: String,
        /// The session sticky resumed.
        expected: String,
        /// The session the agent reported.
        actual: String,
    },
    /// Another turn holds the session.
    #[error("{0}")]
    Busy(String),
    /// The conversation's session was recorded for another directory (a moved project, a
    /// shared `STICKY_DB`, a database committed to a repository): the agent would run there.
    /// Exits like [`Self::SessionLost`], since to this project the session is lost just the
    /// same and `sticky new` is the way on.
    #[error("{0}")]
    Elsewhere(String),
}

impl StickyError {
    /// The exit code this error ends the process with.
    pub fn exit(&self) -> Exit {
        match self {
            Self::Usage(_) => Exit::Usage,
            Self::Store(_) => Exit::Store,
            Self::AgentMissing { .. } => Exit::AgentMissing,
            Self::SessionLost { .. } | Self::Elsewhere(_) => Exit::SessionLost,
            Self::Amnesia { .. } => Exit::Amnesia,
            Self::Busy(_) => Exit::Busy,
        }
    }

    /// A store error about `path`, with what went wrong.
    pub fn store(path: &std::path::Path, what: impl std::fmt::Display) -> Self {
        Self::Store(format!("{}: {what}", path.display()))
    }
}

/// The exit code for any error that reached `main`.
pub fn exit_for(error: &anyhow::Error) -> Exit {
    error
        .chain()
        .find_map(|cause| cause.downcast_ref::<StickyError>())
        .map_or(Exit::Internal, StickyError::exit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_codes_that_collide_with_stickys_become_76() {
        for code in [2, 70, 71, 72, 73, 74, 75, 76] {
            assert_eq!(Exit::Agent(code).code(), 76, "{code}");
        }
        for code in [1, 3, 42, 69, 77, 125] {
            assert_eq!(i32::from(Exit::Agent(code).code()), code);
        }
        assert_eq!(Exit::Usage.code(), 2);
        assert_eq!(Exit::Signal(2).code(), 130);
    }
}
