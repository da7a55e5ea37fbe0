//! The held-back half of the tool-found shape, its fifth bank: a person asks
//! the agent to look something up, the agent runs a command, and the value
//! that matters sits among other lines of the tool's output; each update is
//! a later look (the same command, other flags, another file or another
//! tool) that finds a new value. Written once on 2026-12-05 at 20:21 UTC by
//! someone who had read neither the summarizer nor the earlier held-back
//! banks, and never edited after (a test pins its hash). Its figures are
//! reported apart from the others' and its lost statements are never
//! printed.

use super::super::bank::{Bank, Template, Twin, t};

const LATE_FOUND_RULES: &[Template] = &[
    t(
        "Before we flash anything, check the lowest bootloader this board will take; we never flash below it.\n$ grep -n -E 'BOARD|BOOTLOADER' firmware/boards/nrf52_lab/board.mk\n7:BOARD_NAME := nrf52-lab-rev3\n9:MIN_BOOTLOADER := {v}\n10:BOOTLOADER_OFFSET := 0x000F4000\n12:BOARD_FLASH_SIZE := 1024K",
        "bl!#~-@@@@",
        [
            "Hardware pushed a new board file.\n$ grep -n MIN_BOOTLOADER firmware/boards/nrf52_lab/board.mk\n9:MIN_BOOTLOADER := {v}",
            "Ask west what the flasher will refuse.\n$ west flash --dry-run -d build/nrf52_lab\n-- west flash: rebuilding\n-- runner: nrfjprog\n-- guard: images require bootloader >= {v}\n-- dry run: nothing written",
        ],
    ),
    t(
        "Find out which schema dbt is allowed to write to in prod. Nothing lands anywhere else.\n$ grep -n -A5 'prod:' ~/.dbt/profiles.yml\n11:    prod:\n12-      type: snowflake\n13-      account: qa81207.eu-central-1\n14-      schema: {v}\n15-      threads: 8\n16-      client_session_keep_alive: false",
        "MART_%%%%_!#",
        [
            "The platform team regenerated everyone's profiles.\n$ dbt debug --target prod | grep -E 'database|schema|warehouse'\n  database: ANALYTICS\n  schema: {v}\n  warehouse: TRANSFORMING",
            "Check the copy CI uses.\n$ yq '.warehouse.outputs.prod.schema' ci/profiles.yml\n{v}",
        ],
    ),
    t(
        "See which Vault policy the CI token carries; we only touch paths it grants.\n$ vault token lookup -format=json | jq '.data.policies'\n[\n  \"default\",\n  \"{v}\"\n]",
        "ci-@@@@@-!#",
        [
            "That token was reissued this morning.\n$ vault token lookup\nKey                 Value\n---                 -----\ndisplay_name        approle\nexplicit_max_ttl    0s\npolicies            [default {v}]\nttl                 59m41s",
            "Read the role the token gets minted from.\n$ vault read auth/approle/role/ci-runner\nKey                  Value\n---                  -----\nbind_secret_id       true\ntoken_policies       [{v}]\ntoken_ttl            1h",
        ],
    ),
    t(
        "Which agent label are release builds pinned to? They must only ever run there.\n$ grep -n label Jenkinsfile.release\n3:  agent { label '{v}' }\n18:        agent { label 'docs-any' }\n41:    buildDiscarder(logRotator(numToKeepStr: '30'))",
        "rel-@@@@-!#",
        [
            "Somebody changed the Jenkinsfile on main.\n$ git show origin/main:Jenkinsfile.release | grep -n \"agent {\"\n3:  agent { label '{v}' }\n18:        agent { label 'docs-any' }",
            "Ask Jenkins what the job itself is set to.\n$ curl -s https://ci.lab.internal/job/release/config.xml | grep -n -E 'assignedNode|canRoam'\n26:  <canRoam>false</canRoam>\n27:  <assignedNode>{v}</assignedNode>",
        ],
    ),
    t(
        "Read the location policy on the imaging project; nothing may be created outside it.\n$ gcloud resource-manager org-policies describe gcp.resourceLocations --project=lab-imaging\nconstraint: constraints/gcp.resourceLocations\netag: BwYs3kQ1bEw=\nlistPolicy:\n  allowedValues:\n  - in:{v}-locations\nupdateTime: '2026-11-02T10:12:40.551Z'",
        "eu-@@@@!#",
        [
            "The org admins edited the constraint.\n$ gcloud resource-manager org-policies describe gcp.resourceLocations --project=lab-imaging --format=json\n{\n  \"constraint\": \"constraints/gcp.resourceLocations\",\n  \"listPolicy\": {\"allowedValues\": [\"in:{v}-locations\"]}\n}",
            "Look at the effective policy rather than the project's own.\n$ gcloud org-policies describe gcp.resourceLocations --effective --project=lab-imaging\nname: projects/lab-imaging/policies/gcp.resourceLocations\nspec:\n  rules:\n  - values:\n      allowedValues:\n      - in:{v}-locations",
        ],
    ),
    t(
        "Find which user the backup unit runs as; never run a backup by hand as anyone else.\n$ systemctl cat restic-backup.service\n# /etc/systemd/system/restic-backup.service\n[Unit]\nDescription=Nightly restic backup\n[Service]\nType=oneshot\nUser={v}\nNice=10\nExecStart=/usr/local/bin/restic-run --tag nightly",
        "svc-bk@@@!#",
        [
            "The unit picked up a drop-in since then.\n$ systemctl show restic-backup.service -p User -p Group\nUser={v}\nGroup=backup",
            "Open the override file itself.\n$ cat /etc/systemd/system/restic-backup.service.d/override.conf\n[Service]\nUser={v}\nIOSchedulingClass=idle",
        ],
    ),
];

