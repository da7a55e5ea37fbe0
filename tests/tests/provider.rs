//! condense beside what providers already do: a compaction the provider made
//! itself (Anthropic's `compaction` block, OpenAI Responses' `compaction`
//! item) comes back in the client's history. The provider reads nothing
//! before it; condense neither counts, folds nor rewrites it or what came
//! before, and its own fold goes after it.

use condense_host::formats::Format;
use condense_host::formats::compaction::provider_compaction_end;
use condense_model::{Role, SUMMARY_MARKER};
use condense_proxy::edits::ContextEdits;
use condense_scripted_server::{Reply, TestServer};
use condense_tests::proxy::{
    RunningProxy, SESSION_CONFIG, named_group, rendered_session, request_tokens, sse,
    wait_for_calls,
};
use serde_json::{Value, json};

/// The corpus session the tests replay, and where in its messages the
/// provider compacts: past condense's first compaction, so that its
/// requests carry the recall tool and the answer goes through the recall
/// loop's reader; early enough that condense compacts again after it.
const SESSION: &str = "cc-opus-c";
const AT_SHARE: f64 = 0.45;

/// How the provider's answer that carries its compaction comes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer {
    Plain,
    Streamed,
}

/// A session's requests in `format` with the provider's compaction in the
/// answer to request `at` (its first output), and each request as the
/// client sends it: the list up to each of the model's turns.
struct Scripted {
    /// The whole list, the compaction in it.
    list: Vec<Value>,
    /// Where the compaction is in `list`.
    at: usize,
    /// The top-level fields of every request beside the list.
    head: Value,
    format: Format,
}

impl Scripted {
    fn new(format: Format) -> Scripted {
        let (instructions, mut list) = rendered_session(SESSION, format);
        let turn = |v: &Value| match format {
            Format::Anthropic => v["role"] == "assistant",
            _ => {
                v["role"] == "assistant"
                    || v["type"] == "function_call"
                    || v["type"] == "custom_tool_call"
            }
        };
        // The first item of a model turn at or after the share.
        let mut at = (list.len() as f64 * AT_SHARE) as usize;
        while !turn(&list[at]) || turn(&list[at - 1]) {
            at += 1;
        }
        let head = match format {
            Format::Anthropic => {
                // The block opens the assistant message, before its content.
                let block = json!({"type": "compaction",
                    "content": "Summary of the session so far: the parser fix, the failing test."});
                let content = match list[at]["content"].take() {
                    Value::String(text) => vec![json!({"type": "text", "text": text})],
                    Value::Array(blocks) => blocks,
                    other => panic!("content {other}"),
                };
                list[at]["content"] = Value::Array([vec![block], content].concat());
                json!({"model": "claude-opus-4", "max_tokens": 1000, "system": instructions})
            }
            _ => {
                let item = json!({"type": "compaction", "id": "cmp_01",
                    "encrypted_content": "gAAAAABpZ-provider-only-0123456789"});
                list.insert(at, item);
                json!({"model": "gpt-5", "instructions": instructions})
            }
        };
        Scripted {
            list,
            at,
            head,
            format,
        }
    }

    /// The request ending before list item `end`.
    fn request(&self, end: usize) -> Value {
        let mut body = self.head.clone();
        body[self.format.list_key()] = Value::Array(self.list[..end].to_vec());
        body
    }

    /// The requests: one before each model turn.
    fn ends(&self) -> Vec<usize> {
        let assistant = |v: &Value| {
            v["role"] == "assistant" || v["type"] == "function_call" || v["type"] == "compaction"
        };
        (1..self.list.len())
            .filter(|&k| assistant(&self.list[k]) && !assistant(&self.list[k - 1]))
            .collect()
    }

