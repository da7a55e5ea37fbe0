//! Embed condense in your own agent loop.
//!
//! An agent keeps its history (the durable one: condense never changes it).
//! Before each model call it hands condense the whole history and sends the
//! model what comes back: system messages and the recent tail verbatim, the
//! older part folded into one summary, tool calls never split from their
//! results. Each answer carries a checkpoint; handing it to the next call is
//! what keeps every request between two compactions the previous one plus
//! the new messages, byte for byte, so the provider's prompt cache hits.
//!
//! Here the "agent" is a recorded session played call by call: a model call
//! happens before each assistant message, with the history up to it.
//!
//! ```sh
//! cargo run -p condense-host --example agent_loop -- \
//!     compressor.wasm summarizer.wasm tests/corpus/sessions/cc-subagent-haiku.json
//! ```
//!
//! The two components are files here; the `condense` binary carries its own
//! as bytes (`condense-embedded`, `ComponentSource::Embedded`).

use condense_host::body::parse_body;
use condense_host::{ComponentSource, Limits, Middleware, Runtime, SessionCheckpoint};
use condense_model::tokens::estimate_total;
use condense_model::{CoreConfig, Role};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [compressor, summarizer, session] = &args[..] else {
        return Err("usage: agent_loop <compressor.wasm> <summarizer.wasm> <session.json>".into());
    };

    // Load the components once, at start: compiling them is the slow part,
    // and every call after instantiates them afresh in the sandbox (no
    // files, network or environment; memory and time limits).
    let runtime = Runtime::new(
        Limits::default(),
        ComponentSource::Path(compressor.into()),
        ComponentSource::Path(summarizer.into()),
    )?;
    let middleware = Middleware::new(runtime);

    // When to compact: a request over 20,000 tokens is brought down, with
    // the defaults that go with that threshold (the target after a
    // compaction, the verbatim tail, the summary's size).
    let config = CoreConfig::for_threshold(20_000);

    // A request body or journal in any format condense reads (OpenAI Chat,
    // OpenAI Responses, Anthropic Messages, a bare message list).
    let recorded = parse_body(&std::fs::read(session)?, None)?;
    let recorded = recorded.messages();

    // The checkpoint lives beside the session, between calls.
    let mut checkpoint: Option<SessionCheckpoint> = None;
    for (call, end) in (0..recorded.len())
        .filter(|&i| recorded[i].role == Role::Assistant)
        .enumerate()
    {
        let history = &recorded[..end];
        // Never fails: on any failure of a component (a trap, a timeout, an
        // output that breaks an invariant) the answer is the history
        // unchanged, and the report says why.
        let compressed = middleware.compress(history, &config, "{}", checkpoint.as_ref());
        let request = compressed.messages(history);
        let folded = compressed
            .checkpoint
            .as_ref()
            .map_or(0, |c| c.checkpoint.boundary);
        if folded != checkpoint.as_ref().map_or(0, |c| c.checkpoint.boundary) {
            println!(
                "call {call}: compacted, {} messages ({} tokens) sent as {} ({} tokens)",
                history.len(),
                estimate_total(history),
                request.len(),
                estimate_total(&request),
            );
        }
        // Send `request` to the model here, then keep the checkpoint.
        checkpoint = compressed.checkpoint;
    }
    println!(
        "{} messages, the last request folding the first {}",
        recorded.len(),
        checkpoint.map_or(0, |c| c.checkpoint.boundary)
    );
    Ok(())
}
