//! The file's tables as types, each with its defaults: the fold knobs
//! ([`CoreKeys`]), `[components]`, `[limits]`, `[runtime]`, `[llm]`, and the
//! compressor's own keys, kept as written for the compressor to check.

use crate::models::{ModelTables, PRICE_KEYS, scaled};
use crate::pricing::{ModelPrice, PriceTable};
use crate::{LIMIT_RANGES, LLM_RANGES};
use condense_host::middleware::DEFAULT_MAX_REQUEST_BYTES;
use condense_host::{BodyConfig, ColdSettings, Limits, Recall};
use condense_model::{CORE_RANGES, CoreConfig, range};
use condense_replay::Prices;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The host's tables of the file, beside the fold knobs and the
/// compressor's keys; `summarizers` and `models` are tables of tables (by
/// summarizer, by model pattern).
pub(crate) const HOST_TABLES: [&str; 7] = [
    "components",
    "limits",
    "runtime",
    "llm",
    "summarizers",
    "models",
    "recall",
];

/// Components to load instead of the ones embedded in the binary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Components {
    /// Path of a compressor component (a `.wasm` file) to load instead of the
    /// embedded one; relative to the config file's directory. Unset: the
    /// embedded compressor.
    #[schemars(extend("x-default" = "embedded"))]
    pub compressor: Option<PathBuf>,
    /// Path of a summarizer component (a `.wasm` file) to load instead of the
    /// embedded one; relative to the config file's directory. Unset: the
    /// embedded heuristic summarizer.
    #[schemars(extend("x-default" = "embedded heuristic"))]
    pub summarizer: Option<PathBuf>,
    /// A chain of summarizers, tried in order: an error, a trap or running
    /// out of its share of the call's time (the time left divided among
    /// those left) falls through to the next. Each entry is `heuristic` (the
    /// embedded summarizer), `llm` (the embedded LLM summarizer, asking the
    /// model of `[llm]`) or the path of a component, relative to the config
    /// file's directory: `["llm", "heuristic"]`. Instead of `summarizer`.
    /// The report's `summary_by` names the one that wrote the summary,
    /// `fell_through` why the others did not.
    pub summarizers: Option<Vec<PathBuf>>,
}

/// The name that stands for the embedded summarizer in `summarizers`.
pub const EMBEDDED_SUMMARIZER: &str = "heuristic";

/// The name that stands for the embedded LLM summarizer in `summarizers`.
pub const LLM_SUMMARIZER: &str = "llm";

/// The embedded compressor's `prepare_at_permille` behind a chain that
/// starts with the LLM summarizer: half way. In the proxy's load bench
/// (`benches/proxy_prepare.rs`: 3 s a summary, 1 s a model call, 16
/// sessions of cc-opus-c at a 20k threshold) every compaction found its
/// summary written at 500 (p99 20 ms added), at 800 only 40% did (the rest
/// waited, p50 2 s): cc-opus-c grows by thousands of tokens a call, so 20%
/// of the way is one or two calls. Its price, replayed at a 40k threshold:
/// 1.10/1.30/1.11× the offline optimum on cc-opus-a/b/c, against
/// 1.09/1.08/1.07× without a plan (800: 1.08/1.17/1.12×).
pub const PREPARE_AT_PERMILLE: u32 = 500;

/// The largest `[llm] context_tokens`: no model's context is larger.
pub(crate) const CONTEXT_TOKENS_MAX: u32 = 10_000_000;

/// Whether a `summarizers` entry names an embedded summarizer, not a path.
pub(crate) fn is_builtin(entry: &Path) -> bool {
    entry.as_os_str() == EMBEDDED_SUMMARIZER || entry.as_os_str() == LLM_SUMMARIZER
}

/// The name a summarizer goes by in `[summarizers.NAME]`, reports and
/// events: `heuristic`, `llm`, or a component's file name.
pub(crate) fn summarizer_name(entry: &Path) -> String {
    if is_builtin(entry) {
        return entry.to_string_lossy().into_owned();
    }
    entry.file_name().map_or_else(
        || entry.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    )
}

