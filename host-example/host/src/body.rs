//! The product's job in one call, for any embedder: a request body in, the
//! body to send out. [`compress_body`] checks the size, detects the format
//! (or takes the caller's), parses and checks the body, compresses it through
//! the fail-open [`Middleware`], renders the result from the body's own JSON,
//! and stores the new checkpoint. `condense compress`, `condense compact`
//! and the proxy go through it; the agent runtime, which holds its history
//! as messages, calls the middleware itself.
//!
//! The checkpoint lives in a [`CheckpointStore`]. A checkpoint that cannot be
//! read is not an error: condense's own state must never block a model call,
//! so it is ignored (the report says why) and the fold is recomputed. A store
//! that is down ([`StoreError::Backend`]) is [`BodyError::Store`]: nothing is
//! compressed, and the caller sends the body as it is rather than recompute
//! a fold it could not keep.

use crate::failure::GuestFailure;
use crate::formats::{self, Format, Parsed};
use crate::middleware::{Middleware, compress_caused};
use crate::report::{Cause, HostReport};
use crate::store::{CheckpointStore, StoreError};
use crate::timing::Clock;
use condense_model::recall::Handle;
use condense_model::tokens::estimate_text;
use condense_model::{CoreConfig, Item, Message};
use std::borrow::Cow;
use std::time::Duration;

/// What [`compress_body`] compresses with, configured once.
#[derive(Clone, Debug)]
pub struct BodyConfig {
    pub core: CoreConfig,
    /// The compressor's settings JSON.
    pub settings: String,
    /// For a store that knows when each session's requests came
    /// ([`CheckpointStore::touch`]), how a request finding the provider's
    /// prompt cache expired is compressed.
    pub cold: Option<ColdSettings>,
    /// Whether the model may recall what a compaction took out, and how
    /// much (`None`: recall off, today's text).
    pub recall: Option<Recall>,
}

/// Recall in requests condense compresses: the model is given the
/// `condense_recall` tool from the session's first compaction on, whenever
/// its client let it choose among tools of its own
/// ([`formats::recall_offerable`]); the host that sends the request answers
/// its calls (the proxy: `condense_proxy::recall`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recall {
    /// The most tokens of text one recall gives back.
    pub budget_tokens: u32,
    /// Upstream calls one client request may take answering recalls,
    /// beyond the first.
    pub max_rounds: u32,
}

/// A request sent more than `ttl` after its session's previous one finds
/// the provider's prompt cache expired: it is compressed with `settings`,
/// which tell the compressor so (the embedded one: `cache_cold = true`), and
/// a compaction due soon is made then, at no break of its own.
#[derive(Clone, Debug)]
pub struct ColdSettings {
    pub ttl: Duration,
    pub settings: String,
    /// What a request's time is read from, to tell how long its session
    /// was idle: real time, unless a test gives its own.
    pub clock: Clock,
}

impl ColdSettings {
    /// What a call made `idle` after its session's previous one (`None`:
    /// not known) is compressed with — `cold`'s settings once the idle time
    /// passes its TTL, else `warm` — and the compressor's own rule that may
    /// compact in it (`cold`, or `cost`). `compress_body` and the runtime's
    /// `Condense` both choose so.
    pub fn choose<'a>(
        cold: Option<&'a ColdSettings>,
        warm: &'a str,
        idle: Option<Duration>,
    ) -> (&'a str, Cause) {
        match (cold, idle) {
            (Some(cold), Some(idle)) if idle > cold.ttl => (&cold.settings, Cause::Cold),
            _ => (warm, Cause::Cost),
        }
    }
}

/// The body to send, and what happened.
#[derive(Clone, Debug)]
pub struct CompressedBody {
    /// The request body to send, JSON.
    pub body: Vec<u8>,
    pub format: Format,
    pub report: HostReport,
    /// What set a compaction off, should the request have been compacted:
    /// the threshold, or the compressor's own rule (`cost`; `cold` when the
    /// request found the cache expired).
    pub cause: Cause,
    /// The recall handles the body names; when there are any, `body` also
    /// carries the `condense_recall` tool, whose calls its sender answers.
    pub handles: Vec<Handle>,
    /// With handles, the history the request was read into: the one they
    /// resolve against (`condense_model::recall::recall`), so the sender
    /// need not read the body again. Empty without handles.
    pub history: Vec<Message>,
}

