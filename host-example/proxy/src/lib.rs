//! condense proxy: an HTTP proxy in front of the provider, so that any
//! client — Claude Code, Codex, an OpenAI or Anthropic SDK — gets condense
//! without a line of code: point its base URL at the proxy.
//!
//! Each request goes through three steps, one module each, once [`guard`]
//! has let it in (a host the proxy answers to, against DNS rebinding; no
//! web page on operator endpoints; the operator's token for the sessions
//! view):
//!
//! - [`route`]: which agent's settings (`/agents/NAME/…` or the
//!   `x-condense-agent` header), which protocol (Anthropic Messages, OpenAI
//!   Chat Completions, OpenAI Responses) and which upstream; the proxy's own
//!   token;
//! - [`compress`]: the body through condense (`compress_body`) with the
//!   session's checkpoint, found in the [`SessionStore`] from the request
//!   itself or named by `x-condense-session`; on a bounded blocking pool.
//!   Fail-open: anything that goes wrong forwards the original body. Its
//!   summaries ask the client's own upstream ([`summary`]) unless `[llm]`
//!   names an endpoint, and a request past the soft mark starts a job that
//!   prepares the next one ([`prepare`]);
//! - [`upstream`]: the request to the provider with the client's own
//!   headers (its key among them, never logged or stored), and the answer
//!   streamed back byte for byte as it arrives (SSE included). Only an
//!   upstream that cannot be reached is the proxy's answer: a 502 saying so;
//! - [`recall`], instead of `upstream`, for a request condense gave the
//!   `condense_recall` tool: the proxy answers the model's recall calls
//!   itself, calling the upstream again, and the client gets one answer
//!   without them.
//!
//! [`metrics`] counts all of it for `GET /metrics`; each request is one log
//! line (target `condense::proxy`), without its body unless
//! [`Proxy::log_bodies`], with the recall rounds it took (a request whose
//! recalls the proxy answers is logged once its answer is complete, a
//! stream's included).

pub mod compress;
pub mod edits;
pub mod guard;
pub mod ledger;
pub mod metrics;
pub mod page;
pub mod prepare;
pub mod recall;
pub mod route;
pub mod sessions;
pub mod summary;
pub mod upstream;

use anyhow::Context;
use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::HeaderMap;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use bytes::Bytes;
use condense_config::pricing::{ModelPrice, PriceTable};
use condense_config::{AgentSettings, ConfigFile, ModelClient};
use condense_host::events::EventLog;
use condense_host::formats::Format;
use condense_host::prepared::Prepared;
use condense_host::{BodyConfig, Embedded, Middleware};
use condense_sessions::SessionStore;
use metrics::Metrics;
use prepare::Preparer;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

pub use route::Routes;

/// The agent name of requests that name none.
pub const DEFAULT_AGENT: &str = "default";

/// One agent's condense: the middleware, and what the requests to each
/// model are compressed with.
pub struct AgentSetup {
    pub middleware: Arc<Middleware>,
    /// ProxyState with the compress tasks, which choose once they have read the
    /// body's `model`.
    pub models: Arc<Models>,
    /// Its LLM summarizer asks each request's own upstream, with the
    /// client's credentials ([`summary::ClientModel`]), not `[llm]`'s.
    pub asks_client: bool,
}

/// What the requests to each model are compressed with, by the pattern
/// that prices the model.
#[derive(Clone)]
pub struct Models {
    /// Which pattern prices a request's `model`.
    prices: PriceTable,
    /// By the pattern of [`Models::prices`].
    by_pattern: BTreeMap<String, ForModel>,
}

/// What the requests to one model (pattern) are compressed with: its
/// threshold and cache prices ([`AgentSettings::for_model`]), and what it costs.
#[derive(Clone)]
pub struct ForModel {
    pub config: BodyConfig,
    pub price: ModelPrice,
}

impl AgentSetup {
    /// `settings`' condense, its settings made once per model pattern.
    pub fn new(middleware: Arc<Middleware>, settings: &AgentSettings) -> AgentSetup {
        let by_pattern = settings
            .models
            .entries()
            .map(|(pattern, _)| {
                let (for_model, _, price) = settings.for_model(Some(pattern));
                let config = for_model.body_config();
                (
                    pattern.to_owned(),
                    ForModel {
                        config,
                        price: price.clone(),
                    },
                )
            })
            .collect();
        AgentSetup {
            middleware,
            models: Arc::new(Models {
                prices: settings.models.clone(),
                by_pattern,
            }),
            asks_client: settings.asks_a_model() && settings.llm.asks_client_in_proxy(),
        }
    }

