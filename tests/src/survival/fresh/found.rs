//! The third held-back half of the tool-found shape: written once on
//! 2026-12-05 by someone who had not read the summarizer (nor the earlier
//! held-back banks). Each template is a person's request, the command the
//! agent runs and what the tool printed, which carries the value; each
//! update is a later look (the same command, other flags, another file or
//! tool, another output format) that finds a new value without quoting the
//! old one.

use super::super::bank::{Bank, Template, Twin, t};

const FRESH_FOUND_RULES: &[Template] = &[
    t(
        "Find out which CI check main insists on before anything merges; I don't want to guess.\n$ gh api repos/northwind/orders/branches/main/protection/required_status_checks --jq '.contexts[]'\nci/lint\n{v}\nci/unit",
        "ci/@@@@@-gate-!#",
        [
            "The protection settings on main were edited this morning. Repeat the API call.\n$ gh api repos/northwind/orders/branches/main/protection/required_status_checks --jq '.contexts[]'\nci/lint\n{v}\nci/unit",
            "They moved branch protection into a ruleset. Read that instead.\n$ gh ruleset view --repo northwind/orders 4471\nName: main-guard\nEnforcement: active\nTarget: branch (~DEFAULT_BRANCH)\n\nRules\n- required_status_checks: ci/lint, {v}, ci/unit\n- pull_request: 2 required approvals",
        ],
    ),
    t(
        "Which registry are we allowed to pull images from? Check the admission policy before I add the sidecar.\n$ kubectl get clusterpolicy restrict-image-registries -o yaml | grep -A5 'validate:'\n    validate:\n      message: \"Images must come from the approved registry.\"\n      pattern:\n        spec:\n          containers:\n          - image: \"{v}/*\"",
        "@@@@@!#~.azurecr.io",
        [
            "Security swapped the approved registry. Pull only the image pattern out of the policy.\n$ kubectl get clusterpolicy restrict-image-registries -o json | jq -r '.spec.rules[].validate.pattern.spec.containers[].image'\n{v}/*",
            "Check the policy source in the platform repo; that's what gets synced to the cluster.\n$ grep -n 'image:' platform/policies/restrict-image-registries.yaml\n27:          - image: \"{v}/*\"",
        ],
    ),
    t(
        "Which directory holds generated code we must never edit by hand? Look at the repo's attributes.\n$ cat .gitattributes\n*.png binary\n{v}/** linguist-generated=true -diff\nCHANGELOG.md merge=union",
        "pkg/@@@@-gen!#",
        [
            "The codegen output moved in the last refactor. Read .gitattributes once more.\n$ cat .gitattributes\n*.png binary\n{v}/** linguist-generated=true -diff\nCHANGELOG.md merge=union",
            "The linter skips that same directory; see what it lists now.\n$ grep -A3 'exclude-dirs' .golangci.yml\n  exclude-dirs:\n    - {v}\n    - third_party\n  max-same-issues: 0",
        ],
    ),
    t(
        "Who has to approve a production deploy? Check the environment, I'd rather not find out the hard way.\n$ gh api repos/northwind/orders/environments/production --jq '.protection_rules[].reviewers[]?.reviewer.slug'\n{v}",
        "sre-@@@@@-!#",
        [
            "The production environment got new reviewers. Repeat that query.\n$ gh api repos/northwind/orders/environments/production --jq '.protection_rules[].reviewers[]?.reviewer.slug'\n{v}",
            "Look at how terraform has the production approvers.\n$ terraform state show 'data.github_team.prod_approvers' | grep slug\n    slug        = \"{v}\"",
        ],
    ),
    t(
        "The agent may only act under one IAM role. Read the AWS config to see which.\n$ cat ~/.aws/config\n[default]\nregion = eu-central-1\n\n[profile agent]\nrole_arn = arn:aws:iam::403918226571:role/{v}\nsource_profile = default",
        "agent-@@@@-ro!#",
        [
            "The role was rotated. Ask STS who we are now.\n$ aws sts get-caller-identity --profile agent\n{\n    \"UserId\": \"AROAV3QZ7N2KLX8PD4M1E:botocore-session-1764925021\",\n    \"Account\": \"403918226571\",\n    \"Arn\": \"arn:aws:sts::403918226571:assumed-role/{v}/botocore-session-1764925021\"\n}",
            "Check what the CLI resolves for the agent profile.\n$ aws configure get role_arn --profile agent\narn:aws:iam::403918226571:role/{v}",
        ],
    ),
];

