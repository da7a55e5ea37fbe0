//! `condense proxy`: the proxy crate assembled from the command line and the
//! config file. The file's top-level settings are agent `default`, each
//! `[agents.NAME]` table an agent of its own (selected by `/agents/NAME/…`
//! or `x-condense-agent: NAME`); the checkpoints of every session are kept in
//! an embedded database in the state directory, so a restarted proxy goes on
//! where it stopped.

use anyhow::{Context, Result, bail};
use clap::Args;
use condense_config::ConfigFile;
use condense_host::prepared::Prepared;
use condense_proxy::edits::ContextEdits;
use condense_proxy::guard::{Access, AllowedHosts};
use condense_proxy::{DEFAULT_AGENT, PrepareSettings, Proxy, Routes};
use condense_sessions::{DbSessions, RedisSessions, SessionStore};
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What `condense proxy` was asked for.
#[derive(Clone, Debug)]
pub struct ProxyRun {
    pub listen: SocketAddr,
    pub allow_remote: bool,
    /// Host names requests may be sent to besides the loopback names and
    /// the listen address.
    pub allowed_hosts: Vec<String>,
    pub anthropic_upstream: String,
    pub openai_upstream: String,
    /// Who applies `context_management` edits.
    pub context_management: ContextManagement,
    /// Where the checkpoints are kept (`None`: the user's state directory).
    pub state_dir: Option<PathBuf>,
    /// A Redis server to keep them in instead (`redis://…`).
    pub store: Option<String>,
    /// The environment variable holding the proxy's own token.
    pub token_env: Option<String>,
    /// The environment variable holding the operator's token, for the
    /// sessions view.
    pub operator_token_env: Option<String>,
    /// Log what each compressed request is sent upstream with.
    pub log_bodies: bool,
    /// Append each compaction to this file as a JSON line.
    pub events: Option<PathBuf>,
    /// Background jobs preparing summaries ahead at once (0: none).
    pub prepare_jobs: usize,
    /// The longest a compaction waits for its summary's job.
    pub prepare_wait_ms: u64,
    /// A job whose session sent nothing this long is dropped.
    pub prepare_quiet: u64,
}

/// The state directory when none is given: `$XDG_STATE_HOME/condense`, else
/// `~/.local/state/condense`.
fn default_state_dir() -> Result<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("XDG_STATE_HOME") {
        return Ok(PathBuf::from(dir).join("condense"));
    }
    match var("HOME") {
        Some(home) => Ok(PathBuf::from(home).join(".local/state/condense")),
        None => bail!("no HOME to keep the checkpoints under: give --state-dir DIR"),
    }
}

/// The checkpoint store `--state-dir` or `--store` name, and where it keeps
/// them (for the first line). A Redis server that is down now is a warning,
/// not an error: the proxy forwards requests unchanged until it is up.
/// `create`: make the state directory and its database if they are not
/// there (the proxy); else a missing one is an error (a view of it).
pub(crate) fn session_store(
    state_dir: Option<&Path>,
    url: Option<&str>,
    create: bool,
) -> Result<(Arc<dyn SessionStore>, String)> {
    if let Some(url) = url {
        // Not echoed: a URL may carry a password.
        if url.starts_with("rediss://") {
            bail!(
                "--store: rediss:// (TLS) is not built into condense; reach the server through a \
                 TLS tunnel (stunnel, a sidecar) with a redis:// URL"
            );
        }
        if !url.starts_with("redis://") {
            bail!("--store: not a redis:// URL");
        }
        let redis = RedisSessions::open(url).context("--store")?;
        if let Err(e) = redis.ping() {
            tracing::warn!(
                target: "condense::proxy",
                "{e}: requests are forwarded unchanged until the server answers"
            );
        }
        let kept_in = redis.server().to_owned();
        return Ok((Arc::new(redis), kept_in));
    }
    let state_dir = match state_dir {
        Some(dir) => dir.to_owned(),
        None => default_state_dir()?,
    };
    let file = state_dir.join("checkpoints.redb");
    if create {
        std::fs::create_dir_all(&state_dir)
            .with_context(|| format!("--state-dir {}", state_dir.display()))?;
    } else if !file.exists() {
        bail!(
            "--state-dir {}: no checkpoints there (the proxy keeps them in {})",
            state_dir.display(),
            file.display()
        );
    }
    let db =
        DbSessions::open(&file).with_context(|| format!("--state-dir {}", state_dir.display()))?;
    Ok((Arc::new(db), state_dir.display().to_string()))
}

