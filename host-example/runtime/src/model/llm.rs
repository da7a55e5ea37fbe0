//! The runtime's OpenAI-compatible client as the host's language model for
//! summarizers (`condense_host::llm`): the `llm` import of an LLM
//! summarizer ends up here, as one Chat Completions request.
//!
//! A summarizer's request after the agent's conversation (the import's
//! `chat-after-conversation`) is sent as the agent's own requests are: the
//! system messages and tools of the agent's last request (its [`Frame`]),
//! the messages condense folds exactly as they were sent, rendered by the
//! same code, then the summarizer's instruction. Against the agent's own
//! endpoint and model, the provider's prompt cache serves all of it but
//! the instruction.

use super::{Model, ModelRequest, OpenAiConfig, OpenAiModel, key_from_env};
use crate::tools::ToolSpec;
use anyhow::{Result, anyhow};
use condense_config::LlmSettings;
use condense_host::llm::{ChatRequest, LanguageModel};
use condense_model::tokens::estimate_messages;
use condense_model::{Message, SUMMARY_MARKER};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// What the agent's requests send besides the conversation condense makes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// The system messages before the conversation.
    pub system: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    /// The summary went in the system prompt (`summary_placement =
    /// "block"`), not as the pair in the conversation.
    pub summary_in_system: bool,
}

/// The [`Frame`] of the last request the agent sent, shared between the
/// condense middleware that records it (`Condense::with_frame`) and the
/// summarizer's model that sends it ([`OpenAiLlm::with_frame`]).
#[derive(Clone, Debug, Default)]
pub struct AgentFrame(Arc<Mutex<Frame>>);

impl AgentFrame {
    pub fn set(&self, frame: Frame) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = frame;
    }

    pub fn get(&self) -> Frame {
        self.read(Frame::clone)
    }

    /// `f` of the frame, without copying it.
    pub fn read<T>(&self, f: impl FnOnce(&Frame) -> T) -> T {
        f(&self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// An OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp, any
/// gateway) answering summarizers' chat completions. Its key, if any, is in
/// its config: sent as the `Authorization` header and nowhere else.
pub struct OpenAiLlm {
    config: OpenAiConfig,
    frame: Option<AgentFrame>,
}

impl OpenAiLlm {
    pub fn new(config: OpenAiConfig) -> OpenAiLlm {
        OpenAiLlm {
            config,
            frame: None,
        }
    }

    /// The client of a config file's `[llm]`: its endpoint, retries and
    /// temperature, the key read from the variable `api_key_env` names.
    /// The [`ModelClient`](condense_config::ModelClient) of every program
    /// that asks models through this runtime (the CLI, the proxy's).
    pub fn from_settings(llm: &LlmSettings) -> Result<OpenAiLlm> {
        let (base_url, model) = llm.endpoint()?;
        let api_key = match &llm.api_key_env {
            Some(var) => Some(key_from_env(var).map_err(|e| anyhow!("llm.api_key_env: {e}"))?),
            None => None,
        };
        Ok(OpenAiLlm::new(OpenAiConfig {
            api_key,
            max_retries: llm.max_retries,
            temperature: llm.temperature.map(|t| t as f32),
            ..OpenAiConfig::new(base_url.to_owned(), model.to_owned())
        }))
    }

    /// Sends a request after the agent's conversation with `frame`'s system
    /// messages and tools (without one: the conversation alone, which is
    /// the agent's whole request when its history holds its system
    /// messages).
    pub fn with_frame(mut self, frame: AgentFrame) -> OpenAiLlm {
        self.frame = Some(frame);
        self
    }

    fn frame(&self) -> Frame {
        self.frame.as_ref().map(AgentFrame::get).unwrap_or_default()
    }

    /// The request as the model gets it.
    fn request(&self, request: &ChatRequest) -> ModelRequest {
        let mut messages = Vec::new();
        let mut tools = Vec::new();
        if let Some(conversation) = &request.conversation {
            let frame = self.frame();
            messages.extend(frame.system);
            messages.extend(
                conversation
                    .messages
                    .iter()
                    .filter(|m| !(frame.summary_in_system && is_summary(m)))
                    .cloned(),
            );
            tools = frame.tools;
        }
        messages.extend(
            request
                .messages
                .iter()
                .map(|m| Message::text(m.role, m.content.clone())),
        );
        ModelRequest {
            messages,
            tools,
            max_output_tokens: request.max_tokens,
        }
    }
}

/// One of condense's summary pair.
fn is_summary(message: &Message) -> bool {
    message.joined_text().starts_with(SUMMARY_MARKER)
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
        let answer = model
            .complete(&self.request(request))
            .map_err(|e| e.to_string())?;
        Ok(answer.message.joined_text())
    }

    fn frame_tokens(&self) -> u32 {
        let tokens = |frame: &Frame| {
            estimate_messages(&frame.system).iter().sum::<u32>()
                + frame.tools.iter().map(ToolSpec::tokens).sum::<u32>()
        };
        self.frame.as_ref().map_or(0, |frame| frame.read(tokens))
    }
}
