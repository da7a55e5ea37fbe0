//! What the proxy counts, served as `GET /metrics` in the OpenMetrics text
//! format (which Prometheus scrapes): requests, what condense did to them,
//! what that saved, and how long the condense step took.

use crate::compress::{FailedOpen, Outcome};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// The content type of [`Metrics::render`].
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    /// The protocol condense read the request as (`anthropic`, `openai`,
    /// `responses`), `forwarded` for every other path, `refused` for a
    /// request the proxy turned away before routing it (its token, an
    /// unknown agent).
    route: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

/// The proxy's counters; shared by every request.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    outcomes: Family<OutcomeLabels, Counter>,
    compactions: Counter,
    tokens_before: Counter,
    tokens_after: Counter,
    cost_saved: Counter<f64, AtomicU64>,
    cache_breaks: Counter,
    fail_opens: Family<KindLabels, Counter>,
    condense_seconds: Histogram,
    /// USD per million input tokens, for the estimate of what was saved.
    input_price: f64,
}

impl Metrics {
    /// Counters starting at zero; `input_price` is in USD per million
    /// uncached input tokens.
    pub fn new(input_price: f64) -> Metrics {
        let mut registry = Registry::with_prefix("condense_proxy");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "requests",
            "Requests answered, by route (the protocol condense read, `forwarded` for other \
             paths, `refused` before routing) and status",
            requests.clone(),
        );
        let outcomes = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "condensed",
            "Requests of a compressed route, by what condense did: compressed, unchanged \
             (under the threshold), not_compressed (nothing to compress), failed_open",
            outcomes.clone(),
        );
        let compactions = Counter::default();
        registry.register(
            "compactions",
            "Requests on which condense compacted: a new fold, a new summary",
            compactions.clone(),
        );
        let tokens_before = Counter::default();
        registry.register(
            "tokens_before",
            "Estimated tokens of the compressed requests as the clients sent them",
            tokens_before.clone(),
        );
        let tokens_after = Counter::default();
        registry.register(
            "tokens_after",
            "Estimated tokens of the compressed requests as sent upstream",
            tokens_after.clone(),
        );
        let cost_saved = Counter::<f64, AtomicU64>::default();
        registry.register(
            "estimated_cost_saved_usd",
            "Tokens condense took out of the requests, at --input-price per million uncached \
             input tokens: an upper bound where the provider would have served them from its \
             prompt cache",
            cost_saved.clone(),
        );
        let cache_breaks = Counter::default();
        registry.register(
            "cache_breaks",
            "Prompt-cache breaks condense caused: compactions, and requests sent unchanged \
             (failed open) in a session condense had been compressing",
            cache_breaks.clone(),
        );
        let fail_opens = Family::<KindLabels, Counter>::default();
        registry.register(
            "fail_opens",
            "Requests forwarded unchanged because something failed, by what: unreadable \
             (the body), store (the checkpoint store), condense (a component), task",
            fail_opens.clone(),
        );
        // 0.5 ms to about 16 s: a heuristic fold takes milliseconds, a model
        // summary seconds.
        let condense_seconds = Histogram::new(exponential_buckets(0.0005, 2.0, 16));
        registry.register(
            "condense_seconds",
            "Time a compressed route's request spent in the condense step, waiting for a \
             slot included",
            condense_seconds.clone(),
        );
        Metrics {
            registry,
            requests,
            outcomes,
            compactions,
            tokens_before,
            tokens_after,
            cost_saved,
            cache_breaks,
            fail_opens,
            condense_seconds,
            input_price,
        }
    }

    /// Counts one request answered with `status`.
    pub fn request(&self, route: &'static str, status: u16) {
        self.requests
            .get_or_create(&RequestLabels { route, status })
            .inc();
    }

    /// Counts what condense did to one request of a compressed route, and
    /// how long it took.
    pub fn condensed(&self, outcome: &Outcome, took: Duration) {
        self.condense_seconds.observe(took.as_secs_f64());
        let name = match outcome {
            Outcome::NotCompressed => "not_compressed",
            Outcome::Unchanged => "unchanged",
            Outcome::Compressed {
                before,
                after,
                compacted,
            } => {
                self.tokens_before.inc_by(u64::from(*before));
                self.tokens_after.inc_by(u64::from(*after));
                let saved = before.saturating_sub(*after);
                self.cost_saved
                    .inc_by(f64::from(saved) * self.input_price / 1e6);
                if compacted.is_some() {
                    self.compactions.inc();
                    self.cache_breaks.inc();
                }
                "compressed"
            }
            Outcome::FailedOpen {
                why,
                had_checkpoint,
            } => {
                let kind = match why {
                    FailedOpen::Unreadable(_) => "unreadable",
                    FailedOpen::Store(_) => "store",
                    FailedOpen::Condense(_) => "condense",
                    FailedOpen::Task(_) => "task",
                };
                self.fail_opens.get_or_create(&KindLabels { kind }).inc();
                if *had_checkpoint {
                    self.cache_breaks.inc();
                }
                "failed_open"
            }
        };
        self.outcomes
            .get_or_create(&OutcomeLabels { outcome: name })
            .inc();
    }

    /// Every counter, in the OpenMetrics text format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String does not fail");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_host::events::{Cause, Compaction};

    #[test]
    fn what_condense_did_is_counted() {
        let metrics = Metrics::new(3.0);
        metrics.request("anthropic", 200);
        metrics.request("anthropic", 200);
        metrics.request("forwarded", 404);
        let compaction = Compaction {
            call: 0,
            trigger: Cause::Threshold,
            tokens_before: 1_200_000,
            tokens_after: 200_000,
            messages_folded: 40,
            passes: Default::default(),
            summary_by: None,
            fell_through: Vec::new(),
            cache_breaks: 0,
            elapsed_us: 3000,
        };
        let compacted = Outcome::Compressed {
            before: 1_200_000,
            after: 200_000,
            compacted: Some(Box::new(crate::compress::Compacted {
                agent: "default".into(),
                session: "g".into(),
                compaction,
            })),
        };
        metrics.condensed(&compacted, Duration::from_millis(3));
        let store = FailedOpen::Store("down".into());
        let failed = Outcome::FailedOpen {
            why: store,
            had_checkpoint: false,
        };
        metrics.condensed(&failed, Duration::from_millis(1));
        let text = metrics.render();
        for line in [
            "condense_proxy_requests_total{route=\"anthropic\",status=\"200\"} 2",
            "condense_proxy_requests_total{route=\"forwarded\",status=\"404\"} 1",
            "condense_proxy_compactions_total 1",
            "condense_proxy_cache_breaks_total 1",
            "condense_proxy_tokens_before_total 1200000",
            "condense_proxy_tokens_after_total 200000",
            "condense_proxy_estimated_cost_saved_usd_total 3.0",
            "condense_proxy_fail_opens_total{kind=\"store\"} 1",
            "condense_proxy_condensed_total{outcome=\"failed_open\"} 1",
            "condense_proxy_condense_seconds_count 2",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
    }
}
