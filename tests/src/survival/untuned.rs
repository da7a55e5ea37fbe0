//! The untuned bank: phrases written apart from the summarizer (without
//! looking at its code or word lists) and apart from the tuned bank, in the
//! forms people actually use: labelled statements in any case (`RULE:`,
//! `note:`, `Constraint:`), a few in other languages, declarative facts with
//! no modal verb, open questions, progress states, soft preferences. Of each
//! template's two updates, the first restates the subject with its new value
//! and no word saying it changed; the second says so in its own words. No
//! fixed text holds a digit or a path: those would look like values.
//!
//! Editing it is allowed (it is not the held-back bank), but the point is
//! lost if it is edited towards the summarizer: when the summarizer learns
//! these phrasings, write new ones, from scratch.

use super::{Bank, Template, Twin, t};

/// The bank of the untuned family ([`super::untuned_cases`]).
pub const UNTUNED: Bank = Bank {
    name: "untuned",
    templates: [RULES, CONSTRAINTS, FACTS, GOALS, PREFERENCES],
    twins: TWINS,
    lead_ins: LEAD_INS,
    trailers: TRAILERS,
    acks: ACKS,
    routine: ROUTINE,
    decoys: DECOYS,
};

const RULES: &[Template] = &[
    t(
        "RULE: nothing lands on the branch {v} without a reviewed merge request.",
        "trunk-@@@!#",
        [
            "Reviewed merge requests only, on {v}.",
            "Change to the review rule: the branch it guards is {v}.",
        ],
    ),
    t(
        "Leave the tenant {v} alone. It belongs to a paying customer and we have no consent to modify it.",
        "tnt-*****!",
        [
            "Hands off tenant {v}; that one belongs to a paying customer.",
            "The customer tenant that is off limits is {v}, not the one I gave you earlier.",
        ],
    ),
    t(
        "important: the migration runner {v} is started by the on-call engineer and by nobody else.",
        "mig-@@!#@",
        [
            "Only on-call starts the migration runner {v}.",
            "Different runner for the on-call-only rule: it is {v}.",
        ],
    ),
    t(
        "Regla: no se borra nada del bucket {v}.",
        "cold-@@@@-!#",
        [
            "Nothing gets deleted from {v}, ever.",
            "The bucket where deleting is forbidden is {v} as of today.",
        ],
    ),
    t(
        "Deploys wait for a human thumbs-up in the channel {v}, no exceptions.",
        "appr-@@@!#",
        [
            "Deploy approvals happen in {v}.",
            "We moved deploy approvals over to the channel {v}.",
        ],
    ),
    t(
        "REMINDER: the signing key {v} stays on the build server and never gets copied to a laptop.",
        "key-^^^^^^^",
        [
            "The signing key that never leaves the build server is {v}.",
            "They reissued the signing key; {v} is the one that stays put on the build server.",
        ],
    ),
    t(
        "IMPORTANT: keep the cleanup script away from the account {v} under any circumstances.",
        "acc-!###-@@",
        [
            "The account the cleanup script keeps away from: {v}.",
            "As of this morning the account the cleanup script must skip is {v}.",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "Constraint: the whole run has to finish within {v} seconds.",
        "!#!#",
        [
            "The run's time limit: {v} seconds.",
            "We loosened the limit on the run, it may take up to {v} seconds.",
        ],
    ),
    t(
        "The trial may cost us {v} euros this month and not a cent more.",
        "!#!#",
        [
            "Trial spend for the month tops out at {v} euros.",
            "Finance revised the trial ceiling to {v} euros for the month.",
        ],
    ),
    t(
        "CONSTRAINT: payloads we send to the partner stay below {v} kilobytes.",
        "!#!#",
        [
            "Partner payload ceiling: {v} kilobytes.",
            "The partner raised the payload cap, below {v} kilobytes is fine.",
        ],
    ),
    t(
        "The quarterly report is due {v}, Lisbon time.",
        "20!#-0!-1#",
        [
            "Due date of the quarterly report: {v}, Lisbon time.",
            "They pushed the quarterly report back to {v}, Lisbon time.",
        ],
    ),
    t(
        "Contrainte : pas plus de {v} connexions ouvertes vers la base.",
        "!#!#",
        [
            "Open connections to the database: {v}, and that's the ceiling.",
            "After the upgrade the database takes up to {v} open connections from us.",
        ],
    ),
    t(
        "limit: no request waits in the queue longer than {v} milliseconds.",
        "!#!#",
        [
            "Queue wait ceiling, in milliseconds: {v}.",
            "Product tightened the queue wait bound to {v} milliseconds.",
        ],
    ),
    t(
        "note: we're allowed {v} requests a minute against the geocoding service.",
        "!,#!#",
        [
            "Geocoding allowance: {v} requests a minute.",
            "The geocoding quota went up to {v} requests a minute.",
        ],
    ),
];

const FACTS: &[Template] = &[
    t(
        "FACT: production Postgres lives on {v}.",
        "pg-@@!#.corp",
        [
            "Production Postgres: {v}.",
            "We failed production Postgres over during the night; it sits on {v}.",
        ],
    ),
    t(
        "The contract with the vendor has the reference {v}.",
        "VC-%%!##!",
        [
            "Vendor contract reference: {v}.",
            "Legal reissued the vendor contract under the reference {v}.",
        ],
    ),
    t(
        "Fact: the mobile build that crashes on start is {v}.",
        "!.!#.!-b!##",
        [
            "The mobile build crashing on start is {v}.",
            "QA says it is really build {v} that crashes on start.",
        ],
    ),
    t(
        "Our load balancer answers at {v}.",
        "1!.!#.!#.!#",
        [
            "Load balancer address: {v}.",
            "After the network change the load balancer answers at {v}.",
        ],
    ),
    t(
        "Hinweis: der Testnutzer heißt {v}.",
        "qa_@@@@!#",
        [
            "The test user is {v}.",
            "We replaced the test user, log in as {v}.",
        ],
    ),
    t(
        "The error we keep running into carries the code {v}.",
        "E%%!#!",
        [
            "Code of the recurring error: {v}.",
            "Turns out the real error code is {v}.",
        ],
    ),
    t(
        "Invoices for this client go out under the cost centre {v}.",
        "CC-!#!#-%",
        [
            "Cost centre on this client's invoices: {v}.",
            "Accounting moved this client to the cost centre {v}.",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "GOAL: by the end of the sprint every nightly export lands in the warehouse schema {v}.",
        "wh_@@@!#",
        [
            "Sprint goal: the nightly exports land in {v}.",
            "Retarget the nightly exports at the schema {v}.",
        ],
    ),
    t(
        "Progress: steps one to three of five are done, next up is {v}.",
        "task-@@!#",
        [
            "Three of the five steps done; the next one is {v}.",
            "Plan changed, after step three we take on {v}.",
        ],
    ),
    t(
        "Undecided so far: do we keep the cache layer {v} or drop it?",
        "cache-@@@!",
        [
            "The cache layer we're unsure about keeping is {v}.",
            "Put differently, the undecided one: keep or drop {v}?",
        ],
    ),
    t(
        "todo: port the reporting job onto the scheduler {v}.",
        "sched-%%!#",
        [
            "The reporting job's target scheduler is {v}.",
            "Port the reporting job onto {v} rather than the scheduler I named first.",
        ],
    ),
    t(
        "We're aiming for the dashboard {v} to stay green for a whole week.",
        "board-@@@!#",
        [
            "The dashboard that should stay green all week: {v}.",
            "Different board to watch for the green week: {v}.",
        ],
    ),
    t(
        "Ziel: am Ende läuft der Import über die Pipeline {v}.",
        "pipe-@@!#@",
        [
            "The import is meant to end up on the pipeline {v}.",
            "New target pipeline for the import: {v}.",
        ],
    ),
    t(
        "Still unresolved: whether the region {v} gets the read replica.",
        "ap-@@@@-!",
        [
            "The region in question for the read replica is {v}.",
            "We're weighing {v} for the read replica instead now.",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "I'd rather the helper functions all started with {v}.",
        "@@!@_",
        [
            "Helper function prefix: {v}.",
            "On second thought, start the helper functions with {v}.",
        ],
    ),
    t(
        "PREFERENCE: our changelog entries go under the heading {v}.",
        "Notes-@@!#",
        [
            "Changelog heading for our entries: {v}.",
            "Let's file changelog entries under {v} going forward.",
        ],
    ),
    t(
        "If it's all the same to you, tag the container images {v}.",
        "img-@@@!#",
        [
            "Container image tag: {v}.",
            "Please tag the images {v} from here on.",
        ],
    ),
    t(
        "Preference: ask the group {v} to review my pull requests.",
        "grp-@@@@!",
        [
            "Reviews on my pull requests go to {v}.",
            "Ask {v} for reviews rather than the group I named before.",
        ],
    ),
    t(
        "My preference is fixture files named like {v}.",
        "fx_@@@@_!#",
        [
            "Fixture files named like {v}, please.",
            "Switch the fixture naming to {v}.",
        ],
    ),
    t(
        "Préférence : les messages de commit en anglais, avec le préfixe {v}.",
        "[%%!#]",
        [
            "Commit messages in English, prefixed {v}.",
            "Use {v} as the commit prefix from this point on.",
        ],
    ),
    t(
        "It would be nice if temporary tables carried the suffix {v}.",
        "_tmp@@!#",
        [
            "Temporary tables get the suffix {v}.",
            "Let's change the temp table suffix to {v}.",
        ],
    ),
];

const TWINS: [&[Twin]; 5] = [
    &[
        Twin {
            text: "RULE: the {s} stream {v} is append-only, nobody rewrites it.",
            shape: "{s}-@@!#",
            subjects: &["checkout", "signup", "alerting", "telemetry", "ledger"],
        },
        Twin {
            text: "Don't rotate the {s} credentials kept under {v} yourself.",
            shape: "kv-@@@!#",
            subjects: &["staging", "billing", "partner", "backup"],
        },
    ],
    &[
        Twin {
            text: "The {s} nightly job gets a budget of {v} CPU minutes.",
            shape: "!#!#",
            subjects: &["reindex", "backup", "export", "compaction", "thumbnail"],
        },
        Twin {
            text: "Constraint: the {s} endpoint answers within {v} milliseconds.",
            shape: "!#!#",
            subjects: &["search", "login", "cart", "profile"],
        },
    ],
    &[
        Twin {
            text: "The {s} suite is run with `{v}`.",
            shape: "just {s}-@@!#",
            subjects: &["unit", "contract", "browser", "migration", "smoke"],
        },
        Twin {
            text: "FACT: the {s} queue is served by the broker {v}.",
            shape: "mq-@@!#",
            subjects: &["email", "invoice", "push", "webhook"],
        },
    ],
    &[
        Twin {
            text: "Next: put the {s} service behind the gateway route {v}.",
            shape: "rt-{s}-@@!",
            subjects: &["search", "billing", "upload", "profile"],
        },
        Twin {
            text: "Unresolved: should the {s} report move to the warehouse table {v}?",
            shape: "rpt_@@@!#",
            subjects: &["weekly", "churn", "revenue", "inventory"],
        },
    ],
    &[
        Twin {
            text: "I'd rather the {s} logs went to the index {v}.",
            shape: "{s}-@@!#",
            subjects: &["api", "worker", "cron", "proxy"],
        },
        Twin {
            text: "Preference: {s} feature flags get the prefix {v}.",
            shape: "@@@!_",
            subjects: &["mobile", "web", "admin", "partner"],
        },
    ],
];

const LEAD_INS: &[&str] = &[
    "",
    "",
    "",
    "",
    "Oh, and ",
    "Side note: ",
    "Heads up: ",
    "Before I forget: ",
    "For the record, ",
    "Just so you know, ",
    "Right, ",
];

const TRAILERS: &[&str] = &[
    "",
    "",
    "",
    " Cheers.",
    " That's all.",
    " Back to it.",
    " Makes sense?",
];

const ACKS: &[&str] = &[
    "Okay.",
    "Right, noted.",
    "Sounds good.",
    "Understood, I'll keep to that.",
    "Got it, carrying on.",
    "Alright.",
    "Makes sense, thanks.",
];

const ROUTINE: &[&str] = &[
    "Give me a minute, I want to reread the retry code myself.",
    "The pipeline is still going, hang on.",
    "Same as before, keep going with the current approach.",
    "Can you summarise where we are so far?",
    "Let me check with the team and get back to you.",
    "Okay, that part looks fine to me.",
    "Run the whole suite once more, please.",
    "I'm back, where were we?",
    "Hmm, let's not worry about that for the moment.",
    "Please double-check the last change before moving on.",
    "Good progress, continue.",
    "Send the changes over when they are ready to look at.",
    "No rush on this one.",
    "I'll review it properly after lunch.",
    "Leave the formatting for the end.",
    "That error again? I'll dig through the output myself.",
];

const DECOYS: &[&str] = &[
    "Out of curiosity I counted {n} stale branches on the remote, no action needed.",
    "Back when I started we had a rule never to deploy on Fridays; that was {n} releases ago and nobody follows it anymore.",
    "The vendor's status page lists {n} incidents this year, just for context.",
    "Someone on the forum claims a limit of {n} requests, I doubt it applies to us.",
    "Our old budget spreadsheet had {n} rows and most of them were empty.",
    "I read that the maximum was {n} at some other company; irrelevant here.",
    "Yesterday's standup ran {n} seconds over, as usual.",
    "The intern's branch had {n} commits, all of them reverted since.",
    "In the previous project we must have rewritten that parser {n} times.",
    "Ignore the warning count, it was {n} before you touched anything.",
    "The linter used to enforce a cap of {n} characters per line; we dropped that rule long ago.",
    "Fun fact: the legacy system had {n} tables nobody could explain.",
    "The ticket mentions a deadline on day {n}, but that was for the other team.",
    "My browser has {n} tabs open, don't judge.",
    "The demo last week showed {n} errors on screen, none of them real.",
    "At some point there was a goal of {n} signups; it was abandoned.",
];
