//! What a compaction adds to its call when the summaries come from a slow
//! model (a bench, not a test): the corpus's long sessions (cc-opus-a, -b,
//! -c, real recorded Claude Code sessions, 139–217 calls) sent call by call,
//! all at once, through `condense proxy` as users run it — a process of its
//! own with the embedded store — to an upstream that answers each call in
//! `MODEL_MS` (500: a session paced like an agent), the summaries written by
//! an OpenAI-compatible model that takes `SUMMARY_MS` (3000) per summary,
//! with the default config (the LLM summarizer, the heuristic one its
//! fallback). Twice: with the summaries written when their compaction comes
//! (`--prepare-jobs 0`), and as the proxy runs by default (prepared ahead,
//! and no compaction waiting for the model longer than `--prepare-wait-ms`).
//!
//! - **added latency of the calls that compact**: the client's round trip
//!   less the upstream's own time, on the calls whose request carries a new
//!   summary, p50 / p99 / max (and of all calls);
//! - **cost**: each session's requests as the upstream got them, priced as
//!   the replay prices them (what repeats the previous request is a cache
//!   read, the rest a write, condense's token estimate, the model's prices
//!   in the default config, each summary written), against the offline
//!   optimum of the same session with the same knobs and summaries of the
//!   same mean size (`condense_replay::optimal`);
//! - how the compactions' summaries came (the proxy's metrics).
//!
//! Run: `cargo bench -p condense-cli --bench proxy_prepare`
//! (`CONDENSE_PREPARE_SUMMARY_MS`, `CONDENSE_PREPARE_MODEL_MS` to change;
//! `CONDENSE_PREPARE_WAIT_MS` runs the second alone, with that
//! `--prepare-wait-ms`: what the default is chosen from).

