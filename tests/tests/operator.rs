//! The operator's view of a proxy, as a person would look at it: what the
//! provider billed, measured, held to the replay's figure; the page in a
//! real browser.

use condense_replay::replay_middleware_timed;
use condense_tests::browser::Chromium;
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

/// The operator's page as a person sees it, in a real browser (headless
/// Chromium): two recorded sessions through a proxy whose upstream reports
/// cache reads and writes as Anthropic does, and a third whose client named
/// it with markup. The overview's tiles say the calls and compactions the
/// sessions' records hold, its table has a row per session, and the
/// client's markup is text, never an element; a session's page has its
/// chart with one mark per compaction, at the calls that compacted, and a
/// row per compaction. The pictures the README shows are taken here.
#[test]
fn the_operator_page_shows_what_condense_did_in_a_browser() {
    let Some(chromium) = Chromium::find() else {
        return;
    };
    let upstream = billing_upstream();
    let proxy = RunningProxy::in_memory(SESSION_CONFIG, &upstream.url(""));
    let client = ureq::Agent::new_with_defaults();
    let hostile = "<script>document.title='owned'</script><b>x</b>";
    let runs = [("cc-opus-b", usize::MAX), ("cc-opus-a", 60), (hostile, 1)];
    let mut sessions = Vec::new();
    for (name, take) in runs {
        let corpus = if name == hostile { "cc-opus-c" } else { name };
        let (calls, _) = anthropic_session(corpus);
        let calls = &calls[..take.min(calls.len())];
        for call in calls {
            let headers = [("x-condense-session", name)];
            assert_eq!(
                post(&client, &proxy.url("/v1/messages"), call, &headers),
                200
            );
        }
        let group = named_group(name);
        sessions.push(wait_for_calls(&proxy, &group, calls.len()));
    }
    let figure = |key: &str| -> u64 {
        (sessions.iter())
            .map(|s| s["figures"][key].as_u64().unwrap())
            .sum()
    };

    // The overview.
    let dom = chromium.dom(&proxy.url("/ui"));
    assert_eq!(tile(&dom, "requests"), figure("calls").to_string(), "{dom}");
    assert_eq!(tile(&dom, "compactions"), figure("compactions").to_string());
    assert!(figure("compactions") >= 8, "{}", figure("compactions"));
    assert!(tile(&dom, "cache-hit").ends_with('%'), "{dom}");
    assert_eq!(dom.matches("<tr data-session=").count(), 3, "{dom}");
    // The client's markup is the session's name, as text.
    assert!(!dom.contains("<script>document"), "{dom}");
    assert!(!dom.contains("<b>x</b>"), "{dom}");
    assert!(dom.contains("&lt;script&gt;document.title"), "{dom}");
    assert!(dom.contains("<title>condense proxy</title>"), "{dom}");
    assert!(dom.contains("<svg"), "the spend chart: {dom}");

    // A session's page: its chart marks the calls that compacted.
    let group = named_group("cc-opus-b");
    let view = &sessions[0];
    let compactions: Vec<u64> = (view["compactions"].as_array().unwrap().iter())
        .map(|c| c["call"].as_u64().unwrap())
        .collect();
    let url = proxy.url(&format!("/ui/sessions/{group}"));
    let dom = chromium.dom(&url);
    let marks: Vec<u64> = (dom.split("class=\"compaction\"").skip(1))
        .map(|rest| {
            let at = rest.find("data-call=\"").expect("a mark names its call") + 11;
            rest[at..].split('"').next().unwrap().parse().unwrap()
        })
        .collect();
    assert_eq!(marks, compactions, "the chart's marks are the compactions");
    let table = dom
        .split("id=\"compactions\"")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("the compactions table");
    assert_eq!(table.matches("<tr data-call=").count(), compactions.len());
    assert_eq!(
        tile(&dom, "compactions"),
        compactions.len().to_string(),
        "{dom}"
    );
    assert!(dom.contains("id=\"summary\""), "the current summary: {dom}");

    // The pictures: in the test's own directory, and with CONDENSE_BLESS=1
    // where the README shows them.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let shots = [
        ("operator-overview.png", proxy.url("/ui"), 1200, 1500),
        ("operator-session.png", url, 1200, 1700),
    ];
    for (file, url, width, height) in shots {
        let path = dir.join(file);
        chromium.screenshot(&url, &path, width, height);
        if std::env::var("CONDENSE_BLESS").as_deref() == Ok("1") {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let docs = root.join("docs").join(file);
            std::fs::copy(&path, &docs).unwrap();
        }
    }
}
