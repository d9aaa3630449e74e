//! What a request is and what it says: its route (which API and endpoint) and a summary of the
//! conversation it carries (user and assistant message counts, the last user text, the model,
//! whether it streams).
//!
//! The counts are what the real-agent tests assert on to see history, so they leave out the
//! synthetic context turns each CLI injects around the user's words: Claude Code's
//! `<system-reminder>` blocks and its record of local commands such as `/clear`, Codex's `<environment_context>` and AGENTS.md turns, and the
//! Gemini/Qwen "We are setting up the context" exchange (research/real-agents-offline.md).

use serde::Serialize;
use serde_json::Value;

/// The endpoint a request was routed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Route {
    /// Anthropic Messages, `POST /v1/messages`.
    Messages,
    /// Anthropic token counting, `POST /v1/messages/count_tokens`.
    CountTokens,
    /// OpenAI Responses, `POST /v1/responses`.
    Responses,
    /// OpenAI Chat Completions, `POST /v1/chat/completions`.
    ChatCompletions,
    /// Gemini `POST /v1beta/models/<m>:streamGenerateContent`.
    GeminiStream,
    /// Gemini `POST /v1beta/models/<m>:generateContent`.
    GeminiGenerate,
    /// Gemini `POST /v1beta/models/<m>:countTokens`.
    GeminiCountTokens,
    /// Gemini `:embedContent` and `:batchEmbedContents`.
    GeminiEmbed,
    /// `GET .../models`: a model list in every vendor's shape at once.
    Models,
    /// Anything else; answered with harmless JSON so no CLI waits on it.
    Other,
}

impl Route {
    /// Routes a request by its method and path (the query string already removed).
    pub fn of(method: &str, path: &str) -> Route {
        let path = path.trim_end_matches('/');
        if method.eq_ignore_ascii_case("GET") {
            return if path.ends_with("/models") {
                Route::Models
            } else {
                Route::Other
            };
        }
        if !method.eq_ignore_ascii_case("POST") {
            return Route::Other;
        }
        if path.ends_with("/messages/count_tokens") {
            Route::CountTokens
        } else if path.ends_with("/messages") {
            Route::Messages
        } else if path.ends_with("/responses") {
            Route::Responses
        } else if path.ends_with("/chat/completions") {
            Route::ChatCompletions
        } else if let Some((_, action)) = gemini_model_action(path) {
            match action {
                "streamGenerateContent" => Route::GeminiStream,
                "generateContent" => Route::GeminiGenerate,
                "countTokens" => Route::GeminiCountTokens,
                "embedContent" | "batchEmbedContents" => Route::GeminiEmbed,
                _ => Route::Other,
            }
        } else {
            Route::Other
        }
    }

    /// Whether the route is a model turn (a conversation), not a side request such as a token
    /// count or a model list.
    pub fn is_turn(self) -> bool {
        matches!(
            self,
            Route::Messages
                | Route::Responses
                | Route::ChatCompletions
                | Route::GeminiStream
                | Route::GeminiGenerate
        )
    }

    /// The API family, as named in the reply text (`api=...`).
    pub fn api(self) -> &'static str {
        match self {
            Route::Messages | Route::CountTokens => "anthropic",
            Route::Responses => "responses",
            Route::ChatCompletions => "chat",
            Route::GeminiStream
            | Route::GeminiGenerate
            | Route::GeminiCountTokens
            | Route::GeminiEmbed => "gemini",
            Route::Models | Route::Other => "other",
        }
    }
}

/// `.../models/<model>:<action>` split into the model and the action.
fn gemini_model_action(path: &str) -> Option<(&str, &str)> {
    let (_, tail) = path.rsplit_once("/models/")?;
    tail.split_once(':')
}

