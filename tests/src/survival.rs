//! The survival benchmark: does what the user told the agent survive
//! successive compactions?
//!
//! # Method
//!
//! A [`Case`] is a conversation with **canaries** planted in it: user
//! statements of five kinds ([`CanaryKind`]: rules, constraints, facts, goals,
//! preferences), phrased from the varied templates of a phrase [`Bank`], each
//! carrying an unguessable value (`release-K7QX`, `$4,217`, `db-7731.internal`)
//! drawn from a deterministic PRNG. Four canaries per kind, spread over the
//! conversation: one early, one in the first three fifths, one superseded
//! (planted early, updated later with a new value on the same subject, the
//! update never naming the old value), one late. In two kinds per case the
//! first two are a **near-duplicate pair**: the same statement about two
//! subjects, two values that must both stay.
//!
//! Four families in the words of the tuned bank ([`TUNED`]), which the
//! summarizer was written against: [`chat_cases`], generated agent sessions
//! (user turns, tool calls and long results, reports with file names and
//! numbers that are not canaries); [`talk_cases`], the same chatter without
//! tools; [`terse_cases`], short turns that each say something, where the
//! budget binds; and [`corpus_cases`], the long recorded coding sessions with
//! the canary statements inserted as user messages between turns, where a
//! person may speak without breaking tool pairing or role order. Routine
//! material dominates: the canary statements are a few percent of the tokens
//! (under a tenth in the terse family, where every other line is short too).
//!
//! Two in words the summarizer was not written against, as heavy-filler
//! sessions ([`filler_cases`]: the person repeats a few routine lines word
//! for word many times and says things with numbers and rule words that bind
//! nothing): [`untuned_cases`], in the words of [`UNTUNED`] (labelled
//! statements in any case and a few languages, declarative facts with no
//! modal verb, progress states, soft preferences, updates that often carry
//! no correction word at all), and [`retired_cases`], in the words of
//! [`RETIRED`]: until 2026-12-05 the held-back bank, written once and never
//! edited, its figures reported apart as the one figure nothing was tuned
//! to; it was consulted while the summarizer was tuned, so it is retired,
//! an ordinary family now (same text, same cases).
//!
//! Then the summary shapes ([`SHAPES`]: what a person says and a tool
//! finds, in the forms a summary most often drops or keeps stale), each in
//! two halves: a tuned half, whose bank work on the summarizer may read, and
//! a held-back half, whose bank was written once by someone who had not read
//! the summarizer, and is never edited (a test pins each file); held-back
//! figures are always reported
//! apart from the others' and their lost statements never printed. When a
//! held-back bank has served (been looked at while working on the
//! summarizer), the next one is a new family with a new bank, never an edit.
//! The shapes: [`multi_cases`] (two to four binding statements in one
//! message, then routine; each its own canary), [`found_cases`] (the value
//! is in a tool's result the agent fetched when asked, in agent sessions
//! with tools; the update is a later look that finds a new value),
//! [`labelled_cases`] (labelled routine — "Note:", "Reminder:", "Sync
//! notes:" — beside labelled rules) and [`emphasis_cases`] (statements
//! marked by capitals, IMPORTANT, NEVER, MUST or the assistant's specific
//! acknowledgement, among routine that shouts too). The held-back halves:
//! [`held_multi_cases`], [`held_found_cases`], [`held_labelled_cases`],
//! [`held_emphasis_cases`]. Superseded values and look-alike pairs are
//! planted in every shape as in every family.
//!
//! Each case is cut into [`ROUNDS`] segments. Round `r` compresses the
//! conversation so far (segments `1..=r`) through the host with the checkpoint
//! of round `r - 1`, so the summary of round 5 has been rewritten five times.
//! Each round is made to compact and to fold everything up to the last safe
//! cut point (see [`round_config`]), with a summary budget of
//! `budget_percent` of the tokens of every message folded so far.
//!
//! # More rounds at a fixed token budget
//!
//! The default run is the one above. A [`Schedule`] changes two things, for
//! [`run_with_schedule`]:
//!
//! - **the number of rounds.** A case is generated once, its canaries planned
//!   on the [`ROUNDS`] segments of [`Case::segment_ends`]; a run of another
//!   number of rounds cuts the same messages differently
//!   ([`Case::round_ends`]), at turn boundaries. At a multiple of [`ROUNDS`]
//!   the cut refines the default one: at 10 rounds, round `2r` sees what
//!   round `r` of the default run sees, and each odd round compacts once more
//!   half-way through a segment.
//! - **the budget** ([`BudgetMode`]). The cost-aware compaction trigger
//!   compacts more often (7–10 times in a long session where the threshold
//!   compacts 4–5 times), and however often it compacts, each summary gets
//!   the same `summary_max_tokens`: the budget does not grow with the folded
//!   text. [`BudgetMode::FixedTokens`] measures that: every round's budget is
//!   `budget_percent` of the tokens of the whole conversation (every message)
//!   divided by [`ROUNDS`] ([`fixed_budget`]), held the same in every round:
//!   the default run's budget at its last round (`budget_percent` of about
//!   the whole conversation) shared evenly among its [`ROUNDS`] rounds, one
//!   share per compaction. It is divided by the default run's [`ROUNDS`], not
//!   by the run's own number of rounds: the cost rule keeps the
//!   `summary_max_tokens` it was given however often it compacts, it does not
//!   shrink it, so a 10-round run gets the same share per round as a 5-round
//!   one would and compacts twice as often with it. (The default run's own
//!   budgets grow from about a fifth of that last budget to all of it, so on
//!   average they are larger than this share: the fixed budget is the
//!   harder test.)
//!
//! A round whose request is under the least threshold the compressor takes
//! (1,000 tokens) cannot compact: small cases cut into many rounds with a
//! small fixed summary can have one. The report names it among its problems
//! and its canaries count as verbatim, as for any round that did not compact.
//!
//! # Honesty rules
//!
//! - **Exact values only.** A canary survives a round only if its value is in
//!   what the model sees ([`condense_host::Compressed::messages`]: every part of every message,
//!   tool results and the summary included) as a whole token ([`contains_value`]:
//!   not inside a longer word or number). A paraphrase does not count.
//! - **Folded-only headline.** [`Report::survival`] counts only canaries whose
//!   message was folded, i.e. is not among the messages the request keeps
//!   verbatim (the tail, a pinned turn opener): a canary still in view
//!   verbatim says nothing about the summary. How many planted canaries were
//!   still verbatim is reported beside it.
//! - **Strict stale counting.** Once the update of a superseded canary is
//!   folded, its old value is *carried* if it appears anywhere in what the
//!   model sees, whatever the text around it says.
//! - **Unguessable values.** Every value is drawn again until it occurs nowhere
//!   else in the case (the recorded session included) and in no fixed text of
//!   the bank (templates, filler lines, acknowledgements), so
//!   only the statement that planted it can bring it to the model.
//! - **Every round compacts as planned**, or the report says which did not
//!   ([`Report::problems`]); a round that did not fold has no folded canaries,
//!   so it cannot flatter the figures.
//!
//! Deterministic: the same seeds give the same cases, and the same cases the
//! same report (the components are deterministic too).
//!
//! # Use
//!
//! ```no_run
//! use condense_tests::survival::{
//!     CanaryKind, Schedule, chat_cases, corpus_cases, run, run_with_schedule,
//! };
//!
//! let mut cases = chat_cases(0..8);
//! cases.extend(corpus_cases(0));
//! let report = run(&cases, 20); // summary budget: 20% of the folded text
//! println!("{}", report.table());
//! let rules_at_round_5 = report.survival(CanaryKind::Rule, 5);
//! report.meets(0.9, 5).unwrap(); // names every kind under 90%
//! assert_eq!(report.stale_carried(), 0);
//!
//! // The same cases in 10 rounds, each with the same summary budget in tokens.
//! let middleware = condense_tests::embedded_middleware();
//! let ten = run_with_schedule(middleware, &cases, 20, Schedule::fixed(10));
//! let all_at_round_10 = ten.overall(10);
//! ```
//!
//! The tests (`tests/tests/survival.rs`) check that the cases are what this
//! says; the bench (`cargo bench -p condense-tests --bench survival`) prints
//! the full set at 10%, 20% and 30%, the untuned and retired families and
//! each shape's tuned half beside its held-back half in tables of their own
//! ([`budget_table`]), then every family again in 10 rounds at a fixed token
//! budget.

use crate::{embedded_middleware, session, summary_of};
use condense_compressor::Settings;
use condense_compressor::settings::CompactWhen;
use condense_host::{Middleware, SessionCheckpoint, Status};
use condense_model::tokens::{estimate_message, estimate_messages, estimate_text};
use condense_model::{CoreConfig, Message, Part, Role, ToolCall, ToolResult, Trigger, segment};
use std::collections::HashSet;
use std::fmt::Write as _;

/// Compactions per case by default: the conversation is generated in this
/// many segments, and the default run compacts once per segment.
pub const ROUNDS: usize = 5;

/// The summary budgets the benchmark runs at, in percent of the folded text.
pub const BUDGET_PERCENTS: [u32; 3] = [10, 20, 30];

/// The long recorded coding sessions the corpus cases are built on.
pub const CORPUS_SESSIONS: [&str; 3] = ["cc-opus-a", "cc-opus-b", "cc-opus-c"];

/// Canaries planted per kind and case.
pub const PER_KIND: usize = 4;

// ---------------------------------------------------------------------------
// The PRNG
// ---------------------------------------------------------------------------

/// splitmix64: tiny, deterministic on every platform, good enough to vary
/// phrasing and draw values (no statistical claim rests on it).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; the modulo bias is irrelevant here).
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "Rng::below(0)");
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

// ---------------------------------------------------------------------------
// Canaries
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CanaryKind {
    /// Safety rules and prohibitions: "Never run `git push --force` on …".
    Rule,
    /// Hard limits, caps, deadlines, formats: "The budget is capped at $4,217."
    Constraint,
    /// Exact values the work depends on: "The base commit is 3f9c2a71e."
    Fact,
    /// The goal state, the next step, an open question.
    Goal,
    /// How the user wants things done: "name modules with prefix zq31_".
    Preference,
}

impl CanaryKind {
    pub const ALL: [CanaryKind; 5] = [
        CanaryKind::Rule,
        CanaryKind::Constraint,
        CanaryKind::Fact,
        CanaryKind::Goal,
        CanaryKind::Preference,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CanaryKind::Rule => "rule",
            CanaryKind::Constraint => "constraint",
            CanaryKind::Fact => "fact",
            CanaryKind::Goal => "goal",
            CanaryKind::Preference => "preference",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One statement of a canary: where it is and the value it carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// Index in [`Case::messages`] of the user message saying it.
    pub message: usize,
    pub value: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Canary {
    pub kind: CanaryKind,
    /// The statement that planted it.
    pub planted: Statement,
    /// A later statement giving the same subject a new value: once it is in
    /// the conversation, its value is the one that must survive and
    /// `planted.value` is stale.
    pub update: Option<Statement>,
}

impl Canary {
    /// The statement in force in a conversation of `len` messages, if the
    /// canary is planted in it.
    pub fn current(&self, len: usize) -> Option<&Statement> {
        match &self.update {
            Some(update) if update.message < len => Some(update),
            _ => (self.planted.message < len).then_some(&self.planted),
        }
    }

    /// The superseded statement, once the update is in a conversation of
    /// `len` messages.
    pub fn stale(&self, len: usize) -> Option<&Statement> {
        self.update
            .as_ref()
            .filter(|u| u.message < len)
            .map(|_| &self.planted)
    }

    /// Every statement of this canary.
    pub fn statements(&self) -> impl Iterator<Item = &Statement> {
        std::iter::once(&self.planted).chain(&self.update)
    }
}

/// One generated conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// `chat-SEED` or the recorded session's name.
    pub name: String,
    pub messages: Vec<Message>,
    /// The segments the case was generated in and its canaries planned on:
    /// `messages[..segment_ends[r - 1]]` is the conversation at round `r` of
    /// the default run; the last is `messages.len()`. A run of another number
    /// of rounds cuts the same messages at [`Case::round_ends`].
    pub segment_ends: [usize; ROUNDS],
    pub canaries: Vec<Canary>,
    /// Near-duplicate pairs, as indices into `canaries`.
    pub near_duplicates: Vec<(usize, usize)>,
}

impl Case {
    /// The segment (1-based) holding message `index`.
    pub fn segment_of(&self, index: usize) -> usize {
        segment_in(&self.segment_ends, index)
    }

