//! Held-back bank: tool-found values. Each text is what the person asks,
//! the command the agent runs (after `$ `) and what the tool printed, which
//! holds the value the agent will need later.
//!
//! Written 2026-12-05, before the summarizer work on this shape, by someone
//! who had not read the summarizer. Never edited (a test pins its hash).

use crate::survival::bank::{Bank, Template, Twin, t};

const RULES: &[Template] = &[
    t(
        "Find out which IAM role we're supposed to assume, I don't want you using anything else.\n$ terraform output -raw ci_role_arn\n{v}",
        "arn:aws:iam::!#####~#####:role/ci-@@@@",
        [
            "Terraform was re-applied, grab the role again.\n$ terraform output -raw ci_role_arn\n{v}",
            "The role got recreated, read the output once more.\n$ terraform output -raw ci_role_arn\n{v}",
        ],
    ),
    t(
        "what does the repo say we can't edit by hand?\n$ head -3 .gitattributes\n# generated, do not edit\n{v} linguist-generated=true",
        "src/gen/@@@@!#/",
        [
            "codegen output moved, look again\n$ head -3 .gitattributes\n# generated, do not edit\n{v} linguist-generated=true",
            "They regenerated the attributes file, check it.\n$ head -3 .gitattributes\n# generated, do not edit\n{v} linguist-generated=true",
        ],
    ),
    t(
        "Check the maintenance window in the runbook, we only restart inside it.\n$ grep -A1 'Maintenance window' docs/runbook.md\n## Maintenance window\n{v} UTC, Sundays",
        "0!:~0-0!:~0",
        [
            "Ops changed the window, grep the runbook again.\n$ grep -A1 'Maintenance window' docs/runbook.md\n## Maintenance window\n{v} UTC, Sundays",
            "Runbook was edited this morning. Look at the window again.\n$ grep -A1 'Maintenance window' docs/runbook.md\n## Maintenance window\n{v} UTC, Sundays",
        ],
    ),
    t(
        "Which service account does the helm release run as? We keep using that one and only that one.\n$ helm get values billing -a | grep serviceAccount\nserviceAccountName: {v}",
        "sa-billing-@@@!#",
        [
            "We redeployed, check the service account again.\n$ helm get values billing -a | grep serviceAccount\nserviceAccountName: {v}",
            "helm values changed, look one more time\n$ helm get values billing -a | grep serviceAccount\nserviceAccountName: {v}",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "How big can an upload be on the CDN? Whatever it says, we stay below it.\n$ curl -sI https://cdn.acme.dev/limits | grep -i max-upload\nx-max-upload-bytes: {v}",
        "!#~#####",
        [
            "CDN plan changed, ask it again.\n$ curl -sI https://cdn.acme.dev/limits | grep -i max-upload\nx-max-upload-bytes: {v}",
            "Check the CDN upload limit once more.\n$ curl -sI https://cdn.acme.dev/limits | grep -i max-upload\nx-max-upload-bytes: {v}",
        ],
    ),
    t(
        "what node engine does package.json pin? don't go past it\n$ npm pkg get engines.node\n\"{v}\"",
        ">=1!.#~.!",
        [
            "engines got bumped in main, read it again\n$ npm pkg get engines.node\n\"{v}\"",
            "Pull and check the engines field again.\n$ npm pkg get engines.node\n\"{v}\"",
        ],
    ),
    t(
        "See what connection limit the database has, we can't blow through it.\n$ psql -Atc 'show max_connections'\n{v}",
        "!#~#",
        [
            "DBA retuned postgres, ask it again.\n$ psql -Atc 'show max_connections'\n{v}",
            "Check max_connections again after the restart.\n$ psql -Atc 'show max_connections'\n{v}",
        ],
    ),
    t(
        "Look at the SLA doc for the response-time ceiling.\n$ yq .latency.p99 sla.yaml\n{v}",
        "!#~#ms",
        [
            "The SLA was renegotiated, read the ceiling again.\n$ yq .latency.p99 sla.yaml\n{v}",
            "sla.yaml changed. p99 again please.\n$ yq .latency.p99 sla.yaml\n{v}",
        ],
    ),
];

const FACTS: &[Template] = &[
    t(
        "Get the image digest that's running, we'll need it for the rollback.\n$ docker inspect --format '{{.Image}}' api\nsha256:{v}",
        "^^^^^^^^^^^^^^^^^^^^^^^^",
        [
            "There was a redeploy, inspect it again.\n$ docker inspect --format '{{.Image}}' api\nsha256:{v}",
            "The container got replaced, read the digest again.\n$ docker inspect --format '{{.Image}}' api\nsha256:{v}",
        ],
    ),
    t(
        "what version of the client lib are we actually on?\n$ pip show acme-client | head -2\nName: acme-client\nVersion: {v}",
        "!.#~.!#.post!",
        [
            "dependabot merged something, check again\n$ pip show acme-client | head -2\nName: acme-client\nVersion: {v}",
            "Reinstalled the env. What's the version now?\n$ pip show acme-client | head -2\nName: acme-client\nVersion: {v}",
        ],
    ),
    t(
        "Where does the queue consumer connect to? Look at the compose file.\n$ grep -n AMQP_URL docker-compose.yml\n23:      AMQP_URL: amqp://{v}:5672",
        "mq-@@@@-!#~.lan",
        [
            "compose file changed, grep it again.\n$ grep -n AMQP_URL docker-compose.yml\n23:      AMQP_URL: amqp://{v}:5672",
            "The broker moved. Grep the compose file one more time.\n$ grep -n AMQP_URL docker-compose.yml\n23:      AMQP_URL: amqp://{v}:5672",
        ],
    ),
    t(
        "Find the project id the gcloud config points at.\n$ gcloud config get-value project\n{v}",
        "acme-@@@@@-!#~###",
        [
            "I switched configurations, get it again.\n$ gcloud config get-value project\n{v}",
            "gcloud got reconfigured. Project id again?\n$ gcloud config get-value project\n{v}",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "Run pytest and show me the summary, the failing one is our next target.\n$ pytest -q 2>&1 | tail -2\nFAILED {v} - AssertionError\n1 failed, 212 passed in 48.31s",
        "tests/test_@@@@@.py::test_@@@@_!#",
        [
            "Rerun pytest, the target moves if something else fails.\n$ pytest -q 2>&1 | tail -2\nFAILED {v} - AssertionError\n1 failed, 212 passed in 48.31s",
            "Run the tests again please.\n$ pytest -q 2>&1 | tail -2\nFAILED {v} - AssertionError\n1 failed, 212 passed in 48.31s",
        ],
    ),
    t(
        "What does the roadmap file say we ship next?\n$ head -4 ROADMAP.md\n# Roadmap\n\n## Next\n- {v}: bulk export",
        "%%%%-!#~",
        [
            "Roadmap was reshuffled, read the top again.\n$ head -4 ROADMAP.md\n# Roadmap\n\n## Next\n- {v}: bulk export",
            "PM edited the roadmap, look again.\n$ head -4 ROADMAP.md\n# Roadmap\n\n## Next\n- {v}: bulk export",
        ],
    ),
    t(
        "What's the exact error the nightly dies with? That's what we're fixing.\n$ tail -1 logs/nightly.log\nERROR {v}: upstream closed connection",
        "E!#~#-@@@@",
        [
            "The nightly ran again, tail the log.\n$ tail -1 logs/nightly.log\nERROR {v}: upstream closed connection",
            "New nightly run failed, what's the error this time?\n$ tail -1 logs/nightly.log\nERROR {v}: upstream closed connection",
        ],
    ),
    t(
        "How far is the backfill? We need it to reach the last id.\n$ psql -Atc 'select max(id) from events_src'\n{v}",
        "!#~#####",
        [
            "More events came in, query the max id again.\n$ psql -Atc 'select max(id) from events_src'\n{v}",
            "Check the target id again, the source grew.\n$ psql -Atc 'select max(id) from events_src'\n{v}",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "Which formatter profile does the repo use? Match it.\n$ grep -A2 '\\[tool.black\\]' pyproject.toml\n[tool.black]\nline-length = 100\ntarget-version = ['{v}']",
        "py3!#",
        [
            "pyproject changed, read the black section again.\n$ grep -A2 '\\[tool.black\\]' pyproject.toml\n[tool.black]\nline-length = 100\ntarget-version = ['{v}']",
            "Look at the black config once more.\n$ grep -A2 '\\[tool.black\\]' pyproject.toml\n[tool.black]\nline-length = 100\ntarget-version = ['{v}']",
        ],
    ),
    t(
        "the team has a preferred label for bot PRs, look it up\n$ gh label list --search bot\n{v}\tPRs opened by automation",
        "bot:@@@@!#",
        [
            "labels got renamed, list them again\n$ gh label list --search bot\n{v}\tPRs opened by automation",
            "Search the bot label again.\n$ gh label list --search bot\n{v}\tPRs opened by automation",
        ],
    ),
    t(
        "What does the style guide want as the test naming pattern?\n$ grep -i 'test names' CONTRIBUTING.md\nTest names: {v}",
        "should_@@@@_when_!#",
        [
            "CONTRIBUTING was updated, grep again.\n$ grep -i 'test names' CONTRIBUTING.md\nTest names: {v}",
            "Check the test naming rule again.\n$ grep -i 'test names' CONTRIBUTING.md\nTest names: {v}",
        ],
    ),
    t(
        "Which timezone do the reports use? Keep to that.\n$ grep report_tz reports/.env\nreport_tz={v}",
        "UTC+0!:~0",
        [
            "The reports env changed, grep it again.\n$ grep report_tz reports/.env\nreport_tz={v}",
            "Look up the report timezone once more.\n$ grep report_tz reports/.env\nreport_tz={v}",
        ],
    ),
];

const RULE_TWINS: &[Twin] = &[Twin {
    text: "Who is allowed to merge into {s}? Check the ruleset.\n$ gh api repos/acme/core/rulesets --jq '.[] | select(.name==\"{s}\") | .bypass'\n{s} bypass actor: {v}",
    shape: "team-{s}-!#~",
    subjects: &["release", "hotfix", "main", "staging"],
}];

const CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "What's the disk quota on the {s} volume?\n$ df -h /mnt/{s} | tail -1\n/dev/sdb1 on /mnt/{s}, size {v}",
    shape: "!#~G",
    subjects: &["logs", "cache", "builds", "media"],
}];

const FACT_TWINS: &[Twin] = &[Twin {
    text: "What schema version is the {s} database at?\n$ ./manage.py showmigrations {s} | tail -1\n{s} latest applied: {v}",
    shape: "0!#~_{s}_@@@@",
    subjects: &["accounts", "catalog", "orders", "shipping"],
}];

const GOAL_TWINS: &[Twin] = &[Twin {
    text: "How many {s} warnings are left? We want zero eventually.\n$ make lint-{s} | grep -c warning\n{s} warnings remaining: {v}",
    shape: "!#~/!#~#",
    subjects: &["typing", "security", "style", "deprecation"],
}];

const PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "What sampling rate does the team use for {s} traces?\n$ grep {s} otel/sampling.yaml\n{s} traces sampled at {v}",
    shape: "0.0!#~",
    subjects: &["checkout", "search", "login", "batch"],
}];

pub const HELD_FOUND: Bank = Bank {
    name: "held-found",
    templates: [RULES, CONSTRAINTS, FACTS, GOALS, PREFERENCES],
    twins: [
        RULE_TWINS,
        CONSTRAINT_TWINS,
        FACT_TWINS,
        GOAL_TWINS,
        PREFERENCE_TWINS,
    ],
    lead_ins: &["", "", "", "Hang on.", "Actually,", "Before you continue:"],
    trailers: &[
        "",
        "",
        "",
        "Remember what it says.",
        "We'll use it further on.",
    ],
    acks: &[
        "Okay, I have it from the output.",
        "Got the value; I'll rely on it later.",
        "Right, that's what the tool reports.",
        "Noted what it printed.",
        "Seen it, moving on with that.",
    ],
    routine: &[],
    decoys: &[],
};
