//! Identifier recall against Claude Code's own summaries: of the identifiers
//! (paths, `code` spans, numbers) that Claude Code kept when it compacted a
//! recorded session, how many does condense's summary of the same span keep,
//! within the same budget?
//!
//! # Method
//!
//! `corpus/claude-code-summaries/<session>.json` holds the summary Claude Code
//! (claude-opus-4-6) wrote when it auto-compacted the first
//! `compacted_before_message` messages of `corpus/sessions/<session>.json`.
//! For each of the three sessions:
//!
//! 1. **The span** is those messages, system messages aside (a compressor
//!    never folds them). Its text is everything a model reads of them
//!    ([`span_text`]): text, thinking, tool call names and arguments (as the
//!    JSON sent, and each string value of it decoded), tool results.
//! 2. **Claude Code's identifiers** are [`identifiers`] of its summary:
//!    the contents of `code` spans, paths and file names, and tokens that
//!    carry a digit (the rules are on the function).
//! 3. **Counted** are those of them that occur verbatim in the span, as a
//!    whole token ([`contains_value`]: `43` is not found in `1437`). What
//!    Claude Code derived (`gqc.1-3` for three task names), abbreviated
//!    (`handle_event("…", ...)`) or composed (`compile/test/credo`) is left
//!    out: an extractive summary cannot be asked to write what the session
//!    never said, and a model that rewrites freely should not be rewarded for
//!    spellings nobody can check.
//! 4. **condense's summary** of the same span is one fold by the summarizer
//!    (the embedded default, or the one the bench is given) through the host
//!    ([`condense_host::Runtime::summarize`]): no previous summary, language
//!    `en`, settings `{}`, and as `max_tokens` the tokens Claude Code's summary
//!    took by condense's own estimate ([`estimate_text`]). A summary over the
//!    budget is cut to it at a char boundary, as the compressor cuts it before
//!    it reaches a request, so what is measured is what a model would see.
//! 5. **Kept** are the counted identifiers that occur verbatim, as a whole
//!    token, in condense's summary; **recall** is kept / counted.
//!
//! # Why this is fair
//!
//! - *Same span, same budget.* Both summaries cover exactly the same
//!   messages, and condense is given as many tokens as Claude Code used
//!   (measured by the same estimator), so neither wins by writing more.
//! - *The reference chose.* What counts as worth keeping is what a frontier
//!   model kept when it had to compact this very session, not a list this
//!   harness or the summarizer's author picked.
//! - *Only what could be copied.* Identifiers missing from the span are not
//!   counted (step 3), so the figure measures selection, not imagination.
//! - *Exact strings.* A paraphrase does not count, in either direction; the
//!   rules that find identifiers are the same for every summary, and they
//!   are simple enough to check by hand (the tests do, on invented texts).
//!
//! Known leniency, stated rather than hidden: a short number (`43`) counts as
//! kept wherever it stands in condense's summary, even if there it means
//! something else. Such numbers are a minority of the counted identifiers.
//!
//! Run: `cargo bench -p condense-tests --bench identifiers` (a figure, not a
//! timing; `IDENTIFIERS_SUMMARIZER=x.wasm` measures another summarizer). The
//! tests (`tests/tests/identifiers.rs`) check the extractor's rules.

use crate::survival::{contains_value, message_text};
use crate::{corpus_dir, embedded_middleware, session};
use condense_host::Middleware;
use condense_model::tokens::estimate_text;
use condense_model::{Message, Part, Role, SummaryRequest};
use std::collections::HashSet;

/// The sessions Claude Code's own summaries are recorded for.
pub const SESSIONS: [&str; 3] = ["cc-opus-a", "cc-opus-b", "cc-opus-c"];

/// An identifier longer than this is not one: a long `code` span is a
/// sentence or a snippet, a long token a URL with a query or a JSON blob, and
/// asking for either verbatim would measure copying of prose, not of names.
pub const MAX_CHARS: usize = 80;

