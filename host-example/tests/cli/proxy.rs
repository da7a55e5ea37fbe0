//! `condense proxy` as processes of their own, as users run it: killed with
//! SIGKILL mid-session and started again, and two of them sharing a Redis
//! server of the test's that stops mid-session.

use crate::binary;
use condense_model::SUMMARY_MARKER;
use condense_scripted_server::{Recorded, Reply, TestServer};
use condense_tests::proxy::{
    KEY, ProxyProcess, RedisServer, SESSION_CONFIG, assert_as_reference, billing_upstream,
    compacted, continues, metric, post, proxy_args, scrape, session_calls, through_one_proxy,
    wait_recorded,
};
use serde_json::Value;

/// Two proxy processes sharing one redis-server serve one session
/// alternately, call by call: the upstream gets exactly what one proxy
/// alone would send, byte for byte, no extra cache break, and each shows
/// the same figures of the session. Then Redis stops mid-session: every request is still
/// answered, sent on unchanged, and `/metrics` counts the fail-opens.
#[test]
fn two_proxies_sharing_redis_serve_one_session_and_fail_open_when_it_stops() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let calls = session_calls("cc-opus-c");
    let (first, last) = calls.split_at(calls.len() * 2 / 3);
    let alone = through_one_proxy(SESSION_CONFIG, first);

    // Two `condense proxy --store redis://…` processes, as behind a load
    // balancer, in front of an upstream that reports its usage.
    let upstream = billing_upstream();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("condense.toml");
    std::fs::write(&config, SESSION_CONFIG).unwrap();
    let args = proxy_args(&config, &upstream.url(""), &["--store", &redis.url]);
    let proxies = [
        ProxyProcess::start(binary(), &args),
        ProxyProcess::start(binary(), &args),
    ];
    let client = ureq::Agent::new_with_defaults();
    for (i, call) in first.iter().enumerate() {
        let proxy = &proxies[i % 2];
        assert_eq!(post(&client, &proxy.url("/v1/messages"), call, &[]), 200);
    }
    let shared: Vec<Recorded> = upstream.requests();
    assert_as_reference(&alone, &shared, "two proxies sharing Redis");
    let compacted = compacted(&shared);
    assert!(
        compacted > shared.len() / 4,
        "{compacted} of {} compacted",
        shared.len()
    );
    // Each shows the session's figures as the other does: one record of
    // every call, whichever served it.
    let listed: Value = get_json(&proxies[0].url("/sessions"));
    let group = listed[0]["session"].as_str().unwrap().to_owned();
    let path = condense_proxy::page::session_href(&group).replacen("/ui", "", 1);
    let views: Vec<Value> = (proxies.iter()).map(|p| get_json(&p.url(&path))).collect();
    assert_eq!(views[0]["figures"], views[1]["figures"]);
    let figures = &views[0]["figures"];
    assert_eq!(figures["calls"], first.len() as u64, "{figures}");
    assert_eq!(figures["measured_calls"], first.len() as u64, "{figures}");
    let counted: f64 = (proxies.iter())
        .map(|p| {
            metric(
                &scrape(&p.url("/metrics")),
                "condense_proxy_compactions_total",
            )
        })
        .sum();
    assert_eq!(figures["compactions"].as_f64(), Some(counted), "{figures}");

    redis.stop();
    for (i, call) in last.iter().enumerate() {
        let proxy = &proxies[i % 2];
        assert_eq!(post(&client, &proxy.url("/v1/messages"), call, &[]), 200);
    }
    let requests = upstream.requests();
    for (call, sent) in last.iter().zip(&requests[first.len()..]) {
        // The bytes the client sent (`post` sends the body as written).
        assert!(
            sent.raw == call.to_string().as_bytes(),
            "sent on unchanged while the store is down"
        );
    }
    let (mut fail_opens, mut compactions) = (0.0, 0.0);
    for proxy in &proxies {
        let text = scrape(&proxy.url("/metrics"));
        fail_opens += metric(&text, "condense_proxy_fail_opens_total{kind=\"store\"}");
        compactions += metric(&text, "condense_proxy_compactions_total");
    }
    assert_eq!(fail_opens, last.len() as f64);
    // Each compaction was a cache break, and nothing else was.
    let breaks = shared
        .windows(2)
        .filter(|p| !continues(&p[0], &p[1]))
        .count();
    assert_eq!(compactions, breaks as f64);
}

