//! The wit-bindgen glue: converts the WIT request (types shared through
//! `condense_guest_sdk`) into `condense_model` and calls the pure summarizer.

wit_bindgen::generate!({
    world: "summarizer-world",
    path: "../../wit",
    with: { "condense:middleware/types@0.2.0": condense_guest_sdk::types },
});

struct Component;

impl exports::condense::middleware::summarizer::Guest for Component {
    fn summarize(request: condense_guest_sdk::types::SummaryRequest) -> Result<String, String> {
        Ok(crate::summarize(&request.into()))
    }
}

export!(Component);
