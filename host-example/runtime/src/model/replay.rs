//! A model that plays back a recorded session: each call answers with the
//! recording's next assistant message, whatever it is asked.
//!
//! This is how the runtime's loop is tested, demonstrated and benchmarked
//! without a provider: a recorded session (from a journal, or written by
//! hand) replays the same tool calls against the real tools and the real
//! condense middleware, deterministically and offline.

use super::{Model, ModelError, ModelRequest, ModelResponse};
use condense_model::{Message, Role};
use std::collections::VecDeque;

/// The answers of a recorded session, played back in order.
pub struct ReplayModel {
    /// The assistant messages not yet played, in order.
    answers: VecDeque<Message>,
    /// How many have been played.
    played: usize,
}

impl ReplayModel {
    /// Plays back the [`Role::Assistant`] messages of `recording`, in order;
    /// its other messages (the prompts and tool results the answers were
    /// given to) are skipped.
    pub fn new(recording: Vec<Message>) -> Self {
        ReplayModel {
            answers: recording
                .into_iter()
                .filter(|m| m.role == Role::Assistant)
                .collect(),
            played: 0,
        }
    }

    /// How many answers are left to play.
    pub fn answers_left(&self) -> usize {
        self.answers.len()
    }
}

impl Model for ReplayModel {
    fn name(&self) -> &str {
        "replay"
    }

    fn complete(&mut self, _request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let message = self
            .answers
            .pop_front()
            .ok_or(ModelError::ReplayExhausted {
                answers: self.played,
            })?;
        self.played += 1;
        Ok(ModelResponse {
            message,
            usage: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_model::{Part, ToolCall};

    #[test]
    fn plays_the_assistant_messages_in_order_then_says_it_is_exhausted() {
        let call = Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall(ToolCall {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: r#"{"path": "a"}"#.into(),
            })],
        };
        let done = Message::text(Role::Assistant, "done");
        let recording = vec![
            Message::text(Role::System, "be brief"),
            Message::text(Role::User, "read a"),
            call.clone(),
            Message::text(Role::Tool, "contents"),
            done.clone(),
            Message::text(Role::User, "thanks"),
        ];
        let mut model: Box<dyn Model> = Box::new(ReplayModel::new(recording.clone()));
        assert_eq!(model.name(), "replay");
        let request = ModelRequest {
            messages: recording,
            tools: Vec::new(),
            max_output_tokens: 100,
        };
        for expected in [call, done] {
            let response = model.complete(&request).unwrap();
            assert_eq!(response.message, expected);
            assert_eq!(response.usage, None);
        }
        let error = model.complete(&request).unwrap_err();
        assert!(
            matches!(error, ModelError::ReplayExhausted { answers: 2 }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "the recording is exhausted after 2 answers"
        );
    }

    #[test]
    fn answers_left_counts_down() {
        let mut model = ReplayModel::new(vec![
            Message::text(Role::Assistant, "a"),
            Message::text(Role::Assistant, "b"),
        ]);
        let request = ModelRequest {
            messages: Vec::new(),
            tools: Vec::new(),
            max_output_tokens: 1,
        };
        assert_eq!(model.answers_left(), 2);
        model.complete(&request).unwrap();
        assert_eq!(model.answers_left(), 1);
        model.complete(&request).unwrap();
        assert_eq!(model.answers_left(), 0);
        assert!(model.complete(&request).is_err());
        assert_eq!(model.answers_left(), 0);
    }
}
