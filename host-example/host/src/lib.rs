//! condense's wasmtime host, as a library: runs a compressor and a summarizer
//! component in a sandbox and hands an agent runtime a request it can always
//! send. No command line, no config file format, no embedded components:
//! those are `condense-cli`'s, `condense-config`'s and `condense-embedded`'s.
//!
//! - [`sandbox`]: the engine and every limit a guest runs under, and why a
//!   store stopped;
//! - [`failure`]: what went wrong, named per component;
//! - [`component`]: where a component comes from, its label, loading it;
//! - [`runtime`]: the compressor's calls (the summarizer chain in `chain`,
//!   a summarizer's exports in `summarizer`, what a fold replaces in
//!   `folding`, the `llm` import in `llm_import`);
//! - [`middleware`]: the fail-open entry point, validating every output;
//! - [`report`]: what a call did ([`HostReport`]), and [`events`]: the
//!   compaction event made from it, logged and appended to an events file;
//! - [`transcript`]: a history kept in memory and measured once per message,
//!   so that a call between compactions costs what it sends;
//! - [`body`]: [`compress_body`], the whole job on a request body;
//! - [`store`]: where one session's checkpoint is kept (a file, memory);
//! - [`formats`]: OpenAI Chat Completions, OpenAI Responses and Anthropic
//!   Messages request bodies to messages and back (the `condense-formats`
//!   crate);
//! - [`timing`]: the clock decisions are made by, and when a recorded
//!   session's calls happened (the cache expiring).
//!
//! The checkpoints of many sessions (in memory, an embedded database,
//! Redis), each request's found again from its own messages, are
//! `condense-sessions`'s; replaying a recorded session and the offline
//! optimum `condense-replay`'s; what a model costs `condense-config`'s.
//!
//! ```no_run
//! use condense_host::{BodyConfig, ComponentSource, FileStore, Limits, Middleware, Runtime};
//! let runtime = Runtime::new(
//!     Limits::default(),
//!     ComponentSource::Path("compressor.wasm".into()),
//!     ComponentSource::Path("my_summarizer.wasm".into()),
//! )?;
//! let middleware = Middleware::new(runtime);
//! let config = BodyConfig {
//!     core: condense_model::CoreConfig::for_threshold(100_000),
//!     settings: "{}".into(),
//!     cold: None,
//!     recall: None,
//! };
//! # let request_body = b"{\"messages\": []}";
//! let mut session = FileStore::new("session.ckpt");
//! let sent = condense_host::compress_body(&middleware, &config, request_body, None, &mut session)?;
//! // Send `sent.body` to the provider.
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod body;
mod chain;
pub mod component;
mod convert;
pub mod events;
pub mod failure;
mod folding;
pub mod llm;
mod llm_import;
pub mod middleware;
pub mod prepared;
pub mod report;
pub mod runtime;
pub mod sandbox;
pub mod store;
mod summarizer;
pub mod timing;
mod token_memo;
pub mod transcript;

pub use condense_formats as formats;

pub use body::{
    BodyConfig, BodyError, ColdSettings, CompressedBody, PrepareError, Recall, compress_body,
    compress_body_for, prepare_body,
};
pub use component::{CONTRACT_VERSION, ComponentSource, Embedded};
pub use failure::{ComponentLabel, ComponentRole, FailureKind, GuestFailure};
pub use middleware::{Compressed, Middleware, SessionCheckpoint};
pub use report::{Cause, HostReport, Status, Verdict};
pub use runtime::{Call, Called, LoadError, Runtime};
pub use sandbox::{CodeCache, Limits};
pub use store::{CheckpointStore, FileStore, MemoryStore, StoreError};
pub use transcript::{Transcript, request_bytes};
