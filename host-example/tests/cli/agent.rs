//! `condense agent` against an OpenAI-compatible server of the test's (the
//! scripted server, on 127.0.0.1): the task done with real tools in a
//! working directory, the journal, the events, the agent's own tools classed
//! for the passes, and the LLM summarizer asking in the agent's own request.

use condense_host::events::Compaction;
use condense_host::prepared::PreparedUse;
use condense_model::{Message, SUMMARY_MARKER};
use condense_runtime::journal;
use condense_scripted_server::{Reply, TestServer};
use condense_tests::compaction_events;
use std::sync::{Arc, Mutex};

/// An OpenAI Chat Completions answer asking for one tool call.
fn tool_call_reply(id: &str, name: &str, arguments: serde_json::Value) -> Reply {
    let body = serde_json::json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant",
            "content": null,
            "tool_calls": [{"id": id, "type": "function", "function": {
                "name": name,
                "arguments": arguments.to_string(),
            }}],
        }}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 20,
                  "prompt_tokens_details": {"cached_tokens": 800}},
    });
    Reply::json(200, body.to_string())
}

/// `condense agent` against the scripted `server` with `config`, in
/// `workdir`, journaling to `session`, `extra` arguments before the task;
/// what it printed.
fn run_agent(
    config: &std::path::Path,
    server: &TestServer,
    workdir: &std::path::Path,
    session: &std::path::Path,
    extra: &[String],
    task: &str,
) -> String {
    let mut args: Vec<std::ffi::OsString> = [
        "condense",
        "agent",
        "--config",
        &config.display().to_string(),
        "--model-url",
        &server.url("/v1"),
        "--model",
        "scripted",
        "--workdir",
        &workdir.display().to_string(),
        "--session",
        &session.display().to_string(),
    ]
    .map(Into::into)
    .into();
    args.extend(extra.iter().map(Into::into));
    args.push(task.into());
    let mut out = Vec::new();
    condense_cli::cli::run(args, &mut std::io::empty(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// `condense agent` against an OpenAI-compatible server this test starts on
/// 127.0.0.1, answering from a script: it reads a long file again and again
/// (so that the requests outgrow a low threshold and condense compacts
/// them), tries a file outside its working directory (refused), edits the
/// file, and answers. The edit is made, the journal holds the whole session
/// and replays, and the server saw compacted requests.
#[test]
fn condense_agent_completes_a_task_against_an_openai_compatible_server() {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("work");
    std::fs::create_dir(&workdir).unwrap();
    let notes: String = (0..120)
        .map(|i| {
            format!("note {i}: the deploy script restarts the queue worker after migrations\n")
        })
        .collect();
    std::fs::write(workdir.join("notes.txt"), &notes).unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "do not read\n").unwrap();
    let config = dir.path().join("condense.toml");
    std::fs::write(&config, "token_threshold = 4000\n").unwrap();
    let session = dir.path().join("session.jsonl");
    let events = dir.path().join("events.jsonl");

    let read =
        |id: &str| tool_call_reply(id, "read_file", serde_json::json!({"path": "notes.txt"}));
    let mut script: Vec<Reply> = (0..6).map(|i| read(&format!("r{i}"))).collect();
    script.push(tool_call_reply(
        "s1",
        "read_file",
        serde_json::json!({"path": secret.display().to_string()}),
    ));
    script.push(tool_call_reply(
        "e1",
        "edit_file",
        serde_json::json!({"path": "notes.txt", "old_text": "note 7:", "new_text": "NOTE SEVEN:"}),
    ));
    script.push(Reply::json(
        200,
        serde_json::json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "Renamed note 7."}}]})
        .to_string(),
    ));
    let server = TestServer::start(script);

    let out = run_agent(
        &config,
        &server,
        &workdir,
        &session,
        &["--events".into(), events.display().to_string()],
        "rename note 7 in notes.txt",
    );

    assert!(out.contains("Renamed note 7."), "{out}");
    assert!(out.contains("→ edit_file("), "{out}");
    assert!(out.contains("outside the working directory"), "{out}");
    assert!(out.contains("9 model calls"), "{out}");
    // Printed as they happened: the calls and compactions before the answer.
    let answer_at = out.find("Renamed note 7.").unwrap();
    assert!(out.find("→ read_file(").unwrap() < answer_at);
    assert!(
        out.find("⋯ condense compacted the request")
            .is_some_and(|at| at < answer_at),
        "{out}"
    );
    let edited = std::fs::read_to_string(workdir.join("notes.txt")).unwrap();
    assert!(edited.contains("NOTE SEVEN:") && !edited.contains("note 7:"));

    // The journal: the whole session, compactions recorded, the refusal an
    // error result.
    let journaled = journal::read(&session).unwrap();
    assert!(journaled.torn.is_empty());
    let messages: Vec<Message> = journaled.messages().cloned().collect();
    assert_eq!(
        messages.len(),
        1 + 9 * 2 - 1,
        "task, 8 calls and results, answer"
    );
    let refused = messages
        .iter()
        .flat_map(|m| m.tool_results())
        .find(|r| r.call_id == "s1")
        .unwrap();
    assert!(refused.is_error && refused.content.contains("outside the working directory"));
    assert!(
        !compaction_events(&journaled.events).is_empty(),
        "{:?}",
        journaled.events
    );
    // --events: the same compaction events, one JSON line each, every field
    // there (trigger, tokens, folded, passes, summarizer, breaks, time).
    let logged: Vec<Compaction> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let journaled_events: Vec<Compaction> = compaction_events(&journaled.events)
        .into_iter()
        .cloned()
        .collect();
    assert_eq!(logged, journaled_events);
    let first = std::fs::read_to_string(&events).unwrap();
    for field in [
        "\"trigger\":\"threshold\"",
        "\"tokens_before\"",
        "\"tokens_after\"",
        "\"messages_folded\"",
        "\"passes\"",
        "\"summary_by\"",
        "\"cache_breaks\"",
        "\"elapsed_us\"",
    ] {
        assert!(
            first.lines().next().unwrap().contains(field),
            "{field}: {first}"
        );
    }

    // What the server was sent: later requests carry condense's summary
    // instead of the early reads, and none is larger than the threshold
    // allows by much.
    let requests = server.requests();
    assert_eq!(requests.len(), 9);
    // The system prompt is compiled from its blocks: the persona, the
    // working directory as it was at the start, the task.
    let system = &requests[0].body["messages"][0];
    assert_eq!(system["role"], "system");
    let prompt = system["content"].as_str().unwrap();
    for part in [
        "## Persona\n",
        "## Workspace\n",
        "notes.txt",
        "## Task\nrename note 7",
    ] {
        assert!(prompt.contains(part), "{part}: {prompt}");
    }
    let last = &requests[8].body;
    assert!(
        last["messages"].to_string().contains(SUMMARY_MARKER),
        "{last}"
    );
    // The agent's five tools and `condense_recall`.
    assert!(
        last["tools"].as_array().is_some_and(|t| t.len() == 6),
        "{last}"
    );
    assert!(
        last["messages"].as_array().unwrap().len() < messages.len(),
        "the request is compacted, the journal is not"
    );

    // The journal replays: `condense replay` reads it as a session.
    let mut replayed = Vec::new();
    let args = [
        "condense".to_owned(),
        "replay".into(),
        "--config".into(),
        config.display().to_string(),
        session.display().to_string(),
    ];
    condense_cli::cli::run(args.map(Into::into), &mut std::io::empty(), &mut replayed).unwrap();
    let replayed = String::from_utf8(replayed).unwrap();
    assert!(replayed.contains("session.jsonl"), "{replayed}");
}

