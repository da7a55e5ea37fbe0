//! Held-back bank: labelled routine beside labelled rules. The person puts
//! labels on chatter ("Note:", "Reminder:", "Sync notes:") as on the
//! statements that bind ("COMPLIANCE:", "NON-NEGOTIABLE:", "Known value:").
//!
//! Written 2026-12-05, before the summarizer work on this shape, by someone
//! who had not read the summarizer. Never edited (a test pins its hash).

use crate::survival::bank::{Bank, Template, Twin, t};

const RULES: &[Template] = &[
    t(
        "COMPLIANCE: card numbers are only ever handled inside {v}, nowhere else.",
        "pci-zone-@@!#",
        [
            "COMPLIANCE: the card data zone is {v} after the audit.",
            "The only place card numbers may be handled is {v} now.",
        ],
    ),
    t(
        "[RULE] production shell access goes through the bastion {v} and nothing else",
        "bastion-!#~.@@@.acme.io",
        [
            "[RULE] new bastion for prod shells: {v}",
            "Prod shell access goes via {v} now, the old bastion is decommissioned.",
        ],
    ),
    t(
        "NON-NEGOTIABLE: the key {v} is never used outside the signing service.",
        "kms-@@@@-!#~#",
        [
            "NON-NEGOTIABLE, updated: the signing-service-only key is {v}.",
            "Key rotation happened; {v} is the one that stays inside the signing service.",
        ],
    ),
    t(
        "Policy — the firewall group {v} is managed by netops, we never edit it.",
        "sg-^^^^^^^^",
        [
            "Policy — netops' firewall group is {v} now, still not ours to edit.",
            "The group netops owns became {v}.",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "NON-NEGOTIABLE: Java {v}, the app server doesn't support anything later.",
        "1!.0.!#",
        [
            "NON-NEGOTIABLE moved up: Java {v}.",
            "App server was upgraded, Java {v} is the ceiling now.",
        ],
    ),
    t(
        "Hard requirement — pages render in under {v} on a cold cache.",
        "!.#~s",
        [
            "Hard requirement — cold-cache render budget is {v} now.",
            "Cold render has to come in under {v} now.",
        ],
    ),
    t(
        "Cap: the batch API accepts {v} items per call, more gets rejected.",
        "!#~#",
        [
            "Cap: batch calls take up to {v} items now.",
            "The batch API's per-call ceiling is {v} after their upgrade.",
        ],
    ),
    t(
        "CUTOFF: nothing merges after {v} for this release.",
        "202!-1!-1!T1!:00Z",
        [
            "CUTOFF moved: {v}.",
            "Merges for this release stop at {v} now.",
        ],
    ),
];

const FACTS: &[Template] = &[
    t(
        "Known value: the tenant we test against is {v}.",
        "tenant-!#~#-@@@",
        [
            "Known value changed: the test tenant is {v}.",
            "We test against {v} now.",
        ],
    ),
    t(
        "Fixed point: the accounting system's API version is {v}.",
        "20!#-0!-1!.@@@@",
        [
            "Fixed point, revised: accounting API is at {v}.",
            "Accounting upgraded their API to {v}.",
        ],
    ),
    t(
        "RECORD: the incident this all came from is {v}.",
        "INC-!#~##",
        [
            "RECORD: it's been re-filed as {v}.",
            "The incident number is {v} after the merge of the two tickets.",
        ],
    ),
    t(
        "Known value: the warehouse connection string user is {v}.",
        "svc_@@@@_!#~",
        [
            "Known value: warehouse user is {v} now.",
            "We connect to the warehouse as {v} after the credential reset.",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "Target: the nightly import finishes in under {v} minutes.",
        "!#~",
        [
            "Target: nightly import under {v} minutes, revised.",
            "The import should be done in {v} minutes now.",
        ],
    ),
    t(
        "Decision: we're migrating off the queue {v} first.",
        "q-@@@@@-!#",
        [
            "Decision revised: {v} is the first queue we migrate off.",
            "First queue to retire is {v}.",
        ],
    ),
    t(
        "OBJECTIVE: get the flaky rate of the suite below {v} percent.",
        "~.!#",
        [
            "OBJECTIVE: flaky rate below {v} percent, they tightened it.",
            "The flakiness goal is {v} percent now.",
        ],
    ),
    t(
        "Open item: decide whether {v} stays in the public API.",
        "@@@@@_!#~()",
        [
            "Open item now: does {v} stay in the public API?",
            "The open API question is about {v} now.",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "House style: SQL files are named {v}.",
        "V!#__@@@@.sql",
        [
            "House style: SQL files are named {v} now.",
            "Name the SQL files like {v}.",
        ],
    ),
    t(
        "Convention: feature toggles live under the key {v}.",
        "toggles.@@@@!#",
        [
            "Convention: toggles sit under {v} now.",
            "Toggles go under {v}.",
        ],
    ),
    t(
        "Preference — the review checklist is {v}, link it in every PR.",
        "wiki/@@@@-checklist-!#",
        [
            "Preference — link {v} as the checklist now.",
            "The checklist to link is {v}.",
        ],
    ),
    t(
        "Style: CLI flags are spelled like {v}.",
        "--@@@@-@@@!",
        [
            "Style: CLI flags look like {v} now.",
            "Spell CLI flags like {v}.",
        ],
    ),
];

const RULE_TWINS: &[Twin] = &[Twin {
    text: "COMPLIANCE: the {s} logs are shipped only to {v}.",
    shape: "siem-{s}-!#~",
    subjects: &["auth", "payment", "admin", "export"],
}];

const CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "Cap: the {s} lambda gets {v} of memory.",
    shape: "!#~MB",
    subjects: &["thumbnail", "webhook", "digest", "resize"],
}];

const FACT_TWINS: &[Twin] = &[Twin {
    text: "Known value: the {s} team's Jira key is {v}.",
    shape: "%%%!",
    subjects: &["platform", "mobile", "growth", "data"],
}];

const GOAL_TWINS: &[Twin] = &[Twin {
    text: "Target: the {s} page loads in {v}.",
    shape: "!#~ms",
    subjects: &["home", "search", "profile", "cart"],
}];

const PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "House style: {s} errors carry the prefix {v}.",
    shape: "{s}-E!#",
    subjects: &["parser", "network", "storage", "auth"],
}];

