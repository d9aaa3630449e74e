//! The progress line on stderr: the agent, what it is doing, and the elapsed time.
//!
//! Shown only when stderr is a terminal and `--quiet` is off, so pipes, files and CI logs get
//! nothing but the answer and errors.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A spinner that exists only on a terminal.
#[derive(Debug)]
pub struct Progress {
    bar: Option<ProgressBar>,
    agent: String,
}

impl Progress {
    /// Starts a spinner for `agent` when stderr is a terminal and `quiet` is off.
    pub fn start(agent: &str, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.set_message(format!("{agent} · working"));
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Self {
            bar,
            agent: agent.to_owned(),
        }
    }

    /// Shows what the agent is doing now.
    pub fn activity(&self, what: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{} · {what}", self.agent));
        }
    }

    /// Removes the spinner, leaving the terminal line clean for the answer.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
