//! `condense proxy` for the tests and the load bench: in process on a thread
//! of its own ([`RunningProxy`]), or as a process of its own, as users run
//! it ([`ProxyProcess`]); the protocols spoken through it ([`wire`]) and a
//! session whose model recalls ([`session`]); requests compared as the
//! bytes the upstream got ([`raw`]).

pub mod load;
pub mod raw;
pub mod session;
pub mod wire;

use condense_config::ConfigFile;
use condense_host::prepared::Prepared;
use condense_model::SUMMARY_MARKER;
use condense_proxy::{PrepareSettings, Proxy, Routes};
use condense_runtime::model::OpenAiLlm;
use condense_scripted_server::{Recorded, Reply, TestServer};
use condense_sessions::{MemorySessions, SessionStore};
use serde_json::{Value, json};
use std::borrow::Cow;
use std::future::Future;
use std::io::BufRead;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A proxy served on 127.0.0.1 by a thread of its own until dropped.
pub struct RunningProxy {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl RunningProxy {
    /// The proxy with `config` (TOML) in front of `upstream` for both
    /// protocols, its checkpoints in `store`.
    pub fn start(config: &str, upstream: &str, store: Arc<dyn SessionStore>) -> RunningProxy {
        RunningProxy::serve(RunningProxy::settings(config, upstream, store))
    }

    /// [`start`](RunningProxy::start) with the checkpoints in memory.
    pub fn in_memory(config: &str, upstream: &str) -> RunningProxy {
        RunningProxy::start(config, upstream, Arc::new(MemorySessions::default()))
    }

    /// What [`start`](RunningProxy::start) serves, to change before
    /// [`serve`](RunningProxy::serve).
    pub fn settings(config: &str, upstream: &str, store: Arc<dyn SessionStore>) -> Proxy {
        let file = ConfigFile::parse(config).unwrap();
        Proxy {
            agents: condense_proxy::agents(
                Some(&file),
                &condense_embedded::COMPONENTS,
                &|llm| Ok(Arc::new(OpenAiLlm::from_settings(llm)?)),
                None,
            )
            .unwrap(),
            store,
            routes: Routes {
                anthropic_upstream: upstream.to_owned(),
                openai_upstream: upstream.to_owned(),
                token: None,
                anthropic_edits: Default::default(),
            },
            max_request_bytes: 64 << 20,
            compress_slots: 2,
            log_bodies: false,
            events: None,
            sessions_view: condense_proxy::guard::Access::Loopback,
            allowed_hosts: Vec::new(),
            prepare: None,
        }
    }

    /// [`start`](RunningProxy::start) preparing summaries ahead (two jobs
    /// at once), kept in memory and in `store`; a compaction waits up to
    /// `wait` for its summary's job.
    pub fn preparing(
        config: &str,
        upstream: &str,
        store: Arc<dyn SessionStore>,
        wait: std::time::Duration,
    ) -> RunningProxy {
        let proxy = RunningProxy::settings(config, upstream, store.clone());
        let prepared = Arc::new(Prepared::new(wait, Some(store)).without_waiting());
        RunningProxy::preparing_with(proxy, config, prepared)
    }

    /// [`preparing`](RunningProxy::preparing) with `proxy` as
    /// [`settings`](RunningProxy::settings) gave it (then changed), its
    /// summaries kept in `prepared`.
    pub fn preparing_with(mut proxy: Proxy, config: &str, prepared: Arc<Prepared>) -> RunningProxy {
        let file = ConfigFile::parse(config).unwrap();
        proxy.agents = condense_proxy::agents(
            Some(&file),
            &condense_embedded::COMPONENTS,
            &|llm| Ok(Arc::new(OpenAiLlm::from_settings(llm)?)),
            Some(&prepared),
        )
        .unwrap();
        proxy.prepare = Some(PrepareSettings {
            jobs: 2,
            quiet: std::time::Duration::from_secs(600),
        });
        RunningProxy::serve(proxy)
    }

