//! What a checkpoint store holds, for the proxy's operator: its sessions
//! (checkpoint groups), and for one of them each compaction's checkpoint
//! with the handle that recalls what it folded, and the current summary.
//! Served read-only as `GET /sessions` and `GET /sessions/{session}`, and
//! printed by `condense sessions`.
//!
//! Summaries hold the users' words, so the view is the operator's: who may
//! read it is [`crate::guard::Access`].

use condense_host::store::StoreError;
use condense_sessions::{SessionStore, StoredCheckpoint};
use serde::Serialize;

/// One session of the list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SessionRow {
    pub session: String,
    pub checkpoints: usize,
    /// Messages of the request the latest checkpoint was made for.
    pub request: u32,
    /// Messages before its boundary.
    pub folded: u32,
    /// When it was saved, ms since the Unix epoch.
    pub saved_ms: u64,
}

/// One compaction's checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckpointRow {
    pub request: u32,
    pub folded: u32,
    /// The `condense_recall` handle of what it folded.
    pub handle: String,
    pub saved_ms: u64,
}

/// One session: its checkpoints, the latest first, and the latest summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SessionView {
    pub session: String,
    pub checkpoints: Vec<CheckpointRow>,
    /// The latest summary message, as the model sees it (framing included).
    pub summary: Option<String>,
    /// Why the summary cannot be read here, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_unreadable: Option<String>,
}

/// A group's checkpoints, the latest (made for the longest request) first.
fn latest_first(
    store: &dyn SessionStore,
    group: &str,
) -> Result<Vec<StoredCheckpoint>, StoreError> {
    let mut entries = store.entries(group)?;
    entries.sort_by_key(|e| std::cmp::Reverse((e.len, e.checkpoint.checkpoint.boundary)));
    Ok(entries)
}

/// Every session of `store`, sorted.
pub fn list(store: &dyn SessionStore) -> Result<Vec<SessionRow>, StoreError> {
    let mut rows = Vec::new();
    for group in store.groups()? {
        let entries = latest_first(store, &group)?;
        if let Some(latest) = entries.first() {
            rows.push(SessionRow {
                checkpoints: entries.len(),
                request: latest.len,
                folded: latest.checkpoint.checkpoint.boundary,
                saved_ms: latest.saved_ms,
                session: group,
            });
        }
    }
    Ok(rows)
}

/// Session `group` of `store`, or `None` when it has no checkpoint.
pub fn show(store: &dyn SessionStore, group: &str) -> Result<Option<SessionView>, StoreError> {
    let entries = latest_first(store, group)?;
    let Some(latest) = entries.first() else {
        return Ok(None);
    };
    // The summary message as the host read it from the compressor's output
    // (the contract), never the compressor's private state.
    let summary = latest.checkpoint.summary.clone();
    let summary_unreadable = (summary.is_none() && latest.checkpoint.checkpoint.boundary > 0)
        .then(|| "saved before the host kept the summary beside the checkpoint".to_owned());
    Ok(Some(SessionView {
        session: group.to_owned(),
        checkpoints: entries
            .iter()
            .map(|e| CheckpointRow {
                request: e.len,
                folded: e.checkpoint.checkpoint.boundary,
                handle: handle(e),
                saved_ms: e.saved_ms,
            })
            .collect(),
        summary,
        summary_unreadable,
    }))
}

/// The `condense_recall` handle of what a checkpoint folded, from the
/// host's prefix hash of the history before its boundary, which it keeps
/// beside the checkpoint.
fn handle(entry: &StoredCheckpoint) -> String {
    u128::from_str_radix(&entry.checkpoint.prefix_hash, 16)
        .map_or_else(|_| "?".to_owned(), condense_model::recall::fold_handle_of)
}
