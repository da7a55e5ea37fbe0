//! The survival benchmark (`condense_tests::survival`), the full
//! set: 8 generated chat sessions with tools, 8 without (talk only), 8 of
//! terse turns and the 3 long recorded coding sessions with canaries planted,
//! all in the words of the tuned bank; then 8 heavy-filler sessions in the
//! words of the untuned bank and 8 in those of the retired bank (the
//! held-back one until 2026-12-05, consulted while tuning, so an ordinary
//! family now); then the summary shapes (multi-statement messages,
//! tool-found values, labelled routine beside labelled rules, emphasis), 8
//! sessions of each half of each: the tuned half and the held-back half,
//! whose banks were written on the night of 2026-12-05 and are pinned,
//! and the earlier held-back halves, retired (consulted while tuning); five successive
//! compactions each, at summary budgets of 10%, 20% and 30% of the folded
//! text. Prints, per budget, the table of each family, the folded canaries
//! lost at the last round, and a one-line summary of the four tuned families
//! together; then, apart, a table per budget of the untuned family, of the
//! retired one and of each shape's tuned half, each next to its held-back
//! half (never merged into the others: the held-back figures are the ones
//! nothing was tuned to, printed as figures only). Then "10 rounds at a fixed token
//! budget": the same cases cut into ten rounds, every round's summary budget
//! the same number of tokens (the percent of the whole conversation, over
//! five), as the cost-aware trigger compacts more often with a fixed
//! `summary_max_tokens` (the module doc of `condense_tests::survival` says
//! why that budget); a table per family at round 10, the held-back family
//! apart.
//!
//! Run: `cargo bench -p condense-tests --bench survival`. A figure, not a
//! timing: nothing is asserted here (the tests assert the harness is sound).
//! `SURVIVAL_BUDGETS=2,5` runs other budgets (in percent) instead, to find
//! where the budget starts to bind; `SURVIVAL_SUMMARIZER=x.wasm` measures
//! another summarizer component (a third party's, or an earlier build of the
//! heuristic one) in place of the embedded one; `SURVIVAL_FAMILIES=untuned,
//! multi` runs only the families named (of `chat`, `talk`, `terse`,
//! `corpus`, `untuned`, `retired`, and the shapes `multi`, `found`,
//! `labelled`, `emphasis`, each of which runs its three halves;
//! `SURVIVAL_HELD_BACK=0` runs the tuned half only, for tuning). The
//! fixed-budget tables run the same
//! budget over the default rounds and over 10 (`SURVIVAL_FIXED_ROUNDS=7`:
//! over 7 instead; 0: not at all).

use condense_host::Middleware;
use condense_tests::summarizer_from_env;
use condense_tests::survival::{
    BUDGET_PERCENTS, Case, Lost, ROUNDS, Report, SHAPES, Schedule, budget_table, chat_cases,
    corpus_cases, retired_cases, run_with, run_with_schedule, talk_cases, terse_cases,
    untuned_cases,
};
use std::time::Instant;

const CHAT_SEEDS: std::ops::Range<u64> = 0..8;
const FILLER_SEEDS: std::ops::Range<u64> = 0..8;
const CORPUS_SEED: u64 = 0;
/// Lost canaries listed per family and budget.
const LOST_SHOWN: usize = 12;
/// Rounds of the fixed-budget tables: about as often as the cost-aware
/// trigger compacts a long session (7–10 times where the threshold compacts
/// 4–5 times).
const FIXED_ROUNDS: usize = 10;

const UNTUNED_LABEL: &str = "untuned bank, heavy filler";
const RETIRED_LABEL: &str = "retired bank (held back until 2026-12-05), heavy filler";

fn show(label: &str, report: &Report) {
    println!("--- {label}");
    print!("{}", report.table());
    let lost: Vec<_> = report.lost.iter().filter(|l| l.round == ROUNDS).collect();
    if !lost.is_empty() {
        println!("  lost at round {ROUNDS} ({} in all):", lost.len());
    }
    for l in report.stale.iter().filter(|l| l.round == ROUNDS) {
        println!(
            "  stale at round {ROUNDS}: {} {} `{}` seen in: {}",
            l.case,
            l.kind.name(),
            l.value,
            l.statement
        );
    }
    print_lost(&lost);
}

