//! The agent loop: the person's message, then model calls and tool runs until
//! the model answers without asking for a tool. Every step is journaled
//! before the next one starts; the model is sent what the layers
//! make of the journaled history.

use crate::context::ContextCompiler;
use crate::journal::{Contents, Event, Journal, JournalError};
use crate::layers::{Layers, ModelCall};
use crate::model::{Model, ModelError, ModelRequest, ModelResponse};
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec, recall};
use condense_host::Transcript;
use condense_host::events::{Compaction, EventLog};
use condense_model::{Message, Part, Role, ToolCall, ToolResult};
use std::collections::HashMap;

/// One step of a turn, as it happens.
#[derive(Clone, Copy, Debug)]
pub enum Step<'a> {
    /// condense compacted the request of the model call just made.
    Compacted(&'a Compaction),
    /// A tool call is about to run.
    Calling(&'a ToolCall),
    /// It ran: its result, as journaled.
    Answered(&'a ToolResult),
}

/// What runs the tool calls the model asks for.
pub trait ToolRunner {
    /// The tool definitions sent with every request.
    fn specs(&self) -> Vec<ToolSpec>;
    fn run(&mut self, call: &ToolCall) -> ToolOutput;
}

impl ToolRunner for ToolRegistry {
    fn specs(&self) -> Vec<ToolSpec> {
        ToolRegistry::specs(self).cloned().collect()
    }

    fn run(&mut self, call: &ToolCall) -> ToolOutput {
        self.call(&call.name, &call.arguments)
    }
}

/// Why a run stopped before the model answered.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("model {model}: {source}")]
    Model {
        model: String,
        #[source]
        source: ModelError,
    },
    #[error("no answer after {0} model calls (raise the limit to let the agent go on)")]
    TooManyCalls(u64),
    #[error("events file {path}: {source}")]
    Events {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// An agent session: a journal, the history it holds, and what runs each
/// model call.
pub struct Agent {
    model: Box<dyn Model>,
    tools: Box<dyn ToolRunner>,
    layers: Layers,
    journal: Journal,
    history: Transcript,
    system: Vec<Message>,
    context: ContextCompiler,
    max_output_tokens: u32,
    calls: u64,
    last_compactions: Vec<Compaction>,
    events: Option<EventLog>,
    /// The budget of a `condense_recall`, when the model is offered it.
    recall: Option<u32>,
}

impl Agent {
    /// An agent appending to `journal`, whose events so far are
    /// `journaled` (empty for a new session); `system` is the system prompt.
    /// Tool calls a previous run left without a result (it stopped while
    /// they ran) are answered as interrupted, so the history stays one a
    /// provider accepts.
    pub fn new(
        model: Box<dyn Model>,
        tools: Box<dyn ToolRunner>,
        layers: Layers,
        journal: Journal,
        journaled: &Contents,
        system: Vec<Message>,
    ) -> Result<Agent, JournalError> {
        let mut agent = Agent {
            model,
            tools,
            layers,
            journal,
            history: journaled.messages().cloned().collect(),
            system,
            context: ContextCompiler::default(),
            max_output_tokens: 8_192,
            calls: 0,
            last_compactions: Vec::new(),
            events: None,
            recall: None,
        };
        for (call_id, name) in journaled.interrupted_calls() {
            let output = ToolOutput {
                content: format!("{name} was interrupted: the agent stopped while it ran"),
                is_error: true,
            };
            agent.record_result(tool_message(call_id, output))?;
        }
        Ok(agent)
    }

    /// Output tokens each model call may use (default 8192).
    pub fn with_max_output_tokens(mut self, tokens: u32) -> Agent {
        self.max_output_tokens = tokens;
        self
    }

    /// Compiles the system prompt from `context`'s blocks for every call (in
    /// front of the fixed system messages, if any).
    pub fn with_context(mut self, context: ContextCompiler) -> Agent {
        self.context = context;
        self
    }

    /// The context the system prompt is compiled from.
    pub fn context_mut(&mut self) -> &mut ContextCompiler {
        &mut self.context
    }

    /// Offers the model `condense_recall`: the original text of what a
    /// compaction folded or cleared, read back from this session's history
    /// by its handle, at most about `budget_tokens` a call. The agent runs
    /// it itself (it reads the history, not the world); its calls and
    /// results are journaled like any other.
    pub fn with_recall(mut self, budget_tokens: u32) -> Agent {
        self.recall = Some(budget_tokens);
        self
    }

    /// Also appends each compaction event to `events`.
    pub fn with_events(mut self, events: EventLog) -> Agent {
        self.events = Some(events);
        self
    }

    /// The conversation so far, as journaled.
    pub fn history(&self) -> &Transcript {
        &self.history
    }

    /// The compactions of the last model call's request.
    pub fn last_compactions(&self) -> &[Compaction] {
        &self.last_compactions
    }

    /// Model calls made by this agent.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// Runs one turn: `message` from the person, then model calls and tool
    /// runs until the model answers without a tool call, at most `max_calls`
    /// model calls. Returns the answer.
    pub fn run_turn(&mut self, message: &str, max_calls: u64) -> Result<Message, AgentError> {
        self.run_turn_with(message, max_calls, |_| {})
    }

    /// [`run_turn`](Agent::run_turn), telling `on_step` each step as it
    /// happens (`condense agent` prints them).
    pub fn run_turn_with(
        &mut self,
        message: &str,
        max_calls: u64,
        mut on_step: impl FnMut(Step<'_>),
    ) -> Result<Message, AgentError> {
        self.say(Message::text(Role::User, message))?;
        for _ in 0..max_calls {
            let response = self.call_model()?;
            for compaction in &self.last_compactions {
                on_step(Step::Compacted(compaction));
            }
            let calls: Vec<ToolCall> = response.message.tool_calls().cloned().collect();
            if calls.is_empty() {
                return Ok(response.message);
            }
            self.run_tools_with(&calls, &mut on_step)?;
        }
        Err(AgentError::TooManyCalls(max_calls))
    }

    /// Journals a message from the person.
    pub fn say(&mut self, message: Message) -> Result<(), AgentError> {
        self.append(Event::User { message })
    }

    /// One model call on the history: the layers' request, the model's
    /// answer journaled (and the compactions of the request before it).
    pub fn call_model(&mut self) -> Result<ModelResponse, AgentError> {
        self.calls += 1;
        let mut call = ModelCall {
            number: self.calls,
            history: &self.history,
            context: self.context.clone(),
            system: self.system.clone(),
            conversation: None,
            request: ModelRequest {
                messages: Vec::new(),
                tools: self.tool_specs(),
                max_output_tokens: self.max_output_tokens,
            },
            compactions: Vec::new(),
        };
        self.layers.before_model_call(&mut call);
        let response = self
            .model
            .complete(&call.request)
            .map_err(|source| AgentError::Model {
                model: self.model.name().to_owned(),
                source,
            });
        if let Ok(response) = &response {
            self.layers.after_model_call(&call, response);
        }
        self.last_compactions = std::mem::take(&mut call.compactions);
        for compaction in &self.last_compactions {
            compaction.log();
            if let Some(log) = &mut self.events {
                log.append(compaction)
                    .map_err(|source| AgentError::Events {
                        path: log.path().to_owned(),
                        source,
                    })?;
            }
            self.journal
                .append(&Event::Compaction(compaction.clone()))?;
        }
        let response = response?;
        self.append(Event::ModelResponse {
            message: response.message.clone(),
            usage: response.usage,
            at_ms: Some(condense_host::timing::now_ms()),
        })?;
        Ok(response)
    }

    /// Runs `calls` one after the other, journaling each call before it runs
    /// and its result after.
    pub fn run_tools(&mut self, calls: &[ToolCall]) -> Result<(), AgentError> {
        self.run_tools_with(calls, &mut |_| {})
    }

    fn run_tools_with(
        &mut self,
        calls: &[ToolCall],
        on_step: &mut impl FnMut(Step<'_>),
    ) -> Result<(), AgentError> {
        for call in calls {
            self.journal.append(&Event::ToolCall {
                call_id: call.id.clone(),
                name: call.name.clone(),
            })?;
            on_step(Step::Calling(call));
            let output = match self.recall {
                Some(budget) if call.name == recall::NAME => {
                    recall::run(self.history.messages(), &call.arguments, budget)
                }
                _ => self.tools.run(call),
            };
            let message = tool_message(&call.id, output);
            self.record_result(message)?;
            if let Some(result) = self
                .history
                .messages()
                .last()
                .and_then(|m| m.tool_results().next())
            {
                on_step(Step::Answered(result));
            }
        }
        Ok(())
    }

    /// Journals a message carrying tool results that ran elsewhere (a
    /// recorded session played back).
    pub fn record_result(&mut self, message: Message) -> Result<(), JournalError> {
        self.journal.append(&Event::ToolResult {
            message: message.clone(),
        })?;
        self.history.push(message);
        Ok(())
    }

    /// The tools the model is sent: the runner's, and `condense_recall` when
    /// it is offered.
    fn tool_specs(&self) -> Vec<ToolSpec> {
        let mut specs = self.tools.specs();
        if self.recall.is_some() {
            specs.push(recall::spec());
        }
        specs
    }

    fn append(&mut self, event: Event) -> Result<(), AgentError> {
        self.journal.append(&event)?;
        if let Some(message) = event.message() {
            self.history.push(message.clone());
        }
        Ok(())
    }
}

/// The tool message answering call `call_id`.
fn tool_message(call_id: &str, output: ToolOutput) -> Message {
    Message {
        role: Role::Tool,
        parts: vec![Part::ToolResult(ToolResult {
            call_id: call_id.to_owned(),
            content: output.content,
            is_error: output.is_error,
        })],
    }
}

/// Plays a recorded session through `agent`, whose model must be a
/// [`ReplayModel`](crate::model::ReplayModel) of the same recording: the
/// person's messages are said, each assistant message is a model call (the
/// replay model answers with it), and the recorded tool results are
/// journaled as they were. System messages are the agent's system prompt,
/// not replayed. `after_call` sees the agent after each model call (its
/// [`last_compactions`](Agent::last_compactions) among them). Returns the
/// model calls made.
pub fn replay_recording(
    agent: &mut Agent,
    recording: &[Message],
    mut after_call: impl FnMut(&Agent),
) -> Result<u64, AgentError> {
    let before = agent.calls();
    for message in recording {
        match message.role {
            Role::System => {}
            Role::Assistant => {
                agent.call_model()?;
                after_call(agent);
            }
            _ if message.is_result_carrier() => agent.record_result(message.clone())?,
            _ => agent.say(message.clone())?,
        }
    }
    Ok(agent.calls() - before)
}

/// Recorded tool results by call id, for running a recorded session's tool
/// calls again without running the tools.
pub struct RecordedTools {
    results: HashMap<String, ToolResult>,
}

impl RecordedTools {
    pub fn from_recording(recording: &[Message]) -> RecordedTools {
        let results = recording
            .iter()
            .flat_map(|m| m.tool_results())
            .map(|r| (r.call_id.clone(), r.clone()))
            .collect();
        RecordedTools { results }
    }
}

impl ToolRunner for RecordedTools {
    /// None: the recording's model already chose its calls.
    fn specs(&self) -> Vec<ToolSpec> {
        Vec::new()
    }

    fn run(&mut self, call: &ToolCall) -> ToolOutput {
        match self.results.get(&call.id) {
            Some(result) => ToolOutput {
                content: result.content.clone(),
                is_error: result.is_error,
            },
            None => ToolOutput {
                content: format!("the recording has no result for call {}", call.id),
                is_error: true,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ReplayModel;

    /// A session that stopped while a tool ran resumes with that call
    /// answered as interrupted, journaled, so the history pairs up again.
    #[test]
    fn a_call_left_without_a_result_is_answered_as_interrupted_on_resume() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let call = ToolCall {
            id: "c1".into(),
            name: "run_command".into(),
            arguments: "{}".into(),
        };
        let mut journal = Journal::create(&path).unwrap();
        journal
            .append(&Event::User {
                message: Message::text(Role::User, "build it"),
            })
            .unwrap();
        journal
            .append(&Event::ModelResponse {
                message: Message {
                    role: Role::Assistant,
                    parts: vec![Part::ToolCall(call.clone())],
                },
                usage: None,
                at_ms: None,
            })
            .unwrap();
        journal
            .append(&Event::ToolCall {
                call_id: "c1".into(),
                name: "run_command".into(),
            })
            .unwrap();
        drop(journal);

        let (journal, journaled) = Journal::resume(&path).unwrap();
        let agent = Agent::new(
            Box::new(ReplayModel::new(Vec::new())),
            Box::new(RecordedTools::from_recording(&[])),
            Layers::new(),
            journal,
            &journaled,
            Vec::new(),
        )
        .unwrap();
        let last = agent.history().messages().last().unwrap();
        let result = last.tool_results().next().expect("a result for c1");
        assert_eq!(result.call_id, "c1");
        assert!(result.is_error && result.content.contains("interrupted"));
        let reread = crate::journal::read(&path).unwrap();
        assert!(reread.interrupted_calls().is_empty(), "and it is journaled");
        assert!(condense_model::invariants::check_pairs(agent.history().messages()).is_ok());
    }
}
