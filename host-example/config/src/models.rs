//! The `[models."PATTERN"]` tables: what each model costs and holds (its
//! [`ModelPrice`]), over the embedded defaults (`models.toml`). The settings
//! a request to a model is compressed with are
//! [`AgentSettings::for_model`](crate::AgentSettings::for_model)'s: the model's
//! threshold and, for the embedded compressor, its cache prices.
//!
//! ```toml
//! [models."claude-sonnet-4*"]    # overrides the embedded entry key by key
//! token_threshold = 120000
//!
//! [models."qwen3-coder*"]        # a model of your own: unset keys are "*"'s
//! input_price = 0.0
//! cache_write = {}               # no cache writes billed
//! context_window = 32768         # compacted at 80% of it
//! ```

use crate::pricing::{ANY_MODEL, ModelPrice, PriceTable};
use anyhow::{Result, bail};
use condense_model::CoreConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The price models condense knows without a config file.
const EMBEDDED: &str = include_str!("../models.toml");

/// One `[models."PATTERN"]` table, as written: every key optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ModelKeys {
    /// USD per million uncached input tokens.
    pub input_price: Option<f64>,
    /// USD per million output tokens.
    pub output_price: Option<f64>,
    /// A cached input token costs this share of `input_price` (0.1: a
    /// tenth).
    pub cache_read: Option<f64>,
    /// Writing a token to the cache costs this share of `input_price`, by
    /// how long the cache keeps it: `{ "5m" = 1.25, "1h" = 2.0 }`. Empty
    /// (`{}`): writes cost the input price (OpenAI, Google).
    pub cache_write: Option<BTreeMap<String, f64>>,
    /// How long the provider's cache keeps the prefix the requests use
    /// (`"5m"`, `"1h"`; `s`, `m`, `h`): a request after a longer pause finds
    /// it expired, and its write price is this TTL's.
    pub cache_ttl: Option<String>,
    /// The model's context window in tokens. Without a `token_threshold` of
    /// its own, its requests are compacted at the agent's threshold, held to
    /// 80% of the window.
    pub context_window: Option<u32>,
    /// The threshold its requests are compacted at, instead of the agent's.
    pub token_threshold: Option<u32>,
}

impl ModelKeys {
    /// `over`'s keys where it sets them, these elsewhere.
    fn merged(&self, over: &ModelKeys) -> ModelKeys {
        ModelKeys {
            input_price: over.input_price.or(self.input_price),
            output_price: over.output_price.or(self.output_price),
            cache_read: over.cache_read.or(self.cache_read),
            cache_write: over.cache_write.clone().or(self.cache_write.clone()),
            cache_ttl: over.cache_ttl.clone().or(self.cache_ttl.clone()),
            context_window: over.context_window.or(self.context_window),
            token_threshold: over.token_threshold.or(self.token_threshold),
        }
    }

    /// The price model these keys give, every key set (merged over `*`'s);
    /// errors name the key under `at` (`models."gpt-4o*".`).
    fn price(&self, at: &str) -> Result<ModelPrice> {
        let missing = |key: &str| anyhow::anyhow!("{at}{key}: missing (the \"*\" entry sets it)");
        let money = |key: &str, value: Option<f64>| -> Result<f64> {
            let value = value.ok_or_else(|| missing(key))?;
            if !(0.0..=1_000.0).contains(&value) {
                bail!("{at}{key} = {value}: must be between 0 and 1000 (USD per million tokens)");
            }
            Ok(value)
        };
        // At least a thousandth: the compressor weighs prices in thousandths
        // of an input token, and a free read would make every excess worth
        // carrying.
        let share = |key: &str, value: f64, max: f64| -> Result<f64> {
            if !(0.001..=max).contains(&value) {
                bail!(
                    "{at}{key} = {value}: must be between 0.001 and {max} (a share of input_price)"
                );
            }
            Ok(value)
        };
        let ttl = self
            .cache_ttl
            .as_deref()
            .ok_or_else(|| missing("cache_ttl"))?;
        let cache_ttl_seconds = seconds(ttl).map_err(|e| anyhow::anyhow!("{at}cache_ttl: {e}"))?;
        let mut cache_write = BTreeMap::new();
        for (ttl, multiplier) in self
            .cache_write
            .as_ref()
            .ok_or_else(|| missing("cache_write"))?
        {
            let key = format!("cache_write.{}", crate::path::key_text(ttl));
            let secs = seconds(ttl).map_err(|e| anyhow::anyhow!("{at}{key}: {e}"))?;
            cache_write.insert(secs, share(&key, *multiplier, 10.0)?);
        }
        let context_window = self
            .context_window
            .ok_or_else(|| missing("context_window"))?;
        if context_window < 2_000 {
            bail!("{at}context_window = {context_window}: must be at least 2000 tokens");
        }
        if let Some(threshold) = self.token_threshold
            && !(1_000..=context_window).contains(&threshold)
        {
            bail!(
                "{at}token_threshold = {threshold}: must be between 1000 and the model's \
                 context_window ({context_window})"
            );
        }
        Ok(ModelPrice {
            input: money("input_price", self.input_price)?,
            output: money("output_price", self.output_price)?,
            cache_read: share(
                "cache_read",
                self.cache_read.ok_or_else(|| missing("cache_read"))?,
                1.0,
            )?,
            cache_write,
            cache_ttl_seconds,
            context_window,
            token_threshold: self.token_threshold,
        })
    }
}

