//! The promises condense makes about every output, written once: the compressor
//! runs them on its own output before returning it (self-check) and the host
//! runs them again on whatever a guest returns (validation), so a buggy or
//! hostile compressor can never reach the model.

use crate::{Item, Message, Part, Role};
use std::borrow::Borrow;
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
pub fn check_pairs<M: Borrow<Message>>(messages: &[M]) -> Result<HashSet<String>, PairProblem> {
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
        let m: &Message = m.borrow();
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
    if a.role == b.role && !(a.is_result_carrier() && b.is_result_carrier()) {
        return Err(format!("two consecutive {:?} messages", a.role));
    }
    Ok(())
}

/// Where a compressor says it cut the history (its report's `boundary` and
/// `tail-start`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// `history[..boundary]` is folded into the summary pair (none at 0).
    pub boundary: usize,
    /// `history[tail_start..]` is sent verbatim.
    pub tail_start: usize,
}

/// The history an output is checked against. The host has all of it; a
/// compressor called with an offset has the messages from `offset` on, and
/// knows of the earlier ones only those it may keep (system messages, the
/// pinned opener), by role.
#[derive(Clone, Copy, Debug)]
pub struct History<'a> {
    /// Whole-history index of `messages[0]`.
    pub offset: usize,
    pub messages: &'a [Message],
    /// The messages before `offset` that an output may keep, ascending by
    /// index, with their roles. Must list every system message before
    /// `offset`.
    pub before: &'a [(usize, Role)],
}

