//! A scripted HTTP server for tests (a stand-in for a model provider): it answers each request with the next
//! [`Reply`] of its script and records what it was sent, so a test can
//! check both what a client made of an answer and what it put on the wire.
//!
//! One request per connection (every answer says `Connection: close`),
//! bound to `127.0.0.1:0`, on a thread of its own; dropping the server stops
//! it. A request after the script ran out gets a 500 that says so.

use serde_json::Value;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Answer with this status, these headers and this body.
    Answer {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Read the request, then never answer (keeping the connection open
    /// until the server stops): for timeouts.
    Hang,
    /// Wait, then give `reply`: a slow model.
    Late(Duration, Box<Reply>),
    /// A 200 `text/event-stream` answer in two parts: `first`, then — once
    /// `gate` is opened, or after [`Gate::PATIENCE`] — `rest`. The body has
    /// no length (the connection's close ends it), so anything between the
    /// server and the client that held the answer back until its end would
    /// keep `first` from the client until the gate gave up waiting.
    Streamed {
        first: String,
        gate: Gate,
        rest: String,
    },
}

/// What a [`Reply::Streamed`] waits on: opened by the test once its client
/// has read the first part.
#[derive(Clone, Debug, Default)]
pub struct Gate(Arc<(Mutex<Option<bool>>, Condvar)>);

impl Gate {
    /// How long the server waits for the gate before sending the rest anyway.
    pub const PATIENCE: Duration = Duration::from_secs(20);

    pub fn open(&self) {
        let (opened, changed) = &*self.0;
        lock(opened).get_or_insert(true);
        changed.notify_all();
    }

    /// Waits for [`open`](Gate::open), up to [`Gate::PATIENCE`].
    fn wait(&self) {
        let (opened, changed) = &*self.0;
        let guard = lock(opened);
        let (mut guard, _) = changed
            .wait_timeout_while(guard, Gate::PATIENCE, |o| o.is_none())
            .unwrap_or_else(PoisonError::into_inner);
        guard.get_or_insert(false);
    }

    /// Whether the gate was opened before the server gave up waiting (`None`
    /// while it is still waiting).
    pub fn opened_in_time(&self) -> Option<bool> {
        *lock(&self.0.0)
    }
}

/// What answers a request: the next [`Reply`] of a script, or a function of
/// the request (a model whose answer is built from its input).
enum Answers {
    Script(VecDeque<Reply>),
    Built(Box<dyn FnMut(&Recorded) -> Reply + Send>),
}

impl Reply {
    /// A JSON answer (`body` is sent as it is).
    pub fn json(status: u16, body: impl Into<String>) -> Reply {
        Reply::Answer {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
        }
    }

    /// This reply, given after `delay`.
    pub fn after(self, delay: Duration) -> Reply {
        Reply::Late(delay, Box::new(self))
    }

    /// The answer with one more header.
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Answer { headers, .. } = &mut self {
            headers.push((name.into(), value.into()));
        }
        self
    }
}

/// A request as the server read it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Names in lower case, in the order sent.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; `Value::Null` when it is not JSON.
    pub body: Value,
    /// The body as it came, byte for byte.
    pub raw: Vec<u8>,
}

impl Recorded {
    /// The value of header `name` (any case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct TestServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Starts a server answering with `script`, in order.
    pub fn start(script: impl IntoIterator<Item = Reply>) -> TestServer {
        TestServer::serve(Answers::Script(script.into_iter().collect()))
    }

    /// Starts a server answering every request with `answer(request)`.
    pub fn answering(answer: impl FnMut(&Recorded) -> Reply + Send + 'static) -> TestServer {
        TestServer::serve(Answers::Built(Box::new(answer)))
    }

    fn serve(mut answers: Answers) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("the listener's address");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (requests, stop) = (requests.clone(), stop.clone());
            std::thread::spawn(move || {
                // Connections of `Reply::Hang`, held open until the end.
                let mut hanging = Vec::new();
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(mut stream) = stream else { continue };
                    let Some(request) = read_request(&mut stream) else {
                        continue;
                    };
                    let mut reply = match &mut answers {
                        Answers::Script(script) => script.pop_front(),
                        Answers::Built(answer) => Some(answer(&request)),
                    };
                    lock(&requests).push(request);
                    while let Some(Reply::Late(delay, late)) = reply {
                        std::thread::sleep(delay);
                        reply = Some(*late);
                    }
                    match reply {
                        Some(Reply::Late(..)) => unreachable!("unwrapped above"),
                        Some(Reply::Hang) => hanging.push(stream),
                        Some(Reply::Answer {
                            status,
                            headers,
                            body,
                        }) => write_reply(&mut stream, status, &headers, &body),
                        Some(Reply::Streamed { first, gate, rest }) => {
                            let head = "HTTP/1.1 200 Scripted\r\ncontent-type: text/event-stream\r\n\
                                        connection: close\r\n\r\n";
                            let _ = stream.write_all(head.as_bytes());
                            let _ = stream.write_all(first.as_bytes());
                            let _ = stream.flush();
                            gate.wait();
                            let _ = stream.write_all(rest.as_bytes());
                            let _ = stream.flush();
                        }
                        None => write_reply(
                            &mut stream,
                            500,
                            &[],
                            r#"{"error": {"message": "test server: script exhausted"}}"#,
                        ),
                    }
                }
                drop(hanging);
            })
        };
        TestServer {
            addr,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.requests).clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
            && !std::thread::panicking()
        {
            panic!("the test server's thread panicked");
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Reads one request: request line, headers, a `Content-Length` body.
/// `None` for a connection that sent no complete request (the stop signal).
fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    // A client that stalls mid-request fails the test instead of hanging it.
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut words = line.split_whitespace();
    let (method, path) = (words.next()?.to_owned(), words.next()?.to_owned());
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .map_or(Some(0), |(_, value)| value.parse().ok())?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Recorded {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw: body,
    })
}

fn write_reply(stream: &mut TcpStream, status: u16, headers: &[(String, String)], body: &str) {
    let mut head = format!(
        "HTTP/1.1 {status} Scripted\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    // The client may have given up already (a test of its timeout).
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let _ = stream.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server itself, spoken to by hand: what the model tests rely on.
    #[test]
    fn answers_from_its_script_and_records_requests() {
        let server = TestServer::start([Reply::json(201, r#"{"a": 1}"#).with_header("x-k", "v")]);
        let mut stream = TcpStream::connect(server.addr).unwrap();
        let body = r#"{"q": true}"#;
        write!(
            stream,
            "POST /p?x=1 HTTP/1.1\r\nHost: h\r\nX-Api-Key: k1\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 201 "), "{answer}");
        assert!(answer.contains("\r\nx-k: v\r\n"), "{answer}");
        assert!(answer.ends_with("\r\n\r\n{\"a\": 1}"), "{answer}");

        let requests = server.requests();
        let [request] = requests.as_slice() else {
            panic!("{requests:?}")
        };
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/p?x=1")
        );
        assert_eq!(request.header("x-api-key"), Some("k1"));
        assert_eq!(request.body, serde_json::json!({"q": true}));

        // The script is used up: a 500 says so.
        let mut stream = TcpStream::connect(server.addr).unwrap();
        write!(stream, "GET / HTTP/1.1\r\n\r\n").unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 500 ") && answer.contains("script exhausted"));
    }
}