/// What a request's conversation holds, as the tests see it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// The API family (`anthropic`, `responses`, `chat`, `gemini`, `other`).
    pub api: &'static str,
    /// User messages with real content (synthetic context turns left out).
    pub user_msgs: usize,
    /// Assistant (or Gemini `model`) messages, synthetic acknowledgements left out.
    pub assistant_msgs: usize,
    /// The text of the last real user message, synthetic blocks removed.
    pub last_user: String,
    /// The model the request asks for (from the body, or the path for Gemini).
    pub model: String,
    /// Whether the client asked for a streamed reply.
    pub stream: bool,
    /// Tool calls the assistant made in the conversation (Anthropic `tool_use`, Responses
    /// `function_call`, Chat `tool_calls`, Gemini `functionCall`).
    pub tool_calls: usize,
    /// Tool results sent back (`tool_result`, `function_call_output`, `role: tool`,
    /// `functionResponse`); a message carrying them is not counted as the user's.
    pub tool_results: usize,
    /// Tool results sent since the last user message: the answer a tool call waited for.
    pub results_since_user: usize,
}

/// Summarizes a parsed request body for its route; `path` gives Gemini's model.
pub fn summarize(route: Route, path: &str, body: &Value) -> Summary {
    let mut summary = Summary {
        api: route.api(),
        model: body["model"].as_str().unwrap_or_default().to_owned(),
        stream: body["stream"].as_bool().unwrap_or(false),
        ..Summary::default()
    };
    let messages: Vec<Message> = match route {
        Route::Messages | Route::CountTokens | Route::ChatCompletions => {
            role_messages(&body["messages"], "content")
        }
        Route::Responses => responses_input(&body["input"]),
        Route::GeminiStream | Route::GeminiGenerate | Route::GeminiCountTokens => {
            summary.stream = route == Route::GeminiStream;
            if let Some((model, _)) = gemini_model_action(path) {
                model.clone_into(&mut summary.model);
            }
            let contents = if body["contents"].is_null() {
                // countTokens may wrap the request: {"generateContentRequest": {"contents": ..}}.
                &body["generateContentRequest"]["contents"]
            } else {
                &body["contents"]
            };
            role_messages(contents, "parts")
        }
        Route::GeminiEmbed | Route::Models | Route::Other => Vec::new(),
    };
    for message in messages.iter().filter(|m| !m.is_synthetic()) {
        summary.tool_calls += message.tool_calls;
        if message.tool_results > 0 {
            summary.tool_results += message.tool_results;
            summary.results_since_user += message.tool_results;
            continue;
        }
        match message.role.as_str() {
            "user" => {
                summary.user_msgs += 1;
                summary.last_user = message.real_text();
                summary.results_since_user = 0;
            }
            "assistant" | "model" => summary.assistant_msgs += 1,
            _ => {}
        }
    }
    summary
}

/// One message of a conversation: its role, its text pieces, whether it had other parts, and
/// the tool calls and results among them.
#[derive(Default)]
struct Message {
    role: String,
    texts: Vec<String>,
    has_non_text: bool,
    tool_calls: usize,
    tool_results: usize,
}

impl Message {
    /// A message whose every text is injected context (and that carries nothing else).
    fn is_synthetic(&self) -> bool {
        self.tool_calls + self.tool_results == 0
            && !self.has_non_text
            && !self.texts.is_empty()
            && self.texts.iter().all(|t| is_synthetic(t))
    }

