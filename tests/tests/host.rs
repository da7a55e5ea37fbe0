//! The host end to end: real components through the sandbox, the runtime and
//! the fail-open middleware.
//!
//! Limit tests come in pairs: the hostile compressor passes messages through
//! under the same limits that stop its misbehaviour.

use condense_host::{
    ComponentRole, ComponentSource, Compressed, FailureKind, GuestFailure, Runtime, Status,
};
use condense_model::{
    Checkpoint, Config, Message, Part, Role, SummaryRequest, ToolCall, ToolResult,
};
use condense_tests::{
    custom_summarizer_middleware, embedded_middleware, guests, hostile_limits, hostile_middleware,
    session, session_names,
};

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

fn previous_checkpoint() -> Checkpoint {
    Checkpoint {
        boundary: 2,
        prefix_hash: "earlier".into(),
        folded_tokens: 0,
        summary: "what came before".into(),
        tail_start: 2,
        horizon: 2,
    }
}

/// Runs `command` through the hostile pair with a checkpoint and checks that
/// the call failed open: original messages, the checkpoint kept, a report
/// naming the component and the kind of failure.
fn assert_fails_open(
    command: &str,
    role: ComponentRole,
    kind: FailureKind,
    says: &[&str],
) -> Compressed {
    let messages = history(command);
    let checkpoint = previous_checkpoint();
    let out = hostile_middleware().compress(&messages, &Config::default(), Some(&checkpoint));
    let report = &out.report;
    assert_eq!(report.status, Status::FailedOpen, "{command}: {report:?}");
    assert_eq!(
        out.messages, messages,
        "{command}: the original messages come back"
    );
    assert_eq!(
        out.checkpoint,
        Some(checkpoint),
        "{command}: the previous checkpoint is kept"
    );
    assert_eq!(report.failure, Some(kind), "{command}: {report:?}");
    let component = report
        .component
        .as_ref()
        .expect("the failed component is named");
    assert_eq!(component.role, role, "{command}: {report:?}");
    let reason = report.reason.as_deref().expect("a reason");
    assert!(
        reason.starts_with(&component.to_string()),
        "{command}: the reason names the component: {reason}"
    );
    for part in says {
        assert!(reason.contains(part), "{command}: {reason}");
    }
    out
}

#[test]
fn embedded_compressor_passes_every_corpus_session_validly() {
    for name in session_names() {
        let messages = session(&name);
        let out = embedded_middleware().compress(&messages, &Config::default(), None);
        assert_eq!(
            out.report.status,
            Status::Compressed,
            "{name}: {:?}",
            out.report.reason
        );
        let guest = out.report.guest.expect("the compressor's report");
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
    };
    let summary = runtime
        .summarize(&request)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        summary,
        format!("COUNTING SUMMARIZER: 6 messages, {calls} tool calls folded")
    );
}

/// Runs `command` through the hostile pair and checks that it passed through.
fn assert_passes_through(command: &str) {
    let messages = history(command);
    let out = hostile_middleware().compress(&messages, &Config::default(), None);
    assert_eq!(
        out.report.status,
        Status::Compressed,
        "{:?}",
        out.report.reason
    );
    assert_eq!(out.messages, messages);
}

#[test]
fn well_behaved_call_passes_under_the_hostile_limits() {
    assert_passes_through("hello");
}

#[test]
fn compressor_reaches_the_summarizer_through_its_import() {
    let out = hostile_middleware().compress(&history("summarize"), &Config::default(), None);
    assert_eq!(
        out.report.status,
        Status::Compressed,
        "{:?}",
        out.report.reason
    );
    assert_eq!(
        out.checkpoint.map(|c| c.summary).as_deref(),
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
        out.report.guest.is_some(),
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

#[test]
fn summarizer_panic_is_blamed_on_the_summarizer() {
    let out = assert_fails_open(
        "summarize trap",
        ComponentRole::Summarizer,
        FailureKind::Panic,
        &["hostile summarizer: trap requested"],
    );
    let reason = out.report.reason.unwrap();
    assert!(
        reason.starts_with("summarizer `test_summarizer_hostile.wasm` trapped"),
        "{reason}"
    );
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
                        &Config::default(),
                        None,
                    )
                })
            })
            .collect();
        for call in calls {
            assert_eq!(call.join().unwrap().report.status, Status::Compressed);
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

    let out = hostile_middleware().compress(&history("hello"), &Config::default(), None);
    let json = serde_json::to_value(&out.report).unwrap();
    assert_eq!(json["status"], "compressed");
    assert_eq!(json["guest"]["trigger"], "under-threshold");
    assert!(json.get("reason").is_none());
}

#[test]
fn component_of_the_wrong_world_is_rejected_at_load() {
    let summarizer = || ComponentSource::Path(guests::TEST_SUMMARIZER_CUSTOM.into());
    let error = Runtime::new(hostile_limits(), summarizer(), summarizer())
        .err()
        .expect("a summarizer is no compressor");
    let error = error
        .downcast_ref::<GuestFailure>()
        .expect("a failure naming the component");
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
    };
    let summary = runtime
        .summarize(&request)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!summary.trim().is_empty());
}

#[test]
fn swapped_summarizer_writes_the_fold() {
    let messages = session("cc-trace-sonnet");
    let config = Config {
        token_threshold: 4_000,
        target_tokens: 2_000,
        keep_recent_tokens: 1_000,
        summary_max_tokens: 500,
        ..Config::default()
    };
    let out = custom_summarizer_middleware().compress(&messages, &config, None);
    assert_eq!(
        out.report.status,
        Status::Compressed,
        "{:?}",
        out.report.reason
    );
    let summary = out.checkpoint.expect("a fold leaves a checkpoint").summary;
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
    assert_fails_open(
        "flood",
        ComponentRole::Compressor,
        FailureKind::InvalidOutput,
        &["returned invalid output: verbatim"],
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
        &["returned invalid output: verbatim"],
    );
    assert_passes_through("hello after aliases");
}

/// The hostile compressor's `probe` report, one `(probe, outcome)` per line.
fn probe_sandbox() -> Vec<(String, String)> {
    let messages = history("probe");
    let out = hostile_middleware().compress(&messages, &Config::default(), None);
    assert_eq!(
        out.report.status,
        Status::Compressed,
        "{:?}",
        out.report.reason
    );
    assert_eq!(out.messages, messages, "the probe passes the messages on");
    let summary = out.checkpoint.expect("the probe's report").summary;
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
    // Randomness is available (WASI's default source); guests must not let
    // their output depend on it.
    assert_eq!(outcome("random").len(), 16, "{probes:?}");
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
    let reason = out.report.reason.unwrap();
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
    // and a checkpoint is not an output the host validates.
    let out = hostile_middleware().compress(&history("summarize 16"), &Config::default(), None);
    assert_eq!(
        out.report.status,
        Status::Compressed,
        "{:?}",
        out.report.reason
    );
    let summary = out.checkpoint.expect("the summary's checkpoint").summary;
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
