//! What every Rust guest of condense shares: the WIT `types` interface,
//! generated here once, and lossless conversions between those types and
//! `condense_model`, where the guests' logic lives. A component crate generates
//! its own world with
//! `with: { "condense:middleware/types@0.1.0": condense_guest_sdk::types }`
//! so its bindings use these types, and converts with `.into()`.

wit_bindgen::generate!({
    inline: "
        package condense:guest-sdk;
        world types-only { import condense:middleware/types@0.1.0; }
    ",
    path: "../../wit",
    generate_all,
});

/// The generated WIT types (`condense:middleware/types`).
pub use condense::middleware::types;

use condense_model as model;
use types as wit;

impl From<wit::Role> for model::Role {
    fn from(r: wit::Role) -> Self {
        match r {
            wit::Role::System => model::Role::System,
            wit::Role::User => model::Role::User,
            wit::Role::Assistant => model::Role::Assistant,
            wit::Role::Tool => model::Role::Tool,
        }
    }
}

impl From<model::Role> for wit::Role {
    fn from(r: model::Role) -> Self {
        match r {
            model::Role::System => wit::Role::System,
            model::Role::User => wit::Role::User,
            model::Role::Assistant => wit::Role::Assistant,
            model::Role::Tool => wit::Role::Tool,
        }
    }
}

impl From<wit::Part> for model::Part {
    fn from(p: wit::Part) -> Self {
        match p {
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
        }
    }
}

impl From<model::Part> for wit::Part {
    fn from(p: model::Part) -> Self {
        match p {
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
        }
    }
}

impl From<wit::Message> for model::Message {
    fn from(m: wit::Message) -> Self {
        model::Message {
            role: m.role.into(),
            parts: m.parts.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<model::Message> for wit::Message {
    fn from(m: model::Message) -> Self {
        wit::Message {
            role: m.role.into(),
            parts: m.parts.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<wit::Config> for model::Config {
    fn from(c: wit::Config) -> Self {
        model::Config {
            token_threshold: c.token_threshold,
            target_tokens: c.target_tokens,
            recent_turns: c.recent_turns,
            keep_recent_tokens: c.keep_recent_tokens,
            summary_max_tokens: c.summary_max_tokens,
            strip_reasoning_after_turns: c.strip_reasoning_after_turns,
            reasoning_echo: c.reasoning_echo,
            aggregate_developer_loops: c.aggregate_developer_loops,
            max_loop_steps_before_aggregate: c.max_loop_steps_before_aggregate,
            tools: model::ToolClasses {
                mutating: c.tools.mutating,
                exec_capable: c.tools.exec_capable,
            },
            clear_mode: match c.clear_mode {
                wit::ClearMode::Off => model::ClearMode::Off,
                wit::ClearMode::Truncate => model::ClearMode::Truncate,
                wit::ClearMode::Clear => model::ClearMode::Clear,
            },
            result_char_threshold: c.result_char_threshold,
            keep_tool_results: c.keep_tool_results,
            exclude_tools: c.exclude_tools,
        }
    }
}

impl From<wit::Checkpoint> for model::Checkpoint {
    fn from(c: wit::Checkpoint) -> Self {
        model::Checkpoint {
            boundary: c.boundary,
            prefix_hash: c.prefix_hash,
            folded_tokens: c.folded_tokens,
            summary: c.summary,
            tail_start: c.tail_start,
            horizon: c.horizon,
        }
    }
}

impl From<model::Checkpoint> for wit::Checkpoint {
    fn from(c: model::Checkpoint) -> Self {
        wit::Checkpoint {
            boundary: c.boundary,
            prefix_hash: c.prefix_hash,
            folded_tokens: c.folded_tokens,
            summary: c.summary,
            tail_start: c.tail_start,
            horizon: c.horizon,
        }
    }
}

impl From<model::Trigger> for wit::Trigger {
    fn from(t: model::Trigger) -> Self {
        match t {
            model::Trigger::UnderThreshold => wit::Trigger::UnderThreshold,
            model::Trigger::ReusedCheckpoint => wit::Trigger::ReusedCheckpoint,
            model::Trigger::Compacted => wit::Trigger::Compacted,
            model::Trigger::WontShrink => wit::Trigger::WontShrink,
        }
    }
}

impl From<model::Report> for wit::Report {
    fn from(r: model::Report) -> Self {
        wit::Report {
            tokens_before: r.tokens_before,
            tokens_after: r.tokens_after,
            trigger: r.trigger.into(),
            boundary: r.boundary,
            newly_folded: r.newly_folded,
            summary_tokens: r.summary_tokens,
            pinned_opening: r.pinned_opening,
            tail_start: r.tail_start,
            passes: wit::PassReport {
                reasoning_pruned: r.passes.reasoning_pruned,
                steps_elided: r.passes.steps_elided,
                results_cleared: r.passes.results_cleared,
                tokens_saved: r.passes.tokens_saved,
            },
        }
    }
}

impl From<model::Outcome> for wit::Outcome {
    fn from(o: model::Outcome) -> Self {
        wit::Outcome {
            messages: o.messages.into_iter().map(Into::into).collect(),
            checkpoint: o.checkpoint.map(Into::into),
            report: o.report.into(),
        }
    }
}

impl From<model::CompressError> for wit::CompressError {
    fn from(e: model::CompressError) -> Self {
        match e {
            model::CompressError::InvalidConfig(m) => wit::CompressError::InvalidConfig(m),
            model::CompressError::InvalidInput(m) => wit::CompressError::InvalidInput(m),
            model::CompressError::SelfCheckFailed(m) => wit::CompressError::SelfCheckFailed(m),
        }
    }
}

impl From<wit::SummaryRequest> for model::SummaryRequest {
    fn from(r: wit::SummaryRequest) -> Self {
        model::SummaryRequest {
            previous_summary: r.previous_summary,
            messages: r.messages.into_iter().map(Into::into).collect(),
            max_tokens: r.max_tokens,
            language: r.language,
        }
    }
}

impl From<model::SummaryRequest> for wit::SummaryRequest {
    fn from(r: model::SummaryRequest) -> Self {
        wit::SummaryRequest {
            previous_summary: r.previous_summary,
            messages: r.messages.into_iter().map(Into::into).collect(),
            max_tokens: r.max_tokens,
            language: r.language,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let m = model::Message {
            role: model::Role::Assistant,
            parts: vec![
                model::Part::Text("t".into()),
                model::Part::Thinking(model::Thinking {
                    text: "k".into(),
                    signature: Some("s".into()),
                }),
                model::Part::ToolCall(model::ToolCall {
                    id: "1".into(),
                    name: "n".into(),
                    arguments: "{}".into(),
                }),
                model::Part::ToolResult(model::ToolResult {
                    call_id: "1".into(),
                    content: "c".into(),
                    is_error: true,
                }),
                model::Part::Opaque("{\"type\":\"image\"}".into()),
            ],
        };
        let w: wit::Message = m.clone().into();
        assert_eq!(model::Message::from(w), m);
    }
}
