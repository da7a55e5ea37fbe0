//! [`SessionStore`] in an embedded database file (redb): the proxy's default,
//! durable across a crash of the process.

use super::calls::CallRecord;
use super::{MAX_CALLS, SessionStore, StoredCheckpoint, add};
use condense_host::store::StoreError;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

/// The checkpoints table: `group \0 id` → the entry as JSON. A group's
/// entries are one range of keys.
const TABLE: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("checkpoints");

/// The times table: `group` → its latest request, ms since the Unix epoch
/// ([`SessionStore::touch`]). One row per group, never dropped (nor are a
/// group's checkpoints).
const TOUCHED: redb::TableDefinition<&str, u64> = redb::TableDefinition::new("touched");

/// The calls table: `group \0 seq` (20 digits, so keys sort as numbers)
/// → the record as JSON. A group's calls are one range, oldest first.
const CALLS: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("calls");

/// Checkpoints in an embedded database file (redb): every `put` is one
/// transaction, committed durably before it returns, so a host killed at any
/// moment finds every checkpoint it had saved. Request times are committed
/// without waiting for the disk ([`quick`]).
pub struct DbSessions {
    db: redb::Database,
    recording: Recording,
}

impl std::fmt::Debug for DbSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbSessions").finish_non_exhaustive()
    }
}

fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend {
        store: "embedded database",
        reason: e.to_string(),
    }
}

impl DbSessions {
    /// Opens the database at `path`, creating it.
    pub fn open(path: &Path) -> Result<DbSessions, StoreError> {
        let db = redb::Database::create(path)
            .map_err(|e| backend(format!("cannot open {}: {e}", path.display())))?;
        Ok(DbSessions {
            db,
            recording: Recording::default(),
        })
    }

    fn range(group: &str) -> (String, String) {
        (format!("{group}\0"), format!("{group}\u{1}"))
    }

    /// The values of `group`'s range of `table`, in key order, each read
    /// as JSON; one this condense cannot read is skipped, never an error.
    fn rows<T: serde::de::DeserializeOwned>(
        &self,
        table: redb::TableDefinition<&str, &[u8]>,
        group: &str,
    ) -> Result<Vec<T>, StoreError> {
        use redb::ReadableDatabase;
        let txn = self.db.begin_read().map_err(backend)?;
        let table = match txn.open_table(table) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(e) => return Err(backend(e)),
        };
        let (from, to) = DbSessions::range(group);
        let mut out = Vec::new();
        for row in table.range(from.as_str()..to.as_str()).map_err(backend)? {
            let (_, value) = row.map_err(backend)?;
            if let Ok(row) = serde_json::from_slice(value.value()) {
                out.push(row);
            }
        }
        Ok(out)
    }

    /// The groups of `table`'s keys (`group \0 …`, sorted): each once.
    fn groups_of(
        txn: &redb::ReadTransaction,
        table: redb::TableDefinition<&str, &[u8]>,
    ) -> Result<Vec<String>, StoreError> {
        use redb::ReadableTable;
        let table = match txn.open_table(table) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(e) => return Err(backend(e)),
        };
        let mut groups: Vec<String> = Vec::new();
        for row in table.iter().map_err(backend)? {
            let (key, _) = row.map_err(backend)?;
            let group = key.value().split('\0').next().unwrap_or_default();
            if groups.last().map(String::as_str) != Some(group) {
                groups.push(group.to_owned());
            }
        }
        Ok(groups)
    }
}

impl DbSessions {
    /// `batch` in one durable write transaction: each call numbered after
    /// its group's last, the group's oldest dropped past [`MAX_CALLS`]. A
    /// group's numbers run without a gap (calls are only added at the end
    /// and dropped from the start), so its first and last key say how many
    /// it has: nothing else is read.
    fn add_calls(&self, batch: &[(u64, String, CallRecord)]) -> Result<(), StoreError> {
        use redb::ReadableTable;
        let txn = self.db.begin_write().map_err(backend)?;
        {
            let mut table = txn.open_table(CALLS).map_err(backend)?;
            for (_, group, call) in batch {
                let (from, to) = DbSessions::range(group);
                let seq = |key: &str| key[from.len()..].parse::<u64>().ok();
                let (first, last) = {
                    let mut rows = table.range(from.as_str()..to.as_str()).map_err(backend)?;
                    let first = rows.next().transpose().map_err(backend)?;
                    let first = first.and_then(|(key, _)| seq(key.value()));
                    let last = rows.next_back().transpose().map_err(backend)?;
                    (first, last.and_then(|(key, _)| seq(key.value())).or(first))
                };
                let next = last.map_or(0, |last| last + 1);
                if let Some(first) = first {
                    let kept = next - first;
                    for old in first..(first + (kept + 1).saturating_sub(MAX_CALLS as u64)) {
                        table
                            .remove(format!("{from}{old:020}").as_str())
                            .map_err(backend)?;
                    }
                }
                let bytes = serde_json::to_vec(call).expect("a call record serialises");
                table
                    .insert(format!("{from}{next:020}").as_str(), bytes.as_slice())
                    .map_err(backend)?;
            }
        }
        txn.commit().map_err(backend)
    }
}

