//! Property tests: the session policy keeps its rules for every combination of state and
//! request, and the event parsers survive any bytes an agent (or a broken terminal) can emit,
//! however the pseudo-terminal chunks them.

use proptest::prelude::*;
use sticky::agent::{Adapter, Claude, Event, LineSplitter};
use sticky::session::{Action, Live, Plan, Reason, Request, plan};

// --- The session policy. ---

/// A few names, so that equal and different values both come up often.
fn agent() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["claude", "codex", "gemini"])
}

fn model() -> impl Strategy<Value = Option<&'static str>> {
    prop::option::of(prop::sample::select(vec!["m1", "m2", "m3"]))
}

fn live() -> impl Strategy<Value = Option<Live<'static>>> {
    prop::option::of((agent(), model(), any::<bool>(), any::<bool>()).prop_map(
        |(agent, model, confirmed, unsaved)| Live {
            agent,
            model,
            confirmed,
            // Only an unconfirmed session can be one the agent never saved.
            unsaved: unsaved && !confirmed,
            // A fork not made yet has its own rows in the policy's table test.
            forking: false,
        },
    ))
}

fn request() -> impl Strategy<Value = Request<'static>> {
    (any::<bool>(), prop::option::of(agent()), model(), agent()).prop_map(
        |(fresh, agent, model, default_agent)| Request {
            fresh,
            agent,
            model,
            default_agent,
            carry: None,
            carry_on_change: sticky::session::CarryKind::Off,
        },
    )
}

proptest! {
    #[test]
    fn the_policy_keeps_its_rules(live in live(), request in request()) {
        let planned = plan(live.map(|live| (live, ())), request);
        let Some(live) = live else {
            // Rule 1: nothing yet -> start what was asked for, or the default agent.
            prop_assert_eq!(planned, Plan {
                action: Action::Start,
                agent: request.agent.unwrap_or(request.default_agent).to_owned(),
                model: request.model.map(str::to_owned),
                carry: None,
            });
            return Ok(());
        };
        let agent_differs = request.agent.is_some_and(|agent| agent != live.agent);
        let model_differs = request.model.is_some_and(|model| Some(model) != live.model);
        // Whatever the action, the agent and model are the ones asked for, else the session's
        // (another agent's model never carries over); the default agent never applies.
        let want_agent = request.agent.unwrap_or(live.agent);
        prop_assert_eq!(planned.agent.as_str(), want_agent, "the default agent never applies");
        let want_model = request.model.or(if agent_differs { None } else { live.model });
        prop_assert_eq!(planned.model.as_deref(), want_model);
        match planned.action {
            Action::Resume(()) => {
                // Never resumes on another agent or model, on `new`, or an unconfirmed session.
                prop_assert!(!agent_differs && !model_differs && !request.fresh);
                prop_assert!(live.confirmed);
            }
            Action::Start => prop_assert!(false, "a live session is never started anew"),
            Action::Restart(()) | Action::Rotate((), _) => {
                let want_reason = if request.fresh {
                    Some(Reason::New)
                } else if agent_differs {
                    Some(Reason::AgentChange)
                } else if model_differs {
                    Some(Reason::ModelChange)
                } else if live.unsaved {
                    // A session the agent never saved after a turn ran on it.
                    Some(Reason::Unsaved)
                } else {
                    None
                };
                prop_assert_eq!(planned.action.reason(), want_reason);
                // Without a reason of the user's, only a session the agent never confirmed
                // starts again (in place when no turn ran on it, as `unsaved` when one did); a
                // confirmed one is never replaced (rules 5 and 8).
                if matches!(want_reason, None | Some(Reason::Unsaved)) {
                    prop_assert!(!live.confirmed);
                }
            }
        }
        // A live session is resumed or rotated whatever the configured default agent says.
        let other_default = Request { default_agent: "opencode", ..request };
        prop_assert_eq!(plan(Some((live, ())), other_default), planned);
    }

    #[test]
    fn fresh_always_rotates_an_existing_session(live in live(), request in request()) {
        let Some(live) = live else { return Ok(()) };
        let planned = plan(Some((live, ())), Request { fresh: true, ..request });
        prop_assert!(
            planned.action == Action::Rotate((), Reason::New),
            "{:?}", planned
        );
    }
}

// --- The event parsers. ---

/// Bytes rich in what matters to the splitter: line ends, escapes, JSON punctuation, UTF-8
/// lead and continuation bytes, and anything else.
fn terminal_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => any::<u8>(),
        2 => Just(b'\n'),
        1 => Just(b'\r'),
        1 => Just(0x1b),
        1 => prop::sample::select(b"[]{}\":,?;0123456789".to_vec()),
        1 => prop::sample::select(vec![0xc3_u8, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0xff]),
    ];
    prop::collection::vec(byte, 0..max)
}

/// Splits `bytes` at `cuts` (positions taken modulo the length) and runs them through a fresh
/// splitter; returns the lines.
fn split(bytes: &[u8], cuts: &[usize]) -> Vec<String> {
    let mut cuts: Vec<usize> = cuts
        .iter()
        .map(|cut| cut % (bytes.len() + 1))
        .chain([0, bytes.len()])
        .collect();
    cuts.sort_unstable();
    let mut lines = Vec::new();
    let mut splitter = LineSplitter::default();
    for pair in cuts.windows(2) {
        splitter.push(&bytes[pair[0]..pair[1]], &mut |line| {
            lines.push(line.to_owned());
        });
    }
    splitter.finish(&mut |line| lines.push(line.to_owned()));
    lines
}

