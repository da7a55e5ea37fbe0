//! The message model of condense, mirrored from `wit/condense.wit`, plus the pieces
//! that both sides of the component boundary need: the token estimate and the
//! invariants (the guest's self-check and the host's
//! validation run the same code).

pub mod invariants;
pub mod tokens;

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
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// JSON text, as the provider sent it.
    pub arguments: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ToolResult {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Thinking {
    pub text: String,
    pub signature: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    Text(String),
    Thinking(Thinking),
    ToolCall(ToolCall),
    ToolResult(ToolResult),
    /// JSON that condense passes through without interpreting it.
    Opaque(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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

    /// A message written by condense (summary or its acknowledgement).
    pub fn is_condense_summary(&self) -> bool {
        matches!(self.parts.first(), Some(Part::Text(t)) if t.starts_with(SUMMARY_MARKER))
    }
}

/// Compressor thresholds; see `config` in `wit/condense.wit` for each field.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct Config {
    pub token_threshold: u32,
    pub target_tokens: u32,
    pub recent_turns: u32,
    pub keep_recent_tokens: u32,
    pub summary_max_tokens: u32,
}

impl Default for Config {
    /// Sized for a 200k-token context window: compact at 100k, back down to 50k,
    /// which leaves room for a handful of compactions per long session.
    fn default() -> Self {
        Config {
            token_threshold: 100_000,
            target_tokens: 50_000,
            recent_turns: 10,
            keep_recent_tokens: 20_000,
            summary_max_tokens: 2_000,
        }
    }
}

impl Config {
    /// Names the first field that is out of range, with the allowed range.
    pub fn validate(&self) -> Result<(), String> {
        if self.token_threshold < 1_000 {
            return Err(format!(
                "token_threshold = {}: must be at least 1000",
                self.token_threshold
            ));
        }
        if self.target_tokens == 0 || self.target_tokens >= self.token_threshold {
            return Err(format!(
                "target_tokens = {}: must be between 1 and token_threshold - 1 ({})",
                self.target_tokens,
                self.token_threshold - 1
            ));
        }
        if self.keep_recent_tokens == 0 || self.keep_recent_tokens > self.target_tokens {
            return Err(format!(
                "keep_recent_tokens = {}: must be between 1 and target_tokens ({})",
                self.keep_recent_tokens, self.target_tokens
            ));
        }
        if self.summary_max_tokens < 64 || self.summary_max_tokens >= self.target_tokens {
            return Err(format!(
                "summary_max_tokens = {}: must be between 64 and target_tokens - 1 ({})",
                self.summary_max_tokens,
                self.target_tokens - 1
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Checkpoint {
    pub boundary: u32,
    pub prefix_hash: String,
    pub folded_tokens: u32,
    pub summary: String,
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
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub messages: Vec<Message>,
    pub checkpoint: Option<Checkpoint>,
    pub report: Report,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompressError {
    InvalidConfig(String),
    InvalidInput(String),
    SelfCheckFailed(String),
}

impl std::fmt::Display for CompressError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompressError::InvalidConfig(m) => write!(f, "invalid config: {m}"),
            CompressError::InvalidInput(m) => write!(f, "invalid input: {m}"),
            CompressError::SelfCheckFailed(m) => write!(f, "self-check failed: {m}"),
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
}
