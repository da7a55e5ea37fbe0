//! What the provider says a call used, read from its answer: the one
//! measure of a call that is not condense's estimate. Each protocol reports
//! it its own way, in a plain answer and in a stream:
//!
//! - Anthropic Messages: `usage` with `input_tokens` (not from the cache),
//!   `cache_read_input_tokens`, `cache_creation_input_tokens` and
//!   `output_tokens`; streamed, the input side in `message_start`'s message
//!   and the output in `message_delta` (its count so far, the last one final;
//!   the input counts it gives, if any, replace `message_start`'s).
//! - OpenAI Chat Completions: `usage` with `prompt_tokens` (all of the
//!   input), `prompt_tokens_details.cached_tokens` and `completion_tokens`;
//!   streamed, only in the last chunk and only when the client asked for it
//!   (`stream_options.include_usage`: the proxy never adds it). Chat writes
//!   to its cache at no charge: a write is 0.
//! - OpenAI Responses: `usage` with `input_tokens` (all of the input),
//!   `input_tokens_details.cached_tokens` and `output_tokens`; streamed, in
//!   `response.completed`'s response. No write charge either.
//!
//! An answer without usage, with a usage block that is not what its protocol
//! writes, or a stream cut before its usage is complete, is unknown
//! ([`UsageReader::finish`] is `None`), never a guess.

use crate::Format;
use serde_json::Value;

/// Tokens of one call as the provider billed them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    /// Input read from the provider's prompt cache.
    pub cache_read: u64,
    /// Input written to the cache (billed above plain input).
    pub cache_write: u64,
    /// The rest of the input: neither read from the cache nor written to it.
    pub uncached: u64,
    pub output: u64,
}

impl Usage {
    /// All of the input.
    pub fn input(&self) -> u64 {
        self.cache_read + self.cache_write + self.uncached
    }
}

/// Reads a call's usage from the bytes of its answer as they pass, without
/// holding more than the line in progress of a stream (or, for a plain
/// answer, the body: it is parsed whole at the end).
#[derive(Debug)]
pub struct UsageReader {
    format: Format,
    /// Bytes of a plain answer; of a stream, the line not yet ended.
    pending: Vec<u8>,
    streamed: bool,
    /// Of a stream: the input side once read, the output count so far.
    input: Option<Usage>,
    output: Option<u64>,
    /// A stream's usage, complete (Chat's last chunk, Responses' completion).
    complete: Option<Usage>,
    /// A usage block that was there but unreadable: the figure is unknown.
    spoiled: bool,
}

impl UsageReader {
    /// A reader of an answer in `format`, streamed (server-sent events) or
    /// not.
    pub fn new(format: Format, streamed: bool) -> UsageReader {
        UsageReader {
            format,
            pending: Vec::new(),
            streamed,
            input: None,
            output: None,
            complete: None,
            spoiled: false,
        }
    }

    /// The next bytes of the answer.
    pub fn feed(&mut self, bytes: &[u8]) {
        if !self.streamed {
            self.pending.extend_from_slice(bytes);
            return;
        }
        for &byte in bytes {
            if byte == b'\n' {
                let line = std::mem::take(&mut self.pending);
                self.line(&line);
            } else {
                self.pending.push(byte);
            }
        }
    }

    /// The usage of the whole answer, if it said one that can be read.
    pub fn finish(mut self) -> Option<Usage> {
        if !self.streamed {
            let body: Value = serde_json::from_slice(&self.pending).ok()?;
            return whole(self.format, body.get("usage")?);
        }
        // A stream that ended without a line break still ends its line.
        let line = std::mem::take(&mut self.pending);
        self.line(&line);
        if self.spoiled {
            return None;
        }
        match self.format {
            Format::Anthropic => {
                let input = self.input?;
                Some(Usage {
                    output: self.output?,
                    ..input
                })
            }
            Format::OpenAi | Format::Responses => self.complete,
        }
    }

