//! OpenAI Chat Completions, the API that OpenAI and most local and hosted
//! servers speak (Ollama, vLLM, the llama.cpp server, OpenRouter, ...).
//!
//! `POST {base_url}/chat/completions` with `model`, `messages` (system
//! messages in the list, tool results as `role: tool` messages with their
//! `tool_call_id`), `tools` in the function format (left out when there are
//! none) and `max_tokens`; the key, if any, as `Authorization: Bearer`. The
//! answer is `choices[0].message`: `content`, `tool_calls`, and reasoning in
//! `reasoning_content` or `reasoning`, read as the formats crate reads a
//! request's assistant message.

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

/// Where and how to reach an OpenAI-compatible server.
#[derive(Clone, PartialEq)]
pub struct OpenAiConfig {
    /// The API root, up to and including the version:
    /// `https://api.openai.com/v1`, `http://127.0.0.1:8080/v1` (llama.cpp),
    /// `http://127.0.0.1:11434/v1` (Ollama).
    pub base_url: String,
    /// The model id, sent as `model`.
    pub model: String,
    /// Sent as `Authorization: Bearer KEY`; local servers usually need none.
    pub api_key: Option<String>,
    /// How long one attempt may take, the whole answer included.
    pub timeout: Duration,
    /// How often a 429 or 5xx answer is retried.
    pub max_retries: u32,
    /// Sent as `temperature` when set; the server's default otherwise.
    pub temperature: Option<f32>,
}

impl OpenAiConfig {
    /// `model` at `base_url`, without a key, with a 10-minute timeout (a
    /// long answer from a slow local model) and 2 retries.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(600),
            max_retries: 2,
            temperature: None,
        }
    }
}

/// Like a derived `Debug`, without the key: configs end up in logs.
impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| REDACTED))
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("temperature", &self.temperature)
            .finish()
    }
}

/// A model behind an OpenAI-compatible Chat Completions endpoint.
pub struct OpenAiModel {
    config: OpenAiConfig,
    url: String,
    http: Http,
}

impl OpenAiModel {
    pub fn new(config: OpenAiConfig) -> Self {
        OpenAiModel {
            url: endpoint(&config.base_url, "/chat/completions"),
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

impl Model for OpenAiModel {
    fn name(&self) -> &str {
        &self.config.model
    }

    fn complete(&mut self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let mut body = request_body(&self.config.model, request);
        if let Some(temperature) = self.config.temperature {
            body["temperature"] = temperature.into();
        }
        let authorization = self
            .config
            .api_key
            .as_ref()
            .map(|key| format!("Bearer {key}"));
        let headers: Vec<(&str, &str)> = authorization
            .iter()
            .map(|value| ("authorization", value.as_str()))
            .collect();
        let response = self.http.post_json(&self.url, &headers, &body)?;
        parse_response(&response).map_err(|invalid| invalid.at(&self.url))
    }
}

fn request_body(model: &str, request: &ModelRequest) -> Value {
    let mut fields = json!({ "model": model, "messages": [] });
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request.tools.iter().map(tool).collect();
        fields["tools"] = tools.into();
    }
    fields["max_tokens"] = request.max_output_tokens.into();
    render_request(Format::OpenAi, fields, &request.messages)
}

/// A tool definition in the Chat Completions function format.
fn tool(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    })
}

fn parse_response(response: &Value) -> Result<ModelResponse, Invalid> {
    let Some(choices) = response.get("choices").and_then(Value::as_array) else {
        // Some servers answer an error with status 200.
        let problem = match response.get("error") {
            Some(_) => format!(
                "missing; the response is an error: {}",
                super::http::error_message(&response.to_string())
            ),
            None => "missing or not a list".to_owned(),
        };
        return Err(Invalid::new("choices", problem));
    };
    let choice = choices
        .first()
        .ok_or_else(|| Invalid::new("choices", "empty"))?;
    let at = "choices[0].message";
    let message = choice
        .get("message")
        .filter(|m| !m.is_null())
        .ok_or_else(|| Invalid::new(at, "missing"))?;
    Ok(ModelResponse {
        message: read_answer(Format::OpenAi, message.clone(), at)?,
        usage: usage(response)?,
    })
}