    /// The provider's answer to the request before the compaction: the
    /// compaction first, then a word.
    fn answer(&self, answer: Answer) -> Reply {
        let compaction = match self.format {
            Format::Anthropic => self.list[self.at]["content"][0].clone(),
            _ => self.list[self.at].clone(),
        };
        match (self.format, answer) {
            (Format::Anthropic, Answer::Plain) => Reply::json(
                200,
                json!({"id": "msg_c", "type": "message", "role": "assistant",
                    "content": [compaction, {"type": "text", "text": "Going on."}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 30000, "output_tokens": 900}})
                .to_string(),
            ),
            (Format::Anthropic, Answer::Streamed) => sse(&[
                json!({"type": "message_start", "message": {"id": "msg_c", "type": "message",
                    "role": "assistant", "content": [],
                    "usage": {"input_tokens": 30000, "output_tokens": 1}}}),
                json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "compaction", "content": ""}}),
                json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "compaction_delta", "content": compaction["content"]}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "content_block_start", "index": 1,
                    "content_block": {"type": "text", "text": ""}}),
                json!({"type": "content_block_delta", "index": 1,
                    "delta": {"type": "text_delta", "text": "Going on."}}),
                json!({"type": "content_block_stop", "index": 1}),
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                    "usage": {"output_tokens": 900}}),
                json!({"type": "message_stop"}),
            ]),
            (_, Answer::Plain) => Reply::json(
                200,
                json!({"id": "resp_c", "object": "response", "status": "completed",
                    "output": [compaction],
                    "usage": {"input_tokens": 30000, "output_tokens": 900}})
                .to_string(),
            ),
            (_, Answer::Streamed) => sse(&[
                json!({"type": "response.created", "response": {"id": "resp_c", "output": []}}),
                json!({"type": "response.output_item.done", "output_index": 0, "item": compaction}),
                json!({"type": "response.completed", "response": {"id": "resp_c",
                    "status": "completed", "output": [compaction],
                    "usage": {"input_tokens": 30000, "output_tokens": 900}}}),
            ]),
        }
    }

    /// A plain answer to every other request: a word, with usage.
    fn plain(&self) -> Reply {
        let body = match self.format {
            Format::Anthropic => json!({"type": "message", "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
                "usage": {"input_tokens": 10, "output_tokens": 1}}),
            _ => json!({"object": "response", "status": "completed", "output": [],
                "usage": {"input_tokens": 10, "output_tokens": 1}}),
        };
        Reply::json(200, body.to_string())
    }
}

