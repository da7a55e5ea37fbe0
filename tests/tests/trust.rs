//! What the proxy shares between sessions, and whose it is: a summary —
//! kept in a checkpoint or prepared ahead — is used only by the session it
//! was written for, never by another tenant's session whose fold looks the
//! same, even behind one Redis shared by several proxies.

use condense_scripted_server::{Recorded, Reply, TestServer};
use condense_sessions::RedisSessions;
use condense_tests::SUMMARY_INSTRUCTION;
use condense_tests::proxy::{RedisServer, RunningProxy, session_calls};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// Summaries written by each client's own model (`[llm]` without an
/// endpoint), prepared ahead from half way to the threshold.
const CLIENT_MODE: &str = "token_threshold = 20000\nprepare_at_permille = 500\n\
    [components]\nsummarizers = [\"llm\", \"heuristic\"]\n\
    [llm]\nmax_retries = 0\n";

/// The text of the last message of a request the upstream got.
fn last_text(request: &Recorded) -> String {
    let last = request.body["messages"].as_array().and_then(|m| m.last());
    match last.map(|m| &m["content"]) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// Who a request came from, as only that client sent it: its key and its
/// system prompt.
fn client_of(request: &Recorded) -> String {
    let key = request.header("x-api-key").unwrap_or("no key");
    let system = request.body["system"].as_str().unwrap_or("");
    let prompt = system.split_whitespace().next().unwrap_or("");
    format!("{key}+{prompt}")
}

/// The mark each summary carries of the client whose model wrote it.
fn written_for(client: &str) -> String {
    format!("summary written for {client}")
}

/// Two clients send the same recorded session, each through its own proxy
/// with the checkpoints and prepared summaries in one Redis, their
/// summaries written by their own model. They differ only in their key, or
/// only in their system prompt; every summary the upstream writes says
/// whose request asked for it. No request of one client ever carries a
/// summary written for the other — neither one prepared ahead nor one in a
/// checkpoint — and each does carry its own.
#[test]
fn no_session_is_sent_a_summary_written_for_another_client() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let upstream = TestServer::answering(|request| {
        if !last_text(request).starts_with(SUMMARY_INSTRUCTION) {
            return Reply::json(200, r#"{"content": []}"#);
        }
        let text = format!("## Current task\n- {}", written_for(&client_of(request)));
        let answer = serde_json::json!({
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
        });
        Reply::json(200, answer.to_string())
    });
    let calls = &session_calls("cc-opus-c")[..70];
    let pairs = [
        (
            "keys",
            ["sk-ant-client-a-0001", "sk-ant-client-b-0002"],
            ["TEAM"; 2],
        ),
        (
            "system prompts",
            ["sk-ant-client-c-0003"; 2],
            ["TEAM-A", "TEAM-B"],
        ),
    ];
    for (differing, keys, prompts) in pairs {
        let proxies: Vec<RunningProxy> = (0..2)
            .map(|_| {
                RunningProxy::preparing(
                    CLIENT_MODE,
                    &upstream.url(""),
                    Arc::new(RedisSessions::open(&redis.url).unwrap()),
                    Duration::from_secs(10),
                )
            })
            .collect();
        let client = ureq::Agent::new_with_defaults();
        let before = upstream.requests().len();
        // One client's whole session first: everything it leaves in Redis
        // is there when the other's folds come.
        for n in 0..2 {
            for call in calls {
                let mut call = call.clone();
                call["system"] = Value::String(format!("{} You are a coding agent.", prompts[n]));
                let status = client
                    .post(proxies[n].url("/v1/messages"))
                    .header("x-api-key", keys[n])
                    .header("anthropic-version", "2023-06-01")
                    .send(call.to_string())
                    .unwrap()
                    .status();
                assert_eq!(status, 200, "{differing}");
            }
        }
        drop(proxies);
        let requests = &upstream.requests()[before..];
        let clients: Vec<String> = (0..2)
            .map(|n| format!("{}+{}", keys[n], prompts[n]))
            .collect();
        let mut carried = [0, 0];
        for request in requests {
            let sender = client_of(request);
            let n = clients
                .iter()
                .position(|c| *c == sender)
                .unwrap_or_else(|| panic!("{differing}: a request from {sender}"));
            let text = String::from_utf8_lossy(&request.raw);
            let other = &clients[1 - n];
            assert!(
                !text.contains(&written_for(other)),
                "{differing}: a request of {sender} carries a summary written for {other}"
            );
            if text.contains(&written_for(&sender)) {
                carried[n] += 1;
            }
        }
        assert!(
            carried.iter().all(|&c| c > 0),
            "{differing}: each client's requests carry its own summaries: {carried:?}"
        );
    }
}
