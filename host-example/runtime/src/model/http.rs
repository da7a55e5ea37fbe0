//! The one HTTP path of the model clients: POST a JSON body, read a JSON
//! answer, retry what is worth retrying.
//!
//! - **Retried**: 429 (rate limited) and 5xx (the provider failing or
//!   overloaded, Anthropic's 529 included), up to `max_retries` times, after
//!   an exponential backoff ([`Backoff`]) or the provider's `retry-after-ms`
//!   / `Retry-After` (seconds) when it sends one, capped either way.
//! - **Not retried**: other 4xx (the request is wrong and will stay wrong:
//!   a bad key, a bad model name, a context that is too long), transport
//!   errors and timeouts. A request that broke off may have been processed
//!   and billed, and a model that did not answer within the timeout will not
//!   be quicker the second time; the caller decides.
//!
//! The timeout covers one attempt whole: connecting, sending, and receiving
//! the complete answer.

use super::{Invalid, ModelError};
use serde_json::Value;
use std::time::Duration;
use ureq::http::{HeaderMap, Response};

/// The wait before a retry: `first`, doubling with each retry, at most
/// `max`; a provider's `Retry-After` replaces it, also at most `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    pub first: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    /// 250 ms, 500 ms, 1 s, ... at most 30 s.
    fn default() -> Self {
        Backoff {
            first: Duration::from_millis(250),
            max: Duration::from_secs(30),
        }
    }
}

impl Backoff {
    /// The wait before retry number `retry` (0 for the first), given the
    /// failed answer's `Retry-After`, if any.
    fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        let exponential = self
            .first
            .saturating_mul(2u32.saturating_pow(retry.min(31)));
        retry_after.unwrap_or(exponential).min(self.max)
    }
}

/// How long to wait before retrying, when the answer says: OpenAI's
/// `retry-after-ms`, else `Retry-After` in (possibly fractional) seconds.
/// The HTTP-date form of `Retry-After` is not read (the backoff applies).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok();
    let seconds = header("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| header("retry-after"))?;
    Duration::try_from_secs_f64(seconds).ok()
}

/// The largest error message kept from a provider's error body.
const MAX_ERROR_MESSAGE: usize = 1000;

/// The provider's error message in an error response body: `error.message`
/// (OpenAI, Anthropic, llama.cpp), `error` as a string (Ollama), or
/// `message` / `detail` (vLLM, FastAPI servers); the body itself when it has
/// none of them. Truncated to [`MAX_ERROR_MESSAGE`] bytes.
pub(super) fn error_message(body: &str) -> String {
    let json: Option<Value> = serde_json::from_str(body).ok();
    let from_json = json.as_ref().and_then(|json| {
        ["/error/message", "/error", "/message", "/detail"]
            .iter()
            .find_map(|pointer| json.pointer(pointer)?.as_str())
    });
    let message = from_json.unwrap_or(body).trim();
    if message.is_empty() {
        return "(empty body)".to_owned();
    }
    truncate(message, MAX_ERROR_MESSAGE)
}

/// `text`, cut to at most `max` bytes at a character boundary, saying so.
fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let cut = (0..=max)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}... ({} bytes in all)", &text[..cut], text.len())
}

/// A blocking HTTP client for one provider: its timeout, retries and
/// backoff.
pub(super) struct Http {
    agent: ureq::Agent,
    timeout: Duration,
    max_retries: u32,
    backoff: Backoff,
}

impl Http {
    pub(super) fn new(timeout: Duration, max_retries: u32) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            // Error statuses are answers to read (the provider's message)
            // and maybe retry, not transport errors.
            .http_status_as_error(false)
            .user_agent(concat!("condense-runtime/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Http {
            agent,
            timeout,
            max_retries,
            backoff: Backoff::default(),
        }
    }

    pub(super) fn set_backoff(&mut self, backoff: Backoff) {
        self.backoff = backoff;
    }

