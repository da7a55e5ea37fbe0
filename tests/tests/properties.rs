//! Property tests: `compress` over generated conversations and configurations,
//! with every promise of design.md checked on every output.
//!
//! Histories are built structurally from a spec (turns of steps: an assistant
//! message with a parallel batch of tool calls and the messages carrying all
//! their results), so every generated history, and every shrunk one, is valid
//! input. The spec covers parallel batches with results in any order, OpenAI
//! `tool` messages and Anthropic-style `user` carriers (one per batch, several,
//! mixed, with a person's words beside the results), thinking with and
//! without signatures, `<think>` spans (closed, unclosed, several, any case,
//! a stray `</think>`), system messages anywhere between steps, consecutive
//! user messages, empty and huge messages, multi-byte text, opaque parts,
//! texts that begin with condense's own summary marker, and a batch still in
//! flight at the end (no result yet, or some of them).
//!
//! The bulk runs natively (compressor and heuristic summarizer as rlibs),
//! replays also as offset calls (only the messages from the checkpoint's
//! boundary on), which must answer as the full call does; a few cases go
//! through the host middleware and the embedded component to show it agrees
//! with the native build. Case counts are set explicitly in each test's config;
//! `PROPTEST_RNG_SEED` reproduces a run.

use condense_compressor::assemble::{LANGUAGES, summary_pair};
use condense_compressor::state::State;
use condense_compressor::{Request, Settings};
use condense_host::{SessionCheckpoint, Status};
use condense_model::invariants::{History, check_items, check_pairs, is_rewrite_of};
use condense_model::recall::Span;
use condense_model::segment::{opener_before, safe_cut_points};
use condense_model::tokens::{estimate_message, estimate_total};
use condense_model::{
    Checkpoint, CompressError, CoreConfig, Item, Message, Outcome, Part, Role, SUMMARY_MARKER,
    SummaryRequest, Thinking, ToolCall, ToolResult, Trigger, materialize,
};
use condense_tests::TestConfig;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

// ---------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------

/// What a generated text is made of.
#[derive(Clone, Copy, Debug)]
enum Family {
    Ascii,
    MultiByte,
    Code,
    /// `<think>…</think>` then an answer.
    ThinkClosed,
    /// An answer, then a `<think>` that is never closed.
    ThinkUnclosed,
    /// Several spans, tags in mixed case.
    ThinkSeveral,
    /// A closing tag without an opener: ordinary text.
    StrayClose,
    /// Blank characters only.
    Blank,
    /// Begins with condense's summary marker, as the history of a runtime that
    /// stores condensed requests does (or does once a `<think>` span before
    /// it is stripped): condense must still tell its own summary from it.
    Marked,
}

#[derive(Clone, Copy, Debug)]
struct TextSpec {
    family: Family,
    /// In chars, roughly.
    len: usize,
    seed: u32,
}

const ASCII: &[&str] = &[
    "alpha ",
    "beta ",
    "gamma\n",
    "src/main.rs ",
    "error[E0382]: borrow of moved value ",
    "the test passed ",
    "TODO ",
    "\n",
    "ok. ",
];
const MULTI: &[&str] = &[
    "héllo ",
    "wörld ",
    "日本語の",
    "テキスト ",
    "🦀 ",
    "Ωμέγα ",
    "ñ",
    "e\u{301}",
    "한국어 ",
    "𝔘𝔫𝔦 ",
    "Привет ",
    "中文内容",
];
const CODE: &[&str] = &[
    "fn main() {\n",
    "    let x = vec![1, 2, 3];\n",
    "}\n",
    "    // comment\n",
    "+ added line\n",
    "- removed line\n",
    "$ cargo test\n",
    "\n",
];
const TAGS_OPEN: &[&str] = &["<think>", "<THINK>", "<Think>", "<tHiNk>"];
const TAGS_CLOSE: &[&str] = &["</think>", "</THINK>", "</Think>"];

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
    fn pick<'a>(&mut self, pool: &[&'a str]) -> &'a str {
        pool[self.next() % pool.len()]
    }
}

/// About `len` chars of fragments from `pool`, cut at a char boundary.
fn fill(rng: &mut Lcg, pool: &[&str], len: usize) -> String {
    let mut out = String::new();
    let mut chars = 0;
    while chars < len {
        let f = rng.pick(pool);
        out.push_str(f);
        chars += f.chars().count();
    }
    if let Some((at, _)) = out.char_indices().nth(len) {
        out.truncate(at);
    }
    out
}

