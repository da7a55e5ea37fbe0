//! Key facts kept, one of the measures of the design: of what a session
//! established, how much is still in what the model sees at the end of a
//! replay. A fact is found in the recorded history without asking the
//! summarizer what it thinks matters:
//!
//! - a **request**: the opening line of each message the person wrote (not a
//!   harness's notice, tags or pasted skill);
//! - a **file**: each path a tool call named (`file_path`, `path`,
//!   `filename`, `notebook_path`);
//! - an **error**: the opening line of each tool result flagged as an error,
//!   by the format or by the harness (`<tool_use_error>`, a non-zero `Exit
//!   code` first line), its tags and the exit-status line aside.
//!
//! A fact is kept when its text (up to [`FACT_MAX_CHARS`]) occurs verbatim in
//! the final request. Decisions are not counted: what an assistant decided
//! has no definition that does not depend on a summarizer's reading of it.

use crate::TestConfig;
use crate::survival::message_text;
use condense_host::Middleware;
use condense_model::{Message, Part, Role};
use condense_replay::{ReplayStats, replay_middleware};
use std::collections::HashSet;

/// A fact's text is at most this long: the opening of a long line is enough
/// to tell it was kept.
pub const FACT_MAX_CHARS: usize = 60;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FactKind {
    Request,
    File,
    Error,
}

impl FactKind {
    pub const ALL: [FactKind; 3] = [FactKind::Request, FactKind::File, FactKind::Error];

    pub fn name(self) -> &'static str {
        match self {
            FactKind::Request => "requests",
            FactKind::File => "files",
            FactKind::Error => "errors",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fact {
    pub kind: FactKind,
    pub text: String,
}

/// The distinct facts of `history`, in order of first appearance.
pub fn key_facts(history: &[Message]) -> Vec<Fact> {
    const PATH_KEYS: [&str; 4] = ["file_path", "path", "filename", "notebook_path"];
    let mut seen = HashSet::new();
    let mut facts = Vec::new();
    let mut add = |kind, text: String| {
        let fact = Fact { kind, text };
        if !fact.text.is_empty() && seen.insert(fact.clone()) {
            facts.push(fact);
        }
    };
    for message in history {
        if message.role == Role::User && !message.has_tool_results() {
            let text = message.joined_text();
            let text = text.trim();
            let by_harness =
                text.starts_with(['<', '[']) || text.starts_with("Base directory for this skill:");
            if !by_harness && let Some(line) = text.lines().map(str::trim).find(|l| !l.is_empty()) {
                add(FactKind::Request, opening(line));
            }
        }
        for part in &message.parts {
            match part {
                Part::ToolCall(call) => {
                    let Ok(args) = serde_json::from_str::<serde_json::Value>(&call.arguments)
                    else {
                        continue;
                    };
                    for key in PATH_KEYS {
                        if let Some(path) = args[key].as_str() {
                            add(FactKind::File, path.to_owned());
                        }
                    }
                }
                Part::ToolResult(result) if result.is_error || harness_error(&result.content) => {
                    if let Some(line) = error_line(&result.content) {
                        add(FactKind::Error, opening(line));
                    }
                }
                _ => {}
            }
        }
    }
    facts
}

/// Whether a harness marked `content` as an error where the format has no
/// error flag (OpenAI's): Claude Code's `<tool_use_error>` and a non-zero
/// `Exit code` opening a command's output.
fn harness_error(content: &str) -> bool {
    let first = content.trim_start().lines().next().unwrap_or_default();
    first.starts_with("<tool_use_error>")
        || first
            .strip_prefix("Exit code ")
            .is_some_and(|code| code.trim().parse::<i64>().is_ok_and(|c| c != 0))
}

/// The first line of an error result that says what went wrong.
fn error_line(content: &str) -> Option<&str> {
    content.lines().map(|l| strip_tags(l.trim())).find(|l| {
        l.chars().any(char::is_alphabetic) && !l.to_ascii_lowercase().starts_with("exit code")
    })
}

/// `<tool_use_error>File does not exist.</tool_use_error>` → `File does not exist.`
fn strip_tags(line: &str) -> &str {
    let mut line = line;
    if line.starts_with('<')
        && let Some((_, rest)) = line.split_once('>')
    {
        line = rest;
    }
    if let Some(at) = line.rfind("</") {
        line = &line[..at];
    }
    line.trim()
}

fn opening(line: &str) -> String {
    line.chars()
        .take(FACT_MAX_CHARS)
        .collect::<String>()
        .trim_end()
        .to_owned()
}

/// Facts kept per kind: (kept, total).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recall {
    pub by_kind: [(usize, usize); 3],
}

impl Recall {
    /// Which of `facts` occur in `seen`.
    pub fn of(facts: &[Fact], seen: &str) -> Recall {
        let mut recall = Recall::default();
        for fact in facts {
            let slot = &mut recall.by_kind[fact.kind as usize];
            slot.1 += 1;
            slot.0 += usize::from(seen.contains(&fact.text));
        }
        recall
    }

    pub fn kind(&self, kind: FactKind) -> (usize, usize) {
        self.by_kind[kind as usize]
    }

    pub fn all(&self) -> (usize, usize) {
        self.by_kind
            .iter()
            .fold((0, 0), |(k, t), &(kept, total)| (k + kept, t + total))
    }

    /// `requests 12/14, files 80/95, errors 20/31, all 112/140 (80.0%)`.
    pub fn line(&self) -> String {
        let mut out: Vec<String> = FactKind::ALL
            .iter()
            .map(|&k| {
                let (kept, total) = self.kind(k);
                format!("{} {kept}/{total}", k.name())
            })
            .collect();
        let (kept, total) = self.all();
        out.push(format!(
            "all {kept}/{total} ({:.1}%)",
            100.0 * kept as f64 / total.max(1) as f64
        ));
        out.join(", ")
    }
}

/// Replays `history` through `middleware` at `config` and measures the key
/// facts of the history the last call was made for that its request kept.
pub fn replay_recall(
    middleware: &Middleware,
    config: &TestConfig,
    history: &[Message],
) -> (ReplayStats, Recall) {
    // The last call: how much history it was the request for, and what the
    // model saw instead.
    let mut last = (0, String::new());
    let stats = replay_middleware(
        middleware,
        &config.core,
        &config.json(),
        history,
        |request, sent| {
            last = (
                request.len(),
                sent.messages(request).iter().map(message_text).collect(),
            );
        },
    );
    let (len, seen) = last;
    (stats, Recall::of(&key_facts(&history[..len]), &seen))
}
