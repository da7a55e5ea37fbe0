//! Token estimate without a tokenizer.
//!
//! A real BPE vocabulary is megabytes and too slow for a per-call middleware, and
//! chars/4 is off for what agent histories are made of: tool output (code,
//! listings, line-numbered file reads) runs about 3.2 characters a token, digits
//! go by three, identifiers split at camel humps, and CJK text is about 0.7
//! tokens a character. On the corpus chars/4 undercounts by 16% (18% off per
//! text), and CJK by two thirds. This scans the text once, classifying
//! characters, and charges each run what o200k charges for it on average; the
//! error against tiktoken o200k is measured by
//! `guest/model/tests/token_estimate.rs`.
//!
//! Everything is counted in thousandths of a token, in integers, so the estimate
//! is bit-identical natively and inside the component.

use crate::{Message, Part};

/// Framing the provider adds per message (role markers, separators).
const MESSAGE_OVERHEAD: u64 = 4_000;
/// Framing per tool call or tool result block (ids, type tags).
const BLOCK_OVERHEAD: u64 = 8_000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Letter,
    Digit,
    Space,
    Newline,
    Punct,
    Cjk,
    OtherLetter,
    Symbol,
}

/// Class of every ASCII byte, so the hot loop is a table lookup: histories are
/// mostly ASCII, and this runs over the whole history on every call.
const ASCII_CLASS: [Class; 128] = {
    let mut table = [Class::Punct; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = match b as u8 {
            b'a'..=b'z' | b'A'..=b'Z' => Class::Letter,
            b'0'..=b'9' => Class::Digit,
            b' ' | b'\t' => Class::Space,
            b'\n' | b'\r' => Class::Newline,
            _ => Class::Punct,
        };
        b += 1;
    }
    table
};

fn classify_non_ascii(c: char) -> Class {
    match c {
        // Han, kana, Hangul, CJK and fullwidth punctuation: o200k charges
        // them by the character, not by the word (see `run_cost`).
        '\u{3000}'..='\u{30ff}'
        | '\u{3400}'..='\u{4dbf}'
        | '\u{4e00}'..='\u{9fff}'
        | '\u{ac00}'..='\u{d7af}'
        | '\u{f900}'..='\u{faff}'
        | '\u{ff00}'..='\u{ffef}' => Class::Cjk,
        _ if c.is_alphabetic() => Class::OtherLetter,
        _ => Class::Symbol,
    }
}

/// Class and byte width of the character starting at byte `i`.
fn class_at(text: &str, i: usize) -> (Class, usize) {
    let b = text.as_bytes()[i];
    if b < 0x80 {
        return (ASCII_CLASS[b as usize], 1);
    }
    let c = text[i..].chars().next().expect("i is a char boundary");
    (classify_non_ascii(c), c.len_utf8())
}

/// Runs continue across these class pairs: accented letters inside an ASCII
/// word stay part of that word.
fn continues(run: Class, next: Class) -> bool {
    next == run
        || (run == Class::Letter && next == Class::OtherLetter)
        || (run == Class::OtherLetter && next == Class::Letter)
}

