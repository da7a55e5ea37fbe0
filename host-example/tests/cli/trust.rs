//! What `condense proxy` lets in, and what it keeps, tried as an attacker
//! would: a web page that points a name of its own at the proxy (DNS
//! rebinding), a page of another site reading the operator's view, and
//! every place the proxy writes or says something, searched for the
//! client's key.

use crate::binary;
use condense_scripted_server::{Recorded, Reply, TestServer};
use condense_sessions::{MemorySessions, SessionStore};
use condense_tests::SUMMARY_INSTRUCTION;
use condense_tests::proxy::{
    KEY, ProxyProcess, RedisServer, RunningProxy, post, proxy_args, session_calls,
};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

/// `curl` to `url` with `headers` (`Name: value`), posting `body` if any:
/// the status and the answer's body.
fn curl(url: &str, headers: &[&str], body: Option<&str>) -> (u16, String) {
    let mut command = Command::new("curl");
    command.args(["-s", "-w", "\n%{http_code}", url]);
    for header in headers {
        command.args(["-H", header]);
    }
    if let Some(body) = body {
        command.args(["--data-binary", body]);
    }
    let out = command.output().expect("curl runs");
    let text = String::from_utf8(out.stdout).unwrap();
    let (body, status) = text.rsplit_once('\n').unwrap();
    (status.parse().unwrap(), body.to_owned())
}

/// An Anthropic request a client would send, with the headers it sends.
const REQUEST: &str = r#"{"model": "claude-opus-4", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}"#;
const ANTHROPIC: [&str; 2] = [
    "x-api-key: sk-ant-test-0123456789",
    "anthropic-version: 2023-06-01",
];

