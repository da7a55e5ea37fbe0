//! Summaries prepared ahead: what a compaction's summarizer request gets
//! when the summary was written before the request that needs it.
//!
//! The compressor plans the next compaction's cut once a request passes its
//! soft mark and says so (`prepare.due`); the host then calls it again on
//! that request, in the background, with `prepare.preparing` true, and the
//! summary the chain writes for that call is kept here, keyed by the exact
//! summarizer request (the previous summary, the messages, the budget, the
//! language, the settings), the chain that wrote it, and its scope: the
//! session it was written for and whatever else shaped it (a client's own
//! model, system prompt, tools and key). A summary is used only by the
//! session it was prepared for, never by another whose fold looks the
//! same: that one may belong to someone else, who must neither read it nor
//! have theirs written under another person's key and instructions. When the compaction
//! comes, the compressor asks the same request, and [`Prepared::take`]
//! answers it: at once when the summary is kept, after a bounded wait when
//! its job is still running here, or not at all (the chain runs as it
//! would have).
//!
//! In the proxy ([`Prepared::without_waiting`]) a compaction never waits for
//! the model longer than the bound: when no summary is kept for it, it takes the chain's last summarizer's (the
//! deterministic fallback, at once) as a stand-in, and the model's summary
//! of the same request is written in the background
//! ([`PreparedUse::Later`]). The next compaction, which continues the
//! stand-in (its request's `previous_summary`), has the chain continue the
//! model's summary instead ([`Prepared::upgraded`]): the model's words come
//! in at the next fold, which breaks the cache anyway, and no call waits
//! for them.
//!
//! Kept in this process, and in a [`SessionStore`] when one is given (Redis:
//! another host behind the same store uses a summary this one prepared).

use crate::convert::wit;
use crate::timing::Clock;
use condense_model::hash::{chain, message_digest};
use condense_model::{Message, Role};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Summaries kept in this process at most (the oldest go first): one per
/// session about to compact.
const KEPT: usize = 4_096;

/// Models' summaries written at once in the background for compactions
/// that could not wait for them; past it a compaction keeps its stand-in.
const LATER_JOBS: usize = 8;

/// Where prepared summaries are kept for other hosts: a session store
/// shared by hosts (`condense_sessions`: Redis) keeps them; a store
/// of one host keeps none (the host keeps them in memory). Errors are said,
/// never a reason to fail: a summary not found is written again.
pub trait PreparedStore: Send + Sync {
    /// The summary prepared ahead under `key`, if this store keeps them.
    fn prepared(&self, _key: &str) -> Result<Option<String>, String> {
        Ok(None)
    }
    /// Keeps `summary` under `key` for [`PreparedStore::prepared`].
    fn keep_prepared(&self, _key: &str, _summary: &str) -> Result<(), String> {
        Ok(())
    }
}

/// Prepared summaries, shared by every call of a host.
pub struct Prepared {
    /// How long a compaction waits for a job still running.
    wait: Duration,
    /// What that wait is measured on.
    clock: Clock,
    kept: Mutex<Kept>,
    running: Mutex<HashMap<u128, Arc<Running>>>,
    store: Option<Arc<dyn PreparedStore>>,
    /// A stand-in's key ([`stand_in_key`]) → the key of the request whose
    /// model summary replaces it.
    stand_ins: Mutex<HashMap<u128, u128>>,
    /// Background writers running ([`Prepared::later_slot`]).
    later: Arc<AtomicUsize>,
    /// Whether a compaction whose summary is not ready takes a stand-in
    /// ([`Prepared::without_waiting`]).
    stand_in_when_missing: bool,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("wait", &self.wait)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Kept {
    summaries: HashMap<u128, String>,
    order: VecDeque<u128>,
}

/// A job writing a summary, which a compaction may wait for.
#[derive(Default)]
struct Running {
    done: Mutex<bool>,
    finished: Condvar,
}

/// How a compaction's summary came, when summaries are prepared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "prepared")]
pub enum PreparedUse {
    /// Prepared ahead, kept: used at once.
    Used,
    /// Its job was still running: waited for it this long, and used it.
    Waited { waited_ms: u64 },
    /// The compaction folded past its plan: the prepared summary served the
    /// plan's part, and the chain wrote the rest on top of it.
    OnTop,
    /// None was ready (no job, or its job ran past the wait): the chain's
    /// last summarizer wrote this compaction's summary at once, and the
    /// model's is written in the background, to be continued by the next
    /// compaction in its place.
    Later {
        #[serde(skip_serializing_if = "Option::is_none")]
        waited_ms: Option<u64>,
    },
    /// None was kept, or its job failed or ran past the wait, and no
    /// background writer was free (or the chain has one summarizer): the
    /// chain wrote the summary, as without preparation.
    FellBack {
        #[serde(skip_serializing_if = "Option::is_none")]
        waited_ms: Option<u64>,
    },
}

impl PreparedUse {
    pub fn name(&self) -> &'static str {
        match self {
            PreparedUse::Used => "used",
            PreparedUse::Waited { .. } => "waited",
            PreparedUse::OnTop => "on_top",
            PreparedUse::Later { .. } => "later",
            PreparedUse::FellBack { .. } => "fell_back",
        }
    }
}

