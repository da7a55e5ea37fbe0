//! The `condense` command line, on top of the `condense-host` library:
//!
//! - [`cli`]: the commands (`compress`, `replay`, `demo`, `agent`, `compact`,
//!   `summarize`, `proxy`, `config`);
//! - [`agent`]: `condense agent`, the runtime assembled from the command line;
//! - [`compact`]: `condense compact`, a compaction now, written to a file;
//! - [`proxy`]: `condense proxy`, the HTTP proxy assembled from the config;
//! - [`demo`]: `condense demo`, a real session through the agent runtime;
//! - [`summarize`]: `condense summarize`, one fold by a summarizer, to try it;
//! - [`session`]: the session files the commands read (journals, bodies);
//! - [`plot`]: the chart of a replay (`--plot`);
//! - [`settings`]: the configuration file (TOML), validated once at start-up;
//! - [`embedded`]: the default components, built into the binary;
//! - [`logging`]: what the binary logs (never the HTTP client's wire dumps).

pub mod agent;
pub mod cli;
pub mod compact;
pub mod demo;
pub mod embedded;
pub mod logging;
pub mod plot;
pub mod proxy;
pub mod session;
pub mod settings;
pub mod summarize;
