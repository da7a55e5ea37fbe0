//! Old tool-result clearing: long tool results outside the last
//! `keep_tool_results` are cut to a head and a tail (`Truncate`) or replaced
//! by a placeholder (`Clear`). Old results are rarely read again, and they are
//! usually what fills a coding agent's context.

use super::Kept;
use crate::settings::{ClearMode, Settings, matches_any};
use condense_model::invariants::call_names;
use condense_model::{Message, Part, Role, ToolResult};
use std::collections::{HashMap, HashSet};

/// The tool name given to a result whose call is not in the history.
const UNKNOWN_TOOL: &str = "tool";

/// Returns the region and how many tool results were truncated or cleared.
/// With `recall`, each placeholder names the handle of the message it is
/// in (`condense_model::recall::result_handle` of the original).
pub fn apply(
    kept: Vec<Kept>,
    history: &[Message],
    config: &Settings,
    recall: bool,
) -> (Vec<Kept>, u32) {
    if config.clear_mode == ClearMode::Off {
        return (kept, 0);
    }
    let clearer = Clearer::new(history, config, recall);
    let mut rewritten = 0;
    let kept = kept
        .into_iter()
        .map(|k| {
            let (message, count) = clearer.rewrite_message(k.message);
            rewritten += count;
            Kept {
                origin: k.origin,
                message,
            }
        })
        .collect();
    (kept, rewritten)
}

/// What the pass needs to know about the history to decide on one result.
struct Clearer<'h> {
    mode: ClearMode,
    threshold: usize,
    /// Characters a truncated result keeps.
    keep: usize,
    protected: HashSet<&'h str>,
    names: HashMap<&'h str, &'h str>,
    exclude: &'h [String],
    keep_errors: bool,
    recall: bool,
}

impl<'h> Clearer<'h> {
    fn new(history: &'h [Message], config: &'h Settings, recall: bool) -> Self {
        Clearer {
            mode: config.clear_mode,
            threshold: config.result_char_threshold as usize,
            keep: config.result_char_threshold as usize * config.truncate_keep_percent as usize
                / 100,
            protected: latest_result_ids(history, config.keep_tool_results as usize),
            names: call_names(history),
            exclude: &config.exclude_tools,
            keep_errors: config.keep_error_results,
            recall,
        }
    }

    /// The message with its long, unprotected results rewritten, and how many
    /// were. Untouched parts are moved, not rebuilt, so an untouched message
    /// comes back as the same value.
    fn rewrite_message(&self, message: Message) -> (Message, u32) {
        if message.role == Role::System || !message.has_tool_results() {
            return (message, 0);
        }
        let note = if self.recall {
            condense_model::recall::result_note(&condense_model::recall::result_handle(&message))
        } else {
            String::new()
        };
        let mut count = 0;
        let parts = message
            .parts
            .into_iter()
            .map(|part| match part {
                Part::ToolResult(result) => match self.rewrite_content(&result, &note) {
                    Some(content) => {
                        count += 1;
                        Part::ToolResult(ToolResult { content, ..result })
                    }
                    None => Part::ToolResult(result),
                },
                other => other,
            })
            .collect();
        let message = Message {
            role: message.role,
            parts,
        };
        (message, count)
    }

    /// The new content of `result`, or `None` when it stays as it is; the
    /// placeholder ends with `note`.
    fn rewrite_content(&self, result: &ToolResult, note: &str) -> Option<String> {
        if self.protected.contains(result.call_id.as_str()) || (self.keep_errors && result.is_error)
        {
            return None;
        }
        let tool = self.tool_name(&result.call_id);
        if matches_any(self.exclude, tool) {
            return None;
        }
        let content = &result.content;
        let total = content.chars().count();
        if total <= self.threshold {
            return None;
        }
        // A structured result with an image (the host's JSON text of it):
        // a head and a tail of it would be broken JSON and half an image.
        // Cleared, it goes whole; truncated, it stays as it is.
        if self.mode == ClearMode::Truncate && condense_model::tokens::carries_image(content) {
            return None;
        }
        let rewritten = match self.mode {
            ClearMode::Off => return None,
            ClearMode::Truncate => truncate(content, total, self.keep, |elided, lines| {
                truncation_marker(elided, total, lines, tool, &result.call_id, note)
            }),
            ClearMode::Clear => {
                clear_marker(tool, total, line_count(content), &result.call_id, note)
            }
        };
        // With a small threshold and a long call id, the marker can outweigh
        // what it replaces; the pass never grows a result.
        (rewritten.chars().count() < total).then_some(rewritten)
    }

