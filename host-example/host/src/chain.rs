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
use condense_model::tokens::clamp_to_tokens;
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
        // Keyed by the request as the compressor asks it: a job that
        // prepared it before the model's summary below came, and the
        // compaction after, find the same summary.
        let key = prepared::key(request, &self.chain_id, &scope);
        // The summary this one continues was a stand-in, and the model's
        // summary it stood in for is written: the chain continues that.
        let upgraded = (!request.previous_summary.is_empty())
            .then(|| {
                let stand_in =
                    prepared::stand_in_key(&request.previous_summary, &self.chain_id, &scope);
                kept.upgraded(stand_in)
            })
            .flatten()
            .map(|summary| wit::SummaryRequest {
                previous_summary: summary,
                ..request.clone()
            });
        let Some(asked) = upgraded else {
            return self.answer(&kept, key, &scope, request);
        };
        // Not in the agent's conversation, which shows the stand-in: on its
        // own, from the model's summary.
        let conversation = self.conversation.take();
        let answered = self.answer(&kept, key, &scope, &asked);
        self.conversation = conversation;
        answered
    }

    /// [`SummarizerSession::call`] with summaries prepared: the summary of
    /// `key`, kept or waited for, else written (`asked`, the request the
    /// chain is given).
    fn answer(
        &mut self,
        kept: &Arc<Prepared>,
        key: u128,
        scope: &Scope,
        asked: &wit::SummaryRequest,
    ) -> Result<Result<String, String>, GuestFailure> {
        if self.preparing {
            // Written once: a summary kept (by this host or another behind
            // the same store) is not written again.
            if let Some(text) = kept.get(key) {
                return Ok(Ok(text));
            }
            return self.write(kept, key, asked);
        }
        // The wait is the host's, not the guest's: it moves the deadline.
        let started = Instant::now();
        let (text, how) = kept.take(key);
        self.credit.add(started.elapsed());
        if let Some(text) = text {
            self.served(how);
            return Ok(Ok(text));
        }
        let waited = match how {
            PreparedUse::FellBack { waited_ms } => waited_ms,
            _ => None,
        };
        // Not ready, and the chain has a fallback after the model: the
        // fallback writes this compaction's summary now, and the model's is
        // written in the background (by the job still running, or one
        // started here) to take its place at the next compaction.
        let n = self.chain.len();
        let later = (n > 1 && kept.stands_in())
            .then(|| match kept.is_running(key) {
                true => Some(None),
                false => kept.later_slot().map(Some),
            })
            .flatten();
        let Some(slot) = later else {
            if waited.is_some() {
                // Its job is asking the model still: asking again would take
                // as long, so the fallback writes it now.
                self.fail_all_but_last(|| {
                    format!(
                        "its summary of this fold is being prepared ahead and was not written \
                         within the wait ({} ms)",
                        waited.unwrap_or_default()
                    )
                });
            }
            self.served(PreparedUse::FellBack { waited_ms: waited });
            return self.run_chain(asked);
        };
        if let Some(slot) = slot {
            let mut writer = self.background();
            let (kept, asked) = (kept.clone(), asked.clone());
            std::thread::spawn(move || {
                let _slot = slot;
                let _ = writer.write(&kept, key, &asked);
                drop(writer.finish());
            });
        }
        self.fail_all_but_last(|| {
            "the model's summary of this fold is written in the background, for the next \
             compaction; this one does not wait for it"
                .to_owned()
        });
        self.served(PreparedUse::Later { waited_ms: waited });
        let written = self.run_chain(asked);
        if let Ok(Ok(text)) = &written {
            // As the compressor keeps it, and sends it back next time.
            let kept_text = clamp_to_tokens(text.clone(), asked.max_tokens);
            kept.stand_in(
                prepared::stand_in_key(&kept_text, &self.chain_id, scope),
                key,
            );
        }
        written
    }

    /// Records how this call's summary came. A compaction past its plan
    /// asks twice: the plan's summary, then the rest on top of it.
    fn served(&mut self, how: PreparedUse) {
        self.summaries.prepared = Some(match (self.summaries.prepared.take(), how) {
            (
                Some(PreparedUse::Used | PreparedUse::Waited { .. }),
                PreparedUse::FellBack { .. } | PreparedUse::Later { .. },
            ) => PreparedUse::OnTop,
            (_, how) => how,
        });
    }

    /// Marks every summarizer but the chain's last as not to be asked in
    /// this call, for the reason `why` gives.
    fn fail_all_but_last(&mut self, why: impl Fn() -> String) {
        let n = self.chain.len();
        for k in 0..n - 1 {
            self.failed[k].get_or_insert_with(|| {
                failure(&self.chain[k].label, FailureKind::Summarizer, why())
            });
        }
    }

    /// Writes the summary of `key` with the whole chain, asked `request`,
    /// and keeps it: marked as being written meanwhile, so that a
    /// compaction that comes for it waits (within its bound) or knows.
    fn write(
        &mut self,
        kept: &Arc<Prepared>,
        key: u128,
        request: &wit::SummaryRequest,
    ) -> Result<Result<String, String>, GuestFailure> {
        let _writing = kept.begin(key);
        let written = self.run_chain(request);
        if let Ok(Ok(text)) = &written {
            kept.keep(key, text);
        }
        written
    }

    /// A chain like this one for a summary written in the background: its
    /// own instances and deadline, and the same model, settings, session
    /// and conversation.
    fn background(&self) -> SummarizerSession {
        SummarizerSession {
            sandbox: self.sandbox.clone(),
            chain: self.chain.clone(),
            deadline: self.sandbox.deadline(),
            credit: Arc::new(Credit::default()),
            llm: self.llm.clone(),
            settings: self.settings.clone(),
            live: (0..self.chain.len()).map(|_| None).collect(),
            failed: vec![None; self.chain.len()],
            summaries: Summaries::default(),
            sent: None,
            conversation: self.conversation.clone(),
            recall_offered: false,
            named: Vec::new(),
            prepared: self.prepared.clone(),
            chain_id: self.chain_id.clone(),
            owner: self.owner.clone(),
            preparing: true,
            due: false,
        }
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