const LATE_FOUND_CONSTRAINTS: &[Template] = &[
    t(
        "What's the accept backlog ceiling on the ingest host? The daemon's backlog can't go above it.\n$ sysctl net.core.somaxconn net.ipv4.tcp_max_syn_backlog net.core.netdev_max_backlog\nnet.core.somaxconn = {v}\nnet.ipv4.tcp_max_syn_backlog = 2048\nnet.core.netdev_max_backlog = 5000",
        "!#~#!",
        [
            "It was retuned on the box; read it straight from proc.\n$ cat /proc/sys/net/core/somaxconn\n{v}",
            "See what the sysctl.d files set now.\n$ grep -rn somaxconn /etc/sysctl.d/\n/etc/sysctl.d/60-ingest.conf:3:net.core.somaxconn={v}",
        ],
    ),
    t(
        "What's the wall-time limit on the gpu partition? Jobs can't ask for more than that.\n$ sinfo -p gpu -o \"%P %l %D %G\"\nPARTITION TIMELIMIT NODES GRES\ngpu {v} 12 gpu:a100:4",
        "!-1!:~#:00",
        [
            "The cluster admins touched the partitions today.\n$ scontrol show partition gpu | grep -o -E '(MaxTime|DefaultTime)=[^ ]*'\nDefaultTime=01:00:00\nMaxTime={v}",
            "Use the long sinfo listing this time.\n$ sinfo -p gpu --long\nPARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS  GROUPS  NODES  STATE NODELIST\ngpu          up  {v} 1-infinite   no       NO     all     12  mixed gpu[01-12]",
        ],
    ),
    t(
        "What's the bytes-billed cap on warehouse queries? Our models have to stay under it.\n$ grep -n -B3 maximum_bytes_billed profiles.yml\n9-      method: oauth\n10-      project: lab-warehouse\n11-      dataset: marts\n12:      maximum_bytes_billed: {v}",
        "!#~000000000",
        [
            "Finance changed the cap in the profile.\n$ yq '.warehouse.outputs.prod.maximum_bytes_billed' profiles.yml\n{v}",
            "See what the last dbt job actually ran with.\n$ bq show --format=prettyjson -j bqjob_r5e1_000001 | jq '.configuration.query'\n{\n  \"maximumBytesBilled\": \"{v}\",\n  \"priority\": \"INTERACTIVE\",\n  \"useLegacySql\": false\n}",
        ],
    ),
    t(
        "How much room is left on /scratch? The HDF5 export has to fit in it.\n$ df -h /scratch /home\nFilesystem      Size  Used Avail Use% Mounted on\n/dev/nvme1n1p1  3.5T  2.9T  {v}  84% /scratch\nnas01:/home      20T   14T  6.0T  70% /home",
        "!#~G",
        [
            "A purge ran on scratch overnight.\n$ df -h /scratch\nFilesystem      Size  Used Avail Use% Mounted on\n/dev/nvme1n1p1  3.5T  2.6T  {v}  76% /scratch",
            "Ask df in whole gigabytes.\n$ df -BG --output=source,avail,target /scratch\nFilesystem     Avail Mounted on\n/dev/nvme1n1p1  {v} /scratch",
        ],
    ),
    t(
        "Read the ingest batch ceiling from Consul; no batch we send may exceed it.\n$ consul kv get -recurse config/ingest/\nconfig/ingest/flush_ms:250\nconfig/ingest/max_batch:{v}\nconfig/ingest/retries:5",
        "!~#~#",
        [
            "Ops pushed new config to Consul.\n$ consul kv get -detailed config/ingest/max_batch\nCreateIndex      4410\nFlags            0\nKey              config/ingest/max_batch\nLockIndex        0\nModifyIndex      9921\nSession          -\nValue            {v}",
            "Export the prefix and decode the one key.\n$ consul kv export config/ingest/ | jq -r '.[] | select(.key==\"config/ingest/max_batch\") | .value' | base64 -d\n{v}",
        ],
    ),
    t(
        "What clock period does the SDC set for the core? Timing has to close under it.\n$ grep -n create_clock constraints/top.sdc\n4:create_clock -name core_clk -period {v} [get_ports clk_in]\n5:create_clock -name jtag_clk -period 40.000 [get_ports tck]",
        "~.!#~",
        [
            "The constraints were tightened after the review.\n$ grep -n -w core_clk constraints/top.sdc\n4:create_clock -name core_clk -period {v} [get_ports clk_in]\n9:set_clock_uncertainty 0.050 [get_clocks core_clk]",
            "Check what the last implementation run used.\n$ grep -n -w core_clk reports/clocks.rpt\n14:core_clk  period={v}  source=clk_in  type=primary",
        ],
    ),
    t(
        "What texture streaming pool does the Handheld profile allow? Assets can't go over it.\n$ grep -n -A3 '\\[Handheld DeviceProfile\\]' Config/DeviceProfiles.ini\n12:[Handheld DeviceProfile]\n13-DeviceType=Handheld\n14-+CVars=r.Streaming.PoolSize={v}\n15-+CVars=r.Shadow.MaxResolution=1024",
        "!#~#",
        [
            "The platform team retuned the profile.\n$ grep -n PoolSize Config/DeviceProfiles.ini\n14:+CVars=r.Streaming.PoolSize={v}\n31:+CVars=r.Streaming.PoolSize=3000",
            "Ask the devkit what it actually loaded.\n$ ./Tools/devkit-cvar --target handheld-dev-02 r.Streaming.PoolSize\nr.Streaming.PoolSize = \"{v}\"\nLastSetBy: DeviceProfile",
        ],
    ),
];

