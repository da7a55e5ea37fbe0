//! Choosing how far the fold boundary moves when a compaction happens.
//!
//! The boundary moves to the earliest safe cut point after the previous one at
//! which the request fits `target_tokens` (so as much history as possible stays
//! verbatim, and the next compaction is as far away as the threshold allows),
//! under two floors for what stays verbatim:
//!
//! 1. the last `recent_turns` user turns are kept whole when they fit (the
//!    cut then falls between turns);
//! 2. when they do not (a long coding session is one turn of 150+ tool calls),
//!    the cut goes inside the turn, but the tail keeps at least
//!    `keep_recent_tokens`, and the turn's opener is pinned before it.

use condense_model::segment;
use condense_model::tokens::estimate_messages;
use condense_model::{CoreConfig, Message, Role};

/// Token sums of the window a call works on (the history from the
/// checkpoint's boundary on, or all of it), so each candidate boundary costs
/// O(1). Indices are window indices; `pinned` answers with the whole-history
/// index, since the opener to pin may lie before the window.
pub struct Sizes {
    /// `suffix[i]`: tokens of `messages[i..]`.
    suffix: Vec<u64>,
    /// `systems[i]`: tokens of the system messages before window index `i`,
    /// those before the window included.
    systems: Vec<u64>,
    /// `opener[i]`: the opener pinned when the tail starts at `i`, as
    /// (whole-history index, tokens).
    opener: Vec<Option<(usize, u64)>>,
}

/// What the window's sums need from the messages before it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Before {
    /// Whole-history index of the window's first message.
    pub offset: usize,
    /// Tokens of the system messages before the window.
    pub system_tokens: u64,
    /// The last turn opener before the window: (index, tokens).
    pub last_opener: Option<(usize, u64)>,
}

impl Sizes {
    /// Measures every message of the window.
    pub fn measure(messages: &[Message], before: Before) -> Sizes {
        Sizes::new(messages, &estimate_messages(messages), before)
    }

    pub fn new(messages: &[Message], tokens: &[u32], before: Before) -> Sizes {
        let n = messages.len();
        let mut suffix = vec![0u64; n + 1];
        for i in (0..n).rev() {
            suffix[i] = suffix[i + 1] + u64::from(tokens[i]);
        }
        let mut systems = vec![before.system_tokens; n + 1];
        let mut opener = vec![None; n + 1];
        let mut last_opener = before.last_opener;
        for (i, m) in messages.iter().enumerate() {
            systems[i + 1] = systems[i]
                + if m.role == Role::System {
                    u64::from(tokens[i])
                } else {
                    0
                };
            opener[i] = if m.opens_turn() { None } else { last_opener };
            if m.opens_turn() {
                last_opener = Some((before.offset + i, u64::from(tokens[i])));
            }
        }
        opener[n] = last_opener;
        Sizes {
            suffix,
            systems,
            opener,
        }
    }

    /// Tokens of the whole window.
    pub fn total(&self) -> u64 {
        self.suffix[0]
    }

    pub fn tail(&self, boundary: usize) -> u64 {
        self.suffix[boundary]
    }

    /// The whole-history index of the opener pinned with the tail at window
    /// index `boundary`.
    pub fn pinned(&self, boundary: usize) -> Option<usize> {
        self.opener[boundary].map(|(i, _)| i)
    }

    /// Tokens of what a fold at `boundary` puts before the kept messages: the
    /// folded system messages, a summary pair of `pair_tokens`, and the pinned
    /// opener.
    pub fn head(&self, boundary: usize, pair_tokens: u64) -> u64 {
        let pinned = self.opener[boundary].map_or(0, |(_, t)| t);
        self.systems[boundary] + pair_tokens + pinned
    }

    /// Tokens of the request with the tail at `boundary` and a summary pair of
    /// `pair_tokens`.
    pub fn request(&self, boundary: usize, pair_tokens: u64) -> u64 {
        self.head(boundary, pair_tokens) + self.suffix[boundary]
    }
}

/// Where the verbatim tail starts when the passes run: the latest safe cut
/// after `boundary` that still keeps `keep_recent_tokens` verbatim, so the
/// passes rewrite as much as possible of what is older (`boundary` when no cut
/// keeps that much: then nothing is rewritten).
pub fn verbatim_tail_start(
    sizes: &Sizes,
    cuts: &[usize],
    boundary: usize,
    config: &CoreConfig,
) -> usize {
    cuts.iter()
        .copied()
        .rfind(|&t| t > boundary && sizes.tail(t) >= u64::from(config.keep_recent_tokens))
        .unwrap_or(boundary)
}

