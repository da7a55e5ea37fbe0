//! OpenAI Chat Completions: an answer's units are its message's text and
//! each of its tool calls. A round is continued with the assistant message
//! (its text, its recall calls) and a `tool` message per result, both as
//! the formats crate renders them; a later round's text starts a new
//! paragraph of the client's.
//!
//! Streamed, every chunk the client gets carries the first round's `id`
//! and `created`; `tool_calls[].index` is numbered on over the rounds; the
//! earlier rounds' finish chunk, usage chunk and `[DONE]` are held back,
//! and the last round's usage is the sum of all rounds'.

use super::calls::RecallCall;
use super::gate::{Gate, Kind, Unit};
use super::protocol::{self, End, Protocol, rewritten};
use super::sse::{self, Event};
use bytes::Bytes;
use condense_host::formats::Format;
use condense_model::{Message, Part, Role, ToolCall};
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub struct Chat;

/// Between one round's text and the next's.
const PARAGRAPH: &str = "\n\n";

/// The finish reason of an answer that ends plainly.
fn plain_finish(client_called: bool) -> &'static str {
    if client_called { "tool_calls" } else { "stop" }
}

/// A unit's JSON for the text of a round.
fn text_unit(text: &str) -> Unit {
    Unit::new(Kind::Other, json!({"type": "text", "text": text}))
}

/// The text of a text unit (`None`: a tool call).
fn text_of(unit: &Value) -> Option<&str> {
    (unit["type"] == "text").then(|| unit["text"].as_str().unwrap_or(""))
}

impl Protocol for Chat {
    fn text(&self, answer: &Value) -> String {
        let content = answer.pointer("/choices/0/message/content");
        content
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }

    fn units(&self, answer: &Value) -> Option<Vec<Unit>> {
        let message = answer.pointer("/choices/0/message")?;
        let text = message["content"].as_str().filter(|t| !t.is_empty());
        let calls = message["tool_calls"].as_array().into_iter().flatten();
        let calls =
            calls.map(|c| Unit::new(Kind::of_call(c["function"]["name"].as_str()), c.clone()));
        Some(text.map(text_unit).into_iter().chain(calls).collect())
    }

    fn assemble(
        &self,
        first: &Value,
        end: End<'_>,
        units: Vec<Value>,
        usage: Option<Value>,
        client_called: bool,
    ) -> Value {
        let mut answer = first.clone();
        let texts: Vec<&str> = units.iter().filter_map(text_of).collect();
        let calls: Vec<Value> = units
            .iter()
            .filter(|u| text_of(u).is_none())
            .cloned()
            .collect();
        let finish = match end {
            End::As(last) => last
                .pointer("/choices/0/finish_reason")
                .cloned()
                .unwrap_or_default(),
            End::Plain => plain_finish(client_called).into(),
        };
        if let Some(choice) = answer.pointer_mut("/choices/0") {
            let message = &mut choice["message"];
            message["content"] = match texts.is_empty() {
                true => Value::Null,
                false => texts.join(PARAGRAPH).into(),
            };
            if !calls.is_empty() {
                message["tool_calls"] = calls.into();
            } else if let Some(message) = message.as_object_mut() {
                message.shift_remove("tool_calls");
            }
            choice["finish_reason"] = finish;
        }
        if let Some(usage) = usage {
            answer["usage"] = usage;
        }
        answer
    }

    fn call(&self, unit: &Value) -> RecallCall {
        let id = unit["id"].as_str().unwrap_or_default();
        RecallCall::from_text(id, unit["function"]["arguments"].as_str().unwrap_or(""))
    }

