//! What the user asks of a turn, read before anything is opened: the thread's name, `--fork`
//! made first, the prompt (arguments and piped stdin) and how the turn runs.

use std::io::IsTerminal;

use anyhow::Result;

use super::super::Context;
use super::super::input::{self, Prompt};
use super::super::view::escape;
use super::fork;
use crate::cli::TurnArgs;
use crate::config::StdinMode;
use crate::exit::StickyError;
use crate::store::Mode;

/// `-t NAME --fork`: makes thread NAME a fork of the thread the turn would use without `-t`
/// ([`thread_without_flag`]) before the turn runs on it.
pub(super) fn fork_first(ctx: &Context, turn: &TurnArgs, fresh: bool) -> Result<()> {
    if fresh {
        return Err(StickyError::Usage(
            "--fork makes a thread that goes on from another, and `sticky new` starts afresh; \
             use one of them"
                .into(),
        )
        .into());
    }
    if ctx.origins.thread != crate::cli::Origin::Flag {
        return Err(StickyError::Usage(
            "--fork names the new thread with -t: sticky -t NAME --fork \"PROMPT\" (or sticky \
             fork NAME \"PROMPT\")"
                .into(),
        )
        .into());
    }
    let source = thread_without_flag(ctx)?;
    // The agent and model the turn asks for: the fork is made with them (another agent is
    // refused), as `sticky fork NAME` makes it.
    let args = TurnArgs {
        agent: turn.agent.clone(),
        model: turn.model.clone(),
        wait: turn.wait,
        no_wait: turn.no_wait,
        ..TurnArgs::default()
    };
    fork::make(ctx, &source, &ctx.thread, &args).map(drop)
}

/// The thread a turn without `-t` uses, resolved as the context resolves it
/// (`settings::resolve_thread`): `STICKY_THREAD` (`@branch` and `@pr` followed), else the
/// configuration's `thread`, else `main`.
pub(super) fn thread_without_flag(ctx: &Context) -> Result<String> {
    use crate::cli::{GlobalArgs, Origin, Origins};
    let variable = std::env::var("STICKY_THREAD")
        .ok()
        .filter(|name| !name.is_empty());
    let origins = Origins {
        thread: if variable.is_some() {
            Origin::Environment
        } else {
            Origin::Default
        },
        ..ctx.origins
    };
    let global = GlobalArgs {
        thread: variable.unwrap_or_else(|| "main".to_owned()),
        ..GlobalArgs::default()
    };
    let chosen =
        crate::settings::resolve_thread(&global, origins, &ctx.settings.config, &ctx.project.dir)?;
    if let Some(note) = chosen.note.as_deref() {
        aside!("{}", escape(note));
    }
    Ok(chosen.setting.value)
}

/// The prompt from the arguments and piped stdin. Piped input is optional when there is a
/// prompt, and for `sticky new` (which only rotates without one): `--stdin` and the pipe's
/// writer decide how long it is waited for (`input::should_read`); input that `skip` drops is
/// said (`input::holds_skipped_input`).
pub(super) fn read_prompt(
    ctx: &Context,
    args: &TurnArgs,
    fresh: bool,
    stdin_is_terminal: bool,
) -> Result<Option<Prompt>> {
    let stdin = std::io::stdin();
    let optional = !args.prompt.is_empty() || fresh;
    let mut read_stdin = false;
    if !stdin_is_terminal {
        let mode = ctx.settings.stdin(args.stdin)?;
        if mode.value == StdinMode::Skip && !optional {
            return Err(StickyError::Usage(format!(
                "no prompt: stdin is skipped (--stdin skip, from {}); give the prompt as \
                 arguments",
                mode.origin
            ))
            .into());
        }
        // Skipped input that is there (or is coming) is dropped: said once, wherever stderr
        // goes, when a setting the user may have forgot (STICKY_STDIN, the configuration)
        // skips it. `--stdin skip` on this very command line is said already.
        if mode.value == StdinMode::Skip
            && mode.origin != "--stdin"
            && !ctx.quiet
            && input::holds_skipped_input(&stdin)
        {
            eprintln!("{}", escape(&input::skipped_note(&mode.origin)));
        }
        let on_terminal = !ctx.quiet && std::io::stderr().is_terminal();
        let mut note = |note: input::Note| {
            // The wait is said once, and only to a person; giving up is said anywhere, since
            // a turn without the input the user meant to send must not pass unremarked.
            let tell = match note {
                input::Note::Waiting(_) => on_terminal,
                input::Note::GaveUp(_) => !ctx.quiet,
            };
            if tell {
                eprintln!("{note}");
            }
        };
        read_stdin =
            input::should_read(&stdin, mode.value, optional, input::STDIN_GRACE, &mut note);
    }
    let mut stdin = stdin;
    Ok(input::gather(
        &args.prompt,
        read_stdin.then_some(&mut stdin as _),
    )?)
}

/// How the turn runs: headless with a prompt, interactive on a terminal without one; `None`
/// for `sticky new` without a prompt (it only rotates). Refuses no prompt off a terminal.
pub(super) fn mode(
    args: &TurnArgs,
    has_prompt: bool,
    fresh: bool,
    stdin_is_terminal: bool,
) -> Result<Option<Mode>> {
    Ok(Some(match (has_prompt, fresh) {
        (true, _) => Mode::Headless,
        (false, true) => return Ok(None),
        (false, false) if stdin_is_terminal && std::io::stdout().is_terminal() => Mode::Interactive,
        (false, false) if !args.agent_args.is_empty() => {
            return Err(StickyError::Usage(
                "no prompt: everything after `--` goes to the agent; give the prompt before \
                 `--` (sticky \"PROMPT\" -- AGENT_ARGS) or with -p"
                    .into(),
            )
            .into());
        }
        (false, false) if stdin_is_terminal => {
            return Err(StickyError::Usage(
                "no prompt, and the agent's own UI needs stdout on the terminal too; give the \
                 prompt as arguments for a headless turn (sticky \"PROMPT\" | ...)"
                    .into(),
            )
            .into());
        }
        (false, false) => {
            return Err(StickyError::Usage(
                "no prompt: give one as arguments or on stdin, or run sticky on a terminal for \
                 the agent's own UI"
                    .into(),
            )
            .into());
        }
    }))
}

/// A thread's name is shown in every listing and prompt line, so a new thread whose name holds
/// a control character is refused before anything is written. (An existing one, made by an
/// older sticky, stays usable; the listings escape its name.) So is one with a space before or
/// after it: `-t "main "` would start a thread that every listing shows as `main`. An empty or
/// blank name is refused for every command by [`Context`].
pub(super) fn ensure_thread_name(ctx: &Context) -> Result<()> {
    let problem = if ctx.branch.is_some() {
        super::super::followed_name_problem(&ctx.thread)
    } else {
        super::super::thread_name_problem(&ctx.thread)
    };
    let Some(problem) = problem else {
        return Ok(());
    };
    if let Some(store) = ctx.existing_store()? {
        if store.thread(&ctx.thread)?.is_some() {
            return Ok(());
        }
    }
    Err(StickyError::Usage(format!(
        "the thread name \"{}\" {problem} (-t NAME, STICKY_THREAD)",
        ctx.thread
    ))
    .into())
}