/// A request body condense cannot read: it is malformed, and the provider
/// would reject it too. (Everything else fails open.)
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error(
        "request body of {size} bytes is over limits.max_request_bytes = {limit} \
         (raise it in the config file's [limits] table)"
    )]
    TooLarge { size: usize, limit: usize },
    #[error(
        "not UTF-8: byte 0x{byte:02x} at offset {offset} (line {line}, column {column}) is not \
         part of a UTF-8 character; a JSON request body must be UTF-8"
    )]
    NotUtf8 {
        byte: u8,
        offset: usize,
        line: usize,
        column: usize,
    },
    #[error("empty, expected a request body (JSON)")]
    Empty,
    #[error("not valid JSON: {0}")]
    Json(serde_json::Error),
    #[error("cannot tell the format: {0}")]
    UnknownFormat(String),
    #[error("not a valid {format} request: {reason}")]
    Invalid { format: Format, reason: String },
    /// A valid request with nothing condense compresses
    /// ([`formats::nothing_to_compress`]): to be sent on as it is.
    #[error("nothing to compress in this {format} request: {reason}")]
    NothingToCompress { format: Format, reason: String },
    /// The checkpoint store is down ([`StoreError::Backend`]); nothing was
    /// compressed.
    #[error(transparent)]
    Store(StoreError),
}

/// Reads a request body: UTF-8 JSON, in `format` or the one it looks like,
/// with tool calls and results that pair up. Every error names the JSON
/// location of the problem.
pub fn parse_body(body: &[u8], format: Option<Format>) -> Result<Parsed, BodyError> {
    parse_body_in(body, format, 0)
}