    /// Where a run of `rounds` compactions cuts the conversation:
    /// `messages[..ends[r - 1]]` is the conversation at round `r`, the last
    /// end is `messages.len()`. The messages are the same whatever `rounds`
    /// is; only the cut differs.
    ///
    /// Cut `k` lies `k * ROUNDS / rounds` generated segments in: where that
    /// is a whole number of segments, at the end of that segment
    /// ([`Case::segment_ends`]), so `rounds == ROUNDS` is the default cut and
    /// a multiple of [`ROUNDS`] refines it; otherwise, in the segment it
    /// falls in, after the previous cut, at the turn boundary
    /// ([`turn_boundaries`]) nearest that share of the segment's tokens (the
    /// earlier of two as near) that leaves one for each later cut in the
    /// segment.
    ///
    /// Panics when a segment has no turn boundary left for a cut (more rounds
    /// than the conversation has turns).
    pub fn round_ends(&self, rounds: usize) -> Vec<usize> {
        assert!(rounds > 0, "{}: a run of no rounds", self.name);
        // before[p]: the tokens of messages[..p].
        let before: Vec<u64> = std::iter::once(0)
            .chain(
                estimate_messages(&self.messages)
                    .iter()
                    .scan(0u64, |sum, &t| {
                        *sum += u64::from(t);
                        Some(*sum)
                    }),
            )
            .collect();
        let boundaries = turn_boundaries(&self.messages);
        let mut ends: Vec<usize> = Vec::with_capacity(rounds);
        for k in 1..=rounds {
            let (whole, part) = (k * ROUNDS / rounds, k * ROUNDS % rounds);
            let previous = ends.last().copied().unwrap_or(0);
            let end = if part == 0 {
                self.segment_ends[whole - 1]
            } else {
                let start = if whole == 0 {
                    0
                } else {
                    self.segment_ends[whole - 1]
                };
                let stop = self.segment_ends[whole];
                let target =
                    before[start] + (before[stop] - before[start]) * part as u64 / rounds as u64;
                let inside: Vec<usize> = boundaries
                    .iter()
                    .copied()
                    .filter(|&p| p > previous && p < stop)
                    .collect();
                // A boundary left for each later cut inside this segment.
                let later = (k + 1..=rounds)
                    .take_while(|&j| j * ROUNDS / rounds == whole)
                    .count();
                inside[..inside.len().saturating_sub(later)]
                    .iter()
                    .copied()
                    .min_by_key(|&p| before[p].abs_diff(target))
                    .unwrap_or_else(|| {
                        panic!(
                            "{}: no turn boundary for cut {k} of {rounds} in segment {}",
                            self.name,
                            whole + 1
                        )
                    })
            };
            assert!(
                end > previous,
                "{}: round {k} of {rounds} would be empty",
                self.name
            );
            ends.push(end);
        }
        ends
    }

    /// Indices of the messages in which `value` occurs (as a whole token).
    pub fn occurrences(&self, value: &str) -> Vec<usize> {
        self.messages
            .iter()
            .enumerate()
            .filter(|(_, m)| contains_value(&message_text(m), value))
            .map(|(i, _)| i)
            .collect()
    }

    /// Estimated tokens of the canary statements, and of the whole case.
    pub fn canary_tokens(&self) -> (u64, u64) {
        let planted: HashSet<usize> = self
            .canaries
            .iter()
            .flat_map(|c| c.statements().map(|s| s.message))
            .collect();
        let tokens = estimate_messages(&self.messages);
        let canary = planted.iter().map(|&i| u64::from(tokens[i])).sum();
        (canary, tokens.iter().map(|&t| u64::from(t)).sum())
    }
}

/// The segment (1-based) holding message `index`, the segments ending at
/// `ends`.
fn segment_in(ends: &[usize], index: usize) -> usize {
    1 + ends.iter().take_while(|&&e| e <= index).count()
}

/// The turn boundaries of a conversation: the positions `p` where a person
/// opens a turn (`messages[p]` is a user message that is not a tool result)
/// and no tool call made before `p` is unanswered. Ending a round's
/// conversation before one leaves it valid and ends it where a turn ended.
pub fn turn_boundaries(messages: &[Message]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut open: HashSet<&str> = HashSet::new();
    for (p, m) in messages.iter().enumerate() {
        if p > 0 && open.is_empty() && m.opens_turn() {
            out.push(p);
        }
        for r in m.tool_results() {
            open.remove(r.call_id.as_str());
        }
        open.extend(m.tool_calls().map(|c| c.id.as_str()));
    }
    out
}

/// Everything a model reads of a message: text, reasoning, tool calls (name
/// and arguments), tool results, opaque parts.
pub fn message_text(message: &Message) -> String {
    let mut out = String::new();
    for part in &message.parts {
        let text = match part {
            Part::Text(t) | Part::Opaque(t) => t.as_str(),
            Part::Thinking(t) => t.text.as_str(),
            Part::ToolCall(c) => {
                out.push_str(&c.name);
                out.push(' ');
                c.arguments.as_str()
            }
            Part::ToolResult(r) => r.content.as_str(),
        };
        out.push_str(text);
        out.push('\n');
    }
    out
}

/// Whether `value` occurs in `text` as a whole token: an edge of the value
/// that is a letter or digit must not touch another letter or digit, so
/// `6541` is not found in `16541` (nor `q-4410` in `q-44107`).
pub fn contains_value(text: &str, value: &str) -> bool {
    let word = |c: char| c.is_alphanumeric();
    let check_left = value.chars().next().is_some_and(word);
    let check_right = value.chars().next_back().is_some_and(word);
    text.match_indices(value).any(|(i, _)| {
        (!check_left || !text[..i].chars().next_back().is_some_and(word))
            && (!check_right || !text[i + value.len()..].chars().next().is_some_and(word))
    })
}

// ---------------------------------------------------------------------------
// Templates
// ---------------------------------------------------------------------------

// The phrases come from a bank (`bank.rs`): the tuned one (`tuned.rs`) of
// the first four families, the untuned one (`untuned.rs`) written apart from
// the summarizer, the retired held-back one (`retired.rs`), the tuned halves
// of the summary shapes (`shapes.rs`), their held-back halves
// (`blind/*.rs`) and their retired held-back halves (`held/*.rs`,
// `unseen/*.rs`, `fresh/found.rs`), each written once on 2026-12-05 and
// pinned.
mod bank;
/// The held-back halves of the summary shapes since the night of
/// 2026-12-05 (see its doc).
mod blind;
/// The third held-back half of the tool-found shape, retired (spent) on the
/// night of 2026-12-05 when its stale lines were read.
mod fresh;
/// The first held-back halves of the summary shapes, retired on the
/// evening of 2026-12-05: their figures were consulted while the
/// summarizer was tuned on those shapes (three times for found), so they
/// are no longer ones nothing was tuned to. Their text is kept byte for
/// byte, their cases run as [`Shape::retired`], and the held-back figures
/// are those of the banks of [`blind`] now.
mod held;
/// The fifth held-back half of the tool-found shape, written on the night
/// of 2026-12-05 after the blind one was spent (see its doc).
mod late;
/// The first held-back bank, retired on 2026-12-05: it was consulted while
/// the summarizer was tuned (commits quote its figures), so its figures are
/// no longer ones nothing was tuned to. Its text is kept byte for byte (its
/// own doc still says what it was written as), its cases run as the
/// ordinary family [`retired_cases`], and the held-back figures are those of
/// the banks of [`held`] now.
mod retired;
mod shapes;
mod tuned;
/// The second held-back halves of the summary shapes, retired (spent) on
/// the night of 2026-12-05 when their stale lines were read.
mod unseen;
mod untuned;

pub use bank::*;
pub use blind::{BLIND_EMPHASIS, BLIND_FOUND, BLIND_LABELLED, BLIND_MULTI};
pub use fresh::FRESH_FOUND;
pub use held::{HELD_EMPHASIS, HELD_FOUND, HELD_LABELLED, HELD_MULTI};
pub use late::LATE_FOUND;
pub use shapes::{EMPHASIS, FOUND, LABELLED, MULTI};
pub use tuned::TUNED;
pub use unseen::{UNSEEN_EMPHASIS, UNSEEN_FOUND, UNSEEN_LABELLED, UNSEEN_MULTI};
pub use untuned::UNTUNED;

/// The retired held-back bank (see `retired`), under its honest name.
pub const RETIRED: Bank = Bank {
    name: "retired",
    ..retired::HELD_BACK
};

/// A statement as a person might say it: a lead-in, the template with its
/// value, a trailer. A space separates them when the bank's lead-in or
/// trailer has none of its own.
fn phrase(rng: &mut Rng, bank: &Bank, text: &str, subject: &str, value: &str) -> String {
    let body = text.replace("{s}", subject).replace("{v}", value);
    let lead = *rng.pick(bank.lead_ins);
    let mut chars = body.chars();
    // "Also, the budget …", but "Also, Ticket PROJ-…" stays as written: only
    // an ordinary capitalised word is lowercased after a lead-in, and not
    // after one that is a sentence of its own ("Quick one.").
    let own_sentence = lead.trim_end().ends_with(['.', '!', '?']);
    let body = match (chars.next(), chars.next()) {
        (Some(first), Some(second))
            if !lead.is_empty()
                && !own_sentence
                && first.is_uppercase()
                && second.is_lowercase() =>
        {
            format!("{}{}", first.to_lowercase(), &body[first.len_utf8()..])
        }
        _ => body,
    };
    let trailer = *rng.pick(bank.trailers);
    let lead_space = if lead.is_empty() || lead.ends_with(char::is_whitespace) {
        ""
    } else {
        " "
    };
    let trailer_space = if trailer.is_empty() || trailer.starts_with(char::is_whitespace) {
        ""
    } else {
        " "
    };
    format!("{lead}{lead_space}{body}{trailer_space}{trailer}")
}

/// Draws a value of `shape` (see [`Template`]).
fn render_shape(rng: &mut Rng, shape: &str, subject: &str) -> String {
    const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
    const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const HEX: &[u8] = b"0123456789abcdef";
    const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = String::new();
    for (i, piece) in shape.split("{s}").enumerate() {
        if i > 0 {
            out.push_str(subject);
        }
        for c in piece.chars() {
            let drawn = match c {
                '#' => char::from(b'0' + rng.below(10) as u8),
                '!' => char::from(b'1' + rng.below(9) as u8),
                '~' => char::from(b'0' + rng.below(6) as u8),
                '@' => char::from(*rng.pick(LOWER)),
                '%' => char::from(*rng.pick(UPPER)),
                '^' => char::from(*rng.pick(HEX)),
                '*' => char::from(*rng.pick(ALNUM)),
                other => other,
            };
            out.push(drawn);
        }
    }
    out
}

/// Every fixed text of `bank` a statement, an acknowledgement or a
/// person's filler line can contain: a value must not occur in any of them.
fn template_text(bank: &Bank) -> String {
    let mut all = String::new();
    for kind in CanaryKind::ALL {
        for t in bank.templates[kind.index()] {
            for text in std::iter::once(t.text).chain(t.updates) {
                all.push_str(text);
                all.push('\n');
            }
        }
        for twin in bank.twins[kind.index()] {
            all.push_str(twin.text);
            all.push('\n');
            for s in twin.subjects {
                all.push_str(s);
                all.push('\n');
            }
        }
    }
    for text in bank.lead_ins.iter().chain(bank.trailers).chain(bank.acks) {
        all.push_str(text);
        all.push('\n');
    }
    for text in bank.routine.iter().chain(bank.decoys) {
        all.push_str(text);
        all.push('\n');
    }
    all
}

/// Draws values that occur nowhere in `haystack` and do not overlap each
/// other, so that only the statement carrying a value can show it.
struct Values<'a> {
    haystack: &'a str,
    fixed: String,
    taken: Vec<String>,
}

impl Values<'_> {
    fn draw(&mut self, rng: &mut Rng, shape: &str, subject: &str) -> String {
        for _ in 0..10_000 {
            let value = render_shape(rng, shape, subject);
            let fresh = !contains_value(self.haystack, &value)
                && !contains_value(&self.fixed, &value)
                && self
                    .taken
                    .iter()
                    .all(|t| !t.contains(value.as_str()) && !value.contains(t.as_str()));
            if fresh {
                self.taken.push(value.clone());
                return value;
            }
        }
        panic!("no fresh value of shape {shape:?}: the haystack holds them all");
    }
}

// ---------------------------------------------------------------------------
// Planting canaries into a base conversation
// ---------------------------------------------------------------------------

/// A statement to insert before `base[point]`, in segment `segment`
/// (0-based).
struct Plant {
    point: usize,
    segment: usize,
    /// What the person says: the statement, or (`tool`) the request that
    /// makes the agent look.
    text: String,
    /// A statement found by a tool: the command the agent runs and the
    /// result, which carries the value.
    tool: Option<(String, String)>,
    /// The assistant's own answer to the statement (else one of the bank's
    /// acknowledgements).
    reply: Option<String>,
    /// The canary it states, and whether it is its update.
    canary: usize,
    update: bool,
}

