//! Recognising a checkpoint that still fits the history.
//!
//! The host stores the checkpoint beside the session and hands it back; the
//! history may since have been edited, rewound or swapped for another session.
//! The checkpoint names a hash of the folded prefix: if the history no longer
//! starts with exactly those messages, the checkpoint is ignored and the fold is
//! recomputed, so a stale summary can never describe the wrong history.

use condense_model::{Checkpoint, Message, Part, Role};
use xxhash_rust::xxh3::Xxh3;

/// Hex of a 128-bit xxh3 over an unambiguous encoding of `messages` (every
/// field length-prefixed, so no two different histories encode alike). xxh3
/// rather than a cryptographic hash: it runs on every call over up to a few
/// hundred kilobytes, and guards against accidents, not adversaries (a host
/// that forges checkpoints controls the request anyway).
pub fn prefix_hash(messages: &[Message]) -> String {
    let mut h = Xxh3::new();
    let mut field = |tag: u8, bytes: &[u8]| {
        h.update(&[tag]);
        h.update(&(bytes.len() as u64).to_le_bytes());
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
    format!("{:032x}", h.digest128())
}

/// The checkpoint's fold if it still describes `messages`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Matched {
    pub boundary: usize,
    pub tail_start: usize,
    pub horizon: usize,
}

/// The checkpoint's fold if it still describes `messages`: boundary and tail
/// start at safe cut points (boundary 0 only when the passes alone compacted),
/// `boundary <= tail_start <= horizon <= messages.len()`, and an unchanged
/// folded prefix. Messages between the boundary and the horizon need no hash:
/// the passes' rewrite is recomputed from them, so an edit there changes the
/// request (one cache break) but can never make it describe another history.
pub fn matching(checkpoint: &Checkpoint, messages: &[Message], cuts: &[usize]) -> Option<Matched> {
    let m = Matched {
        boundary: checkpoint.boundary as usize,
        tail_start: checkpoint.tail_start as usize,
        horizon: checkpoint.horizon as usize,
    };
    let at_cut = |i: usize| cuts.binary_search(&i).is_ok();
    let ordered =
        m.boundary <= m.tail_start && m.tail_start <= m.horizon && m.horizon <= messages.len();
    let boundary_ok = at_cut(m.boundary) || (m.boundary == 0 && m.tail_start > 0);
    let tail_ok = m.tail_start == m.boundary || at_cut(m.tail_start);
    (ordered
        && boundary_ok
        && tail_ok
        && prefix_hash(&messages[..m.boundary]) == checkpoint.prefix_hash)
        .then_some(m)
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
        assert_eq!(prefix_hash(&a).len(), 32);
    }

    #[test]
    fn edited_prefix_or_unsafe_boundary_does_not_match() {
        let h = vec![
            Message::text(Role::User, "one"),
            Message::text(Role::Assistant, "two"),
            Message::text(Role::User, "three"),
        ];
        let cp = Checkpoint {
            boundary: 2,
            prefix_hash: prefix_hash(&h[..2]),
            folded_tokens: 10,
            summary: "s".into(),
            tail_start: 2,
            horizon: 3,
        };
        let boundary = |cp: &Checkpoint, h: &[Message], cuts: &[usize]| {
            matching(cp, h, cuts).map(|m| m.boundary)
        };
        assert_eq!(boundary(&cp, &h, &[1, 2]), Some(2));
        assert_eq!(boundary(&cp, &h, &[1]), None);
        let mut edited = h.clone();
        edited[0] = Message::text(Role::User, "uno");
        assert_eq!(boundary(&cp, &edited, &[1, 2]), None);
        // Rewound below the horizon: the passes' rewrite cannot be reproduced.
        assert_eq!(boundary(&cp, &h[..2], &[1]), None);
        // Passes only (no fold): boundary 0 with a tail start at a cut.
        let passes_only = Checkpoint {
            boundary: 0,
            prefix_hash: prefix_hash(&[]),
            tail_start: 2,
            ..cp.clone()
        };
        assert_eq!(boundary(&passes_only, &h, &[1, 2]), Some(0));
        assert_eq!(
            boundary(
                &Checkpoint {
                    tail_start: 0,
                    ..passes_only
                },
                &h,
                &[1, 2]
            ),
            None
        );
    }
}
