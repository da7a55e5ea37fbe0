//! The survival benchmark of issue 11 (`condense_tests::survival`), the full
//! set: 8 generated chat sessions with tools, 8 without (talk only), 8 of
//! terse turns and the 3 long recorded coding sessions with canaries planted, five successive compactions each, at summary budgets of
//! 10%, 20% and 30% of the folded text. Prints, per budget, the table of each
//! family, the folded canaries lost at the last round, and a one-line summary
//! of all cases together.
//!
//! Run: `cargo bench -p condense-tests --bench survival`. A figure, not a
//! timing: nothing is asserted here (the tests assert the harness is sound).
//! `SURVIVAL_BUDGETS=2,5` runs other budgets (in percent) instead, to find
//! where the budget starts to bind; `SURVIVAL_SUMMARIZER=x.wasm` measures
//! another summarizer component (a third party's, or an earlier build of the
//! heuristic one) in place of the embedded one.

use condense_tests::summarizer_from_env;
use condense_tests::survival::{
    BUDGET_PERCENTS, ROUNDS, Report, chat_cases, corpus_cases, run_with, talk_cases, terse_cases,
};
use std::time::Instant;

const CHAT_SEEDS: std::ops::Range<u64> = 0..8;
const CORPUS_SEED: u64 = 0;
/// Lost canaries listed per family and budget.
const LOST_SHOWN: usize = 12;

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

fn main() {
    let started = Instant::now();
    let chat = chat_cases(CHAT_SEEDS);
    let talk = talk_cases(CHAT_SEEDS);
    let terse = terse_cases(CHAT_SEEDS);
    let corpus = corpus_cases(CORPUS_SEED);
    println!(
        "survival: {} chat cases with tools, {} without, {} terse (seeds {CHAT_SEEDS:?}), {} \
         corpus cases (seed {CORPUS_SEED}), {ROUNDS} compactions each; cases built in {:.1?}",
        chat.len(),
        talk.len(),
        terse.len(),
        corpus.len(),
        started.elapsed()
    );
    let middleware = summarizer_from_env("SURVIVAL_SUMMARIZER");
    let mut summaries = Vec::new();
    for percent in budgets() {
        let started = Instant::now();
        let chat_report = run_with(middleware, &chat, percent);
        let talk_report = run_with(middleware, &talk, percent);
        let terse_report = run_with(middleware, &terse, percent);
        let corpus_report = run_with(middleware, &corpus, percent);
        let mut all = chat_report.clone();
        all.merge(&talk_report);
        all.merge(&terse_report);
        all.merge(&corpus_report);
        println!(
            "\n===== summary budget {percent}% ({:.1?})",
            started.elapsed()
        );
        show("chat-style, with tools", &chat_report);
        show("chat-style, talk only", &talk_report);
        show("chat-style, terse turns", &terse_report);
        show("corpus", &corpus_report);
        println!("--- all: {}", all.summary_line());
        summaries.push(all.summary_line());
    }
    println!("\n===== summary");
    for line in summaries {
        println!("{line}");
    }
}
