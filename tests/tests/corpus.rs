//! Every recorded session, replayed call by call through the host and the
//! embedded components, with the invariants checked on every single call —
//! independently of the middleware's own validation.

use condense_host::formats::{Format, Parsed};
use condense_host::timing::cold_calls;
use condense_host::{Middleware, Status};
use condense_model::invariants::{History, check_items};
use condense_model::tokens::{estimate_messages, estimate_total};
use condense_model::{CoreConfig, Message, Part, PassReport, Trigger};
use condense_replay::optimal::optimum;
use condense_replay::{Expiry, Prices, ReplayStats, replay_middleware, replay_middleware_timed};
use condense_tests::{
    TestConfig, config_40k, corpus_dir, embedded_middleware, session, session_names,
};

/// Replays `history` and asserts, on every call: no failure, a valid output,
/// signed thinking byte-exact, the request within the threshold, the history
/// untouched, and between compactions a request that extends the previous one.
/// Returns the figures and what the passes did, summed over the compactions.
fn replay_checked(
    name: &str,
    history: &[Message],
    config: &TestConfig,
    middleware: &Middleware,
) -> (ReplayStats, PassReport) {
    let pristine = history.to_vec();
    let mut passes = PassReport::default();
    let mut previous: Option<Vec<Message>> = None;
    let mut call = 0;
    let json = config.json();
    let stats = replay_middleware(middleware, &config.core, &json, history, |request, sent| {
        call += 1;
        let at = format!("{name}, call {call} ({} messages)", request.len());
        assert_ne!(
            sent.report.status(),
            Status::FailedOpen,
            "{at}: {:?}",
            sent.report.reason()
        );
        let report = sent
            .report
            .guest()
            .expect("a compressed call has the guest's report");
        check_items(History::whole(request), &sent.items, report.cut())
            .unwrap_or_else(|v| panic!("{at}: {v}"));
        let messages = sent.messages(request);

        let signed_in = signed_thinking(request);
        for part in signed_thinking(&messages) {
            assert!(
                signed_in.contains(&part),
                "{at}: a signed thinking block was altered"
            );
        }

        let tokens = estimate_total(&messages);
        let largest = estimate_messages(request).into_iter().max().unwrap_or(0);
        assert!(
            tokens <= u64::from(config.core.token_threshold)
                || u64::from(largest) > u64::from(config.core.target_tokens),
            "{at}: request of {tokens} tokens over the threshold {}",
            config.core.token_threshold
        );

        if report.trigger == Trigger::Compacted {
            passes.reasoning_pruned += report.passes.reasoning_pruned;
            passes.steps_elided += report.passes.steps_elided;
            passes.results_cleared += report.passes.results_cleared;
            passes.tokens_saved += report.passes.tokens_saved;
        }
        if let Some(prev) = previous
            .as_ref()
            .filter(|_| report.trigger != Trigger::Compacted)
        {
            assert!(
                messages.starts_with(prev),
                "{at}: cache break without a compaction"
            );
        }
        previous = Some(messages);
    });
    assert_eq!(
        history,
        pristine.as_slice(),
        "{name}: the durable history was modified"
    );
    (stats, passes)
}

fn signed_thinking(messages: &[Message]) -> Vec<Part> {
    messages
        .iter()
        .flat_map(|m| &m.parts)
        .filter(|p| matches!(p, Part::Thinking(t) if t.signature.is_some()))
        .cloned()
        .collect()
}

const LONG_SESSION_CALLS: usize = 100;

