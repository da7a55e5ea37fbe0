//! The tuned halves of the summary shapes: multi-statement messages,
//! tool-found values, labelled routine beside labelled rules, emphasis.
//! Work on the summarizer may read these banks (their held-back halves are
//! in `held/`, and may not be read).

use super::bank::{Bank, Template, Twin, t};

// ---------------------------------------------------------------------------
// Multi-statement messages: each text is one item of a message that holds
// two to four of them.
// ---------------------------------------------------------------------------

const MULTI_RULES: &[Template] = &[
    t(
        "Requirement RQ-17: nothing writes to the bucket {v} except the nightly export.",
        "s3://@@@@-!#~-exports",
        [
            "RQ-17 now names {v} as the bucket only the nightly export writes to.",
            "The export-only bucket is {v} from today.",
        ],
    ),
    t(
        "Never push straight to {v}; it goes through a pull request.",
        "release/!.#~-@@@",
        [
            "The protected branch is {v} now, same rule: pull requests only.",
            "We cut {v}, and that's the branch nobody pushes to directly.",
        ],
    ),
    t(
        "Do not restart {v} during business hours.",
        "svc-@@@@!#",
        [
            "The service we leave running during the day is {v} after the rename.",
            "Renamed: the no-daytime-restart service is {v}.",
        ],
    ),
    t(
        "Leave the table {v} alone, the finance team owns it.",
        "fin_@@@@_!#~",
        [
            "Finance moved their data, the table we don't touch is {v} now.",
            "Hands off {v} instead, that's finance's table after the migration.",
        ],
    ),
    t(
        "Only the deploy key {v} may be used from CI.",
        "dk-^^^^^^^^",
        [
            "CI's deploy key was rotated to {v}.",
            "Use the deploy key {v} from CI; the other one is revoked.",
        ],
    ),
];

const MULTI_CONSTRAINTS: &[Template] = &[
    t(
        "Requirement RQ-18: every export stays under {v} per file.",
        "!#~MB",
        [
            "RQ-18 was revised: exports cap at {v} per file.",
            "Export files may now be up to {v} each.",
        ],
    ),
    t(
        "The importer must finish within {v} minutes or it gets killed.",
        "!#~",
        [
            "The importer's time limit is {v} minutes now.",
            "Ops gave the importer {v} minutes before the kill.",
        ],
    ),
    t(
        "API responses stay below {v} ms at p95.",
        "!#~",
        [
            "The p95 target for API responses moved to {v} ms.",
            "New latency budget: {v} ms at p95.",
        ],
    ),
    t(
        "Memory per worker is capped at {v}.",
        "!#~0Mi",
        [
            "Worker memory cap went to {v}.",
            "Each worker may use up to {v} now.",
        ],
    ),
    t(
        "The release date is {v} and it does not move.",
        "202!-1!-2!",
        [
            "The release slipped to {v}, and that one is final.",
            "New release date: {v}.",
        ],
    ),
];

const MULTI_FACTS: &[Template] = &[
    t(
        "The staging database is {v}.",
        "pg-stg-!#~.internal",
        [
            "Staging's database is {v} after the rebuild.",
            "The staging database moved to {v}.",
        ],
    ),
    t(
        "Our tenant id in the billing system is {v}.",
        "tn-%%%%-!###",
        [
            "Billing reissued our tenant id: {v}.",
            "The tenant id we bill under is {v} now.",
        ],
    ),
    t(
        "The build we ship from is {v}.",
        "202!.1~.!-rc!",
        [
            "We ship from build {v} now.",
            "The shipping build became {v}.",
        ],
    ),
    t(
        "Support tickets for this go to the queue {v}.",
        "Q-%%%-!#~",
        [
            "The support queue for this is {v} now.",
            "Tickets go to {v} after the reorg.",
        ],
    ),
    t(
        "The metrics dashboard lives at {v}.",
        "https://grafana.@@@@!.net/d/^^^^^^",
        ["The dashboard moved to {v}.", "Metrics are on {v} now."],
    ),
];

const MULTI_GOALS: &[Template] = &[
    t(
        "The goal for this sprint is closing ticket {v}.",
        "%%%-!#~#",
        [
            "This sprint's goal is ticket {v} now.",
            "We're aiming at {v} this sprint instead.",
        ],
    ),
    t(
        "Next step after the refactor: migrate the shard {v}.",
        "shard-@@!#~",
        [
            "After the refactor, the shard to migrate is {v}.",
            "The next shard up is {v}.",
        ],
    ),
    t(
        "Test coverage of the parser has to reach {v} percent before we merge.",
        "!#.!",
        [
            "The coverage bar for the parser is {v} percent now.",
            "Parser coverage target moved to {v} percent.",
        ],
    ),
    t(
        "The demo on Thursday shows the flow {v}.",
        "flow-@@@@-!#",
        [
            "Thursday's demo shows {v} now.",
            "We demo the flow {v} on Thursday.",
        ],
    ),
];