const LATE_FOUND_FACTS: &[Template] = &[
    t(
        "Which mail host does the lab domain point at?\n$ dig +short MX lab-imaging.org\n10 {v}.\n20 mx-backup.lab-imaging.org.",
        "mx!#~-@@@.lab-imaging.org",
        [
            "DNS was migrated over the weekend.\n$ dig MX lab-imaging.org +noall +answer\nlab-imaging.org.  300  IN  MX  10 {v}.\nlab-imaging.org.  300  IN  MX  20 mx-backup.lab-imaging.org.",
            "Ask the authoritative server directly.\n$ dig @ns1.lab-imaging.org MX lab-imaging.org +short\n10 {v}.",
        ],
    ),
    t(
        "What address did the build VM get on its bridge?\n$ ip -4 addr show dev br-lab\n7: br-lab: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP group default qlen 1000\n    inet {v}/24 scope global dynamic br-lab\n       valid_lft 85633sec preferred_lft 85633sec",
        "172.1!.~#.!#",
        [
            "The lease renewed after the reboot.\n$ ip -j -4 addr show dev br-lab | jq -r '.[0].addr_info[0].local'\n{v}",
            "Check the DHCP lease file.\n$ grep -n -E 'interface|fixed-address' /var/lib/dhcp/dhclient.br-lab.leases\n2:  interface \"br-lab\";\n3:  fixed-address {v};",
        ],
    ),
    t(
        "Which sensorkit version does the collector build against?\n$ go list -m all | grep -E 'sensorkit|hdf5'\nexample.com/lab/sensorkit {v}\ngonum.org/v1/hdf5 v0.8.1",
        "v0.!#.!#",
        [
            "I ran go get -u, so look at it once more.\n$ go list -m example.com/lab/sensorkit\nexample.com/lab/sensorkit {v}",
            "Read go.mod after the bump.\n$ grep -n sensorkit go.mod\n9:\texample.com/lab/sensorkit {v}",
        ],
    ),
    t(
        "Which warehouse does the reporting service user run on by default?\n$ snowsql -q \"DESC USER SVC_REPORTING\" -o output_format=psql | grep -i -E 'property|warehouse|role'\n| property          | value          | default |\n| DEFAULT_WAREHOUSE | {v} | null    |\n| DEFAULT_ROLE      | REPORTER       | null    |",
        "WH_%%%%_!#",
        [
            "The account admin reassigned it.\n$ snowsql -q \"SHOW USERS LIKE 'SVC_REPORTING'\" -o output_format=csv -o header=true | cut -d, -f1,12\n\"name\",\"default_warehouse\"\n\"SVC_REPORTING\",\"{v}\"",
            "Check it through the Python connector.\n$ python -c \"import snowflake.connector as s; c=s.connect(connection_name='reporting'); print(c.cursor().execute('select current_warehouse()').fetchone())\"\n('{v}',)",
        ],
    ),
    t(
        "What build number did the last TestFlight upload get?\n$ fastlane run latest_testflight_build_number app_identifier:org.lab.tracker\n[09:14:02]: Fetching the latest build number for version 4.2.0\n[09:14:03]: Latest upload for version 4.2.0 is build: {v}\n[09:14:03]: fastlane.tools finished successfully",
        "!~#~#",
        [
            "CI uploaded another build.\n$ fastlane run latest_testflight_build_number app_identifier:org.lab.tracker version:4.2.0\n[11:40:51]: Latest upload for version 4.2.0 is build: {v}",
            "See what the plist got bumped to.\n$ /usr/libexec/PlistBuddy -c 'Print :CFBundleVersion' Tracker/Info.plist\n{v}",
        ],
    ),
    t(
        "How many frames are in the calibration run file?\n$ h5dump -H -d /entry/data/frames run_0412.h5 | grep -E 'DATATYPE|DATASPACE'\n      DATATYPE  H5T_STD_U16LE\n      DATASPACE  SIMPLE { ( {v}, 2048, 2048 ) / ( H5S_UNLIMITED, 2048, 2048 ) }",
        "!#~#",
        [
            "The run was re-exported with the missing chunks.\n$ python -c \"import h5py; print(h5py.File('run_0412.h5')['/entry/data/frames'].shape)\"\n({v}, 2048, 2048)",
            "Read the frame-count attribute the exporter writes.\n$ h5dump -a /entry/n_frames run_0412.h5\nHDF5 \"run_0412.h5\" {\nATTRIBUTE \"n_frames\" {\n   DATATYPE  H5T_STD_I64LE\n   DATASPACE  SCALAR\n   DATA {\n   (0): {v}\n   }\n}\n}",
        ],
    ),
];

