//! The condense compressor: a pure function from (history, config, checkpoint)
//! to the request the model should see. `component.rs` exports it as a WASI
//! component; natively it is an ordinary library for tests and benchmarks.
//!
//! One module per step:
//! token estimate (`condense_model::tokens`) → safe cut points (`segment`) →
//! checkpoint reuse (`checkpoint`) → context-engineering passes (`passes`) →
//! boundary choice (`fold`) → summary (the imported summarizer) → assembly
//! (`assemble`) → self-check (`condense_model::invariants`).
//!
//! Hysteresis: while a valid checkpoint's request stays under
//! `token_threshold`, the same boundary and summary are reused, so successive
//! requests share a byte-identical prefix and the provider's prompt cache hits.
//! Only when the threshold is crossed does the boundary move, far enough to get
//! down to `target_tokens`, and only the newly folded messages are summarised
//! into the previous summary. When the passes are on, a compaction first tries
//! them alone (rewriting the kept messages older than the verbatim tail) and
//! folds only if that does not get down to the target.

pub mod assemble;
pub mod checkpoint;
pub mod fold;
pub mod language;
pub mod passes;
pub mod segment;

#[cfg(target_arch = "wasm32")]
mod component;

use condense_model::tokens::{estimate_message, estimate_text};
use condense_model::{
    Checkpoint, CompressError, Config, Message, Outcome, PassReport, Report, Role, SummaryRequest,
    Trigger, invariants,
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
    invariants::check_pairs(messages).map_err(|p| CompressError::InvalidInput(p.to_string()))?;

    let cuts = segment::safe_cut_points(messages);

    // The request as it stands: the checkpoint's fold if it still applies,
    // else the whole history.
    let previous = checkpoint.and_then(|cp| Some((checkpoint::matching(cp, messages, &cuts)?, cp)));
    // Between compactions only what follows the boundary can change the
    // request: the folded messages were measured when they were folded.
    let start = previous.map_or(0, |(m, _)| m.boundary);
    let sizes = fold::Sizes::measure(messages, start);
    let folded_tokens = previous.map_or(0, |(_, cp)| u64::from(cp.folded_tokens));
    let tokens_before = saturate(folded_tokens + sizes.tail(start));
    let current = match previous {
        Some((m, cp)) => Fold::new(messages, m, cp.summary.clone(), config, &sizes),
        None => Fold::none(messages, &sizes),
    };
    let unchanged = |trigger| {
        current.outcome(
            messages,
            &sizes,
            tokens_before,
            trigger,
            0,
            previous.map(|(_, cp)| cp.clone()),
        )
    };
    if current.tokens <= u64::from(config.token_threshold) {
        let trigger = if previous.is_some() {
            Trigger::ReusedCheckpoint
        } else {
            Trigger::UnderThreshold
        };
        return Ok(unchanged(trigger));
    }
    // A compaction's outcome, self-checked: `fold` with `folded_tokens` of
    // history folded in all, `newly_folded` of them by this call.
    let compacted = |fold: &Fold, folded_tokens: u64, newly_folded: u32| {
        let checkpoint = fold.checkpoint(messages, saturate(folded_tokens));
        let outcome = fold.outcome(
            messages,
            &sizes,
            tokens_before,
            Trigger::Compacted,
            newly_folded,
            Some(checkpoint),
        );
        invariants::check_output(messages, &outcome.messages, outcome.report.cut())
            .map_err(|v| CompressError::SelfCheckFailed(v.to_string()))?;
        Ok(outcome)
    };

    // Compact. The passes come first: the cheapest compaction rewrites the
    // kept messages older than the verbatim tail and folds nothing.
    let horizon = messages.len();
    let tail_floor = if config.passes_enabled() {
        fold::verbatim_tail_start(&sizes, &cuts, current.at.boundary, config)
    } else {
        current.at.boundary
    };
    if tail_floor > current.at.boundary {
        let at = checkpoint::Matched {
            boundary: current.at.boundary,
            tail_start: tail_floor,
            horizon,
        };
        let rewritten = Fold::new(messages, at, current.summary.clone(), config, &sizes);
        if rewritten.tokens <= u64::from(config.target_tokens) {
            return compacted(&rewritten, folded_tokens, 0);
        }
    }

    // Then fold as far as the history itself calls for (the passes' savings
    // are not spent on keeping more: each token the passes save stays saved,
    // which lowers every request until the next compaction, and puts that
    // compaction further away).
    let max_pair = max_pair_tokens(config.summary_max_tokens);
    let Some(boundary) = fold::choose_boundary(
        messages,
        &sizes,
        &cuts,
        current.at.boundary,
        config,
        max_pair,
    ) else {
        return Ok(unchanged(Trigger::WontShrink));
    };
    let newly_folded: Vec<Message> = messages[current.at.boundary..boundary]
        .iter()
        .filter(|m| m.role != Role::System)
        .cloned()
        .collect();
    let newly_folded_count = newly_folded.len() as u32;
    let language = language::detect(&messages[..boundary]);
    let summary = summarize(SummaryRequest {
        previous_summary: current.summary.clone(),
        messages: newly_folded,
        max_tokens: config.summary_max_tokens,
        language: language.to_string(),
    });
    // A summarizer is third-party code: hold it to its budget.
    let summary = clamp_to_tokens(summary, config.summary_max_tokens);
    let at = checkpoint::Matched {
        boundary,
        tail_start: tail_floor.max(boundary),
        horizon,
    };
    let next = Fold::new(messages, at, summary, config, &sizes);
    if next.tokens >= current.tokens {
        return Ok(unchanged(Trigger::WontShrink));
    }
    let folded_now = sizes.tail(start) - sizes.tail(boundary);
    compacted(&next, folded_tokens + folded_now, newly_folded_count)
}

