//! Reasoning (CoT) pruning: assistant messages older than
//! `strip_reasoning_after_turns` assistant turns lose their thinking parts and
//! their inline `<think>…</think>` spans. The model rarely needs its own old
//! reasoning, and it is often the bulk of an assistant turn.

use super::Kept;
use crate::settings::Settings;
use condense_model::{Message, Part, Role};

/// Stands in for a message whose only content was reasoning: providers reject
/// an assistant message without parts.
pub const REASONING_OMITTED: &str = "[condense: reasoning omitted]";

const THINK_OPEN: &[u8] = b"<think>";
const THINK_CLOSE: &[u8] = b"</think>";

/// Returns the region and how many assistant messages lost reasoning.
pub fn apply(kept: Vec<Kept>, history: &[Message], config: &Settings) -> (Vec<Kept>, u32) {
    // Providers such as DeepSeek reject tool-call turns whose
    // `reasoning_content` was not echoed back, so pruning must stay off there.
    if config.strip_reasoning_after_turns == 0 || config.reasoning_echo {
        return (kept, 0);
    }
    let min_later = config.strip_reasoning_after_turns as usize;
    let later = assistants_after(history);
    // The Anthropic API rejects a request whose in-flight tool-use turn lost
    // its thinking, so the latest tool-call turn keeps it whatever its age.
    let in_flight = latest_tool_call_turn(history);
    let old_enough = |origin: usize| {
        later.get(origin).is_some_and(|&n| n >= min_later) && Some(origin) != in_flight
    };

    let mut pruned = 0;
    let kept = kept
        .into_iter()
        .map(|k| {
            if k.message.role != Role::Assistant || !old_enough(k.origin) {
                return k;
            }
            match prune(&k.message) {
                Some(message) => {
                    pruned += 1;
                    Kept {
                        origin: k.origin,
                        message,
                    }
                }
                None => k,
            }
        })
        .collect();
    (kept, pruned)
}

/// For each history index, how many assistant messages follow it.
fn assistants_after(history: &[Message]) -> Vec<usize> {
    let mut after = vec![0; history.len()];
    let mut seen = 0;
    for (i, message) in history.iter().enumerate().rev() {
        after[i] = seen;
        if message.role == Role::Assistant {
            seen += 1;
        }
    }
    after
}

fn latest_tool_call_turn(history: &[Message]) -> Option<usize> {
    history
        .iter()
        .rposition(|m| m.role == Role::Assistant && m.has_tool_calls())
}

/// The message without its reasoning, or `None` when it had none.
fn prune(message: &Message) -> Option<Message> {
    let mut changed = false;
    let mut parts = Vec::with_capacity(message.parts.len());
    for part in &message.parts {
        match part {
            // A signed thinking part is verified by the provider byte for
            // byte, so it can only ever be dropped whole, never edited.
            Part::Thinking(_) => changed = true,
            Part::Text(text) => match strip_think_spans(text) {
                Some(rest) => {
                    changed = true;
                    parts.push(Part::Text(rest));
                }
                None => parts.push(part.clone()),
            },
            other => parts.push(other.clone()),
        }
    }
    if !changed {
        return None;
    }
    // Providers reject whitespace-only text blocks, and once the reasoning is
    // gone a blank part is all that would be left of some messages.
    parts.retain(|part| !matches!(part, Part::Text(t) if t.trim().is_empty()));
    if parts.is_empty() {
        parts.push(Part::Text(REASONING_OMITTED.to_string()));
    }
    Some(Message {
        role: message.role,
        parts,
    })
}