/// The `[llm]` keys the LLM summarizer's settings take from there: the
/// model's context and how to ask it belong to the model's table, and are
/// refused in `[summarizers.llm]`.
pub(crate) const LLM_KEYS_FROM_LLM_TABLE: &[&str] = &["context_tokens", "cache_friendly"];

/// The model an LLM summarizer asks (`summarizers = ["llm", "heuristic"]`):
/// any OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM,
/// the llama.cpp server, a gateway). The host makes the calls; the
/// summarizer never sees the endpoint or the key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(transform = |s: &mut schemars::Schema| range::publish(s, LLM_RANGES))]
pub struct LlmSettings {
    /// The API root, up to and including the version:
    /// `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1` (Ollama).
    pub base_url: Option<String>,
    /// The model id, sent as `model`.
    pub model: Option<String>,
    /// The environment variable holding the API key: read by the host when
    /// it starts, sent only as the `Authorization` header, never shown to a
    /// guest, logged or reported. Unset: no key (a local server).
    pub api_key_env: Option<String>,
    /// Time one model call may take (its retries included), in ms.
    pub timeout_ms: u32,
    /// Time all the model calls of one compaction may take together, in ms;
    /// past it the LLM summarizer fails and the chain falls through. Not
    /// counted against `[limits] timeout_ms`.
    pub budget_ms: u32,
    /// The most tokens an answer may have.
    pub max_output_tokens: u32,
    /// Sent as `temperature` (0 to 2). Unset: the server's default.
    pub temperature: Option<f64>,
    /// How often a 429 or 5xx answer is retried.
    pub max_retries: u32,
    /// The model's context in tokens: longer input is summarized in chunks
    /// that fit it, oldest first, each folded into the running summary.
    pub context_tokens: u32,
    /// Failed calls in a row after which the host stops calling the model
    /// for `breaker_cooldown_ms` (the chain's next summarizer writes the
    /// summaries meanwhile).
    pub breaker_failures: u32,
    /// How long calls stay stopped after `breaker_failures`, in ms.
    pub breaker_cooldown_ms: u32,
    /// The LLM summarizer asks in the agent's own conversation: its request
    /// is the agent's system prompt, tools and folded messages exactly as
    /// the agent's model was sent them, with the instruction last, so that
    /// the provider's prompt cache serves it when `base_url` and `model` are
    /// the agent's. Off: its own, smaller transcript of the folded messages.
    pub cache_friendly: bool,
    /// condense proxy: whom the LLM summarizer asks. `client`: the upstream
    /// and model of the request being compacted, with the client's own
    /// credentials (held in memory for that request or its background job
    /// only), the summary request being the client's request up to the
    /// fold in its own format, which the provider's prompt cache serves;
    /// `context_tokens` does not bound it (the client's model took it
    /// whole). `endpoint`: `base_url` and `model` (a cheaper model, say).
    /// Unset: `endpoint` when `base_url` is set, else `client`. Every other
    /// program asks `base_url`.
    pub in_proxy: Option<InProxy>,
}

/// Whom the proxy's LLM summarizer asks (`[llm] in_proxy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InProxy {
    Client,
    Endpoint,
}

impl LlmSettings {
    /// Whether the proxy's LLM summarizer asks the client's own upstream
    /// (`in_proxy`, or no `base_url`).
    pub fn asks_client_in_proxy(&self) -> bool {
        match self.in_proxy {
            Some(InProxy::Client) => true,
            Some(InProxy::Endpoint) => false,
            None => self.base_url.is_none(),
        }
    }
}

impl Default for LlmSettings {
    fn default() -> Self {
        let limits = condense_host::llm::LlmLimits::default();
        LlmSettings {
            base_url: None,
            model: None,
            api_key_env: None,
            timeout_ms: limits.call_timeout.as_millis() as u32,
            budget_ms: limits.compaction_budget.as_millis() as u32,
            max_output_tokens: limits.max_output_tokens,
            temperature: None,
            max_retries: 2,
            context_tokens: 32_000,
            breaker_failures: limits.breaker_failures,
            breaker_cooldown_ms: limits.breaker_cooldown.as_millis() as u32,
            cache_friendly: true,
            in_proxy: None,
        }
    }
}

