use crate::*;
use condense_embedded::COMPONENTS as EMBEDDED;
use condense_model::{CORE_RANGES, CoreConfig};
use std::path::{Path, PathBuf};

use condense_contract::settings::{ClearMode, ToolClasses};

/// The embedded compressor's settings `s` gives.
fn passes(s: &AgentSettings) -> condense_contract::Settings {
    condense_contract::Settings::parse(&s.compressor_json()).unwrap()
}

fn err(text: &str) -> String {
    format!("{:#}", ConfigFile::parse(text).unwrap_err())
}

#[test]
fn empty_file_gives_defaults() {
    assert_eq!(AgentSettings::parse("").unwrap(), AgentSettings::default());
    assert!(ConfigFile::parse("").unwrap().agents.is_empty());
}

#[test]
fn keys_override_defaults() {
    let s = AgentSettings::parse("token_threshold = 40000\ntarget_tokens = 16000\nkeep_recent_tokens = 8000\n[limits]\ntimeout_ms = 100\n").unwrap();
    assert_eq!(s.core.token_threshold, 40_000);
    assert_eq!(s.core.target_tokens, 16_000);
    assert_eq!(s.core.recent_turns, CoreConfig::default().recent_turns);
    assert_eq!(s.limits.timeout_ms, 100);
}

#[test]
fn unknown_keys_are_named() {
    let e = err("token_treshold = 4");
    assert!(
        e.contains("token_treshold: unknown field")
            && e.contains("expected one of `token_threshold`"),
        "{e}"
    );
    let e = err("[limits]\nmemory = 4");
    assert!(e.contains("limits.memory: unknown field"), "{e}");
    assert!(
        e.contains("`memory_mib`"),
        "the allowed keys are listed: {e}"
    );
    let e = err("[components]\nsummariser = \"x.wasm\"");
    assert!(e.contains("components.summariser: unknown field"), "{e}");
}

/// Defect: `token_threshold = 40000` alone was an error (the default
/// target, 50000, was above it).
#[test]
fn the_threshold_alone_gives_a_consistent_config() {
    let s = AgentSettings::parse("token_threshold = 40000").unwrap();
    assert_eq!(
        s.core,
        CoreConfig {
            token_threshold: 40_000,
            target_tokens: 20_000,
            recent_turns: 10,
            keep_recent_tokens: 8_000,
            summary_max_tokens: 2_000,
        }
    );
    // An explicit value wins; the derived ones stay below it.
    let s = AgentSettings::parse("token_threshold = 40000\ntarget_tokens = 5000").unwrap();
    assert_eq!(
        (
            s.core.target_tokens,
            s.core.keep_recent_tokens,
            s.core.summary_max_tokens
        ),
        (5_000, 5_000, 2_000)
    );
    let s = AgentSettings::parse("target_tokens = 100").unwrap();
    assert_eq!(
        (s.core.keep_recent_tokens, s.core.summary_max_tokens),
        (100, 99)
    );
    let s = AgentSettings::parse("token_threshold = 1000").unwrap();
    assert_eq!(
        s.core.summary_max_tokens, 64,
        "at least the range's minimum"
    );
    // Only an explicit inconsistent pair is an error.
    let e = err("token_threshold = 40000\ntarget_tokens = 50000");
    assert!(
        e.contains("target_tokens = 50000: must be between 1 and"),
        "{e}"
    );
}

#[test]
fn tools_table_is_strict() {
    let e = err("[tools]\nmutating = [\"Edit\"]\nreadonly = [\"Read\"]");
    assert!(
        e.contains("tools.readonly: unknown field") && e.contains("`exec_capable`"),
        "{e}"
    );
    let e = err("[tools]\nmutating = [1]");
    assert!(e.contains("tools.mutating[0]: invalid type"), "{e}");
    let e = err("[tools]\nmutating = \"Edit\"");
    assert!(e.contains("tools.mutating: invalid type"), "{e}");
    let e = err("tools = [\"Edit\"]");
    assert!(e.contains("tools[0]: invalid type"), "{e}");
    let e = err("[tools]\nexec_capable = [\"\"]");
    assert!(e.contains("tools.exec_capable[0] is empty"), "{e}");
    // Given, a list replaces the default list; left out, the default stays.
    let s = AgentSettings::parse("[tools]\nmutating = [\"Edit\", \"mcp__*__write*\"]").unwrap();
    assert_eq!(passes(&s).tools.mutating, ["Edit", "mcp__*__write*"]);
    assert_eq!(
        passes(&s).tools.exec_capable,
        ToolClasses::default().exec_capable
    );
}

