//! The JSON Schema of the config file, generated from the section types,
//! with the ranges of the range tables and the compressor's own schema
//! merged in.

use crate::{Components, CoreKeys, LimitSettings, LlmSettings, RecallSettings, RuntimeSettings};
use schemars::JsonSchema;

/// The host's part of the file, for its schema.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
struct HostKeys {
    #[serde(flatten)]
    core: CoreKeys,
    /// Components to load instead of the embedded ones.
    #[schemars(default)]
    components: Components,
    /// Sandbox limits per guest call, and the largest request accepted.
    #[schemars(default)]
    limits: LimitSettings,
    /// How `condense agent` runs: its system prompt and its compaction policy.
    #[schemars(default)]
    runtime: RuntimeSettings,
    /// The model LLM summarizers ask (`summarizers = ["llm", "heuristic"]`).
    #[schemars(default)]
    llm: LlmSettings,
    /// Each summarizer's own settings: `[summarizers.NAME]`, where NAME is a
    /// summarizer of the chain (`heuristic`, `llm`, or a component's file
    /// name, quoted: `[summarizers."my_summarizer.wasm"]`). The summarizer
    /// checks them when condense starts, and names a wrong key; its
    /// `settings-schema` describes them. The LLM summarizer takes
    /// `context_tokens` and `cache_friendly` from `[llm]`, not from here.
    #[schemars(default)]
    summarizers: std::collections::BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
    /// What each model costs and holds, by model pattern (`*` any run, `?`
    /// one character), quoted: `[models."claude-sonnet-4*"]`. The most
    /// specific pattern a request's `model` matches prices it: the cost rule
    /// weighs compactions with its cache prices, the proxy's metrics price
    /// what was saved, and its window caps the threshold. Over the embedded
    /// table of the common models (`condense config --models` lists it): a
    /// table of the same pattern overrides it key by key, a new pattern adds
    /// a model whose unset keys are those of `"*"`.
    #[schemars(default)]
    models: std::collections::BTreeMap<String, crate::models::ModelKeys>,
    /// Whether the model may recall what a compaction took out
    /// (`condense_recall`), and how much: `[recall] mode = "off"` keeps
    /// requests as they were before recall.
    #[schemars(default)]
    recall: RecallSettings,
}

/// The JSON Schema (draft 2020-12) of the config file, generated from the
/// types: descriptions from their docs, defaults from their `Default`, and
/// the numeric minimum and maximum from the range tables `validate`
/// enforces ([`condense_model::CORE_RANGES`], [`LIMIT_RANGES`](crate::LIMIT_RANGES),
/// [`LLM_RANGES`](crate::LLM_RANGES), the compressor's own). `agents` is an object
/// whose values are the same schema without `agents`.
pub fn json_schema() -> serde_json::Value {
    let embedded = serde_json::from_str(&condense_contract::Settings::schema())
        .expect("the compressor's schema is JSON");
    json_schema_with(&embedded)
}

/// [`json_schema`] with the compressor keys of `compressor` (the schema a
/// compressor's `settings-schema` export returns).
pub fn json_schema_with(compressor: &serde_json::Value) -> serde_json::Value {
    use serde_json::{Value, json};

    let mut schema = schemars::schema_for!(HostKeys).to_value();
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(entries)) = compressor.get(key) {
            let into = schema[key]
                .as_object_mut()
                .map(std::mem::take)
                .unwrap_or_default();
            let mut merged = into;
            merged.extend(entries.clone());
            schema[key] = Value::Object(merged);
        }
    }

    let mut agent = serde_json::Map::new();
    agent.insert(
        "description".into(),
        json!(
            "Overrides for one agent, selected with `--agent NAME`: any key of the file but \
             `agents`. Keys left out keep the top-level value; a table merges key by key, any \
             other value (a list included) replaces the top-level one."
        ),
    );
    for key in ["type", "properties", "additionalProperties"] {
        agent.insert(key.into(), schema[key].clone());
    }
    schema["$defs"]["AgentSettings"] = Value::Object(agent);
    schema["properties"]["agents"] = json!({
        "description": "Per-agent overrides: `[agents.NAME]` tables, by agent name. Every \
                        agent's effective settings are validated when the file is loaded.",
        "type": "object",
        "additionalProperties": { "$ref": "#/$defs/AgentSettings" },
        "default": {}
    });
    schema["title"] = json!("condense configuration file");
    tidy(&mut schema);
    schema
}

/// [`json_schema`] as `condense config --schema` prints it (and as the golden
/// file `host-example/config/config.schema.json` holds it).
pub fn json_schema_text() -> String {
    schema_text(&json_schema())
}

/// A schema as `condense config --schema` prints it.
pub fn schema_text(schema: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).expect("a JSON value serialises");
    text.push('\n');
    text
}

/// Makes a generated (sub)schema read well and fit TOML: keywords in a fixed
/// order (description first), doc-comment line breaks joined within
/// paragraphs, and no `null` (TOML has none: an unset optional key is absent).
fn tidy(schema: &mut serde_json::Value) {
    use serde_json::Value;
    const ORDER: &[&str] = &[
        "$schema",
        "title",
        "description",
        "$ref",
        "type",
        "format",
        "const",
        "items",
        "minimum",
        "maximum",
        "default",
        "properties",
        "additionalProperties",
        "oneOf",
        "$defs",
    ];
    let Value::Object(map) = schema else {
        return;
    };
    let mut entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
    entries.sort_by_key(|(k, _)| ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()));
    map.extend(entries);

    if let Some(Value::String(text)) = map.get_mut("description") {
        let paragraphs: Vec<String> = text.split("\n\n").map(|p| p.replace('\n', " ")).collect();
        *text = paragraphs.join("\n\n");
    }
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            map.insert("type".into(), only);
        }
    }
    match map.get_mut("default") {
        Some(Value::Null) => {
            map.remove("default");
        }
        Some(Value::Object(default)) => default.retain(|_, v| !v.is_null()),
        _ => {}
    }
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(schemas)) = map.get_mut(key) {
            schemas.values_mut().for_each(tidy);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = map.get_mut(key) {
            tidy(sub);
        }
    }
    if let Some(Value::Array(schemas)) = map.get_mut("oneOf") {
        schemas.iter_mut().for_each(tidy);
    }
}