/// The key of a summarizer request for the chain `chain` (its labels and
/// settings: another chain writes another summary) in `scope` (whose
/// session, and what else shapes its summaries: [`Scope`]).
pub(crate) fn key(request: &wit::SummaryRequest, chain_id: &str, scope: &Scope) -> u128 {
    // Each free-form field behind its length: no two scopes or chains
    // run into each other.
    let head = Message::text(
        Role::System,
        format!(
            "{}:{chain_id}\n{}:{}\n{:032x}\n{}\n{}\n{}\n{}",
            chain_id.len(),
            scope.owner.as_deref().map_or(0, str::len),
            scope.owner.as_deref().unwrap_or(""),
            scope.shaped_by.unwrap_or(0),
            request.max_tokens,
            request.language,
            request.settings,
            request.previous_summary
        ),
    );
    let messages: Vec<Message> = request.messages.iter().cloned().map(Into::into).collect();
    chain(message_digest(&head), &messages)
}

/// The key under which a summary `text` of `scope`, written by the chain
/// `chain_id` as a stand-in, names the request whose model summary
/// replaces it ([`Prepared::stand_in`]).
pub(crate) fn stand_in_key(text: &str, chain_id: &str, scope: &Scope) -> u128 {
    let request = wit::SummaryRequest {
        previous_summary: text.to_owned(),
        messages: Vec::new(),
        max_tokens: 0,
        language: String::new(),
        settings: "stand-in".into(),
    };
    key(&request, chain_id, scope)
}

/// Who a prepared summary is for: the key keeps it to them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    /// The session it is written for (a session store's group, which
    /// names the client's tenant behind a proxy); `None`: the host keeps
    /// one session.
    pub owner: Option<Arc<str>>,
    /// A digest of what, besides the request, shaped it: the summarizer's
    /// model's context ([`crate::llm::LanguageModel::shaped_by`]).
    pub shaped_by: Option<u128>,
}

impl Prepared {
    /// Prepared summaries kept in this process, and in `store` when given;
    /// a compaction waits up to `wait` for one still being written.
    pub fn new(wait: Duration, store: Option<Arc<dyn PreparedStore>>) -> Prepared {
        Prepared {
            wait,
            clock: Clock::system(),
            kept: Mutex::default(),
            running: Mutex::default(),
            store,
            stand_ins: Mutex::default(),
            later: Arc::default(),
            stand_in_when_missing: false,
        }
    }

    /// These summaries, a compaction whose summary is not ready taking the
    /// chain's fallback's at once and having the model's written in the
    /// background for the next compaction ([`PreparedUse::Later`]): the
    /// proxy's way, where no call waits for a model's summary. Without it a
    /// compaction writes what it does not find with the whole chain, and
    /// makes the very request it would have made without preparation.
    pub fn without_waiting(self) -> Prepared {
        Prepared {
            stand_in_when_missing: true,
            ..self
        }
    }

    /// Whether a compaction takes a stand-in for a summary not ready
    /// ([`Prepared::without_waiting`]).
    pub fn stands_in(&self) -> bool {
        self.stand_in_when_missing
    }

