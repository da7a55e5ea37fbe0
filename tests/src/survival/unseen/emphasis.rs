//! The second held-back half of the emphasis shape: written on 2026-12-05
//! by someone who had not read the summarizer, and never edited after.
//! Binding statements are marked by capitals, IMPORTANT, NEVER, MUST, "do
//! not forget", or by the assistant's own acknowledgement (after `REPLY`,
//! which never repeats the value); the routine around them is sometimes
//! emphatic too, and so are the decoys.

use super::super::bank::{Bank, Template, Twin, t};

const RULES: &[Template] = &[
    t(
        "NEVER deploy to {v} from a laptop. The pipeline does it or nobody does.",
        "prod-@@@@-!#",
        [
            "The pipeline-only cluster is {v} since we migrated.",
            "Heads up, it's {v} that you NEVER deploy to by hand.",
        ],
    ),
    t(
        "You MUST NOT log request bodies from {v}.\n=> Noted: no body logging for that service, headers only.",
        "svc-@@@@-!#~",
        [
            "They renamed that service to {v}; same ban on logging bodies.\n=> Noted: the ban carries over to the renamed service.",
            "Body logging is banned for {v} too, it replaced the old service.",
        ],
    ),
    t(
        "do not forget: every SQL migration gets reviewed by {v}",
        "@@@@-dba-!#",
        [
            "Migrations go to {v} for review these days.",
            "DBA reviews are handled by {v} since the reorg, DON'T skip them.",
        ],
    ),
    t(
        "Whatever happens, DO NOT silence the alert {v}.",
        "alert-@@@@-!#~",
        [
            "The alert we never silence was recreated as {v}.",
            "IMPORTANT: it's {v} that stays unmuted.",
        ],
    ),
    t(
        "IMPORTANT!!! Images come from {v} and no other registry.",
        "registry-!#.@@@@.io",
        [
            "Pull images from {v} only, we moved registries.\n=> Noted: images come only from the new registry.",
            "The one registry allowed is {v}.",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "The indexer's memory is capped at {v}. DO NOT go over it.",
        "!#~0Mi",
        [
            "Indexer memory cap went up to {v}.",
            "IMPORTANT: the indexer may use {v} at most.",
        ],
    ),
    t(
        "The API has to answer within {v} ms — THAT'S THE CONTRACT.\n=> Noted: response times stay inside the contract figure.",
        "!#~",
        [
            "Contract renegotiated, responses within {v} ms.",
            "New SLA says {v} ms.\n=> Noted: I'll hold responses to the renegotiated figure.",
        ],
    ),
    t(
        "we cannot send more than {v} emails an hour, the provider WILL block us",
        "!,#~0",
        [
            "The provider raised us to {v} emails an hour.",
            "Hourly email cap is {v}, STILL a hard stop.",
        ],
    ),
    t(
        "IMPORTANT: the data export MUST be delivered by {v}.",
        "2027-0!-0!",
        [
            "The export deadline moved to {v}.",
            "Client agreed to {v} for the export, and that's FINAL.",
        ],
    ),
    t(
        "Bundle stays ≤ {v}. I MEAN IT.",
        "!#~kB",
        ["We can go up to {v} on the bundle.", "Bundle ceiling: {v}."],
    ),
];

const FACTS: &[Template] = &[
    t(
        "IMPORTANT: the vendor's webhook secret id is {v}.",
        "whsec_%%%%!#~",
        [
            "Vendor rotated the webhook secret, id {v}.",
            "Webhook secret id is {v} after the rotation.",
        ],
    ),
    t(
        "The thing to REMEMBER: the prod DNS zone is {v}.\n=> Noted: prod records go in that zone.",
        "z!#~.@@@@.net",
        [
            "Prod DNS zone moved to {v}.",
            "We migrated DNS; prod lives in {v}.",
        ],
    ),
    t(
        "REMEMBER THIS ONE: staging runs in the account {v}.",
        "!#~#-!#~#-!#~#",
        [
            "Staging moved to account {v}.",
            "Staging's account is {v} since the org cleanup, REMEMBER that.",
        ],
    ),
    t(
        "Don't forget, the customer's VPC id is {v}.",
        "vpc-^^^^^^^^",
        [
            "The customer rebuilt their network, VPC {v}.",
            "Customer VPC is {v}.\n=> Noted: I'll peer with the rebuilt VPC.",
        ],
    ),
    t(
        "FYI and THIS MATTERS: the release train is called {v}.",
        "%@@@@-!#",
        [
            "Release train got renamed to {v}.",
            "We're on the {v} train.",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "THE priority right now: get {v} green again.",
        "nightly-@@@@-!#",
        [
            "Priority shifted, {v} is the job to get green.",
            "Get {v} passing first, it's the one blocking release.",
        ],
    ),
    t(
        "We MUST reach {v} RPS on checkout before the sale.\n=> Noted: checkout throughput is the target before the sale.",
        "!,#~0",
        [
            "Checkout target is {v} RPS after the forecast update.",
            "Marketing expects more traffic: {v} RPS on checkout.",
        ],
    ),
    t(
        "Most important goal: search p99 at {v} ms.",
        "!#~",
        [
            "Search p99 goal is {v} ms now.",
            "Let's go for {v} ms on search p99, that's the NEW bar.",
        ],
    ),
    t(
        "do not forget the real goal here: decommission {v} by end of month",
        "vm-@@@@-!#~",
        [
            "The box to decommission is {v}, the other got a reprieve.",
            "Decommission {v} by month end.",
        ],
    ),
    t(
        "Big one: we HAVE to close {v} before the audit.",
        "SEC-!#~#",
        [
            "Audit blocker is {v}.",
            "The ticket to close before the audit is {v}.\n=> Noted: that ticket comes first, ahead of the audit.",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "I STRONGLY prefer the template {v} for new services.\n=> Noted: new services start from that template.",
        "tmpl-@@@@-v!",
        [
            "New services should start from {v}.",
            "Template preference changed to {v}.",
        ],
    ),
    t(
        "PLEASE prefix test helpers with {v}.",
        "@@@!_",
        [
            "Test helpers take the prefix {v}.",
            "Prefix helpers with {v} please.",
        ],
    ),
    t(
        "Personally I want PRs under {v} changed lines, it REALLY matters to me.",
        "!#~",
        [
            "Keep PRs under {v} changed lines.",
            "I can live with {v} lines per PR.",
        ],
    ),
    t(
        "Use the logger {v} everywhere, NOT print statements.",
        "log_@@@@!#",
        ["The logger to use is {v}.", "Switch to {v} for logging."],
    ),
    t(
        "ALWAYS write ADRs into {v}.",
        "docs/adr-@@@!#",
        ["ADRs belong in {v}.", "Put new ADRs in {v}, PLEASE."],
    ),
];

const RULE_TWINS: &[Twin] = &[Twin {
    text: "NEVER give {s} write access to {v}.",
    shape: "db_{s}_!#~",
    subjects: &["interns", "contractors", "bots", "partners"],
}];
const CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "The {s} jobs MUST finish within {v} minutes.",
    shape: "!#~",
    subjects: &["ETL", "backup", "reindex", "report"],
}];
const FACT_TWINS: &[Twin] = &[Twin {
    text: "IMPORTANT: the {s} admin panel is at {v}.",
    shape: "https://{s}-admin-!#~.acme.io",
    subjects: &["billing", "support", "catalog", "auth"],
}];
const GOAL_TWINS: &[Twin] = &[Twin {
    text: "Our TOP goal for {s}: error rate under {v} percent.",
    shape: "0.!#",
    subjects: &["checkout", "signup", "search", "upload"],
}];
const PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "I ALWAYS want {s} PRs labelled {v}.",
    shape: "{s}-@@!#",
    subjects: &["frontend", "backend", "infra", "docs"],
}];

