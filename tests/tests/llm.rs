//! The LLM summarizer through the host, against an OpenAI-compatible server
//! started here on 127.0.0.1 (`condense-scripted-server`: it answers from a
//! script and records every request): what the model is sent, where its
//! summary lands, every way a model call fails falling through to the
//! heuristic summarizer, the breaker, the host's time not being the
//! guest's, and the key staying the host's.

use condense_embedded as embedded;
use condense_host::llm::{Llm, LlmLimits};
use condense_host::timing::{Clock, ManualClock};
use condense_host::{ComponentSource, Compressed, Limits, Middleware, Runtime};
use condense_model::Message;
use condense_runtime::model::{Model, ModelRequest, OpenAiConfig, OpenAiLlm, OpenAiModel};
use condense_scripted_server::{Reply, TestServer};
use condense_tests::{
    SUMMARY_INSTRUCTION, asks_for_a_summary, chat_answer as answer, config_40k,
    embedded_middleware, next_compaction, session, summary_of,
};
use serde_json::json;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

const KEY: &str = "sk-test-0123456789-SECRET";

/// The chain `llm` → heuristic, the model at `server`, the summarizer
/// sending its own transcript of the folded messages.
fn middleware(server: &TestServer, llm: LlmLimits, limits: Limits) -> Middleware {
    middleware_with(server, llm, limits, own_transcript(), Clock::system())
}

/// The LLM summarizer's settings of [`middleware`].
fn own_transcript() -> serde_json::Value {
    json!({"context_tokens": 32_000, "cache_friendly": false})
}

/// [`middleware`] with the LLM summarizer's `settings`, the breaker's
/// cooldown measured on `clock`.
fn middleware_with(
    server: &TestServer,
    llm: LlmLimits,
    limits: Limits,
    settings: serde_json::Value,
    clock: Clock,
) -> Middleware {
    let model = OpenAiLlm::new(OpenAiConfig {
        api_key: Some(KEY.into()),
        max_retries: 0,
        ..OpenAiConfig::new(server.url("/v1"), "scripted-model")
    });
    let runtime = Runtime::with_summarizers(
        limits,
        ComponentSource::Embedded(embedded::COMPRESSOR),
        vec![
            ComponentSource::Named("llm", embedded::LLM_SUMMARIZER),
            ComponentSource::Embedded(embedded::SUMMARIZER),
        ],
    )
    .unwrap_or_else(|e| panic!("{e:#}"))
    .with_llm(Llm::new(Arc::new(model), llm).with_clock(clock))
    .with_summarizer_settings(0, settings.to_string());
    Middleware::new(runtime)
}

/// Never pausing: the failure tests count on every call reaching the model.
fn patient() -> LlmLimits {
    LlmLimits {
        call_timeout: Duration::from_secs(5),
        breaker_failures: 1_000,
        ..LlmLimits::default()
    }
}

/// cc-opus-c up to its first compaction at 40k: the shortest prefix whose
/// request folds (found once, through the embedded chain).
/// The replay's settings, compacting at the threshold: these tests are
/// about what the summarizer is given and writes, at the corpus points
/// where the threshold folds.
fn at_40k() -> condense_tests::TestConfig {
    config_40k().at_threshold()
}

fn prefixes() -> &'static (Vec<Message>, usize) {
    static FOUND: OnceLock<(Vec<Message>, usize)> = OnceLock::new();
    FOUND.get_or_init(|| {
        let history = session("cc-opus-c");
        let (first, _) = next_compaction(embedded_middleware(), &at_40k(), &history, 1, None)
            .expect("cc-opus-c compacts at 40k");
        (history, first)
    })
}

/// One call at the first compaction of cc-opus-c.
fn first_fold(middleware: &Middleware) -> Compressed {
    let (history, first) = prefixes();
    at_40k().compress(middleware, &history[..*first], None)
}

fn user_content(request: &condense_scripted_server::Recorded) -> String {
    let messages = request.body["messages"].as_array().expect("messages");
    assert_eq!(messages[0]["role"], "system");
    messages[1]["content"].as_str().unwrap().to_owned()
}