/// Seconds of a duration written `90s`, `5m` or `1h`: 1 s to 24 h.
fn seconds(text: &str) -> std::result::Result<u32, String> {
    let wrong = || format!("`{text}`: expected a duration such as \"5m\", \"1h\" or \"300s\"");
    let split = text.len().saturating_sub(1);
    let (digits, unit) = (text.get(..split).ok_or_else(wrong)?, &text[split..]);
    let n: u32 = digits.parse().map_err(|_| wrong())?;
    let unit = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        _ => return Err(wrong()),
    };
    match n.checked_mul(unit) {
        Some(s @ 1..=86_400) => Ok(s),
        _ => Err(format!("`{text}`: must be between 1s and 24h")),
    }
}

/// The `[models]` tables as written, by pattern.
pub type ModelTables = BTreeMap<String, ModelKeys>;

/// The embedded tables, as `models.toml` has them.
fn embedded() -> ModelTables {
    toml::from_str(EMBEDDED).expect("models.toml is checked by a test")
}

/// The price table of `written` over the embedded one: an entry of the
/// same pattern is overridden key by key, a new pattern added, and every
/// entry's unset keys are the `*` entry's. Errors name the key after `at`
/// (`""`, `"agents.NAME."`).
pub fn price_table(written: &ModelTables, at: &str) -> Result<PriceTable> {
    let mut tables = embedded();
    for (pattern, keys) in written {
        let merged = tables
            .get(pattern)
            .cloned()
            .unwrap_or_default()
            .merged(keys);
        tables.insert(pattern.clone(), merged);
    }
    let any = tables[ANY_MODEL].clone();
    let models = tables
        .iter()
        .map(|(pattern, keys)| {
            let at = format!("{at}models.{}.", crate::path::key_text(pattern));
            Ok((pattern.clone(), any.merged(keys).price(&at)?))
        })
        .collect::<Result<BTreeMap<_, _>>>()?;
    PriceTable::new(models).map_err(anyhow::Error::msg)
}

/// The embedded price table.
pub fn embedded_table() -> PriceTable {
    price_table(&ModelTables::new(), "").expect("models.toml is checked by a test")
}

/// The embedded compressor's keys a model's prices set, unless the file
/// sets them itself.
pub(crate) const PRICE_KEYS: [&str; 3] = [
    "cache_read_permille",
    "cache_write_permille",
    "cache_ttl_seconds",
];

/// `core` at `threshold`: the fold keys scaled with it (a smaller window
/// keeps a proportionally smaller tail and summary), the summary budget at
/// least 64 tokens.
pub(crate) fn scaled(core: &CoreConfig, threshold: u32) -> CoreConfig {
    let scale = |v: u32| {
        let v = u64::from(v) * u64::from(threshold) / u64::from(core.token_threshold.max(1));
        u32::try_from(v).unwrap_or(u32::MAX)
    };
    CoreConfig {
        token_threshold: threshold,
        target_tokens: scale(core.target_tokens).max(1),
        recent_turns: core.recent_turns,
        keep_recent_tokens: scale(core.keep_recent_tokens).max(1),
        summary_max_tokens: scale(core.summary_max_tokens).max(64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_models_are_priced_and_the_catch_all_is_todays_default() {
        let table = embedded_table();
        let (pattern, any) = table.lookup(Some("some-local-model"));
        assert_eq!(pattern, "*");
        assert_eq!(any.prices(0.0), condense_replay::Prices::DEFAULT);
        let (pattern, opus) = table.lookup(Some("claude-opus-4-1-20250805"));
        assert_eq!(
            (pattern, opus.input, opus.write()),
            ("claude-opus-4*", 15.0, 1.25)
        );
        let (_, mini) = table.lookup(Some("gpt-4o-mini-2024-07-18"));
        assert_eq!(
            (mini.input, mini.cache_read, mini.write()),
            (0.15, 0.5, 1.0)
        );
        assert_eq!(mini.context_window, 128_000);
    }

    #[test]
    fn durations_are_read_with_their_unit() {
        assert_eq!(seconds("5m"), Ok(300));
        assert_eq!(seconds("1h"), Ok(3600));
        assert_eq!(seconds("90s"), Ok(90));
        for bad in ["5", "m", "", "5d", "0s", "25h", "-1m", "é"] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
    }
}
