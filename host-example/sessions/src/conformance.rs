//! The checks every [`SessionStore`] passes, for a store's own tests (the
//! memory and database stores run them here, the Redis store against a
//! real server in the integration tests; a store of another kind can run
//! them too). Each panics, naming what failed.

use super::{CallOutcome, CallRecord, Lookup, MAX_CALLS, SessionStore, group_of};
use condense_host::formats::Format;
use condense_host::middleware::SessionCheckpoint;
use condense_host::store::CheckpointStore;
use condense_model::hash::prefix_hash;
use condense_model::{Checkpoint, Message, Role};

/// A history: the system message `rules`, then `words` as user and
/// assistant messages in turn.
pub fn history(words: &[&str]) -> Vec<Message> {
    std::iter::once(Message::text(Role::System, "rules"))
        .chain(words.iter().enumerate().map(|(i, w)| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            Message::text(role, *w)
        }))
        .collect()
}

/// A checkpoint of `history` folded up to `boundary`, with the host's
/// prefix hash of what it folded.
pub fn checkpoint_of(history: &[Message], boundary: usize) -> SessionCheckpoint {
    SessionCheckpoint {
        summary: None,
        checkpoint: Checkpoint {
            version: 1,
            boundary: boundary as u32,
            state: vec![boundary as u8],
        },
        prefix_hash: format!("{:032x}", prefix_hash(&history[..boundary])),
    }
}

/// Two sessions with the same start, interleaved: each finds its own
/// checkpoint; a shorter request of the group does not pick up one made
/// further on.
pub fn sessions_keep_their_own(store: &dyn SessionStore) {
    let a = history(&["task", "a1", "a2", "a3", "a4", "a5", "a6"]);
    let b = history(&["task", "b1", "b2", "b3", "b4", "b5", "b6"]);
    let group = group_of(Format::OpenAi, "default", None, None, &a);
    assert_eq!(group, group_of(Format::OpenAi, "default", None, None, &b));
    let mut lookup = Lookup::new(store, Format::OpenAi, "default", None);
    assert_eq!(lookup.load(&a[..5]).unwrap(), None);
    assert!(!lookup.found());
    assert_eq!(lookup.group(), Some(group.as_str()));
    lookup.save(&a[..5], &checkpoint_of(&a, 3)).unwrap();
    lookup.save(&b[..6], &checkpoint_of(&b, 4)).unwrap();
    assert_eq!(lookup.load(&a[..7]).unwrap(), Some(checkpoint_of(&a, 3)));
    assert!(lookup.found());
    assert_eq!(lookup.load(&b[..8]).unwrap(), Some(checkpoint_of(&b, 4)));
    // Session a's later checkpoint wins for a, and is not for a request
    // shorter than the one it was made for.
    lookup.save(&a[..7], &checkpoint_of(&a, 5)).unwrap();
    assert_eq!(lookup.load(&a[..8]).unwrap(), Some(checkpoint_of(&a, 5)));
    assert_eq!(lookup.load(&a[..6]).unwrap(), Some(checkpoint_of(&a, 3)));
    // Another start, another group: nothing found there.
    let title = history(&["title?"]);
    let side = group_of(Format::OpenAi, "default", None, None, &title);
    assert_ne!(side, group);
    assert_eq!(lookup.load(&title).unwrap(), None);
    // The store lists the group once, and not one that has no checkpoint.
    let groups = store.groups().unwrap();
    assert_eq!(
        groups.iter().filter(|g| **g == group).count(),
        1,
        "{groups:?}"
    );
    assert!(!groups.contains(&side), "{groups:?}");
    assert!(groups.windows(2).all(|w| w[0] < w[1]), "sorted: {groups:?}");
}