/// The summary Claude Code wrote when it compacted a recorded session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaudeCodeSummary {
    /// How many messages of the session (from the first) it replaced.
    pub compacted_before_message: usize,
    pub summary: String,
}

/// `corpus/claude-code-summaries/<name>.json`.
pub fn claude_code_summary(name: &str) -> ClaudeCodeSummary {
    let path = corpus_dir()
        .join("claude-code-summaries")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let compacted_before_message = json["compacted_before_message"]
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or_else(|| panic!("{}: no compacted_before_message", path.display()));
    let summary = json["summary"]
        .as_str()
        .unwrap_or_else(|| panic!("{}: no summary", path.display()))
        .to_owned();
    ClaudeCodeSummary {
        compacted_before_message,
        summary,
    }
}

// ---------------------------------------------------------------------------
// The extractor
// ---------------------------------------------------------------------------

/// The identifiers of `text`, each once, in order of first appearance:
///
/// - **`code` spans**: the trimmed contents of a span opened and closed by
///   the same number (one or two) of backticks on one line, as Markdown reads
///   them. The writer marked them as literal: a name, a command, a value.
///   Skipped: empty spans, spans over [`MAX_CHARS`], and spans that are one
///   plain lowercase word (`` `if` ``, `` `line` ``): a keyword or an
///   ordinary word turns up in any summary by chance, so finding it says
///   nothing. Runs of three or more backticks open fences, not spans; the
///   lines of a fenced block are read by the token rules below.
/// - **Tokens** (the text split at whitespace, code spans included, so a
///   path inside a command counts on its own as well), trimmed of what
///   surrounds a name in prose: opening brackets, quotes, backticks and `*`
///   in front; sentence punctuation, quotes, backticks, `*` and closing
///   brackets the token does not open (`f(x)` keeps its `)`) behind. A token
///   over [`MAX_CHARS`] is skipped. A token is kept when it is
///   - a **path**: it holds a `/` and a letter (`src/lib.rs`, `/tmp/x`,
///     `length/1`), or is a **file name** `name.ext` with a 1–5 letter
///     extension and a name of at least two letters, digits or `_-./`
///     (`Cargo.toml`, `app.js`; not `e.g`). Paths are what an agent needs
///     to find its way back to its work;
///   - **number-bearing**: it holds an ASCII digit (`43`, `v1.2`, `gqc.4`,
///     `20260211203856_add_refs.exs`, a commit hash). Counts, versions, ids
///     and line numbers are what a summary cannot reconstruct later.
///     Skipped: a single digit (`3`), too common to tell anything, and a
///     **list enumerator** (`1.`, `12)`) opening a line (after any `-`,
///     `*`, `+`, `>` or `#` markers), which numbers the summary's own
///     list, not the session's facts.
pub fn identifiers(text: &str) -> Vec<String> {
    let mut found = code_spans(text);
    found.extend(tokens(text));
    // Stable: a code span and a token at the same offset keep that order.
    found.sort_by_key(|(offset, _)| *offset);
    let mut seen = HashSet::new();
    found
        .into_iter()
        .filter_map(|(_, s)| seen.insert(s.clone()).then_some(s))
        .collect()
}

/// What kind of identifier a string is, by its form (a path first, then a
/// number; anything else came from a `code` span).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IdentifierKind {
    Path,
    Number,
    Code,
}

impl IdentifierKind {
    pub const ALL: [IdentifierKind; 3] = [
        IdentifierKind::Path,
        IdentifierKind::Number,
        IdentifierKind::Code,
    ];

    pub fn of(identifier: &str) -> IdentifierKind {
        if is_path(identifier) {
            IdentifierKind::Path
        } else if has_digit(identifier) {
            IdentifierKind::Number
        } else {
            IdentifierKind::Code
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            IdentifierKind::Path => "paths",
            IdentifierKind::Number => "numbers",
            IdentifierKind::Code => "code",
        }
    }
}

/// The lines of `text` with the byte offset each starts at.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n').scan(0, |start, line| {
        let at = *start;
        *start += line.len() + 1;
        Some((at, line))
    })
}

