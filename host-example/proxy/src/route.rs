//! Where a request goes: the agent whose settings compress it, the protocol
//! (whether it is compressed at all) and the upstream.
//!
//! - **Agent**: a path `/agents/NAME/…` (the prefix is removed before the
//!   request goes on) or the header `x-condense-agent: NAME`; neither is
//!   [`DEFAULT_AGENT`](crate::DEFAULT_AGENT). An unknown name is a 404
//!   naming it: compressing with settings the person did not mean would be
//!   worse than not forwarding.
//! - **Protocol**: `POST /v1/messages` is Anthropic Messages,
//!   `POST /v1/chat/completions` OpenAI Chat Completions, `POST
//!   /v1/responses` OpenAI Responses (its list form: a string `input` or a
//!   `previous_response_id` conversation is the server's, and goes on
//!   unchanged); all three are compressed. Every other request
//!   (`/v1/messages/count_tokens`, `/v1/models`, …) is forwarded unchanged.
//! - **Upstream**: Anthropic for its paths (`/v1/messages…`,
//!   `/v1/complete`) or a request with an `anthropic-version` header,
//!   OpenAI for everything else.
//! - **Tenant**: whose the request is, a digest of the credentials it
//!   sends upstream ([`tenant_of`]). Sessions of two tenants never share
//!   what the proxy keeps (checkpoints, summaries prepared ahead), however
//!   alike they start: another tenant's summary would carry that person's
//!   words, written with their key and instructions.

use crate::guard::Refusal;
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, StatusCode};
use condense_host::formats::Format;

/// The header naming the agent.
pub const AGENT_HEADER: &str = "x-condense-agent";
/// The header naming the session (else it is found from the request).
pub const SESSION_HEADER: &str = "x-condense-session";
/// The headers that carry a client's credentials upstream (Anthropic,
/// OpenAI, Azure OpenAI, Gemini's OpenAI endpoint).
pub const CREDENTIAL_HEADERS: [&str; 4] =
    ["authorization", "x-api-key", "api-key", "x-goog-api-key"];

/// Where one request goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub method: Method,
    pub agent: String,
    /// The path sent upstream (without an `/agents/NAME` prefix).
    pub path: String,
    /// `path` with the query, if any.
    pub path_and_query: String,
    /// The upstream's base URL, without a trailing `/`.
    pub upstream: String,
    /// The format to compress the body as; `None`: forwarded unchanged.
    pub format: Option<Format>,
    /// The session the client named.
    pub session: Option<String>,
    /// Whose the request is ([`tenant_of`]); `None`: it carries no
    /// credentials.
    pub tenant: Option<String>,
}

impl Route {
    /// The URL to send the request to.
    pub fn url(&self) -> String {
        format!("{}{}", self.upstream, self.path_and_query)
    }
}

/// Where requests go, and who may send them.
#[derive(Clone, Debug)]
pub struct Routes {
    /// Where Anthropic requests go (`https://api.anthropic.com`).
    pub anthropic_upstream: String,
    /// Where OpenAI requests go (`https://api.openai.com`).
    pub openai_upstream: String,
    /// A token clients must send as `Proxy-Authorization: Bearer TOKEN`
    /// (their `Authorization` is the provider's).
    pub token: Option<String>,
    /// Whether the Anthropic upstream applies `context_management` itself
    /// ([`crate::edits`]).
    pub anthropic_edits: crate::edits::ContextEdits,
}