    /// This agent with its requests' times read from `clock` (how long a
    /// session was idle, so whether its cache is cold): a test's own.
    pub fn timed_by(self, clock: &condense_host::timing::Clock) -> AgentSetup {
        let mut models = (*self.models).clone();
        for for_model in models.by_pattern.values_mut() {
            if let Some(cold) = &mut for_model.config.cold {
                cold.clock = clock.clone();
            }
        }
        AgentSetup {
            models: Arc::new(models),
            ..self
        }
    }
}

impl Models {
    /// What a request to `model` is compressed with (`None`: a request that
    /// names no model).
    pub fn for_model(&self, model: Option<&str>) -> &ForModel {
        let (pattern, _) = self.prices.lookup(model);
        &self.by_pattern[pattern]
    }
}

/// The agents of a config file, or the defaults alone without one: its
/// top-level settings are agent [`DEFAULT_AGENT`], each `[agents.NAME]`
/// table an agent of its own; their components from `embedded` unless the
/// file gives paths, the model behind `llm` from `client` — unless it asks
/// each request's own upstream (`[llm] in_proxy`, [`summary::ClientModel`]).
/// With `prepared`, their middlewares keep summaries prepared ahead there.
pub fn agents(
    file: Option<&ConfigFile>,
    embedded: &Embedded,
    client: ModelClient<'_>,
    prepared: Option<&Arc<Prepared>>,
) -> anyhow::Result<BTreeMap<String, AgentSetup>> {
    let base = file.map_or_else(AgentSettings::default, |f| f.base.clone());
    let named = file.into_iter().flat_map(|f| f.agents.iter());
    std::iter::once((DEFAULT_AGENT.to_owned(), base))
        .chain(named.map(|(name, settings)| (name.clone(), settings.clone())))
        .map(|(name, settings)| {
            // Preparing ahead, an LLM chain plans each compaction.
            let settings = match prepared {
                Some(_) => settings.in_proxy().preparing_ahead(),
                None => settings.in_proxy(),
            };
            let client = match settings.llm.asks_client_in_proxy() {
                true => &summary::per_request,
                false => client,
            };
            let mut middleware = settings
                .middleware(embedded, client)
                .with_context(|| format!("agent {name}"))?;
            if let Some(prepared) = prepared {
                middleware = middleware.with_prepared(prepared.clone());
            }
            Ok((name, AgentSetup::new(Arc::new(middleware), &settings)))
        })
        .collect()
}

/// Everything the proxy serves with.
pub struct Proxy {
    /// By name; [`DEFAULT_AGENT`] serves requests that name none.
    pub agents: BTreeMap<String, AgentSetup>,
    pub store: Arc<dyn SessionStore>,
    pub routes: Routes,
    /// The largest request body accepted (413 above it).
    pub max_request_bytes: usize,
    /// Compressions run at once; more wait for a turn (backpressure).
    pub compress_slots: usize,
    /// Log the body each compressed route sends upstream (the users' words
    /// and their tools' output: off unless asked for). Headers, the keys
    /// among them, are never logged.
    pub log_bodies: bool,
    /// Where each compaction is appended as a JSON line (the runtime's
    /// event, with the agent and session), if anywhere.
    pub events: Option<EventLog>,
    /// Who may read `GET /sessions`.
    pub sessions_view: guard::Access,
    /// Host names requests may be sent to besides the loopback names and
    /// the listen address (`--allowed-host`: a name, `*.domain` or `*`).
    pub allowed_hosts: Vec<String>,
    /// Summaries prepared ahead in the background (`None`: every
    /// compaction's summary is written when it comes). The agents'
    /// middlewares keep them ([`condense_host::Middleware::with_prepared`]).
    pub prepare: Option<PrepareSettings>,
}

/// How the proxy prepares summaries ahead.
#[derive(Clone, Copy, Debug)]
pub struct PrepareSettings {
    /// Jobs at once; more wait for a turn.
    pub jobs: usize,
    /// A job whose session sent nothing for this long when its turn comes
    /// is dropped.
    pub quiet: std::time::Duration,
}