    /// Serves `proxy` on 127.0.0.1 from a thread of its own; dropping it
    /// shuts the proxy down gracefully (requests in flight are finished).
    pub fn serve(proxy: Proxy) -> RunningProxy {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (addr, thread) = serve_on_a_thread(move |listener| async move {
            condense_proxy::serve(listener, proxy, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        RunningProxy {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for RunningProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The text a proxy serves at `url` (its `/metrics`).
pub fn scrape(url: &str) -> String {
    let mut answer = ureq::get(url).call().expect("the proxy serves /metrics");
    answer.body_mut().read_to_string().unwrap()
}

/// The value of the sample `name` (with its labels) in a `/metrics` text.
/// A labelled sample that never moved is not written, but its family is (its
/// `# TYPE` line): that is 0. Any other absence panics naming the metric, so
/// a metric renamed or never registered fails the test that reads it instead
/// of reading as a counter that never moved.
pub fn metric(text: &str, name: &str) -> f64 {
    let sample = text
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '));
    if let Some(value) = sample {
        return value
            .parse()
            .unwrap_or_else(|e| panic!("{name} {value}: {e}"));
    }
    let Some((unlabelled, _)) = name.split_once('{') else {
        panic!("no {name} in /metrics:\n{text}")
    };
    // A counter's family is named without its `_total`.
    let family = unlabelled.strip_suffix("_total").unwrap_or(unlabelled);
    let registered = text.lines().any(|l| {
        l.strip_prefix("# TYPE ")
            .and_then(|t| t.strip_prefix(family))
            .is_some_and(|t| t.starts_with(' '))
    });
    assert!(
        registered,
        "no {name}, nor its family {family}, in /metrics:\n{text}"
    );
    0.0
}

/// Runs `serve` on a listener bound to 127.0.0.1 (a free port), on a tokio
/// runtime of its own thread: a server of the test's, until `serve` ends.
pub fn serve_on_a_thread<F, S>(serve: S) -> (SocketAddr, JoinHandle<()>)
where
    S: FnOnce(tokio::net::TcpListener) -> F + Send + 'static,
    F: Future<Output = ()>,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            serve(listener).await;
        });
    });
    (addr, thread)
}

/// The arguments of `condense proxy` in front of `upstream` (both
/// protocols), with the config file `config`, on a free loopback port, then
/// `more`.
pub fn proxy_args(config: &Path, upstream: &str, more: &[&str]) -> Vec<String> {
    let config = config.display().to_string();
    ["--config", &config, "--listen", "127.0.0.1:0"]
        .into_iter()
        .chain([
            "--anthropic-upstream",
            upstream,
            "--openai-upstream",
            upstream,
        ])
        .chain(more.iter().copied())
        .map(String::from)
        .collect()
}

/// `condense proxy ARGS` in a process of its own, as users run it: the
/// `condense` binary (the CLI's tests and benches have its path in
/// `CARGO_BIN_EXE_condense`).
pub struct ProxyProcess {
    child: Child,
    addr: String,
    /// What it logs (stderr), read as it comes so it never blocks.
    log: Option<JoinHandle<String>>,
}

impl ProxyProcess {
    pub fn start(condense: &Path, args: &[String]) -> ProxyProcess {
        ProxyProcess::start_with(condense, args, &[])
    }

    /// [`start`](ProxyProcess::start) with the environment variables `env`
    /// set (tokens, `CONDENSE_LOG`).
    pub fn start_with(condense: &Path, args: &[String], env: &[(&str, &str)]) -> ProxyProcess {
        let mut child = Command::new(condense)
            .arg("proxy")
            .args(args)
            .env_remove("CONDENSE_LOG")
            .env_remove("CONDENSE_LOG_FORMAT")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the proxy process starts");
        let mut stderr = child.stderr.take().unwrap();
        let log = std::thread::spawn(move || {
            let mut log = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut log);
            log
        });
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let addr = stdout
            .lines()
            .map_while(Result::ok)
            .find_map(|line| {
                let rest = line.strip_prefix("condense proxy listening on http://")?;
                Some(rest.split(' ').next()?.to_owned())
            })
            .expect("the proxy process says where it listens");
        ProxyProcess {
            child,
            addr,
            log: Some(log),
        }
    }

