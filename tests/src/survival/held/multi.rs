//! Held-back bank: multi-statement messages. Each text is one item of a
//! person's message that holds two to four of them, followed by routine.
//!
//! Written 2026-12-05, before the summarizer work on this shape, by someone
//! who had not read the summarizer. Never edited (a test pins its hash).

use crate::survival::bank::{Bank, Template, Twin, t};

const RULES: &[Template] = &[
    t(
        "DEC-41: the reconciliation job is the only thing allowed to write into {v}.",
        "ledger_@@@@_!#~",
        [
            "DEC-41 amended, the table only reconciliation writes to is {v}.",
            "Reconciliation got its own table, {v}; nothing else writes there.",
        ],
    ),
    t(
        "hotfixes get tagged from {v} and from nowhere else",
        "maint/!.#~",
        [
            "hotfix tags come off {v} now",
            "The maintenance line we tag hotfixes from is {v} these days.",
        ],
    ),
    t(
        "No force pushes on {v}, not even to fix a typo.",
        "team/@@@@@-!#",
        [
            "The shared branch nobody force-pushes is {v} since the split.",
            "Our shared branch is called {v} now, force pushes still off the table.",
        ],
    ),
    t(
        "The webhook secret lives in {v} and is never copied anywhere else.",
        "ssm:/@@@@/!#~/hook",
        [
            "Webhook secret moved to {v}, don't copy it out of there either.",
            "Parameter store path for the webhook secret is {v} after the cleanup.",
        ],
    ),
    t(
        "Customer PII stays in the schema {v}; no joins pulling it into analytics.",
        "pii_@@@!#",
        [
            "The PII schema was renamed to {v}, same restriction.",
            "PII sits in {v} now, analytics still can't join on it.",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "DEC-42: a single report render gets {v} seconds of CPU, tops.",
        "!#~",
        [
            "DEC-42 amended: {v} seconds of CPU per report render.",
            "Report renders may burn {v} CPU seconds each now.",
        ],
    ),
    t(
        "the mobile bundle has to fit in {v}",
        "!#.!MB",
        [
            "mobile bundle allowance is {v} now",
            "App store review pushed us to a {v} bundle.",
        ],
    ),
    t(
        "We can hold at most {v} open connections to the partner API.",
        "!#~",
        [
            "The partner raised our connection allowance to {v}.",
            "Partner API connections: {v} max as of their new contract.",
        ],
    ),
    t(
        "Code freeze for the audit starts {v}.",
        "202!-0!-0!",
        [
            "Audit freeze begins {v} now, auditors rescheduled.",
            "The auditors moved things, freeze starts on {v}.",
        ],
    ),
    t(
        "Retries are capped at {v} per message before it goes to the dead-letter queue.",
        "!#",
        [
            "Messages get {v} retries before dead-lettering now.",
            "Dead-letter after {v} attempts, that's the new setting.",
        ],
    ),
];

const FACTS: &[Template] = &[
    t(
        "DEC-43: the canonical customer id format is {v}.",
        "CUS-%%!-####",
        [
            "DEC-43 amended, canonical customer ids look like {v}.",
            "Customer ids switched to the {v} layout.",
        ],
    ),
    t(
        "the partner's sandbox is at {v}",
        "https://sbx-!#~.@@@@@pay.com",
        [
            "partner sandbox moved, it's {v}",
            "The partner gave us a new sandbox: {v}.",
        ],
    ),
    t(
        "Our cost center on the cloud account is {v}.",
        "CC-!####-%",
        [
            "Cost center changed after the reorg: {v}.",
            "Cloud spend books to {v} from this quarter.",
        ],
    ),
    t(
        "The search index in production is {v}.",
        "products_v!#_@@@",
        [
            "Production search reads from {v} after the reindex.",
            "We swapped the alias, prod search is on {v}.",
        ],
    ),
    t(
        "Mail goes out through the relay {v}.",
        "smtp-!#~.mx.internal",
        [
            "Outgoing mail uses the relay {v} these days.",
            "The relay was replaced, mail goes via {v}.",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "DEC-44: we close out the epic {v} before starting anything new.",
        "EPIC-!#~#",
        [
            "DEC-44 amended, the epic to close out first is {v}.",
            "Product swapped the priority, {v} is the epic to finish first.",
        ],
    ),
    t(
        "by the retro we want cold start down to {v}",
        "!#~ms",
        [
            "cold start target for the retro is {v} now",
            "We'd be happy with {v} cold start by the retro, revised.",
        ],
    ),
    t(
        "What I'd like next is the report {v} ported to the new engine.",
        "rpt_@@@@@_!#",
        [
            "Next report to port to the new engine is {v}.",
            "Port {v} next, the other report can wait.",
        ],
    ),
    t(
        "The open question for tomorrow is whether {v} can be dropped.",
        "col_@@@@_!#~",
        [
            "Tomorrow's open question is about dropping {v} now.",
            "For tomorrow: can we drop {v}?",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "Fixtures should be generated by the script {v}, not handwritten.",
        "tools/gen_@@@@!#.py",
        [
            "Fixture generator is {v} now.",
            "Generate fixtures with {v} going forward.",
        ],
    ),
    t(
        "i'd rather the metrics be namespaced {v}",
        "acme_@@@!_",
        [
            "metrics namespace should be {v}, changed my mind",
            "Put the metrics under {v} instead.",
        ],
    ),
    t(
        "For PR titles, lead with the component code {v}.",
        "[%%%!#]",
        [
            "PR titles lead with {v} now.",
            "Component code for PR titles became {v}.",
        ],
    ),
    t(
        "Keep temporary tables in the schema {v}.",
        "scratch_!#~@",
        [
            "Temporary tables belong in {v} now.",
            "The scratch schema is {v}.",
        ],
    ),
];

const RULE_TWINS: &[Twin] = &[Twin {
    text: "nobody but the {s} on-call may run {v}",
    shape: "ops/{s}-!#~.sh",
    subjects: &["storage", "network", "database", "identity"],
}];

const CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "The {s} worker pool is limited to {v} threads.",
    shape: "!#~",
    subjects: &["render", "ingest", "notify", "archive"],
}];

const FACT_TWINS: &[Twin] = &[Twin {
    text: "The {s} bucket is {v}.",
    shape: "gs://{s}-@@@@!#",
    subjects: &["uploads", "backups", "exports", "thumbnails"],
}];

const GOAL_TWINS: &[Twin] = &[Twin {
    text: "For the {s} page we are aiming at a Lighthouse score of {v}.",
    shape: "!#.~",
    subjects: &["pricing", "signup", "checkout", "landing"],
}];

const PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "Alerts for {s} should page the channel {v}.",
    shape: "ch-{s}-@@@!",
    subjects: &["latency", "disk", "queues", "certs"],
}];

