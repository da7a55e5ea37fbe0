//! Building the request the model sees for a given fold:
//!
//! ```text
//! system messages of the folded part (verbatim, in order)
//! user:      [condense summary] <framing> <summary text>
//! assistant: [condense summary] <acknowledgement>
//! user:      the opener of the tail's turn (verbatim), when the cut is inside a turn
//!            (folded system messages that came after it follow it)
//! the region messages[boundary..tail_start] as the passes rewrote them
//! the tail   messages[tail_start..] (verbatim)
//! ```
//!
//! With no fold yet (boundary 0, the passes alone were enough) there is no
//! summary pair and no pinned opener. The pair's text is `framing`'s.

use crate::passes::Kept;
use crate::state::Prefix;
use condense_model::{Item, Message, Role};

/// The pair this layout carries, named here too for the callers outside the
/// crate that build the request a fold should give (the property tests).
pub use crate::framing::{LANGUAGES, summary_pair};

/// The request for a fold at window index `boundary`, as items naming
/// whole-history indices: `prefix` is what the compressor knows of the
/// messages before `window` (it starts at `prefix.boundary`), `pinned` the
/// opener kept before the kept messages (see `fold::Sizes::pinned`), `pair`
/// the summary pair (none when nothing is folded), `region` the passes'
/// rewrite of `window[boundary..tail_start]` by window origin, and the
/// verbatim tail from `tail_start`.
pub fn assemble(
    window: &[Message],
    prefix: &Prefix,
    boundary: usize,
    pinned: Option<usize>,
    pair: Option<[Message; 2]>,
    region: &[Kept],
    tail_start: usize,
) -> Vec<Item> {
    let offset = prefix.boundary as usize;
    let end = offset + boundary;
    // The folded system messages keep their order relative to the pinned
    // opener: those before it come first, those after it follow it.
    let split = pinned.unwrap_or(end);
    let systems = prefix.systems.iter().map(|&(i, _)| i as usize).chain(
        window[..boundary]
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role == Role::System)
            .map(|(i, _)| offset + i),
    );
    let kept = |i: usize| Item::Kept(i as u32);
    let mut out = Vec::with_capacity(window.len() - boundary + 8);
    out.extend(systems.clone().filter(|&i| i < split).map(kept));
    out.extend(pair.into_iter().flatten().map(Item::Written));
    out.extend(pinned.map(kept));
    out.extend(systems.filter(|&i| i > split).map(kept));
    out.extend(region.iter().map(|k| {
        if k.message == window[k.origin] {
            kept(offset + k.origin)
        } else {
            Item::Rewritten((offset + k.origin) as u32, k.message.clone())
        }
    }));
    out.extend((offset + tail_start..offset + window.len()).map(kept));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_systems_pair_pinned_tail() {
        let h = vec![
            Message::text(Role::System, "sys"),
            Message::text(Role::User, "task"),
            Message::text(Role::Assistant, "a"),
            Message::text(Role::Assistant, "b"),
        ];
        let whole = Prefix::default();
        let out = assemble(
            &h,
            &whole,
            3,
            Some(1),
            Some(summary_pair("s", None, "en")),
            &[],
            3,
        );
        assert_eq!(out.len(), 5);
        assert_eq!(out[0], Item::Kept(0));
        assert!(matches!(&out[1], Item::Written(m) if m.is_condense_summary()));
        assert!(matches!(&out[2], Item::Written(m) if m.is_condense_summary()));
        assert_eq!(out[3..], [Item::Kept(1), Item::Kept(3)]);

        // A system message inside the pinned turn stays after the opener.
        let mid = vec![
            Message::text(Role::User, "task"),
            Message::text(Role::System, "note"),
            Message::text(Role::Assistant, "a"),
            Message::text(Role::Assistant, "b"),
        ];
        let out = assemble(
            &mid,
            &whole,
            3,
            Some(0),
            Some(summary_pair("s", None, "en")),
            &[],
            3,
        );
        assert_eq!(out[2..], [Item::Kept(0), Item::Kept(1), Item::Kept(3)]);

        // A region: unchanged messages are kept, changed ones rewritten.
        let rewritten = Message::text(Role::Assistant, "a, rewritten");
        let region = [
            Kept {
                origin: 1,
                message: h[1].clone(),
            },
            Kept {
                origin: 2,
                message: rewritten.clone(),
            },
        ];
        let out = assemble(&h[..], &whole, 0, None, None, &region[..], 3);
        assert_eq!(
            out,
            vec![Item::Kept(1), Item::Rewritten(2, rewritten), Item::Kept(3)]
        );
    }

    #[test]
    fn a_window_names_whole_history_indices() {
        // The window is messages 10.. of the history; message 2 is a folded
        // system message, 4 the opener to pin.
        let window = vec![
            Message::text(Role::Assistant, "a"),
            Message::text(Role::Assistant, "b"),
            Message::text(Role::Assistant, "c"),
        ];
        let prefix = Prefix {
            boundary: 10,
            systems: vec![(2, 5)],
            last_opener: Some((4, 7)),
            ..Prefix::default()
        };
        let out = assemble(
            &window,
            &prefix,
            1,
            Some(4),
            Some(summary_pair("s", None, "en")),
            &[],
            1,
        );
        assert_eq!(out[0], Item::Kept(2));
        assert_eq!(out[3..], [Item::Kept(4), Item::Kept(11), Item::Kept(12)]);
    }
}
