//! One focused test per compression rule, each through the host and the
//! embedded components, on small synthetic histories whose sizes are chosen
//! so that exactly the rule under test decides.

use condense_compressor::state::State;
use condense_host::formats::{Format, Parsed};
use condense_host::{Compressed, SessionCheckpoint, Status};
use condense_model::tokens::{estimate_text, estimate_total};
use condense_model::{
    CoreConfig, Item, Message, Part, Role, SUMMARY_MARKER, ToolCall, ToolResult, Trigger,
};
use condense_tests::{TestConfig, embedded_middleware, summary_of};
use serde_json::{Value, json};

fn user(text: &str) -> Message {
    Message::text(Role::User, text)
}

fn system(text: &str) -> Message {
    Message::text(Role::System, text)
}

/// An assistant step calling `ids` in parallel, and one result message each,
/// every result about 300 tokens.
fn step(ids: &[&str]) -> Vec<Message> {
    let calls = ids
        .iter()
        .map(|id| {
            Part::ToolCall(ToolCall {
                id: id.to_string(),
                name: "Read".into(),
                arguments: format!(r#"{{"file_path":"src/{id}.rs"}}"#),
            })
        })
        .collect();
    let mut out = vec![Message {
        role: Role::Assistant,
        parts: calls,
    }];
    for id in ids {
        out.push(Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: id.to_string(),
                content: format!("fn {id}() {{}}\n").repeat(60),
                is_error: false,
            })],
        });
    }
    out
}

/// One user turn of `steps` single-call steps, ids prefixed by `tag`.
fn turn(tag: &str, request: &str, steps: usize) -> Vec<Message> {
    let mut out = vec![user(request)];
    for s in 0..steps {
        out.extend(step(&[&format!("{tag}{s}")]));
    }
    out
}

fn core(threshold: u32, target: u32, keep: u32) -> CoreConfig {
    CoreConfig {
        token_threshold: threshold,
        target_tokens: target,
        keep_recent_tokens: keep,
        summary_max_tokens: 300,
        ..CoreConfig::default()
    }
}

/// The fold knobs, passes off.
fn config(threshold: u32, target: u32, keep: u32) -> TestConfig {
    TestConfig::new(core(threshold, target, keep))
}

fn compress(
    history: &[Message],
    config: &TestConfig,
    checkpoint: Option<&SessionCheckpoint>,
) -> Compressed {
    let out = config.compress(embedded_middleware(), history, checkpoint);
    assert_ne!(
        out.report.status(),
        Status::FailedOpen,
        "{:?}",
        out.report.reason()
    );
    out
}

fn trigger(out: &Compressed) -> Trigger {
    out.report.guest().unwrap().trigger
}

fn boundary(out: &Compressed) -> usize {
    out.report.guest().unwrap().boundary as usize
}

/// History messages `range`, each kept: what a verbatim run of the request is.
fn kept(range: std::ops::Range<usize>) -> Vec<Item> {
    range.map(|i| Item::Kept(i as u32)).collect()
}

#[test]
fn under_the_threshold_nothing_changes() {
    let history = turn("a", "Fix the bug.", 3);
    let out = compress(&history, &config(100_000, 50_000, 20_000), None);
    assert_eq!(out.items, kept(0..history.len()));
    assert_eq!(trigger(&out), Trigger::UnderThreshold);
    assert!(out.checkpoint.is_none());
    // The report says so (it said `compressed` for a call that changed nothing).
    assert_eq!(out.report.status(), Status::Unchanged);
}

#[test]
fn system_messages_stay_verbatim_and_the_summary_follows_them() {
    let mut history = vec![
        system("You are a coding agent."),
        system("Repository: condense."),
    ];
    history.extend(turn("a", "Fix the bug.", 12));
    let out = compress(&history, &config(3_000, 1_500, 600), None);
    assert_eq!(trigger(&out), Trigger::Compacted);
    assert_eq!(out.report.status(), Status::Compressed);
    assert_eq!(out.items[..2], kept(0..2)[..]);
    assert!(matches!(&out.items[2], Item::Written(_)) && matches!(&out.items[3], Item::Written(_)));
    let messages = out.messages(&history);
    assert!(messages[2].is_condense_summary() && messages[2].role == Role::User);
    assert!(messages[3].is_condense_summary() && messages[3].role == Role::Assistant);
    let text = messages[2].joined_text();
    assert!(
        text.contains("latest user message wins"),
        "framed as reference data: {text}"
    );
}