fn render(spec: TextSpec) -> String {
    let mut rng = Lcg(u64::from(spec.seed) | 1 << 40);
    let len = spec.len;
    let pool: &[&str] = if spec.seed.is_multiple_of(3) {
        MULTI
    } else {
        ASCII
    };
    match spec.family {
        Family::Ascii => fill(&mut rng, ASCII, len),
        Family::MultiByte => fill(&mut rng, MULTI, len),
        Family::Code => fill(&mut rng, CODE, len),
        Family::ThinkClosed => {
            let open = rng.pick(TAGS_OPEN);
            let close = rng.pick(TAGS_CLOSE);
            let body = fill(&mut rng, pool, len * 2 / 3);
            let answer = fill(&mut rng, pool, len / 3);
            format!("{open}{body}{close}\n\n{answer}")
        }
        Family::ThinkUnclosed => {
            let open = rng.pick(TAGS_OPEN);
            let answer = fill(&mut rng, pool, len / 3);
            let body = fill(&mut rng, pool, len * 2 / 3);
            format!("{answer}{open}{body}")
        }
        Family::ThinkSeveral => {
            let mut out = String::new();
            for _ in 0..3 {
                out.push_str(&fill(&mut rng, pool, len / 6));
                out.push_str(rng.pick(TAGS_OPEN));
                out.push_str(&fill(&mut rng, pool, len / 6));
                out.push_str(rng.pick(TAGS_CLOSE));
            }
            out
        }
        Family::StrayClose => {
            let a = fill(&mut rng, pool, len / 2);
            let b = fill(&mut rng, pool, len / 2);
            format!("{a}{}{b}", rng.pick(TAGS_CLOSE))
        }
        Family::Blank => fill(&mut rng, &[" ", "\n", "\t"], len.min(8)),
        Family::Marked => {
            let body = fill(&mut rng, pool, len);
            if rng.next().is_multiple_of(2) {
                format!("{SUMMARY_MARKER} {body}")
            } else {
                let open = rng.pick(TAGS_OPEN);
                let close = rng.pick(TAGS_CLOSE);
                format!("{open}{body}{close}{SUMMARY_MARKER} {body}")
            }
        }
    }
}

fn family() -> impl Strategy<Value = Family> {
    prop_oneof![
        4 => Just(Family::Ascii),
        2 => Just(Family::MultiByte),
        2 => Just(Family::Code),
        1 => Just(Family::ThinkClosed),
        1 => Just(Family::ThinkUnclosed),
        1 => Just(Family::ThinkSeveral),
        1 => Just(Family::StrayClose),
        1 => Just(Family::Blank),
        1 => Just(Family::Marked),
    ]
}

/// Empty, small, medium, large and huge texts (huge: up to ~3k tokens, more
/// than the smaller targets on their own).
fn text_len() -> impl Strategy<Value = usize> {
    prop_oneof![
        2 => Just(0usize),
        6 => 1usize..60,
        6 => 60usize..500,
        3 => 500usize..2_500,
        1 => 2_500usize..12_000,
    ]
}

fn text() -> impl Strategy<Value = TextSpec> {
    (family(), text_len(), any::<u32>()).prop_map(|(family, len, seed)| TextSpec {
        family,
        len,
        seed,
    })
}

/// Short texts, for tool arguments and the like.
fn short_text() -> impl Strategy<Value = TextSpec> {
    (family(), 0usize..120, any::<u32>()).prop_map(|(family, len, seed)| TextSpec {
        family,
        len,
        seed,
    })
}

// ---------------------------------------------------------------------------
// History spec
// ---------------------------------------------------------------------------

const TOOLS: &[&str] = &[
    "Read",
    "Grep",
    "Edit",
    "Write",
    "Bash",
    "mcp__fs__exec_cmd",
    "mcp__fs__read_file",
    "custom_tool",
    "édition",
];

#[derive(Clone, Debug)]
struct ReasoningSpec {
    /// Thinking parts, each signed or not.
    thinking: Vec<(TextSpec, bool)>,
    /// An opaque part (e.g. redacted thinking) after the thinking.
    opaque: bool,
}

#[derive(Clone, Debug)]
struct CallSpec {
    tool: usize,
    arguments: TextSpec,
    result: TextSpec,
    is_error: bool,
}

#[derive(Clone, Copy, Debug)]
enum ResultStyle {
    /// One `tool` message per result.
    OpenAi,
    /// One `user` message carrying every result of the batch.
    Carrier,
    /// Several `user` carriers.
    SplitCarriers,
    /// `tool` messages and `user` carriers mixed.
    Mixed,
}

#[derive(Clone, Debug)]
enum StepSpec {
    /// An assistant message without tool calls (`None`: no parts at all).
    Say {
        reasoning: ReasoningSpec,
        text: Option<TextSpec>,
    },
    /// An assistant message with a batch of tool calls, then all the results.
    Tools {
        reasoning: ReasoningSpec,
        text: Option<TextSpec>,
        calls: Vec<CallSpec>,
        style: ResultStyle,
        /// Results delivered in this rotation of the call order.
        rotate: usize,
        /// A person's words beside the results (in the last `user` carrier).
        words: Option<TextSpec>,
    },
    /// A system message between steps.
    System(TextSpec),
}

#[derive(Clone, Debug)]
struct TurnSpec {
    /// The person's message (`None`: a message without parts).
    opener: Option<TextSpec>,
    /// An opaque part (e.g. an image) in the opener.
    opener_opaque: bool,
    /// A second user message right after the opener.
    extra_user: Option<TextSpec>,
    steps: Vec<StepSpec>,
}

#[derive(Clone, Debug)]
struct PendingSpec {
    reasoning: ReasoningSpec,
    text: Option<TextSpec>,
    calls: Vec<CallSpec>,
    /// How many of the calls already have a result.
    answered: usize,
    style: ResultStyle,
}

#[derive(Clone, Debug)]
struct HistorySpec {
    system: Option<TextSpec>,
    /// An assistant greeting before the first user message.
    greeting: Option<TextSpec>,
    turns: Vec<TurnSpec>,
    pending: Option<PendingSpec>,
    /// Style of the tool call ids.
    id_style: u8,
}

fn reasoning() -> impl Strategy<Value = ReasoningSpec> {
    (
        prop_oneof![
            3 => Just(Vec::new()),
            2 => prop::collection::vec((text(), any::<bool>()), 1..3),
        ],
        prop::bool::weighted(0.1),
    )
        .prop_map(|(thinking, opaque)| ReasoningSpec { thinking, opaque })
}

