//! The promises condense makes about every output, written once: the compressor
//! runs them on its own output before returning it (self-check) and the host
//! runs them again on whatever a guest returns (validation), so a buggy or
//! hostile compressor can never reach the model.

use crate::{Message, Part, Role};
use std::collections::{HashMap, HashSet};

/// A broken promise, with the output index it was found at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub rule: &'static str,
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.rule, self.detail)
    }
}

fn violation(rule: &'static str, detail: String) -> Violation {
    Violation { rule, detail }
}

/// Where a part sits in the checked list: message index, part index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartAt {
    pub message: usize,
    pub part: usize,
}

/// The first tool-pairing problem of a history, located, so that each caller
/// names it in its own terms (the CLI as JSON paths) without re-deriving the
/// rule that failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PairProblem {
    /// The call at `call` has no result when message `before` comes, which
    /// carries none (or is the next assistant message).
    Unanswered {
        id: String,
        call: PartAt,
        before: usize,
    },
    /// The call at `call` reuses the id of the call at `first`.
    DuplicateId {
        id: String,
        call: PartAt,
        first: PartAt,
    },
    /// The result at `result` answers the call at `call`, of the assistant
    /// message it follows, which was answered already.
    SecondResult {
        id: String,
        result: PartAt,
        call: PartAt,
    },
    /// The result at `result` answers no call of the assistant message it
    /// follows: `called` is the earlier call with its id, if any.
    StrayResult {
        id: String,
        result: PartAt,
        called: Option<PartAt>,
    },
    /// A tool message without a tool result.
    EmptyToolMessage { message: usize },
}

impl std::fmt::Display for PairProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PairProblem::Unanswered { id, call, before } => write!(
                f,
                "tool call `{id}` of message {} has no result before message {before}",
                call.message
            ),
            PairProblem::DuplicateId { id, call, first } => write!(
                f,
                "duplicate tool call id `{id}` at message {} (message {} has it too)",
                call.message, first.message
            ),
            PairProblem::SecondResult { id, result, call } => write!(
                f,
                "tool result at message {} is a second result for call `{id}` of message {}",
                result.message, call.message
            ),
            PairProblem::StrayResult {
                id,
                result,
                called: None,
            } => write!(
                f,
                "tool result at message {} answers `{id}`, which no assistant message before it called",
                result.message
            ),
            PairProblem::StrayResult {
                id,
                result,
                called: Some(call),
            } => write!(
                f,
                "tool result at message {} answers `{id}` of message {}, but results must directly follow the assistant message that made the call",
                result.message, call.message
            ),
            PairProblem::EmptyToolMessage { message } => {
                write!(f, "tool message {message} carries no tool result")
            }
        }
    }
}

impl From<PairProblem> for Violation {
    fn from(problem: PairProblem) -> Violation {
        violation("pairs-intact", problem.to_string())
    }
}

/// Tool pairing of a history: every result answers a call made by the assistant
/// message it follows (directly, or through other result carriers of the same
/// batch), every call id is unique, and every call is answered by the results
/// that follow it, except the calls of a final batch that is still in flight.
///
/// Returns the ids of calls still in flight.
pub fn check_pairs(messages: &[Message]) -> Result<HashSet<String>, PairProblem> {
    let mut calls: HashMap<&str, PartAt> = HashMap::new();
    // Calls of the latest assistant message that are not answered yet, in
    // call order.
    let mut open: Vec<(&str, PartAt)> = Vec::new();
    let mut latest_assistant = None;
    let unanswered = |open: &[(&str, PartAt)], before| {
        open.first().map(|&(id, call)| PairProblem::Unanswered {
            id: id.to_owned(),
            call,
            before,
        })
    };
    for (i, m) in messages.iter().enumerate() {
        if m.role == Role::Assistant {
            if let Some(problem) = unanswered(&open, i) {
                return Err(problem);
            }
            for (p, part) in m.parts.iter().enumerate() {
                let Part::ToolCall(c) = part else { continue };
                let call = PartAt {
                    message: i,
                    part: p,
                };
                if let Some(&first) = calls.get(c.id.as_str()) {
                    return Err(PairProblem::DuplicateId {
                        id: c.id.clone(),
                        call,
                        first,
                    });
                }
                calls.insert(&c.id, call);
                open.push((&c.id, call));
            }
            latest_assistant = Some(i);
            continue;
        }
        let mut carried_results = false;
        for (p, part) in m.parts.iter().enumerate() {
            let Part::ToolResult(r) = part else { continue };
            carried_results = true;
            if let Some(pos) = open.iter().position(|(id, _)| *id == r.call_id) {
                open.remove(pos);
                continue;
            }
            let result = PartAt {
                message: i,
                part: p,
            };
            let id = r.call_id.clone();
            return Err(match calls.get(r.call_id.as_str()) {
                Some(&call) if Some(call.message) == latest_assistant => {
                    PairProblem::SecondResult { id, result, call }
                }
                called => PairProblem::StrayResult {
                    id,
                    result,
                    called: called.copied(),
                },
            });
        }
        if m.role == Role::Tool && !carried_results {
            return Err(PairProblem::EmptyToolMessage { message: i });
        }
        // A person's message or a system message interrupts the batch.
        if !carried_results && let Some(problem) = unanswered(&open, i) {
            return Err(problem);
        }
    }
    Ok(open.into_iter().map(|(id, _)| id.to_owned()).collect())
}

