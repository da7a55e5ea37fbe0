//! Summaries prepared ahead, through the proxy and the agent runtime: a
//! recorded session sent call by call, its summaries written by an
//! OpenAI-compatible model that takes its time (the scripted server),
//! against the same calls through a host that writes each summary when its
//! compaction comes.

use condense_config::AgentSettings;
use condense_host::FileStore;
use condense_host::events::Compaction;
use condense_host::formats::Format;
use condense_host::llm::LanguageModel;
use condense_host::prepared::Prepared;
use condense_host::timing::{Clock, ManualClock};
use condense_runtime::agent::{Agent, RecordedTools, replay_recording};
use condense_runtime::journal::{self, Journal};
use condense_runtime::layers::{Condense, Layers};
use condense_runtime::model::{OpenAiLlm, ReplayModel};
use condense_scripted_server::Recorded;
use condense_scripted_server::{Reply, TestServer};
use condense_sessions::{MemorySessions, RedisSessions, SessionStore};
use condense_tests::SUMMARY_INSTRUCTION;
use condense_tests::SentRequests;
use condense_tests::proxy::session::{RECALL_CONFIG, TASK, USAGE, output};
use condense_tests::proxy::wire::{Piece, SHELL, Turn, WIRES, Wire};
use condense_tests::proxy::{
    KEY, RunningProxy, assert_as_reference, compacted, metric, post, raw, request_tokens, scrape,
    session_calls,
};
use serde_json::{Value, json};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A summarizer model taking `delay` per summary: a chat completion whose
/// text is a digest of the request it was sent, so the same request gets
/// the same summary whoever asks and when.
fn summarizer(delay: Duration) -> TestServer {
    TestServer::answering(move |request| summary_answer(request).after(delay))
}

/// The summary the model writes for `request` (see [`summarizer`]).
fn summary_text(request: &Recorded) -> String {
    let mut hasher = DefaultHasher::new();
    request.body.to_string().hash(&mut hasher);
    format!("Summary {:016x}: the work so far.", hasher.finish())
}

/// The summarizer model's answer to `request` (see [`summarizer`]).
fn summary_answer(request: &Recorded) -> Reply {
    let text = summary_text(request);
    let answer = json!({
        "id": "s", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
    });
    Reply::json(200, answer.to_string())
}

/// The config: summaries by the model at `summarizer`, then the heuristic
/// summarizer; the next compaction planned at 80% of the way.
fn config(summarizer: &str) -> String {
    format!(
        // The summary size these tests were built at: at 5% (1000) the
        // cost rule compacts cc-opus-c's first 70 calls twice, not three times.
        "token_threshold = 20000\nsummary_max_tokens = 400\nprepare_at_permille = 500\n\
         [components]\nsummarizers = [\"llm\", \"heuristic\"]\n\
         [llm]\nbase_url = \"{summarizer}/v1\"\nmodel = \"m\"\nmax_retries = 0\n"
    )
}

