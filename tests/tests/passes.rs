//! The context-engineering passes through the host and the embedded
//! components, on histories made of real steps of an Anthropic-format corpus
//! session (cc-opus-a: signed thinking, parallel tool batches, tool results in
//! user messages), rearranged so that each boundary case is present: exactly N
//! loop steps, one fewer, read-only runs, parallel batches, unclosed `<think>`,
//! the echo policy, signed thinking, long tool results.
//!
//! Each case sets the threshold just under the history's size and the target
//! just under that, so the compaction is done by the passes alone (nothing is
//! folded) and the region they rewrite is everything before the verbatim tail.
//! The output is also rendered to Anthropic JSON and checked the way the
//! Messages API would.

use condense_compressor::settings::ClearMode;
use condense_host::formats::{Format, Parsed};
use condense_host::{Compressed, Status};
use condense_model::tokens::estimate_total;
use condense_model::{CoreConfig, Item, Message, Part, Role, Trigger};
use condense_tests::{TestConfig, corpus_dir, embedded_middleware};
use serde_json::{Value, json};
use std::sync::OnceLock;

const LOOP_TOOLS: &[&str] = &["Bash", "Edit", "Write"];
const READ_TOOLS: &[&str] = &["Read", "Glob", "Grep"];
const PLACEHOLDER: &str = "of this edit/run loop elided here";

/// cc-opus-a as Anthropic Messages, parsed.
fn corpus() -> &'static [Message] {
    static CORPUS: OnceLock<Vec<Message>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let path = corpus_dir().join("anthropic/cc-opus-a.request.json");
        let body = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        Parsed::parse(body, Format::Anthropic)
            .unwrap()
            .messages()
            .to_vec()
    })
}

/// A real step: an assistant message with tool calls and the user message
/// carrying all their results.
#[derive(Clone)]
struct Step {
    call: Message,
    results: Message,
}

impl Step {
    fn messages(&self) -> [Message; 2] {
        [self.call.clone(), self.results.clone()]
    }

    fn ids(&self) -> Vec<String> {
        self.call.tool_calls().map(|c| c.id.clone()).collect()
    }

    fn has_signed_thinking(&self) -> bool {
        self.call
            .parts
            .iter()
            .any(|p| matches!(p, Part::Thinking(t) if t.signature.is_some()))
    }

    fn longest_result(&self) -> usize {
        self.results
            .tool_results()
            .map(|r| r.content.chars().count())
            .max()
            .unwrap_or(0)
    }
}

/// Every step of the corpus whose tools are all in `tools`, with `calls`
/// tool calls at least, in corpus order.
fn steps(tools: &[&str], calls: usize) -> Vec<Step> {
    let h = corpus();
    (0..h.len() - 1)
        .filter(|&i| {
            let (call, results) = (&h[i], &h[i + 1]);
            call.role == Role::Assistant
                && call.tool_calls().count() >= calls
                && call.tool_calls().all(|c| tools.contains(&c.name.as_str()))
                && results
                    .parts
                    .iter()
                    .all(|p| matches!(p, Part::ToolResult(_)))
                && results.tool_results().count() == call.tool_calls().count()
        })
        .map(|i| Step {
            call: h[i].clone(),
            results: h[i + 1].clone(),
        })
        .collect()
}

/// The assistant's closing words and the person's next request: what
/// separates two runs of steps in a real session.
fn new_request(text: &str) -> [Message; 2] {
    [
        Message::text(Role::Assistant, "Done."),
        Message::text(Role::User, text),
    ]
}

/// A history: the corpus's opening request, the `region`
/// under test, a user message, and a verbatim tail of real steps.
struct Case {
    history: Vec<Message>,
    tail_len: usize,
}

impl Case {
    fn new(region: Vec<Message>) -> Case {
        let h = corpus();
        let opener = h.iter().position(Message::opens_turn).unwrap();
        let mut history = h[..=opener].to_vec();
        history.extend(region);
        history.extend(new_request("Good. Now wire it into the CLI."));
        // The tail: the corpus's last steps that the region does not use.
        let used: Vec<String> = history
            .iter()
            .flat_map(|m| m.tool_calls().map(|c| c.id.clone()))
            .collect();
        let tail: Vec<Message> = steps(READ_TOOLS, 1)
            .into_iter()
            .rev()
            .filter(|s| s.ids().iter().all(|id| !used.contains(id)))
            .take(3)
            .flat_map(|s| s.messages())
            .collect();
        let tail_len = tail.len();
        history.extend(tail);
        Case { history, tail_len }
    }

