//! The models the runtime calls: one [`Model`] trait, a replay of a recorded
//! session for tests and demos, and clients for the two wire formats that
//! cover nearly every provider (OpenAI Chat Completions, which OpenAI,
//! Ollama, vLLM and the llama.cpp server speak, and Anthropic Messages).
//!
//! The runtime's loop only knows [`Model::complete`]: a [`ModelRequest`] in
//! the message model (what the journal stores and condense compresses), a
//! [`ModelResponse`] back. Everything provider-specific stays in here:
//!
//! - **JSON is the formats crate's.** Request bodies are rendered, and the
//!   answer in a response is read, by [`condense_formats`], the same code
//!   that reads and writes the requests condense compresses in the proxy. So
//!   there is one Message<->JSON mapping per format, not a second one here
//!   that could disagree with it on tool calls, reasoning or tool results.
//! - **One HTTP path.** Both clients post through the same helper: one
//!   retry loop (429 and 5xx, an exponential [`Backoff`], the provider's
//!   `Retry-After`), one error mapping, one timeout.
//! - **Errors name what failed**: the URL, the status and the provider's own
//!   error message, or the JSON field of a response that is not what the API
//!   documents (`choices[0].message.tool_calls[0]: tool call has no `id``).
//!
//! Keys are the caller's: a client takes its key as a value, and
//! [`key_from_env`] reads one from a named environment variable for the CLI.

mod anthropic;
mod http;
mod llm;
mod openai;
mod replay;

pub use anthropic::{AnthropicConfig, AnthropicModel};
pub use http::Backoff;
pub use llm::{AgentFrame, Frame, OpenAiLlm};
pub use openai::{OpenAiConfig, OpenAiModel};
pub use replay::ReplayModel;

use crate::journal::Usage;
use crate::tools::ToolSpec;
use condense_formats::{Format, Parsed};
use condense_model::{Item, Message, Role};
use serde_json::Value;
use std::env::{self, VarError};
use std::time::Duration;

/// One model call: the conversation as the model is to see it.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelRequest {
    /// The system messages first, then the conversation, oldest first.
    pub messages: Vec<Message>,
    /// The tools the model may call (none: the request has no `tools`).
    pub tools: Vec<ToolSpec>,
    /// The most tokens the answer may have (`max_tokens`).
    pub max_output_tokens: u32,
}

/// The model's answer to a [`ModelRequest`].
#[derive(Clone, Debug, PartialEq)]
pub struct ModelResponse {
    /// The answer, [`Role::Assistant`]: text, reasoning and tool calls.
    pub message: Message,
    /// The provider's token counts, when it reported them.
    pub usage: Option<Usage>,
}

/// A model the runtime can call. Object-safe: the runtime holds a
/// `Box<dyn Model>` chosen at start-up.
pub trait Model {
    /// What to call the model in logs and reports: the provider's model id,
    /// or `replay`.
    fn name(&self) -> &str;

    /// Answers `request`. Blocks until the answer is complete (no streaming).
    fn complete(&mut self, request: &ModelRequest) -> Result<ModelResponse, ModelError>;
}

/// Why a model call failed.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The provider answered with an error status (after any retries).
    /// `message` is the provider's error message, or the start of the body
    /// when it has none.
    #[error("{url}: HTTP {status}: {message}")]
    Status {
        url: String,
        status: u16,
        message: String,
    },
    /// No answer: the connection failed or broke (DNS, refused, reset, TLS).
    #[error("{url}: {source}")]
    Transport {
        url: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// No complete answer within the configured timeout.
    #[error("{url}: timed out after {after:?} without a complete answer")]
    Timeout { url: String, after: Duration },
    /// A success response that is not what the API documents: `field` is
    /// the JSON location of the problem (`choices`, `usage.prompt_tokens`,
    /// `content[2]`).
    #[error("{url}: unexpected response: {field}: {problem}")]
    InvalidResponse {
        url: String,
        field: String,
        problem: String,
    },
    /// A [`ReplayModel`] was asked for more answers than its recording has.
    #[error("the recording is exhausted after {answers} answers")]
    ReplayExhausted { answers: usize },
    /// [`key_from_env`] found no key.
    #[error("no API key: environment variable {var} is {problem}")]
    MissingKey { var: String, problem: &'static str },
}

/// The API key in environment variable `var` (the CLI's `--api-key-env
/// NAME`). An unset, empty or non-UTF-8 variable is an error naming it.
pub fn key_from_env(var: &str) -> Result<String, ModelError> {
    key_from(var, env::var(var))
}

/// [`key_from_env`] on the variable's value, read.
fn key_from(var: &str, value: Result<String, VarError>) -> Result<String, ModelError> {
    let problem = match value {
        Ok(key) if !key.trim().is_empty() => return Ok(key.trim().to_owned()),
        Ok(_) => "empty",
        Err(VarError::NotPresent) => "not set",
        Err(VarError::NotUnicode(_)) => "not valid UTF-8",
    };
    Err(ModelError::MissingKey {
        var: var.to_owned(),
        problem,
    })
}

/// A request body of `format`: `fields` (an object with an empty `messages`
/// list where the messages are to go) with `messages` rendered by the
/// formats crate, each from its parts. System messages go where the format
/// wants them: in the list for OpenAI, the top-level `system` for Anthropic.
fn render_request(format: Format, fields: Value, messages: &[Message]) -> Value {
    let parsed = Parsed::parse(fields, format)
        .expect("a body whose message list is empty is a request of either format");
    let items: Vec<Item> = messages.iter().cloned().map(Item::Written).collect();
    parsed.render(&items)
}

/// The assistant message of a response, read by the formats crate from
/// `message` (an OpenAI message object, or `{"role": "assistant", "content":
/// ...}` for Anthropic). The formats crate locates problems in the message
/// list of a request (`messages[0].tool_calls[1]: ...`): `at` is where the
/// message is in the response (`choices[0].message`; empty for Anthropic,
/// whose `content` is top-level).
fn read_answer(format: Format, message: Value, at: &str) -> Result<Message, Invalid> {
    let body = serde_json::json!({ "messages": [message] });
    let parsed = Parsed::parse(body, format).map_err(|e| {
        let text = e.to_string();
        let rest = text.strip_prefix("messages[0]").unwrap_or(&text);
        let located = match rest.strip_prefix('.') {
            Some(rest) if at.is_empty() => rest.to_owned(),
            _ => format!("{at}{rest}"),
        };
        match located.split_once(": ") {
            Some((field, problem)) => Invalid::new(field, problem),
            None => Invalid::new(at, located),
        }
    })?;
    let message = parsed.messages()[0].clone();
    if message.role != Role::Assistant {
        let field = if at.is_empty() { "role" } else { at };
        return Err(Invalid::new(field, "not an assistant message"));
    }
    Ok(message)
}

/// A response field that is not what the API documents: becomes
/// [`ModelError::InvalidResponse`] once the URL is known.
#[derive(Debug, PartialEq)]
struct Invalid {
    field: String,
    problem: String,
}

impl Invalid {
    fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Invalid {
            field: field.into(),
            problem: problem.into(),
        }
    }

    fn at(self, url: &str) -> ModelError {
        ModelError::InvalidResponse {
            url: url.to_owned(),
            field: self.field,
            problem: self.problem,
        }
    }
}