/// A template's text cut into its parts (see [`Template`]): what the person
/// says, the command and result of a tool (after [`COMMAND`]), the
/// assistant's answer (after [`REPLY`]).
fn template_parts(text: &str) -> (&str, Option<(&str, &str)>, Option<&str>) {
    let (said, reply) = match text.split_once(REPLY) {
        Some((said, reply)) => (said, Some(reply)),
        None => (text, None),
    };
    match said.split_once(COMMAND) {
        Some((request, rest)) => {
            let (command, result) = rest
                .split_once('\n')
                .unwrap_or_else(|| panic!("`{text}`: a command with no result"));
            (request, Some((command, result)), reply)
        }
        None => (said, None, reply),
    }
}

/// Where a person's message may be inserted before `base[p]` without breaking
/// anything: no tool call in flight before it, not in front of a tool result,
/// not right after another person's message (two user messages in a row);
/// `base[p]` is an assistant message or a turn opener (then an
/// acknowledgement follows the statement).
fn insertion_points(base: &[Message]) -> Vec<bool> {
    let mut ok = vec![false; base.len() + 1];
    let mut open: HashSet<&str> = HashSet::new();
    for p in 0..base.len() {
        if p > 0 {
            let next = &base[p];
            let previous = &base[p - 1];
            ok[p] = open.is_empty()
                && !next.is_result_carrier()
                && (next.role == Role::Assistant || next.opens_turn())
                && !previous.opens_turn();
        }
        for r in base[p].tool_results() {
            open.remove(r.call_id.as_str());
        }
        open.extend(base[p].tool_calls().map(|c| c.id.as_str()));
    }
    ok
}

/// The plan of one canary: kind, statement templates and segments.
struct Planned {
    kind: CanaryKind,
    text: &'static str,
    shape: &'static str,
    subject: &'static str,
    segment: usize,
    update: Option<(&'static str, usize)>,
}

/// Which canaries a case gets and in which segments (`Planned::segment` is
/// 0-based; 1-based here): per kind, one early (segment 1), one in segments
/// 2–3, one superseded (planted in 1–2, updated one or two segments later, by
/// segment 4 so that round 5 folds the update), one late (4–5). In two kinds
/// the first two are a near-duplicate pair instead, the first early, the
/// second in the same segment or the next.
fn plan(
    rng: &mut Rng,
    bank: &Bank,
    twin_kinds: [CanaryKind; 2],
) -> (Vec<Planned>, Vec<(usize, usize)>) {
    let mut planned = Vec::new();
    let mut pairs = Vec::new();
    for kind in CanaryKind::ALL {
        let mut order: Vec<&'static Template> = bank.templates[kind.index()].iter().collect();
        rng.shuffle(&mut order);
        let plain = |template: &'static Template, segment| Planned {
            kind,
            text: template.text,
            shape: template.shape,
            subject: "",
            segment,
            update: None,
        };
        if twin_kinds.contains(&kind) {
            let twin = rng.pick(bank.twins[kind.index()]);
            let mut subjects = twin.subjects.to_vec();
            rng.shuffle(&mut subjects);
            for (subject, segment) in [(subjects[0], 0), (subjects[1], rng.below(2))] {
                planned.push(Planned {
                    kind,
                    text: twin.text,
                    shape: twin.shape,
                    subject,
                    segment,
                    update: None,
                });
            }
            pairs.push((planned.len() - 2, planned.len() - 1));
        } else {
            planned.push(plain(order[0], 0));
            planned.push(plain(order[1], rng.between(1, 2)));
        }
        let superseded = order[2];
        let segment = rng.between(0, 1);
        let updated = (segment + rng.between(1, 2)).min(ROUNDS - 2);
        planned.push(Planned {
            update: Some((*rng.pick(&superseded.updates), updated)),
            ..plain(superseded, segment)
        });
        planned.push(plain(order[3], rng.between(3, 4)));
    }
    (planned, pairs)
}

/// Plants the canaries of `plan` into `base`, whose segments end at
/// `base_ends`, at random insertion points of their segments, in the words
/// of `bank`; values are drawn fresh against `base` and the bank's fixed
/// text. In the [`Style::Multi`] style the statements of a segment are
/// gathered two to four to a message, followed by a routine line of the
/// bank; a template with a command ([`COMMAND`]) is planted as a request,
/// the agent's call and the result that carries the value.
fn build_case(
    name: String,
    rng: &mut Rng,
    bank: &Bank,
    style: Style,
    base: Vec<Message>,
    base_ends: [usize; ROUNDS],
    twin_kinds: [CanaryKind; 2],
) -> Case {
    let (planned, near_duplicates) = plan(rng, bank, twin_kinds);
    let haystack: String = base.iter().map(message_text).collect();
    let mut values = Values {
        haystack: &haystack,
        fixed: template_text(bank),
        taken: Vec::new(),
    };

    // Free insertion points per segment, each used once while there are
    // enough, so the statements spread over their segment.
    let ok = insertion_points(&base);
    let mut free: Vec<Vec<usize>> = (0..ROUNDS)
        .map(|s| {
            let start = if s == 0 { 1 } else { base_ends[s - 1] };
            (start..base_ends[s]).filter(|&p| ok[p]).collect()
        })
        .collect();
    let mut point_in = |rng: &mut Rng, segment: usize| -> usize {
        let points = &mut free[segment];
        assert!(
            !points.is_empty(),
            "{name}: no insertion point in segment {}",
            segment + 1
        );
        if points.len() > 1 {
            points.swap_remove(rng.below(points.len()))
        } else {
            points[0]
        }
    };

    let mut plants = Vec::new();
    let mut drawn = Vec::new();
    let mut plant =
        |rng: &mut Rng, text: &str, subject: &str, value: &str, segment, canary, update| {
            // The point first, then the words: the order the draws were
            // always made in, so the older families' cases stay the same.
            let point = point_in(rng, segment);
            let (said, tool, reply) = template_parts(text);
            let fill = |t: &str| t.replace("{s}", subject).replace("{v}", value);
            let text = match (style, &tool) {
                (Style::Multi, None) => fill(said),
                _ => phrase(rng, bank, said, subject, value),
            };
            Plant {
                point,
                segment,
                text,
                tool: tool.map(|(command, result)| (fill(command), fill(result))),
                reply: reply.map(fill),
                canary,
                update,
            }
        };
    for (canary, p) in planned.iter().enumerate() {
        let value = values.draw(rng, p.shape, p.subject);
        plants.push(plant(
            rng, p.text, p.subject, &value, p.segment, canary, false,
        ));
        let update = p.update.map(|(text, segment)| {
            let value = values.draw(rng, p.shape, p.subject);
            plants.push(plant(rng, text, p.subject, &value, segment, canary, true));
            value
        });
        drawn.push((value, update));
    }
    if style == Style::Multi {
        // Two to four statements of a segment to a message: each group goes
        // to the earliest point of its members.
        for segment in 0..ROUNDS {
            let mut members: Vec<usize> = (0..plants.len())
                .filter(|&i| plants[i].segment == segment)
                .collect();
            rng.shuffle(&mut members);
            let mut rest = &members[..];
            while !rest.is_empty() {
                let mut size = rng.between(2, 4).min(rest.len());
                // No statement left alone.
                if rest.len() - size == 1 {
                    size = if size < 4 { size + 1 } else { size - 1 };
                }
                let (group, after) = rest.split_at(size);
                let point = group.iter().map(|&i| plants[i].point).min().unwrap_or(0);
                for &i in group {
                    plants[i].point = point;
                }
                rest = after;
            }
        }
    }
    // Stable: statements planted at the same point keep their plan order, so
    // an update never precedes what it updates (they are in later segments
    // anyway).
    plants.sort_by_key(|p| p.point);

    let mut messages = Vec::with_capacity(base.len() + 3 * plants.len());
    let mut segment_ends = [0; ROUNDS];
    let mut at = vec![(0, None); planned.len()];
    let mut calls = 0;
    let mut next_plant = plants.iter().peekable();
    for (p, original) in base.iter().enumerate() {
        // Statements inserted before base[base_ends[s]] open segment s + 1.
        for (s, &end) in base_ends.iter().enumerate() {
            if end == p {
                segment_ends[s] = messages.len();
            }
        }
        let mut here: Vec<&Plant> = Vec::new();
        while let Some(plant) = next_plant.next_if(|plant| plant.point == p) {
            here.push(plant);
        }
        // One message per statement, or per group in the multi style.
        let groups: Vec<Vec<&Plant>> = if style == Style::Multi {
            if here.is_empty() {
                Vec::new()
            } else {
                vec![here]
            }
        } else {
            here.into_iter().map(|p| vec![p]).collect()
        };
        let count = groups.len();
        for (g, group) in groups.into_iter().enumerate() {
            let first = group[0];
            let index = match &first.tool {
                Some((command, result)) => {
                    messages.push(Message::text(Role::User, first.text.clone()));
                    let id = format!("call_found_{calls:03}");
                    calls += 1;
                    messages.push(Message {
                        role: Role::Assistant,
                        parts: vec![Part::ToolCall(ToolCall {
                            id: id.clone(),
                            name: "run_command".to_owned(),
                            arguments: serde_json::json!({ "command": command }).to_string(),
                        })],
                    });
                    messages.push(Message {
                        role: Role::Tool,
                        parts: vec![Part::ToolResult(ToolResult {
                            call_id: id,
                            content: result.clone(),
                            is_error: false,
                        })],
                    });
                    messages.len() - 1
                }
                None if group.len() > 1 => {
                    let lead = *rng.pick(bank.lead_ins);
                    let mut text = lead.trim_end().to_owned();
                    // One line each: bare, bulleted or numbered.
                    let bullet = *rng.pick(&["", "- ", "* ", "1."]);
                    for (n, plant) in group.iter().enumerate() {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        if bullet == "1." {
                            let _ = write!(text, "{}. ", n + 1);
                        } else {
                            text.push_str(bullet);
                        }
                        text.push_str(&plant.text);
                    }
                    if !bank.routine.is_empty() {
                        text.push_str("\n\n");
                        let line: &&str = rng.pick(bank.routine);
                        text.push_str(line);
                    }
                    messages.push(Message::text(Role::User, text));
                    messages.len() - 1
                }
                None => {
                    messages.push(Message::text(Role::User, first.text.clone()));
                    messages.len() - 1
                }
            };
            for plant in &group {
                if plant.update {
                    at[plant.canary].1 = Some(index);
                } else {
                    at[plant.canary].0 = index;
                }
            }
            // The next message must be the assistant's, or the person would
            // speak twice in a row; a statement's own answer is always given.
            let reply = group.iter().find_map(|p| p.reply.clone());
            if g + 1 < count || original.role != Role::Assistant || reply.is_some() {
                let reply = reply.unwrap_or_else(|| (*rng.pick(bank.acks)).to_owned());
                messages.push(Message::text(Role::Assistant, reply));
            }
        }
        messages.push(original.clone());
    }
    segment_ends[ROUNDS - 1] = messages.len();

    let canaries = planned
        .iter()
        .zip(drawn)
        .zip(at)
        .map(|((p, (value, update)), (planted, updated))| Canary {
            kind: p.kind,
            planted: Statement {
                message: planted,
                value,
            },
            update: update.map(|value| Statement {
                message: updated.expect("every update is planted"),
                value,
            }),
        })
        .collect();
    Case {
        name,
        messages,
        segment_ends,
        canaries,
        near_duplicates,
    }
}

/// The two kinds with near-duplicate pairs in case number `n`: every kind
/// gets its turn over consecutive cases.
fn twin_kinds(n: u64) -> [CanaryKind; 2] {
    let first = (n % 5) as usize;
    [CanaryKind::ALL[first], CanaryKind::ALL[(first + 2) % 5]]
}

fn case_rng(family: u64, seed: u64, index: u64) -> Rng {
    let mut mix = Rng::new(family ^ seed.wrapping_mul(0xA076_1D64_78BD_642F) ^ index);
    Rng::new(mix.next_u64())
}

// ---------------------------------------------------------------------------
// Chat-style cases
// ---------------------------------------------------------------------------

/// Generated agent sessions, one per seed: a system prompt, a task, then
/// routine turns (short requests, tool calls with long results, reports of
/// 150–400 words full of file names and numbers), about 5k tokens per
/// segment, with the canaries planted between them.
pub fn chat_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&CHAT_FAMILY, seeds)
}

/// Chat-style sessions without tools: routine chatter ("continue", "ok")
/// answered by replies and reports, the canaries among it.
pub fn talk_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&TALK_FAMILY, seeds)
}

