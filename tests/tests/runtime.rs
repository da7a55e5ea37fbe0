//! The agent runtime with condense as a middleware in its model-call loop:
//! real components through the host, recorded sessions played back.

use condense_host::events::{Cause, Compaction};
use condense_host::{FileStore, Middleware};
use condense_model::{Message, Role, SUMMARY_MARKER};
use condense_replay::replay_middleware;
use condense_runtime::agent::{Agent, RecordedTools, replay_recording};
use condense_runtime::context::{BlockKind, ContextCompiler};
use condense_runtime::journal::{self, Event, Journal};
use condense_runtime::layers::{Condense, Layers, RequestMeter, SummaryPlacement, UsageMeter};
use condense_runtime::model::ModelResponse;
use condense_runtime::model::ReplayModel;
use condense_runtime::policy::{Confirm, Due, Policy, RateLimited};

use condense_tests::{
    SentRequests, TestConfig, compaction_events, config_40k, embedded_middleware, session,
};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// condense at the replay settings (40k), its checkpoint beside the journal.
fn condense_at_40k(journal_path: &Path) -> Condense<&'static Middleware> {
    condense_with(config_40k(), journal_path)
}

/// condense at 40k compacting only at the threshold, as `condense agent`
/// runs it under a policy that must allow each compaction.
fn condense_at_threshold(journal_path: &Path) -> Condense<&'static Middleware> {
    condense_with(config_40k().at_threshold(), journal_path)
}

