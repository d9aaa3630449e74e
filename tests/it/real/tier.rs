//! What every `sticky_<agent>` test of the tier starts from: a running mock, a world whose
//! sticky runs one real agent by default, and turn helpers that read what the agent really did
//! from the mock's requests, never from sticky's own account alone.

use std::path::Path;
use std::time::{Duration, Instant};

use super::{Agent, AgentHome, DEADLINE, Finished, require};
use crate::mock::{MockServer, Request};

/// The mock and a world for one agent, with the turn helpers of the tests.
pub struct Tier {
    /// The agent this tier runs.
    pub agent: Agent,
    /// The mock model server every agent of the world talks to.
    pub mock: MockServer,
    /// The HOME and project; sticky runs `agent` there by default.
    pub world: AgentHome,
}

impl Tier {
    /// A running mock and a fresh world for `agent`, or `None` (after a loud skip) when the
    /// agent is not installed.
    #[track_caller]
    pub fn start(agent: Agent) -> Option<Tier> {
        require(agent)?;
        let mock = MockServer::start().expect("start the mock");
        let world = AgentHome::for_agent(&mock, agent);
        Some(Tier { agent, mock, world })
    }

    /// Runs `sticky ARGS... PROMPT` in `cwd`, asserts that it succeeded and printed exactly the
    /// reply of one model request, and returns that request, whose last user message must be
    /// `prompt` verbatim. Found by its reply, not by its prompt: some agents send side requests
    /// that end with the same words (opencode's title request).
    #[track_caller]
    pub fn turn_in(&self, cwd: &Path, args: &[&str], prompt: &str) -> Request {
        let mut words: Vec<&str> = args.to_vec();
        words.push(prompt);
        let finished = self.world.sticky(cwd, &words);
        finished.assert_success();
        let request = self.answered(&finished);
        assert_eq!(
            request.summary.last_user, prompt,
            "the prompt reaches the model literally: {finished}"
        );
        request
    }

    /// [`Tier::turn_in`] in the project directory.
    #[track_caller]
    pub fn turn(&self, args: &[&str], prompt: &str) -> Request {
        self.turn_in(&self.world.project, args, prompt)
    }

    /// The model request whose reply a finished turn printed (stdout carries the answer and
    /// nothing else).
    #[track_caller]
    pub fn answered(&self, finished: &Finished) -> Request {
        let answer = finished.stdout.trim_end();
        let turns = self.mock.turns();
        turns
            .iter()
            .find(|t| !t.reply.is_empty() && t.reply == answer)
            .cloned()
            .unwrap_or_else(|| {
                panic!(
                    "stdout is not the reply of any model request: {finished}\nthe mock saw: {:#?}",
                    turns
                        .iter()
                        .map(|t| (&t.path, &t.summary))
                        .collect::<Vec<_>>()
                )
            })
    }

    /// The session `request` belongs to as the agent named it (the request header its
    /// [`Profile`](super::scenarios::Profile) gives), if its requests name one.
    #[track_caller]
    pub fn request_session(&self, request: &Request) -> Option<String> {
        let header = self.agent.profile().session_header?;
        let named = request
            .header(header)
            .unwrap_or_else(|| panic!("no {header} header on {:?}", request.headers));
        Some(named.to_owned())
    }

    /// The session of a turn's `request`: the one its request names, or, for an agent whose
    /// requests name none, the one sticky stores now (so called right after the turn).
    #[track_caller]
    pub fn session_of(&self, request: &Request) -> String {
        self.request_session(request)
            .unwrap_or_else(|| self.stored_session_id())
    }

    /// Waits until one of the agent's `.jsonl` files under `under` (in the world's HOME)
    /// records `reply`. Gemini CLI, Qwen Code and Codex write a reply to their session file
    /// after drawing it, so a UI quit right after the reply appears (as a loaded machine lets
    /// happen) can exit before the record exists, or cut the turn short; the answer sticky
    /// keeps from an interactive turn is the file's last one.
    #[track_caller]
    pub fn wait_for_record(&self, under: &str, reply: &str) {
        crate::support::wait_for(&format!("a chat under {under} to record {reply}"), || {
            self.world
                .files_under(under, ".jsonl")
                .iter()
                .any(|chat| std::fs::read_to_string(chat).is_ok_and(|text| text.contains(reply)))
        });
    }

