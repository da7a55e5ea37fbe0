//! Replaying a recorded session call by call, the way an agent runtime would
//! have called condense, and measuring what design.md holds us to.
//!
//! The request before each assistant message is `history[..i]`. Prompt-cache
//! economics: a provider bills the part of a request that repeats the previous
//! request (the cached prefix) at about 0.1 of fresh input, and the rest (a
//! cache write) at about 1.25. The same model is applied to sending every
//! request uncompressed, and the ratio of the two is the cost figure.
//!
//! [`optimal`]: the cheapest schedule of compactions for a session, found
//! offline knowing every call to come, which the replay's cost is measured
//! against. Prices by model are `condense-config`'s (`pricing`), a recorded
//! session's call times `condense_host::timing`'s.
//!
//! [`plot`]: the charts, as SVG: a replay's request sizes call by call (the
//! CLI's `--plot`, the README's chart) and spend over time (the proxy's
//! operator page), each also as an element to put inside an HTML page.

use condense_host::{Compressed, Middleware, Status, Transcript};
use condense_model::tokens::estimate_messages;
use condense_model::{CoreConfig, Message, Role};
use serde::Serialize;

pub mod optimal;
pub mod plot;

/// What a session's model calls cost, in uncached input tokens: the prompt
/// cache's prices relative to plain input, and a summary's own cost.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Prices {
    /// Tokens of the cached prefix (the part repeating the previous request).
    pub read: f64,
    /// Tokens written to the cache (everything not in the cached prefix).
    pub write: f64,
    /// Writing one summary (0 for the heuristic summarizer; an LLM
    /// summary's input and output).
    pub summary: f64,
    /// How long the cache keeps a request, in seconds.
    pub ttl_seconds: u32,
}

impl Prices {
    /// Anthropic's 5-minute cache, the common case: reads 0.1, writes 1.25;
    /// summaries free (the heuristic summarizer).
    pub const DEFAULT: Prices = Prices {
        read: 0.1,
        write: 1.25,
        summary: 0.0,
        ttl_seconds: 300,
    };

    /// The cost of a request of which `cached` tokens repeat the previous
    /// request and `fresh` do not.
    pub fn cost(&self, cached: u64, fresh: u64) -> f64 {
        self.read * cached as f64 + self.write * fresh as f64
    }
}

impl Default for Prices {
    fn default() -> Self {
        Prices::DEFAULT
    }
}

/// `cost` relative to `baseline` (1 when there was nothing to pay).
pub(crate) fn ratio(cost: f64, baseline: f64) -> f64 {
    if baseline == 0.0 {
        1.0
    } else {
        cost / baseline
    }
}

/// What one call of the compressor gave back.
pub struct Step<C> {
    pub messages: Vec<Message>,
    pub checkpoint: Option<C>,
    /// The boundary moved on this call.
    pub compacted: bool,
    /// The middleware passed the history through because a guest failed.
    pub failed_open: bool,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ReplayStats {
    /// Model calls replayed (one per assistant message).
    pub calls: usize,
    pub compactions: usize,
    /// Calls whose request does not start with the whole previous request.
    pub cache_breaks: usize,
    /// Calls made after the cache expired (idle past its TTL): written
    /// whole, compressed or not, and no break of condense's.
    pub cache_expiries: usize,
    pub failed_open: usize,
    /// Largest request sent, in estimated tokens.
    pub peak_request_tokens: u64,
    /// Largest request uncompressed (the last one, as a session only grows).
    pub baseline_peak_request_tokens: u64,
    /// Tokens of all the requests sent, and of their cached prefixes.
    pub tokens_sent: u64,
    pub cached_tokens: u64,
    /// The same for every request sent uncompressed.
    pub baseline_tokens_sent: u64,
    pub baseline_cached_tokens: u64,
    /// Largest single message of the session: a request cannot be smaller.
    pub largest_message_tokens: u64,
    /// Estimated tokens of the whole session history.
    pub history_tokens: u64,
    /// What the tokens are priced at.
    pub prices: Prices,
    /// Each call's request, uncompressed and as sent (for a chart; not in
    /// the JSON).
    #[serde(skip)]
    pub per_call: Vec<CallTokens>,
    /// Each compaction's summary pair, in tokens (what the offline optimum
    /// sizes its summaries by; not in the JSON).
    #[serde(skip)]
    pub summary_tokens: Vec<u64>,
}

/// One call's request tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallTokens {
    pub uncompressed: u64,
    pub sent: u64,
    /// condense compacted this call's request.
    pub compacted: bool,
}