    /// One line of a stream: its event's data, if it is a `data:` line.
    fn line(&mut self, line: &[u8]) {
        let Some(data) = line.strip_prefix(b"data:") else {
            return;
        };
        let Ok(event) = serde_json::from_slice::<Value>(data.trim_ascii()) else {
            return; // `[DONE]`, or a line that is not JSON: no usage in it
        };
        let usage = match self.format {
            Format::Anthropic => match event["type"].as_str() {
                Some("message_start") => {
                    self.input = self.read(|f| whole(f, &event["message"]["usage"]));
                    None
                }
                // Counts so far: the last is the answer's. Its input
                // counts, where it gives them, are the answer's too (what
                // the API writes now, and the sum over the rounds of an
                // answer the proxy's recall loop continued).
                Some("message_delta") => {
                    let usage = &event["usage"];
                    if let Some(input) = &mut self.input {
                        for (field, count) in [
                            ("input_tokens", &mut input.uncached),
                            ("cache_read_input_tokens", &mut input.cache_read),
                            ("cache_creation_input_tokens", &mut input.cache_write),
                        ] {
                            match &usage[field] {
                                Value::Null => {}
                                value => match value.as_u64() {
                                    Some(n) => *count = n,
                                    None => self.spoiled = true,
                                },
                            }
                        }
                    }
                    usage["output_tokens"].as_u64()
                }
                _ => None,
            },
            Format::OpenAi => {
                if event.get("usage").is_some_and(|u| !u.is_null()) {
                    self.complete = self.read(|f| whole(f, &event["usage"]));
                }
                None
            }
            Format::Responses => {
                if event["type"] == "response.completed" {
                    self.complete = self.read(|f| whole(f, &event["response"]["usage"]));
                }
                None
            }
        };
        if usage.is_some() {
            self.output = usage;
        }
    }

    /// `read` of this reader's format; a block that cannot be read spoils
    /// the figure.
    fn read(&mut self, read: impl FnOnce(Format) -> Option<Usage>) -> Option<Usage> {
        let usage = read(self.format);
        self.spoiled |= usage.is_none();
        usage
    }
}