pub const HELD_MULTI: Bank = Bank {
    name: "held-multi",
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
        "Decisions from this morning's call, for the record:",
        "ok, pasting what we agreed:",
        "Three or four things, all of them stand:",
        "Summary of the thread with the architects:",
        "Before I forget, these came out of review:",
    ],
    trailers: &["", ""],
    acks: &[
        "Thanks, I've got all of them.",
        "Understood, each of those noted.",
        "Okay, working with those.",
        "Right, noted every point.",
        "Got the list.",
    ],
    routine: &[
        "Right, where were we. The flaky test, I think.",
        "That's all from the call, go back to what you were doing.",
        "Anyway, can you open the parser module again?",
        "ok carry on",
        "Now, the failing lint job.",
        "Anyway. Next file please.",
        "Let's continue with the cleanup.",
        "Back to it.",
        "Fine, now rerun the integration tests.",
        "Keep going with the importer.",
        "Sorry, back now. Where's the build at?",
        "Can you show me the failing assertion again?",
        "mm ok",
        "Go ahead and commit that.",
        "Let's look at the next warning.",
    ],
    decoys: &[
        "The call had {n} people on it, way too many.",
        "Someone said the old service handled {n} requests a second, no idea if true.",
        "Last sprint we closed {n} tickets, which is a record I think.",
        "There were {n} comments on that design doc, I read maybe half.",
        "The architects' deck was {n} slides long.",
        "Back in the day we ran {n} cron jobs on one box and nothing ever broke, allegedly.",
        "The old batch server rebooted {n} times in one night once.",
        "We have {n} feature flags, half of them dead.",
        "The migration guide is {n} pages and mostly wrong.",
        "Someone estimated {n} hours for this, I doubt it.",
        "The partner sent {n} emails about their outage yesterday.",
        "Our Slack channel hit {n} messages today, I muted it.",
        "The prototype took {n} seconds to start, that was the fun part.",
        "There's a spreadsheet with {n} rows of old decisions somewhere.",
        "Their status page showed {n} incidents last month.",
    ],
};