/// `condense agent` offers `condense_recall`: a scripted model reads a
/// file, reads another until the request compacts and the first read is
/// folded, then calls `condense_recall` with the handle the summary names
/// and a query, and gets the file's line back, read from the journal. The
/// call and its result are journaled like any other.
#[test]
fn condense_agent_recalls_a_folded_files_content_from_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("work");
    std::fs::create_dir(&workdir).unwrap();
    let keys = "service: billing\nthe migration key is K-7731-QX\nowner: ops\n";
    std::fs::write(workdir.join("keys.txt"), keys).unwrap();
    let filler: String = (0..120)
        .map(|i| format!("line {i}: the queue worker restarts after each deploy\n"))
        .collect();
    std::fs::write(workdir.join("filler.txt"), &filler).unwrap();
    let config = dir.path().join("condense.toml");
    std::fs::write(&config, "token_threshold = 4000\n").unwrap();
    let session = dir.path().join("session.jsonl");

    let handle_re = |text: &str| -> Option<String> {
        let at = text.find("condense_recall(handle=\\\"")? + "condense_recall(handle=\\\"".len();
        Some(text[at..at + 12].to_owned())
    };
    let recalled = Arc::new(Mutex::new(None::<String>));
    let seen = recalled.clone();
    let mut step = 0;
    let server = TestServer::answering(move |request| {
        step += 1;
        let text = request.body.to_string();
        if let Some(result) = seen.lock().unwrap().as_ref() {
            assert!(text.contains(&result.replace('\n', "\\n")) || text.contains("K-7731-QX"));
            return Reply::json(
                200,
                serde_json::json!({"choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "The key is K-7731-QX."}}]})
                .to_string(),
            );
        }
        let folded = handle_re(&text);
        match (step, folded) {
            (1, _) => tool_call_reply("k1", "read_file", serde_json::json!({"path": "keys.txt"})),
            (_, Some(handle)) => {
                *seen.lock().unwrap() = Some(handle.clone());
                tool_call_reply(
                    "rc1",
                    "condense_recall",
                    serde_json::json!({"handle": handle, "query": "migration key"}),
                )
            }
            (n, None) if n < 12 => tool_call_reply(
                &format!("f{n}"),
                "read_file",
                serde_json::json!({"path": "filler.txt"}),
            ),
            _ => Reply::json(500, "the request never compacted"),
        }
    });

    let out = run_agent(
        &config,
        &server,
        &workdir,
        &session,
        &[],
        "what is the migration key?",
    );
    assert!(out.contains("The key is K-7731-QX."), "{out}");
    assert!(out.contains("→ condense_recall("), "{out}");

    // The recall's result, journaled: the line of the folded file, from the
    // journal's own copy of the read.
    let journaled = journal::read(&session).unwrap();
    let messages: Vec<Message> = journaled.messages().cloned().collect();
    let result = messages
        .iter()
        .flat_map(|m| m.tool_results())
        .find(|r| r.call_id == "rc1")
        .expect("the recall is journaled");
    assert!(!result.is_error, "{}", result.content);
    assert!(
        result.content.contains("the migration key is K-7731-QX"),
        "{}",
        result.content
    );
    assert!(
        !result.content.contains("queue worker"),
        "the query narrows"
    );
    // The handle the summary named covers the fold, keys.txt's read in it.
    let handle = recalled.lock().unwrap().clone().unwrap();
    let span = condense_model::recall::find(&messages, &handle).unwrap();
    let condense_model::recall::Span::Fold { end } = span else {
        panic!("{span:?}");
    };
    assert!(
        messages[..end]
            .iter()
            .any(|m| m.tool_results().any(|r| r.call_id == "k1"))
    );
    // The request the answer was made from no longer holds the file: the
    // recall gave it back.
    let requests = server.requests();
    let before_recall = &requests[requests.len() - 2].body;
    assert!(
        !before_recall["messages"]
            .to_string()
            .contains("service: billing")
    );
}

/// The agent's tools are classed by its tool registry, not by the config
/// file: with `[tools]` lists that name none of them, a long run of
/// `write_file` steps is still an edit loop, which the developer-loop pass
/// aggregates when condense compacts, on the wire and in the events.
#[test]
fn the_agents_own_tools_are_classed_for_the_passes() {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("work");
    std::fs::create_dir(&workdir).unwrap();
    let config = dir.path().join("condense.toml");
    // A target close to the threshold: eliding a few steps is compaction
    // enough, so the passes' rewrite is what the model is sent. At the
    // threshold: the `cost` rule would fold to the floor instead, the
    // cheaper compaction here (a free summary, and it leaves far less).
    std::fs::write(
        &config,
        "token_threshold = 4000\ntarget_tokens = 3000\ncompact_when = \"threshold\"\n\
         aggregate_developer_loops = true\nmax_loop_steps_before_aggregate = 3\n\
         [tools]\nmutating = [\"Edit\"]\nexec_capable = [\"Bash\"]\n",
    )
    .unwrap();
    let session = dir.path().join("session.jsonl");
    let content: String = (0..30)
        .map(|i| format!("line {i}: the queue worker restarts after each migration\n"))
        .collect();
    let mut script: Vec<Reply> = (0..12)
        .map(|i| {
            tool_call_reply(
                &format!("w{i}"),
                "write_file",
                serde_json::json!({"path": format!("part{i}.txt"), "content": content}),
            )
        })
        .collect();
    script.push(condense_tests::chat_answer("Wrote twelve parts."));
    let server = TestServer::start(script);

    let out = run_agent(&config, &server, &workdir, &session, &[], "write the parts");
    assert!(out.contains("Wrote twelve parts."), "{out}");

    let journaled = journal::read(&session).unwrap();
    let events = compaction_events(&journaled.events);
    assert!(
        events.iter().any(|e| e.passes.steps_elided > 0),
        "{events:?}"
    );
    assert!(
        server.requests().iter().any(|r| r.body["messages"]
            .to_string()
            .contains("edit/run loop elided here (write_file ×")),
        "no request had write_file steps elided"
    );
}

/// A directory for a session: `work/notes.txt` of `lines` notes, and where
/// the journal goes.
fn notes_session(lines: usize) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("work");
    std::fs::create_dir(&workdir).unwrap();
    let notes: String = (0..lines)
        .map(|i| format!("note {i}: the queue worker restarts after each migration\n"))
        .collect();
    std::fs::write(workdir.join("notes.txt"), &notes).unwrap();
    let session = dir.path().join("session.jsonl");
    (dir, workdir, session)
}

