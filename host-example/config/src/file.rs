//! Reading a config file: TOML decoded strictly table by table, so an
//! unknown key is named by its full path, and each `[agents.NAME]` table
//! merged over the top level and validated on its own.

use crate::models::ModelTables;
use crate::path::key_text;
use crate::sections::HOST_TABLES;
use crate::sections::is_builtin;
use crate::{AgentSettings, CoreKeys};
use anyhow::{Context, Result, bail};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

impl AgentSettings {
    /// Reads and validates a config file, its agents included, and returns
    /// its top-level settings.
    pub fn load(path: &Path) -> Result<AgentSettings> {
        Ok(ConfigFile::load(path)?.base)
    }

    /// Reads and validates a config file, its agents included, and returns
    /// the settings of `agent` (`None`: the top-level settings).
    pub fn load_agent(path: &Path, agent: Option<&str>) -> Result<AgentSettings> {
        ConfigFile::load(path)?.settings(agent).cloned()
    }

    /// Parses and validates TOML text, its agents included, and returns its
    /// top-level settings. Relative component paths are left as written.
    pub fn parse(text: &str) -> Result<AgentSettings> {
        Ok(ConfigFile::parse(text)?.base)
    }

    fn resolve_paths(&mut self, dir: &Path) {
        let chain = self
            .components
            .summarizers
            .iter_mut()
            .flatten()
            .filter(|p| !is_builtin(p));
        for p in [
            &mut self.components.compressor,
            &mut self.components.summarizer,
        ]
        .into_iter()
        .flatten()
        .chain(chain)
        {
            if p.is_relative() {
                *p = dir.join(&*p);
            }
        }
    }
}

/// A config file, loaded and validated: its top-level settings and the
/// effective settings of each `[agents.NAME]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigFile {
    /// The file read, for messages; `None` when parsed from text.
    pub source: Option<PathBuf>,
    /// The top-level keys over the defaults.
    pub base: AgentSettings,
    /// Each agent's table merged over the top-level keys, by agent name.
    pub agents: BTreeMap<String, AgentSettings>,
}

impl ConfigFile {
    /// Reads a config file and validates it, every agent included. Relative
    /// component paths resolve against the file's directory.
    pub fn load(path: &Path) -> Result<ConfigFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        let mut file =
            ConfigFile::parse(&text).with_context(|| format!("config file {}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        for settings in std::iter::once(&mut file.base).chain(file.agents.values_mut()) {
            settings.resolve_paths(dir);
        }
        file.source = Some(path.to_owned());
        Ok(file)
    }

    /// Parses and validates TOML text, every agent included; the first error
    /// names the full path of its key.
    pub fn parse(text: &str) -> Result<ConfigFile> {
        let mut table: toml::Table = toml::from_str(text)?;
        let agents = match table.remove("agents") {
            None => toml::Table::new(),
            Some(toml::Value::Table(agents)) => agents,
            Some(other) => bail!(
                "agents: must be a table of [agents.NAME] tables, not {}",
                other.type_str()
            ),
        };
        let base = decode_settings(table.clone(), "")?;
        base.validate()?;
        let mut effective = BTreeMap::new();
        for (name, overrides) in agents {
            let at = format!("agents.{}", key_text(&name));
            let toml::Value::Table(overrides) = overrides else {
                bail!(
                    "{at}: must be a table ([{at}]) of keys that override the top-level ones, not {}",
                    overrides.type_str()
                );
            };
            if overrides.contains_key("agents") {
                bail!("{at}.agents: agents cannot be nested; [agents.NAME] tables are top-level");
            }
            let mut merged = table.clone();
            merge(&mut merged, overrides.clone());
            let mut settings = decode_settings(merged, &format!("{at}."))?;
            // A top-level [summarizers.NAME] applies to the agents whose
            // chain has that summarizer; one the agent writes must name one.
            let chain: Vec<String> = settings
                .summarizer_chain()
                .into_iter()
                .map(|(name, _)| name)
                .collect();
            let own = overrides.get("summarizers").and_then(toml::Value::as_table);
            settings.summarizers.retain(|name, _| {
                chain.contains(name) || own.is_some_and(|t| t.contains_key(name))
            });
            if let Err(e) = settings.validate() {
                // The value at fault may come from the top level: say so.
                let message = e.to_string();
                let key = message.split([' ', '[', ':']).next().unwrap_or_default();
                if sets(&overrides, key) {
                    bail!("{at}.{message}");
                }
                bail!(
                    "{at}.{message} ([{at}] does not set {key}: it comes from the top level \
                     or the defaults)"
                );
            }
            effective.insert(name, settings);
        }
        Ok(ConfigFile {
            source: None,
            base,
            agents: effective,
        })
    }

    /// The names of the agents the file defines, sorted.
    pub fn agent_names(&self) -> impl Iterator<Item = &str> {
        self.agents.keys().map(String::as_str)
    }

