//! The session journal: what happened in a session, one JSON event per line,
//! in a file that only grows.
//!
//! The journal is the durable history. The model is sent compressed copies
//! of it; nothing condense does is ever written back, so a compaction can
//! always be redone from the journal, with another summarizer or none.
//!
//! - Every append is one `write` of a whole line followed by `fsync`: an
//!   event the runtime acted on (a tool it ran, an answer it showed) is on
//!   disk before the next step.
//! - A crash can still leave the last line torn (written in part). Reading
//!   detects it — the line does not parse and no newline ends it — and skips
//!   it with a warning; the bytes stay in the file, never rewritten. Resuming
//!   such a journal first ends the torn line and appends a `torn` record
//!   naming it, so the next event starts a line of its own and every later
//!   read knows the line for what it is (and warns again: never silently
//!   lost).
//! - Any other line that does not parse is damage the runtime did not cause
//!   (an edited file, a different format): reading fails and names the line.

use condense_host::events::Compaction;
use condense_model::Message;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// One line of the journal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A message from the person: the task, or a later turn.
    User { message: Message },
    /// The model's answer: text, reasoning and the tool calls it asks for.
    ModelResponse {
        message: Message,
        /// The provider's token counts for the call, when it reported them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        /// When the answer came (ms since the Unix epoch): a session resumed
        /// later knows how long its prompt cache has been idle. Absent in
        /// journals written before it was recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at_ms: Option<u64>,
    },
    /// The runtime is about to run a tool call. A call with no result after
    /// it was interrupted (the runtime stopped while the tool ran).
    ToolCall { call_id: String, name: String },
    /// The result of a tool call, as the message the model is sent.
    ToolResult { message: Message },
    /// condense compacted the request of a model call.
    Compaction(Compaction),
    /// Line `line` (1-based), just before this record, was torn by a crash
    /// and is skipped. Written by a resume; not part of [`Contents::events`].
    Torn { line: usize, bytes: usize },
}

impl Event {
    /// The message this event adds to the conversation, if any.
    pub fn message(&self) -> Option<&Message> {
        match self {
            Event::User { message }
            | Event::ModelResponse { message, .. }
            | Event::ToolResult { message } => Some(message),
            Event::ToolCall { .. } | Event::Compaction(_) | Event::Torn { .. } => None,
        }
    }
}

/// Token counts a provider reports for one model call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens, cached ones included.
    pub input_tokens: u64,
    /// Input tokens read from the provider's prompt cache.
    pub cached_tokens: u64,
    pub output_tokens: u64,
}

/// Why a journal could not be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path}: a journal already exists there (resume it instead)")]
    Exists { path: PathBuf },
    #[error("{path}, line {line}: not a journal event: {why}")]
    Damaged {
        path: PathBuf,
        line: usize,
        why: String,
    },
}

/// The last line of a journal, torn by a crash and skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornLine {
    /// 1-based line number.
    pub line: usize,
    /// The bytes the line holds.
    pub bytes: usize,
}

/// A journal as read: its events in order, and the lines crashes tore.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contents {
    pub events: Vec<Event>,
    pub torn: Vec<TornLine>,
}

impl Contents {
    /// The conversation the events make, oldest first.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.events.iter().filter_map(Event::message)
    }

    /// When the latest model call answered (ms since the Unix epoch), if the
    /// journal recorded it.
    pub fn last_model_call_ms(&self) -> Option<u64> {
        self.events.iter().rev().find_map(|e| match e {
            Event::ModelResponse { at_ms, .. } => Some(*at_ms),
            _ => None,
        })?
    }

    /// Tool calls that were started and have no result (the runtime stopped
    /// while they ran), in order.
    pub fn interrupted_calls(&self) -> Vec<(&str, &str)> {
        let answered: std::collections::HashSet<&str> = self
            .messages()
            .flat_map(|m| m.tool_results().map(|r| r.call_id.as_str()))
            .collect();
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::ToolCall { call_id, name } if !answered.contains(call_id.as_str()) => {
                    Some((call_id.as_str(), name.as_str()))
                }
                _ => None,
            })
            .collect()
    }
}

