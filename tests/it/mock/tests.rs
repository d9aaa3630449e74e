//! Tests of the mock itself: the summaries count what the tests rely on, the schema values fit,
//! and each API's answer parses in the shape its clients expect, over a real socket.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::schema::{requested, value_for};
use super::summary::{Route, summarize};
use super::{MockConfig, MockServer};

/// A raw HTTP/1.1 answer: status, lower-cased headers and the de-chunked body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the answer is JSON")
    }

    /// The SSE events: (event name, data parsed as JSON or kept as a string).
    fn events(&self) -> Vec<(Option<String>, Value)> {
        let text = String::from_utf8(self.body.clone()).expect("an SSE body is UTF-8");
        text.split("\n\n")
            .filter(|block| !block.trim().is_empty())
            .map(|block| {
                let mut name = None;
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("event: ") {
                        name = Some(value.to_owned());
                    } else if let Some(value) = line.strip_prefix("data: ") {
                        data.push_str(value);
                    } else {
                        panic!("not an SSE line: {line:?}");
                    }
                }
                let data = serde_json::from_str(&data).unwrap_or(Value::String(data));
                (name, data)
            })
            .collect()
    }
}

/// One request over a fresh connection, read to the end (the mock closes on `connection: close`).
#[track_caller]
fn send(
    mock: &MockServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", mock.port())).expect("connect to the mock");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("set a read timeout");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("send the head");
    stream.write_all(body).expect("send the body");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");

    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an answer head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"))
    {
        body = dechunk(&body);
    }
    Answer {
        status,
        headers,
        body,
    }
}

#[track_caller]
fn post_json(mock: &MockServer, path: &str, body: &Value) -> Answer {
    send(
        mock,
        "POST",
        path,
        &[("content-type", "application/json")],
        body.to_string().as_bytes(),
    )
}

/// Undoes chunked transfer encoding, failing on a malformed frame.
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let end = raw
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("a chunk size line");
        let size_text = String::from_utf8_lossy(&raw[..end]).into_owned();
        let size = usize::from_str_radix(size_text.trim(), 16).expect("a hex chunk size");
        raw = &raw[end + 2..];
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&raw[..size]);
        assert_eq!(&raw[size..size + 2], b"\r\n", "a chunk ends with CRLF");
        raw = &raw[size + 2..];
    }
}

/// Claude Code 2.1.332's shape on a resumed turn: a `<system-reminder>` block opens each user
/// turn, and a `role: system` message sits inside `messages`.
fn claude_resumed_body(stream: bool) -> Value {
    json!({
        "model": "claude-opus-5-5",
        "stream": stream,
        "max_tokens": 64000,
        "system": [{ "type": "text", "text": "You are Claude Code" }],
        "messages": [
            { "role": "user", "content": [
                { "type": "text", "text": "<system-reminder>\nAs you answer, use this context\n</system-reminder>" },
                { "type": "text", "text": "first prompt" },
            ]},
            { "role": "assistant", "content": [{ "type": "text", "text": "MOCK-REPLY-1 earlier" }] },
            { "role": "system", "content": "mode changed" },
            { "role": "user", "content": [
                { "type": "text", "text": "<system-reminder>skills</system-reminder>" },
                { "type": "text", "text": "second prompt" },
            ]},
        ],
    })
}

/// Codex 0.171.0's shape on a resumed turn: developer messages, `<environment_context>` user
/// items and reasoning items around the real exchange.
fn codex_resumed_body() -> Value {
    let msg = |role: &str, kind: &str, text: &str| json!({ "type": "message", "role": role, "content": [{ "type": kind, "text": text }] });
    json!({
        "model": "gpt-5.5",
        "stream": true,
        "instructions": "You are Codex",
        "input": [
            msg("developer", "input_text", "<permissions instructions>sandbox</permissions instructions>"),
            msg("user", "input_text", "<environment_context>\n  <cwd>/tmp/p</cwd>\n</environment_context>"),
            msg("user", "input_text", "turn one"),
            { "type": "reasoning", "summary": [] },
            msg("assistant", "output_text", "MOCK-REPLY-1 earlier"),
            msg("user", "input_text", "<environment_context><cwd>/tmp/p</cwd></environment_context>"),
            msg("user", "input_text", "turn two"),
        ],
    })
}

