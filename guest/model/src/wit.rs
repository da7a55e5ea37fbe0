//! The conversions between the WIT types and this crate's, written once for
//! every side of the boundary: the guests' bindings (wit-bindgen) and the
//! host's (wasmtime's `bindgen!`) generate types of the same names and
//! shapes, and each side expands [`wit_conversions!`](crate::wit_conversions)
//! over its own module of them.

/// Implements `From` both ways between the WIT `types` interface generated at
/// `$wit` and `condense_model`. Expand it once in the crate that owns the
/// generated types.
#[macro_export]
macro_rules! wit_conversions {
    ($wit:path) => {
        const _: () = {
            use $crate as model;
            use $wit as wit;

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

            impl From<wit::Message> for model::Message {
                fn from(m: wit::Message) -> Self {
                    model::Message {
                        role: m.role.into(),
                        parts: m.parts.into_iter().map(Into::into).collect(),
                    }
                }
            }

            impl From<&model::Message> for wit::Message {
                fn from(m: &model::Message) -> Self {
                    wit::Message {
                        role: m.role.into(),
                        parts: m.parts.iter().map(Into::into).collect(),
                    }
                }
            }

            impl From<wit::CoreConfig> for model::CoreConfig {
                fn from(c: wit::CoreConfig) -> Self {
                    model::CoreConfig {
                        token_threshold: c.token_threshold,
                        target_tokens: c.target_tokens,
                        recent_turns: c.recent_turns,
                        keep_recent_tokens: c.keep_recent_tokens,
                        summary_max_tokens: c.summary_max_tokens,
                    }
                }
            }

            impl From<&model::CoreConfig> for wit::CoreConfig {
                fn from(c: &model::CoreConfig) -> Self {
                    wit::CoreConfig {
                        token_threshold: c.token_threshold,
                        target_tokens: c.target_tokens,
                        recent_turns: c.recent_turns,
                        keep_recent_tokens: c.keep_recent_tokens,
                        summary_max_tokens: c.summary_max_tokens,
                    }
                }
            }

            impl From<wit::Checkpoint> for model::Checkpoint {
                fn from(c: wit::Checkpoint) -> Self {
                    model::Checkpoint {
                        version: c.version,
                        boundary: c.boundary,
                        state: c.state,
                    }
                }
            }

            impl From<&model::Checkpoint> for wit::Checkpoint {
                fn from(c: &model::Checkpoint) -> Self {
                    wit::Checkpoint {
                        version: c.version,
                        boundary: c.boundary,
                        state: c.state.clone(),
                    }
                }
            }

            impl From<wit::Item> for model::Item {
                fn from(i: wit::Item) -> Self {
                    match i {
                        wit::Item::Kept(i) => model::Item::Kept(i),
                        wit::Item::Rewritten(r) => {
                            model::Item::Rewritten(r.index, r.message.into())
                        }
                        wit::Item::Written(m) => model::Item::Written(m.into()),
                    }
                }
            }

            impl From<&model::Item> for wit::Item {
                fn from(i: &model::Item) -> Self {
                    match i {
                        model::Item::Kept(i) => wit::Item::Kept(*i),
                        model::Item::Rewritten(index, m) => wit::Item::Rewritten(wit::Rewrite {
                            index: *index,
                            message: m.into(),
                        }),
                        model::Item::Written(m) => wit::Item::Written(m.into()),
                    }
                }
            }

            impl From<wit::Trigger> for model::Trigger {
                fn from(t: wit::Trigger) -> Self {
                    match t {
                        wit::Trigger::UnderThreshold => model::Trigger::UnderThreshold,
                        wit::Trigger::ReusedCheckpoint => model::Trigger::ReusedCheckpoint,
                        wit::Trigger::Compacted => model::Trigger::Compacted,
                        wit::Trigger::WontShrink => model::Trigger::WontShrink,
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

            impl From<wit::Report> for model::Report {
                fn from(r: wit::Report) -> Self {
                    model::Report {
                        tokens_before: r.tokens_before,
                        tokens_after: r.tokens_after,
                        trigger: r.trigger.into(),
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
                        checkpoint_ignored: r.checkpoint_ignored,
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
                        checkpoint_ignored: r.checkpoint_ignored,
                    }
                }
            }

            impl From<wit::Outcome> for model::Outcome {
                fn from(o: wit::Outcome) -> Self {
                    model::Outcome {
                        items: o.items.into_iter().map(Into::into).collect(),
                        checkpoint: o.checkpoint.map(Into::into),
                        report: o.report.into(),
                        // Told apart, through `recall.named` and
                        // `prepare.due`.
                        handles: Vec::new(),
                        prepare_due: false,
                    }
                }
            }

            impl From<model::Outcome> for wit::Outcome {
                fn from(o: model::Outcome) -> Self {
                    wit::Outcome {
                        items: o.items.iter().map(Into::into).collect(),
                        checkpoint: o.checkpoint.as_ref().map(Into::into),
                        report: o.report.into(),
                    }
                }
            }

            impl From<wit::CompressError> for model::CompressError {
                fn from(e: wit::CompressError) -> Self {
                    match e {
                        wit::CompressError::InvalidConfig(m) => {
                            model::CompressError::InvalidConfig(m)
                        }
                        wit::CompressError::InvalidInput(m) => {
                            model::CompressError::InvalidInput(m)
                        }
                        wit::CompressError::SelfCheckFailed(m) => {
                            model::CompressError::SelfCheckFailed(m)
                        }
                        wit::CompressError::NeedsFullHistory(m) => {
                            model::CompressError::NeedsFullHistory(m)
                        }
                        wit::CompressError::SummarizerFailed(m) => {
                            model::CompressError::SummarizerFailed(m)
                        }
                    }
                }
            }

            impl From<model::CompressError> for wit::CompressError {
                fn from(e: model::CompressError) -> Self {
                    match e {
                        model::CompressError::InvalidConfig(m) => {
                            wit::CompressError::InvalidConfig(m)
                        }
                        model::CompressError::InvalidInput(m) => {
                            wit::CompressError::InvalidInput(m)
                        }
                        model::CompressError::SelfCheckFailed(m) => {
                            wit::CompressError::SelfCheckFailed(m)
                        }
                        model::CompressError::NeedsFullHistory(m) => {
                            wit::CompressError::NeedsFullHistory(m)
                        }
                        model::CompressError::SummarizerFailed(m) => {
                            wit::CompressError::SummarizerFailed(m)
                        }
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
                        settings: r.settings,
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
                        settings: r.settings.clone(),
                    }
                }
            }
        };
    };
}
