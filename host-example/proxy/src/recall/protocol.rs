//! What the recall loop needs to know of a protocol, one implementation per
//! protocol beside this: how an answer divides into units, how the
//! client's one answer is put together from the rounds', how a request is
//! continued, and how a streamed answer is read and renumbered.
//!
//! What a request carries — message shapes, tool results — is the formats
//! crate's: the results of the recall calls are rendered by it, as it
//! renders any message condense writes.

use super::calls::RecallCall;
use super::gate::{Gate, Unit};
use super::sse::Event;
use bytes::Bytes;
use condense_host::formats::{self, Format};
use condense_model::{Message, Part, ToolResult};
use serde_json::Value;

/// How the client's answer ends.
#[derive(Clone, Copy, Debug)]
pub enum End<'a> {
    /// As this answer (the last round's) ended.
    As(&'a Value),
    /// As an answer of the protocol plainly ends: its recall calls were
    /// held back in the last round, or a later round failed.
    Plain,
}

/// One protocol, as the recall loop reads and writes it.
pub trait Protocol: Sync {
    /// The units of a plain (JSON) answer, in order; `None`: not an answer
    /// of this protocol, which the client gets as it came.
    fn units(&self, answer: &Value) -> Option<Vec<Unit>>;

    /// The text of a plain answer: what the model wrote for a reader, without
    /// its thinking or its calls (empty when it wrote none).
    fn text(&self, answer: &Value) -> String;

    /// The usage of a plain answer: its `usage` object, in every protocol.
    fn usage<'a>(&self, answer: &'a Value) -> Option<&'a Value> {
        answer.get("usage").filter(|u| u.is_object())
    }

    /// The client's one answer: `first` (the first round's: its id, its
    /// model) with `units` as its content, ending as `end` says, with
    /// `usage`; `client_called`: the units call the client's tools.
    fn assemble(
        &self,
        first: &Value,
        end: End<'_>,
        units: Vec<Value>,
        usage: Option<Value>,
        client_called: bool,
    ) -> Value;

    /// The call a recall unit makes.
    fn call(&self, unit: &Value) -> RecallCall;

    /// The assistant's `turn` ([`super::gate::turn`]) as entries of the
    /// list of `body`, the request it continues; the recall results follow
    /// it ([`results`]).
    fn turn(&self, body: &Value, turn: Vec<Value>) -> Vec<Value>;

    /// A reader of a streamed answer, for all the rounds of one request.
    fn stream(&self) -> Box<dyn Stream>;
}

/// A streamed answer's reader: what the client is sent for each event,
/// round after round.
pub trait Stream: Send {
    /// One event of the current round: what the client is sent for it goes
    /// to `out`. `Err`: the upstream broke off the answer (an error event)
    /// once the client's answer was no longer the upstream's as it came.
    fn event(&mut self, event: Event, gate: &mut Gate, out: &mut Vec<Bytes>) -> Result<(), String>;

    /// The round's stream ended: its units (those held back marked), and
    /// whether its last event came. The round's usage is added to
    /// `gate.usage`.
    fn end_round(&mut self, gate: &mut Gate) -> (Vec<Unit>, bool);

    /// Ends the client's answer now, validly: whatever is open closed, and
    /// the protocol's end events, with the usage so far.
    fn close(&mut self, gate: &Gate, out: &mut Vec<Bytes>);
}

/// `results` as `format` carries them back: a user message of `tool_result`
/// blocks (Anthropic), `tool` messages (Chat), `function_call_output`
/// items (Responses).
pub fn results(format: Format, results: Vec<ToolResult>) -> Vec<Value> {
    let parts = results.into_iter().map(Part::ToolResult).collect();
    let role = format.result_role();
    formats::render_messages(format, &[Message { role, parts }])
}

/// `event` with its data rewritten to `data`, under its own name.
pub fn rewritten(event: &Event, data: &Value) -> Bytes {
    super::sse::write(event.name.as_deref(), data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_are_rendered_as_each_format_carries_them() {
        let result = |id: &str, is_error| ToolResult {
            call_id: id.into(),
            content: format!("text of {id}"),
            is_error,
        };
        let anthropic = results(
            Format::Anthropic,
            vec![result("a", false), result("b", true)],
        );
        assert_eq!(
            anthropic,
            [json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "text of a"},
                {"type": "tool_result", "tool_use_id": "b", "content": "text of b", "is_error": true},
            ]})]
        );
        let chat = results(Format::OpenAi, vec![result("a", false), result("b", true)]);
        assert_eq!(
            chat,
            [
                json!({"role": "tool", "tool_call_id": "a", "content": "text of a"}),
                json!({"role": "tool", "tool_call_id": "b", "content": "text of b"}),
            ]
        );
        let responses = results(Format::Responses, vec![result("a", false)]);
        assert_eq!(
            responses,
            [json!({"type": "function_call_output", "call_id": "a", "output": "text of a"})]
        );
    }
}