/// Whether `b` may directly follow `a` in a request that a provider accepts.
/// Used only on adjacencies the compressor created: the input's own ones are the
/// agent's business.
fn valid_junction(a: &Message, b: &Message) -> Result<(), String> {
    if a.has_tool_calls() && !b.has_tool_results() {
        return Err(
            "an assistant message with tool calls must be followed by their results".into(),
        );
    }
    if b.has_tool_results() && !a.has_tool_calls() && !a.has_tool_results() {
        return Err("tool results must follow the assistant message that called them".into());
    }
    if a.role == Role::System || b.role == Role::System {
        return Ok(());
    }
    let carrier =
        |m: &Message| m.role == Role::Tool || (m.role == Role::User && m.has_tool_results());
    if a.role == b.role && !(carrier(a) && carrier(b)) {
        return Err(format!("two consecutive {:?} messages", a.role));
    }
    Ok(())
}

/// Where a compressor says it cut the history (its report's `boundary` and
/// `tail-start`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// `input[..boundary]` is folded into the summary pair (none at 0).
    pub boundary: usize,
    /// `input[tail_start..]` is sent verbatim.
    pub tail_start: usize,
}

/// Where the summary pair sits in a request that has one: right after the
/// leading system messages (see `assemble` in the compressor).
pub fn summary_position(request: &[Message]) -> usize {
    request
        .iter()
        .position(|m| m.role != Role::System)
        .unwrap_or(request.len())
}

