//! The `condense` command line, driven in-process through
//! `condense_cli::cli::run` with real files: the configuration, the
//! checkpoint file between calls, the report, swapped components.

use crate::condense;
use condense_cli::cli;
use condense_config::{AgentSettings, ConfigFile};
use condense_host::SessionCheckpoint;
use condense_host::formats::{Format, Parsed};
use condense_model::{CORE_RANGES, Checkpoint, CoreConfig, Message};
use condense_replay::{ReplayStats, Step, replay, replay_middleware};
use condense_tests::{corpus_dir, embedded_middleware, guests, session_names};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Runs `condense ARGS` with `stdin`; returns the outcome and everything
/// written to stdout, error or not.
fn condense_with_stdout(args: &[&str], stdin: &str) -> (Result<(), String>, String) {
    let argv = std::iter::once("condense")
        .chain(args.iter().copied())
        .map(Into::into);
    let mut out = Vec::new();
    let result = cli::run(argv, &mut stdin.as_bytes(), &mut out).map_err(|e| format!("{e:#}"));
    (result, String::from_utf8(out).expect("stdout is UTF-8"))
}

struct Session {
    dir: tempfile::TempDir,
}

impl Session {
    fn new(config: &str) -> Session {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("condense.toml"), config).unwrap();
        Session { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The arguments of one model call:
    /// `compress --config C --checkpoint K --report R`, then `extra`.
    fn compress_args(&self, extra: &[&str]) -> Vec<String> {
        let path = |name| self.path(name).to_str().unwrap().to_owned();
        let mut args = vec![
            "compress".to_owned(),
            "--config".to_owned(),
            path("condense.toml"),
            "--checkpoint".to_owned(),
            path("k.json"),
            "--report".to_owned(),
            path("report.json"),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        args
    }

    /// One model call, in this session's files.
    fn compress(&self, body: &str, extra: &[&str]) -> Result<String, String> {
        let args = self.compress_args(extra);
        condense(&args.iter().map(String::as_str).collect::<Vec<_>>(), body)
    }

    fn report(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.path("report.json")).unwrap()).unwrap()
    }

    /// The checkpoint file, which must be one this condense reads.
    fn checkpoint(&self) -> Option<SessionCheckpoint> {
        std::fs::read(self.path("k.json")).ok().map(|b| {
            serde_json::from_slice(&b).unwrap_or_else(|e| {
                panic!(
                    "k.json is not a session checkpoint ({e}):\n{}",
                    String::from_utf8_lossy(&b)
                )
            })
        })
    }
}

/// The settings of `condense replay` (`AgentSettings::for_replay`) as a file.
const CONFIG_40K: &str = "token_threshold = 40000\ntarget_tokens = 16000\nkeep_recent_tokens = 8000\nsummary_max_tokens = 2000\n";

fn config_40k() -> CoreConfig {
    let settings = AgentSettings::parse(CONFIG_40K).unwrap();
    assert_eq!(settings, AgentSettings::for_replay());
    assert_eq!(
        settings.compressor_json(),
        "{}",
        "the compressor's defaults"
    );
    settings.core
}

/// The embedded compressor's settings `settings` give (the pass keys).
fn passes(settings: &AgentSettings) -> condense_contract::Settings {
    condense_contract::Settings::parse(&settings.compressor_json())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Whether `a` and `b` have the same effect: the same host settings, and
/// compressor keys giving the embedded compressor the same settings (written
/// out key by key, or left to their defaults).
fn same_effect(a: &AgentSettings, b: &AgentSettings) -> bool {
    (a.core, &a.components, &a.limits) == (b.core, &b.components, &b.limits)
        && passes(a) == passes(b)
}

fn raw_session(name: &str) -> Vec<Value> {
    let path = corpus_dir().join("sessions").join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn parse(text: &str) -> Vec<Message> {
    let body: Value = serde_json::from_str(text).unwrap();
    Parsed::parse(body, Format::OpenAi)
        .unwrap()
        .messages()
        .to_vec()
}

/// The issue's acceptance run: every corpus session replayed through
/// `condense compress --config C --checkpoint K`, one process-like call per
/// model call, with the figures computed from what the command line wrote.
/// They must equal the in-process middleware's, call for call.
#[test]
fn compress_replayed_over_every_session_with_a_checkpoint_file() {
    for name in session_names() {
        let raw = raw_session(&name);
        let history = parse(&serde_json::to_string(&raw).unwrap());
        let files = Session::new(CONFIG_40K);
        let mut sent_by_cli: Vec<Vec<Message>> = Vec::new();
        // Calls whose checkpoint file let the host send only the messages
        // after the fold.
        let mut resumed = 0;
        let stats = replay(&history, |request, previous: Option<&SessionCheckpoint>| {
            let body = serde_json::to_string(&raw[..request.len()]).unwrap();
            let out = files
                .compress(&body, &[])
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let report = files.report();
            assert!(
                report.get("checkpoint_ignored").is_none(),
                "{name}: a checkpoint file the call before wrote is used: {report}"
            );
            let sent_from = report["sent_from"].as_u64().unwrap();
            if let Some(previous) = previous.filter(|p| p.fits(request)) {
                assert_eq!(
                    sent_from,
                    u64::from(previous.checkpoint.boundary),
                    "{name}: {report}"
                );
                resumed += usize::from(sent_from > 0);
            }
            let messages = parse(&out);
            sent_by_cli.push(messages.clone());
            Step {
                messages,
                checkpoint: files.checkpoint(),
                compacted: report["guest"]["trigger"] == "compacted",
                failed_open: report["status"] == "failed-open",
            }
        });

        let mut call = 0;
        let in_process = replay_middleware(
            embedded_middleware(),
            &config_40k(),
            "{}",
            &history,
            |request, sent| {
                assert_eq!(
                    sent.messages(request),
                    sent_by_cli[call],
                    "{name}: call {call} differs from the CLI's"
                );
                call += 1;
            },
        );
        assert_same_figures(&name, &stats, &in_process);
        assert_eq!(stats.failed_open, 0, "{name}");
        if stats.compactions > 0 && stats.calls > stats.compactions {
            assert!(
                resumed > 0,
                "{name}: no call resumed from the checkpoint file"
            );
        }
        // The `cost` rule compacts about once per 12k tokens added.
        assert!(
            stats.cache_breaks <= 12,
            "{name}: {} cache breaks",
            stats.cache_breaks
        );
        assert!(
            stats.peak_request_tokens <= 40_000 || stats.largest_message_tokens > 16_000,
            "{name}: peak {}",
            stats.peak_request_tokens
        );
        if stats.calls >= 100 {
            assert!(
                stats.cost_ratio() <= 0.65,
                "{name}: cost {:.3}",
                stats.cost_ratio()
            );
        }
    }
}

fn assert_same_figures(name: &str, a: &ReplayStats, b: &ReplayStats) {
    assert_eq!(
        (
            a.calls,
            a.compactions,
            a.cache_breaks,
            a.peak_request_tokens
        ),
        (
            b.calls,
            b.compactions,
            b.cache_breaks,
            b.peak_request_tokens
        ),
        "{name}"
    );
    assert!((a.cost() - b.cost()).abs() < 1e-6, "{name}");
}

/// A body over the threshold, as OpenAI JSON.
fn long_body() -> String {
    serde_json::to_string(&raw_session("cc-subagent-sonnet")).unwrap()
}

#[test]
fn a_summarizer_loaded_by_path_changes_the_summary_without_a_rebuild() {
    let files = Session::new(CONFIG_40K);
    let default = files.compress(&long_body(), &[]).unwrap();
    assert!(default.contains("[condense summary]") && !default.contains("COUNTING SUMMARIZER"));

    let files = Session::new(CONFIG_40K);
    let custom = files
        .compress(
            &long_body(),
            &["--summarizer", guests::TEST_SUMMARIZER_CUSTOM],
        )
        .unwrap();
    assert!(
        custom.contains("[condense summary]") && custom.contains("COUNTING SUMMARIZER"),
        "{custom}"
    );
    assert_eq!(files.report()["status"], "compressed");

    // The same through the config file, with a path relative to it.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(guests::TEST_SUMMARIZER_CUSTOM, dir.path().join("mine.wasm")).unwrap();
    let config = format!("{CONFIG_40K}[components]\nsummarizer = \"mine.wasm\"\n");
    std::fs::write(dir.path().join("c.toml"), config).unwrap();
    let out = condense(
        &[
            "compress",
            "--config",
            dir.path().join("c.toml").to_str().unwrap(),
        ],
        &long_body(),
    )
    .unwrap();
    assert!(out.contains("COUNTING SUMMARIZER"));
}

/// `condense compress` hands its body to a sender that cannot answer
/// `condense_recall` calls: a compacted request with tools of its own gets
/// neither the tool nor a handle, though recall is on by default.
#[test]
fn compress_never_offers_recall() {
    let path = corpus_dir().join("anthropic/cc-opus-a.request.json");
    let mut body: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    body["tools"] = serde_json::json!([{"name": "Bash", "input_schema": {"type": "object"}}]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.toml"), CONFIG_40K).unwrap();
    let config = dir.path().join("c.toml");
    let out = condense(
        &["compress", "--config", config.to_str().unwrap()],
        &body.to_string(),
    )
    .unwrap();
    assert!(out.contains("[condense summary]"), "compacted");
    assert!(
        !out.contains("condense_recall"),
        "{}",
        &out[..out.len().min(2000)]
    );
    let sent: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(sent["tools"], body["tools"]);
}

/// A small request whose last user message tells the hostile compressor what to do.
fn hostile_body(command: &str) -> String {
    serde_json::json!({
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "You are a coding agent."},
            {"role": "user", "content": "Fix the test."},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\":\"cargo test\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "1 failed"},
            {"role": "user", "content": command}
        ]
    })
    .to_string()
}

/// Trap, timeout and invalid output each give back the request unchanged,
/// exit successfully, and say in the report what failed and where.
#[test]
fn failing_compressor_sends_the_request_unchanged_and_reports_why() {
    let files = Session::new("[limits]\ntimeout_ms = 300\n");
    for (command, failure) in [
        ("trap", "panic"),
        ("loop", "deadline"),
        ("orphan", "invalid-output"),
        ("drop-system", "invalid-output"),
    ] {
        let body = hostile_body(command);
        let out = files
            .compress(&body, &["--compressor", guests::TEST_COMPRESSOR_HOSTILE])
            .unwrap();
        let sent: Value = serde_json::from_str(&out).unwrap();
        let original: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            sent, original,
            "{command}: the body must pass through unchanged"
        );
        let report = files.report();
        assert_eq!(report["status"], "failed-open", "{command}");
        assert_eq!(report["failure"], failure, "{command}");
        assert_eq!(report["component"]["role"], "compressor", "{command}");
        assert!(
            report["reason"]
                .as_str()
                .unwrap()
                .contains("test_compressor_hostile.wasm"),
            "{command}: {report}"
        );
    }
}