/// Thousandths of a token for a run of `len` characters of one class, followed
/// by a run of class `next` (whitespace at the end of the text: nothing merges
/// across it). `camel_humps` counts lower→upper transitions inside a letter run.
///
/// The costs mirror how o200k pre-splits text before BPE: a word takes at most
/// one leading space or mark (` foo`, `.foo`), digits go by three, a space is
/// never merged into digits, and a run of marks takes the newlines after it.
/// They were fitted on the corpus (`tests/token_estimate.rs`) and rounded.
///
/// Extending a text never lowers its cost: the summarizer binary-searches for
/// the longest prefix that fits a budget. So every discount for what follows a
/// run is at most what that following run costs, and a camel hump, which adds
/// a piece (1 000) and 6 free letters for one more letter, must not make the
/// run cheaper: 1 000 ≥ 5 × 200.
fn run_cost(class: Class, len: u64, camel_humps: u64, next: Class) -> u64 {
    match class {
        // o200k splits identifiers at each lower→upper hump (`camel`, `Case`);
        // each piece is a word, one token up to ~6 letters, one more every ~5
        // letters after that (common long words are single tokens, rare ones
        // and identifiers split; this is the average over both).
        Class::Letter => {
            let pieces = camel_humps + 1;
            pieces * 1_000 + len.saturating_sub(6 * pieces) * 200
        }
        // Digits are grouped by up to three.
        Class::Digit => len.div_ceil(3) * 1_000,
        // A single space merges into the next word or mark; a longer run
        // (indentation, alignment) is one token and its last space merges.
        // Digits take no space, so before them the space is a token of its
        // own: `     1→` in line-numbered file reads is `    `, ` `, `1`, `→`.
        Class::Space => {
            let own = if len == 1 { 0 } else { 1_000 };
            if next == Class::Digit {
                own + 1_000
            } else {
                own
            }
        }
        // Blank lines merge: `\n\n\n` is one token.
        Class::Newline => 1_000,
        // A lone mark before a word usually merges into it (`.foo`, `_bar`,
        // `"key`, `(self`); about a third of the time BPE splits it off again.
        Class::Punct if len == 1 && next == Class::Letter => 330,
        Class::Punct => {
            // Pairs like `("`, `":`, `);` are single tokens; longer runs split
            // about every 2.5 marks.
            let own = (len * 400).max(1_000);
            // Newlines after marks merge into them (`;\n`, `{\n`, `):\n`), so
            // the newline run's token covers the run's last one.
            if next == Class::Newline {
                own - 1_000
            } else {
                own
            }
        }
        // o200k has many two-character Han and kana words and Hangul
        // syllables: about 0.7 tokens a character (0.69 on Chinese and
        // Japanese samples, 0.6 on Korean).
        Class::Cjk => len * 700,
        // Cyrillic, Greek, and accented Latin outside ASCII words: about four
        // letters a token, plus a partial one per word.
        Class::OtherLetter => len * 250 + 300,
        // Arrows, bullets, check marks, box drawing: a token each (emoji are
        // often two, but rare). Separator lines of repeated box drawing merge
        // 8–16 characters a token, so long runs cost little more.
        Class::Symbol => len.min(4) * 1_000 + len.saturating_sub(4) * 200,
    }
}

/// Estimated tokens of a text, in thousandths.
pub fn text_millis(text: &str) -> u64 {
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return 0;
    }
    let mut total = 0u64;
    let mut i = 0;
    // Class and byte width of the character at `i`, which starts a run.
    let mut start = class_at(text, 0);
    loop {
        let (class, width) = start;
        let mut prev_lower = bytes[i].is_ascii_lowercase();
        let (mut len, mut humps) = (1u64, 0u64);
        i += width;
        let mut next = None;
        while i < bytes.len() {
            let b = bytes[i];
            let (c, width) = if b < 0x80 {
                (ASCII_CLASS[b as usize], 1)
            } else {
                class_at(text, i)
            };
            if !continues(class, c) {
                next = Some((c, width));
                break;
            }
            if prev_lower && b.is_ascii_uppercase() {
                humps += 1;
            }
            prev_lower = b.is_ascii_lowercase();
            len += 1;
            i += width;
        }
        total += run_cost(class, len, humps, next.map_or(Class::Space, |(c, _)| c));
        match next {
            Some(n) => start = n,
            None => return total,
        }
    }
}

/// Estimated tokens of a text.
pub fn estimate_text(text: &str) -> u32 {
    millis_to_tokens(text_millis(text))
}