/// A real stream-json line of Claude Code 2.1.332 (the fake's shapes, from the research).
fn claude_events() -> Vec<String> {
    let id = "7f0c3a52-2b1e-4c7d-9a55-0e2d4b6f8c91";
    vec![
        format!(
            r#"{{"type":"system","subtype":"init","cwd":"/p","session_id":"{id}","tools":["Bash"],"model":"claude-opus-5-5"}}"#
        ),
        format!(
            r#"{{"type":"assistant","session_id":"{id}","message":{{"role":"assistant","content":[{{"type":"text","text":"h\u00e9llo \"there\"\n"}},{{"type":"tool_use","name":"Bash"}}]}}}}"#
        ),
        format!(
            r#"{{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"{id}","total_cost_usd":0.01,"usage":{{"input_tokens":3,"output_tokens":4}}}}"#
        ),
    ]
}

proptest! {
    #[test]
    fn chunking_never_changes_the_lines(
        bytes in terminal_bytes(2048),
        cuts in prop::collection::vec(any::<usize>(), 0..24),
    ) {
        let whole = split(&bytes, &[]);
        let chunked = split(&bytes, &cuts);
        prop_assert_eq!(&chunked, &whole);
        // One line per line end, plus what follows the last one.
        let ends = bytes.split(|&b| b == b'\n').count() - 1;
        let tail = bytes.iter().rposition(|&b| b == b'\n').map_or(bytes.len(), |at| bytes.len() - at - 1);
        prop_assert_eq!(whole.len(), ends + usize::from(tail > 0));
        for line in &whole {
            prop_assert!(!line.chars().any(|c| c.is_control() && c != '\t'), "{:?}", line);
            // Never panics, whatever the line.
            let _ = Claude.parse_line(line);
        }
    }

    #[test]
    fn events_survive_terminal_noise_and_any_chunking(
        noise in prop::sample::select(vec!["", "\x1b[?25h", "\x1b]0;title\x07", "\x1b[1;31m", "\r"]),
        cuts in prop::collection::vec(any::<usize>(), 0..32),
    ) {
        let events = claude_events();
        let mut stream = Vec::new();
        for line in &events {
            stream.extend_from_slice(noise.as_bytes());
            stream.extend_from_slice(line.as_bytes());
            stream.extend_from_slice(b"\r\n");
        }
        stream.extend_from_slice(b"\x1b[?25h");
        let parsed: Vec<Event> = split(&stream, &cuts).iter().flat_map(|line| Claude.parse_line(line)).collect();
        let direct: Vec<Event> = events.iter().flat_map(|line| Claude.parse_line(line)).collect();
        prop_assert_eq!(parsed, direct);
    }

    #[test]
    fn damaged_events_never_panic_and_never_invent_a_session(
        which in 0..3_usize,
        cut in any::<usize>(),
        junk in terminal_bytes(16),
    ) {
        let line = claude_events()[which].clone().into_bytes();
        let at = cut % (line.len() + 1);
        let damaged = [&line[..at], &junk, &line[at..]].concat();
        let text = String::from_utf8_lossy(&damaged);
        for event in Claude.parse_line(&text) {
            if let Event::Session(id) = event {
                prop_assert!(text.contains(&id), "{:?} from {:?}", id, text);
            }
        }
    }

    #[test]
    fn any_text_is_a_line_the_parser_survives(text in any::<String>()) {
        let _ = Claude.parse_line(&text);
        let _ = Claude.parse_line(&format!("{{{text}}}"));
    }
}

#[test]
fn deeply_nested_json_is_refused_without_overflowing_the_stack() {
    let depth = 100_000;
    let nested = format!(
        "{{\"session_id\":\"x\",\"a\":{}{}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    assert_eq!(Claude.parse_line(&nested), []);
    let objects = format!("{}{}", "{\"a\":".repeat(depth), "}".repeat(depth));
    assert_eq!(Claude.parse_line(&objects), []);
}

#[test]
fn a_huge_line_is_capped_and_a_large_event_still_parses() {
    // 40 MiB without a line end: kept to the 32 MiB cap, never grown without bound.
    let mut splitter = LineSplitter::default();
    let mut lines = Vec::new();
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..40 {
        splitter.push(&chunk, &mut |line| lines.push(line.to_owned()));
    }
    splitter.push(b"\n", &mut |line| lines.push(line.to_owned()));
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].len(), 32 << 20);

    // A 4 MiB answer in one result event (a whole file quoted back) is an ordinary event.
    let answer = "x".repeat(4 << 20);
    let line =
        format!(r#"{{"type":"result","is_error":false,"result":"{answer}","session_id":"s"}}"#);
    let events = Claude.parse_line(&line);
    assert_eq!(events.first(), Some(&Event::Session("s".into())));
    assert!(
        matches!(events.get(1), Some(Event::Result { text: Some(text), .. }) if text.len() == 4 << 20)
    );
}
