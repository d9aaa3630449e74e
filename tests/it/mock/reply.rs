//! The mock's answers, in the exact shapes each API's clients parse: Server-Sent Events for
//! streamed requests and one JSON document otherwise. Pure functions of the request's route and
//! summary, so the shapes are unit-tested without a socket.
//!
//! The stream shapes follow research/real-agents-offline.md ("The mock model server used"),
//! which the real Claude Code 2.1.332, Codex 0.171.0, Gemini CLI 0.61.0, Qwen Code 0.24.4 and
//! opencode 1.18.33 were seen to accept.

use serde_json::{Value, json};

use super::summary::{Route, Summary};

/// The longest stretch of the user's text echoed back; a 1 MiB prompt needs no 1 MiB reply.
const ECHO_LIMIT: usize = 2000;

/// The fixed token count the mock reports for a request's input.
const INPUT_TOKENS: u64 = 42;

/// An HTTP answer: status, content type and the whole body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The HTTP status code.
    pub status: u16,
    /// The `content-type` header.
    pub content_type: &'static str,
    /// The body, an SSE stream or one JSON document.
    pub body: Vec<u8>,
    /// Headers beyond the content type (`retry-after` on a 429).
    pub headers: Vec<(&'static str, &'static str)>,
}

impl Reply {
    /// A JSON answer with `status`.
    fn json(status: u16, value: &Value) -> Reply {
        Reply {
            status,
            content_type: "application/json",
            body: value.to_string().into_bytes(),
            headers: Vec::new(),
        }
    }

    /// A Server-Sent Events answer; a `None` name sends a `data:` line alone.
    fn sse(events: &[(Option<&str>, Value)]) -> Reply {
        let mut body = String::new();
        for (name, data) in events {
            if let Some(name) = name {
                body.push_str("event: ");
                body.push_str(name);
                body.push('\n');
            }
            body.push_str("data: ");
            body.push_str(&data.to_string());
            body.push_str("\n\n");
        }
        Reply {
            status: 200,
            content_type: "text/event-stream",
            body: body.into_bytes(),
            headers: Vec::new(),
        }
    }
}

/// The reply text for request `seq`: the history counts and the user's last words, so an agent's
/// own output shows whether it sent its history.
pub fn text_for(seq: u64, summary: &Summary) -> String {
    let echo: String = summary.last_user.chars().take(ECHO_LIMIT).collect();
    format!(
        "MOCK-REPLY-{seq} [api={} model={} user_msgs={} assistant_msgs={}] you said: {echo}",
        summary.api, summary.model, summary.user_msgs, summary.assistant_msgs
    )
}

/// The `(input, output)` tokens an answer whose reply text is `text` states in its usage.
pub fn stated_usage(text: &str) -> (u64, u64) {
    let output_tokens = u64::try_from(text.split_whitespace().count()).unwrap_or(u64::MAX);
    (INPUT_TOKENS, output_tokens)
}

/// The answer to request `seq` on `route`, whose reply text is `text`.
pub fn answer(route: Route, seq: u64, summary: &Summary, text: &str) -> Reply {
    let model = summary.model.as_str();
    let output_tokens = u64::try_from(text.split_whitespace().count()).unwrap_or(u64::MAX);
    match route {
        Route::Messages if summary.stream => anthropic_stream(seq, model, text, output_tokens),
        Route::Messages => Reply::json(200, &anthropic_message(seq, model, text, output_tokens)),
        Route::CountTokens => Reply::json(200, &json!({ "input_tokens": INPUT_TOKENS })),
        Route::Responses if summary.stream => responses_stream(seq, model, text, output_tokens),
        Route::Responses => Reply::json(
            200,
            &response_object(
                seq,
                model,
                "completed",
                &[message_item(seq, text)],
                output_tokens,
            ),
        ),
        Route::ChatCompletions if summary.stream => chat_stream(seq, model, text, output_tokens),
        Route::ChatCompletions => {
            Reply::json(200, &chat_completion(seq, model, text, output_tokens))
        }
        Route::GeminiStream => gemini_stream(model, text, output_tokens),
        Route::GeminiGenerate => Reply::json(200, &gemini_chunk(model, text, Some(output_tokens))),
        Route::GeminiCountTokens => Reply::json(200, &json!({ "totalTokens": INPUT_TOKENS })),
        Route::GeminiEmbed => Reply::json(
            200,
            &json!({
                "embedding": { "values": [0.0, 0.0, 0.0] },
                "embeddings": [{ "values": [0.0, 0.0, 0.0] }],
            }),
        ),
        Route::Models => Reply::json(200, &models()),
        Route::Other => Reply::json(200, &json!({})),
    }
}

