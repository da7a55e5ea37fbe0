//! Replaying a recorded session call by call, the way an agent runtime would
//! have called condense, and measuring what design.md holds us to.
//!
//! The request before each assistant message is `history[..i]`. Prompt-cache
//! economics: a provider bills the part of a request that repeats the previous
//! request (the cached prefix) at about 0.1 of fresh input, and the rest (a
//! cache write) at about 1.25. The same model is applied to sending every
//! request uncompressed, and the ratio of the two is the cost figure.

use crate::{Compressed, Middleware, Status, Transcript};
use condense_model::tokens::estimate_messages;
use condense_model::{CoreConfig, Message, Role, Trigger};
use serde::Serialize;

/// Price of cached-prefix tokens relative to plain input.
pub const CACHED_PRICE: f64 = 0.1;
/// Price of tokens written to the cache (everything not in the cached prefix).
pub const WRITE_PRICE: f64 = 1.25;

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
    pub failed_open: usize,
    /// Largest request sent, in estimated tokens.
    pub peak_request_tokens: u64,
    /// Largest single message of the session: a request cannot be smaller.
    pub largest_message_tokens: u64,
    /// Estimated tokens of the whole session history.
    pub history_tokens: u64,
    /// Cache-weighted cost of the compressed requests.
    pub cost: f64,
    /// Cache-weighted cost of sending every request uncompressed.
    pub baseline_cost: f64,
}

impl ReplayStats {
    /// `cost / baseline_cost`: below 1 means condense saved money.
    pub fn cost_ratio(&self) -> f64 {
        if self.baseline_cost == 0.0 {
            1.0
        } else {
            self.cost / self.baseline_cost
        }
    }
}

/// The prompt cache's view of a run of requests: each request's
/// cache-weighted cost given the one before it, and how many times a request
/// did not start with the previous one (a cache break).
#[derive(Default)]
pub struct CacheMeter {
    previous: Option<Vec<Message>>,
    total: f64,
    breaks: usize,
}

impl CacheMeter {
    pub fn new() -> Self {
        CacheMeter {
            previous: None,
            total: 0.0,
            breaks: 0,
        }
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
        self.total += CACHED_PRICE * cached as f64 + WRITE_PRICE * fresh as f64;
        self.previous = Some(request);
    }

    /// Requests so far that did not start with the one before them.
    pub fn breaks(&self) -> usize {
        self.breaks
    }

    /// The cache-weighted cost of the requests so far, in tokens.
    pub fn cost(&self) -> f64 {
        self.total
    }
}

/// Replays `history` through `compress`, which gets each request and the
/// checkpoint returned by the call before.
pub fn replay<C>(
    history: &[Message],
    mut compress: impl FnMut(&[Message], Option<&C>) -> Step<C>,
) -> ReplayStats {
    let tokens = estimate_messages(history);
    let mut stats = ReplayStats {
        largest_message_tokens: tokens.iter().copied().max().map_or(0, u64::from),
        history_tokens: tokens.iter().map(|&t| u64::from(t)).sum(),
        ..ReplayStats::default()
    };
    let mut baseline = CacheMeter::new();
    let mut compressed = CacheMeter::new();
    let mut checkpoint: Option<C> = None;
    for (i, m) in history.iter().enumerate() {
        if m.role != Role::Assistant || i == 0 {
            continue;
        }
        let request = &history[..i];
        let step = compress(request, checkpoint.as_ref());
        stats.calls += 1;
        stats.compactions += usize::from(step.compacted);
        stats.failed_open += usize::from(step.failed_open);
        let step_tokens = estimate_messages(&step.messages);
        stats.peak_request_tokens = stats
            .peak_request_tokens
            .max(step_tokens.iter().map(|&t| u64::from(t)).sum());
        baseline.send(request.to_vec(), &tokens[..i]);
        compressed.send(step.messages, &step_tokens);
        checkpoint = step.checkpoint;
    }
    stats.cache_breaks = compressed.breaks();
    stats.cost = compressed.cost();
    stats.baseline_cost = baseline.cost();
    stats
}

/// Replays `history` through the fail-open middleware; `on_call` sees each
/// request and what the middleware made of it.
pub fn replay_middleware(
    middleware: &Middleware,
    config: &CoreConfig,
    settings: &str,
    history: &[Message],
    mut on_call: impl FnMut(&[Message], &Compressed),
) -> ReplayStats {
    // The replayed session grows by appending, as an agent runtime's does:
    // each message is measured once, not once per call.
    let mut transcript = Transcript::new();
    replay(history, |request, checkpoint| {
        transcript.extend(request[transcript.len()..].iter().cloned());
        let sent = middleware.compress_transcript(&transcript, config, settings, checkpoint);
        on_call(request, &sent);
        Step {
            compacted: sent.report.status() != Status::FailedOpen
                && sent
                    .report
                    .guest()
                    .is_some_and(|r| r.trigger == Trigger::Compacted),
            failed_open: sent.report.status() == Status::FailedOpen,
            messages: sent.messages(request),
            checkpoint: sent.checkpoint,
        }
    })
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
