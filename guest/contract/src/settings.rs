//! The compressor's own settings: when to compact (the trigger and the prices
//! it weighs), and the context-engineering passes and their knobs. The host
//! hands them over as a JSON text (the `settings` of a compress request, from
//! the keys of the config file that are not the host's), this module reads
//! and checks it, and publishes its JSON Schema. A new pass knob is a field
//! here (a numeric one also a row of [`RANGES`]) and the pass that reads it:
//! the config file's schema, validation, docs/configuration.md row, property tests and fuzz
//! targets read it from [`Settings::schema`].

use condense_model::{Range, range};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Settings of the context-engineering passes. They run only when a
/// compaction happens, over the messages kept between the summary and the
/// verbatim tail, and their rewrite is held fixed until the next compaction.
/// All off by default.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(transform = publish_ranges)]
pub struct Settings {
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
    /// With `clear_mode = "truncate"`, a truncated result keeps this share of
    /// `result_char_threshold`, in percent: two thirds of it from the head,
    /// one third from the tail.
    pub truncate_keep_percent: u32,
    /// The latest this-many tool results are never truncated or cleared
    /// (0: none is protected by position).
    pub keep_tool_results: u32,
    /// Results of tools whose name matches one of these patterns (`*` any run
    /// of characters, `?` one character) are never truncated or cleared.
    pub exclude_tools: Vec<String>,
    /// Results the tool reported as errors are never truncated or cleared:
    /// the error text is what a later fix answers, and what the person
    /// asks about when the fix does not hold.
    pub keep_error_results: bool,
    /// When to compact: `threshold` only when the request passes
    /// `token_threshold`, down to `target_tokens`; `cost` also before that,
    /// as soon as compacting is expected to cost less than carrying the
    /// history on (priced with the `cache_*` keys), and every compaction then
    /// keeps `keep_recent_tokens` verbatim.
    pub compact_when: CompactWhen,
    /// The price of an input token read from the prompt cache, in
    /// thousandths of an uncached one (100 on most models; 50 or less on
    /// some newer ones): the `cost` rule weighs it, and `condense replay`
    /// prices its figures with it.
    pub cache_read_permille: u32,
    /// The price of an input token written to the prompt cache, in
    /// thousandths of an uncached one (1250 for a 5-minute cache, 2000 for a
    /// 1-hour one, 1000 where writes cost no more): the `cost` rule weighs
    /// it, and `condense replay` prices its figures with it.
    pub cache_write_permille: u32,
    /// With `compact_when = "cost"`: what writing one summary costs, in
    /// uncached input tokens (0 for the heuristic summarizer; an LLM
    /// summary's input and output, priced as input).
    pub summary_cost_tokens: u32,
    /// How long the prompt cache keeps a request, in seconds (300 for a
    /// 5-minute cache, 3600 for a 1-hour one): a host that knows when the
    /// session's last request was sets `cache_cold` past it.
    pub cache_ttl_seconds: u32,
    /// Set by the host for one call: the session's prompt cache has expired
    /// (its last request is older than `cache_ttl_seconds`), so this call
    /// rewrites its whole request anyway. With `compact_when = "cost"`, a
    /// compaction due soon is done now, at no extra break.
    pub cache_cold: bool,
    /// Summaries prepared ahead: the share of the way to the next
    /// compaction, in thousandths, at which the next compaction's cut is
    /// planned (the request past this share of `token_threshold`, or by the
    /// `cost` rule of the excess that pays for a compaction), so that its
    /// summary can be written in the background before it is needed. The
    /// compaction then folds at that cut when it still brings the request
    /// down to halfway between `target_tokens` and `token_threshold`, and
    /// otherwise summarizes the rest on top of it. 0: no plan, every
    /// compaction cuts where it is made (`condense proxy`, which prepares
    /// summaries ahead, makes it 500 when its summarizer chain starts with
    /// `llm`).
    pub prepare_at_permille: u32,
}

