//! The request to the provider and its answer, streamed back.
//!
//! The client's headers go upstream as they came — its `Authorization` or
//! `x-api-key` among them, which the proxy never logs or stores — except
//! the hop-by-hop ones (RFC 9110 §7.6.1), `Host` and `Content-Length`
//! (both follow the request actually sent) and the proxy's own
//! (`x-condense-*`, `Proxy-Authorization`). The answer's status and headers
//! come back the same way, and its body chunk by chunk as the upstream
//! sends it: an SSE stream reaches the client event by event, byte for byte.
//! Redirects are the client's to follow.
//!
//! The client is ureq's, blocking, on tokio's blocking pool: the one HTTP
//! client of the project (the runtime's model clients use it), with rustls.
//! [`Upstream`] is one client request's upstream, its headers filtered
//! once: [`forward`] sends through it once, the recall loop
//! ([`crate::recall`]) once per round.

use crate::route::{CREDENTIAL_HEADERS, Route};
use axum::body::Body;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use condense_host::formats::Format;
use condense_host::formats::usage::{Usage, UsageReader};
use std::io::Read;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Headers that are about one connection, not the message (and so are
/// never forwarded), plus those the proxy sets or consumes itself.
const NOT_FORWARDED: [&str; 12] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
    "expect",
];

/// Chunks of the answer in flight between the reading thread and the
/// client: a slow client makes the reader wait (backpressure), not buffer.
const CHUNKS_IN_FLIGHT: usize = 16;

/// The client every request goes through: its connections are pooled.
pub fn client() -> ureq::Agent {
    ureq::Agent::config_builder()
        // An error status is the provider's answer, for the client.
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_connect(Some(Duration::from_secs(10)))
        // The client's own User-Agent and Accept go upstream (forwarded).
        .user_agent("")
        .accept("")
        .build()
        .into()
}

/// Whether header `name` goes on (either way).
fn forwarded(name: &HeaderName) -> bool {
    let name = name.as_str();
    !NOT_FORWARDED.contains(&name) && !name.starts_with("x-condense-")
}

/// `headers` without the ones that do not go on, and without those the
/// `Connection` header names.
fn filter(headers: &HeaderMap) -> HeaderMap {
    let listed: Vec<String> = headers
        .get_all("connection")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|n| n.trim().to_ascii_lowercase())
        .collect();
    headers
        .iter()
        .filter(|(name, _)| forwarded(name) && !listed.iter().any(|l| l == name.as_str()))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

/// Where one client request goes, and with which headers: the client's,
/// filtered once, for every upstream call the request takes.
pub struct Upstream {
    client: ureq::Agent,
    method: Method,
    url: String,
    headers: HeaderMap,
}

/// The head of an upstream's answer, and its body as it arrives.
pub struct Answer {
    pub head: ureq::http::response::Parts,
    pub chunks: Chunks,
}

/// The chunks of an answer's body, as the reading thread hands them over.
pub type Chunks = mpsc::Receiver<Result<Bytes, std::io::Error>>;

/// An upstream that could not be reached (or a request that could not be
/// built): the proxy's own answer, a 502 saying so.
#[derive(Debug)]
pub struct Unreachable {
    pub url: String,
    pub why: String,
}

impl Upstream {
    /// The upstream of `route`, sent the client's headers of `parts`.
    pub fn new(client: &ureq::Agent, route: &Route, parts: &Parts) -> Upstream {
        Upstream {
            client: client.clone(),
            method: parts.method.clone(),
            url: route.url(),
            headers: filter(&parts.headers),
        }
    }

    /// The client's headers it sends.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The same upstream, without the client's header `name`.
    pub fn without(mut self, name: &str) -> Upstream {
        self.headers.remove(name);
        self
    }

    /// Sends `body`; the answer's head once it comes, its body as it
    /// arrives.
    pub async fn send(&self, body: Vec<u8>) -> Result<Answer, Unreachable> {
        let unreachable = |why: String| Unreachable {
            url: self.url.clone(),
            why,
        };
        let mut request = ureq::http::Request::builder()
            .method(self.method.clone())
            .uri(&self.url);
        if let Some(headers) = request.headers_mut() {
            *headers = self.headers.clone();
        }
        let request = request.body(body).map_err(|e| unreachable(e.to_string()))?;
        let client = self.client.clone();
        let (head_tx, head_rx) = oneshot::channel();
        let (chunk_tx, chunks) = mpsc::channel(CHUNKS_IN_FLIGHT);
        tokio::task::spawn_blocking(move || read(&client, request, head_tx, &chunk_tx));
        match head_rx.await {
            Ok(Ok(head)) => Ok(Answer { head, chunks }),
            Ok(Err(why)) => Err(unreachable(why)),
            Err(_) => Err(unreachable("the upstream task ended".into())),
        }
    }

