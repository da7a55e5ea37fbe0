//! Writing a summarizer: implement [`Summarizer`] over plain Rust types and
//! export it with [`export_summarizer!`](crate::export_summarizer). The WIT,
//! the bindings and the conversions are this crate's; a summarizer crate
//! needs nothing else (`crate-type = ["cdylib"]`, built for
//! `wasm32-wasip2`).
//!
//! ```ignore
//! use condense_guest_sdk::{NoSettings, Request, Summarizer, export_summarizer};
//!
//! struct Lines;
//!
//! impl Summarizer for Lines {
//!     type Settings = NoSettings;
//!     fn summarize(request: Request<NoSettings>) -> Result<String, String> {
//!         let lines: Vec<String> = request.messages.iter().map(|m| m.joined_text()).collect();
//!         Ok(request.fit(&lines.join("\n")).to_owned())
//!     }
//! }
//!
//! export_summarizer!(Lines);
//! ```

use condense_model::Message;
use condense_model::tokens::estimate_text;
use serde::de::DeserializeOwned;

/// One fold, as a summarizer gets it.
#[derive(Clone, Debug, PartialEq)]
pub struct Request<S> {
    /// This summarizer's own earlier output for the session (empty on the
    /// first fold): the summary to carry forward.
    pub previous_summary: String,
    /// The messages this compaction folds, oldest first. Only these: what
    /// came before is in `previous_summary`.
    pub messages: Vec<Message>,
    /// The budget for the returned text, in condense's token estimate
    /// ([`estimate_text`]); the compressor refuses a longer summary.
    pub max_tokens: u32,
    /// The conversation's language, a BCP-47 primary tag (`en`, `de`, ...).
    pub language: String,
    /// The summarizer's settings, read from the host's settings JSON.
    pub settings: S,
}

/// A summarizer: folds the newly folded messages into the previous summary.
///
/// `summarize` is called once per compaction, in a fresh sandbox; it has no
/// state between calls but what it wrote into the summary. An `Err` is not a
/// crash: the host says why, and a summarizer chain falls through to the
/// next summarizer.
pub trait Summarizer {
    /// The settings this summarizer reads from its settings JSON (`{}` when
    /// the host has none for it), with serde: [`NoSettings`] for none, or a
    /// struct with `#[serde(default, deny_unknown_fields)]` so a typo is an
    /// error that names the key.
    type Settings: DeserializeOwned;

    fn summarize(request: Request<Self::Settings>) -> Result<String, String>;

    /// The JSON Schema (draft 2020-12) of [`Self::Settings`], which the host
    /// can show its users. The default, [`UNDESCRIBED`], says only that the
    /// settings are an object; describe yours by returning your own (for
    /// example `schemars::schema_for!(Settings)`, serialised). The keys are
    /// checked either way, by [`Summarizer::validate_settings`].
    fn settings_schema() -> String {
        UNDESCRIBED.to_owned()
    }

    /// Checks a settings JSON text when the host loads its configuration,
    /// so a wrong key stops the host at start. The default reads it into
    /// [`Self::Settings`] as `summarize` would: with
    /// `#[serde(deny_unknown_fields)]` an unknown key is an error that names
    /// it. Add checks serde cannot make (ranges, patterns) here.
    fn validate_settings(settings: &str) -> Result<(), String> {
        read_settings::<Self::Settings>(settings).map(|_| ())
    }
}

/// The schema [`Summarizer::settings_schema`] returns by default: a JSON
/// object, its keys not described.
pub const UNDESCRIBED: &str =
    r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}"#;

/// The schema of [`NoSettings`]: an object with no keys.
pub const NO_SETTINGS: &str = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false}"#;

impl<S> Request<S> {
    /// Whether `text` is within the budget.
    pub fn fits(&self, text: &str) -> bool {
        estimate_text(text) <= self.max_tokens
    }

    /// `text` cut to the budget at a line boundary (see [`cut_to_tokens`]).
    pub fn fit<'a>(&self, text: &'a str) -> &'a str {
        cut_to_tokens(text, self.max_tokens)
    }
}

/// The longest run of whole lines from the start of `text` that is at most
/// `max_tokens` in condense's estimate, without its trailing newline: empty
/// when not even the first line fits.
pub fn cut_to_tokens(text: &str, max_tokens: u32) -> &str {
    if estimate_text(text) <= max_tokens {
        return text;
    }
    // Line ends, as cut points; the estimate grows with the prefix, so the
    // last one that fits is found by bisection.
    let ends: Vec<usize> = text.match_indices('\n').map(|(i, _)| i).collect();
    let fits = |&end: &usize| estimate_text(&text[..end]) <= max_tokens;
    let n = ends.partition_point(fits);
    n.checked_sub(1).map_or("", |i| &text[..ends[i]])
}

/// The settings of a summarizer that has none: `{}`, and any key is an
/// error that names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoSettings {}

/// The settings JSON read into `S`; an empty text reads as `{}`. The error
/// names the key at fault.
pub fn read_settings<S: DeserializeOwned>(settings: &str) -> Result<S, String> {
    let text = if settings.trim().is_empty() {
        "{}"
    } else {
        settings
    };
    serde_json::from_str(text).map_err(|e| format!("settings: {e}"))
}

/// The call a component makes: the WIT request read into plain types and
/// `T`'s settings, then `T::summarize`.
pub fn run<T: Summarizer>(request: condense_model::SummaryRequest) -> Result<String, String> {
    let settings = read_settings(&request.settings)?;
    T::summarize(Request {
        previous_summary: request.previous_summary,
        messages: request.messages,
        max_tokens: request.max_tokens,
        language: request.language,
        settings,
    })
}

