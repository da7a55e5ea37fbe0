//! The blind half of the tool-found shape: a person's request, the agent's
//! command after `COMMAND`, and the tool's output carrying the value; each
//! update is a later look that finds the new one. Written once on
//! 2026-12-05 by someone who had not read the summarizer nor any earlier
//! held-back bank.

use super::super::bank::{Bank, Template, Twin, t};

const RULES: &[Template] = &[
    t(
        "Before you start the backfill, find out which dataset the pipeline must never overwrite.\n$ cat pipeline/guards.yaml\nversion: 3\nprotected_datasets:\n  - {v}\nbackfill:\n  max_parallel: 4\n  dry_run: false",
        "raw_@@@@@_!#~",
        [
            "The guards file was edited this morning. What's protected now?\n$ yq '.protected_datasets[0]' pipeline/guards.yaml\n{v}",
            "Ask the orchestrator itself which dataset it refuses to overwrite.\n$ curl -s http://orchestrator:8080/api/v1/guards | jq .\n{\n  \"enforced\": true,\n  \"protected\": \"{v}\",\n  \"updated\": \"2026-12-04T22:10:00Z\"\n}",
        ],
    ),
    t(
        "The charge nurse says one ward must never be auto-assigned. Look it up.\n$ psql scheduling -c \"select ward, auto_assign, beds from wards where not auto_assign\"\n   ward    | auto_assign | beds\n-----------+-------------+------\n {v}  | f           |   22\n(1 row)",
        "W!~-%%%",
        [
            "They changed the flags on the ward table; run the query again.\n$ psql scheduling -c \"select ward, auto_assign, beds from wards where not auto_assign\"\n   ward    | auto_assign | beds\n-----------+-------------+------\n {v}  | f           |   18\n(1 row)",
            "See what the scheduler's own settings exclude.\n$ grep -rn EXCLUDE_WARDS scheduler/\nscheduler/settings.py:88:EXCLUDE_WARDS = [\"{v}\"]",
        ],
    ),
    t(
        "Which map does the anti-cheat policy forbid on community servers? Read the policy.\n$ jq '.community' anticheat/policy.json\n{\n  \"allow_mods\": false,\n  \"banned_map\": \"{v}\",\n  \"max_ping\": 180\n}",
        "map_@@@@@_!#",
        [
            "There's a new policy revision. Check it again.\n$ jq -r '.community.banned_map' anticheat/policy.json\n{v}",
            "Live servers pull the policy from the API, ask there.\n$ curl -s 'https://ac.gamehost.example/v2/policy?scope=community'\nallow_mods=false\nbanned_map={v}\nmax_ping=180\nrevision=41",
        ],
    ),
    t(
        "Find the ledger account nobody may post manual journal entries to.\n$ grep -B1 -A2 'manual_entries: deny' ledger/accounts.yml\n- code: {v}\n  manual_entries: deny\n  name: Deferred revenue\n  owner: finance-ops",
        "ACC-!#~#-%",
        [
            "Accounts were renumbered overnight, grep once more.\n$ grep -B1 -A2 'manual_entries: deny' ledger/accounts.yml\n- code: {v}\n  manual_entries: deny\n  name: Deferred revenue\n  owner: finance-ops",
            "Ask the ledger service which account is locked.\n$ curl -s 'http://ledger.internal/v1/accounts?manual=deny' | jq -c '.[]'\n{\"account\":\"{v}\",\"locked_reason\":\"revenue recognition\",\"since\":\"2026-07-01\"}",
        ],
    ),
    t(
        "The docs linter blocks links into one path. Which one?\n$ cat .docslint.toml\n[links]\ncheck_external = true\nforbidden_prefix = \"{v}\"\nmax_depth = 6\n\n[spelling]\nlang = \"en-GB\"",
        "/internal/@@@@!#/",
        [
            "The lint config changed upstream; pull and look again.\n$ git pull -q && grep -n forbidden .docslint.toml\n4:forbidden_prefix = \"{v}\"",
            "Run the linter in explain mode for that rule.\n$ docslint --explain no-internal-links\nrule: no-internal-links\nseverity: error\nblocks links under: {v}\nsince: 0.14.2",
        ],
    ),
];

