//! The `condense` configuration file (TOML) and its defaults.
//!
//! ```toml
//! token_threshold = 100000      # compressor keys, as in the WIT `config` record
//! target_tokens = 40000
//! clear_mode = "truncate"
//!
//! [tools]                       # tool classes by name pattern (`*`, `?`)
//! mutating = ["Edit", "Write", "mcp__fs__write*"]
//!
//! [components]                  # optional: swap guests without rebuilding the host
//! summarizer = "my_summarizer.wasm"
//!
//! [limits]                      # optional: sandbox limits per guest call
//! memory_mib = 256
//! timeout_ms = 5000
//! max_request_bytes = 67108864  # larger requests are rejected / sent unchanged
//!
//! [agents.review]               # optional: per-agent overrides of any key above
//! token_threshold = 60000
//! [agents.review.tools]
//! exec_capable = []             # a list replaces the top-level list
//! ```
//!
//! Parsed and validated once, when the host is set up (configure once, call
//! many), every agent included: unknown fields are rejected with their full
//! path (`agents.review.token_treshold`), wrong types with the type expected,
//! out-of-range values with the allowed range. An agent's settings are the
//! top-level ones with the agent's table merged over them key by key (a table
//! merges key by key, any other value, a list included, replaces). Relative
//! component paths resolve against the file's directory.
//!
//! [`json_schema`] describes the file, generated from these types: the
//! descriptions are the field docs, the numeric ranges come from
//! [`condense_model::RANGES`] and [`LIMIT_RANGES`], the tables `validate`
//! enforces.

use crate::embedded;
use anyhow::{Context, Result, bail};
use condense_host::middleware::DEFAULT_MAX_REQUEST_BYTES;
use condense_host::{ComponentSource, Limits, Middleware, Runtime};
use condense_model::{CORE_RANGES, CoreConfig};
use condense_runtime::chain::SummaryPlacement;
use condense_runtime::context::Budgets;
use condense_runtime::model::AgentFrame;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Components to load instead of the ones embedded in the binary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Components {
    /// Path of a compressor component (a `.wasm` file) to load instead of the
    /// embedded one; relative to the config file's directory. Unset: the
    /// embedded compressor.
    pub compressor: Option<PathBuf>,
    /// Path of a summarizer component (a `.wasm` file) to load instead of the
    /// embedded one; relative to the config file's directory. Unset: the
    /// embedded heuristic summarizer.
    pub summarizer: Option<PathBuf>,
    /// A chain of summarizers, tried in order: an error, a trap or running
    /// out of its share of the time falls through to the next. Each entry is
    /// `heuristic` (the embedded summarizer), `llm` (the embedded LLM
    /// summarizer, asking the model of `[llm]`) or the path of a component,
    /// relative to the config file's directory: `["llm", "heuristic"]`.
    /// Instead of `summarizer`.
    pub summarizers: Option<Vec<PathBuf>>,
}

/// The name that stands for the embedded summarizer in `summarizers`.
pub const EMBEDDED_SUMMARIZER: &str = "heuristic";

/// The name that stands for the embedded LLM summarizer in `summarizers`.
pub const LLM_SUMMARIZER: &str = "llm";

/// Whether a `summarizers` entry names an embedded summarizer, not a path.
fn is_builtin(entry: &Path) -> bool {
    entry.as_os_str() == EMBEDDED_SUMMARIZER || entry.as_os_str() == LLM_SUMMARIZER
}

/// The model an LLM summarizer asks (`summarizers = ["llm", "heuristic"]`):
/// any OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM,
/// the llama.cpp server, a gateway). The host makes the calls; the
/// summarizer never sees the endpoint or the key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
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
    /// that fit it, oldest first.
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
        }
    }
}

/// Names the first key of `[table]` whose `value` is outside its range in
/// `ranges`, with the range.
fn check_ranges(
    table: &str,
    ranges: &[(&str, u32, u32)],
    value: impl Fn(&str) -> u32,
) -> Result<()> {
    for &(key, min, max) in ranges {
        let value = value(key);
        if !(min..=max).contains(&value) {
            bail!("{table}.{key} = {value}: must be between {min} and {max}");
        }
    }
    Ok(())
}

/// The ranges of the `[llm]` keys, enforced by [`Settings::validate`] and
/// published by [`json_schema`].
pub const LLM_RANGES: &[(&str, u32, u32)] = &[
    ("timeout_ms", 100, 3_600_000),
    ("budget_ms", 100, 3_600_000),
    ("max_output_tokens", 64, 1_000_000),
    ("max_retries", 0, 10),
    ("context_tokens", 2_000, 10_000_000),
    ("breaker_failures", 1, 1_000),
    ("breaker_cooldown_ms", 0, 86_400_000),
];

impl LlmSettings {
    fn value(&self, key: &str) -> u32 {
        match key {
            "timeout_ms" => self.timeout_ms,
            "budget_ms" => self.budget_ms,
            "max_output_tokens" => self.max_output_tokens,
            "max_retries" => self.max_retries,
            "context_tokens" => self.context_tokens,
            "breaker_failures" => self.breaker_failures,
            "breaker_cooldown_ms" => self.breaker_cooldown_ms,
            _ => unreachable!("LLM_RANGES names a key LlmSettings does not have: {key}"),
        }
    }

    /// The model, its limits and its breaker, for the runtime; reads the key
    /// from `api_key_env`. With the agent's `frame`, a summarizer's request
    /// after the agent's conversation starts as the agent's requests do.
    fn llm(&self, frame: Option<&AgentFrame>) -> Result<condense_host::llm::Llm> {
        use condense_runtime::model::{OpenAiConfig, OpenAiLlm, key_from_env};
        use std::time::Duration;
        let (Some(base_url), Some(model)) = (&self.base_url, &self.model) else {
            bail!(
                "components.summarizers names `llm`: set [llm] base_url and model (an \
                 OpenAI-compatible endpoint, e.g. base_url = \"http://127.0.0.1:11434/v1\")"
            );
        };
        let api_key = match &self.api_key_env {
            Some(var) => {
                Some(key_from_env(var).map_err(|e| anyhow::anyhow!("llm.api_key_env: {e}"))?)
            }
            None => None,
        };
        let mut model = OpenAiLlm::new(OpenAiConfig {
            api_key,
            max_retries: self.max_retries,
            temperature: self.temperature.map(|t| t as f32),
            ..OpenAiConfig::new(base_url.clone(), model.clone())
        });
        if let Some(frame) = frame {
            model = model.with_frame(frame.clone());
        }
        let limits = condense_host::llm::LlmLimits {
            call_timeout: Duration::from_millis(self.timeout_ms.into()),
            compaction_budget: Duration::from_millis(self.budget_ms.into()),
            max_output_tokens: self.max_output_tokens,
            breaker_failures: self.breaker_failures,
            breaker_cooldown: Duration::from_millis(self.breaker_cooldown_ms.into()),
        };
        Ok(condense_host::llm::Llm::new(
            std::sync::Arc::new(model),
            limits,
        ))
    }
}

/// Sandbox limits per guest call, and the largest request accepted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
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