/// Each group's first request has no time before it, its second the
/// first's; two groups never see each other's times; a time earlier
/// than the one stored (another host's clock) is returned as stored and
/// replaces it.
pub fn touches_are_per_group(store: &dyn SessionStore) {
    let a = history(&["task", "a1", "a2"]);
    let title = history(&["title?"]);
    let mut lookup = Lookup::new(store, Format::OpenAi, "default", None);
    assert_eq!(lookup.touch(&a, 1_000).unwrap(), None);
    let group = group_of(Format::OpenAi, "default", None, None, &a);
    assert_eq!(lookup.group(), Some(group.as_str()));
    // The next request of the session, longer, is the same group.
    assert_eq!(lookup.touch(&a[..2], 61_000).unwrap(), Some(1_000));
    // A side request: a group of its own, which the session's times
    // neither show through nor move.
    assert_eq!(lookup.touch(&title, 62_000).unwrap(), None);
    assert_ne!(lookup.group(), Some(group.as_str()));
    assert_eq!(store.touch(&group, 400_000).unwrap(), Some(61_000));
    assert_eq!(lookup.touch(&title, 70_000).unwrap(), Some(62_000));
    // Another host's clock behind: what was stored comes back, and the
    // earlier time is the one kept.
    assert_eq!(store.touch(&group, 300_000).unwrap(), Some(400_000));
    assert_eq!(store.touch(&group, 300_500).unwrap(), Some(300_000));
    assert_eq!(store.touch("never-sent", 1).unwrap(), None);
}

/// A call record of `model` at `at_ms`, `tokens` before and after.
pub fn call_at(at_ms: u64, model: &str, tokens: u32) -> CallRecord {
    CallRecord {
        at_ms,
        agent: "default".into(),
        model: model.into(),
        outcome: CallOutcome::Unchanged,
        tokens_before: tokens,
        tokens_after: tokens,
        compaction: None,
        recalls: 0,
        status: 200,
        usage: None,
        rates: None,
        cost: None,
    }
}

/// A group's calls come back oldest first, its latest is the last one
/// recorded, a group with calls but no checkpoint is listed, and past
/// [`MAX_CALLS`] the oldest go.
pub fn calls_are_kept_per_group(store: &dyn SessionStore) {
    assert_eq!(store.calls("g-calls").unwrap(), Vec::new());
    assert_eq!(store.last_call("g-calls").unwrap(), None);
    for i in 0..3 {
        store
            .record_call("g-calls", &call_at(1_000 + i, "m", i as u32))
            .unwrap();
    }
    store.record_call("g-other", &call_at(5, "m", 9)).unwrap();
    let calls = store.calls("g-calls").unwrap();
    let times: Vec<u64> = calls.iter().map(|c| c.at_ms).collect();
    assert_eq!(times, [1_000, 1_001, 1_002]);
    assert_eq!(
        store.last_call("g-calls").unwrap(),
        Some(call_at(1_002, "m", 2))
    );
    let groups = store.groups().unwrap();
    assert!(groups.contains(&"g-calls".to_owned()), "{groups:?}");
    assert!(groups.contains(&"g-other".to_owned()), "{groups:?}");
    for i in 0..MAX_CALLS as u64 {
        store.record_call("g-many", &call_at(i, "m", 1)).unwrap();
    }
    store
        .record_call("g-many", &call_at(MAX_CALLS as u64, "m", 1))
        .unwrap();
    let calls = store.calls("g-many").unwrap();
    assert_eq!(calls.len(), MAX_CALLS);
    assert_eq!(calls.first().map(|c| c.at_ms), Some(1));
    assert_eq!(calls.last().map(|c| c.at_ms), Some(MAX_CALLS as u64));
    // Past the cap, one in, one out, every time.
    store
        .record_call("g-many", &call_at(MAX_CALLS as u64 + 1, "m", 1))
        .unwrap();
    let calls = store.calls("g-many").unwrap();
    assert_eq!(calls.len(), MAX_CALLS);
    assert_eq!(calls.first().map(|c| c.at_ms), Some(2));
    assert_eq!(
        store.last_call("g-many").unwrap().map(|c| c.at_ms),
        Some(MAX_CALLS as u64 + 1)
    );
}
