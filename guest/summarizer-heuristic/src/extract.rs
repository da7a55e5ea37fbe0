//! Pulling facts out of the folded messages.
//!
//! Tools differ between agents, so nothing here depends on tool names: a call
//! is understood by its argument keys (a `command` is run, a `file_path` is
//! touched, `todos` is a todo list) and a result by its content. Tool names
//! only appear as labels.

use std::borrow::Cow;
use std::collections::HashMap;

use condense_model::tokens::text_millis;
use condense_model::{Message, Part, Role, ToolCall, ToolResult};

use crate::code;
use crate::digest::{Digest, FixedState, STATUS_SEPARATOR, Status, Todo, add};
use crate::statements;
use crate::text::{cut_to_fit, one_line, strip_reminders, tidy_block};
use serde_json::Value;

/// A request longer than this keeps only its head: the summary must leave room
/// for everything else, and the opening of a long paste carries the ask.
pub const REQUEST_MAX_MILLIS: u64 = 200_000;
const COMMAND_MAX_CHARS: usize = 200;
const PATH_MAX_CHARS: usize = 300;
const ERROR_MAX_CHARS: usize = 200;
const TODO_MAX_CHARS: usize = 200;
/// Test runs repeat their failures; a few distinct lines per result say
/// enough (each is a line the agent may search for again, so not too few).
const ERRORS_PER_RESULT: usize = 8;
/// The first sentences of an assistant text state its point and the last its
/// conclusion; the rest explain.
const DECISIONS_PER_TEXT: usize = 3;
/// Sentences outside this range (thousandths of a token) are fragments or
/// explanations rather than decisions.
const DECISION_MILLIS: std::ops::RangeInclusive<u64> = 5_000..=60_000;
/// Outcome of a command whose result is not among the folded messages.
const NO_RESULT: &str = "no result";
/// A command's output of at most this many lines is a finding (a value, a
/// setting, an id): longer output is a log, a listing or a file.
const FOUND_OUTPUT_LINES: usize = 8;
/// The most lines of a short output an outcome carries, and the most
/// characters of each.
const FOUND_LINES: usize = 4;
const FOUND_LINE_MAX_CHARS: usize = 100;

/// Adds what `messages` show to `digest`, in message order.
pub fn absorb(digest: &mut Digest, messages: &[Message]) {
    // Call id → the command the call runs (None: not a command), until its
    // result arrives. Commands are recorded with their outcome, so at the result.
    let mut open: HashMap<&str, Option<String>, FixedState> = HashMap::default();
    let mut commands_in_order: Vec<&str> = Vec::new();
    // Calls that hand a task to another agent (a `prompt` argument).
    let mut delegated: Vec<&str> = Vec::new();
    // What each file is known to hold, from the reads and writes so far.
    let mut texts = code::FileTexts::default();
    for message in messages {
        // condense's own summary message is not a user request; its content
        // arrives as `previous_summary`.
        if message.is_condense_summary() {
            continue;
        }
        if message.role == Role::User
            && let Some(request) = request(&message.joined_text())
        {
            add(&mut digest.requests, request.clone(), 1);
            // A notice the harness wrote after the person's latest request is
            // no new task: that request stays last, the current task.
            if by_harness(&request)
                && let Some(current) = current_request(digest).cloned()
            {
                add(&mut digest.requests, current, 0);
            }
            for sentence in said(&request) {
                if let Some(statement) = statements::binding(sentence, &digest.binding) {
                    let new = statement.clone();
                    if let Some(old) = statements::add(&mut digest.binding, statement) {
                        forget(digest, &old, &new);
                    }
                }
            }
        }
        for part in &message.parts {
            match part {
                Part::Text(text) if message.role == Role::Assistant => {
                    for decision in decisions(text) {
                        add(&mut digest.decisions, decision, 1);
                    }
                    for name in code::code_spans(text) {
                        add(&mut digest.names, name.to_owned(), 1);
                    }
                    if let Some(next) = next_step(text) {
                        digest.next = Some(next);
                    }
                }
                Part::ToolCall(call) => {
                    if delegates(call) {
                        delegated.push(&call.id);
                    }
                    let command = read_call(digest, call, &mut texts);
                    if command.is_some() {
                        commands_in_order.push(&call.id);
                    }
                    open.insert(&call.id, command);
                }
                Part::ToolResult(result) => {
                    let command = open.remove(result.call_id.as_str()).flatten();
                    // A sub-agent's report is findings, as the assistant's
                    // own text is.
                    if delegated.contains(&result.call_id.as_str()) {
                        for finding in report_findings(&result.content) {
                            add(&mut digest.decisions, finding, 1);
                        }
                    }
                    texts.result(&result.call_id, &result.content, result.is_error);
                    read_result(digest, result, command);
                }
                _ => {}
            }
        }
    }
    for id in commands_in_order {
        if let Some(Some(command)) = open.remove(id) {
            add(&mut digest.commands, (command, NO_RESULT.to_owned()), 1);
        }
    }
}

/// The sentences of a request the person said: not a harness speaking as
/// the user (`<task-notification>…`, `[Request interrupted …]`), not the
/// code, tables and quotes of a pasted document nor anything after its first
/// heading, and only its opening lines (a long paste is a document, not
/// instructions).
pub(crate) fn said(request: &str) -> Vec<&str> {
    const SAID_LINES: usize = 20;
    if by_harness(request) {
        return Vec::new();
    }
    let mut in_code = false;
    let mut out = Vec::new();
    for line in request
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(SAID_LINES)
    {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        // A heading starts a pasted document (a skill, a spec): what the
        // person said came before it.
        if line.starts_with('#') && !in_code {
            break;
        }
        if in_code || line.starts_with(['|', '>', '<', '`']) {
            continue;
        }
        out.extend(sentences(strip_list_marker(line)));
    }
    out
}

/// Whether a harness wrote `request` in the person's place: tagged
/// (`<task-notification>`) or a bracketed line (`[Request interrupted by
/// user]`, and the lines [`harness_written`] makes). A person's label in
/// brackets ("[RULE] never paste tokens into logs") opens a line the person
/// goes on writing.
pub(crate) fn by_harness(request: &str) -> bool {
    let first = request.lines().next().unwrap_or_default().trim_end();
    request.starts_with('<') || (first.starts_with('[') && first.ends_with(']'))
}

/// Whether a request, said `count` times, says nothing to keep: a harness's
/// notice, a few words with nothing binding in them ("continue", "ok, go
/// on"), or a line said again and again with nothing binding in it
/// ("Looking at the logs again."): repetition is routine, not importance.
pub(crate) fn routine(request: &str, count: u32) -> bool {
    let few_words = request.split_whitespace().count() <= 4 && !request.contains('\n');
    by_harness(request) || (few_words || count >= 2) && !binds(request)
}

fn binds(request: &str) -> bool {
    said(request)
        .iter()
        .any(|s| statements::binding(s, &[]).is_some())
}

/// Whether a request was said again and again with nothing binding in it.
fn repeated(request: &str, count: u32) -> bool {
    count >= 2 && !binds(request)
}

/// The words of a request that only says "go on", in the languages the
/// framing speaks: a closed class, as function words are.
#[rustfmt::skip]
const GO_ON_WORDS: &[&str] = &[
    "continue", "go", "on", "ahead", "proceed", "keep", "going", "carry", "resume", "next",
    "yes", "yep", "yeah", "y", "ok", "okay", "k", "sure", "fine", "good", "great", "right",
    "alright", "please", "pls", "thanks", "do", "it", "that", "then", "so", "now", "and",
    "weiter", "mach", "ja", "bitte", "continuez", "vas-y", "oui", "allez",
    "continúa", "continua", "sigue", "sí", "si", "vale", "adelante", "continuar", "segue",
    "sim", "vai", "avanti", "продолжай", "продолжайте", "дальше", "да", "давай",
];

/// The same for languages written without spaces, as whole requests.
const GO_ON_UNSPACED: &[&str] = &["继续", "続けて", "続けてください", "계속", "계속해"];

/// Whether `request` only tells the agent to go on ("continue", "ok, go
/// on", "yes please"): it carries on the task before it.
fn goes_on(request: &str) -> bool {
    let words: Vec<String> = request
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let bare = request.trim().trim_end_matches(['.', '!', '。', '！']);
    !words.is_empty() && words.iter().all(|w| GO_ON_WORDS.contains(&w.as_str()))
        || GO_ON_UNSPACED.contains(&bare)
}

/// The person's latest request in `digest`: the current task. A notice a
/// harness wrote after it is not one, nor a request that only says go on
/// ("continue"), nor a line said again and again ("Looking at the logs
/// again." ×6): the task is still the one before. When there is nothing
/// else, the latest the person wrote.
pub(crate) fn current_request(digest: &Digest) -> Option<&String> {
    let written = || digest.requests.iter().filter(|(text, _)| !by_harness(text));
    written()
        .filter(|(text, count)| !repeated(text, **count) && !goes_on(text))
        .last()
        .or_else(|| written().last())
        .map(|(text, _)| text)
}

/// How many sentences `request` has, pasted documents and all.
pub(crate) fn sentence_count(request: &str) -> usize {
    request
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| sentences(strip_list_marker(l)).count())
        .sum()
}

/// A call that hands work to another agent: it has a `prompt` argument.
fn delegates(call: &ToolCall) -> bool {
    serde_json::from_str::<Value>(&call.arguments)
        .ok()
        .and_then(|args| args.get("prompt").map(Value::is_string))
        .unwrap_or(false)
}

/// What a sub-agent's report found, without the harness's bookkeeping
/// around it (`agentId: …`, `<usage>…</usage>`): its title, its first
/// statement, and its conclusion — the opening statements of its last
/// section headed as one ("Key insights", "Summary", "Conclusion"), else its
/// last statement outside the reference lists that end many reports
/// ("Relevant file paths").
fn report_findings(report: &str) -> Vec<String> {
    const CONCLUDED: usize = 2;
    let body: Vec<&str> = report
        .lines()
        .take_while(|l| {
            let l = l.trim();
            !(l.starts_with("agentId:") || l.starts_with("<usage>"))
        })
        .filter(|l| !l.contains("</"))
        .collect();
    // Sections: (heading, lines under it); text before any heading has none.
    let mut sections: Vec<(Option<&str>, Vec<&str>)> = vec![(None, Vec::new())];
    let mut in_code = false;
    for &line in &body {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_code = !in_code;
        }
        match trimmed.strip_prefix('#') {
            Some(heading) if !in_code => {
                let heading = heading
                    .trim_start_matches('#')
                    .trim()
                    .trim_matches('*')
                    .trim();
                sections.push((Some(heading), Vec::new()));
            }
            _ => sections
                .last_mut()
                .expect("one section at least")
                .1
                .push(line),
        }
    }
    let title = sections
        .iter()
        .find_map(|(h, _)| *h)
        .filter(|t| !t.is_empty())
        .map(|t| one_line(t, 200));
    let first = stated(&body.join("\n")).into_iter().next();
    let heading_has = |cues: &[&str], heading: Option<&str>| {
        heading.is_some_and(|h| {
            let h = h.to_lowercase();
            cues.iter().any(|c| h.contains(c))
        })
    };
    let conclusion: Vec<String> = match sections
        .iter()
        .rev()
        .find(|(h, _)| heading_has(&CONCLUSION_HEADINGS, *h))
    {
        // Its points, not their sub-points.
        Some((_, lines)) => {
            let points: Vec<&str> = lines
                .iter()
                .copied()
                .filter(|l| !l.starts_with([' ', '\t']))
                .collect();
            stated(&points.join("\n"))
                .into_iter()
                .take(CONCLUDED)
                .collect()
        }
        None => sections
            .iter()
            .rev()
            .filter(|(h, _)| !heading_has(&REFERENCE_HEADINGS, *h))
            .find_map(|(_, lines)| stated(&lines.join("\n")).pop())
            .into_iter()
            .collect(),
    };
    let mut out: Vec<String> = title.into_iter().chain(first).collect();
    for finding in conclusion {
        if !out.contains(&finding) {
            out.push(finding);
        }
    }
    out
}

/// Headings of the section that concludes a report, lowercase.
const CONCLUSION_HEADINGS: [&str; 14] = [
    "insight",
    "conclusion",
    "summary",
    "finding",
    "recommendation",
    "takeaway",
    "tl;dr",
    "key point",
    "root cause",
    "answer",
    "fazit",
    "zusammenfassung",
    "résumé",
    "resumen",
];