/// Checks everything, then serves until interrupted (Ctrl-C or SIGTERM),
/// finishing the requests in flight. Prints one line when it listens.
pub fn run(file: Option<&ConfigFile>, run: &ProxyRun, out: &mut dyn Write) -> Result<()> {
    if !run.listen.ip().is_loopback() && !run.allow_remote {
        bail!(
            "--listen {}: not a loopback address; the proxy forwards its clients' API keys, \
             so serving other machines takes --allow-remote (and a --token-env)",
            run.listen
        );
    }
    let secret = |flag: &str, var: &Option<String>| -> Result<Option<String>> {
        var.as_ref()
            .map(|var| {
                std::env::var(var)
                    .ok()
                    .filter(|t| !t.is_empty())
                    .with_context(|| format!("{flag} {var}: the variable is unset or empty"))
            })
            .transpose()
    };
    let token = secret("--token-env", &run.token_env)?;
    let operator = secret("--operator-token-env", &run.operator_token_env)?;
    if token.is_some() && token == operator {
        bail!("--operator-token-env: the operator's token must not be the clients' (--token-env)");
    }
    AllowedHosts::new(run.listen, &run.allowed_hosts).context("--allowed-host")?;
    let sessions_view = Access::of(run.listen, token.is_some(), operator);
    let page_access = sessions_view.clone();
    for warning in warnings(run.listen, token.is_some(), &run.allowed_hosts) {
        tracing::warn!(target: "condense::proxy", "{warning}");
        writeln!(out, "{warning}")?;
    }
    for (flag, url) in [
        ("--anthropic-upstream", &run.anthropic_upstream),
        ("--openai-upstream", &run.openai_upstream),
    ] {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            bail!("{flag} {url}: not an http:// or https:// URL");
        }
    }
    let (store, kept_in) = session_store(run.state_dir.as_deref(), run.store.as_deref(), true)?;
    // Summaries prepared ahead are kept beside the checkpoints: in Redis,
    // every proxy behind it uses the ones any of them prepared.
    let prepare = (run.prepare_jobs > 0).then(|| PrepareSettings {
        jobs: run.prepare_jobs,
        quiet: Duration::from_secs(run.prepare_quiet),
    });
    let prepared = prepare.map(|_| {
        Arc::new(
            Prepared::new(
                Duration::from_millis(run.prepare_wait_ms),
                Some(store.clone()),
            )
            .without_waiting(),
        )
    });
    let agents = condense_proxy::agents(
        file,
        &condense_embedded::COMPONENTS,
        &|llm| crate::components::client(llm, None),
        prepared.as_ref(),
    )?;
    // The cap of agent `default`, the file's top level: the proxy reads a
    // body before it knows whose it is.
    let max_request_bytes = agents[DEFAULT_AGENT].middleware.max_request_bytes();
    let proxy = Proxy {
        agents,
        store,
        routes: Routes {
            anthropic_upstream: run.anthropic_upstream.clone(),
            openai_upstream: run.openai_upstream.clone(),
            token,
            anthropic_edits: run.context_management.of(&run.anthropic_upstream),
        },
        max_request_bytes,
        compress_slots: std::thread::available_parallelism().map_or(2, |n| n.get()),
        log_bodies: run.log_bodies,
        events: crate::session::events_log(run.events.as_deref())?,
        sessions_view,
        allowed_hosts: run.allowed_hosts.clone(),
        prepare,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the proxy's runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(run.listen)
            .await
            .with_context(|| format!("--listen {}", run.listen))?;
        let addr = listener.local_addr()?;
        let page = match &page_access {
            Access::Off(_) => "off, without --operator-token-env".to_owned(),
            _ => format!("http://{addr}/ui"),
        };
        writeln!(
            out,
            "condense proxy listening on http://{addr} (Anthropic → {}, OpenAI → {}; \
             checkpoints in {kept_in}; operator page {page})",
            run.anthropic_upstream, run.openai_upstream,
        )?;
        out.flush()?;
        condense_proxy::serve(listener, proxy, interrupted())
            .await
            .context("the proxy stopped")
    })
}

/// What a proxy listening on `listen` must warn of: serving other machines
/// without a clients' token, it is an open relay; answering to any host
/// name, any web page can reach it by rebinding its name to it.
fn warnings(listen: SocketAddr, clients_token: bool, allowed_hosts: &[String]) -> Vec<String> {
    let mut warnings = Vec::new();
    if !listen.ip().is_loopback() && !clients_token {
        warnings.push(format!(
            "WARNING: condense proxy on {listen} asks no token (--token-env): it is an open \
             relay, and any machine that reaches it sends requests upstream through it"
        ));
    }
    if allowed_hosts.iter().any(|h| h == "*") {
        warnings.push(
            "WARNING: --allowed-host '*': the proxy answers requests sent to any host name, so \
             a web page can reach it by pointing a name of its own at this machine (DNS \
             rebinding); name the hosts instead"
                .to_owned(),
        );
    }
    warnings
}

/// Completes on Ctrl-C or SIGTERM.
async fn interrupted() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}