/// The ranges of the `[limits]` keys: [`Settings::validate`] enforces them and
/// [`json_schema`] publishes them, from this one table (the compressor keys'
/// ranges are [`condense_model::RANGES`]). `max_request_bytes` goes up to
/// 1 GiB: a larger request cannot be compressed within the largest guest
/// memory (4 GiB), which holds the request and the compressor's working
/// copies of it.
pub const LIMIT_RANGES: &[(&str, u32, u32)] = &[
    ("memory_mib", 16, 4_096),
    ("timeout_ms", 10, 600_000),
    ("max_request_bytes", 1_024, 1 << 30),
];

impl LimitSettings {
    fn value(&self, key: &str) -> u32 {
        match key {
            "memory_mib" => self.memory_mib,
            "timeout_ms" => self.timeout_ms,
            "max_request_bytes" => self.max_request_bytes,
            _ => unreachable!("LIMIT_RANGES names a key LimitSettings does not have: {key}"),
        }
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
    pub persona: Option<String>,
    /// The rules block: what the agent must and must not do, one rule per
    /// entry.
    pub rules: Vec<String>,
    /// A file whose text is the memory block (notes carried across
    /// sessions), relative to the working directory.
    pub memory_file: Option<PathBuf>,
    /// Token budgets of the system prompt's blocks, and their total.
    pub budgets: Budgets,
}

/// Whether a due compaction proceeds (`[runtime] compaction`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
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
/// checks and documents it (the embedded one: `condense_compressor::Settings`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
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
}

/// The core keys as a file gives them: each one unset falls back to its
/// default, which for `target_tokens`, `keep_recent_tokens` and
/// `summary_max_tokens` is a share of `token_threshold`
/// ([`CoreConfig::for_threshold`]), held below the values that are set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoreKeys {
    /// Compact when the request the model would see is estimated above this
    /// many tokens.
    #[schemars(default = "default_threshold")]
    pub token_threshold: Option<u32>,
    /// A compaction folds enough history to bring the request down to about
    /// this many tokens. Must be below `token_threshold`: the gap is the
    /// hysteresis that keeps the request's prefix byte-identical (prompt cache
    /// hits) between compactions. Default: half of `token_threshold`.
    pub target_tokens: Option<u32>,
    /// Keep this many of the latest user turns verbatim when they fit (in user
    /// turns; 0: no turn is reserved, the cut may fall at the latest one).
    #[schemars(default = "default_recent_turns")]
    pub recent_turns: Option<u32>,
    /// When the recent turns alone do not fit (one long turn of tool calls),
    /// cut inside the turn at a safe point, keeping at least this many tokens
    /// of the latest messages verbatim and the turn's opening user message
    /// pinned. At most `target_tokens`. Default: a fifth of `token_threshold`.
    pub keep_recent_tokens: Option<u32>,
    /// Token budget of the summary text the summarizer writes. Below
    /// `target_tokens`. Default: 2% of `token_threshold`, at least 64.
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

impl Settings {
    /// Reads and validates a config file, its agents included, and returns
    /// its top-level settings.
    pub fn load(path: &Path) -> Result<Settings> {
        Ok(ConfigFile::load(path)?.base)
    }

    /// Reads and validates a config file, its agents included, and returns
    /// the settings of `agent` (`None`: the top-level settings).
    pub fn load_agent(path: &Path, agent: Option<&str>) -> Result<Settings> {
        ConfigFile::load(path)?.settings(agent).cloned()
    }

    /// Parses and validates TOML text, its agents included, and returns its
    /// top-level settings. Relative component paths are left as written.
    pub fn parse(text: &str) -> Result<Settings> {
        Ok(ConfigFile::parse(text)?.base)
    }

    /// The defaults of `condense replay` and `condense demo`, and of the
    /// corpus tests and benches: a 40k-token threshold makes every long
    /// recorded session compact several times.
    pub fn for_replay() -> Settings {
        let mut s = Settings::default();
        s.core.token_threshold = 40_000;
        s.core.target_tokens = 16_000;
        s.core.keep_recent_tokens = 8_000;
        s.core.summary_max_tokens = 2_000;
        s
    }

    /// What `compress_body` compresses a request with under these settings.
    pub fn body_config(&self) -> condense_host::BodyConfig {
        condense_host::BodyConfig {
            core: self.core,
            settings: self.compressor_json(),
        }
    }

    /// The compressor's settings JSON, as the compress call hands it over.
    pub fn compressor_json(&self) -> String {
        serde_json::Value::Object(self.compressor.clone()).to_string()
    }

    /// The settings of the embedded compressor these keys give, defaults
    /// filled in (for showing them); `None` when a compressor is loaded from
    /// a path, whose keys this host cannot know.
    fn embedded_compressor(&self) -> Option<Result<condense_compressor::Settings, String>> {
        self.components
            .compressor
            .is_none()
            .then(|| condense_compressor::Settings::parse(&self.compressor_json()))
    }

    /// The sandbox limits these settings ask for.
    pub fn sandbox_limits(&self) -> Limits {
        Limits {
            memory_bytes: self.limits.memory_mib as usize * (1 << 20),
            call_timeout: std::time::Duration::from_millis(u64::from(self.limits.timeout_ms)),
            ..Limits::default()
        }
    }

    /// Loads the configured components (embedded ones by default) into a
    /// fail-open middleware.
    pub fn middleware(&self) -> Result<Middleware> {
        self.middleware_in(None)
    }

