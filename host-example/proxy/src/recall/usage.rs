//! The tokens of an answer that took several upstream calls: each call's
//! usage, summed field by field, whatever the protocol names them
//! (`input_tokens`, `prompt_tokens_details.cached_tokens`,
//! `cache_read_input_tokens`, …): the client is billed for every call, so it
//! is told every call's tokens.

use serde_json::{Map, Value};

/// The usage of the calls so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Usage(Option<Value>);

impl Usage {
    /// Adds one call's `usage` object.
    pub fn add(&mut self, usage: &Value) {
        self.0 = Some(match self.0.take() {
            Some(total) => sum(total, usage),
            None => usage.clone(),
        });
    }

    /// The sum with `usage` (the call in progress) added, if there is
    /// anything to sum.
    pub fn with(&self, usage: Option<&Value>) -> Option<Value> {
        let mut total = self.clone();
        if let Some(usage) = usage {
            total.add(usage);
        }
        total.0
    }
}

/// `total` with every number of `more` added at the same place; what only
/// one has is kept, and what is not a number (a tier's name) is `more`'s.
fn sum(total: Value, more: &Value) -> Value {
    match (total, more) {
        (Value::Object(mut total), Value::Object(more)) => {
            for (key, value) in more {
                match total.get_mut(key) {
                    Some(old) => *old = sum(old.take(), value),
                    None => {
                        total.insert(key.clone(), value.clone());
                    }
                }
            }
            Value::Object(total)
        }
        (Value::Number(a), Value::Number(b)) => match (a.as_u64(), b.as_u64()) {
            (Some(a), Some(b)) => Value::from(a.saturating_add(b)),
            _ => Value::from(a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0)),
        },
        (total, Value::Null) => total,
        (_, more) => more.clone(),
    }
}

/// `usage` with `fields` of an object overlaid: a call whose usage comes in
/// parts (Anthropic's stream: `message_start`, then `message_delta`'s).
pub fn overlay(usage: Option<&Value>, fields: Option<&Value>) -> Option<Value> {
    let mut merged: Map<String, Value> = usage
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (key, value) in fields.and_then(Value::as_object).into_iter().flatten() {
        if !value.is_null() {
            merged.insert(key.clone(), value.clone());
        }
    }
    (usage.is_some() || fields.is_some()).then_some(Value::Object(merged))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_number_is_summed_where_it_is() {
        let mut usage = Usage::default();
        assert_eq!(usage.with(None), None);
        usage.add(&json!({"input_tokens": 10, "output_tokens": 2,
            "cache_read_input_tokens": 5, "service_tier": "standard"}));
        let total = usage.with(Some(&json!({"input_tokens": 7, "output_tokens": 3,
            "cache_creation_input_tokens": 4, "cache_read_input_tokens": null,
            "service_tier": "standard"})));
        assert_eq!(
            total,
            Some(
                json!({"input_tokens": 17, "output_tokens": 5, "cache_read_input_tokens": 5,
                "service_tier": "standard", "cache_creation_input_tokens": 4})
            )
        );
        usage.add(&json!({"prompt_tokens_details": {"cached_tokens": 1}}));
        usage.add(&json!({"prompt_tokens_details": {"cached_tokens": 2}}));
        assert_eq!(
            usage.with(None).unwrap()["prompt_tokens_details"],
            json!({"cached_tokens": 3})
        );
        let merged = overlay(
            Some(&json!({"input_tokens": 10, "output_tokens": 1})),
            Some(&json!({"output_tokens": 20, "input_tokens": null})),
        );
        assert_eq!(
            merged,
            Some(json!({"input_tokens": 10, "output_tokens": 20}))
        );
    }
}
