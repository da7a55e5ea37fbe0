//! The default components, built for wasm32-wasip2 by `build.rs` and embedded
//! as bytes: the `condense` binary works with no component files beside it,
//! and a program that embeds condense hands these to
//! [`condense_config`](../condense_config/index.html) to build its
//! middleware (as [`COMPONENTS`]). A crate of its own so that the tests and any embedder get the
//! components without depending on the command line.

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// The three, as the host's configuration takes them.
pub const COMPONENTS: condense_host::Embedded = condense_host::Embedded {
    compressor: COMPRESSOR,
    summarizer: SUMMARIZER,
    llm_summarizer: LLM_SUMMARIZER,
};
