//! The runtime's OpenAI-compatible client as the host's language model for
//! summarizers (`condense_host::llm`): the `llm` import of an LLM
//! summarizer ends up here, as one Chat Completions request.

use super::{Model, ModelRequest, OpenAiConfig, OpenAiModel};
use condense_host::llm::{ChatRequest, LanguageModel};
use condense_model::Message;
use std::time::Duration;

/// An OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp, any
/// gateway) answering summarizers' chat completions. Its key, if any, is in
/// its config: sent as the `Authorization` header and nowhere else.
pub struct OpenAiLlm {
    config: OpenAiConfig,
}

impl OpenAiLlm {
    pub fn new(config: OpenAiConfig) -> OpenAiLlm {
        OpenAiLlm { config }
    }
}

impl LanguageModel for OpenAiLlm {
    fn name(&self) -> &str {
        &self.config.model
    }

    fn chat(&self, request: &ChatRequest, timeout: Duration) -> Result<String, String> {
        // `timeout` is for the call whole: each attempt gets its share.
        let attempts = self.config.max_retries.saturating_add(1);
        let mut model = OpenAiModel::new(OpenAiConfig {
            timeout: (timeout / attempts).max(Duration::from_millis(1)),
            ..self.config.clone()
        });
        let request = ModelRequest {
            messages: request
                .messages
                .iter()
                .map(|m| Message::text(m.role, m.content.clone()))
                .collect(),
            tools: Vec::new(),
            max_output_tokens: request.max_tokens,
        };
        let answer = model.complete(&request).map_err(|e| e.to_string())?;
        Ok(answer.message.joined_text())
    }
}
