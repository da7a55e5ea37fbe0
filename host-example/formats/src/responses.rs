//! OpenAI Responses requests (`POST /v1/responses`) in the form agents such as
//! Codex send: `input` is a list of items.
//!
//! | JSON                                                        | model                                                      |
//! |-------------------------------------------------------------|------------------------------------------------------------|
//! | top-level `instructions` string                             | one [`Role::System`] message, index 0                      |
//! | `message` item (or `{role, content}`), `system`/`developer` | [`Role::System`] (original JSON kept)                      |
//! | string `content` / `input_text` / `output_text` part        | [`Part::Text`]                                             |
//! | any other content part (`input_image`, `refusal`, ...)      | [`Part::Opaque`]                                           |
//! | consecutive `function_call` / `custom_tool_call` items      | one [`Role::Assistant`] message, a [`Part::ToolCall`] each |
//! | `function_call_output` / `custom_tool_call_output`          | [`Role::Tool`] with one [`Part::ToolResult`]               |
//! | `reasoning` item                                            | [`Part::Thinking`], signed                                 |
//! | any other item (`web_search_call`, `item_reference`, ...)   | [`Role::Assistant`] with one [`Part::Opaque`]              |
//!
//! Every item is one model message, so a kept message is its item byte for
//! byte, with one exception: parallel calls come as consecutive call items,
//! and the pairing rule condense enforces ([`check_pairs`]) wants the calls
//! of a batch in one assistant message, answered before the next assistant
//! message. So a run of calls is one message, whose original is the list of
//! its items (and a kept batch is those items).
//!
//! A reasoning item's signature is its `encrypted_content` (or its `id` when
//! the server stores it): the provider checks the item as a whole, and a
//! signed thinking part is what condense keeps byte for byte or drops whole.
//!
//! Rendering a new message: its text parts as one `message` item (`input_text`
//! parts, `output_text` for the assistant), each call as a `function_call`,
//! each result as a `function_call_output` item, in the order of the parts.
//!
//! [`check_pairs`]: condense_model::invariants::check_pairs

use crate::{Entry, Rendered, Result, bail};
use condense_model::{Item, Message, Part, Role, Thinking, ToolCall, ToolResult};
use serde_json::{Value, json};
use std::sync::Arc;

use super::{
    At, Format, Obj, Parsed, Rewrite, json_or_string, kind, opaque, read_content, rewritten_blocks,
    take_list, tool_result_text,
};

/// Body fields that say the server holds the earlier turns: the input is only
/// the newest part of the conversation, there is nothing for condense to fold,
/// and its results may answer calls condense never sees.
const SERVER_STATE: [&str; 2] = ["previous_response_id", "conversation"];

/// See [`crate::nothing_to_compress`].
pub(super) fn nothing_to_compress(body: &Value) -> Option<String> {
    let obj = body.as_object()?;
    if let Some(key) = SERVER_STATE
        .into_iter()
        .find(|key| obj.get(*key).is_some_and(|v| !v.is_null()))
    {
        return Some(format!(
            "{key}: the conversation is held by the server; nothing to compress"
        ));
    }
    if obj.get("input").is_some_and(Value::is_string) {
        return Some("input: a string input is not compressed (only the list form is)".into());
    }
    None
}

pub(super) fn parse(mut body: Value) -> Result<Parsed> {
    if let Some(why) = nothing_to_compress(&body) {
        bail!("{why}");
    }
    let obj = match &mut body {
        Value::Object(obj) => obj,
        other => bail!(
            "body: a Responses request is an object with `input`, found {}",
            kind(other)
        ),
    };
    let list = take_list(obj, "input")?;
    let input_at = At::ROOT.key("input");
    let entries = list
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let message = parse_item(&item, &input_at.index(i))?;
            Ok((Arc::new(item), message))
        })
        .collect::<Result<Vec<_>>>()?;
    assemble(body, entries)
}

/// One item of `input` as a model message.
pub(super) fn read_entry(value: &Value) -> Result<Message> {
    parse_item(value, &At::ROOT.key("input"))
}