/// [`parse_body`], the body's messages read before under `scope` taken as
/// read ([`Parsed::read`], when the format is known): a host that serves
/// several tenants gives each its own scope.
pub fn parse_body_in(body: &[u8], format: Option<Format>, scope: u64) -> Result<Parsed, BodyError> {
    let text = std::str::from_utf8(body).map_err(|e| {
        let offset = e.valid_up_to();
        let line_start = body[..offset]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        BodyError::NotUtf8 {
            byte: body[offset],
            offset,
            line: body[..offset].iter().filter(|&&b| b == b'\n').count() + 1,
            column: offset - line_start + 1,
        }
    })?;
    if text.trim().is_empty() {
        return Err(BodyError::Empty);
    }
    let invalid = |format, e: formats::FormatError| BodyError::Invalid {
        format,
        reason: e.to_string(),
    };
    if let Some(format) = format
        && let Some(read) = Parsed::read(text, format, scope)
    {
        let parsed = match read {
            formats::Read::Parsed(parsed) => parsed,
            formats::Read::Nothing(reason) => {
                return Err(BodyError::NothingToCompress { format, reason });
            }
            formats::Read::Anthropic => return Err(anthropic_as_openai()),
        };
        parsed.check_tool_pairs().map_err(|e| invalid(format, e))?;
        return Ok(parsed);
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(BodyError::Json)?;
    let detected = formats::detect(&value).map_err(|e| BodyError::UnknownFormat(e.to_string()));
    let format = match (format, detected) {
        (None, detected) => detected?,
        // A forced format the body does not fit would render a request the
        // provider rejects (a result whose call was folded, say).
        (Some(Format::OpenAi), Ok(Format::Anthropic)) => return Err(anthropic_as_openai()),
        (Some(forced), _) => forced,
    };
    if let Some(reason) = formats::nothing_to_compress(format, &value) {
        return Err(BodyError::NothingToCompress { format, reason });
    }
    let parsed = Parsed::parse(value, format).map_err(|e| invalid(format, e))?;
    // Checked here, before any component runs: the compressor would refuse
    // such a request and the middleware would send it on unchanged
    // (fail-open), so the user would never learn that the request itself is
    // malformed, and the provider would reject it anyway.
    parsed.check_tool_pairs().map_err(|e| invalid(format, e))?;
    Ok(parsed)
}

/// A body read as OpenAI that is an Anthropic request.
fn anthropic_as_openai() -> BodyError {
    BodyError::Invalid {
        format: Format::OpenAi,
        reason: "the body is an Anthropic Messages request (--format anthropic, or leave the \
                 format to be told from the body)"
            .into(),
    }
}

/// Compresses one request body: check its size against the middleware's
/// cap, parse and check it ([`parse_body`], in `format` or the one it looks
/// like), compress it through `middleware` with the checkpoint in `store`,
/// render the result (what condense kept comes back as the body's own JSON),
/// and store the new checkpoint. A malformed body is an error before
/// anything runs or is stored, and so is a store that is down; everything
/// after that fails open: the body goes out unchanged and the report says
/// why.
///
/// The body's tool definitions (`tools`) are sent to the model with every
/// request, so their tokens count against the threshold and the target.
pub fn compress_body(
    middleware: &Middleware,
    config: &BodyConfig,
    body: &[u8],
    format: Option<Format>,
    store: &mut dyn CheckpointStore,
) -> Result<CompressedBody, BodyError> {
    compress_body_for(middleware, body, format, store, |_| config)
}

/// [`compress_body`] with the config chosen by the request's `model` (the
/// body's, `None` when it names none), read from the one parse of the body:
/// a host that compresses each model's requests with that model's settings
/// (the proxy) pays for no second reading of a large body.
pub fn compress_body_for<'c>(
    middleware: &Middleware,
    body: &[u8],
    format: Option<Format>,
    store: &mut dyn CheckpointStore,
    config: impl FnOnce(Option<&str>) -> &'c BodyConfig,
) -> Result<CompressedBody, BodyError> {
    let Read {
        parsed,
        config,
        recall,
        core,
    } = read(middleware, body, format, store.scope(), config)?;
    // After a compaction of the provider's own, condense works on what
    // follows it (the system messages before): the rest is the provider's.
    let provider = ProviderPart::of(parsed.messages());
    let view = provider.view(parsed.messages());
    let history: &[Message] = &view;
    if provider.is_some()
        && history
            .iter()
            .all(|m| m.role == condense_model::Role::System)
    {
        let reason = "nothing after the provider's own compaction".to_owned();
        return Err(BodyError::NothingToCompress {
            format: parsed.format(),
            reason,
        });
    }
    let (stored, unreadable) = match store.load(history) {
        Ok(stored) => (stored, None),
        Err(e @ StoreError::Backend { .. }) => return Err(BodyError::Store(e)),
        Err(e) => (None, Some(format!("{e}: ignored"))),
    };
    let middleware = &owned(middleware, store);
    let format = parsed.format();
    // Only a store asked for it records the request's time.
    let idle = config
        .cold
        .as_ref()
        .and_then(|cold| idle(store, history, &cold.clock));
    let (settings, own_rule) = ColdSettings::choose(config.cold.as_ref(), &config.settings, idle);
    let (mut sent, cause) = compress_caused(&core, own_rule, |core| {
        middleware.compress_offering(history, core, settings, stored.as_ref(), recall)
    });
    if let Some(why) = unreadable {
        tracing::warn!("{why}");
        sent.report.checkpoint_ignored = Some(why);
        // Nothing to replace it with: it must not be ignored again and again.
        if sent.checkpoint.is_none()
            && let Err(e) = store.clear()
        {
            tracing::warn!("{e}");
        }
    }
    let rendered = parsed.render_bytes(&provider.items(&sent.items), !sent.handles.is_empty());
    if let Some(checkpoint) = &sent.checkpoint
        && Some(checkpoint) != stored.as_ref()
        && let Err(e) = store.save(history, checkpoint)
    {
        // The request is still good to send: the next call recompacts.
        tracing::warn!("{e}");
        sent.report.store_error = Some(e.to_string());
    }
    // Read once: with handles, the history they resolve against (condense's
    // part) goes to whoever answers them.
    let history = match (sent.handles.is_empty(), view) {
        (true, _) => Vec::new(),
        (false, Cow::Owned(view)) => view,
        (false, Cow::Borrowed(_)) => parsed.into_messages(),
    };
    Ok(CompressedBody {
        body: rendered,
        format,
        report: sent.report,
        cause,
        handles: sent.handles,
        history,
    })
}

/// The fold knobs `parsed` is compressed with under `config`, what is left
/// of its threshold and budgets once its tool definitions are counted, and
/// whether its model is offered recall: what a replay of the same requests
/// must use to make the same decisions.
pub fn compressed_with(config: &BodyConfig, parsed: &Parsed) -> (CoreConfig, bool) {
    // The tool goes with every request of a session once it has compacted:
    // counted from the start, so the threshold stays where it was.
    let format = parsed.format();
    let recall = config.recall.is_some() && formats::recall_offerable(format, parsed.body());
    let recall_tokens = if recall {
        estimate_text(&formats::recall_tool(format).to_string())
    } else {
        0
    };
    let core = with_overhead(&config.core, tools_tokens(parsed.body()) + recall_tokens);
    (core, recall)
}