const FRESH_FOUND_CONSTRAINTS: &[Template] = &[
    t(
        "What Node range does the package declare? Don't use syntax or APIs outside it.\n$ npm pkg get engines\n{\n  \"node\": \"{v}\"\n}",
        ">=1!.!#.~",
        [
            "The engines field was bumped in the last merge. Ask node directly.\n$ node -p \"require('./package.json').engines.node\"\n{v}",
            "Read it with jq this time.\n$ jq -r .engines.node package.json\n{v}",
        ],
    ),
    t(
        "How many connections will the database accept? Our pool sizes have to fit under that.\n$ psql -h pg-orders.internal -U app -c 'SHOW max_connections;'\n max_connections \n-----------------\n {v}\n(1 row)",
        "!~#0",
        [
            "They resized the instance and the setting changed with it. Read it from pg_settings.\n$ psql -h pg-orders.internal -U app -Atc \"select setting from pg_settings where name = 'max_connections'\"\n{v}",
            "The real setting lives in the RDS parameter group; query it.\n$ aws rds describe-db-parameters --db-parameter-group-name orders-pg16 --query \"Parameters[?ParameterName=='max_connections'].ParameterValue\" --output text\n{v}",
        ],
    ),
    t(
        "What's the biggest request body the proxy lets through? The bulk import must stay below it.\n$ grep -rn client_max_body_size /etc/nginx/conf.d/\n/etc/nginx/conf.d/api.conf:18:    client_max_body_size {v};",
        "!#~m",
        [
            "Ops reloaded nginx with a new config; repeat the search.\n$ grep -rn client_max_body_size /etc/nginx/conf.d/\n/etc/nginx/conf.d/api.conf:18:    client_max_body_size {v};",
            "In the cluster it's an ingress annotation; read that.\n$ kubectl get ingress api -n edge -o yaml | grep body-size\n    nginx.ingress.kubernetes.io/proxy-body-size: {v}",
        ],
    ),
    t(
        "Check the bundle budget CI enforces; the new chart library can't push us over it.\n$ cat .size-limit.json\n[\n  {\n    \"path\": \"dist/app.js\",\n    \"limit\": \"{v}\"\n  }\n]",
        "!#~ KB",
        [
            "Someone loosened the budget. Run the check and read the limit it reports.\n$ npx size-limit\n  dist/app.js\n  Size limit: {v}\n  Size:       96.8 KB with all dependencies, minified and brotlied",
            "Read just the limit with jq.\n$ jq -r '.[0].limit' .size-limit.json\n{v}",
        ],
    ),
    t(
        "Call the partner API once and see what rate limit they give us; we can't go over it.\n$ curl -sI https://api.partnerhub.example/v2/orders -H \"Authorization: Bearer $PARTNER_TOKEN\"\nHTTP/2 200\ncontent-type: application/json\nx-ratelimit-limit: {v}\nx-ratelimit-reset: 60",
        "!#~#",
        [
            "We moved to the bigger plan. Look at the headers again.\n$ curl -sI https://api.partnerhub.example/v2/orders -H \"Authorization: Bearer $PARTNER_TOKEN\"\nHTTP/2 200\ncontent-type: application/json\nx-ratelimit-limit: {v}\nx-ratelimit-reset: 60",
            "Their account endpoint spells out the limits; ask it.\n$ curl -sS https://api.partnerhub.example/v2/account/limits -H \"Authorization: Bearer $PARTNER_TOKEN\" | jq .\n{\n  \"plan\": \"growth\",\n  \"requests_per_minute\": {v},\n  \"burst\": 50\n}",
        ],
    ),
];

