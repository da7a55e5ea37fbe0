//! The model's `condense_recall` calls, answered from the client's own
//! request: a handle resolves only against the history of the request
//! being answered ([`condense_model::recall`]), so no session reads
//! another's. A call that cannot be answered — arguments that are not the
//! tool's, a handle this conversation does not have, a query too long — is
//! answered with a tool error saying why, never with text.

use condense_model::recall::{TOOL_NAME, recall};
use condense_model::tokens::estimate_text;
use condense_model::{Message, ToolResult};
use serde_json::Value;

/// A recall call as the model made it: its id and its arguments (`Err`:
/// arguments that are not JSON, as the model wrote them).
#[derive(Clone, Debug, PartialEq)]
pub struct RecallCall {
    pub id: String,
    pub arguments: Result<Value, String>,
}

impl RecallCall {
    /// A call whose arguments came as JSON text (Chat, Responses).
    pub fn from_text(id: &str, arguments: &str) -> RecallCall {
        RecallCall {
            id: id.to_owned(),
            arguments: serde_json::from_str(arguments).map_err(|_| arguments.to_owned()),
        }
    }
}

/// What the proxy answered one call with, for the metrics and the events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answered {
    /// The handle asked for, when the call named one.
    pub handle: Option<String>,
    /// The estimated tokens of the text given back (0 for an error).
    pub tokens: u32,
    pub error: bool,
}

/// Each call's result, from `history` (the client's request), at most
/// `budget_tokens` of text each.
pub fn resolve(
    history: &[Message],
    calls: &[RecallCall],
    budget_tokens: u32,
) -> Vec<(ToolResult, Answered)> {
    calls
        .iter()
        .map(|call| {
            let handle = call
                .arguments
                .as_ref()
                .ok()
                .and_then(|a| a.get("handle")?.as_str())
                .map(str::to_owned);
            let (content, is_error) = match answer(history, call, budget_tokens) {
                Ok(text) => (text, false),
                Err(why) => (why, true),
            };
            let answered = Answered {
                handle,
                tokens: if is_error { 0 } else { estimate_text(&content) },
                error: is_error,
            };
            let result = ToolResult {
                call_id: call.id.clone(),
                content,
                is_error,
            };
            (result, answered)
        })
        .collect()
}

/// The text of one call, or the tool error saying why there is none.
fn answer(history: &[Message], call: &RecallCall, budget_tokens: u32) -> Result<String, String> {
    let arguments = call
        .arguments
        .as_ref()
        .map_err(|_| format!("{TOOL_NAME}: the arguments are not JSON"))?;
    let handle = arguments
        .get("handle")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{TOOL_NAME}: `handle` (a string) is required"))?;
    let query = match arguments.get("query") {
        None | Some(Value::Null) => None,
        Some(Value::String(query)) => Some(query.as_str()),
        Some(_) => return Err(format!("{TOOL_NAME}: `query` must be a string")),
    };
    recall(history, handle, query, budget_tokens)
        .map(|recalled| recalled.text)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_model::Role;
    use condense_model::recall::fold_handle;
    use serde_json::json;

    #[test]
    fn a_call_is_answered_from_this_history_only() {
        let history = vec![
            Message::text(Role::User, "The secret is 42."),
            Message::text(Role::Assistant, "Noted."),
            Message::text(Role::User, "Go on."),
        ];
        let other = vec![Message::text(Role::User, "Another session's secret.")];
        let calls = [
            RecallCall {
                id: "a".into(),
                arguments: Ok(json!({"handle": fold_handle(&history[..2])})),
            },
            RecallCall {
                id: "b".into(),
                arguments: Ok(json!({"handle": fold_handle(&other)})),
            },
            RecallCall::from_text("c", "{\"handle\": "),
            RecallCall {
                id: "d".into(),
                arguments: Ok(json!({"handle": fold_handle(&history[..2]), "query": 7})),
            },
        ];
        let answered = resolve(&history, &calls, 1_000);
        let (found, _) = &answered[0];
        assert!(!found.is_error && found.content.contains("The secret is 42."));
        assert_eq!(found.call_id, "a");
        let errors: Vec<&str> = answered[1..]
            .iter()
            .map(|(r, a)| {
                assert!(r.is_error && a.error && a.tokens == 0);
                r.content.as_str()
            })
            .collect();
        assert!(errors[0].contains("no folded messages"), "{}", errors[0]);
        assert!(!errors[0].contains("Another session"));
        assert!(errors[1].contains("not JSON"), "{}", errors[1]);
        assert!(errors[2].contains("`query`"), "{}", errors[2]);
        assert!(answered[0].1.tokens > 0);
        assert_eq!(answered[1].1.handle, Some(fold_handle(&other)));
    }
}