impl ReplayStats {
    /// The mean of the compactions' summary pairs, in tokens (`None`
    /// without a compaction).
    pub fn mean_summary_tokens(&self) -> Option<u64> {
        let n = self.summary_tokens.len() as u64;
        (n > 0).then(|| self.summary_tokens.iter().sum::<u64>().div_ceil(n))
    }

    /// These figures priced at `prices` (the tokens are what they were).
    pub fn with_prices(self, prices: Prices) -> ReplayStats {
        ReplayStats { prices, ..self }
    }

    /// Cache-weighted cost of the compressed requests, and of the summaries
    /// their compactions wrote.
    pub fn cost(&self) -> f64 {
        let fresh = self.tokens_sent - self.cached_tokens;
        self.prices.cost(self.cached_tokens, fresh) + self.compactions as f64 * self.prices.summary
    }

    /// Cache-weighted cost of sending every request uncompressed.
    pub fn baseline_cost(&self) -> f64 {
        let fresh = self.baseline_tokens_sent - self.baseline_cached_tokens;
        self.prices.cost(self.baseline_cached_tokens, fresh)
    }

    /// `cost / baseline_cost`: below 1 means condense saved money.
    pub fn cost_ratio(&self) -> f64 {
        ratio(self.cost(), self.baseline_cost())
    }
}

/// The prompt cache's view of a run of requests: how much of each request
/// repeats the one before it (read from the cache; the rest is written), and
/// how many times a request did not start with the previous one (a cache
/// break).
#[derive(Default)]
pub struct CacheMeter {
    previous: Option<Vec<Message>>,
    breaks: usize,
    sent: u64,
    cached: u64,
}

impl CacheMeter {
    pub fn new() -> Self {
        CacheMeter::default()
    }

    /// The cache expired: the next request is written whole, which is no
    /// break.
    pub fn expire(&mut self) {
        self.previous = None;
    }

    /// Records `request` as sent; `tokens` is the estimate of each of its
    /// messages.
    pub fn send(&mut self, request: Vec<Message>, tokens: &[u32]) {
        let cached_len = match &self.previous {
            Some(p) if request.len() >= p.len() && request[..p.len()] == p[..] => p.len(),
            Some(_) => {
                self.breaks += 1;
                0
            }
            None => 0,
        };
        let cached: u64 = tokens[..cached_len].iter().map(|&t| u64::from(t)).sum();
        let fresh: u64 = tokens[cached_len..].iter().map(|&t| u64::from(t)).sum();
        self.sent += cached + fresh;
        self.cached += cached;
        self.previous = Some(request);
    }

    /// Tokens of the requests so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Tokens of the requests so far that repeated the request before them
    /// (the prompt cache's hits).
    pub fn cached(&self) -> u64 {
        self.cached
    }

    /// Requests so far that did not start with the one before them.
    pub fn breaks(&self) -> usize {
        self.breaks
    }
}

/// The figures of a run of model calls, built call by call: what each
/// request would have been uncompressed and what was sent instead. A replay
/// and an agent runtime measure with it alike, so their figures agree.
#[derive(Default)]
pub struct StatsMeter {
    baseline: CacheMeter,
    compressed: CacheMeter,
    stats: ReplayStats,
}

impl StatsMeter {
    pub fn new() -> StatsMeter {
        StatsMeter::default()
    }