    /// POSTs `body` to `url` with `headers` and returns the JSON answer of
    /// a 2xx response, retrying 429 and 5xx answers (see the module
    /// documentation).
    pub(super) fn post_json(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        body: &Value,
    ) -> Result<Value, ModelError> {
        let payload = body.to_string();
        let mut retry = 0;
        loop {
            let (status, wait, text) = self.post_once(url, headers, &payload)?;
            if (200..300).contains(&status) {
                return serde_json::from_str(&text).map_err(|e| {
                    Invalid::new("body", format!("not JSON ({e}): {}", truncate(&text, 200)))
                        .at(url)
                });
            }
            let error = ModelError::Status {
                url: url.to_owned(),
                status,
                message: error_message(&text),
            };
            let retryable = status == 429 || (500..600).contains(&status);
            if !retryable || retry == self.max_retries {
                return Err(error);
            }
            let delay = self.backoff.delay(retry, wait);
            retry += 1;
            tracing::warn!(
                "{error}; retry {retry} of {} in {delay:?}",
                self.max_retries
            );
            std::thread::sleep(delay);
        }
    }

    /// One attempt: the status, the `Retry-After` wait and the body text of
    /// the answer.
    fn post_once(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        payload: &str,
    ) -> Result<(u16, Option<Duration>, String), ModelError> {
        let mut request = self
            .agent
            .post(url)
            .content_type("application/json")
            .header("accept", "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let mut response: Response<ureq::Body> =
            request.send(payload).map_err(|e| self.transport(url, e))?;
        let status = response.status().as_u16();
        let wait = retry_after(response.headers());
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|e| self.transport(url, e))?;
        Ok((status, wait, text))
    }

