//! What a model costs and holds: its price model, found by the request's
//! `model`. The cost rule weighs compactions with its cache prices, the
//! proxy's metrics price what condense saved with them, and its context
//! window caps the threshold, so that a sub-agent on a smaller model is
//! compacted for its own window.
//!
//! A [`PriceTable`] holds one [`ModelPrice`] per model pattern (`*` any run,
//! `?` one character): `condense-config` fills it from its embedded defaults
//! and the config file's `[models."PATTERN"]` tables.

use condense_replay::Prices;
use std::collections::BTreeMap;

/// The pattern every model matches: the prices of a model no other pattern
/// names.
pub const ANY_MODEL: &str = "*";

/// The share of a model's context window a request may reach before it is
/// compacted, when nothing sets the model's threshold: the rest is the
/// answer's room (a coding model writes up to 32k of a 200k window) and the
/// margin of condense's estimate of tokens (characters / 4) against the
/// provider's tokenizer.
pub const WINDOW_SHARE_PERCENT: u64 = 80;

/// The prices and window of one model (family).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelPrice {
    /// USD per million uncached input tokens.
    pub input: f64,
    /// USD per million output tokens.
    pub output: f64,
    /// A cached input token costs this share of `input`.
    pub cache_read: f64,
    /// Writing a token to the cache costs this share of `input`, by how long
    /// the cache keeps it (seconds): Anthropic bills 1.25 for 5 minutes and 2
    /// for an hour; OpenAI bills no write (1).
    pub cache_write: BTreeMap<u32, f64>,
    /// How long the provider's cache keeps a prefix the requests use, in
    /// seconds: the write price is the one for this TTL.
    pub cache_ttl_seconds: u32,
    /// The model's context window, in tokens.
    pub context_window: u32,
    /// The threshold its requests are compacted at, when it has its own.
    pub token_threshold: Option<u32>,
}

impl ModelPrice {
    /// The write multiplier for the TTL the requests use; a TTL the table
    /// does not price costs the longest priced TTL's (the dearest, as a
    /// longer cache is), or 1 with none priced (a provider that bills no
    /// writes).
    pub fn write(&self) -> f64 {
        self.cache_write
            .get(&self.cache_ttl_seconds)
            .or_else(|| self.cache_write.values().next_back())
            .copied()
            .unwrap_or(1.0)
    }

    /// The prices the cost rule and the replay weigh tokens with (a share of
    /// an uncached input token), a summary costing `summary` tokens.
    pub fn prices(&self, summary: f64) -> Prices {
        Prices {
            read: self.cache_read,
            write: self.write(),
            summary,
            ttl_seconds: self.cache_ttl_seconds,
        }
    }

    /// The threshold a request for this model is compacted at: its own, if
    /// it has one; else `agents`, held to [`WINDOW_SHARE_PERCENT`] of its
    /// window.
    pub fn threshold(&self, agents: u32) -> u32 {
        self.token_threshold.unwrap_or_else(|| {
            let cap = u64::from(self.context_window) * WINDOW_SHARE_PERCENT / 100;
            // The cap is at most the u32 window.
            agents.min(cap as u32)
        })
    }

    /// USD for `tokens` uncached input tokens.
    pub fn input_usd(&self, tokens: f64) -> f64 {
        tokens * self.input / 1e6
    }
}

/// Price models by model pattern.
#[derive(Clone, Debug, PartialEq)]
pub struct PriceTable {
    models: BTreeMap<String, ModelPrice>,
}

impl PriceTable {
    /// A table of `models` by pattern; it must price [`ANY_MODEL`], which
    /// every model falls back to.
    pub fn new(models: BTreeMap<String, ModelPrice>) -> Result<PriceTable, String> {
        if !models.contains_key(ANY_MODEL) {
            return Err(format!(
                "no price model for \"{ANY_MODEL}\": every model not named falls back to it"
            ));
        }
        Ok(PriceTable { models })
    }

    /// Every pattern and its prices, by pattern.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &ModelPrice)> {
        self.models.iter().map(|(p, m)| (p.as_str(), m))
    }

    /// The pattern `model` is priced by and its prices: of the patterns it
    /// matches, the most specific (the most characters that are not
    /// wildcards; then the longest; then the first in order), so that
    /// `claude-opus-4-1*` wins over `claude-opus-4*` whichever is written
    /// first. No model (a request without one) takes [`ANY_MODEL`]'s.
    pub fn lookup(&self, model: Option<&str>) -> (&str, &ModelPrice) {
        let any = || {
            let (p, m) = self
                .models
                .get_key_value(ANY_MODEL)
                .expect("PriceTable::new checks it");
            (p.as_str(), m)
        };
        let Some(model) = model else { return any() };
        self.models
            .iter()
            .filter(|(pattern, _)| wildmatch::WildMatch::new(pattern).matches(model))
            .max_by_key(|(pattern, _)| {
                let literal = pattern.chars().filter(|c| !matches!(c, '*' | '?')).count();
                (literal, pattern.len(), std::cmp::Reverse(pattern.as_str()))
            })
            .map_or_else(any, |(p, m)| (p.as_str(), m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price(input: f64) -> ModelPrice {
        ModelPrice {
            input,
            output: input * 5.0,
            cache_read: 0.1,
            cache_write: BTreeMap::from([(300, 1.25), (3600, 2.0)]),
            cache_ttl_seconds: 300,
            context_window: 200_000,
            token_threshold: None,
        }
    }

    #[test]
    fn the_most_specific_pattern_prices_a_model() {
        let table = PriceTable::new(BTreeMap::from([
            ("*".to_owned(), price(3.0)),
            ("claude-opus-4*".to_owned(), price(15.0)),
            ("claude-opus-4-5*".to_owned(), price(5.0)),
            ("gpt-?o*".to_owned(), price(2.5)),
        ]))
        .unwrap();
        let input = |model| table.lookup(model).1.input;
        assert_eq!(input(Some("claude-opus-4-1-20250805")), 15.0);
        assert_eq!(input(Some("claude-opus-4-5-20251101")), 5.0);
        assert_eq!(input(Some("gpt-4o-mini")), 2.5);
        assert_eq!(input(Some("llama3.1:8b")), 3.0);
        assert_eq!(input(None), 3.0);
        assert!(PriceTable::new(BTreeMap::new()).is_err());
    }

    #[test]
    fn the_write_price_is_the_ttls_and_the_window_caps_the_threshold() {
        let mut model = price(3.0);
        assert_eq!(model.write(), 1.25);
        model.cache_ttl_seconds = 3600;
        assert_eq!(model.prices(0.0).write, 2.0);
        model.cache_write.clear();
        assert_eq!(model.write(), 1.0, "a provider that bills no writes");
        model.context_window = 32_768;
        assert_eq!(model.threshold(100_000), 26_214);
        assert_eq!(model.threshold(20_000), 20_000);
        model.token_threshold = Some(30_000);
        assert_eq!(model.threshold(20_000), 30_000, "the model's own wins");
    }
}
