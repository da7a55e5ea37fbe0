//! Identifier recall against Claude Code's own summaries: of the identifiers
//! (paths, `code` spans, numbers) that Claude Code's compaction summary of a
//! recorded session kept, and that the summarized span holds verbatim, how
//! many condense's summary of the same span keeps within the same budget
//! (`condense_tests::identifiers`, whose module doc gives the method).
//! Prints per session the figure, the budget and what each summary used,
//! the missing identifiers by kind, and the first missing ones.
//!
//! Run: `cargo bench -p condense-tests --bench identifiers`. A figure, not a
//! timing. `IDENTIFIERS_SUMMARIZER=x.wasm` measures another summarizer
//! component in place of the embedded one; `IDENTIFIERS_SHOW=1` prints each
//! summary as measured, to see what it spent its budget on.

use condense_tests::identifiers::{IdentifierKind, SESSIONS, identifier_recall_with};
use condense_tests::summarizer_from_env;

/// Missing identifiers listed per session.
const SHOWN: usize = 15;

fn main() {
    let middleware = summarizer_from_env("IDENTIFIERS_SUMMARIZER");
    let results: Vec<_> = SESSIONS
        .iter()
        .map(|name| identifier_recall_with(middleware, name))
        .collect();

    println!(
        "{:<10} {:>7} {:>5} {:>7} {:>7} {:>12} {:>13}  missing ({})",
        "session",
        "counted",
        "kept",
        "recall",
        "budget",
        "Claude chars",
        "condense used",
        IdentifierKind::ALL.map(IdentifierKind::name).join(", ")
    );
    for r in &results {
        let missing = IdentifierKind::ALL.map(|kind| r.missing_of(kind).to_string());
        let used = format!("{}c/{}t", r.condense_chars, r.condense_tokens);
        println!(
            "{:<10} {:>7} {:>5} {:>6.1}% {:>7} {:>12} {:>13}  {}",
            r.session,
            r.counted,
            r.kept,
            100.0 * r.recall(),
            r.budget_tokens,
            r.claude_chars,
            used,
            missing.join(", ")
        );
    }
    let (counted, kept) = results
        .iter()
        .fold((0, 0), |(c, k), r| (c + r.counted, k + r.kept));
    println!(
        "{:<10} {counted:>7} {kept:>5} {:>6.1}%",
        "all",
        100.0 * kept as f64 / counted.max(1) as f64
    );

    for r in &results {
        println!(
            "\n{}: first {} of {} missing",
            r.session,
            SHOWN.min(r.missing.len()),
            r.missing.len()
        );
        for id in r.missing.iter().take(SHOWN) {
            println!("  {:<7} {id}", IdentifierKind::of(id).name());
        }
        if std::env::var_os("IDENTIFIERS_SHOW").is_some() {
            println!("\n--- {} summary ---\n{}\n---", r.session, r.summary);
        }
    }
}
