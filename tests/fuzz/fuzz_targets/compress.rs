//! The native pipeline: a generated history and config through
//! `condense_compressor::compress` with the heuristic summarizer (now and then
//! a summarizer that ignores its budget). Never a panic; errors only where the
//! input or config is invalid; a deterministic result that passes
//! `check_items`; and a compaction's checkpoint, handed back with the same
//! history, reproduces the same request.
#![no_main]

use arbitrary::Unstructured;
use condense_fuzz::{Gen, compress_checked};
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
    compress_checked(&history, &config, &summarizer);
});
