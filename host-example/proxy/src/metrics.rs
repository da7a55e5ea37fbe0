//! What the proxy counts, served as `GET /metrics` in the OpenMetrics text
//! format (which Prometheus scrapes): requests, what condense did to them,
//! what that saved, how long the condense step took, and the recalls the
//! proxy answered.

use crate::compress::{FailedOpen, Outcome};
use crate::recall::Report;
use condense_config::pricing::ModelPrice;
use condense_host::formats::usage::Usage;
use condense_sessions::CallCost;
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

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SummaryLabels {
    summary: &'static str,
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
    rewrite_cost: Counter<f64, AtomicU64>,
    cache_breaks: Counter,
    fail_opens: Family<KindLabels, Counter>,
    condense_seconds: Histogram,
    /// The condense step of the requests that compacted.
    compaction_seconds: Histogram,
    recall: RecallCounters,
    prepare_jobs: Family<ResultLabels, Counter>,
    prepared: Family<SummaryLabels, Counter>,
    /// The provider's own figures, read from its answers.
    measured_tokens: Family<MeasuredLabels, Counter>,
    /// Answers whose usage could not be read (none, malformed, cut off).
    measured_unknown: Family<ModelLabels, Counter>,
    /// The measured calls priced, and the estimate of them uncompressed.
    measured_cost: Family<ModelLabels, Counter<f64, AtomicU64>>,
    uncompressed_cost: Family<ModelLabels, Counter<f64, AtomicU64>>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MeasuredLabels {
    /// The request's `model`, as the client named it.
    model: String,
    /// `cache_read`, `cache_write`, `uncached` (input) or `output`.
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabels {
    model: String,
}

/// What the recall loop did, over all requests.
#[derive(Default)]
struct RecallCounters {
    answered: Counter,
    rounds: Counter,
    tokens: Counter,
    errors: Counter,
    dropped: Counter,
    failures: Counter,
}

impl RecallCounters {
    fn register(&self, registry: &mut Registry) {
        for (name, help, counter) in [
            (
                "recalls",
                "condense_recall calls the proxy answered with the text they asked for",
                &self.answered,
            ),
            (
                "recall_rounds",
                "Upstream calls made to go on with an answer after its recall calls",
                &self.rounds,
            ),
            (
                "recall_tokens",
                "Estimated tokens of the text recall calls were answered with",
                &self.tokens,
            ),
            (
                "recall_errors",
                "condense_recall calls answered with a tool error (an unknown handle, arguments \
                 that are not the tool's, a query too long)",
                &self.errors,
            ),
            (
                "recalls_dropped",
                "condense_recall calls dropped from an answer: after a call of the client's own \
                 tools, or in the last round allowed",
                &self.dropped,
            ),
            (
                "recall_failures",
                "Answers ended early because the upstream failed in a later round",
                &self.failures,
            ),
        ] {
            registry.register(name, help, counter.clone());
        }
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Counters starting at zero.
    pub fn new() -> Metrics {
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
            "What the tokens condense took out of the requests would have cost, priced by each \
             request's model (`condense config --models`) at its cached-read price, at which \
             the provider would have served most of them; what condense saved is this less \
             estimated_cache_rewrite_usd",
            cost_saved.clone(),
        );
        let rewrite_cost = Counter::<f64, AtomicU64>::default();
        registry.register(
            "estimated_cache_rewrite_usd",
            "What condense's compactions cost: each compacted request written to the prompt \
             cache (the model's cache-write price) instead of read from it",
            rewrite_cost.clone(),
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
        // The calls that compact are the ones a summary makes wait: their
        // own histogram, the same buckets, so that a model summary's seconds
        // are not averaged away among the calls that reuse a fold.
        let compaction_seconds = Histogram::new(exponential_buckets(0.0005, 2.0, 16));
        registry.register(
            "compaction_seconds",
            "Time the condense step took on the requests that compacted (the summary written \
             included): what a compaction adds to its request's latency",
            compaction_seconds.clone(),
        );
        let recall = RecallCounters::default();
        recall.register(&mut registry);
        let prepare_jobs = Family::<ResultLabels, Counter>::default();
        registry.register(
            "prepare_jobs",
            "Summaries prepared ahead in the background, by result: prepared (kept for the \
             next compaction), nothing (no plan yet), failed, cancelled (the session went quiet \
             or compacted before the job's turn)",
            prepare_jobs.clone(),
        );
        // Every result and way shown from the start, at 0.
        for result in ["prepared", "nothing", "failed", "cancelled"] {
            drop(prepare_jobs.get_or_create(&ResultLabels { result }));
        }
        let prepared = Family::<SummaryLabels, Counter>::default();
        for summary in ["used", "waited", "on_top", "later", "fell_back"] {
            drop(prepared.get_or_create(&SummaryLabels { summary }));
        }
        registry.register(
            "compaction_summaries",
            "Compactions by how their summary came, when summaries are prepared ahead: used \
             (prepared, at once), waited (for its job, still running), on_top (the rest \
             summarized on top of the prepared one), later (none ready: the fallback's now, \
             the model's written in the background for the next compaction), fell_back \
             (written by the summarizer chain, as without preparation)",
            prepared.clone(),
        );
        let measured_tokens = Family::<MeasuredLabels, Counter>::default();
        registry.register(
            "measured_tokens",
            "Tokens the provider reported in its answers (its usage block, plain or streamed), \
             by model and kind: cache_read and cache_write (input read from and written to its \
             prompt cache), uncached (the rest of the input), output",
            measured_tokens.clone(),
        );
        let measured_unknown = Family::<ModelLabels, Counter>::default();
        registry.register(
            "measured_unknown",
            "Answers whose usage could not be read (none given, malformed, or the answer cut \
             off), by model: their tokens are in no measured figure",
            measured_unknown.clone(),
        );
        let measured_cost = Family::<ModelLabels, Counter<f64, AtomicU64>>::default();
        registry.register(
            "measured_cost_usd",
            "What the calls whose usage the provider reported cost, input and output, each \
             kind of token at the model's price (`condense config --models`), by model",
            measured_cost.clone(),
        );
        let uncompressed_cost = Family::<ModelLabels, Counter<f64, AtomicU64>>::default();
        registry.register(
            "estimated_uncompressed_usd",
            "An estimate: what the same calls (those of measured_cost_usd) would have cost sent \
             as the clients sent them, by model. Their input is condense's estimate of the \
             request's tokens, the part the session's previous request sent within the cache's \
             TTL priced as a cache read and the rest as a write (against the session's latest \
             call recorded when the call ended); their output is as measured",
            uncompressed_cost.clone(),
        );
        Metrics {
            measured_cost,
            uncompressed_cost,
            measured_tokens,
            measured_unknown,
            registry,
            requests,
            outcomes,
            compactions,
            tokens_before,
            tokens_after,
            cost_saved,
            rewrite_cost,
            cache_breaks,
            fail_opens,
            condense_seconds,
            compaction_seconds,
            recall,
            prepare_jobs,
            prepared,
        }
    }

    /// Counts a background job that prepared a summary (or did not).
    pub fn prepare_job(&self, result: &'static str) {
        self.prepare_jobs
            .get_or_create(&ResultLabels { result })
            .inc();
    }

    /// Counts what the recall loop did for one request.
    pub fn recalled(&self, report: &Report) {
        let counters = &self.recall;
        counters.answered.inc_by(u64::from(report.recalled));
        counters.rounds.inc_by(u64::from(report.rounds));
        counters.tokens.inc_by(report.tokens);
        counters.errors.inc_by(u64::from(report.errors));
        counters.dropped.inc_by(u64::from(report.dropped));
        if report.failure.is_some() {
            counters.failures.inc();
        }
    }

    /// Counts one request answered with `status`.
    pub fn request(&self, route: &'static str, status: u16) {
        self.requests
            .get_or_create(&RequestLabels { route, status })
            .inc();
    }

    /// Counts what condense did to one request of a compressed route, and
    /// how long it took; `price`, what its model costs (known once condense
    /// read the body, as it has for every request it compressed).
    pub fn condensed(&self, outcome: &Outcome, price: Option<&ModelPrice>, took: Duration) {
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
                let taken_out = f64::from(before.saturating_sub(*after));
                if let Some(price) = price {
                    self.cost_saved
                        .inc_by(price.input_usd(taken_out * price.cache_read));
                }
                if let Some(event) = compacted {
                    if let Some(prepared) = &event.compaction.prepared {
                        let summary = prepared.name();
                        self.prepared
                            .get_or_create(&SummaryLabels { summary })
                            .inc();
                    }
                    self.compaction_seconds.observe(took.as_secs_f64());
                    if let Some(price) = price {
                        let rewrite = f64::from(*after) * (price.write() - price.cache_read);
                        self.rewrite_cost.inc_by(price.input_usd(rewrite.max(0.0)));
                    }
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

    /// A measured call to `model` priced, beside the estimate of its input
    /// uncompressed (its output is the same).
    pub fn priced(&self, model: &str, cost: &CallCost, uncompressed_input_usd: f64) {
        let labels = ModelLabels {
            model: model.to_owned(),
        };
        self.measured_cost.get_or_create(&labels).inc_by(cost.usd());
        self.uncompressed_cost
            .get_or_create(&labels)
            .inc_by(uncompressed_input_usd + cost.output_usd);
    }

    /// What the provider said a call to `model` used, or that it said
    /// nothing that can be read.
    pub fn measured(&self, model: &str, usage: Option<Usage>) {
        let Some(usage) = usage else {
            self.measured_unknown
                .get_or_create(&ModelLabels {
                    model: model.to_owned(),
                })
                .inc();
            return;
        };
        for (kind, tokens) in [
            ("cache_read", usage.cache_read),
            ("cache_write", usage.cache_write),
            ("uncached", usage.uncached),
            ("output", usage.output),
        ] {
            self.measured_tokens
                .get_or_create(&MeasuredLabels {
                    model: model.to_owned(),
                    kind,
                })
                .inc_by(tokens);
        }
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

    /// A model at $3 per million input tokens, reads 0.1, writes 1.25.
    fn price() -> ModelPrice {
        ModelPrice {
            input: 3.0,
            output: 15.0,
            cache_read: 0.1,
            cache_write: [(300, 1.25)].into(),
            cache_ttl_seconds: 300,
            context_window: 2_000_000,
            token_threshold: None,
        }
    }

    #[test]
    fn what_condense_did_is_counted() {
        let metrics = Metrics::new();
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
            prepared: None,
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
        metrics.condensed(&compacted, Some(&price()), Duration::from_millis(3));
        // The next call keeps the fold: 1M tokens taken out at 0.1 of $3.
        let kept = Outcome::Compressed {
            before: 1_300_000,
            after: 300_000,
            compacted: None,
        };
        metrics.condensed(&kept, Some(&price()), Duration::from_millis(1));
        let store = FailedOpen::Store("down".into());
        let failed = Outcome::FailedOpen {
            why: store,
            had_checkpoint: false,
        };
        metrics.condensed(&failed, None, Duration::from_millis(1));
        let text = metrics.render();
        for line in [
            "condense_proxy_requests_total{route=\"anthropic\",status=\"200\"} 2",
            "condense_proxy_requests_total{route=\"forwarded\",status=\"404\"} 1",
            "condense_proxy_compactions_total 1",
            "condense_proxy_cache_breaks_total 1",
            "condense_proxy_tokens_before_total 2500000",
            "condense_proxy_tokens_after_total 500000",
            // Twice 1M tokens out at 0.1 of $3 per million; 200k
            // rewritten at 1.25 - 0.1 of it.
            "condense_proxy_estimated_cost_saved_usd_total 0.6",
            "condense_proxy_fail_opens_total{kind=\"store\"} 1",
            "condense_proxy_condensed_total{outcome=\"failed_open\"} 1",
            "condense_proxy_condense_seconds_count 3",
            "condense_proxy_compaction_seconds_count 1",
            "condense_proxy_compaction_seconds_sum 0.003",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
        let rewrite: f64 = text
            .lines()
            .find_map(|l| l.strip_prefix("condense_proxy_estimated_cache_rewrite_usd_total "))
            .and_then(|v| v.parse().ok())
            .expect("the rewrite counter");
        assert!((rewrite - 0.69).abs() < 1e-9, "{rewrite}");
    }

    #[test]
    fn what_the_recall_loop_did_is_counted() {
        let metrics = Metrics::new();
        let report = Report {
            rounds: 2,
            handles: vec!["f0123456789a".into(), "nonsense".into()],
            recalled: 1,
            tokens: 700,
            errors: 1,
            dropped: 3,
            failure: Some("the upstream answered 529".into()),
            ..Report::default()
        };
        metrics.recalled(&report);
        metrics.recalled(&Report::default());
        let text = metrics.render();
        for line in [
            "condense_proxy_recalls_total 1",
            "condense_proxy_recall_rounds_total 2",
            "condense_proxy_recall_tokens_total 700",
            "condense_proxy_recall_errors_total 1",
            "condense_proxy_recalls_dropped_total 3",
            "condense_proxy_recall_failures_total 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
    }
}
