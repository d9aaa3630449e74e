//! A mock model server for running the real agent CLIs offline: Anthropic Messages, OpenAI
//! Responses and Chat Completions, and Gemini, streamed and not, on 127.0.0.1 with a free port.
//!
//! Every request is recorded (method, path, headers, parsed body and a summary of the
//! conversation it carries) and answered with a text that states what the request held:
//! `MOCK-REPLY-<seq> [api=.. model=.. user_msgs=U assistant_msgs=A] you said: <last user text>`.
//! A resumed turn therefore shows `assistant_msgs>=1` both in the recorded request and in the
//! agent's own answer, which is how the real-agent tests see that history survived.
//!
//! Fault hooks, read from the last user text: `MOCK-FAIL-<status>` answers that HTTP error
//! (500, 429, ...) in the API's error shape, and `MOCK-FAIL-<status>x<N>` only the first N
//! requests that carry it (an agent that retries then succeeds); `MOCK-DELAY-<ms>` waits that
//! long before answering. Note that the agents retry a 500 and a 429 with backoff, so a fault
//! test bounds their retries.
//!
//! Tool hook: `MOCK-SHELL <command>` answers with a call of the agent's own shell tool, and the
//! request that brings its result back with the usual text (see [`tool`]).
//!
//! The server is `tiny_http`: a blocking HTTP/1.1 server with no async runtime, small enough
//! to read and robust for a handful of concurrent clients. Each request is handled on its own
//! thread, so a delayed reply never holds up another CLI's side request. Dropping the
//! `MockServer` stops accepting and joins the accept thread.
//!
//! Also compiled into `examples/mock_model.rs` for manual runs against an agent.

// Vendor and API names (OpenAI, SQLite) are prose here, not code to put in backticks.
#![allow(clippy::doc_markdown)]

mod decode;
mod reply;
mod schema;
mod summary;
#[cfg(test)]
mod tests;
pub mod tool;

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

pub use summary::{Route, Summary};

/// The marker that makes the mock answer HTTP 500.
pub const FAIL_500: &str = "MOCK-FAIL-500";
/// The marker prefix of a failure: `MOCK-FAIL-<status>`, or `MOCK-FAIL-<status>x<N>` for only
/// the first N requests that carry it.
pub const FAIL: &str = "MOCK-FAIL-";
/// The marker prefix that delays the reply: `MOCK-DELAY-<milliseconds>`.
pub const DELAY: &str = "MOCK-DELAY-";
/// The longest delay honoured, so a typo cannot hang a test run.
const MAX_DELAY: Duration = Duration::from_secs(600);

/// One request the mock received.
#[derive(Debug, Clone, Serialize)]
pub struct Request {
    /// The arrival number, from 1; the reply text carries it as `MOCK-REPLY-<seq>`.
    pub seq: u64,
    /// The HTTP method.
    pub method: String,
    /// The path, without the query string.
    pub path: String,
    /// The query string, without `?` (empty when there is none).
    pub query: String,
    /// The endpoint the request was routed to.
    pub route: Route,
    /// Headers by lower-case name; repeated headers are joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The body, decompressed and parsed as JSON (a string if it was not JSON, `null` if empty).
    pub body: Value,
    /// What the conversation in the body holds.
    pub summary: Summary,
    /// The reply text sent (empty for non-conversation routes, failures and tool calls).
    pub reply: String,
    /// The tool call the mock answered with, if it did (see [`tool`]).
    pub tool_call: Option<tool::ToolCall>,
    /// Why the body could not be decoded, if it could not.
    pub decode_error: Option<String>,
}

impl Request {
    /// The value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// Whether this is a model turn (a conversation request), not a side request such as a
    /// token count or a model list.
    pub fn is_turn(&self) -> bool {
        self.route.is_turn()
    }

    /// The token counts the mock's answer to this conversation request stated in its usage
    /// fields, `(input, output)`, none of them cached (`input_tokens`/`promptTokenCount`/
    /// `prompt_tokens`, and `output_tokens`/`candidatesTokenCount`/`completion_tokens`; see
    /// `reply`): what the ledger of the turn that made it must hold.
    pub fn stated_usage(&self) -> (u64, u64) {
        reply::stated_usage(&self.reply)
    }
}