const FRESH_FOUND_FACTS: &[Template] = &[
    t(
        "What image is the checkout service running right now?\n$ kubectl get pods -n shop -l app=checkout -o custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[*].image\nNAME                        IMAGE\ncheckout-7d9f8b6c4-x2lqp    ghcr.io/northwind/checkout:{v}\ncheckout-7d9f8b6c4-q8wzn    ghcr.io/northwind/checkout:{v}",
        "!.~#.#-r!#",
        [
            "A rollout just finished; see what the deployment runs now.\n$ kubectl -n shop describe deployment checkout | grep -i image\n    Image:        ghcr.io/northwind/checkout:{v}",
            "See what the helm release is set to.\n$ helm get values checkout -n shop -o yaml\nimage:\n  repository: ghcr.io/northwind/checkout\n  tag: {v}\nreplicaCount: 3",
        ],
    ),
    t(
        "What's the most recent release tag?\n$ git describe --tags --abbrev=0\n{v}",
        "v!.!#.~#",
        [
            "A release went out this afternoon; list them.\n$ gh release list --repo northwind/orders --limit 3\nTITLE              TYPE    TAG NAME    PUBLISHED\nRefund fixes       Latest  {v}     about 2 hours ago\nSpring cleanup             v3.2.0      about 9 days ago",
            "Fetch tags and take the newest by date.\n$ git fetch --tags -q && git tag --sort=-creatordate | head -n 1\n{v}",
        ],
    ),
    t(
        "Which bucket does the export job write its files to?\n$ grep -n EXPORT_BUCKET config/production.env\n7:EXPORT_BUCKET=s3://{v}/exports",
        "nw-exports-@@@@-!#~",
        [
            "They migrated the exports to a new bucket. Read the parameter store value.\n$ aws ssm get-parameter --name /orders/prod/export_bucket --query Parameter.Value --output text\n{v}",
            "Check what terraform has for it.\n$ terraform output -json export_bucket\n\"{v}\"",
        ],
    ),
    t(
        "Which commit is staging serving?\n$ curl -fsS https://staging.northwind.dev/healthz\n{\"status\":\"ok\",\"commit\":\"{v}\",\"uptime_s\":48211}",
        "^^^^^^^",
        [
            "Argo synced a new revision. Ask it.\n$ argocd app get web-staging | grep -i 'sync status'\nSync Status:        Synced to main ({v})",
            "Look at the latest staging deployment on GitHub.\n$ gh api 'repos/northwind/web/deployments?environment=staging' --jq '.[0].sha[0:7]'\n{v}",
        ],
    ),
    t(
        "Where does pip pull packages from in this project?\n$ pip config list\nglobal.index-url='https://{v}/simple'\nglobal.timeout='30'",
        "pypi-!#~.@@@@@.internal",
        [
            "The mirror got moved. Read the pip.conf in the repo.\n$ cat pip.conf\n[global]\nindex-url = https://{v}/simple\ntimeout = 30",
            "The requirements file pins the index too; grep it.\n$ grep -n index-url requirements/base.txt\n1:--index-url https://{v}/simple",
        ],
    ),
];

