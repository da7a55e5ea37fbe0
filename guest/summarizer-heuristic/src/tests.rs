//! Tests on the recorded sessions of `tests/corpus/sessions`.

use condense_model::tokens::{estimate_text, text_millis};
use condense_model::{Message, Part, Role, SummaryRequest, Thinking, ToolCall, ToolResult};
use serde_json::Value;

use crate::extract::REQUEST_MAX_MILLIS;
use crate::summarize;
use crate::text::{strip_reminders, tidy_block};

const SESSIONS: [&str; 7] = [
    "cc-opus-a",
    "cc-opus-b",
    "cc-opus-c",
    "cc-subagent-haiku",
    "cc-subagent-sonnet",
    "cc-trace-sonnet",
    "swe-agent-marshmallow",
];
const UNLIMITED: u32 = 1_000_000;

fn raw(name: &str) -> Vec<Value> {
    let path = format!(
        "{}/../../tests/corpus/sessions/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// Maps an OpenAI-style chat message to the model: `reasoning` becomes a
/// leading thinking part, `tool` messages carry one tool result.
fn message(v: &Value) -> Message {
    let role = match v["role"].as_str() {
        Some("system") => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool") => Role::Tool,
        other => panic!("role {other:?}"),
    };
    let content = v["content"].as_str().unwrap_or_default().to_owned();
    let mut parts = Vec::new();
    if let Some(text) = v["reasoning"].as_str() {
        parts.push(Part::Thinking(Thinking {
            text: text.to_owned(),
            signature: None,
        }));
    }
    if role == Role::Tool {
        let call_id = v["tool_call_id"].as_str().unwrap().to_owned();
        parts.push(Part::ToolResult(ToolResult {
            call_id,
            content,
            is_error: false,
        }));
    } else if !content.trim().is_empty() {
        parts.push(Part::Text(content));
    }
    for call in v["tool_calls"].as_array().into_iter().flatten() {
        parts.push(Part::ToolCall(ToolCall {
            id: call["id"].as_str().unwrap().to_owned(),
            name: call["function"]["name"].as_str().unwrap().to_owned(),
            arguments: call["function"]["arguments"].as_str().unwrap().to_owned(),
        }));
    }
    Message { role, parts }
}

fn load(name: &str) -> Vec<Message> {
    raw(name).iter().map(message).collect()
}

fn run(previous: &str, messages: &[Message], max_tokens: u32, language: &str) -> String {
    summarize(&SummaryRequest {
        previous_summary: previous.to_owned(),
        messages: messages.to_vec(),
        max_tokens,
        language: language.to_owned(),
        settings: "{}".into(),
    })
}

/// The items under each heading, in order.
fn sections(summary: &str) -> Vec<(&str, Vec<&str>)> {
    let mut out: Vec<(&str, Vec<&str>)> = Vec::new();
    for line in summary.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            out.push((title, Vec::new()));
        } else if let Some(item) = line.strip_prefix("- ") {
            out.last_mut()
                .expect("item before any heading")
                .1
                .push(item);
        }
    }
    out
}

/// An index where a new turn starts after all earlier calls were answered.
fn clean_split(messages: &[Message]) -> usize {
    (messages.len() / 2..messages.len())
        .find(|&i| messages[i].role == Role::Assistant && messages[i - 1].role == Role::Tool)
        .unwrap()
}

#[test]
fn user_requests_appear_verbatim() {
    let mut verified_in_full = 0;
    for name in SESSIONS {
        let messages = load(name);
        let summary = run("", &messages, UNLIMITED, "en");
        for m in messages
            .iter()
            .filter(|m| m.role == Role::User && !m.has_tool_results())
        {
            let request = tidy_block(&strip_reminders(&m.joined_text()));
            if request.is_empty() {
                continue;
            }
            if text_millis(&request) <= REQUEST_MAX_MILLIS {
                // Continuation lines are indented by two spaces.
                let rendered = request.replace("\n", "\n  ").replace("\n  \n", "\n\n");
                assert!(
                    summary.contains(&rendered),
                    "{name}: request missing:\n{request}\n---\n{summary}"
                );
                verified_in_full += 1;
            } else {
                let head: String = request.lines().next().unwrap().chars().take(80).collect();
                assert!(
                    summary.contains(&head),
                    "{name}: head of long request missing: {head}"
                );
            }
        }
        assert!(!summary.contains("<system-reminder>"), "{name}");
    }
    assert!(verified_in_full >= 15, "{verified_in_full}");
}

