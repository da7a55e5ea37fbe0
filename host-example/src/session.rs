//! The session files the commands read: a journal of `condense agent`
//! (`.jsonl`), or a request body or bare message list in either format.

use anyhow::{Context, Result};
use condense_host::body;
use condense_host::events::EventLog;
use condense_host::formats::Parsed;
use condense_model::Message;
use std::path::Path;

/// A session file, read.
pub enum SessionFile {
    /// A journal's conversation, and how many torn lines were skipped.
    Journal { messages: Vec<Message>, torn: usize },
    /// A request body (a bare message list reads as one), and its bytes as
    /// read (what `condense compact` compresses).
    Body { parsed: Parsed, bytes: Vec<u8> },
}

impl SessionFile {
    /// Reads `path`: a journal by its `.jsonl` extension, otherwise a body
    /// whose format is told from its contents. Errors name the file.
    pub fn read(path: &Path) -> Result<SessionFile> {
        if path.extension().is_some_and(|e| e == "jsonl") {
            let contents = condense_runtime::journal::read(path)?;
            let torn = contents.torn.len();
            if torn > 0 {
                tracing::warn!(
                    "{}: {torn} line(s) torn by a crash were skipped",
                    path.display()
                );
            }
            return Ok(SessionFile::Journal {
                messages: contents.messages().cloned().collect(),
                torn,
            });
        }
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let parsed = body::parse_body(text.as_bytes(), None)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Ok(SessionFile::Body {
            parsed,
            bytes: text.into_bytes(),
        })
    }

    pub fn messages(&self) -> &[Message] {
        match self {
            SessionFile::Journal { messages, .. } => messages,
            SessionFile::Body { parsed, .. } => parsed.messages(),
        }
    }

    /// The session's messages, owned.
    pub fn into_messages(self) -> Vec<Message> {
        match self {
            SessionFile::Journal { messages, .. } => messages,
            SessionFile::Body { parsed, .. } => parsed.messages().to_vec(),
        }
    }
}

/// The `--events FILE` a command appends compaction events to, if given.
pub fn events_log(path: Option<&Path>) -> Result<Option<EventLog>> {
    path.map(|path| EventLog::open(path).with_context(|| format!("--events {}", path.display())))
        .transpose()
}
