//! A plain (JSON) answer through the recall loop: each round's answer read
//! whole, the client's one answer put together from what the gate passed.
//! An answer without a recall call goes to the client byte for byte.

use super::gate::{Gate, Unit};
use super::protocol::End;
use super::{Rounds, Shape};
use crate::upstream::{self, Answer, Chunks};
use axum::body::Body;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;

/// The client's answer to a request whose first round answered `first`.
pub async fn answer(first: Answer, mut rounds: Rounds) -> Response {
    let Answer { head, chunks } = first;
    let bytes = match read(chunks).await {
        Ok(bytes) => bytes,
        Err(e) => {
            rounds.report.status = StatusCode::BAD_GATEWAY.as_u16();
            rounds.finish(0, None);
            let message = format!("condense proxy: the upstream's answer broke off: {e}\n");
            return (StatusCode::BAD_GATEWAY, message).into_response();
        }
    };
    let read = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|json| Some((rounds.protocol.units(&json)?, json)));
    let Some((units, json)) = read else {
        rounds.finish(0, None);
        return upstream::respond(&head, Body::from(bytes));
    };
    let mut gate = Gate::new(rounds.may_continue());
    let (kept, end, failure) = run(&mut rounds, &mut gate, units, &json).await;
    if gate.untouched() {
        rounds.finish(0, None);
        return upstream::respond(&head, Body::from(bytes));
    }
    let end = end.as_ref().map_or(End::Plain, End::As);
    let usage = gate.usage.with(None);
    let answer = rounds
        .protocol
        .assemble(&json, end, kept, usage, gate.client_called());
    rounds.finish(gate.dropped(), failure);
    upstream::respond(&head, Body::from(answer.to_string()))
}

/// The rounds from the first (`units` of `first`): what the client is sent
/// of them, the answer whose end is the client's (`None`: the plain end),
/// and why a later round failed, if one did.
async fn run(
    rounds: &mut Rounds,
    gate: &mut Gate,
    mut units: Vec<Unit>,
    first: &Value,
) -> (Vec<Value>, Option<Value>, Option<String>) {
    let mut kept = Vec::new();
    let mut answer = first.clone();
    loop {
        pass(gate, &mut units);
        if gate.untouched() {
            return (kept, Some(answer), None);
        }
        kept.extend(units.iter().filter(|u| u.passed).map(|u| u.json.clone()));
        if let Some(usage) = rounds.protocol.usage(&answer) {
            gate.usage.add(usage);
        }
        if !gate.continuing() {
            let end = (!gate.ending()).then_some(answer);
            return (kept, end, None);
        }
        match next(rounds, &units).await {
            Ok((next_units, next_answer)) => {
                gate.next_round(rounds.may_continue());
                (units, answer) = (next_units, next_answer);
            }
            Err(why) => return (kept, None, Some(why)),
        }
    }
}

/// Marks which of a round's `units` the client is sent.
fn pass(gate: &mut Gate, units: &mut [Unit]) {
    for (index, unit) in (0..).zip(units.iter_mut()) {
        let kind = unit.kind;
        unit.passed = gate.unit(index, || kind).is_some();
    }
}

/// The next round's answer, read whole.
async fn next(rounds: &mut Rounds, units: &[Unit]) -> Result<(Vec<Unit>, Value), String> {
    let answer = rounds.next(units, Shape::Json).await?;
    let bytes = read(answer.chunks)
        .await
        .map_err(|e| format!("the upstream's answer broke off: {e}"))?;
    let json: Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("the upstream's answer is not JSON: {e}"))?;
    let units = rounds
        .protocol
        .units(&json)
        .ok_or("the upstream's answer is not one of its protocol")?;
    Ok((units, json))
}

/// A whole answer body.
async fn read(mut chunks: Chunks) -> Result<Bytes, std::io::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = chunks.recv().await {
        body.extend_from_slice(&chunk?);
    }
    Ok(Bytes::from(body))
}