/// How to start a mock server.
#[derive(Debug, Clone, Default)]
pub struct MockConfig {
    /// The port to listen on; 0 (the default) picks a free one.
    pub port: u16,
    /// A file that receives every request as one JSON line, appended.
    pub log: Option<PathBuf>,
}

/// A running mock model server; dropping it stops it.
pub struct MockServer {
    /// Shared with the accept thread only, so the drop holds the last reference after joining
    /// it and closes the listening socket, even while a delayed reply is still being sent.
    server: Option<Arc<tiny_http::Server>>,
    shared: Arc<Shared>,
    port: u16,
    acceptor: Option<JoinHandle<()>>,
}

/// What the accept thread and the request threads share with the handle.
struct Shared {
    stopping: AtomicBool,
    seq: AtomicU64,
    requests: Mutex<Vec<Request>>,
    log: Option<Mutex<File>>,
    /// How often each `MOCK-FAIL-<status>x<N>` marker has failed a request so far.
    failed: Mutex<HashMap<String, u64>>,
}

impl MockServer {
    /// Starts a server on 127.0.0.1 with a free port.
    pub fn start() -> io::Result<MockServer> {
        MockServer::start_with(MockConfig::default())
    }

    /// Starts a server as `config` says.
    pub fn start_with(config: MockConfig) -> io::Result<MockServer> {
        let server =
            tiny_http::Server::http(("127.0.0.1", config.port)).map_err(io::Error::other)?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|addr| addr.port())
            .ok_or_else(|| io::Error::other("mock: not listening on an IP address"))?;
        let log = match config.log {
            Some(path) => Some(Mutex::new(
                OpenOptions::new().create(true).append(true).open(path)?,
            )),
            None => None,
        };
        let server = Arc::new(server);
        let shared = Arc::new(Shared {
            stopping: AtomicBool::new(false),
            seq: AtomicU64::new(0),
            requests: Mutex::new(Vec::new()),
            log,
            failed: Mutex::new(HashMap::new()),
        });
        let acceptor = {
            let (server, shared) = (Arc::clone(&server), Arc::clone(&shared));
            thread::Builder::new()
                .name(format!("mock-accept-{port}"))
                .spawn(move || accept(&server, &shared))?
        };
        Ok(MockServer {
            server: Some(server),
            shared,
            port,
            acceptor: Some(acceptor),
        })
    }

    /// The base URL, `http://127.0.0.1:PORT` (no trailing slash, no `/v1`).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        let mut requests = lock(&self.shared.requests).clone();
        requests.sort_by_key(|r| r.seq);
        requests
    }

    /// The conversation requests (model turns) received so far, in arrival order.
    pub fn turns(&self) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(Request::is_turn)
            .collect()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        if let Some(server) = &self.server {
            server.unblock();
        }
        if let Some(acceptor) = self.acceptor.take() {
            // The accept thread only waits in `recv`, which `unblock` ends; request threads are
            // left to finish on their own (a delayed reply must not block the drop).
            let _ = acceptor.join();
        }
        // The last reference: tiny_http's own listener thread stops and closes the socket.
        self.server.take();
    }
}

/// A poisoned lock still holds good data here: a panicking request thread wrote nothing half.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The accept loop: one thread per request, until the server is dropped.
fn accept(server: &tiny_http::Server, shared: &Arc<Shared>) {
    loop {
        match server.recv() {
            Ok(request) => {
                let shared = Arc::clone(shared);
                let spawned = thread::Builder::new()
                    .name("mock-request".to_owned())
                    .spawn(move || handle(&shared, request));
                if let Err(error) = spawned {
                    eprintln!("mock: cannot spawn a request thread: {error}");
                }
            }
            Err(_) if shared.stopping.load(Ordering::SeqCst) => return,
            // A failed accept (a client that vanished) is no reason to stop serving.
            Err(_) => {}
        }
    }
}

