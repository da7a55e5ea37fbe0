//! Shared pieces of the fuzz targets: histories and configs built from fuzzer
//! bytes (through `arbitrary::Unstructured`), and (in `checks`) the
//! summarizers the compressor is driven with and the properties every
//! `compress` result must have.
//!
//! Histories are valid by construction (they pass `check_pairs`): turns of a
//! user message and agent steps, a step being an assistant message and the
//! results of its tool calls, carried OpenAI-style (one `tool` message per
//! result) or Anthropic-style (user messages with result parts, in any order,
//! split over several carriers), with system messages, thinking (signed or
//! not), `<think>` spans, opaque parts, summary-marked messages and a final
//! batch still in flight. A few inputs are then broken on purpose (a message
//! dropped, duplicated or moved) so the invalid-input path is fuzzed too.

use arbitrary::{Result, Unstructured};
use condense_compressor::Settings;
use condense_model::{Message, Part, Role, SUMMARY_MARKER, Thinking, ToolCall, ToolResult};
use serde_json::{Value, json};

mod checks;
pub use checks::{
    Config, Summarizer, check_outcome, checked, compress_checked, run, run_from, show,
};

/// Messages in one generated history, at most.
pub const MAX_MESSAGES: usize = 160;
/// Characters in one generated history, at most: enough for several
/// compactions at the low thresholds the configs use, small enough to keep
/// thousands of executions a second.
pub const MAX_CHARS: usize = 200_000;

/// Words that steer the code under test: language stopwords, the summarizer's
/// format (headings, item prefixes, counts, todo boxes, command arrows),
/// error and exit-code lines, file paths, reasoning tags, the summary marker,
/// and awkward Unicode.
const WORDS: &[&str] = &[
    "the",
    "and",
    "please",
    "fix",
    "this",
    "test",
    "der",
    "die",
    "und",
    "bitte",
    "nicht",
    "le",
    "la",
    "les",
    "est",
    "el",
    "que",
    "para",
    "não",
    "il",
    "che",
    "della",
    "привет",
    "и",
    "修复",
    "测试",
    "テスト",
    "です",
    "버그",
    "수정",
    "error:",
    "error[E0308]: mismatched types",
    "warning:",
    "exit code 1",
    "exit status 0",
    "Exit code: 101",
    "FAILED",
    "panicked at",
    "Traceback (most recent call last):",
    "src/lib.rs",
    "./tests/a_test.py",
    "Cargo.toml",
    "/tmp/x.json",
    "<think>",
    "</think>",
    "<THINK>",
    "</Think>",
    "\n",
    "\n\n",
    "  ",
    "- ",
    "## ",
    "## Files",
    "## Current task",
    "## Todo list",
    "## Commands",
    "$ ",
    " → ",
    " (×2)",
    "(Read ×3, Edit)",
    "- [x] ",
    "- [>] ",
    "- [ ] ",
    "- [-] ",
    SUMMARY_MARKER,
    "ok",
    "done",
    "é",
    "\u{200b}",
    "\u{301}",
    "🦀",
    "\r\n",
    "\t",
    "```",
    "{",
    "}",
    "\"",
    "\\",
    "ß",
    "İ",
];

const TOOLS: &[&str] = &[
    "Edit",
    "MultiEdit",
    "Write",
    "Bash",
    "bash",
    "Read",
    "Grep",
    "Glob",
    "TodoWrite",
    "apply_patch",
    "str_replace_based_edit_tool",
    "mcp__fs__exec_run",
    "mcp__fs__read",
    "WebFetch",
];

const PATTERNS: &[&str] = &[
    "Edit",
    "Write",
    "Bash",
    "Read",
    "*",
    "?",
    "mcp__*",
    "mcp__*__exec*",
    "*Edit",
    "B?sh",
    "**",
    "[",
    "\\",
];

