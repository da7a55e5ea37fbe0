//! The fail-open middleware: what an agent runtime calls before each model
//! call. It never fails: when the compressor cannot produce a valid output, the
//! model gets the original messages and the report says why.

use crate::runtime::{ComponentLabel, FailureKind, GuestFailure, Runtime};
use condense_model::invariants::check_output;
use condense_model::{Checkpoint, Config, Message, Outcome, Part, Report};
use serde::Serialize;
use std::time::Instant;

/// The default of [`Middleware::with_max_request_bytes`] and of the config
/// file's `limits.max_request_bytes`: 64 MiB, twice the largest request body a
/// provider takes (Anthropic's Messages API caps it at 32 MB, base64 images
/// included), so no real request comes near it, and a quarter of the default
/// guest memory (256 MiB), which must also hold the compressor's working
/// copies of the request.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 64 << 20;

/// Runs compressions through a [`Runtime`] and validates every output.
pub struct Middleware {
    runtime: Runtime,
    max_request_bytes: usize,
}

/// What to send to the model, and what to store beside the session.
#[derive(Clone, Debug)]
pub struct Compressed {
    pub messages: Vec<Message>,
    /// Pass it to the next call. On failure this is the checkpoint the call
    /// was given, so one failed call does not lose the fold.
    pub checkpoint: Option<Checkpoint>,
    pub report: HostReport,
}

/// Whether the messages were compressed or passed through after a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Compressed,
    FailedOpen,
}

/// What happened in one call, for logs and metrics.
#[derive(Clone, Debug, Serialize)]
pub struct HostReport {
    pub status: Status,
    /// The component that failed. `None` with [`Status::FailedOpen`] when no
    /// component ran: the request was over the size cap
    /// ([`Middleware::with_max_request_bytes`]), which `reason` names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component: Option<ComponentLabel>,
    /// How the component failed; `None` when no component ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureKind>,
    /// The failure as a sentence naming the component.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The compressor's own report, when it returned one (also for an output
    /// that failed validation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guest: Option<Report>,
    /// Wall time of the whole call, validation included.
    pub elapsed_us: u64,
}

impl Middleware {
    /// A middleware over `runtime` accepting requests up to
    /// [`DEFAULT_MAX_REQUEST_BYTES`].
    pub fn new(runtime: Runtime) -> Middleware {
        Middleware {
            runtime,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
        }
    }

    /// Sets the size cap: a request whose messages carry more than `bytes`
    /// bytes of content ([`request_bytes`]) is sent unchanged without being
    /// copied into the compressor, so an oversized request costs neither the
    /// copy nor a guest running into its memory limit.
    pub fn with_max_request_bytes(mut self, bytes: usize) -> Middleware {
        self.max_request_bytes = bytes;
        self
    }