const MULTI_PREFERENCES: &[Template] = &[
    t(
        "Name new feature flags with the prefix {v}.",
        "ff_@@!#_",
        [
            "Feature flags take the prefix {v} now.",
            "New flag prefix: {v}.",
        ],
    ),
    t(
        "I want log lines tagged with {v}.",
        "[@@@@-!#]",
        [
            "Tag log lines with {v} from now on.",
            "The log tag is {v} now.",
        ],
    ),
    t(
        "Put scratch files under {v}.",
        "/tmp/@@@@-!#~",
        [
            "Scratch files go under {v} now.",
            "Use {v} for scratch files.",
        ],
    ),
    t(
        "Commit messages start with the tag {v}.",
        "%%%!#:",
        ["Commit tag is {v} now.", "Start commit messages with {v}."],
    ),
];

const MULTI_RULE_TWINS: &[Twin] = &[Twin {
    text: "Never delete rows from the {s} table {v}.",
    shape: "{s}_!#~@",
    subjects: &["orders", "invoices", "payments", "refunds"],
}];
const MULTI_CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "The {s} job may run at most {v} times an hour.",
    shape: "!#~",
    subjects: &["sync", "reindex", "backup", "cleanup"],
}];
const MULTI_FACT_TWINS: &[Twin] = &[Twin {
    text: "The {s} service runs on port {v}.",
    shape: "4!#~#",
    subjects: &["auth", "search", "billing", "mailer"],
}];
const MULTI_GOAL_TWINS: &[Twin] = &[Twin {
    text: "The {s} endpoint needs to hit {v} requests a second.",
    shape: "!,#~#",
    subjects: &["upload", "login", "search", "export"],
}];
const MULTI_PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "I'd like the {s} logs kept for {v} days.",
    shape: "!#~",
    subjects: &["access", "audit", "debug", "error"],
}];

pub const MULTI: Bank = Bank {
    name: "multi",
    templates: [
        MULTI_RULES,
        MULTI_CONSTRAINTS,
        MULTI_FACTS,
        MULTI_GOALS,
        MULTI_PREFERENCES,
    ],
    twins: [
        MULTI_RULE_TWINS,
        MULTI_CONSTRAINT_TWINS,
        MULTI_FACT_TWINS,
        MULTI_GOAL_TWINS,
        MULTI_PREFERENCE_TWINS,
    ],
    lead_ins: &[
        "",
        "",
        "A few things before you go on:",
        "Requirements from the planning meeting:",
        "Some ground rules:",
        "Updates from the team:",
    ],
    trailers: &["", "Thanks."],
    acks: &[
        "Got it, all of those.",
        "Noted, I'll work within those.",
        "Understood.",
        "Okay, I'll keep them all in mind.",
    ],
    routine: &[
        "Anyway, carry on with the tests.",
        "Now let's get back to the importer.",
        "Okay, continue.",
        "Rerun the linter when you get a moment.",
        "Let me know when the build is green.",
        "Back to the refactor.",
        "Show me the diff after that.",
        "Keep going.",
        "Alright, what's the status of the build?",
        "Continue with the parser.",
        "Sorry, got distracted. Go on.",
        "Can you open the config loader?",
        "That looks right to me.",
        "Let's do the next one.",
        "Ping me when the tests finish.",
    ],
    decoys: &[
        "The last export took {n} seconds, no idea why.",
        "We used to have {n} workers, back in the day.",
        "Someone ran the backfill {n} times last week by accident.",
        "The old cluster had {n} nodes, it was a mess.",
        "I counted {n} warnings in the build log, ignore them for now.",
        "The planning meeting ran {n} minutes over.",
        "The legacy importer had {n} config options, most unused.",
        "We once had {n} people in that planning meeting.",
        "The backlog grew by {n} items over the holidays.",
        "I think the old bucket held about {n} files.",
        "CI ran {n} jobs yesterday, a new record.",
        "The previous team left {n} TODOs in the code.",
        "Someone measured {n} ms on their laptop, not representative.",
        "The vendor quoted {n} dollars for the audit, we said no.",
        "Our first prototype had {n} endpoints.",
    ],
};

// ---------------------------------------------------------------------------
// Tool-found values: "request\n$ command\nresult".
// ---------------------------------------------------------------------------

