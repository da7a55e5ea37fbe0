//! Request-body adapters: OpenAI Chat Completions, Anthropic Messages and OpenAI
//! Responses JSON to the condense message model and back.
//!
//! The compressor sees only [`condense_model::Message`]s, but the provider must get a
//! request exactly like the one the agent built, minus what condense folded. So
//! [`Parsed`] remembers the JSON every model message came from, and [`Parsed::render`]
//! writes a message the compressor kept (by its index) back as that JSON,
//! untouched: unknown fields such as `cache_control`, `name` or `refusal`
//! survive, and the request prefix stays byte-identical between calls, which is what
//! keeps the provider's prompt cache warm. Only messages the compressor wrote or
//! changed are rendered from their parts, in the format's natural shape.
//!
//! ```
//! use condense_formats::{Parsed, detect};
//! use condense_model::{Item, Message, Role};
//! use serde_json::json;
//!
//! let body = json!({
//!     "model": "m",
//!     "messages": [
//!         {"role": "user", "content": "old question", "name": "ann"},
//!         {"role": "user", "content": "new question", "name": "ann"},
//!     ],
//! });
//! let parsed = Parsed::parse(body.clone(), detect(&body)?)?;
//! // The compressor's output: a summary in place of the first message.
//! let summary = Message::text(Role::User, "[condense summary] ann asked an old question");
//! let output = [Item::Written(summary), Item::Kept(1)];
//! let request = parsed.render(&output);
//! assert_eq!(request["messages"][0], json!({
//!     "role": "user",
//!     "content": "[condense summary] ann asked an old question",
//! }));
//! assert_eq!(request["messages"][1], body["messages"][1]); // with its `name`
//! # Ok::<(), condense_formats::FormatError>(())
//! ```

mod anthropic;
pub mod compaction;
mod openai;
mod read;
mod responses;
mod tools;
pub mod usage;

pub use read::Read;
pub use tools::{add_recall_tool, recall_offerable, recall_tool};

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use condense_model::invariants::{PairProblem, PartAt, check_pairs};
use condense_model::{Item, Message, Part, Role};
use serde_json::{Map, Value, json};

/// Why a body is not a request of its format: the JSON location of the
/// problem and what is wrong there, as one sentence (`messages[3].content[0]:
/// tool_use block has no `input``).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FormatError(String);

pub type Result<T, E = FormatError> = std::result::Result<T, E>;

/// `return Err(FormatError(format!(...)))`.
macro_rules! bail {
    ($($message:tt)*) => {
        return Err($crate::FormatError(format!($($message)*)))
    };
}
pub(crate) use bail;

/// The request-body formats condense reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// OpenAI Chat Completions: `{"messages": [...]}` or a bare message list.
    OpenAi,
    /// Anthropic Messages: `{"system": ..., "messages": [...]}` with content blocks.
    Anthropic,
    /// OpenAI Responses: `{"instructions": ..., "input": [...]}` with a list of
    /// input items (messages, function calls and their outputs, reasoning).
    Responses,
}

impl Format {
    /// The name used on the command line and in [`Display`](fmt::Display).
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenAi => "openai",
            Format::Anthropic => "anthropic",
            Format::Responses => "responses",
        }
    }

    /// Every protocol, for a caller that goes through them all.
    pub const ALL: [Format; 3] = [Format::OpenAi, Format::Anthropic, Format::Responses];

    /// The path a client posts a request body of this protocol to (below
    /// the provider's base URL): what the proxy routes by, and what the
    /// runtime's clients call.
    pub fn endpoint_path(self) -> &'static str {
        match self {
            Format::OpenAi => "/v1/chat/completions",
            Format::Anthropic => "/v1/messages",
            Format::Responses => "/v1/responses",
        }
    }

    /// The protocol posted to `path`, if any ([`Format::endpoint_path`]).
    pub fn at_endpoint(path: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.endpoint_path() == path)
    }

    /// The key of a request body that caps the answer's tokens, for a body
    /// whose other fields are `fields`: Chat's older `max_tokens` only where
    /// the client used it (newer models refuse it), else
    /// `max_completion_tokens`.
    pub fn output_limit_key(self, fields: &Map<String, Value>) -> &'static str {
        match self {
            Format::Anthropic => "max_tokens",
            Format::OpenAi if fields.contains_key("max_tokens") => "max_tokens",
            Format::OpenAi => "max_completion_tokens",
            Format::Responses => "max_output_tokens",
        }
    }

    /// The role of the message that carries tool results back: a user
    /// message of `tool_result` blocks (Anthropic), `tool` messages (Chat),
    /// `function_call_output` items (Responses, read as `tool`).
    pub fn result_role(self) -> Role {
        match self {
            Format::Anthropic => Role::User,
            Format::OpenAi | Format::Responses => Role::Tool,
        }
    }

    /// The body key of the message list.
    pub fn list_key(self) -> &'static str {
        match self {
            Format::OpenAi | Format::Anthropic => "messages",
            Format::Responses => "input",
        }
    }

    /// The top-level key of the system prompt, in formats that keep it
    /// outside the message list.
    fn system_key(self) -> Option<&'static str> {
        match self {
            Format::OpenAi => None,
            Format::Anthropic => Some("system"),
            Format::Responses => Some("instructions"),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = FormatError;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "openai" => Ok(Format::OpenAi),
            "anthropic" => Ok(Format::Anthropic),
            "responses" => Ok(Format::Responses),
            other => bail!("unknown format `{other}` (expected openai, anthropic or responses)"),
        }
    }
}

