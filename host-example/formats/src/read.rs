//! A request read with what was read before: each message of an agent's
//! session is read once, not once per call.
//!
//! Every call of a session sends its whole history again, and between
//! compactions that history is the last call's with a few messages added:
//! at 600 KB, reading it all as JSON was most of the proxy's time on a call
//! that does not compact. So [`Parsed::read`] first finds the body's list
//! entries as raw text (a scan that builds nothing), reads the other
//! top-level fields, and takes each entry's JSON and model message from a
//! memo keyed by the digest of the entry's bytes (and the caller's scope),
//! reading only the entries it has not seen. The result is the [`Parsed`]
//! that [`Parsed::parse`] makes of the same body — the tests hold the two
//! equal — and anything unusual (a list that is not one, an entry or a
//! top-level field that does not read) is left to [`Parsed::parse`], whose
//! errors name the place.
//!
//! The memo is the process's, bounded by the bytes of the entries it holds:
//! two generations, the older dropped when the newer fills, so what the
//! sessions still send stays. A host that serves several tenants gives each
//! its own `scope`, so that how quickly a body is read says nothing of what
//! another tenant sent.

use crate::{Format, Parsed, anthropic, openai, responses};
use condense_model::Message;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex};

/// The entries' bytes a generation holds before it becomes the older one:
/// the memo holds up to twice this, about two dozen long sessions' worth,
/// and takes about twice its bytes in memory (the JSON and the message).
const GENERATION_BYTES: usize = 16 << 20;

/// What a fast read of a body of a known format found.
pub enum Read {
    /// The request.
    Parsed(Parsed),
    /// A valid request with nothing to compress ([`crate::nothing_to_compress`]).
    Nothing(String),
    /// Read as OpenAI, the body has Anthropic's shapes and none of
    /// OpenAI's: it is an Anthropic request ([`crate::detect`]).
    Anthropic,
}

impl Parsed {
    /// Reads `text`, a request body of `format`, with the entries of its list
    /// read before under `scope` taken from the memo (see the module docs).
    /// `None`: the body is not one this reads, and [`Parsed::parse`] says
    /// what is wrong with it, or reads it.
    pub fn read(text: &str, format: Format, scope: u64) -> Option<Read> {
        let split = split(text, format)?;
        if let Some(reason) = crate::nothing_to_compress(format, &split.top) {
            return Some(Read::Nothing(reason));
        }
        let entries = entries(&split.entries, format, scope)?;
        if format == Format::OpenAi
            && let Value::Object(top) = &split.top
        {
            let values: Vec<&Value> = entries.iter().map(|(v, _)| &**v).collect();
            if anthropic::evidence(top, &values).is_some()
                && openai::evidence(top, &values).is_none()
            {
                return Some(Read::Anthropic);
            }
        }
        let assembled = match format {
            Format::Anthropic => anthropic::assemble(split.top, entries),
            Format::OpenAi => openai::assemble(split.top, entries),
            Format::Responses => responses::assemble(split.top, entries),
        };
        assembled.ok().map(Read::Parsed)
    }
}

/// A body cut at its list: the other fields read (the list's key holds an
/// empty list, where it was), the list's entries as raw text.
struct Split<'a> {
    top: Value,
    entries: Vec<&'a RawValue>,
}

fn split(text: &str, format: Format) -> Option<Split<'_>> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let split = Top {
        list_key: format.list_key(),
        bare_allowed: format == Format::OpenAi,
    }
    .deserialize(&mut reader)
    .ok()?;
    reader.end().ok()?;
    Some(split)
}

/// Reads a body's top level, keeping the list's entries raw.
struct Top {
    list_key: &'static str,
    /// A bare list is a request (OpenAI's message list alone).
    bare_allowed: bool,
}

impl<'de> DeserializeSeed<'de> for Top {
    type Value = Split<'de>;

