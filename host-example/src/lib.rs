//! The `condense` command line, on top of the `condense-host` library:
//!
//! - [`cli`]: the commands (`compress`, `replay`, `demo`, `agent`, `config`);
//! - [`agent`]: `condense agent`, the runtime assembled from the command line;
//! - [`settings`]: the configuration file (TOML), validated once at start-up;
//! - [`embedded`]: the default components, built into the binary.

pub mod agent;
pub mod cli;
pub mod embedded;
pub mod settings;
