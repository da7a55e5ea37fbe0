//! OpenAI Responses: an answer's units are its output items. A round is
//! continued with the items as the model gave them (reasoning items byte
//! for byte, their `encrypted_content` with them) and a
//! `function_call_output` item per result, rendered by the formats crate.
//! A request with `store: false` gets the items without their `id`s, as
//! Codex sends them back: the server kept nothing they could refer to.
//!
//! Streamed, the client reads one response: the first round's
//! `response.created` and `response.in_progress`, every round's item
//! events with `output_index` numbered on over the rounds, every event's
//! `sequence_number` one more than the last one's, and the last round's
//! `response.completed` carrying the first round's `id` and `created_at`,
//! the items the client was sent as its `output`, and the usage of every
//! round.

use super::calls::RecallCall;
use super::gate::{Gate, Kind, Unit};
use super::protocol::{self, End, Protocol, rewritten};
use super::sse::{self, Event};
use bytes::Bytes;
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub struct Responses;

/// The items that call a tool the client runs; every other item
/// (`web_search_call`, `reasoning`, a `message`) is the model's or the
/// provider's.
const CLIENT_CALLS: [&str; 7] = [
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "shell_call",
    "apply_patch_call",
    "computer_call",
    "mcp_approval_request",
];

fn kind(item: &Value) -> Kind {
    match item["type"].as_str() {
        Some("function_call") => Kind::of_call(item["name"].as_str()),
        Some(kind) if CLIENT_CALLS.contains(&kind) => Kind::ClientCall,
        _ => Kind::Other,
    }
}

/// The events that end a response.
const ENDS: [&str; 2] = ["response.completed", "response.incomplete"];

impl Protocol for Responses {
    fn text(&self, answer: &Value) -> String {
        let output = answer["output"].as_array().into_iter().flatten();
        output
            .filter(|item| item["type"] == "message")
            .flat_map(|item| item["content"].as_array().into_iter().flatten())
            .filter(|part| part["type"] == "output_text")
            .filter_map(|part| part["text"].as_str())
            .collect()
    }

    fn units(&self, answer: &Value) -> Option<Vec<Unit>> {
        let output = answer.get("output")?.as_array()?;
        Some(
            output
                .iter()
                .map(|item| Unit::new(kind(item), item.clone()))
                .collect(),
        )
    }

    fn assemble(
        &self,
        first: &Value,
        end: End<'_>,
        units: Vec<Value>,
        usage: Option<Value>,
        _client_called: bool,
    ) -> Value {
        let mut answer = first.clone();
        let (status, incomplete) = match end {
            End::As(last) => (last["status"].clone(), last["incomplete_details"].clone()),
            End::Plain => ("completed".into(), Value::Null),
        };
        answer["status"] = status;
        answer["incomplete_details"] = incomplete;
        answer["output"] = Value::Array(units);
        if let Some(usage) = usage {
            answer["usage"] = usage;
        }
        answer
    }

    fn call(&self, unit: &Value) -> RecallCall {
        let id = unit["call_id"].as_str().unwrap_or_default();
        RecallCall::from_text(id, unit["arguments"].as_str().unwrap_or(""))
    }

    fn turn(&self, body: &Value, turn: Vec<Value>) -> Vec<Value> {
        let stored = body["store"].as_bool() != Some(false);
        turn.into_iter()
            .map(|mut item| {
                if let (false, Some(item)) = (stored, item.as_object_mut()) {
                    item.shift_remove("id");
                }
                item
            })
            .collect()
    }

    fn stream(&self) -> Box<dyn protocol::Stream> {
        Box::<Stream>::default()
    }
}

/// The reader of a streamed answer.
#[derive(Default)]
struct Stream {
    /// The first round's response, as `response.created` had it.
    created: Option<Value>,
    /// This round's items by the upstream's `output_index`: as added, then
    /// as done.
    items: BTreeMap<u64, Unit>,
    /// The items the client was sent, by its `output_index`: as added
    /// until done.
    sent: BTreeMap<usize, Value>,
    /// Those of `sent` not yet done.
    open: BTreeMap<usize, Value>,
    /// The last `sequence_number` the client was sent.
    sequence: Option<u64>,
    /// This round's usage.
    usage: Option<Value>,
    /// Whether this round's last event came.
    complete: bool,
}

