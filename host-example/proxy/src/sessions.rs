//! What a checkpoint store holds, for the proxy's operator: its sessions
//! (checkpoint groups) with their figures — calls, tokens, compactions,
//! recalls, the provider's measured usage and cost beside the uncompressed
//! estimate ([`crate::ledger`]) — and for one of them each call, each
//! compaction with what set it off and how its summary came, each
//! checkpoint with the handle that recalls what it folded, and the current
//! summary. Served read-only as `GET /sessions` and `GET /sessions/{session}`
//! (JSON) and as the operator's page ([`crate::page`]), and printed by
//! `condense sessions`: one computation, so they show the same figures.
//!
//! Summaries hold the users' words, so the view is the operator's: who may
//! read it is [`crate::guard::Access`].

use condense_host::formats::usage::Usage;
use condense_host::store::StoreError;
use condense_replay::plot::SpendPoint;
use condense_sessions::{CallOutcome, CallRecord, SessionStore, StoredCheckpoint, in_order};
use serde::Serialize;

/// A run of calls summed: one session's, or every session's.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Figures {
    pub calls: u64,
    pub compactions: u64,
    pub fail_opens: u64,
    /// `condense_recall` calls answered.
    pub recalls: u64,
    /// condense's estimate of the requests as the clients sent them and as
    /// they went upstream.
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// Calls whose usage the provider reported, and those whose it did not
    /// (in no measured figure).
    pub measured_calls: u64,
    pub unknown_calls: u64,
    /// The provider's usage of the measured calls, summed.
    pub usage: Usage,
    /// The measured calls priced: input, output.
    pub input_usd: f64,
    pub output_usd: f64,
    /// An estimate: their input uncompressed
    /// ([`condense_sessions::uncompressed_input_usd`]).
    pub uncompressed_input_usd: f64,
    /// The first and latest call, ms since the Unix epoch.
    pub first_ms: u64,
    pub last_ms: u64,
}

impl Figures {
    /// The figures of one session's `calls`.
    pub fn of(calls: &[CallRecord]) -> Figures {
        let mut figures = Figures::default();
        for (call, estimate) in in_order(calls) {
            figures.add(call, estimate);
        }
        figures
    }

    /// Adds one call, with its estimate uncompressed: the figures of that
    /// call alone, merged.
    pub fn add(&mut self, call: &CallRecord, uncompressed_input_usd: Option<f64>) {
        let priced = call.cost.zip(uncompressed_input_usd);
        self.merge(&Figures {
            calls: 1,
            compactions: u64::from(call.compaction.is_some()),
            fail_opens: u64::from(call.outcome == CallOutcome::FailedOpen),
            recalls: u64::from(call.recalls),
            tokens_before: u64::from(call.tokens_before),
            tokens_after: u64::from(call.tokens_after),
            measured_calls: u64::from(call.usage.is_some()),
            unknown_calls: u64::from(call.usage.is_none()),
            usage: call.usage.unwrap_or_default(),
            input_usd: priced.map_or(0.0, |(cost, _)| cost.input_usd),
            output_usd: priced.map_or(0.0, |(cost, _)| cost.output_usd),
            uncompressed_input_usd: priced.map_or(0.0, |(_, estimate)| estimate),
            first_ms: call.at_ms,
            last_ms: call.at_ms,
        });
    }

    /// Adds every figure of `other` (another session's).
    pub fn merge(&mut self, other: &Figures) {
        if other.calls == 0 {
            return;
        }
        self.first_ms = match self.calls {
            0 => other.first_ms,
            _ => self.first_ms.min(other.first_ms),
        };
        self.last_ms = self.last_ms.max(other.last_ms);
        self.calls += other.calls;
        self.compactions += other.compactions;
        self.fail_opens += other.fail_opens;
        self.recalls += other.recalls;
        self.tokens_before += other.tokens_before;
        self.tokens_after += other.tokens_after;
        self.measured_calls += other.measured_calls;
        self.unknown_calls += other.unknown_calls;
        self.usage.cache_read += other.usage.cache_read;
        self.usage.cache_write += other.usage.cache_write;
        self.usage.uncached += other.usage.uncached;
        self.usage.output += other.usage.output;
        self.input_usd += other.input_usd;
        self.output_usd += other.output_usd;
        self.uncompressed_input_usd += other.uncompressed_input_usd;
    }

    /// The share of the measured input the provider read from its cache;
    /// `None` before any.
    pub fn cache_hit_share(&self) -> Option<f64> {
        let input = self.usage.input();
        (input > 0).then(|| self.usage.cache_read as f64 / input as f64)
    }

