//! The offline optimum: the cheapest schedule of compactions for a recorded
//! session, knowing every call to come. It is the yardstick a compaction
//! policy is measured against (`condense replay --optimal`): no policy that
//! sees only the past can do better, so condense's cost over the optimum's
//! says how much a better schedule could still save.
//!
//! The schedules are the ones condense's fold makes: at a call, fold the
//! history before a safe cut ([`segment::safe_cut_points`]) into a summary
//! pair of `summary_tokens`, pin the opener of the turn the cut falls in, keep
//! the rest verbatim, and send that until the next compaction. Every request
//! stays within `token_threshold`, and every compaction keeps at least
//! `keep_recent_tokens` verbatim, unless cuts keep it but none of them fits
//! the threshold (then any cut that fits: condense's own fallback). The
//! passes (cleared results, pruned reasoning) are left out: the optimum is
//! over where and when to fold.
//!
//! Costs are the replay's ([`ReplayStats::cost`](crate::ReplayStats::cost)):
//! between compactions a request extends the one before, so the cache reads
//! the previous request and writes what was added; a compaction rewrites its
//! whole request, and writes a summary at `prices.summary`.
//!
//! Exact, by dynamic programming over (call, cut) states. A compaction's cost
//! depends only on its own call and cut, and what follows it only on that cut,
//! so the cheapest way to reach a compaction at call `k` is one number for all
//! its cuts: `best_before[k]`, the least cost of calls `0..k` over every
//! earlier state that can carry on to call `k - 1` within the threshold. Each
//! state's carried stretch is summed in O(1) from prefix sums, and a stretch
//! ends once its requests pass the threshold (they only grow), so the work is
//! states × the calls one stretch lasts.

use condense_model::tokens::estimate_messages;
use condense_model::{CoreConfig, Message, Role, segment};
use serde::Serialize;

use crate::{Prices, call_ends, cold_calls};

/// The cheapest schedule found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Optimum {
    /// Cache-weighted cost of the schedule's requests.
    pub cost: f64,
    /// Cache-weighted cost of sending every request uncompressed, priced
    /// alike.
    pub baseline_cost: f64,
    /// The compactions, in call order.
    pub compactions: Vec<Compaction>,
    /// Largest request of the schedule, in tokens.
    pub peak_request_tokens: u64,
    /// The summary pair's size every compaction was charged.
    pub summary_tokens: u64,
}

impl Optimum {
    /// `cost / baseline_cost`, as [`ReplayStats::cost_ratio`](crate::ReplayStats::cost_ratio).
    pub fn cost_ratio(&self) -> f64 {
        crate::ratio(self.cost, self.baseline_cost)
    }
}

/// One compaction of a schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Compaction {
    /// The model call (0-based, in replay order) it happens at.
    pub call: usize,
    /// The history index the verbatim tail starts at.
    pub cut: usize,
    /// The request it sends, in tokens.
    pub request_tokens: u64,
}

/// The sizes a schedule is priced by, in tokens.
struct Sizes {
    /// `prefix[i]`: tokens of `history[..i]`.
    prefix: Vec<u64>,
    /// `ends[q]`: the history length at call `q`.
    ends: Vec<usize>,
    /// `requests_before[q]`: the sum of `prefix[ends[p]]` for `p < q`.
    requests_before: Vec<u64>,
    /// `cold_before[q]`: how many calls `p < q` were made with the cache
    /// expired, and the sum of `prefix[ends[p - 1]]` over them (what such a
    /// call writes again instead of reading).
    cold_before: Vec<(u64, u64)>,
    cuts: Vec<usize>,
    /// `head[c]`: what a fold at `cuts[c]` puts before the tail: the system
    /// messages, the summary pair and the pinned opener.
    head: Vec<u64>,
}

