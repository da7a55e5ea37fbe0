//! The layers around each model call ([`Layers`], each a [`Layer`]), and the
//! layers the runtime ships: condense, a meter of the provider's token counts
//! and one of the run's figures.
//!
//! Each model call builds a fresh [`ModelCall`] from the durable history:
//! the layers edit that copy, never the history. They run in order before
//! the call and in order after it. (Layers, not "middleware": the host's
//! fail-open compress middleware, which [`Condense`] wraps, is
//! `condense_host::Middleware`, and keeps its full path here.)

use crate::context::{BlockKind, ContextCompiler};
use crate::journal::Usage;
use crate::model::{AgentFrame, Frame, ModelRequest, ModelResponse};
use crate::policy::{Automatic, Due, Policy};
use crate::tools::ToolSpec;
pub use condense_config::SummaryPlacement;
use condense_host::body::with_overhead;
use condense_host::events::{Cause, Compaction};
use condense_host::middleware::{compress_attributed, compress_caused};
use condense_host::{CheckpointStore, ColdSettings, Compressed, SessionCheckpoint, Transcript};
use condense_model::hash::message_digest;
use condense_model::tokens::{estimate_message, estimate_messages};
use condense_model::{CoreConfig, Item, Message, Role};
use condense_replay::{ReplayStats, StatsMeter};
use std::ops::Deref;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// One model call as the layers see it.
pub struct ModelCall<'h> {
    /// 1-based number of the call in this run.
    pub number: u64,
    /// The conversation as journaled: read it, never edit it.
    pub history: &'h Transcript,
    /// The system prompt's typed blocks. Layers fill theirs (condense
    /// the compressed block, with `summary_placement = "block"`).
    pub context: ContextCompiler,
    /// The runtime's fixed system messages (a recorded session's own, say),
    /// after the compiled context.
    pub system: Vec<Message>,
    /// The conversation to send instead of `history`'s messages, once a
    /// layer made one (condense does); a layer that edits it
    /// belongs after condense ([`ModelCall::conversation_mut`]).
    pub conversation: Option<Vec<Message>>,
    /// The request to send. Its messages are filled in once the last
    /// layer ran: the compiled context, `system`, then the
    /// conversation (the history itself if no layer made one, copied
    /// only then). Layers see it whole after the call.
    pub request: ModelRequest,
    /// Compactions the layers performed for this call, for the runtime
    /// to journal and report.
    pub compactions: Vec<Compaction>,
}

impl ModelCall<'_> {
    /// The compiled context as the system message that will lead the
    /// request (none while every block is empty).
    pub fn context_message(&self) -> Option<Message> {
        let compiled = self.context.compile();
        (!compiled.text.is_empty()).then(|| Message::text(Role::System, compiled.text))
    }

    /// The conversation to send, to edit: the history's own until a
    /// layer made another.
    pub fn conversation_mut(&mut self) -> &mut Vec<Message> {
        let history = self.history;
        self.conversation
            .get_or_insert_with(|| history.messages().to_vec())
    }

    /// The request's messages, as the model gets them: the last step before
    /// it is called.
    fn assemble(&mut self) {
        let conversation = match self.conversation.take() {
            Some(conversation) => conversation,
            None => self.history.messages().to_vec(),
        };
        let mut messages = Vec::with_capacity(self.system.len() + conversation.len() + 1);
        messages.extend(self.context_message());
        messages.extend(self.system.iter().cloned());
        messages.extend(conversation);
        self.request.messages = messages;
    }
}

/// A layer of the model-call path.
pub trait Layer {
    fn before_model_call(&mut self, call: &mut ModelCall<'_>) {
        let _ = call;
    }

    fn after_model_call(&mut self, call: &ModelCall<'_>, response: &ModelResponse) {
        let _ = (call, response);
    }
}

/// The layers, in order.
#[derive(Default)]
pub struct Layers {
    layers: Vec<Box<dyn Layer>>,
}

impl Layers {
    pub fn new() -> Layers {
        Layers::default()
    }

