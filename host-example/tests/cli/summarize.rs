//! `condense summarize`: one binary tries any summarizer on a session,
//! chosen at run time — embedded, from a path, in Python — with no rebuild.

use condense_tests::{corpus_dir, guests};
use std::path::Path;

/// Runs `condense ARGS` with nothing on stdin.
fn condense(args: &[&str]) -> Result<String, String> {
    crate::condense(args, "")
}

/// One binary, one session, three summarizers loaded from where they are:
/// three different summaries.
#[test]
fn summarize_tries_any_summarizer_without_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let session = corpus_dir().join("sessions/cc-opus-b.json");
    let session = session.to_str().unwrap();
    let settings = dir.path().join("minimal.toml");
    std::fs::write(&settings, "heading = \"Asked so far:\"\n").unwrap();

    let heuristic = condense(&["summarize", session]).unwrap();
    assert!(heuristic.contains("## Current task\n"), "{heuristic}");
    let minimal = condense(&[
        "summarize",
        session,
        "--summarizer",
        guests::SUMMARIZER_MINIMAL,
        "--settings",
        settings.to_str().unwrap(),
    ])
    .unwrap();
    assert!(
        minimal.starts_with("Asked so far:\n- Work on bead spotter-dov."),
        "{minimal}"
    );
    let counting = condense(&[
        "summarize",
        session,
        "--summarizer",
        guests::TEST_SUMMARIZER_CUSTOM,
        "--upto",
        "20",
    ])
    .unwrap();
    // The first 20 messages (the session has no system message to leave out).
    assert!(
        counting.starts_with("COUNTING SUMMARIZER: 20 messages"),
        "{counting}"
    );
    for out in [&heuristic, &minimal, &counting] {
        let figures = out.lines().last().unwrap();
        assert!(
            figures.starts_with("--- ") && figures.contains(" tokens (budget 5000) in "),
            "{figures}"
        );
    }

    // Bad input: named, nothing printed.
    let error = condense(&["summarize", session, "--upto", "0"]).unwrap_err();
    assert!(
        error.contains("--upto 0: the session has 292 messages"),
        "{error}"
    );
    std::fs::write(&settings, "[1, 2]").unwrap();
    let json = dir.path().join("bad.json");
    std::fs::write(&json, "[1, 2]").unwrap();
    let error =
        condense(&["summarize", session, "--settings", json.to_str().unwrap()]).unwrap_err();
    assert!(error.contains("must be an object"), "{error}");
}

/// The same host binary writes four different summaries of one session with
/// four summarizers, chosen at run time with no rebuild in between: the
/// embedded heuristic one, the embedded LLM one (its model a scripted
/// OpenAI-compatible server on 127.0.0.1), the SDK's example and this
/// Python one (`condense summarize`, in process).
#[test]
fn one_binary_writes_four_summaries_with_four_summarizers() {
    let python = match condense_tests::python::component(Path::new(env!("CARGO_TARGET_TMPDIR"))) {
        Ok(path) => path.to_str().unwrap().to_owned(),
        Err(why) => return condense_tests::skipped(why),
    };
    // The whole session does not fit the model's 32k context in one
    // request: the LLM summarizer folds it in chunks, each answered alike.
    let server = condense_scripted_server::TestServer::start((0..40).map(|_| {
        condense_tests::chat_answer("## Current task\n- the model's summary of the session")
    }));
    let dir = tempfile::tempdir().unwrap();
    let llm_config = dir.path().join("llm.toml");
    std::fs::write(
        &llm_config,
        format!(
            "[components]\nsummarizers = [\"llm\"]\n[llm]\nbase_url = \"{}\"\nmodel = \"scripted\"\n",
            server.url("/v1")
        ),
    )
    .unwrap();
    let session = condense_tests::corpus_dir().join("sessions/cc-opus-b.json");
    let session = session.to_str().unwrap();
    let condense = |args: &[&str]| -> String {
        let args: Vec<&str> = ["summarize", session]
            .into_iter()
            .chain(args.iter().copied())
            .collect();
        let out = crate::condense(&args, "").unwrap_or_else(|e| panic!("{e}"));
        // The summary, without the line of figures.
        out.rsplit_once("\n\n--- ")
            .map(|(s, _)| s.to_owned())
            .unwrap()
    };
    let summaries = [
        condense(&[]),
        condense(&["--config", llm_config.to_str().unwrap()]),
        condense(&["--summarizer", condense_tests::guests::SUMMARIZER_MINIMAL]),
        condense(&["--summarizer", &python]),
    ];
    let starts = [
        "## User requests\n- continue\n",
        "## Current task\n- the model's summary of the session",
        "What the user asked:\n",
        condense_tests::python::HEADER,
    ];
    for (summary, start) in summaries.iter().zip(starts) {
        assert!(summary.starts_with(start), "{start}: {summary}");
    }
    // "continue" goes on with the task: it is no current task.
    assert!(
        summaries[0].contains("## Current task\n- Work on bead spotter-dov."),
        "{}",
        summaries[0]
    );
    for (i, a) in summaries.iter().enumerate() {
        for b in &summaries[i + 1..] {
            assert_ne!(a, b);
        }
    }
    // Only the LLM summary asked the model: one call per chunk of the
    // session (its tool results shortened) at the default 32k context.
    let calls = server.requests().len();
    assert!((2..40).contains(&calls), "{calls} model calls");
}