/// An HTTP error `status` (500, 429, ...) in the route's own error shape, for fault tests
/// (`MOCK-FAIL-<status>`). A 429 says to retry after one second, the shortest wait a
/// `retry-after` header can ask for.
pub fn failure(route: Route, status: u16) -> Reply {
    let message = format!("mock: MOCK-FAIL-{status} requested");
    let (anthropic, openai, gemini) = if status == 429 {
        (
            "rate_limit_error",
            "rate_limit_exceeded",
            "RESOURCE_EXHAUSTED",
        )
    } else {
        ("api_error", "server_error", "INTERNAL")
    };
    let body = match route.api() {
        "anthropic" => json!({
            "type": "error",
            "error": { "type": anthropic, "message": message },
        }),
        "gemini" => json!({
            "error": { "code": status, "message": message, "status": gemini },
        }),
        _ => json!({
            "error": { "message": message, "type": openai, "code": openai },
        }),
    };
    let mut reply = Reply::json(status, &body);
    if status == 429 {
        reply.headers.push(("retry-after", "1"));
    }
    reply
}

/// The answer to a request nothing routes: 404 for reads, so a probe learns "no such thing";
/// an empty 200 for writes (event logs and the like), so nothing retries.
pub fn unrouted(method: &str) -> Reply {
    if method.eq_ignore_ascii_case("POST") || method.eq_ignore_ascii_case("PUT") {
        Reply::json(200, &json!({}))
    } else {
        Reply::json(
            404,
            &json!({ "error": { "type": "not_found_error", "message": "mock: no such route" } }),
        )
    }
}

/// The text cut into deltas of a few words each (whitespace kept), as a real stream sends it.
pub fn pieces(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_inclusive(' ').collect();
    let mut pieces: Vec<String> = words.chunks(3).map(<[&str]>::concat).collect();
    if pieces.is_empty() {
        pieces.push(String::new());
    }
    pieces
}

fn anthropic_usage(output_tokens: u64) -> Value {
    json!({
        "input_tokens": INPUT_TOKENS,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    })
}

fn anthropic_message(seq: u64, model: &str, text: &str, output_tokens: u64) -> Value {
    json!({
        "id": format!("msg_mock_{seq}"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{ "type": "text", "text": text }],
        "stop_reason": "end_turn",
        "stop_sequence": null,
        "usage": anthropic_usage(output_tokens),
    })
}

fn anthropic_stream(seq: u64, model: &str, text: &str, output_tokens: u64) -> Reply {
    let mut start = anthropic_message(seq, model, "", 1);
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    let mut events = vec![
        (
            Some("message_start"),
            json!({ "type": "message_start", "message": start }),
        ),
        (
            Some("content_block_start"),
            json!({
                "type": "content_block_start",
                "index": 0,
                "content_block": { "type": "text", "text": "" },
            }),
        ),
        (Some("ping"), json!({ "type": "ping" })),
    ];
    for piece in pieces(text) {
        events.push((
            Some("content_block_delta"),
            json!({
                "type": "content_block_delta",
                "index": 0,
                "delta": { "type": "text_delta", "text": piece },
            }),
        ));
    }
    events.extend([
        (
            Some("content_block_stop"),
            json!({ "type": "content_block_stop", "index": 0 }),
        ),
        (
            Some("message_delta"),
            json!({
                "type": "message_delta",
                "delta": { "stop_reason": "end_turn", "stop_sequence": null },
                "usage": { "output_tokens": output_tokens },
            }),
        ),
        (Some("message_stop"), json!({ "type": "message_stop" })),
    ]);
    Reply::sse(&events)
}