/// What the handlers share.
struct ProxyState {
    proxy: Proxy,
    /// The names requests may be sent to.
    hosts: guard::AllowedHosts,
    /// The agents' names, for routing.
    agents: Vec<String>,
    slots: Semaphore,
    client: ureq::Agent,
    metrics: Arc<Metrics>,
    events: Option<Mutex<EventLog>>,
    /// Prepares summaries ahead, when the proxy does.
    preparer: Option<Arc<Preparer>>,
}

/// Serves `proxy` on `listener` until `shutdown` completes; requests in
/// flight, streams included, are finished first. An allowed host that is
/// not a host name is an error before anything is served.
pub async fn serve(
    listener: TcpListener,
    mut proxy: Proxy,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let hosts = guard::AllowedHosts::new(listener.local_addr()?, &proxy.allowed_hosts)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let shared = Arc::new(ProxyState {
        hosts,
        agents: proxy.agents.keys().cloned().collect(),
        slots: Semaphore::new(proxy.compress_slots.max(1)),
        client: upstream::client(),
        metrics: Arc::new(Metrics::new()),
        preparer: proxy
            .prepare
            .map(|p| Arc::new(Preparer::new(p.jobs, p.quiet))),
        events: proxy.events.take().map(Mutex::new),
        proxy,
    });
    let app = Router::new()
        .route("/healthz", axum::routing::get(|| async { "ok\n" }))
        .route("/metrics", axum::routing::get(render_metrics))
        .route("/sessions", axum::routing::get(list_sessions))
        .route("/sessions/{*session}", axum::routing::get(show_session))
        .route("/ui", axum::routing::get(overview_page))
        .route("/ui/sessions/{*session}", axum::routing::get(session_page))
        .fallback(handle)
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            guarded,
        ))
        .with_state(shared);
    // An answer passes in many writes (headers, then the body as it
    // streams): with Nagle's algorithm on, a write waits for the client's
    // delayed ACK of the one before, 40 ms on Linux.
    let listener = listener.tap_io(|stream| {
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(target: "condense::proxy", "cannot set TCP_NODELAY: {e}");
        }
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}

/// Every request, before it is routed: refused unless it names a host the
/// proxy answers to; on operator endpoints, unless no web page of another
/// site sent it.
async fn guarded(
    State(shared): State<Arc<ProxyState>>,
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    let path = request.uri().path();
    let operator = matches!(path, "/metrics" | "/sessions" | "/ui")
        || path.starts_with("/sessions/")
        || path.starts_with("/ui/");
    let refused = shared
        .hosts
        .check(request.uri(), request.headers())
        .or_else(|| {
            operator
                .then(|| guard::from_a_page(request.headers(), &shared.hosts))
                .flatten()
        });
    let Some(refused) = refused else {
        return next.run(request).await;
    };
    tracing::warn!(
        target: "condense::proxy",
        method = %request.method(),
        path = %request.uri().path(),
        status = refused.status.as_u16(),
        "request refused: {}",
        refused.message
    );
    // Read (up to the cap) and dropped first, as every refusal is.
    let _ = axum::body::to_bytes(request.into_body(), shared.proxy.max_request_bytes).await;
    shared.answered("refused", refused.into_response())
}

async fn render_metrics(State(shared): State<Arc<ProxyState>>) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, metrics::CONTENT_TYPE)],
        shared.metrics.render(),
    )
        .into_response()
}

/// `GET /sessions`: the store's sessions, JSON.
async fn list_sessions(State(shared): State<Arc<ProxyState>>, headers: HeaderMap) -> Response {
    if let Err(refused) = shared.proxy.sessions_view.check(&headers) {
        return refused.into_response();
    }
    let store = shared.proxy.store.clone();
    view(tokio::task::spawn_blocking(move || sessions::list(&*store).map(Some)).await)
}

/// `GET /sessions/{session}`: one session, JSON; 404 when it has none.
async fn show_session(
    State(shared): State<Arc<ProxyState>>,
    Path(session): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(refused) = shared.proxy.sessions_view.check(&headers) {
        return refused.into_response();
    }
    let store = shared.proxy.store.clone();
    view(tokio::task::spawn_blocking(move || sessions::show(&*store, &session)).await)
}

