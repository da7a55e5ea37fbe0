//! The `condense` configuration file (TOML) and its defaults.
//!
//! ```toml
//! token_threshold = 100000      # compressor keys, as in the WIT `config` record
//! target_tokens = 40000
//!
//! [components]                  # optional: swap guests without rebuilding the host
//! summarizer = "my_summarizer.wasm"
//!
//! [limits]                      # optional: sandbox limits per guest call
//! memory_mib = 256
//! timeout_ms = 5000
//! ```
//!
//! Parsed and validated once, when the host is set up (configure once, call
//! many); unknown keys are rejected with their name, out-of-range values with
//! the allowed range. Relative component paths resolve against the file's
//! directory.

use crate::{ComponentSource, Limits, Middleware, Runtime, embedded};
use anyhow::{Context, Result, bail};
use condense_model::Config;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Component paths; `None` means the component embedded in the binary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Components {
    pub compressor: Option<PathBuf>,
    pub summarizer: Option<PathBuf>,
}

/// Sandbox limits per guest call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitSettings {
    /// Linear memory a guest may grow to, in MiB.
    pub memory_mib: u32,
    /// Wall-clock budget of one `compress` call (summarizer included), in ms.
    pub timeout_ms: u32,
}

impl Default for LimitSettings {
    fn default() -> Self {
        LimitSettings {
            memory_mib: 256,
            timeout_ms: 5_000,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Settings {
    #[serde(flatten)]
    pub compress: Config,
    pub components: Components,
    pub limits: LimitSettings,
}

impl Settings {
    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<Settings> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        let mut settings =
            Settings::parse(&text).with_context(|| format!("config file {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        for p in [
            &mut settings.components.compressor,
            &mut settings.components.summarizer,
        ]
        .into_iter()
        .flatten()
        {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
        Ok(settings)
    }

    /// Parses TOML text. Serde cannot combine `flatten` with
    /// `deny_unknown_fields`, so the two sub-tables are split off first and
    /// each part is decoded strictly on its own.
    pub fn parse(text: &str) -> Result<Settings> {
        let mut table: toml::Table = toml::from_str(text)?;
        let components = match table.remove("components") {
            Some(v) => v.try_into::<Components>().context("[components]")?,
            None => Components::default(),
        };
        let limits = match table.remove("limits") {
            Some(v) => v.try_into::<LimitSettings>().context("[limits]")?,
            None => LimitSettings::default(),
        };
        let compress: Config = toml::Value::Table(table).try_into()?;
        let settings = Settings {
            compress,
            components,
            limits,
        };
        settings.validate()?;
        Ok(settings)
    }

    /// The defaults of `condense replay` and `condense demo`, and of the
    /// corpus tests and benches: a 40k-token threshold makes every long
    /// recorded session compact several times.
    pub fn for_replay() -> Settings {
        let mut s = Settings::default();
        s.compress.token_threshold = 40_000;
        s.compress.target_tokens = 16_000;
        s.compress.keep_recent_tokens = 8_000;
        s.compress.summary_max_tokens = 2_000;
        s
    }

    /// The sandbox limits these settings ask for.
    pub fn sandbox_limits(&self) -> Limits {
        Limits {
            memory_bytes: self.limits.memory_mib as usize * (1 << 20),
            call_timeout: std::time::Duration::from_millis(u64::from(self.limits.timeout_ms)),
            ..Limits::default()
        }
    }

    /// Loads the configured components (embedded ones by default) into a
    /// fail-open middleware.
    pub fn middleware(&self) -> Result<Middleware> {
        let source = |path: &Option<PathBuf>, embedded: &'static [u8]| match path {
            Some(p) => ComponentSource::Path(p.clone()),
            None => ComponentSource::Embedded(embedded),
        };
        let runtime = Runtime::new(
            self.sandbox_limits(),
            source(&self.components.compressor, embedded::COMPRESSOR),
            source(&self.components.summarizer, embedded::SUMMARIZER),
        )?;
        Ok(Middleware::new(runtime))
    }

    pub fn validate(&self) -> Result<()> {
        if let Err(e) = self.compress.validate() {
            bail!("{e}");
        }
        if !(16..=4096).contains(&self.limits.memory_mib) {
            bail!(
                "limits.memory_mib = {}: must be between 16 and 4096",
                self.limits.memory_mib
            );
        }
        if !(10..=600_000).contains(&self.limits.timeout_ms) {
            bail!(
                "limits.timeout_ms = {}: must be between 10 and 600000",
                self.limits.timeout_ms
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_defaults() {
        assert_eq!(Settings::parse("").unwrap(), Settings::default());
    }

    #[test]
    fn keys_override_defaults() {
        let s = Settings::parse("token_threshold = 40000\ntarget_tokens = 16000\nkeep_recent_tokens = 8000\n[limits]\ntimeout_ms = 100\n").unwrap();
        assert_eq!(s.compress.token_threshold, 40_000);
        assert_eq!(s.compress.target_tokens, 16_000);
        assert_eq!(s.compress.recent_turns, Config::default().recent_turns);
        assert_eq!(s.limits.timeout_ms, 100);
    }

    #[test]
    fn unknown_keys_are_named() {
        let e = format!("{:#}", Settings::parse("token_treshold = 4").unwrap_err());
        assert!(e.contains("token_treshold"), "{e}");
        let e = format!("{:#}", Settings::parse("[limits]\nmemory = 4").unwrap_err());
        assert!(e.contains("memory") && e.contains("[limits]"), "{e}");
    }

    #[test]
    fn out_of_range_values_are_named_with_their_range() {
        let e = format!(
            "{:#}",
            Settings::parse("token_threshold = 40000\ntarget_tokens = 50000").unwrap_err()
        );
        assert!(e.contains("target_tokens") && e.contains("39999"), "{e}");
        let e = format!(
            "{:#}",
            Settings::parse("[limits]\nmemory_mib = 1").unwrap_err()
        );
        assert!(e.contains("memory_mib") && e.contains("16"), "{e}");
    }

    #[test]
    fn wrong_types_are_named() {
        let e = format!(
            "{:#}",
            Settings::parse("recent_turns = \"ten\"").unwrap_err()
        );
        assert!(e.contains("recent_turns"), "{e}");
    }
}