#[test]
fn recent_turns_are_kept_whole_when_they_fit() {
    let mut history = Vec::new();
    for t in 0..6 {
        history.extend(turn(&format!("t{t}_"), &format!("Request number {t}."), 2));
    }
    let per_turn = estimate_total(&history) / 6;
    // Room for three and a half turns besides the summary pair.
    let target = (per_turn * 7 / 2) as u32 + 450;
    // Whole turns are what a threshold fold keeps; the `cost` rule's keep
    // `keep_recent_tokens`.
    let cfg = TestConfig::new(CoreConfig {
        recent_turns: 2,
        ..core(target + 500, target, 100)
    })
    .at_threshold();
    let out = compress(&history, &cfg, None);
    let b = boundary(&out);
    assert!(history[b].opens_turn(), "the cut is at a turn start: {b}");
    assert_eq!(
        out.items[2..],
        kept(b..history.len())[..],
        "no opener pinned, tail verbatim"
    );
    let kept_turns = history[b..].iter().filter(|m| m.opens_turn()).count();
    assert_eq!(
        kept_turns, 3,
        "as many whole turns as fit, at least recent_turns"
    );
}

#[test]
fn a_long_turn_is_cut_inside_at_a_safe_point_with_its_opener_pinned() {
    let mut history = turn("early", "Set up the project.", 2);
    history.extend(turn("a", "Refactor the parser; keep the tests green.", 30));
    let cfg = config(6_000, 2_500, 1_000);
    let out = compress(&history, &cfg, None);
    let b = boundary(&out);
    let opener = history.iter().rposition(|m| m.opens_turn()).unwrap();
    assert!(
        b > opener && history[b].role == Role::Assistant,
        "cut inside the turn, before a step: {b}"
    );
    assert_eq!(
        out.report.guest().unwrap().pinned_opening,
        Some(opener as u32)
    );
    assert_eq!(
        out.items[2],
        Item::Kept(opener as u32),
        "the opener is pinned verbatim after the summary pair"
    );
    assert_eq!(out.items[3..], kept(b..history.len())[..]);
    assert!(estimate_total(&out.messages(&history)) <= u64::from(cfg.core.target_tokens));
}

#[test]
fn messages_that_begin_with_the_summary_marker_are_not_taken_for_condenses_own() {
    // A runtime that stores condensed requests as its history sends condense's
    // earlier messages back as ordinary ones; a person may quote one. Kept
    // before the tail (a system message, the pinned opener, a region message
    // once its `<think>` span is stripped), they are not condense's summary:
    // before the summary pair was found by position, every compaction of
    // such a history failed its self-check and the host failed open.
    let marked = |role, text: &str| Message::text(role, format!("{SUMMARY_MARKER} {text}"));
    let mut history = vec![marked(Role::System, "Be brief.")];
    history.extend(turn("early", "Set up the project.", 2));
    history.extend(turn("a", "", 30));
    let opener = history.iter().rposition(|m| m.opens_turn()).unwrap();
    history[opener] = marked(
        Role::User,
        "Earlier work, condensed. Now refactor the parser.",
    );
    // At the threshold: the passes' region lies between the summary and
    // the floor, which the `cost` rule folds.
    let mut cfg = config(6_000, 2_500, 1_000).at_threshold();
    cfg.settings.strip_reasoning_after_turns = 1;
    let in_region = history.len() - 8;
    history.insert(
        in_region,
        Message::text(
            Role::Assistant,
            format!("<think>plan</think>{SUMMARY_MARKER} noted"),
        ),
    );

    let out = compress(&history, &cfg, None);
    let report = out.report.guest().unwrap();
    assert_eq!(report.trigger, Trigger::Compacted);
    assert_eq!(report.pinned_opening, Some(opener as u32));
    assert_eq!(out.items[0], Item::Kept(0), "the marked system message");
    let messages = out.messages(&history);
    assert!(
        matches!(&out.items[1], Item::Written(_))
            && messages[1]
                .joined_text()
                .contains("latest user message wins")
    );
    assert!(
        matches!(&out.items[2], Item::Written(_))
            && messages[2].is_condense_summary()
            && messages[2].role == Role::Assistant
    );
    assert_eq!(
        out.items[3],
        Item::Kept(opener as u32),
        "the marked opener, pinned"
    );
    let stripped = Message::text(Role::Assistant, format!("{SUMMARY_MARKER} noted"));
    assert!(
        (report.boundary..report.tail_start).contains(&(in_region as u32))
            && report.passes.reasoning_pruned == 1
            && out
                .items
                .contains(&Item::Rewritten(in_region as u32, stripped)),
        "the assistant message stripped down to the marker, kept before the tail: {report:?}"
    );
}