fn call() -> impl Strategy<Value = CallSpec> {
    (
        0..TOOLS.len(),
        short_text(),
        text(),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(tool, arguments, result, is_error)| CallSpec {
            tool,
            arguments,
            result,
            is_error,
        })
}

fn calls() -> impl Strategy<Value = Vec<CallSpec>> {
    prop_oneof![
        3 => prop::collection::vec(call(), 1..2),
        1 => prop::collection::vec(call(), 2..5),
    ]
}

fn style() -> impl Strategy<Value = ResultStyle> {
    prop_oneof![
        3 => Just(ResultStyle::OpenAi),
        3 => Just(ResultStyle::Carrier),
        1 => Just(ResultStyle::SplitCarriers),
        1 => Just(ResultStyle::Mixed),
    ]
}

fn step() -> impl Strategy<Value = StepSpec> {
    prop_oneof![
        2 => (reasoning(), prop::option::weighted(0.9, text()))
            .prop_map(|(reasoning, text)| StepSpec::Say { reasoning, text }),
        7 => (
            reasoning(),
            prop::option::weighted(0.5, text()),
            calls(),
            style(),
            0usize..4,
            prop::option::weighted(0.1, short_text()),
        )
            .prop_map(|(reasoning, text, calls, style, rotate, words)| StepSpec::Tools {
                reasoning,
                text,
                calls,
                style,
                rotate,
                words,
            }),
        1 => text().prop_map(StepSpec::System),
    ]
}

fn turn() -> impl Strategy<Value = TurnSpec> {
    (
        prop::option::weighted(0.95, text()),
        prop::bool::weighted(0.05),
        prop::option::weighted(0.1, short_text()),
        prop_oneof![
            1 => prop::collection::vec(step(), 0..3),
            3 => prop::collection::vec(step(), 3..12),
        ],
    )
        .prop_map(|(opener, opener_opaque, extra_user, steps)| TurnSpec {
            opener,
            opener_opaque,
            extra_user,
            steps,
        })
}

fn pending() -> impl Strategy<Value = PendingSpec> {
    (
        reasoning(),
        prop::option::of(short_text()),
        calls(),
        0usize..4,
        style(),
    )
        .prop_map(|(reasoning, text, calls, answered, style)| PendingSpec {
            answered: answered.min(calls.len()),
            reasoning,
            text,
            calls,
            style,
        })
}

fn history() -> impl Strategy<Value = HistorySpec> {
    (
        prop::option::weighted(0.7, text()),
        prop::option::weighted(0.05, short_text()),
        prop::collection::vec(turn(), 1..5),
        prop::option::weighted(0.3, pending()),
        0u8..3,
    )
        .prop_map(|(system, greeting, turns, pending, id_style)| HistorySpec {
            system,
            greeting,
            turns,
            pending,
            id_style,
        })
}

// ---------------------------------------------------------------------------
// Building a history from its spec
// ---------------------------------------------------------------------------

struct Builder {
    out: Vec<Message>,
    ids: u32,
    signatures: u32,
    id_style: u8,
}

impl Builder {
    fn push(&mut self, role: Role, parts: Vec<Part>) {
        self.out.push(Message { role, parts });
    }

    fn text(&mut self, role: Role, spec: TextSpec) {
        self.push(role, vec![Part::Text(render(spec))]);
    }

    fn id(&mut self) -> String {
        self.ids += 1;
        let n = self.ids;
        match self.id_style {
            0 => format!("call_{n}"),
            1 => format!("toolu_01{n:08}ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef"),
            _ => format!("调用-{n}-é"),
        }
    }

    fn reasoning(&mut self, spec: &ReasoningSpec) -> Vec<Part> {
        let mut parts = Vec::new();
        for &(text, signed) in &spec.thinking {
            self.signatures += 1;
            parts.push(Part::Thinking(Thinking {
                text: render(text),
                signature: signed.then(|| format!("sig{}-EqQKCAgQARgCKkA=", self.signatures)),
            }));
        }
        if spec.opaque {
            parts.push(Part::Opaque(
                r#"{"type":"redacted_thinking","data":"EmwKAhgBEgy3"}"#.into(),
            ));
        }
        parts
    }

    /// The assistant message of a batch, and the results it gets, by call.
    fn batch(
        &mut self,
        reasoning: &ReasoningSpec,
        text: Option<TextSpec>,
        calls: &[CallSpec],
    ) -> Vec<ToolResult> {
        let mut parts = self.reasoning(reasoning);
        if let Some(t) = text {
            parts.push(Part::Text(render(t)));
        }
        let mut results = Vec::new();
        for c in calls {
            let id = self.id();
            parts.push(Part::ToolCall(ToolCall {
                id: id.clone(),
                name: TOOLS[c.tool].into(),
                arguments: serde_json::json!({ "input": render(c.arguments) }).to_string(),
            }));
            results.push(ToolResult {
                call_id: id,
                content: render(c.result),
                is_error: c.is_error,
            });
        }
        self.push(Role::Assistant, parts);
        results
    }