    fn tail_start(&self) -> usize {
        self.history.len() - self.tail_len
    }

    /// All passes on; the threshold just under the history, so the passes
    /// alone get the request under the target.
    fn config(&self) -> TestConfig {
        let total = estimate_total(&self.history) as u32;
        let tail = estimate_total(&self.history[self.tail_start()..]) as u32;
        let mut config = TestConfig::new(CoreConfig {
            token_threshold: total - 1,
            target_tokens: total - 2,
            keep_recent_tokens: tail,
            summary_max_tokens: 64,
            ..CoreConfig::default()
        })
        .with_passes();
        let settings = &mut config.settings;
        settings.strip_reasoning_after_turns = 1;
        settings.aggregate_developer_loops = true;
        settings.max_loop_steps_before_aggregate = 5;
        settings.clear_mode = ClearMode::Truncate;
        settings.result_char_threshold = 2_000;
        settings.keep_tool_results = 0;
        config
    }

    /// Only developer-loop aggregation on.
    fn loops_only(&self) -> TestConfig {
        let mut config = self.config();
        config.settings.strip_reasoning_after_turns = 0;
        config.settings.clear_mode = ClearMode::Off;
        config
    }

    /// The index of `message` in the history (each message of a case is
    /// unique: every step has its own tool call ids).
    fn index_of(&self, message: &Message) -> u32 {
        let i = self
            .history
            .iter()
            .position(|m| m == message)
            .expect("a message of the case");
        i as u32
    }

    /// Whether the request sends history message `message` unchanged, by
    /// reference (the host renders its original bytes).
    fn kept(&self, out: &Compressed, message: &Message) -> bool {
        out.items.contains(&Item::Kept(self.index_of(message)))
    }

    /// The item of the request that comes from history message `message`.
    fn item_from<'o>(&self, out: &'o Compressed, message: &Message) -> &'o Item {
        let i = self.index_of(message) as usize;
        out.items
            .iter()
            .find(|item| item.origin() == Some(i))
            .unwrap_or_else(|| panic!("history message {i} is not in the request"))
    }

    /// Compresses through the host and checks what every case shares: a
    /// compaction by the passes alone, the tail kept verbatim, valid
    /// Anthropic JSON. Returns the rewritten region, as messages.
    fn run(&self, config: &TestConfig) -> (Vec<Message>, Compressed) {
        let out = config.compress(embedded_middleware(), &self.history, None);
        assert_ne!(out.report.status(), Status::FailedOpen, "{:?}", out.report);
        let report = out.report.guest().unwrap();
        assert_eq!(report.trigger, Trigger::Compacted, "{report:?}");
        assert_eq!(report.boundary, 0, "the passes alone were enough");
        assert_eq!(report.newly_folded, 0);
        assert_eq!(report.tail_start as usize, self.tail_start());
        let n = out.items.len();
        let tail: Vec<Item> = (self.tail_start()..self.history.len())
            .map(|i| Item::Kept(i as u32))
            .collect();
        assert_eq!(out.items[n - self.tail_len..], tail[..], "the tail, kept");
        assert!(
            out.items[..n - self.tail_len]
                .iter()
                .all(|item| !matches!(item, Item::Written(_))),
            "nothing folded, so nothing written"
        );
        assert_valid_anthropic(&self.history, &out.items);
        let messages = out.messages(&self.history);
        let region = messages[..n - self.tail_len].to_vec();
        (region, out)
    }
}

