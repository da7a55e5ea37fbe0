//! Whether a due compaction proceeds.
//!
//! condense decides *when* a compaction is due (the request crossed
//! `token_threshold`); a policy decides whether it happens on this call. A
//! refused compaction is not lost: the request goes out as it stands (the
//! last compaction's prefix, byte-stable, so the prompt cache still hits)
//! and the compaction is due again on the next call. The summarizer is
//! asked only once a policy has allowed the compaction, so refusing one
//! costs nothing.

use std::time::{Duration, Instant};

/// A compaction that is due, as a policy sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due {
    /// 1-based number of the model call.
    pub call: u64,
    /// Tokens of the request if it went out without compacting (system
    /// prompt and tool definitions included).
    pub request_tokens: u64,
    /// The threshold it crossed, on the same scale.
    pub threshold: u64,
    /// When it became due (a policy compares times with it, so tests give
    /// their own).
    pub at: Instant,
}

/// Decides whether a due compaction proceeds.
pub trait Policy {
    /// `true`: compact on this call. `false`: send the request as it stands;
    /// the policy is asked again on the next call.
    fn allow(&mut self, due: &Due) -> bool;

    /// Whether it allows every compaction, whatever is due: then condense
    /// compresses in one call at the threshold, as the proxy does, and its
    /// plan for the next compaction is the one a summary is prepared for.
    fn allows_all(&self) -> bool {
        false
    }
}

impl<P: Policy + ?Sized> Policy for Box<P> {
    fn allow(&mut self, due: &Due) -> bool {
        (**self).allow(due)
    }

    fn allows_all(&self) -> bool {
        (**self).allows_all()
    }
}

/// Every due compaction proceeds: condense's own hysteresis is the policy.
#[derive(Clone, Copy, Debug, Default)]
pub struct Automatic;

impl Policy for Automatic {
    fn allow(&mut self, _: &Due) -> bool {
        true
    }

    fn allows_all(&self) -> bool {
        true
    }
}

/// At most one compaction per `min_calls` model calls and per `min_interval`,
/// unless the request would no longer fit the model's context window: then
/// it compacts whatever the limits say, since the call would fail otherwise.
#[derive(Clone, Debug)]
pub struct RateLimited {
    /// Model calls from one compaction to the next, at least (0: no limit).
    pub min_calls: u64,
    /// Time from one compaction to the next, at least (zero: no limit).
    pub min_interval: Duration,
    /// The model's context window, in tokens.
    pub context_window: u64,
    last: Option<(u64, Instant)>,
}

impl RateLimited {
    pub fn new(min_calls: u64, min_interval: Duration, context_window: u64) -> RateLimited {
        RateLimited {
            min_calls,
            min_interval,
            context_window,
            last: None,
        }
    }
}

impl Policy for RateLimited {
    fn allow(&mut self, due: &Due) -> bool {
        let too_soon = self.last.is_some_and(|(call, at)| {
            due.call < call + self.min_calls || due.at.duration_since(at) < self.min_interval
        });
        let overflow = due.request_tokens > self.context_window;
        let allow = !too_soon || overflow;
        if allow {
            self.last = Some((due.call, due.at));
        }
        allow
    }
}

/// Asks someone: `ask` gets the due compaction and answers whether it
/// proceeds (`condense agent --compaction confirm` asks on the terminal).
pub struct Confirm<F>(pub F);

impl<F: FnMut(&Due) -> bool> Policy for Confirm<F> {
    fn allow(&mut self, due: &Due) -> bool {
        (self.0)(due)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn due(call: u64, tokens: u64, at: Instant) -> Due {
        Due {
            call,
            request_tokens: tokens,
            threshold: 40_000,
            at,
        }
    }

    #[test]
    fn rate_limited_allows_one_per_n_calls_unless_the_window_overflows() {
        let t0 = Instant::now();
        let mut policy = RateLimited::new(10, Duration::ZERO, 100_000);
        assert!(policy.allow(&due(5, 41_000, t0)), "the first one");
        assert!(!policy.allow(&due(6, 42_000, t0)));
        assert!(!policy.allow(&due(14, 60_000, t0)), "9 calls later");
        assert!(policy.allow(&due(15, 61_000, t0)), "10 calls later");
        assert!(!policy.allow(&due(16, 99_000, t0)));
        assert!(
            policy.allow(&due(17, 100_001, t0)),
            "over the context window it compacts regardless"
        );
        assert!(!policy.allow(&due(18, 50_000, t0)), "and that one counts");
    }

    #[test]
    fn rate_limited_allows_one_per_interval() {
        let t0 = Instant::now();
        let mut policy = RateLimited::new(0, Duration::from_secs(60), 100_000);
        assert!(policy.allow(&due(1, 41_000, t0)));
        assert!(!policy.allow(&due(2, 41_000, t0 + Duration::from_secs(59))));
        assert!(policy.allow(&due(3, 41_000, t0 + Duration::from_secs(60))));
    }
}
