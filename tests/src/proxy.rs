//! `condense proxy` for the tests and the load bench: in process on a thread
//! of its own ([`RunningProxy`]), or as a process of its own, as users run
//! it ([`ProxyProcess`]).

use condense_config::ConfigFile;
use condense_host::sessions::{MemorySessions, SessionStore};
use condense_proxy::{Proxy, Routes};
use std::ffi::OsString;
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
            agents: condense_cli::proxy::agents(Some(&file)).unwrap(),
            store,
            routes: Routes {
                anthropic_upstream: upstream.to_owned(),
                openai_upstream: upstream.to_owned(),
                token: None,
            },
            max_request_bytes: 64 << 20,
            compress_slots: 2,
            input_price: condense_proxy::DEFAULT_INPUT_PRICE,
            log_bodies: false,
            events: None,
        }
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

/// The environment variable that makes a process started by
/// [`ProxyProcess`] serve: the arguments of `condense proxy`, one per line.
pub const PROXY_ARGS: &str = "CONDENSE_TEST_PROXY_ARGS";

/// Serves `condense proxy` with the arguments in [`PROXY_ARGS`], if set, as
/// the `condense` binary does (its logging included); returns when it
/// stops. `false` when the variable is unset: this process is not one that
/// [`ProxyProcess`] started.
pub fn serve_if_asked() -> bool {
    let Ok(args) = std::env::var(PROXY_ARGS) else {
        return false;
    };
    condense_cli::logging::install(Some("proxy"));
    let argv = ["condense", "proxy"]
        .into_iter()
        .map(String::from)
        .chain(args.lines().map(String::from))
        .map(OsString::from);
    condense_cli::cli::run(argv, &mut std::io::empty(), &mut std::io::stdout()).unwrap();
    true
}

/// `condense proxy` in a process of its own: `command` (a test or bench
/// binary whose entry calls [`serve_if_asked`]) run with [`PROXY_ARGS`].
pub struct ProxyProcess {
    child: Child,
    addr: String,
    /// What it logs (stderr), read as it comes so it never blocks.
    log: Option<JoinHandle<String>>,
}

impl ProxyProcess {
    pub fn start(mut command: Command, args: &[String]) -> ProxyProcess {
        let mut child = command
            .env(PROXY_ARGS, args.join("\n"))
            .env_remove("CONDENSE_LOG")
            .env_remove("CONDENSE_LOG_FORMAT")
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
