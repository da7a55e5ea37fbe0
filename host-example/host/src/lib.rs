//! condense's wasmtime host, as a library: runs a compressor and a summarizer
//! component in a sandbox and hands an agent runtime a request it can always
//! send. No command line, no config file format, no embedded components:
//! those are the `condense` crate's (`host-example/`).
//!
//! - [`sandbox`]: the engine and every limit a guest runs under;
//! - [`runtime`]: loading components and calling them, failures named per component;
//! - [`middleware`]: the fail-open entry point, validating every output;
//! - [`transcript`]: a history kept in memory and measured once per message,
//!   so that a call between compactions costs what it sends;
//! - [`body`]: [`compress_body`], the whole job on a request body, and the
//!   checkpoint stores;
//! - [`formats`]: OpenAI and Anthropic request bodies to messages and back
//!   (the `condense-formats` crate);
//! - [`sessions`]: the checkpoints of many sessions (in memory, in an embedded
//!   database), each request's found again from its own messages;
//! - [`replay`]: replaying a recorded session and measuring cost and cache breaks.
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
//!     format: None,
//! };
//! # let request_body = b"{\"messages\": []}";
//! let mut session = FileStore::new("session.ckpt");
//! let sent = condense_host::compress_body(&middleware, &config, request_body, &mut session)?;
//! // Send `sent.body` to the provider.
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod body;
mod convert;
pub mod llm;
pub mod middleware;
pub mod replay;
pub mod runtime;
pub mod sandbox;
pub mod sessions;
pub mod transcript;

pub use condense_formats as formats;

pub use body::{
    BodyConfig, BodyError, CheckpointStore, CompressedBody, FileStore, MemoryStore, StoreError,
    compress_body, compress_parsed,
};
pub use middleware::{Compressed, HostReport, Middleware, SessionCheckpoint, Status, Verdict};
pub use runtime::{
    CONTRACT_VERSION, Called, ComponentLabel, ComponentRole, ComponentSource, FailureKind,
    GuestFailure, LoadError, Runtime,
};
pub use sandbox::{CodeCache, Limits};
pub use transcript::Transcript;
