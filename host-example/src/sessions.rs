//! `condense sessions`: what the proxy's checkpoint store holds, for its
//! operator — the sessions (checkpoint groups), and for one of them each
//! compaction's checkpoint with the handle that recalls what it folded, and
//! the current summary. Read-only. Summaries hold the users' words: this is
//! an operator's view of their own store.

use anyhow::{Context, Result, bail};
use clap::Args;
use condense_host::sessions::{SessionStore, StoredCheckpoint};
use condense_host::timing::utc_text;
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

/// A group's checkpoints, the latest (made for the longest request) first.
fn latest_first(store: &dyn SessionStore, group: &str) -> Result<Vec<StoredCheckpoint>> {
    let mut entries = store
        .entries(group)
        .with_context(|| format!("session {group}"))?;
    entries.sort_by_key(|e| std::cmp::Reverse((e.len, e.checkpoint.checkpoint.boundary)));
    Ok(entries)
}

fn list(store: &dyn SessionStore, kept_in: &str, out: &mut dyn Write) -> Result<()> {
    let groups = store.groups()?;
    writeln!(out, "{} session(s) in {kept_in}", groups.len())?;
    if groups.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "{:<58} {:>11} {:>8} {:>8}  saved",
        "session", "checkpoints", "request", "folded"
    )?;
    for group in &groups {
        let entries = latest_first(store, group)?;
        let Some(latest) = entries.first() else {
            continue;
        };
        writeln!(
            out,
            "{group:<58} {:>11} {:>8} {:>8}  {}",
            entries.len(),
            latest.len,
            latest.checkpoint.checkpoint.boundary,
            utc_text(latest.saved_ms)
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
    let entries = latest_first(store, group)?;
    let Some(latest) = entries.first() else {
        bail!("no session {group} in the store (`condense sessions` lists them)");
    };
    writeln!(out, "session {group}: {} checkpoint(s)", entries.len())?;
    writeln!(
        out,
        "{:>8} {:>8}  {:<12}  saved",
        "request", "folded", "handle"
    )?;
    for entry in &entries {
        writeln!(
            out,
            "{:>8} {:>8}  {:<12}  {}",
            entry.len,
            entry.checkpoint.checkpoint.boundary,
            handle(entry),
            utc_text(entry.saved_ms)
        )?;
    }
    writeln!(out, "\nthe latest summary:")?;
    match condense_compressor::state::State::read(&latest.checkpoint.checkpoint) {
        Ok(state) => writeln!(out, "{}", state.summary)?,
        Err(e) => writeln!(
            out,
            "(not the embedded compressor's checkpoint, so its summary cannot be read here: {e})"
        )?,
    }
    Ok(())
}

/// The `condense_recall` handle of what a checkpoint folded, from the
/// host's prefix hash of the history before its boundary, which it keeps
/// beside the checkpoint.
fn handle(entry: &StoredCheckpoint) -> String {
    u128::from_str_radix(&entry.checkpoint.prefix_hash, 16)
        .map_or_else(|_| "?".to_owned(), condense_model::recall::fold_handle_of)
}
