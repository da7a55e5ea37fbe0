//! `condense demo`: a real recorded session played through condense's agent
//! runtime, call by call — the replay model answering as the recording did,
//! the recorded tool results played back, condense in the model-call chain,
//! every step journaled (in a temporary directory) — and what it did, side
//! by side with sending every request uncompressed, with a chart.
//!
//! The figures are measured on what the runtime really sent
//! ([`RequestMeter`]), the same way `condense replay` measures, so the two
//! agree on the same session and settings.

use anyhow::{Context, Result};
use condense_config::AgentSettings;
use condense_contract::settings::CompactWhen;
use condense_host::events::Compaction;
use condense_host::formats::Format;
use condense_host::{FileStore, body};
use condense_model::{Message, Part, Role};
use condense_replay::{Prices, ReplayStats, plot, replay_middleware};
use condense_runtime::agent::{Agent, RecordedTools, replay_recording};
use condense_runtime::journal::{Contents, Journal};
use condense_runtime::layers::{Condense, Layer, Layers, ModelCall, RequestMeter};
use condense_runtime::model::{ModelResponse, ReplayModel};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The demo's session: a real Claude Code session (MIT, marot/spotter; see
/// tests/corpus/README.md), the largest of the corpus: 150 tool calls and
/// long tool outputs, where every pass has work to do.
pub const SESSION: &str = include_str!("../../tests/corpus/sessions/cc-opus-b.json");
pub const SESSION_NAME: &str = "cc-opus-b (Claude Code 2.1.39, claude-opus-4-6)";

/// How the demo shows itself.
pub struct DemoRun {
    /// Where the chart goes.
    pub plot: PathBuf,
    /// Draw a progress bar (stdout is a terminal); otherwise plain lines.
    pub progress: bool,
}

/// The demo's defaults: `condense replay`'s (a 40k threshold), every
/// compressor key at its default (the `cost` rule, the passes off), and
/// recall off: the recorded model was never offered `condense_recall`, so
/// the requests it is played are the ones it could have been sent.
pub fn defaults() -> AgentSettings {
    let mut settings = AgentSettings::for_replay();
    settings.compressor = compressor_keys(&condense_contract::Settings::default());
    settings.recall.mode = condense_config::RecallMode::Off;
    settings
}

/// The last request the model was sent.
#[derive(Clone, Default)]
struct LastRequest(Arc<Mutex<Vec<Message>>>);

impl Layer for LastRequest {
    fn after_model_call(&mut self, call: &ModelCall<'_>, _: &ModelResponse) {
        *self.0.lock().expect("not poisoned") = call.request.messages.clone();
    }
}

