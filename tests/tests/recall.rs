//! The key-facts measure itself (`condense_tests::recall`): it finds the facts
//! a history established, and it can tell a request that kept them from one
//! that did not. The figures are printed by `cargo bench --bench recall`.

use condense_model::{CoreConfig, Message, Part, Role, ToolCall, ToolResult};
use condense_tests::recall::{Fact, FactKind, Recall, key_facts, replay_recall};
use condense_tests::{
    TestConfig, config_40k, custom_summarizer_middleware, embedded_middleware, session,
};

fn fact(kind: FactKind, text: &str) -> Fact {
    Fact {
        kind,
        text: text.to_owned(),
    }
}

#[test]
fn the_facts_are_what_the_history_established() {
    let call = |id: &str, arguments: &str| {
        Part::ToolCall(ToolCall {
            id: id.into(),
            name: "Tool".into(),
            arguments: arguments.into(),
        })
    };
    let result = |id: &str, content: &str, is_error| Message {
        role: Role::Tool,
        parts: vec![Part::ToolResult(ToolResult {
            call_id: id.into(),
            content: content.into(),
            is_error,
        })],
    };
    let history = [
        Message::text(
            Role::User,
            "Fix the flaky export test.\nIt fails one run in five.",
        ),
        Message {
            role: Role::Assistant,
            parts: vec![
                call("1", r#"{"file_path": "/w/src/export.rs"}"#),
                call("2", r#"{"command": "cargo test"}"#),
                call("3", r#"{"path": "/w/missing.rs"}"#),
            ],
        },
        result("1", "fn export() {}", false),
        result(
            "2",
            "Exit code 101\nerror[E0425]: cannot find value `x` in this scope",
            false,
        ),
        result(
            "3",
            "<tool_use_error>File does not exist.</tool_use_error>",
            true,
        ),
        Message::text(Role::User, "<task-notification>done</task-notification>"),
        Message::text(Role::User, "Fix the flaky export test.\nagain"),
    ];
    assert_eq!(
        key_facts(&history),
        [
            fact(FactKind::Request, "Fix the flaky export test."),
            fact(FactKind::File, "/w/src/export.rs"),
            fact(FactKind::File, "/w/missing.rs"),
            fact(
                FactKind::Error,
                "error[E0425]: cannot find value `x` in this scope"
            ),
            fact(FactKind::Error, "File does not exist."),
        ]
    );
    let facts = key_facts(&history);
    let recall = Recall::of(&facts, "… /w/src/export.rs … File does not exist. …");
    assert_eq!(recall.kind(FactKind::File), (1, 2));
    assert_eq!(recall.kind(FactKind::Error), (1, 2));
    assert_eq!(recall.all(), (2, 5));
}

/// Uncompressed, the last request holds every fact; through a summarizer
/// that keeps nothing (it counts messages) the folded ones are gone; the
/// embedded one keeps more than that.
#[test]
fn the_measure_tells_keeping_from_losing() {
    let history = session("cc-opus-c");
    let never = TestConfig::new(CoreConfig {
        token_threshold: u32::MAX,
        target_tokens: u32::MAX - 1,
        ..config_40k().core
    });
    let (_, all) = replay_recall(embedded_middleware(), &never, &history);
    let (kept, total) = all.all();
    assert!(total > 20 && kept == total, "{}", all.line());

    let (stats, nothing) = replay_recall(custom_summarizer_middleware(), &config_40k(), &history);
    assert!(stats.compactions > 0);
    let (_, embedded) = replay_recall(embedded_middleware(), &config_40k(), &history);
    assert!(
        nothing.all().0 < embedded.all().0 && nothing.all().1 == embedded.all().1,
        "counting: {}; embedded: {}",
        nothing.line(),
        embedded.line()
    );
}
