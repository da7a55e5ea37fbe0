//! What each call of a session used and cost, measured: the provider's own
//! usage, read as the answer passes, priced with the model's prices, beside
//! an estimate of what the same call would have cost uncompressed; kept in
//! the session store ([`condense_sessions::CallRecord`]) for the operator's
//! page, `condense sessions` and `/metrics`.
//!
//! **The uncompressed estimate** is labelled an estimate everywhere it is
//! shown; how it is computed is [`condense_sessions::uncompressed_input_usd`].
//! The page and `condense sessions` compute it from the session's records
//! in the order the requests came; `/metrics` and the log line at the
//! call's end, against the session's latest record then (the same figure,
//! unless the session had two calls in flight at once).
//!
//! A call's end comes in two halves that arrive apart: its usage, once the
//! client's answer has passed, and its status with the recalls the proxy
//! answered (a request the recall loop served says so when its rounds are
//! done). [`Ending`] joins them.

use condense_config::pricing::ModelPrice;
use condense_host::events::Compaction;
use condense_host::formats::usage::Usage;
use condense_sessions::{CallCost, CallOutcome, CallRecord, Rates};
use std::sync::Mutex;

/// What is known of a call before its answer: the request and what condense
/// did to it.
#[derive(Clone, Debug)]
pub struct CallStart {
    /// The session's checkpoint group; `None`: the body was not read, and
    /// the call is measured but kept in no session.
    pub group: Option<String>,
    /// When the request came, ms since the Unix epoch.
    pub at_ms: u64,
    pub agent: String,
    pub model: String,
    pub outcome: CallOutcome,
    /// condense's estimate of the request as the client sent it and as it
    /// went upstream, when condense read it.
    pub tokens: Option<(u32, u32)>,
    pub compaction: Option<Compaction>,
    /// What the model costs, when condense read which model it is.
    pub price: Option<ModelPrice>,
}

/// How a call ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallEnd {
    pub status: u16,
    pub recalls: u32,
    /// Upstream calls the recall loop made beyond the first.
    pub rounds: u32,
    /// The provider's usage; `None`: unknown.
    pub usage: Option<Usage>,
}

impl CallStart {
    /// The call's record.
    pub fn record(self, end: CallEnd) -> CallRecord {
        let (tokens_before, tokens_after) = self.tokens.unwrap_or_default();
        let rates = self.price.as_ref().map(rates);
        let cost = end
            .usage
            .as_ref()
            .zip(rates.as_ref())
            .map(|(usage, rates)| CallCost::of(usage, rates));
        CallRecord {
            at_ms: self.at_ms,
            agent: self.agent,
            model: self.model,
            outcome: self.outcome,
            tokens_before,
            tokens_after,
            compaction: self.compaction,
            recalls: end.recalls,
            status: end.status,
            usage: end.usage,
            rates,
            cost,
        }
    }
}

/// What a call to a model of `price` costs.
pub fn rates(price: &ModelPrice) -> Rates {
    Rates {
        input_per_million: price.input,
        output_per_million: price.output,
        cache_read: price.cache_read,
        cache_write: price.write(),
        cache_ttl_seconds: price.cache_ttl_seconds,
    }
}

/// A call's end, joined from its two halves ([`Ending::usage`],
/// [`Ending::answered`]) in whichever order they come; `finish` is called
/// once both have.
pub struct Ending {
    state: Mutex<Halves>,
}

type Finish = Box<dyn FnOnce(CallStart, CallEnd) + Send>;

struct Halves {
    start: Option<(CallStart, Finish)>,
    usage: Option<Option<Usage>>,
    answered: Option<(u16, u32, u32)>,
}

impl Ending {
    pub fn new(start: CallStart, finish: Finish) -> Ending {
        Ending {
            state: Mutex::new(Halves {
                start: Some((start, finish)),
                usage: None,
                answered: None,
            }),
        }
    }

    /// The provider's usage, once the answer has passed.
    pub fn usage(&self, usage: Option<Usage>) {
        self.update(|h| h.usage = Some(usage));
    }

    /// The status the client was answered with, the recalls answered and
    /// the recall loop's rounds.
    pub fn answered(&self, status: u16, recalls: u32, rounds: u32) {
        self.update(|h| h.answered = Some((status, recalls, rounds)));
    }

