//! The survival harness itself (`condense_tests::survival`): the cases it
//! generates are what it claims (valid histories, unguessable values planted
//! once, superseded values stated once, near-duplicates distinct, canaries a
//! small share of the text), and a small run through the host compacts every
//! round and folds every kind. The survival targets are asserted elsewhere
//! (`Report::meets`); here the report is only printed:
//! `cargo test -p condense-tests --test integration -- survival:: --nocapture`.

use condense_compressor::Settings;
use condense_compressor::settings::CompactWhen;
use condense_host::SessionCheckpoint;
use condense_model::invariants::check_pairs;
use condense_model::tokens::estimate_messages;
use condense_model::{Message, Role, Trigger};
use condense_tests::survival::{
    BLIND_EMPHASIS, BLIND_FOUND, BLIND_LABELLED, BLIND_MULTI, Bank, CORPUS_SESSIONS, Canary,
    CanaryKind, Case, EMPHASIS, FOUND, FRESH_FOUND, HELD_EMPHASIS, HELD_FOUND, HELD_LABELLED,
    HELD_MULTI, LABELLED, LATE_FOUND, MULTI, PER_KIND, REPLY, RETIRED, ROUNDS, Report, RoundBudget,
    SHAPES, Schedule, Statement, Tally, UNSEEN_EMPHASIS, UNSEEN_FOUND, UNSEEN_LABELLED,
    UNSEEN_MULTI, UNTUNED, blind_emphasis_cases, blind_labelled_cases, blind_multi_cases,
    budget_table, chat_cases, contains_value, corpus_case, corpus_cases, current_tokens,
    emphasis_cases, fixed_budget, found_cases, held_emphasis_cases, held_labelled_cases,
    held_multi_cases, labelled_cases, message_text, multi_cases, retired_cases, round_config, run,
    run_with, run_with_schedule, talk_cases, terse_cases, turn_boundaries, unseen_emphasis_cases,
    unseen_labelled_cases, unseen_multi_cases, untuned_cases,
};
use condense_tests::{custom_summarizer_middleware, embedded_middleware, session, summary_of};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// What the small run uses: two seeds of each generated family and the
/// smallest long session.
fn small_cases() -> Vec<Case> {
    let mut cases = chat_cases(0..2);
    cases.extend(talk_cases(0..2));
    cases.extend(terse_cases(0..2));
    cases.push(corpus_case("cc-opus-c", 0));
    cases
}

fn all_statements(case: &Case) -> impl Iterator<Item = (&Canary, &Statement)> {
    case.canaries
        .iter()
        .flat_map(|c| c.statements().map(move |s| (c, s)))
}

#[test]
fn values_are_whole_tokens() {
    assert!(contains_value("listens on port 6541.", "6541"));
    assert!(!contains_value("listens on port 16541.", "6541"));
    assert!(!contains_value("queue q-44107", "q-4410"));
    assert!(contains_value("(queue q-4410)", "q-4410"));
    assert!(contains_value("capped at $4,217.", "$4,217"));
    assert!(contains_value("modules zq31_billing", "zq31_"));
    assert!(!contains_value("nothing here", "zq31_"));
}

#[test]
fn generation_is_deterministic() {
    assert_eq!(chat_cases(0..3), chat_cases(0..3));
    assert_eq!(corpus_case("cc-opus-c", 7), corpus_case("cc-opus-c", 7));
    assert_ne!(
        chat_cases(0..1),
        chat_cases(1..2),
        "seeds make different cases"
    );
    assert_eq!(untuned_cases(0..2), untuned_cases(0..2));
    assert_eq!(retired_cases(0..2), retired_cases(0..2));
    assert_ne!(untuned_cases(0..1), untuned_cases(1..2));
    for shape in SHAPES {
        assert_eq!((shape.tuned)(0..1), (shape.tuned)(0..1), "{}", shape.name);
        assert_eq!(
            (shape.held_back)(0..1),
            (shape.held_back)(0..1),
            "{}",
            shape.name
        );
        assert_ne!((shape.tuned)(0..1), (shape.tuned)(1..2), "{}", shape.name);
    }
}

/// Every case is a conversation a provider would accept at every round, with
/// the canaries the module doc promises.
#[test]
fn cases_are_sound() {
    let mut cases = chat_cases(0..4);
    cases.extend(talk_cases(0..2));
    cases.extend(terse_cases(0..2));
    cases.extend(corpus_cases(0));
    for case in &cases {
        check_sound(case);
    }
}

