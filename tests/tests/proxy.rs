//! `condense proxy` in front of a fake upstream (the scripted server, on
//! 127.0.0.1; it records what arrives): driven with curl and with an HTTP
//! client, every request through the embedded components.

use condense_host::formats::{Format, Parsed};
use condense_model::SUMMARY_MARKER;
use condense_scripted_server::{Recorded, Reply, TestServer};
use condense_sessions::{DbSessions, MemorySessions, SessionStore};
use condense_tests::corpus_dir;
use condense_tests::proxy::session::{
    RECALL_CONFIG, Script, Session, TASK, USAGE, lock, named_handles, worked,
};
use condense_tests::proxy::wire::{Piece, Turn, WIRES};
use condense_tests::proxy::{
    KEY, RunningProxy, SESSION_CONFIG, assert_as_reference, compacted, continues, corpus_body,
    metric, named_group, page_of, post, raw, scrape, session_calls, sse, through_one_proxy,
    wait_for_calls,
};
use serde_json::{Value, json};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// curl, with `headers`, posting `body`; its stdout.
fn curl(url: &str, headers: &[&str], body: &[u8]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("body.json");
    std::fs::write(&file, body).unwrap();
    let mut command = Command::new("curl");
    command.args(["--silent", "--show-error", "--no-buffer", "--data-binary"]);
    command.arg(format!("@{}", file.display()));
    for header in headers {
        command.args(["-H", header]);
    }
    let out = command.arg(url).output().expect("curl runs");
    assert!(
        out.status.success(),
        "curl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// curl gets the upstream's answers byte for byte — an SSE stream and a
/// JSON body, whitespace and all — while the upstream gets a compressed
/// request with the client's key and headers intact. Another path goes on
/// unchanged; an unreachable upstream is the proxy's 502.
#[test]
fn curl_gets_the_upstreams_answer_byte_for_byte_and_the_upstream_a_compressed_request() {
    let sse = std::fs::read_to_string(
        corpus_dir().join("api/anthropic_claude-code-1.0.6_sonnet-4_main_turn.response.sse.txt"),
    )
    .unwrap();
    let json_answer = "{\n  \"id\": \"msg_1\",  \"type\": \"message\", \"content\": []\n}\n";
    let upstream = TestServer::start([
        Reply::Answer {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: sse.clone(),
        },
        Reply::json(200, json_answer),
        Reply::json(200, r#"{"input_tokens": 12}"#),
        Reply::json(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error"}}"#,
        ),
    ]);
    let proxy = RunningProxy::in_memory("token_threshold = 4000\n", &upstream.url(""));
    let body = corpus_body("cc-trace-sonnet");
    let bytes = serde_json::to_vec(&body).unwrap();
    let headers = [
        &format!("x-api-key: {KEY}") as &str,
        "anthropic-version: 2023-06-01",
        "content-type: application/json",
    ];
    let streamed = curl(&proxy.url("/v1/messages"), &headers, &bytes);
    assert_eq!(String::from_utf8(streamed).unwrap(), sse);
    let answered = curl(&proxy.url("/v1/messages"), &headers, &bytes);
    assert_eq!(String::from_utf8(answered).unwrap(), json_answer);

    let requests = upstream.requests();
    let sent = &requests[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    let messages = sent.body["messages"].as_array().unwrap();
    assert!(messages.len() < body["messages"].as_array().unwrap().len());
    assert!(sent.body.to_string().contains(SUMMARY_MARKER));
    assert_eq!(sent.body["system"], body["system"]);
    // The same request again: the same compressed request, byte for byte
    // (the checkpoint).
    assert_as_reference(&requests[..1], &requests[1..2], "the same request again");

    // Another path: forwarded as it came.
    let count = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let counted = curl(
        &proxy.url("/v1/messages/count_tokens"),
        &headers,
        count.to_string().as_bytes(),
    );
    assert_eq!(counted, br#"{"input_tokens": 12}"#);
    assert_eq!(upstream.requests()[2].raw, count.to_string().as_bytes());
    // An upstream error is the upstream's answer, status and body.
    let out = Command::new("curl")
        .args([
            "--silent",
            "--write-out",
            "%{http_code}",
            "--data-binary",
            "{}",
        ])
        .args(["-H", "anthropic-version: 2023-06-01"])
        .arg(proxy.url("/v1/messages/count_tokens"))
        .output()
        .unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out,
        r#"{"type":"error","error":{"type":"overloaded_error"}}529"#
    );

    // No upstream at all: the proxy says so, with a 502.
    let nowhere = RunningProxy::in_memory("", "http://127.0.0.1:9");
    let out = Command::new("curl")
        .args([
            "--silent",
            "--write-out",
            " %{http_code}",
            "--data-binary",
            "{}",
        ])
        .arg(nowhere.url("/v1/chat/completions"))
        .output()
        .unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    assert!(out.ends_with(" 502"), "{out}");
    assert!(out.contains("cannot be reached"), "{out}");
}

/// Two sessions of one client that share the system prompt and the first
/// message — cc-opus-c and one that goes on as cc-opus-a did — replayed
/// call by call through the proxy, interleaved: each session's requests
/// are, byte for byte, what that session alone gets through a proxy of its
/// own (no checkpoint or summary of the other's used), each keeps its own
/// byte-stable prefix (a handful of cache breaks each, at its compactions),
/// with and without `x-condense-session`, with the checkpoints in memory
/// and in the embedded database.
#[test]
fn interleaved_sessions_with_the_same_start_keep_their_own_prefix() {
    let system = json!("You are a coding agent. Work in the repository; be brief.");
    let c = corpus_body("cc-opus-c");
    let a = corpus_body("cc-opus-a");
    let c_messages = c["messages"].as_array().unwrap().clone();
    let mut b_messages = vec![c_messages[0].clone()];
    b_messages.extend(a["messages"].as_array().unwrap()[1..].iter().cloned());
    let sessions = [("c", c_messages), ("b", b_messages)];
    // The requests of each: the one before each assistant message.
    let calls: Vec<Vec<Value>> = sessions
        .iter()
        .map(|(_, messages)| {
            (1..messages.len())
                .filter(|&k| messages[k]["role"] == "assistant")
                .map(|k| {
                    json!({
                        "model": "claude-opus-4",
                        "max_tokens": 1000,
                        "system": system,
                        "messages": messages[..k],
                    })
                })
                .collect()
        })
        .collect();
    let client = ureq::Agent::new_with_defaults();
    let send = |proxy: &RunningProxy, name: &str, named: bool, body: &Value| {
        let mut request = client
            .post(&proxy.url("/v1/messages"))
            .header("x-api-key", KEY)
            .header("anthropic-version", "2023-06-01")
            // Which session it is, for the test's count below.
            .header("x-test-session", name);
        if named {
            request = request.header("x-condense-session", name);
        }
        let answer = request.send(body.to_string()).unwrap();
        assert_eq!(answer.status(), 200);
    };
    let answering = || TestServer::answering(|_| Reply::json(200, r#"{"content": []}"#));

    let dir = tempfile::tempdir().unwrap();
    let stores: [(&str, Arc<dyn SessionStore>); 2] = [
        ("memory", Arc::new(MemorySessions::default())),
        (
            "database",
            Arc::new(DbSessions::open(&dir.path().join("checkpoints.redb")).unwrap()),
        ),
    ];
    for (named, (store_name, store)) in [(true, stores[0].clone()), (false, stores[1].clone())] {
        // Each session alone: a proxy and a store of its own.
        let alone: Vec<Vec<Recorded>> = (sessions.iter().zip(&calls))
            .map(|((name, _), calls)| {
                let upstream = answering();
                let proxy = RunningProxy::in_memory(SESSION_CONFIG, &upstream.url(""));
                for body in calls {
                    send(&proxy, name, named, body);
                }
                upstream.requests()
            })
            .collect();

        let upstream = answering();
        let proxy = RunningProxy::start(SESSION_CONFIG, &upstream.url(""), store);
        let longest = calls.iter().map(Vec::len).max().unwrap();
        for i in 0..longest {
            for ((name, _), calls) in sessions.iter().zip(&calls) {
                if let Some(body) = calls.get(i) {
                    send(&proxy, name, named, body);
                }
            }
        }
        let requests = upstream.requests();
        for ((name, _), alone) in sessions.iter().zip(&alone) {
            let sent: Vec<Recorded> = requests
                .iter()
                .filter(|r| r.header("x-test-session") == Some(*name))
                .cloned()
                .collect();
            let label = format!("session {name}, named {named}, {store_name} store");
            assert_as_reference(alone, &sent, &format!("{label}, interleaved,"));
            let sent: Vec<&Recorded> = sent.iter().collect();
            let breaks = cache_breaks(&sent);
            let compacted = sent
                .iter()
                .filter(|r| r.body["messages"].to_string().contains(SUMMARY_MARKER))
                .count();
            assert!(
                compacted > sent.len() / 2,
                "{label}: {compacted} of {} compacted",
                sent.len()
            );
            assert!(
                (1..=12).contains(&breaks),
                "{label}: {breaks} cache breaks over {} calls",
                sent.len()
            );
        }
    }
}

/// Calls whose request does not start with the whole request before it,
/// byte for byte.
fn cache_breaks(requests: &[&Recorded]) -> usize {
    requests
        .windows(2)
        .filter(|pair| !continues(pair[0], pair[1]))
        .count()
}

/// A Python with the official `openai` and `anthropic` SDKs:
/// `$CONDENSE_PYTHON` (`.ci/run` sets it to its virtual environment's),
/// else `python3` if it has both. `Err` says why there is none: the test
/// then passes saying so, unless `CONDENSE_REQUIRE_PYTHON=1` (CI).
/// `$CONDENSE_PYTHON`, else `python3`, if it has `packages` (their
/// import names); `Err` says why not.
fn python_with(packages: &[&str]) -> Result<std::path::PathBuf, String> {
    let python = std::env::var_os("CONDENSE_PYTHON").map_or_else(|| "python3".into(), Into::into);
    let found = Command::new(&python)
        .args(["-c", &format!("import {}", packages.join(", "))])
        .output()
        .map_err(|e| format!("{}: {e}", std::path::Path::new(&python).display()))?;
    if found.status.success() {
        Ok(python)
    } else {
        Err(format!(
            "{} lacks one of {} (pip install them)",
            std::path::Path::new(&python).display(),
            packages.join(", ")
        ))
    }
}

/// The Python to drive the proxy with, or `None` (the test then passes
/// saying so) unless `CONDENSE_REQUIRE_PYTHON=1` (CI).
fn required_python(packages: &[&str]) -> Option<std::path::PathBuf> {
    match python_with(packages) {
        Ok(python) => Some(python),
        Err(why) if std::env::var("CONDENSE_REQUIRE_PYTHON").as_deref() == Ok("1") => {
            panic!("CONDENSE_REQUIRE_PYTHON=1, but {why}")
        }
        Err(why) => {
            condense_tests::skipped(&why);
            None
        }
    }
}

/// The client script: every call through the SDKs' raw-response API, so
/// that the bytes the SDK received are written out as they came.
const SDK_CLIENT: &str = r#"
import json, sys
import anthropic, openai

proxy, body_path, out = sys.argv[1], sys.argv[2], sys.argv[3]
body = json.load(open(body_path))
key = "sk-test-0123456789"

a = anthropic.Anthropic(base_url=proxy, api_key=key, max_retries=0)
kwargs = dict(model="claude-sonnet-4", max_tokens=100, system=body["system"], messages=body["messages"])
raw = a.messages.with_raw_response.create(**kwargs)
raw.parse()  # the SDK reads the answer
open(f"{out}/anthropic.json", "wb").write(raw.http_response.content)
with a.messages.with_streaming_response.create(stream=True, **kwargs) as streamed:
    open(f"{out}/anthropic.sse", "wb").write(b"".join(streamed.iter_bytes()))
events = [e.type for e in a.messages.create(stream=True, **kwargs)]
assert events[0] == "message_start" and events[-1] == "message_stop", events

o = openai.OpenAI(base_url=proxy + "/v1", api_key=key, max_retries=0)
messages = [{"role": "system", "content": body["system"]}] + [
    {"role": m["role"], "content": " ".join(b.get("text", "") for b in m["content"]) if isinstance(m["content"], list) else m["content"]}
    for m in body["messages"]
]
raw = o.chat.completions.with_raw_response.create(model="gpt-5", messages=messages)
raw.parse()
open(f"{out}/openai.json", "wb").write(raw.http_response.content)
with o.chat.completions.with_streaming_response.create(model="gpt-5", messages=messages, stream=True) as streamed:
    open(f"{out}/openai.sse", "wb").write(b"".join(streamed.iter_bytes()))
"#;

/// The official Python SDKs of both providers, pointed at the proxy with
/// their `base_url`: plain and streamed answers arrive byte for byte as the
/// upstream sent them (and the SDKs read them), the upstream gets the
/// SDKs' requests compressed, with their keys intact.
#[test]
fn the_official_sdks_get_their_answers_byte_for_byte() {
    let Some(python) = required_python(&["openai", "anthropic"]) else {
        return;
    };
    let anthropic_sse = std::fs::read_to_string(
        corpus_dir().join("api/anthropic_claude-code-1.0.6_sonnet-4_main_turn.response.sse.txt"),
    )
    .unwrap();
    let anthropic_json = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
        "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn",
        "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 2},
    })
    .to_string();
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let openai_sse = format!(
        "data: {}\n\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"content": "Done."}), Value::Null),
        chunk(json!({}), json!("stop")),
    );
    let openai_json = condense_tests::chat_answer("Done.");
    let sse = |body: &str| Reply::Answer {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        body: body.to_owned(),
    };
    let upstream = TestServer::start([
        Reply::json(200, anthropic_json.clone()),
        sse(&anthropic_sse),
        sse(&anthropic_sse),
        openai_json.clone(),
        sse(&openai_sse),
    ]);
    let proxy = RunningProxy::in_memory("token_threshold = 4000\n", &upstream.url(""));
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("body.json");
    std::fs::write(&body, corpus_body("cc-trace-sonnet").to_string()).unwrap();
    let script = dir.path().join("client.py");
    std::fs::write(&script, SDK_CLIENT).unwrap();
    let out = Command::new(&python)
        .arg(&script)
        .arg(proxy.url(""))
        .arg(&body)
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the SDK client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert_eq!(read("anthropic.json"), anthropic_json);
    assert_eq!(read("anthropic.sse"), anthropic_sse);
    let Reply::Answer {
        body: openai_body, ..
    } = openai_json
    else {
        unreachable!()
    };
    assert_eq!(read("openai.json"), openai_body);
    assert_eq!(read("openai.sse"), openai_sse);

    let requests = upstream.requests();
    assert_eq!(requests.len(), 5);
    for (i, request) in requests.iter().enumerate() {
        let path = if i >= 3 {
            "/v1/chat/completions"
        } else {
            "/v1/messages"
        };
        assert_eq!(request.path, path);
        // The key as the SDK sent it (the Anthropic SDK as `x-api-key` or,
        // since API version 2026-10-21, as a bearer token).
        let key = "sk-test-0123456789";
        assert!(
            request.header("x-api-key") == Some(key)
                || request.header("authorization") == Some(&format!("Bearer {key}")),
            "request {i}: {:?}",
            request.headers
        );
        assert!(
            request
                .header("user-agent")
                .is_some_and(|ua| ua.contains("Python"))
        );
        assert!(
            request.body.to_string().contains(SUMMARY_MARKER),
            "request {i} is compressed"
        );
    }
}

/// A Codex-style OpenAI Responses request — reasoning items, shell calls and
/// their outputs — long enough to compact: the upstream gets a valid
/// Responses body (every call with its output), shorter, with the summary
/// and the latest items byte for byte. A string `input` goes on unchanged.
#[test]
fn a_responses_request_with_tool_calls_is_compressed_validly() {
    let mut input = vec![json!({"type": "message", "role": "user",
        "content": [{"type": "input_text", "text": "Fix the failing parser tests."}]})];
    for i in 0..40 {
        input.push(json!({"type": "reasoning", "id": format!("rs_{i}"),
            "summary": [{"type": "summary_text", "text": format!("Step {i}: look at the output.")}],
            "encrypted_content": format!("gAAAA-enc-{i}")}));
        input.push(json!({"type": "function_call", "call_id": format!("call_{i}"),
            "name": "shell", "arguments": json!({"command": ["cargo", "test", format!("t{i}")]}).to_string()}));
        input.push(json!({"type": "function_call_output", "call_id": format!("call_{i}"),
            "output": format!("running test t{i}\n{}test result: FAILED", "  left: 1, right: 2\n".repeat(60))}));
    }
    input.push(json!({"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": "The parser drops the last token."}]}));
    input.push(json!({"type": "message", "role": "user",
        "content": [{"type": "input_text", "text": "Fix it, then run clippy."}]}));
    let body = json!({"model": "gpt-5-codex", "instructions": "You are Codex.", "input": input,
                      "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object"}}]});
    let upstream = TestServer::answering(|_| Reply::json(200, r#"{"output": []}"#));
    let proxy = RunningProxy::in_memory("token_threshold = 4000\n", &upstream.url(""));
    let client = ureq::Agent::new_with_defaults();
    let post = |body: &Value| {
        client
            .post(&proxy.url("/v1/responses"))
            .header("authorization", "Bearer sk-test")
            .send(body.to_string())
            .unwrap()
            .status()
    };
    assert_eq!(post(&body), 200);
    let short = json!({"model": "gpt-5-codex", "input": "hello"});
    assert_eq!(post(&short), 200);

    let requests = upstream.requests();
    let sent = &requests[0].body;
    let parsed = condense_host::formats::Parsed::parse(
        sent.clone(),
        condense_host::formats::Format::Responses,
    )
    .unwrap();
    parsed.check_tool_pairs().unwrap();
    let (before, after) = (
        body["input"].as_array().unwrap(),
        sent["input"].as_array().unwrap(),
    );
    assert!(after.len() < before.len(), "{} items", after.len());
    assert!(sent.to_string().contains(SUMMARY_MARKER));
    // The latest items: the bytes the client sent.
    let latest = |raw: &[u8]| {
        let items = raw::elements(raw, raw::member(raw, "input").unwrap());
        let from = items[items.len() - 2].start;
        raw[from..items[items.len() - 1].end].to_vec()
    };
    let client_sent = body.to_string().into_bytes();
    assert_eq!(
        String::from_utf8(latest(&requests[0].raw)).unwrap(),
        String::from_utf8(latest(&client_sent)).unwrap()
    );
    assert_eq!(sent["instructions"], body["instructions"]);
    // The client's tools as they came, then condense's recall tool.
    let tools = sent["tools"].as_array().unwrap();
    assert_eq!(tools[..1], body["tools"].as_array().unwrap()[..]);
    assert_eq!(tools[1]["name"], condense_model::recall::TOOL_NAME);
    assert_eq!(requests[1].raw, short.to_string().as_bytes());
}

/// An answer streamed by the upstream reaches the client as it arrives:
/// the upstream sends the first events, then waits until the client has
/// read them before it sends the rest. A proxy that held the answer back
/// would leave the client waiting until the upstream gave up.
#[test]
fn a_streamed_answer_reaches_the_client_as_it_arrives() {
    let gate = condense_scripted_server::Gate::default();
    let first = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n".to_owned();
    let rest = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".to_owned();
    let upstream = TestServer::start([Reply::Streamed {
        first: first.clone(),
        gate: gate.clone(),
        rest: rest.clone(),
    }]);
    let proxy = RunningProxy::in_memory("token_threshold = 4000\n", &upstream.url(""));
    let body = corpus_body("cc-trace-sonnet");
    let answer = ureq::Agent::new_with_defaults()
        .post(&proxy.url("/v1/messages"))
        .header("x-api-key", KEY)
        .send(body.to_string())
        .unwrap();
    assert_eq!(answer.headers()["content-type"], "text/event-stream");
    let mut reader = answer.into_body().into_reader();
    let mut got = vec![0; first.len()];
    std::io::Read::read_exact(&mut reader, &mut got).unwrap();
    assert_eq!(got, first.as_bytes());
    // Only now does the upstream send the rest.
    gate.open();
    let mut tail = Vec::new();
    std::io::Read::read_to_end(&mut reader, &mut tail).unwrap();
    assert_eq!(tail, rest.as_bytes());
    assert_eq!(gate.opened_in_time(), Some(true));
    assert!(
        upstream.requests()[0]
            .body
            .to_string()
            .contains(SUMMARY_MARKER)
    );
}

/// A client's side requests — a title request (its own system prompt) and
/// a sub-agent's growing conversation (its own system prompt and task),
/// sent between the main session's calls — leave the main session's
/// requests exactly as they are without them.
#[test]
fn side_requests_do_not_disturb_the_main_sessions_checkpoint() {
    let calls = session_calls("cc-opus-c");
    let alone = through_one_proxy(SESSION_CONFIG, &calls);

    let upstream = TestServer::answering(|_| Reply::json(200, r#"{"content": []}"#));
    let proxy = RunningProxy::in_memory(SESSION_CONFIG, &upstream.url(""));
    let client = ureq::Agent::new_with_defaults();
    let main = [("x-test-session", "main")];
    let side = [("x-test-session", "side")];
    let mut sub_agent =
        vec![json!({"role": "user", "content": "Find every caller of parse_args."})];
    for (i, call) in calls.iter().enumerate() {
        assert_eq!(post(&client, &proxy.url("/v1/messages"), call, &main), 200);
        let title = json!({"model": "claude-haiku", "max_tokens": 20,
            "system": "Write a 5-word title for this conversation.",
            "messages": [call["messages"][0].clone()]});
        assert_eq!(
            post(&client, &proxy.url("/v1/messages"), &title, &side),
            200
        );
        sub_agent.push(json!({"role": "assistant", "content": format!("Searched part {i}.")}));
        sub_agent.push(
            json!({"role": "user", "content": format!("{}", "grep output line\n".repeat(200))}),
        );
        let search = json!({"model": "claude-haiku", "max_tokens": 200,
            "system": "You are a file search agent.", "messages": sub_agent});
        assert_eq!(
            post(&client, &proxy.url("/v1/messages"), &search, &side),
            200
        );
    }
    let with_side: Vec<Recorded> = upstream
        .requests()
        .into_iter()
        .filter(|r| r.header("x-test-session") == Some("main"))
        .collect();
    assert_as_reference(&alone, &with_side, "the main session with side requests");
    let compacted = compacted(&alone);
    assert!(
        compacted > alone.len() / 2,
        "{compacted} of {} compacted",
        alone.len()
    );
}

/// The LangChain recipe: chat models pointed at the proxy with `base_url`,
/// each given the same long conversation.
const LANGCHAIN_CLIENT: &str = r#"
import json, sys
from langchain_anthropic import ChatAnthropic
from langchain_openai import ChatOpenAI
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

proxy, body_path = sys.argv[1], sys.argv[2]
body = json.load(open(body_path))
text = lambda c: c if isinstance(c, str) else " ".join(b.get("text", "") for b in c)
messages = [SystemMessage(body["system"])] + [
    (HumanMessage if m["role"] == "user" else AIMessage)(text(m["content"]) or "(tool output)")
    for m in body["messages"]
]
key = "sk-test-0123456789"
answers = [
    ChatAnthropic(model="claude-sonnet-4", base_url=proxy, api_key=key, max_retries=0).invoke(messages).content,
    ChatOpenAI(model="gpt-5", base_url=proxy + "/v1", api_key=key, max_retries=0).invoke(messages).content,
    ChatOpenAI(model="gpt-5", base_url=proxy + "/v1", api_key=key, max_retries=0,
               use_responses_api=True).invoke(messages).text,
]
print(json.dumps(answers))
"#;

/// LangChain's chat models (`langchain-anthropic`, `langchain-openai`, Chat
/// Completions and Responses), pointed at the proxy with `base_url`: they
/// read the upstream's answers, and the upstream gets their requests
/// compressed.
#[test]
fn langchain_chat_models_work_through_the_proxy() {
    let Some(python) = required_python(&["langchain_openai", "langchain_anthropic"]) else {
        return;
    };
    let anthropic = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
        "content": [{"type": "text", "text": "Done (anthropic)."}], "stop_reason": "end_turn",
        "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 2},
    });
    let responses = json!({
        "id": "resp_1", "object": "response", "created_at": 1, "status": "completed",
        "model": "gpt-5", "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
        "output": [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": "Done (responses).", "annotations": []}]}],
        "usage": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    });
    let upstream = TestServer::start([
        Reply::json(200, anthropic.to_string()),
        condense_tests::chat_answer("Done (chat)."),
        Reply::json(200, responses.to_string()),
    ]);
    let proxy = RunningProxy::in_memory("token_threshold = 4000\n", &upstream.url(""));
    let dir = tempfile::tempdir().unwrap();
    let body_path = dir.path().join("body.json");
    std::fs::write(&body_path, corpus_body("cc-trace-sonnet").to_string()).unwrap();
    let out = Command::new(python)
        .args([
            "-c",
            LANGCHAIN_CLIENT,
            &proxy.url(""),
            &body_path.display().to_string(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the LangChain client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answers,
        json!(["Done (anthropic).", "Done (chat).", "Done (responses)."])
    );
    let requests = upstream.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        ["/v1/messages", "/v1/chat/completions", "/v1/responses"]
    );
    for request in &requests {
        assert!(
            request.body.to_string().contains(SUMMARY_MARKER),
            "{} is compressed",
            request.path
        );
    }
}

/// What an operator relies on, through the running proxy: `/healthz`; its
/// own token (the upstream never sees it); per-agent settings by route
/// prefix and by header, and an unknown agent refused; the request-size
/// cap; and a graceful shutdown that finishes the stream in flight.
#[test]
fn the_proxy_serves_agents_checks_its_token_caps_bodies_and_shuts_down_gracefully() {
    let gate = condense_scripted_server::Gate::default();
    let first = "event: message_start\ndata: {}\n\n".to_owned();
    let rest = "event: message_stop\ndata: {}\n\n".to_owned();
    let upstream = TestServer::start([
        Reply::json(200, "{}"),
        Reply::json(200, "{}"),
        Reply::json(200, "{}"),
        Reply::Streamed {
            first: first.clone(),
            gate: gate.clone(),
            rest: rest.clone(),
        },
    ]);
    // Agent `default` compresses nothing this size; agent `tight` does.
    let config = "token_threshold = 1000000\n[agents.tight]\ntoken_threshold = 4000\n";
    let mut settings = RunningProxy::settings(
        config,
        &upstream.url(""),
        Arc::new(MemorySessions::default()),
    );
    settings.routes.token = Some("proxy-t0ken".into());
    settings.max_request_bytes = 1 << 20;
    let proxy = RunningProxy::serve(settings);
    let client = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let body = corpus_body("cc-trace-sonnet").to_string();
    let send = |path: &str, headers: &[(&str, &str)], body: &str| {
        let mut request = client.post(&proxy.url(path)).header("x-api-key", KEY);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let mut answer = request.send(body).unwrap();
        let text = answer.body_mut().read_to_string().unwrap_or_default();
        (answer.status().as_u16(), text)
    };
    let token = ("proxy-authorization", "Bearer proxy-t0ken");

    let health = client.get(&proxy.url("/healthz")).call().unwrap();
    assert_eq!(health.status(), 200);
    let (status, text) = send("/v1/messages", &[], &body);
    assert_eq!(status, 407, "{text}");
    let (status, text) = send("/agents/nope/v1/messages", &[token], &body);
    assert_eq!(status, 404);
    assert!(text.contains("no agent `nope`"), "{text}");
    // curl waits for `100 Continue` before it sends a large body: refused
    // before it does.
    let too_big = format!("{{\"pad\": \"{}\"}}", "x".repeat(1 << 20));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.json"), &too_big).unwrap();
    let out = Command::new("curl")
        .args(["--silent", "--write-out", "%{http_code}", "--data-binary"])
        .arg(format!("@{}", dir.path().join("big.json").display()))
        .args(["-H", "proxy-authorization: Bearer proxy-t0ken"])
        .arg(proxy.url("/v1/messages"))
        .output()
        .unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.ends_with("413") && out.contains("over 1048576 bytes"),
        "{out}"
    );
    assert!(
        upstream.requests().is_empty(),
        "refused requests never go upstream"
    );

    assert_eq!(send("/v1/messages", &[token], &body).0, 200);
    assert_eq!(send("/agents/tight/v1/messages", &[token], &body).0, 200);
    let by_header = [token, ("x-condense-agent", "tight")];
    assert_eq!(send("/v1/messages", &by_header, &body).0, 200);
    let requests = upstream.requests();
    let original: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        requests[0].body, original,
        "agent default: under its threshold"
    );
    for sent in &requests[1..] {
        assert_eq!(sent.path, "/v1/messages");
        assert!(
            sent.body.to_string().contains(SUMMARY_MARKER),
            "agent tight"
        );
    }
    assert!(
        requests
            .iter()
            .all(|r| r.header("proxy-authorization").is_none())
    );
    // Refusals are counted with the rest.
    let text = scrape(&proxy.url("/metrics"));
    for (line, count) in [
        (
            r#"condense_proxy_requests_total{route="refused",status="407"}"#,
            1.0,
        ),
        (
            r#"condense_proxy_requests_total{route="refused",status="404"}"#,
            1.0,
        ),
        (
            r#"condense_proxy_requests_total{route="anthropic",status="413"}"#,
            1.0,
        ),
        (
            r#"condense_proxy_requests_total{route="anthropic",status="200"}"#,
            3.0,
        ),
    ] {
        assert_eq!(metric(&text, line), count, "{line}\n{text}");
    }

    // A stream in flight when the proxy is told to stop is finished.
    let answer = client
        .post(&proxy.url("/v1/messages"))
        .header("proxy-authorization", "Bearer proxy-t0ken")
        .send(&body)
        .unwrap();
    let mut reader = answer.into_body().into_reader();
    let mut got = vec![0; first.len()];
    std::io::Read::read_exact(&mut reader, &mut got).unwrap();
    let stopping = std::thread::spawn(move || drop(proxy));
    std::thread::sleep(std::time::Duration::from_millis(200));
    gate.open();
    let mut tail = Vec::new();
    std::io::Read::read_to_end(&mut reader, &mut tail).unwrap();
    assert_eq!(tail, rest.as_bytes());
    stopping.join().unwrap();
}

/// A coding agent's own CLI: `$VAR` (`.ci/run` installs its npm package,
/// pinned), else `name` on the PATH; `None` (the test then passes saying
/// so) unless `CONDENSE_REQUIRE_<NAME>=1` (CI).
fn agent_cli(var: &str, name: &str, package: &str) -> Option<std::path::PathBuf> {
    let program = std::env::var_os(var).map_or_else(|| name.into(), Into::into);
    let found = Command::new(&program).arg("--version").output();
    if found.is_ok_and(|o| o.status.success()) {
        return Some(program);
    }
    let why = format!(
        "no {name} at {} (npm install {package})",
        std::path::Path::new(&program).display()
    );
    let require = format!("CONDENSE_REQUIRE_{}", name.to_uppercase());
    assert!(
        std::env::var(&require).as_deref() != Ok("1"),
        "{require}=1, but {why}"
    );
    condense_tests::skipped(&why);
    None
}

/// Tool calls in the agent task: each prints a long output.
const AGENT_CALLS: usize = 14;

/// An agent's CLI — `command`, given the proxy's URL and a scratch
/// directory — run through the proxy on the task the upstream scripts with
/// `turn` (its answer to each request: a tool call for the first
/// [`AGENT_CALLS`], then the final text). Recall is on, as by default: once
/// a request names a fold's handle, the upstream answers it first with
/// `recall` (a `condense_recall` call of that handle, in the agent's
/// protocol), which the proxy answers itself before the turn's answer
/// reaches the agent as the one answer it reads. Returns the agent's
/// requests as the upstream got them (the proxy's recall round apart), the
/// proxy's `/metrics` and what the CLI printed.
fn agent_through_the_proxy(
    turn: fn(usize) -> Reply,
    recall: fn(&str) -> Reply,
    command: impl FnOnce(&str, &std::path::Path) -> Command,
) -> AgentRun {
    let (mut n, mut seen, mut round) = (0, 0, None);
    let recall_round = Arc::new(Mutex::new(None));
    let told = recall_round.clone();
    let upstream = TestServer::answering(move |request| {
        seen += 1;
        let handle = fold_handle_named(&request.body.to_string());
        if let (None, Some(handle)) = (round, handle) {
            // The next request is the proxy's, answering this call.
            round = Some(seen);
            *told.lock().unwrap() = Some(seen);
            return recall(&handle);
        }
        n += 1;
        turn(n - 1)
    });
    let proxy = RunningProxy::in_memory("token_threshold = 40000\n", &upstream.url(""));
    let dir = tempfile::tempdir().unwrap();
    let out = command(&proxy.url(""), dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the agent failed: {stdout}\n{stderr}");
    let mut requests = upstream.requests();
    assert_eq!(requests.len(), AGENT_CALLS + 2, "{stderr}");
    let at = recall_round
        .lock()
        .unwrap()
        .expect("a request named a fold's handle");
    let recall_round = requests.remove(at);
    let metrics = scrape(&proxy.url("/metrics"));
    assert_eq!(
        metric(&metrics, "condense_proxy_recall_rounds_total"),
        1.0,
        "{metrics}"
    );
    AgentRun {
        requests,
        recall_round,
        metrics,
        stdout,
    }
}

/// What [`agent_through_the_proxy`] saw.
struct AgentRun {
    /// The agent's own requests, as the upstream got them.
    requests: Vec<Recorded>,
    /// The proxy's request answering the `condense_recall` call.
    recall_round: Recorded,
    metrics: String,
    stdout: String,
}

/// The fold handle a request's summary names, if it names one (`text`: the
/// request's JSON).
fn fold_handle_named(text: &str) -> Option<String> {
    let marker = "condense_recall(handle=\\\"f";
    let at = text.find(marker)? + marker.len() - 1;
    Some(text.get(at..at + 12)?.to_owned())
}

/// Of an agent's requests as the upstream got them, those that carry
/// condense's summary also carry `condense_recall`, after the client's own
/// tools (`name` reads a tool's name), and name the fold's handle.
fn assert_recall_offered_once_compacted(requests: &[Recorded], name: fn(&Value) -> &Value) {
    let mut compacted = 0;
    for (i, request) in requests.iter().enumerate() {
        let text = request.body.to_string();
        let tools = request.body["tools"].as_array().unwrap();
        let offered = tools.iter().any(|t| name(t) == "condense_recall");
        if text.contains(SUMMARY_MARKER) {
            compacted += 1;
            assert!(offered, "request {i}");
            assert_eq!(
                name(tools.last().unwrap()),
                "condense_recall",
                "request {i}"
            );
            assert!(fold_handle_named(&text).is_some(), "request {i}");
        } else {
            assert!(!offered, "request {i}: no tool before the first compaction");
        }
    }
    assert!(compacted > 0);
}

/// Of an agent's requests `bodies`, as its provider's cache sees them: most
/// compacted, the checkpoint reused between compactions, and a cache break
/// (`continues` false) at each compaction and nowhere else.
fn assert_breaks_only_at_compactions(
    bodies: &[Recorded],
    continues: fn(&[u8], &[u8]) -> bool,
    metrics: &str,
) {
    let compacted = compacted(bodies);
    assert!(
        compacted >= AGENT_CALLS / 2,
        "{compacted} of {} compacted\n{metrics}",
        bodies.len()
    );
    let breaks = bodies
        .windows(2)
        .filter(|p| !continues(&p[0].raw, &p[1].raw))
        .count();
    let compactions = metric(metrics, "condense_proxy_compactions_total");
    assert!(compactions >= 2.0, "{metrics}");
    assert!(
        compactions < compacted as f64,
        "checkpoints reused between compactions"
    );
    assert_eq!(breaks as f64, compactions, "breaks only at compactions");
}

/// The upstream's streamed answer to turn `turn` of the Claude Code task:
/// a Bash call with a long output, then the final text.
fn claude_turn(turn: usize) -> Reply {
    let (block, delta, stop) = if turn < AGENT_CALLS {
        let input = json!({"command": format!("seq 1 {}", 3000 + turn), "description": "Count"});
        (
            json!({"type": "tool_use", "id": format!("toolu_{turn:02}"), "name": "Bash", "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            "tool_use",
        )
    } else {
        (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": "Counted."}),
            "end_turn",
        )
    };
    claude_answer(&format!("msg_{turn}"), block, delta, stop)
}

/// A streamed Messages answer `id` of one content block, `block` started
/// and `delta` added, ending with `stop`.
fn claude_answer(id: &str, block: Value, delta: Value, stop: &str) -> Reply {
    let start = json!({"type": "message_start", "message": {"id": id,
        "type": "message", "role": "assistant", "model": "claude-sonnet-4", "content": [],
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 1}}});
    sse(&[
        start,
        json!({"type": "content_block_start", "index": 0, "content_block": block}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": 20}}),
        json!({"type": "message_stop"}),
    ])
}

/// Claude Code itself (`claude -p`), pointed at the proxy with
/// `ANTHROPIC_BASE_URL`, on a task whose Bash calls print long outputs:
/// condense compacts its requests (its real system prompt and tools, its
/// `?beta=true` path), Claude Code reads every streamed answer, runs every
/// Bash call (its output comes back in the next request) and finishes the
/// task, every tool result still follows its call, and between compactions
/// the upstream gets a byte-stable prefix (all that moves is Claude Code's
/// own cache mark on its newest message).
#[test]
fn claude_code_works_through_the_proxy() {
    let Some(claude) = agent_cli("CONDENSE_CLAUDE", "claude", "@anthropic-ai/claude-code") else {
        return;
    };
    let run = agent_through_the_proxy(claude_turn, claude_recall, |proxy, dir| {
        let work = dir.join("work");
        std::fs::create_dir(&work).unwrap();
        let mut command = Command::new(claude);
        command
            .args([
                "-p",
                "Count to 3000 a few times.",
                "--output-format",
                "json",
            ])
            .args(["--allowedTools", "Bash(seq:*)"])
            .current_dir(&work)
            .env("HOME", dir)
            .env("ANTHROPIC_BASE_URL", proxy)
            .env("ANTHROPIC_API_KEY", KEY)
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
        command
    });
    let AgentRun {
        requests,
        recall_round,
        metrics,
        stdout,
    } = run;
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["result"], "Counted.", "{result}");
    for (i, request) in requests.iter().enumerate() {
        assert!(request.path.starts_with("/v1/messages"), "{}", request.path);
        assert_eq!(request.header("x-api-key"), Some(KEY));
        // Every tool result answers a call earlier in the same request.
        let mut calls = std::collections::HashSet::new();
        for message in request.body["messages"].as_array().unwrap() {
            for block in message["content"].as_array().into_iter().flatten() {
                match block["type"].as_str() {
                    Some("tool_use") => {
                        calls.insert(block["id"].clone());
                    }
                    Some("tool_result") => {
                        assert!(
                            calls.contains(&block["tool_use_id"]),
                            "request {i}: {block}"
                        );
                    }
                    _ => {}
                }
            }
        }
    }
    // Claude Code ran every Bash call the upstream asked for: the request
    // after each carries its result, which ends with the last number the
    // command printed, or is condense's marker for that call's result.
    for turn in 0..AGENT_CALLS {
        let id = format!("toolu_{turn:02}");
        let next = &requests[turn + 1].body;
        let result = next["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["content"].as_array().into_iter().flatten())
            .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == id.as_str())
            .unwrap_or_else(|| panic!("request {}: no result of {id}:\n{next}", turn + 1));
        let output = result_text(result);
        let last = (3000 + turn).to_string();
        let cleared = output.starts_with("[condense: ")
            && (output.contains(&format!("call {id}]")) || output.contains(&format!("call {id};")));
        assert!(
            output.trim_end().lines().last() == Some(last.as_str()) || cleared,
            "request {}: {id} (seq 1 {last}) answered with {result}",
            turn + 1
        );
    }
    // Recall: offered from the first compaction on; the proxy's round
    // answered the call with the folded outputs, and Claude Code read the
    // round's answer as its own (it ran that turn's Bash call above).
    assert_recall_offered_once_compacted(&requests, |t| &t["name"]);
    let messages = recall_round.body["messages"].as_array().unwrap();
    let answered = &messages[messages.len() - 1]["content"][0];
    assert_eq!(answered["tool_use_id"], "toolu_recall", "{answered}");
    let recalled = result_text(answered);
    assert!(
        recalled.contains("--- message") && recalled.contains("\n2999\n"),
        "{answered}"
    );
    // As the upstream got them, byte for byte.
    assert_breaks_only_at_compactions(&requests, claude_continues, &metrics);
}

/// The upstream's streamed answer calling `condense_recall` on `handle`,
/// for the lines that say 2999 (every `seq` output folded has one).
fn claude_recall(handle: &str) -> Reply {
    let block = json!({"type": "tool_use", "id": "toolu_recall", "name": "condense_recall",
                       "input": {}});
    let input = json!({"handle": handle, "query": "2999"}).to_string();
    let delta = json!({"type": "input_json_delta", "partial_json": input});
    claude_answer("msg_recall", block, delta, "tool_use")
}

/// The text of an Anthropic `tool_result` block: its string content, or
/// the text of its blocks.
fn result_text(result: &Value) -> String {
    match &result["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("tool_result content {other}"),
    }
}

/// Whether Claude Code's request `now`, as the upstream got it, starts
/// with the whole of `before`: byte for byte — `system`, `tools`, every
/// other member and the messages — but for the last message of `before`.
/// That one Claude Code re-marks: it moves its `cache_control` mark on to
/// the newest message on every call, and sends a content of one text block
/// (where the mark goes) as a string once unmarked; neither is content, the
/// provider caches the same prefix. It must be the same once unmarked, its
/// keys in the same order.
fn claude_continues(before: &[u8], now: &[u8]) -> bool {
    raw::continues_with(before, now, "messages", &[], |last, there| {
        let unmarked = |bytes: &[u8]| {
            let value: Value = serde_json::from_slice(bytes).unwrap();
            // Written out in the order its keys came.
            without_cache_marks(value).to_string()
        };
        unmarked(last) == unmarked(there)
    })
}

/// `value` without its `cache_control` keys, and a content of one text
/// block as the string it is.
fn without_cache_marks(mut value: Value) -> Value {
    match &mut value {
        Value::Object(obj) => {
            obj.shift_remove("cache_control");
            for v in obj.values_mut() {
                *v = without_cache_marks(v.take());
            }
            if let Some(Value::Array(blocks)) = obj.get("content")
                && let [block] = blocks.as_slice()
                && block["type"] == "text"
                && block.as_object().is_some_and(|b| b.len() == 2)
            {
                let text = block["text"].clone();
                obj.insert("content".into(), text);
            }
        }
        Value::Array(list) => {
            for v in list {
                *v = without_cache_marks(v.take());
            }
        }
        _ => {}
    }
    value
}

/// The upstream's streamed Responses answer to turn `turn` of the Codex
/// task: an `exec_command` call with a long output, then the final message.
fn codex_turn(turn: usize) -> Reply {
    let item = if turn < AGENT_CALLS {
        json!({"type": "function_call", "id": format!("fc_{turn}"), "call_id": format!("call_{turn}"),
               "name": "exec_command", "status": "completed",
               "arguments": json!({"cmd": format!("seq 1 {}", 3000 + turn)}).to_string()})
    } else {
        json!({"type": "message", "id": format!("msg_{turn}"), "status": "completed",
               "role": "assistant",
               "content": [{"type": "output_text", "text": "Counted.", "annotations": []}]})
    };
    codex_answer(&format!("resp_{turn}"), item)
}

/// A streamed Responses answer `id` of one output `item`.
fn codex_answer(id: &str, item: Value) -> Reply {
    let response = json!({"id": id, "object": "response", "created_at": 1,
                          "status": "in_progress", "model": "gpt-5-codex", "output": []});
    let mut done = response.clone();
    done["status"] = "completed".into();
    done["output"] = json!([item]);
    done["usage"] = json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                           "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                           "total_tokens": 15});
    sse(&[
        json!({"type": "response.created", "response": response}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": done}),
    ])
}

/// Whether Codex's Responses request `now` starts with the whole of
/// `before`, byte for byte: its `input` continues `before`'s and nothing
/// else moved, but `client_metadata`. That one is no part of the prompt
/// (the ids of Codex's turn, window and thread) and Codex writes it from a
/// hash map, its keys in another order on every request.
fn continues_input(before: &[u8], now: &[u8]) -> bool {
    raw::continues_with(before, now, "input", &["client_metadata"], |a, b| a == b)
}

/// Codex itself (`codex exec`), given the proxy as its Responses provider
/// in `config.toml` (docs/proxy.md's recipe), on a task whose commands print
/// long outputs: condense compacts its requests (its developer messages,
/// tools and function calls), Codex runs every call and finishes, every
/// output still follows its call, and between compactions its requests
/// keep a byte-stable prefix.
#[test]
fn codex_works_through_the_proxy() {
    let Some(codex) = agent_cli("CONDENSE_CODEX", "codex", "@openai/codex") else {
        return;
    };
    let run = agent_through_the_proxy(codex_turn, codex_recall, |proxy, dir| {
        let (home, work) = (dir.join("codex"), dir.join("work"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        let config = format!(
            "model = \"gpt-5-codex\"\nmodel_provider = \"condense\"\n\n\
             [model_providers.condense]\nname = \"OpenAI through condense\"\n\
             base_url = \"{proxy}/v1\"\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n"
        );
        std::fs::write(home.join("config.toml"), config).unwrap();
        let mut command = Command::new(codex);
        command
            .args(["exec", "--skip-git-repo-check"])
            .arg("--dangerously-bypass-approvals-and-sandbox")
            .arg("Count to 3000 a few times.")
            .current_dir(&work)
            .env("HOME", dir)
            .env("CODEX_HOME", &home)
            .env("OPENAI_API_KEY", KEY);
        command
    });
    let AgentRun {
        requests,
        recall_round,
        metrics,
        stdout,
    } = run;
    assert!(stdout.contains("Counted."), "{stdout}");
    for (i, request) in requests.iter().enumerate() {
        assert_eq!(request.path, "/v1/responses");
        assert_eq!(
            request.header("authorization"),
            Some(&*format!("Bearer {KEY}"))
        );
        let mut calls = std::collections::HashSet::new();
        for item in request.body["input"].as_array().unwrap() {
            match item["type"].as_str() {
                Some("function_call") => {
                    calls.insert(item["call_id"].clone());
                }
                Some("function_call_output") => {
                    assert!(calls.contains(&item["call_id"]), "request {i}: {item}");
                    // Codex ran the command: its output came back.
                    let output = item["output"].to_string();
                    assert!(
                        output.contains("2999") || output.contains("[condense"),
                        "{output}"
                    );
                }
                _ => {}
            }
        }
    }
    assert_recall_offered_once_compacted(&requests, |t| &t["name"]);
    let input = recall_round.body["input"].as_array().unwrap();
    let answered = &input[input.len() - 1];
    assert_eq!(answered["call_id"], "call_recall", "{answered}");
    let recalled = answered["output"].as_str().unwrap();
    assert!(
        recalled.contains("--- message") && recalled.contains("\n2999\n"),
        "{answered}"
    );
    assert_breaks_only_at_compactions(&requests, continues_input, &metrics);
}

/// The upstream's streamed Responses answer calling `condense_recall` on
/// `handle`, for the lines that say 2999.
fn codex_recall(handle: &str) -> Reply {
    let item = json!({"type": "function_call", "id": "fc_recall", "call_id": "call_recall",
                      "name": "condense_recall", "status": "completed",
                      "arguments": json!({"handle": handle, "query": "2999"}).to_string()});
    codex_answer("resp_recall", item)
}

/// The upstream bodies of the requests tagged `x-test-session: session`.
fn sent_in(upstream: &TestServer, session: &str) -> Vec<Value> {
    upstream
        .requests()
        .into_iter()
        .filter(|r| r.header("x-test-session") == Some(session))
        .map(|r| r.body)
        .collect()
}

/// Each request is compressed for its `model`: the same call is compacted
/// for a model whose window is small (its threshold is 80% of it) and left
/// whole for one priced by `*` (the agent's 100k threshold); what the proxy
/// says it saved is priced by the model's own prices.
#[test]
fn each_request_is_compressed_for_its_model_and_priced_by_it() {
    // At the threshold alone: the cost rule would compact a long call for
    // either model.
    let config = r#"
token_threshold = 100000
compact_when = "threshold"
[models."small-*"]
context_window = 20000
input_price = 2.0
cache_read = 0.5
"#;
    let upstream = TestServer::answering(|_| Reply::json(200, r#"{"content": []}"#));
    let proxy = RunningProxy::in_memory(config, &upstream.url(""));
    let client = ureq::Agent::new_with_defaults();
    let calls = session_calls("cc-opus-a");
    let mut call = calls[calls.len() / 3].clone();
    assert!(
        condense_tests::proxy::request_tokens(&call) > 20_000,
        "a call over the small model's window"
    );
    for (model, session) in [("small-coder-7b", "small"), ("big-model", "big")] {
        call["model"] = json!(model);
        let headers = [("x-test-session", session), ("x-condense-session", session)];
        assert_eq!(
            post(&client, &proxy.url("/v1/messages"), &call, &headers),
            200
        );
    }
    let (small, big) = (sent_in(&upstream, "small"), sent_in(&upstream, "big"));
    assert_eq!(
        compacted(&small),
        1,
        "compacted for the small model's window"
    );
    let small_tokens = condense_tests::proxy::request_tokens(&small[0]);
    assert!(small_tokens <= 16_000, "{small_tokens} over 80% of 20k");
    call["model"] = json!("big-model");
    assert!(big[0] == call, "whole under the agent's threshold");

    let text = scrape(&proxy.url("/metrics"));
    let taken_out = metric(&text, "condense_proxy_tokens_before_total")
        - metric(&text, "condense_proxy_tokens_after_total");
    assert!(taken_out > 0.0);
    let saved = metric(&text, "condense_proxy_estimated_cost_saved_usd_total");
    // The small model's prices: $2 per million, cached reads at half.
    let expected = taken_out * 0.5 * 2.0 / 1e6;
    assert!((saved - expected).abs() < 1e-9, "{saved} vs {expected}");
}

/// A request that comes after the model's cache TTL finds the provider's
/// prompt cache expired: the store kept when the session's last request
/// came, and the compaction the cost rule would have made a few calls later
/// is made then, at no break of its own. A session sent the same calls
/// without the pause compacts later. The event says `cold`.
#[test]
fn a_request_after_the_cache_expired_compacts_then() {
    use condense_host::timing::{Clock, ManualClock};
    let config = "token_threshold = 60000\n[models.\"claude-opus-4*\"]\ncache_ttl = \"1s\"\n";
    let upstream = TestServer::answering(|_| Reply::json(200, r#"{"content": []}"#));
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.jsonl");
    let mut settings = RunningProxy::settings(
        config,
        &upstream.url(""),
        Arc::new(MemorySessions::default()),
    );
    settings.events = Some(condense_host::events::EventLog::open(&events).unwrap());
    // The session's time moves only when the test moves it: no call is
    // ever a second after the one before, however slow the machine.
    let clock = ManualClock::new();
    settings.agents = (settings.agents.into_iter())
        .map(|(name, agent)| (name, agent.timed_by(&Clock::manual(&clock))))
        .collect();
    let proxy = RunningProxy::serve(settings);
    let client = ureq::Agent::new_with_defaults();
    let calls = session_calls("cc-opus-a");
    let send = |call: &Value, session: &str| {
        let headers = [("x-test-session", session), ("x-condense-session", session)];
        assert_eq!(
            post(&client, &proxy.url("/v1/messages"), call, &headers),
            200
        );
    };
    // Without a pause: the first compaction.
    let mut first = None;
    for (i, call) in calls.iter().enumerate() {
        send(call, "warm");
        if compacted(&sent_in(&upstream, "warm")) > 0 {
            first = Some(i);
            break;
        }
    }
    let first = first.expect("the warm session compacts");
    assert!(first > 2, "compacted at call {first}");
    // The same calls up to two before it, then a pause past the TTL.
    let paused = first - 2;
    for call in &calls[..paused] {
        send(call, "cold");
    }
    clock.advance(std::time::Duration::from_millis(1_300));
    send(&calls[paused], "cold");
    let (warm, cold) = (sent_in(&upstream, "warm"), sent_in(&upstream, "cold"));
    assert_eq!(
        cold[..paused],
        warm[..paused],
        "the same calls before the pause"
    );
    assert_eq!(compacted(&cold[..paused]), 0);
    assert_eq!(compacted(&cold[paused..]), 1, "compacted after the pause");
    drop(proxy);
    let events: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let triggers: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            (
                e["session"].as_str().unwrap(),
                e["trigger"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        triggers,
        [
            // Its request past the threshold: the threshold forces it,
            // whatever the cost rule says.
            (named_group("warm").as_str(), "threshold"),
            (named_group("cold").as_str(), "cold")
        ]
    );
}

/// The Redis store passes the checks every session store passes, against a
/// real server; two hosts on it (two proxies) see each other's requests,
/// and a request time is kept for a day, not for ever.
#[test]
fn the_redis_store_passes_the_store_checks_and_is_shared_by_hosts() {
    use condense_sessions::{RedisSessions, TOUCH_EXPIRY_SECS, conformance, touched_key};
    let Some(server) = condense_tests::proxy::RedisServer::start() else {
        return;
    };
    let url = server.url.as_str();
    conformance::sessions_keep_their_own(&RedisSessions::open(url).unwrap());
    let one = RedisSessions::open(url).unwrap();
    let a = conformance::history(&["task", "a1", "a2"]);
    let group = condense_sessions::group_of(
        condense_host::formats::Format::OpenAi,
        "default",
        None,
        None,
        &a,
    );
    let checkpoints = one.entries(&group).unwrap();
    conformance::touches_are_per_group(&one);
    conformance::calls_are_kept_per_group(&one);
    let other = RedisSessions::open(url).unwrap();
    // Another host sees the calls one recorded.
    assert_eq!(other.calls("g-calls").unwrap().len(), 3);
    assert_eq!(other.touch(&group, 400_000).unwrap(), Some(300_500));
    assert_eq!(one.touch(&group, 401_000).unwrap(), Some(400_000));
    let out = Command::new("redis-cli")
        .args(["-u", url, "TTL", &touched_key(&group)])
        .output()
        .expect("redis-cli runs");
    let ttl: i64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert!(
        (1..=TOUCH_EXPIRY_SECS as i64).contains(&ttl),
        "expires in {ttl} s"
    );
    // The times are not among the group's checkpoints.
    assert_eq!(one.entries(&group).unwrap().len(), checkpoints.len());
}

/// `GET /sessions` on a proxy: the sessions it served, one of them with the
/// handles that recall what each compaction folded (they resolve against
/// the session's own history) and its summary. Only the operator reads it
/// when an operator token is set; nobody when the proxy serves other
/// machines without one.
#[test]
fn the_sessions_view_shows_what_was_folded_to_the_operator_only() {
    use condense_proxy::guard::{Access, OPERATOR_HEADER, Off};
    let calls = session_calls("cc-opus-c");
    let upstream = TestServer::answering(|_| Reply::json(200, r#"{"content": []}"#));
    let store: Arc<dyn SessionStore> = Arc::new(MemorySessions::default());
    let serve = |access: Access| {
        let mut settings = RunningProxy::settings(SESSION_CONFIG, &upstream.url(""), store.clone());
        settings.sessions_view = access;
        RunningProxy::serve(settings)
    };
    let get = |proxy: &RunningProxy, path: &str, token: Option<&str>| {
        let mut request = ureq::get(&proxy.url(path))
            .config()
            .http_status_as_error(false)
            .build();
        if let Some(token) = token {
            request = request.header(OPERATOR_HEADER, token);
        }
        let mut answer = request.call().unwrap();
        let status = answer.status().as_u16();
        (status, answer.body_mut().read_to_string().unwrap())
    };
    {
        let proxy = serve(Access::Loopback);
        let client = ureq::Agent::new_with_defaults();
        for call in &calls {
            let headers = [("x-condense-session", "s-1")];
            assert_eq!(
                post(&client, &proxy.url("/v1/messages"), call, &headers),
                200
            );
        }
        let (status, body) = get(&proxy, "/sessions", None);
        assert_eq!(status, 200, "{body}");
        let list: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(list[0]["session"], named_group("s-1"), "{list}");
        let (status, body) = get(&proxy, &format!("/sessions/{}", named_group("s-1")), None);
        assert_eq!(status, 200, "{body}");
        let view: Value = serde_json::from_str(&body).unwrap();
        let history =
            condense_host::body::parse_body(calls.last().unwrap().to_string().as_bytes(), None)
                .unwrap()
                .messages()
                .to_vec();
        let checkpoints = view["checkpoints"].as_array().unwrap();
        assert!(checkpoints.len() >= 2, "{view}");
        for checkpoint in checkpoints {
            let handle = checkpoint["handle"].as_str().unwrap();
            let folded = checkpoint["folded"].as_u64().unwrap() as usize;
            let recalled =
                condense_model::recall::recall(&history, handle, None, 1_000_000).unwrap();
            assert_eq!(
                condense_model::recall::find(&history, handle),
                Ok(condense_model::recall::Span::Fold { end: folded })
            );
            assert!(recalled.text.contains("--- message"), "{handle}");
        }
        assert!(!view["summary"].as_str().unwrap().is_empty(), "{view}");
        let nope = format!("/sessions/{}", named_group("nope"));
        assert_eq!(get(&proxy, &nope, None).0, 404);
    }
    let guarded = serve(Access::Token("op-7f3a".into()));
    assert_eq!(get(&guarded, "/sessions", None).0, 401);
    assert_eq!(get(&guarded, "/sessions", Some("op-7f3b")).0, 401);
    let s1 = format!("/sessions/{}", named_group("s-1"));
    assert_eq!(get(&guarded, &s1, None).0, 401);
    assert_eq!(get(&guarded, "/sessions", Some("op-7f3a")).0, 200);
    drop(guarded);
    let off = serve(Access::Off(Off::ServesOthers));
    assert_eq!(get(&off, "/sessions", Some("op-7f3a")).0, 403);
    assert_eq!(get(&off, &s1, None).0, 403);
}

/// Whether `now` is `before` with bytes inserted in one place: all of
/// `before`, byte for byte, around them.
fn inserted(before: &[u8], now: &[u8]) -> bool {
    let prefix = before.iter().zip(now).take_while(|(a, b)| a == b).count();
    let suffix = (before.iter().rev())
        .zip(now.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    now.len() > before.len() && prefix + suffix >= before.len()
}

/// Of a session's upstream requests, those that carry recall results, each
/// with the request before it.
fn recall_rounds(session: &Session) -> Vec<(Recorded, Recorded)> {
    let requests = session.upstream.requests();
    requests
        .windows(2)
        .filter(|pair| {
            let results = session.wire.results(&pair[1].body);
            results.iter().any(|(id, ..)| id.starts_with("recall_"))
        })
        .map(|pair| (pair[0].clone(), pair[1].clone()))
        .collect()
}

/// Every request the upstream got is a valid request of its protocol, its
/// tool calls and results paired.
fn assert_valid_requests(session: &Session) {
    for (i, request) in session.upstream.requests().iter().enumerate() {
        let parsed = Parsed::parse(request.body.clone(), session.wire.format)
            .unwrap_or_else(|e| panic!("{}: request {i}: {e}", session.wire.name()));
        if let Err(e) = parsed.check_tool_pairs() {
            panic!(
                "{}: request {i}: {e}\n{}",
                session.wire.name(),
                request.body
            );
        }
    }
}

/// Nothing folded is lost: in each protocol, plain and
/// streamed, a session through the proxy compacts, and its requests from
/// then on name recall handles and carry `condense_recall`. The model
/// recalls the handles; the proxy answers from the client's own request —
/// each result the original text of what its handle covers, line for line
/// — and calls the upstream again with the request continued (the model's
/// turn as it gave it, thinking and reasoning byte for byte, then the
/// results; the previous request's bytes all kept), and the client gets
/// one well-formed answer with no recall in it: the first round's text,
/// then the next round's, the usage of both.
#[test]
fn the_proxy_answers_the_models_recalls_in_every_protocol() {
    for wire in WIRES {
        let name = wire.name();
        let session = Session::run(wire, RECALL_CONFIG, Script::default(), 10);
        let model = lock(&session.model);
        assert!(model.problems.is_empty(), "{name}: {:#?}", model.problems);
        assert!(
            model.recall_rounds >= 2,
            "{name}: {} recall rounds",
            model.recall_rounds
        );
        assert!(
            model.recalled.iter().all(|r| !r.is_error),
            "{name}: {:?}",
            model.recalled
        );
        let kinds: Vec<char> = (model.recalled.iter())
            .filter_map(|r| r.input["handle"].as_str()?.chars().next())
            .collect();
        assert!(
            kinds.contains(&'f') && kinds.contains(&'r'),
            "{name}: {kinds:?}"
        );
        assert_valid_requests(&session);
        let rounds = recall_rounds(&session);
        assert_eq!(rounds.len(), model.recall_rounds);
        let key = wire.list_key();
        for (before, now) in &rounds {
            assert!(
                inserted(&before.raw, &now.raw),
                "{name}: a recall round rewrote the request"
            );
            let (b, n) = (
                before.body[key].as_array().unwrap(),
                now.body[key].as_array().unwrap(),
            );
            assert_eq!(n[..b.len()], b[..], "{name}: the list grew at its end");
        }
        for ((answer, _), calls) in session.answers.iter().zip(&session.calls) {
            let calls = *calls as u64;
            assert!(calls <= 2, "{name}: one recall round a request");
            assert_eq!(
                answer.usage,
                (USAGE.0 * calls, USAGE.1 * calls),
                "{name}: usage summed"
            );
            assert_eq!(
                answer.calls().len(),
                1,
                "{name}: the client's own call, once"
            );
            let texts: Vec<&Piece> = (answer.pieces.iter())
                .filter(|p| matches!(p, Piece::Text(_)))
                .collect();
            let expected = match calls {
                2 => vec![
                    Piece::text("Let me look back."),
                    Piece::text("Running the tests."),
                ],
                _ => vec![Piece::text("Running the tests.")],
            };
            if wire.format == Format::OpenAi && calls == 2 {
                // Chat's one text: the rounds' as paragraphs.
                let joined = Piece::text("Let me look back.\n\nRunning the tests.");
                assert_eq!(texts, [&joined], "{name}");
            } else {
                assert_eq!(texts, expected.iter().collect::<Vec<_>>(), "{name}");
            }
        }
        let metrics = scrape(&session.proxy.url("/metrics"));
        // The client's own requests, the recall rounds aside, break the
        // provider's cache only at compactions: each starts with the whole
        // of the one before, byte for byte (its list grown at its end,
        // every other byte the same) unless it compacted.
        let upstream = session.upstream.requests();
        let own: Vec<&Recorded> = (upstream.iter())
            .filter(|r| !rounds.iter().any(|(_, round)| round.raw == r.raw))
            .collect();
        let breaks = own
            .windows(2)
            .filter(|w| !raw::continues(&w[0].raw, &w[1].raw, key))
            .count();
        let compactions = metric(&metrics, "condense_proxy_compactions_total");
        assert!(compactions >= 1.0, "{name}");
        assert_eq!(
            breaks as f64, compactions,
            "{name}: breaks only at compactions"
        );
        let recalled = model.recalled.len() as f64;
        assert_eq!(
            metric(&metrics, "condense_proxy_recalls_total"),
            recalled,
            "{name}"
        );
        assert_eq!(
            metric(&metrics, "condense_proxy_recall_rounds_total"),
            rounds.len() as f64
        );
        assert!(metric(&metrics, "condense_proxy_recall_tokens_total") > 1000.0);
        assert_eq!(metric(&metrics, "condense_proxy_recall_errors_total"), 0.0);
        // What the provider billed, measured from the client's answers: every
        // round's usage, summed.
        let upstream_calls: u64 = session.calls.iter().map(|&c| c as u64).sum();
        let measured = |kind: &str| {
            let text = scrape(&session.proxy.url("/metrics"));
            let prefix = "condense_proxy_measured_tokens_total{";
            (text.lines())
                .filter(|l| l.starts_with(prefix) && l.contains(&format!("kind=\"{kind}\"")))
                .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                .sum::<f64>() as u64
        };
        let mut output = 0;
        for _ in 0..200 {
            output = measured("output");
            if output == USAGE.1 * upstream_calls {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        assert_eq!(output, USAGE.1 * upstream_calls, "{name}: output measured");
        let input = measured("uncached") + measured("cache_read") + measured("cache_write");
        assert_eq!(input, USAGE.0 * upstream_calls, "{name}: input measured");
    }
}

/// A recall can read only the conversation it is made in. Two sessions
/// through one proxy and one store: the first, once compacted, recalls
/// the fold its request names and gets what it folded; the second calls
/// that same handle, taken from the first's request as the upstream got
/// it (with a query and without) — each call gets a tool error naming the
/// handle, as a made-up handle, one that is not a handle at all and a
/// query over 1,000 characters do, and nothing of the first session
/// reaches the second's model or client. Each such recall is counted, and
/// each request's recalls appended to the proxy's events file.
#[test]
fn a_recall_reads_only_its_own_conversation() {
    for wire in [WIRES[0], WIRES[1]] {
        let name = wire.name();
        // The handles of the first session's request (none while the first
        // session runs: it recalls its own).
        let theirs: Arc<Mutex<Vec<String>>> = Arc::default();
        let told = theirs.clone();
        let recalled_own = Arc::new(Mutex::new(false));
        let script = Script {
            recalls: Arc::new(move |handles| {
                if handles.is_empty() {
                    return Vec::new();
                }
                let theirs = told.lock().unwrap().clone();
                if theirs.is_empty() {
                    // The first session: its own fold, once.
                    let mut once = recalled_own.lock().unwrap();
                    let fold = handles.iter().find(|h| h.starts_with('f'));
                    return match (*once, fold) {
                        (false, Some(fold)) => {
                            *once = true;
                            vec![json!({"handle": fold})]
                        }
                        _ => Vec::new(),
                    };
                }
                let fold = &theirs[0];
                vec![
                    json!({"handle": "f0123456789a"}),
                    json!({"handle": "nonsense"}),
                    json!({"handle": fold}),
                    json!({"handle": fold, "query": "KEY"}),
                    json!({"handle": handles[0], "query": "word ".repeat(300)}),
                ]
            }),
            ..Script::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let events = dir.path().join("events.jsonl");
        let mut session = Session::new(wire, script, |upstream| {
            let store = Arc::new(MemorySessions::default());
            let mut proxy = RunningProxy::settings(RECALL_CONFIG, upstream, store);
            proxy.events = Some(condense_host::events::EventLog::open(&events).unwrap());
            RunningProxy::serve(proxy)
        });

        // The first session: its key in the first message, which it folds.
        let mut start = worked(3);
        let notes: String = (0..150)
            .map(|i| format!("note {i}: the old key is revoked on host {i}\n"))
            .collect();
        start[0] = Turn::User(format!(
            "Rotate the deploy key; the new one is KEY-9999.\n{notes}"
        ));
        session.play(&start, 1);
        assert_eq!(session.calls, [2], "{name}: a recall round");
        let first = session.upstream.requests();
        // Its fold's handle, as its compacted request named it upstream.
        let named = named_handles(&first[0].body);
        let Some(fold) = named.iter().find(|h| h.starts_with('f')).cloned() else {
            panic!("{name}: the first session's request names {named:?}")
        };
        {
            let model = lock(&session.model);
            assert!(model.problems.is_empty(), "{name}: {:#?}", model.problems);
            let [own] = model.recalled.as_slice() else {
                panic!("{name}: {:?}", model.recalled)
            };
            assert_eq!(own.input["handle"], fold.as_str(), "{name}");
            assert!(!own.is_error, "{name}: {}", own.content);
            assert!(
                own.content.contains("KEY-9999"),
                "{name}: its own recall reads what it folded: {}",
                own.content
            );
        }

        // The second session, through the same proxy and store.
        *theirs.lock().unwrap() = vec![fold.clone()];
        session.play(&[Turn::User(TASK.into())], 4);
        assert_eq!(session.calls[1..], [1, 1, 1, 2], "{name}: a recall round");
        let model = lock(&session.model);
        assert!(model.problems.is_empty(), "{name}: {:#?}", model.problems);
        let got: Vec<(&str, bool)> = (model.recalled[1..].iter())
            .map(|r| (r.content.as_str(), r.is_error))
            .collect();
        assert_eq!(got.len(), 5, "{name}");
        let unknown = |handle: &str| {
            format!(
                "no folded messages and no cleared result of this conversation have the handle `{handle}`"
            )
        };
        let expected = [
            &unknown("f0123456789a"),
            "`nonsense` is not a condense handle",
            &unknown(&fold),
            &unknown(&fold),
            "a query of 1499 characters: at most 1000",
        ];
        for ((content, is_error), expected) in got.iter().zip(expected) {
            assert!(is_error, "{name}: {content}");
            assert!(
                content.contains(expected),
                "{name}: {content}\nlacks {expected}"
            );
            assert!(!content.contains("KEY-9999"), "{name}: {content}");
        }
        for request in &session.upstream.requests()[first.len()..] {
            assert!(
                !String::from_utf8_lossy(&request.raw).contains("KEY-9999"),
                "{name}: the second session's request carries the first's key"
            );
        }
        for (_, text) in &session.answers[1..] {
            assert!(!text.contains("KEY-9999"), "{name}: {text}");
        }
        let metrics = scrape(&session.proxy.url("/metrics"));
        assert_eq!(metric(&metrics, "condense_proxy_recall_errors_total"), 5.0);
        assert_eq!(metric(&metrics, "condense_proxy_recalls_total"), 1.0);
        drop(model);
        drop(session);
        let lines = std::fs::read_to_string(&events).unwrap();
        let recalls: Vec<Value> = (lines.lines())
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter_map(|e| e.get("recall").cloned())
            .collect();
        let [own, other] = recalls.as_slice() else {
            panic!("{name}: two requests with recalls:\n{lines}")
        };
        for (recall, errors, handles) in [(own, 0, 1), (other, 5, 5)] {
            assert_eq!(recall["agent"], "default");
            assert_eq!(
                (&recall["rounds"], &recall["errors"]),
                (&json!(1), &json!(errors))
            );
            assert_eq!(recall["handles"].as_array().unwrap().len(), handles);
            assert!(recall["session"].as_str().is_some_and(|s| !s.is_empty()));
        }
        assert_ne!(own["session"], other["session"], "{name}: two sessions");
    }
}

/// A recall call after a call of the client's own tools cannot be answered
/// (the answer goes to the client to run its call): it is dropped, the
/// client gets its own call (and what came before and after it), and the
/// upstream is not called again.
#[test]
fn a_recall_after_a_client_call_is_dropped() {
    for wire in WIRES {
        let name = wire.name();
        let script = Script {
            client_call_first: true,
            ..Script::default()
        };
        let session = Session::run(wire, RECALL_CONFIG, script, 5);
        assert!(
            session.calls.iter().all(|&c| c == 1),
            "{name}: {:?}",
            session.calls
        );
        let recalled = session
            .answers
            .iter()
            .filter(|(a, _)| a.pieces.contains(&Piece::text("Let me look back.")));
        let mut answers = 0;
        for (answer, _) in recalled {
            answers += 1;
            let calls = answer.calls();
            assert_eq!(calls.len(), 1, "{name}: {answer:?}");
            assert_eq!(calls[0].1, condense_tests::proxy::wire::SHELL);
            // A response is `completed` with calls or without.
            if wire.format != Format::Responses {
                assert_ne!(
                    answer.stop,
                    wire.plain_stop(),
                    "{name}: it asks for its call"
                );
            }
        }
        assert!(answers >= 1, "{name}");
        assert_valid_requests(&session);
        let dropped = lock(&session.model).asked.len();
        let metrics = scrape(&session.proxy.url("/metrics"));
        assert_eq!(
            metric(&metrics, "condense_proxy_recalls_dropped_total"),
            dropped as f64
        );
        assert_eq!(metric(&metrics, "condense_proxy_recall_rounds_total"), 0.0);
    }
}

/// `[recall] mode = "off"` keeps the requests as they were: the same
/// sessions compact (and clear results) in every protocol, and no request
/// the upstream gets names a handle or carries the tool.
#[test]
fn recall_off_keeps_the_requests_as_they_were() {
    let config = format!("{RECALL_CONFIG}mode = \"off\"\n");
    for wire in WIRES {
        let name = wire.name();
        let session = Session::run(wire, &config, Script::default(), 10);
        let requests = session.upstream.requests();
        let metrics = scrape(&session.proxy.url("/metrics"));
        let compactions = metric(&metrics, "condense_proxy_compactions_total");
        assert!(compactions >= 1.0, "{name}: compacted");
        let cleared = |r: &Recorded| r.body.to_string().contains("result cleared");
        assert!(requests.iter().any(cleared), "{name}: a result cleared");
        for request in &requests {
            let text = request.body.to_string();
            assert!(!text.contains("condense_recall"), "{name}: {text}");
        }
        assert_eq!(
            session.calls.iter().sum::<usize>(),
            requests.len(),
            "{name}"
        );
    }
}

/// A model that recalls in every round gets `[recall] max_rounds` more
/// calls and no more: the last round's recall calls are dropped and the
/// client's answer ends there, plainly, with every round's text and usage.
#[test]
fn recall_rounds_are_bounded() {
    let config = format!("{RECALL_CONFIG}max_rounds = 2\n");
    for wire in WIRES {
        let name = wire.name();
        let script = Script {
            again: true,
            ..Script::default()
        };
        let session = Session::run(wire, &config, script, 4);
        assert_eq!(session.calls, [1, 1, 1, 3], "{name}");
        let model = lock(&session.model);
        assert!(model.problems.is_empty(), "{name}: {:#?}", model.problems);
        let (answer, _) = &session.answers[3];
        assert_eq!(answer.stop, wire.plain_stop(), "{name}");
        assert!(answer.calls().is_empty(), "{name}");
        assert_eq!(answer.usage, (USAGE.0 * 3, USAGE.1 * 3), "{name}");
        let text: String = (answer.pieces.iter())
            .filter_map(|p| match p {
                Piece::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            text.matches("Let me look back.").count(),
            3,
            "{name}: {text}"
        );
        assert_valid_requests(&session);
        let metrics = scrape(&session.proxy.url("/metrics"));
        assert_eq!(metric(&metrics, "condense_proxy_recall_rounds_total"), 2.0);
        assert!(metric(&metrics, "condense_proxy_recalls_dropped_total") >= 1.0);
    }
}

/// An upstream that fails in a later round (here a 529, overloaded) does
/// not leave the client with half an answer: it gets what the first round
/// gave before its recall calls, ended plainly, and the failure is counted.
#[test]
fn a_later_round_that_fails_ends_the_answer_validly() {
    for wire in WIRES {
        let name = wire.name();
        let overloaded = r#"{"type":"error","error":{"type":"overloaded_error"}}"#;
        let script = Script {
            failing: Some(Reply::json(529, overloaded)),
            ..Script::default()
        };
        let session = Session::run(wire, RECALL_CONFIG, script, 4);
        assert_eq!(session.calls, [1, 1, 1, 2], "{name}");
        let (answer, text) = &session.answers[3];
        assert!(!text.contains("overloaded"), "{name}: {text}");
        assert_eq!(answer.stop, wire.plain_stop(), "{name}");
        assert_eq!(answer.usage, USAGE, "{name}");
        assert_eq!(
            answer.pieces.last(),
            Some(&Piece::text("Let me look back.")),
            "{name}"
        );
        let metrics = scrape(&session.proxy.url("/metrics"));
        assert_eq!(
            metric(&metrics, "condense_proxy_recall_failures_total"),
            1.0
        );
    }
}

/// The client of [`the_official_sdks_read_an_answer_with_recalls_as_one`]:
/// one streamed request of the protocol named, read by the SDK's own
/// accumulator (Anthropic's `messages.stream`, OpenAI's chat stream state
/// and `responses.stream`), which fails on a stream that is not one
/// well-formed message; the message it put together is written out.
const SDK_RECALL_CLIENT: &str = r#"
import json, sys
import anthropic, openai
from openai.lib.streaming.chat import ChatCompletionStreamState

proxy, protocol, body_path, out = sys.argv[1:5]
body = json.load(open(body_path))
body.pop("stream", None)
key = "sk-test-0123456789"
if protocol == "anthropic":
    client = anthropic.Anthropic(base_url=proxy, api_key=key, max_retries=0)
    with client.messages.stream(**body) as stream:
        final = stream.get_final_message()
elif protocol == "openai":
    client = openai.OpenAI(base_url=proxy + "/v1", api_key=key, max_retries=0)
    state = ChatCompletionStreamState()
    for chunk in client.chat.completions.create(stream=True, **body):
        state.handle_chunk(chunk)
    final = state.get_final_completion()
else:
    client = openai.OpenAI(base_url=proxy + "/v1", api_key=key, max_retries=0)
    with client.responses.stream(**body) as stream:
        final = stream.get_final_response()
open(out, "w").write(final.model_dump_json())
"#;

/// The official Python SDKs stream an answer whose model recalled, in each
/// protocol, and read one message: the first round's text, then the
/// second's and the client's call, the usage of both rounds, no recall.
#[test]
fn the_official_sdks_read_an_answer_with_recalls_as_one() {
    let Some(python) = required_python(&["openai", "anthropic"]) else {
        return;
    };
    for wire in WIRES.into_iter().filter(|w| w.streamed) {
        let name = wire.name();
        let session = Session::new(wire, Script::default(), |upstream| {
            RunningProxy::in_memory(RECALL_CONFIG, upstream)
        });
        let body = wire.request(&worked(4));
        session.client_sends(&body);
        let dir = tempfile::tempdir().unwrap();
        let (script, body_path, out) = (
            dir.path().join("client.py"),
            dir.path().join("body.json"),
            dir.path().join("out.json"),
        );
        std::fs::write(&script, SDK_RECALL_CLIENT).unwrap();
        std::fs::write(&body_path, body.to_string()).unwrap();
        let run = Command::new(&python)
            .arg(&script)
            .arg(session.proxy.url(""))
            .arg(wire.format.name())
            .arg(&body_path)
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{name}: the SDK failed:\n{stderr}");
        assert_eq!(
            session.upstream.requests().len(),
            2,
            "{name}: a recall round"
        );
        assert!(lock(&session.model).problems.is_empty(), "{name}");
        let got = std::fs::read_to_string(&out).unwrap();
        assert!(
            !got.contains(condense_model::recall::TOOL_NAME),
            "{name}: {got}"
        );
        let got: Value = serde_json::from_str(&got).unwrap();
        let text = got.to_string();
        let (first, second) = (
            text.find("Let me look back.").expect("round 1's text"),
            text.find("Running the tests.").expect("round 2's text"),
        );
        assert!(first < second, "{name}: {got}");
        assert!(
            text.contains("cargo test 2"),
            "{name}: the client's call: {got}"
        );
        let input = match wire.format {
            Format::OpenAi => &got["usage"]["prompt_tokens"],
            _ => &got["usage"]["input_tokens"],
        };
        assert_eq!(input, &json!(USAGE.0 * 2), "{name}: {got}");
    }
}

/// A request that carries `condense_recall` and an answer that does not
/// call it: the client gets the upstream's answer as it came — a real
/// Claude Code stream and a JSON body, whitespace and all, byte for byte;
/// an error status with its body — and a stream event by event as it
/// arrives: the upstream sends the rest only once the client has read the
/// first event.
#[test]
fn an_answer_without_recalls_reaches_the_client_as_it_came() {
    let sse = std::fs::read_to_string(
        corpus_dir().join("api/anthropic_claude-code-1.0.6_sonnet-4_main_turn.response.sse.txt"),
    )
    .unwrap();
    let json_answer = "{\n  \"id\": \"msg_1\",  \"type\": \"message\", \"content\": []\n}\n";
    let overloaded = r#"{"type":"error","error":{"type":"overloaded_error"}}"#;
    let gate = condense_scripted_server::Gate::default();
    let first = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n".to_owned();
    let rest = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".to_owned();
    let upstream = TestServer::start([
        Reply::Answer {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: sse.clone(),
        },
        Reply::json(200, json_answer),
        Reply::json(529, overloaded),
        Reply::Streamed {
            first: first.clone(),
            gate: gate.clone(),
            rest: rest.clone(),
        },
    ]);
    let proxy = RunningProxy::in_memory(RECALL_CONFIG, &upstream.url(""));
    let wire = WIRES[0];
    let body = wire.request(&worked(4)).to_string();
    let client: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let send = || {
        client
            .post(&proxy.url("/v1/messages"))
            .header("x-api-key", KEY)
            .header("accept-encoding", "gzip")
            .send(&body)
            .unwrap()
    };
    let read = |mut answer: ureq::http::Response<ureq::Body>| {
        (
            answer.status().as_u16(),
            answer.body_mut().read_to_string().unwrap(),
        )
    };
    assert_eq!(read(send()), (200, sse));
    assert_eq!(read(send()), (200, json_answer.to_owned()));
    assert_eq!(read(send()), (529, overloaded.to_owned()));
    let mut reader = send().into_body().into_reader();
    let mut got = vec![0; first.len()];
    std::io::Read::read_exact(&mut reader, &mut got).unwrap();
    assert_eq!(got, first.as_bytes());
    gate.open();
    let mut tail = Vec::new();
    std::io::Read::read_to_end(&mut reader, &mut tail).unwrap();
    assert_eq!(tail, rest.as_bytes());
    assert_eq!(gate.opened_in_time(), Some(true));
    for request in upstream.requests() {
        let tools = request.body["tools"].to_string();
        assert!(
            tools.contains(condense_model::recall::TOOL_NAME),
            "recall offered"
        );
        assert!(request.header("accept-encoding").is_none());
    }
}

/// The provider's own usage, read from its answers as they pass: for each
/// protocol, plain and streamed, what the scripted upstream reported is what
/// `/metrics` counts, by model, and the client gets the upstream's bytes
/// untouched. An answer without usage, a malformed usage block and a stream
/// that never completes its usage count as unknown, never as tokens.
#[test]
fn the_providers_usage_is_measured_and_the_answer_untouched() {
    let sse = |body: &str| Reply::Answer {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        body: body.to_owned(),
    };
    let anthropic_plain = r#"{"type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":11,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":40}}"#;
    let anthropic_stream = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":5,\"cache_creation_input_tokens\":100,\"cache_read_input_tokens\":1000,\"output_tokens\":1}}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n",
        "event: message_delta\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":20}}\n\n",
        "event: message_stop\n",
        "data: {\"type\":\"message_stop\"}\n\n",
    );
    let chat_plain = r#"{"choices":[{"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":700,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":512}}}"#;
    let chat_stream = concat!(
        "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}],\"usage\":null}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":300,\"completion_tokens\":3,\"prompt_tokens_details\":{\"cached_tokens\":256}}}\n\n",
        "data: [DONE]\n\n",
    );
    let responses_plain = r#"{"object":"response","output":[],"usage":{"input_tokens":90,"input_tokens_details":{"cached_tokens":64},"output_tokens":9}}"#;
    let responses_stream = concat!(
        "event: response.completed\n",
        "data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":50,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":5}}}\n\n",
    );
    let replies = [
        (
            Format::Anthropic,
            "claude-m",
            Reply::json(200, anthropic_plain),
            anthropic_plain,
        ),
        (
            Format::Anthropic,
            "claude-m",
            sse(anthropic_stream),
            anthropic_stream,
        ),
        (
            Format::OpenAi,
            "gpt-chat",
            Reply::json(200, chat_plain),
            chat_plain,
        ),
        (Format::OpenAi, "gpt-chat", sse(chat_stream), chat_stream),
        (
            Format::Responses,
            "gpt-resp",
            Reply::json(200, responses_plain),
            responses_plain,
        ),
        (
            Format::Responses,
            "gpt-resp",
            sse(responses_stream),
            responses_stream,
        ),
        // Unknown: no usage; a malformed one; a stream cut before its usage.
        (
            Format::Anthropic,
            "claude-u",
            Reply::json(200, r#"{"content":[]}"#),
            r#"{"content":[]}"#,
        ),
        (
            Format::OpenAi,
            "gpt-u",
            Reply::json(200, r#"{"usage":{"prompt_tokens":"many"}}"#),
            r#"{"usage":{"prompt_tokens":"many"}}"#,
        ),
        (
            Format::Anthropic,
            "claude-u",
            sse(&anthropic_stream[..anthropic_stream.find("event: message_delta").unwrap()]),
            &anthropic_stream[..anthropic_stream.find("event: message_delta").unwrap()],
        ),
    ];
    let upstream = TestServer::start(replies.iter().map(|(_, _, reply, _)| reply.clone()));
    let proxy = RunningProxy::in_memory("token_threshold = 100000\n", &upstream.url(""));
    let client = ureq::Agent::new_with_defaults();
    for (i, (format, model, _, sent)) in replies.iter().enumerate() {
        let body = match format {
            Format::Anthropic => {
                json!({"model": model, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]})
            }
            Format::OpenAi => {
                json!({"model": model, "messages": [{"role": "user", "content": "hi"}]})
            }
            Format::Responses => {
                json!({"model": model, "input": [{"role": "user", "content": "hi"}]})
            }
        };
        // A session each, to find each call's record by.
        let mut answer = client
            .post(&proxy.url(format.endpoint_path()))
            .header("content-type", "application/json")
            .header("x-condense-session", format!("u{i}"))
            .send(body.to_string().as_bytes())
            .unwrap();
        let got = answer.body_mut().read_to_vec().unwrap();
        assert_eq!(
            got,
            sent.as_bytes(),
            "{format:?} {model}: the answer changed"
        );
    }
    let tokens = |text: &str, model: &str, kind: &str| {
        metric(
            text,
            &format!("condense_proxy_measured_tokens_total{{model=\"{model}\",kind=\"{kind}\"}}"),
        )
    };
    let unknown = |text: &str, model: &str| {
        metric(
            text,
            &format!("condense_proxy_measured_unknown_total{{model=\"{model}\"}}"),
        )
    };
    // Each answer's figure is counted once it has passed: wait for the last.
    let mut text = scrape(&proxy.url("/metrics"));
    for _ in 0..100 {
        if unknown(&text, "claude-u") == 2.0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        text = scrape(&proxy.url("/metrics"));
    }
    let expected = [
        (
            "claude-m",
            [
                ("cache_read", 4000.0),
                ("cache_write", 300.0),
                ("uncached", 16.0),
                ("output", 60.0),
            ],
        ),
        (
            "gpt-chat",
            [
                ("cache_read", 768.0),
                ("cache_write", 0.0),
                ("uncached", 232.0),
                ("output", 10.0),
            ],
        ),
        (
            "gpt-resp",
            [
                ("cache_read", 64.0),
                ("cache_write", 0.0),
                ("uncached", 76.0),
                ("output", 14.0),
            ],
        ),
    ];
    for (model, kinds) in expected {
        for (kind, value) in kinds {
            assert_eq!(tokens(&text, model, kind), value, "{model} {kind}\n{text}");
        }
        assert_eq!(unknown(&text, model), 0.0, "{model}");
    }
    assert_eq!(unknown(&text, "claude-u"), 2.0, "{text}");
    assert_eq!(unknown(&text, "gpt-u"), 1.0, "{text}");
    assert_eq!(tokens(&text, "claude-u", "output"), 0.0);
    // The measured calls priced, beside their estimate uncompressed; the
    // unknown ones in neither.
    let usd = |name: &str, model: &str| metric(&text, &format!("{name}{{model=\"{model}\"}}"));
    for model in ["claude-m", "gpt-chat", "gpt-resp"] {
        assert!(
            usd("condense_proxy_measured_cost_usd_total", model) > 0.0,
            "{text}"
        );
        assert!(usd("condense_proxy_estimated_uncompressed_usd_total", model) > 0.0);
    }
    assert_eq!(usd("condense_proxy_measured_cost_usd_total", "gpt-u"), 0.0);
    // Each call's session record and page show what its answer said:
    // (cache read, cache write, uncached, output), or unknown.
    let said: [Option<[u64; 4]>; 9] = [
        Some([3000, 200, 11, 40]),
        Some([1000, 100, 5, 20]),
        Some([512, 0, 188, 7]),
        Some([256, 0, 44, 3]),
        Some([64, 0, 26, 9]),
        Some([0, 0, 50, 5]),
        None,
        None,
        None,
    ];
    let kinds = ["cache_read", "cache_write", "uncached", "output"];
    for (i, said) in said.iter().enumerate() {
        let group = format!("default/session/u{i}");
        let view = wait_for_calls(&proxy, &group, 1);
        let call = &view["calls"][0];
        let page = page_of(&proxy, &format!("/ui/sessions/{group}"));
        match said {
            Some(tokens) => {
                for (kind, n) in kinds.iter().zip(tokens) {
                    assert_eq!(call["usage"][kind], json!(n), "u{i} {kind}: {call}");
                    let cell = format!("<td data-usage=\"{kind}\">{n}</td>");
                    assert!(page.contains(&cell), "u{i}: no {cell} in\n{page}");
                }
                assert!(call["cost"]["input_usd"].as_f64().unwrap() > 0.0, "{call}");
            }
            None => {
                assert_eq!(call.get("usage"), None, "u{i}: {call}");
                assert_eq!(call.get("cost"), None, "u{i}: {call}");
                assert!(page.contains("data-usage=\"unknown\""), "u{i}: {page}");
            }
        }
    }
}
