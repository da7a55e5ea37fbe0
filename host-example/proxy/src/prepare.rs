//! Summaries prepared ahead, in the proxy: when a request's compression
//! says its session passed the compressor's soft mark
//! (`HostReport::prepare_due`), the proxy prepares that session's next
//! summary in the background ([`condense_host::prepare_body`]) on a bounded
//! pool, so that the compaction that comes a few requests later finds it
//! written (kept by the agent's middleware, and in the session store when
//! that is shared: another proxy behind the same Redis finds it too).
//!
//! At most one job per session, and one per cycle of it (the fold it
//! stands on: a job that prepared the plan of a fold is not run again until
//! the session compacts). A job whose turn comes after its session went
//! quiet is dropped: a session that stopped will not compact.

use crate::Agent;
use crate::compress::Job;
use crate::metrics::Metrics;
use condense_host::prepare_body;
use condense_host::sessions::{Lookup, SessionStore};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Sessions remembered at most; the longest quiet go first.
const SESSIONS: usize = 10_000;

/// The background pool and what it knows of each session.
pub struct Preparer {
    slots: Arc<Semaphore>,
    quiet: Duration,
    sessions: Mutex<HashMap<String, Session>>,
}

#[derive(Clone, Copy, Debug)]
struct Session {
    /// When its latest request came.
    seen: Instant,
    /// The fold (its boundary) of the latest job queued, running or done.
    planned: Option<u32>,
}

impl Preparer {
    /// A pool of `jobs` at once; a job whose session has sent nothing for
    /// `quiet` when its turn comes is dropped.
    pub fn new(jobs: usize, quiet: Duration) -> Preparer {
        Preparer {
            slots: Arc::new(Semaphore::new(jobs.max(1))),
            quiet,
            sessions: Mutex::default(),
        }
    }

    /// Records a request of `group`.
    pub fn seen(&self, group: &str) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        sessions
            .entry(group.to_owned())
            .and_modify(|s| s.seen = now)
            .or_insert(Session {
                seen: now,
                planned: None,
            });
        if sessions.len() > SESSIONS {
            let quiet = self.quiet;
            sessions.retain(|_, s| now.duration_since(s.seen) < quiet);
        }
    }

    /// Starts `job` in the background, unless its session has one for this
    /// fold already.
    pub fn start(
        self: &Arc<Self>,
        job: Job,
        agent: &Agent,
        store: Arc<dyn SessionStore>,
        metrics: Arc<Metrics>,
    ) {
        {
            let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            let session = sessions.entry(job.group.clone()).or_insert(Session {
                seen: Instant::now(),
                planned: None,
            });
            if session.planned == Some(job.fold) {
                return;
            }
            session.planned = Some(job.fold);
        }
        let (preparer, models) = (self.clone(), agent.models.clone());
        let middleware = match &job.model {
            Some(model) => Arc::new(agent.middleware.asking(model.clone())),
            None => agent.middleware.clone(),
        };
        tokio::spawn(async move {
            let _slot = preparer
                .slots
                .clone()
                .acquire_owned()
                .await
                .expect("the slots are never closed");
            if preparer.is_quiet(&job.group) {
                metrics.prepare_job("cancelled");
                preparer.forget(&job);
                return;
            }
            let started = Instant::now();
            let run = {
                let job = job.clone();
                tokio::task::spawn_blocking(move || {
                    let mut lookup =
                        Lookup::new(&*store, job.format, &job.agent, job.named.as_deref());
                    prepare_body(
                        &middleware,
                        &job.body,
                        Some(job.format),
                        &mut lookup,
                        |model| &models.for_model(model).config,
                    )
                })
            };
            let result = match run.await {
                Ok(Ok(true)) => "prepared",
                Ok(Ok(false)) => "nothing",
                Ok(Err(e)) => {
                    tracing::warn!(target: "condense::proxy", session = %job.group, "cannot prepare a summary: {e}");
                    "failed"
                }
                Err(e) => {
                    tracing::warn!(target: "condense::proxy", session = %job.group, "the prepare task failed: {e}");
                    "failed"
                }
            };
            tracing::info!(
                target: "condense::proxy",
                session = %job.group,
                result,
                ms = started.elapsed().as_millis() as u64,
                "summary prepared ahead"
            );
            metrics.prepare_job(result);
            if result == "failed" {
                // The next request of the session tries again.
                preparer.forget(&job);
            }
        });
    }

    fn is_quiet(&self, group: &str) -> bool {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions
            .get(group)
            .is_none_or(|s| s.seen.elapsed() >= self.quiet)
    }

    /// Lets a later request of `job`'s session start its job again.
    fn forget(&self, job: &Job) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(session) = sessions.get_mut(&job.group)
            && session.planned == Some(job.fold)
        {
            session.planned = None;
        }
    }
}
