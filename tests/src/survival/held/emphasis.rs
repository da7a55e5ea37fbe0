//! Held-back bank: emphasis. The statements that bind are marked by
//! capitals, IMPORTANT, NEVER, MUST, markdown bold, or by the assistant
//! acknowledging them specifically (after `=> `), among routine that is now
//! and then shouted too.
//!
//! Written 2026-12-05, before the summarizer work on this shape, by someone
//! who had not read the summarizer. Never edited (a test pins its hash).

use crate::survival::bank::{Bank, Template, Twin, t};

const RULES: &[Template] = &[
    t(
        "**Never** rotate the credentials of {v} yourself, that breaks the partner integration.\n=> Understood, I won't rotate that account's credentials; I'll ask you instead.",
        "svc-partner-@@@!#",
        [
            "The partner integration account is {v} now, same as before: don't rotate it.",
            "Partner account changed to {v}; rotation stays off-limits.",
        ],
    ),
    t(
        "YOU MUST NOT write to {v} from the app, it's replicated read-only.",
        "replica-!#~-@@@@",
        [
            "The read-only replica is {v} now.",
            "Replica got rebuilt as {v}, still read-only for the app.",
        ],
    ),
    t(
        "important!! the only registry we pull images from is {v}",
        "registry-@@@!#.acme.io",
        ["we pull images from {v} now", "Registry moved, it's {v}."],
    ),
    t(
        "NEVER EVER merge without a green run of {v}.\n=> Got it: no merge unless that pipeline is green.",
        "ci/@@@@@-!#~",
        [
            "The pipeline that has to be green before a merge is {v} now.",
            "Required pipeline was renamed to {v}.",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "Disk usage on the build agents MUST stay under {v}. Seriously.",
        "!#~GB",
        [
            "Build agents can go up to {v} of disk now.",
            "The disk ceiling on the agents is {v}.",
        ],
    ),
    t(
        "IMPORTANT: the migration window is {v} and not a minute longer\n=> Understood, I'll plan the migration to fit that window.",
        "!#~min",
        [
            "The migration window was extended to {v}.",
            "We get {v} for the migration now.",
        ],
    ),
    t(
        "The free tier MUST NOT exceed {v} API calls a day.",
        "!#,#~0",
        [
            "Free tier is allowed {v} API calls a day now.",
            "Daily free-tier ceiling: {v} calls.",
        ],
    ),
    t(
        "*hard* requirement: support goes back to iOS {v}, NOT further",
        "1!.!",
        [
            "iOS support goes back to {v} now.",
            "Oldest iOS we support is {v} now.",
        ],
    ),
];

const FACTS: &[Template] = &[
    t(
        "THE ENDPOINT IS {v}. Not the one in the old docs.",
        "https://api-!#~.@@@@@.io/v!",
        [
            "The endpoint is {v} now.",
            "They moved the endpoint to {v}.",
        ],
    ),
    t(
        "Important detail: the vendor's account number for us is {v}.\n=> Noted, I'll use that account number with the vendor.",
        "ACCT-!#~###",
        [
            "The vendor reissued our account number: {v}.",
            "Our vendor account number is {v} now.",
        ],
    ),
    t(
        "the staging password manager entry is called {v} -- MUST use that one",
        "stg-@@@@-!#~",
        [
            "staging entry in the password manager is {v} now",
            "Use the entry {v} for staging from now on.",
        ],
    ),
    t(
        "READ THIS: the feature branch for the pilot is {v}.",
        "pilot/@@@@@-!#",
        [
            "Pilot branch is {v} now.",
            "We recreated the pilot branch as {v}.",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "The one thing I care about today: {v} passing. EVERYTHING else waits.\n=> Understood, that test comes first today.",
        "test_@@@@@_!#~",
        [
            "Today the test that comes first is {v}.",
            "Priority switched to {v}.",
        ],
    ),
    t(
        "MUST HAVE for the demo: onboarding in under {v} clicks",
        "!#",
        [
            "Onboarding under {v} clicks for the demo now.",
            "Demo target is {v} clicks.",
        ],
    ),
    t(
        "Important: we want the Android crash rate under {v} percent by the end of the quarter.",
        "0.!#~",
        [
            "The Android crash-rate target is {v} percent now.",
            "End-of-quarter crash rate target: {v} percent.",
        ],
    ),
    t(
        "really, REALLY need the index {v} rebuilt before Monday",
        "ix_@@@@@_!#",
        [
            "the index to rebuild before Monday is {v} now",
            "Rebuild {v} before Monday instead.",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "PLEASE, format dates as {v} in every report.\n=> Will do, every report uses that date format.",
        "@@@@-!#~",
        ["Dates in the reports as {v} now.", "Report dates use {v}."],
    ),
    t(
        "I MUCH prefer the helpers in {v}, don't scatter them.",
        "lib/@@@@_!#.ts",
        ["Helpers go in {v} now.", "Keep the helpers in {v}."],
    ),
    t(
        "Important to me: commit trailers say {v}.",
        "Team-@@@@-!#",
        ["Commit trailers say {v} now.", "The trailer to use is {v}."],
    ),
    t(
        "ALWAYS put the ticket id {v} in the branch name for this work",
        "%%%-!#~#",
        [
            "the ticket for branch names is {v} now",
            "Branch names carry {v} now.",
        ],
    ),
];

const RULE_TWINS: &[Twin] = &[Twin {
    text: "NEVER scale the {s} deployment below {v} replicas.",
    shape: "!#",
    subjects: &["checkout", "gateway", "indexer", "mailer"],
}];

const CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "The {s} cron MUST finish within {v}.",
    shape: "!#~s",
    subjects: &["billing", "digest", "cleanup", "report"],
}];

const FACT_TWINS: &[Twin] = &[Twin {
    text: "IMPORTANT: the {s} replica set is {v}.",
    shape: "rs-{s}-!#~",
    subjects: &["users", "orders", "events", "catalog"],
}];

const GOAL_TWINS: &[Twin] = &[Twin {
    text: "We MUST cut the {s} bill to {v} a month.",
    shape: "$!#~0",
    subjects: &["storage", "egress", "compute", "logging"],
}];

const PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "ALWAYS tag {s} releases with {v}.",
    shape: "{s}-v!#~",
    subjects: &["android", "ios", "web", "desktop"],
}];

