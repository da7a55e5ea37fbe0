//! OpenAI Chat Completions messages (and the many OpenAI-compatible APIs).
//!
//! | JSON                                      | model                                        |
//! |-------------------------------------------|----------------------------------------------|
//! | role `system` or `developer`              | [`Role::System`] (original JSON kept)        |
//! | `reasoning_content` / `reasoning` string  | [`Part::Thinking`] without signature, first  |
//! | `content` string / `text` part            | [`Part::Text`]                               |
//! | any other content part (`image_url`, ...) | [`Part::Opaque`]                             |
//! | `tool_calls[*]`                           | [`Part::ToolCall`], arguments as sent        |
//! | legacy `function_call`                    | [`Part::Opaque`] `{"function_call": …}`      |
//! | role `tool`                               | [`Role::Tool`] with one [`Part::ToolResult`] |
//!
//! Rendering a new message: string `content` when it is one text part, a part list
//! otherwise, reasoning in the field the input used, and one `tool` message per
//! tool result (from Anthropic-style messages that carry several).

use crate::{Rendered, Result, bail};
use condense_model::{Item, Message, Part, Role, Thinking, ToolCall, ToolResult};
use serde_json::{Map, Value, json};
use std::borrow::Borrow;
use std::sync::Arc;

use super::{
    At, Format, Obj, Object, Parsed, Rewrite, json_or_string, opaque, opaque_block, read_content,
    result_content_like, rewritten_blocks, take_messages, text_block, tool_result_text,
};

/// Where providers put reasoning text; the first one present in the input is also
/// the one rendered messages use.
const REASONING_FIELDS: [&str; 2] = ["reasoning_content", "reasoning"];

/// The deprecated single-call field. It is kept as an opaque part wrapped in an
/// object with this one key: content blocks always have a `type`, so the
/// wrapper tells a rewritten message's renderer to put it back in its field
/// rather than in `content`.
const LEGACY_CALL: &str = "function_call";

/// A description of the first shape in the body that only OpenAI allows (see
/// [`super::detect`]).
pub(super) fn evidence<M: Borrow<Value>>(body: &Object, messages: &[M]) -> Option<String> {
    // Not `system`: Anthropic's message list has system messages too.
    const ROLES: [&str; 2] = ["developer", "tool"];
    const FIELDS: [&str; 5] = [
        "tool_calls",
        "tool_call_id",
        "function_call",
        "reasoning_content",
        "reasoning",
    ];
    const PART_TYPES: [&str; 4] = ["image_url", "input_audio", "file", "refusal"];
    for (i, message) in messages.iter().enumerate() {
        let message: &Value = message.borrow();
        if let Some(role) = message
            .get("role")
            .and_then(Value::as_str)
            .filter(|r| ROLES.contains(r))
        {
            return Some(format!("messages[{i}] has role {role}"));
        }
        if let Some(field) = FIELDS.iter().find(|f| message.get(f).is_some()) {
            return Some(format!("messages[{i}] has `{field}`"));
        }
        match message.get("content") {
            Some(Value::Null) => return Some(format!("messages[{i}] has `content: null`")),
            Some(Value::Array(parts)) => {
                for (j, part) in parts.iter().enumerate() {
                    if let Some(kind) = part
                        .get("type")
                        .and_then(Value::as_str)
                        .filter(|t| PART_TYPES.contains(t))
                    {
                        return Some(format!("messages[{i}].content[{j}] has type {kind}"));
                    }
                }
            }
            _ => {}
        }
    }
    let tools = body.get("tools").and_then(Value::as_array)?;
    let i = tools
        .iter()
        .position(|tool| tool.get("function").is_some())?;
    Some(format!("tools[{i}] has `function`"))
}