/// `messages` as entries of `format`'s message list, rendered as condense
/// renders any message it writes: for a host that appends them to a body
/// it holds (the proxy continuing a request with tool results).
pub fn render_messages(format: Format, messages: &[Message]) -> Vec<Value> {
    let key = format.list_key();
    let parsed = Parsed::parse(json!({ key: [] }), format)
        .expect("an empty message list is a request of every format");
    let items: Vec<Item> = messages.iter().cloned().map(Item::Written).collect();
    match parsed.render(&items).get_mut(key).map(Value::take) {
        Some(Value::Array(list)) => list,
        _ => unreachable!("a request renders with its message list"),
    }
}

/// Tells which format a request body is in.
///
/// The rule, from the shapes only one of the formats allows:
/// - An object with an `input` key and no `messages` is an OpenAI Responses request
///   (the other two have no `input`; whether it is the list form condense compresses
///   is for [`Parsed::parse`] to say).
/// - A bare JSON list is an OpenAI-style message list (Anthropic bodies are objects).
/// - Otherwise the body must be an object with a `messages` list. Anthropic evidence
///   is a top-level `system` key, a `tools` entry with `input_schema`, or a content
///   block of type `tool_use`, `tool_result`, `thinking`, `redacted_thinking`, `image`
///   or `document`. OpenAI evidence is a message with role `system`, `developer` or
///   `tool`, with `tool_calls`, `tool_call_id`, `function_call`, `reasoning` or
///   `reasoning_content`, with `content: null`, a content part of type `image_url`,
///   `input_audio`, `file` or `refusal`, or a `tools` entry with `function`.
/// - Evidence of both is an error naming one piece of each. No evidence at all (only
///   user and assistant messages with text) means OpenAI: such a body is valid in both
///   formats, and the OpenAI rendering of new messages (string content) is valid
///   Anthropic too.
pub fn detect(body: &Value) -> Result<Format> {
    if let Value::Object(obj) = body
        && obj.contains_key("input")
        && !obj.contains_key("messages")
    {
        return Ok(Format::Responses);
    }
    let (messages, Some(obj)) = message_list(body)? else {
        return Ok(Format::OpenAi);
    };
    match (
        anthropic::evidence(obj, messages),
        openai::evidence(obj, messages),
    ) {
        (Some(a), Some(o)) => bail!("body mixes Anthropic ({a}) and OpenAI ({o}) shapes"),
        (Some(_), None) => Ok(Format::Anthropic),
        (None, _) => Ok(Format::OpenAi),
    }
}

/// Why `body`, a valid request of `format`, has nothing condense compresses,
/// if so: a Responses request whose conversation the server holds
/// (`previous_response_id`, `conversation`) or whose `input` is one string.
/// A host sends such a request on as it is; it is not an error of the
/// client's.
pub fn nothing_to_compress(format: Format, body: &Value) -> Option<String> {
    match format {
        Format::Responses => responses::nothing_to_compress(body),
        Format::OpenAi | Format::Anthropic => None,
    }
}

/// A request body read into the message model, ready to be rendered back after
/// compression.
#[derive(Clone, Debug)]
pub struct Parsed {
    format: Format,
    /// The body with its message list emptied (an empty list for a bare-list body):
    /// every other field comes back from here unchanged.
    body: Value,
    messages: Vec<Message>,
    /// The JSON each entry of `messages` was read from, same index. For a top-level
    /// system prompt (always index 0) it is the value of `system` (Anthropic) or
    /// `instructions` (Responses); for a Responses batch of calls, the list of its
    /// `function_call` items. Shared: a session's messages are read once
    /// ([`Parsed::read`]), and a kept one is written out from here.
    originals: Vec<Arc<Value>>,
    /// OpenAI only: the message field that carries reasoning in rendered messages;
    /// the one the input used, since providers disagree (`reasoning_content` at
    /// DeepSeek, `reasoning` at OpenRouter and others).
    reasoning_field: &'static str,
}

impl Parsed {
    /// Reads `body` as `format`. Errors name the JSON location of the problem, e.g.
    /// `messages[12].content[3]: tool_result block has no `tool_use_id``.
    pub fn parse(body: Value, format: Format) -> Result<Parsed> {
        match format {
            Format::OpenAi => openai::parse(body),
            Format::Anthropic => anthropic::parse(body),
            Format::Responses => responses::parse(body),
        }
    }

    /// The messages in model form, oldest first. In Anthropic bodies the top-level
    /// `system` becomes one system message at index 0, in Responses bodies the
    /// top-level `instructions`.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The messages, the rest of the body dropped: for a host that keeps
    /// the history once the body is rendered (the proxy, to answer recalls).
    pub fn into_messages(self) -> Vec<Message> {
        self.messages
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// The body as it came, without its message list: tools, model settings
    /// and everything else condense sends on untouched.
    pub fn body(&self) -> &Value {
        &self.body
    }

    /// Renders `items` (the compressor's result, by reference into
    /// [`messages`](Self::messages)) back into a request body of the same
    /// format: a kept message is written as its original JSON, whatever other
    /// message is equal to it; a rewritten or written one is rendered from its
    /// parts. All other body fields come back unchanged, and a bare-list body
    /// renders as a bare list. Every index must lie within `messages`.
    pub fn render(&self, items: &[Item]) -> Value {
        self.rendered(items).into_value()
    }

    /// [`render`](Self::render) written out as JSON, byte for byte what
    /// `serde_json::to_vec(&parsed.render(items))` writes, with `recall`
    /// the `condense_recall` tool added ([`add_recall_tool`]): the kept
    /// messages are written from their originals, never copied into a new
    /// body first.
    pub fn render_bytes(&self, items: &[Item], recall: bool) -> Vec<u8> {
        let mut rendered = self.rendered(items);
        if recall {
            add_recall_tool(self.format, &mut rendered.body);
        }
        rendered.write()
    }

    fn rendered(&self, items: &[Item]) -> Rendered<'_> {
        match self.format {
            Format::OpenAi => openai::render(self, items),
            Format::Anthropic => anthropic::render(self, items),
            Format::Responses => responses::render(self, items),
        }
    }

