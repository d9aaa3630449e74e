//! `--carry`: the recap a new session starts with, placed before the user's prompt, so a
//! rotation (`sticky new`, another model or agent) does not start from nothing.
//!
//! The plan says whether a recap is carried (`session::plan`, `Plan::carry`); this file builds
//! it, bounded by `--carry-max`:
//! - `recap`: sticky's own record of the old session: its prompts and kept answers, newest
//!   first, naming its agent, model and session ID; older turns are left out, then the oldest
//!   one kept is cut, to fit.
//! - `summary`: one extra turn on the old session (recorded with the purpose `handoff`) asks
//!   it for a handoff summary, which becomes the recap; when that turn fails, the `recap` is
//!   carried instead, and sticky says so.
//!
//! The rotation then records the kind and size of what was carried (`sessions.carried`).

use anyhow::Result;

use super::{Begun, Context, Running, Start, begin, decide, end};
use crate::cli::TurnArgs;
use crate::cmd::input::Prompt;
use crate::cmd::view::{escape, format_time};
use crate::exit::StickyError;
use crate::session::{Action, CarryKind, Plan, Request, Thread};
use crate::store::{Mode, SessionRow, Store, TurnStatus};

/// The purpose recorded on the summary turn.
const HANDOFF: &str = "handoff";

/// The smallest `--carry-max`: room for the recap's first and last lines and a little more.
const MIN_CARRY: usize = 512;

/// The turn's prompt with any recap before it, and the kind and size in bytes of that recap.
type Carried = (Option<Prompt>, Option<(CarryKind, i64)>);

/// The prompt with the recap before it, and the kind and size of the recap carried (`None`
/// when the plan carries none). An explicit `--carry` on a turn that replaces no session is a
/// usage error, so the user never believes a recap was carried when none was.
pub(super) fn prepare(
    ctx: &Context,
    store: &mut Store,
    args: &TurnArgs,
    request: Request<'_>,
    prompt: Option<Prompt>,
) -> Result<Carried> {
    let explicit = matches!(args.carry, Some(CarryKind::Recap | CarryKind::Summary));
    if request.carry.is_none() && request.carry_on_change == CarryKind::Off {
        return Ok((prompt, None));
    }
    let (thread, plan) = store.immediate(|tx| decide(ctx, tx, request))?;
    let (Some(kind), Some(old)) = (plan.carry, thread.live.as_ref()) else {
        if explicit {
            return Err(nothing_replaced(&thread, &plan).into());
        }
        return Ok((prompt, None));
    };
    if args.carry_max < MIN_CARRY {
        return Err(StickyError::Usage(format!(
            "--carry-max {} leaves no room for a recap; give at least {MIN_CARRY} bytes",
            args.carry_max
        ))
        .into());
    }
    let Some(mut prompt) = prompt else {
        if !ctx.quiet {
            eprintln!(
                "sticky: no recap carried into an interactive run (carry_on_change and --carry \
                 need a prompt to put it before)"
            );
        }
        return Ok((None, None));
    };
    let (recap, kind) = match kind {
        CarryKind::Summary => match summary(ctx, store, old, &plan, args.carry_max) {
            Ok(summary) => (summary, CarryKind::Summary),
            Err(why) => {
                if !ctx.quiet {
                    eprintln!(
                        "sticky: no handoff summary ({}); carrying sticky's own recap of the \
                         old session instead",
                        escape(&why)
                    );
                }
                (recap(store, old, args.carry_max)?, CarryKind::Recap)
            }
        },
        _ => (recap(store, old, args.carry_max)?, CarryKind::Recap),
    };
    prompt.text = [recap.as_bytes(), b"\n\n", &prompt.text].concat();
    let bytes = i64::try_from(recap.len()).unwrap_or(i64::MAX);
    Ok((Some(prompt), Some((kind, bytes))))
}

