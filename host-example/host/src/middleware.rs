//! The fail-open middleware: what an agent runtime calls before each model
//! call. It never fails: when the compressor cannot produce a valid output, the
//! model gets the original messages and the report says why.

use crate::failure::{FailureKind, GuestFailure};
use crate::llm::LanguageModel;
use crate::prepared::Prepared;
use crate::report::{Cause, HostReport, Status, Verdict};
use crate::runtime::{Call, Runtime};
use crate::token_memo::estimate_messages;
use crate::transcript::{Transcript, message_bytes, request_bytes};
use condense_model::hash::prefix_hash;
use condense_model::invariants::{History, check_items};
use condense_model::recall::{Handle, Span, fold_handle_of, result_handle};
use condense_model::{Checkpoint, CoreConfig, Item, Message, Outcome, Report};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

/// The default of [`Middleware::with_max_request_bytes`] and of the config
/// file's `limits.max_request_bytes`: 64 MiB, twice the largest request body a
/// provider takes (Anthropic's Messages API caps it at 32 MB, base64 images
/// included), so no real request comes near it, and a quarter of the default
/// guest memory (256 MiB), which must also hold the compressor's working
/// copies of the request.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 64 << 20;

/// Runs compressions through a [`Runtime`] and validates every output.
#[derive(Clone)]
pub struct Middleware {
    runtime: Runtime,
    max_request_bytes: usize,
    /// Summaries prepared ahead, when the host keeps them.
    prepared: Option<Arc<Prepared>>,
    /// The session its calls are for, when the host keeps many
    /// ([`Middleware::owned_by`]).
    owner: Option<Arc<str>>,
    /// Whose requests its calls are ([`Middleware::in_scope`]).
    scope: u64,
}

/// What the host keeps beside a session between calls: the compressor's
/// checkpoint, and the host's own hash of the history it folded. While the
/// history still starts with those messages, the next call sends only the
/// messages from the checkpoint's boundary on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionCheckpoint {
    pub checkpoint: Checkpoint,
    /// Hex of `condense_model::hash::prefix_hash` of the history before
    /// `checkpoint.boundary`.
    pub prefix_hash: String,
    /// The summary message the request carries in place of the folded
    /// history (the output's first `written` item), for a person looking at
    /// the session: the host reads it from the contract's output, never
    /// from the compressor's private `state`. None before the first fold,
    /// and in checkpoints saved before the host kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

impl SessionCheckpoint {
    /// Whether `history` still starts with the messages this checkpoint folded.
    pub fn fits(&self, history: &[Message]) -> bool {
        self.fits_measured(Measured::Fresh(history))
    }

    fn fits_measured(&self, history: Measured<'_>) -> bool {
        let boundary = self.checkpoint.boundary as usize;
        boundary <= history.messages().len()
            && hex(history.prefix_hash(boundary)) == self.prefix_hash
    }
}

/// The history a call compresses, and where the host's measures of it (the
/// prefix hash, the token counts) come from.
#[derive(Clone, Copy)]
enum Measured<'a> {
    /// A slice: measured by each call, for what the call needs.
    Fresh(&'a [Message]),
    /// A transcript: measured once, when each message was appended.
    Kept(&'a Transcript),
}

impl<'a> Measured<'a> {
    fn messages(self) -> &'a [Message] {
        match self {
            Measured::Fresh(history) => history,
            Measured::Kept(transcript) => transcript.messages(),
        }
    }

    fn prefix_hash(self, len: usize) -> u128 {
        match self {
            Measured::Fresh(history) => prefix_hash(&history[..len]),
            Measured::Kept(transcript) => transcript.prefix_hash(len),
        }
    }

    /// [`request_bytes`] of the messages.
    fn bytes(self) -> usize {
        match self {
            Measured::Fresh(history) => request_bytes(history),
            Measured::Kept(transcript) => transcript.bytes(),
        }
    }

    /// The host's token count of each message from `from` on, those of a
    /// fresh history remembered under `scope`.
    fn tokens(self, from: usize, scope: u64) -> Cow<'a, [u32]> {
        match self {
            Measured::Fresh(history) => Cow::Owned(estimate_messages(&history[from..], scope)),
            Measured::Kept(transcript) => Cow::Borrowed(&transcript.tokens()[from..]),
        }
    }
}

fn hex(hash: u128) -> String {
    format!("{hash:032x}")
}