impl Sizes {
    fn new(history: &[Message], summary_tokens: u64, cold: &[bool]) -> Sizes {
        let tokens = estimate_messages(history);
        let mut prefix = vec![0u64; history.len() + 1];
        let mut systems = vec![0u64; history.len() + 1];
        for (i, m) in history.iter().enumerate() {
            let t = u64::from(tokens[i]);
            prefix[i + 1] = prefix[i] + t;
            systems[i + 1] = systems[i] + if m.role == Role::System { t } else { 0 };
        }
        let ends = call_ends(history);
        let mut requests_before = vec![0u64; ends.len() + 1];
        for (q, &end) in ends.iter().enumerate() {
            requests_before[q + 1] = requests_before[q] + prefix[end];
        }
        let expired = cold_calls(history, cold);
        let mut cold_before = vec![(0u64, 0u64); ends.len() + 1];
        for q in 0..ends.len() {
            let (n, sum) = cold_before[q];
            cold_before[q + 1] = if q > 0 && expired[q] {
                (n + 1, sum + prefix[ends[q - 1]])
            } else {
                (n, sum)
            };
        }
        let cuts = segment::safe_cut_points(history);
        let head = cuts
            .iter()
            // The system messages before the cut stay at the head.
            .map(|&cut| {
                let opener =
                    segment::opener_before(history, cut).map_or(0, |i| u64::from(tokens[i]));
                systems[cut] + summary_tokens + opener
            })
            .collect();
        Sizes {
            prefix,
            ends,
            requests_before,
            cold_before,
            cuts,
            head,
        }
    }

    /// The request at call `q` with the tail from cut `c` (`None`: nothing
    /// folded yet).
    fn request(&self, c: Option<usize>, q: usize) -> u64 {
        let end = self.prefix[self.ends[q]];
        match c {
            None => end,
            Some(c) => self.head[c] + end - self.prefix[self.cuts[c]],
        }
    }

    /// The cost of calls `from + 1 ..= to` carried on with cut `c`: each
    /// reads the request before and writes what was added, or, made with
    /// the cache expired, writes the request before again instead of
    /// reading it.
    fn carried(&self, c: Option<usize>, from: usize, to: usize, prices: Prices) -> f64 {
        if to <= from {
            return 0.0;
        }
        let calls = (to - from) as f64;
        // Σ request(c, q) for q in from..to, from the prefix sums.
        let offset = match c {
            None => 0.0,
            Some(c) => self.head[c] as f64 - self.prefix[self.cuts[c]] as f64,
        };
        let read = calls * offset + (self.requests_before[to] - self.requests_before[from]) as f64;
        let written = self.prefix[self.ends[to]] - self.prefix[self.ends[from]];
        // The same over the calls made cold: their request before, again.
        let (n_to, sum_to) = self.cold_before[to + 1];
        let (n_from, sum_from) = self.cold_before[from + 1];
        let again = (n_to - n_from) as f64 * offset + (sum_to - sum_from) as f64;
        prices.read * read + prices.write * written as f64 + (prices.write - prices.read) * again
    }
}

/// How the cheapest way to a compaction at a call comes about.
#[derive(Clone, Copy)]
struct Best {
    cost: f64,
    /// The compaction before it (`None`: the first one), as (call, cut).
    from: Option<(usize, usize)>,
}

