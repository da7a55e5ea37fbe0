//! The agent runtime with condense as a middleware in its model-call loop:
//! real components through the host, recorded sessions played back.

use condense_host::FileStore;
use condense_host::replay::replay_middleware;
use condense_model::{Message, Role};
use condense_runtime::agent::{Agent, RecordedTools, replay_recording};
use condense_runtime::chain::{Chain, Condense, UsageMeter};
use condense_runtime::journal::{self, Event, Journal};
use condense_runtime::model::ReplayModel;
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
