//! The host end to end: real components through the sandbox, the runtime and
//! the fail-open middleware.
//!
//! Limit tests come in pairs: the hostile compressor passes messages through
//! under the same limits that stop its misbehaviour.

use condense_embedded as embedded;
use condense_host::{
    Call, ComponentRole, ComponentSource, Compressed, FailureKind, GuestFailure, Limits, LoadError,
    Middleware, Runtime, SessionCheckpoint, Status, Transcript,
};
use condense_model::{
    Checkpoint, CoreConfig, Item, Message, Part, Role, SummaryRequest, ToolCall, ToolResult,
    Trigger,
};
use condense_replay::{Step, replay};
use condense_tests::{
    TestConfig, config_40k, corpus_dir, custom_summarizer_middleware, embedded_middleware, guests,
    hostile_limits, hostile_middleware, session, session_names, summary_of, text_of,
};
use std::sync::OnceLock;

/// A small history whose last user message is `command`, the word the
/// hostile guests act on.
fn history(command: &str) -> Vec<Message> {
    vec![
        Message::text(Role::System, "You are a coding agent."),
        Message::text(Role::User, "Fix the failing test."),
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall(ToolCall {
                id: "call_1".into(),
                name: "Bash".into(),
                arguments: r#"{"command":"cargo test"}"#.into(),
            })],
        },
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: "call_1".into(),
                content: "1 failed".into(),
                is_error: true,
            })],
        },
        Message::text(Role::Assistant, "One test fails."),
        Message::text(Role::User, command),
    ]
}

/// A checkpoint from an earlier call, in a test guest's format (version 0,
/// its state a text), whose prefix hash fits no history: the host sends the
/// whole history with it, and a failed call must hand it back as it was.
fn previous_checkpoint() -> SessionCheckpoint {
    SessionCheckpoint {
        summary: None,
        checkpoint: Checkpoint {
            version: 0,
            boundary: 2,
            state: b"what came before".to_vec(),
        },
        prefix_hash: "earlier".into(),
    }
}

/// The request is `history` unchanged: every message kept, by index, in order.
fn assert_unchanged(at: &str, sent: &Compressed, history: &[Message]) {
    let all: Vec<Item> = (0..history.len() as u32).map(Item::Kept).collect();
    assert_eq!(sent.items, all, "{at}: every message kept, in order");
    assert_eq!(
        sent.messages(history),
        history,
        "{at}: the original messages go on"
    );
}

/// Checks that `sent` failed open: the original messages, the checkpoint
/// given kept, a report naming the component and the kind of failure, and a
/// reason that begins with the component and says each of `says`.
fn assert_failed_open(
    at: &str,
    sent: &Compressed,
    history: &[Message],
    given: Option<&SessionCheckpoint>,
    role: ComponentRole,
    kind: FailureKind,
    says: &[&str],
) {
    let report = &sent.report;
    assert_eq!(report.status(), Status::FailedOpen, "{at}: {report:?}");
    assert_unchanged(at, sent, history);
    assert_eq!(
        sent.checkpoint.as_ref(),
        given,
        "{at}: the previous checkpoint is kept"
    );
    assert_eq!(report.failure(), Some(kind), "{at}: {report:?}");
    let component = report.component().expect("the failed component is named");
    assert_eq!(component.role, role, "{at}: {report:?}");
    let reason = report.reason().expect("a reason");
    assert!(
        reason.starts_with(&component.to_string()),
        "{at}: the reason names the component: {reason}"
    );
    for part in says {
        assert!(reason.contains(part), "{at}: {reason}");
    }
}

/// Runs `command` through the hostile pair with a checkpoint and checks that
/// the call failed open (see [`assert_failed_open`]).
fn assert_fails_open(
    command: &str,
    role: ComponentRole,
    kind: FailureKind,
    says: &[&str],
) -> Compressed {
    let messages = history(command);
    let checkpoint = previous_checkpoint();
    let out =
        hostile_middleware().compress(&messages, &CoreConfig::default(), "{}", Some(&checkpoint));
    assert_failed_open(
        command,
        &out,
        &messages,
        Some(&checkpoint),
        role,
        kind,
        says,
    );
    out
}

#[test]
fn embedded_compressor_passes_every_corpus_session_validly() {
    for name in session_names() {
        let messages = session(&name);
        let out = embedded_middleware().compress(&messages, &CoreConfig::default(), "{}", None);
        assert_ne!(
            out.report.status(),
            Status::FailedOpen,
            "{name}: {:?}",
            out.report.reason()
        );
        let guest = out.report.guest().expect("the compressor's report");
        assert!(
            guest.tokens_after <= guest.tokens_before,
            "{name}: {guest:?}"
        );
    }
}

#[test]
fn custom_summarizer_loads_by_path_and_answers() {
    let runtime = custom_summarizer_middleware().runtime();
    assert_eq!(
        runtime.summarizer().to_string(),
        "summarizer `test_summarizer_custom.wasm`"
    );
    let messages = session("swe-agent-marshmallow");
    let calls = messages[..6].iter().flat_map(|m| m.tool_calls()).count();
    let request = SummaryRequest {
        previous_summary: String::new(),
        messages: messages[..6].to_vec(),
        max_tokens: 500,
        language: "en".into(),
        settings: "{}".into(),
    };
    let summary = runtime
        .summarize(&request)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("the summarizer refused: {e}"));
    assert_eq!(
        summary,
        format!("COUNTING SUMMARIZER: 6 messages, {calls} tool calls folded")
    );
}

/// Runs `command` through the hostile pair and checks that it passed through.
fn assert_passes_through(command: &str) {
    let messages = history(command);
    let out = hostile_middleware().compress(&messages, &CoreConfig::default(), "{}", None);
    assert_ne!(
        out.report.status(),
        Status::FailedOpen,
        "{command}: {:?}",
        out.report.reason()
    );
    assert_unchanged(command, &out, &messages);
}

#[test]
fn well_behaved_call_passes_under_the_hostile_limits() {
    assert_passes_through("hello");
}