/// Sandbox limits per guest call, and the largest request accepted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(transform = |s: &mut schemars::Schema| range::publish(s, LIMIT_RANGES))]
pub struct LimitSettings {
    /// Linear memory a guest instance may grow to, in MiB.
    pub memory_mib: u32,
    /// Wall-clock budget of one `compress` call, summarizer included, in
    /// milliseconds. A call over it fails open: the request is sent unchanged.
    pub timeout_ms: u32,
    /// Largest request accepted, in bytes. `condense compress` rejects a
    /// larger body before parsing it; the library middleware sends a request
    /// whose message content is larger unchanged, without copying it into
    /// the compressor.
    pub max_request_bytes: u32,
}

impl Default for LimitSettings {
    fn default() -> Self {
        LimitSettings {
            memory_mib: 256,
            timeout_ms: 5_000,
            // 64 MiB always fits in u32.
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES as u32,
        }
    }
}

/// Whether the model may recall what a compaction took out
/// (`condense_recall`), and how much. The summary and the placeholders of
/// cleared results then name their handles; `condense agent` offers the
/// tool from the start, the proxy adds it to a session's requests from its
/// first compaction on (when the client sent tools of its own and lets the
/// model choose) and answers its calls itself. `condense compress` never
/// offers it: its caller could not answer the calls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(transform = |s: &mut schemars::Schema| range::publish(s, crate::RECALL_RANGES))]
pub struct RecallSettings {
    /// `on`, or `off`: no handles, no tool, today's requests byte for byte.
    pub mode: RecallMode,
    /// The most tokens of text one recall gives back; what is over it is
    /// counted, with how to narrow the recall by a query.
    pub budget_tokens: u32,
    /// Proxy: upstream calls one client request may take answering recalls,
    /// beyond the first.
    pub max_rounds: u32,
}

/// Whether recall is offered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RecallMode {
    #[default]
    On,
    Off,
}

impl Default for RecallSettings {
    fn default() -> Self {
        RecallSettings {
            mode: RecallMode::On,
            budget_tokens: 4_000,
            max_rounds: 3,
        }
    }
}

impl RecallSettings {
    /// What `compress_body` is told (`None`: off).
    pub fn recall(&self) -> Option<Recall> {
        (self.mode == RecallMode::On).then_some(Recall {
            budget_tokens: self.budget_tokens,
            max_rounds: self.max_rounds,
        })
    }
}

/// How `condense agent` runs: the system prompt it compiles and whether a
/// due compaction proceeds. Other commands ignore this table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RuntimeSettings {
    /// Where condense's summary goes: `message`, a user/assistant pair after
    /// the system prompt, or `block`, the system prompt's compressed block.
    /// Either way the request prefix is byte-stable between compactions.
    pub summary_placement: SummaryPlacement,
    /// Whether a due compaction proceeds: `automatic` (always), `rate-limited`
    /// (at most one per `min_calls_between_compactions` calls and per
    /// `min_seconds_between_compactions`, unless the request would exceed
    /// `context_window`), or `confirm` (asked on the terminal).
    pub compaction: CompactionPolicy,
    /// With `rate-limited`: model calls from one compaction to the next, at
    /// least.
    pub min_calls_between_compactions: u32,
    /// With `rate-limited`: seconds from one compaction to the next, at least.
    pub min_seconds_between_compactions: u32,
    /// The model's context window in tokens: a rate-limited compaction
    /// proceeds anyway when the request would exceed it.
    pub context_window: u32,
    /// The persona block: who the agent is. Unset: condense agent's own (a
    /// coding agent working in the working directory).
    #[schemars(extend("x-default" = "condense agent's own"))]
    pub persona: Option<String>,
    /// The rules block: what the agent must and must not do, one rule per
    /// entry.
    pub rules: Vec<String>,
    /// A file whose text is the memory block (notes carried across
    /// sessions), relative to the working directory.
    pub memory_file: Option<PathBuf>,
    /// Token budgets of the system prompt's blocks and their total (a
    /// `[runtime.budgets]` table; missing keys keep their defaults): a block
    /// over its budget is cut at a line boundary with a marker, and when the
    /// blocks together exceed `total` the lowest-priority go first —
    /// retrieval, memory, workspace, persona, compressed, task, rules last.
    /// The defaults sum to the total exactly.
    pub budgets: Budgets,
}

