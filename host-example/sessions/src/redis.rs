//! [`SessionStore`] in Redis or Valkey: several hosts (proxies behind one
//! load balancer) share their sessions, so a session served by one and then
//! by another keeps its checkpoint and its cached prefix.
//!
//! A group is one hash, `condense:<group>`: field [`StoredCheckpoint::id`],
//! value the entry as JSON (the embedded database's layout). Each `put`
//! refreshes the hash's expiry ([`EXPIRY_SECS`]), so the sessions nobody
//! continues go away by themselves.
//!
//! A group's latest request ([`SessionStore::touch`]) is one string,
//! `condense-touched:<group>`, ms since the Unix epoch, set and read back in
//! one `SET … GET` (Redis 6.2 or later, or Valkey; an older server fails the
//! call) with an expiry of its own ([`TOUCH_EXPIRY_SECS`]). Every host
//! sharing the server sets it, so each sees how long ago any of them served
//! the session.
//!
//! A group's calls ([`SessionStore::record_call`]) are one list,
//! `condense-calls:<group>`, oldest first, trimmed to [`MAX_CALLS`] and
//! expiring with the checkpoints.
//!
//! Every call is bounded by [`TIMEOUT`]: a server that is down or slow makes
//! a lookup fail fast, and the host fails open (the request goes on as the
//! client sent it) rather than keep the request waiting.

use super::calls::CallRecord;
use super::{MAX_CALLS, MAX_PER_GROUP, SessionStore, StoredCheckpoint, add};
use condense_host::store::StoreError;
use std::sync::Mutex;
use std::time::Duration;

/// The bound on connecting to the server and on each reply.
pub const TIMEOUT: Duration = Duration::from_millis(500);

/// How long a group nobody adds to is kept: 30 days.
pub const EXPIRY_SECS: u64 = 30 * 24 * 3600;

/// How long a group's latest request time is kept: a day. The longest
/// prompt cache (an hour) has expired long before, so a session idle for
/// longer is cold whatever time was kept: forgetting it loses nothing (its
/// next `touch` returns `None`, as for a session never seen), and the
/// server does not keep a key for every session it ever served.
pub const TOUCH_EXPIRY_SECS: u64 = 24 * 3600;

/// How long a summary prepared ahead is kept ([`SessionStore::keep_prepared`]).
pub const PREPARED_EXPIRY_SECS: u64 = 3600;

/// Idle connections kept for the next calls; more calls at once open more.
const IDLE: usize = 16;

/// Checkpoints in a Redis or Valkey server.
pub struct RedisSessions {
    client: redis::Client,
    /// Where, for messages: the URL without its password.
    shown: String,
    /// Connections between calls. A pool of its own rather than r2d2's,
    /// whose `get` against a server that is down waits out its whole
    /// timeout retrying, where a refused connection should fail at once.
    idle: Mutex<Vec<redis::Connection>>,
}

impl std::fmt::Debug for RedisSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessions")
            .field("server", &self.shown)
            .finish_non_exhaustive()
    }
}

