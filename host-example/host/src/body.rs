//! The product's job in one call, for any embedder: a request body in, the
//! body to send out. [`compress_body`] detects the format, parses and checks
//! the body, compresses it through the fail-open [`Middleware`], renders the
//! result from the body's own JSON, and stores the new checkpoint. The CLI,
//! the demo and the tests go through it; a proxy or an agent runtime does too.
//!
//! Checkpoints live in a [`CheckpointStore`], one per session: a file
//! ([`FileStore`], replaced atomically) or memory ([`MemoryStore`]). A store
//! that cannot be read is not an error: condense's own state must never block
//! a model call, so the checkpoint is ignored (the report says why) and the
//! fold is recomputed.

use crate::formats::{self, Format, Parsed};
use crate::middleware::{HostReport, Middleware, SessionCheckpoint};
use condense_model::CoreConfig;
use condense_model::tokens::estimate_text;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Where one session's checkpoint is kept between calls.
pub trait CheckpointStore {
    /// The stored checkpoint; `Ok(None)` when there is none yet.
    fn load(&mut self) -> Result<Option<SessionCheckpoint>, StoreError>;
    /// Replaces the stored checkpoint.
    fn save(&mut self, checkpoint: &SessionCheckpoint) -> Result<(), StoreError>;
    /// Removes the stored checkpoint (one that could not be read, when the
    /// call made none to replace it).
    fn clear(&mut self) -> Result<(), StoreError>;
}

/// A checkpoint store that failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot read checkpoint file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("checkpoint file {path} is not a checkpoint this condense reads ({reason})")]
    Unreadable { path: PathBuf, reason: String },
    #[error("cannot write checkpoint file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A store of many sessions ([`crate::sessions`]) failed.
    #[error("checkpoint store ({store}): {reason}")]
    Backend { store: &'static str, reason: String },
}

/// The checkpoint in memory, for hosts that keep sessions themselves.
#[derive(Clone, Debug, Default)]
pub struct MemoryStore(pub Option<SessionCheckpoint>);

impl CheckpointStore for MemoryStore {
    fn load(&mut self) -> Result<Option<SessionCheckpoint>, StoreError> {
        Ok(self.0.clone())
    }

    fn save(&mut self, checkpoint: &SessionCheckpoint) -> Result<(), StoreError> {
        self.0 = Some(checkpoint.clone());
        Ok(())
    }

    fn clear(&mut self) -> Result<(), StoreError> {
        self.0 = None;
        Ok(())
    }
}

/// One file per session, JSON. A missing file is a session without a
/// checkpoint yet; a new checkpoint is written to a temporary file beside
/// it, flushed to disk and renamed over it, so a reader (or a crash) never
/// sees half a file.
#[derive(Clone, Debug)]
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    pub fn new(path: impl Into<PathBuf>) -> FileStore {
        FileStore { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl CheckpointStore for FileStore {
    fn load(&mut self) -> Result<Option<SessionCheckpoint>, StoreError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|e| StoreError::Unreadable {
                        path: self.path.clone(),
                        reason: e.to_string(),
                    })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Read {
                path: self.path.clone(),
                source,
            }),
        }
    }

    fn save(&mut self, checkpoint: &SessionCheckpoint) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec_pretty(checkpoint).expect("a checkpoint serialises");
        write_atomically(&self.path, &bytes).map_err(|source| StoreError::Write {
            path: self.path.clone(),
            source,
        })
    }

    fn clear(&mut self) -> Result<(), StoreError> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(StoreError::Write {
                path: self.path.clone(),
                source: e,
            }),
            _ => Ok(()),
        }
    }
}

/// Writes `bytes` to a temporary file beside `path`, flushes it to disk and
/// renames it over `path`. Errors are about `path`, never the temporary name.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// What [`compress_body`] compresses with, configured once.
#[derive(Clone, Debug)]
pub struct BodyConfig {
    pub core: CoreConfig,
    /// The compressor's settings JSON.
    pub settings: String,
    /// The format the body must be in; `None`: told from the body.
    pub format: Option<Format>,
}

/// The body to send, and what happened.
#[derive(Clone, Debug)]
pub struct CompressedBody {
    /// The request body to send, JSON.
    pub body: Vec<u8>,
    pub format: Format,
    pub report: HostReport,
}