const FOUND_RULES: &[Template] = &[
    t(
        "Check which branch is protected before you push anything.\n$ gh api repos/acme/app/branches --jq '.[] | select(.protected) | .name'\n{v}",
        "release-!#~-@@@",
        [
            "Branch protection changed, look again.\n$ gh api repos/acme/app/branches --jq '.[] | select(.protected) | .name'\n{v}",
            "They moved the protected branch. Check it.\n$ gh api repos/acme/app/branches --jq '.[] | select(.protected) | .name'\n{v}",
        ],
    ),
    t(
        "See who owns the payments code, we need their sign-off.\n$ grep payments CODEOWNERS\n/src/payments/ {v}",
        "acme/team-@@@@!#",
        [
            "Ownership changed, grep it again.\n$ grep payments CODEOWNERS\n/src/payments/ {v}",
            "CODEOWNERS was updated on main. Look there.\n$ git show origin/main:CODEOWNERS | grep -n payments\n12:/src/payments/ {v}",
        ],
    ),
    t(
        "Read the freeze policy before touching prod.\n$ cat ops/freeze.yaml\nfreeze:\n  window: {v}\n  allow: hotfix-only",
        "202!-1!-0!..202!-1!-2!",
        [
            "The freeze window was edited, read it again.\n$ cat ops/freeze.yaml\nfreeze:\n  window: {v}\n  allow: hotfix-only",
            "Check the freeze window the cluster has.\n$ kubectl get configmap freeze -o jsonpath='{.data.window}'\n{v}",
        ],
    ),
    t(
        "Look up which namespace we are allowed to deploy into.\n$ kubectl auth can-i create deployments --all-namespaces -o name\nnamespace/{v}",
        "team-@@@@-!#",
        [
            "Our RBAC got changed, check the namespace again.\n$ kubectl auth can-i create deployments --all-namespaces -o name\nnamespace/{v}",
            "Re-check where we may deploy.\n$ kubectl auth can-i create deployments --all-namespaces -o name\nnamespace/{v}",
        ],
    ),
];

const FOUND_CONSTRAINTS: &[Template] = &[
    t(
        "What's our memory quota? Don't exceed it.\n$ kubectl describe quota -n app\nName: compute\nResource  Used  Hard\nlimits.memory  12Gi  {v}",
        "!#~Gi",
        [
            "The quota was raised, describe it again.\n$ kubectl describe quota -n app\nName: compute\nResource  Used  Hard\nlimits.memory  12Gi  {v}",
            "Read the quota object itself.\n$ kubectl get quota compute -n app -o yaml | grep -A1 hard\nhard:\n  limits.memory: {v}",
        ],
    ),
    t(
        "Find the rate limit the gateway enforces, we must stay under it.\n$ grep -n rate_limit gateway/config.toml\n14:rate_limit = {v}",
        "!#~#",
        [
            "Gateway config changed, grep the limit again.\n$ grep -n rate_limit gateway/config.toml\n14:rate_limit = {v}",
            "Look at the rate limit once more.\n$ grep -n rate_limit gateway/config.toml\n14:rate_limit = {v}",
        ],
    ),
    t(
        "Which Python does the runtime support? Stick to it.\n$ cat runtime.txt\npython-{v}",
        "3.1!.!#",
        [
            "The runtime was bumped, cat it again.\n$ cat runtime.txt\npython-{v}",
            "Check runtime.txt again.\n$ cat runtime.txt\npython-{v}",
        ],
    ),
    t(
        "What's the max payload size on the queue? Messages can't be bigger.\n$ aws sqs get-queue-attributes --attribute-names MaximumMessageSize\n{ \"MaximumMessageSize\": \"{v}\" }",
        "!#~#!",
        [
            "They changed the queue, get the size again.\n$ aws sqs get-queue-attributes --attribute-names MaximumMessageSize\n{ \"MaximumMessageSize\": \"{v}\" }",
            "Re-read the queue's max size.\n$ aws sqs get-queue-attributes --attribute-names MaximumMessageSize\n{ \"MaximumMessageSize\": \"{v}\" }",
        ],
    ),
];

