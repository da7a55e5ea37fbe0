//! The agent runtime with condense as a middleware in its model-call loop:
//! real components through the host, recorded sessions played back.

use condense_host::events::{Cause, Compaction};
use condense_host::replay::replay_middleware;
use condense_host::{FileStore, Middleware};
use condense_model::{Message, Role, SUMMARY_MARKER};
use condense_runtime::agent::{Agent, RecordedTools, replay_recording};
use condense_runtime::chain::{
    Call, Chain, Condense, Hook, RequestMeter, SummaryPlacement, UsageMeter,
};
use condense_runtime::context::{BlockKind, ContextCompiler};
use condense_runtime::journal::{self, Event, Journal};
use condense_runtime::model::ModelResponse;
use condense_runtime::model::ReplayModel;
use condense_runtime::policy::{Confirm, Due, Policy, RateLimited};
use condense_scripted_server::{Reply, TestServer};
use condense_tests::{config_40k, embedded_middleware, session};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// condense at the replay settings (40k), its checkpoint beside the journal.
fn condense_at_40k(journal_path: &Path) -> Condense<&'static Middleware> {
    let config = config_40k();
    Condense::new(
        embedded_middleware(),
        config.core,
        config.json(),
        Box::new(FileStore::new(journal_path.with_extension("ckpt"))),
    )
}

/// An agent that plays `recording` back (its first `answered` answers
/// already journaled), `meter` first in its chain, then `condense`.
fn replaying_with(
    recording: &[Message],
    journal_path: &Path,
    answered: usize,
    meter: RequestMeter,
    condense: Condense<&'static Middleware>,
) -> Agent {
    let (journal, journaled) = if journal_path.exists() {
        Journal::resume(journal_path).unwrap()
    } else {
        (Journal::create(journal_path).unwrap(), Default::default())
    };
    let answers: Vec<Message> = recording
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .skip(answered)
        .cloned()
        .collect();
    let system = recording
        .iter()
        .filter(|m| m.role == Role::System)
        .cloned()
        .collect();
    Agent::new(
        Box::new(ReplayModel::new(answers)),
        Box::new(RecordedTools::from_recording(recording)),
        Chain::new()
            .with(meter)
            .with(condense)
            .with(UsageMeter::new()),
        journal,
        &journaled,
        system,
    )
    .unwrap()
}

/// [`replaying_with`] condense at 40k.
fn replaying(recording: &[Message], journal_path: &Path, answered: usize) -> Agent {
    let condense = condense_at_40k(journal_path);
    replaying_with(
        recording,
        journal_path,
        answered,
        RequestMeter::new(),
        condense,
    )
}

