//! The middleware chain around each model call, and the two middlewares the
//! runtime ships: condense, and a meter of the provider's token counts.
//!
//! Each call builds a fresh [`Call`] from the durable history: the
//! middlewares edit that copy, never the history. They run in order before
//! the call and in order after it.

use crate::events::Compaction;
use crate::journal::Usage;
use crate::model::{ModelRequest, ModelResponse};
use condense_host::body::with_overhead;
use condense_host::replay::CacheMeter;
use condense_host::{CheckpointStore, Middleware, SessionCheckpoint, Status, Transcript};
use condense_model::tokens::{estimate_message, estimate_messages, estimate_text};
use condense_model::{CoreConfig, Item, Message, Trigger};
use std::ops::Deref;
use std::sync::{Arc, Mutex};

/// One model call as the middlewares see it.
pub struct Call<'h> {
    /// 1-based number of the call in this run.
    pub number: u64,
    /// The conversation as journaled: read it, never edit it.
    pub history: &'h Transcript,
    /// The request to send. It starts as the system prompt followed by the
    /// history's messages.
    pub request: ModelRequest,
    /// How many of `request.messages` lead as the system prompt (they are
    /// not in `history`).
    pub system_len: usize,
    /// Compactions the middlewares performed for this call, for the runtime
    /// to journal and report.
    pub compactions: Vec<Compaction>,
}

/// A middleware of the model-call path.
pub trait Hook {
    fn before_model_call(&mut self, call: &mut Call<'_>) {
        let _ = call;
    }

    fn after_model_call(&mut self, call: &Call<'_>, response: &ModelResponse) {
        let _ = (call, response);
    }
}

/// The middlewares, in order.
#[derive(Default)]
pub struct Chain {
    hooks: Vec<Box<dyn Hook>>,
}

impl Chain {
    pub fn new() -> Chain {
        Chain::default()
    }

    /// Adds `hook` after the ones already in the chain.
    pub fn with(mut self, hook: impl Hook + 'static) -> Chain {
        self.hooks.push(Box::new(hook));
        self
    }

    pub fn before_model_call(&mut self, call: &mut Call<'_>) {
        for hook in &mut self.hooks {
            hook.before_model_call(call);
        }
    }

    pub fn after_model_call(&mut self, call: &Call<'_>, response: &ModelResponse) {
        for hook in &mut self.hooks {
            hook.after_model_call(call, response);
        }
    }
}

/// condense as a middleware: replaces the request's conversation with what
/// condense makes of the durable history, keeping the system prompt in
/// front. It compresses the history itself (a [`Transcript`], so a call
/// between compactions costs what it sends), so a hook that edits the
/// conversation belongs after it.
pub struct Condense<M = Arc<Middleware>> {
    /// The middleware, owned or shared (`Arc`, `&'static`).
    middleware: M,
    core: CoreConfig,
    settings: String,
    store: Box<dyn CheckpointStore>,
    /// What `store` holds, read on the first call and kept in step with it
    /// after, so a call does not read the file again.
    stored: Option<Option<SessionCheckpoint>>,
    /// The prompt cache's view of the requests sent, for the cache breaks
    /// each compaction event counts.
    cache: CacheMeter,
}

impl<M: Deref<Target = Middleware>> Condense<M> {
    /// `settings` is the compressor's settings JSON; `store` keeps the
    /// checkpoint beside the session.
    pub fn new(
        middleware: M,
        core: CoreConfig,
        settings: String,
        store: Box<dyn CheckpointStore>,
    ) -> Condense<M> {
        Condense {
            middleware,
            core,
            settings,
            store,
            stored: None,
            cache: CacheMeter::new(),
        }
    }
}

impl<M: Deref<Target = Middleware>> Hook for Condense<M> {
    fn before_model_call(&mut self, call: &mut Call<'_>) {
        let system = &call.request.messages[..call.system_len];
        // The model is sent the system prompt and the tool definitions with
        // every request: they count against the threshold.
        let tools: u32 = call
            .request
            .tools
            .iter()
            .map(|t| {
                estimate_text(&t.name)
                    + estimate_text(&t.description)
                    + estimate_text(&t.parameters.to_string())
            })
            .sum();
        let system_tokens = estimate_messages(system);
        let overhead = system_tokens.iter().sum::<u32>() + tools;
        let core = with_overhead(&self.core, overhead);
        // condense's own state never stops a model call: a store that cannot
        // be read counts as no checkpoint (the fold is recomputed).
        let store = &mut self.store;
        let stored = self.stored.get_or_insert_with(|| {
            store.load().unwrap_or_else(|e| {
                tracing::warn!("condense checkpoint ignored: {e}");
                None
            })
        });
        let sent = self.middleware.compress_transcript(
            call.history,
            &core,
            &self.settings,
            stored.as_ref(),
        );
        if let Some(checkpoint) = &sent.checkpoint
            && stored.as_ref() != Some(checkpoint)
        {
            match self.store.save(checkpoint) {
                Ok(()) => *stored = Some(checkpoint.clone()),
                Err(e) => tracing::warn!(
                    "condense checkpoint not stored (the next call compacts again): {e}"
                ),
            }
        }
        let history = call.history;
        let messages: Vec<Message> = system
            .iter()
            .cloned()
            .chain(sent.messages(history.messages()))
            .collect();
        // The transcript has the count of every message the request keeps;
        // only the ones condense wrote are estimated.
        let tokens: Vec<u32> = system_tokens
            .into_iter()
            .chain(sent.items.iter().map(|item| match item {
                Item::Kept(i) => history.tokens()[*i as usize],
                other => estimate_message(other.message(history.messages())),
            }))
            .collect();
        self.cache.send(messages.clone(), &tokens);
        if let Some(report) = sent.report.guest()
            && sent.report.status() == Status::Compressed
            && report.trigger == Trigger::Compacted
        {
            call.compactions.push(Compaction {
                call: call.number,
                trigger: report.trigger,
                tokens_before: report.tokens_before,
                tokens_after: report.tokens_after,
                messages_folded: report.newly_folded,
                passes: report.passes,
                summary_by: sent.report.summary_by.as_ref().map(ToString::to_string),
                cache_breaks: self.cache.breaks() as u32,
                elapsed_us: sent.report.elapsed_us,
            });
        }
        call.request.messages = messages;
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

impl Hook for UsageMeter {
    fn after_model_call(&mut self, _: &Call<'_>, response: &ModelResponse) {
        self.calls
            .lock()
            .expect("the meter is not poisoned")
            .push(response.usage);
    }
}
