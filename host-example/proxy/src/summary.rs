//! The LLM summarizer's model in the proxy, when it asks the client's own
//! upstream (`[llm] in_proxy = "client"`, the default without a
//! `base_url`): [`ClientModel`], one per request, behind the summarizers'
//! `llm` import for that request's compaction and for its background job
//! ([`condense_host::Middleware::asking`]).
//!
//! The summary request is the client's own request as the upstream last
//! saw it, cut at the fold: the body the client sent, its messages
//! replaced by what the compaction replaces (the compressor's
//! `folding.replaces`, rendered by the same code that renders every request
//! the proxy sends, so a kept message is the client's JSON byte for byte),
//! then the summarizer's instruction. Its model, system prompt, tools and
//! every other field are the client's; only the answer's shape changes (not
//! streamed, the summary's token limit). So it starts with the prefix the
//! provider cached for the session's last request, and only the
//! instruction and the answer are paid in full.
//!
//! It goes to the request's upstream with the client's headers, its key
//! among them: held in memory by this model, which lives as long as the
//! request or the background job that prepares its summary, and never put
//! in a store, a log, an event or an error.

use crate::Models;
use crate::recall::answer_text;
use crate::route::tenant_of;
use crate::upstream::Upstream;
use bytes::Bytes;
use condense_config::LlmSettings;
use condense_host::body::tools_tokens;
use condense_host::formats::{self, Format, Parsed};
use condense_host::llm::{ChatRequest, LanguageModel};
use condense_model::{Item, Message};
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The [`ModelClient`](condense_config::ModelClient) of an agent whose
/// summaries ask each request's upstream: the runtime's own model is never
/// asked, as every call is given the request's [`ClientModel`].
pub fn per_request(_: &LlmSettings) -> anyhow::Result<Arc<dyn LanguageModel>> {
    Ok(Arc::new(PerRequest))
}

/// The runtime's model when each request brings its own.
struct PerRequest;

impl LanguageModel for PerRequest {
    fn name(&self) -> &str {
        "the client's model"
    }

    fn chat(&self, _: &ChatRequest, _: Duration) -> Result<String, String> {
        Err("the summarizer asks each request's own upstream, and this call has none".to_owned())
    }
}

/// The client's upstream, asked as the client asks it.
pub struct ClientModel {
    upstream: Upstream,
    body: Bytes,
    format: Format,
    models: Arc<Models>,
    /// The body, read on the first summary request (most requests never
    /// make one); `None` when it cannot be read.
    parsed: OnceLock<Option<Parsed>>,
    /// [`LanguageModel::shaped_by`], digested once.
    shaped_by: OnceLock<u128>,
}

impl fmt::Debug for ClientModel {
    /// Never the headers: they carry the client's key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientModel")
            .field("format", &self.format)
            .field("body_bytes", &self.body.len())
            .finish_non_exhaustive()
    }
}

impl ClientModel {
    /// The model of the request `body` of `format`, sent through `upstream`
    /// with the client's headers but `accept` and `accept-encoding` (the
    /// proxy reads the answer itself) and `idempotency-key` (a summary
    /// request is not the client's); `models` says whether its requests
    /// offer recall.
    pub fn new(
        upstream: Upstream,
        body: Bytes,
        format: Format,
        models: Arc<Models>,
    ) -> ClientModel {
        ClientModel {
            upstream: upstream
                .without("accept")
                .without("accept-encoding")
                .without("idempotency-key"),
            body,
            format,
            models,
            parsed: OnceLock::new(),
            shaped_by: OnceLock::new(),
        }
    }

    fn parsed(&self) -> Result<&Parsed, String> {
        self.parsed
            .get_or_init(|| {
                let value = serde_json::from_slice(&self.body).ok()?;
                Parsed::parse(value, self.format).ok()
            })
            .as_ref()
            .ok_or_else(|| format!("the client's request is not a {} request", self.format))
    }