/// The first [`LOST_SHOWN`] of `lost`, a line each.
fn print_lost(lost: &[&Lost]) {
    for l in lost.iter().take(LOST_SHOWN) {
        println!(
            "    {} {} `{}` (segment {}): {}",
            l.case,
            l.kind.name(),
            l.value,
            l.segment,
            l.statement
        );
    }
}

/// The budgets to run: [`BUDGET_PERCENTS`], or those of `SURVIVAL_BUDGETS`.
fn budgets() -> Vec<u32> {
    match std::env::var("SURVIVAL_BUDGETS") {
        Ok(list) => list
            .split(',')
            .map(|p| {
                p.trim()
                    .parse()
                    .unwrap_or_else(|e| panic!("SURVIVAL_BUDGETS: `{p}`: {e}"))
            })
            .collect(),
        Err(_) => BUDGET_PERCENTS.to_vec(),
    }
}

/// The rounds of the fixed-budget tables: [`FIXED_ROUNDS`], or
/// `SURVIVAL_FIXED_ROUNDS`.
fn fixed_rounds() -> usize {
    match std::env::var("SURVIVAL_FIXED_ROUNDS") {
        Ok(n) => n
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("SURVIVAL_FIXED_ROUNDS: `{n}`: {e}")),
        Err(_) => FIXED_ROUNDS,
    }
}

/// Whether the shapes' held-back halves run: not with `SURVIVAL_HELD_BACK=0`,
/// for a tuning run that must not see their figures.
fn held_back_runs() -> bool {
    std::env::var("SURVIVAL_HELD_BACK").map_or(true, |v| v.trim() != "0")
}

/// Whether `family` is to run: every family, or those of `SURVIVAL_FAMILIES`.
fn runs(family: &str) -> bool {
    match std::env::var("SURVIVAL_FAMILIES") {
        Ok(list) => list.split(',').any(|f| f.trim() == family),
        Err(_) => true,
    }
}

/// The cases of `name`, if it is to run.
fn family(name: &str, make: impl FnOnce() -> Vec<Case>) -> Vec<Case> {
    if runs(name) { make() } else { Vec::new() }
}

