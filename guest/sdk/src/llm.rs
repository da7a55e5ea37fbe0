//! The host's language model, for a summarizer that asks one: one chat
//! completion per call. Calling [`chat`] makes the component import the
//! host's `llm` interface (world `llm-summarizer-world`); a host without a
//! model configured answers every call with an error. The host owns the endpoint, the model and the key;
//! the time a call takes is not the guest's (see the `llm` interface of the
//! WIT).

use condense_model::Role;

/// One message of a chat completion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: Role, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role,
            content: content.into(),
        }
    }
}

/// The model's answer to `messages` (system messages first), at most
/// `max_tokens` long (0: the host's limit). An error says why there is none
/// (an HTTP status, a timeout, calls paused after failures): return it, and
/// the host falls through to the next summarizer.
pub fn chat(messages: &[ChatMessage], max_tokens: u32) -> Result<String, String> {
    crate::bindings::condense::middleware::llm::chat(&request(messages, max_tokens))
}

/// The estimated tokens of the conversation this compaction folds, as the
/// agent last sent it to its model (its system prompt, tools, the previous
/// summary and the messages now folded); `None` when the host has none
/// (the summary is asked outside a compaction).
pub fn conversation_tokens() -> Option<u32> {
    crate::bindings::condense::middleware::llm::conversation_tokens()
}

/// [`chat`] after that conversation: the host sends it first, exactly as
/// the agent's model was sent it, then `messages` (the instruction), so
/// that the provider's prompt cache serves all but the instruction. An
/// error when [`conversation_tokens`] is `None`.
pub fn chat_after_conversation(
    messages: &[ChatMessage],
    max_tokens: u32,
) -> Result<String, String> {
    crate::bindings::condense::middleware::llm::chat_after_conversation(&request(
        messages, max_tokens,
    ))
}

fn request(messages: &[ChatMessage], max_tokens: u32) -> crate::types::ChatRequest {
    crate::types::ChatRequest {
        messages: messages
            .iter()
            .map(|m| crate::types::ChatMessage {
                role: m.role.into(),
                content: m.content.clone(),
            })
            .collect(),
        max_tokens,
    }
}
