//! The host's `llm` import: the language model a summarizer may ask.
//!
//! The host owns the model ([`LanguageModel`], e.g. an OpenAI-compatible
//! client with its key) and bounds every use of it; the guest only sends a
//! conversation and gets text or a reason back:
//!
//! - **Time.** One call may take at most [`LlmLimits::call_timeout`], all the
//!   calls of one compaction together [`LlmLimits::compaction_budget`]. That
//!   time is the host's, not the guest's: it is credited to the call's
//!   deadlines (see `sandbox::Credit`), so a model that takes ten seconds
//!   does not trip a one-second guest deadline. Past the budget a call is
//!   refused at once, the summarizer fails, and the chain falls through.
//! - **Breaker.** After [`LlmLimits::breaker_failures`] failed calls in a
//!   row the host stops calling the model for [`LlmLimits::breaker_cooldown`]:
//!   every call in that time fails at once, saying so; the first call after
//!   it is tried again.
//! - **Answers.** An empty answer is a failure (counted by the breaker);
//!   the answer's size is capped by [`LlmLimits::max_output_tokens`].
//!
//! Every call is logged (`tracing`, target `condense::llm`) with its outcome
//! and time, never with the conversation or the key.

use crate::timing::Clock;
use condense_model::tokens::estimate_messages;
use condense_model::{Item, Message, Role};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// One message of a chat completion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
}

/// A chat completion: the conversation (system messages first) and the most
/// tokens the answer may have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatRequest {
    /// For a summarizer's `chat-after-conversation`: what the compaction
    /// replaces, to be sent first, exactly as the agent's model was last
    /// sent it, before `messages`. `None` for a plain chat.
    pub conversation: Option<Conversation>,
    pub messages: Vec<ChatMessage>,
    pub max_tokens: u32,
}

/// The messages a compaction replaces (the compressor's
/// `folding.replaces`, resolved by the host), twice over: as messages, and
/// as items of the history the call was given, for an embedder that
/// renders them from its own copy of that history — the proxy renders the
/// client's request body, byte for byte where a message was kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversation {
    pub messages: Arc<[Message]>,
    /// One per message: `Kept(i)` is message `i` of the call's history, a
    /// rewritten or written one carries its message.
    pub items: Arc<[Item]>,
}

/// A model the host calls for summarizers. Shared by every call of a
/// runtime, from any thread.
///
/// A request with a [`ChatRequest::conversation`] is meant to reach the
/// provider as the agent's own request did, so that its prompt cache serves
/// it: the embedder renders the conversation exactly as it renders the
/// agent's requests, after the system prompt and with the tools it sent
/// them with (what condense never sees), then the summarizer's messages.
pub trait LanguageModel: Send + Sync {
    /// What to call the model in logs and reports (its id).
    fn name(&self) -> &str;

    /// The answer's text. `timeout` bounds the whole call, retries
    /// included. The error says why there is none, without the key.
    fn chat(&self, request: &ChatRequest, timeout: Duration) -> Result<String, String>;

    /// The estimated tokens this model adds before a conversation of its
    /// agent (the system prompt and tool definitions it sends with it).
    fn frame_tokens(&self) -> u32 {
        0
    }

    /// A digest of what, besides the request, shapes this model's answers
    /// and whose they are: a summary it wrote ahead is used only where
    /// this is the same. `None`: nothing (one endpoint and model, the
    /// host's own). A client's own model behind a proxy digests its model,
    /// system prompt, tools and key.
    fn shaped_by(&self) -> Option<u128> {
        None
    }
}

/// How the host bounds model calls (`[llm]` of the config).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LlmLimits {
    /// One call, whole.
    pub call_timeout: Duration,
    /// All the model calls of one compaction together.
    pub compaction_budget: Duration,
    /// The most tokens an answer may have: a larger (or 0) `max-tokens` is
    /// this.
    pub max_output_tokens: u32,
    /// Failed calls in a row that pause the model.
    pub breaker_failures: u32,
    /// How long it stays paused.
    pub breaker_cooldown: Duration,
}

impl Default for LlmLimits {
    /// 30 s a call, 60 s a compaction, 4,000-token answers, paused for a
    /// minute after 3 failures in a row.
    fn default() -> Self {
        LlmLimits {
            call_timeout: Duration::from_secs(30),
            compaction_budget: Duration::from_secs(60),
            max_output_tokens: 4_000,
            breaker_failures: 3,
            breaker_cooldown: Duration::from_secs(60),
        }
    }
}