/// Runs `condense ARGS` with raw `stdin` bytes; returns the outcome and
/// everything written to stdout, error or not.
fn condense_bytes(args: &[&str], stdin: &[u8]) -> (Result<(), String>, Vec<u8>) {
    let argv = std::iter::once("condense")
        .chain(args.iter().copied())
        .map(Into::into);
    let mut out = Vec::new();
    let result = cli::run(argv, &mut &stdin[..], &mut out).map_err(|e| format!("{e:#}"));
    (result, out)
}

/// Every file in `dir` with its bytes.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect()
}

/// A checkpoint file's content, for a file that must not change.
fn known_checkpoint() -> Vec<u8> {
    serde_json::to_vec_pretty(&SessionCheckpoint {
        summary: None,
        checkpoint: Checkpoint {
            version: 1,
            boundary: 2,
            state: b"an earlier fold".to_vec(),
        },
        prefix_hash: "0123456789abcdef0123456789abcdef".into(),
    })
    .unwrap()
}

fn user(text: &str) -> Value {
    serde_json::json!({"role": "user", "content": text})
}

fn calls(ids: &[&str]) -> Value {
    let calls: Vec<Value> = ids
        .iter()
        .map(|id| {
            serde_json::json!({"id": id, "type": "function",
                               "function": {"name": "Bash", "arguments": "{\"command\":\"ls\"}"}})
        })
        .collect();
    serde_json::json!({"role": "assistant", "content": null, "tool_calls": calls})
}

fn result(id: &str) -> Value {
    serde_json::json!({"role": "tool", "tool_call_id": id, "content": "ok"})
}

/// An OpenAI request body with `messages`.
fn openai_body(messages: Vec<Value>) -> Vec<u8> {
    serde_json::json!({"model": "gpt-test", "messages": messages})
        .to_string()
        .into_bytes()
}

/// One bad-input case: the config file, the checkpoint file's content, the
/// body on stdin, extra arguments, and the texts the error must contain.
struct BadInput {
    name: &'static str,
    config: &'static str,
    checkpoint: Vec<u8>,
    stdin: Vec<u8>,
    extra: &'static [&'static str],
    expected: Vec<String>,
}

impl BadInput {
    fn new(name: &'static str, stdin: impl Into<Vec<u8>>, expected: &[&str]) -> BadInput {
        BadInput {
            name,
            config: CONFIG_40K,
            checkpoint: known_checkpoint(),
            stdin: stdin.into(),
            extra: &[],
            expected: expected.iter().map(|e| e.to_string()).collect(),
        }
    }
}

/// Every kind of bad input to `condense compress`: an error (`run` returns
/// Err, which `main` turns into exit 1) naming the problem and where it is,
/// before any component runs; nothing on stdout; the checkpoint and report
/// files (pre-created with known content) byte-identical, and no other file
/// (no temporary file) left beside them.
#[test]
fn bad_input_is_an_error_naming_its_location_and_writes_nothing() {
    let invalid_utf8 = b"{\"messages\": [\n  {\"role\": \"user\", \"content\": \"caf\xe9\"}]}";
    let over_cap = openai_body(vec![user(&"x".repeat(2_000))]);
    let cases = vec![
        BadInput::new(
            "malformed JSON",
            "{not json",
            &["stdin: not valid JSON: key must be a string at line 1 column 2"],
        ),
        BadInput::new(
            "truncated JSON",
            r#"{"messages": [{"role": "user""#,
            &["stdin: not valid JSON: EOF while parsing", "line 1 column 29"],
        ),
        BadInput::new(
            "trailing garbage",
            r#"{"messages": []} x"#,
            &["stdin: not valid JSON: trailing characters at line 1 column 18"],
        ),
        BadInput::new("empty stdin", "", &["stdin: empty, expected a request body"]),
        BadInput::new("blank stdin", " \n", &["stdin: empty, expected a request body"]),
        BadInput::new(
            "invalid UTF-8",
            &invalid_utf8[..],
            &["stdin: not UTF-8: byte 0xe9 at offset 49 (line 2, column 35)"],
        ),
        BadInput::new(
            "no message list",
            r#"{"model": "m"}"#,
            &["stdin: cannot tell the format: body has no `messages`"],
        ),
        BadInput::new(
            "messages of the wrong type",
            r#"{"messages": 3}"#,
            &["messages: expected a list, found a number"],
        ),
        BadInput::new(
            "a body of the wrong type",
            "42",
            &["body: expected an object or a message list, found a number"],
        ),
        BadInput::new(
            "content of the wrong type",
            openai_body(vec![user("hi"), serde_json::json!({"role": "user", "content": 3})]),
            &["stdin: not a valid openai request: messages[1].content: expected a string or a list, found a number"],
        ),
        BadInput::new(
            "tool call arguments of the wrong type",
            openai_body(vec![
                user("hi"),
                serde_json::json!({"role": "assistant", "tool_calls": [
                    {"id": "c1", "function": {"name": "Bash", "arguments": {"command": "ls"}}}]}),
            ]),
            &["messages[1].tool_calls[0].function.arguments: expected a string, found an object"],
        ),
        BadInput::new(
            "a message that is not an object",
            r#"[{"role": "user", "content": "hi"}, "hello"]"#,
            &["[1]: message must be an object, found a string"],
        ),
        BadInput::new(
            "unknown role",
            openai_body(vec![user("hi"), serde_json::json!({"role": "wizard", "content": "hi"})]),
            &["messages[1]: unsupported role `wizard` (expected system, developer, user, assistant or tool)"],
        ),
        BadInput {
            extra: &["--format", "anthropic"],
            ..BadInput::new(
                "unknown Anthropic role",
                r#"{"messages": [{"role": "developer", "content": "be brief"}]}"#,
                &["stdin: not a valid anthropic request: messages[0]: unsupported role `developer` (expected user, assistant or system)"],
            )
        },
        BadInput::new(
            "mixed formats",
            r#"{"system": "s", "messages": [{"role": "tool", "tool_call_id": "a", "content": "x"}]}"#,
            &["stdin: cannot tell the format: body mixes Anthropic (top-level `system`) and OpenAI (messages[0] has role tool) shapes"],
        ),
        BadInput::new(
            "a tool message without a call id",
            openai_body(vec![user("hi"), serde_json::json!({"role": "tool", "content": "ok"})]),
            &["messages[1]: tool message has no `tool_call_id`"],
        ),
        BadInput::new(
            "a tool result with no call",
            openai_body(vec![user("hi"), result("c9")]),
            &["stdin: not a valid openai request: messages[1].tool_call_id: tool result answers call `c9` that no assistant message before it made"],
        ),
        BadInput::new(
            "a tool result after another call's results",
            openai_body(vec![user("hi"), calls(&["a"]), result("a"), calls(&["b"]), result("b"), result("a")]),
            &["messages[5].tool_call_id: tool result answers call `a` of messages[1].tool_calls[0], but results must directly follow the assistant message that made the call"],
        ),
        BadInput::new(
            "a call with no result before the next user message",
            openai_body(vec![user("hi"), calls(&["a", "b"]), result("b"), user("and?")]),
            &["messages[1].tool_calls[0]: tool call `a` has no result: messages[3], a user message, comes first (only the calls of the last assistant message may be pending)"],
        ),
        BadInput::new(
            "a call with no result before the next assistant message",
            openai_body(vec![user("hi"), calls(&["a"]), calls(&["b"])]),
            &["messages[1].tool_calls[0]: tool call `a` has no result: messages[2], an assistant message, comes first"],
        ),
        BadInput::new(
            "duplicate tool call ids",
            openai_body(vec![user("hi"), calls(&["a"]), result("a"), calls(&["a"]), result("a")]),
            &["messages[3].tool_calls[0].id: duplicate tool call id `a` (messages[1].tool_calls[0] has it too)"],
        ),
        BadInput::new(
            "an Anthropic tool result with no call, counted without the system prompt",
            serde_json::json!({"system": "be brief", "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}]},
            ]})
            .to_string(),
            &["stdin: not a valid anthropic request: messages[2].content[0].tool_use_id: tool result answers call `toolu_9` that no assistant message before it made"],
        ),
        BadInput {
            config: "[limits]\nmax_request_bytes = 1024\n",
            ..BadInput::new(
                "a body over max_request_bytes",
                over_cap.clone(),
                &[format!(
                    "stdin: request body of {} bytes is over limits.max_request_bytes = 1024",
                    over_cap.len()
                )
                .as_str()],
            )
        },
        BadInput {
            config: "[limits]\nmax_request_bytes = 10\n",
            ..BadInput::new(
                "max_request_bytes out of range",
                openai_body(vec![user("hi")]),
                &["limits.max_request_bytes = 10: must be between 1024 and 1073741824"],
            )
        },
        BadInput {
            config: "[limits]\nmax_request_bytes = \"64 MiB\"\n",
            ..BadInput::new(
                "max_request_bytes of the wrong type",
                openai_body(vec![user("hi")]),
                &["limits.max_request_bytes: invalid type: string \"64 MiB\""],
            )
        },
        BadInput {
            config: "token_threshold = 40000\ntarget_tokens = 50000\n",
            ..BadInput::new(
                "target_tokens out of range",
                openai_body(vec![user("hi")]),
                &["target_tokens = 50000: must be between 1 and token_threshold - 1 (39999)"],
            )
        },
        // A checkpoint file condense cannot read is no reason to fail
        // (see `an_unreadable_checkpoint_file_is_ignored_reported_and_replaced`),
        // and no excuse for a malformed request either.
        BadInput {
            checkpoint: b"not a checkpoint".to_vec(),
            ..BadInput::new(
                "malformed JSON beside a checkpoint file that is not a checkpoint",
                "{not json",
                &["stdin: not valid JSON: key must be a string at line 1 column 2"],
            )
        },
        BadInput {
            checkpoint: b"{\"prefix_hash\": \"00\"}".to_vec(),
            ..BadInput::new(
                "a tool result with no call beside a checkpoint file missing a field",
                openai_body(vec![user("hi"), result("c9")]),
                &["messages[1].tool_call_id: tool result answers call `c9`"],
            )
        },
    ];
    for case in cases {
        let name = case.name;
        let files = Session::new(case.config);
        std::fs::write(files.path("k.json"), &case.checkpoint).unwrap();
        std::fs::write(files.path("report.json"), b"{\"previous\": \"report\"}").unwrap();
        let before = snapshot(files.dir.path());
        let args = files.compress_args(case.extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (outcome, stdout) = condense_bytes(&args, &case.stdin);
        let e = outcome.expect_err(&format!("{name}: must be an error"));
        for expected in &case.expected {
            assert!(
                e.contains(expected.as_str()),
                "{name}: {e}\nexpected: {expected}"
            );
        }
        assert!(
            stdout.is_empty(),
            "{name}: wrote {}",
            String::from_utf8_lossy(&stdout)
        );
        assert_eq!(snapshot(files.dir.path()), before, "{name}: files changed");
    }
    let e = condense(&["compress", "--config", "/nonexistent/c.toml"], "[]").unwrap_err();
    assert!(e.contains("/nonexistent/c.toml"), "{e}");
}

