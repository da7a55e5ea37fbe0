//! The second held-back half of the labelled shape: written on 2026-12-05
//! by someone who had not read the summarizer, and never edited after.
//! Binding statements carry labels ("POLICY:", "Guardrail:", "HARD LIMIT:",
//! "Ground truth:", "Objective:", "Convention:" ...); so do the routine lines
//! and decoys ("Note:", "Reminder:", "Sync notes:", "FYI:", "Update:",
//! "Context:" ...), which bind nothing. Updates come with the same label,
//! another label, no label at all, or as a short plain correction.

use super::super::bank::{Bank, Template, Twin, t};

const RULES: &[Template] = &[
    t(
        "POLICY: production credentials are kept only in {v}; nothing ends up on a laptop.",
        "kv/prod-@@@@-!#",
        [
            "POLICY amended: prod credentials move to {v}.",
            "Creds live in {v} these days, same deal about laptops.",
        ],
    ),
    t(
        "Guardrail: you never merge into {v} on your own, a human clicks the button.",
        "release-!#~-@@",
        [
            "Guardrail still stands, but the branch is {v} after the cut.",
            "correction: {v} is the branch we merge, not you",
        ],
    ),
    t(
        "SECURITY RULE: outbound mail goes through the relay {v} and no other host.",
        "smtp-!#~.@@@@.net",
        [
            "SECURITY: the mail relay was replaced by {v}.",
            "relay is {v} as of today",
        ],
    ),
    t(
        "Requirement: PII columns are masked with the function {v} before any export.",
        "mask_@@@@_!#",
        [
            "Requirement changed — PII masking uses {v} instead.",
            "Note, and this one binds: mask PII with {v} from here on.",
        ],
    ),
    t(
        "Invariant: nothing writes to {v} outside the nightly window.",
        "warehouse.@@@@_!#~",
        [
            "Invariant, updated: the table guarded by the nightly window is {v}.",
            "It's {v} that only the nightly window may write to, after the rename.",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "HARD LIMIT: the lambda bundle stays below {v} unzipped.",
        "!#~MiB",
        [
            "HARD LIMIT raised to {v} unzipped.",
            "AWS bumped it for us, bundles may reach {v}.",
        ],
    ),
    t(
        "Constraint: no more than {v} parallel jobs on the shared runner.",
        "!#",
        [
            "Constraint — the shared runner allows {v} parallel jobs after the upgrade.",
            "Cap for parallel runner jobs: {v}.",
        ],
    ),
    t(
        "DEADLINE: vendor cutover is {v}, not a day later.",
        "2027-0!-2~",
        [
            "DEADLINE moved: cutover on {v}.",
            "Vendor pushed the cutover to {v}.",
        ],
    ),
    t(
        "Budget: the preview environments cost {v} a month at most.",
        "€!,#~0",
        [
            "BUDGET revised: previews get up to {v} a month.",
            "Finance cut the preview spend to {v} monthly.",
        ],
    ),
    t(
        "HARD LIMIT: request bodies above {v} are rejected at the edge.",
        "!#~KiB",
        [
            "Edge limit for request bodies is {v} since the WAF change.",
            "LIMIT: bodies up to {v} get through the edge.",
        ],
    ),
];

const FACTS: &[Template] = &[
    t(
        "FACT: the event bus runs Kafka {v}.",
        "~.!#.!",
        [
            "FACT: the bus was upgraded, it runs Kafka {v}.",
            "Kafka got upgraded to {v} over the weekend.",
        ],
    ),
    t(
        "Ground truth: the canonical customer table is {v}.",
        "crm.@@@@_customers_v!",
        [
            "Ground truth changed, customers are canonical in {v}.",
            "Data team says the customer table of record is {v}.",
        ],
    ),
    t(
        "Known value: the PDF library licence key id is {v}.",
        "LK-%%%%-!#~#",
        [
            "Licence renewed, the key id is {v}.",
            "Known value, refreshed: PDF licence key id {v}.",
        ],
    ),
    t(
        "FACT: our support contract number is {v}.",
        "SLA-!#~#-%%",
        [
            "FACT (renewal): the support contract is {v}.",
            "new contract number {v}",
        ],
    ),
    t(
        "Worth knowing: the old monolith answers on {v}.",
        "legacy-!#~.@@@.corp",
        [
            "The monolith moved hosts, it answers on {v}.",
            "FACT: the legacy monolith is reachable at {v}.",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "Objective: cold starts down to {v} ms by the end of the quarter.",
        "!#~",
        [
            "Objective revised, cold starts under {v} ms.",
            "We're aiming at {v} ms for cold starts after the review.",
        ],
    ),
    t(
        "Milestone: the beta opens to {v} users.",
        "!,#~0",
        [
            "Milestone: the beta invite list grows to {v} users.",
            "Beta size agreed at {v} users.",
        ],
    ),
    t(
        "GOAL: retire the endpoint {v} this sprint.",
        "/api/v!/@@@@-@@@@",
        [
            "GOAL swap: the endpoint to retire this sprint is {v}.",
            "Retire {v} first, the other one can wait.",
        ],
    ),
    t(
        "Target: queue lag under {v} seconds at peak.",
        "!#.#",
        [
            "Target: peak queue lag below {v} seconds.",
            "Queue lag goal is {v} seconds since the capacity review.",
        ],
    ),
    t(
        "Priority one: close {v}.",
        "PAY-!#~#",
        [
            "Priority one changed to {v}.",
            "First thing is {v} instead, the incident bumped it.",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "Convention: new metrics carry the prefix {v}.",
        "acme_@@@!_",
        [
            "Convention: prefix new metrics with {v}.",
            "Metrics prefix for new stuff: {v}.",
        ],
    ),
    t(
        "House style: PR descriptions end with the checklist from {v}.",
        "docs/checklists/@@@@-!#.md",
        [
            "House style: the PR checklist lives in {v} after the docs move.",
            "Use the checklist in {v} for PR descriptions.",
        ],
    ),
    t(
        "Preference: lint with the profile {v} before pushing.",
        "strict-@@!#",
        [
            "Preference: the lint profile to use is {v}.",
            "Lint with {v} please, the other profile is deprecated.",
        ],
    ),
    t(
        "Preference: doc examples use the demo account {v}.",
        "demo-@@@@!#",
        [
            "Docs should show the demo account {v} instead.",
            "Preference, updated: examples use {v}.",
        ],
    ),
    t(
        "Convention: the commit scope for this work is {v}.",
        "@@@@!#",
        [
            "Convention: scope commits for this work as {v}.",
            "Commit scope is {v} after the split into two epics.",
        ],
    ),
];

const RULE_TWINS: &[Twin] = &[Twin {
    text: "SECURITY RULE: {s} tokens are minted only by {v}.",
    shape: "{s}-issuer-!#~",
    subjects: &["api", "webhook", "mobile", "partner"],
}];
const CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "HARD LIMIT: {s} responses are cached for at most {v} seconds.",
    shape: "!#~",
    subjects: &["search", "catalog", "pricing", "profile"],
}];
const FACT_TWINS: &[Twin] = &[Twin {
    text: "FACT: the {s} bucket is {v}.",
    shape: "acme-{s}-@@!#",
    subjects: &["invoices", "avatars", "exports", "backups"],
}];
const GOAL_TWINS: &[Twin] = &[Twin {
    text: "Objective: the {s} migration is done by {v}.",
    shape: "2027-0!-1!",
    subjects: &["orders", "users", "payments", "inventory"],
}];
const PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "Convention: {s} env vars start with {v}.",
    shape: "{s}_%%!_",
    subjects: &["DB", "CACHE", "QUEUE", "MAIL"],
}];

