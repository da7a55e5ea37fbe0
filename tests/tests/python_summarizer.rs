//! The Python summarizer (`guest/summarizer-python`), built with
//! componentize-py and run through the host beside the embedded compressor:
//! a summarizer in another language needs nothing but the WIT file.
//!
//! componentize-py is not a cargo dependency. The tests find it through
//! `COMPONENTIZE_PY` (the path of the executable) or on PATH; without it they
//! print why they are skipped and pass, unless `CONDENSE_REQUIRE_PYTHON=1`
//! (CI sets it), where a missing componentize-py fails them.

use condense_embedded as embedded;
use condense_host::{ComponentSource, Limits, Middleware, Runtime, Status};
use condense_model::tokens::estimate_text;
use condense_model::{Message, Role, SummaryRequest, Trigger};
use condense_tests::{config_40k, session, summary_of};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

/// The first line of every summary the Python summarizer writes.
const HEADER: &str = "Summary (python):";

/// The Python summarizer component, built once per test binary, or why the
/// tests are skipped.
fn python_component() -> Result<&'static Path, &'static str> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let tool = match componentize_py() {
            Ok(tool) => tool,
            Err(why) if std::env::var("CONDENSE_REQUIRE_PYTHON").as_deref() == Ok("1") => {
                panic!("CONDENSE_REQUIRE_PYTHON=1, but {why}")
            }
            Err(why) => return Err(why),
        };
        Ok(build(&tool))
    });
    built.as_deref().map_err(String::as_str)
}

/// The middleware with the Python summarizer, built and loaded once per test
/// binary, or why the tests are skipped.
fn python_middleware() -> Result<&'static Middleware, &'static str> {
    static SHARED: OnceLock<Result<Middleware, String>> = OnceLock::new();
    let shared = SHARED.get_or_init(|| {
        let wasm = python_component()?.to_path_buf();
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

/// `$COMPONENTIZE_PY`, or `componentize-py` on PATH.
fn componentize_py() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("COMPONENTIZE_PY") {
        let path = PathBuf::from(path);
        // Named but not there is a broken setup, not a reason to skip.
        assert!(
            path.is_file(),
            "COMPONENTIZE_PY={} is not a file (cargo runs the tests in tests/: give an absolute path)",
            path.display()
        );
        return Ok(path);
    }
    let dirs = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&dirs)
        .map(|dir| dir.join("componentize-py"))
        .find(|path| path.is_file())
        .ok_or_else(|| "componentize-py is neither in COMPONENTIZE_PY nor on PATH".to_owned())
}

/// Builds `guest/summarizer-python` into this package's directory under
/// `target/tmp`, and returns the component's path.
///
/// A build is reused while its inputs are unchanged: componentize-py's output
/// differs from one build to the next, so a rebuild would also miss
/// wasmtime's code cache and compile the component again (about 30 s).
fn build(tool: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("summarizer-python");
    let (wasm, stamp) = (dir.join("summarizer-python.wasm"), dir.join("inputs"));
    let app = read(&root.join("guest/summarizer-python/app.py"));
    let mut wit: Vec<PathBuf> = std::fs::read_dir(root.join("wit"))
        .expect("the wit directory")
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "wit"))
        .collect();
    wit.sort();
    let mut inputs = vec![
        run(Command::new(tool).arg("--version")),
        tool.display().to_string().into_bytes(),
        app.clone(),
    ];
    inputs.extend(wit.iter().map(|path| read(path)));
    let inputs = inputs.join(&b"\n--\n"[..]);
    if wasm.is_file() && std::fs::read(&stamp).is_ok_and(|built| built == inputs) {
        println!("reusing {} (its inputs are unchanged)", wasm.display());
        return wasm;
    }
    let _ = std::fs::remove_file(&stamp);
    // componentize-py writes `__pycache__` beside the app it imports at build
    // time: build from a fresh copy, so the source tree stays clean.
    let src = dir.join("src");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    write(&src.join("app.py"), &app);
    let started = Instant::now();
    run(Command::new(tool)
        .arg("-d")
        .arg(root.join("wit"))
        .args(["-w", "summarizer-world", "componentize", "-p"])
        .arg(&src)
        .args(["app", "-o"])
        .arg(&wasm));
    let size = std::fs::metadata(&wasm).map_or(0, |m| m.len());
    println!(
        "built {} ({:.1} MiB) in {:.1?}",
        wasm.display(),
        size as f64 / f64::from(1 << 20),
        started.elapsed()
    );
    write(&stamp, &inputs);
    wasm
}

/// The stdout of `command`, which must succeed.
fn run(command: &mut Command) -> Vec<u8> {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
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

/// The same host binary writes four different summaries of one session with
/// four summarizers, chosen at run time with no rebuild in between: the
/// embedded heuristic one, the embedded LLM one (its model a scripted
/// OpenAI-compatible server on 127.0.0.1), the SDK's example and this
/// Python one (`condense summarize`, in process).
#[test]
fn one_binary_writes_four_summaries_with_four_summarizers() {
    let python = match python_component() {
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
        let out = condense_tests::condense(&args, "").unwrap_or_else(|e| panic!("{e}"));
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
        "## User requests\n- Work on bead spotter-dov.",
        "## Current task\n- the model's summary of the session",
        "What the user asked:\n",
        HEADER,
    ];
    for (summary, start) in summaries.iter().zip(starts) {
        assert!(summary.starts_with(start), "{start}: {summary}");
    }
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
