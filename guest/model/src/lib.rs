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

/// Compressor settings; see `config` in `wit/condense.wit` for each field.
/// The field docs are also the descriptions of the config file's JSON Schema
/// (`condense config --schema`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Config {
    /// Compact when the request the model would see is estimated above this
    /// many tokens.
    pub token_threshold: u32,
    /// A compaction folds enough history to bring the request down to about
    /// this many tokens. Must be below `token_threshold`: the gap is the
    /// hysteresis that keeps the request's prefix byte-identical (prompt cache
    /// hits) between compactions.
    pub target_tokens: u32,
    /// Keep this many of the latest user turns verbatim when they fit (in user
    /// turns; 0: no turn is reserved, the cut may fall at the latest one).
    pub recent_turns: u32,
    /// When the recent turns alone do not fit (one long turn of tool calls),
    /// cut inside the turn at a safe point, keeping at least this many tokens
    /// of the latest messages verbatim and the turn's opening user message
    /// pinned. At most `target_tokens`.
    pub keep_recent_tokens: u32,
    /// Token budget of the summary text the summarizer writes. Below
    /// `target_tokens`.
    pub summary_max_tokens: u32,
    /// Drop the reasoning (thinking parts, `<think>` spans) of assistant
    /// messages followed by at least this many assistant messages, in the
    /// messages kept between the summary and the verbatim tail. 0: off.
    pub strip_reasoning_after_turns: u32,
    /// The provider needs reasoning echoed back (DeepSeek-style
    /// `reasoning_content` on tool-call turns): reasoning is never pruned,
    /// whatever `strip_reasoning_after_turns` says.
    pub reasoning_echo: bool,
    /// Collapse runs of consecutive mutating / exec-capable tool steps (see
    /// `[tools]`) to the first step, a placeholder and the last step, in the
    /// messages kept between the summary and the verbatim tail.
    pub aggregate_developer_loops: bool,
    /// With `aggregate_developer_loops`, a run of at least this many steps is
    /// collapsed (in steps: an assistant tool-call message and its results).
    pub max_loop_steps_before_aggregate: u32,
    /// Tool classes by name pattern; a tool matching neither list is read-only.
    pub tools: ToolClasses,
    /// What happens to long tool results outside the verbatim tail: `off`
    /// leaves them, `truncate` keeps a head and a tail, `clear` replaces them
    /// with a placeholder.
    pub clear_mode: ClearMode,
    /// With `clear_mode` on, tool results longer than this many characters are
    /// truncated or cleared.
    pub result_char_threshold: u32,
    /// The latest this-many tool results are never truncated or cleared
    /// (0: none is protected by position).
    pub keep_tool_results: u32,
    /// Results of tools whose name matches one of these patterns (`*` any run
    /// of characters, `?` one character) are never truncated or cleared.
    pub exclude_tools: Vec<String>,
}

/// Which tools change the workspace, as name patterns (`*` matches any run of
/// characters, `?` one character). A tool matching neither list is read-only.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolClasses {
    /// Tools that change files (edit, write), as name patterns.
    pub mutating: Vec<String>,
    /// Tools that run commands, as name patterns. A name matching both lists
    /// is exec-capable.
    pub exec_capable: Vec<String>,
}

