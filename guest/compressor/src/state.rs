//! The compressor's checkpoint: what a compaction fixed, written into the
//! opaque `state` of a WIT `checkpoint` and read back on the next call.
//!
//! Besides the summary and where the passes ran, the state keeps what the
//! compressor needs of the folded messages, so that the host may send only
//! the history from the boundary on: the system messages and the last turn
//! opener before the boundary (which a request keeps), the folded tokens,
//! the turns opened, the language sample, and a hash chain over the folded
//! prefix (checked when the whole history is sent).
//!
//! A checkpoint this module cannot use is ignored with a reason, never an
//! error: condense's own state must never block a model call.

use crate::language::Sample;
use condense_model::hash;
use condense_model::{Checkpoint, Message, Role};
use serde::{Deserialize, Serialize};

/// The format of `state` this compressor writes and reads.
/// Format 3: the prefix hash is `hash::prefix_hash` continued over each
/// fold (format 2 chained whole folds, and could not give a recall handle).
pub const VERSION: u32 = 3;

/// What the compressor knows of the history before a window: nothing for the
/// whole history, the checkpoint's record after its boundary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prefix {
    /// Number of history messages folded (the window starts here).
    pub boundary: u32,
    /// The system messages before the boundary: (index, tokens).
    pub systems: Vec<(u32, u32)>,
    /// The last turn opener before the boundary: (index, tokens).
    pub last_opener: Option<(u32, u32)>,
    /// Turns opened before the boundary.
    pub turns: u32,
    /// Estimated tokens of all messages before the boundary.
    pub folded_tokens: u64,
    /// The person's text before the boundary that decides the language.
    pub sample: String,
    /// The language it decides (kept, so a call between compactions does not
    /// decide it again).
    pub language: String,
    /// Hex of the hash of the messages before the boundary
    /// (`condense_model::hash::prefix_hash`, continued over each fold): the
    /// host's hash of the same prefix, and what the fold's recall handle is
    /// made of.
    pub hash: String,
}

/// The whole state of a checkpoint.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub prefix: Prefix,
    /// The summarizer's text for the folded messages, without framing.
    pub summary: String,
    /// Tokens of the summary pair the request carries (0: nothing folded),
    /// for a reader of the checkpoint; the compressor estimates the pair
    /// again rather than trust it.
    pub pair_tokens: u32,
    /// Where the verbatim tail starts; between the boundary and here the
    /// request holds the passes' rewrite.
    pub tail_start: u32,
    /// How many messages the history had when the passes ran: they look no
    /// further, so their rewrite is reproduced byte for byte until the next
    /// compaction.
    pub horizon: u32,
}

impl State {
    pub fn to_checkpoint(&self) -> Checkpoint {
        Checkpoint {
            version: VERSION,
            boundary: self.prefix.boundary,
            state: serde_json::to_vec(self).expect("the state serialises"),
        }
    }

    /// Reads a checkpoint, or says why it cannot be used.
    pub fn read(checkpoint: &Checkpoint) -> Result<State, String> {
        if checkpoint.version != VERSION {
            return Err(format!(
                "checkpoint format {} (this compressor reads format {VERSION})",
                checkpoint.version
            ));
        }
        let state: State = serde_json::from_slice(&checkpoint.state)
            .map_err(|e| format!("checkpoint state is unreadable: {e}"))?;
        if state.prefix.boundary != checkpoint.boundary {
            return Err(format!(
                "checkpoint boundary {} disagrees with its state ({})",
                checkpoint.boundary, state.prefix.boundary
            ));
        }
        let ordered =
            state.prefix.boundary <= state.tail_start && state.tail_start <= state.horizon;
        if !ordered {
            return Err("checkpoint state is inconsistent".into());
        }
        Ok(state)
    }
}

impl State {
    /// The state of a history condense compacted and a runtime wrote back
    /// (`condense compact`, a proxy's client storing what it was sent): it
    /// starts, after its system messages, with a summary pair condense wrote.
    /// That pair is taken as the fold it stands for — folded messages up to
    /// and including it, its text the previous summary — so the next
    /// compaction folds only what came after it into that summary instead of
    /// summarising the summary as conversation.
    pub fn written_back(history: &[Message], tokens: &[u32]) -> Option<State> {
        let at = history.iter().position(|m| m.role != Role::System)?;
        let [user, assistant] = history.get(at..at + 2)? else {
            return None;
        };
        let (language, summary) = crate::framing::parse_summary_pair(user, assistant)?;
        let end = at + 2;
        let mut prefix = Prefix::default().advance(history, tokens, end);
        // The pair is no turn of the conversation: a cut after it is not
        // inside a turn it opened, so there is no opener to pin.
        prefix.last_opener = None;
        prefix.turns = 0;
        // The framing stays the one the pair was written in, so the pair is
        // rebuilt byte for byte.
        prefix.language = language.to_owned();
        Some(State {
            pair_tokens: tokens[at] + tokens[at + 1],
            summary,
            tail_start: end as u32,
            horizon: end as u32,
            prefix,
        })
    }
}

