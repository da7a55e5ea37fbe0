//! The proxy answers the model's `condense_recall` calls itself: nothing
//! folded is lost.
//!
//! When condense compacts a request whose client let the model choose among
//! tools of its own, the summary and the placeholders of cleared results
//! name *handles*, and the request carries the `condense_recall` tool
//! (`compress_body` adds it: [`condense_host::Recall`]). The client does not
//! know that tool, so the proxy answers its calls, calling the upstream
//! again, and the client never sees a recall call or its result. Every
//! other request goes as before ([`crate::upstream::forward`]).
//!
//! For such a request, plain (`application/json`) or streamed
//! (`text/event-stream`), Anthropic Messages, Chat Completions or
//! Responses:
//!
//! 1. The request goes upstream (without the client's `Accept-Encoding`:
//!    the proxy reads the answer). An answer that is not a success, not
//!    JSON nor SSE, or has no `condense_recall` call reaches the client as
//!    it came: plain byte for byte, streamed event by event as it arrives
//!    (never held whole).
//! 2. An answer is cut at its first recall call (`recall/gate.rs`). After a
//!    call of the client's own tools the answer cannot go on — those calls'
//!    results are the client's — so its recall calls are dropped and it ends
//!    as the client's calls left it. Otherwise what came before the recall
//!    call is the client's, the rest of the round is read without passing
//!    any of it on (a client call after a recall call is the model's to make
//!    again), every recall call of the round is answered from the client's
//!    own request (`recall/calls.rs`: a handle resolves only against the
//!    history being answered, so no session reads another's; a call that
//!    cannot be answered gets a tool error saying why), and the upstream is
//!    called again with the same body plus the assistant's turn as the model
//!    gave it up to its recall calls (thinking and reasoning byte for byte;
//!    not the client calls) and the results. The body only grows at the end
//!    of its list — the bytes of the request before are all kept, around the
//!    ones added — so the provider's prompt cache serves the round.
//! 3. Rounds are bounded (`Recall::max_rounds` upstream calls beyond the
//!    first): the last one's recall calls are dropped and the answer ends
//!    there, as the protocol plainly ends an answer (`end_turn`, `stop`,
//!    `completed`). A request whose last message is the assistant's (a
//!    prefill) cannot take another assistant turn: its first round is the
//!    last.
//! 4. The client gets one well-formed answer: the rounds' content in order,
//!    the first round's id and model, the last round's end, the usage of
//!    all rounds summed (`recall/usage.rs`). Streamed, the later rounds'
//!    events are renumbered into the first's message (each protocol's
//!    module says how).
//! 5. An upstream that fails in a later round (unreachable, not a success,
//!    an answer of another kind, a stream that breaks off) ends the client's
//!    answer validly with what it already has, and the failure is logged:
//!    the client never gets half a message.
//!
//! What each request's recalls did is its [`Report`]: counted in the
//! metrics, logged with the request, and appended to the events file.

mod anthropic;
mod calls;
mod chat;
mod gate;
mod plain;
mod protocol;
mod responses;
mod sse;
mod stream;
mod usage;

use crate::route::Route;
use crate::upstream::{self, Answer, Upstream};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use condense_host::Recall;
use condense_host::formats::Format;
use condense_model::{Message, Role};
use gate::Unit;
use protocol::Protocol;
use serde::Serialize;
use serde_json::Value;

/// What the recall loop needs of a request condense gave the tool: the
/// request as the client sent it, and how much may be recalled.
#[derive(Clone, Debug)]
pub struct Recalling {
    /// The client's history: the one handles resolve against.
    pub history: Vec<Message>,
    pub settings: Recall,
    pub format: Format,
    /// Whose request it is, for the events file.
    pub agent: String,
    pub session: String,
}

/// What the recall loop did for one request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    pub agent: String,
    pub session: String,
    /// Upstream calls beyond the first.
    pub rounds: u32,
    /// The handles the model asked for, in order.
    pub handles: Vec<String>,
    /// Recall calls answered with text, and its estimated tokens.
    pub recalled: u32,
    pub tokens: u64,
    /// Recall calls answered with a tool error.
    pub errors: u32,
    /// Recall calls dropped (after a client call, or in the last round).
    pub dropped: u32,
    /// Why a later round failed, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The status the client was answered with.
    #[serde(skip)]
    pub status: u16,
}

/// Told the report once the client's answer is complete (a stream's once it
/// ended).
pub type Done = Box<dyn FnOnce(Report) + Send>;