fn message_item(seq: u64, text: &str) -> Value {
    json!({
        "id": format!("msg_mock_{seq}"),
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{ "type": "output_text", "text": text, "annotations": [] }],
    })
}

fn response_object(
    seq: u64,
    model: &str,
    status: &str,
    output: &[Value],
    output_tokens: u64,
) -> Value {
    let mut response = json!({
        "id": format!("resp_mock_{seq}"),
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": model,
        "output": output,
    });
    if status == "completed" {
        response["usage"] = json!({
            "input_tokens": INPUT_TOKENS,
            "input_tokens_details": { "cached_tokens": 0 },
            "output_tokens": output_tokens,
            "output_tokens_details": { "reasoning_tokens": 0 },
            "total_tokens": INPUT_TOKENS + output_tokens,
        });
    }
    response
}

fn responses_stream(seq: u64, model: &str, text: &str, output_tokens: u64) -> Reply {
    let item_id = format!("msg_mock_{seq}");
    let done_item = message_item(seq, text);
    let mut added_item = done_item.clone();
    added_item["status"] = json!("in_progress");
    added_item["content"] = json!([]);
    let part = |text: &str| json!({ "type": "output_text", "text": text, "annotations": [] });
    let in_progress = response_object(seq, model, "in_progress", &[], 0);

    let mut events: Vec<(&str, Value)> = vec![
        ("response.created", json!({ "response": in_progress })),
        ("response.in_progress", json!({ "response": in_progress })),
        (
            "response.output_item.added",
            json!({ "output_index": 0, "item": added_item }),
        ),
        (
            "response.content_part.added",
            json!({ "item_id": item_id, "output_index": 0, "content_index": 0, "part": part("") }),
        ),
    ];
    for piece in pieces(text) {
        events.push((
            "response.output_text.delta",
            json!({ "item_id": item_id, "output_index": 0, "content_index": 0, "delta": piece }),
        ));
    }
    events.extend([
        (
            "response.output_text.done",
            json!({ "item_id": item_id, "output_index": 0, "content_index": 0, "text": text }),
        ),
        (
            "response.content_part.done",
            json!({ "item_id": item_id, "output_index": 0, "content_index": 0, "part": part(text) }),
        ),
        (
            "response.output_item.done",
            json!({ "output_index": 0, "item": done_item }),
        ),
        (
            "response.completed",
            json!({
                "response": response_object(seq, model, "completed", std::slice::from_ref(&done_item), output_tokens),
            }),
        ),
    ]);
    responses_sse(events)
}

/// Responses events as SSE: each names its type twice (SSE `event:` and the `type` field) and is
/// numbered, as OpenAI's server does; Codex dispatches on `type`.
fn responses_sse(events: Vec<(&str, Value)>) -> Reply {
    let events: Vec<(Option<&str>, Value)> = events
        .into_iter()
        .enumerate()
        .map(|(n, (name, mut data))| {
            data["type"] = json!(name);
            data["sequence_number"] = json!(n);
            (Some(name), data)
        })
        .collect();
    Reply::sse(&events)
}

fn chat_usage(output_tokens: u64) -> Value {
    json!({
        "prompt_tokens": INPUT_TOKENS,
        "completion_tokens": output_tokens,
        "total_tokens": INPUT_TOKENS + output_tokens,
    })
}

fn chat_completion(seq: u64, model: &str, text: &str, output_tokens: u64) -> Value {
    json!({
        "id": format!("chatcmpl-mock-{seq}"),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": text },
            "finish_reason": "stop",
        }],
        "usage": chat_usage(output_tokens),
    })
}