/// The compaction events of a journal.
fn compaction_events(events: &[Event]) -> Vec<&Compaction> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Compaction(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn conversation(recording: &[Message]) -> Vec<Message> {
    recording
        .iter()
        .filter(|m| m.role != Role::System)
        .cloned()
        .collect()
}

fn compactions(events: &[Event]) -> usize {
    compaction_events(events).len()
}

/// A whole recorded session through the agent loop: condense compacts the
/// requests again and again, and the journal holds exactly what happened —
/// the recording's conversation, never a compressed copy — plus one event per
/// compaction.
#[test]
fn a_replayed_session_compacts_and_its_journal_is_the_recording() {
    let recording = session("cc-opus-c");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let meter = RequestMeter::new();
    let mut agent = replaying_with(&recording, &path, 0, meter.clone(), condense_at_40k(&path));
    let calls = replay_recording(&mut agent, &recording, |_| {}).unwrap();
    let answers = recording
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count();
    assert_eq!(calls as usize, answers);
    assert_eq!(agent.history().messages(), &conversation(&recording)[..]);
    drop(agent);

    let read = journal::read(&path).unwrap();
    assert!(read.torn.is_empty());
    assert_eq!(
        read.messages().cloned().collect::<Vec<_>>(),
        conversation(&recording),
        "the journal is the recording"
    );
    // The same compactions and cache breaks as `condense replay` of the
    // session (it has no system prompt, so the requests are the same).
    let config = config_40k();
    let replayed = replay_middleware(
        embedded_middleware(),
        &config.core,
        &config.json(),
        &recording,
        |_, _| {},
    );
    let compacted = compactions(&read.events);
    assert!(compacted >= 2, "{compacted} compactions at 40k");
    assert_eq!(compacted, replayed.compactions);
    let last = read.events.iter().rev().find_map(|e| match e {
        Event::Compaction(c) => Some(c),
        _ => None,
    });
    assert_eq!(last.unwrap().cache_breaks as usize, replayed.cache_breaks);
    // And every figure of the run, measured on what the agent really sent.
    let ran = meter.stats();
    assert_eq!(ran.calls, replayed.calls);
    assert_eq!(ran.compactions, replayed.compactions);
    assert_eq!(ran.cache_breaks, replayed.cache_breaks);
    assert_eq!(ran.peak_request_tokens, replayed.peak_request_tokens);
    assert_eq!(
        ran.baseline_peak_request_tokens,
        replayed.baseline_peak_request_tokens
    );
    assert_eq!(ran.tokens_sent, replayed.tokens_sent);
    assert_eq!(ran.cached_tokens, replayed.cached_tokens);
    assert_eq!(ran.baseline_tokens_sent, replayed.baseline_tokens_sent);
    assert_eq!(ran.baseline_cached_tokens, replayed.baseline_cached_tokens);
    assert_eq!(ran.cost, replayed.cost);
    assert_eq!(ran.baseline_cost, replayed.baseline_cost);
    assert_eq!(ran.per_call, replayed.per_call);
    for event in &read.events {
        if let Event::Compaction(c) = event {
            assert!(c.tokens_after < c.tokens_before, "{c:?}");
            assert!(c.tokens_after <= 40_000, "{c:?}");
            assert!(c.messages_folded > 0, "{c:?}");
            assert_eq!(c.summary_by.as_deref(), Some("embedded"), "{c:?}");
        }
    }
    assert!(
        path.with_extension("ckpt").exists(),
        "the checkpoint is stored beside it"
    );
}

/// Stopped half way and resumed, a session's journal only grows: the bytes
/// written before the stop are the start of the final file, and the whole
/// conversation is there once.
#[test]
fn a_resumed_session_appends_to_its_journal_and_never_rewrites_it() {
    let recording = session("cc-opus-c");
    let split = recording.len() / 2;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let mut first = replaying(&recording, &path, 0);
    replay_recording(&mut first, &recording[..split], |_| {}).unwrap();
    drop(first);
    let before = std::fs::read(&path).unwrap();
    let compacted_before = compactions(&journal::read(&path).unwrap().events);

    let answered = recording[..split]
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count();
    let mut resumed = replaying(&recording, &path, answered);
    assert_eq!(
        resumed.history().messages(),
        &conversation(&recording[..split])[..],
        "the resumed agent starts from the journal"
    );
    replay_recording(&mut resumed, &recording[split..], |_| {}).unwrap();
    drop(resumed);

    let after = std::fs::read(&path).unwrap();
    assert!(after.starts_with(&before), "the journal is never rewritten");
    let read = journal::read(&path).unwrap();
    assert_eq!(
        read.messages().cloned().collect::<Vec<_>>(),
        conversation(&recording)
    );
    assert!(
        compactions(&read.events) > compacted_before,
        "it compacted after the resume too"
    );
}

/// Replays cc-opus-c with `condense`, returning the run's figures and the
/// journal's compaction events.
fn run_cc_opus_c(
    condense: impl FnOnce(&Path) -> Condense<&'static Middleware>,
) -> (condense_host::replay::ReplayStats, Vec<Compaction>) {
    let recording = session("cc-opus-c");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let meter = RequestMeter::new();
    let mut agent = replaying_with(&recording, &path, 0, meter.clone(), condense(&path));
    replay_recording(&mut agent, &recording, |_| {}).unwrap();
    drop(agent);
    let events = journal::read(&path).unwrap().events;
    let compactions = compaction_events(&events).into_iter().cloned().collect();
    (meter.stats(), compactions)
}

/// What a policy was asked, and what it answered.
type Asked = Arc<Mutex<Vec<(Due, bool)>>>;

/// A policy that records what it was asked, and what `inner` answered.
fn recording_policy(mut inner: impl Policy + 'static) -> (impl Policy + 'static, Asked) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = asked.clone();
    let policy = Confirm(move |due: &Due| {
        let allowed = inner.allow(due);
        record.lock().unwrap().push((*due, allowed));
        allowed
    });
    (policy, asked)
}