#[test]
fn a_history_compacted_and_written_back_carries_its_summary_forward() {
    // `condense compact` writes what condense sent as the new history; so
    // may a client that stores the requests it was sent. Without a
    // checkpoint, its summary pair (found by position and marker) is the
    // fold it stands for: the next compaction folds only what came after it,
    // into that summary, instead of summarising the summary as conversation.
    let summarizer = condense_tests::custom_summarizer_middleware();
    let cfg = config(6_000, 2_500, 1_000);
    let mut history = vec![system("Be brief.")];
    history.extend(turn("a", "Set up the project.", 24));
    let first = cfg.compress(summarizer, &history, None);
    assert_eq!(first.report.guest().unwrap().trigger, Trigger::Compacted);
    let old_summary = summary_of(first.checkpoint.as_ref().unwrap());
    let mut written = first.messages(&history);

    let again = cfg.compress(summarizer, &written, None);
    let report = again.report.guest().unwrap();
    assert_eq!(report.trigger, Trigger::UnderThreshold, "{report:?}");
    assert_eq!(report.boundary, 3, "the system message and the pair");
    assert_eq!(
        again.messages(&written),
        written,
        "the pair rebuilt byte for byte"
    );
    assert!(again.checkpoint.is_none());

    written.extend(turn("b", "Now refactor the parser.", 24));
    let next = cfg.compress(summarizer, &written, None);
    assert_ne!(
        next.report.status(),
        Status::FailedOpen,
        "{:?}",
        next.report.reason()
    );
    let report = next.report.guest().unwrap();
    assert_eq!(report.trigger, Trigger::Compacted);
    let summary = summary_of(next.checkpoint.as_ref().unwrap());
    let folded_after_pair = (report.boundary - 3) as usize;
    assert_eq!(report.newly_folded as usize, folded_after_pair);
    assert_eq!(
        summary,
        format!(
            "{old_summary}\nCOUNTING SUMMARIZER: {folded_after_pair} messages, {} tool calls folded",
            written[3..report.boundary as usize]
                .iter()
                .map(|m| m.tool_calls().count())
                .sum::<usize>()
        )
    );
    let sent = next.messages(&written);
    assert_eq!(
        sent.iter().filter(|m| m.is_condense_summary()).count(),
        2,
        "one summary pair, the old one folded into it"
    );

    // A pair that is not condense's own (a person quoting the marker) is
    // conversation like any other.
    let mut quoted = written[..1].to_vec();
    quoted.push(user(&format!("{SUMMARY_MARKER} my notes")));
    quoted.push(Message::text(Role::Assistant, "Noted."));
    quoted.extend(turn("c", "Go on.", 24));
    let out = cfg.compress(summarizer, &quoted, None);
    let report = out.report.guest().unwrap();
    assert_eq!(report.trigger, Trigger::Compacted);
    assert!(summary_of(out.checkpoint.as_ref().unwrap()).starts_with("COUNTING SUMMARIZER: "));
}

