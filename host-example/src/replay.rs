//! `condense replay`: recorded sessions call by call, with the figures of
//! what condense did to each (and a chart), and with `--probes` what the
//! last request still names of the whole session ([`probes`]).

pub mod probes;

use crate::common::Common;
use crate::session::SessionFile;
use anyhow::Result;
use clap::Args;
use condense_config::AgentSettings;
use condense_host::Compressed;
use condense_model::Message;
use condense_replay::optimal::{Optimum, optimum};
use condense_replay::{Expiry, ReplayStats, replay_middleware_timed};
use probes::{ProbeKind, ProbeRecall};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub common: Common,
    /// Print the figures as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also write a chart (SVG) of the request tokens per model call, no compression vs
    /// condense, compactions marked, threshold drawn. With several sessions, one file each:
    /// FILE's name with the session's before `.svg`.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Model the prompt cache expiring: DIR/NAME.json gives, for session NAME.json, the time
    /// of each assistant message (`assistant_timestamps`, ISO-8601 UTC, as in the corpus's
    /// `timing/`). A call more than cache_ttl_seconds after the one before is written whole,
    /// compressed or not, and condense is told its cache is cold (a compaction due soon is
    /// made then, at no extra break). Sessions without a file there replay warm.
    #[arg(long, value_name = "DIR")]
    pub timing: Option<PathBuf>,
    /// Also find the offline optimum: the cheapest schedule of compactions for each session,
    /// knowing every call to come, at the same threshold and tail floor
    /// (keep_recent_tokens), each summary the size of condense's own (their mean), priced
    /// alike. Printed beside condense's cost, with condense's cost as a multiple of it.
    #[arg(long)]
    pub optimal: bool,
    /// Also measure what the last request still names of the whole session: probes drawn
    /// from the recorded history (every file a tool call named, as parent/name; the
    /// opening of every user request, harness echoes such as `<command-name>/compact`
    /// aside; every error line a tool returned; every command and its last outcome;
    /// values a tool returned that were used later), and per kind the share the last
    /// request names verbatim (any case), and how many a recall handle it names reads back.
    /// Without --config the replay runs at summary_max_tokens = 2000 (target 16000); to
    /// measure what a user gets, give a config that sets only `token_threshold = 40000`
    /// (target 20000, summary 2000). With --json: the figures and the probes not named.
    #[arg(long)]
    pub probes: bool,
    /// Replay as requests to MODEL: priced by its price model (`condense config --models`),
    /// compacted at its threshold (its own, else the config's held to 80% of its window),
    /// as the proxy compresses a request naming it. Unset: the config's keys as they are.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Session files: a bare message list or a request body, in either format, or a
    /// journal of `condense agent` (.jsonl).
    #[arg(required = true, value_name = "SESSION")]
    pub sessions: Vec<PathBuf>,
}

