//! What every `compress` call the fuzz targets make must satisfy, and the
//! summarizers they drive it with. The root workspace's regression tests
//! (`tests/tests/regressions.rs`) compile this same file, so a case a target
//! once crashed on is held to exactly these checks: it may use only the
//! crates both have (the compressor, the model and the heuristic summarizer).

use condense_compressor::{Request, Settings, compress};
use condense_model::invariants::History;
use condense_model::tokens::{estimate_message, estimate_text};
use condense_model::{
    Checkpoint, CompressError, CoreConfig, Item, Message, Outcome, SummaryRequest, Trigger,
    invariants,
};

/// What a call is configured with: the fold knobs and the compressor's own
/// settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    pub core: CoreConfig,
    pub settings: Settings,
}

impl Config {
    /// The first problem `compress` must reject the config for.
    pub fn validate(&self) -> std::result::Result<(), String> {
        self.core.validate()?;
        self.settings.validate()
    }
}

/// The summarizer `compress` is driven with.
#[derive(Clone, Debug)]
pub enum Summarizer {
    /// `guest/summarizer-heuristic`, the default component's logic. Its promise
    /// (at most `max_tokens` by the estimate) is checked on every call.
    Heuristic,
    /// A third-party summarizer that ignores its budget and returns this text.
    Fixed(String),
}

impl Summarizer {
    pub fn summarize(&self, request: SummaryRequest) -> std::result::Result<String, String> {
        match self {
            Summarizer::Heuristic => {
                let summary = condense_summarizer_heuristic::summarize(&request);
                assert!(
                    estimate_text(&summary) <= request.max_tokens,
                    "heuristic summary over its budget: {} > {} tokens",
                    estimate_text(&summary),
                    request.max_tokens
                );
                Ok(summary)
            }
            Summarizer::Fixed(text) => Ok(text.clone()),
        }
    }
}

/// Whether `CONDENSE_FUZZ_SHOW` is set: the targets then print what they
/// generated (to read a crash input: run the target binary on the file).
pub fn show() -> bool {
    static SHOW: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SHOW.get_or_init(|| std::env::var_os("CONDENSE_FUZZ_SHOW").is_some())
}

/// `compress` with `summarizer`.
pub fn run(
    history: &[Message],
    config: &Config,
    checkpoint: Option<&Checkpoint>,
    summarizer: &Summarizer,
) -> std::result::Result<Outcome, CompressError> {
    run_from(history, 0, config, checkpoint, summarizer)
}

/// `compress` with `summarizer`, given the history from `offset` on.
pub fn run_from(
    history: &[Message],
    offset: usize,
    config: &Config,
    checkpoint: Option<&Checkpoint>,
    summarizer: &Summarizer,
) -> std::result::Result<Outcome, CompressError> {
    let request = Request {
        history: &history[offset..],
        offset,
        config: &config.core,
        settings: &config.settings,
        checkpoint,
        tokens: None,
        recall: false,
        preparing: false,
    };
    compress(request, &mut |request, _| summarizer.summarize(request))
}

