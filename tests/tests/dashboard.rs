//! The Grafana dashboard (`docs/grafana/condense-proxy.json`) against the
//! proxy it charts. A query naming a metric that does not exist is no error
//! in Prometheus or in Grafana, only a panel that stays empty: so a metric
//! renamed or dropped in the proxy's `metrics.rs`, or misspelled in the
//! dashboard, fails here instead, checked against what a running proxy's
//! `/metrics` serves.

use condense_scripted_server::{Reply, TestServer};
use condense_tests::proxy::{RunningProxy, post, scrape};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// The prefix of the proxy's registry: every name the dashboard queries
/// starts with it.
const PREFIX: &str = "condense_proxy_";

/// What the dashboard's panels and queries name as their datasource: the
/// input Grafana asks for on import, so a dashboard that named a datasource
/// of its author's would import with panels bound to nothing.
const DATASOURCE: &str = "${DS_PROMETHEUS}";

fn dashboard() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/grafana/condense-proxy.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every panel, rows' own included: a collapsed row holds its panels inside
/// it rather than after it.
fn panels(dashboard: &Value) -> Vec<&Value> {
    fn walk<'a>(list: &'a Value, out: &mut Vec<&'a Value>) {
        for panel in list.as_array().into_iter().flatten() {
            out.push(panel);
            walk(&panel["panels"], out);
        }
    }
    let mut out = Vec::new();
    walk(&dashboard["panels"], &mut out);
    out
}

/// The PromQL the dashboard runs, each with where it is: every panel
/// target's `expr`, and every template variable's query (`label_values` of a
/// metric that is gone lists nothing to choose from).
fn queries(dashboard: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for panel in panels(dashboard) {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"]
                .as_str()
                .unwrap_or_else(|| panic!("a target of panel {} has no expr", panel["title"]));
            out.push((format!("panel {}", panel["title"]), expr.to_owned()));
        }
    }
    for variable in dashboard["templating"]["list"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let query = &variable["query"];
        if let Some(query) = query["query"].as_str().or(query.as_str()) {
            out.push((format!("variable {}", variable["name"]), query.to_owned()));
        }
    }
    out
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

/// The metric names in a PromQL `expr`: every identifier starting with
/// [`PREFIX`] (one that only ends with it, `x_condense_proxy_y`, is not).
fn metric_names(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in expr.match_indices(PREFIX) {
        if expr[..at].chars().next_back().is_some_and(is_name_char) {
            continue;
        }
        let rest = &expr[at..];
        let end = rest.find(|c| !is_name_char(c)).unwrap_or(rest.len());
        names.insert(rest[..end].to_owned());
    }
    names
}

/// The series names a scrape gives Prometheus: its samples' names, and
/// those its families' `# TYPE` (or, without one, `# HELP`) lines promise,
/// since a family may be written with no sample. A family's own name is a
/// series only for the types that sample under it: Prometheus stores a
/// counter `x` as `x_total`, a histogram as `x_bucket`, `x_sum`, `x_count`.
fn exposed(text: &str) -> BTreeSet<String> {
    let mut families: HashMap<&str, &str> = HashMap::new();
    let mut names = BTreeSet::new();
    for line in text.lines() {
        if let Some(typed) = line.strip_prefix("# TYPE ") {
            let (family, kind) = typed.split_once(' ').unwrap_or((typed, "unknown"));
            families.insert(family, kind.trim());
        } else if let Some(helped) = line.strip_prefix("# HELP ") {
            let family = helped.split(' ').next().unwrap_or(helped);
            families.entry(family).or_insert("unknown");
        } else if !line.starts_with('#') && !line.is_empty() {
            let end = line.find(['{', ' ']).unwrap_or(line.len());
            names.insert(line[..end].to_owned());
        }
    }
    for (family, kind) in families {
        let suffixes: &[&str] = match kind {
            "counter" => &["_total", "_created"],
            "histogram" => &["_bucket", "_sum", "_count", "_created"],
            "gaugehistogram" => &["_bucket", "_gsum", "_gcount"],
            "summary" => &["", "_sum", "_count", "_created"],
            "info" => &["_info"],
            _ => &[""],
        };
        names.extend(suffixes.iter().map(|s| format!("{family}{s}")));
    }
    names
}