#[test]
fn the_model_gets_the_previous_summary_and_only_the_new_messages_and_its_summary_lands() {
    let server = TestServer::start([
        answer("## Current task\n- scripted summary one"),
        answer("## Current task\n- scripted summary two"),
    ]);
    let middleware = middleware(&server, patient(), Limits::default());
    let (history, first) = prefixes();
    let config = at_40k();

    let one = config.compress(&middleware, &history[..*first], None);
    assert!(one.report.compacted(), "{:?}", one.report);
    assert_eq!(
        one.report.summary_by.as_ref().map(ToString::to_string),
        Some("summarizer `llm`".to_owned())
    );
    let summary_one = summary_of(one.checkpoint.as_ref().unwrap());
    assert!(
        summary_one.starts_with("## Current task\n- scripted summary one"),
        "{summary_one}"
    );
    // What the model left out of the binding statements, the gate kept.
    assert!(
        summary_one.contains("## Kept verbatim\n- "),
        "{summary_one}"
    );
    // The summary is what the model sees.
    let sent = one.messages(&history[..*first]);
    assert!(
        sent.iter()
            .any(|m| m.joined_text().contains("scripted summary one"))
    );

    // The next compaction: the requests grow from the first one's
    // checkpoint until one folds again (no model call until then).
    let (second, two) = next_compaction(
        &middleware,
        &config,
        history,
        *first + 1,
        one.checkpoint.as_ref(),
    )
    .expect("cc-opus-c compacts twice at 40k");
    assert_eq!(server.requests().len(), 2, "one model call per compaction");
    let summary_two = summary_of(two.checkpoint.as_ref().unwrap());
    assert!(summary_two.starts_with("## Current task\n- scripted summary two"));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let boundary_one = one.checkpoint.as_ref().unwrap().checkpoint.boundary as usize;
    let boundary_two = two.checkpoint.as_ref().unwrap().checkpoint.boundary as usize;
    assert!(boundary_two <= second);
    let (first_request, second_request) = (user_content(&requests[0]), user_content(&requests[1]));
    assert!(first_request.starts_with("Previous summary:\n(none yet"));
    // The second request: the first summary, then only what the second
    // compaction folded.
    assert!(
        second_request.starts_with(&format!("Previous summary:\n{summary_one}\n\nNew messages")),
        "{second_request}"
    );
    let results = |range: std::ops::Range<usize>| -> Vec<String> {
        history[range]
            .iter()
            .flat_map(|m| m.tool_results())
            .map(|r| {
                r.content
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_owned()
            })
            .filter(|l| l.len() > 40)
            .collect()
    };
    let old = results(0..boundary_one);
    let new = results(boundary_one..boundary_two);
    assert!(!old.is_empty() && !new.is_empty());
    // Past the previous summary (whose trail may quote an old result's
    // line), nothing of the first fold is sent again.
    let after_summary = &second_request[format!("Previous summary:\n{summary_one}").len()..];
    assert!(old.iter().all(|l| !after_summary.contains(l.as_str())));
    assert!(new.iter().any(|l| after_summary.contains(l.as_str())));
}