/// Headings of the lists of files and links many reports end with, lowercase.
const REFERENCE_HEADINGS: [&str; 6] = ["file", "path", "reference", "source", "link", "appendix"];

/// What the assistant said it does next: the last sentence of `text` that
/// announces a step ("Let me now read the key files I'll be modifying.").
fn next_step(text: &str) -> Option<String> {
    const CUES: [&str; 9] = [
        "let me",
        "now let me",
        "next",
        "now i",
        "i'll",
        "i will",
        "then i",
        "first,",
        "now ",
    ];
    const NEXT_MAX_CHARS: usize = 300;
    let mut found = None;
    for line in text.lines().map(str::trim) {
        for sentence in sentences(strip_list_marker(line)) {
            // "Good, now let me …": the interjection says nothing.
            let head = sentence
                .split_once(", ")
                .filter(|(interjection, _)| interjection.split_whitespace().count() == 1)
                .map_or(sentence, |(_, rest)| rest);
            let lower = head.to_lowercase();
            if CUES.iter().any(|c| lower.starts_with(c)) && head.split_whitespace().count() >= 4 {
                found = Some(one_line(head, NEXT_MAX_CHARS));
            }
        }
    }
    found
}

/// Takes what `new` updated out of the rest of the digest: the old
/// statement out of the requests it was part of (a request that was only
/// that goes), and the assistant's statements that repeat its stale values.
/// Latest wins everywhere, so the summary never shows the old value as
/// current.
fn forget(digest: &mut Digest, old: &statements::Statement, new: &statements::Statement) {
    let stale = statements::stale_values(old, new);
    let requests: Vec<(String, u32)> = digest
        .requests
        .iter()
        .map(|(text, &count)| (text.clone(), count))
        .collect();
    digest.requests = Default::default();
    for (text, count) in requests {
        let text = match text.contains(&old.text) {
            true => tidy_block(&text.replace(&old.text, "")),
            false => text,
        };
        if !text.is_empty() {
            add(&mut digest.requests, text, count);
        }
    }
    if stale.is_empty() {
        return;
    }
    let decisions: Vec<(String, u32)> = digest
        .decisions
        .iter()
        .filter(|(text, _)| !stale.iter().any(|v| text.contains(v)))
        .map(|(text, &count)| (text.clone(), count))
        .collect();
    digest.decisions = Default::default();
    for (text, count) in decisions {
        add(&mut digest.decisions, text, count);
    }
}

/// A user text as a request: without system reminders, tidied, bounded.
fn request(text: &str) -> Option<String> {
    let text = tidy_block(&strip_reminders(text));
    if text.is_empty() {
        return None;
    }
    if let Some(written) = harness_written(&text) {
        return written;
    }
    if let Some(Cow::Owned(head)) = cut_to_fit(&text, REQUEST_MAX_MILLIS, 1) {
        return Some(head);
    }
    Some(text)
}

/// What stands for a user message a harness wrote in the person's place
/// (Claude Code's slash commands, background-task notices, pasted skills,
/// local command output), or `None` if the person wrote it. What the person
/// typed (a slash command and its arguments) stays a request; what the
/// harness says is one bracketed line, which `said` never reads as the
/// person's words; its own chatter is nothing.
fn harness_written(text: &str) -> Option<Option<String>> {
    const SKILL: &str = "Base directory for this skill:";
    const CHATTER: [&str; 4] = [
        "local-command-caveat",
        "local-command-stdout",
        "bash-stdout",
        "bash-stderr",
    ];
    if text.starts_with(SKILL) {
        let line = text.lines().next().unwrap_or(text);
        return Some(Some(format!("[{}]", one_line(line, PATH_MAX_CHARS))));
    }
    let tag = text.strip_prefix('<')?.split_once('>')?.0;
    if let Some(name) = tag_text(text, "command-name") {
        let args = tag_text(text, "command-args").unwrap_or_default();
        return Some(Some(tidy_block(&format!("{name} {args}"))).filter(|r| !r.is_empty()));
    }
    if let Some(command) = tag_text(text, "bash-input") {
        return Some(Some(format!(
            "[! {}]",
            one_line(command, COMMAND_MAX_CHARS)
        )));
    }
    if tag == "task-notification" {
        let notice = tag_text(text, "summary").unwrap_or("background task");
        return Some(Some(format!("[{}]", one_line(notice, ERROR_MAX_CHARS))));
    }
    CHATTER.contains(&tag).then_some(None)
}

/// The text between `<tag>` and `</tag>`, trimmed.
fn tag_text<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let start = text.find(&format!("<{tag}>"))? + tag.len() + 2;
    let end = text[start..].find(&format!("</{tag}>"))?;
    Some(text[start..start + end].trim())
}

/// What an argument key says about its value.
enum Key {
    Path,
    Command,
    Todos,
    /// Text a call writes into the file.
    Written,
    /// Text a call replaces.
    Replaced,
    Other,
}

fn key_meaning(key: &str) -> Key {
    let key: String = key
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    match key.as_str() {
        "command" | "cmd" => Key::Command,
        "todos" => Key::Todos,
        // What an edit writes and what it replaces (Claude Code's Edit and
        // Write, SWE-agent's str_replace_editor, …).
        "newstring" | "newstr" | "content" | "filetext" | "newtext" => Key::Written,
        "oldstring" | "oldstr" | "oldtext" => Key::Replaced,
        "file" | "files" | "filename" | "filenames" => Key::Path,
        _ if key.ends_with("path") || key.ends_with("paths") => Key::Path,
        _ => Key::Other,
    }
}

/// Records the files and todo list of a call; returns the command it runs.
fn read_call(digest: &mut Digest, call: &ToolCall, texts: &mut code::FileTexts) -> Option<String> {
    let args: Value = serde_json::from_str(&call.arguments).ok()?;
    let tool = tool_label(&call.name);
    let mut command = None;
    let (mut path, mut written, mut replaced) = (None, Vec::new(), Vec::new());
    // A read: one path, and nothing else but numbers (offset, limit).
    let mut reads = true;
    for (key, value) in args.as_object()? {
        let meaning = key_meaning(key);
        reads &= matches!(meaning, Key::Path) || value.is_number();
        match meaning {
            Key::Path => {
                for file in strings(value) {
                    let file = one_line(file, PATH_MAX_CHARS);
                    if !file.is_empty() {
                        // The file an edit's written text goes into: the first.
                        path.get_or_insert_with(|| file.clone());
                        digest.add_file(file, &tool, 1);
                    }
                }
            }
            Key::Command => command = command_text(value),
            Key::Todos => {
                if let Some(todos) = todo_list(value) {
                    digest.todos = todos;
                }
            }
            Key::Written => written.extend(value.as_str()),
            Key::Replaced => replaced.extend(value.as_str()),
            Key::Other => {}
        }
    }
    if let Some(path) = path {
        if written.is_empty() && reads {
            texts.reading(&call.id, path);
        } else if !written.is_empty() {
            let before = texts.write(&path, &written, &replaced);
            let replaced: Vec<&str> = match &before {
                Some(before) => vec![before],
                None => replaced,
            };
            let lines = code::code_lines(&written, &replaced);
            if !lines.is_empty() {
                digest.add_code(path, lines);
            }
        }
    }
    if let Some(command) = &command {
        for path in command_paths(command) {
            digest.add_file(path.to_owned(), &tool, 1);
        }
    }
    command
}

/// A command line without the plumbing that only trims what the agent saw
/// of its output (`2>&1`, `2>/dev/null`, a last `| tail -20` or `| head -n
/// 5`): the same command either way, listed once.
fn without_plumbing(command: &str) -> String {
    let mut text = command.replace(" 2>&1", "").replace(" 2>/dev/null", "");
    while let Some((before, pipe)) = text.rsplit_once('|') {
        let mut words = pipe.split_whitespace();
        let trims = matches!(words.next(), Some("tail" | "head"))
            && words.all(|w| w == "-n" || w.trim_start_matches('-').parse::<u32>().is_ok());
        if !trims || before.ends_with('|') || before.trim().is_empty() {
            break;
        }
        text = before.trim_end().to_owned();
    }
    text
}

/// The tool name as a label the format can read back: no spaces, parentheses,
/// commas or count signs.
fn tool_label(name: &str) -> String {
    let label: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "_-.:/".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if label.is_empty() {
        "tool".to_owned()
    } else {
        label
    }
}

/// A string value, or the strings of an array value.
fn strings(value: &Value) -> impl Iterator<Item = &str> {
    let (one, many) = match value {
        Value::Array(items) => (None, items.as_slice()),
        other => (other.as_str(), &[][..]),
    };
    one.into_iter().chain(many.iter().filter_map(Value::as_str))
}

/// The first line of a command (an argv array is joined), marked if more follow.
fn command_text(value: &Value) -> Option<String> {
    let joined = strings(value).collect::<Vec<_>>().join(" ");
    let mut lines = joined.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut text = one_line(&without_plumbing(lines.next()?), COMMAND_MAX_CHARS);
    if lines.next().is_some() {
        text.push_str(" …");
    }
    Some(text)
}

/// Tokens of a command line that look like file paths; `path:line` suffixes
/// are dropped.
fn command_paths(command: &str) -> impl Iterator<Item = &str> {
    command.split_whitespace().filter_map(|token| {
        let mut token = token.trim_matches(|c| matches!(c, '"' | '\'' | '(' | ')' | ';' | ','));
        while let Some((path, _)) = token
            .rsplit_once(':')
            .filter(|(_, n)| n.chars().all(|c| c.is_ascii_digit()))
        {
            token = path;
        }
        is_file_path(token).then_some(token)
    })
}

/// A `/` and a file extension, no shell syntax or URL: specific enough to pick
/// paths out of command lines and output without a list of known extensions.
fn is_file_path(token: &str) -> bool {
    let Some((stem, extension)) = token
        .rsplit('/')
        .next()
        .and_then(|name| name.rsplit_once('.'))
    else {
        return false;
    };
    token.contains('/')
        && !token.starts_with('-')
        && !token.contains("://")
        && !token.contains([
            '$', '*', '?', '{', '}', '=', '|', '&', '<', '>', '`', '"', '\'', '\\', ' ',
        ])
        && !stem.is_empty()
        && (1..=10).contains(&extension.len())
        && extension.chars().all(|c| c.is_ascii_alphanumeric())
        && extension.chars().any(|c| c.is_ascii_alphabetic())
}

fn todo_list(value: &Value) -> Option<Vec<Todo>> {
    const TEXT_KEYS: [&str; 6] = ["content", "text", "title", "task", "description", "subject"];
    let todos = value
        .as_array()?
        .iter()
        .filter_map(|item: &Value| {
            let text = item
                .as_str()
                .or_else(|| TEXT_KEYS.iter().find_map(|k| item.get(k)?.as_str()))?;
            let status = item
                .get("status")
                .or_else(|| item.get("state"))
                .and_then(Value::as_str);
            Some(Todo {
                status: status.map_or(Status::Pending, todo_status),
                text: one_line(text, TODO_MAX_CHARS),
            })
        })
        .filter(|todo| !todo.text.is_empty())
        .collect();
    Some(todos)
}

fn todo_status(word: &str) -> Status {
    let word: String = word
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    match word.as_str() {
        "completed" | "complete" | "done" | "finished" => Status::Done,
        "inprogress" | "active" | "doing" | "started" | "running" => Status::Active,
        "cancelled" | "canceled" | "skipped" | "abandoned" => Status::Cancelled,
        _ => Status::Pending,
    }
}