impl Stream {
    /// An item event for the client: its `output_index` numbered as the
    /// client's, or nothing for an item held back.
    fn item_event(&mut self, data: &mut Value, index: u64, gate: &mut Gate) -> bool {
        let item = &data["item"];
        match data["type"].as_str() {
            Some("response.output_item.added") => {
                self.items
                    .insert(index, Unit::new(kind(item), item.clone()));
            }
            Some("response.output_item.done") => {
                if let Some(unit) = self.items.get_mut(&index) {
                    unit.json = item.clone();
                }
            }
            _ => {}
        }
        let opened = self.items.get(&index).map_or(Kind::Other, |u| u.kind);
        let Some(client) = gate.unit(index, || opened) else {
            return false;
        };
        if let Some(unit) = self.items.get_mut(&index) {
            unit.passed = true;
        }
        match data["type"].as_str() {
            Some("response.output_item.added") => {
                self.open.insert(client, item.clone());
                self.sent.insert(client, item.clone());
            }
            Some("response.output_item.done") => {
                self.open.remove(&client);
                self.sent.insert(client, item.clone());
            }
            _ => {}
        }
        data["output_index"] = client.into();
        true
    }

    /// The client's final response: `response` (this round's) with the
    /// first round's `id` and `created_at`, every item the client was
    /// sent, the usage of every round, and the plain status when the
    /// answer ends before its recall calls.
    fn response(&self, mut response: Value, gate: &Gate) -> Value {
        if let Some(created) = &self.created {
            for key in ["id", "created_at"] {
                response[key] = created[key].clone();
            }
        }
        if gate.ending() {
            response["status"] = "completed".into();
            response["incomplete_details"] = Value::Null;
        }
        response["output"] = self.sent.values().cloned().collect();
        if let Some(usage) = gate.usage.with(self.usage.as_ref()) {
            response["usage"] = usage;
        }
        response
    }

    /// `data` numbered on from the last event the client was sent.
    fn numbered(&mut self, data: &mut Value) {
        if let Some(number) = data["sequence_number"].as_u64() {
            let next = self.sequence.map_or(number, |last| last + 1);
            data["sequence_number"] = next.into();
            self.sequence = Some(next);
        }
    }

    /// An event the proxy writes, numbered on.
    fn write(&mut self, mut data: Value, out: &mut Vec<Bytes>) {
        if self.sequence.is_some() {
            data["sequence_number"] = 0.into();
        }
        self.numbered(&mut data);
        out.push(sse::write(data["type"].as_str(), &data));
    }
}

impl protocol::Stream for Stream {
    fn event(&mut self, event: Event, gate: &mut Gate, out: &mut Vec<Bytes>) -> Result<(), String> {
        let Some(mut data) = event.json() else {
            if gate.passing() {
                out.push(event.raw);
            }
            return Ok(());
        };
        let original = data.clone();
        let kind = data["type"].as_str().unwrap_or_default().to_owned();
        let sent = match kind.as_str() {
            "response.created" | "response.in_progress" | "response.queued" => {
                if self.created.is_none() {
                    self.created = Some(data["response"].clone());
                }
                gate.first_round()
            }
            end if ENDS.contains(&end) => {
                self.complete = true;
                self.usage = data["response"]
                    .get("usage")
                    .filter(|u| u.is_object())
                    .cloned();
                if !gate.untouched() && !gate.continuing() {
                    data["response"] = self.response(data["response"].take(), gate);
                }
                !gate.continuing()
            }
            "response.failed" | "error" if !gate.untouched() => {
                return Err(data.get("response").unwrap_or(&data).to_string());
            }
            _ => match data["output_index"].as_u64() {
                Some(index) => self.item_event(&mut data, index, gate),
                None => gate.passing(),
            },
        };
        if !sent {
            return Ok(());
        }
        self.numbered(&mut data);
        out.push(match data == original {
            true => event.raw,
            false => rewritten(&event, &data),
        });
        Ok(())
    }