/// The compressor's keys whose values an input's own bytes decide (nested
/// keys dotted), in the order it draws them, one 4-byte word each. Frozen, so
/// that an input makes the same session whatever the compressor's schema
/// becomes: a key added to the compressor is not listed here (its word comes
/// from its own stream, [`Gen::stream`]), and a listed key the compressor no
/// longer has still takes its word. Adding, removing or reordering entries
/// shifts every input; the `replayable` tests fail when anything does.
pub const DRAWN_KEYS: &[&str] = &[
    "strip_reasoning_after_turns",
    "reasoning_echo",
    "aggregate_developer_loops",
    "max_loop_steps_before_aggregate",
    "tools.mutating",
    "tools.exec_capable",
    "clear_mode",
    "result_char_threshold",
    "truncate_keep_percent",
    "keep_tool_results",
    "exclude_tools",
    "keep_error_results",
    "compact_when",
    "cache_read_permille",
    "cache_write_permille",
    "summary_cost_tokens",
    "cache_ttl_seconds",
    "cache_cold",
    "prepare_at_permille",
];

/// FNV-1a, 64 bits: a hash fixed by its definition (std's `DefaultHasher`
/// may change between Rust releases), so the streams it seeds stay the same.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Builds histories and configs from fuzzer bytes.
pub struct Gen<'a, 'b> {
    pub u: &'b mut Unstructured<'a>,
    next_id: u32,
    chars: usize,
    /// A hash of the whole input, which seeds each key's own stream.
    seed: u64,
}

impl<'a, 'b> Gen<'a, 'b> {
    pub fn new(u: &'b mut Unstructured<'a>) -> Self {
        let seed = fnv1a(u.peek_bytes(u.len()).unwrap_or_default());
        Gen {
            u,
            next_id: 0,
            chars: 0,
            seed,
        }
    }

    fn below(&mut self, n: u32) -> Result<u32> {
        self.u.int_in_range(0..=n - 1)
    }

    fn one_in(&mut self, n: u32) -> Result<bool> {
        Ok(self.below(n)? == 0)
    }

    /// Text made of words, raw fuzzer strings and long repeated runs (the runs
    /// are what push a history over the token threshold).
    pub fn text(&mut self) -> Result<String> {
        let mut s = String::new();
        let pieces = self.u.int_in_range(0..=8)?;
        for _ in 0..pieces {
            // Mostly short: a compaction needs a region of several messages
            // between the summary and the verbatim tail for the passes to
            // work on. Now and then a long run crosses the threshold at once.
            let runs = match self.below(32)? {
                0..=3 => {
                    s.push_str(self.u.arbitrary::<&str>()?);
                    continue;
                }
                4 => self.u.int_in_range(100u32..=800)?,
                5..=8 => self.u.int_in_range(2u32..=40)?,
                _ => 1,
            };
            let word = *self.u.choose(WORDS)?;
            for _ in 0..runs {
                s.push_str(word);
                s.push(' ');
            }
        }
        let room = MAX_CHARS.saturating_sub(self.chars);
        if s.len() > room {
            let mut cut = room;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
        }
        self.chars += s.len();
        Ok(s)
    }

    fn id(&mut self) -> Result<String> {
        self.next_id += 1;
        // Anthropic- and OpenAI-looking ids; unique by the counter.
        Ok(if self.u.arbitrary()? {
            format!("toolu_{:04}", self.next_id)
        } else {
            format!("call_{}", self.next_id)
        })
    }

    fn tool_name(&mut self) -> Result<String> {
        Ok(if self.one_in(10)? {
            self.u.arbitrary::<String>()?
        } else {
            self.u.choose(TOOLS)?.to_string()
        })
    }

    /// Tool arguments: the JSON shapes the summarizer reads (commands, file
    /// paths, todo lists), other JSON, or text that is not JSON at all.
    fn arguments(&mut self) -> Result<String> {
        Ok(match self.below(7)? {
            0 => json!({ "command": self.text()? }).to_string(),
            1 => json!({
                "file_path": self.text()?,
                "old_string": self.text()?,
                "new_string": self.text()?,
            })
            .to_string(),
            2 => {
                let mut todos = Vec::new();
                for _ in 0..self.u.int_in_range(0..=4)? {
                    let status = *self.u.choose(&[
                        "pending",
                        "in_progress",
                        "completed",
                        "cancelled",
                        "x",
                    ])?;
                    todos.push(json!({ "content": self.text()?, "status": status }));
                }
                json!({ "todos": todos }).to_string()
            }
            3 => json!({ "path": self.text()?, "pattern": self.text()? }).to_string(),
            4 => "{}".to_string(),
            5 => self.text()?,
            _ => json!({ "cmd": [self.text()?, self.text()?], "n": self.u.arbitrary::<i64>()? })
                .to_string(),
        })
    }