/// What every case must be (see [`cases_are_sound`]).
fn check_sound(case: &Case) {
    let name = &case.name;
    let m = &case.messages;

    // Valid at every round: pairs intact, nothing in flight at a segment's
    // end, segments in order.
    let mut previous = 0;
    for (r, &end) in case.segment_ends.iter().enumerate() {
        assert!(end > previous, "{name}: segment {} is empty", r + 1);
        let open = check_pairs(&m[..end]).unwrap_or_else(|p| panic!("{name}: {p}"));
        assert!(
            open.is_empty(),
            "{name}: calls in flight at the end of segment {}",
            r + 1
        );
        previous = end;
    }
    assert_eq!(case.segment_ends[ROUNDS - 1], m.len());

    // Four canaries per kind, one superseded per kind, updates later.
    for kind in CanaryKind::ALL {
        let of_kind: Vec<&Canary> = case.canaries.iter().filter(|c| c.kind == kind).collect();
        assert_eq!(of_kind.len(), PER_KIND, "{name}: {} canaries", kind.name());
        assert_eq!(
            of_kind.iter().filter(|c| c.update.is_some()).count(),
            1,
            "{name}: one superseded {}",
            kind.name()
        );
        // Spread: one in the first segment, one in the last two.
        let segments: Vec<usize> = of_kind
            .iter()
            .map(|c| case.segment_of(c.planted.message))
            .collect();
        assert!(segments.contains(&1), "{name}: no early {}", kind.name());
        assert!(
            segments.iter().any(|&s| s >= ROUNDS - 1),
            "{name}: no late {}",
            kind.name()
        );
    }
    for canary in &case.canaries {
        if let Some(update) = &canary.update {
            assert!(
                case.segment_of(update.message) > case.segment_of(canary.planted.message),
                "{name}: an update in the segment of what it updates"
            );
            assert!(
                update.message < case.segment_ends[ROUNDS - 2],
                "{name}: an update must be folded by round {ROUNDS}"
            );
        }
    }

    // Statements are user messages at junctions a provider accepts, or
    // (tool-found values) tool results: the person asks, the agent calls,
    // the result carries the value.
    for (_, statement) in all_statements(case) {
        let i = statement.message;
        if m[i].is_result_carrier() {
            assert_eq!(m[i - 1].role, Role::Assistant, "{name}: no call before {i}");
            assert_eq!(
                m[i - 1].tool_calls().count(),
                1,
                "{name}: one call before {i}"
            );
            assert!(m[i - 2].opens_turn(), "{name}: no request before {i}");
            assert!(
                !m[i - 3].opens_turn(),
                "{name}: two user messages before {i}"
            );
            assert_eq!(
                m[i + 1].role,
                Role::Assistant,
                "{name}: no answer after {i}"
            );
            continue;
        }
        assert!(
            m[i].opens_turn(),
            "{name}: statement {i} is not a user turn"
        );
        assert!(
            !m[i - 1].opens_turn(),
            "{name}: two user messages before {i}"
        );
        assert_eq!(
            m[i + 1].role,
            Role::Assistant,
            "{name}: no answer after {i}"
        );
    }

    // Unguessable: each value occurs in exactly its own statement — never
    // before it is planted, never after (so a superseded value is only in
    // the original statement; the update does not quote it).
    let mut values = HashSet::new();
    for (_, statement) in all_statements(case) {
        assert!(
            values.insert(statement.value.clone()),
            "{name}: value twice"
        );
        assert_eq!(
            case.occurrences(&statement.value),
            vec![statement.message],
            "{name}: `{}` occurs outside its statement",
            statement.value
        );
    }

    // Near-duplicates: same kind, never superseded, distinct values, and
    // statements that really look alike (same words once values are out).
    assert_eq!(
        case.near_duplicates.len(),
        2,
        "{name}: two near-duplicate pairs"
    );
    for &(a, b) in &case.near_duplicates {
        let (a, b) = (&case.canaries[a], &case.canaries[b]);
        assert_eq!(a.kind, b.kind);
        assert!(a.update.is_none() && b.update.is_none());
        assert_ne!(a.planted.value, b.planted.value);
        // The line that says it: a message may hold several statements.
        let line = |c: &Canary| -> String {
            message_text(&m[c.planted.message])
                .lines()
                .find(|l| contains_value(l, &c.planted.value))
                .expect("the value is in its statement")
                .to_owned()
        };
        // Words are letters and digits: a subject inside a dotted name
        // (`lake.{s}.table`) is a word of its own.
        let words = |c: &Canary| -> HashSet<String> {
            line(c)
                .replace(&c.planted.value, "")
                .split(|ch: char| !ch.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect()
        };
        let (wa, wb) = (words(a), words(b));
        let shared = wa.intersection(&wb).count();
        assert!(
            2 * shared >= wa.len().min(wb.len()),
            "{name}: `{}` and `{}` do not look alike",
            line(a),
            line(b)
        );
    }

    // Canaries are a small share of the text: a twentieth, a tenth where
    // every turn is short or the person's own lines are much of the text.
    let (canary, total) = case.canary_tokens();
    let short = [
        "terse",
        "untuned",
        "retired",
        "multi",
        "labelled",
        "emphasis",
        "held-multi",
        "held-labelled",
        "held-emphasis",
        "unseen-multi",
        "unseen-labelled",
        "unseen-emphasis",
        "blind-multi",
        "blind-labelled",
        "blind-emphasis",
    ]
    .iter()
    .any(|family| name.starts_with(&format!("{family}-")));
    let share = if short { 10 } else { 20 };
    assert!(
        canary * share <= total,
        "{name}: canaries are {canary} of {total} tokens (over 1/{share})"
    );
}

/// A run of 10 rounds cuts the very messages the default run cuts in
/// [`ROUNDS`]: every other cut is a default one, so rounds `2r - 1` and `2r`
/// together are segment `r`, and each cut in between is a turn boundary
/// inside its segment (a person opens a turn, no call in flight) with a
/// valid conversation before it.
#[test]
fn ten_rounds_cut_the_same_messages_at_turn_boundaries() {
    let mut cases = chat_cases(0..2);
    cases.extend(talk_cases(0..1));
    cases.extend(terse_cases(0..1));
    cases.extend(untuned_cases(0..1));
    cases.extend(retired_cases(0..1));
    cases.extend(multi_cases(0..1));
    cases.extend(found_cases(0..1));
    cases.push(corpus_case("cc-opus-c", 0));
    for case in &cases {
        let name = &case.name;
        assert_eq!(
            case.round_ends(ROUNDS),
            case.segment_ends,
            "{name}: the default run's cut changed"
        );
        let ends = case.round_ends(10);
        assert_eq!(ends.len(), 10, "{name}");
        assert_eq!(ends[9], case.messages.len(), "{name}: the last round");
        let boundaries = turn_boundaries(&case.messages);
        let mut previous = 0;
        for (k, &end) in ends.iter().enumerate() {
            let round = k + 1;
            let segment = round.div_ceil(2);
            assert!(end > previous, "{name}: round {round} is empty");
            if round % 2 == 0 {
                assert_eq!(
                    end,
                    case.segment_ends[segment - 1],
                    "{name}: round {round} does not end where segment {segment} does"
                );
            } else {
                assert!(
                    end < case.segment_ends[segment - 1],
                    "{name}: round {round} is not inside segment {segment}"
                );
                assert!(
                    boundaries.contains(&end) && case.messages[end].opens_turn(),
                    "{name}: round {round} ends at {end}, not at a turn boundary"
                );
            }
            let open = check_pairs(&case.messages[..end]).unwrap_or_else(|p| panic!("{name}: {p}"));
            assert!(
                open.is_empty(),
                "{name}: calls in flight after round {round}"
            );
            previous = end;
        }
        // Each segment is split at the turn boundary nearest its middle in
        // tokens: halves where turns are short (the generated families);
        // where a person speaks rarely (the recorded sessions), as near as
        // their turns allow.
        let tokens: Vec<u64> = estimate_messages(&case.messages)
            .into_iter()
            .map(u64::from)
            .collect();
        let sum = |a: usize, b: usize| tokens[a..b].iter().sum::<u64>();
        let generated = !CORPUS_SESSIONS.contains(&name.as_str());
        for s in 0..ROUNDS {
            let start = if s == 0 { 0 } else { case.segment_ends[s - 1] };
            let (middle, stop) = (ends[2 * s], case.segment_ends[s]);
            let off = |p: usize| (2 * sum(start, p)).abs_diff(sum(start, stop));
            let nearer: Vec<usize> = boundaries
                .iter()
                .copied()
                .filter(|&p| p > start && p < stop && off(p) < off(middle))
                .collect();
            assert!(
                nearer.is_empty(),
                "{name}: segment {} is cut at {middle}, the boundaries {nearer:?} are nearer its middle",
                s + 1
            );
            let (first, second) = (sum(start, middle), sum(middle, stop));
            assert!(
                !generated || (first * 4 >= second && second * 4 >= first),
                "{name}: segment {} split {first}/{second} tokens",
                s + 1
            );
        }
    }
}

/// At a fixed token budget every round gets the same budget: a fifth of the
/// budget percent of the whole conversation, in all 10 rounds; and the
/// rounds see the same conversations as the default run's (the even ones
/// the same canaries planted).
#[test]
fn fixed_budget_rounds_all_get_the_same_budget() {
    let cases = chat_cases(0..1);
    let case = &cases[0];
    let whole: u64 = estimate_messages(&case.messages)
        .iter()
        .map(|&t| u64::from(t))
        .sum();
    let expected = u32::try_from(whole * 20 / 100 / ROUNDS as u64).unwrap();
    assert_eq!(fixed_budget(case, 20), expected);

    let fixed = run_with_schedule(embedded_middleware(), &cases, 20, Schedule::fixed(10));
    println!("{}", fixed.table());
    assert!(fixed.problems.is_empty(), "{:#?}", fixed.problems);
    assert_eq!(fixed.rounds.len(), 10);
    assert_eq!(fixed.rounds_compacted(), (10, 10));
    for (r, figures) in fixed.rounds.iter().enumerate() {
        assert_eq!(figures.budget_capped, 0, "round {}: budget capped", r + 1);
        assert_eq!(
            figures.summary_budget,
            u64::from(expected),
            "round {}: another budget",
            r + 1
        );
    }

    // The default run's budgets grow with the folded text instead, and its
    // round r sees what round 2r of the 10 sees.
    let default = run(&cases, 20);
    let budgets: Vec<u64> = default.rounds.iter().map(|f| f.summary_budget).collect();
    assert!(
        budgets.windows(2).all(|w| w[0] < w[1]),
        "the default budgets do not grow: {budgets:?}"
    );
    for r in 1..=ROUNDS {
        assert_eq!(
            fixed.rounds[2 * r - 1].all().planted,
            default.rounds[r - 1].all().planted,
            "round {} of 10 and {r} of {ROUNDS} plant different canaries",
            2 * r
        );
    }
}

/// In the corpus cases the values are absent from the recorded sessions
/// themselves, not just from what was generated around them.
#[test]
fn corpus_values_are_not_in_the_sessions() {
    for case in corpus_cases(0) {
        assert!(CORPUS_SESSIONS.contains(&case.name.as_str()));
        let text: String = session(&case.name).iter().map(message_text).collect();
        for (_, statement) in all_statements(&case) {
            assert!(
                !contains_value(&text, &statement.value),
                "{}: `{}` is in the recorded session",
                case.name,
                statement.value
            );
        }
    }
}

/// The untuned and held-back families: sound like the others, and the
/// heavy filler they promise — a few routine lines said word for word at
/// least four times each, spread over the session, and every decoy present,
/// with its numbers and no canary value.
#[test]
fn filler_cases_are_sound() {
    for (bank, cases) in [
        (&UNTUNED, untuned_cases(0..4)),
        (&RETIRED, retired_cases(0..4)),
    ] {
        for case in &cases {
            check_sound(case);
            check_filler(case, bank);
        }
    }
}

fn check_filler(case: &Case, bank: &Bank) {
    let name = &case.name;
    let user_lines: Vec<(usize, String)> = case
        .messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User)
        .map(|(i, m)| (i, m.joined_text()))
        .collect();

    // Routine lines, word for word, at least four times each, three of them
    // at least, three of those over at least three segments.
    let mut said: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, text) in &user_lines {
        if let Some(line) = bank.routine.iter().find(|l| **l == text.as_str()) {
            said.entry(*line).or_default().push(*i);
        }
    }
    let repeated: Vec<(&str, &Vec<usize>)> = said
        .iter()
        .filter(|(_, at)| at.len() >= 4)
        .map(|(l, at)| (*l, at))
        .collect();
    assert!(
        repeated.len() >= 3.min(bank.routine.len()),
        "{name}: {} routine lines said four times or more",
        repeated.len()
    );
    // (The generator places each line at random: now and then one of them
    // lands in two segments only, in a bank of any author.)
    let spread: Vec<&str> = (repeated.iter())
        .filter(|(_, at)| {
            at.iter()
                .map(|&i| case.segment_of(i))
                .collect::<HashSet<_>>()
                .len()
                >= 3
        })
        .map(|(line, _)| *line)
        .collect();
    assert!(
        spread.len() >= 3.min(repeated.len()),
        "{name}: only {spread:?} of the repeated routine lines are said in three segments or more"
    );

    // Every decoy, its numbers filled in, and no canary value in any.
    let values: Vec<&str> = all_statements(case)
        .map(|(_, s)| s.value.as_str())
        .collect();
    for template in bank.decoys {
        let said: Vec<&String> = user_lines
            .iter()
            .map(|(_, t)| t)
            .filter(|t| is_decoy(template, t))
            .collect();
        assert!(!said.is_empty(), "{name}: decoy `{template}` never said");
        for text in said {
            if template.contains("{n}") {
                assert!(
                    text.chars().any(|c| c.is_ascii_digit()),
                    "{name}: `{text}` carries no number"
                );
            }
            for value in &values {
                assert!(
                    !contains_value(text, value),
                    "{name}: decoy `{text}` carries the canary value `{value}`"
                );
            }
        }
    }
}

