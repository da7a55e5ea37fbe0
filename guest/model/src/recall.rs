//! Handles for what a compaction took out of the request, and finding it
//! again: nothing folded is lost while the host holds the history (the
//! runtime's journal; in the proxy, the very request the client sent).
//!
//! A handle is derived from the messages it covers, so whoever computes it
//! (the compressor, the runtime, any proxy) gets the same one, and it is
//! byte-stable between compactions. Resolving one needs nothing but the
//! history that carries it: a handle no prefix and no message of that
//! history hashes to is unknown, whichever session made it, so no session
//! can read another's history by naming a handle.
//!
//! - a fold's handle, `f` and 11 hex digits, covers the history before the
//!   fold's boundary ([`fold_handle`]);
//! - a cleared or cut tool result's, `r` and 11 hex digits, covers the
//!   message that carried it ([`result_handle`]).

use crate::hash::{link, message_digest, prefix_hash};
use crate::tokens::estimate_text;
use crate::{Message, Part, Role};

/// Hex digits after a handle's kind letter: 44 bits, so that two spans of
/// one history sharing a handle is a one-in-ten-trillions accident.
const HEX_DIGITS: usize = 11;

/// The longest `query` taken, in characters: a query narrows a recall, it
/// does not carry text.
pub const MAX_QUERY_CHARS: usize = 1_000;

/// The tool's name, as the model calls it.
pub const TOOL_NAME: &str = "condense_recall";

/// What the tool is for, as its definition tells the model.
pub const TOOL_DESCRIPTION: &str = "Read back the original messages condense folded into the \
    summary, or a tool result it cleared, by the handle the summary or the placeholder names. Use \
    it when you need an exact file, command, output or value the summary does not spell out.";

/// The JSON Schema of the tool's input.
pub const TOOL_INPUT_SCHEMA: &str = r#"{"type":"object","properties":{"handle":{"type":"string","description":"The handle the summary or a placeholder names, e.g. f3a91c0b2d4e"},"query":{"type":"string","description":"Only the lines holding all these words (any case); leave it out for everything"}},"required":["handle"],"additionalProperties":false}"#;

/// A handle a request names, and what it covers there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handle {
    pub id: String,
    pub span: Span,
}

/// The line a summary ends with when the model can recall: how many
/// messages it folds and the handle that reads them back.
pub fn fold_note(handle: &str, folded: usize) -> String {
    format!(
        "[condense: messages 1–{folded} are folded into this summary; \
         {TOOL_NAME}(handle=\"{handle}\") reads them back, a query narrows it]"
    )
}

/// The fold note condense's estimate counts most tokens for, up to
/// `folded` messages: what a bound on a summary pair's size must count. A
/// hash can come out as a handle whose hex alternates letter and digit,
/// which the estimate splits into a token a character (`ffffffffffff` is
/// two tokens, `f1a1a1a1a1a1` twelve).
pub fn costliest_fold_note(folded: usize) -> String {
    let alternating: String = (0..HEX_DIGITS)
        .map(|i| if i % 2 == 0 { '1' } else { 'a' })
        .collect();
    fold_note(&format!("f{alternating}"), folded)
}

/// Whether `text` is a fold's note ([`fold_note`]), for a reader of a
/// summary condense wrote.
pub fn is_fold_note(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("[condense: messages 1–") else {
        return false;
    };
    let Some((count, rest)) = rest.split_once(' ') else {
        return false;
    };
    let handle = rest
        .split_once("handle=\"")
        .and_then(|(_, h)| h.get(..1 + HEX_DIGITS))
        .unwrap_or_default();
    count
        .parse::<usize>()
        .is_ok_and(|n| fold_note(handle, n) == text)
}

/// What a cleared or cut result's placeholder adds when the model can
/// recall.
pub fn result_note(handle: &str) -> String {
    format!("; {TOOL_NAME}(handle=\"{handle}\") reads it back")
}