/// Calls being recorded: each caller queues its call, then the first to
/// take the writer commits every call queued (its own among them) and
/// leaves the others their result; a caller whose call an earlier batch
/// took finds its result and returns.
#[derive(Default)]
struct Recording {
    pending: Mutex<Pending>,
    writer: Mutex<()>,
}

#[derive(Default)]
struct Pending {
    next: u64,
    queue: Vec<(u64, String, CallRecord)>,
    /// The results of calls committed in another caller's batch (the
    /// store's error, said).
    done: HashMap<u64, Result<(), String>>,
}

/// One host's database: its prepared summaries stay in its memory.
impl condense_host::prepared::PreparedStore for DbSessions {}

impl SessionStore for DbSessions {
    fn entries(&self, group: &str) -> Result<Vec<StoredCheckpoint>, StoreError> {
        self.rows(TABLE, group)
    }

    fn put(&self, group: &str, entry: &StoredCheckpoint) -> Result<(), StoreError> {
        use redb::ReadableTable;
        let txn = self.db.begin_write().map_err(backend)?;
        {
            let mut table = txn.open_table(TABLE).map_err(backend)?;
            let (from, to) = DbSessions::range(group);
            let mut entries: Vec<StoredCheckpoint> = Vec::new();
            for row in table.range(from.as_str()..to.as_str()).map_err(backend)? {
                let (_, value) = row.map_err(backend)?;
                if let Ok(entry) = serde_json::from_slice(value.value()) {
                    entries.push(entry);
                }
            }
            for id in add(&mut entries, entry) {
                table
                    .remove(format!("{from}{id}").as_str())
                    .map_err(backend)?;
            }
            let bytes = serde_json::to_vec(entry).expect("a checkpoint serialises");
            table
                .insert(format!("{from}{}", entry.id()).as_str(), bytes.as_slice())
                .map_err(backend)?;
        }
        txn.commit().map_err(backend)
    }

    /// One write transaction: the old time read and the new one written
    /// at once (redb has one writer at a time, so two requests at once
    /// each see the other's time or the one before). It is on every
    /// request's path, so it does not wait for the disk ([`quick`]).
    fn touch(&self, group: &str, now_ms: u64) -> Result<Option<u64>, StoreError> {
        let txn = quick(&self.db)?;
        let previous = {
            let mut table = txn.open_table(TOUCHED).map_err(backend)?;
            table
                .insert(group, now_ms)
                .map_err(backend)?
                .map(|old| old.value())
        };
        txn.commit().map_err(backend)?;
        Ok(previous)
    }

    /// The keys are `group \0 …`, sorted: each group once, in order, of
    /// the checkpoints and of the calls.
    fn groups(&self) -> Result<Vec<String>, StoreError> {
        use redb::ReadableDatabase;
        let txn = self.db.begin_read().map_err(backend)?;
        let mut groups = DbSessions::groups_of(&txn, TABLE)?;
        groups.extend(DbSessions::groups_of(&txn, CALLS)?);
        groups.sort();
        groups.dedup();
        Ok(groups)
    }