/// Refused, a due compaction is asked again on the next call, and until it
/// is allowed the request goes out as it stands: over the threshold, its
/// prefix unchanged (no cache break but the compactions').
#[test]
fn a_refused_compaction_is_asked_again_next_call_and_breaks_nothing() {
    let mut refusals = 3;
    let (policy, asked) = recording_policy(Confirm(move |_: &Due| {
        if refusals == 0 {
            return true;
        }
        refusals -= 1;
        false
    }));
    let (stats, compactions) = run_cc_opus_c(|path| condense_at_40k(path).with_policy(policy));
    let asked = asked.lock().unwrap().clone();
    let (automatic, _) = run_cc_opus_c(condense_at_40k);

    let refused: Vec<&(Due, bool)> = asked.iter().filter(|(_, allowed)| !allowed).collect();
    assert_eq!(refused.len(), 3);
    assert_eq!(refused[1].0.call, refused[0].0.call + 1, "asked again");
    assert_eq!(refused[2].0.call, refused[0].0.call + 2);
    assert_eq!(asked[3].0.call, refused[0].0.call + 3);
    assert!(asked[3].1, "the fourth time it was allowed: {asked:?}");
    for (due, _) in &asked {
        assert!(
            due.request_tokens > due.threshold && due.threshold == 40_000,
            "{due:?}"
        );
    }
    // Allowed ones are the compactions; refused ones sent the request over
    // the threshold without breaking the cache.
    let allowed: Vec<u64> = asked
        .iter()
        .filter(|(_, a)| *a)
        .map(|(d, _)| d.call)
        .collect();
    let compacted: Vec<u64> = compactions.iter().map(|c| c.call).collect();
    assert_eq!(allowed, compacted);
    assert!(compactions.iter().all(|c| c.trigger == Cause::Threshold));
    assert_eq!(stats.cache_breaks, stats.compactions);
    assert!(stats.peak_request_tokens > automatic.peak_request_tokens);
    for call in &refused {
        let sent = stats.per_call[call.0.call as usize - 1].sent;
        assert!(sent > 40_000, "call {} sent {sent} tokens", call.0.call);
    }
}

/// Rate-limited to one compaction per 1000 calls, the session compacts once
/// at the threshold, and after that only when the request would no longer
/// fit the context window.
#[test]
fn a_rate_limited_session_compacts_again_only_when_the_window_would_overflow() {
    let window = 60_000;
    let (policy, asked) = recording_policy(RateLimited::new(1_000, Duration::ZERO, window));
    let (stats, compactions) = run_cc_opus_c(|path| condense_at_40k(path).with_policy(policy));
    let asked = asked.lock().unwrap().clone();
    let (automatic, _) = run_cc_opus_c(condense_at_40k);

    assert!(asked[0].1, "the first due compaction proceeds");
    let later: Vec<&(Due, bool)> = asked[1..].iter().filter(|(_, a)| *a).collect();
    assert!(!later.is_empty(), "the window overflowed: {asked:?}");
    for (due, _) in &later {
        assert!(due.request_tokens > window, "{due:?}");
    }
    assert!(asked.iter().any(|(_, a)| !a), "some were refused");
    assert_eq!(compactions.len(), 1 + later.len());
    assert!(compactions.len() < automatic.compactions);
    assert!(stats.peak_request_tokens > 40_000 && stats.peak_request_tokens <= window + 5_000);
}

/// Every request sent, as the model got it.
#[derive(Clone, Default)]
struct Requests(Arc<Mutex<Vec<Vec<Message>>>>);

impl Hook for Requests {
    fn after_model_call(&mut self, call: &Call<'_>, _: &ModelResponse) {
        self.0.lock().unwrap().push(call.request.messages.clone());
    }
}

