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

/// Whether compacting now is expected to cost less than carrying on.
pub fn compact_now(carry: Carry, settings: &Settings) -> bool {
    if carry.window_calls == 0 || carry.request <= carry.after {
        return false;
    }
    let read = settings.read_price();
    let growth = carry.window_tokens as f64 / carry.window_calls as f64;
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
    let (read, write) = (settings.read_price(), settings.write_price());
    let growth = carry.window_tokens as f64 / carry.window_calls.max(1) as f64;
    let fixed =
        (write - read).max(0.0) * carry.after as f64 + f64::from(settings.summary_cost_tokens);
    (2.0 * fixed * growth / read).sqrt()
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
}
