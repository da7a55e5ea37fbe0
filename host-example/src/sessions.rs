//! `condense sessions`: what the proxy's checkpoint store holds, for its
//! operator — the sessions (checkpoint groups), and for one of them each
//! compaction's checkpoint with the handle that recalls what it folded, and
//! the current summary. Read-only. Summaries hold the users' words: this is
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
    let rows = sessions::list(store)?;
    writeln!(out, "{} session(s) in {kept_in}", rows.len())?;
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "{:<58} {:>11} {:>8} {:>8}  saved",
        "session", "checkpoints", "request", "folded"
    )?;
    for row in &rows {
        writeln!(
            out,
            "{:<58} {:>11} {:>8} {:>8}  {}",
            row.session,
            row.checkpoints,
            row.request,
            row.folded,
            utc_text(row.saved_ms)
        )?;
    }
    writeln!(
        out,
        "\nrequest: messages of the request the latest checkpoint was made for; folded: \
         messages before its boundary. `condense sessions SESSION` shows one."
    )?;
    Ok(())
}

fn show(store: &dyn SessionStore, group: &str, out: &mut dyn Write) -> Result<()> {
    let Some(view) = sessions::show(store, group).with_context(|| format!("session {group}"))?
    else {
        bail!("no session {group} in the store (`condense sessions` lists them)");
    };
    writeln!(
        out,
        "session {group}: {} checkpoint(s)",
        view.checkpoints.len()
    )?;
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
        (None, why) => writeln!(
            out,
            "(cannot be read here: {})",
            why.as_deref().unwrap_or("?")
        )?,
    }
    Ok(())
}