const FOUND_FACTS: &[Template] = &[
    t(
        "Look at the deploy env first.\n$ cat deploy.env\nregion=eu-west-3\nreplicas=4\nDB_HOST={v}",
        "pg-prod-!#~.internal",
        [
            "The DB was failed over, read the env again.\n$ cat deploy.env\nregion=eu-west-3\nreplicas=4\nDB_HOST={v}",
            "Ask the app which database it uses.\n$ curl -s localhost:8080/config | jq .\n{\n  \"db_host\": \"{v}\",\n  \"pool\": 20\n}",
        ],
    ),
    t(
        "Which build is live right now?\n$ curl -s https://status.acme.dev/version\n{\"build\": \"{v}\", \"healthy\": true}",
        "202!.1~.!-rc!#",
        [
            "They deployed again, check the version.\n$ curl -s https://status.acme.dev/version\n{\"build\": \"{v}\", \"healthy\": true}",
            "What's live now?\n$ curl -s https://status.acme.dev/version\n{\"build\": \"{v}\", \"healthy\": true}",
        ],
    ),
    t(
        "What commit is main on?\n$ git rev-parse --short origin/main\n{v}",
        "^^^^^^^^^",
        [
            "Main moved, fetch and check again.\n$ git rev-parse --short origin/main\n{v}",
            "Check main again after the merge.\n$ git rev-parse --short origin/main\n{v}",
        ],
    ),
    t(
        "Find the cache host in the config.\n$ grep CACHE_URL .env.production\nCACHE_URL=redis://{v}:6379",
        "cache-!#~-@@@.internal",
        [
            "The cache moved, grep again.\n$ grep CACHE_URL .env.production\nCACHE_URL=redis://{v}:6379",
            "Ask the running pod for its cache.\n$ kubectl exec deploy/web -- printenv CACHE_URL\nredis://{v}:6379",
        ],
    ),
];

const FOUND_GOALS: &[Template] = &[
    t(
        "Run the suite and tell me what fails; that's what we fix next.\n$ cargo test -p ledger\ntest result: FAILED. 41 passed; 1 failed\nfailures:\n    {v}",
        "ledger::tests::@@@@@_!#",
        [
            "Run it again, something else broke.\n$ cargo test -p ledger\ntest result: FAILED. 41 passed; 1 failed\nfailures:\n    {v}",
            "Rerun the suite.\n$ cargo test -p ledger\ntest result: FAILED. 41 passed; 1 failed\nfailures:\n    {v}",
        ],
    ),
    t(
        "Open the issue we are working on.\n$ gh issue view --json title,body\ntitle: Speed up checkout\nbody: Acceptance: p95 of checkout under {v}",
        "!#~ms",
        [
            "The acceptance criteria were edited, view it again.\n$ gh issue view --json title,body\ntitle: Speed up checkout\nbody: Acceptance: p95 of checkout under {v}",
            "Read the issue again.\n$ gh issue view --json title,body\ntitle: Speed up checkout\nbody: Acceptance: p95 of checkout under {v}",
        ],
    ),
    t(
        "Which migration is next in line?\n$ ls migrations/pending\n{v}.sql",
        "!#~_add_@@@@@",
        [
            "List the pending ones again.\n$ ls migrations/pending\n{v}.sql",
            "What's pending now?\n$ ls migrations/pending\n{v}.sql",
        ],
    ),
    t(
        "What's the milestone we target?\n$ gh api repos/acme/app/milestones --jq '.[0].title'\n{v}",
        "v!.#~-@@@@",
        [
            "Milestones got shuffled, check again.\n$ gh api repos/acme/app/milestones --jq '.[0].title'\n{v}",
            "Look at the milestone again.\n$ gh api repos/acme/app/milestones --jq '.[0].title'\n{v}",
        ],
    ),
];

const FOUND_PREFERENCES: &[Template] = &[
    t(
        "Sign commits the way the repo is set up.\n$ git config user.signingkey\n{v}",
        "^^^^^^^^^^^^^^^^",
        [
            "The signing key was rotated, look it up again.\n$ git config user.signingkey\n{v}",
            "Check the signing key again.\n$ git config user.signingkey\n{v}",
        ],
    ),
    t(
        "Follow the team's commit template.\n$ git config commit.template\n{v}",
        "$HOME/.git-@@@@!#.txt",
        [
            "The template path changed, check it again.\n$ git config commit.template\n{v}",
            "Look the template up again.\n$ git config commit.template\n{v}",
        ],
    ),
    t(
        "Which reviewer group does the repo want on PRs?\n$ gh api repos/acme/app --jq .default_reviewers\n{v}",
        "reviewers-@@@!#",
        [
            "Default reviewers changed, check again.\n$ gh api repos/acme/app --jq .default_reviewers\n{v}",
            "Query the reviewers again.\n$ gh api repos/acme/app --jq .default_reviewers\n{v}",
        ],
    ),
    t(
        "What log format does the service config ask for?\n$ grep log_format service.yaml\nlog_format: {v}",
        "json-v!#~",
        [
            "service.yaml changed, grep again.\n$ grep log_format service.yaml\nlog_format: {v}",
            "See what the helm values say about the log format.\n$ grep -n log_format deploy/helm/values.yaml\n31:  log_format: {v}",
        ],
    ),
];