pub fn run(settings: &AgentSettings, demo: &DemoRun, out: &mut dyn Write) -> Result<()> {
    let parsed = body::parse_body(SESSION.as_bytes(), Some(Format::OpenAi))
        .map_err(|e| anyhow::anyhow!("the embedded demo session: {e}"))?;
    let recording = parsed.messages();
    let calls = recording
        .iter()
        .skip(1)
        .filter(|m| m.role == Role::Assistant)
        .count();
    let middleware = Arc::new(crate::components::middleware(settings)?);
    header(settings, recording, &middleware, out)?;

    // The runtime: journal and checkpoint in a directory of their own.
    let dir = tempfile::tempdir().context("a temporary directory for the demo's journal")?;
    let journal_path = dir.path().join("demo.jsonl");
    let meter = RequestMeter::new();
    let last = LastRequest::default();
    let condense = Condense::new(
        middleware.clone(),
        settings.core,
        settings.compressor_json(),
        Box::new(FileStore::new(journal_path.with_extension("ckpt"))),
    );
    let system: Vec<Message> = recording
        .iter()
        .filter(|m| m.role == Role::System)
        .cloned()
        .collect();
    let mut agent = Agent::new(
        Box::new(ReplayModel::new(recording.to_vec())),
        Box::new(RecordedTools::from_recording(recording)),
        Layers::new()
            .with(meter.clone())
            .with(condense)
            .with(last.clone()),
        Journal::create(&journal_path)?,
        &Contents::default(),
        system,
    )?;

    let bar = if demo.progress {
        ProgressBar::with_draw_target(Some(calls as u64), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("  model call {pos:>4}/{len} {wide_bar} {elapsed}")
            .expect("the template is valid"),
    );
    writeln!(
        out,
        "{:>6} {:>10} {:>8}  what happened",
        "call", "history", "sent"
    )?;
    let mut written: std::io::Result<()> = Ok(());
    replay_recording(&mut agent, recording, |agent| {
        bar.inc(1);
        for compaction in agent.last_compactions() {
            for line in describe(compaction) {
                // Printed above the bar, which is redrawn after.
                bar.suspend(|| {
                    if written.is_ok() {
                        written = writeln!(out, "{line}");
                    }
                });
            }
        }
    })?;
    bar.finish_and_clear();
    written?;
    drop(agent);

    let prices = settings.prices();
    let stats = meter.stats().with_prices(prices);
    table(&stats, out)?;
    writeln!(out, "\n  {}", cost_note(prices))?;
    // The same session compacted only at the threshold, or without the
    // passes, for comparison.
    let embedded = condense_contract::Settings::parse(&settings.compressor_json()).ok();
    let other = embedded.and_then(|s| {
        if s.compact_when == CompactWhen::Cost {
            let threshold = condense_contract::Settings {
                compact_when: CompactWhen::Threshold,
                ..s
            };
            Some(("compacting only at the threshold", threshold))
        } else {
            s.passes_enabled()
                .then(|| ("without the passes", s.without_passes()))
        }
    });
    if let Some((what, other)) = other {
        let json = serde_json::Value::Object(compressor_keys(&other)).to_string();
        let stats = replay_middleware(&middleware, &settings.core, &json, recording, |_, _| {})
            .with_prices(prices);
        writeln!(
            out,
            "\n  {what}, condense costs {:.3} ({} compactions, peak {} tokens)",
            stats.cost_ratio(),
            stats.compactions,
            stats.peak_request_tokens
        )?;
    }
    let series = plot::series_of("cc-opus-b", settings.core.token_threshold, &stats);
    plot::write_svg(&demo.plot, &series)?;
    writeln!(
        out,
        "  chart of the request tokens per call: {}",
        demo.plot.display()
    )?;
    last_request(&last.0.lock().expect("not poisoned"), recording.len(), out)
}

fn header(
    settings: &AgentSettings,
    recording: &[Message],
    middleware: &condense_host::Middleware,
    out: &mut dyn Write,
) -> Result<()> {
    writeln!(
        out,
        "condense demo: a real agent session played through condense's agent runtime, call by call.\n"
    )?;
    writeln!(out, "  session    {SESSION_NAME}")?;
    writeln!(
        out,
        "             {} messages, {} user turns, {} tool calls, ~{} tokens",
        recording.len(),
        recording.iter().filter(|m| m.opens_turn()).count(),
        recording
            .iter()
            .map(|m| m.tool_calls().count())
            .sum::<usize>(),
        condense_model::tokens::estimate_total(recording)
    )?;
    writeln!(
        out,
        "  config     token_threshold = {}, target_tokens = {}, keep_recent_tokens = {}, summary_max_tokens = {}",
        settings.core.token_threshold,
        settings.core.target_tokens,
        settings.core.keep_recent_tokens,
        settings.core.summary_max_tokens
    )?;
    // The demo runs the embedded compressor unless told otherwise; the
    // passes it describes are that compressor's.
    let passes = condense_contract::Settings::parse(&settings.compressor_json()).ok();
    if let Some(embedded) = &passes {
        let prices = settings.prices();
        writeln!(
            out,
            "  compacts   {}",
            match embedded.compact_when {
                CompactWhen::Cost => format!(
                    "as soon as it pays (cache reads x{}, writes x{}), at the threshold at the latest",
                    prices.read, prices.write
                ),
                CompactWhen::Threshold => "at the threshold".to_owned(),
            }
        )?;
    }
    writeln!(
        out,
        "  passes     {}",
        passes.as_ref().map_or(
            "as the loaded compressor's settings say".into(),
            describe_passes
        )
    )?;
    let summarizers: Vec<String> = middleware
        .runtime()
        .summarizers()
        .map(ToString::to_string)
        .collect();
    writeln!(
        out,
        "  components {} and {}, in the wasmtime sandbox\n",
        middleware.runtime().compressor(),
        summarizers.join(", falling back to ")
    )?;
    Ok(())
}

/// The lines a compaction gets in the demo's log.
fn describe(c: &Compaction) -> Vec<String> {
    let folded = if c.messages_folded == 0 {
        "compacted by the passes alone, nothing folded".to_owned()
    } else {
        format!("compacted: {} more messages folded", c.messages_folded)
    };
    let mut lines = vec![format!(
        "{:>6} {:>10} {:>8}  {folded}",
        c.call, c.tokens_before, c.tokens_after
    )];
    let p = &c.passes;
    if p.tokens_saved > 0 {
        lines.push(format!(
            "{:>27}  passes: {}, {}, {}: {} tokens saved",
            "",
            count(p.steps_elided, "loop step", "loop steps", "elided"),
            count(p.results_cleared, "old result", "old results", "shortened"),
            count(
                p.reasoning_pruned,
                "message",
                "messages",
                "without reasoning"
            ),
            p.tokens_saved
        ));
    }
    lines
}

/// The side-by-side table: the session sent uncompressed and through
/// condense. Each row is a figure [`ReplayStats`] holds, so `condense
/// replay` prints the same numbers.
pub fn table(stats: &ReplayStats, out: &mut dyn Write) -> Result<()> {
    let share = |cached: u64, sent: u64| {
        if sent == 0 {
            0.0
        } else {
            100.0 * cached as f64 / sent as f64
        }
    };
    writeln!(
        out,
        "\n  {} model calls        {:>16} {:>16}",
        stats.calls, "no compression", "condense"
    )?;
    let rows = [
        (
            "peak request (tokens)",
            stats.baseline_peak_request_tokens.to_string(),
            stats.peak_request_tokens.to_string(),
        ),
        (
            "tokens sent",
            stats.baseline_tokens_sent.to_string(),
            stats.tokens_sent.to_string(),
        ),
        (
            "cache-hit share",
            format!(
                "{:.1}%",
                share(stats.baseline_cached_tokens, stats.baseline_tokens_sent)
            ),
            format!("{:.1}%", share(stats.cached_tokens, stats.tokens_sent)),
        ),
        (
            "cache-weighted cost",
            "1.000".to_owned(),
            format!("{:.3}", stats.cost_ratio()),
        ),
        ("compactions", "0".to_owned(), stats.compactions.to_string()),
        (
            "prompt-cache breaks",
            "0".to_owned(),
            stats.cache_breaks.to_string(),
        ),
    ];
    for (name, baseline, condensed) in rows {
        writeln!(out, "  {name:<22} {baseline:>16} {condensed:>16}")?;
    }
    if stats.cache_expiries > 0 {
        let n = stats.cache_expiries;
        writeln!(out, "  {:<22} {n:>16} {n:>16}", "cache expired (idle)")?;
    }
    Ok(())
}

/// What the cost figures mean, at `prices`.
pub fn cost_note(prices: Prices) -> String {
    format!(
        "cost: input tokens weighted as a provider's prompt cache bills them (the prefix \
         repeated from the previous request x{}, the rest x{}), relative to no compression",
        prices.read, prices.write
    )
}

/// The last request the model was sent, and the summary in it.
fn last_request(sent: &[Message], history_len: usize, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "\nThe last request: {history_len} history messages sent as {} messages:",
        sent.len()
    )?;
    for (i, m) in sent.iter().enumerate().take(4) {
        writeln!(
            out,
            "  #{i:<3} {:<9} {}",
            format!("{:?}", m.role).to_lowercase(),
            preview(m)
        )?;
    }
    writeln!(out, "  ...   then the recent tail, verbatim")?;
    if let Some(summary) = sent
        .iter()
        .find(|m| m.role == Role::User && m.is_condense_summary())
    {
        let text = summary.joined_text();
        writeln!(
            out,
            "\nThe summary the model sees instead of the folded history (~{} tokens, \
             framing included), section by section, the first items of each:\n",
            condense_model::tokens::estimate_text(&text)
        )?;
        for line in sampled(&text, SAMPLED_ITEMS) {
            writeln!(out, "  | {line}")?;
        }
    }
    Ok(())
}

