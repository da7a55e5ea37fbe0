//! Anthropic Messages: an answer's units are its content blocks. A round is
//! continued with the assistant message as the model gave it (thinking
//! blocks byte for byte, with their signatures) and a user message of
//! `tool_result` blocks.
//!
//! Streamed, the client reads one message: the first round's
//! `message_start`, then every round's blocks, `index` numbered on over the
//! rounds, then the last round's `message_delta` (its usage the sum of all
//! rounds') and `message_stop`.

use super::calls::RecallCall;
use super::gate::{Gate, Kind, Unit};
use super::protocol::{self, End, Protocol, rewritten};
use super::sse::{self, Event};
use super::usage::overlay;
use bytes::Bytes;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub struct Anthropic;

/// A block's kind: a `tool_use` is a call; a server tool's
/// (`server_tool_use`) is the provider's, not the client's.
fn kind(block: &Value) -> Kind {
    match block["type"].as_str() {
        Some("tool_use") => Kind::of_call(block["name"].as_str()),
        _ => Kind::Other,
    }
}

/// The stop reason of an answer that ends plainly.
fn plain_stop(client_called: bool) -> &'static str {
    if client_called {
        "tool_use"
    } else {
        "end_turn"
    }
}

impl Protocol for Anthropic {
    fn text(&self, answer: &Value) -> String {
        let blocks = answer["content"].as_array().into_iter().flatten();
        blocks
            .filter(|block| block["type"] == "text")
            .filter_map(|block| block["text"].as_str())
            .collect()
    }

    fn units(&self, answer: &Value) -> Option<Vec<Unit>> {
        let content = answer.get("content")?.as_array()?;
        Some(
            content
                .iter()
                .map(|block| Unit::new(kind(block), block.clone()))
                .collect(),
        )
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
        answer["content"] = Value::Array(units);
        let (stop, sequence) = match end {
            End::As(last) => (last["stop_reason"].clone(), last["stop_sequence"].clone()),
            End::Plain => (plain_stop(client_called).into(), Value::Null),
        };
        answer["stop_reason"] = stop;
        answer["stop_sequence"] = sequence;
        if let Some(usage) = usage {
            answer["usage"] = usage;
        }
        answer
    }

    fn call(&self, unit: &Value) -> RecallCall {
        RecallCall {
            id: unit["id"].as_str().unwrap_or_default().to_owned(),
            arguments: Ok(unit["input"].clone()),
        }
    }

    fn turn(&self, _body: &Value, turn: Vec<Value>) -> Vec<Value> {
        // An empty text block is an error in a request (a stream may open
        // one and never fill it).
        let content: Vec<Value> = turn
            .into_iter()
            .filter(|block| !(block["type"] == "text" && block["text"] == ""))
            .collect();
        vec![json!({"role": "assistant", "content": content})]
    }

    fn stream(&self) -> Box<dyn protocol::Stream> {
        Box::<Stream>::default()
    }
}

/// The reader of a streamed answer.
#[derive(Default)]
struct Stream {
    /// This round's blocks by the upstream's index, put together from their
    /// events.
    blocks: BTreeMap<u64, Unit>,
    /// A `tool_use` block's input as it arrives, until its block stops.
    input: HashMap<u64, String>,
    /// This round's usage: `message_start`'s, with `message_delta`'s over it.
    usage: Option<Value>,
    /// Whether this round's `message_stop` came.
    complete: bool,
    /// The client's blocks started and not yet stopped.
    open: BTreeSet<usize>,
    /// Whether the client was sent its `message_delta`.
    delta_sent: bool,
}

impl Stream {
    /// The block event `data` for the client: its `index` numbered as the
    /// client's, or nothing for a block held back.
    fn block_event(
        &mut self,
        event: &Event,
        mut data: Value,
        gate: &mut Gate,
        out: &mut Vec<Bytes>,
    ) {
        let index = data["index"].as_u64().unwrap_or_default();
        let opened = self.blocks.get(&index).map_or(Kind::Other, |b| b.kind);
        let Some(client) = gate.unit(index, || opened) else {
            return;
        };
        if let Some(block) = self.blocks.get_mut(&index) {
            block.passed = true;
        }
        match data["type"].as_str() {
            Some("content_block_start") => self.open.insert(client),
            Some("content_block_stop") => self.open.remove(&client),
            _ => false,
        };
        if client as u64 == index {
            out.push(event.raw.clone());
        } else {
            data["index"] = client.into();
            out.push(rewritten(event, &data));
        }
    }