/// `GET /ui`: the operator's page, every session ([`page::overview`]).
async fn overview_page(State(shared): State<Arc<ProxyState>>, headers: HeaderMap) -> Response {
    if let Err(refused) = shared.proxy.sessions_view.check(&headers) {
        return guard::asking_a_browser(refused);
    }
    let store = shared.proxy.store.clone();
    let found = tokio::task::spawn_blocking(move || {
        sessions::overview(&*store)
            .map(|(rows, total, spend)| Some(page::overview(&rows, &total, spend)))
    })
    .await;
    html(found)
}

/// `GET /ui/sessions/{session}`: one session's page; 404 when it has none.
async fn session_page(
    State(shared): State<Arc<ProxyState>>,
    Path(session): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(refused) = shared.proxy.sessions_view.check(&headers) {
        return guard::asking_a_browser(refused);
    }
    let state = shared.clone();
    let found = tokio::task::spawn_blocking(move || {
        let view = sessions::show(&*state.proxy.store, &session)?;
        Ok(view.map(|view| {
            // The line its requests are compacted at: its latest call's
            // agent and model (the defaults' before any).
            let latest = view.calls.last().map(|row| &row.call);
            let agent = latest.map_or(DEFAULT_AGENT, |c| c.agent.as_str());
            let threshold = state
                .proxy
                .agents
                .get(agent)
                .or_else(|| state.proxy.agents.get(DEFAULT_AGENT))
                .map_or(0, |a| {
                    let model = latest.map(|c| c.model.as_str());
                    a.models.for_model(model).config.core.token_threshold
                });
            page::session(&view, threshold)
        }))
    })
    .await;
    html(found)
}

/// A page: 404 for nothing, 503 for a store that cannot be read.
fn html(
    result: Result<Result<Option<String>, condense_host::StoreError>, tokio::task::JoinError>,
) -> Response {
    match result {
        Ok(Ok(Some(page))) => (page::HEADERS.map(|(n, v)| (n, v)), page).into_response(),
        other => view(other),
    }
}

/// A view as JSON: 404 for nothing, 503 for a store that cannot be read.
fn view<T: serde::Serialize>(
    result: Result<Result<Option<T>, condense_host::StoreError>, tokio::task::JoinError>,
) -> Response {
    match result {
        Ok(Ok(Some(view))) => (
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            serde_json::to_string(&view).expect("a view serialises"),
        )
            .into_response(),
        Ok(Ok(None)) => {
            (StatusCode::NOT_FOUND, "condense proxy: no such session\n").into_response()
        }
        Ok(Err(e)) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("condense proxy: {e}\n"),
        )
            .into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("condense proxy: {e}\n"),
        )
            .into_response(),
    }
}

impl ProxyState {
    /// A call's end: what the provider said it used, in the metrics; the
    /// call priced beside its uncompressed estimate ([`ledger`]), recorded
    /// in its session and logged — on a blocking thread, as the store's
    /// calls are.
    fn call_ended(
        self: &Arc<Self>,
        start: ledger::CallStart,
        end: ledger::CallEnd,
        log: RequestLog,
    ) {
        self.metrics.measured(&start.model, end.usage);
        let shared = self.clone();
        let record = move || {
            let store = &shared.proxy.store;
            let group = start.group.clone();
            let previous = group.as_deref().and_then(|g| match store.last_call(g) {
                Ok(previous) => previous,
                Err(e) => {
                    tracing::warn!(target: "condense::proxy", "cannot read the session's calls: {e}");
                    None
                }
            });
            let record = start.record(end);
            let estimate = condense_sessions::uncompressed_input_usd(&record, previous.as_ref());
            if let (Some(cost), Some(estimate)) = (&record.cost, estimate) {
                shared.metrics.priced(&record.model, cost, estimate);
            }
            log.emit_measured(&record, end.rounds, estimate);
            if let Some(group) = group
                && let Err(e) = store.record_call(&group, &record)
            {
                tracing::warn!(target: "condense::proxy", "cannot record the call: {e}");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(record)),
            Err(_) => record(),
        }
    }

    /// Counts `response` (to a request of `route`) and returns it.
    fn answered(&self, route: &'static str, response: Response) -> Response {
        self.metrics.request(route, response.status().as_u16());
        response
    }

    /// Logs a compaction, and appends it to the events file.
    fn record(&self, event: &compress::Compacted) {
        event.compaction.log();
        self.append(event);
    }