fn chat_stream(seq: u64, model: &str, text: &str, output_tokens: u64) -> Reply {
    let chunk = |choices: Value| {
        json!({
            "id": format!("chatcmpl-mock-{seq}"),
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": choices,
        })
    };
    let mut events = vec![(
        None,
        chunk(json!([{
            "index": 0,
            "delta": { "role": "assistant", "content": "" },
            "finish_reason": null,
        }])),
    )];
    for piece in pieces(text) {
        events.push((
            None,
            chunk(json!([{ "index": 0, "delta": { "content": piece }, "finish_reason": null }])),
        ));
    }
    events.push((
        None,
        chunk(json!([{ "index": 0, "delta": {}, "finish_reason": "stop" }])),
    ));
    // Sent always: clients that did not ask for usage ignore a chunk with no choices.
    let mut usage = chunk(json!([]));
    usage["usage"] = chat_usage(output_tokens);
    events.push((None, usage));
    let mut reply = Reply::sse(&events);
    reply.body.extend_from_slice(b"data: [DONE]\n\n");
    reply
}

/// One Gemini `GenerateContentResponse`; with usage, it is the last one (`finishReason: STOP`).
fn gemini_chunk(model: &str, text: &str, usage: Option<u64>) -> Value {
    let mut chunk = json!({
        "candidates": [{
            "content": { "role": "model", "parts": [{ "text": text }] },
            "index": 0,
        }],
        "modelVersion": model,
    });
    if let Some(output_tokens) = usage {
        chunk["candidates"][0]["finishReason"] = json!("STOP");
        chunk["usageMetadata"] = json!({
            "promptTokenCount": INPUT_TOKENS,
            "candidatesTokenCount": output_tokens,
            "totalTokenCount": INPUT_TOKENS + output_tokens,
        });
    }
    chunk
}

fn gemini_stream(model: &str, text: &str, output_tokens: u64) -> Reply {
    let pieces = pieces(text);
    let last = pieces.len() - 1;
    let events: Vec<(Option<&str>, Value)> = pieces
        .iter()
        .enumerate()
        .map(|(n, piece)| {
            (
                None,
                gemini_chunk(model, piece, (n == last).then_some(output_tokens)),
            )
        })
        .collect();
    Reply::sse(&events)
}

/// One model list that reads right to OpenAI (`data`), Anthropic (`data`, `has_more`) and
/// Gemini (`models`) clients alike.
fn models() -> Value {
    json!({
        "object": "list",
        "data": [{
            "id": "mock-model",
            "object": "model",
            "type": "model",
            "created": 0,
            "created_at": "2026-01-01T00:00:00Z",
            "owned_by": "mock",
            "display_name": "Mock Model",
        }],
        "has_more": false,
        "first_id": "mock-model",
        "last_id": "mock-model",
        "models": [{
            "name": "models/gemini-2.5-flash",
            "displayName": "Mock Gemini",
            "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"],
        }],
    })
}

/// A tool call on the Anthropic Messages API: `block` is the `tool_use` block, `args` its input
/// as JSON text, streamed as one `input_json_delta`; the stop reason is `tool_use`.
pub fn anthropic_tool(seq: u64, model: &str, stream: bool, block: &Value, args: &str) -> Reply {
    let mut message = anthropic_message(seq, model, "", 1);
    message["content"] = json!([block]);
    message["stop_reason"] = json!("tool_use");
    if !stream {
        return Reply::json(200, &message);
    }
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    let mut opened = block.clone();
    opened["input"] = json!({});
    Reply::sse(&[
        (
            Some("message_start"),
            json!({ "type": "message_start", "message": start }),
        ),
        (
            Some("content_block_start"),
            json!({ "type": "content_block_start", "index": 0, "content_block": opened }),
        ),
        (
            Some("content_block_delta"),
            json!({
                "type": "content_block_delta",
                "index": 0,
                "delta": { "type": "input_json_delta", "partial_json": args },
            }),
        ),
        (
            Some("content_block_stop"),
            json!({ "type": "content_block_stop", "index": 0 }),
        ),
        (
            Some("message_delta"),
            json!({
                "type": "message_delta",
                "delta": { "stop_reason": "tool_use", "stop_sequence": null },
                "usage": { "output_tokens": 1 },
            }),
        ),
        (Some("message_stop"), json!({ "type": "message_stop" })),
    ])
}

