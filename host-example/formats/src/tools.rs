//! The `condense_recall` tool in a request body: whether a request may be
//! given it, and its definition added in the request's format.
//!
//! A request is given the tool only when its client let the model choose
//! among tools of its own: one with no tools, or whose `tool_choice` forces
//! a tool (or none), is left as the client meant it.

use crate::Format;
use condense_model::recall::{TOOL_DESCRIPTION, TOOL_INPUT_SCHEMA, TOOL_NAME};
use serde_json::{Value, json};

/// Whether `body` (a request of `format`) may be given `condense_recall`:
/// it has tools, none of them already named so, and leaves the choice of
/// tool to the model.
pub fn recall_offerable(format: Format, body: &Value) -> bool {
    let Some(tools) = body.get("tools").and_then(Value::as_array) else {
        return false;
    };
    let named = |tool: &Value| {
        match format {
            Format::OpenAi => tool.pointer("/function/name"),
            Format::Anthropic | Format::Responses => tool.get("name"),
        }
        .and_then(Value::as_str)
        .is_some_and(|name| name == TOOL_NAME)
    };
    !tools.is_empty() && !tools.iter().any(named) && model_chooses(format, body.get("tool_choice"))
}

/// Whether a `tool_choice` leaves the model free to call any tool or none.
fn model_chooses(format: Format, choice: Option<&Value>) -> bool {
    let Some(choice) = choice else {
        return true;
    };
    match format {
        // `auto` (and its options, such as `disable_parallel_tool_use`);
        // `any`, `tool` and `none` force a choice.
        Format::Anthropic => choice.get("type").and_then(Value::as_str) == Some("auto"),
        // `"auto"`; `"required"`, `"none"` and a named function force one.
        Format::OpenAi | Format::Responses => choice.as_str() == Some("auto"),
    }
}

/// The tool's definition, as `format` declares a function tool.
pub fn recall_tool(format: Format) -> Value {
    let schema: Value =
        serde_json::from_str(TOOL_INPUT_SCHEMA).expect("the recall tool's schema is JSON");
    match format {
        Format::Anthropic => json!({
            "name": TOOL_NAME,
            "description": TOOL_DESCRIPTION,
            "input_schema": schema,
        }),
        Format::OpenAi => json!({
            "type": "function",
            "function": {
                "name": TOOL_NAME,
                "description": TOOL_DESCRIPTION,
                "parameters": schema,
            },
        }),
        Format::Responses => json!({
            "type": "function",
            "name": TOOL_NAME,
            "description": TOOL_DESCRIPTION,
            "parameters": schema,
        }),
    }
}

/// `body` with `condense_recall` after its own tools: last, so the
/// client's definitions keep their bytes and their order. The tool list
/// is the first thing a provider caches, so the request that first carries
/// it rewrites the cache once; it is added from a compaction on, which
/// rewrites it anyway, and the same bytes follow.
pub fn add_recall_tool(format: Format, body: &mut Value) {
    if let Some(tools) = body.get_mut("tools").and_then(Value::as_array_mut) {
        tools.push(recall_tool(format));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_request_whose_model_chooses_among_tools_is_offered_recall() {
        let cases = [
            (
                Format::Anthropic,
                json!({"tools": [{"name": "Bash"}]}),
                true,
            ),
            (
                Format::Anthropic,
                json!({"tools": [{"name": "Bash"}], "tool_choice": {"type": "auto"}}),
                true,
            ),
            (
                Format::Anthropic,
                json!({"tools": [{"name": "Bash"}], "tool_choice": {"type": "any"}}),
                false,
            ),
            (
                Format::Anthropic,
                json!({"tools": [{"name": "Bash"}], "tool_choice": {"type": "none"}}),
                false,
            ),
            (Format::Anthropic, json!({"tools": []}), false),
            (Format::Anthropic, json!({"messages": []}), false),
            (
                Format::OpenAi,
                json!({"tools": [{"type": "function", "function": {"name": "f"}}]}),
                true,
            ),
            (
                Format::OpenAi,
                json!({"tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "required"}),
                false,
            ),
            (
                Format::Responses,
                json!({"tools": [{"type": "function", "name": "f"}], "tool_choice": "auto"}),
                true,
            ),
            (
                Format::Responses,
                json!({"tools": [{"type": "function", "name": "f"}], "tool_choice": {"type": "function", "name": "f"}}),
                false,
            ),
            (
                Format::Responses,
                json!({"tools": [{"type": "function", "name": TOOL_NAME}]}),
                false,
            ),
        ];
        for (format, body, offerable) in cases {
            assert_eq!(
                recall_offerable(format, &body),
                offerable,
                "{format} {body}"
            );
        }
    }

    /// What the definition adds to every request once a session compacted,
    /// by condense's estimate: docs/proxy.md says "about 155".
    #[test]
    fn the_definition_costs_about_150_tokens() {
        for format in [Format::Anthropic, Format::OpenAi, Format::Responses] {
            let tokens = condense_model::tokens::estimate_text(&recall_tool(format).to_string());
            eprintln!("{format}: {tokens} tokens");
            assert!((100..=200).contains(&tokens), "{format}: {tokens}");
        }
    }

    #[test]
    fn the_tool_goes_after_the_clients_own() {
        for format in [Format::Anthropic, Format::OpenAi, Format::Responses] {
            let mut body = json!({"tools": [{"name": "Bash"}], "model": "m"});
            add_recall_tool(format, &mut body);
            let tools = body["tools"].as_array().unwrap();
            assert_eq!(tools.len(), 2);
            assert_eq!(tools[0], json!({"name": "Bash"}));
            assert_eq!(tools[1], recall_tool(format));
            assert!(tools[1].to_string().contains(TOOL_NAME));
        }
    }
}