/// Cache-friendly: the summarizer's request is the agent's last request
/// (rendered by the agent's own client, sent to the same server) as far as
/// the compaction folds — system messages, the previous summary pair, the
/// folded messages — then one instruction. A provider's prompt cache serves
/// all of it but the instruction.
#[test]
fn with_the_cache_friendly_setting_the_request_starts_as_the_agents() {
    let summaries = Arc::new(Mutex::new(0));
    let counter = summaries.clone();
    let server = TestServer::answering(move |request| {
        if asks_for_a_summary(&request.body) {
            let mut n = counter.lock().unwrap();
            *n += 1;
            answer(&format!("## Current task\n- summary {n}"))
        } else {
            answer("the agent's answer")
        }
    });
    let middleware = middleware_with(
        &server,
        patient(),
        Limits::default(),
        json!({"context_tokens": 200_000}),
        Clock::system(),
    );
    let mut agent = OpenAiModel::new(OpenAiConfig::new(server.url("/v1"), "scripted-model"));
    let (history, first) = prefixes();
    let config = at_40k();

    // The agent's loop: every request sent to the model, each call given
    // the checkpoint of the one before; at a compaction the summarizer
    // asks the model first.
    let mut send = |compressed: &Compressed, upto: usize| {
        let request = ModelRequest {
            messages: compressed.messages(&history[..upto]),
            tools: Vec::new(),
            max_output_tokens: 1_000,
        };
        agent.complete(&request).unwrap();
    };
    let mut checkpoint = None;
    let mut n = *first - 1;
    for fold in 1..=2 {
        let compaction = loop {
            let out = config.compress(&middleware, &history[..n], checkpoint.as_ref());
            if out.report.compacted() {
                break out;
            }
            send(&out, n);
            checkpoint = out.checkpoint;
            n += 1;
        };
        let requests = server.requests();
        let [.., agents, summarizers] = &requests[..] else {
            panic!("{} requests", requests.len())
        };
        assert_eq!(agents.body["model"], summarizers.body["model"]);
        let (theirs, ours) = (
            agents.body["messages"].as_array().unwrap(),
            summarizers.body["messages"].as_array().unwrap(),
        );
        let (instruction, prefix) = ours.split_last().unwrap();
        let instruction = instruction["content"].as_str().unwrap();
        assert!(
            instruction.starts_with(SUMMARY_INSTRUCTION),
            "fold {fold}: {:.300}",
            instruction
        );
        // The whole prefix is the agent's, message for message, and it is
        // what was folded: up to the new boundary, not the tail.
        assert!(prefix == &theirs[..prefix.len()], "fold {fold}");
        let boundary = compaction.report.guest().unwrap().boundary as usize;
        assert!(prefix.len() < theirs.len());
        assert!(prefix.len() + history[boundary..n - 1].len() >= theirs.len());
        if fold == 2 {
            // The previous summary pair, as the agent sent it.
            let pair = prefix
                .iter()
                .find_map(|m| {
                    m["content"]
                        .as_str()
                        .filter(|c| c.starts_with(condense_model::SUMMARY_MARKER))
                })
                .expect("the pair is in the prefix");
            assert!(pair.contains("- summary 1"), "{pair}");
        }
        assert_eq!(
            compaction
                .report
                .summary_by
                .as_ref()
                .map(ToString::to_string),
            Some("summarizer `llm`".to_owned())
        );
        let summary = summary_of(compaction.checkpoint.as_ref().unwrap());
        assert!(summary.contains(&format!("- summary {fold}")), "{summary}");
        send(&compaction, n);
        checkpoint = compaction.checkpoint;
        n += 1;
    }
    assert_eq!(*summaries.lock().unwrap(), 2);
}