    /// A ureq error as a [`ModelError`]: a timeout (ureq's own, or an I/O
    /// one) as [`ModelError::Timeout`], anything else as transport.
    fn transport(&self, url: &str, error: ureq::Error) -> ModelError {
        let timed_out = match &error {
            ureq::Error::Timeout(_) => true,
            ureq::Error::Io(e) => e.kind() == std::io::ErrorKind::TimedOut,
            _ => false,
        };
        if timed_out {
            ModelError::Timeout {
                url: url.to_owned(),
                after: self.timeout,
            }
        } else {
            ModelError::Transport {
                url: url.to_owned(),
                source: Box::new(error),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_scripted_server::{Reply, TestServer};
    use serde_json::json;

    /// A client with a 1 ms backoff, so retry tests take no time.
    fn client(timeout: Duration, max_retries: u32) -> Http {
        let mut http = Http::new(timeout, max_retries);
        http.set_backoff(Backoff {
            first: Duration::from_millis(1),
            max: Duration::from_millis(5),
        });
        http
    }

    fn error_body(message: &str) -> String {
        json!({"error": {"type": "x", "message": message}}).to_string()
    }

    #[test]
    fn retries_a_429_then_succeeds() {
        let server = TestServer::start([
            Reply::json(429, error_body("slow down")).with_header("retry-after", "0"),
            Reply::json(200, r#"{"ok": true}"#),
        ]);
        let http = client(Duration::from_secs(5), 2);
        let url = server.url("/x");
        let answer = http.post_json(&url, &[], &json!({"n": 1})).unwrap();
        assert_eq!(answer, json!({"ok": true}));
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert!(requests.iter().all(|r| r.body == json!({"n": 1})));
    }

    #[test]
    fn gives_up_after_max_retries_naming_status_and_message() {
        let max_retries = 2;
        let server = TestServer::start(
            (0..=max_retries).map(|_| Reply::json(500, error_body("the model crashed"))),
        );
        let http = client(Duration::from_secs(5), max_retries);
        let url = server.url("/x");
        let error = http.post_json(&url, &[], &json!({})).unwrap_err();
        assert!(
            matches!(&error, ModelError::Status { status: 500, message, .. } if message == "the model crashed"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!("{url}: HTTP 500: the model crashed")
        );
        assert_eq!(server.requests().len(), max_retries as usize + 1);
    }

    #[test]
    fn does_not_retry_other_client_errors() {
        let server = TestServer::start([
            Reply::json(400, error_body("max_tokens: must be at most 8192")),
            Reply::json(200, "{}"),
        ]);
        let http = client(Duration::from_secs(5), 3);
        let error = http
            .post_json(&server.url("/x"), &[], &json!({}))
            .unwrap_err();
        assert!(
            matches!(&error, ModelError::Status { status: 400, message, .. } if message == "max_tokens: must be at most 8192"),
            "{error:?}"
        );
        assert_eq!(server.requests().len(), 1);
    }

    /// The attempt ends with a timeout error, not retried: a client that
    /// waited for the answer would hang here (the server never sends one).
    #[test]
    fn times_out_on_a_server_that_never_answers() {
        let server = TestServer::start([Reply::Hang]);
        let timeout = Duration::from_millis(300);
        let http = client(timeout, 3);
        let error = http
            .post_json(&server.url("/x"), &[], &json!({}))
            .unwrap_err();
        assert!(
            matches!(error, ModelError::Timeout { after, .. } if after == timeout),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("timed out after 300ms"),
            "{error}"
        );
        assert_eq!(server.requests().len(), 1, "not retried");
    }

    #[test]
    fn a_refused_connection_is_a_transport_error() {
        // A port that was free a moment ago: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/x");
        let error = client(Duration::from_secs(5), 3)
            .post_json(&url, &[], &json!({}))
            .unwrap_err();
        assert!(matches!(error, ModelError::Transport { .. }), "{error:?}");
        assert!(error.to_string().starts_with(&url), "{error}");
    }

    #[test]
    fn a_success_that_is_not_json_names_the_body() {
        let server = TestServer::start([Reply::json(200, "<html>proxy login</html>")]);
        let error = client(Duration::from_secs(5), 0)
            .post_json(&server.url("/x"), &[], &json!({}))
            .unwrap_err();
        let ModelError::InvalidResponse { field, problem, .. } = &error else {
            panic!("{error:?}")
        };
        assert_eq!(field, "body");
        assert!(problem.contains("<html>proxy login</html>"), "{problem}");
    }

    #[test]
    fn backoff_doubles_and_honours_retry_after_capped() {
        let backoff = Backoff::default();
        let ms = Duration::from_millis;
        assert_eq!(backoff.delay(0, None), ms(250));
        assert_eq!(backoff.delay(1, None), ms(500));
        assert_eq!(backoff.delay(3, None), ms(2000));
        assert_eq!(backoff.delay(40, None), backoff.max);
        assert_eq!(backoff.delay(0, Some(ms(7000))), ms(7000));
        assert_eq!(backoff.delay(0, Some(ms(0))), ms(0));
        assert_eq!(
            backoff.delay(0, Some(Duration::from_secs(3600))),
            backoff.max
        );
    }

    #[test]
    fn retry_after_reads_seconds_and_openai_milliseconds() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(*name, value.parse().unwrap());
            }
            map
        };
        let ms = Duration::from_millis;
        assert_eq!(
            retry_after(&headers(&[("retry-after", "2")])),
            Some(ms(2000))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "0.5")])),
            Some(ms(500))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "2"), ("retry-after-ms", "150")])),
            Some(ms(150))
        );
        assert_eq!(
            retry_after(&headers(&[(
                "retry-after",
                "Wed, 21 Oct 2015 07:28:00 GMT"
            )])),
            None
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "-1")])), None);
        assert_eq!(retry_after(&headers(&[])), None);
    }

    #[test]
    fn error_messages_come_from_every_providers_shape() {
        assert_eq!(error_message(&error_body("bad key")), "bad key");
        assert_eq!(
            error_message(r#"{"error": "model not found"}"#),
            "model not found"
        );
        assert_eq!(
            error_message(r#"{"object": "error", "message": "too long"}"#),
            "too long"
        );
        assert_eq!(error_message(r#"{"detail": "Not Found"}"#), "Not Found");
        assert_eq!(error_message("  Bad Gateway\n"), "Bad Gateway");
        assert_eq!(error_message(""), "(empty body)");
        let long = "é".repeat(MAX_ERROR_MESSAGE);
        let message = error_message(&long);
        assert!(message.len() < MAX_ERROR_MESSAGE + 40, "{}", message.len());
        assert!(
            message.ends_with(&format!("... ({} bytes in all)", long.len())),
            "{message}"
        );
    }
}
