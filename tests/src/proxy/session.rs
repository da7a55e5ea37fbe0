//! A coding session through a proxy whose upstream is a scripted model that
//! calls `condense_recall`: the client (a plain HTTP client speaking one
//! [`Wire`]) runs the model's shell calls, whose long outputs make condense
//! compact; once a request names recall handles, the model recalls them
//! (or whatever its [`Script`] says) and, in the round that carries the
//! results, checks them against the client's own history.

use super::wire::{Answer, Piece, SHELL, Turn, Wire};
use super::{KEY, RunningProxy};
use condense_host::formats::Parsed;
use condense_model::recall::{Span, TOOL_NAME, find};
use condense_model::{Message, Part, Role};
use condense_scripted_server::{Recorded, Reply, TestServer};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A config that compacts the sessions' requests — folds, and clears the
/// older results it keeps — and gives recalls room for everything a fold
/// took out.
pub const RECALL_CONFIG: &str = r#"token_threshold = 3000
target_tokens = 2000
keep_recent_tokens = 1000
clear_mode = "clear"
keep_tool_results = 1
result_char_threshold = 1000

[recall]
budget_tokens = 100000
"#;

/// The task the sessions start with.
pub const TASK: &str = "Fix the failing parser tests; the deploy key stays KEY-0451.";

/// The tokens each upstream answer reports: (input, output).
pub const USAGE: (u64, u64) = (100, 7);

/// The recall calls' inputs for the handles a request names.
pub type Recalls = Arc<dyn Fn(&[String]) -> Vec<Value> + Send + Sync>;

/// What the model does.
#[derive(Clone)]
pub struct Script {
    /// The recall calls' inputs for a request that names `handles` (none:
    /// it calls the shell instead).
    pub recalls: Recalls,
    /// Calls the shell before its recall calls.
    pub client_call_first: bool,
    /// Recalls again in the rounds that carry recall results.
    pub again: bool,
    /// The answer to a round that carries recall results, instead of going
    /// on (an upstream failing).
    pub failing: Option<Reply>,
}

impl Default for Script {
    fn default() -> Script {
        Script {
            recalls: Arc::new(|handles| {
                let fold = handles.iter().find(|h| h.starts_with('f'));
                let results = handles.iter().filter(|h| h.starts_with('r')).take(2);
                fold.into_iter()
                    .chain(results)
                    .map(|h| json!({"handle": h}))
                    .collect()
            }),
            client_call_first: false,
            again: false,
            failing: None,
        }
    }
}

/// A recall result the model got: the call's input, the text, whether it
/// is an error.
#[derive(Clone, Debug)]
pub struct Recalled {
    pub input: Value,
    pub content: String,
    pub is_error: bool,
}

/// The scripted model.
pub struct Model {
    wire: Wire,
    script: Script,
    /// The history of the client's request being answered, as condense
    /// reads it: what handles resolve against.
    pub history: Vec<Message>,
    /// Each recall call's input, by call id.
    pub asked: HashMap<String, Value>,
    /// The answer whose recall calls the next round carries results of, up
    /// to its last recall call.
    turn: Vec<Piece>,
    /// What the checks found wrong.
    pub problems: Vec<String>,
    /// Every recall result the model got.
    pub recalled: Vec<Recalled>,
    /// Rounds that carried recall results.
    pub recall_rounds: usize,
    answers: usize,
}

/// The first line of a recall call's id: the model tells its own calls by it.
const RECALL_ID: &str = "recall_";

impl Model {
    pub fn new(wire: Wire, script: Script) -> Model {
        Model {
            wire,
            script,
            history: Vec::new(),
            asked: HashMap::new(),
            turn: Vec::new(),
            problems: Vec::new(),
            recalled: Vec::new(),
            recall_rounds: 0,
            answers: 0,
        }
    }