/// Items shown of each section of the summary.
const SAMPLED_ITEMS: usize = 3;

/// A summary's lines: the framing, each `## ` heading with how many items
/// it holds, its first `items` items (cut to a line) and how many more.
fn sampled(summary: &str, items: usize) -> Vec<String> {
    const LINE_CHARS: usize = 140;
    let cut = |line: &str| match line.char_indices().nth(LINE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    };
    let mut out = Vec::new();
    let mut lines = summary.lines().peekable();
    while let Some(line) = lines.next_if(|l| !l.starts_with("## ")) {
        out.push(cut(line));
    }
    while let Some(heading) = lines.next() {
        let mut section = Vec::new();
        while let Some(line) = lines.next_if(|l| !l.starts_with("## ")) {
            section.push(line);
        }
        let entries: Vec<&str> = section
            .iter()
            .copied()
            .filter(|l| l.starts_with("- "))
            .collect();
        out.push(format!("{heading} ({})", entries.len()));
        out.extend(entries.iter().take(items).map(|l| cut(l)));
        if entries.len() > items {
            out.push(format!("  … {} more", entries.len() - items));
        }
    }
    out
}

/// "1 loop step elided", "3 loop steps elided".
fn count(n: u32, one: &str, many: &str, what: &str) -> String {
    format!("{n} {} {what}", if n == 1 { one } else { many })
}