pub const UNSEEN_EMPHASIS: Bank = Bank {
    name: "unseen-emphasis",
    templates: [RULES, CONSTRAINTS, FACTS, GOALS, PREFERENCES],
    twins: [
        RULE_TWINS,
        CONSTRAINT_TWINS,
        FACT_TWINS,
        GOAL_TWINS,
        PREFERENCE_TWINS,
    ],
    lead_ins: &["", "", "", "Seriously,", "One more thing."],
    trailers: &["", "", "Thank you!", "Cheers."],
    acks: &[
        "Understood.",
        "Will do.",
        "Noted, carrying on.",
        "Alright, on it.",
    ],
    routine: &[
        "OK GO.",
        "Yes!! that's it.",
        "hmm, NOT sure about that naming but fine",
        "Keep going, you're doing GREAT.",
        "right, next",
        "WAIT. Never mind, carry on.",
        "lol ok",
        "Can you rerun that? PLEASE.",
        "ok ok, fine",
        "Sure.",
        "NO idea why that failed, try again.",
        "AMAZING, thanks",
        "fine by me",
        "Let's keep moving.",
        "Sorry, I was AFK. Continue.",
    ],
    decoys: &[
        "I NEVER got the old VPN to work, error {n} every single time.",
        "We MUST have sat through {n} minutes of standup this month LOL.",
        "IMPORTANT: my coffee order was number {n}, ignore my typos.",
        "The old dashboard ALWAYS showed {n} errors and nobody cared.",
        "DON'T get me started on the {n} tabs I have open.",
        "That legacy cron was IMPORTANT once, it ran {n} times a day.",
        "NEVER seen a PR diff with {n} lines before, wild.",
        "Honestly the build used to take {n} minutes, TERRIBLE.",
        "The intern's PR had {n} files, MUST have been fun to review.",
        "Do not forget lunch, our table is number {n} today.",
        "ALWAYS the same story, {n} alerts after every deploy.",
        "REMEMBER when prod was down for {n} minutes? Good times.",
        "The team offsite is {n} km away, VERY far.",
        "I've rebased this branch so often the reflog has {n} entries, NEVER again.",
        "Someone in chat said the limit is {n}, but that was about their own project.",
    ],
};
