//! The `condense` command line, driven in-process through
//! `condense_host::cli::run` with real files: the configuration, the
//! checkpoint file between calls, the report, swapped components.

use condense_host::cli;
use condense_host::formats::{Format, Parsed};
use condense_host::replay::{ReplayStats, Step, replay, replay_middleware};
use condense_model::{Checkpoint, Config, Message};
use condense_tests::{corpus_dir, embedded_middleware, guests, session_names};
use serde_json::Value;
use std::path::PathBuf;

/// Runs `condense ARGS` with `stdin`; returns stdout, or the error.
fn condense(args: &[&str], stdin: &str) -> Result<String, String> {
    let argv = std::iter::once("condense")
        .chain(args.iter().copied())
        .map(Into::into);
    let mut out = Vec::new();
    cli::run(argv, &mut stdin.as_bytes(), &mut out).map_err(|e| format!("{e:#}"))?;
    Ok(String::from_utf8(out).expect("stdout is UTF-8"))
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

    /// One model call: `condense compress --config C --checkpoint K --report R`.
    fn compress(&self, body: &str, extra: &[&str]) -> Result<String, String> {
        let (config, checkpoint, report) = (
            self.path("condense.toml"),
            self.path("k.json"),
            self.path("report.json"),
        );
        let mut args = vec![
            "compress",
            "--config",
            config.to_str().unwrap(),
            "--checkpoint",
            checkpoint.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        condense(&args, body)
    }

    fn report(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.path("report.json")).unwrap()).unwrap()
    }

    fn checkpoint(&self) -> Option<Checkpoint> {
        std::fs::read(self.path("k.json"))
            .ok()
            .map(|b| serde_json::from_slice(&b).unwrap())
    }
}

const CONFIG_40K: &str =
    "token_threshold = 40000\ntarget_tokens = 16000\nkeep_recent_tokens = 8000\n";

fn config_40k() -> Config {
    let config = condense_host::settings::Settings::parse(CONFIG_40K)
        .unwrap()
        .compress;
    assert_eq!(
        config,
        condense_host::settings::Settings::for_replay().compress
    );
    config
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
        let stats = replay(&history, |request, _| {
            let body = serde_json::to_string(&raw[..request.len()]).unwrap();
            let out = files
                .compress(&body, &[])
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let report = files.report();
            let messages = parse(&out);
            sent_by_cli.push(messages.clone());
            Step {
                messages,
                checkpoint: files.checkpoint(),
                compacted: report["guest"]["trigger"] == "compacted",
                failed_open: report["status"] != "compressed",
            }
        });

        let mut call = 0;
        let in_process =
            replay_middleware(embedded_middleware(), &config_40k(), &history, |_, sent| {
                assert_eq!(
                    sent.messages, sent_by_cli[call],
                    "{name}: call {call} differs from the CLI's"
                );
                call += 1;
            });
        assert_same_figures(&name, &stats, &in_process);
        assert_eq!(stats.failed_open, 0, "{name}");
        assert!(
            stats.cache_breaks <= 6,
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
    assert!((a.cost - b.cost).abs() < 1e-6, "{name}");
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

#[test]
fn bad_input_is_an_error_and_writes_nothing() {
    let files = Session::new(CONFIG_40K);
    for (body, expected) in [
        ("{not json", "stdin: not valid JSON"),
        (
            r#"{"messages": [{"role": "wizard", "content": "hi"}]}"#,
            "wizard",
        ),
        (r#"{"messages": 3}"#, "messages"),
    ] {
        let e = files.compress(body, &[]).unwrap_err();
        assert!(e.contains(expected), "{body}: {e}");
        assert!(
            !files.path("k.json").exists() && !files.path("report.json").exists(),
            "{body}"
        );
    }
    let e = condense(&["compress", "--config", "/nonexistent/c.toml"], "[]").unwrap_err();
    assert!(e.contains("/nonexistent/c.toml"), "{e}");
    let bad = Session::new("token_treshold = 5\n");
    let e = bad.compress("[]", &[]).unwrap_err();
    assert!(e.contains("token_treshold"), "{e}");
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
    assert_eq!(
        files.report()["guest"]["trigger"],
        "compacted",
        "recomputed, not reused"
    );
    assert_ne!(
        files.checkpoint().unwrap().prefix_hash,
        checkpoint.prefix_hash
    );
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