/// Cuts `text` at a char boundary so its estimate fits `max_tokens`: what
/// becomes of a summary over its budget (the compressor's, and the host's
/// when it must know the summary a compaction kept).
pub fn clamp_to_tokens(mut text: String, max_tokens: u32) -> String {
    while estimate_text(&text) > max_tokens {
        // Shrink proportionally (at least one char) and re-measure: the
        // estimate is not linear in length, so this converges in a few rounds.
        let keep = (text.len() as u64 * u64::from(max_tokens)
            / u64::from(estimate_text(&text)).max(1)) as usize;
        let mut cut = keep.min(text.len().saturating_sub(1));
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

fn millis_to_tokens(millis: u64) -> u32 {
    u32::try_from(millis.div_ceil(1_000)).unwrap_or(u32::MAX)
}

/// Estimated tokens of one message as the provider would bill it.
pub fn estimate_message(message: &Message) -> u32 {
    let mut millis = MESSAGE_OVERHEAD;
    for part in &message.parts {
        millis += match part {
            Part::Text(t) => text_millis(t),
            Part::Thinking(t) => {
                text_millis(&t.text) + t.signature.as_ref().map_or(0, |s| text_millis(s))
            }
            Part::ToolCall(c) => BLOCK_OVERHEAD + text_millis(&c.name) + text_millis(&c.arguments),
            Part::ToolResult(r) => BLOCK_OVERHEAD + content_millis(&r.content),
            Part::Opaque(json) => content_millis(json),
        };
    }
    millis_to_tokens(millis)
}

/// What an image costs when its size cannot be read from its data (JPEG
/// without a frame header near the start, WebP, a URL): Anthropic bills an
/// image width×height/750 tokens after scaling it to at most 1568 pixels on
/// its long edge and about 1.15 megapixels, which caps it near 1,600; OpenAI
/// bills a high-detail 1024×1024 image 765. The larger, so the trigger never
/// undercounts what the model is sent.
pub const IMAGE_TOKENS: u32 = 1_600;

/// Base64 runs shorter than this are left to the text estimate.
const MIN_MEDIA_CHARS: usize = 256;

/// Tokens, in thousandths, of a JSON or text content that may carry base64
/// images (an opaque image block, a tool result with a screenshot): each
/// image by its provider's rule ([`image_tokens`]), never by the length of
/// its base64, which would count a 400 KB screenshot as 80k tokens; the rest
/// as text.
fn content_millis(text: &str) -> u64 {
    if !text.contains("base64") {
        return text_millis(text);
    }
    let mut total = 0;
    let mut rest = text;
    while let Some(at) = media_start(rest) {
        let (before, from) = rest.split_at(at);
        let run = from
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
            .count();
        let is_image = looks_like_image(tail(before, 200));
        if run >= MIN_MEDIA_CHARS && is_image {
            total += text_millis(before) + u64::from(image_tokens(&from[..run])) * 1_000;
            rest = &from[run..];
        } else {
            // Not an image payload: counted as text, the scan goes on after it.
            total += text_millis(&rest[..at + run]);
            rest = &from[run..];
        }
    }
    total + text_millis(rest)
}

/// Whether `text` carries a base64 image (a structured tool result with a
/// screenshot, as the host's JSON text of it): cutting such a text would cut
/// the image's data.
pub fn carries_image(text: &str) -> bool {
    text.contains("base64")
        && media_start(text).is_some_and(|at| looks_like_image(tail(&text[..at], 200)))
}

/// Where the next base64 payload starts: after `"data":"` (Anthropic's
/// `source`) or `;base64,` (a data URL).
fn media_start(text: &str) -> Option<usize> {
    const MARKERS: [&str; 3] = ["\"data\":\"", "\"data\": \"", ";base64,"];
    MARKERS
        .iter()
        .filter_map(|m| text.find(m).map(|at| at + m.len()))
        .min()
}

/// The last `n` bytes of `text`, or a little more, at a char boundary.
fn tail(text: &str, n: usize) -> &str {
    let mut at = text.len().saturating_sub(n);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    &text[at..]
}

/// Whether the text before a payload names an image media type.
fn looks_like_image(before: &str) -> bool {
    before.contains("image/")
}

/// Tokens of a base64 image by Anthropic's rule, its size read from the
/// PNG, GIF or JPEG header; [`IMAGE_TOKENS`] when it cannot be read.
pub fn image_tokens(base64: &str) -> u32 {
    // The headers sit in the first few kilobytes.
    let head = decode_base64_prefix(base64, 4_096);
    match image_size(&head) {
        Some((w, h)) if w > 0 && h > 0 => {
            let (mut w, mut h) = (f64::from(w), f64::from(h));
            let long = w.max(h);
            if long > 1_568.0 {
                w *= 1_568.0 / long;
                h *= 1_568.0 / long;
            }
            let pixels = w * h;
            let cap = 1_150_000.0;
            let pixels = pixels.min(cap);
            ((pixels / 750.0).ceil() as u32).clamp(1, IMAGE_TOKENS)
        }
        _ => IMAGE_TOKENS,
    }
}

/// Width and height from an image file's first bytes.
fn image_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let be16 = |i: usize| {
        Some(u32::from(u16::from_be_bytes([
            *bytes.get(i)?,
            *bytes.get(i + 1)?,
        ])))
    };
    let le16 = |i: usize| {
        Some(u32::from(u16::from_le_bytes([
            *bytes.get(i)?,
            *bytes.get(i + 1)?,
        ])))
    };
    let be32 = |i: usize| Some(u32::from_be_bytes(bytes.get(i..i + 4)?.try_into().ok()?));
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some((be32(16)?, be32(20)?));
    }
    if bytes.starts_with(b"GIF8") {
        return Some((le16(6)?, le16(8)?));
    }
    if bytes.starts_with(&[0xff, 0xd8]) {
        // JPEG: walk the segments to a start-of-frame marker.
        let mut i = 2;
        while i + 9 < bytes.len() {
            if bytes[i] != 0xff {
                return None;
            }
            let marker = bytes[i + 1];
            let len = be16(i + 2)? as usize;
            if matches!(marker, 0xc0..=0xc3 | 0xc5..=0xc7 | 0xc9..=0xcb | 0xcd..=0xcf) {
                return Some((be16(i + 7)?, be16(i + 5)?));
            }
            i += 2 + len;
        }
    }
    None
}

