//! Checkpoints of many sessions, for a host that serves them all (the
//! proxy), found again for each request without help from the client.
//!
//! A request does not say which session it belongs to (unless the client
//! names it). What it does have is its start and its whole history:
//!
//! - its **group** ([`group_of`]): the format, the agent's settings name,
//!   the client's tenant (behind a proxy, a digest of the credentials it
//!   sends upstream) and the digests of its system messages and first
//!   conversation message. Requests of one session always share it; a
//!   sub-agent or a title request (another system prompt, another first
//!   message) has its own, so it never touches the main session's
//!   checkpoints; nor does another tenant's session that starts alike:
//!   what a group keeps (its checkpoints' summaries, the summaries prepared
//!   for it) is its tenant's alone;
//! - among the group's checkpoints, the one it continues: one whose folded
//!   messages it still starts with (the host's prefix hash,
//!   [`SessionCheckpoint::fits`]) and that was made for a request no longer
//!   than it (the compressor's horizon lies within that request: an older,
//!   shorter request of the same group must not pick up a checkpoint made
//!   further on). Of those, the one made for the longest request: the
//!   session's latest.
//!
//! Two sessions that start alike but diverge keep separate checkpoints: a
//! checkpoint's prefix hash covers everything it folded, so after the first
//! compaction each fits only its own session. Where two sessions are the same
//! up to a checkpoint's boundary, the compressor, which is deterministic,
//! would make the same fold for either, so sharing it costs neither a cache
//! break. Entries are never replaced, only added (a checkpoint is content:
//! saving it twice is saving it once) and pruned, oldest first, past
//! [`MAX_PER_GROUP`].
//!
//! Beside its checkpoints, a group has the time of its latest request
//! ([`SessionStore::touch`]): how long a session was idle tells whether the
//! provider's prompt cache (five minutes or an hour) has expired since, and
//! a store that several hosts share tells it whichever host served the
//! request before.
//!
//! Three stores: [`MemorySessions`] (tests, and hosts whose sessions need not
//! outlive them), `DbSessions` (an embedded database file, durable across a
//! crash; feature `redb`) and `RedisSessions` (a Redis or Valkey server that
//! several hosts share; feature `redis`). Each backend is a feature, so an
//! embedder that wants neither compiles neither.

use condense_host::formats::Format;
use condense_host::middleware::SessionCheckpoint;
use condense_host::prepared::PreparedStore;
use condense_host::store::{CheckpointStore, StoreError};
use condense_model::hash::message_digest;
use condense_model::{Message, Role};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Mutex;

mod calls;
pub mod conformance;
#[cfg(feature = "redb")]
mod db;
#[cfg(feature = "redis")]
mod redis;

pub use self::calls::{
    CallCost, CallOutcome, CallRecord, MAX_CALLS, Rates, in_order, uncompressed_input_usd,
};
#[cfg(feature = "redb")]
pub use self::db::DbSessions;
#[cfg(feature = "redis")]
pub use self::redis::{RedisSessions, TOUCH_EXPIRY_SECS, calls_key, touched_key};

/// Checkpoints kept per group: a long session makes one per compaction, and
/// sessions that start alike share a group.
pub const MAX_PER_GROUP: usize = 64;

/// A checkpoint as a [`SessionStore`] keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCheckpoint {
    pub checkpoint: SessionCheckpoint,
    /// Messages of the request it was made for.
    pub len: u32,
    /// When it was saved (ms since the Unix epoch): the oldest go first.
    pub saved_ms: u64,
}

impl StoredCheckpoint {
    /// Its key within its group: the same checkpoint for the same request
    /// length is the same entry.
    pub fn id(&self) -> String {
        format!(
            "{}-{}-{}",
            self.checkpoint.prefix_hash, self.checkpoint.checkpoint.boundary, self.len
        )
    }
}