    /// The settings of `agent`, or the top-level ones for `None`. An unknown
    /// agent is an error listing the agents the file defines.
    pub fn settings(&self, agent: Option<&str>) -> Result<&AgentSettings> {
        let Some(name) = agent else {
            return Ok(&self.base);
        };
        if let Some(settings) = self.agents.get(name) {
            return Ok(settings);
        }
        let file = self
            .source
            .as_ref()
            .map_or("the config file".to_owned(), |p| p.display().to_string());
        if self.agents.is_empty() {
            bail!(
                "unknown agent `{name}`: {file} defines no agents (add an [agents.{}] table)",
                key_text(name)
            );
        }
        let known: Vec<String> = self.agent_names().map(|n| format!("`{n}`")).collect();
        bail!(
            "unknown agent `{name}`: {file} defines {}",
            known.join(", ")
        )
    }
}

/// Merges `overrides` into `base`: a table merges key by key, any other value
/// (a list included) replaces the base value.
fn merge(base: &mut toml::Table, overrides: toml::Table) {
    for (key, value) in overrides {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(base)), toml::Value::Table(value)) => merge(base, value),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// Decodes one settings table (the top level, or an agent's table merged
/// over it) strictly; errors name their key with `at` (`""` or
/// `"agents.NAME."`) before it. The values are not validated yet.
fn decode_settings(mut table: toml::Table, at: &str) -> Result<AgentSettings> {
    // A scalar or list where a table belongs would otherwise be reported as
    // a struct decoded from a sequence: say plainly what is expected.
    for key in HOST_TABLES {
        if let Some(value) = table.get(key).filter(|v| !v.is_table()) {
            bail!(
                "{at}{key}: must be a table ([{at}{key}]), not {}",
                value.type_str()
            );
        }
    }
    // `AgentSettings` flattens `Config`, and serde cannot deny unknown fields
    // through `flatten`: the host's tables are split off and each part is
    // decoded strictly on its own.
    let mut sub_table = |key: &str| match table.remove(key) {
        Some(toml::Value::Table(t)) => t,
        _ => toml::Table::new(),
    };
    let components = decode_table(sub_table("components"), &format!("{at}components."))?;
    let limits = decode_table(sub_table("limits"), &format!("{at}limits."))?;
    let runtime = decode_table(sub_table("runtime"), &format!("{at}runtime."))?;
    let llm = decode_table(sub_table("llm"), &format!("{at}llm."))?;
    let recall = decode_table(sub_table("recall"), &format!("{at}recall."))?;
    let mut summarizers = BTreeMap::new();
    for (name, table) in sub_table("summarizers") {
        let toml::Value::Table(table) = table else {
            bail!(
                "{at}summarizers.{}: must be a table ([{at}summarizers.{}]) of that \
                 summarizer's settings, not {}",
                key_text(&name),
                key_text(&name),
                table.type_str()
            );
        };
        summarizers.insert(name, toml_to_json(table)?);
    }
    let mut model_tables = ModelTables::new();
    for (pattern, table) in sub_table("models") {
        let at = format!("{at}models.{}", key_text(&pattern));
        let toml::Value::Table(table) = table else {
            bail!(
                "{at}: must be a table ([{at}]) of that model's prices, not {}",
                table.type_str()
            );
        };
        model_tables.insert(pattern, decode_table(table, &format!("{at}."))?);
    }
    let models = crate::models::price_table(&model_tables, at)?;
    let mut core = toml::Table::new();
    for key in CORE_KEYS {
        if let Some(value) = table.remove(*key) {
            core.insert((*key).to_owned(), value);
        }
    }
    let core: CoreKeys = decode_table(core, at)?;
    // What is left is the compressor's, to be checked by it.
    let compressor = toml_to_json(table)?;
    Ok(AgentSettings {
        core: core.resolve(),
        compressor,
        components,
        limits,
        runtime,
        llm,
        summarizers,
        model_tables,
        models,
        recall,
    })
}

/// A table handed to a component as its settings JSON.
fn toml_to_json(table: toml::Table) -> Result<serde_json::Map<String, serde_json::Value>> {
    match serde_json::to_value(&table)? {
        serde_json::Value::Object(map) => Ok(map),
        _ => Ok(serde_json::Map::new()),
    }
}

/// The keys of [`CoreKeys`], split off before the rest goes to the compressor.
pub(crate) const CORE_KEYS: &[&str] = &[
    "token_threshold",
    "target_tokens",
    "recent_turns",
    "keep_recent_tokens",
    "summary_max_tokens",
];

/// Whether `table` sets the dotted `key` (`limits.timeout_ms`).
fn sets(table: &toml::Table, key: &str) -> bool {
    let mut table = table;
    let mut parts = key.split('.').peekable();
    while let Some(part) = parts.next() {
        match (table.get(part), parts.peek()) {
            (None, _) => return false,
            (Some(_), None) => return true,
            (Some(value), Some(_)) => match value.as_table() {
                Some(inner) => table = inner,
                None => return false,
            },
        }
    }
    false
}

/// Decodes `table` into `T` strictly; an error names the key at fault by its
/// full path (`agents.review.tools.readonly: unknown field ...`, with the
/// keys allowed there).
fn decode_table<T: DeserializeOwned>(table: toml::Table, at: &str) -> Result<T> {
    serde_path_to_error::deserialize(toml::Value::Table(table))
        .map_err(|e| anyhow::anyhow!("{at}{}: {}", e.path(), e.inner().message()))
}
