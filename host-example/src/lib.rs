//! condense's wasmtime host: runs the compressor and summarizer components in
//! a sandbox and hands an agent runtime a request it can always send.
//!
//! - [`sandbox`]: the engine and every limit a guest runs under;
//! - [`runtime`]: loading components and calling them, failures named per component;
//! - [`middleware`]: the fail-open entry point, validating every output;
//! - [`embedded`]: the default components, built into the binary;
//! - [`formats`]: OpenAI and Anthropic request bodies to messages and back;
//! - [`settings`]: the configuration file;
//! - [`replay`]: replaying a recorded session and measuring cost and cache breaks.
//!
//! ```no_run
//! use condense_host::{ComponentSource, Limits, Middleware, Runtime, embedded};
//! # let history: Vec<condense_model::Message> = Vec::new();
//! let runtime = Runtime::new(
//!     Limits::default(),
//!     ComponentSource::Embedded(embedded::COMPRESSOR),
//!     ComponentSource::Path("my_summarizer.wasm".into()),
//! )?;
//! let middleware = Middleware::new(runtime);
//! let sent = middleware.compress(&history, &condense_model::CoreConfig::default(), "{}", None);
//! // Send `sent.messages(&history)`; store `sent.checkpoint` beside the session.
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod body;
pub mod cli;
mod convert;
pub mod embedded;
pub use condense_formats as formats;
pub mod middleware;
pub mod replay;
pub mod runtime;
pub mod sandbox;
pub mod settings;

pub use body::{
    BodyConfig, BodyError, CheckpointStore, CompressedBody, FileStore, MemoryStore, StoreError,
    compress_body,
};
pub use middleware::{Compressed, HostReport, Middleware, SessionCheckpoint, Status};
pub use runtime::{
    ComponentLabel, ComponentRole, ComponentSource, FailureKind, GuestFailure, Runtime,
};
pub use sandbox::{CodeCache, Limits};
