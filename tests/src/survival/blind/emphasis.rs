//! The blind half of the emphasis shape: binding statements marked by
//! capitals, NEVER, MUST, "!!" and the like, some answered by the assistant
//! after `REPLY`, beside plain routine lines and emphatic lines that bind
//! nothing. Written once on 2026-12-05 by someone who had not read the
//! summarizer nor any earlier held-back bank.

use super::super::bank::{Bank, Template, Twin, t};

const RULES: &[Template] = &[
    t(
        "NEVER point the load test at {v}. That's the live tournament fleet.",
        "fleet-@@@@-!#~",
        [
            "The tournament fleet moved to {v}; load tests stay off it.",
            "Keep load tests away from {v} now, that's where the tournaments run.",
        ],
    ),
    t(
        "!! no migrations against {v} unless the DBA is on the call !!",
        "db-@@@@-!#.prod",
        [
            "The database that needs the DBA present for migrations is {v} now.",
            "They switched primaries: migrations on {v} need the DBA on the call.",
        ],
    ),
    t(
        "The mailbox {v} is for humans only. ABSOLUTELY NO automated mail from it.\n=> Understood: nothing automated gets sent from that mailbox.",
        "care-@@@@!#",
        [
            "Clinic staff moved to the mailbox {v}; automation must not send from it.\n=> Got it, I'll keep automated sending off the new mailbox.",
            "The humans-only mailbox is {v} now.",
        ],
    ),
    t(
        "You MUST NOT flash production units with the debug image {v}.",
        "img-dbg-^^^^^^",
        [
            "The debug image was rebuilt as {v}; it still never goes on production units.",
            "Keep {v} off production hardware, it's the current debug build.",
        ],
    ),
    t(
        "HARD RULE: refunds go through the connector {v} and never through hand-written SQL.",
        "conn-@@@@-!#~",
        [
            "Refunds are routed through the connector {v} now, still no manual SQL.",
            "The refund connector was replaced by {v}.",
        ],
    ),
    t(
        "Under NO circumstances do we train on the split {v}. It's our holdout.\n=> Understood, that split stays out of every training run.",
        "holdout-!#~-@@@@",
        [
            "The holdout split became {v}; training never touches it.",
            "Our new holdout is {v}.",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "The APK MUST stay below {v}. Non-negotiable.",
        "!#.!MB",
        [
            "The APK ceiling is {v} now.",
            "We got approval to let the APK grow to {v}.",
        ],
    ),
    t(
        "route planning has to finish within {v} or the drivers leave without a plan!!",
        "!#~s",
        [
            "Route planning gets {v} now before drivers head out.",
            "The planner's time budget changed to {v}.",
        ],
    ),
    t(
        "The interrupt handler gets {v}. NOT ONE CYCLE MORE.\n=> Understood, I'll keep the handler inside that budget.",
        "!.#~us",
        [
            "The ISR budget was relaxed to {v}.",
            "The interrupt handler may take up to {v} now.",
        ],
    ),
    t(
        "Training spend this month is capped at {v} and we DO NOT go over it.",
        "$!,#~#",
        [
            "Finance raised this month's training cap to {v}.",
            "The monthly training budget is {v} now.",
        ],
    ),
    t(
        "Docs builds MUST NOT produce more than {v} of output, the host rejects anything bigger.",
        "!#~MiB",
        [
            "The host now accepts docs builds up to {v}.",
            "Docs output limit is {v} after the plan upgrade.",
        ],
    ),
    t(
        "IMPORTANT: each billing batch holds fewer than {v} invoices.",
        "!#,~#!",
        [
            "Billing batches may hold up to {v} invoices now.",
            "The invoice count per batch was changed to {v}.",
        ],
    ),
];

const FACTS: &[Template] = &[
    t(
        "REMEMBER THIS: the tournament server's address is {v}.",
        "10.!~.#!.!#",
        [
            "The tournament server was moved to {v}.",
            "Tournament traffic goes to {v} now.",
        ],
    ),
    t(
        "The NPI for the pilot clinic is {v}. PLEASE don't mix it up with the billing one.",
        "1!#~#!#~#!",
        [
            "The pilot clinic was re-registered; its NPI is {v}.",
            "Use the NPI {v} for the pilot clinic now.",
        ],
    ),
    t(
        "!! shipped units carry bootloader {v} !!",
        "bl-!.~!.#",
        [
            "Units leaving the factory now carry bootloader {v}.",
            "The bootloader on shipped units became {v}.",
        ],
    ),
    t(
        "the carrier account we bill to is {v}, and that's IMPORTANT\n=> Noted: that's the carrier account billing uses.",
        "CA-%%!#~#",
        [
            "We bill to the carrier account {v} since the contract renewal.",
            "The carrier account for billing changed to {v}.",
        ],
    ),
    t(
        "KEY FACT: the training data lives in {v}.",
        "gs://ml-@@@@-!#~/train",
        [
            "The training data was copied to {v} and that's where it lives now.",
            "Training data is read from {v} these days.",
        ],
    ),
    t(
        "The canonical domain of the docs is {v}. NOT the old one.",
        "docs.@@@@!#.dev",
        [
            "The docs moved again; their canonical domain is {v}.",
            "Canonical docs URLs use {v} now.",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "TOP PRIORITY: map load time under {v}.",
        "!.#~s",
        [
            "The map load target is {v} now.",
            "Get map loading below {v}, that's the revised aim.",
        ],
    ),
    t(
        "We ABSOLUTELY need pick accuracy at {v} percent by peak season.",
        "99.!#",
        [
            "The pick accuracy goal for peak season is {v} percent now.",
            "Peak-season pick accuracy should reach {v} percent instead.",
        ],
    ),
    t(
        "THE deliverable this month is firmware release {v}.\n=> Understood, that release comes before everything else.",
        "v!.~.!#-%%",
        [
            "This month's deliverable became firmware release {v}.",
            "We're shipping firmware {v} this month instead.",
        ],
    ),
    t(
        "number one thing: the churn model ships with an AUC of {v} or better",
        "0.!#~",
        [
            "The churn model's AUC bar is {v} now.",
            "Ship the churn model once it reaches an AUC of {v}.",
        ],
    ),
    t(
        "MUST land before the audit: reconciliation of ledger {v}.",
        "ldg-!#~-@@@@",
        [
            "Before the audit the ledger to reconcile is {v}.",
            "The audit needs ledger {v} reconciled now.",
        ],
    ),
    t(
        "Clear the waitlist of {v} FIRST, before anything else.",
        "ward-@@@@-!#",
        [
            "The waitlist to clear first is {v} now.",
            "Start with the waitlist of {v} instead.",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "ALWAYS put the app's feature toggles under {v}.",
        "toggles/@@@@!#",
        [
            "Feature toggles for the app live under {v} now.",
            "Put new toggles in {v}.",
        ],
    ),
    t(
        "Seed every experiment with {v}. ALWAYS.\n=> Will do: every experiment gets that seed.",
        "!#~#!#~",
        [
            "The experiment seed is {v} now.\n=> Okay, I'll switch experiments to the new seed.",
            "Seed experiments with {v} from here on.",
        ],
    ),
    t(
        "PLEASE, PLEASE start firmware artifact names with {v}.",
        "@@@!#_",
        [
            "Firmware artifact names begin with {v} now.",
            "Prefix firmware artifacts with {v} instead.",
        ],
    ),
    t(
        "docs examples go in {v}, I really REALLY mean it",
        "examples/@@@@-!#",
        [
            "Docs examples belong in {v} now.",
            "Move new docs examples to {v}.",
        ],
    ),
    t(
        "For shipping labels I insist on the printer profile {v}!!",
        "zpl-!#~-@@@",
        [
            "Shipping labels print with the profile {v} now.",
            "Switch the label printer profile to {v}.",
        ],
    ),
    t(
        "My one big ask: game balance PRs get reviewed by {v}.",
        "balance-@@@!#",
        [
            "Balance PRs go to {v} for review now.",
            "Request reviews on balance changes from {v}.",
        ],
    ),
];

const RULE_TWINS: &[Twin] = &[
    Twin {
        text: "NEVER reboot the {s} controller {v} during a shift.",
        shape: "{s}-ctl-!#~",
        subjects: &["conveyor", "sorter", "freezer", "lift"],
    },
    Twin {
        text: "DO NOT open port {v} on the {s} gateway.",
        shape: "!#~#",
        subjects: &["clinic", "depot", "factory", "studio"],
    },
];
const CONSTRAINT_TWINS: &[Twin] = &[
    Twin {
        text: "The on-device {s} model MUST stay under {v} parameters.",
        shape: "!#~M",
        subjects: &["keyboard", "camera", "voice", "search"],
    },
    Twin {
        text: "The {s} endpoint MUST answer within {v}.",
        shape: "!#~ms",
        subjects: &["pricing", "routing", "eligibility", "inventory"],
    },
];
const FACT_TWINS: &[Twin] = &[
    Twin {
        text: "IMPORTANT: the {s} ward's pager number is {v}.",
        shape: "!#~#!",
        subjects: &["maternity", "oncology", "cardiac", "neuro"],
    },
    Twin {
        text: "REMEMBER: the {s} region's asset bucket is {v}.",
        shape: "{s}-assets-!#~",
        subjects: &["apac", "emea", "latam", "nordics"],
    },
];
const GOAL_TWINS: &[Twin] = &[
    Twin {
        text: "We MUST cut the {s} backlog to {v} by Friday.",
        shape: "!#~0",
        subjects: &["returns", "claims", "disputes", "refunds"],
    },
    Twin {
        text: "TOP PRIORITY: the {s} crash rate down to {v} percent.",
        shape: "0.!#",
        subjects: &["ios", "android", "tvos", "web"],
    },
];
const PREFERENCE_TWINS: &[Twin] = &[
    Twin {
        text: "ALWAYS tag {s} builds with {v}.",
        shape: "{s}-@@!#",
        subjects: &["beta", "nightly", "canary", "hotfix"],
    },
    Twin {
        text: "PLEASE keep the {s} fixtures in {v}.",
        shape: "testdata/{s}/@@@!#",
        subjects: &["vitals", "orders", "telemetry", "invoices"],
    },
];

pub const BLIND_EMPHASIS: Bank = Bank {
    name: "blind-emphasis",
    templates: [RULES, CONSTRAINTS, FACTS, GOALS, PREFERENCES],
    twins: [
        RULE_TWINS,
        CONSTRAINT_TWINS,
        FACT_TWINS,
        GOAL_TWINS,
        PREFERENCE_TWINS,
    ],
    lead_ins: &["", "", "", "Seriously,", "Listen up:", "Before I forget:"],
    trailers: &["", "", "Please.", "I mean it."],
    acks: &[
        "Understood.",
        "Got it, I'll stick to that.",
        "Noted, I'll respect it.",
        "Clear.",
    ],
    routine: &[
        "Okay, run it again.",
        "Looks reasonable.",
        "Hmm, give me a sec.",
        "Carry on.",
        "Next file, please.",
        "Fine by me.",
        "Let's see the output.",
        "Sure, go ahead.",
        "What did the linter say?",
        "Alright, continue with the tests.",
        "Let me think about that.",
        "Good, that compiles.",
        "Can you show the function again?",
        "Back to the handler.",
        "Okay, that's clear.",
    ],
    decoys: &[
        "LOL, the old build server rebooted {n} times during the demo.",
        "I NEVER got why the legacy firmware needed {n} config flags.",
        "We MUST have run that migration {n} times in staging last year.",
        "IMPORTANT gossip: {n} people signed up for the game jam.",
        "The printer jammed {n} times today, ALWAYS on Mondays.",
        "I ALWAYS lose the thread after {n} open tabs.",
        "That ancient model had {n} layers, CRAZY for its time.",
        "NEVER seen a standup last {n} minutes before.",
        "The clinic pilot ran {n} weeks, GREAT fun honestly.",
        "!! {n} unread messages in the team channel !!",
        "The old docs site had {n} pages of changelog and NOBODY read them.",
        "Someone ordered {n} pizzas for the release party, AMAZING.",
        "The depot forklift beeped {n} times a minute, DRIVING me nuts.",
        "HARD to believe the old invoice job took {n} minutes.",
        "We shipped {n} hotfixes in one week once. NEVER again.",
    ],
};