/// `condense proxy` killed with SIGKILL mid-session, then started again on
/// the same state directory: the session goes on with the checkpoint it
/// had — the next request reuses it (no compaction, no cache break) and
/// the upstream gets exactly what an uninterrupted proxy sends.
#[test]
fn a_proxy_killed_mid_session_goes_on_with_its_checkpoint_when_restarted() {
    let calls = session_calls("cc-opus-c");
    let alone = through_one_proxy(SESSION_CONFIG, &calls);
    let compacted = alone
        .iter()
        .position(|r| r.body.to_string().contains(SUMMARY_MARKER))
        .expect("the session compacts");
    // Killed a few calls after the first compaction, restarted on a call
    // that continues the one before (not one that compacts anyway).
    let kill_at = (compacted + 3..alone.len())
        .find(|&i| continues(&alone[i - 1], &alone[i]))
        .unwrap();

    let upstream = TestServer::answering(|_| Reply::json(200, r#"{"content": []}"#));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("condense.toml");
    std::fs::write(&config, SESSION_CONFIG).unwrap();
    let events = dir.path().join("events.jsonl");
    let (events_file, state) = (
        events.display().to_string(),
        dir.path().join("state").display().to_string(),
    );
    let more = ["--events", &events_file, "--state-dir", &state];
    let args = proxy_args(&config, &upstream.url(""), &more);
    let client = ureq::Agent::new_with_defaults();
    let proxy = ProxyProcess::start(binary(), &args);
    for call in &calls[..kill_at] {
        assert_eq!(post(&client, &proxy.url("/v1/messages"), call, &[]), 200);
    }
    wait_recorded(&proxy.url("/sessions"), kill_at as u64);
    let log = proxy.kill();
    // One JSON line per request, without the body or the key.
    let lines: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|l: &Value| l["message"] == "request forwarded")
        .collect();
    assert_eq!(lines.len(), kill_at, "{log}");
    assert!(
        lines
            .iter()
            .all(|l| l["status"] == 200 && l.get("body").is_none())
    );
    assert!(!log.contains(KEY));

    let args = [&args[..], &["--log-bodies".to_owned()]].concat();
    let proxy = ProxyProcess::start(binary(), &args);
    assert_eq!(
        post(&client, &proxy.url("/v1/messages"), &calls[kill_at], &[]),
        200
    );
    let metrics = scrape(&proxy.url("/metrics"));
    // Compressed with the stored checkpoint, not compacted afresh.
    assert_eq!(
        metric(
            &metrics,
            "condense_proxy_condensed_total{outcome=\"compressed\"}"
        ),
        1.0,
        "{metrics}"
    );
    assert_eq!(
        metric(&metrics, "condense_proxy_compactions_total"),
        0.0,
        "{metrics}"
    );
    for call in &calls[kill_at + 1..] {
        assert_eq!(post(&client, &proxy.url("/v1/messages"), call, &[]), 200);
    }
    let sent: Vec<Recorded> = upstream.requests();
    assert_as_reference(&alone, &sent, "the killed and restarted proxy");
    // With --log-bodies, each line has the body sent upstream, as sent;
    // never the key.
    wait_recorded(&proxy.url("/sessions"), calls.len() as u64);
    let log = proxy.kill();
    let bodies: Vec<Vec<u8>> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|l| Some(l["body"].as_str()?.as_bytes().to_vec()))
        .collect();
    let sent: Vec<Vec<u8>> = sent[kill_at..].iter().map(|r| r.raw.clone()).collect();
    assert_as_reference(&sent, &bodies, "the bodies logged");
    assert!(!log.contains(KEY));
}