/// The handle of a fold of `folded`, the history before its boundary.
pub fn fold_handle(folded: &[Message]) -> String {
    fold_handle_of(prefix_hash(folded))
}

/// The handle of a fold whose folded history has `prefix_hash`
/// ([`crate::hash::prefix_hash`]: the hash a host keeps beside each
/// checkpoint), for a host that no longer holds the messages.
pub fn fold_handle_of(prefix_hash: u128) -> String {
    handle('f', prefix_hash)
}

/// The handle of `message`, one whose tool result was cleared or cut.
pub fn result_handle(message: &Message) -> String {
    handle('r', message_digest(message))
}

fn handle(kind: char, hash: u128) -> String {
    let hex = format!("{hash:032x}");
    format!("{kind}{}", &hex[..HEX_DIGITS])
}

/// What a handle covers in a history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    /// The messages before index `end`: a fold.
    Fold { end: usize },
    /// The message at this index: a cleared or cut result.
    Message(usize),
}

/// Why a recall gives nothing back: said to the model as a tool error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecallError {
    /// Not a condense handle at all.
    Malformed(String),
    /// A handle nothing in this session's history has.
    Unknown(String),
    /// A `query` over [`MAX_QUERY_CHARS`].
    QueryTooLong(usize),
}

impl std::fmt::Display for RecallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecallError::Malformed(h) => write!(
                f,
                "`{h}` is not a condense handle: a handle is `f` or `r` and {HEX_DIGITS} hex \
                 digits, as the summary or a placeholder names it"
            ),
            RecallError::Unknown(h) => write!(
                f,
                "no folded messages and no cleared result of this conversation have the handle \
                 `{h}`: use one the summary or a placeholder of this conversation names"
            ),
            RecallError::QueryTooLong(n) => write!(
                f,
                "a query of {n} characters: at most {MAX_QUERY_CHARS}; a query is a few words \
                 to look for"
            ),
        }
    }
}

impl std::error::Error for RecallError {}

/// What `handle` covers in `history`.
pub fn find(history: &[Message], handle: &str) -> Result<Span, RecallError> {
    let malformed = || RecallError::Malformed(handle.chars().take(40).collect());
    let mut chars = handle.chars();
    let kind = chars.next().ok_or_else(malformed)?;
    let hex = chars.as_str();
    let well_formed = hex.len() == HEX_DIGITS
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !well_formed {
        return Err(malformed());
    }
    let digests = history.iter().map(message_digest);
    let found = match kind {
        // The hash of every prefix in one pass: the chain continues.
        'f' => digests
            .scan(0u128, |hash, digest| {
                *hash = link(*hash, digest);
                Some(*hash)
            })
            .position(|hash| self::handle('f', hash) == handle)
            .map(|at| Span::Fold { end: at + 1 }),
        'r' => digests
            .map(|digest| self::handle('r', digest))
            .position(|h| h == handle)
            .map(Span::Message),
        _ => return Err(malformed()),
    };
    found.ok_or_else(|| RecallError::Unknown(handle.to_owned()))
}

/// What a recall gives the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recalled {
    /// The original messages (or only their lines matching the query), a
    /// header each, within the budget.
    pub text: String,
    /// Lines left out for the budget: the text ends saying how many and how
    /// to narrow.
    pub lines_left_out: usize,
}