    /// `http://ADDR{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `kill -9`: no shutdown, nothing flushed. Returns what it logged.
    pub fn kill(mut self) -> String {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.log.take().unwrap().join().unwrap()
    }
}

impl Drop for ProxyProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Anthropic request body of the corpus (`anthropic/NAME.request.json`).
pub fn corpus_body(name: &str) -> Value {
    let path = crate::corpus_dir()
        .join("anthropic")
        .join(format!("{name}.request.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The client's API key in every request the tests send through a proxy.
pub const KEY: &str = "sk-ant-test-0123456789";

/// The group the proxy keeps the session `name` of agent `default` in, as
/// the tests' client ([`KEY`], its tenant) names it.
pub fn named_group(name: &str) -> String {
    let mut headers = ureq::http::HeaderMap::new();
    headers.insert("x-api-key", KEY.parse().unwrap());
    let tenant = condense_proxy::route::tenant_of(&headers).expect("a key is a tenant");
    format!("default/{tenant}/session/{name}")
}

/// The requests of corpus session `name`, call by call (the one before each
/// assistant message), as its client would send them.
pub fn session_calls(name: &str) -> Vec<Value> {
    let body = corpus_body(name);
    let messages = body["messages"].as_array().unwrap();
    (1..messages.len())
        .filter(|&k| messages[k]["role"] == "assistant")
        .map(|k| {
            json!({
                "model": "claude-opus-4",
                "max_tokens": 1000,
                "system": body["system"],
                "messages": messages[..k],
            })
        })
        .collect()
}

/// Posts an Anthropic request with `headers` and reads its answer to the
/// end, as a client does (one that went away before the end would leave
/// the proxy's measure of the call unknown); the answer's status.
pub fn post(client: &ureq::Agent, url: &str, body: &Value, headers: &[(&str, &str)]) -> u16 {
    let mut request = client
        .post(url)
        .header("x-api-key", KEY)
        .header("anthropic-version", "2023-06-01");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut answer = request.send(body.to_string()).unwrap();
    answer.body_mut().read_to_vec().unwrap();
    answer.status().as_u16()
}

/// What the upstream receives for `calls` sent through one proxy with the
/// checkpoints in memory: the reference the other setups must match.
pub fn through_one_proxy(config: &str, calls: &[Value]) -> Vec<Recorded> {
    let upstream = TestServer::answering(|_| Reply::json(200, r#"{"content": []}"#));
    let proxy = RunningProxy::in_memory(config, &upstream.url(""));
    let client = ureq::Agent::new_with_defaults();
    for call in calls {
        assert_eq!(post(&client, &proxy.url("/v1/messages"), call, &[]), 200);
    }
    upstream.requests()
}

/// The config of the session tests: compaction at 40k tokens.
pub const SESSION_CONFIG: &str = "token_threshold = 40000\n";

/// A request body as the upstream got it, compared byte for byte: a
/// provider caches the prompt as rendered, so a key moved is a cache break
/// that `Value`'s equality (the same keys, in any order) would not see.
pub trait SentBody {
    fn bytes(&self) -> Cow<'_, [u8]>;
}

impl SentBody for Recorded {
    fn bytes(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.raw)
    }
}

impl SentBody for Vec<u8> {
    fn bytes(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self)
    }
}

/// A body parsed already: written out again, its keys in the order they
/// came (the workspace's `serde_json` preserves it), so a key moved still
/// shows; its whitespace and escapes are lost (a [`Recorded`] keeps them).
impl SentBody for Value {
    fn bytes(&self) -> Cow<'_, [u8]> {
        Cow::Owned(serde_json::to_vec(self).unwrap())
    }
}

/// How many of `bodies` carry condense's summary.
pub fn compacted<B: SentBody>(bodies: &[B]) -> usize {
    let marker = SUMMARY_MARKER.as_bytes();
    bodies
        .iter()
        .filter(|b| b.bytes().windows(marker.len()).any(|w| w == marker))
        .count()
}

/// `got` is `reference`, request for request, byte for byte; `what` says
/// what `got` is.
pub fn assert_as_reference<B: SentBody>(reference: &[B], got: &[B], what: &str) {
    assert_eq!(got.len(), reference.len(), "{what}");
    for (i, (a, b)) in reference.iter().zip(got).enumerate() {
        if let Some(difference) = raw::first_difference(&a.bytes(), &b.bytes()) {
            panic!("call {i}: {what} differs {difference}");
        }
    }
}

/// Whether Anthropic request `now`, as the upstream got it, starts with the
/// whole of `before`, byte for byte (a prompt-cache hit): its messages
/// continue `before`'s and nothing else moved.
pub fn continues(before: &Recorded, now: &Recorded) -> bool {
    raw::continues(&before.raw, &now.raw, "messages")
}

/// A `redis-server` of the test's own on 127.0.0.1, stopped when dropped.
pub struct RedisServer {
    child: std::process::Child,
    pub url: String,
    _dir: tempfile::TempDir,
}

impl RedisServer {
    /// `None` (the test then passes saying so) when there is no
    /// redis-server, unless `CONDENSE_REQUIRE_REDIS=1` (CI).
    pub fn start() -> Option<RedisServer> {
        let found = Command::new("redis-server").arg("--version").output();
        if !found.is_ok_and(|o| o.status.success()) {
            assert!(
                std::env::var("CONDENSE_REQUIRE_REDIS").as_deref() != Ok("1"),
                "CONDENSE_REQUIRE_REDIS=1, but there is no redis-server"
            );
            crate::skipped("no redis-server (apt-get install redis-server)");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let server = RedisServer {
            child,
            url: format!("redis://127.0.0.1:{port}"),
            _dir: dir,
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "redis-server did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Some(server)
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// condense's estimate of a request body's tokens (its messages, system
/// included, and its tools), as the proxy's threshold counts them.
pub fn request_tokens(body: &Value) -> u32 {
    let parsed = condense_host::body::parse_body(body.to_string().as_bytes(), None).unwrap();
    let messages: u32 = condense_model::tokens::estimate_messages(parsed.messages())
        .iter()
        .sum();
    messages + condense_host::body::tools_tokens(parsed.body())
}

/// Corpus session `name` (`tests/corpus/sessions`) in `format`: its system
/// messages' text (for a top-level `system` or `instructions`) and the rest
/// as entries of the format's list, as condense renders messages.
pub fn rendered_session(
    name: &str,
    format: condense_host::formats::Format,
) -> (String, Vec<Value>) {
    let recorded = crate::session(name);
    let start = (recorded.iter())
        .take_while(|m| m.role == condense_model::Role::System)
        .count();
    let system = recorded[..start]
        .iter()
        .map(crate::survival::message_text)
        .collect();
    let list = condense_host::formats::render_messages(format, &recorded[start..]);
    (system, list)
}

/// Corpus session `name` (`tests/corpus/sessions`) as its client would have
/// sent it to Anthropic, call by call (the request before each assistant
/// message), and the history those requests are prefixes of, as condense
/// reads it: what a replay of the same session replays.
pub fn anthropic_session(name: &str) -> (Vec<Value>, Vec<condense_model::Message>) {
    let (system, messages) = rendered_session(name, condense_host::formats::Format::Anthropic);
    let body = |messages: &[Value]| {
        json!({
            "model": "claude-opus-4",
            "max_tokens": 1000,
            "system": system,
            "messages": messages,
        })
    };
    let history = condense_host::body::parse_body(body(&messages).to_string().as_bytes(), None)
        .unwrap()
        .messages()
        .to_vec();
    let calls = (1..messages.len())
        .filter(|&k| messages[k]["role"] == "assistant")
        .map(|k| body(&messages[..k]))
        .collect();
    (calls, history)
}

/// Output tokens of each answer of [`billing_upstream`].
pub const BILLED_OUTPUT: u64 = 50;

/// A stand-in for Anthropic's Messages API that bills as its prompt cache
/// does, for one session at a time: of each request, the messages that
/// repeat the whole request before it are a cache read, the rest a cache
/// write (no uncached input), counted with condense's estimate of their
/// tokens — the prompt-cache model the replay prices (`CacheMeter`), so that
/// what the proxy measures can be held to the replay's figure. Each answer
/// is a short text of [`BILLED_OUTPUT`] tokens with that usage.
pub fn billing_upstream() -> TestServer {
    let mut previous: Option<(Value, Vec<condense_model::Message>)> = None;
    TestServer::answering(move |request| {
        let parsed = condense_host::body::parse_body(&request.raw, None).unwrap();
        let messages = parsed.messages().to_vec();
        // The prompt's order: tools, system, messages. Its tools (the
        // recall tool condense adds) are part of the prefix.
        let tools = request.body.get("tools").cloned().unwrap_or_default();
        let mut tokens = vec![condense_host::body::tools_tokens(parsed.body())];
        tokens.extend(condense_model::tokens::estimate_messages(&messages));
        let cached = match &previous {
            Some((t, p))
                if *t == tools && messages.len() >= p.len() && messages[..p.len()] == p[..] =>
            {
                p.len() + 1
            }
            _ => 0,
        };
        let sum = |t: &[u32]| t.iter().map(|&t| u64::from(t)).sum::<u64>();
        let answer = json!({
            "id": "msg_billed",
            "type": "message",
            "role": "assistant",
            "model": request.body["model"],
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "usage": {
                "input_tokens": 0,
                "cache_read_input_tokens": sum(&tokens[..cached]),
                "cache_creation_input_tokens": sum(&tokens[cached..]),
                "output_tokens": BILLED_OUTPUT,
            },
        });
        previous = Some((tools, messages));
        Reply::json(200, answer.to_string())
    })
}

/// Session `group`'s view (`GET /sessions/…`) once it has `calls` calls:
/// a call is recorded once its answer has passed.
pub fn wait_for_calls(proxy: &RunningProxy, group: &str, calls: usize) -> Value {
    // A client names its session with any characters: percent-encoded.
    let path = condense_proxy::page::session_href(group).replacen("/ui", "", 1);
    let url = proxy.url(&path);
    for _ in 0..200 {
        if let Ok(mut answer) = ureq::get(&url).call() {
            let text = answer.body_mut().read_to_string().unwrap();
            let view: Value = serde_json::from_str(&text).unwrap();
            if view["calls"].as_array().map_or(0, Vec::len) >= calls {
                return view;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("session {group} never had {calls} calls recorded");
}

/// The operator page at `path`, as served (its headers checked: nothing
/// runs on it).
pub fn page_of(proxy: &RunningProxy, path: &str) -> String {
    let mut answer = ureq::get(&proxy.url(path)).call().unwrap();
    let headers = answer.headers();
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    let policy = headers["content-security-policy"].to_str().unwrap();
    assert!(policy.starts_with("default-src 'none'"), "{policy}");
    answer.body_mut().read_to_string().unwrap()
}

/// The value of tile `name` on an operator page (`data-tile`), as shown.
pub fn tile(page: &str, name: &str) -> String {
    let at = page
        .find(&format!("data-tile=\"{name}\""))
        .unwrap_or_else(|| panic!("no tile {name} in\n{page}"));
    let value = &page[at..];
    let start = value
        .find("<div class=\"value\">")
        .expect("a tile has a value")
        + "<div class=\"value\">".len();
    let end = value[start..].find("</div>").expect("a value ends");
    value[start..start + end].to_owned()
}

/// Waits until the sessions a proxy lists at `sessions_url` (`GET
/// /sessions`) hold `calls` calls in all: a call is recorded, and its log
/// line written, once its answer has passed, a moment after the client got
/// it.
pub fn wait_recorded(sessions_url: &str, calls: u64) {
    let mut listed = 0;
    for _ in 0..400 {
        let mut answer = ureq::get(sessions_url).call().unwrap();
        let list: Value =
            serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap();
        listed = (list.as_array().unwrap().iter())
            .map(|s| s["figures"]["calls"].as_u64().unwrap())
            .sum();
        if listed >= calls {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("{listed} calls recorded, not {calls}");
}

/// A 200 `text/event-stream` answer of `events`, each named by its `type`.
pub fn sse(events: &[Value]) -> Reply {
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    Reply::Answer {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        body,
    }
}