/// Records the errors a result shows and, for a command, its outcome.
fn read_result(digest: &mut Digest, result: &ToolResult, command: Option<String>) {
    let content = strip_reminders(&result.content);
    let lines: Vec<&str> = content
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    // Harnesses put the exit code first (Claude Code) or last (most others).
    let exit = lines
        .iter()
        .take(2)
        .chain(lines.iter().rev().take(2))
        .find_map(|l| exit_code(l));
    let failed = result.is_error || exit.is_some_and(|code| code != 0);

    let mut errors: Vec<String> = Vec::new();
    if command.is_some() {
        // Command output is diagnostics, so every error-looking line counts;
        // other results are mostly file contents and search hits, where such
        // lines are code, so only an opening error line counts there.
        for line in lines.iter().filter(|l| looks_like_error(l)) {
            let line = error_text(line);
            if !errors.contains(&line) {
                errors.push(line);
            }
            if errors.len() == ERRORS_PER_RESULT {
                break;
            }
        }
    } else if let Some(first) = first_informative(&lines).filter(|l| looks_like_error(l)) {
        errors.push(error_text(first));
    }
    if failed && errors.is_empty() {
        errors.extend(first_informative(&lines).map(error_text));
    }

    if let Some(command) = command {
        let status = match exit {
            Some(code) if code != 0 => format!("exit {code}"),
            _ if result.is_error => "failed".to_owned(),
            None if !errors.is_empty() => "error".to_owned(),
            _ => "ok".to_owned(),
        };
        // "ok" says little when the output ends "410 tests, 2 failures",
        // or is the value the command was run to learn. The tally first;
        // then, from a short output, what else it says: after a tally only
        // the names it listed (the tests that failed), not its chatter;
        // without one, the values it printed when it succeeded (a
        // failure's lines are its errors).
        let tally = tally(&lines);
        let found: Vec<String> = match (&tally, errors.is_empty()) {
            (Some(_), _) => tally
                .into_iter()
                .chain(found_values(&lines, true))
                .take(FOUND_LINES)
                .collect(),
            (None, true) => match json_findings(&content).or_else(|| table_findings(&lines)) {
                Some(settings) => settings.into_iter().take(FOUND_LINES).collect(),
                None => found_values(&lines, false).take(FOUND_LINES).collect(),
            },
            (None, false) => Vec::new(),
        };
        let outcome = match found.is_empty() {
            true => status,
            false => format!("{status}{STATUS_SEPARATOR}{}", found.join(FOUND_SEPARATOR)),
        };
        // The last outcome of a command is the one that holds: an earlier
        // run's is stale (a value since changed, a failure since fixed).
        let earlier: Vec<(String, String)> = (digest.commands.iter())
            .filter(|((c, o), _)| *c == command && *o != outcome)
            .map(|(key, _)| key.clone())
            .collect();
        let mut runs = 1;
        for key in earlier {
            runs += digest.commands.remove(&key).unwrap_or(0);
        }
        // So is what another command showed of a setting this one shows
        // again (`replicas=4` from `cat deploy.env`, then `replicas: 6` from
        // `kubectl get deploy web`), or of a value this one shows anew.
        let found: Vec<(&str, Vec<String>)> = found_lines(&command, &outcome).collect();
        supersede_settings(digest, &command, &found);
        // A run that shows something fixed what the earlier runs showed
        // and it no longer does (a clean run, or one that fails on another
        // test): the error stays listed (it happened; the agent may meet
        // it again), paired with its fix. What this run shows is open.
        if !failed || !errors.is_empty() {
            digest.fixed_by(&command);
        }
        // So is an error another look at the same thing now shows with
        // another value in its place (`12 - test_a_4 (Failed)` from ctest,
        // then `name="test_b_7"` failing in the rig's report).
        let shown: Vec<&str> = (found.iter().map(|(line, _)| *line))
            .chain(errors.iter().map(String::as_str))
            .collect();
        renew_errors(digest, &command, &shown);
        for error in errors {
            digest.add_error(error, Some(command.clone()), 1);
        }
        add(&mut digest.commands, (command, outcome), runs);
        return;
    }
    for error in errors {
        digest.add_error(error, None, 1);
    }
}

/// What a short JSON output says, as settings: each value with the path of
/// keys to it (`limits.requests_per_minute=8300`), a `{"Key": …, "Value":
/// …}` pair as the setting it names (`idle_timeout.timeout_seconds=844`),
/// those with a digit first (the ids, counts, versions and hosts an agent
/// looks up); `null`, `true`, `false` and empty strings say nothing. None
/// for an output that is not JSON, or too long to be a finding.
fn json_findings(content: &str) -> Option<Vec<String>> {
    const LEAVES: usize = 16;
    let value: Value = serde_json::from_str(content.trim()).ok()?;
    if !value.is_object() && !value.is_array() {
        return None;
    }
    let mut leaves: Vec<(String, String)> = Vec::new();
    json_leaves(&value, "", &mut leaves);
    if leaves.len() > LEAVES {
        return None;
    }
    Some(as_settings(leaves))
}

/// `name=value` lines of `pairs`, those whose value holds a digit first
/// (the ids, counts, versions and hosts an agent looks up).
fn as_settings<N: std::fmt::Display, V: AsRef<str>>(
    pairs: impl IntoIterator<Item = (N, V)>,
) -> Vec<String> {
    let (with, without): (Vec<_>, Vec<_>) = (pairs.into_iter())
        .partition(|(_, value)| value.as_ref().chars().any(|c| c.is_ascii_digit()));
    (with.into_iter().chain(without))
        .map(|(name, value)| one_line(&format!("{name}={}", value.as_ref()), FOUND_LINE_MAX_CHARS))
        .collect()
}

/// What a short table says, as settings: each cell of its rows under its
/// column's heading (psql's ` max_connections \n-----\n 5050\n(1 row)` is
/// `max_connections=5050`; `| a | b |` rows alike; `NUMBER  TITLE` over
/// one row, `NUMBER=1845`). None without a heading, a rule of dashes under
/// it or capitals, or when a row's cells do not match the heading's.
fn table_findings(lines: &[&str]) -> Option<Vec<String>> {
    const CELLS: usize = 8;
    let rule = |l: &str| {
        l.chars().filter(|&c| c == '-' || c == '=').count() >= 3
            && l.chars().all(|c| "-=+| ".contains(c))
    };
    let cells = |l: &str| -> Vec<String> {
        let cells: Vec<&str> = match l.contains('|') {
            true => l
                .split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect(),
            false => columns(l).collect(),
        };
        cells.into_iter().map(str::to_owned).collect()
    };
    // A heading in capitals (`NAME  READY  STATUS`, as kubectl, docker and
    // gh print them) needs no rule under it, but then one row: a listing
    // of many reads better as its rows.
    let capitals = |l: &str| {
        let heading = cells(l);
        heading.len() >= 2
            && (heading.iter().flat_map(|c| c.chars()))
                .all(|c| c.is_uppercase() || " _-".contains(c))
    };
    let (heading, rows, most) = match (1..lines.len()).find(|&i| rule(lines[i])) {
        Some(at) => (lines[at - 1], &lines[at + 1..], FOUND_OUTPUT_LINES),
        None => {
            let at = lines.iter().position(|l| capitals(l))?;
            (lines[at], &lines[at + 1..], 1)
        }
    };
    let heading = cells(heading);
    // `(1 row)`, `(3 rows)`: psql's count, no row.
    let rows: Vec<Vec<String>> = (rows.iter())
        .filter(|l| !(rule(l) || l.starts_with('(') && l.ends_with(')')))
        .map(|l| cells(l))
        .collect();
    let fits = !heading.is_empty()
        && heading.len() <= CELLS
        && !rows.is_empty()
        && rows.len() <= most
        && rows.iter().all(|row| row.len() == heading.len());
    fits.then(|| as_settings(rows.iter().flat_map(|row| heading.iter().zip(row))))
}

/// The scalar values of `value` with their key paths (array indices aside).
fn json_leaves(value: &Value, path: &str, out: &mut Vec<(String, String)>) {
    let join = |key: &str| match path.is_empty() {
        true => key.to_owned(),
        false => format!("{path}.{key}"),
    };
    match value {
        Value::Object(fields) => {
            // `{"Key": "idle_timeout", "Value": "60"}`, `{"property_name":
            // "tier", "value": "gold"}`: a setting spelled out.
            let named = (fields.iter())
                .filter(|(k, _)| {
                    let k = k.to_lowercase();
                    ["key", "name"]
                        .iter()
                        .any(|n| k == *n || k.ends_with(&format!("_{n}")))
                })
                .find_map(|(_, v)| v.as_str());
            let set = ["Value", "value"].iter().find_map(|k| fields.get(*k));
            if let (Some(name), Some(set), 2) = (named, set, fields.len()) {
                json_leaves(set, &join(name), out);
                return;
            }
            for (key, field) in fields {
                json_leaves(field, &join(key), out);
            }
        }
        Value::Array(items) => {
            for item in items {
                json_leaves(item, path, out);
            }
        }
        Value::String(text) if !text.trim().is_empty() => {
            out.push((path.to_owned(), text.trim().to_owned()))
        }
        Value::Number(number) => out.push((path.to_owned(), number.to_string())),
        _ => {}
    }
}

/// Between the lines of what a command found.
const FOUND_SEPARATOR: &str = "; ";

/// Drops from the outcomes of commands other than `command` what its
/// `found` lines show anew: the settings of their keys, the values they
/// hold at a later time ([`one_value_later`]), and all an earlier form of
/// the same look found ([`same_look`]). A command that looks at another
/// thing keeps its own ([`about_one_thing`]).
fn supersede_settings(digest: &mut Digest, command: &str, found: &[(&str, Vec<String>)]) {
    let keys: Vec<String> = found.iter().flat_map(|(_, keys)| keys.clone()).collect();
    let found_values: Vec<Found> = found.iter().flat_map(|(line, _)| values(line)).collect();
    if keys.is_empty() && found_values.is_empty() {
        return;
    }
    let renewed = |line: &str, shown: &[String]| {
        shown.iter().any(|k| shows(&keys, k))
            || values(line).any(|old| found_values.iter().any(|new| one_value_later(&old, new)))
    };
    let stale: Vec<((String, String), String)> = (digest.commands.iter())
        .filter(|((other, _), _)| other != command && about_one_thing(other, command))
        .filter_map(|((other, outcome), _)| {
            let lines: Vec<(&str, Vec<String>)> = found_lines(other, outcome).collect();
            let again = same_look(other, command);
            let kept: Vec<&str> = (lines.iter())
                // The same look drops all it showed of settings, tallies
                // aside.
                .filter(|(line, shown)| !(renewed(line, shown) || again && !shown.is_empty()))
                .map(|(line, _)| *line)
                .collect();
            if kept.len() == lines.len() {
                return None;
            }
            let status = outcome.split(STATUS_SEPARATOR).next().unwrap_or_default();
            let kept = match kept.is_empty() {
                true => status.to_owned(),
                false => format!("{status}{STATUS_SEPARATOR}{}", kept.join(FOUND_SEPARATOR)),
            };
            Some(((other.clone(), outcome.clone()), kept))
        })
        .collect();
    for (key, outcome) in stale {
        let command = key.0.clone();
        digest.commands.rekey(&key, (command, outcome));
    }
}

/// Marks fixed the errors other commands about the same thing showed
/// whose values `shown` (what `command` just showed) holds at a later time
/// ([`one_value_later`]).
fn renew_errors(digest: &mut Digest, command: &str, shown: &[&str]) {
    let later: Vec<Found> = shown.iter().flat_map(|line| values(line)).collect();
    for (error, note) in digest.errors.iter_mut() {
        let other = note.source.as_deref().filter(|&other| other != command);
        if other.is_some_and(|other| about_one_thing(other, command))
            && values(error).any(|old| later.iter().any(|new| one_value_later(&old, new)))
        {
            note.fixed = true;
        }
    }
}