/// `settings` as the keys of a config file.
fn compressor_keys(
    settings: &condense_contract::Settings,
) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(settings) {
        Ok(serde_json::Value::Object(keys)) => keys,
        _ => serde_json::Map::new(),
    }
}

/// Which passes `config` turns on, for the demo's header.
fn describe_passes(config: &condense_contract::Settings) -> String {
    use condense_contract::settings::ClearMode;
    let mut on = Vec::new();
    if config.strip_reasoning_after_turns > 0 && !config.reasoning_echo {
        on.push(format!(
            "reasoning kept on the last {} assistant messages",
            config.strip_reasoning_after_turns
        ));
    }
    if config.aggregate_developer_loops {
        on.push(format!(
            "edit/run loops of {}+ steps aggregated",
            config.max_loop_steps_before_aggregate
        ));
    }
    if config.clear_mode != ClearMode::Off {
        on.push(format!(
            "old results over {} characters {}",
            config.result_char_threshold,
            match config.clear_mode {
                ClearMode::Clear => "cleared",
                _ => "truncated",
            }
        ));
    }
    if on.is_empty() {
        "off".to_owned()
    } else {
        on.join("; ")
    }
}

/// One line describing a message.
fn preview(m: &Message) -> String {
    let text = m
        .parts
        .iter()
        .find_map(|p| match p {
            Part::Text(t) if !t.trim().is_empty() => Some(t.trim().replace('\n', " ")),
            Part::ToolCall(c) => Some(format!("tool call {}({})", c.name, c.arguments)),
            Part::ToolResult(r) => Some(format!("tool result: {}", r.content.replace('\n', " "))),
            _ => None,
        })
        .unwrap_or_default();
    let mut short: String = text.chars().take(90).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_session_parses() {
        let parsed = body::parse_body(SESSION.as_bytes(), None).unwrap();
        assert!(parsed.messages().len() > 250);
    }
}