/// The messages of a request that are the provider's: those before the end
/// of its own compaction (`formats::compaction`), after the system messages.
/// condense neither counts, folds nor rewrites them, and sends them as the
/// client did: its checkpoints, handles and figures are of the rest.
struct ProviderPart {
    /// The system messages, then the provider's part: `system..end`.
    system: usize,
    end: usize,
}

impl ProviderPart {
    fn of(messages: &[Message]) -> ProviderPart {
        let system = messages
            .iter()
            .take_while(|m| m.role == condense_model::Role::System)
            .count();
        let end = formats::compaction::provider_compaction_end(messages).unwrap_or(system);
        ProviderPart { system, end }
    }

    /// Whether the request carries a provider's compaction.
    fn is_some(&self) -> bool {
        self.end > self.system
    }

    /// What condense works on: the system messages and what follows the
    /// provider's part.
    fn view<'m>(&self, messages: &'m [Message]) -> Cow<'m, [Message]> {
        if self.end == self.system {
            return Cow::Borrowed(messages);
        }
        let (system, rest) = (&messages[..self.system], &messages[self.end..]);
        Cow::Owned(system.iter().chain(rest).cloned().collect())
    }

    /// `items` of the view as items of the whole request: the provider's
    /// part, kept, after the system messages.
    fn items<'i>(&self, items: &'i [Item]) -> Cow<'i, [Item]> {
        let shift = (self.end - self.system) as u32;
        if shift == 0 {
            return Cow::Borrowed(items);
        }
        let system = self.system as u32;
        let moved = |i: u32| if i < system { i } else { i + shift };
        let leading = items
            .iter()
            .take_while(|item| matches!(item, Item::Kept(i) if *i < system))
            .count();
        let mut out: Vec<Item> = items[..leading].to_vec();
        out.extend((system..system + shift).map(Item::Kept));
        out.extend(items[leading..].iter().map(|item| match item {
            Item::Kept(i) => Item::Kept(moved(*i)),
            Item::Rewritten(i, m) => Item::Rewritten(moved(*i), m.clone()),
            Item::Written(m) => Item::Written(m.clone()),
        }));
        Cow::Owned(out)
    }
}

/// A request body read for compressing: the body, its config, whether the
/// model is offered recall, and the fold knobs for what is left of the
/// request once its tool definitions are counted.
struct Read<'c> {
    parsed: Parsed,
    config: &'c BodyConfig,
    recall: bool,
    core: CoreConfig,
}

fn read<'c>(
    middleware: &Middleware,
    body: &[u8],
    format: Option<Format>,
    scope: u64,
    config: impl FnOnce(Option<&str>) -> &'c BodyConfig,
) -> Result<Read<'c>, BodyError> {
    let limit = middleware.max_request_bytes();
    if body.len() > limit {
        return Err(BodyError::TooLarge {
            size: body.len(),
            limit,
        });
    }
    let parsed = parse_body_in(body, format, scope)?;
    let config = config(parsed.body().get("model").and_then(|m| m.as_str()));
    let (core, recall) = compressed_with(config, &parsed);
    Ok(Read {
        parsed,
        config,
        recall,
        core,
    })
}

/// Why a summary could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error(transparent)]
    Body(#[from] BodyError),
    #[error(transparent)]
    Guest(#[from] GuestFailure),
}

/// Prepares the next compaction's summary for the session of a request
/// body whose compression said [`HostReport::prepare_due`]: the body read
/// as [`compress_body_for`] reads it, with the session's checkpoint from
/// `store` (read, never written), through [`Middleware::prepare`]. Takes as
/// long as the summarizer: a host runs it in the background. `Ok(true)`
/// when a summary is kept for the plan.
pub fn prepare_body<'c>(
    middleware: &Middleware,
    body: &[u8],
    format: Option<Format>,
    store: &mut dyn CheckpointStore,
    config: impl FnOnce(Option<&str>) -> &'c BodyConfig,
) -> Result<bool, PrepareError> {
    let Read {
        parsed,
        config,
        recall,
        core,
    } = read(middleware, body, format, store.scope(), config)?;
    let history = parsed.messages();
    let stored = match store.load(history) {
        Ok(stored) => stored,
        Err(e @ StoreError::Backend { .. }) => return Err(BodyError::Store(e).into()),
        Err(_) => None,
    };
    let middleware = owned(middleware, store);
    Ok(middleware.prepare(history, &core, &config.settings, stored.as_ref(), recall)?)
}