const FRESH_FOUND_GOALS: &[Template] = &[
    t(
        "Run the billing tests and tell me which one fails. We tackle that one next.\n$ pytest -q tests/billing\n.......F..\nFAILED tests/billing/test_invoice.py::{v} - AssertionError: assert 1180 == 1200\n1 failed, 9 passed in 2.14s",
        "test_@@@@@_!#",
        [
            "I pushed a fix for that one. Run the suite again.\n$ pytest -q tests/billing\n.........F\nFAILED tests/billing/test_invoice.py::{v} - KeyError: 'currency'\n1 failed, 9 passed in 2.09s",
            "Run it through tox the way CI does.\n$ tox -e py312 -- -q tests/billing\npy312: commands[0]> pytest -q tests/billing\n...F......\nFAILED tests/billing/test_invoice.py::{v} - TypeError: unsupported operand type(s) for +: 'Decimal' and 'float'\n1 failed, 9 passed in 3.02s\npy312: exit 1 (3.61 seconds)",
        ],
    ),
    t(
        "What's the top p0 issue right now? That's the next thing we pick up.\n$ gh issue list --repo northwind/orders --label p0 --limit 1\nShowing 1 of 3 open issues in northwind/orders that match your search\n\n#{v}  Refund webhook fires twice  bug, p0  about 1 day ago",
        "!#~#",
        [
            "Triage reshuffled the p0s. Ask for it as JSON.\n$ gh issue list --repo northwind/orders --label p0 --limit 1 --json number,title\n[{\"number\":{v},\"title\":\"Stock count drifts after a partial refund\"}]",
            "Check the first item on the sprint board.\n$ gh project item-list 7 --owner northwind --limit 1\nTYPE   TITLE                                   NUMBER  REPOSITORY        ID\nIssue  Tax rounding breaks on split shipments  {v}    northwind/orders  PVTI_lADOBq7x8s4AlM2zzgT3kQ4",
        ],
    ),
    t(
        "Prod has to be migrated to whatever head the repo has. What is it?\n$ alembic heads\n{v} (head)",
        "^^^^^^^^^^^^",
        [
            "Two more migrations were merged. Check the head again.\n$ alembic heads\n{v} (head)",
            "Show me the tip of the history.\n$ alembic history -r -1:\n3b1e0c9d2f7a -> {v} (head), add refund ledger",
        ],
    ),
    t(
        "Read the checkout SLO; the latency objective is the number we're optimising toward.\n$ yq '.objectives[] | select(.name == \"checkout-latency\")' slo/checkout.yaml\nname: checkout-latency\nindicator: http_request_duration_seconds\nthreshold: {v}\ntarget: 99.5",
        "0.!#~s",
        [
            "The objective was made stricter in review; repeat the yq query.\n$ yq '.objectives[] | select(.name == \"checkout-latency\")' slo/checkout.yaml\nname: checkout-latency\nindicator: http_request_duration_seconds\nthreshold: {v}\ntarget: 99.5",
            "Grep the threshold straight out of the file.\n$ grep -n threshold slo/checkout.yaml\n9:    threshold: {v}",
        ],
    ),
    t(
        "We're upgrading tokio to the newest release. Which version is that?\n$ cargo search tokio --limit 1\ntokio = \"{v}\"    # An event-driven, non-blocking I/O platform for writing asynchronous I/O backed applications.\n... and 4012 crates more (use --limit N to see more)",
        "1.!#.~",
        [
            "Another release landed since. Search again.\n$ cargo search tokio --limit 1\ntokio = \"{v}\"    # An event-driven, non-blocking I/O platform for writing asynchronous I/O backed applications.\n... and 4012 crates more (use --limit N to see more)",
            "Ask the crates.io API for the newest stable.\n$ curl -sL https://crates.io/api/v1/crates/tokio | jq -r .crate.max_stable_version\n{v}",
        ],
    ),
];

const FRESH_FOUND_PREFERENCES: &[Template] = &[
    t(
        "Match the repo's import ordering when you write the new module.\n$ grep -A3 'tool.ruff.lint.isort' pyproject.toml\n[tool.ruff.lint.isort]\nknown-first-party = [\"{v}\"]\ncombine-as-imports = true\nforce-sort-within-sections = true",
        "nw_@@@@@!#",
        [
            "The package was renamed. Check the isort settings file people still use locally.\n$ cat .isort.cfg\n[settings]\nprofile = black\nknown_first_party = {v}",
            "Load the table with tomllib and print the list.\n$ python -c \"import tomllib; print(tomllib.load(open('pyproject.toml', 'rb'))['tool']['ruff']['lint']['isort']['known-first-party'])\"\n['{v}']",
        ],
    ),
    t(
        "Commit as the bot identity this clone is configured with.\n$ git config --get user.email\n{v}@northwind.dev",
        "agent-@@@@!#",
        [
            "The bot account was renamed; check which file sets it now.\n$ git config --show-origin user.email\nfile:.git/config\t{v}@northwind.dev",
            "See what the last bot commit on main used.\n$ git log -1 --author=bot --format='%an <%ae>' origin/main\nnorthwind-bot <{v}@northwind.dev>",
        ],
    ),
    t(
        "Name your branch the way git-flow is set up in this clone.\n$ git config --get-regexp '^gitflow\\.prefix'\ngitflow.prefix.feature {v}/\ngitflow.prefix.bugfix bugfix/\ngitflow.prefix.release release/",
        "feat-@@@!#",
        [
            "The team renamed the feature prefix. Run that lookup once more.\n$ git config --get-regexp '^gitflow\\.prefix'\ngitflow.prefix.feature {v}/\ngitflow.prefix.bugfix bugfix/\ngitflow.prefix.release release/",
            "Look at the section in .git/config itself.\n$ sed -n '/gitflow \"prefix\"/,/^\\[/p' .git/config\n[gitflow \"prefix\"]\n\tfeature = {v}/\n\tbugfix = bugfix/\n\trelease = release/\n[remote \"origin\"]",
        ],
    ),
    t(
        "Which base image does the team standardise on? Use the same for the new service.\n$ head -3 services/billing/Dockerfile\n# syntax=docker/dockerfile:1.7\nFROM {v} AS build\nWORKDIR /src",
        "python:3.1~.!#-slim",
        [
            "Platform bumped the standard image. Check the shared service template.\n$ grep -n '^FROM' templates/service/Dockerfile\n2:FROM {v} AS build\n15:FROM gcr.io/distroless/python3-debian12",
            "Read the label on the image we publish.\n$ docker inspect --format '{{ index .Config.Labels \"org.northwind.base-image\" }}' ghcr.io/northwind/billing:latest\n{v}",
        ],
    ),
    t(
        "How do they like the Go tests run here? Use the same flags.\n$ grep -A1 '^test:' Makefile\ntest:\n\tgo test -count=1 -race -timeout {v} ./...",
        "!#m~s",
        [
            "The Makefile's test target changed. Dry-run it.\n$ make -n test\ngo test -count=1 -race -timeout {v} ./...",
            "The direnv file sets the same flags; read them.\n$ grep -n GOFLAGS .envrc\n3:export GOFLAGS=\"-count=1 -timeout={v}\"",
        ],
    ),
];