pub(super) fn parse(mut body: Value) -> Result<Parsed> {
    let (list, bare) = take_messages(&mut body)?;
    let root = At::ROOT;
    let messages_at = root.key("messages");
    let list_at = if bare { &root } else { &messages_at };
    let entries = list
        .into_iter()
        .enumerate()
        .map(|(i, entry)| {
            let message = parse_message(&entry, &list_at.index(i))?;
            Ok((Arc::new(entry), message))
        })
        .collect::<Result<Vec<_>>>()?;
    assemble(body, entries)
}

/// One entry of the message list as a model message.
pub(super) fn read_entry(value: &Value) -> Result<Message> {
    parse_message(value, &At::ROOT.key("messages"))
}

/// The request of `body` (its list emptied) and its entries, read.
pub(super) fn assemble(body: Value, entries: Vec<(Arc<Value>, Message)>) -> Result<Parsed> {
    let reasoning_field = entries
        .iter()
        .find_map(|(m, _)| {
            REASONING_FIELDS
                .into_iter()
                .find(|f| m.get(f).is_some_and(Value::is_string))
        })
        .unwrap_or(REASONING_FIELDS[0]);
    let (originals, messages) = entries.into_iter().unzip();
    Ok(Parsed {
        format: Format::OpenAi,
        body,
        messages,
        originals,
        reasoning_field,
    })
}

fn parse_message(value: &Value, at: &At) -> Result<Message> {
    let message = Obj::new(value, at, "message")?;
    let role = match message.str("role")? {
        "system" | "developer" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => bail!(
            "{at}: unsupported role `{other}` (expected system, developer, user, assistant or tool)"
        ),
    };
    if role == Role::Tool {
        let message = message.named("tool message");
        let result = ToolResult {
            call_id: message.str("tool_call_id")?.to_owned(),
            content: tool_result_text(message.get("content"), &at.key("content"))?,
            is_error: false,
        };
        return Ok(Message {
            role,
            parts: vec![Part::ToolResult(result)],
        });
    }

    let mut parts = Vec::new();
    for field in REASONING_FIELDS {
        if let Some(text) = message.opt_str(field)? {
            parts.push(Part::Thinking(Thinking {
                text: text.to_owned(),
                signature: None,
            }));
        }
    }
    read_content(
        message.get("content"),
        &at.key("content"),
        &mut parts,
        opaque_block,
    )?;
    if let Some(calls) = message.opt_array("tool_calls")? {
        let calls_at = at.key("tool_calls");
        for (i, call) in calls.iter().enumerate() {
            parts.push(Part::ToolCall(parse_tool_call(call, &calls_at.index(i))?));
        }
    }
    if let Some(function_call) = message.get(LEGACY_CALL) {
        parts.push(opaque(&json!({ LEGACY_CALL: function_call })));
    }
    Ok(Message { role, parts })
}

fn parse_tool_call(value: &Value, at: &At) -> Result<ToolCall> {
    let call = Obj::new(value, at, "tool call")?;
    let function_at = at.key("function");
    let function = Obj::new(
        call.require("function")?,
        &function_at,
        "tool call function",
    )?;
    Ok(ToolCall {
        id: call.str("id")?.to_owned(),
        name: function.str("name")?.to_owned(),
        arguments: function.str("arguments")?.to_owned(),
    })
}

pub(super) fn render<'p>(parsed: &'p Parsed, output: &[Item]) -> Rendered<'p> {
    let messages = parsed.reuse_or_render(
        output,
        |rewrite| render_rewrite(rewrite, parsed.reasoning_field),
        |message, out| render_message(message, parsed.reasoning_field, out),
    );
    parsed.body_with(messages)
}