    /// Counts and logs a request whose recalls the proxy answered (`report`
    /// says what it did), and appends them to the events file.
    fn recalled(&self, report: recall::Report) {
        self.metrics.recalled(&report);
        if report.rounds > 0 || report.dropped > 0 {
            #[derive(serde::Serialize)]
            struct Recalled {
                recall: recall::Report,
            }
            self.append(&Recalled { recall: report });
        }
    }

    /// Appends `event` to the events file, if there is one.
    fn append(&self, event: &impl serde::Serialize) {
        if let Some(events) = &self.events {
            let mut events = events.lock().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = events.append(event) {
                tracing::warn!(
                    target: "condense::proxy",
                    "cannot append to {}: {e}",
                    events.path().display()
                );
            }
        }
    }
}

/// One request, start to end.
async fn handle(State(shared): State<Arc<ProxyState>>, request: Request) -> Response {
    let started = Instant::now();
    let at_ms = condense_host::timing::now_ms();
    let (parts, body) = request.into_parts();
    let limit = shared.proxy.max_request_bytes;
    let route = match route::route(&parts, &shared.proxy.routes, &shared.agents) {
        Ok(route) => route,
        Err(refused) => {
            // Read (up to the cap) and dropped first: a client that sends
            // its whole body before it reads the answer would otherwise see
            // the connection closed under it, not the refusal.
            let _ = axum::body::to_bytes(body, limit).await;
            return shared.answered("refused", refused.into_response());
        }
    };
    let route_name = route.format.map_or("forwarded", |f| f.name());
    let body = match read_body(&parts, body, limit).await {
        Ok(body) => body,
        Err(refused) => return shared.answered(route_name, refused),
    };
    // Context edits the client asked of an upstream that does not apply
    // them: applied here, before condense reads the body.
    let (body, applied) = match (route.format, shared.proxy.routes.anthropic_edits) {
        (Some(Format::Anthropic), edits::ContextEdits::Apply) => match edits::apply(&body) {
            Some((edited, applied)) => (Bytes::from(edited), applied),
            None => (body, Vec::new()),
        },
        _ => (body, Vec::new()),
    };
    let condensed = match route.format {
        Some(format) => {
            let agent = &shared.proxy.agents[&route.agent];
            let condensing = Instant::now();
            let asking = agent
                .asks_client
                .then(|| upstream::Upstream::new(&shared.client, &route, &parts));
            let condensed = compress::compress(
                &shared.slots,
                agent,
                shared.proxy.store.clone(),
                format,
                &route,
                body,
                asking,
            )
            .await;
            shared.metrics.condensed(
                &condensed.outcome,
                condensed.price.as_deref(),
                condensing.elapsed(),
            );
            if let compress::Outcome::Compressed {
                compacted: Some(event),
                ..
            } = &condensed.outcome
            {
                shared.record(event);
            }
            if let Some(preparer) = &shared.preparer {
                if let Some(group) = &condensed.group {
                    preparer.seen(group, condensed.stands_on);
                }
                if let Some(job) = condensed.prepare.clone() {
                    let store = shared.proxy.store.clone();
                    preparer.start(job, agent, store, shared.metrics.clone());
                }
            }
            condensed
        }
        None => compress::Condensed::unchanged(body, compress::Outcome::NotCompressed),
    };
    let log = RequestLog {
        method: route.method.to_string(),
        path: route.path.clone(),
        agent: route.agent.clone(),
        condense: condensed.outcome.to_string(),
        body: shared
            .proxy
            .log_bodies
            .then(|| String::from_utf8_lossy(&condensed.body).into_owned()),
        started,
    };
    // The call's end, measured, once its answer has passed: for a route
    // condense compresses, whose log line says it then.
    let mut log = Some(log);
    let ending = route.format.map(|format| {
        let log = log.take().expect("taken once");
        let start = ledger::CallStart {
            group: condensed.group.clone(),
            at_ms,
            agent: route.agent.clone(),
            model: condensed.model.clone().unwrap_or_default(),
            outcome: call_outcome(&condensed.outcome),
            tokens: condensed.tokens.map(|before| match &condensed.outcome {
                compress::Outcome::Compressed { after, .. } => (before, *after),
                _ => (before, before),
            }),
            compaction: match &condensed.outcome {
                compress::Outcome::Compressed {
                    compacted: Some(event),
                    ..
                } => Some(event.compaction.clone()),
                _ => None,
            },
            price: condensed.price.as_deref().cloned(),
        };
        let state = shared.clone();
        let ending = Arc::new(ledger::Ending::new(
            start,
            Box::new(move |start, end| state.call_ended(start, end, log)),
        ));
        (format, ending)
    });
    let (client, body) = (&shared.client, condensed.body);
    let response = match condensed.recall {
        Some(recalling) => {
            let done: recall::Done = {
                let (shared, ending) = (shared.clone(), ending.clone());
                Box::new(move |report| {
                    if let Some((_, ending)) = &ending {
                        ending.answered(report.status, report.recalled, report.rounds);
                    }
                    shared.recalled(report);
                })
            };
            recall::forward(client, &route, parts, body, recalling, done).await
        }
        None => {
            let response = upstream::forward(client, &route, parts, body).await;
            let status = response.status().as_u16();
            if let Some(log) = &log {
                log.emit(status);
            }
            if let Some((_, ending)) = &ending {
                ending.answered(status, 0, 0);
            }
            response
        }
    };
    let response = match applied.is_empty() {
        true => response,
        false => edits::reported(response, applied),
    };
    // The provider's own figures, read as the answer passes.
    let response = match ending {
        Some((format, ending)) => {
            upstream::metered(response, format, Box::new(move |usage| ending.usage(usage)))
        }
        None => response,
    };
    shared.answered(route_name, response)
}