    /// Sends `body` and reads the whole answer, blocking, within `timeout`:
    /// a request the proxy makes itself (a summary), from a blocking
    /// thread. A status other than 2xx is an error with the provider's
    /// message; no header is ever part of an error, and the client's
    /// credentials are cut out of whatever the error quotes (a provider or
    /// a gateway that echoes the key it refused).
    pub fn call(&self, body: Vec<u8>, timeout: Duration) -> Result<Vec<u8>, String> {
        self.call_unredacted(body, timeout)
            .map_err(|e| self.redacted(e))
    }

    fn call_unredacted(&self, body: Vec<u8>, timeout: Duration) -> Result<Vec<u8>, String> {
        let mut request = ureq::http::Request::builder()
            .method(self.method.clone())
            .uri(&self.url);
        if let Some(headers) = request.headers_mut() {
            *headers = self.headers.clone();
        }
        let request = request.body(body).map_err(|e| e.to_string())?;
        let request = self
            .client
            .configure_request(request)
            .timeout_global(Some(timeout))
            .build();
        let mut response = self.client.run(request).map_err(|e| e.to_string())?;
        let status = response.status();
        let text = response
            .body_mut()
            .read_to_vec()
            .map_err(|e| format!("HTTP {status}: the answer broke off: {e}"))?;
        if !status.is_success() {
            let text = String::from_utf8_lossy(&text);
            let cut: String = text.chars().take(300).collect();
            return Err(format!("HTTP {}: {cut}", status.as_u16()));
        }
        Ok(text)
    }

    /// `text` with every credential of the client's it holds replaced.
    fn redacted(&self, mut text: String) -> String {
        for name in CREDENTIAL_HEADERS {
            for value in self.headers.get_all(name) {
                let Ok(value) = value.to_str() else { continue };
                let token = value.strip_prefix("Bearer ").unwrap_or(value).trim();
                // A few characters are no secret, and replacing them would
                // garble the message.
                for secret in [value.trim(), token] {
                    if secret.len() >= 8 {
                        text = text.replace(secret, "[redacted]");
                    }
                }
            }
        }
        text
    }
}

/// Runs `request` (blocking), hands over the answer's head, then its body
/// chunk by chunk until it ends, breaks off, or no one reads it any more.
fn read(
    client: &ureq::Agent,
    request: ureq::http::Request<Vec<u8>>,
    head_tx: oneshot::Sender<Result<ureq::http::response::Parts, String>>,
    chunk_tx: &mpsc::Sender<Result<Bytes, std::io::Error>>,
) {
    let response = match client.run(request) {
        Ok(response) => response,
        Err(e) => {
            let _ = head_tx.send(Err(e.to_string()));
            return;
        }
    };
    let (head, body) = response.into_parts();
    if head_tx.send(Ok(head)).is_err() {
        return; // the client went away
    }
    let mut reader = body.into_reader();
    let mut buffer = vec![0; 16 * 1024];
    loop {
        let chunk = match reader.read(&mut buffer) {
            Ok(0) => return,
            Ok(n) => Ok(Bytes::copy_from_slice(&buffer[..n])),
            Err(e) => Err(e),
        };
        let failed = chunk.is_err();
        if chunk_tx.blocking_send(chunk).is_err() || failed {
            return; // the client went away, or the upstream broke off
        }
    }
}

/// What is done with the usage the provider reported in an answer, once
/// the answer has passed: `None` when it said none that can be read, or
/// the answer was cut off ([`UsageReader`]).
pub type Measured = Box<dyn FnOnce(Option<Usage>) + Send>;

/// Sends the request upstream with `body` and streams the answer back. An
/// upstream that cannot be reached is a 502 from the proxy saying so.
pub async fn forward(client: &ureq::Agent, route: &Route, parts: Parts, body: Bytes) -> Response {
    match Upstream::new(client, route, &parts)
        .send(body.to_vec())
        .await
    {
        Ok(answer) => relay(answer),
        Err(unreachable) => unreachable.into_response(),
    }
}

/// `response` as it goes to the client, its usage read in `format`'s terms
/// as its bytes pass, for `measured` once it has passed; not a byte of it
/// changed. The upstream's own answer and the recall loop's (whose usage is
/// the sum of its rounds') are read alike.
pub fn metered(response: Response, format: Format, measured: Measured) -> Response {
    let (parts, body) = response.into_parts();
    let meter = Meter::new(&parts.headers, format, measured);
    let chunks = futures_util::stream::unfold(
        (body.into_data_stream(), meter),
        |(mut body, mut meter)| async move {
            use futures_util::StreamExt;
            match body.next().await {
                Some(chunk) => {
                    meter.feed(&chunk);
                    Some((chunk, (body, meter)))
                }
                None => {
                    meter.end();
                    None
                }
            }
        },
    );
    Response::from_parts(parts, Body::from_stream(chunks))
}

