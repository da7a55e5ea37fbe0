//! Load on `condense proxy` (a bench, not a test): many sessions at once,
//! each a real recorded Claude Code session (cc-opus-c, marked with its own
//! session number in every user message) sent call by call, through the
//! proxy as users run it — a process of its own with the embedded store —
//! to a fake upstream on loopback.
//!
//! - **lost**: calls not answered 200 with the upstream's own answer for
//!   that session and call;
//! - **corrupted / mixed up**: calls whose request, as the upstream got it,
//!   is not the one the same session sends through a proxy of its own, one
//!   request at a time (the reference run, in process); "mixed up" when it
//!   is another session's;
//! - **added latency**: the client's round trip through the proxy against
//!   the same calls sent straight to the upstream at the same concurrency,
//!   p50 and p99;
//! - **peak memory**: the proxy process's peak resident set (VmHWM).
//!
//! Run: `cargo bench -p condense-cli --bench proxy_load` (200 sessions ×
//! 40 calls; `CONDENSE_LOAD_SESSIONS`, `CONDENSE_LOAD_CALLS` to change).

use axum::body::Bytes;
use axum::http::HeaderMap;
use condense_tests::proxy::load::{calls, marked, peak_kib, percentile};
use condense_tests::proxy::{
    ProxyProcess, RunningProxy, metric, proxy_args, scrape, serve_on_a_thread,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CONFIG: &str = "token_threshold = 10000\n";

/// What the upstream got: the digest of each request, by session and call.
type Seen = Arc<Mutex<HashMap<(usize, usize), u64>>>;

fn digest(body: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    body.to_string().hash(&mut hasher);
    hasher.finish()
}

/// The fake upstream: records the digest of every request under the
/// session and call its headers name, and answers with both.
fn upstream(seen: Seen) -> String {
    let (addr, _) = serve_on_a_thread(move |listener| async move {
        let handler = move |headers: HeaderMap, body: Bytes| {
            let seen = seen.clone();
            async move {
                let number =
                    |name: &str| -> usize { headers[name].to_str().unwrap().parse().unwrap() };
                let (session, call) = (number("x-bench-session"), number("x-bench-call"));
                let digest = serde_json::from_slice(&body).map_or(0, |b: Value| digest(&b));
                seen.lock().unwrap().insert((session, call), digest);
                json!({"session": session, "call": call}).to_string()
            }
        };
        let app = axum::Router::new().route("/v1/messages", axum::routing::post(handler));
        axum::serve(listener, app).await.unwrap();
    });
    format!("http://{addr}")
}

/// One call: its round trip, or why it was lost.
fn send(
    client: &ureq::Agent,
    url: &str,
    body: &str,
    session: usize,
    call: usize,
) -> Result<Duration, String> {
    let started = Instant::now();
    let mut answer = client
        .post(url)
        .header("x-api-key", "sk-bench")
        .header("anthropic-version", "2023-06-01")
        .header("x-bench-session", session.to_string())
        .header("x-bench-call", call.to_string())
        .send(body)
        .map_err(|e| e.to_string())?;
    let text = answer
        .body_mut()
        .read_to_string()
        .map_err(|e| e.to_string())?;
    let took = started.elapsed();
    let expected = json!({"session": session, "call": call}).to_string();
    if answer.status() != 200 || text != expected {
        return Err(format!("{}: {text}", answer.status()));
    }
    Ok(took)
}

/// Every session at once, each its calls in order, to `url`; the round
/// trips, and the calls lost.
fn run(url: &str, sessions: usize, calls: &[Value]) -> (Vec<Duration>, Vec<String>) {
    let results: Vec<_> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..sessions)
            .map(|session| {
                scope.spawn(move || {
                    let client = ureq::Agent::new_with_defaults();
                    let mut out = Vec::new();
                    for (i, call) in calls.iter().enumerate() {
                        let body = marked(call, session).to_string();
                        out.push(send(&client, url, &body, session, i));
                    }
                    out
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect()
    });
    let mut times = Vec::new();
    let mut lost = Vec::new();
    for result in results {
        match result {
            Ok(took) => times.push(took),
            Err(why) => lost.push(why),
        }
    }
    times.sort();
    (times, lost)
}

fn main() {
    let var = |name, default| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let sessions: usize = var("CONDENSE_LOAD_SESSIONS", 200);
    let calls = calls(var("CONDENSE_LOAD_CALLS", 40));
    println!(
        "{sessions} sessions × {} calls of cc-opus-c, {CONFIG:?}",
        calls.len()
    );

    // The reference: each session alone, one request at a time.
    let reference: Seen = Arc::default();
    let url = upstream(reference.clone());
    {
        let proxy = RunningProxy::in_memory(CONFIG, &url);
        let client = ureq::Agent::new_with_defaults();
        for session in 0..sessions {
            for (i, call) in calls.iter().enumerate() {
                let body = marked(call, session).to_string();
                send(&client, &proxy.url("/v1/messages"), &body, session, i).unwrap();
            }
        }
    }

    // Straight to the upstream: the round trip without the proxy.
    let direct_seen: Seen = Arc::default();
    let direct_url = upstream(direct_seen);
    let (direct, direct_lost) = run(&format!("{direct_url}/v1/messages"), sessions, &calls);
    assert!(
        direct_lost.is_empty(),
        "the upstream itself lost calls: {direct_lost:?}"
    );

    // Through the proxy, as users run it.
    let seen: Seen = Arc::default();
    let url = upstream(seen.clone());
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("condense.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let state = dir.path().join("state").display().to_string();
    let args = proxy_args(&config, &url, &["--state-dir", &state]);
    let proxy = ProxyProcess::start(Path::new(env!("CARGO_BIN_EXE_condense")), &args);
    let idle_kib = peak_kib(proxy.pid());
    let started = Instant::now();
    let (through, lost) = run(&proxy.url("/v1/messages"), sessions, &calls);
    let wall = started.elapsed();
    let metrics = scrape(&proxy.url("/metrics"));
    let peak = peak_kib(proxy.pid());
    drop(proxy);

    let reference = reference.lock().unwrap();
    let by_digest: HashMap<u64, (usize, usize)> = reference.iter().map(|(k, d)| (*d, *k)).collect();
    let (mut corrupted, mut mixed) = (0, 0);
    for (key, got) in seen.lock().unwrap().iter() {
        if reference.get(key) != Some(got) {
            match by_digest.get(got) {
                Some((session, _)) if *session != key.0 => mixed += 1,
                _ => corrupted += 1,
            }
        }
    }
    let missing = reference.len() - seen.lock().unwrap().len();
    let metric = |name: &str| metric(&metrics, name);
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "calls: {} answered, {} lost ({} never reached the upstream), {corrupted} corrupted, \
         {mixed} mixed up with another session",
        through.len(),
        lost.len(),
        missing
    );
    for why in lost.iter().take(5) {
        println!("  lost: {why}");
    }
    println!(
        "compactions {}, compressed {}, fail-opens {}",
        metric("condense_proxy_compactions_total"),
        metric("condense_proxy_condensed_total{outcome=\"compressed\"}"),
        metric("condense_proxy_condensed_total{outcome=\"failed_open\"}"),
    );
    for (p, name) in [(0.5, "p50"), (0.99, "p99")] {
        let (d, t) = (percentile(&direct, p), percentile(&through, p));
        println!(
            "{name}: direct {:.2} ms, through the proxy {:.2} ms, added {:.2} ms",
            ms(d),
            ms(t),
            ms(t) - ms(d)
        );
    }
    println!(
        "through the proxy: {:.1} s wall, {:.0} calls/s; proxy peak RSS {:.1} MiB (idle {:.1} MiB)",
        wall.as_secs_f64(),
        through.len() as f64 / wall.as_secs_f64(),
        peak as f64 / 1024.0,
        idle_kib as f64 / 1024.0
    );
}