/// Chat-style sessions of about 125 short turns, each saying something: the
/// person asks for one specific thing in a sentence or says "ok", the
/// assistant answers in a sentence. Nothing long is folded, so the person's
/// other requests and the assistant's findings are most of the text and
/// compete with the canaries for the budget: at 10–30% of the folded text
/// it binds, and what is kept is decided by the ranking (the conversation
/// the issue measured, where routine lines pushed out the rules).
pub fn terse_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&TERSE_FAMILY, seeds)
}

/// The untuned family: heavy-filler sessions (see [`filler_cases`]) in the
/// words of [`UNTUNED`], a bank written apart from the summarizer and from
/// the tuned bank: labelled statements in any case and a few languages,
/// declarative facts, progress states, soft preferences, updates that often
/// just restate the subject with its new value.
pub fn untuned_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&UNTUNED_FAMILY, seeds)
}

/// The retired family: the same heavy-filler sessions in the words of
/// [`RETIRED`], the bank that was the held-back one until 2026-12-05 (the
/// same cases as then: same bank text, same seed mix). It was consulted
/// while the summarizer was tuned, so it is an ordinary family now, its
/// figures no longer reported as held back.
pub fn retired_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&RETIRED_FAMILY, seeds)
}

/// Multi-statement messages, in the words of [`MULTI`]:
/// heavy-filler sessions where a person says two to four binding things in
/// one message, followed by a routine line; every statement is its own
/// canary (updates too are said among others).
pub fn multi_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&MULTI_FAMILY, seeds)
}

/// Tool-found values, in the words of [`FOUND`]: agent sessions
/// with tools (as [`chat_cases`]) where the person asks the agent to look
/// something up and the value is in what the tool returned (a config file,
/// a version, a host, a test count, an error); the update is a later look
/// that finds a new value.
pub fn found_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&FOUND_FAMILY, seeds)
}

/// Labelled routine beside labelled rules, in the words of
/// [`LABELLED`]: heavy-filler sessions whose routine lines and decoys carry
/// labels ("Note:", "Reminder:", "Sync notes:") as the binding statements
/// do ("SECURITY RULE:", "HARD LIMIT:", "FACT:").
pub fn labelled_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&LABELLED_FAMILY, seeds)
}

/// Emphasis, in the words of [`EMPHASIS`]: heavy-filler
/// sessions whose binding statements are marked by capitals, IMPORTANT,
/// NEVER, MUST or the assistant's specific acknowledgement (a template's
/// own reply, after [`REPLY`]), among routine that is sometimes emphatic
/// too.
pub fn emphasis_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&EMPHASIS_FAMILY, seeds)
}

/// The held-back halves of the shapes, each in the words of its blind bank
/// ([`BLIND_MULTI`], [`BLIND_LABELLED`], [`BLIND_EMPHASIS`]); for found,
/// in those of [`LATE_FOUND`] ([`BLIND_FOUND`] was spent: its stale lines
/// were read while the summarizer was fixed, and it runs as a retired
/// family).
pub fn blind_multi_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&BLIND_MULTI_FAMILY, seeds)
}
pub fn late_found_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&LATE_FOUND_FAMILY, seeds)
}
pub fn blind_found_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&BLIND_FOUND_FAMILY, seeds)
}
pub fn blind_labelled_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&BLIND_LABELLED_FAMILY, seeds)
}
pub fn blind_emphasis_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&BLIND_EMPHASIS_FAMILY, seeds)
}

/// The second held-back halves of the shapes, retired on the night of
/// 2026-12-05 (spent: their stale lines were read while the summarizer was
/// fixed), in the words of [`UNSEEN_MULTI`], [`UNSEEN_FOUND`],
/// [`UNSEEN_LABELLED`], [`UNSEEN_EMPHASIS`]; and the third of found, in
/// those of [`FRESH_FOUND`]. Ordinary families.
pub fn unseen_multi_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&UNSEEN_MULTI_FAMILY, seeds)
}
pub fn unseen_found_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&UNSEEN_FOUND_FAMILY, seeds)
}
pub fn unseen_labelled_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&UNSEEN_LABELLED_FAMILY, seeds)
}
pub fn unseen_emphasis_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&UNSEEN_EMPHASIS_FAMILY, seeds)
}
pub fn fresh_found_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&FRESH_FOUND_FAMILY, seeds)
}

/// The retired held-back half of [`multi_cases`], in the words of
/// [`HELD_MULTI`].
pub fn held_multi_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&HELD_MULTI_FAMILY, seeds)
}

/// The retired held-back half of [`found_cases`], in the words of [`HELD_FOUND`].
pub fn held_found_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&HELD_FOUND_FAMILY, seeds)
}

/// The retired held-back half of [`labelled_cases`], in the words of
/// [`HELD_LABELLED`].
pub fn held_labelled_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&HELD_LABELLED_FAMILY, seeds)
}

/// The retired held-back half of [`emphasis_cases`], in the words of
/// [`HELD_EMPHASIS`].
pub fn held_emphasis_cases(seeds: std::ops::Range<u64>) -> Vec<Case> {
    generated_cases(&HELD_EMPHASIS_FAMILY, seeds)
}

/// The summary shapes: per shape, its name, its tuned family, its
/// held-back one (whose figures are always reported apart) and its retired
/// held-back one.
pub const SHAPES: [Shape; 4] = [
    Shape {
        name: "multi",
        tuned: multi_cases,
        held_back: blind_multi_cases,
        retired: &[held_multi_cases, unseen_multi_cases],
    },
    Shape {
        name: "found",
        tuned: found_cases,
        held_back: late_found_cases,
        retired: &[
            held_found_cases,
            unseen_found_cases,
            fresh_found_cases,
            blind_found_cases,
        ],
    },
    Shape {
        name: "labelled",
        tuned: labelled_cases,
        held_back: blind_labelled_cases,
        retired: &[held_labelled_cases, unseen_labelled_cases],
    },
    Shape {
        name: "emphasis",
        tuned: emphasis_cases,
        held_back: blind_emphasis_cases,
        retired: &[held_emphasis_cases, unseen_emphasis_cases],
    },
];

/// The cases of a family, for a range of seeds.
pub type Cases = fn(std::ops::Range<u64>) -> Vec<Case>;

/// One shape of [`SHAPES`].
pub struct Shape {
    pub name: &'static str,
    pub tuned: Cases,
    pub held_back: Cases,
    /// The earlier held-back halves, retired (see `held`, `unseen`,
    /// `fresh`): ordinary families.
    pub retired: &'static [Cases],
}

/// Heavy-filler sessions in the words of any `bank`, named `{name}-SEED`,
/// with `family` mixed into the seed: what [`untuned_cases`] and
/// [`retired_cases`] are, for a bank of one's own. No tools; the person
/// mostly sends the bank's routine lines, three to five of them word for
/// word four to eight times each over the session and the others once, and
/// its decoys (lines with numbers and rule words that bind nothing, each
/// `{n}` a fresh number of two to four digits; each decoy once, half of
/// them or more again with other numbers), besides a few of the generator's
/// short requests; the assistant answers each with a sentence or, one time
/// in five, a report of 150–400 words. About 90 turns, 9k–16k tokens;
/// segments are fifths of the tokens. The person's lines are a sixth of the
/// text or so and the canary statements 4–7%, so at a summary budget of 10%
/// the filler competes with the canaries for the room.
pub fn filler_cases(
    bank: &'static Bank,
    name: &'static str,
    family: u64,
    seeds: std::ops::Range<u64>,
) -> Vec<Case> {
    generated_cases(
        &Family {
            name,
            id: family,
            style: Style::Filler,
            bank,
        },
        seeds,
    )
}

/// A generated family: its case names, its seed mix, how its sessions are
/// made and whose words the canaries are in.
struct Family {
    name: &'static str,
    id: u64,
    style: Style,
    bank: &'static Bank,
}

const CHAT_FAMILY: Family = Family {
    name: "chat",
    id: 0xC0FF_EE00,
    style: Style::Tools,
    bank: &TUNED,
};
const TALK_FAMILY: Family = Family {
    name: "talk",
    id: 0x7A1C_0000,
    style: Style::Talk,
    bank: &TUNED,
};
const TERSE_FAMILY: Family = Family {
    name: "terse",
    id: 0x7E55_E000,
    style: Style::Terse,
    bank: &TUNED,
};
const UNTUNED_FAMILY: Family = Family {
    name: "untuned",
    id: 0x0F11_7E40,
    style: Style::Filler,
    bank: &UNTUNED,
};
const RETIRED_FAMILY: Family = Family {
    name: "retired",
    // The seed mix of the held-back family it was: the same cases.
    id: 0x4E1D_BAC0,
    style: Style::Filler,
    bank: &RETIRED,
};
const MULTI_FAMILY: Family = Family {
    name: "multi",
    id: 0x3417_1000,
    style: Style::Multi,
    bank: &MULTI,
};
const FOUND_FAMILY: Family = Family {
    name: "found",
    id: 0xF0D0_2000,
    style: Style::Found,
    bank: &FOUND,
};
const LABELLED_FAMILY: Family = Family {
    name: "labelled",
    id: 0x1ABE_3000,
    style: Style::Filler,
    bank: &LABELLED,
};
const EMPHASIS_FAMILY: Family = Family {
    name: "emphasis",
    id: 0xE3F4_4000,
    style: Style::Filler,
    bank: &EMPHASIS,
};
const HELD_MULTI_FAMILY: Family = Family {
    name: "held-multi",
    id: 0x4E1D_1001,
    style: Style::Multi,
    bank: &HELD_MULTI,
};
const HELD_FOUND_FAMILY: Family = Family {
    name: "held-found",
    id: 0x4E1D_2002,
    style: Style::Found,
    bank: &HELD_FOUND,
};
const HELD_LABELLED_FAMILY: Family = Family {
    name: "held-labelled",
    id: 0x4E1D_3003,
    style: Style::Filler,
    bank: &HELD_LABELLED,
};
const HELD_EMPHASIS_FAMILY: Family = Family {
    name: "held-emphasis",
    id: 0x4E1D_4004,
    style: Style::Filler,
    bank: &HELD_EMPHASIS,
};

const UNSEEN_MULTI_FAMILY: Family = Family {
    name: "unseen-multi",
    id: 0x5EE4_1001,
    style: Style::Multi,
    bank: &UNSEEN_MULTI,
};
const UNSEEN_FOUND_FAMILY: Family = Family {
    name: "unseen-found",
    id: 0x5EE4_2002,
    style: Style::Found,
    bank: &UNSEEN_FOUND,
};
const FRESH_FOUND_FAMILY: Family = Family {
    name: "fresh-found",
    id: 0xF2E5_2002,
    style: Style::Found,
    bank: &FRESH_FOUND,
};
const UNSEEN_LABELLED_FAMILY: Family = Family {
    name: "unseen-labelled",
    id: 0x5EE4_3003,
    style: Style::Filler,
    bank: &UNSEEN_LABELLED,
};
const UNSEEN_EMPHASIS_FAMILY: Family = Family {
    name: "unseen-emphasis",
    id: 0x5EE4_4004,
    style: Style::Filler,
    bank: &UNSEEN_EMPHASIS,
};
const BLIND_MULTI_FAMILY: Family = Family {
    name: "blind-multi",
    id: 0xB11D_1001,
    style: Style::Multi,
    bank: &BLIND_MULTI,
};
const BLIND_FOUND_FAMILY: Family = Family {
    name: "blind-found",
    id: 0xB11D_2002,
    style: Style::Found,
    bank: &BLIND_FOUND,
};
const LATE_FOUND_FAMILY: Family = Family {
    name: "late-found",
    id: 0x1A7E_2002,
    style: Style::Found,
    bank: &LATE_FOUND,
};
const BLIND_LABELLED_FAMILY: Family = Family {
    name: "blind-labelled",
    id: 0xB11D_3003,
    style: Style::Filler,
    bank: &BLIND_LABELLED,
};
const BLIND_EMPHASIS_FAMILY: Family = Family {
    name: "blind-emphasis",
    id: 0xB11D_4004,
    style: Style::Filler,
    bank: &BLIND_EMPHASIS,
};

fn generated_cases(family: &Family, seeds: std::ops::Range<u64>) -> Vec<Case> {
    seeds
        .map(|seed| {
            let mut rng = case_rng(family.id, seed, 0);
            let (base, ends) = match family.style {
                Style::Filler | Style::Multi => filler_base(&mut rng, family.bank),
                Style::Found => chat_base(&mut rng, Style::Tools),
                style => chat_base(&mut rng, style),
            };
            build_case(
                format!("{}-{seed}", family.name),
                &mut rng,
                family.bank,
                family.style,
                base,
                ends,
                twin_kinds(seed),
            )
        })
        .collect()
}