/// Gemini CLI's shape: the "setting up the context" exchange, then the real turns.
fn gemini_resumed_body() -> Value {
    json!({
        "contents": [
            { "role": "user", "parts": [{ "text": "This is the Gemini CLI. We are setting up the context for our chat." }] },
            { "role": "model", "parts": [{ "text": "Got it. Thanks for the context!" }] },
            { "role": "user", "parts": [{ "text": "hello" }] },
            { "role": "model", "parts": [{ "text": "MOCK-REPLY-1 earlier" }] },
            { "role": "user", "parts": [{ "text": "again" }] },
        ],
        "generationConfig": { "temperature": 0 },
    })
}

#[test]
fn claude_history_is_counted_without_system_reminders() {
    let summary = summarize(Route::Messages, "/v1/messages", &claude_resumed_body(true));
    assert_eq!(
        (summary.user_msgs, summary.assistant_msgs),
        (2, 1),
        "{summary:?}"
    );
    assert_eq!(summary.last_user, "second prompt");
    assert_eq!(summary.model, "claude-opus-5-5");
    assert!(summary.stream);
}

#[test]
fn codex_history_is_counted_without_environment_context() {
    let summary = summarize(Route::Responses, "/v1/responses", &codex_resumed_body());
    assert_eq!(
        (summary.user_msgs, summary.assistant_msgs),
        (2, 1),
        "{summary:?}"
    );
    assert_eq!(summary.last_user, "turn two");
    assert_eq!(summary.model, "gpt-5.5");
}

#[test]
fn gemini_history_is_counted_without_the_context_exchange_and_model_comes_from_the_path() {
    let path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent";
    let summary = summarize(Route::of("POST", path), path, &gemini_resumed_body());
    assert_eq!(
        (summary.user_msgs, summary.assistant_msgs),
        (2, 1),
        "{summary:?}"
    );
    assert_eq!(summary.last_user, "again");
    assert_eq!(summary.model, "gemini-2.5-flash");
    assert!(summary.stream, "streamGenerateContent streams");
}

#[test]
fn chat_history_is_counted_without_qwens_context_exchange() {
    let body = json!({
        "model": "qwen3-coder-plus",
        "stream": true,
        "messages": [
            { "role": "system", "content": "You are Qwen Code" },
            { "role": "user", "content": "This is the Qwen Code. We are setting up the context for our chat." },
            { "role": "assistant", "content": "Got it. Thanks for the context!" },
            { "role": "user", "content": [{ "type": "text", "text": "q1" }] },
        ],
    });
    let summary = summarize(Route::ChatCompletions, "/v1/chat/completions", &body);
    assert_eq!(
        (summary.user_msgs, summary.assistant_msgs),
        (1, 0),
        "{summary:?}"
    );
    assert_eq!(summary.last_user, "q1");
}

#[test]
fn a_prompt_inside_a_system_reminder_block_is_still_the_users() {
    let body = json!({ "messages": [{ "role": "user", "content":
        "<system-reminder>ctx</system-reminder>\nreal words" }] });
    let summary = summarize(Route::Messages, "/v1/messages", &body);
    assert_eq!(summary.user_msgs, 1);
    assert_eq!(summary.last_user, "real words");
}