#[test]
fn every_failed_model_call_falls_through_to_the_heuristic_summary_and_is_reported() {
    let cases: [(&str, Reply, &str); 5] = [
        (
            "a 500",
            Reply::json(500, r#"{"error": {"message": "upstream exploded"}}"#),
            "HTTP 500: upstream exploded",
        ),
        ("a timeout", Reply::Hang, "timed out"),
        (
            "a malformed body",
            Reply::json(200, "{not json"),
            "unexpected response: body: not JSON",
        ),
        (
            "a refusal",
            answer("I'm sorry, but I can't help with summarizing this conversation."),
            "the model refused: I'm sorry",
        ),
        (
            "an empty answer",
            answer("   "),
            "the model's answer is empty",
        ),
    ];
    for (what, reply, why) in cases {
        let server = TestServer::start([reply]);
        let limits = LlmLimits {
            call_timeout: Duration::from_millis(600),
            ..patient()
        };
        let out = first_fold(&middleware(&server, limits, Limits::default()));
        assert!(out.report.compacted(), "{what}: {:?}", out.report);
        assert_eq!(
            out.report.summary_by.as_ref().map(ToString::to_string),
            Some("embedded summarizer".to_owned()),
            "{what}"
        );
        let fell = out.report.fell_through.join("; ");
        assert!(
            fell.starts_with("summarizer `llm` refused to summarize: ") && fell.contains(why),
            "{what}: {fell}"
        );
        // The heuristic summary, as the heuristic summarizer writes it.
        let summary = summary_of(out.checkpoint.as_ref().unwrap());
        assert!(summary.contains("## Current task\n"), "{what}: {summary}");
        assert_eq!(server.requests().len(), 1, "{what}");
    }
}

#[test]
fn the_breaker_stops_calls_after_n_failures_and_resumes_after_the_cooldown() {
    let server = TestServer::start([
        Reply::json(500, r#"{"error": {"message": "down"}}"#),
        Reply::json(503, r#"{"error": {"message": "still down"}}"#),
        answer("## Current task\n- back"),
    ]);
    let limits = LlmLimits {
        breaker_failures: 2,
        breaker_cooldown: Duration::from_millis(800),
        ..patient()
    };
    let clock = ManualClock::new();
    let middleware = middleware_with(
        &server,
        limits,
        Limits::default(),
        own_transcript(),
        Clock::manual(&clock),
    );
    for _ in 0..2 {
        let out = first_fold(&middleware);
        assert!(out.report.fell_through[0].contains("HTTP 50"));
    }
    // Paused: the model is not called, and the report says why.
    let out = first_fold(&middleware);
    assert!(
        out.report.fell_through[0]
            .contains("model calls paused for another 800ms after 2 failures in a row"),
        "{:?}",
        out.report.fell_through
    );
    assert_eq!(server.requests().len(), 2);
    // Paused until the whole cooldown has passed.
    clock.advance(Duration::from_millis(799));
    let out = first_fold(&middleware);
    assert!(
        out.report.fell_through[0].contains("model calls paused for another 1ms"),
        "{:?}",
        out.report.fell_through
    );
    assert_eq!(server.requests().len(), 2);
    clock.advance(Duration::from_millis(1));
    let out = first_fold(&middleware);
    assert!(
        out.report.fell_through.is_empty(),
        "{:?}",
        out.report.fell_through
    );
    assert!(summary_of(out.checkpoint.as_ref().unwrap()).starts_with("## Current task\n- back"));
    assert_eq!(server.requests().len(), 3);
}

/// The guests' deadline is 400 ms; the model takes 1.5 s. The host's time
/// waiting for it is not the guests': the summary still lands.
#[test]
fn the_time_in_a_model_call_is_not_the_guests() {
    let server = TestServer::start([
        answer("## Current task\n- a slow model's summary").after(Duration::from_millis(1_500))
    ]);
    let limits = Limits {
        call_timeout: Duration::from_millis(400),
        ..Limits::default()
    };
    // Warm: compile once so that the measured call is the fold, not the
    // first instantiation.
    let middleware = middleware(&server, patient(), limits);
    let out = first_fold(&middleware);
    assert!(out.report.compacted(), "{:?}", out.report);
    assert!(
        out.report.fell_through.is_empty(),
        "{:?}",
        out.report.fell_through
    );
    assert!(summary_of(out.checkpoint.as_ref().unwrap()).contains("a slow model's summary"));
}

/// The key is sent as the Authorization header, and appears nowhere else:
/// not in the request body, not in what the guests see or write (the
/// summary, the checkpoint), not in the report (nor in a log line:
/// `condense-cli`'s tests/cli/logging.rs).
#[test]
fn the_api_key_stays_the_hosts() {
    let server = TestServer::start([
        answer("## Current task\n- summary"),
        Reply::json(401, r#"{"error": {"message": "bad key"}}"#),
    ]);
    let middleware = middleware(&server, patient(), Limits::default());
    let (ok, failed) = (first_fold(&middleware), first_fold(&middleware));
    let requests = server.requests();
    for request in &requests {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert!(!request.body.to_string().contains(KEY));
    }
    for out in [&ok, &failed] {
        let seen = [
            serde_json::to_string(&out.report).unwrap(),
            format!("{:?}", out.checkpoint),
            summary_of(out.checkpoint.as_ref().unwrap()),
        ];
        for text in &seen {
            assert!(!text.contains(KEY) && !text.contains("SECRET"), "{text}");
        }
    }
    assert!(failed.report.fell_through[0].contains("HTTP 401: bad key"));
}

/// A replay of each long corpus session with the LLM summarizer first in the
/// chain, its model answering with a summary built from what it is sent: every
/// compaction's summary is the model's, and the messages sent to the
/// summarizer add up to at most 1.5 times the session (a fold sends only what
/// it newly folds; nothing is summarized twice).
#[test]
fn a_replay_sends_each_message_to_the_summarizer_about_once() {
    for name in condense_tests::survival::CORPUS_SESSIONS {
        let server = TestServer::answering(|request| {
            let content = request.body["messages"][1]["content"]
                .as_str()
                .unwrap_or_default();
            let asked = content
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("USER: "))
                .unwrap_or("(nothing new)");
            let asked: String = asked.chars().take(200).collect();
            answer(&format!("## Current task\n- {asked}"))
        });
        let middleware = middleware(&server, patient(), Limits::default());
        let history = session(name);
        let config = at_40k();
        let (mut compactions, mut by_model, mut sent_to_summarizer) = (0, 0, 0u64);
        let stats = condense_replay::replay_middleware(
            &middleware,
            &config.core,
            &config.json(),
            &history,
            |_, out| {
                if out.report.compacted() {
                    compactions += 1;
                    by_model += usize::from(
                        out.report.summary_by.as_ref().map(ToString::to_string)
                            == Some("summarizer `llm`".to_owned()),
                    );
                    sent_to_summarizer += u64::from(out.report.guest().unwrap().newly_folded);
                }
            },
        );
        assert_eq!(stats.failed_open, 0, "{name}");
        assert!(compactions >= 2, "{name}: {compactions} compactions");
        assert_eq!(
            by_model, compactions,
            "{name}: every summary is the model's"
        );
        assert!(
            sent_to_summarizer as f64 <= 1.5 * history.len() as f64,
            "{name}: {sent_to_summarizer} messages sent to the summarizer for {}",
            history.len()
        );
        // One model call per compaction, or a few when a fold is chunked.
        assert!(server.requests().len() >= compactions, "{name}");
        println!(
            "{name}: {} messages, {compactions} compactions, {sent_to_summarizer} sent to the \
             summarizer, {} model calls, cost {:.3}",
            history.len(),
            server.requests().len(),
            stats.cost_ratio()
        );
    }
}

/// The model's summary leaves out a rule the person set: the gate appends
/// it, word for word, and the model's summary stays first.
#[test]
fn the_gate_appends_a_rule_the_model_dropped() {
    let rule = "Never push to main without approval from Dana Okafor-931.";
    let mut history = vec![Message::text(
        condense_model::Role::User,
        format!("Fix the flaky export test in services/export. {rule}"),
    )];
    for i in 0..40 {
        history.push(Message::text(
            condense_model::Role::Assistant,
            format!(
                "Step {i}: I looked at the exporter again. {}",
                "Nothing new. ".repeat(120)
            ),
        ));
        history.push(Message::text(condense_model::Role::User, "continue"));
    }
    let server = TestServer::start([answer(
        "## Current task\n- Fix the flaky export test in services/export.",
    )]);
    let middleware = middleware(&server, patient(), Limits::default());
    let config = condense_tests::TestConfig::new(condense_model::CoreConfig::for_threshold(8_000));
    let out = config.compress(&middleware, &history, None);
    assert!(out.report.compacted(), "{:?}", out.report);
    let summary = summary_of(out.checkpoint.as_ref().unwrap());
    assert!(
        summary.starts_with("## Current task\n- Fix the flaky export test in services/export.\n\n## Kept verbatim\n- "),
        "{summary}"
    );
    assert!(summary.contains(&format!("\n- {rule}")), "{summary}");
    // The request the model was sent had the rule in it: the model dropped it.
    assert!(user_content(&server.requests()[0]).contains(rule));
}

/// The model's summary leaves out the artifact trail — the file the agent
/// read and changed, the command it ran with its last outcome, the error a
/// run showed and the run that fixed it: the gate appends each, as the
/// heuristic summary writes it, after the person's rule.
#[test]
fn the_gate_appends_the_artifact_trail_the_model_dropped() {
    use condense_model::{Part, Role, ToolCall, ToolResult};
    let call = |id: &str, name: &str, arguments: String| Message {
        role: Role::Assistant,
        parts: vec![Part::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
        })],
    };
    let result = |id: &str, content: &str| Message {
        role: Role::Tool,
        parts: vec![Part::ToolResult(ToolResult {
            call_id: id.into(),
            content: content.into(),
            is_error: false,
        })],
    };
    let bash = |command: &str| json!({ "command": command }).to_string();
    let mut history = vec![Message::text(
        Role::User,
        "Fix the ledger rounding bug. Never push to main.",
    )];
    history.push(call(
        "r1",
        "Read",
        json!({"file_path": "/srv/ledger/src/round.rs"}).to_string(),
    ));
    history.push(result(
        "r1",
        &"fn round(x: f64) -> i64 { x as i64 }\n".repeat(40),
    ));
    history.push(call("t1", "Bash", bash("cargo test -p ledger")));
    history.push(result(
        "t1",
        "Exit code 101\nerror[E0308]: mismatched types in round_half_even\ntest result: FAILED. 3 passed; 1 failed",
    ));
    history.push(call("e1", "Edit", json!({"file_path": "/srv/ledger/src/round.rs", "old_string": "x as i64", "new_string": "x.round() as i64"}).to_string()));
    history.push(result("e1", "The file was updated."));
    history.push(call("t2", "Bash", bash("cargo test -p ledger")));
    history.push(result("t2", "test result: ok. 4 passed; 0 failed"));
    for i in 0..30 {
        history.push(Message::text(
            Role::Assistant,
            format!(
                "Step {i}: checked the ledger again. {}",
                "Nothing new. ".repeat(120)
            ),
        ));
        history.push(Message::text(Role::User, "continue"));
    }
    let server = TestServer::start([answer("## Current task\n- Fix the ledger rounding bug.")]);
    let middleware = middleware(&server, patient(), Limits::default());
    let config = condense_tests::TestConfig::new(condense_model::CoreConfig::for_threshold(8_000));
    let out = config.compress(&middleware, &history, None);
    assert!(out.report.compacted(), "{:?}", out.report);
    let summary = summary_of(out.checkpoint.as_ref().unwrap());
    let kept = summary
        .split_once("## Kept verbatim\n")
        .unwrap_or_else(|| panic!("nothing appended:\n{summary}"))
        .1;
    let lines: Vec<&str> = kept.lines().collect();
    let expected = [
        "- Never push to main.",
        "- /srv/ledger/src/round.rs (Read, Edit)",
        "- $ cargo test -p ledger → ok: test result: ok. 4 passed; 0 failed (×2)",
        "- error[E0308]: mismatched types in round_half_even ($ cargo test -p ledger; fixed)",
    ];
    for line in expected {
        assert!(lines.contains(&line), "{line} missing:\n{summary}");
    }
    let at = |line: &str| lines.iter().position(|l| *l == line);
    assert!(
        at(expected[0]) < at(expected[1]),
        "the rule comes first:\n{summary}"
    );
}

/// The chain as a config file names it (`condense-config`): its builtins
/// load under their names, so with the model down (a port nothing listens
/// on) the report and the compaction event name `heuristic` as the
/// summarizer that wrote the summary, and `llm` as the one that fell through.
#[test]
fn with_the_model_down_a_configured_chain_names_heuristic() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let settings = condense_config::AgentSettings::parse(&format!(
        "[components]\nsummarizers = [\"llm\", \"heuristic\"]\n\
         [llm]\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\nmax_retries = 0\n"
    ))
    .unwrap();
    let client = |llm: &condense_config::LlmSettings| {
        let (base_url, model) = llm.endpoint()?;
        let model = OpenAiLlm::new(OpenAiConfig {
            max_retries: llm.max_retries,
            ..OpenAiConfig::new(base_url.to_owned(), model.to_owned())
        });
        Ok(Arc::new(model) as Arc<dyn condense_host::llm::LanguageModel>)
    };
    let middleware = settings
        .middleware(&embedded::COMPONENTS, &client)
        .unwrap_or_else(|e| panic!("{e:#}"));
    let out = first_fold(&middleware);
    assert!(out.report.compacted(), "{:?}", out.report);
    assert_eq!(
        out.report.summary_by.as_ref().map(ToString::to_string),
        Some("summarizer `heuristic`".to_owned())
    );
    let fell = out.report.fell_through.join("; ");
    assert!(fell.starts_with("summarizer `llm` "), "{fell}");
    use condense_host::events::{Cause, Compaction};
    let event = Compaction::of(&out.report, 1, Cause::Threshold, 1).expect("compacted");
    assert_eq!(event.summary_by.as_deref(), Some("heuristic"));
}