#[test]
fn out_of_range_values_are_named_with_their_range() {
    let e = err("token_threshold = 40000\ntarget_tokens = 50000");
    assert!(e.contains("target_tokens") && e.contains("39999"), "{e}");
    let e = err("[limits]\nmemory_mib = 1");
    assert!(
        e.contains("limits.memory_mib = 1: must be between 16 and 4096"),
        "{e}"
    );
    let e = err("max_loop_steps_before_aggregate = 2");
    assert!(
        e.contains("max_loop_steps_before_aggregate = 2") && e.contains("3"),
        "{e}"
    );
    let e = err("[recall]\nbudget_tokens = 10");
    assert!(
        e.contains("recall.budget_tokens = 10: must be between 100 and 100000"),
        "{e}"
    );
    let e = err("[recall]\nmode = \"maybe\"");
    assert!(e.contains("recall.mode") && e.contains("maybe"), "{e}");
}

#[test]
fn recall_is_on_unless_turned_off() {
    let on = AgentSettings::default().body_config().recall.unwrap();
    assert_eq!((on.budget_tokens, on.max_rounds), (4_000, 3));
    let off = AgentSettings::parse("[recall]\nmode = \"off\"").unwrap();
    assert_eq!(off.body_config().recall, None);
    let agent = ConfigFile::parse("[agents.a.recall]\nmax_rounds = 1").unwrap();
    let a = agent
        .settings(Some("a"))
        .unwrap()
        .body_config()
        .recall
        .unwrap();
    assert_eq!((a.budget_tokens, a.max_rounds), (4_000, 1));
}

#[test]
fn wrong_types_are_named() {
    let e = err("recent_turns = \"ten\"");
    assert!(
        e.contains("recent_turns: invalid type: string \"ten\""),
        "{e}"
    );
    let e = err("recent_turns = -1");
    assert!(e.contains("recent_turns: invalid value"), "{e}");
    let e = err("clear_mode = \"wipe\"");
    assert!(
        e.contains("clear_mode: unknown variant `wipe`") && e.contains("truncate"),
        "{e}"
    );
    let e = err("reasoning_echo = 1");
    assert!(e.contains("reasoning_echo: invalid type"), "{e}");
}

const AGENTS: &str = r#"
token_threshold = 60000
target_tokens = 30000
clear_mode = "truncate"
exclude_tools = ["Read", "Grep"]

[tools]
mutating = ["Edit", "Write"]

[limits]
timeout_ms = 2000

[agents.review]
token_threshold = 40000
target_tokens = 16000
keep_recent_tokens = 8000
exclude_tools = ["Read"]
[agents.review.tools]
exec_capable = ["Bash"]
[agents.review.limits]
memory_mib = 128

[agents.plain]
"#;

#[test]
fn agent_keys_merge_over_the_top_level_key_by_key() {
    let file = ConfigFile::parse(AGENTS).unwrap();
    assert_eq!(file.agent_names().collect::<Vec<_>>(), ["plain", "review"]);
    let base = &file.base;
    let review = file.settings(Some("review")).unwrap();
    // Overridden keys.
    assert_eq!(review.core.token_threshold, 40_000);
    assert_eq!(review.core.target_tokens, 16_000);
    assert_eq!(review.core.keep_recent_tokens, 8_000);
    assert_eq!(review.limits.memory_mib, 128);
    assert_eq!(passes(review).tools.exec_capable, ["Bash"]);
    // Keys the agent leaves out keep the top-level value, in tables too.
    assert_eq!(passes(review).clear_mode, ClearMode::Truncate);
    assert_eq!(passes(review).tools.mutating, ["Edit", "Write"]);
    assert_eq!(review.limits.timeout_ms, 2_000);
    // Unset everywhere, the summary budget follows each one's threshold.
    assert_eq!(review.core.summary_max_tokens, 2_000);
    assert_eq!(base.core.summary_max_tokens, 3_000);
    // An empty agent table is the top level; no agent is the top level.
    assert_eq!(file.settings(Some("plain")).unwrap(), base);
    assert_eq!(file.settings(None).unwrap(), base);
    assert_eq!(base.core.token_threshold, 60_000);
    assert_eq!(
        passes(base).tools.exec_capable,
        ToolClasses::default().exec_capable
    );
}