    fn tool_name(&self, call_id: &str) -> &'h str {
        self.names.get(call_id).copied().unwrap_or(UNKNOWN_TOOL)
    }
}

/// The call ids of the last `keep` tool results of the history.
fn latest_result_ids(history: &[Message], keep: usize) -> HashSet<&str> {
    history
        .iter()
        .rev()
        .flat_map(|m| m.parts.iter().rev())
        .filter_map(|part| match part {
            Part::ToolResult(r) => Some(r.call_id.as_str()),
            _ => None,
        })
        .take(keep)
        .collect()
}

fn truncation_marker(
    elided: usize,
    total: usize,
    lines: usize,
    tool: &str,
    call_id: &str,
    note: &str,
) -> String {
    format!(
        "[condense: {elided} of {total} characters ({lines} lines) elided from this {tool} result, call {call_id}{note}]"
    )
}

fn clear_marker(tool: &str, total: usize, lines: usize, call_id: &str, note: &str) -> String {
    format!(
        "[condense: {tool} result cleared ({total} characters, {lines} lines), call {call_id}{note}]"
    )
}

/// `content` (of `total` chars) cut to a head and a tail of about `keep` chars
/// in all, two thirds head, with the marker `marker(elided, lines)` between.
fn truncate(
    content: &str,
    total: usize,
    keep: usize,
    marker: impl FnOnce(usize, usize) -> String,
) -> String {
    let head_chars = keep * 2 / 3;
    let tail_chars = keep - head_chars;
    let head_end = head_end(content, head_chars);
    let tail_start = tail_start(content, total - tail_chars, tail_chars);
    let (head, elided, tail) = (
        &content[..head_end],
        &content[head_end..tail_start],
        &content[tail_start..],
    );
    let marker = marker(elided.chars().count(), line_count(elided));
    let mut out = String::with_capacity(head.len() + marker.len() + tail.len() + 2);
    out.push_str(head);
    if !head.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&marker);
    out.push('\n');
    out.push_str(tail);
    out
}

/// Where a head of `chars` chars ends: pulled back to just after a newline in
/// the window's last quarter, so the head does not stop mid-line.
fn head_end(content: &str, chars: usize) -> usize {
    let end = byte_offset(content, chars);
    let window = byte_offset(content, chars - chars / 4);
    content[window..end]
        .rfind('\n')
        .map_or(end, |at| window + at + 1)
}

/// Where a tail starting at char `start` begins: pushed forward to just after
/// a newline in the window's first quarter, so the tail starts on a line.
fn tail_start(content: &str, start: usize, chars: usize) -> usize {
    let begin = byte_offset(content, start);
    if content[..begin].ends_with('\n') {
        return begin;
    }
    let window = byte_offset(content, start + chars / 4);
    content[begin..window]
        .find('\n')
        .map_or(begin, |at| begin + at + 1)
}

/// The byte offset of char `n` of `text` (its length when `n` is past the end).
fn byte_offset(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(at, _)| at)
}