/// What condense did, as a session's record keeps it.
fn call_outcome(outcome: &compress::Outcome) -> condense_sessions::CallOutcome {
    use condense_sessions::CallOutcome;
    match outcome {
        compress::Outcome::Compressed { .. } => CallOutcome::Compressed,
        compress::Outcome::Unchanged => CallOutcome::Unchanged,
        compress::Outcome::NotCompressed => CallOutcome::NotCompressed,
        compress::Outcome::FailedOpen { .. } => CallOutcome::FailedOpen,
    }
}

/// What a request's log line says, written once its answer is complete (a
/// request whose recalls the proxy answers, once they are).
struct RequestLog {
    method: String,
    path: String,
    agent: String,
    condense: String,
    body: Option<String>,
    started: Instant,
}

impl RequestLog {
    /// The line of a request condense does not compress.
    fn emit(&self, status: u16) {
        tracing::info!(
            target: "condense::proxy",
            method = %self.method,
            path = %self.path,
            agent = %self.agent,
            status,
            condense = %self.condense,
            ms = self.started.elapsed().as_millis() as u64,
            body = self.body,
            "request forwarded"
        );
    }

    /// The line of a request condense compresses, once its answer has
    /// passed: what the provider said it used (none: unknown), priced, the
    /// estimate of its input uncompressed, and the recall rounds it took.
    fn emit_measured(
        &self,
        call: &condense_sessions::CallRecord,
        recall_rounds: u32,
        uncompressed_input: Option<f64>,
    ) {
        let usage = call.usage;
        tracing::info!(
            target: "condense::proxy",
            method = %self.method,
            path = %self.path,
            agent = %self.agent,
            status = call.status,
            condense = %self.condense,
            recall_rounds,
            model = %call.model,
            usage = if usage.is_some() { "measured" } else { "unknown" },
            cache_read = usage.map(|u| u.cache_read),
            cache_write = usage.map(|u| u.cache_write),
            uncached = usage.map(|u| u.uncached),
            output = usage.map(|u| u.output),
            cost_usd = call.cost.map(|c| c.usd()),
            uncompressed_input_usd_estimate = uncompressed_input,
            ms = self.started.elapsed().as_millis() as u64,
            body = self.body,
            "request forwarded"
        );
    }
}

/// The request's body, or the proxy's refusal: over the cap (413) —
/// refused before any of it is read when its `Content-Length` says so, so a
/// client that waits for `100 Continue` never sends it — or unreadable (400).
async fn read_body(
    parts: &axum::http::request::Parts,
    body: axum::body::Body,
    limit: usize,
) -> Result<bytes::Bytes, Response> {
    let too_large = || {
        let message = format!("condense proxy: the request body is over {limit} bytes\n");
        (StatusCode::PAYLOAD_TOO_LARGE, message).into_response()
    };
    let declared = parts
        .headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let over = std::error::Error::source(&e)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
        if over {
            return too_large();
        }
        let message = format!("condense proxy: cannot read the request body: {e}\n");
        (StatusCode::BAD_REQUEST, message).into_response()
    })
}
