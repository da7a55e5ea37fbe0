//! What one call did, for logs, metrics and the caller: the verdict (compressed,
//! unchanged, or failed open and why), the summarizer that wrote the summary,
//! and what the host did with the checkpoint.

use crate::failure::{ComponentLabel, FailureKind};
use condense_model::{Report, Trigger};
use serde::{Deserialize, Serialize};

/// What the call did to the request, in one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The request differs from the history: something was folded or
    /// rewritten (now, or by the checkpoint reused).
    Compressed,
    /// The compressor ran and kept every message as it is.
    Unchanged,
    /// Something failed; the history is sent as it is.
    FailedOpen,
}

/// What the call did to the request, with what each case knows. Serialised
/// flat into [`HostReport`]: `status` names the case.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Verdict {
    /// Something was folded or rewritten; `guest` is the compressor's report.
    Compressed { guest: Report },
    /// The compressor kept every message as it is.
    Unchanged { guest: Report },
    /// Something failed; the history is sent as it is.
    FailedOpen {
        /// The component that failed; `None` when no component ran (the
        /// request was over the size cap, which `reason` names).
        #[serde(skip_serializing_if = "Option::is_none")]
        component: Option<ComponentLabel>,
        /// How it failed; `None` when no component ran.
        #[serde(skip_serializing_if = "Option::is_none")]
        failure: Option<FailureKind>,
        /// The failure as a sentence naming the component.
        reason: String,
        /// The compressor's report, when it returned one (an output that
        /// failed validation).
        #[serde(skip_serializing_if = "Option::is_none")]
        guest: Option<Report>,
    },
}

/// What set a compaction off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The request crossed `token_threshold` (and a policy let it proceed).
    Threshold,
    /// Before the threshold: the compressor judged compacting now cheaper
    /// than carrying on (condense's `cost` rule).
    Cost,
    /// Before the threshold, on a call the host told the compressor its
    /// prompt cache had expired (the `cost` rule's compaction due soon).
    Cold,
    /// Someone asked for it (`condense compact`).
    Manual,
}

impl Cause {
    /// Its name, as events write it.
    pub fn name(self) -> &'static str {
        match self {
            Cause::Threshold => "threshold",
            Cause::Cost => "cost",
            Cause::Cold => "cold",
            Cause::Manual => "manual",
        }
    }
}

/// What happened in one call, for logs and metrics.
#[derive(Clone, Debug, Serialize)]
pub struct HostReport {
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Why the stored checkpoint was not used, when one was given and not
    /// used (the fold was recomputed: one prompt-cache break).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint_ignored: Option<String>,
    /// The summarizer that wrote the summary, when this call folded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_by: Option<ComponentLabel>,
    /// Why the summarizers before it in the chain did not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fell_through: Vec<String>,
    /// The index of the first history message sent to the compressor: the
    /// checkpoint's boundary when the folded messages were unchanged, else 0.
    pub sent_from: u32,
    /// Wall time of the whole call, validation included.
    pub elapsed_us: u64,
    /// The new checkpoint could not be stored (set by [`compress_body`]
    /// (crate::compress_body)): the request is still good to send, and the
    /// next call compacts again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store_error: Option<String>,
    /// How the summary of this call's compaction came, when the host keeps
    /// summaries prepared ahead ([`crate::prepared`]).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub prepared: Option<crate::prepared::PreparedUse>,
    /// The request passed the compressor's soft mark without compacting:
    /// the next compaction's summary can be prepared now
    /// ([`crate::middleware::Middleware::prepare`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub prepare_due: bool,
}

impl HostReport {
    pub fn status(&self) -> Status {
        match self.verdict {
            Verdict::Compressed { .. } => Status::Compressed,
            Verdict::Unchanged { .. } => Status::Unchanged,
            Verdict::FailedOpen { .. } => Status::FailedOpen,
        }
    }

    /// Whether this call compacted: the request it sends folds more than the
    /// checkpoint it was given did.
    pub fn compacted(&self) -> bool {
        self.status() == Status::Compressed
            && self
                .guest()
                .is_some_and(|g| g.trigger == Trigger::Compacted)
    }

    /// The compressor's report, when it returned one.
    pub fn guest(&self) -> Option<&Report> {
        match &self.verdict {
            Verdict::Compressed { guest } | Verdict::Unchanged { guest } => Some(guest),
            Verdict::FailedOpen { guest, .. } => guest.as_ref(),
        }
    }

    /// Why the call failed open.
    pub fn reason(&self) -> Option<&str> {
        match &self.verdict {
            Verdict::FailedOpen { reason, .. } => Some(reason),
            _ => None,
        }
    }

    /// How the component failed, when the call failed open in one.
    pub fn failure(&self) -> Option<FailureKind> {
        match &self.verdict {
            Verdict::FailedOpen { failure, .. } => *failure,
            _ => None,
        }
    }

    /// The component that failed, when the call failed open in one.
    pub fn component(&self) -> Option<&ComponentLabel> {
        match &self.verdict {
            Verdict::FailedOpen { component, .. } => component.as_ref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cause;

    #[test]
    fn a_causes_name_is_the_one_events_write() {
        for cause in [Cause::Threshold, Cause::Cost, Cause::Cold, Cause::Manual] {
            assert_eq!(serde_json::to_value(cause).unwrap(), cause.name());
        }
    }
}
