//! When to compact before the threshold forces it: the `cost` rule.
//!
//! A compaction is a fixed cost — the prompt cache rewrites the whole smaller
//! request once, at the write price, and a summary is written — and carrying
//! on without one is a cost that grows: every call reads again, at the read
//! price, what a compaction would have removed. That is the economic order
//! quantity problem (a fixed cost per order, a holding cost per unit per
//! period), and its answer is a size, not a time: compact once the excess
//! (the request's tokens over what a compaction would leave) reaches
//!
//! ```text
//! E* = sqrt(2 · K · g / read),    K = (write − read) · A + summary_cost
//! ```
//!
//! where `A` is the request a compaction leaves (the summary pair and the
//! verbatim tail of `keep_recent_tokens`), `g` the tokens a call adds (the
//! mean over the window: the session so far since the last fold), and
//! `read`, `write` the cache prices. The compaction's rewrite is priced over
//! a read: the call that compacts would otherwise have read a prefix of at
//! least `A` from the cache, so writing `A` costs `write − read` more per
//! token (nearly all of it at Anthropic's 1.25 and 0.1; half of it at
//! OpenAI's 1 and 0.5). Compacting at `E*` makes the cost per call,
//! `K / n + read · (A + g · n / 2) + write · g` over a cycle of `n` calls,
//! least; a larger `K` (a costly LLM summary, a 1-hour cache's write price)
//! compacts less often, a cheaper read (0.05×) less often too.
//!
//! A session that ends soon never earns a compaction back. The cycle pays
//! for itself only if the session lasts `(√2 − 1) · n*` more calls; the
//! calls to come are not known, so the window's own length stands for them
//! (a session that has run n calls since its last fold is as likely as not
//! to run n more). Nothing here looks beyond the request at hand.
//!
//! A cold cache (the host says the session's last request is older than the
//! cache lives) rewrites the whole request whatever happens, so a compaction
//! then costs only its summary: one due soon — its excess half way to `E*`
//! — is done now.
//!
//! The same price model chooses between compactions. A cycle that starts
//! at a request of `A` tokens and ends when the rule compacts again, at a
//! request of `R`, lasts `n = (R − A) / g` calls and costs per call
//!
//! ```text
//! C = K(A) / n + read · (A + R) / 2 + write · g
//! ```
//!
//! The rule measures its excess over a fold (what the next compaction will
//! be), so it compacts again at `R = A_fold + E*` whatever this compaction
//! left. For the fold itself that is the optimum above,
//! `C = sqrt(2 · g · read · K(A)) + read · A + write · g`. The passes alone
//! (the context-engineering passes, which fold nothing) write no summary,
//! `K(A) = (write − read) · A`, but leave more than the fold: their cycle is
//! shorter, each of its calls reads what they kept, and one that leaves
//! `E*` or more over the fold is followed by another compaction at once.
//! Of the two, the one with the lower `C` is made ([`cheaper`]): with a
//! free summary the fold unless the passes leave less, with a dear one the
//! passes when they remove enough.

use crate::settings::Settings;

/// What the rule weighs, in tokens.
#[derive(Clone, Copy, Debug)]
pub struct Carry {
    /// The request as it stands.
    pub request: u64,
    /// The request a compaction would leave.
    pub after: u64,
    /// Tokens of the window (the history since the last fold).
    pub window_tokens: u64,
    /// Model calls in the window (its assistant messages).
    pub window_calls: u64,
}

impl Carry {
    /// `g`: the tokens a call adds, the mean over the window.
    pub fn growth(&self) -> f64 {
        self.window_tokens as f64 / self.window_calls.max(1) as f64
    }
}

/// A compaction as the rule prices it: the request it leaves, in tokens, and
/// whether it writes a summary (a fold does; the passes alone do not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compaction {
    pub leaves: u64,
    pub summarizes: bool,
}

/// `K`: what a compaction costs once, in uncached input tokens, beyond the
/// read the call would otherwise have made. The request it leaves is
/// written to the cache instead of read from it, and its summary, if it
/// writes one, is paid for.
fn fixed_cost(compaction: Compaction, settings: &Settings) -> f64 {
    let (read, write) = (settings.read_price(), settings.write_price());
    let summary = if compaction.summarizes {
        f64::from(settings.summary_cost_tokens)
    } else {
        0.0
    };
    (write - read).max(0.0) * compaction.leaves as f64 + summary
}

