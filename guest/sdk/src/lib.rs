//! The guest SDK: what a Rust component of condense needs, and all a
//! summarizer needs.
//!
//! - **Writing a summarizer** ([`summarizer`]): implement [`Summarizer`] over
//!   plain Rust types ([`Message`], [`Request`]), read its settings with
//!   serde (checked when the host loads its configuration, and described by
//!   a JSON Schema: [`Summarizer::validate_settings`] and
//!   [`Summarizer::settings_schema`], both with defaults), hold the text to
//!   its budget with [`cut_to_tokens`] and the token estimator
//!   ([`tokens`]), and export it with [`export_summarizer!`].
//!   The WIT is embedded here (`wit/condense.wit`, a copy of the contract
//!   that a test holds equal to the repository's): nothing to copy, no
//!   wit-bindgen call of your own.
//! - **Versions**: the SDK's version is the contract's ([`CONTRACT_VERSION`]),
//!   so `condense-guest-sdk = "0.2"` builds components a 0.2 host loads.
//! - **Other components** (the compressor): the WIT `types` interface,
//!   generated here once, and lossless conversions between those types and
//!   `condense_model`, where the guests' logic lives. Such a crate generates
//!   its own world with
//!   `with: { "condense:middleware/types@0.2.0": condense_guest_sdk::types }`
//!   so its bindings use these types, and converts with `.into()`.

wit_bindgen::generate!({
    inline: "
        package condense:guest-sdk;
        world types-only { import condense:middleware/types@0.2.0; }
    ",
    path: "wit",
    generate_all,
});

/// The version of the contract (`package condense:middleware@…` in
/// `wit/condense.wit`) this SDK builds components for: the SDK's own.
pub const CONTRACT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The generated WIT types (`condense:middleware/types`).
pub use condense::middleware::types;

condense_model::wit_conversions!(crate::types);

pub mod summarizer;

pub use condense_model::tokens;
pub use condense_model::{Message, Part, Role, Thinking, ToolCall, ToolResult};
pub use summarizer::{NoSettings, Request, Summarizer, cut_to_tokens};

pub mod llm;

/// The bindings [`export_summarizer!`] exports through: the world
/// `llm-summarizer-world`, which exports `summarizer` and
/// `summarizer-settings` and imports the host's `llm`. A component imports `llm` only if it calls a function of [`llm`] (unused
/// imports are left out when the component is made), so one that does not
/// is a plain `summarizer-world` component.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "llm-summarizer-world",
        path: "wit",
        with: { "condense:middleware/types@0.2.0": crate::types },
        pub_export_macro: true,
        export_macro_name: "__export_summarizer_world",
        default_bindings_module: "condense_guest_sdk::bindings",
    });
}
