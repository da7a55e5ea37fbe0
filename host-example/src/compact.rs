//! `condense compact`: a compaction now, whatever the threshold says, written
//! as a new history file in the session's own format.
//!
//! The file written starts with condense's summary pair. condense recognises
//! such a history when it meets it again (by the pair's position and
//! marker): the next compaction folds what came after the pair into its
//! summary, so compacting a compacted history does not summarise the
//! summary as conversation.

use crate::common::Common;
use crate::session::SessionFile;
use anyhow::{Context, Result, bail};
use clap::Args;
use condense_config::AgentSettings;
use condense_host::body::{self, BodyConfig};
use condense_host::events::{Cause, Compaction};
use condense_host::store::{MemoryStore, write_atomically};
use condense_host::{HostReport, Status};
use condense_model::tokens::estimate_total;
use condense_model::{CoreConfig, Message, Role, Trigger};
use condense_runtime::journal::{Event, Journal};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What `condense compact` was asked to do.
pub struct CompactRun {
    pub session: PathBuf,
    /// Where to write; `None`: beside the session (`NAME.compacted.EXT`), or
    /// over it with `in_place`.
    pub output: Option<PathBuf>,
    /// Replace the session, keeping the original as `SESSION.bak`.
    pub in_place: bool,
    /// A file to append the compaction event to, as a JSON line.
    pub events: Option<PathBuf>,
}

/// The smallest threshold a config may have ([`condense_model::CORE_RANGES`]).
const MIN_THRESHOLD: u32 = 1_000;

/// `core` made to compact a request of `tokens` now: as it is when the
/// request is over its threshold, otherwise the defaults for a threshold
/// just under the request (its recent-turn count kept).
fn forced(core: &CoreConfig, tokens: u64) -> Result<CoreConfig> {
    if tokens > u64::from(core.token_threshold) {
        return Ok(*core);
    }
    // Under a u32 threshold, so it fits one.
    let threshold = tokens.saturating_sub(1) as u32;
    if threshold < MIN_THRESHOLD {
        bail!(
            "the session is ~{tokens} tokens: too small to compact (condense compacts requests \
             over {MIN_THRESHOLD} tokens)"
        );
    }
    Ok(CoreConfig {
        recent_turns: core.recent_turns,
        ..CoreConfig::for_threshold(threshold)
    })
}

pub fn run(settings: &AgentSettings, run: &CompactRun, out: &mut dyn Write) -> Result<()> {
    let session = SessionFile::read(&run.session)?;
    let (dest, backup) = destination(run)?;
    let events = crate::session::events_log(run.events.as_deref())?;
    let middleware = crate::components::middleware(settings)?;
    let json = settings.compressor_json();
    let before = session.messages().to_vec();

    // Compress, and render in the session's own format.
    let (report, written, after): (HostReport, Vec<u8>, Vec<Message>) = match &session {
        SessionFile::Body { parsed, bytes } => {
            let tokens = estimate_total(parsed.messages())
                .saturating_add(body::tools_tokens(parsed.body()).into());
            let config = BodyConfig {
                core: forced(&settings.core, tokens)?,
                settings: json,
                cold: None,
                recall: None,
            };
            // The body as read, through the one entry point, in the format
            // it was read in.
            let sent = body::compress_body(
                &middleware,
                &config,
                bytes,
                Some(parsed.format()),
                &mut MemoryStore::default(),
            )
            .map_err(|e| anyhow::anyhow!("{}: {e}", run.session.display()))?;
            let value: serde_json::Value = serde_json::from_slice(&sent.body)?;
            let after = body::parse_body(&sent.body, Some(parsed.format()))
                .map_err(|e| anyhow::anyhow!("the compacted body: {e}"))?
                .messages()
                .to_vec();
            let mut text = serde_json::to_vec_pretty(&value)?;
            text.push(b'\n');
            (sent.report, text, after)
        }
        SessionFile::Journal { messages, .. } => {
            let core = forced(&settings.core, estimate_total(messages))?;
            let sent = middleware.compress(messages, &core, &json, None);
            let after = sent.messages(messages);
            (sent.report, Vec::new(), after)
        }
    };
    let Some(guest) = report
        .guest()
        .filter(|_| report.status() == Status::Compressed)
    else {
        bail!(
            "condense failed ({}); nothing was written",
            report.reason().unwrap_or("no report")
        );
    };
    if guest.trigger != Trigger::Compacted {
        bail!(
            "nothing to fold: no cut of this history makes it smaller (the recent tail is all \
             of it); nothing was written"
        );
    }
    let compaction = Compaction::of(&report, 0, Cause::Manual, 0)
        .expect("a compressed report whose trigger is a compaction");

    // Written in full beside the destination, then moved into place: an
    // error leaves the session as it was and no half-written file.
    let temp = sibling(&dest, ".condense-tmp");
    let _ = std::fs::remove_file(&temp);
    let result = match &session {
        SessionFile::Body { .. } => write_atomically(&temp, &written)
            .with_context(|| format!("cannot write {}", temp.display())),
        SessionFile::Journal { .. } => write_journal(&temp, &after, &compaction),
    };
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temp);
        return Err(e);
    }
    if let Some(backup) = &backup {
        std::fs::rename(&run.session, backup).with_context(|| {
            format!(
                "cannot move {} to {}",
                run.session.display(),
                backup.display()
            )
        })?;
    }
    std::fs::rename(&temp, &dest)
        .with_context(|| format!("cannot move {} to {}", temp.display(), dest.display()))?;
    compaction.log();
    if let Some(mut log) = events {
        log.append(&compaction)
            .with_context(|| format!("--events {}", log.path().display()))?;
    }

    writeln!(
        out,
        "{}: {} messages, ~{} tokens → {} messages, ~{} tokens ({} folded into the summary{})",
        run.session.display(),
        before.len(),
        guest.tokens_before,
        after.len(),
        guest.tokens_after,
        guest.newly_folded,
        report
            .summary_by
            .as_ref()
            .map_or(String::new(), |s| format!(" by {s}"))
    )?;
    writeln!(out, "written to {}", dest.display())?;
    if let Some(backup) = backup {
        writeln!(out, "the original is {}", backup.display())?;
    }
    Ok(())
}