/// The ranges of the numeric keys: [`Settings::validate`] enforces them and
/// [`Settings::schema`] publishes them. A numeric knob has its row here.
pub const RANGES: &[Range] = &[
    Range::new("strip_reasoning_after_turns", 0, 1_000_000),
    Range::new("max_loop_steps_before_aggregate", 3, 1_000_000),
    Range::new("result_char_threshold", 100, 100_000_000),
    Range::new("truncate_keep_percent", 1, 99),
    Range::new("keep_tool_results", 0, 1_000_000),
    Range::new("cache_read_permille", 1, 1_000),
    Range::new("cache_write_permille", 1, 10_000),
    Range::new("summary_cost_tokens", 0, 100_000_000),
    Range::new("cache_ttl_seconds", 1, 1_000_000),
    Range::new("prepare_at_permille", 0, 999),
];

fn publish_ranges(schema: &mut schemars::Schema) {
    range::publish(schema, RANGES);
}

/// Which tools change the workspace, as name patterns (`*` matches any run of
/// characters, `?` one character). A tool matching neither list is read-only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ToolClasses {
    /// Tools that change files (edit, write), as name patterns.
    pub mutating: Vec<String>,
    /// Tools that run commands, as name patterns. A name matching both lists
    /// is exec-capable.
    pub exec_capable: Vec<String>,
}

impl Default for ToolClasses {
    /// The editing and shell tools of Claude Code, SWE-agent, OpenHands and
    /// the common MCP servers.
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

/// What a tool can do to the world: the class [`ToolClasses`] gives a tool
/// by its name, and the class an agent runtime declares for its own tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolClass {
    /// Only looks: reading, listing, searching.
    ReadOnly,
    /// Changes files in the workspace.
    Mutating,
    /// Runs commands, so it can do anything a mutating tool can and more.
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

    /// Adds `names` to the list of `class`, each a pattern matching only
    /// itself (an agent runtime's own tool names have no `*` or `?`); a name
    /// already listed is not listed twice. Read-only is what matches neither
    /// list, so nothing is added for it: adding can never take a class away.
    pub fn add(&mut self, class: ToolClass, names: impl IntoIterator<Item = String>) {
        let list = match class {
            ToolClass::ReadOnly => return,
            ToolClass::Mutating => &mut self.mutating,
            ToolClass::ExecCapable => &mut self.exec_capable,
        };
        for name in names {
            if !list.contains(&name) {
                list.push(name);
            }
        }
    }
}

/// Whether `name` matches one of `patterns` (`*` any run, `?` one character).
pub fn matches_any(patterns: &[String], name: &str) -> bool {
    patterns
        .iter()
        .any(|p| wildmatch::WildMatch::new(p).matches(name))
}

/// When a compaction happens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CompactWhen {
    /// Only when the request passes `token_threshold`.
    Threshold,
    /// Also before, when compacting now is expected to cost less.
    #[default]
    Cost,
}

/// What the old-tool-result pass does to a long result outside the verbatim tail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ClearMode {
    /// The pass is off.
    #[default]
    Off,
    /// Keep a head and a tail with a marker saying what was elided.
    Truncate,
    /// Replace the result with a short placeholder.
    Clear,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            strip_reasoning_after_turns: 0,
            reasoning_echo: false,
            aggregate_developer_loops: false,
            max_loop_steps_before_aggregate: 5,
            tools: ToolClasses::default(),
            clear_mode: ClearMode::Off,
            result_char_threshold: 2_000,
            truncate_keep_percent: 50,
            keep_tool_results: 3,
            exclude_tools: Vec::new(),
            keep_error_results: false,
            compact_when: CompactWhen::default(),
            cache_read_permille: 100,
            cache_write_permille: 1_250,
            summary_cost_tokens: 0,
            cache_ttl_seconds: 300,
            cache_cold: false,
            prepare_at_permille: 0,
        }
    }
}

impl Settings {
    /// These settings with the three passes on, at the settings the corpus
    /// figures use: reasoning kept on the last 3 assistant messages, loops of
    /// 5+ steps aggregated, long old results truncated.
    pub fn with_passes(self) -> Settings {
        Settings {
            strip_reasoning_after_turns: 3,
            aggregate_developer_loops: true,
            clear_mode: ClearMode::Truncate,
            ..self
        }
    }

    /// These settings telling the compressor, for one call, that the
    /// session's prompt cache expired (`cache_cold`).
    pub fn with_cache_cold(self) -> Settings {
        Settings {
            cache_cold: true,
            ..self
        }
    }

