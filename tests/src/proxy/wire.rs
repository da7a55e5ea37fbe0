//! The three protocols a proxy test speaks, plain and streamed, on both
//! sides of the proxy: a client's requests and its reading of an answer —
//! which checks that the answer is one well-formed message, as an SDK
//! would need it — and a scripted model's answers, built from pieces.

use condense_host::formats::Format;
use condense_scripted_server::Reply;
use serde_json::{Value, json};

/// A protocol, plain or streamed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wire {
    pub format: Format,
    pub streamed: bool,
}

/// Every protocol, plain and streamed.
pub const WIRES: [Wire; 6] = [
    Wire::new(Format::Anthropic, false),
    Wire::new(Format::Anthropic, true),
    Wire::new(Format::OpenAi, false),
    Wire::new(Format::OpenAi, true),
    Wire::new(Format::Responses, false),
    Wire::new(Format::Responses, true),
];

/// A piece of an assistant's answer, whatever the protocol.
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    Text(String),
    /// Reasoning the provider signed: an Anthropic thinking block, a
    /// Responses reasoning item (its `encrypted_content` the signature).
    /// Chat has none: its answers leave it out.
    Thinking {
        text: String,
        signature: String,
    },
    Call {
        id: String,
        name: String,
        input: Value,
    },
}

impl Piece {
    pub fn text(text: &str) -> Piece {
        Piece::Text(text.to_owned())
    }

    pub fn call(id: &str, name: &str, input: Value) -> Piece {
        Piece::Call {
            id: id.to_owned(),
            name: name.to_owned(),
            input,
        }
    }
}

/// An answer as the client read it: its pieces, how it ended (the stop
/// reason, finish reason or status) and its usage (input, output tokens).
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub pieces: Vec<Piece>,
    pub stop: String,
    pub usage: (u64, u64),
}

impl Answer {
    /// The tool calls the client is asked to run: id, name, input.
    pub fn calls(&self) -> Vec<(&str, &str, &Value)> {
        self.pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Call { id, name, input } => Some((id.as_str(), name.as_str(), input)),
                _ => None,
            })
            .collect()
    }
}

/// A session's history, whatever the protocol.
#[derive(Clone, Debug, PartialEq)]
pub enum Turn {
    User(String),
    Assistant(Vec<Piece>),
    /// Tool results: call id, output.
    Results(Vec<(String, String)>),
}

/// The system prompt of the sessions.
pub const SYSTEM: &str = "You are a coding agent. Work in the repository; be brief.";
/// The client's one tool.
pub const SHELL: &str = "shell";

impl Wire {
    pub const fn new(format: Format, streamed: bool) -> Wire {
        Wire { format, streamed }
    }

    pub fn name(&self) -> String {
        let kind = if self.streamed { "streamed" } else { "plain" };
        format!("{} {kind}", self.format)
    }

