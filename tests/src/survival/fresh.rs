//! The held-back half of the tool-found shape since the night of
//! 2026-12-05: written once that day by someone who had not read the
//! summarizer, after the second one (`unseen/found.rs`) was looked into
//! while the summarizer was fixed and so was spent; never edited after (a
//! test pins its hash). Its figures are reported apart, and its lost
//! statements are never printed.

mod found;

pub use found::FRESH_FOUND;
