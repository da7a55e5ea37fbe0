//! A summarizer written the way a third party would: only the WIT file and
//! wit-bindgen. It counts what it was given, so tests can see that the host
//! loaded it instead of the default one without being rebuilt.

wit_bindgen::generate!({ world: "summarizer-world", path: "../../../wit" });

use condense::middleware::types::{Part, SummaryRequest};

struct Counting;

impl exports::condense::middleware::summarizer::Guest for Counting {
    fn summarize(request: SummaryRequest) -> Result<String, String> {
        let calls = request
            .messages
            .iter()
            .flat_map(|m| &m.parts)
            .filter(|p| matches!(p, Part::ToolCall(_)))
            .count();
        let line = format!(
            "COUNTING SUMMARIZER: {} messages, {} tool calls folded",
            request.messages.len(),
            calls
        );
        Ok(if request.previous_summary.is_empty() {
            line
        } else {
            format!("{}\n{line}", request.previous_summary)
        })
    }
}

export!(Counting);
