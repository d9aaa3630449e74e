//! The ledger: what each agent reports about tokens, cost and its context, read per turn.
//!
//! The adapters' [`Usage`] (in their `Event::Result`/`Event::Usage`) is what an agent states
//! about the turn itself. Some agents state more, or state it as a running total of the whole
//! session; [`read`] takes that from the same lines, per agent, and [`per_turn`] turns it into
//! the turn's own figures. Per agent (sources cited where each is read):
//!
//! | agent | figure | per turn or running total |
//! |---|---|---|
//! | Claude Code | `result.usage` | per turn, main loop only (SDK schema in the 2.1 bundle: "MAIN AGENT LOOP ONLY ... per-turn") |
//! | Claude Code | `result.total_cost_usd`, `result.modelUsage` | running total: "a resumed or forked session continues from the total its transcript saved (so the first result already carries the earlier turns)" (same schema) |
//! | Claude Code | `result.model_usage_since_last_result` | per turn (this process since its previous result), when present |
//! | Codex | `turn.completed.usage` | running total of the thread: `usage_from_last_total` in `codex-rs/exec/src/event_processor_with_jsonl_output.rs` reads `ThreadTokenUsage.total`, which a resume seeds from the rollout (`last_token_info_from_rollout`, `codex-rs/core/src/session/mod.rs`) |
//! | Gemini CLI | `result.stats` | per turn: the process's own metrics; `--resume` does not hydrate them (only the session browser calls `uiTelemetryService.hydrate`) |
//! | Qwen Code | `result.usage` | per turn, as Gemini CLI, which it forks |
//! | opencode | `step_finish.part.tokens`, `.cost` | per step (one model call each), summed over the turn |
//! | Copilot | `result.usage` | premium requests only: no tokens, no cost (agents.md 3.6) |
//!
//! A running total becomes a turn's figure as the difference from the totals the previous turn
//! of the same session reported (stored with it); a total below its baseline (a restarted
//! count) counts in full, and so does the first turn of a session.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Usage;
use super::events::sum;
use super::output::{int_at, json_object, sum_at};

/// Token counts and cost: a turn's, the agent's running totals, or sums over turns
/// ([`crate::store::Totals`]); `None` where nothing was reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Cost in US dollars.
    pub cost_usd: Option<f64>,
    /// Input tokens, cached ones included.
    pub input_tokens: Option<i64>,
    /// Output tokens.
    pub output_tokens: Option<i64>,
    /// Input tokens read from a cache.
    pub cached_tokens: Option<i64>,
}

impl Figures {
    /// Whether every figure is zero or unknown.
    pub fn is_zero(&self) -> bool {
        [self.input_tokens, self.output_tokens, self.cached_tokens]
            .iter()
            .all(|count| count.unwrap_or(0) == 0)
            && self.cost_usd.unwrap_or(0.0) == 0.0
    }
}

/// What an agent's lines said beyond [`Usage`], folded over a turn.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Ledger {
    /// Figures of this turn that replace the usage's (Claude's per-result usage).
    pub turn: Figures,
    /// The agent's running totals for the session, as last reported.
    pub totals: Option<Figures>,
    /// Input tokens read from a cache in this turn (summed over steps).
    pub cached_tokens: Option<i64>,
    /// What the context held at the turn's last model call.
    pub context_tokens: Option<i64>,
    /// The model's context window.
    pub context_window: Option<i64>,
}

impl Ledger {
    /// Folds what one line said into the turn's ledger. Running totals that are all zero are
    /// no reading: Claude Code's crash and startup-error results "may carry zeroed values"
    /// (its SDK schema), and taken as a baseline they would count the next turn's totals
    /// whole.
    pub fn fold(&mut self, line: Ledger) {
        self.turn = line.turn_or(self.turn);
        self.totals = line
            .totals
            .filter(|totals| !totals.is_zero())
            .or(self.totals);
        self.cached_tokens = sum(self.cached_tokens, line.cached_tokens);
        self.context_tokens = line.context_tokens.or(self.context_tokens);
        self.context_window = line.context_window.or(self.context_window);
    }