/// Runs `compress` (twice if `twice`) and checks what must hold of any call:
///
/// - the two calls agree (the function is deterministic);
/// - an error is `InvalidConfig` exactly when the config is invalid,
///   `InvalidInput` exactly when `check_pairs` rejects the history, and never
///   `SelfCheckFailed` (that would be a compressor bug the host fails open on);
/// - an outcome passes `check_items(history, items, report.cut())`;
/// - the report agrees with the output: `tokens_after` is its estimate, a
///   history under the threshold comes back unchanged, a compaction has a
///   checkpoint and (from no checkpoint) shrinks the request.
pub fn checked(
    history: &[Message],
    config: &Config,
    checkpoint: Option<&Checkpoint>,
    summarizer: &Summarizer,
    twice: bool,
) -> Option<Outcome> {
    let first = run(history, config, checkpoint, summarizer);
    if twice {
        let second = run(history, config, checkpoint, summarizer);
        assert_eq!(first, second, "compress is not deterministic");
    }
    if show() {
        eprintln!("checkpoint given: {checkpoint:#?}\nresult: {first:#?}");
    }
    let config_error = config.validate().err();
    let pairs_error = invariants::check_pairs(history).err();
    match first {
        Err(CompressError::InvalidConfig(why)) => {
            assert!(config_error.is_some(), "valid config rejected: {why}");
            None
        }
        Err(CompressError::InvalidInput(why)) => {
            assert!(config_error.is_none(), "invalid config accepted");
            assert!(pairs_error.is_some(), "valid history rejected: {why}");
            None
        }
        Err(CompressError::SelfCheckFailed(why)) => {
            panic!("compress failed its self-check: {why}")
        }
        Err(e @ (CompressError::NeedsFullHistory(_) | CompressError::SummarizerFailed(_))) => {
            panic!("a whole-history call with an infallible summarizer failed: {e}")
        }
        Ok(outcome) => {
            assert!(config_error.is_none(), "invalid config accepted");
            assert!(
                pairs_error.is_none(),
                "invalid history accepted: {pairs_error:?}"
            );
            check_outcome(history, config, checkpoint, &outcome);
            Some(outcome)
        }
    }
}

/// What the `compress` target checks of one history: [`checked`], called
/// twice (the function is deterministic), then, for a compaction that fits
/// the threshold, its checkpoint handed back with the same history gives
/// `ReusedCheckpoint` and the same request.
pub fn compress_checked(
    history: &[Message],
    config: &Config,
    summarizer: &Summarizer,
) -> Option<Outcome> {
    let outcome = checked(history, config, None, summarizer, true)?;
    if outcome.report.trigger == Trigger::Compacted
        && outcome.report.tokens_after <= config.core.token_threshold
    {
        let checkpoint = outcome.checkpoint.as_ref().unwrap();
        let again = checked(history, config, Some(checkpoint), summarizer, true).unwrap();
        assert_eq!(again.report.trigger, Trigger::ReusedCheckpoint);
        assert_eq!(again.items, outcome.items, "checkpoint not reproduced");
        assert_eq!(again.checkpoint.as_ref(), Some(checkpoint));
    }
    Some(outcome)
}

/// The properties of a successful outcome (see [`checked`]).
pub fn check_outcome(
    history: &[Message],
    config: &Config,
    checkpoint: Option<&Checkpoint>,
    outcome: &Outcome,
) {
    let report = &outcome.report;
    if let Err(v) = invariants::check_items(History::whole(history), &outcome.items, report.cut()) {
        panic!("check_items: {v} (trigger {:?})", report.trigger);
    }
    let estimate: u64 = condense_model::materialize(&outcome.items, history)
        .iter()
        .map(|m| u64::from(estimate_message(m)))
        .sum();
    assert_eq!(
        u64::from(report.tokens_after),
        estimate.min(u64::from(u32::MAX)),
        "tokens_after is not the output's estimate ({:?})",
        report.trigger
    );
    match report.trigger {
        Trigger::UnderThreshold => {
            let all: Vec<Item> = (0..history.len() as u32).map(Item::Kept).collect();
            assert_eq!(outcome.items, all, "under the threshold yet changed");
            assert!(report.tokens_after <= config.core.token_threshold);
        }
        Trigger::ReusedCheckpoint => {
            assert!(checkpoint.is_some(), "reused a checkpoint it was not given");
            assert!(report.tokens_after <= config.core.token_threshold);
        }
        Trigger::Compacted => {
            assert!(
                outcome.checkpoint.is_some(),
                "compaction without checkpoint"
            );
            if checkpoint.is_none() {
                assert!(
                    report.tokens_after < report.tokens_before,
                    "compaction did not shrink: {} -> {}",
                    report.tokens_before,
                    report.tokens_after
                );
            }
        }
        Trigger::WontShrink => {}
    }
}
