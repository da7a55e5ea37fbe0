//! The fail-open middleware: what an agent runtime calls before each model
//! call. It never fails: when the compressor cannot produce a valid output, the
//! model gets the original messages and the report says why.

use crate::runtime::{ComponentLabel, FailureKind, GuestFailure, Runtime};
use condense_model::invariants::check_output;
use condense_model::{Checkpoint, Config, Message, Outcome, Report};
use serde::Serialize;
use std::time::Instant;

/// Runs compressions through a [`Runtime`] and validates every output.
pub struct Middleware {
    runtime: Runtime,
}

/// What to send to the model, and what to store beside the session.
#[derive(Clone, Debug)]
pub struct Compressed {
    pub messages: Vec<Message>,
    /// Pass it to the next call. On failure this is the checkpoint the call
    /// was given, so one failed call does not lose the fold.
    pub checkpoint: Option<Checkpoint>,
    pub report: HostReport,
}

/// Whether the messages were compressed or passed through after a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Compressed,
    FailedOpen,
}

/// What happened in one call, for logs and metrics.
#[derive(Clone, Debug, Serialize)]
pub struct HostReport {
    pub status: Status,
    /// The component that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component: Option<ComponentLabel>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureKind>,
    /// The failure as a sentence naming the component.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The compressor's own report, when it returned one (also for an output
    /// that failed validation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guest: Option<Report>,
    /// Wall time of the whole call, validation included.
    pub elapsed_us: u64,
}

impl Middleware {
    pub fn new(runtime: Runtime) -> Middleware {
        Middleware { runtime }
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Compresses `messages` (the durable history, which is never modified)
    /// into the request to send. On any failure, returns a copy of `messages`
    /// and the given checkpoint, and logs a warning.
    pub fn compress(
        &self,
        messages: &[Message],
        config: &Config,
        checkpoint: Option<&Checkpoint>,
    ) -> Compressed {
        let started = Instant::now();
        let result = self
            .runtime
            .call(messages, config, checkpoint)
            .map_err(|failure| (failure, None))
            .and_then(|outcome| self.validate(messages, outcome));
        let elapsed_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        match result {
            Ok(outcome) => Compressed {
                messages: outcome.messages,
                checkpoint: outcome.checkpoint,
                report: HostReport {
                    status: Status::Compressed,
                    component: None,
                    failure: None,
                    reason: None,
                    guest: Some(outcome.report),
                    elapsed_us,
                },
            },
            Err((failure, guest)) => {
                tracing::warn!(component = %failure.component, kind = ?failure.kind, "condense failed open: {failure}");
                Compressed {
                    messages: messages.to_vec(),
                    checkpoint: checkpoint.cloned(),
                    report: HostReport {
                        status: Status::FailedOpen,
                        reason: Some(failure.to_string()),
                        component: Some(failure.component),
                        failure: Some(failure.kind),
                        guest,
                        elapsed_us,
                    },
                }
            }
        }
    }

    /// The host's own check of the guest's output: the same invariants the
    /// compressor's self-check runs, so a buggy or hostile compressor cannot
    /// reach the model. An invalid output keeps its report for the record.
    fn validate(
        &self,
        input: &[Message],
        outcome: Outcome,
    ) -> Result<Outcome, (GuestFailure, Option<Report>)> {
        match check_output(input, &outcome.messages, outcome.report.tail_start as usize) {
            Ok(()) => Ok(outcome),
            Err(violation) => Err((
                GuestFailure {
                    component: self.runtime.compressor().clone(),
                    kind: FailureKind::InvalidOutput,
                    detail: violation.to_string(),
                },
                Some(outcome.report),
            )),
        }
    }
}