#[test]
fn compressor_reaches_the_summarizer_through_its_import() {
    let out =
        hostile_middleware().compress(&history("summarize"), &CoreConfig::default(), "{}", None);
    assert_ne!(
        out.report.status(),
        Status::FailedOpen,
        "{:?}",
        out.report.reason()
    );
    assert_eq!(
        out.checkpoint.as_ref().map(text_of).as_deref(),
        Some("HOSTILE SUMMARIZER: nothing to see")
    );
}

#[test]
fn panic_fails_open_with_the_panic_message() {
    assert_fails_open(
        "trap",
        ComponentRole::Compressor,
        FailureKind::Panic,
        &[
            "compressor `test_compressor_hostile.wasm` trapped: wasm trap",
            "hostile compressor: trap requested",
        ],
    );
}

#[test]
fn endless_loop_fails_open_at_the_deadline() {
    assert_fails_open(
        "loop",
        ComponentRole::Compressor,
        FailureKind::Deadline,
        &["wasm trap: interrupt (deadline of 300ms exceeded)"],
    );
}

#[test]
fn memory_hog_fails_open_at_the_memory_cap() {
    assert_fails_open(
        "oom",
        ComponentRole::Compressor,
        FailureKind::OutOfMemory,
        &["memory limit of 32 MiB reached"],
    );
}

#[test]
fn runaway_recursion_fails_open_at_the_stack_limit() {
    assert_fails_open(
        "recurse",
        ComponentRole::Compressor,
        FailureKind::StackOverflow,
        &[],
    );
}

#[test]
fn orphaned_tool_call_fails_validation() {
    let out = assert_fails_open(
        "orphan",
        ComponentRole::Compressor,
        FailureKind::InvalidOutput,
        &["returned invalid output: pairs-intact"],
    );
    assert!(
        out.report.guest().is_some(),
        "the invalid output's report is kept for the record"
    );
}

#[test]
fn dropped_system_message_fails_validation() {
    assert_fails_open(
        "drop-system",
        ComponentRole::Compressor,
        FailureKind::InvalidOutput,
        &["returned invalid output: system-kept"],
    );
}

/// A compressor that names a recall handle the history does not give is
/// caught: the model would be told to recall something else, or nothing.
/// So is one that names handles when recall was not offered.
#[test]
fn a_forged_recall_handle_fails_validation() {
    let messages = history("forge-handle");
    let checkpoint = previous_checkpoint();
    for offered in [true, false] {
        let out = hostile_middleware().compress_offering(
            &messages,
            &CoreConfig::default(),
            "{}",
            Some(&checkpoint),
            offered,
        );
        assert_failed_open(
            "forge-handle",
            &out,
            &messages,
            Some(&checkpoint),
            ComponentRole::Compressor,
            FailureKind::InvalidOutput,
            &["returned invalid output: recall-handle"],
        );
        assert!(out.handles.is_empty());
    }
}

#[test]
fn summarizer_panic_is_blamed_on_the_summarizer() {
    let out = assert_fails_open(
        "summarize trap",
        ComponentRole::Summarizer,
        FailureKind::Panic,
        &["hostile summarizer: trap requested"],
    );
    let reason = out.report.reason().unwrap();
    assert!(
        reason.starts_with("summarizer `test_summarizer_hostile.wasm` trapped"),
        "{reason}"
    );
}

#[test]
fn summarizer_refusal_fails_open_with_its_error() {
    // The summarizer answers with an error (no trap): the compressor cannot
    // fold and says so, and the call fails open as the summarizer's failure,
    // in the summarizer's own words.
    let out = assert_fails_open(
        "summarize refuse",
        ComponentRole::Summarizer,
        FailureKind::Summarizer,
        &["hostile summarizer: refusing on request"],
    );
    assert_eq!(
        out.report.reason(),
        Some(
            "summarizer `test_summarizer_hostile.wasm` refused to summarize: hostile summarizer: refusing on request"
        )
    );
    assert_passes_through("hello after a refusal");
}

#[test]
fn summarizer_loop_is_blamed_on_the_summarizer() {
    assert_fails_open(
        "summarize loop",
        ComponentRole::Summarizer,
        FailureKind::Deadline,
        &["deadline of 300ms exceeded"],
    );
    // The summarizer runs under the deadline of the whole call, not a fresh one.
}

#[test]
fn good_call_after_a_failed_one_works() {
    assert_fails_open("trap", ComponentRole::Compressor, FailureKind::Panic, &[]);
    assert_passes_through("hello again");
}

#[test]
fn concurrent_calls_share_one_runtime() {
    std::thread::scope(|scope| {
        let calls: Vec<_> = (0..4)
            .map(|i| {
                scope.spawn(move || {
                    hostile_middleware().compress(
                        &history(&format!("call {i}")),
                        &CoreConfig::default(),
                        "{}",
                        None,
                    )
                })
            })
            .collect();
        for call in calls {
            assert_ne!(call.join().unwrap().report.status(), Status::FailedOpen);
        }
    });
}

#[test]
fn report_serializes_for_logs() {
    let out = assert_fails_open("trap", ComponentRole::Compressor, FailureKind::Panic, &[]);
    let json = serde_json::to_value(&out.report).unwrap();
    assert_eq!(json["status"], "failed-open");
    assert_eq!(json["failure"], "panic");
    assert_eq!(json["component"]["role"], "compressor");
    assert_eq!(json["component"]["file"], "test_compressor_hostile.wasm");
    assert!(json["elapsed_us"].is_u64());

    let out = hostile_middleware().compress(&history("hello"), &CoreConfig::default(), "{}", None);
    let json = serde_json::to_value(&out.report).unwrap();
    assert_eq!(json["status"], "unchanged");
    assert_eq!(json["guest"]["trigger"], "under-threshold");
    assert!(json.get("reason").is_none());
}

#[test]
fn component_of_the_wrong_world_is_rejected_at_load() {
    let summarizer = || ComponentSource::Path(guests::TEST_SUMMARIZER_CUSTOM.into());
    let error = load_failure_of(Runtime::new(hostile_limits(), summarizer(), summarizer()));
    assert_eq!(error.kind, FailureKind::Load);
    let message = error.to_string();
    assert!(
        message.starts_with("compressor `test_summarizer_custom.wasm` could not be loaded: does not implement `compressor-world`"),
        "{message}"
    );
}