/// `usage`, when the server reports it: `prompt_tokens` (cached ones
/// included), `prompt_tokens_details.cached_tokens`, `completion_tokens`.
fn usage(response: &Value) -> Result<Option<Usage>, Invalid> {
    if response.get("usage").is_none_or(Value::is_null) {
        return Ok(None);
    }
    Ok(Some(Usage {
        input_tokens: required_count(response, &["usage", "prompt_tokens"])?,
        cached_tokens: count(
            response,
            &["usage", "prompt_tokens_details", "cached_tokens"],
        )?
        .unwrap_or(0),
        output_tokens: required_count(response, &["usage", "completion_tokens"])?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolClass;
    use condense_model::{Message, Part, Role, Thinking, ToolCall, ToolResult};
    use condense_scripted_server::{Reply, TestServer};

    fn read_file_tool() -> ToolSpec {
        ToolSpec {
            name: "read_file".into(),
            description: "Reads a file.".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            class: ToolClass::ReadOnly,
        }
    }

    fn call(id: &str, name: &str, arguments: &str) -> Part {
        Part::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        })
    }

    /// A conversation one tool call in: system, task, call, result.
    fn request() -> ModelRequest {
        ModelRequest {
            messages: vec![
                Message::text(Role::System, "You are a coding agent."),
                Message::text(Role::User, "What is in a.txt?"),
                Message {
                    role: Role::Assistant,
                    parts: vec![call("c1", "read_file", r#"{"path":"a.txt"}"#)],
                },
                Message {
                    role: Role::Tool,
                    parts: vec![Part::ToolResult(ToolResult {
                        call_id: "c1".into(),
                        content: "hello".into(),
                        is_error: false,
                    })],
                },
            ],
            tools: vec![read_file_tool()],
            max_output_tokens: 1024,
        }
    }

    fn model(server: &TestServer, api_key: Option<&str>) -> OpenAiModel {
        OpenAiModel::new(OpenAiConfig {
            api_key: api_key.map(str::to_owned),
            timeout: Duration::from_secs(5),
            ..OpenAiConfig::new(server.url("/v1"), "qwen3-8b")
        })
    }

    #[test]
    fn a_tool_call_answer_and_the_request_on_the_wire() {
        let server = TestServer::start([Reply::json(
            200,
            json!({
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "choices": [{
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": null,
                        "refusal": null,
                        "tool_calls": [{
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": "{\"path\":\"b.txt\"}"},
                        }],
                    },
                }],
                "usage": {
                    "prompt_tokens": 1200,
                    "completion_tokens": 30,
                    "total_tokens": 1230,
                    "prompt_tokens_details": {"cached_tokens": 1024},
                },
            })
            .to_string(),
        )]);
        let mut model = model(&server, Some("sk-test"));
        assert_eq!(model.name(), "qwen3-8b");
        let response = model.complete(&request()).unwrap();
        assert_eq!(
            response.message,
            Message {
                role: Role::Assistant,
                parts: vec![call("c2", "read_file", r#"{"path":"b.txt"}"#)],
            }
        );
        assert_eq!(
            response.usage,
            Some(Usage {
                input_tokens: 1200,
                cached_tokens: 1024,
                output_tokens: 30,
            })
        );

        let requests = server.requests();
        let [sent] = requests.as_slice() else {
            panic!("{requests:?}")
        };
        assert_eq!(sent.method, "POST");
        assert_eq!(sent.path, "/v1/chat/completions");
        assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
        assert_eq!(sent.header("content-type"), Some("application/json"));
        assert_eq!(
            sent.body,
            json!({
                "model": "qwen3-8b",
                "messages": [
                    {"role": "system", "content": "You are a coding agent."},
                    {"role": "user", "content": "What is in a.txt?"},
                    {"role": "assistant", "content": null, "tool_calls": [{
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"},
                    }]},
                    {"role": "tool", "tool_call_id": "c1", "content": "hello"},
                ],
                "tools": [{
                    "type": "function",
                    "function": {
                        "name": "read_file",
                        "description": "Reads a file.",
                        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                    },
                }],
                "max_tokens": 1024,
            })
        );
    }

    #[test]
    fn a_final_text_answer_with_reasoning_and_no_key_or_tools() {
        let server = TestServer::start([Reply::json(
            200,
            json!({"choices": [{"message": {
                "role": "assistant",
                "reasoning_content": "The file says hello.",
                "content": "a.txt contains `hello`.",
            }}]})
            .to_string(),
        )]);
        let mut request = request();
        request.tools.clear();
        let response = model(&server, None).complete(&request).unwrap();
        assert_eq!(
            response.message,
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Thinking(Thinking {
                        text: "The file says hello.".into(),
                        signature: None,
                    }),
                    Part::Text("a.txt contains `hello`.".into()),
                ],
            }
        );
        // A server that reports no usage.
        assert_eq!(response.usage, None);

        let sent = &server.requests()[0];
        assert_eq!(sent.header("authorization"), None);
        assert!(sent.body.get("tools").is_none(), "{}", sent.body);
        assert_eq!(sent.body["max_tokens"], 1024);
    }

    #[test]
    fn an_answer_not_as_documented_names_the_field() {
        let invalid = |response: Value| parse_response(&response).unwrap_err();
        assert_eq!(
            invalid(json!({"object": "chat.completion"})),
            Invalid::new("choices", "missing or not a list")
        );
        assert_eq!(
            invalid(json!({"error": {"message": "upstream overloaded"}})),
            Invalid::new(
                "choices",
                "missing; the response is an error: upstream overloaded"
            )
        );
        assert_eq!(
            invalid(json!({"choices": []})),
            Invalid::new("choices", "empty")
        );
        assert_eq!(
            invalid(json!({"choices": [{"finish_reason": "stop"}]})),
            Invalid::new("choices[0].message", "missing")
        );
        assert_eq!(
            invalid(
                json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
                {"id": "c", "type": "function", "function": {"arguments": "{}"}}]}}]})
            ),
            Invalid::new(
                "choices[0].message.tool_calls[0].function",
                "tool call function has no `name`"
            )
        );
        let answer = json!({"role": "assistant", "content": "hi"});
        assert_eq!(
            invalid(json!({"choices": [{"message": answer}], "usage": {"completion_tokens": 1}})),
            Invalid::new("usage.prompt_tokens", "missing")
        );
        assert_eq!(
            invalid(json!({"choices": [{"message": answer}], "usage": {
                "prompt_tokens": 1, "completion_tokens": "1"}})),
            Invalid::new(
                "usage.completion_tokens",
                "expected a token count, found \"1\""
            )
        );
    }

    #[test]
    fn debug_never_shows_the_key() {
        let config = OpenAiConfig {
            api_key: Some("sk-secret".into()),
            ..OpenAiConfig::new("http://h/v1", "m")
        };
        let debug = format!("{config:?}");
        assert!(!debug.contains("sk-secret"), "{debug}");
        assert!(debug.contains(r#"api_key: Some("<redacted>")"#), "{debug}");
        let debug = format!("{:?}", OpenAiConfig::new("http://h/v1", "m"));
        assert!(debug.contains("api_key: None"), "{debug}");
    }

    #[test]
    fn an_invalid_answer_is_an_error_naming_the_url() {
        let server = TestServer::start([Reply::json(200, r#"{"choices": []}"#)]);
        let url = server.url("/v1/chat/completions");
        let error = model(&server, None).complete(&request()).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("{url}: unexpected response: choices: empty")
        );
    }

    #[test]
    fn an_api_error_carries_the_providers_message() {
        let server = TestServer::start([Reply::json(
            401,
            r#"{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}"#,
        )]);
        let error = model(&server, Some("sk-bad"))
            .complete(&request())
            .unwrap_err();
        assert!(
            matches!(&error, ModelError::Status { status: 401, message, .. }
                if message == "Incorrect API key provided"),
            "{error:?}"
        );
        assert_eq!(server.requests().len(), 1);
    }
}