/// The request of `body` (its list emptied) and its items, read: a call
/// right after one joins its batch (see the module docs).
pub(super) fn assemble(body: Value, entries: Vec<(Arc<Value>, Message)>) -> Result<Parsed> {
    let root = At::ROOT;
    let mut messages: Vec<Message> = Vec::with_capacity(entries.len() + 1);
    let mut originals: Vec<Arc<Value>> = Vec::with_capacity(entries.len() + 1);
    if let Some(instructions) = Obj::new(&body, &root, "body")?.opt_str("instructions")? {
        messages.push(Message::text(Role::System, instructions));
        originals.push(Arc::new(Value::from(instructions)));
    }
    for (item, message) in entries {
        let is_call = matches!(message.parts.as_slice(), [Part::ToolCall(_)]);
        // Only a batch of calls has a list as its original.
        if is_call
            && let (Some(batch), Some(last)) = (messages.last_mut(), originals.last_mut())
            && let Value::Array(items) = Arc::make_mut(last)
        {
            batch.parts.extend(message.parts);
            items.push(Arc::unwrap_or_clone(item));
        } else {
            originals.push(if is_call {
                Arc::new(Value::Array(vec![Arc::unwrap_or_clone(item)]))
            } else {
                item
            });
            messages.push(message);
        }
    }
    Ok(Parsed {
        format: Format::Responses,
        body,
        messages,
        originals,
        // Reasoning has its own item type.
        reasoning_field: "",
    })
}

/// One input item as one model message.
fn parse_item(value: &Value, at: &At) -> Result<Message> {
    let item = Obj::new(value, at, "item")?;
    // The short form of a message item has no `type`.
    let item_type = item.opt_str("type")?.unwrap_or("message");
    let item = item.named(item_type);
    let one = |role, part| {
        Ok(Message {
            role,
            parts: vec![part],
        })
    };
    match item_type {
        "message" => parse_message(item),
        "function_call" | "custom_tool_call" => one(
            Role::Assistant,
            Part::ToolCall(ToolCall {
                id: item.str("call_id")?.to_owned(),
                name: item.str("name")?.to_owned(),
                // A custom tool takes free text rather than JSON arguments.
                arguments: item
                    .str(match item_type {
                        "function_call" => "arguments",
                        _ => "input",
                    })?
                    .to_owned(),
            }),
        ),
        "function_call_output" | "custom_tool_call_output" => one(
            Role::Tool,
            Part::ToolResult(ToolResult {
                call_id: item.str("call_id")?.to_owned(),
                content: tool_result_text(Some(item.require("output")?), &at.key("output"))?,
                is_error: false,
            }),
        ),
        "reasoning" => one(Role::Assistant, Part::Thinking(parse_reasoning(&item)?)),
        // Built-in tool calls, their outputs, references to stored items: the
        // model's side of the conversation or tied to it. An assistant message
        // never opens a turn, so the compressor does not cut the history
        // before one, and it renders back as the item it is.
        _ => one(Role::Assistant, opaque(value)),
    }
}

fn parse_message(item: Obj) -> Result<Message> {
    let role = match item.str("role")? {
        "system" | "developer" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        other => bail!(
            "{}: unsupported role `{other}` (expected user, assistant, system or developer)",
            item.at
        ),
    };
    let mut parts = Vec::new();
    let content = item.require("content")?;
    read_content(
        Some(content),
        &item.at.key("content"),
        &mut parts,
        parse_content_part,
    )?;
    Ok(Message { role, parts })
}

/// For [`read_content`]: the text parts of a message item, any other part kept
/// as it is.
fn parse_content_part(part: Obj, part_type: &str) -> Result<Part> {
    if !matches!(part_type, "input_text" | "output_text") {
        return Ok(opaque(part.value));
    }
    Ok(Part::Text(part.named("text part").str("text")?.to_owned()))
}

