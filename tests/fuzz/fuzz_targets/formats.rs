//! The request-body adapters (`condense_formats`): any bytes that are
//! JSON go through `detect` and `Parsed::parse` as both formats. Bad bodies are
//! errors, never panics. A parsed body renders back from its own messages as
//! the same JSON (key order included). Any subsequence of its messages renders
//! to a body that parses back to exactly that subsequence. Outputs like the
//! compressor's (messages dropped or rewritten, summaries inserted) render
//! without panicking, and what they render to parses without panicking.
//!
//! Input: one JSON value; any bytes after it steer the subsequence and the
//! rewrites (a hash of the input when there are none), so plain JSON files
//! are seeds.
#![no_main]

use std::hash::{Hash, Hasher};

use arbitrary::Unstructured;
use condense_formats::{Format, Parsed, detect};
use condense_model::{Item, Message, Part, Role, SUMMARY_MARKER};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let mut values = serde_json::Deserializer::from_slice(data).into_iter::<Value>();
    let Some(Ok(body)) = values.next() else {
        return;
    };
    let rest = &data[values.byte_offset()..];
    let seed;
    let steer: &[u8] = if rest.len() >= 8 {
        rest
    } else {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        data.hash(&mut h);
        seed = (0..8u64)
            .flat_map(|i| (h.finish().rotate_left(8 * i as u32) ^ i).to_le_bytes())
            .collect::<Vec<u8>>();
        &seed
    };
    let _ = detect(&body);
    let text = body.to_string();

    for format in [Format::OpenAi, Format::Anthropic, Format::Responses] {
        let Ok(parsed) = Parsed::parse(body.clone(), format) else {
            continue;
        };
        assert_eq!(parsed.format(), format);
        let messages = parsed.messages();

        // Round trip: the body itself.
        let all: Vec<Item> = (0..messages.len() as u32).map(Item::Kept).collect();
        let rendered = parsed.render(&all);
        assert_eq!(
            rendered.to_string(),
            text,
            "{format}: round trip changed the body"
        );

        let mut u = Unstructured::new(steer);
        // A subsequence renders as those originals and parses back to itself.
        let kept: Vec<usize> = (0..messages.len())
            .filter(|_| u.arbitrary::<bool>().unwrap_or(true))
            .collect();
        let subsequence: Vec<Message> = kept.iter().map(|&i| messages[i].clone()).collect();
        let items: Vec<Item> = kept.iter().map(|&i| Item::Kept(i as u32)).collect();
        let rendered = parsed.render(&items);
        match Parsed::parse(rendered.clone(), format) {
            Ok(back) => assert!(
                back.messages() == subsequence,
                "{format}: subsequence did not parse back to itself: {rendered}"
            ),
            Err(e) => panic!("{format}: rendered subsequence does not parse: {e:#}\n{rendered}"),
        }

        // Compressor-like outputs: only no panic (a rewritten message may take
        // another shape, e.g. an OpenAI `function_call` has no typed part).
        let mut output = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            let index = i as u32;
            match u.int_in_range(0..=7u8).unwrap_or(0) {
                0 | 1 => output.push(Item::Kept(index)),
                2 => {}
                3 => output.push(Item::Rewritten(index, rewrite(m))),
                4 => output.push(Item::Written(Message::text(
                    Role::User,
                    format!("{SUMMARY_MARKER} s"),
                ))),
                5 => {
                    output.push(Item::Written(Message::text(
                        Role::User,
                        format!("{SUMMARY_MARKER} s"),
                    )));
                    output.push(Item::Written(Message::text(
                        Role::Assistant,
                        format!("{SUMMARY_MARKER} a"),
                    )));
                    output.push(Item::Kept(index));
                }
                6 => output.push(Item::Rewritten(
                    index,
                    Message {
                        role: m.role,
                        parts: Vec::new(),
                    },
                )),
                _ => {
                    let mut changed = m.clone();
                    changed.role = match m.role {
                        Role::System => Role::User,
                        Role::User => Role::Tool,
                        Role::Tool => Role::Assistant,
                        Role::Assistant => Role::System,
                    };
                    output.push(Item::Rewritten(index, changed));
                }
            }
        }
        let rendered = parsed.render(&output);
        let _ = Parsed::parse(rendered.clone(), format);
        let _ = detect(&rendered);
    }
});

/// What the passes do to a message: thinking dropped, text changed, tool
/// result contents cut.
fn rewrite(m: &Message) -> Message {
    let parts = m
        .parts
        .iter()
        .filter(|p| !matches!(p, Part::Thinking(_)))
        .map(|p| match p {
            Part::Text(t) => Part::Text(format!("{t} [condense: 3 steps elided]")),
            Part::ToolResult(r) => {
                let mut r = r.clone();
                let cut = r
                    .content
                    .char_indices()
                    .nth(10)
                    .map_or(r.content.len(), |(i, _)| i);
                r.content.truncate(cut);
                r.content.push_str("[condense: elided]");
                Part::ToolResult(r)
            }
            other => other.clone(),
        })
        .collect();
    Message {
        role: m.role,
        parts,
    }
}
