//! Developer-loop aggregation: a long run of edit/run steps (the agent editing
//! files and running commands, over and over) keeps its first and its last step
//! and loses the ones in between, with a placeholder saying what was elided.
//!
//! A *step* is an assistant message with tool calls followed directly by the
//! result carriers that answer them (`tool` messages, or Anthropic-style `user`
//! messages holding only tool results); a parallel batch is one step. A step is
//! a *loop step* when every call in it is mutating or exec-capable (by
//! `config.tools`), every call is answered inside the step, and its carriers hold
//! nothing but tool results (a person's words are never elided). A *run* is a
//! maximal sequence of loop steps that directly follow one another. A run of at
//! least `max_loop_steps_before_aggregate` steps keeps its first step unchanged,
//! drops steps 2..n-1 whole (assistant message and all its carriers, so no call
//! or result is orphaned), and keeps its last step with one placeholder text part
//! inserted into its assistant message, after the leading thinking parts. No
//! message is created, so every junction the pass makes is a carrier followed by
//! an assistant message with tool calls: valid for OpenAI and Anthropic alike.

use super::Kept;
use crate::settings::{Settings, ToolClass};
use condense_model::{Part, Role};
use std::collections::{HashMap, HashSet};

/// How every placeholder this pass writes begins.
pub const PLACEHOLDER_PREFIX: &str = "[condense: ";

/// The placeholder for `elided` steps whose tool calls were `tools` (name and
/// call count, in order of first appearance).
pub fn placeholder(elided: u32, tools: &[(&str, u32)]) -> String {
    let steps = if elided == 1 { "step" } else { "steps" };
    let mut out =
        format!("{PLACEHOLDER_PREFIX}{elided} {steps} of this edit/run loop elided here (");
    for (i, (name, calls)) in tools.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(name);
        out.push_str(" ×");
        out.push_str(&calls.to_string());
    }
    out.push_str(")]");
    out
}

/// A step of the region: `kept[start..end]`.
struct Step {
    start: usize,
    end: usize,
    is_loop: bool,
}

/// The step that starts at `kept[i]`, if `kept[i]` is an assistant message with
/// tool calls. The step takes the carriers that directly follow and answer only
/// its calls, up to the one that answers the last of them.
fn step_at(kept: &[Kept], i: usize, config: &Settings) -> Option<Step> {
    let head = &kept[i].message;
    if head.role != Role::Assistant || !head.has_tool_calls() {
        return None;
    }
    let mut is_loop = true;
    let mut open: HashSet<&str> = HashSet::new();
    for call in head.tool_calls() {
        // A repeated id cannot be paired reliably: leave such a step alone.
        if !open.insert(call.id.as_str()) {
            is_loop = false;
        }
        if config.tools.class_of(&call.name) == ToolClass::ReadOnly {
            is_loop = false;
        }
    }
    let mut end = i + 1;
    while !open.is_empty() && end < kept.len() {
        let m = &kept[end].message;
        if !m.is_result_carrier() || !m.tool_results().all(|r| open.contains(r.call_id.as_str())) {
            break;
        }
        for part in &m.parts {
            match part {
                Part::ToolResult(r) => {
                    // Fails only for a result repeated within this carrier.
                    if !open.remove(r.call_id.as_str()) {
                        is_loop = false;
                    }
                }
                // A person's words (or anything else) next to the results.
                _ => is_loop = false,
            }
        }
        end += 1;
    }
    // A call left unanswered: removing the step could not orphan anything, but
    // the history is not what this pass understands, so it stays as it is.
    if !open.is_empty() {
        is_loop = false;
    }
    Some(Step {
        start: i,
        end,
        is_loop,
    })
}

/// What to do to a collapsing run: drop `kept[drop]`, then insert `text` into
/// the assistant message at `kept[last]`.
struct Collapse {
    drop: std::ops::Range<usize>,
    last: usize,
    text: String,
}

/// The tools called in `kept[range]`, with their call counts, in order of
/// first appearance.
fn tool_counts(kept: &[Kept], range: std::ops::Range<usize>) -> Vec<(&str, u32)> {
    let mut counts: Vec<(&str, u32)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for k in &kept[range] {
        if k.message.role != Role::Assistant {
            continue;
        }
        for call in k.message.tool_calls() {
            let name = call.name.as_str();
            match index.get(name) {
                Some(&at) => counts[at].1 = counts[at].1.saturating_add(1),
                None => {
                    index.insert(name, counts.len());
                    counts.push((name, 1));
                }
            }
        }
    }
    counts
}

