//! The tuned bank: the phrases of the first four families (chat, talk,
//! terse, corpus). The summarizer was written while these were in view, so
//! what they measure is an upper bound; the untuned and held-back banks are
//! the check on it.

use super::{Bank, Template, Twin, t};

/// The bank of the chat, talk, terse and corpus families. No routine lines
/// or decoys of its own: those families' filler is the generator's.
pub const TUNED: Bank = Bank {
    name: "tuned",
    templates: [RULES, CONSTRAINTS, FACTS, GOALS, PREFERENCES],
    twins: TWINS,
    lead_ins: LEAD_INS,
    trailers: TRAILERS,
    acks: ACKS,
    routine: &[],
    decoys: &[],
};

const RULES: &[Template] = &[
    t(
        "Never run `git push --force` on branch {v}.",
        "release-%%%!",
        [
            "Correction: the branch you must never force-push is now {v}.",
            "Actually, the protected branch is {v} from now on, so never force-push that one.",
        ],
    ),
    t(
        "Don't touch the file {v} without asking me first.",
        "config/prod-*^^!.yaml",
        [
            "Update: the config file you must not touch without asking is {v} now.",
            "Scratch that, the hands-off file is {v}; ask me before editing it.",
        ],
    ),
    t(
        "Always run `{v}` before committing.",
        "make check-!###",
        [
            "Change of plan: the command to run before every commit is now `{v}`.",
            "From now on run `{v}` before each commit instead.",
        ],
    ),
    t(
        "Never call the live payments API; use the sandbox key {v} for every request.",
        "sk_test_****!#",
        [
            "The sandbox key was rotated: use {v} for payment requests from now on.",
            "Swap the payments sandbox key for {v}.",
        ],
    ),
    t(
        "Do not delete anything under {v}, those are the only copies.",
        "/srv/archive/@@!#",
        [
            "Correction: the directory you must not delete from is {v}.",
            "Actually the only copies moved, so the protected directory is {v} now.",
        ],
    ),
    t(
        "Never restart the service {v} during business hours.",
        "svc-@@@-!#",
        [
            "Update: the service that must not be restarted during business hours is {v}.",
            "Make that {v}: that is the one not to restart during the day.",
        ],
    ),
    t(
        "Don't merge anything into {v} until QA signs off.",
        "hotfix/%%-!###",
        [
            "The QA-gated branch is now {v}; nothing goes in without sign-off.",
            "Correction: the branch frozen until QA signs off is {v}.",
        ],
    ),
    t(
        "Never disable the feature flag {v}, other teams depend on it.",
        "ff_@@@@_!#",
        [
            "Update: the flag that must stay enabled is {v}.",
            "Actually the flag nobody may turn off is {v} now.",
        ],
    ),
    t(
        "You must not rotate the credentials at vault path {v} yourself, ping security instead.",
        "secret/team-!#@/db",
        [
            "The credentials you must leave to security moved to vault path {v}.",
            "Correction on the vault path you must not rotate: it is {v}.",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "The total budget is capped at {v}.",
        "$!,###",
        [
            "Correction: the budget cap is now {v}.",
            "Actually, make that cap {v}.",
        ],
    ),
    t(
        "Responses must stay under {v} words.",
        "!##",
        [
            "New limit: keep responses under {v} words.",
            "Let's change the word limit for responses to {v}.",
        ],
    ),
    t(
        "The deadline is {v} UTC.",
        "2026-0!-1# 1!:~5",
        [
            "The deadline moved to {v} UTC.",
            "Correction: we now have until {v} UTC.",
        ],
    ),
    t(
        "Keep the p99 latency of the checkout endpoint below {v} ms.",
        "!#!",
        [
            "Tighter target: checkout p99 latency must now stay below {v} ms.",
            "The checkout latency bound at p99 is {v} ms from now on.",
        ],
    ),
    t(
        "The Docker image must not exceed {v} MB.",
        "!#!",
        [
            "The image size limit changed to {v} MB.",
            "Correction: the Docker image may be at most {v} MB.",
        ],
    ),
    t(
        "We can make at most {v} calls per hour to the vendor API.",
        "!,#!#",
        [
            "The vendor raised our quota: at most {v} API calls per hour now.",
            "Correction on the vendor quota: {v} calls per hour.",
        ],
    ),
    t(
        "Each worker may use at most {v} MiB of memory.",
        "!#!#",
        [
            "The memory limit per worker is now {v} MiB.",
            "Make the per-worker memory cap {v} MiB instead.",
        ],
    ),
    t(
        "Test coverage must stay at or above {v}%.",
        "!#.!",
        [
            "The coverage floor is now {v}%.",
            "Correction: coverage may not drop below {v}%.",
        ],
    ),
    t(
        "Batches are fixed at {v} rows, no more.",
        "!,!#0",
        [
            "Change the fixed batch size to {v} rows.",
            "Update: batches are {v} rows from now on.",
        ],
    ),
];

const FACTS: &[Template] = &[
    t(
        "The base commit is {v}.",
        "^^^^^^^^^",
        [
            "I rebased: the base commit is now {v}.",
            "Correction, base the work on commit {v}.",
        ],
    ),
    t(
        "The staging DB host is {v}.",
        "db-!###.internal",
        [
            "Staging DB moved, the host is {v} now.",
            "The staging database now lives at {v}.",
        ],
    ),
    t(
        "Ticket {v} owns this work.",
        "PROJ-!###",
        [
            "This work moved to ticket {v}.",
            "Track it under ticket {v} instead.",
        ],
    ),
    t(
        "The customer account for the repro is {v}.",
        "acct_*****!",
        [
            "Use the customer account {v} for the repro instead.",
            "Correction: the repro account is {v}.",
        ],
    ),
    t(
        "The failing CI job is number {v}.",
        "!#####",
        [
            "The CI job to look at is now number {v}.",
            "Sorry, wrong job: the failing one is {v}.",
        ],
    ),
    t(
        "Send the header X-Api-Version: {v} with every request.",
        "v!.!#.!",
        [
            "The API version header value is now {v}.",
            "Correction: X-Api-Version must be {v}.",
        ],
    ),
    t(
        "Build artifacts go to the bucket {v}.",
        "art-@@@@-!##",
        [
            "The artifact bucket was renamed to {v}.",
            "Artifacts go to {v} now, not the old bucket.",
        ],
    ),
    t(
        "The on-call alias for this service is {v}.",
        "@@@-oncall-!#",
        [
            "On-call changed, the alias is {v} now.",
            "Page {v} instead, that is the new on-call alias.",
        ],
    ),
    t(
        "The staging cluster's kube context is {v}.",
        "stg-@@!-%%#",
        [
            "The staging kube context is now {v}.",
            "Correction: use the kube context {v} for staging.",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "The goal is to migrate the billing service to queue {v}.",
        "q-!###",
        [
            "Change of goal: migrate billing to queue {v} instead.",
            "Correction: the queue billing should end up on is {v}.",
        ],
    ),
    t(
        "Next, wire the retry handler to endpoint {v}.",
        "/v2/hooks/!###",
        [
            "Actually wire the retry handler to {v}.",
            "The retry handler's endpoint is {v} now.",
        ],
    ),
    t(
        "Still open: do we deploy to region {v} or keep the current one?",
        "eu-west-@!#",
        [
            "On the open region question: the candidate region is {v} now.",
            "For the region decision, consider {v} instead.",
        ],
    ),
    t(
        "The end state we want is every job reporting to dashboard {v}.",
        "dash-%%%!#",
        [
            "The dashboard every job should report to is {v} now.",
            "Change of target: jobs report to dashboard {v}.",
        ],
    ),
    t(
        "When that's done, the next step is to cut release {v}.",
        "!.!#.!-rc!",
        [
            "The release to cut next is {v} now.",
            "Correction: after that we cut {v}.",
        ],
    ),
    t(
        "Open question for later: should the endpoint {v} be deprecated?",
        "/legacy/@@!#",
        [
            "The deprecation question is about {v} now, not the other endpoint.",
            "Correction on the open question: it's whether to deprecate {v}.",
        ],
    ),
    t(
        "Our milestone is to get the flaky test {v} green.",
        "test_@@@@_!#",
        [
            "The milestone changed: get the flaky test {v} green.",
            "The flaky test we need green is {v} now.",
        ],
    ),
    t(
        "The plan is to replace the cron job {v} with a queue consumer.",
        "cron-@@@-!#",
        [
            "The cron job to replace with a consumer is {v}.",
            "Correction: replace cron job {v} instead.",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "Write it in Python, not JavaScript; name modules with prefix {v}.",
        "@@!#_",
        [
            "Let's use the module prefix {v} instead.",
            "Rename the module prefix to {v}.",
        ],
    ),
    t(
        "Sign off every summary as '{v}'.",
        "M. Okafor-!##",
        [
            "Sign off as '{v}' from now on.",
            "Change the sign-off to '{v}'.",
        ],
    ),
    t(
        "Name feature branches {v}/<short-description>.",
        "feat-@@!#",
        [
            "Use {v}/<short-description> for branch names instead.",
            "The branch prefix is {v} now.",
        ],
    ),
    t(
        "Put generated files under the directory {v}.",
        "gen_@@@!",
        [
            "Generated files go under {v} now.",
            "Move the generated output to {v} instead.",
        ],
    ),
    t(
        "Start every commit message with {v}.",
        "[%%%-!##]",
        [
            "The commit message prefix is {v} now.",
            "Switch the commit prefix to {v}.",
        ],
    ),
    t(
        "I'd like the PRs you open labelled {v}.",
        "team-@@@@-!",
        [
            "Label the PRs {v} instead.",
            "The PR label is {v} from now on.",
        ],
    ),
    t(
        "In examples, call the test database {v}.",
        "testdb_@@@!",
        [
            "Use {v} as the example database name instead.",
            "Rename the example test database to {v}.",
        ],
    ),
    t(
        "Tag log lines from the new code with {v}.",
        "LOG-%%%!",
        [
            "The log tag for the new code is {v} now.",
            "Change the log tag to {v}.",
        ],
    ),
];

const TWINS: [&[Twin]; 5] = [
    &[
        Twin {
            text: "Never delete the table {v}.",
            shape: "{s}_@@!#",
            subjects: &["orders", "invoices", "customers", "payments", "refunds"],
        },
        Twin {
            text: "Never drop the {s} replica {v} without a snapshot.",
            shape: "rep-@@!#",
            subjects: &["primary", "analytics", "reporting", "archive"],
        },
    ],
    &[
        Twin {
            text: "The {s} queue may hold at most {v} messages.",
            shape: "!,#!#",
            subjects: &["email", "sms", "webhook", "export", "audit"],
        },
        Twin {
            text: "Uploads to the {s} bucket are limited to {v} MB each.",
            shape: "!#!",
            subjects: &["images", "logs", "backups", "reports"],
        },
    ],
    &[
        Twin {
            text: "The {s} service listens on port {v}.",
            shape: "!#!#",
            subjects: &["auth", "search", "billing", "reports", "gateway"],
        },
        Twin {
            text: "The {s} team's channel is {v}.",
            shape: "{s}-team-@@!!",
            subjects: &["data", "infra", "mobile", "payments"],
        },
    ],
    &[
        Twin {
            text: "Next, move the {s} job to worker pool {v}.",
            shape: "pool-@@!#",
            subjects: &["nightly", "export", "cleanup", "reindex"],
        },
        Twin {
            text: "Open question: should the {s} endpoint move to {v}?",
            shape: "/api/v!/{s}-@@!",
            subjects: &["orders", "users", "search", "billing"],
        },
    ],
    &[
        Twin {
            text: "Prefix {s} test files with {v}.",
            shape: "@@@!_",
            subjects: &["unit", "integration", "e2e", "smoke"],
        },
        Twin {
            text: "Name {s} branches {v}-<ticket>.",
            shape: "{s}-@@!#",
            subjects: &["feature", "bugfix", "release", "chore"],
        },
    ],
];

/// What a person says around a statement, so it is not always a message of
/// its own words alone.
const LEAD_INS: &[&str] = &[
    "",
    "",
    "",
    "",
    "One more thing: ",
    "Also, ",
    "Before you go on: ",
    "Quick note: ",
    "FYI, ",
    "Important: ",
    "Ok, and ",
    "By the way, ",
];
const TRAILERS: &[&str] = &[
    "",
    "",
    "",
    " Thanks.",
    " Carry on.",
    " Then continue.",
    " Ok?",
];

/// The assistant's answer to a statement, when the conversation needs one
/// before the next user message. Never repeats the value.
const ACKS: &[&str] = &[
    "Noted.",
    "Understood.",
    "Got it.",
    "OK, I'll keep that in mind.",
    "Understood, continuing.",
    "Noted, I'll follow that.",
    "Will do.",
];