    /// [`Settings::middleware`] for an agent whose requests `frame`
    /// records: the LLM summarizer's model sends its system prompt and tools.
    pub fn middleware_in(&self, frame: Option<&AgentFrame>) -> Result<Middleware> {
        let source = |path: &Option<PathBuf>, embedded: &'static [u8]| match path {
            Some(p) => ComponentSource::Path(p.clone()),
            None => ComponentSource::Embedded(embedded),
        };
        let summarizers = match &self.components.summarizers {
            Some(chain) => chain
                .iter()
                .map(|entry| match entry.to_str() {
                    Some(EMBEDDED_SUMMARIZER) => ComponentSource::Embedded(embedded::SUMMARIZER),
                    Some(LLM_SUMMARIZER) => {
                        ComponentSource::Named(LLM_SUMMARIZER, embedded::LLM_SUMMARIZER)
                    }
                    _ => ComponentSource::Path(entry.clone()),
                })
                .collect(),
            None => vec![source(&self.components.summarizer, embedded::SUMMARIZER)],
        };
        let mut runtime = Runtime::with_summarizers(
            self.sandbox_limits(),
            source(&self.components.compressor, embedded::COMPRESSOR),
            summarizers,
        )?;
        // The LLM summarizer: the host's model behind its `llm` import, and
        // the model's context in its settings.
        let llm_at: Vec<usize> = self
            .components
            .summarizers
            .iter()
            .flatten()
            .enumerate()
            .filter(|(_, p)| p.as_os_str() == LLM_SUMMARIZER)
            .map(|(i, _)| i)
            .collect();
        if !llm_at.is_empty() {
            runtime = runtime.with_llm(self.llm.llm(frame)?);
            let settings = serde_json::json!({
                "context_tokens": self.llm.context_tokens,
                "cache_friendly": self.llm.cache_friendly,
            });
            for i in llm_at {
                runtime = runtime.with_summarizer_settings(i, settings.to_string());
            }
        }
        // The embedded compressor's keys are checked natively (`validate`,
        // the same code); a compressor from a path checks its own.
        if let Some(path) = &self.components.compressor {
            match runtime.validate_settings(&self.compressor_json()) {
                Ok(Ok(())) => {}
                Ok(Err(why)) => bail!("{why} (a key of the compressor {})", path.display()),
                Err(failure) => bail!("{failure}"),
            }
        }
        Ok(Middleware::new(runtime).with_max_request_bytes(self.limits.max_request_bytes as usize))
    }

    /// Names the first value out of range, with the allowed range.
    pub fn validate(&self) -> Result<()> {
        self.core.validate().map_err(anyhow::Error::msg)?;
        match &self.components.summarizers {
            Some(_) if self.components.summarizer.is_some() => {
                bail!("components.summarizers: set either `summarizer` or `summarizers`, not both")
            }
            Some(chain) if chain.is_empty() => bail!(
                "components.summarizers: an empty chain; name at least one summarizer \
                 (`heuristic` is the embedded one)"
            ),
            _ => {}
        }
        if let Some(Err(e)) = self.embedded_compressor() {
            // A key neither the host's nor the compressor's: name it, and
            // every key it could have meant.
            if let Some((key, rest)) = e.split_once(": unknown field `")
                && !key.contains('.')
                && let Some((_, expected)) = rest.split_once("`, expected one of ")
            {
                let host: Vec<String> = CORE_KEYS
                    .iter()
                    .chain(&["components", "limits", "runtime", "llm", "agents"])
                    .map(|k| format!("`{k}`"))
                    .collect();
                bail!(
                    "{key}: unknown field `{key}`, expected one of {}, {expected}",
                    host.join(", ")
                );
            }
            bail!("{e}");
        }
        check_ranges("limits", LIMIT_RANGES, |key| self.limits.value(key))?;
        check_ranges("llm", LLM_RANGES, |key| self.llm.value(key))?;
        if let Some(t) = self.llm.temperature.filter(|t| !(0.0..=2.0).contains(t)) {
            bail!("llm.temperature = {t}: must be between 0 and 2");
        }
        self.runtime
            .budgets
            .validate()
            .map_err(|e| anyhow::anyhow!("runtime.budgets.{e}"))?;
        if self.runtime.context_window == 0 {
            bail!("runtime.context_window = 0: must be at least 1");
        }
        Ok(())
    }

    /// These settings as a config file: every key with its value, so it can
    /// be copied as a starting point. [`Settings::parse`] reads it back to the
    /// same settings. An unset component is a comment.
    pub fn to_toml(&self) -> Result<String> {
        let mut out = toml::to_string_pretty(&self.core)?;
        // The compressor's keys: the embedded one's with its defaults filled
        // in, a loaded one's as written.
        let compressor = match self.embedded_compressor() {
            Some(settings) => serde_json::to_value(settings.map_err(anyhow::Error::msg)?)?,
            None => serde_json::Value::Object(self.compressor.clone()),
        };
        let compressor: toml::Table = serde_json::from_value(compressor)?;
        if !compressor.is_empty() {
            out.push('\n');
            out.push_str(&toml::to_string_pretty(&compressor)?);
        }
        out.push_str("\n[components]\n");
        let components = [
            (
                "compressor",
                &self.components.compressor,
                "the embedded compressor",
            ),
            (
                "summarizer",
                &self.components.summarizer,
                "the embedded heuristic summarizer",
            ),
        ];
        for (key, path, unset) in components {
            match path {
                Some(p) => {
                    // Absolute: the shown file loads from wherever it is
                    // saved (a path relative to the working directory would
                    // be read relative to the new file's directory).
                    let p = std::path::absolute(p).unwrap_or_else(|_| p.clone());
                    let text = p.to_str().with_context(|| {
                        format!(
                            "components.{key}: {} is not UTF-8 and cannot be written as TOML",
                            p.display()
                        )
                    })?;
                    out.push_str(&format!("{key} = {}\n", toml::Value::from(text)));
                }
                None => out.push_str(&format!("# {key} = \"{key}.wasm\"  (unset: {unset})\n")),
            }
        }
        if let Some(chain) = &self.components.summarizers {
            let entries = chain
                .iter()
                .map(|p| {
                    let p = if is_builtin(p) {
                        p.clone()
                    } else {
                        std::path::absolute(p).unwrap_or_else(|_| p.clone())
                    };
                    p.to_str().map(toml::Value::from).with_context(|| {
                        format!(
                            "components.summarizers: {} is not UTF-8 and cannot be written as TOML",
                            p.display()
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            out.push_str(&format!("summarizers = {}\n", toml::Value::Array(entries)));
        }
        out.push_str("\n[limits]\n");
        out.push_str(&toml::to_string(&self.limits)?);
        out.push_str("\n[runtime]\n");
        let runtime = &self.runtime;
        let mut table = toml::Table::try_from(runtime)?;
        table.remove("budgets");
        out.push_str(&toml::to_string(&table)?);
        for (key, unset) in [
            ("persona", "condense agent's own"),
            ("memory_file", "no memory block"),
        ] {
            if !table.contains_key(key) {
                out.push_str(&format!("# {key} = \"...\"  (unset: {unset})\n"));
            }
        }
        out.push_str("\n[runtime.budgets]\n");
        out.push_str(&toml::to_string(&runtime.budgets)?);
        out.push_str("\n[llm]\n");
        let llm = toml::Table::try_from(&self.llm)?;
        out.push_str(&toml::to_string(&llm)?);
        for (key, example, unset) in [
            ("base_url", "\"http://127.0.0.1:11434/v1\"", "no model"),
            ("model", "\"qwen2.5-coder\"", "no model"),
            ("api_key_env", "\"OPENAI_API_KEY\"", "no key"),
            ("temperature", "0.2", "the server's default"),
        ] {
            if !llm.contains_key(key) {
                out.push_str(&format!("# {key} = {example}  (unset: {unset})\n"));
            }
        }
        Ok(out)
    }

    fn resolve_paths(&mut self, dir: &Path) {
        let chain = self
            .components
            .summarizers
            .iter_mut()
            .flatten()
            .filter(|p| !is_builtin(p));
        for p in [
            &mut self.components.compressor,
            &mut self.components.summarizer,
        ]
        .into_iter()
        .flatten()
        .chain(chain)
        {
            if p.is_relative() {
                *p = dir.join(&*p);
            }
        }
    }
}

/// A config file, loaded and validated: its top-level settings and the
/// effective settings of each `[agents.NAME]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigFile {
    /// The file read, for messages; `None` when parsed from text.
    pub source: Option<PathBuf>,
    /// The top-level keys over the defaults.
    pub base: Settings,
    /// Each agent's table merged over the top-level keys, by agent name.
    pub agents: BTreeMap<String, Settings>,
}

impl ConfigFile {
    /// Reads a config file and validates it, every agent included. Relative
    /// component paths resolve against the file's directory.
    pub fn load(path: &Path) -> Result<ConfigFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        let mut file =
            ConfigFile::parse(&text).with_context(|| format!("config file {}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        for settings in std::iter::once(&mut file.base).chain(file.agents.values_mut()) {
            settings.resolve_paths(dir);
        }
        file.source = Some(path.to_owned());
        Ok(file)
    }

    /// Parses and validates TOML text, every agent included; the first error
    /// names the full path of its key.
    pub fn parse(text: &str) -> Result<ConfigFile> {
        let mut table: toml::Table = toml::from_str(text)?;
        let agents = match table.remove("agents") {
            None => toml::Table::new(),
            Some(toml::Value::Table(agents)) => agents,
            Some(other) => bail!(
                "agents: must be a table of [agents.NAME] tables, not {}",
                other.type_str()
            ),
        };
        let base = decode_settings(table.clone(), "")?;
        base.validate()?;
        let mut effective = BTreeMap::new();
        for (name, overrides) in agents {
            let at = format!("agents.{}", key_text(&name));
            let toml::Value::Table(overrides) = overrides else {
                bail!(
                    "{at}: must be a table ([{at}]) of keys that override the top-level ones, not {}",
                    overrides.type_str()
                );
            };
            if overrides.contains_key("agents") {
                bail!("{at}.agents: agents cannot be nested; [agents.NAME] tables are top-level");
            }
            let mut merged = table.clone();
            merge(&mut merged, overrides.clone());
            let settings = decode_settings(merged, &format!("{at}."))?;
            if let Err(e) = settings.validate() {
                // The value at fault may come from the top level: say so.
                let message = e.to_string();
                let key = message.split([' ', '[', ':']).next().unwrap_or_default();
                if sets(&overrides, key) {
                    bail!("{at}.{message}");
                }
                bail!(
                    "{at}.{message} ([{at}] does not set {key}: it comes from the top level \
                     or the defaults)"
                );
            }
            effective.insert(name, settings);
        }
        Ok(ConfigFile {
            source: None,
            base,
            agents: effective,
        })
    }

    /// The names of the agents the file defines, sorted.
    pub fn agent_names(&self) -> impl Iterator<Item = &str> {
        self.agents.keys().map(String::as_str)
    }

    /// The settings of `agent`, or the top-level ones for `None`. An unknown
    /// agent is an error listing the agents the file defines.
    pub fn settings(&self, agent: Option<&str>) -> Result<&Settings> {
        let Some(name) = agent else {
            return Ok(&self.base);
        };
        if let Some(settings) = self.agents.get(name) {
            return Ok(settings);
        }
        let file = self
            .source
            .as_ref()
            .map_or("the config file".to_owned(), |p| p.display().to_string());
        if self.agents.is_empty() {
            bail!(
                "unknown agent `{name}`: {file} defines no agents (add an [agents.{}] table)",
                key_text(name)
            );
        }
        let known: Vec<String> = self.agent_names().map(|n| format!("`{n}`")).collect();
        bail!(
            "unknown agent `{name}`: {file} defines {}",
            known.join(", ")
        )
    }
}

/// A table key as written in a dotted path: bare when TOML allows it.
fn key_text(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_owned()
    } else {
        toml::Value::from(key).to_string()
    }
}

/// Merges `overrides` into `base`: a table merges key by key, any other value
/// (a list included) replaces the base value.
fn merge(base: &mut toml::Table, overrides: toml::Table) {
    for (key, value) in overrides {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(base)), toml::Value::Table(value)) => merge(base, value),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// Decodes one settings table (the top level, or an agent's table merged
/// over it) strictly; errors name their key with `at` (`""` or
/// `"agents.NAME."`) before it. The values are not validated yet.
fn decode_settings(mut table: toml::Table, at: &str) -> Result<Settings> {
    // A scalar or list where a table belongs would otherwise be reported as
    // a struct decoded from a sequence: say plainly what is expected.
    for key in ["components", "limits", "runtime", "llm"] {
        if let Some(value) = table.get(key).filter(|v| !v.is_table()) {
            bail!(
                "{at}{key}: must be a table ([{at}{key}]), not {}",
                value.type_str()
            );
        }
    }
    // `Settings` flattens `Config`, and serde cannot deny unknown fields
    // through `flatten`: the host's tables are split off and each part is
    // decoded strictly on its own.
    let mut sub_table = |key: &str| match table.remove(key) {
        Some(toml::Value::Table(t)) => t,
        _ => toml::Table::new(),
    };
    let components = decode_table(sub_table("components"), &format!("{at}components."))?;
    let limits = decode_table(sub_table("limits"), &format!("{at}limits."))?;
    let runtime = decode_table(sub_table("runtime"), &format!("{at}runtime."))?;
    let llm = decode_table(sub_table("llm"), &format!("{at}llm."))?;
    let mut core = toml::Table::new();
    for key in CORE_KEYS {
        if let Some(value) = table.remove(*key) {
            core.insert((*key).to_owned(), value);
        }
    }
    let core: CoreKeys = decode_table(core, at)?;
    // What is left is the compressor's, to be checked by it.
    let compressor = match serde_json::to_value(&table)? {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    Ok(Settings {
        core: core.resolve(),
        compressor,
        components,
        limits,
        runtime,
        llm,
    })
}

/// The keys of [`CoreKeys`], split off before the rest goes to the compressor.
const CORE_KEYS: &[&str] = &[
    "token_threshold",
    "target_tokens",
    "recent_turns",
    "keep_recent_tokens",
    "summary_max_tokens",
];

/// Whether `table` sets the dotted `key` (`limits.timeout_ms`).
fn sets(table: &toml::Table, key: &str) -> bool {
    let mut table = table;
    let mut parts = key.split('.').peekable();
    while let Some(part) = parts.next() {
        match (table.get(part), parts.peek()) {
            (None, _) => return false,
            (Some(_), None) => return true,
            (Some(value), Some(_)) => match value.as_table() {
                Some(inner) => table = inner,
                None => return false,
            },
        }
    }
    false
}

/// Decodes `table` into `T` strictly; an error names the key at fault by its
/// full path (`agents.review.tools.readonly: unknown field ...`, with the
/// keys allowed there).
fn decode_table<T: DeserializeOwned>(table: toml::Table, at: &str) -> Result<T> {
    serde_path_to_error::deserialize(toml::Value::Table(table))
        .map_err(|e| anyhow::anyhow!("{at}{}: {}", e.path(), e.inner().message()))
}

/// The host's part of the file, for its schema.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
struct HostKeys {
    #[serde(flatten)]
    core: CoreKeys,
    /// Components to load instead of the embedded ones.
    #[schemars(default)]
    components: Components,
    /// Sandbox limits per guest call, and the largest request accepted.
    #[schemars(default)]
    limits: LimitSettings,
    /// How `condense agent` runs: its system prompt and its compaction policy.
    #[schemars(default)]
    runtime: RuntimeSettings,
    /// The model LLM summarizers ask (`summarizers = ["llm", "heuristic"]`).
    #[schemars(default)]
    llm: LlmSettings,
}

/// The JSON Schema (draft 2020-12) of the config file, generated from the
/// types: descriptions from their docs, defaults from their `Default`, and
/// the numeric minimum and maximum from [`condense_model::RANGES`] and
/// [`LIMIT_RANGES`], the tables `validate` enforces. `agents` is an object
/// whose values are the same schema without `agents`.
pub fn json_schema() -> serde_json::Value {
    let embedded = serde_json::from_str(&condense_compressor::Settings::schema())
        .expect("the compressor's schema is JSON");
    json_schema_with(&embedded)
}

/// [`json_schema`] with the compressor keys of `compressor` (the schema a
/// compressor's `settings-schema` export returns).
pub fn json_schema_with(compressor: &serde_json::Value) -> serde_json::Value {
    use serde_json::{Value, json};

    let mut schema = schemars::schema_for!(HostKeys).to_value();
    apply_ranges(&mut schema, CORE_RANGES);
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(entries)) = compressor.get(key) {
            let into = schema[key]
                .as_object_mut()
                .map(std::mem::take)
                .unwrap_or_default();
            let mut merged = into;
            merged.extend(entries.clone());
            schema[key] = Value::Object(merged);
        }
    }
    let limits = def_of(&mut schema, "limits");
    apply_ranges(limits, LIMIT_RANGES);
    let llm = def_of(&mut schema, "llm");
    apply_ranges(llm, LLM_RANGES);

    let mut agent = serde_json::Map::new();
    agent.insert(
        "description".into(),
        json!(
            "Overrides for one agent, selected with `--agent NAME`: any key of the file but \
             `agents`. Keys left out keep the top-level value; a table merges key by key, any \
             other value (a list included) replaces the top-level one."
        ),
    );
    for key in ["type", "properties", "additionalProperties"] {
        agent.insert(key.into(), schema[key].clone());
    }
    schema["$defs"]["AgentSettings"] = Value::Object(agent);
    schema["properties"]["agents"] = json!({
        "description": "Per-agent overrides: `[agents.NAME]` tables, by agent name. Every \
                        agent's effective settings are validated when the file is loaded.",
        "type": "object",
        "additionalProperties": { "$ref": "#/$defs/AgentSettings" },
        "default": {}
    });
    schema["title"] = json!("condense configuration file");
    tidy(&mut schema);
    schema
}

/// [`json_schema`] as `condense config --schema` prints it (and as the golden
/// file `host-example/config.schema.json` holds it).
pub fn json_schema_text() -> String {
    schema_text(&json_schema())
}

/// A schema as `condense config --schema` prints it.
pub fn schema_text(schema: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).expect("a JSON value serialises");
    text.push('\n');
    text
}