/// `text` without its `<think>…</think>` spans (tags matched ignoring ASCII
/// case; an unclosed span runs to the end), or `None` when it has none. A
/// closing tag without an opener is ordinary text.
fn strip_think_spans(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut open = find_ignore_ascii_case(bytes, 0, THINK_OPEN)?;
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    loop {
        out.push_str(&text[cursor..open]);
        let body = open + THINK_OPEN.len();
        cursor = find_ignore_ascii_case(bytes, body, THINK_CLOSE)
            .map_or(text.len(), |close| close + THINK_CLOSE.len());
        // Reasoning models write "<think>…</think>\n\nAnswer": without the
        // span, the blank lines would lead the answer.
        if out.trim().is_empty() {
            out.clear();
            cursor = text.len() - text[cursor..].trim_start().len();
        }
        match find_ignore_ascii_case(bytes, cursor, THINK_OPEN) {
            Some(next) => open = next,
            None => break,
        }
    }
    out.push_str(&text[cursor..]);
    Some(out)
}

/// The first byte offset at or after `from` where `needle` occurs, ignoring
/// ASCII case. The needle is ASCII, and no byte of a multi-byte UTF-8 char is
/// ASCII, so a match always starts and ends on char boundaries.
fn find_ignore_ascii_case(haystack: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
        .map(|at| from + at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_model::{Thinking, ToolCall, ToolResult};

    fn config(turns: u32) -> Settings {
        Settings {
            strip_reasoning_after_turns: turns,
            ..Settings::default()
        }
    }

    fn thinking(text: &str, signature: Option<&str>) -> Part {
        Part::Thinking(Thinking {
            text: text.into(),
            signature: signature.map(String::from),
        })
    }

    fn text(t: &str) -> Part {
        Part::Text(t.into())
    }

    fn assistant(parts: Vec<Part>) -> Message {
        Message {
            role: Role::Assistant,
            parts,
        }
    }

    fn reasoned(answer: &str) -> Message {
        assistant(vec![thinking("let me think", None), text(answer)])
    }

    fn tool_call(id: &str) -> Part {
        Part::ToolCall(ToolCall {
            id: id.into(),
            name: "Bash".into(),
            arguments: "{}".into(),
        })
    }

    fn tool_result(id: &str) -> Message {
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: id.into(),
                content: "<think>not reasoning</think> output".into(),
                is_error: false,
            })],
        }
    }

    fn whole(history: &[Message]) -> Vec<Kept> {
        super::super::unchanged(history, 0)
    }

    fn run(history: &[Message], config: &Settings) -> (Vec<Kept>, u32) {
        apply(whole(history), history, config)
    }

    /// Prunes `message`, which is followed by enough assistant turns.
    fn pruned(message: Message) -> Message {
        let history = vec![message, Message::text(Role::Assistant, "later")];
        let (kept, _) = run(&history, &config(1));
        kept[0].message.clone()
    }

    fn pruned_text(t: &str) -> Message {
        pruned(assistant(vec![text(t)]))
    }

    #[test]
    fn off_when_turns_is_zero() {
        let history = vec![reasoned("a"), reasoned("b"), reasoned("c")];
        let (kept, count) = run(&history, &config(0));
        assert_eq!(kept, whole(&history));
        assert_eq!(count, 0);
    }

    #[test]
    fn off_when_reasoning_is_echoed() {
        let history = vec![reasoned("a"), reasoned("b"), reasoned("c")];
        let config = Settings {
            reasoning_echo: true,
            ..config(1)
        };
        let (kept, count) = run(&history, &config);
        assert_eq!(kept, whole(&history));
        assert_eq!(count, 0);
    }

    #[test]
    fn prunes_exactly_at_k_later_assistant_turns() {
        let history = vec![
            reasoned("0"),
            Message::text(Role::User, "u"),
            reasoned("2"),
            reasoned("3"),
            Message::text(Role::User, "u"),
            reasoned("5"),
        ];
        let (kept, count) = run(&history, &config(2));
        // Index 0 has 3 assistant turns after it, index 2 exactly 2 (pruned),
        // index 3 only 1 (kept), index 5 none.
        assert_eq!(kept[0].message, assistant(vec![text("0")]));
        assert_eq!(kept[2].message, assistant(vec![text("2")]));
        assert_eq!(kept[3].message, history[3]);
        assert_eq!(kept[5].message, history[5]);
        assert_eq!(count, 2);
    }

    #[test]
    fn counts_later_turns_in_history_beyond_the_region() {
        let history = vec![reasoned("0"), reasoned("1"), reasoned("2")];
        let region = whole(&history)[..1].to_vec();
        let (kept, count) = apply(region, &history, &config(2));
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].message, assistant(vec![text("0")]));
        assert_eq!(count, 1);
    }

    #[test]
    fn signed_thinking_is_dropped_whole() {
        let message = assistant(vec![
            thinking("secret <think>chain</think>", Some("sig==")),
            text("answer"),
        ]);
        assert_eq!(pruned(message), assistant(vec![text("answer")]));
    }

    #[test]
    fn signed_thinking_is_never_edited_when_kept() {
        let recent = assistant(vec![
            thinking("<think>x</think> keep", Some("sig==")),
            text("<think>y</think>answer"),
        ]);
        let history = vec![reasoned("old"), recent.clone()];
        let (kept, _) = run(&history, &config(1));
        assert_eq!(kept[1].message, recent);
    }

    #[test]
    fn strips_several_think_spans() {
        assert_eq!(
            pruned_text("a<think>one</think>b<think>two</think>c"),
            assistant(vec![text("abc")])
        );
    }

    #[test]
    fn matches_tags_ignoring_case() {
        assert_eq!(
            pruned_text("a<THINK>one</Think>b<Think>two</tHiNk>c"),
            assistant(vec![text("abc")])
        );
    }

    #[test]
    fn unclosed_think_strips_to_the_end_of_the_part() {
        let message = pruned(assistant(vec![
            text("answer <think>still going"),
            text("next part"),
        ]));
        assert_eq!(message, assistant(vec![text("answer "), text("next part")]));
    }

    #[test]
    fn stray_closing_tag_is_left_alone() {
        let history = vec![
            assistant(vec![text("a</think>b")]),
            Message::text(Role::Assistant, "later"),
        ];
        let (kept, count) = run(&history, &config(1));
        assert_eq!(kept, whole(&history));
        assert_eq!(count, 0);
    }

    #[test]
    fn stray_closing_tag_after_a_span_stays() {
        assert_eq!(
            pruned_text("a<think>x</think>b</think>c"),
            assistant(vec![text("ab</think>c")])
        );
    }

    #[test]
    fn non_ascii_around_tags_keeps_char_boundaries() {
        assert_eq!(
            pruned_text("é<think>日本語</think>ü<THİNK>x</think>ß<think>ñ"),
            // `<THİNK>` (dotted capital I) is not the ASCII tag.
            assistant(vec![text("éü<THİNK>x</think>ß")])
        );
        assert_eq!(
            pruned_text("Ünïcödé <think>"),
            assistant(vec![text("Ünïcödé ")])
        );
    }

    #[test]
    fn drops_whitespace_after_a_leading_span() {
        assert_eq!(
            pruned_text("<think>x</think>\n\nAnswer"),
            assistant(vec![text("Answer")])
        );
        assert_eq!(
            pruned_text("\n<think>x</think>\n <think>y</think>\n\tAnswer"),
            assistant(vec![text("Answer")])
        );
    }

    #[test]
    fn keeps_whitespace_after_an_inner_span() {
        assert_eq!(
            pruned_text("Intro <think>x</think>\n\nAnswer"),
            assistant(vec![text("Intro \n\nAnswer")])
        );
    }

    #[test]
    fn text_left_blank_is_removed() {
        let message = pruned(assistant(vec![
            text("<think>x</think>  \n"),
            text("answer"),
        ]));
        assert_eq!(message, assistant(vec![text("answer")]));
    }

    #[test]
    fn blank_text_of_a_pruned_message_is_removed() {
        let message = pruned(assistant(vec![thinking("t", None), text(" ")]));
        assert_eq!(message, assistant(vec![text(REASONING_OMITTED)]));
    }

    #[test]
    fn blank_text_of_an_unpruned_message_stays() {
        let history = vec![
            assistant(vec![text("a"), text(" ")]),
            Message::text(Role::Assistant, "later"),
        ];
        let (kept, count) = run(&history, &config(1));
        assert_eq!(kept, whole(&history));
        assert_eq!(count, 0);
    }

    #[test]
    fn reasoning_only_message_becomes_the_placeholder() {
        let message = pruned(assistant(vec![
            thinking("a", Some("sig")),
            thinking("b", None),
            text("<think>c</think>\n"),
        ]));
        assert_eq!(message, assistant(vec![text(REASONING_OMITTED)]));
    }

    #[test]
    fn tool_calls_and_opaque_parts_survive() {
        let message = assistant(vec![
            thinking("plan", Some("sig")),
            Part::Opaque(r#"{"type":"x","text":"<think>o</think>"}"#.into()),
            tool_call("c1"),
        ]);
        let history = vec![
            message,
            tool_result("c1"),
            assistant(vec![tool_call("c2")]),
            tool_result("c2"),
        ];
        let (kept, count) = run(&history, &config(1));
        assert_eq!(
            kept[0].message,
            assistant(vec![
                Part::Opaque(r#"{"type":"x","text":"<think>o</think>"}"#.into()),
                tool_call("c1"),
            ])
        );
        assert_eq!(count, 1);
    }

    #[test]
    fn latest_tool_call_turn_is_protected_even_when_old() {
        let in_flight = assistant(vec![thinking("plan", Some("sig")), tool_call("c1")]);
        let history = vec![
            reasoned("older"),
            in_flight.clone(),
            tool_result("c1"),
            reasoned("a"),
            reasoned("b"),
        ];
        let (kept, count) = run(&history, &config(2));
        assert_eq!(kept[0].message, assistant(vec![text("older")]));
        assert_eq!(kept[1].message, in_flight);
        assert_eq!(count, 1);
    }

    #[test]
    fn earlier_tool_call_turns_are_pruned() {
        let earlier = assistant(vec![thinking("plan", Some("sig")), tool_call("c1")]);
        let latest = assistant(vec![thinking("plan", Some("sig")), tool_call("c2")]);
        let history = vec![
            earlier,
            tool_result("c1"),
            latest.clone(),
            tool_result("c2"),
            reasoned("a"),
        ];
        let (kept, count) = run(&history, &config(1));
        assert_eq!(kept[0].message, assistant(vec![tool_call("c1")]));
        assert_eq!(kept[2].message, latest);
        assert_eq!(count, 1);
    }

    #[test]
    fn other_roles_are_never_changed() {
        let history = vec![
            Message {
                role: Role::System,
                parts: vec![text("<think>s</think>"), thinking("s", None)],
            },
            Message {
                role: Role::User,
                parts: vec![text("<think>u</think>"), thinking("u", None)],
            },
            tool_result("c1"),
            reasoned("a"),
            reasoned("b"),
        ];
        let (kept, count) = run(&history, &config(1));
        assert_eq!(kept[..3], whole(&history)[..3]);
        assert_eq!(count, 1);
    }

    #[test]
    fn messages_without_reasoning_are_identical_and_not_counted() {
        let history = vec![
            assistant(vec![text("plain answer"), tool_call("c1")]),
            tool_result("c1"),
            Message::text(Role::Assistant, "another"),
            Message::text(Role::Assistant, "last"),
        ];
        let (kept, count) = run(&history, &config(1));
        assert_eq!(kept, whole(&history));
        assert_eq!(count, 0);
    }

    #[test]
    fn is_deterministic() {
        let history = vec![
            reasoned("a"),
            assistant(vec![text("<think>x</think>\n y <THINK>z")]),
            tool_result("c"),
            assistant(vec![thinking("t", Some("s")), tool_call("c")]),
            reasoned("b"),
        ];
        let first = run(&history, &config(1));
        let second = run(&history, &config(1));
        assert_eq!(first, second);
        assert_eq!(first.1, 2);
    }
}