fn main() {
    let started = Instant::now();
    let chat = family("chat", || chat_cases(CHAT_SEEDS));
    let talk = family("talk", || talk_cases(CHAT_SEEDS));
    let terse = family("terse", || terse_cases(CHAT_SEEDS));
    let corpus = family("corpus", || corpus_cases(CORPUS_SEED));
    let untuned = family("untuned", || untuned_cases(FILLER_SEEDS));
    let retired = family("retired", || retired_cases(FILLER_SEEDS));
    // Per summary shape: its tuned half and its held-back half.
    let shapes: Vec<(String, Vec<Case>, String, Vec<Case>)> = SHAPES
        .iter()
        .filter(|shape| runs(shape.name))
        .map(|shape| {
            (
                format!("{} (tuned half)", shape.name),
                (shape.tuned)(FILLER_SEEDS),
                format!(
                    "{} HELD BACK (bank of the night of 2026-12-05, pinned; figures only)",
                    shape.name
                ),
                match held_back_runs() {
                    true => (shape.held_back)(FILLER_SEEDS),
                    false => Vec::new(),
                },
            )
        })
        .collect();
    println!(
        "survival: {} chat cases with tools, {} without, {} terse (seeds {CHAT_SEEDS:?}), {} \
         corpus cases (seed {CORPUS_SEED}), {} untuned and {} retired (seeds \
         {FILLER_SEEDS:?}), {} shapes of {} tuned and {} held-back cases each, {ROUNDS} \
         compactions each; cases built in {:.1?}",
        chat.len(),
        talk.len(),
        terse.len(),
        corpus.len(),
        untuned.len(),
        retired.len(),
        shapes.len(),
        FILLER_SEEDS.end - FILLER_SEEDS.start,
        FILLER_SEEDS.end - FILLER_SEEDS.start,
        started.elapsed()
    );
    let middleware = summarizer_from_env("SURVIVAL_SUMMARIZER");
    let tuned = [
        ("chat-style, with tools", &chat),
        ("chat-style, talk only", &talk),
        ("chat-style, terse turns", &terse),
        ("corpus", &corpus),
    ];
    let mut summaries = Vec::new();
    let mut untuned_reports = Vec::new();
    let mut retired_reports = Vec::new();
    let mut shape_reports: Vec<(Vec<Report>, Vec<Report>)> =
        shapes.iter().map(|_| (Vec::new(), Vec::new())).collect();
    // The shapes' earlier held-back halves, retired: ordinary families now.
    let retired_shapes: Vec<(String, Vec<Case>)> = SHAPES
        .iter()
        .filter(|shape| runs(shape.name))
        .flat_map(|shape| {
            shape.retired.iter().enumerate().map(|(n, retired)| {
                (
                    format!(
                        "{} retired held-back half {} (consulted, 2026-12-05)",
                        shape.name,
                        n + 1
                    ),
                    retired(FILLER_SEEDS),
                )
            })
        })
        .collect();
    let mut retired_shape_reports: Vec<Vec<Report>> =
        retired_shapes.iter().map(|_| Vec::new()).collect();
    for percent in budgets() {
        let started = Instant::now();
        let reports: Vec<(&str, Report)> = tuned
            .iter()
            .filter(|(_, cases)| !cases.is_empty())
            .map(|(label, cases)| (*label, run_with(middleware, cases, percent)))
            .collect();
        let untuned_report = (!untuned.is_empty()).then(|| run_with(middleware, &untuned, percent));
        let retired_report = (!retired.is_empty()).then(|| run_with(middleware, &retired, percent));
        println!(
            "\n===== summary budget {percent}% ({:.1?})",
            started.elapsed()
        );
        for (label, report) in &reports {
            show(label, report);
        }
        if let Some((_, first)) = reports.first() {
            let mut all = first.clone();
            for (_, report) in &reports[1..] {
                all.merge(report);
            }
            println!("--- all: {}", all.summary_line());
            summaries.push(all.summary_line());
        }
        if let Some(report) = untuned_report {
            show(UNTUNED_LABEL, &report);
            untuned_reports.push(report);
        }
        if let Some(report) = retired_report {
            show(RETIRED_LABEL, &report);
            retired_reports.push(report);
        }
        for ((tuned_label, tuned_cases, _, held_cases), (tuned_reports, held_reports)) in
            shapes.iter().zip(&mut shape_reports)
        {
            let report = run_with(middleware, tuned_cases, percent);
            show(tuned_label, &report);
            tuned_reports.push(report);
            // Figures only: the held-back statements that were lost or
            // carried stale are not printed, so that nobody tuning the
            // summarizer reads them (the banks' point is that they were not
            // written against).
            if !held_cases.is_empty() {
                held_reports.push(run_with(middleware, held_cases, percent));
            }
        }
        for ((label, cases), reports) in retired_shapes.iter().zip(&mut retired_shape_reports) {
            let report = run_with(middleware, cases, percent);
            show(label, &report);
            reports.push(report);
        }
    }
    if !summaries.is_empty() {
        println!("\n===== summary");
        for line in summaries {
            println!("{line}");
        }
    }
    if !untuned_reports.is_empty() {
        println!("\n===== {UNTUNED_LABEL}, seeds {FILLER_SEEDS:?}");
        print!("{}", budget_table(&untuned_reports, ROUNDS));
    }
    if !retired_reports.is_empty() {
        println!("\n===== {RETIRED_LABEL}, seeds {FILLER_SEEDS:?}");
        print!("{}", budget_table(&retired_reports, ROUNDS));
    }
    for ((tuned_label, _, held_label, _), (tuned_reports, held_reports)) in
        shapes.iter().zip(&shape_reports)
    {
        if tuned_reports.is_empty() {
            continue;
        }
        println!("\n===== {tuned_label}, seeds {FILLER_SEEDS:?}");
        print!("{}", budget_table(tuned_reports, ROUNDS));
        if !held_reports.is_empty() {
            println!("===== {held_label}, seeds {FILLER_SEEDS:?}");
            print!("{}", budget_table(held_reports, ROUNDS));
        }
    }

    for ((label, _), reports) in retired_shapes.iter().zip(&retired_shape_reports) {
        println!("\n===== {label}, seeds {FILLER_SEEDS:?}");
        print!("{}", budget_table(reports, ROUNDS));
    }

    // The same fixed budget over the default number of rounds and over more:
    // what compacting more often, each summary at the same budget, does.
    let more = fixed_rounds();
    let schedules = if more > 0 {
        vec![ROUNDS, more]
    } else {
        Vec::new()
    };
    for rounds in schedules {
        let untuned_family = [(UNTUNED_LABEL, &untuned), (RETIRED_LABEL, &retired)];
        println!(
            "\n===== {rounds} rounds at a fixed token budget: every round's summary budget is \
             the percent of the whole conversation's tokens / {ROUNDS}"
        );
        fixed_budget_tables(middleware, &tuned, rounds, false);
        fixed_budget_tables(middleware, &untuned_family, rounds, false);
        for (tuned_label, tuned_cases, held_label, held_cases) in &shapes {
            fixed_budget_tables(middleware, &[(tuned_label, tuned_cases)], rounds, false);
            // Apart, figures only, as above.
            if !held_cases.is_empty() {
                println!("\n===== {rounds} rounds at a fixed token budget, {held_label}");
                fixed_budget_tables(middleware, &[(held_label, held_cases)], rounds, true);
            }
        }
    }
}

