//! Who may reach the proxy, checked on every request before it is routed.
//!
//! A proxy on a loopback address is reachable from every web page the
//! person opens: a page can rebind its own name to 127.0.0.1 (DNS
//! rebinding), and the browser then sends it requests as if they were the
//! page's own, reading the answers. The one thing such a request cannot
//! hide is the name it was sent to: its `Host` is the page's name. So
//! every request must name a host the proxy answers to ([`AllowedHosts`]):
//! a loopback name, the address it listens on, or one the operator added
//! (`--allowed-host`). A name that cannot be rebound needs no allowing: an
//! IP literal names the machine the browser connected to itself.
//!
//! Operator endpoints (`/sessions`, `/metrics`) are not for web pages at
//! all: a request a browser marks as coming from another site (`Origin`,
//! `Sec-Fetch-Site`) is refused ([`from_a_page`]). And the sessions view,
//! which holds the users' summaries, is read only with the operator's
//! token whenever one could be needed ([`Access`]).

use axum::http::{HeaderMap, StatusCode, Uri};
use std::net::{IpAddr, SocketAddr};

/// The header the operator's token goes in: not `Authorization` (the
/// provider key of OpenAI clients) nor `Proxy-Authorization` (the clients'
/// proxy token).
pub const OPERATOR_HEADER: &str = "x-condense-operator-token";

/// The names a request's `Host` may give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedHosts {
    /// The address the proxy listens on: its IP is a name it answers to;
    /// an unspecified one (`0.0.0.0`, `::`) answers to every IP literal.
    listen: IpAddr,
    /// Added by the operator: exact names, `*.domain` for its subdomains,
    /// or `*` for any name (the check off).
    added: Vec<String>,
}

/// Why a name cannot be an allowed host.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`{name}` is not a host name (a name such as proxy.internal or *.corp.example, no port)")]
pub struct BadHostName {
    pub name: String,
}

