//! The wit-bindgen glue: converts the WIT request into `condense_model` types and
//! calls the pure summarizer.

wit_bindgen::generate!({ world: "summarizer-world", path: "../../wit" });

use condense::middleware::types as wit;
use condense_model as model;

struct Component;

impl exports::condense::middleware::summarizer::Guest for Component {
    fn summarize(request: wit::SummaryRequest) -> String {
        crate::summarize(&model::SummaryRequest {
            previous_summary: request.previous_summary,
            messages: request.messages.into_iter().map(message_from_wit).collect(),
            max_tokens: request.max_tokens,
            language: request.language,
        })
    }
}

export!(Component);

fn message_from_wit(m: wit::Message) -> model::Message {
    let role = match m.role {
        wit::Role::System => model::Role::System,
        wit::Role::User => model::Role::User,
        wit::Role::Assistant => model::Role::Assistant,
        wit::Role::Tool => model::Role::Tool,
    };
    let parts = m
        .parts
        .into_iter()
        .map(|p| match p {
            wit::Part::Text(t) => model::Part::Text(t),
            wit::Part::Thinking(t) => model::Part::Thinking(model::Thinking {
                text: t.text,
                signature: t.signature,
            }),
            wit::Part::ToolCall(c) => model::Part::ToolCall(model::ToolCall {
                id: c.id,
                name: c.name,
                arguments: c.arguments,
            }),
            wit::Part::ToolResult(r) => model::Part::ToolResult(model::ToolResult {
                call_id: r.call_id,
                content: r.content,
                is_error: r.is_error,
            }),
            wit::Part::Opaque(j) => model::Part::Opaque(j),
        })
        .collect();
    model::Message { role, parts }
}