/// The original text `handle` covers in `history` — every line, or with a
/// `query` only the lines holding all its words (any case) — at most about
/// `budget_tokens` of it; what did not fit is counted at the end, with how
/// to narrow. System messages are not recalled: the model is sent them
/// with every request.
pub fn recall(
    history: &[Message],
    handle: &str,
    query: Option<&str>,
    budget_tokens: u32,
) -> Result<Recalled, RecallError> {
    let query = query.map(str::trim).filter(|q| !q.is_empty());
    if let Some(q) = query.filter(|q| q.chars().count() > MAX_QUERY_CHARS) {
        return Err(RecallError::QueryTooLong(q.chars().count()));
    }
    let indices = match find(history, handle)? {
        Span::Fold { end } => 0..end,
        Span::Message(i) => i..i + 1,
    };
    let words: Vec<String> = query
        .map(|q| q.split_whitespace().map(str::to_lowercase).collect())
        .unwrap_or_default();
    let mut text = String::new();
    let (mut used, mut left_out, mut matched) = (0u32, 0usize, 0usize);
    for i in indices {
        let message = &history[i];
        if message.role == Role::System {
            continue;
        }
        let body = render(message);
        let lines: Vec<&str> = body
            .lines()
            .filter(|line| {
                let line = line.to_lowercase();
                words.iter().all(|w| line.contains(w.as_str()))
            })
            .collect();
        if lines.is_empty() {
            continue;
        }
        matched += lines.len();
        let header = format!("--- message {} ({})\n", i + 1, role_name(message.role));
        let header_cost = estimate_text(&header);
        let mut started = false;
        for line in lines {
            let cost = estimate_text(line) + 1 + if started { 0 } else { header_cost };
            // Once a line is left out, so is every later one: what is
            // recalled is a run from the start, never a patchwork.
            if left_out > 0 || used + cost > budget_tokens {
                left_out += 1;
                continue;
            }
            if !started {
                text.push_str(&header);
                started = true;
            }
            text.push_str(line);
            text.push('\n');
            used += cost;
        }
    }
    if matched == 0 {
        text.push_str(match query {
            Some(_) => {
                "[condense: no line of what this handle covers holds every word of the query]\n"
            }
            None => "[condense: nothing to recall but system messages]\n",
        });
    }
    if left_out > 0 {
        text.push_str(&format!(
            "[condense: {left_out} more lines left out for the recall budget; pass a query (a few \
             words the lines you need hold) to narrow]\n"
        ));
    }
    Ok(Recalled {
        text,
        lines_left_out: left_out,
    })
}