#[test]
fn claudes_record_of_a_local_command_is_not_the_users_text() {
    // Claude Code 2.1.332's first request after `/clear`, as the mock saw it.
    let record = "<local-command-caveat>The command below was run directly in Claude Code, not \
        sent to you as a request.</local-command-caveat>\n<command-name>/clear</command-name>\n\
        <command-message>clear</command-message>\n<command-args></command-args>\n\
        <local-command-stdout></local-command-stdout>\nsecondword";
    let body = json!({ "messages": [{ "role": "user", "content": [{ "type": "text", "text": record }] }] });
    let summary = summarize(Route::Messages, "/v1/messages", &body);
    assert_eq!(
        (summary.user_msgs, summary.last_user.as_str()),
        (1, "secondword")
    );
}

#[test]
fn routes_cover_every_endpoint() {
    let table = [
        ("POST", "/v1/messages", Route::Messages),
        ("POST", "/v1/messages/count_tokens", Route::CountTokens),
        ("POST", "/v1/responses", Route::Responses),
        ("POST", "/v1/chat/completions", Route::ChatCompletions),
        (
            "POST",
            "/v1beta/models/m:streamGenerateContent",
            Route::GeminiStream,
        ),
        (
            "POST",
            "/v1beta/models/m:generateContent",
            Route::GeminiGenerate,
        ),
        (
            "POST",
            "/v1beta/models/m:countTokens",
            Route::GeminiCountTokens,
        ),
        (
            "POST",
            "/v1beta/models/m:batchEmbedContents",
            Route::GeminiEmbed,
        ),
        ("GET", "/v1/models", Route::Models),
        ("GET", "/v1beta/models", Route::Models),
        ("GET", "/v1/messages", Route::Other),
        ("POST", "/api/event_logging/batch", Route::Other),
    ];
    for (method, path, route) in table {
        assert_eq!(Route::of(method, path), route, "{method} {path}");
    }
}

#[test]
fn schema_values_fit_gemini_checks_and_pick_user() {
    let next_speaker = json!({
        "type": "object",
        "properties": {
            "reasoning": { "type": "string" },
            "next_speaker": { "type": "string", "enum": ["model", "user"] },
        },
        "required": ["reasoning", "next_speaker"],
    });
    assert_eq!(
        value_for(&next_speaker),
        json!({ "reasoning": "mock", "next_speaker": "user" })
    );
    let router = json!({
        "type": "OBJECT",
        "properties": {
            "complexity_reasoning": { "type": "STRING" },
            "complexity_score": { "type": "INTEGER", "minimum": 1, "maximum": 100 },
            "tags": { "type": ["array", "null"], "items": { "type": "string" }, "minItems": 1 },
        },
    });
    assert_eq!(
        value_for(&router),
        json!({ "complexity_reasoning": "mock", "complexity_score": 1, "tags": ["mock"] })
    );
}

#[test]
fn structured_requests_are_found_on_every_api() {
    let schema = json!({ "type": "object", "properties": { "title": { "type": "string" } } });
    let cases = [
        (
            Route::Messages,
            json!({ "output_format": { "type": "json_schema", "schema": schema } }),
        ),
        (
            Route::Responses,
            json!({ "text": { "format": { "type": "json_schema", "name": "t", "schema": schema } } }),
        ),
        (
            Route::ChatCompletions,
            json!({ "response_format": { "type": "json_schema", "json_schema": { "name": "t", "schema": schema } } }),
        ),
        (
            Route::GeminiGenerate,
            json!({ "generationConfig": { "responseMimeType": "application/json", "responseJsonSchema": schema } }),
        ),
    ];
    for (route, body) in cases {
        assert_eq!(requested(route, &body), Some(schema.clone()), "{route:?}");
    }
    assert_eq!(requested(Route::Messages, &claude_resumed_body(true)), None);
}