impl Default for ToolClasses {
    /// The editing and shell tools of Claude Code, SWE-agent, OpenHands and
    /// the common MCP servers. These are configuration defaults: the guest only
    /// ever sees the lists it is given.
    fn default() -> Self {
        let list = |names: &[&str]| names.iter().map(|n| n.to_string()).collect();
        ToolClasses {
            mutating: list(&[
                "Edit",
                "MultiEdit",
                "Write",
                "NotebookEdit",
                "str_replace_editor",
                "str_replace_based_edit_tool",
                "edit",
                "edit_file",
                "write_file",
                "create_file",
                "apply_patch",
            ]),
            exec_capable: list(&[
                "Bash",
                "bash",
                "shell",
                "execute_bash",
                "execute_command",
                "run_command",
                "run_terminal_cmd",
                "mcp__*__exec*",
            ]),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolClass {
    ReadOnly,
    Mutating,
    ExecCapable,
}

impl ToolClasses {
    /// The class of tool `name`: exec-capable wins over mutating when a name
    /// matches both (it can do anything a mutating tool can).
    pub fn class_of(&self, name: &str) -> ToolClass {
        if matches_any(&self.exec_capable, name) {
            ToolClass::ExecCapable
        } else if matches_any(&self.mutating, name) {
            ToolClass::Mutating
        } else {
            ToolClass::ReadOnly
        }
    }
}

/// Whether `name` matches one of `patterns` (`*` any run, `?` one character).
pub fn matches_any(patterns: &[String], name: &str) -> bool {
    patterns
        .iter()
        .any(|p| wildmatch::WildMatch::new(p).matches(name))
}

/// What the old-tool-result pass does to a long result outside the verbatim tail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ClearMode {
    /// The pass is off.
    #[default]
    Off,
    /// Keep a head and a tail with a marker saying what was elided.
    Truncate,
    /// Replace the result with a short placeholder.
    Clear,
}

impl Default for Config {
    /// Sized for a 200k-token context window: compact at 100k, back down to 50k,
    /// which leaves room for a handful of compactions per long session. The
    /// context-engineering passes are opt-in.
    fn default() -> Self {
        Config {
            token_threshold: 100_000,
            target_tokens: 50_000,
            recent_turns: 10,
            keep_recent_tokens: 20_000,
            summary_max_tokens: 2_000,
            strip_reasoning_after_turns: 0,
            reasoning_echo: false,
            aggregate_developer_loops: false,
            max_loop_steps_before_aggregate: 5,
            tools: ToolClasses::default(),
            clear_mode: ClearMode::Off,
            result_char_threshold: 2_000,
            keep_tool_results: 3,
            exclude_tools: Vec::new(),
        }
    }
}

/// The fixed ranges of the numeric keys: `validate` enforces them and the
/// host's JSON Schema publishes them, from this one table. Ranges that depend
/// on another key (e.g. `target_tokens < token_threshold`) are checked in
/// `validate` only.
pub const RANGES: &[(&str, u32, u32)] = &[
    ("token_threshold", 1_000, u32::MAX),
    ("target_tokens", 1, u32::MAX - 1),
    ("recent_turns", 0, u32::MAX),
    ("keep_recent_tokens", 1, u32::MAX - 1),
    ("summary_max_tokens", 64, u32::MAX - 1),
    ("strip_reasoning_after_turns", 0, 1_000_000),
    ("max_loop_steps_before_aggregate", 3, 1_000_000),
    ("result_char_threshold", 100, 100_000_000),
    ("keep_tool_results", 0, 1_000_000),
];

impl Config {
    /// This config with the three context-engineering passes on, at the
    /// settings the corpus figures use: reasoning kept on the last 3 assistant
    /// messages, loops of 5+ steps aggregated, long old results truncated.
    pub fn with_passes(self) -> Config {
        Config {
            strip_reasoning_after_turns: 3,
            aggregate_developer_loops: true,
            clear_mode: ClearMode::Truncate,
            ..self
        }
    }

    /// This config with the three context-engineering passes off.
    pub fn without_passes(self) -> Config {
        Config {
            strip_reasoning_after_turns: 0,
            aggregate_developer_loops: false,
            clear_mode: ClearMode::Off,
            ..self
        }
    }

    /// Whether any pass is on.
    pub fn passes_enabled(&self) -> bool {
        (self.strip_reasoning_after_turns > 0 && !self.reasoning_echo)
            || self.aggregate_developer_loops
            || self.clear_mode != ClearMode::Off
    }

    fn numeric(&self, key: &str) -> u32 {
        match key {
            "token_threshold" => self.token_threshold,
            "target_tokens" => self.target_tokens,
            "recent_turns" => self.recent_turns,
            "keep_recent_tokens" => self.keep_recent_tokens,
            "summary_max_tokens" => self.summary_max_tokens,
            "strip_reasoning_after_turns" => self.strip_reasoning_after_turns,
            "max_loop_steps_before_aggregate" => self.max_loop_steps_before_aggregate,
            "result_char_threshold" => self.result_char_threshold,
            "keep_tool_results" => self.keep_tool_results,
            _ => unreachable!("RANGES names a key Config does not have: {key}"),
        }
    }

    /// Names the first field that is out of range, with the allowed range.
    pub fn validate(&self) -> Result<(), String> {
        for &(key, min, max) in RANGES {
            let value = self.numeric(key);
            if !(min..=max).contains(&value) {
                return Err(format!("{key} = {value}: must be between {min} and {max}"));
            }
        }
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
        let lists = [
            ("tools.mutating", &self.tools.mutating),
            ("tools.exec_capable", &self.tools.exec_capable),
            ("exclude_tools", &self.exclude_tools),
        ];
        for (key, patterns) in lists {
            if let Some(i) = patterns.iter().position(|p| p.is_empty()) {
                return Err(format!(
                    "{key}[{i}] is empty: a tool name pattern needs at least one character"
                ));
            }
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
    /// Where the verbatim tail started when the passes last ran; between
    /// `boundary` and here the request holds the passes' rewrite.
    pub tail_start: u32,
    /// How many messages the history had when the passes last ran: they look
    /// no further, so their rewrite is reproduced byte for byte until the
    /// next compaction.
    pub horizon: u32,
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
}

impl Report {
    /// Where this output says it cut the history, for [`invariants::check_output`].
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
