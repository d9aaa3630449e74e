//! What the agent reported during a turn, folded from its events by a pure reducer.
//!
//! A headless run feeds each parsed line's [`Event`]s to [`Observed::fold`] and its other lines
//! to [`Observed::unparsed`]; an interactive run sets only [`Observed::ended_in`]. The reducer
//! decides, and says back what the caller must do at once ([`Effect`]): record the ID an agent
//! named itself the moment it appears (rule 9), or show what the agent is doing.

use crate::agent::ledger::Ledger;
use crate::agent::{Event, Usage};

/// The most of the agent's non-event output kept for error messages.
pub const MAX_AGENT_OUTPUT: usize = 64 * 1024;

/// What the agent reported during a turn.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Observed {
    /// The session the agent's events named: the first one, or a later one that is not the one
    /// sticky expects (so an agent that switches sessions mid-turn is caught).
    pub reported: Option<String>,
    /// Interactive runs: the last session the agent reported being in (its session hook, else
    /// its exit line).
    pub ended_in: Option<String>,
    /// The final answer of its result event.
    pub answer: Option<String>,
    /// The assistant's messages, for agents that end without a result event.
    pub text: String,
    /// Whether its result event says the turn failed (Claude's API errors exit 0).
    pub is_error: bool,
    /// Cost and tokens, summed over the turn.
    pub usage: Usage,
    /// Its lines that were no events (its own error messages), up to [`MAX_AGENT_OUTPUT`].
    pub agent_output: String,
    /// Whether any of its lines was one of its events (headless runs).
    pub heard_events: bool,
    /// Whether the run was headless: its output is where the agent answers.
    pub headless: bool,
    /// What its lines said for the ledger beyond `usage` (see `agent::ledger`).
    pub ledger: Ledger,
    /// Interactive runs: the last assistant message of the agent's transcript, kept as the
    /// turn's answer (never printed: the user saw it in the agent's UI).
    pub transcript_answer: Option<String>,
    /// Interactive runs: the last lines the agent's UI left on the terminal, without control
    /// sequences; where an agent says why it exited (a session it does not have) when it never
    /// drew its UI. Read for its error texts as a headless agent's output is, never printed
    /// again (the user saw them).
    pub last_lines: String,
}

/// What the caller of [`Observed::fold`] does at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Record this ID, which the agent chose for the session it created, now (rule 9).
    Name(String),
    /// Show what the agent is doing (a command it runs) on the progress line.
    Activity(String),
}

impl Observed {
    /// Folds one event in; `expected` is the session ID sticky asked for, when it chose one.
    pub fn fold(&mut self, event: Event, expected: Option<&str>) -> Option<Effect> {
        self.heard_events = true;
        match event {
            Event::Session(id) => {
                let first = self.reported.is_none();
                let differs = expected.is_some_and(|want| want != id);
                let effect = (first && expected.is_none()).then(|| Effect::Name(id.clone()));
                if first || differs {
                    self.reported = Some(id);
                }
                return effect;
            }
            Event::Model(_) => {}
            Event::Activity(what) => return Some(Effect::Activity(what)),
            Event::Text(text) => {
                if !self.text.is_empty() {
                    self.text.push('\n');
                }
                self.text.push_str(&text);
            }
            Event::TextDelta(piece) => self.text.push_str(&piece),
            Event::Usage(usage) => self.usage.add(usage),
            Event::Result {
                text,
                is_error,
                usage,
            } => {
                self.answer = text;
                self.is_error = is_error;
                self.usage.add(usage);
            }
        }
        None
    }

    /// Keeps a line of the agent's output that held no event, within [`MAX_AGENT_OUTPUT`].
    pub fn unparsed(&mut self, line: &str) {
        if self.agent_output.len() < MAX_AGENT_OUTPUT && !line.trim().is_empty() {
            self.agent_output.push_str(line);
            self.agent_output.push('\n');
        }
    }

    /// Whether the agent printed something and none of it was one of its events: what a
    /// program that is not the agent sticky expects prints (a wrapper script's plain text or
    /// error, a release that changed its output format). Interactive runs keep no output here.
    pub fn only_foreign_output(&self) -> bool {
        !self.heard_events && !self.agent_output.is_empty()
    }

    /// Whether a headless run printed nothing at all: no event, no line. Every agent answers
    /// there (its events, or plain text for one defined in the configuration), so an exit 0
    /// without a word is no turn: a wrapper that swallowed the agent's output, an agent that
    /// died quietly, or one that never created the session sticky asked for.
    pub fn said_nothing(&self) -> bool {
        self.headless && !self.heard_events && self.agent_output.is_empty()
    }

    /// The answer: the result event's, else the assistant's messages.
    pub fn answer(&self) -> Option<String> {
        self.answer
            .clone()
            .or_else(|| (!self.text.is_empty()).then(|| self.text.clone()))
    }

