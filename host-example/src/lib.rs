//! The `condense` command line, on top of the `condense-host` library:
//!
//! - [`cli`]: the command line parsed and dispatched; each command's
//!   arguments are in its own module, those they share in [`common`];
//! - [`compress`]: `condense compress`, one request body;
//! - [`replay`]: `condense replay`, recorded sessions call by call;
//! - [`config`]: `condense config`, the configuration shown or its schema;
//! - [`agent`]: `condense agent`, the runtime assembled from the command line;
//! - [`compact`]: `condense compact`, a compaction now, written to a file;
//! - [`proxy`]: `condense proxy`, the HTTP proxy assembled from the config;
//! - [`sessions`]: `condense sessions`, what the proxy's store holds;
//! - [`demo`]: `condense demo`, a real session through the agent runtime;
//! - [`summarize`]: `condense summarize`, one fold by a summarizer, to try it;
//! - [`session`]: the session files the commands read (journals, bodies);
//! - [`components`]: the middleware the commands run, from the config file
//!   (`condense-config`), the embedded components and the model client;
//! - [`logging`]: what the binary logs (never the HTTP client's wire dumps).

pub mod agent;
pub mod cli;
pub mod common;
pub mod compact;
pub mod components;
pub mod compress;
pub mod config;
pub mod demo;
pub mod logging;
pub mod proxy;
pub mod replay;
pub mod session;
pub mod sessions;
pub mod summarize;