/// The agent's model: an empty answer after `delay` (the time a model
/// takes, in which the background job writes).
fn upstream(delay: Duration) -> TestServer {
    TestServer::answering(move |_| Reply::json(200, r#"{"content": []}"#).after(delay))
}

/// Sends `calls` through `proxy` one by one; what the upstream got, and
/// the proxy's metrics.
fn send(proxy: &RunningProxy, upstream: &TestServer, calls: &[Value]) -> (Vec<Value>, String) {
    let client = ureq::Agent::new_with_defaults();
    for call in calls {
        assert_eq!(post(&client, &proxy.url("/v1/messages"), call, &[]), 200);
    }
    let bodies = upstream.requests().into_iter().map(|r| r.body).collect();
    (bodies, scrape(&proxy.url("/metrics")))
}

fn summaries(metrics: &str, how: &str) -> f64 {
    metric(
        metrics,
        &format!("condense_proxy_compaction_summaries_total{{summary=\"{how}\"}}"),
    )
}

fn jobs(metrics: &str, result: &str) -> f64 {
    metric(
        metrics,
        &format!("condense_proxy_prepare_jobs_total{{result=\"{result}\"}}"),
    )
}

/// With summaries prepared ahead, the compactions find their summary
/// written (or its job about to finish), and the upstream gets the very
/// requests of the proxy that writes each summary when its compaction
/// comes: the same cuts, the same summaries, the same cache breaks.
#[test]
fn prepared_summaries_change_no_request_and_keep_compactions_from_writing() {
    let calls = &session_calls("cc-opus-c")[..70];
    let model = summarizer(Duration::from_millis(400));
    let config = config(&model.url(""));
    // The reference: every summary written when its compaction comes.
    let agent = upstream(Duration::ZERO);
    let synchronous = RunningProxy::in_memory(&config, &agent.url(""));
    let (reference, written) = send(&synchronous, &agent, calls);
    drop(synchronous);
    let compactions = metric(&written, "condense_proxy_compactions_total");
    let agent = upstream(Duration::from_millis(150));
    let store: Arc<dyn SessionStore> = Arc::new(MemorySessions::default());
    let proxy = RunningProxy::preparing(&config, &agent.url(""), store, Duration::from_secs(10));
    let (got, metrics) = send(&proxy, &agent, calls);
    assert_as_reference(
        &reference,
        &got,
        "the requests with summaries prepared ahead",
    );
    assert!(compactions >= 3.0, "{compactions} compactions");
    assert_eq!(
        metric(&metrics, "condense_proxy_compactions_total"),
        compactions
    );
    let (used, waited) = (summaries(&metrics, "used"), summaries(&metrics, "waited"));
    eprintln!("{compactions} compactions: {used} used, {waited} waited\n{metrics}");
    assert_eq!(summaries(&metrics, "fell_back"), 0.0, "{metrics}");
    assert_eq!(summaries(&metrics, "on_top"), 0.0, "{metrics}");
    assert_eq!(used + waited, compactions, "{metrics}");
    assert!(jobs(&metrics, "prepared") >= compactions, "{metrics}");
    assert!(compacted(&got) > 0);
}

/// Two proxies behind one Redis: the summary one of them prepared serves
/// the compaction the other makes.
#[test]
fn a_summary_prepared_by_one_proxy_serves_another_behind_the_same_redis() {
    let Some(server) = condense_tests::proxy::RedisServer::start() else {
        return;
    };
    let open = || -> Arc<dyn SessionStore> { Arc::new(RedisSessions::open(&server.url).unwrap()) };
    let calls = &session_calls("cc-opus-c")[..70];
    let model = summarizer(Duration::ZERO);
    let config = config(&model.url(""));
    let agent = upstream(Duration::ZERO);
    let wait = Duration::from_secs(10);
    let first = RunningProxy::preparing(&config, &agent.url(""), open(), wait);
    let second = RunningProxy::preparing(&config, &agent.url(""), open(), wait);
    // The first proxy takes the calls until its job is done, then the
    // second the rest.
    let client = ureq::Agent::new_with_defaults();
    let mut on_first = 0;
    for call in calls {
        assert_eq!(post(&client, &first.url("/v1/messages"), call, &[]), 200);
        on_first += 1;
        let done = || jobs(&scrape(&first.url("/metrics")), "prepared") > 0.0;
        if (0..20).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            done()
        }) {
            break;
        }
    }
    // The second, up to its first compaction.
    let asked = model.requests().len();
    let mut on_second = 0;
    for call in &calls[on_first..] {
        assert_eq!(post(&client, &second.url("/v1/messages"), call, &[]), 200);
        on_second += 1;
        let compactions = metric(
            &scrape(&second.url("/metrics")),
            "condense_proxy_compactions_total",
        );
        if compactions > 0.0 {
            break;
        }
    }
    let metrics = scrape(&second.url("/metrics"));
    eprintln!("{on_first} calls on the first proxy, {on_second} on the second");
    assert_eq!(
        metric(
            &scrape(&first.url("/metrics")),
            "condense_proxy_compactions_total"
        ),
        0.0,
        "the first proxy prepared, the second compacts"
    );
    assert_eq!(
        metric(&metrics, "condense_proxy_compactions_total"),
        1.0,
        "{metrics}"
    );
    assert_eq!(summaries(&metrics, "used"), 1.0, "{metrics}");
    // Nothing more was asked of the model: the summary came from Redis.
    assert_eq!(model.requests().len(), asked);
}