    fn thinking(&mut self) -> Result<Part> {
        let signature = if self.u.arbitrary()? {
            Some(self.text()?)
        } else {
            None
        };
        Ok(Part::Thinking(Thinking {
            text: self.text()?,
            signature,
        }))
    }

    fn opaque(&mut self) -> Result<Part> {
        Ok(Part::Opaque(match self.below(3)? {
            0 => json!({ "type": "image", "source": { "data": self.text()? } }).to_string(),
            1 => json!({ "type": "redacted_thinking", "data": self.text()? }).to_string(),
            _ => self.text()?,
        }))
    }

    /// The text of a message, now and then opening with the summary marker.
    fn message_text(&mut self) -> Result<String> {
        let text = self.text()?;
        Ok(if self.one_in(16)? {
            format!("{SUMMARY_MARKER} {text}")
        } else {
            text
        })
    }

    fn system(&mut self) -> Result<Message> {
        let mut parts = vec![Part::Text(self.message_text()?)];
        if self.one_in(8)? {
            parts.push(self.opaque()?);
        }
        Ok(Message {
            role: Role::System,
            parts,
        })
    }

    fn user(&mut self) -> Result<Message> {
        let mut parts = Vec::new();
        for _ in 0..self.u.int_in_range(0..=3)? {
            parts.push(if self.one_in(6)? {
                self.opaque()?
            } else {
                Part::Text(self.message_text()?)
            });
        }
        Ok(Message {
            role: Role::User,
            parts,
        })
    }

    /// An assistant message: thinking, text, opaque parts and `calls` tool
    /// calls, usually in the providers' order, now and then shuffled.
    fn assistant(&mut self, calls: usize) -> Result<(Message, Vec<(String, String)>)> {
        let mut parts = Vec::new();
        for _ in 0..self.u.int_in_range(0..=2)? {
            parts.push(self.thinking()?);
        }
        for _ in 0..self.u.int_in_range(0..=2)? {
            parts.push(if self.one_in(8)? {
                self.opaque()?
            } else {
                Part::Text(self.message_text()?)
            });
        }
        let mut called = Vec::new();
        for _ in 0..calls {
            let id = self.id()?;
            let name = self.tool_name()?;
            parts.push(Part::ToolCall(ToolCall {
                id: id.clone(),
                name: name.clone(),
                arguments: self.arguments()?,
            }));
            called.push((id, name));
        }
        if self.one_in(12)? {
            shuffle(self.u, &mut parts)?;
        }
        Ok((
            Message {
                role: Role::Assistant,
                parts,
            },
            called,
        ))
    }

    fn result(&mut self, call_id: String) -> Result<Part> {
        let mut content = self.text()?;
        if self.one_in(3)? {
            // Long enough for the result-clearing pass.
            let line = self.text()? + "\n";
            let lines = self.u.int_in_range(10..=300)?;
            let room = MAX_CHARS.saturating_sub(self.chars) / line.len().max(1);
            content.push_str(&line.repeat(lines.min(room)));
            self.chars += line.len() * lines.min(room);
        }
        Ok(Part::ToolResult(ToolResult {
            call_id,
            content,
            is_error: self.one_in(4)?,
        }))
    }

