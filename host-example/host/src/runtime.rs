//! Runs calls through a compressor and a summarizer chain.
//!
//! Both components are compiled and linked once, in [`Runtime::new`]; a call
//! instantiates the compressor in a fresh store, and the summarizer in a store
//! of its own the first time the compressor asks for a summary. Every failure
//! comes back as a [`GuestFailure`] that names the component at fault.

use crate::chain::{Summaries, SummarizerSession};
use crate::component::{ComponentSource, Loaded, load};
use crate::convert::compressor_world::{CompressorWorld, CompressorWorldPre};
use crate::convert::summarizer_world::LlmSummarizerWorld;
use crate::convert::summarizer_world::exports::condense::middleware::summarizer_settings;
use crate::convert::wit;
use crate::failure::{ComponentLabel, ComponentRole, FailureKind, GuestFailure, failure};
use crate::folding::Sent;
use crate::llm::{LanguageModel, Llm};
use crate::llm_import::SummarizerHost;
use crate::prepared::{Prepared, PreparedUse};
use crate::sandbox::{Credit, Limits, Sandbox, StoreData};
use crate::summarizer::{SummarizerPre, no_settings};
use condense_model::{Checkpoint, CoreConfig, Message, Outcome, SummaryRequest};
use std::sync::Arc;
use std::time::Instant;
use wasmtime::Store;
use wasmtime::component::HasSelf;

/// A compressor and a summarizer, compiled and linked, ready for calls from
/// any number of threads (up to [`Limits::max_concurrent_calls`] at once).
/// A clone shares the compiled components and the engine: it costs a few
/// reference counts ([`Runtime::asking`] makes one per request).
#[derive(Clone)]
pub struct Runtime {
    sandbox: Arc<Sandbox>,
    compressor: Loaded<CompressorWorldPre<StoreData<SummarizerSession>>>,
    /// The summarizer chain, tried in order (never empty).
    summarizers: Arc<[Loaded<SummarizerPre<StoreData<SummarizerHost>>>]>,
    /// The model behind the summarizers' `llm` import, if one is configured.
    llm: Option<Arc<Llm>>,
    /// Per summarizer of the chain, its own settings JSON from the host's
    /// configuration, handed to it in place of what the compressor sends.
    summarizer_settings: Arc<[Option<String>]>,
    /// The chain's components and settings, which name it in a prepared
    /// summary's key.
    chain_id: Arc<str>,
}

/// A compress call that returned: the compressor's outcome, and which
/// summarizer of the chain wrote the summary (if one was asked) after which
/// others failed.
/// What one `compress` call is given.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// The whole history, of which the compressor is sent the part from
    /// `offset` on (0, or the checkpoint's boundary when the host checked
    /// that the messages before it are unchanged).
    pub history: &'a [Message],
    pub offset: usize,
    pub config: &'a CoreConfig,
    /// The compressor's settings JSON.
    pub settings: &'a str,
    pub checkpoint: Option<&'a Checkpoint>,
    /// The host's count of each message sent (`None`: the compressor
    /// estimates them).
    pub tokens: Option<&'a [u32]>,
    /// Whether the model can call `condense_recall` (the compressor's
    /// `recall.offered`).
    pub recall: bool,
    /// Summaries prepared ahead, consulted before the chain is asked
    /// (`None`: none are kept, the chain writes every summary).
    pub prepared: Option<&'a Arc<Prepared>>,
    /// This call prepares the next compaction's summary (the compressor's
    /// `prepare.preparing`): the summary is kept in `prepared`, and the
    /// outcome is for no request.
    pub preparing: bool,
    /// The session this call is for (a session store's group), when the
    /// host keeps many: the summaries prepared ahead that it uses or keeps
    /// are that session's alone.
    pub owner: Option<&'a str>,
}

#[derive(Clone, Debug)]
pub struct Called {
    pub outcome: Outcome,
    pub summary_by: Option<ComponentLabel>,
    /// Why the summarizers before `summary_by` did not write it.
    pub fell_through: Vec<String>,
    /// How the summary came, when summaries are prepared ahead.
    pub prepared: Option<PreparedUse>,
}

/// Why a [`Runtime`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("a runtime needs at least one summarizer")]
    NoSummarizer,
    /// The limits do not make a usable engine.
    #[error("cannot set up the wasmtime engine: {0}")]
    Engine(String),
    /// A component cannot be read or compiled, was built for another
    /// contract version, or does not fit its world (kind
    /// [`FailureKind::Load`]).
    #[error(transparent)]
    Component(#[from] GuestFailure),
}

impl Runtime {
    /// Builds the engine and compiles both components.
    pub fn new(
        limits: Limits,
        compressor: ComponentSource,
        summarizer: ComponentSource,
    ) -> Result<Runtime, LoadError> {
        Runtime::with_summarizers(limits, compressor, vec![summarizer])
    }