/// Where the checkpoints of many sessions are kept: shared by every request
/// a host serves, from any thread. A store shared by hosts keeps their
/// summaries prepared ahead too ([`PreparedStore`]: Redis), so that a summary one
/// host prepared serves a compaction on another.
pub trait SessionStore: PreparedStore + Send + Sync {
    /// Every checkpoint of `group`, in no particular order.
    fn entries(&self, group: &str) -> Result<Vec<StoredCheckpoint>, StoreError>;
    /// Adds `entry` to `group` (the same [`StoredCheckpoint::id`] again
    /// replaces it), dropping the oldest past [`MAX_PER_GROUP`].
    fn put(&self, group: &str, entry: &StoredCheckpoint) -> Result<(), StoreError>;
    /// Records that `group` was sent a request at `now_ms` (ms since the
    /// Unix epoch) and returns the time of the one before, if the store has
    /// it: `None` for a group's first request, or one the store no longer
    /// remembers (Redis forgets after a day); either way, not a sign that
    /// the provider's cache is warm. Reading the old time and writing the new one are one step,
    /// so of two requests at once each sees the other's time or the one
    /// before both, never the same time twice.
    ///
    /// Returns what was stored, whatever it is: hosts sharing a store have
    /// clocks of their own, so it may be later than `now_ms`; the caller
    /// takes `now_ms.saturating_sub(previous)` (no time passed). `now_ms`
    /// replaces it all the same, not the later of the two (the last writer
    /// wins, as one Redis `SET … GET` does).
    ///
    /// No default: a store that kept no times would make every request look
    /// like its session's first.
    fn touch(&self, group: &str, now_ms: u64) -> Result<Option<u64>, StoreError>;
    /// The groups that have checkpoints or calls, sorted: what an
    /// operator's view of the store lists (`condense sessions`).
    fn groups(&self) -> Result<Vec<String>, StoreError>;
    /// Adds `call` to `group`'s record of calls, dropping the oldest past
    /// [`MAX_CALLS`].
    fn record_call(&self, group: &str, call: &CallRecord) -> Result<(), StoreError>;
    /// `group`'s calls, oldest first.
    fn calls(&self, group: &str) -> Result<Vec<CallRecord>, StoreError>;
    /// `group`'s latest call: what the next one's figures continue from.
    fn last_call(&self, group: &str) -> Result<Option<CallRecord>, StoreError> {
        Ok(self.calls(group)?.pop())
    }
}

/// The group of a request: `session` when the client named it
/// (`x-condense-session`), else its start. `agent` is the name of the
/// settings it is compressed with (a checkpoint is only good for those),
/// `tenant` whose the request is (a digest of the credentials it carries,
/// when the host tells tenants apart): two tenants never share a group.
pub fn group_of(
    format: Format,
    agent: &str,
    tenant: Option<&str>,
    session: Option<&str>,
    history: &[Message],
) -> String {
    let owner = match tenant {
        Some(tenant) => format!("{agent}/{tenant}"),
        None => agent.to_owned(),
    };
    if let Some(session) = session {
        return format!("{owner}/session/{session}");
    }
    let system = history.iter().take_while(|m| m.role == Role::System);
    let first = history.iter().find(|m| m.role != Role::System);
    let mut digest = 0u128;
    for message in system.chain(first) {
        // Order matters: a rotating mix, not a sum.
        digest = digest.rotate_left(17) ^ message_digest(message);
    }
    format!("{owner}/{format}/{digest:032x}")
}

/// One request's view of a [`SessionStore`]: the [`CheckpointStore`] that
/// [`compress_body`](crate::compress_body) loads the request's checkpoint
/// from and saves the new one to. Its group ([`group_of`]) is read off the
/// history the call hands it.
pub struct Lookup<'a> {
    store: &'a dyn SessionStore,
    format: Format,
    agent: &'a str,
    tenant: Option<&'a str>,
    session: Option<&'a str>,
    group: Option<String>,
    found: bool,
}

impl<'a> Lookup<'a> {
    /// A request of `format`, compressed with the settings named `agent`,
    /// in the session the client named (`session`) or the one its start
    /// tells.
    pub fn new(
        store: &'a dyn SessionStore,
        format: Format,
        agent: &'a str,
        session: Option<&'a str>,
    ) -> Lookup<'a> {
        Lookup {
            store,
            format,
            agent,
            tenant: None,
            session,
            group: None,
            found: false,
        }
    }

    /// The lookup of a request of `tenant` ([`group_of`]).
    pub fn of_tenant(self, tenant: Option<&'a str>) -> Lookup<'a> {
        Lookup { tenant, ..self }
    }

    /// Whether [`load`](CheckpointStore::load) found the request's
    /// checkpoint: the session is one condense has been compressing.
    pub fn found(&self) -> bool {
        self.found
    }

    /// The group of the request last loaded or saved.
    pub fn group(&self) -> Option<&str> {
        self.group.as_deref()
    }

    fn group_for(&mut self, history: &[Message]) -> &str {
        let group = group_of(self.format, self.agent, self.tenant, self.session, history);
        self.group.insert(group)
    }
}

