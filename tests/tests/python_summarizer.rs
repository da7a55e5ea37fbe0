//! The Python summarizer (`guest/summarizer-python`), built with
//! componentize-py and run through the host beside the embedded compressor:
//! a summarizer in another language needs nothing but the WIT file.
//!
//! How it is built, and when these tests are skipped: `condense_tests::python`.

use condense_embedded as embedded;
use condense_host::{ComponentSource, Limits, Middleware, Runtime, Status};
use condense_model::tokens::estimate_text;
use condense_model::{Message, Role, SummaryRequest, Trigger};
use condense_tests::python::HEADER;
use condense_tests::{config_40k, session, summary_of};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Instant;

/// The middleware with the Python summarizer, built and loaded once per test
/// binary, or why the tests are skipped.
fn python_middleware() -> Result<&'static Middleware, &'static str> {
    static SHARED: OnceLock<Result<Middleware, String>> = OnceLock::new();
    let shared = SHARED.get_or_init(|| {
        let wasm = condense_tests::python::component(Path::new(env!("CARGO_TARGET_TMPDIR")))?
            .to_path_buf();
        let started = Instant::now();
        // The default limits: a componentize-py component (CPython inside)
        // must run under what every other summarizer gets.
        let runtime = Runtime::new(
            Limits::default(),
            ComponentSource::Embedded(embedded::COMPRESSOR),
            ComponentSource::Path(wasm),
        )
        .unwrap_or_else(|e| panic!("{e:#}"));
        println!(
            "loaded (compiled or read from the code cache) in {:.1?}",
            started.elapsed()
        );
        Ok(Middleware::new(runtime))
    });
    shared.as_ref().map_err(String::as_str)
}

/// The Python summarizer, or `return` after saying why the test is skipped.
macro_rules! python_or_skip {
    () => {
        match python_middleware() {
            Ok(middleware) => middleware,
            Err(why) => {
                condense_tests::skipped(why);
                return;
            }
        }
    };
}

/// One direct summarizer call through the host: the summary, or the
/// summarizer's error text.
fn summarize(middleware: &Middleware, request: &SummaryRequest) -> Result<String, String> {
    middleware
        .runtime()
        .summarize(request)
        .unwrap_or_else(|e| panic!("the call failed: {e}"))
}

fn request(messages: &[Message], max_tokens: u32, settings: &str) -> SummaryRequest {
    SummaryRequest {
        previous_summary: String::new(),
        messages: messages.to_vec(),
        max_tokens,
        language: "en".into(),
        settings: settings.into(),
    }
}

