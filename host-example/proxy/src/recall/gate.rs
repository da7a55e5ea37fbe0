//! What of each round reaches the client, the same for every protocol: an
//! answer is a sequence of units — an Anthropic content block, a Responses
//! output item, Chat's text or one of its tool calls — and the first
//! `condense_recall` call decides the rest of the round:
//!
//! - after a call of the client's own tools, the answer cannot go on (those
//!   calls are the client's to answer): the recall calls are held back and
//!   everything else passes (**dropping**);
//! - with rounds left, nothing more of the round passes, and the proxy
//!   answers the recall calls and calls the upstream again (**continuing**);
//! - in the last round nothing more passes either, and the answer ends there
//!   (**ending**).
//!
//! The units the client is sent are numbered in one sequence over all the
//! rounds, so the client reads one message.

use super::usage::Usage;
use condense_model::recall::TOOL_NAME;
use serde_json::Value;
use std::collections::HashMap;

/// What a unit is, for the recall loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A call of `condense_recall`: the proxy's to answer.
    Recall,
    /// A call of one of the client's tools: the client's to answer.
    ClientCall,
    /// Anything else: text, thinking, reasoning, a server tool's call.
    Other,
}

impl Kind {
    /// A tool call named `name`, which the client answers unless it is
    /// `condense_recall`.
    pub fn of_call(name: Option<&str>) -> Kind {
        match name {
            Some(TOOL_NAME) => Kind::Recall,
            _ => Kind::ClientCall,
        }
    }
}

/// One unit of a round's answer, as the model gave it (a streamed one put
/// together from its events), and whether the client was sent it.
#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    pub kind: Kind,
    pub json: Value,
    pub passed: bool,
}

impl Unit {
    pub fn new(kind: Kind, json: Value) -> Unit {
        Unit {
            kind,
            json,
            passed: false,
        }
    }
}

/// The assistant's turn that the next round continues: what the client
/// was sent of the round (all of it before the first recall call), then
/// the round's recall calls — not the client calls after them, which the
/// client never sees.
pub fn turn(units: &[Unit]) -> Vec<Value> {
    units
        .iter()
        .filter(|u| u.passed || u.kind == Kind::Recall)
        .map(|u| u.json.clone())
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// No recall call yet this round.
    Passing,
    /// Recall calls after a client call: held back, the rest passes.
    Dropping,
    /// Recall calls with rounds left: the rest of the round is held back.
    Continuing,
    /// Recall calls in the last round: held back, the answer ends before.
    Ending,
}

/// The recall loop's decisions for one client request, round by round.
#[derive(Debug)]
pub struct Gate {
    state: State,
    /// Whether this round may be continued: rounds are left, and the
    /// request can take one more assistant turn.
    may_continue: bool,
    round: u32,
    /// This round's units by the upstream's index: the client's index, or
    /// `None` for one held back.
    units: HashMap<u64, Option<usize>>,
    /// Units sent to the client, all rounds: the next one's index.
    sent: usize,
    /// Whether this round sent the client a call of its own tools.
    client_call: bool,
    /// Whether any round did.
    client_called: bool,
    /// Recall calls held back.
    dropped: u32,
    /// The usage of the rounds before this one.
    pub usage: Usage,
}

impl Gate {
    pub fn new(may_continue: bool) -> Gate {
        Gate {
            state: State::Passing,
            may_continue,
            round: 0,
            units: HashMap::new(),
            sent: 0,
            client_call: false,
            client_called: false,
            dropped: 0,
            usage: Usage::default(),
        }
    }

    /// The client's index of the unit the upstream numbers `index` this
    /// round (`None`: held back); the first time it is seen, it is opened
    /// as `kind`.
    pub fn unit(&mut self, index: u64, kind: impl FnOnce() -> Kind) -> Option<usize> {
        if let Some(&client) = self.units.get(&index) {
            return client;
        }
        let client = self.open(kind());
        self.units.insert(index, client);
        client
    }