#[test]
fn anthropic_stream_has_the_event_sequence_and_states_the_history() {
    let mock = MockServer::start().expect("start the mock");
    let answer = post_json(&mock, "/v1/messages", &claude_resumed_body(true));
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    assert_eq!(answer.header("transfer-encoding"), Some("chunked"));
    let events = answer.events();
    let names: Vec<&str> = events.iter().filter_map(|(n, _)| n.as_deref()).collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(
        names[names.len() - 3..],
        ["content_block_stop", "message_delta", "message_stop"]
    );
    for (name, data) in &events {
        assert_eq!(data["type"].as_str(), name.as_deref(), "event name = type");
    }
    let text: String = events
        .iter()
        .filter(|(_, d)| d["type"] == "content_block_delta")
        .map(|(_, d)| d["delta"]["text"].as_str().expect("a text delta"))
        .collect();
    assert_eq!(
        text,
        "MOCK-REPLY-1 [api=anthropic model=claude-opus-5-5 user_msgs=2 assistant_msgs=1] you said: second prompt"
    );

    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].summary.assistant_msgs, 1);
    assert_eq!(requests[0].reply, text);
}

#[test]
fn anthropic_non_streamed_is_one_message() {
    let mock = MockServer::start().expect("start the mock");
    let message = post_json(&mock, "/v1/messages", &claude_resumed_body(false)).json();
    assert_eq!(message["type"], "message");
    assert_eq!(message["stop_reason"], "end_turn");
    let text = message["content"][0]["text"]
        .as_str()
        .expect("text content");
    assert!(text.starts_with("MOCK-REPLY-1 [api=anthropic"), "{text}");
    let count = post_json(
        &mock,
        "/v1/messages/count_tokens",
        &claude_resumed_body(false),
    )
    .json();
    assert_eq!(count["input_tokens"], 42);
}

#[test]
fn responses_stream_completes_with_the_full_item() {
    let mock = MockServer::start().expect("start the mock");
    let events = post_json(&mock, "/v1/responses", &codex_resumed_body()).events();
    let names: Vec<&str> = events.iter().filter_map(|(n, _)| n.as_deref()).collect();
    assert_eq!(
        names[..3],
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added"
        ]
    );
    assert_eq!(names.last(), Some(&"response.completed"));
    let deltas: String = events
        .iter()
        .filter(|(_, d)| d["type"] == "response.output_text.delta")
        .map(|(_, d)| d["delta"].as_str().expect("a delta"))
        .collect();
    let done = events
        .iter()
        .find(|(_, d)| d["type"] == "response.output_item.done")
        .expect("an output_item.done event");
    assert_eq!(done.1["item"]["content"][0]["text"], deltas.as_str());
    assert!(
        deltas.contains(
            "[api=responses model=gpt-5.5 user_msgs=2 assistant_msgs=1] you said: turn two"
        ),
        "{deltas}"
    );
    let completed = &events.last().expect("events").1;
    assert_eq!(completed["response"]["status"], "completed");
    assert!(
        completed["response"]["usage"]["total_tokens"]
            .as_u64()
            .is_some()
    );
}