/// A request body condense cannot read: it is malformed, and the provider
/// would reject it too. (Everything else fails open.)
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error(
        "request body of {size} bytes is over limits.max_request_bytes = {limit} \
         (raise it in the config file's [limits] table)"
    )]
    TooLarge { size: usize, limit: usize },
    #[error(
        "not UTF-8: byte 0x{byte:02x} at offset {offset} (line {line}, column {column}) is not \
         part of a UTF-8 character; a JSON request body must be UTF-8"
    )]
    NotUtf8 {
        byte: u8,
        offset: usize,
        line: usize,
        column: usize,
    },
    #[error("empty, expected a request body (JSON)")]
    Empty,
    #[error("not valid JSON: {0}")]
    Json(serde_json::Error),
    #[error("cannot tell the format: {0}")]
    UnknownFormat(String),
    #[error("not a valid {format} request: {reason}")]
    Invalid { format: Format, reason: String },
    /// A valid request with nothing condense compresses
    /// ([`formats::nothing_to_compress`]): to be sent on as it is.
    #[error("nothing to compress in this {format} request: {reason}")]
    NothingToCompress { format: Format, reason: String },
}

/// Reads a request body: UTF-8 JSON, in `format` or the one it looks like,
/// with tool calls and results that pair up. Every error names the JSON
/// location of the problem.
pub fn parse_body(body: &[u8], format: Option<Format>) -> Result<Parsed, BodyError> {
    let text = std::str::from_utf8(body).map_err(|e| {
        let offset = e.valid_up_to();
        let line_start = body[..offset]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        BodyError::NotUtf8 {
            byte: body[offset],
            offset,
            line: body[..offset].iter().filter(|&&b| b == b'\n').count() + 1,
            column: offset - line_start + 1,
        }
    })?;
    if text.trim().is_empty() {
        return Err(BodyError::Empty);
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(BodyError::Json)?;
    let detected = formats::detect(&value).map_err(|e| BodyError::UnknownFormat(e.to_string()));
    let format = match (format, detected) {
        (None, detected) => detected?,
        // A forced format the body does not fit would render a request the
        // provider rejects (a result whose call was folded, say).
        (Some(Format::OpenAi), Ok(Format::Anthropic)) => {
            return Err(BodyError::Invalid {
                format: Format::OpenAi,
                reason: "the body is an Anthropic Messages request (--format anthropic, or \
                         leave the format to be told from the body)"
                    .into(),
            });
        }
        (Some(forced), _) => forced,
    };
    if let Some(reason) = formats::nothing_to_compress(format, &value) {
        return Err(BodyError::NothingToCompress { format, reason });
    }
    let invalid = |e: formats::FormatError| BodyError::Invalid {
        format,
        reason: e.to_string(),
    };
    let parsed = Parsed::parse(value, format).map_err(invalid)?;
    // Checked here, before any component runs: the compressor would refuse
    // such a request and the middleware would send it on unchanged
    // (fail-open), so the user would never learn that the request itself is
    // malformed, and the provider would reject it anyway.
    parsed.check_tool_pairs().map_err(invalid)?;
    Ok(parsed)
}

/// Compresses one request body: parse and check it ([`parse_body`]),
/// compress it through `middleware` with the checkpoint in `store`, render the
/// result (what condense kept comes back as the body's own JSON), and store
/// the new checkpoint. A malformed body is an error before anything runs or
/// is stored; everything after that fails open: the body goes out unchanged
/// and the report says why.
///
/// The body's tool definitions (`tools`) are sent to the model with every
/// request, so their tokens count against the threshold and the target.
pub fn compress_body(
    middleware: &Middleware,
    config: &BodyConfig,
    body: &[u8],
    store: &mut dyn CheckpointStore,
) -> Result<CompressedBody, BodyError> {
    let limit = middleware.max_request_bytes();
    if body.len() > limit {
        return Err(BodyError::TooLarge {
            size: body.len(),
            limit,
        });
    }
    let parsed = parse_body(body, config.format)?;
    Ok(compress_parsed(middleware, config, &parsed, store))
}

/// [`compress_body`] for a body already read with [`parse_body`] (a host that
/// checks the body before it loads any component parses it only once).
pub fn compress_parsed(
    middleware: &Middleware,
    config: &BodyConfig,
    parsed: &Parsed,
    store: &mut dyn CheckpointStore,
) -> CompressedBody {
    let (stored, unreadable) = match store.load() {
        Ok(stored) => (stored, None),
        Err(e) => (None, Some(format!("{e}: ignored"))),
    };
    let core = with_overhead(&config.core, tools_tokens(parsed.body()));
    let mut sent = middleware.compress(parsed.messages(), &core, &config.settings, stored.as_ref());
    if let Some(why) = unreadable {
        tracing::warn!("{why}");
        sent.report.checkpoint_ignored = Some(why);
        // Nothing to replace it with: it must not be ignored again and again.
        if sent.checkpoint.is_none()
            && let Err(e) = store.clear()
        {
            tracing::warn!("{e}");
        }
    }
    let rendered = serde_json::to_vec(&parsed.render(&sent.items)).expect("JSON serialises");
    if let Some(checkpoint) = &sent.checkpoint
        && Some(checkpoint) != stored.as_ref()
        && let Err(e) = store.save(checkpoint)
    {
        // The request is still good to send: the next call recompacts.
        tracing::warn!("{e}");
        sent.report.store_error = Some(e.to_string());
    }
    CompressedBody {
        body: rendered,
        format: parsed.format(),
        report: sent.report,
    }
}

/// Tokens of the body's tool definitions, which the model is sent with every
/// request (about 10k in a Claude Code request).
pub fn tools_tokens(body: &serde_json::Value) -> u32 {
    body.get("tools")
        .map_or(0, |tools| estimate_text(&tools.to_string()))
}

/// `core` with `overhead` tokens of every request taken from the threshold
/// and the target, so that the messages get what is left. Held to the
/// smallest consistent config: an overhead that leaves nothing makes every
/// request compact as far as it can.
pub fn with_overhead(core: &CoreConfig, overhead: u32) -> CoreConfig {
    if overhead == 0 {
        return *core;
    }
    // The smallest threshold and summary budget the ranges allow.
    let (min_threshold, min_summary) = (1_000, 64);
    let token_threshold = core
        .token_threshold
        .saturating_sub(overhead)
        .max(min_threshold);
    let target_tokens = core
        .target_tokens
        .saturating_sub(overhead)
        .max(min_summary + 1)
        .min(token_threshold - 1);
    CoreConfig {
        token_threshold,
        target_tokens,
        keep_recent_tokens: core.keep_recent_tokens.min(target_tokens),
        summary_max_tokens: core
            .summary_max_tokens
            .min(target_tokens - 1)
            .max(min_summary),
        ..*core
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_and_file_stores_keep_what_they_are_given() {
        let checkpoint = SessionCheckpoint {
            checkpoint: condense_model::Checkpoint {
                version: 1,
                boundary: 4,
                state: b"{}".to_vec(),
            },
            prefix_hash: "ab".into(),
        };
        let mut memory = MemoryStore::default();
        assert!(memory.load().unwrap().is_none());
        memory.save(&checkpoint).unwrap();
        assert_eq!(memory.load().unwrap(), Some(checkpoint.clone()));

        let dir = tempfile::tempdir().unwrap();
        let mut file = FileStore::new(dir.path().join("session.ckpt"));
        assert!(file.load().unwrap().is_none());
        file.save(&checkpoint).unwrap();
        assert_eq!(file.load().unwrap(), Some(checkpoint));
        // Nothing but the file itself is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        std::fs::write(file.path(), "{\"checkpoint\": 3}").unwrap();
        let e = file.load().unwrap_err().to_string();
        assert!(e.contains("is not a checkpoint this condense reads"), "{e}");
    }

    #[test]
    fn an_unwritable_store_is_named_by_its_own_path() {
        let mut file = FileStore::new("/nonexistent-dir/session.ckpt");
        let checkpoint = SessionCheckpoint {
            checkpoint: condense_model::Checkpoint {
                version: 1,
                boundary: 0,
                state: Vec::new(),
            },
            prefix_hash: String::new(),
        };
        let e = file.save(&checkpoint).unwrap_err().to_string();
        assert!(
            e.starts_with("cannot write checkpoint file /nonexistent-dir/session.ckpt"),
            "{e}"
        );
    }

    #[test]
    fn a_forced_format_the_body_does_not_fit_is_an_error() {
        let anthropic = br#"{"system": "s", "messages": [{"role": "user", "content": "hi"}]}"#;
        let e = parse_body(anthropic, Some(Format::OpenAi))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("not a valid openai request: the body is an Anthropic Messages request"),
            "{e}"
        );
        assert!(parse_body(anthropic, Some(Format::Anthropic)).is_ok());
        assert!(parse_body(anthropic, None).is_ok());
    }

    #[test]
    fn tool_definitions_count_against_threshold_and_target() {
        let body =
            serde_json::json!({"tools": [{"name": "Bash", "description": "x ".repeat(3000)}]});
        let overhead = tools_tokens(&body);
        assert!(overhead > 2_500, "{overhead}");
        let core = CoreConfig::for_threshold(40_000);
        let shifted = with_overhead(&core, overhead);
        assert_eq!(shifted.token_threshold, 40_000 - overhead);
        assert_eq!(shifted.target_tokens, 20_000 - overhead);
        shifted.validate().unwrap();
        // An overhead larger than the threshold still gives a valid config.
        with_overhead(&core, 1_000_000).validate().unwrap();
        assert_eq!(tools_tokens(&serde_json::json!({"messages": []})), 0);
    }
}