    /// Checks that tool calls and results pair up: every result answers a call
    /// of the assistant message it follows, every call id is unique, and every
    /// call is answered before the next assistant or person's message, except
    /// the calls of the last assistant message, which may be pending. A request
    /// that breaks this is malformed: providers reject it, and the compressor
    /// refuses it.
    ///
    /// Whether the messages pair up is decided by [`check_pairs`], the rule the
    /// compressor enforces, so the two never disagree; this names the problem
    /// it reports at its JSON location, e.g. `messages[3].tool_call_id: tool
    /// result answers call `c9` that no assistant message before it made`.
    pub fn check_tool_pairs(&self) -> Result<()> {
        let Err(problem) = check_pairs(&self.messages) else {
            return Ok(());
        };
        let call_at = |at: PartAt| self.call_at(at.message, at.part);
        let result_at = |at: PartAt| self.result_at(at.message, at.part);
        Err(FormatError(match problem {
            PairProblem::Unanswered { id, call, before } => format!(
                "{}: tool call `{id}` has no result: {}, {} message, comes first (only the \
                 calls of the last assistant message may be pending)",
                call_at(call),
                self.message_at(before),
                role_name(self.messages[before].role),
            ),
            PairProblem::DuplicateId { id, call, first } => format!(
                "{}.{}: duplicate tool call id `{id}` ({} has it too)",
                call_at(call),
                // A Responses item's `id` is the item's, not the call's.
                if self.format == Format::Responses {
                    "call_id"
                } else {
                    "id"
                },
                call_at(first)
            ),
            PairProblem::SecondResult { id, result, call } => format!(
                "{}: a second tool result for call `{id}` of {}",
                result_at(result),
                call_at(call)
            ),
            PairProblem::StrayResult {
                id,
                result,
                called: None,
            } => format!(
                "{}: tool result answers call `{id}` that no assistant message before it made",
                result_at(result)
            ),
            PairProblem::StrayResult {
                id,
                result,
                called: Some(call),
            } => format!(
                "{}: tool result answers call `{id}` of {}, but results must directly follow \
                 the assistant message that made the call",
                result_at(result),
                call_at(call)
            ),
            // The formats give every tool message its result; kept for
            // completeness.
            PairProblem::EmptyToolMessage { message } => format!(
                "{}: a tool message without a tool result",
                self.message_at(message)
            ),
        }))
    }

    /// The JSON location of message `index` of [`messages`](Self::messages).
    fn message_at(&self, index: usize) -> String {
        match self.format.system_key() {
            Some(key) if index == 0 && self.has_top_level_system() => key.to_owned(),
            _ if self.body.is_array() => format!("[{index}]"),
            _ => format!("{}[{}]", self.format.list_key(), self.list_index(index)),
        }
    }

    /// Whether message 0 is the top-level system prompt (`system`,
    /// `instructions`): the body has it, as parsing read it.
    fn has_top_level_system(&self) -> bool {
        self.format
            .system_key()
            .and_then(|key| self.body.get(key))
            .is_some_and(|v| !v.is_null())
    }

    /// The position in the body's list of the (first) entry message `index` was
    /// read from: the top-level system prompt is not in the list, and a
    /// Responses batch of calls is one message for several items.
    fn list_index(&self, index: usize) -> usize {
        let first = usize::from(self.has_top_level_system());
        self.originals[first..index]
            .iter()
            .map(|original| match (self.format, &**original) {
                (Format::Responses, Value::Array(items)) => items.len(),
                _ => 1,
            })
            .sum()
    }

    /// The JSON location of the tool call at part `part` of message `index`.
    fn call_at(&self, index: usize, part: usize) -> String {
        let message = self.message_at(index);
        match self.format {
            Format::OpenAi => {
                // Parts are reasoning, content, then the calls in order.
                let nth = tool_calls(&self.messages[index])
                    .take_while(|(p, _)| *p < part)
                    .count();
                format!("{message}.tool_calls[{nth}]")
            }
            // Anthropic content blocks are the message's parts, one for one.
            Format::Anthropic => format!("{message}.content[{part}]"),
            // A batch of calls has one item per call, its parts.
            Format::Responses => format!("input[{}]", self.list_index(index) + part),
        }
    }

    /// The JSON location of the call id of the tool result at part `part` of
    /// message `index`.
    fn result_at(&self, index: usize, part: usize) -> String {
        let message = self.message_at(index);
        match self.format {
            Format::OpenAi => format!("{message}.tool_call_id"),
            Format::Anthropic => format!("{message}.content[{part}].tool_use_id"),
            // An output item carries one result.
            Format::Responses => format!("{message}.call_id"),
        }
    }

