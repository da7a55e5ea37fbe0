//! Token counts of messages this process has counted before. A host that
//! is handed each request whole (the proxy, `condense compress`) would
//! otherwise count its session's tail again on every call, the same
//! messages each time: at 600 KB of history that was the largest part of a
//! call between compactions. A message's count depends on its content
//! alone, so it is kept under the content's digest, which is many times
//! quicker to take than the count, and under the caller's scope (the
//! tenant, behind a proxy of several: how quickly a request is counted then
//! says nothing of what another tenant sent).

use condense_model::Message;
use condense_model::hash::message_digest;
use condense_model::tokens::estimate_message;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// Counts kept at most (about 40 bytes each); past it they are all
/// dropped, and the sessions still going count their messages again once.
const KEPT: usize = 200_000;

static MEMO: LazyLock<Mutex<HashMap<(u64, u128), u32>>> = LazyLock::new(Mutex::default);

/// [`condense_model::tokens::estimate_messages`], each message counted once
/// per process and scope.
pub fn estimate_messages(messages: &[Message], scope: u64) -> Vec<u32> {
    let digests: Vec<(u64, u128)> = messages
        .iter()
        .map(|m| (scope, message_digest(m)))
        .collect();
    let mut out: Vec<Option<u32>> = {
        let memo = MEMO.lock().unwrap_or_else(|e| e.into_inner());
        digests.iter().map(|d| memo.get(d).copied()).collect()
    };
    let mut counted = Vec::new();
    for (i, slot) in out.iter_mut().enumerate() {
        if slot.is_none() {
            let tokens = estimate_message(&messages[i]);
            *slot = Some(tokens);
            counted.push((digests[i], tokens));
        }
    }
    if !counted.is_empty() {
        let mut memo = MEMO.lock().unwrap_or_else(|e| e.into_inner());
        if memo.len() + counted.len() > KEPT {
            memo.clear();
        }
        memo.extend(counted);
    }
    out.into_iter()
        .map(|t| t.expect("every message counted"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_model::Role;

    #[test]
    fn a_count_from_the_memo_is_the_estimate() {
        let messages: Vec<Message> = (0..50)
            .map(|i| Message::text(Role::User, format!("message {i}: {}", "word ".repeat(i))))
            .collect();
        let expected = condense_model::tokens::estimate_messages(&messages);
        assert_eq!(estimate_messages(&messages, 0), expected);
        assert_eq!(estimate_messages(&messages, 7), expected);
        // Counted again, from the memo, and mixed with new ones.
        let mut more = messages.clone();
        more.push(Message::text(Role::Assistant, "a new one"));
        assert_eq!(
            estimate_messages(&more, 0),
            condense_model::tokens::estimate_messages(&more)
        );
    }
}