const CONSTRAINTS: &[Template] = &[
    t(
        "How long may a job run on the shared GPU queue? We can't exceed it.\n$ sacctmgr show qos shared format=Name,MaxWall,MaxTRES\n      Name     MaxWall       MaxTRES\n---------- ----------- -------------\n    shared  {v}    gres/gpu=8",
        "!-~#:00:00",
        [
            "The admins edited the shared QoS. Show it again.\n$ sacctmgr show qos shared format=Name,MaxWall,MaxTRES\n      Name     MaxWall       MaxTRES\n---------- ----------- -------------\n    shared  {v}    gres/gpu=8",
            "Check the partition's own time limit.\n$ scontrol show partition gpu | grep -o 'MaxTime=[^ ]*'\nMaxTime={v}",
        ],
    ),
    t(
        "What request budget does the gateway give the mobile clients? Stay within it.\n$ grep -A4 'consumer: mobile-clients' gateway/quotas.yaml\n- consumer: mobile-clients\n  requests_per_minute: {v}\n  burst: 40\n  enforce: true\n  owner: app-platform",
        "!#~#",
        [
            "Quotas were raised for the launch; read them again.\n$ grep -A4 'consumer: mobile-clients' gateway/quotas.yaml\n- consumer: mobile-clients\n  requests_per_minute: {v}\n  burst: 40\n  enforce: true\n  owner: app-platform",
            "Ask the gateway's admin API what it enforces.\n$ curl -s http://gw-admin:9876/consumers/mobile-clients/limits\n{\"rpm\": {v}, \"burst\": 40, \"enforce\": true}",
        ],
    ),
    t(
        "How big may the application image be? The bootloader rejects anything larger.\n$ grep -n -B2 'FLASH_APP' linker/layout.ld\n5-MEMORY\n6-{\n7:  FLASH_APP (rx) : ORIGIN = 0x08008000, LENGTH = {v}",
        "!#~K",
        [
            "The partition table was redrawn. Look at the linker script again.\n$ grep -n 'FLASH_APP' linker/layout.ld\n9:  FLASH_APP (rx) : ORIGIN = 0x08010000, LENGTH = {v}",
            "What does the bootloader header say it accepts?\n$ python tools/bl_info.py --max-image build/bootloader.bin\nbootloader: v2.3\nslot: A\nmax_image_size: {v}\ncrc: ok",
        ],
    ),
    t(
        "Loads at the Lyon hub can't exceed the pallet weight limit. What is it?\n$ wms hub show LYN-02 --format table\nFIELD            VALUE\nhub              LYN-02\ndock_doors       14\nmax_pallet_kg    {v}\ncutoff           17:30",
        "1!~#",
        [
            "They re-rated the racks in Lyon; show the hub again.\n$ wms hub show LYN-02 --format table\nFIELD            VALUE\nhub              LYN-02\ndock_doors       14\nmax_pallet_kg    {v}\ncutoff           17:30",
            "Pull it as JSON this time.\n$ wms hub show LYN-02 --format json | jq '{hub, pallet_limit: .limits.pallet_kg}'\n{\n  \"hub\": \"LYN-02\",\n  \"pallet_limit\": {v}\n}",
        ],
    ),
    t(
        "Up to what amount can a refund go through without a second approver? Don't go above it.\n$ billingctl policy show refunds\npolicy: refunds\ncurrency: EUR\nauto_approve_below: {v}\nreviewers: 2\nupdated: 2026-10-02",
        "!#~#.00",
        [
            "Finance changed the refund policy; show it again.\n$ billingctl policy show refunds\npolicy: refunds\ncurrency: EUR\nauto_approve_below: {v}\nreviewers: 2\nupdated: 2026-12-03",
            "Check through the API in case the CLI caches.\n$ curl -s https://billing.internal/api/policies/refunds\n{\"name\":\"refunds\",\"currency\":\"EUR\",\"auto_approve_limit\":\"{v}\",\"updated_by\":\"m.okafor\"}",
        ],
    ),
];

