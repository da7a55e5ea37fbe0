//! Speed of one `compress` call on the largest recorded session (cc-opus-b,
//! ~166k o200k tokens), natively and through the sandboxed component, so the
//! component's overhead (copying messages across the boundary, wasm code,
//! the host's checks) is visible next to the same code built natively.
//!
//! - `steady`: the common call between compactions — a checkpoint is reused
//!   and nothing is summarised. The host checks its hash of the folded
//!   messages and sends only the rest (an offset call); natively, the same
//!   offset call. `+passes`: the context-engineering passes on, their rewrite
//!   reproduced from the checkpoint.
//! - `steady+200k`: the same, with about 200k tokens of other sessions'
//!   messages folded in front of cc-opus-b: the call must not grow with what
//!   is folded.
//! - `transcript/…`: the component call on a [`Transcript`], the history an
//!   agent runtime keeps in memory, measured once per message appended: the
//!   host neither hashes the folded messages again nor counts the tail.
//! - `runtime/…`: the agent runtime's model call on the same transcript, as
//!   `Agent` makes it: the middleware chain with condense in it (the
//!   request's token count, the checkpoint, the cache meter) and the request
//!   assembled.
//! - `body/steady`: what `condense compress` and a proxy do between
//!   compactions on cc-opus-b's request body: parse it, the call, render the
//!   body to send.
//! - `compact`: a cold call that folds the history (summarizer included).
//! - where the component call's time goes: `host/prefix-hash` (the host's
//!   check that the folded messages are unchanged), `host/estimate` (the
//!   host's token count of the messages it sends, which the guest is given
//!   rather than running the estimator in wasm; natively the compressor
//!   counts them itself), `host/runtime-call` (that count, lowering the window
//!   into a fresh instance, the guest, lifting the items), `host/validate`
//!   (the invariants checked by index).
//!
//! Run: `cargo bench -p condense-tests --bench compress`.

use condense_host::{
    BodyConfig, Call, MemoryStore, Middleware, SessionCheckpoint, Transcript, compress_body,
};
use condense_model::hash::prefix_hash;
use condense_model::invariants::{History, check_items};
use condense_model::tokens::estimate_messages;
use condense_model::{Checkpoint, Message, Outcome, Role};
use condense_runtime::layers::{Condense, Layers, ModelCall};
use condense_runtime::model::ModelRequest;
use condense_tests::{TestConfig, config_40k, corpus_dir, embedded_middleware, session};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn summarize(
    r: condense_model::SummaryRequest,
    _: &[condense_model::Item],
) -> Result<String, String> {
    Ok(condense_summarizer_heuristic::summarize(&r))
}

fn native(
    history: &[Message],
    offset: usize,
    config: &TestConfig,
    checkpoint: Option<&Checkpoint>,
) -> Outcome {
    let request = condense_compressor::Request {
        history: &history[offset..],
        offset,
        config: &config.core,
        settings: &config.settings,
        checkpoint,
        tokens: None,
        recall: false,
        preparing: false,
    };
    condense_compressor::compress(request, &mut summarize).unwrap()
}

/// A checkpoint made one call earlier: the steady state between compactions.
fn steady_checkpoint(
    middleware: &Middleware,
    history: &[Message],
    config: &TestConfig,
) -> SessionCheckpoint {
    let sent = config.compress(middleware, &history[..history.len() - 1], None);
    sent.checkpoint.expect("the session is over the threshold")
}

/// cc-opus-b with other recorded sessions in front of it, about 200k tokens
/// of them: one long history whose older part a compaction folds.
fn with_folded_history(history: &[Message]) -> Vec<Message> {
    let mut long: Vec<Message> = ["cc-opus-a", "cc-opus-c"]
        .iter()
        .flat_map(|name| session(name))
        .filter(|m| m.role != Role::System)
        .collect();
    let extra = condense_model::tokens::estimate_total(&long);
    assert!(extra > 200_000, "{extra} tokens in front");
    long.extend(history.iter().filter(|m| m.role != Role::System).cloned());
    long
}