    fn turn(&self, _body: &Value, turn: Vec<Value>) -> Vec<Value> {
        let parts = turn
            .iter()
            .map(|unit| match text_of(unit) {
                Some(text) => Part::Text(text.to_owned()),
                None => Part::ToolCall(ToolCall {
                    id: unit["id"].as_str().unwrap_or_default().to_owned(),
                    name: unit["function"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    arguments: unit["function"]["arguments"]
                        .as_str()
                        .unwrap_or("")
                        .to_owned(),
                }),
            })
            .collect();
        let assistant = Message {
            role: Role::Assistant,
            parts,
        };
        condense_host::formats::render_messages(Format::OpenAi, &[assistant])
    }

    fn stream(&self) -> Box<dyn protocol::Stream> {
        Box::<Stream>::default()
    }
}

/// The reader of a streamed answer.
#[derive(Default)]
struct Stream {
    /// The first round's first chunk: its `id`, `created` and `model`
    /// head every chunk the client gets.
    first: Option<Value>,
    /// The text the client was sent this round.
    text: String,
    /// Whether the client was sent any text yet, any round.
    texted: bool,
    /// This round's tool calls by the upstream's index, put together from
    /// their deltas.
    calls: BTreeMap<u64, Unit>,
    /// This round's usage.
    usage: Option<Value>,
    /// Whether this round's `[DONE]` came.
    complete: bool,
    /// What of the end the client was sent: a finish reason, usage.
    finished: bool,
    usage_sent: bool,
}

impl Stream {
    /// The chunk for the client, if it carries anything for it.
    fn chunk(&mut self, mut chunk: Value, gate: &mut Gate) -> Option<Value> {
        if let Some(choice) = chunk.pointer_mut("/choices/0") {
            self.delta(&mut choice["delta"], gate);
            self.finish(choice, gate);
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()).cloned() {
            self.usage = Some(usage);
            match gate.continuing() {
                true => chunk["usage"] = Value::Null,
                false => {
                    chunk["usage"] = gate.usage.with(self.usage.as_ref()).unwrap_or_default();
                    self.usage_sent = true;
                }
            }
        }
        if let Some(first) = self.first.as_ref().filter(|_| !gate.first_round()) {
            for key in ["id", "created"] {
                chunk[key] = first[key].clone();
            }
        }
        carries(&chunk).then_some(chunk)
    }

    /// A delta for the client: its text while the round passes (a later
    /// round's opening a new paragraph), the calls it passes, numbered as
    /// the client's; the role only in the first round.
    fn delta(&mut self, delta: &mut Value, gate: &mut Gate) {
        let Some(delta) = delta.as_object_mut() else {
            return;
        };
        if !gate.first_round() {
            delta.shift_remove("role");
        }
        if let Some(text) = delta
            .get("content")
            .and_then(Value::as_str)
            .map(str::to_owned)
        {
            if !gate.passing() {
                delta.shift_remove("content");
            } else if !text.is_empty() {
                // The model's own text continues its turn; the client's
                // starts a new paragraph where a later round's begins.
                let opens = self.text.is_empty() && self.texted && !gate.first_round();
                self.text.push_str(&text);
                self.texted = true;
                if opens {
                    delta.insert("content".into(), format!("{PARAGRAPH}{text}").into());
                }
            }
        }
        if let Some(Value::Array(calls)) = delta.get_mut("tool_calls") {
            calls.retain_mut(|call| self.call(call, gate));
            if calls.is_empty() {
                delta.shift_remove("tool_calls");
            }
        }
    }

    /// Whether the client gets this tool call delta, numbered as its own.
    fn call(&mut self, call: &mut Value, gate: &mut Gate) -> bool {
        let index = call["index"].as_u64().unwrap_or_default();
        let unit = self.calls.entry(index).or_insert_with(|| {
            let name = call["function"]["name"].as_str();
            let json = json!({"id": call["id"], "type": "function",
                "function": {"name": name, "arguments": ""}});
            Unit::new(Kind::of_call(name), json)
        });
        if let Some(more) = call["function"]["arguments"].as_str() {
            let arguments = &mut unit.json["function"]["arguments"];
            *arguments = format!("{}{more}", arguments.as_str().unwrap_or("")).into();
        }
        let kind = unit.kind;
        let Some(client) = gate.unit(index, || kind) else {
            return false;
        };
        unit.passed = true;
        call["index"] = client.into();
        true
    }

