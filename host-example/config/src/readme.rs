//! The key tables of `docs/configuration.md` (the page the README links as
//! its configuration), generated from the schema: a table per group of keys,
//! each row the key, its default and its description, so the docs say what
//! `condense config --schema` says and a new key needs no hand edit there.
//! `CONDENSE_BLESS=1 cargo test -p condense-config` rewrites them; without it
//! a table that differs fails.
//!
//! Each table follows a marker line `<!-- keys: GROUP … -->` and runs to the
//! first line that is not a table row.

use crate::schema::json_schema;
use crate::sections::HOST_TABLES;
use serde_json::Value;
use std::path::Path;

/// The groups, in the page's order: the fold knobs every compressor
/// shares, the embedded compressor's own keys, its `[tools]` table, and
/// the host's tables.
const GROUPS: [&str; 4] = ["fold", "passes", "tools", "host"];

/// The group of a top-level key; `None` for `agents` (prose of its own).
/// The host's tables get a row per key (`[table]` `key`); of the tables of
/// tables, `summarizers` one row (`[summarizers.NAME]`), `models` a row per
/// key (`[models.NAME]` `key`).
fn group_of(key: &str, core: &[String]) -> Option<&'static str> {
    match key {
        "agents" => None,
        "tools" => Some("tools"),
        _ if HOST_TABLES.contains(&key) => Some("host"),
        _ if core.iter().any(|k| k == key) => Some("fold"),
        _ => Some("passes"),
    }
}

/// The tables of `schema`, by group.
fn tables(schema: &Value) -> Vec<(&'static str, String)> {
    let core: Vec<String> = schemars::schema_for!(crate::CoreKeys).to_value()["properties"]
        .as_object()
        .expect("the core keys are an object")
        .keys()
        .cloned()
        .collect();
    let def = |property: &Value| -> Option<&Value> {
        let name = property.get("$ref")?.as_str()?.strip_prefix("#/$defs/")?;
        schema["$defs"].get(name)
    };
    let mut rows: Vec<(&str, String)> = Vec::new();
    for (key, property) in schema["properties"].as_object().unwrap() {
        let Some(group) = group_of(key, &core) else {
            continue;
        };
        match def(property).and_then(|d| d["properties"].as_object()) {
            Some(table) => {
                for (inner, p) in table {
                    rows.push((group, row(&format!("`[{key}]` `{inner}`"), p, def(p))));
                }
            }
            None if group == "host" => match def(&property["additionalProperties"])
                .and_then(|d| d["properties"].as_object())
            {
                Some(table) => {
                    for (inner, p) in table {
                        rows.push((group, row(&format!("`[{key}.NAME]` `{inner}`"), p, def(p))));
                    }
                }
                None => rows.push((group, row(&format!("`[{key}.NAME]`"), property, None))),
            },
            None => rows.push((group, row(&format!("`{key}`"), property, def(property)))),
        }
    }
    GROUPS
        .iter()
        .map(|&group| {
            let mut table = String::from("| key | default | meaning |\n|---|---|---|\n");
            for (_, line) in rows.iter().filter(|(g, _)| *g == group) {
                table.push_str(line);
                table.push('\n');
            }
            (group, table)
        })
        .collect()
}

