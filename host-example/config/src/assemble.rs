//! Building the [`Middleware`] a file describes: the components it names,
//! loaded from their paths, or the caller's embedded ones; the sandbox
//! limits; the model behind the LLM summarizer's `llm` import.
//!
//! The component bytes and the model client are handed in, not linked here:
//! the `condense` binary embeds the default components
//! (`condense-embedded`) and asks models with `condense-runtime`'s
//! OpenAI-compatible client, and a program that embeds condense may bring
//! its own of either.

use crate::{AgentSettings, EMBEDDED_SUMMARIZER, LLM_SUMMARIZER, LlmSettings};
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

impl AgentSettings {
    /// Loads the configured components into a fail-open middleware: a path
    /// the file gives, else the `embedded` bytes. A chain that names `llm`
    /// gets the model `client` makes from `[llm]`.
    ///
    /// The builtin summarizers load under their names, so reports, events
    /// and metrics say which one wrote a summary (summarizer `heuristic`,
    /// summarizer `llm`, or the file's name).
    pub fn middleware(&self, embedded: &Embedded, client: ModelClient<'_>) -> Result<Middleware> {
        let chain = self.summarizer_chain();
        let summarizers = chain
            .iter()
            .map(|(name, path)| match (path, name.as_str()) {
                (Some(path), _) => ComponentSource::Path(path.to_path_buf()),
                (None, LLM_SUMMARIZER) => {
                    ComponentSource::Named(LLM_SUMMARIZER, embedded.llm_summarizer)
                }
                (None, _) => ComponentSource::Named(EMBEDDED_SUMMARIZER, embedded.summarizer),
            })
            .collect();
        let mut runtime = Runtime::with_summarizers(
            self.sandbox_limits(),
            match &self.components.compressor {
                Some(path) => ComponentSource::Path(path.clone()),
                None => ComponentSource::Embedded(embedded.compressor),
            },
            summarizers,
        )?;
        // The LLM summarizer: the host's model behind its `llm` import.
        if self.asks_a_model() {
            runtime = runtime.with_llm(Llm::new(client(&self.llm)?, self.llm.limits()));
        }
        // Each summarizer's settings, checked by the summarizer itself now,
        // so that a wrong key stops the program here and not every
        // compaction later.
        for (index, (name, _)) in chain.iter().enumerate() {
            let Some(settings) = self.summarizer_json(name) else {
                continue;
            };
            let at = format!("summarizers.{}", crate::path::key_text(name));
            match runtime.validate_summarizer_settings(index, &settings) {
                Ok(Ok(())) => {}
                Ok(Err(why)) => bail!("{at}: {why} (summarizer `{name}`)"),
                Err(failure) => bail!("{at}: {failure}"),
            }
            runtime = runtime.with_summarizer_settings(index, settings);
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