/// Renders `history` as an Anthropic body, then renders the request `items`
/// from it and checks what the Messages API requires: strict user/assistant
/// alternation starting with a user, no empty content, no blank text block in
/// a rewritten message, thinking blocks first in an assistant message, every
/// tool_use answered in the next message; and every kept message is its
/// original JSON.
fn assert_valid_anthropic(history: &[Message], items: &[Item]) {
    let empty = Parsed::parse(
        json!({"model": "m", "max_tokens": 1, "messages": []}),
        Format::Anthropic,
    )
    .unwrap();
    let written: Vec<Item> = history.iter().cloned().map(Item::Written).collect();
    let body = empty.render(&written);
    let parsed = Parsed::parse(body.clone(), Format::Anthropic).unwrap();
    assert_eq!(parsed.messages(), history, "the case round-trips");
    let originals = body["messages"].as_array().unwrap();
    // The top-level `system` is history message 0 when there is one.
    let systems = usize::from(history.first().is_some_and(|m| m.role == Role::System));
    let rendered = parsed.render(items);
    let messages = rendered["messages"].as_array().unwrap();
    // One JSON message for each item that is not a system message.
    let conversation: Vec<&Item> = items
        .iter()
        .filter(|item| item.message(history).role != Role::System)
        .collect();
    assert_eq!(messages.len(), conversation.len());
    for (i, (m, item)) in messages.iter().zip(conversation).enumerate() {
        if let Item::Kept(k) = item {
            assert_eq!(m, &originals[*k as usize - systems], "message {i}: kept");
        }
        let role = m["role"].as_str().unwrap();
        assert_eq!(
            role,
            if i % 2 == 0 { "user" } else { "assistant" },
            "message {i}"
        );
        let blocks: Vec<Value> = match &m["content"] {
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            Value::Array(a) => a.clone(),
            other => panic!("message {i}: content {other}"),
        };
        assert!(!blocks.is_empty(), "message {i}: empty content");
        // The corpus has a few blank text blocks of its own; the passes must
        // not add any.
        let rewritten = !matches!(item, Item::Kept(_));
        for b in blocks.iter().filter(|_| rewritten) {
            if b["type"] == "text" {
                assert!(
                    !b["text"].as_str().unwrap().trim().is_empty(),
                    "message {i}: empty text block"
                );
            }
        }
        let first_other = blocks
            .iter()
            .position(|b| b["type"] != "thinking")
            .unwrap_or(blocks.len());
        assert!(
            blocks[first_other..]
                .iter()
                .all(|b| b["type"] != "thinking"),
            "message {i}: a thinking block after other content"
        );
        let uses: Vec<&str> = blocks
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| b["id"].as_str().unwrap())
            .collect();
        if !uses.is_empty() {
            let answers: Vec<&str> = messages[i + 1]["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| b["tool_use_id"].as_str().unwrap())
                .collect();
            assert_eq!(uses, answers, "message {i}: tool_use answered next");
        }
    }
}

fn flat(steps: &[Step]) -> Vec<Message> {
    steps.iter().flat_map(Step::messages).collect()
}

fn count_placeholders(messages: &[Message]) -> usize {
    messages
        .iter()
        .flat_map(|m| &m.parts)
        .filter(|p| matches!(p, Part::Text(t) if t.contains(PLACEHOLDER)))
        .count()
}

fn has_call(messages: &[Message], id: &str) -> bool {
    messages.iter().any(|m| m.tool_calls().any(|c| c.id == id))
}

#[test]
fn a_run_of_exactly_n_loop_steps_collapses_and_one_fewer_stays() {
    let loops = steps(LOOP_TOOLS, 1);
    let (five, four) = (&loops[0..5], &loops[5..9]);
    let mut region = flat(five);
    region.extend(new_request("Keep going."));
    region.extend(flat(four));
    let case = Case::new(region);
    let (region, out) = case.run(&case.loops_only());

    // The run of five: first and last step kept, three elided whole.
    for s in [&five[0], &five[4]] {
        assert!(s.ids().iter().all(|id| has_call(&region, id)));
    }
    for s in &five[1..4] {
        assert!(
            s.ids().iter().all(|id| !has_call(&region, id)),
            "a middle step of the run stayed"
        );
    }
    let last = region
        .iter()
        .find(|m| m.tool_calls().any(|c| c.id == five[4].ids()[0]))
        .unwrap();
    let text = last.joined_text();
    assert!(text.contains(&format!("3 steps {PLACEHOLDER}")), "{text}");
    // The run of four (one fewer than N) is verbatim.
    for s in four {
        assert!(case.kept(&out, &s.call) && case.kept(&out, &s.results));
    }
    assert_eq!(count_placeholders(&region), 1);
    assert_eq!(out.report.guest().unwrap().passes.steps_elided, 3);

    // N = 4 collapses the second run too; N = 6 neither.
    let mut config = case.loops_only();
    config.settings.max_loop_steps_before_aggregate = 4;
    let (region, _) = case.run(&config);
    assert_eq!(count_placeholders(&region), 2);
}