/// A config file in `dir`.
fn config(dir: &Path, text: &str) -> std::path::PathBuf {
    let path = dir.join("condense.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `condense proxy` in front of `upstream`, compacting at 40k, its config
/// and checkpoints in `dir`, with the flags `more` and the environment
/// `env`.
fn start(upstream: &TestServer, dir: &Path, more: &[&str], env: &[(&str, &str)]) -> ProxyProcess {
    let config = config(dir, "token_threshold = 40000\n");
    let state = dir.join("state");
    let mut flags = vec!["--state-dir", state.to_str().unwrap()];
    flags.extend(more);
    ProxyProcess::start_with(
        binary(),
        &proxy_args(&config, &upstream.url(""), &flags),
        env,
    )
}

/// A proxy's setup: its name, its flags, and the environment they read.
type Setup<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, &'a str)]);

/// With no token, the clients' token, or both tokens, a request that names
/// another host — the operator view, the metrics, a model request — is
/// refused before it is routed: nothing reaches the upstream, whatever
/// tokens it carries; the same requests to the proxy's own address are
/// served, and the operator view asks for the operator's token whenever
/// the proxy has a clients' token.
#[test]
fn a_request_sent_to_another_host_name_is_refused_whatever_its_tokens() {
    let upstream = TestServer::answering(|_| Reply::json(200, r#"{"content": []}"#));
    let setups: [Setup; 3] = [
        ("no tokens", &[], &[]),
        (
            "a clients' token",
            &["--token-env", "CONDENSE_TEST_CLIENTS"],
            &[("CONDENSE_TEST_CLIENTS", "client-t0k")],
        ),
        (
            "both tokens",
            &[
                "--token-env",
                "CONDENSE_TEST_CLIENTS",
                "--operator-token-env",
                "CONDENSE_TEST_OPERATOR",
            ],
            &[
                ("CONDENSE_TEST_CLIENTS", "client-t0k"),
                ("CONDENSE_TEST_OPERATOR", "op-t0k"),
            ],
        ),
    ];
    for (setup, flags, env) in setups {
        let before = upstream.requests().len();
        let dir = tempfile::tempdir().unwrap();
        let proxy = start(&upstream, dir.path(), flags, env);
        let port = proxy.url("").rsplit(':').next().unwrap().to_owned();
        let attacker = format!("Host: attacker.example:{port}");
        // Every token it could carry: the host alone refuses it.
        let tokens = [
            "Proxy-Authorization: Bearer client-t0k",
            "x-condense-operator-token: op-t0k",
        ];
        let with = |extra: &[&str]| -> Vec<String> {
            (tokens.iter().chain(&ANTHROPIC).chain(extra))
                .map(|h| h.to_string())
                .collect()
        };
        let headers = with(&[&attacker]);
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        for path in [
            "/sessions",
            "/sessions/default/session/s",
            "/ui",
            "/ui/sessions/default/session/s",
            "/metrics",
            "/healthz",
        ] {
            let (status, body) = curl(&proxy.url(path), &headers, None);
            assert_eq!(status, 403, "{setup}: GET {path}: {body}");
            assert!(
                body.contains("--allowed-host attacker.example"),
                "{setup}: {body}"
            );
        }
        let (status, body) = curl(&proxy.url("/v1/messages"), &headers, Some(REQUEST));
        assert_eq!(status, 403, "{setup}: POST /v1/messages: {body}");
        assert_eq!(
            upstream.requests().len(),
            before,
            "{setup}: reached upstream"
        );
        // The same request, to the address the proxy listens on.
        let own = with(&[]);
        let own: Vec<&str> = own.iter().map(String::as_str).collect();
        let (status, body) = curl(&proxy.url("/v1/messages"), &own, Some(REQUEST));
        assert_eq!(status, 200, "{setup}: {body}");
        assert_eq!(upstream.requests().len(), before + 1, "{setup}");
        let (status, body) = curl(&proxy.url("/sessions"), &own, None);
        let without_operator: Vec<&str> = own
            .iter()
            .copied()
            .filter(|h| !h.starts_with("x-condense-operator-token"))
            .collect();
        let (status_without, _) = curl(&proxy.url("/sessions"), &without_operator, None);
        match setup {
            "no tokens" => assert_eq!((status, status_without), (200, 200), "{body}"),
            "a clients' token" => {
                assert_eq!((status, status_without), (403, 403), "{setup}");
                assert!(body.contains("--operator-token-env"), "{body}");
            }
            _ => assert_eq!((status, status_without), (200, 401), "{setup}: {body}"),
        }
        // The page answers to the same rules; a browser sends the
        // operator's token as the password of a Basic login.
        let (page, _) = curl(&proxy.url("/ui"), &own, None);
        let (page_without, asked) = curl(&proxy.url("/ui"), &without_operator, None);
        let basic = [BASIC_OPERATOR];
        let (page_basic, _) = curl(&proxy.url("/ui"), &basic, None);
        let (page_wrong, _) = curl(
            &proxy.url("/ui"),
            &["Authorization: Basic b3A6bm9wZQ=="],
            None,
        );
        match setup {
            "no tokens" => assert_eq!((page, page_without), (200, 200)),
            "a clients' token" => assert_eq!((page, page_without, page_basic), (403, 403, 403)),
            _ => {
                assert_eq!(
                    (page, page_without, page_basic, page_wrong),
                    (200, 401, 200, 401)
                );
                assert!(asked.contains("the token as the password"), "{asked}");
            }
        }
        let log = proxy.kill();
        assert!(
            log.contains("request refused") && log.contains("attacker.example"),
            "{setup}: {log}"
        );
    }
}

/// `--allowed-host` adds a name (and `*.domain` its subdomains) the proxy
/// answers to; any other name is still refused, and a name with a port is
/// an error naming the flag.
#[test]
fn an_allowed_host_is_answered_and_no_other() {
    let upstream = TestServer::answering(|_| Reply::json(200, r#"{"content": []}"#));
    let dir = tempfile::tempdir().unwrap();
    let allowed = [
        "--allowed-host",
        "proxy.test",
        "--allowed-host",
        "*.corp.test",
    ];
    let proxy = start(&upstream, dir.path(), &allowed, &[]);
    for (host, expected) in [
        ("proxy.test", 200),
        ("PROXY.TEST:8787", 200),
        ("build.corp.test", 200),
        ("corp.test", 403),
        ("proxy.test.attacker.example", 403),
    ] {
        let host = format!("Host: {host}");
        let (status, body) = curl(&proxy.url("/sessions"), &[&host], None);
        assert_eq!(status, expected, "{host}: {body}");
        let headers: Vec<&str> = ANTHROPIC.iter().copied().chain([host.as_str()]).collect();
        let (status, body) = curl(&proxy.url("/v1/messages"), &headers, Some(REQUEST));
        assert_eq!(status, expected, "{host}: {body}");
    }
    assert_eq!(upstream.requests().len(), 3);
    drop(proxy);
    let bad = crate::condense(
        &[
            "proxy",
            "--allowed-host",
            "proxy.test:8787",
            "--state-dir",
            dir.path().to_str().unwrap(),
        ],
        "",
    )
    .unwrap_err();
    assert!(
        bad.contains("--allowed-host") && bad.contains("proxy.test:8787"),
        "{bad}"
    );
}

/// A page of another site that the person has open cannot read the
/// operator's endpoints, even sent to the proxy's own address; the
/// operator's own look (a navigation, no `Origin`) and model requests
/// (clients, a browser SDK among them) are served.
#[test]
fn a_page_of_another_site_cannot_read_the_operator_endpoints() {
    let upstream = TestServer::answering(|_| Reply::json(200, r#"{"content": []}"#));
    let dir = tempfile::tempdir().unwrap();
    let proxy = start(&upstream, dir.path(), &[], &[]);
    for path in ["/sessions", "/metrics", "/ui"] {
        for header in [
            "Origin: https://attacker.example",
            "Origin: null",
            "Sec-Fetch-Site: cross-site",
        ] {
            let (status, body) = curl(&proxy.url(path), &[header], None);
            assert_eq!(status, 403, "{path} {header}: {body}");
        }
        let (status, _) = curl(&proxy.url(path), &["Sec-Fetch-Site: none"], None);
        assert_eq!(status, 200, "{path}");
    }
    let origin = ANTHROPIC
        .iter()
        .copied()
        .chain(["Origin: https://app.example"])
        .collect::<Vec<_>>();
    let (status, body) = curl(&proxy.url("/v1/messages"), &origin, Some(REQUEST));
    assert_eq!(status, 200, "{body}");
}

/// The operator's token `op-t0k` as a browser sends it (user `operator`).
const BASIC_OPERATOR: &str = "Authorization: Basic b3BlcmF0b3I6b3AtdDBr";

/// How the scripted upstream answers the proxy's summary requests.
#[derive(Clone, Copy, Debug)]
enum Summaries {
    Written,
    /// Refused, the provider's message quoting the key it refused (as a
    /// naive gateway does).
    Refused(u16),
    /// Never answered: the call times out.
    Hanging,
}

/// Whether a request the upstream got is the LLM summarizer's (its last
/// message is the summarizer's instruction).
fn asks_for_a_summary(request: &Recorded) -> bool {
    let last = &request.body["messages"].as_array().and_then(|m| m.last());
    let text = match last.map(|m| &m["content"]) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => return false,
    };
    text.starts_with(SUMMARY_INSTRUCTION)
}

/// An upstream that answers the agent's requests and the summary requests
/// as `summaries` says.
fn upstream(summaries: Summaries) -> TestServer {
    TestServer::answering(move |request| {
        if !asks_for_a_summary(request) {
            return Reply::json(200, r#"{"content": []}"#);
        }
        let echoed = |kind: &str| {
            format!(
                r#"{{"type": "error", "error": {{"type": "{kind}", "message": "refused x-api-key {}"}}}}"#,
                request.header("x-api-key").unwrap_or("none")
            )
        };
        match summaries {
            Summaries::Written => Reply::json(
                200,
                r###"{"type": "message", "role": "assistant", "content": [{"type": "text", "text": "## Current task\n- the summary of the work"}]}"###,
            ),
            Summaries::Refused(401) => Reply::json(401, echoed("authentication_error")),
            Summaries::Refused(status) => Reply::json(status, echoed("rate_limit_error")),
            Summaries::Hanging => Reply::Hang,
        }
    })
}

/// The summaries are the client's own model's (`[llm]` without an
/// endpoint), asked with the client's key.
const CLIENT_MODE: &str = "token_threshold = 20000\n\
    [components]\nsummarizers = [\"llm\", \"heuristic\"]\n\
    [llm]\nmax_retries = 0\ntimeout_ms = 1000\n";

/// Everything a Redis server holds, as text: each key and its value.
fn redis_contents(url: &str) -> String {
    let cli = |args: &[&str]| {
        let out = Command::new("redis-cli")
            .args(["-u", url])
            .args(args)
            .output()
            .expect("redis-cli runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut all = String::new();
    for key in cli(&["--scan"]).lines() {
        let key = key.trim();
        let value = match cli(&["TYPE", key]).trim() {
            "string" => cli(&["GET", key]),
            "hash" => cli(&["HGETALL", key]),
            "list" => cli(&["LRANGE", key, "0", "-1"]),
            other => panic!("key {key} is a {other}: read it too"),
        };
        all.push_str(&format!("{key}\n{value}\n"));
    }
    all
}

/// In client mode the proxy holds the client's key for as long as a
/// request or its background job. With the summary call answered, refused
/// with the key quoted back (401, 429) and timing out, the key is in none
/// of what the proxy keeps or says: the events file, the checkpoint store
/// (the embedded database's file, Redis, memory), its trace-level log, the
/// operator's view and metrics, the error each failed call left. The
/// refused calls did go out with the key, and their errors did reach the
/// events: the places searched are the ones the key would be in.
#[test]
fn the_clients_key_is_nowhere_the_proxy_keeps_or_says() {
    let calls = &session_calls("cc-opus-c")[..60];
    let redis = RedisServer::start();
    for summaries in [
        Summaries::Written,
        Summaries::Refused(401),
        Summaries::Refused(429),
        Summaries::Hanging,
    ] {
        let stores: &[&str] = match &redis {
            Some(_) => &["redb", "redis"],
            None => &["redb"],
        };
        for &store in stores {
            let what = format!("{summaries:?}, {store}");
            if let Some(redis) = &redis {
                Command::new("redis-cli")
                    .args(["-u", &redis.url, "FLUSHALL"])
                    .output()
                    .unwrap();
            }
            let upstream = upstream(summaries);
            let dir = tempfile::tempdir().unwrap();
            let config = config(dir.path(), CLIENT_MODE);
            let (state, events) = (dir.path().join("state"), dir.path().join("events.jsonl"));
            let mut more = vec!["--events", events.to_str().unwrap()];
            match (store, &redis) {
                ("redis", Some(redis)) => more.extend(["--store", redis.url.as_str()]),
                _ => more.extend(["--state-dir", state.to_str().unwrap()]),
            }
            let args = proxy_args(&config, &upstream.url(""), &more);
            let proxy = ProxyProcess::start_with(binary(), &args, &[("CONDENSE_LOG", "trace")]);
            let client = ureq::Agent::new_with_defaults();
            for call in calls {
                assert_eq!(post(&client, &proxy.url("/v1/messages"), call, &[]), 200);
            }
            let view = curl(&proxy.url("/sessions"), &[], None).1;
            let metrics = curl(&proxy.url("/metrics"), &[], None).1;
            let log = proxy.kill();
            let summary_calls: Vec<Recorded> = upstream
                .requests()
                .into_iter()
                .filter(asks_for_a_summary)
                .collect();
            assert!(!summary_calls.is_empty(), "{what}: no summary was asked");
            assert!(
                summary_calls
                    .iter()
                    .all(|r| r.header("x-api-key") == Some(KEY)),
                "{what}: asked with the client's key"
            );
            let events = std::fs::read_to_string(&events).unwrap();
            assert!(events.contains("\"trigger\""), "{what}: no compaction");
            if let Summaries::Refused(status) = summaries {
                // The error, the key cut out of it, is what the log says.
                let said: Vec<&str> = log.lines().filter(|l| l.contains("HTTP 4")).collect();
                assert!(
                    log.contains(&format!("HTTP {status}")) && log.contains("[redacted]"),
                    "{what}: {said:?}"
                );
            }
            let kept = match store {
                "redis" => redis_contents(&redis.as_ref().unwrap().url),
                _ => {
                    String::from_utf8_lossy(&std::fs::read(state.join("checkpoints.redb")).unwrap())
                        .into_owned()
                }
            };
            assert!(kept.contains("boundary"), "{what}: nothing kept");
            for (place, text) in [
                ("events", &events),
                ("store", &kept),
                ("trace log", &log),
                ("sessions view", &view),
                ("metrics", &metrics),
            ] {
                assert!(!text.contains(KEY), "{what}: the key is in the {place}");
                assert!(
                    !text.contains("0123456789"),
                    "{what}: part of the key is in the {place}"
                );
            }
        }
        // The store in memory: what it keeps, whole.
        let memory = Arc::new(MemorySessions::default());
        let upstream = upstream(summaries);
        let proxy = RunningProxy::preparing(
            CLIENT_MODE,
            &upstream.url(""),
            memory.clone(),
            std::time::Duration::from_secs(5),
        );
        let client = ureq::Agent::new_with_defaults();
        for call in calls {
            assert_eq!(post(&client, &proxy.url("/v1/messages"), call, &[]), 200);
        }
        drop(proxy);
        let mut kept = String::new();
        for group in memory.groups().unwrap() {
            kept.push_str(&format!("{group} {:?}\n", memory.entries(&group).unwrap()));
        }
        assert!(
            kept.contains("boundary"),
            "{summaries:?}, memory: nothing kept"
        );
        assert!(!kept.contains(KEY), "{summaries:?}: the key is in memory");
    }
}
