//! The condense compressor: a pure function from (history, config, checkpoint)
//! to the request the model should see. `component.rs` exports it as a WASI
//! component; natively it is an ordinary library for tests and benchmarks.
//!
//! One module per step:
//! token estimate (`condense_model::tokens`) → safe cut points
//! (`condense_model::segment`) →
//! checkpoint reuse (`state`) → context-engineering passes (`passes`) →
//! boundary choice (`fold`) → summary (the imported summarizer) → assembly
//! (`assemble`, the summary pair's text from `framing`, in the language
//! `language` detects) → self-check (`condense_model::invariants`).
//!
//! Hysteresis: while a valid checkpoint's request stays under
//! `token_threshold`, the same boundary and summary are reused, so successive
//! requests share a byte-identical prefix and the provider's prompt cache hits.
//! Only when the threshold is crossed does the boundary move, far enough to get
//! down to `target_tokens`, and only the newly folded messages are summarised
//! into the previous summary. When the passes are on, a compaction first tries
//! them alone (rewriting the kept messages older than the verbatim tail) and
//! folds only if that does not get down to the target or, by the `cost` rule,
//! costs more than the fold by the rule's price model (`trigger::cheaper`).

pub mod assemble;
pub mod fold;
pub mod passes;
pub mod state;
pub mod trigger;

#[cfg(target_arch = "wasm32")]
mod component;

// The host-visible surface (settings, framing, the pair bound) is the
// contract crate's, which the host side uses without this implementation.
pub use condense_contract::{Settings, framing, language, max_pair_tokens, settings};
use settings::CompactWhen;

use condense_model::invariants::{self, History};
use condense_model::recall;
pub use condense_model::tokens::clamp_to_tokens;
use condense_model::tokens::{estimate_message, estimate_messages};
use condense_model::{
    Checkpoint, CompressError, CoreConfig, Item, Message, Outcome, PassReport, Report, Role,
    SummaryRequest, Trigger, segment,
};
use state::{Prefix, State};
use std::borrow::Cow;

/// One compress call; see `compress-request` in `wit/condense.wit`.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The history from `offset` on.
    pub history: &'a [Message],
    /// Whole-history index of `history[0]`: 0, or the checkpoint's boundary.
    pub offset: usize,
    pub config: &'a CoreConfig,
    pub settings: &'a Settings,
    pub checkpoint: Option<&'a Checkpoint>,
    /// The host's token count of each message of `history`; `None`: the
    /// compressor estimates them (`condense_model::tokens`).
    pub tokens: Option<&'a [u32]>,
    /// The model can call `condense_recall` (the WIT's `recall.offered`):
    /// the summary and the placeholders then name their handles.
    pub recall: bool,
    /// The host prepares (the WIT's `prepare.preparing`): this call folds
    /// at the planned cut whatever the request's size, so that the
    /// summarizer writes now, in the background, the summary the next
    /// compaction will ask for. The host keeps the summary and discards the
    /// outcome.
    pub preparing: bool,
}

impl<'a> Request<'a> {
    /// A call with the whole history.
    pub fn whole(
        history: &'a [Message],
        config: &'a CoreConfig,
        settings: &'a Settings,
        checkpoint: Option<&'a Checkpoint>,
    ) -> Request<'a> {
        Request {
            history,
            offset: 0,
            config,
            settings,
            checkpoint,
            tokens: None,
            recall: false,
            preparing: false,
        }
    }

    /// This call, offering recall or not.
    pub fn offering_recall(self, recall: bool) -> Request<'a> {
        Request { recall, ..self }
    }

    /// This call, preparing the next compaction's summary or not.
    pub fn preparing(self, preparing: bool) -> Request<'a> {
        Request { preparing, ..self }
    }
}

/// The summarizer as the compressor calls it: the imported component in the
/// component, any function natively. Beside the request it gets what the
/// fold replaces (the WIT's `folding.replaces`): the request as it stood
/// before this compaction, up to the new boundary, by reference.
pub type Summarize<'s> = dyn FnMut(SummaryRequest, &[Item]) -> Result<String, String> + 's;

/// Compresses a history into the request the model should see.
pub fn compress(request: Request, summarize: &mut Summarize) -> Result<Outcome, CompressError> {
    let Request {
        history,
        offset,
        config,
        settings,
        checkpoint,
        tokens,
        recall,
        preparing,
    } = request;
    config.validate().map_err(CompressError::InvalidConfig)?;
    settings.validate().map_err(CompressError::InvalidConfig)?;
    invariants::check_pairs(history).map_err(|p| CompressError::InvalidInput(p.to_string()))?;
    if let Some(given) = tokens
        && given.len() != history.len()
    {
        return Err(CompressError::InvalidInput(format!(
            "tokens: {} counts for {} messages",
            given.len(),
            history.len()
        )));
    }
    // The counts of `history[from..]`: only the window's are estimated when
    // the host gave none (the folded messages need none).
    let window_tokens = |from: usize| match tokens {
        Some(given) => Cow::Borrowed(&given[from..]),
        None => Cow::Owned(estimate_messages(&history[from..])),
    };

    // What came before: the checkpoint's record if it still fits, and then
    // the call works on the window from its boundary on.
    let mut ignored = None;
    match checkpoint.map(|cp| usable(cp, history, offset)) {
        Some(Ok(state)) => {
            let from = state.prefix.boundary as usize - offset;
            let tokens = window_tokens(from);
            let window = Window::new(
                &history[from..],
                &tokens,
                state.prefix.clone(),
                config,
                settings,
                recall,
                preparing,
            );
            match window.resume(&state) {
                Ok(at) => {
                    let outcome = window.run(Some((at, state)), checkpoint, summarize)?;
                    // A compaction checked its own outcome; the checkpoint's
                    // request, reused, is checked here: a checkpoint is the
                    // guest's input, and one that was not condense's can
                    // describe a request that breaks the rules.
                    let checked = match outcome.report.trigger {
                        Trigger::Compacted => Ok(()),
                        _ => window.check(&outcome),
                    };
                    match checked {
                        Ok(()) => return Ok(outcome),
                        Err(v) => ignored = Some(format!("the checkpoint's request: {v}")),
                    }
                }
                Err(why) => ignored = Some(why),
            }
        }
        Some(Err(why)) => ignored = Some(why),
        None => {}
    }
    if offset > 0 {
        let why = ignored.unwrap_or_else(|| "an offset call needs its checkpoint".into());
        return Err(CompressError::NeedsFullHistory(why));
    }
    let tokens = window_tokens(0);
    let mut outcome = match State::written_back(history, &tokens) {
        Some(state) => {
            let from = state.prefix.boundary as usize;
            let window = Window::new(
                &history[from..],
                &tokens[from..],
                state.prefix.clone(),
                config,
                settings,
                recall,
                preparing,
            );
            let at = At {
                boundary: 0,
                tail_start: 0,
                horizon: 0,
            };
            window.run(Some((at, state)), None, summarize)?
        }
        None => {
            let window = Window::new(
                history,
                &tokens,
                Prefix::default(),
                config,
                settings,
                recall,
                preparing,
            );
            window.run(None, None, summarize)?
        }
    };
    outcome.report.checkpoint_ignored = ignored;
    Ok(outcome)
}