    /// The answer to `request`.
    pub fn answer(&mut self, request: &Recorded) -> Reply {
        self.answers += 1;
        let n = self.answers;
        let body = &request.body;
        let results = self.wire.results(body);
        let recall_round = results.iter().any(|(id, ..)| id.starts_with(RECALL_ID));
        if recall_round {
            self.recall_rounds += 1;
            self.check_round(body, &results);
            if let Some(failing) = self.script.failing.clone() {
                return failing;
            }
        }
        let handles = if recall_round && !self.script.again {
            Vec::new()
        } else {
            named_handles(body)
        };
        let inputs = (self.script.recalls)(&handles);
        let shell = Piece::call(
            &format!("shell_{n}"),
            SHELL,
            json!({"command": format!("cargo test {n}")}),
        );
        let pieces = if inputs.is_empty() {
            vec![Piece::text("Running the tests."), shell]
        } else {
            let mut pieces = vec![
                Piece::Thinking {
                    text: format!("The summary lacks the details ({n})."),
                    signature: format!("c2lnbmF0dXJl-{n}"),
                },
                Piece::text("Let me look back."),
            ];
            if self.script.client_call_first {
                pieces.push(shell);
            }
            for (i, input) in inputs.into_iter().enumerate() {
                let id = format!("{RECALL_ID}{n}_{i}");
                self.asked.insert(id.clone(), input.clone());
                pieces.push(Piece::call(&id, TOOL_NAME, input));
            }
            pieces
        };
        let pieces = match self.wire.format {
            // Chat has no signed reasoning.
            condense_host::formats::Format::OpenAi => pieces
                .into_iter()
                .filter(|p| !matches!(p, Piece::Thinking { .. }))
                .collect(),
            _ => pieces,
        };
        self.turn = pieces.clone();
        self.wire.reply(n, &pieces, USAGE)
    }

    /// A round carrying recall results: it continues the model's last
    /// answer as the model gave it (but the client's calls), and each text
    /// is the original of what its handle covers, line for line.
    fn check_round(&mut self, body: &Value, results: &[(String, String, bool)]) {
        let turn: Vec<Piece> = self
            .turn
            .iter()
            .filter(|p| !matches!(p, Piece::Call { name, .. } if name == SHELL))
            .cloned()
            .collect();
        let expected = self.wire.turn(&turn);
        let list = body[self.wire.list_key()].as_array().unwrap();
        let before = list.len() - results_len(self.wire, results);
        let appended = &list[before.saturating_sub(expected.len())..before];
        if appended != expected.as_slice() {
            self.problems.push(format!(
                "{}: the turn continued is {appended:?}, not {expected:?}",
                self.wire.name()
            ));
        }
        for (id, content, is_error) in results {
            let Some(input) = self.asked.get(id).cloned() else {
                self.problems
                    .push(format!("a result for `{id}`, which no call made"));
                continue;
            };
            if !is_error && let Some(missing) = missing_line(&self.history, &input, content) {
                self.problems.push(format!(
                    "{}: the recall of {input} lacks `{missing}`:\n{content}",
                    self.wire.name()
                ));
            }
            self.recalled.push(Recalled {
                input,
                content: content.clone(),
                is_error: *is_error,
            });
        }
    }
}

/// How many list entries `results` take in `wire`'s requests.
fn results_len(wire: Wire, results: &[(String, String, bool)]) -> usize {
    match wire.format {
        condense_host::formats::Format::Anthropic => 1,
        _ => results.len(),
    }
}

/// The recall handles the request names (`condense_recall(handle="…")` in
/// the summary and the placeholders), in order, each once; none unless it
/// offers the tool.
pub fn named_handles(body: &Value) -> Vec<String> {
    let text = body.to_string();
    if !body["tools"].to_string().contains(TOOL_NAME) {
        return Vec::new();
    }
    let mut handles: Vec<String> = Vec::new();
    for (at, _) in text.match_indices("handle=") {
        let rest = text[at + "handle=".len()..].trim_start_matches(['\\', '"']);
        let handle: String = rest.chars().take(12).collect();
        let well_formed = handle.len() == 12
            && handle.starts_with(['f', 'r'])
            && handle[1..]
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase());
        if well_formed && !handles.contains(&handle) {
            handles.push(handle);
        }
    }
    handles
}

/// A line of what `input`'s handle covers in `history` that `content`
/// lacks, if any; the handle not found is a line missing too.
fn missing_line(history: &[Message], input: &Value, content: &str) -> Option<String> {
    let handle = input["handle"].as_str().unwrap_or_default();
    let covered = match find(history, handle) {
        Ok(Span::Fold { end }) => 0..end,
        Ok(Span::Message(i)) => i..i + 1,
        Err(e) => return Some(format!("(the handle: {e})")),
    };
    history[covered]
        .iter()
        .filter(|m| m.role != Role::System)
        .flat_map(|m| &m.parts)
        .flat_map(|part| match part {
            Part::Text(text) => text.lines().map(str::to_owned).collect(),
            Part::ToolResult(result) => result.content.lines().map(str::to_owned).collect(),
            Part::ToolCall(call) => vec![call.arguments.clone()],
            Part::Thinking(_) | Part::Opaque(_) => Vec::new(),
        })
        .find(|line| !content.contains(line.as_str()))
}

