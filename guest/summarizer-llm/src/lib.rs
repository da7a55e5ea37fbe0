//! condense's LLM summarizer: the host's model writes a structured handoff
//! summary, and a deterministic gate makes sure it kept what must survive.
//!
//! A fold asks the model to *update* the previous summary with the newly
//! folded messages (never to rewrite the session from scratch: it only gets
//! the new messages), in the sections the best agents hand over with — the
//! person's requests and every rule verbatim, the current task and its
//! state, files, commands and errors with their fixes, findings and
//! decisions, what is pending, the next step — in the conversation's
//! language. Messages that do not fit the model's context
//! ([`Settings::context_tokens`]) are folded in chunks, oldest first, each
//! into the running summary.
//!
//! The answer is then held to account:
//!
//! - an answer that refuses, or is over the budget, is an error: the host's
//!   chain falls through to the next summarizer (the heuristic one);
//! - **the gate**: every statement the heuristic summarizer's ranking marks
//!   as binding — the person's rules, limits, preferences, exact values and
//!   goals, the current task, the next step — that the answer does not
//!   contain word for word is appended under `## Kept verbatim`, as many as
//!   fit the budget, most binding first; what a previous fold kept there is
//!   kept again.
//!
//! **Cache-friendly** (`cache_friendly`, on by default): when the host has
//! the agent's conversation this fold replaces and it fits the model's
//! context, the request is that conversation, exactly as the agent's model
//! was sent it (the host sends it: system prompt, tools, the previous summary
//! pair, the folded messages), and the instruction is appended last. Against
//! the agent's own model, the provider's prompt cache serves everything but
//! the instruction. Otherwise the summarizer sends its own transcript of the
//! folded messages, truncating tool results, in chunks.
//!
//! The logic is plain Rust over a [`Model`], tested natively with scripted
//! ones; `component` binds it to the host's `llm` import.

use condense_guest_sdk::llm::ChatMessage;
use condense_guest_sdk::{Request, cut_to_tokens};
use condense_model::tokens::estimate_text;
use condense_model::{Message, Part, Role};

/// The summarizer's settings: `[summarizers.llm]` of the host's config,
/// with `context_tokens` and `cache_friendly` from its `[llm]` table.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// The model's context in tokens: one request (instructions, previous
    /// summary, messages and the answer) stays within it.
    pub context_tokens: u32,
    /// A tool result is shown to the model up to this many characters: the
    /// outcome is at its start and end, and the rest costs the context.
    pub tool_result_chars: usize,
    /// Ask in the agent's own conversation when the host has it (see the
    /// crate's documentation): cheap against the agent's model, whose cache
    /// holds it; off, every request is the summarizer's own, smaller one.
    pub cache_friendly: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            context_tokens: 32_000,
            tool_result_chars: 2_000,
            cache_friendly: true,
        }
    }
}

impl Settings {
    /// The JSON Schema of these settings (the component's
    /// `settings-schema`).
    pub fn schema() -> String {
        serde_json::to_string_pretty(&schemars::schema_for!(Settings))
            .expect("the schema serialises")
    }
}

/// The heading the gate appends under.
pub const KEPT_VERBATIM: &str = "## Kept verbatim";

/// The standing instructions: the same bytes in every request, first, so a
/// provider's prompt cache serves them.
const SYSTEM_PROMPT: &str = "You maintain the handoff summary of a long conversation between a \
person and an AI coding agent. The agent will continue the work from your summary alone, so \
it must hold everything needed to carry on.\n\n\
Write these sections, in this order, as markdown headings (leave out a section with nothing \
in it):\n\
## User requests and rules: every request of the person, and every rule, limit, preference, \
correction and exact value they stated (numbers, ids, paths, versions, dates), word for word.\n\
## Current task: what is being done now, and how far it got.\n\
## Files and code: the files read, created and changed, and what changed.\n\
## Commands and errors: the commands that mattered with their outcome, every error with its \
fix or that it is still open.\n\
## Findings and decisions: what was found out, what was decided and why.\n\
## Pending: what is left to do.\n\
## Next step: what the agent was about to do.\n\n\
Rules: update the previous summary with the new messages; keep everything in it that still \
holds, and replace what the new messages changed (the latest value wins). Never invent \
anything. Quote the person's rules and values exactly. Write nothing but the summary.";

/// Phrases an answer that refuses starts with, lowercase.
const REFUSALS: [&str; 9] = [
    "i can't",
    "i cannot",
    "i can not",
    "i'm sorry",
    "i am sorry",
    "i'm unable",
    "i am unable",
    "sorry,",
    "as an ai",
];

