//! The message model of condense, mirrored from `wit/condense.wit`, plus the pieces
//! that both sides of the component boundary need: the token estimate and the
//! invariants (the guest's self-check and the host's
//! validation run the same code).

pub mod hash;
pub mod invariants;
pub mod range;
pub mod recall;
pub mod segment;
pub mod tokens;
mod wit;

pub use range::Range;

/// Marks every message condense writes, so hosts, tests and later calls can
/// recognise it.
pub const SUMMARY_MARKER: &str = "[condense summary]";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// JSON text, as the provider sent it.
    pub arguments: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ToolResult {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Thinking {
    pub text: String,
    pub signature: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Part {
    Text(String),
    Thinking(Thinking),
    ToolCall(ToolCall),
    ToolResult(ToolResult),
    /// JSON that condense passes through without interpreting it.
    Opaque(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Message {
    pub role: Role,
    pub parts: Vec<Part>,
}

impl Message {
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Message {
            role,
            parts: vec![Part::Text(text.into())],
        }
    }

    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.parts.iter().filter_map(|p| match p {
            Part::ToolCall(c) => Some(c),
            _ => None,
        })
    }

    pub fn tool_results(&self) -> impl Iterator<Item = &ToolResult> {
        self.parts.iter().filter_map(|p| match p {
            Part::ToolResult(r) => Some(r),
            _ => None,
        })
    }

    pub fn has_tool_calls(&self) -> bool {
        self.tool_calls().next().is_some()
    }

    pub fn has_tool_results(&self) -> bool {
        self.tool_results().next().is_some()
    }

    /// The plain text parts joined by newlines.
    pub fn joined_text(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            if let Part::Text(t) = p {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(t);
            }
        }
        out
    }

    /// A user message that opens a turn: written by the person, not a carrier of
    /// tool results (Anthropic-style histories send tool results as `user`).
    pub fn opens_turn(&self) -> bool {
        self.role == Role::User && !self.has_tool_results()
    }

    /// A message that carries tool results back to the model: a `tool`
    /// message (OpenAI), or a user message with result parts (Anthropic).
    pub fn is_result_carrier(&self) -> bool {
        self.role == Role::Tool || (self.role == Role::User && self.has_tool_results())
    }

    /// A message written by condense (summary or its acknowledgement).
    pub fn is_condense_summary(&self) -> bool {
        matches!(self.parts.first(), Some(Part::Text(t)) if t.starts_with(SUMMARY_MARKER))
    }
}

/// The fold knobs every compressor shares; see `core-config` in
/// `wit/condense.wit`. The field docs are also the descriptions of the config
/// file's JSON Schema (`condense config --schema`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CoreConfig {
    /// Compact when the request the model would see is estimated above this
    /// many tokens (at the latest: the embedded compressor's `cost` rule may
    /// compact sooner, when that pays).
    pub token_threshold: u32,
    /// A compaction folds enough history to bring the request down to about
    /// this many tokens (with the `cost` rule, a fold goes down to
    /// `keep_recent_tokens` verbatim; the passes alone still only need reach
    /// this). Must be below `token_threshold`: the gap is the hysteresis that
    /// keeps the request's prefix byte-identical (prompt cache hits) between
    /// compactions.
    pub target_tokens: u32,
    /// Keep this many of the latest user turns verbatim when they fit (in user
    /// turns; 0: no turn is reserved, the cut may fall at the latest one).
    /// The `cost` rule's folds keep `keep_recent_tokens` instead.
    pub recent_turns: u32,
    /// When the recent turns alone do not fit (one long turn of tool calls),
    /// cut inside the turn at a safe point, keeping at least this many tokens
    /// of the latest messages verbatim and the turn's opening user message
    /// pinned. At most `target_tokens`.
    pub keep_recent_tokens: u32,
    /// Token budget of the summary text the summarizer writes. Below
    /// `target_tokens`.
    pub summary_max_tokens: u32,
}