/// Reads, records and answers one request.
fn handle(shared: &Shared, mut http: tiny_http::Request) {
    let seq = shared.seq.fetch_add(1, Ordering::SeqCst) + 1;
    let method = http.method().as_str().to_owned();
    let (path, query) = match http.url().split_once('?') {
        Some((path, query)) => (path.to_owned(), query.to_owned()),
        None => (http.url().to_owned(), String::new()),
    };
    let mut headers: BTreeMap<String, String> = BTreeMap::new();
    for header in http.headers() {
        let name = header.field.as_str().as_str().to_ascii_lowercase();
        let value = header.value.as_str().to_owned();
        headers
            .entry(name)
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    let mut raw = Vec::new();
    let read = http.as_reader().read_to_end(&mut raw);
    let decoded = read
        .map_err(|error| format!("reading the body: {error}"))
        .and_then(|_| decode::decompress(headers.get("content-encoding").map(String::as_str), raw));
    let (body, decode_error) = match decoded {
        Ok(bytes) => (decode::parse(&bytes), None),
        Err(error) => (Value::Null, Some(error)),
    };

    let route = Route::of(&method, &path);
    let summary = summary::summarize(route, &path, &body);
    let text = match schema::requested(route, &body) {
        Some(schema) => schema::value_for(&schema).to_string(),
        None => reply::text_for(seq, &summary),
    };
    let call = tool::requested(route, seq, &summary, &body);
    let answer = if route == Route::Other {
        reply::unrouted(&method)
    } else if let Some(status) = shared.failure(&summary.last_user) {
        reply::failure(route, status)
    } else if let Some(call) = &call {
        tool::answer(route, seq, &summary, call)
    } else {
        reply::answer(route, seq, &summary, &text)
    };
    let answered_text = answer.status == 200 && route.is_turn() && call.is_none();
    let record = Request {
        seq,
        method,
        path,
        query,
        route,
        headers,
        body,
        summary,
        reply: if answered_text { text } else { String::new() },
        tool_call: call.filter(|_| answer.status == 200),
        decode_error,
    };
    let delay = delay_of(&record.summary.last_user);
    shared.record(record);

    if let Some(delay) = delay {
        thread::sleep(delay);
    }
    send(http, answer);
}

impl Shared {
    /// The HTTP status the last `MOCK-FAIL-<status>[x<N>]` marker in `text` asks for (an
    /// agent may join a failed prompt and the next one into one message), counting the
    /// failures of a marker with a limit; `None` once the limit is reached, or with no marker.
    fn failure(&self, text: &str) -> Option<u16> {
        let (_, rest) = text.rsplit_once(FAIL)?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let status: u16 = digits.parse().ok().filter(|s| (400..600).contains(s))?;
        let Some(times) = rest[digits.len()..].strip_prefix('x') else {
            return Some(status);
        };
        let count: String = times.chars().take_while(char::is_ascii_digit).collect();
        let limit: u64 = count.parse().ok()?;
        let marker = format!("{FAIL}{digits}x{count}");
        let mut failed = lock(&self.failed);
        let so_far = failed.entry(marker).or_insert(0);
        (*so_far < limit).then(|| {
            *so_far += 1;
            status
        })
    }

    /// Keeps the request for `requests()` and appends it to the log, before the reply is sent,
    /// so a test that sees the agent's answer also sees the request.
    fn record(&self, request: Request) {
        if let Some(log) = &self.log {
            let line = serde_json::to_string(&request)
                .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
            let mut file = lock(log);
            if let Err(error) = writeln!(file, "{line}").and_then(|()| file.flush()) {
                eprintln!("mock: cannot write the request log: {error}");
            }
        }
        lock(&self.requests).push(request);
    }
}

/// The delay a `MOCK-DELAY-<ms>` marker asks for, capped at `MAX_DELAY`.
fn delay_of(text: &str) -> Option<Duration> {
    let (_, rest) = text.split_once(DELAY)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let millis: u64 = digits.parse().ok()?;
    Some(Duration::from_millis(millis).min(MAX_DELAY))
}

/// Sends the reply; a body without a length goes out chunked, as SSE servers send it.
fn send(http: tiny_http::Request, answer: reply::Reply) {
    let mut headers = Vec::new();
    let mut push = |name: &str, value: &str| {
        if let Ok(header) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            headers.push(header);
        }
    };
    push("content-type", answer.content_type);
    for (name, value) in &answer.headers {
        push(name, value);
    }
    let streamed = answer.content_type == "text/event-stream";
    if streamed {
        push("cache-control", "no-cache");
    }
    let length = (!streamed).then_some(answer.body.len());
    let response = tiny_http::Response::new(
        tiny_http::StatusCode(answer.status),
        headers,
        io::Cursor::new(answer.body),
        length,
        None,
    );
    // A client that hung up early (a cancelled side request) is not the mock's failure.
    let _ = http.respond(response);
}