    fn end_round(&mut self, gate: &mut Gate) -> (Vec<Unit>, bool) {
        if let Some(usage) = self.usage.take() {
            gate.usage.add(&usage);
        }
        let units = std::mem::take(&mut self.items).into_values().collect();
        (units, std::mem::take(&mut self.complete))
    }

    fn close(&mut self, gate: &Gate, out: &mut Vec<Bytes>) {
        for (index, mut item) in std::mem::take(&mut self.open) {
            item["status"] = "incomplete".into();
            self.sent.insert(index, item.clone());
            let done = json!({"type": "response.output_item.done", "output_index": index,
                "item": item});
            self.write(done, out);
        }
        let mut response = self.created.clone().unwrap_or_default();
        response["status"] = "completed".into();
        let response = self.response(response, gate);
        let completed = json!({"type": "response.completed", "response": response});
        self.write(completed, out);
    }
}

#[cfg(test)]
mod tests {
    use super::super::stream::tests::{body, events, replay};
    use super::*;
    use condense_host::formats::Format;
    use condense_model::ToolResult;

    const TOOL: &str = condense_model::recall::TOOL_NAME;

    fn response(id: &str, status: &str, output: Value, tokens: u32) -> Value {
        json!({"id": id, "object": "response", "created_at": id.len(), "status": status,
            "model": "gpt-5", "output": output,
            "usage": {"input_tokens": tokens, "input_tokens_details": {"cached_tokens": 1},
                "output_tokens": 2, "total_tokens": tokens + 2}})
    }

    fn message(id: &str, text: &str) -> Value {
        json!({"type": "message", "id": id, "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]})
    }

    fn call(id: &str, name: &str, arguments: Value) -> Value {
        json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": name,
            "arguments": arguments.to_string(), "status": "completed"})
    }

    /// A round's events for `items`: created, in progress, each item added
    /// (a message's text delta, a call's arguments delta) and done, then
    /// completed; numbered from 0.
    fn round(id: &str, items: &[Value], tokens: u32) -> String {
        let mut events = vec![
            json!({"type": "response.created", "response": response(id, "in_progress", json!([]), 0)}),
            json!({"type": "response.in_progress", "response": response(id, "in_progress", json!([]), 0)}),
        ];
        for (index, item) in items.iter().enumerate() {
            events.push(
                json!({"type": "response.output_item.added", "output_index": index,
                "item": item}),
            );
            let delta = match item["type"].as_str() {
                Some("function_call") => json!({"type": "response.function_call_arguments.delta",
                    "output_index": index, "item_id": item["id"], "delta": item["arguments"]}),
                _ => json!({"type": "response.output_text.delta", "output_index": index,
                    "item_id": item["id"], "content_index": 0, "delta": "…"}),
            };
            events.push(delta);
            events.push(
                json!({"type": "response.output_item.done", "output_index": index,
                "item": item}),
            );
        }
        let done = response(id, "completed", Value::Array(items.to_vec()), tokens);
        events.push(json!({"type": "response.completed", "response": done}));
        for (number, event) in events.iter_mut().enumerate() {
            event["sequence_number"] = number.into();
        }
        body(&events, true)
    }