/// A usage block as `format` writes it, when it is one.
fn whole(format: Format, usage: &Value) -> Option<Usage> {
    let count = |value: &Value| value.as_u64();
    // An optional count: absent is 0, present must be a count.
    let optional = |value: &Value| match value {
        Value::Null => Some(0),
        value => value.as_u64(),
    };
    match format {
        Format::Anthropic => Some(Usage {
            uncached: count(&usage["input_tokens"])?,
            cache_read: optional(&usage["cache_read_input_tokens"])?,
            cache_write: optional(&usage["cache_creation_input_tokens"])?,
            // `message_start` says 1 or so before anything is written.
            output: optional(&usage["output_tokens"])?,
        }),
        // Both OpenAI APIs count all of the input, the cached part among
        // it, and bill no cache writes; only their names differ.
        Format::OpenAi | Format::Responses => {
            let (input, details, output) = match format {
                Format::OpenAi => (
                    "prompt_tokens",
                    "prompt_tokens_details",
                    "completion_tokens",
                ),
                _ => ("input_tokens", "input_tokens_details", "output_tokens"),
            };
            let input = count(&usage[input])?;
            let cached = optional(&usage[details]["cached_tokens"])?;
            Some(Usage {
                uncached: input.checked_sub(cached)?,
                cache_read: cached,
                cache_write: 0,
                output: count(&usage[output])?,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(format: Format, streamed: bool, chunks: &[&str]) -> Option<Usage> {
        let mut reader = UsageReader::new(format, streamed);
        for chunk in chunks {
            reader.feed(chunk.as_bytes());
        }
        reader.finish()
    }

    const ANTHROPIC: &str = r#"{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Hi"}],"usage":{"input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":9000,"output_tokens":41}}"#;

    #[test]
    fn each_protocol_plain() {
        assert_eq!(
            read(
                Format::Anthropic,
                false,
                &[&ANTHROPIC[..50], &ANTHROPIC[50..]]
            ),
            Some(Usage {
                cache_read: 9000,
                cache_write: 300,
                uncached: 12,
                output: 41
            })
        );
        let chat = r#"{"choices":[],"usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920}}}"#;
        assert_eq!(
            read(Format::OpenAi, false, &[chat]),
            Some(Usage {
                cache_read: 1920,
                cache_write: 0,
                uncached: 86,
                output: 300
            })
        );
        let responses = r#"{"object":"response","usage":{"input_tokens":328,"input_tokens_details":{"cached_tokens":256},"output_tokens":52,"total_tokens":380}}"#;
        assert_eq!(
            read(Format::Responses, false, &[responses]),
            Some(Usage {
                cache_read: 256,
                cache_write: 0,
                uncached: 72,
                output: 52
            })
        );
    }

    #[test]
    fn each_protocol_streamed_in_pieces() {
        let anthropic = concat!(
            "event: message_start\n",
            "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":7,\"cache_creation_input_tokens\":120,\"cache_read_input_tokens\":4000,\"output_tokens\":1}}}\n\n",
            "event: content_block_delta\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
            "event: message_delta\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":15}}\n\n",
            "event: message_stop\n",
            "data: {\"type\":\"message_stop\"}\n\n",
        );
        // Cut anywhere, the pieces read the same.
        for at in [1, 37, 200, anthropic.len() - 3] {
            assert_eq!(
                read(
                    Format::Anthropic,
                    true,
                    &[&anthropic[..at], &anthropic[at..]]
                ),
                Some(Usage {
                    cache_read: 4000,
                    cache_write: 120,
                    uncached: 7,
                    output: 15
                }),
                "{at}"
            );
        }
        let chat = concat!(
            "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}],\"usage\":null}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":500,\"completion_tokens\":9,\"prompt_tokens_details\":{\"cached_tokens\":384}}}\n\n",
            "data: [DONE]\n\n",
        );
        assert_eq!(
            read(Format::OpenAi, true, &[chat]),
            Some(Usage {
                cache_read: 384,
                cache_write: 0,
                uncached: 116,
                output: 9
            })
        );
        let responses = concat!(
            "event: response.output_text.delta\n",
            "data: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n",
            "event: response.completed\n",
            "data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":90,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":4}}}\n\n",
        );
        assert_eq!(
            read(Format::Responses, true, &[responses]),
            Some(Usage {
                cache_read: 0,
                cache_write: 0,
                uncached: 90,
                output: 4
            })
        );
    }

    /// No usage, a block that is not a usage block, a stream cut before its
    /// usage is complete: unknown, never a guess.
    #[test]
    fn what_is_not_said_is_unknown() {
        assert_eq!(read(Format::Anthropic, false, &[r#"{"content":[]}"#]), None);
        assert_eq!(read(Format::Anthropic, false, &["not json"]), None);
        assert_eq!(
            read(
                Format::Anthropic,
                false,
                &[r#"{"usage":{"input_tokens":"12","output_tokens":3}}"#]
            ),
            None
        );
        assert_eq!(
            read(
                Format::OpenAi,
                false,
                &[
                    r#"{"usage":{"prompt_tokens":5,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":9}}}"#
                ]
            ),
            None,
            "more cached than sent"
        );
        // Chat streamed without `include_usage`: no usage chunk.
        assert_eq!(
            read(
                Format::OpenAi,
                true,
                &["data: {\"choices\":[{\"delta\":{}}]}\n\ndata: [DONE]\n\n"]
            ),
            None
        );
        // Cut after message_start, before any message_delta.
        assert_eq!(
            read(
                Format::Anthropic,
                true,
                &[
                    "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":7,\"output_tokens\":1}}}\n\n"
                ]
            ),
            None
        );
        // A malformed usage in message_start spoils the stream's figure.
        assert_eq!(
            read(
                Format::Anthropic,
                true,
                &[concat!(
                    "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":-1}}}\n\n",
                    "data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":5}}\n\n",
                )]
            ),
            None
        );
        // Responses cut before response.completed.
        assert_eq!(
            read(
                Format::Responses,
                true,
                &["data: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n"]
            ),
            None
        );
    }
}