fn parse_reasoning(item: &Obj) -> Result<Thinking> {
    let summary_at = item.at.key("summary");
    let mut texts = Vec::new();
    for (i, part) in item.opt_array("summary")?.into_iter().flatten().enumerate() {
        let at = summary_at.index(i);
        texts.push(Obj::new(part, &at, "summary part")?.str("text")?);
    }
    let Some(signature) = item.opt_str("encrypted_content")?.or(item.opt_str("id")?) else {
        bail!("{}: reasoning has no `encrypted_content` or `id`", item.at);
    };
    Ok(Thinking {
        text: texts.join("\n"),
        signature: Some(signature.to_owned()),
    })
}

pub(super) fn render<'p>(parsed: &'p Parsed, output: &[Item]) -> Rendered<'p> {
    // The top-level `instructions` is message 0 when there is one; other
    // system messages are items of the list (`developer` messages).
    let has_instructions = parsed.has_top_level_system();
    let (instructions, conversation): (Vec<&Item>, Vec<&Item>) = output
        .iter()
        .partition(|item| has_instructions && item.origin() == Some(0));
    let rendered = parsed.reuse_or_render(conversation, render_rewrite, |message, out| {
        render_items(message.role, &message.parts, out)
    });
    let mut body = parsed.body_with(flatten(rendered));
    parsed.put_system(&mut body.body, &instructions, |instructions| {
        let texts: Vec<String> = instructions
            .iter()
            .map(|item| item.message(&parsed.messages).joined_text())
            .collect();
        texts.join("\n").into()
    });
    body
}

/// The items of `rendered`, where a batch of calls or a rewrite may be a list
/// of items (no item is a list).
fn flatten(rendered: Vec<Entry<'_>>) -> Vec<Entry<'_>> {
    let mut out = Vec::with_capacity(rendered.len());
    for entry in rendered {
        match entry {
            Entry::New(Value::Array(items)) => out.extend(items.into_iter().map(Entry::New)),
            Entry::Kept(Value::Array(items)) => out.extend(items.iter().map(Entry::Kept)),
            entry => out.push(entry),
        }
    }
    out
}

/// Whether `item` is a message item (which the short form without `type` is).
fn is_message(item: &Value) -> bool {
    match item.get("type") {
        None | Some(Value::Null) => true,
        Some(kind) => kind == "message",
    }
}

/// A rewritten message as its original with the pass's change (see
/// [`Rewrite`]), as an item or a list of items: a cleared result with its new
/// `output` (a string, valid whatever the original's shape); a message item
/// with its content parts reused where untouched; a batch of calls, a
/// reasoning or an opaque item (one part per item) with each item whose part
/// is still there, and the new parts (a loop's placeholder, the text standing
/// in for dropped reasoning) rendered as new items. Anything else a pass
/// cannot make is rendered new as a whole.
fn render_rewrite(rewrite: Rewrite) -> Value {
    let Rewrite {
        original,
        parts,
        message,
    } = rewrite;
    let new = &message.parts;
    let result_item = matches!(parts, [Part::ToolResult(_)]);
    if result_item && let [Part::ToolResult(result)] = new.as_slice() {
        let mut item = original.clone();
        item["output"] = result.content.as_str().into();
        return item;
    }
    let content_only = new
        .iter()
        .all(|p| matches!(p, Part::Text(_) | Part::Opaque(_)));
    if is_message(original) && content_only {
        let content = match original.get("content") {
            Some(Value::Array(blocks)) if blocks.len() == parts.len() => {
                Value::Array(rewritten_blocks(blocks, parts, new, |p| {
                    content_part(message.role, p)
                }))
            }
            Some(Value::String(_)) if let [Part::Text(text)] = new.as_slice() => {
                text.as_str().into()
            }
            _ => new.iter().map(|p| content_part(message.role, p)).collect(),
        };
        let mut item = original.clone();
        item["content"] = content;
        return item;
    }
    if is_message(original) || result_item {
        let mut items = Vec::new();
        render_items(message.role, new, &mut items);
        return Value::Array(items);
    }
    let items = match original {
        Value::Array(batch) => batch.as_slice(),
        item => std::slice::from_ref(item),
    };
    let rendered = rewritten_blocks(items, parts, new, |part| {
        let mut new_items = Vec::new();
        render_items(message.role, [part], &mut new_items);
        Value::Array(new_items)
    });
    // A list renders as its items (a list of lists as all their items).
    Value::Array(
        rendered
            .into_iter()
            .flat_map(|value| match value {
                Value::Array(items) => items,
                item => vec![item],
            })
            .collect(),
    )
}

/// A text or opaque part as an element of a message item's `content`.
fn content_part(role: Role, part: &Part) -> Value {
    match part {
        Part::Text(text) => text_part(role, text),
        Part::Opaque(json) => json_or_string(json),
        _ => unreachable!("only text and opaque parts are content"),
    }
}

/// A text content part: `output_text` is what the model wrote, `input_text`
/// everything else.
fn text_part(role: Role, text: &str) -> Value {
    let kind = match role {
        Role::Assistant => "output_text",
        Role::System | Role::User | Role::Tool => "input_text",
    };
    json!({ "type": kind, "text": text })
}

/// Renders the `parts` of a `role` message as input items, in their order:
/// consecutive text parts as one `message` item, each call, result and opaque
/// part as an item of its own.
fn render_items<'p>(role: Role, parts: impl IntoIterator<Item = &'p Part>, out: &mut Vec<Value>) {
    let mut texts = Vec::new();
    for part in parts {
        let item = match part {
            Part::Text(text) => {
                texts.push(text_part(role, text));
                continue;
            }
            // A reasoning item goes back only as the provider signed it (a
            // kept message); its text alone, or a signature from another
            // format, is not an item the provider accepts.
            Part::Thinking(_) => continue,
            Part::ToolCall(call) => json!({
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
            }),
            Part::ToolResult(result) => json!({
                "type": "function_call_output",
                "call_id": result.call_id,
                "output": result.content,
            }),
            Part::Opaque(json) => json_or_string(json),
        };
        push_message(role, &mut texts, out);
        out.push(item);
    }
    push_message(role, &mut texts, out);
}