const FOUND_RULE_TWINS: &[Twin] = &[Twin {
    text: "Check who may approve {s} changes.\n$ grep {s} .github/approvers\n{s} approvers: {v}",
    shape: "acme/{s}-!#~",
    subjects: &["infra", "payments", "auth", "search"],
}];
const FOUND_CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "What's the CPU limit of {s}?\n$ kubectl get deploy {s} -o jsonpath='{.spec.template.spec.containers[0].resources.limits.cpu}'\n{s} cpu limit: {v}",
    shape: "!#~m",
    subjects: &["api", "worker", "scheduler", "gateway"],
}];
const FOUND_FACT_TWINS: &[Twin] = &[Twin {
    text: "Which host does {s} resolve to?\n$ dig +short {s}.svc.acme\n{s} address: {v}",
    shape: "10.!#.~#.!#",
    subjects: &["billing", "ledger", "notifier", "reports"],
}];
const FOUND_GOAL_TWINS: &[Twin] = &[Twin {
    text: "How many {s} tests fail right now? We fix those next.\n$ make test-{s} | tail -1\n{s} tests failed: {v}",
    shape: "!#~/2#~#",
    subjects: &["unit", "integration", "contract", "smoke"],
}];
const FOUND_PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "What refresh does the {s} panel use?\n$ jq .refresh dashboards/{s}.json\n{s} panel refresh: {v}",
    shape: "\"!#~s\"",
    subjects: &["latency", "errors", "traffic", "saturation"],
}];

pub const FOUND: Bank = Bank {
    name: "found",
    templates: [
        FOUND_RULES,
        FOUND_CONSTRAINTS,
        FOUND_FACTS,
        FOUND_GOALS,
        FOUND_PREFERENCES,
    ],
    twins: [
        FOUND_RULE_TWINS,
        FOUND_CONSTRAINT_TWINS,
        FOUND_FACT_TWINS,
        FOUND_GOAL_TWINS,
        FOUND_PREFERENCE_TWINS,
    ],
    lead_ins: &["", "", "", "Quick check:", "Before the next step:"],
    trailers: &["", "", "We'll need it later."],
    acks: &[
        "Noted that value; I'll use it when we get there.",
        "Got it, I'll go by what the tool showed.",
        "Okay, that's what we'll work with.",
        "Read it. Continuing with that in mind.",
    ],
    routine: &[],
    decoys: &[],
};

// ---------------------------------------------------------------------------
// Labelled routine beside labelled rules.
// ---------------------------------------------------------------------------

const LABELLED_RULES: &[Template] = &[
    t(
        "SECURITY RULE: never paste tokens into logs; redact anything that starts with {v}.",
        "tok_@@@!#",
        [
            "SECURITY RULE update: the token prefix to redact is {v} now.",
            "Tokens are issued with {v} now; same security rule, redact them.",
        ],
    ),
    t(
        "RULE: the only account you run terraform with is {v}.",
        "tf-@@@@-!#~",
        [
            "RULE change: terraform runs as {v} now.",
            "The terraform account is {v} after the rotation.",
        ],
    ),
    t(
        "Security: no outbound calls except to {v}.",
        "egress-!#~.acme.net",
        [
            "Security: the only allowed egress host is {v} now.",
            "Outbound is allowed to {v} instead.",
        ],
    ),
    t(
        "POLICY: data from the region {v} never leaves it.",
        "%%-@@@@-!",
        [
            "POLICY: the region whose data stays put is {v} now.",
            "Data residency moved to {v}.",
        ],
    ),
];

const LABELLED_CONSTRAINTS: &[Template] = &[
    t(
        "HARD LIMIT: Node {v} only, nothing newer.",
        "2~.!#.!",
        [
            "HARD LIMIT raised: Node {v}.",
            "We may use Node {v} now, still nothing newer.",
        ],
    ),
    t(
        "LIMIT: each page load makes at most {v} queries.",
        "!#",
        [
            "LIMIT: queries per page load may go to {v}.",
            "Page loads are allowed {v} queries now.",
        ],
    ),
    t(
        "Deadline: the API freeze is {v}.",
        "202!-0!-1!",
        [
            "Deadline: the API freeze moved to {v}.",
            "API freeze is {v} now.",
        ],
    ),
    t(
        "BUDGET: the cloud bill stays under {v} a month.",
        "$!#,#~0",
        [
            "BUDGET: monthly cloud ceiling is {v} now.",
            "Finance raised the cloud budget to {v} a month.",
        ],
    ),
];