    /// The JSON list of `items`: a kept message is its original, byte for
    /// byte; a rewritten one is rendered by `rewrite` from its original (the
    /// [`Rewrite`]); a written one by `render_new` (which may push several
    /// JSON messages for one model message).
    fn reuse_or_render<'i>(
        &self,
        items: impl IntoIterator<Item = &'i Item>,
        mut rewrite: impl FnMut(Rewrite) -> Value,
        mut render_new: impl FnMut(&Message, &mut Vec<Value>),
    ) -> Vec<Entry<'_>> {
        let mut rendered = Vec::new();
        let mut new = Vec::new();
        for item in items {
            match item {
                Item::Kept(i) => rendered.push(Entry::Kept(&self.originals[*i as usize])),
                Item::Rewritten(i, message) => rendered.push(Entry::New(rewrite(Rewrite {
                    original: &self.originals[*i as usize],
                    parts: &self.messages[*i as usize].parts,
                    message,
                }))),
                Item::Written(message) => {
                    render_new(message, &mut new);
                    rendered.extend(new.drain(..).map(Entry::New));
                }
            }
        }
        rendered
    }

    /// The stored body, to have `list` put back in place of the emptied
    /// list (`messages`, or `input` for Responses).
    fn body_with<'p>(&'p self, list: Vec<Entry<'p>>) -> Rendered<'p> {
        Rendered {
            body: self.body.clone(),
            list,
            list_key: self.format.list_key(),
        }
    }

    /// Puts the output's top-level system prompt, the `system` items, into
    /// `body` at the format's key: the parsed one kept stays as it came, none
    /// removes the key, anything else is written as `render(system)`.
    fn put_system(
        &self,
        body: &mut Value,
        system: &[&Item],
        render: impl FnOnce(&[&Item]) -> Value,
    ) {
        let unchanged = if self.has_top_level_system() {
            *system == [&Item::Kept(0)]
        } else {
            system.is_empty()
        };
        if !unchanged
            && let Value::Object(obj) = body
            && let Some(key) = self.format.system_key()
        {
            if system.is_empty() {
                obj.shift_remove(key);
            } else {
                obj.insert(key.into(), render(system));
            }
        }
    }
}

/// A JSON object, as serde_json stores it.
type Object = Map<String, Value>;

/// An entry of a rendered message list: a kept message's original, or JSON
/// rendered for this request.
enum Entry<'p> {
    Kept(&'p Value),
    New(Value),
}

impl Entry<'_> {
    fn value(&self) -> &Value {
        match self {
            Entry::Kept(value) => value,
            Entry::New(value) => value,
        }
    }
}

/// A rendered request: the body with its list emptied (its top-level system
/// prompt and tools as they go out), and the list, which goes under
/// `list_key` (an object body keeps the emptied key where it was).
struct Rendered<'p> {
    body: Value,
    list: Vec<Entry<'p>>,
    list_key: &'static str,
}

impl Rendered<'_> {
    /// The body with the list in place, every kept entry copied.
    fn into_value(self) -> Value {
        let list = Value::Array(self.list.iter().map(|e| e.value().clone()).collect());
        let mut body = self.body;
        match &mut body {
            // Replacing an existing key keeps its position (preserve_order).
            Value::Object(obj) => drop(obj.insert(self.list_key.into(), list)),
            other => *other = list,
        }
        body
    }

    /// The body as compact JSON: what serde_json writes for
    /// [`Rendered::into_value`], without the copy.
    fn write(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 << 16);
        let write_list = |out: &mut Vec<u8>| {
            out.push(b'[');
            for (i, entry) in self.list.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, entry.value()).expect("JSON writes to memory");
            }
            out.push(b']');
        };
        let Value::Object(obj) = &self.body else {
            write_list(&mut out);
            return out;
        };
        out.push(b'{');
        let mut first = true;
        let mut field = |out: &mut Vec<u8>, key: &str| {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
            serde_json::to_writer(&mut *out, key).expect("JSON writes to memory");
            out.push(b':');
        };
        for (key, value) in obj {
            field(&mut out, key);
            if key == self.list_key {
                write_list(&mut out);
            } else {
                serde_json::to_writer(&mut out, value).expect("JSON writes to memory");
            }
        }
        if !obj.contains_key(self.list_key) {
            field(&mut out, self.list_key);
            write_list(&mut out);
        }
        out.push(b'}');
        out
    }
}

/// A message a pass rewrote, with the original it came from. A pass drops
/// parts (reasoning), inserts a text part (a loop's placeholder) or replaces
/// a tool result's content (clearing); it never changes a call or a result's
/// id. So the rewrite is rendered as its original with only that changed:
/// every other key and every untouched block come back as they were (a
/// `cache_control` breakpoint, an image in a tool result), and the content
/// keeps its shape (a string stays a string, a list a list).
struct Rewrite<'a> {
    original: &'a Value,
    /// The original's parts, as parsed from it.
    parts: &'a [Part],
    message: &'a Message,
}

/// The content blocks of a rewritten message: each part that is one of the
/// original's (`parts`, read from `blocks` one to one), in order, comes back
/// as that block; a tool result whose content a pass replaced comes back as
/// its original block with the new content in the original's shape; any
/// other part is rendered new by `render`.
fn rewritten_blocks<'p>(
    blocks: &[Value],
    parts: &[Part],
    new: impl IntoIterator<Item = &'p Part>,
    render: impl Fn(&Part) -> Value,
) -> Vec<Value> {
    let mut cursor = 0;
    new.into_iter()
        .map(|part| {
            if let Some(at) = parts[cursor..].iter().position(|p| p == part) {
                cursor += at + 1;
                return blocks[cursor - 1].clone();
            }
            if let Part::ToolResult(result) = part
                && let Some(at) = parts
                    .iter()
                    .position(|p| matches!(p, Part::ToolResult(r) if r.call_id == result.call_id))
                && let Value::Object(block) = &blocks[at]
            {
                let mut block = block.clone();
                let content = result_content_like(block.get("content"), &result.content);
                block.insert("content".into(), content);
                return Value::Object(block);
            }
            render(part)
        })
        .collect()
}

/// A tool result's new content in the shape of `original`: a list (of text,
/// or images a pass cleared) becomes a list of one text block, anything else
/// a string.
fn result_content_like(original: Option<&Value>, text: &str) -> Value {
    match original {
        Some(Value::Array(_)) => Value::Array(vec![text_block(text)]),
        _ => Value::String(text.to_owned()),
    }
}

/// The tool calls of `message`: part index and call id.
fn tool_calls(message: &Message) -> impl Iterator<Item = (usize, &str)> {
    message
        .parts
        .iter()
        .enumerate()
        .filter_map(|(i, p)| match p {
            Part::ToolCall(c) => Some((i, c.id.as_str())),
            _ => None,
        })
}

