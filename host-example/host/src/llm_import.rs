//! The host side of the summarizers' `llm` import: a summarizer's model
//! calls go to the host's [`Llm`], their time credited to the call's
//! deadline (it is not the guest's).

use crate::convert::{compressor_world, summarizer_world, wit};
use crate::llm::{ChatMessage, ChatRequest, Conversation, Llm};
use crate::sandbox::Credit;
use std::sync::Arc;

/// What a summarizer's store holds for its `llm` import.
pub(crate) struct SummarizerHost {
    pub(crate) llm: Option<Arc<Llm>>,
    pub(crate) credit: Arc<Credit>,
    /// What the compaction being summarised replaces, if the compressor said.
    pub(crate) conversation: Option<Conversation>,
}

impl SummarizerHost {
    fn ask(
        &mut self,
        conversation: Option<Conversation>,
        request: wit::ChatRequest,
    ) -> Result<String, String> {
        let Some(llm) = &self.llm else {
            return Err("this host has no model for summarizers (configure [llm])".to_owned());
        };
        let request = ChatRequest {
            conversation,
            messages: request
                .messages
                .into_iter()
                .map(|m| ChatMessage {
                    role: m.role.into(),
                    content: m.content,
                })
                .collect(),
            max_tokens: request.max_tokens,
        };
        let (answer, took) = llm.chat(request, self.credit.total());
        self.credit.add(took);
        answer
    }
}

impl summarizer_world::condense::middleware::llm::Host for SummarizerHost {
    fn chat(&mut self, request: wit::ChatRequest) -> Result<String, String> {
        self.ask(None, request)
    }

    fn conversation_tokens(&mut self) -> Option<u32> {
        let conversation = self.conversation.as_ref()?;
        Some(
            self.llm
                .as_ref()?
                .conversation_tokens(&conversation.messages),
        )
    }

    fn chat_after_conversation(&mut self, request: wit::ChatRequest) -> Result<String, String> {
        let Some(conversation) = self.conversation.clone() else {
            return Err(
                "the host has no conversation for this summary: it is asked outside a \
                        compaction, or the compressor did not say what it folds"
                    .to_owned(),
            );
        };
        self.ask(Some(conversation), request)
    }

    fn complete(&mut self, request: wit::Completion) -> Result<String, String> {
        self.chat(wit::ChatRequest {
            messages: vec![
                wit::ChatMessage {
                    role: wit::Role::System,
                    content: request.system,
                },
                wit::ChatMessage {
                    role: wit::Role::User,
                    content: request.prompt,
                },
            ],
            max_tokens: request.max_tokens,
        })
    }
}

impl compressor_world::condense::middleware::types::Host for SummarizerHost {}