#[test]
fn embedded_summarizer_answers_directly() {
    let runtime = embedded_middleware().runtime();
    assert_eq!(runtime.summarizer().to_string(), "embedded summarizer");
    let request = SummaryRequest {
        previous_summary: String::new(),
        messages: session("cc-trace-sonnet"),
        max_tokens: 500,
        language: "en".into(),
        settings: "{}".into(),
    };
    let summary = runtime
        .summarize(&request)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("the summarizer refused: {e}"));
    assert!(!summary.trim().is_empty());
}

#[test]
fn swapped_summarizer_writes_the_fold() {
    let messages = session("cc-trace-sonnet");
    let config = TestConfig::new(CoreConfig {
        token_threshold: 4_000,
        target_tokens: 2_000,
        keep_recent_tokens: 1_000,
        summary_max_tokens: 500,
        ..CoreConfig::default()
    });
    let out = config.compress(custom_summarizer_middleware(), &messages, None);
    assert_ne!(
        out.report.status(),
        Status::FailedOpen,
        "{:?}",
        out.report.reason()
    );
    let summary = summary_of(&out.checkpoint.expect("a fold leaves a checkpoint"));
    assert!(summary.starts_with("COUNTING SUMMARIZER: "), "{summary}");
}

// Limit pairs: the obeyed half passes under the same limits that stop the
// violated half (`memory_hog_fails_open_at_the_memory_cap`,
// `endless_loop_fails_open_at_the_deadline`).

#[test]
fn allocation_just_under_the_memory_cap_passes() {
    // 28 MiB filled, on top of the guest's own ~1 MiB (stack, data, input),
    // under the 32 MiB cap of `hostile_limits`.
    assert_passes_through("alloc 28");
}

#[test]
fn allocation_just_over_the_memory_cap_fails_open() {
    assert_fails_open(
        "alloc 32",
        ComponentRole::Compressor,
        FailureKind::OutOfMemory,
        &["memory limit of 32 MiB reached"],
    );
}

#[test]
fn bounded_busy_loop_passes_before_the_deadline() {
    // A million iterations take milliseconds, far from the 300 ms deadline
    // even on a loaded machine; `loop` never ends and is stopped.
    assert_passes_through("spin 1000000");
}

// Outputs too big for the request: the host copies the guest's output out of
// its linear memory, so the memory cap bounds what an honest guest can return.

#[test]
fn huge_output_fails_open_as_invalid_output() {
    // The messages plus a 20 MiB text part: copied out whole, then rejected
    // by the host's own check (the last message is no longer verbatim).
    assert_fails_open(
        "huge",
        ComponentRole::Compressor,
        FailureKind::InvalidOutput,
        &["returned invalid output: tail-verbatim"],
    );
    assert_passes_through("hello after a huge output");
}

#[test]
fn output_larger_than_the_memory_cap_cannot_be_built() {
    // 40 MiB does not fit in a 32 MiB guest: it fails before returning.
    assert_fails_open(
        "huge 40",
        ComponentRole::Compressor,
        FailureKind::OutOfMemory,
        &["memory limit of 32 MiB reached"],
    );
}

#[test]
fn flood_of_extra_messages_fails_open_as_invalid_output() {
    // 50 000 written messages before the kept ones, with nothing folded:
    // condense writes only the summary pair of a fold.
    assert_fails_open(
        "flood",
        ComponentRole::Compressor,
        FailureKind::InvalidOutput,
        &[
            "returned invalid output: summary: output item 0 is written by condense, but nothing was folded",
        ],
    );
    assert_passes_through("hello after a flood");
}

#[test]
fn aliased_output_strings_are_copied_once_each() {
    // 64 texts pointing at one 1 MiB buffer: the host copies 64 MiB out of a
    // guest whose memory is capped at 32 MiB. The memory cap does not bound
    // the copy; this size is harmless, and the output fails validation.
    assert_fails_open(
        "alias 64",
        ComponentRole::Compressor,
        FailureKind::InvalidOutput,
        &[
            "returned invalid output: summary: output item 0 is written by condense, but nothing was folded",
        ],
    );
    assert_passes_through("hello after aliases");
}

/// The hostile compressor's `probe` report, one `(probe, outcome)` per line.
fn probe_sandbox() -> Vec<(String, String)> {
    let messages = history("probe");
    let out = hostile_middleware().compress(&messages, &CoreConfig::default(), "{}", None);
    assert_ne!(
        out.report.status(),
        Status::FailedOpen,
        "{:?}",
        out.report.reason()
    );
    assert_unchanged("probe: the probe passes the messages on", &out, &messages);
    let summary = text_of(out.checkpoint.as_ref().expect("the probe's report"));
    summary
        .lines()
        .map(|line| {
            let (name, outcome) = line.split_once(": ").expect("`name: outcome`");
            (name.to_owned(), outcome.to_owned())
        })
        .collect()
}