const FACTS: &[Template] = &[
    t(
        "Which build are the EU game servers on right now?\n$ gamectl fleet describe eu-central --output yaml\nfleet: eu-central\nservers: 48\nbuild_id: {v}\nstatus: ACTIVE\nmin_players: 2",
        "bld-!#~#-^^^^",
        [
            "A rollout just finished; describe the fleet again.\n$ gamectl fleet describe eu-central --output yaml\nfleet: eu-central\nservers: 52\nbuild_id: {v}\nstatus: ACTIVE\nmin_players: 2",
            "Ask one of the servers directly.\n$ echo version | nc -q1 eu-c-17.game.internal 27015\nserver=eu-c-17 build={v} uptime=3h12m players=31",
        ],
    ),
    t(
        "What model version is the ranking endpoint serving?\n$ curl -s http://model-serve:8501/v1/models/ranker\n{\n  \"model_version_status\": [\n    {\"version\": \"{v}\", \"state\": \"AVAILABLE\"}\n  ]\n}",
        "17!#~#~#!#",
        [
            "They hot-swapped the model. Query it again.\n$ curl -s http://model-serve:8501/v1/models/ranker\n{\n  \"model_version_status\": [\n    {\"version\": \"{v}\", \"state\": \"AVAILABLE\"}\n  ]\n}",
            "Look at what the registry marks as production.\n$ mlflow models list --name ranker | grep Production\n| ranker | {v} | Production | 2026-11-30 | ci-bot |",
        ],
    ),
    t(
        "What version code is the Android app at on the internal track?\n$ bundle exec fastlane run google_play_track_version_codes track:internal\n[12:04:11]: Driver: google_play_track_version_codes\n[12:04:12]: Track: internal\n[12:04:13]: Result: [{v}]",
        "!#~#~#",
        [
            "A new build went up to internal; check the track again.\n$ bundle exec fastlane run google_play_track_version_codes track:internal\n[15:40:02]: Driver: google_play_track_version_codes\n[15:40:03]: Track: internal\n[15:40:04]: Result: [{v}]",
            "Read what the last CI run uploaded.\n$ grep -n versionCode build/outputs/bundle/release/output-metadata.json\n14:      \"versionCode\": {v},",
        ],
    ),
    t(
        "Find the tracking number the carrier gave the Hamburg shipment.\n$ shipctl get SHP-88213 -o wide\nID         CARRIER  ORIGIN  DEST  TRACKING          STATUS\nSHP-88213  DHL      HAM     MUC   {v}  IN_TRANSIT",
        "JJD0!#~#!#~#!",
        [
            "The carrier relabelled it. Get the shipment again.\n$ shipctl get SHP-88213 -o wide\nID         CARRIER  ORIGIN  DEST  TRACKING          STATUS\nSHP-88213  DHL      HAM     MUC   {v}  IN_TRANSIT",
            "Check the carrier webhook log instead.\n$ grep SHP-88213 /var/log/shipctl/webhooks.log | tail -1\n2026-12-05T09:41:07Z carrier=DHL shipment=SHP-88213 event=relabel tracking={v}",
        ],
    ),
    t(
        "Which FHIR server does the scheduling app talk to in staging?\n$ kubectl get configmap scheduling-app -n staging -o jsonpath='{.data}' | jq .\n{\n  \"FHIR_BASE_URL\": \"https://{v}/fhir/R4\",\n  \"SLOT_MINUTES\": \"15\",\n  \"TZ\": \"Europe/Oslo\"\n}",
        "fhir-@@@!#.stg.internal",
        [
            "Staging was repointed; read the configmap again.\n$ kubectl get configmap scheduling-app -n staging -o jsonpath='{.data.FHIR_BASE_URL}'\nhttps://{v}/fhir/R4",
            "Check what the running pod actually has.\n$ kubectl exec -n staging deploy/scheduling-app -- env | grep -i fhir\nFHIR_BASE_URL=https://{v}/fhir/R4\nFHIR_TIMEOUT_MS=4000",
        ],
    ),
    t(
        "Which search index does the docs site query?\n$ grep -rn indexName docusaurus.config.js\ndocusaurus.config.js:112:      indexName: '{v}',\ndocusaurus.config.js:113:      contextualSearch: true,",
        "docs_@@@@_v!#",
        [
            "The search config was swapped in the last release; grep again.\n$ grep -rn indexName docusaurus.config.js\ndocusaurus.config.js:115:      indexName: '{v}',",
            "See what the deployed site requests.\n$ curl -s https://docs.example.dev/search-config.json\n{\"appId\":\"K9ZQ2\",\"index\":\"{v}\",\"hitsPerPage\":8}",
        ],
    ),
];