    /// All the agent said outside its answer and in it, where adapters look for their error
    /// texts (agents whose plain output is their answer say them there).
    pub fn said(&self) -> String {
        let mut said = format!("{}\n{}", self.agent_output, self.text);
        if !self.last_lines.is_empty() {
            said.push('\n');
            said.push_str(&self.last_lines);
        }
        said
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str) -> Event {
        Event::Session(id.into())
    }

    fn usage(cost: f64, tokens: i64) -> Usage {
        Usage {
            cost_usd: Some(cost),
            input_tokens: Some(tokens),
            output_tokens: None,
        }
    }

    fn result(text: Option<&str>, is_error: bool) -> Event {
        Event::Result {
            text: text.map(str::to_owned),
            is_error,
            usage: usage(0.5, 2),
        }
    }

    /// Folds `events` and returns what was observed and the effects, in order.
    fn fold(events: Vec<Event>, expected: Option<&str>) -> (Observed, Vec<Effect>) {
        let mut observed = Observed::default();
        let effects = events
            .into_iter()
            .filter_map(|event| observed.fold(event, expected))
            .collect();
        (observed, effects)
    }

    #[test]
    #[allow(clippy::too_many_lines)] // one row per rule reads better than split tables
    fn every_rule_of_the_reducer() {
        type Row = (
            &'static str,
            Vec<Event>,
            Option<&'static str>,
            Option<&'static str>,
            Vec<Effect>,
        );
        let name = |id: &str| Effect::Name(id.into());
        // (name, events, expected ID, reported, effects)
        let cases: Vec<Row> = vec![
            ("nothing reported", vec![], Some("a"), None, vec![]),
            (
                "the expected session",
                vec![session("a"), session("a")],
                Some("a"),
                Some("a"),
                vec![],
            ),
            (
                "another session is kept over the expected one",
                vec![session("a"), session("b"), session("a")],
                Some("a"),
                Some("b"),
                vec![],
            ),
            (
                "an agent's own name is recorded once, the first",
                vec![session("x"), session("y")],
                None,
                Some("x"),
                vec![name("x")],
            ),
            (
                "activity goes to the progress line",
                vec![Event::Activity("ls".into()), Event::Model("m".into())],
                Some("a"),
                None,
                vec![Effect::Activity("ls".into())],
            ),
        ];
        for (row, events, expected, reported, effects) in cases {
            let (observed, got) = fold(events, expected);
            assert_eq!(observed.reported.as_deref(), reported, "{row}");
            assert_eq!(got, effects, "{row}");
        }
    }

    #[test]
    fn the_answer_and_usage_are_folded() {
        let (observed, _) = fold(
            vec![
                Event::Text("one".into()),
                Event::Text("two".into()),
                Event::TextDelta(" and".into()),
                Event::Usage(usage(0.25, 1)),
                result(None, true),
            ],
            None,
        );
        assert_eq!(observed.text, "one\ntwo and");
        assert_eq!(observed.answer(), Some("one\ntwo and".to_owned()));
        assert!(observed.is_error);
        assert_eq!(observed.usage.cost_usd, Some(0.75));
        assert_eq!(observed.usage.input_tokens, Some(3));
        let (observed, _) = fold(
            vec![Event::Text("x".into()), result(Some("done"), false)],
            None,
        );
        assert_eq!(observed.answer(), Some("done".to_owned()));
        assert!(!observed.is_error);
    }

    #[test]
    fn what_the_agent_said_includes_the_last_lines_of_its_ui() {
        let mut observed = Observed::default();
        assert_eq!(observed.said(), "\n");
        observed.last_lines = "No conversation found with session ID: 4f1c".into();
        assert!(
            observed
                .said()
                .lines()
                .any(|line| line == "No conversation found with session ID: 4f1c"),
            "{:?}",
            observed.said()
        );
    }

    #[test]
    fn output_without_events_is_kept_within_its_bound() {
        let mut observed = Observed::default();
        assert!(!observed.only_foreign_output(), "nothing printed");
        observed.unparsed("Error: no such session");
        observed.unparsed("   ");
        assert_eq!(observed.agent_output, "Error: no such session\n");
        assert!(observed.only_foreign_output(), "text and no event");
        let mut heard = observed.clone();
        heard.fold(Event::Model("m".into()), None);
        assert!(!heard.only_foreign_output(), "an event among the text");
        let line = "x".repeat(1024);
        for _ in 0..100 {
            observed.unparsed(&line);
        }
        assert!(observed.agent_output.len() < MAX_AGENT_OUTPUT + line.len() + 1);
        assert_eq!(observed.said(), format!("{}\n", observed.agent_output));
    }
}