/// The checkpoint's state if it describes this history: readable, and its
/// folded prefix unchanged (checked here when the whole history is sent; the
/// host checked it before sending only what follows), its passes' rewrite
/// still reproducible (the history not rewound below the horizon).
fn usable(checkpoint: &Checkpoint, history: &[Message], offset: usize) -> Result<State, String> {
    let state = State::read(checkpoint)?;
    let boundary = state.prefix.boundary as usize;
    if offset == 0 {
        state.prefix.matches(history)?;
    } else if offset != boundary {
        return Err(format!(
            "the history was sent from message {offset}, the checkpoint's boundary is {boundary}"
        ));
    }
    let len = offset + history.len();
    if state.horizon as usize > len {
        return Err(format!(
            "the history was rewound to {len} messages, below the {} the checkpoint's passes saw",
            state.horizon
        ));
    }
    Ok(state)
}

/// The window a compress call works on (the history from the boundary on),
/// measured: what is known of the messages before it, its own sizes and safe
/// cuts, and the call's config and settings. Named for what it holds, not
/// for the call: one call can make two, when a checkpoint's window does not
/// resume and the whole history is taken instead.
struct Window<'a> {
    messages: &'a [Message],
    prefix: Prefix,
    config: &'a CoreConfig,
    settings: &'a Settings,
    tokens: &'a [u32],
    sizes: fold::Sizes,
    /// Safe cut points of the window, window indices.
    cuts: Vec<usize>,
    /// The summary and placeholders name their recall handles.
    recall: bool,
    /// The call prepares the next compaction ([`Request::preparing`]).
    preparing: bool,
    /// What the window's sums needed from the messages before it.
    before: fold::Before,
}

/// A fold of the window: up to window index `boundary` into the summary
/// pair (none when nothing at all is folded), the passes' rewrite of the
/// region up to `tail_start`, then the verbatim tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct At {
    boundary: usize,
    tail_start: usize,
    /// Window length the passes looked at.
    horizon: usize,
}

