//! The one encoding of messages that condense hashes: the host's check that a
//! stored checkpoint still fits the history, and the compressor's own check
//! when it is handed the whole history, both use it.

use crate::{Message, Part, Role};
use xxhash_rust::xxh3::xxh3_128;

/// Fields of at least this many bytes are hashed on their own (see [`chain`]).
const ONE_SHOT_FROM: usize = 1024;
/// Bytes of short fields gathered before they are fed to the hasher.
const BUFFER: usize = 16 << 10;

/// A 128-bit xxh3 of `messages`, continuing from `previous` (0 for a hash
/// from the start). Every field is tagged and length-prefixed, so no two
/// different histories encode alike. xxh3 rather than a cryptographic hash:
/// it runs on every call over up to a few megabytes, and guards against
/// accidents (an edited, rewound or swapped history), not adversaries (a host
/// that forges checkpoints controls the request anyway).
pub fn chain(previous: u128, messages: &[Message]) -> u128 {
    // A history is thousands of short fields (roles, ids, names) between
    // long ones (tool results, file reads). xxh3's streaming hasher runs at a
    // third of the one-shot speed, so this hashes in two levels, one-shot
    // throughout: fields are encoded into a buffer whose digest is taken every
    // few kilobytes, a long field is hashed on its own and its digest stands
    // for it, and the result is the hash of the digests.
    let mut digests = Vec::with_capacity(256);
    let mut buffer = Vec::with_capacity(BUFFER + ONE_SHOT_FROM + 32);
    buffer.extend_from_slice(&previous.to_le_bytes());
    let mut field = |tag: u8, bytes: &[u8]| {
        buffer.push(tag);
        buffer.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        if bytes.len() < ONE_SHOT_FROM {
            buffer.extend_from_slice(bytes);
        } else {
            buffer.extend_from_slice(&xxh3_128(bytes).to_le_bytes());
        }
        if buffer.len() >= BUFFER {
            digests.extend_from_slice(&xxh3_128(&buffer).to_le_bytes());
            buffer.clear();
        }
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
    digests.extend_from_slice(&xxh3_128(&buffer).to_le_bytes());
    xxh3_128(&digests)
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

    #[test]
    fn long_fields_are_hashed_whole() {
        let text = |t: String| [Message::text(Role::User, t)];
        let long = "x".repeat(ONE_SHOT_FROM * 3);
        let mut changed = long.clone();
        changed.replace_range(ONE_SHOT_FROM..=ONE_SHOT_FROM, "y");
        assert_ne!(
            prefix_hash(&text(long.clone())),
            prefix_hash(&text(changed))
        );
        assert_ne!(
            prefix_hash(&text(long.clone())),
            prefix_hash(&text(long[1..].to_string()))
        );
        assert_eq!(prefix_hash(&text(long.clone())), prefix_hash(&text(long)));
    }
}