#[test]
fn an_agent_list_replaces_the_top_level_list() {
    let file = ConfigFile::parse(AGENTS).unwrap();
    assert_eq!(passes(&file.base).exclude_tools, ["Read", "Grep"]);
    assert_eq!(
        passes(file.settings(Some("review")).unwrap()).exclude_tools,
        ["Read"]
    );
    let file = ConfigFile::parse("[agents.a]\nexclude_tools = []\n[agents.a.tools]\nmutating = []")
        .unwrap();
    let a = file.settings(Some("a")).unwrap();
    assert!(passes(a).exclude_tools.is_empty() && passes(a).tools.mutating.is_empty());
}

#[test]
fn a_bad_key_inside_an_agent_is_named_with_its_path() {
    let e = err("[agents.review]\ntoken_treshold = 4");
    assert!(
        e.contains("agents.review.token_treshold: unknown field")
            && e.contains("expected one of `token_threshold`"),
        "{e}"
    );
    let e = err("[agents.review.tools]\nreadonly = []");
    assert!(
        e.contains("agents.review.tools.readonly: unknown field"),
        "{e}"
    );
    let e = err("[agents.review.limits]\nmemory = 4");
    assert!(
        e.contains("agents.review.limits.memory: unknown field"),
        "{e}"
    );
    let e = err("[agents.review]\nrecent_turns = \"ten\"");
    assert!(
        e.contains("agents.review.recent_turns: invalid type"),
        "{e}"
    );
    let e = err("[agents.review]\ntools = 3");
    assert!(
        e.contains("agents.review.tools: invalid type: integer `3`, expected struct ToolClasses"),
        "{e}"
    );
    let e = err("[agents.review.agents.inner]\ntoken_threshold = 4");
    assert!(
        e.contains("agents.review.agents: agents cannot be nested"),
        "{e}"
    );
    let e = err("agents = 3");
    assert!(e.contains("agents: must be a table"), "{e}");
    let e = err("[agents]\nreview = 3");
    assert!(e.contains("agents.review: must be a table"), "{e}");
    let e = err("[agents.\"code review\"]\ntoken_treshold = 4");
    assert!(e.contains("agents.\"code review\".token_treshold"), "{e}");
    // The top level is checked first, and named without a prefix.
    let e = err("token_treshold = 4\n[agents.review]\nrecent_turns = 1");
    assert!(e.starts_with("token_treshold: unknown field"), "{e}");
}

#[test]
fn an_out_of_range_agent_value_is_named_with_its_path_and_range() {
    let e = err("[agents.review]\ntarget_tokens = 200000");
    assert!(
            e.contains("agents.review.target_tokens = 200000: must be between 1 and token_threshold - 1 (99999)"),
            "{e}"
        );
    let e = err("[agents.review.limits]\ntimeout_ms = 1");
    assert!(
        e.contains("agents.review.limits.timeout_ms = 1: must be between 10 and 600000"),
        "{e}"
    );
    // Valid on its own, invalid over the top level: the effective
    // settings are what is validated, when the file is loaded.
    let e = err("target_tokens = 50000\n[agents.small]\ntoken_threshold = 40000");
    assert!(
        e.contains("agents.small.target_tokens = 50000")
            && e.contains("[agents.small] does not set target_tokens"),
        "{e}"
    );
    let e = err("[agents.small]\ntarget_tokens = 200000");
    assert!(!e.contains("does not set"), "{e}");
    let e = err("[agents.small.tools]\nmutating = [\"\"]");
    assert!(
        e.contains("agents.small.tools.mutating[0] is empty") && !e.contains("does not set"),
        "{e}"
    );
}

#[test]
fn an_unknown_agent_lists_the_known_ones() {
    let file = ConfigFile::parse(AGENTS).unwrap();
    let e = format!("{:#}", file.settings(Some("reveiw")).unwrap_err());
    assert!(
        e.contains("unknown agent `reveiw`") && e.contains("`plain`, `review`"),
        "{e}"
    );
    let e = format!(
        "{:#}",
        ConfigFile::parse("")
            .unwrap()
            .settings(Some("x"))
            .unwrap_err()
    );
    assert!(
        e.contains("defines no agents") && e.contains("[agents.x]"),
        "{e}"
    );
}