    fn deliver(&mut self, results: Vec<ToolResult>, style: ResultStyle, words: Option<TextSpec>) {
        let n = results.len();
        let mut carriers: Vec<(Role, Vec<Part>)> = Vec::new();
        for (i, r) in results.into_iter().enumerate() {
            let part = Part::ToolResult(r);
            let role = match style {
                ResultStyle::OpenAi => Role::Tool,
                ResultStyle::Mixed if i % 2 == 0 => Role::Tool,
                _ => Role::User,
            };
            let join = matches!(style, ResultStyle::Carrier)
                || (matches!(style, ResultStyle::SplitCarriers) && i % 2 == 1);
            match carriers.last_mut() {
                Some((Role::User, parts)) if join && role == Role::User => parts.push(part),
                _ => carriers.push((role, vec![part])),
            }
        }
        if let Some(words) = words
            && n > 0
        {
            match carriers.last_mut() {
                Some((Role::User, parts)) => parts.push(Part::Text(render(words))),
                _ => {
                    // A person's words beside the results, in a carrier.
                    let last = carriers.pop().expect("a result");
                    let mut parts = last.1;
                    parts.push(Part::Text(render(words)));
                    carriers.push((Role::User, parts));
                }
            }
        }
        for (role, parts) in carriers {
            self.push(role, parts);
        }
    }

    fn step(&mut self, spec: &StepSpec) {
        match spec {
            StepSpec::Say { reasoning, text } => {
                let mut parts = self.reasoning(reasoning);
                if let Some(t) = text {
                    parts.push(Part::Text(render(*t)));
                }
                self.push(Role::Assistant, parts);
            }
            StepSpec::Tools {
                reasoning,
                text,
                calls,
                style,
                rotate,
                words,
            } => {
                let mut results = self.batch(reasoning, *text, calls);
                let r = rotate % results.len();
                results.rotate_left(r);
                self.deliver(results, *style, *words);
            }
            StepSpec::System(t) => self.text(Role::System, *t),
        }
    }
}

fn build(spec: &HistorySpec) -> Vec<Message> {
    let mut b = Builder {
        out: Vec::new(),
        ids: 0,
        signatures: 0,
        id_style: spec.id_style,
    };
    if let Some(t) = spec.system {
        b.text(Role::System, t);
    }
    if let Some(t) = spec.greeting {
        b.text(Role::Assistant, t);
    }
    for turn in &spec.turns {
        let mut parts = Vec::new();
        if let Some(t) = turn.opener {
            parts.push(Part::Text(render(t)));
        }
        if turn.opener_opaque {
            parts.push(Part::Opaque(
                r#"{"type":"image","source":{"type":"base64","data":"iVBORw0KGgo="}}"#.into(),
            ));
        }
        b.push(Role::User, parts);
        if let Some(t) = turn.extra_user {
            b.text(Role::User, t);
        }
        for s in &turn.steps {
            b.step(s);
        }
    }
    if let Some(p) = &spec.pending {
        let mut results = b.batch(&p.reasoning, p.text, &p.calls);
        results.truncate(p.answered);
        b.deliver(results, p.style, None);
    }
    b.out
}

// ---------------------------------------------------------------------------
// Configs
// ---------------------------------------------------------------------------

/// Tool names and patterns the generated lists are drawn from: names the
/// generated histories call (`Read`, `Bash`, `Edit`, `Write`), wildcards
/// that match many or all of them, multi-byte ones, and one that matches
/// nothing.
const TOOL_PATTERNS: [&str; 12] = [
    "Read",
    "Bash",
    "Edit",
    "Write",
    "mcp__*",
    "mcp__*__exec*",
    "E?it",
    "Wr*",
    "B*",
    "édit*",
    "*",
    "nothing",
];

/// The compressor's settings, every key varied as its own schema
/// (`Settings::schema`, what `settings-schema` exports) describes it: a new
/// knob is generated without an edit here. An integer is its default, near
/// its minimum (where a pass does the most), or anywhere in its range
/// (log-uniform, so small values are as likely as large); an enum any of
/// its values; a list of names a few [`TOOL_PATTERNS`] or its default; a
/// table each of its keys.
fn passes() -> impl Strategy<Value = Settings> {
    let schema: serde_json::Value =
        serde_json::from_str(&Settings::schema()).expect("the compressor's schema is JSON");
    let object = value_of(&schema, &schema);
    object.prop_map(|value| {
        serde_json::from_value(value).expect("a value its schema allows is a valid setting")
    })
}

/// A strategy for values of `property` (a property of `root`'s schema).
fn value_of(
    root: &serde_json::Value,
    property: &serde_json::Value,
) -> BoxedStrategy<serde_json::Value> {
    use serde_json::{Value, json};
    let def = property
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .map(|name| &root["$defs"][name]);
    let schema = def.unwrap_or(property);
    let default = property.get("default").cloned();
    if let Some(values) = schema.get("oneOf").and_then(Value::as_array) {
        let consts: Vec<Value> = values
            .iter()
            .filter_map(|v| v.get("const").cloned())
            .collect();
        assert!(!consts.is_empty(), "an enum without values: {schema}");
        return prop::sample::select(consts).boxed();
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        let keys: Vec<String> = properties.keys().cloned().collect();
        let values: Vec<BoxedStrategy<Value>> =
            properties.values().map(|p| value_of(root, p)).collect();
        return values
            .prop_map(move |values| Value::Object(keys.iter().cloned().zip(values).collect()))
            .boxed();
    }
    match schema["type"].as_str() {
        Some("boolean") => any::<bool>().prop_map(Value::from).boxed(),
        Some("integer") => {
            let min = schema["minimum"]
                .as_u64()
                .expect("an integer knob has a minimum");
            let max = schema["maximum"]
                .as_u64()
                .expect("an integer knob has a maximum");
            let default = default.and_then(|d| d.as_u64()).unwrap_or(min);
            let near_min = min..=(min + 8).min(max);
            // log-uniform: an exponent, then a value of that many bits.
            let anywhere = (0..=64 - (max - min).leading_zeros(), any::<u64>())
                .prop_map(move |(bits, r)| min + (r >> (64 - bits.max(1))).min(max - min));
            prop_oneof![3 => Just(default), 4 => near_min, 3 => anywhere]
                .prop_map(|n| json!(n))
                .boxed()
        }
        Some("array") if schema["items"]["type"] == "string" => {
            let picked = prop::sample::subsequence(TOOL_PATTERNS.to_vec(), 0..4)
                .prop_map(|names| json!(names));
            match default {
                Some(default) => prop_oneof![1 => Just(default), 2 => picked].boxed(),
                None => picked.boxed(),
            }
        }
        _ => panic!("a setting this generator cannot vary (teach it the type): {property}"),
    }
}

