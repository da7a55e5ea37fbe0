//! What `condense` logs: at its most verbose (`CONDENSE_LOG=trace`), every
//! model call is a line, and the model's API key is in none of them (the
//! HTTP client's wire dumps, which carry the `Authorization` header, are
//! filtered out whatever the level asks).

use crate::binary;
use condense_scripted_server::{Reply, TestServer};
use std::process::Command;

const KEY: &str = "sk-test-0123456789-SECRET";

#[test]
fn at_trace_every_model_call_is_logged_and_the_key_never_is() {
    let server = TestServer::answering({
        let mut calls = 0;
        move |_| {
            calls += 1;
            match calls {
                1 => condense_tests::chat_answer("## Current task\n- summary"),
                _ => Reply::json(401, r#"{"error": {"message": "bad key"}}"#),
            }
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("condense.toml");
    std::fs::write(
        &config,
        format!(
            "[components]\nsummarizers = [\"llm\", \"heuristic\"]\n\
             [llm]\nbase_url = \"{}\"\nmodel = \"scripted\"\n\
             api_key_env = \"CONDENSE_TEST_KEY\"\nmax_retries = 0\n",
            server.url("/v1")
        ),
    )
    .unwrap();
    let session = condense_tests::corpus_dir().join("sessions/cc-opus-b.json");
    let out = Command::new(binary())
        .arg("summarize")
        .arg(&session)
        .arg("--config")
        .arg(&config)
        .env("CONDENSE_LOG", "trace")
        .env("CONDENSE_TEST_KEY", KEY)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    let requests = server.requests();
    assert!(requests.len() >= 2, "{} model calls", requests.len());
    for request in &requests {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    assert!(
        stderr.contains("model call answered") && stderr.contains("model call failed"),
        "every model call is a line:\n{stderr}"
    );
    assert!(
        !stderr.contains(KEY) && !stderr.contains("SECRET"),
        "{stderr}"
    );
    assert!(!stdout.contains(KEY), "{stdout}");
}
