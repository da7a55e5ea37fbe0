//! The second held-back half of the tool-found shape: written on
//! 2026-12-05 by someone who had not read the summarizer, and never edited
//! after. Each text is a request, then the command the agent runs (after
//! `COMMAND`), then its output, which carries the value. A later look
//! may use the same command, other flags, another file or another tool
//! that reports the same setting, in another format.

use super::super::bank::{Bank, Template, Twin, t};

const RULES: &[Template] = &[
    t(
        "Find out which paths need platform sign-off before I change anything there.\n$ grep -n platform .github/CODEOWNERS\n9:/infra/terraform/        @kestrel/platform\n10:{v}        @kestrel/platform\n11:/ops/runbooks/           @kestrel/platform @kestrel/sre",
        "/deploy/@@@@-!#~/",
        [
            "CODEOWNERS got reshuffled on main, look again.\n$ git fetch -q && git show origin/main:.github/CODEOWNERS | grep platform\n/infra/terraform/        @kestrel/platform\n{v}        @kestrel/platform\n/ops/runbooks/           @kestrel/platform @kestrel/sre",
            "Platform says they own a different folder since the move. Confirm it.\n$ git log -1 --format=%s -- .github/CODEOWNERS && grep platform .github/CODEOWNERS\nchore: hand deploy manifests to platform\n/infra/terraform/        @kestrel/platform\n{v}        @kestrel/platform",
        ],
    ),
    t(
        "Which check is required before merging to main? I won't merge around a required check.\n$ gh api repos/kestrel/storefront/branches/main/protection --jq '.required_status_checks.contexts[]'\nci/lint\n{v}",
        "ci/@@@@-!#~",
        [
            "Branch protection was edited this morning. What's required?\n$ gh api repos/kestrel/storefront/branches/main/protection/required_status_checks\n{\n  \"url\": \"https://api.github.com/repos/kestrel/storefront/branches/main/protection/required_status_checks\",\n  \"strict\": true,\n  \"contexts\": [\n    \"ci/lint\",\n    \"{v}\"\n  ]\n}",
            "Look at the required checks on main one more time.\n$ gh api repos/kestrel/storefront/branches/main/protection --jq '.required_status_checks.contexts[]'\nci/lint\n{v}",
        ],
    ),
    t(
        "What is the worker allowed to call out to? Check its network policy before I add the webhook.\n$ kubectl -n jobs get networkpolicy worker-egress -o yaml | grep -A4 'egress:'\n  egress:\n  - to:\n    - ipBlock:\n        cidr: {v}\n    ports:",
        "10.1~#.!#.0/24",
        [
            "Networking changed the egress rules. What does the policy say?\n$ kubectl -n jobs describe networkpolicy worker-egress\nName:         worker-egress\nNamespace:    jobs\nSpec:\n  PodSelector:     app=worker\n  Allowing egress traffic:\n    To Port: 443/TCP\n    To:\n      IPBlock:\n        CIDR: {v}\n        Except:\n  Policy Types: Egress",
            "The manifest in the repo was updated; read the allowed range from there.\n$ yq '.spec.egress[0].to[0].ipBlock.cidr' k8s/jobs/worker-egress.yaml\n{v}",
        ],
    ),
    t(
        "Which service account is the pipeline meant to deploy with? It shouldn't be mine.\n$ grep -n serviceAccount ci/deploy.yaml\n27:      serviceAccount: {v}\n41:      # previews set serviceAccount per branch",
        "deployer-@@@@-!#",
        [
            "Security rotated the deploy identity. Which account is it?\n$ gcloud iam service-accounts list --filter='displayName~deployer' --format='value(email)'\n{v}@kestrel-prod.iam.gserviceaccount.com",
            "What does the pipeline deploy as after the CI rewrite?\n$ yq '.jobs.deploy.serviceAccount' ci/deploy.yaml\n{v}",
        ],
    ),
    t(
        "Where is the API allowed to read secrets from? Check the vault config.\n$ cat config/vault.toml\n[vault]\naddr = \"https://vault.kestrel.internal:8200\"\nmount = \"{v}\"\nrole = \"shop-api\"",
        "kv-@@@@-!#",
        [
            "Vault mounts were reorganised over the weekend. Which one is ours?\n$ vault secrets list -format=json | jq -r 'to_entries[] | select(.value.description == \"shop-api\") | .key'\n{v}/",
            "Read the mount out of the vault config again.\n$ grep -n mount config/vault.toml\n4:mount = \"{v}\"",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "How much storage does the analytics namespace allow? The backfill must fit in it.\n$ kubectl -n analytics get resourcequota team-quota\nNAME         AGE   REQUEST                                      LIMIT\nteam-quota   41d   pods: 14/40, requests.storage: 310Gi/{v}",
        "!#~0Gi",
        [
            "The quota request was approved; what's the storage limit after that?\n$ kubectl -n analytics get resourcequota team-quota -o jsonpath='{.spec.hard.requests\\.storage}'\n{v}",
            "What's the storage cap after the cluster move?\n$ kubectl -n analytics get resourcequota team-quota -o json | jq .spec.hard\n{\n  \"pods\": \"40\",\n  \"requests.storage\": \"{v}\"\n}",
        ],
    ),
    t(
        "What rate limit does the partner API give us? The sync has to stay below it.\n$ curl -sI https://api.partner-sandbox.net/v2/ping | grep -i '^x-ratelimit'\nx-ratelimit-limit: {v}\nx-ratelimit-window: 60s\nx-ratelimit-policy: per-key",
        "!#~0",
        [
            "The partner says they moved us to another tier. Check their limits endpoint.\n$ curl -s -H \"Authorization: Bearer $PARTNER_TOKEN\" https://api.partner-sandbox.net/v2/account/limits\n{\"tier\": \"growth\", \"requests_per_minute\": {v}, \"burst\": 40}",
            "Ask the API for its headers again.\n$ curl -sI https://api.partner-sandbox.net/v2/ping | grep -i '^x-ratelimit'\nx-ratelimit-limit: {v}\nx-ratelimit-window: 60s\nx-ratelimit-policy: per-key",
        ],
    ),
    t(
        "What's the biggest upload the ingress will take? Our export files need to fit.\n$ kubectl -n web get ingress uploads -o yaml | grep body-size\n    nginx.ingress.kubernetes.io/proxy-body-size: {v}",
        "!#~m",
        [
            "The ingress was swapped for a plain nginx box. What does its config allow?\n$ grep -n client_max_body_size deploy/nginx/uploads.conf\n14:    client_max_body_size {v};",
            "Look at the annotation on the uploads ingress one more time.\n$ kubectl -n web describe ingress uploads | grep -i body\n              nginx.ingress.kubernetes.io/proxy-body-size: {v}",
        ],
    ),
    t(
        "Which Node versions does the package declare? I'll stay inside that range.\n$ jq .engines package.json\n{\n  \"node\": \"{v}\",\n  \"pnpm\": \">=8\"\n}",
        ">=1!.~.0",
        [
            "Someone bumped engines in package.json. Ask npm what it says.\n$ npm pkg get engines.node\n\"{v}\"",
            "What does the engines block say after the merge?\n$ grep -A3 '\"engines\"' package.json\n  \"engines\": {\n    \"node\": \"{v}\",\n    \"pnpm\": \">=8\"\n  },",
        ],
    ),
    t(
        "How long does the load balancer keep an idle connection? Long polls must end before that.\n$ aws elbv2 describe-load-balancer-attributes --load-balancer-arn $LB_ARN --query 'Attributes[?Key==`idle_timeout.timeout_seconds`]'\n[\n    {\n        \"Key\": \"idle_timeout.timeout_seconds\",\n        \"Value\": \"{v}\"\n    }\n]",
        "!#~",
        [
            "Terraform touched the LB settings. What's in state?\n$ terraform state show aws_lb.public | grep idle_timeout\n    idle_timeout                     = {v}",
            "Ask AWS for the idle timeout again, text output is fine.\n$ aws elbv2 describe-load-balancer-attributes --load-balancer-arn $LB_ARN --output text | grep idle_timeout\nATTRIBUTES\tidle_timeout.timeout_seconds\t{v}",
        ],
    ),
];

const FACTS: &[Template] = &[
    t(
        "Which image is web running in prod?\n$ kubectl -n prod get deploy web -o jsonpath='{..image}'\nregistry.kestrel.dev/web:{v}",
        "!.#~.!-^^^^^^^",
        [
            "There was a rollout an hour ago. What's live?\n$ kubectl -n prod describe deploy web | grep -i image\n    Image:        registry.kestrel.dev/web:{v}",
            "Check what helm thinks is deployed.\n$ helm get values web -n prod\nUSER-SUPPLIED VALUES:\nimage:\n  repository: registry.kestrel.dev/web\n  tag: {v}\nreplicaCount: 6",
        ],
    ),
    t(
        "Where does the reporting job read from? Look at its env file.\n$ cat jobs/reporting/.env\nDB_NAME=reports\nDB_HOST={v}\nDB_PORT=5432\nPOOL_SIZE=8",
        "pg-rep-!#~.@@@.internal",
        [
            "The DBAs failed over the reporting database. Check the secret, that's what the job really uses.\n$ kubectl -n jobs get secret reporting-db -o jsonpath='{.data.host}' | base64 -d\n{v}",
            "grep for the host across the job's folder.\n$ grep -rn DB_HOST jobs/reporting/\njobs/reporting/.env:2:DB_HOST={v}",
        ],
    ),
    t(
        "What version of payments-sdk is locked?\n$ grep -A1 'name = \"payments-sdk\"' Cargo.lock\nname = \"payments-sdk\"\nversion = \"{v}\"",
        "~.!#.!",
        [
            "After the cargo update, which payments-sdk did we end up with?\n$ cargo metadata --format-version 1 | jq -r '.packages[] | select(.name == \"payments-sdk\") | .version'\n{v}",
            "Look at the lockfile entry again.\n$ grep -A2 'name = \"payments-sdk\"' Cargo.lock\nname = \"payments-sdk\"\nversion = \"{v}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"",
        ],
    ),
    t(
        "Which commit is deployed on staging?\n$ curl -fsS https://staging.kestrel.dev/healthz\n{\"status\":\"ok\",\"commit\":\"{v}\",\"uptime_s\":84211}",
        "^^^^^^^^^^",
        [
            "Staging redeployed. Read the commit off the deployment annotation this time.\n$ kubectl -n staging get deploy api -o jsonpath='{.metadata.annotations.kestrel\\.dev/commit}'\n{v}",
            "Hit the health endpoint again.\n$ curl -fsS https://staging.kestrel.dev/healthz | jq .\n{\n  \"status\": \"ok\",\n  \"commit\": \"{v}\",\n  \"uptime_s\": 312\n}",
        ],
    ),
    t(
        "Where do the files the exporter writes every night end up?\n$ grep -n EXPORT_BUCKET services/exporter/settings.py\n18:EXPORT_BUCKET = os.environ.get(\"EXPORT_BUCKET\", \"{v}\")",
        "kestrel-exp-@@@@-!#",
        [
            "The exporter runs with an env override in prod. What's set there?\n$ kubectl -n jobs exec deploy/exporter -- printenv | grep EXPORT\nEXPORT_BUCKET={v}\nEXPORT_PREFIX=nightly/",
            "Check the default in settings.py again, someone edited it.\n$ grep -n EXPORT_BUCKET services/exporter/settings.py\n18:EXPORT_BUCKET = os.environ.get(\"EXPORT_BUCKET\", \"{v}\")",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "Run the checkout tests; whatever fails goes to the top of our list.\n$ pytest tests/checkout -q\n.....F......\nFAILED tests/checkout/{v} - AssertionError: totals differ\n1 failed, 11 passed in 3.42s",
        "test_@@@@@.py::test_@@@@_!#",
        [
            "I pushed a fix. Run it again and stop at the first failure.\n$ pytest tests/checkout -x -q\n..F\nFAILED tests/checkout/{v} - KeyError: 'currency'\n!!!!!!!!!! stopping after 1 failures !!!!!!!!!!\n1 failed, 2 passed in 0.71s",
            "Which test did pytest record as failing on the last run?\n$ cat .pytest_cache/v/cache/lastfailed\n{\n  \"tests/checkout/{v}\": true\n}",
        ],
    ),
    t(
        "What's at the top of the sprint board? That's our next task.\n$ jira issue list -q 'sprint in openSprints() AND status = \"To Do\"' --order-by rank --plain | head -3\nTYPE   KEY        SUMMARY\nStory  {v}  Retry webhooks with backoff\nBug    SHOP-88    Cart badge off by one",
        "SHOP-!#~#",
        [
            "The board was re-ranked after planning. What's first?\n$ jira issue list -q 'sprint in openSprints() AND status = \"To Do\"' --order-by rank --plain --columns key,summary | sed -n 2p\n{v}  Drop the legacy coupon service",
            "Open whatever sits first in the sprint.\n$ jira issue view $(jira issue list -q 'sprint in openSprints()' --order-by rank --plain --no-headers --columns key | head -1) --plain\n{v}: Move session storage to Redis\nStatus: To Do   Priority: High\nAssignee: unassigned",
        ],
    ),
    t(
        "What coverage does CI require? We have to reach it before merging.\n$ grep -n fail_under pyproject.toml\n88:fail_under = {v}",
        "!#.!",
        [
            "The gate moved into the workflow file. What does it say?\n$ grep -n -B1 fail-under .github/workflows/ci.yml\n57-      - name: coverage gate\n58:        run: coverage report --fail-under={v}",
            "Print the coverage section of pyproject again.\n$ sed -n '/tool.coverage.report/,/^$/p' pyproject.toml\n[tool.coverage.report]\nfail_under = {v}\nshow_missing = true\nskip_covered = true",
        ],
    ),
    t(
        "Which release is the migration aimed at? Check the milestones.\n$ gh api 'repos/kestrel/storefront/milestones?state=open' -q '.[] | [.title, .due_on, .open_issues] | @tsv'\nRelease {v}\t2026-08-01T00:00:00Z\t14\nBacklog\t\t203",
        "!.!#.0",
        [
            "Planning moved the migration to another milestone. Which one?\n$ gh issue view 1432 --json milestone --jq .milestone.title\nRelease {v}",
            "List the open milestones again.\n$ gh api 'repos/kestrel/storefront/milestones?state=open' -q '.[] | [.title, .due_on, .open_issues] | @tsv'\nRelease {v}\t2026-09-15T00:00:00Z\t9\nBacklog\t\t203",
        ],
    ),
    t(
        "What's the p99 objective for search? The optimisation has to get us there.\n$ yq '.objectives[] | select(.name == \"search-latency\")' slo/search.yaml\nname: search-latency\npercentile: 99\nthreshold_ms: {v}\nwindow: 28d",
        "!#~",
        [
            "The SLO review changed the search objective. Ask the SLO service.\n$ curl -s http://slo-api.internal/v1/objectives/search-latency\n{\"name\":\"search-latency\",\"percentile\":99,\"threshold_ms\":{v},\"window\":\"28d\"}",
            "Grep the objective out of the yaml again.\n$ grep -A3 'name: search-latency' slo/search.yaml\n  - name: search-latency\n    percentile: 99\n    threshold_ms: {v}\n    window: 28d",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "Which commit scope should I use here? Check the commitlint config.\n$ cat commitlint.config.js\nmodule.exports = {\n  extends: ['@commitlint/config-conventional'],\n  rules: { 'scope-enum': [2, 'always', ['{v}']] },\n};",
        "@@@@-!#",
        [
            "The scopes were renamed. Ask commitlint what it resolves to.\n$ npx commitlint --print-config | grep -A1 scope-enum\n    'scope-enum': [ 2, 'always', [ '{v}' ] ],",
            "Look at the commitlint config once more.\n$ grep scope-enum commitlint.config.js\n  rules: { 'scope-enum': [2, 'always', ['{v}']] },",
        ],
    ),
    t(
        "Which team is supposed to review PRs in this repo? Put them on mine.\n$ gh api repos/kestrel/storefront/properties/values\n[\n  {\"property_name\": \"review_team\", \"value\": \"{v}\"},\n  {\"property_name\": \"tier\", \"value\": \"gold\"}\n]",
        "@@@@-rev-!#",
        [
            "The repo properties were updated. Just the review team, please.\n$ gh api repos/kestrel/storefront/properties/values -q 'map(select(.property_name == \"review_team\"))[0].value'\n{v}",
            "Check the pull request template, it names the reviewers too.\n$ grep -i reviewers .github/pull_request_template.md\n<!-- reviewers: @kestrel/{v} -->",
        ],
    ),
    t(
        "Which base image does the team want for new services? Look at the template.\n$ head -4 templates/service/Dockerfile\n# syntax=docker/dockerfile:1.7\nFROM {v} AS build\nWORKDIR /src\nCOPY . .",
        "registry.kestrel.dev/base/@@@@:!#.~",
        [
            "The base image was moved into a file of its own. What's in it?\n$ cat templates/service/.base-image\n{v}",
            "Grep every FROM line in the service template.\n$ grep -rn '^FROM' templates/service/\ntemplates/service/Dockerfile:2:FROM {v} AS build\ntemplates/service/Dockerfile:9:FROM gcr.io/distroless/static-debian12",
        ],
    ),
    t(
        "What prefix should throwaway test databases get? Follow the example env.\n$ grep TEST_DB .env.example\nTEST_DB_PREFIX={v}\nTEST_DB_KEEP=false",
        "t@@@!#_",
        [
            "The example env was rewritten as YAML. What does it want for test databases?\n$ yq .test.db_prefix config/example.yaml\n{v}",
            "Check .env.example again.\n$ grep -n TEST_DB .env.example\n31:TEST_DB_PREFIX={v}\n32:TEST_DB_KEEP=false",
        ],
    ),
    t(
        "Which log encoding is set in config/service.yaml? New log lines should match.\n$ grep -n -A2 '^logging:' config/service.yaml\n12:logging:\n13-  format: {v}\n14-  level: info",
        "ecs-!.!#",
        [
            "Someone said logging is configured through the environment in prod. What's set?\n$ kubectl -n prod exec deploy/api -- printenv | grep '^LOG_'\nLOG_LEVEL=info\nLOG_FORMAT={v}",
            "Look at the logging block again.\n$ yq .logging config/service.yaml\nformat: {v}\nlevel: info",
        ],
    ),
];

const RULE_TWINS: &[Twin] = &[Twin {
    text: "Who has to approve changes under {s}?\n$ grep '^/services/{s}/' .github/CODEOWNERS\n/services/{s}/    @kestrel/{v}",
    shape: "{s}-owners-!#",
    subjects: &["billing", "search", "identity", "catalog"],
}];
const CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "What memory limit does {s} run with in prod?\n$ helm get values {s} -n prod | grep -A3 'limits:'\n    limits:\n      cpu: 500m\n      memory: {v}",
    shape: "!#~0Mi",
    subjects: &["api", "worker", "scheduler", "gateway"],
}];
const FACT_TWINS: &[Twin] = &[Twin {
    text: "Which host port is {s} published on?\n$ docker compose ps {s} --format '{{.Name}} {{.Ports}}'\nshop-{s}-1   0.0.0.0:{v}->8080/tcp",
    shape: "4!#~#",
    subjects: &["api", "worker", "admin", "docs"],
}];
const GOAL_TWINS: &[Twin] = &[Twin {
    text: "Which {s} endpoint is the slowest? That's the one we speed up next.\n$ ./scripts/slowest-endpoints.sh {s} --top 1\nservice={s} endpoint={v} p95=812ms",
    shape: "/api/{s}/@@@@!#",
    subjects: &["orders", "users", "cart", "search"],
}];
const PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "Which eslint preset does the {s} package extend?\n$ jq .extends packages/{s}/.eslintrc.json\n\"{v}\"",
    shape: "eslint-config-{s}-@@!#",
    subjects: &["web", "admin", "mobile", "shared"],
}];

pub const UNSEEN_FOUND: Bank = Bank {
    name: "unseen-found",
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
        "Quick lookup:",
        "One thing first.",
        "Before the next change,",
    ],
    trailers: &["", "", "Tell me what it says.", "I'll need it later on."],
    acks: &[
        "That's the current setting, I'll work with it.",
        "Okay, I have what the tool reported and will go by it.",
        "Noted from the output; moving on.",
        "Good, I'll take that into account for the next change.",
    ],
    routine: &[],
    decoys: &[],
};
