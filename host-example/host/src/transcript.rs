//! A durable history held in memory, measured once per message.
//!
//! Between compactions a call must check that the folded messages are the
//! ones the checkpoint folded, and hand the compressor a token count of each
//! message it sends. On a plain slice both read every byte again on every
//! call: the check grows with what is folded, and counting the tail costs as
//! much as the compressor's own work. An agent runtime appends to its history
//! and never edits it, so a [`Transcript`] takes each message's digest and
//! token count once, when it is appended: the check then hashes 16 bytes per
//! folded message, and the counts are read, not computed. It keeps the size
//! the middleware's cap measures too ([`request_bytes`]).
//!
//! The digests are the ones [`condense_model::hash::chain`] hashes, so a
//! checkpoint made on a transcript fits the same messages sent as a slice or a
//! request body, and the other way round.

use condense_model::hash::{chain_digests, message_digest};
use condense_model::tokens::estimate_message;
use condense_model::{Message, Part};

/// An append-only history with its per-message measures. Messages are not
/// edited in place; [`Transcript::truncate`] rewinds (an undone turn), after
/// which a checkpoint that folded the removed messages no longer fits.
#[derive(Clone, Debug, Default)]
pub struct Transcript {
    messages: Vec<Message>,
    tokens: Vec<u32>,
    digests: Vec<u128>,
    bytes: usize,
}

impl Transcript {
    pub fn new() -> Transcript {
        Transcript::default()
    }

    /// Appends `message`, measuring it.
    pub fn push(&mut self, message: Message) {
        self.tokens.push(estimate_message(&message));
        self.digests.push(message_digest(&message));
        self.bytes += message_bytes(&message);
        self.messages.push(message);
    }

    /// Keeps the first `len` messages.
    pub fn truncate(&mut self, len: usize) {
        self.messages.truncate(len);
        self.tokens.truncate(len);
        self.digests.truncate(len);
        self.bytes = request_bytes(&self.messages);
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// condense's token estimate of each message, the host's ruler.
    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// [`message_digest`] of each message.
    pub fn digests(&self) -> &[u128] {
        &self.digests
    }

    /// [`request_bytes`] of the messages.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// `condense_model::hash::prefix_hash` of the first `len` messages,
    /// from their digests.
    pub fn prefix_hash(&self, len: usize) -> u128 {
        chain_digests(0, self.digests[..len].iter().copied())
    }
}

impl Extend<Message> for Transcript {
    fn extend<I: IntoIterator<Item = Message>>(&mut self, messages: I) {
        for message in messages {
            self.push(message);
        }
    }
}

impl FromIterator<Message> for Transcript {
    fn from_iter<I: IntoIterator<Item = Message>>(messages: I) -> Transcript {
        let mut transcript = Transcript::new();
        transcript.extend(messages);
        transcript
    }
}

impl From<Vec<Message>> for Transcript {
    fn from(messages: Vec<Message>) -> Transcript {
        messages.into_iter().collect()
    }
}

/// The size of a request as the size cap measures it: the bytes of every
/// string its messages carry (texts, thinking and signatures, tool call ids,
/// names and arguments, tool results, opaque parts), which is what the host
/// copies into the guest. A request body is larger in practice (JSON adds
/// quoting and structure, and only tool inputs and opaque parts are
/// re-serialised, compactly), so a body within the cap of
/// `condense compress` is within the middleware's cap too.
pub fn request_bytes(messages: &[Message]) -> usize {
    messages.iter().map(message_bytes).sum()
}

pub(crate) fn message_bytes(message: &Message) -> usize {
    message
        .parts
        .iter()
        .map(|part| match part {
            Part::Text(text) | Part::Opaque(text) => text.len(),
            Part::Thinking(t) => t.text.len() + t.signature.as_ref().map_or(0, String::len),
            Part::ToolCall(c) => c.id.len() + c.name.len() + c.arguments.len(),
            Part::ToolResult(r) => r.call_id.len() + r.content.len(),
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_model::hash::prefix_hash;
    use condense_model::tokens::estimate_messages;
    use condense_model::{Role, Thinking, ToolCall, ToolResult};

    fn history() -> Vec<Message> {
        (0..6)
            .map(|i| Message::text(Role::User, format!("message {i} ").repeat(i * 50)))
            .collect()
    }

    #[test]
    fn measures_are_those_of_the_messages() {
        let history = history();
        let transcript = Transcript::from(history.clone());
        assert_eq!(transcript.messages(), &history[..]);
        assert_eq!(transcript.tokens(), &estimate_messages(&history)[..]);
        assert_eq!(transcript.bytes(), request_bytes(&history));
        for len in 0..=history.len() {
            assert_eq!(transcript.prefix_hash(len), prefix_hash(&history[..len]));
        }
    }

    #[test]
    fn a_rewound_transcript_measures_what_it_now_holds() {
        let history = history();
        let mut transcript = Transcript::from(history.clone());
        transcript.truncate(3);
        transcript.push(Message::text(Role::Assistant, "another answer"));
        let mut now = history[..3].to_vec();
        now.push(Message::text(Role::Assistant, "another answer"));
        assert_eq!(transcript.len(), 4);
        assert_eq!(transcript.prefix_hash(4), prefix_hash(&now));
        assert_ne!(transcript.prefix_hash(4), prefix_hash(&history[..4]));
        assert_eq!(transcript.tokens(), &estimate_messages(&now)[..]);
        assert_eq!(transcript.bytes(), request_bytes(&now));
    }

    #[test]
    fn request_bytes_counts_every_string_the_guest_gets() {
        let messages = [
            Message::text(Role::User, "four"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Thinking(Thinking {
                        text: "ab".into(),
                        signature: Some("sig".into()),
                    }),
                    Part::ToolCall(ToolCall {
                        id: "c1".into(),
                        name: "Bash".into(),
                        arguments: "{}".into(),
                    }),
                    Part::Opaque("[1]".into()),
                ],
            },
            Message {
                role: Role::Tool,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: "c1".into(),
                    content: "é".into(),
                    is_error: false,
                })],
            },
        ];
        assert_eq!(
            request_bytes(&messages),
            4 + (2 + 3) + (2 + 4 + 2) + 3 + (2 + 2)
        );
        assert_eq!(request_bytes(&[]), 0);
    }
}