    /// The client's events, checked for one well-formed response: created
    /// first, completed last, each once; sequence numbers 0, 1, …; items
    /// added at output indices 0, 1, … in turn; the completed response's
    /// output the items done. Returns the completed response.
    fn well_formed(text: &str) -> Value {
        let events = events(text);
        let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(kinds[0], "response.created", "{text}");
        assert_eq!(
            kinds.iter().filter(|k| **k == "response.created").count(),
            1
        );
        assert_eq!(kinds.last(), Some(&"response.completed"), "{text}");
        let mut done = Vec::new();
        let mut added = 0;
        for (number, event) in events.iter().enumerate() {
            assert_eq!(event["sequence_number"], number, "{text}");
            if let Some(index) = event["output_index"].as_u64() {
                if event["type"] == "response.output_item.added" {
                    assert_eq!(index, added, "{text}");
                    added += 1;
                }
                assert!(index < added, "{text}");
            }
            if event["type"] == "response.output_item.done" {
                done.push(event["item"].clone());
            }
        }
        let completed = events.last().unwrap()["response"].clone();
        assert_eq!(completed["output"], Value::Array(done));
        assert_eq!(completed["id"], events[0]["response"]["id"]);
        completed
    }

    #[test]
    fn an_answer_without_recall_calls_passes_byte_for_byte() {
        let upstream = round(
            "resp_1",
            &[message("m1", "Hi."), call("b", "shell", json!({}))],
            10,
        );
        let (client, _) = replay(&Responses, std::slice::from_ref(&upstream), 3);
        assert_eq!(client, upstream);
    }

    #[test]
    fn later_rounds_are_renumbered_into_the_first_rounds_response() {
        let reasoning = json!({"type": "reasoning", "id": "rs_1", "summary": [],
            "encrypted_content": "gAAAA-signed"});
        let recall = call("r", TOOL, json!({"handle": "f0123456789a"}));
        let first = round(
            "resp_1",
            &[
                reasoning.clone(),
                message("m1", "Let me look."),
                recall.clone(),
                call("b", "shell", json!({})),
            ],
            10,
        );
        let second = round("resp_22", &[message("m2", "Found: 42.")], 30);
        let (client, units) = replay(&Responses, &[first, second], 3);
        let completed = well_formed(&client);
        assert_eq!(completed["status"], "completed");
        let ids: Vec<&str> = completed["output"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["rs_1", "m1", "m2"]);
        assert_eq!(completed["usage"]["input_tokens"], 40);
        assert_eq!(
            completed["usage"]["input_tokens_details"]["cached_tokens"],
            2
        );
        assert!(
            !client.contains("resp_22") && !client.contains(TOOL),
            "{client}"
        );
        // The turn: the reasoning item byte for byte, the message, the
        // recall call; with `store: false`, without their ids.
        let turn = super::super::gate::turn(&units[0]);
        assert_eq!(
            turn,
            [
                reasoning.clone(),
                message("m1", "Let me look."),
                recall.clone()
            ]
        );
        let result = ToolResult {
            call_id: "r".into(),
            content: "42".into(),
            is_error: false,
        };
        let mut entries = Responses.turn(&json!({"store": false}), turn);
        entries.extend(protocol::results(Format::Responses, vec![result]));
        assert_eq!(entries[0]["encrypted_content"], "gAAAA-signed");
        assert!(entries.iter().all(|e| e.get("id").is_none()), "{entries:?}");
        assert_eq!(
            entries[3],
            json!({"type": "function_call_output", "call_id": "r", "output": "42"})
        );
    }

    #[test]
    fn the_last_round_ends_and_a_failed_one_closes() {
        let recall = call("r", TOOL, json!({"handle": "f0123456789a"}));
        let first = round("resp_1", &[message("m1", "Let me look."), recall], 10);
        for max_rounds in [0, 3] {
            let (client, _) = replay(&Responses, std::slice::from_ref(&first), max_rounds);
            let completed = well_formed(&client);
            assert_eq!(completed["status"], "completed");
            assert_eq!(completed["output"], json!([message("m1", "Let me look.")]));
            assert_eq!(completed["usage"]["input_tokens"], 10);
        }
    }

    #[test]
    fn recall_calls_after_a_client_call_are_dropped() {
        let items = [
            call("b", "shell", json!({})),
            call("r", TOOL, json!({"handle": "x"})),
            message("m1", "Then more."),
        ];
        let (client, _) = replay(&Responses, &[round("resp_1", &items, 10)], 3);
        let completed = well_formed(&client);
        assert_eq!(completed["output"], json!([items[0], items[2]]));
    }
}
