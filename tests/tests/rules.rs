//! One focused test per compression rule, each through the host and the
//! embedded components, on small synthetic histories whose sizes are chosen
//! so that exactly the rule under test decides.

use condense_host::{Compressed, Status};
use condense_model::tokens::estimate_total;
use condense_model::{
    Checkpoint, Config, Message, Part, Role, SUMMARY_MARKER, ToolCall, ToolResult, Trigger,
};
use condense_tests::embedded_middleware;

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

fn config(threshold: u32, target: u32, keep: u32) -> Config {
    Config {
        token_threshold: threshold,
        target_tokens: target,
        keep_recent_tokens: keep,
        summary_max_tokens: 300,
        ..Config::default()
    }
}

fn compress(history: &[Message], config: &Config, checkpoint: Option<&Checkpoint>) -> Compressed {
    let out = embedded_middleware().compress(history, config, checkpoint);
    assert_eq!(
        out.report.status,
        Status::Compressed,
        "{:?}",
        out.report.reason
    );
    out
}

fn trigger(out: &Compressed) -> Trigger {
    out.report.guest.as_ref().unwrap().trigger
}

fn boundary(out: &Compressed) -> usize {
    out.report.guest.as_ref().unwrap().boundary as usize
}

#[test]
fn under_the_threshold_nothing_changes() {
    let history = turn("a", "Fix the bug.", 3);
    let out = compress(&history, &config(100_000, 50_000, 20_000), None);
    assert_eq!(out.messages, history);
    assert_eq!(trigger(&out), Trigger::UnderThreshold);
    assert!(out.checkpoint.is_none());
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
    assert_eq!(&out.messages[..2], &history[..2]);
    assert!(out.messages[2].is_condense_summary() && out.messages[2].role == Role::User);
    assert!(out.messages[3].is_condense_summary() && out.messages[3].role == Role::Assistant);
    let text = out.messages[2].joined_text();
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
    let cfg = Config {
        recent_turns: 2,
        ..config(target + 500, target, 100)
    };
    let out = compress(&history, &cfg, None);
    let b = boundary(&out);
    assert!(history[b].opens_turn(), "the cut is at a turn start: {b}");
    assert_eq!(
        &out.messages[2..],
        &history[b..],
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
        out.report.guest.as_ref().unwrap().pinned_opening,
        Some(opener as u32)
    );
    assert_eq!(
        out.messages[2], history[opener],
        "the opener is pinned verbatim after the summary pair"
    );
    assert_eq!(&out.messages[3..], &history[b..]);
    assert!(estimate_total(&out.messages) <= u64::from(cfg.target_tokens));
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
    let mut cfg = config(6_000, 2_500, 1_000);
    cfg.strip_reasoning_after_turns = 1;
    let in_region = history.len() - 8;
    history.insert(
        in_region,
        Message::text(
            Role::Assistant,
            format!("<think>plan</think>{SUMMARY_MARKER} noted"),
        ),
    );

    let out = compress(&history, &cfg, None);
    let report = out.report.guest.as_ref().unwrap();
    assert_eq!(report.trigger, Trigger::Compacted);
    assert_eq!(report.pinned_opening, Some(opener as u32));
    assert_eq!(out.messages[0], history[0], "the marked system message");
    assert!(
        out.messages[1]
            .joined_text()
            .contains("latest user message wins")
    );
    assert!(out.messages[2].is_condense_summary() && out.messages[2].role == Role::Assistant);
    assert_eq!(
        out.messages[3], history[opener],
        "the marked opener, pinned"
    );
    let stripped = Message::text(Role::Assistant, format!("{SUMMARY_MARKER} noted"));
    assert!(
        (report.boundary..report.tail_start).contains(&(in_region as u32))
            && report.passes.reasoning_pruned == 1
            && out.messages.contains(&stripped),
        "the assistant message stripped down to the marker, kept before the tail: {report:?}"
    );
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
    assert_eq!(out.messages, history);
}

#[test]
fn between_compactions_the_checkpoint_keeps_the_prefix_byte_identical() {
    let mut history = turn("a", "Refactor the parser.", 30);
    let cfg = config(6_000, 2_500, 1_000);
    let first = compress(&history, &cfg, None);
    let checkpoint = first.checkpoint.clone().expect("compacted");
    // Two more steps: under the threshold again, so the fold is reused.
    history.extend(step(&["n1"]));
    history.extend(step(&["n2"]));
    let next = compress(&history, &cfg, Some(&checkpoint));
    assert_eq!(trigger(&next), Trigger::ReusedCheckpoint);
    assert!(
        next.messages.starts_with(&first.messages),
        "the previous request is a prefix"
    );
    assert_eq!(next.checkpoint, Some(checkpoint.clone()));
    // Deterministic: the same call gives the same bytes.
    assert_eq!(
        compress(&history, &cfg, Some(&checkpoint)).messages,
        next.messages
    );
}

#[test]
fn the_next_compaction_summarises_only_the_newly_folded_messages() {
    let mut history = turn("a", "Refactor the parser.", 30);
    // A summary budget that holds every file of both folds.
    let cfg = Config {
        summary_max_tokens: 1_200,
        ..config(6_000, 2_500, 1_000)
    };
    let first = compress(&history, &cfg, None);
    let checkpoint = first.checkpoint.clone().unwrap();
    for s in 0..20 {
        history.extend(step(&[&format!("late{s}")]));
    }
    let second = compress(&history, &cfg, Some(&checkpoint));
    let report = second.report.guest.as_ref().unwrap();
    assert_eq!(report.trigger, Trigger::Compacted);
    assert!(report.boundary > checkpoint.boundary);
    // Only messages after the old boundary were handed to the summarizer.
    assert_eq!(report.newly_folded, report.boundary - checkpoint.boundary);
    let summary = second.checkpoint.unwrap().summary;
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
    let mut forged = first.checkpoint.clone().unwrap();
    forged.prefix_hash = "0".repeat(32);
    forged.summary = "STALE SUMMARY".into();
    let out = compress(&history, &cfg, Some(&forged));
    assert_eq!(
        out.messages, first.messages,
        "recomputed as if there were no checkpoint"
    );
    assert!(
        !out.messages
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
    let summary = out.messages[0].joined_text();
    assert!(
        summary.contains("neueste Nachricht des Nutzers"),
        "{summary}"
    );
    assert!(out.messages[1].joined_text().contains("Verstanden"));
}