#[test]
fn chat_stream_ends_with_done_and_non_streamed_is_a_completion() {
    let mock = MockServer::start().expect("start the mock");
    let body =
        json!({ "model": "m", "stream": true, "messages": [{ "role": "user", "content": "hi" }] });
    let events = post_json(&mock, "/v1/chat/completions", &body).events();
    assert_eq!(events.last().map(|(_, d)| d.clone()), Some(json!("[DONE]")));
    let text: String = events
        .iter()
        .filter_map(|(_, d)| d["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(
        text,
        "MOCK-REPLY-1 [api=chat model=m user_msgs=1 assistant_msgs=0] you said: hi"
    );
    assert!(
        events
            .iter()
            .any(|(_, d)| d["choices"][0]["finish_reason"] == "stop")
    );

    let mut unary = body.clone();
    unary["stream"] = json!(false);
    let completion = post_json(&mock, "/v1/chat/completions", &unary).json();
    assert_eq!(completion["object"], "chat.completion");
    assert!(
        completion["choices"][0]["message"]["content"]
            .as_str()
            .is_some_and(|t| t.starts_with("MOCK-REPLY-2 "))
    );
}

#[test]
fn gemini_stream_and_generate_answer_in_candidates() {
    let mock = MockServer::start().expect("start the mock");
    let path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
    let events = post_json(&mock, path, &gemini_resumed_body()).events();
    let text: String = events
        .iter()
        .map(|(_, d)| {
            d["candidates"][0]["content"]["parts"][0]["text"]
                .as_str()
                .expect("a part")
        })
        .collect();
    assert_eq!(
        text,
        "MOCK-REPLY-1 [api=gemini model=gemini-2.5-flash user_msgs=2 assistant_msgs=1] you said: again"
    );
    let last = &events.last().expect("events").1;
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert!(last["usageMetadata"]["totalTokenCount"].as_u64().is_some());
    assert_eq!(mock.requests()[0].query, "alt=sse");

    let mut structured = gemini_resumed_body();
    structured["generationConfig"] = json!({
        "responseMimeType": "application/json",
        "responseJsonSchema": { "type": "object", "properties": {
            "next_speaker": { "type": "string", "enum": ["model", "user"] } } },
    });
    let generated = post_json(
        &mock,
        "/v1beta/models/gemini-2.5-flash:generateContent",
        &structured,
    )
    .json();
    let answer = generated["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .expect("a text part");
    let parsed: Value = serde_json::from_str(answer).expect("a structured answer is JSON");
    assert_eq!(parsed, json!({ "next_speaker": "user" }));
    let tokens = post_json(
        &mock,
        "/v1beta/models/gemini-2.5-flash:countTokens",
        &gemini_resumed_body(),
    )
    .json();
    assert_eq!(tokens["totalTokens"], 42);
}

#[test]
fn compressed_bodies_are_decoded() {
    let mock = MockServer::start().expect("start the mock");
    let body = codex_resumed_body().to_string();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(body.as_bytes()).expect("gzip");
    let gz = gz.finish().expect("gzip");
    let zst = ruzstd::encoding::compress_to_vec(
        body.as_bytes(),
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    for (encoding, bytes) in [("gzip", gz), ("zstd", zst)] {
        let answer = send(
            &mock,
            "POST",
            "/v1/responses",
            &[
                ("content-type", "application/json"),
                ("content-encoding", encoding),
            ],
            &bytes,
        );
        assert_eq!(answer.status, 200, "{encoding}");
    }
    for request in mock.requests() {
        assert_eq!(request.decode_error, None);
        assert_eq!(
            (request.summary.user_msgs, request.summary.assistant_msgs),
            (2, 1)
        );
    }
    let bad = send(
        &mock,
        "POST",
        "/v1/responses",
        &[("content-encoding", "br")],
        b"xx",
    );
    assert_eq!(bad.status, 200, "an undecodable body still gets an answer");
    assert!(
        mock.requests()[2]
            .decode_error
            .as_deref()
            .is_some_and(|e| e.contains("br"))
    );
}

#[test]
fn fail_and_delay_markers_are_obeyed() {
    let mock = MockServer::start().expect("start the mock");
    let prompt =
        |text: &str| json!({ "model": "m", "messages": [{ "role": "user", "content": text }] });
    let failed = post_json(&mock, "/v1/messages", &prompt("please MOCK-FAIL-500 now"));
    assert_eq!(failed.status, 500);
    assert_eq!(failed.json()["error"]["type"], "api_error");

    let started = Instant::now();
    let delayed = post_json(&mock, "/v1/messages", &prompt("slow MOCK-DELAY-300"));
    assert_eq!(delayed.status, 200);
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn side_requests_get_harmless_answers() {
    let mock = MockServer::start().expect("start the mock");
    let models = send(&mock, "GET", "/v1/models?limit=100", &[], b"");
    assert_eq!(models.status, 200);
    assert_eq!(models.json()["data"][0]["id"], "mock-model");
    assert_eq!(send(&mock, "GET", "/nothing/here", &[], b"").status, 404);
    let posted = send(&mock, "POST", "/api/event_logging/batch", &[], b"{}");
    assert_eq!((posted.status, posted.json()), (200, json!({})));
    assert!(mock.turns().is_empty(), "side requests are not turns");
    assert_eq!(mock.requests().len(), 3);
}

#[test]
fn requests_are_logged_as_json_lines_and_drop_stops_the_server() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let log = dir.path().join("requests.jsonl");
    let mock = MockServer::start_with(MockConfig {
        port: 0,
        log: Some(log.clone()),
    })
    .expect("start the mock");
    let port = mock.port();
    assert_eq!(mock.url(), format!("http://127.0.0.1:{port}"));
    post_json(&mock, "/v1/messages", &claude_resumed_body(true));
    send(&mock, "GET", "/v1/models", &[("x-api-key", "test")], b"");
    assert_eq!(mock.requests()[1].header("X-Api-Key"), Some("test"));
    drop(mock);

    let text = std::fs::read_to_string(&log).expect("the log exists");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["seq"], 1);
    assert_eq!(lines[0]["summary"]["assistant_msgs"], 1);
    assert_eq!(lines[1]["headers"]["x-api-key"], "test");
    // tiny_http's listener thread closes the socket right after the drop; give it a moment.
    let deadline = Instant::now() + Duration::from_secs(2);
    while TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(
            Instant::now() < deadline,
            "the port is still open after drop"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A tool-offering request of each API whose prompt asks for a shell command, and the same
/// conversation once the call's result is back.
fn tool_bodies(route: Route, call_id: &str) -> (Value, Value) {
    let prompt = "MOCK-SHELL touch marker";
    let schema = json!({
        "type": "object",
        "properties": { "command": { "type": "string" }, "description": { "type": "string" }, "timeout": { "type": "integer" } },
        "required": ["command", "description"],
    });
    match route {
        Route::Messages => {
            let tools = json!([{ "name": "Read", "input_schema": {} }, { "name": "Bash", "input_schema": schema }]);
            let asked = json!({ "model": "m", "tools": tools, "messages": [{ "role": "user", "content": prompt }] });
            let mut answered = asked.clone();
            answered["messages"] = json!([
                { "role": "user", "content": prompt },
                { "role": "assistant", "content": [{ "type": "tool_use", "id": call_id, "name": "Bash", "input": {} }] },
                { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": call_id, "content": "" },
                    { "type": "text", "text": "<system-reminder>x</system-reminder>" }] },
            ]);
            (asked, answered)
        }
        Route::Responses => {
            let tools = json!([{ "type": "function", "name": "exec_command", "parameters": {
                "type": "object", "properties": { "cmd": { "type": "string" } }, "required": ["cmd"] } }]);
            let user = json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": prompt }] });
            let asked = json!({ "model": "m", "stream": true, "tools": tools, "input": [user] });
            let mut answered = asked.clone();
            answered["input"] = json!([user,
                { "type": "function_call", "call_id": call_id, "name": "exec_command", "arguments": "{}" },
                { "type": "function_call_output", "call_id": call_id, "output": "" }]);
            (asked, answered)
        }
        Route::ChatCompletions => {
            let tools = json!([{ "type": "function", "function": { "name": "bash", "parameters": schema } }]);
            let asked = json!({ "model": "m", "stream": true, "tools": tools, "messages": [{ "role": "user", "content": prompt }] });
            let mut answered = asked.clone();
            answered["messages"] = json!([
                { "role": "user", "content": prompt },
                { "role": "assistant", "content": null, "tool_calls": [{ "id": call_id, "type": "function", "function": { "name": "bash", "arguments": "{}" } }] },
                { "role": "tool", "tool_call_id": call_id, "content": "" },
            ]);
            (asked, answered)
        }
        _ => {
            let tools = json!([{ "functionDeclarations": [{ "name": "run_shell_command", "parametersJsonSchema": {
                "type": "object", "properties": { "command": { "type": "string" } }, "required": ["command"] } }] }]);
            let asked = json!({ "tools": tools, "contents": [{ "role": "user", "parts": [{ "text": prompt }] }] });
            let mut answered = asked.clone();
            answered["contents"] = json!([
                { "role": "user", "parts": [{ "text": prompt }] },
                { "role": "model", "parts": [{ "functionCall": { "name": "run_shell_command", "args": {} } }] },
                { "role": "user", "parts": [{ "functionResponse": { "name": "run_shell_command", "response": {} } }] },
            ]);
            (asked, answered)
        }
    }
}

#[test]
fn a_shell_marker_is_answered_with_the_apis_own_tool_call_then_with_text() {
    let mock = MockServer::start().expect("start the mock");
    let paths = [
        (Route::Messages, "/v1/messages"),
        (Route::Responses, "/v1/responses"),
        (Route::ChatCompletions, "/v1/chat/completions"),
        (
            Route::GeminiStream,
            "/v1beta/models/g:streamGenerateContent",
        ),
    ];
    for (route, path) in paths {
        let (asked, answered) = tool_bodies(route, "call_x");
        let call = post_json(&mock, path, &asked);
        assert_eq!(call.status, 200, "{path}");
        let record = mock.requests().pop().expect("recorded");
        let made = record.tool_call.clone().expect("a tool call");
        assert_eq!(
            made.arguments["command"]
                .as_str()
                .or(made.arguments["cmd"].as_str()),
            Some("touch marker"),
            "{path}"
        );
        assert!(record.reply.is_empty(), "a call is no answer: {path}");
        let body = String::from_utf8(call.body.clone()).expect("UTF-8");
        let form = match route {
            Route::Messages => "\"tool_use\"",
            Route::Responses => "\"function_call\"",
            Route::ChatCompletions => "\"tool_calls\"",
            _ => "\"functionCall\"",
        };
        assert!(
            body.contains(form) && body.contains(&made.name),
            "{path}: {body}"
        );
        if route == Route::Messages {
            // Only the required properties besides the command: no 1 ms timeout.
            assert_eq!(
                made.arguments,
                json!({ "command": "touch marker", "description": "mock" })
            );
        }

        let text = post_json(&mock, path, &answered);
        assert_eq!(text.status, 200);
        let record = mock.requests().pop().expect("recorded");
        assert!(record.tool_call.is_none(), "{path}");
        assert!(record.reply.starts_with("MOCK-REPLY-"), "{path}");
        let summary = &record.summary;
        assert_eq!(
            (
                summary.user_msgs,
                summary.tool_calls,
                summary.tool_results,
                summary.results_since_user
            ),
            (1, 1, 1, 1),
            "{path}: a tool's result is not the user's message: {summary:?}"
        );
        assert_eq!(summary.last_user, "MOCK-SHELL touch marker", "{path}");
    }
}

#[test]
fn a_counted_fail_marker_fails_only_that_often_and_a_429_says_when_to_retry() {
    let mock = MockServer::start().expect("start the mock");
    let prompt =
        json!({ "model": "m", "messages": [{ "role": "user", "content": "MOCK-FAIL-429x1 hi" }] });
    let refused = post_json(&mock, "/v1/messages", &prompt);
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.json()["error"]["type"], "rate_limit_error");
    assert_eq!(post_json(&mock, "/v1/messages", &prompt).status, 200);
    // The last marker counts: a failed prompt joined with the next one fails no more.
    let joined = json!({ "model": "m", "messages": [{ "role": "user", "content": "MOCK-FAIL-500 a\nMOCK-FAIL-429x1 hi" }] });
    assert_eq!(post_json(&mock, "/v1/messages", &joined).status, 200);
}
