//! The one encoding of messages that condense hashes: the host's check that a
//! stored checkpoint still fits the history, and the compressor's own check
//! when it is handed the whole history, both use it.

use crate::{Message, Part, Role};
use xxhash_rust::xxh3::Xxh3;

/// A 128-bit xxh3 of `messages`, continuing from `previous` (0 for a hash
/// from the start). Every field is tagged and length-prefixed, so no two
/// different histories encode alike. xxh3 rather than a cryptographic hash:
/// it runs on every call over up to a few megabytes, and guards against
/// accidents (an edited, rewound or swapped history), not adversaries (a host
/// that forges checkpoints controls the request anyway).
pub fn chain(previous: u128, messages: &[Message]) -> u128 {
    let mut h = Xxh3::new();
    h.update(&previous.to_le_bytes());
    let mut field = |tag: u8, bytes: &[u8]| {
        // Tag and length in one update: the streaming hasher's cost is per
        // call as much as per byte, and most fields are short.
        let mut head = [tag; 9];
        head[1..].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
        h.update(&head);
        h.update(bytes);
    };
    for m in messages {
        let role = match m.role {
            Role::System => b"s",
            Role::User => b"u",
            Role::Assistant => b"a",
            Role::Tool => b"t",
        };
        field(b'M', role);
        for p in &m.parts {
            match p {
                Part::Text(t) => field(b'x', t.as_bytes()),
                Part::Thinking(t) => {
                    field(b'k', t.text.as_bytes());
                    match &t.signature {
                        Some(s) => field(b'S', s.as_bytes()),
                        None => field(b'N', b""),
                    }
                }
                Part::ToolCall(c) => {
                    field(b'c', c.id.as_bytes());
                    field(b'n', c.name.as_bytes());
                    field(b'a', c.arguments.as_bytes());
                }
                Part::ToolResult(r) => {
                    field(b'r', r.call_id.as_bytes());
                    field(b'o', r.content.as_bytes());
                    field(b'e', &[u8::from(r.is_error)]);
                }
                Part::Opaque(j) => field(b'j', j.as_bytes()),
            }
        }
    }
    h.digest128()
}

/// The hash of `messages` from the start.
pub fn prefix_hash(messages: &[Message]) -> u128 {
    chain(0, messages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_separates_field_boundaries() {
        let a = [Message {
            role: Role::User,
            parts: vec![Part::Text("ab".into()), Part::Text("c".into())],
        }];
        let b = [Message {
            role: Role::User,
            parts: vec![Part::Text("a".into()), Part::Text("bc".into())],
        }];
        assert_ne!(prefix_hash(&a), prefix_hash(&b));
        assert_eq!(prefix_hash(&a), prefix_hash(&a.clone()));
        assert_ne!(chain(1, &a), prefix_hash(&a));
    }
}