/// What a generated session is made of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Routine requests, tool calls with their results, replies and reports.
    Tools,
    /// Routine requests answered by replies and reports, no tools.
    Talk,
    /// Short turns that each say something, no tools.
    Terse,
    /// The bank's routine lines, repeated, and its decoys, answered by
    /// replies and reports, no tools.
    Filler,
    /// As [`Style::Filler`], the statements two to four to a message.
    Multi,
    /// As [`Style::Tools`], the statements found by the agent's tools.
    Found,
    /// A recorded session (its base is not generated).
    Corpus,
}

const PROJECTS: &[&str] = &["ledger", "dispatch", "harbor", "quarry", "beacon", "atlas"];
const TASKS: &[&str] = &[
    "the invoice export is slow and sometimes times out, please find out why and fix it",
    "add retries with backoff to the webhook sender and cover them with tests",
    "the nightly reindex job leaks connections; track it down",
    "refactor the config loading so every service reads the same file",
    "clean up the warnings in the worker crate and get CI green again",
];
const USER_FILLER: &[&str] = &[
    "continue",
    "ok, next file",
    "looks good",
    "run the tests again",
    "go on",
    "keep going",
    "ok",
    "next",
    "fine, what's next?",
    "show me what changed",
    "try that again",
    "sounds good, proceed",
    "can you check the logs?",
    "and the other module?",
    "yes",
    "do it",
    "hmm, ok",
    "great, continue with the rest",
];
/// What a person asks for in a terse session: one specific thing, with no
/// rule, limit or exact value in it (those are the canaries).
const TERSE_REQUESTS: &[&str] = &[
    "now look at the {noun} handling in the {crate} crate",
    "can you check why `{ident}` is so slow?",
    "rename `{ident}` to something clearer",
    "add a test for the empty {noun} case",
    "what does `{ident}` do when the {noun} is missing?",
    "move the {noun} parsing out of `{ident}`",
    "please explain how the {noun} gets retried",
    "simplify the error handling in `{ident}`",
    "is the {noun} cache still used anywhere?",
    "split `{ident}` into two smaller functions",
    "check the logs for the {noun} step again",
    "make the {noun} message clearer for users",
    "why does the {crate} build print a warning about `{ident}`?",
    "go through the {noun} module and tidy it up",
];
const DIRS: &[&str] = &[
    "src/billing",
    "src/api",
    "src/db",
    "src/worker",
    "lib/queue",
    "tests/integration",
    "web/src/components",
    "services/export",
];
const VERBS: &[&str] = &[
    "parse", "load", "flush", "apply", "send", "open", "compute", "retry", "validate", "merge",
    "render", "fetch",
];
const NOUNS: &[&str] = &[
    "header", "config", "batch", "discount", "session", "webhook", "invoice", "token", "cursor",
    "snapshot", "row", "payload",
];
const EXTS: &[&str] = &[".rs", ".py", ".ts", ".go", ".ex"];
const CRATES: &[&str] = &["billing", "api", "worker", "storage", "gateway"];
const TYPES: &[&str] = &[
    "u64",
    "&str",
    "Vec<Row>",
    "Option<Cursor>",
    "Duration",
    "Config",
];

fn file(rng: &mut Rng) -> String {
    format!("{}/{}{}", rng.pick(DIRS), rng.pick(NOUNS), rng.pick(EXTS))
}

fn ident(rng: &mut Rng) -> String {
    format!("{}_{}", rng.pick(VERBS), rng.pick(NOUNS))
}

fn type_name(rng: &mut Rng) -> String {
    let noun = rng.pick(NOUNS);
    let suffix = rng.pick(&["Error", "Builder", "State", "Handle", "Options"]);
    format!("{}{}{suffix}", noun[..1].to_uppercase(), &noun[1..])
}

fn code_line(rng: &mut Rng) -> String {
    let arg = *rng.pick(NOUNS);
    match rng.below(11) {
        0 => format!(
            "pub fn {}(&self, {arg}: {}) -> Result<{}, Error> {{",
            ident(rng),
            rng.pick(TYPES),
            type_name(rng)
        ),
        1 => format!("    let {arg} = self.{}.get(&{arg})?;", ident(rng)),
        2 => format!("    if {arg}.len() > {} {{", rng.between(2, 512)),
        3 => format!("        return Err(Error::{}({arg}));", type_name(rng)),
        4 => "    }".to_owned(),
        5 => "}".to_owned(),
        6 => format!(
            "    // {} the {arg} before the {} is {}.",
            rng.pick(&["Check", "Validate", "Flush", "Reset"]),
            rng.pick(NOUNS),
            rng.pick(&["sent", "closed", "read", "merged"])
        ),
        7 => format!("    {arg}.{}({arg}, {});", ident(rng), rng.below(100)),
        8 => String::new(),
        9 => format!("use crate::{}::{};", rng.pick(CRATES), type_name(rng)),
        _ => format!(
            "    tracing::debug!(\"{} took {{}} ms\", started.elapsed().as_millis());",
            ident(rng)
        ),
    }
}

/// A tool the assistant calls: its name, JSON arguments and the result.
fn tool_use(rng: &mut Rng) -> (&'static str, String, String, bool) {
    match rng.below(5) {
        0 | 1 => {
            let path = file(rng);
            let start = rng.between(1, 400);
            let lines = rng.between(25, 90);
            let listing = (0..lines)
                .map(|i| format!("{:>5}\t{}", start + i, code_line(rng)))
                .collect::<Vec<_>>()
                .join("\n");
            let args = serde_json::json!({ "path": path }).to_string();
            ("read_file", args, listing, false)
        }
        2 => {
            let krate = *rng.pick(CRATES);
            let args = serde_json::json!({ "command": format!("cargo test -p {krate}") });
            let tests = rng.between(8, 30);
            let mut out = format!(
                "   Compiling {krate} v0.{}.{}\nrunning {tests} tests\n",
                rng.below(9),
                rng.below(20)
            );
            let mut failed = 0;
            for _ in 0..tests {
                let fail = rng.chance(4);
                failed += usize::from(fail);
                let _ = writeln!(
                    out,
                    "test {}::tests::{} ... {}",
                    rng.pick(NOUNS),
                    ident(rng),
                    if fail { "FAILED" } else { "ok" }
                );
            }
            let _ = write!(
                out,
                "\ntest result: {}. {} passed; {failed} failed; {} ignored; finished in {}.{:02}s",
                if failed == 0 { "ok" } else { "FAILED" },
                tests - failed,
                rng.below(4),
                rng.below(30),
                rng.below(100)
            );
            ("run_command", args.to_string(), out, failed > 0)
        }
        3 => {
            let pattern = ident(rng);
            let args = serde_json::json!({ "pattern": pattern, "path": "." }).to_string();
            let hits = (0..rng.between(3, 15))
                .map(|_| format!("{}:{}:{}", file(rng), rng.between(1, 900), code_line(rng)))
                .collect::<Vec<_>>()
                .join("\n");
            ("search", args, hits, false)
        }
        _ => {
            let path = file(rng);
            let args = serde_json::json!({
                "path": path,
                "old_text": code_line(rng),
                "new_text": code_line(rng),
            })
            .to_string();
            let result = format!(
                "Edited {path}: 1 replacement, {} lines changed.",
                rng.between(1, 12)
            );
            ("edit_file", args, result, false)
        }
    }
}

const SHORT_REPLIES: &[&str] = &[
    "Done. {file} now passes its checks.",
    "I updated `{ident}` in {file}; {n} tests pass.",
    "That file is fine as it is; moving on to {file}.",
    "The build is green again after the change to {file}.",
    "Fixed the warning in {file} (unused variable in `{ident}`).",
    "Nothing to change there. Next up is {file}.",
    "I reverted my last edit to {file}, it broke {n} tests.",
];
const REPORT_SENTENCES: &[&str] = &[
    "I went through {file} and refactored `{ident}` so that it no longer allocates on every call.",
    "The test suite for the {crate} crate now reports {n} passed, {k} ignored and 0 failed.",
    "There is still a TODO at {file}:{n} about the {noun} handling, which I left alone for now.",
    "The function `{ident}` in {file} had an off-by-one error in its loop bound, which explains the flaky result.",
    "I also renamed `{ident}` to `{ident2}` in {k} places to match the naming in {file}.",
    "Coverage of {file} went from {k}% to {p}% with the new cases.",
    "The benchmark for `{ident}` went from {n} µs to {n2} µs on my machine.",
    "I checked {file} for other callers of `{ident}`; there are {k}, all updated.",
    "The migration in {file} is idempotent now, so running it twice is safe.",
    "One open point: {file} still depends on the old {noun} module, which we may want to replace later.",
    "Lint is clean except for a pedantic warning in {file} that I left a comment on.",
    "I kept the public API of the {crate} crate unchanged, so no downstream changes are needed.",
    "The error path in `{ident}` now returns a typed error instead of panicking.",
    "Logs from the last run show {n} retries in {k} minutes, all of them for the {noun} step.",
];

/// Fills `{file}`, `{ident}`, `{n}` … of a filler sentence.
fn fill(rng: &mut Rng, template: &str) -> String {
    let mut out = template.to_owned();
    for (key, value) in [
        ("{file}", file(rng)),
        ("{ident2}", ident(rng)),
        ("{ident}", ident(rng)),
        ("{crate}", (*rng.pick(CRATES)).to_owned()),
        ("{noun}", (*rng.pick(NOUNS)).to_owned()),
        ("{n2}", rng.between(10, 999).to_string()),
        ("{n}", rng.between(10, 999).to_string()),
        ("{k}", rng.between(2, 60).to_string()),
        ("{p}", rng.between(61, 99).to_string()),
    ] {
        out = out.replace(key, &value);
    }
    out
}

/// A report of 150–400 words, as an agent writes at the end of a step.
fn long_report(rng: &mut Rng) -> String {
    let words = rng.between(150, 400);
    let mut out = String::from("Here is where things stand.\n\n");
    while out.split_whitespace().count() < words {
        let template = *rng.pick(REPORT_SENTENCES);
        let sentence = fill(rng, template);
        if rng.chance(30) {
            out.push_str("\n- ");
        } else if !out.ends_with("\n\n") {
            out.push(' ');
        }
        out.push_str(&sentence);
    }
    out
}

/// One routine turn: a short request, maybe a few tool steps, a reply.
fn chat_turn(rng: &mut Rng, calls: &mut usize, out: &mut Vec<Message>, style: Style) {
    let request = if style == Style::Terse && rng.chance(60) {
        let template = *rng.pick(TERSE_REQUESTS);
        fill(rng, template)
    } else {
        (*rng.pick(USER_FILLER)).to_owned()
    };
    out.push(Message::text(Role::User, request));
    let steps = if style == Style::Tools && rng.chance(60) {
        rng.between(1, 4)
    } else {
        0
    };
    for _ in 0..steps {
        let mut parts = Vec::new();
        if rng.chance(50) {
            parts.push(Part::Text(fill(rng, "Let me look at {file}.")));
        }
        let mut results = Vec::new();
        // Now and then a parallel batch of two calls.
        for _ in 0..if rng.chance(20) { 2 } else { 1 } {
            let (name, arguments, content, is_error) = tool_use(rng);
            let id = format!("call_{:05}", *calls);
            *calls += 1;
            parts.push(Part::ToolCall(ToolCall {
                id: id.clone(),
                name: name.to_owned(),
                arguments,
            }));
            results.push(Message {
                role: Role::Tool,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: id,
                    content,
                    is_error,
                })],
            });
        }
        out.push(Message {
            role: Role::Assistant,
            parts,
        });
        out.extend(results);
    }
    let reply = if style == Style::Terse {
        let replies = if rng.chance(50) {
            SHORT_REPLIES
        } else {
            REPORT_SENTENCES
        };
        let template = *rng.pick(replies);
        fill(rng, template)
    } else if rng.chance(35) {
        long_report(rng)
    } else {
        let template = *rng.pick(SHORT_REPLIES);
        fill(rng, template)
    };
    out.push(Message::text(Role::Assistant, reply));
}

/// A chat session of [`ROUNDS`] segments of 4.5k–6.5k tokens each (terse:
/// 1.6k–2.4k, about 25 turns), every segment ending with an assistant reply.
fn chat_base(rng: &mut Rng, style: Style) -> (Vec<Message>, [usize; ROUNDS]) {
    let (least, spread) = match style {
        Style::Terse => (1_600, 800),
        // Filler sessions are made by `filler_base`.
        Style::Tools
        | Style::Talk
        | Style::Filler
        | Style::Multi
        | Style::Found
        | Style::Corpus => (4_500, 2_000),
    };
    let mut messages = opening(rng);
    let mut calls = 0;
    let mut tokens: u64 = messages
        .iter()
        .map(|m| u64::from(estimate_message(m)))
        .sum();
    let mut ends = [0; ROUNDS];
    for end in &mut ends {
        let goal = tokens + least + rng.below(spread) as u64;
        while tokens < goal {
            let start = messages.len();
            chat_turn(rng, &mut calls, &mut messages, style);
            tokens += messages[start..]
                .iter()
                .map(|m| u64::from(estimate_message(m)))
                .sum::<u64>();
        }
        *end = messages.len();
    }
    (messages, ends)
}

