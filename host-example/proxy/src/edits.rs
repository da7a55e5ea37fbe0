//! Anthropic's context editing (`context_management.edits`), applied by the
//! proxy for an upstream that does not (a gateway, another provider behind
//! an Anthropic-compatible API): the client asked for it, and an upstream
//! that ignores or refuses the field would leave the request as large as
//! it was. Anthropic's own API applies them itself, so for it the field goes
//! on untouched ([`ContextEdits::Forward`]).
//!
//! The two edits, with the fields and defaults Anthropic documents:
//!
//! - `clear_tool_uses_20250919`: once the request is over `trigger` (input
//!   tokens, default 100,000; or a count of tool uses), the results of the
//!   oldest tool uses are replaced by [`CLEARED`], all but the last `keep`
//!   (default 3) and those of `exclude_tools`; `clear_tool_inputs` (true, or
//!   a list of tool names) clears their inputs too; nothing is cleared
//!   unless it frees `clear_at_least` input tokens.
//! - `clear_thinking_20251015`: the thinking of all but the last `keep`
//!   assistant turns that have any (`{"type": "thinking_turns", "value": N}`,
//!   default 1; `"all"` keeps every one) is removed.
//!
//! **Cache-safe, as condense's own passes are.** Applied call by call, as
//! written, the tool-use edit would clear one more result on every call past
//! the trigger, and every such call would rewrite the prompt's cached
//! prefix. So the point it clears up to moves only when the request crosses
//! the trigger again: it is found by walking the session's requests as they
//! grew (each prefix of the history that ends before one of the model's
//! turns, the same for every later request of the session), moving the
//! point wherever the request, as cleared so far, was over the trigger. Each
//! request is a function of its history alone, and the cleared part of one
//! is the cleared part of the next until the trigger is crossed again.
//!
//! What was applied is told to the client as the API tells it:
//! `context_management.applied_edits` in the answer (a plain answer's
//! object; a stream's `message_delta`), each edit with what it cleared.

use condense_model::tokens::estimate_text;
use serde_json::{Map, Value, json};
use std::collections::HashSet;

/// What a cleared tool result says instead.
pub const CLEARED: &str = "[cleared]";

/// Whether an upstream applies `context_management` itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContextEdits {
    /// It does (Anthropic's API): the field goes on untouched.
    #[default]
    Forward,
    /// It does not: the proxy applies the edits and removes the field.
    Apply,
}

/// An Anthropic request body with its `context_management` edits applied:
/// the body to send on (without the field) and the edits as the answer
/// reports them. `None` when it asks for none, or is not a body this reads
/// (it goes on as it came).
pub fn apply(body: &[u8]) -> Option<(Vec<u8>, Vec<Value>)> {
    // Most requests ask for none: they are not read a second time.
    memchr::memmem::find(body, b"\"context_management\"")?;
    let mut body: Value = serde_json::from_slice(body).ok()?;
    let edits = body.as_object_mut()?.remove("context_management")?;
    let messages = body.get_mut("messages")?.as_array_mut()?;
    let mut applied = Vec::new();
    for edit in edits
        .get("edits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let done = match edit.get("type").and_then(Value::as_str) {
            Some("clear_tool_uses_20250919") => clear_tool_uses(messages, edit),
            Some("clear_thinking_20251015") => clear_thinking(messages, edit),
            _ => None,
        };
        applied.extend(done);
    }
    Some((serde_json::to_vec(&body).expect("JSON serialises"), applied))
}

/// `value` of an edit's `{"type": …, "value": N}` field `name` of type
/// `kind`, else `default`.
fn count(edit: &Value, name: &str, kind: &str, default: u64) -> u64 {
    let field = &edit[name];
    match (field["type"].as_str(), field["value"].as_u64()) {
        (Some(t), Some(n)) if t == kind => n,
        _ => default,
    }
}

/// One tool use of the history: where its call and result are, and what
/// clearing it frees.
struct Use {
    /// The assistant message that made it.
    call_at: usize,
    /// The message holding its result, if any yet.
    result_at: Option<usize>,
    id: String,
    /// Tokens clearing it frees: its result's (and its input's, when those
    /// are cleared too), less the placeholder's.
    frees: u64,
}

fn blocks(message: &Value) -> &[Value] {
    message["content"].as_array().map_or(&[], Vec::as_slice)
}