/// `url` with any password in it replaced by `***`.
fn shown(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

impl RedisSessions {
    /// The store at `url` (`redis://[user:password@]host[:port][/db]`; the
    /// client is built without TLS). Checks the URL only: a server that is
    /// down now is a store that fails open until it is up.
    pub fn open(url: &str) -> Result<RedisSessions, StoreError> {
        let shown = shown(url);
        let client = redis::Client::open(url).map_err(|e| StoreError::Backend {
            store: "redis",
            reason: format!("{shown}: {e}"),
        })?;
        Ok(RedisSessions {
            client,
            shown,
            idle: Mutex::new(Vec::new()),
        })
    }

    /// The server without its password, for messages.
    pub fn server(&self) -> &str {
        &self.shown
    }

    /// Whether the server answers now.
    pub fn ping(&self) -> Result<(), StoreError> {
        self.with(|con| redis::cmd("PING").query::<String>(con).map(drop))
    }

    fn error(&self, e: redis::RedisError) -> StoreError {
        StoreError::Backend {
            store: "redis",
            reason: format!("{}: {e}", self.shown),
        }
    }

    /// Runs `call` on an idle connection or a new one; a connection that
    /// failed is dropped, not kept.
    fn with<T>(
        &self,
        call: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut con = match idle {
            Some(con) => con,
            None => {
                let con = self
                    .client
                    .get_connection_with_timeout(TIMEOUT)
                    .map_err(|e| self.error(e))?;
                con.set_read_timeout(Some(TIMEOUT))
                    .and_then(|()| con.set_write_timeout(Some(TIMEOUT)))
                    .map_err(|e| self.error(e))?;
                con
            }
        };
        let out = call(&mut con).map_err(|e| self.error(e))?;
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < IDLE {
            idle.push(con);
        }
        Ok(out)
    }
}

/// What every group's checkpoint hash is named with, before the group.
const KEY_PREFIX: &str = "condense:";

fn key(group: &str) -> String {
    format!("{KEY_PREFIX}{group}")
}

/// The key of a group's latest request time (for an operator looking at
/// the server): a prefix of its own, not a suffix to [`key`]. A client
/// names its session (`x-condense-session`), so `condense:<group>:touched`
/// could be another group's checkpoint hash; no group's [`key`] starts
/// `condense-`.
pub fn touched_key(group: &str) -> String {
    format!("condense-touched:{group}")
}

/// The key of a group's calls (a list, oldest first): a prefix of its
/// own, like [`touched_key`].
pub fn calls_key(group: &str) -> String {
    format!("{CALLS_PREFIX}{group}")
}

const CALLS_PREFIX: &str = "condense-calls:";

/// The key of a summary prepared ahead: a prefix of its own, like
/// [`touched_key`].
fn prepared_key(key: &str) -> String {
    format!("condense-prepared:{key}")
}

/// Values as JSON (a hash's entries, a list's calls); one this condense
/// cannot read is skipped, never an error.
fn parse<T: serde::de::DeserializeOwned>(values: Vec<Vec<u8>>) -> Vec<T> {
    values
        .iter()
        .filter_map(|v| serde_json::from_slice(v).ok())
        .collect()
}

/// PreparedStore by every host behind the server.
impl condense_host::prepared::PreparedStore for RedisSessions {
    fn prepared(&self, key: &str) -> Result<Option<String>, String> {
        self.with(|con| redis::cmd("GET").arg(prepared_key(key)).query(con))
            .map_err(|e| e.to_string())
    }

    /// Kept an hour: a summary is prepared for a compaction a few calls
    /// away, and a session quiet longer starts a new plan.
    fn keep_prepared(&self, key: &str, summary: &str) -> Result<(), String> {
        self.with(|con| {
            redis::cmd("SET")
                .arg(prepared_key(key))
                .arg(summary)
                .arg("EX")
                .arg(PREPARED_EXPIRY_SECS)
                .query(con)
        })
        .map_err(|e| e.to_string())
    }
}

impl SessionStore for RedisSessions {
    fn entries(&self, group: &str) -> Result<Vec<StoredCheckpoint>, StoreError> {
        let values = self.with(|con| redis::cmd("HVALS").arg(key(group)).query(con))?;
        Ok(parse(values))
    }

    fn put(&self, group: &str, entry: &StoredCheckpoint) -> Result<(), StoreError> {
        let key = key(group);
        let bytes = serde_json::to_vec(entry).expect("a checkpoint serialises");
        self.with(|con| {
            let (len,): (usize,) = redis::pipe()
                .atomic()
                .cmd("HSET")
                .arg(&key)
                .arg(entry.id())
                .arg(bytes)
                .ignore()
                .cmd("EXPIRE")
                .arg(&key)
                .arg(EXPIRY_SECS)
                .ignore()
                .cmd("HLEN")
                .arg(&key)
                .query(con)?;
            if len <= MAX_PER_GROUP {
                return Ok(());
            }
            // Past the bound: drop the oldest. Two hosts pruning at once
            // may both drop an entry; deleting it twice is deleting it.
            let mut entries = parse(redis::cmd("HVALS").arg(&key).query(con)?);
            let dropped = add(&mut entries, entry);
            if !dropped.is_empty() {
                redis::cmd("HDEL").arg(&key).arg(dropped).query::<()>(con)?;
            }
            Ok(())
        })
    }

    /// One atomic round trip: `SET key now EX … GET` writes the new time and
    /// answers the old one, so two hosts serving the session at once each
    /// see the other's time or the one before, never the same one twice.
    fn touch(&self, group: &str, now_ms: u64) -> Result<Option<u64>, StoreError> {
        let previous: Option<String> = self.with(|con| {
            redis::cmd("SET")
                .arg(touched_key(group))
                .arg(now_ms)
                .arg("EX")
                .arg(TOUCH_EXPIRY_SECS)
                .arg("GET")
                .query(con)
        })?;
        // A value this condense did not write (not a number) is no time.
        Ok(previous.and_then(|v| v.parse().ok()))
    }

    /// `SCAN`, never `KEYS`: a server shared with other work is not held
    /// up while its keys are listed. The groups are those of the
    /// checkpoint hashes and of the call lists.
    fn groups(&self) -> Result<Vec<String>, StoreError> {
        let mut groups = Vec::new();
        for prefix in [KEY_PREFIX, CALLS_PREFIX] {
            let keys: Vec<String> = self.with(|con| {
                let mut keys = Vec::new();
                let mut cursor: u64 = 0;
                loop {
                    let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                        .arg(cursor)
                        .arg("MATCH")
                        .arg(format!("{prefix}*"))
                        .arg("COUNT")
                        .arg(500)
                        .query(con)?;
                    keys.extend(batch);
                    if next == 0 {
                        return Ok(keys);
                    }
                    cursor = next;
                }
            })?;
            groups.extend(
                keys.iter()
                    .filter_map(|k| k.strip_prefix(prefix).map(str::to_owned)),
            );
        }
        groups.sort();
        groups.dedup();
        Ok(groups)
    }

    /// One atomic pipeline: pushed, trimmed to [`MAX_CALLS`], its expiry
    /// refreshed like a checkpoint hash's.
    fn record_call(&self, group: &str, call: &CallRecord) -> Result<(), StoreError> {
        let key = calls_key(group);
        let bytes = serde_json::to_vec(call).expect("a call record serialises");
        self.with(|con| {
            redis::pipe()
                .atomic()
                .cmd("RPUSH")
                .arg(&key)
                .arg(bytes)
                .ignore()
                .cmd("LTRIM")
                .arg(&key)
                .arg(-(MAX_CALLS as i64))
                .arg(-1)
                .ignore()
                .cmd("EXPIRE")
                .arg(&key)
                .arg(EXPIRY_SECS)
                .ignore()
                .query::<()>(con)
        })
    }

    fn calls(&self, group: &str) -> Result<Vec<CallRecord>, StoreError> {
        let values: Vec<Vec<u8>> = self.with(|con| {
            redis::cmd("LRANGE")
                .arg(calls_key(group))
                .arg(0)
                .arg(-1)
                .query(con)
        })?;
        Ok(parse(values))
    }

    /// One element, not the list: the proxy reads it on every call.
    fn last_call(&self, group: &str) -> Result<Option<CallRecord>, StoreError> {
        let value: Option<Vec<u8>> = self.with(|con| {
            redis::cmd("LINDEX")
                .arg(calls_key(group))
                .arg(-1)
                .query(con)
        })?;
        Ok(value.and_then(|v| serde_json::from_slice(&v).ok()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_never_shown() {
        assert_eq!(
            shown("redis://user:secret@db.internal:6380/2"),
            "redis://***@db.internal:6380/2"
        );
        assert_eq!(shown("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        let error = RedisSessions::open("redis://:secret@[bad").unwrap_err();
        assert!(!error.to_string().contains("secret"), "{error}");
    }

    #[test]
    fn a_server_that_is_down_fails_at_once() {
        // A port nothing listens on: refused, not waited for.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let store = RedisSessions::open(&format!("redis://127.0.0.1:{port}")).unwrap();
        let error = store.entries("g").unwrap_err();
        assert!(error.to_string().contains("redis"), "{error}");
        assert!(store.ping().is_err());
    }
}