/// An open journal, appending.
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Starts a journal at `path`, which must not exist yet.
    pub fn create(path: impl Into<PathBuf>) -> Result<Journal, JournalError> {
        let path = path.into();
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&path)
            .map_err(|source| match source.kind() {
                io::ErrorKind::AlreadyExists => JournalError::Exists { path: path.clone() },
                _ => JournalError::Io {
                    path: path.clone(),
                    source,
                },
            })?;
        // The new name must survive a crash too.
        sync_parent(&path)?;
        Ok(Journal { path, file })
    }

    /// Opens an existing journal to append to it, with what it holds. A torn
    /// last line is reported (and logged), kept, and ended with a newline.
    pub fn resume(path: impl Into<PathBuf>) -> Result<(Journal, Contents), JournalError> {
        let path = path.into();
        let io_error = |source| JournalError::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(io_error)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io_error)?;
        let read = parse(&path, &bytes)?;
        let mut journal = Journal { path, file };
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            // Parsing succeeded, so the unterminated line is the torn one.
            let torn = read.torn.last().expect("an unterminated line is torn");
            let marker = Event::Torn {
                line: torn.line,
                bytes: torn.bytes,
            };
            let mut line = b"\n".to_vec();
            line.extend(serde_json::to_vec(&marker).expect("journal events serialise"));
            line.push(b'\n');
            journal.write_line(&line)?;
        }
        Ok((journal, read))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `event` and waits until it is on disk.
    pub fn append(&mut self, event: &Event) -> Result<(), JournalError> {
        let mut line = serde_json::to_vec(event).expect("journal events serialise");
        line.push(b'\n');
        self.write_line(&line)
    }

    fn write_line(&mut self, line: &[u8]) -> Result<(), JournalError> {
        // One write of the whole line: with O_APPEND it lands at the end in
        // one piece, or (on a crash) as the torn last line reading expects.
        self.file
            .write_all(line)
            .and_then(|()| self.file.sync_data())
            .map_err(|source| JournalError::Io {
                path: self.path.clone(),
                source,
            })
    }
}

/// Reads the journal at `path`.
pub fn read(path: impl AsRef<Path>) -> Result<Contents, JournalError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| JournalError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse(path, &bytes)
}

fn parse(path: &Path, bytes: &[u8]) -> Result<Contents, JournalError> {
    let mut pieces: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    // `split` yields an empty piece after a final newline (or of no bytes);
    // otherwise the last piece is an unterminated line.
    let terminated = pieces.last().is_some_and(|last| last.is_empty());
    if terminated {
        pieces.pop();
    }
    let parsed: Vec<Result<Event, serde_json::Error>> = pieces
        .iter()
        .map(|line| serde_json::from_slice(line))
        .collect();
    // Line i + 1 is a torn line a resume marked: the record after it names it.
    let marked: Vec<bool> = (0..parsed.len())
        .map(|i| matches!(parsed.get(i + 1), Some(Ok(Event::Torn { line, .. })) if *line == i + 1))
        .collect();
    let mut read = Contents::default();
    for (i, result) in parsed.into_iter().enumerate() {
        let number = i + 1;
        let last = number == pieces.len();
        match result {
            Ok(Event::Torn { .. }) => {}
            Ok(event) => read.events.push(event),
            Err(why) => {
                // Torn: a resume marked it so, or it is the last line and
                // no newline ends it (the crash was the last thing to
                // happen).
                let unterminated = last && !terminated;
                if !marked[i] && !unterminated {
                    return Err(JournalError::Damaged {
                        path: path.to_owned(),
                        line: number,
                        why: why.to_string(),
                    });
                }
                let bytes = pieces[i].len();
                tracing::warn!(
                    "{}, line {number}: torn by a crash ({bytes} bytes): skipped",
                    path.display()
                );
                read.torn.push(TornLine {
                    line: number,
                    bytes,
                });
            }
        }
    }
    Ok(read)
}

