//! A session replayed call by call, as an agent runtime drives condense: the
//! generated history grows in steps, each call gets the previous call's
//! checkpoint. Every call satisfies what `compress` promises (see
//! `condense_fuzz::checked`; each call runs once, determinism is the
//! `compress` target's job), and between compactions each request is the
//! previous request plus the new messages, byte for byte (the prompt-cache
//! promise), and a call given only the messages from the checkpoint's
//! boundary on (an offset call) answers as the call given them all. Then a
//! forged checkpoint (a correct prefix with any other fields) must be used
//! safely or ignored, never panic.
#![no_main]

use arbitrary::Unstructured;
use condense_compressor::state::State;
use condense_fuzz::{Gen, checked, run_from};
use condense_model::{Checkpoint, Message, Trigger, materialize};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mut g = Gen::new(&mut u);
    let Ok((config, summarizer, history)) = g.session() else {
        return;
    };
    let ends = g.call_points(history.len());

    if condense_fuzz::show() {
        eprintln!("{config:#?}\n{summarizer:?}\n{history:#?}\ncalls at {ends:?}");
    }
    let mut previous: Option<(usize, Vec<Message>)> = None;
    let mut checkpoint: Option<Checkpoint> = None;
    for &end in &ends {
        let prefix = &history[..end];
        let Some(outcome) = checked(prefix, &config, checkpoint.as_ref(), &summarizer, false)
        else {
            return;
        };
        // The same call from the checkpoint's boundary on.
        if let Some(cp) = checkpoint.as_ref().filter(|cp| cp.boundary > 0) {
            let offset = cp.boundary as usize;
            if offset <= end {
                let from = run_from(prefix, offset, &config, Some(cp), &summarizer);
                match from {
                    Ok(from) => assert_eq!(from, outcome, "the offset call answered otherwise"),
                    // The checkpoint no longer applies (rewound below its
                    // horizon): the host then sends everything.
                    Err(condense_model::CompressError::NeedsFullHistory(_)) => {
                        assert!(outcome.report.checkpoint_ignored.is_some())
                    }
                    Err(e) => panic!("the offset call failed: {e}"),
                }
            }
        }
        let messages = materialize(&outcome.items, prefix);
        if outcome.report.trigger == Trigger::ReusedCheckpoint {
            let (before, request) = previous.as_ref().expect("a checkpoint came from a call");
            let mut expected = request.clone();
            expected.extend_from_slice(&history[*before..end]);
            assert!(
                messages == expected,
                "reused checkpoint, but the request is not the previous one plus messages {before}..{end}"
            );
        }
        checkpoint = outcome.checkpoint.clone();
        previous = Some((end, messages));
    }

    // A forged checkpoint: a state whose prefix really is the history's up
    // to a fuzzer-chosen boundary, anything in the other fields.
    let forged = (|| -> arbitrary::Result<Checkpoint> {
        let boundary = g.u.int_in_range(0..=history.len())?;
        let near = |g: &mut Gen, base: usize| -> arbitrary::Result<u32> {
            Ok(if g.u.arbitrary()? {
                g.u.arbitrary()?
            } else {
                (base + g.u.int_in_range(0..=history.len() - base)?) as u32
            })
        };
        let tail_start = near(&mut g, boundary)?;
        let horizon = near(&mut g, (tail_start as usize).min(history.len()))?;
        let start = State::default();
        let tokens = condense_model::tokens::estimate_messages(&history);
        let mut state = State {
            prefix: start.prefix.advance(&history, &tokens, boundary),
            summary: match checkpoint.as_ref().and_then(|cp| State::read(cp).ok()) {
                Some(cp) if g.u.arbitrary()? => cp.summary + &g.text()?,
                _ => g.text()?,
            },
            pair_tokens: g.u.arbitrary()?,
            tail_start,
            horizon,
        };
        state.prefix.folded_tokens = g.u.arbitrary()?;
        Ok(state.to_checkpoint())
    })();
    if let Ok(forged) = forged {
        checked(&history, &config, Some(&forged), &summarizer, false);
    }
});