#[test]
fn sandbox_gives_no_files_environment_or_network() {
    let probes = probe_sandbox();
    let outcome = |name: &str| {
        probes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, o)| o.as_str())
            .unwrap_or_else(|| panic!("no `{name}` probe in {probes:?}"))
    };
    // No preopened directory: every path fails, absolute or relative, read or
    // write, and no file content comes back (wasi-libc resolves paths against
    // the preopens, and there are none).
    for name in ["file-absolute", "file-relative", "file-write", "dir-root"] {
        assert_eq!(outcome(name), "error: NotFound", "{name}: {probes:?}");
    }
    assert_eq!(
        outcome("cwd"),
        "ok: /",
        "wasi-libc's default, not the host's"
    );
    // No environment, no arguments, an empty stdin.
    assert_eq!(outcome("env-var"), "Err(NotPresent)");
    assert_eq!(outcome("env-vars"), "[]");
    assert_eq!(outcome("args"), "[]");
    assert_eq!(outcome("stdin"), r#"ok: 0 bytes """#);
    // No network: no connection, no socket, no name lookup.
    assert_eq!(outcome("tcp-connect"), "error: PermissionDenied");
    assert_eq!(outcome("udp-bind"), "error: PermissionDenied");
    assert!(outcome("dns").starts_with("error: "), "{probes:?}");
    // The clocks are frozen at zero.
    assert_eq!(outcome("wall-clock"), "Ok(0ns)");
    assert_eq!(outcome("monotonic-clock"), "0ns elapsed over a busy loop");
    // Randomness is seeded: a guest that hashes with std's randomly seeded
    // `HashMap` (this probe) sees the same keys on every call.
    assert_eq!(outcome("random").len(), 16, "{probes:?}");
    let again = probe_sandbox();
    assert!(
        again.contains(&("random".to_owned(), outcome("random").to_owned())),
        "random differs between calls: {again:?}"
    );
    assert_passes_through("hello after probing");
}

#[test]
fn summarizer_of_100_mib_fails_open_at_its_memory_cap() {
    // "x".repeat(100 MiB) cannot be built in the summarizer's own 32 MiB:
    // the summarizer, not the compressor that asked, is blamed.
    let out = assert_fails_open(
        "summarize 100",
        ComponentRole::Summarizer,
        FailureKind::OutOfMemory,
        &["memory limit of 32 MiB reached"],
    );
    let reason = out.report.reason().unwrap();
    assert!(
        reason.starts_with("summarizer `test_summarizer_hostile.wasm` trapped"),
        "{reason}"
    );
    assert_passes_through("hello after a huge summary");
}

#[test]
fn summary_under_the_summarizer_cap_reaches_the_compressor_whole() {
    // 16 MiB fits in the summarizer's memory: the host hands all of it to the
    // compressor (into the compressor's own memory), which is where the
    // summary is clamped to its token budget. This compressor does not clamp,
    // and a checkpoint is not an output the host validates: it comes back as
    // the checkpoint's state.
    // The hostile limits' memory, with the time a 16 MiB copy takes on a
    // busy machine: the memory is under test here, not the deadline.
    let runtime = Runtime::new(
        Limits {
            call_timeout: std::time::Duration::from_secs(30),
            ..hostile_limits()
        },
        ComponentSource::Path(guests::TEST_COMPRESSOR_HOSTILE.into()),
        ComponentSource::Path(guests::TEST_SUMMARIZER_HOSTILE.into()),
    )
    .unwrap_or_else(|e| panic!("{e:#}"));
    let out = Middleware::new(runtime).compress(
        &history("summarize 16"),
        &CoreConfig::default(),
        "{}",
        None,
    );
    assert_ne!(
        out.report.status(),
        Status::FailedOpen,
        "{:?}",
        out.report.reason()
    );
    let summary = text_of(out.checkpoint.as_ref().expect("the summary's checkpoint"));
    assert_eq!(summary.len(), 16 << 20);
}

#[test]
fn bloated_output_that_keeps_every_invariant_fails_open_on_its_size() {
    // 20 MiB of text added to an assistant message, whose text a compressor
    // may rewrite, keeps every invariant: only the host's bound on the
    // output's size against the input's stops it.
    assert_fails_open(
        "bloat",
        ComponentRole::Compressor,
        FailureKind::InvalidOutput,
        &["output-size"],
    );
    assert_passes_through("pass");
}

// The embedded compressor with the hostile summarizer: a real fold that
// needs a summary the summarizer refuses to write.

/// The embedded compressor and the hostile summarizer, under the default limits.
fn refusing_middleware() -> &'static Middleware {
    static SHARED: OnceLock<Middleware> = OnceLock::new();
    SHARED.get_or_init(|| {
        let runtime = Runtime::new(
            condense_host::Limits::default(),
            ComponentSource::Embedded(embedded::COMPRESSOR),
            ComponentSource::Path(guests::TEST_SUMMARIZER_HOSTILE.into()),
        )
        .unwrap_or_else(|e| panic!("{e:#}"));
        Middleware::new(runtime)
    })
}

/// The smallest threshold there is, two recent turns, passes off: a
/// [`long_history`] of ten turns is well over it.
fn fold_config() -> TestConfig {
    TestConfig::new(CoreConfig {
        token_threshold: 1_000,
        target_tokens: 500,
        recent_turns: 2,
        keep_recent_tokens: 200,
        summary_max_tokens: 64,
    })
    .without_passes()
}

/// `turns` turns of text, every text ending in `last_word`: whichever message
/// a fold ends at, the hostile summarizer acts on `last_word`.
fn long_history(turns: usize, last_word: &str) -> Vec<Message> {
    let filler =
        "the parser drops the trailing comma when the list is empty, so a test fails; ".repeat(4);
    let mut h = vec![Message::text(Role::System, "You are a coding agent.")];
    for i in 0..turns {
        h.push(Message::text(
            Role::User,
            format!("Request {i}: {filler}{last_word}"),
        ));
        h.push(Message::text(
            Role::Assistant,
            format!("Answer {i}: {filler}{last_word}"),
        ));
    }
    h.push(Message::text(
        Role::User,
        format!("Now finish. {last_word}"),
    ));
    h
}