    /// Adds `layer` after the ones already there.
    pub fn with(mut self, layer: impl Layer + 'static) -> Layers {
        self.layers.push(Box::new(layer));
        self
    }

    /// Runs every layer's `before_model_call`, then assembles the
    /// request's messages.
    pub fn before_model_call(&mut self, call: &mut ModelCall<'_>) {
        for layer in &mut self.layers {
            layer.before_model_call(call);
        }
        call.assemble();
    }

    pub fn after_model_call(&mut self, call: &ModelCall<'_>, response: &ModelResponse) {
        for layer in &mut self.layers {
            layer.after_model_call(call, response);
        }
    }
}

/// condense as a layer: the request's conversation is what condense
/// makes of the durable history, behind the system prompt. It compresses the history itself (a [`Transcript`], so a call
/// between compactions costs what it sends), so a layer that edits the
/// conversation belongs after it.
pub struct Condense<M = Arc<condense_host::Middleware>> {
    /// The host's compress middleware, owned or shared (`Arc`, `&'static`).
    layer: M,
    core: CoreConfig,
    settings: String,
    store: Box<dyn CheckpointStore>,
    /// What `store` holds, read on the first call and kept in step with it
    /// after, so a call does not read the file again.
    stored: Option<Option<SessionCheckpoint>>,
    /// The prompt cache's view of the requests sent, for the cache breaks
    /// each compaction event counts.
    cache: CacheBreaks,
    policy: Box<dyn Policy>,
    placement: SummaryPlacement,
    /// Where it records what each request sends besides the conversation,
    /// for the summarizer's model ([`Condense::with_frame`]).
    frame: Option<AgentFrame>,
    /// How long the prompt cache keeps a request, and the settings that
    /// tell the compressor it expired ([`Condense::with_cold_settings`]).
    cold: Option<ColdSettings>,
    /// When the last request was compressed (wall-clock: a resumed session's
    /// comes from its journal).
    last_call: Option<SystemTime>,
    /// Summaries prepared ahead, when on
    /// ([`Condense::with_summaries_prepared_ahead`]).
    ahead: Option<Ahead>,
}

/// Summaries prepared ahead: one job at a time, on a thread of its own.
struct Ahead {
    /// Starts a job ([`condense_host::Middleware::prepare`]) on the history
    /// as it stands, with the fold knobs, settings, checkpoint and recall of
    /// the call that said it is due.
    start: Box<dyn Fn(PrepareJob) -> JoinHandle<()> + Send>,
    /// The fold (the checkpoint's boundary) the latest job prepared for: the
    /// session asks nothing more until it compacts.
    planned: Option<u32>,
    running: Option<JoinHandle<()>>,
}

/// What one job prepares with.
struct PrepareJob {
    history: Vec<Message>,
    core: CoreConfig,
    settings: String,
    checkpoint: Option<SessionCheckpoint>,
    recall: bool,
}

impl<M> Condense<M>
where
    M: Deref<Target = condense_host::Middleware> + Clone + Send + 'static,
{
    /// Prepares summaries ahead: once a request passes the compressor's
    /// soft mark, the next compaction's summary is written on a thread of
    /// its own, into the layer's
    /// [`Prepared`](condense_host::prepared::Prepared) (which it must have:
    /// [`condense_host::Middleware::with_prepared`]), while the agent's
    /// model answers; the compaction then finds it written. Under a policy
    /// that does not allow every compaction, nothing is prepared: its
    /// compactions are made at the threshold's call only when allowed.
    pub fn with_summaries_prepared_ahead(mut self) -> Condense<M> {
        let layer = self.layer.clone();
        let start = move |job: PrepareJob| {
            let layer = layer.clone();
            std::thread::spawn(move || {
                let prepared = layer.prepare(
                    &job.history,
                    &job.core,
                    &job.settings,
                    job.checkpoint.as_ref(),
                    job.recall,
                );
                match prepared {
                    Ok(kept) => tracing::info!(kept, "summary prepared ahead"),
                    Err(e) => tracing::warn!("cannot prepare a summary ahead: {e}"),
                }
            })
        };
        self.ahead = Some(Ahead {
            start: Box::new(start),
            planned: None,
            running: None,
        });
        self
    }
}