/// Sends the request upstream, answering the model's recall calls itself,
/// and gives the client its one answer; `done` is told what it did.
pub async fn forward(
    client: &ureq::Agent,
    route: &Route,
    parts: Parts,
    body: Bytes,
    recalling: Recalling,
    done: Done,
) -> Response {
    let report = Report {
        agent: recalling.agent.clone(),
        session: recalling.session.clone(),
        ..Report::default()
    };
    // compress_body wrote the body: it is JSON. Were it not, it could not
    // be continued, and goes on as any other.
    let Ok(json) = serde_json::from_slice::<Value>(&body) else {
        let response = upstream::forward(client, route, parts, body).await;
        let status = response.status().as_u16();
        done(Report { status, ..report });
        return response;
    };
    // The proxy reads the answer: it asks for it unencoded.
    let upstream = Upstream::new(client, route, &parts).without("accept-encoding");
    let answer = match upstream.send(body.to_vec()).await {
        Ok(answer) => answer,
        Err(unreachable) => {
            done(Report {
                status: 502,
                ..report
            });
            return unreachable.into_response();
        }
    };
    let rounds = Rounds {
        protocol: protocol_of(recalling.format),
        // A later round is another request: a key that names the client's
        // one request must not make the provider answer it as the first.
        upstream: upstream.without("idempotency-key"),
        body: json,
        recalling,
        report: Report {
            status: answer.head.status.as_u16(),
            ..report
        },
        done,
    };
    match Shape::of(&answer) {
        Some(Shape::Json) => plain::answer(answer, rounds).await,
        Some(Shape::Sse) => stream::answer(answer, rounds),
        None => {
            rounds.finish(0, None);
            upstream::relay(answer)
        }
    }
}

/// The text of a plain answer of `format` ([`Protocol::text`]).
pub(crate) fn answer_text(format: Format, answer: &Value) -> String {
    protocol_of(format).text(answer)
}

fn protocol_of(format: Format) -> &'static dyn Protocol {
    match format {
        Format::Anthropic => &anthropic::Anthropic,
        Format::OpenAi => &chat::Chat,
        Format::Responses => &responses::Responses,
    }
}

/// The kinds of answers the loop reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Json,
    Sse,
}

impl Shape {
    /// The kind of a successful answer, by its content type; `None` for an
    /// error, another kind or an encoded body, which go on as they came.
    fn of(answer: &Answer) -> Option<Shape> {
        let head = &answer.head;
        let header = |name| head.headers.get(name).and_then(|v| v.to_str().ok());
        let encoded = header("content-encoding").is_some_and(|e| e != "identity");
        let kind = header("content-type").unwrap_or_default();
        if !head.status.is_success() || encoded {
            None
        } else if kind.starts_with("text/event-stream") {
            Some(Shape::Sse)
        } else if kind.contains("json") {
            Some(Shape::Json)
        } else {
            None
        }
    }
}

/// One client request's rounds: the body sent upstream, growing by a turn
/// and its results each round.
struct Rounds {
    protocol: &'static dyn Protocol,
    upstream: Upstream,
    body: Value,
    recalling: Recalling,
    report: Report,
    done: Done,
}

impl Rounds {
    /// Whether the round about to be read may be continued.
    fn may_continue(&self) -> bool {
        let prefilled = self.recalling.history.last().map(|m| m.role) == Some(Role::Assistant);
        self.report.rounds < self.recalling.settings.max_rounds && !prefilled
    }

    /// Answers the recall calls of `units` (a round the gate continues) and
    /// calls the upstream again with the body continued; `Err` says why
    /// that failed.
    async fn next(&mut self, units: &[Unit], expected: Shape) -> Result<Answer, String> {
        let results = self.answer_calls(units);
        let format = self.recalling.format;
        let mut entries = (self.protocol).turn(&self.body, gate::turn(units));
        entries.extend(protocol::results(format, results));
        let key = format.list_key();
        let Some(list) = self.body.get_mut(key).and_then(Value::as_array_mut) else {
            return Err(format!("the request has no `{key}` list"));
        };
        list.extend(entries);
        self.report.rounds += 1;
        let body = serde_json::to_vec(&self.body).expect("JSON serialises");
        let answer = (self.upstream.send(body).await)
            .map_err(|u| format!("the upstream {} cannot be reached: {}", u.url, u.why))?;
        if Shape::of(&answer) == Some(expected) {
            return Ok(answer);
        }
        let head = &answer.head;
        let kind = head
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok());
        Err(format!(
            "the upstream answered recall round {} with {} ({})",
            self.report.rounds,
            head.status,
            kind.unwrap_or("no content type")
        ))
    }

    /// The results of the recall calls of `units`, counted in the report.
    fn answer_calls(&mut self, units: &[Unit]) -> Vec<condense_model::ToolResult> {
        let calls: Vec<calls::RecallCall> = (units.iter())
            .filter(|u| u.kind == gate::Kind::Recall)
            .map(|u| self.protocol.call(&u.json))
            .collect();
        let (history, budget) = (
            &self.recalling.history,
            self.recalling.settings.budget_tokens,
        );
        let mut results = Vec::with_capacity(calls.len());
        for (result, answered) in calls::resolve(history, &calls, budget) {
            let report = &mut self.report;
            report.handles.extend(answered.handle);
            report.tokens += u64::from(answered.tokens);
            match answered.error {
                true => report.errors += 1,
                false => report.recalled += 1,
            }
            results.push(result);
        }
        results
    }

    /// The client's answer is complete: `dropped` recall calls were held
    /// back, and a later round failed if `failure` says so.
    fn finish(self, dropped: u32, failure: Option<String>) {
        let Rounds {
            mut report, done, ..
        } = self;
        if let Some(why) = &failure {
            tracing::warn!(
                target: "condense::proxy",
                agent = %report.agent,
                rounds = report.rounds,
                "recall: the answer ends early: {why}"
            );
        }
        report.dropped = dropped;
        report.failure = failure;
        done(report);
    }
}
