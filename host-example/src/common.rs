//! The arguments every command that compresses takes: the config file, the
//! agent, and components in place of the configured ones.

use anyhow::{Result, bail};
use clap::Args;
use condense_config::{AgentSettings, ConfigFile};
use std::path::PathBuf;

#[derive(Args)]
pub struct Common {
    /// TOML config: compressor keys (token_threshold, target_tokens, clear_mode, ...),
    /// [tools], [components], [limits] and per-agent [agents.NAME] overrides. Every key
    /// and its default: `condense config --show`; their meaning: docs/configuration.md or
    /// `condense config --schema`.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Use the settings of agent NAME: its [agents.NAME] table of the --config file merged
    /// over the file's top-level keys.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Compressor component to load instead of the embedded one.
    #[arg(long, value_name = "PATH")]
    pub compressor: Option<PathBuf>,
    /// Summarizer component to load instead of the embedded heuristic one.
    #[arg(long, value_name = "PATH")]
    pub summarizer: Option<PathBuf>,
}

impl Common {
    /// The config file (or the given defaults), with command-line overrides.
    pub fn settings(&self, defaults: AgentSettings) -> Result<AgentSettings> {
        Ok(self.load(defaults)?.0)
    }

    /// The settings, and the config file they come from if there is one.
    pub fn load(&self, defaults: AgentSettings) -> Result<(AgentSettings, Option<ConfigFile>)> {
        let (mut settings, file) = match (&self.config, &self.agent) {
            (Some(path), agent) => {
                let file = ConfigFile::load(path)?;
                (file.settings(agent.as_deref())?.clone(), Some(file))
            }
            (None, Some(agent)) => bail!(
                "--agent {agent} needs --config FILE: agents are the [agents.NAME] tables \
                 of a config file"
            ),
            (None, None) => (defaults, None),
        };
        if let Some(p) = &self.compressor {
            settings.components.compressor = Some(p.clone());
        }
        if let Some(p) = &self.summarizer {
            // One summarizer given on the command line replaces the file's.
            settings.components.summarizer = Some(p.clone());
            settings.components.summarizers = None;
        }
        Ok((settings, file))
    }
}
