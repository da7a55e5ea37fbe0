//! A summarizer that misbehaves on request, so tests can check that the host
//! blames the summarizer (not the compressor that called it). The last word of
//! the last folded message's text picks what it does: `trap` panics, `loop`
//! never returns, `refuse` returns an error, a number N returns a summary of N MiB (`100`: more than the
//! tests' memory cap lets it build), anything else gets a fixed summary.

use condense_guest_sdk::{NoSettings, Part, Request, Summarizer, export_summarizer};

struct Hostile;

impl Summarizer for Hostile {
    type Settings = NoSettings;

    fn summarize(request: Request<NoSettings>) -> Result<String, String> {
        let parts = request
            .messages
            .last()
            .map(|m| m.parts.as_slice())
            .unwrap_or_default();
        let text = parts
            .iter()
            .find_map(|p| {
                if let Part::Text(t) = p {
                    Some(t.as_str())
                } else {
                    None
                }
            })
            .unwrap_or_default();
        match text.split_whitespace().last() {
            Some("trap") => panic!("hostile summarizer: trap requested"),
            Some("loop") => loop {
                std::hint::black_box(&request);
            },
            Some("refuse") => Err("hostile summarizer: refusing on request".into()),
            Some(mib) if let Ok(mib) = mib.parse::<usize>() => Ok("x".repeat(mib << 20)),
            _ => Ok("HOSTILE SUMMARIZER: nothing to see".into()),
        }
    }
}

export_summarizer!(Hostile);
