//! Anthropic Messages requests.
//!
//! | JSON                                          | model                                                  |
//! |-----------------------------------------------|--------------------------------------------------------|
//! | top-level `system` (string or text blocks)    | one [`Role::System`] message, index 0                  |
//! | a `system` message in `messages`              | a [`Role::System`] message where it is                 |
//! | `content` string / `text` block               | [`Part::Text`]                                         |
//! | `thinking` block                              | [`Part::Thinking`] with its signature                  |
//! | `tool_use` block                              | [`Part::ToolCall`], `input` as JSON text               |
//! | `tool_result` block                           | [`Part::ToolResult`]; the message stays [`Role::User`] |
//! | `redacted_thinking`, `image`, `document`, ... | [`Part::Opaque`]                                       |
//!
//! Rendering: the top-level system message, and any system message condense
//! wrote, go to `system`, as the original value when it is the parsed one, as text
//! blocks when it changed, and the key is removed when there are none; a system
//! message of the list (Claude Code sends its environment as one) stays in the
//! list. Other new messages get block content;
//! [`Role::Tool`] messages become `user` messages, where Anthropic carries results.

use crate::{Rendered, Result, bail};
use condense_model::{Item, Message, Part, Role, Thinking, ToolCall, ToolResult};
use serde_json::{Value, json};
use std::borrow::Borrow;
use std::sync::Arc;

use super::{
    At, Format, Obj, Object, Parsed, Rewrite, json_or_string, opaque, opaque_block, read_content,
    rewritten_blocks, take_messages, text_block, tool_result_text,
};

/// A description of the first shape in the body that only Anthropic allows (see
/// [`super::detect`]).
pub(super) fn evidence<M: Borrow<Value>>(body: &Object, messages: &[M]) -> Option<String> {
    const BLOCK_TYPES: [&str; 6] = [
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "image",
        "document",
    ];
    if body.contains_key("system") {
        return Some("top-level `system`".into());
    }
    let mut tools = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    if let Some(i) = tools.position(|tool| tool.get("input_schema").is_some()) {
        return Some(format!("tools[{i}] has `input_schema`"));
    }
    messages.iter().enumerate().find_map(|(i, message)| {
        let blocks = message.borrow().get("content")?.as_array()?;
        blocks.iter().enumerate().find_map(|(j, block)| {
            let kind = block
                .get("type")?
                .as_str()
                .filter(|t| BLOCK_TYPES.contains(t))?;
            Some(format!("messages[{i}].content[{j}] has type {kind}"))
        })
    })
}

pub(super) fn parse(mut body: Value) -> Result<Parsed> {
    let (list, bare) = take_messages(&mut body)?;
    if bare {
        bail!("body: an Anthropic request is an object with `messages`, found a bare list");
    }
    let messages_at = At::ROOT.key("messages");
    let entries = list
        .into_iter()
        .enumerate()
        .map(|(i, entry)| {
            let message = parse_message(&entry, &messages_at.index(i))?;
            Ok((Arc::new(entry), message))
        })
        .collect::<Result<Vec<_>>>()?;
    assemble(body, entries)
}

/// One entry of `messages` as a model message.
pub(super) fn read_entry(value: &Value) -> Result<Message> {
    parse_message(value, &At::ROOT.key("messages"))
}

/// The request of `body` (its list emptied) and its entries, read.
pub(super) fn assemble(body: Value, entries: Vec<(Arc<Value>, Message)>) -> Result<Parsed> {
    let root = At::ROOT;
    let mut messages = Vec::with_capacity(entries.len() + 1);
    let mut originals = Vec::with_capacity(entries.len() + 1);
    if let Some(system) = body.get("system").filter(|s| !s.is_null()) {
        let mut parts = Vec::new();
        read_content(Some(system), &root.key("system"), &mut parts, opaque_block)?;
        messages.push(Message {
            role: Role::System,
            parts,
        });
        originals.push(Arc::new(system.clone()));
    }
    for (original, message) in entries {
        originals.push(original);
        messages.push(message);
    }
    Ok(Parsed {
        format: Format::Anthropic,
        body,
        messages,
        originals,
        // Anthropic thinking has its own block type.
        reasoning_field: "",
    })
}