#[test]
fn files_touched_appear_with_their_tools() {
    for name in SESSIONS {
        let summary = run("", &load(name), UNLIMITED, "en");
        for v in raw(name) {
            for call in v["tool_calls"].as_array().into_iter().flatten() {
                let tool = call["function"]["name"].as_str().unwrap();
                let args: Value =
                    serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
                for key in ["file_path", "path", "filename"] {
                    let Some(path) = args[key].as_str() else {
                        continue;
                    };
                    let line = summary
                        .lines()
                        .find(|l| l.starts_with(&format!("- {path} (")))
                        .unwrap_or_else(|| panic!("{name}: {path} missing"));
                    assert!(line.contains(tool), "{name}: {line} lacks {tool}");
                }
            }
        }
    }
    let summary = run("", &load("cc-opus-b"), UNLIMITED, "en");
    assert!(
        summary.contains("/lib/spotter_web/live/session_live.ex (Read ×"),
        "{summary}"
    );
    // A path only named in a command line.
    assert!(
        summary.contains("- test/spotter_web/live/session_live_test.exs (Bash"),
        "{summary}"
    );
}

#[test]
fn errors_and_command_outcomes_appear() {
    let summary = run("", &load("cc-opus-a"), UNLIMITED, "en");
    for expected in [
        "- error: undefined function get/2 (expected SpotterWeb.ProjectReviewLiveTest",
        "- ** (RuntimeError) no :secret_key_base configuration found in SpotterWeb.Endpoint.",
        "- fatal: The current branch spotter-gqc has no upstream branch.",
        "- File does not exist.",
        "- $ git push 2>&1 → exit 128",
        "- $ mix test test/spotter_web/live/project_review_live_test.exs 2>&1 → exit 2 (×",
    ] {
        assert!(summary.contains(expected), "missing {expected}\n{summary}");
    }
    // Source code shown by file reads is not an error that happened.
    let errors = sections(&summary)
        .into_iter()
        .find(|(t, _)| *t == "Errors")
        .unwrap()
        .1;
    assert!(
        errors
            .iter()
            .all(|e| !e.contains("{:error, _}") && !e.contains("raise ")),
        "{errors:#?}"
    );
}

#[test]
fn budget_is_a_hard_cap_and_keeps_the_current_task() {
    for name in SESSIONS {
        let messages = load(name);
        let full = run("", &messages, UNLIMITED, "en");
        let current = sections(&full)
            .into_iter()
            .find(|(t, _)| *t == "Current task")
            .unwrap()
            .1[0];
        let current_head: String = current.chars().take(6).collect();
        for budget in [0, 1, 10, 64, 100, 150, 300, 1_000, 2_000, 5_000] {
            let summary = run("", &messages, budget, "en");
            let tokens = estimate_text(&summary);
            assert!(tokens <= budget, "{name}: {tokens} > {budget}\n{summary}");
            if budget >= 64 {
                assert!(
                    summary.contains(&format!("## Current task\n- {current_head}")),
                    "{name} at {budget}:\n{summary}"
                );
            }
        }
    }
}