/// A rewritten message as its original with the pass's change (see
/// [`Rewrite`]): a `tool` message with its new content in the original's
/// shape; any other with the reasoning a pass dropped removed and its content
/// parts reused where untouched. Its tool calls are the original's (a rewrite
/// keeps them).
fn render_rewrite(rewrite: Rewrite, reasoning_field: &str) -> Value {
    let Rewrite {
        original,
        parts: _,
        message,
    } = rewrite;
    let mut rendered = original.clone();
    let Value::Object(object) = &mut rendered else {
        unreachable!("a parsed message is an object")
    };
    if let [Part::ToolResult(result)] = message.parts.as_slice() {
        let content = result_content_like(object.get("content"), &result.content);
        object.insert("content".into(), content);
        return rendered;
    }
    let thinking: Vec<&str> = message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Thinking(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    for field in REASONING_FIELDS {
        object.shift_remove(field);
    }
    if !thinking.is_empty() {
        let field = REASONING_FIELDS
            .into_iter()
            .find(|f| original.get(f).is_some())
            .unwrap_or(reasoning_field);
        object.insert(field.into(), thinking.join("\n").into());
    }
    // The content parts: text and content blocks, not calls or the legacy
    // `function_call` (kept as they were).
    let content_parts = message.parts.iter().filter(|p| match p {
        Part::Text(_) => true,
        Part::Opaque(json) => unwrap_legacy_call(json_or_string(json)).is_err(),
        _ => false,
    });
    let content = match object.get("content") {
        Some(Value::Array(blocks)) => {
            let mut parts = Vec::new();
            match read_content(original.get("content"), &At::ROOT, &mut parts, opaque_block) {
                Ok(()) => Value::Array(rewritten_blocks(
                    blocks,
                    &parts,
                    content_parts,
                    content_block,
                )),
                // Content the parse read another way (a tool message's,
                // rewritten into another role: found by the `formats` fuzz
                // target) is rendered new.
                Err(_) => Value::Array(content_parts.map(content_block).collect()),
            }
        }
        _ => {
            let blocks: Vec<Value> = content_parts.map(content_block).collect();
            match blocks.as_slice() {
                [block] if block["type"] == "text" => block["text"].clone(),
                [] => object.get("content").cloned().unwrap_or(Value::Null),
                _ => Value::Array(blocks),
            }
        }
    };
    object.insert("content".into(), content);
    rendered
}

/// A text or opaque part as an element of a `content` list.
fn content_block(part: &Part) -> Value {
    match part {
        Part::Text(text) => text_block(text),
        Part::Opaque(json) => json_or_string(json),
        _ => unreachable!("only content parts are content blocks"),
    }
}

/// The call inside an opaque part's value when it is the legacy
/// `function_call` wrapper (see [`LEGACY_CALL`]); any other value back as it is.
fn unwrap_legacy_call(value: Value) -> Result<Value, Value> {
    match value {
        Value::Object(mut wrapper) if wrapper.len() == 1 && wrapper.contains_key(LEGACY_CALL) => {
            Ok(wrapper.remove(LEGACY_CALL).expect("the key is there"))
        }
        other => Err(other),
    }
}

/// Renders one model message as OpenAI messages: one `tool` message per tool result
/// (OpenAI has no other place for them; they come first because they answer the
/// preceding assistant message), then the other parts as one message, unless there
/// are none.
fn render_message(message: &Message, reasoning_field: &str, out: &mut Vec<Value>) {
    let mut items = Vec::new();
    let mut thinking = Vec::new();
    let mut calls = Vec::new();
    let mut legacy_call = None;
    for part in &message.parts {
        match part {
            Part::Text(text) => items.push(text_block(text)),
            Part::Opaque(json) => match unwrap_legacy_call(json_or_string(json)) {
                Ok(call) => legacy_call = Some(call),
                Err(block) => items.push(block),
            },
            // OpenAI has no field for a signature: only the text can go back.
            Part::Thinking(t) => thinking.push(t.text.as_str()),
            Part::ToolCall(call) => calls.push(json!({
                "id": call.id,
                "type": "function",
                "function": { "name": call.name, "arguments": call.arguments },
            })),
            Part::ToolResult(result) => out.push(json!({
                "role": "tool",
                "tool_call_id": result.call_id,
                "content": result.content,
            })),
        }
    }
    if items.is_empty() && thinking.is_empty() && calls.is_empty() && message.has_tool_results() {
        return;
    }

    let role = match message.role {
        Role::System => "system",
        Role::Assistant => "assistant",
        // A tool message without results has no `tool_call_id` to carry; it can
        // only be user content.
        Role::User | Role::Tool => "user",
    };
    let content = match items.as_slice() {
        // The plain string is the common shape and what every compatible API takes.
        [item] if item["type"] == "text" => item["text"].clone(),
        // An assistant message that only calls tools has no content.
        [] if !calls.is_empty() || legacy_call.is_some() => Value::Null,
        [] => Value::from(""),
        _ => Value::Array(items),
    };
    let mut rendered = Map::new();
    rendered.insert("role".into(), role.into());
    rendered.insert("content".into(), content);
    if !thinking.is_empty() {
        rendered.insert(reasoning_field.into(), thinking.join("\n").into());
    }
    if !calls.is_empty() {
        rendered.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(call) = legacy_call {
        rendered.insert(LEGACY_CALL.into(), call);
    }
    out.push(Value::Object(rendered));
}

#[cfg(test)]
mod tests {
    use super::super::tests::corpus_file;
    use super::*;
    use crate::tests::render_messages;

    fn parse_str(json: &str) -> Result<Parsed> {
        Parsed::parse(serde_json::from_str(json).unwrap(), Format::OpenAi)
    }

    fn error(json: &str) -> String {
        format!("{:#}", parse_str(json).unwrap_err())
    }

    #[test]
    fn reasoning_content_comes_first_and_names_the_field() {
        let body = corpus_file(
            "api/openai-chat_pydantic-ai_deepseek-reasoner_tools_reasoning_content.request.json",
        )
        .0;
        let parsed = Parsed::parse(body.clone(), Format::OpenAi).unwrap();
        let (index, original) = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .find(|(_, m)| m.get("reasoning_content").is_some())
            .unwrap();
        let message = &parsed.messages()[index];
        assert_eq!(message.role, Role::Assistant);
        let Part::Thinking(thinking) = &message.parts[0] else {
            panic!("thinking not first: {message:?}")
        };
        assert_eq!(
            thinking.text,
            original["reasoning_content"].as_str().unwrap()
        );
        assert_eq!(thinking.signature, None);
        assert_eq!(parsed.reasoning_field, "reasoning_content");

        // Both system messages are kept as system messages.
        assert_eq!(
            parsed
                .messages()
                .iter()
                .filter(|m| m.role == Role::System)
                .count(),
            2
        );
    }

    #[test]
    fn sessions_use_reasoning_and_render_it_back_there() {
        let parsed =
            Parsed::parse(corpus_file("sessions/cc-opus-a.json").0, Format::OpenAi).unwrap();
        assert_eq!(parsed.reasoning_field, "reasoning");
        let thinking = Message {
            role: Role::Assistant,
            parts: vec![
                Part::Thinking(Thinking {
                    text: "hmm".into(),
                    signature: Some("sig".into()),
                }),
                Part::Text("done".into()),
            ],
        };
        let rendered = render_messages(&parsed, &[thinking]);
        assert_eq!(
            rendered,
            json!([{ "role": "assistant", "content": "done", "reasoning": "hmm" }])
        );
    }

    #[test]
    fn a_rewritten_legacy_function_call_goes_back_to_its_field() {
        let body = json!([
            { "role": "user", "content": "weather?" },
            {
                "role": "assistant",
                "content": "Checking.",
                "reasoning_content": "The user wants the weather.",
                "function_call": { "name": "weather", "arguments": "{}" }
            }
        ]);
        let parsed = Parsed::parse(body.clone(), Format::OpenAi).unwrap();
        // The reasoning pass drops the thinking part: the message is rendered anew.
        let mut stripped = parsed.messages()[1].clone();
        stripped.parts.remove(0);
        assert_eq!(
            render_messages(&parsed, &[stripped.clone()]),
            json!([{
                "role": "assistant",
                "content": "Checking.",
                "function_call": { "name": "weather", "arguments": "{}" }
            }])
        );
        stripped.parts.remove(0);
        assert_eq!(
            render_messages(&parsed, &[stripped]),
            json!([{
                "role": "assistant",
                "content": null,
                "function_call": { "name": "weather", "arguments": "{}" }
            }])
        );
        // Unchanged, the message goes back as it came.
        assert_eq!(render_messages(&parsed, parsed.messages()), body);
    }

    #[test]
    fn tool_calls_and_results() {
        let body =
            corpus_file("api/openai-chat_pydantic-ai_multiple_agent_tool_calls.request.json").0;
        let parsed = Parsed::parse(body.clone(), Format::OpenAi).unwrap();
        let originals = body["messages"].as_array().unwrap();
        for (message, original) in parsed.messages().iter().zip(originals) {
            let calls = original["tool_calls"]
                .as_array()
                .map_or(&[][..], Vec::as_slice);
            let parsed_calls: Vec<&ToolCall> = message.tool_calls().collect();
            assert_eq!(parsed_calls.len(), calls.len());
            for (call, json) in parsed_calls.iter().zip(calls) {
                assert_eq!(call.id, json["id"].as_str().unwrap());
                assert_eq!(call.name, json["function"]["name"].as_str().unwrap());
                assert_eq!(
                    call.arguments,
                    json["function"]["arguments"].as_str().unwrap()
                );
            }
            if original["role"] == "tool" {
                let result = message.tool_results().next().unwrap();
                assert_eq!(result.call_id, original["tool_call_id"].as_str().unwrap());
                assert_eq!(result.content, original["content"].as_str().unwrap());
                assert_eq!(message.role, Role::Tool);
            }
            if original["content"].is_null() {
                assert!(!message.parts.iter().any(|p| matches!(p, Part::Text(_))));
            }
        }
    }

    #[test]
    fn content_parts() {
        let parsed = parse_str(
            r#"[{"role": "developer", "content": "rules"},
                {"role": "user", "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "data:x"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": [
                    {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]"#,
        )
        .unwrap();
        let messages = parsed.messages();
        assert_eq!(messages[0], Message::text(Role::System, "rules"));
        assert_eq!(
            messages[1].parts,
            [
                Part::Text("look".into()),
                Part::Opaque(r#"{"type":"image_url","image_url":{"url":"data:x"}}"#.into())
            ]
        );
        assert_eq!(
            messages[2].parts,
            [Part::ToolResult(ToolResult {
                call_id: "c1".into(),
                content: "a\nb".into(),
                is_error: false
            })]
        );
        // A developer message kept verbatim stays a developer message.
        assert_eq!(
            render_messages(&parsed, &messages[..1])[0]["role"],
            "developer"
        );
    }

    #[test]
    fn a_rewrite_keeps_every_key_and_shape_it_does_not_change() {
        let body: Value = serde_json::from_str(
            r#"{"model": "m", "messages": [
                {"role": "assistant", "reasoning_content": "hm", "content": "looking",
                 "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "shot", "arguments": "{}"}},
                    {"id": "c2", "type": "function", "function": {"name": "sh", "arguments": "{\"cmd\": \"ls\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "name": "shot", "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]},
                {"role": "tool", "tool_call_id": "c2", "name": "sh", "content": "a\nb"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c3", "type": "function", "function": {"name": "sh", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c3", "content": "ok"}
            ]}"#,
        )
        .unwrap();
        let parsed = Parsed::parse(body.clone(), Format::OpenAi).unwrap();
        let messages = parsed.messages();
        let original = &body["messages"];
        let result = |i: usize, content: &str| Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: messages[i].tool_results().next().unwrap().call_id.clone(),
                content: content.into(),
                is_error: false,
            })],
        };
        let mut pruned = messages[0].clone();
        pruned.parts.remove(0);
        let mut placeholder = messages[3].clone();
        placeholder
            .parts
            .insert(0, Part::Text("[condense: 2 steps elided]".into()));
        let out = parsed.render(&[
            Item::Rewritten(0, pruned),
            Item::Rewritten(1, result(1, "[image cleared]")),
            Item::Rewritten(2, result(2, "[cleared]")),
            Item::Rewritten(3, placeholder),
            Item::Kept(4),
        ])["messages"]
            .clone();
        // Reasoning dropped; content and calls as they were.
        let mut expected = original[0].clone();
        expected
            .as_object_mut()
            .unwrap()
            .shift_remove("reasoning_content");
        assert_eq!(out[0].to_string(), expected.to_string());
        // Cleared results keep `name`, and the shape of their content.
        assert_eq!(
            out[1],
            json!({"role": "tool", "tool_call_id": "c1", "name": "shot", "content": [{"type": "text", "text": "[image cleared]"}]})
        );
        assert_eq!(
            out[2],
            json!({"role": "tool", "tool_call_id": "c2", "name": "sh", "content": "[cleared]"})
        );
        // A placeholder where there was no content: a string.
        assert_eq!(out[3]["content"], "[condense: 2 steps elided]");
        assert_eq!(out[3]["tool_calls"], original[3]["tool_calls"]);
        assert_eq!(out[4], original[4]);
    }

    #[test]
    fn renders_new_messages_in_natural_shape() {
        let parsed = parse_str(r#"{"model": "m", "messages": []}"#).unwrap();
        let call = ToolCall {
            id: "c1".into(),
            name: "Read".into(),
            arguments: r#"{"path":"a"}"#.into(),
        };
        let result = ToolResult {
            call_id: "c1".into(),
            content: "text".into(),
            is_error: true,
        };
        let output = [
            Message::text(Role::User, "[condense summary] x"),
            Message {
                role: Role::Assistant,
                parts: vec![Part::ToolCall(call)],
            },
            // Anthropic style: results and text in one user message.
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult(result), Part::Text("next".into())],
            },
            Message {
                role: Role::User,
                parts: vec![
                    Part::Text("a".into()),
                    Part::Opaque(r#"{"type":"file"}"#.into()),
                ],
            },
        ];
        assert_eq!(
            render_messages(&parsed, &output),
            json!({"model": "m", "messages": [
                {"role": "user", "content": "[condense summary] x"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{\"path\":\"a\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "text"},
                {"role": "user", "content": "next"},
                {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "file"}]},
            ]})
        );
        assert_eq!(parsed.reasoning_field, "reasoning_content");
    }

    #[test]
    fn errors_name_the_location() {
        assert_eq!(
            error(r#"{"messages": [{"role": "user", "content": "a"}, "b"]}"#),
            "messages[1]: message must be an object, found a string"
        );
        assert_eq!(error(r#"[{"content": "a"}]"#), "[0]: message has no `role`");
        assert_eq!(
            error(r#"[{"role": "function", "content": "a"}]"#),
            "[0]: unsupported role `function` (expected system, developer, user, assistant or tool)"
        );
        assert_eq!(
            error(r#"[{"role": "tool", "content": "a"}]"#),
            "[0]: tool message has no `tool_call_id`"
        );
        assert_eq!(
            error(r#"{"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]}"#),
            "messages[0].content[0].text: expected a string, found a number"
        );
        assert_eq!(
            error(
                r#"{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "function": {"name": "f"}}]}]}"#
            ),
            "messages[0].tool_calls[0].function: tool call function has no `arguments`"
        );
        assert_eq!(
            error(r#"[{"role": "user", "content": 3}]"#),
            "[0].content: expected a string or a list, found a number"
        );
        assert_eq!(
            error(r#"{"messages": {}}"#),
            "messages: expected a list, found an object"
        );
        assert_eq!(
            error(r#"[{"role": "assistant", "reasoning": {"effort": "high"}}]"#),
            "[0].reasoning: expected a string, found an object"
        );
    }
}