/// The `code` spans of `text`: (offset of the opening backtick, contents).
fn code_spans(text: &str) -> Vec<(usize, String)> {
    let mut spans = Vec::new();
    for (at, line) in lines(text) {
        let bytes = line.as_bytes();
        let run_end = |from: usize| {
            (from..bytes.len())
                .find(|&i| bytes[i] != b'`')
                .unwrap_or(bytes.len())
        };
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'`' {
                i += 1;
                continue;
            }
            let open_end = run_end(i);
            let width = open_end - i;
            if width >= 3 {
                // A fence (or its closing line): no span.
                i = open_end;
                continue;
            }
            // The next run of exactly `width` backticks closes the span.
            let mut close = None;
            let mut j = open_end;
            while j < bytes.len() {
                if bytes[j] == b'`' {
                    let end = run_end(j);
                    if end - j == width {
                        close = Some((j, end));
                        break;
                    }
                    j = end;
                } else {
                    j += 1;
                }
            }
            let Some((close_start, close_end)) = close else {
                // Unclosed: a literal backtick.
                i = open_end;
                continue;
            };
            let contents = line[open_end..close_start].trim();
            if !contents.is_empty()
                && contents.chars().count() <= MAX_CHARS
                && !is_plain_word(contents)
            {
                spans.push((at + i, contents.to_owned()));
            }
            i = close_end;
        }
    }
    spans
}

/// One lowercase ASCII word, nothing else: `when`, `line`.
fn is_plain_word(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_lowercase())
}

/// The path and number-bearing tokens of `text`: (offset, trimmed token).
fn tokens(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (at, line) in lines(text) {
        let mut opening = true;
        for raw in line.split_whitespace() {
            let offset = at + (raw.as_ptr() as usize - line.as_ptr() as usize);
            if opening && raw.bytes().all(|b| b"-*+>#".contains(&b)) {
                // List and quote markers: the next token still opens the line.
                continue;
            }
            let first = std::mem::replace(&mut opening, false);
            if first && is_enumerator(raw) {
                continue;
            }
            let token = trim_token(raw);
            if token.is_empty() || token.chars().count() > MAX_CHARS {
                continue;
            }
            let single_digit = token.len() == 1 && has_digit(token);
            if is_path(token) || (has_digit(token) && !single_digit) {
                out.push((offset, token.to_owned()));
            }
        }
    }
    out
}

/// `1.`, `12)`: digits and one `.` or `)`.
fn is_enumerator(token: &str) -> bool {
    let digits = token.trim_end_matches(['.', ')']);
    token.len() == digits.len() + 1
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `token` without the prose around it (see [`identifiers`]).
fn trim_token(token: &str) -> &str {
    const LEADING: [char; 8] = ['(', '[', '{', '<', '"', '\'', '`', '*'];
    const TRAILING: [char; 10] = ['.', ',', ';', ':', '!', '?', '"', '\'', '`', '*'];
    const CLOSERS: [(char, char); 4] = [(')', '('), (']', '['), ('}', '{'), ('>', '<')];
    let mut token = token;
    loop {
        let before = token.len();
        token = token.trim_start_matches(LEADING);
        while let Some(last) = token.chars().next_back() {
            let unopened = CLOSERS.iter().any(|&(close, open)| {
                last == close && token.matches(close).count() > token.matches(open).count()
            });
            if TRAILING.contains(&last) || unopened {
                token = &token[..token.len() - last.len_utf8()];
            } else {
                break;
            }
        }
        if token.len() == before {
            return token;
        }
    }
}

fn has_digit(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit())
}

/// A `/` with a letter, or `name.ext` (see [`identifiers`]).
fn is_path(token: &str) -> bool {
    if token.contains('/') && token.chars().any(char::is_alphabetic) {
        return true;
    }
    let Some((name, ext)) = token.rsplit_once('.') else {
        return false;
    };
    (1..=5).contains(&ext.len())
        && ext.bytes().all(|b| b.is_ascii_alphabetic())
        && name.chars().count() >= 2
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
}