/// The pending text parts of a `role` message as one `message` item, unless
/// there are none.
fn push_message(role: Role, texts: &mut Vec<Value>, out: &mut Vec<Value>) {
    if texts.is_empty() {
        return;
    }
    let role = match role {
        Role::System => "system",
        Role::Assistant => "assistant",
        // A tool message without results has no `call_id` to carry; it can
        // only be user content.
        Role::User | Role::Tool => "user",
    };
    out.push(json!({ "type": "message", "role": role, "content": std::mem::take(texts) }));
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use condense_model::{SUMMARY_MARKER, materialize};

    /// A request as Codex sends it: instructions, developer and user messages,
    /// reasoning with encrypted content, a call and its output, a parallel
    /// batch, a custom tool (apply_patch), the answer and the next question.
    pub(crate) fn codex_request() -> Value {
        json!({
            "model": "gpt-5-codex",
            "instructions": "You are Codex, based on GPT-5. You are running as a coding agent.",
            "input": [
                {"type": "message", "role": "developer", "content": [
                    {"type": "input_text", "text": "<permissions instructions>sandbox: workspace-write</permissions instructions>"}]},
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"}]},
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "Fix the failing test."}]},
                {"type": "reasoning", "summary": [
                    {"type": "summary_text", "text": "**Running the tests**"},
                    {"type": "summary_text", "text": "First I see what fails."}],
                 "content": null, "encrypted_content": "gAAAAABo1-enc-1"},
                {"type": "function_call", "name": "shell",
                 "arguments": "{\"command\":[\"bash\",\"-lc\",\"cargo test\"]}", "call_id": "call_1"},
                {"type": "function_call_output", "call_id": "call_1",
                 "output": "{\"output\":\"test parse ... FAILED\",\"metadata\":{\"exit_code\":101}}"},
                {"type": "reasoning", "summary": [], "content": null, "encrypted_content": "gAAAAABo1-enc-2"},
                {"type": "function_call", "name": "shell",
                 "arguments": "{\"command\":[\"cat\",\"src/lib.rs\"]}", "call_id": "call_2"},
                {"type": "function_call", "name": "shell",
                 "arguments": "{\"command\":[\"cat\",\"tests/parse.rs\"]}", "call_id": "call_3"},
                {"type": "function_call_output", "call_id": "call_2", "output": "pub fn parse() {}"},
                {"type": "function_call_output", "call_id": "call_3", "output": "#[test] fn parse() {}"},
                {"type": "custom_tool_call", "status": "completed", "call_id": "call_4",
                 "name": "apply_patch", "input": "*** Begin Patch\n*** Update File: src/lib.rs\n*** End Patch"},
                {"type": "custom_tool_call_output", "call_id": "call_4", "output": "Success. Updated src/lib.rs"},
                {"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": "Fixed: `parse` now handles empty input."}]},
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "Now run clippy."}]},
            ],
            "tools": [{"type": "function", "name": "shell", "strict": false,
                       "parameters": {"type": "object", "properties": {"command": {"type": "array"}}}}],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort": "medium", "summary": "auto"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "0199c0de-session",
        })
    }

    fn text(role: Role, text: &str) -> Message {
        Message::text(role, text)
    }

    fn thinking(text: &str, signature: &str) -> Message {
        Message {
            role: Role::Assistant,
            parts: vec![Part::Thinking(Thinking {
                text: text.into(),
                signature: Some(signature.into()),
            })],
        }
    }

    fn call(id: &str, name: &str, arguments: &str) -> Part {
        Part::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        })
    }

    fn calls(parts: Vec<Part>) -> Message {
        Message {
            role: Role::Assistant,
            parts,
        }
    }

    fn result(id: &str, content: &str) -> Message {
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: id.into(),
                content: content.into(),
                is_error: false,
            })],
        }
    }

    fn parse(body: Value) -> Result<Parsed> {
        Parsed::parse(body, Format::Responses)
    }

    fn error(body: Value) -> String {
        format!("{:#}", parse(body).unwrap_err())
    }

    #[test]
    fn parses_a_codex_request() {
        let body = codex_request();
        let parsed = parse(body.clone()).unwrap();
        let input = &body["input"];
        let arguments = |i: usize| input[i]["arguments"].as_str().unwrap();
        assert_eq!(
            parsed.messages(),
            [
                text(Role::System, body["instructions"].as_str().unwrap()),
                text(
                    Role::System,
                    input[0]["content"][0]["text"].as_str().unwrap()
                ),
                text(Role::User, input[1]["content"][0]["text"].as_str().unwrap()),
                text(Role::User, "Fix the failing test."),
                thinking(
                    "**Running the tests**\nFirst I see what fails.",
                    "gAAAAABo1-enc-1"
                ),
                calls(vec![call("call_1", "shell", arguments(4))]),
                result("call_1", input[5]["output"].as_str().unwrap()),
                thinking("", "gAAAAABo1-enc-2"),
                // The parallel batch is one message.
                calls(vec![
                    call("call_2", "shell", arguments(7)),
                    call("call_3", "shell", arguments(8)),
                ]),
                result("call_2", "pub fn parse() {}"),
                result("call_3", "#[test] fn parse() {}"),
                calls(vec![call(
                    "call_4",
                    "apply_patch",
                    input[11]["input"].as_str().unwrap()
                )]),
                result("call_4", "Success. Updated src/lib.rs"),
                text(Role::Assistant, "Fixed: `parse` now handles empty input."),
                text(Role::User, "Now run clippy."),
            ]
        );
        assert_eq!(parsed.format(), Format::Responses);
        // Everything but the input list is the body as it came.
        assert_eq!(parsed.body()["input"], json!([]));
        assert_eq!(parsed.body()["instructions"], body["instructions"]);
        parsed.check_tool_pairs().unwrap();
    }

    #[test]
    fn every_item_kept_renders_the_body_back() {
        let body = codex_request();
        let parsed = parse(body.clone()).unwrap();
        let all: Vec<Item> = (0..parsed.messages().len() as u32)
            .map(Item::Kept)
            .collect();
        let rendered = parsed.render(&all);
        assert_eq!(rendered, body);
        // Serialised text too: object equality ignores key order.
        assert_eq!(rendered.to_string(), body.to_string());
    }

    /// What a compaction does: the system messages, a summary in place of the
    /// first turn, the rest kept.
    #[test]
    fn a_summary_leaves_the_kept_items_byte_identical() {
        let body = codex_request();
        let parsed = parse(body.clone()).unwrap();
        let summary = text(
            Role::User,
            &format!("{SUMMARY_MARKER} tests ran; one failed"),
        );
        // Messages 2..=6 (environment, question, reasoning, call, output) are
        // folded; the tail starts at the second reasoning item, input[6].
        let mut output = vec![Item::Kept(0), Item::Kept(1), Item::Written(summary)];
        output.extend((7..parsed.messages().len() as u32).map(Item::Kept));

        let rendered = parsed.render(&output);
        let input = rendered["input"].as_array().unwrap();
        let original = body["input"].as_array().unwrap();
        assert_eq!(input[0].to_string(), original[0].to_string());
        assert_eq!(
            input[1],
            json!({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "[condense summary] tests ran; one failed"}]})
        );
        assert_eq!(
            serde_json::to_string(&input[2..]).unwrap(),
            serde_json::to_string(&original[6..]).unwrap()
        );
        // Everything but the input list is unchanged, `instructions` included.
        let others = |body: &Value| {
            let mut body = body.clone();
            body["input"] = Value::Null;
            body.to_string()
        };
        assert_eq!(others(&rendered), others(&body));
        // The rendered body reads back as the compressor's output, and pairs up.
        let again = parse(rendered).unwrap();
        assert_eq!(again.messages(), materialize(&output, parsed.messages()));
        again.check_tool_pairs().unwrap();
    }

    #[test]
    fn a_rewrite_changes_only_what_the_pass_changed() {
        let body = codex_request();
        let parsed = parse(body.clone()).unwrap();
        let messages = parsed.messages();
        let original = &body["input"];
        let mut placeholder = messages[8].clone();
        placeholder
            .parts
            .insert(0, Part::Text("[condense: 2 steps elided]".into()));
        let rendered = parsed.render(&[
            Item::Rewritten(0, text(Role::System, "You are Codex.")),
            // The reasoning pass drops a signed thinking part whole.
            Item::Rewritten(4, text(Role::Assistant, "[condense: reasoning omitted]")),
            Item::Kept(5),
            Item::Rewritten(6, result("call_1", "[cleared]")),
            Item::Rewritten(8, placeholder),
            Item::Kept(9),
            Item::Kept(10),
            Item::Rewritten(13, text(Role::Assistant, "Fixed.")),
        ]);
        assert_eq!(rendered["instructions"], "You are Codex.");
        let input = rendered["input"].as_array().unwrap();
        assert_eq!(
            input[0],
            json!({"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": "[condense: reasoning omitted]"}]})
        );
        assert_eq!(input[1], original[4]);
        // The cleared output keeps the item's other keys, in their order.
        let mut cleared = original[5].clone();
        cleared["output"] = "[cleared]".into();
        assert_eq!(input[2].to_string(), cleared.to_string());
        // The placeholder is a new message before the batch's own items.
        assert_eq!(
            input[3],
            json!({"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": "[condense: 2 steps elided]"}]})
        );
        assert_eq!(input[4..6], original.as_array().unwrap()[7..9]);
        assert_eq!(input[6..8], original.as_array().unwrap()[9..11]);
        assert_eq!(
            input[8],
            json!({"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": "Fixed."}]})
        );
        assert_eq!(input.len(), 9);
    }

    #[test]
    fn a_rewritten_message_item_keeps_its_keys_and_untouched_parts() {
        let body = json!({"input": [
            {"type": "message", "role": "user", "id": "msg_1", "content": [
                {"type": "input_text", "text": "<think>x</think>look"},
                {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]},
            {"role": "assistant", "content": "<think>y</think>done"},
        ]});
        let parsed = parse(body.clone()).unwrap();
        let mut look = parsed.messages()[0].clone();
        look.parts[0] = Part::Text("look".into());
        let rendered = parsed.render(&[
            Item::Rewritten(0, look),
            Item::Rewritten(1, text(Role::Assistant, "done")),
        ]);
        assert_eq!(
            rendered["input"],
            json!([
                {"type": "message", "role": "user", "id": "msg_1", "content": [
                    {"type": "input_text", "text": "look"},
                    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]},
                // A string stays a string.
                {"role": "assistant", "content": "done"},
            ])
        );
    }

    #[test]
    fn renders_new_messages_as_items() {
        let parsed = parse(json!({"model": "m", "input": []})).unwrap();
        let output = [
            text(Role::User, "[condense summary] x"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Thinking(Thinking {
                        text: "t".into(),
                        signature: Some("s".into()),
                    }),
                    Part::Text("reading".into()),
                    call("c1", "shell", r#"{"command":["ls"]}"#),
                ],
            },
            result("c1", "a\nb"),
            // Anthropic style: results, then text, in one user message.
            Message {
                role: Role::User,
                parts: vec![result("c1", "r").parts.remove(0), Part::Text("next".into())],
            },
            text(Role::System, "be brief"),
            Message {
                role: Role::Assistant,
                parts: vec![Part::Opaque(
                    r#"{"type":"web_search_call","id":"ws_1","status":"completed"}"#.into(),
                )],
            },
        ];
        let items: Vec<Item> = output.iter().cloned().map(Item::Written).collect();
        assert_eq!(
            parsed.render(&items),
            json!({"model": "m", "input": [
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "[condense summary] x"}]},
                {"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": "reading"}]},
                {"type": "function_call", "call_id": "c1", "name": "shell",
                 "arguments": "{\"command\":[\"ls\"]}"},
                {"type": "function_call_output", "call_id": "c1", "output": "a\nb"},
                {"type": "function_call_output", "call_id": "c1", "output": "r"},
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "next"}]},
                {"type": "message", "role": "system", "content": [
                    {"type": "input_text", "text": "be brief"}]},
                {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            ]})
        );
    }

    #[test]
    fn other_items_and_short_forms() {
        let body = json!({"instructions": "rules", "input": [
            {"role": "user", "content": "hi"},
            {"type": "message", "role": "assistant", "content": [
                {"type": "refusal", "refusal": "no"}]},
            {"type": "web_search_call", "id": "ws_1", "status": "completed",
             "action": {"type": "search", "query": "x"}},
            {"type": "item_reference", "id": "msg_0"},
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "s"}]},
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}", "id": "fc_1"},
            {"type": "function_call_output", "call_id": "c", "output": [
                {"type": "input_text", "text": "a"}, {"type": "input_image", "file_id": "f"}]},
        ]});
        let parsed = parse(body.clone()).unwrap();
        let input = &body["input"];
        let opaque_item = |i: usize| Message {
            role: Role::Assistant,
            parts: vec![Part::Opaque(input[i].to_string())],
        };
        assert_eq!(
            parsed.messages(),
            [
                text(Role::System, "rules"),
                text(Role::User, "hi"),
                Message {
                    role: Role::Assistant,
                    parts: vec![Part::Opaque(input[1]["content"][0].to_string())],
                },
                opaque_item(2),
                opaque_item(3),
                // Without encrypted content, the server's id signs it.
                thinking("s", "rs_1"),
                calls(vec![call("c", "f", "{}")]),
                // A list output is carried as its JSON text.
                result("c", &input[6]["output"].to_string()),
            ]
        );
        // Without the instructions kept, the key goes.
        let kept: Vec<Item> = (1..8).map(Item::Kept).collect();
        let mut expected = body.clone();
        expected
            .as_object_mut()
            .unwrap()
            .shift_remove("instructions");
        assert_eq!(parsed.render(&kept), expected);
    }

    #[test]
    fn detect_picks_responses_for_an_input_list() {
        let responses = json!({"model": "gpt-5", "input": [{"role": "user", "content": "hi"}]});
        assert_eq!(crate::detect(&responses).unwrap(), Format::Responses);
        // A string input is a Responses body too, one parse refuses.
        let string = json!({"model": "gpt-5", "input": "hi"});
        assert_eq!(crate::detect(&string).unwrap(), Format::Responses);
        for other in [
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
            json!({"system": "s", "messages": [{"role": "user", "content": "hi"}]}),
            json!({"messages": [], "input": []}),
            json!([{"role": "user", "content": "hi"}]),
        ] {
            assert_ne!(crate::detect(&other).unwrap(), Format::Responses, "{other}");
        }
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(
            error(json!({"model": "m", "input": "hello"})),
            "input: a string input is not compressed (only the list form is)"
        );
        assert_eq!(
            error(json!({"previous_response_id": "resp_1", "input": []})),
            "previous_response_id: the conversation is held by the server; nothing to compress"
        );
        assert_eq!(
            error(json!({"conversation": "conv_1", "input": []})),
            "conversation: the conversation is held by the server; nothing to compress"
        );
        let mut body = codex_request();
        body["input"][3] = json!({"type": "function_call", "name": "shell", "arguments": "{}"});
        assert_eq!(error(body), "input[3]: function_call has no `call_id`");
        for (body, expected) in [
            (json!({"model": "m"}), "body has no `input`"),
            (
                json!({"input": {}}),
                "input: expected a list, found an object",
            ),
            (
                json!([]),
                "body: a Responses request is an object with `input`, found a list",
            ),
            (
                json!({"instructions": ["a"], "input": []}),
                "instructions: expected a string, found a list",
            ),
            (
                json!({"input": [1]}),
                "input[0]: item must be an object, found a number",
            ),
            (
                json!({"input": [{"content": "a"}]}),
                "input[0]: message has no `role`",
            ),
            (
                json!({"input": [{"role": "tool", "content": "a"}]}),
                "input[0]: unsupported role `tool` (expected user, assistant, system or developer)",
            ),
            (
                json!({"input": [{"type": "message", "role": "user"}]}),
                "input[0]: message has no `content`",
            ),
            (
                json!({"input": [{"role": "user", "content": [{"type": "input_text"}]}]}),
                "input[0].content[0]: text part has no `text`",
            ),
            (
                json!({"input": [{"type": "function_call_output", "call_id": "c"}]}),
                "input[0]: function_call_output has no `output`",
            ),
            (
                json!({"input": [{"type": "custom_tool_call", "call_id": "c", "name": "p"}]}),
                "input[0]: custom_tool_call has no `input`",
            ),
            (
                json!({"input": [{"type": "reasoning", "summary": []}]}),
                "input[0]: reasoning has no `encrypted_content` or `id`",
            ),
            (
                json!({"input": [{"type": "reasoning", "id": "r", "summary": [{"type": "summary_text"}]}]}),
                "input[0].summary[0]: summary part has no `text`",
            ),
            (
                json!({"input": [{"type": 3}]}),
                "input[0].type: expected a string, found a number",
            ),
        ] {
            assert_eq!(error(body), expected);
        }
    }

    fn pairing(input: Value) -> Result<(), String> {
        parse(json!({"instructions": "rules", "input": input}))
            .unwrap()
            .check_tool_pairs()
            .map_err(|e| format!("{e:#}"))
    }

    #[test]
    fn pairing_errors_name_input_items() {
        let user = json!({"role": "user", "content": "go"});
        let call = |id: &str| json!({"type": "function_call", "call_id": id, "name": "f", "arguments": "{}"});
        let output =
            |id: &str| json!({"type": "function_call_output", "call_id": id, "output": "ok"});
        assert_eq!(
            pairing(json!([user, output("x")])).unwrap_err(),
            "input[1].call_id: tool result answers call `x` that no assistant message before it made"
        );
        // Batch items are located one by one.
        let e = pairing(json!([user, call("a"), call("b"), output("a"), user])).unwrap_err();
        assert!(
            e.starts_with(
                "input[2]: tool call `b` has no result: input[4], a user message, comes first"
            ),
            "{e}"
        );
        assert_eq!(
            pairing(json!([user, call("a"), call("a")])).unwrap_err(),
            "input[2].call_id: duplicate tool call id `a` (input[1] has it too)"
        );
        // Parallel calls answered in order, and a pending last batch, pair up.
        pairing(json!([
            user,
            call("a"),
            call("b"),
            output("a"),
            output("b"),
            call("c")
        ]))
        .unwrap();
    }
}