impl CheckpointStore for Lookup<'_> {
    /// Reads the group's checkpoints: a store that cannot be read fails
    /// here, before anything is compressed.
    fn load(&mut self, history: &[Message]) -> Result<Option<SessionCheckpoint>, StoreError> {
        let store = self.store;
        let mut entries = store.entries(self.group_for(history))?;
        // The latest first: prefix hashes are checked only until one fits.
        entries.sort_by_key(|e| std::cmp::Reverse((e.len, e.checkpoint.checkpoint.boundary)));
        let len = history.len();
        let found = entries
            .into_iter()
            .find(|e| e.len as usize <= len && e.checkpoint.fits(history))
            .map(|e| e.checkpoint);
        self.found = found.is_some();
        Ok(found)
    }

    fn save(
        &mut self,
        history: &[Message],
        checkpoint: &SessionCheckpoint,
    ) -> Result<(), StoreError> {
        let entry = StoredCheckpoint {
            checkpoint: checkpoint.clone(),
            len: u32::try_from(history.len()).unwrap_or(u32::MAX),
            saved_ms: condense_host::timing::now_ms(),
        };
        let store = self.store;
        store.put(self.group_for(history), &entry)
    }

    /// Records that the request of `history` was sent at `now_ms` (ms since
    /// the Unix epoch) and returns when its group's previous one was
    /// ([`SessionStore::touch`], which says what to make of a time later
    /// than `now_ms`). Once per request, before compressing it: a second
    /// call would return this request's own time. A side request (another
    /// system prompt or first message, so another group) leaves the main
    /// session's time alone.
    fn touch(&mut self, history: &[Message], now_ms: u64) -> Result<Option<u64>, StoreError> {
        let store = self.store;
        store.touch(self.group_for(history), now_ms)
    }

    /// Nothing to clear: an entry that cannot be read is skipped by every
    /// lookup, and pruned in its turn.
    fn clear(&mut self) -> Result<(), StoreError> {
        Ok(())
    }

    /// The request's group.
    fn owner(&self) -> Option<&str> {
        self.group()
    }

    /// The tenant's: a digest of it (any stable one; it is never stored).
    fn scope(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let Some(tenant) = self.tenant else {
            return 0;
        };
        let mut hasher = std::hash::DefaultHasher::new();
        tenant.hash(&mut hasher);
        hasher.finish()
    }
}

/// The entries of a group after adding one: the same id replaced, the
/// oldest dropped past [`MAX_PER_GROUP`]. Returns the ids dropped.
fn add(entries: &mut Vec<StoredCheckpoint>, entry: &StoredCheckpoint) -> Vec<String> {
    let id = entry.id();
    entries.retain(|e| e.id() != id);
    entries.push(entry.clone());
    let mut dropped = Vec::new();
    if entries.len() > MAX_PER_GROUP {
        entries.sort_by_key(|e| std::cmp::Reverse(e.saved_ms));
        dropped = entries.drain(MAX_PER_GROUP..).map(|e| e.id()).collect();
    }
    dropped
}

/// Checkpoints in memory: for tests, and a host whose sessions need not
/// outlive it.
#[derive(Debug, Default)]
pub struct MemorySessions {
    groups: Mutex<HashMap<String, Vec<StoredCheckpoint>>>,
    /// Each group's latest request ([`SessionStore::touch`]).
    touched: Mutex<HashMap<String, u64>>,
    calls: Mutex<HashMap<String, Vec<CallRecord>>>,
}

impl PreparedStore for MemorySessions {}

impl SessionStore for MemorySessions {
    fn entries(&self, group: &str) -> Result<Vec<StoredCheckpoint>, StoreError> {
        let groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        Ok(groups.get(group).cloned().unwrap_or_default())
    }