    /// [`Runtime::new`] with a chain of summarizers: the compressor's request
    /// for a summary goes to the first; an error, a trap or its share of the
    /// time (the call's remaining time divided among those left) falls
    /// through to the next.
    pub fn with_summarizers(
        limits: Limits,
        compressor: ComponentSource,
        summarizers: Vec<ComponentSource>,
    ) -> Result<Runtime, LoadError> {
        if summarizers.is_empty() {
            return Err(LoadError::NoSummarizer);
        }
        let sandbox = Sandbox::new(limits).map_err(|e| LoadError::Engine(format!("{e:#}")))?;
        let compressor = load(
            &sandbox,
            ComponentRole::Compressor,
            &compressor,
            "compressor-world",
            |linker| {
                CompressorWorld::add_to_linker::<_, HasSelf<SummarizerSession>>(linker, |data| {
                    &mut data.host
                })
            },
            CompressorWorldPre::new,
        )?;
        let summarizers = summarizers
            .iter()
            .map(|source| {
                load(
                    &sandbox,
                    ComponentRole::Summarizer,
                    source,
                    "summarizer-world",
                    |linker| {
                        LlmSummarizerWorld::add_to_linker::<_, HasSelf<SummarizerHost>>(
                            linker,
                            |data| &mut data.host,
                        )
                    },
                    SummarizerPre::new,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let n = summarizers.len();
        Ok(Runtime {
            sandbox: Arc::new(sandbox),
            compressor,
            summarizers: summarizers.into(),
            llm: None,
            summarizer_settings: vec![None; n].into(),
            chain_id: Arc::from(""),
        }
        .identified())
    }

    /// The runtime with its `chain_id` made of its chain as configured.
    fn identified(mut self) -> Runtime {
        let mut id = String::new();
        for (s, settings) in self.summarizers.iter().zip(self.summarizer_settings.iter()) {
            id.push_str(&format!(
                "{} {}\n",
                s.label,
                settings.as_deref().unwrap_or("{}")
            ));
        }
        self.chain_id = id.into();
        self
    }

    /// The runtime with `settings` (a JSON object) as the settings of
    /// summarizer `index` of the chain: the compressor asks for a summary
    /// with none (`{}`), and the host, which knows each summarizer's
    /// configuration, fills them in (a request that has settings of its
    /// own, such as `condense summarize --settings`, keeps them). An index
    /// past the chain is ignored.
    pub fn with_summarizer_settings(mut self, index: usize, settings: String) -> Runtime {
        let mut all = self.summarizer_settings.to_vec();
        if let Some(slot) = all.get_mut(index) {
            *slot = Some(settings);
        }
        self.summarizer_settings = all.into();
        self.identified()
    }

    /// The runtime with `llm` behind its summarizers' `llm` import. Without
    /// one, a summarizer's model call fails (and the chain falls through).
    pub fn with_llm(mut self, llm: Llm) -> Runtime {
        self.llm = Some(Arc::new(llm));
        self
    }

    /// This runtime with `model` behind its summarizers' `llm` import, under
    /// the same limits, for the calls of one request: the proxy asks the
    /// client's own upstream with the client's key. Its breaker is its own,
    /// so one client's failing key never pauses another's summaries. A
    /// runtime with no model (no summarizer of its chain asks one) is
    /// returned as it is.
    pub fn asking(&self, model: Arc<dyn LanguageModel>) -> Runtime {
        let Some(llm) = &self.llm else {
            return self.clone();
        };
        Runtime {
            llm: Some(Arc::new(
                Llm::new(model, llm.limits()).with_clock(llm.clock().clone()),
            )),
            ..self.clone()
        }
    }

    pub fn limits(&self) -> &Limits {
        self.sandbox.limits()
    }

    pub fn compressor(&self) -> &ComponentLabel {
        &self.compressor.label
    }

    /// The first summarizer of the chain.
    pub fn summarizer(&self) -> &ComponentLabel {
        &self.summarizers[0].label
    }

    /// The summarizer chain, in the order it is tried.
    pub fn summarizers(&self) -> impl Iterator<Item = &ComponentLabel> {
        self.summarizers.iter().map(|s| &s.label)
    }

    /// One `compress` call ([`Call`]). The guest's output is returned as it
    /// is, with the handles it named: checking it against the invariants is
    /// the middleware's job.
    pub fn call(&self, call: Call<'_>) -> Result<Called, GuestFailure> {
        let Call {
            history,
            offset,
            config,
            settings,
            checkpoint,
            tokens,
            recall,
            prepared,
            preparing,
            owner,
        } = call;
        let (mut store, instance) = self.compressor_instance()?;
        let session = &mut store.data_mut().host;
        session.recall_offered = recall;
        session.prepared = prepared.cloned();
        session.preparing = preparing;
        session.owner = owner.map(Arc::from);
        let label = &self.compressor.label;
        let request = Arc::new(wit::CompressRequest {
            history: history[offset..].iter().map(Into::into).collect(),
            offset: u32::try_from(offset).unwrap_or(u32::MAX),
            config: config.into(),
            settings: settings.to_owned(),
            checkpoint: checkpoint.map(Into::into),
            tokens: tokens.map(<[u32]>::to_vec),
        });
        store.data_mut().host.sent = Some(Sent::new(request.clone(), history));
        let result = instance
            .condense_middleware_compressor()
            .call_compress(&mut store, &request);
        // Classified while the store can still tell why (denied memory, stderr).
        let result = result.map_err(|e| {
            let (stop, detail) = self.sandbox.stopped(store.data(), &e);
            failure(label, stop.into(), detail)
        });
        let data = store.into_data();
        data.forward_output(label);
        let (summaries, handles, prepare_due) = data.host.finish();
        match result {
            Ok(Ok(outcome)) => Ok(Called {
                outcome: condense_model::Outcome {
                    handles,
                    prepare_due,
                    ..outcome.into()
                },
                summary_by: summaries.wrote,
                fell_through: summaries.fell_through,
                prepared: summaries.prepared,
            }),
            Ok(Err(refusal)) => {
                let refusal = condense_model::CompressError::from(refusal);
                let kind = match refusal {
                    condense_model::CompressError::NeedsFullHistory(_) => {
                        FailureKind::NeedsFullHistory
                    }
                    // The summarizer said why: that is the failure, and it is
                    // the summarizer's.
                    condense_model::CompressError::SummarizerFailed(_) => {
                        if let Some(failure) = summaries.exhausted {
                            return Err(failure);
                        }
                        FailureKind::Summarizer
                    }
                    _ => FailureKind::CompressError,
                };
                Err(failure(label, kind, refusal.to_string()))
            }
            // A failed summary surfaces as a trap of the compressor, raised by
            // its `summarizer` import; the session kept the real cause.
            Err(trapped) => Err(summaries.exhausted.unwrap_or(trapped)),
        }
    }

    /// The compressor's own check of its settings JSON (its
    /// `validate-settings` export): `Ok(Err(why))` names the key and the
    /// problem. A host calls it once, when it loads its configuration.
    pub fn validate_settings(&self, settings: &str) -> Result<Result<(), String>, GuestFailure> {
        self.compressor_export(|instance, store| {
            instance
                .condense_middleware_compressor()
                .call_validate_settings(store, settings)
        })
    }

    /// The JSON Schema of the compressor's settings (its `settings-schema`
    /// export).
    pub fn settings_schema(&self) -> Result<String, GuestFailure> {
        self.compressor_export(|instance, store| {
            instance
                .condense_middleware_compressor()
                .call_settings_schema(store)
        })
    }

    /// A fresh compressor instance in its own store, bound by a deadline
    /// that starts now, its `summarizer` import served by the chain.
    fn compressor_instance(
        &self,
    ) -> Result<(Store<StoreData<SummarizerSession>>, CompressorWorld), GuestFailure> {
        let deadline = self.sandbox.deadline();
        let session = self.session(deadline);
        let credit = session.credit.clone();
        let mut store = self.sandbox.store(session, deadline, &credit);
        let label = &self.compressor.label;
        let instance = self
            .compressor
            .pre
            .instantiate(&mut store)
            .map_err(|e| failure(label, FailureKind::Instantiate, format!("{e:#}")))?;
        Ok((store, instance))
    }

    /// Calls one of the compressor's exports besides `compress` in a fresh
    /// instance, under the same limits.
    fn compressor_export<R>(
        &self,
        call: impl FnOnce(
            &CompressorWorld,
            &mut Store<StoreData<SummarizerSession>>,
        ) -> wasmtime::Result<R>,
    ) -> Result<R, GuestFailure> {
        let (mut store, instance) = self.compressor_instance()?;
        let label = &self.compressor.label;
        let result = call(&instance, &mut store).map_err(|e| {
            let (stop, detail) = self.sandbox.stopped(store.data(), &e);
            failure(label, stop.into(), detail)
        });
        store.into_data().forward_output(label);
        result
    }

    /// Summarizer `index` of the chain checks `settings`, the JSON its
    /// `summarize` would be handed (its `validate-settings` export):
    /// `Ok(Err(why))` names the key and the problem. A host calls it once,
    /// when it loads its configuration. A summarizer built before the
    /// `summarizer-settings` interface cannot check settings, so it accepts
    /// none (`{}`) and refuses any other.
    ///
    /// Panics when `index` is past the chain ([`Runtime::summarizers`]).
    pub fn validate_summarizer_settings(
        &self,
        index: usize,
        settings: &str,
    ) -> Result<Result<(), String>, GuestFailure> {
        self.summarizer_export(index, |exports, store| match exports {
            Some(exports) => exports.call_validate_settings(store, settings),
            None if no_settings(settings) => Ok(Ok(())),
            None => Ok(Err(
                "it was built without the `summarizer-settings` interface, so it cannot check \
                 settings and takes none"
                    .to_owned(),
            )),
        })
    }

    /// The JSON Schema of summarizer `index`'s settings (its
    /// `settings-schema` export); `None` for a summarizer built before the
    /// `summarizer-settings` interface.
    ///
    /// Panics when `index` is past the chain ([`Runtime::summarizers`]).
    pub fn summarizer_settings_schema(&self, index: usize) -> Result<Option<String>, GuestFailure> {
        self.summarizer_export(index, |exports, store| {
            exports
                .map(|exports| exports.call_settings_schema(store))
                .transpose()
        })
    }

    /// Calls one of summarizer `index`'s `summarizer-settings` exports (or
    /// `None` without them) in a fresh instance, under the usual limits.
    fn summarizer_export<R>(
        &self,
        index: usize,
        call: impl FnOnce(
            Option<&summarizer_settings::Guest>,
            &mut Store<StoreData<SummarizerHost>>,
        ) -> wasmtime::Result<R>,
    ) -> Result<R, GuestFailure> {
        let guest = &self.summarizers[index];
        let label = &guest.label;
        let credit = Arc::new(Credit::default());
        let host = SummarizerHost {
            llm: None,
            credit: credit.clone(),
            conversation: None,
        };
        let mut store = self.sandbox.store(host, self.sandbox.deadline(), &credit);
        let instance = guest
            .pre
            .instantiate(&mut store)
            .map_err(|e| failure(label, FailureKind::Instantiate, format!("{e:#}")))?;
        let result = call(instance.settings.as_ref(), &mut store).map_err(|e| {
            let (stop, detail) = self.sandbox.stopped(store.data(), &e);
            failure(label, stop.into(), detail)
        });
        store.into_data().forward_output(label);
        result
    }

    /// One `summarize` call, straight to the summarizer component: for hosts
    /// that fold on their own, and for trying a summarizer out.
    pub fn summarize(
        &self,
        request: &SummaryRequest,
    ) -> Result<Result<String, String>, GuestFailure> {
        let mut session = self.session(self.sandbox.deadline());
        let result = session.call(&request.into());
        let _ = session.finish();
        result
    }

    /// The summarizer chain for one call bound by `deadline`, with a fresh
    /// credit for the time its model calls take.
    fn session(&self, deadline: Instant) -> SummarizerSession {
        SummarizerSession {
            sandbox: self.sandbox.clone(),
            chain: self.summarizers.clone(),
            deadline,
            credit: Arc::new(Credit::default()),
            llm: self.llm.clone(),
            settings: self.summarizer_settings.clone(),
            live: (0..self.summarizers.len()).map(|_| None).collect(),
            failed: vec![None; self.summarizers.len()],
            summaries: Summaries::default(),
            sent: None,
            conversation: None,
            recall_offered: false,
            named: Vec::new(),
            prepared: None,
            chain_id: self.chain_id.clone(),
            owner: None,
            preparing: false,
            due: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_failure(result: Result<Runtime, LoadError>) -> GuestFailure {
        match result.err().expect("the runtime is not built") {
            LoadError::Component(failure) => failure,
            other => panic!("not a component's failure: {other}"),
        }
    }

    #[test]
    fn a_missing_file_is_a_load_failure_naming_it() {
        let source = ComponentSource::Path("/nonexistent/compressor.wasm".into());
        let limits = Limits {
            code_cache: crate::sandbox::CodeCache::Off,
            ..Limits::default()
        };
        let error = load_failure(Runtime::new(limits, source, ComponentSource::Embedded(b"")));
        assert_eq!(error.kind, FailureKind::Load);
        assert!(
            error
                .to_string()
                .starts_with("compressor `compressor.wasm` could not be loaded: cannot read"),
            "{error}"
        );
    }

    #[test]
    fn bytes_that_are_no_component_are_a_load_failure() {
        let limits = Limits {
            code_cache: crate::sandbox::CodeCache::Off,
            ..Limits::default()
        };
        let junk = ComponentSource::Embedded(b"\0asm junk");
        let error = load_failure(Runtime::new(limits, junk, ComponentSource::Embedded(b"")));
        assert_eq!(error.kind, FailureKind::Load);
        assert!(
            error
                .to_string()
                .starts_with("embedded compressor could not be loaded: not a valid component"),
            "{error}"
        );
    }
}
