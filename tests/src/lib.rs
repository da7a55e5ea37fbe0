//! Shared helpers for the integration tests in `tests/`: where the test guests
//! are, runtimes shared by all tests of a binary (each component is compiled
//! once per test binary), and the corpus of recorded sessions.

use condense_compressor::settings::CompactWhen;
use condense_embedded as embedded;
use condense_host::formats::{Format, Parsed};
use condense_host::{ComponentSource, Compressed, Limits, Middleware, Runtime, SessionCheckpoint};
use condense_model::{CoreConfig, Message};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::Duration;

/// Paths of the test guest components (`tests/guests/*`), built by build.rs.
pub mod guests {
    include!(concat!(env!("OUT_DIR"), "/guests.rs"));
}

// `condense proxy` in process or as a process (see its module doc).
pub mod proxy;
// A headless Chromium, for the tests of the operator's page.
pub mod browser;
pub mod python;

// The survival benchmark (see its module doc).
pub mod survival;

// Key facts kept at the end of a replay (see its module doc).
pub mod recall;

// Identifier recall against Claude Code's own summaries (see its module doc).
pub mod identifiers;

/// The components built into the host, under the default limits.
pub fn embedded_middleware() -> &'static Middleware {
    static SHARED: OnceLock<Middleware> = OnceLock::new();
    SHARED.get_or_init(|| {
        middleware(
            Limits::default(),
            ComponentSource::Embedded(embedded::COMPRESSOR),
            ComponentSource::Embedded(embedded::SUMMARIZER),
        )
    })
}

/// The embedded compressor with the custom test summarizer loaded by path, as
/// a host swaps in a third-party summarizer without being rebuilt.
pub fn custom_summarizer_middleware() -> &'static Middleware {
    static SHARED: OnceLock<Middleware> = OnceLock::new();
    SHARED.get_or_init(|| {
        middleware(
            Limits::default(),
            ComponentSource::Embedded(embedded::COMPRESSOR),
            ComponentSource::Path(guests::TEST_SUMMARIZER_CUSTOM.into()),
        )
    })
}

/// The limits of [`hostile_middleware`]: small enough that the limit tests
/// are quick, large enough that a well-behaved call never comes near them.
pub fn hostile_limits() -> Limits {
    Limits {
        memory_bytes: 32 << 20,
        call_timeout: Duration::from_millis(300),
        ..Limits::default()
    }
}

/// The hostile compressor and the hostile summarizer, under [`hostile_limits`].
pub fn hostile_middleware() -> &'static Middleware {
    static SHARED: OnceLock<Middleware> = OnceLock::new();
    SHARED.get_or_init(|| {
        middleware(
            hostile_limits(),
            ComponentSource::Path(guests::TEST_COMPRESSOR_HOSTILE.into()),
            ComponentSource::Path(guests::TEST_SUMMARIZER_HOSTILE.into()),
        )
    })
}

/// The embedded summarizer, or the component the environment variable `var`
/// names (another summarizer, or an earlier build of this one, to compare):
/// how the benchmarks measure a summarizer against another.
pub fn summarizer_from_env(var: &str) -> &'static Middleware {
    let Ok(path) = std::env::var(var) else {
        return embedded_middleware();
    };
    println!("summarizer: {path}");
    let runtime = Runtime::new(
        Limits::default(),
        ComponentSource::Embedded(embedded::COMPRESSOR),
        ComponentSource::Path(path.into()),
    )
    .unwrap_or_else(|e| panic!("{var}: {e:#}"));
    Box::leak(Box::new(Middleware::new(runtime)))
}

/// The compaction events of a runtime journal.
pub fn compaction_events(
    events: &[condense_runtime::journal::Event],
) -> Vec<&condense_host::events::Compaction> {
    events
        .iter()
        .filter_map(|e| match e {
            condense_runtime::journal::Event::Compaction(c) => Some(c),
            _ => None,
        })
        .collect()
}

/// The first of `history[..from]`, `history[..from + 1]`, … whose request
/// compacts, each call given the checkpoint of the one before (`checkpoint`
/// for the first): how a session reaches its next compaction. Returns the
/// prefix length and that call.
pub fn next_compaction(
    middleware: &Middleware,
    config: &TestConfig,
    history: &[Message],
    from: usize,
    checkpoint: Option<&SessionCheckpoint>,
) -> Option<(usize, Compressed)> {
    let mut checkpoint = checkpoint.cloned();
    for n in from..=history.len() {
        let out = config.compress(middleware, &history[..n], checkpoint.as_ref());
        if out.report.compacted() {
            return Some((n, out));
        }
        checkpoint = out.checkpoint;
    }
    None
}

/// How the LLM summarizer's instruction after the agent's conversation
/// starts (`guest/summarizer-llm`, cache-friendly).
pub const SUMMARY_INSTRUCTION: &str = "[condense] Stop here";

/// Whether a recorded Chat Completions request body is the LLM summarizer
/// asking in the agent's conversation: its last message is the instruction.
pub fn asks_for_a_summary(body: &serde_json::Value) -> bool {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .is_some_and(|c| c.starts_with(SUMMARY_INSTRUCTION))
}

/// An OpenAI Chat Completions answer whose content is `text`, for a
/// scripted model server.
pub fn chat_answer(text: &str) -> condense_scripted_server::Reply {
    condense_scripted_server::Reply::json(
        200,
        serde_json::json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        })
        .to_string(),
    )
}

fn middleware(
    limits: Limits,
    compressor: ComponentSource,
    summarizer: ComponentSource,
) -> Middleware {
    Middleware::new(
        Runtime::new(limits, compressor, summarizer).unwrap_or_else(|e| panic!("{e:#}")),
    )
}