    fn open(&mut self, kind: Kind) -> Option<usize> {
        match (self.state, kind) {
            (State::Passing | State::Dropping, Kind::Other | Kind::ClientCall) => {
                if kind == Kind::ClientCall {
                    self.client_call = true;
                    self.client_called = true;
                }
                self.sent += 1;
                Some(self.sent - 1)
            }
            (State::Passing, Kind::Recall) => {
                self.state = match (self.client_call, self.may_continue) {
                    (true, _) => State::Dropping,
                    (false, true) => State::Continuing,
                    (false, false) => State::Ending,
                };
                self.count_dropped();
                None
            }
            (State::Dropping | State::Ending, Kind::Recall) => {
                self.count_dropped();
                None
            }
            (State::Continuing | State::Ending, _) => None,
        }
    }

    fn count_dropped(&mut self) {
        if self.state != State::Continuing {
            self.dropped += 1;
        }
    }

    /// Whether what belongs to no unit (Chat's text, a keep-alive) passes.
    pub fn passing(&self) -> bool {
        matches!(self.state, State::Passing | State::Dropping)
    }

    /// Whether the proxy answers this round's recall calls and calls again:
    /// the round's end is held back.
    pub fn continuing(&self) -> bool {
        self.state == State::Continuing
    }

    /// Whether the answer ends before this round's recall calls: its end
    /// is the protocol's plain end of an answer.
    pub fn ending(&self) -> bool {
        self.state == State::Ending
    }

    /// Whether the answer is still the upstream's as it came: the first
    /// round, and no recall call in it so far.
    pub fn untouched(&self) -> bool {
        self.round == 0 && self.state == State::Passing
    }

    pub fn first_round(&self) -> bool {
        self.round == 0
    }

    /// Whether the client was sent a call of its own tools: its answer
    /// then ends asking for their results.
    pub fn client_called(&self) -> bool {
        self.client_called
    }

    /// Recall calls held back so far.
    pub fn dropped(&self) -> u32 {
        self.dropped
    }

    /// On to the next round, which may be continued or not.
    pub fn next_round(&mut self, may_continue: bool) {
        self.state = State::Passing;
        self.may_continue = may_continue;
        self.round += 1;
        self.units.clear();
        self.client_call = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kinds(gate: &mut Gate, kinds: &[Kind]) -> Vec<Option<usize>> {
        (0..)
            .zip(kinds)
            .map(|(i, &kind)| gate.unit(i, || kind))
            .collect()
    }

    #[test]
    fn the_first_recall_call_decides_the_rest_of_the_round() {
        use Kind::*;
        // Rounds left: what comes before passes, the rest is held back.
        let mut gate = Gate::new(true);
        assert!(gate.untouched());
        let got = kinds(&mut gate, &[Other, Other, Recall, ClientCall, Other]);
        assert_eq!(got, [Some(0), Some(1), None, None, None]);
        assert!(gate.continuing() && !gate.passing() && !gate.untouched());
        assert_eq!(gate.unit(1, || Recall), Some(1), "decided once a unit");
        // The next round is numbered on, and may end the answer.
        gate.next_round(false);
        let got = kinds(&mut gate, &[Other, Recall, Recall]);
        assert_eq!(got, [Some(2), None, None]);
        assert!(gate.ending() && !gate.client_called());
        assert_eq!(gate.dropped(), 2);

        // A client call first: only the recall calls are held back.
        let mut gate = Gate::new(true);
        let got = kinds(&mut gate, &[Other, ClientCall, Recall, ClientCall]);
        assert_eq!(got, [Some(0), Some(1), None, Some(2)]);
        assert!(gate.passing() && !gate.continuing() && gate.client_called());
        assert_eq!(gate.dropped(), 1);
    }

    #[test]
    fn the_turn_is_what_passed_then_the_recall_calls() {
        let unit = |kind, n: u32, passed| Unit {
            kind,
            json: json!(n),
            passed,
        };
        let units = [
            unit(Kind::Other, 0, true),
            unit(Kind::Recall, 1, false),
            unit(Kind::ClientCall, 2, false),
            unit(Kind::Other, 3, false),
            unit(Kind::Recall, 4, false),
        ];
        assert_eq!(turn(&units), [json!(0), json!(1), json!(4)]);
    }
}
