//! The compaction a provider makes itself, as a request carries it back:
//! Anthropic's `compaction` content block (`compact-2026-01-12` and later:
//! the API reads nothing before it) and OpenAI Responses' `compaction` item
//! (its `encrypted_content` no one else can read; the server starts the
//! window there). Both read into the model as an opaque part of type
//! `compaction` ([`Part::Opaque`]).
//!
//! What comes before it the provider no longer reads: condense counts none
//! of it, and keeps it, the compaction and the messages it is still waiting
//! on as the client sent them; its own work starts after them
//! ([`provider_compaction_end`]).

use condense_model::{Message, Part};
use serde_json::Value;
use std::collections::HashSet;

/// The type both providers give their compaction.
pub const COMPACTION_TYPE: &str = "compaction";

/// Whether `message` carries a provider's compaction.
pub fn is_provider_compaction(message: &Message) -> bool {
    message.parts.iter().any(|part| match part {
        // Most opaque parts are images and signed thinking: only one that
        // names the type is parsed.
        Part::Opaque(json) if json.contains(COMPACTION_TYPE) => serde_json::from_str::<Value>(json)
            .is_ok_and(|v| v.get("type").and_then(Value::as_str) == Some(COMPACTION_TYPE)),
        _ => false,
    })
}

/// Where condense's part of `messages` starts when they carry a provider's
/// compaction: one past the message that holds the last one, and past the
/// results of any tool call made before that point (a call and its result
/// stay on one side); `None` without one.
pub fn provider_compaction_end(messages: &[Message]) -> Option<usize> {
    let at = messages.iter().rposition(is_provider_compaction)?;
    let mut open: HashSet<&str> = HashSet::new();
    for m in &messages[..=at] {
        for r in m.tool_results() {
            open.remove(r.call_id.as_str());
        }
        open.extend(m.tool_calls().map(|c| c.id.as_str()));
    }
    let mut end = at + 1;
    while !open.is_empty() && end < messages.len() {
        for r in messages[end].tool_results() {
            open.remove(r.call_id.as_str());
        }
        end += 1;
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Format, Parsed};
    use serde_json::json;

    #[test]
    fn an_anthropic_block_and_a_responses_item_are_found_with_what_they_wait_on() {
        let anthropic = json!({"system": "s", "messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "a1"},
            {"role": "user", "content": "more"},
            {"role": "assistant", "content": [
                {"type": "compaction", "content": "what came before"},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
            {"role": "assistant", "content": "done"}]});
        let parsed = Parsed::parse(anthropic, Format::Anthropic).unwrap();
        // The system prompt is message 0: the compaction is message 4, its
        // call answered by message 5.
        assert_eq!(provider_compaction_end(parsed.messages()), Some(6));
        let responses = json!({"input": [
            {"type": "message", "role": "user", "content": "task"},
            {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA"},
            {"type": "message", "role": "user", "content": "next"}]});
        let parsed = Parsed::parse(responses, Format::Responses).unwrap();
        assert_eq!(provider_compaction_end(parsed.messages()), Some(2));
        // A text that merely says the word is no compaction.
        let plain = json!({"messages": [{"role": "user", "content": "compaction"}]});
        let parsed = Parsed::parse(plain, Format::OpenAi).unwrap();
        assert_eq!(provider_compaction_end(parsed.messages()), None);
    }
}