/// With `summary_placement = "block"` the summary is the system prompt's
/// compressed block: no summary pair in the conversation, the prompt
/// compiled from its blocks and changed only by a compaction, so the cache
/// breaks are the compactions, as with the pair.
#[test]
fn a_summary_placed_in_the_context_block_keeps_the_prefix_stable() {
    let recording = session("cc-opus-c");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let requests = Requests::default();
    let meter = RequestMeter::new();
    let condense = condense_at_40k(&path).with_placement(SummaryPlacement::Block);
    let mut context = ContextCompiler::default();
    context.set(BlockKind::Persona, "You are replaying a recorded session.");
    context.set(BlockKind::Rules, "- Never push to main.");
    let (journal, journaled) = (Journal::create(&path).unwrap(), Default::default());
    let answers = recording
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .cloned()
        .collect();
    let mut agent = Agent::new(
        Box::new(ReplayModel::new(answers)),
        Box::new(RecordedTools::from_recording(&recording)),
        Chain::new()
            .with(meter.clone())
            .with(condense)
            .with(requests.clone()),
        journal,
        &journaled,
        Vec::new(),
    )
    .unwrap()
    .with_context(context);
    replay_recording(&mut agent, &recording, |_| {}).unwrap();
    drop(agent);

    let requests = requests.0.lock().unwrap();
    let stats = meter.stats();
    assert!(stats.compactions >= 2, "{}", stats.compactions);
    assert_eq!(stats.cache_breaks, stats.compactions);
    let mut prompts: Vec<String> = Vec::new();
    for request in requests.iter() {
        let system = &request[0];
        assert_eq!(system.role, Role::System);
        assert!(request[1..].iter().all(|m| !m.is_condense_summary()));
        let text = system.joined_text();
        assert!(
            text.starts_with("## Persona\nYou are replaying"),
            "{text:.200}"
        );
        assert!(text.contains("Never push to main."));
        if prompts.last() != Some(&text) {
            prompts.push(text);
        }
    }
    assert_eq!(
        prompts.len(),
        stats.compactions + 1,
        "changed only by a compaction"
    );
    assert!(!prompts[0].contains(SUMMARY_MARKER));
    assert!(prompts[1..].iter().all(|p| p.contains(SUMMARY_MARKER)));
    let (message_placed, _) = run_cc_opus_c(condense_at_40k);
    assert_eq!(stats.compactions, message_placed.compactions);
}

/// An OpenAI Chat Completions answer asking for one tool call.
fn tool_call_reply(id: &str, name: &str, arguments: serde_json::Value) -> Reply {
    let body = serde_json::json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant",
            "content": null,
            "tool_calls": [{"id": id, "type": "function", "function": {
                "name": name,
                "arguments": arguments.to_string(),
            }}],
        }}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 20,
                  "prompt_tokens_details": {"cached_tokens": 800}},
    });
    Reply::json(200, body.to_string())
}