impl<'a> Window<'a> {
    fn new(
        messages: &'a [Message],
        tokens: &'a [u32],
        prefix: Prefix,
        config: &'a CoreConfig,
        settings: &'a Settings,
        recall: bool,
        preparing: bool,
    ) -> Window<'a> {
        let before = fold::Before {
            offset: prefix.boundary as usize,
            system_tokens: prefix.system_tokens(),
            last_opener: prefix.last_opener.map(|(i, t)| (i as usize, u64::from(t))),
        };
        let sizes = fold::Sizes::new(messages, tokens, before);
        let cuts = segment::safe_cut_points_after(messages, prefix.last_opener.is_some());
        Window {
            messages,
            prefix,
            config,
            settings,
            tokens,
            sizes,
            cuts,
            recall,
            preparing,
            before,
        }
    }

    fn offset(&self) -> usize {
        self.prefix.boundary as usize
    }

    /// Where the checkpoint's request stands in this window, if its passes'
    /// rewrite can be reproduced: the tail starts at a safe cut (after the
    /// start when nothing is folded: the passes alone compacted).
    fn resume(&self, state: &State) -> Result<At, String> {
        let tail_start = state.tail_start as usize - self.offset();
        let at_cut = self.cuts.binary_search(&tail_start).is_ok();
        let folded = self.offset() > 0;
        if !(at_cut || (folded && tail_start == 0)) {
            return Err(format!(
                "the checkpoint's tail start {} is no safe cut of this history",
                state.tail_start
            ));
        }
        Ok(At {
            boundary: 0,
            tail_start,
            horizon: state.horizon as usize - self.offset(),
        })
    }

    /// Compresses the window: `previous` is the checkpoint's fold and state
    /// when it applies (or the fold a written-back history carries), `given`
    /// the checkpoint itself (handed back unchanged while nothing new is
    /// folded).
    fn run(
        &self,
        previous: Option<(At, State)>,
        given: Option<&Checkpoint>,
        summarize: &mut Summarize,
    ) -> Result<Outcome, CompressError> {
        let config = self.config;
        let offset = self.offset();
        // A checkpoint's count is the guest's input: it may be anything.
        let tokens_before = saturate(self.prefix.folded_tokens.saturating_add(self.sizes.total()));

        // The request as it stands: the checkpoint's fold, or the history.
        let reused = given.is_some();
        // Messages came after the checkpoint's compaction (or there is none).
        let grew = previous
            .as_ref()
            .is_none_or(|(at, _)| self.messages.len() > at.horizon);
        // The requests of this cycle end after what the checkpoint saw.
        let cycle_start = previous.as_ref().map_or(0, |(at, _)| at.horizon);
        let current = match previous {
            // The pair's tokens estimated afresh, not read from the
            // checkpoint: a checkpoint is the guest's input and may say
            // anything, and the report's `tokens_after` is held to the output.
            Some((at, state)) => self.fold(at, state.summary, None),
            None => self.fold(
                At {
                    boundary: 0,
                    tail_start: 0,
                    horizon: self.messages.len(),
                },
                String::new(),
                None,
            ),
        };
        let unchanged = |trigger, checkpoint: Option<Checkpoint>| {
            self.outcome(&current, tokens_before, trigger, 0, checkpoint)
        };
        let keep = || given.cloned();
        // What a compaction keeps at least: the latest cut keeping
        // `keep_recent_tokens` verbatim (0: no cut keeps that much).
        let floor_cut = fold::verbatim_tail_start(&self.sizes, &self.cuts, 0, config);
        let max_pair = max_pair_tokens(config.summary_max_tokens, self.recall);
        // The `cost` rule compacts before the threshold when that pays, and
        // every compaction it makes keeps the floor, no more: the tail
        // carried is what each call to come pays for again.
        let by_cost = self.settings.compact_when == CompactWhen::Cost && floor_cut > 0;
        let after_floor = self.sizes.request(floor_cut, max_pair);
        let carry = || trigger::Carry {
            request: current.tokens,
            after: after_floor,
            window_tokens: self.sizes.total(),
            window_calls: self
                .messages
                .iter()
                .filter(|m| m.role == Role::Assistant)
                .count() as u64,
        };
        // A checkpoint reproduces the request it was made with: the rule
        // weighs only what came after it.
        let pays = by_cost && grew && trigger::compact_now(carry(), self.settings);
        // The request of this cycle that passed the soft mark first, which
        // plans the next compaction's cut (see [`Window::plan`]).
        let soft = self.soft_mark(current.tokens, cycle_start, max_pair);
        let under = current.tokens <= u64::from(config.token_threshold) && !pays;
        if (under && !self.preparing) || (self.preparing && soft.is_none()) {
            let trigger = if reused {
                Trigger::ReusedCheckpoint
            } else {
                Trigger::UnderThreshold
            };
            let mut outcome = unchanged(trigger, keep());
            outcome.prepare_due = soft.is_some() && !self.preparing;
            return Ok(outcome);
        }
        // A compaction's outcome, self-checked: `fold` with `newly_folded`
        // messages folded by this call.
        let compacted = |fold: &Fold, newly_folded: u32| {
            let prefix = self
                .prefix
                .advance(self.messages, self.tokens, fold.at.boundary);
            let state = State {
                prefix,
                summary: fold.summary.clone(),
                pair_tokens: fold.pair_tokens as u32,
                tail_start: (offset + fold.at.tail_start) as u32,
                horizon: (offset + fold.at.horizon) as u32,
            };
            let outcome = self.outcome(
                fold,
                tokens_before,
                Trigger::Compacted,
                newly_folded,
                Some(state.to_checkpoint()),
            );
            self.check(&outcome)
                .map_err(|v| CompressError::SelfCheckFailed(v.to_string()))?;
            Ok(outcome)
        };

        // Compact. A fold goes down to `target_tokens`, or by the `cost` rule
        // to the floor; the passes alone, which fold nothing, need only reach
        // `target_tokens`. They are tried first: that compaction rewrites the
        // kept messages older than the verbatim tail and folds nothing.
        let horizon = self.messages.len();
        let tail_floor = if self.settings.passes_enabled() {
            floor_cut
        } else {
            0
        };
        let planned = soft.and_then(|soft| self.plan(soft, max_pair));
        if self.preparing {
            // Only the plan's summary is wanted: fold at it, nothing else.
            let Some(plan) = planned else {
                return Ok(unchanged(Trigger::UnderThreshold, keep()));
            };
            let (fold, count) =
                self.fold_in_steps(&current, tokens_before, &[plan], tail_floor, summarize)?;
            return compacted(&fold, count);
        }

        // The fold, if the passes alone are not made: as far as the history
        // itself calls for (the passes' savings are not spent on keeping
        // more: each token the passes save stays saved, which lowers every
        // request until the next compaction, and puts that compaction
        // further away).
        // By the `cost` rule the fold cuts at the floor itself, unless that
        // would not fit the threshold: then, as by the `threshold` rule,
        // down to `target_tokens`.
        let at_floor =
            (by_cost && after_floor <= u64::from(config.token_threshold)).then_some(floor_cut);
        let boundary = at_floor.or_else(|| {
            fold::choose_boundary(
                self.messages,
                &self.sizes,
                &self.cuts,
                0,
                config,
                max_pair,
                self.prefix.turns as usize,
            )
        });
        // With a plan, the compaction folds at the planned cut when that
        // brings the request down far enough (its summary was prepared
        // ahead), and otherwise summarizes the rest on top of the plan's.
        let accept = u64::from(config.target_tokens)
            + (u64::from(config.token_threshold) - u64::from(config.target_tokens)) / 4;
        let steps: Option<Vec<usize>> = boundary.map(|boundary| match planned {
            Some(plan) if self.sizes.request(plan, max_pair) <= accept => vec![plan],
            Some(plan) if plan < boundary => vec![plan, boundary],
            _ => vec![boundary],
        });

        if tail_floor > 0 {
            let at = At {
                boundary: 0,
                tail_start: tail_floor,
                horizon,
            };
            let rewritten = self.fold(at, current.summary.clone(), Some(current.pair_tokens));
            // By the `cost` rule the passes alone must also be the cheaper
            // compaction, priced as the rule prices compacting at all
            // (`trigger::cheaper`): they break the cache as a fold does but
            // leave more than its fold to the floor, so every call reads
            // more and the next compaction, another break, comes sooner.
            // The fold is priced before the summarizer is asked, its
            // summary at the most one can cost; with no fold to make, the
            // passes are the only compaction. (The `threshold` rule folds
            // only down to the target, so passes that reach it leave no
            // more.)
            let passes_pay = || {
                !by_cost
                    || steps.as_ref().is_none_or(|steps| {
                        let end = *steps.last().expect("a fold has a step");
                        let fold = At {
                            boundary: end,
                            tail_start: tail_floor.max(end),
                            horizon,
                        };
                        let fold = self.fold(fold, String::new(), Some(max_pair));
                        trigger::cheaper(
                            rewritten.tokens,
                            fold.tokens,
                            carry().growth(),
                            self.settings,
                        )
                    })
            };
            if rewritten.tokens <= u64::from(config.target_tokens) && passes_pay() {
                return compacted(&rewritten, 0);
            }
        }

        let Some(steps) = steps else {
            return Ok(unchanged(Trigger::WontShrink, keep()));
        };
        let (next, count) =
            self.fold_in_steps(&current, tokens_before, &steps, tail_floor, summarize)?;
        if next.tokens >= current.tokens {
            return Ok(unchanged(Trigger::WontShrink, keep()));
        }
        compacted(&next, count)
    }

    /// Folds the window up to the last of `steps` (increasing cuts), one
    /// summary per step, each on top of the one before: the summarizer is
    /// asked the same for a step whatever comes after it, so a summary
    /// prepared for the first step serves. Returns the fold and how many
    /// messages it newly folded.
    fn fold_in_steps(
        &self,
        current: &Fold,
        tokens_before: u32,
        steps: &[usize],
        tail_floor: usize,
        summarize: &mut Summarize,
    ) -> Result<(Fold, u32), CompressError> {
        let config = self.config;
        let boundary = *steps.last().expect("a fold has a step");
        // What the model was sent of the messages now folded: the request as
        // it stands, cut at the new boundary (a summarizer may ask the model
        // in that very conversation, which the provider has cached).
        let sent = self
            .outcome(current, tokens_before, Trigger::Compacted, 0, None)
            .items;
        let mut summary = current.summary.clone();
        let mut count = 0u32;
        let mut from = 0;
        for &step in steps {
            let newly_folded: Vec<Message> = self.messages[from..step]
                .iter()
                .filter(|m| m.role != Role::System)
                .cloned()
                .collect();
            count += newly_folded.len() as u32;
            let end = self.offset() + step;
            let replaced: Vec<Item> = sent
                .iter()
                .filter(|item| item.origin().is_none_or(|i| i < end))
                .cloned()
                .collect();
            let written = summarize(
                SummaryRequest {
                    previous_summary: summary,
                    messages: newly_folded,
                    max_tokens: config.summary_max_tokens,
                    language: self.prefix.language(self.messages, step).to_string(),
                    settings: "{}".into(),
                },
                &replaced,
            )
            .map_err(CompressError::SummarizerFailed)?;
            // A summarizer is third-party code: hold it to its budget.
            summary = clamp_to_tokens(written, config.summary_max_tokens);
            from = step;
        }
        let at = At {
            boundary,
            tail_start: tail_floor.max(boundary),
            horizon: self.messages.len(),
        };
        Ok((self.fold(at, summary, None), count))
    }

    /// The first request of this cycle that passed the soft mark: window
    /// index of its end (after `cycle_start`), and the tokens the request
    /// is expected to grow by before the compaction it marks. A request
    /// ends where the model was called: after a user message or tool
    /// results, before the assistant's answer (or at the end). Each request
    /// of the cycle is the history up to its end, shown through the
    /// checkpoint's fold, so its size is the current request's less what
    /// came after it.
    ///
    /// The mark is `prepare_at_permille` of the way to the compaction the
    /// rule in force makes: of `token_threshold`, and by the `cost` rule
    /// also of the excess that pays for a compaction (`trigger::near`);
    /// what is left of the way is the growth expected.
    fn soft_mark(&self, current_tokens: u64, cycle_start: usize, max_pair: u64) -> Option<Soft> {
        let share = self.settings.prepare_at_permille;
        if share == 0 {
            return None;
        }
        let config = self.config;
        let threshold = u64::from(config.token_threshold);
        let mark = threshold * u64::from(share) / 1000;
        let by_cost = self.settings.compact_when == CompactWhen::Cost;
        let keep = u64::from(config.keep_recent_tokens);
        let n = self.messages.len();
        let mut calls = self.messages[..cycle_start]
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count() as u64;
        for p in cycle_start.max(1)..=n {
            if self.messages[p - 1].role == Role::Assistant {
                calls += 1;
            }
            let ends_request = matches!(self.messages[p - 1].role, Role::User | Role::Tool)
                && self
                    .messages
                    .get(p)
                    .is_none_or(|m| m.role == Role::Assistant);
            if !ends_request {
                continue;
            }
            let request = current_tokens.saturating_sub(self.sizes.tail(p));
            let to_threshold = threshold.saturating_sub(request);
            // The cost rule's: what a compaction at this request would
            // leave (its floor cut), and the excess over it.
            let to_cost = by_cost
                .then(|| {
                    let tail = |t: usize| self.sizes.tail(t) - self.sizes.tail(p);
                    let end = self.cuts.partition_point(|&t| t < p && tail(t) >= keep);
                    let floor = self.cuts[..end].last().copied().filter(|&t| t > 0)?;
                    let carry = trigger::Carry {
                        request,
                        after: self.sizes.head(floor, max_pair) + tail(floor),
                        window_tokens: self.sizes.total() - self.sizes.tail(p),
                        window_calls: calls,
                    };
                    trigger::remaining(carry, self.settings, f64::from(share) / 1000.0)
                })
                .flatten();
            let to_compaction = match to_cost {
                Some(to_cost) => to_cost.min(to_threshold),
                None if request > mark => to_threshold,
                None => continue,
            };
            // The call that passes the mark goes past it by half a call's
            // growth on average (the window's mean): the plan counts it,
            // so the compaction comes down to the target on average.
            let per_call = (self.sizes.total() - self.sizes.tail(p)) / calls.max(1);
            return Some(Soft {
                end: p,
                growth: to_compaction + per_call / 2,
            });
        }
        None
    }

    /// The cut planned at the request `soft` marks: where the rule in
    /// force would fold that request grown by the growth expected (the
    /// growth comes after it, so only the tail it keeps changes): the
    /// earliest cut bringing it down to `target_tokens`, or by the `cost`
    /// rule the latest keeping `keep_recent_tokens`. Only what came before
    /// `soft` decides it, so the host that prepares at that request and
    /// the compaction that comes later plan the same cut.
    fn plan(&self, soft: Soft, max_pair: u64) -> Option<usize> {
        let config = self.config;
        let Soft { end, growth } = soft;
        let messages = &self.messages[..end];
        let sizes = fold::Sizes::new(messages, &self.tokens[..end], self.before);
        let cuts: Vec<usize> = self.cuts.iter().copied().take_while(|&c| c < end).collect();
        let threshold = u64::from(config.token_threshold);
        if self.settings.compact_when == CompactWhen::Cost {
            let keep = u64::from(config.keep_recent_tokens);
            let floor = cuts
                .iter()
                .copied()
                .rfind(|&t| sizes.tail(t) + growth >= keep)
                .filter(|&t| t > 0);
            if let Some(floor) = floor
                && sizes.request(floor, max_pair) + growth <= threshold
            {
                return Some(floor);
            }
        }
        let target = u64::from(config.target_tokens).saturating_sub(growth);
        let config = CoreConfig {
            target_tokens: target as u32,
            ..*config
        };
        fold::choose_boundary(
            messages,
            &sizes,
            &cuts,
            0,
            &config,
            max_pair,
            self.prefix.turns as usize,
        )
    }

    /// Whether `outcome` keeps every rule for this call's history.
    fn check(&self, outcome: &Outcome) -> Result<(), invariants::Violation> {
        let known = self.prefix.known();
        let history = History {
            offset: self.offset(),
            messages: self.messages,
            before: &known,
        };
        invariants::check_items(history, &outcome.items, outcome.report.cut())
    }

    /// The request for a fold `at` (window indices) with `summary`; the
    /// pair's tokens are estimated unless given (a fold of this call's,
    /// rewritten with the same summary).
    fn fold(&self, at: At, summary: String, pair_tokens: Option<u64>) -> Fold {
        let folded = self.offset() + at.boundary > 0;
        // The framing speaks the language of the folded messages: the
        // checkpoint fixes them, so a new message in another language cannot
        // change the framing (and break the cache) between compactions.
        // The fold's recall handle is made of the hash of what it folds:
        // the checkpoint's, continued over the window's newly folded part.
        let fold_handle = (folded && self.recall).then(|| {
            let hash = u128::from_str_radix(&self.prefix.hash, 16).unwrap_or(0);
            recall::fold_handle_of(condense_model::hash::chain(
                hash,
                &self.messages[..at.boundary],
            ))
        });
        let pair = folded.then(|| {
            let language = self.prefix.language(self.messages, at.boundary);
            let note = fold_handle
                .as_ref()
                .map(|h| recall::fold_note(h, self.offset() + at.boundary));
            framing::summary_pair(&summary, note.as_deref(), language)
        });
        let pair_tokens = pair_tokens.unwrap_or_else(|| {
            pair.iter()
                .flatten()
                .map(|m| u64::from(estimate_message(m)))
                .sum()
        });
        let (region, mut passes) = if at.tail_start > at.boundary {
            passes::run(
                &self.messages[..at.horizon],
                at.boundary..at.tail_start,
                self.settings,
                self.recall,
            )
        } else {
            (Vec::new(), PassReport::default())
        };
        let region_tokens: u64 = region
            .iter()
            .map(|k| u64::from(estimate_message(&k.message)))
            .sum();
        let region_raw = self.sizes.tail(at.boundary) - self.sizes.tail(at.tail_start);
        passes.tokens_saved = saturate(region_raw.saturating_sub(region_tokens));
        let pinned = if folded {
            self.sizes.pinned(at.boundary)
        } else {
            None
        };
        let head = if folded {
            self.sizes.head(at.boundary, pair_tokens)
        } else {
            0
        };
        Fold {
            tokens: head + region_tokens + self.sizes.tail(at.tail_start),
            at,
            summary,
            fold_handle,
            pair,
            pair_tokens,
            pinned,
            region,
            passes,
        }
    }

    fn outcome(
        &self,
        fold: &Fold,
        tokens_before: u32,
        trigger: Trigger,
        newly_folded: u32,
        checkpoint: Option<Checkpoint>,
    ) -> Outcome {
        let offset = self.offset();
        let items = if fold.pair.is_none() && fold.region.is_empty() {
            (offset..offset + self.messages.len())
                .map(|i| Item::Kept(i as u32))
                .collect()
        } else {
            assemble::assemble(
                self.messages,
                &self.prefix,
                fold.at.boundary,
                fold.pinned,
                fold.pair.clone(),
                &fold.region,
                fold.at.tail_start,
            )
        };
        Outcome {
            report: Report {
                tokens_before,
                tokens_after: saturate(fold.tokens),
                trigger,
                boundary: (offset + fold.at.boundary) as u32,
                newly_folded,
                summary_tokens: fold.pair_tokens as u32,
                pinned_opening: fold.pinned.map(|p| p as u32),
                tail_start: (offset + fold.at.tail_start) as u32,
                passes: fold.passes,
                checkpoint_ignored: None,
            },
            handles: self.handles(fold),
            items,
            checkpoint,
            prepare_due: false,
        }
    }

    /// The recall handles `fold`'s request names: the fold's, and one for
    /// each message whose tool results the clearing pass cut or cleared.
    fn handles(&self, fold: &Fold) -> Vec<recall::Handle> {
        if !self.recall {
            return Vec::new();
        }
        let offset = self.offset();
        let fold_handle = fold.fold_handle.iter().map(|id| recall::Handle {
            id: id.clone(),
            span: recall::Span::Fold {
                end: offset + fold.at.boundary,
            },
        });
        let cleared = fold
            .region
            .iter()
            .filter(|k| results_changed(&self.messages[k.origin], &k.message))
            .map(|k| recall::Handle {
                id: recall::result_handle(&self.messages[k.origin]),
                span: recall::Span::Message(offset + k.origin),
            });
        fold_handle.chain(cleared).collect()
    }
}

