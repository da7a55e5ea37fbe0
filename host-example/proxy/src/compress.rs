//! The request body through condense, on tokio's blocking pool (a compress
//! call is CPU work and, with the LLM summarizer, a model call), at most
//! [`Proxy::compress_slots`](crate::Proxy::compress_slots) at once.
//!
//! Fail-open: a body condense cannot read, a store that cannot be read, a
//! component that fails, a task that panics — each forwards the original
//! body, byte for byte, and says why in the [`Outcome`]. So does a body
//! condense kept whole: the client's own bytes go on until a compaction, and
//! one with nothing to compress (a Responses request whose conversation the
//! server holds).
//!
//! A request condense gave the `condense_recall` tool (its compressed body
//! names handles) comes with what the recall loop needs to answer the
//! model's calls ([`crate::recall::Recalling`]): the client's own history,
//! from compress_body's one reading of the body as the client sent it, the
//! only history its handles resolve against.

use crate::AgentSetup;
use crate::recall::Recalling;
use crate::route::Route;
use crate::summary::ClientModel;
use crate::upstream::Upstream;
use bytes::Bytes;
use condense_config::pricing::ModelPrice;
use condense_host::events::Compaction;
use condense_host::formats::Format;
use condense_host::{BodyError, Status, compress_body_for};
use condense_sessions::{Lookup, SessionStore};
use serde::Serialize;
use std::fmt;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// What condense did to one request.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Not a request condense compresses (another path).
    NotCompressed,
    /// Compressed: tokens before and after, and the compaction if this
    /// request compacted (a new fold: one cache break of its session) rather
    /// than reuse the session's checkpoint.
    Compressed {
        before: u32,
        after: u32,
        compacted: Option<Box<Compacted>>,
    },
    /// Read and kept whole (under the threshold).
    Unchanged,
    /// Forwarded unchanged because something failed: why, and whether the
    /// session's checkpoint had been found (then the unchanged request breaks
    /// its cached prefix).
    FailedOpen {
        why: FailedOpen,
        had_checkpoint: bool,
    },
}

/// A compaction the proxy made, as its events file has it: the runtime's
/// event (its `call` and `cache_breaks` are 0: a proxy neither numbers a
/// session's calls nor follows its requests), and whose it was.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Compacted {
    pub agent: String,
    /// The session's checkpoint group ([`condense_sessions::group_of`]).
    pub session: String,
    #[serde(flatten)]
    pub compaction: Compaction,
}

/// Why a request was forwarded unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailedOpen {
    /// The body is not a request of its format (the upstream will say so).
    Unreadable(String),
    /// The checkpoint store could not be read.
    Store(String),
    /// A component failed, or its output did not pass the host's checks.
    Condense(String),
    /// The compress task itself failed (a panic).
    Task(String),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::NotCompressed => f.write_str("not compressed"),
            Outcome::Compressed {
                before,
                after,
                compacted,
            } => match compacted {
                Some(event) => write!(
                    f,
                    "compacted ({}) {before} → {after}",
                    event.compaction.trigger.name()
                ),
                None => write!(f, "compressed {before} → {after}"),
            },
            Outcome::Unchanged => f.write_str("unchanged"),
            Outcome::FailedOpen { why, .. } => {
                let (kind, reason) = match why {
                    FailedOpen::Unreadable(r) => ("unreadable body", r),
                    FailedOpen::Store(r) => ("store", r),
                    FailedOpen::Condense(r) => ("condense", r),
                    FailedOpen::Task(r) => ("task", r),
                };
                write!(f, "failed open ({kind}): {reason}")
            }
        }
    }
}

/// One session's next summary to prepare: its request as the client sent
/// it, and whose it is.
#[derive(Clone, Debug)]
pub struct Job {
    pub body: Bytes,
    pub format: Format,
    pub agent: String,
    /// The session's checkpoint group.
    pub group: String,
    /// The session the client named (`x-condense-session`), if any.
    pub named: Option<String>,
    /// Whose the session is ([`crate::route::tenant_of`]).
    pub tenant: Option<String>,
    /// The boundary of the fold the request stood on.
    pub fold: u32,
    /// The model its summary asks, when the agent's summaries ask the
    /// client's upstream: the client's key, in memory for as long as the
    /// job.
    pub model: Option<Arc<ClientModel>>,
}

/// A request through condense.
pub struct Condensed {
    /// The body as it goes upstream.
    pub body: Bytes,
    /// What condense did.
    pub outcome: Outcome,
    /// When the body carries `condense_recall`: what answering its calls
    /// needs.
    pub recall: Option<Recalling>,
    /// The session's checkpoint group, once the body was read.
    pub group: Option<String>,
    /// The boundary of the fold the request stood on, once condense read it.
    pub stands_on: Option<u32>,
    /// When the request passed the compressor's soft mark: the job that
    /// prepares its session's next summary (`crate::prepare`).
    pub prepare: Option<Job>,
    /// The request's `model`, once condense read the body.
    pub model: Option<String>,
    /// What that model costs (the agent's models table), once read.
    pub price: Option<Box<ModelPrice>>,
    /// condense's estimate of the request's tokens as the client sent it,
    /// once condense read it (the same as sent unless it compressed).
    pub tokens: Option<u32>,
}