    /// Where the client posts.
    pub fn path(&self) -> &'static str {
        match self.format {
            Format::Anthropic => "/v1/messages",
            Format::OpenAi => "/v1/chat/completions",
            Format::Responses => "/v1/responses",
        }
    }

    /// The key of the request's list.
    pub fn list_key(&self) -> &'static str {
        match self.format {
            Format::Responses => "input",
            Format::Anthropic | Format::OpenAi => "messages",
        }
    }

    /// The stop of an answer that ends without asking for tools.
    pub fn plain_stop(&self) -> &'static str {
        match self.format {
            Format::Anthropic => "end_turn",
            Format::OpenAi => "stop",
            Format::Responses => "completed",
        }
    }

    // ---- the client

    /// The client's request for `history`, with the [`SHELL`] tool.
    pub fn request(&self, history: &[Turn]) -> Value {
        let schema = json!({"type": "object", "properties": {"command": {"type": "string"}},
            "required": ["command"]});
        let description = "Runs a shell command in the repository.";
        let mut body = match self.format {
            Format::Anthropic => json!({"model": "claude-sonnet-4", "max_tokens": 1000,
                "system": SYSTEM,
                "tools": [{"name": SHELL, "description": description, "input_schema": schema}],
                "messages": history.iter().flat_map(anthropic::turn).collect::<Vec<_>>()}),
            Format::OpenAi => {
                let system = json!({"role": "system", "content": SYSTEM});
                let messages = std::iter::once(system).chain(history.iter().flat_map(chat::turn));
                json!({"model": "gpt-5", "messages": messages.collect::<Vec<_>>(),
                    "tools": [{"type": "function", "function": {"name": SHELL,
                        "description": description, "parameters": schema}}]})
            }
            Format::Responses => json!({"model": "gpt-5", "instructions": SYSTEM,
                "input": history.iter().flat_map(responses::turn).collect::<Vec<_>>(),
                "tools": [{"type": "function", "name": SHELL, "description": description,
                    "parameters": schema}],
                "store": false}),
        };
        if self.streamed {
            body["stream"] = true.into();
            if self.format == Format::OpenAi {
                body["stream_options"] = json!({"include_usage": true});
            }
        }
        body
    }

    /// The answer the client got, checked for one well-formed message.
    pub fn read(&self, body: &[u8]) -> Answer {
        let text = std::str::from_utf8(body).expect("an answer is UTF-8");
        match (self.format, self.streamed) {
            (Format::Anthropic, false) => anthropic::read(&json_of(text)),
            (Format::Anthropic, true) => anthropic::read_stream(text),
            (Format::OpenAi, false) => chat::read(&json_of(text)),
            (Format::OpenAi, true) => chat::read_stream(text),
            (Format::Responses, false) => responses::read(&json_of(text)),
            (Format::Responses, true) => responses::read_stream(text),
        }
    }

    // ---- the model

    /// The model's answer number `n` of `pieces`, with `usage` (input,
    /// output tokens).
    pub fn reply(&self, n: usize, pieces: &[Piece], usage: (u64, u64)) -> Reply {
        if !self.streamed {
            let answer = match self.format {
                Format::Anthropic => anthropic::answer(n, pieces, usage),
                Format::OpenAi => chat::answer(n, pieces, usage),
                Format::Responses => responses::answer(n, pieces, usage),
            };
            return Reply::json(200, answer.to_string());
        }
        let events = match self.format {
            Format::Anthropic => anthropic::events(n, pieces, usage),
            Format::OpenAi => chat::events(n, pieces, usage),
            Format::Responses => responses::events(n, pieces, usage),
        };
        let named = self.format != Format::OpenAi;
        Reply::Answer {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: sse(&events, named),
        }
    }

    /// The tool results that end `request`: call id, content, error flag.
    pub fn results(&self, request: &Value) -> Vec<(String, String, bool)> {
        let list = request[self.list_key()]
            .as_array()
            .cloned()
            .unwrap_or_default();
        match self.format {
            Format::Anthropic => anthropic::results(&list),
            Format::OpenAi => chat::results(&list),
            Format::Responses => responses::results(&list),
        }
    }

    /// The entries the model's `pieces` (an answer's, up to its last call)
    /// are in a request's list that continues it, as the proxy appends
    /// them.
    pub fn turn(&self, pieces: &[Piece]) -> Vec<Value> {
        match self.format {
            Format::Anthropic => anthropic::turn(&Turn::Assistant(pieces.to_vec())),
            Format::OpenAi => chat::turn(&Turn::Assistant(pieces.to_vec())),
            Format::Responses => responses::turn(&Turn::Assistant(pieces.to_vec())),
        }
    }
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// An SSE body of `events` (a string is sent as its text), each named by
/// its `type` when `named`.
fn sse(events: &[Value], named: bool) -> String {
    events
        .iter()
        .map(
            |e| match (e.as_str(), e["type"].as_str().filter(|_| named)) {
                (Some(text), _) => format!("data: {text}\n\n"),
                (None, Some(name)) => format!("event: {name}\ndata: {e}\n\n"),
                (None, None) => format!("data: {e}\n\n"),
            },
        )
        .collect()
}

/// The data of each event of an SSE body (a text that is not JSON, such as
/// `[DONE]`, as a string), each event checked to be named by its type when
/// it has a name.
pub fn sse_events(text: &str) -> Vec<Value> {
    let text = text.replace("\r\n", "\n");
    text.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|event| {
            let (mut name, mut data) = (None, Vec::new());
            for line in event.lines() {
                if let Some(value) = line.strip_prefix("event: ") {
                    name = Some(value);
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data.push(value);
                }
            }
            let data = data.join("\n");
            let value = serde_json::from_str(&data).unwrap_or(Value::String(data));
            if let Some(name) = name {
                assert_eq!(value["type"], name, "an event named as its type: {event}");
            }
            value
        })
        .collect()
}