#[test]
fn read_only_runs_stay_verbatim_and_break_loop_runs() {
    let loops = steps(LOOP_TOOLS, 1);
    let reads = steps(READ_TOOLS, 1);
    // Six loop steps (collapsed: the passes must save something), then three
    // loop steps, six reads, three loop steps: no run of five there.
    let mut region = flat(&loops[0..6]);
    region.extend(new_request("And the reader?"));
    region.extend(flat(&loops[6..9]));
    region.extend(flat(&reads[0..6]));
    region.extend(flat(&loops[9..12]));
    let case = Case::new(region);
    let (region, out) = case.run(&case.config());
    for s in reads[0..6].iter().chain(&loops[6..12]) {
        assert!(
            s.ids().iter().all(|id| has_call(&region, id)),
            "a step outside a long run was elided"
        );
    }
    assert_eq!(out.report.guest().unwrap().passes.steps_elided, 4);
}

#[test]
fn a_parallel_batch_inside_a_loop_is_elided_whole() {
    let batches = steps(&["Bash"], 2);
    assert!(!batches.is_empty(), "cc-opus-a has parallel Bash batches");
    let batch = batches[0].clone();
    let singles: Vec<Step> = steps(LOOP_TOOLS, 1)
        .into_iter()
        .filter(|s| s.ids().len() == 1)
        .take(4)
        .collect();
    let run = [
        singles[0].clone(),
        singles[1].clone(),
        batch.clone(),
        singles[2].clone(),
        singles[3].clone(),
    ];
    let case = Case::new(flat(&run));
    let (region, _) = case.run(&case.loops_only());
    assert!(batch.ids().iter().all(|id| !has_call(&region, id)));
    let results_left = region
        .iter()
        .flat_map(|m| m.tool_results())
        .filter(|r| batch.ids().contains(&r.call_id))
        .count();
    assert_eq!(results_left, 0, "no result of the batch is orphaned");
    let last_id = &singles[3].ids()[0];
    let last = region
        .iter()
        .find(|m| m.tool_calls().any(|c| &c.id == last_id))
        .unwrap();
    assert!(
        last.joined_text().contains("Bash ×"),
        "{}",
        last.joined_text()
    );

    // As the first step of the run the batch is kept whole.
    let run = [
        batch.clone(),
        singles[0].clone(),
        singles[1].clone(),
        singles[2].clone(),
        singles[3].clone(),
    ];
    let case = Case::new(flat(&run));
    let (_, out) = case.run(&case.loops_only());
    assert!(case.kept(&out, &batch.call) && case.kept(&out, &batch.results));
}

/// A read-only step whose assistant text ends in an unclosed `<think>`, as
/// open-weight models emit when cut off.
fn with_unclosed_think(step: &Step) -> Step {
    let mut call = step.call.clone();
    let at = call
        .parts
        .iter()
        .position(|p| matches!(p, Part::ToolCall(_)))
        .unwrap();
    call.parts.insert(
        at,
        Part::Text("Checking the reader. <think>maybe the bug is in the parser".into()),
    );
    Step {
        call,
        results: step.results.clone(),
    }
}

#[test]
fn reasoning_is_pruned_signed_thinking_whole_and_unclosed_think_to_the_end() {
    let reads = steps(READ_TOOLS, 1);
    let signed: Vec<Step> = steps(LOOP_TOOLS, 1)
        .into_iter()
        .filter(Step::has_signed_thinking)
        .take(2)
        .collect();
    assert_eq!(
        signed.len(),
        2,
        "cc-opus-a has signed thinking on loop steps"
    );
    let think = with_unclosed_think(&reads[0]);
    let mut region = flat(&signed);
    region.extend(think.messages());
    region.extend(flat(&steps(LOOP_TOOLS, 1)[10..16])); // something to collapse
    let case = Case::new(region);
    let (region, out) = case.run(&case.config());

    // Signed thinking: dropped whole before the tail.
    assert!(
        region
            .iter()
            .flat_map(|m| &m.parts)
            .all(|p| !matches!(p, Part::Thinking(_)))
    );
    for s in &signed {
        let item = case.item_from(&out, &s.call);
        assert!(matches!(item, Item::Rewritten(..)), "{item:?}");
        let kept = item.message(&case.history);
        let expected: Vec<&Part> = s
            .call
            .parts
            .iter()
            .filter(|p| !matches!(p, Part::Thinking(_)))
            .collect();
        assert_eq!(
            kept.parts.iter().collect::<Vec<_>>(),
            expected,
            "only the thinking went"
        );
    }
    // The unclosed <think> is stripped to the end of its text.
    let kept = case.item_from(&out, &think.call).message(&case.history);
    let texts: Vec<&str> = kept
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        texts.iter().any(|t| t.trim_end() == "Checking the reader."),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .all(|t| !t.contains("<think>") && !t.contains("parser")),
        "{texts:?}"
    );
    assert!(out.report.guest().unwrap().passes.reasoning_pruned >= 3);

    // Echo policy: a provider that needs reasoning back gets all of it.
    let mut echo = case.config();
    echo.settings.reasoning_echo = true;
    let (_, out) = case.run(&echo);
    for s in signed.iter().chain([&think]) {
        assert!(
            case.kept(&out, &s.call),
            "reasoning kept byte-exact under reasoning_echo"
        );
    }
    assert_eq!(out.report.guest().unwrap().passes.reasoning_pruned, 0);
}