/// The route of a request, or why the proxy refuses it; `agents` are the
/// names configured.
pub fn route(parts: &Parts, routes: &Routes, agents: &[String]) -> Result<Route, Refusal> {
    if let Some(token) = &routes.token {
        let given = header(&parts.headers, "proxy-authorization");
        if given.and_then(|g| g.strip_prefix("Bearer ")) != Some(token.as_str()) {
            return Err(Refusal {
                status: StatusCode::PROXY_AUTHENTICATION_REQUIRED,
                message: "this proxy needs `Proxy-Authorization: Bearer <its token>`".into(),
            });
        }
    }
    let full = parts.uri.path();
    let (agent, path) = match full.strip_prefix("/agents/") {
        Some(rest) => {
            let (name, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            (name.to_owned(), path.to_owned())
        }
        None => (
            header(&parts.headers, AGENT_HEADER)
                .unwrap_or(crate::DEFAULT_AGENT)
                .to_owned(),
            full.to_owned(),
        ),
    };
    if !agents.contains(&agent) {
        return Err(Refusal {
            status: StatusCode::NOT_FOUND,
            message: format!(
                "no agent `{agent}` in the config (known: {}); add [agents.{agent}]",
                agents.join(", ")
            ),
        });
    }
    let anthropic = path.starts_with(Format::Anthropic.endpoint_path())
        || path == "/v1/complete"
        || parts.headers.contains_key("anthropic-version");
    let format = (parts.method == Method::POST)
        .then(|| Format::at_endpoint(&path))
        .flatten();
    let upstream = if anthropic {
        &routes.anthropic_upstream
    } else {
        &routes.openai_upstream
    };
    let path_and_query = match parts.uri.query() {
        Some(query) => format!("{path}?{query}"),
        None => path.clone(),
    };
    Ok(Route {
        method: parts.method.clone(),
        agent,
        path,
        path_and_query,
        upstream: upstream.trim_end_matches('/').to_owned(),
        format,
        session: header(&parts.headers, SESSION_HEADER).map(str::to_owned),
        tenant: tenant_of(&parts.headers),
    })
}

/// The tenant of a request with `headers`: `k` and 16 hex digits of the
/// SHA-256 of the credentials it carries ([`CREDENTIAL_HEADERS`]), which
/// name them in a store without telling them; `None` without any. A key
/// that changes (a rotated key, a refreshed OAuth token) is another
/// tenant: its session's checkpoint is not found, and it compacts anew.
pub fn tenant_of(headers: &HeaderMap) -> Option<String> {
    use sha2::{Digest, Sha256};
    let mut digest = Sha256::new();
    let mut any = false;
    for name in CREDENTIAL_HEADERS {
        for value in headers.get_all(name) {
            any = true;
            digest.update(name.as_bytes());
            digest.update(b"\0");
            digest.update(value.as_bytes());
            digest.update(b"\0");
        }
    }
    any.then(|| {
        let digest = digest.finalize();
        let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        format!("k{hex}")
    })
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes(token: Option<&str>) -> Routes {
        Routes {
            anthropic_upstream: "https://a.example/".into(),
            openai_upstream: "https://o.example".into(),
            token: token.map(str::to_owned),
            anthropic_edits: Default::default(),
        }
    }

    fn parts(method: &str, uri: &str, headers: &[(&str, &str)]) -> Parts {
        let mut request = axum::http::Request::builder().method(method).uri(uri);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    fn agents() -> Vec<String> {
        vec!["default".into(), "review".into()]
    }

    #[test]
    fn agents_protocols_and_upstreams() {
        let routes = routes(None);
        let r = route(&parts("POST", "/v1/messages", &[]), &routes, &agents()).unwrap();
        assert_eq!(
            (r.agent.as_str(), r.format, r.url().as_str()),
            (
                "default",
                Some(Format::Anthropic),
                "https://a.example/v1/messages"
            )
        );
        let r = route(
            &parts("POST", "/agents/review/v1/chat/completions?x=1", &[]),
            &routes,
            &agents(),
        )
        .unwrap();
        assert_eq!(
            (r.agent.as_str(), r.format, r.url().as_str()),
            (
                "review",
                Some(Format::OpenAi),
                "https://o.example/v1/chat/completions?x=1"
            )
        );
        // Other paths go on unchanged, to their provider.
        let r = route(
            &parts(
                "POST",
                "/v1/messages/count_tokens",
                &[(AGENT_HEADER, "review"), (SESSION_HEADER, "s1")],
            ),
            &routes,
            &agents(),
        )
        .unwrap();
        assert_eq!(
            (r.agent.as_str(), r.format, r.session.as_deref()),
            ("review", None, Some("s1"))
        );
        assert!(r.url().starts_with("https://a.example/"));
        let r = route(&parts("GET", "/v1/models", &[]), &routes, &agents()).unwrap();
        assert_eq!(
            (r.format, r.url().as_str()),
            (None, "https://o.example/v1/models")
        );
        let e = route(
            &parts("POST", "/agents/nope/v1/messages", &[]),
            &routes,
            &agents(),
        )
        .unwrap_err();
        assert_eq!(e.status, StatusCode::NOT_FOUND);
        assert!(e.message.contains("no agent `nope`"), "{}", e.message);
    }

    #[test]
    fn a_tenant_is_its_credentials_digested() {
        let tenant =
            |headers: &[(&str, &str)]| tenant_of(&parts("POST", "/v1/messages", headers).headers);
        assert_eq!(tenant(&[]), None);
        assert_eq!(tenant(&[("anthropic-version", "2023-06-01")]), None);
        let a = tenant(&[("x-api-key", "sk-ant-a")]).unwrap();
        assert_eq!(a.len(), 17);
        assert!(!a.contains("sk-ant"), "{a}");
        assert_eq!(tenant(&[("x-api-key", "sk-ant-a")]).unwrap(), a);
        assert_ne!(tenant(&[("x-api-key", "sk-ant-b")]).unwrap(), a);
        // The header it came in is part of it.
        assert_ne!(tenant(&[("authorization", "sk-ant-a")]).unwrap(), a);
        assert_ne!(
            tenant(&[("authorization", "Bearer sk-a")]),
            tenant(&[("authorization", "Bearer sk-b")])
        );
    }

    #[test]
    fn the_proxys_token_is_asked_for() {
        let routes = routes(Some("t0k"));
        let e = route(&parts("POST", "/v1/messages", &[]), &routes, &agents()).unwrap_err();
        assert_eq!(e.status, StatusCode::PROXY_AUTHENTICATION_REQUIRED);
        let wrong = [("proxy-authorization", "Bearer nope")];
        assert!(route(&parts("POST", "/v1/messages", &wrong), &routes, &agents()).is_err());
        let right = [("proxy-authorization", "Bearer t0k")];
        assert!(route(&parts("POST", "/v1/messages", &right), &routes, &agents()).is_ok());
    }
}