    /// These summaries, the wait measured on `clock` (real time unless a
    /// test gives its own).
    pub fn with_clock(self, clock: Clock) -> Prepared {
        Prepared { clock, ..self }
    }

    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// The summary kept for `key`, here or in the store.
    pub fn get(&self, key: u128) -> Option<String> {
        if let Some(text) = self.kept.lock().expect("kept").summaries.get(&key) {
            return Some(text.clone());
        }
        let store = self.store.as_ref()?;
        match store.prepared(&store_key(key)) {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!("prepared summaries: {e}");
                None
            }
        }
    }

    /// Keeps `summary` for `key`, here and in the store.
    pub fn keep(&self, key: u128, summary: &str) {
        {
            let mut kept = self.kept.lock().expect("kept");
            if kept.summaries.insert(key, summary.to_owned()).is_none() {
                kept.order.push_back(key);
            }
            while kept.order.len() > KEPT {
                let oldest = kept.order.pop_front().expect("not empty");
                kept.summaries.remove(&oldest);
            }
        }
        if let Some(store) = &self.store
            && let Err(e) = store.keep_prepared(&store_key(key), summary)
        {
            tracing::warn!("prepared summaries: {e}");
        }
    }

    /// Whether a job is writing the summary of `key` in this process.
    pub fn is_running(&self, key: u128) -> bool {
        self.running.lock().expect("running").contains_key(&key)
    }

    /// Records that the summary of stand-in key `stand_in` was written in
    /// place of the model's summary of the request `key`, here and in the
    /// store (another host may make the next compaction).
    pub fn stand_in(&self, stand_in: u128, key: u128) {
        {
            let mut stand_ins = self.stand_ins.lock().expect("stand-ins");
            if stand_ins.len() >= KEPT {
                stand_ins.clear();
            }
            stand_ins.insert(stand_in, key);
        }
        if let Some(store) = &self.store
            && let Err(e) = store.keep_prepared(&stand_in_store_key(stand_in), &store_key(key))
        {
            tracing::warn!("prepared summaries: {e}");
        }
    }

    /// The model's summary that the stand-in of key `stand_in` was written
    /// in place of, once it is written.
    pub fn upgraded(&self, stand_in: u128) -> Option<String> {
        let key = self
            .stand_ins
            .lock()
            .expect("stand-ins")
            .get(&stand_in)
            .copied();
        let key = match (key, &self.store) {
            (Some(key), _) => key,
            (None, Some(store)) => match store.prepared(&stand_in_store_key(stand_in)) {
                Ok(found) => u128::from_str_radix(&found?, 16).ok()?,
                Err(e) => {
                    tracing::warn!("prepared summaries: {e}");
                    return None;
                }
            },
            (None, None) => return None,
        };
        self.get(key)
    }

    /// A place for one more background writer, held until dropped; `None`
    /// when [`LATER_JOBS`] are running.
    pub fn later_slot(&self) -> Option<LaterSlot> {
        let taken = self
            .later
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < LATER_JOBS).then_some(n + 1)
            })
            .is_ok();
        taken.then(|| LaterSlot(self.later.clone()))
    }

    /// Marks `key` as being written until the guard is dropped, so that a
    /// compaction asking for it meanwhile waits for it.
    pub fn begin(self: &Arc<Self>, key: u128) -> Writing {
        let running = Arc::new(Running::default());
        self.running
            .lock()
            .expect("running")
            .insert(key, running.clone());
        Writing {
            prepared: self.clone(),
            key,
            running,
        }
    }

    /// What a compaction gets for `key`: the kept summary; or, while its
    /// job runs here, the summary once written, waiting at most the bound;
    /// or nothing. Also how it went.
    pub fn take(&self, key: u128) -> (Option<String>, PreparedUse) {
        if let Some(text) = self.get(key) {
            return (Some(text), PreparedUse::Used);
        }
        let running = self.running.lock().expect("running").get(&key).cloned();
        let Some(running) = running else {
            return (None, PreparedUse::FellBack { waited_ms: None });
        };
        let started = self.clock.now();
        let done = running.done.lock().expect("done");
        let _done = self
            .clock
            .wait_timeout_while(&running.finished, done, self.wait, |done| !*done);
        let waited_ms = self.clock.now().duration_since(started).as_millis() as u64;
        match self.get(key) {
            Some(text) => (Some(text), PreparedUse::Waited { waited_ms }),
            None => (
                None,
                PreparedUse::FellBack {
                    waited_ms: Some(waited_ms),
                },
            ),
        }
    }
}

/// A summary being written ([`Prepared::begin`]).
pub struct Writing {
    prepared: Arc<Prepared>,
    key: u128,
    running: Arc<Running>,
}

impl Drop for Writing {
    fn drop(&mut self) {
        *self.running.done.lock().expect("done") = true;
        self.running.finished.notify_all();
        let mut running = self.prepared.running.lock().expect("running");
        if running
            .get(&self.key)
            .is_some_and(|r| Arc::ptr_eq(r, &self.running))
        {
            running.remove(&self.key);
        }
    }
}

fn store_key(key: u128) -> String {
    format!("{key:032x}")
}

fn stand_in_store_key(key: u128) -> String {
    format!("stand-in:{key:032x}")
}

/// A background writer's place ([`Prepared::later_slot`]).
pub struct LaterSlot(Arc<AtomicUsize>);