/// Where the compacted history goes, and where the original goes with
/// `--in-place`. Nothing already there is overwritten.
fn destination(run: &CompactRun) -> Result<(PathBuf, Option<PathBuf>)> {
    let (dest, backup) = if run.in_place {
        (run.session.clone(), Some(sibling(&run.session, ".bak")))
    } else {
        let dest = run.output.clone().unwrap_or_else(|| {
            let stem = run
                .session
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy();
            let name = match run.session.extension() {
                Some(ext) => format!("{stem}.compacted.{}", ext.to_string_lossy()),
                None => format!("{stem}.compacted"),
            };
            run.session.with_file_name(name)
        });
        (dest, None)
    };
    let taken = if run.in_place {
        backup.as_ref()
    } else {
        Some(&dest)
    };
    if let Some(path) = taken.filter(|p| p.exists()) {
        bail!(
            "{} exists: move it away or name another file with --output",
            path.display()
        );
    }
    Ok((dest, backup))
}

/// `path` with `suffix` appended to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(suffix);
    path.with_file_name(name)
}

/// A journal of `messages`, then the compaction that made them.
fn write_journal(path: &Path, messages: &[Message], compaction: &Compaction) -> Result<()> {
    let mut journal = Journal::create(path)?;
    for message in messages {
        let message = message.clone();
        let event = match message.role {
            Role::Assistant => Event::ModelResponse {
                message,
                usage: None,
                at_ms: None,
            },
            _ if message.is_result_carrier() => Event::ToolResult { message },
            _ => Event::User { message },
        };
        journal.append(&event)?;
    }
    journal.append(&Event::Compaction(compaction.clone()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_under_the_threshold_is_given_one_just_under_it() {
        let core = CoreConfig::default();
        let config = forced(&core, 30_000).unwrap();
        assert_eq!(config.token_threshold, 29_999);
        assert!(config.validate().is_ok());
        assert_eq!(config.recent_turns, core.recent_turns);
        assert_eq!(
            forced(&core, u64::from(core.token_threshold) + 1).unwrap(),
            core
        );
        let small = forced(&core, 900).unwrap_err().to_string();
        assert!(small.contains("too small"), "{small}");
    }
}

#[derive(Args)]
pub struct CompactArgs {
    #[command(flatten)]
    pub common: Common,
    /// Where to write the compacted history. Default: SESSION's name with `.compacted`
    /// before its extension, beside it.
    #[arg(long, short, value_name = "FILE", conflicts_with = "in_place")]
    pub output: Option<PathBuf>,
    /// Replace SESSION, keeping the original as SESSION.bak.
    #[arg(long)]
    pub in_place: bool,
    /// Append the compaction event to FILE as a JSON line.
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// The session: a journal (.jsonl) or a request body / message list.
    #[arg(value_name = "SESSION")]
    pub session: PathBuf,
}
