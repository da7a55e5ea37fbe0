//! The `condense` command line: each command with real files, run in
//! process through `condense_cli::cli::run`, and the binary itself where a
//! test needs a process of its own (`CARGO_BIN_EXE_condense`): a proxy
//! killed with SIGKILL, two proxies sharing Redis, what it logs. One binary,
//! a module per area.

mod agent;
mod commands;
mod logging;
mod proxy;
mod summarize;
mod trust;

use std::path::Path;

/// Runs `condense ARGS` in process (`condense_cli::cli::run`) with `stdin`;
/// returns stdout, or the error with its causes.
pub fn condense(args: &[&str], stdin: &str) -> Result<String, String> {
    let argv = std::iter::once("condense")
        .chain(args.iter().copied())
        .map(Into::into);
    let mut out = Vec::new();
    condense_cli::cli::run(argv, &mut stdin.as_bytes(), &mut out).map_err(|e| format!("{e:#}"))?;
    Ok(String::from_utf8(out).expect("stdout is UTF-8"))
}

/// The `condense` binary cargo built for these tests.
pub fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_condense"))
}