    /// The results of `calls`, in any order, as `tool` messages, as user
    /// carriers (several results each, maybe with text), or both.
    fn results(&mut self, calls: &[(String, String)], out: &mut Vec<Message>) -> Result<()> {
        let mut ids: Vec<String> = calls.iter().map(|(id, _)| id.clone()).collect();
        if self.one_in(4)? {
            shuffle(self.u, &mut ids)?;
        }
        let style = self.below(4)?;
        let mut i = 0;
        while i < ids.len() {
            let take = match style {
                0 => 1,
                1 => ids.len() - i,
                _ => self.u.int_in_range(1..=ids.len() - i)?,
            };
            let tool_message = style == 0 || (style == 3 && self.u.arbitrary()?);
            let mut parts = Vec::new();
            if !tool_message && self.one_in(10)? {
                parts.push(Part::Text(self.message_text()?));
            }
            for id in &ids[i..i + take] {
                parts.push(self.result(id.clone())?);
            }
            if tool_message && self.one_in(16)? {
                parts.push(Part::Text(self.message_text()?));
            }
            if !tool_message && self.one_in(8)? {
                parts.push(if self.u.arbitrary()? {
                    self.opaque()?
                } else {
                    Part::Text(self.message_text()?)
                });
            }
            out.push(Message {
                role: if tool_message { Role::Tool } else { Role::User },
                parts,
            });
            i += take;
        }
        Ok(())
    }

    /// What every compress-driving target starts from, drawn in this order
    /// (the order fixes which bytes make what: see README.md, "Inputs stay
    /// replayable"): a config, a summarizer and a history that passes
    /// `check_pairs`.
    pub fn session(&mut self) -> Result<(Config, Summarizer, Vec<Message>)> {
        let config = self.config()?;
        let summarizer = self.summarizer()?;
        Ok((config, summarizer, self.history()?))
    }