/// Whether a due compaction proceeds (`[runtime] compaction`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum CompactionPolicy {
    /// Every due compaction proceeds.
    #[default]
    Automatic,
    /// At most one per `min_calls_between_compactions` calls and per
    /// `min_seconds_between_compactions`, unless the request would exceed
    /// `context_window`.
    RateLimited,
    /// Asked on the terminal each time.
    Confirm,
}

impl Default for RuntimeSettings {
    fn default() -> Self {
        RuntimeSettings {
            summary_placement: SummaryPlacement::Message,
            compaction: CompactionPolicy::Automatic,
            min_calls_between_compactions: 10,
            min_seconds_between_compactions: 0,
            context_window: 200_000,
            persona: None,
            rules: Vec::new(),
            memory_file: None,
            budgets: Budgets::default(),
        }
    }
}

/// The condense configuration file (TOML). Every key is optional and defaults
/// to the value shown. `condense config --show` prints every key with the
/// value condense uses.
///
/// The keys are the host's (`[components]`, `[limits]`), the fold knobs every
/// compressor shares ([`CoreConfig`]), and any other key, which belongs to the
/// compressor: it is handed to it as its settings JSON, and the compressor
/// checks and documents it (the embedded one: `condense_contract::Settings`).
#[derive(Clone, Debug, PartialEq)]
pub struct AgentSettings {
    pub core: CoreConfig,
    /// The compressor's own keys, as written (after an agent's overrides).
    pub compressor: serde_json::Map<String, serde_json::Value>,
    /// Components to load instead of the embedded ones.
    pub components: Components,
    /// Sandbox limits per guest call, and the largest request accepted.
    pub limits: LimitSettings,
    /// How `condense agent` runs.
    pub runtime: RuntimeSettings,
    /// The model LLM summarizers ask.
    pub llm: LlmSettings,
    /// Each summarizer's own settings (`[summarizers.NAME]`), by the name
    /// of a summarizer of the chain: `heuristic`, `llm` or a component's
    /// file name. Handed to it as its settings JSON; it checks them itself
    /// when the middleware is built ([`AgentSettings::middleware`]).
    pub summarizers: BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
    /// The `[models."PATTERN"]` tables as written.
    pub model_tables: ModelTables,
    /// What each model costs and holds: the written tables over the
    /// embedded ones ([`AgentSettings::for_model`]).
    pub models: PriceTable,
    /// Whether the model may recall what a compaction took out.
    pub recall: RecallSettings,
}

impl Default for AgentSettings {
    fn default() -> Self {
        AgentSettings {
            core: CoreConfig::default(),
            compressor: serde_json::Map::new(),
            components: Components::default(),
            limits: LimitSettings::default(),
            runtime: RuntimeSettings::default(),
            llm: LlmSettings::default(),
            summarizers: BTreeMap::new(),
            model_tables: ModelTables::new(),
            models: crate::models::embedded_table(),
            recall: RecallSettings::default(),
        }
    }
}