/// A message as the model reads it back: its text, its tool calls with
/// their arguments, its results with their call ids. Reasoning is left out
/// (the model's own thoughts, not what happened).
fn render(message: &Message) -> String {
    let mut out = String::new();
    for part in &message.parts {
        match part {
            Part::Text(t) => out.push_str(t),
            Part::ToolCall(c) => {
                out.push_str(&format!("[call {} {}] {}", c.id, c.name, c.arguments))
            }
            Part::ToolResult(r) => {
                let error = if r.is_error { " (error)" } else { "" };
                out.push_str(&format!("[result of {}{error}]\n{}", r.call_id, r.content));
            }
            Part::Thinking(_) | Part::Opaque(_) => continue,
        }
        out.push('\n');
    }
    out
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolResult;

    fn history() -> Vec<Message> {
        let result = |id: &str, content: &str| Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: id.into(),
                content: content.into(),
                is_error: false,
            })],
        };
        vec![
            Message::text(Role::System, "You are a coding agent."),
            Message::text(Role::User, "Fix the parser; keep the API stable."),
            Message::text(Role::Assistant, "Reading parser.rs."),
            result(
                "c1",
                "fn parse(input: &str) -> Ast {\n    todo!()\n}\nconst MAX_DEPTH: usize = 64;",
            ),
            Message::text(Role::Assistant, "Found it."),
            result("c2", &"log line\n".repeat(400)),
        ]
    }

    #[test]
    fn a_handle_finds_what_it_covers_and_only_that() {
        let h = history();
        let fold = fold_handle(&h[..4]);
        assert_eq!(fold, fold_handle_of(crate::hash::prefix_hash(&h[..4])));
        assert_eq!(fold.len(), 12);
        assert_eq!(fold, fold_handle(&h[..4]), "deterministic");
        for end in 1..=h.len() {
            assert_eq!(find(&h, &fold_handle(&h[..end])), Ok(Span::Fold { end }));
        }
        assert_ne!(fold, fold_handle(&h[..3]));
        let result = result_handle(&h[3]);
        assert_eq!(find(&h, &result), Ok(Span::Message(3)));
        // Another session's history: its handles are unknown here.
        let mut other = h.clone();
        other[1] = Message::text(Role::User, "Fix the lexer.");
        let foreign = fold_handle(&other[..4]);
        assert_eq!(
            find(&h, &foreign),
            Err(RecallError::Unknown(foreign.clone()))
        );
        for bad in [
            "",
            "f",
            "x0123456789a",
            "f0123456789",
            "fABCDEF01234",
            "f0123456789ab",
        ] {
            assert!(
                matches!(find(&h, bad), Err(RecallError::Malformed(_))),
                "{bad}"
            );
        }
    }

    /// What naming a handle costs a request: docs/design.md gives these.
    #[test]
    fn the_notes_are_short_and_read_back() {
        let fold = fold_note(&fold_handle_of(u128::MAX), 1234);
        let result = result_note(&result_handle(&history()[3]));
        let (f, r) = (estimate_text(&fold), estimate_text(&result));
        eprintln!("fold note {f} tokens, result note {r} tokens");
        assert!(f <= 50 && r <= 25, "{f} {r}");
        assert!(is_fold_note(&fold));
        assert!(!is_fold_note(&fold.replace("1234", "12x4")));
        assert!(!is_fold_note(&result));
    }

    /// The bound on a summary pair counts the costliest note: no hash
    /// gives a dearer one (a bound counting `ffffffffffff` let a request
    /// over the threshold through).
    #[test]
    fn no_fold_note_costs_more_than_the_costliest() {
        let bound = estimate_text(&costliest_fold_note(99));
        let mut hash = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834_u128;
        for _ in 0..20_000 {
            hash = hash
                .wrapping_mul(0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645)
                .wrapping_add(1);
            let note = fold_note(&fold_handle_of(hash), 99);
            assert!(estimate_text(&note) <= bound, "{note}");
        }
        let dear = fold_note(&fold_handle_of(0x1a1_a1a1_a1a1 << 84), 99);
        assert_eq!(estimate_text(&dear), bound, "{dear}");
    }

    #[test]
    fn a_recall_is_the_original_text_within_its_budget() {
        let h = history();
        let whole = recall(&h, &fold_handle(&h[..4]), None, 10_000).unwrap();
        assert!(whole.text.contains("keep the API stable"), "{}", whole.text);
        assert!(whole.text.contains("const MAX_DEPTH: usize = 64;"));
        assert!(!whole.text.contains("coding agent"), "no system message");
        assert_eq!(whole.lines_left_out, 0);
        // A query keeps the lines holding all its words, any case.
        let narrowed = recall(&h, &fold_handle(&h[..4]), Some("max_depth USIZE"), 10_000).unwrap();
        assert!(narrowed.text.contains("const MAX_DEPTH"));
        assert!(!narrowed.text.contains("fn parse"));
        let none = recall(&h, &fold_handle(&h[..4]), Some("nowhere"), 10_000).unwrap();
        assert!(none.text.contains("no line"), "{}", none.text);
        // Over the budget: cut, counted, and told how to narrow.
        let cut = recall(&h, &result_handle(&h[5]), None, 200).unwrap();
        assert!(cut.lines_left_out > 300, "{}", cut.lines_left_out);
        assert!(cut.text.contains("pass a query"));
        assert!(
            estimate_text(&cut.text) <= 260,
            "{}",
            estimate_text(&cut.text)
        );
        let long = "word ".repeat(300);
        assert_eq!(
            recall(&h, &result_handle(&h[5]), Some(&long), 200),
            Err(RecallError::QueryTooLong(long.trim().chars().count()))
        );
    }
}