const LABELLED_FACTS: &[Template] = &[
    t(
        "FACT: the service is called {v}, go-live 2027-02-01.",
        "HARBOR-%%!#",
        [
            "FACT: the service was renamed to {v}.",
            "The service's name is {v} now.",
        ],
    ),
    t(
        "Fact: the primary database is {v}.",
        "db-!#~-@@@.prod",
        [
            "Fact: the primary is {v} after the failover.",
            "The primary database became {v}.",
        ],
    ),
    t(
        "FACT: the payments API key id is {v}.",
        "pk_%%%%!#~",
        [
            "FACT: payments key id is {v} after rotation.",
            "The payments key id is {v} now.",
        ],
    ),
    t(
        "Info that matters: the on-call alias is {v}.",
        "oncall-@@@@-!#",
        ["The on-call alias is {v} now.", "On-call moved to {v}."],
    ),
];

const LABELLED_GOALS: &[Template] = &[
    t(
        "GOAL: the checkout p95 gets under {v}.",
        "!#~ms",
        [
            "GOAL revised: checkout p95 under {v}.",
            "The checkout target is {v} now.",
        ],
    ),
    t(
        "Next step: ticket {v}.",
        "%%%-!#~#",
        ["Next step changed: ticket {v}.", "After this, ticket {v}."],
    ),
    t(
        "TARGET: error rate below {v} percent by the review.",
        "0.!#",
        [
            "TARGET: error rate below {v} percent now.",
            "The error target moved to {v} percent.",
        ],
    ),
    t(
        "Goal for today: land the branch {v}.",
        "feat/@@@@-!#~",
        ["Goal for today is the branch {v}.", "Land {v} today."],
    ),
];

const LABELLED_PREFERENCES: &[Template] = &[
    t(
        "STYLE: prefix private helpers with {v}.",
        "@@!_",
        [
            "STYLE: private helper prefix is {v} now.",
            "Prefix helpers with {v}.",
        ],
    ),
    t(
        "Preference: config keys in the namespace {v}.",
        "acme.@@@@!#",
        [
            "Preference: keys go under {v} now.",
            "Use {v} as the config namespace.",
        ],
    ),
    t(
        "CONVENTION: release notes go to {v}.",
        "docs/notes-!#~.md",
        [
            "CONVENTION: release notes are in {v} now.",
            "Write release notes into {v}.",
        ],
    ),
    t(
        "Style: error codes look like {v}.",
        "E%%!#~",
        [
            "Style: error codes look like {v} now.",
            "Error codes follow {v} now.",
        ],
    ),
];

const LABELLED_RULE_TWINS: &[Twin] = &[Twin {
    text: "SECURITY RULE: the {s} secrets are read only from {v}.",
    shape: "vault/{s}-!#~",
    subjects: &["payments", "auth", "search", "mail"],
}];
const LABELLED_CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "HARD LIMIT: the {s} image stays under {v}.",
    shape: "!#~MB",
    subjects: &["api", "worker", "cron", "proxy"],
}];
const LABELLED_FACT_TWINS: &[Twin] = &[Twin {
    text: "FACT: the {s} cluster is {v}.",
    shape: "gke-{s}-!#~",
    subjects: &["prod", "staging", "batch", "edge"],
}];
const LABELLED_GOAL_TWINS: &[Twin] = &[Twin {
    text: "GOAL: the {s} suite runs in under {v} seconds.",
    shape: "!#~",
    subjects: &["unit", "integration", "e2e", "lint"],
}];
const LABELLED_PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "STYLE: {s} modules are named with {v}.",
    shape: "{s}_@@!_",
    subjects: &["handler", "model", "service", "util"],
}];

pub const LABELLED: Bank = Bank {
    name: "labelled",
    templates: [
        LABELLED_RULES,
        LABELLED_CONSTRAINTS,
        LABELLED_FACTS,
        LABELLED_GOALS,
        LABELLED_PREFERENCES,
    ],
    twins: [
        LABELLED_RULE_TWINS,
        LABELLED_CONSTRAINT_TWINS,
        LABELLED_FACT_TWINS,
        LABELLED_GOAL_TWINS,
        LABELLED_PREFERENCE_TWINS,
    ],
    lead_ins: &["", "", "", "One more:", "Also,"],
    trailers: &["", "", "Thanks."],
    acks: &[
        "Noted.",
        "Got it.",
        "Understood, I'll follow that.",
        "Okay.",
    ],
    routine: &[
        "Note: the formatter settings sit in setup.cfg.",
        "Reminder: renew the TLS cert before Friday.",
        "Sync notes: nothing new from the platform team.",
        "NOTE: standup is async today.",
        "Status: still reviewing the importer.",
        "FYI: the wiki page for onboarding was updated.",
        "Reminder: fill in the timesheet.",
        "Note to self: look at the flaky test later.",
        "TODO (not now): tidy the README.",
        "Heads-up: CI is slow this afternoon.",
        "Sync notes: design review moved to next week.",
        "Info: the staging dashboard is a bit laggy.",
        "Reminder: the demo recording is on the drive.",
        "Note: ignore the deprecation warnings for now.",
        "Status: reading logs.",
    ],
    decoys: &[
        "FYI: the nightly took {n} minutes again.",
        "Note: we had {n} alerts overnight, all noise.",
        "Reminder: the old limit was {n}, before the rewrite.",
        "Status: {n} tickets in the backlog, not our problem today.",
        "Sync notes: the other team closed {n} bugs this sprint.",
        "Heads-up: the office network dropped {n} times this morning.",
        "Note: the old build server had {n} cores.",
        "FYI: {n} people signed up for the training.",
        "Status: the log is {n} lines long, skimming it.",
        "Reminder: last year we paid {n} dollars for the licence, renewal is someone else's job.",
        "Sync notes: support answered {n} tickets last week.",
        "Heads-up: the test database has {n} rows of junk in it.",
        "Info: the legacy API still gets {n} calls a day.",
        "Note: the old cron used to run {n} times a day.",
        "FYI: the wiki has {n} pages nobody reads.",
    ],
};

