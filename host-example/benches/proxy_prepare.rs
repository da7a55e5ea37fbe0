//! Summaries prepared ahead, under load (a bench, not a test): many sessions
//! at once, each a real recorded Claude Code session (cc-opus-c, marked as
//! its own) sent call by call through `condense proxy` as users run it — a
//! process of its own — to a fake upstream that takes `MODEL_MS` per answer
//! (a model's time), the summaries written by a fake OpenAI-compatible
//! model that takes `SUMMARY_MS` per summary. Twice: with the summaries
//! written when their compaction comes (`--prepare-jobs 0`), and prepared
//! ahead (`--prepare-jobs 16`). Sessions start `STAGGER_MS` apart, as
//! users' do (the same recorded session started at once everywhere would
//! compact everywhere in the same second).
//!
//! - **added latency of the calls that compact**: the client's round trip
//!   less the upstream's own time, on the calls whose request carries a new
//!   summary, p50 and p99 (and of all calls);
//! - **cache breaks**: the calls whose request carries a new summary (the
//!   only ones that rewrite the prefix);
//! - **the same requests**: each call's request as the upstream got it, in
//!   both runs (a digest per session and call);
//! - how the compactions' summaries came (the proxy's metrics).
//!
//! Run: `cargo bench -p condense-cli --bench proxy_prepare` (16 sessions ×
//! 100 calls, 3 s a summary, 1 s an answer; `CONDENSE_PREPARE_SESSIONS`,
//! `CONDENSE_PREPARE_CALLS`, `CONDENSE_PREPARE_SUMMARY_MS`,
//! `CONDENSE_PREPARE_MODEL_MS`, `CONDENSE_PREPARE_PERMILLE` (500, the
//! configuration's default behind the LLM summarizer),
//! `CONDENSE_PREPARE_STAGGER_MS` (1500) to change).