pub fn run(args: ReplayArgs, out: &mut dyn Write) -> Result<()> {
    let settings = args.common.settings(AgentSettings::for_replay())?;
    let settings = match &args.model {
        Some(model) => settings.for_model(Some(model)).0,
        None => settings,
    };
    // Priced as the settings weigh compactions.
    let prices = settings.prices();
    // Parse every session (and its timing) before running any, so a bad
    // file fails fast.
    let sessions: Vec<(String, Vec<Message>, Vec<bool>)> = args
        .sessions
        .iter()
        .map(|path| {
            let cold = match args.timing.as_deref() {
                Some(dir) => {
                    let timing = dir.join(path.file_name().unwrap_or_default());
                    if timing.exists() {
                        condense_host::timing::cold_calls(&timing, prices.ttl_seconds)?
                    } else {
                        Vec::new()
                    }
                }
                None => Vec::new(),
            };
            Ok((
                path.display().to_string(),
                SessionFile::read(path)?.into_messages(),
                cold,
            ))
        })
        .collect::<Result<_>>()?;
    let middleware = crate::components::middleware(&settings)?;
    let json = settings.compressor_json();
    // A replayed session has no tools of its client's: recall is as the
    // configuration says (`[recall] mode`), its tool's own tokens aside.
    let recall = settings.recall.recall().is_some();
    // How the embedded compressor is told its cache is cold; a compressor
    // from a path is not told.
    let cold_json = settings
        .cold_settings()
        .map_or_else(|| json.clone(), |cold| cold.settings);
    let mut recalls: Vec<Option<ProbeRecall>> = Vec::new();
    let results: Vec<(String, ReplayStats)> = sessions
        .iter()
        .map(|(name, messages, cold)| {
            let expiry = Expiry {
                cold,
                cold_settings: &cold_json,
            };
            // The last call's answer, kept only to measure the probes.
            let mut last: Option<(usize, Compressed)> = None;
            let stats = replay_middleware_timed(
                &middleware,
                &settings.core,
                &json,
                Some(expiry),
                recall,
                messages,
                |request, sent| {
                    if args.probes {
                        last = Some((request.len(), sent.clone()));
                    }
                },
            )
            .with_prices(prices);
            recalls.push(args.probes.then(|| {
                let drawn = probes::probes(probes::probed_history(messages));
                match &last {
                    Some((len, sent)) => {
                        let request = sent.messages(&messages[..*len]);
                        probes::measure(&drawn, &request, &sent.handles)
                    }
                    None => probes::measure(&drawn, messages, &[]),
                }
            }));
            (name.clone(), stats)
        })
        .collect();
    let optima: Vec<Option<Optimum>> = sessions
        .iter()
        .zip(&results)
        .map(|((_, messages, cold), (_, stats))| {
            if !args.optimal {
                return None;
            }
            // A session condense never compacted is charged the summary
            // budget.
            let summary = stats.mean_summary_tokens().unwrap_or_else(|| {
                condense_contract::max_pair_tokens(settings.core.summary_max_tokens, recall)
            });
            optimum(messages, &settings.core, summary, prices, cold)
        })
        .collect();
    // One chart per session: with several, each file is named after its
    // session.
    let charts: Vec<Option<PathBuf>> = args
        .sessions
        .iter()
        .zip(&results)
        .map(|(path, (_, stats))| {
            let Some(plot) = &args.plot else {
                return Ok(None);
            };
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            let file = if results.len() == 1 {
                plot.clone()
            } else {
                let plot_stem = plot.file_stem().unwrap_or_default().to_string_lossy();
                plot.with_file_name(format!("{plot_stem}.{stem}.svg"))
            };
            let series =
                condense_replay::plot::series_of(&stem, settings.core.token_threshold, stats);
            condense_replay::plot::write_svg(&file, &series)?;
            Ok(Some(file))
        })
        .collect::<Result<_>>()?;
    if args.json {
        let rows: Vec<_> = results
            .iter()
            .zip(&charts)
            .zip(&optima)
            .zip(&recalls)
            .map(|((((name, stats), chart), optimal), recall)| {
                let mut row = serde_json::json!({
                    "session": name,
                    "stats": stats,
                    "cost": stats.cost(),
                    "baseline_cost": stats.baseline_cost(),
                    "cost_ratio": stats.cost_ratio(),
                    "chart": chart,
                });
                if args.optimal {
                    row["optimal"] =
                        serde_json::json!(optimal.as_ref().map(|o| serde_json::json!({
                            "schedule": o,
                            "cost_ratio": o.cost_ratio(),
                            "condense_over_optimal": stats.cost() / o.cost,
                        })));
                }
                if let Some(recall) = recall {
                    row["probes"] = probes_json(recall);
                }
                row
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "token_threshold = {}, target_tokens = {}{}\n",
        settings.core.token_threshold,
        settings.core.target_tokens,
        if args.probes {
            format!(
                ", keep_recent_tokens = {}, summary_max_tokens = {}",
                settings.core.keep_recent_tokens, settings.core.summary_max_tokens
            )
        } else {
            String::new()
        }
    )?;
    writeln!(
        out,
        "{:<40} {:>6} {:>9} {:>7} {:>9} {:>8} {:>7}",
        "session", "calls", "history", "folds", "breaks", "peak", "cost"
    )?;
    for (name, s) in &results {
        let short = Path::new(name)
            .file_name()
            .map_or(name.clone(), |n| n.to_string_lossy().into_owned());
        writeln!(
            out,
            "{:<40} {:>6} {:>9} {:>7} {:>9} {:>8} {:>7.3}{}",
            short,
            s.calls,
            s.history_tokens,
            s.compactions,
            s.cache_breaks,
            s.peak_request_tokens,
            s.cost_ratio(),
            if s.failed_open > 0 {
                format!("  ({} failed open)", s.failed_open)
            } else {
                String::new()
            }
        )?;
    }
    for (((name, stats), optimal), recall) in results.iter().zip(&optima).zip(&recalls) {
        writeln!(out, "\n{name}")?;
        crate::demo::table(stats, out)?;
        if args.optimal {
            optimal_rows(stats, optimal.as_ref(), out)?;
        }
        if let Some(recall) = recall {
            probe_rows(recall, out)?;
        }
    }
    writeln!(out, "\n{}", crate::demo::cost_note(prices))?;
    for (name, chart) in results.iter().map(|(name, _)| name).zip(&charts) {
        if let Some(chart) = chart {
            writeln!(out, "chart of {name}: {}", chart.display())?;
        }
    }
    Ok(())
}

/// The probes the last request names, per kind.
fn probe_rows(recall: &ProbeRecall, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "  probes of the whole session the last request names (verbatim, any case); \
         recallable: named, or read back by a recall handle it names"
    )?;
    writeln!(
        out,
        "    {:<10} {:>7} {:>7} {:>6} {:>11}",
        "kind", "probes", "named", "share", "recallable"
    )?;
    let rows = recall.kinds.iter().chain(std::iter::once(&recall.total));
    for row in rows {
        writeln!(
            out,
            "    {:<10} {:>7} {:>7} {:>5.0}% {:>11}",
            row.kind.map_or("all", ProbeKind::name),
            row.probes,
            row.named,
            100.0 * row.share(),
            row.recallable
        )?;
    }
    Ok(())
}

/// `--json`'s `probes`: per kind, the whole, and the probes not named.
fn probes_json(recall: &ProbeRecall) -> serde_json::Value {
    let row = |r: &probes::KindRecall| {
        serde_json::json!({
            "kind": r.kind.map_or("all", ProbeKind::name),
            "probes": r.probes,
            "named": r.named,
            "share": r.share(),
            "recallable": r.recallable,
        })
    };
    serde_json::json!({
        "kinds": recall.kinds.iter().map(row).collect::<Vec<_>>(),
        "total": row(&recall.total),
        "missing": recall.missing,
    })
}

/// The offline optimum beside condense's figures.
fn optimal_rows(stats: &ReplayStats, optimal: Option<&Optimum>, out: &mut dyn Write) -> Result<()> {
    let Some(o) = optimal else {
        writeln!(
            out,
            "  offline optimum: none (a call's newest messages alone exceed the threshold)"
        )?;
        return Ok(());
    };
    let calls: Vec<String> = o
        .compactions
        .iter()
        .map(|c| (c.call + 1).to_string())
        .collect();
    writeln!(
        out,
        "  offline optimum: cost {:.3}, {} compactions (at calls {}), peak {}, summaries of {} tokens",
        o.cost_ratio(),
        o.compactions.len(),
        if calls.is_empty() {
            "-".to_owned()
        } else {
            calls.join(", ")
        },
        o.peak_request_tokens,
        o.summary_tokens
    )?;
    writeln!(out, "  condense / optimum: {:.2}x", stats.cost() / o.cost)?;
    Ok(())
}
