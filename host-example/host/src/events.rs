//! What a host reports about each compaction: one structured event, made
//! from the call's [`HostReport`], logged through `tracing` and appended as a
//! JSON line to an [`EventLog`]. The agent runtime also writes it to its
//! journal; `condense compact` and the proxy report theirs the same way.

pub use crate::report::Cause;
use crate::report::HostReport;
use condense_model::PassReport;
use serde::{Deserialize, Serialize};

/// One compaction: what triggered it, what it did to the request, and who
/// wrote the summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compaction {
    /// The model call (1-based, in this session) whose request was compacted;
    /// 0 where a session's calls are not numbered (`condense compact`, the
    /// proxy).
    pub call: u64,
    pub trigger: Cause,
    /// The request's estimated tokens before and after.
    pub tokens_before: u32,
    pub tokens_after: u32,
    /// Messages newly folded into the summary by this compaction.
    pub messages_folded: u32,
    pub passes: PassReport,
    /// The summarizer that wrote the summary, when this compaction folded:
    /// its name in the chain (`heuristic`, `llm`), its file name, or
    /// `embedded` ([`ComponentLabel::name`](crate::ComponentLabel::name)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_by: Option<String>,
    /// Why the summarizers before it in the chain did not write it (a model
    /// call that failed, the breaker holding model calls back).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fell_through: Vec<String>,
    /// Prompt-cache breaks in the session so far, this one included; 0 where
    /// they are not counted (`condense compact`, the proxy).
    pub cache_breaks: u32,
    /// Wall time of the compressing call, in microseconds.
    pub elapsed_us: u64,
    /// How the summary came, when the host prepares summaries ahead: used
    /// at once, waited for, on top of the plan's, the fallback's at once
    /// with the model's written for the next compaction (`later`), or
    /// written by the chain as without preparation (`fell_back`).
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub prepared: Option<crate::prepared::PreparedUse>,
}

impl Compaction {
    /// The event of a call whose `report` says it compacted (`None` if it
    /// did not): call `call` of its session, set off by `trigger`,
    /// `cache_breaks` so far.
    pub fn of(report: &HostReport, call: u64, trigger: Cause, cache_breaks: u32) -> Option<Self> {
        let guest = report.guest().filter(|_| report.compacted())?;
        Some(Compaction {
            call,
            trigger,
            tokens_before: guest.tokens_before,
            tokens_after: guest.tokens_after,
            messages_folded: guest.newly_folded,
            passes: guest.passes,
            summary_by: report.summary_by.as_ref().map(|l| l.name().to_owned()),
            fell_through: report.fell_through.clone(),
            cache_breaks,
            elapsed_us: report.elapsed_us,
            prepared: report.prepared.clone(),
        })
    }

    /// Logs the event through `tracing` (level info: `CONDENSE_LOG=info`).
    pub fn log(&self) {
        tracing::info!(
            call = self.call,
            trigger = ?self.trigger,
            tokens_before = self.tokens_before,
            tokens_after = self.tokens_after,
            folded = self.messages_folded,
            steps_elided = self.passes.steps_elided,
            results_cleared = self.passes.results_cleared,
            reasoning_pruned = self.passes.reasoning_pruned,
            summary_by = self.summary_by.as_deref().unwrap_or("-"),
            fell_through = self.fell_through.join("; "),
            cache_breaks = self.cache_breaks,
            elapsed_us = self.elapsed_us,
            prepared = self.prepared.as_ref().map_or("-", |p| p.name()),
            "compacted"
        );
    }
}

/// A file of compaction events, one JSON object per line (`condense agent
/// --events FILE`), appended to: for dashboards and scripts that follow a
/// session without reading its journal.
pub struct EventLog {
    path: std::path::PathBuf,
    file: std::fs::File,
}

impl EventLog {
    /// Opens `path` to append to it, creating it if needed.
    pub fn open(path: impl Into<std::path::PathBuf>) -> std::io::Result<EventLog> {
        let path = path.into();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        Ok(EventLog { path, file })
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Appends `event` (a [`Compaction`], or one with more about where it
    /// happened) as one line.
    pub fn append(&mut self, event: &impl Serialize) -> std::io::Result<()> {
        use std::io::Write;
        let mut line = serde_json::to_vec(event).expect("events serialise");
        line.push(b'\n');
        self.file.write_all(&line)
    }
}
