//! Probe recall (`condense replay --probes`): of what a whole session said
//! that an agent may need again, how much does the last request of the
//! replay still name?
//!
//! # The probes
//!
//! [`probes`] draws them from the durable history alone (the messages of the
//! session, never anything the compressor wrote), up to the last model call
//! (the request before the last assistant message), each of a [`ProbeKind`]:
//!
//! - **files**: every file or directory a tool call's arguments name (a
//!   `file_path`, `path`, `filename`, `file_name` or `notebook_path` string,
//!   globs aside), as `parent/name`, its last two components;
//! - **requests**: the opening of every user request (its first line's first
//!   [`REQUEST_WORDS`] words), but a harness's own messages
//!   ([`HARNESS_PREFIXES`]: the echo of a local command such as
//!   `<command-name>/compact` and its `<local-command-stdout>`, a background
//!   task's notice, an interruption marker, a skill's expansion);
//! - **errors**: every error line a tool returned: a failed result's
//!   (`<tool_use_error>`, `Exit code N`, or flagged an error) first line that
//!   reports an error, else its first line, and any
//!   line that reports one (`error:`, `error[E…]`, an exception's name, a
//!   traceback, a panic, `FAILED`, `failed:`, `2 failures`, a denial, a
//!   missing file or command), but lines of a file's contents (`  12→…`,
//!   `path:12:…`) and lines the call itself sent (an edit's text quoted back
//!   in its error);
//! - **commands**: every distinct shell command run (the first line of a
//!   `command`/`cmd` argument, without what only trims its output: `2>&1`,
//!   `2>/dev/null`, a last `| head`/`| tail` of a count);
//! - **outcomes**: each command's last outcome: of its last run, the failed
//!   result's first line, else the output's last non-empty line;
//! - **values**: tokens a tool result was the first to give (carrying a
//!   digit, or `key=value`: versions, hosts, ids, counts, settings; at least
//!   four characters, three with a letter), paths aside, that a later message
//!   of the user or the model used again (a file's contents aside, as read
//!   with line numbers).
//!
//! Lines and openings are cut to [`MAX_CHARS`] at a word boundary.
//!
//! # The measure
//!
//! A probe is **named** by a request when its text occurs in the request's
//! text (every part of every message: text, thinking, tool calls with their
//! arguments as sent and decoded, tool results, the summary), any case,
//! whitespace runs read as one space, and not inside a longer word or number.
//! A command is also named by any form it was run in (`mix test 2>&1 | tail
//! -20` names `mix test`). It is **recallable** when it is named, or one of
//! the messages it was drawn from is covered by a recall handle the request
//! names (the model can read it back with `condense_recall`). The headline is named: recall costs the
//! model a call, and it has to know what to ask for.
//!
//! On the uncompressed request every probe is named (a test holds that), so
//! whatever is lost, compression lost.

use condense_model::recall::{Handle, Span};
use condense_model::{Message, Part, Role};
use serde::Serialize;
use std::collections::HashMap;

/// A request's opening: at most this many words of its first line.
pub const REQUEST_WORDS: usize = 8;

/// Error lines, outcomes, commands and openings are cut to this many
/// characters (at a word boundary).
pub const MAX_CHARS: usize = 100;

/// The longest value token: a longer one is a blob, not a value.
pub const MAX_VALUE_CHARS: usize = 60;

/// User messages that are the harness's, not a request: they start with one
/// of these.
pub const HARNESS_PREFIXES: [&str; 9] = [
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<task-notification>",
    "[Request interrupted by user",
    "Base directory for this skill:",
];

/// What a probe stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProbeKind {
    File,
    Request,
    Error,
    Command,
    Outcome,
    Value,
}

impl ProbeKind {
    pub const ALL: [ProbeKind; 6] = [
        ProbeKind::File,
        ProbeKind::Request,
        ProbeKind::Error,
        ProbeKind::Command,
        ProbeKind::Outcome,
        ProbeKind::Value,
    ];

