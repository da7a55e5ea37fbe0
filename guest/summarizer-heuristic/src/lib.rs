//! condense's heuristic summarizer: a deterministic, extractive summary of the
//! folded history, built for an agent that has to carry on with the task.
//!
//! It keeps what the user said that binds the session — rules, limits,
//! preferences, exact values, the goal — sentence by sentence and ranked above
//! everything else (see `binding`), the user's requests verbatim (the latest as the current task, with
//! the agent's latest todo list), the files touched and by which tool, the
//! commands run with their outcomes, the errors seen and short statements from
//! the assistant. Each fold parses the previous summary back (see `format`),
//! merges the new facts in and writes the result within the token budget,
//! dropping the least valuable lines first (see `budget`).
//!
//! Everything here is plain Rust; `component` is the wasm glue.

mod binding;
mod budget;
mod digest;
mod extract;
mod format;
mod text;

#[cfg(target_arch = "wasm32")]
mod component;

#[cfg(test)]
mod tests;

use condense_model::SummaryRequest;

/// The summary of `request.previous_summary` plus `request.messages`, headed in
/// `request.language` and estimated at most `request.max_tokens` tokens by
/// `condense_model::tokens::estimate_text`. The same request always gives the
/// same bytes.
pub fn summarize(request: &SummaryRequest) -> String {
    let mut digest = format::parse(&request.previous_summary);
    extract::absorb(&mut digest, &request.messages);
    budget::fit(
        format::render(&digest, &request.language),
        request.max_tokens,
    )
}