/// One row: the key cell, the default (the schema's `default`, else its
/// `x-default` prose, else `unset`), and the description with what the
/// schema adds to it (an enum's values, an integer's range).
fn row(key: &str, property: &Value, def: Option<&Value>) -> String {
    let default = match (property.get("default"), property.get("x-default")) {
        (Some(value), _) => match value {
            Value::Number(_) | Value::Bool(_) => value.to_string(),
            _ => format!("`{}`", spaced(value)),
        },
        (None, Some(Value::String(prose))) => prose.clone(),
        _ => "unset".to_owned(),
    };
    let mut meaning = property["description"]
        .as_str()
        .or_else(|| def.and_then(|d| d["description"].as_str()))
        .unwrap_or_else(|| panic!("{key} has no description"))
        .replace('\n', " ");
    let values: Vec<String> = def
        .and_then(|d| d["oneOf"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|v| Some(format!("`{}`", v.get("const")?)))
        .collect();
    if !values.is_empty() {
        meaning.push_str(&format!(" One of {}.", values.join(", ")));
    }
    // A maximum near `u32::MAX` is the type's, not a limit worth reading.
    let open_ended = |max: &Value| max.as_u64().is_some_and(|m| m >= u64::from(u32::MAX - 1));
    match (property.get("minimum"), property.get("maximum")) {
        (Some(min), Some(max)) if open_ended(max) && min.as_u64() != Some(0) => {
            meaning.push_str(&format!(" At least {min}."));
        }
        (Some(min), Some(max)) if !open_ended(max) => {
            meaning.push_str(&format!(" From {min} to {max}."));
        }
        _ => {}
    }
    format!("| {key} | {default} | {} |", meaning.replace('|', "\\|"))
}

/// A JSON value as the page writes one: `["a", "b"]`, `{"a": 1}`.
fn spaced(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(spaced).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(entries) => {
            let entries: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), spaced(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        _ => value.to_string(),
    }
}

/// `readme` with each group's table after its marker replaced by
/// `tables`' (the text a bless writes). Panics naming a missing marker.
fn with_tables(readme: &str, tables: &[(&str, String)]) -> String {
    let mut out = String::new();
    let mut lines = readme.lines().peekable();
    let mut seen = Vec::new();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let Some(group) = line
            .strip_prefix("<!-- keys: ")
            .and_then(|rest| rest.split([' ', '-']).next())
        else {
            continue;
        };
        let (_, table) = tables
            .iter()
            .find(|(g, _)| *g == group)
            .unwrap_or_else(|| panic!("docs/configuration.md: marker of an unknown group: {line}"));
        seen.push(group.to_owned());
        out.push_str(table);
        while lines.peek().is_some_and(|l| l.starts_with('|')) {
            lines.next();
        }
    }
    for (group, _) in tables {
        assert!(
            seen.iter().any(|g| g == group),
            "docs/configuration.md has no `<!-- keys: {group} -->` marker"
        );
    }
    out
}

#[test]
fn readme_key_tables_are_the_schemas() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/configuration.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let generated = with_tables(&readme, &tables(&json_schema()));
    if std::env::var_os("CONDENSE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let differs = readme
        .lines()
        .zip(generated.lines())
        .find(|(a, b)| a != b)
        .map_or_else(String::new, |(a, b)| {
            format!("\n  docs:   {a}\n  schema: {b}")
        });
    assert!(
        readme == generated,
        "docs/configuration.md's key tables differ from the schema (a key, its default or \
         its description changed):{differs}\nRegenerate them with\n\n    CONDENSE_BLESS=1 cargo \
         test -p condense-config\n\nand review the diff."
    );
}

#[test]
fn a_row_says_the_default_the_values_and_the_range() {
    let enum_def = serde_json::json!({"oneOf": [{"const": "off"}, {"const": "on"}]});
    let p = serde_json::json!({"description": "What.", "default": "off"});
    assert_eq!(
        row("`mode`", &p, Some(&enum_def)),
        "| `mode` | `\"off\"` | What. One of `\"off\"`, `\"on\"`. |"
    );
    let p = serde_json::json!({"description": "A\nb.", "default": 5, "minimum": 1, "maximum": 9});
    assert_eq!(row("`n`", &p, None), "| `n` | 5 | A b. From 1 to 9. |");
    let p = serde_json::json!({"description": "N.", "minimum": 64, "maximum": 4294967294u64});
    assert_eq!(row("`n`", &p, None), "| `n` | unset | N. At least 64. |");
    let p = serde_json::json!({"description": "L.", "default": ["a", "b"]});
    assert_eq!(row("`l`", &p, None), "| `l` | `[\"a\", \"b\"]` | L. |");
    let p = serde_json::json!({"description": "D.", "x-default": "half of `n`"});
    assert_eq!(row("`d`", &p, None), "| `d` | half of `n` | D. |");
    assert_eq!(
        row("`u`", &serde_json::json!({"description": "a|b"}), None),
        "| `u` | unset | a\\|b |"
    );
}

#[test]
fn a_marked_table_is_replaced_and_the_rest_kept() {
    let readme = "intro\n<!-- keys: fold -->\n| old |\n| rows |\nafter\n";
    let tables = [("fold", "| new |\n".to_owned())];
    assert_eq!(
        with_tables(readme, &tables),
        "intro\n<!-- keys: fold -->\n| new |\nafter\n"
    );
}