/// Each family of `families` in `rounds` rounds at a fixed token budget, at
/// every budget: its table at the last round ([`budget_table`]), the mean
/// budget a round got and, unless `figures_only`, the canaries lost at the
/// last round; then, for more than one family, a summary line per budget of
/// the families together.
fn fixed_budget_tables(
    middleware: &Middleware,
    families: &[(&str, &Vec<Case>)],
    rounds: usize,
    figures_only: bool,
) {
    let schedule = Schedule::fixed(rounds);
    let mut all: Vec<Report> = Vec::new();
    for (label, cases) in families.iter().filter(|(_, cases)| !cases.is_empty()) {
        let started = Instant::now();
        let reports: Vec<Report> = budgets()
            .into_iter()
            .map(|percent| run_with_schedule(middleware, cases, percent, schedule))
            .collect();
        println!("--- {label} ({:.1?})", started.elapsed());
        print!("{}", budget_table(&reports, rounds));
        let budgets: Vec<String> = reports
            .iter()
            .map(|r| format!("{}%: {:.0}", r.budget_percent, r.mean_summary_budget()))
            .collect();
        println!(
            "  summary budget per round, tokens (mean of the cases): {}",
            budgets.join(", ")
        );
        for report in &reports {
            for problem in &report.problems {
                println!("  problem at {}%: {problem}", report.budget_percent);
            }
            // The held-back statements are never printed (see `main`).
            if figures_only {
                continue;
            }
            let lost: Vec<_> = report.lost.iter().filter(|l| l.round == rounds).collect();
            if !lost.is_empty() {
                println!(
                    "  lost at round {rounds}, {}% ({} in all):",
                    report.budget_percent,
                    lost.len()
                );
            }
            print_lost(&lost);
        }
        for (i, report) in reports.into_iter().enumerate() {
            match all.get_mut(i) {
                Some(sum) => sum.merge(&report),
                None => all.push(report),
            }
        }
    }
    if families.iter().filter(|(_, c)| !c.is_empty()).count() > 1 {
        println!("--- all:");
        for report in &all {
            println!("{}", report.summary_line());
        }
    }
}