use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::serve::ListenerExt;
use condense_model::hash::message_digest;
use condense_model::tokens::estimate_messages;
use condense_model::{Message, SUMMARY_MARKER};
use condense_replay::optimal::optimum;
use condense_replay::{Prices, ReplayStats};
use condense_tests::proxy::load::percentile;
use condense_tests::proxy::{
    ProxyProcess, RunningProxy, anthropic_session, metric, proxy_args, scrape, serve_on_a_thread,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SESSIONS: [&str; 3] = ["cc-opus-a", "cc-opus-b", "cc-opus-c"];

/// A request as the upstream got it: each message's digest and tokens, and
/// the tokens of the summary pair it carries (0: none).
#[derive(Clone, Default)]
struct Got {
    messages: Vec<(u128, u32)>,
    summary: u64,
}

type Seen = Arc<Mutex<HashMap<(usize, usize), Got>>>;

fn got(body: &[u8]) -> Got {
    let parsed = condense_host::body::parse_body(body, None).expect("the proxy sends a request");
    let messages: Vec<Message> = parsed.messages().to_vec();
    let tokens = estimate_messages(&messages);
    // The summary, and the answer to it that condense writes with it.
    let summary = messages
        .iter()
        .position(|m| m.joined_text().contains(SUMMARY_MARKER))
        .map_or(0, |at| {
            let pair = messages.get(at + 1).filter(|m| m.joined_text().len() < 200);
            u64::from(tokens[at]) + pair.map_or(0, |_| u64::from(tokens[at + 1]))
        });
    Got {
        messages: messages.iter().map(message_digest).zip(tokens).collect(),
        summary,
    }
}

/// The upstream: answers after `delay`, recording each request.
fn upstream(seen: Seen, delay: Duration) -> String {
    let (addr, _) = serve_on_a_thread(move |listener| async move {
        let handler = move |headers: HeaderMap, body: Bytes| {
            let seen = seen.clone();
            async move {
                let number =
                    |name: &str| -> usize { headers[name].to_str().unwrap().parse().unwrap() };
                let key = (number("x-bench-session"), number("x-bench-call"));
                let read = tokio::task::spawn_blocking(move || got(&body));
                tokio::time::sleep(delay).await;
                let got = read.await.unwrap();
                seen.lock().unwrap().insert(key, got);
                json!({"content": []}).to_string()
            }
        };
        let app = axum::Router::new().route("/v1/messages", axum::routing::post(handler));
        let listener = listener.tap_io(|stream| stream.set_nodelay(true).unwrap());
        axum::serve(listener, app).await.unwrap();
    });
    format!("http://{addr}")
}

/// The summarizer model: a chat completion after `delay`, a few hundred
/// words digesting the request (the same request, the same summary).
fn summarizer(delay: Duration) -> String {
    let (addr, _) = serve_on_a_thread(move |listener| async move {
        let handler = move |body: Bytes| async move {
            tokio::time::sleep(delay).await;
            let digest = {
                use std::hash::{Hash, Hasher};
                let mut hasher = std::hash::DefaultHasher::new();
                body.hash(&mut hasher);
                hasher.finish()
            };
            let text = format!(
                "## Goal\n- the work so far ({digest:016x})\n## Next step\n- go on\n{}",
                "- a decision made and why it holds\n".repeat(40)
            );
            json!({"id": "s", "object": "chat.completion", "model": "m",
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": text}}]})
            .to_string()
        };
        let app = axum::Router::new().route("/v1/chat/completions", axum::routing::post(handler));
        axum::serve(listener, app).await.unwrap();
    });
    format!("http://{addr}/v1")
}

struct Run {
    times: HashMap<(usize, usize), Duration>,
    seen: HashMap<(usize, usize), Got>,
    metrics: String,
}

fn run(config: &Path, sessions: &[Vec<Value>], model: Duration, flags: &[&str]) -> Run {
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
    let times = std::thread::scope(|scope| {
        let threads: Vec<_> = sessions
            .iter()
            .enumerate()
            .map(|(session, calls)| {
                let target = &target;
                scope.spawn(move || {
                    let client = ureq::Agent::new_with_defaults();
                    let mut out = Vec::new();
                    for (i, call) in calls.iter().enumerate() {
                        let body = call.to_string();
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
    let metrics = scrape(&proxy.url("/metrics"));
    let seen = seen.lock().unwrap().clone();
    Run {
        times,
        seen,
        metrics,
    }
}

impl Run {
    /// Session `session`'s calls that compacted, by number: those whose
    /// request does not start with the whole request before it (the
    /// cache breaks; the bench's sessions never go idle long enough for
    /// the cache to expire).
    fn compacting(&self, session: usize, calls: usize) -> Vec<usize> {
        (1..calls)
            .filter(|&call| {
                let now = &self.seen[&(session, call)].messages;
                let before = &self.seen[&(session, call - 1)].messages;
                now.len() < before.len() || now[..before.len()] != before[..]
            })
            .collect()
    }

    /// Session `session` priced as the replay prices it: (the figures, the
    /// mean summary pair).
    fn priced(&self, session: usize, calls: usize, prices: Prices) -> (ReplayStats, u64) {
        let mut stats = ReplayStats {
            prices,
            ..ReplayStats::default()
        };
        let mut previous: Option<&[(u128, u32)]> = None;
        for call in 0..calls {
            let got = &self.seen[&(session, call)];
            let repeated = match previous {
                Some(p) if got.messages.len() >= p.len() && got.messages[..p.len()] == *p => {
                    p.len()
                }
                _ => 0,
            };
            let tokens = |m: &[(u128, u32)]| m.iter().map(|(_, t)| u64::from(*t)).sum::<u64>();
            stats.cached_tokens += tokens(&got.messages[..repeated]);
            stats.tokens_sent += tokens(&got.messages);
            previous = Some(&got.messages);
        }
        let compactions = self.compacting(session, calls);
        stats.compactions = compactions.len();
        let pairs: Vec<u64> = compactions
            .iter()
            .map(|&c| self.seen[&(session, c)].summary)
            .collect();
        let mean = pairs.iter().sum::<u64>() / pairs.len().max(1) as u64;
        (stats, mean)
    }
}

fn main() {
    let var = |name, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let summary = Duration::from_millis(var("CONDENSE_PREPARE_SUMMARY_MS", 3_000));
    let model = Duration::from_millis(var("CONDENSE_PREPARE_MODEL_MS", 500));
    let llm = summarizer(summary);
    let config = format!(
        "[components]\nsummarizers = [\"llm\", \"heuristic\"]\n\
         [llm]\nbase_url = \"{llm}\"\nmodel = \"m\"\nmax_retries = 0\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("condense.toml");
    std::fs::write(&file, &config).unwrap();
    let recorded: Vec<(Vec<Value>, Vec<Message>)> =
        SESSIONS.iter().map(|s| anthropic_session(s)).collect();
    let sessions: Vec<Vec<Value>> = recorded.iter().map(|(c, _)| c.clone()).collect();
    println!(
        "{} at once ({} calls), each call answered in {} ms, a summary written in {} ms; \
         the default config",
        SESSIONS.join(", "),
        sessions.iter().map(Vec::len).sum::<usize>(),
        model.as_millis(),
        summary.as_millis(),
    );

    // The proxy's knobs and prices for these requests' model.
    let settings = RunningProxy::settings(
        &config,
        "http://127.0.0.1:1",
        Arc::new(condense_sessions::MemorySessions::default()),
    );
    let chosen = settings.agents["default"]
        .models
        .for_model(Some("claude-opus-4"));
    let prices = chosen.price.prices(0.0);

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let wait = std::env::var("CONDENSE_PREPARE_WAIT_MS").ok();
    let waiting: Vec<&str> = match &wait {
        Some(ms) => vec!["--prepare-wait-ms", ms],
        None => Vec::new(),
    };
    let prepared = match &wait {
        Some(ms) => format!("prepared ahead, --prepare-wait-ms {ms}"),
        None => "the proxy's default (prepared ahead, no compaction waiting)".to_owned(),
    };
    let runs: [(&str, &[&str]); 2] = [
        (
            "summaries written when their compaction comes",
            &["--prepare-jobs", "0"],
        ),
        (&prepared, &waiting),
    ];
    // With a wait of its own, the one run: the wait's curve.
    for (name, flags) in runs.into_iter().skip(usize::from(wait.is_some())) {
        let run = run(&file, &sessions, model, flags);
        let mut compacting = Vec::new();
        let mut all = Vec::new();
        println!("{name}:");
        for (s, ((calls, history), session)) in recorded.iter().zip(SESSIONS).enumerate() {
            let keys = run.compacting(s, calls.len());
            compacting.extend(
                keys.iter()
                    .map(|&c| run.times[&(s, c)].saturating_sub(model)),
            );
            all.extend((0..calls.len()).map(|c| run.times[&(s, c)].saturating_sub(model)));
            let last = calls.last().unwrap().to_string();
            let parsed = condense_host::body::parse_body(last.as_bytes(), None).unwrap();
            let (core, _) = condense_host::body::compressed_with(&chosen.config, &parsed);
            let (stats, pair) = run.priced(s, calls.len(), prices);
            let optimal = optimum(history, &core, pair, prices, &[]).expect("a schedule fits");
            println!(
                "  {session}: {} compactions (at calls {:?}), cost {:.3}× the optimum's \
                 ({} compactions, summaries of {pair} tokens)",
                keys.len(),
                keys,
                stats.cost() / optimal.cost,
                optimal.compactions.len(),
            );
        }
        compacting.sort();
        all.sort();
        println!(
            "  compacting calls {}: added latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            compacting.len(),
            ms(percentile(&compacting, 0.5)),
            ms(percentile(&compacting, 0.99)),
            ms(compacting.last().copied().unwrap_or_default())
        );
        println!(
            "  all calls {}: added latency p50 {:.1} ms, p99 {:.1} ms",
            all.len(),
            ms(percentile(&all, 0.5)),
            ms(percentile(&all, 0.99)),
        );
        let summaries = |how: &str| {
            metric(
                &run.metrics,
                &format!("condense_proxy_compaction_summaries_total{{summary=\"{how}\"}}"),
            )
        };
        println!(
            "  summaries: used {}, waited {}, on top {}, later {}, fell back {}",
            summaries("used"),
            summaries("waited"),
            summaries("on_top"),
            summaries("later"),
            summaries("fell_back"),
        );
    }
}