#[test]
fn relative_component_paths_resolve_against_the_file_in_agents_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(
            &path,
            "[components]\nsummarizer = \"s.wasm\"\n[agents.a.components]\ncompressor = \"sub/c.wasm\"\n[agents.b.components]\nsummarizer = \"/abs/s.wasm\"\n",
        )
        .unwrap();
    let file = ConfigFile::load(&path).unwrap();
    assert_eq!(
        file.base.components.summarizer,
        Some(dir.path().join("s.wasm"))
    );
    let a = AgentSettings::load_agent(&path, Some("a")).unwrap();
    assert_eq!(a.components.compressor, Some(dir.path().join("sub/c.wasm")));
    assert_eq!(a.components.summarizer, Some(dir.path().join("s.wasm")));
    let b = file.settings(Some("b")).unwrap();
    assert_eq!(b.components.summarizer, Some(PathBuf::from("/abs/s.wasm")));
    let e = format!("{:#}", file.settings(Some("c")).unwrap_err());
    assert!(e.contains(&path.display().to_string()), "{e}");
}

#[test]
fn to_toml_prints_every_key_and_reads_back_to_the_same_settings() {
    let file = ConfigFile::parse(
        "clear_mode = \"clear\"\n[components]\nsummarizer = \"/x/s.wasm\"\n\
             [summarizers.\"s.wasm\"]\nheading = \"Asked:\"\nlines = [1, 2]\n\
             [agents.r]\nrecent_turns = 2\n",
    )
    .unwrap();
    for settings in [
        &AgentSettings::default(),
        &AgentSettings::for_replay(),
        &file.base,
        file.settings(Some("r")).unwrap(),
    ] {
        let text = settings.to_toml().unwrap();
        let back = AgentSettings::parse(&text).unwrap();
        // The compressor's keys come back all written out, to the same
        // effect.
        assert_eq!(passes(&back), passes(settings), "{text}");
        let host = |s: &AgentSettings| {
            (
                s.core,
                s.components.clone(),
                s.limits.clone(),
                s.summarizers.clone(),
                s.recall.clone(),
            )
        };
        assert_eq!(host(&back), host(settings), "{text}");
        let schema = json_schema();
        for key in schema["properties"].as_object().unwrap().keys() {
            if key != "agents" {
                assert!(text.contains(key.as_str()), "{key} missing from\n{text}");
            }
        }
    }
}

fn golden_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config.schema.json")
}

/// `host-example/config/config.schema.json` is the schema `condense config
/// --schema` prints. `CONDENSE_BLESS=1` rewrites it.
#[test]
fn schema_matches_the_golden_file() {
    let generated = json_schema_text();
    let path = golden_path();
    if std::env::var_os("CONDENSE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        golden == generated,
        "{} differs from the schema generated from the code (config keys, their docs or \
             ranges changed). Regenerate it with\n\n    CONDENSE_BLESS=1 cargo test -p \
             condense-config\n\nand review the diff.",
        path.display()
    );
}

#[test]
fn schema_ranges_come_from_the_range_tables() {
    let schema = json_schema();
    let properties = schema["properties"].as_object().unwrap();
    let integers: Vec<&String> = properties
        .iter()
        .filter(|(_, p)| p["type"] == "integer")
        .map(|(k, _)| k)
        .collect();
    for key in integers {
        assert!(
            properties[key]["minimum"].is_u64() && properties[key]["maximum"].is_u64(),
            "{key} has no range"
        );
    }
    for &condense_model::Range { key, min, max } in CORE_RANGES {
        assert_eq!(properties[key]["minimum"], min, "{key}");
        assert_eq!(properties[key]["maximum"], max, "{key}");
    }
    let limits = &schema["$defs"]["LimitSettings"]["properties"];
    for &condense_model::Range { key, min, max } in LIMIT_RANGES {
        assert_eq!(limits[key]["minimum"], min, "{key}");
        assert_eq!(limits[key]["maximum"], max, "{key}");
    }
    // Every description is there, and agents take every key but `agents`.
    for (key, p) in properties {
        assert!(
            p["description"].as_str().is_some_and(|d| d.len() > 20),
            "{key}"
        );
    }
    let agent = &schema["$defs"]["AgentSettings"]["properties"];
    assert_eq!(
        agent.as_object().unwrap().len() + 1,
        properties.len(),
        "{agent}"
    );
    assert!(agent.get("agents").is_none());
    assert_eq!(schema["additionalProperties"], false);
}