/// Exports `T` (a type implementing [`Summarizer`]) as the component's
/// `summarizer` interface. Call it once, at the crate root of a `cdylib`
/// built for `wasm32-wasip2`. A summarizer that calls the host's model
/// ([`crate::llm::chat`]) imports `llm` too; one that does not, does not.
#[macro_export]
macro_rules! export_summarizer {
    ($summarizer:ty) => {
        // The bindings' export macro takes a type name, so the adapter gets one.
        #[doc(hidden)]
        type __CondenseSummarizer = $crate::summarizer::Adapter<$summarizer>;
        $crate::bindings::__export_summarizer_world!(
            __CondenseSummarizer with_types_in $crate::bindings
        );
    };
}

/// What [`export_summarizer!`](crate::export_summarizer) exports: the WIT
/// `summarizer` and `summarizer-settings` interfaces, served by `T`.
#[doc(hidden)]
pub struct Adapter<T>(std::marker::PhantomData<T>);

impl<T: Summarizer> crate::bindings::exports::condense::middleware::summarizer::Guest
    for Adapter<T>
{
    fn summarize(request: crate::types::SummaryRequest) -> Result<String, String> {
        run::<T>(request.into())
    }
}

impl<T: Summarizer> crate::bindings::exports::condense::middleware::summarizer_settings::Guest
    for Adapter<T>
{
    fn settings_schema() -> String {
        T::settings_schema()
    }

    fn validate_settings(settings: String) -> Result<(), String> {
        T::validate_settings(&settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use condense_model::Role;

    #[test]
    fn a_cut_keeps_whole_lines_within_the_budget() {
        let text = (0..50)
            .map(|i| format!("line {i}: some words here"))
            .collect::<Vec<_>>()
            .join("\n");
        for budget in [0, 1, 7, 40, 200, 10_000] {
            let cut = cut_to_tokens(&text, budget);
            assert!(estimate_text(cut) <= budget, "{budget}");
            assert!(text.starts_with(cut));
            // Whole lines, and no whole line more would fit.
            let rest = &text[cut.len()..];
            assert!(rest.is_empty() || rest.starts_with('\n') || cut.is_empty());
            let next_end = text[cut.len() + 1.min(rest.len())..]
                .find('\n')
                .map(|i| cut.len() + 1 + i);
            if let Some(end) = next_end.filter(|_| !rest.is_empty()) {
                assert!(estimate_text(&text[..end]) > budget, "{budget}");
            }
        }
        assert_eq!(cut_to_tokens("short", 10), "short");
        assert_eq!(cut_to_tokens("a very long first line indeed", 1), "");
    }

    #[derive(serde::Deserialize, Debug, PartialEq, Default)]
    #[serde(default, deny_unknown_fields)]
    struct Knobs {
        prefix: String,
        lines: u32,
    }

    #[test]
    fn settings_are_read_into_the_authors_type_and_a_bad_key_is_named() {
        assert_eq!(
            read_settings::<Knobs>(r#"{"prefix": "> "}"#),
            Ok(Knobs {
                prefix: "> ".into(),
                lines: 0
            })
        );
        assert_eq!(read_settings::<Knobs>(""), Ok(Knobs::default()));
        let error = read_settings::<Knobs>(r#"{"prefixx": 1}"#).unwrap_err();
        assert!(error.contains("prefixx"), "{error}");
        assert_eq!(read_settings::<NoSettings>("{}"), Ok(NoSettings {}));
        let error = read_settings::<NoSettings>(r#"{"budget": 3}"#).unwrap_err();
        assert!(error.contains("budget"), "{error}");
    }

    struct Echo;

    impl Summarizer for Echo {
        type Settings = Knobs;
        fn summarize(request: Request<Knobs>) -> Result<String, String> {
            let text = request
                .messages
                .iter()
                .map(|m| format!("{}{}", request.settings.prefix, m.joined_text()))
                .collect::<Vec<_>>()
                .join("\n");
            Ok(request.fit(&text).to_owned())
        }
    }

    #[test]
    fn by_default_settings_are_checked_by_reading_them_and_described_as_an_object() {
        assert_eq!(Echo::validate_settings(r#"{"prefix": "- "}"#), Ok(()));
        assert_eq!(Echo::validate_settings(""), Ok(()));
        let wrong = Echo::validate_settings(r#"{"prefx": "- "}"#).unwrap_err();
        assert!(wrong.contains("unknown field `prefx`"), "{wrong}");
        let schema: serde_json::Value = serde_json::from_str(&Echo::settings_schema()).unwrap();
        assert_eq!(schema["type"], "object");
        let none: serde_json::Value = serde_json::from_str(NO_SETTINGS).unwrap();
        assert_eq!(none["additionalProperties"], false);
    }

    #[test]
    fn run_reads_the_settings_then_summarizes() {
        let request = |settings: &str| condense_model::SummaryRequest {
            previous_summary: String::new(),
            messages: vec![Message::text(Role::User, "fix it")],
            max_tokens: 100,
            language: "en".into(),
            settings: settings.into(),
        };
        assert_eq!(
            run::<Echo>(request(r#"{"prefix": "- "}"#)),
            Ok("- fix it".into())
        );
        assert!(run::<Echo>(request(r#"{"nope": 1}"#)).is_err());
    }
}
