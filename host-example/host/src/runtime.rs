//! Loads a compressor and a summarizer component and runs calls through them.
//!
//! Both components are compiled and linked once, in [`Runtime::new`]; a call
//! instantiates the compressor in a fresh store, and the summarizer in a store
//! of its own the first time the compressor asks for a summary. Every failure
//! comes back as a [`GuestFailure`] that names the component at fault.

use crate::convert::compressor_world::{CompressorWorld, CompressorWorldPre};
use crate::convert::summarizer_world::{
    LlmSummarizerWorld as SummarizerWorld, LlmSummarizerWorldPre as SummarizerWorldPre,
};
use crate::convert::{compressor_world, summarizer_world, wit};
use crate::llm::{ChatMessage, ChatRequest, Llm};
use crate::sandbox::{Credit, Limits, Sandbox, StoreData};
use condense_model::{Checkpoint, CoreConfig, Item, Message, Outcome, Role, SummaryRequest};
use serde::Serialize;
use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use wasmparser::Payload;
use wasmtime::Store;
use wasmtime::component::{HasSelf, InstancePre, Linker};

/// The version of `wit/condense.wit` this host speaks.
pub const CONTRACT_VERSION: &str = "0.2.0";

/// Where a component's bytes come from. Paths let a host swap components
/// without being rebuilt.
#[derive(Clone, Debug)]
pub enum ComponentSource {
    /// Bytes the host already holds (e.g. built into its binary).
    Embedded(&'static [u8]),
    /// Bytes the host holds, under a name that tells them from another
    /// embedded component of the same role (the `llm` summarizer beside the
    /// heuristic one): reports call it "summarizer `llm`".
    Named(&'static str, &'static [u8]),
    /// A component file, read once when the runtime is built.
    Path(PathBuf),
}

/// What a component is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ComponentRole {
    Compressor,
    Summarizer,
}

impl fmt::Display for ComponentRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ComponentRole::Compressor => "compressor",
            ComponentRole::Summarizer => "summarizer",
        })
    }
}

/// Names a component in errors and reports: "embedded compressor" or
/// "summarizer `my_summ.wasm`".
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ComponentLabel {
    pub role: ComponentRole,
    /// File name of a component loaded from a path; `None` when embedded.
    pub file: Option<String>,
}

impl fmt::Display for ComponentLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{} `{file}`", self.role),
            None => write!(f, "embedded {}", self.role),
        }
    }
}

/// How a guest call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// Unreadable, not a component, needs imports the host does not give, or
    /// does not export what its role requires.
    Load,
    /// Could not be instantiated for a call (e.g. the instance pool is full).
    Instantiate,
    /// Ran past the call's deadline (epoch interruption).
    Deadline,
    /// Tried to grow its memory beyond the cap.
    OutOfMemory,
    /// Panicked or aborted (wasm `unreachable`).
    Panic,
    StackOverflow,
    /// Any other trap or host-side error during the call.
    Trap,
    /// The compressor returned its typed `compress-error`.
    CompressError,
    /// The compressor could not use the checkpoint of an offset call; the
    /// middleware calls again with the whole history.
    NeedsFullHistory,
    /// No summarizer could write the summary the fold needed.
    Summarizer,
    /// The compressor returned output that breaks condense's invariants.
    InvalidOutput,
}

/// A failed guest call: which component, what kind of failure, and the detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuestFailure {
    pub component: ComponentLabel,
    pub kind: FailureKind,
    pub detail: String,
}

impl fmt::Display for GuestFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            FailureKind::Load => "could not be loaded",
            FailureKind::Instantiate => "could not be instantiated",
            FailureKind::Deadline
            | FailureKind::OutOfMemory
            | FailureKind::Panic
            | FailureKind::StackOverflow
            | FailureKind::Trap => "trapped",
            FailureKind::CompressError => "refused to compress",
            FailureKind::NeedsFullHistory => "needs the whole history",
            FailureKind::Summarizer => "refused to summarize",
            FailureKind::InvalidOutput => "returned invalid output",
        };
        write!(f, "{} {what}: {}", self.component, self.detail)
    }
}

impl std::error::Error for GuestFailure {}

