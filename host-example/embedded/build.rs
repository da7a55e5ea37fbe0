//! Builds the default components (compressor, heuristic summarizer, LLM
//! summarizer) for wasm32-wasip2 and embeds them, so the `condense` binary
//! works with no files beside it. Other components are loaded from a path at
//! run time instead.

use std::fmt::Write as _;

fn main() {
    let artifacts = condense_guest_builder::build(&[
        "condense-compressor",
        "condense-summarizer-heuristic-component",
        "condense-summarizer-llm",
    ]);
    let mut consts = String::new();
    for (artifact, name) in artifacts
        .iter()
        .zip(["COMPRESSOR", "SUMMARIZER", "LLM_SUMMARIZER"])
    {
        writeln!(
            consts,
            "/// The `{}` component, built with this binary.",
            artifact.package
        )
        .unwrap();
        writeln!(
            consts,
            "pub const {name}: &[u8] = include_bytes!({:?});",
            artifact.path.display().to_string()
        )
        .unwrap();
    }
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("embedded.rs");
    std::fs::write(out, consts).unwrap();
}