    fn deserialize<D: Deserializer<'de>>(self, reader: D) -> Result<Split<'de>, D::Error> {
        reader.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top {
    type Value = Split<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "an object with `{}`", self.list_key)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Split<'de>, A::Error> {
        let mut top = Map::new();
        let mut entries = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == self.list_key {
                // A repeated key is for `parse` to read as serde_json does.
                if entries.is_some() {
                    return Err(de::Error::custom("a repeated list"));
                }
                entries = Some(map.next_value::<Vec<&'de RawValue>>()?);
                top.insert(key, Value::Array(Vec::new()));
            } else {
                let value: Value = map.next_value()?;
                if top.insert(key, value).is_some() {
                    return Err(de::Error::custom("a repeated key"));
                }
            }
        }
        let entries = entries.ok_or_else(|| de::Error::custom("no list"))?;
        Ok(Split {
            top: Value::Object(top),
            entries,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Split<'de>, A::Error> {
        if !self.bare_allowed {
            return Err(de::Error::custom("a bare list"));
        }
        let mut entries = Vec::new();
        while let Some(entry) = seq.next_element::<&'de RawValue>()? {
            entries.push(entry);
        }
        Ok(Split {
            top: Value::Array(Vec::new()),
            entries,
        })
    }
}

/// An entry read: its JSON and its model message.
type Entry = (Arc<Value>, Message);

/// Each raw entry read, from the memo where it holds it; `None` when one
/// does not read.
fn entries(raw: &[&RawValue], format: Format, scope: u64) -> Option<Vec<Entry>> {
    let keys: Vec<Key> = raw
        .iter()
        .map(|entry| Key {
            scope,
            format: format as u8,
            digest: xxhash_rust::xxh3::xxh3_128(entry.get().as_bytes()),
        })
        .collect();
    let mut found: Vec<Option<Arc<Entry>>> = {
        let mut memo = MEMO.lock().unwrap_or_else(|e| e.into_inner());
        keys.iter()
            .zip(raw)
            .map(|(key, entry)| memo.get(key, entry.get().len()))
            .collect()
    };
    let mut read = Vec::new();
    for (i, slot) in found.iter_mut().enumerate() {
        if slot.is_none() {
            let value: Value = serde_json::from_str(raw[i].get()).ok()?;
            let message = match format {
                Format::Anthropic => anthropic::read_entry(&value),
                Format::OpenAi => openai::read_entry(&value),
                Format::Responses => responses::read_entry(&value),
            }
            .ok()?;
            let entry = Arc::new((Arc::new(value), message));
            read.push((keys[i], raw[i].get().len(), entry.clone()));
            *slot = Some(entry);
        }
    }
    if !read.is_empty() {
        let mut memo = MEMO.lock().unwrap_or_else(|e| e.into_inner());
        for (key, bytes, entry) in read {
            memo.insert(key, bytes, entry);
        }
    }
    Some(
        found
            .into_iter()
            .map(|entry| {
                let (value, message) = &*entry.expect("every entry read");
                (value.clone(), message.clone())
            })
            .collect(),
    )
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    scope: u64,
    format: u8,
    digest: u128,
}

static MEMO: LazyLock<Mutex<Memo>> = LazyLock::new(Mutex::default);

/// Entries read, in two generations: one found in the older moves to the
/// newer, and the older is dropped when the newer fills.
#[derive(Default)]
struct Memo {
    newer: HashMap<Key, Arc<Entry>>,
    older: HashMap<Key, Arc<Entry>>,
    newer_bytes: usize,
}

impl Memo {
    fn get(&mut self, key: &Key, bytes: usize) -> Option<Arc<Entry>> {
        if let Some(entry) = self.newer.get(key) {
            return Some(entry.clone());
        }
        let entry = self.older.remove(key)?;
        self.insert(*key, bytes, entry.clone());
        Some(entry)
    }