/// The defaults (the `cost` rule, passes off), and the passes on at the
/// threshold: every corpus replay runs both ways.
fn both(config: TestConfig) -> [(&'static str, TestConfig); 2] {
    [
        ("passes off", config.clone().without_passes()),
        // `with_passes` compacts at the threshold.
        ("passes on", config.with_passes()),
    ]
}

/// The long sessions at other cache prices: a 1-hour cache (writes 2×),
/// cheaper reads (0.05×), and OpenAI's (reads 0.5×, writes at the input
/// price). Every call is checked as at the defaults, and the `cost` rule
/// stays within 15% of the optimum at the same prices.
#[test]
fn the_long_sessions_meet_the_cost_target_at_other_cache_prices() {
    let middleware = embedded_middleware();
    for (read, write) in [(100, 2000), (50, 1250), (500, 1000)] {
        let mut config = config_40k();
        config.settings.cache_read_permille = read;
        config.settings.cache_write_permille = write;
        let prices = Prices {
            read: config.settings.read_price(),
            write: config.settings.write_price(),
            ..Prices::DEFAULT
        };
        for name in session_names() {
            let history = session(&name);
            let (stats, _) = replay_checked(&name, &history, &config, middleware);
            let stats = stats.with_prices(prices);
            if stats.calls < LONG_SESSION_CALLS {
                continue;
            }
            let summary = stats.mean_summary_tokens().unwrap_or(0);
            let optimal = optimum(&history, &config.core, summary, prices, &[])
                .unwrap_or_else(|| panic!("{name}: no schedule fits the threshold"));
            let at = format!("{name} at reads {read}‰, writes {write}‰");
            assert!(optimal.cost <= stats.cost() * (1.0 + 1e-9), "{at}");
            assert!(
                stats.cost() <= 1.15 * optimal.cost,
                "{at}: condense {:.3} is {:.2}x the optimum {:.3}",
                stats.cost_ratio(),
                stats.cost() / optimal.cost,
                optimal.cost_ratio()
            );
        }
    }
}

/// A threshold at a quarter of the session, so that even the short sessions
/// compact several times.
fn config_forcing(history: &[Message]) -> TestConfig {
    let threshold = (estimate_total(history) / 4).max(2_000) as u32;
    let target = threshold * 2 / 5;
    TestConfig::new(CoreConfig {
        token_threshold: threshold,
        target_tokens: target,
        keep_recent_tokens: target / 2,
        summary_max_tokens: (target / 4).max(64),
        ..CoreConfig::default()
    })
}

#[test]
fn every_session_at_40k_meets_the_cost_and_cache_targets() {
    let middleware = embedded_middleware();
    let mut figures = String::new();
    for (mode, config) in both(config_40k()) {
        let mut long_costs = Vec::new();
        let mut saved = 0;
        for name in session_names() {
            let history = session(&name);
            let (stats, passes) = replay_checked(&name, &history, &config, middleware);
            saved += passes.tokens_saved;
            // The offline optimum, with condense's own summary size, is a
            // floor: no schedule of folds costs less. It does not model the
            // passes (which shrink what is kept), so the floor is asserted
            // for the fold alone, the default.
            let summary = stats.mean_summary_tokens().unwrap_or(0);
            let optimal = optimum(&history, &config.core, summary, Prices::DEFAULT, &[])
                .unwrap_or_else(|| panic!("{name}: no schedule fits the threshold"));
            let priced_alike = (optimal.baseline_cost - stats.baseline_cost()).abs()
                < 1e-6 * stats.baseline_cost();
            assert!(
                priced_alike,
                "{name}: the optimum prices the baseline as the replay does"
            );
            if mode == "passes off" {
                assert!(
                    optimal.cost <= stats.cost() * (1.0 + 1e-9),
                    "{name}: the optimum {:.3} costs more than condense {:.3}",
                    optimal.cost_ratio(),
                    stats.cost_ratio()
                );
                // The `cost` rule, on a session long enough to price it,
                // stays within 15% of the optimum.
                if stats.calls >= LONG_SESSION_CALLS {
                    assert!(
                        stats.cost() <= 1.15 * optimal.cost,
                        "{name}: condense {:.3} is {:.2}x the optimum {:.3}",
                        stats.cost_ratio(),
                        stats.cost() / optimal.cost,
                        optimal.cost_ratio()
                    );
                }
            }
            figures.push_str(&format!(
                "{mode:<10} {name:<24} calls {:>4}  history {:>7}  compactions {}  breaks {}  peak {:>6}  cost {:.3}  {passes:?}\n",
                stats.calls,
                stats.history_tokens,
                stats.compactions,
                stats.cache_breaks,
                stats.peak_request_tokens,
                stats.cost_ratio()
            ));
            let at = format!("{name}, {mode}");
            assert_eq!(stats.failed_open, 0, "{at}");
            // The `cost` rule compacts each time about E* ≈ 12k tokens have
            // come (a 40k threshold, 5-minute cache prices): a dozen at most
            // on these sessions; every break is priced in the cost.
            assert!(
                stats.cache_breaks <= 12,
                "{at}: {} cache breaks",
                stats.cache_breaks
            );
            assert_eq!(
                stats.cache_breaks, stats.compactions,
                "{at}: every break is a compaction"
            );
            if stats.history_tokens > u64::from(config.core.token_threshold) {
                assert!(
                    stats.compactions > 0,
                    "{at}: over the threshold but never compacted"
                );
                assert!(
                    stats.cost_ratio() < 1.0,
                    "{at}: compressing cost more than not: {:.3}",
                    stats.cost_ratio()
                );
            }
            // A long session (the real coding sessions: 150+ model calls) is where
            // the savings accrue; a short one that crosses the threshold near its
            // end has few calls left to amortise the cache rewrite.
            if stats.calls >= LONG_SESSION_CALLS {
                assert!(
                    stats.cost_ratio() <= 0.65,
                    "{at}: cost {:.3}",
                    stats.cost_ratio()
                );
                long_costs.push(stats.cost_ratio());
            }
        }
        assert_eq!(long_costs.len(), 3, "the three long sessions");
        long_costs.sort_by(f64::total_cmp);
        if mode == "passes on" {
            // At the threshold, with the passes.
            assert!(saved > 0, "the passes saved nothing");
            assert!(long_costs[1] <= 0.45, "median cost {:.3}", long_costs[1]);
            assert!(long_costs[2] <= 0.55, "highest cost {:.3}", long_costs[2]);
        } else {
            // The defaults: the `cost` rule.
            assert!(long_costs[1] <= 0.33, "median cost {:.3}", long_costs[1]);
            assert!(long_costs[2] <= 0.45, "highest cost {:.3}", long_costs[2]);
        }
    }
    eprintln!("{figures}");
}

/// The context-engineering passes by the `cost` rule: a
/// compaction makes the passes alone only when the rule's own price model
/// says they are the cheaper compaction, so turning them on costs no more
/// than leaving them off, on every session, and breaks the cache a dozen
/// times at most. At a 40k threshold, as a config that sets only
/// `token_threshold = 40000` has it (every other knob its share of the
/// threshold) and as the replay's own settings do (a lower target).
#[test]
fn by_the_cost_rule_the_passes_never_cost_more_than_without_them() {
    let middleware = embedded_middleware();
    let configs = [
        (
            "token_threshold = 40000",
            TestConfig::new(CoreConfig::for_threshold(40_000)),
        ),
        ("the replay's settings", config_40k()),
    ];
    let mut figures = String::new();
    for (which, config) in configs {
        let off = config.clone().without_passes();
        let on = TestConfig {
            settings: config.settings.clone().with_passes(),
            ..config
        };
        for name in session_names() {
            let history = session(&name);
            let (off, _) = replay_checked(&name, &history, &off, middleware);
            let (on, _) = replay_checked(&name, &history, &on, middleware);
            let at = format!(
                "{name} at {which}: passes on {:.3} ({} breaks), off {:.3} ({} breaks)",
                on.cost_ratio(),
                on.cache_breaks,
                off.cost_ratio(),
                off.cache_breaks
            );
            figures.push_str(&at);
            figures.push('\n');
            assert!(on.cost() <= off.cost() * (1.0 + 1e-9), "{at}");
            assert!(on.cache_breaks <= 12, "{at}");
        }
    }
    eprintln!("{figures}");
}

/// cc-opus-c idled 17.5 minutes once: past a 5-minute cache, the call after
/// the gap is written whole, compressed or not. Told so, the `cost` rule
/// compacts what is due soon right there — a compaction that costs no break
/// of its own — and the session costs less than when it is not told.
#[test]
fn a_cold_cache_is_where_a_compaction_due_soon_is_made() {
    let history = session("cc-opus-c");
    let cold = cold_calls(&corpus_dir().join("timing/cc-opus-c.json"), 300).unwrap();
    assert_eq!(
        cold.iter().filter(|&&c| c).count(),
        1,
        "one gap past 5 minutes"
    );
    let config = config_40k();
    let json = config.json();
    let told = config.settings.clone().with_cache_cold().to_json();
    let run = |cold_settings: &str| {
        let expiry = Expiry {
            cold: &cold,
            cold_settings,
        };
        replay_middleware_timed(
            embedded_middleware(),
            &config.core,
            &json,
            Some(expiry),
            false,
            &history,
            |_, _| {},
        )
    };
    let (not_told, with) = (run(&json), run(&told));
    for stats in [&not_told, &with] {
        assert_eq!(stats.cache_expiries, 1);
        assert_eq!(stats.failed_open, 0);
    }
    assert_eq!(not_told.baseline_cost(), with.baseline_cost());
    assert_eq!(not_told.cache_breaks, not_told.compactions);
    // A compaction at the cold call, with no break of its own (one due a
    // few calls later, made then instead, or one more).
    assert_eq!(with.cache_breaks, with.compactions - 1);
    assert!(
        with.cost() < not_told.cost(),
        "{:.4} vs {:.4}",
        with.cost_ratio(),
        not_told.cost_ratio()
    );
}

#[test]
fn every_session_stays_valid_when_forced_to_compact_often() {
    let middleware = embedded_middleware();
    for name in session_names() {
        let history = session(&name);
        for (mode, config) in both(config_forcing(&history)) {
            let (stats, _) = replay_checked(&name, &history, &config, middleware);
            assert!(
                stats.compactions >= 2,
                "{name}, {mode}: only {} compactions",
                stats.compactions
            );
        }
    }
}

/// The Anthropic-format sessions carry signed thinking blocks and tool results
/// inside user messages; the rendered JSON of everything kept is the input's.
#[test]
fn anthropic_sessions_keep_their_json_and_signed_thinking() {
    let middleware = embedded_middleware();
    let mut pruned = 0;
    for name in ["cc-opus-a", "cc-opus-c", "cc-trace-sonnet"] {
        let path = corpus_dir()
            .join("anthropic")
            .join(format!("{name}.request.json"));
        let body: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let parsed = Parsed::parse(body.clone(), Format::Anthropic).unwrap();
        let history = parsed.messages();
        if name != "cc-trace-sonnet" {
            assert!(
                !signed_thinking(history).is_empty(),
                "{name} has signed thinking"
            );
        }
        for (mode, config) in both(config_forcing(history)) {
            let (stats, passes) = replay_checked(name, history, &config, middleware);
            assert!(stats.compactions >= 2, "{name}, {mode}");
            if mode == "passes on" && name != "cc-trace-sonnet" {
                assert!(
                    passes.steps_elided > 0 && passes.results_cleared > 0,
                    "{name}: {passes:?}"
                );
                pruned += passes.reasoning_pruned;
            }

            // The final request, rendered back to JSON: its verbatim tail is the
            // original JSON, byte for byte, and the body's other fields are kept.
            let sent = config.compress(middleware, history, None);
            let rendered = parsed.render(&sent.items);
            let tail_start = sent.report.guest().unwrap().tail_start as usize;
            let original = body["messages"].as_array().unwrap();
            let out = rendered["messages"].as_array().unwrap();
            // Index 0 of the model history is the system prompt when the body has one.
            let offset = usize::from(body.get("system").is_some());
            let tail = &original[tail_start - offset..];
            assert_eq!(&out[out.len() - tail.len()..], tail, "{name}, {mode}");
            // What the passes rewrote renders as valid Messages API input.
            for (i, m) in out.iter().enumerate() {
                let role = if i % 2 == 0 { "user" } else { "assistant" };
                assert_eq!(m["role"], role, "{name}, {mode}: message {i}");
            }
            assert_eq!(rendered["model"], body["model"]);
            assert_eq!(rendered.get("system"), body.get("system"));
        }
        let all: Vec<condense_model::Item> = (0..history.len() as u32)
            .map(condense_model::Item::Kept)
            .collect();
        assert_eq!(
            parsed.render(&all),
            body,
            "{name}: an unchanged history renders as the original body"
        );
    }
    assert!(pruned > 0, "signed thinking was never pruned");
}

/// A body read as the proxy reads it (`Parsed::read`: each message of a
/// session read once, then taken from the memo) is the body `Parsed::parse`
/// reads, and renders to the same bytes: every corpus session in every
/// format, call by call, and the recorded request bodies.
#[test]
fn every_body_read_with_the_memo_is_the_body_parsed() {
    use condense_host::formats::Read;
    use condense_model::{Item, Role};
    let mut bodies: Vec<(Format, String)> = Vec::new();
    for name in session_names() {
        for format in [Format::Anthropic, Format::OpenAi, Format::Responses] {
            let (system, list) = condense_tests::proxy::rendered_session(&name, format);
            let ends: Vec<usize> = (1..=list.len()).step_by(7).chain([list.len()]).collect();
            for end in ends {
                let body = match format {
                    Format::Anthropic => serde_json::json!({
                        "model": "m", "max_tokens": 10, "system": system, "messages": list[..end]}),
                    Format::OpenAi => {
                        let mut messages =
                            vec![serde_json::json!({"role": "system", "content": system})];
                        messages.extend_from_slice(&list[..end]);
                        serde_json::json!({"model": "m", "messages": messages})
                    }
                    Format::Responses => serde_json::json!({
                        "model": "m", "instructions": system, "input": list[..end]}),
                };
                bodies.push((format, body.to_string()));
            }
        }
    }
    for dir in ["anthropic", "api"] {
        for entry in std::fs::read_dir(corpus_dir().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".request.json") {
                continue;
            }
            let format = if name.starts_with("openai-chat") {
                Format::OpenAi
            } else if name.starts_with("openai-responses") {
                Format::Responses
            } else {
                Format::Anthropic
            };
            bodies.push((format, std::fs::read_to_string(&path).unwrap()));
        }
    }
    let mut read = 0;
    for (format, text) in &bodies {
        let slow = Parsed::parse(serde_json::from_str(text).unwrap(), *format).unwrap();
        for pass in ["cold", "warm"] {
            let Some(Read::Parsed(fast)) = Parsed::read(text, *format, 0) else {
                panic!("{format} body not read ({pass})");
            };
            assert_eq!(fast.messages(), slow.messages(), "{format}, {pass}");
            assert_eq!(fast.body(), slow.body(), "{format}, {pass}");
            let n = slow.messages().len() as u32;
            let summary = Message::text(Role::User, "[condense summary] earlier");
            let tail = (n / 2..n).map(Item::Kept);
            let outputs = [
                (0..n).map(Item::Kept).collect::<Vec<_>>(),
                std::iter::once(Item::Written(summary))
                    .chain(tail)
                    .collect(),
            ];
            for items in &outputs {
                let expected = serde_json::to_vec(&slow.render(items)).unwrap();
                assert!(
                    fast.render_bytes(items, false) == expected,
                    "{format}, {pass}"
                );
            }
            read += 1;
        }
    }
    assert!(read > 200, "{read} bodies read");
}