/// The lines of what `command` found (its `outcome` after the status),
/// each with the settings it shows: its keys ([`setting_keys`]), its frame
/// ([`row_frame`]), or, for one token printed alone
/// (`redis://cache-7:6379` from `printenv CACHE_URL`), what the command
/// asked for ([`asked_for`]). A tally shows none: it counts one run of its
/// command (`8 tests, 0 failures`), and another command's is another
/// run's, no later state of it.
fn found_lines<'a>(
    command: &'a str,
    outcome: &'a str,
) -> impl Iterator<Item = (&'a str, Vec<String>)> + 'a {
    let found = outcome.split_once(STATUS_SEPARATOR).map_or("", |(_, f)| f);
    let lines: Vec<&str> = found
        .split(FOUND_SEPARATOR)
        .filter(|l| !l.is_empty())
        .collect();
    let alone = lines.len() == 1;
    lines.into_iter().map(move |line| {
        let bare = alone && !line.contains(char::is_whitespace);
        let keys = match tally(&[line]) {
            Some(_) => Vec::new(),
            None => (Some(setting_keys(line)).filter(|k| !k.is_empty()))
                .or_else(|| row_frame(line).map(|k| vec![k]))
                .or_else(|| bare.then(|| asked_for(command)))
                .unwrap_or_default(),
        };
        (line, keys)
    })
}

/// The settings an output line shows: the fields of a JSON object on one
/// line (`{"build":"7c1e2f0","pid":4121}`), the keys of a line with
/// several `key=value` pairs, else its key if it is a setting
/// ([`setting_key`]).
fn setting_keys(line: &str) -> Vec<String> {
    // Every earlier command's lines are read again at each result: only a
    // line that opens an object is parsed.
    let object = line.trim().trim_end_matches(',');
    let fields = (object.starts_with('{'))
        .then(|| serde_json::from_str::<serde_json::Map<String, Value>>(object).ok())
        .flatten();
    // `server=eu-7 build=b-41 players=31`, a log line's `carrier=DHL
    // tracking=JJD41`: a setting each.
    let pairs: Vec<&str> = (line.split_whitespace())
        .filter(|p| {
            p.split_once('=').is_some_and(|(k, v)| {
                !v.is_empty()
                    && k.chars().all(|c| c.is_alphanumeric() || "_.-".contains(c))
                    && k.chars().any(char::is_alphabetic)
            })
        })
        .collect();
    let several = pairs.len() > 1;
    match fields {
        Some(fields) => (fields.iter())
            .filter(|(_, v)| !v.is_object() && !v.is_array())
            .map(|(k, _)| fold_key(k))
            .collect(),
        None if several => pairs.into_iter().filter_map(setting_key).collect(),
        None => setting_key(line).into_iter().collect(),
    }
}

/// What a row of values names: its words without the values (tokens with
/// a digit), each folded as a key is ([`fold_key`]): `/src/payments/
/// @acme/team-pay7` names `/src/payments/`, `limits.memory  12Gi  64Gi`
/// names `memory`, as the setting `limits.memory: 64Gi` does. Two rows
/// that name one thing are its state at two times. None for a row that is
/// all values or all words.
fn row_frame(line: &str) -> Option<String> {
    let tokens: Vec<&str> = without_line_number(line).split_whitespace().collect();
    let value = |t: &&str| t.chars().any(|c| c.is_ascii_digit());
    let words: Vec<String> = (tokens.iter())
        .filter(|t| !value(t))
        // A path is named whole (`src/app.rs` is no key `rs`).
        .map(|t| match t.contains('/') {
            true => t.to_lowercase(),
            false => fold_key(t),
        })
        .collect();
    let named = words
        .iter()
        .any(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2);
    (named && tokens.iter().any(value)).then(|| words.join(" "))
}

/// A key in one spelling: `DB_HOST`, `db-host`, `.spec.db_host` are one.
fn fold_key(key: &str) -> String {
    let last = key.rsplit('.').next().unwrap_or(key);
    last.to_lowercase().replace('-', "_")
}

/// The settings a command asks for: the words of its last argument before
/// any pipe that is neither a flag, a file nor an output format (`printenv
/// CACHE_URL`, `git config user.signingkey`, `jq .refresh
/// dashboards/latency.json`, `kubectl get cm freeze -o
/// jsonpath='{.data.window}'`, `aws rds describe-db-parameters --query
/// "Parameters[?ParameterName=='max_connections'].ParameterValue" --output
/// text`). Folded as [`setting_key`] folds keys.
fn asked_for(command: &str) -> Vec<String> {
    const EXTENSION_CHARS: usize = 4;
    const FORMATS: [&str; 8] = ["text", "json", "yaml", "table", "tsv", "csv", "wide", "raw"];
    // `.engines.node` is a path into a document (jq's, yq's), no file.
    let file = |token: &str| {
        let query = token.starts_with('.') && token.matches('.').count() > 1;
        !query
            && token.rsplit_once('.').is_some_and(|(stem, extension)| {
                !stem.is_empty()
                    && !stem.ends_with('/')
                    && (1..=EXTENSION_CHARS).contains(&extension.len())
                    && extension.chars().all(|c| c.is_ascii_alphanumeric())
            })
    };
    let first = command.split('|').next().unwrap_or_default();
    let arguments: Vec<&str> = first.split_whitespace().skip(1).collect();
    let last = arguments.into_iter().rfind(|t| {
        !t.starts_with('-') && !file(t) && !FORMATS.contains(&t.to_lowercase().as_str())
    });
    (last.into_iter())
        .flat_map(|t| t.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')))
        .filter(|w| w.chars().any(char::is_alphabetic))
        .map(|w| w.to_lowercase().replace('-', "_"))
        .collect()
}

/// Whether one of `keys` is `key`, however much of its path either names:
/// the same words, or the words of one, two at least, ending the other
/// (`TEST_DB_PREFIX` / `.test.db_prefix` → `db_prefix`, `fail_under` /
/// `run: coverage report --fail-under`), never only a last word in common
/// (`api cpu limit` / `worker cpu limit`).
fn shows(keys: &[String], key: &str) -> bool {
    const SUFFIX_WORDS: usize = 2;
    let parts = |k: &str| -> Vec<String> {
        k.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let key = parts(key);
    keys.iter().map(|k| parts(k)).any(|other| {
        let (short, long) = match other.len() <= key.len() {
            true => (&other, &key),
            false => (&key, &other),
        };
        !short.is_empty() && (short == long || short.len() >= SUFFIX_WORDS && long.ends_with(short))
    })
}

/// A value found in an output line: a word holding a digit, cut at the marks
/// that join a value to its context (`role/agent-iqly-ro64`,
/// `ci@acme-7.io`, `KEY=v2`, `<a@b>`), and that context: the rest of its
/// whitespace-free stretch (`ghcr.io/acme/web:` around `3.2.7-r9`).
struct Found<'a> {
    word: &'a str,
    context: String,
}

/// The values of an output line ([`Found`]).
fn values(line: &str) -> impl Iterator<Item = Found<'_>> {
    line.split_whitespace().flat_map(|stretch| {
        let cut = |c: char| "/:=@<>\"'`,;()[]{}*|".contains(c);
        (stretch.split(cut).map(|w| w.trim_end_matches('.')))
            .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
            .map(move |word| Found {
                word,
                context: stretch.replacen(word, "", 1),
            })
    })
}

/// Whether `new` is `old` at a later time: of one form (the same
/// marks between their parts, each part letters and digits in the same
/// order), and of one name: a part of three letters or more that both hold
/// in one place, or the same named context (`agent-iqly-ro64` →
/// `agent-wxyz-ro12`, `ci-gate-62` → `ci-gate-17`, `ghcr.io/acme/web:3.2.7`
/// → `ghcr.io/acme/web:3.4.0`), a part with digits among those that
/// changed; not `2.4.1` → `2.5.0` alone (versions of two packages look
/// alike) nor `api-7.internal` → `worker-7.internal`.
fn one_value_later(old: &Found, new: &Found) -> bool {
    const NAME_LETTERS: usize = 3;
    let mark = |c: char| "-_.".contains(c);
    let parts = |w: &str| -> Vec<String> { w.split(mark).map(str::to_lowercase).collect() };
    let marks = |w: &str| -> String { w.chars().filter(|&c| mark(c)).collect() };
    let name = |w: &str| w.chars().filter(|c| c.is_alphabetic()).count() >= NAME_LETTERS;
    // A part's form: its runs of letters and of digits, in order.
    let form = |part: &str| -> String {
        let mut form = String::new();
        for c in part.chars() {
            let class = match c {
                c if c.is_ascii_digit() => '9',
                c if c.is_alphabetic() => 'a',
                c => c,
            };
            if !form.ends_with(class) {
                form.push(class);
            }
        }
        form
    };
    let (a, b) = (parts(old.word), parts(new.word));
    // A hash's letters and digits fall anywhere: `be68` / `64f0`.
    let hex = |part: &str| {
        part.len() >= 4
            && part.chars().all(|c| c.is_ascii_hexdigit())
            && part.chars().any(|c| c.is_ascii_digit())
    };
    let alike =
        |x: &String, y: &String| form(x) == form(y) || x.len() == y.len() && hex(x) && hex(y);
    // A name opening a part counts too (`acme` of `Acmetdeh66`), when
    // four letters or more: `eth0` and `eth1` are two things.
    let opening = |x: &String, y: &String| {
        let letters = |w: &String| w.chars().take_while(|c| c.is_alphabetic()).count();
        let shared = x.chars().zip(y.chars()).take_while(|(p, q)| p == q).count();
        shared.min(letters(x)).min(letters(y)) > NAME_LETTERS
    };
    let named = (a.iter().zip(&b))
        .any(|(x, y)| x == y && name(x) && x.chars().all(char::is_alphabetic) || opening(x, y))
        || old.context.eq_ignore_ascii_case(&new.context) && name(&old.context);
    // A value changes in its numbers; a word put for another names
    // another thing.
    let renumbered =
        (a.iter().zip(&b)).any(|(x, y)| x != y && x.chars().any(|c| c.is_ascii_digit()));
    renumbered
        && marks(old.word) == marks(new.word)
        && a.len() == b.len()
        && a.iter().zip(&b).all(|(x, y)| alike(x, y))
        && named
}

/// Whether two commands are one look in two forms: the same words but for
/// flags (`git config --get user.email` / `git config --show-origin
/// user.email`), or one the other with flags added (`gh issue list
/// --limit 1` / `gh issue list --limit 1 --json number,title`).
fn same_look(a: &str, b: &str) -> bool {
    let flag = |t: &str| t.starts_with('-');
    let (ta, tb): (Vec<&str>, Vec<&str>) = (
        a.split_whitespace().collect(),
        b.split_whitespace().collect(),
    );
    let (short, long) = match ta.len() <= tb.len() {
        true => (&ta, &tb),
        false => (&tb, &ta),
    };
    match short.len() == long.len() {
        true => short
            .iter()
            .zip(long)
            .all(|(x, y)| x == y || flag(x) && flag(y)),
        false => long.starts_with(short) && flag(long[short.len()]),
    }
}

/// Whether two commands may look at one thing: not when they are one
/// argument apart (`kubectl get deploy api …` / `… worker …`: the same look
/// at two things) or one name put for another wherever it stands (`helm
/// get values api | jq '{release: "api"}'` / `… worker …`), nor when both
/// name files and no file is in both.
fn about_one_thing<'a>(a: &'a str, b: &'a str) -> bool {
    let (ta, tb): (Vec<&str>, Vec<&str>) = (
        a.split_whitespace().collect(),
        b.split_whitespace().collect(),
    );
    // Flags change how a command looks, not at what.
    let apart: Vec<(&&str, &&str)> = ta.iter().zip(&tb).filter(|(x, y)| x != y).collect();
    let one_apart = ta.len() == tb.len()
        && matches!(apart[..], [(x, y)] if !(x.starts_with('-') && y.starts_with('-')));
    let words = |c: &'a str| {
        c.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
    };
    let renamed = (words(a).zip(words(b)))
        .find(|(x, y)| x != y)
        .is_some_and(|(x, y)| with_word_put(a, x, y) == b);
    let (pa, pb): (Vec<&str>, Vec<&str>) = (command_paths(a).collect(), command_paths(b).collect());
    let other_files = !pa.is_empty() && !pb.is_empty() && !pa.iter().any(|p| pb.contains(p));
    !one_apart && !renamed && !other_files
}

/// `text` with each whole word `from` put as `to`.
fn with_word_put(text: &str, from: &str, to: &str) -> String {
    (text.split_inclusive(|c: char| !c.is_alphanumeric()))
        .map(|piece| {
            let end = piece.trim_end_matches(|c: char| !c.is_alphanumeric()).len();
            let (word, rest) = piece.split_at(end);
            let word = if word == from { to } else { word };
            format!("{word}{rest}")
        })
        .collect()
}

