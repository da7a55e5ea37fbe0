//! The summarizer chain as the compressor's `summarizer` import serves it:
//! each summarizer of the chain tried in order within its share of the
//! call's time, the first summary written wins, and every failure is kept
//! to say why the chain fell through.

use crate::component::Loaded;
use crate::convert::{compressor_world, wit};
use crate::failure::{ComponentLabel, FailureKind, GuestFailure, failure};
use crate::folding::Sent;
use crate::llm::{Conversation, Llm};
use crate::llm_import::SummarizerHost;
use crate::prepared::{self, Prepared, PreparedUse, Scope};
use crate::sandbox::{Credit, Sandbox, StoreData};
use crate::summarizer::{SummarizerInstance, SummarizerPre, no_settings};
use condense_model::recall::{Handle, Span};
use std::sync::Arc;
use std::time::Instant;
use wasmtime::Store;

/// The summarizer chain as the compressor's `summarizer` import sees it
/// during one call: each summarizer instantiated on its first request and
/// reused for later ones, tried in order, all bound by the deadline of the
/// whole call.
pub(crate) struct SummarizerSession {
    pub(crate) sandbox: Arc<Sandbox>,
    pub(crate) chain: Arc<[Loaded<SummarizerPre<StoreData<SummarizerHost>>>]>,
    /// The call's deadline, before the credit moves it.
    pub(crate) deadline: Instant,
    /// The host's time in model calls during this call, which moves every
    /// deadline of the call (the compressor's store shares it).
    pub(crate) credit: Arc<Credit>,
    pub(crate) llm: Option<Arc<Llm>>,
    pub(crate) settings: Arc<[Option<String>]>,
    pub(crate) live: Vec<Option<(Store<StoreData<SummarizerHost>>, SummarizerInstance)>>,
    /// Each summarizer's failure this call: it is not asked again.
    pub(crate) failed: Vec<Option<GuestFailure>>,
    pub(crate) summaries: Summaries,
    /// The `compress` call's messages (none for a direct `summarize`).
    pub(crate) sent: Option<Sent>,
    /// What the compaction replaces, as the model was sent it, once the
    /// compressor said (`folding.replaces`).
    pub(crate) conversation: Option<Conversation>,
    /// The model can call `condense_recall` (`recall.offered`).
    pub(crate) recall_offered: bool,
    /// The handles the compressor's request names (`recall.named`).
    pub(crate) named: Vec<Handle>,
    /// Summaries prepared ahead, when the host keeps them.
    pub(crate) prepared: Option<Arc<Prepared>>,
    /// What names the chain in a prepared summary's key.
    pub(crate) chain_id: Arc<str>,
    /// The session this call is for, which a prepared summary's key names.
    pub(crate) owner: Option<Arc<str>>,
    /// This call prepares (`prepare.preparing`).
    pub(crate) preparing: bool,
    /// The compressor said the request passed its soft mark (`prepare.due`).
    pub(crate) due: bool,
}

/// What the chain did in one call.
#[derive(Default)]
pub(crate) struct Summaries {
    /// The summarizer that wrote the last summary.
    pub(crate) wrote: Option<ComponentLabel>,
    /// Why the ones before it did not.
    pub(crate) fell_through: Vec<String>,
    /// How the summary came, when summaries are prepared ahead.
    pub(crate) prepared: Option<PreparedUse>,
    /// When every summarizer failed: the last failure, naming the others.
    pub(crate) exhausted: Option<GuestFailure>,
}