    /// The price of a cached input token, relative to an uncached one.
    pub fn read_price(&self) -> f64 {
        f64::from(self.cache_read_permille) / 1000.0
    }

    /// The price of an input token written to the cache, relative to an
    /// uncached one.
    pub fn write_price(&self) -> f64 {
        f64::from(self.cache_write_permille) / 1000.0
    }

    /// These settings with the three passes off.
    pub fn without_passes(self) -> Settings {
        Settings {
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

    /// Reads a settings JSON text (`""` counts as `{}`) and checks it. The
    /// error names the key: `clear_mode: unknown variant `trunc`, expected
    /// one of `off`, `truncate`, `clear``.
    pub fn parse(json: &str) -> Result<Settings, String> {
        let json = if json.trim().is_empty() { "{}" } else { json };
        let mut de = serde_json::Deserializer::from_str(json);
        let settings: Settings = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            // serde_json appends "at line 1 column 42": the host names the
            // key in its own file, the position in this JSON text is noise.
            let message = inner.to_string();
            let message = match message.rfind(" at line ") {
                Some(at) => message[..at].to_owned(),
                None => message,
            };
            if path == "." {
                message
            } else {
                format!("{path}: {message}")
            }
        })?;
        settings.validate()?;
        Ok(settings)
    }

    /// Checks the ranges the schema publishes and the lists' patterns.
    pub fn validate(&self) -> Result<(), String> {
        range::check_fields(RANGES, self)?;
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

    /// The JSON text of these settings, as a host would pass them.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("settings serialise")
    }

    /// The JSON Schema (draft 2020-12) of the settings: every key with its
    /// description, type, default and range.
    pub fn schema() -> String {
        let schema = schemars::schema_for!(Settings);
        serde_json::to_string_pretty(&schema).expect("the schema serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_default_settings_parse() {
        assert_eq!(Settings::parse("").unwrap(), Settings::default());
        assert_eq!(Settings::parse("{}").unwrap(), Settings::default());
        let on = Settings::default().with_passes();
        assert_eq!(Settings::parse(&on.to_json()).unwrap(), on);
    }

    #[test]
    fn errors_name_the_key() {
        let err = Settings::parse(r#"{"clear_mode": "trunc"}"#).unwrap_err();
        assert!(
            err.starts_with("clear_mode: unknown variant `trunc`"),
            "{err}"
        );
        let err = Settings::parse(r#"{"tools": {"mutatin": []}}"#).unwrap_err();
        assert!(
            err.starts_with("tools.mutatin: unknown field `mutatin`")
                || err.starts_with("tools: unknown field `mutatin`"),
            "{err}"
        );
        let err = Settings::parse(r#"{"result_char_threshold": 5}"#).unwrap_err();
        assert_eq!(
            err,
            "result_char_threshold = 5: must be between 100 and 100000000"
        );
        let err = Settings::parse(r#"{"exclude_tools": ["Read", ""]}"#).unwrap_err();
        assert!(err.starts_with("exclude_tools[1] is empty"), "{err}");
    }

    #[test]
    fn added_names_take_their_class() {
        let mut tools = ToolClasses {
            mutating: vec!["Edit".into()],
            exec_capable: vec!["Bash".into()],
        };
        tools.add(ToolClass::Mutating, ["write_file".into(), "Edit".into()]);
        tools.add(ToolClass::ExecCapable, ["run_command".into()]);
        tools.add(ToolClass::ReadOnly, ["Bash".into()]);
        assert_eq!(tools.mutating, ["Edit", "write_file"]);
        assert_eq!(tools.class_of("write_file"), ToolClass::Mutating);
        assert_eq!(tools.class_of("run_command"), ToolClass::ExecCapable);
        assert_eq!(tools.class_of("Bash"), ToolClass::ExecCapable);
    }

    #[test]
    fn the_schema_describes_every_key_with_its_range() {
        let schema: serde_json::Value = serde_json::from_str(&Settings::schema()).unwrap();
        let properties = schema["properties"].as_object().unwrap();
        let defaults = serde_json::to_value(Settings::default()).unwrap();
        for key in defaults.as_object().unwrap().keys() {
            assert!(properties.contains_key(key), "{key} is missing");
        }
        assert_eq!(properties["result_char_threshold"]["minimum"], 100);
    }
}
