//! Anthropic Messages.
//!
//! `POST {base_url}/v1/messages` with headers `x-api-key` and
//! `anthropic-version: 2023-06-01`, and a body of `model`, `max_tokens`,
//! `messages`, `tools` (`name`, `description`, `input_schema`; left out when
//! there are none) and `system`. The formats crate renders the messages:
//! the system messages go to the top-level `system` (Anthropic has no
//! system role), tool calls become `tool_use` blocks and tool results
//! `tool_result` blocks in `user` messages. The answer's `content` blocks
//! (`text`, `tool_use`, `thinking` with its signature, anything else kept
//! as an opaque block) are read the same way.

use super::http::Http;
use super::{
    Backoff, Invalid, Model, ModelError, ModelRequest, ModelResponse, REDACTED, count, endpoint,
    read_answer, render_request, required_count,
};
use crate::journal::Usage;
use crate::tools::ToolSpec;
use condense_formats::Format;
use serde_json::{Value, json};
use std::fmt;
use std::time::Duration;

/// The Messages API version this client speaks.
const API_VERSION: &str = "2023-06-01";

/// Where and how to reach the Anthropic API.
#[derive(Clone, PartialEq, Eq)]
pub struct AnthropicConfig {
    /// The API root, without the version: [`AnthropicConfig::DEFAULT_BASE_URL`],
    /// or a gateway's.
    pub base_url: String,
    /// The model id, sent as `model`.
    pub model: String,
    /// Sent as `x-api-key`.
    pub api_key: String,
    /// How long one attempt may take, the whole answer included.
    pub timeout: Duration,
    /// How often a 429 or 5xx (529 overloaded included) answer is retried.
    pub max_retries: u32,
}

impl AnthropicConfig {
    pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

    /// `model` at the Anthropic API with `api_key`, a 10-minute timeout (a
    /// long answer without streaming) and 2 retries.
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Self {
        AnthropicConfig {
            base_url: Self::DEFAULT_BASE_URL.into(),
            model: model.into(),
            api_key: api_key.into(),
            timeout: Duration::from_secs(600),
            max_retries: 2,
        }
    }
}

/// Like a derived `Debug`, without the key: configs end up in logs.
impl fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &REDACTED)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .finish()
    }
}

/// A model behind the Anthropic Messages API.
pub struct AnthropicModel {
    config: AnthropicConfig,
    url: String,
    http: Http,
}

impl AnthropicModel {
    pub fn new(config: AnthropicConfig) -> Self {
        AnthropicModel {
            url: endpoint(&config.base_url, Format::Anthropic.endpoint_path()),
            http: Http::new(config.timeout, config.max_retries),
            config,
        }
    }

    /// The model with another wait between retries than
    /// [`Backoff::default`].
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.http.set_backoff(backoff);
        self
    }
}

impl Model for AnthropicModel {
    fn name(&self) -> &str {
        &self.config.model
    }

    fn complete(&mut self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let body = request_body(&self.config.model, request);
        let headers = [
            ("x-api-key", self.config.api_key.as_str()),
            ("anthropic-version", API_VERSION),
        ];
        let response = self.http.post_json(&self.url, &headers, &body)?;
        parse_response(&response).map_err(|invalid| invalid.at(&self.url))
    }
}

fn request_body(model: &str, request: &ModelRequest) -> Value {
    let mut fields = json!({
        "model": model,
        "max_tokens": request.max_output_tokens,
        "messages": [],
    });
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request.tools.iter().map(tool).collect();
        fields["tools"] = tools.into();
    }
    // The formats crate adds `system` from the system messages.
    render_request(Format::Anthropic, fields, &request.messages)
}

/// A tool definition in the Messages API's format.
fn tool(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.parameters,
    })
}