/// One way of showing the history: folded up to `at.boundary` into a summary
/// pair (none at boundary 0), the passes' rewrite of the region up to
/// `at.tail_start`, then the verbatim tail.
struct Fold {
    at: checkpoint::Matched,
    summary: String,
    pair: Option<[Message; 2]>,
    pair_tokens: u64,
    region: Vec<passes::Kept>,
    passes: PassReport,
    /// Tokens of the whole request.
    tokens: u64,
}

impl Fold {
    /// The history as it is: nothing folded, nothing rewritten.
    fn none(messages: &[Message], sizes: &fold::Sizes) -> Fold {
        Fold {
            at: checkpoint::Matched {
                boundary: 0,
                tail_start: 0,
                horizon: messages.len(),
            },
            summary: String::new(),
            pair: None,
            pair_tokens: 0,
            region: Vec::new(),
            passes: PassReport::default(),
            tokens: sizes.total(),
        }
    }

    /// `sizes` must be measured from `at.boundary` or earlier.
    fn new(
        messages: &[Message],
        at: checkpoint::Matched,
        summary: String,
        config: &Config,
        sizes: &fold::Sizes,
    ) -> Fold {
        // The framing speaks the language of the folded messages: the
        // checkpoint's hash fixes them, so a new message in another language
        // cannot change the framing (and break the cache) between compactions.
        let pair = (at.boundary > 0)
            .then(|| assemble::summary_pair(&summary, language::detect(&messages[..at.boundary])));
        let pair_tokens: u64 = pair
            .iter()
            .flatten()
            .map(|m| u64::from(estimate_message(m)))
            .sum();
        let (region, mut passes) = if at.tail_start > at.boundary {
            passes::run(&messages[..at.horizon], at.boundary..at.tail_start, config)
        } else {
            (Vec::new(), PassReport::default())
        };
        let region_tokens: u64 = region
            .iter()
            .map(|k| u64::from(estimate_message(&k.message)))
            .sum();
        let region_raw = sizes.tail(at.boundary) - sizes.tail(at.tail_start);
        passes.tokens_saved = saturate(region_raw.saturating_sub(region_tokens));
        Fold {
            tokens: sizes.head(at.boundary, pair_tokens)
                + region_tokens
                + sizes.tail(at.tail_start),
            at,
            summary,
            pair,
            pair_tokens,
            region,
            passes,
        }
    }

    fn messages(&self, messages: &[Message]) -> Vec<Message> {
        if self.pair.is_none() && self.region.is_empty() {
            return messages.to_vec();
        }
        let pinned = if self.pair.is_some() {
            segment::opener_before(messages, self.at.boundary)
        } else {
            None
        };
        assemble::assemble(
            messages,
            self.at.boundary,
            pinned,
            self.pair.clone(),
            self.region.iter().map(|k| k.message.clone()),
            self.at.tail_start,
        )
    }

    fn checkpoint(&self, messages: &[Message], folded_tokens: u32) -> Checkpoint {
        Checkpoint {
            boundary: self.at.boundary as u32,
            prefix_hash: checkpoint::prefix_hash(&messages[..self.at.boundary]),
            folded_tokens,
            summary: self.summary.clone(),
            tail_start: self.at.tail_start as u32,
            horizon: self.at.horizon as u32,
        }
    }

    fn outcome(
        &self,
        messages: &[Message],
        sizes: &fold::Sizes,
        tokens_before: u32,
        trigger: Trigger,
        newly_folded: u32,
        checkpoint: Option<Checkpoint>,
    ) -> Outcome {
        Outcome {
            report: Report {
                tokens_before,
                tokens_after: saturate(self.tokens),
                trigger,
                boundary: self.at.boundary as u32,
                newly_folded,
                summary_tokens: self.pair_tokens as u32,
                pinned_opening: self
                    .pair
                    .as_ref()
                    .and(sizes.pinned(self.at.boundary))
                    .map(|p| p as u32),
                tail_start: self.at.tail_start as u32,
                passes: self.passes,
            },
            messages: self.messages(messages),
            checkpoint,
        }
    }
}

/// The most a summary pair with a summary of up to `summary_tokens` can cost,
/// for choosing the boundary. An upper bound, or a boundary could be chosen
/// whose request ends up over the threshold: the framing's language is only
/// known once the boundary is (it is the folded messages'), so this takes the
/// longest framing, plus a margin: the estimator does not promise that the
/// joined text costs no more than its parts (the test below finds no case
/// that needs it).
fn max_pair_tokens(summary_tokens: u32) -> u64 {
    const JOIN_SLACK: u64 = 2;
    let framing = assemble::LANGUAGES
        .iter()
        .map(|lang| {
            assemble::summary_pair("", lang)
                .iter()
                .map(|m| u64::from(estimate_message(m)))
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0);
    framing + u64::from(summary_tokens) + JOIN_SLACK
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pair_estimate_bounds_every_framing_and_summary() {
        let summaries = [
            String::new(),
            "facts".into(),
            "42 files changed".into(),
            "## Files\n- src/main.rs (Edit ×2)\n$ cargo test → ok".repeat(40),
            "要約：パーサーを修正した。".repeat(30),
            "Краткое содержание: исправлен парсер. ".repeat(30),
            "    let x = vec![1, 2, 3];\n}".repeat(50),
        ];
        for lang in assemble::LANGUAGES.iter().chain(&["xx"]) {
            for summary in &summaries {
                let cost: u64 = assemble::summary_pair(summary, lang)
                    .iter()
                    .map(|m| u64::from(estimate_message(m)))
                    .sum();
                let bound = max_pair_tokens(estimate_text(summary));
                assert!(cost <= bound, "{lang}: {cost} > {bound} for {summary:.20}");
            }
        }
    }
}