    pub fn max_request_bytes(&self) -> usize {
        self.max_request_bytes
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Compresses `messages` (the durable history, which is never modified)
    /// into the request to send. On any failure, returns a copy of `messages`
    /// and the given checkpoint, and logs a warning.
    pub fn compress(
        &self,
        messages: &[Message],
        config: &Config,
        checkpoint: Option<&Checkpoint>,
    ) -> Compressed {
        let started = Instant::now();
        let size = request_bytes(messages);
        if size > self.max_request_bytes {
            // Checked before the runtime is called: the point of the cap is
            // that such a request is never copied into the guest. No
            // component ran, so there is no `FailureKind`: the reason says it.
            let reason = format!(
                "request of {size} bytes is over limits.max_request_bytes = {}: sent unchanged, \
                 no component ran",
                self.max_request_bytes
            );
            tracing::warn!("condense failed open: {reason}");
            return Compressed {
                messages: messages.to_vec(),
                checkpoint: checkpoint.cloned(),
                report: HostReport {
                    status: Status::FailedOpen,
                    component: None,
                    failure: None,
                    reason: Some(reason),
                    guest: None,
                    elapsed_us: elapsed_us(started),
                },
            };
        }
        let result = self
            .runtime
            .call(messages, config, checkpoint)
            .map_err(|failure| (failure, None))
            .and_then(|outcome| self.validate(messages, size, config, outcome));
        let elapsed_us = elapsed_us(started);
        match result {
            Ok(outcome) => Compressed {
                messages: outcome.messages,
                checkpoint: outcome.checkpoint,
                report: HostReport {
                    status: Status::Compressed,
                    component: None,
                    failure: None,
                    reason: None,
                    guest: Some(outcome.report),
                    elapsed_us,
                },
            },
            Err((failure, guest)) => {
                tracing::warn!(component = %failure.component, kind = ?failure.kind, "condense failed open: {failure}");
                Compressed {
                    messages: messages.to_vec(),
                    checkpoint: checkpoint.cloned(),
                    report: HostReport {
                        status: Status::FailedOpen,
                        reason: Some(failure.to_string()),
                        component: Some(failure.component),
                        failure: Some(failure.kind),
                        guest,
                        elapsed_us,
                    },
                }
            }
        }
    }

    /// The host's own check of the guest's output: the same invariants the
    /// compressor's self-check runs, so a buggy or hostile compressor cannot
    /// reach the model. An invalid output keeps its report for the record.
    fn validate(
        &self,
        input: &[Message],
        input_bytes: usize,
        config: &Config,
        outcome: Outcome,
    ) -> Result<Outcome, (GuestFailure, Option<Report>)> {
        let checked = check_output(input, &outcome.messages, outcome.report.cut())
            .map_err(|violation| violation.to_string())
            .and_then(|()| within_size(input_bytes, &outcome.messages, config));
        match checked {
            Ok(()) => Ok(outcome),
            Err(detail) => Err((
                GuestFailure {
                    component: self.runtime.compressor().clone(),
                    kind: FailureKind::InvalidOutput,
                    detail,
                },
                Some(outcome.report),
            )),
        }
    }
}

/// A compression never makes the request larger: the invariants let a
/// compressor rewrite text, so without this bound a valid-looking output
/// could carry any amount of it. The slack covers a summary pair that is
/// longer in bytes than the folded messages it replaced, though shorter in
/// tokens (CJK history, English summary): at most `summary_max_tokens` tokens
/// of up to 16 bytes each, plus the framing.
fn within_size(input_bytes: usize, output: &[Message], config: &Config) -> Result<(), String> {
    const FRAMING_BYTES: usize = 4_096;
    let allowed = input_bytes + 16 * config.summary_max_tokens as usize + FRAMING_BYTES;
    let output_bytes = request_bytes(output);
    if output_bytes > allowed {
        return Err(format!(
            "output-size: the output carries {output_bytes} bytes, more than the input's \
             {input_bytes} allow ({allowed})"
        ));
    }
    Ok(())
}

fn elapsed_us(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The size of a request as the size cap measures it: the bytes of every
/// string its messages carry (texts, thinking and signatures, tool call ids,
/// names and arguments, tool results, opaque parts), which is what the host
/// copies into the guest. A request body is larger in practice (JSON adds
/// quoting and structure, and only tool inputs and opaque parts are
/// re-serialised, compactly), so a body within the cap of
/// `condense compress` is within the middleware's cap too.
pub fn request_bytes(messages: &[Message]) -> usize {
    messages
        .iter()
        .flat_map(|m| &m.parts)
        .map(|part| match part {
            Part::Text(text) | Part::Opaque(text) => text.len(),
            Part::Thinking(t) => t.text.len() + t.signature.as_ref().map_or(0, String::len),
            Part::ToolCall(c) => c.id.len() + c.name.len() + c.arguments.len(),
            Part::ToolResult(r) => r.call_id.len() + r.content.len(),
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;
    use condense_model::{Role, Thinking, ToolCall, ToolResult};

    #[test]
    fn request_bytes_counts_every_string_the_guest_gets() {
        let messages = [
            Message::text(Role::User, "four"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Thinking(Thinking {
                        text: "ab".into(),
                        signature: Some("sig".into()),
                    }),
                    Part::ToolCall(ToolCall {
                        id: "c1".into(),
                        name: "Bash".into(),
                        arguments: "{}".into(),
                    }),
                    Part::Opaque("[1]".into()),
                ],
            },
            Message {
                role: Role::Tool,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: "c1".into(),
                    content: "é".into(),
                    is_error: false,
                })],
            },
        ];
        assert_eq!(
            request_bytes(&messages),
            4 + (2 + 3) + (2 + 4 + 2) + 3 + (2 + 2)
        );
        assert_eq!(request_bytes(&[]), 0);
    }

    /// The cap comes from `[limits] max_request_bytes`; a request at the cap
    /// is compressed, one byte over it is sent unchanged, with the checkpoint
    /// it came with, and the report says why. No component ran, so the
    /// report names none.
    #[test]
    fn a_request_over_max_request_bytes_fails_open_without_running_the_compressor() {
        assert_eq!(
            Settings::default().limits.max_request_bytes as usize,
            DEFAULT_MAX_REQUEST_BYTES
        );
        let settings = Settings::parse("[limits]\nmax_request_bytes = 1024").unwrap();
        let middleware = settings.middleware().unwrap();
        assert_eq!(middleware.max_request_bytes(), 1024);
        let request = |bytes: usize| vec![Message::text(Role::User, "x".repeat(bytes))];
        let checkpoint = Checkpoint {
            boundary: 3,
            prefix_hash: "abc".into(),
            folded_tokens: 10,
            summary: "s".into(),
            tail_start: 3,
            horizon: 4,
        };

        let at_cap = request(1024);
        let sent = middleware.compress(&at_cap, &settings.compress, None);
        assert_eq!(sent.report.status, Status::Compressed, "{:?}", sent.report);
        assert!(sent.report.guest.is_some());

        let over = request(1025);
        let sent = middleware.compress(&over, &settings.compress, Some(&checkpoint));
        assert_eq!(sent.report.status, Status::FailedOpen);
        assert_eq!(sent.messages, over);
        assert_eq!(sent.checkpoint, Some(checkpoint));
        assert_eq!(
            sent.report.reason.as_deref(),
            Some(
                "request of 1025 bytes is over limits.max_request_bytes = 1024: sent unchanged, \
                 no component ran"
            )
        );
        assert!(sent.report.component.is_none() && sent.report.failure.is_none());
        assert!(sent.report.guest.is_none());
        let json = serde_json::to_value(&sent.report).unwrap();
        assert_eq!(json["status"], "failed-open");
        assert!(json.get("failure").is_none(), "{json}");
    }
}