impl<M: Deref<Target = condense_host::Middleware>> Condense<M> {
    /// `settings` is the compressor's settings JSON; `store` keeps the
    /// checkpoint beside the session. Every due compaction proceeds and the
    /// summary is a message pair until told otherwise.
    pub fn new(
        layer: M,
        core: CoreConfig,
        settings: String,
        store: Box<dyn CheckpointStore>,
    ) -> Condense<M> {
        Condense {
            layer,
            core,
            settings,
            store,
            stored: None,
            cache: CacheBreaks::default(),
            policy: Box::new(Automatic),
            placement: SummaryPlacement::Message,
            frame: None,
            cold: None,
            last_call: None,
            ahead: None,
        }
    }

    /// A call made more than `ttl` after the one before finds the prompt
    /// cache expired: it is compressed with `settings` instead, which tell
    /// the compressor so (the embedded one: `cache_cold = true`), and a
    /// compaction due soon is made then, at no break of its own.
    pub fn with_cold_settings(mut self, ttl: Duration, settings: String) -> Condense<M> {
        self.cold = Some(ColdSettings {
            ttl,
            settings,
            clock: condense_host::timing::Clock::system(),
        });
        self
    }

    /// The session's last model call was at `at` (a resumed session's, from
    /// its journal): the first call finds the cache expired if that was
    /// longer ago than the TTL of [`Condense::with_cold_settings`].
    pub fn with_last_call(mut self, at: SystemTime) -> Condense<M> {
        self.last_call = Some(at);
        self
    }

    /// Records in `frame` the system messages and tools of each request it
    /// makes, so that an LLM summarizer's request after the agent's
    /// conversation (the model's `OpenAiLlm::with_frame`) starts as the
    /// agent's last request did and hits its prompt cache.
    pub fn with_frame(mut self, frame: AgentFrame) -> Condense<M> {
        self.frame = Some(frame);
        self
    }

    /// Asks `policy` before each compaction.
    pub fn with_policy(mut self, policy: impl Policy + 'static) -> Condense<M> {
        self.policy = Box::new(policy);
        self
    }

    pub fn with_placement(mut self, placement: SummaryPlacement) -> Condense<M> {
        self.placement = placement;
        self
    }

    /// The request as condense makes it of `history`: the checkpoint's fold
    /// as it stands and, when a compaction is due and the policy allows it,
    /// the compaction, in [`compress_attributed`]'s two steps: the policy is
    /// asked only of a compaction the threshold makes due, and one it
    /// refuses never costs a summary. `condense agent` turns the
    /// compressor's own rule off when a policy must allow each compaction.
    /// Returns what set a compaction off, should the request be compacted.
    fn compress(
        &mut self,
        history: &Transcript,
        core: &CoreConfig,
        overhead: u32,
        number: u64,
        recall: bool,
    ) -> (Compressed, Cause) {
        // condense's own state never stops a model call: a store that cannot
        // be read counts as no checkpoint (the fold is recomputed).
        let store = &mut self.store;
        let stored = self.stored.get_or_insert_with(|| {
            store.load(history.messages()).unwrap_or_else(|e| {
                tracing::warn!("condense checkpoint ignored: {e}");
                None
            })
        });
        // The cache expired since the last call: the compressor is told.
        let now = SystemTime::now();
        let idle = self
            .last_call
            .map(|last| now.duration_since(last).unwrap_or_default());
        let (settings, own_rule) = ColdSettings::choose(self.cold.as_ref(), &self.settings, idle);
        self.last_call = Some(now);
        let (layer, policy) = (&self.layer, &mut self.policy);
        let compress = |core: &CoreConfig| {
            layer.compress_transcript_offering(history, core, settings, stored.as_ref(), recall)
        };
        if policy.allows_all() {
            return compress_caused(core, own_rule, compress);
        }
        compress_attributed(core, own_rule, compress, |request_tokens| {
            let due = Due {
                call: number,
                request_tokens: u64::from(request_tokens) + u64::from(overhead),
                threshold: u64::from(core.token_threshold) + u64::from(overhead),
                at: Instant::now(),
            };
            let allowed = policy.allow(&due);
            if !allowed {
                tracing::info!(
                    call = number,
                    request_tokens = due.request_tokens,
                    "compaction deferred by the policy"
                );
            }
            allowed
        })
    }
}

