//! What `condense` logs, and what it never does.

use std::io::IsTerminal;
use tracing::{Level, Subscriber};
use tracing_subscriber::filter::{EnvFilter, filter_fn};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::{Layer, Registry};

/// How `condense` logs: which events (`spec`, the `CONDENSE_LOG` syntax:
/// `warn`, `info`, `condense=debug,trace`, ...) and whether as JSON lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Style {
    pub spec: String,
    pub json: bool,
}

impl Style {
    /// The style for `command` (the subcommand's name), unless the
    /// environment's `CONDENSE_LOG` and `CONDENSE_LOG_FORMAT` (`json` or
    /// `text`) say otherwise. A server (`condense proxy`) logs every request
    /// (`info`) as JSON lines, for a log collector; the other commands only
    /// warnings, as text, for the person who ran them.
    pub fn of(command: Option<&str>, log: Option<&str>, format: Option<&str>) -> Style {
        let server = command == Some("proxy");
        Style {
            spec: log.map_or_else(|| if server { "info" } else { "warn" }.into(), Into::into),
            json: format.map_or(server, |f| f.eq_ignore_ascii_case("json")),
        }
    }
}

/// Installs `condense`'s subscriber for the whole process, writing to
/// stderr in the [`Style`] for `command` and the environment.
pub fn install(command: Option<&str>) {
    let var = |name| std::env::var(name).ok();
    let style = Style::of(
        command,
        var("CONDENSE_LOG").as_deref(),
        var("CONDENSE_LOG_FORMAT").as_deref(),
    );
    // Colours only for a person reading a terminal, not in a log file.
    let ansi = std::io::stderr().is_terminal();
    tracing::subscriber::set_global_default(subscriber(std::io::stderr, ansi, &style))
        .expect("the first subscriber");
}

/// The subscriber of `condense`: lines to `writer` in `style` (an invalid
/// spec is `warn`). The HTTP client never logs below `info`, whatever the
/// spec asks: at `trace` it dumps the bytes of every request, the
/// `Authorization` header with the model's API key among them.
pub fn subscriber<W>(writer: W, ansi: bool, style: &Style) -> impl Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let filter = EnvFilter::try_new(&style.spec).unwrap_or_else(|_| EnvFilter::new("warn"));
    let no_wire_dumps =
        filter_fn(|meta| !(meta.target().starts_with("ureq") && *meta.level() > Level::INFO));
    let lines = tracing_subscriber::fmt::layer().with_writer(writer);
    let lines = if style.json {
        lines.json().flatten_event(true).boxed()
    } else {
        lines.with_ansi(ansi).boxed()
    };
    Registry::default().with(lines.with_filter(filter).with_filter(no_wire_dumps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_logs_requests_as_json_unless_told_otherwise() {
        let proxy = Style::of(Some("proxy"), None, None);
        assert_eq!((proxy.spec.as_str(), proxy.json), ("info", true));
        let told = Style::of(Some("proxy"), Some("warn"), Some("text"));
        assert_eq!((told.spec.as_str(), told.json), ("warn", false));
        let compress = Style::of(Some("compress"), None, None);
        assert_eq!((compress.spec.as_str(), compress.json), ("warn", false));
        assert!(Style::of(None, None, Some("JSON")).json);
    }
}
