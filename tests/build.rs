//! Builds the test guests (`tests/guests/*`) and the SDK's example
//! (`guest/examples/summarizer-minimal`) for wasm32-wasip2 and writes their
//! paths as consts, `include!`d by src/lib.rs. The default components come
//! embedded in condense-host, whose own build script builds them.

fn main() {
    let artifacts = condense_guest_builder::build(&[
        "test-summarizer-custom",
        "test-compressor-hostile",
        "test-summarizer-hostile",
        "test-summarizer-pre-settings",
        "summarizer-minimal",
    ]);
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("guests.rs");
    std::fs::write(out, condense_guest_builder::path_consts(&artifacts)).unwrap();
}
