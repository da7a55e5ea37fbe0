//! The one encoding of messages that condense hashes: the host's check that a
//! stored checkpoint still fits the history, and the compressor's own check
//! when it is handed the whole history, both use it.

use crate::{Message, Part, Role};
use xxhash_rust::xxh3::xxh3_128;

/// Fields of at least this many bytes are hashed on their own (see
/// [`digest_into`]).
const ONE_SHOT_FROM: usize = 1024;

/// A 128-bit xxh3 chain over `messages`, continuing from `previous` (0 for
/// a hash from the start): each message's [`message_digest`] is hashed with
/// the hash so far, one message at a time. So the hash of a history is the
/// hash of its first part continued over the rest —
/// `chain(chain(0, a), b) == chain(0, a ++ b)` — and whoever holds the hash
/// of a prefix (a compressor's checkpoint, a host's store) continues it
/// without the messages before, while a reader of a whole history gets the
/// hash of every prefix in one pass (a recall handle's lookup,
/// [`crate::recall`]). Every field is tagged and length-prefixed, so no two
/// different histories encode alike. xxh3 rather than a cryptographic hash:
/// it runs on every call over up to a few megabytes, and guards against
/// accidents (an edited, rewound or swapped history), not adversaries (a
/// host that forges checkpoints controls the request anyway).
pub fn chain(previous: u128, messages: &[Message]) -> u128 {
    let mut buffer = Vec::with_capacity(4 << 10);
    chain_digests(
        previous,
        messages.iter().map(|m| digest_into(&mut buffer, m)),
    )
}

/// [`chain`] from digests already taken: a host that measured each message
/// when it was appended checks a prefix of thousands of messages by hashing
/// 32 bytes for each, not by reading them again.
pub fn chain_digests(previous: u128, digests: impl IntoIterator<Item = u128>) -> u128 {
    digests.into_iter().fold(previous, link)
}

/// The hash after one more message of digest `digest`.
pub fn link(previous: u128, digest: u128) -> u128 {
    let mut bytes = [0u8; 32];
    bytes[..16].copy_from_slice(&previous.to_le_bytes());
    bytes[16..].copy_from_slice(&digest.to_le_bytes());
    xxh3_128(&bytes)
}

/// The hash of `messages` from the start.
pub fn prefix_hash(messages: &[Message]) -> u128 {
    chain(0, messages)
}

/// The digest of one message, which [`chain`] hashes in its place.
pub fn message_digest(message: &Message) -> u128 {
    digest_into(&mut Vec::new(), message)
}

/// [`message_digest`], encoding into `buffer` (cleared first) so that a run
/// over a history reuses one allocation.
fn digest_into(buffer: &mut Vec<u8>, m: &Message) -> u128 {
    // A message is short fields (roles, ids, names) and often one long one
    // (a tool result, a file read). xxh3's streaming hasher runs at a third
    // of the one-shot speed, so the short fields are encoded into a buffer
    // hashed in one shot, and a long field is hashed on its own, its digest
    // standing for it.
    buffer.clear();
    let mut field = |tag: u8, bytes: &[u8]| {
        buffer.push(tag);
        buffer.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        if bytes.len() < ONE_SHOT_FROM {
            buffer.extend_from_slice(bytes);
        } else {
            buffer.extend_from_slice(&xxh3_128(bytes).to_le_bytes());
        }
    };
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
    xxh3_128(buffer)
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

    #[test]
    fn a_prefix_hashes_alike_from_its_messages_and_from_their_digests() {
        let history: Vec<Message> = (0..5)
            .map(|i| Message::text(Role::User, "m".repeat(i * 700)))
            .collect();
        let digests: Vec<u128> = history.iter().map(message_digest).collect();
        assert_eq!(chain_digests(0, digests.clone()), prefix_hash(&history));
        assert_eq!(
            chain_digests(7, digests[1..3].iter().copied()),
            chain(7, &history[1..3])
        );
        assert_ne!(
            chain_digests(0, digests[..4].iter().copied()),
            prefix_hash(&history)
        );
        // A prefix's hash continues over the rest.
        assert_eq!(
            chain(prefix_hash(&history[..2]), &history[2..]),
            prefix_hash(&history)
        );
        assert_ne!(prefix_hash(&history[..0]), prefix_hash(&history[..1]));
    }
}
