//! The condense compressor: a pure function from (history, config, checkpoint)
//! to the request the model should see. `component.rs` exports it as a WASI
//! component; natively it is an ordinary library for tests and benchmarks.
//!
//! One module per step:
//! token estimate (`condense_model::tokens`) → safe cut points (`segment`) →
//! checkpoint reuse (`checkpoint`) → boundary choice (`fold`) → summary (the
//! imported summarizer) → assembly (`assemble`) → self-check
//! (`condense_model::invariants`).
//!
//! Hysteresis: while a valid checkpoint's request stays under
//! `token_threshold`, the same boundary and summary are reused, so successive
//! requests share a byte-identical prefix and the provider's prompt cache hits.
//! Only when the threshold is crossed does the boundary move, far enough to get
//! down to `target_tokens`, and only the newly folded messages are summarised
//! into the previous summary.

pub mod assemble;
pub mod checkpoint;
pub mod fold;
pub mod language;
pub mod segment;

#[cfg(target_arch = "wasm32")]
mod component;

use condense_model::tokens::estimate_text;
use condense_model::{
    Checkpoint, CompressError, Config, Message, Outcome, Report, Role, SummaryRequest, Trigger,
    invariants,
};

/// Compresses `messages` (oldest first). `summarize` folds messages into the
/// previous summary; in the component it is the imported summarizer.
pub fn compress(
    messages: &[Message],
    config: &Config,
    checkpoint: Option<&Checkpoint>,
    summarize: &mut dyn FnMut(SummaryRequest) -> String,
) -> Result<Outcome, CompressError> {
    config.validate().map_err(CompressError::InvalidConfig)?;
    invariants::check_pairs(messages).map_err(|v| CompressError::InvalidInput(v.detail))?;

    let cuts = segment::safe_cut_points(messages);
    let language = language::detect(messages);

    // The request as it stands: the checkpoint's fold if it still applies,
    // else the whole history.
    let previous =
        checkpoint.and_then(|cp| Some((checkpoint::matching_boundary(cp, messages, &cuts)?, cp)));
    // Between compactions only what follows the boundary can change the
    // request: the folded messages were measured when they were folded.
    let start = previous.map_or(0, |(boundary, _)| boundary);
    let sizes = fold::Sizes::measure(messages, start);
    let folded_tokens = previous.map_or(0, |(_, cp)| u64::from(cp.folded_tokens));
    let tokens_before = saturate(folded_tokens + sizes.tail(start));
    let current = match previous {
        Some((boundary, cp)) => Fold::new(boundary, cp.summary.clone(), language),
        None => Fold::none(),
    };
    let current_tokens = current.tokens(&sizes);
    let unchanged = |trigger| Outcome {
        report: Report {
            tokens_before,
            tokens_after: saturate(current_tokens),
            trigger,
            boundary: current.boundary as u32,
            newly_folded: 0,
            summary_tokens: current.pair_tokens as u32,
            pinned_opening: current
                .pair
                .as_ref()
                .and(sizes.pinned(current.boundary))
                .map(|p| p as u32),
        },
        messages: current.messages(messages),
        checkpoint: previous.map(|(_, cp)| cp.clone()),
    };
    if current_tokens <= u64::from(config.token_threshold) {
        let trigger = if previous.is_some() {
            Trigger::ReusedCheckpoint
        } else {
            Trigger::UnderThreshold
        };
        return Ok(unchanged(trigger));
    }

    // Compact: move the boundary so the request gets down to the target.
    let max_pair = pair_tokens(language, config.summary_max_tokens);
    let Some(boundary) =
        fold::choose_boundary(messages, &sizes, &cuts, current.boundary, config, max_pair)
    else {
        return Ok(unchanged(Trigger::WontShrink));
    };
    let newly_folded: Vec<Message> = messages[current.boundary..boundary]
        .iter()
        .filter(|m| m.role != Role::System)
        .cloned()
        .collect();
    let newly_folded_count = newly_folded.len() as u32;
    let summary = summarize(SummaryRequest {
        previous_summary: previous
            .map(|(_, cp)| cp.summary.clone())
            .unwrap_or_default(),
        messages: newly_folded,
        max_tokens: config.summary_max_tokens,
        language: language.to_string(),
    });
    // A summarizer is third-party code: hold it to its budget.
    let summary = clamp_to_tokens(summary, config.summary_max_tokens);
    let next = Fold::new(boundary, summary, language);
    let next_tokens = next.tokens(&sizes);
    if next_tokens >= current_tokens {
        return Ok(unchanged(Trigger::WontShrink));
    }

    let output = next.messages(messages);
    invariants::check_output(messages, &output, boundary)
        .map_err(|v| CompressError::SelfCheckFailed(v.to_string()))?;
    Ok(Outcome {
        report: Report {
            tokens_before,
            tokens_after: saturate(next_tokens),
            trigger: Trigger::Compacted,
            boundary: boundary as u32,
            newly_folded: newly_folded_count,
            summary_tokens: next.pair_tokens as u32,
            pinned_opening: sizes.pinned(boundary).map(|p| p as u32),
        },
        checkpoint: Some(Checkpoint {
            boundary: boundary as u32,
            prefix_hash: checkpoint::prefix_hash(&messages[..boundary]),
            folded_tokens: saturate(folded_tokens + sizes.tail(start) - sizes.tail(boundary)),
            summary: next.summary,
        }),
        messages: output,
    })
}

/// A fold of the history at `boundary` with its summary text (boundary 0: no fold).
struct Fold {
    boundary: usize,
    summary: String,
    pair: Option<[Message; 2]>,
    pair_tokens: u64,
}

impl Fold {
    fn none() -> Fold {
        Fold {
            boundary: 0,
            summary: String::new(),
            pair: None,
            pair_tokens: 0,
        }
    }

    fn new(boundary: usize, summary: String, language: &str) -> Fold {
        let pair = assemble::summary_pair(&summary, language);
        let pair_tokens = pair
            .iter()
            .map(|m| u64::from(condense_model::tokens::estimate_message(m)))
            .sum();
        Fold {
            boundary,
            summary,
            pair: Some(pair),
            pair_tokens,
        }
    }

    fn tokens(&self, sizes: &fold::Sizes) -> u64 {
        match self.pair {
            Some(_) => sizes.request(self.boundary, self.pair_tokens),
            None => sizes.total(),
        }
    }

    fn messages(&self, messages: &[Message]) -> Vec<Message> {
        match &self.pair {
            Some(pair) => {
                let pinned = segment::opener_before(messages, self.boundary);
                assemble::assemble(messages, self.boundary, pinned, pair.clone())
            }
            None => messages.to_vec(),
        }
    }
}

/// What the summary pair costs with a summary of `summary_tokens`.
fn pair_tokens(language: &str, summary_tokens: u32) -> u64 {
    let framing: u64 = assemble::summary_pair("", language)
        .iter()
        .map(|m| u64::from(condense_model::tokens::estimate_message(m)))
        .sum();
    framing + u64::from(summary_tokens)
}

/// Cuts `text` at a char boundary so its estimate fits `max_tokens`.
fn clamp_to_tokens(mut text: String, max_tokens: u32) -> String {
    while estimate_text(&text) > max_tokens {
        // Shrink proportionally (at least one char) and re-measure: the
        // estimate is not linear in length, so this converges in a few rounds.
        let keep = (text.len() as u64 * u64::from(max_tokens)
            / u64::from(estimate_text(&text)).max(1)) as usize;
        let mut cut = keep.min(text.len().saturating_sub(1));
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

fn saturate(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