    /// What a block event adds to its block.
    fn build(&mut self, data: &Value) {
        let index = data["index"].as_u64().unwrap_or_default();
        match data["type"].as_str() {
            Some("content_block_start") => {
                let block = data["content_block"].clone();
                self.blocks.insert(index, Unit::new(kind(&block), block));
            }
            Some("content_block_delta") => {
                let Some(block) = self.blocks.get_mut(&index) else {
                    return;
                };
                let input = self.input.entry(index).or_default();
                apply(&mut block.json, &data["delta"], input);
            }
            Some("content_block_stop") => {
                let input = self.input.remove(&index).unwrap_or_default();
                if let Some(block) = self.blocks.get_mut(&index)
                    && !input.is_empty()
                {
                    block.json["input"] = serde_json::from_str(&input).unwrap_or(input.into());
                }
            }
            _ => {}
        }
    }

    /// The client's `message_delta`: this round's, with the usage of every
    /// round, and the plain stop when the answer ends before its recall
    /// calls.
    fn message_delta(&mut self, mut data: Value, gate: &Gate) -> Value {
        if gate.ending() {
            data["delta"]["stop_reason"] = plain_stop(gate.client_called()).into();
            data["delta"]["stop_sequence"] = Value::Null;
        }
        if let Some(usage) = gate.usage.with(self.usage.as_ref()) {
            data["usage"] = usage;
        }
        self.delta_sent = true;
        data
    }
}

/// A block `delta` applied to `block` (a tool's input gathered in `input`).
fn apply(block: &mut Value, delta: &Value, input: &mut String) {
    let append = |block: &mut Value, key: &str, more: &Value| {
        let text = format!(
            "{}{}",
            block[key].as_str().unwrap_or(""),
            more.as_str().unwrap_or("")
        );
        block[key] = text.into();
    };
    match delta["type"].as_str() {
        Some("text_delta") => append(block, "text", &delta["text"]),
        Some("thinking_delta") => append(block, "thinking", &delta["thinking"]),
        Some("signature_delta") => block["signature"] = delta["signature"].clone(),
        Some("input_json_delta") => input.push_str(delta["partial_json"].as_str().unwrap_or("")),
        Some("citations_delta") => {
            if !block["citations"].is_array() {
                block["citations"] = json!([]);
            }
            if let Some(citations) = block["citations"].as_array_mut() {
                citations.push(delta["citation"].clone());
            }
        }
        _ => {}
    }
}

impl protocol::Stream for Stream {
    fn event(&mut self, event: Event, gate: &mut Gate, out: &mut Vec<Bytes>) -> Result<(), String> {
        let Some(data) = event.json() else {
            if gate.passing() {
                out.push(event.raw);
            }
            return Ok(());
        };
        match data["type"].as_str().unwrap_or_default() {
            "message_start" => {
                self.usage = data.pointer("/message/usage").cloned();
                if gate.first_round() {
                    out.push(event.raw);
                }
            }
            "content_block_start" | "content_block_delta" | "content_block_stop" => {
                self.build(&data);
                self.block_event(&event, data, gate, out);
            }
            "message_delta" => {
                self.usage = overlay(self.usage.as_ref(), data.get("usage"));
                if gate.untouched() {
                    self.delta_sent = true;
                    out.push(event.raw);
                } else if !gate.continuing() {
                    let data = self.message_delta(data, gate);
                    out.push(rewritten(&event, &data));
                }
            }
            "message_stop" => {
                self.complete = true;
                if !gate.continuing() {
                    out.push(event.raw);
                }
            }
            "error" if !gate.untouched() => return Err(data["error"].to_string()),
            _ if gate.passing() || gate.untouched() => out.push(event.raw),
            _ => {}
        }
        Ok(())
    }

    fn end_round(&mut self, gate: &mut Gate) -> (Vec<Unit>, bool) {
        if let Some(usage) = self.usage.take() {
            gate.usage.add(&usage);
        }
        self.input.clear();
        let units = std::mem::take(&mut self.blocks).into_values().collect();
        (units, std::mem::take(&mut self.complete))
    }