    /// A choice's finish reason: held back while the round continues, the
    /// plain one when the answer ends before its recall calls.
    fn finish(&mut self, choice: &mut Value, gate: &Gate) {
        if choice["finish_reason"].is_null() {
            return;
        }
        if gate.continuing() {
            choice["finish_reason"] = Value::Null;
            return;
        }
        if gate.ending() {
            choice["finish_reason"] = plain_finish(gate.client_called()).into();
        }
        self.finished = true;
    }

    /// A chunk the proxy writes, headed as the client's chunks are.
    fn written(&self, choices: Value) -> Value {
        let first = self.first.clone().unwrap_or_default();
        json!({"id": first["id"], "object": "chat.completion.chunk", "created": first["created"],
               "model": first["model"], "choices": choices})
    }
}

/// Whether a chunk carries anything a client reads: text, calls, a finish
/// reason, usage. A chunk emptied by the proxy is not sent.
fn carries(chunk: &Value) -> bool {
    let delta_carries = |delta: &Value| {
        delta.as_object().is_some_and(|d| {
            d.iter().any(|(key, value)| match value {
                Value::Null => false,
                Value::String(s) if key == "content" => !s.is_empty(),
                _ => true,
            })
        })
    };
    let choices = chunk["choices"].as_array().into_iter().flatten();
    !chunk["usage"].is_null()
        || choices
            .into_iter()
            .any(|c| !c["finish_reason"].is_null() || delta_carries(&c["delta"]))
}

impl protocol::Stream for Stream {
    fn event(&mut self, event: Event, gate: &mut Gate, out: &mut Vec<Bytes>) -> Result<(), String> {
        if event.is_done() {
            self.complete = true;
            if !gate.continuing() {
                out.push(event.raw);
            }
            return Ok(());
        }
        let Some(chunk) = event.json() else {
            if gate.passing() {
                out.push(event.raw);
            }
            return Ok(());
        };
        if let Some(error) = chunk.get("error") {
            if !gate.untouched() {
                return Err(error.to_string());
            }
            out.push(event.raw);
            return Ok(());
        }
        if self.first.is_none() {
            self.first = Some(chunk.clone());
        }
        let sent = self.chunk(chunk.clone(), gate);
        match sent {
            Some(sent) if sent == chunk => out.push(event.raw),
            Some(sent) => out.push(rewritten(&event, &sent)),
            None => {}
        }
        Ok(())
    }

    fn end_round(&mut self, gate: &mut Gate) -> (Vec<Unit>, bool) {
        if let Some(usage) = self.usage.take() {
            gate.usage.add(&usage);
        }
        let text = std::mem::take(&mut self.text);
        let mut units: Vec<Unit> = (!text.is_empty())
            .then(|| text_unit(&text))
            .into_iter()
            .collect();
        for unit in &mut units {
            unit.passed = true;
        }
        units.extend(std::mem::take(&mut self.calls).into_values());
        (units, std::mem::take(&mut self.complete))
    }