const GOALS: &[Template] = &[
    t(
        "Run the data quality checks; whatever fails is what we tackle next.\n$ great_expectations checkpoint run nightly\nValidating suite orders_clean... OK\nValidating suite {v}... FAILED (3/41 expectations)\nValidating suite returns_raw... OK",
        "@@@@@_!#_suite",
        [
            "The checks were rerun overnight. See what fails now.\n$ great_expectations checkpoint run nightly\nValidating suite orders_clean... OK\nValidating suite {v}... FAILED (5/38 expectations)\nValidating suite returns_raw... OK",
            "Pull the failure out of the latest validation report.\n$ jq -r '.results[] | select(.success == false) | .suite' gx/uncommitted/latest.json\n{v}",
        ],
    ),
    t(
        "Look at the load test; the slowest endpoint is the one we optimise next.\n$ k6 run loadtest/match.js | grep -A3 'slowest endpoints'\n  slowest endpoints:\n    {v}  p95=812ms\n    /lobby/list  p95=240ms\n    /profile  p95=95ms",
        "/match/@@@@!#",
        [
            "They patched something; run the load test once more.\n$ k6 run loadtest/match.js | grep -A3 'slowest endpoints'\n  slowest endpoints:\n    {v}  p95=766ms\n    /lobby/list  p95=231ms\n    /profile  p95=90ms",
            "Check the APM's top offender instead.\n$ apmctl top --service matchmaker --by p95 --limit 1\nENDPOINT          P95    CALLS\n{v}  934ms  12044",
        ],
    ),
    t(
        "Pull the top Android crash from last night. Fixing it is today's goal.\n$ crashctl issues --app android --top 1\nISSUE ID    EVENTS  USERS  TITLE\n{v}  1204    388    NullPointerException in CartViewModel",
        "^^^^^^^^^^",
        [
            "The hotfix is out; what's the top crash now?\n$ crashctl issues --app android --top 1\nISSUE ID    EVENTS  USERS  TITLE\n{v}  611     240    IllegalStateException in PaymentSheet",
            "Query the crash export in BigQuery.\n$ bq query --format=csv 'select issue_id, count(*) c from crashes.android group by 1 order by c desc limit 1'\nissue_id,c\n{v},977",
        ],
    ),
    t(
        "Which test fails on the target board? We fix that one first.\n$ ctest --test-dir build-arm --output-on-failure | tail -4\n94% tests passed, 1 tests failed out of 18\nThe following tests FAILED:\n\t 12 - {v} (Failed)\nErrors while running CTest",
        "test_@@@@@_!#",
        [
            "Reflash and run ctest again.\n$ ctest --test-dir build-arm --output-on-failure | tail -4\n94% tests passed, 1 tests failed out of 18\nThe following tests FAILED:\n\t  7 - {v} (Failed)\nErrors while running CTest",
            "Look at the JUnit report from the hardware-in-the-loop rig.\n$ grep -B1 '<failure' hil/report.xml | head -2\n  <testcase classname=\"hil\" name=\"{v}\" time=\"0.84\">\n    <failure message=\"timeout waiting for ACK\"/>",
        ],
    ),
    t(
        "Which clinic has the longest waitlist? We rebalance that one first.\n$ sched-admin waitlist --sort desc --limit 3\n{v}  patients=214  median_wait=19d\nclinic-ent-north  patients=160  median_wait=12d\nclinic-ortho-west  patients=98  median_wait=7d",
        "clinic-@@@@-!#",
        [
            "The numbers moved over the weekend; list the waitlists again.\n$ sched-admin waitlist --sort desc --limit 3\n{v}  patients=231  median_wait=21d\nclinic-ent-north  patients=149  median_wait=11d\nclinic-ortho-west  patients=102  median_wait=8d",
            "Ask the reporting database.\n$ psql reports -Atc \"select clinic from waitlist_summary order by patients desc limit 1\"\n{v}",
        ],
    ),
];

const PREFERENCES: &[Template] = &[
    t(
        "Write new models the way the dbt project is configured.\n$ grep -A5 '^models:' dbt_project.yml\nmodels:\n  analytics:\n    +materialized: table\n    +schema: {v}\n    +tags: ['nightly']",
        "an_@@@@!#",
        [
            "The project config changed; read it again.\n$ yq '.models.analytics.\"+schema\"' dbt_project.yml\n{v}",
            "Check the compiled manifest for the schema new models get.\n$ jq -r '.nodes | to_entries[0].value.config.schema' target/manifest.json\n{v}",
        ],
    ),
    t(
        "Follow the lint preset the Android project uses.\n$ grep -n -A3 'detekt {' build.gradle.kts\n54:detekt {\n55-    config.setFrom(\"config/{v}.yml\")\n56-    buildUponDefaultConfig = true\n57-}",
        "detekt-@@@@-!#",
        [
            "The preset got swapped on main. Look again.\n$ git show origin/main:build.gradle.kts | grep -n 'config.setFrom'\n55:    config.setFrom(\"config/{v}.yml\")",
            "List what's in the config folder now.\n$ ls config/\n{v}.yml\nlint-baseline.xml\nproguard-rules.pro",
        ],
    ),
    t(
        "The tech writers have a house style in Vale. Which one is enabled?\n$ cat .vale.ini\nStylesPath = styles\nMinAlertLevel = suggestion\n\n[*.md]\nBasedOnStyles = Vale, {v}",
        "Acme@@@@!#",
        [
            "The writers switched styles; read .vale.ini again.\n$ grep BasedOnStyles .vale.ini\nBasedOnStyles = Vale, {v}",
            "Ask vale which styles apply to markdown.\n$ vale ls-config | jq -r '.SBaseStyles[\"*.md\"][1]'\n{v}",
        ],
    ),
    t(
        "Log training metrics the way the base config prefers.\n$ yq '.logging' configs/train/base.yaml\nbackend: wandb\nproject: {v}\nlog_every_n_steps: 50",
        "rank-@@@@-!#~",
        [
            "Someone changed the base config; look at it again.\n$ yq '.logging' configs/train/base.yaml\nbackend: wandb\nproject: {v}\nlog_every_n_steps: 25",
            "Check where the last run actually logged to.\n$ grep -m1 'Syncing run' logs/train-latest.log\nwandb: Syncing run lively-fog-212 to project {v}",
        ],
    ),
    t(
        "Which invoice template do they want for new customers?\n$ billingctl templates list\nNAME              DEFAULT  UPDATED\nclassic-a4        no       2025-03-02\n{v}  yes      2026-11-18\nletter-us         no       2024-09-30",
        "inv-@@@@@-v!#",
        [
            "The default template changed; list them again.\n$ billingctl templates list\nNAME              DEFAULT  UPDATED\nclassic-a4        no       2025-03-02\n{v}  yes      2026-12-04\nletter-us         no       2024-09-30",
            "Read the customer defaults file.\n$ jq .invoice billing/defaults.json\n{\n  \"language\": \"de\",\n  \"net_days\": 30,\n  \"template\": \"{v}\"\n}",
        ],
    ),
];