    /// Where the `replay` target calls `compress`: increasing prefix lengths
    /// of a history of `len` messages, the whole history last.
    pub fn call_points(&mut self, len: usize) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut end = 0;
        while end < len {
            let Ok(step) = self.u.int_in_range(1..=8usize) else {
                break;
            };
            end = (end + step).min(len);
            ends.push(end);
        }
        if ends.last() != Some(&len) {
            ends.push(len);
        }
        ends
    }

    /// A history that passes `check_pairs`.
    pub fn history(&mut self) -> Result<Vec<Message>> {
        let mut h = Vec::new();
        for _ in 0..self.u.int_in_range(0..=2)? {
            h.push(self.system()?);
        }
        // Most histories open with a person's message; some do not.
        if !self.one_in(10)? {
            h.push(self.user()?);
        }
        while h.len() < MAX_MESSAGES && self.chars < MAX_CHARS && !self.u.is_empty() {
            match self.below(22)? {
                0..=3 => h.push(self.user()?),
                4..=13 => {
                    // A step: an assistant message and its results.
                    let calls = match self.below(8)? {
                        0 | 1 => 0,
                        2..=5 => 1,
                        _ => self.u.int_in_range(2..=5)?,
                    };
                    let (m, called) = self.assistant(calls)?;
                    h.push(m);
                    self.results(&called, &mut h)?;
                }
                14 | 15 => {
                    let (m, _) = self.assistant(0)?;
                    h.push(m);
                }
                16 => h.push(self.system()?),
                17 => {
                    // What an earlier condense output looks like, fed back.
                    h.push(Message::text(
                        Role::User,
                        format!("{SUMMARY_MARKER} {}", self.text()?),
                    ));
                    h.push(Message::text(
                        Role::Assistant,
                        format!("{SUMMARY_MARKER} {}", self.text()?),
                    ));
                }
                18 => {
                    // A final batch still in flight: its results come later.
                    let calls = self.u.int_in_range(1..=3)?;
                    let (m, _) = self.assistant(calls)?;
                    h.push(m);
                    break;
                }
                19 | 20 => {
                    // A developer loop: steps that all call mutating or
                    // exec-capable tools (by the default classes).
                    let tools = ["Edit", "Bash", "Write", "apply_patch", "mcp__fs__exec_run"];
                    for _ in 0..self.u.int_in_range(2..=9)? {
                        let calls = if self.one_in(4)? { 2 } else { 1 };
                        let (mut m, mut called) = self.assistant(calls)?;
                        for (part, (_, name)) in m
                            .parts
                            .iter_mut()
                            .filter_map(|p| match p {
                                Part::ToolCall(c) => Some(c),
                                _ => None,
                            })
                            .zip(called.iter_mut())
                        {
                            part.name = self.u.choose(&tools)?.to_string();
                            *name = part.name.clone();
                        }
                        h.push(m);
                        self.results(&called, &mut h)?;
                    }
                }
                _ => {
                    // An empty message, as some clients send.
                    let role = *self.u.choose(&[Role::User, Role::Assistant])?;
                    h.push(Message {
                        role,
                        parts: Vec::new(),
                    });
                }
            }
        }
        Ok(h)
    }

    /// Now and then breaks `history` (a message dropped, duplicated or moved),
    /// which may or may not leave it valid.
    pub fn maybe_break(&mut self, history: &mut Vec<Message>) -> Result<()> {
        if history.is_empty() || !self.one_in(16)? {
            return Ok(());
        }
        let i = self.u.choose_index(history.len())?;
        match self.below(3)? {
            0 => {
                history.remove(i);
            }
            1 => {
                let m = history[i].clone();
                history.insert(i, m);
            }
            _ => {
                let m = history.remove(i);
                let j = self.u.choose_index(history.len() + 1)?;
                history.insert(j, m);
            }
        }
        Ok(())
    }

    /// The compressor's settings, every key as its own schema
    /// (`Settings::schema`) describes it, so a new knob is fuzzed without an
    /// edit here. Which bytes decide a key is fixed for good (see
    /// [`DRAWN_KEYS`]): a key added to the compressor shifts nothing else an
    /// input makes. Input that has run out (zeros) picks what makes a pass
    /// act: a flag not at its default, an enum's first value that is not its
    /// default, an integer's minimum.
    fn settings(&mut self) -> Result<Settings> {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        let schema = SCHEMA.get_or_init(|| {
            serde_json::from_str(&Settings::schema()).expect("the compressor's schema is JSON")
        });
        let value = self.settings_for(schema)?;
        Ok(serde_json::from_value(value).expect("a value its schema allows is a valid setting"))
    }

    /// The settings, as JSON, for `schema` (`Settings::schema`, or one with
    /// keys added or removed: the tests show that changes no other draw).
    /// The input gives one 4-byte word to each key of [`DRAWN_KEYS`], in
    /// that order, whatever its type and range; any other key's word, and
    /// whatever else a key needs (a pattern's raw text, an integer over its
    /// whole range), comes from that key's own stream, [`Gen::stream`].
    pub fn settings_for(&mut self, schema: &Value) -> Result<Value> {
        let mut words = Vec::with_capacity(DRAWN_KEYS.len());
        for &key in DRAWN_KEYS {
            words.push((key, self.u.arbitrary::<u32>()?));
        }
        self.value_of(schema, schema, "", &words)
    }

    /// The bytes that decide what the input's own bytes do not, for `key`:
    /// a hash of the whole input and the key's name, so two keys, or two
    /// inputs, have unrelated streams, and a key added later has one without
    /// taking a byte from the input.
    pub fn stream(&self, key: &str) -> Vec<u8> {
        let mut state = self.seed ^ fnv1a(key.as_bytes());
        (0..32)
            .flat_map(|_| {
                // splitmix64
                state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                (z ^ (z >> 31)).to_le_bytes()
            })
            .collect()
    }

    fn value_of(
        &mut self,
        root: &Value,
        property: &Value,
        path: &str,
        words: &[(&str, u32)],
    ) -> Result<Value> {
        let schema = property
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .map_or(property, |name| &root["$defs"][name]);
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            let mut object = serde_json::Map::new();
            for (key, p) in properties {
                let path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                object.insert(key.clone(), self.value_of(root, p, &path, words)?);
            }
            return Ok(Value::Object(object));
        }
        let stream = self.stream(path);
        let mut own = Unstructured::new(&stream);
        let word = match words.iter().find(|(key, _)| *key == path) {
            Some(&(_, word)) => word,
            None => own.arbitrary::<u32>()?,
        };
        let default = property.get("default");
        if let Some(values) = schema.get("oneOf").and_then(Value::as_array) {
            let mut consts: Vec<&Value> = values.iter().filter_map(|v| v.get("const")).collect();
            // The default last: word 0 (input run out) is another value.
            consts.sort_by_key(|v| Some(*v) == default);
            return Ok(consts[word as usize % consts.len()].clone());
        }
        Ok(match schema["type"].as_str() {
            Some("boolean") => {
                let default = default.and_then(Value::as_bool).unwrap_or(false);
                Value::from(default != (word % 2 == 0))
            }
            Some("integer") => {
                let min = schema["minimum"]
                    .as_u64()
                    .expect("an integer knob has a minimum");
                let max = schema["maximum"]
                    .as_u64()
                    .expect("an integer knob has a maximum");
                // Mostly near the minimum, where a pass does the most; 1 in
                // 8 anywhere in the range.
                if word % 8 == 7 {
                    json!(own.int_in_range(min..=max)?)
                } else {
                    let top = (min + 3_000).min(max);
                    json!(min + u64::from(word >> 3) % (top - min + 1))
                }
            }
            Some("array") if schema["items"]["type"] == "string" => {
                if word % 2 == 0
                    && let Some(default) = default
                {
                    default.clone()
                } else {
                    // Up to 3 patterns, 4 bits each: one of `PATTERNS`, or
                    // (the values past its end) any text.
                    let mut list = Vec::new();
                    for i in 0..(word >> 1) % 4 {
                        let pick = (word >> (3 + 4 * i)) as usize % 16;
                        list.push(match PATTERNS.get(pick) {
                            Some(pattern) => pattern.to_string(),
                            None => own.arbitrary::<String>()?,
                        });
                    }
                    json!(list)
                }
            }
            _ => panic!("a setting this fuzzer cannot vary (teach it the type): {property}"),
        })
    }

    /// A config: mostly valid with thresholds low enough that generated
    /// histories compact, the passes on or off; now and then any numbers at
    /// all (which `compress` must reject with `InvalidConfig` or handle).
    pub fn config(&mut self) -> Result<Config> {
        let mut config = Config::default();
        // The passes first, so that short inputs (which read zeros once the
        // bytes run out) still turn them on.
        if !self.one_in(4)? {
            config.settings = self.settings()?;
        }
        let c = &mut config.core;
        if self.one_in(32)? {
            c.token_threshold = self.u.arbitrary()?;
            c.target_tokens = self.u.arbitrary()?;
            c.recent_turns = self.u.arbitrary()?;
            c.keep_recent_tokens = self.u.arbitrary()?;
            c.summary_max_tokens = self.u.arbitrary()?;
        } else {
            let threshold = 1_000
                + if self.one_in(4)? {
                    self.below(8_000)?
                } else {
                    self.below(1_500)?
                };
            let target = self.u.int_in_range(65..=threshold - 1)?;
            c.token_threshold = threshold;
            c.target_tokens = target;
            // Mostly a short verbatim tail, which leaves the passes a region.
            c.keep_recent_tokens = if self.one_in(4)? {
                self.u.int_in_range(1..=target)?
            } else {
                self.u.int_in_range(1..=(target / 4).max(1))?
            };
            c.summary_max_tokens = self.u.int_in_range(64..=(target - 1).min(4_000))?;
            c.recent_turns = self.u.int_in_range(0..=12)?;
        }
        Ok(config)
    }

    pub fn summarizer(&mut self) -> Result<Summarizer> {
        Ok(if self.one_in(8)? {
            let text = self.text()?;
            let repeat = self.u.int_in_range(1..=50)?;
            Summarizer::Fixed(text.repeat(repeat))
        } else {
            Summarizer::Heuristic
        })
    }
}

fn shuffle<T>(u: &mut Unstructured, items: &mut [T]) -> Result<()> {
    for i in (1..items.len()).rev() {
        let j = u.int_in_range(0..=i)?;
        items.swap(i, j);
    }
    Ok(())
}