/// Every key of the compressor's schema takes more than one value over a
/// few hundred generated settings: none is left at its default.
#[test]
fn the_generator_varies_every_key_of_the_schema() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = passes();
    let mut seen: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    for _ in 0..300 {
        let settings = strategy.new_tree(&mut runner).unwrap().current();
        let value = serde_json::to_value(&settings).unwrap();
        for (key, v) in value.as_object().unwrap() {
            seen.entry(key.clone()).or_default().insert(v.to_string());
        }
    }
    let schema: serde_json::Value = serde_json::from_str(&Settings::schema()).unwrap();
    let keys: std::collections::BTreeSet<&String> =
        schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(seen.keys().collect::<std::collections::BTreeSet<_>>(), keys);
    for (key, values) in &seen {
        assert!(values.len() > 1, "{key} is never varied: {values:?}");
    }
}

#[derive(Clone, Debug)]
struct Knobs {
    threshold: u32,
    target_pct: u32,
    keep_pct: u32,
    summary_pct: u32,
}

fn config() -> impl Strategy<Value = TestConfig> {
    let sizes = (1_000u32..6_000, 5u32..96, 1u32..101, 0u32..101).prop_map(
        |(threshold, target_pct, keep_pct, summary_pct)| Knobs {
            threshold,
            target_pct,
            keep_pct,
            summary_pct,
        },
    );
    let passes = passes();
    let recent_turns = prop_oneof![0u32..4, Just(10), Just(u32::MAX)];
    (sizes, recent_turns, passes, any::<bool>()).prop_map(|(k, recent_turns, settings, recall)| {
        let target = (k.threshold * k.target_pct / 100).clamp(65, k.threshold - 1);
        let keep = (target * k.keep_pct / 100).max(1);
        let summary = 64 + (target - 1 - 64) * k.summary_pct / 100;
        let core = CoreConfig {
            token_threshold: k.threshold,
            target_tokens: target,
            recent_turns,
            keep_recent_tokens: keep,
            summary_max_tokens: summary,
        };
        core.validate().expect("generated core configs are valid");
        settings.validate().expect("generated settings are valid");
        TestConfig {
            core,
            settings,
            recall,
        }
    })
}

// ---------------------------------------------------------------------------
// Running and checking
// ---------------------------------------------------------------------------

/// One native compress call: the whole history (`offset` 0) or, with a
/// checkpoint, `history` = the whole history from `offset` on.
fn compress_at(
    history: &[Message],
    offset: usize,
    config: &TestConfig,
    checkpoint: Option<&Checkpoint>,
) -> Result<Outcome, CompressError> {
    let mut summarize = |r: SummaryRequest, _: &[Item]| -> Result<String, String> {
        Ok(condense_summarizer_heuristic::summarize(&r))
    };
    condense_compressor::compress(
        Request {
            history,
            offset,
            config: &config.core,
            settings: &config.settings,
            checkpoint,
            tokens: None,
            recall: config.recall,
            preparing: false,
        },
        &mut summarize,
    )
}

/// One native call on the whole history, which must succeed.
fn native(
    history: &[Message],
    config: &TestConfig,
    checkpoint: Option<&Checkpoint>,
) -> Result<Outcome, TestCaseError> {
    compress_at(history, 0, config, checkpoint).map_err(|e| {
        fail(format!(
            "compress failed on valid input: {e}\ninput:{}",
            describe(history)
        ))
    })
}

fn fail(what: impl Into<String>) -> TestCaseError {
    TestCaseError::fail(what.into())
}

/// The state of a checkpoint the compressor wrote.
fn state_of(checkpoint: &Checkpoint) -> Result<State, TestCaseError> {
    State::read(checkpoint).map_err(|e| fail(format!("the compressor's own checkpoint: {e}")))
}

fn signed_thinking(messages: &[Message]) -> Vec<&Part> {
    messages
        .iter()
        .flat_map(|m| &m.parts)
        .filter(|p| matches!(p, Part::Thinking(t) if t.signature.is_some()))
        .collect()
}

fn is_carrier(m: &Message) -> bool {
    m.role == Role::Tool || (m.role == Role::User && m.has_tool_results())
}