/// The token count at `path` in `response` (`["usage", "prompt_tokens"]`):
/// `None` when absent or null, an error naming the field when it is not a
/// non-negative integer.
fn count(response: &Value, path: &[&str]) -> Result<Option<u64>, Invalid> {
    let value = path
        .iter()
        .try_fold(response, |value, key| value.get(key))
        .filter(|v| !v.is_null());
    value
        .map(|v| {
            v.as_u64().ok_or_else(|| {
                Invalid::new(path.join("."), format!("expected a token count, found {v}"))
            })
        })
        .transpose()
}

/// [`count`] of a field the API always sends.
fn required_count(response: &Value, path: &[&str]) -> Result<u64, Invalid> {
    count(response, path)?.ok_or_else(|| Invalid::new(path.join("."), "missing"))
}

/// `{base_url}{path}`, with one slash between them whatever `base_url` ends with.
fn endpoint(base_url: &str, path: &str) -> String {
    format!("{}{path}", base_url.trim_end_matches('/'))
}

/// What a config's `Debug` shows for its API key: never the key.
const REDACTED: &str = "<redacted>";

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn key_from_env_names_the_variable() {
        assert_eq!(key_from("K", Ok(" sk-1 \n".into())).unwrap(), "sk-1");
        for (value, expected) in [
            (Ok(String::new()), "environment variable K is empty"),
            (Ok("  ".into()), "environment variable K is empty"),
            (
                Err(VarError::NotPresent),
                "environment variable K is not set",
            ),
            (
                Err(VarError::NotUnicode(OsString::new())),
                "environment variable K is not valid UTF-8",
            ),
        ] {
            let error = key_from("K", value).unwrap_err().to_string();
            assert!(error.ends_with(expected), "{error}");
        }
        let unset = "CONDENSE_RUNTIME_TEST_KEY_THAT_IS_NEVER_SET";
        let error = key_from_env(unset).unwrap_err().to_string();
        assert_eq!(
            error,
            format!("no API key: environment variable {unset} is not set")
        );
    }

    #[test]
    fn read_answer_locates_problems_in_the_response() {
        let openai = |message| read_answer(Format::OpenAi, message, "choices[0].message");
        let error = openai(serde_json::json!({
            "role": "assistant",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}],
        }))
        .unwrap_err();
        assert_eq!(
            error,
            Invalid::new("choices[0].message.tool_calls[0]", "tool call has no `id`")
        );
        let error = openai(serde_json::json!({"role": "user", "content": "hi"})).unwrap_err();
        assert_eq!(
            error,
            Invalid::new("choices[0].message", "not an assistant message")
        );

        let error = read_answer(
            Format::Anthropic,
            serde_json::json!({"role": "assistant", "content": [{"type": "tool_use", "id": "a"}]}),
            "",
        )
        .unwrap_err();
        assert_eq!(
            error,
            Invalid::new("content[0]", "tool_use block has no `name`")
        );
    }

    #[test]
    fn counts_name_their_field() {
        let response = serde_json::json!({"usage": {"a": 3, "b": null, "c": -1}});
        assert_eq!(count(&response, &["usage", "a"]), Ok(Some(3)));
        assert_eq!(count(&response, &["usage", "b"]), Ok(None));
        assert_eq!(count(&response, &["usage", "x", "y"]), Ok(None));
        assert_eq!(
            count(&response, &["usage", "c"]),
            Err(Invalid::new("usage.c", "expected a token count, found -1"))
        );
        assert_eq!(
            required_count(&response, &["usage", "b"]),
            Err(Invalid::new("usage.b", "missing"))
        );
    }

    #[test]
    fn endpoints_join_with_one_slash() {
        assert_eq!(endpoint("http://h/v1", "/x"), "http://h/v1/x");
        assert_eq!(endpoint("http://h/v1/", "/x"), "http://h/v1/x");
    }
}