fn clear_tool_uses(messages: &mut [Value], edit: &Value) -> Option<Value> {
    let keep = count(edit, "keep", "tool_uses", 3) as usize;
    let at_least = count(edit, "clear_at_least", "input_tokens", 0);
    let excluded: HashSet<&str> = (edit["exclude_tools"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    let inputs_of = |name: &str| match &edit["clear_tool_inputs"] {
        Value::Bool(all) => *all,
        Value::Array(names) => names.iter().any(|n| n.as_str() == Some(name)),
        _ => false,
    };
    // Tokens of each message, and the tool uses that may be cleared.
    let tokens: Vec<u64> = messages
        .iter()
        .map(|m| u64::from(estimate_text(&m["content"].to_string())))
        .collect();
    let placeholder = u64::from(estimate_text(CLEARED));
    let mut uses: Vec<Use> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        for block in blocks(m) {
            match block["type"].as_str() {
                Some("tool_use") => {
                    let name = block["name"].as_str().unwrap_or_default();
                    if excluded.contains(name) {
                        continue;
                    }
                    let input = match inputs_of(name) {
                        true => u64::from(estimate_text(&block["input"].to_string())),
                        false => 0,
                    };
                    uses.push(Use {
                        call_at: i,
                        result_at: None,
                        id: block["id"].as_str().unwrap_or_default().to_owned(),
                        frees: input,
                    });
                }
                Some("tool_result") => {
                    let id = block["tool_use_id"].as_str().unwrap_or_default();
                    if let Some(u) = uses.iter_mut().find(|u| u.id == id) {
                        u.result_at = Some(i);
                        let result = u64::from(estimate_text(&block["content"].to_string()));
                        u.frees += result.saturating_sub(placeholder);
                    }
                }
                _ => {}
            }
        }
    }
    let trigger = |prefix_tokens: u64, uses_in_prefix: usize| match edit["trigger"]["type"].as_str()
    {
        Some("tool_uses") => uses_in_prefix as u64 > count(edit, "trigger", "tool_uses", 0),
        _ => prefix_tokens > count(edit, "trigger", "input_tokens", 100_000),
    };
    // The session's requests as it grew: each prefix ending before an
    // assistant message, and the whole request last.
    let ends = (1..messages.len())
        .filter(|&k| messages[k]["role"] == "assistant")
        .chain([messages.len()]);
    let (mut cleared, mut freed) = (0usize, 0u64);
    for end in ends {
        let size: u64 = tokens[..end].iter().sum::<u64>() - freed;
        // Uses whose result is in the request: only those can be cleared.
        let answered = uses
            .iter()
            .take_while(|u| u.result_at.is_some_and(|r| r < end))
            .count();
        if !trigger(size, answered) {
            continue;
        }
        let to = answered.saturating_sub(keep);
        if to <= cleared {
            continue;
        }
        let frees: u64 = uses[cleared..to].iter().map(|u| u.frees).sum();
        if frees >= at_least.max(1) {
            cleared = to;
            freed += frees;
        }
    }
    if cleared == 0 {
        return None;
    }
    let ids: HashSet<&str> = uses[..cleared].iter().map(|u| u.id.as_str()).collect();
    let calls: HashSet<usize> = uses[..cleared].iter().map(|u| u.call_at).collect();
    for (i, m) in messages.iter_mut().enumerate() {
        let is_call = calls.contains(&i);
        for block in m["content"].as_array_mut().into_iter().flatten() {
            let id = |key: &str| block[key].as_str().is_some_and(|id| ids.contains(id));
            match block["type"].as_str() {
                Some("tool_result") if id("tool_use_id") => {
                    block["content"] = Value::String(CLEARED.to_owned());
                }
                Some("tool_use") if is_call && id("id") => {
                    let name = block["name"].as_str().unwrap_or_default().to_owned();
                    if inputs_of(&name) {
                        block["input"] = json!({});
                    }
                }
                _ => {}
            }
        }
    }
    Some(json!({
        "type": "clear_tool_uses_20250919",
        "cleared_tool_uses": cleared,
        "cleared_input_tokens": freed,
    }))
}

fn clear_thinking(messages: &mut [Value], edit: &Value) -> Option<Value> {
    if edit["keep"] == "all" {
        return None;
    }
    let keep = count(edit, "keep", "thinking_turns", 1) as usize;
    let thinking = |b: &Value| matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking"));
    let turns: Vec<usize> = (messages.iter().enumerate())
        .filter(|(_, m)| m["role"] == "assistant" && blocks(m).iter().any(thinking))
        .map(|(i, _)| i)
        .collect();
    let clear = turns.len().saturating_sub(keep);
    if clear == 0 {
        return None;
    }
    let mut freed = 0u64;
    for &i in &turns[..clear] {
        let Some(content) = messages[i]["content"].as_array_mut() else {
            continue;
        };
        for block in content.iter().filter(|b| thinking(b)) {
            freed += u64::from(estimate_text(&block.to_string()));
        }
        content.retain(|b| !thinking(b));
    }
    Some(json!({
        "type": "clear_thinking_20251015",
        "cleared_thinking_turns": clear,
        "cleared_input_tokens": freed,
    }))
}

/// `answer` (a plain Anthropic answer, JSON) telling the client what was
/// applied, as the API does; an answer this cannot read goes as it came.
pub fn report_plain(answer: &[u8], applied: &[Value]) -> Option<Vec<u8>> {
    let mut answer: Map<String, Value> = serde_json::from_slice(answer).ok()?;
    answer.insert(
        "context_management".into(),
        json!({ "applied_edits": applied }),
    );
    Some(serde_json::to_vec(&answer).expect("JSON serialises"))
}

/// One line of a streamed answer, telling the client what was applied on
/// its `message_delta` event; every other line as it came.
pub fn report_line(line: &[u8], applied: &[Value]) -> Option<Vec<u8>> {
    let data = line.strip_prefix(b"data:")?;
    let mut event: Map<String, Value> = serde_json::from_slice(data.trim_ascii()).ok()?;
    if event.get("type").and_then(Value::as_str) != Some("message_delta") {
        return None;
    }
    event.insert(
        "context_management".into(),
        json!({ "applied_edits": applied }),
    );
    let mut out = b"data: ".to_vec();
    out.extend(serde_json::to_vec(&event).expect("JSON serialises"));
    Some(out)
}

/// `response`, an Anthropic answer, telling the client the edits
/// `applied`: a plain answer read whole and written again; a stream line by
/// line as it passes (its `message_delta` event told); anything else (an
/// error) as it came.
pub fn reported(
    response: axum::response::Response,
    applied: Vec<Value>,
) -> axum::response::Response {
    use axum::body::Body;
    use futures_util::StreamExt;
    let (mut parts, body) = response.into_parts();
    let kind = parts
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    if !parts.status.is_success() {
        return axum::response::Response::from_parts(parts, body);
    }
    if kind.starts_with("text/event-stream") {
        let lines = futures_util::stream::unfold(
            (body.into_data_stream(), Vec::<u8>::new(), applied, false),
            |(mut body, mut pending, applied, done)| async move {
                if done {
                    return None;
                }
                match body.next().await {
                    Some(Ok(chunk)) => {
                        pending.extend_from_slice(&chunk);
                        // Whole lines go on; the rest waits for its end.
                        let cut = pending
                            .iter()
                            .rposition(|&b| b == b'\n')
                            .map_or(0, |i| i + 1);
                        let rest = pending.split_off(cut);
                        let mut out = Vec::with_capacity(pending.len());
                        for line in pending.split_inclusive(|&b| b == b'\n') {
                            let text = line.strip_suffix(b"\n").unwrap_or(line);
                            match report_line(text, &applied) {
                                Some(told) => {
                                    out.extend(told);
                                    out.push(b'\n');
                                }
                                None => out.extend_from_slice(line),
                            }
                        }
                        Some((Ok(bytes::Bytes::from(out)), (body, rest, applied, false)))
                    }
                    Some(Err(e)) => Some((Err(e), (body, pending, applied, true))),
                    None if pending.is_empty() => None,
                    None => Some((
                        Ok(bytes::Bytes::from(pending)),
                        (body, Vec::new(), applied, true),
                    )),
                }
            },
        );
        parts.headers.remove("content-length");
        return axum::response::Response::from_parts(parts, Body::from_stream(lines));
    }
    let body = futures_util::stream::once(async move {
        let whole = axum::body::to_bytes(body, usize::MAX).await?;
        Ok::<_, axum::Error>(match report_plain(&whole, &applied) {
            Some(told) => bytes::Bytes::from(told),
            None => whole,
        })
    });
    parts.headers.remove("content-length");
    axum::response::Response::from_parts(parts, Body::from_stream(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session of `n` tool uses, each result `size` characters.
    fn session(n: usize, size: usize) -> Vec<Value> {
        let mut messages = vec![json!({"role": "user", "content": "task"})];
        for i in 0..n {
            messages.push(json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": format!("thought {i}"), "signature": "s"},
                {"type": "tool_use", "id": format!("t{i}"), "name": if i == 1 { "Keep" } else { "Bash" },
                 "input": {"command": format!("cat file{i}")}}]}));
            messages.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("t{i}"), "content": "x".repeat(size)}]}));
        }
        messages
    }

    fn body(messages: &[Value], edits: Value) -> Vec<u8> {
        json!({"model": "m", "max_tokens": 10, "messages": messages,
            "context_management": {"edits": edits}})
        .to_string()
        .into_bytes()
    }

    fn cleared(body: &[u8]) -> Vec<String> {
        let body: Value = serde_json::from_slice(body).unwrap();
        (body["messages"].as_array().unwrap().iter())
            .flat_map(|m| blocks(m).to_vec())
            .filter(|b| b["type"] == "tool_result" && b["content"] == CLEARED)
            .map(|b| b["tool_use_id"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn old_tool_results_are_cleared_past_the_trigger_keeping_the_last_and_the_excluded() {
        // 10 uses of 4,000 characters (~1,000 tokens each).
        let edits = json!([{"type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": 5000},
            "keep": {"type": "tool_uses", "value": 2},
            "exclude_tools": ["Keep"], "clear_tool_inputs": true}]);
        let messages = session(10, 4000);
        let (sent, applied) = apply(&body(&messages, edits.clone())).unwrap();
        let sent_json: Value = serde_json::from_slice(&sent).unwrap();
        assert!(sent_json.get("context_management").is_none());
        let ids = cleared(&sent);
        assert!(!ids.contains(&"t1".to_owned()), "excluded: {ids:?}");
        assert!(!ids.iter().any(|i| i == "t8" || i == "t9"), "kept: {ids:?}");
        assert!(ids.contains(&"t0".to_owned()), "{ids:?}");
        assert_eq!(applied[0]["type"], "clear_tool_uses_20250919");
        assert_eq!(applied[0]["cleared_tool_uses"], ids.len());
        assert!(applied[0]["cleared_input_tokens"].as_u64().unwrap() > 1000);
        // Inputs cleared with their results.
        assert_eq!(sent_json["messages"][1]["content"][1]["input"], json!({}));
        // Cache-safe: the next request clears what this one did, whatever
        // it adds, until it crosses the trigger again.
        let mut more = messages.clone();
        more.extend(session(11, 40)[21..].to_vec());
        let (next, _) = apply(&body(&more, edits.clone())).unwrap();
        assert_eq!(cleared(&next), ids, "the same results cleared");
        // Under the trigger, or without enough to free: nothing.
        let small = session(3, 400);
        let (_, applied) = apply(&body(&small, edits)).unwrap();
        assert!(applied.is_empty());
        let at_least = json!([{"type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": 5000},
            "clear_at_least": {"type": "input_tokens", "value": 1_000_000}}]);
        let (sent, applied) = apply(&body(&messages, at_least)).unwrap();
        assert!(applied.is_empty() && cleared(&sent).is_empty());
    }

    #[test]
    fn thinking_is_cleared_but_the_last_turns() {
        let messages = session(4, 10);
        let edits = json!([{"type": "clear_thinking_20251015",
            "keep": {"type": "thinking_turns", "value": 2}}]);
        let (sent, applied) = apply(&body(&messages, edits)).unwrap();
        let sent: Value = serde_json::from_slice(&sent).unwrap();
        let with_thinking = (sent["messages"].as_array().unwrap().iter())
            .filter(|m| blocks(m).iter().any(|b| b["type"] == "thinking"))
            .count();
        assert_eq!(with_thinking, 2);
        assert_eq!(applied[0]["cleared_thinking_turns"], 2);
        let all = json!([{"type": "clear_thinking_20251015", "keep": "all"}]);
        let (_, applied) = apply(&body(&messages, all)).unwrap();
        assert!(applied.is_empty());
    }

    #[test]
    fn the_answer_says_what_was_applied() {
        let applied = [
            json!({"type": "clear_thinking_20251015", "cleared_thinking_turns": 1,
            "cleared_input_tokens": 9}),
        ];
        let plain = report_plain(br#"{"type":"message","content":[]}"#, &applied).unwrap();
        let plain: Value = serde_json::from_slice(&plain).unwrap();
        assert_eq!(
            plain["context_management"]["applied_edits"][0]["cleared_thinking_turns"],
            1
        );
        let line = br#"data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}"#;
        let line = report_line(line, &applied).unwrap();
        assert!(
            String::from_utf8(line)
                .unwrap()
                .contains("\"applied_edits\"")
        );
        assert_eq!(report_line(br#"data: {"type":"ping"}"#, &applied), None);
    }
}
