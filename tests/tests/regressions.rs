//! The cases the fuzz targets (`tests/fuzz`) once crashed on, each built
//! here as the history, config, checkpoint or body it stood for and held to
//! the checks its target runs. A fuzz input is bytes that drive a generator,
//! and makes another case once the generator changes; these do not.
//!
//! The compressor's cases run natively and through `checks`, the very file
//! the `compress` and `replay` targets check every call with.

use condense_compressor::Settings;
use condense_compressor::settings::{ClearMode, CompactWhen};
use condense_compressor::state::{Prefix, State};
use condense_host::formats::{Format, Parsed};
use condense_model::tokens::estimate_messages;
use condense_model::{
    Checkpoint, CoreConfig, Item, Message, Outcome, Part, Role, SUMMARY_MARKER, ToolCall,
    ToolResult, Trigger,
};
use serde_json::{Value, json};

// The fuzz targets use all of it; these tests, part.
#[allow(dead_code)]
#[path = "../fuzz/src/checks.rs"]
mod checks;

use checks::{Config, Summarizer, checked, compress_checked};

fn text(role: Role, text: impl Into<String>) -> Message {
    Message::text(role, text)
}

fn marked(role: Role, rest: &str) -> Message {
    text(role, format!("{SUMMARY_MARKER} {rest}"))
}

fn calls(calls: &[(&str, &str, &str)]) -> Message {
    Message {
        role: Role::Assistant,
        parts: calls
            .iter()
            .map(|&(id, name, arguments)| {
                Part::ToolCall(ToolCall {
                    id: id.into(),
                    name: name.into(),
                    arguments: arguments.into(),
                })
            })
            .collect(),
    }
}

fn result(call_id: &str, content: impl Into<String>) -> Part {
    Part::ToolResult(ToolResult {
        call_id: call_id.into(),
        content: content.into(),
        is_error: false,
    })
}

fn tool(call_id: &str, content: impl Into<String>) -> Message {
    Message {
        role: Role::Tool,
        parts: vec![result(call_id, content)],
    }
}

fn config(core: CoreConfig, settings: Settings) -> Config {
    Config { core, settings }
}

fn core(threshold: u32, target: u32, keep: u32, summary: u32, turns: u32) -> CoreConfig {
    CoreConfig {
        token_threshold: threshold,
        target_tokens: target,
        recent_turns: turns,
        keep_recent_tokens: keep,
        summary_max_tokens: summary,
    }
}

/// Compacting at the threshold only, as every compaction did when these
/// cases were found.
fn at_threshold() -> Settings {
    Settings {
        compact_when: CompactWhen::Threshold,
        ..Settings::default()
    }
}

/// A checkpoint as the `replay` target forges one: the prefix really is
/// `history`'s up to `boundary` (so the compressor takes it for its own),
/// every other field what a crafted one may say.
fn forged(history: &[Message], boundary: usize, edit: impl FnOnce(&mut State)) -> Checkpoint {
    let tokens = estimate_messages(history);
    let mut state = State {
        prefix: Prefix::default().advance(history, &tokens, boundary),
        summary: "The test fails; the fix is in src/lib.rs.".into(),
        pair_tokens: 0,
        tail_start: boundary as u32,
        horizon: boundary as u32,
    };
    edit(&mut state);
    state.to_checkpoint()
}

/// What the `replay` target checks of a call given a forged checkpoint
/// (every call runs once there: determinism is the `compress` target's).
fn with_checkpoint(history: &[Message], cfg: &Config, checkpoint: &Checkpoint) -> Outcome {
    checked(
        history,
        cfg,
        Some(checkpoint),
        &Summarizer::Heuristic,
        false,
    )
    .expect("a valid history and config")
}

// ---------------------------------------------------------------------------
// replay: a forged checkpoint is used safely or ignored
// ---------------------------------------------------------------------------