/// Checks that `output` is a valid compression of `input` cut at `cut`:
///
/// - the output ends with `input[cut.tail_start..]`, byte-identical (the recent
///   tail);
/// - when something was folded (`cut.boundary > 0`), condense's summary and
///   its acknowledgement (user then assistant, text only) sit at
///   [`summary_position`]; otherwise there are none;
/// - before the tail it otherwise holds only: every system message of
///   `input[..tail_start]` in order and byte-identical, and messages of
///   `input[..tail_start]` in their original order, each unchanged or as a
///   pass may rewrite it (see [`is_rewrite_of`]);
/// - tool calls and results stay paired and no new call is left unanswered;
/// - signed thinking is never edited: kept byte-exact or dropped whole;
/// - every adjacency the compressor created is a valid role order, and the first
///   conversational message is still a user message.
///
/// Output messages are matched, from the tail backwards, to the latest input
/// message they can come from.
pub fn check_output(input: &[Message], output: &[Message], cut: Cut) -> Result<(), Violation> {
    let Cut {
        boundary,
        tail_start,
    } = cut;
    if boundary > tail_start || tail_start > input.len() {
        return Err(violation(
            "tail-verbatim",
            format!(
                "boundary {boundary} and tail start {tail_start} do not fit the {} input messages",
                input.len()
            ),
        ));
    }
    let tail = &input[tail_start..];
    if output.len() < tail.len() || output[output.len() - tail.len()..] != *tail {
        return Err(violation(
            "tail-verbatim",
            format!(
                "output does not end with input messages {tail_start}..{} unchanged",
                input.len()
            ),
        ));
    }
    let head = &output[..output.len() - tail.len()];
    let before_tail = &input[..tail_start];

    // Walk the head backwards against the input before the tail: each
    // non-summary message must come from the latest matching input message
    // before the one after it; all system messages must appear. Backwards,
    // because what stays sits right before the tail: a rewritten assistant
    // message without tool calls could match many earlier ones, but only its
    // own origin lies directly before its successor's. `origin[k]` is the
    // input index of output message k (None: written by condense).
    let dropped_system = |range: std::ops::Range<usize>| {
        let start = range.start;
        before_tail[range]
            .iter()
            .rposition(|f| f.role == Role::System)
            .map(|skipped| {
                violation(
                    "system-kept",
                    format!("system message {} was dropped", start + skipped),
                )
            })
    };
    let pair = summary_pair(head, boundary)?;
    let mut origin: Vec<Option<usize>> = vec![None; head.len()];
    let mut cursor = tail_start;
    for (k, m) in head.iter().enumerate().rev() {
        if pair.contains(&k) {
            continue;
        }
        let Some(at) = before_tail[..cursor]
            .iter()
            .rposition(|f| is_rewrite_of(f, m))
        else {
            return Err(violation(
                "verbatim",
                format!(
                    "output message {k} is not an input message (in order), unchanged or validly rewritten"
                ),
            ));
        };
        if let Some(v) = dropped_system(at + 1..cursor) {
            return Err(v);
        }
        origin[k] = Some(at);
        cursor = at;
    }
    if let Some(v) = dropped_system(0..cursor) {
        return Err(v);
    }
    origin.extend((tail_start..input.len()).map(Some));

    // Pairs: the only calls allowed to stay unanswered are those the input
    // itself has in flight.
    let pending_in = check_pairs(input).unwrap_or_default();
    let pending_out = check_pairs(output)?;
    if let Some(id) = pending_out.iter().find(|id| !pending_in.contains(*id)) {
        return Err(violation(
            "pairs-intact",
            format!("tool call `{id}` lost its result"),
        ));
    }

    // New adjacencies must be valid role order.
    for k in 1..output.len() {
        let adjacent_in_input =
            matches!((origin[k - 1], origin[k]), (Some(a), Some(b)) if b == a + 1);
        if !adjacent_in_input {
            valid_junction(&output[k - 1], &output[k]).map_err(|why| {
                violation(
                    "role-order",
                    format!("output messages {} and {k}: {why}", k - 1),
                )
            })?;
        }
    }
    let first_conversational =
        |ms: &[Message]| ms.iter().find(|m| m.role != Role::System).map(|m| m.role);
    if first_conversational(input) == Some(Role::User)
        && first_conversational(output) != Some(Role::User)
    {
        return Err(violation(
            "role-order",
            "the first non-system message is no longer a user message".into(),
        ));
    }
    Ok(())
}

/// The output indices of condense's own messages in `head` (the output before
/// the verbatim tail) of a fold at `boundary`. Found by position, not by
/// their text: an input message may begin with the marker too (a runtime that
/// stores condensed requests as its history, or a person quoting one), and
/// taken for condense's it would escape the matching below.
fn summary_pair(head: &[Message], boundary: usize) -> Result<std::ops::Range<usize>, Violation> {
    if boundary == 0 {
        return Ok(0..0);
    }
    let s = summary_position(head);
    let written = |k: usize, role: Role| {
        head.get(k).is_some_and(|m| {
            m.role == role
                && m.is_condense_summary()
                && m.parts.iter().all(|p| matches!(p, Part::Text(_)))
        })
    };
    if !(written(s, Role::User) && written(s + 1, Role::Assistant)) {
        return Err(violation(
            "summary",
            format!(
                "a fold of {boundary} messages needs condense's summary (user) and \
                 acknowledgement (assistant), text only, at output messages {s} and {}",
                s + 1
            ),
        ));
    }
    Ok(s..s + 2)
}

/// Whether `rewritten` is `original` unchanged or as a context-engineering
/// pass may rewrite it:
///
/// - an assistant message keeps its tool calls (id, name, arguments) and
///   keeps each thinking and opaque part byte-exact or drops it whole (order
///   kept); its text may change, but it may not become empty;
/// - a user or tool message may only have the content of its tool results
///   changed (truncated or cleared), never their call ids or error flags, and
///   nothing else: a person's words are never rewritten;
/// - a system message is never rewritten.
///
/// Kept this narrow so that a rewritten message can be placed: a user message
/// matches only itself, and an assistant message without tool calls only an
/// assistant message.
pub fn is_rewrite_of(original: &Message, rewritten: &Message) -> bool {
    if original == rewritten {
        return true;
    }
    if original.role != rewritten.role || rewritten.parts.is_empty() {
        return false;
    }
    match original.role {
        Role::System => false,
        Role::Assistant => {
            fn parts(m: &Message, keep: fn(&Part) -> bool) -> Vec<&Part> {
                m.parts.iter().filter(|p| keep(p)).collect()
            }
            let thinking = |m| parts(m, |p| matches!(p, Part::Thinking(_)));
            let opaque = |m| parts(m, |p| matches!(p, Part::Opaque(_)));
            !rewritten.has_tool_results()
                && original.tool_calls().eq(rewritten.tool_calls())
                && is_subsequence(&thinking(rewritten), &thinking(original))
                && is_subsequence(&opaque(rewritten), &opaque(original))
        }
        Role::User | Role::Tool => {
            original.parts.len() == rewritten.parts.len()
                && original
                    .parts
                    .iter()
                    .zip(&rewritten.parts)
                    .all(|pair| match pair {
                        (Part::ToolResult(a), Part::ToolResult(b)) => {
                            a.call_id == b.call_id && a.is_error == b.is_error
                        }
                        (a, b) => a == b,
                    })
        }
    }
}