/// Sets `minimum` and `maximum` of each property of `object` named in `ranges`.
fn apply_ranges(object: &mut serde_json::Value, ranges: &[(&str, u32, u32)]) {
    for &(key, min, max) in ranges {
        let property = object["properties"]
            .get_mut(key)
            .and_then(serde_json::Value::as_object_mut)
            .unwrap_or_else(|| panic!("a range names `{key}`, which the schema does not have"));
        property.insert("minimum".into(), min.into());
        property.insert("maximum".into(), max.into());
    }
}

/// The definition a top-level property refers to (`{"$ref": "#/$defs/X"}`).
fn def_of<'a>(schema: &'a mut serde_json::Value, property: &str) -> &'a mut serde_json::Value {
    let pointer = schema["properties"][property]["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix('#'))
        .unwrap_or_else(|| panic!("`{property}` is not a reference to a definition"))
        .to_owned();
    schema
        .pointer_mut(&pointer)
        .unwrap_or_else(|| panic!("`{property}` refers to {pointer}, which is missing"))
}

/// Makes a generated (sub)schema read well and fit TOML: keywords in a fixed
/// order (description first), doc-comment line breaks joined within
/// paragraphs, and no `null` (TOML has none: an unset optional key is absent).
fn tidy(schema: &mut serde_json::Value) {
    use serde_json::Value;
    const ORDER: &[&str] = &[
        "$schema",
        "title",
        "description",
        "$ref",
        "type",
        "format",
        "const",
        "items",
        "minimum",
        "maximum",
        "default",
        "properties",
        "additionalProperties",
        "oneOf",
        "$defs",
    ];
    let Value::Object(map) = schema else {
        return;
    };
    let mut entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
    entries.sort_by_key(|(k, _)| ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()));
    map.extend(entries);

    if let Some(Value::String(text)) = map.get_mut("description") {
        let paragraphs: Vec<String> = text.split("\n\n").map(|p| p.replace('\n', " ")).collect();
        *text = paragraphs.join("\n\n");
    }
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            map.insert("type".into(), only);
        }
    }
    match map.get_mut("default") {
        Some(Value::Null) => {
            map.remove("default");
        }
        Some(Value::Object(default)) => default.retain(|_, v| !v.is_null()),
        _ => {}
    }
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(schemas)) = map.get_mut(key) {
            schemas.values_mut().for_each(tidy);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = map.get_mut(key) {
            tidy(sub);
        }
    }
    if let Some(Value::Array(schemas)) = map.get_mut("oneOf") {
        schemas.iter_mut().for_each(tidy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_compressor::settings::{ClearMode, ToolClasses};

    /// The embedded compressor's settings `s` gives.
    fn passes(s: &Settings) -> condense_compressor::Settings {
        condense_compressor::Settings::parse(&s.compressor_json()).unwrap()
    }

    fn err(text: &str) -> String {
        format!("{:#}", ConfigFile::parse(text).unwrap_err())
    }

    #[test]
    fn empty_file_gives_defaults() {
        assert_eq!(Settings::parse("").unwrap(), Settings::default());
        assert!(ConfigFile::parse("").unwrap().agents.is_empty());
    }

    #[test]
    fn keys_override_defaults() {
        let s = Settings::parse("token_threshold = 40000\ntarget_tokens = 16000\nkeep_recent_tokens = 8000\n[limits]\ntimeout_ms = 100\n").unwrap();
        assert_eq!(s.core.token_threshold, 40_000);
        assert_eq!(s.core.target_tokens, 16_000);
        assert_eq!(s.core.recent_turns, CoreConfig::default().recent_turns);
        assert_eq!(s.limits.timeout_ms, 100);
    }

    #[test]
    fn unknown_keys_are_named() {
        let e = err("token_treshold = 4");
        assert!(
            e.contains("token_treshold: unknown field")
                && e.contains("expected one of `token_threshold`"),
            "{e}"
        );
        let e = err("[limits]\nmemory = 4");
        assert!(e.contains("limits.memory: unknown field"), "{e}");
        assert!(
            e.contains("`memory_mib`"),
            "the allowed keys are listed: {e}"
        );
        let e = err("[components]\nsummariser = \"x.wasm\"");
        assert!(e.contains("components.summariser: unknown field"), "{e}");
    }

    /// Defect: `token_threshold = 40000` alone was an error (the default
    /// target, 50000, was above it).
    #[test]
    fn the_threshold_alone_gives_a_consistent_config() {
        let s = Settings::parse("token_threshold = 40000").unwrap();
        assert_eq!(
            s.core,
            CoreConfig {
                token_threshold: 40_000,
                target_tokens: 20_000,
                recent_turns: 10,
                keep_recent_tokens: 8_000,
                summary_max_tokens: 800,
            }
        );
        // An explicit value wins; the derived ones stay below it.
        let s = Settings::parse("token_threshold = 40000\ntarget_tokens = 5000").unwrap();
        assert_eq!(
            (
                s.core.target_tokens,
                s.core.keep_recent_tokens,
                s.core.summary_max_tokens
            ),
            (5_000, 5_000, 800)
        );
        let s = Settings::parse("target_tokens = 100").unwrap();
        assert_eq!(
            (s.core.keep_recent_tokens, s.core.summary_max_tokens),
            (100, 99)
        );
        let s = Settings::parse("token_threshold = 2000").unwrap();
        assert_eq!(
            s.core.summary_max_tokens, 64,
            "at least the range's minimum"
        );
        // Only an explicit inconsistent pair is an error.
        let e = err("token_threshold = 40000\ntarget_tokens = 50000");
        assert!(
            e.contains("target_tokens = 50000: must be between 1 and"),
            "{e}"
        );
    }

    #[test]
    fn tools_table_is_strict() {
        let e = err("[tools]\nmutating = [\"Edit\"]\nreadonly = [\"Read\"]");
        assert!(
            e.contains("tools.readonly: unknown field") && e.contains("`exec_capable`"),
            "{e}"
        );
        let e = err("[tools]\nmutating = [1]");
        assert!(e.contains("tools.mutating[0]: invalid type"), "{e}");
        let e = err("[tools]\nmutating = \"Edit\"");
        assert!(e.contains("tools.mutating: invalid type"), "{e}");
        let e = err("tools = [\"Edit\"]");
        assert!(e.contains("tools[0]: invalid type"), "{e}");
        let e = err("[tools]\nexec_capable = [\"\"]");
        assert!(e.contains("tools.exec_capable[0] is empty"), "{e}");
        // Given, a list replaces the default list; left out, the default stays.
        let s = Settings::parse("[tools]\nmutating = [\"Edit\", \"mcp__*__write*\"]").unwrap();
        assert_eq!(passes(&s).tools.mutating, ["Edit", "mcp__*__write*"]);
        assert_eq!(
            passes(&s).tools.exec_capable,
            ToolClasses::default().exec_capable
        );
    }

    #[test]
    fn out_of_range_values_are_named_with_their_range() {
        let e = err("token_threshold = 40000\ntarget_tokens = 50000");
        assert!(e.contains("target_tokens") && e.contains("39999"), "{e}");
        let e = err("[limits]\nmemory_mib = 1");
        assert!(
            e.contains("limits.memory_mib = 1: must be between 16 and 4096"),
            "{e}"
        );
        let e = err("max_loop_steps_before_aggregate = 2");
        assert!(
            e.contains("max_loop_steps_before_aggregate = 2") && e.contains("3"),
            "{e}"
        );
    }

    #[test]
    fn wrong_types_are_named() {
        let e = err("recent_turns = \"ten\"");
        assert!(
            e.contains("recent_turns: invalid type: string \"ten\""),
            "{e}"
        );
        let e = err("recent_turns = -1");
        assert!(e.contains("recent_turns: invalid value"), "{e}");
        let e = err("clear_mode = \"wipe\"");
        assert!(
            e.contains("clear_mode: unknown variant `wipe`") && e.contains("truncate"),
            "{e}"
        );
        let e = err("reasoning_echo = 1");
        assert!(e.contains("reasoning_echo: invalid type"), "{e}");
    }

    const AGENTS: &str = r#"
token_threshold = 60000
target_tokens = 30000
clear_mode = "truncate"
exclude_tools = ["Read", "Grep"]

[tools]
mutating = ["Edit", "Write"]

[limits]
timeout_ms = 2000

[agents.review]
token_threshold = 40000
target_tokens = 16000
keep_recent_tokens = 8000
exclude_tools = ["Read"]
[agents.review.tools]
exec_capable = ["Bash"]
[agents.review.limits]
memory_mib = 128

[agents.plain]
"#;

    #[test]
    fn agent_keys_merge_over_the_top_level_key_by_key() {
        let file = ConfigFile::parse(AGENTS).unwrap();
        assert_eq!(file.agent_names().collect::<Vec<_>>(), ["plain", "review"]);
        let base = &file.base;
        let review = file.settings(Some("review")).unwrap();
        // Overridden keys.
        assert_eq!(review.core.token_threshold, 40_000);
        assert_eq!(review.core.target_tokens, 16_000);
        assert_eq!(review.core.keep_recent_tokens, 8_000);
        assert_eq!(review.limits.memory_mib, 128);
        assert_eq!(passes(review).tools.exec_capable, ["Bash"]);
        // Keys the agent leaves out keep the top-level value, in tables too.
        assert_eq!(passes(review).clear_mode, ClearMode::Truncate);
        assert_eq!(passes(review).tools.mutating, ["Edit", "Write"]);
        assert_eq!(review.limits.timeout_ms, 2_000);
        // Unset everywhere, the summary budget follows each one's threshold.
        assert_eq!(review.core.summary_max_tokens, 800);
        assert_eq!(base.core.summary_max_tokens, 1_200);
        // An empty agent table is the top level; no agent is the top level.
        assert_eq!(file.settings(Some("plain")).unwrap(), base);
        assert_eq!(file.settings(None).unwrap(), base);
        assert_eq!(base.core.token_threshold, 60_000);
        assert_eq!(
            passes(base).tools.exec_capable,
            ToolClasses::default().exec_capable
        );
    }

    #[test]
    fn an_agent_list_replaces_the_top_level_list() {
        let file = ConfigFile::parse(AGENTS).unwrap();
        assert_eq!(passes(&file.base).exclude_tools, ["Read", "Grep"]);
        assert_eq!(
            passes(file.settings(Some("review")).unwrap()).exclude_tools,
            ["Read"]
        );
        let file =
            ConfigFile::parse("[agents.a]\nexclude_tools = []\n[agents.a.tools]\nmutating = []")
                .unwrap();
        let a = file.settings(Some("a")).unwrap();
        assert!(passes(a).exclude_tools.is_empty() && passes(a).tools.mutating.is_empty());
    }

    #[test]
    fn a_bad_key_inside_an_agent_is_named_with_its_path() {
        let e = err("[agents.review]\ntoken_treshold = 4");
        assert!(
            e.contains("agents.review.token_treshold: unknown field")
                && e.contains("expected one of `token_threshold`"),
            "{e}"
        );
        let e = err("[agents.review.tools]\nreadonly = []");
        assert!(
            e.contains("agents.review.tools.readonly: unknown field"),
            "{e}"
        );
        let e = err("[agents.review.limits]\nmemory = 4");
        assert!(
            e.contains("agents.review.limits.memory: unknown field"),
            "{e}"
        );
        let e = err("[agents.review]\nrecent_turns = \"ten\"");
        assert!(
            e.contains("agents.review.recent_turns: invalid type"),
            "{e}"
        );
        let e = err("[agents.review]\ntools = 3");
        assert!(
            e.contains(
                "agents.review.tools: invalid type: integer `3`, expected struct ToolClasses"
            ),
            "{e}"
        );
        let e = err("[agents.review.agents.inner]\ntoken_threshold = 4");
        assert!(
            e.contains("agents.review.agents: agents cannot be nested"),
            "{e}"
        );
        let e = err("agents = 3");
        assert!(e.contains("agents: must be a table"), "{e}");
        let e = err("[agents]\nreview = 3");
        assert!(e.contains("agents.review: must be a table"), "{e}");
        let e = err("[agents.\"code review\"]\ntoken_treshold = 4");
        assert!(e.contains("agents.\"code review\".token_treshold"), "{e}");
        // The top level is checked first, and named without a prefix.
        let e = err("token_treshold = 4\n[agents.review]\nrecent_turns = 1");
        assert!(e.starts_with("token_treshold: unknown field"), "{e}");
    }

    #[test]
    fn an_out_of_range_agent_value_is_named_with_its_path_and_range() {
        let e = err("[agents.review]\ntarget_tokens = 200000");
        assert!(
            e.contains("agents.review.target_tokens = 200000: must be between 1 and token_threshold - 1 (99999)"),
            "{e}"
        );
        let e = err("[agents.review.limits]\ntimeout_ms = 1");
        assert!(
            e.contains("agents.review.limits.timeout_ms = 1: must be between 10 and 600000"),
            "{e}"
        );
        // Valid on its own, invalid over the top level: the effective
        // settings are what is validated, when the file is loaded.
        let e = err("target_tokens = 50000\n[agents.small]\ntoken_threshold = 40000");
        assert!(
            e.contains("agents.small.target_tokens = 50000")
                && e.contains("[agents.small] does not set target_tokens"),
            "{e}"
        );
        let e = err("[agents.small]\ntarget_tokens = 200000");
        assert!(!e.contains("does not set"), "{e}");
        let e = err("[agents.small.tools]\nmutating = [\"\"]");
        assert!(
            e.contains("agents.small.tools.mutating[0] is empty") && !e.contains("does not set"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_agent_lists_the_known_ones() {
        let file = ConfigFile::parse(AGENTS).unwrap();
        let e = format!("{:#}", file.settings(Some("reveiw")).unwrap_err());
        assert!(
            e.contains("unknown agent `reveiw`") && e.contains("`plain`, `review`"),
            "{e}"
        );
        let e = format!(
            "{:#}",
            ConfigFile::parse("")
                .unwrap()
                .settings(Some("x"))
                .unwrap_err()
        );
        assert!(
            e.contains("defines no agents") && e.contains("[agents.x]"),
            "{e}"
        );
    }

    #[test]
    fn relative_component_paths_resolve_against_the_file_in_agents_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "[components]\nsummarizer = \"s.wasm\"\n[agents.a.components]\ncompressor = \"sub/c.wasm\"\n[agents.b.components]\nsummarizer = \"/abs/s.wasm\"\n",
        )
        .unwrap();
        let file = ConfigFile::load(&path).unwrap();
        assert_eq!(
            file.base.components.summarizer,
            Some(dir.path().join("s.wasm"))
        );
        let a = Settings::load_agent(&path, Some("a")).unwrap();
        assert_eq!(a.components.compressor, Some(dir.path().join("sub/c.wasm")));
        assert_eq!(a.components.summarizer, Some(dir.path().join("s.wasm")));
        let b = file.settings(Some("b")).unwrap();
        assert_eq!(b.components.summarizer, Some(PathBuf::from("/abs/s.wasm")));
        let e = format!("{:#}", file.settings(Some("c")).unwrap_err());
        assert!(e.contains(&path.display().to_string()), "{e}");
    }

    #[test]
    fn to_toml_prints_every_key_and_reads_back_to_the_same_settings() {
        let file = ConfigFile::parse(
            "clear_mode = \"clear\"\n[components]\nsummarizer = \"/x/s.wasm\"\n[agents.r]\nrecent_turns = 2\n",
        )
        .unwrap();
        for settings in [
            &Settings::default(),
            &Settings::for_replay(),
            &file.base,
            file.settings(Some("r")).unwrap(),
        ] {
            let text = settings.to_toml().unwrap();
            let back = Settings::parse(&text).unwrap();
            // The compressor's keys come back all written out, to the same
            // effect.
            assert_eq!(passes(&back), passes(settings), "{text}");
            let host = |s: &Settings| (s.core, s.components.clone(), s.limits.clone());
            assert_eq!(host(&back), host(settings), "{text}");
            let schema = json_schema();
            for key in schema["properties"].as_object().unwrap().keys() {
                if key != "agents" {
                    assert!(text.contains(key.as_str()), "{key} missing from\n{text}");
                }
            }
        }
    }

    fn golden_path() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("config.schema.json")
    }

    /// `host-example/config.schema.json` is the schema `condense config
    /// --schema` prints. `CONDENSE_BLESS=1` rewrites it.
    #[test]
    fn schema_matches_the_golden_file() {
        let generated = json_schema_text();
        let path = golden_path();
        if std::env::var_os("CONDENSE_BLESS").is_some_and(|v| v == "1") {
            std::fs::write(&path, &generated).unwrap();
            return;
        }
        let golden = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            golden == generated,
            "{} differs from the schema generated from the code (config keys, their docs or \
             ranges changed). Regenerate it with\n\n    CONDENSE_BLESS=1 cargo test -p \
             condense schema_matches_the_golden_file\n\nand review the diff.",
            path.display()
        );
    }

    /// The README's key tables (its "Configuration" section) name exactly the
    /// keys of the schema, each with the schema's default where the schema
    /// has one (a derived default is prose there, and none here).
    #[test]
    fn readme_key_tables_match_the_schema() {
        use serde_json::Value;
        let readme = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"),
        )
        .unwrap();
        let section = readme
            .split_once("### Configuration")
            .and_then(|(_, rest)| rest.split_once("**Agents.**"))
            .expect("the README has its Configuration section")
            .0;
        // `| `key` | default | …` or `| `[table]` `key` | default | …`.
        let mut documented = std::collections::BTreeMap::new();
        for line in section.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = line.split(" | ").collect();
            let names: Vec<&str> = cells[0]
                .trim_start_matches("| ")
                .split('`')
                .filter(|s| !s.trim().is_empty())
                .collect();
            let key = match names.as_slice() {
                [key] => key.to_string(),
                [table, key] => format!("{}.{key}", table.trim_matches(['[', ']'])),
                _ => panic!("a key cell of the README I cannot read: {line}"),
            };
            documented.insert(key, cells[1].trim().to_owned());
        }

        let schema = json_schema();
        let mut keys = std::collections::BTreeMap::new();
        for (key, property) in schema["properties"].as_object().unwrap() {
            // A table is a reference to a definition with properties (an
            // enum such as `clear_mode` is a reference too).
            let table = property.get("$ref").and_then(Value::as_str).and_then(|r| {
                schema["$defs"][r.trim_start_matches("#/$defs/")]["properties"].as_object()
            });
            match table {
                _ if key == "agents" => {}
                Some(table) => {
                    for (inner, p) in table {
                        keys.insert(format!("{key}.{inner}"), p.get("default").cloned());
                    }
                }
                None => {
                    keys.insert(key.clone(), property.get("default").cloned());
                }
            }
        }
        assert_eq!(
            documented.keys().collect::<Vec<_>>(),
            keys.keys().collect::<Vec<_>>(),
            "the README's key tables and the schema name different keys"
        );
        for (key, default) in keys {
            let Some(default) = default else { continue };
            let cell = &documented[&key];
            // The cell's value: a JSON value in backticks, or a number
            // followed by prose (`67108864 (64 MiB)`).
            let text = cell.trim_matches('`');
            let value: Value = serde_json::from_str(text)
                .or_else(|_| serde_json::from_str(text.split(' ').next().unwrap()))
                .unwrap_or_else(|_| panic!("{key}: the README's default `{cell}` is no value"));
            assert_eq!(value, default, "{key}: the README says {cell}");
        }
    }

    #[test]
    fn schema_ranges_come_from_the_range_tables() {
        let schema = json_schema();
        let properties = schema["properties"].as_object().unwrap();
        let integers: Vec<&String> = properties
            .iter()
            .filter(|(_, p)| p["type"] == "integer")
            .map(|(k, _)| k)
            .collect();
        for key in integers {
            assert!(
                properties[key]["minimum"].is_u64() && properties[key]["maximum"].is_u64(),
                "{key} has no range"
            );
        }
        for &(key, min, max) in CORE_RANGES {
            assert_eq!(properties[key]["minimum"], min, "{key}");
            assert_eq!(properties[key]["maximum"], max, "{key}");
        }
        let limits = &schema["$defs"]["LimitSettings"]["properties"];
        for &(key, min, max) in LIMIT_RANGES {
            assert_eq!(limits[key]["minimum"], min, "{key}");
            assert_eq!(limits[key]["maximum"], max, "{key}");
        }
        // Every description is there, and agents take every key but `agents`.
        for (key, p) in properties {
            assert!(
                p["description"].as_str().is_some_and(|d| d.len() > 20),
                "{key}"
            );
        }
        let agent = &schema["$defs"]["AgentSettings"]["properties"];
        assert_eq!(
            agent.as_object().unwrap().len() + 1,
            properties.len(),
            "{agent}"
        );
        assert!(agent.get("agents").is_none());
        assert_eq!(schema["additionalProperties"], false);
    }

    /// README's configuration section documents every key of the schema and
    /// every `clear_mode` value.
    #[test]
    fn readme_documents_every_key() {
        let readme =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
                .unwrap();
        let schema = json_schema();
        let mut missing = Vec::new();
        for (key, property) in schema["properties"].as_object().unwrap() {
            if !readme.contains(&format!("`{key}`")) && !readme.contains(&format!("`[{key}]`")) {
                missing.push(key.clone());
            }
            let Some(pointer) = property["$ref"].as_str().and_then(|r| r.strip_prefix('#')) else {
                continue;
            };
            let def = schema.pointer(pointer).unwrap();
            if let Some(sub) = def["properties"].as_object() {
                for sub_key in sub.keys() {
                    if !readme.contains(&format!("`{sub_key}`")) {
                        missing.push(format!("{key}.{sub_key}"));
                    }
                }
            }
            for value in def["oneOf"].as_array().into_iter().flatten() {
                if let Some(v) = value["const"].as_str()
                    && !readme.contains(&format!("\"{v}\""))
                {
                    missing.push(format!("{key} = \"{v}\""));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "README.md's configuration section does not document {missing:?}"
        );
    }
    /// The cap comes from `[limits] max_request_bytes`; a request at the cap
    /// is compressed, one byte over it is sent unchanged, with the checkpoint
    /// it came with, and the report says why. No component ran, so the
    /// report names none.
    #[test]
    fn a_request_over_max_request_bytes_fails_open_without_running_the_compressor() {
        assert_eq!(
            Settings::default().limits.max_request_bytes as usize,
            condense_host::middleware::DEFAULT_MAX_REQUEST_BYTES
        );
        let settings = Settings::parse("[limits]\nmax_request_bytes = 1024").unwrap();
        let middleware = settings.middleware().unwrap();
        assert_eq!(middleware.max_request_bytes(), 1024);
        use condense_host::SessionCheckpoint;
        use condense_model::{Checkpoint, Message, Role};
        let request = |bytes: usize| vec![Message::text(Role::User, "x".repeat(bytes))];
        let checkpoint = SessionCheckpoint {
            checkpoint: Checkpoint {
                version: 1,
                boundary: 3,
                state: b"{}".to_vec(),
            },
            prefix_hash: "abc".into(),
        };
        let json = settings.compressor_json();

        let at_cap = request(1024);
        let sent = middleware.compress(&at_cap, &settings.core, &json, None);
        assert_ne!(
            sent.report.status(),
            condense_host::Status::FailedOpen,
            "{:?}",
            sent.report
        );
        assert!(sent.report.guest().is_some());

        let over = request(1025);
        let sent = middleware.compress(&over, &settings.core, &json, Some(&checkpoint));
        assert_eq!(sent.report.status(), condense_host::Status::FailedOpen);
        assert_eq!(sent.messages(&over), over);
        assert_eq!(sent.checkpoint, Some(checkpoint));
        assert_eq!(
            sent.report.reason(),
            Some(
                "request of 1025 bytes is over limits.max_request_bytes = 1024: sent unchanged, \
                 no component ran"
            )
        );
        assert!(sent.report.component().is_none() && sent.report.failure().is_none());
        assert!(sent.report.guest().is_none());
        let json = serde_json::to_value(&sent.report).unwrap();
        assert_eq!(json["status"], "failed-open");
        assert!(json.get("failure").is_none(), "{json}");
    }

    #[test]
    fn a_summarizer_chain_names_the_embedded_one_and_paths_relative_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "[components]\nsummarizers = [\"mine.wasm\", \"heuristic\"]\n",
        )
        .unwrap();
        let file = ConfigFile::load(&path).unwrap();
        assert_eq!(
            file.base.components.summarizers,
            Some(vec![
                dir.path().join("mine.wasm"),
                PathBuf::from("heuristic")
            ])
        );
        let shown = file.base.to_toml().unwrap();
        assert!(shown.contains("\"heuristic\"]"), "{shown}");
        let e = err("[components]\nsummarizer = \"a.wasm\"\nsummarizers = [\"heuristic\"]");
        assert!(
            e.contains("set either `summarizer` or `summarizers`"),
            "{e}"
        );
        let e = err("[components]\nsummarizers = []");
        assert!(e.contains("an empty chain"), "{e}");
    }
}
