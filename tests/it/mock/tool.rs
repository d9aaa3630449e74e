//! Tool-using turns: a request whose last user text holds `MOCK-SHELL <command>` is answered
//! with a call of the agent's own shell tool running `<command>`, in the API's own form
//! (Anthropic `tool_use`, Responses `function_call`, Chat Completions `tool_calls`, Gemini
//! `functionCall`); once the tool's result comes back in the next request (see
//! [`Summary::results_since_user`]), the mock answers with its usual text.
//!
//! The tool is found in the request's own tool list by the names the CLIs give their shell
//! (Claude Code `Bash`, Codex `exec_command`/`shell`, Gemini CLI and Qwen Code
//! `run_shell_command`, opencode and Copilot CLI `bash`), and its arguments are built from the
//! tool's schema: the command in its `command` (or `cmd`) property, as a string or as
//! `["bash", "-lc", command]` where the schema wants an array, and every other required property
//! with the smallest value that fits ([`value_for`]).

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::reply::{self, Reply};
use super::schema::value_for;
use super::summary::{Route, Summary};

/// The marker that makes the mock call the agent's shell tool: `MOCK-SHELL <command>`, the
/// command running to the end of the line.
pub const SHELL: &str = "MOCK-SHELL ";

/// Shell tools by name, in order of preference.
const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "run_shell_command",
    "exec_command",
    "shell_command",
    "shell",
    "bash",
];

/// The call the mock answered with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolCall {
    /// The call's ID, which the result must name.
    pub id: String,
    /// The tool's name, as the request offered it.
    pub name: String,
    /// The arguments, as a JSON object.
    pub arguments: Value,
}

/// The shell call `request` asks for, if its last user text holds the marker, no tool result
/// answered it yet, and the request offers a shell tool.
pub fn requested(route: Route, seq: u64, summary: &Summary, body: &Value) -> Option<ToolCall> {
    let (_, rest) = summary.last_user.split_once(SHELL)?;
    if summary.results_since_user > 0 {
        return None;
    }
    let command = rest.lines().next().unwrap_or_default().trim();
    let tools = offered(route, body);
    let (name, schema) = SHELL_TOOLS
        .iter()
        .find_map(|want| tools.iter().find(|(name, _)| name == want))?;
    Some(ToolCall {
        id: format!("call_mock_{seq}"),
        name: name.clone(),
        arguments: arguments(schema, command),
    })
}

/// The tools a request offers, as (name, parameter schema).
fn offered(route: Route, body: &Value) -> Vec<(String, Value)> {
    let list = body["tools"].as_array().map_or(&[][..], Vec::as_slice);
    let named =
        |name: &Value, schema: &Value| name.as_str().map(|n| (n.to_owned(), schema.clone()));
    match route {
        Route::Messages => list
            .iter()
            .filter_map(|t| named(&t["name"], &t["input_schema"]))
            .collect(),
        Route::Responses => list
            .iter()
            .filter(|t| t["type"] == "function")
            .filter_map(|t| named(&t["name"], &t["parameters"]))
            .collect(),
        Route::ChatCompletions => list
            .iter()
            .filter_map(|t| named(&t["function"]["name"], &t["function"]["parameters"]))
            .collect(),
        Route::GeminiStream | Route::GeminiGenerate => list
            .iter()
            .flat_map(|t| {
                t["functionDeclarations"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|d| {
                let schema = if d["parametersJsonSchema"].is_null() {
                    &d["parameters"]
                } else {
                    &d["parametersJsonSchema"]
                };
                named(&d["name"], schema)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The arguments: `command` (or `cmd`) set to the command, the other required properties at
/// their smallest.
fn arguments(schema: &Value, command: &str) -> Value {
    let properties = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let key = ["command", "cmd"]
        .into_iter()
        .find(|k| properties.contains_key(*k))
        .unwrap_or("command");
    let wants_array = properties.get(key).is_some_and(|p| {
        p["type"]
            .as_str()
            .is_some_and(|t| t.eq_ignore_ascii_case("array"))
    });
    let mut arguments = Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        if let Some(name) = name.as_str() {
            let property = properties.get(name).cloned().unwrap_or(Value::Null);
            arguments.insert(name.to_owned(), value_for(&property));
        }
    }
    let value = if wants_array {
        json!(["bash", "-lc", command])
    } else {
        json!(command)
    };
    arguments.insert(key.to_owned(), value);
    Value::Object(arguments)
}

/// The answer that makes the call, on `route` (streamed when the request asked for it).
pub fn answer(route: Route, seq: u64, summary: &Summary, call: &ToolCall) -> Reply {
    let (model, stream) = (summary.model.as_str(), summary.stream);
    let args = call.arguments.to_string();
    match route {
        Route::Messages => {
            let block = json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments });
            reply::anthropic_tool(seq, model, stream, &block, &args)
        }
        Route::Responses => {
            let item = json!({
                "type": "function_call",
                "id": format!("fc_mock_{seq}"),
                "call_id": call.id,
                "name": call.name,
                "arguments": args,
                "status": "completed",
            });
            reply::responses_tool(seq, model, stream, &item)
        }
        Route::ChatCompletions => {
            let tool_call = json!({
                "index": 0,
                "id": call.id,
                "type": "function",
                "function": { "name": call.name, "arguments": args },
            });
            reply::chat_tool(seq, model, stream, &tool_call)
        }
        _ => reply::gemini_tool(
            model,
            stream,
            &json!({ "functionCall": { "name": call.name, "args": call.arguments } }),
        ),
    }
}