/// A checkpoint is the guest's input and may count anything: its folded
/// tokens added to the window's overflowed (a panic with overflow checks, a
/// wrong count without), both when the call reported its size and when a
/// compaction moved the prefix on. The counts saturate instead.
#[test]
fn a_checkpoint_counting_nearly_u64_max_folded_tokens_saturates_instead_of_overflowing() {
    let history = vec![
        text(Role::User, "The build fails on CI, fix it."),
        calls(&[("call_1", "Bash", r#"{"command":"cargo build"}"#)]),
        tool("call_1", "error[E0308]: mismatched types\n"),
        text(Role::Assistant, "A type changed in src/lib.rs."),
        text(Role::User, "Then fix the callers too."),
        calls(&[("call_2", "Bash", r#"{"command":"cargo test"}"#)]),
        tool(
            "call_2",
            "test result: FAILED. 3 passed; 1 failed\n".repeat(300),
        ),
        text(Role::Assistant, "One test still fails."),
    ];
    let cfg = config(core(2_000, 600, 100, 300, 8), at_threshold());
    let checkpoint = forged(&history, 4, |state| {
        state.prefix.folded_tokens = u64::MAX;
    });

    let outcome = with_checkpoint(&history, &cfg, &checkpoint);
    let report = &outcome.report;
    assert_eq!(
        report.checkpoint_ignored, None,
        "the forged prefix is right"
    );
    assert_eq!(report.trigger, Trigger::Compacted);
    assert_eq!(
        report.tokens_before,
        u32::MAX,
        "the report's count saturates"
    );
    let next = State::read(outcome.checkpoint.as_ref().unwrap()).unwrap();
    assert!(
        next.prefix.boundary > 4,
        "the compaction moved the prefix on"
    );
    assert_eq!(
        next.prefix.folded_tokens,
        u64::MAX,
        "and its count saturates"
    );
}

/// The report's `tokens_after` is held to the request it describes; a
/// reused checkpoint's own count of its summary pair was trusted, so a
/// crafted one made it anything (2425393300 tokens reported for a request
/// of 63). The pair is estimated again on every call.
#[test]
fn a_reused_checkpoints_pair_tokens_are_estimated_not_trusted() {
    let history = vec![
        text(Role::User, "Fix the failing test."),
        calls(&[("call_1", "Bash", r#"{"command":"cargo test"}"#)]),
        tool("call_1", "test result: ok. 4 passed"),
        text(Role::Assistant, "Fixed: all four pass."),
        text(Role::User, "Thanks. Now update the changelog."),
    ];
    let cfg = config(core(6_000, 1_400, 200, 600, 1), at_threshold());
    let checkpoint = forged(&history, 4, |state| {
        state.pair_tokens = 2_425_393_296;
    });

    let outcome = with_checkpoint(&history, &cfg, &checkpoint);
    let report = &outcome.report;
    assert_eq!(
        report.checkpoint_ignored, None,
        "the forged prefix is right"
    );
    assert_eq!(report.trigger, Trigger::ReusedCheckpoint);
    assert!(report.tokens_after < 200, "{report:?}");
}

/// A crafted checkpoint can describe a request that breaks the rules: here
/// one folding nothing but two system messages, so that its summary pair
/// (which ends with condense's assistant message) meets the history's next
/// message, an assistant's. Only a compaction's request was self-checked,
/// so under the threshold the compressor returned it and the host failed
/// open. A reused checkpoint's request is checked too, and one that breaks
/// a rule is ignored, with the reason.
#[test]
fn a_crafted_checkpoint_whose_request_breaks_role_order_is_ignored() {
    let history = vec![
        text(Role::System, "Be brief."),
        text(Role::System, "Use the project's style."),
        calls(&[("call_1", "Read", r#"{"path":"src/lib.rs"}"#)]),
    ];
    let cfg = config(core(2_050, 900, 150, 158, 7), at_threshold());
    let checkpoint = forged(&history, 2, |_| {});

    let outcome = with_checkpoint(&history, &cfg, &checkpoint);
    let report = &outcome.report;
    let why = report.checkpoint_ignored.as_deref().unwrap_or_default();
    assert!(why.contains("role-order"), "ignored because: {why:?}");
    assert_eq!(report.trigger, Trigger::UnderThreshold);
    let all: Vec<Item> = (0..history.len() as u32).map(Item::Kept).collect();
    assert_eq!(outcome.items, all, "as if no checkpoint were given");
}

// ---------------------------------------------------------------------------
// compress: input messages that begin with condense's summary marker
// ---------------------------------------------------------------------------
//
// A runtime that stores condensed requests sends condense's earlier
// messages back as ordinary ones, and a person may quote one. Kept before
// the verbatim tail, such a message was taken for condense's own summary
// (found by its text), so every compaction of the history failed its
// self-check and the host failed open. Condense's messages are found by
// position now; each case keeps a marked message in another place.

/// Very long text, to cross the thresholds below at once.
fn long(word: &str, times: usize) -> String {
    word.repeat(times)
}

/// Found the first time: a system prompt that begins with the marker, kept
/// before the summary of the fold.
#[test]
fn a_system_message_beginning_with_the_summary_marker_is_not_taken_for_the_summary() {
    let history = vec![
        marked(Role::System, ""),
        text(Role::User, long("error[E0308]: mismatched types ", 580)),
        text(Role::Assistant, "The types of `parse` changed."),
        text(Role::User, "Go on."),
    ];
    let cfg = config(core(1_009, 65, 38, 64, 4), at_threshold());

    let outcome = compress_checked(&history, &cfg, &Summarizer::Heuristic).unwrap();
    assert_eq!(outcome.report.trigger, Trigger::Compacted);
    assert!(outcome.report.boundary > 1, "{:?}", outcome.report);
    assert_eq!(outcome.items[0], Item::Kept(0), "the marked system message");
}

/// A user message carrying a tool result, its text beginning with the
/// marker: the clearing pass rewrites it, and it stays before the tail.
#[test]
fn a_result_carrier_beginning_with_the_summary_marker_is_rewritten_as_a_carrier() {
    let history = vec![
        calls(&[("toolu_0001", "str_replace_based_edit_tool", "{}")]),
        Message {
            role: Role::User,
            parts: vec![
                Part::Text(format!("{SUMMARY_MARKER} ")),
                result("toolu_0001", long("exit code 1 the the \n", 217)),
            ],
        },
        text(Role::User, "Now run the tests."),
    ];
    let settings = Settings {
        aggregate_developer_loops: true,
        clear_mode: ClearMode::Truncate,
        result_char_threshold: 1_253,
        keep_tool_results: 0,
        ..at_threshold()
    };
    let cfg = config(core(1_482, 387, 1, 64, 0), settings);

    let outcome = compress_checked(&history, &cfg, &Summarizer::Heuristic).unwrap();
    let report = &outcome.report;
    assert_eq!(report.trigger, Trigger::Compacted);
    assert_eq!((report.boundary, report.passes.results_cleared), (0, 1));
    assert!(matches!(&outcome.items[1], Item::Rewritten(1, _)));
}

/// The pinned opener begins with the marker and carries an opaque part (a
/// redacted thinking block), so it is not even text only.
#[test]
fn a_pinned_opener_beginning_with_the_summary_marker_and_an_opaque_part_stays_the_opener() {
    let redacted = json!({
        "type": "redacted_thinking",
        "data": long("error[E0308]: mismatched types ", 355),
    });
    let results = |a: &str, b: &str| {
        [a, b].map(|id| Message {
            role: Role::Tool,
            parts: vec![
                result(id, "\n".repeat(20)),
                Part::Text(format!("{SUMMARY_MARKER} ")),
            ],
        })
    };
    let mut history = vec![Message {
        role: Role::User,
        parts: vec![
            Part::Text(format!("{SUMMARY_MARKER} ")),
            Part::Opaque(redacted.to_string()),
        ],
    }];
    history.push(calls(&[
        ("call_2", "Edit", r#"{"command":""}"#),
        ("call_1", "Edit", r#"{"command":""}"#),
    ]));
    history.extend(results("call_2", "call_1"));
    history.push(calls(&[
        ("call_4", "Edit", r#"{"command":""}"#),
        ("call_3", "Edit", r#"{"command":""}"#),
    ]));
    history.extend(results("call_4", "call_3"));
    let cfg = config(core(1_656, 65, 2, 64, 0), at_threshold());

    let outcome = compress_checked(&history, &cfg, &Summarizer::Heuristic).unwrap();
    let report = &outcome.report;
    assert_eq!(report.trigger, Trigger::Compacted);
    assert_eq!(report.pinned_opening, Some(0), "{report:?}");
    assert!(report.boundary > 0);
}

/// Two user messages open the history, the first only the marker; the
/// passes alone compact (nothing folded), so no summary may be found at all.
#[test]
fn a_marked_user_message_before_another_is_kept_when_only_the_passes_compact() {
    let history = vec![
        marked(Role::User, ""),
        Message {
            role: Role::User,
            parts: vec![
                Part::Text("{ ".into()),
                Part::Opaque(
                    json!({"type": "image", "source": {"data": "exit status 0 "}}).to_string(),
                ),
            ],
        },
        calls(&[(
            "call_1",
            "MultiEdit",
            &json!({ "command": long("버그 ", 28) }).to_string(),
        )]),
        tool(
            "call_1",
            long("and exit status 0 exit status 0 exit status 0 and \n", 304),
        ),
        calls(&[("call_2", "", r#"{"command":""}"#)]),
        Message {
            role: Role::Tool,
            parts: vec![
                result("call_2", "\n".repeat(20)),
                Part::Text(format!("{SUMMARY_MARKER} ")),
            ],
        },
    ];
    let settings = Settings {
        strip_reasoning_after_turns: 1,
        max_loop_steps_before_aggregate: 4,
        clear_mode: ClearMode::Truncate,
        result_char_threshold: 2_232,
        keep_tool_results: 1,
        exclude_tools: vec!["?".into()],
        ..at_threshold()
    };
    let cfg = config(core(2_035, 590, 3, 375, 8), settings);

    let outcome = compress_checked(&history, &cfg, &Summarizer::Heuristic).unwrap();
    let report = &outcome.report;
    assert_eq!(report.trigger, Trigger::Compacted);
    assert_eq!((report.boundary, report.passes.results_cleared), (0, 1));
    assert_eq!(outcome.items[0], Item::Kept(0), "the marked user message");
}

// ---------------------------------------------------------------------------
// formats: compressor-like outputs render without panicking
// ---------------------------------------------------------------------------

/// What the `formats` target checks first of any body: it parses, and
/// renders from its own messages to the same JSON, key order included.
fn parse_round_trip(body: Value, format: Format) -> Parsed {
    let text = body.to_string();
    let parsed = Parsed::parse(body, format).expect("the body parses");
    let all: Vec<Item> = (0..parsed.messages().len() as u32)
        .map(Item::Kept)
        .collect();
    assert_eq!(parsed.render(&all).to_string(), text, "round trip");
    parsed
}

/// An Anthropic body's top-level `system` is a field, not a message: a
/// rewrite that changed its role was rendered into `messages`, where the
/// `system` list was indexed as a message, and the render panicked. It
/// renders into `system`, by its position, whatever its role became.
#[test]
fn an_anthropic_top_level_system_rewritten_into_another_role_renders_into_system() {
    let body = json!({
        "model": "m",
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "fix the test"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "look first", "signature": "c2ln"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cargo test"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "exit code 101"}], "is_error": true},
                {"type": "text", "text": "and the docs"}
            ]},
            {"role": "assistant", "content": [
                {"type": "redacted_thinking", "data": "xx"},
                {"type": "text", "text": "Done."}
            ]}
        ],
        "max_tokens": 1024
    });
    let parsed = parse_round_trip(body, Format::Anthropic);
    let system = &parsed.messages()[0];
    assert_eq!(system.role, Role::System);
    let mut items: Vec<Item> = vec![Item::Rewritten(
        0,
        Message {
            role: Role::User,
            ..system.clone()
        },
    )];
    items.extend((1..parsed.messages().len() as u32).map(Item::Kept));

    let rendered = parsed.render(&items);
    assert_eq!(rendered["system"][0]["text"], "Be brief.");
    assert_eq!(rendered["messages"][0]["content"], "fix the test");
    assert!(Parsed::parse(rendered, Format::Anthropic).is_ok());
}

/// An OpenAI `tool` message's content list is read as a tool result's, not
/// as content blocks (here one the block reader rejects, without a `type`).
/// A rewrite that is not a tool result alone (emptied, as the fuzz target
/// found, or made another role's text) had that content read again as
/// blocks under an `expect`, which panicked. Such content is rendered new.
#[test]
fn an_openai_tool_messages_content_list_renders_new_under_any_rewrite() {
    let body = json!([
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:,"}}
        ]},
        {"role": "assistant", "content": null, "reasoning_content": "think", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{\"path\":\"a.rs\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "Bash", "arguments": "ls"}}
        ]},
        {"role": "tool", "tool_call_id": "call_2", "content": "a.rs"},
        {"role": "tool", "tool_call_id": "call_1", "content": [{"%ype": "text", "text": "fn main() {}"}]},
        {"role": "assistant", "content": "ok"}
    ]);
    let parsed = parse_round_trip(body, Format::OpenAi);
    let carrier = &parsed.messages()[4];
    assert_eq!(carrier.role, Role::Tool);
    let rewrites = [
        Message {
            role: Role::Tool,
            parts: Vec::new(),
        },
        Message::text(Role::Assistant, "fn main() {}"),
    ];
    for rewrite in rewrites {
        let mut items: Vec<Item> = (0..4).map(Item::Kept).collect();
        items.push(Item::Rewritten(4, rewrite.clone()));
        items.push(Item::Kept(5));

        let rendered = parsed.render(&items);
        assert_eq!(rendered[4]["tool_call_id"], "call_1", "{rendered}");
        let _ = Parsed::parse(rendered, Format::OpenAi);
    }
}