fn parse_message(value: &Value, at: &At) -> Result<Message> {
    let message = Obj::new(value, at, "message")?;
    let role = match message.str("role")? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => Role::System,
        other => bail!("{at}: unsupported role `{other}` (expected user, assistant or system)"),
    };
    let mut parts = Vec::new();
    // Unlike OpenAI's, Anthropic content is never absent or null.
    let content = message.require("content")?;
    read_content(Some(content), &at.key("content"), &mut parts, parse_block)?;
    Ok(Message { role, parts })
}

/// The content blocks other than `text` (which [`read_content`] reads).
fn parse_block(block: Obj, block_type: &str) -> Result<Part> {
    Ok(match block_type {
        "thinking" => {
            let block = block.named("thinking block");
            Part::Thinking(Thinking {
                text: block.str("thinking")?.to_owned(),
                signature: block.opt_str("signature")?.map(str::to_owned),
            })
        }
        "tool_use" => {
            let block = block.named("tool_use block");
            Part::ToolCall(ToolCall {
                id: block.str("id")?.to_owned(),
                name: block.str("name")?.to_owned(),
                arguments: block.require("input")?.to_string(),
            })
        }
        "tool_result" => {
            let block = block.named("tool_result block");
            Part::ToolResult(ToolResult {
                call_id: block.str("tool_use_id")?.to_owned(),
                content: tool_result_text(block.get("content"), &block.at.key("content"))?,
                is_error: block.opt_bool("is_error")?.unwrap_or(false),
            })
        }
        _ => opaque(block.value),
    })
}

pub(super) fn render<'p>(parsed: &'p Parsed, output: &[Item]) -> Rendered<'p> {
    // The top-level system message (index 0 when there is one) and written
    // ones go to `system`; the list's own system messages stay in it.
    let top = parsed.has_top_level_system();
    // The top-level system message is the body's `system` field, not a
    // message: it renders there whatever a rewrite made of it (a rewrite
    // that changed its role once landed in `messages` and indexed the
    // `system` value as a message; found by the `formats` fuzz target).
    let (system, conversation): (Vec<&Item>, Vec<&Item>) =
        output.iter().partition(|item| match item {
            Item::Kept(i) | Item::Rewritten(i, _) => top && *i == 0,
            Item::Written(message) => message.role == Role::System,
        });
    let messages = parsed.reuse_or_render(conversation, render_rewrite, |message, out| {
        out.push(render_message(message))
    });
    let mut body = parsed.body_with(messages);
    parsed.put_system(&mut body.body, &system, |system| {
        let blocks = system
            .iter()
            .flat_map(|item| &item.message(&parsed.messages).parts)
            .map(render_block)
            .collect();
        Value::Array(blocks)
    });
    body
}

/// A rewritten message as its original with the pass's change (see
/// [`Rewrite`]).
fn render_rewrite(rewrite: Rewrite) -> Value {
    let Rewrite {
        original,
        parts,
        message,
    } = rewrite;
    let content = match original.get("content") {
        Some(Value::Array(blocks)) if blocks.len() == parts.len() => Value::Array(
            rewritten_blocks(blocks, parts, &message.parts, render_block),
        ),
        Some(Value::String(_)) if let [Part::Text(text)] = message.parts.as_slice() => {
            Value::String(text.clone())
        }
        _ => {
            let mut new = render_message(message);
            new["content"].take()
        }
    };
    let mut rendered = original.clone();
    rendered["content"] = content;
    rendered
}

fn render_message(message: &Message) -> Value {
    let role = match message.role {
        Role::Assistant => "assistant",
        Role::System => "system",
        // Tool results travel in user messages.
        Role::User | Role::Tool => "user",
    };
    let content: Vec<Value> = message.parts.iter().map(render_block).collect();
    json!({ "role": role, "content": content })
}