/// Whether `text` is `template` with each `{n}` a number.
fn is_decoy(template: &str, text: &str) -> bool {
    let mut pieces = template.split("{n}");
    let Some(rest) = text.strip_prefix(pieces.next().unwrap_or("")) else {
        return false;
    };
    let mut rest = rest;
    for piece in pieces {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return false;
        }
        match rest[digits..].strip_prefix(piece) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

/// Every fixed text of a bank that a person or the assistant can say.
fn bank_texts(bank: &Bank) -> Vec<&'static str> {
    let mut texts = Vec::new();
    for (templates, twins) in bank.templates.iter().zip(&bank.twins) {
        for t in *templates {
            texts.push(t.text);
            texts.extend(t.updates);
        }
        for twin in *twins {
            texts.push(twin.text);
            texts.extend(twin.subjects);
        }
    }
    texts.extend(bank.lead_ins);
    texts.extend(bank.trailers);
    texts.extend(bank.acks);
    texts.extend(bank.routine);
    texts.extend(bank.decoys);
    texts
}

/// The untuned bank is as broad as its doc says, and its fixed text holds
/// nothing that looks like a value: no digit, no path (values come only from
/// the shapes and the decoys' `{n}`).
#[test]
fn the_untuned_bank_is_broad_and_holds_no_values() {
    for kind in CanaryKind::ALL {
        let k = kind as usize;
        assert!(
            UNTUNED.templates[k].len() >= 6,
            "{}: templates",
            kind.name()
        );
        assert!(UNTUNED.twins[k].len() >= 2, "{}: twins", kind.name());
        for twin in UNTUNED.twins[k] {
            assert!(twin.subjects.len() >= 4, "`{}`: subjects", twin.text);
        }
        for t in UNTUNED.templates[k] {
            for text in std::iter::once(t.text).chain(t.updates) {
                assert!(text.contains("{v}"), "`{text}` has no value");
            }
        }
    }
    assert!(UNTUNED.routine.len() >= 15 && UNTUNED.decoys.len() >= 15);
    for decoy in UNTUNED.decoys {
        assert!(decoy.contains("{n}"), "decoy `{decoy}` has no number");
    }
    for text in bank_texts(&UNTUNED) {
        assert!(
            !text.chars().any(|c| c.is_ascii_digit()) && !text.contains('/'),
            "`{text}`: a digit or a path in fixed text would look like a value"
        );
    }
    // What the generator needs of any bank, the held-back ones included.
    for bank in ALL_BANKS {
        for kind in CanaryKind::ALL {
            let k = kind as usize;
            assert!(bank.templates[k].len() >= PER_KIND, "{}", bank.name);
            assert!(!bank.twins[k].is_empty(), "{}", bank.name);
            for twin in bank.twins[k] {
                assert!(twin.subjects.len() >= 2, "{}: `{}`", bank.name, twin.text);
            }
        }
        assert!(!bank.lead_ins.is_empty() && !bank.trailers.is_empty() && !bank.acks.is_empty());
    }
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Every bank there is.
const ALL_BANKS: [&Bank; 21] = [
    &UNTUNED,
    &RETIRED,
    &MULTI,
    &FOUND,
    &LABELLED,
    &EMPHASIS,
    &HELD_MULTI,
    &HELD_FOUND,
    &HELD_LABELLED,
    &HELD_EMPHASIS,
    &UNSEEN_MULTI,
    &UNSEEN_FOUND,
    &UNSEEN_LABELLED,
    &UNSEEN_EMPHASIS,
    &FRESH_FOUND,
    &BLIND_MULTI,
    &BLIND_FOUND,
    &BLIND_LABELLED,
    &BLIND_EMPHASIS,
    &LATE_FOUND,
    &condense_tests::survival::TUNED,
];

/// The banks nobody tuning the summarizer reads, and those that were (the
/// retired held-back banks): none of their sentences may be in the
/// summarizer.
const UNREAD_BANKS: [&Bank; 16] = [
    &UNTUNED,
    &RETIRED,
    &HELD_MULTI,
    &HELD_FOUND,
    &HELD_LABELLED,
    &HELD_EMPHASIS,
    &UNSEEN_MULTI,
    &UNSEEN_FOUND,
    &UNSEEN_LABELLED,
    &UNSEEN_EMPHASIS,
    &FRESH_FOUND,
    &BLIND_MULTI,
    &BLIND_FOUND,
    &BLIND_LABELLED,
    &BLIND_EMPHASIS,
    &LATE_FOUND,
];

/// The held-back banks are written once and never edited: their figures are
/// the ones nothing was tuned to, and an edit (even a fix) made after anyone
/// looked at how the summarizer does on them would end that. The retired
/// bank (the held-back one until 2026-12-05) stays as it was too: the
/// figures quoted for it are of that text.
#[test]
fn the_held_back_banks_are_pinned() {
    let files = [
        (
            "retired.rs",
            include_str!("../src/survival/retired.rs"),
            RETIRED_FNV1A,
        ),
        (
            "held/multi.rs",
            include_str!("../src/survival/held/multi.rs"),
            HELD_MULTI_FNV1A,
        ),
        (
            "held/found.rs",
            include_str!("../src/survival/held/found.rs"),
            HELD_FOUND_FNV1A,
        ),
        (
            "held/labelled.rs",
            include_str!("../src/survival/held/labelled.rs"),
            HELD_LABELLED_FNV1A,
        ),
        (
            "held/emphasis.rs",
            include_str!("../src/survival/held/emphasis.rs"),
            HELD_EMPHASIS_FNV1A,
        ),
        (
            "unseen/multi.rs",
            include_str!("../src/survival/unseen/multi.rs"),
            UNSEEN_MULTI_FNV1A,
        ),
        (
            "unseen/found.rs",
            include_str!("../src/survival/unseen/found.rs"),
            UNSEEN_FOUND_FNV1A,
        ),
        (
            "unseen/labelled.rs",
            include_str!("../src/survival/unseen/labelled.rs"),
            UNSEEN_LABELLED_FNV1A,
        ),
        (
            "unseen/emphasis.rs",
            include_str!("../src/survival/unseen/emphasis.rs"),
            UNSEEN_EMPHASIS_FNV1A,
        ),
        (
            "fresh/found.rs",
            include_str!("../src/survival/fresh/found.rs"),
            FRESH_FOUND_FNV1A,
        ),
        (
            "blind/multi.rs",
            include_str!("../src/survival/blind/multi.rs"),
            BLIND_MULTI_FNV1A,
        ),
        (
            "blind/found.rs",
            include_str!("../src/survival/blind/found.rs"),
            BLIND_FOUND_FNV1A,
        ),
        (
            "blind/labelled.rs",
            include_str!("../src/survival/blind/labelled.rs"),
            BLIND_LABELLED_FNV1A,
        ),
        (
            "blind/emphasis.rs",
            include_str!("../src/survival/blind/emphasis.rs"),
            BLIND_EMPHASIS_FNV1A,
        ),
        (
            "late/found.rs",
            include_str!("../src/survival/late/found.rs"),
            LATE_FOUND_FNV1A,
        ),
    ];
    for (path, text, pinned) in files {
        assert_eq!(
            fnv1a(text.as_bytes()),
            pinned,
            "tests/src/survival/{path} changed: a held-back bank must not be edited. \
             Restore it, and write a new family with a bank of its own instead."
        );
    }
}

/// FNV-1a of `tests/src/survival/retired.rs`, the held-back bank written
/// 2026-12-03 as `held_back.rs` (13,272 bytes), retired 2026-12-05.
const RETIRED_FNV1A: u64 = 0xbb53_6a32_57b6_d2da;
/// FNV-1a of the held-back banks as they were written on 2026-12-05
/// (9,702, 11,403, 8,786 and 8,313 bytes).
const HELD_MULTI_FNV1A: u64 = 0x9ff8_67bb_e599_7845;
const HELD_FOUND_FNV1A: u64 = 0x22e6_0212_4d2e_4416;
const HELD_LABELLED_FNV1A: u64 = 0x55ef_d27e_aec9_174f;
const HELD_EMPHASIS_FNV1A: u64 = 0x5612_9440_b130_8f9f;
/// FNV-1a of the held-back banks written on the evening of 2026-12-05,
/// after the first ones were consulted and retired (10,407, 19,188, 10,383
/// and 9,814 bytes).
const UNSEEN_MULTI_FNV1A: u64 = 0x4fc2_576b_e03f_1200;
const UNSEEN_FOUND_FNV1A: u64 = 0x6003_102b_f9ab_e1b2;
const UNSEEN_LABELLED_FNV1A: u64 = 0x00b1_d45e_e576_6224;
const UNSEEN_EMPHASIS_FNV1A: u64 = 0xe39b_55d0_a2bb_af76;
/// FNV-1a of the third held-back found bank, written that night after the
/// second was spent (19,531 bytes).
const FRESH_FOUND_FNV1A: u64 = 0x5795_4a93_a836_09f8;
/// FNV-1a of the held-back banks written later that night, after the
/// second ones and the third found one were spent, as rustfmt left them
/// (13,111, 20,504, 11,628 and 12,551 bytes).
const BLIND_MULTI_FNV1A: u64 = 0xf963_9507_8100_1efe;
const BLIND_FOUND_FNV1A: u64 = 0x2f6e_d0ea_4742_6129;
const BLIND_LABELLED_FNV1A: u64 = 0x5049_e9a4_0814_7362;
const BLIND_EMPHASIS_FNV1A: u64 = 0x0058_fa4b_d786_7a1a;
/// FNV-1a of the fifth held-back found bank, written after the blind one
/// was spent (26,187 bytes).
const LATE_FOUND_FNV1A: u64 = 0xcccc_5d18_014b_9064;

/// No sentence of the untuned or held-back bank is in the summarizers'
/// sources (their unit tests and comments included): each fixed fragment of
/// 20 characters or more between placeholders, compared without regard to
/// case or line breaks.
#[test]
fn bank_sentences_are_not_in_the_summarizers() {
    let normalise = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let mut fragments = Vec::new();
    for bank in UNREAD_BANKS {
        for text in bank_texts(bank) {
            for piece in text.split(['{', '}']) {
                let piece = normalise(piece);
                if piece.chars().count() >= 20 {
                    fragments.push((bank.name, piece));
                }
            }
        }
    }
    assert!(fragments.len() > 100, "{} fragments", fragments.len());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("guest");
    let mut files = 0;
    for dir in ["summarizer-heuristic/src", "summarizer-llm/src"] {
        let mut stack = vec![root.join(dir)];
        assert!(stack[0].is_dir(), "{} is missing", stack[0].display());
        while let Some(path) = stack.pop() {
            if path.is_dir() {
                for entry in std::fs::read_dir(&path).unwrap() {
                    stack.push(entry.unwrap().path());
                }
                continue;
            }
            let Ok(source) = std::fs::read_to_string(&path) else {
                continue;
            };
            files += 1;
            let source = normalise(&source);
            for (bank, fragment) in &fragments {
                assert!(
                    !source.contains(fragment.as_str()),
                    "{}: holds `{fragment}` of the {bank} bank; a benchmark sentence in the \
                     summarizer (its tests or comments included) tunes it to the benchmark",
                    path.display()
                );
            }
        }
    }
    assert!(files > 0, "no summarizer source read");
}

/// Lowercase words as the summarizer splits them: letters, digits, `_`,
/// `-` and `'` inside words.
fn cue_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || "_-'".contains(c)))
        .map(|w| w.trim_matches(['-', '\'']).to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The summarizer's cue-table entries found in `text`, as `TABLE:entry`:
/// whole words or phrases of words, substrings for the unspaced languages.
fn cues_in(text: &str) -> Vec<String> {
    let words = cue_words(text);
    let lower = text.to_lowercase();
    let mut found = Vec::new();
    for (table, entries) in condense_summarizer_heuristic::cue_tables() {
        for entry in entries {
            let hit = if table.ends_with("UNSPACED") {
                lower.contains(entry)
            } else {
                let phrase: Vec<&str> = entry.split(' ').collect();
                words
                    .windows(phrase.len())
                    .any(|w| w.iter().zip(&phrase).all(|(a, b)| a == b))
            };
            if hit {
                found.push(format!("{table}:{entry}"));
            }
        }
    }
    found
}

/// The untuned bank is not written in the summarizer's cue phrases: no
/// planted sentence holds a cue-table entry of more than one word (a
/// phrasing), and the first update of every template, which restates its
/// subject with the new value, holds no correction cue at all — the
/// summarizer has to see the update in what the two statements share. A
/// single cue word ("never", "only", "next") is the language itself and
/// stays allowed; the share of sentences holding one is printed, for each
/// bank, so a drift towards the tables shows.
#[test]
fn the_untuned_bank_is_not_written_in_cue_phrases() {
    let corrections: Vec<&str> = condense_summarizer_heuristic::cue_tables()
        .into_iter()
        .find(|(table, _)| *table == "CORRECTION_CUES")
        .map(|(_, entries)| entries.to_vec())
        .expect("a table of correction cues");
    assert!(corrections.contains(&"instead"));
    // The matcher finds what it should.
    assert_eq!(
        cues_in("Do NOT ship it, instead wait."),
        [
            "RULE_CUES:do not",
            "RULE_CUES:not",
            "CORRECTION_CUES:instead"
        ]
    );

    let mut phrases = Vec::new();
    for (templates, twins) in UNTUNED.templates.iter().zip(&UNTUNED.twins) {
        for t in *templates {
            for text in std::iter::once(t.text).chain(t.updates) {
                phrases.extend(
                    cues_in(text)
                        .into_iter()
                        .filter(|c| c.contains(' '))
                        .map(|c| format!("`{text}`: {c}")),
                );
            }
            let first = t.updates[0];
            let cue = cue_words(first)
                .into_iter()
                .find(|w| corrections.contains(&w.as_str()));
            assert!(
                cue.is_none(),
                "`{first}` (the first update of `{}`) holds the correction cue {cue:?}",
                t.text
            );
        }
        for twin in *twins {
            phrases.extend(
                cues_in(twin.text)
                    .into_iter()
                    .filter(|c| c.contains(' '))
                    .map(|c| format!("`{}`: {c}", twin.text)),
            );
        }
    }
    assert!(
        phrases.is_empty(),
        "cue phrases planted:\n{}",
        phrases.join("\n")
    );

    for bank in [&UNTUNED, &RETIRED] {
        let planted: Vec<&str> = bank
            .templates
            .iter()
            .flat_map(|ts| {
                ts.iter()
                    .flat_map(|t| std::iter::once(t.text).chain(t.updates))
            })
            .chain(bank.twins.iter().flat_map(|ts| ts.iter().map(|t| t.text)))
            .collect();
        let with_cue = planted.iter().filter(|t| !cues_in(t).is_empty()).count();
        println!(
            "{}: {with_cue} of {} planted sentences hold a single cue word",
            bank.name,
            planted.len()
        );
    }
}

fn print(label: &str, report: &Report) {
    println!("{label}\n{}{}", report.table(), report.summary_line());
    match report.meets(0.9, ROUNDS) {
        Ok(()) => println!("meets 90% at round {ROUNDS}"),
        Err(e) => println!("{e}"),
    }
    for lost in report.lost.iter().filter(|l| l.round == ROUNDS).take(10) {
        println!(
            "  lost at round {}: {} {} `{}` (segment {}): {}",
            lost.round,
            lost.case,
            lost.kind.name(),
            lost.value,
            lost.segment,
            lost.statement
        );
    }
    for stale in report.stale.iter().filter(|l| l.round == ROUNDS).take(20) {
        println!(
            "  stale at round {}: {} {} `{}`: {}",
            stale.round,
            stale.case,
            stale.kind.name(),
            stale.value,
            stale.statement
        );
    }
}

/// The small run: every round compacts where planned, every kind is planted
/// and folded by the last round, and the figures add up.
#[test]
fn small_run_through_the_host() {
    let cases = small_cases();
    let report = run(&cases, 20);
    print(
        "small run (2 chat seeds with tools, 2 without, cc-opus-c), budget 20%",
        &report,
    );

    assert!(report.problems.is_empty(), "{:#?}", report.problems);
    assert_eq!(
        report.rounds_compacted(),
        (cases.len() * ROUNDS, cases.len() * ROUNDS)
    );
    let last = &report.rounds[ROUNDS - 1];
    for kind in CanaryKind::ALL {
        let tally = last.kinds[kind as usize];
        assert_eq!(tally.planted, PER_KIND * cases.len(), "{}", kind.name());
        assert!(
            tally.folded > 0,
            "no {} folded by round {ROUNDS}",
            kind.name()
        );
        assert!(tally.survived <= tally.folded && tally.seen >= tally.survived);
    }
    for (r, figures) in report.rounds.iter().enumerate() {
        let all = figures.all();
        assert_eq!(
            all,
            figures
                .by_segment
                .iter()
                .fold(Tally::default(), |mut t, s| {
                    t.planted += s.planted;
                    t.folded += s.folded;
                    t.survived += s.survived;
                    t.seen += s.seen;
                    t
                }),
            "round {}: kinds and segments disagree",
            r + 1
        );
        // Each round folds everything up to its last turn or so.
        assert!(
            all.folded * 10 >= all.planted * 8,
            "round {}: only {} of {} planted canaries folded",
            r + 1,
            all.folded,
            all.planted
        );
    }
    assert!(
        report.stale_checked() > 0,
        "no superseded canary was checked"
    );
    assert!(
        !report.near_duplicates_kept().is_nan(),
        "no near-duplicate pair folded"
    );
}

/// The untuned and held-back families through the host: every round
/// compacts where planned, every kind is planted and folded, superseded
/// canaries and near-duplicate pairs are checked. Their figures are printed,
/// not held to a target here (the held-back ones are reported apart).
#[test]
fn filler_families_run_through_the_host() {
    for (label, cases) in [
        ("untuned", untuned_cases(0..2)),
        ("retired", retired_cases(0..2)),
    ] {
        let reports: Vec<Report> = [10, 20, 30].map(|b| run(&cases, b)).into();
        for report in &reports {
            assert!(
                report.problems.is_empty(),
                "{label}: {:#?}",
                report.problems
            );
            assert_eq!(
                report.rounds_compacted(),
                (cases.len() * ROUNDS, cases.len() * ROUNDS)
            );
            let last = &report.rounds[ROUNDS - 1];
            for kind in CanaryKind::ALL {
                let tally = last.kinds[kind as usize];
                assert_eq!(tally.planted, PER_KIND * cases.len(), "{}", kind.name());
                assert!(tally.folded > 0, "{label}: no {} folded", kind.name());
            }
            assert!(report.stale_checked() > 0, "{label}: no stale check");
            assert!(
                report.near_duplicates_at(ROUNDS).1 > 0,
                "{label}: no pair folded"
            );
        }
        print(&format!("{label}, budget 20%"), &reports[1]);
        println!("{label}:\n{}", budget_table(&reports, ROUNDS));
    }
}

/// What issue #11 holds the summarizer to, on the small cases (the full set
/// is `cargo bench -p condense-tests --bench survival`): at a summary budget
/// of 20% of the folded text every kind of canary survives five compactions
/// at least 90% of the time, at 30% all of them, no stale value is carried
/// once its update is folded, and both statements of every near-duplicate
/// pair stay.
#[test]
fn what_the_user_said_survives_five_compactions() {
    let cases = small_cases();
    for (budget, min_survival) in [(20, 0.9), (30, 1.0)] {
        let report = run(&cases, budget);
        print(&format!("targets, budget {budget}%"), &report);
        if let Err(e) = report.meets(min_survival, ROUNDS) {
            panic!("budget {budget}%: {e}");
        }
        assert_eq!(
            report.stale_carried(),
            0,
            "budget {budget}%: stale values carried: {:#?}",
            report.stale
        );
        assert_eq!(
            report.near_duplicates_kept(),
            1.0,
            "budget {budget}%: near-duplicates lost"
        );
    }
}

/// The control: a summarizer that keeps no value at all (it counts messages)
/// must score zero on folded canaries — nothing else brings a folded value to
/// the model — while every canary still verbatim is seen.
#[test]
fn a_summarizer_that_keeps_nothing_scores_zero() {
    let mut cases = chat_cases(0..1);
    cases.extend(untuned_cases(0..1));
    let report = run_with(custom_summarizer_middleware(), &cases, 20);
    print("control: the counting summarizer, budget 20%", &report);
    assert!(report.problems.is_empty(), "{:#?}", report.problems);
    for figures in &report.rounds {
        let all = figures.all();
        assert!(all.folded > 0);
        assert_eq!(all.survived, 0, "a folded value reached the model");
        assert_eq!(
            all.seen,
            all.planted - all.folded,
            "a verbatim canary was not seen"
        );
        assert_eq!(figures.stale_carried, 0);
    }
}

/// The summary shapes, both halves: sound like the others, heavy filler
/// where they are filler sessions, and each of its shape — statements two
/// or more to a message, values in tool results, the templates' own
/// replies after their statements, no marker of the bank left in a message.
#[test]
fn shape_cases_are_sound() {
    let seeds = 0..3;
    for (bank, cases) in [
        (&MULTI, multi_cases(seeds.clone())),
        (&HELD_MULTI, held_multi_cases(seeds.clone())),
        (&LABELLED, labelled_cases(seeds.clone())),
        (&HELD_LABELLED, held_labelled_cases(seeds.clone())),
        (&EMPHASIS, emphasis_cases(seeds.clone())),
        (&HELD_EMPHASIS, held_emphasis_cases(seeds.clone())),
        (&UNSEEN_MULTI, unseen_multi_cases(seeds.clone())),
        (&UNSEEN_LABELLED, unseen_labelled_cases(seeds.clone())),
        (&UNSEEN_EMPHASIS, unseen_emphasis_cases(seeds.clone())),
        (&BLIND_MULTI, blind_multi_cases(seeds.clone())),
        (&BLIND_LABELLED, blind_labelled_cases(seeds.clone())),
        (&BLIND_EMPHASIS, blind_emphasis_cases(seeds.clone())),
    ] {
        for case in &cases {
            check_sound(case);
            check_filler(case, bank);
        }
    }

    let mut shape_cases: Vec<Case> = Vec::new();
    for shape in SHAPES {
        shape_cases.extend((shape.tuned)(seeds.clone()));
        shape_cases.extend((shape.held_back)(seeds.clone()));
        for retired in shape.retired {
            shape_cases.extend(retired(seeds.clone()));
        }
    }
    for case in &shape_cases {
        for (i, m) in case.messages.iter().enumerate() {
            let text = message_text(m);
            assert!(
                !text.contains(REPLY.trim_start()),
                "{}: a reply marker left in message {i}",
                case.name
            );
        }
    }

    // Multi-statement messages: nine statements in ten or more share their
    // message with another, at most five to a message.
    let multi = shape_cases.iter().filter(|c| c.name.contains("multi-"));
    for case in multi {
        let mut per_message: HashMap<usize, usize> = HashMap::new();
        for (_, s) in all_statements(case) {
            *per_message.entry(s.message).or_default() += 1;
        }
        let all = all_statements(case).count();
        let shared = all_statements(case)
            .filter(|(_, s)| per_message[&s.message] >= 2)
            .count();
        assert!(
            shared * 10 >= all * 9,
            "{}: only {shared} of {all} statements share a message",
            case.name
        );
        assert!(per_message.values().all(|&n| n <= 5), "{}", case.name);
    }

    // Tool-found values: every statement is a tool result.
    let found = shape_cases.iter().filter(|c| c.name.contains("found-"));
    for case in found {
        check_sound(case);
        for (_, s) in all_statements(case) {
            assert!(
                case.messages[s.message].is_result_carrier(),
                "{}: `{}` is not found by a tool",
                case.name,
                s.value
            );
        }
    }

    // Emphasis: the statements with a reply of their own get it.
    for (bank, cases) in [
        (&EMPHASIS, emphasis_cases(seeds.clone())),
        (&HELD_EMPHASIS, held_emphasis_cases(seeds.clone())),
        (&UNSEEN_EMPHASIS, unseen_emphasis_cases(seeds.clone())),
        (&BLIND_EMPHASIS, blind_emphasis_cases(seeds.clone())),
    ] {
        let replies: Vec<&str> = bank
            .templates
            .iter()
            .flat_map(|ts| ts.iter())
            .flat_map(|t| std::iter::once(t.text).chain(t.updates))
            .filter_map(|t| t.split_once(REPLY).map(|(_, r)| r))
            .collect();
        assert!(replies.len() >= 4, "{}: replies", bank.name);
        let answered = cases
            .iter()
            .flat_map(|case| all_statements(case).map(move |(_, s)| (case, s)))
            .filter(|(case, s)| {
                replies.contains(&case.messages[s.message + 1].joined_text().as_str())
            })
            .count();
        assert!(
            answered > 0,
            "{}: no statement got its own reply",
            bank.name
        );
    }
}

/// Each summary shape through the host, two cases of each half at 20%:
/// every round compacts where planned, every kind is planted and folded,
/// superseded canaries and look-alike pairs are checked. No floor yet (the
/// summarizer work on these shapes sets them); the tuned figures are
/// printed with what was lost, the held-back ones as figures only.
/// A value the agent learned from a tool (a setting, a version, an id, a
/// host, a failing test's name) and used later survives its folds through
/// the host: the tool-found shape at a summary budget of 20%, its tuned
/// half and its held-back half (two sessions each; the summarizer kept
/// 4% and 8% of them before it read what short outputs found).
#[test]
fn a_value_a_tool_returned_survives_its_folds() {
    let shape = SHAPES
        .iter()
        .find(|s| s.name == "found")
        .expect("the found shape");
    for (label, cases, floor) in [
        ("found", (shape.tuned)(0..2), 0.95),
        ("HELD BACK found", (shape.held_back)(0..2), 0.85),
    ] {
        let report = run(&cases, 20);
        let last = &report.rounds[ROUNDS - 1];
        let (survived, folded) = (CanaryKind::ALL.iter())
            .map(|&kind| last.kinds[kind as usize])
            .fold((0, 0), |(s, f), t| (s + t.survived, f + t.folded));
        println!("{label}: {survived}/{folded} survived at round {ROUNDS}");
        assert!(
            survived as f64 >= floor * folded as f64,
            "{label}: {survived} of {folded} tool-found values survived, under {floor}"
        );
    }
}

#[test]
fn shapes_run_through_the_host() {
    for shape in SHAPES {
        for (held_back, cases) in [
            (false, (shape.tuned)(0..2)),
            (true, (shape.held_back)(0..2)),
        ] {
            let label = if held_back {
                format!("HELD BACK {}", shape.name)
            } else {
                shape.name.to_owned()
            };
            let report = run(&cases, 20);
            assert!(
                report.problems.is_empty(),
                "{label}: {:#?}",
                report.problems
            );
            assert_eq!(
                report.rounds_compacted(),
                (cases.len() * ROUNDS, cases.len() * ROUNDS),
                "{label}"
            );
            let last = &report.rounds[ROUNDS - 1];
            for kind in CanaryKind::ALL {
                let tally = last.kinds[kind as usize];
                assert_eq!(
                    tally.planted,
                    PER_KIND * cases.len(),
                    "{label}: {}",
                    kind.name()
                );
                assert!(tally.folded > 0, "{label}: no {} folded", kind.name());
                assert!(tally.survived <= tally.folded && tally.seen >= tally.survived);
            }
            assert!(report.stale_checked() > 0, "{label}: no stale check");
            assert!(
                report.near_duplicates_at(ROUNDS).1 > 0,
                "{label}: no look-alike pair folded"
            );
            if held_back {
                // Figures only: nobody tuning the summarizer reads what it
                // lost of a held-back bank.
                println!("{label}, budget 20%:\n{}", budget_table(&[report], ROUNDS));
            } else {
                print(&format!("{label}, budget 20%"), &report);
            }
        }
    }
}

/// Folds `segments` through the host with the embedded components, one
/// round a segment (each round folds everything up to its last safe cut,
/// with the checkpoint of the round before, at a summary budget of
/// `budget` tokens), and returns each round's summary.
fn fold_segments(segments: &[Vec<Message>], budget: u32) -> Vec<String> {
    let middleware = embedded_middleware();
    let settings = Settings {
        compact_when: CompactWhen::Threshold,
        ..Settings::default()
    }
    .to_json();
    let mut history: Vec<Message> = Vec::new();
    let mut checkpoint: Option<SessionCheckpoint> = None;
    let mut summaries = Vec::new();
    for (round, segment) in segments.iter().enumerate() {
        history.extend(segment.iter().cloned());
        let current = current_tokens(middleware, &history, &settings, checkpoint.as_ref())
            .unwrap_or_else(|e| panic!("round {}: {e}", round + 1));
        let previous = checkpoint
            .as_ref()
            .map_or(0, |c| c.checkpoint.boundary as usize);
        let config = round_config(&history, previous, current, RoundBudget::Tokens(budget))
            .unwrap_or_else(|| panic!("round {}: no config compacts {current} tokens", round + 1));
        let out = middleware.compress(&history, &config.core, &settings, checkpoint.as_ref());
        assert_eq!(
            out.report.guest().map(|g| g.trigger),
            Some(Trigger::Compacted),
            "round {}: {:?}",
            round + 1,
            out.report.reason()
        );
        let stored = out.checkpoint.expect("a fold leaves a checkpoint");
        summaries.push(summary_of(&stored));
        checkpoint = Some(stored);
    }
    summaries
}

/// A person's session: `(true, text)` is theirs, `(false, text)` the
/// assistant's.
fn said(turns: &[(bool, &str)]) -> Vec<Message> {
    turns
        .iter()
        .map(|&(person, text)| {
            let role = if person { Role::User } else { Role::Assistant };
            Message::text(role, text)
        })
        .collect()
}

/// The person's routine between statements, each answered with [`WORK`].
const ROUTINE_TURNS: [(bool, &str); 10] = [
    (true, "Start with the migration script, please."),
    (false, WORK),
    (true, "Looks fine, continue."),
    (false, WORK),
    (true, "Go on with the exporter."),
    (false, WORK),
    (true, "Fine. What about the statements job?"),
    (false, WORK),
    (true, "Good, keep going."),
    (false, WORK),
];

/// The person's routine after the second statements, each answered with
/// [`WORK`].
const LATER_TURNS: [(bool, &str); 8] = [
    (true, "Now run the unit tests."),
    (false, WORK),
    (true, "Okay, next file."),
    (false, WORK),
    (true, "And the rollback script?"),
    (false, WORK),
    (true, "Good, keep going."),
    (false, WORK),
];

/// `turns`, then `rest` ([`ROUTINE_TURNS`], [`LATER_TURNS`]).
fn said_then(turns: &[(bool, &str)], rest: &[(bool, &str)]) -> Vec<Message> {
    said(&[turns, rest].concat())
}

/// What the assistant says between the person's statements: long enough
/// that a fold has routine to drop and the request is one a fold takes
/// (1,000 tokens at least).
const WORK: &str = "I read the migration script and the service config. The script \
    adds two columns to the invoices table and backfills them in batches of a few \
    thousand rows, committing after each batch so that a failure halfway leaves the \
    table consistent; the config wires the new columns into the billing exporter, which \
    reads them when it builds the monthly statements. Nothing in either touches the \
    deploy tooling or the database settings, so I will run the unit tests next and then \
    look at the exporter's integration tests, which exercise the new columns end to end \
    against a scratch database. If those pass I will read the rollback script as well, \
    since a backfill like this one is only safe to ship when undoing it is tested too, \
    and then summarize what changed for the release notes.";

/// Latest wins by subject, through the host: the values the person
/// replaced (a deploy window, a latency target, a version floor, each said
/// again in other words with a new value) are gone from the summary once
/// the updates are folded, and statements that only look alike (the
/// staging and the production port, the ports of two replicas) all stay,
/// through two folds.
#[test]
fn a_superseded_value_is_gone_while_both_of_a_look_alike_pair_stay() {
    let first = said_then(
        &[
            (
                true,
                "We are shipping the billing service this week; help me get it out.",
            ),
            (false, WORK),
            (
                true,
                "Some ground rules. The deploy window is Tuesday 14:00. Checkout calls stay under \
             300 ms at p99. We MUST support Postgres 15 and nothing older. The staging DB port \
             is 5433. The DB port for the reporting replica is 6432.",
            ),
            (false, "Understood, all of those."),
        ],
        &ROUTINE_TURNS,
    );
    let second = said_then(
        &[
            (
                true,
                "Change of plan: the deploy window is Thursday 09:00. New target: 250 ms at p99. \
             Postgres floor is 16 now. The production DB port is 5432. The DB port for the \
             analytics replica is 7432.",
            ),
            (false, "Noted."),
        ],
        &LATER_TURNS,
    );
    let summaries = fold_segments(&[first, second], 600);
    let (before, after) = (&summaries[0], &summaries[1]);
    println!("round 2's summary:\n{after}");
    for value in ["14:00", "300", "15", "5433", "6432"] {
        assert!(
            contains_value(before, value),
            "round 1 lost `{value}`:\n{before}"
        );
    }
    for stale in ["14:00", "300", "15"] {
        assert!(
            !contains_value(after, stale),
            "the superseded value `{stale}` is still in the summary:\n{after}"
        );
    }
    for value in ["Thursday 09:00", "250", "16"] {
        assert!(
            contains_value(after, value),
            "the new value `{value}` is missing:\n{after}"
        );
    }
    for value in ["5433", "5432", "6432", "7432"] {
        assert!(
            contains_value(after, value),
            "a look-alike statement was taken for an update: `{value}` is gone:\n{after}"
        );
    }
}

/// A message that says several binding things says each: every statement
/// of one message survives two folds, none taken for an update of another
/// (two requirements labelled with two names included).
#[test]
fn a_message_with_n_statements_yields_n_statements() {
    let first = said_then(
        &[
            (
                true,
                "We are shipping the billing service this week; help me get it out.",
            ),
            (false, WORK),
            (
                true,
                "Requirement RQ-17: reports are CSV, never XLSX. Requirement RQ-18: every export \
             carries the tenant id. The importer may run 4 workers at most. Logs stay for 30 \
             days.",
            ),
            (false, "Understood, all four."),
        ],
        &ROUTINE_TURNS,
    );
    let second = said(&LATER_TURNS);
    let summaries = fold_segments(&[first, second], 600);
    for (round, summary) in summaries.iter().enumerate() {
        for value in [
            "RQ-17",
            "XLSX",
            "RQ-18",
            "tenant id",
            "4 workers",
            "30 days",
        ] {
            assert!(
                summary.contains(value),
                "round {}: `{value}` is gone:\n{summary}",
                round + 1
            );
        }
    }
}

/// The held-back halves of the summary shapes hold their floor through the
/// host: at a summary budget of 20%, all eight sessions of each (the
/// bench's set, about a second a shape), the folded values that survive
/// five compactions and the superseded values carried (all rounds) stay
/// where they were when these banks were first run: at least 90%, and
/// none carried but 56 for values found by tools (floors that may only
/// rise and ceilings that may only fall; the target of every shape is 90%
/// and 0). Figures only: what was lost or carried is not printed.
#[test]
fn the_held_back_shapes_hold_their_floor() {
    // (shape, least share surviving, most stale values carried): 90% and
    // 0 are the target of every shape; tool-found values looked up again
    // by another tool under another name (`x-ratelimit-limit`, then
    // `requests_per_minute`) are short of it.
    const FLOORS: [(&str, f64, usize); 4] = [
        ("multi", 0.9, 0),
        ("found", 0.9, 56),
        ("labelled", 0.9, 0),
        ("emphasis", 0.9, 0),
    ];
    for (name, min_survival, max_stale) in FLOORS {
        let shape = SHAPES.iter().find(|s| s.name == name).expect("the shape");
        let report = run(&(shape.held_back)(0..8), 20);
        let survival = report.overall(ROUNDS);
        println!(
            "HELD BACK {name}, budget 20%: {:.1}% survived at round {ROUNDS}, stale {}/{}",
            100.0 * survival,
            report.stale_carried(),
            report.stale_checked()
        );
        assert!(report.problems.is_empty(), "HELD BACK {name}: problems");
        assert!(
            survival >= min_survival,
            "HELD BACK {name}: {:.1}% survived, under {:.0}%",
            100.0 * survival,
            100.0 * min_survival
        );
        assert!(
            report.stale_carried() <= max_stale,
            "HELD BACK {name}: {} stale values carried, more than {max_stale}",
            report.stale_carried()
        );
    }
}
