//! The default components, built for wasm32-wasip2 by `build.rs` and embedded
//! in the binary, so that `condense` works with no component files beside it.

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