    /// The agent session ID sticky stores for the project's conversation.
    #[track_caller]
    pub fn stored_session_id(&self) -> String {
        let status = self.world.sticky_ok(["status", "--json"]).json();
        assert_eq!(
            status["session"]["agent"],
            self.agent.name(),
            "the session belongs to the tier's agent"
        );
        status["session"]["agent_session_id"]
            .as_str()
            .unwrap_or_else(|| panic!("no session.agent_session_id in {status}"))
            .to_owned()
    }

    /// Runs `sticky PROMPT` on a stored session the agent can no longer resume, and asserts
    /// that sticky reports it lost (exit 73, naming the session, the agent and `sticky new`),
    /// sent nothing to the model, kept the session, and recorded the turn as failed. Returns
    /// sticky's stderr.
    #[track_caller]
    pub fn assert_lost(&self, prompt: &str) -> String {
        let session = self.stored_session_id();
        let requests_before = self.mock.requests().len();
        let lost = self.world.sticky(&self.world.project, [prompt]);
        assert_eq!(lost.status.code(), Some(73), "session lost is 73: {lost}");
        for named in [session.as_str(), self.agent.name(), "sticky new"] {
            assert!(
                lost.stderr.contains(named),
                "the message names {named:?}: {lost}"
            );
        }
        assert!(lost.stdout.is_empty(), "no answer on stdout: {lost}");
        let sent: Vec<_> = self.mock.requests()[requests_before..]
            .iter()
            .filter(|r| r.is_turn())
            .map(|r| r.summary.clone())
            .collect();
        assert!(
            sent.is_empty(),
            "nothing goes to the model for a lost session: {sent:#?}"
        );
        assert_eq!(
            self.stored_session_id(),
            session,
            "sticky never starts a fresh session on its own"
        );
        let log = self.world.sticky_ok(["log", "--json"]).json();
        let last_turn = log["sessions"]
            .as_array()
            .and_then(|sessions| sessions.last())
            .and_then(|session| session["turns"].as_array())
            .and_then(|turns| turns.last())
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            last_turn["status"], "failed",
            "the lost turn is recorded: {log}"
        );
        assert_eq!(last_turn["prompt"], prompt);
        lost.stderr
    }

    /// The model request for `prompt`, waiting for it to arrive (an interactive agent sends it
    /// on its own time).
    #[track_caller]
    pub fn request_for_eventually(&self, prompt: &str) -> Request {
        self.request_eventually(prompt, |user| user == prompt)
    }

    /// The model request for a word typed into an agent's UI, which may hold it more than once:
    /// a word retyped because its echo was late (see `Terminal::type_until_echoed`).
    #[track_caller]
    pub fn request_for_typed_eventually(&self, word: &str) -> Request {
        self.request_eventually(word, |user| {
            !user.is_empty() && user.split(word).all(str::is_empty)
        })
    }

    /// The first model request whose last user message is `accepted`, waiting for it.
    #[track_caller]
    fn request_eventually(&self, prompt: &str, accepted: impl Fn(&str) -> bool) -> Request {
        let started = Instant::now();
        loop {
            if let Some(request) = self
                .mock
                .turns()
                .into_iter()
                .find(|t| accepted(&t.summary.last_user))
            {
                return request;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "the agent sent no request for {prompt:?}; the mock saw: {:#?}",
                self.mock
                    .turns()
                    .iter()
                    .map(|t| &t.summary)
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Asserts that no process of this world outlived sticky, waiting briefly: a helper the
    /// agent started may take a moment to see its parent gone.
    #[track_caller]
    pub fn assert_no_processes_left(&self) {
        let started = Instant::now();
        loop {
            let left: Vec<String> = self
                .world
                .processes()
                .into_iter()
                .map(|(pid, cmdline)| format!("{pid}: {cmdline}"))
                .collect();
            if left.is_empty() {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{} left processes running after sticky exited: {left:#?}",
                self.agent.name()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Writes sticky's configuration file in this world's HOME (`~/.config/sticky/config.toml`),
    /// as a user sets an agent's arguments and environment.
    #[track_caller]
    pub fn configure_sticky(&self, toml: &str) {
        let config = self.world.home.join(".config/sticky/config.toml");
        std::fs::create_dir_all(config.parent().expect("a directory"))
            .expect("create sticky's configuration directory");
        std::fs::write(&config, toml).expect("write sticky's configuration");
    }
}