/// `E*` with a warm cache after `fold`: the excess over it at which the
/// rule compacts, the calls adding `growth` tokens each.
fn order(fold: Compaction, growth: f64, settings: &Settings) -> f64 {
    (2.0 * fixed_cost(fold, settings) * growth / settings.read_price()).sqrt()
}

/// The expected cost per call, in uncached input tokens, of the cycle
/// `compaction` starts, until the rule compacts again: when the excess over
/// `fold` (the compaction the rule measures against) reaches `E*`. The
/// calls add `growth` tokens each (the window's mean, [`Carry::growth`]).
/// Infinite when `compaction` leaves that much already.
pub fn cost_per_call(
    compaction: Compaction,
    fold: Compaction,
    growth: f64,
    settings: &Settings,
) -> f64 {
    let (read, write) = (settings.read_price(), settings.write_price());
    let start = compaction.leaves as f64;
    let end = fold.leaves as f64 + order(fold, growth, settings);
    if start >= end || growth <= 0.0 {
        return f64::INFINITY;
    }
    // A cold cache rewrites this call's request whatever is done: only the
    // summary is the compaction's own cost then.
    let fixed = if settings.cache_cold {
        fixed_cost(
            Compaction {
                leaves: 0,
                ..compaction
            },
            settings,
        )
    } else {
        fixed_cost(compaction, settings)
    };
    let calls = (end - start) / growth;
    fixed / calls + read * (start + end) / 2.0 + write * growth
}

/// Whether the passes alone, leaving `passes` tokens, are expected to cost
/// no more per call than the fold, leaving `fold`, over the cycle each
/// starts. Both break the cache; the passes save the summary, the fold
/// leaves less for every call to read again and puts the next compaction
/// (another break) further away.
pub fn cheaper(passes: u64, fold: u64, growth: f64, settings: &Settings) -> bool {
    let fold = Compaction {
        leaves: fold,
        summarizes: true,
    };
    let passes = Compaction {
        leaves: passes,
        summarizes: false,
    };
    cost_per_call(passes, fold, growth, settings) <= cost_per_call(fold, fold, growth, settings)
}

/// Whether compacting now is expected to cost less than carrying on.
pub fn compact_now(carry: Carry, settings: &Settings) -> bool {
    if carry.window_calls == 0 || carry.request <= carry.after {
        return false;
    }
    let read = settings.read_price();
    let growth = carry.growth();
    let summary = f64::from(settings.summary_cost_tokens);
    let order = |fixed: f64| (2.0 * fixed * growth / read).sqrt();
    let warm = warm_order(carry, settings);
    let excess = (carry.request - carry.after) as f64;
    if settings.cache_cold {
        // The cache expired: this call rewrites its whole request anyway,
        // so the rewrite is no cost of compacting and only the summary is.
        // A compaction due soon (half way to the warm order size) is done
        // now; a smaller excess is not worth a round of summary of summary.
        return excess >= order(summary).max(warm / 2.0);
    }
    let cycle_calls = warm / growth;
    excess >= warm && carry.window_calls as f64 >= (2f64.sqrt() - 1.0) * cycle_calls
}

/// `E*` with a warm cache: the excess at which the rule compacts.
fn warm_order(carry: Carry, settings: &Settings) -> f64 {
    let fold = Compaction {
        leaves: carry.after,
        summarizes: true,
    };
    order(fold, carry.growth(), settings)
}