/// "a user message", for error messages.
fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "a system",
        Role::User => "a user",
        Role::Assistant => "an assistant",
        Role::Tool => "a tool",
    }
}

/// The message list of `body` and, unless the body is a bare OpenAI-style list, the
/// object around it.
fn message_list(body: &Value) -> Result<(&[Value], Option<&Object>)> {
    match body {
        Value::Array(list) => Ok((list, None)),
        Value::Object(obj) => Ok((list_field(obj, "messages")?, Some(obj))),
        other => bail!(
            "body: expected an object or a message list, found {}",
            kind(other)
        ),
    }
}

/// The list at top-level `key` of a body.
fn list_field<'o>(body: &'o Object, key: &str) -> Result<&'o [Value]> {
    match body.get(key) {
        Some(Value::Array(list)) => Ok(list),
        Some(other) => bail!("{key}: expected a list, found {}", kind(other)),
        None => bail!("body has no `{key}`"),
    }
}

/// Takes the list at top-level `key` out of a body, leaving an empty list in its
/// place (so the key keeps its position).
fn take_list(body: &mut Object, key: &str) -> Result<Vec<Value>> {
    list_field(body, key)?;
    let list = body.get_mut(key).and_then(Value::as_array_mut);
    Ok(std::mem::take(list.expect("`list_field` checked it")))
}

/// Takes the message list out of `body` (see [`take_list`]) and tells whether
/// the body was a bare list.
fn take_messages(body: &mut Value) -> Result<(Vec<Value>, bool)> {
    let bare = message_list(body)?.1.is_none();
    let list = match body {
        Value::Object(obj) => take_list(obj, "messages")?,
        // `message_list` checked that a body that is no object is a list.
        list => list.as_array_mut().map(std::mem::take).unwrap_or_default(),
    };
    Ok((list, bare))
}

/// A location in the request body, for error messages: `messages[12].content[3]`.
/// A linked list on the stack, so it costs nothing until an error prints it.
#[derive(Clone, Copy)]
struct At<'a> {
    parent: Option<&'a At<'a>>,
    step: Step<'a>,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl<'a> At<'a> {
    const ROOT: At<'static> = At {
        parent: None,
        step: Step::Root,
    };

    fn key(&'a self, key: &'a str) -> At<'a> {
        At {
            parent: Some(self),
            step: Step::Key(key),
        }
    }

    fn index(&'a self, index: usize) -> At<'a> {
        At {
            parent: Some(self),
            step: Step::Index(index),
        }
    }

    fn is_root(&self) -> bool {
        matches!(self.step, Step::Root)
    }
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The root prints only on its own ("body"); inside a path it is implicit.
        let parent = self.parent.filter(|p| !p.is_root());
        if let Some(parent) = parent {
            write!(f, "{parent}")?;
        }
        match self.step {
            Step::Root => f.write_str("body"),
            Step::Key(key) if parent.is_some() => write!(f, ".{key}"),
            Step::Key(key) => f.write_str(key),
            Step::Index(index) => write!(f, "[{index}]"),
        }
    }
}

/// A JSON object being read: its fields, where it is and what it is ("tool call",
/// "tool_result block"), so that every accessor can report a precise error.
struct Obj<'v, 'a> {
    value: &'v Value,
    map: &'v Object,
    at: &'a At<'a>,
    what: &'a str,
}

impl<'v, 'a> Obj<'v, 'a> {
    fn new(value: &'v Value, at: &'a At<'a>, what: &'a str) -> Result<Self> {
        match value {
            Value::Object(map) => Ok(Obj {
                value,
                map,
                at,
                what,
            }),
            other => bail!("{at}: {what} must be an object, found {}", kind(other)),
        }
    }

    /// The same object under a more precise name, once its type is known.
    fn named(self, what: &'a str) -> Self {
        Obj { what, ..self }
    }

    /// The field, with `null` read as absent: clients write both for "none".
    fn get(&self, key: &str) -> Option<&'v Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn require(&self, key: &str) -> Result<&'v Value> {
        self.get(key)
            .ok_or_else(|| FormatError(format!("{}: {} has no `{key}`", self.at, self.what)))
    }

    fn str(&self, key: &str) -> Result<&'v str> {
        self.opt_str(key)?
            .ok_or_else(|| FormatError(format!("{}: {} has no `{key}`", self.at, self.what)))
    }

    fn opt_str(&self, key: &str) -> Result<Option<&'v str>> {
        self.get(key)
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| self.wrong_type(key, v, "a string"))
            })
            .transpose()
    }

    fn opt_bool(&self, key: &str) -> Result<Option<bool>> {
        self.get(key)
            .map(|v| {
                v.as_bool()
                    .ok_or_else(|| self.wrong_type(key, v, "a boolean"))
            })
            .transpose()
    }

    fn opt_array(&self, key: &str) -> Result<Option<&'v Vec<Value>>> {
        self.get(key)
            .map(|v| {
                v.as_array()
                    .ok_or_else(|| self.wrong_type(key, v, "a list"))
            })
            .transpose()
    }

    fn wrong_type(&self, key: &str, found: &Value, expected: &str) -> FormatError {
        FormatError(format!(
            "{}: expected {expected}, found {}",
            self.at.key(key),
            kind(found)
        ))
    }
}

/// Reads a `content` value shared by both formats: absent or `null` (no parts), a
/// string (one text part), or a list of typed blocks where `{"type": "text"}` is a
/// text part and every other type goes to `other_block`.
fn read_content(
    content: Option<&Value>,
    at: &At,
    parts: &mut Vec<Part>,
    other_block: impl Fn(Obj, &str) -> Result<Part>,
) -> Result<()> {
    match content {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => parts.push(Part::Text(text.clone())),
        Some(Value::Array(blocks)) => {
            for (i, block) in blocks.iter().enumerate() {
                let at = at.index(i);
                let block = Obj::new(block, &at, "content block")?;
                let part = match block.str("type")? {
                    "text" => Part::Text(block.named("text block").str("text")?.to_owned()),
                    other => other_block(block, other)?,
                };
                parts.push(part);
            }
        }
        Some(other) => bail!("{at}: expected a string or a list, found {}", kind(other)),
    }
    Ok(())
}