/// The core keys as a file gives them: each one unset falls back to its
/// default, which for `target_tokens`, `keep_recent_tokens` and
/// `summary_max_tokens` is a share of `token_threshold`
/// ([`CoreConfig::for_threshold`]), held below the values that are set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = |s: &mut schemars::Schema| range::publish(s, CORE_RANGES))]
pub struct CoreKeys {
    /// Compact when the request the model would see is estimated above this
    /// many tokens (at the latest: by `compact_when = "cost"` the embedded
    /// compressor compacts sooner, when that pays).
    #[schemars(default = "default_threshold")]
    pub token_threshold: Option<u32>,
    /// A compaction folds enough history to bring the request down to about
    /// this many tokens. Must be below `token_threshold`: the gap is the
    /// hysteresis that keeps the request's prefix byte-identical (prompt cache
    /// hits) between compactions. By `compact_when = "cost"`, a fold goes
    /// down to `keep_recent_tokens` instead (the passes alone still need
    /// only reach this). Default: half of `token_threshold`.
    #[schemars(extend("x-default" = "50% of `token_threshold`"))]
    pub target_tokens: Option<u32>,
    /// Keep this many of the latest user turns verbatim when they fit (in user
    /// turns; 0: no turn is reserved, the cut may fall at the latest one).
    /// By `compact_when = "cost"`, folds keep `keep_recent_tokens` instead.
    #[schemars(default = "default_recent_turns")]
    pub recent_turns: Option<u32>,
    /// When the recent turns alone do not fit (one long turn of tool calls),
    /// cut inside the turn at a safe point, keeping at least this many tokens
    /// of the latest messages verbatim and the turn's opening user message
    /// pinned. At most `target_tokens`. Default: a fifth of `token_threshold`.
    #[schemars(extend("x-default" = "20% of `token_threshold`"))]
    pub keep_recent_tokens: Option<u32>,
    /// Token budget of the summary text the summarizer writes. Below
    /// `target_tokens`: a ceiling the summarizer writes up to, the artifact
    /// trail and the person's statements first. Default: 5% of
    /// `token_threshold`, at least 64.
    #[schemars(extend("x-default" = "5% of `token_threshold` (at least 64)"))]
    pub summary_max_tokens: Option<u32>,
}

fn default_threshold() -> Option<u32> {
    Some(CoreConfig::default().token_threshold)
}

fn default_recent_turns() -> Option<u32> {
    Some(CoreConfig::default().recent_turns)
}

impl CoreKeys {
    /// The config these keys give: the set ones as they are, the others
    /// derived from the threshold and kept consistent with the set ones.
    pub fn resolve(&self) -> CoreConfig {
        let base = CoreConfig::for_threshold(
            self.token_threshold
                .unwrap_or(CoreConfig::default().token_threshold),
        );
        let target_tokens = self.target_tokens.unwrap_or(base.target_tokens);
        CoreConfig {
            token_threshold: base.token_threshold,
            target_tokens,
            recent_turns: self.recent_turns.unwrap_or(base.recent_turns),
            keep_recent_tokens: self
                .keep_recent_tokens
                .unwrap_or(base.keep_recent_tokens.min(target_tokens)),
            summary_max_tokens: self.summary_max_tokens.unwrap_or(
                base.summary_max_tokens
                    .min(target_tokens.saturating_sub(1))
                    .max(64),
            ),
        }
    }
}

impl AgentSettings {
    /// corpus tests and benches: a 40k-token threshold makes every long
    /// recorded session compact several times.
    pub fn for_replay() -> AgentSettings {
        let mut s = AgentSettings::default();
        s.core.token_threshold = 40_000;
        s.core.target_tokens = 16_000;
        s.core.keep_recent_tokens = 8_000;
        s.core.summary_max_tokens = 2_000;
        s
    }

    /// What `compress_body` compresses a request with under these settings.
    pub fn body_config(&self) -> BodyConfig {
        BodyConfig {
            core: self.core,
            settings: self.compressor_json(),
            cold: self.cold_settings(),
            recall: self.recall.recall(),
        }
    }

    /// How the embedded compressor is told that a request found the cache
    /// expired (`cache_cold`), past its `cache_ttl_seconds`; `None` for a
    /// compressor from a path, whose keys this host cannot know.
    pub fn cold_settings(&self) -> Option<ColdSettings> {
        Some(cold_settings_of(self.embedded_compressor()?.ok()?))
    }

    /// The compressor's settings JSON, as the compress call hands it over.
    pub fn compressor_json(&self) -> String {
        serde_json::Value::Object(self.compressor.clone()).to_string()
    }

    /// These settings in condense proxy: an LLM summarizer that asks the
    /// client's own upstream ([`LlmSettings::asks_client_in_proxy`]) sends
    /// the client's request up to the fold, which the client's model took
    /// whole, so `context_tokens` does not make it chunk the fold.
    pub fn in_proxy(mut self) -> AgentSettings {
        if self.llm.asks_client_in_proxy() {
            self.llm.context_tokens = CONTEXT_TOKENS_MAX;
        }
        self
    }