fn is_subsequence<T: PartialEq>(needle: &[T], haystack: &[T]) -> bool {
    let mut rest = haystack.iter();
    needle.iter().all(|n| rest.any(|h| h == n))
}

/// Map from tool call id to tool name, for passes and summarizers that want to
/// say which tool a result came from.
pub fn call_names(messages: &[Message]) -> HashMap<&str, &str> {
    messages
        .iter()
        .flat_map(|m| m.tool_calls())
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ToolCall, ToolResult};

    fn call(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall(ToolCall {
                id: id.into(),
                name: "Bash".into(),
                arguments: "{}".into(),
            })],
        }
    }
    fn result(id: &str) -> Message {
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: id.into(),
                content: "ok".into(),
                is_error: false,
            })],
        }
    }
    fn user(t: &str) -> Message {
        Message::text(Role::User, t)
    }
    fn summary() -> Message {
        Message::text(Role::User, format!("{} earlier", crate::SUMMARY_MARKER))
    }
    fn cut(boundary: usize, tail_start: usize) -> Cut {
        Cut {
            boundary,
            tail_start,
        }
    }
    fn ack() -> Message {
        Message::text(Role::Assistant, format!("{} noted", crate::SUMMARY_MARKER))
    }

    #[test]
    fn pairs_accept_answered_and_pending_calls() {
        let h = vec![user("hi"), call("a"), result("a"), call("b")];
        assert_eq!(check_pairs(&h).unwrap(), HashSet::from(["b".to_string()]));
    }

    #[test]
    fn pairs_name_each_problem_where_it_shows() {
        let at = |message, part| PartAt { message, part };
        let id = || "a".to_string();
        let cases = [
            (
                vec![user("hi"), result("a")],
                PairProblem::StrayResult {
                    id: id(),
                    result: at(1, 0),
                    called: None,
                },
            ),
            (
                vec![
                    user("hi"),
                    call("a"),
                    result("a"),
                    call("b"),
                    result("b"),
                    result("a"),
                ],
                PairProblem::StrayResult {
                    id: id(),
                    result: at(5, 0),
                    called: Some(at(1, 0)),
                },
            ),
            (
                vec![user("hi"), call("a"), result("a"), result("a")],
                PairProblem::SecondResult {
                    id: id(),
                    result: at(3, 0),
                    call: at(1, 0),
                },
            ),
            (
                vec![user("hi"), call("a"), result("a"), call("a"), result("a")],
                PairProblem::DuplicateId {
                    id: id(),
                    call: at(3, 0),
                    first: at(1, 0),
                },
            ),
            (
                vec![user("hi"), call("a"), user("again")],
                PairProblem::Unanswered {
                    id: id(),
                    call: at(1, 0),
                    before: 2,
                },
            ),
            (
                vec![user("hi"), call("a"), call("b")],
                PairProblem::Unanswered {
                    id: id(),
                    call: at(1, 0),
                    before: 2,
                },
            ),
            (
                vec![
                    user("hi"),
                    Message {
                        role: Role::Tool,
                        parts: vec![],
                    },
                ],
                PairProblem::EmptyToolMessage { message: 1 },
            ),
        ];
        for (history, problem) in cases {
            assert_eq!(check_pairs(&history).unwrap_err(), problem, "{history:?}");
        }
    }

    #[test]
    fn unchanged_output_is_valid() {
        let h = vec![
            Message::text(Role::System, "sys"),
            user("hi"),
            call("a"),
            result("a"),
        ];
        check_output(&h, &h, cut(0, 0)).unwrap();
    }

    #[test]
    fn dropped_system_message_is_caught() {
        let h = vec![
            Message::text(Role::System, "sys"),
            user("task"),
            call("a"),
            result("a"),
        ];
        let out = vec![summary(), ack(), user("task"), call("a"), result("a")];
        assert_eq!(
            check_output(&h, &out, cut(1, 1)).unwrap_err().rule,
            "system-kept"
        );
    }

    #[test]
    fn split_pair_is_caught() {
        let h = vec![user("task"), call("a"), result("a"), call("b"), result("b")];
        // Tail starting at a result: the call it answers was folded.
        let out = vec![summary(), ack(), result("a"), call("b"), result("b")];
        assert_eq!(
            check_output(&h, &out, cut(2, 2)).unwrap_err().rule,
            "pairs-intact"
        );
    }

    #[test]
    fn edited_tail_is_caught() {
        let h = vec![user("task"), call("a"), result("a")];
        let mut out = h.clone();
        out[2] = result("b");
        assert_eq!(
            check_output(&h, &out, cut(0, 0)).unwrap_err().rule,
            "tail-verbatim"
        );
    }

    fn assistant(parts: Vec<Part>) -> Message {
        Message {
            role: Role::Assistant,
            parts,
        }
    }

    fn signed(text: &str) -> Part {
        Part::Thinking(crate::Thinking {
            text: text.into(),
            signature: Some("sig".into()),
        })
    }

    #[test]
    fn rewrites_before_the_tail_are_valid() {
        let thinking_call = assistant(vec![
            signed("plan"),
            Part::Text("<think>x</think>ok".into()),
            Part::ToolCall(ToolCall {
                id: "a".into(),
                name: "Bash".into(),
                arguments: "{}".into(),
            }),
        ]);
        let h = vec![
            Message::text(Role::System, "sys"),
            user("task"),
            thinking_call.clone(),
            result("a"),
            call("b"),
            result("b"),
        ];
        // Reasoning dropped whole, text rewritten, result cleared.
        let mut pruned = thinking_call.clone();
        pruned.parts.remove(0);
        pruned.parts[0] = Part::Text("ok".into());
        let mut cleared = result("a");
        if let Part::ToolResult(r) = &mut cleared.parts[0] {
            r.content = "[condense: cleared]".into();
        }
        let out = vec![
            h[0].clone(),
            h[1].clone(),
            pruned,
            cleared,
            call("b"),
            result("b"),
        ];
        check_output(&h, &out, cut(0, 4)).unwrap();
    }

    #[test]
    fn edited_signed_thinking_or_calls_are_caught() {
        let original = assistant(vec![signed("plan"), Part::Text("t".into())]);
        let h = vec![user("task"), original.clone(), user("more")];
        let edited = assistant(vec![
            Part::Thinking(crate::Thinking {
                text: "plan, edited".into(),
                signature: Some("sig".into()),
            }),
            Part::Text("t".into()),
        ]);
        let out = vec![user("task"), edited, user("more")];
        assert_eq!(
            check_output(&h, &out, cut(0, 2)).unwrap_err().rule,
            "verbatim"
        );

        let h = vec![user("task"), call("a"), result("a")];
        let mut renamed = call("a");
        if let Part::ToolCall(c) = &mut renamed.parts[0] {
            c.arguments = "{\"x\":1}".into();
        }
        let out = vec![user("task"), renamed, result("a")];
        assert_eq!(
            check_output(&h, &out, cut(0, 2)).unwrap_err().rule,
            "verbatim"
        );
        // An emptied message is not a rewrite either.
        let out = vec![user("task"), assistant(vec![]), result("a")];
        assert!(check_output(&h, &out, cut(0, 2)).is_err());
        // Nor is a person's message with other words.
        let out = vec![user("task, reworded"), call("a"), result("a")];
        assert_eq!(
            check_output(&h, &out, cut(0, 2)).unwrap_err().rule,
            "verbatim"
        );
    }

    #[test]
    fn a_rewritten_message_is_matched_to_its_own_origin() {
        // "new" could be a rewrite of the folded "old" too; matched there, the
        // call after it would look like a second consecutive assistant message.
        let h = vec![
            user("task"),
            Message::text(Role::Assistant, "old"),
            call("a"),
            result("a"),
            Message::text(Role::Assistant, "<think>x</think>new"),
            call("b"),
            result("b"),
        ];
        let out = vec![
            summary(),
            ack(),
            h[0].clone(),
            Message::text(Role::Assistant, "new"),
            h[5].clone(),
            h[6].clone(),
        ];
        check_output(&h, &out, cut(4, 5)).unwrap();
    }

    #[test]
    fn consecutive_user_messages_of_the_input_stay_valid_after_a_rewrite() {
        // A summary, then two user messages that were adjacent in the input:
        // each must be matched to itself, not to an earlier user message.
        let h = vec![
            user("task"),
            call("a"),
            result("a"),
            user("interrupted"),
            user("notification"),
            Message::text(Role::Assistant, "<think>x</think>ok"),
        ];
        let out = vec![
            summary(),
            ack(),
            h[3].clone(),
            h[4].clone(),
            Message::text(Role::Assistant, "ok"),
        ];
        check_output(&h, &out, cut(3, 6)).unwrap();
    }

    #[test]
    fn elided_steps_keep_pairs_and_role_order() {
        let h = vec![
            user("task"),
            call("a"),
            result("a"),
            call("b"),
            result("b"),
            call("c"),
            result("c"),
            user("next"),
        ];
        // The middle step elided whole: valid.
        let out = vec![
            h[0].clone(),
            h[1].clone(),
            h[2].clone(),
            h[5].clone(),
            h[6].clone(),
            h[7].clone(),
        ];
        check_output(&h, &out, cut(0, 7)).unwrap();
        // Only its call elided: its result is orphaned.
        let out = vec![
            h[0].clone(),
            h[1].clone(),
            h[2].clone(),
            h[4].clone(),
            h[7].clone(),
        ];
        assert_eq!(
            check_output(&h, &out, cut(0, 7)).unwrap_err().rule,
            "pairs-intact"
        );
    }

    #[test]
    fn consecutive_user_messages_created_by_the_fold_are_caught() {
        let h = vec![user("one"), call("a"), result("a"), user("two")];
        // The opener pinned before the tail's user message.
        let out = vec![summary(), ack(), user("one"), user("two")];
        assert_eq!(
            check_output(&h, &out, cut(3, 3)).unwrap_err().rule,
            "role-order"
        );
    }

    #[test]
    fn input_messages_that_begin_with_the_marker_are_matched_like_any_other() {
        // A system prompt, a person quoting an earlier condensed request, and
        // an assistant answer, all starting with the marker, kept before the
        // tail: the summary pair is found by position, these by matching.
        let marked = |role, t: &str| Message::text(role, format!("{} {t}", crate::SUMMARY_MARKER));
        let h = vec![
            marked(Role::System, "be brief"),
            marked(Role::User, "quoted"),
            call("a"),
            result("a"),
            marked(Role::Assistant, "<think>x</think>noted"),
            user("go on"),
            call("b"),
            result("b"),
        ];
        let out = vec![
            h[0].clone(),
            summary(),
            ack(),
            h[1].clone(),
            marked(Role::Assistant, "noted"),
            h[5].clone(),
            h[6].clone(),
            h[7].clone(),
        ];
        check_output(&h, &out, cut(4, 6)).unwrap();
        // Without a fold, marked input messages are plain input messages too.
        check_output(&h, &h, cut(0, 3)).unwrap();
    }

    #[test]
    fn the_summary_pair_belongs_after_the_leading_system_messages_of_a_fold() {
        let sys = Message::text(Role::System, "sys");
        let h = vec![
            sys.clone(),
            user("task"),
            call("a"),
            result("a"),
            call("b"),
            result("b"),
        ];
        // Before the pinned opener: valid.
        let out = vec![
            sys.clone(),
            summary(),
            ack(),
            user("task"),
            call("b"),
            result("b"),
        ];
        check_output(&h, &out, cut(4, 4)).unwrap();
        // After the pinned opener instead of before it.
        let out = vec![
            sys.clone(),
            user("task"),
            summary(),
            ack(),
            call("b"),
            result("b"),
        ];
        assert_eq!(
            check_output(&h, &out, cut(4, 4)).unwrap_err().rule,
            "summary"
        );
        // A fold without its acknowledgement.
        let out = vec![sys.clone(), summary(), user("task"), call("b"), result("b")];
        assert_eq!(
            check_output(&h, &out, cut(4, 4)).unwrap_err().rule,
            "summary"
        );
        // A summary pair with nothing folded: not an input message.
        let out = vec![sys, summary(), ack(), h[1].clone(), call("b"), result("b")];
        assert_eq!(
            check_output(&h, &out, cut(0, 4)).unwrap_err().rule,
            "verbatim"
        );
        // A cut that does not fit the input.
        assert_eq!(
            check_output(&h, &h, cut(5, 4)).unwrap_err().rule,
            "tail-verbatim"
        );
    }
}