/// The model: messages and the answer's token limit in, its text (or why
/// there is none) out. The component's is the host's `llm` import.
pub trait Model {
    fn chat(&mut self, messages: &[ChatMessage], max_tokens: u32) -> Result<String, String>;

    /// The estimated tokens of the agent's conversation this fold replaces,
    /// when the host has it.
    fn conversation_tokens(&mut self) -> Option<u32> {
        None
    }

    /// [`Model::chat`] after that conversation.
    fn chat_after_conversation(
        &mut self,
        messages: &[ChatMessage],
        max_tokens: u32,
    ) -> Result<String, String> {
        let _ = (messages, max_tokens);
        Err("no conversation".to_owned())
    }
}

/// One fold: the previous summary updated with `request.messages` by
/// `model`, then gated.
pub fn summarize(request: &Request<Settings>, model: &mut dyn Model) -> Result<String, String> {
    let budget = request.max_tokens;
    let summary = match after_conversation(request, model) {
        Some(instruction) => accept(model.chat_after_conversation(&instruction, budget)?, budget)?,
        None => {
            let mut summary = request.previous_summary.clone();
            for chunk in chunks(request)? {
                let prompt = prompt(&summary, &chunk, budget, &request.language);
                summary = accept(model.chat(&prompt, budget)?, budget)?;
            }
            summary
        }
    };
    Ok(gate(
        summary,
        &request.previous_summary,
        &request.messages,
        budget,
    ))
}

/// The model's answer as a summary, or why it is none.
fn accept(answer: String, budget: u32) -> Result<String, String> {
    let answer = answer.trim().to_owned();
    let first = answer.lines().next().unwrap_or_default();
    let lower = first.to_lowercase();
    if answer.is_empty() {
        return Err("the model's answer is empty".to_owned());
    }
    if REFUSALS.iter().any(|r| lower.starts_with(r)) {
        return Err(format!("the model refused: {}", cut_to_tokens(first, 60)));
    }
    let tokens = estimate_text(&answer);
    if tokens > budget {
        return Err(format!(
            "the model's summary is ~{tokens} tokens, over the budget of {budget}"
        ));
    }
    Ok(answer)
}

/// The folded messages as the model reads them, split so that each
/// request fits the model's context; oldest first.
fn chunks(request: &Request<Settings>) -> Result<Vec<String>, String> {
    // The context holds the instructions, the summary so far (at most the
    // budget), the messages, the closing instruction and the answer.
    let fixed = estimate_text(SYSTEM_PROMPT) + 2 * request.max_tokens + 200;
    let room = request
        .settings
        .context_tokens
        .checked_sub(fixed)
        .filter(|&r| r >= 500)
        .ok_or_else(|| {
            format!(
                "context_tokens {} leaves no room for messages beside a {}-token summary",
                request.settings.context_tokens, request.max_tokens
            )
        })?;
    let mut out = Vec::new();
    let mut current = String::new();
    for message in &request.messages {
        let text = render(message, request.settings.tool_result_chars);
        let text = cut_to_tokens(&text, room).to_owned();
        if !current.is_empty() && estimate_text(&current) + estimate_text(&text) > room {
            out.push(std::mem::take(&mut current));
        }
        current.push_str(&text);
        current.push('\n');
    }
    if !current.is_empty() {
        out.push(current);
    }
    Ok(out)
}