/// What to send to the model, and what to store beside the session.
#[derive(Clone, Debug)]
pub struct Compressed {
    /// The request, by reference into the history (see [`Item`]).
    pub items: Vec<Item>,
    /// Pass it to the next call. On failure this is the checkpoint the call
    /// was given, so one failed call does not lose the fold.
    pub checkpoint: Option<SessionCheckpoint>,
    pub report: HostReport,
    /// The recall handles the request names, checked against the history
    /// (none unless recall was offered).
    pub handles: Vec<Handle>,
}

impl Compressed {
    /// The request as messages: `history` is the one the call was given.
    pub fn messages(&self, history: &[Message]) -> Vec<Message> {
        condense_model::materialize(&self.items, history)
    }
}

impl Middleware {
    /// A middleware over `runtime` accepting requests up to
    /// [`DEFAULT_MAX_REQUEST_BYTES`].
    pub fn new(runtime: Runtime) -> Middleware {
        Middleware {
            runtime,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            prepared: None,
            owner: None,
            scope: 0,
        }
    }

    /// Keeps summaries prepared ahead in `prepared`: a compaction asks it
    /// before the chain, and [`Middleware::prepare`] fills it.
    pub fn with_prepared(mut self, prepared: Arc<Prepared>) -> Middleware {
        self.prepared = Some(prepared);
        self
    }

    pub fn prepared(&self) -> Option<&Arc<Prepared>> {
        self.prepared.as_ref()
    }

    /// This middleware with its summaries asking `model`, for one request
    /// ([`Runtime::asking`]).
    pub fn asking(&self, model: Arc<dyn LanguageModel>) -> Middleware {
        Middleware {
            runtime: self.runtime.asking(model),
            max_request_bytes: self.max_request_bytes,
            prepared: self.prepared.clone(),
            owner: self.owner.clone(),
            scope: self.scope,
        }
    }

    /// This middleware for the calls of one session of many, `owner` (a
    /// session store's group): the summaries prepared ahead it uses and
    /// keeps are that session's alone.
    pub fn owned_by(&self, owner: &str) -> Middleware {
        Middleware {
            runtime: self.runtime.clone(),
            max_request_bytes: self.max_request_bytes,
            prepared: self.prepared.clone(),
            owner: Some(owner.into()),
            scope: self.scope,
        }
    }

    /// This middleware for the requests of one tenant of many
    /// ([`crate::CheckpointStore::scope`]): the token counts it remembers
    /// of the messages it was sent are that tenant's alone.
    pub fn in_scope(mut self, scope: u64) -> Middleware {
        self.scope = scope;
        self
    }

    /// Prepares the next compaction's summary for the session of `history`
    /// (a request whose report said [`HostReport::prepare_due`], or one
    /// after it): the compressor folds at its planned cut, and the summary
    /// the chain writes is kept in this middleware's [`Prepared`]. Nothing
    /// is returned for a request: the outcome is discarded, and nothing is
    /// stored beside the session. Runs the chain, so it takes as long as a
    /// compaction; a host runs it in the background. Returns whether a
    /// summary is now kept for the plan (`Ok(false)`: there was no plan, or
    /// no middleware keeps prepared summaries).
    pub fn prepare(
        &self,
        history: &[Message],
        config: &CoreConfig,
        settings: &str,
        checkpoint: Option<&SessionCheckpoint>,
        recall: bool,
    ) -> Result<bool, GuestFailure> {
        let Some(prepared) = &self.prepared else {
            return Ok(false);
        };
        let measured = Measured::Fresh(history);
        let call = |offset: usize| {
            self.runtime.call(Call {
                history,
                offset,
                config,
                settings,
                checkpoint: checkpoint.map(|c| &c.checkpoint),
                tokens: Some(&measured.tokens(offset, self.scope)),
                recall,
                prepared: Some(prepared),
                preparing: true,
                owner: self.owner.as_deref(),
            })
        };
        let resume = resume_point(measured, checkpoint);
        let called = match call(resume) {
            Err(f) if resume > 0 && f.kind == FailureKind::NeedsFullHistory => call(0),
            called => called,
        }?;
        Ok(called.outcome.report.trigger == condense_model::Trigger::Compacted)
    }

    /// Sets the size cap: a request whose messages carry more than `bytes`
    /// bytes of content ([`request_bytes`]) is sent unchanged without being
    /// copied into the compressor, so an oversized request costs neither the
    /// copy nor a guest running into its memory limit.
    pub fn with_max_request_bytes(mut self, bytes: usize) -> Middleware {
        self.max_request_bytes = bytes;
        self
    }

