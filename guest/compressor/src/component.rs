//! The wit-bindgen glue: converts between the WIT types and `condense_model` and
//! calls the pure pipeline. Everything else in this crate is plain Rust.

wit_bindgen::generate!({ world: "compressor-world", path: "../../wit" });

use condense::middleware::summarizer;
use condense::middleware::types as wit;
use condense_model as model;

struct Component;

impl exports::condense::middleware::compressor::Guest for Component {
    fn compress(
        messages: Vec<wit::Message>,
        config: wit::Config,
        checkpoint: Option<wit::Checkpoint>,
    ) -> Result<wit::Outcome, wit::CompressError> {
        let messages: Vec<model::Message> = messages.into_iter().map(message_from_wit).collect();
        let config = model::Config {
            token_threshold: config.token_threshold,
            target_tokens: config.target_tokens,
            recent_turns: config.recent_turns,
            keep_recent_tokens: config.keep_recent_tokens,
            summary_max_tokens: config.summary_max_tokens,
        };
        let checkpoint = checkpoint.map(|c| model::Checkpoint {
            boundary: c.boundary,
            prefix_hash: c.prefix_hash,
            summary: c.summary,
        });
        let mut summarize = |request: model::SummaryRequest| {
            summarizer::summarize(&wit::SummaryRequest {
                previous_summary: request.previous_summary,
                messages: request.messages.into_iter().map(message_to_wit).collect(),
                max_tokens: request.max_tokens,
                language: request.language,
            })
        };
        match crate::compress(&messages, &config, checkpoint.as_ref(), &mut summarize) {
            Ok(outcome) => Ok(outcome_to_wit(outcome)),
            Err(model::CompressError::InvalidConfig(m)) => {
                Err(wit::CompressError::InvalidConfig(m))
            }
            Err(model::CompressError::InvalidInput(m)) => Err(wit::CompressError::InvalidInput(m)),
            Err(model::CompressError::SelfCheckFailed(m)) => {
                Err(wit::CompressError::SelfCheckFailed(m))
            }
        }
    }
}

export!(Component);

fn outcome_to_wit(o: model::Outcome) -> wit::Outcome {
    let r = o.report;
    wit::Outcome {
        messages: o.messages.into_iter().map(message_to_wit).collect(),
        checkpoint: o.checkpoint.map(|c| wit::Checkpoint {
            boundary: c.boundary,
            prefix_hash: c.prefix_hash,
            summary: c.summary,
        }),
        report: wit::Report {
            tokens_before: r.tokens_before,
            tokens_after: r.tokens_after,
            trigger: match r.trigger {
                model::Trigger::UnderThreshold => wit::Trigger::UnderThreshold,
                model::Trigger::ReusedCheckpoint => wit::Trigger::ReusedCheckpoint,
                model::Trigger::Compacted => wit::Trigger::Compacted,
                model::Trigger::WontShrink => wit::Trigger::WontShrink,
            },
            boundary: r.boundary,
            newly_folded: r.newly_folded,
            summary_tokens: r.summary_tokens,
            pinned_opening: r.pinned_opening,
        },
    }
}

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

fn message_to_wit(m: model::Message) -> wit::Message {
    let role = match m.role {
        model::Role::System => wit::Role::System,
        model::Role::User => wit::Role::User,
        model::Role::Assistant => wit::Role::Assistant,
        model::Role::Tool => wit::Role::Tool,
    };
    let parts = m
        .parts
        .into_iter()
        .map(|p| match p {
            model::Part::Text(t) => wit::Part::Text(t),
            model::Part::Thinking(t) => wit::Part::Thinking(wit::Thinking {
                text: t.text,
                signature: t.signature,
            }),
            model::Part::ToolCall(c) => wit::Part::ToolCall(wit::ToolCall {
                id: c.id,
                name: c.name,
                arguments: c.arguments,
            }),
            model::Part::ToolResult(r) => wit::Part::ToolResult(wit::ToolResult {
                call_id: r.call_id,
                content: r.content,
                is_error: r.is_error,
            }),
            model::Part::Opaque(j) => wit::Part::Opaque(j),
        })
        .collect();
    wit::Message { role, parts }
}