/// The bytes of the first `max` bytes' worth of a base64 text (standard
/// alphabet; stops at padding or anything else).
fn decode_base64_prefix(text: &str, max: usize) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(max);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes() {
        let Some(v) = value(c) else { break };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            if out.len() >= max {
                break;
            }
        }
    }
    out
}

/// Estimated tokens of each message, in order.
pub fn estimate_messages(messages: &[Message]) -> Vec<u32> {
    messages.iter().map(estimate_message).collect()
}

/// Estimated tokens of a whole request.
pub fn estimate_total(messages: &[Message]) -> u64 {
    messages
        .iter()
        .map(|m| u64::from(estimate_message(m)))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_text_costs_nothing() {
        assert_eq!(estimate_text(""), 0);
    }

    #[test]
    fn english_words_are_about_one_token_each() {
        let n = estimate_text("The quick brown fox jumps over the lazy dog");
        assert!((8..=11).contains(&n), "{n}");
    }

    #[test]
    fn code_costs_more_than_chars_over_four() {
        let code = r#"fn main() { let x: Vec<u8> = vec![1, 2, 3]; println!("{:?}", x); }"#;
        let chars_over_four = code.len() as u32 / 4;
        assert!(estimate_text(code) > chars_over_four);
    }

    #[test]
    fn cjk_is_under_a_token_per_character() {
        // o200k: 上下|文|压|缩|可以|降低|成本, 7 tokens for 11 characters.
        let n = estimate_text("上下文压缩可以降低成本");
        assert!((7..=9).contains(&n), "{n}");
    }

    #[test]
    fn spaces_before_digits_are_tokens() {
        // o200k: `    `, ` `, `1`, `→`, `use`, ` std`, `::`, `fmt`, `;\n`, 9 tokens;
        // without the lone space before the digit it would be 8.
        let n = estimate_text("     1→use std::fmt;\n");
        assert!((9..=10).contains(&n), "{n}");
    }

    #[test]
    fn longer_text_never_costs_less() {
        // The summarizer binary-searches prefixes against a budget.
        let text = "  fooBarBazQuuxCorgeGraultGarplyWaldo(x);\n\t\"key\": [1, 22, 333, 4444]\n\
                    →  ── ────────── ✅ ∞ Größe производственной 上下文 42 .foo ...\n\n):\nend.";
        let mut last = 0;
        for (end, _) in text.char_indices().skip(1).chain([(text.len(), ' ')]) {
            let millis = text_millis(&text[..end]);
            assert!(millis >= last, "{:?}: {millis} < {last}", &text[..end]);
            last = millis;
        }
    }

    fn base64(bytes: &[u8]) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n =
                chunk.iter().fold(0u32, |a, &b| (a << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
            for k in 0..=chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * k)) & 63) as usize] as char);
            }
        }
        out
    }

    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        bytes.extend(width.to_be_bytes());
        bytes.extend(height.to_be_bytes());
        bytes.resize(300_000, 7);
        bytes
    }

    #[test]
    fn an_image_costs_its_pixels_not_its_base64() {
        // A 400 KB screenshot, 1000×750: 1,000 tokens by Anthropic's rule.
        let data = base64(&png(1_000, 750));
        let block = format!(
            r#"{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{data}"}}}}"#
        );
        let as_text = estimate_text(&block);
        let message = Message {
            role: crate::Role::User,
            parts: vec![Part::Opaque(block.clone())],
        };
        let estimate = estimate_message(&message);
        assert!(as_text > 50_000, "{as_text}");
        assert!((1_000..1_040).contains(&estimate), "{estimate}");
        // Large images are scaled down to about 1.15 megapixels.
        assert_eq!(image_tokens(&base64(&png(4_000, 3_000))), 1_534);
        // Unreadable sizes cost the fixed rule.
        assert_eq!(image_tokens(&"QUJD".repeat(100)), IMAGE_TOKENS);
        // A screenshot inside a tool result, as a data URL.
        let result = format!(
            r#"[{{"type":"image_url","image_url":{{"url":"data:image/png;base64,{data}"}}}}]"#
        );
        let message = Message {
            role: crate::Role::Tool,
            parts: vec![Part::ToolResult(crate::ToolResult {
                call_id: "c".into(),
                content: result,
                is_error: false,
            })],
        };
        assert!(estimate_message(&message) < 1_100);
        assert!(carries_image(&block) && !carries_image("base64 is an encoding"));
        // Text that mentions base64 is still text.
        assert_eq!(
            content_millis("base64 is an encoding"),
            text_millis("base64 is an encoding")
        );
    }

    #[test]
    fn message_includes_overhead() {
        let m = Message::text(crate::Role::User, "");
        assert_eq!(estimate_message(&m), 4);
    }
}