    /// The user's own words: the text pieces with synthetic blocks removed, joined by newlines.
    fn real_text(&self) -> String {
        self.texts
            .iter()
            .map(|t| strip_synthetic(t))
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Messages from an array of `{role, <content_key>}` objects (Anthropic, Chat, Gemini).
fn role_messages(list: &Value, content_key: &str) -> Vec<Message> {
    let Some(items) = list.as_array() else {
        return Vec::new();
    };
    items
        .iter()
        .map(|item| {
            let (texts, has_non_text) = texts(&item[content_key]);
            let role = item["role"].as_str().unwrap_or("user").to_owned();
            let parts = item[content_key].as_array().map_or(&[][..], Vec::as_slice);
            let count = |test: &dyn Fn(&Value) -> bool| parts.iter().filter(|p| test(p)).count();
            // Chat: the calls in `tool_calls`, each result a `role: tool` message of its own.
            let chat_calls = item["tool_calls"].as_array().map_or(0, Vec::len);
            Message {
                tool_calls: count(&|p| p["type"] == "tool_use" || !p["functionCall"].is_null())
                    + chat_calls,
                tool_results: count(&|p| {
                    p["type"] == "tool_result" || !p["functionResponse"].is_null()
                }) + usize::from(role == "tool"),
                role,
                texts,
                has_non_text,
            }
        })
        .collect()
}

/// Responses input items that call a tool, and those that carry a tool's output back.
const RESPONSES_CALLS: &[&str] = &["function_call", "custom_tool_call", "local_shell_call"];
const RESPONSES_RESULTS: &[&str] = &[
    "function_call_output",
    "custom_tool_call_output",
    "local_shell_call_output",
];

/// Messages from a Responses `input`: a plain string is one user message; in a list, message
/// items are messages, tool calls and outputs count as such, and reasoning is left out.
fn responses_input(input: &Value) -> Vec<Message> {
    if let Some(text) = input.as_str() {
        return vec![Message {
            role: "user".to_owned(),
            texts: vec![text.to_owned()],
            ..Message::default()
        }];
    }
    let Some(items) = input.as_array() else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let kind = item["type"].as_str().unwrap_or("message");
            if RESPONSES_CALLS.contains(&kind) || RESPONSES_RESULTS.contains(&kind) {
                return Some(Message {
                    role: "tool".to_owned(),
                    has_non_text: true,
                    tool_calls: usize::from(RESPONSES_CALLS.contains(&kind)),
                    tool_results: usize::from(RESPONSES_RESULTS.contains(&kind)),
                    ..Message::default()
                });
            }
            let role = item["role"].as_str().filter(|_| kind == "message")?;
            let (texts, has_non_text) = texts(&item["content"]);
            Some(Message {
                role: role.to_owned(),
                texts,
                has_non_text,
                ..Message::default()
            })
        })
        .collect()
}

/// The text pieces of a message's content (a string, or a list of strings, blocks or parts),
/// and whether it also held something that is not text (tool results, images, calls).
fn texts(content: &Value) -> (Vec<String>, bool) {
    match content {
        Value::String(text) => (vec![text.clone()], false),
        Value::Array(parts) => {
            let mut texts = Vec::new();
            let mut has_non_text = false;
            for part in parts {
                if let Some(text) = part.as_str().or_else(|| part["text"].as_str()) {
                    texts.push(text.to_owned());
                } else {
                    has_non_text = true;
                }
            }
            (texts, has_non_text)
        }
        _ => (Vec::new(), false),
    }
}

/// Tags whose whole element is context the CLI injected, not the user's words.
const SYNTHETIC_TAGS: &[&str] = &[
    "system-reminder",
    "environment_context",
    "session_context",
    "user_instructions",
    // Claude Code 2.1.332 records a local command (`/clear`) into the next user turn.
    "local-command-caveat",
    "command-name",
    "command-message",
    "command-args",
    "local-command-stdout",
    "local-command-stderr",
    // Copilot CLI 1.0.102 opens each user message with the time.
    "current_datetime",
];

/// Openings of whole text pieces that are injected context or its acknowledgement.
const SYNTHETIC_OPENINGS: &[&str] = &[
    "# AGENTS.md instructions for",
    "This is the Qwen Code. We are setting up the context",
    "This is the Gemini CLI. We are setting up the context",
    "Got it. Thanks for the context!",
];

/// A text piece with nothing of the user's own once synthetic blocks are removed.
fn is_synthetic(text: &str) -> bool {
    strip_synthetic(text).is_empty()
}

/// The text with every synthetic tagged element and synthetic piece removed, trimmed.
fn strip_synthetic(text: &str) -> String {
    let trimmed = text.trim();
    if SYNTHETIC_OPENINGS.iter().any(|o| trimmed.starts_with(o)) {
        return String::new();
    }
    let mut rest = trimmed.to_owned();
    for tag in SYNTHETIC_TAGS {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        while let Some(start) = rest.find(&open) {
            // An unclosed element swallows the rest: it is still context, not a prompt.
            let end = rest[start..]
                .find(&close)
                .map_or(rest.len(), |i| start + i + close.len());
            rest.replace_range(start..end, "");
        }
    }
    rest.trim().to_owned()
}