#[test]
fn summarizer_error_fails_open_as_a_summarizer_failure() {
    let middleware = refusing_middleware();
    // Asked directly, the summarizer answers with its error: a result, not a
    // failure of the component.
    let request = SummaryRequest {
        previous_summary: String::new(),
        messages: long_history(1, "refuse"),
        max_tokens: 64,
        language: "en".into(),
        settings: "{}".into(),
    };
    assert_eq!(
        middleware.runtime().summarize(&request),
        Ok(Err("hostile summarizer: refusing on request".into()))
    );

    // Through the embedded compressor, the fold gets no summary: the call
    // fails open, the checkpoint it was given kept.
    let config = fold_config();
    let history = long_history(10, "refuse");
    let given = previous_checkpoint();
    let sent = config.compress(middleware, &history, Some(&given));
    assert_failed_open(
        "refuse",
        &sent,
        &history,
        Some(&given),
        ComponentRole::Summarizer,
        FailureKind::Summarizer,
        &["hostile summarizer: refusing on request"],
    );
    assert!(
        sent.report.guest().is_none(),
        "no outcome: {:?}",
        sent.report
    );
    assert_eq!(
        sent.report.reason(),
        Some(
            "summarizer `test_summarizer_hostile.wasm` refused to summarize: hostile summarizer: refusing on request"
        )
    );

    // The same fold with a summary the summarizer writes: the next call works.
    let history = long_history(10, "fine");
    let sent = config.compress(middleware, &history, Some(&given));
    assert_ne!(
        sent.report.status(),
        Status::FailedOpen,
        "{:?}",
        sent.report.reason()
    );
    let report = sent.report.guest().expect("the compressor's report");
    assert_eq!(report.trigger, Trigger::Compacted, "{report:?}");
    assert!(report.boundary > 0, "{report:?}");
    let stored = sent
        .checkpoint
        .as_ref()
        .expect("a fold leaves a checkpoint");
    assert_eq!(summary_of(stored), "HOSTILE SUMMARIZER: nothing to see");
    assert!(stored.fits(&history));
}

/// Between compactions the host sends the compressor only the history after
/// the fold; the same call with the whole history (the host's hash made not
/// to fit, so it sends everything and the compressor checks its own hash)
/// gives the same request, report and checkpoint.
fn assert_offset_calls_match_full_calls(name: &str, config: &TestConfig) {
    let history = session(name);
    let json = config.json();
    let middleware = embedded_middleware();
    let (mut call, mut offset_calls, mut offset_compactions) = (0, 0, 0);
    replay(&history, |request, given: Option<&SessionCheckpoint>| {
        call += 1;
        let at = format!("{name}, call {call} ({} messages)", request.len());
        let sent = middleware.compress(request, &config.core, &json, given);
        assert_ne!(
            sent.report.status(),
            Status::FailedOpen,
            "{at}: {:?}",
            sent.report.reason()
        );
        let report = sent.report.guest().expect("the compressor's report");
        let compacted = report.trigger == Trigger::Compacted;
        match given.filter(|cp| cp.checkpoint.boundary > 0) {
            None => assert_eq!(sent.report.sent_from, 0, "{at}: nothing folded yet"),
            Some(cp) => {
                offset_calls += 1;
                offset_compactions += usize::from(compacted);
                assert!(cp.fits(request), "{at}: the history only grew");
                assert_eq!(
                    sent.report.sent_from, cp.checkpoint.boundary,
                    "{at}: only the history after the fold is sent"
                );
                assert_eq!(sent.report.checkpoint_ignored, None, "{at}");

                let stale = SessionCheckpoint {
                    summary: None,
                    prefix_hash: "0".into(),
                    ..cp.clone()
                };
                assert!(!stale.fits(request));
                let full = middleware.compress(request, &config.core, &json, Some(&stale));
                assert_ne!(
                    full.report.status(),
                    Status::FailedOpen,
                    "{at}: {:?}",
                    full.report.reason()
                );
                assert_eq!(full.report.sent_from, 0, "{at}: the whole history is sent");
                assert_eq!(
                    full.report.checkpoint_ignored, None,
                    "{at}: the compressor's own hash fits"
                );
                assert_eq!(full.items, sent.items, "{at}: the same request");
                assert_eq!(
                    full.report.guest(),
                    sent.report.guest(),
                    "{at}: the same report"
                );
                assert_eq!(
                    full.checkpoint.as_ref().map(|c| &c.checkpoint),
                    sent.checkpoint.as_ref().map(|c| &c.checkpoint),
                    "{at}: the same checkpoint"
                );
            }
        }
        if let Some(stored) = &sent.checkpoint {
            assert!(stored.fits(request), "{at}: the stored checkpoint fits");
        }
        Step {
            messages: sent.messages(request),
            checkpoint: sent.checkpoint,
            compacted,
            failed_open: false,
        }
    });
    assert!(
        offset_calls > 0 && offset_compactions > 0,
        "{name}: {offset_calls} offset calls, {offset_compactions} of them compactions: \
         the session should compact again after its first fold"
    );
}

#[test]
fn offset_calls_give_the_full_calls_output() {
    assert_offset_calls_match_full_calls("cc-opus-b", &config_40k());
}

#[test]
fn offset_calls_give_the_full_calls_output_with_the_passes() {
    assert_offset_calls_match_full_calls("cc-opus-b", &config_40k().with_passes());
}

/// The two ways to send a history measure it differently (a slice on every
/// call, a transcript once per message appended) and must not differ in
/// anything else: the same request, report, resume point and checkpoint,
/// prefix hash included, on every call of a session that compacts again and
/// again.
#[test]
fn a_transcript_call_is_the_slice_call() {
    let history = session("cc-opus-c");
    let config = config_40k().with_passes();
    let json = config.json();
    let middleware = embedded_middleware();
    let mut transcript = Transcript::new();
    let (mut call, mut resumed) = (0, 0);
    let stats = replay(&history, |request, given: Option<&SessionCheckpoint>| {
        call += 1;
        let at = format!("call {call} ({} messages)", request.len());
        transcript.extend(request[transcript.len()..].iter().cloned());
        let sliced = middleware.compress(request, &config.core, &json, given);
        let kept = middleware.compress_transcript(&transcript, &config.core, &json, given);
        assert_ne!(
            kept.report.status(),
            Status::FailedOpen,
            "{at}: {:?}",
            kept.report.reason()
        );
        assert_eq!(kept.items, sliced.items, "{at}: the same request");
        assert_eq!(
            kept.report.guest(),
            sliced.report.guest(),
            "{at}: the same report"
        );
        assert_eq!(kept.report.sent_from, sliced.report.sent_from, "{at}");
        assert_eq!(
            kept.checkpoint, sliced.checkpoint,
            "{at}: the same checkpoint"
        );
        resumed += usize::from(kept.report.sent_from > 0);
        let compacted = kept
            .report
            .guest()
            .is_some_and(|r| r.trigger == Trigger::Compacted);
        Step {
            messages: kept.messages(request),
            checkpoint: kept.checkpoint,
            compacted,
            failed_open: false,
        }
    });
    assert!(
        stats.compactions > 1 && resumed > 0,
        "{} compactions, {resumed} calls resumed from a checkpoint",
        stats.compactions
    );
}

