//! The generated bindings of `wit/condense.wit` and the conversions between
//! their types and `condense_model`'s: the only place that knows both.
//!
//! Bindings are generated once per world the host drives. Both worlds use the
//! `types` interface; the summarizer world reuses the compressor world's
//! generated types (`with`), so a summary request the compressor sends can be
//! forwarded to the summarizer as it is, with no conversion.

use condense_model as model;

/// Bindings of `compressor-world`: the host calls the `compressor` export and
/// provides the `summarizer` import.
pub mod compressor_world {
    wasmtime::component::bindgen!({
        world: "compressor-world",
        path: "../wit",
        // The host's `summarize` runs another guest, which can fail; the
        // failure must trap the compressor instead of inventing a summary.
        imports: { default: trappable },
    });
}

/// Bindings of `summarizer-world`: the host calls the `summarizer` export.
pub mod summarizer_world {
    wasmtime::component::bindgen!({
        world: "summarizer-world",
        path: "../wit",
        with: { "condense:middleware/types": super::compressor_world::condense::middleware::types },
    });
}

pub use compressor_world::condense::middleware::types as wit;

impl From<&model::Message> for wit::Message {
    fn from(m: &model::Message) -> Self {
        wit::Message {
            role: m.role.into(),
            parts: m.parts.iter().map(Into::into).collect(),
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

impl From<&model::Part> for wit::Part {
    fn from(p: &model::Part) -> Self {
        match p {
            model::Part::Text(t) => wit::Part::Text(t.clone()),
            model::Part::Thinking(t) => wit::Part::Thinking(wit::Thinking {
                text: t.text.clone(),
                signature: t.signature.clone(),
            }),
            model::Part::ToolCall(c) => wit::Part::ToolCall(wit::ToolCall {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            }),
            model::Part::ToolResult(r) => wit::Part::ToolResult(wit::ToolResult {
                call_id: r.call_id.clone(),
                content: r.content.clone(),
                is_error: r.is_error,
            }),
            model::Part::Opaque(j) => wit::Part::Opaque(j.clone()),
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

impl From<&model::Config> for wit::Config {
    fn from(c: &model::Config) -> Self {
        wit::Config {
            token_threshold: c.token_threshold,
            target_tokens: c.target_tokens,
            recent_turns: c.recent_turns,
            keep_recent_tokens: c.keep_recent_tokens,
            summary_max_tokens: c.summary_max_tokens,
            strip_reasoning_after_turns: c.strip_reasoning_after_turns,
            reasoning_echo: c.reasoning_echo,
            aggregate_developer_loops: c.aggregate_developer_loops,
            max_loop_steps_before_aggregate: c.max_loop_steps_before_aggregate,
            tools: wit::ToolClasses {
                mutating: c.tools.mutating.clone(),
                exec_capable: c.tools.exec_capable.clone(),
            },
            clear_mode: match c.clear_mode {
                model::ClearMode::Off => wit::ClearMode::Off,
                model::ClearMode::Truncate => wit::ClearMode::Truncate,
                model::ClearMode::Clear => wit::ClearMode::Clear,
            },
            result_char_threshold: c.result_char_threshold,
            keep_tool_results: c.keep_tool_results,
            exclude_tools: c.exclude_tools.clone(),
        }
    }
}

impl From<&model::Checkpoint> for wit::Checkpoint {
    fn from(c: &model::Checkpoint) -> Self {
        wit::Checkpoint {
            boundary: c.boundary,
            prefix_hash: c.prefix_hash.clone(),
            folded_tokens: c.folded_tokens,
            summary: c.summary.clone(),
            tail_start: c.tail_start,
            horizon: c.horizon,
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

impl From<wit::Outcome> for model::Outcome {
    fn from(o: wit::Outcome) -> Self {
        model::Outcome {
            messages: o.messages.into_iter().map(Into::into).collect(),
            checkpoint: o.checkpoint.map(Into::into),
            report: o.report.into(),
        }
    }
}

impl From<wit::Report> for model::Report {
    fn from(r: wit::Report) -> Self {
        model::Report {
            tokens_before: r.tokens_before,
            tokens_after: r.tokens_after,
            trigger: match r.trigger {
                wit::Trigger::UnderThreshold => model::Trigger::UnderThreshold,
                wit::Trigger::ReusedCheckpoint => model::Trigger::ReusedCheckpoint,
                wit::Trigger::Compacted => model::Trigger::Compacted,
                wit::Trigger::WontShrink => model::Trigger::WontShrink,
            },
            boundary: r.boundary,
            newly_folded: r.newly_folded,
            summary_tokens: r.summary_tokens,
            pinned_opening: r.pinned_opening,
            tail_start: r.tail_start,
            passes: model::PassReport {
                reasoning_pruned: r.passes.reasoning_pruned,
                steps_elided: r.passes.steps_elided,
                results_cleared: r.passes.results_cleared,
                tokens_saved: r.passes.tokens_saved,
            },
        }
    }
}

impl From<wit::CompressError> for model::CompressError {
    fn from(e: wit::CompressError) -> Self {
        match e {
            wit::CompressError::InvalidConfig(m) => model::CompressError::InvalidConfig(m),
            wit::CompressError::InvalidInput(m) => model::CompressError::InvalidInput(m),
            wit::CompressError::SelfCheckFailed(m) => model::CompressError::SelfCheckFailed(m),
        }
    }
}

impl From<&model::SummaryRequest> for wit::SummaryRequest {
    fn from(r: &model::SummaryRequest) -> Self {
        wit::SummaryRequest {
            previous_summary: r.previous_summary.clone(),
            messages: r.messages.iter().map(Into::into).collect(),
            max_tokens: r.max_tokens,
            language: r.language.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_survive_the_round_trip() {
        let message = model::Message {
            role: model::Role::Assistant,
            parts: vec![
                model::Part::Text("hi".into()),
                model::Part::Thinking(model::Thinking {
                    text: "hmm".into(),
                    signature: Some("sig".into()),
                }),
                model::Part::ToolCall(model::ToolCall {
                    id: "c1".into(),
                    name: "Bash".into(),
                    arguments: "{}".into(),
                }),
                model::Part::ToolResult(model::ToolResult {
                    call_id: "c1".into(),
                    content: "ok".into(),
                    is_error: true,
                }),
                model::Part::Opaque(r#"{"type":"image"}"#.into()),
            ],
        };
        assert_eq!(model::Message::from(wit::Message::from(&message)), message);
    }

    #[test]
    fn checkpoints_survive_the_round_trip() {
        let checkpoint = model::Checkpoint {
            boundary: 7,
            prefix_hash: "abc".into(),
            folded_tokens: 1234,
            summary: "s".into(),
            tail_start: 9,
            horizon: 12,
        };
        assert_eq!(
            model::Checkpoint::from(wit::Checkpoint::from(&checkpoint)),
            checkpoint
        );
    }
}
