//! `sticky prompt`: one line for a shell prompt, `claude 3f2a9c1b ok`.
//!
//! A prompt runs this before every command line, so it does the least a status can: locate the
//! project, open the database if there is one, and read three indexed rows. It reads no
//! configuration, looks up no agent and runs nothing (but git, for `-t @branch`); without
//! sticky state it prints nothing.

use anyhow::Result;
use serde::Serialize;

use super::output::Report;
use super::view::{escape, short_id, shown_status, status_name};
use super::{Call, Run, json_keys};
use super::{start_dir, sticky_db};
use crate::cli::{GlobalArgs, Origin, Origins};
use crate::config::Config;
use crate::project;
use crate::settings;
use crate::store::Store;

/// `sticky prompt` takes no options of its own.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {}

/// The `--json` object.
#[derive(Serialize, Default)]
struct PromptView<'a> {
    thread: &'a str,
    agent: &'a str,
    model: Option<&'a str>,
    /// The agent's session ID, whole.
    agent_session_id: Option<&'a str>,
    /// The last turn's status, `null` before the first turn of the session's thread.
    status: Option<&'static str>,
}

impl Run for Args {
    fn run(&self, call: &Call<'_>) -> Result<Report> {
        run(call.global)
    }

    fn json_keys(&self) -> Vec<String> {
        json_keys::<PromptView<'static>>()
    }
}

/// Prints the prompt line of the conversation, or nothing.
fn run(global: &GlobalArgs) -> Result<Report> {
    let project = project::locate(&start_dir(global)?, sticky_db().as_deref())?;
    let Some(store) = Store::open_existing(&project.state.db)? else {
        return Ok(Report::nothing());
    };
    // `-t @branch` (or `STICKY_THREAD=@branch`) asks git, and only then; the configuration's
    // `thread` is not read, as nothing of it is.
    let name = match global.thread.as_str() {
        settings::FOLLOW_BRANCH | settings::FOLLOW_PR => {
            let origins = Origins {
                thread: Origin::Flag,
                ..Origins::default()
            };
            match settings::resolve_thread(global, origins, &Config::default(), &project.dir) {
                Ok(chosen) => chosen.setting.value,
                // Outside git there is no branch's conversation to show.
                Err(_) => return Ok(Report::nothing()),
            }
        }
        name => name.to_owned(),
    };
    let Some(thread) = store.thread(&name)? else {
        return Ok(Report::nothing());
    };
    let Some(session) = store.live_session(thread.id)? else {
        return Ok(Report::nothing());
    };
    let status = store
        .last_turn(thread.id)?
        .map(|turn| status_name(shown_status(&turn)));
    let view = PromptView {
        thread: &thread.name,
        agent: &session.agent,
        model: session.model.as_deref(),
        agent_session_id: session.agent_session_id.as_deref(),
        status,
    };
    if global.json {
        Report::json(&view)
    } else {
        Ok(Report::text(
            format!("{}\n", escape(&line(&view))).into_bytes(),
        ))
    }
}

/// `[thread:]agent short-id [status]`; the thread is named only when it is not `main`.
fn line(view: &PromptView<'_>) -> String {
    let mut line = String::new();
    if view.thread != "main" {
        line.push_str(view.thread);
        line.push(':');
    }
    line.push_str(view.agent);
    line.push(' ');
    line.push_str(view.agent_session_id.map_or("new", short_id));
    if let Some(status) = view.status {
        line.push(' ');
        line.push_str(status);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_short_and_names_other_threads() {
        let mut view = PromptView {
            thread: "main",
            agent: "claude",
            model: None,
            agent_session_id: Some("3f2a9c1b-0d4e-4a7b-9c1d-2e3f4a5b6c7d"),
            status: Some("ok"),
        };
        assert_eq!(line(&view), "claude 3f2a9c1b ok");
        view.thread = "review";
        view.status = None;
        assert_eq!(line(&view), "review:claude 3f2a9c1b");
        view.agent_session_id = None;
        assert_eq!(line(&view), "review:claude new");
    }
}
