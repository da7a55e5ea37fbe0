//! `condense proxy` in front of a fake upstream (the scripted server, on
//! 127.0.0.1; it records what arrives): driven with curl and with an HTTP
//! client, every request through the embedded components.

use condense::settings::ConfigFile;
use condense_host::sessions::{DbSessions, MemorySessions, SessionStore};
use condense_model::SUMMARY_MARKER;
use condense_proxy::{Proxy, Routes};
use condense_scripted_server::{Recorded, Reply, TestServer};
use condense_tests::corpus_dir;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::thread::JoinHandle;

/// A proxy served on 127.0.0.1 by a thread of its own until dropped.
struct RunningProxy {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl RunningProxy {
    /// The proxy with `config` (TOML) in front of `upstream` for both
    /// protocols, its checkpoints in `store`.
    fn start(config: &str, upstream: &str, store: Arc<dyn SessionStore>) -> RunningProxy {
        let file = ConfigFile::parse(config).unwrap();
        let proxy = Proxy {
            agents: condense::proxy::agents(Some(&file)).unwrap(),
            store,
            routes: Routes {
                anthropic_upstream: upstream.to_owned(),
                openai_upstream: upstream.to_owned(),
                token: None,
            },
            max_request_bytes: 64 << 20,
            compress_slots: 2,
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                condense_proxy::serve(listener, proxy, async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
            });
        });
        RunningProxy {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for RunningProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn corpus_body(name: &str) -> Value {
    let path = corpus_dir()
        .join("anthropic")
        .join(format!("{name}.request.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

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

const KEY: &str = "sk-ant-test-0123456789";

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
    let proxy = RunningProxy::start(
        "token_threshold = 4000\n",
        &upstream.url(""),
        Arc::new(MemorySessions::default()),
    );
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
    // The same request again: the same compressed request (the checkpoint).
    assert_eq!(requests[1].body, sent.body);

    // Another path: forwarded as it came.
    let count = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let counted = curl(
        &proxy.url("/v1/messages/count_tokens"),
        &headers,
        count.to_string().as_bytes(),
    );
    assert_eq!(counted, br#"{"input_tokens": 12}"#);
    assert_eq!(upstream.requests()[2].body, count);
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
    let nowhere = RunningProxy::start(
        "",
        "http://127.0.0.1:9",
        Arc::new(MemorySessions::default()),
    );
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
/// call by call through the proxy, interleaved: each keeps its own
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
    let calls: Vec<Vec<usize>> = sessions
        .iter()
        .map(|(_, messages)| {
            (1..messages.len())
                .filter(|&k| messages[k]["role"] == "assistant")
                .collect()
        })
        .collect();

    let dir = tempfile::tempdir().unwrap();
    let stores: [(&str, Arc<dyn SessionStore>); 2] = [
        ("memory", Arc::new(MemorySessions::default())),
        (
            "database",
            Arc::new(DbSessions::open(&dir.path().join("checkpoints.redb")).unwrap()),
        ),
    ];
    for (named, (store_name, store)) in [(true, stores[0].clone()), (false, stores[1].clone())] {
        let upstream = TestServer::answering(|_| Reply::json(200, r#"{"content": []}"#));
        let proxy = RunningProxy::start("token_threshold = 40000\n", &upstream.url(""), store);
        let client = ureq::Agent::new_with_defaults();
        let longest = calls.iter().map(Vec::len).max().unwrap();
        for i in 0..longest {
            for (s, (name, messages)) in sessions.iter().enumerate() {
                let Some(&k) = calls[s].get(i) else { continue };
                let body = json!({
                    "model": "claude-opus-4",
                    "max_tokens": 1000,
                    "system": system,
                    "messages": messages[..k],
                });
                let mut request = client
                    .post(&proxy.url("/v1/messages"))
                    .header("x-api-key", KEY)
                    .header("anthropic-version", "2023-06-01")
                    // Which session it is, for the test's count below.
                    .header("x-test-session", *name);
                if named {
                    request = request.header("x-condense-session", *name);
                }
                let answer = request.send(body.to_string()).unwrap();
                assert_eq!(answer.status(), 200);
            }
        }
        let requests = upstream.requests();
        for (name, _) in &sessions {
            let sent: Vec<&Recorded> = requests
                .iter()
                .filter(|r| r.header("x-test-session") == Some(*name))
                .collect();
            let breaks = cache_breaks(&sent);
            let compacted = sent
                .iter()
                .filter(|r| r.body["messages"].to_string().contains(SUMMARY_MARKER))
                .count();
            let label = format!("session {name}, named {named}, {store_name} store");
            assert!(
                compacted > sent.len() / 2,
                "{label}: {compacted} of {} compacted",
                sent.len()
            );
            assert!(
                (1..=6).contains(&breaks),
                "{label}: {breaks} cache breaks over {} calls",
                sent.len()
            );
        }
    }
}

/// Calls whose request does not start with the whole request before it:
/// the same system prompt, and the messages before as a prefix.
fn cache_breaks(requests: &[&Recorded]) -> usize {
    requests
        .windows(2)
        .filter(|pair| {
            let (before, now) = (&pair[0].body, &pair[1].body);
            let (b, n) = (
                before["messages"].as_array().unwrap(),
                now["messages"].as_array().unwrap(),
            );
            before["system"] != now["system"] || n.len() < b.len() || n[..b.len()] != b[..]
        })
        .count()
}

/// A Python with the official `openai` and `anthropic` SDKs:
/// `$CONDENSE_PYTHON` (`.ci/run` sets it to its virtual environment's),
/// else `python3` if it has both. `Err` says why there is none: the test
/// then passes saying so, unless `CONDENSE_REQUIRE_PYTHON=1` (CI).
fn python_with_sdks() -> Result<std::path::PathBuf, String> {
    let python = std::env::var_os("CONDENSE_PYTHON").map_or_else(|| "python3".into(), Into::into);
    let found = Command::new(&python)
        .args(["-c", "import openai, anthropic"])
        .output()
        .map_err(|e| format!("{}: {e}", std::path::Path::new(&python).display()))?;
    if found.status.success() {
        Ok(python)
    } else {
        Err(format!(
            "{} has no openai and anthropic packages (pip install openai anthropic)",
            std::path::Path::new(&python).display()
        ))
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
    let python = match python_with_sdks() {
        Ok(python) => python,
        Err(why) if std::env::var("CONDENSE_REQUIRE_PYTHON").as_deref() == Ok("1") => {
            panic!("CONDENSE_REQUIRE_PYTHON=1, but {why}")
        }
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
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
    let proxy = RunningProxy::start(
        "token_threshold = 4000\n",
        &upstream.url(""),
        Arc::new(MemorySessions::default()),
    );
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
    let proxy = RunningProxy::start(
        "token_threshold = 4000\n",
        &upstream.url(""),
        Arc::new(MemorySessions::default()),
    );
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
    assert_eq!(after[after.len() - 2..], before[before.len() - 2..]);
    assert_eq!(sent["instructions"], body["instructions"]);
    assert_eq!(sent["tools"], body["tools"]);
    assert_eq!(requests[1].body, short);
}