    pub fn max_request_bytes(&self) -> usize {
        self.max_request_bytes
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Compresses `history` (the durable history, which is never modified)
    /// into the request to send; `settings` is the compressor's settings JSON
    /// (`"{}"`: its defaults). With a checkpoint whose folded messages are
    /// unchanged, only the messages after them are sent to the compressor.
    /// On any failure, the request is the history unchanged with the given
    /// checkpoint, and a warning is logged.
    ///
    /// Each call hashes the folded messages and counts the tokens of the
    /// rest; a host that keeps its history in memory saves both with
    /// [`Middleware::compress_transcript`].
    pub fn compress(
        &self,
        history: &[Message],
        config: &CoreConfig,
        settings: &str,
        checkpoint: Option<&SessionCheckpoint>,
    ) -> Compressed {
        self.run(
            Measured::Fresh(history),
            config,
            settings,
            checkpoint,
            false,
        )
    }

    /// [`Middleware::compress`] for a model that can call `condense_recall`
    /// (with `recall`): the summary and the placeholders then name their
    /// handles, which [`Compressed::handles`] lists.
    pub fn compress_offering(
        &self,
        history: &[Message],
        config: &CoreConfig,
        settings: &str,
        checkpoint: Option<&SessionCheckpoint>,
        recall: bool,
    ) -> Compressed {
        self.run(
            Measured::Fresh(history),
            config,
            settings,
            checkpoint,
            recall,
        )
    }

    /// [`Middleware::compress`] on a transcript, whose messages were
    /// measured when they were appended: between compactions the call costs
    /// the messages it sends, not the ones folded before them. The same
    /// messages give the same output, and the checkpoints are the same.
    pub fn compress_transcript(
        &self,
        transcript: &Transcript,
        config: &CoreConfig,
        settings: &str,
        checkpoint: Option<&SessionCheckpoint>,
    ) -> Compressed {
        self.run(
            Measured::Kept(transcript),
            config,
            settings,
            checkpoint,
            false,
        )
    }

    /// [`Middleware::compress_transcript`], offering recall or not (see
    /// [`Middleware::compress_offering`]).
    pub fn compress_transcript_offering(
        &self,
        transcript: &Transcript,
        config: &CoreConfig,
        settings: &str,
        checkpoint: Option<&SessionCheckpoint>,
        recall: bool,
    ) -> Compressed {
        self.run(
            Measured::Kept(transcript),
            config,
            settings,
            checkpoint,
            recall,
        )
    }

    fn run(
        &self,
        measured: Measured<'_>,
        config: &CoreConfig,
        settings: &str,
        checkpoint: Option<&SessionCheckpoint>,
        recall: bool,
    ) -> Compressed {
        let started = Instant::now();
        let history = measured.messages();
        let unchanged = |report: HostReport| Compressed {
            items: (0..history.len() as u32).map(Item::Kept).collect(),
            checkpoint: checkpoint.cloned(),
            report,
            handles: Vec::new(),
        };
        let size = measured.bytes();
        if size > self.max_request_bytes {
            // Checked before the runtime is called: the point of the cap is
            // that such a request is never copied into the guest. No
            // component ran, so there is no `FailureKind`: the reason says it.
            let reason = format!(
                "request of {size} bytes is over limits.max_request_bytes = {}: sent unchanged, \
                 no component ran",
                self.max_request_bytes
            );
            tracing::warn!("condense failed open: {reason}");
            return unchanged(HostReport {
                verdict: Verdict::FailedOpen {
                    component: None,
                    failure: None,
                    reason,
                    guest: None,
                },
                checkpoint_ignored: None,
                summary_by: None,
                fell_through: Vec::new(),
                sent_from: 0,
                elapsed_us: elapsed_us(started),
                store_error: None,
                prepared: None,
                prepare_due: false,
            });
        }
        // Between compactions the folded messages need not cross the
        // boundary again: the host checks its hash of them and sends the rest,
        // with its own token count of each message sent (condense's
        // estimator run natively, so the guest need not run it in wasm).
        let resume = resume_point(measured, checkpoint);
        let tail_tokens = measured.tokens(resume, self.scope);
        let call = |offset: usize, tokens: &[u32]| {
            self.runtime.call(Call {
                history,
                offset,
                config,
                settings,
                checkpoint: checkpoint.map(|c| &c.checkpoint),
                tokens: Some(tokens),
                recall,
                prepared: self.prepared.as_ref(),
                preparing: false,
                owner: self.owner.as_deref(),
            })
        };
        let mut sent_from = resume;
        let mut result = call(resume, &tail_tokens);
        if resume > 0 && matches!(&result, Err(f) if f.kind == FailureKind::NeedsFullHistory) {
            sent_from = 0;
            result = call(0, &measured.tokens(0, self.scope));
        }
        let mut summary_by = None;
        let mut fell_through = Vec::new();
        let mut prepared = None;
        let result = result
            .map_err(|failure| Box::new((failure, None)))
            .and_then(|called| {
                summary_by = called.summary_by;
                fell_through = called.fell_through;
                prepared = called.prepared;
                self.validate(measured, size, config, recall, called.outcome)
            });
        let elapsed_us = elapsed_us(started);
        match result {
            Ok(outcome) => {
                let prepare_due = outcome.prepare_due;
                // The stored hash is kept only when it was just checked
                // (the call resumed from its boundary); otherwise it is
                // computed anew, so that a stale one is not handed on.
                let summary = (outcome.items.iter()).find_map(|item| match item {
                    Item::Written(message) => Some(message.joined_text()),
                    _ => None,
                });
                let stored = outcome.checkpoint.map(|cp| match checkpoint {
                    Some(given)
                        if given.checkpoint == cp
                            && cp.boundary > 0
                            && sent_from == cp.boundary as usize =>
                    {
                        SessionCheckpoint {
                            summary: given.summary.clone().or(summary),
                            ..given.clone()
                        }
                    }
                    _ => SessionCheckpoint {
                        prefix_hash: hex(measured.prefix_hash(cp.boundary as usize)),
                        summary: summary.filter(|_| cp.boundary > 0),
                        checkpoint: cp,
                    },
                });
                let unchanged = outcome.items.len() == history.len()
                    && outcome
                        .items
                        .iter()
                        .zip(0u32..)
                        .all(|(item, i)| *item == Item::Kept(i));
                Compressed {
                    items: outcome.items,
                    handles: outcome.handles,
                    checkpoint: stored,
                    report: HostReport {
                        checkpoint_ignored: outcome.report.checkpoint_ignored.clone(),
                        verdict: if unchanged {
                            Verdict::Unchanged {
                                guest: outcome.report,
                            }
                        } else {
                            Verdict::Compressed {
                                guest: outcome.report,
                            }
                        },
                        summary_by,
                        fell_through,
                        sent_from: sent_from as u32,
                        elapsed_us,
                        store_error: None,
                        prepared,
                        prepare_due,
                    },
                }
            }
            Err(failed) => {
                let (failure, guest) = *failed;
                tracing::warn!(component = %failure.component, kind = ?failure.kind, "condense failed open: {failure}");
                unchanged(HostReport {
                    verdict: Verdict::FailedOpen {
                        reason: failure.to_string(),
                        component: Some(failure.component),
                        failure: Some(failure.kind),
                        guest,
                    },
                    checkpoint_ignored: None,
                    summary_by: None,
                    fell_through,
                    sent_from: sent_from as u32,
                    elapsed_us,
                    store_error: None,
                    prepared: None,
                    prepare_due: false,
                })
            }
        }
    }

    /// The host's own check of the guest's output: the same invariants the
    /// compressor's self-check runs, so a buggy or hostile compressor cannot
    /// reach the model. An invalid output keeps its report for the record.
    fn validate(
        &self,
        measured: Measured<'_>,
        input_bytes: usize,
        config: &CoreConfig,
        recall: bool,
        outcome: Outcome,
    ) -> Result<Outcome, Box<(GuestFailure, Option<Report>)>> {
        let history = measured.messages();
        let checked = check_items(
            History::whole(history),
            &outcome.items,
            outcome.report.cut(),
        )
        .map_err(|violation| violation.to_string())
        .and_then(|()| within_size(history, input_bytes, &outcome.items, config))
        .and_then(|()| handles_hold(measured, recall, &outcome));
        match checked {
            Ok(()) => Ok(outcome),
            Err(detail) => Err(Box::new((
                GuestFailure {
                    component: self.runtime.compressor().clone(),
                    kind: FailureKind::InvalidOutput,
                    detail,
                },
                Some(outcome.report),
            ))),
        }
    }
}

/// Compresses in two steps, so that the host knows what set a compaction
/// off (the compressor's report does not say): `compress` first with no
/// threshold (`u32::MAX`), where only the compressor's own rule can compact
/// (`own_rule`: condense's `cost` rule, or `cold` when it was told the cache
/// expired); then, when that request is over `core`'s threshold and
/// `allow` lets it (a runtime's policy), with the threshold. The first
/// step runs no summarizer unless the compressor's own rule compacts, so a
/// compaction a policy refuses costs nothing.
pub fn compress_attributed(
    core: &CoreConfig,
    own_rule: Cause,
    compress: impl Fn(&CoreConfig) -> Compressed,
    allow: impl FnOnce(u32) -> bool,
) -> (Compressed, Cause) {
    let standing = CoreConfig {
        token_threshold: u32::MAX,
        ..*core
    };
    let sent = compress(&standing);
    let request_tokens = match sent.report.guest() {
        Some(r) if sent.report.status() != Status::FailedOpen => r.tokens_after,
        _ => return (sent, own_rule),
    };
    if request_tokens <= core.token_threshold || !allow(request_tokens) {
        return (sent, own_rule);
    }
    (compress(core), Cause::Threshold)
}

/// One call with `core`, for a host with no policy on compactions (the
/// proxy, `condense compress`, a runtime whose policy allows them all):
/// what set a compaction off is the threshold when the request was over it,
/// else the compressor's own rule — and `cold` whenever the call found the
/// cache expired (it rewrites its whole request anyway). Unlike
/// [`compress_attributed`]'s first step, the compressor sees the real
/// threshold, which its plan for the next compaction (summaries prepared
/// ahead) is made with.
pub fn compress_caused(
    core: &CoreConfig,
    own_rule: Cause,
    compress: impl FnOnce(&CoreConfig) -> Compressed,
) -> (Compressed, Cause) {
    let sent = compress(core);
    let over = sent
        .report
        .guest()
        .is_some_and(|r| r.tokens_before > core.token_threshold);
    let cause = if over && own_rule != Cause::Cold {
        Cause::Threshold
    } else {
        own_rule
    };
    (sent, cause)
}

/// Where the call starts: the checkpoint's boundary when the messages before
/// it are unchanged, else 0. On a slice the check reads every folded byte
/// (about 7 GB/s), the one part of a call between compactions that grows with
/// what is folded; on a transcript it reads 16 bytes a message. (Run on a
/// second thread beside the token count it was slower on a 2-core machine,
/// so it is not.)
fn resume_point(history: Measured<'_>, checkpoint: Option<&SessionCheckpoint>) -> usize {
    match checkpoint {
        Some(c) if c.checkpoint.boundary > 0 && c.fits_measured(history) => {
            c.checkpoint.boundary as usize
        }
        _ => 0,
    }
}

/// Every handle the compressor names is the one of what it says it covers
/// (a recall of it would give the model something else), and covers what
/// the request took out: a fold up to the boundary, a message the request
/// rewrote. None is named unless recall was offered.
fn handles_hold(measured: Measured<'_>, recall: bool, outcome: &Outcome) -> Result<(), String> {
    if !recall && !outcome.handles.is_empty() {
        return Err("recall-handle: handles named, but recall was not offered".into());
    }
    let history = measured.messages();
    for handle in &outcome.handles {
        let holds = match handle.span {
            Span::Fold { end } => {
                end == outcome.report.boundary as usize
                    && fold_handle_of(measured.prefix_hash(end)) == handle.id
            }
            Span::Message(i) => {
                let rewritten = outcome
                    .items
                    .iter()
                    .any(|item| matches!(item, Item::Rewritten(j, _) if *j as usize == i));
                rewritten && history.get(i).map(result_handle).as_deref() == Some(&handle.id)
            }
        };
        if !holds {
            return Err(format!(
                "recall-handle: `{}` is not the handle of {:?}",
                handle.id, handle.span
            ));
        }
    }
    Ok(())
}

/// A compression never makes the request larger: the invariants let a
/// compressor rewrite text, so without this bound a valid-looking output
/// could carry any amount of it. The slack covers a summary pair that is
/// longer in bytes than the folded messages it replaced, though shorter in
/// tokens (CJK history, English summary): at most `summary_max_tokens` tokens
/// of up to 16 bytes each, plus the framing.
fn within_size(
    history: &[Message],
    input_bytes: usize,
    items: &[Item],
    config: &CoreConfig,
) -> Result<(), String> {
    const FRAMING_BYTES: usize = 4_096;
    let allowed = input_bytes + 16 * config.summary_max_tokens as usize + FRAMING_BYTES;
    let output_bytes: usize = items
        .iter()
        .map(|item| message_bytes(item.message(history)))
        .sum();
    if output_bytes > allowed {
        return Err(format!(
            "output-size: the output carries {output_bytes} bytes, more than the input's \
             {input_bytes} allow ({allowed})"
        ));
    }
    Ok(())
}

fn elapsed_us(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX)
}
