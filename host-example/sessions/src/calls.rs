//! What a host keeps of each model call it served in a session, beside the
//! session's checkpoints: when, which model, what condense did (tokens
//! before and after, the compaction and what set it off), the recalls it
//! answered, and what the provider said the call used, priced. A store
//! that several hosts share keeps one record for all of them, so every
//! host's operator page shows the same figures.
//!
//! A record is written once the call's answer has passed (the provider's
//! usage comes at its end) and never changed. A session keeps its last
//! [`MAX_CALLS`]: a page shows a session's recent history, not its
//! whole life.

use condense_host::events::Compaction;
use condense_host::formats::usage::Usage;
use serde::{Deserialize, Serialize};

/// Calls kept per session, the oldest dropped first: a long coding session
/// makes 150–250 calls a request, and a page shows a few of those.
pub const MAX_CALLS: usize = 2000;

/// One model call of a session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// When the request came, ms since the Unix epoch.
    pub at_ms: u64,
    /// The agent whose settings compressed it.
    pub agent: String,
    /// The request's `model`, as the client named it.
    pub model: String,
    pub outcome: CallOutcome,
    /// condense's estimate of the request's tokens as the client sent it
    /// and as it went upstream (the same when condense kept it whole).
    pub tokens_before: u32,
    pub tokens_after: u32,
    /// The compaction this call made, if it made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<Compaction>,
    /// `condense_recall` calls the host answered for it.
    #[serde(default)]
    pub recalls: u32,
    /// The status the client was answered with.
    pub status: u16,
    /// What the provider said the call used; `None`: it said nothing that
    /// can be read (or the answer was cut off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// What its model cost, when condense read which model it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rates: Option<Rates>,
    /// The call priced, when its usage and rates are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CallCost>,
}

/// What condense did to a call's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    Compressed,
    /// Read and kept whole (under the threshold).
    Unchanged,
    /// Nothing condense compresses (a conversation the server holds).
    NotCompressed,
    /// Forwarded unchanged because something failed.
    FailedOpen,
}

impl CallOutcome {
    pub fn name(self) -> &'static str {
        match self {
            CallOutcome::Compressed => "compressed",
            CallOutcome::Unchanged => "unchanged",
            CallOutcome::NotCompressed => "not_compressed",
            CallOutcome::FailedOpen => "failed_open",
        }
    }
}

/// What a call's model cost when it was made (the proxy's models table):
/// enough to price its tokens, and those of its estimate uncompressed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    /// USD per million uncached input tokens, and per million output.
    pub input_per_million: f64,
    pub output_per_million: f64,
    /// A cache read and a cache write, as shares of an input token.
    pub cache_read: f64,
    pub cache_write: f64,
    /// How long the provider's cache keeps a prefix.
    pub cache_ttl_seconds: u32,
}

impl Rates {
    /// USD of `tokens` input tokens' worth.
    pub fn input_usd(&self, tokens: f64) -> f64 {
        tokens * self.input_per_million / 1e6
    }
}

/// A call priced as measured, in USD.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CallCost {
    /// The input as the provider billed it: cache reads, cache writes and
    /// the rest, each at its price.
    pub input_usd: f64,
    pub output_usd: f64,
}

impl CallCost {
    /// `usage` at `rates`.
    pub fn of(usage: &Usage, rates: &Rates) -> CallCost {
        CallCost {
            input_usd: rates.input_usd(
                usage.cache_read as f64 * rates.cache_read
                    + usage.cache_write as f64 * rates.cache_write
                    + usage.uncached as f64,
            ),
            output_usd: usage.output as f64 * rates.output_per_million / 1e6,
        }
    }

    pub fn usd(&self) -> f64 {
        self.input_usd + self.output_usd
    }
}

/// An estimate, labelled so wherever it is shown: what `call`'s input would
/// have cost had condense sent every request of its session as the client
/// did, `previous` the session's call before it. Its tokens are condense's
/// estimate of the request as the client sent it; the part the previous
/// request sent (its own such tokens, when it came within the cache's TTL
/// and was no longer) is priced as a cache read, as the provider would
/// have served an agent's growing request, the rest as a cache write: the
/// replay's baseline (`condense-replay`), call by call. A call condense did
/// not read (it went on as sent) is its own estimate: its measured input.
/// `None` for a call not priced.
pub fn uncompressed_input_usd(call: &CallRecord, previous: Option<&CallRecord>) -> Option<f64> {
    let (rates, cost) = (call.rates.as_ref()?, call.cost.as_ref()?);
    if call.tokens_before == 0 {
        return Some(cost.input_usd);
    }
    let ttl_ms = u64::from(rates.cache_ttl_seconds) * 1000;
    let read = previous
        .filter(|p| {
            call.at_ms.saturating_sub(p.at_ms) <= ttl_ms && p.tokens_before <= call.tokens_before
        })
        .map_or(0, |p| p.tokens_before);
    let written = call.tokens_before - read;
    Some(rates.input_usd(read as f64 * rates.cache_read + written as f64 * rates.cache_write))
}

/// `calls` in the order they came, each with its estimate uncompressed
/// ([`uncompressed_input_usd`]) against the one before: records are written
/// as answers end, which need not be the order the requests came in.
pub fn in_order(calls: &[CallRecord]) -> Vec<(&CallRecord, Option<f64>)> {
    let mut sorted: Vec<&CallRecord> = calls.iter().collect();
    sorted.sort_by_key(|c| c.at_ms);
    let mut previous = None;
    sorted
        .into_iter()
        .map(|call| {
            let estimate = uncompressed_input_usd(call, previous);
            previous = Some(call);
            (call, estimate)
        })
        .collect()
}

/// `calls` with `call` added, the oldest dropped past [`MAX_CALLS`]: how
/// many were dropped.
pub(crate) fn add_call(calls: &mut Vec<CallRecord>, call: &CallRecord) -> usize {
    calls.push(call.clone());
    let over = calls.len().saturating_sub(MAX_CALLS);
    calls.drain(..over);
    over
}
