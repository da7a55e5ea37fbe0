//! `condense sessions`: what the proxy's checkpoint store holds, for its
//! operator — the sessions (checkpoint groups) with their figures (calls,
//! compactions, the provider's measured usage and cost beside the
//! uncompressed estimate: the operator page's), and for one of them each
//! compaction, each checkpoint with the handle that recalls what it folded,
//! and the current summary. Read-only. Summaries hold the users' words: this is
//! an operator's view of their own store.

use anyhow::{Context, Result, bail};
use clap::Args;
use condense_host::timing::utc_text;
use condense_proxy::sessions;
use condense_sessions::SessionStore;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args)]
pub struct SessionsArgs {
    /// The proxy's state directory (its checkpoints.redb; the proxy must not be running, the
    /// database takes one process at a time). Default: $XDG_STATE_HOME/condense, else
    /// ~/.local/state/condense.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// A Redis or Valkey server the proxies keep their checkpoints in instead
    /// (redis://[:PASSWORD@]HOST[:PORT][/DB]).
    #[arg(long, value_name = "URL", conflicts_with = "state_dir")]
    pub store: Option<String>,
    /// Show this session (a group, as the list names it): its compactions, newest first,
    /// each with the handle that recalls what it folded, and its current summary.
    #[arg(value_name = "SESSION")]
    pub session: Option<String>,
}

pub fn run(args: SessionsArgs, out: &mut dyn Write) -> Result<()> {
    let (store, kept_in) =
        crate::proxy::session_store(args.state_dir.as_deref(), args.store.as_deref(), false)?;
    match &args.session {
        None => list(&*store, &kept_in, out),
        Some(group) => show(&*store, group, out),
    }
}

fn list(store: &dyn SessionStore, kept_in: &str, out: &mut dyn Write) -> Result<()> {
    let (rows, total, _) = sessions::overview(store)?;
    writeln!(out, "{} session(s) in {kept_in}", rows.len())?;
    if rows.is_empty() {
        return Ok(());
    }
    figures(&total, out)?;
    writeln!(
        out,
        "\n{:<58} {:>6} {:>6} {:>8} {:>10} {:>10}  last seen",
        "session", "calls", "compac", "hits", "spend", "saved"
    )?;
    for row in &rows {
        let f = &row.figures;
        let (spend, uncompressed) = f.spend_usd();
        writeln!(
            out,
            "{:<58} {:>6} {:>6} {:>8} {:>10} {:>10}  {}",
            row.session,
            f.calls,
            f.compactions,
            percent(f.cache_hit_share()),
            format!("${spend:.4}"),
            format!("${:.4}", uncompressed - spend),
            utc_text(f.last_ms.max(row.saved_ms))
        )?;
    }
    writeln!(
        out,
        "\nhits: the share of the input the provider read from its cache (measured); spend: the \
         calls whose usage the provider reported, priced; saved: against the estimate of them \
         uncompressed. `condense sessions SESSION` shows one."
    )?;
    Ok(())
}

/// The figures of a run of calls, one per line.
fn figures(f: &sessions::Figures, out: &mut dyn Write) -> Result<()> {
    let (spend, uncompressed) = f.spend_usd();
    writeln!(
        out,
        "calls {}, compactions {}, recalls answered {}, fail-opens {}",
        f.calls, f.compactions, f.recalls, f.fail_opens
    )?;
    writeln!(
        out,
        "tokens (condense's estimate): {} as the clients sent them, {} sent",
        f.tokens_before, f.tokens_after
    )?;
    writeln!(
        out,
        "measured ({} calls; {} without usage): cache hits {} of the input; spend ${spend:.4} \
         (input ${:.4}, output ${:.4})",
        f.measured_calls,
        f.unknown_calls,
        percent(f.cache_hit_share()),
        f.input_usd,
        f.output_usd
    )?;
    writeln!(
        out,
        "uncompressed (an estimate): ${uncompressed:.4}; saved ${:.4}; input cost {} of the \
         estimate's",
        uncompressed - spend,
        f.input_cost_ratio()
            .map_or_else(|| "—".to_owned(), |r| format!("{r:.3}×"))
    )?;
    Ok(())
}

fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "—".to_owned(), |s| format!("{:.1}%", s * 100.0))
}

fn show(store: &dyn SessionStore, group: &str, out: &mut dyn Write) -> Result<()> {
    let Some(view) = sessions::show(store, group).with_context(|| format!("session {group}"))?
    else {
        bail!("no session {group} in the store (`condense sessions` lists them)");
    };
    writeln!(out, "session {group}")?;
    figures(&view.figures, out)?;
    writeln!(out, "\n{} compaction(s)", view.compactions.len())?;
    if !view.compactions.is_empty() {
        writeln!(
            out,
            "{:>5} {:<20} {:<9} {:>17} {:>7} {:<12} {:<16} {:>8}",
            "call",
            "when (UTC)",
            "why",
            "before → after",
            "folded",
            "summary by",
            "summary came",
            "took"
        )?;
    }
    for c in &view.compactions {
        writeln!(
            out,
            "{:>5} {:<20} {:<9} {:>17} {:>7} {:<12} {:<16} {:>6}ms",
            c.call,
            utc_text(c.at_ms),
            c.cause,
            format!("{} → {}", c.tokens_before, c.tokens_after),
            c.messages_folded,
            c.summary_by.as_deref().unwrap_or("—"),
            c.summary,
            c.took_ms
        )?;
    }
    writeln!(out, "\n{} checkpoint(s)", view.checkpoints.len())?;
    writeln!(
        out,
        "{:>8} {:>8}  {:<12}  saved",
        "request", "folded", "handle"
    )?;
    for row in &view.checkpoints {
        writeln!(
            out,
            "{:>8} {:>8}  {:<12}  {}",
            row.request,
            row.folded,
            row.handle,
            utc_text(row.saved_ms)
        )?;
    }
    writeln!(out, "\nthe latest summary:")?;
    match (&view.summary, &view.summary_unreadable) {
        (Some(summary), _) => writeln!(out, "{summary}")?,
        (None, Some(why)) => writeln!(out, "(cannot be read here: {why})")?,
        (None, None) => writeln!(out, "(none yet: the session has not compacted)")?,
    }
    Ok(())
}
