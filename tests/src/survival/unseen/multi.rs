//! The second held-back half of the multi-statement shape: written on
//! 2026-12-05 by someone who had not read the summarizer, and never edited
//! after. Each text is one item of a person's message that holds two to
//! four of them, followed by a routine line.

use super::super::bank::{Bank, Template, Twin, t};

const RULES: &[Template] = &[
    t(
        "Nobody runs a migration on {v} without a second reviewer on the call.",
        "orders-pg-!#~",
        [
            "After the split, the database that needs a second reviewer for migrations is {v}.",
            "Migrations on {v} get the two-person treatment from here on; the old host is gone.",
        ],
    ),
    t(
        "Anything that touches {v} needs a security review before it merges.",
        "crates/@@@@-!#~",
        [
            "That crate was renamed to {v}, and the security review requirement follows it.",
            "Security review is required for changes under {v} since the reshuffle.",
        ],
    ),
    t(
        "Keep feature work off {v}, it only takes hotfixes.",
        "hotfix/!.#~",
        [
            "We opened {v} for hotfixes, so that's the branch features stay away from.",
            "Hotfix-only branch is {v} as of this morning.",
        ],
    ),
    t(
        "Don't rotate the signing certificate {v} yourself, that's the security team's job.",
        "cert-^^^^^^^^",
        [
            "Security reissued the certificate as {v}; still theirs to rotate, not ours.",
            "The cert we leave alone is {v} after the reissue.",
        ],
    ),
    t(
        "Customer exports may be copied into the sandbox {v} and nowhere else.",
        "sbx-@@@@-!#~",
        [
            "The approved sandbox for customer data became {v}.",
            "Copy customer data to {v} only; the previous sandbox was torn down.",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "Our image has to stay smaller than {v}, the edge nodes pull it on every deploy.",
        "!#~MB",
        [
            "The registry team raised the ceiling: images may be up to {v}.",
            "Image size limit moved to {v} after the edge upgrade.",
        ],
    ),
    t(
        "The maintenance window closes at {v} UTC; if we're not done by then, we roll back.",
        "0!:~5",
        [
            "Ops shortened the maintenance window, it ends at {v} UTC.",
            "Roll back at {v} UTC if the migration hasn't finished.",
        ],
    ),
    t(
        "A single batch may carry at most {v} records.",
        "!#~#",
        [
            "Batches are capped at {v} records from this release on.",
            "Downstream asked for smaller batches, so {v} records max.",
        ],
    ),
    t(
        "Code freeze begins on {v}.",
        "2027-0!-1!",
        [
            "Release management moved the freeze earlier, to {v}.",
            "We freeze on {v} instead, that date is confirmed.",
        ],
    ),
    t(
        "The legacy SOAP service takes {v} simultaneous connections, no more.",
        "!#~",
        [
            "The SOAP service can take {v} concurrent connections after their upgrade.",
            "Connection cap for the legacy SOAP box: {v}.",
        ],
    ),
];

const FACTS: &[Template] = &[
    t(
        "The payment vendor's sandbox is at {v}.",
        "https://sandbox-!#~.@@@@pay.io",
        [
            "The vendor moved us to a fresh sandbox, {v}.",
            "Sandbox URL changed on their side: {v}.",
        ],
    ),
    t(
        "Staging lives in the AWS account {v}.",
        "!#~#!#~#!#~#",
        [
            "Staging was moved into account {v} last night.",
            "The account for staging is {v} after the org cleanup.",
        ],
    ),
    t(
        "Incidents for this service are filed under the epic {v}.",
        "OPS-!#~#",
        [
            "File incidents under {v}, the old epic was closed.",
            "The incident epic is {v} since the new quarter started.",
        ],
    ),
    t(
        "The mobile app still calls API version {v}.",
        "v!.!#",
        [
            "The app team shipped, so the mobile client calls {v} these days.",
            "Mobile is on API {v} after Tuesday's release.",
        ],
    ),
    t(
        "The shared Redis for sessions is {v}.",
        "redis-sess-!#~.@@@.internal",
        [
            "Sessions moved to another Redis, {v}.",
            "The session store is {v} after the failover.",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "Before this sprint closes I want cold start below {v} seconds.",
        "!.#~",
        [
            "Cold start goal got stricter: {v} seconds.",
            "Let's aim for {v} seconds on cold start instead.",
        ],
    ),
    t(
        "Top of the list tomorrow: port {v} to the new HTTP client.",
        "@@@@@_client_!#",
        [
            "Change of plan, port {v} to the new client first.",
            "The module to port next is {v}.",
        ],
    ),
    t(
        "The milestone we're driving at is {v}.",
        "M!#-@@@@@",
        ["We retargeted to milestone {v}.", "Milestone moved: {v}."],
    ),
    t(
        "Get the flaky-test rate under {v} percent this sprint.",
        "!.#",
        [
            "The flaky-rate goal is {v} percent after the retro.",
            "Aim for a flaky rate below {v} percent.",
        ],
    ),
    t(
        "The CSV importer ships with release {v}.",
        "!.!#.~",
        [
            "The importer slipped to release {v}.",
            "We're putting the importer into {v} instead.",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "Prefix PR titles with {v}.",
        "[@@@-!#]",
        [
            "PR titles get {v} in front from here on.",
            "Use {v} as the PR title prefix.",
        ],
    ),
    t(
        "Temporary branches should start with {v}.",
        "wip/@@@!#",
        [
            "Start throwaway branches with {v} instead.",
            "I changed my mind on temp branches, use {v}.",
        ],
    ),
    t(
        "New environment variables get the prefix {v}.",
        "%%%!_",
        [
            "Env var prefix for new ones: {v}.",
            "Let's switch the prefix for new env vars to {v}.",
        ],
    ),
    t(
        "Post the weekly summary in #{v}, not in DMs.",
        "@@@@-!#~",
        [
            "The weekly summary goes to #{v} after the channel cleanup.",
            "Weekly summary channel is #{v} now.",
        ],
    ),
    t(
        "I'd like new list endpoints to default to a page size of {v}.",
        "!#~",
        [
            "Default page size for new list endpoints: {v}.",
            "Make it {v} per page by default on the new endpoints.",
        ],
    ),
];

const RULE_TWINS: &[Twin] = &[Twin {
    text: "Only the {s} pipeline may write to the bucket {v}.",
    shape: "{s}-@@@@-!#~",
    subjects: &["ingest", "reporting", "backup", "ml"],
}];
const CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "The {s} worker gets at most {v} of memory.",
    shape: "!#~0Mi",
    subjects: &["thumbnail", "pdf", "email", "search"],
}];
const FACT_TWINS: &[Twin] = &[Twin {
    text: "The {s} read replica is {v}.",
    shape: "{s}-ro-!#~.db.internal",
    subjects: &["eu", "us", "apac", "latam"],
}];
const GOAL_TWINS: &[Twin] = &[Twin {
    text: "Bring the {s} page under {v} ms at p75.",
    shape: "!#~",
    subjects: &["home", "search", "cart", "account"],
}];
const PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "Tag {s} alerts with the label {v}.",
    shape: "{s}-@@!#",
    subjects: &["latency", "disk", "cert", "quota"],
}];

