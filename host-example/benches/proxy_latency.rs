//! What `condense proxy` adds to a call that does not compact (a bench, not
//! a test): a real recorded Claude Code session (cc-opus-b, 139 calls, by
//! default) sent
//! call by call through the proxy as users run it — a process of its own
//! with the embedded store — to an upstream on loopback that answers at
//! once, each call also sent straight to the upstream just before.
//!
//! - **the session's calls**: the added latency (through the proxy less
//!   straight) of every call that did not compact, p50 / p99 / max;
//! - **by size**: the call nearest each of 100 KB and 600 KB that did not
//!   compact, sent again `CONDENSE_LATENCY_REPEATS` times (200) — the same
//!   request of a session between compactions, which reuses the session's
//!   checkpoint — its added latency p50 / p99 / max.
//!
//! A call compacted when the summary its request carries (condense's
//! marker) is not the one the call before carried.
//!
//! Run: `cargo bench -p condense-cli --bench proxy_latency`
//! (`CONDENSE_LATENCY_SESSION` for another corpus session).

use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::serve::ListenerExt;
use condense_model::SUMMARY_MARKER;
use condense_tests::proxy::load::percentile;
use condense_tests::proxy::{
    ProxyProcess, anthropic_session, metric, proxy_args, scrape, serve_on_a_thread,
};
use serde_json::Value;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The summary each call's request carried, as the upstream got it (0:
/// none), by call.
type Seen = Arc<Mutex<HashMap<usize, u64>>>;

fn upstream(seen: Seen) -> String {
    let (addr, _) = serve_on_a_thread(move |listener| async move {
        let handler = move |headers: HeaderMap, body: Bytes| {
            let seen = seen.clone();
            async move {
                let call = headers.get("x-bench-call");
                if let Some(call) = call.and_then(|c| c.to_str().ok()?.parse().ok()) {
                    // Found in the raw bytes: the upstream's own work stays
                    // small, so that what is measured is the proxy's.
                    let text = String::from_utf8_lossy(&body);
                    let summary = text.find(SUMMARY_MARKER).map_or(0, |at| {
                        let mut hasher = DefaultHasher::new();
                        text[at..(at + 2_000).min(text.len())].hash(&mut hasher);
                        hasher.finish()
                    });
                    seen.lock().unwrap().insert(call, summary);
                }
                r#"{"content":[]}"#
            }
        };
        let app = axum::Router::new().route("/v1/messages", axum::routing::post(handler));
        // As the proxy does: no write waits on Nagle's algorithm.
        let listener = listener.tap_io(|stream| stream.set_nodelay(true).unwrap());
        axum::serve(listener, app).await.unwrap();
    });
    format!("http://{addr}/v1/messages")
}

/// One round trip of `body` to `url`.
fn send(client: &ureq::Agent, url: &str, body: &str, call: Option<usize>) -> Duration {
    let started = Instant::now();
    let mut request = client
        .post(url)
        .header("x-api-key", "sk-bench")
        .header("anthropic-version", "2023-06-01")
        .header("content-type", "application/json");
    if let Some(call) = call {
        request = request.header("x-bench-call", call.to_string());
    }
    let mut answer = request.send(body).expect("answered");
    let _ = answer.body_mut().read_to_string();
    assert_eq!(answer.status(), 200);
    started.elapsed()
}

fn report(name: &str, added: &mut [Duration]) {
    added.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "  {name}: {} calls; added p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        added.len(),
        ms(percentile(added, 0.5)),
        ms(percentile(added, 0.99)),
        ms(added.last().copied().unwrap_or_default()),
    );
}

fn main() {
    let repeats: usize = std::env::var("CONDENSE_LATENCY_REPEATS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let name = std::env::var("CONDENSE_LATENCY_SESSION").unwrap_or_else(|_| "cc-opus-b".into());
    let (calls, _) = anthropic_session(&name);
    let bodies: Vec<String> = calls.iter().map(Value::to_string).collect();

    let seen: Seen = Arc::default();
    let url = upstream(seen.clone());
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("condense.toml");
    std::fs::write(&config, "").unwrap();
    let state = dir.path().join("state").display().to_string();
    let upstream_base = url.trim_end_matches("/v1/messages");
    let args = proxy_args(&config, upstream_base, &["--state-dir", &state]);
    let proxy = ProxyProcess::start(Path::new(env!("CARGO_BIN_EXE_condense")), &args);
    let through = proxy.url("/v1/messages");
    let client = ureq::Agent::new_with_defaults();
    // Warm both paths (connections, the component's first instance).
    for _ in 0..3 {
        send(&client, &url, &bodies[0], None);
    }

    println!(
        "{name}, {} calls, through `condense proxy` (release, embedded store, default \
         config) against straight to an instant upstream",
        bodies.len()
    );
    let mut added = Vec::new();
    for (i, body) in bodies.iter().enumerate() {
        let direct = send(&client, &url, body, None);
        let proxied = send(&client, &through, body, Some(i));
        added.push(proxied.saturating_sub(direct));
    }
    let seen = seen.lock().unwrap().clone();
    let compacted = |i: usize| i > 0 && seen[&i] != 0 && seen[&i] != seen[&(i - 1)];
    let between: Vec<usize> = (1..bodies.len()).filter(|&i| !compacted(i)).collect();
    let compactions = bodies.len() - 1 - between.len();
    let mut session: Vec<Duration> = between.iter().map(|&i| added[i]).collect();
    report(
        &format!("the session's calls that did not compact ({compactions} compacted)"),
        &mut session,
    );

    for kb in [100, 600] {
        let nearest = *between
            .iter()
            .min_by_key(|&&i| bodies[i].len().abs_diff(kb * 1000))
            .expect("calls between compactions");
        let body = &bodies[nearest];
        // The condense step's own time (the proxy's histogram), over these
        // calls: the rest of what the proxy adds is moving the bytes.
        let step = || {
            let text = scrape(&proxy.url("/metrics"));
            let name = "condense_proxy_condense_seconds";
            (
                metric(&text, &format!("{name}_sum")),
                metric(&text, &format!("{name}_count")),
            )
        };
        let (sum, count) = step();
        let mut added = Vec::with_capacity(repeats);
        for _ in 0..repeats {
            let direct = send(&client, &url, body, None);
            let proxied = send(&client, &through, body, None);
            added.push(proxied.saturating_sub(direct));
        }
        report(
            &format!(
                "call {nearest} ({} KB), sent {repeats} times",
                body.len() / 1000
            ),
            &mut added,
        );
        let (sum_after, count_after) = step();
        println!(
            "    of which the condense step (parse, checkpoint, component, render): mean {:.2} ms",
            (sum_after - sum) / (count_after - count) * 1000.0
        );
    }
}