// ---------------------------------------------------------------------------
// Emphasis: capitals, IMPORTANT, NEVER, MUST, and the assistant's own
// acknowledgement (after `REPLY`).
// ---------------------------------------------------------------------------

const EMPHASIS_RULES: &[Template] = &[
    t(
        "IMPORTANT: NEVER run the cleanup script against {v}.",
        "cluster-@@@@-!#",
        [
            "The cluster to keep the cleanup script away from is {v} now.",
            "Cleanup must stay off {v} now, they renamed the cluster.",
        ],
    ),
    t(
        "You MUST sign every release with the key {v}.\n=> Noted: every release gets signed with that key.",
        "^^^^^^^^^^^^",
        [
            "Release signing key rotated to {v}.\n=> Noted: releases are signed with the new key from now on.",
            "Sign releases with {v} from now on.",
        ],
    ),
    t(
        "DO NOT TOUCH the directory {v}. Ever.",
        "vendor/@@@@-!#~",
        [
            "The directory not to touch is {v} now.",
            "Vendored code moved to {v}; still hands off.",
        ],
    ),
    t(
        "exports stay CSV, never XLSX, and they go to {v}\n=> Noted: exports stay CSV and go to that location.",
        "sftp://@@@@!#.acme.net/out",
        [
            "Exports go to {v} now, still CSV.",
            "The export drop is {v} from this week.",
        ],
    ),
];

const EMPHASIS_CONSTRAINTS: &[Template] = &[
    t(
        "The payload limit is {v} — THIS IS A HARD CAP.",
        "!#~KB",
        [
            "The payload cap is {v} now.",
            "Payloads may be up to {v} now.",
        ],
    ),
    t(
        "IMPORTANT: we MUST support Postgres {v} and nothing older.",
        "1!.!",
        [
            "Postgres floor is {v} now.",
            "The oldest Postgres we support is {v} now.",
        ],
    ),
    t(
        "Timeouts MUST be {v} seconds, no more.\n=> Understood, timeouts stay at that ceiling.",
        "!#~",
        [
            "Timeouts are {v} seconds now.",
            "The timeout ceiling is {v} seconds now.",
        ],
    ),
    t(
        "the launch is {v} and it WILL NOT move",
        "202!-0!-1!",
        ["Launch moved anyway: {v}.", "Launch is {v} now."],
    ),
];

const EMPHASIS_FACTS: &[Template] = &[
    t(
        "Keep this in mind, it's IMPORTANT: the prod bucket is {v}.",
        "acme-prod-@@@@-!#~",
        [
            "The prod bucket is {v} after the move.",
            "Prod bucket changed to {v}.",
        ],
    ),
    t(
        "the license server is {v}\n=> Noted: that's the license server, I'll point the build at it.",
        "lic-!#~.acme.net",
        [
            "License server moved to {v}.",
            "The license server is {v} now.",
        ],
    ),
    t(
        "REMEMBER: the SDK version we ship is {v}.",
        "!.#~.#-@@@@",
        ["We ship SDK {v} now.", "The shipping SDK is {v} now."],
    ),
    t(
        "The customer id for the pilot is {v}, DON'T MIX IT UP.",
        "cust-%%%%!#",
        [
            "The pilot's customer id is {v} now.",
            "Pilot customer id changed: {v}.",
        ],
    ),
];