const LATE_FOUND_GOALS: &[Template] = &[
    t(
        "Find which step broke the nightly firmware build; that's what we fix first.\n$ bk build view 4412 --pipeline firmware\nBuild #4412 failed (main, 38m)\n  passed  compile-all (3m12s)\n  passed  unit-host (1m50s)\n  failed  {v} (exit 2)\n  skipped publish-artifacts",
        "hil-@@@@@-!#",
        [
            "The nightly ran again overnight.\n$ bk build view --pipeline firmware --branch main\nBuild #4498 failed (main, 41m)\n  passed  compile-all\n  failed  {v} (exit 1)",
            "Pull the failed job straight from the API.\n$ curl -s \"https://api.buildkite.com/v2/organizations/lab/pipelines/firmware/builds?per_page=1\" | jq -r '.[0].jobs[] | select(.state==\"failed\") | .name'\n{v}",
        ],
    ),
    t(
        "Which alert is firing on the storage cluster? Getting rid of its cause is today's job.\n$ curl -s http://prom.lab:9090/api/v1/alerts | jq -r '.data.alerts[] | select(.state==\"firing\") | .labels.alertname'\nWatchdog\n{v}",
        "Ceph%@@@@@!#",
        [
            "Alertmanager shows something else firing now.\n$ amtool alert query --alertmanager.url=http://am.lab:9093 -o simple\nAlertname  Starts At                Summary\nWatchdog   2026-12-01 00:00:00 UTC  heartbeat\n{v}  2026-12-05 06:41:12 UTC  pool near capacity",
            "Query the firing-alerts series instead.\n$ promtool query instant http://prom.lab:9090 'ALERTS{alertstate=\"firing\",alertname!=\"Watchdog\"}'\nALERTS{alertname=\"{v}\", alertstate=\"firing\", cluster=\"ceph-a\"} => 1 @[1764917000]",
        ],
    ),
    t(
        "Run the finance dbt tests and tell me what fails; that is the next thing we fix.\n$ dbt test --select marts.finance\n09:14:02  Running with dbt=1.7.4\n09:14:09  Finished running 38 data tests in 0 hours 0 minutes and 7.21 seconds.\n09:14:09  Completed with 1 error and 0 warnings:\n09:14:09  Failure in test {v} (models/marts/finance/schema.yml)",
        "accepted_values_@@@@@_!#",
        [
            "I pushed a fix, rerun them quietly.\n$ dbt test --select marts.finance --quiet\nFailure in test {v} (models/marts/finance/schema.yml)\n  Got 3 results, configured to fail if != 0",
            "Read the run results file instead.\n$ jq -r '.results[] | select(.status==\"fail\") | .unique_id' target/run_results.json\ntest.lab_warehouse.{v}.5f1c2a9e0b",
        ],
    ),
    t(
        "Check which ticket tops the firmware sprint; that's what we take on next.\n$ jira issue list -q 'project = FW AND sprint in openSprints()' --order-by rank --plain --columns key,summary | head -3\nKEY       SUMMARY\n{v}  Brown-out reset during OTA\nFW-2291   Flaky I2C probe on rev C",
        "FW-!#~#",
        [
            "The sprint got re-ranked at standup.\n$ jira issue list -q 'project = FW AND sprint in openSprints()' --order-by rank --plain --columns key,summary | head -2\nKEY       SUMMARY\n{v}  Watchdog fires during flash erase",
            "Look at the board's first To Do card.\n$ jira sprint list --current -p FW --plain --columns key,status | sed -n 2p\n{v}  To Do",
        ],
    ),
    t(
        "What line coverage does CI demand? We need the firmware tests up to it.\n$ cat gcovr.cfg\nroot = .\nexclude = third_party/\nfail-under-branch = 55\nfail-under-line = {v}",
        "!#.~!",
        [
            "The threshold was raised in the config.\n$ grep -n fail-under gcovr.cfg\n3:fail-under-branch = 55\n4:fail-under-line = {v}",
            "CI passes it on the command line now.\n$ grep -n gcovr .buildkite/pipeline.yml\n27:      - gcovr --root . --fail-under-line {v} --xml coverage.xml",
        ],
    ),
    t(
        "Which resource does the plan want to replace? Getting that change through is the goal.\n$ terraform plan -no-color | grep -E 'must be replaced|^Plan:'\n  # {v} must be replaced\nPlan: 1 to add, 2 to change, 1 to destroy.",
        "google_compute_instance.render_@@@!#",
        [
            "I pushed the module change; plan once more.\n$ terraform plan -no-color -out=plan.out | grep -E 'replaced|^Plan:'\n  # {v} must be replaced\nPlan: 1 to add, 0 to change, 1 to destroy.",
            "Read the saved plan as JSON.\n$ terraform show -json plan.out | jq -r '.resource_changes[] | select(.change.actions==[\"delete\",\"create\"]) | .address'\n{v}",
        ],
    ),
    t(
        "What's the frame-time budget for the handheld build? That's the number we have to hit.\n$ cat perf/budgets.toml\n[handheld]\nframe_time_ms = {v}\ndraw_calls = 1800\n\n[desktop]\nframe_time_ms = 8.3\ndraw_calls = 6000",
        "1~.!#",
        [
            "Design lowered the budget.\n$ grep -n -A2 '\\[handheld\\]' perf/budgets.toml\n1:[handheld]\n2-frame_time_ms = {v}\n3-draw_calls = 1800",
            "The perf gate prints its own target.\n$ ./tools/perfgate --platform handheld --dry-run\nperfgate: platform=handheld\nperfgate: target frame time {v} ms (p95)\nperfgate: dry run, no capture",
        ],
    ),
];