#[test]
fn long_old_results_are_truncated_except_kept_and_excluded_ones() {
    let long: Vec<Step> = steps(&["Bash"], 1)
        .into_iter()
        .filter(|s| s.ids().len() == 1 && s.longest_result() > 3_000)
        .take(2)
        .collect();
    assert_eq!(long.len(), 2, "cc-opus-a has long Bash results");
    let reads = steps(READ_TOOLS, 1);
    let mut region = flat(&long);
    region.extend(flat(&reads[0..2]));
    let case = Case::new(region);
    let (region, out) = case.run(&case.config());
    for s in &long {
        let id = &s.ids()[0];
        let result = region
            .iter()
            .flat_map(|m| m.tool_results())
            .find(|r| &r.call_id == id)
            .unwrap();
        let original = s.results.tool_results().next().unwrap();
        assert!(result.content.len() < original.content.len() / 2);
        assert!(
            result
                .content
                .contains(&format!("elided from this Bash result, call {id}")),
            "{}",
            result.content
        );
        let head: String = original.content.chars().take(200).collect();
        assert!(
            result
                .content
                .starts_with(&head[..head.rfind('\n').unwrap_or(head.len())])
        );
    }
    assert!(out.report.guest().unwrap().passes.results_cleared >= 2);

    // A smaller `truncate_keep_percent` keeps less of each: about that share
    // of the threshold (the marker and the snap to a line end aside).
    let mut less = case.config();
    less.settings.truncate_keep_percent = 10;
    let (short, _) = case.run(&less);
    let id = &long[0].ids()[0];
    let length = |region: &[Message]| {
        region
            .iter()
            .flat_map(|m| m.tool_results())
            .find(|r| &r.call_id == id)
            .map(|r| r.content.chars().count())
            .unwrap()
    };
    let threshold = less.settings.result_char_threshold as usize;
    assert!(
        length(&short) < length(&region) && length(&short) < threshold / 10 + 200,
        "{} characters kept at 10%, {} at the default",
        length(&short),
        length(&region)
    );

    // Clear mode: a short placeholder naming the call.
    let mut clear = case.config();
    clear.settings.clear_mode = ClearMode::Clear;
    let (region, _) = case.run(&clear);
    let id = &long[0].ids()[0];
    let result = region
        .iter()
        .flat_map(|m| m.tool_results())
        .find(|r| &r.call_id == id)
        .unwrap();
    assert!(
        result.content.starts_with("[condense: Bash result cleared") && result.content.len() < 200
    );

    // The latest results are never touched: here the tail's, the reads' and
    // the second long one.
    let after_long: usize = case.history[case
        .history
        .iter()
        .position(|m| *m == long[1].results)
        .unwrap()
        + 1..]
        .iter()
        .map(|m| m.tool_results().count())
        .sum();
    let mut keep = case.config();
    keep.settings.keep_tool_results = after_long as u32 + 1;
    let (_, out) = case.run(&keep);
    assert!(case.kept(&out, &long[1].results) && !case.kept(&out, &long[0].results));

    // Excluded tools are never touched; the other long result still is.
    let mut exclude = case.config();
    exclude.settings.exclude_tools = vec!["Ba?h".into()];
    exclude.settings.result_char_threshold = 200;
    let (_, out) = case.run(&exclude);
    for s in &long {
        assert!(
            case.kept(&out, &s.results),
            "excluded tool's result changed"
        );
    }
}