const EMPHASIS_GOALS: &[Template] = &[
    t(
        "The ONE thing that matters this week: ticket {v}.",
        "%%%%-!#~#",
        [
            "This week's one thing is ticket {v} now.",
            "Priority changed, ticket {v} this week.",
        ],
    ),
    t(
        "We MUST get the bundle under {v} before launch.\n=> Understood, the bundle size target is the priority.",
        "!#~KB",
        [
            "The bundle target is {v} now.",
            "Bundle under {v}, that's the new target.",
        ],
    ),
    t(
        "IMPORTANT — next up is migrating {v}.",
        "tbl_@@@@_!#",
        [
            "Next up is migrating {v} now.",
            "The next table to migrate is {v}.",
        ],
    ),
    t(
        "the goal, and I mean THE goal, is {v} uptime",
        "99.!#~",
        ["The uptime goal is {v} now.", "Uptime target moved to {v}."],
    ),
];

const EMPHASIS_PREFERENCES: &[Template] = &[
    t(
        "PLEASE always name branches with {v} in front.",
        "@@!-",
        ["Branch prefix is {v} now.", "Prefix branches with {v} now."],
    ),
    t(
        "I REALLY want the changelog in {v}.\n=> Noted: the changelog goes in that file.",
        "docs/@@@@-!#.md",
        ["Changelog lives in {v} now.", "Put the changelog in {v}."],
    ),
    t(
        "IMPORTANT for me: reviewers are {v}, always.",
        "@@@@-review-!#",
        ["Reviewers are {v} now.", "Request review from {v} now."],
    ),
    t(
        "use {v} for the test fixtures, ALWAYS",
        "fixtures/@@@!#",
        ["Fixtures go in {v} now.", "Test fixtures live in {v} now."],
    ),
];

const EMPHASIS_RULE_TWINS: &[Twin] = &[Twin {
    text: "NEVER drop the {s} index {v}.",
    shape: "idx_{s}_!#~",
    subjects: &["orders", "users", "events", "invoices"],
}];
const EMPHASIS_CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "The {s} queue MUST stay under {v} messages.",
    shape: "!#,#~0",
    subjects: &["email", "billing", "export", "webhook"],
}];
const EMPHASIS_FACT_TWINS: &[Twin] = &[Twin {
    text: "IMPORTANT: the {s} service is on port {v}.",
    shape: "5!#~#",
    subjects: &["auth", "search", "ledger", "notifier"],
}];
const EMPHASIS_GOAL_TWINS: &[Twin] = &[Twin {
    text: "We MUST get the {s} suite to {v} percent coverage.",
    shape: "!#.!",
    subjects: &["parser", "router", "exporter", "scheduler"],
}];
const EMPHASIS_PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "ALWAYS keep {s} logs for {v} days.",
    shape: "!#~",
    subjects: &["access", "audit", "debug", "error"],
}];

pub const EMPHASIS: Bank = Bank {
    name: "emphasis",
    templates: [
        EMPHASIS_RULES,
        EMPHASIS_CONSTRAINTS,
        EMPHASIS_FACTS,
        EMPHASIS_GOALS,
        EMPHASIS_PREFERENCES,
    ],
    twins: [
        EMPHASIS_RULE_TWINS,
        EMPHASIS_CONSTRAINT_TWINS,
        EMPHASIS_FACT_TWINS,
        EMPHASIS_GOAL_TWINS,
        EMPHASIS_PREFERENCE_TWINS,
    ],
    lead_ins: &["", "", "", "Listen,", "OK so"],
    trailers: &["", "", "Thanks!"],
    acks: &["Got it.", "Okay.", "Understood.", "Will do."],
    routine: &[
        "OK, rerun it.",
        "NICE, that worked.",
        "Hmm, let me look.",
        "PLEASE just rerun the tests.",
        "ok ok, continue",
        "WAIT, let me read the diff first.",
        "Looks fine.",
        "Go on.",
        "ugh, CI again",
        "That's GREAT, next file.",
        "oh NICE.",
        "Alright, alright.",
        "HOLD ON, what was that warning?",
        "ok, whatever works.",
        "Good, next.",
    ],
    decoys: &[
        "IMPORTANT meeting at {n} today, not about this.",
        "I NEVER understood why the old build took {n} minutes.",
        "We MUST have restarted that box {n} times last year.",
        "LOL the linter found {n} issues in the legacy folder.",
        "The old team ALWAYS had {n} open PRs.",
        "I've seen this test fail {n} times, it's RIDICULOUS.",
        "My inbox has {n} unread mails, DON'T ask.",
        "The coffee machine broke {n} times this month, IMPORTANT issue honestly.",
        "That old script had {n} lines of bash, NEVER again.",
        "There were {n} people at the all-hands, ALL of them bored.",
        "We MUST have spent {n} hours on that flaky test.",
        "I ALWAYS forget the VPN, {n} times this week already.",
        "The old deploy had {n} manual steps, CRAZY.",
        "LOL {n} emails about the parking lot.",
        "IMPORTANT news: the canteen serves {n} dishes now.",
    ],
};