/// A compressor and a summarizer, compiled and linked, ready for calls from
/// any number of threads (up to [`Limits::max_concurrent_calls`] at once).
pub struct Runtime {
    sandbox: Arc<Sandbox>,
    compressor: Loaded<CompressorWorldPre<StoreData<SummarizerSession>>>,
    /// The summarizer chain, tried in order (never empty).
    summarizers: Arc<[Loaded<SummarizerWorldPre<StoreData<SummarizerHost>>>]>,
    /// The model behind the summarizers' `llm` import, if one is configured.
    llm: Option<Arc<Llm>>,
    /// Per summarizer of the chain, its own settings JSON from the host's
    /// configuration, handed to it in place of what the compressor sends.
    summarizer_settings: Arc<[Option<String>]>,
}

/// A compress call that returned: the compressor's outcome, and which
/// summarizer of the chain wrote the summary (if one was asked) after which
/// others failed.
#[derive(Clone, Debug)]
pub struct Called {
    pub outcome: Outcome,
    pub summary_by: Option<ComponentLabel>,
    /// Why the summarizers before `summary_by` did not write it.
    pub fell_through: Vec<String>,
}

/// A compiled, linked component and its name.
struct Loaded<P> {
    label: ComponentLabel,
    pre: P,
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
                        SummarizerWorld::add_to_linker::<_, HasSelf<SummarizerHost>>(
                            linker,
                            |data| &mut data.host,
                        )
                    },
                    SummarizerWorldPre::new,
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
        })
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
        self
    }

    /// The runtime with `llm` behind its summarizers' `llm` import. Without
    /// one, a summarizer's model call fails (and the chain falls through).
    pub fn with_llm(mut self, llm: Llm) -> Runtime {
        self.llm = Some(Arc::new(llm));
        self
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

    /// One `compress` call: `history` is the whole history, of which the
    /// compressor is sent the part from `offset` on (0, or the checkpoint's
    /// boundary when the host checked that the messages before it are
    /// unchanged); `settings` is the compressor's settings JSON; `tokens`
    /// the host's count of each message sent (`None`: the compressor
    /// estimates them). The guest's output is returned as it is: checking
    /// it against the invariants is the middleware's job.
    pub fn call(
        &self,
        history: &[Message],
        offset: usize,
        config: &CoreConfig,
        settings: &str,
        checkpoint: Option<&Checkpoint>,
        tokens: Option<&[u32]>,
    ) -> Result<Called, GuestFailure> {
        let (mut store, instance) = self.compressor_instance()?;
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
            let (kind, detail) = self.sandbox.failure(store.data(), &e);
            failure(label, kind, detail)
        });
        let data = store.into_data();
        data.forward_output(label);
        let summaries = data.host.finish();
        match result {
            Ok(Ok(outcome)) => Ok(Called {
                outcome: outcome.into(),
                summary_by: summaries.wrote,
                fell_through: summaries.fell_through,
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
            let (kind, detail) = self.sandbox.failure(store.data(), &e);
            failure(label, kind, detail)
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
        }
    }
}

/// The messages a `compress` call was sent, shared with its session so that
/// `folding.replaces` can be resolved by index without copying them again.
struct Sent {
    request: Arc<wit::CompressRequest>,
    /// The messages before `request.offset` that a fold keeps: the leading
    /// system messages and the last turn opener (pinned when the boundary
    /// fell inside its turn), by index. Only these are copied: a call
    /// between compactions must not cost the folded history.
    earlier: Vec<(u32, Message)>,
}

impl Sent {
    fn new(request: Arc<wit::CompressRequest>, history: &[Message]) -> Sent {
        let before = &history[..request.offset as usize];
        let leading = before.iter().take_while(|m| m.role == Role::System).count();
        let opener = before[leading..]
            .iter()
            .rposition(|m| m.role == Role::User && m.tool_results().next().is_none())
            .map(|at| leading + at);
        let earlier = (0..leading)
            .chain(opener)
            .map(|i| (i as u32, before[i].clone()))
            .collect();
        Sent { request, earlier }
    }