impl<M> Condense<M> {
    /// Starts the job that prepares the next compaction's summary, unless
    /// one ran for this fold or one still runs.
    fn prepare_ahead(
        &mut self,
        history: &Transcript,
        core: &CoreConfig,
        recall: bool,
        sent: &Compressed,
    ) {
        let Some(ahead) = &mut self.ahead else {
            return;
        };
        let fold = sent.report.guest().map_or(0, |r| r.boundary);
        let busy = ahead.running.as_ref().is_some_and(|job| !job.is_finished());
        if ahead.planned == Some(fold) || busy {
            return;
        }
        ahead.planned = Some(fold);
        ahead.running = Some((ahead.start)(PrepareJob {
            history: history.messages().to_vec(),
            core: *core,
            settings: self.settings.clone(),
            checkpoint: sent.checkpoint.clone(),
            recall,
        }));
    }
}

impl<M: Deref<Target = condense_host::Middleware>> Layer for Condense<M> {
    fn before_model_call(&mut self, call: &mut ModelCall<'_>) {
        // The model is sent the system prompt and the tool definitions with
        // every request: they count against the threshold.
        let tools: u32 = call.request.tools.iter().map(ToolSpec::tokens).sum();
        let context = call.context_message();
        let overhead = context.iter().map(estimate_message).sum::<u32>()
            + estimate_messages(&call.system).iter().sum::<u32>()
            + tools;
        let core = with_overhead(&self.core, overhead);
        // The summary and placeholders name their handles when the model
        // can read them back: when the agent offers it `condense_recall`.
        let recall = call
            .request
            .tools
            .iter()
            .any(|t| t.name == condense_model::recall::TOOL_NAME);
        let (sent, cause) = self.compress(call.history, &core, overhead, call.number, recall);
        if sent.report.prepare_due && self.policy.allows_all() {
            self.prepare_ahead(call.history, &core, recall, &sent);
        }
        if let Some(checkpoint) = &sent.checkpoint
            && self.stored.as_ref().and_then(Option::as_ref) != Some(checkpoint)
        {
            match self.store.save(call.history.messages(), checkpoint) {
                Ok(()) => self.stored = Some(Some(checkpoint.clone())),
                Err(e) => tracing::warn!(
                    "condense checkpoint not stored (the next call compacts again): {e}"
                ),
            }
        }
        let history = call.history;
        let mut conversation = sent.messages(history.messages());
        // The cache sees the request as the provider does, by digest: the
        // transcript has the digest of every message the request keeps, so
        // only the ones condense wrote or rewrote are hashed. A summary placed
        // in the context block sits where its pair does, right after the
        // system prompt: the breaks are the same either way.
        let digests = context
            .iter()
            .chain(&call.system)
            .map(message_digest)
            .chain(sent.items.iter().map(|item| match item {
                Item::Kept(i) => history.digests()[*i as usize],
                other => message_digest(other.message(history.messages())),
            }));
        self.cache.send(digests.collect());
        let compaction = Compaction::of(&sent.report, call.number, cause, self.cache.breaks);
        call.compactions.extend(compaction);
        let mut block_set = false;
        if self.placement == SummaryPlacement::Block
            && let Some(at) = sent
                .items
                .iter()
                .position(|i| matches!(i, Item::Written(_)))
            && sent.report.guest().is_some_and(|r| r.boundary > 0)
        {
            // The pair is the first two items condense wrote (see the
            // compressor's `assemble`): its summary message becomes the
            // block, its acknowledgement is not needed there.
            let pair: Vec<Message> = conversation.drain(at..at + 2).collect();
            call.context
                .set(BlockKind::Compressed, pair[0].joined_text());
            block_set = true;
        }
        call.conversation = Some(conversation);
        if let Some(frame) = &self.frame {
            // The block, if set just now, is part of the system prompt sent:
            // only then is the context compiled again.
            let context = if block_set {
                call.context_message()
            } else {
                context
            };
            frame.set(Frame {
                system: context
                    .into_iter()
                    .chain(call.system.iter().cloned())
                    .collect(),
                tools: call.request.tools.clone(),
                summary_in_system: self.placement == SummaryPlacement::Block,
            });
        }
    }
}

