//! What the proxy's load benches share: a recorded session's calls, each
//! session's marked as its own, and the figures they report.

use crate::corpus_dir;
use serde_json::{Value, json};
use std::time::Duration;

/// The first `calls` requests of cc-opus-c, as its client sent them.
pub fn calls(calls: usize) -> Vec<Value> {
    let path = corpus_dir().join("anthropic/cc-opus-c.request.json");
    let body: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let messages = body["messages"].as_array().unwrap();
    (1..messages.len())
        .filter(|&k| messages[k]["role"] == "assistant")
        .take(calls)
        .map(|k| {
            json!({"model": "claude-opus-4", "max_tokens": 1000,
                   "system": body["system"], "messages": messages[..k]})
        })
        .collect()
}

/// `call` with every user message marked with the session's number: each
/// session's requests its own.
pub fn marked(call: &Value, session: usize) -> Value {
    let mut call = call.clone();
    let mark = format!("[bench session {session}]");
    for message in call["messages"].as_array_mut().unwrap() {
        if message["role"] != "user" {
            continue;
        }
        match &mut message["content"] {
            Value::String(text) => text.push_str(&format!("\n{mark}")),
            Value::Array(blocks) => blocks.push(json!({"type": "text", "text": mark})),
            _ => {}
        }
    }
    call
}

/// The `p` quantile of `sorted` (0 when empty).
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// The peak resident set of process `pid`, in KiB (0 when unknown).
pub fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