/// A generated session's first messages: the system prompt, the task, the
/// assistant setting out.
fn opening(rng: &mut Rng) -> Vec<Message> {
    let project = *rng.pick(PROJECTS);
    vec![
        Message::text(
            Role::System,
            format!(
                "You are a coding agent working in the repository acme/{project}. \
                 Use the tools to read, search and edit files and to run commands. \
                 Be concise."
            ),
        ),
        Message::text(Role::User, format!("In {project}: {}.", rng.pick(TASKS))),
        Message::text(Role::Assistant, "I'll start by looking at the code."),
    ]
}

/// A decoy line of the bank with every `{n}` replaced by a number of two
/// to four digits not yet used in the case.
fn decoy(rng: &mut Rng, template: &str, used: &mut HashSet<u32>) -> String {
    let mut out = String::new();
    for (i, piece) in template.split("{n}").enumerate() {
        if i > 0 {
            let number = loop {
                let digits = rng.between(2, 4) as u32;
                let n = rng.between(10usize.pow(digits - 1), 10usize.pow(digits) - 1) as u32;
                if used.insert(n) {
                    break n;
                }
            };
            let _ = write!(out, "{number}");
        }
        out.push_str(piece);
    }
    out
}

/// A heavy-filler session (see [`filler_cases`]): what the person says is
/// decided first, then each line is answered, then the session is cut into
/// [`ROUNDS`] segments of a fifth of its tokens each, at turn boundaries.
fn filler_base(rng: &mut Rng, bank: &Bank) -> (Vec<Message>, [usize; ROUNDS]) {
    let mut routine: Vec<&str> = bank.routine.to_vec();
    rng.shuffle(&mut routine);
    let repeated = rng.between(3, 5).min(routine.len());
    let counts: Vec<usize> = (0..repeated).map(|_| rng.between(4, 8)).collect();

    // Every line said once: the routine lines not repeated, each decoy (and
    // a few again, with other numbers), a few short requests.
    let mut used = HashSet::new();
    let mut once: Vec<String> = routine[repeated..].iter().map(|&l| l.to_owned()).collect();
    if !bank.decoys.is_empty() {
        let extra = rng.between(bank.decoys.len() / 2, bank.decoys.len());
        let mut decoys: Vec<&str> = bank.decoys.to_vec();
        for _ in 0..extra {
            decoys.push(*rng.pick(bank.decoys));
        }
        for template in decoys {
            once.push(decoy(rng, template, &mut used));
        }
    }
    for _ in 0..rng.between(20, 30) {
        once.push((*rng.pick(USER_FILLER)).to_owned());
    }
    rng.shuffle(&mut once);

    // The repeated lines first, each spread evenly: its j-th of k
    // occurrences falls in the j-th k-th of the session (the nearest free
    // turn), then the others in the turns left.
    let turns = once.len() + counts.iter().sum::<usize>();
    let mut lines: Vec<Option<String>> = vec![None; turns];
    for (line, &count) in routine.iter().zip(&counts) {
        for j in 0..count {
            let (lo, hi) = (j * turns / count, (j + 1) * turns / count);
            let wanted = rng.between(lo, hi - 1);
            let slot = (0..turns)
                .flat_map(|d| [wanted + d, wanted.wrapping_sub(d)])
                .find(|&t| t < turns && lines[t].is_none())
                .expect("a free turn");
            lines[slot] = Some((*line).to_owned());
        }
    }
    let mut rest = once.into_iter();
    let lines: Vec<String> = lines
        .into_iter()
        .map(|l| l.unwrap_or_else(|| rest.next().expect("as many lines as turns")))
        .collect();

    let mut messages = opening(rng);
    let mut starts = Vec::with_capacity(turns);
    for line in lines {
        starts.push(messages.len());
        messages.push(Message::text(Role::User, line));
        let reply = if rng.chance(20) {
            long_report(rng)
        } else {
            let template = *rng.pick(SHORT_REPLIES);
            fill(rng, template)
        };
        messages.push(Message::text(Role::Assistant, reply));
    }

    let tokens = estimate_messages(&messages);
    let total: u64 = tokens.iter().map(|&t| u64::from(t)).sum();
    let mut ends = [messages.len(); ROUNDS];
    let mut sum = 0u64;
    let mut segment = 0;
    let mut next_start = starts.iter().peekable();
    for (p, &t) in tokens.iter().enumerate() {
        if next_start.next_if(|&&s| s == p).is_some()
            && segment < ROUNDS - 1
            && sum * ROUNDS as u64 >= total * (segment as u64 + 1)
        {
            ends[segment] = p;
            segment += 1;
        }
        sum += u64::from(t);
    }
    assert_eq!(segment, ROUNDS - 1, "could not cut {ROUNDS} segments");
    (messages, ends)
}

// ---------------------------------------------------------------------------
// Corpus cases
// ---------------------------------------------------------------------------

/// The long recorded sessions ([`CORPUS_SESSIONS`]) with the canaries
/// inserted as user messages between turns, one case per session.
pub fn corpus_cases(seed: u64) -> Vec<Case> {
    CORPUS_SESSIONS
        .iter()
        .map(|name| corpus_case(name, seed))
        .collect()
}

/// One recorded session with canaries planted: its segments are fifths of
/// its tokens, each ending where nothing is in flight and the next message is
/// not a tool result.
pub fn corpus_case(name: &str, seed: u64) -> Case {
    let index = CORPUS_SESSIONS.iter().position(|n| *n == name).unwrap_or(9) as u64;
    let mut rng = case_rng(0xC0_4905, seed, index + 1);
    let base = session(name);
    let tokens = estimate_messages(&base);
    let total: u64 = tokens.iter().map(|&t| u64::from(t)).sum();
    let mut ends = [base.len(); ROUNDS];
    let mut open: HashSet<&str> = HashSet::new();
    let mut sum = 0u64;
    let mut segment = 0;
    for (p, m) in base.iter().enumerate() {
        if segment < ROUNDS - 1
            && sum * ROUNDS as u64 >= total * (segment as u64 + 1)
            && open.is_empty()
            && !m.is_result_carrier()
        {
            ends[segment] = p;
            segment += 1;
        }
        sum += u64::from(tokens[p]);
        for r in m.tool_results() {
            open.remove(r.call_id.as_str());
        }
        open.extend(m.tool_calls().map(|c| c.id.as_str()));
    }
    assert_eq!(
        segment,
        ROUNDS - 1,
        "{name}: could not cut {ROUNDS} segments"
    );
    build_case(
        name.to_owned(),
        &mut rng,
        &TUNED,
        Style::Corpus,
        base,
        ends,
        twin_kinds(seed + index),
    )
}

// ---------------------------------------------------------------------------
// Running the rounds
// ---------------------------------------------------------------------------

/// Counts of one kind (or of all) in one round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Canaries planted in the conversation so far.
    pub planted: usize,
    /// Of those, folded: not among the messages kept verbatim.
    pub folded: usize,
    /// Folded canaries whose value is in what the model sees.
    pub survived: usize,
    /// Planted canaries whose value is in what the model sees (verbatim ones
    /// included).
    pub seen: usize,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.planted += other.planted;
        self.folded += other.folded;
        self.survived += other.survived;
        self.seen += other.seen;
    }

    /// `survived / folded`; NaN when nothing was folded.
    pub fn rate(&self) -> f64 {
        if self.folded == 0 {
            f64::NAN
        } else {
            self.survived as f64 / self.folded as f64
        }
    }
}

/// How the default summarizer marks an error line a later run of its
/// command no longer showed (`FAILED … ($ pytest -q; fixed)`): a stale
/// value carried only in such lines is shown as history, not as current.
/// The strict count ([`RoundFigures::stale_carried`]) includes it.
pub const AS_FIXED: &str = "; fixed)";

/// Everything measured in one round, summed over the cases.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundFigures {
    /// Indexed by [`CanaryKind`] (`kind as usize`).
    pub kinds: [Tally; 5],
    /// By the segment (1-based, index `s - 1`) of the run's cut that the
    /// canary's statement is in: one per round.
    pub by_segment: Vec<Tally>,
    /// Compress calls made, and those that compacted at the planned boundary.
    pub calls: usize,
    pub compacted: usize,
    /// Rounds whose budget (`budget_percent` of the folded text) did not fit
    /// the request and was lowered to the room the request had.
    pub budget_capped: usize,
    /// Summary budgets given and summary tokens written (the summary text's
    /// estimate), summed.
    pub summary_budget: u64,
    pub summary_tokens: u64,
    /// Superseded canaries whose update is folded, and of those, how many
    /// still show the old value.
    pub stale_checked: usize,
    pub stale_carried: usize,
    /// Of the stale values carried, those shown only as history: in error
    /// lines marked as behind the agent ([`AS_FIXED`]).
    pub stale_as_fixed: usize,
    /// Near-duplicate pairs with both statements folded, and of those, how
    /// many show both values.
    pub pairs_folded: usize,
    pub pairs_kept: usize,
    /// Folded canaries that survived the previous round and not this one:
    /// dropped while the summary was rewritten, not at their first fold.
    pub dropped: usize,
}

impl RoundFigures {
    /// Nothing yet, in a run of `rounds` rounds.
    fn new(rounds: usize) -> RoundFigures {
        RoundFigures {
            kinds: [Tally::default(); 5],
            by_segment: vec![Tally::default(); rounds],
            calls: 0,
            compacted: 0,
            budget_capped: 0,
            summary_budget: 0,
            summary_tokens: 0,
            stale_checked: 0,
            stale_carried: 0,
            stale_as_fixed: 0,
            pairs_folded: 0,
            pairs_kept: 0,
            dropped: 0,
        }
    }

    fn add(&mut self, other: &RoundFigures) {
        assert_eq!(
            self.by_segment.len(),
            other.by_segment.len(),
            "adding runs of other rounds"
        );
        for (a, b) in self.kinds.iter_mut().zip(&other.kinds) {
            a.add(b);
        }
        for (a, b) in self.by_segment.iter_mut().zip(&other.by_segment) {
            a.add(b);
        }
        self.calls += other.calls;
        self.compacted += other.compacted;
        self.budget_capped += other.budget_capped;
        self.summary_budget += other.summary_budget;
        self.summary_tokens += other.summary_tokens;
        self.stale_checked += other.stale_checked;
        self.stale_carried += other.stale_carried;
        self.stale_as_fixed += other.stale_as_fixed;
        self.pairs_folded += other.pairs_folded;
        self.pairs_kept += other.pairs_kept;
        self.dropped += other.dropped;
    }

    /// All kinds together.
    pub fn all(&self) -> Tally {
        let mut all = Tally::default();
        for k in &self.kinds {
            all.add(k);
        }
        all
    }
}

/// A folded canary whose value was not in what the model saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lost {
    pub case: String,
    pub round: usize,
    pub kind: CanaryKind,
    pub value: String,
    /// The statement as the person said it.
    pub statement: String,
    /// The segment it was planted in.
    pub segment: usize,
}

/// The figures of [`run`]: per round (1..=`schedule.rounds`) and kind.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub budget_percent: u32,
    /// How many rounds, and how each round's budget follows from
    /// `budget_percent`.
    pub schedule: Schedule,
    pub cases: usize,
    /// `rounds[r - 1]` is round `r`.
    pub rounds: Vec<RoundFigures>,
    /// Every folded canary lost, in case and round order.
    pub lost: Vec<Lost>,
    /// Every stale value still in what the model saw after its update was
    /// folded (the statement is the superseded one).
    pub stale: Vec<Lost>,
    /// Rounds that did not compact as planned (failed open, did not compact,
    /// cut elsewhere), each named with its case and why. Their canaries count
    /// as verbatim, never as folded.
    pub problems: Vec<String>,
}

