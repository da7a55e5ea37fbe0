//! The checks a file's settings pass when it is loaded, every agent's
//! included: the ranges of the host's keys, the summarizer chain, and the
//! embedded compressor's keys (checked by its own code, natively).

use crate::file::CORE_KEYS;
use crate::sections::{CONTEXT_TOKENS_MAX, HOST_TABLES, LLM_KEYS_FROM_LLM_TABLE};
use crate::{AgentSettings, LLM_SUMMARIZER};
use anyhow::{Result, anyhow, bail};
use condense_model::{Range, range};

/// The ranges of the `[llm]` keys: [`AgentSettings::validate`] enforces them and
/// [`json_schema`](crate::json_schema) publishes them.
pub const LLM_RANGES: &[Range] = &[
    Range::new("timeout_ms", 100, 3_600_000),
    Range::new("budget_ms", 100, 3_600_000),
    Range::new("max_output_tokens", 64, 1_000_000),
    Range::new("max_retries", 0, 10),
    Range::new("context_tokens", 2_000, CONTEXT_TOKENS_MAX),
    Range::new("breaker_failures", 1, 1_000),
    Range::new("breaker_cooldown_ms", 0, 86_400_000),
];

/// The ranges of the `[limits]` keys, as [`LLM_RANGES`] (the fold knobs'
/// are [`condense_model::CORE_RANGES`], the embedded compressor's
/// `condense_contract::settings::RANGES`). `max_request_bytes` goes up to
/// 1 GiB: a larger request cannot be compressed within the largest guest
/// memory (4 GiB), which holds the request and the compressor's working
/// copies of it.
pub const LIMIT_RANGES: &[Range] = &[
    Range::new("memory_mib", 16, 4_096),
    Range::new("timeout_ms", 10, 600_000),
    Range::new("max_request_bytes", 1_024, 1 << 30),
];

/// The ranges of the `[recall]` keys, as [`LLM_RANGES`]: a recall gives
/// back at least a few lines, and at most a large file's worth.
pub const RECALL_RANGES: &[Range] = &[
    Range::new("budget_tokens", 100, 100_000),
    Range::new("max_rounds", 1, 10),
];

/// Names the first key of `[table]` outside its range in `ranges`.
fn check_table(table: &str, ranges: &[Range], settings: &impl serde::Serialize) -> Result<()> {
    range::check_fields(ranges, settings).map_err(|e| anyhow!("{table}.{e}"))
}

impl AgentSettings {
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
                    .chain(&HOST_TABLES)
                    .chain(&["agents"])
                    .map(|k| format!("`{k}`"))
                    .collect();
                bail!(
                    "{key}: unknown field `{key}`, expected one of {}, {expected}",
                    host.join(", ")
                );
            }
            bail!("{e}");
        }
        self.validate_summarizer_tables()?;
        self.validate_models()?;
        check_table("limits", LIMIT_RANGES, &self.limits)?;
        check_table("llm", LLM_RANGES, &self.llm)?;
        check_table("recall", RECALL_RANGES, &self.recall)?;
        if let Some(t) = self.llm.temperature.filter(|t| !(0.0..=2.0).contains(t)) {
            bail!("llm.temperature = {t}: must be between 0 and 2");
        }
        self.runtime
            .budgets
            .validate()
            .map_err(|e| anyhow!("runtime.budgets.{e}"))?;
        if self.runtime.context_window == 0 {
            bail!("runtime.context_window = 0: must be at least 1");
        }
        Ok(())
    }

    /// Each `[summarizers.NAME]` names a summarizer of the chain, and the
    /// LLM summarizer's table leaves what `[llm]` sets to `[llm]`. What is
    /// in the tables is each summarizer's to check, when it is loaded.
    fn validate_summarizer_tables(&self) -> Result<()> {
        let chain: Vec<String> = self
            .summarizer_chain()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        for (name, table) in &self.summarizers {
            let at = format!("summarizers.{}", crate::path::key_text(name));
            if !chain.contains(name) {
                let known: Vec<String> = chain.iter().map(|n| format!("`{n}`")).collect();
                bail!(
                    "{at}: no summarizer of the chain is called `{name}` (the chain: {}; a \
                     component goes by its file name)",
                    known.join(", ")
                );
            }
            if name == LLM_SUMMARIZER
                && let Some(key) = LLM_KEYS_FROM_LLM_TABLE
                    .iter()
                    .find(|k| table.contains_key(**k))
            {
                bail!("{at}.{key}: the LLM summarizer takes `{key}` from [llm]; set it there");
            }
        }
        Ok(())
    }

    /// Checks that every model's settings are valid: a model's threshold
    /// with the fold keys the file sets.
    pub(crate) fn validate_models(&self) -> Result<()> {
        for (pattern, _) in self.models.entries() {
            let (settings, ..) = self.for_model(Some(pattern));
            if let Err(e) = settings.core.validate() {
                bail!(
                    "models.{}: with its threshold ({}), {e}",
                    crate::path::key_text(pattern),
                    settings.core.token_threshold
                );
            }
            if let Some(Err(e)) = settings.embedded_compressor() {
                bail!("models.{}: {e}", crate::path::key_text(pattern));
            }
        }
        Ok(())
    }
}