/// A message's first non-blank line of text, its whitespace collapsed: what
/// the summarizer quotes of a user message (clipped past 200 characters,
/// ending in `...`).
fn first_line(message: &Message) -> Option<String> {
    let joined = message.joined_text();
    let line = joined.lines().find(|l| !l.trim().is_empty())?;
    Some(line.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[test]
fn a_long_session_is_folded_by_the_python_summarizer() {
    let middleware = python_or_skip!();
    assert_eq!(
        middleware.runtime().summarizer().to_string(),
        "summarizer `summarizer-python.wasm`"
    );
    let messages = session("cc-opus-c");
    let config = config_40k();
    let started = Instant::now();
    let out = config.compress(middleware, &messages, None);
    println!("first compress call: {:.1?}", started.elapsed());
    assert_eq!(
        out.report.status(),
        Status::Compressed,
        "{:?}",
        out.report.reason()
    );
    let report = out.report.guest().expect("the compressor's report");
    assert_eq!(report.trigger, Trigger::Compacted, "{report:?}");
    assert!(report.newly_folded > 0, "{report:?}");
    assert_eq!(
        out.report.summary_by.as_ref().map(ToString::to_string),
        Some("summarizer `summarizer-python.wasm`".to_owned())
    );

    let summary = summary_of(out.checkpoint.as_ref().expect("a fold leaves a checkpoint"));
    println!("{summary}");
    assert!(summary.starts_with(&format!("{HEADER}\n")), "{summary}");
    let tokens = estimate_text(&summary);
    assert!(
        tokens <= config.core.summary_max_tokens,
        "{tokens} tokens over the budget of {}",
        config.core.summary_max_tokens
    );
    // The script kept to the budget itself, by whole lines: the compressor,
    // which cuts an over-budget summary mid-line, left its last line whole.
    let last = summary.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("- ran ") && last.ends_with(')'),
        "the tool-call line is last and whole: {last}"
    );

    // Every `asked` line quotes the first line of a folded user message, and
    // there is at least one.
    let asked: Vec<String> = messages[..report.boundary as usize]
        .iter()
        .filter(|m| m.role == Role::User)
        .filter_map(first_line)
        .collect();
    let quoted: Vec<&str> = summary
        .lines()
        .filter_map(|l| l.strip_prefix("- asked: "))
        .collect();
    assert!(!quoted.is_empty(), "no user request quoted:\n{summary}");
    for line in quoted {
        let quote = line.strip_suffix("...").unwrap_or(line);
        assert!(
            asked.iter().any(|a| a.starts_with(quote)),
            "not the first line of a folded user message: {line}"
        );
    }
}

#[test]
fn settings_change_the_summary() {
    let middleware = python_or_skip!();
    let messages = &session("cc-opus-c")[..80];
    let plain = summarize(middleware, &request(messages, 2_000, "{}")).expect("a summary");
    assert_eq!(
        summarize(middleware, &request(messages, 2_000, "{}")).as_ref(),
        Ok(&plain),
        "the same request gives the same bytes"
    );
    let starred =
        summarize(middleware, &request(messages, 2_000, r#"{"prefix": "* "}"#)).expect("a summary");
    assert_ne!(starred, plain);
    assert!(
        starred.lines().skip(1).all(|l| l.starts_with("* ")),
        "{starred}"
    );
    assert_eq!(
        starred.replace("\n* ", "\n- "),
        plain,
        "only the bullets differ"
    );

    // A key the script does not know is refused, naming it.
    let refused = summarize(middleware, &request(messages, 2_000, r#"{"prefx": "* "}"#))
        .expect_err("an unknown key");
    assert!(refused.contains("`prefx`"), "{refused}");
    let refused = summarize(
        middleware,
        &request(messages, 2_000, r#"{"prefix": "\n- "}"#),
    )
    .expect_err("a bullet that breaks the line");
    assert!(refused.contains("`prefix`"), "{refused}");
}

/// A summarizer in another language implements `summarizer-settings` too:
/// the host checks a config's settings for it at load and reads its schema.
#[test]
fn the_host_checks_its_settings_and_reads_its_schema_at_load() {
    let runtime = python_or_skip!().runtime();
    assert_eq!(
        runtime.validate_summarizer_settings(0, r#"{"prefix": "* "}"#),
        Ok(Ok(()))
    );
    let refused = runtime
        .validate_summarizer_settings(0, r#"{"max_line_chars": 5}"#)
        .unwrap()
        .unwrap_err();
    assert!(refused.contains("`max_line_chars`"), "{refused}");
    let schema = runtime.summarizer_settings_schema(0).unwrap().unwrap();
    let schema: serde_json::Value = serde_json::from_str(&schema).unwrap();
    assert_eq!(schema["properties"]["max_line_chars"]["minimum"], 20);
    assert_eq!(schema["additionalProperties"], false);
}

#[test]
fn the_summary_keeps_the_previous_one_and_fits_any_budget() {
    let middleware = python_or_skip!();

    // A later fold keeps what the earlier one wrote, under one header.
    let previous = format!("{HEADER}\n- asked: port the parser to Rust");
    let next = summarize(
        middleware,
        &SummaryRequest {
            previous_summary: previous.clone(),
            ..request(
                &[Message::text(Role::User, "Now add tests.\nDetails follow.")],
                500,
                "{}",
            )
        },
    )
    .expect("a summary");
    assert_eq!(next, format!("{previous}\n- asked: Now add tests."));

    // Code, digits, box drawing and CJK cost more than chars/4: the script
    // measures with condense's estimate, so each summary fits its budget.
    let messages = [
        Message::text(Role::User, "修复失败的测试，然后运行全部检查。"),
        Message::text(
            Role::Assistant,
            "│ ├── src/lib.rs:120:7 fn parse_u32(x: &[u8]) -> Result<u32, E> {",
        ),
        Message::text(
            Role::User,
            "0x7f 0x80 0xff 1234567890 12:34:56.789 --> ((a[b]))",
        ),
        Message::text(Role::Assistant, "getHTTPResponseCode() == 404 ✓ ✗ → ← ≥ ≤"),
    ];
    let many: Vec<Message> = messages.iter().cycle().take(200).cloned().collect();
    for budget in [6, 20, 50, 120, 400] {
        let summary = summarize(middleware, &request(&many, budget, "{}"))
            .unwrap_or_else(|e| panic!("budget {budget}: {e}"));
        assert!(summary.starts_with(HEADER), "{summary}");
        let tokens = estimate_text(&summary);
        assert!(
            tokens <= budget,
            "{tokens} tokens over {budget}:\n{summary}"
        );
    }

    // Too small for the header: an error, which the host reports (and a
    // chain falls through to its next summarizer).
    let tiny = estimate_text(HEADER) - 1;
    let refused = summarize(middleware, &request(&many, tiny, "{}")).expect_err("no room");
    assert!(refused.contains("budget"), "{refused}");
}