impl Report {
    fn empty(budget_percent: u32, schedule: Schedule) -> Report {
        Report {
            budget_percent,
            schedule,
            cases: 0,
            rounds: vec![RoundFigures::new(schedule.rounds); schedule.rounds],
            lost: Vec::new(),
            stale: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// Adds another report's figures (of the same budget) to these.
    pub fn merge(&mut self, other: &Report) {
        assert_eq!(self.budget_percent, other.budget_percent, "merging budgets");
        assert_eq!(self.schedule, other.schedule, "merging schedules");
        self.cases += other.cases;
        for (a, b) in self.rounds.iter_mut().zip(&other.rounds) {
            a.add(b);
        }
        self.lost.extend(other.lost.iter().cloned());
        self.stale.extend(other.stale.iter().cloned());
        self.problems.extend(other.problems.iter().cloned());
    }

    fn round(&self, round: usize) -> &RoundFigures {
        let rounds = self.rounds.len();
        assert!(
            (1..=rounds).contains(&round),
            "round {round} is not in 1..={rounds}"
        );
        &self.rounds[round - 1]
    }

    /// The headline: the share of the folded canaries of `kind` whose exact
    /// value the model sees at round `round` (1-based). NaN when none was
    /// folded.
    pub fn survival(&self, kind: CanaryKind, round: usize) -> f64 {
        self.round(round).kinds[kind.index()].rate()
    }

    /// The same, all kinds together.
    pub fn overall(&self, round: usize) -> f64 {
        self.round(round).all().rate()
    }

    /// The lowest [`Report::survival`] over the kinds with folded canaries at
    /// `round`; NaN when no kind has any.
    pub fn min_survival_at_round(&self, round: usize) -> f64 {
        CanaryKind::ALL
            .iter()
            .map(|&k| self.survival(k, round))
            .filter(|s| !s.is_nan())
            .reduce(f64::min)
            .unwrap_or(f64::NAN)
    }

    /// Stale values carried, over every round: superseded canaries whose
    /// update was folded and whose old value was still in what the model saw.
    pub fn stale_carried(&self) -> usize {
        self.rounds.iter().map(|r| r.stale_carried).sum()
    }

    /// Of [`Report::stale_carried`], those shown only in error lines marked
    /// as fixed ([`AS_FIXED`]).
    pub fn stale_as_fixed(&self) -> usize {
        self.rounds.iter().map(|r| r.stale_as_fixed).sum()
    }

    /// Stale checks made (superseded canaries with their update folded),
    /// over every round.
    pub fn stale_checked(&self) -> usize {
        self.rounds.iter().map(|r| r.stale_checked).sum()
    }

    /// The share of near-duplicate pairs, both folded, that kept both values,
    /// over every round; NaN when no pair was folded.
    pub fn near_duplicates_kept(&self) -> f64 {
        let folded: usize = self.rounds.iter().map(|r| r.pairs_folded).sum();
        let kept: usize = self.rounds.iter().map(|r| r.pairs_kept).sum();
        if folded == 0 {
            f64::NAN
        } else {
            kept as f64 / folded as f64
        }
    }

    /// (pairs that kept both values, pairs with both statements folded) at
    /// `round`.
    pub fn near_duplicates_at(&self, round: usize) -> (usize, usize) {
        let r = self.round(round);
        (r.pairs_kept, r.pairs_folded)
    }

    /// The summary budget a round was given, in tokens (after capping), on
    /// average over every round run; NaN when none ran.
    pub fn mean_summary_budget(&self) -> f64 {
        let (_, calls) = self.rounds_compacted();
        let given: u64 = self.rounds.iter().map(|r| r.summary_budget).sum();
        if calls == 0 {
            f64::NAN
        } else {
            given as f64 / calls as f64
        }
    }

    /// (rounds that compacted as planned, rounds run).
    pub fn rounds_compacted(&self) -> (usize, usize) {
        let compacted = self.rounds.iter().map(|r| r.compacted).sum();
        (compacted, self.rounds.iter().map(|r| r.calls).sum())
    }

    /// Whether every round compacted as planned and, at `round`, every kind
    /// has folded canaries of which at least `min_survival` survived; the
    /// error names each failure.
    pub fn meets(&self, min_survival: f64, round: usize) -> Result<(), String> {
        let mut failures: Vec<String> = self.problems.clone();
        let figures = self.round(round);
        for kind in CanaryKind::ALL {
            let tally = figures.kinds[kind.index()];
            if tally.folded == 0 {
                failures.push(format!("{}: no canary folded", kind.name()));
            } else if tally.rate() < min_survival {
                failures.push(format!(
                    "{}: {}/{} survived ({:.1}% < {:.1}%)",
                    kind.name(),
                    tally.survived,
                    tally.folded,
                    100.0 * tally.rate(),
                    100.0 * min_survival
                ));
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "survival at round {round}, summary budget {}%: {}",
                self.budget_percent,
                failures.join("; ")
            ))
        }
    }

    /// A one-line summary: every round's overall survival, stale and
    /// near-duplicate figures.
    pub fn summary_line(&self) -> String {
        let last = self.rounds.len();
        let rounds: Vec<String> = (1..=last).map(|r| percent(self.overall(r))).collect();
        let (compacted, calls) = self.rounds_compacted();
        format!(
            "budget {:>2}%: folded canaries surviving by round {}; min kind at round {last} {}; \
             stale carried {}/{}; near-duplicates kept {}; {compacted}/{calls} rounds compacted",
            self.budget_percent,
            rounds.join(" "),
            percent(self.min_survival_at_round(last)),
            self.stale_carried(),
            self.stale_checked(),
            percent(self.near_duplicates_kept()),
        )
    }

    /// The figures as a table: one row per kind, one column per round, each
    /// cell `survived/folded share`; then the verbatim, stale, near-duplicate,
    /// summary and per-segment lines.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let (compacted, calls) = self.rounds_compacted();
        let capped: usize = self.rounds.iter().map(|r| r.budget_capped).sum();
        let _ = writeln!(
            out,
            "Survival at {}: {} case(s), \
             {compacted}/{calls} rounds compacted as planned, budget capped by the request in {capped}.",
            self.schedule.describe(self.budget_percent),
            self.cases
        );
        let _ = writeln!(
            out,
            "Folded canaries whose exact value is in what the model sees (survived/folded):"
        );
        let cell = |t: &Tally| {
            if t.folded == 0 {
                "-".to_owned()
            } else {
                format!("{}/{} {}", t.survived, t.folded, percent(t.rate()))
            }
        };
        let row = |out: &mut String, label: &str, cells: Vec<String>| {
            let _ = write!(out, "  {label:<22}");
            for c in cells {
                let _ = write!(out, "{c:>16}");
            }
            out.push('\n');
        };
        let rounds = self.rounds.len();
        row(
            &mut out,
            "",
            (1..=rounds).map(|r| format!("round {r}")).collect(),
        );
        for kind in CanaryKind::ALL {
            row(
                &mut out,
                kind.name(),
                self.rounds
                    .iter()
                    .map(|r| cell(&r.kinds[kind.index()]))
                    .collect(),
            );
        }
        row(
            &mut out,
            "all",
            self.rounds.iter().map(|r| cell(&r.all())).collect(),
        );
        row(
            &mut out,
            "still verbatim/planted",
            self.rounds
                .iter()
                .map(|r| {
                    let all = r.all();
                    format!("{}/{}", all.planted - all.folded, all.planted)
                })
                .collect(),
        );
        row(
            &mut out,
            "seen/planted",
            self.rounds
                .iter()
                .map(|r| {
                    let all = r.all();
                    format!("{}/{}", all.seen, all.planted)
                })
                .collect(),
        );
        row(
            &mut out,
            "dropped on rewrite",
            self.rounds.iter().map(|r| r.dropped.to_string()).collect(),
        );
        row(
            &mut out,
            "stale carried/checked",
            self.rounds
                .iter()
                .map(|r| format!("{}/{}", r.stale_carried, r.stale_checked))
                .collect(),
        );
        row(
            &mut out,
            "near-dups kept/folded",
            self.rounds
                .iter()
                .map(|r| format!("{}/{}", r.pairs_kept, r.pairs_folded))
                .collect(),
        );
        row(
            &mut out,
            "summary tokens/budget",
            self.rounds
                .iter()
                .map(|r| {
                    let n = r.calls.max(1) as u64;
                    format!("{}/{}", r.summary_tokens / n, r.summary_budget / n)
                })
                .collect(),
        );
        let last = &self.rounds[rounds - 1];
        let _ = writeln!(
            out,
            "  at round {rounds}, by segment planted: {}",
            last.by_segment
                .iter()
                .enumerate()
                .map(|(s, t)| format!("{}: {}", s + 1, cell(t)))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for problem in &self.problems {
            let _ = writeln!(out, "  problem: {problem}");
        }
        out
    }
}

/// One family's figures at round `round`, a column per budget (`reports`,
/// one per budget): survival per kind and overall (survived/folded), the
/// canaries still verbatim, the stale values carried at that round and over
/// every round, and the near-duplicate pairs that kept both values, at that
/// round and over every round.
pub fn budget_table(reports: &[Report], round: usize) -> String {
    let mut out = String::new();
    let row = |out: &mut String, label: &str, cells: Vec<String>| {
        let _ = write!(out, "  {label:<34}");
        for c in cells {
            let _ = write!(out, "{c:>16}");
        }
        out.push('\n');
    };
    let cell = |t: Tally| {
        if t.folded == 0 {
            "-".to_owned()
        } else {
            format!("{}/{} {}", t.survived, t.folded, percent(t.rate()))
        }
    };
    let cases = reports.first().map_or(0, |r| r.cases);
    let budget = match reports.first().map(|r| r.schedule.budget) {
        Some(BudgetMode::FixedTokens) => format!(
            "fixed summary budget (percent of the whole conversation / {ROUNDS}, every round)"
        ),
        Some(BudgetMode::Folded) | None => "summary budget".to_owned(),
    };
    let _ = writeln!(
        out,
        "At round {round}, {cases} case(s): folded canaries whose exact value the model sees \
         (survived/folded), by {budget}:"
    );
    row(
        &mut out,
        "",
        reports
            .iter()
            .map(|r| format!("{}%", r.budget_percent))
            .collect(),
    );
    for kind in CanaryKind::ALL {
        row(
            &mut out,
            kind.name(),
            reports
                .iter()
                .map(|r| cell(r.round(round).kinds[kind.index()]))
                .collect(),
        );
    }
    row(
        &mut out,
        "all",
        reports.iter().map(|r| cell(r.round(round).all())).collect(),
    );
    row(
        &mut out,
        "still verbatim/planted",
        reports
            .iter()
            .map(|r| {
                let all = r.round(round).all();
                format!("{}/{}", all.planted - all.folded, all.planted)
            })
            .collect(),
    );
    row(
        &mut out,
        &format!("stale carried/checked, round {round}"),
        reports
            .iter()
            .map(|r| {
                let f = r.round(round);
                format!("{}/{}", f.stale_carried, f.stale_checked)
            })
            .collect(),
    );
    row(
        &mut out,
        "stale carried/checked, all rounds",
        reports
            .iter()
            .map(|r| format!("{}/{}", r.stale_carried(), r.stale_checked()))
            .collect(),
    );
    row(
        &mut out,
        "  of which only as fixed errors",
        reports
            .iter()
            .map(|r| r.stale_as_fixed().to_string())
            .collect(),
    );
    row(
        &mut out,
        &format!("pairs both kept/folded, round {round}"),
        reports
            .iter()
            .map(|r| {
                let (kept, folded) = r.near_duplicates_at(round);
                format!("{kept}/{folded}")
            })
            .collect(),
    );
    row(
        &mut out,
        "pairs both kept, all rounds",
        reports
            .iter()
            .map(|r| percent(r.near_duplicates_kept()))
            .collect(),
    );
    row(
        &mut out,
        "rounds compacted/run",
        reports
            .iter()
            .map(|r| {
                let (compacted, calls) = r.rounds_compacted();
                format!("{compacted}/{calls}")
            })
            .collect(),
    );
    out
}

fn percent(share: f64) -> String {
    if share.is_nan() {
        "-".to_owned()
    } else {
        format!("{:.0}%", 100.0 * share)
    }
}

/// How a run compacts a case: in how many rounds, and how each round's
/// summary budget follows from the run's `budget_percent` (see the module
/// doc, "More rounds at a fixed token budget").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Compactions per case; the conversation is cut at
    /// [`Case::round_ends`].
    pub rounds: usize,
    pub budget: BudgetMode,
}

/// How a round's summary budget follows from the run's `budget_percent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetMode {
    /// `budget_percent` of the tokens of every message folded so far: the
    /// budget grows with the conversation (the default).
    Folded,
    /// The same number of tokens every round, [`fixed_budget`]: what a fixed
    /// `summary_max_tokens` gives a trigger that compacts more often.
    FixedTokens,
}

impl Schedule {
    /// The default run: [`ROUNDS`] rounds, the budget a share of the folded
    /// text.
    pub const DEFAULT: Schedule = Schedule {
        rounds: ROUNDS,
        budget: BudgetMode::Folded,
    };