pub const HELD_LABELLED: Bank = Bank {
    name: "held-labelled",
    templates: [RULES, CONSTRAINTS, FACTS, GOALS, PREFERENCES],
    twins: [
        RULE_TWINS,
        CONSTRAINT_TWINS,
        FACT_TWINS,
        GOAL_TWINS,
        PREFERENCE_TWINS,
    ],
    lead_ins: &["", "", "", "", "Also:", "Adding this:"],
    trailers: &["", "", "", "That one stands.", "ty"],
    acks: &[
        "Okay.",
        "Noted.",
        "Understood.",
        "Got it, thanks.",
        "Right.",
    ],
    routine: &[
        "Note: lunch order closes at noon.",
        "Reminder: the retro doc needs your two lines.",
        "Sync notes: platform is still on the upgrade, nothing for us.",
        "[status] reading through the importer still.",
        "FYI - the VPN is flaky again.",
        "Update: I'm on the bug bash for an hour, keep going.",
        "Note: the old README screenshots are outdated, not urgent.",
        "Reminder: laptops get patched tonight.",
        "Log: tried the other branch locally, same thing.",
        "Sync notes: no blockers from QA.",
        "[status] waiting on the review.",
        "Note: the meeting room changed.",
        "FYI - coffee machine is fixed.",
        "Update: back from the bug bash.",
        "[status] still on the importer, nothing new.",
    ],
    decoys: &[
        "FYI - the bug bash found {n} issues, mostly cosmetic.",
        "Sync notes: the data team is at {n} open tickets.",
        "Note: the staging disk was at {n} percent yesterday, someone cleaned it.",
        "[status] read {n} lines of the importer so far.",
        "Log: the old job printed {n} warnings and nobody cared.",
        "Reminder: expense reports over {n} need a second signature.",
        "Update: the bug bash had {n} participants.",
        "Note: the old importer took {n} seconds per file, for comparison only.",
        "FYI - {n} people are out this week.",
        "Log: {n} retries in the last run, then it gave up, which is fine.",
        "Sync notes: QA burned through {n} test accounts.",
        "[status] {n} files left to skim.",
        "Reminder: the team lunch is for {n} people, RSVP.",
        "Note: the wiki says the limit was {n} once, it's stale.",
        "Update: the vendor answered after {n} days.",
    ],
};
