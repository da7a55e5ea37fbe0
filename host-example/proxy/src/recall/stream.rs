//! A streamed (SSE) answer through the recall loop: a task reads the rounds
//! one after the other, event by event as they arrive, and sends the client
//! what the protocol's reader makes of each, through a bounded channel (a
//! slow client slows the reading, as for any answer). The client's answer
//! starts with the first round's head as soon as it comes.

use super::gate::Gate;
use super::protocol::Stream;
use super::sse::Splitter;
use super::{Rounds, Shape};
use crate::upstream::{self, Answer, Chunks};
use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use tokio::sync::mpsc;

/// Events in flight to the client.
const EVENTS_IN_FLIGHT: usize = 16;

type Client = mpsc::Sender<Result<Bytes, std::io::Error>>;

/// The client's answer: the first round's head, and a body the rounds
/// are streamed into.
pub fn answer(first: Answer, rounds: Rounds) -> Response {
    let (client, events) = mpsc::channel(EVENTS_IN_FLIGHT);
    let response = upstream::respond(&first.head, Body::from_stream(upstream::stream(events)));
    tokio::spawn(run(first.chunks, rounds, client));
    response
}

/// How one round's stream ended.
enum Pumped {
    /// Its body ended.
    Ended,
    /// The client went away.
    Gone,
    /// The upstream's body broke off.
    Broke(std::io::Error),
    /// The upstream said it failed (an error event).
    Failed(String),
}

/// Every round, until the answer is the client's.
async fn run(mut chunks: Chunks, mut rounds: Rounds, client: Client) {
    let mut reader = rounds.protocol.stream();
    let mut gate = Gate::new(rounds.may_continue());
    let failure = loop {
        match pump(&mut chunks, &mut *reader, &mut gate, &client).await {
            Pumped::Ended => {}
            Pumped::Gone => return rounds.finish(gate.dropped(), None),
            // Still the upstream's answer as it came: the client sees it
            // break off, as it would without the proxy.
            Pumped::Broke(e) if gate.untouched() => {
                let _ = client.send(Err(e)).await;
                return rounds.finish(gate.dropped(), None);
            }
            Pumped::Broke(e) => break Some(format!("the upstream's answer broke off: {e}")),
            Pumped::Failed(why) => break Some(format!("the upstream failed: {why}")),
        }
        let untouched = gate.untouched();
        let (units, complete) = reader.end_round(&mut gate);
        if !gate.continuing() {
            let early = !complete && !untouched;
            break early.then(|| "the upstream's answer ended before its end".to_owned());
        }
        if !complete {
            break Some("the upstream's answer ended before its end".to_owned());
        }
        match rounds.next(&units, Shape::Sse).await {
            Ok(answer) => {
                chunks = answer.chunks;
                gate.next_round(rounds.may_continue());
            }
            Err(why) => break Some(why),
        }
    };
    if failure.is_some() {
        let mut out = Vec::new();
        reader.close(&gate, &mut out);
        for bytes in out {
            if client.send(Ok(bytes)).await.is_err() {
                break;
            }
        }
    }
    rounds.finish(gate.dropped(), failure);
}

/// One round's stream through `reader` to the client.
async fn pump(
    chunks: &mut Chunks,
    reader: &mut dyn Stream,
    gate: &mut Gate,
    client: &Client,
) -> Pumped {
    let mut splitter = Splitter::default();
    while let Some(chunk) = chunks.recv().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => return Pumped::Broke(e),
        };
        let mut out = Vec::new();
        let mut failed = None;
        for event in splitter.push(&chunk) {
            if let Err(why) = reader.event(event, gate, &mut out) {
                failed = Some(why);
                break;
            }
        }
        if !send(client, out).await {
            return Pumped::Gone;
        }
        if let Some(why) = failed {
            return Pumped::Failed(why);
        }
    }
    // Bytes after the last whole event: the upstream's, passed on only
    // while the answer is still as it came.
    let rest = splitter.rest().filter(|_| gate.untouched());
    if !send(client, rest.into_iter().collect()).await {
        return Pumped::Gone;
    }
    Pumped::Ended
}

/// Sends `out` to the client as one chunk; `false`: it went away.
async fn send(client: &Client, out: Vec<Bytes>) -> bool {
    if out.is_empty() {
        return true;
    }
    let chunk: Vec<u8> = out.concat();
    client.send(Ok(Bytes::from(chunk))).await.is_ok()
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::gate::Unit;
    use super::super::protocol::Protocol;
    use super::*;

    /// What a client gets when `protocol`'s reader is given `rounds`, each
    /// round's body whole, at most `max_rounds` beyond the first: the
    /// client's bytes and each round's units. When the last round given
    /// would be continued, the next one fails.
    pub fn replay(
        protocol: &dyn Protocol,
        rounds: &[String],
        max_rounds: u32,
    ) -> (String, Vec<Vec<Unit>>) {
        let mut reader = protocol.stream();
        let mut gate = Gate::new(max_rounds > 0);
        let (mut out, mut units) = (Vec::new(), Vec::new());
        for (round, body) in (0..).zip(rounds) {
            if round > 0 {
                gate.next_round(round < max_rounds);
            }
            for event in Splitter::default().push(body.as_bytes()) {
                reader.event(event, &mut gate, &mut out).unwrap();
            }
            let (round_units, complete) = reader.end_round(&mut gate);
            assert!(complete, "round {round} ends");
            units.push(round_units);
            if !gate.continuing() {
                return (String::from_utf8(out.concat()).unwrap(), units);
            }
        }
        reader.close(&gate, &mut out);
        (String::from_utf8(out.concat()).unwrap(), units)
    }

    /// An SSE body of `events`, each named by its `type` when `named`.
    pub fn body(events: &[serde_json::Value], named: bool) -> String {
        let name = |e: &serde_json::Value| e["type"].as_str().filter(|_| named).map(str::to_owned);
        events
            .iter()
            .map(|e| match (e.as_str(), name(e)) {
                (Some(text), _) => format!("data: {text}\n\n"),
                (None, Some(name)) => format!("event: {name}\ndata: {e}\n\n"),
                (None, None) => format!("data: {e}\n\n"),
            })
            .collect()
    }

    /// The JSON data of each event of an SSE text (`[DONE]` as a string).
    pub fn events(text: &str) -> Vec<serde_json::Value> {
        Splitter::default()
            .push(text.as_bytes())
            .iter()
            .map(|e| e.json().unwrap_or_else(|| e.data.clone().into()))
            .collect()
    }
}