fn bench(c: &mut Criterion) {
    let plain = session("cc-opus-b");
    let long = with_folded_history(&plain);
    let middleware = embedded_middleware();
    let mut group = c.benchmark_group("cc-opus-b");
    group.sample_size(30);
    for (passes, config) in [("", config_40k()), ("+passes", config_40k().with_passes())] {
        let json = config.json();
        for (name, history) in [("steady", &plain), ("steady+200k", &long)] {
            let stored = steady_checkpoint(middleware, history, &config);
            let offset = stored.checkpoint.boundary as usize;
            let checkpoint = Some(&stored.checkpoint);
            group.bench_function(format!("native/{name}{passes}"), |b| {
                b.iter(|| native(black_box(history), offset, &config, checkpoint))
            });
            group.bench_function(format!("component/{name}{passes}"), |b| {
                b.iter(|| config.compress(middleware, black_box(history), Some(&stored)))
            });
            let transcript = Transcript::from(history.clone());
            group.bench_function(format!("transcript/{name}{passes}"), |b| {
                b.iter(|| {
                    middleware.compress_transcript(
                        black_box(&transcript),
                        &config.core,
                        &json,
                        Some(&stored),
                    )
                })
            });
            // The agent runtime's model call as `Agent` makes it: the
            // chain with condense in it, the request assembled.
            let mut chain = Layers::new().with(Condense::new(
                middleware,
                config.core,
                json.clone(),
                Box::new(MemoryStore(Some(stored.clone()))),
            ));
            let system: Vec<Message> = history
                .iter()
                .take_while(|m| m.role == Role::System)
                .cloned()
                .collect();
            let conversation =
                Transcript::from_iter(history.iter().filter(|m| m.role != Role::System).cloned());
            group.bench_function(format!("runtime/{name}{passes}"), |b| {
                b.iter(|| {
                    let mut call = ModelCall {
                        number: 1,
                        history: &conversation,
                        context: Default::default(),
                        system: system.clone(),
                        conversation: None,
                        request: ModelRequest {
                            messages: Vec::new(),
                            tools: Vec::new(),
                            max_output_tokens: 8_192,
                        },
                        compactions: Vec::new(),
                    };
                    chain.before_model_call(&mut call);
                    assert!(call.compactions.is_empty());
                    call.request
                })
            });
            if passes.is_empty() && name == "steady" {
                let path = corpus_dir().join("sessions/cc-opus-b.json");
                let messages = std::fs::read_to_string(path).expect("the session");
                let body = format!(r#"{{"model": "gpt-4o", "messages": {messages}}}"#);
                let body_config = BodyConfig {
                    core: config.core,
                    settings: json.clone(),
                    cold: None,
                    recall: None,
                };
                let call = || {
                    let mut store = MemoryStore(Some(stored.clone()));
                    compress_body(middleware, &body_config, body.as_bytes(), None, &mut store)
                        .unwrap()
                };
                assert_eq!(
                    call().report.sent_from as usize,
                    offset,
                    "the body call resumes"
                );
                group.bench_function(format!("body/{name}"), |b| b.iter(call));
            }
            if passes.is_empty() {
                let runtime = middleware.runtime();
                group.bench_function(format!("host/prefix-hash/{name}"), |b| {
                    b.iter(|| prefix_hash(black_box(&history[..offset])))
                });
                group.bench_function(format!("host/runtime-call/{name}"), |b| {
                    b.iter(|| {
                        runtime
                            .call(Call {
                                history,
                                offset,
                                config: &config.core,
                                settings: &json,
                                checkpoint,
                                tokens: Some(&estimate_messages(&history[offset..])),
                                recall: false,
                                prepared: None,
                                preparing: false,
                                owner: None,
                            })
                            .unwrap()
                    })
                });
                group.bench_function(format!("host/estimate/{name}"), |b| {
                    b.iter(|| estimate_messages(black_box(&history[offset..])))
                });
                let outcome = native(history, offset, &config, checkpoint);
                group.bench_function(format!("host/validate/{name}"), |b| {
                    b.iter(|| {
                        check_items(
                            History::whole(black_box(history)),
                            &outcome.items,
                            outcome.report.cut(),
                        )
                        .unwrap()
                    })
                });
            }
        }
        group.bench_function(format!("native/compact{passes}"), |b| {
            b.iter(|| native(black_box(&plain), 0, &config, None))
        });
        group.bench_function(format!("component/compact{passes}"), |b| {
            b.iter(|| config.compress(middleware, black_box(&plain), None))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