/// The cheapest schedule for `history` under `config`'s threshold and tail
/// floor, every summary pair `summary_tokens` long, priced by `prices`, the
/// cache expired where `cold` says (per assistant message, as
/// [`replay_timed`](crate::replay_timed) reads it).
/// `None` when no schedule keeps every request within the threshold (a call
/// whose newest messages alone are larger).
pub fn optimum(
    history: &[Message],
    config: &CoreConfig,
    summary_tokens: u64,
    prices: Prices,
    cold: &[bool],
) -> Option<Optimum> {
    let sizes = Sizes::new(history, summary_tokens, cold);
    let calls = sizes.ends.len();
    if calls == 0 {
        return Some(Optimum {
            cost: 0.0,
            baseline_cost: 0.0,
            compactions: Vec::new(),
            peak_request_tokens: 0,
            summary_tokens,
        });
    }
    let threshold = u64::from(config.token_threshold);
    let floor = u64::from(config.keep_recent_tokens);
    // Nothing folded: the uncompressed requests (calls 0..=q).
    let unfolded =
        |q: usize| prices.write * sizes.request(None, 0) as f64 + sizes.carried(None, 0, q, prices);
    let baseline_cost = unfolded(calls - 1);
    let unfolded_calls = (0..calls)
        .take_while(|&q| sizes.request(None, q) <= threshold)
        .count();
    // best_before[k]: the cheapest way to pay calls 0..k and compact at k;
    // first, with nothing folded before.
    let mut best_before: Vec<Option<Best>> = (0..calls)
        .map(|k| {
            (k <= unfolded_calls).then(|| Best {
                cost: if k == 0 { 0.0 } else { unfolded(k - 1) },
                from: None,
            })
        })
        .collect();
    let mut finish = (unfolded_calls == calls).then_some(Best {
        cost: baseline_cost,
        from: None,
    });
    for k in 0..calls {
        let Some(before) = best_before[k] else {
            continue;
        };
        let end = sizes.ends[k];
        let tail = |c: usize| sizes.prefix[end] - sizes.prefix[sizes.cuts[c]];
        let fits = |c: usize| sizes.cuts[c] < end && sizes.request(Some(c), k) <= threshold;
        // The floor yields only where cuts keep it but none of them fits,
        // as condense's does (a large batch of results just arrived).
        let cuts = 0..sizes.cuts.len();
        let keeping = || {
            cuts.clone()
                .filter(|&c| sizes.cuts[c] < end && tail(c) >= floor)
        };
        let floor = if keeping().next().is_some() && !keeping().any(fits) {
            0
        } else {
            floor
        };
        for c in cuts {
            if !fits(c) || tail(c) < floor {
                continue;
            }
            // Compact at k to cut c, then carry on through q, while the
            // requests fit; after each q, the next compaction may come.
            let here =
                before.cost + prices.write * sizes.request(Some(c), k) as f64 + prices.summary;
            let mut q = k;
            loop {
                let cost = here + sizes.carried(Some(c), k, q, prices);
                let slot = if q + 1 < calls {
                    &mut best_before[q + 1]
                } else {
                    &mut finish
                };
                if slot.is_none_or(|b| cost < b.cost) {
                    *slot = Some(Best {
                        cost,
                        from: Some((k, c)),
                    });
                }
                if q + 1 < calls && sizes.request(Some(c), q + 1) <= threshold {
                    q += 1;
                } else {
                    break;
                }
            }
        }
    }
    let finish = finish?;
    // Walk the compactions back from the last one.
    let mut compactions = Vec::new();
    let mut at = finish.from;
    while let Some((k, c)) = at {
        compactions.push(Compaction {
            call: k,
            cut: sizes.cuts[c],
            request_tokens: sizes.request(Some(c), k),
        });
        at = best_before[k].and_then(|b| b.from);
    }
    compactions.reverse();
    let peak_request_tokens = peak(&sizes, &compactions, calls);
    Some(Optimum {
        cost: finish.cost,
        baseline_cost,
        compactions,
        peak_request_tokens,
        summary_tokens,
    })
}

