//! Building the [`Middleware`] a file describes: the components it names,
//! loaded from their paths, or the caller's embedded ones; the sandbox
//! limits; the model behind the LLM summarizer's `llm` import.
//!
//! The component bytes and the model client are handed in, not linked here:
//! the `condense` binary embeds the default components
//! (`condense-embedded`) and asks models with `condense-runtime`'s
//! OpenAI-compatible client, and a program that embeds condense may bring
//! its own of either.

use crate::{EMBEDDED_SUMMARIZER, LLM_SUMMARIZER, LlmSettings, Settings};
use anyhow::{Result, bail};
use condense_host::llm::{LanguageModel, Llm, LlmLimits};
use condense_host::{ComponentSource, Embedded, Middleware, Runtime};
use std::sync::Arc;
use std::time::Duration;

/// Makes the client of the model `[llm]` describes, for a chain that names
/// `llm`; its [`LlmSettings::endpoint`] is set when it is called.
pub type ModelClient<'a> = &'a dyn Fn(&LlmSettings) -> Result<Arc<dyn LanguageModel>>;

impl LlmSettings {
    /// `base_url` and `model`, which a chain naming `llm` needs.
    pub fn endpoint(&self) -> Result<(&str, &str)> {
        match (&self.base_url, &self.model) {
            (Some(base_url), Some(model)) => Ok((base_url, model)),
            _ => bail!(
                "components.summarizers names `llm`: set [llm] base_url and model (an \
                 OpenAI-compatible endpoint, e.g. base_url = \"http://127.0.0.1:11434/v1\")"
            ),
        }
    }

    /// The host's limits on the model calls of the LLM summarizer.
    pub fn limits(&self) -> LlmLimits {
        LlmLimits {
            call_timeout: Duration::from_millis(self.timeout_ms.into()),
            compaction_budget: Duration::from_millis(self.budget_ms.into()),
            max_output_tokens: self.max_output_tokens,
            breaker_failures: self.breaker_failures,
            breaker_cooldown: Duration::from_millis(self.breaker_cooldown_ms.into()),
        }
    }
}

impl Settings {
    /// Loads the configured components into a fail-open middleware: a path
    /// the file gives, else the `embedded` bytes. A chain that names `llm`
    /// gets the model `client` makes from `[llm]`.
    ///
    /// The builtin summarizers load under their names, so reports, events
    /// and metrics say which one wrote a summary (summarizer `heuristic`,
    /// summarizer `llm`, or the file's name).
    pub fn middleware(&self, embedded: &Embedded, client: ModelClient<'_>) -> Result<Middleware> {
        let heuristic = ComponentSource::Named(EMBEDDED_SUMMARIZER, embedded.summarizer);
        let summarizers = match &self.components.summarizers {
            Some(chain) => chain
                .iter()
                .map(|entry| match entry.to_str() {
                    Some(EMBEDDED_SUMMARIZER) => heuristic.clone(),
                    Some(LLM_SUMMARIZER) => {
                        ComponentSource::Named(LLM_SUMMARIZER, embedded.llm_summarizer)
                    }
                    _ => ComponentSource::Path(entry.clone()),
                })
                .collect(),
            None => vec![match &self.components.summarizer {
                Some(path) => ComponentSource::Path(path.clone()),
                None => heuristic,
            }],
        };
        let mut runtime = Runtime::with_summarizers(
            self.sandbox_limits(),
            match &self.components.compressor {
                Some(path) => ComponentSource::Path(path.clone()),
                None => ComponentSource::Embedded(embedded.compressor),
            },
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
            self.llm.endpoint()?;
            runtime = runtime.with_llm(Llm::new(client(&self.llm)?, self.llm.limits()));
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
}

/// A [`ModelClient`] for programs with none: a chain that names `llm` is an
/// error at start.
pub fn no_model_client(_: &LlmSettings) -> Result<Arc<dyn LanguageModel>> {
    bail!("components.summarizers names `llm`, but this program has no model client for it")
}
