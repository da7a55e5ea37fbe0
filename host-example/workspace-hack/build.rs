//! Empty: it makes the manifest's `[build-dependencies]`, the feature set of
//! build scripts and proc macros, part of the build.
fn main() {}