/// The smallest request any fold could make of `input`: the history as it
/// is, or a fold at the last safe cut point (every system message, the
/// summary pair at its largest, the opener pinned for that cut, and the
/// messages from the cut on, which no cut can split). A request above the
/// threshold is allowed only when this is above it too: when what must stay
/// (a single message or an unsplittable batch, with the system messages and
/// the pinned opener) is larger on its own.
fn smallest_request(input: &[Message], config: &CoreConfig, recall: bool) -> u64 {
    let tokens = |m: &Message| u64::from(estimate_message(m));
    let total = estimate_total(input);
    let Some(&last) = safe_cut_points(input).last() else {
        return total;
    };
    let systems: u64 = input[..last]
        .iter()
        .filter(|m| m.role == Role::System)
        .map(tokens)
        .sum();
    let pinned = opener_before(input, last).map_or(0, |p| tokens(&input[p]));
    // With recall the summary ends with the fold's note: the longest one.
    let note = recall.then(|| condense_model::recall::costliest_fold_note(input.len()));
    let framing = LANGUAGES
        .iter()
        .map(|lang| {
            let pair = summary_pair("", note.as_deref(), lang);
            pair.iter().map(tokens).sum::<u64>()
        })
        .max()
        .unwrap_or(0);
    // The estimate is not exactly additive over concatenated text.
    let pair = framing + u64::from(config.summary_max_tokens) + 2;
    let tail: u64 = input[last..].iter().map(tokens).sum();
    total.min(systems + pair + pinned + tail)
}

/// Every promise about one output, checked by `check_items` and again
/// independently of it, on the request the items stand for.
fn check_call(input: &[Message], config: &TestConfig, out: &Outcome) -> Result<(), TestCaseError> {
    let recall = config.recall;
    let config = &config.core;
    let report = &out.report;
    // Handles only when recall is offered; each resolves in the history to
    // what it says it covers, and is named in the request.
    prop_assert!(recall || out.handles.is_empty(), "handles without recall");
    let sent = format!("{:?}", materialize(&out.items, input));
    for handle in &out.handles {
        let found = condense_model::recall::find(input, &handle.id);
        let holds = match (handle.span, found) {
            (span @ Span::Fold { .. }, Ok(found)) => span == found,
            // The first of identical messages is the one recalled.
            (Span::Message(i), Ok(Span::Message(j))) => input[i] == input[j],
            _ => false,
        };
        prop_assert!(holds, "handle {} of {:?}", &handle.id, handle.span);
        prop_assert!(sent.contains(&handle.id), "{} is not named", &handle.id);
    }
    let tail_start = report.tail_start as usize;
    check_items(History::whole(input), &out.items, report.cut())
        .map_err(|v| fail(format!("{v}")))?;
    let messages = materialize(&out.items, input);

    // The verbatim tail, byte-identical.
    let tail = &input[tail_start..];
    prop_assert!(
        messages.ends_with(tail),
        "the tail from {tail_start} is not verbatim"
    );
    // Every system message kept, byte-identical, in order, and no other.
    let systems = |ms: &[Message]| -> Vec<Message> {
        ms.iter()
            .filter(|m| m.role == Role::System)
            .cloned()
            .collect()
    };
    prop_assert_eq!(systems(input), systems(&messages), "system messages");
    // Pairs intact; only the input's own in-flight calls unanswered.
    let pending_in = check_pairs(input).map_err(|v| fail(format!("input: {v}")))?;
    let pending_out = check_pairs(&messages).map_err(|v| fail(format!("output: {v}")))?;
    prop_assert!(
        pending_out.is_subset(&pending_in),
        "calls lost their results: {:?}",
        pending_out.difference(&pending_in).collect::<Vec<_>>()
    );
    // Signed thinking only as it was.
    let signed_in = signed_thinking(input);
    for p in signed_thinking(&messages) {
        prop_assert!(signed_in.contains(&p), "signed thinking altered: {p:?}");
    }
    // Summary: with a fold, the checkpoint's summary framed as the pair right
    // after the leading system messages; without one, no summary at all.
    // (Input messages may begin with the marker too: see `Family::Marked`.)
    if report.boundary > 0 {
        let checkpoint = out
            .checkpoint
            .as_ref()
            .ok_or_else(|| fail("a fold without a checkpoint"))?;
        prop_assert_eq!(
            checkpoint.boundary,
            report.boundary,
            "the checkpoint's boundary vs the report's"
        );
        let summary = state_of(checkpoint)?.summary;
        let s = messages
            .iter()
            .position(|m| m.role != Role::System)
            .unwrap_or(messages.len());
        let sent = messages.get(s..s + 2);
        // With recall, the summary ends naming the fold's handle.
        let boundary = report.boundary as usize;
        let note = recall.then(|| {
            let handle = condense_model::recall::fold_handle(&input[..boundary]);
            condense_model::recall::fold_note(&handle, boundary)
        });
        prop_assert!(
            LANGUAGES
                .iter()
                .any(|lang| { sent == Some(&summary_pair(&summary, note.as_deref(), lang)[..]) }),
            "no summary pair after the {s} leading system messages"
        );
    } else {
        prop_assert_eq!(report.summary_tokens, 0, "a summary without a fold");
    }
    // Role order: two same-role messages (other than system messages and
    // result carriers) side by side only where the input had them side by side.
    for (k, w) in messages.windows(2).enumerate() {
        let (a, b) = (&w[0], &w[1]);
        if a.role != b.role || a.role == Role::System || (is_carrier(a) && is_carrier(b)) {
            continue;
        }
        let adjacent_in_input = input
            .windows(2)
            .any(|p| is_rewrite_of(&p[0], a) && is_rewrite_of(&p[1], b));
        prop_assert!(
            adjacent_in_input,
            "two {:?} messages at output {k} and {}, not adjacent in the input",
            a.role,
            k + 1
        );
    }
    let first = |ms: &[Message]| ms.iter().find(|m| m.role != Role::System).map(|m| m.role);
    if first(input) == Some(Role::User) {
        prop_assert_eq!(first(&messages), Some(Role::User), "first message");
    }
    // The report tells the truth about the request's size.
    let tokens = estimate_total(&messages);
    prop_assert_eq!(
        u64::from(report.tokens_after),
        tokens,
        "tokens_after vs the output"
    );
    // Never above the threshold, unless no fold could get under it.
    let smallest = smallest_request(input, config, recall);
    prop_assert!(
        tokens <= u64::from(config.token_threshold) || smallest > u64::from(config.token_threshold),
        "request of {} tokens over the threshold {} (the smallest fold: {}; trigger {:?})",
        tokens,
        config.token_threshold,
        smallest,
        report.trigger
    );
    Ok(())
}