const LATE_FOUND_PREFERENCES: &[Template] = &[
    t(
        "Format with the clang-format the pre-commit config pins.\n$ grep -n -A2 clang-format .pre-commit-config.yaml\n14:  - repo: https://github.com/pre-commit/mirrors-clang-format\n15-    rev: {v}\n16-    hooks:",
        "v1!.~.!#",
        [
            "The hooks were autoupdated.\n$ yq '.repos[] | select(.repo | test(\"clang-format\")) | .rev' .pre-commit-config.yaml\n{v}",
            "Main has a newer config; check the revs there.\n$ git show origin/main:.pre-commit-config.yaml | grep -n 'rev:'\n3:    rev: v4.5.0\n15:    rev: {v}\n22:    rev: 23.12.1",
        ],
    ),
    t(
        "Install from the channel the lab's condarc puts first.\n$ conda config --show channels channel_priority\nchannel_priority: strict\nchannels:\n  - {v}\n  - conda-forge\n  - defaults",
        "lab-@@@@@-!#",
        [
            "IT pushed a new condarc.\n$ cat ~/.condarc\nchannel_priority: strict\nchannels:\n  - {v}\n  - conda-forge",
            "Ask conda what it resolves the first channel to.\n$ conda info --json | jq -r '.channels[0]'\nhttps://conda.anaconda.org/{v}/linux-64",
        ],
    ),
    t(
        "Sign the iOS builds with the team the project is set up for.\n$ xcodebuild -showBuildSettings -scheme Tracker | grep -n -E 'DEVELOPMENT_TEAM|CODE_SIGN_STYLE'\n176:    CODE_SIGN_STYLE = Manual\n188:    DEVELOPMENT_TEAM = {v}",
        "%!%%~#%%!%",
        [
            "The app moved to the other team.\n$ grep -n DEVELOPMENT_TEAM Tracker.xcodeproj/project.pbxproj\n412:\t\t\t\tDEVELOPMENT_TEAM = {v};",
            "Check the fastlane Appfile.\n$ cat fastlane/Appfile\napp_identifier(\"org.lab.tracker\")\napple_id(\"release@lab-imaging.org\")\nteam_id(\"{v}\")",
        ],
    ),
    t(
        "New panels should use the team's default datasource; find it.\n$ grep -n -A2 '\"datasource\"' dashboards/_defaults.json\n6:  \"datasource\": {\n7-    \"type\": \"prometheus\",\n8-    \"uid\": \"{v}\"",
        "prom-^^^^^^",
        [
            "The default datasource was switched in Grafana.\n$ curl -s http://grafana.lab:3000/api/datasources | jq -r '.[] | select(.isDefault) | \"\\(.name) \\(.uid)\"'\nPrometheus {v}",
            "Look in the provisioning file.\n$ grep -n -B2 'isDefault: true' provisioning/datasources/prom.yaml\n4-  - name: Prometheus\n5-    uid: {v}\n6:    isDefault: true",
        ],
    ),
    t(
        "Build the firmware with the toolchain file the release preset picks.\n$ jq -r '.configurePresets[] | select(.name==\"release\") | .generator, .toolchainFile' CMakePresets.json\nNinja\ncmake/{v}.cmake",
        "arm-@@@@-gcc!#",
        [
            "The presets were regenerated.\n$ grep -n toolchainFile CMakePresets.json\n14:      \"toolchainFile\": \"cmake/{v}.cmake\",",
            "See what the configured build directory used.\n$ grep -n CMAKE_TOOLCHAIN_FILE build/release/CMakeCache.txt\n88:CMAKE_TOOLCHAIN_FILE:FILEPATH=/src/fw/cmake/{v}.cmake",
        ],
    ),
    t(
        "Install Python packages from the index pip is configured to prefer.\n$ pip config list\nglobal.index-url='https://{v}/simple'\nglobal.timeout='60'\ninstall.no-cache-dir='true'",
        "pypi-@@@@!#.lab.internal",
        [
            "The pip config on the runners changed.\n$ cat /etc/pip.conf\n[global]\nindex-url = https://{v}/simple\ntimeout = 60",
            "Ask pip for just that key.\n$ pip config get global.index-url\nhttps://{v}/simple",
        ],
    ),
];

