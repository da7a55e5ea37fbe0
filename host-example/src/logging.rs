//! What `condense` logs, and what it never does.

use tracing::{Level, Subscriber};
use tracing_subscriber::filter::{EnvFilter, filter_fn};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::{Layer, Registry};

/// The subscriber of `condense`: lines to `writer`, filtered by `spec` (the
/// `CONDENSE_LOG` syntax: `warn`, `info`, `condense=debug,trace`, ...; an
/// invalid one is `warn`). The HTTP client never logs below `info`,
/// whatever `spec` asks: at `trace` it dumps the bytes of every request,
/// the `Authorization` header with the model's API key among them.
pub fn subscriber<W>(writer: W, ansi: bool, spec: &str) -> impl Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let filter = EnvFilter::try_new(spec).unwrap_or_else(|_| EnvFilter::new("warn"));
    let no_wire_dumps =
        filter_fn(|meta| !(meta.target().starts_with("ureq") && *meta.level() > Level::INFO));
    Registry::default().with(
        tracing_subscriber::fmt::layer()
            .with_writer(writer)
            .with_ansi(ansi)
            .with_filter(filter)
            .with_filter(no_wire_dumps),
    )
}