    fn turn_or(&self, earlier: Figures) -> Figures {
        if self.turn == Figures::default() {
            earlier
        } else {
            self.turn
        }
    }
}

/// What `line` of agent `agent`'s headless output says for the ledger, if anything.
pub fn read(agent: &str, line: &str) -> Option<Ledger> {
    // Most lines are text or tool output: only parse those that can hold a figure.
    if !(line.contains("usage") || line.contains("tokens") || line.contains("Usage")) {
        return None;
    }
    let event = json_object(line)?;
    let kind = event.get("type").and_then(Value::as_str)?;
    match (agent, kind) {
        ("claude", "assistant") => Some(claude_call(&event)),
        ("claude", "result") => Some(claude_result(&event)),
        ("codex", "turn.completed") => Some(codex_turn(&event)),
        ("gemini", "result") => Some(Ledger {
            cached_tokens: int_at(&event, "/stats/cached"),
            ..Ledger::default()
        }),
        ("qwen", "result") => Some(Ledger {
            cached_tokens: int_at(&event, "/usage/cache_read_input_tokens"),
            ..Ledger::default()
        }),
        ("opencode", "step_finish") => Some(opencode_step(&event)),
        _ => None,
    }
}

/// A Claude `assistant` message: its `message.usage` is one model call's, so the prompt it
/// read (input, cache writes and cache reads) is what the context held at that call.
fn claude_call(event: &Value) -> Ledger {
    Ledger {
        context_tokens: event
            .pointer("/message/usage")
            .and_then(super::claude::prompt_tokens),
        ..Ledger::default()
    }
}

/// Claude's `result`: `modelUsage` and `total_cost_usd` are running totals (see the table);
/// `model_usage_since_last_result`, when present, is this turn's own.
fn claude_result(event: &Value) -> Ledger {
    let per_model = |key: &str| event.get(key).and_then(Value::as_object);
    let totals = per_model("modelUsage").map(|models| {
        let mut figures = model_figures(models.values());
        figures.cost_usd = event
            .get("total_cost_usd")
            .and_then(Value::as_f64)
            .or(figures.cost_usd);
        figures
    });
    let totals = totals.or_else(|| {
        let cost = event.get("total_cost_usd").and_then(Value::as_f64)?;
        Some(Figures {
            cost_usd: Some(cost),
            ..Figures::default()
        })
    });
    let window = per_model("modelUsage")
        .into_iter()
        .flat_map(|models| models.values())
        .filter_map(|model| int_at(model, "/contextWindow"))
        .max();
    Ledger {
        turn: per_model("model_usage_since_last_result")
            .map(|models| model_figures(models.values()))
            .unwrap_or_default(),
        totals,
        cached_tokens: int_at(event, "/usage/cache_read_input_tokens"),
        context_tokens: None,
        context_window: window,
    }
}

/// The sum over Claude's per-model usage objects (`inputTokens`, `cacheReadInputTokens`, ...).
fn model_figures<'a>(models: impl Iterator<Item = &'a Value>) -> Figures {
    let mut figures = Figures::default();
    for model in models {
        let input = [
            "/inputTokens",
            "/cacheReadInputTokens",
            "/cacheCreationInputTokens",
        ];
        figures.input_tokens = sum(figures.input_tokens, sum_at(model, &input));
        figures.output_tokens = sum(figures.output_tokens, int_at(model, "/outputTokens"));
        figures.cached_tokens = sum(
            figures.cached_tokens,
            int_at(model, "/cacheReadInputTokens"),
        );
        let cost = model.get("costUSD").and_then(Value::as_f64);
        figures.cost_usd = sum(figures.cost_usd, cost);
    }
    figures
}

/// Codex's `turn.completed`: the thread's running totals (see the table).
fn codex_turn(event: &Value) -> Ledger {
    let totals = Figures {
        input_tokens: int_at(event, "/usage/input_tokens"),
        output_tokens: int_at(event, "/usage/output_tokens"),
        cached_tokens: int_at(event, "/usage/cached_input_tokens"),
        cost_usd: None,
    };
    Ledger {
        totals: (totals != Figures::default()).then_some(totals),
        ..Ledger::default()
    }
}