    /// The messages `items` stand for; `None` when one is a message before
    /// the offset that was not kept aside (a system message in the middle
    /// of the folded history), and then the summarizer sends its own
    /// request. Items out of order are `None` too: like an outcome's, the
    /// indices increase, so what a compressor names costs the host at most
    /// one copy of each message it was sent.
    fn resolve(&self, items: Vec<wit::Item>) -> Option<Vec<Message>> {
        let offset = self.request.offset;
        let mut next = 0;
        let mut written = 0;
        items
            .into_iter()
            .map(|item| match Item::from(item) {
                Item::Kept(i) | Item::Rewritten(i, _) if i < next => None,
                Item::Written(_) if written == 2 => None,
                item => {
                    match &item {
                        Item::Written(_) => written += 1,
                        Item::Kept(i) | Item::Rewritten(i, _) => next = i.saturating_add(1),
                    }
                    Some(item)
                }
            })
            .map(|item| match item? {
                Item::Kept(i) if i < offset => self
                    .earlier
                    .iter()
                    .find(|(at, _)| *at == i)
                    .map(|(_, m)| m.clone()),
                Item::Kept(i) => self
                    .request
                    .history
                    .get((i - offset) as usize)
                    .cloned()
                    .map(Message::from),
                Item::Rewritten(_, message) | Item::Written(message) => Some(message),
            })
            .collect()
    }
}

/// The summarizer chain as the compressor's `summarizer` import sees it
/// during one call: each summarizer instantiated on its first request and
/// reused for later ones, tried in order, all bound by the deadline of the
/// whole call.
struct SummarizerSession {
    sandbox: Arc<Sandbox>,
    chain: Arc<[Loaded<SummarizerWorldPre<StoreData<SummarizerHost>>>]>,
    /// The call's deadline, before the credit moves it.
    deadline: Instant,
    /// The host's time in model calls during this call, which moves every
    /// deadline of the call (the compressor's store shares it).
    credit: Arc<Credit>,
    llm: Option<Arc<Llm>>,
    settings: Arc<[Option<String>]>,
    live: Vec<Option<(Store<StoreData<SummarizerHost>>, SummarizerWorld)>>,
    /// Each summarizer's failure this call: it is not asked again.
    failed: Vec<Option<GuestFailure>>,
    summaries: Summaries,
    /// The `compress` call's messages (none for a direct `summarize`).
    sent: Option<Sent>,
    /// What the compaction replaces, as the model was sent it, once the
    /// compressor said (`folding.replaces`).
    conversation: Option<Arc<[Message]>>,
}

/// What the chain did in one call.
#[derive(Default)]
struct Summaries {
    /// The summarizer that wrote the last summary.
    wrote: Option<ComponentLabel>,
    /// Why the ones before it did not.
    fell_through: Vec<String>,
    /// When every summarizer failed: the last failure, naming the others.
    exhausted: Option<GuestFailure>,
}

impl SummarizerSession {
    /// Asks the chain: the first summary written wins. When every summarizer
    /// fails, the last one's failure decides how it surfaces — its own error
    /// goes to the compressor as an error, a trap traps the compressor —
    /// and the call's failure names every summarizer's.
    fn call(
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
            Some(settings) if matches!(request.settings.trim(), "" | "{}") => {
                configured = wit::SummaryRequest {
                    settings: settings.clone(),
                    ..request.clone()
                };
                &configured
            }
            _ => request,
        };
        instance
            .condense_middleware_summarizer()
            .call_summarize(&mut *store, request)
            .map_err(|e| {
                let (kind, detail) = self.sandbox.failure(store.data(), &e);
                failure(label, kind, detail)
            })
    }

    /// Forwards the summarizers' stdio and says what the chain did.
    fn finish(self) -> Summaries {
        for (live, guest) in self.live.iter().zip(self.chain.iter()) {
            if let Some((store, _)) = live {
                store.data().forward_output(&guest.label);
            }
        }
        self.summaries
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
        self.conversation = self
            .sent
            .as_ref()
            .and_then(|sent| sent.resolve(items))
            .map(Arc::from);
        Ok(())
    }
}

impl compressor_world::condense::middleware::types::Host for SummarizerSession {}

/// What a summarizer's store holds for its `llm` import.
struct SummarizerHost {
    llm: Option<Arc<Llm>>,
    credit: Arc<Credit>,
    /// What the compaction being summarised replaces, if the compressor said.
    conversation: Option<Arc<[Message]>>,
}

