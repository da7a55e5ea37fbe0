//! The operator's view of a proxy, as a person would look at it: what the
//! provider billed, measured, held to the replay's figure; the page in a
//! real browser.

use condense_replay::replay_middleware_timed;
use condense_tests::proxy::{
    BILLED_OUTPUT, RunningProxy, SESSION_CONFIG, anthropic_session, billing_upstream, named_group,
    page_of, post, tile, wait_for_calls,
};
use std::sync::Arc;

/// The three long corpus sessions, each replayed through the proxy against
/// an upstream that bills like Anthropic's prompt cache (a read of the
/// prefix the request before sent, a write for the rest): the page's
/// figure for the input's cost against the uncompressed estimate — what the
/// provider reported, priced, over the estimate of the same calls
/// uncompressed — is the replay's cost figure for the same session and
/// settings, within 1%; and the session record's measured tokens are
/// exactly what the upstream billed.
#[test]
fn measured_savings_on_the_long_sessions_are_the_replays() {
    let client = ureq::Agent::new_with_defaults();
    for name in ["cc-opus-a", "cc-opus-b", "cc-opus-c"] {
        let (calls, history) = anthropic_session(name);
        let upstream = billing_upstream();
        let proxy = RunningProxy::in_memory(SESSION_CONFIG, &upstream.url(""));
        for call in &calls {
            let headers = [("x-condense-session", name)];
            assert_eq!(
                post(&client, &proxy.url("/v1/messages"), call, &headers),
                200
            );
        }
        let group = named_group(name);
        let view = wait_for_calls(&proxy, &group, calls.len());
        let page = page_of(&proxy, &format!("/ui/sessions/{group}"));
        let shown: f64 = tile(&page, "input-ratio")
            .trim_end_matches('×')
            .parse()
            .unwrap_or_else(|e| panic!("{name}: {e}\n{page}"));

        // The same session replayed in process, with the proxy's own
        // settings for its model and the same prices.
        let settings = RunningProxy::settings(
            SESSION_CONFIG,
            "http://127.0.0.1:1",
            Arc::new(condense_sessions::MemorySessions::default()),
        );
        let agent = &settings.agents["default"];
        let chosen = agent.models.for_model(Some("claude-opus-4"));
        let config = &chosen.config;
        // What the proxy leaves of the threshold once the recall tool it
        // offers is counted: the same decisions.
        let last = calls.last().unwrap().to_string();
        let parsed = condense_host::body::parse_body(last.as_bytes(), None).unwrap();
        let (core, recall) = condense_host::body::compressed_with(config, &parsed);
        let stats = replay_middleware_timed(
            &agent.middleware,
            &core,
            &config.settings,
            None,
            recall,
            &history,
            |_, _| {},
        )
        .with_prices(chosen.price.prices(0.0));
        let replayed = stats.cost_ratio();
        assert_eq!(stats.calls, calls.len(), "{name}");
        let off = (shown - replayed).abs() / replayed;
        // The tokens behind the two figures are the replay's: what the
        // upstream billed (read, written) is what the replay sent, and the
        // requests as the clients sent them are its baseline.
        let figures = &view["figures"];
        let read = figures["usage"]["cache_read"].as_u64().unwrap();
        let written = figures["usage"]["cache_write"].as_u64().unwrap();
        assert_eq!(
            (read, read + written),
            (stats.cached_tokens, stats.tokens_sent),
            "{name}"
        );
        assert_eq!(
            figures["tokens_before"], stats.baseline_tokens_sent,
            "{name}"
        );
        println!(
            "{name}: {} calls, {} compactions; page {shown:.3}, replay {replayed:.4} ({:.2}% apart)",
            stats.calls,
            stats.compactions,
            off * 100.0
        );
        assert!(
            off <= 0.01,
            "{name}: the page shows {shown}, the replay {replayed}"
        );
        // Every call is in the record, measured.
        assert_eq!(figures["measured_calls"], calls.len() as u64, "{name}");
        assert_eq!(figures["unknown_calls"], 0, "{name}");
        assert_eq!(
            figures["usage"]["output"],
            BILLED_OUTPUT * calls.len() as u64,
            "{name}"
        );
        assert_eq!(
            figures["compactions"], stats.compactions as u64,
            "{name}: the proxy compacted where the replay did"
        );
    }
}
