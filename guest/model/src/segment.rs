//! Where a history may be cut.
//!
//! Real coding sessions put 150+ tool calls inside one user turn, so retention
//! cannot cut only between turns: it must also cut inside a turn, and there only
//! where nothing is in flight. A cut before index `i` (tail = `messages[i..]`)
//! is safe when:
//!
//! - every tool call made before `i` is answered before `i` (a call and its
//!   results, and a whole parallel batch, stay on one side);
//! - `messages[i]` is a user message that opens a turn, or an assistant
//!   message — the summary pair (user summary, assistant acknowledgement) is
//!   followed by a user message, so role order stays valid: a turn opener
//!   directly, an assistant message via the pinned opener of its turn;
//! - for an assistant message, its turn has an opener to pin.

use crate::Message;
use std::collections::HashSet;

/// Cut positions, ascending. Index 0 is never included: cutting there folds
/// nothing.
pub fn safe_cut_points(messages: &[Message]) -> Vec<usize> {
    safe_cut_points_after(messages, false)
}

/// The cut positions of a window that starts at a safe cut of the history
/// (nothing in flight there), `opener_before` telling whether a turn was
/// opened before it. Window indices; the same cuts, shifted, as
/// [`safe_cut_points`] finds after that point in the whole history.
pub fn safe_cut_points_after(messages: &[Message], opener_before: bool) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut open: HashSet<&str> = HashSet::new();
    let mut seen_opener = opener_before;
    for (i, m) in messages.iter().enumerate() {
        let eligible = if m.opens_turn() {
            true
        } else {
            m.role == crate::Role::Assistant && seen_opener
        };
        if i > 0 && open.is_empty() && eligible {
            cuts.push(i);
        }
        for r in m.tool_results() {
            open.remove(r.call_id.as_str());
        }
        open.extend(m.tool_calls().map(|c| c.id.as_str()));
        seen_opener |= m.opens_turn();
    }
    cuts
}

/// Index of the user message that opened the turn containing `index`, if that
/// turn started before `index` (i.e. a cut at `index` falls inside the turn).
pub fn opener_before(messages: &[Message], index: usize) -> Option<usize> {
    if messages.get(index).is_some_and(Message::opens_turn) {
        return None;
    }
    messages[..index].iter().rposition(Message::opens_turn)
}

/// Start index of the last `n` user turns (0 when there are fewer), in a
/// window after which `turns_before` turns were opened (0 when the last `n`
/// start before the window).
pub fn start_of_last_turns(messages: &[Message], n: usize, turns_before: usize) -> usize {
    if n == 0 {
        return messages.len();
    }
    let starts: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.opens_turn())
        .map(|(i, _)| i)
        .collect();
    let all = turns_before + starts.len();
    if all <= n || all - n < turns_before {
        0
    } else {
        starts[all - n - turns_before]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Part, Role, ToolCall, ToolResult};

    fn user(t: &str) -> Message {
        Message::text(Role::User, t)
    }
    fn calls(ids: &[&str]) -> Message {
        Message {
            role: Role::Assistant,
            parts: ids
                .iter()
                .map(|id| {
                    Part::ToolCall(ToolCall {
                        id: id.to_string(),
                        name: "Read".into(),
                        arguments: "{}".into(),
                    })
                })
                .collect(),
        }
    }
    fn result(id: &str) -> Message {
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: id.into(),
                content: "x".into(),
                is_error: false,
            })],
        }
    }

    #[test]
    fn never_cuts_between_a_call_and_its_results_or_inside_a_batch() {
        // 0 user, 1 assistant(a,b), 2 result a, 3 result b, 4 assistant(c), 5 result c, 6 user
        let h = vec![
            user("go"),
            calls(&["a", "b"]),
            result("a"),
            result("b"),
            calls(&["c"]),
            result("c"),
            user("next"),
        ];
        assert_eq!(safe_cut_points(&h), vec![1, 4, 6]);
    }

    #[test]
    fn anthropic_style_result_carriers_are_not_cut_points() {
        let carrier = |id: &str| Message {
            role: Role::User,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: id.into(),
                content: "x".into(),
                is_error: false,
            })],
        };
        let h = vec![
            user("go"),
            calls(&["a"]),
            carrier("a"),
            calls(&["b"]),
            carrier("b"),
        ];
        assert_eq!(safe_cut_points(&h), vec![1, 3]);
    }

    #[test]
    fn assistant_without_an_opener_is_not_a_cut_point() {
        let h = vec![
            Message::text(Role::System, "s"),
            Message::text(Role::Assistant, "hi"),
            user("q"),
        ];
        assert_eq!(safe_cut_points(&h), vec![2]);
    }

    #[test]
    fn opener_and_last_turns() {
        let h = vec![
            user("a"),
            calls(&["x"]),
            result("x"),
            user("b"),
            calls(&["y"]),
            result("y"),
        ];
        assert_eq!(opener_before(&h, 4), Some(3));
        assert_eq!(opener_before(&h, 3), None);
        assert_eq!(start_of_last_turns(&h, 1, 0), 3);
        assert_eq!(start_of_last_turns(&h, 2, 0), 0);
        assert_eq!(start_of_last_turns(&h, 10, 0), 0);
        // The window from message 3 on, one turn opened before it.
        assert_eq!(start_of_last_turns(&h[3..], 1, 1), 0);
        assert_eq!(start_of_last_turns(&h[3..], 2, 1), 0);
        assert_eq!(start_of_last_turns(&h[1..], 1, 1), 2);
    }

    #[test]
    fn a_window_has_the_cuts_of_the_whole_history_after_it() {
        let h = vec![
            user("go"),
            calls(&["a", "b"]),
            result("a"),
            result("b"),
            calls(&["c"]),
            result("c"),
            calls(&["d"]),
            result("d"),
            user("next"),
        ];
        let whole = safe_cut_points(&h);
        for &b in &whole {
            let window: Vec<usize> = safe_cut_points_after(&h[b..], true)
                .into_iter()
                .map(|c| c + b)
                .collect();
            let after: Vec<usize> = whole.iter().copied().filter(|&c| c > b).collect();
            assert_eq!(window, after, "window from {b}");
        }
    }
}