/// The new boundary, or `None` when no safe cut point lies after `previous`.
/// `pair_tokens` is what the summary pair may cost at most; `turns_before`
/// counts the turns opened before the window.
pub fn choose_boundary(
    messages: &[Message],
    sizes: &Sizes,
    cuts: &[usize],
    previous: usize,
    config: &CoreConfig,
    pair_tokens: u64,
    turns_before: usize,
) -> Option<usize> {
    let candidates: Vec<usize> = cuts.iter().copied().filter(|&b| b > previous).collect();
    let fits = |b: usize| sizes.request(b, pair_tokens) <= u64::from(config.target_tokens);

    // Whole turns first: the earliest turn start that fits, never inside the
    // last `recent_turns` turns.
    let recent_turns =
        segment::start_of_last_turns(messages, config.recent_turns as usize, turns_before);
    let whole_turns = candidates
        .iter()
        .copied()
        .find(|&b| b <= recent_turns && messages[b].opens_turn() && fits(b));
    if whole_turns.is_some() {
        return whole_turns;
    }

    let keep = u64::from(config.keep_recent_tokens);
    let keeps_floor = |b: &usize| sizes.tail(*b) >= keep;
    let within_threshold =
        |b: &usize| sizes.request(*b, pair_tokens) <= u64::from(config.token_threshold);
    // Inside the turn: the earliest cut that fits and keeps the floor; if none
    // fits, the floor wins over the target (the latest cut keeping the floor,
    // the smallest such request), but never over the threshold.
    candidates
        .iter()
        .copied()
        .find(|&b| keeps_floor(&b) && fits(b))
        .or_else(|| {
            candidates
                .iter()
                .copied()
                .rfind(keeps_floor)
                .filter(within_threshold)
        })
        // The floor cannot be kept under the threshold (the history grew by
        // little since the previous fold, or an unsplittable batch is large):
        // keep as much as fits.
        .or_else(|| candidates.iter().copied().find(|&b| fits(b)))
        .or_else(|| candidates.iter().copied().find(within_threshold))
        .or_else(|| candidates.last().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(turns: usize, steps_per_turn: usize) -> Vec<Message> {
        let mut h = vec![Message::text(Role::System, "system prompt")];
        for t in 0..turns {
            h.push(Message::text(Role::User, format!("request {t}")));
            for s in 0..steps_per_turn {
                h.push(Message::text(
                    Role::Assistant,
                    format!("step {t}.{s} {}", "word ".repeat(200)),
                ));
            }
        }
        h
    }

    fn config(target: u32, recent_turns: u32, keep: u32) -> CoreConfig {
        CoreConfig {
            token_threshold: target * 2,
            target_tokens: target,
            recent_turns,
            keep_recent_tokens: keep,
            summary_max_tokens: 100,
        }
    }

    fn run(h: &[Message], c: &CoreConfig, previous: usize) -> Option<usize> {
        let sizes = Sizes::measure(h, Before::default());
        let cuts = segment::safe_cut_points(h);
        choose_boundary(h, &sizes, &cuts, previous, c, 150, 0)
    }

    #[test]
    fn keeps_whole_recent_turns_when_they_fit() {
        let h = history(6, 3);
        // Each step is ~205 tokens; a turn ~ 620. Target fits about three turns.
        let b = run(&h, &config(2_200, 2, 100), 0).unwrap();
        assert!(h[b].opens_turn(), "cut at a turn start: {b}");
        let sizes = Sizes::measure(&h, Before::default());
        assert!(sizes.request(b, 150) <= 2_200);
        // Earliest such cut: one turn earlier would not fit.
        assert!(sizes.request(b - 4, 150) > 2_200);
    }

    #[test]
    fn cuts_inside_a_long_turn_and_pins_its_opener() {
        let h = history(1, 40);
        let c = config(3_000, 10, 1_000);
        let b = run(&h, &c, 0).unwrap();
        let sizes = Sizes::measure(&h, Before::default());
        assert_eq!(sizes.pinned(b), Some(1));
        assert!(sizes.request(b, 150) <= 3_000);
        assert!(sizes.tail(b) >= 1_000);
    }

    #[test]
    fn tail_floor_wins_over_target() {
        let h = history(1, 40);
        let c = CoreConfig {
            token_threshold: 4_000,
            ..config(1_000, 10, 2_000)
        };
        let b = run(&h, &c, 0).unwrap();
        let sizes = Sizes::measure(&h, Before::default());
        assert!(sizes.tail(b) >= 2_000);
        assert!(sizes.tail(b + 1) < 2_000 || b + 1 == h.len());
    }

    #[test]
    fn keeps_as_much_as_fits_when_every_tail_is_under_the_floor() {
        let h = history(1, 10);
        // Each step ~205 tokens: no tail reaches the 5000-token floor.
        let c = config(1_000, 10, 5_000);
        let b = run(&h, &c, 2).unwrap();
        let sizes = Sizes::measure(&h, Before::default());
        assert!(b > 3 && sizes.request(b, 150) <= 1_000);
        assert!(
            sizes.request(b - 1, 150) > 1_000,
            "the earliest cut that fits: {b}"
        );
    }

    #[test]
    fn verbatim_tail_keeps_the_floor_and_no_more() {
        let h = history(1, 40);
        let sizes = Sizes::measure(&h, Before::default());
        let cuts = segment::safe_cut_points(&h);
        let c = config(3_000, 10, 1_000);
        let t = verbatim_tail_start(&sizes, &cuts, 0, &c);
        assert!(sizes.tail(t) >= 1_000 && sizes.tail(t + 1) < 1_000);
        // No cut after the boundary keeps the floor: nothing to rewrite.
        assert_eq!(
            verbatim_tail_start(&sizes, &cuts, h.len() - 2, &c),
            h.len() - 2
        );
    }

    #[test]
    fn the_floor_never_wins_over_the_threshold() {
        // A large unsplittable message followed by a short tail: keeping the
        // floor would mean keeping the big message, over the threshold.
        let mut h = history(1, 2);
        h.insert(2, Message::text(Role::Assistant, "word ".repeat(2_000)));
        let sizes = Sizes::measure(&h, Before::default());
        let c = CoreConfig {
            token_threshold: 1_500,
            target_tokens: 1_000,
            keep_recent_tokens: 1_000,
            ..config(1_000, 10, 1_000)
        };
        let b = run(&h, &c, 0).unwrap();
        assert!(sizes.request(b, 150) <= 1_500, "cut at {b}");
    }

    #[test]
    fn only_moves_forward() {
        let h = history(1, 10);
        assert_eq!(run(&h, &config(100_000, 10, 100), h.len() - 1), None);
    }
}
