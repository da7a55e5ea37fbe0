//! The heuristic summarizer (`condense-summarizer-heuristic`) as a
//! component, exported with the guest SDK.

use condense_guest_sdk::summarizer::NO_SETTINGS;
use condense_guest_sdk::{NoSettings, Request, Summarizer, export_summarizer};
use condense_model::SummaryRequest;

struct Heuristic;

impl Summarizer for Heuristic {
    // Nothing to set: a key in its settings is a mistake, named in the error.
    type Settings = NoSettings;

    fn summarize(request: Request<NoSettings>) -> Result<String, String> {
        Ok(condense_summarizer_heuristic::summarize(&SummaryRequest {
            previous_summary: request.previous_summary,
            messages: request.messages,
            max_tokens: request.max_tokens,
            language: request.language,
            settings: String::new(),
        }))
    }

    fn settings_schema() -> String {
        NO_SETTINGS.to_owned()
    }
}

export_summarizer!(Heuristic);