/// The same bad requests through the library: `Middleware` stays fail-open
/// (the compressor refuses, the request goes out unchanged), where the
/// command line says the request is malformed.
#[test]
fn the_library_middleware_stays_fail_open_on_bad_pairing() {
    let body = openai_body(vec![user("hi"), result("c9")]);
    let parsed = Parsed::parse(serde_json::from_slice(&body).unwrap(), Format::OpenAi).unwrap();
    let sent = embedded_middleware().compress(parsed.messages(), &config_40k(), "{}", None);
    assert_eq!(sent.messages(parsed.messages()), parsed.messages());
    assert!(sent.checkpoint.is_none());
    assert_eq!(sent.report.status(), condense_host::Status::FailedOpen);
    assert_eq!(
        sent.report.failure(),
        Some(condense_host::FailureKind::CompressError)
    );
}

/// Not errors: an empty conversation (with or without other fields, in
/// either format) comes back unchanged, exit 0, and the report says the
/// request is under the threshold.
#[test]
fn an_empty_conversation_is_sent_unchanged() {
    for body in [
        r#"{"model": "m", "messages": []}"#,
        "[]",
        r#"{"system": "be brief", "messages": []}"#,
    ] {
        let files = Session::new(CONFIG_40K);
        let out = files.compress(body, &[]).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            serde_json::from_str::<Value>(body).unwrap(),
            "{body}"
        );
        let report = files.report();
        assert_eq!(report["status"], "unchanged", "{body}: {report}");
        assert_eq!(report["guest"]["trigger"], "under-threshold", "{body}");
    }
}

/// Not an error either: one message larger than the threshold cannot be
/// folded (it is the recent tail), so the compressor reports won't-shrink and
/// the body comes back unchanged, exit 0.
#[test]
fn a_single_message_over_the_threshold_is_sent_unchanged_as_wont_shrink() {
    let files = Session::new(
        "token_threshold = 1000\ntarget_tokens = 500\nkeep_recent_tokens = 200\nsummary_max_tokens = 100\n",
    );
    let words = "the quick brown fox jumps over the lazy dog ".repeat(500);
    let body = String::from_utf8(openai_body(vec![user(&words)])).unwrap();
    let out = files.compress(&body, &[]).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        serde_json::from_str::<Value>(&body).unwrap()
    );
    let report = files.report();
    assert_eq!(report["status"], "unchanged", "{report}");
    assert_eq!(report["guest"]["trigger"], "wont-shrink", "{report}");
    assert!(
        report["guest"]["tokens_before"].as_u64().unwrap() > 1000,
        "{report}"
    );
}

/// An assistant message with the deprecated `function_call` field, rewritten
/// by the reasoning pass, goes out with the field where it was: not as an
/// untyped `content` entry, which OpenAI rejects.
#[test]
fn a_rewritten_message_keeps_its_legacy_function_call_field() {
    let files = Session::new(
        "token_threshold = 1000\ntarget_tokens = 600\nkeep_recent_tokens = 1\nsummary_max_tokens = 100\nrecent_turns = 0\nstrip_reasoning_after_turns = 1\n",
    );
    let function_call = json!({"name": "weather", "arguments": "{\"city\":\"Oslo\"}"});
    let body = String::from_utf8(openai_body(vec![
        user("What is the weather in Oslo?"),
        json!({
            "role": "assistant",
            "content": "Checking.",
            "reasoning_content": "the user wants the weather, so I call the tool ".repeat(200),
            "function_call": function_call,
        }),
        user("Thanks."),
        json!({"role": "assistant", "content": "You are welcome."}),
        user("Bye."),
    ]))
    .unwrap();
    let out: Value = serde_json::from_str(&files.compress(&body, &[]).unwrap()).unwrap();
    let report = files.report();
    assert_eq!(report["guest"]["trigger"], "compacted", "{report}");
    assert_eq!(report["guest"]["passes"]["reasoning_pruned"], 1, "{report}");
    assert_eq!(
        out["messages"][1],
        json!({"role": "assistant", "content": "Checking.", "function_call": function_call}),
        "{out}"
    );
}

/// `[limits] max_request_bytes`: a body of exactly the limit is compressed;
/// one byte more is an error naming both sizes, and nothing is written.
#[test]
fn a_body_over_max_request_bytes_is_rejected_and_one_at_the_limit_is_compressed() {
    let files = Session::new("[limits]\nmax_request_bytes = 2048\n");
    let body = |bytes: usize| {
        let empty = openai_body(vec![user("")]).len();
        String::from_utf8(openai_body(vec![user(&"x".repeat(bytes - empty))])).unwrap()
    };
    let at_limit = body(2048);
    assert_eq!(at_limit.len(), 2048);
    let out = files.compress(&at_limit, &[]).unwrap();
    assert_eq!(out.trim_end(), at_limit);
    assert_eq!(files.report()["status"], "unchanged");

    std::fs::remove_file(files.path("report.json")).unwrap();
    let before = snapshot(files.dir.path());
    let (outcome, stdout) = condense_bytes(
        &[
            "compress",
            "--config",
            files.path("condense.toml").to_str().unwrap(),
            "--checkpoint",
            files.path("k.json").to_str().unwrap(),
            "--report",
            files.path("report.json").to_str().unwrap(),
        ],
        body(2049).as_bytes(),
    );
    let e = outcome.unwrap_err();
    assert!(
        e.contains("stdin: request body of 2049 bytes is over limits.max_request_bytes = 2048"),
        "{e}"
    );
    assert!(stdout.is_empty());
    assert_eq!(snapshot(files.dir.path()), before);
    // The default is 64 MiB.
    assert_eq!(AgentSettings::default().limits.max_request_bytes, 64 << 20);
}

#[test]
fn a_stale_checkpoint_is_ignored_and_the_fold_recomputed() {
    let files = Session::new(CONFIG_40K);
    let first = files.compress(&long_body(), &[]).unwrap();
    let checkpoint = files.checkpoint().expect("the long body compacts");
    // Another session's history with this checkpoint: the hash does not match.
    let mut other = raw_session("cc-subagent-sonnet");
    other[0]["content"] = Value::String("A different task.".into());
    let out = files
        .compress(&serde_json::to_string(&other).unwrap(), &[])
        .unwrap();
    assert_ne!(out, first);
    let report = files.report();
    assert_eq!(
        report["guest"]["trigger"], "compacted",
        "recomputed, not reused: {report}"
    );
    assert_eq!(
        report["sent_from"], 0,
        "the whole history is sent: {report}"
    );
    assert!(
        report["checkpoint_ignored"].is_string(),
        "the report says why: {report}"
    );
    let new = files.checkpoint().unwrap();
    assert_ne!(new.prefix_hash, checkpoint.prefix_hash);
    assert!(new.fits(&parse(&serde_json::to_string(&other).unwrap())));
}