    /// Committed durably, after the call's answer has passed: a host killed
    /// at any moment has every call it answered on record (and the request
    /// times [`quick`] wrote before). Calls that end together are committed
    /// together ([`Recording`]): one flush to the disk for all of them, so
    /// that a busy proxy is not held to one call per flush.
    fn record_call(&self, group: &str, call: &CallRecord) -> Result<(), StoreError> {
        let id = {
            let mut pending = self
                .recording
                .pending
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let id = pending.next;
            pending.next += 1;
            pending.queue.push((id, group.to_owned(), call.clone()));
            id
        };
        // One batch at a time: the one before may have taken this call.
        let _writer = self
            .recording
            .writer
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let batch = {
            let mut pending = self
                .recording
                .pending
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some(result) = pending.done.remove(&id) {
                return result.map_err(backend);
            }
            std::mem::take(&mut pending.queue)
        };
        let result = self.add_calls(&batch);
        let mut pending = self
            .recording
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let shared = result.as_ref().map(|_| ()).map_err(|e| match e {
            StoreError::Backend { reason, .. } => reason.clone(),
            other => other.to_string(),
        });
        for (other, ..) in batch.iter().filter(|(other, ..)| *other != id) {
            pending.done.insert(*other, shared.clone());
        }
        result
    }

    fn calls(&self, group: &str) -> Result<Vec<CallRecord>, StoreError> {
        self.rows(CALLS, group)
    }

    /// The last key of the group's range: one row read, whatever the
    /// number of calls.
    fn last_call(&self, group: &str) -> Result<Option<CallRecord>, StoreError> {
        use redb::ReadableDatabase;
        let txn = self.db.begin_read().map_err(backend)?;
        let table = match txn.open_table(CALLS) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(backend(e)),
        };
        let (from, to) = DbSessions::range(group);
        let mut rows = table.range(from.as_str()..to.as_str()).map_err(backend)?;
        let last = rows.next_back().transpose().map_err(backend)?;
        Ok(last.and_then(|(_, value)| serde_json::from_slice(value.value()).ok()))
    }
}

/// A write transaction that commits without waiting for the disk: what a
/// request writes on its way (the time of a session's latest request).
/// Such commits reach the file with the next durable one — the call's
/// record once its answer has passed, a checkpoint's `put`, the database
/// closed — so a crash can lose the times of the requests in flight, never
/// a checkpoint or a call answered.
fn quick(db: &redb::Database) -> Result<redb::WriteTransaction, StoreError> {
    let mut txn = db.begin_write().map_err(backend)?;
    txn.set_durability(redb::Durability::None)
        .map_err(backend)?;
    Ok(txn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{
        calls_are_kept_per_group, history, sessions_keep_their_own, touches_are_per_group,
    };
    use crate::group_of;
    use condense_host::formats::Format;

    #[test]
    fn in_the_database_sessions_keep_their_own_checkpoints_across_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoints.redb");
        sessions_keep_their_own(&DbSessions::open(&path).unwrap());
        let reopened = DbSessions::open(&path).unwrap();
        let a = history(&["task", "a1", "a2", "a3", "a4", "a5", "a6"]);
        let group = group_of(Format::OpenAi, "default", None, None, &a);
        assert_eq!(reopened.entries(&group).unwrap().len(), 3);
    }

    #[test]
    fn in_the_database_calls_are_kept_per_group_and_outlive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoints.redb");
        calls_are_kept_per_group(&DbSessions::open(&path).unwrap());
        let reopened = DbSessions::open(&path).unwrap();
        assert_eq!(reopened.calls("g-calls").unwrap().len(), 3);
    }

    /// Calls that end at once are committed together, each once, in its
    /// group, in the order its caller recorded it.
    #[test]
    fn calls_recorded_at_once_are_all_kept_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let store = DbSessions::open(&dir.path().join("checkpoints.redb")).unwrap();
        let (threads, each) = (8, 40);
        std::thread::scope(|scope| {
            for t in 0..threads {
                let store = &store;
                scope.spawn(move || {
                    for i in 0..each {
                        let call = crate::conformance::call_at(i, "m", 1);
                        store.record_call(&format!("g{t}"), &call).unwrap();
                    }
                });
            }
        });
        for t in 0..threads {
            let calls = store.calls(&format!("g{t}")).unwrap();
            let at: Vec<u64> = calls.iter().map(|c| c.at_ms).collect();
            assert_eq!(at, (0..each).collect::<Vec<_>>(), "group g{t}");
        }
    }

    #[test]
    fn in_the_database_touches_are_per_group_and_outlive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("checkpoints.redb");
        touches_are_per_group(&DbSessions::open(&path).unwrap());
        let reopened = DbSessions::open(&path).unwrap();
        let a = history(&["task", "a1", "a2"]);
        let group = group_of(Format::OpenAi, "default", None, None, &a);
        assert_eq!(reopened.touch(&group, 400_000).unwrap(), Some(300_500));
    }
}