    fn close(&mut self, gate: &Gate, out: &mut Vec<Bytes>) {
        if !self.finished {
            let finish = json!([{"index": 0, "delta": {},
                "finish_reason": plain_finish(gate.client_called())}]);
            out.push(sse::write(None, &self.written(finish)));
        }
        if let Some(usage) = gate
            .usage
            .with(self.usage.as_ref())
            .filter(|_| !self.usage_sent)
        {
            let mut chunk = self.written(json!([]));
            chunk["usage"] = usage;
            out.push(sse::write(None, &chunk));
        }
        out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::super::stream::tests::{body, events, replay};
    use super::*;
    use condense_model::ToolResult;

    const TOOL: &str = condense_model::recall::TOOL_NAME;

    fn chunk(id: &str, delta: Value, finish: Value) -> Value {
        json!({"id": id, "object": "chat.completion.chunk", "created": id.len(), "model": "gpt-5",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": null})
    }

    /// A round's chunks: the role, `text`, then each call (its name, then
    /// its arguments in a second delta), the finish, the usage, `[DONE]`.
    fn round(id: &str, text: &str, calls: &[(&str, &str, Value)], tokens: u32) -> String {
        let mut chunks = vec![
            chunk(id, json!({"role": "assistant", "content": ""}), Value::Null),
            chunk(id, json!({"content": text}), Value::Null),
        ];
        for (index, (call_id, name, arguments)) in calls.iter().enumerate() {
            let opened = json!({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                "function": {"name": name, "arguments": ""}}]});
            let filled = json!({"tool_calls": [{"index": index,
                "function": {"arguments": arguments.to_string()}}]});
            chunks.push(chunk(id, opened, Value::Null));
            chunks.push(chunk(id, filled, Value::Null));
        }
        let finish = if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        chunks.push(chunk(id, json!({}), finish.into()));
        let mut usage = chunk(id, json!({}), Value::Null);
        usage["choices"] = json!([]);
        usage["usage"] = json!({"prompt_tokens": tokens, "completion_tokens": 2,
            "total_tokens": tokens + 2, "prompt_tokens_details": {"cached_tokens": 1}});
        chunks.push(usage);
        chunks.push("[DONE]".into());
        body(&chunks, false)
    }

    /// The client's chunks, checked for one well-formed completion: one
    /// `id` and `created`, tool call indices opened 0, 1, … in turn, one
    /// finish reason, `[DONE]` once, last. Returns the text, the calls,
    /// the finish reason and the usage.
    fn well_formed(text: &str) -> (String, Vec<Value>, Value, Value) {
        let events = events(text);
        let (last, chunks) = events.split_last().unwrap();
        assert_eq!(last, "[DONE]", "{text}");
        let (mut content, mut calls, mut finish, mut usage) =
            (String::new(), Vec::<Value>::new(), Vec::new(), Value::Null);
        for chunk in chunks {
            assert_eq!(
                (&chunk["id"], &chunk["created"]),
                (&chunks[0]["id"], &chunks[0]["created"])
            );
            if !chunk["usage"].is_null() {
                usage = chunk["usage"].clone();
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
                    calls.push(json!({"id": call["id"], "name": call["function"]["name"],
                        "arguments": ""}));
                }
                assert_eq!(index + 1, calls.len(), "{text}");
                let arguments = format!(
                    "{}{}",
                    calls[index]["arguments"].as_str().unwrap(),
                    call["function"]["arguments"].as_str().unwrap_or("")
                );
                calls[index]["arguments"] = arguments.into();
            }
            if !choice["finish_reason"].is_null() {
                finish.push(choice["finish_reason"].clone());
            }
        }
        assert_eq!(finish.len(), 1, "{text}");
        (content, calls, finish[0].clone(), usage)
    }

    #[test]
    fn an_answer_without_recall_calls_passes_byte_for_byte() {
        let upstream = round(
            "c1",
            "Hi.",
            &[("call_b", "Bash", json!({"command": "ls"}))],
            10,
        );
        let (client, _) = replay(&Chat, std::slice::from_ref(&upstream), 3);
        assert_eq!(client, upstream);
    }