/// Defect 3: a checkpoint file condense cannot read (garbage, an empty file,
/// JSON missing a field, condense 0.1's format, a compressor checkpoint of
/// a future format) does not stop the model call: exit 0, the body is
/// compressed as with no checkpoint (the fold recomputed), the report says
/// why the file was ignored, and the file is replaced by a valid checkpoint
/// that the next call uses.
#[test]
fn an_unreadable_checkpoint_file_is_ignored_reported_and_replaced() {
    let body = long_body();
    // What a session with no checkpoint file yet gets.
    let fresh = Session::new(CONFIG_40K);
    let expected = fresh.compress(&body, &[]).unwrap();
    assert_eq!(fresh.report()["guest"]["trigger"], "compacted");
    assert!(fresh.report().get("checkpoint_ignored").is_none());
    let written = fresh.checkpoint().expect("the long body compacts");
    assert!(written.checkpoint.boundary > 0, "the long body folds");

    let mut missing_state = serde_json::to_value(&written).unwrap();
    missing_state["checkpoint"]
        .as_object_mut()
        .unwrap()
        .remove("state");
    // The checkpoint file of condense 0.1.
    let old_format = json!({
        "boundary": 2, "prefix_hash": "0123456789abcdef", "folded_tokens": 1234,
        "summary": "an earlier summary", "tail_start": 2, "horizon": 3,
    });
    // This session's own fold, in a format this compressor does not read:
    // the host's hash fits, so the host first sends only the messages after
    // the boundary, and the compressor needs the whole history.
    let mut future = written.clone();
    future.checkpoint.version = 99;
    let cases: Vec<(&str, Vec<u8>, &[&str])> = vec![
        (
            "garbage",
            b"\x00not a checkpoint\xff".to_vec(),
            &[
                "k.json is not a checkpoint this condense reads",
                ": ignored",
            ],
        ),
        (
            "an empty file",
            Vec::new(),
            &["k.json is not a checkpoint this condense reads", "EOF"],
        ),
        (
            "a missing field",
            serde_json::to_vec(&missing_state).unwrap(),
            &[
                "k.json is not a checkpoint this condense reads",
                "missing field `state`",
            ],
        ),
        (
            "condense 0.1's format",
            serde_json::to_vec_pretty(&old_format).unwrap(),
            &[
                "k.json is not a checkpoint this condense reads",
                "checkpoint",
            ],
        ),
        (
            "a future format",
            serde_json::to_vec_pretty(&future).unwrap(),
            &["99"],
        ),
    ];
    for (name, content, why) in cases {
        let files = Session::new(CONFIG_40K);
        std::fs::write(files.path("k.json"), &content).unwrap();
        let out = files
            .compress(&body, &[])
            .unwrap_or_else(|e| panic!("{name}: must not be an error: {e}"));
        assert!(
            out == expected,
            "{name}: the body must be compressed as with no checkpoint"
        );
        let report = files.report();
        assert_eq!(report["status"], "compressed", "{name}: {report}");
        assert_eq!(
            report["guest"]["trigger"], "compacted",
            "{name}: the fold is recomputed: {report}"
        );
        assert_eq!(
            report["sent_from"], 0,
            "{name}: the whole history is sent: {report}"
        );
        let ignored = report["checkpoint_ignored"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: the report says why: {report}"));
        for text in why {
            assert!(
                ignored.contains(text),
                "{name}: {ignored}\nexpected: {text}"
            );
        }
        assert_eq!(
            files.checkpoint().as_ref(),
            Some(&written),
            "{name}: the file is replaced by a valid checkpoint"
        );
        assert_eq!(
            snapshot(files.dir.path()).len(),
            3,
            "{name}: no other file left"
        );

        // The next call reads it, and sends only what follows the fold.
        let again = files.compress(&body, &[]).unwrap();
        assert!(again == expected, "{name}: the next call reuses the fold");
        let report = files.report();
        assert!(
            report.get("checkpoint_ignored").is_none(),
            "{name}: {report}"
        );
        assert_eq!(
            report["guest"]["trigger"], "reused-checkpoint",
            "{name}: {report}"
        );
        assert_eq!(
            report["sent_from"], written.checkpoint.boundary,
            "{name}: {report}"
        );
    }
}

/// Defect 2: `token_threshold` alone was an error (the default target,
/// 50000, was above a threshold of 40000). The keys left out now follow the
/// threshold; only an explicit inconsistent pair is an error.
#[test]
fn a_threshold_alone_is_a_consistent_config() {
    let files = Session::new("token_threshold = 40000\n[agents.small]\ntoken_threshold = 10000\n");
    let path = files.path("condense.toml");
    let config = path.to_str().unwrap();
    let out = condense(&["config", "--show", "--config", config], "").unwrap();
    for line in [
        "token_threshold = 40000",
        "target_tokens = 20000",
        "keep_recent_tokens = 8000",
        "summary_max_tokens = 2000",
    ] {
        assert!(out.lines().any(|l| l == line), "{line} missing from\n{out}");
    }
    assert!(same_effect(
        &AgentSettings::parse(&out).unwrap(),
        &AgentSettings::load(&path).unwrap()
    ));
    let out = condense(
        &["config", "--show", "--config", config, "--agent", "small"],
        "",
    )
    .unwrap();
    for line in [
        "token_threshold = 10000",
        "target_tokens = 5000",
        "keep_recent_tokens = 2000",
        "summary_max_tokens = 500",
    ] {
        assert!(out.lines().any(|l| l == line), "{line} missing from\n{out}");
    }

    let body = long_body();
    let out = files.compress(&body, &[]).unwrap();
    let report = files.report();
    assert_eq!(report["status"], "compressed", "{report}");
    assert_eq!(report["guest"]["trigger"], "compacted", "{report}");
    assert!(
        report["guest"]["tokens_after"].as_u64().unwrap() <= 40_000,
        "{report}"
    );
    assert_ne!(out, body);
    assert!(files.checkpoint().is_some());

    // An explicit inconsistent pair is still an error naming the key, and
    // nothing is written.
    let files = Session::new("token_threshold = 40000\ntarget_tokens = 50000\n");
    let path = files.path("condense.toml");
    let compress = files.compress_args(&[]);
    let compress: Vec<&str> = compress.iter().map(String::as_str).collect();
    for args in [
        &["config", "--show", "--config", path.to_str().unwrap()][..],
        &compress[..],
    ] {
        let (result, stdout) = condense_with_stdout(args, &body);
        let e = result.expect_err(&format!("{args:?} must fail"));
        assert!(
            e.contains("target_tokens = 50000: must be between 1 and token_threshold - 1 (39999)"),
            "{args:?}: {e}"
        );
        assert!(stdout.is_empty(), "{args:?}");
        assert_eq!(
            snapshot(files.dir.path()).len(),
            1,
            "{args:?}: only the config file"
        );
    }
}

#[test]
fn help_teaches_and_replay_prints_figures() {
    let help = condense(&["--help"], "").unwrap();
    assert!(help.contains("condense demo") && help.contains("compress"));
    let help = condense(&["compress", "--help"], "").unwrap();
    assert!(help.contains("--checkpoint") && help.contains("atomically"));
    let session = corpus_dir()
        .join("sessions")
        .join("cc-subagent-sonnet.json");
    let out = condense(&["replay", session.to_str().unwrap()], "").unwrap();
    assert!(
        out.contains("cc-subagent-sonnet.json") && out.contains("cost"),
        "{out}"
    );
}

#[test]
fn replay_optimal_prints_the_optimum_beside_condense() {
    let session = corpus_dir()
        .join("sessions")
        .join("cc-subagent-sonnet.json");
    let session = session.to_str().unwrap();
    let out = condense(&["replay", "--optimal", session], "").unwrap();
    assert!(
        out.contains("offline optimum: cost") && out.contains("condense / optimum"),
        "{out}"
    );
    let rows: Value =
        serde_json::from_str(&condense(&["replay", "--optimal", "--json", session], "").unwrap())
            .unwrap();
    let row = &rows[0];
    let optimal = &row["optimal"];
    let compactions = optimal["schedule"]["compactions"].as_array().unwrap();
    assert!(!compactions.is_empty(), "{row}");
    let (condense_cost, optimal_cost) = (
        row["cost_ratio"].as_f64().unwrap(),
        optimal["cost_ratio"].as_f64().unwrap(),
    );
    assert!(optimal_cost > 0.0 && optimal_cost <= condense_cost, "{row}");
    assert!(
        optimal["condense_over_optimal"].as_f64().unwrap() >= 1.0,
        "{row}"
    );
    // Without the flag, no optimum is computed.
    let plain: Value =
        serde_json::from_str(&condense(&["replay", "--json", session], "").unwrap()).unwrap();
    assert!(plain[0].get("optimal").is_none(), "{plain}");
}

/// `--model` replays as requests to a model: its prices and its window's
/// threshold; `config --models` lists the table it comes from.
#[test]
fn replay_model_prices_and_caps_as_the_models_table_says() {
    let session = corpus_dir().join("sessions").join("cc-opus-b.json");
    let session = session.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("condense.toml");
    std::fs::write(
        &config,
        "[models.\"tiny-*\"]\ncontext_window = 20000\ncache_read = 0.25\ncache_write = {}\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let replay = |model: &str| -> Value {
        let args = [
            "replay", "--json", "--config", config, "--model", model, session,
        ];
        let rows: Value = serde_json::from_str(&condense(&args, "").unwrap()).unwrap();
        rows[0]["stats"].clone()
    };
    let gpt = replay("gpt-4o-2024-08-06");
    assert_eq!(
        (
            gpt["prices"]["read"].as_f64(),
            gpt["prices"]["write"].as_f64()
        ),
        (Some(0.5), Some(1.0))
    );
    let tiny = replay("tiny-coder");
    assert_eq!(tiny["prices"]["read"].as_f64(), Some(0.25));
    // Its window caps the threshold at 16k (the replay's is 40k): more
    // compactions, a lower peak.
    let count = |s: &Value, key: &str| s[key].as_u64().unwrap();
    assert!(
        count(&tiny, "compactions") > count(&gpt, "compactions"),
        "{tiny}\n{gpt}"
    );
    assert!(
        count(&tiny, "peak_request_tokens") < count(&gpt, "peak_request_tokens"),
        "{tiny}\n{gpt}"
    );

    let table = condense(&["config", "--models", "--config", config], "").unwrap();
    let row = |pattern: &str| {
        table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(pattern))
            .unwrap_or_else(|| panic!("no {pattern} in\n{table}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(row("tiny-*")[3..], ["0.25", "1.00", "5m", "20000", "16000"]);
    assert_eq!(
        row("gpt-4o*")[3..],
        ["0.50", "1.00", "5m", "128000", "100000"]
    );
}

#[test]
fn replay_timing_models_the_cache_expiring() {
    let sessions = corpus_dir().join("sessions");
    let timing = corpus_dir().join("timing");
    let c = sessions.join("cc-opus-c.json");
    let args = |timed: bool| {
        let mut a = vec!["replay", "--optimal", "--json"];
        if timed {
            a.extend(["--timing", timing.to_str().unwrap()]);
        }
        a.push(c.to_str().unwrap());
        a
    };
    let warm: Value = serde_json::from_str(&condense(&args(false), "").unwrap()).unwrap();
    let timed: Value = serde_json::from_str(&condense(&args(true), "").unwrap()).unwrap();
    assert_eq!(warm[0]["stats"]["cache_expiries"], 0);
    assert_eq!(timed[0]["stats"]["cache_expiries"], 1, "{timed}");
    // Uncompressed, the call after the gap is written whole: dearer.
    assert!(timed[0]["baseline_cost"].as_f64() > warm[0]["baseline_cost"].as_f64());
    assert!(
        timed[0]["optimal"]["condense_over_optimal"]
            .as_f64()
            .unwrap()
            >= 1.0
    );
    let table = condense(
        &[
            "replay",
            "--timing",
            timing.to_str().unwrap(),
            c.to_str().unwrap(),
        ],
        "",
    )
    .unwrap();
    assert!(table.contains("cache expired (idle)"), "{table}");
    // A session without a timing file replays warm.
    let b = sessions.join("cc-subagent-sonnet.json");
    let out = condense(
        &[
            "replay",
            "--timing",
            timing.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        "",
    )
    .unwrap();
    assert!(!out.contains("cache expired"), "{out}");
    // A timing file that cannot be read is an error naming the entry.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cc-opus-c.json"),
        r#"{"assistant_timestamps": ["2026-02-12T14:12:01Z", "yesterday"]}"#,
    )
    .unwrap();
    let err = condense(
        &[
            "replay",
            "--timing",
            dir.path().to_str().unwrap(),
            c.to_str().unwrap(),
        ],
        "",
    )
    .unwrap_err();
    assert!(err.contains("assistant_timestamps[1]"), "{err}");
}

fn golden_schema_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../host-example/config/config.schema.json")
}

#[test]
fn config_schema_prints_the_golden_schema_as_valid_json() {
    let out = condense(&["config", "--schema"], "").unwrap();
    let golden = std::fs::read_to_string(golden_schema_path()).unwrap();
    assert!(
        out == golden,
        "`condense config --schema` differs from host-example/config/config.schema.json; \
         regenerate it with `CONDENSE_BLESS=1 cargo test -p condense-config` \
         and review the diff"
    );
    let schema: Value = serde_json::from_str(&out).expect("the schema is JSON");
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let properties = schema["properties"].as_object().unwrap();
    for key in [
        "token_threshold",
        "target_tokens",
        "recent_turns",
        "keep_recent_tokens",
        "summary_max_tokens",
        "strip_reasoning_after_turns",
        "reasoning_echo",
        "aggregate_developer_loops",
        "max_loop_steps_before_aggregate",
        "tools",
        "clear_mode",
        "result_char_threshold",
        "keep_tool_results",
        "exclude_tools",
        "components",
        "limits",
        "agents",
    ] {
        assert!(
            properties[key]["description"].is_string(),
            "{key} is documented"
        );
    }
    for &condense_model::Range { key, min, max } in CORE_RANGES {
        assert_eq!(
            (&properties[key]["minimum"], &properties[key]["maximum"]),
            (&Value::from(min), &Value::from(max)),
            "{key}"
        );
    }
    // The compressor's keys, with the ranges its own schema publishes.
    for (key, min) in [
        ("strip_reasoning_after_turns", 0),
        ("max_loop_steps_before_aggregate", 3),
        ("result_char_threshold", 100),
        ("keep_tool_results", 0),
    ] {
        assert_eq!(properties[key]["minimum"], min, "{key}");
        assert!(properties[key]["maximum"].is_u64(), "{key}");
    }
    assert_eq!(properties["token_threshold"]["default"], 100_000);
    assert_eq!(
        properties["agents"]["additionalProperties"]["$ref"],
        "#/$defs/AgentSettings"
    );
}

const AGENTS_CONFIG: &str = r#"
token_threshold = 1000000
target_tokens = 500000
clear_mode = "truncate"

[components]
summarizer = "mine.wasm"

[agents.tight]
token_threshold = 40000
target_tokens = 16000
keep_recent_tokens = 8000
[agents.tight.components]
summarizer = "theirs.wasm"

[agents.tools-only.tools]
exec_capable = ["Bash"]
"#;

#[test]
fn config_show_prints_toml_that_reads_back_to_the_same_settings() {
    // No --config: the defaults of `condense compress`.
    let out = condense(&["config", "--show"], "").unwrap();
    let shown = AgentSettings::parse(&out).unwrap();
    assert!(same_effect(&shown, &AgentSettings::default()), "{out}");
    // Every compressor key is written out, with its default.
    assert_eq!(
        shown.compressor,
        match serde_json::to_value(condense_contract::Settings::default()).unwrap() {
            Value::Object(keys) => keys,
            other => panic!("{other}"),
        }
    );
    for line in [
        "token_threshold = 100000",
        "target_tokens = 50000",
        "clear_mode = \"off\"",
        "exclude_tools = []",
        "[tools]",
        "\"mcp__*__exec*\"",
        "[components]",
        "[limits]",
        "memory_mib = 256",
    ] {
        assert!(out.contains(line), "{line} missing from\n{out}");
    }

    let files = Session::new(AGENTS_CONFIG);
    let config = files.path("condense.toml");
    let config = config.to_str().unwrap();
    let loaded = ConfigFile::load(Path::new(config)).unwrap();
    let out = condense(&["config", "--show", "--config", config], "").unwrap();
    assert!(
        same_effect(&AgentSettings::parse(&out).unwrap(), &loaded.base),
        "{out}"
    );
    assert!(
        out.contains("tight, tools-only") && out.contains("--agent NAME"),
        "{out}"
    );
    for agent in ["tight", "tools-only"] {
        let out = condense(
            &["config", "--show", "--config", config, "--agent", agent],
            "",
        )
        .unwrap();
        let shown = AgentSettings::parse(&out).unwrap();
        assert!(
            same_effect(&shown, loaded.settings(Some(agent)).unwrap()),
            "{out}"
        );
        assert!(!same_effect(&shown, &loaded.base), "{agent}");
        // Written out, it is a config file giving the same settings.
        let copy = files.path(&format!("{agent}.toml"));
        std::fs::write(&copy, &out).unwrap();
        assert_eq!(AgentSettings::load(&copy).unwrap(), shown);
    }
    let tight = AgentSettings::load_agent(Path::new(config), Some("tight")).unwrap();
    assert_eq!(tight.core.token_threshold, 40_000);
    assert_eq!(
        passes(&tight).clear_mode,
        condense_contract::settings::ClearMode::Truncate
    );
    let tools_only = loaded.settings(Some("tools-only")).unwrap();
    assert_eq!(passes(tools_only).tools.exec_capable, ["Bash"]);
    assert_eq!(
        passes(tools_only).tools.mutating,
        condense_contract::settings::ToolClasses::default().mutating
    );
    assert_eq!(
        tight.components.summarizer,
        Some(files.path("theirs.wasm")),
        "relative to the config file"
    );
}

/// The same request through the same file: left alone by the top-level
/// settings (threshold 1M), compacted with `--agent tight` (threshold 40k),
/// exactly as a file holding the agent's keys at the top level would.
#[test]
fn an_agent_override_applies_to_compress_and_replay() {
    let config = AGENTS_CONFIG.replace("[components]\nsummarizer = \"mine.wasm\"\n", "");
    let config = config.replace(
        "[agents.tight.components]\nsummarizer = \"theirs.wasm\"\n",
        "",
    );
    let files = Session::new(&config);
    let body = long_body();
    let out = files.compress(&body, &[]).unwrap();
    assert_eq!(files.report()["guest"]["trigger"], "under-threshold");
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        serde_json::from_str::<Value>(&body).unwrap()
    );

    let files = Session::new(&config);
    let out = files.compress(&body, &["--agent", "tight"]).unwrap();
    assert_eq!(files.report()["guest"]["trigger"], "compacted");
    let report = files.report();
    assert!(
        report["guest"]["tokens_after"].as_u64().unwrap() <= 40_000,
        "{report}"
    );
    assert_ne!(out, body);
    let same = Session::new(
        "token_threshold = 40000\ntarget_tokens = 16000\nkeep_recent_tokens = 8000\nclear_mode = \"truncate\"\n",
    );
    assert_eq!(same.compress(&body, &[]).unwrap(), out);

    let session = corpus_dir()
        .join("sessions")
        .join("cc-subagent-sonnet.json");
    let path = files.path("condense.toml");
    let out = condense(
        &[
            "replay",
            "--config",
            path.to_str().unwrap(),
            "--agent",
            "tight",
            session.to_str().unwrap(),
        ],
        "",
    )
    .unwrap();
    assert!(
        out.contains("token_threshold = 40000, target_tokens = 16000"),
        "{out}"
    );
}

#[test]
fn config_and_agent_errors_exit_non_zero_and_write_nothing() {
    let files = Session::new(AGENTS_CONFIG);
    let config = files.path("condense.toml");
    let config = config.to_str().unwrap();
    let session = corpus_dir()
        .join("sessions")
        .join("cc-subagent-sonnet.json");
    let session = session.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["compress", "--config", config, "--agent", "tihgt"],
            "unknown agent `tihgt`",
        ),
        (
            &["compress", "--agent", "tight"],
            "--agent tight needs --config",
        ),
        (
            &["demo", "--agent", "tight"],
            "--agent tight needs --config",
        ),
        (
            &["replay", "--agent", "tight", session],
            "--agent tight needs --config",
        ),
        (
            &["config", "--show", "--agent", "tight"],
            "--agent tight needs --config",
        ),
        (
            &["config", "--show", "--config", config, "--agent", "x"],
            "`tight`, `tools-only`",
        ),
        (&["config", "--schema", "--show"], "cannot be used with"),
        (
            &["config", "--schema", "--summarizer", "x.wasm"],
            "cannot be used with",
        ),
        (&["config"], "--schema"),
    ];
    for (args, expected) in cases {
        let (result, stdout) = condense_with_stdout(args, "[]");
        let e = result.expect_err(&format!("{args:?} must fail"));
        assert!(e.contains(expected), "{args:?}: {e}");
        assert!(stdout.is_empty(), "{args:?} wrote {stdout}");
    }

    // Bad files, through `compress` with a checkpoint and a report: the
    // error names the key by its full path, and no file is written.
    for (config, expected) in [
        (
            "[agents.review]\ntoken_treshold = 4\n",
            "agents.review.token_treshold: unknown field",
        ),
        (
            "[agents.review]\ntarget_tokens = 200000\n",
            "agents.review.target_tokens = 200000: must be between 1 and token_threshold - 1 (99999)",
        ),
        (
            "[agents.review.limits]\ntimeout_ms = 0\n",
            "agents.review.limits.timeout_ms = 0: must be between 10 and 600000",
        ),
        (
            "[tools]\nreadonly = [\"Read\"]\n",
            "tools.readonly: unknown field",
        ),
        (
            "[tools]\nmutating = \"Edit\"\n",
            "tools.mutating: invalid type",
        ),
        (
            "clear_mode = \"wipe\"\n",
            "clear_mode: unknown variant `wipe`",
        ),
    ] {
        let files = Session::new(config);
        for agent in [&[][..], &["--agent", "review"][..]] {
            let e = files.compress(&hostile_body("hi"), agent).unwrap_err();
            assert!(e.contains(expected), "{config}: {e}");
            assert!(
                !files.path("k.json").exists() && !files.path("report.json").exists(),
                "{config}"
            );
        }
        let path = files.path("condense.toml");
        let (result, stdout) = condense_with_stdout(
            &["config", "--show", "--config", path.to_str().unwrap()],
            "",
        );
        assert!(result.unwrap_err().contains(expected), "{config}");
        assert!(stdout.is_empty(), "{config}");
    }
}