/// One line per message: role and parts (kind, size), for failure reports.
fn describe(messages: &[Message]) -> String {
    let mut out = String::new();
    for (i, m) in messages.iter().enumerate() {
        let parts: Vec<String> = m
            .parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => format!(
                    "text({}: {:?})",
                    t.len(),
                    t.chars().take(24).collect::<String>()
                ),
                Part::Thinking(t) => format!(
                    "thinking({}{})",
                    t.text.len(),
                    if t.signature.is_some() {
                        ", signed"
                    } else {
                        ""
                    }
                ),
                Part::ToolCall(c) => format!("call({} {})", c.id, c.name),
                Part::ToolResult(r) => format!("result({} {})", r.call_id, r.content.len()),
                Part::Opaque(j) => format!("opaque({})", j.len()),
            })
            .collect();
        out.push_str(&format!(
            "\n  {i:>3} {:?} ~{}t [{}]",
            m.role,
            estimate_message(m),
            parts.join(", ")
        ));
    }
    out
}

/// `check_call`, with the input and the output described on failure.
fn check_described(
    input: &[Message],
    config: &TestConfig,
    out: &Outcome,
) -> Result<(), TestCaseError> {
    check_call(input, config, out).map_err(|e| {
        fail(format!(
            "{e}\nreport: {:?}\ninput:{}\noutput:{}",
            out.report,
            describe(input),
            describe(&materialize(&out.items, input))
        ))
    })
}

/// `history` with message `k` edited (same roles, ids and pairing).
fn edited(history: &[Message], k: usize) -> Vec<Message> {
    let mut h = history.to_vec();
    let m = &mut h[k];
    match m.parts.first_mut() {
        Some(Part::Text(t)) => t.push_str(" (edited)"),
        Some(Part::Thinking(t)) => t.text.push_str(" (edited)"),
        Some(Part::ToolCall(c)) => c.arguments.push(' '),
        Some(Part::ToolResult(r)) => r.content.push_str(" (edited)"),
        Some(Part::Opaque(j)) => j.push(' '),
        None => m.parts.push(Part::Text("(edited)".into())),
    }
    h
}

/// A call given checkpoint `cp` that does not describe `history` must
/// ignore it, say why, and answer as a call without a checkpoint does.
fn check_ignored(
    history: &[Message],
    config: &TestConfig,
    cp: &Checkpoint,
    what: &str,
) -> Result<(), TestCaseError> {
    let mut with = native(history, config, Some(cp))?;
    let without = native(history, config, None)?;
    prop_assert!(
        with.report.checkpoint_ignored.is_some(),
        "{what}: the checkpoint was not ignored (trigger {:?})",
        with.report.trigger
    );
    with.report.checkpoint_ignored = None;
    prop_assert_eq!(
        with,
        without,
        "{}: the call with the ignored checkpoint differs from a call without one",
        what
    );
    Ok(())
}

/// The contract's promise for offset calls: with a checkpoint the compressor
/// wrote (boundary > 0), sending only `history[boundary..]` with `offset =
/// boundary` gives exactly the outcome of the full call `full`. When the
/// full call could not use the checkpoint, the offset call must ask for the
/// whole history instead.
fn check_offset_call(
    history: &[Message],
    config: &TestConfig,
    cp: &Checkpoint,
    full: &Outcome,
) -> Result<(), TestCaseError> {
    if State::read(cp).is_err() || cp.boundary == 0 {
        return Ok(());
    }
    let offset = cp.boundary as usize;
    let windowed = compress_at(&history[offset..], offset, config, Some(cp));
    match (&full.report.checkpoint_ignored, windowed) {
        (None, Ok(out)) => {
            prop_assert_eq!(
                &out,
                full,
                "the call from offset {} differs from the full call",
                offset
            );
        }
        (Some(_), Err(CompressError::NeedsFullHistory(_))) => {}
        (ignored, got) => {
            return Err(fail(format!(
                "the call from offset {offset}: {got:?}; the full call ignored the checkpoint: \
                 {ignored:?}"
            )));
        }
    }
    Ok(())
}

/// The model calls of a replay: the request before each assistant message,
/// then the whole history (which may end with a batch in flight).
fn call_points(history: &[Message]) -> Vec<usize> {
    let mut points: Vec<usize> = (1..history.len())
        .filter(|&i| history[i].role == Role::Assistant)
        .collect();
    points.push(history.len());
    points.dedup();
    points
}