/// Splits `text` in two, for deltas.
fn halves(text: &str) -> (String, String) {
    let at = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(0, |(i, _)| i);
    (text[..at].to_owned(), text[at..].to_owned())
}

mod anthropic {
    use super::{Answer, Piece, Turn, halves, sse_events};
    use serde_json::{Value, json};

    fn block(piece: &Piece) -> Value {
        match piece {
            Piece::Text(text) => json!({"type": "text", "text": text}),
            Piece::Thinking { text, signature } => {
                json!({"type": "thinking", "thinking": text, "signature": signature})
            }
            Piece::Call { id, name, input } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
        }
    }

    pub fn turn(turn: &Turn) -> Vec<Value> {
        vec![match turn {
            Turn::User(text) => json!({"role": "user", "content": text}),
            Turn::Assistant(pieces) => {
                json!({"role": "assistant", "content": pieces.iter().map(block).collect::<Vec<_>>()})
            }
            Turn::Results(results) => {
                let blocks: Vec<Value> = results
                    .iter()
                    .map(|(id, output)| {
                        json!({"type": "tool_result", "tool_use_id": id, "content": output})
                    })
                    .collect();
                json!({"role": "user", "content": blocks})
            }
        }]
    }

    fn stop(pieces: &[Piece]) -> &'static str {
        match pieces.iter().any(|p| matches!(p, Piece::Call { .. })) {
            true => "tool_use",
            false => "end_turn",
        }
    }

    pub fn answer(n: usize, pieces: &[Piece], (input, output): (u64, u64)) -> Value {
        json!({"id": format!("msg_{n}"), "type": "message", "role": "assistant",
            "model": "claude-sonnet-4", "content": pieces.iter().map(block).collect::<Vec<_>>(),
            "stop_reason": stop(pieces), "stop_sequence": null,
            "usage": {"input_tokens": input, "output_tokens": output}})
    }

    pub fn events(n: usize, pieces: &[Piece], (input, output): (u64, u64)) -> Vec<Value> {
        let mut message = answer(n, &[], (input, 1));
        message["stop_reason"] = Value::Null;
        let mut events = vec![json!({"type": "message_start", "message": message})];
        for (index, piece) in pieces.iter().enumerate() {
            let (start, deltas) = match piece {
                Piece::Text(text) => {
                    let (a, b) = halves(text);
                    let delta = |t| json!({"type": "text_delta", "text": t});
                    (
                        json!({"type": "text", "text": ""}),
                        vec![delta(a), delta(b)],
                    )
                }
                Piece::Thinking { text, signature } => (
                    json!({"type": "thinking", "thinking": ""}),
                    vec![
                        json!({"type": "thinking_delta", "thinking": text}),
                        json!({"type": "signature_delta", "signature": signature}),
                    ],
                ),
                Piece::Call { id, name, input } => {
                    let (a, b) = halves(&input.to_string());
                    let delta = |t| json!({"type": "input_json_delta", "partial_json": t});
                    (
                        json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                        vec![delta(a), delta(b)],
                    )
                }
            };
            events.push(
                json!({"type": "content_block_start", "index": index, "content_block": start}),
            );
            for delta in deltas {
                events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
            }
            events.push(json!({"type": "content_block_stop", "index": index}));
            if index == 0 {
                events.push(json!({"type": "ping"}));
            }
        }
        events.push(json!({"type": "message_delta",
            "delta": {"stop_reason": stop(pieces), "stop_sequence": null},
            "usage": {"output_tokens": output}}));
        events.push(json!({"type": "message_stop"}));
        events
    }

    fn piece(block: &Value) -> Piece {
        match block["type"].as_str() {
            Some("text") => Piece::Text(block["text"].as_str().unwrap().to_owned()),
            Some("thinking") => Piece::Thinking {
                text: block["thinking"].as_str().unwrap().to_owned(),
                signature: block["signature"].as_str().unwrap().to_owned(),
            },
            Some("tool_use") => Piece::call(
                block["id"].as_str().unwrap(),
                block["name"].as_str().unwrap(),
                block["input"].clone(),
            ),
            other => panic!("a block of type {other:?}: {block}"),
        }
    }

    pub fn read(answer: &Value) -> Answer {
        assert_eq!(answer["type"], "message", "{answer}");
        let usage = &answer["usage"];
        Answer {
            pieces: answer["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(piece)
                .collect(),
            stop: answer["stop_reason"].as_str().unwrap().to_owned(),
            usage: (
                usage["input_tokens"].as_u64().unwrap(),
                usage["output_tokens"].as_u64().unwrap(),
            ),
        }
    }

    /// One `message_start` first, blocks indexed 0, 1, … each started,
    /// filled and stopped in turn, one `message_delta`, one `message_stop`
    /// last.
    pub fn read_stream(text: &str) -> Answer {
        let events = sse_events(text);
        let events: Vec<&Value> = events.iter().filter(|e| e["type"] != "ping").collect();
        let n = events.len();
        let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert!(n >= 3, "{text}");
        assert_eq!(
            (kinds[0], kinds[n - 2], kinds[n - 1]),
            ("message_start", "message_delta", "message_stop"),
            "{text}"
        );
        let mut answer = events[0]["message"].clone();
        let mut blocks: Vec<Value> = Vec::new();
        let mut open = false;
        let mut input = String::new();
        for event in &events[1..n - 2] {
            let index = event["index"]
                .as_u64()
                .unwrap_or_else(|| panic!("{event} in {text}")) as usize;
            match event["type"].as_str().unwrap() {
                "content_block_start" => {
                    assert!(
                        !open && index == blocks.len(),
                        "block {index} starts: {text}"
                    );
                    blocks.push(event["content_block"].clone());
                    open = true;
                }
                "content_block_delta" => {
                    assert!(open && index + 1 == blocks.len(), "{text}");
                    let (block, delta) = (&mut blocks[index], &event["delta"]);
                    match delta["type"].as_str().unwrap() {
                        "text_delta" => append(block, "text", &delta["text"]),
                        "thinking_delta" => append(block, "thinking", &delta["thinking"]),
                        "signature_delta" => block["signature"] = delta["signature"].clone(),
                        "input_json_delta" => {
                            input.push_str(delta["partial_json"].as_str().unwrap())
                        }
                        other => panic!("{other}"),
                    }
                }
                "content_block_stop" => {
                    assert!(open && index + 1 == blocks.len(), "{text}");
                    if !input.is_empty() {
                        blocks[index]["input"] = serde_json::from_str(&input).unwrap();
                        input.clear();
                    }
                    open = false;
                }
                other => panic!("{other} inside the message: {text}"),
            }
        }
        assert!(!open, "a block left open: {text}");
        let delta = events[n - 2];
        answer["content"] = blocks.into();
        answer["stop_reason"] = delta["delta"]["stop_reason"].clone();
        for (key, value) in delta["usage"].as_object().unwrap() {
            answer["usage"][key] = value.clone();
        }
        read(&answer)
    }

    fn append(block: &mut Value, key: &str, more: &Value) {
        let text = format!("{}{}", block[key].as_str().unwrap(), more.as_str().unwrap());
        block[key] = text.into();
    }

    pub fn results(list: &[Value]) -> Vec<(String, String, bool)> {
        let Some(last) = list.last().filter(|m| m["role"] == "user") else {
            return Vec::new();
        };
        last["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_result")
            .map(|b| {
                let content = match &b["content"] {
                    Value::String(s) => s.clone(),
                    blocks => blocks
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|b| b["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                };
                (
                    b["tool_use_id"].as_str().unwrap().to_owned(),
                    content,
                    b["is_error"] == true,
                )
            })
            .collect()
    }
}

mod chat {
    use super::{Answer, Piece, Turn, halves, sse_events};
    use serde_json::{Value, json};

    fn texts(pieces: &[Piece]) -> Vec<&str> {
        pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    fn calls(pieces: &[Piece]) -> Vec<Value> {
        pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Call { id, name, input } => Some(json!({"id": id, "type": "function",
                    "function": {"name": name, "arguments": input.to_string()}})),
                _ => None,
            })
            .collect()
    }

    /// The message of `pieces`: its text (`None` for none), its calls.
    fn message(pieces: &[Piece]) -> Value {
        let texts = texts(pieces);
        let content = if texts.is_empty() {
            Value::Null
        } else {
            texts.join("\n\n").into()
        };
        let mut message = json!({"role": "assistant", "content": content});
        let calls = calls(pieces);
        if !calls.is_empty() {
            message["tool_calls"] = calls.into();
        }
        message
    }

    pub fn turn(turn: &Turn) -> Vec<Value> {
        match turn {
            Turn::User(text) => vec![json!({"role": "user", "content": text})],
            Turn::Assistant(pieces) => vec![message(pieces)],
            Turn::Results(results) => results
                .iter()
                .map(|(id, output)| json!({"role": "tool", "tool_call_id": id, "content": output}))
                .collect(),
        }
    }

    fn finish(pieces: &[Piece]) -> &'static str {
        if calls(pieces).is_empty() {
            "stop"
        } else {
            "tool_calls"
        }
    }

    pub fn answer(n: usize, pieces: &[Piece], (input, output): (u64, u64)) -> Value {
        json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion", "created": n,
            "model": "gpt-5",
            "choices": [{"index": 0, "message": message(pieces), "finish_reason": finish(pieces)}],
            "usage": {"prompt_tokens": input, "completion_tokens": output,
                "total_tokens": input + output}})
    }

    pub fn events(n: usize, pieces: &[Piece], (input, output): (u64, u64)) -> Vec<Value> {
        let chunk = |delta: Value, finish: Value| {
            json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk",
                "created": n, "model": "gpt-5",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        };
        let mut events = vec![chunk(
            json!({"role": "assistant", "content": ""}),
            Value::Null,
        )];
        for text in texts(pieces) {
            let (a, b) = halves(text);
            events.push(chunk(json!({"content": a}), Value::Null));
            events.push(chunk(json!({"content": b}), Value::Null));
        }
        for (index, call) in calls(pieces).iter().enumerate() {
            let (a, b) = halves(call["function"]["arguments"].as_str().unwrap());
            events.push(chunk(
                json!({"tool_calls": [{"index": index, "id": call["id"],
                "type": "function", "function": {"name": call["function"]["name"],
                "arguments": a}}]}),
                Value::Null,
            ));
            events.push(chunk(
                json!({"tool_calls": [{"index": index,
                "function": {"arguments": b}}]}),
                Value::Null,
            ));
        }
        events.push(chunk(json!({}), finish(pieces).into()));
        let mut usage = chunk(json!({}), Value::Null);
        usage["choices"] = json!([]);
        usage["usage"] = json!({"prompt_tokens": input, "completion_tokens": output,
            "total_tokens": input + output});
        events.push(usage);
        events.push("[DONE]".into());
        events
    }

    pub fn read(answer: &Value) -> Answer {
        assert_eq!(answer["object"], "chat.completion", "{answer}");
        let message = &answer["choices"][0]["message"];
        let mut pieces: Vec<Piece> = message["content"]
            .as_str()
            .into_iter()
            .filter(|t| !t.is_empty())
            .map(Piece::text)
            .collect();
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            let arguments = call["function"]["arguments"].as_str().unwrap();
            pieces.push(Piece::call(
                call["id"].as_str().unwrap(),
                call["function"]["name"].as_str().unwrap(),
                serde_json::from_str(arguments).unwrap(),
            ));
        }
        let usage = &answer["usage"];
        Answer {
            pieces,
            stop: answer["choices"][0]["finish_reason"]
                .as_str()
                .unwrap()
                .to_owned(),
            usage: (
                usage["prompt_tokens"].as_u64().unwrap(),
                usage["completion_tokens"].as_u64().unwrap(),
            ),
        }
    }

    /// Every chunk with the first one's `id` and `created`; tool calls
    /// opened at index 0, 1, … in turn; one finish reason; one usage
    /// chunk; `[DONE]` once, last.
    pub fn read_stream(text: &str) -> Answer {
        let events = sse_events(text);
        let (last, chunks) = events.split_last().unwrap();
        assert_eq!(last, "[DONE]", "{text}");
        let first = &chunks[0];
        let (mut content, mut calls) = (String::new(), Vec::<Value>::new());
        let (mut finishes, mut usages) = (Vec::new(), Vec::new());
        for chunk in chunks {
            assert_eq!(chunk["object"], "chat.completion.chunk", "{text}");
            assert_eq!(
                (&chunk["id"], &chunk["created"]),
                (&first["id"], &first["created"]),
                "{text}"
            );
            if !chunk["usage"].is_null() {
                usages.push(chunk["usage"].clone());
            }
            let Some(choice) = chunk["choices"].get(0) else {
                continue;
            };
            content.push_str(choice["delta"]["content"].as_str().unwrap_or(""));
            for call in choice["delta"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let index = call["index"].as_u64().unwrap() as usize;
                if index == calls.len() {
                    assert!(call["id"].is_string(), "a call opens with its id: {text}");
                    calls.push(json!({"id": call["id"], "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""}}));
                }
                assert_eq!(index + 1, calls.len(), "calls in turn: {text}");
                let function = &mut calls[index]["function"];
                let more = call["function"]["arguments"].as_str().unwrap_or("");
                function["arguments"] =
                    format!("{}{more}", function["arguments"].as_str().unwrap()).into();
            }
            if !choice["finish_reason"].is_null() {
                finishes.push(choice["finish_reason"].clone());
            }
        }
        assert_eq!(finishes.len(), 1, "one finish reason: {text}");
        assert_eq!(usages.len(), 1, "one usage: {text}");
        let mut message = json!({"role": "assistant", "content": content});
        if !calls.is_empty() {
            message["tool_calls"] = calls.into();
        }
        read(
            &json!({"object": "chat.completion", "choices": [{"message": message,
            "finish_reason": finishes[0]}], "usage": usages[0]}),
        )
    }

    pub fn results(list: &[Value]) -> Vec<(String, String, bool)> {
        let trailing = list
            .iter()
            .rev()
            .take_while(|m| m["role"] == "tool")
            .count();
        list[list.len() - trailing..]
            .iter()
            .map(|m| {
                (
                    m["tool_call_id"].as_str().unwrap().to_owned(),
                    m["content"].as_str().unwrap().to_owned(),
                    false,
                )
            })
            .collect()
    }
}

mod responses {
    use super::{Answer, Piece, Turn, halves, sse_events};
    use serde_json::{Value, json};

    /// The items of `pieces`, as the model gives them (with `id`s).
    fn items(n: usize, pieces: &[Piece]) -> Vec<Value> {
        pieces
            .iter()
            .enumerate()
            .map(|(i, piece)| match piece {
                Piece::Text(text) => json!({"type": "message", "id": format!("msg_{n}_{i}"),
                    "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}),
                Piece::Thinking { text, signature } => json!({"type": "reasoning",
                    "id": format!("rs_{n}_{i}"),
                    "summary": [{"type": "summary_text", "text": text}],
                    "encrypted_content": signature}),
                Piece::Call { id, name, input } => json!({"type": "function_call",
                    "id": format!("fc_{n}_{i}"), "call_id": id, "name": name,
                    "arguments": input.to_string(), "status": "completed"}),
            })
            .collect()
    }

    /// The client's items for `turn`: a Codex-like client with `store:
    /// false` sends the model's items back without their `id`s.
    pub fn turn(turn: &Turn) -> Vec<Value> {
        match turn {
            Turn::User(text) => vec![json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": text}]})],
            Turn::Assistant(pieces) => items(0, pieces)
                .into_iter()
                .map(|mut item| {
                    item.as_object_mut().unwrap().shift_remove("id");
                    item
                })
                .collect(),
            Turn::Results(results) => results
                .iter()
                .map(|(id, output)| {
                    json!({"type": "function_call_output", "call_id": id,
                    "output": output})
                })
                .collect(),
        }
    }

    fn response(n: usize, status: &str, output: Vec<Value>, (input, out): (u64, u64)) -> Value {
        json!({"id": format!("resp_{n}"), "object": "response", "created_at": n,
            "status": status, "model": "gpt-5", "output": output,
            "usage": {"input_tokens": input, "output_tokens": out, "total_tokens": input + out}})
    }

    pub fn answer(n: usize, pieces: &[Piece], usage: (u64, u64)) -> Value {
        response(n, "completed", items(n, pieces), usage)
    }

    pub fn events(n: usize, pieces: &[Piece], usage: (u64, u64)) -> Vec<Value> {
        let started = response(n, "in_progress", Vec::new(), (0, 0));
        let mut events = vec![
            json!({"type": "response.created", "response": started}),
            json!({"type": "response.in_progress", "response": started}),
        ];
        for (index, item) in items(n, pieces).into_iter().enumerate() {
            let id = item["id"].clone();
            let mut added = item.clone();
            let deltas = match item["type"].as_str().unwrap() {
                "message" => {
                    added["content"] = json!([]);
                    let part = &item["content"][0];
                    let text = part["text"].as_str().unwrap();
                    let (a, b) = halves(text);
                    let event = |kind: &str, more: Value| {
                        let mut event = json!({"type": kind, "item_id": id,
                            "output_index": index, "content_index": 0});
                        for (key, value) in more.as_object().unwrap() {
                            event[key] = value.clone();
                        }
                        event
                    };
                    let empty = json!({"type": "output_text", "text": "", "annotations": []});
                    vec![
                        event("response.content_part.added", json!({"part": empty})),
                        event("response.output_text.delta", json!({"delta": a})),
                        event("response.output_text.delta", json!({"delta": b})),
                        event("response.output_text.done", json!({"text": text})),
                        event("response.content_part.done", json!({"part": part})),
                    ]
                }
                "function_call" => {
                    added["arguments"] = "".into();
                    let (a, b) = halves(item["arguments"].as_str().unwrap());
                    [a, b]
                        .map(|d| {
                            json!({"type": "response.function_call_arguments.delta",
                        "item_id": id, "output_index": index, "delta": d})
                        })
                        .to_vec()
                }
                _ => Vec::new(),
            };
            events.push(
                json!({"type": "response.output_item.added", "output_index": index,
                "item": added}),
            );
            events.extend(deltas);
            events.push(
                json!({"type": "response.output_item.done", "output_index": index,
                "item": item}),
            );
        }
        events.push(json!({"type": "response.completed", "response": answer(n, pieces, usage)}));
        for (number, event) in events.iter_mut().enumerate() {
            event["sequence_number"] = number.into();
        }
        events
    }

    fn piece(item: &Value) -> Piece {
        match item["type"].as_str() {
            Some("message") => Piece::Text(item["content"][0]["text"].as_str().unwrap().to_owned()),
            Some("reasoning") => Piece::Thinking {
                text: item["summary"][0]["text"].as_str().unwrap().to_owned(),
                signature: item["encrypted_content"].as_str().unwrap().to_owned(),
            },
            Some("function_call") => Piece::call(
                item["call_id"].as_str().unwrap(),
                item["name"].as_str().unwrap(),
                serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap(),
            ),
            other => panic!("an item of type {other:?}: {item}"),
        }
    }

    pub fn read(answer: &Value) -> Answer {
        assert_eq!(answer["object"], "response", "{answer}");
        let usage = &answer["usage"];
        Answer {
            pieces: answer["output"]
                .as_array()
                .unwrap()
                .iter()
                .map(piece)
                .collect(),
            stop: answer["status"].as_str().unwrap().to_owned(),
            usage: (
                usage["input_tokens"].as_u64().unwrap(),
                usage["output_tokens"].as_u64().unwrap(),
            ),
        }
    }

    /// `response.created` first and once, `response.completed` last and
    /// once, with the created one's `id`; sequence numbers 0, 1, …; items
    /// added at output index 0, 1, … in turn; the completed response's
    /// output the items done, in order.
    pub fn read_stream(text: &str) -> Answer {
        let events = sse_events(text);
        let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(kinds[0], "response.created", "{text}");
        assert_eq!(kinds.last(), Some(&"response.completed"), "{text}");
        for once in [
            "response.created",
            "response.in_progress",
            "response.completed",
        ] {
            assert!(
                kinds.iter().filter(|k| **k == once).count() <= 1,
                "{once} once: {text}"
            );
        }
        let (mut added, mut done) = (0, Vec::new());
        for (number, event) in events.iter().enumerate() {
            assert_eq!(event["sequence_number"], number, "{text}");
            if let Some(index) = event["output_index"].as_u64() {
                if event["type"] == "response.output_item.added" {
                    assert_eq!(index, added, "items in turn: {text}");
                    added += 1;
                }
                assert!(index < added, "{text}");
            }
            if event["type"] == "response.output_item.done" {
                done.push(event["item"].clone());
            }
        }
        let completed = &events.last().unwrap()["response"];
        assert_eq!(completed["id"], events[0]["response"]["id"], "{text}");
        assert_eq!(completed["output"], Value::Array(done), "{text}");
        read(completed)
    }

    pub fn results(list: &[Value]) -> Vec<(String, String, bool)> {
        let trailing = list
            .iter()
            .rev()
            .take_while(|i| i["type"] == "function_call_output")
            .count();
        list[list.len() - trailing..]
            .iter()
            .map(|i| {
                (
                    i["call_id"].as_str().unwrap().to_owned(),
                    i["output"].as_str().unwrap().to_owned(),
                    false,
                )
            })
            .collect()
    }
}