impl Prefix {
    /// Whether `history` (the whole of it) still starts with the messages
    /// this prefix was built from.
    pub fn matches(&self, history: &[Message]) -> Result<(), String> {
        let boundary = self.boundary as usize;
        if boundary > history.len() {
            return Err(format!(
                "the checkpoint folds {boundary} messages; the history has {}",
                history.len()
            ));
        }
        if format!("{:032x}", hash::prefix_hash(&history[..boundary])) != self.hash {
            return Err(format!(
                "the history before message {boundary} is not the one the checkpoint folded"
            ));
        }
        Ok(())
    }

    /// The messages before the boundary that a request may keep, with their
    /// roles, ascending (for the self-check of a window).
    pub fn known(&self) -> Vec<(usize, Role)> {
        let mut known: Vec<(usize, Role)> = self
            .systems
            .iter()
            .map(|&(i, _)| (i as usize, Role::System))
            .chain(self.last_opener.map(|(i, _)| (i as usize, Role::User)))
            .collect();
        known.sort_unstable_by_key(|&(i, _)| i);
        known
    }

    pub fn system_tokens(&self) -> u64 {
        self.systems.iter().map(|&(_, t)| u64::from(t)).sum()
    }

    /// This prefix moved forward over `window[..to]`, `tokens` the window's
    /// message estimates.
    pub fn advance(&self, window: &[Message], tokens: &[u32], to: usize) -> Prefix {
        if to == 0 {
            return self.clone();
        }
        let offset = self.boundary;
        let mut next = self.clone();
        for (i, m) in window[..to].iter().enumerate() {
            let index = offset + i as u32;
            if m.role == Role::System {
                next.systems.push((index, tokens[i]));
            }
            if m.opens_turn() {
                next.last_opener = Some((index, tokens[i]));
                next.turns += 1;
            }
            next.folded_tokens = next.folded_tokens.saturating_add(u64::from(tokens[i]));
        }
        let mut sample = Sample(std::mem::take(&mut next.sample));
        sample.extend(&window[..to]);
        next.language = sample.language().to_owned();
        next.sample = sample.0;
        let previous = u128::from_str_radix(&self.hash, 16).unwrap_or(0);
        next.hash = format!("{:032x}", hash::chain(previous, &window[..to]));
        next.boundary = offset + to as u32;
        next
    }

    /// The language of the folded messages plus `window[..to]`.
    pub fn language(&self, window: &[Message], to: usize) -> &'static str {
        if to == 0
            && let Some(known) = crate::framing::LANGUAGES
                .iter()
                .find(|l| **l == self.language)
        {
            return known;
        }
        let mut sample = Sample(self.sample.clone());
        sample.extend(&window[..to]);
        sample.language()
    }
}

impl Default for Prefix {
    /// Nothing folded.
    fn default() -> Self {
        Prefix {
            boundary: 0,
            systems: Vec::new(),
            last_opener: None,
            turns: 0,
            folded_tokens: 0,
            sample: String::new(),
            language: Sample::default().language().to_owned(),
            hash: format!("{:032x}", 0u128),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_model::tokens::estimate_messages;

    fn history() -> Vec<Message> {
        vec![
            Message::text(Role::System, "sys"),
            Message::text(Role::User, "one"),
            Message::text(Role::Assistant, "two"),
            Message::text(Role::User, "three"),
            Message::text(Role::Assistant, "four"),
        ]
    }

    #[test]
    fn a_prefix_advanced_in_steps_matches_its_history_and_nothing_else() {
        let h = history();
        let tokens = estimate_messages(&h);
        let start = State::default().prefix;
        assert_eq!(start.matches(&h), Ok(()));
        let once = start.advance(&h, &tokens, 2);
        let twice = once.advance(&h[2..], &tokens[2..], 2);
        assert_eq!(twice.boundary, 4);
        assert_eq!(twice.systems, vec![(0, tokens[0])]);
        assert_eq!(twice.last_opener, Some((3, tokens[3])));
        assert_eq!(twice.turns, 2);
        assert_eq!(twice.hash, format!("{:032x}", hash::prefix_hash(&h[..4])));
        assert_eq!(twice.matches(&h), Ok(()));
        let mut edited = h.clone();
        edited[1] = Message::text(Role::User, "uno");
        assert!(twice.matches(&edited).is_err());
        assert!(twice.matches(&h[..3]).is_err());
    }

    #[test]
    fn unreadable_checkpoints_say_why() {
        let state = State::default();
        let good = state.to_checkpoint();
        assert_eq!(State::read(&good), Ok(state));
        let future = Checkpoint {
            version: 9,
            ..good.clone()
        };
        assert!(State::read(&future).unwrap_err().contains("format 9"));
        let garbage = Checkpoint {
            state: b"not json".to_vec(),
            ..good.clone()
        };
        assert!(State::read(&garbage).unwrap_err().contains("unreadable"));
        let moved = Checkpoint {
            boundary: 3,
            ..good
        };
        assert!(State::read(&moved).unwrap_err().contains("disagrees"));
    }
}