const LATE_FOUND_RULE_TWINS: &[Twin] = &[
    Twin {
        text: "Which Vault policy may the {s} pipeline use? It must not use any other.\n$ vault read -field=token_policies auth/approle/role/{s}\n[{v}]",
        shape: "{s}-ro-!#~",
        subjects: &["ingest", "render", "archive", "telemetry"],
    },
    Twin {
        text: "Check which key the {s} image must be signed with.\n$ grep -n -E 'key_id|algorithm' keys/{s}.toml\n2:key_id = \"{v}\"\n3:algorithm = \"ed25519\"",
        shape: "k-^^^^^^^^",
        subjects: &["bootloader", "radio", "sensor", "power"],
    },
];
const LATE_FOUND_CONSTRAINT_TWINS: &[Twin] = &[
    Twin {
        text: "What memory ceiling does the {s} unit have? Its workers can't use more.\n$ systemctl show {s}.service -p MemoryMax -p TasksMax\nMemoryMax={v}\nTasksMax=4915",
        shape: "!#~#!#~#~#",
        subjects: &["ingest", "exporter", "scheduler", "archiver"],
    },
    Twin {
        text: "What's the longest a {s} job may run? Don't submit anything longer.\n$ sacctmgr show qos {s} format=Name,MaxWall,Priority -P\nName|MaxWall|Priority\n{s}|{v}|10",
        shape: "!#:~#:00",
        subjects: &["debug", "short", "long", "preempt"],
    },
];
const LATE_FOUND_FACT_TWINS: &[Twin] = &[
    Twin {
        text: "Which port is {s} listening on?\n$ ss -ltnp | grep {s}\nLISTEN 0 4096 0.0.0.0:{v} 0.0.0.0:* users:((\"{s}\",pid=2231,fd=7))",
        shape: "3!#~#",
        subjects: &["minio", "etcd", "loki", "mosquitto"],
    },
    Twin {
        text: "What's the serial number of {s}?\n$ lsblk -d -o NAME,MODEL,SERIAL /dev/{s}\nNAME    MODEL        SERIAL\n{s}  PM893-3.84T  {v}",
        shape: "S!%%N~#!%!#~",
        subjects: &["sda", "sdb", "nvme0n1", "nvme1n1"],
    },
];
const LATE_FOUND_GOAL_TWINS: &[Twin] = &[
    Twin {
        text: "Which {s} model is the first one modified on this branch? We get it green next.\n$ dbt ls --select state:modified,tag:{s} --resource-type model --state prod-artifacts | head -1\nlab_warehouse.{s}.{v}",
        shape: "stg_@@@@@_!#",
        subjects: &["finance", "fleet", "assays", "billing"],
    },
    Twin {
        text: "What boot-time target does the spec give the {s} stage? We have to reach it.\n$ grep -n {s} docs/boot-budget.csv\n7:{s},cold,{v},owner=platform",
        shape: "!#~ms",
        subjects: &["bootloader", "kernel", "initramfs", "userspace"],
    },
];
const LATE_FOUND_PREFERENCE_TWINS: &[Twin] = &[
    Twin {
        text: "Which runner image does the {s} pipeline prefer?\n$ grep -n -A1 'docker#' .buildkite/{s}.yml\n6:      - docker#v5.11.0:\n7-          image: \"registry.lab.internal/ci-{s}:{v}\"",
        shape: "!#.~!-@@@",
        subjects: &["firmware", "desktop", "android", "docs"],
    },
    Twin {
        text: "Which Grafana folder does the {s} team want its dashboards in?\n$ curl -s http://grafana.lab:3000/api/folders | jq -r '.[] | select(.title==\"{s}\") | \"\\(.title) \\(.uid)\"'\n{s} {v}",
        shape: "{s}-^^^^^^",
        subjects: &["storage", "imaging", "network", "firmware"],
    },
];

pub const LATE_FOUND: Bank = Bank {
    name: "late-found",
    templates: [
        LATE_FOUND_RULES,
        LATE_FOUND_CONSTRAINTS,
        LATE_FOUND_FACTS,
        LATE_FOUND_GOALS,
        LATE_FOUND_PREFERENCES,
    ],
    twins: [
        LATE_FOUND_RULE_TWINS,
        LATE_FOUND_CONSTRAINT_TWINS,
        LATE_FOUND_FACT_TWINS,
        LATE_FOUND_GOAL_TWINS,
        LATE_FOUND_PREFERENCE_TWINS,
    ],
    lead_ins: &[
        "",
        "",
        "",
        "One thing first:",
        "While you're in there:",
        "Before we go on:",
    ],
    trailers: &[
        "",
        "",
        "Keep that in mind.",
        "It matters for the next step.",
    ],
    acks: &[
        "Understood; I'll keep that figure at hand.",
        "Okay, I'll work from that output.",
        "Seen it. I'll hold to what it says.",
        "Right, I've taken that from the tool output.",
    ],
    routine: &[],
    decoys: &[],
};