impl SummarizerSession {
    /// Asks the chain: the first summary written wins. When every summarizer
    /// fails, the last one's failure decides how it surfaces — its own error
    /// goes to the compressor as an error, a trap traps the compressor —
    /// and the call's failure names every summarizer's.
    pub(crate) fn call(
        &mut self,
        request: &wit::SummaryRequest,
    ) -> Result<Result<String, String>, GuestFailure> {
        let Some(kept) = self.prepared.clone() else {
            return self.run_chain(request);
        };
        let scope = Scope {
            owner: self.owner.clone(),
            shaped_by: self.llm.as_ref().and_then(|llm| llm.shaped_by()),
        };
        let key = prepared::key(request, &self.chain_id, &scope);
        if self.preparing {
            // Written once: a summary kept (by this host or another behind
            // the same store) is not written again.
            if let Some(text) = kept.get(key) {
                return Ok(Ok(text));
            }
            let _writing = kept.begin(key);
            let written = self.run_chain(request);
            if let Ok(Ok(text)) = &written {
                kept.keep(key, text);
            }
            return written;
        }
        // The wait is the host's, not the guest's: it moves the deadline.
        let started = Instant::now();
        let (text, how) = kept.take(key);
        self.credit.add(started.elapsed());
        // A compaction past its plan asks twice: the plan's summary, then
        // the rest on top of it.
        self.summaries.prepared = Some(match (self.summaries.prepared.take(), how) {
            (
                Some(PreparedUse::Used | PreparedUse::Waited { .. }),
                PreparedUse::FellBack { .. },
            ) => PreparedUse::OnTop,
            (_, how) => how,
        });
        if let Some(text) = text {
            return Ok(Ok(text));
        }
        // Its job is writing it still, past the wait: the summarizers
        // before the last would take as long again (the job is asking
        // them), so the last one, the chain's fallback, writes it now.
        if let Some(PreparedUse::FellBack {
            waited_ms: Some(waited),
        }) = self.summaries.prepared
        {
            let n = self.chain.len();
            for k in 0..n - 1 {
                self.failed[k].get_or_insert_with(|| {
                    let why = format!(
                        "its summary of this fold is being prepared ahead and was not written \
                         within the wait ({waited} ms)"
                    );
                    failure(&self.chain[k].label, FailureKind::Summarizer, why)
                });
            }
        }
        self.run_chain(request)
    }

    /// The chain, asked: see [`SummarizerSession::call`].
    fn run_chain(
        &mut self,
        request: &wit::SummaryRequest,
    ) -> Result<Result<String, String>, GuestFailure> {
        let n = self.chain.len();
        let mut fell = Vec::new();
        let mut last = None;
        for k in 0..n {
            if let Some(failure) = &self.failed[k] {
                fell.push(failure.to_string());
                last = Some(Err(failure.clone()));
                continue;
            }
            // This summarizer's share of the time left, so that one that
            // runs out of it leaves time for the next. Model time spent so
            // far is not the guests': it moves the deadline.
            let now = Instant::now();
            let deadline = self.deadline + self.credit.total();
            let share = deadline.saturating_duration_since(now) / (n - k) as u32;
            match self.call_guest(k, request, now + share) {
                Ok(Ok(text)) => {
                    self.summaries.wrote = Some(self.chain[k].label.clone());
                    self.summaries.fell_through = fell;
                    return Ok(Ok(text));
                }
                Ok(Err(why)) => {
                    let refusal =
                        failure(&self.chain[k].label, FailureKind::Summarizer, why.clone());
                    fell.push(refusal.to_string());
                    self.failed[k] = Some(refusal.clone());
                    last = Some(Ok(refusal));
                }
                Err(failure) => {
                    fell.push(failure.to_string());
                    self.failed[k] = Some(failure.clone());
                    last = Some(Err(failure));
                }
            }
        }
        let (refused, mut failure) = match last.expect("a chain is never empty") {
            Ok(refusal) => (true, refusal),
            Err(failure) => (false, failure),
        };
        if fell.len() > 1 {
            fell.pop();
            failure.detail = format!("{} (before it: {})", failure.detail, fell.join("; "));
        }
        self.summaries.exhausted = Some(failure.clone());
        if refused {
            Ok(Err(failure.detail))
        } else {
            Err(failure)
        }
    }

