//! condense's heuristic summarizer: a deterministic, extractive summary of the
//! folded history, built for an agent that has to carry on with the task.
//!
//! It keeps what the user said that binds the session — rules, limits,
//! preferences, corrections, exact values, the goal — sentence by sentence
//! and ranked above everything else (see `statements`), the user's requests
//! verbatim (the latest as the current task, with the agent's latest todo
//! list), the files touched and by which tool, the code written into them
//! and the names the assistant set in code font, the commands run with their
//! outcomes, the errors seen and short statements from the assistant. Each
//! fold parses the previous summary back (see `format`), merges the new facts
//! in (see `extract`, with `code` for what the writes changed, into a
//! `digest`) and writes the result within the token budget, shortening the
//! person's statements and then dropping the least valuable lines first (see
//! `budget`).
//!
//! Everything here is plain Rust; the component is
//! `condense-summarizer-heuristic-component`, a crate of its own so that
//! other components (the LLM summarizer) can link this library.

mod budget;
mod code;
mod digest;
mod extract;
mod format;
mod statements;
mod text;

#[cfg(test)]
mod tests;

use condense_model::SummaryRequest;

/// What a summary of `messages` must keep word for word, most binding first:
/// the person's rules, limits and preferences, the exact values they gave,
/// their goals (the latest of each subject, as this summarizer keeps them),
/// then the current task and the next step the assistant announced. Another
/// summarizer (the LLM one) checks its text against these and appends what
/// it left out.
pub fn must_keep(messages: &[condense_model::Message]) -> Vec<String> {
    let mut digest = digest::Digest::default();
    extract::absorb(&mut digest, messages);
    let mut binding = digest.binding.clone();
    // Stable: within a class, the order they were said in.
    binding.sort_by_key(|s| std::cmp::Reverse(s.class));
    let mut out: Vec<String> = binding.into_iter().map(|s| s.text).collect();
    let current = extract::current_request(&digest).cloned();
    for text in current.into_iter().chain(digest.next.clone()) {
        if !out.contains(&text) {
            out.push(text);
        }
    }
    out
}

/// One entry of the artifact trail: `line` as this summarizer writes it,
/// and the `key` a summary that names the artifact contains (the path, the
/// command, the error line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrailItem {
    pub key: String,
    pub line: String,
}

/// The artifact trail of `messages`, as this summarizer would list it:
/// every file a tool touched, every command with its last outcome, every
/// error line with the command that showed it and whether a later run fixed
/// it. The trail is the table of contents a model needs to find its way
/// back (read a file again, recall what a command printed); another
/// summarizer (the LLM one) checks its text against it and appends what it
/// left out.
pub fn artifact_trail(messages: &[condense_model::Message]) -> Vec<TrailItem> {
    let mut digest = digest::Digest::default();
    extract::absorb(&mut digest, messages);
    format::trail(&digest)
}

/// The cue tables the statement rules start from, by name: the words and
/// short phrases that mark rules, goals and corrections, per language (see
/// `statements`). Published so that a benchmark can show it was written
/// without them.
pub fn cue_tables() -> [(&'static str, &'static [&'static str]); 4] {
    statements::CUE_TABLES
}

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