#[test]
fn config_help_teaches_schema_and_show() {
    let help = condense(&["config", "--help"], "").unwrap();
    for text in [
        "--schema",
        "--show",
        "JSON Schema",
        "condense config --show > condense.toml",
        "condense config --show --config condense.toml --agent review",
        "condense config --schema > condense.schema.json",
    ] {
        assert!(help.contains(text), "{text} missing from\n{help}");
    }
    for command in ["compress", "replay", "demo", "config"] {
        let help = condense(&[command, "--help"], "").unwrap();
        assert!(
            help.contains("--agent <NAME>") && help.contains("[agents.NAME]"),
            "{command}: {help}"
        );
    }
}

/// The embedded compressor written to a file, so it loads as a third
/// party's would (its keys known only from its own exports).
fn compressor_from_a_path(dir: &Path) -> PathBuf {
    let path = dir.join("my_compressor.wasm");
    std::fs::write(&path, condense_embedded::COMPRESSOR).unwrap();
    path
}

#[test]
fn a_compressor_from_a_path_publishes_its_schema_and_checks_its_own_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = compressor_from_a_path(dir.path());
    let path_arg = path.to_str().unwrap();
    // The schema assembled from the component's `settings-schema` export is
    // the one built from the same compressor natively.
    let from_component = condense(&["config", "--schema", "--compressor", path_arg], "").unwrap();
    assert_eq!(
        from_component,
        condense(&["config", "--schema"], "").unwrap()
    );

    // A value the compressor refuses, checked by its `validate-settings`
    // before any request is read (the host does not know its keys).
    let config = dir.path().join("c.toml");
    std::fs::write(
        &config,
        format!("result_char_threshold = 5\n[components]\ncompressor = {path_arg:?}\n"),
    )
    .unwrap();
    let e = condense(
        &["compress", "--config", config.to_str().unwrap()],
        "{\"messages\": []}",
    )
    .unwrap_err();
    assert!(
        e.contains("result_char_threshold = 5: must be between 100 and 100000000")
            && e.contains("a key of the compressor"),
        "{e}"
    );
}