/// `body` as it goes upstream, and what condense did; with `asking`, the
/// summaries of its compaction ask that upstream (the request's own), as
/// the client asked it ([`ClientModel`]).
pub async fn compress(
    slots: &Semaphore,
    agent: &AgentSetup,
    store: Arc<dyn SessionStore>,
    format: Format,
    route: &Route,
    body: Bytes,
    asking: Option<Upstream>,
) -> Condensed {
    // Never closed: `acquire` only waits for a turn.
    let _slot = slots.acquire().await.expect("the slots are never closed");
    let models = agent.models.clone();
    let model = asking.map(|upstream| {
        Arc::new(ClientModel::new(
            upstream,
            body.clone(),
            format,
            models.clone(),
        ))
    });
    let middleware = match &model {
        Some(model) => Arc::new(agent.middleware.asking(model.clone())),
        None => agent.middleware.clone(),
    };
    let (agent_name, session) = (route.agent.clone(), route.session.clone());
    let tenant = route.tenant.clone();
    let original = body.clone();
    let task = tokio::task::spawn_blocking(move || {
        let failed = |why, had_checkpoint| {
            let outcome = Outcome::FailedOpen {
                why,
                had_checkpoint,
            };
            Condensed::unchanged(body.clone(), outcome)
        };
        let mut lookup = Lookup::new(&*store, format, &agent_name, session.as_deref())
            .of_tenant(tenant.as_deref());
        // The request's model, read in compress_body's one parse of it,
        // chooses its settings and prices it.
        let (mut price, mut recall, mut model_named) = (None, None, None);
        let compressed =
            compress_body_for(&middleware, &body, Some(format), &mut lookup, |model| {
                model_named = model.map(str::to_owned);
                let chosen = models.for_model(model);
                price = Some(chosen.price.clone());
                recall = chosen.config.recall;
                &chosen.config
            });
        let sent = match compressed {
            Ok(sent) => sent,
            Err(BodyError::NothingToCompress { .. }) => {
                return Condensed::unchanged(body.clone(), Outcome::NotCompressed);
            }
            Err(BodyError::Store(e)) => return failed(FailedOpen::Store(e.to_string()), false),
            // Over the middleware's cap (the proxy's own cap answers 413 before
            // this): the middleware's refusal, as before a component runs.
            Err(e @ BodyError::TooLarge { .. }) => {
                return failed(FailedOpen::Condense(e.to_string()), false);
            }
            Err(e) => return failed(FailedOpen::Unreadable(e.to_string()), false),
        };
        let group = lookup.group().unwrap_or_default().to_owned();
        let prepare = sent.report.prepare_due.then(|| Job {
            body: body.clone(),
            format,
            agent: agent_name.clone(),
            group: group.clone(),
            named: session.clone(),
            tenant: tenant.clone(),
            fold: sent.report.guest().map_or(0, |r| r.boundary),
            model: model.clone(),
        });
        let mut condensed = match (sent.report.status(), sent.report.guest()) {
            (Status::Compressed, Some(report)) => {
                let recall = match (sent.handles.is_empty(), recall) {
                    (true, _) => None,
                    (false, Some(settings)) => Some(Recalling {
                        history: sent.history,
                        settings,
                        format,
                        agent: agent_name.clone(),
                        session: group.clone(),
                    }),
                    (false, None) => {
                        let why = "recall: handles named with recall off".to_owned();
                        return failed(FailedOpen::Condense(why), lookup.found());
                    }
                };
                Condensed {
                    body: Bytes::from(sent.body),
                    outcome: Outcome::Compressed {
                        before: report.tokens_before,
                        after: report.tokens_after,
                        compacted: Compaction::of(&sent.report, 0, sent.cause, 0).map(
                            |compaction| {
                                Box::new(Compacted {
                                    agent: agent_name.clone(),
                                    session: group.clone(),
                                    compaction,
                                })
                            },
                        ),
                    },
                    recall,
                    ..Condensed::unchanged(Bytes::new(), Outcome::NotCompressed)
                }
            }
            (Status::FailedOpen, _) => failed(
                FailedOpen::Condense(sent.report.reason().unwrap_or("failed").to_owned()),
                lookup.found(),
            ),
            _ => Condensed::unchanged(body.clone(), Outcome::Unchanged),
        };
        condensed.group = Some(group);
        condensed.stands_on = sent.report.guest().map(|r| r.boundary);
        condensed.prepare = prepare;
        condensed.model = model_named;
        condensed.price = price.map(Box::new);
        condensed.tokens = sent.report.guest().map(|r| r.tokens_before);
        condensed
    });
    match task.await {
        Ok(done) => done,
        Err(e) => Condensed::unchanged(
            original,
            Outcome::FailedOpen {
                why: FailedOpen::Task(format!("the compress task failed: {e}")),
                had_checkpoint: false,
            },
        ),
    }
}

impl Condensed {
    /// A body that goes on as the client sent it.
    pub fn unchanged(body: Bytes, outcome: Outcome) -> Condensed {
        Condensed {
            body,
            outcome,
            recall: None,
            group: None,
            stands_on: None,
            prepare: None,
            model: None,
            price: None,
            tokens: None,
        }
    }
}