use axum::body::Bytes;
use axum::http::HeaderMap;
use condense_model::SUMMARY_MARKER;
use condense_tests::proxy::load::{calls, marked, percentile};
use condense_tests::proxy::{ProxyProcess, metric, proxy_args, scrape, serve_on_a_thread};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn digest(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// What the upstream got, by session and call: the request's digest, and
/// its summary's (0: none).
type Seen = Arc<Mutex<HashMap<(usize, usize), (u64, u64)>>>;

/// The fake upstream: answers after `delay`, recording each request.
fn upstream(seen: Seen, delay: Duration) -> String {
    let (addr, _) = serve_on_a_thread(move |listener| async move {
        let handler = move |headers: HeaderMap, body: Bytes| {
            let seen = seen.clone();
            async move {
                let number =
                    |name: &str| -> usize { headers[name].to_str().unwrap().parse().unwrap() };
                let (session, call) = (number("x-bench-session"), number("x-bench-call"));
                let body: Value = serde_json::from_slice(&body).unwrap_or_default();
                let summary = body["messages"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(Value::to_string)
                    .find(|m| m.contains(SUMMARY_MARKER))
                    .map_or(0, |m| digest(&m));
                seen.lock()
                    .unwrap()
                    .insert((session, call), (digest(&body.to_string()), summary));
                tokio::time::sleep(delay).await;
                json!({"content": []}).to_string()
            }
        };
        let app = axum::Router::new().route("/v1/messages", axum::routing::post(handler));
        axum::serve(listener, app).await.unwrap();
    });
    format!("http://{addr}")
}

/// The fake summarizer model: a chat completion after `delay`, its text a
/// digest of the request (the same request, the same summary).
fn summarizer(delay: Duration, asked: Arc<AtomicU64>) -> String {
    let (addr, _) = serve_on_a_thread(move |listener| async move {
        let handler = move |body: Bytes| {
            let asked = asked.clone();
            async move {
                asked.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(delay).await;
                let text = format!(
                    "Summary {:016x}: the work so far.",
                    digest(&String::from_utf8_lossy(&body))
                );
                json!({"id": "s", "object": "chat.completion", "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}]})
                .to_string()
            }
        };
        let app = axum::Router::new().route("/v1/chat/completions", axum::routing::post(handler));
        axum::serve(listener, app).await.unwrap();
    });
    format!("http://{addr}/v1")
}

/// One run: every session at once through a proxy process started with
/// `flags`; each call's round trip, what the upstream got, the metrics.
struct Run {
    times: HashMap<(usize, usize), Duration>,
    seen: Seen,
    metrics: String,
    wall: Duration,
}

fn run(
    config: &Path,
    sessions: usize,
    calls: &[Value],
    (model, stagger): (Duration, Duration),
    flags: &[&str],
) -> Run {
    let seen: Seen = Arc::default();
    let url = upstream(seen.clone(), model);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state").display().to_string();
    let mut more = vec!["--state-dir", &state];
    more.extend_from_slice(flags);
    let proxy = ProxyProcess::start(
        Path::new(env!("CARGO_BIN_EXE_condense")),
        &proxy_args(config, &url, &more),
    );
    let target = proxy.url("/v1/messages");
    let started = Instant::now();
    let times = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..sessions)
            .map(|session| {
                let target = &target;
                scope.spawn(move || {
                    // Sessions start one after another, as users do.
                    std::thread::sleep(stagger * session as u32);
                    let client = ureq::Agent::new_with_defaults();
                    let mut out = Vec::new();
                    for (i, call) in calls.iter().enumerate() {
                        let body = marked(call, session).to_string();
                        let sent = Instant::now();
                        let answer = client
                            .post(target)
                            .header("x-api-key", "sk-bench")
                            .header("anthropic-version", "2023-06-01")
                            .header("x-bench-session", session.to_string())
                            .header("x-bench-call", i.to_string())
                            .send(&body);
                        assert!(answer.is_ok_and(|a| a.status() == 200), "call {i} lost");
                        out.push(((session, i), sent.elapsed()));
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
    let wall = started.elapsed();
    let metrics = scrape(&proxy.url("/metrics"));
    Run {
        times,
        seen,
        metrics,
        wall,
    }
}

impl Run {
    /// The calls whose request carries a new summary: the compactions, the
    /// only cache breaks.
    fn compacting(&self) -> Vec<(usize, usize)> {
        let seen = self.seen.lock().unwrap();
        let mut out: Vec<_> = seen
            .iter()
            .filter(|((session, call), (_, summary))| {
                let before = call
                    .checked_sub(1)
                    .and_then(|c| seen.get(&(*session, c)))
                    .map_or(0, |(_, s)| *s);
                *summary != 0 && *summary != before
            })
            .map(|(key, _)| *key)
            .collect();
        out.sort();
        out
    }

    /// The time the proxy added to `keys`' calls, sorted.
    fn added(&self, keys: &[(usize, usize)], model: Duration) -> Vec<Duration> {
        let mut added: Vec<Duration> = keys
            .iter()
            .map(|k| self.times[k].saturating_sub(model))
            .collect();
        added.sort();
        added
    }
}

fn main() {
    let var = |name, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let sessions = var("CONDENSE_PREPARE_SESSIONS", 16) as usize;
    let calls = calls(var("CONDENSE_PREPARE_CALLS", 100) as usize);
    let summary = Duration::from_millis(var("CONDENSE_PREPARE_SUMMARY_MS", 3_000));
    let model = Duration::from_millis(var("CONDENSE_PREPARE_MODEL_MS", 1_000));
    let share = var("CONDENSE_PREPARE_PERMILLE", 500);
    let stagger = Duration::from_millis(var("CONDENSE_PREPARE_STAGGER_MS", 1_500));
    let asked = Arc::new(AtomicU64::new(0));
    let llm = summarizer(summary, asked.clone());
    let config = format!(
        "token_threshold = 20000\nprepare_at_permille = {share}\n\
         [components]\nsummarizers = [\"llm\", \"heuristic\"]\n\
         [llm]\nbase_url = \"{llm}\"\nmodel = \"m\"\nmax_retries = 0\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("condense.toml");
    std::fs::write(&file, &config).unwrap();
    println!(
        "{sessions} sessions × {} calls of cc-opus-c; a summary takes {} ms, an answer {} ms; \
         prepare_at_permille = {share}; sessions start {} ms apart",
        calls.len(),
        summary.as_millis(),
        model.as_millis(),
        stagger.as_millis()
    );
    let timing = (model, stagger);
    let synchronous = run(&file, sessions, &calls, timing, &["--prepare-jobs", "0"]);
    let asked_synchronous = asked.swap(0, Ordering::SeqCst);
    let prepared = run(&file, sessions, &calls, timing, &["--prepare-jobs", "16"]);
    let asked_prepared = asked.load(Ordering::SeqCst);

    let same = {
        let (a, b) = (
            synchronous.seen.lock().unwrap(),
            prepared.seen.lock().unwrap(),
        );
        a.len() == b.len()
            && a.iter()
                .all(|(k, (d, _))| b.get(k).is_some_and(|(e, _)| e == d))
    };
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    for (name, run, asked) in [
        (
            "summaries written at the compaction",
            &synchronous,
            asked_synchronous,
        ),
        ("summaries prepared ahead", &prepared, asked_prepared),
    ] {
        let compacting = run.compacting();
        let added = run.added(&compacting, model);
        let all: Vec<(usize, usize)> = run.times.keys().copied().collect();
        let all = run.added(&all, model);
        let summaries = |how: &str| {
            metric(
                &run.metrics,
                &format!("condense_proxy_compaction_summaries_total{{summary=\"{how}\"}}"),
            )
        };
        println!("{name}:");
        println!(
            "  compacting calls (cache breaks) {}; added latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            compacting.len(),
            ms(percentile(&added, 0.5)),
            ms(percentile(&added, 0.99)),
            ms(added.last().copied().unwrap_or_default())
        );
        println!(
            "  all calls: added latency p50 {:.1} ms, p99 {:.1} ms; {:.1} s wall; {asked} summaries asked of the model",
            ms(percentile(&all, 0.5)),
            ms(percentile(&all, 0.99)),
            run.wall.as_secs_f64()
        );
        println!(
            "  summaries: used {}, waited {}, on top {}, fell back {}; jobs prepared {}, failed {}",
            summaries("used"),
            summaries("waited"),
            summaries("on_top"),
            summaries("fell_back"),
            metric(
                &run.metrics,
                "condense_proxy_prepare_jobs_total{result=\"prepared\"}"
            ),
            metric(
                &run.metrics,
                "condense_proxy_prepare_jobs_total{result=\"failed\"}"
            ),
        );
    }
    println!(
        "the same requests upstream in both runs: {}",
        if same { "yes" } else { "NO" }
    );
}
