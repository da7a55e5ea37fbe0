//! The native pipeline: a generated history and config through
//! `condense_compressor::compress` with the heuristic summarizer (now and then
//! a summarizer that ignores its budget). Never a panic; errors only where the
//! input or config is invalid; a deterministic result that passes
//! `check_items`; and a compaction's checkpoint, handed back with the same
//! history, reproduces the same request.
#![no_main]

use arbitrary::Unstructured;
use condense_fuzz::{Gen, checked};
use condense_model::Trigger;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mut g = Gen::new(&mut u);
    let Ok((config, summarizer, mut history)) = g.session() else {
        return;
    };
    if g.maybe_break(&mut history).is_err() {
        return;
    }

    if condense_fuzz::show() {
        eprintln!("{config:#?}\n{summarizer:?}\n{history:#?}");
    }
    let Some(outcome) = checked(&history, &config, None, &summarizer, true) else {
        return;
    };
    // Same history, its own checkpoint: the request is reused as it is.
    if outcome.report.trigger == Trigger::Compacted
        && outcome.report.tokens_after <= config.core.token_threshold
    {
        let checkpoint = outcome.checkpoint.as_ref().unwrap();
        let again = checked(&history, &config, Some(checkpoint), &summarizer, true).unwrap();
        assert_eq!(again.report.trigger, Trigger::ReusedCheckpoint);
        assert_eq!(again.items, outcome.items, "checkpoint not reproduced");
        assert_eq!(again.checkpoint.as_ref(), Some(checkpoint));
    }
});
