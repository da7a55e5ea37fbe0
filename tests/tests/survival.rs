//! The survival harness itself (`condense_tests::survival`): the cases it
//! generates are what it claims (valid histories, unguessable values planted
//! once, superseded values stated once, near-duplicates distinct, canaries a
//! small share of the text), and a small run through the host compacts every
//! round and folds every kind. The survival targets are asserted elsewhere
//! (`Report::meets`); here the report is only printed:
//! `cargo test -p condense-tests --test integration -- survival:: --nocapture`.

use condense_model::Role;
use condense_model::invariants::check_pairs;
use condense_tests::survival::{
    CORPUS_SESSIONS, Canary, CanaryKind, Case, PER_KIND, ROUNDS, Report, Statement, Tally,
    chat_cases, contains_value, corpus_case, corpus_cases, message_text, run, run_with, talk_cases,
    terse_cases,
};
use condense_tests::{custom_summarizer_middleware, session};
use std::collections::HashSet;

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

        // Statements are user messages at junctions a provider accepts.
        for (_, statement) in all_statements(case) {
            let i = statement.message;
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
            let words = |c: &Canary| -> HashSet<String> {
                m[c.planted.message]
                    .joined_text()
                    .replace(&c.planted.value, "")
                    .split_whitespace()
                    .map(str::to_lowercase)
                    .collect()
            };
            let (wa, wb) = (words(a), words(b));
            let shared = wa.intersection(&wb).count();
            assert!(
                2 * shared >= wa.len().min(wb.len()),
                "{name}: `{}` and `{}` do not look alike",
                m[a.planted.message].joined_text(),
                m[b.planted.message].joined_text()
            );
        }

        // Canaries are a small share of the text: a twentieth, a tenth
        // where every turn is short.
        let (canary, total) = case.canary_tokens();
        let share = if name.starts_with("terse") { 10 } else { 20 };
        assert!(
            canary * share <= total,
            "{name}: canaries are {canary} of {total} tokens (over 1/{share})"
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
    let cases = chat_cases(0..1);
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