/// A rewound transcript (a turn undone, another written in its place)
/// measures what it now holds: a checkpoint that folded the undone messages
/// no longer fits, and the call starts from the first message again.
#[test]
fn a_checkpoint_does_not_fit_a_transcript_rewound_before_its_boundary() {
    let history = session("cc-opus-c");
    let config = config_40k();
    let json = config.json();
    let middleware = embedded_middleware();
    let mut transcript = Transcript::from(history.clone());
    let first = middleware.compress_transcript(&transcript, &config.core, &json, None);
    let stored = first.checkpoint.expect("the session is over the threshold");
    let boundary = stored.checkpoint.boundary as usize;
    assert!(boundary > 2);
    let again = middleware.compress_transcript(&transcript, &config.core, &json, Some(&stored));
    assert_eq!(
        again.report.sent_from as usize, boundary,
        "unchanged: resumed"
    );

    let undone = (0..boundary)
        .rev()
        .find(|&i| history[i].parts.iter().any(|p| matches!(p, Part::Text(_))))
        .expect("a folded message with text");
    transcript.truncate(undone);
    let mut rewritten = history[undone].clone();
    edit_text(&mut rewritten);
    transcript.push(rewritten);
    transcript.extend(history[undone + 1..].iter().cloned());
    assert!(!stored.fits(transcript.messages()));
    let rewound = middleware.compress_transcript(&transcript, &config.core, &json, Some(&stored));
    assert_ne!(rewound.report.status(), Status::FailedOpen);
    assert_eq!(rewound.report.sent_from, 0, "the whole history is sent");
    let sliced = middleware.compress(transcript.messages(), &config.core, &json, Some(&stored));
    assert_eq!(rewound.items, sliced.items);
    assert_eq!(rewound.checkpoint, sliced.checkpoint);
}

/// Appends to the first text of `message`.
fn edit_text(message: &mut Message) {
    let text = message
        .parts
        .iter_mut()
        .find_map(|p| match p {
            Part::Text(t) => Some(t),
            _ => None,
        })
        .expect("a text part");
    text.push_str(" (edited)");
}

#[test]
fn checkpoint_of_a_changed_prefix_is_ignored_and_the_fold_recomputed() {
    let middleware = embedded_middleware();
    let config = config_40k();
    let history = session("cc-opus-b");
    let first = config.compress(middleware, &history, None);
    assert_ne!(
        first.report.status(),
        Status::FailedOpen,
        "{:?}",
        first.report.reason()
    );
    let stored = first.checkpoint.clone().expect("the session is folded");
    assert!(stored.checkpoint.boundary > 0, "{stored:?}");

    // The unchanged history reuses it, sent from the boundary on.
    let again = config.compress(middleware, &history, Some(&stored));
    assert_eq!(again.report.sent_from, stored.checkpoint.boundary);
    assert_eq!(
        again.report.guest().map(|r| r.trigger),
        Some(Trigger::ReusedCheckpoint)
    );
    assert_eq!(again.items, first.items);

    // history[0] edited: the host's hash no longer fits, so it sends the
    // whole history; the compressor's own hash does not fit either.
    let mut edited = history.clone();
    edit_text(&mut edited[0]);
    assert!(!stored.fits(&edited));
    let sent = config.compress(middleware, &edited, Some(&stored));
    assert_ne!(
        sent.report.status(),
        Status::FailedOpen,
        "{:?}",
        sent.report.reason()
    );
    assert_eq!(sent.report.sent_from, 0);
    let why = sent
        .report
        .checkpoint_ignored
        .as_deref()
        .expect("the checkpoint is ignored, and the report says why");
    assert!(
        why.contains("is not the one the checkpoint folded"),
        "{why}"
    );
    let report = sent.report.guest().expect("the compressor's report");
    assert_eq!(report.checkpoint_ignored.as_deref(), Some(why));
    assert_eq!(report.trigger, Trigger::Compacted, "the fold is recomputed");

    // Recomputed as if there had been no checkpoint.
    let fresh = config.compress(middleware, &edited, None);
    assert_eq!(fresh.report.checkpoint_ignored, None);
    assert_eq!(sent.items, fresh.items);
    assert_eq!(sent.checkpoint, fresh.checkpoint);
    assert!(sent.checkpoint.as_ref().is_some_and(|c| c.fits(&edited)));
    assert_ne!(sent.checkpoint.as_ref(), Some(&stored));
}

#[test]
fn checkpoint_of_another_format_is_ignored_naming_its_format() {
    // A test guest's checkpoint (format 0) folding nothing: the whole history
    // is sent with it, and the embedded compressor says it cannot read it.
    let messages = history("hello");
    let foreign = SessionCheckpoint {
        summary: None,
        checkpoint: Checkpoint {
            version: 0,
            boundary: 0,
            state: b"what came before".to_vec(),
        },
        prefix_hash: format!("{:032x}", condense_model::hash::prefix_hash(&[])),
    };
    assert!(foreign.fits(&messages));
    let sent =
        embedded_middleware().compress(&messages, &CoreConfig::default(), "{}", Some(&foreign));
    assert_ne!(
        sent.report.status(),
        Status::FailedOpen,
        "{:?}",
        sent.report.reason()
    );
    assert_eq!(sent.report.sent_from, 0);
    let why = sent.report.checkpoint_ignored.as_deref().expect("ignored");
    assert!(why.contains("checkpoint format 0"), "{why}");
    assert_unchanged("under the threshold", &sent, &messages);
    assert_eq!(sent.checkpoint, None, "nothing folded, nothing to store");
}