/// A config in `dir`: a 4,000-token threshold, summaries by the LLM
/// summarizer asking `server`'s model (the agent's), then the heuristic one.
fn llm_config(dir: &std::path::Path, server: &TestServer) -> std::path::PathBuf {
    let config = dir.join("condense.toml");
    let text = format!(
        "token_threshold = 4000\n\
         [components]\nsummarizers = [\"llm\", \"heuristic\"]\n\
         [llm]\nbase_url = \"{}\"\nmodel = \"scripted\"\n",
        server.url("/v1")
    );
    std::fs::write(&config, text).unwrap();
    config
}

/// The model's answers: `times` reads of notes.txt, then `answer`.
fn reading_notes(times: usize, answer: &str) -> std::collections::VecDeque<Reply> {
    let read =
        |id: &str| tool_call_reply(id, "read_file", serde_json::json!({"path": "notes.txt"}));
    let mut script: std::collections::VecDeque<Reply> =
        (0..times).map(|i| read(&format!("r{i}"))).collect();
    script.push_back(condense_tests::chat_answer(answer));
    script
}

/// `condense agent` with the LLM summarizer asking the agent's own model
/// (`[llm]` is the agent's server and model): each summarizer request is
/// the agent's last request — its system prompt, its tools, the messages
/// the compaction folds, exactly as the agent's client sent them — with the
/// instruction appended, so a provider's prompt cache serves all but the
/// instruction. The summary then reaches the agent's next request.
#[test]
fn the_llm_summarizer_asks_in_the_agents_own_request() {
    let (dir, workdir, session) = notes_session(120);
    let mut script = reading_notes(8, "Read it eight times.");
    let summaries = Arc::new(Mutex::new(0));
    let counter = summaries.clone();
    let server = TestServer::answering(move |request| {
        if condense_tests::asks_for_a_summary(&request.body) {
            let mut n = counter.lock().unwrap();
            *n += 1;
            condense_tests::chat_answer(&format!("## Current task\n- llm summary {n}"))
        } else {
            script.pop_front().expect("the script has an answer left")
        }
    });
    let config = llm_config(dir.path(), &server);

    let out = run_agent(
        &config,
        &server,
        &workdir,
        &session,
        &[],
        "read notes.txt until you know it",
    );
    assert!(out.contains("Read it eight times."), "{out}");

    let requests = server.requests();
    let asked: Vec<usize> = (0..requests.len())
        .filter(|&i| condense_tests::asks_for_a_summary(&requests[i].body))
        .collect();
    assert!(!asked.is_empty(), "the summarizer asked the model");
    assert_eq!(*summaries.lock().unwrap(), asked.len());
    for &at in &asked {
        // The agent's request before it, and the summarizer's.
        let (agents, ours) = (&requests[at - 1].body, &requests[at].body);
        assert_eq!(ours["model"], agents["model"]);
        assert_eq!(ours["tools"], agents["tools"], "the agent's tools");
        let theirs = agents["messages"].as_array().unwrap();
        let ours = ours["messages"].as_array().unwrap();
        let prefix = &ours[..ours.len() - 1];
        assert_eq!(prefix[0]["role"], "system");
        // What it folds, up to all of the agent's last request.
        assert!(prefix.len() > 2 && prefix.len() <= theirs.len());
        assert!(
            prefix == &theirs[..prefix.len()],
            "request {at}: the summarizer's prefix is not the agent's"
        );
    }
    // A later compaction updates the first summary: its pair, as the agent
    // sent it, is in the prefix.
    assert!(asked.len() >= 2, "{asked:?}");
    let second = requests[asked[1]].body["messages"].to_string();
    assert!(second.contains("llm summary 1"));
    // The summary the model wrote is what the agent saw next.
    let next = requests[asked[0] + 1].body["messages"].to_string();
    assert!(next.contains("llm summary 1"), "{next:.400}");
    let journaled = journal::read(&session).unwrap();
    let events = compaction_events(&journaled.events);
    assert!(!events.is_empty());
    assert!(
        events
            .iter()
            .all(|e| e.summary_by.as_deref() == Some("llm")),
        "{events:?}"
    );
}

