//! A summarizer as one built against contract 0.2.0 before the
//! `summarizer-settings` interface was added to it: a world of its own that
//! exports `summarizer` and nothing else, with wit-bindgen directly (the
//! SDK exports both). The host must still load it, and must refuse to hand
//! it settings it cannot check.

wit_bindgen::generate!({
    inline: "
        package condense:test-pre-settings;
        world pre-settings { export condense:middleware/summarizer@0.2.0; }
    ",
    path: "../../../wit",
    generate_all,
});

use condense::middleware::types::SummaryRequest;
use exports::condense::middleware::summarizer::Guest;

struct PreSettings;

impl Guest for PreSettings {
    fn summarize(request: SummaryRequest) -> Result<String, String> {
        let line = format!(
            "PRE-SETTINGS SUMMARIZER: {} messages folded",
            request.messages.len()
        );
        Ok(if request.previous_summary.is_empty() {
            line
        } else {
            format!("{}\n{line}", request.previous_summary)
        })
    }
}

export!(PreSettings);