pub const UNSEEN_MULTI: Bank = Bank {
    name: "unseen-multi",
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
        "A few things from standup:",
        "Before you continue, some notes:",
        "From the review just now:",
        "Ops asked me to pass these along:",
    ],
    trailers: &["", "", "That's all for now."],
    acks: &[
        "Understood, I'll respect each of those.",
        "Okay, noting all of them before I continue.",
        "Right, I'll factor those in.",
        "Thanks, that's clear on every point.",
    ],
    routine: &[
        "Okay, back to the failing test.",
        "Carry on with the cleanup.",
        "Tell me when CI passes.",
        "Run the formatter again when you're done.",
        "Sounds good, keep at it.",
        "Can you show me what changed so far?",
        "Right, importer time again.",
        "Good, on to the next file.",
        "I'm reading the logs in parallel, continue.",
        "Alright, what's left on the list?",
        "No rush, take your time.",
        "Let's pick up where we left off.",
        "That matches what I expected.",
        "Shout when the build is done.",
        "Go ahead with the next step.",
        "Sorry, I was in a call. Where were we?",
    ],
    decoys: &[
        "Back in March the deploy log grew by {n} lines in a single night, that's history.",
        "The old rule of thumb was a {n} ms retry delay, no one sticks to it these days.",
        "I skimmed {n} lines of the incident report, nothing relevant to us.",
        "The previous vendor limited us to {n} calls a minute, glad that's over.",
        "Someone filed ticket {n} last year asking for a permanent freeze; it never happened.",
        "The retro had {n} sticky notes, most of them about coffee.",
        "The very first prototype ate {n} MB of RAM, funny in hindsight.",
        "The audit report from last spring ran to {n} lines, every finding closed since.",
        "I think the wiki has {n} pages on deployment, mostly stale.",
        "The incident channel has {n} messages in it, way too many.",
        "That old cron fired {n} times a day before anyone noticed.",
        "My laptop build took {n} seconds, but the CI number is what counts.",
        "The marketing site got {n} visits yesterday, unrelated but fun.",
        "The old repo required two approvals on PRs above {n} lines; we dropped that years ago.",
        "The vendor's docs mention a limit of {n}, but that's for their enterprise tier.",
    ],
};