/// One message as a transcript entry.
fn render(message: &Message, result_chars: usize) -> String {
    let who = match message.role {
        Role::System => "SYSTEM",
        Role::User => "USER",
        Role::Assistant => "ASSISTANT",
        Role::Tool => "TOOL",
    };
    let mut out = String::new();
    for part in &message.parts {
        let line = match part {
            Part::Text(text) => format!("{who}: {}", text.trim()),
            // Reasoning is the agent's scratch work, not the record.
            Part::Thinking(_) | Part::Opaque(_) => continue,
            Part::ToolCall(call) => format!(
                "{who} calls {}: {}",
                call.name,
                shorten(&call.arguments, 500)
            ),
            Part::ToolResult(result) => format!(
                "TOOL RESULT{}: {}",
                if result.is_error { " (error)" } else { "" },
                shorten(&result.content, result_chars)
            ),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `text` within `chars` characters: its start and its end, where a
/// command's output says how it went.
fn shorten(text: &str, chars: usize) -> String {
    let text = text.trim();
    let count = text.chars().count();
    if count <= chars {
        return text.to_owned();
    }
    let head: String = text.chars().take(chars * 2 / 3).collect();
    let tail: String = text.chars().skip(count - chars / 3).collect();
    format!("{head}\n[… {} characters …]\n{tail}", count - chars)
}

/// The request for one chunk: the standing instructions, the summary so
/// far, the new messages, and last what to do with them.
fn prompt(summary: &str, messages: &str, budget: u32, language: &str) -> Vec<ChatMessage> {
    let previous = if summary.trim().is_empty() {
        "(none yet: this is the first part of the conversation)"
    } else {
        summary
    };
    let content = format!(
        "Previous summary:\n{previous}\n\nNew messages, oldest first:\n{messages}\n\
         Update the previous summary with the new messages. Write it in the language of the \
         conversation (BCP-47 `{language}`), at most {budget} tokens."
    );
    vec![
        ChatMessage::new(Role::System, SYSTEM_PROMPT),
        ChatMessage::new(Role::User, content),
    ]
}

/// The instruction to send after the agent's conversation, when the
/// settings ask for it and the host has a conversation that fits the
/// model's context with it and the answer.
fn after_conversation(
    request: &Request<Settings>,
    model: &mut dyn Model,
) -> Option<Vec<ChatMessage>> {
    if !request.settings.cache_friendly {
        return None;
    }
    let conversation = model.conversation_tokens()?;
    let previous = if request.previous_summary.trim().is_empty() {
        "Summarize it from its start."
    } else {
        "The text above that begins with `[condense summary]` is the summary of everything \
         before it: update that summary with the messages after it."
    };
    let instruction = format!(
        "[condense] Stop here: do not continue the task and do not call any tool. The \
         conversation above is being compacted, and you write its handoff summary. \
         {previous}\n\n{SYSTEM_PROMPT}\n\nWrite it in the language of the conversation \
         (BCP-47 `{}`), at most {} tokens.",
        request.language, request.max_tokens
    );
    let needed = u64::from(conversation)
        + u64::from(estimate_text(&instruction))
        + u64::from(request.max_tokens);
    (needed <= u64::from(request.settings.context_tokens))
        .then(|| vec![ChatMessage::new(Role::User, instruction)])
}

/// `summary` with what must survive and is missing from it appended under
/// [`KEPT_VERBATIM`], as many items as fit `budget`: the person's binding
/// statements first, then the artifact trail (files, commands with their
/// last outcome, errors), whose items count as present when the answer names
/// their path, command or error line.
fn gate(summary: String, previous: &str, messages: &[Message], budget: u32) -> String {
    // Kept by an earlier fold's gate, then this fold's, in rank order, each
    // with what the answer must contain for it to be there.
    let mut items: Vec<(String, String)> = (kept_verbatim(previous).into_iter())
        .map(|line| (line.clone(), line))
        .collect();
    let binding = condense_summarizer_heuristic::must_keep(messages)
        .into_iter()
        .map(|line| (line.clone(), line));
    let trail = condense_summarizer_heuristic::artifact_trail(messages)
        .into_iter()
        .map(|item| (item.key, item.line));
    for (key, line) in binding.chain(trail) {
        if !items.iter().any(|(_, l)| *l == line) {
            items.push((key, line));
        }
    }
    // The answer's own `Kept verbatim` section is rebuilt below.
    let body = match summary.find(KEPT_VERBATIM) {
        Some(at) => summary[..at].trim_end().to_owned(),
        None => summary,
    };
    let missing: Vec<String> = items
        .into_iter()
        .filter(|(key, _)| !body.contains(key.as_str()))
        .map(|(_, line)| line)
        .collect();
    if missing.is_empty() {
        return body;
    }
    let mut out = format!("{body}\n\n{KEPT_VERBATIM}");
    let mut kept = 0;
    for item in missing {
        let line = format!("\n- {}", item.replace('\n', " "));
        if estimate_text(&format!("{out}{line}")) <= budget {
            out.push_str(&line);
            kept += 1;
        }
    }
    if kept == 0 { body } else { out }
}

/// The items under [`KEPT_VERBATIM`] in `summary`.
fn kept_verbatim(summary: &str) -> Vec<String> {
    let Some(at) = summary.find(KEPT_VERBATIM) else {
        return Vec::new();
    };
    summary[at + KEPT_VERBATIM.len()..]
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter_map(|l| l.strip_prefix("- "))
        .map(str::to_owned)
        .collect()
}

#[cfg(target_arch = "wasm32")]
mod component {
    use condense_guest_sdk::llm::{self, ChatMessage};
    use condense_guest_sdk::{Request, Summarizer, export_summarizer};

    struct Llm;

    impl Summarizer for Llm {
        type Settings = crate::Settings;

        fn summarize(request: Request<crate::Settings>) -> Result<String, String> {
            crate::summarize(&request, &mut Host)
        }

        fn settings_schema() -> String {
            crate::Settings::schema()
        }
    }

    /// The host's `llm` import.
    struct Host;

    impl crate::Model for Host {
        fn chat(&mut self, messages: &[ChatMessage], max_tokens: u32) -> Result<String, String> {
            llm::chat(messages, max_tokens)
        }

        fn conversation_tokens(&mut self) -> Option<u32> {
            llm::conversation_tokens()
        }

        fn chat_after_conversation(
            &mut self,
            messages: &[ChatMessage],
            max_tokens: u32,
        ) -> Result<String, String> {
            llm::chat_after_conversation(messages, max_tokens)
        }
    }

    export_summarizer!(Llm);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model that has no agent's conversation: `chat` is `f`.
    struct Plain<F>(F);

    impl<F: FnMut(&[ChatMessage], u32) -> Result<String, String>> Model for Plain<F> {
        fn chat(&mut self, messages: &[ChatMessage], max_tokens: u32) -> Result<String, String> {
            (self.0)(messages, max_tokens)
        }
    }

    fn plain<F: FnMut(&[ChatMessage], u32) -> Result<String, String>>(f: F) -> Plain<F> {
        Plain(f)
    }

    fn request(previous: &str, messages: Vec<Message>, max_tokens: u32) -> Request<Settings> {
        Request {
            previous_summary: previous.into(),
            messages,
            max_tokens,
            language: "en".into(),
            settings: Settings::default(),
        }
    }

    fn talk() -> Vec<Message> {
        vec![
            Message::text(
                Role::User,
                "Fix the export. Never push to main without approval. The budget is capped at $4,217.",
            ),
            Message::text(Role::Assistant, "Let me look at the exporter."),
        ]
    }

    #[test]
    fn the_schema_describes_every_setting_with_its_default() {
        let schema: serde_json::Value = serde_json::from_str(&Settings::schema()).unwrap();
        let defaults = serde_json::json!({
            "context_tokens": 32_000, "tool_result_chars": 2_000, "cache_friendly": true
        });
        for (key, default) in defaults.as_object().unwrap() {
            let property = &schema["properties"][key];
            assert!(property["description"].is_string(), "{key}: {property}");
            assert_eq!(&property["default"], default, "{key}");
        }
        assert_eq!(schema["additionalProperties"], false);
    }

    #[test]
    fn the_model_gets_the_previous_summary_and_only_the_new_messages() {
        let mut seen = Vec::new();
        let out = summarize(
            &request("## Current task\n- old task", talk(), 500),
            &mut plain(|messages: &[ChatMessage], max| {
                seen.push((messages.to_vec(), max));
                Ok(
                    "## Current task\n- Fix the export. Never push to main without approval. \
                    The budget is capped at $4,217.\n## Next step\n- Let me look at the exporter."
                        .into(),
                )
            }),
        )
        .unwrap();
        assert_eq!(seen.len(), 1);
        let (messages, max) = &seen[0];
        assert_eq!(*max, 500);
        assert_eq!(messages[0], ChatMessage::new(Role::System, SYSTEM_PROMPT));
        let user = &messages[1].content;
        assert!(user.starts_with("Previous summary:\n## Current task\n- old task\n\nNew messages"));
        assert!(user.contains("USER: Fix the export."));
        assert!(user.contains("ASSISTANT: Let me look at the exporter."));
        assert!(user.ends_with("at most 500 tokens."));
        // Everything binding is in the answer: nothing appended.
        assert!(!out.contains(KEPT_VERBATIM), "{out}");
    }

    #[test]
    fn the_gate_appends_a_rule_the_model_dropped_and_keeps_it_next_fold() {
        let out = summarize(
            &request("", talk(), 500),
            &mut plain(|_: &[ChatMessage], _| Ok("## Current task\n- Fix the export.".into())),
        )
        .unwrap();
        assert!(
            out.ends_with(&format!(
                "{KEPT_VERBATIM}\n- Never push to main without approval.\n\
                 - The budget is capped at $4,217.\n\
                 - Fix the export. Never push to main without approval. The budget is capped at $4,217.\n\
                 - Let me look at the exporter."
            )),
            "{out}"
        );
        // The next fold's model drops them again: the gate keeps them again.
        let next = summarize(
            &request(&out, vec![Message::text(Role::User, "go on")], 500),
            &mut plain(|_: &[ChatMessage], _| Ok("## Current task\n- go on".into())),
        )
        .unwrap();
        assert!(
            next.contains("- Never push to main without approval."),
            "{next}"
        );
        assert!(next.contains("- The budget is capped at $4,217."), "{next}");
    }

    #[test]
    fn a_refusal_an_empty_answer_and_an_answer_over_budget_are_errors() {
        for (answer, why) in [
            (
                "I'm sorry, but I can't help with that.",
                "the model refused: I'm sorry",
            ),
            ("  \n", "the model's answer is empty"),
            (&"word ".repeat(400), "over the budget of 100"),
        ] {
            let error = summarize(
                &request("", talk(), 100),
                &mut plain(|_: &[ChatMessage], _| Ok(answer.to_owned())),
            )
            .unwrap_err();
            assert!(error.contains(why), "{error}");
        }
        let error = summarize(
            &request("", talk(), 100),
            &mut plain(|_: &[ChatMessage], _| Err("HTTP 500".into())),
        )
        .unwrap_err();
        assert_eq!(error, "HTTP 500");
    }

    #[test]
    fn long_input_is_folded_in_chunks_oldest_first() {
        let messages: Vec<Message> = (0..40)
            .map(|i| {
                Message::text(
                    Role::User,
                    format!("request {i}: {}", "detail ".repeat(300)),
                )
            })
            .collect();
        let mut request = request("", messages, 500);
        request.settings.context_tokens = 6_000;
        let mut calls = Vec::new();
        summarize(
            &request,
            &mut plain(|messages: &[ChatMessage], _| {
                calls.push(messages[1].content.clone());
                Ok(format!("## Pending\n- part {}", calls.len()))
            }),
        )
        .unwrap();
        assert!(calls.len() > 2, "{}", calls.len());
        for (i, call) in calls.iter().enumerate() {
            assert!(estimate_text(call) + 2 * 500 < 6_000);
            if i > 0 {
                // Each chunk is folded into the summary of the ones before.
                assert!(call.starts_with(&format!("Previous summary:\n## Pending\n- part {i}\n")));
            }
        }
        assert!(calls[0].contains("request 0:") && calls.last().unwrap().contains("request 39:"));
    }

    /// A host that has the agent's conversation, of `tokens`; records which
    /// way each request went.
    #[derive(Default)]
    struct InConversation {
        tokens: u32,
        plain: Vec<Vec<ChatMessage>>,
        after: Vec<Vec<ChatMessage>>,
    }

    impl Model for InConversation {
        fn chat(&mut self, messages: &[ChatMessage], _: u32) -> Result<String, String> {
            self.plain.push(messages.to_vec());
            Ok("## Current task\n- Fix the export.".into())
        }
        fn conversation_tokens(&mut self) -> Option<u32> {
            Some(self.tokens)
        }
        fn chat_after_conversation(
            &mut self,
            messages: &[ChatMessage],
            _: u32,
        ) -> Result<String, String> {
            self.after.push(messages.to_vec());
            Ok("## Current task\n- Fix the export.".into())
        }
    }

    #[test]
    fn with_the_agents_conversation_one_instruction_follows_it_and_the_gate_still_holds() {
        let mut host = InConversation {
            tokens: 20_000,
            ..Default::default()
        };
        let out = summarize(&request("## Current task\n- old", talk(), 500), &mut host).unwrap();
        assert!(host.plain.is_empty());
        assert_eq!(host.after.len(), 1);
        let [instruction] = &host.after[0][..] else {
            panic!("{:?}", host.after)
        };
        assert_eq!(instruction.role, Role::User);
        assert!(instruction.content.starts_with("[condense] Stop here"));
        assert!(
            instruction
                .content
                .contains("begins with `[condense summary]`")
        );
        assert!(instruction.content.contains(SYSTEM_PROMPT));
        assert!(instruction.content.ends_with("at most 500 tokens."));
        // The model's own transcript is not sent: the conversation is the host's.
        assert!(!instruction.content.contains("USER: Fix the export."));
        assert!(
            out.contains("- Never push to main without approval."),
            "{out}"
        );

        // Over the model's context, or with the setting off: the
        // summarizer's own request.
        for (tokens, cache_friendly) in [(31_900, true), (1_000, false)] {
            let mut host = InConversation {
                tokens,
                ..Default::default()
            };
            let mut request = request("", talk(), 500);
            request.settings.cache_friendly = cache_friendly;
            summarize(&request, &mut host).unwrap();
            assert_eq!((host.plain.len(), host.after.len()), (1, 0));
        }
    }
}