    fn close(&mut self, gate: &Gate, out: &mut Vec<Bytes>) {
        for index in std::mem::take(&mut self.open) {
            let stop = json!({"type": "content_block_stop", "index": index});
            out.push(sse::write(Some("content_block_stop"), &stop));
        }
        if !self.delta_sent {
            let mut delta = json!({"type": "message_delta",
                "delta": {"stop_reason": plain_stop(gate.client_called()), "stop_sequence": null}});
            if let Some(usage) = gate.usage.with(self.usage.as_ref()) {
                delta["usage"] = usage;
            }
            out.push(sse::write(Some("message_delta"), &delta));
        }
        out.push(sse::write(
            Some("message_stop"),
            &json!({"type": "message_stop"}),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::stream::tests::{body, events, replay};
    use super::*;

    fn start(id: &str, input_tokens: u32) -> Value {
        json!({"type": "message_start", "message": {"id": id, "type": "message",
            "role": "assistant", "model": "claude-sonnet-4", "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input_tokens, "cache_read_input_tokens": 5, "output_tokens": 1}}})
    }

    /// A block's events: its start, its deltas, its stop.
    fn block(index: u32, block: Value, deltas: &[Value]) -> Vec<Value> {
        let mut events = vec![json!({"type": "content_block_start", "index": index,
            "content_block": block})];
        for delta in deltas {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
        events
    }

    fn text(index: u32, text: &str) -> Vec<Value> {
        let delta = json!({"type": "text_delta", "text": text});
        block(index, json!({"type": "text", "text": ""}), &[delta])
    }

    fn tool(index: u32, id: &str, name: &str, input: Value) -> Vec<Value> {
        let delta = json!({"type": "input_json_delta", "partial_json": input.to_string()});
        let start = json!({"type": "tool_use", "id": id, "name": name, "input": {}});
        block(index, start, &[delta])
    }

    fn end(stop: &str, output_tokens: u32) -> Vec<Value> {
        vec![
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": output_tokens}}),
            json!({"type": "message_stop"}),
        ]
    }

    fn round(parts: Vec<Vec<Value>>) -> String {
        body(&parts.concat(), true)
    }

    /// The client's events, checked for one well-formed message: one
    /// `message_start` first, blocks indexed 0, 1, … each started, filled
    /// and stopped in turn, one `message_delta` and `message_stop` last.
    /// Returns the blocks put together and the `message_delta`.
    fn well_formed(text: &str) -> (Vec<Value>, Value) {
        let events = events(text);
        assert_eq!(events[0]["type"], "message_start", "{text}");
        let n = events.len();
        assert_eq!(events[n - 1]["type"], "message_stop");
        assert_eq!(events[n - 2]["type"], "message_delta");
        let mut blocks: Vec<Value> = Vec::new();
        let mut input = String::new();
        for event in events[1..n - 2].iter().filter(|e| e["type"] != "ping") {
            let index = event["index"].as_u64().unwrap() as usize;
            match event["type"].as_str().unwrap() {
                "content_block_start" => {
                    assert_eq!(index, blocks.len(), "{text}");
                    blocks.push(event["content_block"].clone());
                }
                "content_block_delta" => {
                    assert_eq!(index + 1, blocks.len());
                    apply(&mut blocks[index], &event["delta"], &mut input);
                }
                "content_block_stop" => assert_eq!(index + 1, blocks.len()),
                other => panic!("{other} inside the message"),
            }
        }
        (blocks, events[n - 2].clone())
    }

    #[test]
    fn an_answer_without_recall_calls_passes_byte_for_byte() {
        let upstream = round(vec![
            vec![start("msg_1", 10)],
            text(0, "Hi."),
            tool(1, "toolu_1", "Bash", json!({"command": "ls"})),
            end("tool_use", 3),
        ]);
        let (client, _) = replay(&Anthropic, std::slice::from_ref(&upstream), 3);
        assert_eq!(client, upstream);
    }

    #[test]
    fn later_rounds_are_renumbered_into_the_first_rounds_message() {
        let thinking = block(
            0,
            json!({"type": "thinking", "thinking": ""}),
            &[
                json!({"type": "thinking_delta", "thinking": "The summary lacks it."}),
                json!({"type": "signature_delta", "signature": "c2lnbmVk"}),
            ],
        );
        let recall = json!({"handle": "f0123456789a"});
        let first = round(vec![
            vec![start("msg_1", 10)],
            thinking,
            text(1, "Let me look."),
            tool(2, "toolu_r", TOOL, recall.clone()),
            tool(3, "toolu_b", "Bash", json!({"command": "ls"})),
            end("tool_use", 20),
        ]);
        let second = round(vec![
            vec![start("msg_2", 30), json!({"type": "ping"})],
            text(0, "Found: 42."),
            tool(1, "toolu_c", "Bash", json!({"command": "cat x"})),
            end("tool_use", 5),
        ]);
        let (client, units) = replay(&Anthropic, &[first, second], 3);
        let (blocks, delta) = well_formed(&client);
        let types: Vec<&str> = blocks.iter().map(|b| b["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["thinking", "text", "text", "tool_use"]);
        assert_eq!(blocks[2]["text"], "Found: 42.");
        assert_eq!(blocks[3]["id"], "toolu_c");
        assert_eq!(delta["delta"]["stop_reason"], "tool_use");
        assert_eq!(
            delta["usage"],
            json!({"input_tokens": 40, "cache_read_input_tokens": 10, "output_tokens": 25})
        );
        assert!(client.contains("event: ping"), "{client}");
        assert!(
            !client.contains(TOOL) && !client.contains("msg_2"),
            "{client}"
        );
        // The turn that continues: the thinking block byte for byte with its
        // signature, the text, the recall call, not the client's call.
        let turn = super::super::gate::turn(&units[0]);
        assert_eq!(
            turn,
            [
                json!({"type": "thinking", "thinking": "The summary lacks it.",
                    "signature": "c2lnbmVk"}),
                json!({"type": "text", "text": "Let me look."}),
                json!({"type": "tool_use", "id": "toolu_r", "name": TOOL, "input": recall}),
            ]
        );
        let call = Anthropic.call(&turn[2]);
        assert_eq!((call.id.as_str(), call.arguments), ("toolu_r", Ok(recall)));
    }

    #[test]
    fn the_last_round_ends_before_its_recall_calls() {
        let first = round(vec![
            vec![start("msg_1", 10)],
            text(0, "Let me look."),
            tool(1, "toolu_r", TOOL, json!({"handle": "f0123456789a"})),
            end("tool_use", 20),
        ]);
        let (client, _) = replay(&Anthropic, &[first], 0);
        let (blocks, delta) = well_formed(&client);
        assert_eq!(blocks, [json!({"type": "text", "text": "Let me look."})]);
        assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    }

    #[test]
    fn recall_calls_after_a_client_call_are_dropped() {
        let first = round(vec![
            vec![start("msg_1", 10)],
            tool(0, "toolu_b", "Bash", json!({"command": "ls"})),
            tool(1, "toolu_r", TOOL, json!({"handle": "f0123456789a"})),
            text(2, "Then more."),
            end("tool_use", 20),
        ]);
        let (client, _) = replay(&Anthropic, &[first], 3);
        let (blocks, delta) = well_formed(&client);
        assert_eq!(blocks[0]["id"], "toolu_b");
        assert_eq!(blocks[1]["text"], "Then more.");
        assert_eq!(blocks.len(), 2);
        assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    }

    #[test]
    fn a_failed_round_closes_the_message() {
        // Round 2 opened a block, then broke off.
        let first = round(vec![
            vec![start("msg_1", 10)],
            tool(0, "toolu_r", TOOL, json!({"handle": "f0123456789a"})),
            end("tool_use", 20),
        ]);
        let (client, _) = replay(&Anthropic, &[first], 3);
        let (blocks, delta) = well_formed(&client);
        assert!(blocks.is_empty());
        assert_eq!(delta["delta"]["stop_reason"], "end_turn");
        assert_eq!(delta["usage"]["output_tokens"], 20);
        let mut reader = Stream::default();
        let mut gate = Gate::new(true);
        let mut out = Vec::new();
        gate.next_round(true);
        let half: String = round(vec![vec![start("msg_2", 1)], text(0, "Fo")]);
        let half = half.rsplit_once("event: content_block_stop").unwrap().0;
        for event in super::super::sse::Splitter::default().push(half.as_bytes()) {
            protocol::Stream::event(&mut reader, event, &mut gate, &mut out).unwrap();
        }
        protocol::Stream::close(&mut reader, &gate, &mut out);
        let closed = String::from_utf8(out.concat()).unwrap();
        let types: Vec<Value> = events(&closed).iter().map(|e| e["type"].clone()).collect();
        assert_eq!(
            types,
            [
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
    }

    const TOOL: &str = condense_model::recall::TOOL_NAME;
}