/// `condense agent` against an OpenAI-compatible server this test starts on
/// 127.0.0.1, answering from a script: it reads a long file again and again
/// (so that the requests outgrow a low threshold and condense compacts
/// them), tries a file outside its working directory (refused), edits the
/// file, and answers. The edit is made, the journal holds the whole session
/// and replays, and the server saw compacted requests.
#[test]
fn condense_agent_completes_a_task_against_an_openai_compatible_server() {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("work");
    std::fs::create_dir(&workdir).unwrap();
    let notes: String = (0..120)
        .map(|i| {
            format!("note {i}: the deploy script restarts the queue worker after migrations\n")
        })
        .collect();
    std::fs::write(workdir.join("notes.txt"), &notes).unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "do not read\n").unwrap();
    let config = dir.path().join("condense.toml");
    std::fs::write(&config, "token_threshold = 4000\n").unwrap();
    let session = dir.path().join("session.jsonl");
    let events = dir.path().join("events.jsonl");

    let read =
        |id: &str| tool_call_reply(id, "read_file", serde_json::json!({"path": "notes.txt"}));
    let mut script: Vec<Reply> = (0..6).map(|i| read(&format!("r{i}"))).collect();
    script.push(tool_call_reply(
        "s1",
        "read_file",
        serde_json::json!({"path": secret.display().to_string()}),
    ));
    script.push(tool_call_reply(
        "e1",
        "edit_file",
        serde_json::json!({"path": "notes.txt", "old_text": "note 7:", "new_text": "NOTE SEVEN:"}),
    ));
    script.push(Reply::json(
        200,
        serde_json::json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "Renamed note 7."}}]})
        .to_string(),
    ));
    let server = TestServer::start(script);

    let args = [
        "condense".to_owned(),
        "agent".into(),
        "--config".into(),
        config.display().to_string(),
        "--model-url".into(),
        server.url("/v1"),
        "--model".into(),
        "scripted".into(),
        "--workdir".into(),
        workdir.display().to_string(),
        "--session".into(),
        session.display().to_string(),
        "--events".into(),
        events.display().to_string(),
        "rename note 7 in notes.txt".into(),
    ];
    let mut out = Vec::new();
    condense_cli::cli::run(args.map(Into::into), &mut std::io::empty(), &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();

    assert!(out.contains("Renamed note 7."), "{out}");
    assert!(out.contains("→ edit_file("), "{out}");
    assert!(out.contains("outside the working directory"), "{out}");
    assert!(out.contains("9 model calls"), "{out}");
    // Printed as they happened: the calls and compactions before the answer.
    let answer_at = out.find("Renamed note 7.").unwrap();
    assert!(out.find("→ read_file(").unwrap() < answer_at);
    assert!(
        out.find("⋯ condense compacted the request")
            .is_some_and(|at| at < answer_at),
        "{out}"
    );
    let edited = std::fs::read_to_string(workdir.join("notes.txt")).unwrap();
    assert!(edited.contains("NOTE SEVEN:") && !edited.contains("note 7:"));

    // The journal: the whole session, compactions recorded, the refusal an
    // error result.
    let journaled = journal::read(&session).unwrap();
    assert!(journaled.torn.is_empty());
    let messages: Vec<Message> = journaled.messages().cloned().collect();
    assert_eq!(
        messages.len(),
        1 + 9 * 2 - 1,
        "task, 8 calls and results, answer"
    );
    let refused = messages
        .iter()
        .flat_map(|m| m.tool_results())
        .find(|r| r.call_id == "s1")
        .unwrap();
    assert!(refused.is_error && refused.content.contains("outside the working directory"));
    assert!(
        compactions(&journaled.events) >= 1,
        "{:?}",
        journaled.events
    );
    // --events: the same compaction events, one JSON line each, every field
    // there (trigger, tokens, folded, passes, summarizer, breaks, time).
    let logged: Vec<Compaction> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let journaled_events: Vec<Compaction> = compaction_events(&journaled.events)
        .into_iter()
        .cloned()
        .collect();
    assert_eq!(logged, journaled_events);
    let first = std::fs::read_to_string(&events).unwrap();
    for field in [
        "\"trigger\":\"threshold\"",
        "\"tokens_before\"",
        "\"tokens_after\"",
        "\"messages_folded\"",
        "\"passes\"",
        "\"summary_by\"",
        "\"cache_breaks\"",
        "\"elapsed_us\"",
    ] {
        assert!(
            first.lines().next().unwrap().contains(field),
            "{field}: {first}"
        );
    }

    // What the server was sent: later requests carry condense's summary
    // instead of the early reads, and none is larger than the threshold
    // allows by much.
    let requests = server.requests();
    assert_eq!(requests.len(), 9);
    // The system prompt is compiled from its blocks: the persona, the
    // working directory as it was at the start, the task.
    let system = &requests[0].body["messages"][0];
    assert_eq!(system["role"], "system");
    let prompt = system["content"].as_str().unwrap();
    for part in [
        "## Persona\n",
        "## Workspace\n",
        "notes.txt",
        "## Task\nrename note 7",
    ] {
        assert!(prompt.contains(part), "{part}: {prompt}");
    }
    let last = &requests[8].body;
    assert!(
        last["messages"].to_string().contains(SUMMARY_MARKER),
        "{last}"
    );
    assert!(
        last["tools"].as_array().is_some_and(|t| t.len() == 5),
        "{last}"
    );
    assert!(
        last["messages"].as_array().unwrap().len() < messages.len(),
        "the request is compacted, the journal is not"
    );

    // The journal replays: `condense replay` reads it as a session.
    let mut replayed = Vec::new();
    let args = [
        "condense".to_owned(),
        "replay".into(),
        "--config".into(),
        config.display().to_string(),
        session.display().to_string(),
    ];
    condense_cli::cli::run(args.map(Into::into), &mut std::io::empty(), &mut replayed).unwrap();
    let replayed = String::from_utf8(replayed).unwrap();
    assert!(replayed.contains("session.jsonl"), "{replayed}");
}

