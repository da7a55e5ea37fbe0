//! The wit-bindgen glue: converts between the WIT types (shared through
//! `condense_guest_sdk`) and `condense_model`, and calls the pure pipeline.
//! Everything else in this crate is plain Rust.

wit_bindgen::generate!({
    world: "compressor-world",
    path: "../../wit",
    with: { "condense:middleware/types@0.1.0": condense_guest_sdk::types },
});

use condense::middleware::summarizer;
use condense_guest_sdk::types as wit;

struct Component;

impl exports::condense::middleware::compressor::Guest for Component {
    fn compress(
        messages: Vec<wit::Message>,
        config: wit::Config,
        checkpoint: Option<wit::Checkpoint>,
    ) -> Result<wit::Outcome, wit::CompressError> {
        let messages: Vec<condense_model::Message> = messages.into_iter().map(Into::into).collect();
        let checkpoint = checkpoint.map(condense_model::Checkpoint::from);
        let mut summarize =
            |request: condense_model::SummaryRequest| summarizer::summarize(&request.into());
        crate::compress(
            &messages,
            &config.into(),
            checkpoint.as_ref(),
            &mut summarize,
        )
        .map(Into::into)
        .map_err(Into::into)
    }
}

export!(Component);
