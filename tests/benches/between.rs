//! A request between compactions, as the proxy compresses it: cc-opus-b's
//! request bodies as its client sent them to Anthropic, the call nearest
//! 100 KB and the one nearest 600 KB that reuse the session's checkpoint
//! (made by the session's calls before them, with the default config: a
//! 100k-token threshold).
//!
//! - `body/{100,600}KB`: [`compress_body`] whole — parse, the checkpoint
//!   found, the tail counted, one component call, the body rendered;
//! - and where that goes: `parse` ([`parse_body`]), `render` (the items
//!   rendered from the parsed body and written out), `call` (the
//!   middleware's call on the parsed history: prefix hash, tail count,
//!   component, checks).
//!
//! Run: `cargo bench -p condense-tests --bench between`.

use condense_host::body::parse_body;
use condense_host::formats::Format;
use condense_host::{BodyConfig, MemoryStore, compress_body};
use condense_model::CoreConfig;
use condense_tests::embedded_middleware;
use condense_tests::proxy::anthropic_session;
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let middleware = embedded_middleware();
    let config = BodyConfig {
        core: CoreConfig::default(),
        settings: "{}".into(),
        cold: None,
        recall: None,
    };
    // As the proxy reads them: the route says the format.
    let anthropic = Some(Format::Anthropic);
    let (calls, _) = anthropic_session("cc-opus-b");
    let bodies: Vec<String> = calls.iter().map(|c| c.to_string()).collect();
    // The session call by call, as the proxy sees it: each body and the
    // checkpoint it found, and whether it compacted.
    let mut store = MemoryStore(None);
    let mut steps = Vec::new();
    for body in &bodies {
        let found = store.0.clone();
        let sent =
            compress_body(middleware, &config, body.as_bytes(), anthropic, &mut store).unwrap();
        let resumed = found.is_some() && store.0 == found;
        steps.push((body, found, resumed, sent.report.sent_from));
    }
    let mut group = c.benchmark_group("between");
    group.sample_size(50);
    for kb in [100, 600] {
        let (body, found, _, sent_from) = steps
            .iter()
            .filter(|(_, _, resumed, from)| *resumed && *from > 0)
            .min_by_key(|(body, ..)| body.len().abs_diff(kb * 1000))
            .expect("calls between compactions");
        let name = format!("{kb}KB");
        println!(
            "{name}: a body of {} bytes, resuming at message {sent_from}",
            body.len()
        );
        group.bench_function(format!("body/{name}"), |b| {
            b.iter(|| {
                let mut store = MemoryStore(found.clone());
                compress_body(
                    middleware,
                    &config,
                    black_box(body.as_bytes()),
                    anthropic,
                    &mut store,
                )
                .unwrap()
            })
        });
        group.bench_function(format!("parse/{name}"), |b| {
            b.iter(|| parse_body(black_box(body.as_bytes()), anthropic).unwrap())
        });
        group.bench_function(format!("json/{name}"), |b| {
            b.iter(|| {
                serde_json::from_slice::<serde_json::Value>(black_box(body.as_bytes())).unwrap()
            })
        });
        let value: serde_json::Value = serde_json::from_slice(body.as_bytes()).unwrap();
        group.bench_function(format!("clone-json/{name}"), |b| {
            b.iter(|| black_box(&value).clone())
        });
        let parsed = parse_body(body.as_bytes(), None).unwrap();
        group.bench_function(format!("clone-messages/{name}"), |b| {
            b.iter(|| black_box(parsed.messages()).to_vec())
        });
        group.bench_function(format!("scan/{name}"), |b| {
            b.iter(|| {
                serde_json::from_slice::<serde::de::IgnoredAny>(black_box(body.as_bytes())).unwrap()
            })
        });
        let history = parsed.messages();
        let outcome = middleware.compress(history, &config.core, "{}", found.as_ref());
        group.bench_function(format!("call/{name}"), |b| {
            b.iter(|| middleware.compress(black_box(history), &config.core, "{}", found.as_ref()))
        });
        group.bench_function(format!("render/{name}"), |b| {
            b.iter(|| parsed.render_bytes(black_box(&outcome.items), false))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