/// With `--prepare-ahead`, each compaction's summary is written by the LLM
/// summarizer on a thread while the agent goes on: the compactions find it
/// written, and the agent finishes its task. (Without the flag, no event
/// says `prepared`.)
#[test]
fn with_prepare_ahead_the_compactions_find_their_summaries_written() {
    // A read is an eighth of the threshold: a compaction every few calls.
    let (dir, workdir, session) = notes_session(30);
    let mut script = reading_notes(24, "Read it 24 times.");
    let server = TestServer::answering(move |request| {
        if condense_tests::asks_for_a_summary(&request.body) {
            condense_tests::chat_answer("## Current task\n- read notes.txt (llm summary)")
        } else {
            // The model takes a moment, in which the job writes.
            let reply = script.pop_front().expect("the script has an answer left");
            reply.after(std::time::Duration::from_millis(150))
        }
    });
    let config = llm_config(dir.path(), &server);
    let out = run_agent(
        &config,
        &server,
        &workdir,
        &session,
        &["--prepare-ahead".into()],
        "read notes.txt until you know it",
    );
    assert!(out.contains("Read it 24 times."), "{out}");
    let journaled = journal::read(&session).unwrap();
    let events = compaction_events(&journaled.events);
    assert!(events.len() >= 2, "{events:?}");
    assert!(
        events
            .iter()
            .all(|e| e.summary_by.as_deref() == Some("llm")),
        "{events:?}"
    );
    // Each found its prepared summary (at this small threshold, for the
    // plan's part, the rest written on top of it).
    assert!(
        events.iter().all(|e| matches!(
            e.prepared,
            Some(PreparedUse::Used | PreparedUse::Waited { .. } | PreparedUse::OnTop)
        )),
        "{events:?}"
    );
}
