//! Server-sent events as the recall loop reads and writes them: a body cut
//! into whole events as its bytes arrive, each kept with its own bytes, so
//! an event the loop does not change goes to the client exactly as the
//! upstream wrote it.

use bytes::Bytes;
use serde_json::Value;

/// One event: its bytes (the blank line that ends it included), its
/// `event:` name and its `data:` lines joined.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub raw: Bytes,
    pub name: Option<String>,
    pub data: String,
}

impl Event {
    /// The data as JSON (`None`: not JSON, such as Chat's `[DONE]`, or no
    /// data at all, such as a comment kept alive).
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.data).ok()
    }

    /// Chat Completions' last event.
    pub fn is_done(&self) -> bool {
        self.data.trim() == "[DONE]"
    }
}

/// An event the loop wrote: `event: NAME` when it has one, and `data` on
/// one line.
pub fn write(name: Option<&str>, data: &Value) -> Bytes {
    let data = data.to_string();
    Bytes::from(match name {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    })
}

/// Cuts a body into events as its chunks arrive: an event is handed out
/// once its blank line has come, never before, and never later.
#[derive(Default)]
pub struct Splitter {
    pending: Vec<u8>,
    /// Where the first line of `pending` not yet read starts: a long event
    /// arriving in many chunks is read once.
    line: usize,
}

impl Splitter {
    /// The events `chunk` completes.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Event> {
        self.pending.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(newline) = self.pending[self.line..].iter().position(|&b| b == b'\n') {
            let end = self.line + newline;
            let blank = matches!(&self.pending[self.line..end], b"" | b"\r");
            self.line = end + 1;
            if blank {
                let raw = Bytes::copy_from_slice(&self.pending[start..self.line]);
                events.push(parse(raw));
                start = self.line;
            }
        }
        self.pending.drain(..start);
        self.line -= start;
        events
    }

    /// What is left at the end of the body: bytes of an event never ended
    /// by a blank line, which go on as they came.
    pub fn rest(self) -> Option<Bytes> {
        (!self.pending.is_empty()).then(|| Bytes::from(self.pending))
    }
}

/// An event's fields (the SSE rules: one space after the colon is not
/// part of the value; comments and other fields are not read).
fn parse(raw: Bytes) -> Event {
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (mut name, mut data) = (None, Vec::new());
    for line in text.lines() {
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => name = Some(value.to_owned()),
            "data" => data.push(value),
            _ => {}
        }
    }
    let data = data.join("\n");
    Event { raw, name, data }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_handed_out_whole_as_their_blank_line_arrives() {
        let body = "event: a\ndata: {\"x\":1}\n\n: keep-alive\n\ndata: [DONE]\r\n\r\nevent: b\ndata: 1\ndata: 2\n\ndata: cut";
        // Fed a byte at a time, the events are the same, each handed out
        // on the byte that ends it.
        for step in [1, 3, body.len()] {
            let mut splitter = Splitter::default();
            let mut events = Vec::new();
            for chunk in body.as_bytes().chunks(step) {
                events.extend(splitter.push(chunk));
            }
            let names: Vec<_> = events.iter().map(|e| e.name.as_deref()).collect();
            assert_eq!(names, [Some("a"), None, None, Some("b")]);
            assert_eq!(events[0].json(), Some(serde_json::json!({"x": 1})));
            assert_eq!(events[0].raw, "event: a\ndata: {\"x\":1}\n\n");
            assert_eq!(events[1].data, "");
            assert!(events[2].is_done());
            assert_eq!(events[3].data, "1\n2");
            let all: Vec<u8> = events.iter().flat_map(|e| e.raw.to_vec()).collect();
            assert_eq!(all, body.as_bytes()[..body.len() - "data: cut".len()]);
            assert_eq!(splitter.rest().as_deref(), Some(&b"data: cut"[..]));
        }
        let written = write(Some("ping"), &serde_json::json!({"type": "ping"}));
        assert_eq!(written, "event: ping\ndata: {\"type\":\"ping\"}\n\n");
    }
}