/// Replays `history` call by call, checking every output, determinism, the
/// prefix property between compactions, offset calls against full ones, and
/// checkpoints that must not match.
fn replay_checked(history: &[Message], config: &TestConfig) -> Result<(), TestCaseError> {
    let pristine = history.to_vec();
    let mut checkpoint: Option<Checkpoint> = None;
    let mut previous: Option<Vec<Message>> = None;
    for i in call_points(history) {
        let request = &history[..i];
        let out = native(request, config, checkpoint.as_ref())?;
        check_described(request, config, &out).map_err(|e| fail(format!("call at {i}: {e}")))?;
        prop_assert_eq!(
            &native(request, config, checkpoint.as_ref())?,
            &out,
            "call at {}: not deterministic",
            i
        );
        if let Some(cp) = checkpoint.as_ref() {
            check_offset_call(request, config, cp, &out)
                .map_err(|e| fail(format!("call at {i}: {e}")))?;
        }
        let messages = materialize(&out.items, request);
        let compacted = out.report.trigger == Trigger::Compacted;
        if let Some(prev) = previous.as_ref().filter(|_| !compacted) {
            prop_assert!(
                messages.starts_with(prev),
                "call at {i}: cache break without a compaction ({:?})",
                out.report.trigger
            );
        }
        if !compacted {
            prop_assert_eq!(
                out.checkpoint.as_ref(),
                checkpoint.as_ref(),
                "call at {}: checkpoint changed without a compaction",
                i
            );
        }
        if let Some(cp) = out.checkpoint.as_ref().filter(|_| compacted) {
            let state = state_of(cp)?;
            // The new checkpoint reproduces the request it was made with.
            if out.report.tokens_after <= config.core.token_threshold {
                let again = native(request, config, Some(cp))?;
                prop_assert_eq!(
                    &again.items,
                    &out.items,
                    "call at {}: the checkpoint does not reproduce its request",
                    i
                );
                prop_assert_eq!(again.report.trigger, Trigger::ReusedCheckpoint);
                prop_assert_eq!(again.checkpoint.as_ref(), Some(cp));
                check_offset_call(request, config, cp, &again)
                    .map_err(|e| fail(format!("call at {i}, the fresh checkpoint: {e}")))?;
            }
            // An edit before the boundary: the checkpoint is ignored.
            if cp.boundary > 0 {
                let h = edited(request, cp.boundary as usize - 1);
                check_ignored(
                    &h,
                    config,
                    cp,
                    &format!("call at {i}: a checkpoint of an edited history"),
                )?;
            }
            // Rewound below the horizon: ignored too.
            let rewound = &request[..state.horizon as usize - 1];
            check_ignored(
                rewound,
                config,
                cp,
                &format!("call at {i}: a checkpoint of a rewound history"),
            )?;
        }
        checkpoint = out.checkpoint;
        previous = Some(messages);
    }
    prop_assert_eq!(history, pristine.as_slice(), "durable history modified");
    Ok(())
}

fn cases(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // A failure is reported with its minimal input; nothing is written
        // next to the sources.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cases(6_000))]

    /// One cold call on a whole history: every invariant, determinism, and a
    /// checkpoint of an edited history ignored.
    #[test]
    fn one_call_keeps_every_promise(spec in history(), config in config()) {
        let history = build(&spec);
        check_pairs(&history).expect("generated histories are valid input");
        let out = native(&history, &config, None)?;
        check_described(&history, &config, &out)?;
        prop_assert_eq!(&native(&history, &config, None)?, &out, "not deterministic");
        if let Some(cp) = out.checkpoint.as_ref().filter(|cp| cp.boundary > 0) {
            let h = edited(&history, cp.boundary as usize - 1);
            check_ignored(&h, &config, cp, "a checkpoint of an edited history")?;
        }
    }
}

proptest! {
    #![proptest_config(cases(4_000))]

    /// A history replayed call by call with the checkpoint, as an agent
    /// runtime does.
    #[test]
    fn replay_with_checkpoints_keeps_every_promise(spec in history(), config in config()) {
        let history = build(&spec);
        replay_checked(&history, &config)?;
    }
}

proptest! {
    #![proptest_config(cases(64))]

    /// The component, through the host middleware (which sends only the
    /// messages after the checkpoint's boundary), returns exactly what the
    /// native build returns for the whole history, call by call.
    #[test]
    fn component_agrees_with_native(spec in history(), config in config()) {
        let history = build(&spec);
        let middleware = condense_tests::embedded_middleware();
        let mut session: Option<SessionCheckpoint> = None;
        for i in call_points(&history) {
            let request = &history[..i];
            let given = session.as_ref().map(|s| &s.checkpoint);
            let expected = native(request, &config, given)?;
            let got = config.compress(middleware, request, session.as_ref());
            prop_assert_ne!(
                got.report.status(),
                Status::FailedOpen,
                "call at {}: the component failed: {:?}",
                i,
                got.report.reason()
            );
            prop_assert_eq!(
                got.report.guest(),
                Some(&expected.report),
                "call at {}: component and native reports differ",
                i
            );
            prop_assert_eq!(&got.items, &expected.items, "call at {}: component and native items differ", i);
            prop_assert_eq!(
                got.checkpoint.as_ref().map(|s| &s.checkpoint),
                expected.checkpoint.as_ref(),
                "call at {}: component and native checkpoints differ",
                i
            );
            // Between compactions the component got only the messages after
            // the boundary.
            let boundary = given.map_or(0, |cp| cp.boundary);
            let sent_from = if expected.report.checkpoint_ignored.is_none() { boundary } else { 0 };
            prop_assert_eq!(got.report.sent_from, sent_from, "call at {}: sent from", i);
            session = got.checkpoint;
        }
    }
}
