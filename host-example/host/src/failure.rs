//! What went wrong in a guest call, named per component: the words every
//! report, log line and error uses. The sandbox says why a store stopped
//! ([`Stop`]); this module says what that means for a component.

use crate::sandbox::Stop;
use serde::Serialize;
use std::fmt;

/// What a component is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ComponentRole {
    Compressor,
    Summarizer,
}

impl fmt::Display for ComponentRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ComponentRole::Compressor => "compressor",
            ComponentRole::Summarizer => "summarizer",
        })
    }
}

/// Names a component in errors and reports: "embedded compressor" or
/// "summarizer `my_summ.wasm`".
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ComponentLabel {
    pub role: ComponentRole,
    /// File name of a component loaded from a path, or the name an
    /// embedded one was given (`heuristic`, `llm`); `None` when embedded
    /// unnamed.
    pub file: Option<String>,
}

impl ComponentLabel {
    /// The component's name without its role: the file, the given name, or
    /// `embedded` (a metric's label, an event's `summary_by`).
    pub fn name(&self) -> &str {
        self.file.as_deref().unwrap_or("embedded")
    }
}

impl fmt::Display for ComponentLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{} `{file}`", self.role),
            None => write!(f, "embedded {}", self.role),
        }
    }
}

/// How a guest call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// Unreadable, not a component, needs imports the host does not give, or
    /// does not export what its role requires.
    Load,
    /// Could not be instantiated for a call (e.g. the instance pool is full).
    Instantiate,
    /// Ran past the call's deadline (epoch interruption).
    Deadline,
    /// Tried to grow its memory beyond the cap.
    OutOfMemory,
    /// Panicked or aborted (wasm `unreachable`).
    Panic,
    StackOverflow,
    /// Any other trap or host-side error during the call.
    Trap,
    /// The compressor returned its typed `compress-error`.
    CompressError,
    /// The compressor could not use the checkpoint of an offset call; the
    /// middleware calls again with the whole history.
    NeedsFullHistory,
    /// No summarizer could write the summary the fold needed.
    Summarizer,
    /// The compressor returned output that breaks condense's invariants.
    InvalidOutput,
}

/// A failed guest call: which component, what kind of failure, and the detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuestFailure {
    pub component: ComponentLabel,
    pub kind: FailureKind,
    pub detail: String,
}

impl fmt::Display for GuestFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            FailureKind::Load => "could not be loaded",
            FailureKind::Instantiate => "could not be instantiated",
            FailureKind::Deadline
            | FailureKind::OutOfMemory
            | FailureKind::Panic
            | FailureKind::StackOverflow
            | FailureKind::Trap => "trapped",
            FailureKind::CompressError => "refused to compress",
            FailureKind::NeedsFullHistory => "needs the whole history",
            FailureKind::Summarizer => "refused to summarize",
            FailureKind::InvalidOutput => "returned invalid output",
        };
        write!(f, "{} {what}: {}", self.component, self.detail)
    }
}

impl std::error::Error for GuestFailure {}

impl From<Stop> for FailureKind {
    fn from(stop: Stop) -> FailureKind {
        match stop {
            Stop::Deadline => FailureKind::Deadline,
            Stop::OutOfMemory => FailureKind::OutOfMemory,
            Stop::Panic => FailureKind::Panic,
            Stop::StackOverflow => FailureKind::StackOverflow,
            Stop::Trap => FailureKind::Trap,
        }
    }
}

pub(crate) fn failure(
    component: &ComponentLabel,
    kind: FailureKind,
    detail: String,
) -> GuestFailure {
    GuestFailure {
        component: component.clone(),
        kind,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::{ComponentSource, label};

    #[test]
    fn failures_read_as_sentences() {
        let failure = GuestFailure {
            component: label(
                ComponentRole::Summarizer,
                &ComponentSource::Path("my_summ.wasm".into()),
            ),
            kind: FailureKind::Deadline,
            detail: "wasm trap: interrupt (deadline of 5s exceeded)".into(),
        };
        assert_eq!(
            failure.to_string(),
            "summarizer `my_summ.wasm` trapped: wasm trap: interrupt (deadline of 5s exceeded)"
        );
    }
}
