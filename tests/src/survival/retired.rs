//! The held-back phrase bank: written once, before the summarizer was tuned
//! against the broadened benchmark, by someone who had not read the
//! summarizer; never edited after (a test pins its hash). Its figures are
//! reported apart.
//!
//! Written 2026-12-03.

use super::bank::{Bank, Template, Twin, t};

const RULES: &[Template] = &[
    t(
        "RULE: the only branch you push to is {v}.",
        "agent/@@@!-#~",
        [
            "Your push branch changed, it's {v} now.",
            "We cut a fresh branch for you to push to: {v}.",
        ],
    ),
    t(
        "Hinweis: the prod database {v} is read-only for you — selects only, no writes.",
        "pg-prod-@@!#",
        [
            "Prod db failed over, the one you only read from is {v} now.",
            "The production database you keep your hands off (reads only) is {v} after the migration.",
        ],
    ),
    t(
        "Never run migrations against {v}, that's the shared staging box.",
        "stg-@@@-!#.internal",
        [
            "The shared staging box we keep migrations off is {v} from now on.",
            "Staging moved to {v}; same deal, no migrations there.",
        ],
    ),
    t(
        "Anything under {v} belongs to the platform team and stays untouched by us.",
        "/srv/@@@@-!#/vendor",
        [
            "Platform team reorganized, their hands-off directory is {v} now.",
            "The folder we leave alone for platform is {v}.",
        ],
    ),
    t(
        "Important: secrets only ever come from the vault path {v}, nothing hardcoded in the repo.",
        "kv/@@@@@-!#/deploy",
        [
            "Vault mount got rotated, secrets live at {v} now.",
            "Pull the secrets from {v} instead, the old mount is gone.",
        ],
    ),
    t(
        "Don't delete anything in the audit bucket dated before {v} — legal hold.",
        "202!-0!-1!",
        [
            "Legal extended the hold: nothing in the audit bucket from before {v} gets deleted.",
            "The audit bucket cutoff is {v}; keep everything older than that.",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "Constraint - total cloud spend for this experiment is capped at {v} a month.",
        "$!,##~",
        [
            "Finance bumped the experiment budget, the monthly ceiling is {v}.",
            "We're allowed up to {v} per month on the cloud bill for this now.",
        ],
    ),
    t(
        "heads up, the release freeze starts {v}, after that only hotfixes go in",
        "202!-0!-2!",
        [
            "freeze got pulled forward to {v}",
            "Release freeze now begins on {v}, hotfixes only after that.",
        ],
    ),
    t(
        "Regla: responses from the pricing endpoint have to stay under {v} at the ninety-ninth percentile.",
        "!#~.!ms",
        [
            "The tail-latency budget on pricing was renegotiated to {v}.",
            "Pricing tail-latency ceiling per the new SLO: {v}.",
        ],
    ),
    t(
        "Every event we emit follows {v}; the consumer drops anything else on the floor.",
        "evt-schema-!.!#-%%",
        [
            "Consumers switched over to {v}, emit that.",
            "We're on event schema {v} as of this morning.",
        ],
    ),
    t(
        "Max batch size for the importer: {v} rows. Past that the worker runs out of memory.",
        "!#,###",
        [
            "Importer batch ceiling went up to {v} rows after the memory bump.",
            "Keep importer batches at or below {v} rows going forward.",
        ],
    ),
    t(
        "You must keep the container image under {v}, the edge nodes have tiny disks.",
        "!#~.!MB",
        [
            "Edge disks got bigger, the image limit is {v} now.",
            "Image size ceiling for the edge nodes is {v}.",
        ],
    ),
];

const FACTS: &[Template] = &[
    t(
        "prod runs on cluster {v}",
        "gke-@@@!-#~*",
        [
            "We migrated prod, it lives on cluster {v} now.",
            "Prod's cluster is {v} after last night's cutover.",
        ],
    ),
    t(
        "FACT: the billing account code for this project is {v}.",
        "%%-!###-%!",
        [
            "Billing account code got reissued: {v}.",
            "Charge it to {v}, finance replaced our account code.",
        ],
    ),
    t(
        "note: the metrics API is at {v}",
        "https://@@@@!.example.net/api/v!",
        [
            "Metrics API moved to {v}.",
            "point the metrics client at {v}, that's where it's served from now",
        ],
    ),
    t(
        "We pinned the Postgres driver at {v} because newer ones break our TLS setup.",
        "v!.!#.!-@@@",
        [
            "Driver pin is {v} now, the TLS thing got fixed upstream.",
            "Bumped the postgres driver pin to {v}.",
        ],
    ),
    t(
        "The regression came in with commit {v}, bisect confirmed it.",
        "^^^^!^^^^^",
        [
            "Re-ran the bisect properly, the culprit is actually {v}.",
            "After the rebase rewrote hashes, the bad commit is {v}.",
        ],
    ),
    t(
        "Reminder: the internal auth service listens on port {v}.",
        "4~!#!",
        [
            "auth service got rebound to {v}",
            "Auth answers on {v} these days, someone else grabbed its old port.",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "Goal: get median checkout latency down to {v} by the end of the sprint.",
        "!#~.!ms",
        [
            "Product moved the goalposts, median checkout latency target is {v}.",
            "We're now shooting for {v} on median checkout latency.",
        ],
    ),
    t(
        "steps one through three of five are done, next is migrating table {v}",
        "@@@@_!#_archive",
        [
            "we rebased, next up is table {v}",
            "Next table to migrate is {v} — the one before turned out to be empty.",
        ],
    ),
    t(
        "open question for you to think about: do we cut over to region {v} this quarter or wait?",
        "@@-@@@@@-!#",
        [
            "Procurement swapped the candidate, so the open question is whether we move to {v}.",
            "Still undecided: cut over to {v} this quarter, or hold off?",
        ],
    ),
    t(
        "Objectif : reproduce bug {v} locally before touching any code.",
        "%%%%-!###",
        [
            "Switching focus — the bug to reproduce first is {v}.",
            "Repro target is {v}; the earlier ticket was a duplicate.",
        ],
    ),
    t(
        "TODO: once the suite passes, tag the release {v} and push the tag.",
        "v!.!#.!-rc!",
        [
            "Release tag should be {v} rather, we skipped one.",
            "When everything's green, tag it {v}.",
        ],
    ),
    t(
        "Where I want to end up: the nightly job finishes in under {v}.",
        "!#m~#s",
        [
            "Nightly job target tightened to {v}.",
            "Aim for {v} on the nightly run instead.",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "I'd rather you stick with ruff {v} locally so the output matches CI.",
        "!.!.!#",
        [
            "CI bumped ruff, so run {v} locally please.",
            "Use ruff {v} from now on.",
        ],
    ),
    t(
        "PREFERENCE: prefix every commit message with our epic key {v}.",
        "%%%-!###",
        [
            "The epic key for commit prefixes is {v} now.",
            "new epic, so start commit messages with {v}",
        ],
    ),
    t(
        "I like it when PR descriptions link the design doc, it's at {v}.",
        "https://docs.example.org/d/^^^^!^^^",
        [
            "The design doc moved to {v}, link that one.",
            "link {v} in the PRs, that's the up-to-date doc",
        ],
    ),
    t(
        "please keep test timeouts at {v} per case, anything longer hides hangs",
        "!#~0ms",
        [
            "bump the per-case timeout to {v}, please",
            "per-case timeouts: {v} is what I want now",
        ],
    ),
    t(
        "Preferably run the benchmarks with seed {v} so the numbers stay comparable.",
        "!#~#!##",
        [
            "Switched the benchmark seed to {v}, use that.",
            "Benchmark seed going forward: {v}.",
        ],
    ),
    t(
        "If you need a scratch dir, use {v} — I clean that one out myself.",
        "/tmp/@@@@-scratch-!#",
        [
            "Scratch dir is {v} these days.",
            "Use {v} for scratch stuff rather.",
        ],
    ),
];

const RULE_TWINS: &[Twin] = &[
    Twin {
        text: "Only deploy the {s} from pipeline job {v}, never by hand.",
        shape: "deploy-{s}-!#~",
        subjects: &["api", "worker", "frontend", "scheduler", "gateway"],
    },
    Twin {
        text: "The {s} repo is protected: changes there go through approver group {v}.",
        shape: "grp-%%!#~",
        subjects: &["infra", "payments", "auth", "search"],
    },
];

const CONSTRAINT_TWINS: &[Twin] = &[
    Twin {
        text: "Budget for the {s} work is {v}, and that's a hard cap.",
        shape: "$!#,#~0",
        subjects: &["migration", "redesign", "audit", "onboarding", "logging"],
    },
    Twin {
        text: "The {s} endpoint is rate-limited to {v} requests a minute.",
        shape: "!,#~#",
        subjects: &["search", "upload", "login", "export"],
    },
];

const FACT_TWINS: &[Twin] = &[
    Twin {
        text: "The {s} service listens on port {v}.",
        shape: "3#~#!",
        subjects: &["billing", "ledger", "notifier", "reports", "inventory"],
    },
    Twin {
        text: "The {s} suite runs via {v}.",
        shape: "./ci/{s}-!#~.sh",
        subjects: &["unit", "integration", "smoke", "contract"],
    },
];

const GOAL_TWINS: &[Twin] = &[
    Twin {
        text: "Coverage target for the {s} module is {v} percent.",
        shape: "!#.!#",
        subjects: &["parser", "scheduler", "exporter", "auth"],
    },
    Twin {
        text: "Next step on the {s} migration is shard {v}.",
        shape: "shard-!#~*",
        subjects: &["orders", "users", "invoices", "events"],
    },
];

const PREFERENCE_TWINS: &[Twin] = &[
    Twin {
        text: "For the {s} logs I'd like a retention of {v}.",
        shape: "!#~ days",
        subjects: &["access", "audit", "debug", "error"],
    },
    Twin {
        text: "I'd like the {s} dashboard to refresh every {v}.",
        shape: "!m!#s",
        subjects: &["latency", "errors", "traffic", "saturation"],
    },
];

pub const HELD_BACK: Bank = Bank {
    name: "held-back",
    templates: [RULES, CONSTRAINTS, FACTS, GOALS, PREFERENCES],
    twins: [
        RULE_TWINS,
        CONSTRAINT_TWINS,
        FACT_TWINS,
        GOAL_TWINS,
        PREFERENCE_TWINS,
    ],
    lead_ins: &[
        "",
        "",
        "",
        "",
        "Oh, one more thing.",
        "Before I forget:",
        "Quick one.",
        "Something I should have said earlier:",
        "btw,",
        "So.",
    ],
    trailers: &[
        "",
        "",
        "",
        "Thanks!",
        "Keep going.",
        "Carry on.",
        "Cheers.",
        "ok, back to it.",
    ],
    acks: &[
        "Got it.",
        "Noted, I'll keep that in mind.",
        "Understood.",
        "Okay, will do.",
        "Thanks, noted.",
        "Makes sense, I'll work with that.",
        "Sure thing.",
        "Acknowledged, continuing.",
    ],
    routine: &[
        "Looking at the retry settings again.",
        "Rerunning it.",
        "ok that worked",
        "Still waiting on CI.",
        "hmm, let me check the logs",
        "Try it again?",
        "Nice.",
        "Okay, next file.",
        "Can you show me the diff?",
        "That's fine.",
        "Looking at the importer again.",
        "Let it finish first.",
        "Build is running.",
        "Yep.",
        "Go on.",
        "Give me a sec, I'm on a call.",
    ],
    decoys: &[
        "The old cron never fired on {n} of the nights last month.",
        "We had to cap retries manually once, it was painful.",
        "Last quarter we blew through the budget by {n} percent, nobody was happy.",
        "The deploy took {n} minutes yesterday, which was weird.",
        "I remember when the limit used to be {n}, back before the rewrite.",
        "Someone force-pushed to main {n} times in one week back in the day, that's why people are touchy.",
        "We got {n} pages overnight, all false alarms.",
        "An intern's script deleted {n} rows once and we had to restore from backup.",
        "Saw {n} failed logins on the dashboard this morning, probably the scanner again.",
        "That ticket sat open for {n} days before anyone looked at it.",
        "My laptop has been up for {n} hours, I should probably reboot at some point.",
        "Back when we were on the old host, builds took {n} to {n} minutes.",
        "They told us never to touch that box, and then it died on its own after {n} years.",
        "The vendor call was supposed to be {n} minutes and went twice that.",
        "The load test peaked around {n} requests a second before it fell over.",
    ],
};