pub const UNSEEN_LABELLED: Bank = Bank {
    name: "unseen-labelled",
    templates: [RULES, CONSTRAINTS, FACTS, GOALS, PREFERENCES],
    twins: [
        RULE_TWINS,
        CONSTRAINT_TWINS,
        FACT_TWINS,
        GOAL_TWINS,
        PREFERENCE_TWINS,
    ],
    lead_ins: &["", "", "", "One more.", "Writing this down so it sticks."],
    trailers: &["", "", "Thanks.", "Cheers."],
    acks: &[
        "Noted, I'll stick to it.",
        "Okay, understood.",
        "Got it, filing that away.",
        "Thanks, will follow.",
    ],
    routine: &[
        "Note: I'm on the train, replies may lag.",
        "Reminder: retro is at the usual time.",
        "Sync notes: the mobile team is still blocked on design.",
        "FYI: ops renewed the staging certs.",
        "Status: reading through the diff.",
        "Update: nothing new on my side.",
        "Side note: the coffee machine on the third floor works again.",
        "PS: thanks for the quick turnaround earlier.",
        "Context: same repo as last week.",
        "Heads up: I'll be in meetings for an hour.",
        "Note: the README screenshots are outdated, not urgent.",
        "Reminder: we still owe QA a demo build.",
        "Status: tests running.",
        "FYI: Slack is flaky today.",
        "Sync notes: product is happy with the wording.",
        "Aside: I like how the new logger reads.",
        "Update: still reading.",
    ],
    decoys: &[
        "FYI: the previous limit of {n} requests was dropped long ago.",
        "Note: someone once set the timeout to {n} seconds, that got reverted.",
        "Reminder: we all said never again after the outage {n} days ago, just venting.",
        "Sync notes: design closed {n} tickets, unrelated to us.",
        "Status: {n} files touched so far.",
        "Update: the import backlog shrank by {n} rows overnight.",
        "Heads up: the offsite planning is in room {n} next week.",
        "Context: under the old policy sessions expired after {n} seconds; it was replaced.",
        "PS: the security training took me {n} minutes.",
        "Note: the benchmark on my laptop said {n} ms, don't trust it.",
        "Side note: I found {n} TODOs while grepping.",
        "FYI: the deadline for the team survey passed {n} days ago.",
        "Status: the build took {n} seconds this time.",
        "Reminder: the rule about PRs over {n} lines was for the old repo.",
        "Sync notes: {n} incidents last quarter, all closed.",
    ],
};