/// What a short output says that an agent would run the command again to
/// learn: its lines that carry a value ([`carries_value`]) — with
/// `names_only`, its lines that are one name each — cut short. Nothing
/// from a long output (a log, a listing, a file).
fn found_values<'a>(lines: &'a [&'a str], names_only: bool) -> impl Iterator<Item = String> + 'a {
    let informative = lines.iter().filter(|l| says_something(l)).count();
    let short = informative <= FOUND_OUTPUT_LINES;
    // An output that is one token is what the command was run to print
    // (`6`, `eu-west-3`, `ops@acme.io`) unless it is a word ("built").
    let sole = informative == 1;
    let token = |l: &str| {
        !l.contains(char::is_whitespace)
            && l.chars()
                .any(|c| c.is_ascii_digit() || "./-_:@=".contains(c))
    };
    (lines.iter())
        .filter(move |_| short)
        .map(|l| without_comment(strip_wrapping_tags(l)))
        // A row's gaps between its columns are not its length.
        .filter(|l| {
            says_something(l)
                && one_line(l, FOUND_LINE_MAX_CHARS + 1).chars().count() <= FOUND_LINE_MAX_CHARS
        })
        .filter(move |l| {
            let one_word = !l.contains(char::is_whitespace);
            (carries_value(l) || sole && token(l)) && (!names_only || one_word)
        })
        .map(|l| one_line(l, FOUND_LINE_MAX_CHARS))
}

/// `line` without a comment after its value (`tokio = "1.4.0"    # An
/// event-driven …`).
fn without_comment(line: &str) -> &str {
    match line.find(" # ") {
        Some(at) if line[..at].trim().chars().any(|c| c.is_alphanumeric()) => line[..at].trim_end(),
        _ => line,
    }
}

/// Whether an output line states a value rather than prose ("running 3
/// tests") or a file's contents: a setting (`region=eu-west-3`,
/// `replicas: 4`, `api cpu limit: 143m`, `"build": "2025.11.6"`), or a
/// short line holding a value token — an id, a version, a size, an address
/// (`7683e07d0`, `v2.4.1`, `12Gi`, `10.2.0.7`, `team/app-3`), a table row
/// of them. A search hit's line number (`14:`) is not part of it; a file
/// shown with its line numbers (`12→`) is a listing.
fn carries_value(line: &str) -> bool {
    let line = without_line_number(line);
    if is_listing(line) {
        return false;
    }
    const ROW_TOKENS: usize = 8;
    // A bare count ("3") is prose's; a value has more to it.
    let value_token = |token: &str| {
        token.chars().any(|c| c.is_ascii_digit())
            && token
                .chars()
                .any(|c| c.is_alphabetic() || "./-:#".contains(c))
            && !token.contains(char::is_whitespace)
    };
    let tokens: Vec<&str> = columns(line).collect();
    let row = tokens.len() <= ROW_TOKENS && tokens.iter().any(|t| value_token(t));
    setting_key(line).is_some() || row
}

/// The cells of a table row: what `|` parts in a row that opens with one
/// (`| web | 3 | ok |`), or runs of two spaces or more, or tabs (`#9734
/// Refund webhook fires twice  bug, p0`); a line without such gaps, its
/// words.
fn columns(line: &str) -> impl Iterator<Item = &str> {
    let cells: Vec<&str> = if line.trim().starts_with('|') {
        line.split('|').collect()
    } else if line.contains('\t') || line.trim().contains("  ") {
        line.split('\t').flat_map(|part| part.split("  ")).collect()
    } else {
        line.split_whitespace().collect()
    };
    (cells.into_iter())
        .map(str::trim)
        .filter(|cell| !cell.is_empty())
}

/// `line` without a search hit's line number (`14:`, `src/a.env:14:`,
/// `15-` before a line of context).
fn without_line_number(line: &str) -> &str {
    // `src/a.env:14:` (grep over several files) before the number.
    let in_file = line.split_once(':').and_then(|(path, rest)| {
        (path.contains(['/', '.']) && !path.contains(char::is_whitespace))
            .then(|| {
                rest.trim_start_matches(|c: char| c.is_ascii_digit())
                    .strip_prefix(':')
            })
            .flatten()
            .filter(|_| rest.starts_with(|c: char| c.is_ascii_digit()))
            .map(str::trim)
    });
    in_file.or_else(|| after_number(line)).unwrap_or(line)
}

/// What follows a line number opening `text`: `:` before a hit, `-` and a
/// space before a line of context.
fn after_number(text: &str) -> Option<&str> {
    let rest = text.trim_start_matches(|c: char| c.is_ascii_digit());
    if rest.len() == text.len() {
        return None;
    }
    match (rest.strip_prefix(':'), rest.strip_prefix('-')) {
        (Some(rest), _) => Some(rest.trim()),
        (None, Some(rest)) if rest.starts_with(char::is_whitespace) => Some(rest.trim()),
        _ => None,
    }
}

/// What an output line sets, if it is a setting: `key=value` sets whatever
/// it says; `key: value` is a value when it holds a number ("test result:
/// ok" is a status). The key is folded to one spelling (`DB_HOST`,
/// `db-host`, `"db_host"`, `.spec.db_host` are one key), so a later look
/// at the same setting through another command or format can be told.
fn setting_key(line: &str) -> Option<String> {
    const KEY_WORDS: usize = 4;
    const KEY_MAX_CHARS: usize = 40;
    // `max_pallet_kg  1351`, `vm.swappiness 60`: a name in code's spelling
    // and a value beside it.
    let line = without_line_number(line);
    if let [key, value] = line.split_whitespace().collect::<Vec<_>>()[..]
        && key.contains(['_', '.'])
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || "_.-".contains(c))
        && key.chars().any(char::is_alphabetic)
        && value.chars().any(|c| c.is_ascii_digit())
    {
        return Some(fold_key(key));
    }
    [("=", false), (": ", true)]
        .iter()
        .find_map(|&(separator, numeric)| {
            let (key, value) = line.split_once(separator)?;
            let key = key.trim().trim_matches(['"', '\'', ',', '{', ' ']);
            let value = value.trim().trim_matches(['"', '\'', ',', '}', ' ']);
            // `>=1.4` is a bound, not a setting of `>`.
            let is_setting = key.chars().any(char::is_alphabetic)
                && key.len() <= KEY_MAX_CHARS
                && key.split_whitespace().count() <= KEY_WORDS
                && !value.is_empty()
                && (!numeric || value.chars().any(|c| c.is_ascii_digit()));
            is_setting.then(|| fold_key(key))
        })
}

/// The line near the end of a command's output that counts what happened
/// ("410 tests, 2 failures", "3 passed, 1 failed in 2.1s"), if there is one.
fn tally(lines: &[&str]) -> Option<String> {
    // Outcomes, not "running 3 tests".
    const WORDS: [&str; 11] = [
        "passed", "failed", "failure", "failures", "errors", "error", "examples", "skipped",
        "warnings", "pass", "fail",
    ];
    const TALLY_MAX_CHARS: usize = 120;
    lines.iter().rev().take(12).find_map(|line| {
        let line = strip_wrapping_tags(line);
        let words: Vec<String> = line
            .split(|c: char| !c.is_alphanumeric())
            .map(str::to_ascii_lowercase)
            .collect();
        let counted = words.windows(2).any(|w| {
            w[0].chars().all(|c| c.is_ascii_digit())
                && !w[0].is_empty()
                && WORDS.contains(&w[1].as_str())
        });
        (counted && line.chars().count() <= TALLY_MAX_CHARS)
            .then(|| one_line(line, TALLY_MAX_CHARS))
    })
}

/// The code of an exit-status line such as `Exit code 1` or `exit status: 2`.
fn exit_code(line: &str) -> Option<i64> {
    const PHRASES: [&str; 6] = [
        "exit code",
        "exit status",
        "exited with code",
        "exit_code",
        "returncode",
        "return code",
    ];
    // Longer lines are prose that mentions exit codes.
    if line.len() > 60 {
        return None;
    }
    let lower = line.to_ascii_lowercase();
    PHRASES.iter().find_map(|phrase| {
        let rest = lower[lower.find(phrase)? + phrase.len()..].trim_start_matches([' ', ':', '=']);
        let end = rest
            .char_indices()
            .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
            .map_or(rest.len(), |(i, _)| i);
        rest[..end].parse().ok()
    })
}

/// Listings (`cat -n`, `grep`, editors' views) show source code, whose
/// `Error` types and `{:error, _}` patterns are not errors that happened.
fn is_listing(line: &str) -> bool {
    // `grep -r` hits, `path/to/file.ex:content`; compilers' `path:12:5: error`
    // has a line number and stays an error.
    if let Some((path, rest)) = line.split_once(':')
        && is_file_path(path)
        && !rest.starts_with(|c: char| c.is_ascii_digit())
    {
        return true;
    }
    let rest = line.trim_start_matches(|c: char| c.is_ascii_digit());
    if rest.len() == line.len() {
        return false;
    }
    // `12:` starts a numbered line, `21:33:40` a timestamp.
    rest.trim_start_matches(' ')
        .starts_with(['→', '\t', '│', '|'])
        || rest
            .strip_prefix(':')
            .is_some_and(|r| !r.starts_with(|c: char| c.is_ascii_digit()))
}

fn looks_like_error(line: &str) -> bool {
    const MARKERS: [&str; 15] = [
        "error:",
        "error[",
        "[error]",
        // Harness tags such as `<tool_use_error>`.
        "_error>",
        "Error",
        "ERROR",
        "Traceback",
        "FAILED",
        "FAIL:",
        "failed:",
        "panicked",
        "exception",
        "Exception",
        "fatal:",
        "Fatal",
    ];
    // A list item is prose (an issue's acceptance criteria, a commit
    // message, a plan): "- Rescue any exception and log it" happened nowhere.
    let prose = line.starts_with("- ") || line.starts_with("* ");
    (MARKERS.iter().any(|m| has_marker(line, m)) || counts_failures(line))
        && !prose
        && !is_listing(line)
}

/// Whether `line` counts failures that happened: a number above zero
/// before `failed`, `failures`, `errors` (`3 failed`, `297 tests, 11
/// failures`, `2 errors`), not `0 failed`.
fn counts_failures(line: &str) -> bool {
    const COUNTED: [&str; 5] = ["failed", "failure", "failures", "error", "errors"];
    let words: Vec<&str> = line
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).any(|w| {
        COUNTED.contains(&w[1].to_ascii_lowercase().as_str())
            && w[0].parse::<u64>().is_ok_and(|n| n > 0)
    })
}

/// `marker` occurs as a word: not glued to a following word (`Errors`,
/// `exceptiongroup`) and, for lowercase markers, not the tail of an identifier
/// (`record_exception`). Capitalised markers may end a CamelCase name
/// (`RuntimeError`).
fn has_marker(line: &str, marker: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let check_before = marker.starts_with(|c: char| c.is_ascii_lowercase());
    let check_after = marker.ends_with(|c: char| c.is_alphabetic());
    line.match_indices(marker).any(|(at, _)| {
        let before_ok = !check_before || !line[..at].ends_with(is_word);
        let after_ok = !check_after || !line[at + marker.len()..].starts_with(is_word);
        before_ok && after_ok
    })
}

/// The first line that says something: not blank, not only an exit status.
/// Returned with its tags, which may be what marks it as an error.
fn first_informative<'a>(lines: &[&'a str]) -> Option<&'a str> {
    lines.iter().copied().find(|l| says_something(l))
}

/// Whether a line says something: not blank, not only an exit status.
fn says_something(line: &str) -> bool {
    let line = strip_wrapping_tags(line);
    line.chars().any(char::is_alphanumeric) && exit_code(line).is_none()
}

fn error_text(line: &str) -> String {
    one_line(strip_wrapping_tags(line), ERROR_MAX_CHARS)
}

/// `<tool_use_error>File does not exist.</tool_use_error>` → `File does not exist.`
fn strip_wrapping_tags(line: &str) -> &str {
    let is_tag = |tag: &str| {
        !tag.is_empty()
            && tag
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-/".contains(c))
    };
    let mut line = line.trim();
    if let Some((tag, rest)) = line.strip_prefix('<').and_then(|l| l.split_once('>'))
        && is_tag(tag)
    {
        line = rest.trim_start();
    }
    if let Some((rest, tag)) = line.strip_suffix('>').and_then(|l| l.rsplit_once("</"))
        && is_tag(tag)
    {
        line = rest.trim_end();
    }
    line
}

/// Short sentences of an assistant text that state something, skipping code
/// blocks, headings, tables and lead-ins to the next tool call: the first
/// ones (what it sets out to do) and the last (a report's conclusion: what
/// it found, what it will do next).
fn decisions(text: &str) -> Vec<String> {
    let mut all = stated(text);
    if all.len() > DECISIONS_PER_TEXT {
        let last = all.pop();
        all.truncate(DECISIONS_PER_TEXT - 1);
        all.extend(last);
    }
    all
}

/// Every sentence of `text` that states something.
fn stated(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || line.starts_with(['#', '|']) {
            continue;
        }
        for sentence in sentences(strip_list_marker(line)) {
            if is_decision(sentence) {
                out.push(one_line(sentence, usize::MAX));
            }
        }
    }
    out
}

fn strip_list_marker(line: &str) -> &str {
    if let Some(rest) = line
        .strip_prefix(['-', '*', '+'])
        .and_then(|r| r.strip_prefix(' '))
    {
        return rest.trim_start();
    }
    let rest = line.trim_start_matches(|c: char| c.is_ascii_digit());
    match rest
        .strip_prefix(['.', ')'])
        .and_then(|r| r.strip_prefix(' '))
    {
        Some(item) if rest.len() < line.len() => item.trim_start(),
        _ => line,
    }
}