    fn put(&self, group: &str, entry: &StoredCheckpoint) -> Result<(), StoreError> {
        let mut groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        add(groups.entry(group.to_owned()).or_default(), entry);
        Ok(())
    }

    fn touch(&self, group: &str, now_ms: u64) -> Result<Option<u64>, StoreError> {
        let mut touched = self.touched.lock().unwrap_or_else(|e| e.into_inner());
        Ok(touched.insert(group.to_owned(), now_ms))
    }

    fn groups(&self) -> Result<Vec<String>, StoreError> {
        let groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        let mut names: Vec<String> = groups.keys().chain(calls.keys()).cloned().collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn record_call(&self, group: &str, call: &CallRecord) -> Result<(), StoreError> {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls::add_call(calls.entry(group.to_owned()).or_default(), call);
        Ok(())
    }

    fn calls(&self, group: &str) -> Result<Vec<CallRecord>, StoreError> {
        let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        Ok(calls.get(group).cloned().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::conformance::{
        calls_are_kept_per_group, checkpoint_of, history, sessions_keep_their_own,
        touches_are_per_group,
    };
    use super::*;

    /// A checkpoint's state is stored as base64 text; one stored by an
    /// earlier condense, as an array of numbers, still reads.
    #[test]
    fn a_checkpoints_state_is_stored_as_text_and_the_old_arrays_still_read() {
        let checkpoint = condense_model::Checkpoint {
            version: 3,
            boundary: 7,
            state: vec![0, 1, 2, 250, 255],
        };
        let json = serde_json::to_value(&checkpoint).unwrap();
        assert_eq!(json["state"], "AAEC+v8=");
        let back: condense_model::Checkpoint = serde_json::from_value(json).unwrap();
        assert_eq!(back, checkpoint);
        let old = serde_json::json!({"version": 3, "boundary": 7, "state": [0, 1, 2, 250, 255]});
        let back: condense_model::Checkpoint = serde_json::from_value(old).unwrap();
        assert_eq!(back, checkpoint);
        let bad = serde_json::json!({"version": 3, "boundary": 7, "state": "not base64!"});
        assert!(serde_json::from_value::<condense_model::Checkpoint>(bad).is_err());
    }

    #[test]
    fn in_memory_sessions_keep_their_own_checkpoints() {
        sessions_keep_their_own(&MemorySessions::default());
    }

    #[test]
    fn in_memory_calls_are_kept_per_group() {
        calls_are_kept_per_group(&MemorySessions::default());
    }

    #[test]
    fn in_memory_touches_are_per_group() {
        touches_are_per_group(&MemorySessions::default());
    }

    #[test]
    fn a_group_keeps_its_newest_entries() {
        let store = MemorySessions::default();
        let h = history(&["task", "x"]);
        for i in 0..(MAX_PER_GROUP as u64 + 5) {
            let entry = StoredCheckpoint {
                checkpoint: checkpoint_of(&h, 1),
                len: i as u32,
                saved_ms: i,
            };
            store.put("g", &entry).unwrap();
            store.put("g", &entry).unwrap();
        }
        let entries = store.entries("g").unwrap();
        assert_eq!(entries.len(), MAX_PER_GROUP);
        assert!(entries.iter().all(|e| e.saved_ms >= 5));
    }

    #[test]
    fn a_named_session_is_its_own_group() {
        let h = history(&["task"]);
        assert_eq!(
            group_of(Format::Anthropic, "review", None, Some("s-1"), &h),
            "review/session/s-1"
        );
        assert_ne!(
            group_of(Format::Anthropic, "default", None, None, &h),
            group_of(Format::OpenAi, "default", None, None, &h)
        );
    }

    #[test]
    fn two_tenants_never_share_a_group() {
        let h = history(&["task"]);
        let group = |tenant, session| group_of(Format::Anthropic, "default", tenant, session, &h);
        assert_eq!(group(Some("k1"), Some("s-1")), "default/k1/session/s-1");
        assert_ne!(
            group(Some("k1"), Some("s-1")),
            group(Some("k2"), Some("s-1"))
        );
        assert_ne!(group(Some("k1"), None), group(Some("k2"), None));
        assert_ne!(group(Some("k1"), None), group(None, None));
    }
}
