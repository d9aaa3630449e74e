//! sticky with the real opencode 1.18.33 against the mock: what opencode supplies to the
//! [`scenarios`](super::scenarios) (issue 4, part 3: the history survives between sticky
//! invocations in the session opencode really used, and `new` starts afresh; also another
//! `--model`, a turn from a subdirectory and a lost session; issue 15, part 12: a tool turn in
//! Chat Completions' form).
//!
//! opencode mints its session IDs (`ses_…`) and sticky learns each from its events; every
//! request opencode sends names its session in the `x-session-id` header. Its first turn also
//! sends a title request, which [`Tier::turn`] tells apart from the turn by its reply.

use super::lines_after;
use super::scenarios::{Lost, Model, Profile, Tools};
use super::tier::Tier;
use crate::mock::Request;

/// What opencode supplies to the shared scenarios.
pub const PROFILE: Profile = Profile {
    // Several words and quotes: `opencode run` quotes a message argument that holds spaces, so
    // only a prompt given another way reaches the model as typed.
    remember: "remember the word \"kumquat\"",
    session_header: Some("x-session-id"),
    // The model of the world's opencode configuration.
    default_model: Some("mock-model"),
    // Declared in the world's opencode configuration, which refuses a model it does not know.
    other_model: Some(Model {
        given: "mock/mock-other",
        sent: "mock-other",
    }),
    assert_kept,
    working_directories: Some(working_directories),
    lost: Some(Lost {
        forget,
        says: "Session not found",
    }),
    ui: None,
    // `run --auto` approves what the configuration does not deny (`opencode run --help`).
    tools: Some(Tools {
        permissions: &["--auto"],
        // 1.18.33 writes its `tool_use` event only once the tool completed
        // (`"state":{"status":"completed",...}`, observed with a command held until a file
        // appeared), so sticky has nothing to show while it runs.
        activity: None,
    }),
    api_failure: None,
};

/// opencode keeps every session in one database, not a file per session: the stored ID is one
/// opencode minted (the requests naming it are checked by the scenarios).
#[track_caller]
fn assert_kept(_tier: &Tier, stored: &str, _turns: &[&Request]) {
    assert!(stored.starts_with("ses_"), "{stored}");
}

/// Every working directory opencode states in a request (in the `<env>` of its system prompt;
/// opencode takes it from `$PWD`).
fn working_directories(request: &Request) -> Vec<String> {
    lines_after(request, "  Working directory: ")
}

/// Deletes opencode's data directory, where its one database keeps every session.
#[track_caller]
fn forget(tier: &Tier, _stored: &str) {
    let data = tier.world.home.join(".local/share/opencode");
    std::fs::remove_dir_all(&data).expect("remove opencode's data directory");
}
