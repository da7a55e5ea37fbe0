//! The middleware every command runs: the config file's, with the components
//! embedded in this binary and `condense-runtime`'s OpenAI-compatible client
//! behind the LLM summarizer's `llm` import.

use anyhow::{Result, anyhow};
use condense_config::{LlmSettings, Settings};
use condense_host::Middleware;
use condense_host::llm::LanguageModel;
use condense_runtime::model::{AgentFrame, OpenAiConfig, OpenAiLlm, key_from_env};
use std::sync::Arc;

/// The configured middleware.
pub fn middleware(settings: &Settings) -> Result<Middleware> {
    middleware_in(settings, None)
}

/// [`middleware`] for an agent whose requests `frame` records: the LLM
/// summarizer's requests start as the agent's do (its system prompt and
/// tools), so the provider's prompt cache serves them.
pub fn middleware_in(settings: &Settings, frame: Option<&AgentFrame>) -> Result<Middleware> {
    settings.middleware(&condense_embedded::COMPONENTS, &|llm| client(llm, frame))
}

/// The model client of `[llm]`; reads the key from `api_key_env`.
fn client(llm: &LlmSettings, frame: Option<&AgentFrame>) -> Result<Arc<dyn LanguageModel>> {
    let (base_url, model) = llm.endpoint()?;
    let api_key = match &llm.api_key_env {
        Some(var) => Some(key_from_env(var).map_err(|e| anyhow!("llm.api_key_env: {e}"))?),
        None => None,
    };
    let mut client = OpenAiLlm::new(OpenAiConfig {
        api_key,
        max_retries: llm.max_retries,
        temperature: llm.temperature.map(|t| t as f32),
        ..OpenAiConfig::new(base_url.to_owned(), model.to_owned())
    });
    if let Some(frame) = frame {
        client = client.with_frame(frame.clone());
    }
    Ok(Arc::new(client))
}