const RULE_TWINS: &[Twin] = &[Twin {
    text: "Which runner group is allowed to deploy {s}?\n$ grep -n '^{s} ' ci/deploy-permissions.txt\n7:{s} runner-group={v} approval=required",
    shape: "rg-{s}-!#~",
    subjects: &["android", "ios", "web", "firmware"],
}];
const CONSTRAINT_TWINS: &[Twin] = &[Twin {
    text: "How many jobs may the {s} queue run at once?\n$ sq queue show {s}\nqueue: {s}\nstate: open\nmax_concurrent: {v}\npriority: normal",
    shape: "!~#",
    subjects: &["ingest", "render", "transcode", "export"],
}];
const FACT_TWINS: &[Twin] = &[Twin {
    text: "Where is the {s} fleet deployed?\n$ gamectl fleet get {s} -o json | jq '{name, location}'\n{\n  \"name\": \"{s}\",\n  \"location\": \"{v}\"\n}",
    shape: "gr-@@@@-!#",
    subjects: &["ranked", "casual", "tournament", "practice"],
}];
const GOAL_TWINS: &[Twin] = &[Twin {
    text: "What's the validation accuracy of the {s} model? That's the number to beat.\n$ mlctl eval show {s} --latest\nmodel={s} split=val accuracy={v} n=12000",
    shape: "0.!#~#",
    subjects: &["intent", "language", "toxicity", "spam"],
}];
const PREFERENCE_TWINS: &[Twin] = &[Twin {
    text: "Which theme should the {s} docs site use?\n$ grep -n theme sites/{s}/config.toml\nsites/{s}/config.toml:4:theme = \"{v}\"",
    shape: "{s}-@@@@-!#",
    subjects: &["api", "guides", "sdk", "handbook"],
}];

pub const BLIND_FOUND: Bank = Bank {
    name: "blind-found",
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
        "One thing to look up first:",
        "Before you change anything:",
    ],
    trailers: &["", "", "Keep that value handy."],
    acks: &[
        "Okay, I'll go by that output.",
        "Seen; I'll use what the command returned.",
        "Right, that's what I'll work with.",
        "Thanks, noted from the output.",
    ],
    routine: &[
        "Okay, keep going.",
        "Fine, next step.",
        "Scroll up, what was the error before that?",
        "Let's not worry about that warning.",
        "Carry on with the fix.",
        "Give me a second to read that.",
        "Sure.",
        "Go ahead and run the formatter.",
        "Where are we on the list?",
        "Continue.",
        "That output is noisy, but fine.",
        "Open the next file.",
    ],
    decoys: &[
        "That command took {n} seconds, the VPN is slow today.",
        "The tool printed {n} deprecation warnings; ignore them.",
        "I think the log rotated {n} times overnight.",
        "The old CLI needed {n} flags for the same thing, never liked it.",
        "Last time I ran that query it returned {n} rows, but that was before the cleanup.",
        "The cluster had {n} pending pods this morning, not related.",
        "We must have looked at that config {n} times last month.",
        "The man page is {n} lines long, don't bother reading it.",
    ],
};
