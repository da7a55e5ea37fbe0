//! The agent runtime with condense as a middleware in its model-call loop:
//! real components through the host, recorded sessions played back.

use condense_host::FileStore;
use condense_host::replay::replay_middleware;
use condense_model::{Message, Role, SUMMARY_MARKER};
use condense_runtime::agent::{Agent, RecordedTools, replay_recording};
use condense_runtime::chain::{Chain, Condense, UsageMeter};
use condense_runtime::journal::{self, Event, Journal};
use condense_runtime::model::ReplayModel;
use condense_scripted_server::{Reply, TestServer};
use condense_tests::{config_40k, embedded_middleware, session};
use std::path::Path;

/// An agent that plays `recording` back, condense in its chain at the replay
/// settings (40k), its checkpoint beside the journal.
fn replaying(recording: &[Message], journal_path: &Path, answered: usize) -> Agent {
    let (journal, journaled) = if journal_path.exists() {
        Journal::resume(journal_path).unwrap()
    } else {
        (Journal::create(journal_path).unwrap(), Default::default())
    };
    let config = config_40k();
    let condense = Condense::new(
        embedded_middleware(),
        config.core,
        config.json(),
        Box::new(FileStore::new(journal_path.with_extension("ckpt"))),
    );
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
        Chain::new().with(condense).with(UsageMeter::new()),
        journal,
        &journaled,
        system,
    )
    .unwrap()
}

fn conversation(recording: &[Message]) -> Vec<Message> {
    recording
        .iter()
        .filter(|m| m.role != Role::System)
        .cloned()
        .collect()
}

fn compactions(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::Compaction(_)))
        .count()
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
    let mut agent = replaying(&recording, &path, 0);
    let calls = replay_recording(&mut agent, &recording).unwrap();
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
    for event in &read.events {
        if let Event::Compaction(c) = event {
            assert!(c.tokens_after < c.tokens_before, "{c:?}");
            assert!(c.tokens_after <= 40_000, "{c:?}");
            assert!(c.messages_folded > 0, "{c:?}");
            assert_eq!(
                c.summary_by.as_deref(),
                Some("embedded summarizer"),
                "{c:?}"
            );
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
    replay_recording(&mut first, &recording[..split]).unwrap();
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
    replay_recording(&mut resumed, &recording[split..]).unwrap();
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
    condense::cli::run(args.map(Into::into), &mut std::io::empty(), &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();

    assert!(out.contains("Renamed note 7."), "{out}");
    assert!(out.contains("→ edit_file("), "{out}");
    assert!(out.contains("outside the working directory"), "{out}");
    assert!(out.contains("9 model calls"), "{out}");
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

    // What the server was sent: later requests carry condense's summary
    // instead of the early reads, and none is larger than the threshold
    // allows by much.
    let requests = server.requests();
    assert_eq!(requests.len(), 9);
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
    condense::cli::run(args.map(Into::into), &mut std::io::empty(), &mut replayed).unwrap();
    let replayed = String::from_utf8(replayed).unwrap();
    assert!(replayed.contains("session.jsonl"), "{replayed}");
}
