//! Cost and key facts kept on the long recorded sessions: each replayed call
//! by call at `condense replay`'s 40k settings through the host — the
//! defaults (the `cost` rule), compacting only at the threshold, and at the
//! threshold with the passes on. Prints per session the cache-weighted cost, the compactions and
//! the key facts of the history that the last request still holds
//! (`condense_tests::recall`: the person's requests, the files tools touched,
//! the errors tools reported).
//!
//! Run: `cargo bench -p condense-tests --bench recall`. A figure, not a
//! timing. `RECALL_SUMMARIZER=x.wasm` measures another summarizer component
//! (an earlier build of the heuristic one, say) in place of the embedded one.

use condense_tests::recall::replay_recall;
use condense_tests::survival::CORPUS_SESSIONS;
use condense_tests::{config_40k, session, summarizer_from_env};

fn main() {
    let middleware = summarizer_from_env("RECALL_SUMMARIZER");
    println!(
        "{:<10} {:<9} {:>6} {:>5}  key facts kept",
        "session", "compacts", "cost", "comp."
    );
    for name in CORPUS_SESSIONS {
        let history = session(name);
        let modes = [
            ("cost", config_40k()),
            ("threshold", config_40k().at_threshold()),
            ("+passes", config_40k().with_passes()),
        ];
        for (label, config) in modes {
            let (stats, recall) = replay_recall(middleware, &config, &history);
            println!(
                "{name:<10} {label:<9} {:>6.4} {:>5}  {}",
                stats.cost_ratio(),
                stats.compactions,
                recall.line()
            );
        }
    }
}