#[test]
fn offset_call_the_compressor_cannot_resume_is_retried_with_the_whole_history() {
    // The host's hash fits, so it sends only the history from message 2 on;
    // the compressor cannot read the checkpoint, answers that it needs the
    // whole history, and the host calls again with all of it.
    let messages = history("hello");
    let foreign = SessionCheckpoint {
        summary: None,
        prefix_hash: format!("{:032x}", condense_model::hash::prefix_hash(&messages[..2])),
        ..previous_checkpoint()
    };
    assert!(foreign.fits(&messages));
    let sent =
        embedded_middleware().compress(&messages, &CoreConfig::default(), "{}", Some(&foreign));
    assert_ne!(
        sent.report.status(),
        Status::FailedOpen,
        "{:?}",
        sent.report.reason()
    );
    assert_eq!(sent.report.sent_from, 0, "the retry sent the whole history");
    let why = sent.report.checkpoint_ignored.as_deref().expect("ignored");
    assert!(why.contains("checkpoint format 0"), "{why}");
    assert_unchanged("under the threshold", &sent, &messages);
}

#[test]
fn a_component_of_another_contract_version_is_named_with_it() {
    // A summarizer built against condense:middleware@0.1.0. The second one's
    // code does not even validate (an i64 where an i32 is returned): the
    // version is read from the binary before it is compiled.
    for body in ["i32.const 0", "i64.const 0"] {
        let old = wat::parse_str(format!(
            r#"(component
                (core module $m (func (export "f") (result i32) {body}))
                (core instance $i (instantiate $m))
                (func $f (result u32) (canon lift (core func $i "f")))
                (instance $api (export "summarize" (func $f)))
                (export "condense:middleware/summarizer@0.1.0" (instance $api))
            )"#
        ))
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old_summarizer.wasm");
        std::fs::write(&path, old).unwrap();
        let error = load_failure_of(Runtime::new(
            Limits::default(),
            ComponentSource::Embedded(embedded::COMPRESSOR),
            ComponentSource::Path(path),
        ));
        assert_eq!(error.kind, FailureKind::Load);
        assert_eq!(
            error.to_string(),
            "summarizer `old_summarizer.wasm` could not be loaded: was built for \
             condense:middleware@0.1.0; this host speaks 0.2.0",
            "{body}"
        );
    }
}

fn load_failure_of(result: Result<Runtime, LoadError>) -> GuestFailure {
    match result.err().expect("the runtime is not built") {
        LoadError::Component(failure) => failure,
        other => panic!("not a component's failure: {other}"),
    }
}

/// The embedded compressor with a chain of summarizers (the hostile one
/// first) under `timeout_ms` per call.
fn chain_middleware(chain: Vec<ComponentSource>, timeout_ms: u64) -> Middleware {
    let limits = Limits {
        call_timeout: std::time::Duration::from_millis(timeout_ms),
        ..Limits::default()
    };
    let runtime = Runtime::with_summarizers(
        limits,
        ComponentSource::Embedded(embedded::COMPRESSOR),
        chain,
    )
    .unwrap_or_else(|e| panic!("{e:#}"));
    Middleware::new(runtime)
}

fn hostile_summarizer() -> ComponentSource {
    ComponentSource::Path(guests::TEST_SUMMARIZER_HOSTILE.into())
}

#[test]
fn a_summarizer_chain_falls_through_on_an_error_a_trap_or_the_deadline() {
    let chain = chain_middleware(
        vec![
            hostile_summarizer(),
            ComponentSource::Embedded(embedded::SUMMARIZER),
        ],
        2_000,
    );
    for (word, why) in [
        (
            "refuse",
            "refused to summarize: hostile summarizer: refusing on request",
        ),
        ("trap", "trapped"),
        ("loop", "interrupt"),
    ] {
        let history = long_history(10, word);
        let sent = fold_config().compress(&chain, &history, None);
        assert_eq!(
            sent.report.status(),
            Status::Compressed,
            "{word}: {:?}",
            sent.report
        );
        // The embedded summarizer wrote the summary, and the report says
        // why the hostile one did not.
        assert_eq!(
            sent.report
                .summary_by
                .as_ref()
                .map(ToString::to_string)
                .as_deref(),
            Some("embedded summarizer"),
            "{word}"
        );
        assert_eq!(
            sent.report.fell_through.len(),
            1,
            "{word}: {:?}",
            sent.report
        );
        let reason = &sent.report.fell_through[0];
        assert!(
            reason.starts_with("summarizer `test_summarizer_hostile.wasm`") && reason.contains(why),
            "{word}: {reason}"
        );
        let summary = summary_of(sent.checkpoint.as_ref().unwrap());
        assert!(!summary.contains("HOSTILE"), "{word}: {summary}");
        let json = serde_json::to_value(&sent.report).unwrap();
        assert_eq!(json["summary_by"]["role"], "summarizer", "{json}");
    }

    // A summarizer that writes: nothing falls through.
    let history = long_history(10, "fine");
    let sent = fold_config().compress(&chain, &history, None);
    assert_eq!(
        sent.report.summary_by.as_ref().unwrap().file.as_deref(),
        Some("test_summarizer_hostile.wasm")
    );
    assert!(sent.report.fell_through.is_empty());
    assert!(summary_of(sent.checkpoint.as_ref().unwrap()).contains("HOSTILE SUMMARIZER"));
}

#[test]
fn a_chain_whose_summarizers_all_fail_fails_open_naming_each() {
    let chain = chain_middleware(vec![hostile_summarizer(), hostile_summarizer()], 2_000);
    let history = long_history(10, "refuse");
    let sent = fold_config().compress(&chain, &history, None);
    assert_failed_open(
        "all refuse",
        &sent,
        &history,
        None,
        ComponentRole::Summarizer,
        FailureKind::Summarizer,
        &["refusing on request (before it: summarizer `test_summarizer_hostile.wasm` refused"],
    );
}