/// The cap comes from `[limits] max_request_bytes`; a request at the cap
/// is compressed, one byte over it is sent unchanged, with the checkpoint
/// it came with, and the report says why. No component ran, so the
/// report names none.
#[test]
fn a_request_over_max_request_bytes_fails_open_without_running_the_compressor() {
    assert_eq!(
        AgentSettings::default().limits.max_request_bytes as usize,
        condense_host::middleware::DEFAULT_MAX_REQUEST_BYTES
    );
    let settings = AgentSettings::parse("[limits]\nmax_request_bytes = 1024").unwrap();
    let middleware = settings.middleware(&EMBEDDED, &no_model_client).unwrap();
    assert_eq!(middleware.max_request_bytes(), 1024);
    use condense_host::SessionCheckpoint;
    use condense_model::{Checkpoint, Message, Role};
    let request = |bytes: usize| vec![Message::text(Role::User, "x".repeat(bytes))];
    let checkpoint = SessionCheckpoint {
        summary: None,
        checkpoint: Checkpoint {
            version: 1,
            boundary: 3,
            state: b"{}".to_vec(),
        },
        prefix_hash: "abc".into(),
    };
    let json = settings.compressor_json();

    let at_cap = request(1024);
    let sent = middleware.compress(&at_cap, &settings.core, &json, None);
    assert_ne!(
        sent.report.status(),
        condense_host::Status::FailedOpen,
        "{:?}",
        sent.report
    );
    assert!(sent.report.guest().is_some());

    let over = request(1025);
    let sent = middleware.compress(&over, &settings.core, &json, Some(&checkpoint));
    assert_eq!(sent.report.status(), condense_host::Status::FailedOpen);
    assert_eq!(sent.messages(&over), over);
    assert_eq!(sent.checkpoint, Some(checkpoint));
    assert_eq!(
        sent.report.reason(),
        Some(
            "request of 1025 bytes is over limits.max_request_bytes = 1024: sent unchanged, \
                 no component ran"
        )
    );
    assert!(sent.report.component().is_none() && sent.report.failure().is_none());
    assert!(sent.report.guest().is_none());
    let json = serde_json::to_value(&sent.report).unwrap();
    assert_eq!(json["status"], "failed-open");
    assert!(json.get("failure").is_none(), "{json}");
}

#[test]
fn a_summarizer_chain_names_the_embedded_one_and_paths_relative_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(
        &path,
        "[components]\nsummarizers = [\"mine.wasm\", \"heuristic\"]\n",
    )
    .unwrap();
    let file = ConfigFile::load(&path).unwrap();
    assert_eq!(
        file.base.components.summarizers,
        Some(vec![
            dir.path().join("mine.wasm"),
            PathBuf::from("heuristic")
        ])
    );
    let shown = file.base.to_toml().unwrap();
    assert!(shown.contains("\"heuristic\"]"), "{shown}");
    let e = err("[components]\nsummarizer = \"a.wasm\"\nsummarizers = [\"heuristic\"]");
    assert!(
        e.contains("set either `summarizer` or `summarizers`"),
        "{e}"
    );
    let e = err("[components]\nsummarizers = []");
    assert!(e.contains("an empty chain"), "{e}");
}

/// The embedded heuristic summarizer loads under its name, chain or not, so
/// a report names it (`summarizer `heuristic``), as it names `llm`.
#[test]
fn the_builtin_summarizers_are_named() {
    let runtime = |text: &str| {
        AgentSettings::parse(text)
            .unwrap()
            .middleware(&EMBEDDED, &no_model_client)
            .unwrap()
    };
    let default = runtime("");
    assert_eq!(
        default.runtime().summarizer().to_string(),
        "summarizer `heuristic`"
    );
    let chain = runtime("[components]\nsummarizers = [\"heuristic\"]");
    assert_eq!(
        chain.runtime().summarizer().to_string(),
        "summarizer `heuristic`"
    );
    let e = AgentSettings::parse(
        "[components]\nsummarizers = [\"llm\"]\n[llm]\nbase_url = \"http://x\"\nmodel = \"m\"",
    )
    .unwrap()
    .middleware(&EMBEDDED, &no_model_client)
    .err()
    .expect("no client for `llm`");
    assert!(format!("{e:#}").contains("no model client"), "{e:#}");
}