/// Plans the collapse of `run` (loop steps that directly follow one another),
/// if it is long enough; adds its elided steps to `elided`.
fn plan_run(
    kept: &[Kept],
    run: &[Step],
    min_steps: usize,
    plan: &mut Vec<Collapse>,
    elided: &mut u32,
) {
    if run.len() < min_steps {
        return;
    }
    let (first, last) = (&run[0], &run[run.len() - 1]);
    let drop = first.end..last.start;
    let k = u32::try_from(run.len() - 2).unwrap_or(u32::MAX);
    let text = placeholder(k, &tool_counts(kept, drop.clone()));
    *elided = elided.saturating_add(k);
    plan.push(Collapse {
        drop,
        last: last.start,
        text,
    });
}

/// Returns the region and how many steps were elided.
pub fn apply(kept: Vec<Kept>, config: &Settings) -> (Vec<Kept>, u32) {
    if !config.aggregate_developer_loops {
        return (kept, 0);
    }
    // Validation keeps N ≥ 3; a run needs three steps to elide any anyway.
    let min_steps = usize::try_from(config.max_loop_steps_before_aggregate)
        .unwrap_or(usize::MAX)
        .max(3);

    // Scan once: steps tile the region between the other messages, so loop
    // steps that are consecutive in this scan directly follow one another.
    let mut plan: Vec<Collapse> = Vec::new();
    let mut elided = 0u32;
    let mut run: Vec<Step> = Vec::new();
    let mut i = 0;
    while i < kept.len() {
        match step_at(&kept, i, config) {
            Some(step) if step.is_loop => {
                i = step.end;
                run.push(step);
            }
            other => {
                plan_run(&kept, &run, min_steps, &mut plan, &mut elided);
                run.clear();
                i = other.map_or(i + 1, |s| s.end);
            }
        }
    }
    plan_run(&kept, &run, min_steps, &mut plan, &mut elided);
    if plan.is_empty() {
        return (kept, 0);
    }

    let mut out = Vec::with_capacity(kept.len());
    let mut plan = plan.into_iter().peekable();
    for (i, mut k) in kept.into_iter().enumerate() {
        let Some(next) = plan.peek() else {
            out.push(k);
            continue;
        };
        if next.drop.contains(&i) {
            continue;
        }
        if i == next.last {
            let at = k
                .message
                .parts
                .iter()
                .take_while(|p| matches!(p, Part::Thinking(_)))
                .count();
            let text = plan.next().map(|c| c.text).unwrap_or_default();
            k.message.parts.insert(at, Part::Text(text));
        }
        out.push(k);
    }
    (out, elided)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::ToolClasses;
    use condense_model::Message;
    use condense_model::invariants::check_pairs;
    use condense_model::{Thinking, ToolCall, ToolResult};

    fn config(n: u32) -> Settings {
        Settings {
            aggregate_developer_loops: true,
            max_loop_steps_before_aggregate: n,
            ..Settings::default()
        }
    }

    fn tc(id: &str, name: &str) -> Part {
        Part::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: format!("{{\"id\":\"{id}\"}}"),
        })
    }
    fn tr(id: &str) -> Part {
        Part::ToolResult(ToolResult {
            call_id: id.into(),
            content: format!("result of {id}"),
            is_error: false,
        })
    }
    fn assistant(parts: Vec<Part>) -> Message {
        Message {
            role: Role::Assistant,
            parts,
        }
    }
    fn tool_msg(id: &str) -> Message {
        Message {
            role: Role::Tool,
            parts: vec![tr(id)],
        }
    }
    fn user_carrier(parts: Vec<Part>) -> Message {
        Message {
            role: Role::User,
            parts,
        }
    }
    fn user(t: &str) -> Message {
        Message::text(Role::User, t)
    }
    fn say(t: &str) -> Message {
        Message::text(Role::Assistant, t)
    }

    /// OpenAI style: assistant with one call, then its `tool` message.
    fn step(id: &str, name: &str) -> Vec<Message> {
        vec![
            assistant(vec![Part::Text(format!("doing {id}")), tc(id, name)]),
            tool_msg(id),
        ]
    }
    /// Anthropic style: assistant with one call, then a user carrier.
    fn astep(id: &str, name: &str) -> Vec<Message> {
        vec![assistant(vec![tc(id, name)]), user_carrier(vec![tr(id)])]
    }
    /// `n` OpenAI-style steps alternating Edit and Bash, ids `{prefix}{i}`.
    fn edit_run(prefix: &str, n: usize) -> Vec<Message> {
        (0..n)
            .flat_map(|i| {
                step(
                    &format!("{prefix}{i}"),
                    if i % 2 == 0 { "Edit" } else { "Bash" },
                )
            })
            .collect()
    }

    fn region(messages: &[Message]) -> Vec<Kept> {
        region_at(messages, 0)
    }
    fn region_at(messages: &[Message], base: usize) -> Vec<Kept> {
        super::super::unchanged(messages, base)
    }
    fn msgs(kept: &[Kept]) -> Vec<Message> {
        kept.iter().map(|k| k.message.clone()).collect()
    }
    fn placeholder_of(m: &Message) -> Option<&str> {
        m.parts.iter().find_map(|p| match p {
            Part::Text(t) if t.starts_with(PLACEHOLDER_PREFIX) => Some(t.as_str()),
            _ => None,
        })
    }
    fn with_placeholder(m: &Message, text: &str) -> Message {
        let mut m = m.clone();
        let at = m
            .parts
            .iter()
            .take_while(|p| matches!(p, Part::Thinking(_)))
            .count();
        m.parts.insert(at, Part::Text(text.into()));
        m
    }

    /// Runs the pass and checks what every output must satisfy: origins
    /// strictly increasing, each message equal to its input (or that input
    /// with exactly one placeholder inserted after its leading thinking), no
    /// message with a placeholder unless something was elided, calls and
    /// results still paired, and provider-valid role order at every junction
    /// the pass created.
    fn run(messages: &[Message], config: &Settings) -> (Vec<Kept>, u32) {
        let input = region(messages);
        let (out, elided) = apply(input.clone(), config);
        for w in out.windows(2) {
            assert!(w[0].origin < w[1].origin, "origins not increasing");
        }
        let mut placeholders = 0;
        for k in &out {
            let original = &messages[k.origin];
            if k.message != *original {
                let text = placeholder_of(&k.message).expect("changed message has a placeholder");
                assert_eq!(k.message, with_placeholder(original, text));
                assert_eq!(original.role, Role::Assistant);
                assert!(original.has_tool_calls());
                placeholders += 1;
            }
        }
        assert_eq!(placeholders > 0, elided > 0);
        assert_eq!(
            check_pairs(&msgs(&out)).map_err(|v| v.to_string()),
            check_pairs(messages).map_err(|v| v.to_string()),
        );
        assert_eq!(out.len() < messages.len(), elided > 0);
        for w in out.windows(2) {
            if w[1].origin != w[0].origin + 1 {
                assert_junction(&w[0].message, &w[1].message);
            }
        }
        (out, elided)
    }

    /// The role-order rule of `check_output` for a junction the pass made.
    fn assert_junction(a: &Message, b: &Message) {
        assert!(
            !a.has_tool_calls() || b.has_tool_results(),
            "calls must be answered"
        );
        assert!(
            !b.has_tool_results() || a.has_tool_calls() || a.has_tool_results(),
            "results must follow their calls"
        );
        assert!(
            a.role != b.role || (a.is_result_carrier() && b.is_result_carrier()),
            "two consecutive {:?} messages",
            a.role
        );
    }

    /// No two consecutive messages share a role, except consecutive carriers.
    fn assert_alternation(out: &[Kept]) {
        for w in out.windows(2) {
            let (a, b) = (&w[0].message, &w[1].message);
            assert!(
                a.role != b.role || (a.is_result_carrier() && b.is_result_carrier()),
                "two consecutive {:?} messages at origins {} and {}",
                a.role,
                w[0].origin,
                w[1].origin
            );
        }
    }

    #[test]
    fn off_by_default() {
        let h: Vec<Message> = [vec![user("task")], edit_run("a", 12)].concat();
        let input = region(&h);
        assert!(!Settings::default().aggregate_developer_loops);
        let (out, elided) = apply(input.clone(), &Settings::default());
        assert_eq!((out, elided), (input, 0));
    }

    #[test]
    fn exactly_n_steps_collapse() {
        let h: Vec<Message> = [vec![user("task")], edit_run("a", 5), vec![say("done")]].concat();
        let (out, elided) = run(&h, &config(5));
        assert_eq!(elided, 3);
        // user, step 1 (2 messages), step 5 (2 messages), the closing text.
        assert_eq!(
            out.iter().map(|k| k.origin).collect::<Vec<_>>(),
            [0, 1, 2, 9, 10, 11]
        );
        let text = placeholder(3, &[("Bash", 2), ("Edit", 1)]);
        assert_eq!(out[3].message, with_placeholder(&h[9], &text));
        assert_eq!(placeholder_of(&out[3].message), Some(text.as_str()));
    }

    #[test]
    fn n_minus_one_steps_stay() {
        let h: Vec<Message> = [vec![user("task")], edit_run("a", 4), vec![say("done")]].concat();
        let (out, elided) = run(&h, &config(5));
        assert_eq!((out, elided), (region(&h), 0));
    }

    #[test]
    fn minimum_n_three() {
        let h: Vec<Message> = [vec![user("task")], edit_run("a", 3)].concat();
        let (out, elided) = run(&h, &config(3));
        assert_eq!(elided, 1);
        assert_eq!(
            out.iter().map(|k| k.origin).collect::<Vec<_>>(),
            [0, 1, 2, 5, 6]
        );
        assert_eq!(
            placeholder_of(&out[3].message),
            Some("[condense: 1 step of this edit/run loop elided here (Bash ×1)]")
        );
        let two: Vec<Message> = [vec![user("task")], edit_run("a", 2)].concat();
        assert_eq!(run(&two, &config(3)), (region(&two), 0));
    }

    #[test]
    fn longer_runs_elide_all_but_first_and_last() {
        let h: Vec<Message> = [vec![user("task")], edit_run("a", 20)].concat();
        let (out, elided) = run(&h, &config(5));
        assert_eq!(elided, 18);
        assert_eq!(out.len(), 5);
        assert_eq!(
            placeholder_of(&out[3].message),
            Some("[condense: 18 steps of this edit/run loop elided here (Bash ×9, Edit ×9)]")
        );
    }

    #[test]
    fn placeholder_text_is_exact() {
        assert_eq!(
            placeholder(3, &[("Edit", 2), ("Bash", 4), ("Write", 1)]),
            "[condense: 3 steps of this edit/run loop elided here (Edit ×2, Bash ×4, Write ×1)]"
        );
        assert!(placeholder(1, &[("Bash", 1)]).starts_with(PLACEHOLDER_PREFIX));
        // Through the pass: counts in order of first appearance among the
        // elided steps (the first and last steps' tools do not count).
        let h: Vec<Message> = [
            vec![user("task")],
            step("s1", "Bash"),
            step("s2", "Write"),
            vec![assistant(vec![tc("s3a", "Edit"), tc("s3b", "Write")])],
            vec![tool_msg("s3a"), tool_msg("s3b")],
            step("s4", "Edit"),
            step("s5", "bash"),
            step("s6", "Edit"),
            step("s7", "MultiEdit"),
        ]
        .concat();
        let (out, elided) = run(&h, &config(5));
        assert_eq!(elided, 5);
        assert_eq!(
            placeholder_of(&out[3].message),
            Some(
                "[condense: 5 steps of this edit/run loop elided here (Write ×2, Edit ×3, bash ×1)]"
            )
        );
        // The same input gives the same bytes.
        assert_eq!(run(&h, &config(5)), (out, elided));
    }

    #[test]
    fn placeholder_goes_after_leading_thinking() {
        let thinking = |t: &str, sig: Option<&str>| {
            Part::Thinking(Thinking {
                text: t.into(),
                signature: sig.map(Into::into),
            })
        };
        let mut h: Vec<Message> = [vec![user("task")], edit_run("a", 4)].concat();
        let last = assistant(vec![
            thinking("first", Some("sig1")),
            thinking("second", None),
            Part::Text("now test".into()),
            tc("z", "Bash"),
            thinking("late", None),
        ]);
        h.extend([last.clone(), tool_msg("z")]);
        let (out, elided) = run(&h, &config(5));
        assert_eq!(elided, 3);
        let text = placeholder(3, &[("Bash", 2), ("Edit", 1)]);
        assert_eq!(
            out[3].message.parts,
            vec![
                thinking("first", Some("sig1")),
                thinking("second", None),
                Part::Text(text),
                Part::Text("now test".into()),
                tc("z", "Bash"),
                thinking("late", None),
            ]
        );
        // Without thinking, the placeholder is the first part.
        let h: Vec<Message> = [vec![user("task")], edit_run("a", 5)].concat();
        let (out, _) = run(&h, &config(5));
        assert!(
            matches!(&out[3].message.parts[0], Part::Text(t) if t.starts_with(PLACEHOLDER_PREFIX))
        );
        assert_eq!(out[3].message.parts[1..], h[9].parts[..]);
    }

    #[test]
    fn parallel_batch_with_tool_messages_is_one_step_kept_whole() {
        // Step 1 is a batch of three calls answered by three tool messages.
        let batch = vec![
            assistant(vec![tc("p1", "Edit"), tc("p2", "Write"), tc("p3", "Bash")]),
            tool_msg("p1"),
            tool_msg("p3"),
            tool_msg("p2"),
        ];
        // As first step: kept whole.
        let h: Vec<Message> = [vec![user("task")], batch.clone(), edit_run("a", 2)].concat();
        let (out, elided) = run(&h, &config(3));
        assert_eq!(elided, 1);
        assert_eq!(
            out.iter().map(|k| k.origin).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4, 7, 8]
        );
        // As the one elided step: removed whole, counted once, calls counted.
        let h: Vec<Message> = [step("s", "Bash"), batch.clone(), step("t", "Bash")].concat();
        let (out, elided) = run(&h, &config(3));
        assert_eq!(elided, 1);
        assert_eq!(
            out.iter().map(|k| k.origin).collect::<Vec<_>>(),
            [0, 1, 6, 7]
        );
        assert_eq!(
            placeholder_of(&out[2].message),
            Some(
                "[condense: 1 step of this edit/run loop elided here (Edit ×1, Write ×1, Bash ×1)]"
            )
        );
        // As last step: kept whole, the placeholder in its assistant message.
        let h: Vec<Message> = [edit_run("a", 2), batch.clone()].concat();
        let (out, elided) = run(&h, &config(3));
        assert_eq!(elided, 1);
        assert_eq!(
            out.iter().map(|k| k.origin).collect::<Vec<_>>(),
            [0, 1, 4, 5, 6, 7]
        );
        // Two steps counting the batch as one: too short for N = 3.
        let h: Vec<Message> = [step("s", "Bash"), batch].concat();
        assert_eq!(run(&h, &config(3)), (region(&h), 0));
    }

    #[test]
    fn parallel_batch_with_one_anthropic_carrier_is_one_step() {
        let batch = vec![
            assistant(vec![tc("p1", "Edit"), tc("p2", "Bash")]),
            user_carrier(vec![tr("p2"), tr("p1")]),
        ];
        let h: Vec<Message> = [
            vec![user("task")],
            astep("a", "Edit"),
            batch.clone(),
            astep("b", "Bash"),
            batch.iter().map(|m| rename_ids(m, "q")).collect(),
            astep("c", "Edit"),
        ]
        .concat();
        let (out, elided) = run(&h, &config(5));
        assert_eq!(elided, 3);
        assert_eq!(
            out.iter().map(|k| k.origin).collect::<Vec<_>>(),
            [0, 1, 2, 9, 10]
        );
        assert_eq!(
            placeholder_of(&out[3].message),
            Some("[condense: 3 steps of this edit/run loop elided here (Edit ×2, Bash ×3)]")
        );
        assert_alternation(&out);
        // Four steps (the batches count once each): not enough for N = 5.
        let short: Vec<Message> = h[..9].to_vec();
        assert_eq!(run(&short, &config(5)), (region(&short), 0));
    }

    fn rename_ids(m: &Message, prefix: &str) -> Message {
        let parts = m
            .parts
            .iter()
            .map(|p| match p {
                Part::ToolCall(c) => Part::ToolCall(ToolCall {
                    id: format!("{prefix}{}", c.id),
                    ..c.clone()
                }),
                Part::ToolResult(r) => Part::ToolResult(ToolResult {
                    call_id: format!("{prefix}{}", r.call_id),
                    ..r.clone()
                }),
                other => other.clone(),
            })
            .collect();
        Message {
            role: m.role,
            parts,
        }
    }

    #[test]
    fn read_only_call_breaks_the_run() {
        // 6 edit/run steps with a Read step in the middle: runs of 3 and 2.
        let h: Vec<Message> = [
            vec![user("task")],
            edit_run("a", 3),
            step("r", "Read"),
            edit_run("b", 3),
        ]
        .concat();
        assert_eq!(run(&h, &config(4)), (region(&h), 0));
        // A read-only call inside a parallel batch makes the whole step read-only.
        let h: Vec<Message> = [
            vec![user("task")],
            edit_run("a", 3),
            vec![assistant(vec![tc("m1", "Edit"), tc("m2", "Grep")])],
            vec![tool_msg("m1"), tool_msg("m2")],
            edit_run("b", 3),
        ]
        .concat();
        assert_eq!(run(&h, &config(4)), (region(&h), 0));
        // With N = 3 both sides collapse on their own; the mixed step stays.
        let (out, elided) = run(&h, &config(3));
        assert_eq!(elided, 2);
        assert_eq!(
            out.iter().map(|k| k.origin).collect::<Vec<_>>(),
            [0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 14, 15]
        );
    }

    #[test]
    fn read_only_runs_are_untouched() {
        let names = [
            "Read", "Grep", "Glob", "LS", "WebFetch", "Read", "Grep", "Read",
        ];
        let h: Vec<Message> = std::iter::once(user("task"))
            .chain(
                names
                    .iter()
                    .enumerate()
                    .flat_map(|(i, n)| step(&format!("r{i}"), n)),
            )
            .collect();
        assert_eq!(run(&h, &config(3)), (region(&h), 0));
    }

    #[test]
    fn user_text_between_steps_breaks_the_run() {
        let h: Vec<Message> = [
            vec![user("task")],
            edit_run("a", 3),
            vec![user("keep going")],
            edit_run("b", 3),
        ]
        .concat();
        assert_eq!(run(&h, &config(4)), (region(&h), 0));
        // Anthropic style: the user's text message (no results) is a turn.
        let h: Vec<Message> = [
            vec![user("task")],
            astep("a", "Edit"),
            astep("b", "Bash"),
            vec![say("I will fix it"), user("please also run lint")],
            astep("c", "Edit"),
            astep("d", "Bash"),
        ]
        .concat();
        assert_eq!(run(&h, &config(3)), (region(&h), 0));
    }

    #[test]
    fn other_messages_between_steps_break_the_run() {
        for between in [
            say("thinking out loud"),
            Message::text(Role::System, "note"),
        ] {
            let h: Vec<Message> = [
                vec![user("task")],
                edit_run("a", 2),
                vec![between],
                edit_run("b", 2),
            ]
            .concat();
            assert_eq!(run(&h, &config(3)), (region(&h), 0));
        }
    }

    #[test]
    fn anthropic_carrier_with_user_text_is_not_a_loop_step() {
        let chatty = vec![
            assistant(vec![tc("x", "Bash")]),
            user_carrier(vec![tr("x"), Part::Text("stop, use the other file".into())]),
        ];
        let h: Vec<Message> = [
            vec![user("task")],
            astep("a", "Edit"),
            astep("b", "Bash"),
            chatty.clone(),
            astep("c", "Edit"),
            astep("d", "Bash"),
        ]
        .concat();
        assert_eq!(run(&h, &config(3)), (region(&h), 0));
        // Even as a middle step of an otherwise long run, the words stay.
        let h: Vec<Message> = [
            vec![user("task")],
            astep("a", "Edit"),
            astep("b", "Bash"),
            astep("c", "Edit"),
            chatty,
            astep("d", "Edit"),
            astep("e", "Bash"),
            astep("f", "Edit"),
        ]
        .concat();
        let (out, elided) = run(&h, &config(3));
        assert_eq!(elided, 2);
        assert!(
            out.iter()
                .any(|k| k.message.joined_text() == "stop, use the other file")
        );
        assert_alternation(&out);
    }

    #[test]
    fn carrier_with_opaque_part_is_not_a_loop_step() {
        let odd = vec![
            assistant(vec![tc("x", "Bash")]),
            Message {
                role: Role::Tool,
                parts: vec![tr("x"), Part::Opaque("{\"type\":\"image\"}".into())],
            },
        ];
        let h: Vec<Message> = [edit_run("a", 2), odd, edit_run("b", 2)].concat();
        assert_eq!(run(&h, &config(3)), (region(&h), 0));
    }

    #[test]
    fn unanswered_calls_are_not_a_loop_step() {
        // The last step's call is still in flight.
        let h: Vec<Message> = [edit_run("a", 2), vec![assistant(vec![tc("z", "Bash")])]].concat();
        assert_eq!(run(&h, &config(3)), (region(&h), 0));
        // A batch whose second result is missing (not a valid history, but the
        // pass must leave it alone).
        let h: Vec<Message> = [
            edit_run("a", 2),
            vec![
                assistant(vec![tc("y1", "Bash"), tc("y2", "Edit")]),
                tool_msg("y1"),
            ],
            edit_run("b", 2),
        ]
        .concat();
        let (out, elided) = apply(region(&h), &config(3));
        assert_eq!((out, elided), (region(&h), 0));
    }

    #[test]
    fn tool_classes_come_from_config_patterns() {
        // `mcp__*__exec*` is an exec pattern of the default config.
        let h: Vec<Message> = [
            vec![user("task")],
            step("a", "mcp__box__exec_command"),
            step("b", "mcp__shell__execute"),
            step("c", "mcp__box__exec"),
        ]
        .concat();
        let (out, elided) = run(&h, &config(3));
        assert_eq!(elided, 1);
        assert_eq!(
            placeholder_of(&out[3].message),
            Some("[condense: 1 step of this edit/run loop elided here (mcp__shell__execute ×1)]")
        );
        // Not matching the pattern: read-only.
        let h: Vec<Message> = [
            vec![user("task")],
            step("a", "mcp__box__exec_command"),
            step("b", "mcp__box__read_file"),
            step("c", "mcp__box__exec"),
        ]
        .concat();
        assert_eq!(run(&h, &config(3)), (region(&h), 0));
        // A custom mutating list: its tools form loops, the defaults no longer do.
        let custom = Settings {
            tools: ToolClasses {
                mutating: vec!["patch_*".into(), "save".into()],
                exec_capable: vec!["run?".into()],
            },
            ..config(3)
        };
        let h: Vec<Message> = [
            vec![user("task")],
            step("a", "patch_file"),
            step("b", "run1"),
            step("c", "save"),
            step("d", "patch_dir"),
        ]
        .concat();
        let (out, elided) = run(&h, &custom);
        assert_eq!(elided, 2);
        assert_eq!(
            placeholder_of(&out[3].message),
            Some("[condense: 2 steps of this edit/run loop elided here (run1 ×1, save ×1)]")
        );
        let defaults: Vec<Message> = [vec![user("task")], edit_run("a", 4)].concat();
        assert_eq!(run(&defaults, &custom), (region(&defaults), 0));
        assert_eq!(run(&h, &config(3)), (region(&h), 0));
    }

    #[test]
    fn two_separate_runs_are_each_collapsed() {
        let h: Vec<Message> = [
            vec![user("task")],
            edit_run("a", 5),
            vec![say("tests pass"), user("now the docs")],
            edit_run("b", 6),
            vec![say("done")],
        ]
        .concat();
        let (out, elided) = run(&h, &config(5));
        assert_eq!(elided, 3 + 4);
        assert_eq!(
            out.iter().map(|k| k.origin).collect::<Vec<_>>(),
            [0, 1, 2, 9, 10, 11, 12, 13, 14, 23, 24, 25]
        );
        assert_eq!(
            placeholder_of(&out[3].message),
            Some("[condense: 3 steps of this edit/run loop elided here (Bash ×2, Edit ×1)]")
        );
        assert_eq!(
            placeholder_of(&out[9].message),
            Some("[condense: 4 steps of this edit/run loop elided here (Bash ×2, Edit ×2)]")
        );
        // Runs split by read-only steps, one of them too short: each on its own.
        let h: Vec<Message> = [
            edit_run("a", 3),
            step("r", "Read"),
            edit_run("b", 2),
            step("s", "Grep"),
            edit_run("c", 4),
        ]
        .concat();
        let (out, elided) = run(&h, &config(3));
        assert_eq!(elided, 1 + 2);
        assert_eq!(out.len(), h.len() - 2 * 3);
    }

    #[test]
    fn output_keeps_pairs_intact() {
        let histories: Vec<Vec<Message>> = vec![
            [vec![user("task")], edit_run("a", 7)].concat(),
            [
                vec![user("task")],
                astep("a", "Edit"),
                vec![assistant(vec![tc("p1", "Edit"), tc("p2", "Bash")])],
                vec![user_carrier(vec![tr("p1")]), user_carrier(vec![tr("p2")])],
                astep("b", "Bash"),
                astep("c", "Edit"),
                vec![assistant(vec![tc("z", "Bash")])],
            ]
            .concat(),
        ];
        for h in histories {
            let (out, elided) = run(&h, &config(3));
            assert!(elided > 0);
            let out = msgs(&out);
            check_pairs(&out).unwrap();
            // Every call id left has its results, and every result its call.
            let calls: HashSet<&str> = out
                .iter()
                .flat_map(|m| m.tool_calls())
                .map(|c| c.id.as_str())
                .collect();
            for r in out.iter().flat_map(|m| m.tool_results()) {
                assert!(calls.contains(r.call_id.as_str()));
            }
        }
    }

    #[test]
    fn anthropic_role_order_stays_valid() {
        let h: Vec<Message> = [
            vec![user("task")],
            astep("a", "Edit"),
            astep("b", "Bash"),
            vec![assistant(vec![tc("p1", "Write"), tc("p2", "Bash")])],
            vec![user_carrier(vec![tr("p1"), tr("p2")])],
            astep("c", "Edit"),
            astep("d", "Bash"),
            vec![say("fixed"), user("thanks, now commit")],
            astep("e", "Bash"),
            astep("f", "Bash"),
            astep("g", "Bash"),
            vec![say("committed")],
        ]
        .concat();
        assert_alternation(&region(&h));
        let (out, elided) = run(&h, &config(3));
        assert_eq!(elided, 3 + 1);
        assert_alternation(&out);
        assert_eq!(out.first().map(|k| k.message.role), Some(Role::User));
    }

    #[test]
    fn deterministic() {
        let h: Vec<Message> = [
            vec![user("task")],
            edit_run("a", 9),
            vec![user("again")],
            edit_run("b", 5),
        ]
        .concat();
        let once = apply(region(&h), &config(4));
        let twice = apply(region(&h.clone()), &config(4));
        assert_eq!(once, twice);
        assert!(once.1 > 0);
    }

    #[test]
    fn unchanged_messages_are_identical_values() {
        let h: Vec<Message> = [
            vec![Message::text(Role::System, "sys"), user("task")],
            edit_run("a", 6),
            vec![say("done")],
        ]
        .concat();
        let (out, elided) = run(&h, &config(5));
        assert_eq!(elided, 4);
        let last_step = 2 + 5 * 2;
        for k in &out {
            if k.origin == last_step {
                assert_ne!(k.message, h[k.origin]);
            } else {
                assert_eq!(k.message, h[k.origin]);
            }
        }
    }

    #[test]
    fn origins_are_kept_and_strictly_increasing() {
        let h: Vec<Message> = [vec![user("task")], edit_run("a", 6), vec![say("done")]].concat();
        let base = 40;
        let (out, elided) = apply(region_at(&h, base), &config(5));
        assert_eq!(elided, 4);
        let origins: Vec<usize> = out.iter().map(|k| k.origin).collect();
        assert_eq!(origins, [40, 41, 42, 51, 52, 53]);
        assert!(origins.windows(2).all(|w| w[0] < w[1]));
        for k in &out {
            if placeholder_of(&k.message).is_none() {
                assert_eq!(k.message, h[k.origin - base]);
            }
        }
    }

    #[test]
    fn empty_and_tiny_regions() {
        assert_eq!(apply(Vec::new(), &config(3)), (Vec::new(), 0));
        let h = vec![user("task")];
        assert_eq!(run(&h, &config(3)), (region(&h), 0));
    }
}