// ---------------------------------------------------------------------------
// The measure
// ---------------------------------------------------------------------------

/// The text a model reads of `messages`, system messages aside:
/// [`message_text`] of each, and the string values of each tool call's
/// arguments decoded (the JSON escapes `"` and line breaks, which the
/// arguments' author did not write).
pub fn span_text(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages.iter().filter(|m| m.role != Role::System) {
        out.push_str(&message_text(message));
        for part in &message.parts {
            if let Part::ToolCall(call) = part
                && let Ok(args) = serde_json::from_str::<serde_json::Value>(&call.arguments)
            {
                push_strings(&args, &mut out);
            }
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
        _ => {}
    }
}

/// Identifier recall on one session (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdentifierRecall {
    pub session: String,
    /// Claude Code's identifiers that occur verbatim in the span.
    pub counted: usize,
    /// Of those, the ones condense's summary holds.
    pub kept: usize,
    /// The counted identifiers condense's summary lacks, in the order
    /// Claude Code's summary names them.
    pub missing: Vec<String>,
    pub claude_chars: usize,
    /// condense's summary, cut to the budget if it ran over.
    pub condense_chars: usize,
    /// Claude Code's summary's tokens ([`estimate_text`]): condense's budget.
    pub budget_tokens: u32,
    pub condense_tokens: u32,
    /// condense's summary as measured (cut to the budget).
    pub summary: String,
}

impl IdentifierRecall {
    /// kept / counted (1 when nothing is counted).
    pub fn recall(&self) -> f64 {
        if self.counted == 0 {
            1.0
        } else {
            self.kept as f64 / self.counted as f64
        }
    }

    /// How many of the missing identifiers are of `kind`.
    pub fn missing_of(&self, kind: IdentifierKind) -> usize {
        self.missing
            .iter()
            .filter(|m| IdentifierKind::of(m) == kind)
            .count()
    }
}

/// [`identifier_recall_with`] the embedded summarizer.
pub fn identifier_recall(name: &str) -> IdentifierRecall {
    identifier_recall_with(embedded_middleware(), name)
}

/// Identifier recall on session `name` (one of [`SESSIONS`]), condense's
/// summary written by `middleware`'s summarizer.
pub fn identifier_recall_with(middleware: &Middleware, name: &str) -> IdentifierRecall {
    let reference = claude_code_summary(name);
    let history = session(name);
    assert!(
        reference.compacted_before_message <= history.len(),
        "{name}: Claude Code compacted {} messages of {}",
        reference.compacted_before_message,
        history.len()
    );
    let span: Vec<Message> = history[..reference.compacted_before_message]
        .iter()
        .filter(|m| m.role != Role::System)
        .cloned()
        .collect();
    let text = span_text(&span);
    let counted: Vec<String> = identifiers(&reference.summary)
        .into_iter()
        .filter(|id| contains_value(&text, id))
        .collect();

    let budget_tokens = estimate_text(&reference.summary);
    let request = SummaryRequest {
        previous_summary: String::new(),
        messages: span,
        max_tokens: budget_tokens,
        language: "en".into(),
        settings: "{}".into(),
    };
    let runtime = middleware.runtime();
    let summary = runtime
        .summarize(&request)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .unwrap_or_else(|e| panic!("{name}: {} refused: {e}", runtime.summarizer()));
    let summary = condense_compressor::clamp_to_tokens(summary, budget_tokens);

    let missing: Vec<String> = counted
        .iter()
        .filter(|id| !contains_value(&summary, id))
        .cloned()
        .collect();
    IdentifierRecall {
        session: name.to_owned(),
        counted: counted.len(),
        kept: counted.len() - missing.len(),
        missing,
        claude_chars: reference.summary.chars().count(),
        condense_chars: summary.chars().count(),
        budget_tokens,
        condense_tokens: estimate_text(&summary),
        summary,
    }
}