/// `condense agent` with the LLM summarizer asking the agent's own model
/// (`[llm]` is the agent's server and model): each summarizer request is
/// the agent's last request — its system prompt, its tools, the messages
/// the compaction folds, exactly as the agent's client sent them — with the
/// instruction appended, so a provider's prompt cache serves all but the
/// instruction. The summary then reaches the agent's next request.
#[test]
fn the_llm_summarizer_asks_in_the_agents_own_request() {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("work");
    std::fs::create_dir(&workdir).unwrap();
    let notes: String = (0..120)
        .map(|i| format!("note {i}: the queue worker restarts after each migration\n"))
        .collect();
    std::fs::write(workdir.join("notes.txt"), &notes).unwrap();
    let session = dir.path().join("session.jsonl");

    let read =
        |id: &str| tool_call_reply(id, "read_file", serde_json::json!({"path": "notes.txt"}));
    let mut script: std::collections::VecDeque<Reply> =
        (0..8).map(|i| read(&format!("r{i}"))).collect();
    script.push_back(condense_tests::chat_answer("Read it eight times."));
    let summaries = Arc::new(Mutex::new(0));
    let counter = summaries.clone();
    let server = TestServer::answering(move |request| {
        if condense_tests::asks_for_a_summary(&request.body) {
            let mut n = counter.lock().unwrap();
            *n += 1;
            condense_tests::chat_answer(&format!("## Current task\n- llm summary {n}"))
        } else {
            script.pop_front().expect("the script has an answer left")
        }
    });
    let config = dir.path().join("condense.toml");
    std::fs::write(
        &config,
        format!(
            "token_threshold = 4000\n\
             [components]\nsummarizers = [\"llm\", \"heuristic\"]\n\
             [llm]\nbase_url = \"{}\"\nmodel = \"scripted\"\n",
            server.url("/v1")
        ),
    )
    .unwrap();

    let args = [
        "condense".to_owned(),
        "agent".into(),
        "--config".into(),
        config.display().to_string(),
        "--model-url".into(),
        server.url("/v1"),
        "--model".into(),
        "scripted".into(),
        "--workdir".into(),
        workdir.display().to_string(),
        "--session".into(),
        session.display().to_string(),
        "read notes.txt until you know it".into(),
    ];
    let mut out = Vec::new();
    condense_cli::cli::run(args.map(Into::into), &mut std::io::empty(), &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("Read it eight times."), "{out}");

    let requests = server.requests();
    let asked: Vec<usize> = (0..requests.len())
        .filter(|&i| condense_tests::asks_for_a_summary(&requests[i].body))
        .collect();
    assert!(!asked.is_empty(), "the summarizer asked the model");
    assert_eq!(*summaries.lock().unwrap(), asked.len());
    for &at in &asked {
        // The agent's request before it, and the summarizer's.
        let (agents, ours) = (&requests[at - 1].body, &requests[at].body);
        assert_eq!(ours["model"], agents["model"]);
        assert_eq!(ours["tools"], agents["tools"], "the agent's tools");
        let theirs = agents["messages"].as_array().unwrap();
        let ours = ours["messages"].as_array().unwrap();
        let prefix = &ours[..ours.len() - 1];
        assert_eq!(prefix[0]["role"], "system");
        // What it folds, up to all of the agent's last request.
        assert!(prefix.len() > 2 && prefix.len() <= theirs.len());
        assert!(
            prefix == &theirs[..prefix.len()],
            "request {at}: the summarizer's prefix is not the agent's"
        );
    }
    // A later compaction updates the first summary: its pair, as the agent
    // sent it, is in the prefix.
    assert!(asked.len() >= 2, "{asked:?}");
    let second = requests[asked[1]].body["messages"].to_string();
    assert!(second.contains("llm summary 1"));
    // The summary the model wrote is what the agent saw next.
    let next = requests[asked[0] + 1].body["messages"].to_string();
    assert!(next.contains("llm summary 1"), "{next:.400}");
    let journaled = journal::read(&session).unwrap();
    let events = compaction_events(&journaled.events);
    assert!(!events.is_empty());
    assert!(
        events
            .iter()
            .all(|e| e.summary_by.as_deref() == Some("llm")),
        "{events:?}"
    );
}