/// opencode's `step_finish`: one model call's tokens, so its prompt is the context at that call.
fn opencode_step(event: &Value) -> Ledger {
    Ledger {
        cached_tokens: int_at(event, "/part/tokens/cache/read"),
        context_tokens: event
            .pointer("/part/tokens")
            .and_then(super::opencode::prompt_tokens),
        ..Ledger::default()
    }
}

/// Whether [`per_turn`] uses its `baseline` and `first` for `ledger`: only for running totals
/// without per-turn figures. A turn whose agent stated neither needs no read of the earlier
/// turns (a read that scanned every earlier turn of the session when none had totals).
pub fn needs_baseline(ledger: &Ledger) -> bool {
    ledger.turn == Figures::default() && ledger.totals.is_some()
}

/// The turn's own figures: the ledger's per-turn ones, else its running totals less
/// `baseline` (the totals the session's previous turn reported), else the usage's. `first` says
/// that no earlier turn ran on the session, so its totals are this turn's; a session with
/// earlier turns but no baseline (they ran before sticky kept one) falls back to the usage.
pub fn per_turn(usage: Usage, ledger: &Ledger, baseline: Option<Figures>, first: bool) -> Figures {
    let from_usage = Figures {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cached_tokens: ledger.cached_tokens,
        cost_usd: usage.cost_usd,
    };
    if ledger.turn != Figures::default() {
        return ledger.turn;
    }
    let Some(totals) = ledger.totals else {
        return from_usage;
    };
    let base = baseline.unwrap_or_default();
    Figures {
        input_tokens: since(totals.input_tokens, base.input_tokens, first).or(usage.input_tokens),
        output_tokens: since(totals.output_tokens, base.output_tokens, first)
            .or(usage.output_tokens),
        cached_tokens: since(totals.cached_tokens, base.cached_tokens, first)
            .or(ledger.cached_tokens),
        // No fallback for the cost: the usage's is a running total too (Claude's
        // `total_cost_usd`).
        cost_usd: since(totals.cost_usd, base.cost_usd, first),
    }
}