/// The demo's chart as the README shows it.
const README_CHART: &str = "host-example/assets/demo-cc-opus-b.svg";

/// `condense demo`, as the README runs it (no flags but where the chart
/// goes): the runtime plays the embedded session, and its side-by-side table
/// is the one `condense replay` prints for the same session at the same
/// settings — the figures measured on what the runtime sent equal the
/// replay's. The chart is the README's. Not a terminal: plain lines, no
/// progress bar.
#[test]
fn the_demo_runs_the_runtime_and_its_figures_are_the_replays() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("demo.svg");
    let demo = condense(&["demo", "--plot", chart.to_str().unwrap()], "").unwrap();
    assert!(!demo.contains('\r') && !demo.contains('\x1b'), "{demo}");

    let settings = condense_cli::demo::defaults();
    let recording = condense_tests::session("cc-opus-b");
    let stats = replay_middleware(
        embedded_middleware(),
        &settings.core,
        &settings.compressor_json(),
        &recording,
        |_, _| {},
    );
    assert!(stats.compactions >= 3, "{stats:?}");
    let mut table = Vec::new();
    condense_cli::demo::table(&stats, &mut table).unwrap();
    let table = String::from_utf8(table).unwrap();
    assert!(
        demo.contains(&table),
        "the demo's table:\n{demo}\nthe replay's:\n{table}"
    );
    // One line per compaction, at the calls the replay compacted.
    let compacted: Vec<usize> = (1..=stats.per_call.len())
        .filter(|&c| stats.per_call[c - 1].compacted)
        .collect();
    for call in &compacted {
        assert!(
            demo.lines()
                .any(|l| l.trim_start().starts_with(&format!("{call} ")) && l.contains("compacted")),
            "call {call}: {demo}"
        );
    }

    let config = dir.path().join("demo.toml");
    std::fs::write(&config, settings.to_toml().unwrap()).unwrap();
    let session = corpus_dir().join("sessions/cc-opus-b.json");
    let replayed = condense(
        &[
            "replay",
            "--config",
            config.to_str().unwrap(),
            session.to_str().unwrap(),
        ],
        "",
    )
    .unwrap();
    assert!(replayed.contains(&table), "{replayed}");

    // The chart: both curves, the threshold and the compactions, labelled.
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(demo.contains(&format!(
        "chart of the request tokens per call: {}",
        chart.display()
    )));
    for label in [
        "no compression",
        "condense",
        "threshold (40000 tokens)",
        "compaction",
        "model call",
    ] {
        assert!(svg.contains(label), "{label}");
    }
    let committed = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(README_CHART);
    assert!(
        std::fs::read_to_string(&committed).is_ok_and(|c| c == svg),
        "the README's chart is not the demo's: regenerate it with \
         `cargo run -p condense-cli -- demo --plot {README_CHART}`"
    );
}