/// The first turn of a fork (`sticky fork`) on an agent without a fork of its own: the prompt
/// with sticky's recap of the source session before it, said on stderr. Any other turn's
/// prompt is returned as it is.
pub(super) fn fork_recap(
    ctx: &Context,
    store: &mut Store,
    args: &TurnArgs,
    request: Request<'_>,
    prompt: Option<Prompt>,
) -> Result<Option<Prompt>> {
    // Read without a write transaction (and without `decide`'s notes): most turns are no fork.
    let Some(thread) = store.thread(&ctx.thread)? else {
        return Ok(prompt);
    };
    let Some(live) = store
        .live_session(thread.id)?
        .filter(|live| live.confirmed_at.is_none() && live.forked_from.is_some())
    else {
        return Ok(prompt);
    };
    let tried = store.turn_count(live.id)? > 0;
    let plan = crate::session::plan(
        Some(crate::session::live_of(&live, tried, &ctx.agents)),
        request,
    );
    let Some(from) = live
        .forked_from
        .as_ref()
        .filter(|_| plan.action == Action::Restart)
    else {
        return Ok(prompt);
    };
    let adapter = ctx.agents.get(&plan.agent)?;
    if matches!(adapter.forking(), crate::agent::Forking::Own { .. }) {
        return Ok(prompt);
    }
    // An agent that forks by a copy (`Forking::Copy`) had none made: the source's files were
    // gone when the fork was recorded, so it starts with the recap too.
    let why = match adapter.forking() {
        crate::agent::Forking::Copy => "kept no file of the session it forks",
        _ => "has no fork of its own",
    };
    let Some(mut prompt) = prompt else {
        if !ctx.quiet {
            eprintln!(
                "sticky: {} {why}, and an interactive run takes no recap: this fork starts \
                 without thread {}'s history (give a prompt to carry it)",
                adapter.name(),
                escape(&from.thread)
            );
        }
        return Ok(None);
    };
    let source = store.session(from.session)?.ok_or_else(|| {
        StickyError::Usage(format!(
            "this thread forks session #{} of thread {}, which is gone (forgotten?); start it \
             afresh with `sticky new`",
            from.session,
            escape(&from.thread)
        ))
    })?;
    let recap = recap(store, &source, args.carry_max.max(MIN_CARRY))?;
    if !ctx.quiet {
        eprintln!(
            "sticky: {} {why}; the fork starts a new session with sticky's recap of thread \
             {}'s session ({} bytes, as --carry does)",
            adapter.name(),
            escape(&from.thread),
            recap.len()
        );
    }
    prompt.text = [recap.as_bytes(), b"\n\n", &prompt.text].concat();
    Ok(Some(prompt))
}

/// Why `--carry` has nothing to do on this turn.
fn nothing_replaced(thread: &Thread, plan: &Plan) -> StickyError {
    let what = match (plan.action, &thread.live) {
        (Action::Resume, Some(live)) => format!("resumes session #{}", live.id),
        (Action::Start, _) => "starts the conversation's first session".to_owned(),
        _ => "replaces no session the agent kept".to_owned(),
    };
    StickyError::Usage(format!(
        "--carry carries a recap of the session a turn replaces, but this turn {what}; \
         use `sticky new --carry \"PROMPT\"`, or --carry with another -m MODEL or -a AGENT"
    ))
}

/// Who the old session was, for the recap's first line.
fn named(old: &SessionRow) -> String {
    format!(
        "{} session {} (model {}, sticky session #{})",
        old.agent,
        old.agent_session_id.as_deref().unwrap_or("without an ID"),
        old.model.as_deref().unwrap_or("default"),
        old.id
    )
}

/// sticky's own recap of `old`: its prompts and answers, newest first, within `max` bytes.
fn recap(store: &Store, old: &SessionRow, max: usize) -> Result<String> {
    let mut entries = Vec::new();
    for turn in store.turns(old.thread_id)?.iter().rev() {
        if turn.session_id != old.id || turn.purpose.as_deref() == Some(HANDOFF) {
            continue;
        }
        let answer = store.answer(turn.id)?;
        entries.push(format!(
            "--- turn #{} ({}, {}) ---\nPrompt: {}\nAnswer: {}\n",
            turn.id,
            format_time(turn.started_at),
            turn.status,
            turn.prompt.as_deref().unwrap_or("(an interactive run)"),
            answer.map_or_else(|| "(none kept)".to_owned(), |answer| answer.text)
        ));
    }
    let head = format!(
        "[sticky: this conversation continues from an earlier {}, which sticky replaced. Its \
         prompts and answers follow, newest first.]\n",
        named(old)
    );
    Ok(bounded(&head, &entries, max))
}

/// The end of every recap.
const FOOT: &str = "[end of the recap; the new prompt follows]";