/// Whether a tool result of `original` reads otherwise in `now`.
fn results_changed(original: &Message, now: &Message) -> bool {
    let contents = |m| Message::tool_results(m).map(|r| &r.content);
    contents(original).ne(contents(now))
}

/// The request that passed the soft mark ([`Window::soft_mark`]).
#[derive(Clone, Copy, Debug)]
struct Soft {
    /// Window index of its end.
    end: usize,
    /// Tokens it is expected to grow by before the compaction.
    growth: u64,
}

/// One way of showing the window.
struct Fold {
    at: At,
    summary: String,
    /// The recall handle the summary names, when it names one.
    fold_handle: Option<String>,
    pair: Option<[Message; 2]>,
    pair_tokens: u64,
    /// Whole-history index of the pinned opener.
    pinned: Option<usize>,
    region: Vec<passes::Kept>,
    passes: PassReport,
    /// Tokens of the whole request.
    tokens: u64,
}

fn saturate(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_model::tokens::estimate_text;

    fn call(history: &[Message], tokens: Option<&[u32]>) -> Result<Outcome, CompressError> {
        let config = CoreConfig::for_threshold(2_000);
        let settings = Settings::default();
        let mut summarize =
            |r: SummaryRequest, _: &[Item]| Ok(format!("{} messages", r.messages.len()));
        compress(
            Request {
                tokens,
                ..Request::whole(history, &config, &settings, None)
            },
            &mut summarize,
        )
    }

    fn chat(turns: usize) -> Vec<Message> {
        (0..turns)
            .flat_map(|i| {
                [
                    Message::text(Role::User, format!("question {i}")),
                    Message::text(
                        Role::Assistant,
                        format!("answer {i}: {}", "word ".repeat(40)),
                    ),
                ]
            })
            .collect()
    }

    /// The `cost` rule compacts before the threshold once the excess pays,
    /// folds down to the floor, and its checkpoint reproduces its request;
    /// the `threshold` rule waits for the threshold.
    #[test]
    fn the_cost_rule_compacts_before_the_threshold_down_to_the_floor() {
        let config = CoreConfig {
            token_threshold: 100_000,
            target_tokens: 50_000,
            recent_turns: 0,
            keep_recent_tokens: 1_000,
            summary_max_tokens: 200,
        };
        let run = |history: &[Message], settings: &Settings, cp: Option<&Checkpoint>| {
            let mut summarize = |_: SummaryRequest, _: &[Item]| Ok("folded".to_owned());
            compress(
                Request::whole(history, &config, settings, cp),
                &mut summarize,
            )
            .unwrap()
        };
        let by_cost = Settings::default();
        let by_threshold = Settings {
            compact_when: CompactWhen::Threshold,
            ..Settings::default()
        };
        let mut first_compaction = None;
        for turns in 1..=60 {
            let history = chat(turns);
            assert_ne!(
                run(&history, &by_threshold, None).report.trigger,
                Trigger::Compacted,
                "{turns} turns: under the threshold"
            );
            let out = run(&history, &by_cost, None);
            if out.report.trigger == Trigger::Compacted {
                first_compaction = Some((turns, history, out));
                break;
            }
        }
        let (turns, history, out) = first_compaction.expect("the cost rule compacts");
        assert!(turns > 5, "not before the excess pays: {turns} turns");
        let tokens = estimate_messages(&history);
        let tail: u64 = tokens[out.report.boundary as usize..]
            .iter()
            .map(|&t| u64::from(t))
            .sum();
        let message = u64::from(*tokens.iter().max().unwrap());
        assert!(
            tail >= 1_000 && tail < 1_000 + 2 * message,
            "the fold keeps the floor: {tail}"
        );
        let cp = out.checkpoint.unwrap();
        assert_eq!(
            run(&history, &by_cost, Some(&cp)).report.trigger,
            Trigger::ReusedCheckpoint
        );
    }

    /// When a compaction is due, the passes alone (truncating the old
    /// results, folding nothing) are made by the `cost` rule only when
    /// they are the cheaper compaction: not with a free summary (the fold
    /// leaves less, so every call reads less and the next break comes
    /// later), but with a dear one; the `threshold` rule takes them
    /// whenever they reach the target. The same history, over the
    /// threshold, each way.
    #[test]
    fn the_passes_alone_are_made_only_when_they_are_the_cheaper_compaction() {
        let config = CoreConfig {
            token_threshold: 40_000,
            target_tokens: 20_000,
            recent_turns: 0,
            keep_recent_tokens: 4_000,
            summary_max_tokens: 500,
        };
        let truncate = Settings {
            clear_mode: settings::ClearMode::Truncate,
            ..Settings::default()
        };
        let history = (1..)
            .map(|steps| session(steps, |_| 1_000))
            .find(|h| {
                estimate_messages(h)
                    .iter()
                    .map(|&t| u64::from(t))
                    .sum::<u64>()
                    > 40_000
            })
            .unwrap();
        let run = |settings: &Settings| {
            let mut summarize = |_: SummaryRequest, _: &[Item]| Ok("folded".to_owned());
            let out = compress(
                Request::whole(&history, &config, settings, None),
                &mut summarize,
            )
            .unwrap();
            assert_eq!(out.report.trigger, Trigger::Compacted);
            out.report
        };
        let passes_alone = |r: &Report| r.newly_folded == 0 && r.tail_start > 0;

        let free = run(&truncate);
        assert!(!passes_alone(&free), "{free:?}");
        assert!(free.newly_folded > 0 && free.passes == PassReport::default());
        let dear = run(&Settings {
            summary_cost_tokens: 1_000_000,
            ..truncate.clone()
        });
        assert!(passes_alone(&dear), "{dear:?}");
        assert!(dear.passes.results_cleared > 0);
        // What the passes alone leave is more than the fold, under the
        // target: the threshold rule takes it, as it always has.
        assert!(free.tokens_after < dear.tokens_after);
        assert!(dear.tokens_after <= config.target_tokens);
        let by_threshold = run(&Settings {
            compact_when: CompactWhen::Threshold,
            ..truncate
        });
        assert_eq!(by_threshold, dear);
    }

    /// A coding session: one opener, then steps of a tool call and its
    /// result, each result of `size` words.
    fn session(steps: usize, size: impl Fn(usize) -> usize) -> Vec<Message> {
        let mut history = vec![Message::text(Role::User, "fix the build")];
        for i in 0..steps {
            history.push(Message {
                role: Role::Assistant,
                parts: vec![condense_model::Part::ToolCall(condense_model::ToolCall {
                    id: format!("c{i}"),
                    name: "Bash".into(),
                    arguments: format!("{{\"command\":\"step {i}\"}}"),
                })],
            });
            history.push(Message {
                role: Role::Tool,
                parts: vec![condense_model::Part::ToolResult(
                    condense_model::ToolResult {
                        call_id: format!("c{i}"),
                        content: format!("output {i} {}", "word ".repeat(size(i))),
                        is_error: false,
                    },
                )],
            });
        }
        history
    }

    /// Summaries prepared ahead: the call that first passes the soft mark
    /// says so; a preparing call on that request asks the summarizer the
    /// very request the compaction asks later, which then, in the common
    /// case, asks nothing more. By both rules, over several cycles, with
    /// one step far larger than the rest (the plan then does not bring the
    /// request down, and the rest is summarized on top of it).
    #[test]
    fn the_compaction_asks_for_the_summary_planned_at_the_soft_mark() {
        let config = CoreConfig {
            token_threshold: 6_000,
            target_tokens: 3_000,
            recent_turns: 0,
            keep_recent_tokens: 800,
            summary_max_tokens: 200,
        };
        for rule in [CompactWhen::Threshold, CompactWhen::Cost] {
            let settings = Settings {
                compact_when: rule,
                prepare_at_permille: 700,
                ..Settings::default()
            };
            let history = session(300, |i| {
                if [151, 160, 169, 178].contains(&i) {
                    4_000
                } else {
                    40 + i % 30
                }
            });
            let run = |n: usize, cp: Option<&Checkpoint>, preparing: bool| {
                let mut asked = Vec::new();
                let mut summarize = |r: SummaryRequest, _: &[Item]| {
                    let text = format!("{} after {}", r.messages.len(), r.previous_summary.len());
                    asked.push(r);
                    Ok(text)
                };
                let out = compress(
                    Request::whole(&history[..n], &config, &settings, cp).preparing(preparing),
                    &mut summarize,
                )
                .unwrap();
                (out, asked)
            };
            let (mut cp, mut prepared) = (None, None);
            let (mut compactions, mut served, mut on_top) = (0, 0, 0);
            for n in (3..=history.len()).step_by(2) {
                let (out, asked) = run(n, cp.as_ref(), false);
                if out.prepare_due && prepared.is_none() {
                    let (_, asked) = run(n, cp.as_ref(), true);
                    assert_eq!(asked.len(), 1, "{rule:?} {n}: one summary prepared");
                    prepared = asked.into_iter().next();
                }
                if out.report.trigger != Trigger::Compacted {
                    assert!(asked.is_empty());
                    continue;
                }
                compactions += 1;
                if let Some(p) = prepared.take() {
                    assert_eq!(asked[0], p, "{rule:?} {n}: the prepared request");
                    match asked.len() {
                        1 => served += 1,
                        2 => {
                            on_top += 1;
                            let first = format!(
                                "{} after {}",
                                asked[0].messages.len(),
                                asked[0].previous_summary.len()
                            );
                            assert_eq!(asked[1].previous_summary, first, "on top of the plan's");
                        }
                        k => panic!("{k} summaries"),
                    }
                }
                cp = out.checkpoint;
            }
            eprintln!("{rule:?}: {compactions} compactions, {served} served, {on_top} on top");
            assert!(compactions >= 4, "{rule:?}: {compactions}");
            // Only the compactions a large step brought fold otherwise.
            assert!(
                served >= compactions - 4,
                "{rule:?}: {served} of {compactions}"
            );
            assert!(on_top >= 1, "{rule:?}: the large step");
        }
    }

    /// With recall offered, the summary ends naming the fold's handle and
    /// every cleared result's placeholder its own; each resolves in the
    /// history to what it covers; an offset call between compactions gives
    /// the same bytes; without recall the text is today's.
    #[test]
    fn with_recall_the_request_names_handles_that_resolve_to_what_was_taken_out() {
        let config = CoreConfig {
            token_threshold: 2_000,
            target_tokens: 1_500,
            recent_turns: 0,
            keep_recent_tokens: 200,
            summary_max_tokens: 200,
        };
        let settings = Settings {
            clear_mode: settings::ClearMode::Clear,
            result_char_threshold: 200,
            keep_tool_results: 1,
            compact_when: CompactWhen::Threshold,
            ..Settings::default()
        };
        let mut history = Vec::new();
        for i in 0..40 {
            history.push(Message::text(Role::User, format!("step {i}")));
            history.push(Message {
                role: Role::Assistant,
                parts: vec![condense_model::Part::ToolCall(condense_model::ToolCall {
                    id: format!("c{i}"),
                    name: "Bash".into(),
                    arguments: "{}".into(),
                })],
            });
            history.push(Message {
                role: Role::Tool,
                parts: vec![condense_model::Part::ToolResult(
                    condense_model::ToolResult {
                        call_id: format!("c{i}"),
                        content: format!("output {i}\n").repeat(60),
                        is_error: false,
                    },
                )],
            });
            history.push(Message::text(Role::Assistant, format!("done {i}")));
        }
        let mut summarize =
            |r: SummaryRequest, _: &[Item]| Ok(format!("{} folded", r.messages.len()));
        let mut run = |history: &[Message], offset: usize, cp: Option<&Checkpoint>, recall| {
            compress(
                Request {
                    history: &history[offset..],
                    offset,
                    ..Request::whole(history, &config, &settings, cp)
                }
                .offering_recall(recall),
                &mut summarize,
            )
            .unwrap()
        };
        let (mut cp, mut folds, mut results) = (None::<Checkpoint>, 0, 0);
        for len in (4..=history.len()).step_by(4) {
            let history = &history[..len];
            let out = run(history, 0, cp.as_ref(), true);
            let sent = condense_model::materialize(&out.items, history);
            for h in &out.handles {
                assert_eq!(recall::find(history, &h.id), Ok(h.span), "{}", h.id);
                let named = sent.iter().any(|m| format!("{m:?}").contains(&h.id));
                assert!(named, "{} is named in the request", h.id);
                match h.span {
                    recall::Span::Fold { end } => {
                        folds += 1;
                        assert_eq!(end, out.report.boundary as usize);
                        let note = recall::fold_note(&h.id, end);
                        assert!(sent[0].joined_text().ends_with(&note));
                    }
                    recall::Span::Message(_) => results += 1,
                }
            }
            let boundary = cp.as_ref().map_or(0, |c| c.boundary as usize);
            if boundary > 0 && out.report.trigger == Trigger::ReusedCheckpoint {
                // Between compactions, from the boundary: the same bytes.
                let offset = run(history, boundary, cp.as_ref(), true);
                assert_eq!(offset.items, out.items);
                assert_eq!(offset.handles, out.handles);
            }
            // Without recall: no handle anywhere.
            let plain = run(history, 0, None, false);
            assert!(plain.handles.is_empty());
            assert!(!format!("{:?}", plain.items).contains(recall::TOOL_NAME));
            cp = out.checkpoint.or(cp);
        }
        assert!(folds > 0 && results > 0, "{folds} folds, {results} results");
    }

    #[test]
    fn the_hosts_token_counts_are_the_ruler() {
        let history = chat(6);
        let own = estimate_messages(&history);
        assert!(
            own.iter().sum::<u32>() < 2_000,
            "under the threshold by the estimate"
        );
        // The same counts as the estimator's: the same outcome as none given.
        assert_eq!(
            call(&history, Some(&own)).unwrap(),
            call(&history, None).unwrap()
        );
        // A host whose tokenizer counts ten times more: over the threshold.
        let tenfold: Vec<u32> = own.iter().map(|t| t * 10).collect();
        let outcome = call(&history, Some(&tenfold)).unwrap();
        assert_eq!(outcome.report.trigger, Trigger::Compacted);
        assert_eq!(
            outcome.report.tokens_before,
            tenfold.iter().sum::<u32>(),
            "the report counts in the host's ruler"
        );
    }

    #[test]
    fn token_counts_of_another_length_are_invalid_input() {
        let history = chat(2);
        let e = call(&history, Some(&[10, 10, 10])).unwrap_err();
        assert_eq!(
            e,
            CompressError::InvalidInput("tokens: 3 counts for 4 messages".into())
        );
    }

    #[test]
    fn the_pair_estimate_bounds_every_framing_and_summary() {
        let summaries = [
            String::new(),
            "facts".into(),
            "42 files changed".into(),
            "## Files\n- src/main.rs (Edit ×2)\n$ cargo test → ok".repeat(40),
            "要約：パーサーを修正した。".repeat(30),
            "Краткое содержание: исправлен парсер. ".repeat(30),
            "    let x = vec![1, 2, 3];\n}".repeat(50),
        ];
        for lang in framing::LANGUAGES.iter().chain(&["xx"]) {
            for summary in &summaries {
                let cost: u64 = framing::summary_pair(summary, None, lang)
                    .iter()
                    .map(|m| u64::from(estimate_message(m)))
                    .sum();
                let bound = max_pair_tokens(estimate_text(summary), false);
                assert!(cost <= bound, "{lang}: {cost} > {bound} for {summary:.20}");
            }
        }
    }

    /// A compaction tells the summarizer what it replaces: the request as
    /// the checkpoint had it — the previous summary pair, the passes'
    /// rewrites — cut at the new boundary. That is what the model was last
    /// sent of those messages.
    #[test]
    fn a_compaction_hands_over_the_request_it_replaces() {
        let config = CoreConfig::for_threshold(1_000);
        // The standing request comes from a call that cannot compact.
        let settings = Settings {
            compact_when: CompactWhen::Threshold,
            ..Settings::default()
        };
        let replaced = std::cell::RefCell::new(Vec::new());
        let run = |history: &[Message], config: &CoreConfig, cp: Option<&Checkpoint>| {
            let mut summarize = |r: SummaryRequest, items: &[Item]| {
                replaced.borrow_mut().push(items.to_vec());
                Ok(format!("{} messages", r.messages.len()))
            };
            compress(
                Request::whole(history, config, &settings, cp),
                &mut summarize,
            )
            .unwrap()
        };
        let mut history = chat(20);
        let first = run(&history, &config, None);
        assert_eq!(first.report.trigger, Trigger::Compacted);
        // The first fold replaces the history itself.
        let cut = first.report.boundary;
        assert_eq!(
            replaced.borrow()[0],
            (0..cut).map(Item::Kept).collect::<Vec<_>>()
        );

        // More turns, then the second compaction: it replaces the request
        // as it stood (what a call under an unreachable threshold returns).
        history.extend(chat(20).into_iter().skip(4));
        let checkpoint = first.checkpoint.unwrap();
        let standing = run(
            &history,
            &CoreConfig {
                token_threshold: u32::MAX,
                ..config
            },
            Some(&checkpoint),
        );
        assert_eq!(standing.report.trigger, Trigger::ReusedCheckpoint);
        let second = run(&history, &config, Some(&checkpoint));
        assert_eq!(second.report.trigger, Trigger::Compacted);
        let end = second.report.boundary as usize;
        let expected: Vec<Item> = standing
            .items
            .into_iter()
            .filter(|i| i.origin().is_none_or(|o| o < end))
            .collect();
        assert_eq!(
            replaced.borrow().len(),
            2,
            "the standing call folds nothing"
        );
        assert_eq!(replaced.borrow()[1], expected);
        assert!(
            matches!(&expected[0], Item::Written(m) if m.joined_text().starts_with(condense_model::SUMMARY_MARKER)),
            "the previous pair leads it: {expected:?}"
        );
        assert!(expected.len() > 2 + (end - cut as usize) / 2);
    }
}