/// The largest request of the schedule `compactions`.
fn peak(sizes: &Sizes, compactions: &[Compaction], calls: usize) -> u64 {
    let mut cut = None;
    let mut next = compactions.iter().peekable();
    (0..calls)
        .map(|q| {
            if let Some(c) = next.next_if(|c| c.call == q) {
                cut = sizes.cuts.binary_search(&c.cut).ok();
            }
            sizes.request(cut, q)
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_model::{Part, ToolCall, ToolResult};

    /// A small history from `seed`: a system prompt, turns of tool steps
    /// and plain answers, message sizes varied.
    fn history(seed: u64, calls: usize) -> Vec<Message> {
        let mut rng = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut next = |n: u64| {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (rng >> 33) % n
        };
        let text = |role, words: u64| Message::text(role, "word ".repeat(words as usize));
        let mut h = vec![text(Role::System, 40), text(Role::User, 10 + next(60))];
        for i in 0..calls {
            if i > 0 && next(4) == 0 {
                h.push(text(Role::User, 5 + next(80)));
            }
            if next(3) == 0 {
                h.push(text(Role::Assistant, 5 + next(100)));
                continue;
            }
            let id = format!("c{i}");
            h.push(Message {
                role: Role::Assistant,
                parts: vec![Part::ToolCall(ToolCall {
                    id: id.clone(),
                    name: "Read".into(),
                    arguments: "{}".into(),
                })],
            });
            h.push(Message {
                role: Role::Tool,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: id,
                    content: "line ".repeat(10 + next(250) as usize),
                    is_error: false,
                })],
            });
        }
        h.push(text(Role::Assistant, 3));
        h
    }

    /// One element of a request: a history message by index, or a summary
    /// (each compaction writes its own).
    #[derive(Clone, Copy, PartialEq)]
    enum Element {
        Message(usize),
        Summary(usize),
    }

    /// Every schedule tried, requests built message by message and priced
    /// by comparing each with the one before: the least cost, if any
    /// schedule fits.
    struct Brute<'a> {
        history: &'a [Message],
        tokens: Vec<u64>,
        ends: Vec<usize>,
        cuts: Vec<usize>,
        config: CoreConfig,
        summary_tokens: u64,
        prices: Prices,
        summaries: usize,
        /// Per call: made with the cache expired.
        cold: Vec<bool>,
    }

    impl Brute<'_> {
        fn request(&mut self, fold: Option<(usize, usize)>, end: usize) -> Vec<(Element, u64)> {
            let message = |i: usize| (Element::Message(i), self.tokens[i]);
            match fold {
                None => (0..end).map(message).collect(),
                Some((cut, summary)) => {
                    let mut r: Vec<_> = (0..cut)
                        .filter(|&i| self.history[i].role == Role::System)
                        .map(message)
                        .collect();
                    r.push((Element::Summary(summary), self.summary_tokens));
                    r.extend(segment::opener_before(self.history, cut).map(message));
                    r.extend((cut..end).map(message));
                    r
                }
            }
        }

        fn price(&self, previous: &[(Element, u64)], request: &[(Element, u64)]) -> f64 {
            let total = |r: &[(Element, u64)]| r.iter().map(|(_, t)| t).sum::<u64>();
            let extends = request.len() >= previous.len()
                && previous.iter().zip(request).all(|(a, b)| a.0 == b.0);
            if extends {
                self.prices
                    .cost(total(previous), total(&request[previous.len()..]))
            } else {
                self.prices.cost(0, total(request))
            }
        }

        fn best(
            &mut self,
            q: usize,
            fold: Option<(usize, usize)>,
            previous: &[(Element, u64)],
        ) -> f64 {
            if q == self.ends.len() {
                return 0.0;
            }
            // An expired cache holds nothing to read.
            let previous = if self.cold[q] { &[][..] } else { previous };
            let end = self.ends[q];
            let fits = |r: &[(Element, u64)], t: u64| r.iter().map(|(_, t)| t).sum::<u64>() <= t;
            let threshold = u64::from(self.config.token_threshold);
            let mut best = f64::INFINITY;
            let carried = self.request(fold, end);
            if fits(&carried, threshold) {
                best = self.price(previous, &carried) + self.best(q + 1, fold, &carried);
            }
            // Every compaction that keeps the floor and fits; if cuts keep
            // the floor but none fits, every one that fits.
            let mut options = Vec::new();
            for cut in self.cuts.clone().into_iter().filter(|&cut| cut < end) {
                self.summaries += 1;
                let fold = Some((cut, self.summaries));
                let request = self.request(fold, end);
                let tail: u64 = self.tokens[cut..end].iter().sum();
                options.push((tail, fits(&request, threshold), fold, request));
            }
            let floor = u64::from(self.config.keep_recent_tokens);
            let keeps = |o: &(u64, bool, _, _)| o.0 >= floor;
            let floor_yields =
                options.iter().any(keeps) && !options.iter().any(|o| keeps(o) && o.1);
            options.retain(|o| o.1 && (floor_yields || keeps(o)));
            for (_, _, fold, request) in options {
                let cost = self.price(previous, &request)
                    + self.prices.summary
                    + self.best(q + 1, fold, &request);
                best = best.min(cost);
            }
            best
        }
    }

    fn brute<'a>(
        history: &'a [Message],
        config: CoreConfig,
        summary_tokens: u64,
        prices: Prices,
        cold: &[bool],
    ) -> Brute<'a> {
        // The generated histories open with a system message: every
        // assistant message is a call.
        let ends = call_ends(history);
        Brute {
            cold: (0..ends.len())
                .map(|q| cold.get(q).copied().unwrap_or(false))
                .collect(),
            history,
            tokens: estimate_messages(history)
                .into_iter()
                .map(u64::from)
                .collect(),
            ends,
            cuts: segment::safe_cut_points(history),
            config,
            summary_tokens,
            prices,
            summaries: 0,
        }
    }

    /// The cost of the schedule `compactions`, priced request by request.
    fn priced(brute: &mut Brute, compactions: &[Compaction]) -> f64 {
        let (mut fold, mut previous, mut cost) = (None, Vec::new(), 0.0);
        for (q, end) in brute.ends.clone().into_iter().enumerate() {
            if let Some(c) = compactions.iter().find(|c| c.call == q) {
                brute.summaries += 1;
                fold = Some((c.cut, brute.summaries));
                cost += brute.prices.summary;
            }
            let request = brute.request(fold, end);
            if brute.cold[q] {
                previous.clear();
            }
            cost += brute.price(&previous, &request);
            previous = request;
        }
        cost
    }

    fn config(threshold: u32, floor: u32) -> CoreConfig {
        CoreConfig {
            token_threshold: threshold,
            target_tokens: threshold / 2,
            keep_recent_tokens: floor,
            summary_max_tokens: 64,
            recent_turns: 0,
        }
    }

    #[test]
    fn the_optimum_is_what_trying_every_schedule_finds() {
        let mut compacted = 0;
        for seed in 0..120 {
            let history = history(seed, 4 + (seed % 3) as usize);
            let total: u64 = estimate_messages(&history)
                .iter()
                .map(|&t| u64::from(t))
                .sum();
            let threshold = (total * (35 + seed % 40) / 100) as u32;
            // Floors from easy to one that often cannot be kept.
            let config = config(threshold, threshold * [20, 50, 80][seed as usize % 3] / 100);
            // Default prices; a 1-hour cache with cheap reads; summaries
            // that cost as much as a request.
            let prices = match seed / 3 % 3 {
                0 => Prices::DEFAULT,
                1 => Prices {
                    read: 0.05,
                    write: 2.0,
                    ..Prices::DEFAULT
                },
                _ => Prices {
                    summary: total as f64 / 4.0,
                    ..Prices::DEFAULT
                },
            };
            let summary = 20 + seed % 50;
            // Half the cases with the cache expiring before some calls.
            let cold: Vec<bool> = (0..10).map(|q| seed % 2 == 1 && q % 3 == 2).collect();
            let mut tried = brute(&history, config, summary, prices, &cold);
            let least = tried.best(0, None, &[]);
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.max(1.0);
            match optimum(&history, &config, summary, prices, &cold) {
                None => assert!(
                    least.is_infinite(),
                    "seed {seed}: brute force found {least}"
                ),
                Some(found) => {
                    assert!(
                        close(found.cost, least),
                        "seed {seed}: optimum {} vs brute force {least}",
                        found.cost
                    );
                    // The schedule it reports costs that, and the baseline is
                    // priced alike.
                    let again = priced(&mut tried, &found.compactions);
                    assert!(
                        close(again, found.cost),
                        "seed {seed}: {again} vs {}",
                        found.cost
                    );
                    let baseline = priced(&mut tried, &[]);
                    assert!(close(found.baseline_cost, baseline), "seed {seed}");
                    assert!(
                        found.peak_request_tokens <= u64::from(threshold),
                        "seed {seed}"
                    );
                    compacted += usize::from(!found.compactions.is_empty());
                }
            }
        }
        // The cases must exercise compaction, not only the unfolded run.
        assert!(compacted >= 40, "only {compacted} cases compacted");
    }
}
