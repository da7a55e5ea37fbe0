//! condense's agent runtime: the loop condense was made for. A session is a
//! journal on disk that only grows; before each model call the runtime
//! compiles the request and runs it through its layers, condense among
//! them; the model's answer and every tool call and result are
//! appended to the journal, never rewritten.
//!
//! - [`agent`]: the loop — the person's message, model calls and tool runs,
//!   each step journaled — and the playback of a recorded session;
//! - [`layers`]: the layers around each model call: condense, and a meter
//!   of the provider's token counts;
//! - [`context`]: the context compiler — the system prompt assembled from
//!   typed blocks within token budgets;
//! - [`journal`]: the session journal (append-only JSON lines, fsync per
//!   event, a crash-torn last line detected and skipped);
//! - [`model`]: the models the runtime calls (OpenAI-compatible, Anthropic,
//!   a replay of a recorded session) behind one trait;
//! - [`policy`]: whether a due compaction proceeds (automatic, rate-limited,
//!   asking someone);
//! - [`tools`]: the tool registry (each tool with its class, the source of
//!   the compressor's tool classes) and a small coding toolset confined to a
//!   working directory.

pub mod agent;
pub mod context;
pub mod journal;
pub mod layers;
pub mod model;
pub mod policy;
pub mod tools;