const FRESH_FOUND_RULE_TWINS: &[Twin] = &[Twin {
    text: "Who has to sign off on changes under {s}? Look it up before we ask for review.\n$ grep '^/services/{s}/' .github/CODEOWNERS\n/services/{s}/    @northwind/{v}",
    shape: "{s}-owners-!#",
    subjects: &["billing", "catalog", "identity", "warehouse"],
}];
const FRESH_FOUND_CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "How much memory does {s} get in prod? The new cache has to fit inside it.\n$ helm get values {s} -n prod -o json | jq '{release: \"{s}\", memory: .resources.limits.memory}'\n{\n  \"release\": \"{s}\",\n  \"memory\": \"{v}\"\n}",
    shape: "!#~#Mi",
    subjects: &["search", "pricing", "notify", "ingest"],
}];
const FRESH_FOUND_FACT_TWINS: &[Twin] = &[Twin {
    text: "What's the database endpoint for {s}?\n$ aws rds describe-db-instances --db-instance-identifier orders-{s} --query 'DBInstances[0].Endpoint.Address' --output text\n{v}",
    shape: "orders-{s}.c!@@@@#~#.eu-west-1.rds.amazonaws.com",
    subjects: &["staging", "perf", "qa", "sandbox"],
}];
const FRESH_FOUND_GOAL_TWINS: &[Twin] = &[Twin {
    text: "What coverage does {s} have to reach? That's the bar we're working toward.\n$ yq '.coverage.status.project.{s}' codecov.yml\ntarget: {v}%\nthreshold: 0.5%\npaths:\n  - {s}/",
    shape: "!#.~#",
    subjects: &["checkout", "ledger", "search", "profiles"],
}];
const FRESH_FOUND_PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "What trace sample rate does the team use for {s}? Keep your local config the same.\n$ grep -A1 'service: {s}' otel/sampling.yaml\n  - service: {s}\n    sample_rate: {v}",
    shape: "0.0!#~",
    subjects: &["gateway", "orders", "payments", "inventory"],
}];

pub const FRESH_FOUND: Bank = Bank {
    name: "fresh-found",
    templates: [
        FRESH_FOUND_RULES,
        FRESH_FOUND_CONSTRAINTS,
        FRESH_FOUND_FACTS,
        FRESH_FOUND_GOALS,
        FRESH_FOUND_PREFERENCES,
    ],
    twins: [
        FRESH_FOUND_RULE_TWINS,
        FRESH_FOUND_CONSTRAINT_TWINS,
        FRESH_FOUND_FACT_TWINS,
        FRESH_FOUND_GOAL_TWINS,
        FRESH_FOUND_PREFERENCE_TWINS,
    ],
    lead_ins: &[
        "",
        "",
        "",
        "Quick lookup before we go on:",
        "One more thing to check.",
        "Next,",
    ],
    trailers: &[
        "",
        "",
        "",
        "I'll need it further on.",
        "Tell me what it says.",
    ],
    acks: &[
        "Got it from the output; I'll go by that.",
        "That's the current setting, and I'll work to it.",
        "Okay, I'll use what the command printed.",
        "Noted. I'll carry on from there.",
    ],
    routine: &[],
    decoys: &[],
};