    fn update(&self, set: impl FnOnce(&mut Halves)) {
        let done = {
            let mut halves = self.state.lock().unwrap_or_else(|e| e.into_inner());
            set(&mut halves);
            match (halves.usage, halves.answered) {
                (Some(usage), Some((status, recalls, rounds))) => halves.start.take().map(|s| {
                    let end = CallEnd {
                        status,
                        recalls,
                        rounds,
                        usage,
                    };
                    (s, end)
                }),
                _ => None,
            }
        };
        // Outside the lock: finishing writes to the store.
        if let Some(((start, finish), end)) = done {
            finish(start, end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// $3 per million input, $15 output, reads 0.1, writes 1.25, 5 minutes.
    fn price() -> ModelPrice {
        ModelPrice {
            input: 3.0,
            output: 15.0,
            cache_read: 0.1,
            cache_write: [(300, 1.25)].into(),
            cache_ttl_seconds: 300,
            context_window: 200_000,
            token_threshold: None,
        }
    }

    fn start(tokens: Option<(u32, u32)>) -> CallStart {
        CallStart {
            group: Some("g".into()),
            at_ms: 1_000_000,
            agent: "default".into(),
            model: "claude".into(),
            outcome: CallOutcome::Compressed,
            tokens,
            compaction: None,
            price: Some(price()),
        }
    }

    fn previous(at_ms: u64, tokens_before: u32) -> CallRecord {
        let mut call = condense_sessions::conformance::call_at(at_ms, "claude", tokens_before);
        call.outcome = CallOutcome::Compressed;
        call
    }

    #[test]
    fn a_call_is_priced_as_measured_beside_its_estimate_uncompressed() {
        let usage = Usage {
            cache_read: 20_000,
            cache_write: 4_000,
            uncached: 100,
            output: 500,
        };
        let end = CallEnd {
            status: 200,
            recalls: 1,
            rounds: 1,
            usage: Some(usage),
        };
        let record = start(Some((100_000, 24_100))).record(end);
        let cost = record.cost.unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(
            cost.input_usd,
            3.0 * (2_000.0 + 5_000.0 + 100.0) / 1e6
        ));
        assert!(close(cost.output_usd, 15.0 * 500.0 / 1e6));
        assert_eq!((record.recalls, record.tokens_before), (1, 100_000));
        // The previous call, a minute before, sent 90k uncompressed: read
        // from the cache; the 10k since are written.
        let estimate = |previous: &CallRecord| {
            condense_sessions::uncompressed_input_usd(&record, Some(previous)).unwrap()
        };
        assert!(close(
            estimate(&previous(940_000, 90_000)),
            3.0 * (9_000.0 + 12_500.0) / 1e6
        ));
        // Past the TTL, or after a longer request (another branch of the
        // session), nothing is read: all of it written.
        for before in [previous(600_000, 90_000), previous(990_000, 120_000)] {
            assert!(close(estimate(&before), 3.0 * 125_000.0 / 1e6));
        }
        // Not read (it went on as sent): its estimate is what it cost.
        let unread = start(None).record(end);
        assert_eq!(
            condense_sessions::uncompressed_input_usd(&unread, None),
            Some(unread.cost.unwrap().input_usd)
        );
        // Unknown usage: no cost, never a guess.
        let unknown = CallEnd { usage: None, ..end };
        let record = start(Some((1, 1))).record(unknown);
        assert_eq!(record.cost, None);
        assert_eq!(
            condense_sessions::uncompressed_input_usd(&record, None),
            None
        );
    }

    #[test]
    fn a_calls_end_is_joined_whichever_half_comes_first() {
        for usage_first in [true, false] {
            let got = Arc::new(Mutex::new(Vec::new()));
            let sink = got.clone();
            let ending = Ending::new(
                start(None),
                Box::new(move |_, end| sink.lock().unwrap().push(end)),
            );
            let usage = Some(Usage::default());
            if usage_first {
                ending.usage(usage);
                assert!(got.lock().unwrap().is_empty());
                ending.answered(200, 2, 1);
            } else {
                ending.answered(200, 2, 1);
                assert!(got.lock().unwrap().is_empty());
                ending.usage(usage);
            }
            // A second word changes nothing: the call ended once.
            ending.usage(None);
            let got = got.lock().unwrap();
            assert_eq!(
                *got,
                [CallEnd {
                    status: 200,
                    recalls: 2,
                    rounds: 1,
                    usage
                }]
            );
        }
    }
}
