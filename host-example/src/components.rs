//! The middleware every command runs: the config file's, with the components
//! embedded in this binary and `condense-runtime`'s OpenAI-compatible client
//! behind the LLM summarizer's `llm` import.

use anyhow::Result;
use condense_config::{AgentSettings, LlmSettings};
use condense_host::Middleware;
use condense_host::llm::LanguageModel;
use condense_runtime::model::{AgentFrame, OpenAiLlm};
use std::sync::Arc;

/// The configured middleware.
pub fn middleware(settings: &AgentSettings) -> Result<Middleware> {
    middleware_in(settings, None)
}

/// [`middleware`] for an agent whose requests `frame` records: the LLM
/// summarizer's requests start as the agent's do (its system prompt and
/// tools), so the provider's prompt cache serves them.
pub fn middleware_in(settings: &AgentSettings, frame: Option<&AgentFrame>) -> Result<Middleware> {
    settings.middleware(&condense_embedded::COMPONENTS, &|llm| client(llm, frame))
}

/// The model client of `[llm]`, sending the agent's frame if there is one.
pub fn client(llm: &LlmSettings, frame: Option<&AgentFrame>) -> Result<Arc<dyn LanguageModel>> {
    let client = OpenAiLlm::from_settings(llm)?;
    Ok(Arc::new(match frame {
        Some(frame) => client.with_frame(frame.clone()),
        None => client,
    }))
}