impl<'a> History<'a> {
    /// The whole history.
    pub fn whole(messages: &'a [Message]) -> History<'a> {
        History {
            offset: 0,
            messages,
            before: &[],
        }
    }

    /// Number of messages of the whole history.
    pub fn len(&self) -> usize {
        self.offset + self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn get(&self, index: usize) -> Option<&'a Message> {
        index
            .checked_sub(self.offset)
            .and_then(|i| self.messages.get(i))
    }

    fn role_before(&self, index: usize) -> Option<Role> {
        self.before
            .binary_search_by_key(&index, |&(i, _)| i)
            .ok()
            .map(|k| self.before[k].1)
    }
}

/// Where the summary pair sits in a request that has one: right after the
/// leading system messages (see `assemble` in the compressor).
pub fn summary_position(request: &[Message]) -> usize {
    request
        .iter()
        .position(|m| m.role != Role::System)
        .unwrap_or(request.len())
}

/// Checks that `items` are a valid compression of `history` cut at `cut`. All
/// of it is index arithmetic except the rewrites, so any host can do it:
///
/// - `kept` and `rewritten` name history indices in increasing order;
/// - the items end with `kept(tail_start)`, …, `kept(len - 1)`: the verbatim
///   tail;
/// - every system message of the history is `kept`;
/// - when something was folded (`cut.boundary > 0`), exactly two `written`
///   items — condense's summary (user) and acknowledgement (assistant), text
///   only, marked — follow the leading system messages; otherwise there are
///   none;
/// - a `rewritten(i)` comes before the tail and is history message `i` as a
///   pass may rewrite it (see [`is_rewrite_of`]): same role, tool calls and
///   result ids, signed thinking byte-exact or dropped whole;
/// - tool calls and results stay paired and no new call is left unanswered;
/// - every adjacency the output created is a valid role order, and the first
///   conversational message is still a user message.
pub fn check_items(history: History, items: &[Item], cut: Cut) -> Result<(), Violation> {
    let Cut {
        boundary,
        tail_start,
    } = cut;
    let len = history.len();
    if boundary > tail_start || tail_start > len || boundary < history.offset {
        return Err(violation(
            "tail-verbatim",
            format!(
                "boundary {boundary} and tail start {tail_start} do not fit the {len} history messages"
            ),
        ));
    }
    let tail = len - tail_start;
    let tail_ok = items.len() >= tail
        && items[items.len() - tail..]
            .iter()
            .zip(tail_start..)
            .all(|(item, i)| *item == Item::Kept(i as u32));
    if !tail_ok {
        return Err(violation(
            "tail-verbatim",
            format!("output does not end with history messages {tail_start}..{len} kept"),
        ));
    }

    // The output as messages, each with its origin. A message before the
    // offset is known by its role only: it stands in as an empty message,
    // which pairs with nothing, as a system message or a person's opener does.
    let placeholders: Vec<Message> = history
        .before
        .iter()
        .map(|&(_, role)| Message {
            role,
            parts: Vec::new(),
        })
        .collect();
    let mut output: Vec<&Message> = Vec::with_capacity(items.len());
    let mut origin: Vec<Option<usize>> = Vec::with_capacity(items.len());
    let mut written = Vec::new();
    let mut last: Option<usize> = None;
    for (k, item) in items.iter().enumerate() {
        let Some(i) = item.origin() else {
            let Item::Written(m) = item else {
                unreachable!()
            };
            written.push(k);
            output.push(m);
            origin.push(None);
            continue;
        };
        if last.is_some_and(|l| i <= l) || i >= len {
            return Err(violation(
                "verbatim",
                format!(
                    "output item {k} names history message {i}: indices must increase and lie below {len}"
                ),
            ));
        }
        last = Some(i);
        let message = match (history.get(i), item) {
            (Some(original), Item::Kept(_)) => original,
            (Some(original), Item::Rewritten(_, rewritten)) => {
                if i >= tail_start || !is_rewrite_of(original, rewritten) {
                    return Err(violation(
                        "verbatim",
                        format!("output item {k} is not a valid rewrite of history message {i}"),
                    ));
                }
                rewritten
            }
            (None, Item::Kept(_)) => match history.role_before(i) {
                Some(_) => {
                    let at = history.before.partition_point(|&(j, _)| j < i);
                    &placeholders[at]
                }
                None => {
                    return Err(violation(
                        "verbatim",
                        format!("output item {k} keeps history message {i}, which was not sent"),
                    ));
                }
            },
            _ => {
                return Err(violation(
                    "verbatim",
                    format!("output item {k} rewrites history message {i}, which was not sent"),
                ));
            }
        };
        output.push(message);
        origin.push(Some(i));
    }

    // Every system message is kept.
    let kept: std::collections::BTreeSet<usize> = items
        .iter()
        .filter_map(|item| match item {
            Item::Kept(i) => Some(*i as usize),
            _ => None,
        })
        .collect();
    let systems = history
        .before
        .iter()
        .filter(|(_, role)| *role == Role::System)
        .map(|&(i, _)| i)
        .chain(
            history
                .messages
                .iter()
                .enumerate()
                .filter(|(_, m)| m.role == Role::System)
                .map(|(i, _)| history.offset + i),
        );
    for i in systems {
        if !kept.contains(&i) {
            return Err(violation(
                "system-kept",
                format!("system message {i} was dropped"),
            ));
        }
    }

    // condense's own messages: the summary pair of a fold, where `assemble`
    // puts it. Found by position, not by their text: a history message may
    // begin with the marker too.
    let s = output
        .iter()
        .position(|m| m.role != Role::System)
        .unwrap_or(output.len());
    if boundary == 0 {
        if let Some(&k) = written.first() {
            return Err(violation(
                "summary",
                format!("output item {k} is written by condense, but nothing was folded"),
            ));
        }
    } else {
        let is_pair = |k: usize, role: Role| {
            output.get(k).is_some_and(|m| {
                m.role == role
                    && m.is_condense_summary()
                    && m.parts.iter().all(|p| matches!(p, Part::Text(_)))
            })
        };
        if written != [s, s + 1] || !(is_pair(s, Role::User) && is_pair(s + 1, Role::Assistant)) {
            return Err(violation(
                "summary",
                format!(
                    "a fold of {boundary} messages needs condense's summary (user) and \
                     acknowledgement (assistant), text only, as output items {s} and {}, and no other written item",
                    s + 1
                ),
            ));
        }
    }

    // Pairs: the only calls allowed to stay unanswered are those the history
    // itself has in flight.
    // (Only the calls of the last assistant message can be in flight: the
    // history from it on says which, without going over the whole history.)
    let last_call = history
        .messages
        .iter()
        .rposition(|m| m.role == Role::Assistant)
        .unwrap_or(0);
    let pending_in = check_pairs(&history.messages[last_call..]).unwrap_or_default();
    let pending_out = check_pairs(&output)?;
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
            valid_junction(output[k - 1], output[k]).map_err(|why| {
                violation(
                    "role-order",
                    format!("output items {} and {k}: {why}", k - 1),
                )
            })?;
        }
    }
    let first_in = history
        .before
        .iter()
        .map(|&(_, role)| role)
        .chain(history.messages.iter().map(|m| m.role))
        .find(|&role| role != Role::System);
    let first_out = output
        .iter()
        .find(|m| m.role != Role::System)
        .map(|m| m.role);
    if first_in == Some(Role::User) && first_out != Some(Role::User) {
        return Err(violation(
            "role-order",
            "the first non-system message is no longer a user message".into(),
        ));
    }
    Ok(())
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

    fn k(i: u32) -> Item {
        Item::Kept(i)
    }
    fn w(m: Message) -> Item {
        Item::Written(m)
    }
    fn all(h: &[Message]) -> Vec<Item> {
        (0..h.len() as u32).map(k).collect()
    }
    fn rule(h: &[Message], items: &[Item], at: Cut) -> &'static str {
        check_items(History::whole(h), items, at).unwrap_err().rule
    }
    fn ok(h: &[Message], items: &[Item], at: Cut) {
        check_items(History::whole(h), items, at).unwrap()
    }

    #[test]
    fn unchanged_output_is_valid() {
        let h = vec![
            Message::text(Role::System, "sys"),
            user("hi"),
            call("a"),
            result("a"),
        ];
        ok(&h, &all(&h), cut(0, 0));
    }

    #[test]
    fn dropped_system_message_is_caught() {
        let h = vec![
            Message::text(Role::System, "sys"),
            user("task"),
            call("a"),
            result("a"),
        ];
        let out = [w(summary()), w(ack()), k(1), k(2), k(3)];
        assert_eq!(rule(&h, &out, cut(1, 1)), "system-kept");
    }

    #[test]
    fn split_pair_is_caught() {
        let h = vec![user("task"), call("a"), result("a"), call("b"), result("b")];
        // Tail starting at a result: the call it answers was folded.
        let out = [w(summary()), w(ack()), k(2), k(3), k(4)];
        assert_eq!(rule(&h, &out, cut(2, 2)), "pairs-intact");
    }

    #[test]
    fn a_tail_not_kept_in_order_is_caught() {
        let h = vec![user("task"), call("a"), result("a")];
        assert_eq!(rule(&h, &[k(0), k(1)], cut(0, 0)), "tail-verbatim");
        assert_eq!(
            rule(
                &h,
                &[k(0), k(1), Item::Rewritten(2, result("b"))],
                cut(0, 0)
            ),
            "tail-verbatim"
        );
        // Out of order before the tail.
        let h = vec![user("task"), user("b"), user("c"), user("d")];
        assert_eq!(rule(&h, &[k(1), k(0), k(3)], cut(0, 3)), "verbatim");
        // An index past the history.
        assert_eq!(rule(&h, &[k(0), k(9), k(3)], cut(0, 3)), "verbatim");
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
        let out = [
            k(0),
            k(1),
            Item::Rewritten(2, pruned),
            Item::Rewritten(3, cleared),
            k(4),
            k(5),
        ];
        ok(&h, &out, cut(0, 4));
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
        let out = [k(0), Item::Rewritten(1, edited), k(2)];
        assert_eq!(rule(&h, &out, cut(0, 2)), "verbatim");

        let h = vec![user("task"), call("a"), result("a")];
        let mut renamed = call("a");
        if let Part::ToolCall(c) = &mut renamed.parts[0] {
            c.arguments = "{\"x\":1}".into();
        }
        let out = [k(0), Item::Rewritten(1, renamed), k(2)];
        assert_eq!(rule(&h, &out, cut(0, 2)), "verbatim");
        // An emptied message is not a rewrite either.
        let out = [k(0), Item::Rewritten(1, assistant(vec![])), k(2)];
        assert_eq!(rule(&h, &out, cut(0, 2)), "verbatim");
        // Nor is a person's message with other words.
        let out = [Item::Rewritten(0, user("task, reworded")), k(1), k(2)];
        assert_eq!(rule(&h, &out, cut(0, 2)), "verbatim");
        // Nor another role.
        let out = [
            Item::Rewritten(0, Message::text(Role::Assistant, "task")),
            k(1),
            k(2),
        ];
        assert_eq!(rule(&h, &out, cut(0, 2)), "verbatim");
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
        ok(&h, &[k(0), k(1), k(2), k(5), k(6), k(7)], cut(0, 7));
        // Only its call elided: its result is orphaned.
        assert_eq!(
            rule(&h, &[k(0), k(1), k(2), k(4), k(7)], cut(0, 7)),
            "pairs-intact"
        );
    }

    #[test]
    fn consecutive_user_messages_created_by_the_fold_are_caught() {
        let h = vec![user("one"), call("a"), result("a"), user("two")];
        // The opener pinned before the tail's user message.
        let out = [w(summary()), w(ack()), k(0), k(3)];
        assert_eq!(rule(&h, &out, cut(3, 3)), "role-order");
    }

    #[test]
    fn history_messages_that_begin_with_the_marker_are_plain_history() {
        // A system prompt, a person quoting an earlier condensed request, and
        // an assistant answer, all starting with the marker, kept before the
        // tail: condense's own pair is the `written` one, in its place.
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
        let out = [
            k(0),
            w(summary()),
            w(ack()),
            k(1),
            Item::Rewritten(4, marked(Role::Assistant, "noted")),
            k(5),
            k(6),
            k(7),
        ];
        ok(&h, &out, cut(4, 6));
        ok(&h, &all(&h), cut(0, 3));
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
        ok(
            &h,
            &[k(0), w(summary()), w(ack()), k(1), k(4), k(5)],
            cut(4, 4),
        );
        // After the pinned opener instead of before it.
        assert_eq!(
            rule(
                &h,
                &[k(0), k(1), w(summary()), w(ack()), k(4), k(5)],
                cut(4, 4)
            ),
            "summary"
        );
        // A fold without its acknowledgement.
        assert_eq!(
            rule(&h, &[k(0), w(summary()), k(1), k(4), k(5)], cut(4, 4)),
            "summary"
        );
        // A summary pair with nothing folded.
        assert_eq!(
            rule(
                &h,
                &[k(0), w(summary()), w(ack()), k(1), k(4), k(5)],
                cut(0, 4)
            ),
            "summary"
        );
        // A written message that is not condense's.
        assert_eq!(
            rule(
                &h,
                &[k(0), w(user("hi")), w(ack()), k(1), k(4), k(5)],
                cut(4, 4)
            ),
            "summary"
        );
        // A cut that does not fit the history.
        assert_eq!(rule(&h, &all(&h), cut(5, 4)), "tail-verbatim");
    }

    #[test]
    fn an_offset_history_knows_the_messages_before_it_by_role() {
        // The compressor's view of an offset call: messages 0 (system) and 1
        // (the pinned opener) are known by role only.
        let window = vec![call("b"), result("b"), call("c"), result("c")];
        let before = [(0, Role::System), (1, Role::User)];
        let history = History {
            offset: 4,
            messages: &window,
            before: &before,
        };
        let out = [k(0), w(summary()), w(ack()), k(1), k(6), k(7)];
        check_items(history, &out, cut(6, 6)).unwrap();
        // Dropping the system message before the offset is caught too.
        let out = [w(summary()), w(ack()), k(1), k(6), k(7)];
        assert_eq!(
            check_items(history, &out, cut(6, 6)).unwrap_err().rule,
            "system-kept"
        );
        // A message before the offset that it does not know of.
        let out = [k(0), w(summary()), w(ack()), k(2), k(6), k(7)];
        assert_eq!(
            check_items(history, &out, cut(6, 6)).unwrap_err().rule,
            "verbatim"
        );
    }
}
