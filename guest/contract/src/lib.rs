//! The compressor's host-visible surface, apart from its implementation
//! (`condense-compressor`): what a host needs to configure it, check its
//! settings and describe them, and bound what it sends, without linking the
//! compressor itself.
//!
//! - [`settings`]: the compressor's own settings (when to compact, the
//!   context-engineering passes, tool classes), read from the JSON the host
//!   hands over, checked, and published as a JSON Schema;
//! - [`framing`]: the summary pair's framing, in each language it is written
//!   in, and [`language`]: which one a history is in;
//! - [`max_pair_tokens`]: the most a summary pair can cost, which the
//!   compressor chooses its boundary by and a replay bounds a request by.

pub mod framing;
pub mod language;
pub mod settings;

pub use settings::Settings;

use condense_model::recall;
use condense_model::tokens::estimate_message;

/// The most a summary pair with a summary of up to `summary_tokens` can cost,
/// for choosing the boundary. An upper bound, or a boundary could be chosen
/// whose request ends up over the threshold: the framing's language is only
/// known once the boundary is (it is the folded messages'), so this takes the
/// longest framing, plus a margin: the estimator does not promise that the
/// joined text costs no more than its parts (the test below finds no case
/// that needs it).
/// With `recall`, the summary ends with the fold's note, at its longest.
pub fn max_pair_tokens(summary_tokens: u32, recall: bool) -> u64 {
    const JOIN_SLACK: u64 = 2;
    let note = recall.then(|| recall::costliest_fold_note(u32::MAX as usize));
    let framing = framing::LANGUAGES
        .iter()
        .map(|lang| {
            framing::summary_pair("", note.as_deref(), lang)
                .iter()
                .map(|m| u64::from(estimate_message(m)))
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0);
    framing + u64::from(summary_tokens) + JOIN_SLACK
}