fn render_block(part: &Part) -> Value {
    match part {
        Part::Text(text) => text_block(text),
        Part::Thinking(thinking) => {
            let mut block = json!({ "type": "thinking", "thinking": thinking.text });
            if let Some(signature) = &thinking.signature {
                block["signature"] = signature.as_str().into();
            }
            block
        }
        Part::ToolCall(call) => json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            // Arguments that are not JSON (possible from OpenAI-style input) go as a
            // string rather than being dropped.
            "input": json_or_string(&call.arguments),
        }),
        Part::ToolResult(result) => {
            let mut block = json!({
                "type": "tool_result",
                "tool_use_id": result.call_id,
                "content": result.content,
            });
            if result.is_error {
                block["is_error"] = true.into();
            }
            block
        }
        Part::Opaque(json) => json_or_string(json),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::corpus_file;
    use super::*;
    use crate::tests::render_messages;

    fn parse_str(json: &str) -> Result<Parsed> {
        Parsed::parse(serde_json::from_str(json).unwrap(), Format::Anthropic)
    }

    fn error(json: &str) -> String {
        format!("{:#}", parse_str(json).unwrap_err())
    }

    #[test]
    fn signed_thinking_tool_use_and_tool_result() {
        let body = corpus_file("api/anthropic_pydantic-ai_tool_with_thinking.request.json").0;
        let parsed = Parsed::parse(body.clone(), Format::Anthropic).unwrap();
        let assistant = &parsed.messages()[1];
        let block = &body["messages"][1]["content"][0];
        assert_eq!(
            assistant.parts[0],
            Part::Thinking(Thinking {
                text: block["thinking"].as_str().unwrap().into(),
                signature: Some(block["signature"].as_str().unwrap().into()),
            })
        );
        let call = assistant.tool_calls().next().unwrap();
        let result_message = &parsed.messages()[2];
        let result = result_message.tool_results().next().unwrap();
        assert_eq!(result.call_id, call.id);
        assert_eq!(result_message.role, Role::User);
        let result_block = body["messages"][2]["content"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["type"] == "tool_result")
            .unwrap();
        assert_eq!(result.is_error, result_block["is_error"].as_bool().unwrap());
    }

    /// `message` with the tool result for `id` given `content`.
    fn with_result(message: &Message, id: &str, content: &str) -> Message {
        let mut message = message.clone();
        for part in &mut message.parts {
            if let Part::ToolResult(r) = part
                && r.call_id == id
            {
                r.content = content.into();
            }
        }
        message
    }

    #[test]
    fn a_rewrite_keeps_every_block_and_key_it_does_not_change() {
        let body: Value = serde_json::from_str(
            r#"{"model": "m", "messages": [
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "hm", "signature": "sig"},
                    {"type": "text", "text": "looking"},
                    {"type": "tool_use", "id": "t1", "name": "Screenshot", "input": {}},
                    {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"cmd": "ls"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "a\nb", "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": "go on", "cache_control": {"type": "ephemeral"}}]}
            ]}"#,
        )
        .unwrap();
        let parsed = Parsed::parse(body.clone(), Format::Anthropic).unwrap();
        let [assistant, carrier] = parsed.messages() else {
            panic!("two messages")
        };
        let render = |items: &[Item]| parsed.render(items)["messages"].clone();
        let blocks = |v: &Value, i: usize| v[i]["content"].clone();

        // The text result cleared: its block keeps its breakpoint, with the
        // new content a string as before; the image result and the text
        // block are the originals.
        let cleared = with_result(carrier, "t2", "[cleared]");
        let out = render(&[Item::Kept(0), Item::Rewritten(1, cleared)]);
        let original = blocks(&body["messages"], 1);
        assert_eq!(out[1]["content"][0], original[0], "the image stays a list");
        assert_eq!(
            out[1]["content"][1],
            json!({"type": "tool_result", "tool_use_id": "t2", "content": "[cleared]", "cache_control": {"type": "ephemeral"}})
        );
        assert_eq!(out[1]["content"][2], original[2]);

        // The image cleared: a list it was, a list of one text block it is.
        let cleared = with_result(carrier, "t1", "[image cleared]");
        let out = render(&[Item::Kept(0), Item::Rewritten(1, cleared)]);
        assert_eq!(
            out[1]["content"][0]["content"],
            json!([{"type": "text", "text": "[image cleared]"}])
        );

        // Reasoning dropped: the other blocks come back as they were.
        let mut pruned = assistant.clone();
        pruned.parts.remove(0);
        let out = render(&[Item::Rewritten(0, pruned), Item::Kept(1)]);
        assert_eq!(
            out[0]["content"].as_array().unwrap()[..],
            blocks(&body["messages"], 0).as_array().unwrap()[1..]
        );
    }

    #[test]
    fn system_becomes_message_zero() {
        let body = corpus_file("anthropic/cc-trace-sonnet.request.json").0;
        let parsed = Parsed::parse(body.clone(), Format::Anthropic).unwrap();
        assert_eq!(
            parsed.messages().len(),
            body["messages"].as_array().unwrap().len() + 1
        );
        let system = &parsed.messages()[0];
        assert_eq!(system.role, Role::System);
        assert_eq!(
            system.parts,
            [Part::Text(
                body["system"][0]["text"].as_str().unwrap().into()
            )]
        );
        assert!(
            parsed.messages()[1..]
                .iter()
                .all(|m| m.role != Role::System)
        );
    }

    #[test]
    fn tool_input_and_results() {
        let parsed = parse_str(
            r#"{"messages": [
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"cmd": "ls", "n": 1}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                    {"type": "tool_result", "tool_use_id": "t2", "is_error": true, "content": [{"type": "image", "source": {}}]},
                    {"type": "tool_result", "tool_use_id": "t3"},
                    {"type": "redacted_thinking", "data": "x"}]}]}"#,
        )
        .unwrap();
        let [call, results] = parsed.messages() else {
            panic!()
        };
        assert_eq!(
            call.tool_calls().next().unwrap().arguments,
            r#"{"cmd":"ls","n":1}"#
        );
        let result = |call_id: &str, content: &str, is_error| {
            Part::ToolResult(ToolResult {
                call_id: call_id.into(),
                content: content.into(),
                is_error,
            })
        };
        assert_eq!(
            results.parts,
            [
                result("t1", "a\nb", false),
                result("t2", r#"[{"type":"image","source":{}}]"#, true),
                result("t3", "", false),
                Part::Opaque(r#"{"type":"redacted_thinking","data":"x"}"#.into()),
            ]
        );
    }

    #[test]
    fn renders_new_messages_as_blocks() {
        let parsed = parse_str(r#"{"model": "m", "messages": []}"#).unwrap();
        let output = [
            Message::text(Role::User, "[condense summary] x"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Thinking(Thinking {
                        text: "t".into(),
                        signature: Some("s".into()),
                    }),
                    Part::ToolCall(ToolCall {
                        id: "c".into(),
                        name: "f".into(),
                        arguments: r#"{"a":1}"#.into(),
                    }),
                ],
            },
            // An OpenAI-style tool message becomes a user message.
            Message {
                role: Role::Tool,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: "c".into(),
                    content: "r".into(),
                    is_error: true,
                })],
            },
        ];
        assert_eq!(
            render_messages(&parsed, &output),
            json!({"model": "m", "messages": [
                {"role": "user", "content": [{"type": "text", "text": "[condense summary] x"}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "t", "signature": "s"},
                    {"type": "tool_use", "id": "c", "name": "f", "input": {"a": 1}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": "r", "is_error": true}]},
            ]})
        );
    }

    #[test]
    fn system_is_written_back_only_when_changed() {
        let parsed = parse_str(r#"{"system": "be brief", "model": "m", "messages": [{"role": "user", "content": "hi"}]}"#).unwrap();
        let [system, user] = parsed.messages() else {
            panic!()
        };

        let kept = render_messages(&parsed, &[system.clone(), user.clone()]);
        assert_eq!(
            kept.to_string(),
            r#"{"system":"be brief","model":"m","messages":[{"role":"user","content":"hi"}]}"#
        );

        let changed = render_messages(
            &parsed,
            &[Message::text(Role::System, "be kind"), user.clone()],
        );
        assert_eq!(
            changed["system"],
            json!([{"type": "text", "text": "be kind"}])
        );

        let dropped = render_messages(&parsed, std::slice::from_ref(user));
        assert_eq!(
            dropped.to_string(),
            r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#
        );
    }

    #[test]
    fn unknown_fields_survive_on_kept_messages() {
        let body = json!({
            "model": "m",
            "system": [{"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": "old"},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": [
                    {"type": "text", "text": "new", "cache_control": {"type": "ephemeral"}}]},
            ],
            "metadata": {"user_id": "u"},
        });
        let parsed = Parsed::parse(body.clone(), Format::Anthropic).unwrap();
        let [system, _, _, last] = parsed.messages() else {
            panic!()
        };
        let summary = Message::text(Role::User, "[condense summary] old");
        let rendered = render_messages(&parsed, &[system.clone(), summary, last.clone()]);
        assert_eq!(rendered["system"].to_string(), body["system"].to_string());
        assert_eq!(
            rendered["messages"][1].to_string(),
            body["messages"][2].to_string()
        );
        assert_eq!(rendered["metadata"], body["metadata"]);
    }

    /// Claude Code sends its environment as a system message in the list:
    /// read as one, where it is, and rendered back there — the top-level
    /// system prompt stays top-level — whatever condense folds around it.
    #[test]
    fn a_system_message_in_the_list_stays_in_the_list() {
        let body = json!({
            "system": [{"type": "text", "text": "You are Claude Code.",
                        "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "count"}]},
                {"role": "system", "content": "# Environment\nPrimary working directory: /w"},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "seq 3"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "1\n2\n3"}]},
                {"role": "assistant", "content": "Counted."},
            ],
        });
        assert_eq!(crate::detect(&body).unwrap(), Format::Anthropic);
        let parsed = Parsed::parse(body.clone(), Format::Anthropic).unwrap();
        let roles: Vec<Role> = parsed.messages().iter().map(|m| m.role).collect();
        use Role::{Assistant, System, User};
        assert_eq!(roles, [System, User, System, Assistant, User, Assistant]);
        let all: Vec<Item> = (0..6).map(Item::Kept).collect();
        assert_eq!(parsed.render(&all).to_string(), body.to_string());
        // Folded up to the result: the pair, the opener, the environment.
        let folded = parsed.render(&[
            Item::Kept(0),
            Item::Written(Message::text(User, "[condense summary] counted to 3")),
            Item::Written(Message::text(Assistant, "Understood.")),
            Item::Kept(1),
            Item::Kept(2),
            Item::Kept(5),
        ]);
        assert_eq!(folded["system"], body["system"]);
        let messages = folded["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 5);
        assert_eq!(messages[3], body["messages"][1]);
        assert_eq!(messages[3]["role"], "system");
    }

    #[test]
    fn errors_name_the_location() {
        let mut messages = vec![r#"{"role": "user", "content": "hi"}"#; 12];
        messages.push(r#"{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}, {"type": "text", "text": "c"}, {"type": "tool_result", "content": "x"}]}"#);
        assert_eq!(
            error(&format!(r#"{{"messages": [{}]}}"#, messages.join(","))),
            "messages[12].content[3]: tool_result block has no `tool_use_id`"
        );
        assert_eq!(
            error(r#"{"system": "s", "messages": [{"role": "developer", "content": "x"}]}"#),
            "messages[0]: unsupported role `developer` (expected user, assistant or system)"
        );
        assert_eq!(
            error(r#"{"messages": [{"role": "user"}]}"#),
            "messages[0]: message has no `content`"
        );
        assert_eq!(
            error(r#"{"messages": [{"role": "user", "content": 1}]}"#),
            "messages[0].content: expected a string or a list, found a number"
        );
        assert_eq!(
            error(r#"{"messages": [{"role": "user", "content": [{"text": "a"}]}]}"#),
            "messages[0].content[0]: content block has no `type`"
        );
        assert_eq!(
            error(
                r#"{"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "b"}]}]}"#
            ),
            "messages[0].content[0]: tool_use block has no `input`"
        );
        assert_eq!(
            error(
                r#"{"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "is_error": "yes"}]}]}"#
            ),
            "messages[0].content[0].is_error: expected a boolean, found a string"
        );
        assert_eq!(
            error(
                r#"{"messages": [{"role": "assistant", "content": [{"type": "thinking", "signature": "s"}]}]}"#
            ),
            "messages[0].content[0]: thinking block has no `thinking`"
        );
        assert_eq!(
            error(r#"{"system": 5, "messages": []}"#),
            "system: expected a string or a list, found a number"
        );
        assert_eq!(
            error(r#"{"system": [{"type": "text"}], "messages": []}"#),
            "system[0]: text block has no `text`"
        );
        assert_eq!(
            error(r#"[]"#),
            "body: an Anthropic request is an object with `messages`, found a bare list"
        );
    }
}