/// When the excess has come `share` of the way to `E*` (the soft mark of
/// summaries prepared ahead: the compaction this rule makes is near), the
/// tokens it has left to go.
pub fn remaining(carry: Carry, settings: &Settings, share: f64) -> Option<u64> {
    if carry.window_calls == 0 || carry.request <= carry.after {
        return None;
    }
    let order = warm_order(carry, settings);
    let excess = (carry.request - carry.after) as f64;
    (excess >= share * order).then(|| (order - excess).max(0.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn carry(request: u64, window_calls: u64) -> Carry {
        Carry {
            request,
            after: 12_000,
            window_tokens: 500 * window_calls,
            window_calls,
        }
    }

    #[test]
    fn compacts_once_the_excess_reaches_the_order_size() {
        let settings = Settings::default();
        // K = (1.25 − 0.1) · 12000 = 13800, g = 500:
        // E* = sqrt(2 · 13800 · 500 / 0.1) ≈ 11747.
        assert!(!compact_now(carry(23_700, 40), &settings));
        assert!(compact_now(carry(23_800, 40), &settings));
    }

    #[test]
    fn dearer_summaries_and_cheaper_reads_compact_later() {
        let base = Settings::default();
        let llm = Settings {
            summary_cost_tokens: 20_000,
            ..Settings::default()
        };
        let cheap_reads = Settings {
            cache_read_permille: 50,
            ..Settings::default()
        };
        let at = carry(25_000, 40);
        assert!(compact_now(at, &base));
        assert!(!compact_now(at, &llm));
        assert!(!compact_now(at, &cheap_reads));
    }

    #[test]
    fn a_cold_cache_compacts_what_is_due_soon() {
        // E* ≈ 11747 warm; half of it cold.
        let cold = Settings {
            cache_cold: true,
            ..Settings::default()
        };
        assert!(!compact_now(carry(17_800, 40), &cold));
        assert!(compact_now(carry(17_900, 40), &cold));
        assert!(!compact_now(carry(17_900, 40), &Settings::default()));
        // A dear summary is still paid for.
        let dear = Settings {
            summary_cost_tokens: 40_000,
            ..cold
        };
        assert!(!compact_now(carry(17_900, 40), &dear));
    }

    #[test]
    fn a_session_too_young_to_earn_it_back_carries_on() {
        // n* ≈ 23.5 calls; a cycle pays for itself after ≈ 9.7.
        let settings = Settings::default();
        assert!(!compact_now(carry(23_800, 9), &settings));
        assert!(compact_now(carry(23_800, 10), &settings));
        assert!(!compact_now(carry(12_000, 40), &settings));
    }

    fn fold(leaves: u64) -> Compaction {
        Compaction {
            leaves,
            summarizes: true,
        }
    }

    #[test]
    fn a_folds_cycle_costs_the_order_size_optimum() {
        // K = 13800, g = 500: C = sqrt(2 · 500 · 0.1 · 13800) + 0.1 · 12000
        // + 1.25 · 500 ≈ 2999.7, the least over the cycle's length.
        let settings = Settings::default();
        let at_order = cost_per_call(fold(12_000), fold(12_000), 500.0, &settings);
        let closed = (2.0 * 500.0 * 0.1 * 13_800.0f64).sqrt() + 1_200.0 + 625.0;
        assert!((at_order - closed).abs() < 1e-9 * closed, "{at_order}");
    }

    #[test]
    fn with_a_free_summary_the_passes_alone_must_leave_no_more_than_the_fold() {
        let settings = Settings::default();
        assert!(cheaper(12_000, 12_000, 500.0, &settings));
        assert!(cheaper(11_900, 12_000, 500.0, &settings));
        assert!(!cheaper(12_100, 12_000, 500.0, &settings));
        // E* ≈ 11747 over the fold: the rule would compact again at once.
        let passes = Compaction {
            leaves: 23_800,
            summarizes: false,
        };
        assert_eq!(
            cost_per_call(passes, fold(12_000), 500.0, &settings),
            f64::INFINITY
        );
    }

    #[test]
    fn a_dear_summary_makes_the_passes_alone_worth_leaving_more() {
        // K = 33800: E* ≈ 18385, the fold's cycle ≈ 3663 a call; the passes
        // alone leaving 16000 ≈ 3584, 18000 ≈ 3880.
        let dear = Settings {
            summary_cost_tokens: 20_000,
            ..Settings::default()
        };
        assert!(cheaper(16_000, 12_000, 500.0, &dear));
        assert!(!cheaper(18_000, 12_000, 500.0, &dear));
        assert!(!cheaper(16_000, 12_000, 500.0, &Settings::default()));
    }

    #[test]
    fn a_cold_cache_prices_only_the_summary_of_the_compaction_made_now() {
        // The rewrite is paid whatever is done: the passes alone cost
        // nothing of their own, and still read what they leave.
        let cold = Settings {
            cache_cold: true,
            ..Settings::default()
        };
        assert!(cost_per_call(fold(12_000), fold(12_000), 500.0, &cold) < 2_999.0);
        assert!(!cheaper(12_500, 12_000, 500.0, &cold));
    }
}