#[test]
fn replay_plots_each_session() {
    let dir = tempfile::tempdir().unwrap();
    let a = corpus_dir().join("sessions/cc-opus-a.json");
    let c = corpus_dir().join("sessions/cc-opus-c.json");
    let plot = dir.path().join("chart.svg");
    let out = condense(
        &[
            "replay",
            "--plot",
            plot.to_str().unwrap(),
            a.to_str().unwrap(),
            c.to_str().unwrap(),
        ],
        "",
    )
    .unwrap();
    for stem in ["cc-opus-a", "cc-opus-c"] {
        let file = dir.path().join(format!("chart.{stem}.svg"));
        let svg = std::fs::read_to_string(&file).unwrap();
        assert!(svg.contains(&format!("{stem}: request tokens per model call")));
        assert!(out.contains(&file.display().to_string()), "{out}");
    }
    // One session: the file named.
    let out = condense(
        &[
            "replay",
            "--json",
            "--plot",
            plot.to_str().unwrap(),
            c.to_str().unwrap(),
        ],
        "",
    )
    .unwrap();
    let rows: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(rows[0]["chart"], plot.to_str().unwrap());
    assert!(
        std::fs::read_to_string(&plot)
            .unwrap()
            .contains("cc-opus-c")
    );
}

/// The summary text of a compacted history's first message.
fn summary_text(messages: &[Message]) -> String {
    assert!(messages[0].is_condense_summary() && messages[1].is_condense_summary());
    messages[0].joined_text()
}

/// `condense compact` on a journal: a new journal beside it, starting with
/// the summary pair and ending with the manual compaction's event; the
/// original untouched. Compacted again, the pair is recognised: its summary
/// is carried forward and only what followed it is folded (the counting
/// summarizer shows both).
#[test]
fn compact_writes_a_compacted_journal_and_a_second_compaction_carries_the_summary() {
    use condense_runtime::journal::{self, Event, Journal};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fix.jsonl");
    let mut journal = Journal::create(&path).unwrap();
    for message in condense_tests::session("cc-opus-c") {
        let event = match message.role {
            condense_model::Role::Assistant => Event::ModelResponse {
                message,
                usage: None,
                at_ms: None,
            },
            _ if message.is_result_carrier() => Event::ToolResult { message },
            _ => Event::User { message },
        };
        journal.append(&event).unwrap();
    }
    drop(journal);
    let original = std::fs::read(&path).unwrap();
    let events = dir.path().join("events.jsonl");
    let summarizer = guests::TEST_SUMMARIZER_CUSTOM;

    let out = condense(
        &[
            "compact",
            "--summarizer",
            summarizer,
            "--events",
            events.to_str().unwrap(),
            path.to_str().unwrap(),
        ],
        "",
    )
    .unwrap();
    let compacted = dir.path().join("fix.compacted.jsonl");
    assert!(
        out.contains(&format!("written to {}", compacted.display())),
        "{out}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        original,
        "the session is not touched"
    );
    let read = journal::read(&compacted).unwrap();
    let messages: Vec<Message> = read.messages().cloned().collect();
    let first = summary_text(&messages);
    assert_eq!(first.matches("COUNTING SUMMARIZER").count(), 1, "{first}");
    match read.events.last() {
        Some(Event::Compaction(c)) => {
            assert_eq!(c.trigger, condense_host::events::Cause::Manual);
            assert!(
                c.tokens_after < c.tokens_before && c.messages_folded > 0,
                "{c:?}"
            );
        }
        other => panic!("no compaction event last: {other:?}"),
    }
    assert_eq!(std::fs::read_to_string(&events).unwrap().lines().count(), 1);
    assert!(condense_model::invariants::check_pairs(&messages).is_ok());

    // Again: a file already there is refused, nothing written.
    let e = condense(&["compact", path.to_str().unwrap()], "").unwrap_err();
    assert!(e.contains("exists"), "{e}");

    let again = dir.path().join("again.jsonl");
    condense(
        &[
            "compact",
            "--summarizer",
            summarizer,
            "-o",
            again.to_str().unwrap(),
            compacted.to_str().unwrap(),
        ],
        "",
    )
    .unwrap();
    let messages: Vec<Message> = journal::read(&again).unwrap().messages().cloned().collect();
    let second = summary_text(&messages);
    assert_eq!(
        second.matches("COUNTING SUMMARIZER").count(),
        2,
        "the first summary carried, one fold added: {second}"
    );
    assert_eq!(
        second.matches(condense_model::SUMMARY_MARKER).count(),
        1,
        "the old pair is not summarised as conversation: {second}"
    );
}

/// `condense compact --in-place` on a request body: replaced in the same
/// format, the original kept as .bak byte for byte; a .bak already there
/// refuses the next one, touching nothing.
#[test]
fn compact_in_place_keeps_the_original_as_bak() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("request.json");
    let original = std::fs::read(corpus_dir().join("anthropic/cc-opus-a.request.json")).unwrap();
    std::fs::write(&path, &original).unwrap();
    let out = condense(&["compact", "--in-place", path.to_str().unwrap()], "").unwrap();
    assert!(out.contains("the original is"), "{out}");
    let bak = dir.path().join("request.json.bak");
    assert_eq!(std::fs::read(&bak).unwrap(), original);
    let body: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let parsed = Parsed::parse(body.clone(), Format::Anthropic).unwrap();
    assert!(
        parsed.messages()[0].is_condense_summary(),
        "{:.300}",
        body["messages"][0]
    );
    let before: Value = serde_json::from_slice(&original).unwrap();
    assert_eq!(
        body["system"], before["system"],
        "the system prompt is kept"
    );
    assert_eq!(body["tools"], before["tools"]);
    assert!(
        body["messages"].as_array().unwrap().len() < before["messages"].as_array().unwrap().len()
    );

    let compacted = std::fs::read(&path).unwrap();
    let e = condense(&["compact", "--in-place", path.to_str().unwrap()], "").unwrap_err();
    assert!(e.contains("request.json.bak exists"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), compacted);
    assert_eq!(std::fs::read(&bak).unwrap(), original);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no temporary file left"
    );
}

/// `condense proxy` with a flag it cannot serve with: an error naming the
/// flag, before it listens (and never a password from a URL).
#[test]
fn proxy_flags_that_cannot_work_are_named_before_it_listens() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().display().to_string();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--listen", "0.0.0.0:0"],
            "--listen 0.0.0.0:0: not a loopback address",
        ),
        (
            &["--store", "http://u:hunter2@db:6379"],
            "--store: not a redis:// URL",
        ),
        (
            &["--store", "rediss://:hunter2@db:6380"],
            "--store: rediss:// (TLS) is not built",
        ),
        (
            &["--token-env", "CONDENSE_TEST_NO_SUCH_VAR"],
            "--token-env CONDENSE_TEST_NO_SUCH_VAR: the variable is unset or empty",
        ),
        (
            &["--anthropic-upstream", "ftp://x"],
            "--anthropic-upstream ftp://x: not an http:// or https:// URL",
        ),
    ];
    for (flags, expected) in cases {
        // Loopback and a state directory of the test's, unless the case
        // gives its own.
        let mut args = vec!["proxy"];
        if !flags.contains(&"--listen") {
            args.extend(["--listen", "127.0.0.1:0"]);
        }
        if !flags.contains(&"--store") {
            args.extend(["--state-dir", &state]);
        }
        args.extend(flags);
        let error = condense(&args, "").expect_err(expected);
        assert!(error.contains(expected), "{flags:?}: {error}");
        assert!(!error.contains("hunter2"), "{flags:?}: {error}");
    }
}

/// `condense replay --probes`: the probes of a whole session, and
/// what the last request of a replay still names of them.
mod probes {
    use super::*;
    use condense_cli::replay::probes::{
        ProbeKind, measure, parent_and_name, probed_history, probes, request_opening,
    };
    use condense_model::recall::{Handle, Span};
    use condense_model::{Part, Role, ToolCall, ToolResult};

