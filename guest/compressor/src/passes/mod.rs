//! The context-engineering passes: pure functions that rewrite the messages
//! kept between the summary and the verbatim tail (the "region"), in the order
//! the design gives — reasoning pruning (`reasoning`), developer-loop
//! aggregation (`loops`), old tool-result clearing (`clearing`).
//!
//! They run when a compaction happens and their inputs are then frozen in the
//! checkpoint (`tail_start`, `horizon`): each pass looks only at
//! `history = messages[..horizon]`, so between compactions the compressor
//! reproduces the same rewrite byte for byte and the prompt cache keeps
//! hitting. Each pass is off by default and never touches a system message, a
//! signed thinking part (dropped whole or kept exact), a tool call, or the
//! pairing of calls and results.

pub mod clearing;
pub mod loops;
pub mod reasoning;

use crate::settings::Settings;
use condense_model::{Message, PassReport};
use std::ops::Range;

/// One message of the rewritten region: the history index it came from, and
/// what it is now (possibly unchanged).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    pub origin: usize,
    pub message: Message,
}

/// `messages` as a region no pass has touched yet, the first at history
/// index `first_origin`.
pub fn unchanged(messages: &[Message], first_origin: usize) -> Vec<Kept> {
    messages
        .iter()
        .zip(first_origin..)
        .map(|(m, origin)| Kept {
            origin,
            message: m.clone(),
        })
        .collect()
}

/// Runs every enabled pass over `history[region]`, with `history` as all the
/// passes may look at. Returns the rewritten region, in order (messages a pass
/// removed are absent), and what the passes did (`tokens_saved` left 0: the
/// caller measures).
pub fn run(
    history: &[Message],
    region: Range<usize>,
    config: &Settings,
    recall: bool,
) -> (Vec<Kept>, PassReport) {
    let kept = unchanged(&history[region.clone()], region.start);
    let (kept, reasoning_pruned) = reasoning::apply(kept, history, config);
    let (kept, steps_elided) = loops::apply(kept, config);
    let (kept, results_cleared) = clearing::apply(kept, history, config, recall);
    let report = PassReport {
        reasoning_pruned,
        steps_elided,
        results_cleared,
        tokens_saved: 0,
    };
    (kept, report)
}
