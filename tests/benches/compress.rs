//! Speed of one `compress` call on the largest recorded session (cc-opus-b,
//! ~166k o200k tokens), natively and through the sandboxed component, so the
//! component's overhead (copying messages across the boundary, wasm code) is
//! visible next to the same code built natively.
//!
//! Two cases per side, each with the context-engineering passes off and on
//! (`+passes`):
//! - `steady`: the common call between compactions — a valid checkpoint is
//!   reused and nothing is summarised (with the passes on, their rewrite of
//!   the kept messages is reproduced from the checkpoint);
//! - `compact`: a cold call that folds the history (summarizer included).
//!
//! Run: `cargo bench -p condense-tests --bench compress`.

use condense_host::Middleware;
use condense_model::{Checkpoint, Config, Message};
use condense_tests::{embedded_middleware, session};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

/// The 40k-token threshold the corpus figures use, passes off and on.
fn configs() -> [(&'static str, Config); 2] {
    let config = condense_host::settings::Settings::for_replay().compress;
    [
        ("", config.clone().without_passes()),
        ("+passes", config.with_passes()),
    ]
}

fn native(history: &[Message], config: &Config, checkpoint: Option<&Checkpoint>) -> usize {
    let mut summarize = |r| condense_summarizer_heuristic::summarize(&r);
    condense_compressor::compress(history, config, checkpoint, &mut summarize)
        .unwrap()
        .messages
        .len()
}

fn component(
    middleware: &Middleware,
    history: &[Message],
    config: &Config,
    checkpoint: Option<&Checkpoint>,
) -> usize {
    middleware
        .compress(history, config, checkpoint)
        .messages
        .len()
}

fn bench(c: &mut Criterion) {
    let history = session("cc-opus-b");
    let middleware = embedded_middleware();
    let mut group = c.benchmark_group("cc-opus-b");
    group.sample_size(30);
    for (passes, config) in configs() {
        // A checkpoint made one call earlier: the steady state between compactions.
        let mut summarize = |r| condense_summarizer_heuristic::summarize(&r);
        let checkpoint = condense_compressor::compress(
            &history[..history.len() - 1],
            &config,
            None,
            &mut summarize,
        )
        .unwrap()
        .checkpoint
        .expect("the session is over the threshold");
        let checkpoint = Some(&checkpoint);
        group.bench_function(format!("native/steady{passes}"), |b| {
            b.iter(|| native(black_box(&history), &config, checkpoint))
        });
        group.bench_function(format!("component/steady{passes}"), |b| {
            b.iter(|| component(middleware, black_box(&history), &config, checkpoint))
        });
        group.bench_function(format!("native/compact{passes}"), |b| {
            b.iter(|| native(black_box(&history), &config, None))
        });
        group.bench_function(format!("component/compact{passes}"), |b| {
            b.iter(|| component(middleware, black_box(&history), &config, None))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