/// `condense sessions` on a proxy's state directory: the session it served
/// is listed; shown, each compaction has a handle that recalls what it
/// folded from the session's own history, and the summary is the one the
/// upstream was sent. Nothing there: a clear error, nothing created.
#[test]
fn sessions_lists_what_the_proxys_store_holds_with_handles_that_recall() {
    use condense_sessions::DbSessions;
    use condense_tests::proxy::RunningProxy;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().to_str().unwrap();
    let calls = session_calls("cc-opus-c");
    let upstream = TestServer::answering(|_| Reply::json(200, r#"{"content": []}"#));
    {
        let db = DbSessions::open(&dir.path().join("checkpoints.redb")).unwrap();
        let proxy = RunningProxy::start(SESSION_CONFIG, &upstream.url(""), std::sync::Arc::new(db));
        let client = ureq::Agent::new_with_defaults();
        let headers = [("x-condense-session", "s-1")];
        for call in &calls {
            assert_eq!(
                post(&client, &proxy.url("/v1/messages"), call, &headers),
                200
            );
        }
    }
    let listed = crate::condense(&["sessions", "--state-dir", state], "").unwrap();
    assert!(listed.starts_with("1 session(s) in "), "{listed}");
    // The agent's, named by the client's `x-condense-session`.
    let session = (listed.lines())
        .filter_map(|l| l.split_whitespace().next())
        .find(|name| name.starts_with("default/") && name.ends_with("/session/s-1"))
        .unwrap_or_else(|| panic!("{listed}"));

    let shown = crate::condense(&["sessions", "--state-dir", state, session], "").unwrap();
    // Its figures: every call, none of whose answers said its usage.
    let n = calls.len();
    assert!(
        shown.contains(&format!("calls {n}, compactions ")),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("measured (0 calls; {n} without usage)")),
        "{shown}"
    );
    let handles: Vec<(String, usize)> = shown
        .lines()
        .skip_while(|l| !l.ends_with("checkpoint(s)"))
        .skip(2)
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            (cells[2].to_owned(), cells[1].parse().unwrap())
        })
        .collect();
    assert!(handles.len() >= 2, "{shown}");
    let history =
        condense_host::body::parse_body(calls.last().unwrap().to_string().as_bytes(), None)
            .unwrap()
            .messages()
            .to_vec();
    for (handle, folded) in &handles {
        assert_eq!(
            condense_model::recall::find(&history, handle),
            Ok(condense_model::recall::Span::Fold { end: *folded }),
            "{handle}"
        );
    }
    // The summary shown is, whole, the summary message the upstream was
    // last sent, condense's framing included.
    let summary = shown.split("the latest summary:\n").nth(1).unwrap().trim();
    let last_sent = upstream.requests().pop().unwrap().body;
    let sent_summary = last_sent["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        sent_summary.starts_with(SUMMARY_MARKER) && sent_summary.trim() == summary,
        "shown:\n{summary}\nsent:\n{sent_summary}"
    );
    // And it is this session's: what the summarizer writes of the messages
    // the latest checkpoint folded, summarized at once (`condense
    // summarize`), has the same requests, current task and next step; the
    // files, summarized fold by fold on top of each other, are files that
    // one names (with the newest folds' uses only, its budget permitting).
    let (_, folded) = handles[0];
    let session_file = dir.path().join("session.json");
    std::fs::write(&session_file, calls.last().unwrap().to_string()).unwrap();
    let at_once = crate::condense(
        &[
            "summarize",
            session_file.to_str().unwrap(),
            "--upto",
            &folded.to_string(),
        ],
        "",
    )
    .unwrap();
    for heading in ["User requests", "Current task", "Next step"] {
        let shown = section(summary, heading);
        assert!(!shown.is_empty(), "no {heading} in:\n{summary}");
        assert_eq!(shown, section(&at_once, heading), "{heading}");
    }
    let paths = |text: &str| -> Vec<String> {
        (section(text, "Files").lines())
            .filter_map(|l| l.strip_prefix("- "))
            .map(|l| l.rsplit_once(" (").map_or(l, |(path, _)| path).to_owned())
            .collect()
    };
    let (files, all_files) = (paths(summary), paths(&at_once));
    assert!(files.len() >= 5, "{summary}");
    for file in &files {
        assert!(all_files.contains(file), "{file}: not in\n{at_once}");
    }

    let empty = tempfile::tempdir().unwrap();
    let e = crate::condense(
        &["sessions", "--state-dir", empty.path().to_str().unwrap()],
        "",
    )
    .unwrap_err();
    assert!(e.contains("no checkpoints there"), "{e}");
    assert!(
        std::fs::read_dir(empty.path()).unwrap().next().is_none(),
        "nothing created"
    );
    let e = crate::condense(&["sessions", "--state-dir", state, "nope"], "").unwrap_err();
    assert!(e.contains("no session nope"), "{e}");
}

/// The lines of section `heading` (`## heading`) of a summary, up to the
/// next section; empty if it has none.
fn section<'a>(summary: &'a str, heading: &str) -> &'a str {
    let Some((_, rest)) = summary.split_once(&format!("## {heading}\n")) else {
        return "";
    };
    let end = rest.find("\n## ").map_or(rest.len(), |at| at + 1);
    rest[..end].trim_end()
}

/// The JSON a proxy serves at `url`.
fn get_json(url: &str) -> Value {
    let mut answer = ureq::get(url).call().unwrap();
    serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap()
}
