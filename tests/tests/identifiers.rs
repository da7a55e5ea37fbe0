//! Identifier recall against Claude Code's own summaries
//! (`condense_tests::identifiers`): the extractor's rules on invented texts,
//! and that the measure counts enough on every session and yields a ratio.
//! The figure itself is printed by `cargo bench --bench identifiers`; it is
//! not a gate, so no threshold is asserted here.

use condense_model::{Message, Part, Role, ToolCall};
use condense_tests::identifiers::{
    IdentifierKind, SESSIONS, claude_code_summary, identifier_recall, identifiers, span_text,
};
use condense_tests::session;

fn ids(text: &str) -> Vec<String> {
    identifiers(text)
}

#[test]
fn code_spans_are_identifiers() {
    assert_eq!(
        ids("Run `cargo fmt --check` and then `make lint-all`."),
        ["cargo fmt --check", "make lint-all"]
    );
    // Trimmed; double backticks hold a backtick; empty spans are nothing.
    assert_eq!(ids("see `` a`b `` and `  `"), ["a`b"]);
    // A plain lowercase word is a keyword or a word, found by chance anywhere.
    assert_eq!(ids("use `match` on `Option`"), ["Option"]);
    // An unclosed backtick is literal; a span does not cross a line.
    assert!(ids("a stray ` here\nand `there").is_empty());
    let long = format!("`{}`", "x_".repeat(41));
    assert!(ids(&long).is_empty(), "over 80 chars");
    let fits = format!("`{}`", "x_".repeat(40));
    assert_eq!(ids(&fits), ["x_".repeat(40)]);
}

#[test]
fn fences_are_not_spans() {
    let text = "```sh\nmake build_all\n```\nthen `make check_all`";
    assert_eq!(ids(text), ["make check_all"]);
    // Their lines are read by the token rules.
    assert_eq!(ids("```\nopen conf/site.yaml\n```"), ["conf/site.yaml"]);
}

#[test]
fn paths_and_file_names_are_identifiers() {
    assert_eq!(
        ids("Edited src/parser/mod.rs, then /etc/hosts and ./run.sh."),
        ["src/parser/mod.rs", "/etc/hosts", "./run.sh"]
    );
    // File names with a 1–5 letter extension, trailing punctuation trimmed.
    assert_eq!(
        ids("Touched Cargo.toml; notes.md: and (index.html)"),
        ["Cargo.toml", "notes.md", "index.html"]
    );
    // A `/` with a letter is enough (a function's arity, a route).
    assert_eq!(
        ids("called fetch/2 on /api/users"),
        ["fetch/2", "/api/users"]
    );
    // Not a file name: a one-letter name, a long "extension", a sentence end.
    assert!(ids("e.g. it works. Pkg.Internals too. Done.").is_empty());
}

#[test]
fn number_bearing_tokens_are_identifiers() {
    assert_eq!(
        ids("Ran 214 tests (0 failures) on v2.4.1, see task-17."),
        ["214", "v2.4.1", "task-17"]
    );
    assert_eq!(ids("commit 9f3c2ab, port 8080:"), ["9f3c2ab", "8080"]);
    // Single digits say nothing.
    assert!(ids("3 files, 1 error, 0 warnings").is_empty());
}

#[test]
fn list_enumerators_are_not_numbers() {
    let text = "1. Opened the log\n12) Fixed line 47\n  - 3. nested\n## 4. Heading";
    assert_eq!(ids(text), ["47"]);
    // Only at the start of a line: elsewhere `12.` ends a sentence.
    assert_eq!(ids("The suite has 12."), ["12"]);
}

#[test]
fn markup_around_a_token_is_trimmed() {
    assert_eq!(
        ids("**Fixed build.rs**: the \"out/gen.rs\" file, [step-2]"),
        ["build.rs", "out/gen.rs", "step-2"]
    );
    // A bracket the token opens stays.
    assert_eq!(ids("call get(1, 2) then run(42)."), ["get(1", "run(42)"]);
}

#[test]
fn identifiers_are_distinct_in_order_of_appearance() {
    assert_eq!(
        ids("`lib/app.rs` then 404, lib/app.rs again, 404 and `lib/app.rs`"),
        ["lib/app.rs", "404"]
    );
    // A command's path counts as well as the command.
    assert_eq!(
        ids("Ran `pytest tests/test_io.py -k 17x`."),
        ["pytest tests/test_io.py -k 17x", "tests/test_io.py", "17x"]
    );
}

#[test]
fn kinds_follow_the_form() {
    assert_eq!(IdentifierKind::of("src/main.rs"), IdentifierKind::Path);
    assert_eq!(IdentifierKind::of("notes.md"), IdentifierKind::Path);
    assert_eq!(IdentifierKind::of("v2.4"), IdentifierKind::Number);
    assert_eq!(IdentifierKind::of("cargo fmt"), IdentifierKind::Code);
}

#[test]
fn the_span_text_holds_decoded_arguments() {
    let call = Message {
        role: Role::Assistant,
        parts: vec![Part::ToolCall(ToolCall {
            id: "c1".into(),
            name: "Edit".into(),
            arguments: r#"{"new": "say(\"hi\")\nend", "n": 3}"#.into(),
        })],
    };
    let system = Message::text(Role::System, "system rules 7781");
    let text = span_text(&[system, call]);
    assert!(text.contains("say(\"hi\")\nend"), "{text}");
    assert!(text.contains(r#"say(\"hi\")"#), "the JSON as sent too");
    assert!(!text.contains("7781"), "system messages are not folded");
}

#[test]
fn the_reference_summaries_cover_a_part_of_their_session() {
    for name in SESSIONS {
        let reference = claude_code_summary(name);
        let history = session(name);
        assert!(
            (1..history.len()).contains(&reference.compacted_before_message),
            "{name}: {} of {}",
            reference.compacted_before_message,
            history.len()
        );
        assert!(reference.summary.len() > 1_000, "{name}");
    }
}

#[test]
fn every_session_counts_identifiers_and_yields_a_ratio() {
    for name in SESSIONS {
        let r = identifier_recall(name);
        println!(
            "{name}: {}/{} kept ({:.1}%), budget {} tokens, condense {} chars / {} tokens",
            r.kept,
            r.counted,
            100.0 * r.recall(),
            r.budget_tokens,
            r.condense_chars,
            r.condense_tokens
        );
        assert_eq!(r.session, name);
        assert!(r.counted > 50, "{name}: only {} counted", r.counted);
        assert!(r.kept <= r.counted, "{name}");
        assert_eq!(r.missing.len(), r.counted - r.kept, "{name}");
        assert!((0.0..=1.0).contains(&r.recall()), "{name}");
        assert!(
            r.condense_tokens <= r.budget_tokens,
            "{name}: within the budget"
        );
        assert!(r.condense_chars > 0 && r.claude_chars > 0, "{name}");
    }
}
