//! The condense configuration file (TOML): its typed sections and
//! defaults, reading it with its per-agent overrides, validation, its JSON
//! Schema, writing it back, and building the
//! [`Middleware`](condense_host::Middleware) it describes.
//!
//! ```toml
//! token_threshold = 100000      # compressor keys, as in the WIT `config` record
//! target_tokens = 40000
//! clear_mode = "truncate"
//!
//! [tools]                       # tool classes by name pattern (`*`, `?`)
//! mutating = ["Edit", "Write", "mcp__fs__write*"]
//!
//! [components]                  # optional: swap guests without rebuilding the host
//! summarizer = "my_summarizer.wasm"
//!
//! [limits]                      # optional: sandbox limits per guest call
//! memory_mib = 256
//! timeout_ms = 5000
//! max_request_bytes = 67108864  # larger requests are rejected / sent unchanged
//!
//! [agents.review]               # optional: per-agent overrides of any key above
//! token_threshold = 60000
//! [agents.review.tools]
//! exec_capable = []             # a list replaces the top-level list
//! ```
//!
//! Parsed and validated once, when the host is set up (configure once, call
//! many), every agent included: unknown fields are rejected with their full
//! path (`agents.review.token_treshold`), wrong types with the type expected,
//! out-of-range values with the allowed range. An agent's settings are the
//! top-level ones with the agent's table merged over them key by key (a table
//! merges key by key, any other value, a list included, replaces). Relative
//! component paths resolve against the file's directory.
//!
//! [`json_schema`] describes the file, generated from these types: the
//! descriptions are the field docs, the numeric ranges come from
//! [`condense_model::CORE_RANGES`], [`LIMIT_RANGES`] and [`LLM_RANGES`], the
//! tables `validate` enforces.
//!
//! A file per job:
//!
//! - [`sections`]: the typed tables and their defaults;
//! - [`file`]: reading the TOML, merging `[agents.NAME]` over the top level;
//! - [`validate`]: the ranges and the checks run on every agent at load;
//! - [`schema`]: the JSON Schema (`condense config --schema`);
//! - [`write`]: the settings as a file (`condense config --show`);
//! - [`models`]: what each model costs and holds, and the settings a
//!   request to it is compressed with;
//! - [`assemble`]: the middleware a file describes, from the caller's
//!   embedded components and model client.
//!
//! The `condense` command line reads its file here; so can any program that
//! embeds condense, without the command line.

pub mod assemble;
pub mod file;
pub mod models;
mod path;
pub mod pricing;
#[cfg(test)]
mod readme;
pub mod schema;
pub mod sections;
#[cfg(test)]
mod tests;
pub mod validate;
pub mod write;

pub use assemble::{ModelClient, no_model_client};
pub use file::ConfigFile;
pub use schema::{json_schema, json_schema_text, json_schema_with, schema_text};
pub use sections::{
    AgentSettings, Budgets, CompactionPolicy, Components, CoreKeys, EMBEDDED_SUMMARIZER, InProxy,
    LLM_SUMMARIZER, LimitSettings, LlmSettings, PREPARE_AT_PERMILLE, RecallMode, RecallSettings,
    RuntimeSettings, SummaryPlacement, cold_settings_of,
};
pub use validate::{LIMIT_RANGES, LLM_RANGES, RECALL_RANGES};