/// A tool result's content as the model carries it: a string as is, a list of only
/// text blocks as their texts joined by newlines (what the model reads), any other
/// list as its JSON text, so images and the like are measured and passed on, not
/// lost.
fn tool_result_text(content: Option<&Value>, at: &At) -> Result<String> {
    match content {
        None => Ok(String::new()),
        Some(Value::String(text)) => Ok(text.clone()),
        Some(list @ Value::Array(blocks)) => {
            let texts: Option<Vec<&str>> = blocks.iter().map(block_text).collect();
            Ok(texts.map_or_else(|| list.to_string(), |texts| texts.join("\n")))
        }
        Some(other) => bail!("{at}: expected a string or a list, found {}", kind(other)),
    }
}

/// The text of a `{"type": "text", "text": ...}` block, the shape both formats use.
fn block_text(block: &Value) -> Option<&str> {
    (block.get("type")?.as_str()? == "text").then_some(())?;
    block.get("text")?.as_str()
}

fn text_block(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

/// An opaque part carries the compact JSON text of the value.
fn opaque(value: &Value) -> Part {
    Part::Opaque(value.to_string())
}

/// For [`read_content`]: a block kept as it is.
fn opaque_block(block: Obj, _type: &str) -> Result<Part> {
    Ok(opaque(block.value))
}

/// Parses JSON text back into a value: an opaque part, or tool arguments for a
/// format that wants them as JSON. Text that is not JSON (only possible if the
/// compressor made it up) is kept as a JSON string rather than dropped.
fn json_or_string(json: &str) -> Value {
    serde_json::from_str(json).unwrap_or_else(|_| Value::String(json.to_owned()))
}

/// The JSON type of `value`, for error messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items for rendering `output` in these tests: each message identical to
    /// the next unused input message is kept by index, any other written.
    /// (The compressor says what it kept; these tests only spell it that way.)
    pub(super) fn items_for(parsed: &Parsed, output: &[Message]) -> Vec<Item> {
        let mut cursor = 0;
        output
            .iter()
            .map(
                |m| match parsed.messages()[cursor..].iter().position(|x| x == m) {
                    Some(at) => {
                        cursor += at + 1;
                        Item::Kept((cursor - 1) as u32)
                    }
                    None => Item::Written(m.clone()),
                },
            )
            .collect()
    }

    pub(super) fn render_messages(parsed: &Parsed, output: &[Message]) -> Value {
        parsed.render(&items_for(parsed, output))
    }
    use condense_model::{Role, SUMMARY_MARKER};
    use std::path::PathBuf;

    /// The corpus file `name` (relative to tests/corpus) with the format it is in:
    /// `anthropic/` and `api/anthropic_*` are Anthropic, the rest OpenAI.
    pub(super) fn corpus_file(name: &str) -> (Value, Format) {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/corpus")
            .join(name);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let body = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let anthropic = name.starts_with("anthropic/") || name.starts_with("api/anthropic_");
        (
            body,
            if anthropic {
                Format::Anthropic
            } else {
                Format::OpenAi
            },
        )
    }

    /// Every request body in tests/corpus: name, body, format.
    fn corpus() -> Vec<(String, Value, Format)> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
        let mut names = Vec::new();
        for dir in ["sessions", "anthropic", "api"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let file = entry.unwrap().file_name().into_string().unwrap();
                if file.ends_with(".json") {
                    names.push(format!("{dir}/{file}"));
                }
            }
        }
        names.sort();
        assert!(names.len() >= 16, "corpus incomplete: {names:?}");
        names
            .into_iter()
            .map(|name| {
                let (body, format) = corpus_file(&name);
                (name, body, format)
            })
            .collect()
    }

    /// The message list of a rendered body.
    fn rendered_messages(body: &Value) -> &Vec<Value> {
        match body {
            Value::Array(list) => list,
            body => body["messages"].as_array().unwrap(),
        }
    }

    #[test]
    fn detect_classifies_every_corpus_file() {
        for (name, body, format) in corpus() {
            assert_eq!(detect(&body).unwrap(), format, "{name}");
        }
    }

    #[test]
    fn every_corpus_file_round_trips_byte_identical() {
        for (name, body, format) in corpus() {
            let parsed =
                Parsed::parse(body.clone(), format).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            let rendered = render_messages(&parsed, parsed.messages());
            // Serialised text, not `==`: object equality ignores key order.
            assert_eq!(rendered.to_string(), body.to_string(), "{name}");
        }
    }

    /// What a compaction does: system messages, a new summary, the tail.
    #[test]
    fn render_with_summary_keeps_kept_messages_identical() {
        for (name, body, format) in corpus() {
            let parsed = Parsed::parse(body.clone(), format).unwrap();
            let input = parsed.messages();
            let systems = input.iter().take_while(|m| m.role == Role::System).count();
            let tail_start = systems + (input.len() - systems) / 2;
            let summary = Message::text(Role::User, format!("{SUMMARY_MARKER} earlier work"));
            let output: Vec<Message> = input[..systems]
                .iter()
                .chain([&summary])
                .chain(&input[tail_start..])
                .cloned()
                .collect();

            let rendered = render_messages(&parsed, &output);
            let messages = rendered_messages(&rendered);
            let original = rendered_messages(&body);
            // Anthropic's system message lives outside the message list.
            let (listed_systems, input_tail_start) = match format {
                Format::OpenAi => (systems, tail_start),
                Format::Anthropic => (0, tail_start - systems),
                // responses.rs has this test on its own request.
                Format::Responses => unreachable!("the corpus holds no Responses request"),
            };
            assert_eq!(
                messages[..listed_systems],
                original[..listed_systems],
                "{name}"
            );
            let expected_summary = match format {
                Format::OpenAi => {
                    json!({"role": "user", "content": "[condense summary] earlier work"})
                }
                Format::Anthropic => json!({
                    "role": "user",
                    "content": [{"type": "text", "text": "[condense summary] earlier work"}],
                }),
                Format::Responses => unreachable!("the corpus holds no Responses request"),
            };
            assert_eq!(messages[listed_systems], expected_summary, "{name}");
            let tail = &messages[listed_systems + 1..];
            assert_eq!(
                serde_json::to_string(tail).unwrap(),
                serde_json::to_string(&original[input_tail_start..]).unwrap(),
                "{name}"
            );
            // Everything but the message list is unchanged (including `system`).
            if let (Value::Object(after), Value::Object(before)) = (&rendered, &body) {
                let others = |obj: &Object| {
                    obj.iter()
                        .filter(|(k, _)| *k != "messages")
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect::<Vec<_>>()
                };
                assert_eq!(others(after), others(before), "{name}");
            } else {
                assert!(rendered.is_array() && body.is_array(), "{name}");
            }
            // The rendered body reads back as the compressor's output.
            assert_eq!(
                Parsed::parse(rendered, format).unwrap().messages(),
                output,
                "{name}"
            );
        }
    }

    /// Replacing any one value of a request by a value of another type gives an
    /// error or a body that still round-trips: never a panic.
    #[test]
    fn malformed_bodies_never_panic() {
        fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
            let children: Vec<(String, &Value)> = match value {
                Value::Array(items) => items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (i.to_string(), v))
                    .collect(),
                Value::Object(obj) => obj
                    .iter()
                    .map(|(k, v)| (k.replace('~', "~0").replace('/', "~1"), v))
                    .collect(),
                _ => Vec::new(),
            };
            for (key, child) in children {
                pointers(child, format!("{at}/{key}"), out);
            }
            out.push(at);
        }
        let replacements = [
            Value::Null,
            json!(true),
            json!(1),
            json!("x"),
            json!([]),
            json!([1]),
            json!({}),
        ];
        let bodies = [
            "api/anthropic_pydantic-ai_tool_with_thinking.request.json",
            "api/openai-chat_pydantic-ai_deepseek-reasoner_tools_reasoning_content.request.json",
        ]
        .map(|name| (name, corpus_file(name).0));
        let responses = ("responses codex request", responses::tests::codex_request());
        for (name, body) in bodies.into_iter().chain([responses]) {
            let mut all = Vec::new();
            pointers(&body, String::new(), &mut all);
            for pointer in &all {
                for replacement in &replacements {
                    let mut broken = body.clone();
                    *broken.pointer_mut(pointer).unwrap() = replacement.clone();
                    let _ = detect(&broken);
                    for format in [Format::OpenAi, Format::Anthropic, Format::Responses] {
                        if let Ok(parsed) = Parsed::parse(broken.clone(), format) {
                            let rendered = render_messages(&parsed, parsed.messages());
                            assert_eq!(
                                rendered.to_string(),
                                broken.to_string(),
                                "{name} {pointer}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn changed_message_is_rendered_and_later_ones_still_reused() {
        let body = json!([
            {"role": "user", "content": "hi", "name": "ann"},
            {"role": "assistant", "content": "hello", "refusal": null},
            {"role": "user", "content": "again", "name": "ann"},
        ]);
        let parsed = Parsed::parse(body.clone(), Format::OpenAi).unwrap();
        let mut output = parsed.messages().to_vec();
        output[1] = Message::text(Role::Assistant, "hello!");
        let rendered = render_messages(&parsed, &output);
        assert_eq!(rendered[0], body[0]);
        assert_eq!(
            rendered[1],
            json!({"role": "assistant", "content": "hello!"})
        );
        assert_eq!(rendered[2], body[2]);
    }

    #[test]
    fn a_kept_message_is_its_own_original_not_an_equal_ones() {
        // Two model-equal messages with different JSON: a kept one is rendered
        // from its own index, whichever other message equals it.
        let body = json!([
            {"role": "user", "content": "go", "name": "first"},
            {"role": "user", "content": "go", "name": "second"},
        ]);
        let parsed = Parsed::parse(body.clone(), Format::OpenAi).unwrap();
        assert_eq!(parsed.messages()[0], parsed.messages()[1]);
        let summary = Message::text(Role::User, "[condense summary] s");
        let rendered = parsed.render(&[Item::Written(summary), Item::Kept(1)]);
        assert_eq!(rendered[1], body[1]);
        assert_eq!(parsed.render(&[Item::Kept(0), Item::Kept(1)]), body);
        assert_eq!(parsed.render(&[Item::Kept(0)]), json!([body[0]]));
    }

    #[test]
    fn detect_rules() {
        let json = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        // Text-only user/assistant messages are valid in both: OpenAI.
        let plain = json(r#"{"messages": [{"role": "user", "content": "hi"}]}"#);
        assert_eq!(detect(&plain).unwrap(), Format::OpenAi);
        let system =
            json(r#"{"system": "be brief", "messages": [{"role": "user", "content": "hi"}]}"#);
        assert_eq!(detect(&system).unwrap(), Format::Anthropic);
        let tools = json(r#"{"tools": [{"name": "x", "input_schema": {}}], "messages": []}"#);
        assert_eq!(detect(&tools).unwrap(), Format::Anthropic);
        let mixed = json(
            r#"{"messages": [{"role": "tool", "tool_call_id": "a", "content": "x"},
                             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]}]}"#,
        );
        let err = detect(&mixed).unwrap_err().to_string();
        assert!(
            err.contains("messages[1].content[0]") && err.contains("messages[0]"),
            "{err}"
        );
        assert_eq!(
            detect(&json(r#"{"model": "x"}"#)).unwrap_err().to_string(),
            "body has no `messages`"
        );
        assert_eq!(
            detect(&json("42")).unwrap_err().to_string(),
            "body: expected an object or a message list, found a number"
        );
    }

    #[test]
    fn format_names() {
        for format in [Format::OpenAi, Format::Anthropic, Format::Responses] {
            assert_eq!(format.to_string().parse::<Format>().unwrap(), format);
        }
        assert!("gemini".parse::<Format>().is_err());
    }

    #[test]
    fn every_corpus_file_pairs_up() {
        for (name, body, format) in corpus() {
            let parsed = Parsed::parse(body, format).unwrap();
            parsed
                .check_tool_pairs()
                .unwrap_or_else(|e| panic!("{name}: {e:#}"));
        }
    }

    /// An OpenAI assistant message calling `ids`, after reasoning and text so
    /// that the call index differs from the part index.
    fn openai_calls(ids: &[&str]) -> Value {
        let calls: Vec<Value> = ids
            .iter()
            .map(|id| json!({"id": id, "type": "function", "function": {"name": "Bash", "arguments": "{}"}}))
            .collect();
        json!({"role": "assistant", "reasoning_content": "hmm", "content": "running", "tool_calls": calls})
    }

    fn openai_result(id: &str) -> Value {
        json!({"role": "tool", "tool_call_id": id, "content": "ok"})
    }

    fn pairing(body: Value, format: Format) -> Result<(), String> {
        Parsed::parse(body, format)
            .unwrap()
            .check_tool_pairs()
            .map_err(|e| format!("{e:#}"))
    }

    #[test]
    fn pairing_errors_name_the_json_location() {
        let user = json!({"role": "user", "content": "go"});
        let openai = |rest: Vec<Value>| {
            let mut messages = vec![user.clone()];
            messages.extend(rest);
            pairing(json!({ "messages": messages }), Format::OpenAi)
        };
        let (call, result) = (openai_calls, openai_result);
        for (messages, expected) in [
            (
                vec![result("x")],
                "messages[1].tool_call_id: tool result answers call `x` that no assistant \
                 message before it made",
            ),
            (
                vec![call(&["a"]), user.clone()],
                "messages[1].tool_calls[0]: tool call `a` has no result: messages[2], a user \
                 message, comes first (only the calls of the last assistant message may be \
                 pending)",
            ),
            (
                vec![call(&["a", "b"]), result("b"), call(&["c"])],
                "messages[1].tool_calls[0]: tool call `a` has no result: messages[3], an \
                 assistant message, comes first",
            ),
            (
                vec![call(&["a"]), result("a"), call(&["b", "a"]), result("b")],
                "messages[3].tool_calls[1].id: duplicate tool call id `a` \
                 (messages[1].tool_calls[0] has it too)",
            ),
            (
                vec![call(&["a", "a"])],
                "messages[1].tool_calls[1].id: duplicate tool call id `a` \
                 (messages[1].tool_calls[0] has it too)",
            ),
            (
                vec![call(&["a"]), result("a"), result("a")],
                "messages[3].tool_call_id: a second tool result for call `a` of \
                 messages[1].tool_calls[0]",
            ),
            (
                vec![
                    call(&["a"]),
                    result("a"),
                    call(&["b"]),
                    result("b"),
                    result("a"),
                ],
                "messages[5].tool_call_id: tool result answers call `a` of \
                 messages[1].tool_calls[0], but results must directly follow the assistant \
                 message that made the call",
            ),
        ] {
            let e = openai(messages).unwrap_err();
            assert!(e.starts_with(expected), "{e}\nexpected: {expected}");
        }
        // The last assistant message's calls may be pending, all or some.
        openai(vec![call(&["a"]), result("a"), call(&["b"])]).unwrap();
        openai(vec![call(&["a", "b"]), result("a")]).unwrap();
        openai(vec![]).unwrap();
        // A bare list is located from the root.
        let e = pairing(json!([user, result("x")]), Format::OpenAi).unwrap_err();
        assert!(
            e.starts_with("[1].tool_call_id: tool result answers call `x`"),
            "{e}"
        );
    }

    #[test]
    fn anthropic_pairing_errors_count_messages_without_the_system_prompt() {
        let body = |last: Value| {
            json!({"system": "be brief", "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "running"},
                    {"type": "tool_use", "id": "a", "name": "Bash", "input": {}}]},
                last,
            ]})
        };
        let orphan = json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a"},
            {"type": "tool_result", "tool_use_id": "b"}]});
        let e = pairing(body(orphan), Format::Anthropic).unwrap_err();
        assert_eq!(
            e,
            "messages[2].content[1].tool_use_id: tool result answers call `b` that no \
             assistant message before it made"
        );
        let e = pairing(
            body(json!({"role": "user", "content": "never mind"})),
            Format::Anthropic,
        )
        .unwrap_err();
        assert!(
            e.starts_with(
                "messages[1].content[1]: tool call `a` has no result: messages[2], a user \
                 message, comes first"
            ),
            "{e}"
        );
    }

    #[test]
    fn locations_print_as_json_paths() {
        let root = At::ROOT;
        let messages = root.key("messages");
        let message = messages.index(12);
        let content = message.key("content");
        assert_eq!(root.to_string(), "body");
        assert_eq!(content.index(3).to_string(), "messages[12].content[3]");
        assert_eq!(root.index(4).key("content").to_string(), "[4].content");
    }
}