    fn insert(&mut self, key: Key, bytes: usize, entry: Arc<Entry>) {
        if self.newer.insert(key, entry).is_none() {
            self.newer_bytes += bytes;
        }
        if self.newer_bytes > GENERATION_BYTES {
            self.older = std::mem::take(&mut self.newer);
            self.newer_bytes = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_model::{Item, Role};
    use serde_json::json;

    fn bodies() -> Vec<(Format, Value)> {
        vec![
            (
                Format::Anthropic,
                json!({
                    "model": "claude", "max_tokens": 100,
                    "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
                    "messages": [
                        {"role": "user", "content": "read a.rs"},
                        {"role": "assistant", "content": [
                            {"type": "thinking", "thinking": "look", "signature": "sig"},
                            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "a.rs"}}]},
                        {"role": "user", "content": [
                            {"type": "tool_result", "tool_use_id": "t1", "content": "fn a() {}\n\u{e9}\u{1b}"}]},
                        {"role": "assistant", "content": "done"},
                        {"role": "user", "content": [{"type": "text", "text": "next", "cache_control": {"type": "ephemeral"}}]},
                    ],
                    "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
                    "stream": true,
                }),
            ),
            (
                Format::OpenAi,
                json!({
                    "messages": [
                        {"role": "system", "content": "be brief"},
                        {"role": "user", "content": "read a.rs", "name": "ann"},
                        {"role": "assistant", "content": null, "reasoning_content": "look",
                         "tool_calls": [{"id": "c1", "type": "function",
                                         "function": {"name": "read", "arguments": "{\"path\":\"a.rs\"}"}}]},
                        {"role": "tool", "tool_call_id": "c1", "content": "fn a() {}"},
                        {"role": "user", "content": [{"type": "text", "text": "next"}]},
                    ],
                    "model": "gpt", "temperature": 0.25,
                }),
            ),
            (
                Format::OpenAi,
                json!([
                    {"role": "user", "content": "a bare list"},
                    {"role": "assistant", "content": "yes"},
                    {"role": "user", "content": "next"},
                ]),
            ),
            (
                Format::Responses,
                json!({
                    "model": "gpt", "instructions": "be brief", "store": false,
                    "input": [
                        {"role": "user", "content": "read two files"},
                        {"type": "reasoning", "id": "r1", "summary": [], "encrypted_content": "xyz"},
                        {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{\"p\":1}"},
                        {"type": "function_call", "call_id": "c2", "name": "read", "arguments": "{\"p\":2}"},
                        {"type": "function_call_output", "call_id": "c1", "output": "one"},
                        {"type": "function_call_output", "call_id": "c2", "output": "two"},
                        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "next"}]},
                    ],
                }),
            ),
        ]
    }

    fn read(text: &str, format: Format, scope: u64) -> Parsed {
        match Parsed::read(text, format, scope) {
            Some(Read::Parsed(parsed)) => parsed,
            _ => panic!("{format} body read: {text}"),
        }
    }

    fn assert_same(fast: &Parsed, slow: &Parsed) {
        assert_eq!(fast.format, slow.format);
        assert_eq!(fast.body, slow.body);
        assert_eq!(fast.messages, slow.messages);
        assert_eq!(fast.originals, slow.originals);
        assert_eq!(fast.reasoning_field, slow.reasoning_field);
    }

    /// Read fast, from the memo or not, a body is what `parse` makes of
    /// it, and renders to the same bytes.
    #[test]
    fn a_body_read_with_the_memo_is_the_body_parsed() {
        for (scope, (format, body)) in (1_000..).zip(bodies()) {
            let text = serde_json::to_string_pretty(&body).unwrap();
            let slow = Parsed::parse(serde_json::from_str(&text).unwrap(), format).unwrap();
            // Cold, then warm (every entry from the memo), then with one
            // entry more (the next call of a session).
            let cold = read(&text, format, scope);
            let warm = read(&text, format, scope);
            assert_same(&cold, &slow);
            assert_same(&warm, &slow);
            let n = slow.messages.len() as u32;
            let summary = Message::text(Role::User, "[condense summary] earlier");
            let outputs = [
                (0..n).map(Item::Kept).collect::<Vec<_>>(),
                vec![Item::Written(summary.clone()), Item::Kept(n - 1)],
                vec![
                    Item::Kept(0),
                    Item::Written(summary),
                    Item::Kept(n - 2),
                    Item::Kept(n - 1),
                ],
            ];
            for items in &outputs {
                let expected = serde_json::to_vec(&slow.render(items)).unwrap();
                assert_eq!(warm.render_bytes(items, false), expected, "{format}");
                let mut with_tool = slow.render(items);
                crate::add_recall_tool(format, &mut with_tool);
                assert_eq!(
                    warm.render_bytes(items, true),
                    serde_json::to_vec(&with_tool).unwrap()
                );
            }
        }
    }

    /// Anything `parse` must say something about is left to it.
    #[test]
    fn an_unusual_body_is_left_to_parse() {
        let cases = [
            (Format::Anthropic, r#"{"messages": "not a list"}"#),
            (
                Format::Anthropic,
                r#"[{"role": "user", "content": "bare"}]"#,
            ),
            (Format::Anthropic, r#"{"messages": [], "messages": []}"#),
            (
                Format::Anthropic,
                r#"{"model": "a", "model": "b", "messages": []}"#,
            ),
            (
                Format::Anthropic,
                r#"{"messages": [{"role": "robot", "content": "x"}]}"#,
            ),
            (Format::Anthropic, r#"{"system": 7, "messages": []}"#),
            (Format::OpenAi, r#"{"model": "m"}"#),
            (Format::OpenAi, r#"{"messages": [] } trailing"#),
            (Format::Responses, r#"{"input": "one string"}"#),
        ];
        for (format, text) in cases {
            assert!(Parsed::read(text, format, 0).is_none(), "{text}");
        }
        assert!(matches!(
            Parsed::read(
                r#"{"input": [], "previous_response_id": "r"}"#,
                Format::Responses,
                0
            ),
            Some(Read::Nothing(_))
        ));
        let anthropic = r#"{"system": "s", "messages": [{"role": "user", "content": "hi"}]}"#;
        assert!(matches!(
            Parsed::read(anthropic, Format::OpenAi, 0),
            Some(Read::Anthropic)
        ));
    }
}