    fn call(id: &str, name: &str, arguments: Value) -> Part {
        Part::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.to_string(),
        })
    }

    fn result(id: &str, content: &str) -> Message {
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: id.into(),
                content: content.into(),
                is_error: false,
            })],
        }
    }

    /// A session with one of each kind, and a harness's echoes of a local
    /// command between its requests.
    fn hand_session() -> Vec<Message> {
        vec![
            Message::text(
                Role::User,
                "<system-reminder>context</system-reminder>\nPlease fix the failing parser test \
                 in the repo\nThe details follow.",
            ),
            Message {
                role: Role::Assistant,
                parts: vec![
                    call(
                        "r1",
                        "Read",
                        json!({"file_path": "/home/u/proj/src/parser.rs"}),
                    ),
                    call(
                        "b1",
                        "Bash",
                        json!({"command": "cargo test -p parser\n# and a second line"}),
                    ),
                ],
            },
            // A file's contents: no error line, however it reads.
            result(
                "r1",
                "     1→fn parse() -> Result<(), Error> {\n     2→    // error: not one",
            ),
            result(
                "b1",
                "Exit code 101\nCompiling parser v0.1.0\nerror[E0308]: mismatched types\n  --> \
                 src/parser.rs:3:5\ntest result: FAILED. 2 passed; 1 failed; build 88231",
            ),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Text("Fixing the type.".into()),
                    call("b2", "Bash", json!({"command": "cargo test -p parser"})),
                ],
            },
            result(
                "b2",
                "running 3 tests\nserver listening on db-7731.internal:5432 version=2.4.1\n\
                 test result: ok. 3 passed; 0 failed",
            ),
            Message::text(Role::User, "<command-name>/compact</command-name>"),
            Message::text(
                Role::User,
                "<local-command-stdout>Compacted (ctrl+o to see full summary)</local-command-stdout>",
            ),
            Message::text(
                Role::Assistant,
                "The tests pass against db-7731.internal:5432 with version=2.4.1.",
            ),
            Message::text(Role::User, "Now update the changelog too"),
            Message::text(Role::Assistant, "Done."),
        ]
    }

    fn texts(history: &[Message], kind: ProbeKind) -> Vec<String> {
        probes(history)
            .into_iter()
            .filter(|p| p.kind == kind)
            .map(|p| p.text)
            .collect()
    }

    #[test]
    fn probes_of_each_kind_are_drawn_from_the_history_harness_echoes_excepted() {
        let h = hand_session();
        assert_eq!(texts(&h, ProbeKind::File), ["src/parser.rs"]);
        // Openings of the person's requests (the reminder before the first
        // skipped); `/compact` and its stdout are the harness's.
        assert_eq!(
            texts(&h, ProbeKind::Request),
            [
                "please fix the failing parser test in the",
                "now update the changelog too"
            ]
        );
        // The failed run's error lines; the file's contents give none.
        assert_eq!(
            texts(&h, ProbeKind::Error),
            [
                "error[e0308]: mismatched types",
                "test result: failed. 2 passed; 1 failed; build 88231"
            ]
        );
        // One command, run twice: its first line; the outcome of its last run.
        assert_eq!(texts(&h, ProbeKind::Command), ["cargo test -p parser"]);
        assert_eq!(
            texts(&h, ProbeKind::Outcome),
            ["test result: ok. 3 passed; 0 failed"]
        );
        // Values a tool gave that the model used later; `88231` never was.
        assert_eq!(
            texts(&h, ProbeKind::Value),
            ["db-7731.internal:5432", "version=2.4.1"]
        );

        assert_eq!(parent_and_name("/a/b/c.rs").as_deref(), Some("b/c.rs"));
        assert_eq!(parent_and_name("c.rs").as_deref(), Some("c.rs"));
        assert_eq!(parent_and_name("src/**/*.rs"), None);
        for echo in [
            "<command-name>/compact</command-name>",
            "<local-command-stdout>done</local-command-stdout>",
            "<local-command-caveat>Caveat: ...</local-command-caveat>",
            "[Request interrupted by user for tool use]",
            "<task-notification>\n<task-id>b0</task-id>",
        ] {
            assert_eq!(request_opening(echo), None, "{echo}");
        }
    }

    #[test]
    fn the_measure_counts_what_a_request_names_and_what_a_handle_reads_back() {
        let h = hand_session();
        let drawn = probes(probed_history(&h));
        // The last call's request is everything before the last answer.
        assert_eq!(probed_history(&h).len(), h.len() - 1);
        // Uncompressed, every probe is named.
        let whole = measure(&drawn, probed_history(&h), &[]);
        assert_eq!(whole.total.named, drawn.len());
        assert!(whole.missing.is_empty());
        for kind in ProbeKind::ALL {
            let row = whole.of(kind);
            assert!(row.probes > 0 && row.named == row.probes, "{kind:?}");
        }
        // A request of its last request alone names that one, in any case
        // and spacing; a handle folding the first six messages reads back
        // every probe drawn from them, one of message 5 (the second run's
        // result) its outcome and values.
        let last = [Message::text(Role::User, "NOW   update the\nchangelog too")];
        let alone = measure(&drawn, &last, &[]);
        assert_eq!(alone.total.named, 1);
        assert_eq!(alone.of(ProbeKind::Request).named, 1);
        assert_eq!(alone.total.recallable, 1);
        let handle = |span| Handle {
            id: "f3a91c0b2d4e".into(),
            span,
        };
        let folded = measure(&drawn, &last, &[handle(Span::Fold { end: 6 })]);
        assert_eq!(folded.total.named, 1);
        assert_eq!(folded.total.recallable, drawn.len());
        let cleared = measure(&drawn, &last, &[handle(Span::Message(5))]);
        assert_eq!(cleared.total.recallable, 1 + 1 + 2);
        assert_eq!(cleared.of(ProbeKind::Value).recallable, 2);
        // Not inside a longer word or number.
        let near = [Message::text(
            Role::User,
            "src/parser.rsx xdb-7731.internal:5432",
        )];
        assert_eq!(measure(&drawn, &near, &[]).total.named, 0);
    }

    /// What ships keeps the artifact trail: at the defaults a user gets from
    /// `token_threshold = 40000` alone, the last request of every long corpus
    /// session names at least 97% of the files its tool calls named, the
    /// openings of its requests and the error lines its tools returned; the
    /// cost rule stays within 1.12× of the offline optimum at the summary
    /// size it uses, and the median cost at most 0.33 of no compression.
    #[test]
    fn the_defaults_keep_the_artifact_trail_of_every_long_session() {
        let files = Session::new("token_threshold = 40000\n");
        let config = files.path("condense.toml");
        let sessions: Vec<String> = ["cc-opus-a", "cc-opus-b", "cc-opus-c"]
            .iter()
            .map(|s| {
                let path = corpus_dir().join("sessions").join(format!("{s}.json"));
                path.to_str().unwrap().to_owned()
            })
            .collect();
        let mut args = vec![
            "replay",
            "--probes",
            "--optimal",
            "--json",
            "--config",
            config.to_str().unwrap(),
        ];
        args.extend(sessions.iter().map(String::as_str));
        let rows: Value = serde_json::from_str(&condense(&args, "").unwrap()).unwrap();
        let mut costs = Vec::new();
        for row in rows.as_array().unwrap() {
            let kinds = row["probes"]["kinds"].as_array().unwrap();
            let (named, probes) = kinds
                .iter()
                .filter(|k| ["files", "requests", "errors"].contains(&k["kind"].as_str().unwrap()))
                .fold((0, 0), |(n, p), k| {
                    (
                        n + k["named"].as_u64().unwrap(),
                        p + k["probes"].as_u64().unwrap(),
                    )
                });
            let session = &row["session"];
            let missing: Vec<&Value> = (row["probes"]["missing"].as_array().unwrap().iter())
                .filter(|m| {
                    m["kind"] != "command" && m["kind"] != "outcome" && m["kind"] != "value"
                })
                .collect();
            assert!(
                named as f64 >= 0.97 * probes as f64,
                "{session}: {named} of {probes} named; missing {missing:?}"
            );
            let over = row["optimal"]["condense_over_optimal"].as_f64().unwrap();
            assert!(over <= 1.12, "{session}: {over:.3}x the optimum");
            costs.push(row["cost_ratio"].as_f64().unwrap());
        }
        costs.sort_by(f64::total_cmp);
        assert!(costs[1] <= 0.33, "median cost {costs:?}");
    }

    /// The measure on a corpus session, at the defaults a user gets from
    /// `token_threshold = 40000` alone, and at a threshold the session never
    /// reaches, where nothing is lost.
    #[test]
    fn replay_probes_measures_the_last_request_of_a_corpus_session() {
        let session = corpus_dir().join("sessions").join("cc-opus-c.json");
        let session = session.to_str().unwrap();
        let files = Session::new("token_threshold = 40000\n");
        let config = files.path("condense.toml");
        let config = config.to_str().unwrap();
        let rows: Value = serde_json::from_str(
            &condense(
                &["replay", "--probes", "--json", "--config", config, session],
                "",
            )
            .unwrap(),
        )
        .unwrap();
        let row = &rows[0];
        assert!(row["stats"]["compactions"].as_u64().unwrap() > 0, "{row}");
        let probes = &row["probes"];
        let kinds = probes["kinds"].as_array().unwrap();
        assert_eq!(kinds.len(), ProbeKind::ALL.len());
        let n = |v: &Value, key: &str| v[key].as_u64().unwrap();
        let mut sum = 0;
        for (kind, row) in ProbeKind::ALL.iter().zip(kinds) {
            assert_eq!(row["kind"], kind.name(), "{row}");
            assert!(n(row, "probes") > 0, "{row}");
            assert!(n(row, "named") <= n(row, "probes"), "{row}");
            assert!(n(row, "recallable") >= n(row, "named"), "{row}");
            sum += n(row, "probes");
        }
        let total = &probes["total"];
        assert_eq!(n(total, "probes"), sum);
        assert_eq!(
            probes["missing"].as_array().unwrap().len() as u64,
            n(total, "probes") - n(total, "named")
        );
        // The table: the settings measured, one row per kind and the whole.
        let table = condense(&["replay", "--probes", "--config", config, session], "").unwrap();
        assert!(table.contains("summary_max_tokens = 2000"), "{table}");
        for kind in ProbeKind::ALL {
            assert!(
                table.contains(&format!("    {:<10}", kind.name())),
                "{table}"
            );
        }
        assert!(table.contains("    all"), "{table}");

        let never = Session::new("token_threshold = 1000000\n");
        let never = never.path("condense.toml");
        let rows: Value = serde_json::from_str(
            &condense(
                &[
                    "replay",
                    "--probes",
                    "--json",
                    "--config",
                    never.to_str().unwrap(),
                    session,
                ],
                "",
            )
            .unwrap(),
        )
        .unwrap();
        let total = &rows[0]["probes"]["total"];
        assert_eq!(rows[0]["stats"]["compactions"], 0);
        assert_eq!(n(total, "named"), sum, "{total}");

        let help = condense(&["replay", "--help"], "").unwrap();
        assert!(
            help.contains("--probes") && help.contains("token_threshold = 40000"),
            "{help}"
        );
    }
}