#[test]
fn the_compressor_measures_in_the_hosts_token_counts() {
    let runtime = embedded_middleware().runtime();
    let history: Vec<Message> = (0..6)
        .flat_map(|i| {
            [
                Message::text(Role::User, format!("question {i}")),
                Message::text(
                    Role::Assistant,
                    format!("answer {i}: {}", "word ".repeat(40)),
                ),
            ]
        })
        .collect();
    let config = CoreConfig::for_threshold(2_000);
    let call = |tokens: &[u32]| {
        runtime.call(Call {
            history: &history,
            offset: 0,
            config: &config,
            settings: "{}",
            checkpoint: None,
            tokens: Some(tokens),
            recall: false,
            prepared: None,
            preparing: false,
            owner: None,
        })
    };
    let own = condense_model::tokens::estimate_messages(&history);
    let under = call(&own).unwrap().outcome;
    assert_eq!(under.report.trigger, Trigger::UnderThreshold);
    // The same history counted ten times heavier by the host's ruler.
    let tenfold: Vec<u32> = own.iter().map(|t| t * 10).collect();
    let over = call(&tenfold).unwrap().outcome;
    assert_eq!(over.report.trigger, Trigger::Compacted);
    assert_eq!(over.report.tokens_before, tenfold.iter().sum::<u32>());
    // Counts that do not match the messages are the host's error, named.
    let failure = call(&own[1..]).expect_err("refused");
    assert_eq!(failure.kind, FailureKind::CompressError);
    assert!(
        failure
            .to_string()
            .contains("tokens: 11 counts for 12 messages"),
        "{failure}"
    );
}

/// A request body is given `condense_recall` only when its client sent
/// tools of its own and lets the model choose among them, and only once
/// the request names a handle (a compaction): without tools, or with a
/// forced tool choice, a compacted body is the client's as it meant it —
/// no tool, no handle in its text — and a body under the threshold is sent
/// as it came.
#[test]
fn a_body_gets_the_recall_tool_only_where_its_client_lets_the_model_choose() {
    use condense_host::formats::{Format, render_messages};
    let messages = condense_tests::session("cc-opus-b");
    let list = render_messages(Format::OpenAi, &messages);
    let tool = serde_json::json!({"type": "function",
        "function": {"name": "Bash", "parameters": {"type": "object"}}});
    let config = condense_host::BodyConfig {
        recall: Some(condense_host::Recall {
            budget_tokens: 4_000,
            max_rounds: 3,
        }),
        ..condense_config::AgentSettings::for_replay().body_config()
    };
    let compress = |body: serde_json::Value| {
        let bytes = serde_json::to_vec(&body).unwrap();
        let mut store = condense_host::MemoryStore::default();
        let sent =
            condense_host::compress_body(embedded_middleware(), &config, &bytes, None, &mut store)
                .unwrap();
        // The history the handles resolve against comes with them.
        assert_eq!(sent.history.is_empty(), sent.handles.is_empty());
        for handle in &sent.handles {
            assert!(condense_model::recall::find(&sent.history, &handle.id).is_ok());
        }
        let text = String::from_utf8(sent.body).unwrap();
        (sent.handles, text, sent.report)
    };
    let cases = [
        (
            serde_json::json!({"model": "m", "messages": list, "tools": [tool]}),
            true,
        ),
        (
            serde_json::json!({"model": "m", "messages": list, "tools": [tool],
                "tool_choice": "auto"}),
            true,
        ),
        (
            serde_json::json!({"model": "m", "messages": list, "tools": [tool],
                "tool_choice": "required"}),
            false,
        ),
        (serde_json::json!({"model": "m", "messages": list}), false),
    ];
    for (body, offered) in cases {
        let (handles, text, report) = compress(body.clone());
        assert!(report.compacted(), "{report:?}");
        assert_eq!(!handles.is_empty(), offered, "{}", body["tool_choice"]);
        assert_eq!(text.contains("condense_recall"), offered);
        let sent: serde_json::Value = serde_json::from_str(&text).unwrap();
        let tools = sent["tools"].as_array().map_or(0, Vec::len);
        let given = body["tools"].as_array().map_or(0, Vec::len);
        assert_eq!(tools, given + usize::from(offered));
        for handle in &handles {
            assert!(text.contains(&handle.id), "{}", handle.id);
            let found = condense_model::recall::find(&messages, &handle.id).unwrap();
            assert_eq!(found, handle.span);
        }
    }
    // Under the threshold: nothing named, nothing added, the client's bytes.
    let short = serde_json::json!({"model": "m", "messages": render_messages(Format::OpenAi,
        &messages[..4]), "tools": [tool]});
    let (handles, text, _) = compress(short.clone());
    assert!(handles.is_empty());
    assert!(!text.contains("condense_recall"));
}

/// The host library's agent-loop example (`host-example/host/examples/
/// agent_loop.rs`) runs as its doc says: given the default components as
/// files and a recorded session, it compacts and ends with a fold. The
/// binary is the one `cargo test` built with the examples; run alone, this
/// builds it.
#[test]
fn the_agent_loop_example_compacts_a_recorded_session() {
    let dir = tempfile::tempdir().unwrap();
    let compressor = dir.path().join("compressor.wasm");
    let summarizer = dir.path().join("summarizer.wasm");
    std::fs::write(&compressor, embedded::COMPONENTS.compressor).unwrap();
    std::fs::write(&summarizer, embedded::COMPONENTS.summarizer).unwrap();
    // target/debug/deps/<this test> → target/debug/examples/agent_loop.
    let exe = std::env::current_exe().unwrap();
    let example = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|debug| debug.join("examples").join("agent_loop"))
        .unwrap();
    if !example.is_file() {
        let built = std::process::Command::new(env!("CARGO"))
            .args([
                "build",
                "-q",
                "-p",
                "condense-host",
                "--example",
                "agent_loop",
            ])
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .status()
            .expect("cargo runs");
        assert!(built.success(), "the example builds");
    }
    let session = corpus_dir().join("sessions/cc-subagent-haiku.json");
    let out = std::process::Command::new(&example)
        .arg(&compressor)
        .arg(&summarizer)
        .arg(&session)
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(": compacted, "), "{stdout}");
    let folded: usize = (stdout.lines().last())
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(folded > 0, "{stdout}");
}