/// Reads usage from the chunks of an answer on their way to the client, and
/// hands it over when the answer ends; an answer dropped before its end
/// (the client went away) or broken off is unknown.
struct Meter {
    reader: Option<UsageReader>,
    measured: Option<Measured>,
    /// Bytes still to come of an answer of known length: the server stops
    /// reading its body once that many have gone out, so the last of them
    /// ends it, not the stream's end.
    remaining: Option<u64>,
}

impl Meter {
    /// A meter of the answer whose headers are `headers`: streamed or not,
    /// of known length or not.
    fn new(headers: &HeaderMap, format: Format, measured: Measured) -> Meter {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let streamed = header("content-type").is_some_and(|t| t.starts_with("text/event-stream"));
        Meter {
            reader: Some(UsageReader::new(format, streamed)),
            measured: Some(measured),
            remaining: header("content-length").and_then(|l| l.parse().ok()),
        }
    }

    /// The next chunk, or the body breaking off.
    fn feed<E>(&mut self, chunk: &Result<Bytes, E>) {
        match chunk {
            Ok(bytes) => {
                if let Some(reader) = &mut self.reader {
                    reader.feed(bytes);
                }
                if let Some(remaining) = &mut self.remaining {
                    *remaining = remaining.saturating_sub(bytes.len() as u64);
                    if *remaining == 0 {
                        self.end();
                    }
                }
            }
            Err(_) => self.reader = None,
        }
    }

    fn end(&mut self) {
        if let Some(measured) = self.measured.take() {
            measured(self.reader.take().and_then(UsageReader::finish));
        }
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        // Not at its end: what it read so far is no figure.
        self.reader = None;
        self.end();
    }
}

/// The upstream's answer to the client as it comes, chunk by chunk.
pub fn relay(answer: Answer) -> Response {
    let length = answer.head.headers.get("content-length").cloned();
    let mut response = respond(&answer.head, Body::from_stream(stream(answer.chunks)));
    // The body is the upstream's, byte for byte: its length still holds.
    if let Some(length) = length {
        response.headers_mut().insert("content-length", length);
    }
    response
}

/// `chunks` as a body stream.
pub fn stream(
    chunks: Chunks,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    futures_util::stream::unfold(chunks, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    })
}

/// The answer to the client: the upstream's status and headers (but its
/// length, which follows `body`) with `body`.
pub fn respond(head: &ureq::http::response::Parts, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = head.status;
    *response.headers_mut() = filter(&head.headers);
    response
}

impl IntoResponse for Unreachable {
    fn into_response(self) -> Response {
        let Unreachable { url, why } = self;
        tracing::warn!(target: "condense::proxy", url, "upstream unreachable: {why}");
        (
            StatusCode::BAD_GATEWAY,
            format!("condense proxy: the upstream {url} cannot be reached: {why}\n"),
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_and_the_proxys_own_headers_stay_behind() {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("authorization", "Bearer sk-1"),
            ("x-api-key", "k"),
            ("anthropic-version", "2023-06-01"),
            ("connection", "keep-alive, x-trace"),
            ("x-trace", "1"),
            ("keep-alive", "timeout=5"),
            ("host", "127.0.0.1:8787"),
            ("content-length", "10"),
            ("x-condense-session", "s"),
            ("proxy-authorization", "Bearer t"),
        ] {
            headers.append(name, value.parse().unwrap());
        }
        let kept = filter(&headers);
        let names: Vec<&str> = kept.keys().map(HeaderName::as_str).collect();
        assert_eq!(names, ["authorization", "x-api-key", "anthropic-version"]);
        assert_eq!(kept["authorization"], "Bearer sk-1");
    }

    #[test]
    fn an_error_never_quotes_the_clients_credentials() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "authorization",
            "Bearer sk-proj-0123456789".parse().unwrap(),
        );
        headers.insert("x-api-key", "sk-ant-api03-abcdefgh".parse().unwrap());
        let upstream = Upstream {
            client: client(),
            method: Method::POST,
            url: "http://127.0.0.1:1/v1/messages".into(),
            headers,
        };
        let echoed =
            "HTTP 401: invalid x-api-key sk-ant-api03-abcdefgh (Bearer sk-proj-0123456789)";
        let said = upstream.redacted(echoed.to_owned());
        assert_eq!(said, "HTTP 401: invalid x-api-key [redacted] ([redacted])");
    }
}