fn sync_parent(path: &Path) -> Result<(), JournalError> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(parent)
        .and_then(|dir| dir.sync_all())
        .map_err(|source| JournalError::Io {
            path: parent.to_owned(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_model::{Part, Role, ToolCall, ToolResult};

    fn events() -> Vec<Event> {
        let call = ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a.txt"}"#.into(),
        };
        vec![
            Event::User {
                message: Message::text(Role::User, "fix the bug"),
            },
            Event::ModelResponse {
                message: Message {
                    role: Role::Assistant,
                    parts: vec![Part::Text("looking".into()), Part::ToolCall(call)],
                },
                usage: Some(Usage {
                    input_tokens: 120,
                    cached_tokens: 100,
                    output_tokens: 12,
                }),
                at_ms: Some(1_700_000_000_000),
            },
            Event::ToolCall {
                call_id: "c1".into(),
                name: "read_file".into(),
            },
            Event::ToolResult {
                message: Message {
                    role: Role::Tool,
                    parts: vec![Part::ToolResult(ToolResult {
                        call_id: "c1".into(),
                        content: "line one\n\"quoted\"\n".into(),
                        is_error: false,
                    })],
                },
            },
        ]
    }

    fn write_all(path: &Path, events: &[Event]) {
        let mut journal = Journal::create(path).unwrap();
        for event in events {
            journal.append(event).unwrap();
        }
    }

    #[test]
    fn appended_events_read_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        write_all(&path, &events());
        let read = read(&path).unwrap();
        assert_eq!(read.events, events());
        assert!(read.torn.is_empty());
        assert_eq!(read.messages().count(), 3);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 4, "one event per line:\n{text}");
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn a_journal_is_created_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        Journal::create(&path).unwrap();
        assert!(matches!(
            Journal::create(&path),
            Err(JournalError::Exists { .. })
        ));
    }

    #[test]
    fn a_torn_last_line_is_skipped_kept_and_marked_when_resumed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let events = events();
        write_all(&path, &events[..2]);
        // A crash in the middle of the third append.
        let whole = serde_json::to_vec(&events[2]).unwrap();
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&whole[..whole.len() / 2]).unwrap();
        drop(file);
        let crashed = std::fs::read(&path).unwrap();

        let torn = read(&path).unwrap();
        assert_eq!(torn.events, events[..2]);
        let line = TornLine {
            line: 3,
            bytes: whole.len() / 2,
        };
        assert_eq!(torn.torn, std::slice::from_ref(&line));

        let (mut journal, resumed) = Journal::resume(&path).unwrap();
        assert_eq!(resumed, torn);
        journal.append(&events[2]).unwrap();
        journal.append(&events[3]).unwrap();
        drop(journal);

        let after = std::fs::read(&path).unwrap();
        assert!(
            after.starts_with(&crashed),
            "the torn bytes are never rewritten"
        );
        let read = read(&path).unwrap();
        assert_eq!(read.events, events, "the events around it are all there");
        assert_eq!(read.torn, [line], "and the torn line is still reported");

        // Resuming again adds nothing before the next event.
        let (_, again) = Journal::resume(&path).unwrap();
        assert_eq!(again, read);
        assert_eq!(std::fs::read(&path).unwrap(), after);
    }

    #[test]
    fn a_damaged_line_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        write_all(&path, &events()[..1]);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"event\":\"user\"}\n").unwrap();
        drop(file);
        let err = read(&path).unwrap_err();
        assert!(
            matches!(err, JournalError::Damaged { line: 2, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("line 2"), "{err}");
        assert!(matches!(
            Journal::resume(&path),
            Err(JournalError::Damaged { line: 2, .. })
        ));
    }

    #[test]
    fn a_call_with_no_result_is_interrupted() {
        let events = events();
        let read = Contents {
            events: events[..3].to_vec(),
            torn: Vec::new(),
        };
        assert_eq!(read.interrupted_calls(), [("c1", "read_file")]);
        let read = Contents {
            events,
            torn: Vec::new(),
        };
        assert!(read.interrupted_calls().is_empty());
    }
}
