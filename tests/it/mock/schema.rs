//! Structured-output requests: finding the JSON schema a request asks its answer to match, and
//! making the smallest JSON value that matches it.
//!
//! CLIs make such side requests on their own: Gemini CLI's model router and next-speaker check
//! (`generationConfig.responseJsonSchema`), and titles or classifiers on the OpenAI and Anthropic
//! APIs. A plain-text answer there makes Gemini CLI retry with backoff for about 95 s
//! (research/real-agents-offline.md), so the mock answers with valid JSON. Where an enum offers
//! `"user"` it is chosen, so a "who speaks next" check hands the turn back to the user.

use serde_json::{Map, Value, json};

use super::summary::Route;

/// The schema a request asks its answer to match: `Some(schema)` for a structured request
/// (`Value::Null` when it wants JSON without a schema), `None` for a plain-text request.
pub fn requested(route: Route, body: &Value) -> Option<Value> {
    match route {
        Route::Messages => [&body["output_format"], &body["output_config"]["format"]]
            .into_iter()
            .find(|f| f["type"] == "json_schema")
            .map(|f| f["schema"].clone()),
        Route::Responses => {
            let format = &body["text"]["format"];
            match format["type"].as_str() {
                Some("json_schema") => Some(format["schema"].clone()),
                Some("json_object") => Some(Value::Null),
                _ => None,
            }
        }
        Route::ChatCompletions => {
            let format = &body["response_format"];
            match format["type"].as_str() {
                Some("json_schema") => Some(format["json_schema"]["schema"].clone()),
                Some("json_object") => Some(Value::Null),
                _ => None,
            }
        }
        Route::GeminiStream | Route::GeminiGenerate => {
            let config = &body["generationConfig"];
            [
                "responseJsonSchema",
                "responseSchema",
                "response_json_schema",
            ]
            .iter()
            .map(|key| &config[*key])
            .find(|s| !s.is_null())
            .cloned()
            .or_else(|| (config["responseMimeType"] == "application/json").then_some(Value::Null))
        }
        _ => None,
    }
}

/// The smallest JSON value that matches `schema` (JSON Schema, or Gemini's OpenAPI subset with
/// upper-case type names); `{}` for no schema.
pub fn value_for(schema: &Value) -> Value {
    if schema.is_null() {
        return json!({});
    }
    if let Some(constant) = schema.get("const") {
        return constant.clone();
    }
    if let Some(choices) = schema["enum"].as_array() {
        let user = Value::String("user".to_owned());
        return if choices.contains(&user) {
            user
        } else {
            choices.first().cloned().unwrap_or(Value::Null)
        };
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = schema[key].as_array().and_then(|a| a.first()) {
            return value_for(first);
        }
    }
    match type_of(schema).as_deref() {
        Some("object") => object_for(schema),
        Some("array") => {
            let count = schema["minItems"].as_u64().unwrap_or(0);
            let item = value_for(&schema["items"]);
            Value::Array((0..count).map(|_| item.clone()).collect())
        }
        Some("string") => Value::String(string_for(schema)),
        Some("integer") => json!(schema["minimum"].as_i64().unwrap_or(1)),
        Some("number") => json!(schema["minimum"].as_f64().unwrap_or(1.0)),
        Some("boolean") => Value::Bool(false),
        Some("null") => Value::Null,
        _ if schema.get("properties").is_some() => object_for(schema),
        _ => json!({}),
    }
}

/// The schema's type in lower case; for a list of types, the first that is not `null`.
fn type_of(schema: &Value) -> Option<String> {
    let ty = match &schema["type"] {
        Value::String(ty) => ty.as_str(),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| !t.eq_ignore_ascii_case("null"))?,
        _ => return None,
    };
    Some(ty.to_ascii_lowercase())
}

/// An object with every declared property, each the smallest value of its own schema.
fn object_for(schema: &Value) -> Value {
    let mut object = Map::new();
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            object.insert(name.clone(), value_for(property));
        }
    }
    Value::Object(object)
}

/// A string long enough for `minLength`, so a length check passes too.
fn string_for(schema: &Value) -> String {
    let min = usize::try_from(schema["minLength"].as_u64().unwrap_or(0)).unwrap_or(0);
    let mut text = "mock".to_owned();
    while text.len() < min {
        text.push('k');
    }
    text
}