/// A tool call on the Responses API: `item` is the completed `function_call` item.
pub fn responses_tool(seq: u64, model: &str, stream: bool, item: &Value) -> Reply {
    let done = response_object(seq, model, "completed", std::slice::from_ref(item), 1);
    if !stream {
        return Reply::json(200, &done);
    }
    let mut added = item.clone();
    added["status"] = json!("in_progress");
    added["arguments"] = json!("");
    let in_progress = response_object(seq, model, "in_progress", &[], 0);
    let (id, args) = (&item["id"], &item["arguments"]);
    responses_sse(vec![
        ("response.created", json!({ "response": in_progress })),
        ("response.in_progress", json!({ "response": in_progress })),
        (
            "response.output_item.added",
            json!({ "output_index": 0, "item": added }),
        ),
        (
            "response.function_call_arguments.delta",
            json!({ "item_id": id, "output_index": 0, "delta": args }),
        ),
        (
            "response.function_call_arguments.done",
            json!({ "item_id": id, "output_index": 0, "arguments": args }),
        ),
        (
            "response.output_item.done",
            json!({ "output_index": 0, "item": item }),
        ),
        ("response.completed", json!({ "response": done })),
    ])
}

/// A tool call on Chat Completions: `call` is one `tool_calls` entry (with its `index`); the
/// finish reason is `tool_calls`.
pub fn chat_tool(seq: u64, model: &str, stream: bool, call: &Value) -> Reply {
    let mut completion = chat_completion(seq, model, "", 1);
    let mut whole = call.clone();
    if let Some(fields) = whole.as_object_mut() {
        fields.remove("index");
    }
    completion["choices"][0]["message"] =
        json!({ "role": "assistant", "content": null, "tool_calls": [whole] });
    completion["choices"][0]["finish_reason"] = json!("tool_calls");
    if !stream {
        return Reply::json(200, &completion);
    }
    let chunk = |choices: Value| {
        json!({
            "id": format!("chatcmpl-mock-{seq}"),
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": choices,
        })
    };
    let mut opened = call.clone();
    opened["function"]["arguments"] = json!("");
    let arguments =
        json!({ "index": 0, "function": { "arguments": call["function"]["arguments"] } });
    let mut usage = chunk(json!([]));
    usage["usage"] = chat_usage(1);
    let mut reply = Reply::sse(&[
        (
            None,
            chunk(json!([{
                "index": 0,
                "delta": { "role": "assistant", "content": null, "tool_calls": [opened] },
                "finish_reason": null,
            }])),
        ),
        (
            None,
            chunk(
                json!([{ "index": 0, "delta": { "tool_calls": [arguments] }, "finish_reason": null }]),
            ),
        ),
        (
            None,
            chunk(json!([{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }])),
        ),
        (None, usage),
    ]);
    reply.body.extend_from_slice(b"data: [DONE]\n\n");
    reply
}

/// A tool call on Gemini: `part` is the `functionCall` part, sent as one last chunk.
pub fn gemini_tool(model: &str, stream: bool, part: &Value) -> Reply {
    let mut chunk = gemini_chunk(model, "", Some(1));
    chunk["candidates"][0]["content"]["parts"] = json!([part]);
    if stream {
        Reply::sse(&[(None, chunk)])
    } else {
        Reply::json(200, &chunk)
    }
}