    /// These settings for a host that prepares summaries ahead (the proxy):
    /// behind a chain that starts with the LLM summarizer, the embedded
    /// compressor plans each compaction at [`PREPARE_AT_PERMILLE`] unless
    /// the file sets `prepare_at_permille` (a summary that takes seconds is
    /// prepared ahead; one written in milliseconds needs no plan, and a host
    /// that prepares nothing gains nothing from one).
    pub fn preparing_ahead(mut self) -> AgentSettings {
        let llm_first = self
            .components
            .summarizers
            .as_ref()
            .and_then(|chain| chain.first())
            .is_some_and(|first| first.as_os_str() == LLM_SUMMARIZER);
        if llm_first && self.components.compressor.is_none() {
            self.compressor
                .entry("prepare_at_permille")
                .or_insert(PREPARE_AT_PERMILLE.into());
        }
        self
    }

    /// The settings of the embedded compressor these keys give, defaults
    /// filled in, typed (to show them, or to add to them, as `condense
    /// agent` adds its own tools); `None` when a compressor is loaded from a
    /// path, whose keys this host cannot know.
    pub fn embedded_compressor(&self) -> Option<Result<condense_contract::Settings, String>> {
        self.components
            .compressor
            .is_none()
            .then(|| condense_contract::Settings::parse(&self.compressor_json()))
    }

    /// The prices these settings weigh compactions with (the embedded
    /// compressor's `cache_read_permille`, `cache_write_permille` and
    /// `summary_cost_tokens`), which a replay prices its figures at; the
    /// common prices when a compressor from a path may not have them.
    pub fn prices(&self) -> Prices {
        match self.embedded_compressor() {
            Some(Ok(s)) => Prices {
                read: s.read_price(),
                write: s.write_price(),
                summary: f64::from(s.summary_cost_tokens),
                ttl_seconds: s.cache_ttl_seconds,
            },
            _ => Prices::DEFAULT,
        }
    }

    /// These settings for the requests to `model` (`None`: a request that
    /// names none): the price model's threshold (its own, else this one held
    /// to 80% of its window), the other fold keys scaled with it; and for the
    /// embedded compressor, the model's cache prices and TTL, where the file
    /// does not set them. The pattern that priced it, and its prices.
    pub fn for_model(&self, model: Option<&str>) -> (AgentSettings, &str, &ModelPrice) {
        let (pattern, price) = self.models.lookup(model);
        let mut settings = self.clone();
        let threshold = price.threshold(self.core.token_threshold);
        if threshold != self.core.token_threshold {
            settings.core = scaled(&self.core, threshold);
        }
        if self.components.compressor.is_none() {
            let prices = price.prices(0.0);
            let values = [
                (prices.read * 1000.0).round() as u32,
                (prices.write * 1000.0).round() as u32,
                prices.ttl_seconds,
            ];
            for (key, value) in PRICE_KEYS.into_iter().zip(values) {
                settings
                    .compressor
                    .entry(key)
                    .or_insert_with(|| value.into());
            }
        }
        (settings, pattern, price)
    }

    /// The summarizer chain these settings load, each by its name: the
    /// `summarizers` list, else the one `summarizer`, else the embedded
    /// heuristic one.
    pub fn summarizer_chain(&self) -> Vec<(String, Option<&Path>)> {
        fn entry(p: &Path) -> (String, Option<&Path>) {
            (summarizer_name(p), (!is_builtin(p)).then_some(p))
        }
        match (&self.components.summarizers, &self.components.summarizer) {
            (Some(chain), _) => chain.iter().map(|p| entry(p)).collect(),
            (None, Some(path)) => vec![entry(path)],
            (None, None) => vec![(EMBEDDED_SUMMARIZER.to_owned(), None)],
        }
    }

    /// Whether the chain has the embedded LLM summarizer, which asks the
    /// host's model (`[llm]`).
    pub fn asks_a_model(&self) -> bool {
        self.summarizer_chain()
            .iter()
            .any(|(name, path)| path.is_none() && name == LLM_SUMMARIZER)
    }