/// Splits after `.`, `!` or `?` followed by a space, and after CJK full stops.
fn sentences(line: &str) -> impl Iterator<Item = &str> {
    let mut rest = line;
    std::iter::from_fn(move || {
        let rest_now = rest.trim_start();
        if rest_now.is_empty() {
            return None;
        }
        let mut chars = rest_now.char_indices().peekable();
        let mut end = rest_now.len();
        while let Some((i, c)) = chars.next() {
            let boundary = match c {
                '。' | '！' | '？' => true,
                '.' => {
                    chars.peek().is_none_or(|&(_, next)| next.is_whitespace())
                        && !is_abbreviation(&rest_now[..i])
                }
                '!' | '?' => chars.peek().is_none_or(|&(_, next)| next.is_whitespace()),
                _ => false,
            };
            if boundary {
                end = i + c.len_utf8();
                break;
            }
        }
        rest = &rest_now[end..];
        Some(&rest_now[..end])
    })
}

/// Whether the word that `before` ends with, followed by a full stop, is an
/// initial or an abbreviation ("M. Okafor", "e.g. this") rather than the end
/// of a sentence.
fn is_abbreviation(before: &str) -> bool {
    const ABBREVIATIONS: [&str; 9] = ["e.g", "i.e", "mr", "mrs", "ms", "dr", "vs", "cf", "approx"];
    let word = before
        .rsplit(char::is_whitespace)
        .next()
        .unwrap_or(before)
        .trim_start_matches(['(', '"', '\'']);
    let initial = word.chars().count() == 1 && word.chars().all(|c| c.is_uppercase());
    initial || ABBREVIATIONS.contains(&word.to_lowercase().as_str())
}

