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
//! quiet is dropped: a session that stopped will not compact. So is one
//! whose session compacted since: its plan was for a fold that is gone, and
//! its summary would never be used (with the client's upstream asked, it
//! would cost the client a model call for nothing).

use crate::AgentSetup;
use crate::compress::Job;
use crate::metrics::Metrics;
use condense_host::prepare_body;
use condense_sessions::{Lookup, SessionStore};
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
    /// The fold its latest request stood on, when condense read it.
    stands_on: Option<u32>,
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

    /// Records a request of `group`, which stood on the fold `stands_on`
    /// (its boundary, when condense read it).
    pub fn seen(&self, group: &str, stands_on: Option<u32>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let session = sessions.entry(group.to_owned()).or_insert(Session {
            seen: now,
            planned: None,
            stands_on: None,
        });
        session.seen = now;
        if stands_on.is_some() {
            session.stands_on = stands_on;
        }
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
        agent: &AgentSetup,
        store: Arc<dyn SessionStore>,
        metrics: Arc<Metrics>,
    ) {
        {
            let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            let session = sessions.entry(job.group.clone()).or_insert(Session {
                seen: Instant::now(),
                planned: None,
                stands_on: Some(job.fold),
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
            if preparer.is_gone(&job) {
                metrics.prepare_job("cancelled");
                preparer.forget(&job);
                return;
            }
            let started = Instant::now();
            let run = {
                let job = job.clone();
                tokio::task::spawn_blocking(move || {
                    let mut lookup =
                        Lookup::new(&*store, job.format, &job.agent, job.named.as_deref())
                            .of_tenant(job.tenant.as_deref());
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

    /// Whether `job`'s session went quiet, or compacted since it asked.
    fn is_gone(&self, job: &Job) -> bool {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.get(&job.group).is_none_or(|s| {
            s.seen.elapsed() >= self.quiet || s.stands_on.is_some_and(|fold| fold != job.fold)
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use condense_host::formats::Format;

    fn job(fold: u32) -> Job {
        Job {
            body: bytes::Bytes::new(),
            format: Format::Anthropic,
            agent: "default".into(),
            group: "s".into(),
            named: None,
            tenant: None,
            fold,
            model: None,
        }
    }

    /// A job is run only while its session is live and still stands on the
    /// fold it was planned for.
    #[test]
    fn a_job_of_a_session_that_went_quiet_or_compacted_is_gone() {
        let preparer = Preparer::new(1, Duration::from_secs(600));
        preparer.seen("s", Some(5));
        assert!(!preparer.is_gone(&job(5)));
        // A request condense did not read says nothing of the fold.
        preparer.seen("s", None);
        assert!(!preparer.is_gone(&job(5)));
        preparer.seen("s", Some(9));
        assert!(preparer.is_gone(&job(5)));
        assert!(!preparer.is_gone(&job(9)));
        let quiet = Preparer::new(1, Duration::ZERO);
        quiet.seen("s", Some(9));
        assert!(quiet.is_gone(&job(9)));
        assert!(preparer.is_gone(&Job {
            group: "unknown".into(),
            ..job(9)
        }));
    }
}