    fn call_guest(
        &mut self,
        k: usize,
        request: &wit::SummaryRequest,
        deadline: Instant,
    ) -> Result<Result<String, String>, GuestFailure> {
        let guest = &self.chain[k];
        let label = &guest.label;
        let (store, instance) = match &mut self.live[k] {
            Some(live) => {
                self.sandbox.set_deadline(&mut live.0, deadline);
                live
            }
            None => {
                let host = SummarizerHost {
                    llm: self.llm.clone(),
                    credit: self.credit.clone(),
                    conversation: None,
                };
                let mut store = self.sandbox.store(host, deadline, &self.credit);
                let instance = guest
                    .pre
                    .instantiate(&mut store)
                    .map_err(|e| failure(label, FailureKind::Instantiate, format!("{e:#}")))?;
                self.live[k].insert((store, instance))
            }
        };
        store.data_mut().host.conversation = self.conversation.clone();
        // Its own settings, when the host has them and the request (the
        // compressor's always) has none.
        let configured;
        let request = match &self.settings[k] {
            Some(settings) if no_settings(&request.settings) => {
                configured = wit::SummaryRequest {
                    settings: settings.clone(),
                    ..request.clone()
                };
                &configured
            }
            _ => request,
        };
        instance
            .summarizer
            .call_summarize(&mut *store, request)
            .map_err(|e| {
                let (stop, detail) = self.sandbox.stopped(store.data(), &e);
                failure(label, stop.into(), detail)
            })
    }

    /// Forwards the summarizers' stdio and says what the chain did.
    /// What the chain did, and the handles the compressor named.
    /// And whether the compressor said the request passed its soft mark.
    pub(crate) fn finish(self) -> (Summaries, Vec<Handle>, bool) {
        for (live, guest) in self.live.iter().zip(self.chain.iter()) {
            if let Some((store, _)) = live {
                store.data().forward_output(&guest.label);
            }
        }
        (self.summaries, self.named, self.due)
    }
}

impl compressor_world::condense::middleware::summarizer::Host for SummarizerSession {
    fn summarize(
        &mut self,
        request: wit::SummaryRequest,
    ) -> wasmtime::Result<Result<String, String>> {
        // A summarizer's own error goes to the compressor as such; a trap
        // traps the compressor, and `Runtime::call` reports the summarizer's
        // failure recorded by `call`, not this message.
        self.call(&request)
            .map_err(|failure| wasmtime::format_err!("{failure}"))
    }
}

impl compressor_world::condense::middleware::folding::Host for SummarizerSession {
    fn replaces(&mut self, items: Vec<wit::Item>) -> wasmtime::Result<()> {
        self.conversation = self.sent.as_ref().and_then(|sent| sent.resolve(items));
        Ok(())
    }
}

impl compressor_world::condense::middleware::recall::Host for SummarizerSession {
    fn offered(&mut self) -> wasmtime::Result<bool> {
        Ok(self.recall_offered)
    }

    fn named(
        &mut self,
        handles: Vec<compressor_world::condense::middleware::recall::Handle>,
    ) -> wasmtime::Result<()> {
        // Spans as the guest said them, by the kind its id names (`f`: a
        // fold): the host checks each against the history before anything
        // is sent (`Middleware::validate`).
        self.named = handles
            .into_iter()
            .map(|h| Handle {
                span: if h.id.starts_with('f') {
                    Span::Fold {
                        end: h.end as usize,
                    }
                } else {
                    Span::Message(h.start as usize)
                },
                id: h.id,
            })
            .collect();
        Ok(())
    }
}

impl compressor_world::condense::middleware::prepare::Host for SummarizerSession {
    fn preparing(&mut self) -> wasmtime::Result<bool> {
        Ok(self.preparing)
    }

    fn due(&mut self) -> wasmtime::Result<()> {
        self.due = true;
        Ok(())
    }
}

impl compressor_world::condense::middleware::types::Host for SummarizerSession {}