impl AllowedHosts {
    /// The loopback names and `listen`'s address, and `added`: each a host
    /// name (no port), `*.domain` or `*`.
    pub fn new(listen: SocketAddr, added: &[String]) -> Result<AllowedHosts, BadHostName> {
        let added = added
            .iter()
            .map(|name| {
                let normal = normalize(name);
                let bare = normal.strip_prefix("*.").unwrap_or(&normal);
                let valid = name.trim() == "*"
                    || (!bare.is_empty()
                        && bare
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.'));
                match valid {
                    true => Ok(normal),
                    false => Err(BadHostName { name: name.clone() }),
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(AllowedHosts {
            listen: listen.ip(),
            added,
        })
    }

    /// Whether a request sent to `host` (a `Host` header's value: a name
    /// or IP literal, with or without a port) may be served.
    pub fn allows(&self, host: &str) -> bool {
        let name = normalize(strip_port(host));
        if name.is_empty() {
            return false;
        }
        if name == "localhost" || name.ends_with(".localhost") {
            // RFC 6761: browsers resolve these to loopback themselves.
            return true;
        }
        let literal = name.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = literal.parse::<IpAddr>() {
            return ip.is_loopback() || ip == self.listen || self.listen.is_unspecified();
        }
        self.added.iter().any(|allowed| match allowed.as_str() {
            "*" => true,
            pattern => match pattern.strip_prefix("*.") {
                Some(domain) => name
                    .strip_suffix(domain)
                    .is_some_and(|sub| sub.ends_with('.') && sub.len() > 1),
                None => name == pattern,
            },
        })
    }

    /// What the proxy answers to, for a refusal.
    fn described(&self) -> String {
        let mut names = vec!["localhost".to_owned(), "loopback addresses".to_owned()];
        if self.listen.is_unspecified() {
            names.push("any IP address".into());
        } else if !self.listen.is_loopback() {
            names.push(self.listen.to_string());
        }
        names.extend(self.added.iter().cloned());
        names.join(", ")
    }

    /// The refusal of a request whose host is not allowed, `None` when it
    /// is. The host is taken from the request line's authority (HTTP/2)
    /// or the `Host` header; a request naming none is refused too.
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Option<Refusal> {
        let host = uri.authority().map(|a| a.as_str()).or_else(|| {
            headers
                .get(axum::http::header::HOST)
                .and_then(|v| v.to_str().ok())
        });
        match host {
            Some(host) if self.allows(host) => None,
            Some(host) => {
                let name = normalize(strip_port(host));
                Some(Refusal {
                    status: StatusCode::FORBIDDEN,
                    message: format!(
                        "the request was sent to host `{name}`, which this proxy does not \
                         answer to (it answers to {}); if that name is really this proxy's, \
                         start it with --allowed-host {name}",
                        self.described()
                    ),
                })
            }
            None => Some(Refusal {
                status: StatusCode::BAD_REQUEST,
                message: "the request names no host (Host header)".into(),
            }),
        }
    }
}

/// A name as compared: lower case, without a final dot.
fn normalize(name: &str) -> String {
    name.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// `host` without its `:port`, an IPv6 literal's brackets kept.
fn strip_port(host: &str) -> &str {
    match host.rfind(']') {
        Some(end) => &host[..=end],
        None => match host.split_once(':') {
            Some((name, port)) if !port.contains(':') => name,
            _ => host,
        },
    }
}

/// Why the proxy refused a request it answers itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: StatusCode,
    pub message: String,
}

/// The refusal of a request to an operator endpoint that a browser sent
/// from a page of another site: it carries an `Origin` (which the person's
/// own look at the page, a navigation, does not), or `Sec-Fetch-Site`
/// says another site. `None` for every other request.
pub fn from_a_page(headers: &HeaderMap, hosts: &AllowedHosts) -> Option<Refusal> {
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let cross_site = matches!(header("sec-fetch-site"), Some("cross-site" | "same-site"));
    let foreign_origin = header("origin").is_some_and(|origin| {
        let host = origin.split_once("://").map_or("", |(_, rest)| rest);
        !hosts.allows(host)
    });
    (cross_site || foreign_origin).then(|| Refusal {
        status: StatusCode::FORBIDDEN,
        message: "operator endpoints do not answer requests a web page sends from another site \
                  (Origin / Sec-Fetch-Site)"
            .into(),
    })
}

/// Who may read the sessions view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// A request carrying this token.
    Token(String),
    /// Any request that passed the host and origin checks: the proxy
    /// serves its own machine, and asks its clients for no token.
    Loopback,
    /// Nobody: a token is needed and none is set; why.
    Off(Off),
}

/// Why the sessions view is off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Off {
    /// The proxy serves other machines.
    ServesOthers,
    /// The proxy asks its clients for a token: who may send requests is
    /// not everyone on the machine, so nor is who may read the view.
    ClientsNeedAToken,
}

impl Access {
    /// Who may read the view of a proxy that listens on `listen`, asks
    /// its clients for a token or not, with the operator's token or
    /// without: the token whenever one could be needed.
    pub fn of(listen: SocketAddr, clients_token: bool, operator: Option<String>) -> Access {
        match operator {
            Some(token) => Access::Token(token),
            None if !listen.ip().is_loopback() => Access::Off(Off::ServesOthers),
            None if clients_token => Access::Off(Off::ClientsNeedAToken),
            None => Access::Loopback,
        }
    }

    /// Whether a request with `headers` may read the view; the refusal if
    /// not.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        match self {
            Access::Loopback => Ok(()),
            Access::Off(why) => {
                let why = match why {
                    Off::ServesOthers => "this proxy serves other machines",
                    Off::ClientsNeedAToken => "this proxy asks its clients for a token",
                };
                Err(Refusal {
                    status: StatusCode::FORBIDDEN,
                    message: format!(
                        "the sessions view is off: {why} and has no operator token (start it \
                         with --operator-token-env VAR)"
                    ),
                })
            }
            Access::Token(token) => {
                let given = headers.get(OPERATOR_HEADER).and_then(|v| v.to_str().ok());
                let given = given
                    .map(|g| g.as_bytes().to_vec())
                    .or_else(|| basic(headers));
                if given.is_some_and(|g| constant_time_eq(&g, token.as_bytes())) {
                    Ok(())
                } else {
                    Err(Refusal {
                        status: StatusCode::UNAUTHORIZED,
                        message: format!(
                            "the sessions view needs the {OPERATOR_HEADER} header (a browser: \
                             the token as the password)"
                        ),
                    })
                }
            }
        }
    }
}