    /// The kind's name in the table and the JSON (plural).
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::File => "files",
            ProbeKind::Request => "requests",
            ProbeKind::Error => "errors",
            ProbeKind::Command => "commands",
            ProbeKind::Outcome => "outcomes",
            ProbeKind::Value => "values",
        }
    }
}

/// One thing the session said that a request may still name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Probe {
    pub kind: ProbeKind,
    /// What is looked for: lowercase, whitespace runs as one space.
    pub text: String,
    /// The messages (indices into the history) it was drawn from.
    #[serde(skip)]
    pub at: Vec<usize>,
    /// Other texts that name it as well (a command as it was run, when the
    /// probe is what it runs), normalized alike.
    #[serde(skip)]
    pub forms: Vec<String>,
}

/// The probes of `history` (see the module doc), each `(kind, text)` once,
/// in order of first appearance within each kind, kinds in
/// [`ProbeKind::ALL`] order.
pub fn probes(history: &[Message]) -> Vec<Probe> {
    let mut found = Found::default();
    let results = results_by_call(history);
    let mut command_runs: Vec<(String, usize, Option<String>)> = Vec::new();
    // Each call's argument strings, normalized, by its id.
    let mut sent: HashMap<&str, String> = HashMap::new();
    for (i, message) in history.iter().enumerate() {
        if message.role == Role::User {
            let text: Vec<&str> = message
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            if let Some(opening) = request_opening(&text.join("\n")) {
                found.add(ProbeKind::Request, opening, i);
            }
        }
        for part in &message.parts {
            match part {
                Part::ToolCall(call) => {
                    let Ok(args) = serde_json::from_str::<serde_json::Value>(&call.arguments)
                    else {
                        continue;
                    };
                    let mut text = String::new();
                    push_strings(&args, &mut text);
                    sent.insert(call.id.as_str(), normalize(&text));
                    for file in named_files(&args) {
                        found.add(ProbeKind::File, file, i);
                    }
                    if let Some((command, as_run)) = command_of(&args) {
                        found.add(ProbeKind::Command, command.clone(), i);
                        found.also(ProbeKind::Command, &command, as_run);
                        command_runs.push((command, i, Some(call.id.clone())));
                    }
                }
                Part::ToolResult(result) => {
                    // A line the call itself sent (an edit's text quoted
                    // back in its error) is the agent's, not the tool's.
                    let quoted = |line: &str| {
                        sent.get(result.call_id.as_str())
                            .is_some_and(|args| args.contains(&normalize(line)))
                    };
                    for line in error_lines(&result.content, result.is_error) {
                        if !quoted(&line) {
                            found.add(ProbeKind::Error, line, i);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    // Each command's last run, and what its result said.
    let mut last_run: HashMap<String, (usize, Option<String>)> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for (command, i, id) in command_runs {
        if !last_run.contains_key(&command) {
            order.push(command.clone());
        }
        last_run.insert(command, (i, id));
    }
    for command in order {
        let (_, id) = &last_run[&command];
        let Some((at, result)) = id.as_deref().and_then(|id| results.get(id)) else {
            continue;
        };
        if let Some(outcome) = outcome_of(&result.content, result.is_error) {
            found.add(ProbeKind::Outcome, outcome, *at);
        }
    }
    for (value, at) in tool_values(history) {
        found.add(ProbeKind::Value, value, at);
    }
    let mut probes = found.probes;
    // Stable: within a kind, first appearance first.
    probes.sort_by_key(|p| p.kind);
    probes
}

/// Probes, each (kind, text) once.
#[derive(Default)]
struct Found {
    probes: Vec<Probe>,
    index: HashMap<(ProbeKind, String), usize>,
}

impl Found {
    fn add(&mut self, kind: ProbeKind, text: String, at: usize) {
        let text = normalize(&text);
        if text.is_empty() {
            return;
        }
        match self.index.get(&(kind, text.clone())) {
            Some(&n) => {
                let probe = &mut self.probes[n];
                if !probe.at.contains(&at) {
                    probe.at.push(at);
                }
            }
            None => {
                self.index.insert((kind, text.clone()), self.probes.len());
                self.probes.push(Probe {
                    kind,
                    text,
                    at: vec![at],
                    forms: Vec::new(),
                });
            }
        }
    }
    /// `form` names the probe `(kind, text)` (added before) as well.
    fn also(&mut self, kind: ProbeKind, text: &str, form: String) {
        let (text, form) = (normalize(text), normalize(&form));
        if let Some(&n) = self.index.get(&(kind, text.clone()))
            && form != text
            && !self.probes[n].forms.contains(&form)
        {
            self.probes[n].forms.push(form);
        }
    }
}

/// Each tool result by its call's id, with the index of its message.
fn results_by_call(history: &[Message]) -> HashMap<&str, (usize, &condense_model::ToolResult)> {
    let mut results = HashMap::new();
    for (i, message) in history.iter().enumerate() {
        for result in message.tool_results() {
            results.insert(result.call_id.as_str(), (i, result));
        }
    }
    results
}

/// Lowercase, whitespace runs as one space, trimmed.
pub fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// `text` cut to [`MAX_CHARS`] at a word boundary (whitespace normalized).
fn cut(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = String::new();
    for word in words {
        let more = usize::from(!out.is_empty()) + word.chars().count();
        if out.chars().count() + more > MAX_CHARS {
            if out.is_empty() {
                // One long word: its first characters.
                out = word.chars().take(MAX_CHARS).collect();
            }
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// The opening of a user request, `None` for a harness's message or one
/// without text.
pub fn request_opening(text: &str) -> Option<String> {
    let mut text = text.trim_start();
    // A reminder the harness put in front of the request is not its opening.
    while let Some(rest) = text.strip_prefix("<system-reminder>") {
        text = rest
            .split_once("</system-reminder>")
            .map_or("", |(_, after)| after)
            .trim_start();
    }
    if HARNESS_PREFIXES.iter().any(|p| text.starts_with(p)) {
        return None;
    }
    let line = text.lines().find(|l| !l.trim().is_empty())?;
    let words: Vec<&str> = line.split_whitespace().take(REQUEST_WORDS).collect();
    Some(cut(&words.join(" "))).filter(|s| !s.is_empty())
}

/// The files a tool call's arguments name, as `parent/name`.
fn named_files(args: &serde_json::Value) -> Vec<String> {
    const KEYS: [&str; 5] = [
        "file_path",
        "path",
        "filename",
        "file_name",
        "notebook_path",
    ];
    let Some(map) = args.as_object() else {
        return Vec::new();
    };
    KEYS.iter()
        .filter_map(|k| map.get(*k)?.as_str())
        .filter_map(parent_and_name)
        .collect()
}

/// `a/b/c/d.rs` → `c/d.rs`; `d.rs` → `d.rs`; globs and empty paths → `None`.
pub fn parent_and_name(path: &str) -> Option<String> {
    let path = path.trim().trim_end_matches('/');
    if path.is_empty() || path.contains(['*', '?', '{', '\n']) {
        return None;
    }
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        [] => None,
        [name] => Some((*name).to_owned()),
        [.., parent, name] => Some(format!("{parent}/{name}")),
    }
}

/// The shell command a tool call runs: its `command` or `cmd` argument's
/// first line, without what only trims its output, and as it was run.
fn command_of(args: &serde_json::Value) -> Option<(String, String)> {
    let map = args.as_object()?;
    let command = match map.get("command").or_else(|| map.get("cmd"))? {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => items
            .iter()
            .filter_map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => return None,
    };
    let line = command.lines().find(|l| !l.trim().is_empty())?;
    Some((cut(&what_it_runs(line)), cut(line))).filter(|(s, _)| !s.is_empty())
}

/// A command line without what only trims the output the agent saw —
/// `2>&1`, `2>/dev/null`, a last `| head …`/`| tail …` of counts: `mix test
/// 2>&1 | tail -20` and `mix test` run the same thing, and a summary that
/// names the command names it either way.
fn what_it_runs(line: &str) -> String {
    let mut text = line.replace(" 2>&1", "").replace(" 2>/dev/null", "");
    while let Some((before, pipe)) = text.rsplit_once('|') {
        let mut words = pipe.split_whitespace();
        let trims = matches!(words.next(), Some("head" | "tail"))
            && words.all(|w| w == "-n" || w.trim_start_matches('-').parse::<u32>().is_ok());
        if !trims || before.ends_with('|') || before.trim().is_empty() {
            break;
        }
        text = before.trim_end().to_owned();
    }
    text
}

/// A failed result's lines after its marker (`<tool_use_error>`, `Exit code
/// N`), or `None` when it did not fail.
fn failure(content: &str, is_error: bool) -> Option<Vec<&str>> {
    let mut lines = content.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.clone().next()?;
    if let Some(rest) = first.strip_prefix("<tool_use_error>") {
        let rest = rest.trim_end_matches("</tool_use_error>").trim();
        lines.next();
        let mut out: Vec<&str> = Vec::new();
        if !rest.is_empty() {
            out.push(rest);
        }
        out.extend(lines);
        return Some(out);
    }
    if let Some(code) = first.strip_prefix("Exit code ") {
        if code.trim() == "0" {
            return None;
        }
        lines.next();
        return Some(lines.collect());
    }
    is_error.then(|| lines.collect())
}

/// The error lines of one tool result (see the module doc).
pub fn error_lines(content: &str, is_error: bool) -> Vec<String> {
    let mut out = Vec::new();
    // A failed result's error line: the first that reports one, else its
    // first line.
    if let Some(lines) = failure(content, is_error) {
        let line = lines
            .iter()
            .find(|l| !is_content_line(l) && is_error_line(l))
            .or(lines.first());
        if let Some(line) = line {
            out.push(cut(line.trim_end_matches("</tool_use_error>")));
        }
    }
    for line in content.lines() {
        let line = line.trim();
        let line = line
            .trim_start_matches("<tool_use_error>")
            .trim_end_matches("</tool_use_error>");
        if line.chars().count() >= 8 && is_error_line(line) {
            let line = cut(line);
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out.retain(|l| l.chars().count() >= 3);
    out
}

/// A line that reports an error, not a line of a file's contents or prose
/// about errors: it holds (any case) `error:`, `error[`, an exception's name
/// (`…Error)`, `…Exception:`), a traceback, a panic, `FAILED`, `failed:`,
/// `failed with`, a count above zero of failures or errors (`2 failures`),
/// a denial, a missing file or command, or `fatal:`.
fn is_error_line(line: &str) -> bool {
    const MARKERS: [&str; 14] = [
        "error:",
        "error[",
        "error)",
        "exception)",
        "exception:",
        "traceback (most recent call last)",
        "panicked at",
        "failed:",
        "failed with",
        "permission denied",
        "no such file or directory",
        "command not found",
        "fatal:",
        "could not compile",
    ];
    const COUNTED: [&str; 5] = [
        " failure",
        " failed",
        " error",
        " test failed",
        " tests failed",
    ];
    if is_content_line(line) {
        return false;
    }
    if line.contains("FAILED") {
        return true;
    }
    let lower = line.to_lowercase();
    if MARKERS.iter().any(|m| lower.contains(m)) {
        return true;
    }
    // `2 failures`, `1 error`: a count, not `0`.
    COUNTED.iter().any(|c| {
        lower.match_indices(c).any(|(at, _)| {
            let digits: String = lower[..at]
                .chars()
                .rev()
                .take_while(char::is_ascii_digit)
                .collect();
            !digits.is_empty() && digits.chars().any(|d| d != '0')
        })
    })
}

/// `  12→…`, `12\t…` or `12: …` (a file read with line numbers), `path:12:…` or
/// `path: …` (a search's match), but a compiler's `path:12:3: error: …`.
fn is_content_line(line: &str) -> bool {
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    let rest = &line[digits..];
    if digits > 0 && (rest.starts_with(['→', '\t']) || rest.starts_with(": ")) {
        return true;
    }
    let Some((path, rest)) = line.split_once(':') else {
        return false;
    };
    if path.is_empty() || path.contains(' ') || !(path.contains('/') || path.contains('.')) {
        return false;
    }
    // What follows the line (and column) numbers.
    let after = rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == ':' || c == '-');
    let after = after.trim_start().to_lowercase();
    !(after.starts_with("error") || after.starts_with("fatal"))
        && (rest.starts_with(' ') || rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// A command's outcome: a failed result's first line, else the last
/// non-empty line of its output.
fn outcome_of(content: &str, is_error: bool) -> Option<String> {
    let line = match failure(content, is_error) {
        Some(lines) => lines.first().copied(),
        None => content.lines().map(str::trim).rfind(|l| !l.is_empty()),
    }?;
    Some(cut(line)).filter(|s| s.chars().count() >= 3)
}

/// The value tokens of `text`, lowercase: trimmed of the prose around them,
/// carrying a digit (at least three characters) or `key=value`, no `/`.
fn value_tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split_whitespace().filter_map(|raw| {
        let token = raw.trim_matches(|c: char| {
            matches!(
                c,
                '(' | ')'
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '<'
                    | '>'
                    | '"'
                    | '\''
                    | '`'
                    | '*'
                    | ','
                    | ';'
                    | ':'
                    | '.'
                    | '!'
                    | '?'
            )
        });
        let chars = token.chars().count();
        // Three characters only with a letter (`v12`): `1.4` is anywhere.
        let least = if token.chars().any(char::is_alphabetic) {
            3
        } else {
            4
        };
        // Code, not a value: quotes, brackets, shell syntax inside.
        const CODE: [char; 18] = [
            '/', '→', '\\', '<', '>', '$', '"', '\'', '`', '(', ')', '{', '}', '[', ']', '|', '&',
            '^',
        ];
        if !(least..=MAX_VALUE_CHARS).contains(&chars) || token.contains(CODE) {
            return None;
        }
        let key_value = token
            .split_once('=')
            .is_some_and(|(k, v)| !k.is_empty() && !v.is_empty() && k.chars().all(is_word));
        let digit = token.bytes().any(|b| b.is_ascii_digit());
        (digit || key_value).then(|| token.to_lowercase())
    })
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-' || c == '.'
}

/// The text of a message's tool call arguments, each string value decoded.
fn decoded_arguments(message: &Message) -> String {
    let mut out = String::new();
    for call in message.tool_calls() {
        out.push_str(&call.name);
        out.push('\n');
        match serde_json::from_str::<serde_json::Value>(&call.arguments) {
            Ok(args) => push_strings(&args, &mut out),
            Err(_) => out.push_str(&call.arguments),
        }
    }
    out
}

fn push_strings(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| push_strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| push_strings(v, out)),
        other => {
            out.push_str(&other.to_string());
            out.push('\n');
        }
    }
}

/// What the user or the model wrote in `message` (no tool results).
fn written_text(message: &Message) -> String {
    let mut out = String::new();
    for part in &message.parts {
        match part {
            Part::Text(t) => out.push_str(t),
            Part::Thinking(t) => out.push_str(&t.text),
            _ => continue,
        }
        out.push('\n');
    }
    out.push_str(&decoded_arguments(message));
    out
}

/// Values a tool result gave first that a later message used: (value,
/// index of the result's message).
fn tool_values(history: &[Message]) -> Vec<(String, usize)> {
    let mut first_seen: HashMap<String, usize> = HashMap::new();
    let mut last_used: HashMap<String, usize> = HashMap::new();
    let mut from_results: Vec<(String, usize)> = Vec::new();
    for (i, message) in history.iter().enumerate() {
        let written = written_text(message);
        for token in value_tokens(&written) {
            first_seen.entry(token.clone()).or_insert(i);
            last_used.insert(token, i);
        }
        for result in message.tool_results() {
            let output: String = result
                .content
                .lines()
                .filter(|l| !is_content_line(l.trim()))
                .collect::<Vec<_>>()
                .join("\n");
            for token in value_tokens(&output) {
                if !first_seen.contains_key(&token) {
                    first_seen.insert(token.clone(), i);
                    from_results.push((token, i));
                }
            }
        }
    }
    from_results
        .into_iter()
        .filter(|(token, i)| last_used.get(token).is_some_and(|&used| used > *i))
        .collect()
}

/// The text a model reads of a request, normalized (see [`normalize`]).
pub fn request_text(request: &[Message]) -> String {
    let mut out = String::new();
    for message in request {
        for part in &message.parts {
            match part {
                Part::Text(t) | Part::Opaque(t) => out.push_str(t),
                Part::Thinking(t) => out.push_str(&t.text),
                Part::ToolCall(c) => {
                    out.push_str(&c.name);
                    out.push(' ');
                    out.push_str(&c.arguments);
                }
                Part::ToolResult(r) => out.push_str(&r.content),
            }
            out.push('\n');
        }
        out.push_str(&decoded_arguments(message));
    }
    normalize(&out)
}

/// `needle` occurs in `haystack` (both normalized), not inside a longer word
/// or number.
pub fn names(haystack: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let starts = alnum(needle.chars().next());
    let ends = alnum(needle.chars().next_back());
    haystack.match_indices(needle).any(|(at, _)| {
        (!starts || !alnum(haystack[..at].chars().next_back()))
            && (!ends || !alnum(haystack[at + needle.len()..].chars().next()))
    })
}

/// How many probes of one kind a request names.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KindRecall {
    pub kind: Option<ProbeKind>,
    pub probes: usize,
    /// Named verbatim (any case) by the request.
    pub named: usize,
    /// Named, or drawn from a message a recall handle the request names
    /// covers.
    pub recallable: usize,
}

impl KindRecall {
    /// named / probes (1 when there are none).
    pub fn share(&self) -> f64 {
        if self.probes == 0 {
            1.0
        } else {
            self.named as f64 / self.probes as f64
        }
    }
}

/// What a request keeps of a session's probes.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ProbeRecall {
    /// One row per kind, in [`ProbeKind::ALL`] order.
    pub kinds: Vec<KindRecall>,
    /// Every kind together (`kind` is `None`).
    pub total: KindRecall,
    /// The probes the request does not name.
    pub missing: Vec<Probe>,
}

impl ProbeRecall {
    pub fn of(&self, kind: ProbeKind) -> &KindRecall {
        self.kinds
            .iter()
            .find(|k| k.kind == Some(kind))
            .expect("every kind has a row")
    }
}

/// What `request` (the messages sent), naming `handles`, keeps of `probes`.
pub fn measure(probes: &[Probe], request: &[Message], handles: &[Handle]) -> ProbeRecall {
    let text = request_text(request);
    let covered = |at: usize| {
        handles.iter().any(|h| match h.span {
            Span::Fold { end } => at < end,
            Span::Message(i) => at == i,
        })
    };
    let mut kinds: Vec<KindRecall> = ProbeKind::ALL
        .iter()
        .map(|&k| KindRecall {
            kind: Some(k),
            ..KindRecall::default()
        })
        .collect();
    let mut total = KindRecall::default();
    let mut missing = Vec::new();
    for probe in probes {
        let named = std::iter::once(&probe.text)
            .chain(&probe.forms)
            .any(|form| names(&text, form));
        let recallable = named || probe.at.iter().any(|&at| covered(at));
        let row = kinds
            .iter_mut()
            .find(|k| k.kind == Some(probe.kind))
            .expect("every kind has a row");
        for r in [row, &mut total] {
            r.probes += 1;
            r.named += usize::from(named);
            r.recallable += usize::from(recallable);
        }
        if !named {
            missing.push(probe.clone());
        }
    }
    ProbeRecall {
        kinds,
        total,
        missing,
    }
}

/// The messages probes are drawn from: everything before the last model
/// call's answer (the whole request that call was given).
pub fn probed_history(history: &[Message]) -> &[Message] {
    let end = condense_replay::call_ends(history)
        .last()
        .copied()
        .unwrap_or(0);
    &history[..end]
}