#[test]
fn budget_drops_low_value_classes_and_old_items_first() {
    // Lowest value first; the current task and todo list are not droppable classes here.
    const ORDER: [&str; 5] = ["Decisions", "Commands", "Files", "Errors", "User requests"];
    for name in ["cc-opus-a", "cc-opus-b", "cc-trace-sonnet"] {
        let messages = load(name);
        let full_text = run("", &messages, UNLIMITED, "en");
        let full = sections(&full_text);
        let items = |s: &[(&str, Vec<&str>)], title: &str| -> Vec<String> {
            s.iter()
                .find(|(t, _)| *t == title)
                .map_or(Vec::new(), |(_, i)| {
                    i.iter().map(|x| x.to_string()).collect()
                })
        };
        for budget in (100..estimate_text(&full_text)).step_by(97) {
            let text = run("", &messages, budget, "en");
            let kept = sections(&text);
            for (rank, title) in ORDER.iter().enumerate() {
                let (all, some) = (items(&full, title), items(&kept, title));
                // Whatever survives of a class is its newest items.
                assert!(
                    all.ends_with(&some),
                    "{name} at {budget}: {title} kept old items"
                );
                if !some.is_empty() {
                    for higher in &ORDER[rank + 1..] {
                        assert_eq!(
                            items(&kept, higher),
                            items(&full, higher),
                            "{name} at {budget}: {higher} cut before {title}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn a_lone_oversized_current_task_is_shortened() {
    let request = "please ".repeat(2_000);
    let summary = run(
        "",
        &[Message::text(Role::User, request.trim_end())],
        100,
        "en",
    );
    assert!(estimate_text(&summary) <= 100);
    assert!(
        summary.starts_with("## Current task\n- please please"),
        "{summary}"
    );
    assert!(summary.ends_with(" […]"), "{summary}");
}

#[test]
fn two_folds_merge_to_the_same_summary_as_one() {
    for name in SESSIONS {
        let messages = load(name);
        if messages.len() < 20 {
            continue;
        }
        let split = clean_split(&messages);
        let (first, second) = messages.split_at(split);
        let once = run("", &messages, UNLIMITED, "en");
        let fold1 = run("", first, UNLIMITED, "en");
        let fold2 = run(&fold1, second, UNLIMITED, "en");
        assert_eq!(
            fold2, once,
            "{name}: merged summary differs from a single pass"
        );
    }

    // Under a real budget the merge keeps facts of both halves, deterministically.
    let messages = load("cc-opus-b");
    let (first, second) = messages.split_at(clean_split(&messages));
    let fold1 = run("", first, 2_000, "en");
    let fold2 = run(&fold1, second, 2_000, "en");
    assert_eq!(
        fold2,
        run(&run("", first, 2_000, "en"), second, 2_000, "en")
    );
    assert!(estimate_text(&fold2) <= 2_000);
    assert!(
        fold2.contains("- Work on bead spotter-dov."),
        "first-half request lost:\n{fold2}"
    );
    assert!(fold2.contains("- continue"), "{fold2}");
    assert!(
        fold2.contains("<task-notification>"),
        "second-half request lost:\n{fold2}"
    );
    assert!(
        fold2.contains("fatal: The current branch spotter-dov has no upstream branch."),
        "{fold2}"
    );
}

#[test]
fn reparsing_its_own_output_is_idempotent() {
    for name in SESSIONS {
        let messages = load(name);
        for language in ["en", "ja"] {
            for budget in [64, 150, 700, 2_000, UNLIMITED] {
                let summary = run("", &messages, budget, language);
                assert_eq!(
                    run(&summary, &[], budget, language),
                    summary,
                    "{name} {language} {budget}"
                );
            }
        }
    }
}

#[test]
fn headings_follow_the_language_and_parse_in_every_language() {
    const LANGUAGES: [&str; 10] = ["en", "de", "fr", "es", "pt", "it", "ru", "zh", "ja", "ko"];
    let messages = load("cc-trace-sonnet");
    let english = run("", &messages, UNLIMITED, "en");
    let mut seen_headings = std::collections::BTreeSet::new();
    for language in LANGUAGES {
        let summary = run("", &messages, UNLIMITED, language);
        let titles: Vec<&str> = sections(&summary).iter().map(|(t, _)| *t).collect();
        assert_eq!(titles.len(), sections(&english).len(), "{language}");
        assert!(
            seen_headings.insert(titles.join("|")),
            "{language} repeats another language's headings"
        );
        // Re-heading a summary in any other language reads it back completely.
        for other in LANGUAGES {
            assert_eq!(
                run(&summary, &[], UNLIMITED, other),
                run("", &messages, UNLIMITED, other),
                "{language} → {other}"
            );
        }
    }
    assert!(run("", &messages, UNLIMITED, "de-AT").contains("## Dateien\n"));
    assert!(run("", &messages, UNLIMITED, "zh").contains("## 当前任务\n"));
    assert_eq!(run("", &messages, UNLIMITED, "tlh"), english);
}

#[test]
fn todo_list_is_the_latest_one() {
    let summary = run("", &load("cc-trace-sonnet"), UNLIMITED, "en");
    let todos = sections(&summary)
        .into_iter()
        .find(|(t, _)| *t == "Todo list")
        .unwrap()
        .1;
    assert_eq!(
        todos,
        ["[x] Update weather app to use free API service without API key"]
    );
}

#[test]
fn empty_input_gives_empty_summary() {
    assert_eq!(run("", &[], 2_000, "en"), "");
}