    /// Records one call: the request uncompressed and as sent, each with
    /// the estimate of each of its messages.
    pub fn record(
        &mut self,
        uncompressed: (Vec<Message>, &[u32]),
        sent: (Vec<Message>, &[u32]),
        compacted: bool,
        failed_open: bool,
    ) {
        let total = |tokens: &[u32]| tokens.iter().map(|&t| u64::from(t)).sum::<u64>();
        let call = CallTokens {
            uncompressed: total(uncompressed.1),
            sent: total(sent.1),
            compacted,
        };
        let stats = &mut self.stats;
        stats.calls += 1;
        stats.compactions += usize::from(compacted);
        stats.failed_open += usize::from(failed_open);
        stats.peak_request_tokens = stats.peak_request_tokens.max(call.sent);
        stats.baseline_peak_request_tokens =
            stats.baseline_peak_request_tokens.max(call.uncompressed);
        stats.per_call.push(call);
        self.baseline.send(uncompressed.0, uncompressed.1);
        self.compressed.send(sent.0, sent.1);
    }

    /// The cache expired before the next call (idle past its TTL).
    pub fn expire(&mut self) {
        self.baseline.expire();
        self.compressed.expire();
        self.stats.cache_expiries += 1;
    }

    /// The figures so far (the session's own sizes left at zero: they are
    /// the caller's to fill in).
    pub fn stats(&self) -> ReplayStats {
        ReplayStats {
            cache_breaks: self.compressed.breaks(),
            tokens_sent: self.compressed.sent(),
            cached_tokens: self.compressed.cached(),
            baseline_tokens_sent: self.baseline.sent(),
            baseline_cached_tokens: self.baseline.cached(),
            ..self.stats.clone()
        }
    }
}

/// The model calls of a recorded session: the request before each assistant
/// message (but a first one) is `history[..end]`.
pub fn call_ends(history: &[Message]) -> Vec<usize> {
    (1..history.len())
        .filter(|&i| history[i].role == Role::Assistant)
        .collect()
}

/// Per call of [`call_ends`], whether the cache had expired, from `cold`
/// per assistant message (missing: warm).
pub(crate) fn cold_calls(history: &[Message], cold: &[bool]) -> Vec<bool> {
    history
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::Assistant)
        .zip(cold.iter().copied().chain(std::iter::repeat(false)))
        .filter(|((i, _), _)| *i > 0)
        .map(|(_, cold)| cold)
        .collect()
}

/// Replays `history` through `compress`, which gets each request and the
/// checkpoint returned by the call before.
pub fn replay<C>(
    history: &[Message],
    mut compress: impl FnMut(&[Message], Option<&C>) -> Step<C>,
) -> ReplayStats {
    replay_timed(history, &[], |request, checkpoint, _| {
        compress(request, checkpoint)
    })
}

/// [`replay`] with the prompt cache expiring: `cold[k]` says that the
/// cache had expired when the call of the k-th assistant message was made
/// (missing: warm). `compress` is told, and the call is priced written whole.
pub fn replay_timed<C>(
    history: &[Message],
    cold: &[bool],
    mut compress: impl FnMut(&[Message], Option<&C>, bool) -> Step<C>,
) -> ReplayStats {
    let tokens = estimate_messages(history);
    let mut meter = StatsMeter::new();
    let mut checkpoint: Option<C> = None;
    for (i, expired) in call_ends(history)
        .into_iter()
        .zip(cold_calls(history, cold))
    {
        let request = &history[..i];
        if expired {
            meter.expire();
        }
        let step = compress(request, checkpoint.as_ref(), expired);
        let step_tokens = estimate_messages(&step.messages);
        meter.record(
            (request.to_vec(), &tokens[..i]),
            (step.messages, &step_tokens),
            step.compacted,
            step.failed_open,
        );
        checkpoint = step.checkpoint;
    }
    ReplayStats {
        largest_message_tokens: tokens.iter().copied().max().map_or(0, u64::from),
        history_tokens: tokens.iter().map(|&t| u64::from(t)).sum(),
        ..meter.stats()
    }
}

/// Replays `history` through the fail-open middleware; `on_call` sees each
/// request and what the middleware made of it.
pub fn replay_middleware(
    middleware: &Middleware,
    config: &CoreConfig,
    settings: &str,
    history: &[Message],
    on_call: impl FnMut(&[Message], &Compressed),
) -> ReplayStats {
    replay_middleware_timed(middleware, config, settings, None, false, history, on_call)
}

