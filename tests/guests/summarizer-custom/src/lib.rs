//! A summarizer written the way a third party would, with the guest SDK. It
//! counts what it was given, so tests can see that the host loaded it instead
//! of the default one without being rebuilt.

use condense_guest_sdk::{NoSettings, Part, Request, Summarizer, export_summarizer};

struct Counting;

impl Summarizer for Counting {
    type Settings = NoSettings;

    fn summarize(request: Request<NoSettings>) -> Result<String, String> {
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

export_summarizer!(Counting);