/// The defaults of the knobs that follow the threshold, as shares of it:
/// `target_tokens` 50%, `keep_recent_tokens` 20%, `summary_max_tokens` 5%
/// (a 100k threshold gives 50k, 20k and 5k). A user who sets only the
/// threshold gets a consistent config from these.
///
/// The summary's share is a product decision measured on the long corpus
/// sessions at a 40k threshold (docs/summary.md, "What the summary keeps"): 2%
/// kept 69–86% of the files, request openings and error lines a session
/// named, 5% keeps all of them and most commands, for 0.325 instead of 0.306
/// of the uncompressed cost (median); the summary is the ceiling the
/// summarizer writes up to, artifact trail and binding statements first.
pub const TARGET_SHARE: (u32, u32) = (1, 2);
pub const KEEP_RECENT_SHARE: (u32, u32) = (1, 5);
pub const SUMMARY_SHARE: (u32, u32) = (1, 20);

impl Default for CoreConfig {
    /// Sized for a 200k-token context window: compact at 100k, back down to 50k,
    /// which leaves room for a handful of compactions per long session.
    fn default() -> Self {
        CoreConfig::for_threshold(100_000)
    }
}

/// The fixed ranges of the core keys: `validate` enforces them and the host's
/// JSON Schema publishes them, from this one table. Ranges that depend on
/// another key (`target_tokens < token_threshold`) are checked in `validate`.
pub const CORE_RANGES: &[Range] = &[
    Range::new("token_threshold", 1_000, u32::MAX),
    Range::new("target_tokens", 1, u32::MAX - 1),
    Range::new("recent_turns", 0, u32::MAX),
    Range::new("keep_recent_tokens", 1, u32::MAX - 1),
    Range::new("summary_max_tokens", 64, u32::MAX - 1),
];

impl CoreConfig {
    /// The config for `token_threshold` with every other knob at its default:
    /// the shares of the threshold above, 10 recent turns.
    pub fn for_threshold(token_threshold: u32) -> CoreConfig {
        let share = |(num, den): (u32, u32)| {
            u32::try_from(u64::from(token_threshold) * u64::from(num) / u64::from(den))
                .unwrap_or(u32::MAX)
        };
        let target_tokens = share(TARGET_SHARE).max(1);
        CoreConfig {
            token_threshold,
            target_tokens,
            recent_turns: 10,
            keep_recent_tokens: share(KEEP_RECENT_SHARE).clamp(1, target_tokens),
            // At least the range's minimum, never above the target.
            summary_max_tokens: share(SUMMARY_SHARE)
                .max(64)
                .min(target_tokens.saturating_sub(1)),
        }
    }

    fn numeric(&self, key: &str) -> u32 {
        match key {
            "token_threshold" => self.token_threshold,
            "target_tokens" => self.target_tokens,
            "recent_turns" => self.recent_turns,
            "keep_recent_tokens" => self.keep_recent_tokens,
            "summary_max_tokens" => self.summary_max_tokens,
            _ => unreachable!("CORE_RANGES names a key CoreConfig does not have: {key}"),
        }
    }

    /// Names the first field that is out of range, with the allowed range.
    pub fn validate(&self) -> Result<(), String> {
        range::check(CORE_RANGES, |key| self.numeric(key))?;
        if self.target_tokens >= self.token_threshold {
            return Err(format!(
                "target_tokens = {}: must be between 1 and token_threshold - 1 ({})",
                self.target_tokens,
                self.token_threshold - 1
            ));
        }
        if self.keep_recent_tokens > self.target_tokens {
            return Err(format!(
                "keep_recent_tokens = {}: must be between 1 and target_tokens ({})",
                self.keep_recent_tokens, self.target_tokens
            ));
        }
        if self.summary_max_tokens >= self.target_tokens {
            return Err(format!(
                "summary_max_tokens = {}: must be between 64 and target_tokens - 1 ({})",
                self.summary_max_tokens,
                self.target_tokens - 1
            ));
        }
        Ok(())
    }
}

/// What a compaction fixed; see `checkpoint` in `wit/condense.wit`. `state` is
/// the compressor's, opaque to everyone else.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Checkpoint {
    pub version: u32,
    pub boundary: u32,
    #[cfg_attr(feature = "serde", serde(with = "state_text"))]
    pub state: Vec<u8>,
}