fn condense_with(config: TestConfig, journal_path: &Path) -> Condense<&'static Middleware> {
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
        Layers::new()
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
    assert_eq!(ran.cost(), replayed.cost());
    assert_eq!(ran.baseline_cost(), replayed.baseline_cost());
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
) -> (condense_replay::ReplayStats, Vec<Compaction>) {
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

/// A runtime that finds its prompt cache expired before every call (a TTL
/// of zero) tells the compressor so, and the `cost` rule then compacts at
/// half its warm size: more compactions than warm, each reported as made
/// on a cold cache.
#[test]
fn a_cold_cache_is_told_to_the_compressor() {
    let (warm, warm_compactions) = run_cc_opus_c(condense_at_40k);
    // Warm, the cost rule compacts before the threshold, in the call that
    // asks whether one is due.
    assert!(
        warm_compactions.iter().any(|c| c.trigger == Cause::Cost),
        "{warm_compactions:?}"
    );
    let told = config_40k().settings.with_cache_cold().to_json();
    let (cold, compactions) = run_cc_opus_c(|path| {
        condense_at_40k(path).with_cold_settings(Duration::ZERO, told.clone())
    });
    assert!(
        cold.compactions > warm.compactions,
        "{} cold vs {} warm",
        cold.compactions,
        warm.compactions
    );
    assert!(
        compactions.iter().all(|c| c.trigger == Cause::Cold),
        "{compactions:?}"
    );
    assert_eq!(cold.failed_open, 0);
}

/// A session resumed an hour after its last model call finds its prompt
/// cache expired: the journal recorded when each answer came, and the
/// first call after the resume tells the compressor, which makes the
/// compaction due a few calls later right then, as `cold`.
#[test]
fn a_session_resumed_after_the_cache_expired_compacts_then() {
    let recording = session("cc-opus-c");
    let ttl = Duration::from_secs(300);
    let told = config_40k().settings.with_cache_cold().to_json();
    let (_, warm) =
        run_cc_opus_c(|path| condense_at_40k(path).with_cold_settings(ttl, told.clone()));
    let first = warm.first().expect("the warm session compacts");
    assert_eq!(first.trigger, Cause::Cost, "{first:?}");
    // Stopped two calls before it.
    let answered = first.call as usize - 3;
    let split = recording
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::Assistant)
        .nth(answered)
        .map(|(i, _)| i)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let mut before = replaying(&recording, &path, 0);
    replay_recording(&mut before, &recording[..split], |_| {}).unwrap();
    drop(before);
    let read = journal::read(&path).unwrap();
    assert_eq!(compactions(&read.events), 0);
    let last = read
        .last_model_call_ms()
        .expect("the journal records when answers came");
    assert!(
        last.abs_diff(condense_host::timing::now_ms()) < 600_000,
        "{last}"
    );
    // The stop lasted an hour: the journal's times moved back by one.
    let hour = 3_600_000;
    let text = std::fs::read_to_string(&path).unwrap();
    let moved: String = text
        .lines()
        .map(|line| {
            let mut event: serde_json::Value = serde_json::from_str(line).unwrap();
            if let Some(at) = event.get_mut("at_ms") {
                *at = (at.as_u64().unwrap() - hour).into();
            }
            format!("{event}\n")
        })
        .collect();
    std::fs::write(&path, moved).unwrap();
    let resumed_at = journal::read(&path).unwrap().last_model_call_ms().unwrap();
    assert_eq!(resumed_at, last - hour);

    let condense = condense_at_40k(&path)
        .with_cold_settings(ttl, told)
        .with_last_call(std::time::UNIX_EPOCH + Duration::from_millis(resumed_at));
    let meter = RequestMeter::new();
    let mut resumed = replaying_with(&recording, &path, answered, meter, condense);
    replay_recording(&mut resumed, &recording[split..], |_| {}).unwrap();
    drop(resumed);
    let events = journal::read(&path).unwrap().events;
    let cold = compaction_events(&events)[0].clone();
    assert_eq!(cold.trigger, Cause::Cold, "{cold:?}");
    // Calls are numbered from the resume on.
    assert_eq!(cold.call, 1, "the first call after the resume");
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
    let (stats, compactions) =
        run_cc_opus_c(|path| condense_at_threshold(path).with_policy(policy));
    let asked = asked.lock().unwrap().clone();
    let (automatic, _) = run_cc_opus_c(condense_at_threshold);

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
    let (stats, compactions) =
        run_cc_opus_c(|path| condense_at_threshold(path).with_policy(policy));
    let asked = asked.lock().unwrap().clone();
    let (automatic, _) = run_cc_opus_c(condense_at_threshold);

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

/// With `summary_placement = "block"` the summary is the system prompt's
/// compressed block: no summary pair in the conversation, the prompt
/// compiled from its blocks and changed only by a compaction, so the cache
/// breaks are the compactions, as with the pair.
#[test]
fn a_summary_placed_in_the_context_block_keeps_the_prefix_stable() {
    let recording = session("cc-opus-c");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let requests = SentRequests::default();
    let meter = RequestMeter::new();
    let condense = condense_at_40k(&path).with_placement(SummaryPlacement::Block);
    let mut context = ContextCompiler::default();
    context.set(BlockKind::Persona, "You are replaying a recorded session.");
    context.set(BlockKind::Rules, "- Never push to main.");
    let (journal, journaled) = (Journal::create(&path).unwrap(), Default::default());
    let mut agent = Agent::new(
        Box::new(ReplayModel::new(recording.clone())),
        Box::new(RecordedTools::from_recording(&recording)),
        Layers::new()
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

    let requests = requests.requests();
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

/// A model that answers with `answers` in order and records the names of
/// the tools each request offered.
struct Scripted {
    answers: std::collections::VecDeque<Message>,
    offered: Arc<Mutex<Vec<Vec<String>>>>,
}

impl condense_runtime::model::Model for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn complete(
        &mut self,
        request: &condense_runtime::model::ModelRequest,
    ) -> Result<ModelResponse, condense_runtime::model::ModelError> {
        let names = request.tools.iter().map(|t| t.name.clone()).collect();
        self.offered.lock().unwrap().push(names);
        Ok(ModelResponse {
            message: self.answers.pop_front().expect("a scripted answer"),
            usage: None,
        })
    }
}

/// `condense_recall` in the agent runtime: the model is offered it, and a
/// call with a fold's handle (narrowed by a query) or a result's handle
/// gets the original text back from the session's own history, journaled
/// like any other result; a handle of another conversation is a tool error.
#[test]
fn the_model_recalls_what_a_fold_took_out_from_the_journal() {
    use condense_model::recall::{fold_handle, result_handle};
    use condense_model::{Part, ToolCall};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let mut journal = Journal::create(&path).unwrap();
    let read = ToolCall {
        id: "c1".into(),
        name: "read_file".into(),
        arguments: r#"{"path": "config/prod.toml"}"#.into(),
    };
    let file = "[db]\nhost = \"pg-eu-central-2.internal\"\nport = 6432\npool = 48\n";
    let history = vec![
        Message::text(Role::User, "Move the service to the new database."),
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall(read.clone())],
        },
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(condense_model::ToolResult {
                call_id: "c1".into(),
                content: file.into(),
                is_error: false,
            })],
        },
        Message::text(Role::Assistant, "Read it."),
    ];
    for message in &history {
        let event = match message.role {
            Role::User => Event::User {
                message: message.clone(),
            },
            Role::Assistant => Event::ModelResponse {
                message: message.clone(),
                usage: None,
                at_ms: None,
            },
            _ => Event::ToolResult {
                message: message.clone(),
            },
        };
        journal.append(&event).unwrap();
    }
    drop(journal);
    let (journal, journaled) = Journal::resume(&path).unwrap();
    let call = |id: &str, arguments: String| Message {
        role: Role::Assistant,
        parts: vec![Part::ToolCall(ToolCall {
            id: id.into(),
            name: "condense_recall".into(),
            arguments,
        })],
    };
    let fold = fold_handle(&history[..3]);
    let mut other = history.clone();
    other[0] = Message::text(Role::User, "Another session.");
    let foreign = fold_handle(&other[..3]);
    let answers = [
        call("r1", format!(r#"{{"handle": "{fold}", "query": "port"}}"#)),
        call(
            "r2",
            format!(r#"{{"handle": "{}"}}"#, result_handle(&history[2])),
        ),
        call("r3", format!(r#"{{"handle": "{foreign}"}}"#)),
        Message::text(Role::Assistant, "The pool is 48 on port 6432."),
    ];
    let offered = Arc::new(Mutex::new(Vec::new()));
    let model = Scripted {
        answers: answers.into_iter().collect(),
        offered: offered.clone(),
    };
    let mut agent = Agent::new(
        Box::new(model),
        Box::new(condense_runtime::tools::ToolRegistry::default()),
        Layers::new(),
        journal,
        &journaled,
        Vec::new(),
    )
    .unwrap()
    .with_recall(condense_runtime::tools::recall::DEFAULT_BUDGET_TOKENS);
    agent
        .run_turn("What port does the new database use?", 10)
        .unwrap();
    assert!(
        offered
            .lock()
            .unwrap()
            .iter()
            .all(|tools| tools.iter().any(|t| t == "condense_recall")),
        "every request offers the tool"
    );
    drop(agent);
    let results: Vec<condense_model::ToolResult> = journal::read(&path)
        .unwrap()
        .messages()
        .flat_map(|m| m.tool_results().cloned().collect::<Vec<_>>())
        .filter(|r| r.call_id.starts_with('r'))
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    let (narrowed, whole, refused) = (&results[0], &results[1], &results[2]);
    assert!(
        !narrowed.is_error && narrowed.content.contains("port = 6432"),
        "{narrowed:?}"
    );
    assert!(
        !narrowed.content.contains("pool = 48"),
        "the query narrows: {narrowed:?}"
    );
    assert!(
        !whole.is_error && whole.content.contains(file.trim_end()),
        "{whole:?}"
    );
    assert!(refused.is_error, "{refused:?}");
    assert!(
        refused.content.contains("no folded messages"),
        "{refused:?}"
    );
    assert!(!refused.content.contains("Another session"), "{refused:?}");
}