fn is_decision(sentence: &str) -> bool {
    // English lead-ins narrate the next tool call or acknowledge the last one;
    // the dominant agents write them constantly. Other languages pass
    // unfiltered: the budget drops decisions first anyway.
    const NARRATION: [&str; 12] = [
        "let me",
        "now let me",
        "let's",
        "now let's",
        "let us",
        "good",
        "great",
        "perfect",
        "excellent",
        "ok",
        "alright",
        "now i have",
    ];
    // A label ("**Props needed:**") introduces, it does not state.
    let label = sentence.trim_end_matches(['*', '_']).ends_with([':', '：']);
    if label || !DECISION_MILLIS.contains(&text_millis(sentence)) {
        return false;
    }
    let head: String = sentence
        .chars()
        .take(12)
        .flat_map(char::to_lowercase)
        .collect();
    !NARRATION.iter().any(|n| head.starts_with(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, name: &str, arguments: &str) -> Part {
        Part::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        })
    }

    fn result(id: &str, content: &str, is_error: bool) -> Part {
        Part::ToolResult(ToolResult {
            call_id: id.into(),
            content: content.into(),
            is_error,
        })
    }

    /// The code section of `digest`: (path, lines), oldest first.
    fn code_of(digest: &Digest) -> Vec<(&str, Vec<&str>)> {
        digest
            .code
            .iter()
            .map(|(path, lines)| (path.as_str(), lines.iter().map(String::as_str).collect()))
            .collect()
    }

    fn digest_of(messages: &[Message]) -> Digest {
        let mut digest = Digest::default();
        absorb(&mut digest, messages);
        digest
    }

    #[test]
    fn calls_are_read_by_argument_keys_not_tool_names() {
        let messages = [
            Message {
                role: Role::Assistant,
                parts: vec![
                    call(
                        "1",
                        "Frobnicate",
                        r#"{"notebookPath": "a.ipynb", "paths": ["b.rs", "c.rs"]}"#,
                    ),
                    call(
                        "2",
                        "shell",
                        r#"{"cmd": ["bash", "-lc", "cargo test -p x src/lib.rs:12"]}"#,
                    ),
                    call(
                        "3",
                        "plan",
                        r#"{"todos": [{"content": "write", "status": "in_progress"}, "check"]}"#,
                    ),
                ],
            },
            Message {
                role: Role::Tool,
                parts: vec![result("1", "ok", false)],
            },
            Message {
                role: Role::Tool,
                parts: vec![result("2", "running 3 tests\ntest result: ok", false)],
            },
        ];
        let digest = digest_of(&messages);
        let files: Vec<_> = digest
            .files
            .iter()
            .map(|(p, t)| (p.as_str(), t[0].0.as_str()))
            .collect();
        assert_eq!(
            files,
            [
                ("a.ipynb", "Frobnicate"),
                ("b.rs", "Frobnicate"),
                ("c.rs", "Frobnicate"),
                ("src/lib.rs", "shell")
            ]
        );
        let commands: Vec<_> = digest
            .commands
            .iter()
            .map(|((c, o), _)| (c.as_str(), o.as_str()))
            .collect();
        assert_eq!(commands, [("bash -lc cargo test -p x src/lib.rs:12", "ok")]);
        assert_eq!(
            digest.todos,
            [
                Todo {
                    status: Status::Active,
                    text: "write".into()
                },
                Todo {
                    status: Status::Pending,
                    text: "check".into()
                }
            ]
        );
    }

    /// The digest after `runs`, each a command and its output; a run with
    /// no output at all failed (its result is an error).
    fn digest_after(runs: &[(&str, &str)]) -> Digest {
        let mut digest = Digest::default();
        let messages: Vec<Message> = (runs.iter().enumerate())
            .flat_map(|(n, (command, output))| {
                let id = n.to_string();
                let arguments = serde_json::json!({ "command": command }).to_string();
                [
                    Message {
                        role: Role::Assistant,
                        parts: vec![call(&id, "Bash", &arguments)],
                    },
                    Message {
                        role: Role::User,
                        parts: vec![result(&id, output, output.is_empty())],
                    },
                ]
            })
            .collect();
        absorb(&mut digest, &messages);
        digest
    }

    /// The digest's commands after `runs` ([`digest_after`]).
    fn commands_after(runs: &[(&str, &str)]) -> Vec<(String, String, u32)> {
        let digest = digest_after(runs);
        (digest.commands.iter())
            .map(|((c, o), &n)| (c.clone(), o.clone(), n))
            .collect()
    }

    #[test]
    fn a_short_outputs_values_are_its_commands_outcome() {
        let outcome = |output: &str| commands_after(&[("run", output)])[0].1.clone();
        // Settings, ids, versions, sizes, addresses, rows of them.
        assert_eq!(
            outcome(
                "region=eu-west-3\nreplicas=4\nbuild=2026.11.3-rc2\nDB_HOST=pg-prod-7.internal"
            ),
            "ok: region=eu-west-3; replicas=4; build=2026.11.3-rc2; DB_HOST=pg-prod-7.internal"
        );
        assert_eq!(outcome("api cpu limit: 143m"), "ok: api cpu limit: 143m");
        assert_eq!(outcome("7683e07d0"), "ok: 7683e07d0");
        assert_eq!(
            outcome("Resource  Used  Hard\nlimits.memory  12Gi  194Gi"),
            "ok: limits.memory 12Gi 194Gi"
        );
        assert_eq!(outcome("14:rate_limit = 3014"), "ok: 14:rate_limit = 3014");
        // Prose with a bare count, a status, a file shown with line numbers,
        // a long output: nothing found.
        assert_eq!(outcome("running 3 tests\ntest result: ok"), "ok");
        assert_eq!(outcome("  12→let port = 8080;"), "ok");
        let long: String = (0..20).map(|n| format!("key{n}=v{n}\n")).collect();
        assert_eq!(outcome(&long), "ok");
        // After a tally, the names it listed, not its chatter.
        assert_eq!(
            outcome(
                "Running with seed: 959483\ntest result: FAILED. 41 passed; 1 failed\nfailures:\n    ledger::tests::xylyb_84"
            ),
            "error: test result: FAILED. 41 passed; 1 failed; ledger::tests::xylyb_84"
        );
        assert_eq!(
            outcome(
                "Running with seed: 959483\n8 tests, 0 failures\nslow:\n    ledger::tests::big_84"
            ),
            "ok: 8 tests, 0 failures; ledger::tests::big_84"
        );
    }

    /// A command run again holds its last outcome, its runs counted: an
    /// earlier value or failure is stale.
    #[test]
    fn a_commands_last_outcome_replaces_the_earlier_ones() {
        let commands = commands_after(&[
            ("cat deploy.env", "replicas=4"),
            ("make", "Exit code 2\nmake: *** No rule"),
            ("cat deploy.env", "replicas=6"),
            ("make", "built"),
        ]);
        assert_eq!(
            commands,
            [
                ("cat deploy.env".to_owned(), "ok: replicas=6".to_owned(), 2),
                ("make".to_owned(), "ok".to_owned(), 2),
            ]
        );
    }

    /// A setting one command showed is stale once another shows it anew
    /// (another command, another format), unless the two look at two
    /// things (one argument apart, or other files).
    #[test]
    fn a_setting_shown_again_by_another_command_replaces_the_old() {
        let commands = commands_after(&[
            ("cat deploy.env", "region=eu-west-3\nreplicas=4"),
            (
                "kubectl get deploy web -o yaml | grep replicas",
                "  replicas: 6",
            ),
        ]);
        assert_eq!(
            commands,
            [
                (
                    "cat deploy.env".to_owned(),
                    "ok: region=eu-west-3".to_owned(),
                    1
                ),
                (
                    "kubectl get deploy web -o yaml | grep replicas".to_owned(),
                    "ok: replicas: 6".to_owned(),
                    1
                ),
            ]
        );
        let both = |a: &str, b: &str| {
            let commands = commands_after(&[(a, "cpu: 500m"), (b, "cpu: 250m")]);
            commands
                .iter()
                .filter(|(_, o, _)| o.contains("cpu"))
                .count()
        };
        assert_eq!(
            both(
                "kubectl get deploy api -o yaml",
                "kubectl get deploy worker -o yaml"
            ),
            2
        );
        assert_eq!(
            both("grep cpu k8s/api/deploy.yaml", "cat k8s/worker/deploy.yaml"),
            2
        );
        assert_eq!(
            both(
                "grep cpu k8s/api/deploy.yaml",
                "kubectl get deploy api -o yaml"
            ),
            1
        );
        // A row of values is a setting by its frame, a line number aside.
        let commands = commands_after(&[
            (
                "grep -n payments CODEOWNERS",
                "14:/src/payments/ @acme/team-pay7",
            ),
            (
                "git show origin/main:CODEOWNERS | grep payments",
                "/src/payments/ @acme/team-led4",
            ),
        ]);
        assert_eq!(commands[0].1, "ok");
        // A tally counts one run: another command's is another run's.
        let commands = commands_after(&[
            (
                "cargo test -p ledger",
                "test result: FAILED. 41 passed; 1 failed",
            ),
            ("cargo test", "test result: ok. 50 passed; 0 failed"),
        ]);
        assert_eq!(
            commands[0].1,
            "error: test result: FAILED. 41 passed; 1 failed"
        );
    }

    /// A key names its setting however much of its path it spells.
    #[test]
    fn a_key_is_the_same_however_much_of_its_path_it_names() {
        let keys = |k: &[&str]| k.iter().map(|k| k.to_string()).collect::<Vec<_>>();
        assert!(shows(&keys(&["test_db_prefix"]), "db_prefix"));
        assert!(shows(
            &keys(&["run: coverage report __fail_under"]),
            "fail_under"
        ));
        assert!(shows(&keys(&["replicas"]), "replicas"));
        assert!(!shows(&keys(&["api cpu limit"]), "worker cpu limit"));
        assert!(!shows(
            &keys(&["read_timeout_seconds"]),
            "write_timeout_seconds"
        ));
        assert!(!shows(&keys(&["db_prefix"]), "prefix"));
    }

    /// A value printed alone is the setting the command asked for.
    #[test]
    fn a_value_printed_alone_is_the_setting_asked_for() {
        for command in [
            "printenv CACHE_URL",
            "kubectl get cm web -o jsonpath='{.data.cache_url}'",
            "jq .cache-url config/app.json",
        ] {
            assert!(
                asked_for(command).contains(&"cache_url".to_owned()),
                "{command}"
            );
        }
        assert!(asked_for("cat deploy.env").is_empty());
        assert_eq!(
            asked_for("aws ssm get-parameter --name /app/db_url --output text"),
            ["app", "db_url"]
        );
        let commands = commands_after(&[
            (
                "cat .env.production",
                "PORT=8080\nCACHE_URL=redis://cache-7:6379",
            ),
            (
                "kubectl exec deploy/web -- printenv CACHE_URL",
                "redis://cache-9:6379",
            ),
        ]);
        assert_eq!(commands[0].1, "ok: PORT=8080");
    }

    /// An error a later run of its command no longer shows is fixed, be
    /// that run clean or failing on something else; one it shows again is
    /// open; a run that shows nothing at all fixes nothing.
    #[test]
    fn an_error_its_command_no_longer_shows_is_fixed() {
        let errors = |runs: &[(&str, &str)]| {
            let digest = digest_after(runs);
            (digest.errors.iter())
                .map(|(e, note)| (e.clone(), note.fixed))
                .collect::<Vec<_>>()
        };
        let a = "FAILED tests/test_a.py::test_one - AssertionError";
        let b = "FAILED tests/test_b.py::test_two - AssertionError";
        assert_eq!(
            errors(&[("pytest -q", a), ("pytest -q", b)]),
            [(a.to_owned(), true), (b.to_owned(), false)]
        );
        assert_eq!(
            errors(&[("pytest -q", a), ("pytest -q", a)]),
            [(a.to_owned(), false)]
        );
        assert_eq!(
            errors(&[("pytest -q", a), ("pytest -q", "")]),
            [(a.to_owned(), false)]
        );
    }

    #[test]
    fn a_search_hits_line_number_is_not_part_of_it() {
        for (line, bare) in [
            ("14:rate_limit = 3014", "rate_limit = 3014"),
            ("jobs/app/.env:2:DB_HOST=pg-7", "DB_HOST=pg-7"),
            ("13-  format: ecs-4.88", "format: ecs-4.88"),
            ("10.0.0.1:8080 up", "10.0.0.1:8080 up"),
            ("2026-01-05 backup done", "2026-01-05 backup done"),
            ("https://a.dev:8443/x", "https://a.dev:8443/x"),
        ] {
            assert_eq!(without_line_number(line), bare, "{line}");
        }
        // A JSON object on one line shows each of its fields.
        assert_eq!(
            setting_keys(r#"{"state":"up","build":"7c1e2f0","pid":4121}"#),
            ["state", "build", "pid"]
        );
    }

    /// A value shown anew replaces the old one however it is looked up: the
    /// same form and name in another command's output, any look at it with
    /// other flags, a jq path or a bound; a look at another thing (one
    /// name put for another throughout the command) keeps its own.
    #[test]
    fn a_value_shown_anew_replaces_the_old() {
        let found = |runs: &[(&str, &str)]| -> Vec<String> {
            commands_after(runs)
                .into_iter()
                .map(|(_, o, _)| o)
                .collect()
        };
        // The same form and name: a role in an ARN, an image's tag.
        assert_eq!(
            found(&[
                (
                    "grep role_arn ~/.aws/credentials",
                    "role_arn = arn:aws:iam::1234:role/deployer-kq3"
                ),
                (
                    "aws sts get-caller-identity --query Arn --output text",
                    "arn:aws:sts::1234:assumed-role/deployer-zt8/session"
                ),
            ])[0],
            "ok"
        );
        assert_eq!(
            found(&[
                (
                    "docker ps --format '{{.Image}}'",
                    "registry.example/shop/cart:4.1.0-b7"
                ),
                (
                    "kubectl describe deploy cart | grep Image",
                    "Image: registry.example/shop/cart:4.2.2-b9"
                ),
            ])[0],
            "ok"
        );
        // A hash's digits fall anywhere; a name may open a part; a log
        // line's pairs are settings each.
        assert_eq!(
            found(&[
                (
                    "fleetctl describe eu --output yaml",
                    "servers: 12\nbuild_id: rel-5120-a9f3\nstatus: up"
                ),
                (
                    "echo status | nc -q1 eu-4.fleet.internal 7000",
                    "node=eu-4 build=rel-5188-0c4e load=0.4"
                ),
            ])[0],
            "ok: servers: 12"
        );
        assert_eq!(
            found(&[
                ("cat .lint.ini", "BasedOn = Core, Initechqrs41"),
                ("lintctl config | jq -r '.styles[1]'", "Initechmno77"),
            ])[0],
            "ok"
        );
        assert_eq!(
            found(&[
                (
                    "parcel show P-77 -o wide",
                    "ID    COURIER  TRACKING\nP-77  UPS      1ZA00412"
                ),
                (
                    "grep P-77 /var/log/parcel.log | tail -1",
                    "2026-01-02T10:00:00Z courier=UPS parcel=P-77 tracking=1ZB00977"
                ),
            ])[0],
            "ok: ID=P-77"
        );
        // An error another look shows with another value in its place is
        // behind the agent.
        let digest = digest_after(&[
            (
                "ctest --test-dir build",
                "1 tests failed out of 9\n\t 4 - test_link_31 (Failed)",
            ),
            (
                "grep -B1 '<failure' rig/report.xml",
                "<testcase name=\"test_link_58\">\n<failure message=\"no ACK\"/>",
            ),
        ]);
        let fixed: Vec<bool> = (digest.errors.iter())
            .filter(|(e, _)| e.contains("test_link_31"))
            .map(|(_, note)| note.fixed)
            .collect();
        assert_eq!(fixed, [true]);
        // Not a value of another name, nor a bare version, nor a short name
        // with another number.
        for (old, new) in [
            ("worker-7.internal", "api-7.internal"),
            ("2.4.1", "2.5.0"),
            ("eth0", "eth1"),
        ] {
            assert!(
                !one_value_later(&values(old).next().unwrap(), &values(new).next().unwrap()),
                "{old} / {new}"
            );
        }
        // One look with other flags.
        assert_eq!(
            found(&[
                ("git config --get user.name", "bot-ops17"),
                (
                    "git config --show-origin user.name",
                    "file:.git/config\tbot-ops42"
                ),
            ])[0],
            "ok"
        );
        assert_eq!(
            found(&[
                (
                    "gh pr list --limit 1",
                    "#812  Fix the cart rounding  fix/cart  OPEN"
                ),
                ("gh pr list --limit 1 --json number", "[{\"number\": 815}]"),
            ])[0],
            "ok"
        );
        // A bound is no setting of `>`; a jq path is no file; an output
        // format is not what a command asks for.
        assert_eq!(
            found(&[
                ("npm pkg get engines", "{\"node\": \">=18.2.0\"}"),
                ("jq -r .engines.node package.json", ">=20.1.0"),
            ])[0],
            "ok"
        );
        assert_eq!(
            found(&[
                (
                    "psql -c 'SHOW work_mem;'",
                    " work_mem \n----------\n 64MB\n(1 row)"
                ),
                (
                    "aws rds describe-db-parameters --query \"Parameters[?Name=='work_mem'].Value\" --output text",
                    "128MB"
                ),
            ])[0],
            "ok"
        );
        // Another thing: one name put for another throughout.
        let both = found(&[
            (
                "helm get values cart -o json | jq '{app: \"cart\", cpu: .cpu}'",
                "{\"app\": \"cart\", \"cpu\": \"500m\"}",
            ),
            (
                "helm get values search -o json | jq '{app: \"search\", cpu: .cpu}'",
                "{\"app\": \"search\", \"cpu\": \"250m\"}",
            ),
        ]);
        assert!(both[0].contains("500m"), "{both:?}");
    }

    /// A table's cells are read under their headings: below a rule of
    /// dashes, or one row below a heading in capitals; a row's cells are
    /// what its wide gaps part, and a comment after a value is dropped.
    #[test]
    fn a_table_is_read_by_its_headings() {
        let lines = |text: &'static str| -> Vec<&'static str> {
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect()
        };
        assert_eq!(
            table_findings(&lines(
                " shared_buffers \n----------------\n 512MB\n(1 row)"
            )),
            Some(vec!["shared_buffers=512MB".to_owned()])
        );
        assert_eq!(
            table_findings(&lines("| id | plan |\n|----|------|\n| 7 | gold-3 |")),
            Some(vec!["id=7".to_owned(), "plan=gold-3".to_owned()])
        );
        assert_eq!(
            table_findings(&lines(
                "KIND   TITLE                      NUMBER\nIssue  Stock sync drops items  4410"
            )),
            Some(vec![
                "NUMBER=4410".to_owned(),
                "KIND=Issue".to_owned(),
                "TITLE=Stock sync drops items".to_owned()
            ])
        );
        // Many rows under capitals read better as rows.
        assert_eq!(
            table_findings(&lines("NAME  READY\nweb-1  1/1\nweb-2  1/1")),
            None
        );
        assert_eq!(table_findings(&lines("all good\nnothing to report")), None);
        assert!(carries_value(
            "#4410  Stock sync drops items after a partial refund  bug, p1"
        ));
        assert!(carries_value(
            "| ledger | 7 | Staging | 2025-04-02 | release-bot |"
        ));
        assert_eq!(
            setting_key("max_batch_rows   5000"),
            Some("max_batch_rows".to_owned())
        );
        assert_eq!(
            setting_key("vm.swappiness 60"),
            Some("swappiness".to_owned())
        );
        assert_eq!(setting_key("running 3 tests"), None);
        assert_eq!(
            without_comment("serde = \"1.0.210\"    # A serialization framework"),
            "serde = \"1.0.210\""
        );
        assert_eq!(without_comment("#12 is open"), "#12 is open");
    }

    /// A short JSON output is read as settings: its values with their key
    /// paths, a Key/Value pair as the setting it names, values with a digit
    /// first; a setting shown later in another format replaces it.
    #[test]
    fn a_json_output_is_read_as_settings() {
        let outcome = |output: &str| commands_after(&[("run", output)])[0].1.clone();
        assert_eq!(
            outcome(
                r#"{"tier": "growth", "limits": {"requests_per_minute": 8300, "burst": null}}"#
            ),
            "ok: limits.requests_per_minute=8300; tier=growth"
        );
        assert_eq!(
            outcome(
                "[\n  {\n    \"Key\": \"idle_timeout.timeout_seconds\",\n    \"Value\": \"844\"\n  }\n]"
            ),
            "ok: idle_timeout.timeout_seconds=844"
        );
        assert_eq!(
            outcome(r#"[{"setting_name": "on_call", "value": "ops-7"}]"#),
            "ok: on_call=ops-7"
        );
        let commands = commands_after(&[
            (
                "curl -s localhost:8080/config",
                r#"{"db_host": "pg-7.internal", "pool": 20}"#,
            ),
            (
                "grep -rn DB_HOST deploy/",
                "deploy/app.env:3:DB_HOST=pg-9.internal",
            ),
        ]);
        assert_eq!(commands[0].1, "ok: pool=20");
        // Not JSON, or too long to be a finding: read as lines.
        assert_eq!(outcome("{ not json"), "ok");
        let long: String = (0..20)
            .map(|n| format!("\"k{n}\": {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        assert_eq!(outcome(&format!("{{{long}}}")), "ok");
    }

    #[test]
    fn an_output_of_one_token_is_the_value_the_command_printed() {
        let outcome = |output: &str| commands_after(&[("run", output)])[0].1.clone();
        assert_eq!(outcome("6\n"), "ok: 6");
        assert_eq!(outcome("eu-west-3"), "ok: eu-west-3");
        assert_eq!(outcome("built"), "ok");
        assert_eq!(outcome("6\ndone"), "ok");
    }

    #[test]
    fn command_outcomes() {
        let run = |content: &str, is_error: bool| {
            let digest = digest_of(&[
                Message {
                    role: Role::Assistant,
                    parts: vec![call("1", "Bash", r#"{"command": "make"}"#)],
                },
                Message {
                    role: Role::User,
                    parts: vec![result("1", content, is_error)],
                },
            ]);
            let ((_, outcome), _) = digest.commands.iter().next().unwrap();
            let errors: Vec<String> = digest.errors.iter().map(|(e, _)| e.clone()).collect();
            (outcome.clone(), errors)
        };
        assert_eq!(
            run("Exit code 2\nmake: *** No rule", false),
            ("exit 2".into(), vec!["make: *** No rule".into()])
        );
        assert_eq!(run("built\nexit status: 0", false), ("ok".into(), vec![]));
        assert_eq!(run("boom", true), ("failed".into(), vec!["boom".into()]));
        assert_eq!(
            run(
                "a\nerror[E0308]: mismatched\n  12: let Error = 1;\nerror[E0308]: mismatched",
                false
            ),
            ("error".into(), vec!["error[E0308]: mismatched".into()])
        );
        assert_eq!(run("all good", false), ("ok".into(), vec![]));
    }

    #[test]
    fn a_file_written_whole_after_a_read_is_an_edit_of_what_was_read() {
        let read = serde_json::json!({"file_path": "/srv/app/lib/queue.ex"});
        let shown = "     1→defmodule Queue do\n     2→  def push(q, x), do: [x | q]\n     3→  def size(q), do: length(q)\n     4→end\n";
        let rewrite = serde_json::json!({
            "file_path": "/srv/app/lib/queue.ex",
            "content": "defmodule Queue do\n  @max_depth 500\n  def push(q, x), do: [x | q]\n  def size(q), do: length(q)\n  def full?(q), do: size(q) >= @max_depth\nend\n",
        });
        // A second rewrite is compared with the first.
        let again = serde_json::json!({
            "file_path": "/srv/app/lib/queue.ex",
            "content": "defmodule Queue do\n  @max_depth 800\n  def push(q, x), do: [x | q]\n  def size(q), do: length(q)\n  def full?(q), do: size(q) >= @max_depth\nend\n",
        });
        let digest = digest_of(&[
            Message {
                role: Role::Assistant,
                parts: vec![call("r", "Read", &read.to_string())],
            },
            Message {
                role: Role::Tool,
                parts: vec![result("r", shown, false)],
            },
            Message {
                role: Role::Assistant,
                parts: vec![call("w", "Write", &rewrite.to_string())],
            },
            Message {
                role: Role::Assistant,
                parts: vec![call("w2", "Write", &again.to_string())],
            },
        ]);
        let code = code_of(&digest);
        assert_eq!(
            code,
            [(
                "/srv/app/lib/queue.ex",
                vec![
                    "@max_depth 500",
                    "def full?(q), do: size(q) >= @max_depth",
                    "@max_depth 800"
                ]
            )]
        );
    }

    #[test]
    fn an_edit_keeps_the_lines_it_added_and_a_new_file_its_declarations() {
        let edit = serde_json::json!({
            "file_path": "lib/store.ex",
            "old_string": "def fetch(id) do\n  Repo.get(Item, id)\nend",
            "new_string": "@cache_ttl 300\ndef fetch(id) do\n  Cache.get(id) || Repo.get(Item, id)\nend\n\ndefp warm(ids) do\n  end\n} else {\nend",
        });
        let write = serde_json::json!({
            "path": "src/limits.rs",
            "content": "use std::time::Duration;\n\npub const MAX_RETRIES: u32 = 5;\n\nfn backoff(n: u32) -> Duration {\n    Duration::from_millis(100 << n)\n}\n",
        });
        let digest = digest_of(&[Message {
            role: Role::Assistant,
            parts: vec![
                call("1", "Edit", &edit.to_string()),
                call("2", "create_file", &write.to_string()),
            ],
        }]);
        let code = code_of(&digest);
        assert_eq!(
            code,
            [
                // The unchanged head is not what changed, nor bare syntax.
                (
                    "lib/store.ex",
                    vec![
                        "@cache_ttl 300",
                        "Cache.get(id) || Repo.get(Item, id)",
                        "defp warm(ids) do"
                    ]
                ),
                (
                    "src/limits.rs",
                    vec![
                        "use std::time::Duration;",
                        "pub const MAX_RETRIES: u32 = 5;",
                        "fn backoff(n: u32) -> Duration {"
                    ]
                ),
            ]
        );
    }

    #[test]
    fn output_plumbing_is_not_part_of_a_command() {
        assert_eq!(without_plumbing("mix test 2>&1 | tail -20"), "mix test");
        assert_eq!(without_plumbing("bd ready 2>/dev/null"), "bd ready");
        assert_eq!(without_plumbing("make | head -n 5 | tail -1"), "make");
        assert_eq!(without_plumbing("git log | grep fix"), "git log | grep fix");
        assert_eq!(without_plumbing("a || tail -5"), "a || tail -5");
        assert_eq!(without_plumbing("| tail -5"), "| tail -5");
        assert_eq!(without_plumbing("tail -5 x.log"), "tail -5 x.log");
    }

    #[test]
    fn unanswered_commands_are_kept() {
        let digest = digest_of(&[Message {
            role: Role::Assistant,
            parts: vec![call("1", "Bash", r#"{"command": "sleep 9\necho"}"#)],
        }]);
        let ((command, outcome), _) = digest.commands.iter().next().unwrap();
        assert_eq!(
            (command.as_str(), outcome.as_str()),
            ("sleep 9 …", NO_RESULT)
        );
    }

    #[test]
    fn file_contents_are_not_errors() {
        let digest = digest_of(&[
            Message {
                role: Role::Assistant,
                parts: vec![call("1", "Read", r#"{"file_path": "/x.ex"}"#)],
            },
            Message {
                role: Role::Tool,
                parts: vec![result(
                    "1",
                    "     1→raise CompileError\n     2→{:error, _}",
                    false,
                )],
            },
            Message {
                role: Role::Assistant,
                parts: vec![call("2", "Read", r#"{"file_path": "/y.ex"}"#)],
            },
            Message {
                role: Role::Tool,
                parts: vec![result(
                    "2",
                    "<tool_use_error>File does not exist.</tool_use_error>",
                    true,
                )],
            },
        ]);
        let errors: Vec<_> = digest.errors.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(errors, ["File does not exist."]);
    }

    #[test]
    fn listings_and_timestamps() {
        assert!(is_listing("49→    errors = load_errors()"));
        assert!(is_listing("1466:            raise ValueError(msg)"));
        assert!(is_listing("128 │       {:ok, _view}"));
        assert!(!is_listing("21:33:40.227 [error] Unexpected"));
        assert!(!is_listing("1 error generated."));
        assert!(is_listing(
            "deps/x/span.ex: def record_exception(ctx, Error)"
        ));
        assert!(!is_listing("src/main.rs:12:5: error: expected `;`"));
        assert!(looks_like_error("21:33:40.227 [error] Unexpected"));
    }

    #[test]
    fn a_bracketed_line_is_the_harness_but_a_bracketed_label_is_the_person() {
        for notice in [
            "[Request interrupted by user for tool use]",
            "[Background command \"Run tests\" completed (exit code 0)]",
            "<task-notification>done</task-notification>",
        ] {
            assert!(by_harness(notice), "{notice}");
        }
        let rule = "[RULE] never paste tokens into logs.";
        assert!(!by_harness(rule));
        let mut digest = Digest::default();
        absorb(&mut digest, &[Message::text(Role::User, rule)]);
        assert!(
            digest
                .binding
                .iter()
                .any(|s| s.text.contains("never paste tokens")),
            "{:?}",
            digest.binding
        );
    }

    #[test]
    fn a_count_of_failures_above_zero_is_an_error() {
        for line in [
            "14 doctests, 297 tests, 11 failures",
            "3 failed",
            "1 error generated.",
        ] {
            assert!(looks_like_error(line), "{line}");
        }
        for line in [
            "test result: ok. 3 passed; 0 failed",
            "8 tests, 0 failures",
            "0 errors",
        ] {
            assert!(!looks_like_error(line), "{line}");
        }
    }

    #[test]
    fn error_markers_are_words() {
        for line in [
            "** (RuntimeError) no key",
            "thread 'main' panicked at x",
            "an exception was raised",
            "<tool_use_error>x",
        ] {
            assert!(looks_like_error(line), "{line}");
        }
        for line in [
            "Requirement satisfied: exceptiongroup",
            "def record_exception(ctx)",
            "0 Errors found",
            "{:error, _} ->",
            "- Rescue any setup exception, log a warning, continue.",
            "* Error outcomes are marked with the span's error status.",
        ] {
            assert!(!looks_like_error(line), "{line}");
        }
    }

    #[test]
    fn requests_skip_reminders_and_tool_results() {
        let digest = digest_of(&[
            Message::text(
                Role::User,
                "<system-reminder>ctx</system-reminder>\n\nfix the bug\r\n",
            ),
            Message {
                role: Role::User,
                parts: vec![result("9", "output", false)],
            },
            Message::text(Role::User, "<system-reminder>only this</system-reminder>"),
        ]);
        let requests: Vec<_> = digest.requests.iter().map(|(r, _)| r.as_str()).collect();
        assert_eq!(requests, ["fix the bug"]);
    }

    #[test]
    fn what_a_harness_writes_as_the_user_is_one_line_or_nothing() {
        let digest = digest_of(&[
            Message::text(
                Role::User,
                "<local-command-caveat>Caveat: generated by local commands.</local-command-caveat>",
            ),
            Message::text(
                Role::User,
                "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n\
                 <command-args>and keep the 5 retries</command-args>",
            ),
            Message::text(
                Role::User,
                "<local-command-stdout>Compacted\n# Beads Workflow Context\n...</local-command-stdout>",
            ),
            Message::text(
                Role::User,
                "<task-notification>\n<task-id>b7636e2</task-id>\n<status>completed</status>\n\
                 <summary>Background command \"Run tests\" completed (exit code 0)</summary>\n\
                 </task-notification>\nRead the output file to retrieve the result: /tmp/b.output",
            ),
            Message::text(
                Role::User,
                "Base directory for this skill: /skills/hex-docs\n\n# Hex Documentation Search\n\nNever guess.",
            ),
        ]);
        let requests: Vec<_> = digest.requests.iter().map(|(r, _)| r.as_str()).collect();
        assert_eq!(
            requests,
            [
                "[Background command \"Run tests\" completed (exit code 0)]",
                "[Base directory for this skill: /skills/hex-docs]",
                // The person's latest request stays the current task.
                "/compact and keep the 5 retries",
            ]
        );
        // The person's arguments are what they said; the harness's lines are not.
        let binding: Vec<_> = digest.binding.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(binding, ["/compact and keep the 5 retries"]);
    }

    #[test]
    fn a_report_gives_its_title_opening_and_conclusion() {
        let report = "Perfect! Now I have all the information needed.\n\n\
            ## Exploration Report: Transcript Rendering\n\n\
            ### 1. How the views render\n\
            - Loads messages via `load_session_messages/1` filtering by subagent.\n\
            - Calls the renderer with the session's working directory.\n\n\
            ### Key Insights\n\
            1. **Core duplication:** the row loop is the same in both views.\n\
            2. **Flags needed:**\n   - `show_debug` (the overlay)\n\
            3. Both views need the same debug toggles.\n\
            4. The hooks differ only in name.\n\n\
            ### Relevant File Paths\n\
            - `/w/lib/session_live.ex` (776 lines in all)\n\
            agentId: a2898e3 (for resuming)\n<usage>total_tokens: 1</usage>";
        assert_eq!(
            report_findings(report),
            [
                "Exploration Report: Transcript Rendering",
                "Loads messages via `load_session_messages/1` filtering by subagent.",
                "**Core duplication:** the row loop is the same in both views.",
                "Both views need the same debug toggles.",
            ]
        );
        // Without a concluding section: the last statement outside the
        // reference list.
        let report = "# Audit\nThe config loader reads three files.\n\
            The cache is never invalidated, which explains the stale reads.\n\
            ## Files\n- `/w/src/config.rs` (the loader, 210 lines)";
        assert_eq!(
            report_findings(report),
            [
                "Audit",
                "The config loader reads three files.",
                "The cache is never invalidated, which explains the stale reads.",
            ]
        );
    }

    #[test]
    fn decisions_skip_narration_code_and_lead_ins() {
        let text = "Let me read the file.\nThe parser must stay lenient because hosts differ. Done.\n\
                    ```\nlet x = 1; // Use this instead of that value here.\n```\n\
                    Now update the renderer:\n- Use a BTreeMap so output order is stable.";
        assert_eq!(
            decisions(text),
            [
                "The parser must stay lenient because hosts differ.",
                "Use a BTreeMap so output order is stable."
            ]
        );
        assert_eq!(
            decisions("决定使用 BTreeMap 保证输出顺序稳定。好。"),
            ["决定使用 BTreeMap 保证输出顺序稳定。"]
        );
    }

    #[test]
    fn command_paths_need_a_slash_and_an_extension() {
        let found: Vec<_> =
            command_paths("mix test test/a_test.exs:12 && cat './b/c.json'; ls /tmp https://x.io/y.js $D/e.rs --out=f/g.txt v1/2.0")
                .collect();
        assert_eq!(found, ["test/a_test.exs", "./b/c.json"]);
    }
}