/// `head`, as many `entries` as fit, and [`FOOT`], in at most `max` bytes: the entry that does
/// not fit is cut, and the ones after it are counted as left out.
fn bounded(head: &str, entries: &[String], max: usize) -> String {
    // Room for the line that counts what was left out.
    const NOTE: usize = 64;
    let mut out = String::from(head);
    if entries.is_empty() {
        out.push_str("(it has no recorded prompts or answers)\n");
    }
    for (index, entry) in entries.iter().enumerate() {
        let room = max.saturating_sub(out.len() + FOOT.len() + NOTE);
        if entry.len() <= room {
            out.push_str(entry);
            continue;
        }
        if room > 0 {
            out.push_str(cut(entry, room.saturating_sub(4)));
            out.push_str("…\n");
        }
        let left = entries.len() - index - usize::from(room > 0);
        if left > 0 {
            out.push_str(&format!("[{left} older turn(s) left out]\n"));
        }
        break;
    }
    out.push_str(FOOT);
    cut(&out, max).to_owned()
}

/// The longest start of `text` within `max` bytes that ends on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Runs the handoff turn on `old` and returns the recap made of its answer, or why there is
/// none.
fn summary(
    ctx: &Context,
    store: &mut Store,
    old: &SessionRow,
    plan: &Plan,
    max: usize,
) -> Result<String, String> {
    if old.confirmed_at.is_none() || old.agent_session_id.is_none() {
        return Err("the old session was never saved by its agent".into());
    }
    let ask = format!(
        "sticky is about to continue this conversation in a new session ({}, model {}). Write \
         a handoff summary for it: the goal, what was decided and done, the current state of \
         the work (files, commands, results) and what comes next. Reply with the summary only, \
         in at most {max} bytes.",
        plan.agent,
        plan.model.as_deref().unwrap_or("default")
    );
    let prompt = Prompt {
        text: ask.clone().into_bytes(),
        summary: ask,
    };
    let turn_id = handoff_turn(ctx, store, &prompt).map_err(|error| format!("{error:#}"))?;
    let row = store
        .turn(turn_id)
        .map_err(|error| format!("{error:#}"))?
        .ok_or("its turn's row is gone")?;
    if row.status != TurnStatus::Ok {
        let why = row.ledger.error.unwrap_or_else(|| row.status.to_string());
        return Err(format!(
            "the summary turn #{turn_id} on the old session: {why}"
        ));
    }
    let answer = store
        .answer(turn_id)
        .map_err(|error| format!("{error:#}"))?
        .filter(|answer| !answer.text.trim().is_empty())
        .ok_or(format!("the summary turn #{turn_id} answered nothing"))?;
    let head = format!(
        "[sticky: this conversation continues from an earlier {}, which sticky replaced. It \
         wrote this handoff summary:]\n",
        named(old)
    );
    Ok(bounded(&head, &[format!("{}\n", answer.text)], max))
}

/// One turn on the live (old) session with `prompt`, recorded with the purpose `handoff`; its
/// answer is kept with it and not printed. Returns the turn's id.
fn handoff_turn(ctx: &Context, store: &mut Store, prompt: &Prompt) -> Result<i64> {
    let args = TurnArgs::default();
    let start = Start {
        request: Request {
            fresh: false,
            agent: None,
            model: None,
            default_agent: ctx.default_agent(),
            carry: None,
            carry_on_change: CarryKind::Off,
        },
        prompt: Some(prompt),
        mode: Mode::Headless,
        carried: None,
        purpose: Some(HANDOFF),
    };
    let begun: Begun<'_> = begin(ctx, store, &args, &start)?;
    let turn = Running::new(ctx, &begun, &args);
    let outcome = turn.headless(store, prompt);
    // The report (the summary as a turn would print it) is not printed: the summary goes into
    // the new session's first request instead.
    let _ = end::finish(&turn, store, outcome, None);
    Ok(begun.turn_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recap_keeps_the_newest_turns_within_its_bound() {
        let entries: Vec<String> = (1..=5)
            .rev()
            .map(|n| format!("--- turn #{n} ---\n{}\n", "x".repeat(100)))
            .collect();
        let all = bounded("[head]\n", &entries, 10_000);
        assert!(all.contains("turn #5") && all.contains("turn #1"), "{all}");
        assert!(all.find("turn #5") < all.find("turn #1"), "newest first");
        assert!(all.ends_with(FOOT));
        let small = bounded("[head]\n", &entries, 400);
        assert!(small.len() <= 400, "{}", small.len());
        assert!(small.contains("turn #5"), "{small}");
        assert!(!small.contains("turn #1"), "{small}");
        assert!(small.contains("left out"), "{small}");
        assert!(small.ends_with(FOOT));
        let tiny = bounded("[head]\n", &entries, 20);
        assert!(tiny.len() <= 20);
        let empty = bounded("[head]\n", &[], 1000);
        assert!(empty.contains("no recorded prompts"), "{empty}");
        assert_eq!(cut("héllo", 2), "h");
    }
}