/// The recorded sessions in `tests/corpus/sessions`, by file stem.
pub fn session_names() -> Vec<String> {
    let dir = corpus_dir().join("sessions");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            (path.extension()? == "json").then(|| path.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    names.sort();
    names
}

/// A recorded session (an OpenAI-style message list) as model messages.
pub fn session(name: &str) -> Vec<Message> {
    let path = corpus_dir().join("sessions").join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let body = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let parsed =
        Parsed::parse(body, Format::OpenAi).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
    parsed.messages().to_vec()
}

pub fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// What a test compresses with: the fold knobs, and the embedded
/// compressor's own settings (sent to it as JSON).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestConfig {
    pub core: CoreConfig,
    pub settings: condense_compressor::Settings,
    /// The model can call `condense_recall`: the request names handles.
    pub recall: bool,
}

impl TestConfig {
    pub fn new(core: CoreConfig) -> TestConfig {
        TestConfig {
            core,
            settings: condense_compressor::Settings::default(),
            recall: false,
        }
    }

    /// The settings as the compress call hands them over.
    pub fn json(&self) -> String {
        self.settings.to_json()
    }

    /// The passes on, compacting at the threshold: the `cost` rule folds
    /// down to the floor, which leaves the passes nothing between the
    /// summary and the verbatim tail to rewrite.
    pub fn with_passes(self) -> TestConfig {
        TestConfig {
            settings: condense_compressor::Settings {
                compact_when: CompactWhen::Threshold,
                ..self.settings.with_passes()
            },
            ..self
        }
    }

    /// Compacting only at the threshold (the `cost` rule off).
    pub fn at_threshold(self) -> TestConfig {
        TestConfig {
            settings: condense_compressor::Settings {
                compact_when: CompactWhen::Threshold,
                ..self.settings
            },
            ..self
        }
    }

    pub fn without_passes(self) -> TestConfig {
        TestConfig {
            settings: self.settings.without_passes(),
            ..self
        }
    }

    /// One call through `middleware`.
    pub fn compress(
        &self,
        middleware: &Middleware,
        history: &[Message],
        checkpoint: Option<&SessionCheckpoint>,
    ) -> Compressed {
        middleware.compress_offering(history, &self.core, &self.json(), checkpoint, self.recall)
    }
}

/// The replay settings of `condense replay` (a 40k threshold), passes off.
pub fn config_40k() -> TestConfig {
    TestConfig::new(condense_config::AgentSettings::for_replay().core)
}

/// The summary text in a checkpoint the embedded compressor wrote.
pub fn summary_of(checkpoint: &SessionCheckpoint) -> String {
    condense_compressor::state::State::read(&checkpoint.checkpoint)
        .unwrap_or_else(|e| panic!("not the embedded compressor's checkpoint: {e}"))
        .summary
}

/// The text a test guest put in a checkpoint (format 0: its state is text).
pub fn text_of(checkpoint: &SessionCheckpoint) -> String {
    assert_eq!(
        checkpoint.checkpoint.version, 0,
        "a test guest's checkpoint"
    );
    String::from_utf8(checkpoint.checkpoint.state.clone()).expect("text")
}

/// Says that the running test passes without checking anything because a
/// tool it needs is missing (`why`), and counts it in the run's output.
///
/// `cargo test` shows a passing test's output only with `--nocapture`, and
/// has no hook at the end of a run, so a local green run would not say what
/// it left out. Every test that skips is in the one integration binary, and
/// libtest's `main` returns (or calls `exit`) after printing its result: so
/// the first skip registers a C `atexit` handler, which then prints every
/// skip on stderr, below the result, in the plain output of `cargo test`.
pub fn skipped(why: &str) {
    static SKIPPED: Mutex<Vec<String>> = Mutex::new(Vec::new());
    static REGISTER: Once = Once::new();
    // libtest runs each test on a thread named after it.
    let test = std::thread::current().name().unwrap_or("?").to_owned();
    eprintln!("skipped: {why}");
    SKIPPED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(format!("{test}: {why}"));

    unsafe extern "C" {
        /// The C library's, which the Rust standard library links on every
        /// platform the tests run on.
        fn atexit(callback: extern "C" fn()) -> std::ffi::c_int;
    }
    extern "C" fn report() {
        let skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = std::io::stderr().lock();
        // Nothing to do if stderr is gone; a panic here would abort.
        let _ = writeln!(
            out,
            "\nSKIPPED {} test(s), their tool missing \
             (CONDENSE_REQUIRE_*=1, as .ci/run sets, fails them instead):",
            skipped.len()
        );
        for line in skipped.iter() {
            let _ = writeln!(out, "  {line}");
        }
    }
    REGISTER.call_once(|| {
        // SAFETY: `report` is a plain function that does not unwind.
        let registered = unsafe { atexit(report) };
        assert_eq!(registered, 0, "atexit failed");
    });
}

/// A runtime middleware that records every request the agent's model is
/// sent, as the model got it.
#[derive(Clone, Default)]
pub struct SentRequests(Arc<Mutex<Vec<Vec<Message>>>>);

impl SentRequests {
    /// The requests so far, in order.
    pub fn requests(&self) -> Vec<Vec<Message>> {
        self.0.lock().unwrap().clone()
    }
}

impl condense_runtime::layers::Layer for SentRequests {
    fn after_model_call(
        &mut self,
        call: &condense_runtime::layers::ModelCall<'_>,
        _: &condense_runtime::model::ModelResponse,
    ) {
        self.0.lock().unwrap().push(call.request.messages.clone());
    }
}