/// With the summarizer model down, each job writes what the chain writes
/// (the heuristic summary, the model failing at once), and the requests
/// are the synchronous proxy's; with the model not answering before the
/// wait is over, a compaction waits the bound, no more, and the chain's
/// last summarizer writes its summary, the model's written meanwhile.
#[test]
fn with_the_summarizer_down_or_slow_compactions_fall_back_within_the_bound() {
    let calls = &session_calls("cc-opus-c")[..50];
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let config_down = config(&down);
    let agent = upstream(Duration::ZERO);
    let synchronous = RunningProxy::in_memory(&config_down, &agent.url(""));
    let (reference, _) = send(&synchronous, &agent, calls);
    drop(synchronous);
    let agent = upstream(Duration::from_millis(50));
    let store: Arc<dyn SessionStore> = Arc::new(MemorySessions::default());
    let wait = Duration::from_secs(10);
    let proxy = RunningProxy::preparing(&config_down, &agent.url(""), store, wait);
    let (got, metrics) = send(&proxy, &agent, calls);
    assert_as_reference(&reference, &got, "the requests with the model down");
    let compactions = metric(&metrics, "condense_proxy_compactions_total");
    assert!(compactions >= 2.0, "{metrics}");
    // The jobs ran (their summaries served compactions) with the model
    // down: what the proxy sent is the requests of a chain whose model
    // fails, so each summary the jobs kept is the heuristic one.
    let served = summaries(&metrics, "used") + summaries(&metrics, "waited");
    assert!(
        served >= 1.0,
        "a job's summary served a compaction: {metrics}"
    );
    assert!(jobs(&metrics, "prepared") >= 1.0, "{metrics}");
    drop(proxy);

    // The model answers no summary until the compactions are done: every
    // job is still running when its compaction comes, and the wait for it
    // runs out at once on a clock that skips it.
    let (release, held) = std::sync::mpsc::channel::<()>();
    let slow = TestServer::answering(move |request| {
        let _ = held.recv();
        summary_answer(request)
    });
    // Only the test's release ends a job's model call.
    let config_slow = format!(
        "{}timeout_ms = 3600000\nbudget_ms = 3600000\n",
        config(&slow.url(""))
    );
    let agent = upstream(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.jsonl");
    let bound = Duration::from_millis(300);
    let store: Arc<dyn SessionStore> = Arc::new(MemorySessions::default());
    let mut settings = RunningProxy::settings(&config_slow, &agent.url(""), store.clone());
    settings.events = Some(condense_host::events::EventLog::open(&events).unwrap());
    let clock = ManualClock::skipping_waits();
    let prepared = Prepared::new(bound, Some(store))
        .without_waiting()
        .with_clock(Clock::manual(&clock));
    let proxy = RunningProxy::preparing_with(settings, &config_slow, Arc::new(prepared));
    // Bound after the proxy, so dropped before it even when the test fails:
    // the proxy waits for its jobs, and they for the model.
    let release = release;
    let (_, metrics) = send(&proxy, &agent, &calls[..40]);
    drop(release);
    drop(proxy);
    let asked = slow.requests().len();
    let events: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let waited: Vec<&Value> = events
        .iter()
        .filter(|e| e["prepared"] == "later" && e["waited_ms"].is_u64())
        .collect();
    assert!(
        !waited.is_empty(),
        "a compaction waited for its job: {events:?}\n{metrics}"
    );
    assert!(asked >= 1, "the jobs asked the model");
    for event in waited {
        assert_eq!(event["waited_ms"], 300, "it waited the bound: {event}");
        assert_eq!(event["summary_by"], "heuristic", "{event}");
        let fell = event["fell_through"].to_string();
        assert!(fell.contains("written in the background"), "{event}");
    }
}

/// A compaction whose summary the model has not written yet does not wait
/// for it: the chain's fallback writes it at once (`later`), the model's
/// summary of the same fold is written meanwhile, and the next fold's
/// summary continues the model's, not the fallback's stand-in.
#[test]
fn a_compaction_that_cannot_wait_has_the_next_continue_the_models_summary() {
    let calls = &session_calls("cc-opus-c")[..70];
    // The model answers nothing until the test opens it.
    let open = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    // Each summary request as it comes, with the summary it gets.
    let asked: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let model = {
        let (open, asked) = (open.clone(), asked.clone());
        TestServer::answering(move |request| {
            let entry = (request.body.to_string(), summary_text(request));
            asked.lock().unwrap().push(entry);
            let (lock, opened) = &*open;
            let guard = lock.lock().unwrap();
            drop(opened.wait_while(guard, |open| !*open).unwrap());
            summary_answer(request)
        })
    };
    let config = format!(
        "{}timeout_ms = 3600000\nbudget_ms = 3600000\n",
        config(&model.url(""))
    );
    let agent = upstream(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let events_file = dir.path().join("events.jsonl");
    let store: Arc<dyn SessionStore> = Arc::new(MemorySessions::default());
    let mut settings = RunningProxy::settings(&config, &agent.url(""), store.clone());
    settings.events = Some(condense_host::events::EventLog::open(&events_file).unwrap());
    // The wait for a running job runs out at once.
    let clock = ManualClock::skipping_waits();
    let prepared = Prepared::new(Duration::from_millis(10), Some(store))
        .without_waiting()
        .with_clock(Clock::manual(&clock));
    let proxy = RunningProxy::preparing_with(settings, &config, Arc::new(prepared));
    let events = || -> Vec<Value> {
        std::fs::read_to_string(&events_file)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let open_model = || {
        *open.0.lock().unwrap() = true;
        open.1.notify_all();
    };
    let client = ureq::Agent::new_with_defaults();
    let mut sent = 0;
    // Up to the first compaction, the model answering nothing.
    while events().is_empty() && sent < calls.len() {
        assert_eq!(
            post(&client, &proxy.url("/v1/messages"), &calls[sent], &[]),
            200
        );
        sent += 1;
    }
    let first = events().first().cloned().unwrap_or_else(|| {
        open_model();
        panic!("no compaction in {sent} calls")
    });
    assert_eq!(first["prepared"], "later", "{first}");
    assert_eq!(first["summary_by"], "heuristic", "{first}");
    // The model answers; its summaries of the first fold are written.
    let asked_before_open = asked.lock().unwrap().len();
    open_model();
    let metrics_url = proxy.url("/metrics");
    for _ in 0..400 {
        let metrics = scrape(&metrics_url);
        if jobs(&metrics, "prepared") + jobs(&metrics, "failed") >= 1.0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    // A moment for a writer of the compaction's own, which no metric counts.
    std::thread::sleep(Duration::from_millis(300));
    for call in &calls[sent..] {
        assert_eq!(post(&client, &proxy.url("/v1/messages"), call, &[]), 200);
    }
    drop(proxy);
    let compactions = events();
    assert!(compactions.len() >= 2, "{compactions:?}");
    // What the model wrote of the first fold (asked before it opened): the
    // compaction took the stand-in, so no request the agent got carries it,
    // and only the stand-in's replacement brings it into a later summary
    // request.
    let asked = asked.lock().unwrap().clone();
    let first_fold: Vec<&String> = asked[..asked_before_open].iter().map(|(_, w)| w).collect();
    assert!(!first_fold.is_empty(), "the first fold's summary was asked");
    let to_agent: Vec<String> = agent
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    for text in &first_fold {
        assert!(
            !to_agent.iter().any(|b| b.contains(text.as_str())),
            "{text}"
        );
    }
    let continued = asked[asked_before_open..]
        .iter()
        .any(|(body, _)| first_fold.iter().any(|w| body.contains(w.as_str())));
    assert!(
        continued,
        "no summary request continued the model's summary of the first fold: {compactions:?}"
    );
}

/// `condense agent`'s loop (a recorded session played back), its summaries
/// by a model that takes its time, prepared ahead on a thread of their own:
/// the agent's model is sent the very requests of the same loop writing
/// each summary at its compaction, and the compactions find their summary
/// written or being written.
#[test]
fn the_agent_runtime_prepares_summaries_ahead_and_sends_the_same_requests() {
    let recording = condense_tests::session("cc-opus-c");
    let model = summarizer(Duration::from_millis(300));
    let settings = AgentSettings::parse(&config(&model.url(""))).unwrap();
    let client = |llm: &condense_config::LlmSettings| {
        Ok(Arc::new(OpenAiLlm::from_settings(llm)?) as Arc<dyn LanguageModel>)
    };
    let run = |ahead: bool| {
        let mut middleware = settings
            .middleware(&condense_embedded::COMPONENTS, &client)
            .unwrap();
        if ahead {
            let prepared = Prepared::new(Duration::from_secs(10), None);
            middleware = middleware.with_prepared(Arc::new(prepared));
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let mut condense = Condense::new(
            Arc::new(middleware),
            settings.core,
            settings.compressor_json(),
            Box::new(FileStore::new(path.with_extension("ckpt"))),
        );
        if ahead {
            condense = condense.with_summaries_prepared_ahead();
        }
        let sent = SentRequests::default();
        let mut agent = Agent::new(
            Box::new(ReplayModel::new(recording.clone())),
            Box::new(RecordedTools::from_recording(&recording)),
            Layers::new().with(condense).with(sent.clone()),
            Journal::create(&path).unwrap(),
            &Default::default(),
            Vec::new(),
        )
        .unwrap();
        replay_recording(&mut agent, &recording, |_| {}).unwrap();
        drop(agent);
        let events = journal::read(&path).unwrap().events;
        let compactions: Vec<Compaction> = condense_tests::compaction_events(&events)
            .into_iter()
            .cloned()
            .collect();
        let sent = sent.requests();
        (sent, compactions)
    };
    let (reference, written) = run(false);
    let (got, compactions) = run(true);
    assert_eq!(got.len(), reference.len());
    for (i, (a, b)) in reference.iter().zip(&got).enumerate() {
        assert!(
            a == b,
            "call {i}: the request differs with summaries prepared ahead"
        );
    }
    assert!(written.len() >= 3, "{} compactions", written.len());
    assert_eq!(compactions.len(), written.len());
    let how: Vec<&str> = compactions
        .iter()
        .map(|c| c.prepared.as_ref().map_or("-", |p| p.name()))
        .collect();
    eprintln!("{how:?}");
    let served = how
        .iter()
        .filter(|h| matches!(**h, "used" | "waited"))
        .count();
    assert!(
        served * 2 > how.len(),
        "most compactions found their summary: {how:?}"
    );
    assert!(written.iter().all(|c| c.prepared.is_none()));
}

/// The last entry of a request's list as text (a string content or its
/// text parts), if it is the LLM summarizer's instruction.
fn instruction(wire: Wire, body: &Value) -> Option<String> {
    let last = body[wire.list_key()].as_array()?.last()?;
    let text = match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => return None,
    };
    text.starts_with(SUMMARY_INSTRUCTION).then_some(text)
}

/// Whether `body` is a summary request of the LLM summarizer's own (its
/// system prompt, not the client's conversation).
fn own_summary_request(wire: Wire, body: &Value) -> bool {
    instruction(wire, body).is_none()
        && body
            .to_string()
            .contains("You maintain the handoff summary of a long conversation")
}

/// The client's key, as its request carried it.
fn key_of(request: &Recorded) -> Option<&str> {
    request
        .headers
        .iter()
        .find_map(|(name, value)| match name.as_str() {
            "x-api-key" => Some(value.as_str()),
            "authorization" => value.strip_prefix("Bearer "),
            _ => None,
        })
}

/// A scripted upstream for `wire`: each request of the agent answered with
/// a shell call, each summary request with a numbered summary (never
/// streamed: the proxy reads it whole).
fn agent_and_summarizer(wire: Wire) -> TestServer {
    let answers = Arc::new(Mutex::new(0));
    TestServer::answering(move |request| {
        let mut n = answers.lock().unwrap();
        *n += 1;
        if instruction(wire, &request.body).is_some() {
            let summary = format!("## Current task\n- summary {n} of the parser work");
            let plain = Wire::new(wire.format, false);
            return plain.reply(*n, &[Piece::text(&summary)], USAGE);
        }
        let command = json!({"command": format!("cargo test {n}")});
        let pieces = [
            Piece::text("Running the tests."),
            Piece::call(&format!("shell_{n}"), SHELL, command),
        ];
        wire.reply(*n, &pieces, USAGE)
    })
}

/// Cache-friendly in the proxy (`[llm]` without a `base_url`): a summary
/// request is the client's own request as the upstream last got it, cut at
/// the fold — its model, system prompt and tools, its messages as they
/// were sent — then the instruction, sent to the client's upstream with the
/// client's key. For each protocol, with each summary written when its
/// compaction comes and prepared ahead in the background. (Prepared ahead,
/// a compaction that found none ready took the fallback's as a stand-in,
/// and the next summary continues the model's on its own, not in the
/// conversation, which shows the stand-in: such a request is the
/// summarizer's own, still with the client's key.)
#[test]
fn the_proxys_summary_request_starts_with_the_clients_own_request() {
    let config = format!(
        "{RECALL_CONFIG}\n[components]\nsummarizers = [\"llm\", \"heuristic\"]\n\
         [llm]\nmax_retries = 0\n"
    );
    let prepared = format!("prepare_at_permille = 500\n{config}");
    for wire in WIRES {
        for preparing in [false, true] {
            let what = format!(
                "{}{}",
                wire.name(),
                if preparing { ", prepared" } else { "" }
            );
            let upstream = agent_and_summarizer(wire);
            let proxy = match preparing {
                false => RunningProxy::in_memory(&config, &upstream.url("")),
                true => RunningProxy::preparing(
                    &prepared,
                    &upstream.url(""),
                    Arc::new(MemorySessions::default()),
                    Duration::from_secs(10),
                ),
            };
            let client: ureq::Agent = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .build()
                .into();
            let mut history = vec![Turn::User(TASK.into())];
            for turn in 0..24 {
                let body = wire.request(&history);
                let mut request = client.post(&proxy.url(wire.path()));
                request = match wire.format {
                    Format::Anthropic => request
                        .header("x-api-key", KEY)
                        .header("anthropic-version", "2023-06-01"),
                    _ => request.header("authorization", &format!("Bearer {KEY}")),
                };
                let mut response = request.send(body.to_string()).unwrap();
                let text = response.body_mut().read_to_string().unwrap();
                assert_eq!(response.status().as_u16(), 200, "{what}: {text}");
                let answer = wire.read(text.as_bytes());
                let calls: Vec<String> = answer.calls().iter().map(|c| c.0.to_owned()).collect();
                history.push(Turn::Assistant(answer.pieces.clone()));
                history.push(Turn::Results(
                    calls.into_iter().map(|id| (id, output(turn))).collect(),
                ));
            }
            drop(proxy);
            let requests = upstream.requests();
            let list = wire.list_key();
            let mut asked = 0;
            for (at, summary) in requests.iter().enumerate() {
                if own_summary_request(wire, &summary.body) {
                    assert!(preparing, "{what}: a summary request of its own");
                    assert_eq!(key_of(summary), Some(KEY), "{what}: the client's key");
                    continue;
                }
                if instruction(wire, &summary.body).is_none() {
                    continue;
                }
                asked += 1;
                let ours = summary.body[list].as_array().unwrap();
                let (_, prefix) = ours.split_last().unwrap();
                assert!(!prefix.is_empty(), "{what}: {ours:?}");
                // The request of the agent it was made from: the latest the
                // upstream got before it that it agrees with entry for entry
                // (a job prepared ahead runs while the client goes on), to
                // its end, or to the fold when the fold took in the client's
                // new turn (its entries, at most 3 in Responses).
                let agrees = |r: &&Recorded| {
                    let theirs = r.body[list].as_array().unwrap();
                    let n = theirs.len().min(prefix.len());
                    theirs[..n] == prefix[..n] && prefix.len() <= theirs.len() + 3
                };
                let theirs = requests[..at]
                    .iter()
                    .rev()
                    .filter(|r| instruction(wire, &r.body).is_none())
                    .filter(|r| !own_summary_request(wire, &r.body))
                    .find(agrees)
                    .unwrap_or_else(|| panic!("{what}: no request of the agent starts so"));
                assert_eq!(summary.path, theirs.path, "{what}");
                assert_eq!(key_of(summary), Some(KEY), "{what}: the client's key");
                for key in ["model", "system", "instructions", "tools", "tool_choice"] {
                    let (ours, theirs) = (summary.body.get(key), theirs.body.get(key));
                    assert_eq!(ours, theirs, "{what}: {key}");
                }
                assert!(summary.body.get("stream").is_none(), "{what}");
            }
            assert!(asked >= 2, "{what}: {asked} summary requests");
            // The summaries the client's model wrote are the ones sent on
            // (prepared ahead, a compaction that found none ready sent the
            // fallback's, the model's coming in at the next one).
            let last = &requests.last().unwrap().body;
            let by_the_model = |body: &Value| body.to_string().contains("of the parser work");
            match preparing {
                false => assert!(by_the_model(last), "{what}: {last}"),
                true => assert!(
                    requests
                        .iter()
                        .filter(|r| instruction(wire, &r.body).is_none())
                        .filter(|r| !own_summary_request(wire, &r.body))
                        .any(|r| by_the_model(&r.body)),
                    "{what}: no request carried the model's summary"
                ),
            }
        }
    }
}

/// What the cache-friendly summary request saves, on a recorded Claude Code
/// session through the proxy: the share of each summary request's tokens
/// that the session's last request sent the upstream first, byte for byte
/// (its system prompt and its list up to the first entry that differs) —
/// the prefix a provider's prompt cache can serve, where the client's
/// cache marks cover it. The recording has no cache marks and the upstream
/// no cache: this is a shared prefix, not a measured cache hit. A summary
/// request of its own (`[llm]`'s endpoint) shares none of it.
#[test]
fn most_of_a_summary_request_is_a_prefix_the_upstream_was_just_sent() {
    let wire = Wire::new(Format::Anthropic, false);
    let upstream = TestServer::answering(move |request| {
        if instruction(wire, &request.body).is_some() {
            wire.reply(1, &[Piece::text("## Current task\n- the summary")], USAGE)
        } else {
            Reply::json(200, r#"{"content": []}"#)
        }
    });
    let config = "token_threshold = 20000\n[components]\nsummarizers = [\"llm\", \"heuristic\"]\n\
                  [llm]\nmax_retries = 0\n";
    let proxy = RunningProxy::in_memory(config, &upstream.url(""));
    let (requests, metrics) = {
        let calls = &session_calls("cc-opus-c")[..120];
        send(&proxy, &upstream, calls);
        (upstream.requests(), scrape(&proxy.url("/metrics")))
    };
    let mut shares = Vec::new();
    for (at, summary) in requests.iter().enumerate() {
        if instruction(wire, &summary.body).is_none() {
            continue;
        }
        let last = requests[..at]
            .iter()
            .rev()
            .find(|r| instruction(wire, &r.body).is_none())
            .expect("a summary request follows the agent's");
        let list = |r: &Recorded| raw::elements(&r.raw, raw::member(&r.raw, "messages").unwrap());
        let (ours, theirs) = (list(summary), list(last));
        let shared = (ours.iter().zip(&theirs))
            .take_while(|(a, b)| summary.raw[(*a).clone()] == last.raw[(*b).clone()])
            .count();
        let system = |r: &Recorded| raw::member(&r.raw, "system").map(|at| r.raw[at].to_vec());
        assert_eq!(system(summary), system(last));
        let mut prefix = summary.body.clone();
        let entries = summary.body["messages"].as_array().unwrap();
        prefix["messages"] = Value::Array(entries[..shared].to_vec());
        let share = f64::from(request_tokens(&prefix)) / f64::from(request_tokens(&summary.body));
        shares.push(share);
    }
    let mean = shares.iter().sum::<f64>() / shares.len() as f64;
    eprintln!(
        "cc-opus-c, 120 calls at 20k: {} summary requests, prefix shared with the upstream's \
         last request {:.1}% on average \
         (each: {:?})",
        shares.len(),
        100.0 * mean,
        shares
            .iter()
            .map(|s| format!("{:.1}%", 100.0 * s))
            .collect::<Vec<_>>()
    );
    assert!(shares.len() >= 3, "{metrics}");
    assert!(shares.iter().all(|&s| s >= 0.8), "{shares:?}");
}
