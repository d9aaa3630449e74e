//! `--carry`: the recap a new session starts with, placed before the user's prompt, so a
//! rotation (`sticky new`, another model or agent) does not start from nothing.
//!
//! The plan says whether a recap is carried (`session::plan`, `Plan::carry`); this file builds
//! it, bounded by `--carry-max`:
//! - `recap`: sticky's own record of the old session: its prompts and kept answers, newest
//!   first, naming its agent, model and session ID; older turns are left out, then the oldest
//!   one kept is cut, to fit.
//! - `summary`: one extra turn on the old session, a turn like any other (recorded with the
//!   purpose `handoff`, its files vaulted), asks it for a handoff summary ([`handoff`]), and
//!   its answer becomes the recap ([`summary`]); when that turn fails, the `recap` is carried
//!   instead, and sticky says so.
//!
//! What the turn will replace is read from a preview of its plan (`Thread::peek`, no write
//! transaction, nothing said): the plan itself is made once, in `begin`.
//!
//! The rotation then records the kind and size of what was carried (`sessions.carried`).

use anyhow::Result;

use super::super::Context;
use super::super::input::Prompt;
use super::super::view::{escape, format_time};
use super::print::Done;
use crate::cli::TurnArgs;
use crate::exit::StickyError;
use crate::session::{Action, CarryKind, Plan, Request};
use crate::store::{SessionRow, Store, TurnStatus};

/// The purpose recorded on the summary turn.
pub(super) const HANDOFF: &str = "handoff";

/// The smallest `--carry-max`: room for the recap's first and last lines and a little more.
const MIN_CARRY: usize = 512;

/// The recap the turn carries (its kind) and the session it carries from, by the `preview` of
/// the turn's plan (`None`: the thread has no session yet); `None` when the plan carries none.
/// An explicit `--carry` on a turn that replaces no session is a usage error, so the user
/// never believes a recap was carried when none was; so is one into an interactive run.
pub(super) fn wanted(
    args: &TurnArgs,
    request: Request<'_>,
    preview: Option<&Plan<&SessionRow>>,
    has_prompt: bool,
) -> Result<Option<(CarryKind, SessionRow)>> {
    let explicit = matches!(args.carry, Some(CarryKind::Recap | CarryKind::Summary));
    if request.carry.is_none() && request.carry_on_change == CarryKind::Off {
        return Ok(None);
    }
    let (Some(kind), Some(old)) = (
        preview.and_then(|plan| plan.carry),
        preview.and_then(|plan| plan.action.live()),
    ) else {
        if explicit {
            return Err(nothing_replaced(preview).into());
        }
        return Ok(None);
    };
    if args.carry_max < MIN_CARRY {
        return Err(StickyError::Usage(format!(
            "--carry-max {} leaves no room for a recap; give at least {MIN_CARRY} bytes",
            args.carry_max
        ))
        .into());
    }
    if !has_prompt {
        note!(
            "no recap carried into an interactive run (carry_on_change and --carry need a \
             prompt to put it before)"
        );
        return Ok(None);
    }
    Ok(Some((kind, (*old).clone())))
}

/// `prompt` with `recap` before it.
pub(super) fn before(mut prompt: Prompt, recap: &str) -> Prompt {
    prompt.text = [recap.as_bytes(), b"\n\n", &prompt.text].concat();
    prompt
}

/// The first turn of a fork (`sticky fork`) on an agent without a fork of its own, by the
/// `preview` of its plan: the prompt with sticky's recap of the source session before it, said
/// on stderr. Any other turn's prompt is returned as it is.
pub(super) fn fork_recap(
    ctx: &Context,
    store: &Store,
    args: &TurnArgs,
    preview: Option<&Plan<&SessionRow>>,
    prompt: Option<Prompt>,
) -> Result<Option<Prompt>> {
    let Some(plan) = preview else {
        return Ok(prompt);
    };
    let Action::Restart(live) = plan.action else {
        return Ok(prompt);
    };
    let Some(from) = live
        .forked_from
        .as_ref()
        .filter(|_| live.confirmed_at.is_none())
    else {
        return Ok(prompt);
    };
    let adapter = ctx.agents.get(&plan.agent)?;
    // An agent that forks by a copy (`Forking::Copy`) had none made: the source's files were
    // gone when the fork was recorded, so it starts with the recap too.
    let why = match adapter.forking() {
        crate::agent::Forking::Own { .. } => return Ok(prompt),
        crate::agent::Forking::Copy => "kept no file of the session it forks",
        crate::agent::Forking::Recap => "has no fork of its own",
    };
    let Some(prompt) = prompt else {
        note!(
            "{} {why}, and an interactive run takes no recap: this fork starts without thread \
             {}'s history (give a prompt to carry it)",
            adapter.name(),
            escape(&from.thread)
        );
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
    note!(
        "{} {why}; the fork starts a new session with sticky's recap of thread {}'s session \
         ({} bytes, as --carry does)",
        adapter.name(),
        escape(&from.thread),
        recap.len()
    );
    Ok(Some(before(prompt, &recap)))
}

/// Why `--carry` has nothing to do on this turn.
fn nothing_replaced(preview: Option<&Plan<&SessionRow>>) -> StickyError {
    let what = match preview.map(|plan| &plan.action) {
        Some(Action::Resume(live)) => format!("resumes session #{}", live.id),
        None | Some(Action::Start) => "starts the conversation's first session".to_owned(),
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
pub(super) fn recap(store: &Store, old: &SessionRow, max: usize) -> Result<String> {
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

/// The prompt of the handoff turn on `old`, asking for a summary in at most `max` bytes for the
/// new session the plan starts; `None` when `old` was never saved by its agent (there is
/// nothing to ask).
pub(super) fn handoff(old: &SessionRow, plan: &Plan<&SessionRow>, max: usize) -> Option<Prompt> {
    if old.confirmed_at.is_none() || old.agent_session_id.is_none() {
        return None;
    }
    let ask = format!(
        "sticky is about to continue this conversation in a new session ({}, model {}). Write \
         a handoff summary for it: the goal, what was decided and done, the current state of \
         the work (files, commands, results) and what comes next. Reply with the summary only, \
         in at most {max} bytes.",
        plan.agent,
        plan.model.as_deref().unwrap_or("default")
    );
    Some(Prompt {
        text: ask.clone().into_bytes(),
        summary: ask,
    })
}

/// The recap made of the handoff turn `done` on `old` (its answer, kept with it and not
/// printed), or why there is none.
pub(super) fn summary(old: &SessionRow, done: &Done<'_>, max: usize) -> Result<String, String> {
    let turn_id = done.begun.turn_id;
    if let Some(error) = &done.settled.error {
        return Err(format!("{error:#}"));
    }
    if done.verdict.status != TurnStatus::Ok {
        let why = done
            .verdict
            .error
            .clone()
            .unwrap_or_else(|| done.verdict.status.to_string());
        return Err(format!(
            "the summary turn #{turn_id} on the old session: {why}"
        ));
    }
    let answer = done
        .outcome
        .observed
        .answer()
        .filter(|answer| !answer.trim().is_empty())
        .ok_or(format!("the summary turn #{turn_id} answered nothing"))?;
    let head = format!(
        "[sticky: this conversation continues from an earlier {}, which sticky replaced. It \
         wrote this handoff summary:]\n",
        named(old)
    );
    Ok(bounded(&head, &[format!("{answer}\n")], max))
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