/// A running total's growth since `then`: the whole of it when it fell below `then` (a
/// restarted count) or when there is no `then` on the session's `first` turn; unknown
/// otherwise.
fn since<T: PartialOrd + std::ops::Sub<Output = T>>(
    now: Option<T>,
    then: Option<T>,
    first: bool,
) -> Option<T> {
    match (now, then) {
        (Some(now), Some(then)) => Some(if now >= then { now - then } else { now }),
        (Some(now), None) if first => Some(now),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(agent: &str, lines: &[&str]) -> Ledger {
        let mut ledger = Ledger::default();
        for line in lines {
            if let Some(read) = read(agent, line) {
                ledger.fold(read);
            }
        }
        ledger
    }

    const CLAUDE: &[&str] = &[
        r#"{"type":"assistant","message":{"content":[],"usage":{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":900,"output_tokens":7}}}"#,
        r#"{"type":"result","is_error":false,"result":"ok","total_cost_usd":0.75,"usage":{"input_tokens":3,"cache_read_input_tokens":900,"output_tokens":7},"modelUsage":{"claude-sonnet-4-5":{"inputTokens":30,"outputTokens":70,"cacheReadInputTokens":1800,"cacheCreationInputTokens":200,"costUSD":0.75,"contextWindow":200000}}}"#,
    ];

    /// The usage Claude's `result` in [`CLAUDE`] states (its cost the running total).
    const USAGE: Usage = Usage {
        cost_usd: Some(0.75),
        input_tokens: Some(903),
        output_tokens: Some(7),
    };

    /// The running totals the session's previous turn reported.
    const BASE: Figures = Figures {
        input_tokens: Some(1000),
        output_tokens: Some(30),
        cached_tokens: Some(800),
        cost_usd: Some(0.5),
    };

    #[test]
    fn only_running_totals_need_the_previous_turns_totals() {
        let totals = Ledger {
            totals: Some(Figures {
                input_tokens: Some(1010),
                ..BASE
            }),
            ..Ledger::default()
        };
        let per_turn_figures = Ledger {
            turn: Figures {
                output_tokens: Some(3),
                ..Figures::default()
            },
            ..totals
        };
        for (ledger, needs) in [
            (Ledger::default(), false),
            (per_turn_figures, false),
            (totals, true),
        ] {
            assert_eq!(needs_baseline(&ledger), needs, "{ledger:?}");
            let with = per_turn(USAGE, &ledger, Some(BASE), false);
            let without = per_turn(USAGE, &ledger, None, true);
            // What needs no baseline comes out the same with or without one.
            assert_eq!(with == without, !needs, "{ledger:?}");
        }
    }

    #[test]
    fn claude_states_running_totals_the_window_and_the_context() {
        let ledger = read_all("claude", CLAUDE);
        assert_eq!(
            ledger.totals,
            Some(Figures {
                input_tokens: Some(2030),
                output_tokens: Some(70),
                cached_tokens: Some(1800),
                cost_usd: Some(0.75),
            })
        );
        assert_eq!(ledger.context_tokens, Some(1003));
        assert_eq!(ledger.context_window, Some(200_000));
        assert_eq!(ledger.cached_tokens, Some(900));
    }

    #[test]
    fn a_running_total_becomes_the_difference_from_the_previous_turn() {
        let ledger = read_all("claude", CLAUDE);
        let turn = per_turn(USAGE, &ledger, Some(BASE), false);
        assert_eq!(turn.input_tokens, Some(1030));
        assert_eq!(turn.output_tokens, Some(40));
        assert_eq!(turn.cached_tokens, Some(1000));
        assert!((turn.cost_usd.unwrap() - 0.25).abs() < 1e-9);
        // The first turn of a session: its totals are its own.
        assert_eq!(per_turn(USAGE, &ledger, None, true), ledger.totals.unwrap());
        // Earlier turns without a baseline: tokens from the per-turn usage, no cost.
        let unknown = per_turn(USAGE, &ledger, None, false);
        assert_eq!((unknown.input_tokens, unknown.cost_usd), (Some(903), None));
        // A total below its baseline is a restarted count: it counts in full.
        let restarted = Figures {
            input_tokens: Some(5000),
            ..BASE
        };
        assert_eq!(
            per_turn(USAGE, &ledger, Some(restarted), false).input_tokens,
            Some(2030)
        );
    }

    #[test]
    fn codex_totals_gemini_and_opencode_per_turn() {
        let codex = read_all(
            "codex",
            &[
                r#"{"type":"turn.completed","usage":{"input_tokens":20,"cached_input_tokens":4,"output_tokens":10}}"#,
            ],
        );
        assert_eq!(
            codex.totals,
            Some(Figures {
                input_tokens: Some(20),
                output_tokens: Some(10),
                cached_tokens: Some(4),
                cost_usd: None,
            })
        );
        let gemini = read_all(
            "gemini",
            &[r#"{"type":"result","stats":{"input_tokens":10,"cached":3}}"#],
        );
        assert_eq!((gemini.cached_tokens, gemini.totals), (Some(3), None));
        let opencode = read_all(
            "opencode",
            &[
                r#"{"type":"step_finish","part":{"tokens":{"input":10,"output":5,"cache":{"read":2,"write":1}}}}"#,
                r#"{"type":"step_finish","part":{"tokens":{"input":20,"output":5,"cache":{"read":4,"write":0}}}}"#,
            ],
        );
        assert_eq!(
            (opencode.cached_tokens, opencode.context_tokens),
            (Some(6), Some(24))
        );
        assert_eq!(read("copilot", r#"{"type":"result","usage":{}}"#), None);
        // A crashed Claude query's zeroed totals are no reading (nor a baseline).
        let crashed = read_all(
            "claude",
            &[r#"{"type":"result","is_error":true,"total_cost_usd":0,"usage":{"input_tokens":0}}"#],
        );
        assert_eq!(crashed.totals, None);
        assert_eq!(read("claude", "plain text"), None);
    }
}