impl SummarizerHost {
    fn ask(
        &mut self,
        conversation: Option<Arc<[Message]>>,
        request: wit::ChatRequest,
    ) -> Result<String, String> {
        let Some(llm) = &self.llm else {
            return Err("this host has no model for summarizers (configure [llm])".to_owned());
        };
        let request = ChatRequest {
            conversation,
            messages: request
                .messages
                .into_iter()
                .map(|m| ChatMessage {
                    role: m.role.into(),
                    content: m.content,
                })
                .collect(),
            max_tokens: request.max_tokens,
        };
        let (answer, took) = llm.chat(request, self.credit.total());
        self.credit.add(took);
        answer
    }
}

impl summarizer_world::condense::middleware::llm::Host for SummarizerHost {
    fn chat(&mut self, request: wit::ChatRequest) -> Result<String, String> {
        self.ask(None, request)
    }

    fn conversation_tokens(&mut self) -> Option<u32> {
        let conversation = self.conversation.as_ref()?;
        Some(self.llm.as_ref()?.conversation_tokens(conversation))
    }

    fn chat_after_conversation(&mut self, request: wit::ChatRequest) -> Result<String, String> {
        let Some(conversation) = self.conversation.clone() else {
            return Err(
                "the host has no conversation for this summary: it is asked outside a \
                        compaction, or the compressor did not say what it folds"
                    .to_owned(),
            );
        };
        self.ask(Some(conversation), request)
    }

    fn complete(&mut self, request: wit::Completion) -> Result<String, String> {
        self.chat(wit::ChatRequest {
            messages: vec![
                wit::ChatMessage {
                    role: wit::Role::System,
                    content: request.system,
                },
                wit::ChatMessage {
                    role: wit::Role::User,
                    content: request.prompt,
                },
            ],
            max_tokens: request.max_tokens,
        })
    }
}

impl compressor_world::condense::middleware::types::Host for SummarizerHost {}

fn failure(component: &ComponentLabel, kind: FailureKind, detail: String) -> GuestFailure {
    GuestFailure {
        component: component.clone(),
        kind,
        detail,
    }
}

fn label(role: ComponentRole, source: &ComponentSource) -> ComponentLabel {
    let file = match source {
        ComponentSource::Embedded(_) => None,
        ComponentSource::Named(name, _) => Some((*name).to_owned()),
        ComponentSource::Path(path) => Some(path.file_name().map_or_else(
            || path.display().to_string(),
            |f| f.to_string_lossy().into_owned(),
        )),
    };
    ComponentLabel { role, file }
}

/// Reads, compiles and links one component: `add_imports` adds what its world
/// imports to the linker, `typed` checks its exports (the world's `…Pre::new`).
fn load<T: Send + 'static, P>(
    sandbox: &Sandbox,
    role: ComponentRole,
    source: &ComponentSource,
    world: &str,
    add_imports: impl FnOnce(&mut Linker<StoreData<T>>) -> wasmtime::Result<()>,
    typed: impl FnOnce(InstancePre<StoreData<T>>) -> wasmtime::Result<P>,
) -> Result<Loaded<P>, GuestFailure> {
    let label = label(role, source);
    let fail = |detail: String| failure(&label, FailureKind::Load, detail);
    let bytes = match source {
        ComponentSource::Embedded(bytes) | ComponentSource::Named(_, bytes) => {
            Cow::Borrowed(*bytes)
        }
        ComponentSource::Path(path) => Cow::Owned(read(path).map_err(fail)?),
    };
    // Another contract version fails to link with a message about a missing
    // interface; say instead what it was built for, and before compiling it
    // (which takes the better part of a second).
    let interface = format!("condense:middleware/{role}@");
    if let Some(version) = exported_version(&bytes, &interface).filter(|v| v != CONTRACT_VERSION) {
        return Err(fail(format!(
            "was built for condense:middleware@{version}; this host speaks {CONTRACT_VERSION}"
        )));
    }
    let component = sandbox
        .compile(&bytes)
        .map_err(|e| fail(format!("not a valid component: {e:#}")))?;
    let mut linker = sandbox
        .linker::<T>()
        .map_err(|e| fail(format!("cannot link WASI: {e:#}")))?;
    add_imports(&mut linker)
        .map_err(|e| fail(format!("cannot link the `{world}` imports: {e:#}")))?;
    // Missing imports fail `instantiate_pre`, missing exports `typed`: either
    // way the component is not a `world`.
    let pre = linker
        .instantiate_pre(&component)
        .and_then(typed)
        .map_err(|e| {
            fail(format!(
                "does not implement `{world}` of wit/condense.wit: {e:#}"
            ))
        })?;
    Ok(Loaded { label, pre })
}

