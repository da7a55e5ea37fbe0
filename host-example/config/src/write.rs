//! AgentSettings written back as a config file (`condense config --show`): every
//! key with its value, the unset ones as comments.

use crate::AgentSettings;
use crate::sections::is_builtin;
use anyhow::{Context, Result};

impl AgentSettings {
    /// These settings as a config file: every key with its value, so it can
    /// be copied as a starting point. [`AgentSettings::parse`] reads it back to the
    /// same settings. An unset component is a comment.
    pub fn to_toml(&self) -> Result<String> {
        let mut out = toml::to_string_pretty(&self.core)?;
        // The compressor's keys: the embedded one's with its defaults filled
        // in, a loaded one's as written.
        let compressor = match self.embedded_compressor() {
            Some(settings) => serde_json::to_value(settings.map_err(anyhow::Error::msg)?)?,
            None => serde_json::Value::Object(self.compressor.clone()),
        };
        let compressor: toml::Table = serde_json::from_value(compressor)?;
        if !compressor.is_empty() {
            out.push('\n');
            out.push_str(&toml::to_string_pretty(&compressor)?);
        }
        out.push_str("\n[components]\n");
        let components = [
            (
                "compressor",
                &self.components.compressor,
                "the embedded compressor",
            ),
            (
                "summarizer",
                &self.components.summarizer,
                "the embedded heuristic summarizer",
            ),
        ];
        for (key, path, unset) in components {
            match path {
                Some(p) => {
                    // Absolute: the shown file loads from wherever it is
                    // saved (a path relative to the working directory would
                    // be read relative to the new file's directory).
                    let p = std::path::absolute(p).unwrap_or_else(|_| p.clone());
                    let text = p.to_str().with_context(|| {
                        format!(
                            "components.{key}: {} is not UTF-8 and cannot be written as TOML",
                            p.display()
                        )
                    })?;
                    out.push_str(&format!("{key} = {}\n", toml::Value::from(text)));
                }
                None => out.push_str(&format!("# {key} = \"{key}.wasm\"  (unset: {unset})\n")),
            }
        }
        if let Some(chain) = &self.components.summarizers {
            let entries = chain
                .iter()
                .map(|p| {
                    let p = if is_builtin(p) {
                        p.clone()
                    } else {
                        std::path::absolute(p).unwrap_or_else(|_| p.clone())
                    };
                    p.to_str().map(toml::Value::from).with_context(|| {
                        format!(
                            "components.summarizers: {} is not UTF-8 and cannot be written as TOML",
                            p.display()
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            out.push_str(&format!("summarizers = {}\n", toml::Value::Array(entries)));
        }
        out.push_str("\n[limits]\n");
        out.push_str(&toml::to_string(&self.limits)?);
        out.push_str("\n[recall]\n");
        out.push_str(&toml::to_string(&self.recall)?);
        out.push_str("\n[runtime]\n");
        let runtime = &self.runtime;
        let mut table = toml::Table::try_from(runtime)?;
        table.remove("budgets");
        out.push_str(&toml::to_string(&table)?);
        for (key, unset) in [
            ("persona", "condense agent's own"),
            ("memory_file", "no memory block"),
        ] {
            if !table.contains_key(key) {
                out.push_str(&format!("# {key} = \"...\"  (unset: {unset})\n"));
            }
        }
        out.push_str("\n[runtime.budgets]\n");
        out.push_str(&toml::to_string(&runtime.budgets)?);
        out.push_str("\n[llm]\n");
        let llm = toml::Table::try_from(&self.llm)?;
        out.push_str(&toml::to_string(&llm)?);
        for (key, example, unset) in [
            ("base_url", "\"http://127.0.0.1:11434/v1\"", "no model"),
            ("model", "\"qwen2.5-coder\"", "no model"),
            ("api_key_env", "\"OPENAI_API_KEY\"", "no key"),
            ("temperature", "0.2", "the server's default"),
        ] {
            if !llm.contains_key(key) {
                out.push_str(&format!("# {key} = {example}  (unset: {unset})\n"));
            }
        }
        if self.summarizers.is_empty() {
            out.push_str(
                "\n# [summarizers.NAME]  (a summarizer's own settings; unset: its defaults)\n",
            );
        }
        if self.model_tables.is_empty() {
            out.push_str(
                "\n# [models.\"PATTERN\"]  (a model's prices and window; unset: the embedded \
                 table, `condense config --models`)\n",
            );
        }
        for (pattern, keys) in &self.model_tables {
            let pattern = crate::path::key_text(pattern);
            out.push_str(&format!("\n[models.{pattern}]\n{}", toml::to_string(keys)?));
        }
        for (name, settings) in &self.summarizers {
            let table: toml::Table = serde_json::from_value(settings.clone().into())?;
            let name = crate::path::key_text(name);
            out.push_str(&format!(
                "\n[summarizers.{name}]\n{}",
                toml::to_string(&table)?
            ));
        }
        Ok(out)
    }
}