    /// What the measured calls cost, and the estimate of them uncompressed
    /// (the same output).
    pub fn spend_usd(&self) -> (f64, f64) {
        (
            self.input_usd + self.output_usd,
            self.uncompressed_input_usd + self.output_usd,
        )
    }

    /// The measured input's cost over the estimate of it uncompressed: the
    /// replay's cost figure, measured (`None` before any measured call).
    pub fn input_cost_ratio(&self) -> Option<f64> {
        (self.uncompressed_input_usd > 0.0).then(|| self.input_usd / self.uncompressed_input_usd)
    }
}

/// One session of the list.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SessionRow {
    pub session: String,
    /// The agent and model of its latest call (empty before any).
    pub agent: String,
    pub model: String,
    pub figures: Figures,
    pub checkpoints: usize,
    /// Messages of the request the latest checkpoint was made for.
    pub request: u32,
    /// Messages before its boundary.
    pub folded: u32,
    /// When it was saved, ms since the Unix epoch.
    pub saved_ms: u64,
}

/// One compaction's checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckpointRow {
    pub request: u32,
    pub folded: u32,
    /// The `condense_recall` handle of what it folded.
    pub handle: String,
    pub saved_ms: u64,
}

/// One compaction, as its call's record has it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CompactionRow {
    /// The call (1-based among the session's calls kept) and when.
    pub call: usize,
    pub at_ms: u64,
    /// What set it off: threshold, cost, cold, manual.
    pub cause: &'static str,
    pub tokens_before: u32,
    pub tokens_after: u32,
    pub messages_folded: u32,
    /// The summarizer that wrote its summary.
    pub summary_by: Option<String>,
    /// How the summary came: `prepared` (ahead, used at once), `waited`
    /// (for its job), `prepared+written` (the rest written on top of it),
    /// `written` (when it came).
    pub summary: &'static str,
    /// How long the compressing call took, ms.
    pub took_ms: u64,
}

/// One call of a session, with its estimate uncompressed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallRow {
    #[serde(flatten)]
    pub call: CallRecord,
    /// An estimate: its input uncompressed
    /// ([`condense_sessions::uncompressed_input_usd`]); `None` when it was
    /// not priced.
    pub uncompressed_input_usd: Option<f64>,
}

/// One session: its figures, its calls, its compactions, its checkpoints
/// (the latest first) and the latest summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SessionView {
    pub session: String,
    pub figures: Figures,
    /// The calls kept, in the order they came.
    pub calls: Vec<CallRow>,
    pub compactions: Vec<CompactionRow>,
    pub checkpoints: Vec<CheckpointRow>,
    /// The latest summary message, as the model sees it (framing included).
    pub summary: Option<String>,
    /// Why the summary cannot be read here, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_unreadable: Option<String>,
}

/// A group's checkpoints, the latest (made for the longest request) first.
fn latest_first(
    store: &dyn SessionStore,
    group: &str,
) -> Result<Vec<StoredCheckpoint>, StoreError> {
    let mut entries = store.entries(group)?;
    entries.sort_by_key(|e| std::cmp::Reverse((e.len, e.checkpoint.checkpoint.boundary)));
    Ok(entries)
}

/// Every session of `store`, sorted, with its figures.
pub fn list(store: &dyn SessionStore) -> Result<Vec<SessionRow>, StoreError> {
    Ok(sessions(store)?.into_iter().map(|(row, _)| row).collect())
}

/// Every session of `store`, sorted, with its figures and the calls they
/// are of (read once, for the list and the spend over time alike).
fn sessions(store: &dyn SessionStore) -> Result<Vec<(SessionRow, Vec<CallRecord>)>, StoreError> {
    let mut rows = Vec::new();
    for group in store.groups()? {
        let entries = latest_first(store, &group)?;
        let calls = store.calls(&group)?;
        let latest_call = calls.last();
        let latest = entries.first();
        let row = SessionRow {
            agent: latest_call.map(|c| c.agent.clone()).unwrap_or_default(),
            model: latest_call.map(|c| c.model.clone()).unwrap_or_default(),
            figures: Figures::of(&calls),
            checkpoints: entries.len(),
            request: latest.map_or(0, |e| e.len),
            folded: latest.map_or(0, |e| e.checkpoint.checkpoint.boundary),
            saved_ms: latest.map_or(0, |e| e.saved_ms),
            session: group,
        };
        rows.push((row, calls));
    }
    Ok(rows)
}

