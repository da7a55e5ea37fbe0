//! No code: this crate's manifest is its point (see `Cargo.toml`). It
//! declares the features of dependencies the `condense` binary shares with
//! the workspace's tests, so both builds compile each of them once.