#[derive(Args)]
pub struct ProxyArgs {
    /// TOML config: the fold settings (top level: agent `default`) and [agents.NAME]
    /// tables, as for the other commands.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Address to serve on. Only loopback addresses unless --allow-remote.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787")]
    pub listen: std::net::SocketAddr,
    /// Serve on a non-loopback --listen address (other machines' clients send their API
    /// keys through it: set --token-env too).
    #[arg(long)]
    pub allow_remote: bool,
    /// A host name clients reach the proxy by, besides localhost, loopback addresses and the
    /// --listen address (which it always answers to; listening on 0.0.0.0, any IP address).
    /// A request sent to any other name is refused (403): a web page that points a name of
    /// its own at this machine (DNS rebinding) cannot reach the proxy. Repeat for more
    /// names; `*.corp.example` allows its subdomains.
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// Where Anthropic requests go.
    #[arg(long, value_name = "URL", default_value = "https://api.anthropic.com")]
    pub anthropic_upstream: String,
    /// Where OpenAI requests go.
    #[arg(long, value_name = "URL", default_value = "https://api.openai.com")]
    pub openai_upstream: String,
    /// Who applies an Anthropic request's `context_management` edits (clearing old tool
    /// results, old thinking): `forward` sends them on for the upstream to apply; `apply`
    /// applies them here, cache-safe, removes the field and tells the client what was
    /// applied, as the API does — for an upstream that lacks them (a gateway, another
    /// provider's Anthropic-compatible API). `auto`: forward to Anthropic's own API,
    /// apply for any other upstream.
    #[arg(long, value_name = "WHO", default_value = "auto")]
    pub context_management: ContextManagement,
    /// Directory of the checkpoint database. Default: $XDG_STATE_HOME/condense, else
    /// ~/.local/state/condense.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Keep the checkpoints in a Redis or Valkey server instead (redis://[:PASSWORD@]HOST[:PORT][/DB]),
    /// shared by every proxy given the same URL. While it cannot be reached, requests are
    /// forwarded unchanged.
    #[arg(long, value_name = "URL", conflicts_with = "state_dir")]
    pub store: Option<String>,
    /// Environment variable holding a token clients must send as `Proxy-Authorization:
    /// Bearer TOKEN` (their own Authorization header is the provider's).
    #[arg(long, value_name = "VAR")]
    pub token_env: Option<String>,
    /// Environment variable holding the operator's token: GET /sessions and the page GET /ui
    /// (what the store holds, the users' summaries included) then answer only requests that
    /// send it as `x-condense-operator-token: TOKEN`, or a browser's Basic login with it as
    /// the password. Unset: they answer only when the proxy
    /// listens on a loopback address and asks its clients for no token (--token-env), and
    /// never a web page of another site.
    #[arg(long, value_name = "VAR")]
    pub operator_token_env: Option<String>,
    /// Log the body each compressed request is sent upstream with (your users' words and
    /// their tools' output). Headers, API keys among them, are never logged.
    #[arg(long)]
    pub log_bodies: bool,
    /// Append each compaction (agent, session, tokens before/after, messages folded,
    /// passes, summarizer, time) to FILE as a JSON line. They are logged too.
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// Summaries prepared ahead: background jobs at once (0: none; every compaction then
    /// waits for its summary). A job mostly waits for the summarizer's model. Once a session passes the compressor's soft mark
    /// (`prepare_at_permille`), its next compaction's summary is written in the background,
    /// so the request that compacts does not wait for the summarizer.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub prepare_jobs: usize,
    /// The longest a compacting request waits for its summary's background job, in
    /// milliseconds. Past it (or with no summary prepared), the chain's last summarizer
    /// writes the summary at once and the model's is written in the background, to be
    /// continued by the next compaction: no call waits for a model's summary.
    #[arg(long, value_name = "MS", default_value_t = 10)]
    pub prepare_wait_ms: u64,
    /// A background job whose session sent nothing for this many seconds when its turn
    /// comes is dropped.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub prepare_quiet: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxy_warns_when_it_is_an_open_relay_or_answers_to_any_host() {
        let local: SocketAddr = "127.0.0.1:8787".parse().unwrap();
        let remote: SocketAddr = "0.0.0.0:8787".parse().unwrap();
        assert!(warnings(local, false, &[]).is_empty());
        assert!(warnings(remote, true, &["proxy.internal".into()]).is_empty());
        let open = warnings(remote, false, &[]);
        assert!(
            open.len() == 1 && open[0].contains("open relay"),
            "{open:?}"
        );
        let any = warnings(local, false, &["*".into()]);
        assert!(
            any.len() == 1 && any[0].contains("DNS rebinding"),
            "{any:?}"
        );
    }
}

/// `--context-management`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ContextManagement {
    Auto,
    Forward,
    Apply,
}

impl ContextManagement {
    /// What it means for an Anthropic upstream at `url`: Anthropic's own API
    /// applies the edits itself.
    pub fn of(self, url: &str) -> ContextEdits {
        let own = url.trim_end_matches('/') == "https://api.anthropic.com";
        match self {
            ContextManagement::Forward => ContextEdits::Forward,
            ContextManagement::Apply => ContextEdits::Apply,
            ContextManagement::Auto if own => ContextEdits::Forward,
            ContextManagement::Auto => ContextEdits::Apply,
        }
    }
}
