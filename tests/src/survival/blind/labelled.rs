//! The blind half of the labelled shape: binding statements under labels
//! ("Rule 4:", "COMPLIANCE:", "SLA:") beside labelled routine chatter
//! ("Status:", "Note:", "Reminder:") that binds nothing. Written once on
//! 2026-12-05 by someone who had not read the summarizer nor any earlier
//! held-back bank.

use super::super::bank::{Bank, Template, Twin, t};

const RULES: &[Template] = &[
    t(
        "Rule 4: the triage bot never closes a ticket tagged {v}.",
        "sev-@@@-!#",
        [
            "Rule 4 amended: the tag the bot must leave open is {v}.",
            "Tickets marked {v} are the ones the triage bot never closes now.",
        ],
    ),
    t(
        "COMPLIANCE: patient exports leave only through the SFTP account {v}.",
        "sftp-@@@@!#~",
        [
            "COMPLIANCE update: patient exports use the account {v} from today.",
            "The one account allowed to carry patient exports became {v}.",
        ],
    ),
    t(
        "Invariant: after manufacturing, firmware never writes the calibration block at {v}.",
        "0x0!^^^000",
        [
            "Invariant revised: the calibration block sits at {v} on the new board, still write-protected.",
            "On rev C the address firmware must not write is {v}.",
        ],
    ),
    t(
        "POLICY: changes to the game economy ship behind the kill switch {v}.",
        "ks_@@@@_!#",
        [
            "POLICY: economy changes are gated by {v} now.",
            "The economy kill switch was replaced; use {v}.",
        ],
    ),
    t(
        "Access rule: credit notes are approved only by holders of the role {v}.",
        "role/@@@@-!#~",
        [
            "Access rule change: approving credit notes needs {v}.",
            "Credit note approval moved to the role {v}.",
        ],
    ),
    t(
        "RULE: the labelling contractors get to see the data split {v} and nothing else.",
        "split-@@@@-!#",
        [
            "RULE: contractors are limited to the split {v} now.",
            "The only split shared with the labelling vendor is {v} after the rotation.",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "SLA: a shipment status webhook fires within {v} of the scan.",
        "!#~s",
        [
            "SLA tightened: webhooks within {v} of a scan.",
            "From scan to webhook may now take {v} at most.",
        ],
    ),
    t(
        "Ceiling: the game client fits in {v} of RAM on the handheld build.",
        "!#~#MB",
        [
            "Ceiling update: the handheld build's RAM limit is {v}.",
            "On the handheld the client may use {v} now.",
        ],
    ),
    t(
        "Constraint: one training run gets at most {v} of GPU time per week.",
        "!#~h",
        [
            "Constraint relaxed: weekly GPU time per run is {v}.",
            "A run may take {v} of GPU time a week after the cluster upgrade.",
        ],
    ),
    t(
        "Window: the billing cutover happens on {v} and not a day earlier.",
        "202!-0!-2~",
        [
            "Window moved: billing cutover on {v}.",
            "The cutover is scheduled for {v} now, still no earlier.",
        ],
    ),
    t(
        "LIMIT: in sleep mode the wearable's firmware draws no more than {v}.",
        "!#~uA",
        [
            "LIMIT update: sleep current may be {v}.",
            "The wearable's sleep budget is {v} after the battery change.",
        ],
    ),
];

const FACTS: &[Template] = &[
    t(
        "Ground truth: the hospital's HL7 feed comes from {v}.",
        "hl7-@@@@!.hosp.local",
        [
            "Ground truth changed: the HL7 feed originates at {v}.",
            "After the interface swap the HL7 source is {v}.",
        ],
    ),
    t(
        "Known: our account number with the freight carrier is {v}.",
        "ACN-!#~#-%%",
        [
            "Known, updated: the carrier reissued our account as {v}.",
            "The freight carrier has us under {v} now.",
        ],
    ),
    t(
        "FACT SHEET: crash reports from the mobile app land in the Sentry project {v}.",
        "@@@@-mobile-!#",
        [
            "FACT SHEET: the app's Sentry project is {v} after the split.",
            "Mobile crash reports go to {v} now.",
        ],
    ),
    t(
        "Reference: the gold evaluation set is {v}.",
        "gold-v!-^^^^^^",
        [
            "Reference bumped: the gold set is {v}.",
            "We evaluate against {v} since the relabel.",
        ],
    ),
    t(
        "Known value: the game's store app id is {v}.",
        "!#~#!#~",
        [
            "Known value: the store app id changed to {v} with the new listing.",
            "The new store listing has the app id {v}.",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "Objective: the nightly ETL completes by {v} UTC.",
        "0!:~#",
        [
            "Objective moved: nightly ETL done by {v} UTC.",
            "The ETL should finish by {v} UTC now.",
        ],
    ),
    t(
        "MILESTONE: the tablet app reaches {v} percent crash-free users.",
        "9!.#!",
        [
            "MILESTONE revised: {v} percent crash-free on tablets.",
            "For tablets the crash-free aim is {v} percent now.",
        ],
    ),
    t(
        "KPI: the Lisbon depot gets on-time deliveries to {v} percent.",
        "9~.!#",
        [
            "KPI change: Lisbon on-time deliveries at {v} percent.",
            "Lisbon's on-time target became {v} percent.",
        ],
    ),
    t(
        "Target: docs pages load in under {v} on a throttled 3G profile.",
        "!.#~s",
        [
            "Target revised: docs pages under {v} on throttled 3G.",
            "Page load on slow 3G should be below {v} now.",
        ],
    ),
    t(
        "Objective for the sprint: close the firmware bug {v}.",
        "FW-!#~#",
        [
            "Sprint objective swapped: the firmware bug to close is {v}.",
            "This sprint we go after {v} instead.",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "Convention: Alembic revision ids start with the prefix {v}.",
        "@@@!#_",
        [
            "Convention update: revision ids begin with {v}.",
            "New Alembic revisions take the prefix {v}.",
        ],
    ),
    t(
        "House style: heading anchors in the docs begin with {v}.",
        "sec-@@!-",
        [
            "House style: anchors start with {v} now.",
            "Docs heading anchors use {v} as the lead-in from here on.",
        ],
    ),
    t(
        "Naming: game asset bundles end in {v}.",
        ".bundle-@@!#",
        [
            "Naming: asset bundles end in {v} from this build.",
            "The suffix for asset bundles changed to {v}.",
        ],
    ),
    t(
        "Preference (mine): alerts from the warehouse app go to {v}.",
        "alerts-@@@@-!#",
        [
            "Preference: route warehouse app alerts to {v} now.",
            "I'd rather see the warehouse alerts in {v}.",
        ],
    ),
    t(
        "Format: experiment names follow the pattern {v}.",
        "exp_@@@_!#~_",
        [
            "Format change: experiment names begin with {v}.",
            "Name experiments after {v} from here on.",
        ],
    ),
];

const RULE_TWINS: &[Twin] = &[
    Twin {
        text: "Rule: {s} releases need the approval group {v}.",
        shape: "appr-{s}-!#",
        subjects: &["ios", "android", "kiosk", "watch"],
    },
    Twin {
        text: "POLICY: everything in the {s} schema is masked by {v}.",
        shape: "mask_{s}_!#",
        subjects: &["patients", "payroll", "claims", "donors"],
    },
];
const CONSTRAINT_TWINS: &[Twin] = &[
    Twin {
        text: "SLA: {s} tickets get a first response within {v}.",
        shape: "!#~m",
        subjects: &["billing", "shipping", "clinical", "account"],
    },
    Twin {
        text: "Ceiling: the {s} function runs for {v} at most.",
        shape: "!#~s",
        subjects: &["resize", "notify", "invoice", "geocode"],
    },
];
const FACT_TWINS: &[Twin] = &[
    Twin {
        text: "Reference: the {s} firmware branch is {v}.",
        shape: "fw/{s}-!#~",
        subjects: &["sensor", "gateway", "display", "charger"],
    },
    Twin {
        text: "Known: the {s} warehouse uses the WMS code {v}.",
        shape: "{s}-%%!#",
        subjects: &["oslo", "lyon", "porto", "gdansk"],
    },
];
const GOAL_TWINS: &[Twin] = &[
    Twin {
        text: "KPI: the {s} model's F1 gets to {v}.",
        shape: "0.!#~",
        subjects: &["triage", "routing", "fraud", "churn"],
    },
    Twin {
        text: "Target: the {s} page weighs under {v}.",
        shape: "!#~KB",
        subjects: &["pricing", "signup", "status", "careers"],
    },
];
const PREFERENCE_TWINS: &[Twin] = &[
    Twin {
        text: "Naming: {s} topics start with {v}.",
        shape: "{s}.@@!.",
        subjects: &["orders", "scans", "vitals", "matches"],
    },
    Twin {
        text: "Style: {s} icons are stored under {v}.",
        shape: "assets/{s}/@@!#",
        subjects: &["tab", "toolbar", "map", "badge"],
    },
];

pub const BLIND_LABELLED: Bank = Bank {
    name: "blind-labelled",
    templates: [RULES, CONSTRAINTS, FACTS, GOALS, PREFERENCES],
    twins: [
        RULE_TWINS,
        CONSTRAINT_TWINS,
        FACT_TWINS,
        GOAL_TWINS,
        PREFERENCE_TWINS,
    ],
    lead_ins: &["", "", "", "Adding to the list:", "For the record,"],
    trailers: &["", "", "That one's current."],
    acks: &[
        "Recorded.",
        "Okay, I'll keep to it.",
        "Understood, that's on my list.",
        "Right.",
    ],
    routine: &[
        "Status: going through the ETL logs.",
        "Note: the test runner prints a lot of noise, that's normal.",
        "Reminder: team lunch is on Thursday.",
        "FYI: the design doc link is in the channel topic.",
        "Update: still waiting on the vendor's reply.",
        "Aside: the coffee machine on the third floor works again.",
        "Status: halfway through the review.",
        "Heads up: I'm offline for an hour after lunch.",
        "Note: the README screenshot is outdated, ignore it.",
        "Log: rebuilt the emulator image, nothing changed.",
        "Reminder: book a room for the retro.",
        "Context: this repo started as a fork of the clinic prototype.",
        "FYI: the dashboard theme changed, same data underneath.",
        "PS: nice work on the parser yesterday.",
        "Status: no news from QA.",
    ],
    decoys: &[
        "Status: {n} pallets scanned this morning, nothing unusual.",
        "Note: the old firmware took {n} ms to boot, that's history now.",
        "FYI: {n} clinicians came to the training session.",
        "Update: the vendor answered {n} of our questions so far.",
        "Reminder: last quarter's invoice run needed {n} retries, not our concern.",
        "Log: the simulator crashed {n} times overnight.",
        "Aside: the game beta had {n} testers.",
        "Context: the legacy pipeline had {n} stages.",
        "Heads up: {n} emails are waiting in the shared inbox.",
        "Status: {n} tests skipped on the ARM runner, as usual.",
        "Note: the docs site had {n} broken links last month, fixed since.",
        "FYI: the previous model was trained on {n} images.",
        "Update: {n} drivers logged in today.",
        "Reminder: the rule engine evaluated {n} events yesterday and raised nothing.",
        "Log: the SLA report for October listed {n} breaches, all in another team.",
    ],
};