#[test]
fn the_dashboard_imports_with_its_datasource_and_distinct_panels() {
    let dashboard = dashboard();
    assert_eq!(dashboard["uid"], "condense-proxy");
    assert_eq!(dashboard["title"], "condense proxy");
    assert_eq!(dashboard["schemaVersion"], 39);
    let inputs = dashboard["__inputs"].as_array().expect("__inputs");
    assert!(
        inputs
            .iter()
            .any(|i| i["name"] == "DS_PROMETHEUS" && i["pluginId"] == "prometheus"),
        "no DS_PROMETHEUS input: {inputs:?}"
    );
    let panels = panels(&dashboard);
    assert!(!panels.is_empty(), "no panels");
    let mut ids = BTreeMap::new();
    for panel in &panels {
        let title = panel["title"].as_str().unwrap_or_default();
        assert!(!title.trim().is_empty(), "a panel without a title: {panel}");
        assert_eq!(
            panel["datasource"]["uid"], DATASOURCE,
            "panel {title}: its datasource"
        );
        let id = panel["id"]
            .as_u64()
            .unwrap_or_else(|| panic!("panel {title}: no id"));
        if let Some(other) = ids.insert(id, title) {
            panic!("panels {other} and {title} share id {id}");
        }
        for target in panel["targets"].as_array().into_iter().flatten() {
            let datasource = &target["datasource"];
            assert!(
                datasource.is_null() || datasource["uid"] == DATASOURCE,
                "panel {title}: a target's datasource is {datasource}"
            );
        }
    }
    for (place, query) in queries(&dashboard) {
        assert!(
            !metric_names(&query).is_empty(),
            "{place} queries no condense metric: {query}"
        );
    }
}

/// The model of the request whose answer carries its usage; the upstream
/// answers the others without one, which the proxy counts as unknown.
const MEASURED: &str = "claude-sonnet-4-5";

#[test]
fn every_metric_the_dashboard_queries_is_one_the_proxy_serves() {
    let dashboard = dashboard();
    let queries = queries(&dashboard);
    let upstream = TestServer::answering(|request| {
        let usage = match request.body["model"] == MEASURED {
            true => r#", "usage": {"input_tokens": 12, "output_tokens": 3}"#,
            false => "",
        };
        Reply::json(
            200,
            format!(r#"{{"id": "msg_1", "type": "message", "content": []{usage}}}"#),
        )
    });
    let proxy = RunningProxy::in_memory("", &upstream.url(""));
    // prometheus-client writes no line at all of a labelled family nothing
    // has counted, so each one the dashboard charts is made to count: an
    // answer with its usage (the measured tokens and costs), one without
    // (unknown usage), and a body condense cannot read (a fail-open).
    let client = ureq::Agent::new_with_defaults();
    let url = proxy.url("/v1/messages");
    let request = |model: &str, messages: Value| {
        let body = json!({"model": model, "max_tokens": 16, "messages": messages});
        assert_eq!(post(&client, &url, &body, &[]), 200, "{body}");
    };
    request(MEASURED, json!([{"role": "user", "content": "hi"}]));
    request("unmetered", json!([{"role": "user", "content": "hi"}]));
    request("unmetered", json!("not a list of messages"));
    let text = scrape(&proxy.url("/metrics"));
    let exposed = exposed(&text);

    let mut missing: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (place, query) in &queries {
        for name in metric_names(query) {
            if !exposed.contains(&name) {
                missing.entry(name).or_default().insert(place.clone());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the dashboard queries metrics the proxy does not serve:\n{}\n/metrics:\n{text}",
        missing
            .iter()
            .map(|(name, places)| format!(
                "  {name}, in {}",
                places.iter().cloned().collect::<Vec<_>>().join(", ")
            ))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
