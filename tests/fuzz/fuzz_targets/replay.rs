//! A session replayed call by call, as an agent runtime drives condense: the
//! generated history grows in steps, each call gets the previous call's
//! checkpoint. Every call satisfies what `compress` promises (see
//! `condense_fuzz::checked`; each call runs once, determinism is the
//! `compress` target's job), and between compactions each request is the
//! previous request plus the new messages, byte for byte (the prompt-cache
//! promise). Then a forged checkpoint (a correct prefix hash with any other
//! fields) must be used safely or ignored, never panic.
#![no_main]

use arbitrary::Unstructured;
use condense_compressor::checkpoint::prefix_hash;
use condense_fuzz::{Gen, checked};
use condense_model::{Checkpoint, Message, Trigger};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mut g = Gen::new(&mut u);
    let Ok((config, summarizer, history)) = g.session() else {
        return;
    };
    // Call points: increasing prefix lengths, the whole history last.
    let mut ends = Vec::new();
    let mut end = 0;
    while end < history.len() {
        let Ok(step) = g.u.int_in_range(1..=8usize) else {
            break;
        };
        end = (end + step).min(history.len());
        ends.push(end);
    }
    if ends.last() != Some(&history.len()) {
        ends.push(history.len());
    }

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
        if outcome.report.trigger == Trigger::ReusedCheckpoint {
            let (before, request) = previous.as_ref().expect("a checkpoint came from a call");
            let mut expected = request.clone();
            expected.extend_from_slice(&history[*before..end]);
            assert!(
                outcome.messages == expected,
                "reused checkpoint, but the request is not the previous one plus messages {before}..{end}"
            );
        }
        checkpoint = outcome.checkpoint.clone();
        previous = Some((end, outcome.messages));
    }

    // A forged checkpoint: right prefix hash at a fuzzer-chosen boundary,
    // anything in the other fields.
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
        let summary = match &checkpoint {
            Some(cp) if g.u.arbitrary()? => cp.summary.clone() + &g.text()?,
            _ => g.text()?,
        };
        Ok(Checkpoint {
            boundary: boundary as u32,
            prefix_hash: prefix_hash(&history[..boundary]),
            folded_tokens: g.u.arbitrary()?,
            summary,
            tail_start,
            horizon,
        })
    })();
    if let Ok(forged) = forged {
        checked(&history, &config, Some(&forged), &summarizer, false);
    }
});