    /// The summary request, JSON.
    fn request(&self, request: &ChatRequest) -> Result<Value, String> {
        let parsed = self.parsed()?;
        let mut items: Vec<Item> = match &request.conversation {
            Some(conversation) => conversation.items.to_vec(),
            None => Vec::new(),
        };
        items.extend(
            request
                .messages
                .iter()
                .map(|m| Item::Written(Message::text(m.role, m.content.clone()))),
        );
        let mut body = parsed.render(&items);
        if !body.is_object() {
            return Err("a bare message list names no model to ask".to_owned());
        }
        match &request.conversation {
            // The tools the client's model was sent: the recall tool too
            // once the session has compacted (a previous summary or a
            // rewrite in what is replaced), as compress_body adds it.
            Some(conversation) => {
                let compacted = conversation
                    .items
                    .iter()
                    .any(|item| !matches!(item, Item::Kept(_)));
                if compacted && self.offers_recall(parsed) {
                    formats::add_recall_tool(self.format, &mut body);
                }
            }
            // The summarizer's own request: no tools to call.
            None => {
                if let Value::Object(fields) = &mut body {
                    for key in ["tools", "tool_choice", "parallel_tool_calls"] {
                        fields.shift_remove(key);
                    }
                }
            }
        }
        if let Value::Object(fields) = &mut body {
            answer_whole(self.format, fields, request.max_tokens);
        }
        Ok(body)
    }

    fn offers_recall(&self, parsed: &Parsed) -> bool {
        let model = parsed.body().get("model").and_then(Value::as_str);
        let recall = self.models.for_model(model).config.recall.is_some();
        recall && formats::recall_offerable(self.format, parsed.body())
    }
}

/// `fields` asking for one answer, not streamed, of at most `max_tokens`
/// tokens of text, in `format`'s terms.
fn answer_whole(format: Format, fields: &mut serde_json::Map<String, Value>, max_tokens: u32) {
    fields.shift_remove("stream");
    fields.shift_remove("stream_options");
    // Extended thinking (Anthropic's) spends its budget within the cap.
    let thinking = fields
        .get("thinking")
        .filter(|t| format == Format::Anthropic && t["type"] == "enabled")
        .and_then(|t| t["budget_tokens"].as_u64())
        .unwrap_or(0);
    let key = format.output_limit_key(fields);
    let total = thinking.saturating_add(u64::from(max_tokens));
    fields.insert(key.into(), total.into());
}

impl LanguageModel for ClientModel {
    fn name(&self) -> &str {
        self.parsed()
            .ok()
            .and_then(|p| p.body().get("model")?.as_str())
            .unwrap_or("the client's model")
    }

    fn chat(&self, request: &ChatRequest, timeout: Duration) -> Result<String, String> {
        let body = self.request(request)?;
        let body = serde_json::to_vec(&body).expect("JSON serialises");
        let answer = self.upstream.call(body, timeout)?;
        let answer: Value = serde_json::from_slice(&answer)
            .map_err(|e| format!("the upstream's answer is not JSON: {e}"))?;
        Ok(answer_text(self.format, &answer))
    }

    /// The tool definitions: the system prompt is part of the conversation
    /// (the history the proxy reads holds it).
    fn frame_tokens(&self) -> u32 {
        self.parsed().map_or(0, |p| tools_tokens(p.body()))
    }

    /// Everything of the client's request but its conversation — model,
    /// system prompt, tools, instructions, every other field — and its
    /// credentials: a summary request is the client's request, so each of
    /// these shapes the summary, and the key says whose it is.
    fn shaped_by(&self) -> Option<u128> {
        use sha2::{Digest, Sha256};
        let digest = self.shaped_by.get_or_init(|| {
            let mut digest = Sha256::new();
            digest.update(self.format.name().as_bytes());
            digest.update(b"\0");
            digest.update(tenant_of(self.upstream.headers()).unwrap_or_default());
            digest.update(b"\0");
            match self.parsed().ok().map(Parsed::body) {
                Some(Value::Object(fields)) => {
                    for (key, value) in fields {
                        if key != self.format.list_key() {
                            digest.update(key.as_bytes());
                            digest.update(b"\0");
                            digest.update(value.to_string());
                            digest.update(b"\0");
                        }
                    }
                }
                // Never asked (a body it cannot read fails every call):
                // the whole body, to be safe.
                _ => digest.update(&self.body),
            }
            let digest = digest.finalize();
            u128::from_be_bytes(digest[..16].try_into().expect("16 bytes"))
        });
        Some(*digest)
    }
}