    /// The settings JSON summarizer `name` of the chain is handed, if the
    /// file has any for it: its `[summarizers.NAME]` table, and for `llm`
    /// the keys it takes from `[llm]` too.
    pub fn summarizer_json(&self, name: &str) -> Option<String> {
        let mut settings = self.summarizers.get(name).cloned();
        if name == LLM_SUMMARIZER {
            let from_llm = settings.get_or_insert_default();
            from_llm.insert("context_tokens".into(), self.llm.context_tokens.into());
            from_llm.insert("cache_friendly".into(), self.llm.cache_friendly.into());
        }
        settings.map(|map| serde_json::Value::Object(map).to_string())
    }

    /// The sandbox limits these settings ask for.
    pub fn sandbox_limits(&self) -> Limits {
        Limits {
            memory_bytes: self.limits.memory_mib as usize * (1 << 20),
            call_timeout: std::time::Duration::from_millis(u64::from(self.limits.timeout_ms)),
            ..Limits::default()
        }
    }
}

/// How the embedded compressor with `embedded` is told a request found the
/// cache expired: past its `cache_ttl_seconds`, the same settings with
/// `cache_cold`.
pub fn cold_settings_of(embedded: condense_contract::Settings) -> ColdSettings {
    ColdSettings {
        ttl: std::time::Duration::from_secs(u64::from(embedded.cache_ttl_seconds)),
        settings: embedded.with_cache_cold().to_json(),
        clock: condense_host::timing::Clock::system(),
    }
}

/// Token budgets: one per kind, each including the block's heading, any cut
/// marker and the blank line before the block, and a total for the whole
/// prompt. Read from a table such as
/// `{ total = 12000, rules = 3000 }`: a missing key keeps its default, an
/// unknown key is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Budgets {
    /// The whole system prompt, in tokens. When the blocks together exceed
    /// it, the lowest-priority ones are dropped first: retrieval, memory,
    /// workspace, persona, compressed, task, rules last.
    pub total: u32,
    /// Who the agent is.
    pub persona: u32,
    /// What the agent must and must not do.
    pub rules: u32,
    /// Notes carried across sessions.
    pub memory: u32,
    /// condense's summary, with `summary_placement = "block"`. Sized so that
    /// a summary of the default `summary_max_tokens`, with its framing, is
    /// never cut.
    pub compressed: u32,
    /// Retrieved documents and snippets.
    pub retrieval: u32,
    /// Facts about the working directory.
    pub workspace: u32,
    /// The task at hand.
    pub task: u32,
}

impl Default for Budgets {
    /// Sized for a coding agent, and summing to the total exactly, so the
    /// defaults never drop a block: each block's budget is all it can take,
    /// the blank line before it included (the runtime's context compiler
    /// charges it).
    /// The summary's share is the largest (condense's default
    /// `summary_max_tokens` is 5,000: 5% of the default 100k threshold), then
    /// the rules (project instructions files run long), then retrieval.
    fn default() -> Self {
        Budgets {
            total: 15_000,
            persona: 500,
            rules: 2_500,
            memory: 1_500,
            compressed: 6_000,
            retrieval: 2_000,
            workspace: 1_000,
            task: 1_500,
        }
    }
}

impl Budgets {
    /// The blocks' budgets by key, in the order the blocks appear in the
    /// prompt (persona first, task last).
    pub fn blocks(&self) -> [(&'static str, u32); 7] {
        [
            ("persona", self.persona),
            ("rules", self.rules),
            ("memory", self.memory),
            ("compressed", self.compressed),
            ("retrieval", self.retrieval),
            ("workspace", self.workspace),
            ("task", self.task),
        ]
    }

    /// Names the first budget that is zero. A zero budget would silently
    /// remove a block the user set up; to go without a block, leave it unset.
    pub fn validate(&self) -> Result<(), String> {
        let keys = std::iter::once(("total", self.total)).chain(self.blocks());
        for (key, value) in keys {
            if value < 1 {
                return Err(format!("{key} = {value}: must be at least 1"));
            }
        }
        Ok(())
    }
}

/// Where condense's summary of the folded history goes (`[runtime]
/// summary_placement`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SummaryPlacement {
    /// A user/assistant message pair after the system prompt (any provider
    /// takes it; a history written back keeps it).
    #[default]
    Message,
    /// The system prompt's compressed block: the conversation starts with
    /// the tail.
    Block,
}