/// The password of an `Authorization: Basic` header: how a browser sends
/// the operator's token, which the person types once (any user name).
/// Operator endpoints are the proxy's own, so this `Authorization` is never
/// a provider's key going upstream.
fn basic(headers: &HeaderMap) -> Option<Vec<u8>> {
    use base64::Engine;
    let value = headers.get("authorization")?.to_str().ok()?;
    let encoded = value.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let colon = decoded.iter().position(|&b| b == b':')?;
    Some(decoded[colon + 1..].to_vec())
}

/// `refused` for a browser: a 401 asks it for the token (HTTP Basic, the
/// token the password), so that a person can open the page.
pub fn asking_a_browser(refused: Refusal) -> axum::response::Response {
    use axum::response::IntoResponse;
    let ask = refused.status == StatusCode::UNAUTHORIZED;
    let mut response = refused.into_response();
    if ask {
        response.headers_mut().insert(
            "www-authenticate",
            axum::http::HeaderValue::from_static(
                "Basic realm=\"condense proxy\", charset=\"UTF-8\"",
            ),
        );
    }
    response
}

/// Equal, in a time that does not tell how much of a guess was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl axum::response::IntoResponse for Refusal {
    fn into_response(self) -> axum::response::Response {
        (self.status, format!("condense proxy: {}\n", self.message)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(listen: &str, added: &[&str]) -> AllowedHosts {
        let added: Vec<String> = added.iter().map(|s| s.to_string()).collect();
        AllowedHosts::new(listen.parse().unwrap(), &added).unwrap()
    }

    #[test]
    fn a_loopback_proxy_answers_to_loopback_names_and_its_own_address_only() {
        let local = hosts("127.0.0.1:8787", &[]);
        for host in [
            "127.0.0.1:8787",
            "127.0.0.1",
            "localhost:8787",
            "LOCALHOST.",
            "app.localhost:8787",
            "[::1]:8787",
            "127.3.2.1:8787",
        ] {
            assert!(local.allows(host), "{host}");
        }
        for host in [
            "attacker.example:8787",
            "attacker.example",
            "localhost.attacker.example",
            "127.0.0.1.nip.io:8787",
            "10.0.0.5:8787",
            "",
            ":8787",
        ] {
            assert!(!local.allows(host), "{host}");
        }
    }

    #[test]
    fn added_names_and_the_listen_address_are_answered_to() {
        let named = hosts(
            "192.168.1.20:8787",
            &["proxy.internal", "*.corp.example", "Build-7."],
        );
        for host in [
            "192.168.1.20:8787",
            "proxy.internal:8787",
            "PROXY.INTERNAL",
            "a.corp.example",
            "a.b.corp.example:1",
            "build-7",
        ] {
            assert!(named.allows(host), "{host}");
        }
        for host in ["corp.example", "xcorp.example", "192.168.1.21", "other"] {
            assert!(!named.allows(host), "{host}");
        }
        // Listening on every address: any IP literal names this machine.
        let any = hosts("0.0.0.0:8787", &[]);
        assert!(any.allows("10.1.2.3:8787") && any.allows("[fe80::1]:8787"));
        assert!(!any.allows("attacker.example"));
        assert!(hosts("127.0.0.1:1", &["*"]).allows("anything.example"));
    }

    #[test]
    fn a_name_with_a_port_or_a_path_is_not_a_host_name() {
        for bad in ["proxy:8787", "http://proxy", "a/b", "", "*.", "a b"] {
            let e = AllowedHosts::new("127.0.0.1:1".parse().unwrap(), &[bad.to_owned()]);
            assert_eq!(e.unwrap_err().name, bad);
        }
    }

    #[test]
    fn a_request_naming_another_host_or_none_is_refused_with_the_flag_to_add_it() {
        let local = hosts("127.0.0.1:8787", &[]);
        let mut headers = HeaderMap::new();
        let uri: Uri = "/sessions".parse().unwrap();
        assert_eq!(
            local.check(&uri, &headers).unwrap().status,
            StatusCode::BAD_REQUEST
        );
        headers.insert("host", "Attacker.example:8787".parse().unwrap());
        let refused = local.check(&uri, &headers).unwrap();
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        assert!(
            refused.message.contains("--allowed-host attacker.example"),
            "{}",
            refused.message
        );
        headers.insert("host", "127.0.0.1:8787".parse().unwrap());
        assert_eq!(local.check(&uri, &headers), None);
        // HTTP/2 names it in the request line.
        let absolute: Uri = "http://attacker.example:8787/sessions".parse().unwrap();
        assert!(local.check(&absolute, &headers).is_some());
    }

    #[test]
    fn a_page_of_another_site_is_refused_and_the_operators_own_look_is_not() {
        let local = hosts("127.0.0.1:8787", &[]);
        let with = |pairs: &[(&'static str, &str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(*name, value.parse().unwrap());
            }
            from_a_page(&headers, &local)
        };
        assert_eq!(with(&[]), None);
        assert_eq!(with(&[("sec-fetch-site", "none")]), None);
        assert_eq!(with(&[("sec-fetch-site", "same-origin")]), None);
        assert_eq!(with(&[("origin", "http://127.0.0.1:8787")]), None);
        assert!(with(&[("origin", "https://attacker.example")]).is_some());
        assert!(with(&[("origin", "null")]).is_some());
        assert!(with(&[("sec-fetch-site", "cross-site")]).is_some());
        assert!(with(&[("sec-fetch-site", "same-site")]).is_some());
    }

    #[test]
    fn the_operators_token_is_needed_whenever_one_could_be() {
        let local: SocketAddr = "127.0.0.1:8787".parse().unwrap();
        let remote: SocketAddr = "0.0.0.0:8787".parse().unwrap();
        assert_eq!(Access::of(local, false, None), Access::Loopback);
        assert_eq!(
            Access::of(local, true, None),
            Access::Off(Off::ClientsNeedAToken)
        );
        assert_eq!(
            Access::of(remote, false, None),
            Access::Off(Off::ServesOthers)
        );
        assert_eq!(
            Access::of(remote, true, Some("op".into())),
            Access::Token("op".into())
        );
        let mut headers = HeaderMap::new();
        assert!(Access::Loopback.check(&headers).is_ok());
        let off = Access::Off(Off::ClientsNeedAToken)
            .check(&headers)
            .unwrap_err();
        assert_eq!(off.status, StatusCode::FORBIDDEN);
        assert!(
            off.message.contains("--operator-token-env"),
            "{}",
            off.message
        );
        let token = Access::Token("op-secret".into());
        assert_eq!(
            token.check(&headers).unwrap_err().status,
            StatusCode::UNAUTHORIZED
        );
        headers.insert(OPERATOR_HEADER, "op-secreT".parse().unwrap());
        assert!(token.check(&headers).is_err());
        headers.insert(OPERATOR_HEADER, "op-secret".parse().unwrap());
        assert!(token.check(&headers).is_ok());
        assert!(
            Access::Off(Off::ServesOthers).check(&headers).is_err(),
            "no token set: off whatever is sent"
        );
    }
}