/// `[summarizers.NAME]` tables: each names a summarizer of the chain (a
/// typo is named, with the chain), the LLM summarizer's leaves `[llm]`'s
/// keys to `[llm]`, and an agent gets the tables of its own chain.
#[test]
fn summarizer_tables_name_a_summarizer_of_the_chain() {
    let e = err("[summarizers.heurstic]\nx = 1\n");
    assert!(
        e.starts_with("summarizers.heurstic: no summarizer of the chain is called `heurstic` (the chain: `heuristic`"),
        "{e}"
    );
    let e =
        err("[components]\nsummarizers = [\"/a/mine.wasm\", \"heuristic\"]\n[summarizers.mine]\n");
    assert!(e.contains("(the chain: `mine.wasm`, `heuristic`;"), "{e}");
    let e = err("summarizers = 3\n");
    assert!(e.starts_with("summarizers: must be a table"), "{e}");
    let e = err("[summarizers]\nllm = 3\n");
    assert!(e.starts_with("summarizers.llm: must be a table"), "{e}");
    let e =
        err("[components]\nsummarizers = [\"llm\"]\n[summarizers.llm]\ncontext_tokens = 8000\n");
    assert!(
        e.starts_with(
            "summarizers.llm.context_tokens: the LLM summarizer takes `context_tokens` from [llm]"
        ),
        "{e}"
    );

    let file = ConfigFile::parse(
        "[components]\nsummarizers = [\"llm\", \"heuristic\"]\n\
         [summarizers.llm]\ntool_result_chars = 500\n\
         [llm]\ncontext_tokens = 9000\n\
         [agents.plain.components]\nsummarizers = [\"heuristic\"]\n",
    )
    .unwrap();
    assert_eq!(
        file.base.summarizer_json("llm").unwrap(),
        r#"{"tool_result_chars":500,"context_tokens":9000,"cache_friendly":true}"#
    );
    assert_eq!(file.base.summarizer_json("heuristic"), None);
    // The agent's chain has no `llm`: the top-level table is not its.
    assert!(file.settings(Some("plain")).unwrap().summarizers.is_empty());
    let e = err("[agents.a.summarizers.llm]\ntool_result_chars = 5\n");
    assert!(
        e.starts_with("agents.a.summarizers.llm: no summarizer of the chain is called `llm`"),
        "{e}"
    );
}

/// A summarizer checks its own table when the middleware is built: a key
/// it does not have stops the start, naming the table and the key.
#[test]
fn a_summarizers_settings_are_checked_by_it_at_start() {
    let e = AgentSettings::parse("[summarizers.heuristic]\nbudget = 3\n")
        .unwrap()
        .middleware(&EMBEDDED, &no_model_client)
        .err()
        .expect("the heuristic summarizer has no settings");
    let e = format!("{e:#}");
    assert!(
        e.starts_with("summarizers.heuristic: settings: unknown field `budget`")
            && e.ends_with("(summarizer `heuristic`)"),
        "{e}"
    );
    AgentSettings::parse("[summarizers.heuristic]\n")
        .unwrap()
        .middleware(&EMBEDDED, &no_model_client)
        .unwrap_or_else(|e| panic!("{e:#}"));
}