/// Every session's figures summed, and the measured spend over time: the
/// calls of every session in time order, each point the spend so far.
pub fn overview(
    store: &dyn SessionStore,
) -> Result<(Vec<SessionRow>, Figures, Vec<SpendPoint>), StoreError> {
    let (rows, calls): (Vec<SessionRow>, Vec<Vec<CallRecord>>) =
        sessions(store)?.into_iter().unzip();
    let mut total = Figures::default();
    for row in &rows {
        total.merge(&row.figures);
    }
    // Each session's calls priced in its own order, then all of them in
    // time order.
    let mut priced: Vec<(u64, f64, f64)> = Vec::new();
    for (call, estimate) in calls.iter().flat_map(|session| in_order(session)) {
        if let (Some(cost), Some(estimate)) = (&call.cost, estimate) {
            priced.push((call.at_ms, cost.usd(), estimate + cost.output_usd));
        }
    }
    priced.sort_by_key(|p| p.0);
    let (mut measured_usd, mut uncompressed_usd) = (0.0, 0.0);
    let points = priced
        .into_iter()
        .map(|(at_ms, measured, uncompressed)| {
            measured_usd += measured;
            uncompressed_usd += uncompressed;
            SpendPoint {
                at_ms,
                measured_usd,
                uncompressed_usd,
            }
        })
        .collect();
    Ok((rows, total, points))
}

/// Session `group` of `store`, or `None` when it has neither a checkpoint
/// nor a call.
pub fn show(store: &dyn SessionStore, group: &str) -> Result<Option<SessionView>, StoreError> {
    let entries = latest_first(store, group)?;
    let calls = store.calls(group)?;
    if entries.is_empty() && calls.is_empty() {
        return Ok(None);
    }
    // The summary message as the host read it from the compressor's output
    // (the contract), never the compressor's private state.
    let latest = entries.first();
    let summary = latest.and_then(|l| l.checkpoint.summary.clone());
    let summary_unreadable = latest
        .filter(|l| summary.is_none() && l.checkpoint.checkpoint.boundary > 0)
        .map(|_| "saved before the host kept the summary beside the checkpoint".to_owned());
    let calls: Vec<CallRow> = in_order(&calls)
        .into_iter()
        .map(|(call, estimate)| CallRow {
            call: call.clone(),
            uncompressed_input_usd: estimate,
        })
        .collect();
    let compactions = calls
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let (call, c) = (&row.call, row.call.compaction.as_ref()?);
            Some(CompactionRow {
                call: i + 1,
                at_ms: call.at_ms,
                cause: c.trigger.name(),
                tokens_before: c.tokens_before,
                tokens_after: c.tokens_after,
                messages_folded: c.messages_folded,
                summary_by: c.summary_by.clone(),
                summary: summary_came(c.prepared.as_ref()),
                took_ms: c.elapsed_us / 1000,
            })
        })
        .collect();
    let mut figures = Figures::default();
    for row in &calls {
        figures.add(&row.call, row.uncompressed_input_usd);
    }
    Ok(Some(SessionView {
        session: group.to_owned(),
        figures,
        calls,
        compactions,
        checkpoints: entries
            .iter()
            .map(|e| CheckpointRow {
                request: e.len,
                folded: e.checkpoint.checkpoint.boundary,
                handle: handle(e),
                saved_ms: e.saved_ms,
            })
            .collect(),
        summary,
        summary_unreadable,
    }))
}

/// How a compaction's summary came: prepared ahead and used at once,
/// waited for, prepared with the rest written on top (the compaction
/// folded past its plan), the fallback's at once with the model's for the
/// next compaction, or written when it came (no preparation, or it fell
/// back).
fn summary_came(prepared: Option<&condense_host::prepared::PreparedUse>) -> &'static str {
    use condense_host::prepared::PreparedUse;
    match prepared {
        Some(PreparedUse::Used) => "prepared",
        Some(PreparedUse::OnTop) => "prepared+written",
        Some(PreparedUse::Waited { .. }) => "waited",
        Some(PreparedUse::Later { .. }) => "fallback now, model's next",
        Some(PreparedUse::FellBack { .. }) | None => "written",
    }
}

/// The `condense_recall` handle of what a checkpoint folded, from the
/// host's prefix hash of the history before its boundary, which it keeps
/// beside the checkpoint.
fn handle(entry: &StoredCheckpoint) -> String {
    u128::from_str_radix(&entry.checkpoint.prefix_hash, 16)
        .map_or_else(|_| "?".to_owned(), condense_model::recall::fold_handle_of)
}