/// The version after `interface` (`condense:middleware/compressor@`) of the
/// component's own export of it, read from the binary's top-level export
/// section. `None` for bytes that are not a component or export no version
/// of it: compiling and linking then say what is wrong.
fn exported_version(bytes: &[u8], interface: &str) -> Option<String> {
    // The parser also walks the nested modules and components, whose
    // exports are not the component's.
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        match payload.ok()? {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.checked_sub(1)?,
            Payload::ComponentExportSection(exports) if depth == 0 => {
                for export in exports {
                    if let Some(version) = export.ok()?.name.name.strip_prefix(interface) {
                        return Some(version.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    None
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `folding.replaces` resolved against an offset call: the indices sent,
    /// the leading system message and the last turn opener before the offset;
    /// anything else, or indices out of order, is no conversation.
    #[test]
    fn what_a_fold_replaces_is_resolved_from_the_calls_own_messages() {
        let text = |role, t: &str| Message::text(role, t);
        let history = vec![
            text(Role::System, "rules"),
            text(Role::User, "first task"),
            text(Role::Assistant, "done"),
            text(Role::User, "second task"),
            text(Role::Assistant, "working"),
            text(Role::Assistant, "still working"),
            text(Role::User, "more"),
        ];
        let offset = 5;
        let request = Arc::new(wit::CompressRequest {
            history: history[offset..].iter().map(Into::into).collect(),
            offset: offset as u32,
            config: (&CoreConfig::for_threshold(1_000)).into(),
            settings: "{}".into(),
            checkpoint: None,
            tokens: None,
        });
        let sent = Sent::new(request, &history);
        let pair = text(Role::User, "[condense summary] s");
        let items = |items: &[Item]| items.iter().map(wit::Item::from).collect::<Vec<_>>();
        let resolved = sent.resolve(items(&[
            Item::Kept(0),
            Item::Written(pair.clone()),
            Item::Kept(3),
            Item::Kept(5),
        ]));
        assert_eq!(
            resolved,
            Some(vec![
                history[0].clone(),
                pair.clone(),
                history[3].clone(),
                history[5].clone()
            ])
        );
        // Message 1 was not kept aside; 5 twice is out of order.
        assert_eq!(sent.resolve(items(&[Item::Kept(1)])), None);
        assert_eq!(sent.resolve(items(&[Item::Kept(5), Item::Kept(5)])), None);
        assert_eq!(
            sent.resolve(items(&vec![Item::Written(pair.clone()); 3])),
            None
        );
        assert_eq!(sent.resolve(items(&[Item::Kept(9)])), None);
    }

    #[test]
    fn labels_name_the_file_or_say_embedded() {
        let path = ComponentSource::Path("/x/my_summ.wasm".into());
        assert_eq!(
            label(ComponentRole::Summarizer, &path).to_string(),
            "summarizer `my_summ.wasm`"
        );
        assert_eq!(
            label(ComponentRole::Compressor, &ComponentSource::Embedded(b"")).to_string(),
            "embedded compressor"
        );
    }

    #[test]
    fn failures_read_as_sentences() {
        let failure = GuestFailure {
            component: label(
                ComponentRole::Summarizer,
                &ComponentSource::Path("my_summ.wasm".into()),
            ),
            kind: FailureKind::Deadline,
            detail: "wasm trap: interrupt (deadline of 5s exceeded)".into(),
        };
        assert_eq!(
            failure.to_string(),
            "summarizer `my_summ.wasm` trapped: wasm trap: interrupt (deadline of 5s exceeded)"
        );
    }

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