    /// `rounds` rounds at a fixed token budget.
    pub fn fixed(rounds: usize) -> Schedule {
        Schedule {
            rounds,
            budget: BudgetMode::FixedTokens,
        }
    }

    /// The budget of a round of `case` given `budget_percent`, before the
    /// request's room caps it.
    pub fn round_budget(&self, case: &Case, budget_percent: u32) -> RoundBudget {
        match self.budget {
            BudgetMode::Folded => RoundBudget::PercentOfFolded(budget_percent),
            BudgetMode::FixedTokens => RoundBudget::Tokens(fixed_budget(case, budget_percent)),
        }
    }

    /// "a summary budget of 20% of the folded text", as a report's title
    /// says it.
    fn describe(&self, budget_percent: u32) -> String {
        let budget = match self.budget {
            BudgetMode::Folded => {
                format!("a summary budget of {budget_percent}% of the folded text")
            }
            BudgetMode::FixedTokens => format!(
                "a fixed summary budget of {budget_percent}% of the whole conversation / {ROUNDS} \
                 every round"
            ),
        };
        if self.rounds == ROUNDS {
            budget
        } else {
            format!("{budget}, {} rounds", self.rounds)
        }
    }
}

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule::DEFAULT
    }
}

/// The summary budget of every round of `case` in [`BudgetMode::FixedTokens`]:
/// `budget_percent` of the tokens of all its messages, divided by [`ROUNDS`]
/// (whatever the run's number of rounds: see the module doc), at least 64
/// as in [`round_config`].
pub fn fixed_budget(case: &Case, budget_percent: u32) -> u32 {
    let whole: u64 = estimate_messages(&case.messages)
        .iter()
        .map(|&t| u64::from(t))
        .sum();
    u32::try_from(whole * u64::from(budget_percent) / (100 * ROUNDS as u64))
        .unwrap_or(u32::MAX)
        .max(64)
}

/// Runs every case's rounds through the embedded host components at a
/// summary budget of `budget_percent` of the folded text. Cases run in
/// parallel; the report is the same whatever the order.
pub fn run(cases: &[Case], budget_percent: u32) -> Report {
    run_with(embedded_middleware(), cases, budget_percent)
}

/// [`run`] through another middleware (another summarizer, say).
pub fn run_with(middleware: &Middleware, cases: &[Case], budget_percent: u32) -> Report {
    run_with_schedule(middleware, cases, budget_percent, Schedule::DEFAULT)
}

/// [`run_with`] in another number of rounds or at another kind of budget.
pub fn run_with_schedule(
    middleware: &Middleware,
    cases: &[Case],
    budget_percent: u32,
    schedule: Schedule,
) -> Report {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(cases.len())
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut reports: Vec<(usize, Report)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(case) = cases.get(i) else { break };
                        done.push((i, run_case(middleware, case, budget_percent, schedule)));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a survival worker panicked"))
            .collect()
    });
    reports.sort_by_key(|(i, _)| *i);
    let mut report = Report::empty(budget_percent, schedule);
    for (_, r) in &reports {
        report.merge(r);
    }
    report
}

/// The config of one round, and what it was derived from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundConfig {
    pub core: CoreConfig,
    /// The boundary the config makes the compressor choose: the last safe cut.
    pub boundary: usize,
    /// The round's budget ([`RoundBudget`]), before capping.
    pub budget: u32,
    /// The budget was lowered to the room the request had.
    pub capped: bool,
}

/// What one round's summary may spend, before the request's room caps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundBudget {
    /// This percent of the tokens of every message the round folds.
    PercentOfFolded(u32),
    /// This many tokens.
    Tokens(u32),
}

/// The config that makes a round compact and fold everything up to the last
/// safe cut point of `history`, given the request as it stands (`current`
/// tokens: the previous summary pair and everything after it):
///
/// - `token_threshold` just under `current`, so the call compacts;
/// - `keep_recent_tokens` 1, `recent_turns` 0, and a `target_tokens` no
///   request with a summary can fit (one above the summary budget): no cut
///   fits the target, so the compressor takes the latest cut keeping its
///   1-token floor, which is the last safe cut;
/// - `summary_max_tokens` the round's `budget`: a percent of the tokens of
///   every message folded by that cut (the pinned opener and system messages
///   are not folded), or a number of tokens; at least 64 — lowered, when it
///   does not fit, to the room the request has under the threshold with the
///   pair's framing, the pinned opener and the tail: a larger budget could
///   not be spent anyway, and the compressor would otherwise cut elsewhere to
///   stay under the threshold.
///
/// `None` when `history` has no safe cut after `previous_boundary` or no room
/// for a 64-token summary.
pub fn round_config(
    history: &[Message],
    previous_boundary: usize,
    current: u32,
    budget: RoundBudget,
) -> Option<RoundConfig> {
    let boundary = *segment::safe_cut_points(history)
        .last()
        .filter(|&&b| b > previous_boundary)?;
    let tokens = estimate_messages(history);
    let pinned = segment::opener_before(history, boundary);
    let mut folded = 0u64;
    let mut head = 0u64;
    for (i, m) in history[..boundary].iter().enumerate() {
        if m.role == Role::System || Some(i) == pinned {
            head += u64::from(tokens[i]);
        } else {
            folded += u64::from(tokens[i]);
        }
    }
    let tail: u64 = tokens[boundary..].iter().map(|&t| u64::from(t)).sum();
    let budget = match budget {
        RoundBudget::PercentOfFolded(percent) => {
            u32::try_from(folded * u64::from(percent) / 100).unwrap_or(u32::MAX)
        }
        RoundBudget::Tokens(tokens) => tokens,
    }
    .max(64);
    // What the compressor adds to the summary budget for the pair (the
    // longest framing and its join slack), plus a margin of our own.
    let framing = condense_compressor::max_pair_tokens(0, false) + 8;
    let threshold = current.checked_sub(1)?;
    let room = u64::from(threshold).checked_sub(head + framing + tail)?;
    let room = u32::try_from(room).unwrap_or(u32::MAX);
    let summary_max_tokens = budget.min(room);
    let core = CoreConfig {
        token_threshold: threshold,
        target_tokens: summary_max_tokens.checked_add(1)?,
        recent_turns: 0,
        keep_recent_tokens: 1,
        summary_max_tokens,
    };
    core.validate().ok()?;
    Some(RoundConfig {
        core,
        boundary,
        budget,
        capped: room < budget,
    })
}

/// The request the previous checkpoint gives `history`, in tokens: a call
/// that cannot compact (an unreachable threshold) returns it as it stands.
pub fn current_tokens(
    middleware: &Middleware,
    history: &[Message],
    settings: &str,
    checkpoint: Option<&SessionCheckpoint>,
) -> Result<u32, String> {
    let probe = CoreConfig {
        token_threshold: u32::MAX,
        target_tokens: u32::MAX - 1,
        recent_turns: 0,
        keep_recent_tokens: 1,
        summary_max_tokens: 64,
    };
    let out = middleware.compress(history, &probe, settings, checkpoint);
    match out.report.guest() {
        Some(report) if out.report.status() != Status::FailedOpen => Ok(report.tokens_after),
        _ => Err(format!(
            "measuring the request failed: {:?}",
            out.report.reason()
        )),
    }
}

fn run_case(
    middleware: &Middleware,
    case: &Case,
    budget_percent: u32,
    schedule: Schedule,
) -> Report {
    let mut report = Report::empty(budget_percent, schedule);
    report.cases = 1;
    let ends = case.round_ends(schedule.rounds);
    let budget = schedule.round_budget(case, budget_percent);
    // The passes stay off: this measures the summary, and the passes never
    // touch a person's words anyway. Each round's config places the fold
    // with the threshold, so the `cost` rule is off.
    let settings = Settings {
        compact_when: CompactWhen::Threshold,
        ..Settings::default()
    }
    .to_json();
    let mut checkpoint: Option<SessionCheckpoint> = None;
    // Per canary, the statement that was folded and seen in the previous
    // round, to tell a value dropped when the summary was rewritten from one
    // lost at its first fold.
    let mut survived_before: Vec<Option<usize>> = vec![None; case.canaries.len()];
    for round in 1..=schedule.rounds {
        let history = &case.messages[..ends[round - 1]];
        let len = history.len();
        let figures = &mut report.rounds[round - 1];
        figures.calls += 1;
        let previous_boundary = checkpoint
            .as_ref()
            .map_or(0, |c| c.checkpoint.boundary as usize);
        let at = format!("{} round {round}", case.name);

        let planned = current_tokens(middleware, history, &settings, checkpoint.as_ref()).and_then(
            |current| {
                round_config(history, previous_boundary, current, budget)
                    .ok_or_else(|| format!("no config compacts a request of {current} tokens"))
            },
        );
        // What the model sees, and which history messages it sees verbatim.
        let (request, kept): (Vec<Message>, HashSet<usize>) = match planned {
            Ok(config) => {
                let out =
                    middleware.compress(history, &config.core, &settings, checkpoint.as_ref());
                let problem = match out.report.guest() {
                    _ if out.report.status() == Status::FailedOpen => Some(format!(
                        "failed open: {}",
                        out.report.reason().unwrap_or("")
                    )),
                    None => Some("no report from the compressor".to_owned()),
                    Some(g) if g.trigger != Trigger::Compacted => {
                        Some(format!("did not compact: {:?}", g.trigger))
                    }
                    Some(g) if g.boundary as usize != config.boundary => Some(format!(
                        "cut at {} instead of {}",
                        g.boundary, config.boundary
                    )),
                    Some(_) => None,
                };
                match problem {
                    None => figures.compacted += 1,
                    Some(p) => report.problems.push(format!("{at}: {p}")),
                }
                figures.budget_capped += usize::from(config.capped);
                figures.summary_budget += u64::from(config.core.summary_max_tokens);
                if out.report.status() != Status::FailedOpen
                    && let Some(c) = &out.checkpoint
                {
                    figures.summary_tokens += u64::from(estimate_text(&summary_of(c)));
                }
                let kept = out.items.iter().filter_map(|i| i.origin()).collect();
                let request = out.messages(history);
                // On failure the host hands back the checkpoint it was given.
                checkpoint = out.checkpoint;
                (request, kept)
            }
            Err(problem) => {
                // Nothing compacted: the model would see the history as it is.
                report.problems.push(format!("{at}: {problem}"));
                (history.to_vec(), (0..len).collect())
            }
        };
        let seen: String = request.iter().map(message_text).collect();

        let mut survived_now = vec![None; case.canaries.len()];
        for (c, canary) in case.canaries.iter().enumerate() {
            let Some(current) = canary.current(len) else {
                continue;
            };
            let folded = !kept.contains(&current.message);
            let present = contains_value(&seen, &current.value);
            let segment = segment_in(&ends, current.message);
            for tally in [
                &mut figures.kinds[canary.kind.index()],
                &mut figures.by_segment[segment - 1],
            ] {
                tally.planted += 1;
                tally.seen += usize::from(present);
                if folded {
                    tally.folded += 1;
                    tally.survived += usize::from(present);
                }
            }
            if !folded {
                continue;
            }
            if present {
                survived_now[c] = Some(current.message);
            } else {
                figures.dropped += usize::from(survived_before[c] == Some(current.message));
                report.lost.push(Lost {
                    case: case.name.clone(),
                    round,
                    kind: canary.kind,
                    value: current.value.clone(),
                    statement: message_text(&case.messages[current.message])
                        .trim_end()
                        .to_owned(),
                    segment,
                });
            }
            if let Some(stale) = canary.stale(len) {
                figures.stale_checked += 1;
                let carried = contains_value(&seen, &stale.value);
                figures.stale_carried += usize::from(carried);
                figures.stale_as_fixed += usize::from(
                    carried
                        && (seen.lines())
                            .filter(|l| contains_value(l, &stale.value))
                            .all(|l| l.contains(AS_FIXED)),
                );
                if carried {
                    report.stale.push(Lost {
                        case: case.name.clone(),
                        round,
                        kind: canary.kind,
                        value: stale.value.clone(),
                        // Where the model saw it, which says what kept it.
                        statement: seen
                            .lines()
                            .find(|l| contains_value(l, &stale.value))
                            .unwrap_or_default()
                            .to_owned(),
                        segment: segment_in(&ends, stale.message),
                    });
                }
            }
        }
        for &(a, b) in &case.near_duplicates {
            let both = [a, b].map(|c| case.canaries[c].current(len));
            if let [Some(x), Some(y)] = both
                && !kept.contains(&x.message)
                && !kept.contains(&y.message)
            {
                figures.pairs_folded += 1;
                figures.pairs_kept +=
                    usize::from(contains_value(&seen, &x.value) && contains_value(&seen, &y.value));
            }
        }
        survived_before = survived_now;
    }
    report
}