/// When a replayed session's prompt cache expired, and what the compressor
/// is told then.
pub struct Expiry<'a> {
    /// Per assistant message: the cache had expired when its call was made.
    pub cold: &'a [bool],
    /// The compressor's settings on those calls (its own way of being told).
    pub cold_settings: &'a str,
}

/// [`replay_middleware`] with the cache expiring as `expiry` says, and
/// with `recall` offered to the model or not (the requests then name their
/// recall handles, which cost their tokens).
pub fn replay_middleware_timed(
    middleware: &Middleware,
    config: &CoreConfig,
    settings: &str,
    expiry: Option<Expiry>,
    recall: bool,
    history: &[Message],
    mut on_call: impl FnMut(&[Message], &Compressed),
) -> ReplayStats {
    // The replayed session grows by appending, as an agent runtime's does:
    // each message is measured once, not once per call.
    let mut transcript = Transcript::new();
    let mut summary_tokens = Vec::new();
    let cold = expiry.as_ref().map_or(&[][..], |e| e.cold);
    let stats = replay_timed(history, cold, |request, checkpoint, expired| {
        transcript.extend(request[transcript.len()..].iter().cloned());
        let settings = match &expiry {
            Some(e) if expired => e.cold_settings,
            _ => settings,
        };
        let sent = middleware.compress_transcript_offering(
            &transcript,
            config,
            settings,
            checkpoint,
            recall,
        );
        on_call(request, &sent);
        let compacted = sent.report.compacted();
        if let Some(report) = sent.report.guest().filter(|_| compacted) {
            summary_tokens.push(u64::from(report.summary_tokens));
        }
        Step {
            compacted,
            failed_open: sent.report.status() == Status::FailedOpen,
            messages: sent.messages(request),
            checkpoint: sent.checkpoint,
        }
    });
    ReplayStats {
        summary_tokens,
        ..stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history() -> Vec<Message> {
        let mut h = vec![Message::text(Role::User, "task")];
        for i in 0..5 {
            h.push(Message::text(Role::Assistant, format!("answer {i}")));
            h.push(Message::text(Role::User, format!("more {i}")));
        }
        h
    }

    #[test]
    fn uncompressed_replay_costs_exactly_the_baseline() {
        let h = history();
        let stats = replay::<()>(&h, |req, _| Step {
            messages: req.to_vec(),
            checkpoint: None,
            compacted: false,
            failed_open: false,
        });
        assert_eq!(stats.calls, 5);
        assert_eq!(stats.cache_breaks, 0);
        assert!((stats.cost_ratio() - 1.0).abs() < 1e-12);
        assert_eq!(stats.tokens_sent, stats.baseline_tokens_sent);
        assert_eq!(stats.cached_tokens, stats.baseline_cached_tokens);
        assert_eq!(
            stats.peak_request_tokens,
            stats.baseline_peak_request_tokens
        );
        let calls = &stats.per_call;
        assert!(
            calls
                .iter()
                .all(|c| c.sent == c.uncompressed && !c.compacted)
        );
        // Each request but the first repeats the one before it.
        let repeated: u64 = calls[..calls.len() - 1].iter().map(|c| c.sent).sum();
        assert_eq!(stats.cached_tokens, repeated);
    }

    #[test]
    fn a_changed_prefix_counts_as_a_cache_break() {
        let h = history();
        let mut n = 0;
        let stats = replay::<()>(&h, |req, _| {
            n += 1;
            // From the third call on, drop the first message: the prefix changes once.
            let messages = if n >= 3 {
                req[1..].to_vec()
            } else {
                req.to_vec()
            };
            Step {
                messages,
                checkpoint: None,
                compacted: n == 3,
                failed_open: false,
            }
        });
        assert_eq!(stats.cache_breaks, 1);
        assert_eq!(stats.compactions, 1);
        assert!(stats.cost_ratio() < 1.5);
    }
}