/// The long output of the shell call of turn `turn`.
pub fn output(turn: usize) -> String {
    (0..60)
        .map(|line| {
            format!("src/parser_{turn}.rs:{line}: warning: unused variable `token_{turn}_{line}`\n")
        })
        .collect()
}

/// The history of a session `turns` shell calls in, each answered: what a
/// request that compacts starts from.
pub fn worked(turns: usize) -> Vec<Turn> {
    let mut history = vec![Turn::User(TASK.into())];
    for turn in 0..turns {
        let id = format!("shell_w{turn}");
        let command = json!({"command": format!("cargo test w{turn}")});
        history.push(Turn::Assistant(vec![
            Piece::text("Running the tests."),
            Piece::call(&id, SHELL, command),
        ]));
        history.push(Turn::Results(vec![(id, output(turn))]));
    }
    history
}

/// A session of `turns` client requests through a proxy with `config`.
pub struct Session {
    pub wire: Wire,
    pub upstream: TestServer,
    pub proxy: RunningProxy,
    pub model: Arc<Mutex<Model>>,
    /// The client's requests, as it sent them.
    pub sent: Vec<Value>,
    /// Each answer, as the client read it, and its bytes.
    pub answers: Vec<(Answer, String)>,
    /// How many upstream calls each client request took.
    pub calls: Vec<usize>,
}

impl Session {
    /// Runs a session of `turns` requests from [`TASK`] through a proxy
    /// with `config`.
    pub fn run(wire: Wire, config: &str, script: Script, turns: usize) -> Session {
        let mut session = Session::new(wire, script, |upstream| {
            RunningProxy::in_memory(config, upstream)
        });
        session.play(&[Turn::User(TASK.into())], turns);
        session
    }

    /// A session whose proxy `serve` starts in front of the model.
    pub fn new(wire: Wire, script: Script, serve: impl FnOnce(&str) -> RunningProxy) -> Session {
        let model = Arc::new(Mutex::new(Model::new(wire, script)));
        let upstream = {
            let model = model.clone();
            TestServer::answering(move |request| lock(&model).answer(request))
        };
        let proxy = serve(&upstream.url(""));
        Session {
            wire,
            upstream,
            proxy,
            model,
            sent: Vec::new(),
            answers: Vec::new(),
            calls: Vec::new(),
        }
    }

    /// `turns` requests from `start`, the history before the first: the
    /// client runs every shell call the model asks for, and asks it to go
    /// on after an answer without one.
    pub fn play(&mut self, start: &[Turn], turns: usize) {
        let mut history = start.to_vec();
        for turn in 0..turns {
            let answer = self.post(&history);
            history.push(Turn::Assistant(answer.pieces.clone()));
            let calls = answer.calls();
            if calls.is_empty() {
                history.push(Turn::User("Go on.".into()));
            } else {
                let results = calls
                    .iter()
                    .map(|(id, _, _)| (id.to_string(), output(turn)));
                history.push(Turn::Results(results.collect()));
            }
        }
    }

    /// Tells the model the client's request `body` comes next (for a
    /// request the test sends itself).
    pub fn client_sends(&self, body: &Value) {
        let parsed = Parsed::parse(body.clone(), self.wire.format).unwrap();
        lock(&self.model).history = parsed.messages().to_vec();
    }

    /// Posts the client's request for `history`; its answer, read.
    fn post(&mut self, history: &[Turn]) -> Answer {
        let body = self.wire.request(history);
        self.client_sends(&body);
        let before = self.upstream.requests().len();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut request = agent.post(&self.proxy.url(self.wire.path()));
        request = match self.wire.format {
            condense_host::formats::Format::Anthropic => request
                .header("x-api-key", KEY)
                .header("anthropic-version", "2023-06-01"),
            _ => request.header("authorization", &format!("Bearer {KEY}")),
        };
        let mut response = request.send(body.to_string()).unwrap();
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap();
        assert_eq!(status, 200, "{}: {text}", self.wire.name());
        assert!(
            !text.contains(TOOL_NAME),
            "{}: the client sees a recall: {text}",
            self.wire.name()
        );
        let answer = self.wire.read(text.as_bytes());
        self.calls.push(self.upstream.requests().len() - before);
        self.sent.push(body);
        self.answers.push((answer.clone(), text));
        answer
    }
}

/// The model, whatever a panicking thread left of it.
pub fn lock(model: &Mutex<Model>) -> std::sync::MutexGuard<'_, Model> {
    model
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