/// `middleware` for the session `store` found, when the store keeps many
/// and summaries are prepared ahead (they are that session's alone), and
/// for its tenant ([`CheckpointStore::scope`]).
fn owned<'m>(middleware: &'m Middleware, store: &dyn CheckpointStore) -> Cow<'m, Middleware> {
    let owned = match (middleware.prepared(), store.owner()) {
        (Some(_), Some(owner)) => Cow::Owned(middleware.owned_by(owner)),
        _ => Cow::Borrowed(middleware),
    };
    match store.scope() {
        0 => owned,
        scope => Cow::Owned(owned.into_owned().in_scope(scope)),
    }
}

/// How long ago the session's previous request came, as `store` knows it;
/// it records this one. A store that cannot say (or is down: the time is
/// condense's own state, which never stops a model call) gives `None`,
/// counted as a warm cache, the case that costs a break if wrong.
fn idle(store: &mut dyn CheckpointStore, history: &[Message], clock: &Clock) -> Option<Duration> {
    let now = clock.now_ms();
    match store.touch(history, now) {
        Ok(previous) => previous.map(|p| Duration::from_millis(now.saturating_sub(p))),
        Err(e) => {
            tracing::warn!("{e}");
            None
        }
    }
}

/// Tokens of the body's tool definitions, which the model is sent with every
/// request (about 10k in a Claude Code request).
pub fn tools_tokens(body: &serde_json::Value) -> u32 {
    body.get("tools")
        .map_or(0, |tools| estimate_text(&tools.to_string()))
}

/// `core` with `overhead` tokens of every request taken from the threshold
/// and the target, so that the messages get what is left. Held to the
/// smallest consistent config: an overhead that leaves nothing makes every
/// request compact as far as it can.
pub fn with_overhead(core: &CoreConfig, overhead: u32) -> CoreConfig {
    if overhead == 0 {
        return *core;
    }
    // The smallest threshold and summary budget the ranges allow.
    let (min_threshold, min_summary) = (1_000, 64);
    let token_threshold = core
        .token_threshold
        .saturating_sub(overhead)
        .max(min_threshold);
    let target_tokens = core
        .target_tokens
        .saturating_sub(overhead)
        .max(min_summary + 1)
        .min(token_threshold - 1);
    CoreConfig {
        token_threshold,
        target_tokens,
        keep_recent_tokens: core.keep_recent_tokens.min(target_tokens),
        summary_max_tokens: core
            .summary_max_tokens
            .min(target_tokens - 1)
            .max(min_summary),
        ..*core
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forced_format_the_body_does_not_fit_is_an_error() {
        let anthropic = br#"{"system": "s", "messages": [{"role": "user", "content": "hi"}]}"#;
        let e = parse_body(anthropic, Some(Format::OpenAi))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("not a valid openai request: the body is an Anthropic Messages request"),
            "{e}"
        );
        assert!(parse_body(anthropic, Some(Format::Anthropic)).is_ok());
        assert!(parse_body(anthropic, None).is_ok());
    }

    #[test]
    fn tool_definitions_count_against_threshold_and_target() {
        let body =
            serde_json::json!({"tools": [{"name": "Bash", "description": "x ".repeat(3000)}]});
        let overhead = tools_tokens(&body);
        assert!(overhead > 2_500, "{overhead}");
        let core = CoreConfig::for_threshold(40_000);
        let shifted = with_overhead(&core, overhead);
        assert_eq!(shifted.token_threshold, 40_000 - overhead);
        assert_eq!(shifted.target_tokens, 20_000 - overhead);
        shifted.validate().unwrap();
        // An overhead larger than the threshold still gives a valid config.
        with_overhead(&core, 1_000_000).validate().unwrap();
        assert_eq!(tools_tokens(&serde_json::json!({"messages": []})), 0);
    }
}
