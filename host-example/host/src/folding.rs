//! What a fold replaces (`folding.replaces`), resolved against the messages
//! the `compress` call was sent, so that the `llm` import can show the model
//! the conversation as it was sent without the host copying it again.

use crate::convert::wit;
use crate::llm::Conversation;
use condense_model::{Item, Message, Role};
use std::sync::Arc;

/// The messages a `compress` call was sent, shared with its session so that
/// `folding.replaces` can be resolved by index without copying them again.
pub(crate) struct Sent {
    request: Arc<wit::CompressRequest>,
    /// The messages before `request.offset` that a fold keeps: the leading
    /// system messages and the last turn opener (pinned when the boundary
    /// fell inside its turn), by index. Only these are copied: a call
    /// between compactions must not cost the folded history.
    earlier: Vec<(u32, Message)>,
}

impl Sent {
    pub(crate) fn new(request: Arc<wit::CompressRequest>, history: &[Message]) -> Sent {
        let before = &history[..request.offset as usize];
        let leading = before.iter().take_while(|m| m.role == Role::System).count();
        let opener = before[leading..]
            .iter()
            .rposition(|m| m.role == Role::User && m.tool_results().next().is_none())
            .map(|at| leading + at);
        let earlier = (0..leading)
            .chain(opener)
            .map(|i| (i as u32, before[i].clone()))
            .collect();
        Sent { request, earlier }
    }

    /// The messages `items` stand for; `None` when one is a message before
    /// the offset that was not kept aside (a system message in the middle
    /// of the folded history), and then the summarizer sends its own
    /// request. Items out of order are `None` too: like an outcome's, the
    /// indices increase, so what a compressor names costs the host at most
    /// one copy of each message it was sent.
    pub(crate) fn resolve(&self, items: Vec<wit::Item>) -> Option<Conversation> {
        let offset = self.request.offset;
        let mut next = 0;
        let mut written = 0;
        let items: Vec<Item> = items.into_iter().map(Item::from).collect();
        let messages = items
            .iter()
            .cloned()
            .map(|item| match item {
                Item::Kept(i) | Item::Rewritten(i, _) if i < next => None,
                Item::Written(_) if written == 2 => None,
                item => {
                    match &item {
                        Item::Written(_) => written += 1,
                        Item::Kept(i) | Item::Rewritten(i, _) => next = i.saturating_add(1),
                    }
                    Some(item)
                }
            })
            .map(|item| match item? {
                Item::Kept(i) if i < offset => self
                    .earlier
                    .iter()
                    .find(|(at, _)| *at == i)
                    .map(|(_, m)| m.clone()),
                Item::Kept(i) => self
                    .request
                    .history
                    .get((i - offset) as usize)
                    .cloned()
                    .map(Message::from),
                Item::Rewritten(_, message) | Item::Written(message) => Some(message),
            })
            .collect::<Option<Vec<Message>>>()?;
        Some(Conversation {
            messages: messages.into(),
            items: items.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_model::CoreConfig;

    /// `folding.replaces` resolved against an offset call: the indices sent,
    /// the leading system message and the last turn opener before the offset;
    /// anything else, or indices out of order, is no conversation.
    #[test]
    fn what_a_fold_replaces_is_resolved_from_the_calls_own_messages() {
        let text = |role, t: &str| Message::text(role, t);
        let history = vec![
            text(Role::System, "rules"),
            text(Role::User, "first task"),
            text(Role::Assistant, "done"),
            text(Role::User, "second task"),
            text(Role::Assistant, "working"),
            text(Role::Assistant, "still working"),
            text(Role::User, "more"),
        ];
        let offset = 5;
        let request = Arc::new(wit::CompressRequest {
            history: history[offset..].iter().map(Into::into).collect(),
            offset: offset as u32,
            config: (&CoreConfig::for_threshold(1_000)).into(),
            settings: "{}".into(),
            checkpoint: None,
            tokens: None,
        });
        let sent = Sent::new(request, &history);
        let pair = text(Role::User, "[condense summary] s");
        let items = |items: &[Item]| items.iter().map(wit::Item::from).collect::<Vec<_>>();
        let named = [
            Item::Kept(0),
            Item::Written(pair.clone()),
            Item::Kept(3),
            Item::Kept(5),
        ];
        let resolved = sent.resolve(items(&named)).unwrap();
        assert_eq!(*resolved.items, named);
        assert_eq!(
            resolved.messages.to_vec(),
            vec![
                history[0].clone(),
                pair.clone(),
                history[3].clone(),
                history[5].clone()
            ]
        );
        // Message 1 was not kept aside; 5 twice is out of order.
        assert!(sent.resolve(items(&[Item::Kept(1)])).is_none());
        assert!(
            sent.resolve(items(&[Item::Kept(5), Item::Kept(5)]))
                .is_none()
        );
        assert!(
            sent.resolve(items(&vec![Item::Written(pair.clone()); 3]))
                .is_none()
        );
        assert!(sent.resolve(items(&[Item::Kept(9)])).is_none());
    }
}
