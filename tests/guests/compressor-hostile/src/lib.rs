//! A compressor that misbehaves on request, for the host's limit and fail-open
//! tests. The first word of the last message's text picks what it does:
//!
//! - `trap`: panics (a wasm `unreachable` trap);
//! - `loop`: never returns (the epoch deadline must stop it);
//! - `oom`: allocates until the memory cap stops it;
//! - `recurse`: recurses until the wasm stack runs out;
//! - `orphan`: drops the first tool result, leaving its call unanswered;
//! - `drop-system`: drops the system messages;
//! - `summarize`: asks the imported summarizer about all messages and returns
//!   its text as the checkpoint summary (the messages pass through);
//! - anything else: passes the messages through unchanged.

wit_bindgen::generate!({ world: "compressor-world", path: "../../../wit" });

use condense::middleware::summarizer;
use condense::middleware::types::{
    Checkpoint, CompressError, Config, Message, Outcome, Part, PassReport, Report, Role,
    SummaryRequest, Trigger,
};
use std::hint::black_box;

struct Hostile;

impl exports::condense::middleware::compressor::Guest for Hostile {
    fn compress(
        mut messages: Vec<Message>,
        config: Config,
        _checkpoint: Option<Checkpoint>,
    ) -> Result<Outcome, CompressError> {
        let command = last_text(&messages)
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned();
        // The output keeps `messages[boundary..]` verbatim; the invalid outputs
        // below set it so that the host's check finds the intended violation.
        let mut boundary = 0;
        let mut checkpoint = None;
        match command.as_str() {
            "trap" => panic!("hostile compressor: trap requested"),
            "loop" => loop {
                black_box(&messages);
            },
            "oom" => {
                let mut hoard = Vec::new();
                loop {
                    // Filled, so every page is really touched.
                    hoard.push(vec![1u8; 1 << 20]);
                    black_box(&hoard);
                }
            }
            "recurse" => {
                deeper(0);
            }
            "orphan" => {
                let result_at = messages
                    .iter()
                    .position(|m| m.parts.iter().any(|p| matches!(p, Part::ToolResult(_))));
                if let Some(i) = result_at {
                    messages.remove(i);
                    boundary = i + 1;
                }
            }
            "drop-system" => {
                boundary = messages
                    .iter()
                    .take_while(|m| m.role == Role::System)
                    .count();
                messages.retain(|m| m.role != Role::System);
            }
            "summarize" => {
                let summary = summarizer::summarize(&SummaryRequest {
                    previous_summary: String::new(),
                    messages: messages.clone(),
                    max_tokens: config.summary_max_tokens,
                    language: "en".into(),
                });
                checkpoint = Some(Checkpoint {
                    boundary: 0,
                    prefix_hash: String::new(),
                    folded_tokens: 0,
                    summary,
                    tail_start: 0,
                    horizon: 0,
                });
            }
            _ => {}
        }
        let report = Report {
            tokens_before: 0,
            tokens_after: 0,
            trigger: Trigger::UnderThreshold,
            boundary: boundary as u32,
            newly_folded: 0,
            summary_tokens: 0,
            pinned_opening: None,
            tail_start: boundary as u32,
            passes: PassReport {
                reasoning_pruned: 0,
                steps_elided: 0,
                results_cleared: 0,
                tokens_saved: 0,
            },
        };
        Ok(Outcome {
            messages,
            checkpoint,
            report,
        })
    }
}

/// Never returns: the stack overflows first. `black_box` keeps the
/// recursion from being turned into a loop.
#[expect(unconditional_recursion, reason = "overflowing the stack is the point")]
fn deeper(depth: u64) -> u64 {
    black_box(deeper(black_box(depth + 1))) + 1
}

fn last_text(messages: &[Message]) -> &str {
    let parts = messages
        .last()
        .map(|m| m.parts.as_slice())
        .unwrap_or_default();
    parts
        .iter()
        .find_map(|p| {
            if let Part::Text(t) = p {
                Some(t.as_str())
            } else {
                None
            }
        })
        .unwrap_or_default()
}

export!(Hostile);