/// Prompt-cache breaks: requests that did not start with the whole request
/// before them, told by comparing their messages' digests (16 bytes each)
/// instead of the messages.
#[derive(Default)]
struct CacheBreaks {
    previous: Option<Vec<u128>>,
    breaks: u32,
}

impl CacheBreaks {
    fn send(&mut self, request: Vec<u128>) {
        if self
            .previous
            .as_ref()
            .is_some_and(|previous| !request.starts_with(previous))
        {
            self.breaks += 1;
        }
        self.previous = Some(request);
    }
}

/// The provider's token counts of every call, in order (`None` where the
/// model reported none). Clones share the record.
#[derive(Clone, Default)]
pub struct UsageMeter {
    calls: Arc<Mutex<Vec<Option<Usage>>>>,
}

impl UsageMeter {
    pub fn new() -> UsageMeter {
        UsageMeter::default()
    }

    pub fn calls(&self) -> Vec<Option<Usage>> {
        self.calls
            .lock()
            .expect("the meter is not poisoned")
            .clone()
    }

    /// The counts summed over the calls that reported them.
    pub fn total(&self) -> Usage {
        self.calls()
            .iter()
            .flatten()
            .fold(Usage::default(), |sum, u| Usage {
                input_tokens: sum.input_tokens + u.input_tokens,
                cached_tokens: sum.cached_tokens + u.cached_tokens,
                output_tokens: sum.output_tokens + u.output_tokens,
            })
    }
}

impl Layer for UsageMeter {
    fn after_model_call(&mut self, _: &ModelCall<'_>, response: &ModelResponse) {
        self.calls
            .lock()
            .expect("the meter is not poisoned")
            .push(response.usage);
    }
}

/// The run's figures as `condense replay` computes them, call by call: each
/// request as the runtime built it (what it would send with no compression)
/// and as it was sent. It belongs first among the layers, so it sees the request
/// before any layer edits it. Clones share the record.
#[derive(Clone, Default)]
pub struct RequestMeter {
    inner: Arc<Mutex<RequestRecord>>,
}

#[derive(Default)]
struct RequestRecord {
    meter: StatsMeter,
    /// This call's request uncompressed, until the call is made.
    pending: Option<(Vec<Message>, Vec<u32>)>,
}

impl RequestMeter {
    pub fn new() -> RequestMeter {
        RequestMeter::default()
    }

    /// The figures of the calls so far.
    pub fn stats(&self) -> ReplayStats {
        self.inner
            .lock()
            .expect("the meter is not poisoned")
            .meter
            .stats()
    }
}

impl Layer for RequestMeter {
    fn before_model_call(&mut self, call: &mut ModelCall<'_>) {
        let context = call.context_message();
        let messages: Vec<Message> = context
            .iter()
            .chain(&call.system)
            .chain(call.history.messages())
            .cloned()
            .collect();
        let tokens: Vec<u32> = context
            .iter()
            .map(estimate_message)
            .chain(estimate_messages(&call.system))
            .chain(call.history.tokens().iter().copied())
            .collect();
        self.inner
            .lock()
            .expect("the meter is not poisoned")
            .pending = Some((messages, tokens));
    }

    fn after_model_call(&mut self, call: &ModelCall<'_>, _: &ModelResponse) {
        let mut record = self.inner.lock().expect("the meter is not poisoned");
        let Some((messages, tokens)) = record.pending.take() else {
            return;
        };
        let sent = call.request.messages.clone();
        let sent_tokens = estimate_messages(&sent);
        record.meter.record(
            (messages, &tokens),
            (sent, &sent_tokens),
            !call.compactions.is_empty(),
            false,
        );
    }
}