/// A checkpoint's `state` in JSON: base64 text, which every request of a
/// session reads back from the store (as an array of numbers it was four
/// times the size, and most of the time of reading a checkpoint). A
/// checkpoint stored as an array still reads.
#[cfg(feature = "serde")]
mod state_text {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::de::{Error, SeqAccess, Visitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(state: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(state))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        struct State;
        impl<'de> Visitor<'de> for State {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("base64 text, or an array of bytes")
            }
            fn visit_str<E: Error>(self, text: &str) -> Result<Vec<u8>, E> {
                STANDARD.decode(text).map_err(E::custom)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(byte) = seq.next_element()? {
                    out.push(byte);
                }
                Ok(out)
            }
        }
        deserializer.deserialize_any(State)
    }
}

/// One message of the request to send; see `item` in `wit/condense.wit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// History message `index`, unchanged.
    Kept(u32),
    /// History message `index`, as a pass rewrote it.
    Rewritten(u32, Message),
    /// condense's own: the summary pair.
    Written(Message),
}

impl Item {
    /// The history index this item comes from (`None`: written by condense).
    pub fn origin(&self) -> Option<usize> {
        match self {
            Item::Kept(i) | Item::Rewritten(i, _) => Some(*i as usize),
            Item::Written(_) => None,
        }
    }

    /// The message this item stands for, with `history[i]` for a kept one;
    /// `history` must hold every index the item names.
    pub fn message<'a>(&'a self, history: &'a [Message]) -> &'a Message {
        match self {
            Item::Kept(i) => &history[*i as usize],
            Item::Rewritten(_, m) | Item::Written(m) => m,
        }
    }
}

/// The request `items` stand for, as messages.
pub fn materialize(items: &[Item], history: &[Message]) -> Vec<Message> {
    items.iter().map(|i| i.message(history).clone()).collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Trigger {
    UnderThreshold,
    ReusedCheckpoint,
    Compacted,
    WontShrink,
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Report {
    pub tokens_before: u32,
    pub tokens_after: u32,
    pub trigger: Trigger,
    pub boundary: u32,
    pub newly_folded: u32,
    pub summary_tokens: u32,
    pub pinned_opening: Option<u32>,
    /// Input index where the verbatim tail starts (`boundary` when no pass ran).
    pub tail_start: u32,
    pub passes: PassReport,
    /// Why the checkpoint given was not used (the fold was recomputed).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub checkpoint_ignored: Option<String>,
}

impl Report {
    /// Where this output says it cut the history, for [`invariants::check_items`].
    pub fn cut(&self) -> invariants::Cut {
        invariants::Cut {
            boundary: self.boundary as usize,
            tail_start: self.tail_start as usize,
        }
    }
}

/// What the context-engineering passes did to the request returned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PassReport {
    /// Assistant messages whose reasoning was removed.
    pub reasoning_pruned: u32,
    /// Developer-loop steps replaced by placeholders.
    pub steps_elided: u32,
    /// Tool results truncated or cleared.
    pub results_cleared: u32,
    /// Tokens the passes saved, by the estimate.
    pub tokens_saved: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub items: Vec<Item>,
    pub checkpoint: Option<Checkpoint>,
    pub report: Report,
    /// The recall handles the request names (none unless recall was
    /// offered; the WIT's `recall.named`).
    pub handles: Vec<recall::Handle>,
    /// The request passed the compressor's soft mark without compacting:
    /// the host may prepare the next compaction's summary now (the WIT's
    /// `prepare.due`).
    pub prepare_due: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompressError {
    InvalidConfig(String),
    InvalidInput(String),
    SelfCheckFailed(String),
    /// The checkpoint of an offset call cannot be used: the host must send the
    /// whole history.
    NeedsFullHistory(String),
    /// No summarizer could write the summary a fold needs.
    SummarizerFailed(String),
}

impl std::fmt::Display for CompressError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompressError::InvalidConfig(m) => write!(f, "invalid config: {m}"),
            CompressError::InvalidInput(m) => write!(f, "invalid input: {m}"),
            CompressError::SelfCheckFailed(m) => write!(f, "self-check failed: {m}"),
            CompressError::NeedsFullHistory(m) => write!(f, "needs the full history: {m}"),
            CompressError::SummarizerFailed(m) => write!(f, "the summarizer failed: {m}"),
        }
    }
}

impl std::error::Error for CompressError {}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryRequest {
    pub previous_summary: String,
    pub messages: Vec<Message>,
    pub max_tokens: u32,
    pub language: String,
    /// The summarizer's own settings, a JSON object.
    pub settings: String,
}
