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

/// [`sections`] with each item whole: its continuation lines joined on.
fn whole_items(summary: &str) -> Vec<(&str, Vec<String>)> {
    let mut out: Vec<(&str, Vec<String>)> = Vec::new();
    for line in summary.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            out.push((title, Vec::new()));
        } else if let Some(item) = line.strip_prefix("- ") {
            out.last_mut().expect("a heading").1.push(item.to_owned());
        } else if let Some(item) = out.last_mut().and_then(|s| s.1.last_mut()) {
            item.push('\n');
            item.push_str(line.strip_prefix("  ").unwrap_or(line));
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
    let (mut verified_in_full, mut harness) = (0, 0);
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
            // What a harness wrote as the user (a notice, a pasted skill,
            // a command's output) is at most a line of its own, never the
            // tags and documents it came in.
            let opening = request.lines().next().unwrap();
            if request.starts_with('<') {
                assert!(!summary.contains(opening), "{name}: kept {opening}");
                harness += 1;
                continue;
            }
            if request.starts_with("Base directory for this skill:") {
                assert!(summary.contains(&format!("- [{opening}]\n")), "{name}");
                harness += 1;
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
    assert!(
        verified_in_full >= 10 && harness >= 5,
        "{verified_in_full}, {harness}"
    );
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
    // A path a command line names relative to the file read before: one
    // file, listed once.
    assert!(
        summary.contains("/spotter-dov/test/spotter_web/live/session_live_test.exs (Read, Bash"),
        "{summary}"
    );
    assert_eq!(
        summary
            .matches("test/spotter_web/live/session_live_test.exs (")
            .count(),
        1,
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
        "- $ git push → exit 128",
        "- File does not exist.",
        // The outcome with the output's own tally, not just "ok": the
        // last run's, with every run counted (two failed before it passed).
        "- $ mix test test/spotter_web/live/project_review_live_test.exs → ok: 8 tests, 0 failures (×6)",
        // What a short output found: the versions it fetched.
        "- $ mix deps.get → ok: yamerl 0.10.0; yaml_elixir 2.12.0; ymlr 5.1.4",
    ] {
        assert!(summary.contains(expected), "missing {expected}\n{summary}");
    }
    // An earlier run's outcome is stale once the command ran again; what
    // it reported stays among the errors, paired with the run that fixed
    // it, and an error a later run of its command did not fix stays open.
    assert!(
        !summary.contains("→ exit 2: 5 tests, 5 failures"),
        "{summary}"
    );
    for expected in [
        "- 5 tests, 5 failures ($ mix test test/spotter_web/live/project_review_live_test.exs; fixed) (×2)",
        "- ** (RuntimeError) no :secret_key_base configuration found in SpotterWeb.Endpoint. ($ mix test test/spotter_web/live/project_review_live_test.exs; fixed)",
        "- fatal: The current branch spotter-gqc has no upstream branch. ($ git push)\n",
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
    // Lowest value first; the current task and todo list are not droppable
    // classes here. Routine requests ("continue") go before everything.
    const ORDER: [&str; 6] = [
        "Routine requests",
        "Code written",
        "Decisions",
        "Commands",
        "Files",
        "User requests",
    ];
    for name in ["cc-opus-a", "cc-opus-b", "cc-trace-sonnet"] {
        let messages = load(name);
        let full_text = run("", &messages, UNLIMITED, "en");
        let full = whole_items(&full_text);
        let items = |s: &[(&str, Vec<String>)], title: &str| -> Vec<String> {
            let (heading, routine) = match title {
                "Routine requests" => ("User requests", Some(true)),
                "User requests" => ("User requests", Some(false)),
                other => (other, None),
            };
            s.iter()
                .find(|(t, _)| *t == heading)
                .map_or(Vec::new(), |(_, i)| {
                    i.iter()
                        .filter(|x| routine.is_none_or(|r| crate::format::is_routine(x) == r))
                        // A command is shortened to its status before any
                        // is dropped: it is kept while its command is.
                        .map(|x| match heading {
                            "Commands" => x.split(" → ").next().unwrap_or(x).to_string(),
                            _ => x.to_string(),
                        })
                        .collect()
                })
        };
        for budget in (100..estimate_text(&full_text)).step_by(97) {
            let text = run("", &messages, budget, "en");
            let kept = whole_items(&text);
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
    // A routine request says nothing to keep: it is the first to go, before
    // the narrative (the code written, which goes at this budget) and the
    // files. (Its routine request is the harness's notice of a background
    // command.)
    let notice = "- [Background command \"Run SessionLive tests\" completed (exit code 0)]";
    let unbudgeted = run("", &messages, UNLIMITED, "en");
    assert!(unbudgeted.contains(notice), "{unbudgeted}");
    assert!(
        fold2.contains("## Files") && !fold2.contains(notice),
        "the routine request outlasted the files:\n{fold2}"
    );
    assert!(
        fold2.contains("## Next step\n- Now push to remote:"),
        "second-half next step lost:\n{fold2}"
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

/// Routine turns: "continue", a long assistant report, a file read.
fn routine(turns: usize, tag: &str) -> Vec<Message> {
    let mut out = Vec::new();
    for t in 0..turns {
        out.push(Message::text(Role::User, "continue"));
        out.push(Message {
            role: Role::Assistant,
            parts: vec![
                Part::Text(format!(
                    "Let me look at the parser next. {}",
                    "The module reads the header, then the records, and checks each length field. "
                        .repeat(6)
                )),
                Part::ToolCall(ToolCall {
                    id: format!("{tag}{t}"),
                    name: "Read".into(),
                    arguments: format!(r#"{{"file_path":"src/{tag}_{t}.rs"}}"#),
                }),
            ],
        });
        out.push(Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: format!("{tag}{t}"),
                content: "fn parse() {}\n".repeat(40),
                is_error: false,
            })],
        });
    }
    out
}

/// Five folds of routine work at a summary budget of a few hundred tokens:
/// the rules stated in the first fold are re-read from each summary and stay.
#[test]
fn a_rule_survives_five_folds() {
    let mut summary = String::new();
    for round in 0..5 {
        let mut messages = Vec::new();
        if round == 0 {
            messages.push(Message::text(
                Role::User,
                "Fix the parser. Never run git push --force on branch release-K7QX. \
                 Responses must stay under 637 words.",
            ));
        }
        messages.extend(routine(12, &format!("r{round}_")));
        summary = run(&summary, &messages, 300, "en");
        for value in ["release-K7QX", "637 words"] {
            assert!(
                summary.contains(value),
                "round {round}: {value} lost:\n{summary}"
            );
        }
    }
}

/// Under budget pressure a rule outranks routine lines, repeated or not: a
/// line the assistant said 33 times goes before a rule the person said once.
#[test]
fn a_rule_outranks_what_is_repeated() {
    let mut messages = vec![Message::text(
        Role::User,
        "Always run make check-8812 before committing.",
    )];
    messages.extend(routine(11, "c"));
    let rule = "make check-8812";
    let repeated = "checks each length field. (×33)";
    let ample = run("", &messages, 10_000, "en");
    assert!(ample.contains(rule) && ample.contains(repeated), "{ample}");
    // Past the files (the first to go), the pinned current task with the
    // rule and the repeated line takes 58 tokens, with either one and the
    // next step 46 or 49: at 50 there is room for the rule or the repeated
    // line, not both.
    let tight = run("", &messages, 50, "en");
    assert!(tight.contains(rule), "the rule was dropped:\n{tight}");
    assert!(
        !tight.contains(repeated),
        "the repeated line was kept and something the person set went:\n{tight}"
    );
}

/// A later statement with the same subject and a new value replaces the
/// earlier one, in the same fold or a later one, plainly or paraphrased.
#[test]
fn the_latest_value_wins_across_folds() {
    let first = [Message::text(
        Role::User,
        "The total budget is capped at $4,217.",
    )];
    let summary = run("", &first, 1_000, "en");
    assert!(summary.contains("$4,217"), "{summary}");
    let update = [Message::text(
        Role::User,
        "Actually, make that budget cap $5,090.",
    )];
    let summary = run(&summary, &update, 1_000, "en");
    assert!(
        summary.contains("$5,090") && !summary.contains("$4,217"),
        "{summary}"
    );
    // Two rules about different tables both stay.
    let tables = [
        Message::text(Role::User, "Never delete the table orders_k31."),
        Message::text(Role::User, "Never delete the table invoices_k32."),
    ];
    let summary = run(&summary, &tables, 1_000, "en");
    assert!(
        summary.contains("orders_k31") && summary.contains("invoices_k32"),
        "{summary}"
    );
}

/// Rules in German and Japanese are rules: kept through a fold of routine
/// work at a tight budget, under the heading of the conversation's language.
#[test]
fn rules_in_other_languages_survive() {
    let mut messages = vec![
        Message::text(
            Role::User,
            "Bitte niemals direkt auf den Branch main pushen.",
        ),
        Message::text(Role::User, "本番環境の設定は絶対に変更しないでください。"),
    ];
    messages.extend(routine(12, "l"));
    let summary = run("", &messages, 200, "de");
    assert!(
        summary.contains("niemals direkt auf den Branch main"),
        "{summary}"
    );
    assert!(summary.contains("絶対に変更しないでください"), "{summary}");
    assert!(
        summary.starts_with("## Vorgaben, Grenzen und Werte des Benutzers"),
        "{summary}"
    );
}

/// One item of each rank class, dropped lowest first as the budget shrinks:
/// routine requests, commands, files, findings, requests, then the goal,
/// exact values and rules the person set.
#[test]
fn each_rank_class_goes_in_its_order() {
    let call = |id: &str, name: &str, args: &str| {
        Part::ToolCall(ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        })
    };
    let result = |id: &str, content: &str| Message {
        role: Role::Tool,
        parts: vec![Part::ToolResult(ToolResult {
            call_id: id.into(),
            content: content.into(),
            is_error: false,
        })],
    };
    let messages = vec![
        Message::text(Role::User, "Never push to main without asking me."),
        Message::text(Role::User, "The base commit is 3f9c2a71e."),
        Message::text(Role::User, "The goal is a faster parser."),
        Message::text(
            Role::User,
            "Refactor the parser module so the public interface stays as it is.",
        ),
        Message::text(Role::User, "continue"),
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Text("The parser reads every record twice, which doubles the time.".into()),
                call("c1", "Bash", r#"{"command":"cargo test"}"#),
                call("c2", "Read", r#"{"file_path":"src/parser.rs"}"#),
            ],
        },
        result("c1", "test result: ok. 3 passed; 0 failed"),
        result("c2", "fn parse() {}"),
        Message::text(Role::User, "Make it fast."),
    ];
    // Lowest class first.
    let order = [
        "- continue",
        "reads every record twice",
        "$ cargo test",
        "src/parser.rs",
        "Refactor the parser module",
        "a faster parser",
        "3f9c2a71e",
        "Never push to main",
    ];
    let full = run("", &messages, UNLIMITED, "en");
    for marker in order {
        assert!(full.contains(marker), "{marker}: {full}");
    }
    let mut dropped_any = false;
    for budget in (0..=estimate_text(&full)).rev() {
        let summary = run("", &messages, budget, "en");
        for (i, low) in order.iter().enumerate() {
            if summary.contains(low) {
                for high in &order[i + 1..] {
                    assert!(
                        summary.contains(high),
                        "at {budget}: {high} dropped before {low}:\n{summary}"
                    );
                }
            } else {
                dropped_any = true;
            }
        }
    }
    assert!(dropped_any);
}

/// "continue" goes on with the task: the task is the request before it.
#[test]
fn a_routine_request_is_not_the_current_task() {
    let user = |text: &str| Message {
        role: Role::User,
        parts: vec![Part::Text(text.into())],
    };
    let assistant = |text: &str| Message {
        role: Role::Assistant,
        parts: vec![Part::Text(text.into())],
    };
    let messages = [
        user("Port the importer to the streaming parser and keep the old API working."),
        assistant("Starting with the parser module."),
        user("continue"),
        assistant("Moving on to the API shim."),
        user("ok, go on"),
        assistant("Shim done."),
    ];
    let summary = run("", &messages, UNLIMITED, "en");
    let current = sections(&summary)
        .into_iter()
        .find(|(t, _)| *t == "Current task")
        .map(|(_, items)| items)
        .unwrap_or_default();
    assert_eq!(
        current,
        ["Port the importer to the streaming parser and keep the old API working."],
        "{summary}"
    );
}