fn parse_response(response: &Value) -> Result<ModelResponse, Invalid> {
    let content = response
        .get("content")
        .filter(|c| c.is_array())
        .ok_or_else(|| Invalid::new("content", "missing or not a list"))?;
    let message = json!({ "role": "assistant", "content": content });
    Ok(ModelResponse {
        // `content` is top-level in a response: errors are located from there.
        message: read_answer(Format::Anthropic, message, "")?,
        usage: usage(response)?,
    })
}

/// `usage`, when reported: the input is `input_tokens` (the uncached rest)
/// plus `cache_read_input_tokens` and `cache_creation_input_tokens`; the
/// cached tokens are the ones read from the cache.
fn usage(response: &Value) -> Result<Option<Usage>, Invalid> {
    if response.get("usage").is_none_or(Value::is_null) {
        return Ok(None);
    }
    let cache = |field| Ok::<_, Invalid>(count(response, &["usage", field])?.unwrap_or(0));
    let cache_read = cache("cache_read_input_tokens")?;
    let cache_creation = cache("cache_creation_input_tokens")?;
    Ok(Some(Usage {
        input_tokens: required_count(response, &["usage", "input_tokens"])?
            + cache_read
            + cache_creation,
        cached_tokens: cache_read,
        output_tokens: required_count(response, &["usage", "output_tokens"])?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolClass;
    use condense_model::{Message, Part, Role, Thinking, ToolCall, ToolResult};
    use condense_scripted_server::{Reply, TestServer};

    fn request() -> ModelRequest {
        ModelRequest {
            messages: vec![
                Message::text(Role::System, "You are a coding agent."),
                Message::text(Role::System, "Work in /src."),
                Message::text(Role::User, "Fix the test."),
                Message {
                    role: Role::Assistant,
                    parts: vec![
                        Part::Thinking(Thinking {
                            text: "Run it first.".into(),
                            signature: Some("sig-1".into()),
                        }),
                        Part::ToolCall(ToolCall {
                            id: "toolu_1".into(),
                            name: "run_command".into(),
                            arguments: r#"{"command":"cargo test"}"#.into(),
                        }),
                    ],
                },
                Message {
                    role: Role::Tool,
                    parts: vec![Part::ToolResult(ToolResult {
                        call_id: "toolu_1".into(),
                        content: "1 failed".into(),
                        is_error: true,
                    })],
                },
            ],
            tools: vec![ToolSpec {
                name: "run_command".into(),
                description: "Runs a shell command.".into(),
                parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
                class: ToolClass::ExecCapable,
            }],
            max_output_tokens: 4096,
        }
    }

    fn model(server: &TestServer) -> AnthropicModel {
        AnthropicModel::new(AnthropicConfig {
            base_url: server.url(""),
            timeout: Duration::from_secs(5),
            ..AnthropicConfig::new("claude-sonnet-4-5", "sk-ant-test")
        })
    }

    #[test]
    fn a_tool_use_answer_and_the_request_on_the_wire() {
        let server = TestServer::start([Reply::json(
            200,
            json!({
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {"type": "thinking", "thinking": "The assertion is off by one.", "signature": "sig-2"},
                    {"type": "text", "text": "Reading the test."},
                    {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "t.rs"}},
                ],
                "stop_reason": "tool_use",
                "usage": {
                    "input_tokens": 50,
                    "cache_creation_input_tokens": 200,
                    "cache_read_input_tokens": 3000,
                    "output_tokens": 80,
                },
            })
            .to_string(),
        )]);
        let mut model = model(&server);
        assert_eq!(model.name(), "claude-sonnet-4-5");
        let response = model.complete(&request()).unwrap();
        assert_eq!(
            response.message,
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Thinking(Thinking {
                        text: "The assertion is off by one.".into(),
                        signature: Some("sig-2".into()),
                    }),
                    Part::Text("Reading the test.".into()),
                    Part::ToolCall(ToolCall {
                        id: "toolu_2".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"t.rs"}"#.into(),
                    }),
                ],
            }
        );
        assert_eq!(
            response.usage,
            Some(Usage {
                input_tokens: 3250,
                cached_tokens: 3000,
                output_tokens: 80,
            })
        );

        let requests = server.requests();
        let [sent] = requests.as_slice() else {
            panic!("{requests:?}")
        };
        assert_eq!(sent.path, "/v1/messages");
        assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
        assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(sent.header("authorization"), None);
        assert_eq!(
            sent.body,
            json!({
                "model": "claude-sonnet-4-5",
                "max_tokens": 4096,
                "system": [
                    {"type": "text", "text": "You are a coding agent."},
                    {"type": "text", "text": "Work in /src."},
                ],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "Fix the test."}]},
                    {"role": "assistant", "content": [
                        {"type": "thinking", "thinking": "Run it first.", "signature": "sig-1"},
                        {"type": "tool_use", "id": "toolu_1", "name": "run_command",
                         "input": {"command": "cargo test"}},
                    ]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                        "content": "1 failed", "is_error": true}]},
                ],
                "tools": [{
                    "name": "run_command",
                    "description": "Runs a shell command.",
                    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
                }],
            })
        );
    }

    #[test]
    fn without_system_messages_or_tools_neither_key_is_sent() {
        let server = TestServer::start([Reply::json(
            200,
            json!({
                "content": [{"type": "text", "text": "Fixed."}],
                "usage": {"input_tokens": 10, "output_tokens": 2},
            })
            .to_string(),
        )]);
        let request = ModelRequest {
            messages: vec![Message::text(Role::User, "Fix it.")],
            tools: Vec::new(),
            max_output_tokens: 100,
        };
        let response = model(&server).complete(&request).unwrap();
        assert_eq!(response.message, Message::text(Role::Assistant, "Fixed."));
        assert_eq!(
            response.usage,
            Some(Usage {
                input_tokens: 10,
                cached_tokens: 0,
                output_tokens: 2,
            })
        );
        let body = &server.requests()[0].body;
        assert!(body.get("system").is_none(), "{body}");
        assert!(body.get("tools").is_none(), "{body}");
    }

    #[test]
    fn an_answer_not_as_documented_names_the_field() {
        let invalid = |response: Value| parse_response(&response).unwrap_err();
        assert_eq!(
            invalid(json!({"type": "message"})),
            Invalid::new("content", "missing or not a list")
        );
        assert_eq!(
            invalid(
                json!({"content": [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "t", "name": "f"}]})
            ),
            Invalid::new("content[1]", "tool_use block has no `input`")
        );
        assert_eq!(
            invalid(json!({"content": [], "usage": {"input_tokens": 1}})),
            Invalid::new("usage.output_tokens", "missing")
        );
        assert_eq!(
            invalid(json!({"content": [], "usage": {
                "input_tokens": 1, "output_tokens": 1, "cache_read_input_tokens": 1.5}})),
            Invalid::new(
                "usage.cache_read_input_tokens",
                "expected a token count, found 1.5"
            )
        );
    }

    #[test]
    fn debug_never_shows_the_key() {
        let config = AnthropicConfig::new("claude-sonnet-4-5", "sk-ant-secret");
        let debug = format!("{config:?}");
        assert!(!debug.contains("sk-ant-secret"), "{debug}");
        assert!(debug.contains(r#"api_key: "<redacted>""#), "{debug}");
        assert!(debug.contains("https://api.anthropic.com"), "{debug}");
    }

    #[test]
    fn an_api_error_carries_the_providers_message_and_is_not_retried() {
        let server = TestServer::start([Reply::json(
            400,
            json!({"type": "error", "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 210000 tokens > 200000 maximum",
            }})
            .to_string(),
        )]);
        let error = model(&server).complete(&request()).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "{}: HTTP 400: prompt is too long: 210000 tokens > 200000 maximum",
                server.url("/v1/messages")
            )
        );
        assert_eq!(server.requests().len(), 1);
    }
}