/// Lines of `text`, a final line without a newline included.
fn line_count(text: &str) -> usize {
    text.lines().count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_model::ToolCall;

    const THRESHOLD: u32 = 120;

    fn config(mode: ClearMode) -> Settings {
        Settings {
            clear_mode: mode,
            result_char_threshold: THRESHOLD,
            keep_tool_results: 0,
            ..Settings::default()
        }
    }

    fn call_part(id: &str, name: &str) -> Part {
        Part::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: "{}".into(),
        })
    }

    fn call(id: &str, name: &str) -> Message {
        Message {
            role: Role::Assistant,
            parts: vec![call_part(id, name)],
        }
    }

    fn result_part(id: &str, content: &str, is_error: bool) -> Part {
        Part::ToolResult(ToolResult {
            call_id: id.into(),
            content: content.into(),
            is_error,
        })
    }

    fn result(id: &str, content: &str) -> Message {
        Message {
            role: Role::Tool,
            parts: vec![result_part(id, content, false)],
        }
    }

    fn content_of(message: &Message) -> &str {
        &message
            .tool_results()
            .next()
            .expect("a tool result")
            .content
    }

    fn whole(history: &[Message]) -> Vec<Kept> {
        super::super::unchanged(history, 0)
    }

    fn run(history: &[Message], config: &Settings) -> (Vec<Kept>, u32) {
        apply(whole(history), history, config, false)
    }

    /// A `call`/`result` pair per content, ids `c0`, `c1`, …, all for `tool`.
    fn exchanges(tool: &str, contents: &[&str]) -> Vec<Message> {
        contents
            .iter()
            .enumerate()
            .flat_map(|(i, content)| {
                let id = format!("c{i}");
                [call(&id, tool), result(&id, content)]
            })
            .collect()
    }

    /// `n` numbered lines of 9 chars each, newline included.
    fn numbered_lines(n: usize) -> String {
        (0..n).map(|i| format!("line {i:03}\n")).collect()
    }

    /// The one rewritten result of a `Bash` call `c0` with `content`.
    fn rewritten(content: &str, mode: ClearMode) -> String {
        let history = exchanges("Bash", &[content]);
        let (kept, _) = run(&history, &config(mode));
        content_of(&kept[1].message).to_string()
    }

    /// Splits a truncated result into head, marker and tail.
    fn split_truncated(text: &str) -> (&str, &str, &str) {
        let start = text.find("[condense: ").expect("a marker");
        let end = start + text[start..].find("]\n").expect("marker end") + 1;
        (&text[..start], &text[start..end], &text[end + 1..])
    }

    /// The numbers in a truncation marker: elided, total, lines.
    fn marker_counts(marker: &str) -> (usize, usize, usize) {
        let numbers: Vec<usize> = marker
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect();
        (numbers[0], numbers[1], numbers[2])
    }

    #[test]
    fn a_result_carrying_an_image_is_never_cut_in_two() {
        let data = "iVBORw0KGgo".repeat(500);
        let image = format!(
            r#"[{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{data}"}}}}]"#
        );
        let history = vec![
            Message::text(Role::User, "look"),
            call("a", "Screenshot"),
            result("a", &image),
            call("b", "Bash"),
            result("b", "ok"),
        ];
        let (kept, count) = run(&history, &config(ClearMode::Truncate));
        assert_eq!(count, 0);
        assert_eq!(kept[2].message, history[2]);
        let (kept, count) = run(&history, &config(ClearMode::Clear));
        assert_eq!(count, 1);
        assert_ne!(kept[2].message, history[2]);
    }

    #[test]
    fn off_leaves_everything() {
        let long = "x".repeat(1_000);
        let history = exchanges("Bash", &[&long, &long]);
        let (kept, count) = run(&history, &config(ClearMode::Off));
        assert_eq!(kept, whole(&history));
        assert_eq!(count, 0);
    }

    #[test]
    fn only_results_over_the_threshold_are_long() {
        let under = "u".repeat(THRESHOLD as usize - 1);
        let at = "a".repeat(THRESHOLD as usize);
        let over = "o".repeat(THRESHOLD as usize + 50);
        let history = exchanges("Bash", &[&under, &at, &over]);
        for mode in [ClearMode::Truncate, ClearMode::Clear] {
            let (kept, count) = run(&history, &config(mode));
            assert_eq!(kept[..5], whole(&history)[..5]);
            assert_ne!(kept[5], whole(&history)[5]);
            assert_eq!(count, 1);
        }
    }

    #[test]
    fn threshold_counts_chars_not_bytes() {
        // 120 chars, 240 bytes: at the threshold, so not long.
        let wide = "é".repeat(THRESHOLD as usize);
        let history = exchanges("Bash", &[&wide]);
        let (kept, count) = run(&history, &config(ClearMode::Clear));
        assert_eq!(kept, whole(&history));
        assert_eq!(count, 0);
    }

    #[test]
    fn keeps_the_last_results_of_history_even_inside_the_region() {
        let long = "x".repeat(500);
        let history = exchanges("Bash", &[&long, &long, &long]);
        let config = Settings {
            keep_tool_results: 2,
            ..config(ClearMode::Clear)
        };
        let (kept, count) = run(&history, &config);
        assert_ne!(kept[1], whole(&history)[1]);
        assert_eq!(kept[3..], whole(&history)[3..]);
        assert_eq!(count, 1);
    }

    #[test]
    fn protection_counts_results_after_the_region() {
        let long = "x".repeat(500);
        let history = exchanges("Bash", &[&long, &long, &long]);
        let region = whole(&history)[..4].to_vec();
        let config = Settings {
            keep_tool_results: 1,
            ..config(ClearMode::Clear)
        };
        let (kept, count) = apply(region.clone(), &history, &config, false);
        assert_ne!(kept[1], region[1]);
        assert_ne!(kept[3], region[3]);
        assert_eq!(count, 2);
    }

    #[test]
    fn protection_counts_result_parts_not_messages() {
        let long = "x".repeat(500);
        let carrier = Message {
            role: Role::User,
            parts: vec![
                result_part("a", &long, false),
                result_part("b", &long, false),
            ],
        };
        let history = vec![call("a", "Bash"), call("b", "Bash"), carrier];
        let config = Settings {
            keep_tool_results: 1,
            ..config(ClearMode::Clear)
        };
        let (kept, count) = run(&history, &config);
        let results: Vec<&ToolResult> = kept[2].message.tool_results().collect();
        assert!(
            results[0]
                .content
                .starts_with("[condense: Bash result cleared")
        );
        assert_eq!(results[1].content, long);
        assert_eq!(count, 1);
    }

    #[test]
    fn keep_zero_protects_nothing() {
        let long = "x".repeat(500);
        let history = exchanges("Bash", &[&long, &long]);
        let (kept, count) = run(&history, &config(ClearMode::Clear));
        assert_ne!(kept[1], whole(&history)[1]);
        assert_ne!(kept[3], whole(&history)[3]);
        assert_eq!(count, 2);
    }

    #[test]
    fn excluded_tools_are_never_cleared() {
        let long = "x".repeat(500);
        let history = vec![
            call("r", "ReadFile"),
            result("r", &long),
            call("m", "mcp__github__get_file"),
            result("m", &long),
            call("b", "Bash"),
            result("b", &long),
        ];
        let config = Settings {
            exclude_tools: vec!["Read*".into(), "mcp__*".into()],
            ..config(ClearMode::Truncate)
        };
        let (kept, count) = run(&history, &config);
        assert_eq!(kept[..4], whole(&history)[..4]);
        assert_ne!(kept[5], whole(&history)[5]);
        assert_eq!(count, 1);
    }

    #[test]
    fn unknown_call_ids_are_named_tool() {
        let long = "x".repeat(500);
        let history = vec![result("orphan", &long)];
        let (kept, _) = run(&history, &config(ClearMode::Clear));
        assert_eq!(
            content_of(&kept[0].message),
            "[condense: tool result cleared (500 characters, 1 lines), call orphan]"
        );
        let excluded = Settings {
            exclude_tools: vec!["tool".into()],
            ..config(ClearMode::Clear)
        };
        assert_eq!(run(&history, &excluded).1, 0);
    }

    #[test]
    fn truncate_keeps_head_and_tail_and_counts() {
        let content: String = (b'a'..=b'z').cycle().take(400).map(char::from).collect();
        let text = rewritten(&content, ClearMode::Truncate);
        let (head, marker, tail) = split_truncated(&text);
        // No newline to snap to: a 40-char head and a 20-char tail.
        assert_eq!(head, format!("{}\n", &content[..40]));
        assert_eq!(tail, &content[380..]);
        assert_eq!(
            marker,
            "[condense: 340 of 400 characters (1 lines) elided from this Bash result, call c0]"
        );
    }

    #[test]
    fn truncate_keeps_the_configured_share_of_the_threshold() {
        let content: String = (b'a'..=b'z').cycle().take(400).map(char::from).collect();
        let history = exchanges("Bash", &[&content]);
        let config = Settings {
            truncate_keep_percent: 25,
            ..config(ClearMode::Truncate)
        };
        let (kept, _) = run(&history, &config);
        let (head, marker, tail) = split_truncated(content_of(&kept[1].message));
        // 25% of 120: a 20-char head and a 10-char tail.
        assert_eq!(head, format!("{}\n", &content[..20]));
        assert_eq!(tail, &content[390..]);
        assert_eq!(marker_counts(marker).0, 370);
    }

    #[test]
    fn elided_and_kept_add_up_to_the_total() {
        let content = numbered_lines(50);
        let text = rewritten(&content, ClearMode::Truncate);
        let (head, marker, tail) = split_truncated(&text);
        let (elided, total, lines) = marker_counts(marker);
        let kept = head.chars().count() + tail.chars().count();
        assert_eq!(total, content.chars().count());
        assert_eq!(elided + kept, total);
        assert!(content.starts_with(head) && content.ends_with(tail));
        let middle = &content[head.len()..content.len() - tail.len()];
        assert_eq!(lines, middle.lines().count());
    }

    #[test]
    fn truncate_snaps_to_line_boundaries() {
        // 9-char lines: the 40-char head window's last quarter (chars 30..40)
        // holds the newline ending line 3 (char 35); the 20-char tail window
        // starts mid-line at char 430 and its first quarter (430..435) holds
        // the newline at char 431.
        let content = numbered_lines(50);
        let text = rewritten(&content, ClearMode::Truncate);
        let (head, marker, tail) = split_truncated(&text);
        assert_eq!(head, numbered_lines(4));
        assert_eq!(tail, "line 048\nline 049\n");
        assert_eq!(
            marker,
            "[condense: 396 of 450 characters (44 lines) elided from this Bash result, call c0]"
        );
    }

    #[test]
    fn truncate_does_not_snap_outside_the_quarter_windows() {
        // Newlines only far from both cut points.
        let content = format!(
            "{}\n{}\n{}",
            "h".repeat(10),
            "m".repeat(300),
            "t".repeat(50)
        );
        let text = rewritten(&content, ClearMode::Truncate);
        let (head, _, tail) = split_truncated(&text);
        assert_eq!(head.chars().count(), 41);
        assert!(head.ends_with("mm\n"));
        assert_eq!(tail, "t".repeat(20));
    }

    #[test]
    fn truncate_keeps_a_tail_already_on_a_line_start() {
        // The 20-char tail starts right after a newline; snapping forward to
        // the next one (in its first quarter) would lose a whole line.
        let content = format!("{}\ny\n{}\n", "x".repeat(299), "z".repeat(17));
        let text = rewritten(&content, ClearMode::Truncate);
        let (_, _, tail) = split_truncated(&text);
        assert_eq!(tail, format!("y\n{}\n", "z".repeat(17)));
    }

    #[test]
    fn multi_byte_text_is_cut_on_char_boundaries() {
        for unit in ["é", "日本", "🦀x", "a\u{301}"] {
            let content = format!("{}\n{}", unit.repeat(150), unit.repeat(150));
            let text = rewritten(&content, ClearMode::Truncate);
            let (head, marker, tail) = split_truncated(&text);
            // The head window holds no newline, so the pass added this one.
            let head = head.strip_suffix('\n').unwrap();
            let (elided, total, _) = marker_counts(marker);
            assert_eq!(total, content.chars().count());
            assert_eq!(elided + head.chars().count() + tail.chars().count(), total);
            assert!(content.starts_with(head));
            assert!(content.ends_with(tail));
        }
    }

    #[test]
    fn clear_replaces_the_content() {
        let content = numbered_lines(30);
        assert_eq!(
            rewritten(&content, ClearMode::Clear),
            "[condense: Bash result cleared (270 characters, 30 lines), call c0]"
        );
    }

    #[test]
    fn with_recall_a_placeholder_names_the_handle_of_its_original() {
        let history = exchanges("Bash", &[&numbered_lines(30), &numbered_lines(40)]);
        let config = Settings {
            keep_tool_results: 0,
            ..config(ClearMode::Clear)
        };
        for mode in [ClearMode::Clear, ClearMode::Truncate] {
            let config = Settings {
                clear_mode: mode,
                ..config.clone()
            };
            let (kept, count) = apply(whole(&history), &history, &config, true);
            assert_eq!(count, 2);
            for k in kept.iter().filter(|k| k.message.has_tool_results()) {
                let handle = condense_model::recall::result_handle(&history[k.origin]);
                let note = condense_model::recall::result_note(&handle);
                assert!(
                    content_of(&k.message).contains(&format!("{note}]")),
                    "{mode:?}"
                );
            }
            let (without, _) = apply(whole(&history), &history, &config, false);
            assert!(!format!("{without:?}").contains("condense_recall"));
        }
    }

    #[test]
    fn never_grows_a_result() {
        let long_id = "toolu_".to_string() + &"9".repeat(80);
        let history = vec![
            call(&long_id, "mcp__some_server__some_tool"),
            result(&long_id, &"x".repeat(THRESHOLD as usize + 1)),
        ];
        for mode in [ClearMode::Truncate, ClearMode::Clear] {
            let (kept, count) = run(&history, &config(mode));
            assert_eq!(kept, whole(&history));
            assert_eq!(count, 0);
        }
    }

    #[test]
    fn only_content_changes() {
        let long = "x".repeat(500);
        let history = vec![
            call("e", "Bash"),
            Message {
                role: Role::Tool,
                parts: vec![result_part("e", &long, true)],
            },
        ];
        for mode in [ClearMode::Truncate, ClearMode::Clear] {
            let (kept, _) = run(&history, &config(mode));
            assert_eq!(kept[0], whole(&history)[0]);
            let rewritten = kept[1].message.tool_results().next().unwrap();
            assert_eq!(rewritten.call_id, "e");
            assert!(rewritten.is_error);
            assert_eq!(kept[1].message.role, Role::Tool);
            assert_eq!(kept[1].origin, 1);
        }
    }

    #[test]
    fn keep_error_results_spares_what_the_tool_reported_as_an_error() {
        let long = "x".repeat(500);
        let history = vec![
            call("ok", "Bash"),
            result("ok", &long),
            call("e", "Bash"),
            Message {
                role: Role::Tool,
                parts: vec![result_part("e", &long, true)],
            },
        ];
        for mode in [ClearMode::Truncate, ClearMode::Clear] {
            let (_, count) = run(&history, &config(mode));
            assert_eq!(count, 2, "{mode:?}: off, the error goes like any result");
            let keep = Settings {
                keep_error_results: true,
                ..config(mode)
            };
            let (kept, count) = run(&history, &keep);
            assert_eq!(count, 1, "{mode:?}");
            assert_eq!(content_of(&kept[3].message), long, "{mode:?}");
            assert_ne!(content_of(&kept[1].message), long, "{mode:?}");
        }
    }

    #[test]
    fn user_carriers_change_only_their_long_results() {
        let long = numbered_lines(40);
        let carrier = Message {
            role: Role::User,
            parts: vec![
                result_part("a", &long, false),
                result_part("b", "short", false),
                result_part("c", &long, true),
                Part::Text("x".repeat(500)),
                Part::Opaque("{}".into()),
            ],
        };
        let history = vec![
            Message {
                role: Role::Assistant,
                parts: vec![
                    call_part("a", "Grep"),
                    call_part("b", "Grep"),
                    call_part("c", "Bash"),
                ],
            },
            carrier.clone(),
        ];
        let (kept, count) = run(&history, &config(ClearMode::Clear));
        let parts = &kept[1].message.parts;
        assert_eq!(
            parts[0],
            result_part(
                "a",
                "[condense: Grep result cleared (360 characters, 40 lines), call a]",
                false
            )
        );
        assert_eq!(parts[1], carrier.parts[1]);
        assert_eq!(
            parts[2],
            result_part(
                "c",
                "[condense: Bash result cleared (360 characters, 40 lines), call c]",
                true
            )
        );
        assert_eq!(parts[3..], carrier.parts[3..]);
        assert_eq!(kept[0], whole(&history)[0]);
        assert_eq!(count, 2);
    }

    #[test]
    fn system_messages_and_non_results_are_untouched() {
        let long = "x".repeat(500);
        let history = vec![
            Message {
                role: Role::System,
                parts: vec![Part::Text(long.clone()), result_part("s", &long, false)],
            },
            Message::text(Role::User, long.clone()),
            Message::text(Role::Assistant, long.clone()),
            call("c", "Bash"),
        ];
        for mode in [ClearMode::Truncate, ClearMode::Clear] {
            let (kept, count) = run(&history, &config(mode));
            assert_eq!(kept, whole(&history));
            assert_eq!(count, 0);
        }
    }

    #[test]
    fn returns_the_count_of_rewritten_results() {
        let long = "x".repeat(500);
        let history = exchanges("Bash", &[&long, "short", &long, &long]);
        let config = Settings {
            keep_tool_results: 1,
            ..config(ClearMode::Truncate)
        };
        assert_eq!(run(&history, &config).1, 2);
    }

    #[test]
    fn is_deterministic() {
        let long = numbered_lines(60);
        let history = vec![
            call("a", "Bash"),
            call("b", "Read"),
            Message {
                role: Role::User,
                parts: vec![
                    result_part("a", &long, false),
                    result_part("b", &long, false),
                ],
            },
            call("c", "Grep"),
            result("c", &long),
        ];
        let config = Settings {
            exclude_tools: vec!["Read".into()],
            ..config(ClearMode::Truncate)
        };
        let first = run(&history, &config);
        assert_eq!(first, run(&history, &config));
        assert_eq!(first.1, 2);
    }
}