impl Drop for LaterSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::ManualClock;

    fn request(text: &str) -> wit::SummaryRequest {
        wit::SummaryRequest {
            previous_summary: String::new(),
            messages: vec![(&Message::text(Role::User, text)).into()],
            max_tokens: 100,
            language: "en".into(),
            settings: "{}".into(),
        }
    }

    #[test]
    fn a_compaction_gets_what_was_prepared_for_its_exact_request() {
        let prepared = Arc::new(Prepared::new(Duration::from_millis(50), None));
        let any = Scope::default();
        let (a, b) = (
            key(&request("a"), "chain", &any),
            key(&request("b"), "chain", &any),
        );
        assert_ne!(a, b);
        assert_ne!(a, key(&request("a"), "another chain", &any));
        prepared.keep(a, "summary of a");
        assert_eq!(
            prepared.take(a),
            (Some("summary of a".into()), PreparedUse::Used)
        );
        assert_eq!(
            prepared.take(b),
            (None, PreparedUse::FellBack { waited_ms: None })
        );
    }

    /// The same fold in two sessions, or for two clients of one session
    /// (their own model, system prompt, tools or key), is two summaries.
    #[test]
    fn a_summary_is_kept_for_its_own_session_and_its_own_model() {
        let a = Scope {
            owner: Some("default/k1/anthropic/aa".into()),
            shaped_by: Some(7),
        };
        let other_session = Scope {
            owner: Some("default/k2/anthropic/aa".into()),
            ..a.clone()
        };
        let other_model = Scope {
            shaped_by: Some(8),
            ..a.clone()
        };
        let k = |scope: &Scope| key(&request("a"), "chain", scope);
        assert_eq!(k(&a), k(&a.clone()));
        assert_ne!(k(&a), k(&other_session));
        assert_ne!(k(&a), k(&other_model));
        assert_ne!(k(&a), k(&Scope::default()));
        // The owner and the chain cannot run into each other.
        assert_ne!(
            key(
                &request("a"),
                "x",
                &Scope {
                    owner: Some("y".into()),
                    shaped_by: None
                }
            ),
            key(&request("a"), "x\n1:y", &Scope::default())
        );
    }

    /// A stand-in names the request whose model summary replaces it, for
    /// its scope and chain only; once that summary is kept, it is what the
    /// stand-in is upgraded to.
    #[test]
    fn a_stand_in_is_upgraded_to_the_models_summary_once_written() {
        let prepared = Prepared::new(Duration::ZERO, None).without_waiting();
        assert!(prepared.stands_in());
        assert!(!Prepared::new(Duration::ZERO, None).stands_in());
        let scope = Scope {
            owner: Some("s1".into()),
            shaped_by: None,
        };
        let k = key(&request("the fold"), "chain", &scope);
        let stand_in = stand_in_key("the fallback's summary", "chain", &scope);
        assert_ne!(
            stand_in,
            stand_in_key("the fallback's summary", "other", &scope)
        );
        assert_ne!(
            stand_in,
            stand_in_key("the fallback's summary", "chain", &Scope::default())
        );
        prepared.stand_in(stand_in, k);
        // Not written yet: nothing to continue but the stand-in.
        assert_eq!(prepared.upgraded(stand_in), None);
        prepared.keep(k, "the model's summary");
        assert_eq!(
            prepared.upgraded(stand_in).as_deref(),
            Some("the model's summary")
        );
        let other = stand_in_key("another summary", "chain", &scope);
        assert_eq!(prepared.upgraded(other), None);
    }

    /// At most `LATER_JOBS` writers at once; a place comes back when its
    /// writer is done.
    #[test]
    fn background_writers_are_bounded() {
        let prepared = Prepared::new(Duration::ZERO, None);
        let slots: Vec<LaterSlot> = (0..LATER_JOBS)
            .map_while(|_| prepared.later_slot())
            .collect();
        assert_eq!(slots.len(), LATER_JOBS);
        assert!(prepared.later_slot().is_none());
        drop(slots);
        assert!(prepared.later_slot().is_some());
    }

    #[test]
    fn a_compaction_waits_for_a_running_job_up_to_the_bound() {
        let clock = ManualClock::new();
        let prepared =
            Arc::new(Prepared::new(Duration::from_secs(5), None).with_clock(Clock::manual(&clock)));
        let k = key(&request("a"), "chain", &Scope::default());
        let writing = prepared.begin(k);
        // The job is done 70 ms into the compaction's wait.
        let writer = {
            let (prepared, clock) = (prepared.clone(), clock.clone());
            std::thread::spawn(move || {
                clock.until_waited_on();
                clock.advance(Duration::from_millis(70));
                prepared.keep(k, "written");
                drop(writing);
            })
        };
        let taken = prepared.take(k);
        assert_eq!(
            taken,
            (
                Some("written".into()),
                PreparedUse::Waited { waited_ms: 70 }
            )
        );
        writer.join().unwrap();
        // A job that does not finish in time: the compaction goes on once
        // the bound has passed.
        let clock = ManualClock::skipping_waits();
        let prepared = Arc::new(
            Prepared::new(Duration::from_millis(100), None).with_clock(Clock::manual(&clock)),
        );
        let _stuck = prepared.begin(k);
        assert_eq!(
            prepared.take(k),
            (
                None,
                PreparedUse::FellBack {
                    waited_ms: Some(100)
                }
            )
        );
    }
}