    #[test]
    fn later_rounds_are_renumbered_into_the_first_rounds_completion() {
        let recall = json!({"handle": "f0123456789a"});
        let first = round(
            "c1",
            "Let me look.",
            &[
                ("call_r", TOOL, recall.clone()),
                ("call_b", "Bash", json!({"command": "ls"})),
            ],
            10,
        );
        let second = round(
            "c22",
            "Found: 42.",
            &[("call_c", "Bash", json!({"command": "cat"}))],
            30,
        );
        let (client, units) = replay(&Chat, &[first, second], 3);
        let (content, calls, finish, usage) = well_formed(&client);
        assert_eq!(content, "Let me look.\n\nFound: 42.");
        assert_eq!(
            calls,
            [json!({"id": "call_c", "name": "Bash",
            "arguments": json!({"command": "cat"}).to_string()})]
        );
        assert_eq!(finish, "tool_calls");
        assert_eq!(
            usage,
            json!({"prompt_tokens": 40, "completion_tokens": 4,
            "total_tokens": 44, "prompt_tokens_details": {"cached_tokens": 2}})
        );
        assert!(
            !client.contains("c22") && !client.contains(TOOL),
            "{client}"
        );
        let turn = super::super::gate::turn(&units[0]);
        assert_eq!(turn[0], json!({"type": "text", "text": "Let me look."}));
        assert_eq!(
            Chat.call(&turn[1]),
            RecallCall::from_text("call_r", &recall.to_string())
        );
        assert_eq!(turn.len(), 2, "not the client's call");
        // Continued with the formats crate's assistant message and a tool
        // message.
        let result = ToolResult {
            call_id: "call_r".into(),
            content: "42".into(),
            is_error: false,
        };
        let mut entries = Chat.turn(&json!({}), turn);
        entries.extend(protocol::results(Format::OpenAi, vec![result]));
        assert_eq!(entries[0]["role"], "assistant");
        assert_eq!(entries[0]["content"], "Let me look.");
        assert_eq!(entries[0]["tool_calls"][0]["function"]["name"], TOOL);
        assert_eq!(
            entries[1],
            json!({"role": "tool", "tool_call_id": "call_r", "content": "42"})
        );
    }

    #[test]
    fn the_last_round_ends_and_a_failed_one_closes() {
        let recall = json!({"handle": "f0123456789a"});
        let first = round("c1", "Let me look.", &[("call_r", TOOL, recall)], 10);
        for max_rounds in [0, 3] {
            // 0: the last round's recall call is dropped; 3: the next round
            // fails, and the completion is closed.
            let (client, _) = replay(&Chat, std::slice::from_ref(&first), max_rounds);
            let (content, calls, finish, usage) = well_formed(&client);
            assert_eq!((content.as_str(), calls.len()), ("Let me look.", 0));
            assert_eq!(finish, "stop");
            assert_eq!(usage["prompt_tokens"], 10);
        }
    }

    #[test]
    fn a_plain_answer_is_put_together_from_the_rounds() {
        let answer = |id: &str, text: &str, calls: Value, tokens: u32| {
            json!({"id": id, "object": "chat.completion", "created": 1, "model": "gpt-5",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text,
                    "tool_calls": calls}, "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": tokens, "completion_tokens": 1}})
        };
        let call = |id: &str, name: &str| {
            json!({"id": id, "type": "function",
            "function": {"name": name, "arguments": "{}"}})
        };
        let first = answer(
            "c1",
            "Looking.",
            json!([call("r", TOOL), call("b", "Bash")]),
            10,
        );
        let units = Chat.units(&first).unwrap();
        let kinds: Vec<Kind> = units.iter().map(|u| u.kind).collect();
        assert_eq!(kinds, [Kind::Other, Kind::Recall, Kind::ClientCall]);
        let mut last = answer("c2", "Done.", json!(null), 20);
        last["choices"][0]["finish_reason"] = "stop".into();
        let texts = vec![
            units[0].json.clone(),
            Chat.units(&last).unwrap()[0].json.clone(),
        ];
        let usage = json!({"prompt_tokens": 30, "completion_tokens": 2});
        let client = Chat.assemble(&first, End::As(&last), texts, Some(usage.clone()), false);
        let message = &client["choices"][0]["message"];
        assert_eq!(message["content"], "Looking.\n\nDone.");
        assert!(message.get("tool_calls").is_none(), "{client}");
        assert_eq!((&client["id"], &client["usage"]), (&json!("c1"), &usage));
        assert_eq!(client["choices"][0]["finish_reason"], "stop");
    }
}