/// The model, its limits and its breaker: what a runtime holds.
pub struct Llm {
    model: Arc<dyn LanguageModel>,
    limits: LlmLimits,
    breaker: Mutex<Breaker>,
    /// What the breaker's cooldown is measured on.
    clock: Clock,
}

impl fmt::Debug for Llm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Llm")
            .field("model", &self.model.name())
            .field("limits", &self.limits)
            .finish()
    }
}

#[derive(Default)]
struct Breaker {
    failures_in_a_row: u32,
    paused_until: Option<Instant>,
}

impl Llm {
    pub fn new(model: Arc<dyn LanguageModel>, limits: LlmLimits) -> Llm {
        Llm {
            model,
            limits,
            breaker: Mutex::new(Breaker::default()),
            clock: Clock::system(),
        }
    }

    /// This model, its breaker's cooldown measured on `clock` (real time
    /// unless a test gives its own).
    pub fn with_clock(self, clock: Clock) -> Llm {
        Llm { clock, ..self }
    }

    /// The model's [`LanguageModel::shaped_by`].
    pub fn shaped_by(&self) -> Option<u128> {
        self.model.shaped_by()
    }

    pub fn limits(&self) -> LlmLimits {
        self.limits
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// One call for a compaction that has already spent `spent` on the
    /// model; returns the answer and the time this call took.
    pub fn chat(
        &self,
        mut request: ChatRequest,
        spent: Duration,
    ) -> (Result<String, String>, Duration) {
        // The time a call takes is real whatever the clock: it is credited
        // to the sandbox's deadlines, which are.
        let started = Instant::now();
        if let Some(left) = self.paused_for(self.clock.now()) {
            let why = format!(
                "model calls paused for another {:.0?} after {} failures in a row",
                left, self.limits.breaker_failures
            );
            tracing::warn!(target: "condense::llm", model = self.model.name(), "{why}");
            return (Err(why), Duration::ZERO);
        }
        let Some(left) = self
            .limits
            .compaction_budget
            .checked_sub(spent)
            .filter(|left| !left.is_zero())
        else {
            let why = format!(
                "the compaction's model time of {:?} is spent",
                self.limits.compaction_budget
            );
            return (Err(why), Duration::ZERO);
        };
        request.max_tokens = match request.max_tokens {
            0 => self.limits.max_output_tokens,
            n => n.min(self.limits.max_output_tokens),
        };
        let result = self
            .model
            .chat(&request, self.limits.call_timeout.min(left))
            .and_then(|answer| {
                if answer.trim().is_empty() {
                    Err("the model's answer is empty".to_owned())
                } else {
                    Ok(answer)
                }
            });
        let took = started.elapsed();
        self.record(result.is_ok(), self.clock.now());
        match &result {
            Ok(answer) => tracing::info!(
                target: "condense::llm",
                model = self.model.name(),
                messages = request.messages.len(),
                after_conversation = request.conversation.as_ref().map_or(0, |c| c.messages.len()),
                answer_chars = answer.len(),
                ms = took.as_millis() as u64,
                "model call answered"
            ),
            Err(why) => tracing::warn!(
                target: "condense::llm",
                model = self.model.name(),
                ms = took.as_millis() as u64,
                "model call failed: {why}"
            ),
        }
        (result, took)
    }

    /// The estimated tokens of a request after `conversation`, before the
    /// summarizer's own messages: what a summarizer weighs against its
    /// model's context.
    pub fn conversation_tokens(&self, conversation: &[Message]) -> u32 {
        let messages: u32 = estimate_messages(conversation).iter().sum();
        messages.saturating_add(self.model.frame_tokens())
    }

    /// How much longer calls are paused, if they are.
    fn paused_for(&self, now: Instant) -> Option<Duration> {
        let breaker = self.breaker.lock().unwrap_or_else(PoisonError::into_inner);
        breaker
            .paused_until
            .and_then(|until| until.checked_duration_since(now))
            .filter(|left| !left.is_zero())
    }

    fn record(&self, ok: bool, now: Instant) {
        let mut breaker = self.breaker.lock().unwrap_or_else(PoisonError::into_inner);
        if ok {
            *breaker = Breaker::default();
            return;
        }
        breaker.failures_in_a_row += 1;
        if breaker.failures_in_a_row >= self.limits.breaker_failures.max(1) {
            breaker.paused_until = Some(now + self.limits.breaker_cooldown);
            breaker.failures_in_a_row = 0;
            tracing::warn!(
                target: "condense::llm",
                model = self.model.name(),
                "{} model calls failed in a row: pausing them for {:?}",
                self.limits.breaker_failures,
                self.limits.breaker_cooldown
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::ManualClock;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Answers from a script of results; counts the calls that reach it.
    struct Scripted {
        answers: Mutex<Vec<Result<String, String>>>,
        calls: AtomicUsize,
        timeouts: Mutex<Vec<Duration>>,
    }

    impl Scripted {
        fn new(answers: Vec<Result<&str, &str>>) -> Arc<Scripted> {
            Arc::new(Scripted {
                answers: Mutex::new(
                    answers
                        .into_iter()
                        .rev()
                        .map(|a| a.map(str::to_owned).map_err(str::to_owned))
                        .collect(),
                ),
                calls: AtomicUsize::new(0),
                timeouts: Mutex::new(Vec::new()),
            })
        }
    }

    impl LanguageModel for Scripted {
        fn name(&self) -> &str {
            "scripted"
        }
        fn chat(&self, _: &ChatRequest, timeout: Duration) -> Result<String, String> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            self.timeouts.lock().unwrap().push(timeout);
            self.answers
                .lock()
                .unwrap()
                .pop()
                .unwrap_or(Ok("ok".into()))
        }
    }

    fn request() -> ChatRequest {
        ChatRequest {
            conversation: None,
            messages: vec![ChatMessage {
                role: Role::User,
                content: "hi".into(),
            }],
            max_tokens: 0,
        }
    }

    #[test]
    fn the_breaker_pauses_after_failures_in_a_row_and_resumes_after_the_cooldown() {
        let model = Scripted::new(vec![Err("HTTP 500"), Err("HTTP 500"), Ok("summary")]);
        let clock = ManualClock::new();
        let llm = Llm::new(
            model.clone(),
            LlmLimits {
                breaker_failures: 2,
                breaker_cooldown: Duration::from_millis(200),
                ..LlmLimits::default()
            },
        )
        .with_clock(Clock::manual(&clock));
        assert_eq!(
            llm.chat(request(), Duration::ZERO).0,
            Err("HTTP 500".into())
        );
        assert_eq!(
            llm.chat(request(), Duration::ZERO).0,
            Err("HTTP 500".into())
        );
        // Paused: the model is not called.
        let (paused, took) = llm.chat(request(), Duration::ZERO);
        assert!(
            paused
                .unwrap_err()
                .starts_with("model calls paused for another")
        );
        assert_eq!(
            (took, model.calls.load(Ordering::SeqCst)),
            (Duration::ZERO, 2)
        );
        // Still paused until the whole cooldown has passed.
        clock.advance(Duration::from_millis(199));
        let (paused, _) = llm.chat(request(), Duration::ZERO);
        assert_eq!(
            paused,
            Err("model calls paused for another 1ms after 2 failures in a row".into())
        );
        assert_eq!(model.calls.load(Ordering::SeqCst), 2);
        clock.advance(Duration::from_millis(1));
        assert_eq!(llm.chat(request(), Duration::ZERO).0, Ok("summary".into()));
        assert_eq!(model.calls.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_call_gets_what_is_left_of_the_compactions_budget_and_none_past_it() {
        let model = Scripted::new(vec![]);
        let llm = Llm::new(
            model.clone(),
            LlmLimits {
                call_timeout: Duration::from_secs(30),
                compaction_budget: Duration::from_secs(40),
                ..LlmLimits::default()
            },
        );
        assert!(llm.chat(request(), Duration::from_secs(25)).0.is_ok());
        assert_eq!(*model.timeouts.lock().unwrap(), [Duration::from_secs(15)]);
        let (spent, _) = llm.chat(request(), Duration::from_secs(40));
        assert!(spent.unwrap_err().contains("model time of 40s is spent"));
        assert_eq!(model.calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn an_empty_answer_is_a_failure() {
        let llm = Llm::new(Scripted::new(vec![Ok("  \n")]), LlmLimits::default());
        assert_eq!(
            llm.chat(request(), Duration::ZERO).0,
            Err("the model's answer is empty".into())
        );
    }
}