#[test]
fn a_parallel_batch_is_never_split() {
    let mut history = vec![user("Read everything.")];
    for s in 0..8 {
        let ids: Vec<String> = (0..4).map(|i| format!("p{s}_{i}")).collect();
        history.extend(step(&ids.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    let out = compress(&history, &config(5_000, 2_000, 500), None);
    let b = boundary(&out);
    assert_eq!(
        history[b].role,
        Role::Assistant,
        "the tail starts at a batch, not inside one"
    );
    assert_eq!(history[b].tool_calls().count(), 4);
}

#[test]
fn folding_that_would_not_shrink_the_request_is_skipped() {
    // Over the threshold, but all of it is the opener and one huge step that is
    // still in the tail: a summary could only add tokens.
    let mut history = vec![user("Analyse this log.")];
    let mut big = step(&["huge"]);
    if let Part::ToolResult(r) = &mut big[1].parts[0] {
        r.content = "error: disk full\n".repeat(2_000);
    }
    history.extend(big);
    let out = compress(&history, &config(3_000, 1_500, 1_000), None);
    assert_eq!(trigger(&out), Trigger::WontShrink);
    assert_eq!(out.items, kept(0..history.len()));
}

#[test]
fn between_compactions_the_checkpoint_keeps_the_prefix_byte_identical() {
    let mut history = turn("a", "Refactor the parser.", 30);
    let cfg = config(6_000, 2_500, 1_000);
    let first = compress(&history, &cfg, None);
    let first_len = history.len();
    let checkpoint = first.checkpoint.clone().expect("compacted");
    // Two more steps: under the threshold again, so the fold is reused.
    history.extend(step(&["n1"]));
    history.extend(step(&["n2"]));
    let next = compress(&history, &cfg, Some(&checkpoint));
    assert_eq!(trigger(&next), Trigger::ReusedCheckpoint);
    assert_eq!(
        next.report.sent_from, checkpoint.checkpoint.boundary,
        "only the messages after the fold were sent"
    );
    assert!(
        next.items.starts_with(&first.items),
        "the previous request is a prefix"
    );
    assert!(
        next.messages(&history)
            .starts_with(&first.messages(&history[..first_len])),
        "the previous request is a prefix"
    );
    assert_eq!(next.checkpoint, Some(checkpoint.clone()));
    // Deterministic: the same call gives the same bytes.
    assert_eq!(
        compress(&history, &cfg, Some(&checkpoint)).items,
        next.items
    );
}

#[test]
fn the_next_compaction_summarises_only_the_newly_folded_messages() {
    let mut history = turn("a", "Refactor the parser.", 30);
    // A summary budget that holds every file of both folds.
    let cfg = TestConfig::new(CoreConfig {
        summary_max_tokens: 1_200,
        ..core(6_000, 2_500, 1_000)
    });
    let first = compress(&history, &cfg, None);
    let checkpoint = first.checkpoint.clone().unwrap();
    for s in 0..20 {
        history.extend(step(&[&format!("late{s}")]));
    }
    let second = compress(&history, &cfg, Some(&checkpoint));
    let report = second.report.guest().unwrap();
    assert_eq!(report.trigger, Trigger::Compacted);
    let old_boundary = checkpoint.checkpoint.boundary;
    assert!(report.boundary > old_boundary);
    // Only messages after the old boundary were handed to the summarizer.
    assert_eq!(report.newly_folded, report.boundary - old_boundary);
    let summary = summary_of(&second.checkpoint.unwrap());
    assert!(
        summary.contains("src/a0.rs"),
        "facts from the first fold survive: {summary}"
    );
    assert!(
        summary.contains("src/late0.rs"),
        "facts from the second fold are added"
    );
}

#[test]
fn a_checkpoint_for_another_history_is_ignored() {
    let history = turn("a", "Refactor the parser.", 30);
    let cfg = config(6_000, 2_500, 1_000);
    let first = compress(&history, &cfg, None);
    // The checkpoint claims another history's prefix, both in the host's
    // hash and in the compressor's own.
    let mut forged = first.checkpoint.clone().unwrap();
    let mut state = State::read(&forged.checkpoint).unwrap();
    state.prefix.hash = "0".repeat(32);
    state.summary = "STALE SUMMARY".into();
    forged.checkpoint = state.to_checkpoint();
    forged.prefix_hash = "0".repeat(32);
    let out = compress(&history, &cfg, Some(&forged));
    assert_eq!(out.report.sent_from, 0, "the host sent the whole history");
    assert!(
        out.report.checkpoint_ignored.is_some(),
        "{:?}",
        out.report.guest()
    );
    assert_eq!(
        out.items, first.items,
        "recomputed as if there were no checkpoint"
    );
    assert_eq!(out.checkpoint, first.checkpoint);
    assert!(
        !out.messages(&history)
            .iter()
            .any(|m| m.joined_text().contains("STALE SUMMARY"))
    );
}

#[test]
fn the_framing_follows_the_conversation_language() {
    let mut history = turn(
        "a",
        "Bitte repariere den Parser und prüfe, dass die Tests nicht fehlschlagen.",
        30,
    );
    history[0] = user("Bitte repariere den Parser und prüfe, dass die Tests nicht fehlschlagen.");
    let out = compress(&history, &config(6_000, 2_500, 1_000), None);
    let messages = out.messages(&history);
    let summary = messages[0].joined_text();
    assert!(
        summary.contains("neueste Nachricht des Nutzers"),
        "{summary}"
    );
    assert!(messages[1].joined_text().contains("Verstanden"));
}

/// A distinct assistant answer of about 3,000 tokens.
fn long_answer(turn: usize) -> String {
    let mut text = format!("Answer {turn}.");
    let mut k = 0;
    while estimate_text(&text) < 3_000 {
        for _ in 0..10 {
            text.push_str(&format!(
                " Step {turn}.{k}: the parser now handles case {k} of part {turn}."
            ));
            k += 1;
        }
    }
    text
}

/// Twelve turns of `continue` and a long answer, as request-body JSON
/// messages: `user(last)` is the last `continue`, with what makes its JSON
/// differ from the others' though its model is the same.
fn continue_turns(user: impl Fn(bool) -> Value, assistant: impl Fn(&str) -> Value) -> Vec<Value> {
    (0..12)
        .flat_map(|t| [user(t == 11), assistant(&long_answer(t))])
        .collect()
}

/// Compresses `body` through the host and checks that the verbatim tail is
/// rendered back as the original JSON messages, byte for byte. Returns the
/// last `continue` as rendered.
fn assert_tail_comes_back_byte_for_byte(body: Value, format: Format) -> Value {
    let parsed = Parsed::parse(body.clone(), format).unwrap();
    let history = parsed.messages();
    let last_continue = history.len() - 2;
    // What makes the case: in the model the last `continue` is the first
    // one, which is folded. A renderer matching kept messages by value (with
    // a cursor from the start) took the first one's JSON for it.
    assert_eq!(history[last_continue], history[0]);
    assert_eq!(history[0], user("continue"));
    // No system message: history index i is `messages[i]`.
    let original = body["messages"].as_array().unwrap();
    assert_ne!(original[last_continue], original[0], "but not in JSON");

    let cfg = TestConfig::new(CoreConfig {
        token_threshold: 5_000,
        target_tokens: 4_000,
        keep_recent_tokens: 3_500,
        summary_max_tokens: 300,
        recent_turns: 1,
    });
    let sent = compress(history, &cfg, None);
    let report = sent.report.guest().unwrap();
    assert_eq!(report.trigger, Trigger::Compacted, "{report:?}");
    assert!(report.boundary > 0, "{report:?}");
    let tail_start = report.tail_start as usize;
    assert!(
        tail_start <= last_continue,
        "the last `continue` is in the tail: {report:?}"
    );

    let rendered = parsed.render(&sent.items);
    let out = rendered["messages"].as_array().unwrap();
    let tail = &original[tail_start..];
    assert!(out.len() > tail.len(), "the summary pair comes first");
    let out_tail = &out[out.len() - tail.len()..];
    assert_eq!(out_tail, tail, "{format}: the tail is the original JSON");
    assert_eq!(
        serde_json::to_string(out_tail).unwrap(),
        serde_json::to_string(tail).unwrap(),
        "{format}: byte for byte"
    );
    assert_eq!(
        out[out.len() - 2],
        original[last_continue],
        "{format}: the last `continue` carries its own JSON"
    );
    out[out.len() - 2].clone()
}

/// Regression: a kept message came back with another message's JSON. The
/// renderer matched the output to the input by model equality with a cursor
/// from 0, so the last `continue` (kept, with its `cache_control` or `name`)
/// got the JSON of the first, folded `continue`, equal to it in the model:
/// the prompt-cache breakpoint was lost. Kept messages are now rendered by
/// index.
#[test]
fn a_kept_message_comes_back_as_its_own_json_not_an_equal_earlier_ones() {
    // Anthropic: the last `continue` carries the prompt-cache breakpoint.
    let messages = continue_turns(
        |last| {
            if last {
                json!({"role": "user", "content": [
                    {"type": "text", "text": "continue", "cache_control": {"type": "ephemeral"}},
                ]})
            } else {
                json!({"role": "user", "content": "continue"})
            }
        },
        |text| json!({"role": "assistant", "content": [{"type": "text", "text": text}]}),
    );
    let body = json!({"model": "m", "max_tokens": 1024, "messages": messages});
    let last = assert_tail_comes_back_byte_for_byte(body, Format::Anthropic);
    assert_eq!(
        last["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );

    // OpenAI has no cache_control: the last `continue` has a `name` instead.
    let messages = continue_turns(
        |last| {
            if last {
                json!({"role": "user", "content": "continue", "name": "ann"})
            } else {
                json!({"role": "user", "content": "continue"})
            }
        },
        |text| json!({"role": "assistant", "content": text}),
    );
    let body = json!({"model": "m", "messages": messages});
    let last = assert_tail_comes_back_byte_for_byte(body, Format::OpenAi);
    assert_eq!(last["name"], "ann");
}

/// Regression: a message a pass rewrote was rendered anew from its parts, so
/// a block it did not touch lost its keys (a `cache_control` breakpoint) and
/// a tool result's list content came back as a string. A rewrite is now its
/// original with only the change the pass made.
#[test]
fn a_rewritten_message_keeps_its_untouched_blocks_and_its_contents_shape() {
    let mut messages = vec![json!({"role": "user", "content": "read the files"})];
    for i in 0..12 {
        let id = format!("r{i}");
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("reading file {i}")},
            {"type": "tool_use", "id": id, "name": "Read", "input": {"path": format!("f{i}.rs")}},
        ]}));
        let file = format!("fn f{i}() {{ let x = {i}; }}\n").repeat(120);
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": [{"type": "text", "text": file}]},
            {"type": "text", "text": "noted", "cache_control": {"type": "ephemeral"}},
        ]}));
    }
    messages.push(json!({"role": "assistant", "content": "All read."}));
    let body = json!({"model": "m", "max_tokens": 1024, "messages": messages});
    let parsed = Parsed::parse(body.clone(), Format::Anthropic).unwrap();
    // Over the threshold, and the passes alone get it under the target.
    let cfg = TestConfig::new(CoreConfig {
        token_threshold: 17_000,
        target_tokens: 12_000,
        keep_recent_tokens: 2_000,
        summary_max_tokens: 300,
        recent_turns: 1,
    })
    .with_passes();
    let sent = compress(parsed.messages(), &cfg, None);
    let report = sent.report.guest().unwrap();
    assert!(report.passes.results_cleared > 0, "{report:?}");

    let rendered = parsed.render(&sent.items);
    let out = rendered["messages"].as_array().unwrap();
    let original = body["messages"].as_array().unwrap();
    let mut rewritten = 0;
    for (item, json) in sent.items.iter().zip(out) {
        let Item::Rewritten(i, _) = item else {
            continue;
        };
        let before = &original[*i as usize];
        if before["role"] != "user" {
            continue;
        }
        rewritten += 1;
        assert_eq!(
            json["content"][1], before["content"][1],
            "the breakpoint stays"
        );
        let content = &json["content"][0]["content"];
        assert!(content.is_array(), "a list stays a list: {content}");
        assert_ne!(
            content, &before["content"][0]["content"],
            "and was truncated"
        );
    }
    assert!(rewritten > 0, "{:?}", sent.items);
}