#[test]
fn a_models_table_overrides_the_embedded_one_key_by_key_and_adds_models() {
    let s = AgentSettings::parse(
        r#"
cache_write_permille = 2000
[models."claude-sonnet-4*"]
token_threshold = 60000
[models."qwen3-coder*"]
input_price = 0.0
context_window = 32768
[agents.sub.models."gpt-4o-mini*"]
token_threshold = 20000
"#,
    )
    .unwrap();
    // The embedded entry's keys stay; the file's threshold is the model's,
    // the other fold keys scaled with it.
    let (sonnet, pattern, price) = s.for_model(Some("claude-sonnet-4-5-20250929"));
    assert_eq!((pattern, price.input), ("claude-sonnet-4*", 3.0));
    assert_eq!(sonnet.core.token_threshold, 60_000);
    assert_eq!(sonnet.core.target_tokens, s.core.target_tokens * 6 / 10);
    // A new model: its unset keys are "*"'s, its window caps the threshold.
    let (qwen, _, price) = s.for_model(Some("qwen3-coder:30b"));
    assert_eq!((price.input, price.cache_read), (0.0, 0.1));
    assert_eq!(qwen.core.token_threshold, 26_214);
    assert!(qwen.core.validate().is_ok());
    // The model's cache prices reach the embedded compressor, unless the
    // file sets the key itself.
    let (gpt, ..) = s.for_model(Some("gpt-4o-2024-08-06"));
    let compressor = passes(&gpt);
    assert_eq!(compressor.cache_read_permille, 500);
    assert_eq!(compressor.cache_write_permille, 2000, "the file's own key");
    assert_eq!(
        passes(&s).cache_read_permille,
        100,
        "no model: the defaults"
    );
    // An agent's models table merges over the top level's.
    let file = ConfigFile::parse(
        "[models.\"gpt-4o-mini*\"]\ncache_read = 0.4\n[agents.sub.models.\"gpt-4o-mini*\"]\ntoken_threshold = 20000\n",
    )
    .unwrap();
    let (sub, _, price) = file.agents["sub"].for_model(Some("gpt-4o-mini"));
    assert_eq!((sub.core.token_threshold, price.cache_read), (20_000, 0.4));
    let (top, ..) = file.base.for_model(Some("gpt-4o-mini"));
    assert_eq!(top.core.token_threshold, 100_000);
}

#[test]
fn a_bad_models_key_is_named_with_its_pattern() {
    for (text, named) in [
        (
            "[models.\"gpt-4o*\"]\ncache_read = 2.0",
            "models.\"gpt-4o*\".cache_read = 2: must be between 0.001 and 1",
        ),
        (
            "[models.\"x*\"]\ninput = 1.0",
            "models.\"x*\".input: unknown field `input`",
        ),
        (
            "[models.\"x*\"]\ncache_ttl = \"5 minutes\"",
            "models.\"x*\".cache_ttl: `5 minutes`: expected a duration",
        ),
        (
            "[models.\"x*\"]\ncache_write = { \"5m\" = 20.0 }",
            "models.\"x*\".cache_write.5m = 20: must be between 0.001 and 10",
        ),
        (
            "[models.\"x*\"]\ncontext_window = 50000\ntoken_threshold = 60000",
            "models.\"x*\".token_threshold = 60000: must be between 1000 and the model's \
             context_window (50000)",
        ),
        (
            "[models.\"x*\"]\ncache_read = 0.0",
            "models.\"x*\".cache_read = 0: must be between 0.001 and 1",
        ),
        ("models = 3", "models: must be a table"),
        (
            "[agents.a.models.\"x*\"]\ninput_price = -1.0",
            "agents.a.models.\"x*\".input_price = -1: must be between 0 and 1000",
        ),
    ] {
        let e = err(text);
        assert!(e.contains(named), "{text}: {e}");
    }
}

/// For a host that prepares summaries ahead, a chain that starts with the
/// LLM summarizer plans (its summaries take seconds) unless the file says
/// otherwise; the heuristic one does not; nor does a host that prepares
/// nothing.
#[test]
fn an_llm_chain_prepares_summaries_ahead_by_default() {
    let plan = |text: &str| {
        passes(&AgentSettings::parse(text).unwrap().preparing_ahead()).prepare_at_permille
    };
    assert_eq!(plan(""), 0);
    assert_eq!(plan("[components]\nsummarizers = [\"heuristic\"]\n"), 0);
    let llm = "[components]\nsummarizers = [\"llm\", \"heuristic\"]\n";
    assert_eq!(plan(llm), PREPARE_AT_PERMILLE);
    assert_eq!(plan(&format!("prepare_at_permille = 0\n{llm}")), 0);
    assert_eq!(plan(&format!("prepare_at_permille = 650\n{llm}")), 650);
    assert_eq!(
        passes(&AgentSettings::parse(llm).unwrap()).prepare_at_permille,
        0
    );
}