pub const HELD_EMPHASIS: Bank = Bank {
    name: "held-emphasis",
    templates: [RULES, CONSTRAINTS, FACTS, GOALS, PREFERENCES],
    twins: [
        RULE_TWINS,
        CONSTRAINT_TWINS,
        FACT_TWINS,
        GOAL_TWINS,
        PREFERENCE_TWINS,
    ],
    lead_ins: &["", "", "", "", "Hey.", "Listen up,", "OK."],
    trailers: &["", "", "", "Thx.", "!!"],
    acks: &[
        "Understood.",
        "Okay, noted.",
        "Got it.",
        "Sure.",
        "Right, will do.",
    ],
    routine: &[
        "YES that's it.",
        "no no, the other file",
        "OK GOOD.",
        "Run it AGAIN please.",
        "hm.",
        "Seriously, this test again?",
        "ok that's fine",
        "Continue!!",
        "WHY is CI so slow today",
        "Fine. Next.",
        "Let me think for a sec.",
        "Great, keep going.",
        "argh. ok.",
        "LOL fine",
        "Wait, WHAT? oh, never mind.",
    ],
    decoys: &[
        "IMPORTANT: I'm out at {n} today for the dentist.",
        "I NEVER liked that the old pipeline had {n} stages.",
        "We MUST have rebased that branch {n} times.",
        "The legacy config had {n} flags, ALL undocumented.",
        "Someone printed {n} pages of logs once, I'm NOT kidding.",
        "Remember when the outage lasted {n} minutes? NEVER again, said everyone.",
        "The old deploy script had {n} sleeps in it, SERIOUSLY.",
        "I MUST have clicked that button {n} times.",
        "Our standup lasted {n} minutes, NEVER again.",
        "The legacy tests took {n} seconds, ALWAYS.",
        "IMPORTANT: pizza for {n} people on Friday.",
        "There are {n} unread threads in the channel, NOT reading them.",
        "Someone opened {n} tabs of docs, it wasn't me.",
        "The vendor's demo crashed {n} times, LOL.",
        "We MUST have had {n} meetings about naming.",
    ],
};