/// A session whose provider compacts partway, through the proxy: the answer
/// that carries the compaction reaches the client byte for byte; every later
/// request reaches the upstream with the compaction and all before it as
/// the client sent them (JSON, and the compaction's own bytes), condense's
/// summary, when there is one, after it; condense compacts again after it;
/// and the tokens it counts for those requests are those of what follows
/// the compaction, not of what the provider no longer reads.
fn the_providers_compaction_is_kept_and_not_counted(format: Format, answer: Answer) {
    let what = format!("{format:?} {answer:?}");
    let script = Scripted::new(format);
    let ends = script.ends();
    let before = *ends.iter().find(|&&k| k >= script.at).unwrap();
    assert_eq!(
        before, script.at,
        "{what}: the compaction opens a model turn"
    );
    let reply = (script.answer(answer), script.plain());
    let compaction_request = ends.iter().position(|&k| k == script.at).unwrap();
    let mut n = 0;
    let upstream = TestServer::answering(move |_| {
        n += 1;
        match n - 1 {
            i if i == compaction_request => reply.0.clone(),
            _ => reply.1.clone(),
        }
    });
    let proxy = RunningProxy::in_memory(SESSION_CONFIG, &upstream.url(""));
    let client = ureq::Agent::new_with_defaults();
    let session = format!("provider-{format:?}-{answer:?}");
    for (i, &end) in ends.iter().enumerate() {
        let mut sent = client
            .post(&proxy.url(format.endpoint_path()))
            .header("x-api-key", condense_tests::proxy::KEY)
            .header("x-condense-session", &session)
            .send(script.request(end).to_string())
            .unwrap();
        let got = sent.body_mut().read_to_vec().unwrap();
        if i == compaction_request {
            let Reply::Answer { body, .. } = script.answer(answer) else {
                unreachable!("a scripted answer")
            };
            assert_eq!(got, body.as_bytes(), "{what}: the answer as it came");
        }
    }
    let key = format.list_key();
    let compaction = serde_json::to_string(&script.list[script.at]).unwrap();
    let requests = upstream.requests();
    let mut summaries_after = 0;
    for (request, &end) in requests.iter().zip(&ends) {
        let list = request.body[key].as_array().unwrap();
        if end <= script.at {
            continue;
        }
        assert!(
            list.len() > script.at && list[..=script.at] == script.list[..=script.at],
            "{what}: request of {end}: the provider's part folded or changed"
        );
        assert_eq!(
            list[..=script.at],
            script.list[..=script.at],
            "{what}: request of {end}: the provider's part as sent"
        );
        let raw = String::from_utf8_lossy(&request.raw);
        assert!(raw.contains(&compaction), "{what}: the compaction's bytes");
        if let Some(summary) = list
            .iter()
            .position(|m| m.to_string().contains(SUMMARY_MARKER))
        {
            assert!(
                summary > script.at,
                "{what}: a summary before the compaction"
            );
            summaries_after += 1;
        }
    }
    assert!(summaries_after > 0, "{what}: condense compacted after it");
    // The tokens condense counts: what follows the compaction. A request
    // with nothing after it (the compaction's own tool results last) has
    // nothing for condense, and goes on as sent, in no session's record.
    let ours = |end: usize| {
        let body = script.request(end).to_string();
        let parsed = condense_host::body::parse_body(body.as_bytes(), None).unwrap();
        let messages = parsed.messages();
        provider_compaction_end(messages).is_none_or(|e| e < messages.len())
    };
    let recorded: Vec<usize> = ends.iter().copied().filter(|&end| ours(end)).collect();
    assert!(recorded.len() >= ends.len() - 1, "{what}");
    let view = wait_for_calls(&proxy, &named_group(&session), recorded.len());
    for (call, &end) in view["calls"].as_array().unwrap().iter().zip(&recorded) {
        if end <= script.at + 1 {
            continue;
        }
        let body = script.request(end).to_string();
        let parsed = condense_host::body::parse_body(body.as_bytes(), None).unwrap();
        let messages = parsed.messages();
        let system = messages.iter().take_while(|m| m.role == Role::System);
        let start = provider_compaction_end(messages).unwrap();
        let after: Vec<_> = system.chain(&messages[start..]).cloned().collect();
        let after: u32 = condense_model::tokens::estimate_messages(&after)
            .iter()
            .sum();
        let whole = request_tokens(&script.request(end));
        let counted = call["tokens_before"].as_u64().unwrap() as u32;
        assert!(counted < whole, "{what}: {counted} of {whole}");
        assert_eq!(counted, after, "{what}: request of {end}");
    }
}

#[test]
fn an_anthropic_compaction_block_is_the_providers() {
    for answer in [Answer::Plain, Answer::Streamed] {
        the_providers_compaction_is_kept_and_not_counted(Format::Anthropic, answer);
    }
}

#[test]
fn a_responses_compaction_item_is_the_providers() {
    for answer in [Answer::Plain, Answer::Streamed] {
        the_providers_compaction_is_kept_and_not_counted(Format::Responses, answer);
    }
}

/// An Anthropic request of `uses` tool uses (each answered with 4,000
/// characters, each turn with its signed thinking) asking for `edits`.
fn asking_for_edits(uses: usize, edits: Value) -> Value {
    let mut messages = vec![json!({"role": "user", "content": "Fix the build."})];
    for i in 0..uses {
        messages.push(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": format!("Step {i}: look at the next file."),
             "signature": format!("sig-{i}")},
            {"type": "tool_use", "id": format!("toolu_{i:02}"), "name": "Bash",
             "input": {"command": format!("cat src/file{i}.rs")}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("toolu_{i:02}"),
             "content": format!("// file {i}\n{}", "fn body() {}\n".repeat(300))}]}));
    }
    json!({"model": "claude-opus-4", "max_tokens": 1000, "messages": messages,
        "context_management": {"edits": edits}})
}

/// The proxy in front of `upstream`, applying context edits or forwarding
/// them.
fn proxy_with(upstream: &TestServer, edits: ContextEdits) -> RunningProxy {
    let mut proxy = RunningProxy::settings(
        SESSION_CONFIG,
        &upstream.url(""),
        std::sync::Arc::new(condense_sessions::MemorySessions::default()),
    );
    proxy.routes.anthropic_edits = edits;
    RunningProxy::serve(proxy)
}

