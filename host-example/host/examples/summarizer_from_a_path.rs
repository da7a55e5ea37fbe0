//! Load a summarizer from a path, with its settings.
//!
//! The summary a fold writes comes from a separate component chosen at run
//! time: condense's own (extractive, or an LLM through the host's `llm`
//! import), or one you wrote with the guest SDK (`guest/sdk/README.md`), in
//! Rust or another language. Swapping it is a path, not a rebuild. Its
//! settings are a JSON object the host hands it with each summary; the
//! component checks them itself (`validate-settings`), so a typo stops the
//! host at start, naming the key, rather than at the first compaction.
//!
//! ```sh
//! cargo run -p condense-host --example summarizer_from_a_path -- \
//!     compressor.wasm my_summarizer.wasm settings.json session.json
//! ```

use condense_host::body::parse_body;
use condense_host::{ComponentSource, Limits, Middleware, Runtime};
use condense_model::CoreConfig;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [compressor, summarizer, settings, session] = &args[..] else {
        return Err(
            "usage: summarizer_from_a_path <compressor.wasm> <summarizer.wasm> <settings.json> \
             <session.json>"
                .into(),
        );
    };
    let settings = std::fs::read_to_string(settings)?;

    let runtime = Runtime::new(
        Limits::default(),
        ComponentSource::Path(compressor.into()),
        ComponentSource::Path(summarizer.into()),
    )?;
    // The component checks its settings first (index 0: the first, here
    // the only, summarizer of the chain). The outer error is the component
    // failing; the inner one, the settings it refuses.
    if let Err(refused) = runtime.validate_summarizer_settings(0, &settings)? {
        return Err(format!("{summarizer}: {refused}").into());
    }
    // Then every summary it writes is asked for with them.
    let middleware = Middleware::new(runtime.with_summarizer_settings(0, settings));

    // One call over a whole recorded session, at a threshold low enough
    // that it is folded: the summary is the first message sent.
    let parsed = parse_body(&std::fs::read(session)?, None)?;
    let history = parsed.messages();
    let compressed = middleware.compress(history, &CoreConfig::for_threshold(8_000), "{}", None);
    let request = compressed.messages(history);
    let summary = request
        .iter()
        .map(|m| m.joined_text())
        .find(|text| text.starts_with(condense_model::SUMMARY_MARKER))
        .ok_or("the session was not folded")?;
    println!(
        "{} messages sent as {}; the summary:\n\n{summary}",
        history.len(),
        request.len()
    );
    Ok(())
}