/// Posts `body`; the answer as the client got it.
fn answer_to(proxy: &RunningProxy, body: &Value) -> Vec<u8> {
    let mut answer = ureq::post(&proxy.url("/v1/messages"))
        .header("x-api-key", condense_tests::proxy::KEY)
        .send(body.to_string())
        .unwrap();
    answer.body_mut().read_to_vec().unwrap()
}

/// Each edit type, for an upstream marked as lacking context editing: the
/// request reaches it with the edit applied as documented (old tool results
/// cleared but the last `keep`, or old turns' thinking removed but the
/// last) and without the field, and the client's answer — plain or
/// streamed — says what was applied, as the API does. For an upstream that
/// has it, the request goes on with its edits untouched, byte for byte, and
/// the answer as it came.
#[test]
fn context_edits_are_applied_for_an_upstream_without_them_and_forwarded_to_one_with_them() {
    let tool_uses = json!([{"type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": 6000},
        "keep": {"type": "tool_uses", "value": 2}}]);
    let thinking = json!([{"type": "clear_thinking_20251015",
        "keep": {"type": "thinking_turns", "value": 1}}]);
    let plain = Reply::json(
        200,
        r#"{"type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":9,"output_tokens":1}}"#,
    );
    let streamed = sse(&[
        json!({"type": "message_start", "message": {"type": "message", "role": "assistant",
            "content": [], "usage": {"input_tokens": 9, "output_tokens": 1}}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 1}}),
        json!({"type": "message_stop"}),
    ]);
    for (name, edits) in [
        ("clear_tool_uses_20250919", tool_uses),
        ("clear_thinking_20251015", thinking),
    ] {
        let body = asking_for_edits(8, edits.clone());
        for reply in [plain.clone(), streamed.clone()] {
            // Lacking them: applied here.
            let upstream = TestServer::answering({
                let reply = reply.clone();
                move |_| reply.clone()
            });
            let proxy = proxy_with(&upstream, ContextEdits::Apply);
            let got = String::from_utf8(answer_to(&proxy, &body)).unwrap();
            let sent = &upstream.requests()[0].body;
            assert_eq!(sent.get("context_management"), None, "{name}");
            let messages = sent["messages"].as_array().unwrap();
            let results = |cleared: bool| {
                (messages.iter())
                    .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
                    .filter(|b| {
                        b["type"] == "tool_result" && (b["content"] == "[cleared]") == cleared
                    })
                    .count()
            };
            let thoughts = (messages.iter())
                .filter(|m| {
                    (m["content"].as_array().into_iter().flatten()).any(|b| b["type"] == "thinking")
                })
                .count();
            match name {
                "clear_tool_uses_20250919" => {
                    assert_eq!((results(true), results(false)), (6, 2), "{name}");
                    assert_eq!(thoughts, 8, "{name}: thinking untouched");
                }
                _ => {
                    assert_eq!((results(true), thoughts), (0, 1), "{name}");
                }
            }
            let told = got
                .lines()
                .map(|l| l.strip_prefix("data: ").unwrap_or(l))
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find_map(|v| v.get("context_management").cloned())
                .unwrap_or_else(|| panic!("{name}: no applied edits in\n{got}"));
            assert_eq!(told["applied_edits"][0]["type"], name, "{told}");
            let count = match name {
                "clear_tool_uses_20250919" => &told["applied_edits"][0]["cleared_tool_uses"],
                _ => &told["applied_edits"][0]["cleared_thinking_turns"],
            };
            assert_eq!(
                count,
                &json!(if name == "clear_thinking_20251015" {
                    7
                } else {
                    6
                })
            );

            // Having them: forwarded as the client sent them.
            let upstream = TestServer::answering({
                let reply = reply.clone();
                move |_| reply.clone()
            });
            let proxy = proxy_with(&upstream, ContextEdits::Forward);
            let got = answer_to(&proxy, &body);
            let Reply::Answer { body: answered, .. } = &reply else {
                unreachable!()
            };
            assert_eq!(got, answered.as_bytes(), "{name}: the answer as it came");
            let sent = &upstream.requests()[0];
            assert_eq!(
                sent.raw,
                body.to_string().as_bytes(),
                "{name}: the request as sent"
            );
        }
    }
}
